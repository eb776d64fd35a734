// CUDA engine of the batched family: gemm, C_e = alpha op(A_e) op(B_e) + beta C_e.
//
// Ha et al. (2013)'s execution models, chosen by the element's size and the batch count:
//
//   thread-per-element (max(m, n, k) <= 4) and warp-group (AoS up to 8, and f32 up to
//     16 on enough elements): one kernel. Each warp
//     owns EW = 32 / G elements at a time (G threads per element, G = 1 for
//     thread-per-element) and moves them through its own slice of shared memory:
//     the warp copies A and B of its EW elements in by cp.async in memory order (whole
//     lines for AoS and SoA alike, whatever the order and transposes; all of a round's
//     copies in flight at once, one wait a round), each group computes
//     its element from shared memory (every thread a register tile of C: all rows times
//     every G-th column), writes the sums back into shared memory, and the warp copies C
//     out in memory order. Only __syncwarp, no block barriers; square 2, 4, 8, 16 are
//     compiled with their sizes, any other shape runs the same code with run-time sizes
//     under a compile-time bound.
//   SoA lane (square 8 x 8 x 8 and 16 x 16 x 16): a lane an element, 32 consecutive
//     elements a unit of warps that split C: see "SoA lane kernel" below.
//   pipelined tiles (any other C up to 64 x 64): see "Pipelined tile kernels" below.
//   block-per-element (C above 64 x 64): a sub-block of S threads per element (each an
//     TM x TN register tile); A and B are staged KS = 16 dimensions at a time; for SoA
//     the block's elements are consecutive, so the staging loads and the C stores
//     (consecutive threads, consecutive elements) cover whole sectors.
//
// Host-side normalisation: a column-major C is computed as the row-major C^T =
// op(B)^T op(A)^T (swap the operands, flip their transposes), so the kernels see a
// row-major C. Each operand is seen as its "fast grid" (the stored matrix in its memory
// order: rows of ld-strided contiguous runs) plus a flag `swap` saying whether the
// logical op entry (x, y) is fast-grid entry (x, y) or (y, x).
//
// Accuracy: every entry is summed in the element type, its k products in order
// l = 0..k-1 with fma, then alpha * sum (+ beta * C), as the host engine does; except
// the f64 AoS tiles of 32 x 32 with k >= 32 and of 64 x 64 with k > 16, and the f32 AoS
// tiles of 64 x 64 with k >= 32 (mma_slice): there the tensor cores' f64 mma adds the
// products four at a time in an order of its own (f32 operands converted exactly, the
// sums and alpha, beta in f64, one rounding to f32 at the end), which keeps apairs.h's
// (k + 2) u bound (it holds for any order; f32's error is then at most u |exact| plus
// (1 + u) times f64's) but not the host's last bits.
//
// alpha = 0 (gemm and gemv, as BLAS): scale_kernel alone, C = beta C (+0 where beta = 0,
// C not read); A, B and x are neither read nor staged.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "batched/cuda.hpp"
#include "cuda/bulk.cuh"
#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "batched/launch.cuh"
#include "batched/walker.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

const char *model_name(Model m) {
    switch (m) {
    case Model::ThreadPerElement: return "thread-per-element";
    case Model::WarpGroup: return "warp-group";
    case Model::BlockPerElement: return "block-per-element";
    case Model::Tiles: return "tiles";
    }
    return "?";
}

namespace {

// ---------------------------------------------------------------------------------
// KernelSpec arguments (after normalisation)

template <class T>
struct Opnd {
    const T *p;
    int64_t ld, stride;  // as in Matrix
    int fr, fc;          // fast grid: rows of fc contiguous entries, ld apart
    bool soa, swap;      // swap: logical (x, y) is fast-grid (y, x)
    bool vec;            // 16-byte copies line up: p, stride (and ld for AoS) on 16 bytes
};

template <class T>
struct Args {
    Opnd<T> a, b;      // a: logical m x k, b: logical k x n
    T *c;              // row-major m x n
    int64_t ldc, sc;
    bool soa_c, vec_c;  // vec_c: 16-byte accesses to C line up (as Opnd::vec)
    int m, n, k;
    T alpha, beta;
    int64_t batch;
};

__host__ __device__ constexpr int pad_odd(int x) { return x | 1; }
// The smallest multiple of g at least x whose quotient is odd: element strides of this
// form put the g threads of consecutive groups on distinct banks.
__host__ __device__ constexpr int pad_group(int x, int g) {
    return ((x + g - 1) / g | 1) * g;
}
__host__ __device__ constexpr int cmax(int a, int b) { return a > b ? a : b; }
__host__ __device__ constexpr int cmin(int a, int b) { return a < b ? a : b; }

template <class T>
__device__ __forceinline__ T load_ro(const T *p) { return __ldg(p); }

// Hides a value from loop-invariant code motion: per-lane offsets recomputed each round
// cost a few integer instructions, while the compiler's alternative (keeping every
// unrolled access's 64-bit offset live across the element loop) spills.
__device__ __forceinline__ int opaque(int x) {
    asm volatile("" : "+r"(x));
    return x;
}
__device__ __forceinline__ int64_t opaque64(int64_t x) {
    asm volatile("" : "+l"(x));
    return x;
}
template <class P>
__device__ __forceinline__ P *opaque_ptr(P *x) {
    asm volatile("" : "+l"(x));
    return x;
}

// ---------------------------------------------------------------------------------
// Thread-per-element / warp-group kernel

template <int G, int MB, int NB, int KB>
struct WarpShape {
    static constexpr int EW = 32 / G;            // elements per warp round
    static constexpr int CG = cmin(G, NB);       // threads of a group across columns
    static constexpr int RG = G / CG;            // ... and across rows
    static constexpr int MA = (MB + RG - 1) / RG, NBB = NB / CG;  // a thread's tile
    // Shared memory: element q's A at q * ESA (rows RSA apart), B at q * ESB, C at q * ESC.
    // The element strides are odd (in groups of CG): a load of the warp's EW elements
    // meets no bank conflict. Rows are padded to an odd length for groups (G > 1), where
    // a swapped operand's staging copies land RS apart (unpadded: 4- to 16-way conflicts
    // at 8 x 8 and 16 x 16); thread-per-element's 4 x 4 and 2 x 2 need none (a warp's
    // copies cover whole elements) and keep the shared memory.
    static constexpr int RSA = G > 1 ? pad_odd(KB) : KB, ESA = pad_odd(MB * RSA);
    static constexpr int RSB = G > 1 ? pad_odd(NB) : NB, ESB = pad_group(KB * RSB, CG);
    static constexpr int ESC = pad_group(MB * NB, CG);
    static constexpr int REGION = EW * cmax(ESA + ESB, ESC);  // elements of T per warp
    static_assert(32 % G == 0 && NB % CG == 0, "group shape");
};

// Position x of the memory-order walk over a warp's EW elements' R x C grids, as element
// q, row r and column c: AoS element by element, row by row; SoA entry by entry, the EW
// elements of an entry together. With R, C and EW powers of two the three are bit fields
// of x, so for x = 32 i + lane they are the lane's fields plus i's (no carries): the
// compiled-size kernels work out a lane's part once and add i's as constants.
struct Pos {
    int q, r, c;
};
template <bool SOA>
__device__ __forceinline__ Pos walk_pos(unsigned x, unsigned ew, unsigned R, unsigned C) {
    if constexpr (SOA)
        return {int(x % ew), int(x / ew / C), int(x / ew % C)};
    else
        return {int(x / C / R), int(x / C % R), int(x % C)};
}

// One entry by cp.async where `ok`, else nothing (a predicated copy, no branch).
template <class T>
__device__ __forceinline__ void cp_async_one_if(bool ok, T *dst, const T *src) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile(
        "{\n .reg .pred p;\n setp.ne.b32 p, %0, 0;\n @p cp.async.ca.shared.global [%1], [%2], %3;\n}\n" ::"r"(
            int(ok)),
        "r"(s), "l"(src), "n"(int(sizeof(T)))
        : "memory");
}

// Copies the fast grids of a warp's EW elements (those of q < rem) into shared memory at
// q * ES + x * RS + y (logical (x, y)), in memory order. FR, FC: the fast grid's size
// when known at compile time (powers of two), else 0. Each entry by cp.async (no
// registers held while it is in flight), so a round's copies of A and B are all in
// flight at once and the warp waits for memory once a round (cp_wait<0>, then
// __syncwarp).
template <class T, bool SOA, int EW, int FR, int FC, int RS, int ES>
__device__ __forceinline__ void warp_stage_impl(const Opnd<T> &o, int64_t e0, int rem, T *sh, int lane) {
    auto global = [&](Pos x) {
        return SOA ? (int64_t(x.r) * o.ld + x.c) * o.stride + x.q : x.q * o.stride + int64_t(x.r) * o.ld + x.c;
    };
    auto shared = [&](Pos x) { return x.q * ES + (o.swap ? x.c * RS + x.r : x.r * RS + x.c); };
    if constexpr (FR && FC) {
        static_assert((EW & (EW - 1)) == 0 && (FR & (FR - 1)) == 0 && (FC & (FC - 1)) == 0 && EW * FR * FC % 32 == 0,
                      "bit fields");
        // The source pointer steps from copy to copy (opaque: one pointer live, not one per
        // copy); the destination's steps are constants but for `swap`.
        const Pos l = walk_pos<SOA>(lane, EW, FR, FC);
        const T *src = o.p + (SOA ? e0 : e0 * o.stride) + global(l);
        T *const dst = sh + shared(l);
#pragma unroll
        for (int i = 0; i < EW * FR * FC / 32; ++i) {
            const Pos f = walk_pos<SOA>(32 * i, EW, FR, FC);
            if (i > 0) src = opaque_ptr(src + (global(f) - global(walk_pos<SOA>(32 * (i - 1), EW, FR, FC))));
            cp_async_one_if(l.q + f.q < rem, dst + shared(f), src);
        }
    } else {
        const int total = EW * o.fr * o.fc;
#pragma unroll 4
        for (int x = lane; x < total; x += 32) {
            const Pos f = walk_pos<SOA>(x, EW, o.fr, o.fc);
            if (f.q < rem) cp_async_one(sh + shared(f), o.p + (SOA ? e0 : e0 * o.stride) + global(f));
        }
    }
}

template <class T, int EW, int FR, int FC, int RS, int ES>
__device__ __forceinline__ void warp_stage(const Opnd<T> &o, int64_t e0, int rem, T *sh, int lane) {
    if (o.soa)
        warp_stage_impl<T, true, EW, FR, FC, RS, ES>(o, e0, rem, sh, lane);
    else
        warp_stage_impl<T, false, EW, FR, FC, RS, ES>(o, e0, rem, sh, lane);
}

// C out of shared memory (row-major, q * ESC + i * NB + j) in memory order: alpha * sum
// (+ beta * C), elements q < rem. M, N: C's size when compiled (powers of two), else 0.
template <class T, bool SOA, int EW, int M, int N, int NB, int ESC>
__device__ __forceinline__ void warp_store_c(const Args<T> &g, int64_t e0, int rem, const T *cs, int lane) {
    const bool read_c = g.beta != T(0);
    auto store = [&](bool ok, Pos x, T *dst) {
        if (ok) {
            T v = g.alpha * cs[x.q * ESC + x.r * NB + x.c];
            if (read_c) v += g.beta * *dst;
            *dst = v;
        }
    };
    auto global = [&](Pos x) {
        return SOA ? (int64_t(x.r) * g.ldc + x.c) * g.sc + x.q : x.q * g.sc + int64_t(x.r) * g.ldc + x.c;
    };
    T *const c0 = g.c + (SOA ? e0 : e0 * g.sc);
    if constexpr (M && N) {
        static_assert((M & (M - 1)) == 0 && (N & (N - 1)) == 0 && EW * M * N % 32 == 0, "bit fields");
        const Pos l = walk_pos<SOA>(lane, EW, M, N);
        T *c = c0 + global(l);
#pragma unroll
        for (int i = 0; i < EW * M * N / 32; ++i) {
            const Pos f = walk_pos<SOA>(32 * i, EW, M, N);
            if (i > 0) c = opaque_ptr(c + (global(f) - global(walk_pos<SOA>(32 * (i - 1), EW, M, N))));
            store(l.q + f.q < rem, Pos{l.q + f.q, l.r + f.r, l.c + f.c}, c);
        }
    } else {
        const int total = EW * g.m * g.n;
#pragma unroll 4
        for (int x = lane; x < total; x += 32) {
            const Pos f = walk_pos<SOA>(x, EW, g.m, g.n);
            store(f.q < rem, f, c0 + global(f));
        }
    }
}

template <class T, int G, int MB, int NB, int KB, bool EXACT>
__global__ void __launch_bounds__(512) gemm_warp_kernel(const Args<T> g) {
    using W = WarpShape<G, MB, NB, KB>;
    constexpr int EW = W::EW, CG = W::CG, RG = W::RG;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const region = reinterpret_cast<T *>(smem_raw) + (threadIdx.x / 32) * W::REGION;
    T *const As = region, *const Bs = region + EW * W::ESA, *const Cs = region;

    const int lane = threadIdx.x & 31;
    const int m = EXACT ? MB : g.m, n = EXACT ? NB : g.n, k = EXACT ? KB : g.k;
    const int q = lane / G, r = lane % G, cj = r % CG, ri = r / CG;
    const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int64_t nwarps = int64_t(gridDim.x) * (blockDim.x / 32);

    for (int64_t e0 = warp * EW; e0 < g.batch; e0 += nwarps * EW) {
        const int rem = int(g.batch - e0 < EW ? g.batch - e0 : EW);  // elements of this round
        warp_stage<T, EW, EXACT ? MB : 0, EXACT ? KB : 0, W::RSA, W::ESA>(g.a, e0, rem, As, opaque(lane));
        warp_stage<T, EW, EXACT ? KB : 0, EXACT ? NB : 0, W::RSB, W::ESB>(g.b, e0, rem, Bs, opaque(lane));
        cp_commit();
        cp_wait<0>();
        __syncwarp();

        // This thread's tile of its element: rows ri + RG a, columns cj + CG b.
        T acc[W::MA][W::NBB];
#pragma unroll
        for (int a = 0; a < W::MA; ++a)
#pragma unroll
            for (int b = 0; b < W::NBB; ++b) acc[a][b] = T(0);
        const T *ap = As + q * W::ESA + ri * W::RSA;
        const T *bp = Bs + q * W::ESB + cj;
        auto step = [&](int l) {
            T bv[W::NBB];
#pragma unroll
            for (int b = 0; b < W::NBB; ++b) bv[b] = bp[l * W::RSB + b * CG];
#pragma unroll
            for (int a = 0; a < W::MA; ++a) {
                const T av = ap[a * RG * W::RSA + l];
#pragma unroll
                for (int b = 0; b < W::NBB; ++b) acc[a][b] = fma(av, bv[b], acc[a][b]);
            }
        };
        if constexpr (EXACT) {
#pragma unroll 4
            for (int l = 0; l < KB; ++l) step(l);
        } else {
#pragma unroll 4
            for (int l = 0; l < k; ++l) step(l);
        }
        __syncwarp();  // C's staging area overlaps A and B
#pragma unroll
        for (int a = 0; a < W::MA; ++a)
#pragma unroll
            for (int b = 0; b < W::NBB; ++b) {
                const int i = ri + RG * a, j = cj + CG * b;
                if (EXACT || (i < m && j < n)) Cs[q * W::ESC + i * NB + j] = acc[a][b];
            }
        __syncwarp();

        // C out in memory order (row-major after normalisation).
        if (g.soa_c)
            warp_store_c<T, true, EW, EXACT ? MB : 0, EXACT ? NB : 0, NB, W::ESC>(g, e0, rem, Cs, opaque(lane));
        else
            warp_store_c<T, false, EW, EXACT ? MB : 0, EXACT ? NB : 0, NB, W::ESC>(g, e0, rem, Cs, opaque(lane));
        __syncwarp();
    }
}

// ---------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------
// Block-per-element kernel

template <int TY, int TX, int TM, int TN>
struct BlockShape {
    static constexpr int S = TY * TX;              // threads per element
    static constexpr int KS = 16;                  // dimensions per staged slice
    static constexpr int MP = TY * TM + 1, NP = TX * TN + 1;  // shared row strides (odd)
    static constexpr int ES = pad_odd(KS * (MP + NP));         // elements of T per element
};


// Stages the fast-grid rectangle [r0, r0 + nr) x [c0, c0 + nc) of the block's u
// elements, in memory order, to sh[q * ES + base + (x - o0) * s0 + (y - o1) * s1] for
// logical (x, y).
template <class T, bool SOA, int ES>
__device__ __forceinline__ void block_stage_impl(const Opnd<T> &o, int64_t e0, int u, int64_t batch, int r0,
                                                 int nr, int c0, int nc, T *sh, int base, int o0, int s0, int o1,
                                                 int s1) {
    constexpr int CH = 8;
    const int tid = threadIdx.x, nt = blockDim.x;
    // AoS: (cc, rr, q) with cc fastest; SoA: (q, cc, rr).
    Walker w = SOA ? Walker(tid, nt, u, nc) : Walker(tid, nt, nc, nr);
    const int last = SOA ? nr : u;
    while (w.d2 < last) {
        T v[CH];
        int dst[CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            int q, rr, cc;
            if constexpr (SOA) {
                q = w.d0;
                cc = w.d1;
                rr = w.d2;
            } else {
                cc = w.d0;
                rr = w.d1;
                q = w.d2;
            }
            const int64_t e = e0 + q;
            const bool ok = w.d2 < last && e < batch;
            rr += r0;
            cc += c0;
            const int64_t idx = rr * o.ld + cc;
            v[c] = ok ? load_ro(o.p + (SOA ? idx * o.stride + e : e * o.stride + idx)) : T(0);
            const int x = o.swap ? cc : rr, y = o.swap ? rr : cc;
            dst[c] = ok ? q * ES + base + (x - o0) * s0 + (y - o1) * s1 : -1;
            w.advance();
        }
#pragma unroll
        for (int c = 0; c < CH; ++c)
            if (dst[c] >= 0) sh[dst[c]] = v[c];
    }
}

template <class T, int ES>
__device__ __forceinline__ void block_stage(const Opnd<T> &o, int64_t e0, int u, int64_t batch, int r0, int nr,
                                            int c0, int nc, T *sh, int base, int o0, int s0, int o1, int s1) {
    if (o.soa)
        block_stage_impl<T, true, ES>(o, e0, u, batch, r0, nr, c0, nc, sh, base, o0, s0, o1, s1);
    else
        block_stage_impl<T, false, ES>(o, e0, u, batch, r0, nr, c0, nc, sh, base, o0, s0, o1, s1);
}

template <class T, int TY, int TX, int TM, int TN>
__global__ void __launch_bounds__(256) gemm_block_kernel(const Args<T> g) {
    using B = BlockShape<TY, TX, TM, TN>;
    constexpr int S = B::S, KS = B::KS, MP = B::MP, NP = B::NP, ES = B::ES;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const sh = reinterpret_cast<T *>(smem_raw);

    const int u = blockDim.x / S, t = threadIdx.x;
    // SoA: consecutive threads own consecutive elements (coalesced C stores).
    const int q = g.soa_c ? t % u : t / S, loc = g.soa_c ? t / u : t % S;
    const int tx = loc % TX, ty = loc / TX;
    const int m = g.m, n = g.n, k = g.k;
    const T *const ap = sh + q * ES + ty;
    const T *const bp = sh + q * ES + KS * MP + tx;

    for (int64_t e0 = int64_t(blockIdx.x) * u; e0 < g.batch; e0 += int64_t(gridDim.x) * u) {
        T acc[TM][TN];
#pragma unroll
        for (int a = 0; a < TM; ++a)
#pragma unroll
            for (int b = 0; b < TN; ++b) acc[a][b] = T(0);

        for (int l0 = 0; l0 < k; l0 += KS) {
            const int ks = min(KS, k - l0);
            // A slice: logical (i, l), i < m, l in [l0, l0 + ks) -> As[l - l0][i].
            if (g.a.swap)
                block_stage<T, ES>(g.a, e0, u, g.batch, l0, ks, 0, m, sh, 0, 0, 1, l0, MP);
            else
                block_stage<T, ES>(g.a, e0, u, g.batch, 0, m, l0, ks, sh, 0, 0, 1, l0, MP);
            // B slice: logical (l, j) -> Bs[l - l0][j].
            if (g.b.swap)
                block_stage<T, ES>(g.b, e0, u, g.batch, 0, n, l0, ks, sh, KS * MP, l0, NP, 0, 1);
            else
                block_stage<T, ES>(g.b, e0, u, g.batch, l0, ks, 0, n, sh, KS * MP, l0, NP, 0, 1);
            __syncthreads();
            auto step = [&](int l) {
                T bv[TN];
#pragma unroll
                for (int b = 0; b < TN; ++b) bv[b] = bp[l * NP + TX * b];
#pragma unroll
                for (int a = 0; a < TM; ++a) {
                    const T av = ap[l * MP + TY * a];
#pragma unroll
                    for (int b = 0; b < TN; ++b) acc[a][b] = fma(av, bv[b], acc[a][b]);
                }
            };
            if (ks == KS) {
#pragma unroll 2
                for (int l = 0; l < KS; ++l) step(l);
            } else {
                for (int l = 0; l < ks; ++l) step(l);
            }
            __syncthreads();
        }

        // The element, recomputed from the thread index (kept live across the k loop, it spills).
        const int t_ = opaque(t);
        const int64_t e = e0 + (g.soa_c ? t_ % u : t_ / S);
        if (e < g.batch) {
            const bool read_c = g.beta != T(0);
            const int ty_ = opaque(ty), tx_ = opaque(tx);
#pragma unroll
            for (int a = 0; a < TM; ++a)
#pragma unroll
                for (int b = 0; b < TN; ++b) {
                    const int i = ty_ + TY * a, j = tx_ + TX * b;
                    if (i < m && j < n) {
                        const int64_t idx = int64_t(i) * g.ldc + j;
                        T *dst = g.c + (g.soa_c ? idx * g.sc + e : e * g.sc + idx);
                        T v = g.alpha * acc[a][b];
                        if (read_c) v += g.beta * *dst;
                        *dst = v;
                    }
                    asm volatile("" ::: "memory");  // an entry at a time: the epilogue holds few registers
                }
        }
    }
}

// ---------------------------------------------------------------------------------
// Pipelined tile kernels (block-per-element for AoS, element groups for SoA): A and B
// staged KS dimensions at a time by cp.async (16-byte pieces where the addresses line
// up, else one entry at a time), STAGES slices in flight: while a block computes one
// slice, the next STAGES - 1 are on their way, across element boundaries. Each thread
// owns a register tile of C and reads its operands with 16-byte shared loads.
//
//   Both: C larger than the kernel's MT x NT tile is computed tile by tile, each pair
//     (group of elements, tile) an item of work (TileCursor).
//   AoS: a unit is one element of TY x TX threads; thread (ty, tx) owns rows ty + TY i
//     and the 16-byte column pieces tx + TX c of the tile. Shared: A as [i][l] (rows
//     padded by 16 bytes: the warp's rows fall on distinct banks), B as [l][j].
//   SoA: a unit is E = QV * V consecutive elements (16 or 32 bytes per entry); thread
//     (qv, ty, tx) owns V consecutive elements and, in each, rows ty + TY i and columns
//     tx + TX j of the tile. Shared keeps the global interleaving ([entry][element]), so staging
//     copies whole runs of the block's elements (whole stages by fixed per-thread
//     pieces) and a thread's operands for its V elements are one 16-byte load; C is
//     written in 16-byte pieces of V elements (C of 16 x 16: through shared memory, each
//     entry's run of the block's elements in consecutive threads' stores).

// A register budget rather than launch bounds (as cholesky.cu: with launch bounds alone,
// CUDA 13's ptxas settles some kernels at 64 registers and spills).
#if CUDART_VERSION >= 12040
#define PIPE_REGS(n) __maxnreg__(n)
#else
#define PIPE_REGS(n) __launch_bounds__(65536 / (n) / 32 * 32)
#endif

template <class T>
__device__ __forceinline__ void ld16(const T *p, T *r) {
    if constexpr (sizeof(T) == 8) {
        const double2 x = *reinterpret_cast<const double2 *>(p);
        r[0] = x.x;
        r[1] = x.y;
    } else {
        const float4 x = *reinterpret_cast<const float4 *>(p);
        r[0] = x.x;
        r[1] = x.y;
        r[2] = x.z;
        r[3] = x.w;
    }
}
template <class T>
__device__ __forceinline__ void st16(T *p, const T *r) {
    if constexpr (sizeof(T) == 8)
        *reinterpret_cast<double2 *>(p) = make_double2(r[0], r[1]);
    else
        *reinterpret_cast<float4 *>(p) = make_float4(r[0], r[1], r[2], r[3]);
}

// C's piece of V entries at dst from their sums: alpha * sum (+ beta * C), one 16-byte
// access when `whole`, else entry by entry for the first `valid` (beta = 0: C not read).
template <class T>
__device__ __forceinline__ void store_piece(T *dst, const T *acc, bool whole, int valid, bool read_c, T alpha,
                                            T beta) {
    constexpr int V = 16 / sizeof(T);
    if (whole) {
        T v[V];
#pragma unroll
        for (int x = 0; x < V; ++x) v[x] = alpha * acc[x];
        if (read_c) {
            T old[V];
            ld16(dst, old);
#pragma unroll
            for (int x = 0; x < V; ++x) v[x] += beta * old[x];
        }
        st16(dst, v);
    } else {
#pragma unroll
        for (int x = 0; x < V; ++x)
            if (x < valid) {
                T v = alpha * acc[x];
                if (read_c) v += beta * dst[x];
                dst[x] = v;
            }
    }
    asm volatile("" ::: "memory");  // a piece at a time: the epilogue holds few registers
}

// Two f32 entries of C at dst (8-byte aligned when `whole`) from their f64 sums: alpha *
// sum (+ beta * C) in f64, rounded to f32 once; one 8-byte access when `whole`, else the
// first `valid` (at least 1) entry by entry. beta = 0: C not read.
__device__ __forceinline__ void store_pair_f64(float *dst, const double *acc, bool whole, int valid, bool read_c,
                                               float alpha, float beta) {
    double v[2];
#pragma unroll
    for (int x = 0; x < 2; ++x) v[x] = double(alpha) * acc[x];
    if (whole) {
        if (read_c) {
            const float2 old = *reinterpret_cast<const float2 *>(dst);
            v[0] = fma(double(beta), double(old.x), v[0]);
            v[1] = fma(double(beta), double(old.y), v[1]);
        }
        *reinterpret_cast<float2 *>(dst) = make_float2(float(v[0]), float(v[1]));
    } else {
#pragma unroll
        for (int x = 0; x < 2; ++x)
            if (x < valid) {
                if (read_c) v[x] = fma(double(beta), double(dst[x]), v[x]);
                dst[x] = float(v[x]);
            }
    }
    asm volatile("" ::: "memory");  // a pair at a time: the epilogue holds few registers
}

// cp.async (cp_async16, cp_async_one: walker.cuh), 16 bytes or one entry. Every source
// byte must be an entry the layout says exists: a piece that would run past a row's last
// entry (into ld padding, or past the end of the array for the last element's last row;
// for SoA past the last element of an entry) is copied entry by entry instead, never as a
// zero-filled 16-byte copy, whose source is still read as 16 bytes.
// V entries from src to dst (16 bytes) when `left` reaches V, else the `left` that exist
// one at a time.
template <int V, bool L2_LINE = false, class T>
__device__ __forceinline__ void cp_async_piece(T *dst, const T *src, int left) {
    if (left >= V)
        cp_async16<L2_LINE>(dst, src);
    else
        for (int x = 0; x < left; ++x) cp_async_one(dst + x, src + x);
}
// Copies the fast-grid rectangle [r0, r0 + nr) x [c0, c0 + nc) of the AoS elements
// e0 .. e0 + u - 1 (those that exist) to dst + q * unit + (r - r0) * sr + (c - c0) * sc,
// the block's threads in memory order: 16-byte pieces along the rows when `vec` (then
// sc == 1 and dst's rows are 16-byte aligned; a row's partial last piece goes entry by
// entry, its other entries in shared memory left as they are), else one entry at a time.
template <class T>
__device__ __forceinline__ void aos_stage(const Opnd<T> &o, bool vec, int64_t e0, int u, int64_t batch, int r0,
                                          int nr, int c0, int nc, T *dst, int unit, int sr, int sc) {
    constexpr int V = 16 / sizeof(T);
    const int tid = threadIdx.x, nt = blockDim.x;
    const int ul = int(min(int64_t(u), batch - e0));
    const T *const base = o.p + e0 * o.stride + int64_t(r0) * o.ld + c0;
    if (vec) {
#pragma unroll 1
        for (Walker w(tid, nt, (nc + V - 1) / V, nr); w.d2 < ul; w.advance()) {
            const int c = w.d0 * V, left = nc - c;
            T *const d = dst + w.d2 * unit + w.d1 * sr + c;
            cp_async_piece<V>(d, base + w.d2 * o.stride + int64_t(w.d1) * o.ld + c, left);
        }
    } else {
#pragma unroll 1
        for (Walker w(tid, nt, nc, nr); w.d2 < ul; w.advance())
            cp_async_one(dst + w.d2 * unit + w.d1 * sr + w.d0 * sc,
                         base + w.d2 * o.stride + int64_t(w.d1) * o.ld + w.d0);
    }
}

// A whole R x C-piece rectangle of one AoS element (rows ld apart from src, 16-byte
// pieces, all on the grid) to dst (rows dst_ld apart) by the element's S threads, loc
// the thread's place among them: piece loc + j S, j < R C / S, is row loc / C + j (S /
// C), column piece loc % C, so each piece is one pointer step past the last (the
// general walk above costs a division or two and some 25 instructions a piece).
template <int R, int C, int S, class T>
__device__ __forceinline__ void aos_stage_whole(const T *src, int64_t ld, T *dst, int dst_ld, int loc) {
    constexpr int V = 16 / int(sizeof(T)), RS = S / C;
    static_assert(S % C == 0 && (R * C) % S == 0, "whole rounds of the element's threads");
    const int r = loc / C, c = loc % C;
    src += r * ld + c * V;
    dst += r * dst_ld + c * V;
    const int64_t step = RS * ld;
#pragma unroll
    for (int j = 0; j < R * C / S; ++j) {
        cp_async16(dst, src);
        if (j + 1 < R * C / S) src += step, dst += RS * dst_ld;  // (no pointer past the last piece)
    }
}

// The same for SoA: entry (r, c) of the block's elements e0 + q, q < eb (those that
// exist), to dst + (q / E) * unit + ((r - r0) * sr + (c - c0) * sc) * E + q % E:
// 16-byte pieces of V consecutive elements when `vec` (a partial last piece, past the
// batch's last element, entry by entry), else one entry at a time.
template <class T, int E, bool L2_LINE>
__device__ __forceinline__ void soa_stage(const Opnd<T> &o, bool vec, int64_t e0, int eb, int64_t batch, int r0,
                                          int nr, int c0, int nc, T *dst, int unit, int sr, int sc) {
    constexpr int V = 16 / sizeof(T);
    const int tid = threadIdx.x, nt = blockDim.x;
    const int el = int(min(int64_t(eb), batch - e0));
    const T *const base = o.p + e0;
    if (vec) {
#pragma unroll 1
        for (Walker w(tid, nt, (el + V - 1) / V, nc); w.d2 < nr; w.advance()) {
            const int q = w.d0 * V, left = el - q;
            T *const d = dst + (q / E) * unit + (w.d2 * sr + w.d1 * sc) * E + q % E;
            cp_async_piece<V, L2_LINE>(d, base + (int64_t(r0 + w.d2) * o.ld + (c0 + w.d1)) * o.stride + q, left);
        }
    } else {
#pragma unroll 1
        for (Walker w(tid, nt, el, nc); w.d2 < nr; w.advance()) {
            const int q = w.d0;
            cp_async_one(dst + (q / E) * unit + (w.d2 * sr + w.d1 * sc) * E + q % E,
                         base + (int64_t(r0 + w.d2) * o.ld + (c0 + w.d1)) * o.stride + q);
        }
    }
}

// The block's work: pairs (group of elements, tile of C) w = blockIdx.x,
// blockIdx.x + gridDim.x, ..., the tiles of a group consecutive (so the blocks that
// share a group's A and B run at the same time and find them in L2), each in slices of
// KS dimensions: the cursor of the item being staged or computed.
struct TileCursor {
    int w;          // pair (batches below 2^30: see select_kernel)
    int grp, tile;  // its group; its tile, row-major over the tn tiles of a row
    int l0, stage;  // first dimension of the slice; its shared-memory stage
    __device__ __forceinline__ void locate(int tiles) {
        grp = tiles == 1 ? w : w / tiles;
        tile = w - grp * tiles;
    }
    __device__ TileCursor(int tiles) : w(int(blockIdx.x)), l0(0), stage(0) { locate(tiles); }
    // The tile's first row and column (one tile across: no division).
    template <int MT, int NT>
    __device__ __forceinline__ int2 origin(int tn) const {
        if (tn == 1) return make_int2(tile * MT, 0);
        const int r = tile / tn;
        return make_int2(r * MT, (tile - r * tn) * NT);
    }
    // Moves to the next item; true when that starts a new pair.
    template <int KS, int STAGES>
    __device__ __forceinline__ bool next(int k, int tiles) {
        stage = stage + 1 == STAGES ? 0 : stage + 1;
        l0 += KS;
        if (l0 < k) return false;
        l0 = 0;
        w += int(gridDim.x);
        locate(tiles);
        return true;
    }
};

// This block's items: its pairs times the slices of k.
__device__ __forceinline__ int block_items(int pairs, int slices) {
    const int b = int(blockIdx.x), nb = int(gridDim.x);
    return b < pairs ? ((pairs - 1 - b) / nb + 1) * slices : 0;
}

// d += a b for one 16 x 8 tile of C on the tensor cores (f64): lane (g, t) = (lane / 4,
// lane % 4) holds A(g, t) in a0, A(g + 8, t) in a1, B(t, g), and C(g, 2 t + x), C(g + 8,
// 2 t + x) in top[x], bot[x]. sm_90: one mma m16n8k4, at the tensor cores' full f64 rate;
// sm_80: two mma m8n8k4 (the tiles of rows g and g + 8), a shape sm_90 runs at half that
// rate (H100 probe, run 154: 128 against 64 fma a cycle an SM); below sm_80 the same
// products by shuffles and fma.
__device__ __forceinline__ void mma1684(double *top, double *bot, double a0, double a1, double b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
        : "+d"(top[0]), "+d"(top[1]), "+d"(bot[0]), "+d"(bot[1])
        : "d"(a0), "d"(a1), "d"(b));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(top[0]), "+d"(top[1])
        : "d"(a0), "d"(b));
    asm("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
        : "+d"(bot[0]), "+d"(bot[1])
        : "d"(a1), "d"(b));
#else
    const int lane = int(threadIdx.x) & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int l = 0; l < 4; ++l) {
        const double at = __shfl_sync(0xffffffffu, a0, g * 4 + l), ab = __shfl_sync(0xffffffffu, a1, g * 4 + l);
        const double b0 = __shfl_sync(0xffffffffu, b, 2 * t * 4 + l);
        const double b1 = __shfl_sync(0xffffffffu, b, (2 * t + 1) * 4 + l);
        top[0] = fma(at, b0, top[0]);
        top[1] = fma(at, b1, top[1]);
        bot[0] = fma(ab, b0, bot[0]);
        bot[1] = fma(ab, b1, bot[1]);
    }
#endif
}

// One slice of C of 32 x 32 or 64 x 64 (AosPipe::MMA; f32 operands converted to f64
// exactly, the sums in f64) from the stage st (A as [i][l],
// row stride KSP; B as [l][j], row stride NTP), WN = NT / 32 warps across C. Warp w of the
// element owns rows 16 (w / WN) + [0, 16) and columns 32 (w % WN) + [0, 32): tiles (ri,
// cj), ri < 2, cj < 4, whose two sums a lane holds in acc[ri + 2 (cj / 2)][2 (cj % 2) + x],
// x < 2 (row 16 (w / WN) + 8 ri + g, column 32 (w % WN) + 8 cj + 2 t + x): a 16 x 8 mma
// (mma1684) a column of tiles. A partial slice (ks < KS) goes entry by entry with fma.
// threadIdx.x read afresh (volatile: where it is used, not held in a register across the
// loop; the offsets derived from it spilled at 80 registers).
__device__ __forceinline__ int tid_here() {
    int r;
    asm volatile("mov.u32 %0, %%tid.x;" : "=r"(r));
    return r;
}

template <int KS, int KSP, int NTP, int MT, int WARPS, int WN, class T>
__device__ __forceinline__ void mma_slice(const T *st, int ks, double (&acc)[4][4]) {
    static_assert((WARPS & (WARPS - 1)) == 0 && WARPS % WN == 0, "whole rows of warps");
    const int tid = tid_here(), w = (tid >> 5) & (WARPS - 1), g = (tid & 31) >> 2, t = tid & 3;
    const T *const as = st + (16 * (w / WN) + g) * KSP;  // row g of the warp's first tile
    const T *const bs = st + MT * KSP + 32 * (w % WN);    // the warp's first column
    if (ks == KS) {
#pragma unroll
        for (int l = 0; l < KS; l += 4) {
            double a[2], b[4];  // (f32: converted exactly)
#pragma unroll
            for (int ri = 0; ri < 2; ++ri) a[ri] = double(as[8 * ri * KSP + l + t]);
#pragma unroll
            for (int cj = 0; cj < 4; ++cj) b[cj] = double(bs[(l + t) * NTP + 8 * cj + g]);
#pragma unroll
            for (int cj = 0; cj < 4; ++cj)
                mma1684(acc[2 * (cj >> 1)] + 2 * (cj & 1), acc[1 + 2 * (cj >> 1)] + 2 * (cj & 1), a[0], a[1], b[cj]);
        }
    } else {
#pragma unroll 1
        for (int l = 0; l < ks; ++l) {
            const double a[2] = {double(as[l]), double(as[8 * KSP + l])};
#pragma unroll
            for (int cj = 0; cj < 4; ++cj) {
                double b[2];
                if constexpr (sizeof(T) == 8) {
                    ld16(bs + l * NTP + 8 * cj + 2 * t, b);
                } else {
                    const float2 x = *reinterpret_cast<const float2 *>(bs + l * NTP + 8 * cj + 2 * t);
                    b[0] = double(x.x);
                    b[1] = double(x.y);
                }
#pragma unroll
                for (int ri = 0; ri < 2; ++ri)
#pragma unroll
                    for (int x = 0; x < 2; ++x)
                        acc[ri + 2 * (cj >> 1)][2 * (cj & 1) + x] =
                            fma(a[ri], b[x], acc[ri + 2 * (cj >> 1)][2 * (cj & 1) + x]);
            }
        }
    }
}

template <class T, int TY, int TX, int TM, int TN, int KS, int STAGES>
struct AosPipe {
    static constexpr int V = 16 / int(sizeof(T));
    static constexpr int S = TY * TX;                 // threads per element
    static constexpr int MT = TY * TM, NT = TX * TN;  // the element's tile
    // C of 32 x 32 and 64 x 64 in slices of 32 on the tensor cores (mma m16n8k4 in f64, see
    // mma_slice; f32 operands converted exactly, so an f32 entry is its f64 sum rounded
    // once): each warp a 16 x 32 block of C, four 16 x 8 tiles. A's rows padded by 4
    // entries and B's by 4 (f64) or 8 (f32), so that the fragment loads (8 rows x 4
    // dimensions of A, 4 rows x 8 columns of B) take the fewest wavefronts: two for f64's
    // 256 bytes, one for f32's 128.
    static constexpr bool MMA = TY == TX && (TY == 16 || TY == 8) && TM == 4 && TN == 4 && KS == 32;
    using Acc = std::conditional_t<MMA, double, T>;  // the sums' type
    static constexpr int WARPS = MMA ? S / 32 : 1, WN = MMA ? NT / 32 : 1;  // (MMA: warps an element, across C)
    static constexpr int KSP = MMA ? KS + 4 : KS + V;  // A's row stride (rows padded by 4 entries / 16 bytes)
    static constexpr int NTP = MMA ? NT + 32 / int(sizeof(T)) : NT;  // B's row stride
    static constexpr int UNIT0 = MT * KSP + KS * NTP;
    // Per element and stage, padded to 64 bytes past a 128-byte multiple (elements that
    // share a warp read other banks).
    static constexpr int UNIT = UNIT0 + ((64 - UNIT0 * int(sizeof(T)) % 128 + 128) % 128) / int(sizeof(T));
    // Register budgets that keep more elements resident (H100, 64K registers an SM):
    // f64 64 x 64 (256 threads) at 80, three blocks an SM instead of two; f64 with 4 x 2
    // sums a thread (16 x 16 in one warp) at 80, as many as the shared memory holds (16
    // elements, two slices in flight each, where 4 x 4 sums in half-warps held 16 with
    // one); f32 64 x 64 on the fma (128 threads; k < 32) at 96, five blocks instead of four.
    // (MMA f32: the f64 budgets, its sums being f64.)
    static constexpr int MAX_REGS =
        sizeof(T) == 8 || MMA ? (S >= 256 || TM * TN <= 8 ? 80 : 128) : (S >= 128 ? 96 : 128);
    static_assert(TN % V == 0 && KS % V == 0 && STAGES >= 2, "16-byte pieces");
    // Whole slices of whole tiles on the 16-byte grid staged by each element's own threads
    // in fixed steps (aos_stage_whole) rather than by the walk (H200 run 267 against the
    // walk in the same call: f32 32 x 32 0.285-0.288 -> 0.210 ms, 64 x 64 0.386-0.388 ->
    // 0.273-0.279, f64 64 x 64 0.222 -> 0.206-0.210, f64 9..16 on these tiles 0.225 ->
    // 0.206-0.208; ncu, run 266: the walk took 28 % of f32 64 x 64's instructions, whose
    // issue slots were 74 % busy), but for f64 32 x 32 on the mma, where the walk measured
    // faster (run 268, three rounds: 0.202-0.204 against 0.209-0.213; its 16 copies a
    // thread in one burst after the barrier, as the SoA tiles' fixed pieces, below).
    // (f64 64 x 64 in slices of 16 keeps the walk too, untimed: ptxas spills 8 bytes with
    // both forms of staging.)
    static constexpr bool WHOLE = !(sizeof(T) == 8 && (MMA ? MT == 32 : MT == 64));
};

template <class T, int TY, int TX, int TM, int TN, int KS, int STAGES>
__global__ void PIPE_REGS((AosPipe<T, TY, TX, TM, TN, KS, STAGES>::MAX_REGS))
    gemm_aos_pipe_kernel(const Args<T> g) {
    using P = AosPipe<T, TY, TX, TM, TN, KS, STAGES>;
    constexpr int V = P::V, KSP = P::KSP, MT = P::MT, NT = P::NT, NTP = P::NTP, UNIT = P::UNIT, NC = TN / V;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const sh = reinterpret_cast<T *>(smem_raw);

    const int u = blockDim.x / P::S, t = threadIdx.x;
    const int q = t / P::S, loc = t % P::S, tx = loc % TX, ty = loc / TX;
    const int m = g.m, n = g.n, k = g.k;
    const int tn = (n + NT - 1) / NT, tiles = (m + MT - 1) / MT * tn;
    const int slices = (k + KS - 1) / KS, stage_size = u * UNIT;
    const int items = block_items(int((g.batch + u - 1) / u) * tiles, slices);
    const bool va = g.a.vec && !g.a.swap, vb = g.b.vec && !g.b.swap;

    TileCursor in(tiles), cur(tiles);
    int issued = 0;
    auto issue = [&]() {
        if (issued < items) {
            T *const as = sh + in.stage * stage_size;
            T *const bs = as + MT * KSP;
            const int ks = min(KS, k - in.l0);
            const int64_t e0 = int64_t(in.grp) * u;
            const int2 o = in.origin<MT, NT>(tn);
            const int i0 = o.x, j0 = o.y;
            const int mt = min(MT, m - i0), nt = min(NT, n - j0);
            // A: logical (i, l) -> as[(i - i0) * KSP + l - l0]; B: (l, j) -> bs[(l - l0) * NTP + j - j0].
            // Whole slices of whole tiles on the grid: each unit's threads stage its own
            // element (aos_stage_whole); else the block's threads walk all its elements.
            const int64_t e = e0 + q;
            if (P::WHOLE && va && ks == KS && mt == MT) {
                if constexpr (P::WHOLE)  // (no copy of the code where it cannot run)
                    if (e < g.batch)
                        aos_stage_whole<MT, KS / V, P::S>(g.a.p + e * g.a.stride + int64_t(i0) * g.a.ld + in.l0,
                                                          g.a.ld, as + q * UNIT, KSP, loc);
            } else if (g.a.swap) {
                aos_stage(g.a, false, e0, u, g.batch, in.l0, ks, i0, mt, as, UNIT, 1, KSP);
            } else {
                aos_stage(g.a, va, e0, u, g.batch, i0, mt, in.l0, ks, as, UNIT, KSP, 1);
            }
            if (P::WHOLE && vb && ks == KS && nt == NT) {
                if constexpr (P::WHOLE)
                    if (e < g.batch)
                        aos_stage_whole<KS, NT / V, P::S>(g.b.p + e * g.b.stride + int64_t(in.l0) * g.b.ld + j0,
                                                          g.b.ld, bs + q * UNIT, NTP, loc);
            } else if (g.b.swap) {
                aos_stage(g.b, false, e0, u, g.batch, j0, nt, in.l0, ks, bs, UNIT, 1, NTP);
            } else {
                aos_stage(g.b, vb, e0, u, g.batch, in.l0, ks, j0, nt, bs, UNIT, NTP, 1);
            }
            in.next<KS, STAGES>(k, tiles);
        }
        ++issued;
        cp_commit();
    };
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) issue();

    using Acc = typename P::Acc;
    Acc acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = Acc(0);

#pragma unroll 1
    for (int it = 0; it < items; ++it) {
        cp_wait<STAGES - 2>();
        __syncthreads();  // the item is in; every thread is done with the stage issue() refills
        issue();
        const T *const ap = sh + cur.stage * stage_size + q * UNIT + ty * KSP;
        const T *const bp = sh + cur.stage * stage_size + q * UNIT + MT * KSP + tx * V;
        const int ks = min(KS, k - cur.l0);
        if constexpr (P::MMA) {
            mma_slice<KS, KSP, NTP, MT, P::WARPS, P::WN>(sh + cur.stage * stage_size + q * UNIT, ks, acc);
        } else if (ks == KS) {
            // Unrolled up to 512 fma a thread at a time (f32 8 x 4 sums in slices of 32:
            // one slice's code, some 18 KiB, would crowd the instruction cache; f64 4 x 4
            // sums: whole slices).
            constexpr int KU = cmin(KS, cmax(V, 512 / (TM * TN)));
            static_assert(KS % KU == 0, "whole unrolled steps");
#pragma unroll 1
            for (int l0 = 0; l0 < KS; l0 += KU) {
#pragma unroll
                for (int lu = 0; lu < KU; lu += V) {
                    const int l = l0 + lu;
                    T a[TM][V];
#pragma unroll
                    for (int i = 0; i < TM; ++i) ld16(ap + i * TY * KSP + l, a[i]);
#pragma unroll
                    for (int v = 0; v < V; ++v) {
                        T b[TN];
#pragma unroll
                        for (int c = 0; c < NC; ++c) ld16(bp + (l + v) * NTP + c * TX * V, b + c * V);
#pragma unroll
                        for (int i = 0; i < TM; ++i)
#pragma unroll
                            for (int j = 0; j < TN; ++j) acc[i][j] = fma(a[i][v], b[j], acc[i][j]);
                    }
                }
            }
        } else {
#pragma unroll 1
            for (int l = 0; l < ks; ++l) {
                T b[TN];
#pragma unroll
                for (int c = 0; c < NC; ++c) ld16(bp + l * NTP + c * TX * V, b + c * V);
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const T av = ap[i * TY * KSP + l];
#pragma unroll
                    for (int j = 0; j < TN; ++j) acc[i][j] = fma(av, b[j], acc[i][j]);
                }
            }
        }
        const int64_t e = int64_t(cur.grp) * u + q;
        const int2 o = cur.origin<MT, NT>(tn);
        const int i0 = o.x, j0 = o.y;
        if (cur.next<KS, STAGES>(k, tiles)) {
            if (e < g.batch) {
                const bool read_c = g.beta != T(0);
                T *const cb = g.c + e * g.sc;
                const int lm = P::MMA ? tid_here() : 0;  // (see mma_slice)
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    // (MMA: acc[i][2 c + x] is tile (i % 2, 2 (i / 2) + c), see mma_slice.)
                    const int wm = (lm >> 5) & (P::WARPS - 1);
                    const int row = i0 + (P::MMA ? 16 * (wm / P::WN) + 8 * (i & 1) + ((lm & 31) >> 2) : ty + TY * i);
                    if (row >= m) continue;
                    if constexpr (P::MMA && sizeof(T) == 4) {
                        // f32: two sums a tile (columns 2 t, 2 t + 1), finished in f64 and
                        // rounded once.
#pragma unroll
                        for (int c = 0; c < 2; ++c) {
                            const int col = j0 + 32 * (wm % P::WN) + 8 * (2 * (i >> 1) + c) + 2 * (lm & 3);
                            if (col < n)
                                store_pair_f64(cb + int64_t(row) * g.ldc + col, acc[i] + 2 * c,
                                               g.vec_c && col + 2 <= n, n - col, read_c, g.alpha, g.beta);
                        }
                    } else {
#pragma unroll
                        for (int c = 0; c < NC; ++c) {
                            const int col = j0 + (P::MMA ? 32 * (wm % P::WN) + 8 * (2 * (i >> 1) + c) + 2 * (lm & 3)
                                                         : (tx + TX * c) * V);
                            if (col < n)
                                store_piece(cb + int64_t(row) * g.ldc + col, acc[i] + c * V,
                                            g.vec_c && col + V <= n, n - col, read_c, g.alpha, g.beta);
                        }
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = Acc(0);
        }
    }
    cp_wait<0>();
}

template <class T, int TY, int TX, int TM, int TN, int QV, int KS, int STAGES>
struct SoaPipe {
    static constexpr int V = 16 / int(sizeof(T)), E = QV * V;  // elements per unit (16 or 32 bytes an entry)
    static constexpr int S = QV * TY * TX;                     // threads per unit
    static constexpr int MT = TY * TM, NT = TX * TN;           // the C tile
    static constexpr int KSP = KS | 1;  // A's row stride in entries (odd: a warp's rows on distinct banks)
    static constexpr int UNIT = (MT * KSP + KS * NT) * E;  // T per unit and stage
    // (2 x 2 x V sums a thread at 80 registers, 24 warps an SM, measured slower on H100
    // than at 128: f64 8 x 8 0.352 against 0.340 ms, 16 x 16 0.409 against 0.395; in
    // blocks of eight units of one warp, three an SM, 8 x 8 0.344 / 0.347 for f64 / f32.)
    // Units of 512 threads (4 x 4 x V sums, C of 64 x 64) at 128: one an SM.
    static constexpr int MAX_REGS = S >= 512 || TM * TN <= 8 ? 128 : 168;
    // C of 16 x 16 goes out through shared memory (CS T per unit), whole runs of an
    // entry's elements a store (see the kernel).
    static constexpr bool STAGE_C = MT == 16 && NT == 16;
    // Whole-line requests (cp_async16's L2_LINE), but for f32 C above 32 x 32 (H100 f32 64 x
    // 64: 0.585 -> 0.64-0.69 ms with them, run 125; f64 64 x 64 0.497 -> 0.474; measured on
    // the 32 x 32 tiles, not again on the 64 x 64 tile). ONE_ACROSS: the kernel's flag.
    static constexpr bool l2_line(bool one_across) { return sizeof(T) == 8 || one_across || MT * NT <= 256; }
    static constexpr int CS = STAGE_C ? MT * NT * E : 0;
    static_assert((QV == 1 || QV == 2) && S * MAX_REGS <= 65536 && STAGES >= 2, "16- or 32-byte entries");
    static_assert(TX % 4 == 0 && TY % 4 == 0, "4 x 4 squares of owners");
};

// SoA: a unit is E = QV * V consecutive elements (16 or 32 bytes per entry) and one
// MT x NT tile of their C (C larger than the tile: several pairs of group and tile, A and
// B read once per tile row and column, from L2 after the first); thread (qv, ty, tx) owns
// V consecutive elements and, in each, rows ty + TY i and columns tx + TX j of the tile.
// (The selection now gives every shape a tile as large as C, AoS and SoA alike; the tile
// walk stays: without it ptxas allocated the kernels differently and the 32 x 32 tiles,
// spill-free here, spilled 80 bytes.)
// ONE_ACROSS: the tile origin through TileCursor::origin (no division when C is one tile
// across; H100 f32 32 x 32 0.423 ms against 0.471), else by division (with origin's test,
// f32 64 x 64 took 0.738 ms against 0.642).
template <class T, int TY, int TX, int TM, int TN, int QV, int KS, int STAGES, bool ONE_ACROSS, int SPREAD = 0>
__global__ void PIPE_REGS((SoaPipe<T, TY, TX, TM, TN, QV, KS, STAGES>::MAX_REGS))
    gemm_soa_pipe_kernel(const Args<T> g) {
    using P = SoaPipe<T, TY, TX, TM, TN, QV, KS, STAGES>;
    constexpr int V = P::V, E = P::E, KSP = P::KSP, MT = P::MT, NT = P::NT, UNIT = P::UNIT;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const sh = reinterpret_cast<T *>(smem_raw);

    const int u = blockDim.x / P::S, t = threadIdx.x, ppe = u * QV;  // ppe: 16-byte pieces of a group's entry
    // A warp's 32 / QV positions are 4 x 4 squares of (row, column) owners: its shared loads
    // of A and of B then cover 128 bytes each.
    const int q = t / P::S, loc = t % P::S, qv = loc % QV, pos = loc / QV, sq = pos / 16, in_sq = pos % 16;
    const int tx = (sq % (TX / 4)) * 4 + in_sq % 4, ty = (sq / (TX / 4)) * 4 + in_sq / 4;
    const int m = g.m, n = g.n, k = g.k, eb = u * E;
    const int tn = (n + NT - 1) / NT, tiles = (m + MT - 1) / MT * tn;
    const int slices = (k + KS - 1) / KS, stage_size = u * UNIT;
    const int items = block_items(int((g.batch + eb - 1) / eb) * tiles, slices);

    // Whole stages (the group's elements all in the batch, the tile and the slice whole,
    // both operands on the 16-byte grid) take fixed pieces: thread t copies pieces t + p nt
    // (ppe pieces an entry, consecutive threads along an entry's run), p < PA of A and
    // p < PB of B, which lie RA rows of A (RB of B) apart: one offset from the stage's
    // origin and one step each, computed here once. The other stages walk their pieces
    // (soa_stage). H100: the walk took some 800 of f64 16 x 16's 1665 instructions an
    // element (0.383 -> 0.348 ms with the fixed pieces; 64 x 64 0.59 -> 0.51). The C of 17..32
    // kernels (ONE_ACROSS; whole stages only where C is 32 x 32) issue them spread over the
    // fold (SPREAD, below): in one burst after the
    // barrier they measured slower than the walk (f64 0.49-0.51 ms against 0.43-0.45, f32
    // 0.54 against 0.42; run 126 again with whole lines), spread one k-step at a time they
    // measured faster (tools/gpu-notes.md run 193: f64 0.342-0.347 -> 0.328-0.336 ms, f32
    // 0.354-0.355 -> 0.342-0.344). ncu of the walking kernel (run 192): 4823 instructions
    // an element, 1024 of them fma, and fixed-latency dependencies ("wait") a third of the
    // stalls (most likely the walk's integer chains: 1217 IMAD in its SASS, 96 DFMA).
    constexpr int RA = TY * TX / KS, RB = TY * TX / NT, PA = MT / RA, PB = KS / RB;
    static_assert(RA * KS == TY * TX && RB * NT == TY * TX && PA * RA == MT && PB * RB == KS, "fixed pieces");
    static_assert(!ONE_ACROSS || SPREAD > 0, "C one tile across spreads its fixed pieces");
    // (Offsets only where a whole stage can occur: with m = 1 the product i ld stride is
    // not bounded by validation.)
    const bool fixed = g.a.vec && g.b.vec && m >= MT && n >= NT && k >= KS;
    constexpr bool L2_LINE = P::l2_line(ONE_ACROSS);  // (see SoaPipe)
    int64_t ga = 0, gb = 0, da = 0, db = 0;
    int sa = 0, sb = 0;
    if (fixed) {
        const int en = t / ppe, qi = (t - en * ppe) * V;
        const int i = en / KS, la = en - i * KS, lb = en / NT, j = en - lb * NT;
        ga = (g.a.swap ? int64_t(la) * g.a.ld + i : int64_t(i) * g.a.ld + la) * g.a.stride + qi;
        da = int64_t(RA) * (g.a.swap ? 1 : g.a.ld) * g.a.stride;
        sa = (qi / E) * UNIT + (i * KSP + la) * E + qi % E;
        gb = (g.b.swap ? int64_t(j) * g.b.ld + lb : int64_t(lb) * g.b.ld + j) * g.b.stride + qi;
        db = int64_t(RB) * (g.b.swap ? 1 : g.b.ld) * g.b.stride;
        sb = (qi / E) * UNIT + MT * KSP * E + (lb * NT + j) * E + qi % E;
    }

    // STAGE_C: a finished pair's sums go to shared memory (the ppe pieces of an entry's
    // run of the group, piece x of entry en at piece x ^ (en & swz): with 8 pieces (the
    // block of 4 units: 128 bytes) the writers' 4 x 4 squares of entries spread over the
    // banks), and after the next barrier the block stores them, each entry's run in ppe
    // consecutive threads' 16-byte stores (whole lines), where each thread's own stores
    // covered 16 entries a warp, a sector each (H100 f64 16 x 16: 0.348 -> 0.343 ms, L2
    // throughput 80 -> 74 %).
    T *const cbuf = sh + STAGES * stage_size;
    const int swz = ppe % 8 == 0 ? 7 : ppe % 4 == 0 ? 3 : ppe % 2 == 0 ? 1 : 0;
    int pend_grp = -1, pend_i0 = 0, pend_j0 = 0;  // the pair whose C waits in cbuf
    auto copy_out = [&]() {
        const bool read_c = g.beta != T(0);
        for (int pc = t; pc < MT * NT * ppe; pc += int(blockDim.x)) {
            const int en = pc / ppe, x = pc - en * ppe, r = en / NT, c = en - r * NT;
            const int row = pend_i0 + r, col = pend_j0 + c;
            const int64_t e = int64_t(pend_grp) * eb + x * V;
            if (row < m && col < n && e < g.batch) {
                T v[V];
                ld16(cbuf + en * eb + (x ^ (en & swz)) * V, v);
                store_piece(g.c + (int64_t(row) * g.ldc + col) * g.sc + e, v, g.vec_c && e + V <= g.batch,
                            int(min(int64_t(V), g.batch - e)), read_c, g.alpha, g.beta);
            }
        }
    };

    TileCursor in(tiles), cur(tiles);
    int issued = 0;
    // SPREAD: a whole stage's fixed pieces are issued during the fold of the current
    // stage, pieces p = l, l + spread, ... after k-step l < spread, not in one burst after
    // the barrier; the stage's group is committed after the fold (each iteration commits
    // one group, as without SPREAD).
    const T *sp_ao = nullptr, *sp_bo = nullptr;
    T *sp_as = nullptr, *sp_bs = nullptr;
    const T *run_src = nullptr;  // one piece a k-step: the next piece's source and destination
    unsigned run_dst = 0;
    bool sp_on = false;
    auto piece = [&](int p) {
        if (p < PA)
            cp_async16<L2_LINE>(sp_as + p * (RA * KSP * E), sp_ao + p * da);
        else
            cp_async16<L2_LINE>(sp_bs + (p - PA) * (RB * NT * E), sp_bo + (p - PA) * db);
    };
    auto issue = [&](bool defer) {
        if (issued < items) {
            T *const as = sh + in.stage * stage_size;
            T *const bs = as + MT * KSP * E;
            const int ks = min(KS, k - in.l0);
            const int64_t e0 = int64_t(in.grp) * eb;
            const int2 o = ONE_ACROSS ? in.origin<MT, NT>(tn) : make_int2(in.tile / tn * MT, in.tile % tn * NT);
            const int i0 = o.x, j0 = o.y;
            const int mt = min(MT, m - i0), nt = min(NT, n - j0);
            // A: logical (i, l) -> entry (i - i0) * KSP + l - l0; B: (l, j) -> entry (l - l0) * NT + j - j0.
            if (fixed && ks == KS && mt == MT && nt == NT && e0 + eb <= g.batch) {
                const T *const ao = g.a.p + e0 +
                                    (g.a.swap ? int64_t(in.l0) * g.a.ld + i0 : int64_t(i0) * g.a.ld + in.l0) * g.a.stride;
                const T *const bo = g.b.p + e0 +
                                    (g.b.swap ? int64_t(j0) * g.b.ld + in.l0 : int64_t(in.l0) * g.b.ld + j0) * g.b.stride;
                sp_ao = ao + ga, sp_bo = bo + gb, sp_as = as + sa, sp_bs = as + sb;
                run_src = sp_ao, run_dst = shared_address(sp_as);
                if (SPREAD > 0 && defer) {
                    sp_on = true;
                } else {
#pragma unroll
                    for (int p = 0; p < PA + PB; ++p) piece(p);
                }
            } else {
                if (g.a.swap)
                    soa_stage<T, E, L2_LINE>(g.a, g.a.vec, e0, eb, g.batch, in.l0, ks, i0, mt, as, UNIT, 1, KSP);
                else
                    soa_stage<T, E, L2_LINE>(g.a, g.a.vec, e0, eb, g.batch, i0, mt, in.l0, ks, as, UNIT, KSP, 1);
                if (g.b.swap)
                    soa_stage<T, E, L2_LINE>(g.b, g.b.vec, e0, eb, g.batch, j0, nt, in.l0, ks, bs, UNIT, 1, NT);
                else
                    soa_stage<T, E, L2_LINE>(g.b, g.b.vec, e0, eb, g.batch, in.l0, ks, j0, nt, bs, UNIT, NT, 1);
            }
            in.next<KS, STAGES>(k, tiles);
        }
        ++issued;
        if (!(SPREAD > 0 && defer)) cp_commit();
    };
#pragma unroll 1
    for (int s = 0; s < STAGES - 1; ++s) issue(false);

    T acc[TM][TN][V];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int x = 0; x < V; ++x) acc[i][j][x] = T(0);

#pragma unroll 1
    for (int it = 0; it < items; ++it) {
        cp_wait<STAGES - 2>();
        __syncthreads();
        issue(true);
        if (pend_grp >= 0) {
            copy_out();
            pend_grp = -1;
        }
        const T *const ap = sh + cur.stage * stage_size + q * UNIT + ty * KSP * E + qv * V;
        const T *const bp = sh + cur.stage * stage_size + q * UNIT + MT * KSP * E + tx * E + qv * V;
        const int ks = min(KS, k - cur.l0);
        // One 16-byte load of B at a time (the register budget: TM x TN x V sums, TM x V of A).
        auto step = [&](int l) {
            T a[TM][V];
#pragma unroll
            for (int i = 0; i < TM; ++i) ld16(ap + (i * TY * KSP + l) * E, a[i]);
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                T b[V];
                ld16(bp + (l * NT + j * TX) * E, b);
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int x = 0; x < V; ++x) acc[i][j][x] = fma(a[i][x], b[x], acc[i][j][x]);
            }
        };
        if constexpr (SPREAD > 0) {
            const int spread = min(SPREAD, ks);
            // One piece a k-step, A's then B's, each a step from the last (piece(p)'s
            // 64-bit products were some 30 instructions a k-step, now 18; H200 run 272,
            // three rounds against the previous library: f32 0.310-0.314 -> 0.294-0.310
            // ms, f64 unchanged, 0.271-0.279).
            auto next_piece = [&](int l) {
                if (l == PA) run_src = sp_bo, run_dst = shared_address(sp_bs);
                cp_async16_to<L2_LINE>(run_dst, run_src);
                const bool in_a = l < PA;
                run_src += in_a ? da : db;
                run_dst += unsigned(in_a ? RA * KSP * E * int(sizeof(T)) : RB * NT * E * int(sizeof(T)));
            };
            // Float unrolls a whole slice, its pieces at fixed k-steps (H200 runs 274 and
            // 291, three rounds each against the loop in the same call: f32 32 x 32
            // 0.293-0.298 -> 0.287-0.293 ms; double lost 55 % unrolled, run 274). Blocks of
            // two units (64-byte runs) lost in both types (run 291: f32 0.293-0.306 ms, f64
            // 0.275 -> 0.336-0.346).
            constexpr bool UNROLL = sizeof(T) == 4 && PA + PB == SPREAD && SPREAD == KS;
            if (UNROLL && ks == KS) {
#pragma unroll
                for (int l = 0; l < KS; ++l) {
                    step(l);
                    if (sp_on) next_piece(l);
                }
            } else {
#pragma unroll 1
                for (int l = 0; l < ks; ++l) {
                    step(l);
                    if (sp_on && l < spread) {
                        if (PA + PB == SPREAD && spread == SPREAD)
                            next_piece(l);
                        else
                            for (int p = l; p < PA + PB; p += spread) piece(p);
                    }
                }
            }
            sp_on = false;
            cp_commit();
        } else if constexpr (TM * TN > 4) {
#pragma unroll 1
            for (int l = 0; l < ks; ++l) step(l);
        } else {
#pragma unroll 2
            for (int l = 0; l < ks; ++l) step(l);
        }
        const int64_t e = int64_t(cur.grp) * eb + q * E + qv * V;
        const int2 o = ONE_ACROSS ? cur.origin<MT, NT>(tn) : make_int2(cur.tile / tn * MT, cur.tile % tn * NT);
        const int i0 = o.x, j0 = o.y, grp = cur.grp;
        if (cur.next<KS, STAGES>(k, tiles)) {
            if constexpr (P::STAGE_C) {
                if (slices == 1) __syncthreads();  // this iteration's copy_out has read cbuf
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        const int en = (ty + TY * i) * NT + tx + TX * j, x = q * QV + qv;
                        st16(cbuf + en * eb + (x ^ (en & swz)) * V, acc[i][j]);
                    }
                pend_grp = grp, pend_i0 = i0, pend_j0 = j0;
            } else if (e < g.batch) {
                const bool read_c = g.beta != T(0), whole = g.vec_c && e + V <= g.batch;
                const int valid = int(min(int64_t(V), g.batch - e));
#pragma unroll
                for (int i = 0; i < TM; ++i) {
                    const int row = i0 + ty + TY * i;
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        const int col = j0 + tx + TX * j;
                        if (row < m && col < n)
                            store_piece(g.c + (int64_t(row) * g.ldc + col) * g.sc + e, acc[i][j], whole, valid,
                                        read_c, g.alpha, g.beta);
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
#pragma unroll
                    for (int x = 0; x < V; ++x) acc[i][j][x] = T(0);
        }
    }
    if (pend_grp >= 0) {
        __syncthreads();
        copy_out();
    }
    cp_wait<0>();
}

// ---------------------------------------------------------------------------------
// SoA lane kernel (square N x N x N; used for N = 8 and 16): a unit is 32 consecutive
// elements, one a lane, and W warps (8 or 16) laid WR x WC over C: warp w owns rows RM
// (w / WC).. and columns RN (w % WC).. of the 32 elements' C (N = 16: 4 x 8 sums a
// thread at W = 8, 4 x 4 at W = 16; N = 8, W = 8: 2 x 4). A and B are staged KS
// dimensions at a time by cp.async, STAGES slices in flight across the unit's groups of
// elements, into shared memory in the global interleaving ([entry][32 elements]): an
// entry's run of the group is 256 bytes in f64 (128 in f32), copied in whole 16-byte
// pieces (an entry at a time where the pieces do not line up, or past the batch), and a
// warp's operand load is its 32 lanes' own values of one entry: two wavefronts (f64)
// without conflicts, one per fma instruction at 4 x 4 sums, where the pipelined tiles'
// 16-byte loads took two. C goes out straight from the sums, a warp's store the whole
// run of one entry. Each entry of C is summed as the host engine does (fma over l =
// 0..k-1 in order, then alpha, beta).
template <class T, int N, int KS, int STAGES, int W>
struct LaneShape {
    static constexpr int NW = W, S = W * 32;                 // warps and threads a unit
    static constexpr int WC = W >= 16 ? 4 : 2, WR = W / WC;  // the warps over C: WR x WC
    static constexpr int RM = N / WR, RN = N / WC;           // a warp's rows and columns of C
    static constexpr int V = 16 / int(sizeof(T)), PPE = 32 / V;  // 16-byte pieces of an entry's run
    static constexpr int EA = N * KS, ENT = 2 * EA;          // entries a stage: A's, then B's
    static constexpr int UNIT = ENT * 32;                    // T a unit and stage
    static constexpr int EPR = S / PPE;                      // entries a round of the unit's threads
    static constexpr int PPT = ENT / EPR;                    // pieces a thread and stage
    static_assert(N % 4 == 0 && N % KS == 0 && ENT % EPR == 0 && EA % EPR == 0, "whole rounds, A's apart");
};

template <class T, int N, int KS, int STAGES, int W>
__global__ void PIPE_REGS(128) gemm_soa_lane_kernel(const Args<T> g) {
    using L = LaneShape<T, N, KS, STAGES, W>;
    constexpr int V = L::V, PPE = L::PPE, UNIT = L::UNIT, S = L::S, SPG = N / KS;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int u = blockDim.x / S, t = threadIdx.x, q = t / S, loc = t % S, lane = loc & 31, w = loc >> 5;
    T *const sh = reinterpret_cast<T *>(smem_raw) + q * (STAGES * UNIT);
    const int r0 = (w / L::WC) * L::RM, c0 = (w % L::WC) * L::RN;
    // Groups of 32 elements: the block's units take groups first + q, first + step + q, ...
    // (every unit of the block the same number of rounds, so that the barriers match).
    const int64_t ngroups = (g.batch + 31) / 32, first = int64_t(blockIdx.x) * u, step = int64_t(gridDim.x) * u;
    const int64_t rounds = first < ngroups ? (ngroups - first + step - 1) / step : 0;
    const int64_t items = rounds * SPG;

    // This thread's pieces: entry en0 + EPR r of the stage, elements x V.. of the group's
    // run. A's entry en is (i, l) = (en / KS, l0 + en % KS), B's (l, j) = (l0 + en / N,
    // en % N); EPR is a multiple of KS and of N, so piece r + 1 lies EPR / KS rows of A
    // (EPR / N rows of B) past piece r: one offset and one step per operand.
    static_assert(L::EPR % KS == 0 && L::EPR % N == 0, "pieces a fixed step apart");
    const int en0 = loc / PPE, x = loc % PPE;
    const bool vec = g.a.vec && g.b.vec;
    const int ia = en0 / KS, la = en0 % KS, lb = en0 / N, jb = en0 % N;
    int64_t in_round = 0;  // the next item to issue: slice in_s of round in_round
    int in_s = 0, in_buf = 0;
    auto issue = [&]() {
        if (in_round < rounds) {
            const int64_t grp = first + in_round * step + q, e = grp * 32 + x * V;
            if (grp < ngroups) {
                T *const dst = sh + in_buf * UNIT + x * V + en0 * 32;
                const int64_t left = g.batch - e;
                // (opaque: offsets formed here, not held across the loop by every piece)
                const int l0 = opaque(in_s * KS);
                const int64_t sa = g.a.stride, sb = g.b.stride;
                const T *const pa =
                    g.a.p + e + (g.a.swap ? int64_t(l0 + la) * g.a.ld + ia : int64_t(ia) * g.a.ld + l0 + la) * sa;
                const T *const pb =
                    g.b.p + e + (g.b.swap ? int64_t(jb) * g.b.ld + l0 + lb : int64_t(l0 + lb) * g.b.ld + jb) * sb;
                const int64_t ra = (L::EPR / KS) * (g.a.swap ? int64_t(1) : g.a.ld) * sa;
                const int64_t rb = (L::EPR / N) * (g.b.swap ? int64_t(1) : g.b.ld) * sb;
#pragma unroll
                for (int r = 0; r < L::PPT; ++r) {
                    constexpr int RA = L::EA / L::EPR;  // pieces of A
                    const T *const src = r < RA ? pa + r * ra : pb + (r - RA) * rb;
                    T *const d = dst + L::EPR * 32 * r;
                    if (vec && left >= V)
                        cp_async16<true>(d, src);
                    else
                        for (int y = 0; y < V && y < left; ++y) cp_async_one(d + y, src + y);
                }
            }
            if (++in_s == SPG) {
                in_s = 0;
                ++in_round;
            }
            if (++in_buf == STAGES) in_buf = 0;
        }
        cp_commit();  // (empty past the last item: the wait counts stay uniform)
    };

    T acc[L::RM][L::RN];
#pragma unroll
    for (int a = 0; a < L::RM; ++a)
#pragma unroll
        for (int b = 0; b < L::RN; ++b) acc[a][b] = T(0);
#pragma unroll
    for (int p = 0; p < STAGES - 1; ++p) issue();
    int buf = 0, s = 0;
    int64_t round = 0;
    for (int64_t it = 0; it < items; ++it) {
        cp_wait<STAGES - 2>();
        __syncthreads();  // item it staged by every thread; item it - 1's buffer free
        issue();
        const T *const as = sh + buf * UNIT + lane, *const bs = as + L::EA * 32;
#pragma unroll
        for (int l = 0; l < KS; ++l) {
            T av[L::RM], bv[L::RN];
#pragma unroll
            for (int a = 0; a < L::RM; ++a) av[a] = as[((r0 + a) * KS + l) * 32];
#pragma unroll
            for (int b = 0; b < L::RN; ++b) bv[b] = bs[(l * N + c0 + b) * 32];
#pragma unroll
            for (int a = 0; a < L::RM; ++a)
#pragma unroll
                for (int b = 0; b < L::RN; ++b) acc[a][b] = fma(av[a], bv[b], acc[a][b]);
        }
        if (++buf == STAGES) buf = 0;
        if (++s == SPG) {
            s = 0;
            const int64_t e = (first + round * step + q) * 32 + lane;
            ++round;
            if (e < g.batch) {
                const bool read_c = g.beta != T(0);
                // (opaque: the 32 offsets formed here, not held across the loop)
                const int64_t sc = g.sc, ldc = opaque64(g.ldc);
                T *const base = g.c + (int64_t(r0) * ldc + c0) * sc + e;
#pragma unroll
                for (int a = 0; a < L::RM; ++a)
#pragma unroll
                    for (int b = 0; b < L::RN; ++b) {
                        T *const dst = base + (a * ldc + b) * sc;
                        T v = g.alpha * acc[a][b];
                        if (read_c) v += g.beta * *dst;
                        *dst = v;
                    }
            }
#pragma unroll
            for (int a = 0; a < L::RM; ++a)
#pragma unroll
                for (int b = 0; b < L::RN; ++b) acc[a][b] = T(0);
        }
    }
    cp_wait<0>();
}

// ---------------------------------------------------------------------------------
// KernelSpec selection (the same for plan and execute: a function of the problem and the
// device's SM count only)

template <class T, int G, int MB, int NB, int KB, bool EXACT>
KernelSpec warp_kernel(Model model) {
    using W = WarpShape<G, MB, NB, KB>;
    KernelSpec k;
    k.model = model;
    k.fn = reinterpret_cast<const void *>(&gemm_warp_kernel<T, G, MB, NB, KB, EXACT>);
    k.name = EXACT ? fmt::format("gemm_warp<{}, G={}, {}x{}x{}>", sizeof(T) == 8 ? "f64" : "f32", G, MB, NB, KB)
                   : fmt::format("gemm_warp<{}, G={}, up to {}x{}x{}>", sizeof(T) == 8 ? "f64" : "f32", G, MB,
                                 NB, KB);
    k.group = G;
    k.unit_threads = 32;
    k.unit_elements = W::EW;
    k.unit_shared = int64_t(W::REGION) * int64_t(sizeof(T));
    return k;
}

template <class T, int N, int KS, int STAGES, int W>
KernelSpec soa_lane_kernel() {
    using L = LaneShape<T, N, KS, STAGES, W>;
    KernelSpec k;
    k.model = Model::BlockPerElement;
    k.fn = reinterpret_cast<const void *>(&gemm_soa_lane_kernel<T, N, KS, STAGES, W>);
    k.name = fmt::format("gemm_soa_lane<{}, {}x{}x{}, 32 elements a lane each x {} warps of {}x{} of C, k-slice {}, "
                         "{} stages>",
                         sizeof(T) == 8 ? "f64" : "f32", N, N, N, L::NW, L::RM, L::RN, KS, STAGES);
    k.group = L::NW;
    k.sub = L::NW;
    k.unit_threads = L::S;
    k.unit_elements = 32;
    k.unit_shared = int64_t(STAGES) * L::UNIT * int64_t(sizeof(T));
    k.why = fmt::format("SoA elements of {}x{}x{}: a lane an element, 32 consecutive elements a unit of {} warps, "
                        "each warp a {}x{} block of their C (a warp's shared load is one entry of its 32 elements, "
                        "a whole {}-byte run), A and B staged by cp.async in slices of {} dimensions, {} slices in "
                        "flight",
                        N, N, N, L::NW, L::RM, L::RN, 32 * int(sizeof(T)), KS, STAGES);
    return k;
}

template <class T, int TY, int TX, int TM, int TN>
KernelSpec block_kernel() {
    using B = BlockShape<TY, TX, TM, TN>;
    KernelSpec k;
    k.model = Model::BlockPerElement;
    k.fn = reinterpret_cast<const void *>(&gemm_block_kernel<T, TY, TX, TM, TN>);
    k.name = fmt::format("gemm_block<{}, {}x{} threads, {}x{} tile/thread, k-slice {}>",
                         sizeof(T) == 8 ? "f64" : "f32", TY, TX, TM, TN, B::KS);
    k.group = B::S;
    k.sub = B::S;
    k.unit_threads = B::S;
    k.unit_elements = 1;
    k.unit_shared = int64_t(B::ES) * int64_t(sizeof(T));
    return k;
}

template <class T, int TY, int TX, int TM, int TN, int KS, int STAGES>
KernelSpec aos_pipe_kernel() {
    using P = AosPipe<T, TY, TX, TM, TN, KS, STAGES>;
    KernelSpec k;
    k.model = Model::BlockPerElement;
    k.fn = reinterpret_cast<const void *>(&gemm_aos_pipe_kernel<T, TY, TX, TM, TN, KS, STAGES>);
    k.name = fmt::format("gemm_aos_pipe<{}, {}x{} threads, {}x{} tile/thread, k-slice {}, {} stages{}>",
                         sizeof(T) == 8 ? "f64" : "f32", TY, TX, TM, TN, KS, STAGES,
                         !P::MMA ? "" : sizeof(T) == 8 ? ", mma 16x8x4" : ", f64 mma 16x8x4 on converted operands");
    k.group = P::S;
    k.sub = P::S;
    k.unit_threads = P::S;
    k.unit_elements = 1;
    k.unit_shared = int64_t(STAGES) * P::UNIT * int64_t(sizeof(T));
    return k;
}

template <class T, int TY, int TX, int TM, int TN, int QV, int KS, int STAGES, bool ONE_ACROSS = false,
          int SPREAD = 0>
KernelSpec soa_pipe_kernel() {
    using P = SoaPipe<T, TY, TX, TM, TN, QV, KS, STAGES>;
    KernelSpec k;
    k.model = Model::BlockPerElement;
    k.fn = reinterpret_cast<const void *>(&gemm_soa_pipe_kernel<T, TY, TX, TM, TN, QV, KS, STAGES, ONE_ACROSS, SPREAD>);
    k.name = fmt::format("gemm_soa_pipe<{}, {} elements x {}x{} threads, {}x{}x{} tile/thread, k-slice {}, {} "
                         "stages, {}{}>",
                         sizeof(T) == 8 ? "f64" : "f32", P::E, TY, TX, P::V, TM, TN, KS, STAGES,
                         P::l2_line(ONE_ACROSS) ? "whole 128-byte lines asked of L2" : "sector requests",
                         SPREAD ? fmt::format(", copies spread over {} k-steps", SPREAD) : std::string());
    k.group = TY * TX;
    k.sub = P::S;
    k.unit_threads = P::S;
    k.unit_elements = P::E;
    k.unit_shared = (int64_t(STAGES) * P::UNIT + P::CS) * int64_t(sizeof(T));
    return k;
}

// The pipelined kernels for elements of C up to 64 x 64 (any k): AoS one element per
// unit, the whole of C in one tile (H100 64 x 64: f64 0.40 ms, f32 0.42 in one tile of
// 256 / 128 threads, against 0.53 / 0.56 in four tiles of 32 x 32 on separate blocks).
// AoS C above 16 x 16: slices of 32 dimensions, two stages (64 x 64: as many bytes in
// flight as three stages of 16, at the same blocks an SM). A slice of A is then 256
// bytes of each row (f32 128); in slices of 16 each 512-byte row of A was read in four
// runs of 128 bytes (f32 64) at four times, and 64 x 64 reached 66 / 61 % of the bound
// (H100: f64 0.410, f32 0.441 ms) where C of 16 x 16, whose slices are whole rows,
// reaches 90 %. C of 17..32: whole rows of A in one slice, at fewer elements an SM (f64
// 6 where slices of 16 held 8, f32 13 for 16; run 134). Slices of 16 over three stages
// where k is below 32 (C of 17..32) or at most 16 (64 x 64): a k that fits no whole
// slice of 32 would go all through the partial-slice loop. f64 in slices of 32 on the
// tensor cores (AosPipe::MMA): H100 round 2 on the fma pipe reached 0.357 ms (76 % of
// the bound) where torch.bmm, on the tensor cores, reached 0.324 (f32 C above 32 x 32
// with k >= 32 on the same f64 mma since run 267, below); the 64 x 64 x 64 fma of
// an element take some 4096 cycles of an SM's fp64 pipe against some 2048 of its tensor
// cores (1024 in the m16n8k4 shape), and the fragment loads half the shared-memory
// wavefronts (12 per 4 mma of a warp, against 12 per 32 fma). H200 run 232, m16n8k4
// where m8n8k4 had been, against the previous library in the same call: 64 x 64 0.275-
// 0.278 -> 0.220-0.225 ms, and C of 32 x 32 (k >= 32) on the mma too, 0.243-0.255 ->
// 0.203-0.204 (torch.bmm 0.222-0.225 and 0.219).
// SoA 32 bytes of consecutive elements per unit and the whole of their C: above 16 x 16
// 4 x 4 x V sums a thread (C of 64 x 64: 512 threads a unit).
template <class T>
KernelSpec pipe_kernel(bool soa, int64_t mn, int64_t k) {
    constexpr bool D = sizeof(T) == 8;
    if (soa) {
        if (mn <= 8) return soa_pipe_kernel<T, 4, 4, 2, 2, 2, 8, 2>();
        if (mn <= 16) return soa_pipe_kernel<T, 8, 8, 2, 2, 2, 8, 4>();
        // C one tile across (f64 in slices of 16 over two stages: one item where slices of
        // 8 took two, H100 f64 32 x 32 0.350 -> 0.346 ms, run 130; three stages at 128
        // registers, for a fourth block an SM, spilled and took 0.38-0.40).
        // The fixed pieces spread over the fold (run 193, C of 32 x 32 against the walk in
        // the same calls: f64 slices of 16 over two stages, a piece a k-step, 165
        // registers, 0.342-0.347 -> 0.328-0.336 ms; f32 slices of 8 over three stages, 12
        // bytes spilled at 168 registers, 0.354-0.355 -> 0.342-0.344, where slices of 16
        // spilled 64 bytes and took 0.42-0.47).
        if (mn <= 32) {
            if constexpr (D) return soa_pipe_kernel<T, 8, 8, 4, 4, 2, 16, 2, true, 16>();
            else return soa_pipe_kernel<T, 8, 8, 4, 4, 2, 8, 3, true, 8>();
        }
        // (f64 C of 17..64 on the tensor cores as AoS, each element's tiles staged from the
        // interleaved arrays an entry at a time, C out through shared memory: H200 runs
        // 233-234, 0.41-0.52 ms at 32 x 32 and 0.95 at 64 x 64 against these kernels' 0.28
        // and 0.44; rejected.)
        // C above 32 x 32 in one tile of 64 x 64 (512 threads a unit, one block an SM), slices
        // of 8 over four stages: A and B read once, where tiles of 32 x 32 (128 threads, three
        // blocks an SM) read each half of A and of B twice, the second time from L2, and were
        // bound by L2 (run 138). H100 runs 141-149 (against the base in the same calls): f64
        // 0.465-0.483 -> 0.445-0.456 ms, f32 0.539-0.562 -> 0.510-0.516 (f64 in slices of 16
        // over three stages 0.459-0.469, f32 in slices of 16 over two 0.536-0.543). The 56
        // bytes it spills (the fixed pieces' offsets, reloaded after each barrier, and the
        // epilogue) cost less than computing the offsets again (run 149: 0.49 ms).
        return soa_pipe_kernel<T, 16, 16, 4, 4, 2, 8, 4>();
    }
    if (mn <= 8) return aos_pipe_kernel<T, 4, 2, 2, 4, 8, 2>();
    if constexpr (D) {
        if (mn <= 16) return aos_pipe_kernel<T, 4, 8, 4, 2, 16, 3>();
        // C up to 32 x 32 with k >= 32 in slices of 32 (whole 256-byte rows of A), two
        // stages (H100 run 134: 0.329-0.330 -> 0.300-0.307 ms; three stages 0.319-0.322)
        if (mn <= 32)
            return k < 32 ? aos_pipe_kernel<T, 8, 8, 4, 4, 16, 3>() : aos_pipe_kernel<T, 8, 8, 4, 4, 32, 2>();
        return k <= 16 ? aos_pipe_kernel<T, 16, 16, 4, 4, 16, 3>() : aos_pipe_kernel<T, 16, 16, 4, 4, 32, 2>();
    } else {
        if (mn <= 16) return aos_pipe_kernel<T, 2, 4, 8, 4, 16, 2>();
        // (as f64; H100 run 135: 0.310-0.311 -> 0.301-0.306 ms, three stages 0.330; the
        // f64 mma measured no faster here, run 267: 0.211-0.216 against 0.210)
        if (mn <= 32)
            return k < 32 ? aos_pipe_kernel<T, 4, 8, 8, 4, 16, 3>() : aos_pipe_kernel<T, 4, 8, 8, 4, 32, 2>();
        // C above 32 x 32 with k >= 32 on the f64 mma, the operands converted as they are
        // loaded into fragments (H200 run 267, both staged whole: 0.273-0.279 -> 0.256-0.257
        // ms against 8 x 4 fma sums a thread; torch.bmm 0.319); k < 32 in slices of 16 on
        // the fma (a k of 17..31 would go all through the mma kernel's partial-slice loop,
        // f64 fma on converted operands: not timed)
        return k < 32 ? aos_pipe_kernel<T, 8, 16, 8, 4, 16, 3>() : aos_pipe_kernel<T, 16, 16, 4, 4, 32, 2>();
    }
}

// AoS warp-groups: G threads of a warp an element (each a stripe of C), elements up to
// N x N x N (compiled at N x N x N where EXACT).
template <class T, int G, int N, bool EXACT = true>
KernelSpec aos_group_kernel(const GemmProblem &pb) {
    KernelSpec kn = warp_kernel<T, G, N, N, N, false>(Model::WarpGroup);
    if constexpr (EXACT)
        if (pb.m == N && pb.n == N && pb.k == N) kn = warp_kernel<T, G, N, N, N, true>(Model::WarpGroup);
    kn.why = fmt::format("AoS elements up to {}x{} ({}x{}x{}): {} threads of a warp per element ({} per warp), "
                         "each a stripe of C, staged per warp without block barriers",
                         N, N, pb.m, pb.n, pb.k, G, 32 / G);
    return kn;
}

// Elements that keep every warp of the device busy with warp-groups: below this count a
// mid-size element is better split over a block.
int64_t few_elements(int sm_count) { return int64_t(sm_count) * 64; }

template <class T>
KernelSpec select_kernel(const GemmProblem &pb, int sm_count, int64_t max_shared) {
    constexpr bool D = sizeof(T) == 8;
    const int64_t m = pb.m, n = pb.n, k = pb.k, big = std::max({m, n, k});
    const bool square = m == n && n == k, aos = !pb.c.soa;
    [[maybe_unused]] const bool few = pb.batch < few_elements(sm_count);
    const int64_t mn = std::max(m, n);
    KernelSpec kn;
    if (big <= 4) {
        kn = square && m == 2   ? warp_kernel<T, 1, 2, 2, 2, true>(Model::ThreadPerElement)
             : square && m == 4 ? warp_kernel<T, 1, 4, 4, 4, true>(Model::ThreadPerElement)
                                : warp_kernel<T, 1, 4, 4, 4, false>(Model::ThreadPerElement);
        kn.why = fmt::format("elements of at most 4x4 ({}x{}x{}) fit one thread's registers; each warp stages "
                             "its 32 elements through shared memory by cp.async in memory order",
                             m, n, k);
        return kn;
    }
    // AoS up to 8, and f32 up to 16 on enough elements to fill the device: the
    // warp-groups, staged per warp without block barriers, beat the pipelined kernels
    // (H100: f64 8x8 0.32 against 0.72 ms, f32 8x8 0.52 against 0.92, f32 16x16 0.63
    // against 0.71; H200 run 268, the tiles staged whole: f64 8 x 8 0.221 against 0.335,
    // f32 8 x 8 0.226 against 0.455; run 267: f32 16 x 16 0.248 against 0.430). f64 C of
    // 9..16 takes the tiles since they stage whole slices without the walk (run 267:
    // 0.206-0.208 ms against the groups of 16's 0.235-0.238, 82 -> 92 % of the bound;
    // before, run 210: the groups 0.237 against the tiles' 0.258); f64 C up to 8 with k of
    // 9..16 stays on the groups (the tiles of 8 x 8 measured slower, above). Not for SoA:
    // a warp's 8 or 2 elements make runs of 64 or 16 bytes an entry (H200 run 210: f64 8x8
    // 0.40 against the direct kernel's 0.24 of then, 16x16 1.6 against the lane kernel's
    // 0.23).
    if (aos && big <= 8) return aos_group_kernel<T, 4, 8>(pb);
    if constexpr (D) {
        if (aos && big <= 16 && !few && mn <= 8) return aos_group_kernel<T, 16, 16, false>(pb);
    } else {
        if (aos && big <= 16 && !few) return aos_group_kernel<T, 8, 16>(pb);
    }
    // SoA 8 x 8 x 8 and 16 x 16 x 16: the lane kernel. H200 runs 260-261, against the
    // kernels these shapes took before, in the same calls: f64 8 x 8 in 8 warps of 2 x 4
    // sums, slices of 2 over four stages, 0.240-0.249 -> 0.204-0.208 ms (77-79 -> 92-93 %
    // of the bound; the direct kernel of two threads an element, operands straight from
    // global memory, since removed); f32 8 x 8 in 8 warps of 2 x 4, slices of 4 over four
    // stages, 0.260-0.267 -> 0.224-0.228 (the pipelined tiles; 72-73 -> 84-85 %); f64 16 x
    // 16 in 16 warps of 4 x 4, slices of 4 over four stages, 0.232-0.235 -> 0.214-0.218
    // (81-82 -> 88-90 %; slices of 2: H100 runs 174-176 had taken it from the pipelined
    // tiles' 82 % to 92-94 % there); f32 16 x 16 in 8 warps of 4 x 8, slices of 4 over
    // three stages, 0.243-0.244 -> 0.216-0.217 (run 263: 79 -> 89 %; slices of 2 over four
    // stages before). Other picks measured slower: f64 8 x 8 in 4 warps of 4 x 4
    // (0.217-0.220) or slices of 4 over three stages (0.215-0.218); f32 8 x 8 in 4 warps
    // (0.234-0.243); f64 16 x 16 over six or three stages of 2 (0.231-0.250); f32 16 x 16
    // over four stages of 4 (0.221-0.229) or in 16 warps (0.244-0.247).
    if (pb.c.soa && pb.a.soa && pb.b.soa && square && (m == 8 || m == 16)) {
        if constexpr (D) {
            if (m == 8) return soa_lane_kernel<T, 8, 2, 4, 8>();
            // (slices of 4 take 128 KiB of shared memory a unit: devices of less a block,
            // sm_86 and sm_89 among them, take the slices of 2 of 64 KiB)
            const KernelSpec k4 = soa_lane_kernel<T, 16, 4, 4, 16>();
            return k4.unit_shared <= max_shared ? k4 : soa_lane_kernel<T, 16, 2, 4, 16>();
        } else
            return m == 8 ? soa_lane_kernel<T, 8, 4, 4, 8>() : soa_lane_kernel<T, 16, 4, 3, 8>();
    }
    // (The pipelined kernels count their pairs of element group and C tile in int.)
    if (mn <= 64 && pb.batch < (int64_t(1) << 30)) {
        kn = pipe_kernel<T>(pb.c.soa, mn, k);
        kn.why = pb.c.soa ? fmt::format("elements of {}x{}x{} (C up to 64x64), SoA: units of {} consecutive "
                                        "elements (32-byte runs of each entry) share a sub-block and their whole "
                                        "C, A and B staged by cp.async in slices of k, the next slices in "
                                        "flight while one is folded",
                                        m, n, k, kn.unit_elements)
                          : fmt::format("elements of {}x{}x{} (C up to 64x64), AoS: a sub-block of {} threads "
                                        "per element, A and B staged by cp.async in slices of k (whole slices "
                                        "on the 16-byte grid by each element's own threads, but for f64 C of "
                                        "17..32 on the mma and of 33..64 in slices of 16), several slices in "
                                        "flight",
                                        m, n, k, kn.sub);
        return kn;
    }
    kn = block_kernel<T, 16, 16, 8, 8>();
    kn.why = fmt::format("elements of {}x{}x{} (C above 64x64) need shared-memory tiles: a sub-block of {} "
                         "threads per element, A and B staged 16 dimensions at a time",
                         m, n, k, kn.sub);
    return kn;
}

KernelSpec kernel_for(const GemmProblem &pb, const DeviceLimits &lim) {
    return pb.dtype == APAIRS_DTYPE_F64 ? select_kernel<double>(pb, lim.sm_count, lim.max_shared_per_block)
                                        : select_kernel<float>(pb, lim.sm_count, lim.max_shared_per_block);
}

// SoA block-per-element: this many consecutive elements per block fill a 32-byte sector;
// for the pipelined SoA kernel (units of 16 or 32 bytes an entry), a 128-byte line.
int soa_min_units(const GemmProblem &pb, const KernelSpec &k) {
    if (k.model != Model::BlockPerElement || !pb.c.soa) return 1;
    if (k.unit_elements == 32) return 1;  // the lane kernel: a unit is already 32 elements (whole lines)
    // The 4 x 4 x V tiles of C of 17..32 take some 160 registers: blocks of one unit (128
    // threads), three an SM, keep more resident than blocks of two or four (one an SM); the
    // blocks that run together then share the lines. C of 64 x 64 (512 threads): one unit.
    if (k.fn == reinterpret_cast<const void *>(&gemm_soa_pipe_kernel<double, 8, 8, 4, 4, 2, 16, 2, true, 16>) ||
        k.fn == reinterpret_cast<const void *>(&gemm_soa_pipe_kernel<float, 8, 8, 4, 4, 2, 8, 3, true, 8>) ||
        k.fn == reinterpret_cast<const void *>(&gemm_soa_pipe_kernel<double, 16, 16, 4, 4, 2, 8, 4, false>) ||
        k.fn == reinterpret_cast<const void *>(&gemm_soa_pipe_kernel<float, 16, 16, 4, 4, 2, 8, 4, false>))
        return 1;
    // (The 16 x 16 tiles in blocks of two units, three an SM at 80 registers, measured
    // slower on H100 than the 128-byte rule's one block of four: 0.409 / 0.407 ms against
    // 0.395 / 0.396 for f64 / f32 16 x 16.)
    const int64_t unit_bytes = k.unit_elements * int64_t(pb.elem_size());
    return unit_bytes > int64_t(pb.elem_size()) ? int(128 / unit_bytes) : int(32 / pb.elem_size());
}

// 16-byte accesses line up: the array on 16 bytes and the stride a multiple of 16 bytes.
template <class T>
bool lines_up(const void *p, int64_t stride) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && stride % int64_t(16 / sizeof(T)) == 0;
}

template <class T>
Opnd<T> operand(const Matrix &mx, bool trans, const void *p) {
    Opnd<T> o;
    o.p = static_cast<const T *>(p);
    o.ld = mx.ld;
    o.stride = mx.stride;
    o.fr = int(mx.row_major ? mx.rows : mx.cols);
    o.fc = int(mx.row_major ? mx.cols : mx.rows);
    o.soa = mx.soa;
    o.swap = mx.row_major == trans;
    o.vec = lines_up<T>(p, mx.stride) && (mx.soa || mx.ld % int64_t(16 / sizeof(T)) == 0);
    return o;
}

template <class T>
Args<T> make_args(const GemmProblem &pb, const void *A, const void *B, void *C) {
    Args<T> g;
    g.a = operand<T>(pb.a, pb.trans_a, A);
    g.b = operand<T>(pb.b, pb.trans_b, B);
    g.c = static_cast<T *>(C);
    g.ldc = pb.c.ld;
    g.sc = pb.c.stride;
    g.soa_c = pb.c.soa;
    g.vec_c = lines_up<T>(C, pb.c.stride) && (pb.c.soa || pb.c.ld % int64_t(16 / sizeof(T)) == 0);
    g.m = int(pb.m);
    g.n = int(pb.n);
    g.k = int(pb.k);
    g.alpha = T(pb.alpha);
    g.beta = T(pb.beta);
    g.batch = pb.batch;
    if (!pb.c.row_major) {
        // C column-major: compute the row-major C^T = op(B)^T op(A)^T.
        std::swap(g.a, g.b);
        g.a.swap = !g.a.swap;
        g.b.swap = !g.b.swap;
        std::swap(g.m, g.n);
    }
    return g;
}

template <class T>
struct ScaleArgs {
    T *out;
    Matrix m;
    int64_t batch;
    T beta;
    bool dense;  // the entries fill their span: no padding between rows, columns or elements
};

// Each thread keeps one entry q of the element grid (its offset computed once: no division
// an entry) and walks that entry through every k-th element, k = threads / per element
// lanes; consecutive threads walk memory order (AoS: an element's entries in its order,
// then the next element's; SoA: an entry's consecutive elements). 32 bytes of loads (8
// float, 4 double) are issued before their stores (beta != 0; beta = 0 never reads C),
// so that each thread keeps several in flight. (H200 run 374: a thread an entry with two
// 64-bit divisions each ran f32 n = 4 AoS C = 0.5 C at 39 % of the copy's rate, where
// torch's C.mul_(0.5) reached 86 %.)
template <class T>
__global__ void scale_kernel(const ScaleArgs<T> g) {
    const Matrix &m = g.m;
    const int64_t per = m.rows * m.cols, threads = int64_t(gridDim.x) * blockDim.x;
    const int64_t t = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const T beta = g.beta;
    if (g.dense) {
        // One flat run of per x batch values: 16-byte accesses, two a thread in flight
        // (H200 run 376: the walk below ran f32 C = 0.5 C at 69 % of the copy's rate,
        // its 4-byte requests half the bytes of the double walk's, which ran at 86 %).
        struct alignas(16) Pack {
            T v[16 / sizeof(T)];
        };
        constexpr int V = 16 / sizeof(T);
        auto scaled = [&](Pack a) {  // (beta != 0; beta = 0 stores Pack{}, +0 without a load)
#pragma unroll
            for (int u = 0; u < V; ++u) a.v[u] = beta * a.v[u];
            return a;
        };
        const int64_t total = per * g.batch;
        const int64_t head = std::min<int64_t>(total, (16 - int64_t(reinterpret_cast<uintptr_t>(g.out) % 16)) % 16 /
                                                          int64_t(sizeof(T)));
        const int64_t nv = (total - head) / V, tail = head + nv * V;
        auto f1 = [&](T *p) { *p = beta == T(0) ? T(0) : beta * *p; };  // (beta = 0: no load)
        if (t < head) f1(g.out + t);
        if (t < total - tail) f1(g.out + tail + t);
        Pack *const pv = reinterpret_cast<Pack *>(g.out + head);
        int64_t x = t;
        for (; x + threads < nv; x += 2 * threads) {
            if (beta == T(0)) {
                pv[x] = Pack{}, pv[x + threads] = Pack{};
            } else {
                const Pack a = pv[x], b = pv[x + threads];
                pv[x] = scaled(a), pv[x + threads] = scaled(b);
            }
        }
        if (x < nv) pv[x] = beta == T(0) ? Pack{} : scaled(pv[x]);
        return;
    }
    // Entry q of elements e0, e0 + k, ... below the batch. Offsets are formed only for
    // elements that exist (below (batch - 1) x stride + extent, which validation bounded).
    auto walk = [&](int64_t q, int64_t e0, int64_t k) {
        int64_t left = e0 < g.batch ? (g.batch - 1 - e0) / k + 1 : 0;  // the elements this thread writes
        if (left == 0) return;
        const int64_t i = m.row_major ? q / m.cols : q % m.rows, j = m.row_major ? q % m.cols : q / m.rows;
        int64_t o = m.index(i, j, e0);
        const int64_t step = left > 1 ? k * (m.soa ? 1 : m.stride) : 0;
        constexpr int U = 32 / sizeof(T);  // the values a thread keeps in flight
        for (; left >= U; left -= U) {
            if (beta == T(0)) {
#pragma unroll
                for (int u = 0; u < U; ++u) g.out[o + u * step] = T(0);
            } else {
                T v[U];
#pragma unroll
                for (int u = 0; u < U; ++u) v[u] = g.out[o + u * step];
#pragma unroll
                for (int u = 0; u < U; ++u) g.out[o + u * step] = beta * v[u];
            }
            if (left > U) o += U * step;
        }
        for (; left > 0; --left) {
            g.out[o] = beta == T(0) ? T(0) : beta * g.out[o];
            if (left > 1) o += step;
        }
    };
    const int64_t k = threads / per;  // >= 1: the plan's grid holds an element's entries
    if (t < k * per) walk(m.soa ? t / k : t % per, m.soa ? t % k : t / per, k);
}

}  // namespace

CudaConfig plan_scale_cuda(const Matrix &m, int32_t dtype, int64_t batch, int device, double occupancy_target) {
    require_device(device);
    KernelSpec k;
    k.model = Model::ThreadPerElement;
    k.fn = dtype == APAIRS_DTYPE_F64 ? reinterpret_cast<const void *>(&scale_kernel<double>)
                                     : reinterpret_cast<const void *>(&scale_kernel<float>);
    k.unit_threads = 32;
    k.unit_elements = 32;
    k.items = batch * m.rows * m.cols;  // (at most the operand's span: validated)
    k.name = fmt::format("scale<{}>", dtype == APAIRS_DTYPE_F64 ? "f64" : "f32");
    k.why = "alpha = 0: the output scaled by beta (zeroed where beta = 0), the other operands not read (as BLAS)";
    CudaConfig cfg = plan_kernel(k, batch, device, occupancy_target, 1, "batched scale by beta");
    // At least a thread an entry of one element (past one wave only on a device too small
    // for it): the kernel's walk gives each thread one entry of the element grid.
    const int64_t per = m.rows * m.cols;
    cfg.grid = std::max<int64_t>(cfg.grid, (per + cfg.block_threads - 1) / cfg.block_threads);
    return cfg;
}

void launch_scale_cuda(const Matrix &m, int32_t dtype, double beta, int64_t batch, const CudaConfig &cfg,
                       void *stream, void *out) {
    DeviceScope scope(cfg.device);
    constexpr const char *what = "batched scale kernel launch";
    const int64_t size = dtype == APAIRS_DTYPE_F64 ? 8 : 4;
    const bool dense = m.span(batch) == m.rows * m.cols * batch && reinterpret_cast<uintptr_t>(out) % size == 0;
    if (dtype == APAIRS_DTYPE_F64)
        launch_planned(cfg, stream, ScaleArgs<double>{static_cast<double *>(out), m, batch, beta, dense}, what);
    else
        launch_planned(cfg, stream, ScaleArgs<float>{static_cast<float *>(out), m, batch, float(beta), dense}, what);
}

namespace {

CudaConfig plan_gemm_kernel(const GemmProblem &pb, int device, double occupancy_target) {
    if (pb.alpha == 0) return plan_scale_cuda(pb.c, pb.dtype, pb.batch, device, occupancy_target);
    // The unit of growth: a warp of elements (thread-per-element, warp-group) or an
    // element's sub-block; for SoA block-per-element, as many consecutive elements'
    // sub-blocks as fill a 32-byte sector when that can launch, else half as many, ...
    require_device(device);
    const KernelSpec kn = kernel_for(pb, device_limits(device));
    const std::string what = fmt::format("batched gemm {}x{}x{}", pb.m, pb.n, pb.k);
    CudaConfig c = plan_kernel(kn, pb.batch, device, occupancy_target, soa_min_units(pb, kn), what);
    // AoS sub-blocks (an element a unit): the units of a block meet at the block's barrier
    // every slice, so a block of many elements waits each slice for its slowest one. The
    // estimator's pick (the smallest block of the highest occupancy) can be one large
    // block an SM where blocks of one element hold nearly as many warps: f32 C of 32 x 32,
    // one block of 13 elements (416 threads) against 12 blocks of one (H200 run 237:
    // 0.305-0.312 -> 0.269-0.278 ms). Unless the caller set a target, blocks of one
    // element are taken where they keep 90 % of the pick's warps an SM.
    if (occupancy_target == 0 && !pb.c.soa && kn.model == Model::BlockPerElement &&
        c.block_threads > kn.unit_threads) {
        CudaConfig one = plan_kernel(kn, pb.batch, device, 1e-9, 1, what);
        const int warps = c.choice.chosen.blocks_per_sm * ((c.block_threads + 31) / 32);
        const int warps_one = one.choice.chosen.blocks_per_sm * ((one.block_threads + 31) / 32);
        if (one.block_threads == kn.unit_threads && 10 * warps_one >= 9 * warps) {
            one.choice.reason = fmt::format("blocks of one element, {} warps an SM, where the highest occupancy's "
                                            "blocks of {} threads hold {} and make their elements meet at one "
                                            "barrier every slice",
                                            warps_one, c.block_threads, warps);
            return one;
        }
    }
    return c;
}

}  // namespace

GemmConfig plan_gemm_cuda(const GemmProblem &pb, int device, double occupancy_target) {
    GemmConfig g;
    g.kernel = plan_gemm_kernel(pb, device, occupancy_target);
    // (float keeps the kernels: their sums are in double, cuBLAS's SGEMM's in float.)
    if (pb.dtype != APAIRS_DTYPE_F64 || pb.c.soa || pb.alpha == 0 || !gemm_vendor_shape(pb.m, pb.n, pb.k)) return g;
    if (!cuda::Gemm::fits(pb.m, pb.n, pb.k, pb.a.ld, pb.b.ld, pb.c.ld))
        g.gemm_unavailable = "a size beyond cuBLAS's 32-bit arguments";
    else
        g.gemm = cuda::Gemm::create(device, &g.gemm_unavailable);
    return g;
}

void launch_gemm_cuda(const GemmProblem &pb, const GemmConfig &gc, void *stream, const void *A, const void *B,
                      void *C) {
    if (gc.gemm) {
        gc.gemm->batched(stream, !pb.c.row_major, pb.trans_a, pb.trans_b, pb.m, pb.n, pb.k, pb.alpha,
                         static_cast<const double *>(A), pb.a.ld, pb.a.stride, static_cast<const double *>(B),
                         pb.b.ld, pb.b.stride, pb.beta, static_cast<double *>(C), pb.c.ld, pb.c.stride, pb.batch);
        return;
    }
    const CudaConfig &cfg = gc.kernel;
    if (pb.alpha == 0) return launch_scale_cuda(pb.c, pb.dtype, pb.beta, pb.batch, cfg, stream, C);
    DeviceScope scope(cfg.device);
    if (pb.dtype == APAIRS_DTYPE_F64)
        launch_planned(cfg, stream, make_args<double>(pb, A, B, C), "batched gemm kernel launch");
    else
        launch_planned(cfg, stream, make_args<float>(pb, A, B, C), "batched gemm kernel launch");
}

}  // namespace apairs::batched
