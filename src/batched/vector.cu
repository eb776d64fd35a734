// CUDA engine of the batched family: dot (r_e = x_e . y_e) and gemv
// (y_e = alpha op(A_e) x_e + beta y_e). Both are memory-bound: every kernel reads each
// entry once, in whole sectors, with as many bytes in flight per thread as registers allow.
//
// Dot is the gemv of a 1 x n matrix (x) and a vector (y): one set of kernels serves both,
// on op(A) rows x cols with entry (i, l) of element e at a + e * ae + i * ar + l * ac.
// Ha et al. (2013)'s execution models, chosen by layout, size and batch count:
//
//   SoA: thread-per-element (vec_soa_kernel). Entry (i, l) of consecutive elements is
//     contiguous, so a warp's 32 elements load whole lines; each thread keeps RT row sums
//     of EW elements 32 apart in registers (RT x EW = 8; f32 rows of 1 where 2 would
//     fill 7/8 of the device: EW = 4 adjacent elements, each entry's 4 in one 16-byte
//     load, a warp's load 512 bytes, where 32 apart it was 128). Rows of one element (EW
//     = 1) or of 4 adjacent ones take the loads of 8 or 4 columns before their fmas
//     (H200 run 300: f32 dot SoA n = 16..512 89-98 % -> 93-101 % of the bound). Few
//     elements: EW = 1, and W warps share 32 elements, a warp per row tile (no
//     reduction, hence no barrier); few elements of more than 8 rows, with room for
//     twice the warps, take tiles of 4 rows.
//     Fewer still, with long rows (dot n = 4096, gemv n = 128): vec_soa_split_kernel, whose
//     warps also split the columns into ranges of >= 64, partial sums added in a fixed
//     order through shared memory; where a block of 32 warps for each 32 elements still
//     leaves half the device idle, several blocks share the 32 elements' row tiles
//     (H200 run 353: gemv f64 n = 128 B = 2048, 64 blocks of 32 warps -> 128, rows of 4
//     a thread where 8: 0.114 -> 0.073 ms).
//   SoA, many elements of 3 rows or more: vec_soa_staged_kernel, thread-per-element too,
//     but each warp stages its entries through its own slots of shared memory by
//     cp.async (four slots of one column of a row tile, three in flight while it sums
//     one), so that the bytes in flight are bounded by shared memory, not by registers;
//     f32 two adjacent elements a lane, each entry's run 256 bytes (H200 run 252, best
//     of two rounds: f32 n = 4, 8, 16 0.123 / 0.101 / 0.091 -> 0.110 / 0.092 / 0.085 ms,
//     f64 n = 4 0.109 -> 0.103; run 255, the loop's instructions halved: f32 n = 32, 64
//     0.080 / 0.075 -> 0.077 / 0.071).
//   AoS, op(A)'s rows contiguous, on the 16-byte grid (ld and the element stride multiples
//     of 16 bytes; rows of at most 64 chunks), with elements enough to fill the device:
//     vec_flat_kernel takes the batch as one stream of rows (each element's padded to a
//     power of two), GL lanes per row and U x 32 / GL consecutive rows per warp at once,
//     every load of A and x issued before the first sum (U x K 16-byte chunks per lane):
//     a warp's loads cover consecutive rows of consecutive elements, whole sectors, with
//     no per-element setup. Rows of 2 floats go two to a lane. 4 rows per lane: x loaded
//     once per element among them, the sums of >= 4 lanes reduced together (not f64
//     dot: a tree per row there).
//   The same with packed elements and rows of two chunks or more, on sm_90:
//     vec_bulk_kernel, the rows staged in shared memory by bulk copies (two stages of
//     about 32 KB a block, one in flight while the other is summed), so that the bytes
//     in flight are bounded by shared memory, not by registers (H200: dot f64 n = 16..64,
//     f32 n = 16..160 0.28-0.29 -> 0.26-0.27 ms, gemv f64 n = 64 0.082 -> 0.076; runs
//     240-242).
//   AoS, op(A)'s rows contiguous (row-major N, column-major T, and dot), otherwise: a group of
//     G = GI x GO threads per element (vec_rows_kernel): GI lanes across a row in 16-byte
//     chunks, GO across rows; each row's sum is reduced over its GI lanes by shuffles.
//     G = 1 is thread-per-element (rows of at most one chunk), G <= 32 warp-group, and
//     for few elements GO grows past a warp: block-per-element, warps on distinct rows.
//   AoS, op(A)'s columns contiguous (row-major T, column-major N): G = GI x GO threads
//     (vec_cols_kernel), GI lanes down a column in chunks, each holding the sums of its
//     rows, GO lanes across columns, reduced by shuffles at the end; for few elements GI
//     grows past a warp (block-per-element, warps on distinct rows).
//
// Chunks are V = 16 / sizeof(T) entries on a grid aligned to the element's address, so
// every whole chunk is one 16-byte load whatever the stride's alignment; only the chunks
// at a row's ends take guarded scalar loads. Where rows do not share an alignment (ld not
// a multiple of V) every chunk takes scalar loads, which the L1 merges into the same
// sectors. The second vector (x; dot's y) is loaded as a vector where its alignment
// matches, else entry by entry (rows kernel: from L1, it is re-read per row).
//
// Accuracy: every sum is formed in double (float products are exact there), each thread
// over its entries in order, then a fixed tree over the group's lanes; alpha and beta
// (rounded to T by the planner) are applied in double, and the result is rounded to T
// once. The host engine (host_vector.cpp) sums in double too.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <fmt/format.h>

#include "batched/cuda.hpp"
#include "batched/launch.cuh"
#include "batched/walker.cuh"
#include "cuda/bulk.cuh"
#include "cuda/device.hpp"
#include "cuda/runtime.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

template <class T>
struct Vec;
template <>
struct Vec<float> {
    using type = float4;
    static constexpr int n = 4;
};
template <>
struct Vec<double> {
    using type = double2;
    static constexpr int n = 2;
};

// Kernel arguments: op(A) rows x cols; entry (i, l) of element e at a[e*ae + i*ar + l*ac],
// x entry l at x[e*xe + l*xi], y entry i at y[e*ye + i*yi]. The shape fields are log2 of
// the group (lg), and of the group's split (rows kernel: lanes across a row; cols kernel:
// lanes across columns; SoA kernel: warps per 32 elements).
template <class T>
struct Args {
    const T *a, *x;
    T *y;
    int64_t ae, ar, ac, xe, xi, ye, yi;
    int rows, cols;
    double alpha, beta;  // already rounded to T; beta = 0 never reads y
    int64_t batch;
    int lg, lg_split, lg_cols;  // lg_cols: SoA split kernel, log2 of the column ranges
    bool uniform;  // AoS: every row (rows kernel) or column (cols kernel) starts at one alignment mod 16 bytes
    bool adj;      // SoA, a thread's EW elements adjacent: their entries' runs line up for one load each
    bool staged;   // SoA staged kernel: A, x and every entry's run on the 16-byte grid (cp.async), else plain loads
};

// The SoA kernels' parameter: Args padded past 128 bytes. With the larger parameter nvcc
// (CUDA 13, sm_90) reads each field from the parameter space where it is used instead of
// loading them all into registers at entry, which leaves the 64 registers of
// __launch_bounds__(1024) to loads in flight: SoA gemv f32 n = 8..64 measured 58% -> 82-88%
// of the bound, f64 n = 8..32 80-82% -> 89-91%, n = 64 54% -> 81% (same source otherwise).
template <class T>
struct SoaArgs : Args<T> {
    int lg_rb;  // split kernel: log2 of the blocks that share each 32 elements' row tiles
    int pad[4];
};
static_assert(sizeof(SoaArgs<float>) > 128 && sizeof(SoaArgs<double>) > 128, "SoaArgs: past 128 bytes");
// ... except f32 4 rows x 2 elements (gemv n = 4), measured faster with Args (86-87% against
// 82-84%). Launches pass SoaArgs to every SoA kernel (Args is its prefix).
template <class T, int RT, int EW>
using SoaParam = std::conditional_t<std::is_same_v<T, float> && RT == 4 && EW == 2, Args<T>, SoaArgs<T>>;

// An address on a 16-byte boundary (where 16-byte loads from it line up).
bool on16(const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <class T>
__device__ __forceinline__ int shift_of(const T *p) {
    return int((reinterpret_cast<uintptr_t>(p) / sizeof(T)) & (Vec<T>::n - 1));
}

template <class T>
__device__ __forceinline__ void unpack(const typename Vec<T>::type &w, T (&v)[Vec<T>::n]) {
    if constexpr (Vec<T>::n == 4) {
        v[0] = w.x, v[1] = w.y, v[2] = w.z, v[3] = w.w;
    } else {
        v[0] = w.x, v[1] = w.y;
    }
}

// The V entries at p (on a 16-byte boundary): one 16-byte load.
template <class T>
__device__ __forceinline__ void load_vec(const T *p, T (&v)[Vec<T>::n]) {
    unpack(__ldg(reinterpret_cast<const typename Vec<T>::type *>(p)), v);
}
// The same from shared memory.
template <class T>
__device__ __forceinline__ void load_shared_vec(const T *p, T (&v)[Vec<T>::n]) {
    unpack(*reinterpret_cast<const typename Vec<T>::type *>(p), v);
}

// Entries [c0, c0 + V) of p that lie in [0, len), zeros elsewhere: one 16-byte load when
// the chunk is whole and `aligned` (p + c0 on a 16-byte boundary), else scalar loads.
template <class T>
__device__ __forceinline__ void load_chunk(const T *p, int c0, int len, bool aligned, T (&v)[Vec<T>::n]) {
    constexpr int V = Vec<T>::n;
    if (aligned && c0 >= 0 && c0 + V <= len) {
        load_vec(p + c0, v);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int c = c0 + k;
            v[k] = c >= 0 && c < len ? __ldg(p + c) : T(0);
        }
    }
}

// y = alpha sum + beta y in double as fma(beta, y, alpha sum) (spelled out, so that every
// kernel rounds the same way whatever the compiler contracts), rounded to T once; beta =
// 0 never reads y.
template <class T>
__device__ __forceinline__ void store_ab(T *p, double sum, double alpha, double beta) {
    const double as = __dmul_rn(alpha, sum);
    *p = T(beta != 0 ? __fma_rn(beta, double(*p), as) : as);
}
// Two consecutive entries as one access (8 or 16 bytes).
template <class T>
using Pair = std::conditional_t<sizeof(T) == 4, float2, double2>;
template <int B, class T>
__device__ __forceinline__ bool is_aligned(const T *p) {
    return reinterpret_cast<uintptr_t>(p) % B == 0;
}
// store_ab of p[0] and p[1] (on 2 sizeof(T) bytes) by one load and one store.
template <class T>
__device__ __forceinline__ void store_ab2(T *p, double s0, double s1, double alpha, double beta) {
    const double a0 = __dmul_rn(alpha, s0), a1 = __dmul_rn(alpha, s1);
    Pair<T> o;
    if (beta != 0) {
        const Pair<T> y = *reinterpret_cast<const Pair<T> *>(p);
        o.x = T(__fma_rn(beta, double(y.x), a0));
        o.y = T(__fma_rn(beta, double(y.y), a1));
    } else {
        o.x = T(a0);
        o.y = T(a1);
    }
    *reinterpret_cast<Pair<T> *>(p) = o;
}
template <class T>
__device__ __forceinline__ void store(T *p, double sum, const Args<T> &g) {
    store_ab(p, sum, g.alpha, g.beta);
}

// ---------------------------------------------------------------------------------
// SoA: thread-per-element, EW elements per thread 32 apart (each load of a warp still
// covers 32 consecutive elements; EW multiplies the bytes in flight for small elements),
// or with ADJ EW adjacent ones (f32 rows of 1, EW = 4: a warp's 16-byte loads cover 128
// consecutive elements); a group of W warps shares 32 EW consecutive elements and splits
// their row tiles of RT rows.

// One row tile [i0, i0 + nr) of elements base + ES j (j < EW; FULL: all in the batch),
// ES = 32, or 1 with ADJ (a thread's EW elements adjacent; VL: each entry's EW of them in
// one 16-byte load, where g.adj says the addresses line up).
// Rows past nr repeat row i0 (the same lines: no extra traffic, no guard in the loop);
// their sums are dropped. ROWS (nr = RT): row offsets t ar free of the thread's state
// (uniform registers); used by the tiles of 4 rows for few elements only (f64 n = 64
// measured 83 -> 89 % of the bound with it, where the same form lost 3-6 points on the
// tiles of 8 rows and in the split kernel).
template <class T, int RT, int EW, bool FULL, bool ROWS = false, bool ADJ = false, bool VL = false>
__device__ __forceinline__ void soa_tile(const Args<T> &g, int64_t base, int i0, int nr) {
    constexpr int ES = ADJ ? 1 : 32;
    static_assert(!VL || (ADJ && FULL && EW == Vec<T>::n), "one 16-byte load an entry");
    double acc[EW][RT];
#pragma unroll
    for (int j = 0; j < EW; ++j)
#pragma unroll
        for (int t = 0; t < RT; ++t) acc[j][t] = 0;
    int64_t roff[RT];
#pragma unroll
    for (int t = 0; t < RT; ++t) roff[t] = (ROWS || t < nr ? t : 0) * g.ar;
    bool ok[EW];
#pragma unroll
    for (int j = 0; j < EW; ++j) ok[j] = FULL || base + ES * j < g.batch;
    const T *ap = g.a + base + i0 * g.ar, *xp = g.x + base;
    // The EW entries of consecutive elements at p (on 16 bytes), as doubles.
    auto load_run = [](const T *p, double(&v)[EW]) {
        if constexpr (VL) {
            T w[EW];
            load_vec(p, w);
#pragma unroll
            for (int j = 0; j < EW; ++j) v[j] = double(w[j]);
        }
    };
    int l = 0;
    if constexpr (RT == 1 && (VL || (FULL && EW == 1))) {
        // One row a thread (dot; gemv of one row), of one element or (VL) of EW adjacent
        // ones by 16-byte loads: the loads of KU columns first, then their fmas in order
        // (the same sums), where the loop below, as compiled, kept 2 loads of 4 bytes in
        // flight (one element: the next column's behind this one's fma) or 4 of 16 (VL).
        // VL takes KU = 4 (60 registers against 46: 32 warps an SM against 40). H200 run
        // 300, three rounds against the loop: f32 dot SoA n = 512, B = 262144, one
        // element a thread 0.286-0.287 -> 0.270-0.273 ms (the VL kernel now takes that
        // batch: 0.256-0.260); VL n = 16 0.287-0.290 -> 0.276-0.279, n = 32 0.277-0.280
        // -> 0.269-0.273, n = 64 0.265-0.273 -> 0.256-0.259; n = 160 0.272-0.273 ->
        // 0.273-0.278, within the spread of run 302 (where KU = 3, 50 registers, gained
        // nothing at n = 160 and lost n = 512: 0.256 -> 0.269 ms).
        constexpr int KU = VL ? 4 : 8;
        for (; l + KU <= g.cols; l += KU) {
            T av[KU][EW], xv[KU][EW];
#pragma unroll
            for (int u = 0; u < KU; ++u) {
                if constexpr (VL) {
                    load_vec(ap + u * g.ac, av[u]), load_vec(xp + u * g.xi, xv[u]);
                } else {
                    av[u][0] = __ldg(ap + u * g.ac), xv[u][0] = __ldg(xp + u * g.xi);
                }
            }
#pragma unroll
            for (int u = 0; u < KU; ++u)
#pragma unroll
                for (int j = 0; j < EW; ++j) acc[j][0] = fma(double(av[u][j]), double(xv[u][j]), acc[j][0]);
            ap += KU * g.ac, xp += KU * g.xi;
        }
    }
#pragma unroll 2
    for (; l < g.cols; ++l, ap += g.ac, xp += g.xi) {
        double xl[EW];
        if constexpr (VL) {
            load_run(xp, xl);
#pragma unroll
            for (int t = 0; t < RT; ++t) {
                double av[EW];
                load_run(ap + roff[t], av);
#pragma unroll
                for (int j = 0; j < EW; ++j) acc[j][t] = fma(av[j], xl[j], acc[j][t]);
            }
        } else {
#pragma unroll
            for (int j = 0; j < EW; ++j) xl[j] = ok[j] ? double(__ldg(xp + ES * j)) : 0.0;
#pragma unroll
            for (int j = 0; j < EW; ++j)
#pragma unroll
                for (int t = 0; t < RT; ++t)
                    if (ok[j]) acc[j][t] = fma(double(__ldg(ap + roff[t] + ES * j)), xl[j], acc[j][t]);
        }
    }
#pragma unroll
    for (int j = 0; j < EW; ++j)
#pragma unroll
        for (int t = 0; t < RT; ++t)
            if (ok[j] && t < nr) store(g.y + base + ES * j + (i0 + t) * g.yi, acc[j][t], g);
}

template <class T, int RT, int EW, bool ADJ = false>
__global__ void __launch_bounds__(1024) vec_soa_kernel(const SoaParam<T, RT, EW> g) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int W = 1 << g.lg_split, wi = warp & (W - 1);
    constexpr int span = 32 * EW;  // elements of a group of W warps
    const int64_t per_block = int64_t(blockDim.x >> 5 >> g.lg_split) * span;
    for (int64_t base = int64_t(blockIdx.x) * per_block + (warp >> g.lg_split) * span + lane * (ADJ ? EW : 1);
         base < g.batch; base += int64_t(gridDim.x) * per_block)
        for (int i0 = wi * RT; i0 < g.rows; i0 += W * RT) {
            const int nr = min(RT, g.rows - i0);
            if (base + (ADJ ? 1 : 32) * (EW - 1) < g.batch) {
                if constexpr (ADJ) {
                    if (g.adj)
                        soa_tile<T, RT, EW, true, false, true, true>(g, base, i0, nr);
                    else
                        soa_tile<T, RT, EW, true, false, true>(g, base, i0, nr);
                } else if constexpr (RT == 4 && EW == 1) {
                    if (nr == RT)
                        soa_tile<T, RT, EW, true, true>(g, base, i0, RT);
                    else
                        soa_tile<T, RT, EW, true>(g, base, i0, nr);
                } else {
                    soa_tile<T, RT, EW, true>(g, base, i0, nr);
                }
            } else
                soa_tile<T, RT, EW, false, false, ADJ>(g, base, i0, nr);
        }
}

// SoA, many elements of 3 rows or more (vec_soa_staged_kernel): thread-per-element as
// above (RT rows a thread), but each warp stages its entries through its own S slots of
// shared memory by cp.async, so that the bytes in flight are bounded by shared memory,
// not by the registers that hold loads (the register-bound kernel above keeps about 7
// loads of 4 bytes a thread in flight for f32 RT = 8). A warp takes groups of 32 EW
// consecutive elements (EW adjacent a lane: runs of 256 bytes an entry for f32 too); a
// stage is one column of one row tile (a run an entry: RT of A, one of x), S - 1 stages
// in flight while the warp sums one. A warp's work is the sequence of its (group, row
// tile) items, stage after stage across items, so the copies run on from one item into
// the next; items are dealt to warps warp-major (warp w of block b is the w gridDim + b-th),
// so that a last partial round spreads over the SMs. The copies' sources are pointers
// stepped a column at a time (aimed anew at each item) and their destinations shared
// addresses worked out once: about 70 instructions a stage for f32, where working each
// copy's address out took 156 and kept the issue slots 60 % busy (runs 254-255). Each
// row's sum runs over the columns in order with fma, as soa_tile's: the same bits. Only
// whole groups are staged; the batch's last partial group, and arrays off the 16-byte
// grid (g.staged false), take soa_tile's loads.
template <class T, int RT, int S, int EW>
__global__ void __launch_bounds__(1024) vec_soa_staged_kernel(const SoaArgs<T> g) {
    constexpr int V = Vec<T>::n;         // values a 16-byte piece
    constexpr int E = 32 * EW;           // elements a group (a run of E values an entry)
    constexpr int P = E / V;             // pieces a run
    constexpr int RPI = 32 / P;          // runs a warp copies at once
    constexpr int STAGE = (RT + 1) * E;  // values a stage: A's RT runs, then x's
    static_assert(P <= 32 && RT % RPI == 0, "whole copies of A's runs");
    static_assert(EW == 1 || (EW == 2 && sizeof(T) == 4), "f32 pairs (8-byte shared loads)");
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int tiles = (g.rows + RT - 1) / RT;
    const int64_t groups = g.batch / E, items = groups * tiles;
    const int64_t nw = int64_t(gridDim.x) * (blockDim.x >> 5), w0 = int64_t(warp) * gridDim.x + blockIdx.x;
    // An item cursor (E elements from grp * E, rows from tile * RT) stepped by nw items
    // without divisions.
    const int64_t step_g = nw / tiles;
    const int step_t = int(nw - step_g * tiles);
    struct Cursor {
        int64_t grp;
        int tile;
    };
    auto next = [&](Cursor &c) {
        c.grp += step_g, c.tile += step_t;
        if (c.tile >= tiles) c.tile -= tiles, ++c.grp;
    };
    const Cursor first{w0 / tiles, int(w0 % tiles)};
    if (g.staged) {
        static_assert((S & (S - 1)) == 0, "S a power of two");
        constexpr unsigned SLOT = STAGE * sizeof(T), RUN = E * sizeof(T);  // bytes
        constexpr int NQ = RT / RPI;                                        // A's runs a lane copies a stage
        const T *const slots = reinterpret_cast<const T *>(smem_raw) + warp * (S * STAGE);
        const int part = lane % P, rsub = lane / P;
        // This lane's copies: A's rows rsub + q RPI of the tile, x's run (lanes rsub = 0),
        // into slot 0 at `dst` (+ the slot's offset), from pointers stepped a column at a
        // time and aimed anew at each item.
        const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(slots + rsub * E + part * V));
        Cursor ci = first;
        int col_i = 0;
        unsigned slot_i = 0;
        const T *ap[NQ], *xp = nullptr;
        bool okq[NQ];
        auto aim = [&]() {
            const int i0 = ci.tile * RT, nr = min(RT, g.rows - i0);
            const int64_t e0 = ci.grp * E + part * V;
#pragma unroll
            for (int q = 0; q < NQ; ++q) {
                const int i = q * RPI + rsub;
                okq[q] = i < nr;
                ap[q] = g.a + e0 + (i0 + (okq[q] ? i : 0)) * g.ar;
            }
            xp = g.x + e0;
        };
        if (ci.grp < groups) aim();
        // The copies of the next stage into the next slot (none past the warp's last item:
        // an empty group, so that the wait counts stay uniform).
        auto issue = [&]() {
            if (ci.grp < groups) {
#pragma unroll
                for (int q = 0; q < NQ; ++q) {
                    if (okq[q]) cp_async16_to(dst + slot_i + q * RPI * RUN, ap[q]);
                    ap[q] += g.ac;
                }
                if (rsub == 0) cp_async16_to(dst + slot_i + RT * RUN, xp);
                xp += g.xi;
                slot_i = slot_i + SLOT == S * SLOT ? 0 : slot_i + SLOT;
                if (++col_i == g.cols) {
                    col_i = 0;
                    next(ci);
                    if (ci.grp < groups) aim();
                }
            }
            cp_commit();
        };
        // The EW values of this lane's elements in run r of a stage, as doubles.
        auto run_values = [&](const T *st, int r, double(&v)[EW]) {
            if constexpr (EW == 2) {
                const float2 w = *reinterpret_cast<const float2 *>(st + r * E);
                v[0] = double(w.x), v[1] = double(w.y);
            } else {
                v[0] = double(st[r * E]);
            }
        };
#pragma unroll 1
        for (int k = 0; k < S - 1; ++k) issue();
        const T *const mine = slots + lane * EW;
        int slot_c = 0;
#pragma unroll 1
        for (Cursor cc = first; cc.grp < groups; next(cc)) {
            double acc[EW][RT];
#pragma unroll
            for (int j = 0; j < EW; ++j)
#pragma unroll
                for (int t = 0; t < RT; ++t) acc[j][t] = 0;
#pragma unroll 1
            for (int col = 0; col < g.cols; ++col) {
                __syncwarp();  // every lane done with the slot refilled next
                issue();
                cp_wait<S - 1>();
                __syncwarp();  // every lane's copies of this stage landed
                const T *const st = mine + slot_c * STAGE;
                slot_c = (slot_c + 1) & (S - 1);
                double xl[EW];
                run_values(st, RT, xl);
                // (rows past the tile's nr read stale slots; their sums are dropped)
#pragma unroll
                for (int t = 0; t < RT; ++t) {
                    double av[EW];
                    run_values(st, t, av);
#pragma unroll
                    for (int j = 0; j < EW; ++j) acc[j][t] = fma(av[j], xl[j], acc[j][t]);
                }
            }
            const int i0 = cc.tile * RT, nr = min(RT, g.rows - i0);
            T *const yp = g.y + cc.grp * E + lane * EW + i0 * g.yi;
#pragma unroll
            for (int t = 0; t < RT; ++t)
#pragma unroll
                for (int j = 0; j < EW; ++j)
                    if (t < nr) store(yp + t * g.yi + j, acc[j][t], g);
        }
        cp_wait<0>();
    } else {
        Cursor c = first;
        for (int64_t it = w0; it < items; it += nw, next(c))
#pragma unroll
            for (int j = 0; j < EW; ++j)
                soa_tile<T, RT, 1, true>(g, c.grp * E + j * 32 + lane, c.tile * RT, min(RT, g.rows - c.tile * RT));
    }
    // The last partial group, 32 elements at a time.
    for (int64_t q = w0; q < int64_t(EW) * tiles; q += nw) {
        const int j = int(q / tiles), tile = int(q % tiles);
        if (groups * E + j * 32 < g.batch)
            soa_tile<T, RT, 1, false>(g, groups * E + j * 32 + lane, tile * RT, min(RT, g.rows - tile * RT));
    }
}

// SoA, few elements: W = 2^lg_split warps share 32 consecutive elements, as WT row-tile
// groups times WC = 2^lg_cols ranges of consecutive columns (dot: WT = 1); where even 32
// warps a group leave SMs idle, RB = 2^lg_rb blocks share a group, block rb taking row
// tiles rb WT, rb WT + 1, ... of every RB WT. Each lane sums RT rows over its range in
// order; the WC partial sums of a tile are then added in range order through shared
// memory (a fixed order: reproducible, whatever RB). Every thread of a block takes the
// same trip counts (barriers).
template <class T, int RT>
__global__ void __launch_bounds__(1024) vec_soa_split_kernel(const SoaArgs<T> g) {
    extern __shared__ __align__(16) unsigned char smem_raw[];
    double *const red = reinterpret_cast<double *>(smem_raw);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int W = 1 << g.lg_split, wi = warp & (W - 1), grp = warp >> g.lg_split;
    const int WC = 1 << g.lg_cols, wc = wi & (WC - 1), wt = wi >> g.lg_cols, WT = W >> g.lg_cols;
    const int RB = 1 << g.lg_rb, units = blockDim.x >> 5 >> g.lg_split;
    const int64_t items = ((g.batch + 31) / 32) << g.lg_rb;  // (32 elements, block of their rows) pairs
    const int len = g.cols, per = (len + WC - 1) / WC, l0 = min(len, wc * per), l1 = min(len, l0 + per);
    for (int64_t it0 = int64_t(blockIdx.x) * units; it0 < items; it0 += int64_t(gridDim.x) * units) {
        const int64_t it = it0 + grp, e = (it >> g.lg_rb) * 32 + lane;
        const int rb = int(it & (RB - 1));
        const bool ok = it < items && e < g.batch;
        for (int ib = 0; ib < g.rows; ib += RB * WT * RT) {
            const int i0 = ib + (rb * WT + wt) * RT, nr = max(0, min(RT, g.rows - i0));
            double acc[RT];
#pragma unroll
            for (int t = 0; t < RT; ++t) acc[t] = 0;
            if (ok && nr > 0) {
                // Rows past nr repeat row i0 (the same lines); their sums are dropped.
                int64_t roff[RT];
#pragma unroll
                for (int t = 0; t < RT; ++t) roff[t] = (t < nr ? t : 0) * g.ar;
                const T *ap = g.a + e * g.ae + i0 * g.ar + l0 * g.ac, *xp = g.x + e * g.xe + l0 * g.xi;
#pragma unroll(RT >= 4 ? 2 : 8 / RT)
                for (int l = l0; l < l1; ++l, ap += g.ac, xp += g.xi) {
                    const double xl = double(__ldg(xp));
#pragma unroll
                    for (int t = 0; t < RT; ++t) acc[t] = fma(double(__ldg(ap + roff[t])), xl, acc[t]);
                }
            }
            if (WC > 1) {
#pragma unroll
                for (int t = 0; t < RT; ++t) red[(warp * RT + t) * 32 + lane] = acc[t];
                __syncthreads();
            }
            if (wc == 0 && ok) {
#pragma unroll
                for (int t = 0; t < RT; ++t) {
                    double sum = acc[t];
                    for (int c = 1; c < WC; ++c) sum += red[((warp + c) * RT + t) * 32 + lane];
                    if (t < nr) store(g.y + e * g.ye + (i0 + t) * g.yi, sum, g);
                }
            }
            if (WC > 1) __syncthreads();
        }
    }
}

// ---------------------------------------------------------------------------------
// AoS, rows of op(A) contiguous (ac = 1): G = GI x GO threads per element, RU rows per
// lane at a time and KU chunks of each unrolled (their loads in flight together).

// The whole chunks k = k0, k0 + GI, ... < k1 of rows ap[0..nr): no guards, so the
// unrolled loads issue together. AV, XV: A's and x's chunks start on 16-byte boundaries.
template <class T, int RU, int KU, bool AV, bool XV>
__device__ __forceinline__ void rows_whole(const T *x, const T *const (&ap)[RU], int nr, int k0, int k1, int GI,
                                           int s, double (&part)[RU]) {
    constexpr int V = Vec<T>::n;
#pragma unroll KU
    for (int k = k0; k < k1; k += GI) {
        const int c0 = k * V - s;
        T xv[V], av[RU][V];
        load_chunk(x, c0, c0 + V, XV, xv);
#pragma unroll
        for (int u = 0; u < RU; ++u)
            if (u < nr) load_chunk(ap[u], c0, c0 + V, AV, av[u]);
#pragma unroll
        for (int u = 0; u < RU; ++u)
#pragma unroll
            for (int c = 0; c < V; ++c) part[u] = fma(double(av[u][c]), double(xv[c]), part[u]);
    }
}

template <class T, int RU, int KU>
__global__ void __launch_bounds__(512) vec_rows_kernel(const Args<T> g) {
    constexpr int V = Vec<T>::n;
    const int G = 1 << g.lg, GI = 1 << g.lg_split, GO = G >> g.lg_split;
    const int t = threadIdx.x & (G - 1), gi = t & (GI - 1), go = t >> g.lg_split;
    const int lane = threadIdx.x & 31;
    // The GI lanes that share a row: aligned, within one warp.
    const unsigned mask = GI == 32 ? 0xffffffffu : ((1u << GI) - 1) << (lane & ~(GI - 1));
    const int per_block = blockDim.x >> g.lg;
    const int rows = g.rows, len = g.cols;
    for (int64_t e = int64_t(blockIdx.x) * per_block + (threadIdx.x >> g.lg); e < g.batch;
         e += int64_t(gridDim.x) * per_block) {
        const T *const a = g.a + e * g.ae, *const x = g.x + e * g.xe;
        T *const y = g.y + e * g.ye;
        // One chunk grid for every row: aligned to the rows' common alignment, or to
        // entry 0 (then only x may be aligned to it, and A takes scalar loads). Chunks
        // [k_lo, k_hi) are whole; chunk 0 (when s > 0) and k_hi (when < nchunks) are not.
        const int s = g.uniform ? shift_of(a) : 0;
        const bool x_vec = shift_of(x) == s;
        const int nchunks = (len + s + V - 1) / V, k_lo = s > 0, k_hi = (len + s) / V;
        for (int i0 = go; i0 < rows; i0 += GO * RU) {
            const int nr = min(RU, (rows - i0 + GO - 1) / GO);
            double part[RU];
            const T *ap[RU];
#pragma unroll
            for (int u = 0; u < RU; ++u) part[u] = 0, ap[u] = a + (i0 + u * GO) * g.ar;
            if (g.uniform)
                x_vec ? rows_whole<T, RU, KU, true, true>(x, ap, nr, k_lo + gi, k_hi, GI, s, part)
                      : rows_whole<T, RU, KU, true, false>(x, ap, nr, k_lo + gi, k_hi, GI, s, part);
            else
                x_vec ? rows_whole<T, RU, KU, false, true>(x, ap, nr, k_lo + gi, k_hi, GI, s, part)
                      : rows_whole<T, RU, KU, false, false>(x, ap, nr, k_lo + gi, k_hi, GI, s, part);
            // The partial chunks at the ends (a single chunk is the head): the head to the
            // first lane, the tail to the last.
            auto edge = [&](int k) {
                const int c0 = k * V - s;
                T xv[V], av[RU][V];
                load_chunk(x, c0, len, false, xv);
#pragma unroll
                for (int u = 0; u < RU; ++u)
                    if (u < nr) load_chunk(ap[u], c0, len, false, av[u]);
#pragma unroll
                for (int u = 0; u < RU; ++u)
#pragma unroll
                    for (int c = 0; c < V; ++c) part[u] = fma(double(av[u][c]), double(xv[c]), part[u]);
            };
            if (k_lo && gi == 0) edge(0);
            if (k_hi >= k_lo && k_hi < nchunks && gi == GI - 1) edge(k_hi);
#pragma unroll
            for (int u = 0; u < RU; ++u) {
                for (int off = GI >> 1; off > 0; off >>= 1) part[u] += __shfl_xor_sync(mask, part[u], off);
                if (gi == 0 && u < nr) store(y + (i0 + u * GO) * g.yi, part[u], g);
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// AoS, columns of op(A) contiguous (ar = 1): G = GI x GO threads per element; within a
// warp, GIw lanes down a column (consecutive lanes, consecutive chunks) times GO lanes
// across columns; a group larger than a warp puts its warps on further rows. Each lane
// sums J chunks of rows at a time over its columns; the GO lanes are then reduced.

template <class T, int J>
__global__ void __launch_bounds__(1024) vec_cols_kernel(const Args<T> g) {
    constexpr int V = Vec<T>::n;
    const int G = 1 << g.lg, GO = 1 << g.lg_split, GI = G >> g.lg_split;
    const int Gw = min(G, 32), GIw = Gw >> g.lg_split;
    const int t = threadIdx.x & (G - 1), lane = threadIdx.x & 31, tw = t & (Gw - 1);
    const int gi = (tw & (GIw - 1)) + GIw * (t >> 5), go = tw / GIw;
    // The group's lanes in this warp.
    const unsigned mask = Gw == 32 ? 0xffffffffu : ((1u << Gw) - 1) << (lane & ~(Gw - 1));
    const int per_block = blockDim.x >> g.lg;
    const int len = g.rows, cols = g.cols;
    for (int64_t e = int64_t(blockIdx.x) * per_block + (threadIdx.x >> g.lg); e < g.batch;
         e += int64_t(gridDim.x) * per_block) {
        const T *const a = g.a + e * g.ae, *const x = g.x + e * g.xe;
        T *const y = g.y + e * g.ye;
        const int s = g.uniform ? shift_of(a) : 0;
        const int nchunks = (len + s + V - 1) / V;
        for (int k0 = 0; k0 < nchunks; k0 += GI * J) {
            double acc[J][V];
#pragma unroll
            for (int j = 0; j < J; ++j)
#pragma unroll
                for (int c = 0; c < V; ++c) acc[j][c] = 0;
            const T *col = a + go * g.ac;
#pragma unroll 2
            for (int l = go; l < cols; l += GO, col += GO * g.ac) {
                const double xl = double(__ldg(x + l * g.xi));
                const bool aligned = g.uniform || shift_of(col) == 0;
#pragma unroll
                for (int j = 0; j < J; ++j) {
                    const int k = k0 + gi + GI * j;
                    if (k < nchunks) {
                        T v[V];
                        load_chunk(col, k * V - s, len, aligned, v);
#pragma unroll
                        for (int c = 0; c < V; ++c) acc[j][c] = fma(double(v[c]), xl, acc[j][c]);
                    }
                }
            }
#pragma unroll
            for (int j = 0; j < J; ++j)
#pragma unroll
                for (int c = 0; c < V; ++c) {
                    for (int off = GIw; off < Gw; off <<= 1) acc[j][c] += __shfl_xor_sync(mask, acc[j][c], off);
                    const int i = (k0 + gi + GI * j) * V - s + c;
                    if (go == 0 && i >= 0 && i < len) store(y + i * g.yi, acc[j][c], g);
                }
        }
    }
}

// ---------------------------------------------------------------------------------
// AoS, rows of op(A) contiguous, many elements (vec_flat_kernel): the batch as one stream
// of row slots. Each element's rows are padded to a power of two of slots (RC rows a
// slot), slot s of the whole batch is element s >> lg_slots, row (s & mask) RC. A warp
// takes U x 32 / GL consecutive slots at a time (GL lanes per slot, the slots of one u
// consecutive, so one load instruction of the warp covers consecutive rows: whole
// sectors) and issues all of their loads before any sum, U x K chunks of A and of x per
// lane (partial chunks or arrays off the 16-byte grid: U = 1, scalar loads where needed).
// Lane gl of a slot holds chunks gl, gl + GL, ... (K at most) of its row, sums them in
// order, and the GL lanes add their sums in a fixed xor tree (U = 4 slots of GL >= 4
// lanes: the tree's levels shared by the slots, the same sums). RC = 2 (float rows of 2
// entries, ld = 2): one lane holds the 2 rows of its chunk and sums each; x's 2 entries
// come by one 8-byte load and the rows' y go out by one 8-byte store where those line up
// (H200 run 302, f32 gemv AoS n = 2: 0.149-0.151 -> 0.136-0.140 ms; 4-byte accesses 8
// bytes apart across a warp met each sector in two instructions). Every lane of
// the warp runs the same trips (full-mask shuffles).

template <class T>
struct FlatArgs {
    const T *a, *x;
    T *y;
    int64_t ae, ar, xe, ye, yi;  // A's entry (i, l) at a[e*ae + i*ar + l], x's l at x[e*xe + l]
    int rows, cols;              // op(A)
    int lg_gl, lg_slots;         // log2 of the lanes per slot, of the slots per element
    double alpha, beta;          // already rounded to T; beta = 0 never reads y
    int64_t batch;
    bool vec;   // every chunk of A (and of x, RC = 1) starts on a 16-byte boundary: vector loads
    bool tail;  // some chunk is partial (RC = 1: cols not a multiple of V; RC = 2: rows odd)
};

// Entries [c0, c0 + V) of p that lie below len (zeros past it): one 16-byte load when VEC
// and the chunk is whole, else guarded scalar loads. !TAIL: every chunk is whole or empty.
// SHARED (VEC, !TAIL only): p is in shared memory.
template <class T, bool VEC, bool TAIL, bool SHARED = false>
__device__ __forceinline__ void load_part(const T *p, int c0, int len, T (&v)[Vec<T>::n]) {
    constexpr int V = Vec<T>::n;
    static_assert(!SHARED || (VEC && !TAIL), "shared memory: whole chunks on the grid");
    if (VEC && !TAIL) {
        if (c0 < len) {
            if constexpr (SHARED)
                load_shared_vec(p + c0, v);
            else
                load_vec(p + c0, v);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) v[k] = T(0);
        }
    } else if (VEC && c0 + V <= len) {
        load_vec(p + c0, v);
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) v[k] = c0 + k < len ? __ldg(p + c0 + k) : T(0);
    }
}

// XG > 1 (RC = 1): the slots u of a lane come XG to an element (XG = slots per element /
// (32 / GL), at most U): x loaded once per element, for u a multiple of XG, and used by
// its XG slots (the same values, the same sums). JOINT: U = 4 slots of GL >= 4 lanes
// reduced together (else a tree per slot: f64 dot, measured 91.7 -> 84.1 % with it at n = 16).
// The grid's warps take the slots (SHARED: the block's warps take a stage's slots, A and x
// in shared memory: the bulk kernel).
template <class T, int K, int U, int RC, bool VEC, bool TAIL, int XG = 1, bool JOINT = true, bool SHARED = false,
          int LG = -1>
__device__ __forceinline__ void flat_body(const FlatArgs<T> &g) {
    constexpr int V = Vec<T>::n, COLS = V / RC;  // RC = 2: rows of COLS = 2 floats, K = 1
    static_assert(RC == 1 || K == 1, "a chunk of several rows is one lane's");
    static_assert(!SHARED || RC == 1, "the bulk kernel's stages: rows of whole chunks");
    // LG >= 0: log2 of the lanes per slot known at compile time (the bulk kernel's), else g.lg_gl.
    const int lane = threadIdx.x & 31, lg_gl = LG >= 0 ? LG : g.lg_gl, gl = lane & ((1 << lg_gl) - 1);
    const int per_u = 32 >> lg_gl;  // slots of one u in a warp
    // I: the index type of slots and of A's and x's offsets (SHARED: a stage's, 32-bit; y
    // stays in global memory, its offsets 64-bit).
    using I = std::conditional_t<SHARED, int, int64_t>;
    const I smask = (I(1) << g.lg_slots) - 1, slots = I(g.batch) << g.lg_slots;
    const I warp = SHARED ? I(threadIdx.x >> 5) : (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
    const I step = (SHARED ? I(blockDim.x >> 5) : (int64_t(gridDim.x) * blockDim.x) >> 5) * per_u * U;
    for (I b0 = warp * per_u * U; b0 < slots; b0 += step) {
        // Slot u of this lane: element e, rows i .. i + RC - 1 (recomputed for the stores,
        // which keeps registers for the loads).
        auto slot = [&](int u, I &e, int &i) {
            const I s = b0 + u * per_u + (lane >> lg_gl);
            e = s >> g.lg_slots;
            i = int(s & smask) * RC;
            return e < g.batch && i < g.rows;
        };
        if constexpr (RC == 1 && (TAIL || !VEC)) {
            // The slow path (U = 1): a chunk at a time, its loads consumed at once.
            I e;
            int i;
            const bool ok = slot(0, e, i);
            const T *const ap = g.a + e * I(g.ae) + I(i) * I(g.ar), *const xp = g.x + e * I(g.xe);
            double part = 0;
#pragma unroll 1
            for (int k = 0; k < K; ++k) {
                const int c0 = (gl + (k << lg_gl)) * V, len = ok ? g.cols : 0;
                T av[V], xv[V];
                load_part<T, VEC, TAIL>(ap, c0, len, av);
                load_part<T, VEC, TAIL>(xp, c0, len, xv);
#pragma unroll
                for (int c = 0; c < V; ++c) part = fma(double(av[c]), double(xv[c]), part);
            }
            for (int off = (1 << lg_gl) >> 1; off > 0; off >>= 1) part += __shfl_xor_sync(0xffffffffu, part, off);
            if (gl == 0 && ok) store_ab(g.y + int64_t(e) * g.ye + int64_t(i) * g.yi, part, g.alpha, g.beta);
        } else {
            T av[U][K][V], xv[U][K][V];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                I e;
                int i;
                const bool ok = slot(u, e, i);
                const T *const ap = g.a + e * I(g.ae) + I(i) * I(g.ar), *const xp = g.x + e * I(g.xe);
                if constexpr (RC == 1) {
#pragma unroll
                    for (int k = 0; k < K; ++k) {
                        const int c0 = (gl + (k << lg_gl)) * V, len = ok ? g.cols : 0;
                        load_part<T, VEC, TAIL, SHARED>(ap, c0, len, av[u][k]);
                        // XG: where u's slot is out (padded row, element past the batch),
                        // so are those of u + 1 .. in its element (rows grow with u).
                        if (u % XG == 0) load_part<T, VEC, TAIL, SHARED>(xp, c0, len, xv[u][k]);
                    }
                } else {
                    // The chunk's rows i .. i + RC - 1 (ar = COLS: one run of V entries); x's
                    // COLS entries by one load where they line up (an element's, per lane).
                    const int nr = ok ? min(RC, g.rows - i) : 0;
                    load_part<T, VEC, TAIL>(ap, 0, nr * COLS, av[u][0]);
#pragma unroll
                    for (int l = 0; l < V; ++l) xv[u][0][l] = T(0);
                    if (nr > 0 && is_aligned<COLS * sizeof(T)>(xp)) {
                        const Pair<T> x2 = __ldg(reinterpret_cast<const Pair<T> *>(xp));
                        xv[u][0][0] = x2.x, xv[u][0][1] = x2.y;
                    } else {
#pragma unroll
                        for (int l = 0; l < COLS; ++l) xv[u][0][l] = nr > 0 ? __ldg(xp + l) : T(0);
                    }
                }
            }
            if constexpr (RC == 1 && U == 4 && JOINT && (LG < 0 || LG >= 2)) {
                if (U <= (1 << lg_gl)) {
                    // U slots of GL >= U lanes: the same xor tree per slot, its levels shared.
                    // Level off = GL / 2 .. GL / U: each lane keeps half its slots (the upper
                    // half where gl & off) and sends the other half, so each shuffle serves a
                    // slot at every level; lane gl ends with slot (gl >> lg(GL / U)) & (U - 1),
                    // whose later levels are the plain tree. Each sum is own + partner's at
                    // the same levels as the tree of one slot: the same bits (a + b = b + a).
                    double part[U];
#pragma unroll
                    for (int u = 0; u < U; ++u) {
                        part[u] = 0;
#pragma unroll
                        for (int k = 0; k < K; ++k)
#pragma unroll
                            for (int c = 0; c < V; ++c)
                                part[u] = fma(double(av[u][k][c]), double(xv[u - u % XG][k][c]), part[u]);
                    }
                    int off = (1 << lg_gl) >> 1;
#pragma unroll
                    for (int m = U; m > 1; m >>= 1, off >>= 1) {
                        const bool up = (gl & off) != 0;
#pragma unroll
                        for (int j = 0; j < m / 2; ++j) {
                            const double send = up ? part[j] : part[j + m / 2];
                            const double keep = up ? part[j + m / 2] : part[j];
                            part[j] = keep + __shfl_xor_sync(0xffffffffu, send, off);
                        }
                    }
                    for (; off > 0; off >>= 1) part[0] += __shfl_xor_sync(0xffffffffu, part[0], off);
                    constexpr int lg_u = U == 4 ? 2 : 1;
                    const int lg_low = lg_gl - lg_u;
                    I e;
                    int i;
                    const bool ok = slot((gl >> lg_low) & (U - 1), e, i);
                    if ((gl & ((1 << lg_low) - 1)) == 0 && ok)
                        store_ab(g.y + int64_t(e) * g.ye + int64_t(i) * g.yi, part[0], g.alpha, g.beta);
                    continue;
                }
            }
            // (Where LG says the joint tree above always serves, this is not compiled.)
            constexpr bool kJointOnly = RC == 1 && U == 4 && JOINT && LG >= 2;
#pragma unroll
            for (int u = 0; u < (kJointOnly ? 0 : U); ++u) {
                I e;
                int i;
                const bool ok = slot(u, e, i);
                T *const yp = g.y + int64_t(e) * g.ye + int64_t(i) * g.yi;
                if constexpr (RC == 1) {
                    double part = 0;
#pragma unroll
                    for (int k = 0; k < K; ++k)
#pragma unroll
                        for (int c = 0; c < V; ++c)
                            part = fma(double(av[u][k][c]), double(xv[u - u % XG][k][c]), part);
                    for (int off = (1 << lg_gl) >> 1; off > 0; off >>= 1)
                        part += __shfl_xor_sync(0xffffffffu, part, off);
                    if (gl == 0 && ok) store_ab(yp, part, g.alpha, g.beta);
                } else {
                    double sum[RC];
#pragma unroll
                    for (int r = 0; r < RC; ++r) {
                        sum[r] = 0;
#pragma unroll
                        for (int l = 0; l < COLS; ++l)
                            sum[r] = fma(double(av[u][0][r * COLS + l]), double(xv[u][0][l]), sum[r]);
                    }
                    // Both rows' y by one store where they line up (the same roundings).
                    if (ok && i + 1 < g.rows && g.yi == 1 && is_aligned<RC * sizeof(T)>(yp)) {
                        store_ab2(yp, sum[0], sum[1], g.alpha, g.beta);
                    } else {
#pragma unroll
                        for (int r = 0; r < RC; ++r)
                            if (ok && i + r < g.rows) store_ab(yp + r * g.yi, sum[r], g.alpha, g.beta);
                    }
                }
            }
        }
    }
}

// Whole chunks on the 16-byte grid (g.vec, !g.tail): x once per element where a lane's
// slots share it.
template <class T, int K, int U, int RC, bool SHARED, int LG = -1>
__device__ __forceinline__ void flat_whole(const FlatArgs<T> &g) {
    // Slots per element over slots of one u in a warp.
    const int xg = (1 << g.lg_slots) >> (5 - (LG >= 0 ? LG : g.lg_gl));
    if (RC == 1 && U == 4 && xg >= 4)
        flat_body<T, K, U, RC, true, false, RC == 1 && U == 4 ? 4 : 1, true, SHARED, LG>(g);
    else if (RC == 1 && U == 4 && sizeof(T) == 4 && xg == 2)  // (f64: spills)
        flat_body<T, K, U, RC, true, false, RC == 1 && U == 4 && sizeof(T) == 4 ? 2 : 1, true, SHARED, LG>(g);
    // U = 2 (K = 2: f32 rows of 33..64 entries, f64 of 17..32), a lane's two slots in one
    // element: x loaded once for both, and f32's widened to double once (SASS: 1.5 F2F a
    // product where there were 2). ncu (H200 run 435): float gemv n = 64 issued 4.5 M warp
    // F2F, 12 % of its instructions and, at 16 results a clock an SM, about 47 % of its
    // schedulers' cycles; double n = 64, the same bytes, none. Runs 436-437: float AoS n =
    // 64 0.076-0.079 -> 0.075-0.078 ms, the other rows even; the same sums, the same bits.
    else if (RC == 1 && U == 2 && xg >= 2)
        flat_body<T, K, U, RC, true, false, RC == 1 && U == 2 ? 2 : 1, true, SHARED, LG>(g);
    else if (RC == 1 && U == 4 && sizeof(T) == 8 && g.lg_slots == 0)  // f64 dot: 9ebe882's trees
        flat_body<T, K, U, RC, true, false, 1, !(RC == 1 && U == 4 && sizeof(T) == 8), SHARED, LG>(g);
    else
        flat_body<T, K, U, RC, true, false, 1, true, SHARED, LG>(g);
}

template <class T, int K, int U, int RC>
__global__ void __launch_bounds__(256, 4) vec_flat_kernel(const FlatArgs<T> g) {
    // Partial chunks (rows not a multiple of 16 bytes), misaligned arrays: one slot per
    // lane at a time, scalar loads where needed (the same sums).
    if (g.vec && !g.tail)
        flat_whole<T, K, U, RC, false>(g);
    else if (g.vec)
        flat_body<T, K, 1, RC, true, true>(g);
    else
        flat_body<T, K, 1, RC, false, true>(g);
}

// ---------------------------------------------------------------------------------
// AoS, rows of op(A) contiguous, packed elements, many of them, on sm_90
// (vec_bulk_kernel): the flat kernel with its loads taken off the registers. A block's
// elements come in stages of E consecutive elements, A's span and x's span each one run
// of bytes, copied to shared memory by one thread's bulk copies (cuda/bulk.cuh): the
// block sums stage j while stages j + 1 .. j + S - 1 are on their way, and refills stage
// j after the block barrier that ends it. Stages go round-robin over the resident
// blocks. A stage is summed by flat_body over its elements, the block's warps taking
// its slots, with the flat kernel's GL, K and U: the same sums in the same order, the
// same bits. Arrays off the 16-byte grid (known only at launch) fill the same stages by
// plain loads, one stage at a time.

constexpr int kBulkThreads = 256;  // a block

template <class T>
struct BulkArgs {
    FlatArgs<T> f;               // the batch (whole chunks on the grid: f.vec, f.tail unused)
    int per_stage, stages;       // E elements a stage, S stages
    int stage_bytes, x_offset;   // a stage: A's span of its elements, then x's from x_offset
    bool bulk;                   // a and x on the 16-byte grid: bulk copies (else plain loads)
};

template <class T, int K, int LG>
__global__ void __launch_bounds__(kBulkThreads) vec_bulk_kernel(const BulkArgs<T> g) {
    constexpr int U = 4 / K;
    const FlatArgs<T> &f = g.f;
    extern __shared__ __align__(16) unsigned char smem[];
    uint64_t *const bar = reinterpret_cast<uint64_t *>(smem + int64_t(g.stages) * g.stage_bytes);
    const int64_t E = g.per_stage, nstage = (f.batch + E - 1) / E;
    const int64_t mine = nstage > blockIdx.x ? (nstage - 1 - blockIdx.x) / gridDim.x + 1 : 0;
    const int64_t a_extent = int64_t(f.rows - 1) * f.ar + f.cols;
    const bool bulk = bulk_available() && g.bulk;
    // Stage j of this block: elements e0 .. e0 + ne - 1; A's span, then x's, in entries.
    auto first = [&](int64_t j) { return (int64_t(blockIdx.x) + j * gridDim.x) * E; };
    auto a_span = [&](int ne) { return (ne - 1) * f.ae + a_extent; };
    auto x_span = [&](int ne) { return (ne - 1) * f.xe + f.cols; };
    auto issue = [&](int64_t j, int s) {  // stage j into slot s
        const int64_t e0 = first(j);
        const int ne = int(min(E, f.batch - e0));
        unsigned char *const st = smem + int64_t(s) * g.stage_bytes;
        const uint32_t ab = uint32_t(a_span(ne) * int64_t(sizeof(T))), xb = uint32_t(x_span(ne) * int64_t(sizeof(T)));
        bulk_expect(bar + s, ab + xb);
        bulk_copy(st, f.a + e0 * f.ae, ab, bar + s);
        bulk_copy(st + g.x_offset, f.x + e0 * f.xe, xb, bar + s);
    };
    if (bulk && threadIdx.x == 0) {
        for (int s = 0; s < g.stages; ++s) bulk_init(bar + s, 1);
        bulk_fence_init();
    }
    __syncthreads();
    if (bulk && threadIdx.x == 0)
        for (int j = 0; j < g.stages && j < mine; ++j) issue(j, j);

    int s = 0;
    uint32_t phase = 0;  // of slot s's barrier
    for (int64_t j = 0; j < mine; ++j) {
        const int64_t e0 = first(j);
        const int ne = int(min(E, f.batch - e0));
        unsigned char *const st = smem + int64_t(s) * g.stage_bytes;
        T *const sa = reinterpret_cast<T *>(st), *const sx = reinterpret_cast<T *>(st + g.x_offset);
        if (bulk) {
            bulk_wait(bar + s, phase);
        } else {
            const T *const ga = f.a + e0 * f.ae, *const gx = f.x + e0 * f.xe;
            for (int64_t t = threadIdx.x, n = a_span(ne); t < n; t += blockDim.x) sa[t] = __ldg(ga + t);
            for (int64_t t = threadIdx.x, n = x_span(ne); t < n; t += blockDim.x) sx[t] = __ldg(gx + t);
            __syncthreads();
        }
        FlatArgs<T> sf = f;
        sf.a = sa, sf.x = sx, sf.y = f.y + e0 * f.ye, sf.batch = ne;
        flat_whole<T, K, U, 1, true, LG>(sf);
        __syncthreads();  // every read of slot s done: it may be refilled
        if (bulk && threadIdx.x == 0 && j + g.stages < mine) issue(j + g.stages, s);
        if (++s == g.stages) s = 0, phase ^= 1;
    }
}

// ---------------------------------------------------------------------------------
// Selection (plan only: launch runs the planned kernel, with the shape recomputed from
// the element's dimensions and the planned group size, never from the batch)

int lg2(int64_t v) {
    int l = 0;
    while ((int64_t(1) << l) < v) ++l;
    return l;
}
int64_t pow2ceil(int64_t v) { return int64_t(1) << lg2(v); }

// op(A) after normalisation, with the strides of Args.
struct Op {
    int rows, cols;
    bool soa, rows_contiguous;  // AoS: ac = 1 (rows kernel) or ar = 1 (cols kernel)
    int64_t ar, ac;             // within an element (AoS), or times the batch stride (SoA)
    int64_t ae;                 // AoS: A's element stride (dot: x's)
    int64_t xe;                 // AoS: x's element stride (dot: y's)
    int64_t batch;
};

Op op_of(const GemvProblem &pb) {
    Op o;
    o.rows = int(pb.y_len());
    o.cols = int(pb.x_len());
    o.soa = pb.a.soa;
    int64_t ar = pb.a.row_major ? pb.a.ld : 1, ac = pb.a.row_major ? 1 : pb.a.ld;
    if (pb.trans) std::swap(ar, ac);
    o.rows_contiguous = ac == 1 && (ar != 1 || o.cols >= o.rows);
    // (SoA: a dimension of extent 1 may have ld * stride past 64 bits, since validation
    // bounds only the entries that exist; its stride is never stepped, so 0 stands in.)
    if (o.soa) {
        if (__builtin_mul_overflow(ar, pb.a.stride, &ar)) ar = 0;
        if (__builtin_mul_overflow(ac, pb.a.stride, &ac)) ac = 0;
    }
    o.ar = ar, o.ac = ac, o.ae = pb.a.stride, o.xe = pb.x.stride, o.batch = pb.batch;
    return o;
}

Op op_of(const DotProblem &pb) {
    Op o;
    o.rows = 1, o.cols = int(pb.n);
    o.soa = pb.x.soa;
    o.rows_contiguous = true;
    o.ar = o.soa ? pb.n * pb.x.stride : pb.n;
    o.ac = o.soa ? pb.x.stride : 1;
    o.ae = pb.x.stride;
    o.xe = pb.y.stride;
    o.batch = pb.batch;
    return o;
}

constexpr int kRowsUnroll = 2;  // RU: rows per lane in flight
constexpr int kColChunks = 2;   // J: chunks of rows per lane in flight

// Threads that keep the device's memory system busy: below this many (elements x group
// threads), a larger group per element.
int64_t fill_threads(int sm_count) { return int64_t(sm_count) * 1024; }

template <class T>
int chunks_of(int len) { return (len + Vec<T>::n - 1) / Vec<T>::n; }

// Warp-level split for an AoS op: rows kernel: GI lanes across a row; cols kernel: GO
// lanes across columns. A function of the element's shape only.
template <class T>
int aos_split(const Op &o) {
    if (o.rows_contiguous) return int(std::min<int64_t>(32, pow2ceil(chunks_of<T>(o.cols))));
    const int gi = int(std::min<int64_t>(32, pow2ceil(chunks_of<T>(o.rows))));
    return int(std::min<int64_t>(32 / gi, pow2ceil(o.cols)));
}

// SoA with few elements (EW = 1): w warps per 32 elements, wc of them across columns
// (ranges of at least 64 columns), w / wc across tiles of rt rows, in rb blocks of w / rb
// warps (w > 32); used where wc > 1 or rb > 1. The plan keeps w in CudaConfig::sub and
// rt in the kernel's instance; the launch recovers the rest from them and the
// dimensions: never from the batch.
constexpr int kSplitMinCols = 64;  // columns per range at least (shorter ranges measured slower)
constexpr int kSplitMaxBlocks = 64;  // blocks sharing 32 elements at most
struct SoaSplit {
    int w = 1, wc = 1, rt = 1, rb = 1;
};
int soa_rt(const Op &o) { return int(std::min<int64_t>(8, pow2ceil(o.rows))); }
int64_t soa_tiles(const Op &o, int rt) { return pow2ceil((o.rows + rt - 1) / rt); }
SoaSplit soa_split_done(const Op &o, SoaSplit sp) {
    sp.wc = int(std::max<int64_t>(1, sp.w / soa_tiles(o, sp.rt)));
    sp.rb = std::max(1, sp.w / 32);
    return sp;
}
// Doubles w while the device is not filled and a warp more has rows or columns to take:
// within a block (w <= 32) as ever; past it only where twice the warps still fit the fill,
// with rows of rt / 2 a thread where the rows of rt run out (H200 run 353, gemv f64 n =
// 128 B = 2048: w = 64, rt = 4 0.072-0.074 ms; rt = 8 in two blocks of 16 warps 0.086-0.088;
// w = 128, rt = 2 0.079-0.080).
SoaSplit soa_split_of(const Op &o, int64_t fill) {
    const int64_t groups = (o.batch + 31) / 32;
    // Room for 2 w warps: rows, or columns (a block's warps hold all of a tile's ranges).
    auto room = [&](int w, int rt) {
        const int64_t tp = soa_tiles(o, rt);
        return w < tp || ((w / tp) * 2 * kSplitMinCols <= o.cols && (w < 32 || 2 * w / tp <= 32));
    };
    SoaSplit sp;
    sp.rt = soa_rt(o);
    while (groups * 32 * sp.w < fill && sp.w < 32 * kSplitMaxBlocks) {
        if (sp.w >= 32 && groups * 32 * sp.w * 2 > fill) break;
        int rt = sp.rt;
        while (sp.w >= 32 && rt > 1 && !room(sp.w, rt)) rt /= 2;
        if (!room(sp.w, rt)) break;
        sp.rt = rt;
        sp.w *= 2;
    }
    return soa_split_done(o, sp);
}

template <class T>
const void *soa_split_kernel(int rt) {
    switch (rt) {
    case 1: return reinterpret_cast<const void *>(&vec_soa_split_kernel<T, 1>);
    case 2: return reinterpret_cast<const void *>(&vec_soa_split_kernel<T, 2>);
    case 4: return reinterpret_cast<const void *>(&vec_soa_split_kernel<T, 4>);
    default: return reinterpret_cast<const void *>(&vec_soa_split_kernel<T, 8>);
    }
}
// The split of a planned split kernel (its rt by its instance, w from CudaConfig::sub).
template <class T>
SoaSplit soa_split_planned(const Op &o, const CudaConfig &cfg) {
    SoaSplit sp;
    for (int rt = 1; rt <= 8; rt *= 2)
        if (cfg.kernel == soa_split_kernel<T>(rt)) {
            sp.rt = rt;
            sp.w = cfg.sub;
            return soa_split_done(o, sp);
        }
    return sp;  // another kernel: wc = rb = 1
}

// The SoA kernel of RT rows by EW elements per thread: EW = 1, or 8 / RT (f32 RT = 1: 4
// adjacent, see select_kernel).
template <class T>
const void *soa_kernel(int rt, int ew) {
    auto pick = [&](auto rt_c) -> const void * {
        constexpr int RT = decltype(rt_c)::value;
        if constexpr (sizeof(T) == 4 && RT == 1)
            return ew == 1 ? reinterpret_cast<const void *>(&vec_soa_kernel<T, 1, 1>)
                           : reinterpret_cast<const void *>(&vec_soa_kernel<T, 1, 4, true>);
        else
            return ew == 1 ? reinterpret_cast<const void *>(&vec_soa_kernel<T, RT, 1>)
                           : reinterpret_cast<const void *>(&vec_soa_kernel<T, RT, 8 / RT>);
    };
    switch (rt) {
    case 1: return pick(std::integral_constant<int, 1>());
    case 2: return pick(std::integral_constant<int, 2>());
    case 4: return pick(std::integral_constant<int, 4>());
    default: return pick(std::integral_constant<int, 8>());
    }
}

// The SoA staged kernel's shape: 4 slots a warp, one column a stage; f32 two adjacent
// elements a lane in tiles of 4 rows (runs of 256 bytes), f64 one element a lane in
// tiles of 4 or 8 rows. H200 run 252: f32 pairs and one element a lane (tiles of 8 rows,
// or of 4 rows on 2 columns a stage) within that call's 3 % at n = 4..64, so one f32
// kernel for every shape; larger stages (run 250, at 80 registers: f32 n = 64 0.079 ms
// on 2 columns a stage against 0.085 on one) spill at the 64 registers of 32 warps an SM.
constexpr int kStagedSlots = 4;
struct Staged {
    int rt, ew;  // rows a tile, elements a lane
};
template <class T>
Staged staged_shape(int rt) {
    return sizeof(T) == 4 ? Staged{4, 2} : Staged{rt, 1};
}
template <class T>
const void *soa_staged_kernel(const Staged &z) {
    if constexpr (sizeof(T) == 4)
        return reinterpret_cast<const void *>(&vec_soa_staged_kernel<T, 4, kStagedSlots, 2>);
    else if (z.rt == 4)
        return reinterpret_cast<const void *>(&vec_soa_staged_kernel<T, 4, kStagedSlots, 1>);
    else
        return reinterpret_cast<const void *>(&vec_soa_staged_kernel<T, 8, kStagedSlots, 1>);
}

// The flat kernel's shape for an AoS op whose rows are contiguous, from the element's
// dimensions and strides only; gl = 0 where it does not apply (rows of more than 64
// chunks, or A's rows and elements not all on one 16-byte alignment).
struct FlatShape {
    int gl = 0, k = 1, u = 4, rc = 1;  // lanes per slot, chunks per lane, slots per lane, rows per slot
    int lg_slots = 0;                  // log2 of the slots per element
};
template <class T>
FlatShape flat_shape(const Op &o) {
    constexpr int V = Vec<T>::n;
    FlatShape f;
    if (o.soa || !o.rows_contiguous || o.ae % V != 0) return f;
    const int nch = chunks_of<T>(o.cols);
    if (nch > 64) return f;
    if (V == 4 && o.cols == 2 && o.rows > 1 && o.ar == 2) {
        f.rc = 2;  // rows of 2 floats, packed: 2 rows a chunk, one lane each (rows of one
                   // entry have ar = 1 and go to the columns kernel)
    } else if (o.rows > 1 && o.ar % V != 0) {
        return f;
    }
    const int p2 = int(pow2ceil(nch));
    f.gl = std::max(std::min(8, p2), p2 / 4);
    f.k = int(pow2ceil((nch + f.gl - 1) / f.gl));
    f.u = 4 / f.k;
    f.lg_slots = lg2((o.rows + f.rc - 1) / f.rc);
    return f;
}

template <class T>
const void *flat_kernel(const FlatShape &f) {
    if constexpr (Vec<T>::n == 4)
        if (f.rc == 2) return reinterpret_cast<const void *>(&vec_flat_kernel<T, 1, 4, 2>);
    switch (f.k) {
    case 1: return reinterpret_cast<const void *>(&vec_flat_kernel<T, 1, 4, 1>);
    case 2: return reinterpret_cast<const void *>(&vec_flat_kernel<T, 2, 2, 1>);
    default: return reinterpret_cast<const void *>(&vec_flat_kernel<T, 4, 1, 1>);
    }
}

template <class T>
KernelSpec flat_spec(const Op &o, const FlatShape &f, const char *op) {
    const char *tn = sizeof(T) == 8 ? "f64" : "f32";
    KernelSpec k;
    k.fn = flat_kernel<T>(f);
    const int per_warp = f.u * 32 / f.gl, slots = 1 << f.lg_slots;  // slots a warp takes at once, an element has
    if (slots <= per_warp) {
        k.unit_threads = 32;
        k.unit_elements = per_warp / slots;
    } else {
        k.unit_threads = 32 * std::min(8, slots / per_warp);
        k.unit_elements = 1;
    }
    k.group = f.gl * slots;
    k.model = k.group == 1 ? Model::ThreadPerElement : Model::WarpGroup;
    k.name = fmt::format("{}_flat<{}, {} lanes x {} chunks per row, {} rows per lane, {} row slots per element, {} "
                         "slots per lane at once>",
                         op, tn, f.gl, f.k, f.rc, slots, f.u);
    k.why = fmt::format("AoS, {} contiguous rows of {} entries, many elements: the batch as one stream of rows, "
                        "{} lanes per row with 16-byte loads, {} loads of A per lane in flight, sums reduced by "
                        "shuffles",
                        o.rows, o.cols, f.gl, f.k * f.u);
    return k;
}

// The bulk kernel's stages for an AoS op that the flat kernel takes (e = 0 where it does
// not apply): rows of at least two whole 16-byte chunks (cols a multiple of V; rows of
// one chunk measured 0-8 % slower than the flat kernel, H200 runs 241-242), x's stride on
// the grid, A's and x's elements packed within an eighth (the copies move their gaps
// too), an element's A and x within kBulkElement. E elements a stage: as many as fit
// kBulkStage bytes, then in whole rounds of the block's warps (below; 16 to 36 KB), two
// stages a block: three or four blocks of 256 threads an SM on sm_90's 227 KB (two for
// elements past 36 KB; stages of 8 and 16 KB, four to eight a block, measured slower: the
// block's barrier and wake-up a stage, run 241; three stages of 24 or 32 KB and four of
// 16 KB too, run 258).
constexpr int64_t kBulkStage = 32 << 10, kBulkElement = 48 << 10;
constexpr int kBulkStages = 2;
struct BulkShape {
    int e = 0, stage_bytes = 0, x_offset = 0;
};
template <class T>
BulkShape bulk_shape(const Op &o, const FlatShape &f) {
    constexpr int64_t V = Vec<T>::n, es = sizeof(T);
    BulkShape b;
    if (f.gl < 2 || f.rc != 1 || o.cols % V != 0 || o.xe % V != 0 || o.xe < o.cols) return b;
    if (o.ae * 8 > int64_t(o.rows) * o.cols * 9 || o.xe * 8 > int64_t(o.cols) * 9) return b;
    const int64_t eb = (o.ae + o.xe) * es;
    if (eb > kBulkElement) return b;
    b.e = int(std::max<int64_t>(1, kBulkStage / eb));
    // Whole rounds of the block's warps: a round takes kBulkThreads / 32 warps' slots at
    // once ((32 / GL) U each), 2^lg_slots of them an element; a stage of a partial last
    // round would keep the block's barrier waiting for the warps of the one before it.
    // E goes down to a multiple of the round, or up to one round where a round is more
    // than kBulkStage (at most about 36 KB: a round's 16 KB of A's chunks, as much of x
    // for dot, their padding within an eighth). H200 runs 258-259: float gemv n = 8 (113
    // -> 64 elements) 0.100 -> 0.093-0.097 ms.
    if (const int64_t per = (int64_t(kBulkThreads / 32) * (32 / f.gl) * f.u) >> f.lg_slots; per > 1)
        b.e = int(std::max<int64_t>(per, b.e / per * per));
    b.x_offset = int(b.e * o.ae * es);
    b.stage_bytes = int(b.e * eb);
    return b;
}

// The bulk kernel of a flat shape, its lanes per slot a template parameter (LG = log2 GL:
// the per-slot index arithmetic in constant shifts, the lanes' trees unrolled; H200 run
// 388, three rounds against the same kernel with GL at run time: float gemv AoS n = 8
// 0.093-0.098 -> 0.090-0.092 ms, n = 64 0.081-0.082 -> 0.079-0.080, the other gemv and dot
// rows within the rounds' spread). The pairs flat_shape gives where GL >= 2 (the bulk
// shapes): K = 1 with GL = 2, 4, 8; K = 2 with GL = 8; K = 4 with GL = 8, 16. Others:
// nullptr (no bulk kernel).
template <class T>
const void *bulk_kernel(const FlatShape &f) {
    const int lg = f.gl > 0 ? lg2(f.gl) : -1;
    if (f.k == 1 && lg == 1) return reinterpret_cast<const void *>(&vec_bulk_kernel<T, 1, 1>);
    if (f.k == 1 && lg == 2) return reinterpret_cast<const void *>(&vec_bulk_kernel<T, 1, 2>);
    if (f.k == 1 && lg == 3) return reinterpret_cast<const void *>(&vec_bulk_kernel<T, 1, 3>);
    if (f.k == 2 && lg == 3) return reinterpret_cast<const void *>(&vec_bulk_kernel<T, 2, 3>);
    if (f.k == 4 && lg == 3) return reinterpret_cast<const void *>(&vec_bulk_kernel<T, 4, 3>);
    if (f.k == 4 && lg == 4) return reinterpret_cast<const void *>(&vec_bulk_kernel<T, 4, 4>);
    return nullptr;
}

// The bulk kernel where `device` is sm_90 or later and the build has the kernel's copies
// for it (code of sm_90 or later: a build for older devices only, run there by JIT, has
// the kernel without them), and the batch gives every SM several stages; else the flat
// kernel.
template <class T>
bool bulk_fits(const Op &o, const FlatShape &f, const BulkShape &b, int device) {
    const DeviceLimits lim = device_limits(device);
    const void *const fn = bulk_kernel<T>(f);
    if (b.e == 0 || fn == nullptr || lim.cc_major < 9 || (o.batch + b.e - 1) / b.e < 8 * int64_t(lim.sm_count))
        return false;
    DeviceScope scope(device);  // (the kernel's attributes on the plan's device)
    cudaFuncAttributes fa{};
    if (cudaFuncGetAttributes(&fa, fn) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return fa.ptxVersion >= 90;
}

template <class T>
KernelSpec bulk_spec(const Op &o, const FlatShape &f, const BulkShape &b, const char *op) {
    const char *tn = sizeof(T) == 8 ? "f64" : "f32";
    KernelSpec k;
    k.fn = bulk_kernel<T>(f);
    k.unit_threads = kBulkThreads;
    k.unit_elements = b.e;
    k.block_shared = int64_t(kBulkStages) * (b.stage_bytes + int64_t(sizeof(uint64_t)));
    k.group = f.gl << f.lg_slots;
    k.model = Model::WarpGroup;  // (as the flat kernel: GL lanes a row, the rows of an element spread over warps)
    k.name = fmt::format("{}_bulk<{}, {} elements a stage of {} bytes, {} stages, {} lanes x {} chunks per row>", op,
                         tn, b.e, b.stage_bytes, kBulkStages, f.gl, f.k);
    k.why = fmt::format("AoS, {} packed rows of {} entries, many elements: stages of {} elements copied to shared "
                        "memory by bulk copies (sm_90), the next in flight while the block sums one, {} lanes per "
                        "row as the flat kernel",
                        o.rows, o.cols, b.e, f.gl);
    return k;
}

template <class T>
KernelSpec select_kernel(const Op &o, int device, const char *op) {
    const int sm_count = device_limits(device).sm_count;
    const int64_t fill = fill_threads(sm_count);
    const char *tn = sizeof(T) == 8 ? "f64" : "f32";
    KernelSpec k;
    if (o.soa) {
        // RT: the rows up to 8 (one tile for small elements); EW: 8 sums per thread in all,
        // fewer elements per thread (then warps splitting the row tiles) for few elements.
        int rt = int(std::min<int64_t>(8, pow2ceil(o.rows)));
        int ew = 8 / rt, w = 1;
        if ((o.batch + 32 * ew - 1) / (32 * ew) * 32 < fill) ew = 1;
        // f32 rows of 1 (dot) that 2 elements per thread would still fill: 4 adjacent
        // elements per thread, each entry's 4 in one 16-byte load, a warp's load 512 bytes.
        // H100: n = 160 B = 838860 0.407 -> 0.386 ms (one round of 209715 threads, where 2
        // per thread 32 apart took 1.55 grid-stride rounds); n = 16..64 (was 8 per thread
        // 32 apart, 128 bytes a load) 0.413 -> 0.397, 0.403 -> 0.386, 0.396 -> 0.377.
        // From 7/8 of a fill since the loads of 4 columns go out together (soa_tile): n =
        // 512 B = 262144 (0.97 of a fill) 0.270-0.273 ms on one element a thread, 0.256-0.260
        // here (H200 run 300).
        if (sizeof(T) == 4 && rt == 1 && (o.batch + 63) / 64 * 32 >= fill * 7 / 8) ew = 4;
        const int64_t tiles = (o.rows + rt - 1) / rt, groups = (o.batch + 32 * ew - 1) / (32 * ew);
        // Many elements of 3 rows or more (tiles of 4 or 8 rows), their items (groups of
        // 32 EW elements x row tiles) at least half a fill of warps: the staged kernel, its
        // grid sized by the items (a warp an item at a time).
        const Staged z = staged_shape<T>(rt);
        if (const int64_t zt = (o.rows + z.rt - 1) / z.rt; rt >= 4 && o.batch / (32 * z.ew) * zt * 32 * 2 >= fill) {
            k.fn = soa_staged_kernel<T>(z);
            k.model = Model::ThreadPerElement;
            k.group = 1;
            k.unit_threads = 32;
            k.unit_elements = 1;  // a warp works on one item at a time
            k.items = (o.batch + 32 * z.ew - 1) / (32 * z.ew) * zt;
            k.unit_shared = int64_t(kStagedSlots) * (z.rt + 1) * 32 * z.ew * int64_t(sizeof(T));
            k.name = fmt::format("{}_soa_staged<{}, {} rows x {} adjacent elements per thread, one column a stage, {} "
                                 "stages a warp>",
                                 op, tn, z.rt, z.ew, kStagedSlots);
            k.why = fmt::format("SoA, many elements: thread-per-element ({} adjacent a thread), each warp staging its "
                                "{} elements' entries (runs of {} bytes) through shared memory by cp.async ({} of its {} "
                                "stages in flight while it sums one), {} row sums in registers",
                                z.ew, 32 * z.ew, 32 * z.ew * int(sizeof(T)), kStagedSlots - 1, kStagedSlots,
                                z.rt * z.ew);
            return k;
        }
        while (groups * 32 * w < fill && w < 32 && w < tiles) w *= 2;
        if (ew == 1) {
            // Few elements of long rows: warps across ranges of columns as well.
            const SoaSplit sp = soa_split_of(o, fill);
            if (sp.wc > 1 || sp.rb > 1) {
                const int wb = sp.w / sp.rb;  // warps a block for its 32 elements
                k.fn = soa_split_kernel<T>(sp.rt);
                k.model = Model::BlockPerElement;
                k.group = wb;
                k.sub = sp.w;
                k.unit_threads = 32 * wb;
                k.unit_elements = 1;
                k.items = groups * sp.rb;  // (32 elements, block of their rows) pairs
                // (the partial sums of the column ranges; one range adds none)
                k.unit_shared = sp.wc > 1 ? int64_t(32 * wb * sp.rt) * int64_t(sizeof(double)) : 0;
                k.name = fmt::format("{}_soa_split<{}, {} rows per thread, {} warps per 32 elements: {} row groups x "
                                     "{} column ranges, in {} block{}>",
                                     op, tn, sp.rt, sp.w, sp.w / sp.wc, sp.wc, sp.rb, sp.rb == 1 ? "" : "s");
                k.why = fmt::format("SoA with only {} elements of {} x {}: {} warps share each 32 elements, split "
                                    "over rows and {} range{} of columns, partial sums added in a fixed order{}",
                                    o.batch, o.rows, o.cols, sp.w, sp.wc, sp.wc == 1 ? "" : "s",
                                    sp.rb == 1 ? "" : fmt::format(", {} blocks sharing their rows", sp.rb));
                return k;
            }
        }
        if (ew == 1) {
            // A warp per row tile (no thread loops over tiles: f32 n = 16 B = 262144, 2 warps
            // per 32 elements, was 1). Few elements of more than 8 rows and room for twice
            // the warps: tiles of 4 rows (f64 n = 64 B = 8192: 65536 -> 131072 threads).
            w = int(std::max<int64_t>(w, std::min<int64_t>(32, pow2ceil(tiles))));
            if (rt == 8 && w < 32 && groups * 32 * w * 2 <= fill) rt = 4, w *= 2;
        }
        k.fn = soa_kernel<T>(rt, ew);
        const bool adj = sizeof(T) == 4 && rt == 1 && ew == 4;
        k.model = w == 1 ? Model::ThreadPerElement : Model::BlockPerElement;
        k.group = w;
        k.unit_threads = 32 * w;
        k.unit_elements = 32 * ew;
        k.name = fmt::format("{}_soa<{}, {} rows x {} {}elements per thread, {} warps per {} elements>", op, tn, rt,
                             ew, adj ? "adjacent " : "", w, 32 * ew);
        k.why = w == 1 ? (adj ? fmt::format("SoA: one thread per element ({} adjacent per thread, each entry's {} "
                                            "in one 16-byte load), a warp's loads covering {} consecutive "
                                            "elements, {} row sums in registers",
                                            ew, ew, 32 * ew, rt)
                              : fmt::format("SoA: one thread per element ({} per thread, 32 apart), a warp's loads "
                                            "covering 32 consecutive elements, {} row sums in registers",
                                            ew, rt))
                       : fmt::format("SoA, {} elements of {} rows: {} warps share each 32 elements, one or more "
                                     "row tiles of {} each{}",
                                     o.batch, o.rows, w, rt, groups * 32 * w <= fill ? ", to fill the device" : "");
        return k;
    }
    // Many elements of contiguous rows: the flat kernel, where the element's lanes fill the
    // device, or on sm_90 the bulk kernel, where the elements are packed.
    if (const FlatShape f = flat_shape<T>(o); f.gl > 0 && o.batch * (int64_t(f.gl) << f.lg_slots) >= fill) {
        if (const BulkShape b = bulk_shape<T>(o, f); bulk_fits<T>(o, f, b, device))
            return bulk_spec<T>(o, f, b, op);
        return flat_spec<T>(o, f, op);
    }
    const int chunks_in = chunks_of<T>(o.rows_contiguous ? o.cols : o.rows);
    const int outer = o.rows_contiguous ? o.rows : o.cols;
    const int split = aos_split<T>(o);
    int g = 0;
    if (o.rows_contiguous) {
        // GI = split across a row; GO across rows, within a warp, then past it for few elements.
        int go = int(std::min<int64_t>(32 / split, pow2ceil(outer)));
        while (o.batch * split * go < fill && split * go < 512 && go < pow2ceil(outer)) go *= 2;
        g = split * go;
        k.fn = o.rows == 1 ? reinterpret_cast<const void *>(&vec_rows_kernel<T, 1, 4>)
                          : reinterpret_cast<const void *>(&vec_rows_kernel<T, kRowsUnroll, 1>);
        k.name = fmt::format("{}_rows<{}, {} lanes across a row x {} across rows>", op, tn, split, go);
    } else {
        int gi = int(std::min<int64_t>(32, pow2ceil(chunks_in)));
        while (o.batch * gi * split < fill && gi * split < 1024 && gi < pow2ceil(chunks_in)) gi *= 2;
        g = gi * split;
        k.fn = reinterpret_cast<const void *>(&vec_cols_kernel<T, kColChunks>);
        k.name = fmt::format("{}_cols<{}, {} lanes down a column x {} across columns>", op, tn, gi, split);
    }
    k.model = g == 1 ? Model::ThreadPerElement : g <= 32 ? Model::WarpGroup : Model::BlockPerElement;
    k.group = g;
    k.sub = g;
    k.unit_threads = std::max(32, g);
    k.unit_elements = std::max(1, 32 / g);
    const char *dir = o.rows_contiguous ? "row" : "column";
    k.why = g == 1 ? fmt::format("AoS {}s of at most one 16-byte chunk ({} entries): one thread per element", dir,
                                 o.rows_contiguous ? o.cols : o.rows)
            : g <= 32
                ? fmt::format("AoS, contiguous {}s of {} entries: {} threads of a warp per element, 16-byte chunks "
                              "across each {}, sums reduced by shuffles",
                              dir, o.rows_contiguous ? o.cols : o.rows, g, dir)
                : fmt::format("AoS with only {} elements of {} x {}: a block of {} threads per element, its warps on "
                              "distinct rows, to fill the device",
                              o.batch, o.rows, o.cols, g);
    return k;
}

template <class T>
Args<T> args_of(const Op &o, const CudaConfig &cfg, const void *a, const void *x, void *y) {
    Args<T> g{};
    g.a = static_cast<const T *>(a);
    g.x = static_cast<const T *>(x);
    g.y = static_cast<T *>(y);
    g.ar = o.ar, g.ac = o.ac;
    g.rows = o.rows, g.cols = o.cols;
    g.batch = o.batch;
    g.lg = lg2(cfg.group);
    if (o.soa) {
        g.lg_split = g.lg;  // warps per 32 elements (a block's); lg_cols: launch_args
    } else {
        g.lg_split = lg2(aos_split<T>(o));
        constexpr int V = Vec<T>::n;
        g.uniform = o.rows_contiguous ? (o.rows == 1 || o.ar % V == 0) : (o.cols == 1 || o.ac % V == 0);
    }
    return g;
}

// Queues the planned kernel: the SoA kernels take SoaArgs (or its prefix Args), the AoS
// kernels Args.
template <class T>
void launch_args(const Op &o, const CudaConfig &cfg, void *stream, const Args<T> &g, const char *what) {
    if (o.soa) {
        SoaArgs<T> w{};
        static_cast<Args<T> &>(w) = g;
        // Kernels that read a thread's elements adjacent: each entry's run in one 16-byte
        // load where the arrays and every entry's offset line up on 16 bytes.
        w.adj = on16(g.a) && on16(g.x) && g.ar % 4 == 0 && g.ac % 4 == 0 && g.xi % 4 == 0;
        constexpr int V = Vec<T>::n;
        w.staged = on16(g.a) && on16(g.x) && g.ar % V == 0 && g.ac % V == 0 && g.xi % V == 0;
        // The split kernel's column ranges and blocks a group (no other kernel reads them).
        const SoaSplit sp = soa_split_planned<T>(o, cfg);
        w.lg_cols = lg2(sp.wc);
        w.lg_rb = lg2(sp.rb);
        launch_planned(cfg, stream, w, what);
    } else {
        launch_planned(cfg, stream, g, what);
    }
}

// The flat kernel's arguments, where it is the planned kernel (false otherwise). A and x
// take vector loads where every chunk is aligned (the array's address too).
template <class T>
bool launch_flat(const Op &o, const CudaConfig &cfg, void *stream, const void *a, const void *x, void *y,
                 int64_t xe, int64_t ye, int64_t yi, double alpha, double beta, const char *what) {
    const FlatShape f = flat_shape<T>(o);
    if (f.gl == 0 || cfg.kernel != flat_kernel<T>(f)) return false;
    constexpr int V = Vec<T>::n;
    FlatArgs<T> g{};
    g.a = static_cast<const T *>(a);
    g.x = static_cast<const T *>(x);
    g.y = static_cast<T *>(y);
    g.ae = o.ae, g.ar = o.ar, g.xe = xe, g.ye = ye, g.yi = yi;
    g.rows = o.rows, g.cols = o.cols;
    g.lg_gl = lg2(f.gl), g.lg_slots = f.lg_slots;
    g.alpha = alpha, g.beta = beta;
    g.batch = o.batch;
    // flat_shape: ae and ar on the chunk grid; RC = 2 loads x as one 8-byte piece or entry
    // by entry (flat_body), whatever x's alignment.
    g.vec = on16(a) && (f.rc == 2 || (on16(x) && xe % V == 0));
    g.tail = f.rc == 1 ? o.cols % V != 0 : o.rows % f.rc != 0;
    launch_planned(cfg, stream, g, what);
    return true;
}

// The bulk kernel's arguments, where it is the planned kernel (false otherwise).
template <class T>
bool launch_bulk(const Op &o, const CudaConfig &cfg, void *stream, const void *a, const void *x, void *y,
                 int64_t ye, double alpha, double beta, const char *what) {
    const FlatShape f = flat_shape<T>(o);
    if (f.gl == 0 || cfg.kernel != bulk_kernel<T>(f)) return false;  // (nullptr: never the planned kernel)
    const BulkShape b = bulk_shape<T>(o, f);
    BulkArgs<T> g{};
    FlatArgs<T> &h = g.f;
    h.a = static_cast<const T *>(a);
    h.x = static_cast<const T *>(x);
    h.y = static_cast<T *>(y);
    h.ae = o.ae, h.ar = o.ar, h.xe = o.xe, h.ye = ye, h.yi = 1;
    h.rows = o.rows, h.cols = o.cols;
    h.lg_gl = lg2(f.gl), h.lg_slots = f.lg_slots;
    h.alpha = alpha, h.beta = beta;
    h.batch = o.batch;
    h.vec = true, h.tail = false;
    g.per_stage = b.e, g.stages = kBulkStages, g.stage_bytes = b.stage_bytes, g.x_offset = b.x_offset;
    g.bulk = on16(a) && on16(x);
    launch_planned(cfg, stream, g, what);
    return true;
}

}  // namespace

CudaConfig plan_dot_cuda(const DotProblem &pb, int device, double occupancy_target) {
    require_device(device);
    const Op o = op_of(pb);
    const KernelSpec k = pb.dtype == APAIRS_DTYPE_F64 ? select_kernel<double>(o, device, "dot")
                                                      : select_kernel<float>(o, device, "dot");
    return plan_kernel(k, pb.batch, device, occupancy_target, 1, fmt::format("batched dot n={}", pb.n));
}

void launch_dot_cuda(const DotProblem &pb, const CudaConfig &cfg, void *stream, const void *x, const void *y,
                     void *r) {
    DeviceScope scope(cfg.device);
    const Op o = op_of(pb);
    constexpr const char *what = "batched dot kernel launch";
    if (pb.dtype == APAIRS_DTYPE_F64 ? launch_bulk<double>(o, cfg, stream, x, y, r, 1, 1, 0, what)
                                     : launch_bulk<float>(o, cfg, stream, x, y, r, 1, 1, 0, what))
        return;
    if (pb.dtype == APAIRS_DTYPE_F64 ? launch_flat<double>(o, cfg, stream, x, y, r, pb.y.stride, 1, 0, 1, 0, what)
                                     : launch_flat<float>(o, cfg, stream, x, y, r, pb.y.stride, 1, 0, 1, 0, what))
        return;
    auto go = [&](auto g) {
        // x plays A (one row), y plays x; r[e] is y[e].
        g.ae = pb.x.soa ? 1 : pb.x.stride;
        g.xe = pb.y.soa ? 1 : pb.y.stride;
        g.xi = pb.y.soa ? pb.y.stride : 1;
        g.ye = 1, g.yi = 0;
        g.alpha = 1, g.beta = 0;
        launch_args(o, cfg, stream, g, what);
    };
    if (pb.dtype == APAIRS_DTYPE_F64)
        go(args_of<double>(o, cfg, x, y, r));
    else
        go(args_of<float>(o, cfg, x, y, r));
}

CudaConfig plan_gemv_cuda(const GemvProblem &pb, int device, double occupancy_target) {
    if (pb.alpha == 0) return plan_scale_cuda(pb.y, pb.dtype, pb.batch, device, occupancy_target);
    require_device(device);
    const Op o = op_of(pb);
    const KernelSpec k = pb.dtype == APAIRS_DTYPE_F64 ? select_kernel<double>(o, device, "gemv")
                                                      : select_kernel<float>(o, device, "gemv");
    return plan_kernel(k, pb.batch, device, occupancy_target, 1,
                       fmt::format("batched gemv {}x{}{}", pb.m, pb.n, pb.trans ? " T" : ""));
}

void launch_gemv_cuda(const GemvProblem &pb, const CudaConfig &cfg, void *stream, const void *A, const void *x,
                      void *y) {
    if (pb.alpha == 0) return launch_scale_cuda(pb.y, pb.dtype, pb.beta, pb.batch, cfg, stream, y);
    DeviceScope scope(cfg.device);
    const Op o = op_of(pb);
    constexpr const char *what = "batched gemv kernel launch";
    if (pb.dtype == APAIRS_DTYPE_F64
            ? launch_bulk<double>(o, cfg, stream, A, x, y, pb.y.stride, pb.alpha, pb.beta, what)
            : launch_bulk<float>(o, cfg, stream, A, x, y, pb.y.stride, double(float(pb.alpha)),
                                 double(float(pb.beta)), what))
        return;
    if (pb.dtype == APAIRS_DTYPE_F64 ? launch_flat<double>(o, cfg, stream, A, x, y, pb.x.stride, pb.y.stride, 1,
                                                           pb.alpha, pb.beta, what)
                                     : launch_flat<float>(o, cfg, stream, A, x, y, pb.x.stride, pb.y.stride, 1,
                                                          double(float(pb.alpha)), double(float(pb.beta)), what))
        return;
    auto go = [&](auto g) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(g.a)>>;
        g.ae = pb.a.soa ? 1 : pb.a.stride;
        g.xe = pb.x.soa ? 1 : pb.x.stride;
        g.xi = pb.x.soa ? pb.x.stride : 1;
        g.ye = pb.y.soa ? 1 : pb.y.stride;
        g.yi = pb.y.soa ? pb.y.stride : 1;
        g.alpha = double(T(pb.alpha));
        g.beta = double(T(pb.beta));
        launch_args(o, cfg, stream, g, what);
    };
    if (pb.dtype == APAIRS_DTYPE_F64)
        go(args_of<double>(o, cfg, A, x, y));
    else
        go(args_of<float>(o, cfg, A, x, y));
}

}  // namespace apairs::batched
