// CUDA engine of the batched LU family: getrf (A_e = P L U, partial pivoting), getrs
// (op(A_e) X = B_e from the factors) and gesv (the two in turn).
//
// The arithmetic is the host engine's (host_lu.cpp), step for step: right-looking,
// column j picks the pivot, the first row j <= p < n of largest |a_pj| with a NaN above
// every number (the keys are |a|'s bits as unsigned integers, so the order is total and
// any reduction tree finds the same row), swaps whole rows j and p, divides the column
// below the pivot by it (a zero pivot: no division, LAPACK's choice) and updates the
// trailing matrix a_ik = fma(-l_ij, u_jk, a_ik). info = the first j + 1 whose pivot is
// zero or NaN; the factorisation still completes, so every element does the same work.
//
// Elements are handled by teams, as in cholesky.cu: a team copies its elements' operands
// into its slice of shared memory with loads in memory order (AoS: element by element,
// row by row; SoA: entry by entry across the team's elements, as many as fit),
// computes, and copies the results back in memory order; pivots go through shared memory
// too, so that their stores coalesce. Element loops are grid-stride over a resident grid.
//
//   getrf, n <= 8: thread-per-element. n is a template parameter: the element lives in
//     registers, fully unrolled; row swaps are selects on the pivot's row (f64 n = 6..8
//     under a larger register budget, so that they do not spill). AoS: each warp stages
//     its 32 elements by cp.async (whole elements or 32 consecutive entries per load);
//     SoA: each thread loads and stores its own element (32 consecutive elements per
//     load); pivots and info straight from each thread.
//   getrf, n <= 32: warp-group, G = 16 or 32 lanes per element (C = 16, 24 or 32
//     columns), lane r holding input row r in registers for good and its current position
//     (rows swap by exchanging positions). Each warp stages its own elements by cp.async
//     (but SoA C = 16, 32), a thread per memory column walking its rows (every load in
//     flight at once, no registers held): AoS its 32 / G elements, a row of an element
//     per load; SoA C = 24 a group of consecutive elements whose entries are runs of 16
//     bytes (2 f64, 4 f32), factored 32 / G at a time. SoA C = 16, 32 (the line kernel):
//     teams of 8 warps stage 16 (C = 16) or 8 (C = 32) consecutive elements at once,
//     each entry one run copied 16 bytes a thread, double-buffered (f64 C = 32: one stage
//     that takes the next round's copies once the rows are in registers, the results
//     going out through a chunk of 16 rows), two (f64 C = 32) or three (f32 C = 32)
//     teams an SM, 32 / G elements a warp.
//     Column j: the pivot by warp reductions (REDUX) of the keys' 32-bit halves, then of
//     the positions among the hits (ties to the first row); the pivot value (and the next
//     entry of its row) by shuffles, the rest of the pivot row through a shared row
//     buffer read back with 16-byte loads; the rows land at their final positions for the
//     copy back, which takes the staging's way in reverse (f64 SoA C = 32: a chunk of rows
//     at a time). The columns fully unrolled (a
//     rolled loop of blocks of 4 columns at C = 32, its code held in the instruction
//     caches, cost more issue slots than the unrolled code's instruction fetch).
//   getrf, n > 32 (the rows kernel: f64 n < 64 and f32 n <= 64, where three warps' slots
//     fit an SM): a warp per element, the element in shared memory (ld n | 1), staged as
//     getrs's rows kernel stages its factors; lane l owns rows l, l + 32, ... Column j:
//     the pivot by a scan and a butterfly of (key, row) pairs (warp_pivot_row); rows j and
//     p swap, the lanes across the columns; each lane divides its rows' entries below the
//     pivot and updates its rows four columns at a time, all four loads before the stores
//     (the pivot row's entries broadcast loads shared by the lane's rows). Three
//     __syncwarp a column, no block barrier.
//   getrf, larger n (the panel kernel): a team of S threads per element, the element in a
//     rows-kernel slot, factored in panels of 8 (f64) or 16 (f32) columns: the team's
//     first warp factors the panel as the rows kernel does (the pivot by pivot_lane's
//     reductions), then the team swaps and solves the rows of U right of it, a thread a
//     column, and updates the trailing matrix in register tiles; the same fmas in the
//     same order as the column-by-column kernels, so the same bits.
//   getrs, n = 9 .. 32 (f32 SoA to 59), nrhs <= 8 (the rows kernel): a warp per element,
//     its factors staged in shared memory (SoA: by the whole block, runs of its elements),
//     the pivots turned into one permutation (a gather of B's rows on the loads, or a
//     scatter on the stores when transposed), one column of B at a time in registers,
//     lane l holding rows l, l + 32, ...; both solves by columns (solve.cuh).
//   getrs, larger n, nrhs <= 8 (the stream kernel): as the rows kernel, but the factors
//     streamed through a ring of two 32 x 32 tiles in shared memory, each entry of the
//     two triangles (but the diagonal) copied once a chunk of up to 4 columns of B, which
//     sit in registers; the same bits.
//   getrs otherwise: as potrs, G = nrhs rounded up to a power of two (at most 128)
//     threads per element, each solving one column of B at a time in shared memory
//     against the element's staged factors and pivots: thread-per-element, warp-group or
//     block.
//   gesv: getrf's kernel, then getrs's told to skip every element whose info is not 0
//     (B of those elements is neither read nor written).
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>

#include <fmt/format.h>

#include "batched/cuda.hpp"
#include "batched/launch.cuh"
#include "batched/solve.cuh"
#include "batched/stream.cuh"
#include "batched/walker.cuh"
#include "cuda/device.hpp"
#include "cuda/runtime.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

// A register budget rather than launch bounds, as in cholesky.cu: no kernel spills.
#if CUDART_VERSION >= 12040
#define LU_MAXNREG __maxnreg__(128)
#else
#define LU_MAXNREG __launch_bounds__(512)
#endif

// The line kernel's: f32 C = 32 80 (no spills; three teams of 8 warps an SM), else 128.
#if CUDART_VERSION >= 12040
#define LU_LINE_MAXNREG(T, C) __maxnreg__((sizeof(T) == 4 && (C) == 32) ? 80 : 128)
#else
#define LU_LINE_MAXNREG(T, C) __launch_bounds__(((sizeof(T) == 4 && (C) == 32) ? 768 : 512))
#endif

constexpr unsigned kFull = 0xffffffffu;
// The largest n of thread-per-element getrf.
template <class T>
constexpr int kThreadMaxN = 8;
// Register budgets of thread-per-element getrf: f64 n = 6 .. 8 (72 to 128 registers of
// the element alone) get 200: no spills, fewer warps per SM, still far more elements in
// flight than the warp kernel's; f32 n <= 2 fits 40: 48 warps per SM to hide the
// memory's latency; the rest 128.
#if CUDART_VERSION >= 12040
#define LU_THREAD_MAXNREG(T, N)                                                                                       \
    __maxnreg__((sizeof(T) == 8 && (N) > 5) ? 200 : (sizeof(T) == 4 && (N) <= 2) ? 40 : 128)
#else
#define LU_THREAD_MAXNREG(T, N) __launch_bounds__(((sizeof(T) == 8 && (N) > 5) ? 256 : 512))
#endif
__host__ __device__ constexpr int pad_odd(int x) { return x | 1; }

// One operand as the kernels see it: logical (i, j) of element e.
template <class T>
struct Mat {
    T *p;
    int64_t ld, stride;
    bool soa, row_major;
    __device__ __forceinline__ int64_t at(int r, int c, int64_t e) const {  // fast-grid (r, c): memory order
        const int64_t idx = int64_t(r) * ld + c;
        return soa ? idx * stride + e : e * stride + idx;
    }
};

// ipiv: n int32 per element, i * stride + e (SoA) or e * n + i (AoS).
struct Piv {
    int32_t *p;
    int64_t stride;
    bool soa;
};

template <class T>
struct GetrfArgs {
    Mat<T> a;
    Piv piv;
    int32_t *info;
    int n, sub;  // sub: threads per element of the panel kernel
    int64_t batch;
};

template <class T>
struct GetrsArgs {
    Mat<const T> a;
    Piv piv;
    Mat<T> b;
    const int32_t *info;  // gesv: skip the elements whose info is not 0; getrs: null
    int n, nrhs, g, ept;  // g threads per element (columns per chunk), ept elements per team
    bool trans;
    int64_t batch;
};

// |x| as an unsigned key: ordered as |x|, every NaN one key above infinity's (whatever
// its payload: the first NaN wins among NaNs).
__device__ __forceinline__ uint32_t abs_key(float x) { return min(__float_as_uint(x) & 0x7fffffffu, 0x7f800001u); }
__device__ __forceinline__ unsigned long long abs_key(double x) {
    return min(static_cast<unsigned long long>(__double_as_longlong(x)) & 0x7fffffffffffffffull,
               0x7ff0000000000001ull);
}

// A 1-based pivot from the caller, 0-based: in unsigned arithmetic, so that any int32
// (0 and INT32_MIN included) maps to a value that is out of range or the pivot - 1.
__device__ __forceinline__ int pivot0(int p) { return int(unsigned(p) - 1u); }

// a / d for the multipliers: a zero pivot leaves its column as it is.
template <class T>
__device__ __forceinline__ T pivot_divisor(T d) {
    return d == T(0) ? T(1) : d;
}

// 16 bytes of a row: the warp kernel's row buffers are read in these (and written by
// st_shared_if).
template <class T>
struct alignas(16) Pack {
    T v[16 / sizeof(T)];
};

// An n-row block of columns [c0, c0 + w) of elements e0 .. e0 + ept - 1 (those below
// batch, and `take(q)`) to or from sh[q * es + i * ld + (j - c0)], logical (i, j).
template <int CH, class T, class S, class Take>
__device__ __forceinline__ void load_block(const Mat<T> &m, int n, int c0, int w, int64_t e0, int64_t batch, S *sh,
                                           int es, int ld, int tid, int tt, int ept, Take take) {
    const int nr = m.row_major ? n : w, nc = m.row_major ? w : n;
    team_load<CH>(m.p, sh, m.soa, tid, tt, ept, nr, nc, [&](int q, int r, int c, int64_t &go, int &so) {
        const int64_t e = e0 + q;
        if (e >= batch || !take(q)) return false;
        const int i = m.row_major ? r : c, j = m.row_major ? c + c0 : r + c0;
        go = m.row_major ? m.at(i, j, e) : m.at(j, i, e);
        so = q * es + i * ld + (j - c0);
        return true;
    });
}

template <class T, class Take>
__device__ __forceinline__ void store_block(const Mat<T> &m, int n, int c0, int w, int64_t e0, int64_t batch,
                                            const T *sh, int es, int ld, int tid, int tt, int ept, Take take) {
    const int nr = m.row_major ? n : w, nc = m.row_major ? w : n;
    team_store(m.p, sh, m.soa, tid, tt, ept, nr, nc, [&](int q, int r, int c, int64_t &go, int &so) {
        const int64_t e = e0 + q;
        if (e >= batch || !take(q)) return false;
        const int i = m.row_major ? r : c, j = m.row_major ? c + c0 : r + c0;
        go = m.row_major ? m.at(i, j, e) : m.at(j, i, e);
        so = q * es + i * ld + (j - c0);
        return true;
    });
}

// Every element of the team (getrs under gesv takes only those that factored).
struct All {
    __device__ bool operator()(int) const { return true; }
};

// The pivots of `ept` elements between global (1-based) and shared (0-based,
// sh[q * ps + i]), in memory order.
template <class P>
__device__ __forceinline__ void store_pivots(const Piv &pv, int n, int64_t e0, int64_t batch, const P *sh, int ps,
                                             int tid, int tt, int ept) {
    for (int x = tid; x < ept * n; x += tt) {
        const int q = pv.soa ? x % ept : x / n, i = pv.soa ? x / ept : x % n;
        const int64_t e = e0 + q;
        if (e < batch) pv.p[pv.soa ? i * pv.stride + e : e * n + i] = int(sh[q * ps + i]) + 1;
    }
}

template <class Take>
__device__ __forceinline__ void load_pivots(const Piv &pv, int n, int64_t e0, int64_t batch, int *sh, int ps, int tid,
                                            int tt, int ept, Take take) {
    for (int x = tid; x < ept * n; x += tt) {
        const int q = pv.soa ? x % ept : x / n, i = pv.soa ? x / ept : x % n;
        const int64_t e = e0 + q;
        if (e < batch && take(q)) sh[q * ps + i] = pivot0(pv.p[pv.soa ? i * pv.stride + e : e * n + i]);
    }
}

// ---------------------------------------------------------------------------------
// Asynchronous copies global -> shared (cp.async on sm_80 and later: every load of a
// team in flight at once, no registers held), and the wait for all of them.
// 16-byte copies (the line kernel's runs) bypass L1 and ask L2 for the whole 128-byte
// line (a 64-byte run's other half is the next team's, read at about the same time).
template <class T>
__device__ __forceinline__ void copy_async(T *dst, const T *src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (sizeof(T) == 16)
        cp_async16<true>(dst, src);
    else
        cp_async_one(dst, src);
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void copy_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// ---------------------------------------------------------------------------------
// getrf, thread-per-element: N <= kThreadMaxN<T>, the element in registers

template <class T, int N>
struct ThreadShape {
    static constexpr int F = N * N, ES = pad_odd(F), EPT = 32;
    // AoS staging of a warp's 32 elements: F <= 32: P = 32 / F elements per pass, lane l
    // copying entry l % F of elements l / F, l / F + P, ... (lanes past P F idle); F > 32:
    // lane l copying entries l + 32 u (u < U) of every element. Loads of a pass cover P
    // whole elements (F <= 32) or 32 consecutive entries of one: whole sectors.
    static constexpr int P = F <= 32 ? 32 / F : 1, U = (F + 31) / 32;
    static constexpr int64_t TEAM_BYTES = round16(int64_t(EPT) * ES * sizeof(T));
};

// The AoS team copy between the warp's elements e0 .. e0 + 31 (those below batch) and
// sh[q * ES + i * N + k], logical (i, k): LOAD global -> shared by cp.async, else back.
template <int N, bool LOAD, class T>
__device__ __forceinline__ void thread_stage(const Mat<T> &m, int64_t e0, int64_t batch, T *sh, int lane) {
    using S = ThreadShape<T, N>;
    const int qn = int(batch - e0 < 32 ? batch - e0 : 32);  // the team's elements in the batch
    const int64_t gstep = int64_t(S::P) * m.stride;
#pragma unroll
    for (int u = 0; u < S::U; ++u) {
        const int x = S::F <= 32 ? lane % S::F : lane + 32 * u, q0 = S::F <= 32 ? lane / S::F : 0;
        if (x >= S::F || q0 >= S::P) continue;
        const int mr = x / N, mc = x % N;  // the memory grid's row and column
        T *gp = m.p + (e0 + q0) * m.stride + (int64_t(mr) * m.ld + mc);
        int s = q0 * S::ES + (m.row_major ? mr * N + mc : mc * N + mr);
#pragma unroll 4
        for (int q = q0; q < qn; q += S::P, gp += gstep, s += S::P * S::ES) {
            if (LOAD)
                copy_async(sh + s, gp);
            else
                *gp = sh[s];
        }
    }
}

// AoS: the warp stages its 32 elements through shared memory (above); SoA: each thread
// loads and stores its own element directly (a warp's loads of an entry are 32
// consecutive elements). Pivots and info are written by each thread.
template <class T, int N, bool SOA>
__global__ void LU_THREAD_MAXNREG(T, N) getrf_thread_kernel(const GetrfArgs<T> g) {
    using Shape = ThreadShape<T, N>;
    constexpr int ES = Shape::ES, EPT = Shape::EPT;
    extern __shared__ __align__(16) unsigned char lu_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    T *const sh = reinterpret_cast<T *>(lu_smem + team * Shape::TEAM_BYTES);  // AoS only
    T *const my = sh + lane * ES;
    const int64_t per_block = int64_t(teams) * EPT;
    // SoA: logical (i, k) of element e at p + e + i is + k ks, walked by pointer steps.
    // (n = 1: ld * stride may pass 64 bits, validation bounding only the entries that exist)
    const int64_t rs = N > 1 ? g.a.ld * g.a.stride : 0, is = g.a.row_major ? rs : g.a.stride,
                  ks = g.a.row_major ? g.a.stride : rs;
    auto soa_walk = [&](int64_t e, auto &&f) {
        T *pi = g.a.p + e;
#pragma unroll
        for (int i = 0; i < N; ++i, pi += is) {
            T *pk = pi;
#pragma unroll
            for (int k = 0; k < N; ++k, pk += ks) f(i, k, pk);
        }
    };

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += int64_t(gridDim.x) * per_block) {
        const int64_t e0 = eb + int64_t(team) * EPT, e = e0 + lane;
        const bool ok = e < g.batch;
        T r[N][N];
        if (SOA) {
            if (ok)
                soa_walk(e, [&](int i, int k, T *p) { r[i][k] = *p; });
            else
#pragma unroll
                for (int i = 0; i < N; ++i)
#pragma unroll
                    for (int k = 0; k < N; ++k) r[i][k] = T(0);
        } else {
            thread_stage<N, true>(g.a, e0, g.batch, sh, lane);
            copy_async_wait();
            __syncwarp();
#pragma unroll
            for (int i = 0; i < N; ++i)
#pragma unroll
                for (int k = 0; k < N; ++k) r[i][k] = ok ? my[i * N + k] : T(0);
        }
        int info = 0, piv[N];
#pragma unroll
        for (int j = 0; j < N; ++j) {
            int p = j;
            auto best = abs_key(r[j][j]);
#pragma unroll
            for (int i = j + 1; i < N; ++i) {
                const auto k = abs_key(r[i][j]);
                if (k > best) best = k, p = i;
            }
            piv[j] = p;
#pragma unroll
            for (int i = j + 1; i < N; ++i)
#pragma unroll
                for (int k = 0; k < N; ++k) {
                    const T x = r[i][k], y = r[j][k];
                    r[i][k] = p == i ? y : x;
                    r[j][k] = p == i ? x : y;
                }
            const T d = r[j][j];
            if ((d == T(0) || d != d) && info == 0) info = j + 1;
            const T div = pivot_divisor(d);
#pragma unroll
            for (int i = j + 1; i < N; ++i) {
                const T l = r[i][j] / div;
                r[i][j] = l;
#pragma unroll
                for (int k = j + 1; k < N; ++k) r[i][k] = fma(-l, r[j][k], r[i][k]);
            }
        }
        if (SOA) {
            if (ok) soa_walk(e, [&](int i, int k, T *p) { *p = r[i][k]; });
        } else {
#pragma unroll
            for (int i = 0; i < N; ++i)
#pragma unroll
                for (int k = 0; k < N; ++k) my[i * N + k] = r[i][k];
            __syncwarp();
            thread_stage<N, false>(g.a, e0, g.batch, sh, lane);
            __syncwarp();  // before the next round's copies land
        }
        if (ok) {
            g.info[e] = info;
#pragma unroll
            for (int i = 0; i < N; ++i) g.piv.p[g.piv.soa ? i * g.piv.stride + e : e * N + i] = piv[i] + 1;
        }
    }
}

// ---------------------------------------------------------------------------------
// getrf, warp-group: G lanes per element, lane r holding row r (C columns) in registers

// Warp-wide max / min of unsigned values: one REDUX on sm_80 and later.
__device__ __forceinline__ unsigned warp_max(unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_max_sync(kFull, v);
#else
    for (int off = 16; off > 0; off /= 2) v = max(v, __shfl_xor_sync(kFull, v, off));
    return v;
#endif
}
__device__ __forceinline__ unsigned warp_min(unsigned v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_min_sync(kFull, v);
#else
    for (int off = 16; off > 0; off /= 2) v = min(v, __shfl_xor_sync(kFull, v, off));
    return v;
#endif
}

// The max (or min) over each group of G lanes (lanes q G .. q G + G - 1), as one full-warp
// reduction per group in which the other groups' lanes contribute the neutral value.
template <bool MAX>
__device__ __forceinline__ unsigned warp_reduce(unsigned v) {
    if constexpr (MAX)
        return warp_max(v);
    else
        return warp_min(v);
}

template <int G, bool MAX>
__device__ __forceinline__ unsigned group_reduce(unsigned v, int q) {
    if constexpr (G == 32) {
        return warp_reduce<MAX>(v);
    } else {
        unsigned m = 0;
#pragma unroll
        for (int gq = 0; gq < 32 / G; ++gq) {
            const unsigned t = warp_reduce<MAX>(q == gq ? v : MAX ? 0u : 0xffffffffu);
            m = q == gq ? t : m;
        }
        return m;
    }
}

// The lanes of this lane's group in a warp-wide ballot.
template <int G>
__device__ __forceinline__ unsigned group_bits(unsigned m, int q) {
    if constexpr (G < 32) m &= ((1u << (G % 32)) - 1) << (q * G % 32);
    return m;
}

// The first lane of this lane's group set in the ballot m, or q G where none is
// (__ffs(0) - 1 is -1, and the group's lanes are q G and above): without a branch.
template <int G>
__device__ __forceinline__ int first_in_group(unsigned m, int q) {
    return max(__ffs(group_bits<G>(m, q)) - 1, q * G);
}

// Whether every group of the ballot m has at most one lane set (uniform over the warp).
template <int G>
__device__ __forceinline__ bool one_per_group(unsigned m) {
    bool one = true;
#pragma unroll
    for (int gq = 0; gq < 32 / G; ++gq) {
        const unsigned b = group_bits<G>(m, gq);
        one = one && (b & (b - 1)) == 0;
    }
    return one;
}

// The pivot's lane of this lane's group: the candidate with the largest key (|a|'s bits:
// a NaN above every number), ties to the lowest position (the first row, as LAPACK's
// i?amax); q G where the group has no candidate (an element past the batch). Keys of 8
// bytes reduce in two 32-bit steps, the high words, then the low words of the rows whose
// high word is the largest; where every group has one row with the largest high word
// (almost always: ties need the exponent and 20 bits of the mantissa equal) that row is
// the pivot, and the second step and the ties' step are skipped (a branch uniform over
// the warp).
template <int G, class K>
__device__ __forceinline__ int pivot_lane(bool cand, K key, int pos, int q) {
    bool hit;
    if constexpr (sizeof(K) == 8) {
        const unsigned hi = cand ? unsigned(key >> 32) : 0u, lo = unsigned(key);
        // Every lane takes part in every reduction (no short-circuit around them).
        const unsigned mh = group_reduce<G, true>(hi, q);
        const bool top = cand && hi == mh;
        const unsigned tops = __ballot_sync(kFull, top);
        const int first = first_in_group<G>(tops, q);  // formed while the test resolves
        if (one_per_group<G>(tops)) return first;
        const unsigned ml = group_reduce<G, true>(top ? lo : 0u, q);
        hit = top && lo == ml;
    } else {
        const unsigned k = cand ? unsigned(key) : 0u;
        const unsigned mk = group_reduce<G, true>(k, q);
        hit = cand && k == mk;
    }
    // Ties (rare, but branching on them costs as much): the lowest position among the hits.
    const unsigned mp = group_reduce<G, false>(hit ? unsigned(pos) : 0xffffffffu, q);
    return first_in_group<G>(__ballot_sync(kFull, hit && unsigned(pos) == mp), q);
}

// The warp-group kernel's columns C for n = 9 .. 32, and the elements a warp stages at
// once. AoS: its 32 / G (G = 16 lanes an element at C = 16, else 32). SoA C = 24: a
// group of consecutive elements whose entries are runs of 16 bytes (f64: 2, f32: 4); SoA
// C = 16, 32: the line kernel (getrf_line_kernel: teams stage, EPT elements a warp), or
// on devices whose blocks cannot hold its team (C = 32: f64 87 KB at least, f32 69 KB), this
// kernel with EPT elements a warp (runs of EPT elements: slow, but every device).
__host__ __device__ constexpr int warp_columns(int n) { return n <= 16 ? 16 : n <= 24 ? 24 : 32; }
__host__ __device__ constexpr int warp_staged(int c, int type_bytes, bool soa) {
    return !soa ? (c <= 16 ? 2 : 1) : c <= 16 ? 2 : c <= 24 ? 16 / type_bytes : 1;
}

// The columns that every n of the kernel's C has (n above the next smaller C), which the
// column loop runs without testing n (the test and its branch, a block boundary, cost
// issue slots and kept the next column's pivot search from overlapping this column's
// update): f64 C = 32 (n = 25 .. 32); elsewhere 0, every column tested.
template <class T, int C>
constexpr int kSureColumns = sizeof(T) == 8 && C == 32 ? 25 : 0;
static_assert(warp_columns(kSureColumns<double, 32>) == 32 && warp_columns(kSureColumns<double, 32> - 1) < 32,
              "n = 25 is the C = 32 kernels' least");

// Whether factor_rows predicates each column's update on the row (f64, and f32 C = 32)
// or branches around it (f32 C = 16, 24). H200 run 399, predicated against branched: f64
// n = 32 AoS 0.310 -> 0.300 ms, SoA 0.350 -> 0.346, n = 16 SoA 0.273 -> 0.255 (AoS 0.235
// both); f32 n = 32 AoS 0.344 -> 0.338, SoA 0.409 -> 0.401; but f32 n = 16 AoS 0.292 ->
// 0.317, SoA 0.342 -> 0.370.
template <class T, int C>
constexpr bool kPredicatedUpdate = sizeof(T) == 8 || C == 32;

template <class T, int C, bool SOA>
struct WarpShape {
    static_assert(C == 16 || C == 24 || C == 32, "the warp kernel's column counts");
    // SoA C = 16, 32 here only where the line kernel's team does not fit a block.
    static constexpr int G = C <= 16 ? 16 : 32, EPT = 32 / G, W = 16 / int(sizeof(T));
    static constexpr int NS = warp_staged(C, int(sizeof(T)), SOA);  // elements staged, EPT at a time
    static_assert(NS % EPT == 0 && (SOA || NS == EPT), "whole rounds of EPT elements");
    // Rows C + W apart, so that a quarter warp's 16-byte row reads (8 lanes, 8 rows) hit 8
    // distinct groups of banks ((C + W) / W is odd for C = 16, 24, 32). SoA groups (f32
    // C = 24): slots 32 / NS entries more than a matrix apart, so that
    // a staging load's NS elements x 32 / NS columns spread over the banks (f64 C = 24: 2
    // elements x 16 columns take two wavefronts, as their bytes do, with no padding).
    static constexpr int LD = C + W;
    // (row, col) of a slot.
    __host__ __device__ static constexpr int at(int row, int col) { return row * LD + col; }
    static constexpr int MS = C * LD + (SOA && NS > 1 && sizeof(T) == 4 ? 32 / NS : 0);
    // The warp's region: two pivot-row buffers per element in flight (the columns
    // alternate between them, so that one __syncwarp per column orders writer and
    // readers), NS matrix slots of MS entries, NS x C pivots (bytes).
    static constexpr int RB = C, BUFS = EPT * 2 * RB;
    static constexpr int64_t PIV_OFF = int64_t(BUFS + NS * MS) * int64_t(sizeof(T));
    static constexpr int64_t TEAM_BYTES = round16(PIV_OFF + int64_t(NS) * C);  // pivots: bytes
    static_assert((BUFS * sizeof(T)) % 16 == 0 && (MS * sizeof(T)) % 16 == 0 && (LD * sizeof(T)) % 16 == 0 &&
                      TEAM_BYTES % 16 == 0,
                  "16-byte row loads");
};

// 16 bytes to shared memory where p holds: a predicated store, not a branch around it,
// so that the scheduler may interleave the pivot lane's row stores with the column's
// division (H200 run 411).
__device__ __forceinline__ void st_shared_if(bool p, double *dst, const double (&v)[2]) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %0, 0;\n\t@q st.shared.v2.f64 [%1], {%2, %3};\n\t}\n"
                 ::"r"(int(p)), "r"(s), "d"(v[0]), "d"(v[1])
                 : "memory");
}
__device__ __forceinline__ void st_shared_if(bool p, float *dst, const float (&v)[4]) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %0, 0;\n\t@q st.shared.v4.f32 [%1], {%2, %3, %4, %5};\n\t}\n"
                 ::"r"(int(p)), "r"(s), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3])
                 : "memory");
}

// The pivot row from column `from` on (rounded down to 16 bytes) to buf, where p holds.
template <class T, int C>
__device__ __forceinline__ void put_row_if(bool p, T *buf, const T (&a)[C], int from) {
    constexpr int W = 16 / sizeof(T);
#pragma unroll
    for (int k0 = 0; k0 < C; k0 += W) {
        if (k0 + W <= from) continue;  // compile-time where `from` is
        T t[W];
#pragma unroll
        for (int w = 0; w < W; ++w) t[w] = a[k0 + w];
        st_shared_if(p, buf + k0, t);
    }
}

// The warp kernel's staging, LOAD global -> shared by cp.async, else back: memory
// column c (rows 0 .. n - 1 of the memory grid) of staged element q, global g + i gstep
// <-> shared q MS + c sc + i sstep. AoS: lane = (q, c), G lanes an element, a row of an
// element per warp load. SoA: lane = (c, q), q fastest, memory columns c, c + 32 / NS,
// ...: each load is 32 / NS runs of NS consecutive elements' entry (C = 24: 16 bytes, a
// sector's half).
template <class T, int C, bool SOA, bool LOAD>
__device__ __forceinline__ void warp_stage(const Mat<T> &m, int n, int64_t e0, int64_t batch, T *slots, int lane) {
    using S = WarpShape<T, C, SOA>;
    constexpr int CS = SOA ? 32 / S::NS : S::G;  // the column step (AoS: one column, c < G)
    const int q = SOA ? lane % S::NS : lane / S::G, c0 = SOA ? lane / S::NS : lane % S::G;
    const int64_t e = e0 + q;
    if (e >= batch) return;
    const int64_t gstep = SOA ? m.ld * m.stride : m.ld;
    const int sstep = m.row_major ? S::LD : 1, sc = m.row_major ? 1 : S::LD;
    for (int c = c0; c < n; c += CS) {
        T *gp = m.p + (SOA ? int64_t(c) * m.stride + e : e * m.stride + c);
        int s = q * S::MS + c * sc;
#pragma unroll 4
        for (int i = 0; i < n; ++i, gp += gstep, s += sstep) {
            if (LOAD)
                copy_async(slots + s, gp);
            else
                *gp = slots[s];
        }
    }
}

// Row `row` of a staged slot to and from registers, 16 bytes at a time.
template <class S, class T, int C>
__device__ __forceinline__ void get_slot_row(const T *mat, int row, T (&a)[C]) {
    constexpr int W = 16 / sizeof(T);
#pragma unroll
    for (int k0 = 0; k0 < C; k0 += W) {
        const Pack<T> t = *reinterpret_cast<const Pack<T> *>(mat + S::at(row, k0));
#pragma unroll
        for (int w = 0; w < W; ++w) a[k0 + w] = t.v[w];
    }
}

template <class S, class T, int C>
__device__ __forceinline__ void put_slot_row(T *mat, int row, const T (&a)[C]) {
    constexpr int W = 16 / sizeof(T);
#pragma unroll
    for (int k0 = 0; k0 < C; k0 += W) {
        Pack<T> t;
#pragma unroll
        for (int w = 0; w < W; ++w) t.v[w] = a[k0 + w];
        *reinterpret_cast<Pack<T> *>(mat + S::at(row, k0)) = t;
    }
}

// The column loop of the warp kernels: G lanes per element, lane r holding row r of
// the element in a (row_ok: a row of an element in the batch), pos its current
// position (in: r; out: the row's final position), buf the element's two pivot-row
// buffers (C entries each), piv[j] the pivot's position of column j. Returns info.
// Every lane of the warp takes part (the reductions and shuffles are warp-wide).
template <class T, int C, int G>
__device__ __forceinline__ int factor_rows(T (&a)[C], bool row_ok, int r, int q, int lane, int n, T *buf,
                                           unsigned char *piv, int &pos) {
    constexpr int W = 16 / int(sizeof(T));
    int info = 0;
#pragma unroll
    for (int j = 0; j < C; ++j) {
        if (j >= kSureColumns<T, C> && j >= n) break;  // uniform: n is the same for every lane
        const bool cand = row_ok && pos >= j;
        const int pl = pivot_lane<G>(cand, abs_key(a[j]), pos, q);  // the pivot's lane
        const int pp = __shfl_sync(kFull, pos, pl);                 // its position: ipiv[j]
        const T d = __shfl_sync(kFull, a[j], pl);
        // u_{j,j+1} by shuffle, with the pivot value (the next column's pivot search waits
        // for the division and this fma, not for the shared buffer), the rest of the pivot
        // row from column j + 2 on by the buffer
        const T u1 = j + 1 < C ? __shfl_sync(kFull, a[j + 1 < C ? j + 1 : j], pl) : T(0);
        T *const rowbuf = buf + (j & 1) * C;
        const bool piv_lane = lane == pl && row_ok;
        if (piv_lane) piv[j] = pp;
        put_row_if(piv_lane, rowbuf, a, j + 2);
        if (row_ok) pos = piv_lane ? j : pos == j ? pp : pos;
        __syncwarp();
        if ((d == T(0) || d != d) && info == 0) info = j + 1;
        // The update: predicated (kPredicatedUpdate), so that the scheduler may interleave
        // it with the next column's search and start the division ahead of the pivot
        // row's stores, or a branch around it for the lanes whose row is done.
        const bool upd = row_ok && pos > j;
        if (kPredicatedUpdate<T, C> || upd) {
            const T l = a[j] / pivot_divisor(d);
            if (upd) a[j] = l;
            if (j + 1 < C && upd) a[j + 1 < C ? j + 1 : j] = fma(-l, u1, a[j + 1 < C ? j + 1 : j]);
#pragma unroll
            for (int k0 = (j + 2) / W * W; k0 < C; k0 += W) {
                const Pack<T> u = reinterpret_cast<const Pack<T> *>(rowbuf)[k0 / W];
#pragma unroll
                for (int w = 0; w < W; ++w)
                    if (k0 + w >= j + 2 && upd) a[k0 + w] = fma(-l, u.v[w], a[k0 + w]);
            }
        }
    }
    return info;
}

// Rows are never moved between lanes: lane r keeps row r of the input and `pos`, the
// row's current logical position (LAPACK's row interchanges act on positions). Column j:
// the candidates are the lanes at positions >= j; the pivot is the largest key, ties to
// the lowest position (the first row), the pivot's position is ipiv[j], and the lane at
// position j takes the pivot's old one. The pivot value and the next column's entry of
// the pivot row come by shuffles; the rest of the pivot row from its lane through a
// shared buffer (16-byte loads). Each warp stages its NS elements by cp.async (every load
// in flight at once) and factors them EPT at a time.
template <class T, int C, bool SOA>
__global__ void LU_MAXNREG getrf_warp_kernel(const GetrfArgs<T> g) {
    using Shape = WarpShape<T, C, SOA>;
    constexpr int G = Shape::G, EPT = Shape::EPT, NS = Shape::NS, MS = Shape::MS, RB = Shape::RB;
    extern __shared__ __align__(16) unsigned char lu_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    const int q = lane / G, r = lane % G, n = g.n;
    const int64_t per_block = int64_t(teams) * NS, step = int64_t(gridDim.x) * per_block;
    unsigned char *const region = lu_smem + team * Shape::TEAM_BYTES;
    T *const buf = reinterpret_cast<T *>(region) + q * 2 * RB;  // this lane's element's row buffers
    T *const slots = reinterpret_cast<T *>(region) + Shape::BUFS;
    unsigned char *const pivsh = region + Shape::PIV_OFF;

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += step) {
        const int64_t e0 = eb + int64_t(team) * NS;
        warp_stage<T, C, SOA, true>(g.a, n, e0, g.batch, slots, lane);
        copy_async_wait();
        __syncwarp();
#pragma unroll 1
        for (int k = 0; k < NS; k += EPT) {
            if (NS > EPT && e0 + k >= g.batch) break;  // uniform over the warp
            const int qs = k + q;          // this lane's element among the staged
            const int64_t e = e0 + qs;
            T *const mat = slots + qs * MS;
            const bool row_ok = e < g.batch && r < n;
            T a[C];
            if (row_ok) {
                get_slot_row<Shape>(mat, r, a);
#pragma unroll
                for (int kk = 0; kk < C; ++kk)
                    if (kk >= n) a[kk] = T(0);  // never staged
            } else {
#pragma unroll
                for (int kk = 0; kk < C; ++kk) a[kk] = T(0);
            }
            int pos = r;
            const int info = factor_rows<T, C, G>(a, row_ok, r, q, lane, n, buf, pivsh + qs * C, pos);
            // The slot was last read before the first column's __syncwarp: the rows land
            // at their final positions.
            if (row_ok) put_slot_row<Shape>(mat, pos, a);
            if (r == 0 && e < g.batch) g.info[e] = info;
            // Before the copy back, and before the next round's first pivot row goes to a
            // buffer this round's last columns read.
            __syncwarp();
        }
        warp_stage<T, C, SOA, false>(g.a, n, e0, g.batch, slots, lane);
        store_pivots(g.piv, n, e0, g.batch, pivsh, C, lane, 32, NS);
        __syncwarp();  // the next copies land where this one's were read
    }
}

// ---------------------------------------------------------------------------------
// getrf, warp-group, SoA C = 16 and 32 (the line kernel): teams of NW warps stage E =
// NW x EPT consecutive elements at once, each entry a run of E elements copied 16 bytes
// a thread: C = 16 8 warps, 16 elements (f64 runs of 128 bytes, whole lines; f32 64),
// double-buffered (the next round's copies in flight while this one is factored); C = 32
// 8 warps, 8 elements (f64 runs of 64 bytes, f32 32), several teams an SM (f64 two, 103
// KB each at 128 registers, one stage and a chunk; f32 three, 69 KB at 80 registers,
// double-buffered), each factoring while the others' copies are in flight. Per-warp
// groups of 32-byte runs (C = 16) and block staging 4 or 8 bytes a thread (C = 32) made
// two to four times the line requests a byte of the AoS kernel and took 1.4 to 1.9 times
// as long.
template <class T, int C, int CR_ = 16>
struct LineShape {
    static_assert(C == 16 || C == 32, "the line kernel's column counts");
    static constexpr int G = C <= 16 ? 16 : 32, EPT = 32 / G, NW = 8, E = NW * EPT,
                         W = 16 / int(sizeof(T)), TT = NW * 32;
    // The stage: logical (i, k) of the team's element q at i * RS + k * E + q, so that a
    // run of W elements is 16 contiguous bytes; RS = C E + W puts a warp's row reads at C
    // = 16 (16 rows x 2 elements) on 16 (f64) / 32 (f32) distinct 8- / 4-byte slots per 8
    // rows (C = 32: 4-way conflicts, once a row per element).
    static constexpr int RS = C * E + W, STAGE = C * RS;
    // Stages: two (double-buffered: the next round's copies land in the other while this
    // one is factored), but f64 C = 32 one (two would leave one team of 8 warps an SM:
    // 0.505 ms against two single-stage teams' 0.456 at n = 32), with PF: the next
    // round's copies go into the stage as soon as this round's rows are in registers,
    // and the factored rows go out through a chunk of CR rows (H100 f64 n = 32: 0.356 ->
    // 0.351 ms with CR = 16, a 103 KB team; CR = 8, 87 KB, took 0.367 and is the choice
    // where a block holds less, as the 99 KB of sm_86 / sm_89). f32 C = 32: three
    // double-buffered teams of 69 KB an SM (0.425 -> 0.411 ms; PF spilled at the
    // 80-register cap and took 0.443).
    static constexpr int STAGES = C == 32 && sizeof(T) == 8 ? 1 : 2;
    static constexpr bool PF = STAGES == 1;
    static constexpr int CR = CR_, CHUNK = PF ? CR * RS : 0;
    // The team's region: the elements' pivot-row buffers (two of C each), the stages, the
    // chunk, the pivots (bytes, C per element).
    static constexpr int BUFS = E * 2 * C;
    static constexpr int64_t PIV_OFF = int64_t(BUFS + STAGES * STAGE + CHUNK) * int64_t(sizeof(T));
    static constexpr int64_t TEAM_BYTES = round16(PIV_OFF + int64_t(E) * C);
    static_assert((BUFS * sizeof(T)) % 16 == 0 && (RS * sizeof(T)) % 16 == 0 && E % W == 0, "16-byte runs");
};

// A team's copy of a block of entries of elements e0 .. e0 + E - 1 (those below batch),
// LOAD global -> shared by cp.async, else back: the memory entries (mr, mc) = (r0 + o, c0
// + i) for o < outer, i < inner, the entry (o, i) at o ri + i ci of the shared block
// (plus the element). Thread = (entry, group of W elements), the group fastest, so that E
// / W threads cover an entry's run; 16 bytes a thread where the pointer and the stride
// allow it and the group is whole, else element by element. The entries are walked by
// steps of XS = TT / GR, the global and shared offsets carried from step to step: two
// divisions a call, not a division and two 64-bit products a copy (a C = 32 stage is 10
// to 16 steps a thread each way in f64, 5 to 8 in f32).
template <class T, int C, bool LOAD>
__device__ __forceinline__ void line_copy(const Mat<T> &m, int64_t e0, int64_t batch, T *sh, int tid, bool vec,
                                          int r0, int c0, int outer, int inner, int ri, int ci) {
    using S = LineShape<T, C>;
    constexpr int GR = S::E / S::W, XS = S::TT / GR;
    if (e0 >= batch) return;
    const int nv = batch - e0 < S::E ? int(batch - e0) : S::E, q0 = tid % GR * S::W;
    if (q0 >= nv) return;
    const bool whole = vec && q0 + S::W <= nv;
    int x = tid / GR, in = x % inner;
    const int dout = XS / inner, din = XS % inner;
    const int64_t gs = m.stride;
    int64_t go = (int64_t(r0 + x / inner) * m.ld + c0 + in) * gs + e0 + q0;
    const int64_t gstep = (int64_t(dout) * m.ld + din) * gs, gwrap = (m.ld - inner) * gs;
    int so = (x / inner) * ri + in * ci + q0;
    const int sstep = dout * ri + din * ci, swrap = ri - inner * ci;
    for (; x < outer * inner; x += XS) {
        T *const gp = m.p + go;
        T *const sp = sh + so;
        if (whole) {
            if (LOAD)
                copy_async(reinterpret_cast<Pack<T> *>(sp), reinterpret_cast<const Pack<T> *>(gp));
            else
                *reinterpret_cast<Pack<T> *>(gp) = *reinterpret_cast<const Pack<T> *>(sp);
        } else {
            for (int w = 0; w < S::W && q0 + w < nv; ++w) {
                if (LOAD)
                    copy_async(sp + w, gp + w);
                else
                    gp[w] = sp[w];
            }
        }
        in += din;
        go += gstep;
        so += sstep;
        if (in >= inner) in -= inner, go += gwrap, so += swrap;
    }
}

// The whole stage: logical (i, k) at i RS + k E; memory (mr, mc) = (i, k) row-major,
// else (k, i).
template <class T, int C, bool LOAD>
__device__ __forceinline__ void line_stage(const Mat<T> &m, int n, int64_t e0, int64_t batch, T *st, int tid,
                                           bool vec) {
    using S = LineShape<T, C>;
    line_copy<T, C, LOAD>(m, e0, batch, st, tid, vec, 0, 0, n, n, m.row_major ? S::RS : S::E,
                          m.row_major ? S::E : S::RS);
}

// Logical rows i0 .. i0 + rows - 1 of the team's elements from the chunk buffer (row i
// at (i - i0) RS) back to memory: row-major, memory rows i0.. (rows x n entries), else
// memory columns i0.. (n x rows).
template <class T, int C>
__device__ __forceinline__ void line_rows_out(const Mat<T> &m, int n, int64_t e0, int64_t batch, T *chunk,
                                              int tid, bool vec, int i0, int rows) {
    using S = LineShape<T, C>;
    if (m.row_major)
        line_copy<T, C, false>(m, e0, batch, chunk, tid, vec, i0, 0, rows, n, S::RS, S::E);
    else
        line_copy<T, C, false>(m, e0, batch, chunk, tid, vec, 0, i0, n, rows, S::E, S::RS);
}

// Each warp factors EPT of its team's elements (factor_rows, as the warp kernel), reading
// its rows from the stage and writing them back at their final positions, the copy back
// and the pivots in memory order. Double-buffered: two barriers a round (the stage is
// ready / factored). PF: the rows back through the chunk, two barriers a round and two a
// chunk, one for the last (n = 32, CR = 16: five).
template <class T, int C, int CR>
__global__ void LU_LINE_MAXNREG(T, C) getrf_line_kernel(const GetrfArgs<T> g) {
    using S = LineShape<T, C, CR>;
    constexpr int G = S::G, EPT = S::EPT, E = S::E, TT = S::TT, RS = S::RS;
    extern __shared__ __align__(16) unsigned char lu_smem[];
    const int team = int(threadIdx.x) / TT, tid = int(threadIdx.x) % TT, teams = int(blockDim.x) / TT;
    const int lane = tid % 32, q = lane / G, r = lane % G, n = g.n;
    const int qs = tid / 32 * EPT + q;  // this lane's element among the team's
    unsigned char *const region = lu_smem + team * S::TEAM_BYTES;
    T *const buf = reinterpret_cast<T *>(region) + qs * 2 * C;
    T *const stage = reinterpret_cast<T *>(region) + S::BUFS;
    unsigned char *const pivsh = region + S::PIV_OFF;
    const bool vec = reinterpret_cast<uintptr_t>(g.a.p) % 16 == 0 && g.a.stride % S::W == 0;
    const int64_t per_block = int64_t(teams) * E, step = int64_t(gridDim.x) * per_block;
    constexpr bool PF = S::PF;  // else double-buffered
    T *const chunk = stage + S::STAGES * S::STAGE;
    int cb = 0;
    line_stage<T, C, true>(g.a, n, int64_t(blockIdx.x) * per_block + int64_t(team) * E, g.batch, stage, tid, vec);
    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += step) {
        const int64_t e0 = eb + int64_t(team) * E, e = e0 + qs;
        T *const cur = stage + cb * S::STAGE;
        // This round's copies landed (each thread's own, then the barrier). Two stages: the
        // other was copied back before the barrier, and the next round's copies go there.
        copy_async_wait();
        __syncthreads();
        if (!PF) line_stage<T, C, true>(g.a, n, e0 + step, g.batch, stage + (cb ^ 1) * S::STAGE, tid, vec);
        const bool row_ok = e < g.batch && r < n;
        T a[C];
#pragma unroll
        for (int k = 0; k < C; ++k) a[k] = row_ok && k < n ? cur[r * RS + k * E + qs] : T(0);
        if (PF) {  // every row read: the next round's copies go into the stage
            __syncthreads();
            line_stage<T, C, true>(g.a, n, e0 + step, g.batch, cur, tid, vec);
        }
        // The rows were read before factor_rows' first __syncwarp: they land at their
        // final positions (over rows of the same element, or in the chunk).
        int pos = r;
        const int info = factor_rows<T, C, G>(a, row_ok, r, q, lane, n, buf, pivsh + qs * C, pos);
        if (r == 0 && e < g.batch) g.info[e] = info;
        if (PF) {
            for (int i0 = 0; i0 < n; i0 += S::CR) {
                const int rows = min(S::CR, n - i0);
                if (row_ok && pos >= i0 && pos < i0 + rows) {
#pragma unroll
                    for (int k = 0; k < C; ++k)
                        if (k < n) chunk[(pos - i0) * RS + k * E + qs] = a[k];
                }
                __syncthreads();
                line_rows_out<T, C>(g.a, n, e0, g.batch, chunk, tid, vec, i0, rows);
                // The chunk read before it is written again (after the last chunk, the next
                // round's first barriers order it).
                if (i0 + S::CR < n) __syncthreads();
            }
        } else {
            if (row_ok) {
#pragma unroll
                for (int k = 0; k < C; ++k)
                    if (k < n) cur[pos * RS + k * E + qs] = a[k];
            }
            __syncthreads();
            line_stage<T, C, false>(g.a, n, e0, g.batch, cur, tid, vec);
            cb ^= 1;
        }
        // The pivots, read before the next round's first barrier (after which they are
        // written again).
        store_pivots(g.piv, n, e0, g.batch, pivsh, C, tid, TT, E);
    }
}

// The pivot row of column j of the n x n matrix a (ld LD), found by a warp: each lane
// scans rows j + lane, j + lane + 32, ... in order (keys + 1, so that any row beats
// none), then a butterfly of (key, row) pairs, ties to the lower row. Every lane gets it.
// R >= ceil((n - j) / 32): the scan unrolled (a rolled loop cost the rows kernel 2.5-5 %,
// H200 run 230).
template <int R, class T>
__device__ __forceinline__ int warp_pivot_row(const T *a, int LD, int j, int n, int lane) {
    decltype(abs_key(T(0))) best = 0;
    int row = n;
#pragma unroll
    for (int k = 0; k < R; ++k) {
        const int i = j + lane + 32 * k;
        if (i < n) {
            const auto key = abs_key(a[i * LD + j]) + 1;
            if (key > best) best = key, row = i;
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2) {
        const auto ob = __shfl_xor_sync(kFull, best, off);
        const int orow = __shfl_xor_sync(kFull, row, off);
        if (ob > best || (ob == best && orow < row)) best = ob, row = orow;
    }
    return row;
}

// The update of column j's rows below the pivot, r = lane + 32 k where act[k], over
// columns j + 1 .. end - 1: a_rc = fma(-l_r, u_c, a_rc), u_c one broadcast load for all
// the lane's rows; Q columns at a time, every load before the stores: the compiler cannot
// tell row j from this lane's rows, so a load after a store waits for it (H200 run 227,
// one column at a time: f64 n = 64 1.55 ms, n = 128 12.9).
template <int R, class T>
__device__ __forceinline__ void rows_update(T *A, int LD, int j, int end, int lane, const bool (&act)[R],
                                            const T (&l)[R]) {
    constexpr int Q = 4;
    auto update = [&](int c, auto q_count) {
        constexpr int QN = decltype(q_count)::value;
        T u[QN], x[R][QN];
#pragma unroll
        for (int q = 0; q < QN; ++q) u[q] = A[j * LD + c + q];
#pragma unroll
        for (int k = 0; k < R; ++k)
#pragma unroll
            for (int q = 0; q < QN; ++q) x[k][q] = act[k] ? A[(lane + 32 * k) * LD + c + q] : T(0);
#pragma unroll
        for (int k = 0; k < R; ++k)
#pragma unroll
            for (int q = 0; q < QN; ++q)
                if (act[k]) A[(lane + 32 * k) * LD + c + q] = fma(-l[k], u[q], x[k][q]);
    };
    int c = j + 1;
    for (; c + Q <= end; c += Q) update(c, std::integral_constant<int, Q>());
    for (; c < end; ++c) update(c, std::integral_constant<int, 1>());
}

// ---------------------------------------------------------------------------------
// getrf, the rows kernel: a warp per element in shared memory.

// A warp's slot (bytes): the n x (n | 1) matrix, then the n pivots.
template <class T>
__host__ __device__ constexpr int64_t getrf_rows_slot(int n) {
    return round16(int64_t(n) * pad_odd(n) * int64_t(sizeof(T)) + 4 * int64_t(n));
}

template <class T, int R>
__global__ void LU_MAXNREG getrf_rows_kernel(const GetrfArgs<T> g) {
    extern __shared__ __align__(16) unsigned char lu_smem[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32, n = g.n, LD = pad_odd(n);
    const int64_t slot = getrf_rows_slot<T>(n) / int64_t(sizeof(T));
    T *const base = reinterpret_cast<T *>(lu_smem), *const A = base + warp * slot;
    int *const pivsh = reinterpret_cast<int *>(A + n * LD);
    const Walker w0(lane, 32, n, n), wb(threadIdx.x, blockDim.x, warps, n);  // AoS: the warp's; SoA: the block's
    auto dst = [&](int r, int c) { return g.a.row_major ? r * LD + c : c * LD + r; };
    const bool coop = g.a.soa && warps > 1;  // SoA by the block where it has several warps (as getrs)
    const int64_t es = g.a.soa ? g.a.stride : 1;
    for (int64_t eb = int64_t(blockIdx.x) * warps; eb < g.batch; eb += int64_t(gridDim.x) * warps) {  // block-uniform
        const int64_t e = eb + warp;
        const bool live = e < g.batch;
        T *const src = g.a.p + (g.a.soa ? e : e * g.a.stride);  // fast-grid (r, c) at src[(r ld + c) es]
        rows_stage(coop, live, base, slot, g.a.p, g.a.ld, g.a.stride, eb, g.batch, n, wb, dst,
                   [&] { warp_stage_grid(A, src, g.a.ld, es, w0, dst); });
        copy_async_wait();
        if (coop)
            __syncthreads();
        else
            __syncwarp();
        if (live) {
            int info = 0;
            for (int j = 0; j < n; ++j) {
                const int p = warp_pivot_row<R>(A, LD, j, n, lane);
                const T d = A[p * LD + j];
                if ((d == T(0) || d != d) && info == 0) info = j + 1;
                if (lane == 0) pivsh[j] = p;
                __syncwarp();  // every lane has read d before the swap moves it
                if (p != j)  // uniform
                    for (int k = lane; k < n; k += 32) {
                        const T t = A[j * LD + k];
                        A[j * LD + k] = A[p * LD + k];
                        A[p * LD + k] = t;
                    }
                __syncwarp();
                // This lane's rows below the pivot: the multiplier, then the row's update
                // a_rk = fma(-l_r, u_k, a_rk), k ascending, u_k one broadcast load for
                // all of them.
                const T div = pivot_divisor(d);
                const int kj = j / 32;  // blocks of rows below kj are finished
                T l[R];
                bool act[R];
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    const int r = lane + 32 * k;
                    act[k] = k >= kj && r > j && r < n;
                    l[k] = act[k] ? A[r * LD + j] / div : T(0);
                    if (act[k]) A[r * LD + j] = l[k];
                }
                rows_update<R>(A, LD, j, n, lane, act, l);
                __syncwarp();  // row j + 1 and column j + 1 are read by every lane next
            }
            if (lane == 0) g.info[e] = info;
        }
        // The copy-out: the factors, then the pivots (1-based).
        if (coop) {
            __syncthreads();
            block_store_soa(g.a.p, g.a.ld, g.a.stride, base, slot, eb, g.batch, n, wb,
                            [&](int, int r, int c) { return dst(r, c); });
        } else if (live) {
            for (Walker w = w0; w.d2 == 0; w.advance()) src[(w.d1 * g.a.ld + w.d0) * es] = A[dst(w.d1, w.d0)];
        }
        if (live)
            for (int i = lane; i < n; i += 32) g.piv.p[g.piv.soa ? i * g.piv.stride + e : e * n + i] = pivsh[i] + 1;
    }
}

// a / d for many a and one d (f64), bit for bit CUDA's division: its fast path's steps
// (MUFU.RCP64H's seed with a low word of 1, two refinements of the reciprocal, the
// quotient a r corrected once) with d's part done once, and its own test of whether the
// fast path holds (a not tiny, the quotient not tiny, d not huge), else a / d itself.
struct DivByF64 {
    double d, r;
    __device__ __forceinline__ explicit DivByF64(double dv) : d(dv) {
        double seed;
        asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(seed) : "d"(dv));
        const double r0 = __hiloint2double(__double2hiint(seed), 1);
        double e = __fma_rn(-dv, r0, 1.0);
        e = __fma_rn(e, e, e);
        const double r1 = __fma_rn(r0, e, r0);
        r = __fma_rn(r1, __fma_rn(-dv, r1, 1.0), r1);
    }
    // The fast path's quotient, and whether it holds (else a / d is the quotient).
    __device__ __forceinline__ double quick(double a, bool &fast) const {
        const double q0 = __dmul_rn(a, r);
        const double q = __fma_rn(r, __fma_rn(-d, q0, a), q0);
        float t;
        asm("fma.rn.f32 %0, 0f00000000, %1, %2;"
            : "=f"(t)
            : "f"(__int_as_float(__double2hiint(d))), "f"(__int_as_float(__double2hiint(q))));
        const float ah = fabsf(__int_as_float(__double2hiint(a)));
        fast = fabsf(t) > __int_as_float(0x00100000) && !(ah < __int_as_float(0x03600000));
        return q;
    }
};

// ---------------------------------------------------------------------------------
// getrf, blocked (the panel kernel): a team of S threads per element, the element in
// shared memory (ld n | 1, a rows-kernel slot), factored in panels of NB columns (f64 8,
// f32 16: H200 run 318, f64 n = 128 2.53 against 2.57 ms at 16, f32 1.93 against 1.97 at 8).
// Panel [jb, je):
//   1. the team's first warp factors the panel's columns over rows jb .. n - 1 as the
//      rows kernel does (lane l owning rows l, l + 32, ...), its interchanges and updates
//      confined to the panel's columns;
//   2. a thread a column outside the panel: the panel's interchanges in order, then,
//      right of the panel, rows jb .. je - 1 solved with the panel's unit lower triangle:
//      u_jk = fma(-l_jq, u_qk, u_jk) for q = jb .. j - 1 in order;
//   3. the trailing matrix in register tiles of TM x TN: a_ik = fma(-l_ij, u_jk, a_ik)
//      for j = jb .. je - 1 in order.
// Each entry takes the column-by-column kernels' fmas on the same operands in the same
// order (j ascending; rows carry their multipliers through the interchanges), so the
// bits are theirs; the trailing update's flops, most of the work past n = 32, are shared
// by the team instead of one warp's lanes. The panel, one warp's chain of columns while
// the team waits, is most of the time left (H200 run 321, before DivByF64: about 60 % of
// f64 n = 128's); a panel over PT = min(S, 32 R) threads, a row each, with a barrier after
// the pivot's candidates, the swap and the update, measured slower (run 320: 2.85
// against 2.53 ms).
template <class T>
constexpr int kPanel = sizeof(T) == 8 ? 8 : 16;

// The pivot row of column j as warp_pivot_row finds it (the first row of the largest
// key), by pivot_lane's reductions instead of a butterfly of shuffles.
template <int R, class T>
__device__ __forceinline__ int warp_pivot_row_redux(const T *a, int LD, int j, int n, int lane) {
    decltype(abs_key(T(0))) best = 0;
    int row = n;
    bool cand = false;
#pragma unroll
    for (int k = 0; k < R; ++k) {
        const int i = j + lane + 32 * k;
        if (i < n) {
            const auto key = abs_key(a[i * LD + j]);
            if (!cand || key > best) best = key, row = i, cand = true;
        }
    }
    return __shfl_sync(kFull, row, pivot_lane<32>(cand, best, row, 0));
}

template <class T, int R>
__global__ void LU_MAXNREG getrf_panel_kernel(const GetrfArgs<T> g) {
    extern __shared__ __align__(16) unsigned char lu_smem[];
    constexpr int NB = kPanel<T>, TM = 4, TN = 4, NK = 16;  // panel columns; register tile; threads along k
    const int n = g.n, S = g.sub, LD = pad_odd(n);
    const int team = threadIdx.x / S, tid = threadIdx.x % S, teams = blockDim.x / S;
    const int lane = tid % 32, NI = S / NK, ti = tid / NK, tk = tid % NK;
    T *const A = reinterpret_cast<T *>(lu_smem + team * getrf_rows_slot<T>(n));
    int *const pivsh = reinterpret_cast<int *>(A + n * LD);

    for (int64_t eb = int64_t(blockIdx.x) * teams; eb < g.batch; eb += int64_t(gridDim.x) * teams) {
        const int64_t e = eb + team;
        const bool alive = e < g.batch;  // uniform over the team
        load_block<sizeof(T) == 8 ? 4 : 8>(g.a, n, 0, n, e, g.batch, A, 0, LD, tid, S, 1, All());
        __syncthreads();
        int info = 0;
        for (int jb = 0; jb < n; jb += NB) {  // uniform
            const int je = min(jb + NB, n), nb = je - jb;
            // 1. The panel, by the team's first warp.
            if (alive && tid < 32) {
                for (int j = jb; j < je; ++j) {
                    const int p = warp_pivot_row_redux<R>(A, LD, j, n, lane);
                    const T d = A[p * LD + j];
                    if ((d == T(0) || d != d) && info == 0) info = j + 1;
                    if (lane == 0) pivsh[j] = p;
                    __syncwarp();  // every lane has read d before the swap moves it
                    if (p != j && lane < nb) {
                        const T t = A[j * LD + jb + lane];
                        A[j * LD + jb + lane] = A[p * LD + jb + lane];
                        A[p * LD + jb + lane] = t;
                    }
                    __syncwarp();
                    const T div = pivot_divisor(d);
                    // The multipliers a / div; f64: every row's quotient by CUDA's fast path
                    // first, its reciprocal of div formed once, then the rare rows outside
                    // that path by the operator (H200 run 322: n = 128 2.54 -> 2.36 ms).
                    T l[R], a[R];
                    bool act[R], fast[R];
#pragma unroll
                    for (int k = 0; k < R; ++k) {
                        const int r = lane + 32 * k;
                        act[k] = r > j && r < n;
                        a[k] = act[k] ? A[r * LD + j] : T(1);
                        l[k] = T(0);
                        fast[k] = false;
                    }
                    if constexpr (sizeof(T) == 8) {
                        const DivByF64 by(div);
#pragma unroll
                        for (int k = 0; k < R; ++k) l[k] = by.quick(a[k], fast[k]);
                    }
#pragma unroll
                    for (int k = 0; k < R; ++k)
                        if (act[k]) {
                            if (!fast[k]) l[k] = a[k] / div;
                            A[(lane + 32 * k) * LD + j] = l[k];
                        }
                    rows_update<R>(A, LD, j, je, lane, act, l);  // the panel's columns right of j
                    __syncwarp();  // row j + 1 and column j + 1 are read by every lane next
                }
            }
            __syncthreads();
            // 2. The other columns: the interchanges, then U's rows jb .. je - 1 right of
            //    the panel.
            if (alive)
                for (int x = tid; x < n - nb; x += S) {
                    const int k = x < jb ? x : x + nb;
                    for (int j = jb; j < je; ++j) {
                        const int p = pivsh[j];
                        if (p != j) {
                            const T t = A[j * LD + k];
                            A[j * LD + k] = A[p * LD + k];
                            A[p * LD + k] = t;
                        }
                    }
                    if (k >= je) {
                        T u[NB];
#pragma unroll
                        for (int q = 0; q < NB; ++q) u[q] = q < nb ? A[(jb + q) * LD + k] : T(0);
#pragma unroll
                        for (int q = 1; q < NB; ++q) {
                            if (q >= nb) break;
#pragma unroll
                            for (int r = 0; r < q; ++r) u[q] = fma(-A[(jb + q) * LD + jb + r], u[r], u[q]);
                            A[(jb + q) * LD + k] = u[q];
                        }
                    }
                }
            __syncthreads();
            // 3. The trailing matrix, rows and columns je .. n - 1: thread (ti, tk) holds
            //    rows i0 + ti + NI a and columns k0 + tk + NK b of each super tile.
            if (alive)
                for (int i0 = je; i0 < n; i0 += NI * TM)
                    for (int k0 = je; k0 < n; k0 += NK * TN) {
                        T acc[TM][TN];
                        bool rok[TM], cok[TN];
#pragma unroll
                        for (int a = 0; a < TM; ++a) rok[a] = i0 + ti + NI * a < n;
#pragma unroll
                        for (int b = 0; b < TN; ++b) cok[b] = k0 + tk + NK * b < n;
#pragma unroll
                        for (int a = 0; a < TM; ++a)
#pragma unroll
                            for (int b = 0; b < TN; ++b)
                                acc[a][b] = rok[a] && cok[b] ? A[(i0 + ti + NI * a) * LD + k0 + tk + NK * b] : T(0);
#pragma unroll
                        for (int q = 0; q < NB; ++q) {
                            if (q >= nb) break;
                            const int j = jb + q;
                            T li[TM], u[TN];
#pragma unroll
                            for (int a = 0; a < TM; ++a) li[a] = rok[a] ? A[(i0 + ti + NI * a) * LD + j] : T(0);
#pragma unroll
                            for (int b = 0; b < TN; ++b) u[b] = cok[b] ? A[j * LD + k0 + tk + NK * b] : T(0);
#pragma unroll
                            for (int a = 0; a < TM; ++a)
#pragma unroll
                                for (int b = 0; b < TN; ++b) acc[a][b] = fma(-li[a], u[b], acc[a][b]);
                        }
#pragma unroll
                        for (int a = 0; a < TM; ++a)
#pragma unroll
                            for (int b = 0; b < TN; ++b)
                                if (rok[a] && cok[b]) A[(i0 + ti + NI * a) * LD + k0 + tk + NK * b] = acc[a][b];
                    }
            __syncthreads();
        }
        if (tid == 0 && alive) g.info[e] = info;
        store_block(g.a, n, 0, n, e, g.batch, A, 0, LD, tid, S, 1, All());
        store_pivots(g.piv, n, e, g.batch, pivsh, 0, tid, S, 1);
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------
// getrs: G threads per element, each solving one column of a chunk of G columns.

// Per element: the factors (n x (n | 1)), a chunk of B (n x G), the pivots.
template <class T>
__host__ __device__ constexpr int64_t getrs_region(int n, int g) {
    return round16((int64_t(n) * pad_odd(n) + int64_t(n) * g) * int64_t(sizeof(T)) + 4 * int64_t(n));
}

template <class T>
__global__ void LU_MAXNREG getrs_kernel(const GetrsArgs<T> g) {
    extern __shared__ __align__(16) unsigned char lu_smem[];
    const int n = g.n, G = g.g, EPT = g.ept, LD = pad_odd(n);
    const int TT = G < 32 ? 32 : G;
    const int team = threadIdx.x / TT, tid = threadIdx.x % TT, teams = blockDim.x / TT;
    const int64_t rb = getrs_region<T>(n, G);
    // The team's elements' regions; the factors and the chunks are addressed from the
    // first one, element q's at q * es (rb is a whole number of T).
    unsigned char *const base = lu_smem + int64_t(team) * EPT * rb;
    const int es = int(rb / int64_t(sizeof(T)));
    T *const fac = reinterpret_cast<T *>(base);
    T *const chunk = fac + int64_t(n) * LD;
    int *const pivsh = reinterpret_cast<int *>(chunk + int64_t(n) * G);
    const int q = tid / G, loc = tid % G;
    const T *const A = fac + q * es;
    T *const x = chunk + q * es + loc;  // x(i) = x[i * G]
    const int *const piv = pivsh + q * es * int(sizeof(T) / 4);
    const int64_t per_block = int64_t(teams) * EPT;
    auto swap_x = [&](int i) {
        const int p = piv[i];
        if (p != i && p >= 0 && p < n) {
            const T t = x[i * G];
            x[i * G] = x[p * G];
            x[p * G] = t;
        }
    };

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += int64_t(gridDim.x) * per_block) {
        const int64_t e0 = eb + int64_t(team) * EPT;
        // gesv: the elements that did not factor are left alone.
        auto take = [&](int qq) { return g.info == nullptr || g.info[e0 + qq] == 0; };
        load_block<sizeof(T) == 8 ? 4 : 8>(g.a, n, 0, n, e0, g.batch, fac, es, LD, tid, TT, EPT, take);
        load_pivots(g.piv, n, e0, g.batch, pivsh, es * int(sizeof(T) / 4), tid, TT, EPT, take);
        const bool mine = q < EPT && e0 + q < g.batch && take(q);
        for (int c0 = 0; c0 < g.nrhs; c0 += G) {
            const int w = min(G, g.nrhs - c0);
            load_block<sizeof(T) == 8 ? 4 : 8>(g.b, n, c0, w, e0, g.batch, chunk, es, G, tid, TT, EPT, take);
            team_sync(TT == 32);
            if (mine && loc < w) {
                if (!g.trans) {
                    for (int i = 0; i < n; ++i) swap_x(i);
                    for (int i = 0; i < n; ++i) {  // L y = P^T b, L unit lower
                        T t = x[i * G];
                        for (int l = 0; l < i; ++l) t = fma(-A[i * LD + l], x[l * G], t);
                        x[i * G] = t;
                    }
                    for (int i = n - 1; i >= 0; --i) {  // U x = y
                        T t = x[i * G];
                        for (int l = i + 1; l < n; ++l) t = fma(-A[i * LD + l], x[l * G], t);
                        x[i * G] = t / A[i * LD + i];
                    }
                } else {
                    for (int i = 0; i < n; ++i) {  // U^T y = b
                        T t = x[i * G];
                        for (int l = 0; l < i; ++l) t = fma(-A[l * LD + i], x[l * G], t);
                        x[i * G] = t / A[i * LD + i];
                    }
                    for (int i = n - 1; i >= 0; --i) {  // L^T z = y
                        T t = x[i * G];
                        for (int l = i + 1; l < n; ++l) t = fma(-A[l * LD + i], x[l * G], t);
                        x[i * G] = t;
                    }
                    for (int i = n - 1; i >= 0; --i) swap_x(i);  // x = P z
                }
            }
            team_sync(TT == 32);
            store_block(g.b, n, c0, w, e0, g.batch, chunk, es, G, tid, TT, EPT, take);
            team_sync(TT == 32);
        }
    }
}

// ---------------------------------------------------------------------------------
// getrs, n = 9 .. 32 (f32 SoA to 59), at most kRowsMaxRhs right-hand sides (the rows
// kernel): a warp per element, its factors staged in shared memory (n x (n | 1)) by
// cp.async (warp_stage_grid), one column of B at a time in registers,
// lane l holding rows l, l + 32, ... (R = ceil(n / 32)); both solves by columns
// (solve.cuh). A SoA factor is staged by the whole block where it has several warps
// (block_stage_soa, plan_rows). The pivots become one permutation per element
// (getrs_perm), so that P^T b is a gather of b's rows on the loads and x = P z a scatter
// on the stores: no swap per column.

template <class T>
__host__ __device__ constexpr int64_t getrs_rows_slot(int n) {
    return round16(int64_t(n) * pad_odd(n) * int64_t(sizeof(T)));
}

// getrs's pivots as one permutation of element e, lane l holding perm(l + 32 k) in
// perm[k]: the row swaps i <-> p_i, i = 0 .. n - 1, applied in turn to 0 .. n - 1 (a
// pivot outside 0 .. n - 1 is no swap, as in the chunked kernel), a shuffle each, so
// that P^T b is a gather of b's rows (x_r = b_perm(r)) and x = P z a scatter (x_perm(r)
// = z_r). Rows past n, and every row of an element that is not live, keep perm(r) = r.
template <int R>
__device__ __forceinline__ void getrs_perm(const Piv &piv, int64_t e, int n, bool live, int lane, int (&perm)[R]) {
    int pv[R];
#pragma unroll
    for (int k = 0; k < R; ++k) {
        const int r = lane + 32 * k;
        pv[k] = live && r < n ? pivot0(piv.p[piv.soa ? r * piv.stride + e : e * n + r]) : r;
        perm[k] = r;
    }
    if (!live) return;
#pragma unroll
    for (int ki = 0; ki < R; ++ki)
        for (int il = 0; il < 32; ++il) {
            const int i = 32 * ki + il;
            if (i >= n) break;  // uniform
            const int p = __shfl_sync(kFull, pv[ki], il);
            if (p == i || p < 0 || p >= n) continue;  // uniform
            // Row p's register picked by bit tests (an index into perm would put it in
            // local memory).
            const int hit = 1 << (p / 32), mine = lane == p % 32 ? hit : 0;
            int at_p = perm[0];
#pragma unroll
            for (int k = 1; k < R; ++k) at_p = (hit >> k) & 1 ? perm[k] : at_p;
            const int vi = __shfl_sync(kFull, perm[ki], il), vp = __shfl_sync(kFull, at_p, p % 32);
            if (lane == il) perm[ki] = vp;
#pragma unroll
            for (int k = 0; k < R; ++k) perm[k] = (mine >> k) & 1 ? vi : perm[k];
        }
}

template <class T, int R>
__global__ void LU_MAXNREG getrs_rows_kernel(const GetrsArgs<T> g) {
    extern __shared__ __align__(16) unsigned char lu_smem[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32, n = g.n, LD = pad_odd(n);
    const int64_t slot = getrs_rows_slot<T>(n) / int64_t(sizeof(T));
    T *const base = reinterpret_cast<T *>(lu_smem), *const A = base + warp * slot;
    const Walker w0(lane, 32, n, n), wb(threadIdx.x, blockDim.x, warps, n);  // AoS: the warp's; SoA: the block's
    auto dst = [&](int r, int c) { return g.a.row_major ? r * LD + c : c * LD + r; };
    const bool coop = g.a.soa && warps > 1;  // SoA by the block where it has several warps (as potrs)
    for (int64_t eb = int64_t(blockIdx.x) * warps; eb < g.batch; eb += int64_t(gridDim.x) * warps) {  // block-uniform
        const int64_t e = eb + warp;
        const bool live = e < g.batch && !(g.info && g.info[e] != 0);  // gesv: elements that factored
        rows_stage(coop, live, base, slot, g.a.p, g.a.ld, g.a.stride, eb, g.batch, n, wb, dst, [&] {
            warp_stage_grid(A, g.a.p + (g.a.soa ? e : e * g.a.stride), g.a.ld, g.a.soa ? g.a.stride : 1, w0, dst);
        });
        // perm while the factors are in flight.
        int perm[R];
        getrs_perm<R>(g.piv, e, n, live, lane, perm);
        copy_async_wait();
        if (coop)
            __syncthreads();
        else
            __syncwarp();
        if (!live) continue;
        T inv[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int r = lane + 32 * k;
            inv[k] = r < n ? T(1) / A[r * LD + r] : T(1);
        }
        for (int col = 0; col < g.nrhs; ++col) {
            T x[R];
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const int r = lane + 32 * k, src = g.trans ? r : perm[k];
                x[k] = r < n ? g.b.p[g.b.row_major ? g.b.at(src, col, e) : g.b.at(col, src, e)] : T(0);
            }
            if (!g.trans) {  // L y = P^T b (L unit lower), then U x = y
                warp_lower_solve<T, R, true>(x, inv, n, lane, [&](int r, int j) { return A[r * LD + j]; });
                warp_upper_solve<T, R, false>(x, inv, n, lane, [&](int r, int j) { return A[r * LD + j]; });
            } else {  // U^T y = b, then L^T z = y, x = P z
                warp_lower_solve<T, R, false>(x, inv, n, lane, [&](int r, int j) { return A[j * LD + r]; });
                warp_upper_solve<T, R, true>(x, inv, n, lane, [&](int r, int j) { return A[j * LD + r]; });
            }
            __syncwarp();  // every lane's loads of this column before any lane's stores (gather, scatter)
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const int r = lane + 32 * k, to = g.trans ? perm[k] : r;
                if (r < n) g.b.p[g.b.row_major ? g.b.at(to, col, e) : g.b.at(col, to, e)] = x[k];
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// getrs, n > 32 (but f32 SoA n <= 59), at most kRowsMaxRhs right-hand sides (the stream
// kernel, stream.cuh): M = A for op N (L unit, U scaled), A^T for op T (U^T scaled, L^T
// unit); the pivots one permutation (getrs_perm), gathered on the loads for op N and
// scattered on the stores for op T.
template <class T>
struct GetrsStream {
    // Every field a reference into the kernel's __grid_constant__ parameter: read from the
    // parameter bank where used, not held in registers.
    const GetrsArgs<T> &g;
    const T *const &p;
    const int64_t &ld, &stride;
    const bool &soa;
    T *const &b;
    __device__ explicit GetrsStream(const GetrsArgs<T> &a)
        : g(a), p(a.a.p), ld(a.a.ld), stride(a.a.stride), soa(a.a.soa), b(a.b.p) {}
    GetrsStream(const GetrsArgs<T> &&) = delete;  // never of a temporary
    // M's columns contiguous where A is column-major and not transposed or row-major and
    // transposed; both solves read the same M.
    __device__ bool colm(bool) const { return g.a.row_major == g.trans; }
    __device__ bool scale(bool up) const { return up != g.trans; }  // L has a unit diagonal
    __device__ bool live(int64_t e) const { return e < g.batch && !(g.info && g.info[e] != 0); }  // gesv: factored
    template <int R>
    __device__ void begin(int64_t e, bool live, int lane, int (&perm)[R]) const {
        getrs_perm<R>(g.piv, e, g.n, live, lane, perm);
    }
    __device__ bool gather() const { return !g.trans; }
    __device__ bool scatter() const { return g.trans; }
    __device__ int64_t b_at(int row, int col, int64_t e) const {
        return g.b.row_major ? g.b.at(row, col, e) : g.b.at(col, row, e);
    }
};

template <class T, int R, int NR>
__global__ void LU_MAXNREG getrs_stream_kernel(const __grid_constant__ GetrsArgs<T> g) {
    extern __shared__ __align__(16) unsigned char lu_smem[];
    stream_solves<T, R, NR>(GetrsStream<T>(g), g.n, g.nrhs, g.batch, reinterpret_cast<T *>(lu_smem));
}

// ---------------------------------------------------------------------------------
// Kernel selection: a function of the problem's shape and type, never of its batch.

const char *tname(int32_t dtype) { return dtype == APAIRS_DTYPE_F64 ? "f64" : "f32"; }

template <class T, int N>
KernelSpec getrf_thread(bool soa) {
    KernelSpec k;
    k.fn = soa ? reinterpret_cast<const void *>(&getrf_thread_kernel<T, N, true>)
               : reinterpret_cast<const void *>(&getrf_thread_kernel<T, N, false>);
    k.unit_shared = soa ? 0 : ThreadShape<T, N>::TEAM_BYTES;
    return k;
}

// The thread kernel of size n, for n <= N.
template <class T, int N>
KernelSpec getrf_thread_for(int n, bool soa) {
    if constexpr (N == 1)
        return getrf_thread<T, 1>(soa);
    else
        return n == N ? getrf_thread<T, N>(soa) : getrf_thread_for<T, N - 1>(n, soa);
}

template <class T, int C, int CR>
KernelSpec getrf_line() {
    using Shape = LineShape<T, C, CR>;
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&getrf_line_kernel<T, C, CR>);
    k.group = Shape::G;
    k.unit_threads = Shape::TT;
    k.unit_elements = Shape::E;
    k.unit_shared = Shape::TEAM_BYTES;
    return k;
}

// The f64 AoS warp kernels' shared-memory carveout: 164 KB still holds the 16 warps an
// SM that their registers allow (C = 32: 16 slots of 9,248 bytes), and leaves 92 KB of L1
// to the lines of each warp's element staging by 8-byte cp.async, where the largest
// carveout left 28 KB (H200 run 422, three rounds: f64 n = 32 0.286-0.290 -> 0.276-0.278
// ms, n = 16 0.228-0.230 -> 0.226-0.228; at 196 KB unchanged; n = 17..31 untimed). f32
// unchanged, not asked.
constexpr int64_t kGetrfAosSharedPerSm = 164 * 1024;
static_assert(16 * (WarpShape<double, 32, false>::TEAM_BYTES + 1024) <= kGetrfAosSharedPerSm,
              "16 warps of f64 C = 32 an SM (1 KB reserved a block, sm_80 and later)");

template <class T, int C, bool SOA>
KernelSpec getrf_warp() {
    using Shape = WarpShape<T, C, SOA>;
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&getrf_warp_kernel<T, C, SOA>);
    k.group = Shape::G;
    k.unit_threads = 32;
    k.unit_elements = Shape::NS;
    k.unit_shared = Shape::TEAM_BYTES;
    if (!SOA && sizeof(T) == 8) k.shared_per_sm = kGetrfAosSharedPerSm;
    return k;
}

// n from 9 (past every thread-per-element size) to 32; SoA C = 16, 32: the line kernel
// where its team fits `max_shared` bytes.
template <class T, int C>
KernelSpec getrf_warp_c(bool soa, int64_t max_shared) {
    if constexpr (C != 24) {
        // The largest team that fits a block (f64 C = 32: the chunk of 16 rows, else of 8).
        if (soa && LineShape<T, C, 16>::TEAM_BYTES <= max_shared) return getrf_line<T, C, 16>();
        if constexpr (LineShape<T, C, 16>::PF)  // (PF does not depend on the chunk: no other shape instantiated)
            if (soa && LineShape<T, C, 8>::TEAM_BYTES <= max_shared) return getrf_line<T, C, 8>();
    }
    return soa ? getrf_warp<T, C, true>() : getrf_warp<T, C, false>();
}

template <class T>
KernelSpec getrf_warp_for(int n, bool soa, int64_t max_shared) {
    const int c = warp_columns(n);
    return c == 16 ? getrf_warp_c<T, 16>(soa, max_shared)
           : c == 24 ? getrf_warp_c<T, 24>(soa, max_shared)
                     : getrf_warp_c<T, 32>(soa, max_shared);
}

// n > 32: the rows kernel where three of its slots fit a block's shared memory (three
// warps an SM), below the panel kernel's sizes (f64 n < 64, f32 n <= 64; H200 run 318:
// f64 n = 64 rows 1.110 ms, panel 0.901; f32 n = 64 rows 1.181, panel 1.190; n = 128 the
// panel 2.53 ms (f64) and 1.93 (f32) against the block kernel's 4.56 and the rows
// kernel's 3.39; the sizes between were not timed).
template <class T>
bool getrf_rows(int n, int64_t max_shared) {
    return n > 32 && 3 * getrf_rows_slot<T>(n) <= max_shared;
}

template <class T>
const void *getrf_panel_fn(int R) {
    return R <= 2   ? reinterpret_cast<const void *>(&getrf_panel_kernel<T, 2>)
           : R == 3 ? reinterpret_cast<const void *>(&getrf_panel_kernel<T, 3>)
                    : reinterpret_cast<const void *>(&getrf_panel_kernel<T, 4>);
}

KernelSpec getrf_kernel_for(int32_t dtype, int64_t n64, bool soa, const DeviceLimits &lim) {
    const int64_t max_shared = lim.max_shared_per_block;
    // The panel kernel's least n (from 33 below it: the rows kernel).
    const int panel_min = dtype == APAIRS_DTYPE_F64 ? 64 : 65;
    const bool f64 = dtype == APAIRS_DTYPE_F64;
    const int n = int(n64), thread_max = f64 ? kThreadMaxN<double> : kThreadMaxN<float>;
    KernelSpec k;
    if (n <= thread_max) {
        k = f64 ? getrf_thread_for<double, kThreadMaxN<double>>(n, soa)
                : getrf_thread_for<float, kThreadMaxN<float>>(n, soa);
        k.model = Model::ThreadPerElement;
        k.group = 1;
        k.unit_threads = 32;
        k.unit_elements = 32;
        k.name = fmt::format("getrf_thread<{}, n={}>", tname(dtype), n);
        k.why = fmt::format("n = {} (at most {}): one thread factors a whole element, its {} entries in registers, "
                            "{}",
                            n, thread_max, n * n,
                            soa ? "loaded and stored by the thread itself (a warp's loads span 32 consecutive elements)"
                                : "each warp staging its 32 elements through shared memory by cp.async, whole "
                                  "elements or rows per load");
    } else if (n <= 32) {
        k = f64 ? getrf_warp_for<double>(n, soa, max_shared) : getrf_warp_for<float>(n, soa, max_shared);
        k.model = Model::WarpGroup;
        k.name = fmt::format("getrf_warp<{}, {} lanes per element>", tname(dtype), k.group);
        k.why = fmt::format("n = {} (at most 32): {} lanes per element, one row each in registers, staged by "
                            "cp.async through shared memory ({}), the pivot found by warp reductions and the pivot row "
                            "shared through shared memory",
                            n, k.group,
                            !soa ? "by each warp"
                            : k.unit_threads > 32
                                ? fmt::format("by teams of {} warps, {} consecutive elements at once, each entry "
                                              "copied as one run",
                                              k.unit_threads / 32, k.unit_elements)
                                : fmt::format("by each warp, groups of {} consecutive elements", k.unit_elements));
    } else if (n < panel_min && (f64 ? getrf_rows<double>(n, max_shared) : getrf_rows<float>(n, max_shared))) {
        // n = 33 .. 64: two rows a lane.
        k = f64 ? rows_kernel_spec(reinterpret_cast<const void *>(&getrf_rows_kernel<double, 2>),
                                   getrf_rows_slot<double>(n))
                : rows_kernel_spec(reinterpret_cast<const void *>(&getrf_rows_kernel<float, 2>),
                                   getrf_rows_slot<float>(n));
        k.name = fmt::format("getrf_rows<{}, 32 lanes per element, 2 rows each>", tname(dtype));
        k.why = fmt::format("n = {} (above 32, below the panel kernel's sizes): a warp per element factors it "
                            "right-looking in shared memory ({} bytes), 2 rows a lane, the pivot by a warp "
                            "reduction, the rows' updates without barriers",
                            n, k.unit_shared);
    } else {
        // S: the elements an SM's shared memory holds, times S threads, within the 512 that
        // its registers hold at 128 a thread (H200 run 318: f64 n = 128, one an SM, 512
        // threads 2.53 ms against 2.61 at 256; f64 n = 64, six an SM, 64 threads 0.90
        // against 1.05 at 128; f32 n = 128, three an SM, 128 threads 1.93 against 2.48 at 256).
        const int64_t slot = f64 ? getrf_rows_slot<double>(n) : getrf_rows_slot<float>(n);
        const int64_t per_sm = std::max<int64_t>(1, lim.shared_per_sm / (slot + lim.reserved_shared_per_block));
        int S = 64;
        while (S < 512 && 2 * S * per_sm <= 512) S *= 2;
        const int R = (n + 31) / 32;
        k.fn = f64 ? getrf_panel_fn<double>(R) : getrf_panel_fn<float>(R);
        k.model = Model::BlockPerElement;
        k.group = S;
        k.sub = S;
        k.unit_threads = S;
        k.unit_elements = 1;
        k.unit_shared = slot;
        k.name = fmt::format("getrf_panel<{}, {} threads per element, panels of {} columns>", tname(dtype), S,
                             f64 ? kPanel<double> : kPanel<float>);
        k.why = fmt::format("n = {} ({}): a team of {} threads per element factors it in shared memory ({} bytes) "
                            "in panels, one warp the panel's columns, the team the rows of U right of it and the "
                            "trailing matrix in register tiles",
                            n,
                            n >= panel_min ? fmt::format("at least {}", panel_min)
                                           : std::string("three of the rows kernel's slots do not fit a block"),
                            S, slot);
    }
    return k;
}

// G and the elements per team of getrs: G = nrhs rounded up to a power of two (at most
// 128); a team holds max(1, 32 / G) elements, each its factors, pivots and G columns of
// B. Where that exceeds 96 KiB: below 32 grow G (fewer elements per team), above 8 shrink
// it with one element per team (fewer columns per chunk; the chunk loop takes the rest),
// so that n = 128 in f64 (132 KiB of factors) still fits an A100's or H100's block.
struct GetrsShape {
    int g, ept;
};

GetrsShape getrs_shape(int32_t dtype, int n, int nrhs) {
    const bool f64 = dtype == APAIRS_DTYPE_F64;
    auto region = [&](int g) { return f64 ? getrs_region<double>(n, g) : getrs_region<float>(n, g); };
    constexpr int64_t kBudget = 96 * 1024;
    int g = 1;
    while (g < nrhs && g < 128) g *= 2;
    while (g < 32 && int64_t(32 / g) * region(g) > kBudget) g *= 2;
    int ept = std::max(1, 32 / g);
    if (ept == 1)
        while (g > 8 && region(g) > kBudget) g /= 2;
    return {g, ept};
}

// A warp an element (the rows kernel, or above 32 the stream kernel: getrs_stream) for n
// > 8 with at most kRowsMaxRhs right-hand sides (launch.cuh); smaller elements and more
// columns take the chunked kernel (G threads per element, a column each).
bool getrs_rows(int64_t n, int64_t nrhs) { return n > 8 && nrhs <= kRowsMaxRhs; }

// The rows kernel: n <= 32, or (f32 SoA) 33 .. 59 (getrs_stream).
template <class T>
KernelSpec getrs_rows_for(int n) {
    return rows_kernel_spec(n <= 32 ? reinterpret_cast<const void *>(&getrs_rows_kernel<T, 1>)
                                    : reinterpret_cast<const void *>(&getrs_rows_kernel<T, 2>),
                            getrs_rows_slot<T>(n));
}

template <class T, int R>
const void *getrs_stream_fn(int nrhs) {
    return nrhs == 1 ? reinterpret_cast<const void *>(&getrs_stream_kernel<T, R, 1>)
                     : reinterpret_cast<const void *>(&getrs_stream_kernel<T, R, kStreamRhs>);
}
template <class T>
KernelSpec getrs_stream_for(int n, int nrhs, bool soa) {
    const int R = (n + 31) / 32;
    KernelSpec k = rows_kernel_spec(R <= 2 ? getrs_stream_fn<T, 2>(nrhs) : R == 3 ? getrs_stream_fn<T, 3>(nrhs)
                                                                               : getrs_stream_fn<T, 4>(nrhs),
                                    stream_slot<T>());
    k.shared_per_sm = stream_shared_per_sm(soa, sizeof(T) == 8, n, nrhs);
    return k;
}

// The stream kernel for n > 32 but f32 SoA n <= 59, the rows kernel below (H200 run 327,
// AoS / SoA: f64 n = 128 0.205 / 0.373 ms against the rows kernel's 0.731 / 1.234, n = 64
// 0.200 / 0.370 against 0.253 / 0.403; f32 n = 128 0.219 / 0.393 against 0.468 / 1.183,
// n = 64 0.253 / 0.453 against 0.274 / 0.397; n = 16 and 32 the stream kernel slower by
// 2.2-5.3x in run 325: one tile's chain an element, little to overlap). f32 SoA, with the
// stream kernel's carveout (kStreamSoaSharedPerSm; run 345, rows / stream ms at the
// bench's batch and 4x it): n = 48 0.286 / 0.409, 1.113 / 1.599; n = 56 0.293 / 0.374,
// 1.159 / 1.434; n = 60 0.414 / 0.356, 1.501 / 1.361; n = 64 0.395 / 0.316. The rows
// kernel's jump at 60 is its plan's: blocks of 8 warps (whole sectors) through n = 59,
// of 4 warps (runs of 16 bytes) from 60 (run 350, a probe, rows ms: n = 57 0.263, 58
// 0.311, 59 0.263; the stream kernel at 60 0.330).
bool getrs_stream(int32_t dtype, int64_t n, bool soa) {
    return n > 32 && !(dtype == APAIRS_DTYPE_F32 && soa && n <= 59);
}

KernelSpec getrs_kernel_for(int32_t dtype, int64_t n64, int64_t nrhs64, bool soa) {
    const int n = int(n64), nrhs = int(nrhs64);
    if (getrs_rows(n, nrhs) && getrs_stream(dtype, n, soa)) {
        KernelSpec k = dtype == APAIRS_DTYPE_F64 ? getrs_stream_for<double>(n, nrhs, soa)
                                                 : getrs_stream_for<float>(n, nrhs, soa);
        const int R = (n + 31) / 32, nr = nrhs == 1 ? 1 : kStreamRhs;
        k.name = fmt::format("getrs_stream<{}, 32 lanes per element, {} rows each, {} column{} of B at a time, "
                             "a ring of {} tiles>",
                             tname(dtype), R, nr, nr == 1 ? "" : "s", kStreamStages);
        k.why = fmt::format("nrhs = {} (at most {}), n = {} (above 32): a warp per element, the pivots turned into "
                            "one permutation, the right-hand sides in registers ({} rows a lane), both triangular "
                            "solves by {} x {} tiles of the factors streamed through a ring of {} in shared memory "
                            "({} bytes), their diagonal tiles by columns with the solved entry broadcast by a shuffle",
                            nrhs, kRowsMaxRhs, n, R, kTile, kTile, kStreamStages, k.unit_shared);
        return k;
    }
    if (getrs_rows(n, nrhs)) {
        KernelSpec k = dtype == APAIRS_DTYPE_F64 ? getrs_rows_for<double>(n) : getrs_rows_for<float>(n);
        const int R = (n + 31) / 32;
        k.name =
            fmt::format("getrs_rows<{}, 32 lanes per element, {} row{} each>", tname(dtype), R, R == 1 ? "" : "s");
        k.why = fmt::format("nrhs = {} (at most {}), n = {} (above 8): a warp per element, its factors staged in "
                            "shared memory ({} bytes), the pivots turned into one permutation, one column of B at a "
                            "time in registers ({} row{} a lane), both triangular solves by columns with the solved "
                            "entry broadcast by a shuffle",
                            nrhs, kRowsMaxRhs, n, k.unit_shared, R, R == 1 ? "" : "s");
        return k;
    }
    const GetrsShape s = getrs_shape(dtype, n, nrhs);
    const int64_t rb = dtype == APAIRS_DTYPE_F64 ? getrs_region<double>(n, s.g) : getrs_region<float>(n, s.g);
    KernelSpec k;
    k.fn = dtype == APAIRS_DTYPE_F64 ? reinterpret_cast<const void *>(&getrs_kernel<double>)
                                     : reinterpret_cast<const void *>(&getrs_kernel<float>);
    k.model = s.g == 1 ? Model::ThreadPerElement : s.g <= 32 ? Model::WarpGroup : Model::BlockPerElement;
    k.group = s.g;
    k.unit_threads = std::max(32, s.g);
    k.unit_elements = s.ept;
    k.unit_shared = int64_t(s.ept) * rb;
    k.name = fmt::format("getrs<{}, {} threads per element>", tname(dtype), s.g);
    k.why = fmt::format("nrhs = {}: {} thread{} per element, each solving {} right-hand side{} at a time in shared "
                        "memory against the element's staged factors and pivots (n = {}){}",
                        nrhs, s.g, s.g == 1 ? "" : "s", s.g == 1 ? "one" : "one of a chunk of",
                        s.g == 1 ? "" : "s", n,
                        nrhs > s.g ? fmt::format(", {} chunks of {} columns", (nrhs + s.g - 1) / s.g, s.g) : "");
    return k;
}

template <class T>
Mat<T> mat_of(const Matrix &m, T *p) {
    return Mat<T>{p, m.ld, m.stride, m.soa, m.row_major};
}

Piv piv_of(const Matrix &m, const int32_t *p) {
    // getrs reads the pivots through the same struct: the kernels never write them there.
    return Piv{const_cast<int32_t *>(p), m.stride, m.soa};
}

// Blocks for `batch` elements: the planned grid, or fewer where a launch gets fewer
// elements than planned (a chunk of a staged batch).
dim3 grid_for(const CudaConfig &cfg, int64_t batch, int64_t per_block) {
    return dim3(unsigned(std::max<int64_t>(1, std::min(cfg.grid, (batch + per_block - 1) / per_block))));
}

void queue(const CudaConfig &cfg, void *stream, int64_t batch, int64_t per_block, void *args, const char *what) {
    void *params[] = {args};
    launch_raw(cfg.kernel, grid_for(cfg, batch, per_block), dim3(unsigned(cfg.block_threads)), params,
               cfg.dynamic_shared, static_cast<cudaStream_t>(stream), what, cfg.carveout);
}

// Elements per block of the planned getrf kernel: the thread kernel's threads, the warp
// kernel's warps times the elements each stages (warp_staged), the rows kernel's warps.
int64_t getrf_per_block(const CudaConfig &cfg, const GetrfProblem &pb) {
    if (pb.n > 32 && cfg.model == Model::WarpGroup) return cfg.block_threads / 32;  // the rows kernel
    if (cfg.model == Model::WarpGroup)
        return int64_t(cfg.block_threads / 32) *
               warp_staged(warp_columns(int(pb.n)), pb.dtype == APAIRS_DTYPE_F64 ? 8 : 4, pb.a.soa);
    return cfg.block_threads / cfg.group;
}

template <class T>
void launch_getrf_typed(const GetrfProblem &pb, const CudaConfig &cfg, void *stream, T *A, int32_t *ipiv,
                        int32_t *info) {
    GetrfArgs<T> g;
    g.a = mat_of(pb.a, A);
    g.piv = piv_of(pb.piv, ipiv);
    g.info = info;
    g.n = int(pb.n);
    g.sub = cfg.group;
    g.batch = pb.batch;
    queue(cfg, stream, pb.batch, getrf_per_block(cfg, pb), &g, "batched getrf kernel launch");
}

template <class T>
void launch_getrs_typed(const GetrsProblem &pb, const CudaConfig &cfg, void *stream, const T *A,
                        const int32_t *ipiv, T *B, const int32_t *info) {
    const GetrsShape s = getrs_shape(pb.dtype, int(pb.n), int(pb.nrhs));
    GetrsArgs<T> g;
    g.a = mat_of(pb.a, A);
    g.piv = piv_of(pb.piv, ipiv);
    g.b = mat_of(pb.b, B);
    g.info = info;
    g.n = int(pb.n);
    g.nrhs = int(pb.nrhs);
    g.g = cfg.group;
    g.ept = getrs_rows(pb.n, pb.nrhs) ? 1 : s.ept;  // the rows and stream kernels: an element a warp
    g.trans = pb.trans;
    g.batch = pb.batch;
    const int64_t per_block = int64_t(cfg.block_threads / std::max(32, cfg.group)) * g.ept;
    queue(cfg, stream, pb.batch, per_block, &g, "batched getrs kernel launch");
}

GetrsProblem getrs_of(const GesvProblem &pb) {
    GetrsProblem s;
    s.dtype = pb.dtype, s.trans = false, s.n = pb.n, s.nrhs = pb.nrhs;
    s.a = pb.a, s.piv = pb.piv, s.b = pb.b, s.batch = pb.batch;
    return s;
}

GetrfProblem getrf_of(const GesvProblem &pb) {
    GetrfProblem f;
    f.dtype = pb.dtype, f.n = pb.n, f.a = pb.a, f.piv = pb.piv, f.info = pb.info, f.batch = pb.batch;
    return f;
}

}  // namespace

CudaConfig plan_getrf_cuda(const GetrfProblem &pb, int device, double occupancy_target) {
    // SoA staged per warp (C = 24, groups of 16 bytes; C = 16, 32 where the line kernel's
    // team does not fit a block): a 32-byte sector's elements in warps of one block, so
    // that the sector's other parts are read through the same L1 at about the same time.
    // The line kernel's unit is already a team of 8 warps.
    require_device(device);
    const KernelSpec k = getrf_kernel_for(pb.dtype, pb.n, pb.a.soa, device_limits(device));
    const std::string what = fmt::format("batched getrf n={}", pb.n);
    if (pb.n > 32 && k.model == Model::WarpGroup)  // the rows kernel
        return plan_rows(k, pb.a.soa, int64_t(pb.elem_size()), pb.batch, device, occupancy_target, what);
    const int tb = pb.dtype == APAIRS_DTYPE_F64 ? 8 : 4;
    const int units_min = k.model != Model::WarpGroup || !pb.a.soa || k.unit_threads != 32
                              ? 1
                              : std::max(1, 32 / (int(k.unit_elements) * tb));
    return plan_kernel(k, pb.batch, device, occupancy_target, units_min, what);
}

void launch_getrf_cuda(const GetrfProblem &pb, const CudaConfig &cfg, void *stream, void *A, int32_t *ipiv,
                       int32_t *info) {
    DeviceScope scope(cfg.device);
    if (pb.dtype == APAIRS_DTYPE_F64)
        launch_getrf_typed(pb, cfg, stream, static_cast<double *>(A), ipiv, info);
    else
        launch_getrf_typed(pb, cfg, stream, static_cast<float *>(A), ipiv, info);
}

CudaConfig plan_getrs_cuda(const GetrsProblem &pb, int device, double occupancy_target) {
    const KernelSpec k = getrs_kernel_for(pb.dtype, pb.n, pb.nrhs, pb.a.soa);
    const std::string what = fmt::format("batched getrs n={} nrhs={}", pb.n, pb.nrhs);
    if (getrs_rows(pb.n, pb.nrhs))
        return plan_rows(k, pb.a.soa, int64_t(pb.elem_size()), pb.batch, device, occupancy_target, what);
    return plan_kernel(k, pb.batch, device, occupancy_target, 1, what);
}

void launch_getrs_cuda(const GetrsProblem &pb, const CudaConfig &cfg, void *stream, const void *A,
                       const int32_t *ipiv, void *B) {
    DeviceScope scope(cfg.device);
    if (pb.dtype == APAIRS_DTYPE_F64)
        launch_getrs_typed(pb, cfg, stream, static_cast<const double *>(A), ipiv, static_cast<double *>(B), nullptr);
    else
        launch_getrs_typed(pb, cfg, stream, static_cast<const float *>(A), ipiv, static_cast<float *>(B), nullptr);
}

GesvConfig plan_gesv_cuda(const GesvProblem &pb, int device, double occupancy_target) {
    GesvConfig c;
    c.getrf = plan_getrf_cuda(getrf_of(pb), device, occupancy_target);
    c.getrs = plan_getrs_cuda(getrs_of(pb), device, occupancy_target);
    return c;
}

void launch_gesv_cuda(const GesvProblem &pb, const GesvConfig &cfg, void *stream, void *A, int32_t *ipiv, void *B,
                      int32_t *info) {
    DeviceScope scope(cfg.getrf.device);
    const GetrsProblem s = getrs_of(pb);
    if (pb.dtype == APAIRS_DTYPE_F64) {
        launch_getrf_typed(getrf_of(pb), cfg.getrf, stream, static_cast<double *>(A), ipiv, info);
        launch_getrs_typed(s, cfg.getrs, stream, static_cast<const double *>(A), ipiv, static_cast<double *>(B), info);
    } else {
        launch_getrf_typed(getrf_of(pb), cfg.getrf, stream, static_cast<float *>(A), ipiv, info);
        launch_getrs_typed(s, cfg.getrs, stream, static_cast<const float *>(A), ipiv, static_cast<float *>(B), info);
    }
}

}  // namespace apairs::batched
