// The all-pairs family: a validated problem, and the one place that maps (metric,
// dtype) to a metric functor: both engines call dispatch() with a generic callable.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/error.hpp"
#include "pairwise/metrics.hpp"

namespace apairs::pairwise {

// The summation order of both engines, which the accuracy bounds in apairs.h assume:
// each output folds every slice of d' = kSliceDims dimensions in order into a fresh
// accumulator, adds the sums of kSlicesPerGroup consecutive slices in order into a
// group sum, and adds the group sums in order (three levels: at d = 40000 a float sum
// keeps about 4e-7 relative error where two levels reach 2e-6). Metrics whose fold does
// not depend on the order (metric::*::reorderable) may skip the blocking.
constexpr int kSliceDims = 32;
constexpr int kSlicesPerGroup = 32;

struct Problem {
    int32_t metric = 0;  // apairs_metric_e; LP with p = 1, 2, inf is normalised to L1, L2, LINF
    double p = 0;        // LP only
    int32_t dtype = 0;   // apairs_dtype_e of A and B
    int64_t n1 = 0, n2 = 0, d = 0, lda = 0, ldb = 0, ldd = 0;

    size_t in_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : dtype == APAIRS_DTYPE_F32 ? 4 : 1; }
    // D holds int32 counts for HAMMING on U8, else the input type.
    size_t out_size() const { return dtype == APAIRS_DTYPE_U8 ? 4 : in_size(); }
};

// Validates the arguments of apairs_plan_create_pairwise as apairs.h documents them and
// returns the normalised problem; throws Error (UNKNOWN_ENUM, INVALID_VALUE, OVERFLOW,
// UNSUPPORTED) naming the argument and its value.
Problem make_problem(int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                     int64_t lda, int64_t ldb, int64_t ldd);

const char *metric_name(int32_t metric);  // "l1", ..., nullptr when unknown
const char *dtype_name(int32_t dtype);    // "f32", "f64", "u8", nullptr when unknown

// Calls f(M{...}) with the metric functor M of the problem. f must return void.
template <class T, class F>
void dispatch_metric(const Problem &pb, F &&f) {
    switch (pb.metric) {
    case APAIRS_METRIC_L1: return f(metric::L1<T>{});
    case APAIRS_METRIC_L2: return f(metric::L2<T>{});
    case APAIRS_METRIC_SQEUCLIDEAN: return f(metric::SqEuclidean<T>{});
    case APAIRS_METRIC_LP:
        if (pb.p == 3) return f(metric::LpInt<T, 3>{T(1.0 / 3)});
        if (pb.p == 4) return f(metric::LpInt<T, 4>{T(0.25)});
        if (pb.p == 0.5) return f(metric::LpHalf<T, 0>{T(2)});
        if (pb.p == 1.5) return f(metric::LpHalf<T, 1>{T(1.0 / 1.5)});
        if (pb.p == 2.5) return f(metric::LpHalf<T, 2>{T(1.0 / 2.5)});
        if (pb.p == 3.5) return f(metric::LpHalf<T, 3>{T(1.0 / 3.5)});
        if constexpr (std::is_same_v<T, float>)
            if (pb.p >= metric::kLpScaledMinP) return f(metric::Lp<T, true>{T(pb.p), T(1.0 / pb.p)});
        return f(metric::Lp<T>{T(pb.p), T(1.0 / pb.p)});
    case APAIRS_METRIC_LINF: return f(metric::LInf<T>{});
    case APAIRS_METRIC_DOT: return f(metric::Dot<T>{});
    case APAIRS_METRIC_COSINE: return f(metric::Cosine<T>{});
    case APAIRS_METRIC_HAMMING: return f(metric::Hamming<T, T>{});
    }
    throw Error(APAIRS_ERROR_INTERNAL, "dispatch: unhandled metric");
}

template <class F>
void dispatch(const Problem &pb, F &&f) {
    switch (pb.dtype) {
    case APAIRS_DTYPE_F32: return dispatch_metric<float>(pb, f);
    case APAIRS_DTYPE_F64: return dispatch_metric<double>(pb, f);
    case APAIRS_DTYPE_U8:
        if (pb.metric == APAIRS_METRIC_HAMMING) return f(metric::Hamming<uint8_t, int32_t>{});
        break;
    }
    throw Error(APAIRS_ERROR_INTERNAL, "dispatch: unhandled metric/dtype");
}

}  // namespace apairs::pairwise
