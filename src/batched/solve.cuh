// Staging, copy-out and triangular solves of the rows kernels (a warp an element:
// cholesky.cu's potrf_rows_kernel and potrs_rows_kernel, lu.cu's getrs_rows_kernel).
// The solves: one right-hand side x of an n x n triangular system held across a
// warp's registers, lane l holding rows l, l + 32, ... (R = ceil(n / 32) of them; rows
// past n hold 0 and are never updated), the matrix read through m(r, j) from the
// element's factor staged in shared memory.
//
// Both solves go by columns: the lane holding x_j scales it by inv_j (the diagonal's
// reciprocal, taken once; UNIT: a unit diagonal, no scaling), a shuffle broadcasts it,
// and every row the column reaches takes x_r = fma(-m(r, j), x_j, x_r). So row r's sum
// runs over j in the order the solve takes the columns (lower: j = 0 .. r - 1; upper: j
// = n - 1 down to r + 1), as in the warp kernels of n <= 32 (potrs_warp_kernel).
// Multiplying by the reciprocal rounds twice where a division rounds once: other bits,
// the same backward stability (apairs.h).
#pragma once

#include "batched/walker.cuh"

namespace apairs::batched {

// Staging of one element's n x n fast grid (entry (r, c) at src[(r ld + c) es]: AoS
// es = 1, SoA es = the batch stride) into shared memory by cp.async, in two forms.
// warp_stage_grid (the square grids of getrf's and getrs's rows kernels, n <= 64): the
// warp's lanes on 32 consecutive positions of the grid at a time, walked without
// divisions from w = Walker(lane, 32, n, n) (made once per kernel), where dst(r, c) >= 0
// says where. warp_stage_rows (long rows of a triangle, warp_stage_tri): a row at a time,
// lanes across its columns [cols(r).x, cols(r).y), to sh[dst(r, c)]. Rows cost ~75
// instructions each in loop overhead, so short rows favour the walk (H200 runs 220-221:
// getrs f32 n = 16, 1,210 of 1,835 instructions an element in the row loop, issue slots
// 72 % busy; 0.637 -> 0.421 ms with the walk), long ones the rows (then getrs f64 n = 128
// 0.765 -> 0.930 ms with the walk; potrs n = 64 and 128, where half the walk's positions
// fall in the other triangle, 2-16 %).
template <class T, class Dst>
__device__ __forceinline__ void warp_stage_grid(T *sh, const T *src, int64_t ld, int64_t es, Walker w, Dst dst) {
#pragma unroll 4
    for (; w.d2 == 0; w.advance()) {
        const int so = dst(w.d1, w.d0);
        if (so >= 0) cp_async_one(sh + so, src + (w.d1 * ld + w.d0) * es);
    }
}
// SoA operands, by the whole block: its W = blockDim / 32 elements eb, eb + 1, ... (those
// below batch) staged together, each grid entry's W values one run of consecutive
// addresses (whole sectors from W = 8 in f32, 4 in f64), where each warp on its own would
// use 4 or 8 bytes of every 32-byte sector; element q to sh + q slot + dst(r, c), w =
// Walker(threadIdx.x, blockDim.x, W, n) (made once).
template <class T, class Dst>
__device__ __forceinline__ void block_stage_soa(T *sh, int64_t slot, const T *p, int64_t ld, int64_t stride,
                                                int64_t eb, int64_t batch, int n, Walker w, Dst dst) {
#pragma unroll 4
    for (; w.d2 < n; w.advance()) {
        const int so = dst(w.d2, w.d1);
        if (so >= 0 && eb + w.d0 < batch)
            cp_async_one(sh + w.d0 * slot + so, p + (w.d2 * ld + w.d1) * stride + eb + w.d0);
    }
}
template <class T, class Cols, class Dst>
__device__ __forceinline__ void warp_stage_rows(T *sh, const T *src, int64_t ld, int64_t es, int n, int lane,
                                                Cols cols, Dst dst) {
    for (int r = 0; r < n; ++r) {
        const int2 cr = cols(r);
        for (int c = cr.x + lane; c < cr.y; c += 32) cp_async_one(sh + dst(r, c), src + (r * ld + c) * es);
    }
}

// A packed triangle's stored half of an n x n fast grid, visited in memory order by a
// warp's lanes (positions lane, lane + 32, ...): fast row r holds columns [0, r], or
// (upper) [r, n). f(r, c) for each. Every lane is busy but in the last round, where
// warp_stage_rows leaves the lanes past a short row idle and works out each row's
// 64-bit addresses in a loop of its own: H200 run 226, potrf f64 n = 64, staging and
// copy-out by rows took 10 k of the 21 k instructions an element.
template <class F>
__device__ __forceinline__ void warp_tri_walk(int n, bool upper, int lane, F f) {
    int r = 0, c = lane;
    for (;;) {
        if (upper)
            while (c >= n && r < n) c -= n - ++r;  // past row r's end: row r + 1 starts at column r + 1
        else
            while (c > r) c -= ++r;  // past row r's r + 1 entries
        if (r >= n) break;
        f(r, c);
        c += 32;
    }
}

// One packed triangle's staging into a warp's slot, fast row r holding columns [0, r] or
// (upper) [r, n) (potrf, potrs), the form chosen by size (R = ceil(n / 32) rows a lane):
// the triangle walk at n <= 64 (H200 run 227: potrs f64 n = 64 0.119 -> 0.107 ms), rows
// beyond (the walk no faster at n = 128: potrf 0.848 / 0.841 ms in runs 225 / 227, potrs
// 0.282 with it in run 227, 0.270 without in run 228). A square grid (getrf's and getrs's
// rows kernels, n <= 64) takes the grid walk (runs 220-221, above).
template <int R, class T, class Dst>
__device__ __forceinline__ void warp_stage_tri(T *sh, const T *src, int64_t ld, int64_t es, int n, bool upper,
                                               int lane, Dst dst) {
    if constexpr (R <= 2)
        warp_tri_walk(n, upper, lane, [&](int r, int c) { cp_async_one(sh + dst(r, c), src + (r * ld + c) * es); });
    else
        warp_stage_rows(
            sh, src, ld, es, n, lane, [&](int r) { return upper ? make_int2(r, n) : make_int2(0, r + 1); }, dst);
}

// The rows kernels' staging of one round of their block-uniform element loop: a SoA
// factor by the whole block where it has several warps (coop: block_stage_soa into slots
// `slot` apart, dst(r, c) the offset in one), else each warp whose element is live its own
// (own(), warp_stage_grid or warp_stage_tri). The barrier first: the previous round's
// readers of the slots are done. The caller commits and waits.
template <class T, class Dst, class Own>
__device__ __forceinline__ void rows_stage(bool coop, bool live, T *base, int64_t slot, const T *p, int64_t ld,
                                           int64_t stride, int64_t eb, int64_t batch, int n, const Walker &wb,
                                           Dst dst, Own own) {
    if (coop) {
        __syncthreads();
        block_stage_soa(base, slot, p, ld, stride, eb, batch, n, wb, dst);
    } else if (live) {
        __syncwarp();
        own();
    }
}

// potrf_rows_kernel's copy-out of a SoA block (block_stage_soa's mirror image): src(q, r,
// c) is the shared offset of element q's entry (r, c), or -1 to leave it alone.
template <class T, class Src>
__device__ __forceinline__ void block_store_soa(T *p, int64_t ld, int64_t stride, const T *sh, int64_t slot,
                                                int64_t eb, int64_t batch, int n, Walker w, Src src) {
#pragma unroll 4
    for (; w.d2 < n; w.advance()) {
        const int so = src(w.d0, w.d2, w.d1);
        if (so >= 0 && eb + w.d0 < batch) p[(w.d2 * ld + w.d1) * stride + eb + w.d0] = sh[w.d0 * slot + so];
    }
}

// Solves M x = x for lower-triangular M (M(r, j), r > j; inv[k]: 1 / M(r, r) of row
// r = lane + 32 k).
template <class T, int R, bool UNIT, class M>
__device__ __forceinline__ void warp_lower_solve(T (&x)[R], const T (&inv)[R], int n, int lane, M m) {
#pragma unroll
    for (int kj = 0; kj < R; ++kj) {
#pragma unroll 8
        for (int jl = 0; jl < 32; ++jl) {
            const int j = 32 * kj + jl;
            if (j >= n) break;  // uniform
            if (!UNIT && lane == jl) x[kj] *= inv[kj];
            const T y = __shfl_sync(0xffffffffu, x[kj], jl);
#pragma unroll
            for (int k = kj; k < R; ++k) {
                const int r = lane + 32 * k;
                if ((k > kj || lane > jl) && r < n) x[k] = fma(-m(r, j), y, x[k]);
            }
        }
    }
}

// Solves M x = x for upper-triangular M (M(r, j), r < j).
template <class T, int R, bool UNIT, class M>
__device__ __forceinline__ void warp_upper_solve(T (&x)[R], const T (&inv)[R], int n, int lane, M m) {
#pragma unroll
    for (int kj = R - 1; kj >= 0; --kj) {
#pragma unroll 8
        for (int jl = 31; jl >= 0; --jl) {
            const int j = 32 * kj + jl;
            if (j >= n) continue;  // uniform
            if (!UNIT && lane == jl) x[kj] *= inv[kj];
            const T y = __shfl_sync(0xffffffffu, x[kj], jl);
#pragma unroll
            for (int k = 0; k <= kj; ++k)
                if (k < kj || lane < jl) x[k] = fma(-m(lane + 32 * k, j), y, x[k]);
        }
    }
}

}  // namespace apairs::batched
