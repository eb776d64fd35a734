#include "pairwise/problem.hpp"

#include <cmath>
#include <limits>

namespace apairs::pairwise {

const char *metric_name(int32_t metric) {
    switch (metric) {
    case APAIRS_METRIC_L1: return "l1";
    case APAIRS_METRIC_L2: return "l2";
    case APAIRS_METRIC_SQEUCLIDEAN: return "sqeuclidean";
    case APAIRS_METRIC_LP: return "lp";
    case APAIRS_METRIC_LINF: return "linf";
    case APAIRS_METRIC_DOT: return "dot";
    case APAIRS_METRIC_COSINE: return "cosine";
    case APAIRS_METRIC_HAMMING: return "hamming";
    }
    return nullptr;
}

const char *dtype_name(int32_t dtype) {
    switch (dtype) {
    case APAIRS_DTYPE_F32: return "f32";
    case APAIRS_DTYPE_F64: return "f64";
    case APAIRS_DTYPE_U8: return "u8";
    }
    return nullptr;
}

Problem make_problem(int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                     int64_t lda, int64_t ldb, int64_t ldd) {
    if (!metric_name(metric)) fail(APAIRS_ERROR_UNKNOWN_ENUM, "metric = {}: not an apairs_metric_e value", metric);
    if (!dtype_name(dtype)) fail(APAIRS_ERROR_UNKNOWN_ENUM, "dtype = {}: not an apairs_dtype_e value", dtype);
    Problem pb{metric, 0.0, dtype, n1, n2, d, lda, ldb, ldd};
    if (metric == APAIRS_METRIC_LP) {
        if (!(p > 0))  // also catches NaN
            fail(APAIRS_ERROR_INVALID_VALUE, "p = {}: LP needs p > 0", p);
        // The kernels compute in the element type: p and 1/p must be normal numbers there.
        const bool f32 = dtype == APAIRS_DTYPE_F32;
        const double lo = f32 ? double(std::numeric_limits<float>::min()) : std::numeric_limits<double>::min();
        const double hi = f32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
        if (!std::isinf(p) && !(p >= lo && p <= hi && 1 / p >= lo && 1 / p <= hi))
            fail(APAIRS_ERROR_INVALID_VALUE, "p = {}: p and 1/p must be normal {} numbers (or p = +infinity)", p,
                 dtype_name(dtype));
        if (p == 1) pb.metric = APAIRS_METRIC_L1;
        else if (p == 2) pb.metric = APAIRS_METRIC_L2;
        else if (std::isinf(p)) pb.metric = APAIRS_METRIC_LINF;
        else pb.p = p;
    }
    if (dtype == APAIRS_DTYPE_U8 && metric != APAIRS_METRIC_HAMMING)
        fail(APAIRS_ERROR_UNSUPPORTED, "metric = {} with dtype = u8: only HAMMING takes u8", metric_name(metric));
    require_at_least(n1, 1, "n1");
    require_at_least(n2, 1, "n2");
    require_at_least(d, 1, "d");
    if (lda < d) fail(APAIRS_ERROR_INVALID_VALUE, "lda = {}: expected lda >= d = {}", lda, d);
    if (ldb < d) fail(APAIRS_ERROR_INVALID_VALUE, "ldb = {}: expected ldb >= d = {}", ldb, d);
    if (ldd < n2) fail(APAIRS_ERROR_INVALID_VALUE, "ldd = {}: expected ldd >= n2 = {}", ldd, n2);
    require_fits(n1, lda, pb.in_size(), "n1", "lda");
    require_fits(n2, ldb, pb.in_size(), "n2", "ldb");
    require_fits(n1, ldd, pb.out_size(), "n1", "ldd");
    if (metric == APAIRS_METRIC_HAMMING) {
        const int64_t max_d = dtype == APAIRS_DTYPE_F32 ? (int64_t(1) << 24) : INT32_MAX;
        if (d > max_d)
            fail(APAIRS_ERROR_UNSUPPORTED, "d = {}: HAMMING on {} counts exactly only up to d = {}", d,
                 dtype_name(dtype), max_d);
    }
    return pb;
}

}  // namespace apairs::pairwise
