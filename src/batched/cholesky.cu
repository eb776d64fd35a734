// CUDA engine of the batched Cholesky family: potrf (A_e = L_e L_e^T, or U_e^T U_e) and
// potrs (A_e X_e = B_e from the factor).
//
// Every kernel works on the logical lower factor L: an upper factor U = L^T is the lower
// one with the fast-grid coordinates swapped, and so is a column-major lower one. The
// fast grid is the stored matrix in memory order (rows of ld-strided contiguous runs);
// logical L(i, j), i >= j, is fast-grid (i, j), or (j, i) when `swap`. The other strict
// triangle is never read nor written (the staging walks skip it without loading).
//
// The thread and warp kernels stage through a triangle map built once per block at the
// front of dynamic shared memory: the stored triangle's entries in memory order, each
// with its 32-bit fast-grid index and its packed offset, so that a staging loop visits
// only the triangle (n (n + 1) / 2 positions, not n^2) at a few instructions each. They
// take a matrix whose fast-grid indices fit in 31 bits; the block kernels (64-bit walks)
// take the rest.
//
// Elements are handled by teams: a team is max(32, G) threads owning max(1, 32 / G)
// elements, G threads per element. A team copies its elements' operands into its own
// slice of shared memory with loads in memory order (AoS: element by element, row by
// row; SoA: entry by entry, the team's elements of an entry together: whole sectors
// either way), computes, and copies the results back in memory order. A team of one warp
// synchronises with __syncwarp only; a larger team (a block-per-element sub-block) with
// __syncthreads, and the blocks' element loop is block-uniform so every thread meets the
// same barriers. The element loop is grid-stride over a resident grid.
//
//   potrf, n <= 8: thread-per-element (G = 1). n is a template parameter: the packed
//     triangle (n (n + 1) / 2 values) lives in registers, fully unrolled, left-looking.
//     Each warp stages its 32 elements by cp.async into two slots: the next 32 elements'
//     loads are in flight while these compute. AoS f64 n = 3 .. 8 takes the synchronous
//     staging instead (the n x n grids walked in memory order, 8 (n < 6) or 16 loads a
//     lane in flight, one slot): measured 83 % / 70 % of the bound at n = 4 / 8 (with 8)
//     where the cp.async kernel gave 56 % / 68 %; so does AoS f32 n = 8 (the cp.async
//     kernel: 63 %), its loads by the grid walk as well. The cp.async kernel's AoS
//     copy-out (n >= 3) walks the grids in memory order too; at n = 4 and 8 both kernels'
//     AoS copy-outs take the grid walk (per-lane offsets worked out once). Each column is
//     scaled by the pivot's reciprocal, as in the warp kernels.
//   potrf, 8 < n <= 32: warp-group, the rows of L in registers, C = 16, 24 or 32 (n
//     rounded up). C = 16 and 32: f64 C / 2 lanes per element (four or two elements a
//     warp), lane r holding rows r and C - 1 - r (every lane C + 1 entries); f32 C / 4
//     lanes (eight or four elements a warp), rows r, C / 2 - 1 - r, C / 2 + r and
//     C - 1 - r (2 (C + 1) entries); C = 24: 32 lanes, lane r holding row r.
//     Right-looking, each scaled column through a shared buffer (two in turn: one
//     __syncwarp a column) read back with 16-byte loads; the same sums in the same order.
//     Branch-free columns: the pivot's reciprocal taken once and multiplied (other bits
//     than the dividing block kernel, within the same bound), the next pivot by a shuffle
//     ahead of the column's update, rows n .. C - 1 an identity block instead of a test
//     of n. The warp kernels stage with cp.async into two slots per element (a warp's
//     element slots padded apart over the banks): the next element's loads are in flight
//     while this one computes. SoA operands are staged and copied out by the whole block
//     (a warp's accesses of an entry span the block's consecutive elements: whole
//     sectors), with a __syncthreads before each; their plan grows the block to runs of
//     64 bytes (plan_warp_soa). f64 AoS of n = 25 .. 32 whose base, ld and stride lie on
//     the 16-byte grid, without swap, is staged and copied out in whole 16-byte pieces
//     (the piece map; rows padded to whole pieces in shared memory); the other AoS of C =
//     32 (f32; f64 swapped or off that grid) by the row walk (a warp instruction a row of
//     an element, no map); the rest an entry at a time through the triangle map.
//   potrf, n > 32 (the rows kernel): a warp per element, its packed triangle staged in
//     shared memory as the potrs rows kernel's (below; the copy-out walks the triangle at
//     every n) and factored there left-looking, lane l owning rows l, l + 32, ...
//     Columns go J = 4 at a time: every row's J sums over the finished columns share one
//     load of its entry (J broadcast loads of rows j .. j + J - 1 beside it; packed rows
//     l + 32 k fall in distinct banks, as triangular numbers are distinct mod 32), then
//     the group's columns finish one by one with shuffles. Each entry's sum runs p = 0 ..
//     j - 1 in order with fma and is divided by the pivot: the bits of a plain
//     left-looking loop with fma (a host emulation checked n = 1 .. 128); the host engine
//     rounds its products separately, so the two may differ in the last bits, within the
//     same bound. It also takes a matrix whose indices pass 32 bits (the map's limit) at
//     any n, but for the synchronous thread kernel's shapes.
//   potrs, nrhs = 1, n <= 8: thread-per-element, the factor and x in registers, staged
//     as potrf's thread kernel (two slots, cp.async).
//   potrs, nrhs = 1, 8 < n <= 32: warp-group, 16 or 32 lanes per element, lane r
//     holding x_r; both solves by columns, the solved entry broadcast by a shuffle.
//     SoA operands (either) staged by the whole block, as potrf's warp kernels, and
//     planned the same way (plan_warp_soa: runs of 64 bytes an entry), but for f64 at
//     n > 16: blocks of 16 warps (128-byte runs) under a 164 KB shared-memory carveout.
//     Both nrhs = 1 kernels multiply by the diagonal's reciprocals (taken once per
//     element) where the others divide: other bits, the same backward stability.
//   potrs, n > 32, nrhs <= 8 (the rows kernel): a warp per element, its packed factor
//     staged in shared memory (SoA: by the whole block, runs of its elements), one column
//     of B at a time in registers, lane l holding rows l, l + 32, ...; both solves by
//     columns (solve.cuh, shared with getrs). nrhs = 1 past n = 96: the stream kernel
//     (stream.cuh, shared with getrs), the same solves with the factor streamed through
//     two 32 x 32 tiles a warp instead of staged whole: the same bits.
//   potrs otherwise: G = nrhs rounded up to a power of two, at most 128;
//     thread-per-element (G = 1), warp-group (2..32) or block-per-element (64, 128).
//     The factor's triangle is staged once per element, B in chunks of G columns; each
//     thread solves one column (L y = b, then L^T x = y) in shared memory.
//
// Failures (info[e] = j + 1 when the pivot of column j is not > 0, NaN included) stop
// only that element: its threads skip the remaining work but keep meeting the barriers,
// and the copy-out writes only the columns before j (the rest of the element keeps its
// original values), as the host engine's left-looking factorisation leaves it.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <fmt/format.h>

#include "batched/cuda.hpp"
#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "batched/launch.cuh"
#include "batched/solve.cuh"
#include "batched/stream.cuh"
#include "batched/walker.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

// A register budget rather than launch bounds: with launch bounds alone, CUDA 13's ptxas
// settles some of these kernels at 64 registers and spills; 128 keeps every kernel free
// of local memory and still allows blocks of 512 threads. (The potrf warp kernels have
// their own budgets: CholWarpShape::regs.)
#if CUDART_VERSION >= 12040
#define CHOL_MAXNREG __maxnreg__(128)
#else
#define CHOL_MAXNREG __launch_bounds__(512)
#endif

__host__ __device__ constexpr int chol_pad_odd(int x) { return x | 1; }
__host__ __device__ constexpr int tri_size(int n) { return n * (n + 1) / 2; }
// Packed lower triangle, row-major: L(i, j) at tri_off(i) + j.
__host__ __device__ constexpr int tri_off(int i) { return i * (i + 1) / 2; }
// Rows padded to multiples of W entries (W = 16 / sizeof(T)): row i of the triangle at
// vrow_off<W>(i), the sum over rows m < i of W ceil((m + 1) / W), so every row starts on
// a 16-byte piece.
template <int W>
__host__ __device__ constexpr int vrow_off(int i) {
    const int q = i / W, s = i % W;
    return W * (W * q * (q + 1) / 2 + s * (q + 1));
}
// A row's whole 16-byte pieces (entries 0 .. W p - 1) and its entries after them.
template <int W>
__host__ __device__ constexpr int row_pieces(int i) { return (i + 1) / W; }
template <int W>
__host__ __device__ constexpr int row_singles(int i) { return (i + 1) % W; }

// The factor as the kernels see it (logical lower).
template <class T>
struct Tri {
    T *p;
    int64_t ld, stride;
    bool soa, swap;  // swap: logical (i, j) is fast-grid (j, i)
};

template <class T>
struct PotrfArgs {
    Tri<T> a;
    int32_t *info;
    int n;
    int64_t batch;
    bool vec;  // AoS, no swap, base, ld and stride on the 16-byte grid (the warp kernels' piece map)
};

template <class T>
struct PotrsArgs {
    Tri<const T> a;
    T *b;
    const int32_t *skip;  // posv: info; elements with skip[e] != 0 keep their B
    int64_t ldb, sb;
    bool soa_b, row_major_b;
    int n, nrhs, g;  // g: threads per element (columns per chunk)
    int64_t batch;
};


template <class T>
__device__ __forceinline__ int64_t tri_offset(const Tri<T> &a, int r, int c, int64_t e) {
    const int64_t idx = int64_t(r) * a.ld + c;
    return a.soa ? idx * a.stride + e : e * a.stride + idx;
}

// Stages the triangles of elements e0 .. e0 + ept - 1 (those below batch) to
// sh[q * es + tri_off(i) + j].
template <int CH, class T, class U>
__device__ __forceinline__ void load_tri(const Tri<U> &a, int n, int64_t e0, int64_t batch, T *sh, int es, int tid,
                                         int tt, int ept) {
    team_load<CH>(a.p, sh, a.soa, tid, tt, ept, n, n, [&](int q, int r, int c, int64_t &go, int &so) {
        const int i = a.swap ? c : r, j = a.swap ? r : c;
        const int64_t e = e0 + q;
        if (i < j || e >= batch) return false;
        go = tri_offset(a, r, c, e);
        so = q * es + tri_off(i) + j;
        return true;
    });
}

// ---------------------------------------------------------------------------------
// The triangle map of the thread and warp kernels: built once per block at the front of
// dynamic shared memory, so that staging visits only the stored triangle's entries with
// 32-bit offsets (the plan checks that every fast-grid index r * ld + c fits). map[t],
// t < tri_size(n), is the t-th entry of the stored triangle in memory order (the fast
// grid row by row): .x its fast-grid index, .y its packed offset tri_off(i) + j in the
// low 16 bits and its logical column j above them.

__host__ __device__ constexpr int64_t tri_map_bytes(int n) { return round16(int64_t(tri_size(n)) * 8); }
__device__ __forceinline__ int map_sh(int2 m) { return m.y & 0xffff; }
__device__ __forceinline__ int map_col(int2 m) { return m.y >> 16; }

// Every thread of the block calls it (it ends with __syncthreads).
__device__ void build_tri_map(int2 *map, int n, int ld, bool swap) {
    for (int t = threadIdx.x; t < tri_size(n); t += blockDim.x) {
        int r = 0, rem = t;
        if (!swap) {
            while (rem > r) rem -= ++r;  // fast row r holds c = 0 .. r = logical (r, c)
            map[t] = make_int2(r * ld + rem, (tri_off(r) + rem) | (rem << 16));
        } else {
            while (rem >= n - r) rem -= n - r++;  // fast row r holds c = r .. n - 1 = logical (c, r)
            const int c = r + rem;
            map[t] = make_int2(r * ld + c, (tri_off(c) + r) | (r << 16));
        }
    }
    __syncthreads();
}

// The piece map of the AoS warp kernels' staging on the 16-byte grid (plans whose
// element base, ld and stride are whole 16-byte pieces, and no swap: fast-grid row i is
// the factor's row i, entries 0 .. i). Its first tri_pieces(n) entries are the rows'
// whole pieces (W entries from column W p), in memory order; the rest the entries after
// each row's last piece, one at a time (those would run into the other triangle, which
// is never read nor written). Each entry as the triangle map's, the packed offset
// replaced by the padded one, vrow_off(i) + j.
template <int W>
__host__ __device__ constexpr int tri_pieces(int n) {
    const int q = n / W;
    return W * q * (q - 1) / 2 + q + (n % W) * q;  // sum over rows of (i + 1) / W
}
template <int W>
__host__ __device__ constexpr int piece_map_size(int n) { return tri_pieces<W>(n) + tri_size(n) - W * tri_pieces<W>(n); }

// Every thread of the block calls it (it ends with __syncthreads).
template <int W>
__device__ void build_piece_map(int2 *map, int n, int ld) {
    const int np = tri_pieces<W>(n);
    for (int t = threadIdx.x; t < piece_map_size<W>(n); t += blockDim.x) {
        int r = 0, c = 0, rem = t;
        if (t < np) {
            while (rem >= row_pieces<W>(r)) rem -= row_pieces<W>(r++);
            c = rem * W;
        } else {
            rem -= np;
            while (rem >= row_singles<W>(r)) rem -= row_singles<W>(r++);
            c = row_pieces<W>(r) * W + rem;
        }
        map[t] = make_int2(r * ld + c, (vrow_off<W>(r) + c) | (c << 16));
    }
    __syncthreads();
}

// A warp's 32 elements, CNT entries each, copied by cp.async in memory order: position
// z = lane + 32 k is entry t of element q, AoS (element by element) q = z / CNT,
// t = z % CNT; SoA (the elements of an entry together) q = lane, t = k. map(q, t, &go,
// &so) says whether and where. No registers are held by the loads in flight; the caller
// commits, waits and __syncwarp's before reading.
template <int CNT, class T, class S, class Map>
__device__ __forceinline__ void warp_gather_async(const T *g, S *sh, bool soa, int lane, Map map) {
    static_assert(sizeof(T) == sizeof(S) && (sizeof(T) == 4 || sizeof(T) == 8), "cp.async of 4 or 8 bytes");
#pragma unroll 4
    for (int k = 0; k < CNT; ++k) {
        const int z = lane + 32 * k, q = soa ? lane : z / CNT, t = soa ? k : z % CNT;
        int64_t go = 0;
        int so = 0;
        if (map(q, t, go, so)) __pipeline_memcpy_async(sh + so, g + go, sizeof(T));
    }
}

template <int CNT, class T, class Map>
__device__ __forceinline__ void warp_scatter(T *g, const T *sh, bool soa, int lane, Map map) {
#pragma unroll 4
    for (int k = 0; k < CNT; ++k) {
        const int z = lane + 32 * k, q = soa ? lane : z / CNT, t = soa ? k : z % CNT;
        int64_t go = 0;
        int so = 0;
        if (map(q, t, go, so)) g[go] = sh[so];
    }
}

// The global offset of the stored-triangle entry with fast-grid index idx in element e.
template <class T>
__device__ __forceinline__ int64_t tri_at(const Tri<T> &a, int idx, int64_t e) {
    return a.soa ? int64_t(idx) * a.stride + e : e * a.stride + idx;
}

// ---------------------------------------------------------------------------------
// The AoS copy-out of the thread kernels at N = 4, 8 and of the f32 warp kernel at
// n = 16 (N * N divides 32 or is a multiple of it): the warp's E elements' N x N fast
// grids walked in memory order, position z = lane + 32 k of the walk, as team_store
// walks them (each store one run of 32 grid positions, the other triangle's lanes
// idle), but with every lane meeting the same grid positions in every element (N = 8:
// positions lane and lane + 32 of element k; N = 4: position lane % 16 of element
// 2 k + lane / 16; N = 16: positions lane + 32 s, s = 0 .. 7, of element k). A lane
// works out its positions' offsets (fast-grid index, packed offset, logical column, or
// N in the other triangle) once per copy-out, or once per position for all E elements,
// so a store costs a predicate and an address: 8-14 instructions where team_store's
// Walker and 64-bit offsets took ~50 (SASS, f32 n = 8 and 16). Fast-grid indices fit in
// 32 bits (map_fits, or the synchronous kernel's own test).
template <int N, int E = 32>
struct GridWalk {
    static constexpr int P = N * N, SUB = P >= 32 ? P / 32 : 1, PER = P >= 32 ? 1 : 32 / P, STEPS = E / PER;
    static_assert(P % 32 == 0 || 32 % P == 0, "N * N divides 32 or is a multiple of it");
    int goff[SUB], soff[SUB], col[SUB];
    int h;  // this lane's element within a step (N = 4: lane / 16)
    int lane_, ld_;
    bool swap_;
    __device__ GridWalk(int lane, int ld, bool swap) : lane_(lane), ld_(ld), swap_(swap) {
        h = P >= 32 ? 0 : lane / P;
#pragma unroll
        for (int s = 0; s < SUB; ++s) {
            const int p = P >= 32 ? lane + 32 * s : lane % P, rr = p / N, c = p % N;
            const int i = swap ? c : rr, j = swap ? rr : c;
            goff[s] = rr * ld + c;
            soff[s] = tri_off(i) + j;
            col[s] = i >= j ? j : N;  // N: the other triangle, never stored
        }
    }
    // The stored triangles of elements e0 .. e0 + E - 1 into dst[q * es + tri_off(i) + j]
    // by plain loads, K elements' positions a lane in flight (N = 8: each load one
    // 128-byte line of one element, the other triangle's lanes idle), each position's
    // offsets as the copy-out's: the f32 synchronous kernel's staging. The shared stores
    // are unconditional, so that no predicate lives from a load to its store (ptxas
    // otherwise waits on each load before the next, having 7 predicates for 16 loads): a
    // position not loaded (the other triangle; an element at or past batch, whose slot
    // is never read back) stores a zero, the other triangle's to the element's padding
    // entry tri_size(N) (es > tri_size(N): chol_pad_odd of an even tri_size at N = 4, 8).
    template <int K, class T>
    __device__ __forceinline__ void load(const Tri<T> &a, int64_t e0, int64_t batch, T *dst, int es) const {
        static_assert(STEPS % K == 0 && tri_size(N) % 2 == 0, "whole chunks of K steps; a padding entry");
        const int left = int(std::min<int64_t>(batch - e0 - h, E));
        const int64_t pstep = int64_t(PER) * a.stride;
        const T *ps[SUB];
        int sto[SUB];
#pragma unroll
        for (int s = 0; s < SUB; ++s) {
            ps[s] = a.p + (e0 + h) * a.stride + goff[s];
            sto[s] = h * es + (col[s] < N ? soff[s] : tri_size(N));
        }
#pragma unroll 1
        for (int k0 = 0; k0 < STEPS && k0 * PER < left; k0 += K) {
            T v[K][SUB];
#pragma unroll
            for (int k = 0; k < K; ++k)
#pragma unroll
                for (int s = 0; s < SUB; ++s) v[k][s] = (k0 + k) * PER < left && col[s] < N ? ps[s][k * pstep] : T(0);
#pragma unroll
            for (int k = 0; k < K; ++k)
#pragma unroll
                for (int s = 0; s < SUB; ++s) dst[(k0 + k) * PER * es + sto[s]] = v[k][s];
#pragma unroll
            for (int s = 0; s < SUB; ++s) ps[s] += K * pstep;
        }
    }
    // The copy-out of the stored triangles of elements e0 .. e0 + E - 1 (those below
    // batch) from src[q * es + tri_off(i) + j] (a failed element, failsh[q] = j + 1: only
    // its columns before j).
    template <class T>
    __device__ __forceinline__ void store(const Tri<T> &a, int64_t e0, int64_t batch, const T *src, int es,
                                          const int *failsh) const {
        const int left = int(std::min<int64_t>(batch - e0 - h, E));
        T *pe = a.p + (e0 + h) * a.stride;
        const int64_t pstep = int64_t(PER) * a.stride;
        if constexpr (STEPS <= 8 && SUB > 1) {
            // Few elements, many positions each (the warp kernel, n = 16): the elements'
            // column limits held, the positions' offsets worked out one at a time (the
            // arrays would not fit the warp kernel's register budget).
            int lim[STEPS];
#pragma unroll
            for (int k = 0; k < STEPS; ++k) {
                const int f = k * PER < left ? failsh[k * PER + h] : 0;
                lim[k] = k * PER >= left ? 0 : f == 0 ? N : f - 1;  // columns below lim stored
            }
#pragma unroll 1
            for (int s = 0; s < SUB; ++s) {
                const int p = lane_ + 32 * s, rr = p / N, c = p % N;
                const int i = swap_ ? c : rr, j = swap_ ? rr : c;
                const int go = rr * ld_ + c, so = tri_off(i) + j, cl = i >= j ? j : N;
#pragma unroll
                for (int k = 0; k < STEPS; ++k)
                    if (cl < lim[k]) pe[k * pstep + go] = src[(k * PER + h) * es + so];
            }
        } else {
#pragma unroll 2
            for (int k = 0; k < STEPS; ++k, pe += pstep)
                if (k * PER < left) {
                    const int q = k * PER + h, f = failsh[q], lim = f == 0 ? N : f - 1;
#pragma unroll
                    for (int s = 0; s < SUB; ++s)
                        if (col[s] < lim) pe[goff[s]] = src[q * es + soff[s]];
                }
        }
    }
};

template <int N>
constexpr bool kGridWalk = N == 4 || N == 8;

// Register budgets of the grid-walk instances: left alone, ptxas batches the walk's
// stores (and their 64-bit addresses) and takes more registers than the general walk's
// instances, which costs warps per SM; these keep the general instances' occupancies
// (f32 n = 4: 42 warps; f64 synchronous n = 8: 18; n = 4: 28). The f32 synchronous
// kernel (n = 8, grid-walk loads of 8 elements at a time): 72, 28 warps an SM (64 and
// 80 spilled).
constexpr int grid_walk_regs(bool f64, bool sync, int n) {
    return sync ? (!f64 ? 72 : n == 8 ? 112 : n == 4 ? 72 : 128) : f64 ? 128 : n == 8 ? 88 : n == 4 ? 48 : 128;
}
#if CUDART_VERSION >= 12040
#define CHOL_GRID_MAXNREG(T, SYNC, N) __maxnreg__(grid_walk_regs(sizeof(T) == 8, SYNC, N))
#else
#define CHOL_GRID_MAXNREG(T, SYNC, N) __launch_bounds__(512)
#endif

// ---------------------------------------------------------------------------------
// potrf, thread-per-element: N <= 8, the triangle in registers, each warp staging its
// 32 elements' triangles through shared memory in memory order (through the map).

// The correctly rounded reciprocal of a pivot (one per column; in the warp kernels
// uniform across the element's lanes): l_rj = a_rj * fl(1 / l_jj) adds one rounding to
// the division's, so an off-diagonal entry (i, j) carries gamma_{j+2} <= gamma_n, within
// potrf's gamma_{n+1} (j <= n - 2).
__device__ __forceinline__ float chol_rcp(float x) { return __frcp_rn(x); }
__device__ __forceinline__ double chol_rcp(double x) { return __drcp_rn(x); }

// One element's Cholesky in registers, left-looking: r holds the packed lower triangle
// (row i at tri_off(i)); column j's sums run over l = 0..j-1 in order, then a multiply by
// the pivot's reciprocal (chol_rcp: one IEEE reciprocal a column where the IEEE divisions,
// one an entry, were ~12 instructions each, a third of the arithmetic at n = 8). A
// subnormal pivot's reciprocal is finite (1 / sqrt of the smallest subnormal), so a zero
// entry stays zero. Returns LAPACK's info (the columns before a failure are factored, the
// rest left as they were).
template <class T, int N>
__device__ __forceinline__ int factor_packed(T (&r)[tri_size(N)]) {
    int fail = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) {
        if (fail == 0) {
            T d = r[tri_off(j) + j];
#pragma unroll
            for (int l = 0; l < j; ++l) d = fma(-r[tri_off(j) + l], r[tri_off(j) + l], d);
            if (!(d > T(0))) {
                fail = j + 1;
            } else {
                const T ljj = sqrt(d), inv = chol_rcp(ljj);
                r[tri_off(j) + j] = ljj;
#pragma unroll
                for (int i = j + 1; i < N; ++i) {
                    T t = r[tri_off(i) + j];
#pragma unroll
                    for (int l = 0; l < j; ++l) t = fma(-r[tri_off(i) + l], r[tri_off(j) + l], t);
                    r[tri_off(i) + j] = t * inv;
                }
            }
        }
    }
    return fail;
}

// The stored triangles of the warp's 32 elements e0 + q (those before `batch`), through
// the map, to dst + q * ES + map_sh: the thread-per-element kernels' staging of a factor.
template <int NT, class TA, class T>
__device__ __forceinline__ void gather_triangles_async(const Tri<TA> &a, const int2 *map, int64_t e0, int64_t batch,
                                                       T *dst, int ES, int lane) {
    warp_gather_async<NT>(a.p, dst, a.soa, lane, [&](int q, int t, int64_t &go, int &so) {
        if (e0 + q >= batch) return false;
        const int2 m = map[t];
        go = tri_at(a, m.x, e0 + q);
        so = q * ES + map_sh(m);
        return true;
    });
}

// GRID: AoS N = 4, 8 copied out by the grid walk (a separate instance, so that the SoA
// instances keep their registers).
template <class T, int N, bool GRID = false>
__global__ void CHOL_GRID_MAXNREG(T, false, GRID ? N : 0) potrf_thread_kernel(const PotrfArgs<T> g) {
    constexpr int NT = tri_size(N), ES = chol_pad_odd(NT), EPT = 32;
    constexpr int64_t SLOT = int64_t(EPT) * ES;  // values per slot
    constexpr int64_t TEAM_BYTES = round16(2 * SLOT * sizeof(T) + EPT * 4);
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    const int2 *const map = reinterpret_cast<const int2 *>(chol_smem);
    build_tri_map(reinterpret_cast<int2 *>(chol_smem), N, int(g.a.ld), g.a.swap);
    unsigned char *region = chol_smem + tri_map_bytes(N) + team * TEAM_BYTES;
    T *const sh = reinterpret_cast<T *>(region);
    int *const failsh = reinterpret_cast<int *>(region + 2 * SLOT * sizeof(T));
    const int64_t per_block = int64_t(teams) * EPT, step = int64_t(gridDim.x) * per_block;
    // The triangles of the warp's 32 elements from e0 into slot `sl`.
    auto prefetch = [&](int64_t e0, int sl) { gather_triangles_async<NT>(g.a, map, e0, g.batch, sh + sl * SLOT, ES, lane); };
    int slot = 0;
    if (int64_t(blockIdx.x) * per_block < g.batch) prefetch(int64_t(blockIdx.x) * per_block + int64_t(team) * EPT, 0);
    __pipeline_commit();

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += step) {
        const int64_t e0 = eb + int64_t(team) * EPT, e = e0 + lane;
        __pipeline_wait_prior(0);
        __syncwarp();
        T *const my = sh + slot * SLOT + lane * ES;
        T r[NT];
#pragma unroll
        for (int x = 0; x < NT; ++x) r[x] = my[x];
        // The next 32 elements into the other slot (its last reader, the previous
        // copy-out, finished before the loop's closing __syncwarp).
        if (eb + step < g.batch) prefetch(eb + step + int64_t(team) * EPT, slot ^ 1);
        __pipeline_commit();
        const int fail = factor_packed<T, N>(r);
#pragma unroll
        for (int x = 0; x < NT; ++x) my[x] = r[x];
        failsh[lane] = fail;
        if (e < g.batch) g.info[e] = fail;
        __syncwarp();

        const T *const src = sh + slot * SLOT;
        if constexpr (GRID) {
            const GridWalk<N> gw(lane, int(g.a.ld), g.a.swap);
            gw.store(g.a, e0, g.batch, src, ES, failsh);
        } else if (g.a.soa || N < 3) {
            warp_scatter<NT>(g.a.p, src, g.a.soa, lane, [&](int q, int t, int64_t &go, int &so) {
                const int2 m = map[t];
                const int f = failsh[q];
                if (e0 + q >= g.batch || (f > 0 && map_col(m) >= f - 1)) return false;
                go = tri_at(g.a, m.x, e0 + q);
                so = q * ES + map_sh(m);
                return true;
            });
        } else {
            // AoS: the copy-out walks the n x n fast grids in memory order (each store a
            // run of 32 grid positions, the other triangle's lanes idle) as the
            // synchronous kernel does, rather than the triangle's entries back to back:
            // the AoS rows were 56-64 % of the bound with the packed order's stores and
            // 83 % (f64 n = 4) with the grid order's, while potrs, reading the same
            // packed order, is at 84-93 %. The shared layout is the same (packed
            // tri_off(i) + j per element).
            team_store(g.a.p, src, false, lane, 32, EPT, N, N, [&](int q, int rr, int c, int64_t &go, int &so) {
                const int i = g.a.swap ? c : rr, j = g.a.swap ? rr : c;
                const int64_t ee = e0 + q;
                const int f = failsh[q];
                if (i < j || ee >= g.batch || (f > 0 && j >= f - 1)) return false;
                go = tri_offset(g.a, rr, c, ee);
                so = q * ES + tri_off(i) + j;
                return true;
            });
        }
        __syncwarp();
        slot ^= 1;
    }
}

// ---------------------------------------------------------------------------------
// potrf, thread-per-element, AoS f64 n = 3 .. 8 and f32 n = 8: the same factorisation
// with the staging of run 16 (0.215 ms = 83 % at n = 4 on an H100, where the cp.async kernel
// above measured 0.320): each warp walks its 32 elements' n x n fast grids in memory
// order (lanes on consecutive entries: two whole lines per load), the stored triangle's
// entries loaded CH at a time into registers and then into shared memory, one slot, and
// copied out by the same walk. No map. (Run 16 had CH = 8 at every n.)

template <class T, int N>
__global__ void CHOL_GRID_MAXNREG(T, true, N) potrf_thread_sync_kernel(const PotrfArgs<T> g) {
    constexpr int NT = tri_size(N), ES = chol_pad_odd(NT), EPT = 32;
    // Loads in flight a lane: the walk is N * N positions a lane, CH at a time, each
    // batch a round trip (8 at n = 8 with CH = 8): 16 from n = 6 on (f64; f32 n = 8 loads
    // by the grid walk, its 64-bit fallback 8).
    constexpr int CH = N >= 6 && sizeof(T) == 8 ? 16 : 8;
    constexpr int64_t TEAM_BYTES = round16(int64_t(EPT) * ES * sizeof(T) + EPT * 4);
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    unsigned char *region = chol_smem + team * TEAM_BYTES;
    T *const sh = reinterpret_cast<T *>(region);
    int *const failsh = reinterpret_cast<int *>(region + int64_t(EPT) * ES * sizeof(T));
    const int64_t per_block = int64_t(teams) * EPT;
    // The copy-out of AoS N = 4, 8 with 32-bit fast-grid indices (this kernel also takes
    // larger ld) by the grid walk.
    const bool grid = kGridWalk<N> && !g.a.soa && int64_t(N - 1) * g.a.ld + N <= INT32_MAX;

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += int64_t(gridDim.x) * per_block) {
        const int64_t e0 = eb + int64_t(team) * EPT;
        if constexpr (sizeof(T) == 4 && kGridWalk<N>) {
            // f32 (AoS n = 8): the loads by the grid walk as well (a few instructions a
            // load where the Walker's 64-bit walk took ~20-50: f32 moves half the bytes a
            // load), 8 elements' 16 positions a lane in flight (2 KB a warp).
            if (grid) {
                const GridWalk<N> gw(lane, int(g.a.ld), g.a.swap);
                gw.template load<8>(g.a, e0, g.batch, sh, ES);
            } else {
                load_tri<CH>(g.a, N, e0, g.batch, sh, ES, lane, 32, EPT);
            }
        } else {
            load_tri<CH>(g.a, N, e0, g.batch, sh, ES, lane, 32, EPT);
        }
        __syncwarp();

        const int64_t e = e0 + lane;
        T *const my = sh + lane * ES;
        T r[NT];
#pragma unroll
        for (int x = 0; x < NT; ++x) r[x] = my[x];
        const int fail = factor_packed<T, N>(r);
#pragma unroll
        for (int x = 0; x < NT; ++x) my[x] = r[x];
        failsh[lane] = fail;
        if (e < g.batch) g.info[e] = fail;
        __syncwarp();

        if (grid) {
            const GridWalk<kGridWalk<N> ? N : 4> gw(lane, int(g.a.ld), g.a.swap);
            gw.store(g.a, e0, g.batch, sh, ES, failsh);
        } else {
            team_store(g.a.p, sh, g.a.soa, lane, 32, EPT, N, N, [&](int q, int rr, int c, int64_t &go, int &so) {
                const int i = g.a.swap ? c : rr, j = g.a.swap ? rr : c;
                const int64_t ee = e0 + q;
                const int f = failsh[q];
                if (i < j || ee >= g.batch || (f > 0 && j >= f - 1)) return false;
                go = tri_offset(g.a, rr, c, ee);
                so = q * ES + tri_off(i) + j;
                return true;
            });
        }
        __syncwarp();
    }
}

// ---------------------------------------------------------------------------------
// potrf, warp-group: the rows of the factor in registers, C = 16, 24 or 32 entries a row
// (n rounded up; those past the diagonal are scratch, never stored; rows n .. C - 1 an
// identity block). C = 24: 32 lanes per element, lane r holding row r. C = 16 and 32
// (FOLD): C / R lanes per element, R rows a lane from both ends of the triangle (R = 2:
// rows r and C - 1 - r; R = 4: r, C / 2 - 1 - r, C / 2 + r and C - 1 - r), so that every
// lane has R (C + 1) / 2 entries of the triangle (one row a lane leaves lane r idle for
// the C - 1 - r fmas of each column past its own row) and each column's serial chain is
// shared by 32 R / C elements. Column j: every lane takes the pivot's sqrt and its
// reciprocal, scales its entries (rows above j: scratch) and puts them into a shared
// column buffer (two, used in turn, so one __syncwarp per column), which every lane
// reads back with 16-byte loads for its rows' update a_rk = fma(-l_rj, l_kj, a_rk),
// k = j + 1 .. C - 1. The next pivot, row j + 1's fma(-l, l, a_{j+1,j+1}) (the same fma
// as its update), goes by a shuffle before the update, so the chain from pivot to pivot
// is sqrt, reciprocal, multiply, fma, shuffle. An entry's sums run j = 0 .. in order.

constexpr unsigned kCholFull = 0xffffffffu;

template <class T>
struct alignas(16) CholPack {
    T v[16 / sizeof(T)];
};

template <class T, int C, bool SOA>
struct CholWarpShape {
    // FOLD (C = 16, 32): C / R lanes per element, R rows a lane (its parts, below): f64 R
    // = 2, lane r holding rows r and C - 1 - r (C = 16: four elements a warp; C = 32: two);
    // f32 R = 4, rows r, H - 1 - r, H + r and C - 1 - r (H = C / 2; eight or four
    // elements a warp), so that each warp instruction of a column's chain serves twice
    // the elements (H200 run 285, the element slots padded in both: AoS n = 16 0.192 ->
    // 0.184 ms, n = 32 0.210 either way, SoA n = 16 0.146 -> 0.134, n = 32 0.190 -> 0.172;
    // f64 R = 4 would hold 80 doubles a lane, the parts' registers running to len(p)).
    // C = 24: 32 lanes, one row each.
    static constexpr bool FOLD = C != 24;
    static constexpr int R = !FOLD ? 1 : sizeof(T) == 4 ? 4 : 2;
    static constexpr int G = FOLD ? C / R : C <= 16 ? 16 : 32, EPT = 32 / G, W = 16 / sizeof(T);
    // Per element: two column buffers of C, then two triangles (packed rows, or with
    // PIECES rows padded to whole pieces; each slot a multiple of 16 bytes): this
    // element's and the next one's, prefetched while this one computes.
    // PIECES (f64, C = 32): AoS on the 16-byte grid is staged and copied out in whole
    // 16-byte pieces through the piece map, the triangle slots holding rows padded to
    // whole pieces (vrow_off); other plans keep the packed rows (tri_off) in the same
    // slots. (H200 run 276, three rounds: f64 AoS n = 32 0.190-0.192 -> 0.179-0.180 ms;
    // f64 n = 16 0.179-0.181 -> 0.207-0.208, f32 n = 16 0.192-0.194 -> 0.273, f32 n = 32
    // 0.215-0.217 -> 0.290-0.291. The 16-byte copy-out alone, from packed rows, lost as
    // much there (run 278), so the padded rows' bank conflicts (their starts on 16-byte
    // multiples, where packed rows start on distinct banks) do not explain it alone; ncu
    // (run 279) put the time in the waits for the next element's loads. Not understood;
    // f32 n = 32 lost as much again with R = 4 and the padded slots, run 286: 0.210 ->
    // 0.265 ms.)
    static constexpr bool PIECES = sizeof(T) == 8 && C == 32 && !SOA;
    static constexpr int TRI = PIECES ? vrow_off<W>(C) : (tri_size(C) + W - 1) / W * W;
    // An element's slot, padded so that a warp's EPT slots start 128 / EPT bytes apart mod
    // 128 (ES = NB / EPT mod NB, NB values filling the 32 banks): the elements' 16-byte
    // loads of their column buffers, and their rows' loads and stores, fall on distinct
    // banks, where unpadded slots (a multiple of 128 bytes but at f32 C = 16, 64 mod 128)
    // put them all on one or two offsets (H200 run 286: f64 SoA n = 16 0.162 -> 0.140 ms,
    // f64 AoS n = 16 0.180 -> 0.177; run 285: f32 AoS n = 32 0.216 -> 0.210, SoA n = 16
    // 0.154 -> 0.146, n = 32 0.200 -> 0.190, the others within the spread). C = 24, one
    // element a warp, keeps its slots.
    static constexpr int NB = 128 / int(sizeof(T));
    static constexpr int ES0 = 2 * C + 2 * TRI;
    static constexpr int ES = !FOLD ? ES0 : ES0 + (NB / EPT - ES0 % NB + NB) % NB;
    static constexpr int64_t TEAM_BYTES = round16(int64_t(EPT) * ES * sizeof(T) + EPT * 4);
    // The register budget: left alone, ptxas hoists a column's shared loads into the next
    // pivot's chain and takes ~1.5x the registers (fewer warps). Where AoS and SoA differ,
    // each is the budget at which CUDA 13.0's ptxas spills nothing. (f32 C = 32: 168, the
    // 12 warps an SM its slots' shared memory allows.)
    static constexpr int regs(bool soa) {
        return sizeof(T) == 4 ? (C <= 16 ? 96 : C <= 24 ? 80 : 168) : (C <= 16 ? 104 : C <= 24 ? 128 : soa ? 168 : 176);
    }
    // Part p of lane r (FOLD; a lane's R rows are its parts): the part's row, and the
    // bound len(p) of its entries (every row of part p is below len(p)); and row i's part
    // and lane.
    __host__ __device__ static constexpr int row_of(int p, int r) {
        return R == 2 ? (p == 0 ? r : C - 1 - r) : p == 0 ? r : p == 1 ? C / 2 - 1 - r : p == 2 ? C / 2 + r : C - 1 - r;
    }
    __host__ __device__ static constexpr int len(int p) { return R == 2 ? (p == 0 ? C / 2 : C) : (p + 1) * C / 4; }
    __host__ __device__ static constexpr int part_of(int i) {
        return R == 2 ? (i < C / 2 ? 0 : 1) : i < C / 4 ? 0 : i < C / 2 ? 1 : i < 3 * C / 4 ? 2 : 3;
    }
    __host__ __device__ static constexpr int lane_of(int i) {
        return R == 2 ? (i < C / 2 ? i : C - 1 - i)
                      : i < C / 4 ? i : i < C / 2 ? C / 2 - 1 - i : i < 3 * C / 4 ? i - C / 2 : C - 1 - i;
    }
    // Every row 0 .. C - 1 held once: by part part_of(i) of lane lane_of(i), below its bound.
    static constexpr bool parts_cover() {
        if constexpr (FOLD) {
            for (int i = 0; i < C; ++i) {
                const int p = part_of(i), r = lane_of(i);
                if (p >= R || r >= G || row_of(p, r) != i || i >= len(p)) return false;
            }
        }
        return true;
    }
};

// AoS: cp.async of the stored triangles of a warp's EPT elements from e0 (those below
// batch), element by element in memory order through a map: W = 0, the triangle map's
// entries to dst[q * es + tri_off(i) + j]; W > 0 (16-byte grid), the piece map's 16-byte
// pieces, then its single entries, to dst[q * es + vrow_off(i) + j] (f64 n = 32: 272
// copies an element where the triangle map's took 528).
template <int EPT, int W = 0, class T, class U>
__device__ __forceinline__ void tri_prefetch(const Tri<U> &a, const int2 *map, int n, int64_t e0, int64_t batch,
                                             T *dst, int es, int lane) {
#pragma unroll
    for (int q = 0; q < EPT; ++q) {
        const int64_t e = e0 + q;
        if (e >= batch) break;
        const U *pe = a.p + e * a.stride;
        asm("" : "+l"(pe));  // the element's base held in registers, not recomputed per entry
        T *const d = dst + q * es;
        if constexpr (W > 0) {
            const int np = tri_pieces<W>(n), nm = piece_map_size<W>(n);
#pragma unroll 2
            for (int t = lane; t < np; t += 32) {
                const int2 m = map[t];
                __pipeline_memcpy_async(d + map_sh(m), pe + uint32_t(m.x), 16);
            }
            for (int t = np + lane; t < nm; t += 32) {
                const int2 m = map[t];
                __pipeline_memcpy_async(d + map_sh(m), pe + uint32_t(m.x), sizeof(T));
            }
        } else {
#pragma unroll 4
            for (int t = lane; t < tri_size(n); t += 32) {
                const int2 m = map[t];
                __pipeline_memcpy_async(d + map_sh(m), pe + uint32_t(m.x), sizeof(T));
            }
        }
    }
}

// The row walk (AoS C = 32 off the piece map: staging and copy-out without the triangle
// map). Element by element, one warp instruction a fast-grid row (lane = column: each
// access one row's run of a line or two), so nothing waits on a map load and a row costs
// a bit test, a pointer step and the access: no swap, row r holds logical (r, lane) for
// lane <= r, packed at tri_off(r) + lane; swap, logical (lane, r) for r <= lane < n, at
// tri_off(lane) + r. Bit r of a lane's row mask says whether it touches row r (rows n ..
// C - 1 never). ncu (run 298) had put the map's loads (an LDS and a mask before each
// copy) under some 19 % of the kernel's stall samples. H200 run 391, three rounds against
// the map: f32 AoS n = 32 0.209-0.210 -> 0.180-0.181 ms (61 -> 70-71 % of the bound).
// Measured and not taken (runs 392-393): f32 C = 16 (two elements an instruction)
// 0.181-0.184 -> 0.199-0.201, potrs's warp kernel at C = 32 0.102-0.103 -> 0.109-0.110.
// f64 unrolls its rows by 2 (fully unrolled, it spilled at its 176-register budget): run
// 396, column-major f64 AoS n = 32 (the swapped grid, which the piece map does not serve)
// 0.187-0.191 -> 0.175-0.177 ms, as fast as the row-major piece map's 0.176-0.182. One
// loop form for both (f32 fully unrolled: its running offsets fold to constants; run 404,
// as fast as f32's own loop with tri_off(r)).
__device__ __forceinline__ uint32_t rows_mask(int n, bool swap, int lane) {
    const uint32_t below_n = n >= 32 ? ~0u : (1u << n) - 1;  // rows r < n
    return swap ? (lane < n ? ~0u >> (31 - lane) : 0u)      // r <= lane < n
                : (~0u << lane) & below_n;                  // lane <= r < n
}

template <int C>
constexpr bool kRowWalk = C == 32;

// The row walk of elements e0 .. e0 + EPT - 1 (those below batch): LOAD, their entries by
// cp.async to sh[q * es + ...]; else the copy-out from there (an element that failed,
// failsh[q] = j + 1: only its columns before j).
template <bool LOAD, int EPT, class T>
__device__ __forceinline__ void rows_walk(const Tri<T> &a, int n, int64_t e0, int64_t batch, T *sh, int es,
                                          const int *failsh, int lane) {
    constexpr int C = 32, UNR = sizeof(T) == 4 ? 32 : 2;  // a row mask of 32 bits; rows unrolled
    const uint32_t m0 = rows_mask(n, a.swap, lane);
    const int64_t ld = a.ld;
    T *const s0 = sh + (a.swap ? tri_off(lane) : lane);
    auto move = [](T *s, T *g) {
        if constexpr (LOAD)
            __pipeline_memcpy_async(s, g, sizeof(T));
        else
            *g = *s;
    };
#pragma unroll 1
    for (int q = 0; q < EPT; ++q) {
        const int64_t e = e0 + q;
        if (e >= batch) break;
        uint32_t m = m0;
        if constexpr (!LOAD) {
            const int f = failsh[q], lim = f == 0 ? C : f - 1;  // the columns written: below lim
            // Logical column lane (no swap) or r (swap) below lim.
            m = a.swap ? m0 & (lim >= 32 ? ~0u : (1u << lim) - 1) : lane < lim ? m0 : 0u;
        }
        T *pe = a.p + e * a.stride + lane;
        T *const s = s0 + q * es;
        if (!a.swap) {
            int so = 0;  // tri_off(r)
#pragma unroll(UNR)
            for (int r = 0; r < C; ++r, pe += ld) {
                if (m >> r & 1) move(s + so, pe);
                so += r + 1;
            }
        } else {
#pragma unroll(UNR)
            for (int r = 0; r < C; ++r, pe += ld)
                if (m >> r & 1) move(s + r, pe);
        }
    }
}

// SoA: the warp kernels stage and copy out with the whole block, so that a warp's loads
// and stores of one entry cover the block's PB = warps x EPT consecutive elements (whole
// sectors) where one warp's own elements would fill only EPT values of each sector.
// Thread x takes the block's element qb = x % PB and its entries t = x / PB, + ts, ...
// (ts = blockDim.x / PB = 32 / EPT). The block meets a __syncthreads before reading what
// others staged and before copying out what others computed.
struct BlockSoa {
    int qb, t0, ts;
    __device__ explicit BlockSoa(int ept) {
        const int pb = int(blockDim.x / 32) * ept;
        qb = int(threadIdx.x) % pb;
        t0 = int(threadIdx.x) / pb;
        ts = int(blockDim.x) / pb;
    }
};

// SOA: the layout, a template parameter so that each instantiation holds only its own
// staging state (registers).
template <class T, int C, bool SOA>
#if CUDART_VERSION >= 12040
__global__ void __maxnreg__((CholWarpShape<T, C, SOA>::regs(SOA))) potrf_warp_kernel(const PotrfArgs<T> g) {
#else
__global__ void potrf_warp_kernel(const PotrfArgs<T> g) {
#endif
    using Shape = CholWarpShape<T, C, SOA>;
    constexpr int G = Shape::G, EPT = Shape::EPT, W = Shape::W, ES = Shape::ES, TRI = Shape::TRI, R = Shape::R;
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    const int q = lane / G, r = lane % G, n = g.n, nt = tri_size(n);
    const int2 *const map = reinterpret_cast<const int2 *>(chol_smem);
    const bool vec = Shape::PIECES && g.vec;  // (AoS only) whole 16-byte pieces through the piece map
    if (vec)
        build_piece_map<W>(reinterpret_cast<int2 *>(chol_smem), n, int(g.a.ld));
    else if (SOA || !kRowWalk<C>)  // (the row walk reads no map)
        build_tri_map(reinterpret_cast<int2 *>(chol_smem), n, int(g.a.ld), g.a.swap);
    // Row i of a triangle slot: padded rows on the piece map's path, else packed.
    auto roff = [&](int i) { return vec ? vrow_off<W>(i) : tri_off(i); };
    // Team w's region: EPT elements of ES values (two column buffers, two triangle
    // slots), then EPT failure flags.
    auto region = [&](int w) { return chol_smem + tri_map_bytes(n) + w * Shape::TEAM_BYTES; };
    T *const sh = reinterpret_cast<T *>(region(team));
    int *const failsh = reinterpret_cast<int *>(region(team) + int64_t(EPT) * ES * sizeof(T));
    T *const buf = sh + q * ES;
    const int64_t per_block = int64_t(teams) * EPT, step = int64_t(gridDim.x) * per_block;
    constexpr bool soa = SOA;  // g.a.soa
    const BlockSoa bs(EPT);
    // SoA: this thread's block element's first triangle slot, and its failure flag.
    T *const bdst = reinterpret_cast<T *>(region(bs.qb / EPT)) + (bs.qb % EPT) * ES + 2 * C;
    const int *const bfail = reinterpret_cast<const int *>(region(bs.qb / EPT) + int64_t(EPT) * ES * sizeof(T)) +
                             bs.qb % EPT;
    // The block's elements from eb into slot `sl`.
    auto prefetch = [&](int64_t eb, int sl) {
        if (soa) {
            const int64_t e = eb + bs.qb;
            if (e < g.batch)
                for (int t = bs.t0; t < nt; t += bs.ts) {
                    const int2 m = map[t];
                    const int64_t go = int64_t(uint32_t(m.x)) * g.a.stride + e;
                    __pipeline_memcpy_async(bdst + sl * TRI + map_sh(m), g.a.p + go, sizeof(T));
                }
        } else if (vec) {
            tri_prefetch<EPT, W>(g.a, map, n, eb + int64_t(team) * EPT, g.batch, sh + 2 * C + sl * TRI, ES, lane);
        } else if constexpr (kRowWalk<C>) {
            rows_walk<true, EPT>(g.a, n, eb + int64_t(team) * EPT, g.batch, sh + 2 * C + sl * TRI, ES, nullptr, lane);
        } else {
            tri_prefetch<EPT>(g.a, map, n, eb + int64_t(team) * EPT, g.batch, sh + 2 * C + sl * TRI, ES, lane);
        }
    };
    // Rows n .. C - 1 of both triangle slots hold an identity block, written once:
    // staging and the write-back touch only rows below n. Their columns factor to exact
    // ones and zeros (no failure, nothing added to the rows above), so the column loop
    // runs over all C columns with no test of n.
    for (int x = lane; x < EPT * 2 * C; x += 32) {
        const int i = x % C;
        T *const row = sh + (x / (2 * C)) * ES + 2 * C + (x / C) % 2 * TRI + roff(i);
        if (i >= n)
            for (int k = 0; k <= i; ++k) row[k] = T(k == i ? 1 : 0);
    }
    int slot = 0;
    if (int64_t(blockIdx.x) * per_block < g.batch) prefetch(int64_t(blockIdx.x) * per_block, 0);
    __pipeline_commit();

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += step) {  // block-uniform
        const int64_t e0 = eb + int64_t(team) * EPT, e = e0 + q;
        T *const tri = buf + 2 * C + slot * TRI;
        __pipeline_wait_prior(0);
        if (soa)
            __syncthreads();
        else
            __syncwarp();

        int fail = 0;
        // Branch-free columns: a failed element (or one past the batch) goes on with
        // whatever its pivots give (NaN, inf); only its columns before the failure are
        // stored, and those were final before it. A pivot past n fails only after an
        // overflow above (a denormal pivot's reciprocal times an identity row's zero): the
        // element itself has n columns and factored, hence fail > n reads as 0. The next
        // elements go into the other slot once this one's rows are in registers (its last
        // readers, the previous copy-out, finished before the barrier above).
        if constexpr (Shape::FOLD) {
            // C / R lanes per element, R rows a lane (part p: row row_of(p, r), its
            // entries below len(p)); a column's update costs each lane the sum over its
            // parts of max(0, len(p) - 1 - j) fmas, for EPT elements a warp (one row a lane
            // would cost R (C - 1 - j) for as many), and the pivot's chain is shared by EPT
            // elements. (The loops over k run to C and test len(p): unrolled before p is
            // known, a bound of len(p) left them rolled, x in local memory.)
            static_assert(C % (2 * R) == 0 && Shape::parts_cover(), "every row held once, from both ends");
            int row[R], off[R];
#pragma unroll
            for (int p = 0; p < R; ++p) row[p] = Shape::row_of(p, r), off[p] = roff(row[p]);
            T x[R][C];
#pragma unroll
            for (int p = 0; p < R; ++p)
#pragma unroll
                for (int k = 0; k < C; ++k)
                    if (k < Shape::len(p)) x[p][k] = k <= row[p] ? tri[off[p] + k] : T(0);
            if (eb + step < g.batch) prefetch(eb + step, slot ^ 1);
            __pipeline_commit();
            T d = __shfl_sync(kCholFull, x[0][0], 0, G);
#pragma unroll
            for (int j = 0; j < C; ++j) {
                if (fail == 0 && !(d > T(0))) fail = j + 1;
                const T ljj = sqrt(d), inv = chol_rcp(ljj);
                T l[R];
#pragma unroll
                for (int p = 0; p < R; ++p) {
                    l[p] = T(0);
                    if (j < Shape::len(p)) {
                        l[p] = x[p][j] * inv;
                        x[p][j] = row[p] == j ? ljj : l[p];
                    }
                }
                if (j + 1 < C) {
                    // Row j + 1 is part part_of(j + 1) of lane lane_of(j + 1).
                    const int po = Shape::part_of(j + 1);
                    d = __shfl_sync(kCholFull, fma(-l[po], l[po], x[po][j + 1]), Shape::lane_of(j + 1), G);
                    T *const col = buf + (j & 1) * C;
#pragma unroll
                    for (int p = 0; p < R; ++p)
                        if (j < Shape::len(p)) col[row[p]] = l[p];
                    __syncwarp();
#pragma unroll
                    for (int k0 = (j + 1) / W * W; k0 < C; k0 += W) {
                        const CholPack<T> u = reinterpret_cast<const CholPack<T> *>(col)[k0 / W];
#pragma unroll
                        for (int w = 0; w < W; ++w) {
                            const int k = k0 + w;
#pragma unroll
                            for (int p = 0; p < R; ++p)
                                if (k > j && k < Shape::len(p)) x[p][k] = fma(-l[p], u.v[w], x[p][k]);
                        }
                    }
                }
            }
            if (fail > n) fail = 0;
            if (e < g.batch) {
#pragma unroll
                for (int p = 0; p < R; ++p)
                    if (row[p] < n)
#pragma unroll
                        for (int k = 0; k < C; ++k)
                            if (k < Shape::len(p) && k <= row[p]) tri[off[p] + k] = x[p][k];
            }
        } else {
            // C = 24: one row a lane.
            const bool row_ok = e < g.batch && r < n;
            // Row r of the staged triangle (rows from n: the identity block; an element past
            // the batch: whatever the slot held, computed on and never stored).
            T a[C];
#pragma unroll
            for (int k = 0; k < C; ++k) a[k] = (G == C || r < C) && k <= r ? tri[roff(r) + k] : T(0);
            if (eb + step < g.batch) prefetch(eb + step, slot ^ 1);
            __pipeline_commit();
            T d = __shfl_sync(kCholFull, a[0], 0, G);
#pragma unroll
            for (int j = 0; j < C; ++j) {
                if (fail == 0 && !(d > T(0))) fail = j + 1;
                const T ljj = sqrt(d), inv = chol_rcp(ljj);
                const T l = a[j] * inv;
                a[j] = r == j ? ljj : l;  // lanes above j: scratch
                if (j + 1 < C) {
                    // The next pivot first (row j + 1's diagonal after this column), off the
                    // shared round trip: the same fma the update below gives lane j + 1.
                    d = __shfl_sync(kCholFull, fma(-l, l, a[j + 1]), j + 1, G);
                    T *const col = buf + (j & 1) * C;
                    if (G == C || r < C) col[r] = l;
                    __syncwarp();
#pragma unroll
                    for (int k0 = (j + 1) / W * W; k0 < C; k0 += W) {
                        const CholPack<T> u = reinterpret_cast<const CholPack<T> *>(col)[k0 / W];
#pragma unroll
                        for (int w = 0; w < W; ++w)
                            if (k0 + w > j) a[k0 + w] = fma(-l, u.v[w], a[k0 + w]);
                    }
                }
            }
            if (fail > n) fail = 0;
            if (row_ok)
#pragma unroll
                for (int k = 0; k < C; ++k)
                    if (k <= r) tri[roff(r) + k] = a[k];
        }
        if (r == 0) {
            failsh[q] = fail;
            if (e < g.batch) g.info[e] = fail;
        }

        // The copy-out in memory order through the map (a failed element: only the
        // columns before its failure).
        if (soa) {
            __syncthreads();
            const int64_t ee = eb + bs.qb;
            const int f = *bfail, lim = f == 0 ? C : f - 1;  // the columns written: below lim
            if (ee < g.batch)
                for (int t = bs.t0; t < nt; t += bs.ts) {
                    const int2 m = map[t];
                    if (map_col(m) < lim)
                        g.a.p[int64_t(uint32_t(m.x)) * g.a.stride + ee] = bdst[slot * TRI + map_sh(m)];
                }
        } else if constexpr (sizeof(T) == 4 && C == 16) {
            // f32 n = 9 .. 16 AoS: the copy-out in the fast grids' memory order, as the
            // thread kernel's AoS copy-out (see there); n = 16 by the grid walk.
            __syncwarp();
            const T *const src = sh + 2 * C + slot * TRI;
            if (n == C) {
                // The source recomputed here (an opaque team index): held from the
                // kernel's start, it was the one value ptxas spilled at 64 registers (the
                // budget of two rows a lane; not tried again at four's 96).
                int tm = team;
                asm volatile("" : "+r"(tm));
                const T *const src2 = reinterpret_cast<const T *>(region(tm)) + 2 * C + slot * TRI;
                const GridWalk<C, EPT> gw(lane, int(g.a.ld), g.a.swap);
                gw.store(g.a, e0, g.batch, src2, ES, failsh);
            } else {
                team_store(g.a.p, src, false, lane, 32, EPT, n, n, [&](int qq, int rr, int c, int64_t &go, int &so) {
                    const int i = g.a.swap ? c : rr, j = g.a.swap ? rr : c;
                    const int64_t ee = e0 + qq;
                    const int f = failsh[qq];
                    if (i < j || ee >= g.batch || (f > 0 && j >= f - 1)) return false;
                    go = tri_offset(g.a, rr, c, ee);
                    so = qq * ES + tri_off(i) + j;
                    return true;
                });
            }
        } else if (kRowWalk<C> && !vec) {  // (vec, f64 only: the piece map's copy-out)
            __syncwarp();
            rows_walk<false, EPT>(g.a, n, e0, g.batch, sh + 2 * C + slot * TRI, ES, failsh, lane);
        } else {
            // Through the map: vec, whole pieces by 16-byte stores (a failed element's piece
            // that reaches its failing column entry by entry), then the rows' last entries;
            // else entry by entry.
            __syncwarp();
            const T *const src = sh + 2 * C + slot * TRI;
            const int np = tri_pieces<W>(n), nm = piece_map_size<W>(n);
#pragma unroll
            for (int qq = 0; qq < EPT; ++qq) {
                const int64_t ee = e0 + qq;
                if (ee >= g.batch) break;
                const int f = failsh[qq], lim = f == 0 ? C : f - 1;  // the columns written: below lim
                T *const pe = g.a.p + ee * g.a.stride;
                const T *const se = src + qq * ES;
                if (vec) {
#pragma unroll 2
                    for (int t = lane; t < np; t += 32) {
                        const int2 m = map[t];
                        const int c = map_col(m);
                        if (c + W <= lim)
                            *reinterpret_cast<CholPack<T> *>(pe + uint32_t(m.x)) =
                                *reinterpret_cast<const CholPack<T> *>(se + map_sh(m));
                        else
                            for (int w = 0; w < W && c + w < lim; ++w) pe[uint32_t(m.x) + w] = se[map_sh(m) + w];
                    }
                    for (int t = np + lane; t < nm; t += 32) {
                        const int2 m = map[t];
                        if (map_col(m) < lim) pe[uint32_t(m.x)] = se[map_sh(m)];
                    }
                } else {
#pragma unroll 4
                    for (int t = lane; t < nt; t += 32) {
                        const int2 m = map[t];
                        if (map_col(m) < lim) pe[uint32_t(m.x)] = src[qq * ES + map_sh(m)];
                    }
                }
            }
        }
        __syncwarp();
        slot ^= 1;
    }
}

// ---------------------------------------------------------------------------------
// potrf, the rows kernel: a warp per element, left-looking in shared memory.

// A warp's slot (bytes): the packed triangle, then its failure flag (for the block's
// copy-out).
template <class T>
__host__ __device__ constexpr int64_t potrf_rows_slot(int n) {
    return round16(int64_t(tri_size(n)) * int64_t(sizeof(T)) + 4);
}
constexpr int kPotrfRowsCols = 4;  // J: the columns that share one pass over the rows

template <class T, int R>
__global__ void CHOL_MAXNREG potrf_rows_kernel(const PotrfArgs<T> g) {
    constexpr int J = kPotrfRowsCols;
    static_assert(32 % J == 0, "a group of columns within one block of 32 rows");
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32, n = g.n;
    const int64_t slot = potrf_rows_slot<T>(n) / int64_t(sizeof(T));
    T *const base = reinterpret_cast<T *>(chol_smem), *const L = base + warp * slot;
    const Walker wb(threadIdx.x, blockDim.x, warps, n);  // SoA: (element, column, row) of the block
    const bool coop = g.a.soa && warps > 1;               // as potrs_rows_kernel
    auto packed = [&](int r, int c) {
        const int i = g.a.swap ? c : r, j = g.a.swap ? r : c;
        return i >= j ? tri_off(i) + j : -1;
    };
    const int64_t ld = g.a.ld, es = g.a.soa ? g.a.stride : 1;
    // This lane's rows' packed offsets (rows past n: row n - 1's, their results unused).
    int ro[R];
#pragma unroll
    for (int k = 0; k < R; ++k) ro[k] = tri_off(min(lane + 32 * k, n - 1));

    // Columns j .. j + J - 1 at a time (the group): every row sums s_c = A(i, j + c) -
    // sum_{p < j} L(i, p) L(j + c, p), one load of L(i, p) feeding J fmas. Then within
    // the group, column by column: the pivot by a shuffle, the column divided by it and
    // stored, its term taken off the group's later columns (L(j + c', j + c) by a
    // shuffle). Returns LAPACK's info.
    auto factor = [&]() -> int {
#pragma unroll
        for (int kj = 0; kj < R; ++kj) {
            for (int jl = 0; jl < 32; jl += J) {
                const int j = 32 * kj + jl;
                if (j >= n) return 0;  // uniform
                T s[J][R];
                int bo[J];  // rows j + c (past n: row n - 1)
#pragma unroll
                for (int c = 0; c < J; ++c) {
                    bo[c] = tri_off(min(j + c, n - 1));
                    // Rows above j + c, and rows past n, start from 0 (their results are
                    // never stored): the packed (r, j + c) of r < j + c would be a later
                    // row's entry, and a row past n reads row n - 1's (ro), either of which
                    // another lane may be writing in this group (racecheck, H200 run 346).
#pragma unroll
                    for (int k = kj; k < R; ++k) {
                        const int r = lane + 32 * k;
                        s[c][k] = j + c <= r && r < n ? L[ro[k] + j + c] : T(0);
                    }
                }
#pragma unroll 4
                for (int p = 0; p < j; ++p) {
                    T b[J];
#pragma unroll
                    for (int c = 0; c < J; ++c) b[c] = L[bo[c] + p];
#pragma unroll
                    for (int k = kj; k < R; ++k) {
                        const T a = L[ro[k] + p];
#pragma unroll
                        for (int c = 0; c < J; ++c) s[c][k] = fma(-a, b[c], s[c][k]);
                    }
                }
#pragma unroll
                for (int c = 0; c < J; ++c) {
                    const int jc = j + c;
                    if (jc >= n) break;  // uniform
                    const T d = __shfl_sync(0xffffffffu, s[c][kj], jl + c);
                    if (!(d > T(0))) return jc + 1;  // a NaN too
                    const T ljj = sqrt(d);
                    T l[R];
#pragma unroll
                    for (int k = kj; k < R; ++k) {
                        const int r = lane + 32 * k;
                        l[k] = r == jc ? ljj : s[c][k] / ljj;
                        if (r >= jc && r < n) L[ro[k] + jc] = l[k];
                    }
#pragma unroll
                    for (int c2 = c + 1; c2 < J; ++c2) {
                        const T m = __shfl_sync(0xffffffffu, l[kj], jl + c2);  // L(j + c2, jc)
#pragma unroll
                        for (int k = kj; k < R; ++k) s[c2][k] = fma(-l[k], m, s[c2][k]);
                    }
                }
                __syncwarp();  // the group's columns are read by every lane from the next group on
            }
        }
        return 0;
    };

    for (int64_t eb = int64_t(blockIdx.x) * warps; eb < g.batch; eb += int64_t(gridDim.x) * warps) {  // block-uniform
        const int64_t e = eb + warp;
        const bool live = e < g.batch;
        T *const src = g.a.p + (g.a.soa ? e : e * g.a.stride);  // the element's (r, c): src[(r ld + c) es]
        rows_stage(coop, live, base, slot, g.a.p, ld, g.a.stride, eb, g.batch, n, wb, packed,
                   [&] { warp_stage_tri<R>(L, src, ld, es, n, g.a.swap, lane, packed); });
        __pipeline_commit();
        __pipeline_wait_prior(0);
        if (coop)
            __syncthreads();
        else
            __syncwarp();
        int fail = 0;
        if (live) {
            fail = factor();
            if (lane == 0) {
                *reinterpret_cast<int *>(L + tri_size(n)) = fail;
                g.info[e] = fail;
            }
        }
        // The copy-out: a failed element only its columns before the failure.
        if (coop) {
            __syncthreads();
            block_store_soa(g.a.p, g.a.ld, g.a.stride, base, slot, eb, g.batch, n, wb, [&](int q, int r, int c) {
                const int f = *reinterpret_cast<const int *>(base + q * slot + tri_size(n));
                return f > 0 && (g.a.swap ? r : c) >= f - 1 ? -1 : packed(r, c);
            });
        } else if (live) {
            __syncwarp();
            const int lim = fail > 0 ? fail - 1 : n;  // the columns written: below lim
            warp_tri_walk(n, g.a.swap, lane, [&](int r, int c) {
                if ((g.a.swap ? r : c) < lim) src[(r * ld + c) * es] = L[packed(r, c)];
            });
        }
    }
}

// ---------------------------------------------------------------------------------
// potrs: G threads per element, each solving one column of a chunk of G columns.

template <class T>
__global__ void CHOL_MAXNREG potrs_kernel(const PotrsArgs<T> g) {
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int n = g.n, G = g.g, NT = tri_size(n), ES = chol_pad_odd(NT + n * G);
    const int TT = G < 32 ? 32 : G, EPT = G < 32 ? 32 / G : 1;
    const int team = threadIdx.x / TT, tid = threadIdx.x % TT, teams = blockDim.x / TT;
    const bool warp_team = TT == 32;
    T *const sh = reinterpret_cast<T *>(chol_smem) + int64_t(team) * EPT * ES;
    const int q = tid / G, loc = tid % G;
    const T *const L = sh + q * ES;
    T *const x = sh + q * ES + NT + loc;  // x(i) = x[i * G]
    const int64_t per_block = int64_t(teams) * EPT;

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += int64_t(gridDim.x) * per_block) {
        const int64_t e0 = eb + int64_t(team) * EPT;
        load_tri<sizeof(T) == 8 ? 4 : 8>(g.a, n, e0, g.batch, sh, ES, tid, TT, EPT);
        for (int c0 = 0; c0 < g.nrhs; c0 += G) {
            const int w = min(G, g.nrhs - c0);
            // The chunk's fast-grid rectangle: rows r0 + [0, nr), columns c0f + [0, nc).
            const int nr = g.row_major_b ? n : w, nc = g.row_major_b ? w : n;
            const int r0 = g.row_major_b ? 0 : c0, c0f = g.row_major_b ? c0 : 0;
            auto map = [&](int qq, int r, int c, int64_t &go, int &so) {
                const int64_t e = e0 + qq;
                if (e >= g.batch || (g.skip && g.skip[e] != 0)) return false;
                const int rr = r + r0, cc = c + c0f;
                const int i = g.row_major_b ? rr : cc, j = g.row_major_b ? cc : rr;
                const int64_t idx = int64_t(rr) * g.ldb + cc;
                go = g.soa_b ? idx * g.sb + e : e * g.sb + idx;
                so = qq * ES + NT + i * G + (j - c0);
                return true;
            };
            team_load<sizeof(T) == 8 ? 4 : 8>(g.b, sh, g.soa_b, tid, TT, EPT, nr, nc, map);
            team_sync(warp_team);
            if (e0 + q < g.batch && loc < w) {
                // L y = b
                for (int i = 0; i < n; ++i) {
                    const T *Li = L + tri_off(i);
                    T t = x[i * G];
                    for (int l = 0; l < i; ++l) t = fma(-Li[l], x[l * G], t);
                    x[i * G] = t / Li[i];
                }
                // L^T x = y
                for (int i = n - 1; i >= 0; --i) {
                    T t = x[i * G];
                    for (int l = i + 1; l < n; ++l) t = fma(-L[tri_off(l) + i], x[l * G], t);
                    x[i * G] = t / L[tri_off(i) + i];
                }
            }
            team_sync(warp_team);
            team_store(g.b, sh, g.soa_b, tid, TT, EPT, nr, nc, map);
            team_sync(warp_team);
        }
    }
}

// ---------------------------------------------------------------------------------
// potrs, one right-hand side, thread-per-element: N <= 8, the factor and x in
// registers, both operands staged by each warp through shared memory in memory order
// (the factor through the map). The diagonal's reciprocals are taken once; both
// solves by rows: y_i = (b_i - sum_{l<i} l_il y_l) (1 / l_ii), then
// x_i = (y_i - sum_{l>i} l_li x_l) (1 / l_ii), each sum in order with fma.

// Entry (i, col) of element e's B (n x nrhs).
template <class T>
__device__ __forceinline__ int64_t b_offset(const PotrsArgs<T> &g, int i, int col, int64_t e) {
    const int64_t idx = g.row_major_b ? int64_t(i) * g.ldb + col : int64_t(col) * g.ldb + i;
    return g.soa_b ? idx * g.sb + e : e * g.sb + idx;
}

template <class T, int N>
__global__ void CHOL_MAXNREG potrs_thread_kernel(const PotrsArgs<T> g) {
    constexpr int NT = tri_size(N), ES = chol_pad_odd(NT + N), EPT = 32;
    constexpr int64_t SLOT = int64_t(EPT) * ES;  // values per slot
    constexpr int64_t TEAM_BYTES = round16(2 * SLOT * sizeof(T) + EPT * 4);
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    const int2 *const map = reinterpret_cast<const int2 *>(chol_smem);
    build_tri_map(reinterpret_cast<int2 *>(chol_smem), N, int(g.a.ld), g.a.swap);
    unsigned char *region = chol_smem + tri_map_bytes(N) + team * TEAM_BYTES;
    T *const sh = reinterpret_cast<T *>(region);
    int *const actsh = reinterpret_cast<int *>(region + 2 * SLOT * sizeof(T));
    const int64_t per_block = int64_t(teams) * EPT, step = int64_t(gridDim.x) * per_block;
    // The factors and right-hand sides of the warp's 32 elements from e0 into slot `sl`
    // (posv's failed elements too: reading them is harmless, they are not written).
    auto prefetch = [&](int64_t e0, int sl) {
        gather_triangles_async<NT>(g.a, map, e0, g.batch, sh + sl * SLOT, ES, lane);
        warp_gather_async<N>(static_cast<const T *>(g.b), sh + sl * SLOT, g.soa_b, lane,
                             [&](int q, int t, int64_t &go, int &so) {
                                 if (e0 + q >= g.batch) return false;
                                 go = b_offset(g, t, 0, e0 + q);
                                 so = q * ES + NT + t;
                                 return true;
                             });
    };
    int slot = 0;
    if (int64_t(blockIdx.x) * per_block < g.batch) prefetch(int64_t(blockIdx.x) * per_block + int64_t(team) * EPT, 0);
    __pipeline_commit();

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += step) {
        const int64_t e0 = eb + int64_t(team) * EPT, e = e0 + lane;
        const bool active = e < g.batch && !(g.skip && g.skip[e] != 0);
        __pipeline_wait_prior(0);
        __syncwarp();
        T *const my = sh + slot * SLOT + lane * ES;
        T L[NT], x[N], inv[N];
#pragma unroll
        for (int i = 0; i < NT; ++i) L[i] = active ? my[i] : T(1);
#pragma unroll
        for (int i = 0; i < N; ++i) x[i] = active ? my[NT + i] : T(0);
        // The next 32 elements into the other slot (its last reader, the previous
        // copy-out, finished before the loop's closing __syncwarp).
        if (eb + step < g.batch) prefetch(eb + step + int64_t(team) * EPT, slot ^ 1);
        __pipeline_commit();
#pragma unroll
        for (int i = 0; i < N; ++i) inv[i] = T(1) / L[tri_off(i) + i];
#pragma unroll
        for (int i = 0; i < N; ++i) {
            T t = x[i];
#pragma unroll
            for (int l = 0; l < i; ++l) t = fma(-L[tri_off(i) + l], x[l], t);
            x[i] = t * inv[i];
        }
#pragma unroll
        for (int i = N - 1; i >= 0; --i) {
            T t = x[i];
#pragma unroll
            for (int l = i + 1; l < N; ++l) t = fma(-L[tri_off(l) + i], x[l], t);
            x[i] = t * inv[i];
        }
#pragma unroll
        for (int i = 0; i < N; ++i) my[NT + i] = x[i];
        actsh[lane] = active;
        __syncwarp();
        warp_scatter<N>(g.b, sh + slot * SLOT, g.soa_b, lane, [&](int q, int t, int64_t &go, int &so) {
            if (!actsh[q]) return false;
            go = b_offset(g, t, 0, e0 + q);
            so = q * ES + NT + t;
            return true;
        });
        __syncwarp();
        slot ^= 1;
    }
}

// ---------------------------------------------------------------------------------
// potrs, one right-hand side, warp-group: G = C = 16 (n <= 16, two elements per warp)
// or 32 lanes per element, lane r holding x_r in a register, the factor staged packed in
// shared memory (cp.async through the map, the next element's while this one solves).
// The diagonal's reciprocals are taken once, one per lane. L y = b by columns: lane j
// scales, its y_j goes out by a shuffle, lanes below take fma(-l_rj, y_j, x_r) (each
// row's sum in the order l = 0 .. r - 1). L^T x = y by columns too: lane i scales, lanes
// above take fma(-l_ir, x_i, x_r) reading row i of the factor (consecutive, no bank
// conflicts), so row r's sum runs l = n - 1 down to r + 1. x goes back from the lanes'
// registers.

template <class T, int C>
struct CholSolveShape {
    static constexpr int G = C, EPT = 32 / C;
    // Per element two slots (this element's and the next one's, prefetched), each the
    // packed triangle, then x.
    static constexpr int SL = chol_pad_odd(tri_size(C) + C), ES = 2 * SL;
};

// COOP: g.a.soa || g.soa_b (SoA operands staged by the block), a template parameter so
// that the block-staged instances are functions of their own (their plans may ask for
// another shared-memory carveout: plan_potrs_cuda).
template <class T, int C, bool COOP>
__global__ void CHOL_MAXNREG potrs_warp_kernel(const PotrsArgs<T> g) {
    using Shape = CholSolveShape<T, C>;
    constexpr int G = Shape::G, EPT = Shape::EPT, SL = Shape::SL, ES = Shape::ES, NT = tri_size(C);
    static_assert(EPT <= 2, "one or two elements per warp");
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int team = threadIdx.x / 32, lane = threadIdx.x % 32, teams = blockDim.x / 32;
    const int q = lane / G, r = lane % G, n = g.n, nt = tri_size(n);
    const int2 *const map = reinterpret_cast<const int2 *>(chol_smem);
    build_tri_map(reinterpret_cast<int2 *>(chol_smem), n, int(g.a.ld), g.a.swap);
    // Element slots: the block's element qb (team qb / EPT, its element qb % EPT) at
    // base + qb ES, two slots of SL values each (the packed triangle, then x).
    T *const base = reinterpret_cast<T *>(chol_smem + tri_map_bytes(n));
    T *const sh = base + int64_t(team) * EPT * ES;
    const int64_t per_block = int64_t(teams) * EPT, step = int64_t(gridDim.x) * per_block;
    constexpr bool coop = COOP;  // g.a.soa || g.soa_b: SoA operands staged by the block
    const BlockSoa bs(EPT);
    T *const bsl = base + int64_t(bs.qb) * ES;
    auto live = [&](int64_t ee) { return ee < g.batch && !(g.skip && g.skip[ee] != 0); };
    // The block's elements from eb into slot `sl`.
    auto prefetch = [&](int64_t eb, int sl) {
        const int64_t e0 = eb + int64_t(team) * EPT, eq = eb + bs.qb;
        if (g.a.soa) {
            if (eq < g.batch)
                for (int t = bs.t0; t < nt; t += bs.ts) {
                    const int2 m = map[t];
                    __pipeline_memcpy_async(bsl + sl * SL + map_sh(m), g.a.p + (int64_t(m.x) * g.a.stride + eq),
                                            sizeof(T));
                }
        } else {
            tri_prefetch<EPT>(g.a, map, n, e0, g.batch, sh + sl * SL, ES, lane);
        }
        if (g.soa_b) {
            if (live(eq))
                for (int i = bs.t0; i < n; i += bs.ts)
                    __pipeline_memcpy_async(bsl + sl * SL + NT + i, g.b + b_offset(g, i, 0, eq), sizeof(T));
        } else {
            // The warp's elements' n entries: z < EPT n with EPT <= 2, element z >= n.
            for (int z = lane; z < EPT * n; z += 32) {
                const int qq = int(z >= n), i = z - qq * n;
                const int64_t ee = e0 + qq;
                if (live(ee))
                    __pipeline_memcpy_async(sh + qq * ES + sl * SL + NT + i, g.b + b_offset(g, i, 0, ee), sizeof(T));
            }
        }
    };
    int slot = 0;
    if (int64_t(blockIdx.x) * per_block < g.batch) prefetch(int64_t(blockIdx.x) * per_block, 0);
    __pipeline_commit();

    for (int64_t eb = int64_t(blockIdx.x) * per_block; eb < g.batch; eb += step) {  // block-uniform
        const int64_t e0 = eb + int64_t(team) * EPT, e = e0 + q;
        const T *const L = sh + q * ES + slot * SL;
        T *const xs = sh + q * ES + slot * SL + NT;
        __pipeline_wait_prior(0);
        if (coop)
            __syncthreads();
        else
            __syncwarp();
        // Every lane meets every shuffle (the two elements of a warp may differ in
        // `active`); an inactive element's lanes compute on ones and zeros, unstored.
        const bool active = live(e);
        const bool row_ok = active && r < n;
        T x = row_ok ? xs[r] : T(0);
        const T inv = row_ok ? T(1) / L[tri_off(r) + r] : T(1);
        // The next elements into the other slot (its last readers, the previous
        // elements' solves and copy-out, finished before the barrier above).
        if (eb + step < g.batch) prefetch(eb + step, slot ^ 1);
        __pipeline_commit();
        // L y = b
#pragma unroll
        for (int j = 0; j < C; ++j) {
            if (j >= n) break;  // uniform
            const T lrj = row_ok && r > j ? L[tri_off(r) + j] : T(0);
            if (r == j) x = x * inv;
            const T y = __shfl_sync(kCholFull, x, j, G);
            if (r > j) x = fma(-lrj, y, x);
        }
        // L^T x = y
#pragma unroll
        for (int i = C - 1; i >= 0; --i) {
            if (i >= n) continue;  // uniform
            const T lir = active && r < i ? L[tri_off(i) + r] : T(0);
            if (r == i) x = x * inv;
            const T y = __shfl_sync(kCholFull, x, i, G);
            if (r < i) x = fma(-lir, y, x);
        }
        if (g.soa_b) {
            if (row_ok) xs[r] = x;
            __syncthreads();
            const int64_t eq = eb + bs.qb;
            if (live(eq))
                for (int i = bs.t0; i < n; i += bs.ts) g.b[b_offset(g, i, 0, eq)] = bsl[slot * SL + NT + i];
        } else if (row_ok) {
            g.b[b_offset(g, r, 0, e)] = x;
        }
        __syncwarp();
        slot ^= 1;
    }
}

// ---------------------------------------------------------------------------------
// potrs, n > 32, at most kRowsMaxRhs right-hand sides (the rows kernel): a warp per
// element, its packed factor staged in shared memory by cp.async (warp_stage_tri: the
// stored triangle walked in memory order at n <= 64, a fast-grid row at a time beyond;
// 64-bit offsets and no triangle map, which at n = 128 would be as large as the factor),
// and one column of B at a time in registers, lane l holding rows
// l, l + 32, ... (R = ceil(n / 32)); both solves by columns (solve.cuh). A SoA factor is
// staged by the whole block (block_stage_soa: runs of the block's elements; plan_rows
// makes them whole 32-byte sectors where it can) where it has several warps. One slot per warp:
// with factors of 8 to 66 KB, the warps of an SM overlap one another's staging and solves.
// Where the serial kernel above gave one thread the whole solve (n = 64: 1.2 ms for 8192
// elements, 0.6x torch's cholesky_solve), each column here is 2 n steps of a shuffle.

// A warp's slot (bytes): the packed factor.
template <class T>
__host__ __device__ constexpr int64_t potrs_rows_slot(int n) {
    return round16(int64_t(tri_size(n)) * int64_t(sizeof(T)));
}

template <class T, int R>
__global__ void CHOL_MAXNREG potrs_rows_kernel(const PotrsArgs<T> g) {
    extern __shared__ __align__(16) unsigned char chol_smem[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32, n = g.n;
    const int64_t slot = potrs_rows_slot<T>(n) / int64_t(sizeof(T));
    T *const base = reinterpret_cast<T *>(chol_smem), *const L = base + warp * slot;
    const Walker wb(threadIdx.x, blockDim.x, warps, n);  // SoA: (element, column, row) of the block
    // SoA factors staged by the block where it has several warps (one warp: its own rows,
    // a row at a time, where the walk's predicated half costs more: f64 n = 128 SoA 0.374
    // -> 0.432 ms with it, run 223).
    const bool coop = g.a.soa && warps > 1;
    // Logical L(i, j) is fast-grid (i, j), or (swap) (j, i): its packed offset, or -1 for
    // the other triangle.
    auto packed = [&](int r, int c) {
        const int i = g.a.swap ? c : r, j = g.a.swap ? r : c;
        return i >= j ? tri_off(i) + j : -1;
    };
    for (int64_t eb = int64_t(blockIdx.x) * warps; eb < g.batch; eb += int64_t(gridDim.x) * warps) {  // block-uniform
        const int64_t e = eb + warp;
        const bool live = e < g.batch && !(g.skip && g.skip[e] != 0);  // posv: elements that factored
        // Fast row r holds logical L(r, c), c <= r, or (swap) L(c, r), c >= r.
        rows_stage(coop, live, base, slot, g.a.p, g.a.ld, g.a.stride, eb, g.batch, n, wb, packed, [&] {
            warp_stage_tri<R>(L, g.a.p + (g.a.soa ? e : e * g.a.stride), g.a.ld, g.a.soa ? g.a.stride : 1, n,
                              g.a.swap, lane, packed);
        });
        __pipeline_commit();
        T x[R], inv[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int r = lane + 32 * k;
            x[k] = live && r < n ? g.b[b_offset(g, r, 0, e)] : T(0);
        }
        __pipeline_wait_prior(0);
        if (coop)
            __syncthreads();
        else
            __syncwarp();
        if (!live) continue;
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int r = lane + 32 * k;
            inv[k] = r < n ? T(1) / L[tri_off(r) + r] : T(1);
        }
        for (int col = 0; col < g.nrhs; ++col) {
            if (col > 0)
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    const int r = lane + 32 * k;
                    x[k] = r < n ? g.b[b_offset(g, r, col, e)] : T(0);
                }
            // L y = b, then L^T x = y (L^T(r, j) = L(j, r): row j of the packed factor).
            warp_lower_solve<T, R, false>(x, inv, n, lane, [&](int r, int j) { return L[tri_off(r) + j]; });
            warp_upper_solve<T, R, false>(x, inv, n, lane, [&](int r, int j) { return L[tri_off(j) + r]; });
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const int r = lane + 32 * k;
                if (r < n) g.b[b_offset(g, r, col, e)] = x[k];
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// potrs, one right-hand side, n > 96 (the stream kernel, stream.cuh; potrs_kernel_for):
// Ml = L, Mu = L^T, both solves scaled by L's diagonal, no permutation. Logical L(i, j)
// is fast-grid (i, j), or (swap) (j, i): Ml's columns are contiguous where swap, Mu's
// where not.
template <class T>
struct PotrsStream {
    // Every field a reference into the kernel's __grid_constant__ parameter (as GetrsStream).
    const PotrsArgs<T> &g;
    const T *const &p;
    const int64_t &ld, &stride;
    const bool &soa;
    T *const &b;
    __device__ explicit PotrsStream(const PotrsArgs<T> &a)
        : g(a), p(a.a.p), ld(a.a.ld), stride(a.a.stride), soa(a.a.soa), b(a.b) {}
    PotrsStream(const PotrsArgs<T> &&) = delete;  // never of a temporary
    __device__ bool colm(bool up) const { return g.a.swap != up; }
    __device__ bool scale(bool) const { return true; }
    __device__ bool live(int64_t e) const { return e < g.batch && !(g.skip && g.skip[e] != 0); }  // posv: factored
    template <int R>
    __device__ void begin(int64_t, bool, int lane, int (&perm)[R]) const {
#pragma unroll
        for (int k = 0; k < R; ++k) perm[k] = lane + 32 * k;
    }
    __device__ bool gather() const { return false; }
    __device__ bool scatter() const { return false; }
    __device__ int64_t b_at(int row, int col, int64_t e) const {
        const int64_t idx = g.row_major_b ? int64_t(row) * g.ldb + col : int64_t(col) * g.ldb + row;
        return g.soa_b ? idx * g.sb + e : e * g.sb + idx;
    }
};

template <class T, int R, int NR>
__global__ void CHOL_MAXNREG potrs_stream_kernel(const __grid_constant__ PotrsArgs<T> g) {
    extern __shared__ __align__(16) unsigned char chol_smem[];
    stream_solves<T, R, NR>(PotrsStream<T>(g), g.n, g.nrhs, g.batch, reinterpret_cast<T *>(chol_smem));
}

// ---------------------------------------------------------------------------------
// Kernel selection (the same for plan and execute: a function of the problem only)

const char *tname(int32_t dtype) { return dtype == APAIRS_DTYPE_F64 ? "f64" : "f32"; }

template <class T, int N, bool GRID = false>
KernelSpec potrf_thread() {
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&potrf_thread_kernel<T, N, GRID>);
    k.unit_shared = round16(2 * int64_t(32) * chol_pad_odd(tri_size(N)) * int64_t(sizeof(T)) + 32 * 4);
    k.block_shared = tri_map_bytes(N);
    return k;
}

template <class T, int N>
KernelSpec potrf_thread_sync() {
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&potrf_thread_sync_kernel<T, N>);
    k.unit_shared = round16(int64_t(32) * chol_pad_odd(tri_size(N)) * int64_t(sizeof(T)) + 32 * 4);
    k.block_shared = 0;
    return k;
}

template <class T, int N>
KernelSpec potrs_thread() {
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&potrs_thread_kernel<T, N>);
    k.unit_shared = round16(2 * int64_t(32) * chol_pad_odd(tri_size(N) + N) * int64_t(sizeof(T)) + 32 * 4);
    k.block_shared = tri_map_bytes(N);
    return k;
}

// The thread kernels for n = 1 .. 8 (Make<T, N>() for each N).
template <class T, template <class, int> class Make>
KernelSpec thread_for(int n) {
    switch (n) {
    case 1: return Make<T, 1>::get();
    case 2: return Make<T, 2>::get();
    case 3: return Make<T, 3>::get();
    case 4: return Make<T, 4>::get();
    case 5: return Make<T, 5>::get();
    case 6: return Make<T, 6>::get();
    case 7: return Make<T, 7>::get();
    default: return Make<T, 8>::get();
    }
}
template <class T, int N>
struct MakePotrf {
    static KernelSpec get() { return potrf_thread<T, N>(); }
};
template <class T, int N>
struct MakePotrfSync {
    static KernelSpec get() { return potrf_thread_sync<T, N>(); }
};
template <class T, int N>
struct MakePotrs {
    static KernelSpec get() { return potrs_thread<T, N>(); }
};

constexpr int kThreadMaxN = 8;
constexpr int kWarpMaxN = 32;

// The thread and warp kernels stage through the triangle map, whose fast-grid indices
// are 32-bit: they take a matrix only when its largest index (n - 1) ld + n - 1 fits.
bool map_fits(const Matrix &m, int64_t n) { return (n - 1) * m.ld + n <= INT32_MAX; }

// Smaller shared-memory carveouts for AoS warp kernels, which stage each element by 4- or
// 8-byte cp.async through L1: each load's line is held in L1 until it lands, and the
// largest carveout leaves 28 KB of L1 (as getrf's, lu.cu). H200 runs 427-428, three
// rounds each against the largest carveout: potrs f64 n = 16 at 132 KB 0.091 -> 0.079
// ms (20 warps an SM either way), f32 n = 16 0.116 -> 0.113; at 164 KB potrs f64 n = 32
// 0.084 -> 0.076 (25 -> 18 warps), f32 n = 32 0.102 -> 0.095, and potrf f64 n = 32 0.176-
// 0.179 -> 0.169 (8 warps either way). 100 KB was no faster and 64 KB slower; potrf f64
// n = 16 and f32 n = 16, 32 no faster under any (f32 n = 16 0.183 at the largest, 0.182-
// 0.200 at 196, 164 and 132 KB), so they keep the largest.
constexpr int64_t kCholAosSharedPerSm[2] = {132 * 1024, 164 * 1024};

template <class T, int C>
KernelSpec potrf_warp(bool soa) {
    KernelSpec k;
    k.fn = soa ? reinterpret_cast<const void *>(&potrf_warp_kernel<T, C, true>)
               : reinterpret_cast<const void *>(&potrf_warp_kernel<T, C, false>);
    k.group = CholWarpShape<T, C, false>::G;
    k.unit_elements = CholWarpShape<T, C, false>::EPT;
    k.unit_shared = soa ? CholWarpShape<T, C, true>::TEAM_BYTES : CholWarpShape<T, C, false>::TEAM_BYTES;
    if (!soa && sizeof(T) == 8 && C == 32) k.shared_per_sm = kCholAosSharedPerSm[1];
    return k;
}

template <class T>
KernelSpec potrf_warp_for(int n, bool soa) {
    return n <= 16 ? potrf_warp<T, 16>(soa) : n <= 24 ? potrf_warp<T, 24>(soa) : potrf_warp<T, 32>(soa);
}

template <class T, int C>
KernelSpec potrs_warp(bool coop) {
    KernelSpec k;
    k.fn = coop ? reinterpret_cast<const void *>(&potrs_warp_kernel<T, C, true>)
                : reinterpret_cast<const void *>(&potrs_warp_kernel<T, C, false>);
    k.group = CholSolveShape<T, C>::G;
    k.unit_elements = CholSolveShape<T, C>::EPT;
    k.unit_shared = round16(int64_t(CholSolveShape<T, C>::EPT) * CholSolveShape<T, C>::ES * int64_t(sizeof(T)));
    if (!coop) k.shared_per_sm = kCholAosSharedPerSm[C == 16 ? 0 : 1];
    return k;
}

// The rows kernel for n > 32 with at most kRowsMaxRhs right-hand sides (launch.cuh).
bool potrs_rows(const PotrsProblem &pb) { return pb.n > kWarpMaxN && pb.nrhs <= kRowsMaxRhs; }

// The rows kernel: n > 32, or a matrix whose fast-grid indices pass 32 bits (the map's
// limit) outside the synchronous thread kernel's shapes (64-bit walks).
bool potrf_sync(const PotrfProblem &pb) {
    const int64_t n = pb.n;
    return n <= kThreadMaxN && !pb.a.soa && ((pb.dtype == APAIRS_DTYPE_F64 && n >= 3) || n == 8);
}
bool potrf_rows(const PotrfProblem &pb) {
    return pb.n > kWarpMaxN || (!map_fits(pb.a, pb.n) && !potrf_sync(pb));
}

template <class T>
const void *potrf_rows_fn(int rows_per_lane) {
    return rows_per_lane <= 1   ? reinterpret_cast<const void *>(&potrf_rows_kernel<T, 1>)
           : rows_per_lane == 2 ? reinterpret_cast<const void *>(&potrf_rows_kernel<T, 2>)
           : rows_per_lane == 3 ? reinterpret_cast<const void *>(&potrf_rows_kernel<T, 3>)
                                : reinterpret_cast<const void *>(&potrf_rows_kernel<T, 4>);
}

template <class T>
const void *potrs_rows_fn(int rows_per_lane) {
    return rows_per_lane <= 2   ? reinterpret_cast<const void *>(&potrs_rows_kernel<T, 2>)
           : rows_per_lane == 3 ? reinterpret_cast<const void *>(&potrs_rows_kernel<T, 3>)
                                : reinterpret_cast<const void *>(&potrs_rows_kernel<T, 4>);
}

KernelSpec potrf_kernel_for(const PotrfProblem &pb) {
    const bool f64 = pb.dtype == APAIRS_DTYPE_F64;
    const int n = int(pb.n);
    const int64_t es = int64_t(pb.elem_size());
    KernelSpec k;
    if (potrf_rows(pb)) {
        const int R = (n + 31) / 32;
        k = f64 ? rows_kernel_spec(potrf_rows_fn<double>(R), potrf_rows_slot<double>(n))
                : rows_kernel_spec(potrf_rows_fn<float>(R), potrf_rows_slot<float>(n));
        k.name = fmt::format("potrf_rows<{}, 32 lanes per element, {} rows each>", tname(pb.dtype), R);
        k.why = fmt::format("n = {} ({}): a warp per element, its packed triangle staged in shared memory ({} "
                            "bytes) and factored there left-looking, {} columns a pass over the rows, {} rows a lane",
                            n, n > kWarpMaxN ? fmt::format("above {}", kWarpMaxN) : "ld past 32-bit indices",
                            int64_t(tri_size(n)) * es, kPotrfRowsCols, R);
    } else if (potrf_sync(pb)) {
        // AoS f64 n = 3 .. 8: the synchronous staging (83 % / 70 % at n = 4 / 8 where the
        // cp.async kernel measured 56 % / 68 %); 64-bit walks, so no map limit. AoS f32
        // n = 8 too (the cp.async kernel: 63 % of the bound where f64 took 74 %), its
        // loads by the grid walk (32-bit indices; else the 64-bit walk).
        k = f64 ? thread_for<double, MakePotrfSync>(n) : potrf_thread_sync<float, 8>();
        k.model = Model::ThreadPerElement;
        k.group = 1;
        k.unit_threads = 32;
        k.unit_elements = 32;
        k.name = fmt::format("potrf_thread<{}, n={}, synchronous staging>", tname(pb.dtype), n);
        k.why = fmt::format("n = {} (at most {}): one thread factors a whole element, its {} triangle entries in "
                            "registers, each warp staging its 32 elements' fast grids in memory order through "
                            "shared memory (8 or 16 loads in flight a lane)",
                            n, kThreadMaxN, tri_size(n));
    } else if (n <= kThreadMaxN) {  // (the map fits: else the rows kernel)
        // AoS f32 n = 4: the copy-out by the grid walk (f64 AoS n >= 3 and f32 AoS n = 8
        // took the branch above).
        const bool grid = !f64 && !pb.a.soa && n == 4;
        k = f64    ? thread_for<double, MakePotrf>(n)
            : grid ? potrf_thread<float, 4, true>()
                   : thread_for<float, MakePotrf>(n);
        k.model = Model::ThreadPerElement;
        k.group = 1;
        k.unit_threads = 32;
        k.unit_elements = 32;
        k.name = fmt::format("potrf_thread<{}, n={}{}>", tname(pb.dtype), n, grid ? ", grid walk" : "");
        k.why = fmt::format("n = {} (at most {}): one thread factors a whole element, its {} triangle entries in "
                            "registers, each warp staging its 32 elements' triangles through shared memory in "
                            "memory order{}",
                            n, kThreadMaxN, tri_size(n),
                            grid ? "; the copy-out walks the n x n grids with per-lane offsets worked out once" : "");
    } else {  // n <= 32, the map fits
        k = f64 ? potrf_warp_for<double>(n, pb.a.soa) : potrf_warp_for<float>(n, pb.a.soa);
        k.model = Model::WarpGroup;
        k.unit_threads = 32;
        k.block_shared = tri_map_bytes(n);
        k.name = fmt::format("potrf_warp<{}, {} lanes per element>", tname(pb.dtype), k.group);
        const bool fold = n <= 16 || n > 24;  // CholWarpShape<T, C>::FOLD: C != 24
        k.why = fmt::format("n = {} (at most {}): {} lanes per element, {} of the factor each in registers, "
                            "right-looking, the pivot by a shuffle and each column shared through shared memory",
                            n, kWarpMaxN, k.group,
                            !fold ? "one row"
                            : f64 ? "two rows (r and C - 1 - r, C = 16 or 32)"
                                  : "four rows (r, C/2 - 1 - r, C/2 + r and C - 1 - r, C = 16 or 32)");
    }
    return k;
}

KernelSpec potrs_kernel_for(const PotrsProblem &pb) {
    const bool f64 = pb.dtype == APAIRS_DTYPE_F64;
    const int n = int(pb.n), nrhs = int(pb.nrhs);
    const int64_t es = int64_t(pb.elem_size());
    // G: nrhs rounded up to a power of two (at most 128). A team holds 32 / G elements
    // (one from G = 32 on), each its factor and G columns of B; where that exceeds 96 KiB,
    // below 32 grow G (fewer elements per team), above 32 shrink it (fewer columns per
    // chunk; the chunk loop takes the rest), so that n = 128 fits every device's block.
    const bool fits = map_fits(pb.a, n);
    if (nrhs == 1 && n <= kThreadMaxN && fits) {
        KernelSpec k = f64 ? thread_for<double, MakePotrs>(n) : thread_for<float, MakePotrs>(n);
        k.model = Model::ThreadPerElement;
        k.group = 1;
        k.unit_threads = 32;
        k.unit_elements = 32;
        k.name = fmt::format("potrs_thread<{}, n={}>", tname(pb.dtype), n);
        k.why = fmt::format("nrhs = 1, n = {} (at most {}): one thread solves a whole element, the factor and x in "
                            "registers, the operands staged by each warp through shared memory in memory order",
                            n, kThreadMaxN);
        return k;
    }
    if (nrhs == 1 && n > kThreadMaxN && n <= kWarpMaxN && fits) {
        const bool coop = pb.a.soa || pb.b.soa;
        KernelSpec k = f64 ? (n <= 16 ? potrs_warp<double, 16>(coop) : potrs_warp<double, 32>(coop))
                           : (n <= 16 ? potrs_warp<float, 16>(coop) : potrs_warp<float, 32>(coop));
        k.model = Model::WarpGroup;
        k.unit_threads = 32;
        k.block_shared = tri_map_bytes(n);
        k.name = fmt::format("potrs_warp<{}, {} lanes per element>", tname(pb.dtype), k.group);
        k.why = fmt::format("nrhs = 1, n = {}: {} lanes per element, one row of x each in a register, both "
                            "triangular solves by columns with the solved entry broadcast by a shuffle",
                            n, k.group);
        return k;
    }
    // One right-hand side past n = 96 (four rows a lane): the stream kernel, whose two
    // tiles a warp (17 KB in f64) keep more warps an SM than the rows kernel's whole
    // triangle (38 to 66 KB in f64). H200 run 338, rows against stream: n = 128 f64 0.270 /
    // 0.395 -> 0.165 / 0.290 ms (AoS / SoA), f32 0.243 / 0.322 -> 0.175 / 0.261; n = 64 the
    // rows kernel (f64 0.107 / 0.169 against 0.145 / 0.231, f32 0.132 / 0.200 against 0.185
    // / 0.312), whose triangle there takes as much shared memory as the tiles (and just past
    // 64 no more). Run 344 timed n = 64 .. 128 by eights (with the SoA carveout): the
    // switch past 96 is within 8 % of the faster kernel at every size (f64 SoA 88 and 96:
    // the stream kernel 5-8 % faster; f32 SoA 104-120, AoS 104: the rows kernel 1-7 %
    // faster). Several right-hand sides stay on the rows kernel, which reads the factor
    // once for all of them (the stream kernel's chunks of 4 spilled 16-248 bytes at 128
    // registers).
    if (potrs_rows(pb) && nrhs == 1 && n > 96) {
        KernelSpec k = rows_kernel_spec(f64 ? reinterpret_cast<const void *>(&potrs_stream_kernel<double, 4, 1>)
                                            : reinterpret_cast<const void *>(&potrs_stream_kernel<float, 4, 1>),
                                        f64 ? stream_slot<double>() : stream_slot<float>());
        k.shared_per_sm = stream_shared_per_sm(pb.a.soa, f64, n, 1);
        k.name = fmt::format("potrs_stream<{}, 32 lanes per element, 4 rows each>", tname(pb.dtype));
        k.why = fmt::format("nrhs = 1, n = {} (above 96): a warp per element, x in registers (4 rows a lane), both "
                            "triangular solves by columns with the solved entry broadcast by a shuffle, the factor "
                            "streamed in 32 x 32 tiles through {} bytes of shared memory a warp",
                            n, k.unit_shared);
        return k;
    }
    if (potrs_rows(pb)) {
        const int R = (n + 31) / 32;
        KernelSpec k = rows_kernel_spec(f64 ? potrs_rows_fn<double>(R) : potrs_rows_fn<float>(R),
                                        f64 ? potrs_rows_slot<double>(n) : potrs_rows_slot<float>(n));
        k.name = fmt::format("potrs_rows<{}, 32 lanes per element, {} rows each>", tname(pb.dtype), R);
        k.why = fmt::format("nrhs = {} (at most {}), n = {} (above {}): a warp per element, its factor staged in "
                            "shared memory ({} bytes), one column of B at a time in registers ({} rows a lane), both "
                            "triangular solves by columns with the solved entry broadcast by a shuffle",
                            nrhs, kRowsMaxRhs, n, kWarpMaxN, k.unit_shared, R);
        return k;
    }
    auto team_shared = [&](int g) { return int64_t(std::max(1, 32 / g)) * chol_pad_odd(tri_size(n) + n * g) * es; };
    constexpr int64_t kBudget = 96 * 1024;
    int G = 1;
    while (G < nrhs && G < 128) G *= 2;
    while (G < 32 && team_shared(G) > kBudget) G *= 2;
    while (G > 32 && team_shared(G) > kBudget) G /= 2;
    KernelSpec k;
    k.fn = f64 ? reinterpret_cast<const void *>(&potrs_kernel<double>)
               : reinterpret_cast<const void *>(&potrs_kernel<float>);
    k.model = G == 1 ? Model::ThreadPerElement : G <= 32 ? Model::WarpGroup : Model::BlockPerElement;
    k.group = G;
    k.unit_threads = std::max(32, G);
    k.unit_elements = std::max(1, 32 / G);
    k.unit_shared = int64_t(k.unit_elements) * chol_pad_odd(tri_size(n) + n * G) * es;
    k.name = fmt::format("potrs<{}, {} threads per element>", tname(pb.dtype), G);
    k.why = fmt::format("nrhs = {}: {} thread{} per element, each solving {} right-hand side{} at a time in shared "
                        "memory against the element's staged factor (n = {}){}",
                        nrhs, G, G == 1 ? "" : "s", G == 1 ? "one" : "one of a chunk of", G == 1 ? "" : "s", n,
                        nrhs > G ? fmt::format(", {} chunks of {} columns", (nrhs + G - 1) / G, G) : "");
    return k;
}

template <class T>
Tri<T> tri_of(const Matrix &m, bool lower, T *p) {
    Tri<T> t;
    t.p = p;
    t.ld = m.ld;
    t.stride = m.stride;
    t.soa = m.soa;
    // Logical L(i, j) = stored (i, j) (lower) or (j, i) (upper, U = L^T); the fast grid
    // is the stored matrix itself (row-major) or its transpose (column-major).
    t.swap = lower != m.row_major;
    return t;
}

}  // namespace

namespace {

// The warp kernels stage SoA operands with the whole block: each entry's accesses cover
// the block's warps x EPT consecutive elements. The occupancy estimator's smallest pick
// (often one or two warps) makes those runs 8 to 32 bytes, a fraction of the 64-byte
// DRAM access; the H100 rows follow the run: 8 bytes 39-40 % of the bound, 16 bytes
// 55-61 %, 32 bytes 88 %, 64 bytes 102 %. So the plan raises the block, in powers of
// two, towards runs of 64 bytes: the largest such block that keeps the occupancy of the
// smallest pick (never below it, nor below a target the caller set), and says so.
CudaConfig plan_warp_soa(const KernelSpec &k, int64_t batch, int device, double occupancy_target, int64_t es,
                         const std::string &what) {
    constexpr int64_t kRun = 64;
    const CudaConfig base = plan_kernel(k, batch, device, occupancy_target, 1, what);
    const int64_t run = int64_t(k.unit_elements) * es;  // bytes per warp per entry
    const int base_units = base.block_threads / k.unit_threads;
    if (run * base_units >= kRun) return base;
    int top = 1;
    while (top < 32 && run * top < kRun) top *= 2;
    for (int u = top; u > base_units && u >= 2; u /= 2) {
        CudaConfig c = plan_kernel(k, batch, device, occupancy_target, u, what);
        if (c.block_threads > base.block_threads &&
            c.choice.chosen.occupancy >= base.choice.chosen.occupancy - 1e-9) {
            c.why_model += fmt::format("; raised from {} to {} threads so that each SoA entry's loads and stores "
                                       "span {} consecutive bytes ({}% occupancy, as at {} threads)",
                                       base.block_threads, c.block_threads,
                                       run * (c.block_threads / k.unit_threads),
                                       int(100 * c.choice.chosen.occupancy + 0.5), base.block_threads);
            return c;
        }
    }
    return base;
}

}  // namespace

CudaConfig plan_potrf_cuda(const PotrfProblem &pb, int device, double occupancy_target) {
    const KernelSpec k = potrf_kernel_for(pb);
    const std::string what = fmt::format("batched potrf n={}", pb.n);
    if (potrf_rows(pb))
        return plan_rows(k, pb.a.soa, int64_t(pb.elem_size()), pb.batch, device, occupancy_target, what);
    if (k.model == Model::WarpGroup && pb.a.soa)
        return plan_warp_soa(k, pb.batch, device, occupancy_target, int64_t(pb.elem_size()), what);
    return plan_kernel(k, pb.batch, device, occupancy_target, 1, what);
}

void launch_potrf_cuda(const PotrfProblem &pb, const CudaConfig &cfg, void *stream, void *A, int32_t *info) {
    DeviceScope scope(cfg.device);
    auto fill = [&](auto *p) {
        using T = std::remove_pointer_t<decltype(p)>;
        PotrfArgs<T> g;
        g.a = tri_of<T>(pb.a, pb.lower, p);
        g.info = info;
        g.n = int(pb.n);
        g.batch = pb.batch;
        constexpr int64_t W = 16 / int64_t(sizeof(T));
        g.vec = !pb.a.soa && !g.a.swap && pb.a.ld % W == 0 && pb.a.stride % W == 0 &&
                reinterpret_cast<uintptr_t>(p) % 16 == 0;
        return g;
    };
    if (pb.dtype == APAIRS_DTYPE_F64)
        launch_planned(cfg, stream, fill(static_cast<double *>(A)), "batched potrf kernel launch");
    else
        launch_planned(cfg, stream, fill(static_cast<float *>(A)), "batched potrf kernel launch");
}

CudaConfig plan_potrs_cuda(const PotrsProblem &pb, int device, double occupancy_target) {
    const KernelSpec k = potrs_kernel_for(pb);
    const std::string what = fmt::format("batched potrs n={} nrhs={}", pb.n, pb.nrhs);
    if (potrs_rows(pb))
        return plan_rows(k, pb.a.soa, int64_t(pb.elem_size()), pb.batch, device, occupancy_target, what);
    // potrs_warp_kernel: block-wide staging when either operand is SoA.
    if (k.fn == potrs_warp<float, 16>(true).fn || k.fn == potrs_warp<float, 32>(true).fn ||
        k.fn == potrs_warp<double, 16>(true).fn)
        return plan_warp_soa(k, pb.batch, device, occupancy_target, int64_t(pb.elem_size()), what);
    if (k.fn == potrs_warp<double, 32>(true).fn) {
        // f64, n = 17 .. 32, SoA: blocks of 16 warps (each entry's loads and stores whole
        // 128-byte lines) under a 164 KB carveout: one block an SM (16 warps, 68 KB of
        // lines in flight) and 92 KB of L1 for them. The largest carveout gave one block of
        // 25 warps (runs of 200 bytes, lines in flight through 28 KB of L1): 0.113 ms at
        // n = 32 (run 32, round 1), where AoS, whole lines, took 0.095.
        KernelSpec kc = k;
        kc.shared_per_sm = kStreamSoaSharedPerSm;  // 164 KB, as the SoA stream kernels (stream.cuh)
        CudaConfig c = plan_kernel(kc, pb.batch, device, occupancy_target, 16, what);
        if (c.block_threads == 16 * 32) {
            c.why_model += "; blocks of 16 warps (128-byte runs an entry)";
            return c;
        }
        return plan_warp_soa(k, pb.batch, device, occupancy_target, int64_t(pb.elem_size()), what);
    }
    return plan_kernel(k, pb.batch, device, occupancy_target, 1, what);
}

namespace {

// potrs over the factors in A; with `skip`, elements whose skip[e] != 0 are left alone.
void potrs_launch(const PotrsProblem &pb, const CudaConfig &cfg, void *stream, const void *A, void *B,
                  const int32_t *skip) {
    DeviceScope scope(cfg.device);
    auto fill = [&](auto *p) {
        using T = std::remove_pointer_t<decltype(p)>;
        PotrsArgs<T> g;
        g.a = tri_of<const T>(pb.a, pb.lower, static_cast<const T *>(A));
        g.b = p;
        g.skip = skip;
        g.ldb = pb.b.ld;
        g.sb = pb.b.stride;
        g.soa_b = pb.b.soa;
        g.row_major_b = pb.b.row_major;
        g.n = int(pb.n);
        g.nrhs = int(pb.nrhs);
        g.g = cfg.group;
        g.batch = pb.batch;
        return g;
    };
    if (pb.dtype == APAIRS_DTYPE_F64)
        launch_planned(cfg, stream, fill(static_cast<double *>(B)), "batched potrs kernel launch");
    else
        launch_planned(cfg, stream, fill(static_cast<float *>(B)), "batched potrs kernel launch");
}

PotrfProblem potrf_of(const PosvProblem &pb) {
    PotrfProblem f;
    f.dtype = pb.dtype, f.lower = pb.lower, f.n = pb.n, f.a = pb.a, f.info = pb.info, f.batch = pb.batch;
    return f;
}
PotrsProblem potrs_of(const PosvProblem &pb) {
    PotrsProblem s;
    s.dtype = pb.dtype, s.lower = pb.lower, s.n = pb.n, s.nrhs = pb.nrhs, s.a = pb.a, s.b = pb.b;
    s.batch = pb.batch;
    return s;
}

}  // namespace

void launch_potrs_cuda(const PotrsProblem &pb, const CudaConfig &cfg, void *stream, const void *A, void *B) {
    potrs_launch(pb, cfg, stream, A, B, nullptr);
}

PosvConfig plan_posv_cuda(const PosvProblem &pb, int device, double occupancy_target) {
    return {plan_potrf_cuda(potrf_of(pb), device, occupancy_target),
            plan_potrs_cuda(potrs_of(pb), device, occupancy_target)};
}

void launch_posv_cuda(const PosvProblem &pb, const PosvConfig &cfg, void *stream, void *A, void *B,
                      int32_t *info) {
    launch_potrf_cuda(potrf_of(pb), cfg.potrf, stream, A, info);
    potrs_launch(potrs_of(pb), cfg.potrs, stream, A, B, info);
}

}  // namespace apairs::batched
