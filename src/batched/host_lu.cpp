// Batched LU on the host: getrf (A_e = P L U, partial pivoting), getrs (op(A_e) X = B_e
// from the factors) and gesv, OpenMP over elements. Each element is copied into a
// row-major scratch matrix, factored or solved there and copied back, so every layout
// and order takes the same loops.
//
// The arithmetic is the CUDA engine's (lu.cu), step for step: right-looking, column j
// picks the pivot (the first row of largest |a_ij|, a NaN counting as larger than any
// number), swaps whole rows, divides the column below the pivot by it (not when it is
// zero) and updates the trailing matrix a_ik -= l_ij u_jk, so every entry takes its
// updates in the order j = 0, 1, ... on both backends. The GPU fuses each update into
// one fma; here it is rounded twice, so the two can differ in the last bits (and pick
// different pivots where two candidates are that close), both within apairs.h's bound.
#include "batched/host.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "batched/layout.hpp"
#include "host/host.hpp"

namespace apairs::batched {
namespace {

// |x| as an unsigned integer: ordered as |x| is, with every NaN one key above
// infinity's (whatever its payload), so that "the first row of the largest key" is the
// idamax rule with NaN winning and the first NaN winning among NaNs.
template <class T>
auto abs_key(T x) {
    using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
    constexpr U nan_key = (sizeof(T) == 8 ? U(0x7ff0000000000000ull) : U(0x7f800000u)) + 1;
    U bits;
    std::memcpy(&bits, &x, sizeof bits);
    return std::min<U>(bits & (~U(0) >> 1), nan_key);
}

// A 1-based pivot from the caller, 0-based: in unsigned arithmetic, so that any int32
// (0 and INT32_MIN included) maps to a value that is out of range or the pivot - 1.
inline int32_t pivot0(int32_t p) { return int32_t(uint32_t(p) - 1u); }

// Copies element e of `m` (rows x cols) into / out of a row-major scratch matrix.
template <class T>
void gather(const Matrix &m, const T *p, int64_t e, T *s) {
    for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t j = 0; j < m.cols; ++j) s[i * m.cols + j] = p[m.index(i, j, e)];
}
template <class T>
void scatter(const Matrix &m, T *p, int64_t e, const T *s) {
    for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t j = 0; j < m.cols; ++j) p[m.index(i, j, e)] = s[i * m.cols + j];
}

// LU of the row-major n x n matrix a: ipiv (0-based here) and LAPACK's info.
template <class T>
int32_t getrf_element(T *a, int64_t n, int32_t *ipiv) {
    int32_t info = 0;
    for (int64_t j = 0; j < n; ++j) {
        int64_t p = j;
        auto best = abs_key(a[j * n + j]);
        for (int64_t i = j + 1; i < n; ++i)
            if (abs_key(a[i * n + j]) > best) best = abs_key(a[i * n + j]), p = i;
        ipiv[j] = int32_t(p);
        if (p != j) std::swap_ranges(a + j * n, a + j * n + n, a + p * n);
        const T d = a[j * n + j];
        if ((d == T(0) || d != d) && info == 0) info = int32_t(j + 1);
        // A zero pivot leaves its column (all zeros below it) unscaled, as LAPACK's.
        const T div = d == T(0) ? T(1) : d;
        const T *u = a + j * n;
        for (int64_t i = j + 1; i < n; ++i) {
            T *r = a + i * n;
            const T l = r[j] / div;
            r[j] = l;
            for (int64_t k = j + 1; k < n; ++k) r[k] -= l * u[k];
        }
    }
    return info;
}

// op(A) X = B for the row-major factors a (n x n), 0-based pivots, and the row-major
// n x nrhs right-hand sides x. Pivots outside 0..n-1 (not getrf's output) are skipped.
template <class T>
void getrs_element(const T *a, int64_t n, const int32_t *ipiv, bool trans, T *x, int64_t nrhs) {
    auto swap_rows = [&](int64_t i) {
        const int64_t p = ipiv[i];
        if (p != i && p >= 0 && p < n) std::swap_ranges(x + i * nrhs, x + i * nrhs + nrhs, x + p * nrhs);
    };
    if (!trans)
        for (int64_t i = 0; i < n; ++i) swap_rows(i);  // P^T b
    for (int64_t c = 0; c < nrhs; ++c) {
        auto X = [&](int64_t i) -> T & { return x[i * nrhs + c]; };
        if (!trans) {
            for (int64_t i = 0; i < n; ++i) {  // L y = P^T b, L unit lower
                T t = X(i);
                for (int64_t l = 0; l < i; ++l) t -= a[i * n + l] * X(l);
                X(i) = t;
            }
            for (int64_t i = n - 1; i >= 0; --i) {  // U x = y
                T t = X(i);
                for (int64_t l = i + 1; l < n; ++l) t -= a[i * n + l] * X(l);
                X(i) = t / a[i * n + i];
            }
        } else {
            for (int64_t i = 0; i < n; ++i) {  // U^T y = b
                T t = X(i);
                for (int64_t l = 0; l < i; ++l) t -= a[l * n + i] * X(l);
                X(i) = t / a[i * n + i];
            }
            for (int64_t i = n - 1; i >= 0; --i) {  // L^T z = y
                T t = X(i);
                for (int64_t l = i + 1; l < n; ++l) t -= a[l * n + i] * X(l);
                X(i) = t;
            }
        }
    }
    if (trans)
        for (int64_t i = n - 1; i >= 0; --i) swap_rows(i);  // x = P z
}

// The per-thread scratch of one element: its matrix, its right-hand sides and pivots.
template <class T>
struct Scratch {
    std::vector<T> a, b;
    std::vector<int32_t> piv;
    Scratch(int64_t n, int64_t nrhs) : a(size_t(n * n)), b(size_t(n * nrhs)), piv(size_t(n)) {}
};

template <class T>
int32_t factor(const Matrix &am, const Matrix &pm, T *A, int32_t *ipiv, int64_t e, Scratch<T> &s) {
    gather(am, A, e, s.a.data());
    const int32_t info = getrf_element(s.a.data(), am.rows, s.piv.data());
    scatter(am, A, e, s.a.data());
    for (int64_t i = 0; i < am.rows; ++i) ipiv[pm.index(i, 0, e)] = s.piv[size_t(i)] + 1;
    return info;
}

template <class T>
void solve(const Matrix &am, const Matrix &pm, const Matrix &bm, const T *A, const int32_t *ipiv, T *B, bool trans,
           int64_t e, Scratch<T> &s, bool factors_loaded) {
    if (!factors_loaded) gather(am, A, e, s.a.data());
    for (int64_t i = 0; i < am.rows; ++i) s.piv[size_t(i)] = pivot0(ipiv[pm.index(i, 0, e)]);
    gather(bm, B, e, s.b.data());
    getrs_element(s.a.data(), am.rows, s.piv.data(), trans, s.b.data(), bm.cols);
    scatter(bm, B, e, s.b.data());
}

constexpr int64_t kChunk = 64;  // elements per OpenMP iteration: the scratch is set up once per chunk

template <class T>
void getrf_typed(const GetrfProblem &pb, T *A, int32_t *ipiv, int32_t *info, int threads) {
    const int64_t chunks = (pb.batch + kChunk - 1) / kChunk;
    // (every thread's scratch before the region: an allocation that fails throws here;
    // schedule(static, 1) gives chunk t to thread t % threads: none past `chunks`)
    std::vector<Scratch<T>> scratch(size_t(std::min<int64_t>(threads, chunks)), Scratch<T>(pb.n, 0));
#pragma omp parallel for schedule(static, 1) num_threads(threads) if (threads != 1 && chunks > 1)
    for (int64_t t = 0; t < chunks; ++t) {
        Scratch<T> &s = scratch[size_t(host::thread_index())];
        for (int64_t e = t * kChunk; e < std::min(pb.batch, (t + 1) * kChunk); ++e)
            info[pb.info.index(0, 0, e)] = factor(pb.a, pb.piv, A, ipiv, e, s);
    }
}

template <class T>
void getrs_typed(const GetrsProblem &pb, const T *A, const int32_t *ipiv, T *B, int threads) {
    const int64_t chunks = (pb.batch + kChunk - 1) / kChunk;
    // (every thread's scratch before the region: an allocation that fails throws here;
    // schedule(static, 1) gives chunk t to thread t % threads: none past `chunks`)
    std::vector<Scratch<T>> scratch(size_t(std::min<int64_t>(threads, chunks)), Scratch<T>(pb.n, pb.nrhs));
#pragma omp parallel for schedule(static, 1) num_threads(threads) if (threads != 1 && chunks > 1)
    for (int64_t t = 0; t < chunks; ++t) {
        Scratch<T> &s = scratch[size_t(host::thread_index())];
        for (int64_t e = t * kChunk; e < std::min(pb.batch, (t + 1) * kChunk); ++e)
            solve(pb.a, pb.piv, pb.b, A, ipiv, B, pb.trans, e, s, false);
    }
}

template <class T>
void gesv_typed(const GesvProblem &pb, T *A, int32_t *ipiv, T *B, int32_t *info, int threads) {
    const int64_t chunks = (pb.batch + kChunk - 1) / kChunk;
    // (every thread's scratch before the region: an allocation that fails throws here;
    // schedule(static, 1) gives chunk t to thread t % threads: none past `chunks`)
    std::vector<Scratch<T>> scratch(size_t(std::min<int64_t>(threads, chunks)), Scratch<T>(pb.n, pb.nrhs));
#pragma omp parallel for schedule(static, 1) num_threads(threads) if (threads != 1 && chunks > 1)
    for (int64_t t = 0; t < chunks; ++t) {
        Scratch<T> &s = scratch[size_t(host::thread_index())];
        for (int64_t e = t * kChunk; e < std::min(pb.batch, (t + 1) * kChunk); ++e) {
            const int32_t f = factor(pb.a, pb.piv, A, ipiv, e, s);
            info[pb.info.index(0, 0, e)] = f;
            if (f == 0) solve(pb.a, pb.piv, pb.b, A, ipiv, B, false, e, s, true);  // else B stays as it was
        }
    }
}

}  // namespace

void getrf_host(const GetrfProblem &pb, void *A, int32_t *ipiv, int32_t *info, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64) getrf_typed(pb, static_cast<double *>(A), ipiv, info, threads);
    else getrf_typed(pb, static_cast<float *>(A), ipiv, info, threads);
}

void getrs_host(const GetrsProblem &pb, const void *A, const int32_t *ipiv, void *B, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64)
        getrs_typed(pb, static_cast<const double *>(A), ipiv, static_cast<double *>(B), threads);
    else
        getrs_typed(pb, static_cast<const float *>(A), ipiv, static_cast<float *>(B), threads);
}

void gesv_host(const GesvProblem &pb, void *A, int32_t *ipiv, void *B, int32_t *info, int threads) {
    if (pb.dtype == APAIRS_DTYPE_F64)
        gesv_typed(pb, static_cast<double *>(A), ipiv, static_cast<double *>(B), info, threads);
    else
        gesv_typed(pb, static_cast<float *>(A), ipiv, static_cast<float *>(B), info, threads);
}

}  // namespace apairs::batched
