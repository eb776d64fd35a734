// Batched ops on the host: OpenMP over chunks of elements. Square sizes 2, 3, 4, 8 and
// 16 (the common transforms and element matrices) are compiled for their size; others
// take the generic loop. Sums run over l = 0..k-1 in order, as on
// the GPU, so both backends meet apairs.h's bound the same way.
#include "batched/host.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "batched/layout.hpp"

namespace apairs::batched {
namespace {

// C_e = alpha op(A_e) op(B_e) + beta C_e for elements [e0, e1). N > 0: m = n = k = N known
// at compile time; Unit: the rows of op(B) and C are contiguous (the j loops vectorise).
// Row i of C is accumulated in acc[0..n) over l = 0..k-1 in order, so every entry sums
// its k products in order, as the GPU does.
template <class T, int N, bool Unit>
void gemm_range(const GemmProblem &pb, const T *A, const T *B, T *C, int64_t e0, int64_t e1) {
    const int64_t m = N ? N : pb.m, n = N ? N : pb.n, k = N ? N : pb.k;
    const Strides sa = pb.a.strides(pb.trans_a);
    Strides sb = pb.b.strides(pb.trans_b), sc = pb.c.strides(false);
    if (Unit) sb.col = sc.col = 1;
    const T alpha = T(pb.alpha), beta = T(pb.beta);
    T acc[N ? N : kMaxGemmSize];
    for (int64_t e = e0; e < e1; ++e) {
        const T *a = A + e * sa.elem, *b = B + e * sb.elem;
        T *c = C + e * sc.elem;
        for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) acc[j] = T(0);
            for (int64_t l = 0; l < k; ++l) {
                const T ail = a[i * sa.row + l * sa.col];
                const T *bl = b + l * sb.row;
                for (int64_t j = 0; j < n; ++j) acc[j] += ail * bl[j * sb.col];
            }
            T *ci = c + i * sc.row;
            if (beta == T(0))  // beta = 0 never reads C
                for (int64_t j = 0; j < n; ++j) ci[j * sc.col] = alpha * acc[j];
            else
                for (int64_t j = 0; j < n; ++j) ci[j * sc.col] = alpha * acc[j] + beta * ci[j * sc.col];
        }
    }
}

#if defined(__x86_64__)
// The same sums with AVX2 registers for N a multiple of one vector (4 doubles, 8 floats)
// and unit rows of op(B) and C: row i of C is held in N / W vectors, each entry an fma
// chain over l = 0..k-1 in order (the GPU's rounding). Stream: beta = 0 and C far larger
// than the caches, rows 16-byte aligned: C is stored past the caches (non-temporal), so
// its bytes cost one write instead of a read for ownership and a write.
#define APAIRS_AVX2 __attribute__((target("avx2,fma"), always_inline)) static inline
template <class T>
struct Avx2;
template <>
struct Avx2<double> {
    using V = __m256d;
    APAIRS_AVX2 V bcast(const double *p) { return _mm256_broadcast_sd(p); }
    APAIRS_AVX2 V load(const double *p) { return _mm256_loadu_pd(p); }
    APAIRS_AVX2 V mul(V a, V b) { return _mm256_mul_pd(a, b); }
    APAIRS_AVX2 V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
    APAIRS_AVX2 void store(double *p, V v) { _mm256_storeu_pd(p, v); }
    APAIRS_AVX2 void stream(double *p, V v) {  // 16-byte aligned p
        _mm_stream_pd(p, _mm256_castpd256_pd128(v));
        _mm_stream_pd(p + 2, _mm256_extractf128_pd(v, 1));
    }
};
template <>
struct Avx2<float> {
    using V = __m256;
    APAIRS_AVX2 V bcast(const float *p) { return _mm256_broadcast_ss(p); }
    APAIRS_AVX2 V load(const float *p) { return _mm256_loadu_ps(p); }
    APAIRS_AVX2 V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    APAIRS_AVX2 V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    APAIRS_AVX2 void store(float *p, V v) { _mm256_storeu_ps(p, v); }
    APAIRS_AVX2 void stream(float *p, V v) {  // 16-byte aligned p
        _mm_stream_ps(p, _mm256_castps256_ps128(v));
        _mm_stream_ps(p + 4, _mm256_extractf128_ps(v, 1));
    }
};
#undef APAIRS_AVX2

template <class T, int N, bool Stream>
__attribute__((target("avx2,fma"))) void gemm_range_avx2(const GemmProblem &pb, const T *A, const T *B, T *C,
                                                          int64_t e0, int64_t e1) {
    using X = Avx2<T>;
    using V = typename X::V;
    constexpr int W = 32 / sizeof(T), NV = N / W;
    const Strides sa = pb.a.strides(pb.trans_a), sb = pb.b.strides(pb.trans_b), sc = pb.c.strides(false);
    const T alpha_s = T(pb.alpha), beta_s = T(pb.beta);
    const V alpha = X::bcast(&alpha_s), beta = X::bcast(&beta_s);
    for (int64_t e = e0; e < e1; ++e) {
        const T *a = A + e * sa.elem, *b = B + e * sb.elem;
        T *c = C + e * sc.elem;
        for (int i = 0; i < N; ++i) {
            V acc[NV];
            for (int v = 0; v < NV; ++v) acc[v] = X::mul(X::bcast(a + i * sa.row), X::load(b + v * W));
            for (int l = 1; l < N; ++l) {
                const V ail = X::bcast(a + i * sa.row + l * sa.col);
                for (int v = 0; v < NV; ++v) acc[v] = X::fmadd(ail, X::load(b + l * sb.row + v * W), acc[v]);
            }
            T *ci = c + i * sc.row;
            for (int v = 0; v < NV; ++v) {
                const V r = beta_s == T(0) ? X::mul(alpha, acc[v]) : X::fmadd(beta, X::load(ci + v * W), X::mul(alpha, acc[v]));
                if constexpr (Stream) X::stream(ci + v * W, r); else X::store(ci + v * W, r);
            }
        }
    }
    if constexpr (Stream) _mm_sfence();  // the stores are weakly ordered: done before the caller's barrier
}

// Whether this CPU runs gemm_range_avx2 (checked once).
bool cpu_has_avx2_fma() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}
#endif

template <class T, int N>
void gemm_all(const GemmProblem &pb, const T *A, const T *B, T *C, [[maybe_unused]] int threads) {
    const bool unit = pb.b.strides(pb.trans_b).col == 1 && pb.c.strides(false).col == 1;
    // Chunks of elements per iteration keep the loop overhead off tiny elements.
    constexpr int64_t kChunk = 256;
    const int64_t chunks = (pb.batch + kChunk - 1) / kChunk;
#if defined(__x86_64__)
    constexpr int W = 32 / sizeof(T);
    if constexpr (N > 0 && N % W == 0) {
        if (unit && cpu_has_avx2_fma()) {
            const Strides sc = pb.c.strides(false);
            const bool stream = pb.beta == 0.0 && reinterpret_cast<uintptr_t>(C) % 16 == 0 && sc.row % (W / 2) == 0 &&
                                sc.elem % (W / 2) == 0 && pb.batch > 1 &&
                                sc.elem > (int64_t(32) << 20) / int64_t(sizeof(T)) / pb.batch;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads != 1 && chunks > 1)
            for (int64_t t = 0; t < chunks; ++t) {
                const int64_t e0 = t * kChunk, e1 = std::min(pb.batch, e0 + kChunk);
                if (stream) gemm_range_avx2<T, N, true>(pb, A, B, C, e0, e1);
                else gemm_range_avx2<T, N, false>(pb, A, B, C, e0, e1);
            }
            return;
        }
    }
#endif
#pragma omp parallel for schedule(static) num_threads(threads) if (threads != 1 && chunks > 1)
    for (int64_t t = 0; t < chunks; ++t)
        if (unit)
            gemm_range<T, N, true>(pb, A, B, C, t * kChunk, std::min(pb.batch, (t + 1) * kChunk));
        else
            gemm_range<T, N, false>(pb, A, B, C, t * kChunk, std::min(pb.batch, (t + 1) * kChunk));
}

template <class T>
void gemm_typed(const GemmProblem &pb, const T *A, const T *B, T *C, int threads) {
    if (pb.m == pb.n && pb.n == pb.k) switch (pb.k) {
        case 2: return gemm_all<T, 2>(pb, A, B, C, threads);
        case 3: return gemm_all<T, 3>(pb, A, B, C, threads);
        case 4: return gemm_all<T, 4>(pb, A, B, C, threads);
        case 8: return gemm_all<T, 8>(pb, A, B, C, threads);
        case 16: return gemm_all<T, 16>(pb, A, B, C, threads);
        }
    gemm_all<T, 0>(pb, A, B, C, threads);
}

// Cholesky of one element, left-looking: column j's sums run over l = 0..j-1 in order.
// Works on the logical lower triangle; an upper factor (A = U^T U) is the lower one of the
// transposed strides. Returns LAPACK's info.
template <class T>
int32_t potrf_element(T *a, const Strides &s, int64_t n) {
    auto at = [&](int64_t i, int64_t j) -> T & { return a[i * s.row + j * s.col]; };
    for (int64_t j = 0; j < n; ++j) {
        T d = at(j, j);
        for (int64_t l = 0; l < j; ++l) d -= at(j, l) * at(j, l);
        if (!(d > T(0))) return static_cast<int32_t>(j + 1);  // also a NaN
        const T ljj = std::sqrt(d);
        at(j, j) = ljj;
        for (int64_t i = j + 1; i < n; ++i) {
            T t = at(i, j);
            for (int64_t l = 0; l < j; ++l) t -= at(i, l) * at(j, l);
            at(i, j) = t / ljj;
        }
    }
    return 0;
}

// A X = B from the factor L (logical lower): L y = b, then L^T x = y, column by column.
template <class T>
void potrs_element(const T *a, const Strides &sa, T *b, const Strides &sb, int64_t n, int64_t nrhs) {
    auto L = [&](int64_t i, int64_t j) { return a[i * sa.row + j * sa.col]; };
    for (int64_t r = 0; r < nrhs; ++r) {
        auto x = [&](int64_t i) -> T & { return b[i * sb.row + r * sb.col]; };
        for (int64_t i = 0; i < n; ++i) {
            T t = x(i);
            for (int64_t l = 0; l < i; ++l) t -= L(i, l) * x(l);
            x(i) = t / L(i, i);
        }
        for (int64_t i = n - 1; i >= 0; --i) {
            T t = x(i);
            for (int64_t l = i + 1; l < n; ++l) t -= L(l, i) * x(l);
            x(i) = t / L(i, i);
        }
    }
}

template <class T>
void potrf_typed(const PotrfProblem &pb, T *A, int32_t *info, [[maybe_unused]] int threads) {
    const Strides s = pb.a.strides(!pb.lower);
#pragma omp parallel for schedule(static, 256) num_threads(threads) if (threads != 1 && pb.batch > 256)
    for (int64_t e = 0; e < pb.batch; ++e) info[e] = potrf_element(A + e * s.elem, s, pb.n);
}

template <class T>
void potrs_typed(const PotrsProblem &pb, const T *A, T *B, [[maybe_unused]] int threads) {
    const Strides sa = pb.a.strides(!pb.lower), sb = pb.b.strides(false);
#pragma omp parallel for schedule(static, 256) num_threads(threads) if (threads != 1 && pb.batch > 256)
    for (int64_t e = 0; e < pb.batch; ++e) potrs_element(A + e * sa.elem, sa, B + e * sb.elem, sb, pb.n, pb.nrhs);
}

// posv: potrf, then potrs where the factorisation succeeded (B unchanged elsewhere).
template <class T>
void posv_typed(const PosvProblem &pb, T *A, T *B, int32_t *info, [[maybe_unused]] int threads) {
    const Strides sa = pb.a.strides(!pb.lower), sb = pb.b.strides(false);
#pragma omp parallel for schedule(static, 256) num_threads(threads) if (threads != 1 && pb.batch > 256)
    for (int64_t e = 0; e < pb.batch; ++e) {
        info[e] = potrf_element(A + e * sa.elem, sa, pb.n);
        if (info[e] == 0) potrs_element<T>(A + e * sa.elem, sa, B + e * sb.elem, sb, pb.n, pb.nrhs);
    }
}

// The layout adapter in 32 x 32 tiles (rows of `in` by columns), so that both sides are
// visited a cache line at a time. U: an unsigned integer of the value's width.
template <class U>
void transpose_typed(const TransposeProblem &pb, const U *in, U *out, [[maybe_unused]] int threads) {
    constexpr int64_t kTile = 32;
    const int64_t rows = pb.in.soa ? pb.entries : pb.batch, cols = pb.in.soa ? pb.batch : pb.entries;
    const int64_t ldi = pb.in.stride, ldo = pb.out.stride;
    const int64_t tr = (rows + kTile - 1) / kTile, tc = (cols + kTile - 1) / kTile;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads != 1 && tr * tc > 1)
    for (int64_t t = 0; t < tr * tc; ++t) {
        const int64_t r0 = t / tc * kTile, c0 = t % tc * kTile;
        const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
        for (int64_t c = c0; c < c1; ++c)
            for (int64_t r = r0; r < r1; ++r) out[c * ldo + r] = in[r * ldi + c];
    }
}

template <class T>
void scale_typed(const Matrix &m, double beta, int64_t batch, T *out, [[maybe_unused]] int threads) {
    const Strides s = m.strides(false);
    const T b = T(beta);
#pragma omp parallel for schedule(static, 256) num_threads(threads) if (threads != 1 && batch > 256)
    for (int64_t e = 0; e < batch; ++e)
        for (int64_t i = 0; i < m.rows; ++i)
            for (int64_t j = 0; j < m.cols; ++j) {
                T &v = out[e * s.elem + i * s.row + j * s.col];
                v = b == T(0) ? T(0) : b * v;
            }
}

}  // namespace

void potrf_host(const PotrfProblem &pb, void *A, int32_t *info, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64) potrf_typed(pb, static_cast<double *>(A), info, threads);
    else potrf_typed(pb, static_cast<float *>(A), info, threads);
}

void potrs_host(const PotrsProblem &pb, const void *A, void *B, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64)
        potrs_typed(pb, static_cast<const double *>(A), static_cast<double *>(B), threads);
    else
        potrs_typed(pb, static_cast<const float *>(A), static_cast<float *>(B), threads);
}

void scale_host(const Matrix &m, int32_t dtype, double beta, int64_t batch, void *out, int threads) {
    if (dtype == APAIRS_DTYPE_F64)
        scale_typed(m, beta, batch, static_cast<double *>(out), threads);
    else
        scale_typed(m, beta, batch, static_cast<float *>(out), threads);
}

void gemm_host(const GemmProblem &pb, const void *A, const void *B, void *C, int threads) {
    if (pb.alpha == 0) return scale_host(pb.c, pb.dtype, pb.beta, pb.batch, C, threads);
    if (pb.dtype == APAIRS_DTYPE_F64)
        gemm_typed(pb, static_cast<const double *>(A), static_cast<const double *>(B), static_cast<double *>(C),
                   threads);
    else
        gemm_typed(pb, static_cast<const float *>(A), static_cast<const float *>(B), static_cast<float *>(C),
                   threads);
}

void posv_host(const PosvProblem &pb, void *A, void *B, int32_t *info, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64)
        posv_typed(pb, static_cast<double *>(A), static_cast<double *>(B), info, threads);
    else
        posv_typed(pb, static_cast<float *>(A), static_cast<float *>(B), info, threads);
}

void transpose_host(const TransposeProblem &pb, const void *in, void *out, int threads) {
    switch (pb.elem_size()) {
    case 8:
        return transpose_typed(pb, static_cast<const uint64_t *>(in), static_cast<uint64_t *>(out), threads);
    case 4:
        return transpose_typed(pb, static_cast<const uint32_t *>(in), static_cast<uint32_t *>(out), threads);
    default: return transpose_typed(pb, static_cast<const uint8_t *>(in), static_cast<uint8_t *>(out), threads);
    }
}

}  // namespace apairs::batched
