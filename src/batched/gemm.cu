// CUDA engine of the batched family: gemm, C_e = alpha op(A_e) op(B_e) + beta C_e.
//
// Ha et al. (2013)'s execution models, chosen by the element's size and the batch count:
//
//   thread-per-element (max(m, n, k) <= 4) and warp-group (<= 16): one kernel. Each warp
//     owns EW = 32 / G elements at a time (G threads per element, G = 1 for
//     thread-per-element) and moves them through its own slice of shared memory:
//     the warp copies A and B of its EW elements in with loads in memory order (whole
//     lines for AoS and SoA alike, whatever the order and transposes), each group computes
//     its element from shared memory (every thread a register tile of C: all rows times
//     every G-th column), writes the sums back into shared memory, and the warp copies C
//     out in memory order. Only __syncwarp, no block barriers; square 2, 4, 8, 16 are
//     compiled with their sizes, any other shape runs the same code with run-time sizes
//     under a compile-time bound.
//   block-per-element (larger, or few elements): u elements per block, each computed by
//     a sub-block of S threads (each an TM x TN register tile); A and B are staged
//     KS = 16 dimensions at a time; for SoA the block's elements are consecutive, so the
//     staging loads and the C stores (consecutive threads, consecutive elements) cover
//     whole sectors.
//
// Host-side normalisation: a column-major C is computed as the row-major C^T =
// op(B)^T op(A)^T (swap the operands, flip their transposes), so the kernels see a
// row-major C. Each operand is seen as its "fast grid" (the stored matrix in its memory
// order: rows of ld-strided contiguous runs) plus a flag `swap` saying whether the
// logical op entry (x, y) is fast-grid entry (x, y) or (y, x).
//
// Accuracy: every entry is summed in the element type, its k products in order
// l = 0..k-1 with fma, then alpha * sum (+ beta * C), as the host engine does.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "batched/cuda.hpp"
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
};

template <class T>
struct Args {
    Opnd<T> a, b;      // a: logical m x k, b: logical k x n
    T *c;              // row-major m x n
    int64_t ldc, sc;
    bool soa_c;
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

// ---------------------------------------------------------------------------------
// Thread-per-element / warp-group kernel

template <int G, int MB, int NB, int KB>
struct WarpShape {
    static constexpr int EW = 32 / G;            // elements per warp round
    static constexpr int CG = cmin(G, NB);       // threads of a group across columns
    static constexpr int RG = G / CG;            // ... and across rows
    static constexpr int MA = (MB + RG - 1) / RG, NBB = NB / CG;  // a thread's tile
    static constexpr int RSA = pad_odd(KB), ESA = pad_odd(MB * RSA);
    static constexpr int RSB = pad_odd(NB), ESB = pad_group(KB * RSB, CG);
    static constexpr int ESC = pad_group(MB * NB, CG);
    static constexpr int REGION = EW * cmax(ESA + ESB, ESC);  // elements of T per warp
    static_assert(32 % G == 0 && NB % CG == 0, "group shape");
};

// Copies the fast grids of a warp's EW elements into shared memory at
// q * ES + x * RS + y (logical (x, y)), in memory order: AoS element by element, row by
// row; SoA entry by entry, the EW elements of an entry together. FR, FC: the fast grid's
// size when known at compile time, else 0.
template <class T, bool SOA, int EW, int FR, int FC, int RS, int ES, int CH>
__device__ __forceinline__ void warp_stage_impl(const Opnd<T> &o, int64_t e0, int64_t batch, T *sh, int lane) {
    const int fr = FR ? FR : o.fr, fc = FC ? FC : o.fc;
    const int total = EW * fr * fc;
#pragma unroll
    for (int base = 0; base < total; base += 32 * CH) {
        T v[CH];
        int dst[CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            const int x = base + c * 32 + lane;
            int q, rr, cc;
            if constexpr (SOA) {
                q = x % EW;
                const int t = x / EW;
                cc = t % fc;
                rr = t / fc;
            } else {
                cc = x % fc;
                const int t = x / fc;
                rr = t % fr;
                q = t / fr;
            }
            const int64_t e = e0 + q;
            const bool ok = x < total && e < batch;
            const int64_t idx = rr * o.ld + cc;
            v[c] = ok ? load_ro(o.p + (SOA ? idx * o.stride + e : e * o.stride + idx)) : T(0);
            const int xx = o.swap ? cc : rr, yy = o.swap ? rr : cc;
            dst[c] = ok ? q * ES + xx * RS + yy : -1;
        }
#pragma unroll
        for (int c = 0; c < CH; ++c)
            if (dst[c] >= 0) sh[dst[c]] = v[c];
    }
}

template <class T, int EW, int FR, int FC, int RS, int ES, int CH>
__device__ __forceinline__ void warp_stage(const Opnd<T> &o, int64_t e0, int64_t batch, T *sh, int lane) {
    if (o.soa)
        warp_stage_impl<T, true, EW, FR, FC, RS, ES, CH>(o, e0, batch, sh, lane);
    else
        warp_stage_impl<T, false, EW, FR, FC, RS, ES, CH>(o, e0, batch, sh, lane);
}

template <class T, int G, int MB, int NB, int KB, bool EXACT>
__global__ void __launch_bounds__(512) gemm_warp_kernel(const Args<T> g) {
    using W = WarpShape<G, MB, NB, KB>;
    constexpr int EW = W::EW, CG = W::CG, RG = W::RG;
    // Values staged per lane and per chunk: up to 16 floats or 8 doubles of loads in
    // flight per lane (all of a small operand's), 8 at a time for run-time sizes.
    constexpr int PER_LANE = (EW * MB * KB + 31) / 32;
    constexpr int CH = EXACT ? cmin(sizeof(T) == 8 ? 8 : 16, PER_LANE) : 8;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *const region = reinterpret_cast<T *>(smem_raw) + (threadIdx.x / 32) * W::REGION;
    T *const As = region, *const Bs = region + EW * W::ESA, *const Cs = region;

    const int lane = threadIdx.x & 31;
    const int m = EXACT ? MB : g.m, n = EXACT ? NB : g.n, k = EXACT ? KB : g.k;
    const int q = lane / G, r = lane % G, cj = r % CG, ri = r / CG;
    const int64_t warp = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int64_t nwarps = int64_t(gridDim.x) * (blockDim.x / 32);

    for (int64_t e0 = warp * EW; e0 < g.batch; e0 += nwarps * EW) {
        warp_stage<T, EW, EXACT ? MB : 0, EXACT ? KB : 0, W::RSA, W::ESA, CH>(g.a, e0, g.batch, As, opaque(lane));
        warp_stage<T, EW, EXACT ? KB : 0, EXACT ? NB : 0, W::RSB, W::ESB, CH>(g.b, e0, g.batch, Bs, opaque(lane));
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
        const int total = EW * m * n;
        const bool read_c = g.beta != T(0);
#pragma unroll 4
        for (int x = opaque(lane); x < total; x += 32) {
            int qq, i, j;
            if (g.soa_c) {
                qq = x % EW;
                const int t = x / EW;
                j = t % n;
                i = t / n;
            } else {
                j = x % n;
                const int t = x / n;
                i = t % m;
                qq = t / m;
            }
            const int64_t e = e0 + qq;
            if (e < g.batch) {
                const int64_t idx = int64_t(i) * g.ldc + j;
                T *dst = g.c + (g.soa_c ? idx * g.sc + e : e * g.sc + idx);
                T v = g.alpha * Cs[qq * W::ESC + i * NB + j];
                if (read_c) v += g.beta * *dst;
                *dst = v;
            }
        }
        __syncwarp();
    }
}

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

        const int64_t e = e0 + q;
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
                }
        }
    }
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

// Elements that keep every warp of the device busy with warp-groups: below this count a
// mid-size element is better split over a block.
int64_t few_elements(int sm_count) { return int64_t(sm_count) * 64; }

template <class T>
KernelSpec select_kernel(const GemmProblem &pb, int sm_count) {
    const int64_t m = pb.m, n = pb.n, k = pb.k, big = std::max({m, n, k});
    const bool square = m == n && n == k;
    const bool few = pb.batch < few_elements(sm_count);
    KernelSpec kn;
    if (big <= 4) {
        kn = square && m == 2   ? warp_kernel<T, 1, 2, 2, 2, true>(Model::ThreadPerElement)
             : square && m == 4 ? warp_kernel<T, 1, 4, 4, 4, true>(Model::ThreadPerElement)
                                : warp_kernel<T, 1, 4, 4, 4, false>(Model::ThreadPerElement);
        kn.why = fmt::format("elements of at most 4x4 ({}x{}x{}) fit one thread's registers; each warp stages "
                             "its 32 elements through shared memory with loads in memory order",
                             m, n, k);
    } else if (big <= 8) {
        kn = square && m == 8 ? warp_kernel<T, 4, 8, 8, 8, true>(Model::WarpGroup)
                              : warp_kernel<T, 4, 8, 8, 8, false>(Model::WarpGroup);
        kn.why = fmt::format("elements up to 8x8 ({}x{}x{}): 4 threads of a warp per element (8 per warp), "
                             "each a row-stripe of C, staged per warp without block barriers",
                             m, n, k);
    } else if (big <= 16 && !few) {
        kn = square && m == 16 ? warp_kernel<T, 8, 16, 16, 16, true>(Model::WarpGroup)
                               : warp_kernel<T, 8, 16, 16, 16, false>(Model::WarpGroup);
        kn.why = fmt::format("elements up to 16x16 ({}x{}x{}): 8 threads of a warp per element (4 per warp), "
                             "staged per warp without block barriers",
                             m, n, k);
    } else {
        const int64_t mn = std::max(m, n);
        if (mn <= 32)
            kn = block_kernel<T, 4, 8, 8, 4>();
        else if (mn <= 64)
            kn = block_kernel<T, 8, 8, 8, 8>();
        else
            kn = block_kernel<T, 16, 16, 8, 8>();
        kn.why = big <= 16
                     ? fmt::format("only {} elements of up to 16x16 ({}x{}x{}), fewer than {} (64 per SM): a "
                                   "sub-block of {} threads per element keeps more of the device busy",
                                   pb.batch, m, n, k, few_elements(sm_count), kn.sub)
                     : fmt::format("elements of {}x{}x{} (above 16) need shared-memory tiles: a sub-block of {} "
                                   "threads per element, A and B staged 16 dimensions at a time",
                                   m, n, k, kn.sub);
    }
    return kn;
}

KernelSpec kernel_for(const GemmProblem &pb, int sm_count) {
    return pb.dtype == APAIRS_DTYPE_F64 ? select_kernel<double>(pb, sm_count) : select_kernel<float>(pb, sm_count);
}

// SoA block-per-element: this many consecutive elements per block fill a 32-byte sector.
int soa_min_units(const GemmProblem &pb, const KernelSpec &k) {
    return k.model == Model::BlockPerElement && pb.c.soa ? int(32 / pb.elem_size()) : 1;
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

}  // namespace

CudaConfig plan_gemm_cuda(const GemmProblem &pb, int device, double occupancy_target) {
    // The unit of growth: a warp of elements (thread-per-element, warp-group) or an
    // element's sub-block; for SoA block-per-element, as many consecutive elements'
    // sub-blocks as fill a 32-byte sector when that can launch, else half as many, ...
    require_device(device);
    const KernelSpec kn = kernel_for(pb, device_limits(device).sm_count);
    return plan_kernel(kn, pb.batch, device, occupancy_target, soa_min_units(pb, kn),
                       fmt::format("batched gemm {}x{}x{}", pb.m, pb.n, pb.k));
}

void launch_gemm_cuda(const GemmProblem &pb, const CudaConfig &cfg, void *stream, const void *A, const void *B,
                      void *C) {
    DeviceScope scope(cfg.device);
    if (pb.dtype == APAIRS_DTYPE_F64)
        launch_planned(cfg, stream, make_args<double>(pb, A, B, C), "batched gemm kernel launch");
    else
        launch_planned(cfg, stream, make_args<float>(pb, A, B, C), "batched gemm kernel launch");
}

}  // namespace apairs::batched
