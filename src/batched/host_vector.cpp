// Batched dot and gemv on the host: OpenMP over chunks of elements.
//
// Accumulation follows the CUDA engine (vector.cu): every sum is formed in double, for
// f32 too (a float product is exact in double), and rounded to the element type once at
// the end; gemv's alpha and beta (rounded to the element type first) are applied in
// double before that rounding. Each sum runs over its entries in order, so both backends
// meet apairs.h's bounds with the same argument (the GPU adds per-thread partial sums
// in a tree, which the bound also covers).
#include "batched/host.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "batched/layout.hpp"
#include "host/host.hpp"

namespace apairs::batched {
namespace {

// Elements per OpenMP iteration: keeps the loop overhead off tiny elements.
constexpr int64_t kChunk = 256;

// A vector operand as two strides: entry i of element e at e * es + i * is.
struct VecStrides {
    int64_t es, is;
};
VecStrides vec_strides(const Matrix &v) { return v.soa ? VecStrides{1, v.stride} : VecStrides{v.stride, 1}; }

int64_t chunk_count(int64_t batch) { return (batch + kChunk - 1) / kChunk; }

template <class F>
void for_chunks(int64_t batch, [[maybe_unused]] int threads, F &&f) {
    const int64_t chunks = chunk_count(batch);
#pragma omp parallel for schedule(static, 1) num_threads(threads) if (threads != 1 && chunks > 1)
    for (int64_t t = 0; t < chunks; ++t) f(t * kChunk, std::min(batch, (t + 1) * kChunk));
}

template <class T>
void dot_typed(const DotProblem &pb, const T *x, const T *y, T *r, int threads) {
    const VecStrides sx = vec_strides(pb.x), sy = vec_strides(pb.y);
    const int64_t n = pb.n;
    for_chunks(pb.batch, threads, [&](int64_t e0, int64_t e1) {
        for (int64_t e = e0; e < e1; ++e) {
            const T *xe = x + e * sx.es, *ye = y + e * sy.es;
            double acc = 0;
            for (int64_t i = 0; i < n; ++i) acc += double(xe[i * sx.is]) * double(ye[i * sy.is]);
            r[pb.r.index(0, 0, e)] = T(acc);
        }
    });
}

template <class T>
void gemv_typed(const GemvProblem &pb, const T *A, const T *x, T *y, int threads) {
    // op(A) is rows x cols; its entry (i, l) of element e at e * ae + i * ar + l * ac.
    const int64_t rows = pb.y_len(), cols = pb.x_len();
    const Strides sa = pb.a.strides(pb.trans);
    const int64_t ar = sa.row, ac = sa.col, ae = sa.elem;
    const VecStrides sx = vec_strides(pb.x), sy = vec_strides(pb.y);
    const double alpha = double(T(pb.alpha)), beta = double(T(pb.beta));
    // (every thread's sums before the region: an allocation that fails throws here)
    // (for_chunks' schedule(static, 1) gives chunk t to thread t % threads: none past the
    // chunk count)
    std::vector<std::vector<double>> sums(size_t(std::min<int64_t>(threads, chunk_count(pb.batch))),
                                          std::vector<double>(static_cast<size_t>(rows)));
    for_chunks(pb.batch, threads, [&](int64_t e0, int64_t e1) {
        std::vector<double> &acc = sums[size_t(host::thread_index())];
        for (int64_t e = e0; e < e1; ++e) {
            const T *a = A + e * ae, *xe = x + e * sx.es;
            T *ye = y + e * sy.es;
            // Every sum runs over l = 0..cols-1 in order; the loop nest follows the memory
            // order of op(A) (rows of contiguous entries, or columns).
            if (ac <= ar) {
                for (int64_t i = 0; i < rows; ++i) {
                    double s = 0;
                    for (int64_t l = 0; l < cols; ++l) s += double(a[i * ar + l * ac]) * double(xe[l * sx.is]);
                    acc[size_t(i)] = s;
                }
            } else {
                std::fill(acc.begin(), acc.end(), 0.0);
                for (int64_t l = 0; l < cols; ++l) {
                    const double xl = double(xe[l * sx.is]);
                    for (int64_t i = 0; i < rows; ++i) acc[size_t(i)] += double(a[i * ar + l * ac]) * xl;
                }
            }
            for (int64_t i = 0; i < rows; ++i) {
                T &out = ye[i * sy.is];
                // beta = 0 never reads y (it may hold NaN).
                out = T(beta == 0 ? alpha * acc[size_t(i)] : alpha * acc[size_t(i)] + beta * double(out));
            }
        }
    });
}

}  // namespace

void dot_host(const DotProblem &pb, const void *x, const void *y, void *r, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64)
        dot_typed(pb, static_cast<const double *>(x), static_cast<const double *>(y), static_cast<double *>(r),
                  threads);
    else
        dot_typed(pb, static_cast<const float *>(x), static_cast<const float *>(y), static_cast<float *>(r),
                  threads);
}

void gemv_host(const GemvProblem &pb, const void *A, const void *x, void *y, int threads) {
    if (pb.alpha == 0) return scale_host(pb.y, pb.dtype, pb.beta, pb.batch, y, threads);
    if (pb.dtype == APAIRS_DTYPE_F64)
        gemv_typed(pb, static_cast<const double *>(A), static_cast<const double *>(x), static_cast<double *>(y),
                   threads);
    else
        gemv_typed(pb, static_cast<const float *>(A), static_cast<const float *>(x), static_cast<float *>(y),
                   threads);
}

}  // namespace apairs::batched
