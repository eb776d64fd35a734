// CUDA engine: the tile / subtile / slice decomposition of Sarje & Aluru (2013), with
// each thread's outputs register-tiled across rows and columns.
//
// A block of 16 x (2 w) threads (w warps, chosen by the occupancy estimator above a
// floor the tile's reuse needs) owns a BM x BN tile of D, BM = 2 w TM and BN = 16 TN:
// thread (ty, tx) computes the TM x TN outputs of rows ty*TM.. and columns tx*TN.. of
// the tile, their accumulators in registers (past d = 1024 the running totals of the
// group sums in local memory: LongSums below). The vectors are staged through shared
// memory one slice (KB = d' dimensions) at a time, dimension-major, so that a thread
// reads its TM values of A and TN values of B for one dimension with 16-byte loads, each
// value then serving TN (or TM) outputs. A and B are first copied transposed and
// zero-padded (transpose_padded: dimension-major, rows rounded up to 16 bytes, d to
// KB; a tile past the last row reads rows that are never written out), so that a stage
// is whole 16-byte cp.async copies from fixed per-thread addresses with no bounds checks;
// stages are double-buffered: the copy of stage k+1 runs while stage k is folded.
//
// Summation order (the same as the host engine's, and what apairs.h's bounds assume):
// every output folds each slice of kSliceDims dimensions in order into a fresh
// accumulator, adds kSlicesPerGroup slices' sums in order into a group sum, and adds the
// group sums in order. Metrics whose fold does not depend on the order (integer counts,
// max) keep one accumulator and a larger tile. Tiles are visited in a grid-stride loop,
// so any n1 x n2 fits any grid.
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <fmt/format.h>

#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "cuda/staging.cuh"
#include "pairwise/cuda.hpp"
#include "pairwise/output.hpp"

namespace apairs::pairwise {
using namespace apairs::cuda;
namespace {

constexpr int TX = 16;             // threads across a block's columns
constexpr int KB = kSliceDims;     // dimensions per staged buffer: one slice
constexpr int kMaxWarps = 8;       // 256 threads: two blocks' registers fit an SM at <= 128 each
constexpr int kMinBlocks = 2;
constexpr int kStages = 2;  // staged slices: double-buffered
static_assert(kSliceDims % KB == 0 && KB % 16 == 0);

// Registers of accumulators one output needs: three levels (slice, group, total), or
// one for an order-independent fold. (The long-sums form keeps the totals in local
// memory; the tile is sized for the form that holds all three.)
template <class M>
constexpr int acc_regs() {
    return (M::reorderable ? 1 : 3) * int((sizeof(typename M::acc_t) + 3) / 4);
}
// The thread tile TM x TN: the largest of 8x8, 8x4, 4x4, 4x2, 2x2 whose accumulators fit
// 96 registers, leaving room for the operands and addresses within 128; at most 4 x 4
// for 8-byte elements, whose operands take two registers each (ptxas: LINF in double
// spills 176 bytes at 8 x 4).
template <class M>
struct Tile {
    static constexpr int fit = 96 / acc_regs<M>();
    static constexpr int outs = sizeof(typename M::in_t) == 8 && fit > 16 ? 16 : fit;
    static constexpr int TM = outs >= 32 ? 8 : outs >= 8 ? 4 : 2;
    static constexpr int TN = outs >= 64 ? 8 : outs >= 16 ? 4 : 2;
    static_assert(TM * TN * acc_regs<M>() <= 96);
};
// General LP and half-integer LP: a pow or a square root, whose temporaries need registers too (ptxas: no
// spills at 4 x 4 in float, 4 x 2 in double). Hamming's compare-and-select steps keep
// more temporaries live than a sum: 8 x 4 (8 x 8 spills).
template <class T, bool kScaled>
struct Tile<metric::Lp<T, kScaled>> {
    static constexpr int TM = 4, TN = sizeof(T) == 8 ? 2 : 4;
};
template <class T, int K>
struct Tile<metric::LpHalf<T, K>> {  // float: L1's tile; double: sqrt's called slow path
    static constexpr int TM = 4, TN = sizeof(T) == 8 ? 2 : 8;
};
template <class T, class Out>
struct Tile<metric::Hamming<T, Out>> {
    static constexpr int TM = 8, TN = 4;
};

// Row stride (elements) of a transposed stage: 16 bytes past the rows, so that the
// vector reads stay 16-byte aligned and a warp's staging stores (16 dimensions x 2 rows)
// fall in 32 banks at most twice each for 4-byte elements.
template <class T>
__host__ __device__ constexpr int stage_ld(int rows) {
    return rows + (sizeof(T) >= 4 ? int(16 / sizeof(T)) : 16);
}

template <class T>
__host__ __device__ constexpr int64_t stage_bytes(int bm, int bn) {
    return int64_t(kStages) * KB * (stage_ld<T>(bm) + stage_ld<T>(bn)) * int64_t(sizeof(T));
}

// Loads N consecutive elements of shared memory (16-byte aligned when N * size is a
// multiple of 16) into registers with as few instructions as the size allows.
template <class T, int N>
__device__ __forceinline__ void load_vec(const T *p, T (&v)[N]) {
    constexpr int bytes = N * int(sizeof(T));
    constexpr int W = bytes % 16 == 0 ? 16 : bytes % 8 == 0 ? 8 : int(sizeof(T)), per = W / int(sizeof(T));
    struct alignas(W) Chunk {
        T x[per];
    };
#pragma unroll
    for (int q = 0; q < N / per; ++q) {
        const Chunk c = reinterpret_cast<const Chunk *>(p)[q];
#pragma unroll
        for (int e = 0; e < per; ++e) v[q * per + e] = c.x[e];
    }
}

__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
__device__ __forceinline__ void copy16_async(void *dst, const void *src) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src));
}

// The operands as the kernel reads them: X transposed (dimension-major, XT[k * ldt + r])
// and zero-padded to `ldt` rows (whole 16-byte chunks of rows) and `dpad` dimensions (a
// multiple of KB), so that staging a slice is whole 16-byte copies with no bounds.
template <class T>
__global__ void transpose_padded(const T *__restrict__ X, int64_t ldx, int64_t n, int64_t d, T *__restrict__ XT,
                                 int64_t ldt, int64_t dpad) {
    __shared__ T tile[32][33];
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t k0 = int64_t(blockIdx.y) * 32; k0 < dpad; k0 += int64_t(gridDim.y) * 32)
        for (int64_t r0 = int64_t(blockIdx.x) * 32; r0 < ldt; r0 += int64_t(gridDim.x) * 32) {
            for (int j = ty; j < 32; j += blockDim.y) {
                const int64_t r = r0 + j, k = k0 + tx;
                tile[j][tx] = r < n && k < d ? X[r * ldx + k] : T(0);
            }
            __syncthreads();
            for (int j = ty; j < 32; j += blockDim.y) {
                const int64_t k = k0 + j, r = r0 + tx;
                if (k < dpad && r < ldt) XT[k * ldt + r] = tile[tx][j];
            }
            __syncthreads();
        }
}

// Stages dimensions [k0, k0 + KB) of the rows [r0, r0 + rows) of a transposed operand
// into S[k * ld + r]: rows / V 16-byte chunks a dimension (V = 16 / sizeof(T) rows each).
// Thread t copies chunk t % cpr of dimensions t / cpr, t / cpr + kstep, ... (kstep =
// threads / cpr); its source and destination are fixed for the tile (`src` points at
// dimension k0 + t / cpr), so a copy costs a pointer step. Trips > 0: the caller knows
// every thread copies exactly Trips chunks.
template <int Trips, class T>
__device__ __forceinline__ void stage(T *dst, int ld, const T *src, int64_t ldt, int first_k, int kstep) {
#pragma unroll
    for (int q = 0, k = first_k; Trips > 0 ? q < Trips : k < KB; ++q, k += kstep)
        copy16_async(dst + k * ld, src + q * int64_t(kstep) * ldt);
}

// Metrics whose kernel has the long-sums form (pairwise_kernel): three levels, a plain
// number as accumulator; plans take it for d past one group of slices.
template <class M>
constexpr bool kHasLongSums = !M::reorderable && std::is_arithmetic<typename M::acc_t>::value;
constexpr int64_t kGroupDims = int64_t(kSliceDims) * kSlicesPerGroup;

template <class M, class O, bool LongSums>
__global__ void __launch_bounds__(kMaxWarps * 32, kMinBlocks)
pairwise_kernel(const M m, const typename M::in_t *__restrict__ AT, int64_t ldta,
                const typename M::in_t *__restrict__ BT, int64_t ldtb, int64_t n1, int64_t n2, int64_t d,
                const O out, int64_t tiles_j, int64_t ntiles) {
    using T = typename M::in_t;
    using acc_t = typename M::acc_t;
    constexpr int TM = Tile<M>::TM, TN = Tile<M>::TN, BN = TX * TN, V = 16 / int(sizeof(T));
    constexpr bool kLevels = !M::reorderable;
    // A's chunks: BM / V = 2 w TM / V a dimension, so the 32 w threads cover
    // KA = 256 / (TM sizeof(T)) dimensions a round, KB / KA rounds.
    constexpr int KA = 256 / (TM * int(sizeof(T))), CB = BN / V;
    static_assert(KA <= KB && KB % KA == 0 && (CB & (CB - 1)) == 0, "whole rounds of 16-byte chunks");
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ typename O::Shared osh;

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * TX + tx;
    const int nthreads = TX * blockDim.y;
    const int BM = TM * blockDim.y, CA = BM / V;
    const int lda_s = stage_ld<T>(BM), ldb_s = stage_ld<T>(BN);
    // Two buffers, each a KB x BM stage of A then a KB x BN stage of B.
    const int buf_elems = KB * (lda_s + ldb_s);
    T *const stage0 = reinterpret_cast<T *>(smem);
    const int64_t nstages = (d + KB - 1) / KB;
    constexpr int kStagesPerSlice = kSliceDims / KB, kStagesPerGroup = kStagesPerSlice * kSlicesPerGroup;
    // This thread's chunks: A's chunk tid % CA of dimensions tid / CA + KA q; B's chunk
    // tid % CB of dimensions tid / CB + (nthreads / CB) q.
    const int ka = tid / CA, kb = tid / CB, kb_step = nthreads / CB;
    const int a_row = (tid - ka * CA) * V, b_row = (tid % CB) * V;

    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t i0 = t / tiles_j * BM, j0 = t % tiles_j * BN;
        acc_t tot[TM][TN], mid[TM][TN], part[TM][TN];
        // Long sums (LongSums: d past one group of 32 slices, three levels) keep the totals
        // of the group sums in (local) memory, read and written once a group, leaving
        // their registers to the fold: ptxas then keeps the steps' temporaries apart
        // instead of spilling or chaining them (tools/gpu-notes.md run 162: LP p = 2.5
        // 113 -> 103 ms, L1 float64 34.8 -> 33.1, L1 float d = 40000 14.7 -> 14.4).
        // (volatile: the compiler would otherwise keep them in registers.) With one group
        // the memory costs more than it gives (run 160: d = 128 3.0 -> 3.2 ms).
        constexpr bool kTotInMemory = LongSums && kLevels;
        volatile acc_t tot_mem[kTotInMemory ? TM * TN : 1];
#pragma unroll
        for (int a = 0; a < TM; ++a)
#pragma unroll
            for (int b = 0; b < TN; ++b) {
                tot[a][b] = mid[a][b] = part[a][b] = m.init();
                if constexpr (kTotInMemory) tot_mem[a * TN + b] = m.init();
            }

        // Dimension k0 of the thread's first chunks; one step of KB dimensions a stage.
        // (The copies hold whole 16-byte chunks of rows, not whole tiles: rows past ldt
        // read the next dimension's first rows, or zeros past the last dimension, for
        // rows that are never written out.)
        const T *a_src = AT + int64_t(ka) * ldta + i0 + a_row;
        const T *b_src = BT + int64_t(kb) * ldtb + j0 + b_row;
        const int64_t a_step = KB * ldta, b_step = KB * ldtb;
        auto stage_both = [&](T *dst) {
            stage<KB / KA>(dst + a_row, lda_s, a_src, ldta, ka, KA);
            stage<0>(dst + KB * lda_s + b_row, ldb_s, b_src, ldtb, kb, kb_step);
            a_src += a_step;
            b_src += b_step;
        };
        // Stage st + 1 is copied while stage st is folded. Two equivalent forms of the
        // double buffer: ptxas schedules 8-byte elements better with the buffer index as a
        // counter and a group committed every round (empty after the last stage), the
        // others with the parity of st (H100, tools/gpu-notes.md run 64: L1 f64 36.3 ->
        // 35.5 ms with the counter, L1 f32 17.7 -> 16.6 ms with the parity).
        constexpr bool kCounter = sizeof(T) == 8;
        stage_both(stage0);
        async_commit();
        int counter = 0;
        for (int64_t st = 0; st < nstages; ++st) {
            const int buf = kCounter ? counter : int(st & 1);
            const bool more = st + 1 < nstages;
            if (more) stage_both(stage0 + (buf ^ 1) * buf_elems);
            if (kCounter || more) {
                async_commit();
                async_wait<1>();
            } else {
                async_wait<0>();
            }
            __syncthreads();
            // Fold the stage: dimensions past d were staged as zeros, which add nothing
            // (every metric's step of (0, 0) leaves its accumulator unchanged).
            const T *a_s = stage0 + buf * buf_elems + ty * TM, *b_s = stage0 + buf * buf_elems + KB * lda_s + tx * TN;
#pragma unroll 4
            for (int k = 0; k < KB; ++k) {
                T av[TM], bv[TN];
                load_vec(a_s + k * lda_s, av);
                load_vec(b_s + k * ldb_s, bv);
#pragma unroll
                for (int a = 0; a < TM; ++a)
#pragma unroll
                    for (int b = 0; b < TN; ++b) m.step(kLevels ? part[a][b] : tot[a][b], av[a], bv[b]);
            }
            if constexpr (kLevels) {
                const bool slice_end = (st + 1) % kStagesPerSlice == 0 || st + 1 == nstages;
                const bool group_end = (st + 1) % kStagesPerGroup == 0 || st + 1 == nstages;
                if (slice_end) {
#pragma unroll
                    for (int a = 0; a < TM; ++a)
#pragma unroll
                        for (int b = 0; b < TN; ++b) {
                            m.merge(mid[a][b], part[a][b]);
                            part[a][b] = m.init();
                        }
                }
                if (group_end) {
#pragma unroll
                    for (int a = 0; a < TM; ++a)
#pragma unroll
                        for (int b = 0; b < TN; ++b) {
                            if constexpr (kTotInMemory) {
                                acc_t g = tot_mem[a * TN + b];
                                m.merge(g, mid[a][b]);
                                tot_mem[a * TN + b] = g;
                            } else {
                                m.merge(tot[a][b], mid[a][b]);
                            }
                            mid[a][b] = m.init();
                        }
                }
            }
            __syncthreads();  // the buffer is restaged by the next iteration's copy
            counter ^= 1;
        }

        out.begin(osh, tid, nthreads);
        __syncthreads();
#pragma unroll
        for (int a = 0; a < TM; ++a)
#pragma unroll
            for (int b = 0; b < TN; ++b) {
                const int64_t i = i0 + ty * TM + a, j = j0 + tx * TN + b;
                if (i < n1 && j < n2) {
                    if constexpr (kTotInMemory) {
                        out.emit(osh, i, j, m.finish(acc_t(tot_mem[a * TN + b])));
                    } else {
                        out.emit(osh, i, j, m.finish(tot[a][b]));
                    }
                }
            }
        __syncthreads();
        out.end(osh, tid, nthreads);
    }
}

// COSINE through the GEMM: the squared norms of the rows (one warp a row, lanes
// striding the dimensions, then a fixed shuffle tree), and the finish over D = A B^T,
// which is metric::Cosine's own finish on (a.b, |a|^2, |b|^2).
template <class T>
__global__ void row_norms(const T *__restrict__ X, int64_t ldx, int64_t n, int64_t d, T *__restrict__ out) {
    const int lane = threadIdx.x % 32;
    for (int64_t i = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32; i < n;
         i += int64_t(gridDim.x) * blockDim.x / 32) {
        T s = 0;
        for (int64_t k = lane; k < d; k += 32) s += X[i * ldx + k] * X[i * ldx + k];
#pragma unroll
        for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) out[i] = s;
    }
}

template <class T>
__global__ void cosine_finish(T *__restrict__ D, int64_t ldd, int64_t n1, int64_t n2, const T *__restrict__ na,
                              const T *__restrict__ nb) {
    const metric::Cosine<T> m;
    for (int64_t i = blockIdx.y; i < n1; i += gridDim.y)
        for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n2; j += int64_t(gridDim.x) * blockDim.x)
            D[i * ldd + j] = m.finish({D[i * ldd + j], na[i], nb[j]});
}

// Float L2 and SQEUCLIDEAN through a double GEMM (FP64 tensor cores on sm_80 and later):
// rows centred on A's first row in double (one rounding each: a difference of two floats
// is exact in double only where their exponents lie within some 29 binades), s = |a|^2 +
// |b|^2 - 2 a.b in double, whose error is at most (2d + 16) u_d (|a|^2 + |b|^2) for any
// summation order (u_d = 2^-53; the GEMM's and the norms' gamma_d, the two additions, the
// centring's roundings: together they perturb |a - b|^2 by at most 4 u_d (|a|^2 +
// |b|^2)). Where that bound is above 2^-30 s (tau below), or any of the three is not
// finite, the pair is recomputed directly in double from the float rows (d u_d <= 2^-31
// for d <= 2^22). So s is within 2^-30 of the exact sum of squares, and the one rounding
// to float (after the square root for L2) makes the result's relative error at most
// 2^-24 + 2^-30.
constexpr int64_t kGemmL2MaxDims = int64_t(1) << 22;     // the recomputation's d u_d <= 2^-31
constexpr int64_t kGemmL2Chunk = int64_t(512) << 20;     // bytes of a chunk's centred rows, and of its GEMM output, at most
constexpr int64_t kGemmL2MaxB = int64_t(1) << 30;        // bytes of B in double and its norms, at most

// Y[i][k] = X[i][k] - c[k] in double for k < d, 0 for d <= k < ldy (rows of ldy, a
// multiple of 32 dimensions: aligned rows for the GEMM, whose sums the zeros leave alone).
__global__ void centre_rows(const float *__restrict__ X, int64_t ldx, int64_t n, int64_t d,
                            const float *__restrict__ c, double *__restrict__ Y, int64_t ldy) {
    for (int64_t i = blockIdx.y; i < n; i += gridDim.y)
        for (int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < ldy; k += int64_t(gridDim.x) * blockDim.x)
            Y[i * ldy + k] = k < d ? double(X[i * ldx + k]) - double(c[k]) : 0.0;
}

template <bool Sqrt>
__global__ void l2_finish(float *__restrict__ D, int64_t ldd, int64_t rows, int64_t n2, const double *__restrict__ G,
                          const double *__restrict__ na, const double *__restrict__ nb, double tau,
                          const float *__restrict__ A, int64_t lda, const float *__restrict__ B, int64_t ldb,
                          int64_t d) {
    for (int64_t i = blockIdx.y; i < rows; i += gridDim.y)
        for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n2; j += int64_t(gridDim.x) * blockDim.x) {
            const double q = na[i] + nb[j];
            double s = fma(-2.0, G[i * n2 + j], q);
            if (!(s >= tau * q && q <= DBL_MAX)) {  // uncertain or not finite
                s = 0;
                for (int64_t k = 0; k < d; ++k) {
                    const double t = double(A[i * lda + k]) - double(B[j * ldb + k]);
                    s = fma(t, t, s);
                }
            }
            D[i * ldd + j] = __double2float_rn(Sqrt ? sqrt(s) : s);
        }
}

template <class M>
using FullKernel = output::FullMatrix<typename M::out_t>;

// The form of the tile kernel a problem runs (the plan's attributes and the launch take
// the same): long sums past one group of slices, where the metric has that form.
template <class M, class O>
auto tile_kernel(const Problem &pb) {
    if constexpr (kHasLongSums<M>)
        if (pb.d > kGroupDims) return pairwise_kernel<M, O, true>;
    return pairwise_kernel<M, O, false>;
}

struct Kernel {
    const void *fn = nullptr;
    size_t elem = 0;  // bytes per input element
    int tm = 0, tn = 0;
    int min_warps = 0;  // the reuse floor: the smallest block whose tile is square
};

int64_t dynamic_shared(const Kernel &k, int warps);

Kernel kernel_for(const Problem &pb) {
    Kernel k;
    dispatch(pb, [&](auto m) {
        using M = decltype(m);
        k.fn = reinterpret_cast<const void *>(tile_kernel<M, FullKernel<M>>(pb));
        k.elem = sizeof(typename M::in_t);
        k.tm = Tile<M>::TM;
        k.tn = Tile<M>::TN;
    });
    // BM = 2 w TM >= 2 BN = 32 TN, or the largest block: each staged value then serves
    // BN or more outputs (staging is about 1 copy per 85 steps at 128 x 64).
    k.min_warps = std::min(kMaxWarps, std::max(1, (2 * TX * k.tn + 2 * k.tm - 1) / (2 * k.tm)));
    // The largest block may need more than the default 48 KiB of dynamic shared memory:
    // opt in on the current device, so that CUDA's occupancy API and the launch see the
    // limit the estimator assumes.
    const int64_t most = dynamic_shared(k, kMaxWarps);
    if (most > 48 * 1024)
        check(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(most)),
              "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    return k;
}

int64_t dynamic_shared(const Kernel &k, int warps) {
    const int bm = 2 * warps * k.tm, bn = TX * k.tn;
    switch (k.elem) {
    case 1: return stage_bytes<uint8_t>(bm, bn);
    case 4: return stage_bytes<float>(bm, bn);
    default: return stage_bytes<double>(bm, bn);
    }
}

int64_t tile_count(const Problem &pb, const Kernel &k, int warps, int64_t *tiles_j) {
    *tiles_j = (pb.n2 + TX * k.tn - 1) / (TX * k.tn);
    const int64_t rows = int64_t(2) * warps * k.tm;
    return (pb.n1 + rows - 1) / rows * *tiles_j;
}

}  // namespace

KernelAttributes kernel_attributes(const Problem &pb) {
    const Kernel k = kernel_for(pb);
    cudaFuncAttributes fa{};
    check(cudaFuncGetAttributes(&fa, k.fn), "cudaFuncGetAttributes");
    KernelAttributes ka;
    ka.regs_per_thread = fa.numRegs;
    // The unit of growth is a warp: two more rows of threads, 2 TM more rows of A staged.
    ka.shared_fixed = static_cast<int64_t>(fa.sharedSizeBytes) + dynamic_shared(k, 0);
    ka.threads_per_unit = 32;
    ka.shared_per_unit = dynamic_shared(k, 1) - dynamic_shared(k, 0);
    ka.max_threads_per_block = fa.maxThreadsPerBlock;
    return ka;
}

int cuda_blocks_per_sm(const Problem &pb, int warps) {
    const Kernel k = kernel_for(pb);
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.fn, warps * 32, size_t(dynamic_shared(k, warps))),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
}

CudaConfig plan_cuda(const Problem &pb, int device, double occupancy_target, bool tf32) {
    require_device(device);
    DeviceScope scope(device);
    const DeviceLimits limits = device_limits(device);
    const KernelAttributes ka = kernel_attributes(pb);
    const Kernel k = kernel_for(pb);
    CudaConfig cfg;
    cfg.device = device;
    cfg.device_name = limits.name;
    cfg.cc_major = limits.cc_major;
    cfg.cc_minor = limits.cc_minor;
    cfg.sm_count = limits.sm_count;
    cfg.tm = k.tm;
    cfg.tn = k.tn;
    cfg.ds = kSliceDims;
    cfg.regs_per_thread = ka.regs_per_thread;
    try {
        cfg.choice = choose_block_size(limits, ka, occupancy_target);
    } catch (const std::invalid_argument &e) {
        throw Error(APAIRS_ERROR_UNSUPPORTED,
                    fmt::format("no launch configuration fits {}: {}", limits.name, e.what()));
    }
    // The estimator's smallest block may be a few rows of threads; the register tile
    // wants a square tile for reuse, so the block grows to the floor when below it.
    // It never drops below an occupancy target the caller set and the device can reach.
    const int floor_threads = 32 * k.min_warps;
    if (cfg.choice.chosen.block_threads < floor_threads) {
        const Occupancy o = occupancy_for(limits, ka, floor_threads);
        const double target = cfg.choice.target;
        if (o.blocks_per_sm > 0 && !(target > 0 && target <= cfg.choice.max_reachable && o.occupancy < target)) {
            cfg.choice.reason += fmt::format(
                "; raised to {} threads so that the tile ({}x{}) is twice as tall as wide or as large as a block "
                "may be, each staged value serving {}+ outputs ({:.0f}% occupancy)",
                floor_threads, 2 * k.min_warps * k.tm, TX * k.tn, TX * k.tn, 100 * o.occupancy);
            cfg.choice.chosen = o;
        }
    }
    cfg.warps = cfg.choice.chosen.block_threads / 32;
    cfg.bm = 2 * cfg.warps * k.tm;
    cfg.bn = TX * k.tn;
    cfg.dynamic_shared = dynamic_shared(k, cfg.warps);
    cfg.cuda_blocks_per_sm = cuda_blocks_per_sm(pb, cfg.warps);
    cfg.ntiles = tile_count(pb, k, cfg.warps, &cfg.tiles_j);
    cfg.grid = std::min<int64_t>(cfg.ntiles, 0x7fffffff);
    // DOT is a GEMM, D = A B^T, and the vendor's is the fastest in float arithmetic;
    // COSINE is that GEMM, the rows' squared norms and its finish.
    if ((pb.metric == APAIRS_METRIC_DOT || pb.metric == APAIRS_METRIC_COSINE) && pb.dtype != APAIRS_DTYPE_U8) {
        if (cuda::Gemm::fits(pb.n1, pb.n2, pb.d, pb.lda, pb.ldb, pb.ldd))
            cfg.gemm = cuda::Gemm::create(device, &cfg.gemm_unavailable, tf32 && pb.dtype == APAIRS_DTYPE_F32);
        else
            cfg.gemm_unavailable = "a size beyond cuBLAS's 32-bit arguments";
    }
    // Float L2 and SQEUCLIDEAN: a double GEMM (centred), chunks of rows of A at a time.
    if ((pb.metric == APAIRS_METRIC_L2 || pb.metric == APAIRS_METRIC_SQEUCLIDEAN) && pb.dtype == APAIRS_DTYPE_F32 &&
        pb.d >= kGemmL2MinDims) {
        // Chunks of equal rows (one where both the centred rows, of dp dimensions: d
        // rounded up to 32, zeros past d, and the GEMM's output fit kGemmL2Chunk).
        const int64_t dp = (pb.d + 31) / 32 * 32;
        const int64_t most =
            std::max<int64_t>(1, std::min({pb.n1, kGemmL2Chunk / (8 * pb.n2), kGemmL2Chunk / (8 * (dp + 1))}));
        const int64_t chunks = (pb.n1 + most - 1) / most;
        cfg.l2_rows = (pb.n1 + chunks - 1) / chunks;
        if (pb.d > kGemmL2MaxDims) cfg.gemm_unavailable = "d above 2^22 (the recomputation's bound)";
        else if (pb.n2 > kGemmL2MaxB / (8 * (dp + 1)))  // (the buffer wb below: n2 (dp + 1) doubles)
            cfg.gemm_unavailable = "B in double, with its norms, above 1 GiB";
        else if (!cuda::Gemm::fits(cfg.l2_rows, pb.n2, dp, dp, dp, pb.n2))
            cfg.gemm_unavailable = "a size beyond cuBLAS's 32-bit arguments";
        else cfg.gemm = cuda::Gemm::create(device, &cfg.gemm_unavailable);
        if (!cfg.gemm) cfg.l2_rows = 0;
    }
    return cfg;
}

void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream_ptr, const void *A, const void *B,
                  void *D) {
    DeviceScope scope(cfg.device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    const int64_t in = int64_t(pb.in_size()), out = int64_t(pb.out_size());

    // Device-resident arrays are used in place; host arrays are staged, packed. B = A
    // (same rows, same leading dimension) is staged once.
    Staging st(cfg.device, stream);
    const int a_slot = st.in(A, pb.n1, pb.d * in, pb.lda * in, "A");
    const int b_slot = st.in(B, pb.n2, pb.d * in, pb.ldb * in, "B");
    const int d_slot = st.out(D, pb.n1, pb.n2 * out, pb.ldd * out, "D");
    st.stage();
    const Staging::View a = st.view(a_slot), b = st.view(b_slot), dd = st.view(d_slot);

    if (cfg.gemm && cfg.l2_rows > 0) {
        // L2 / SQEUCLIDEAN: B centred once, then chunks of l2_rows rows of A: centred, their
        // norms, the GEMM, the finish. The buffers first, so that a failed allocation
        // queues nothing.
        const int64_t n2 = pb.n2, d = pb.d, R = cfg.l2_rows, dp = (d + 31) / 32 * 32;
        StreamBuffer wb(size_t(n2 * dp + n2) * 8, stream), wa(size_t(R * dp + R) * 8, stream),
            wg(size_t(R * n2) * 8, stream);
        double *Bc = static_cast<double *>(wb.get()), *nb = Bc + n2 * dp;
        double *Ac = static_cast<double *>(wa.get()), *na = Ac + R * dp;
        double *G = static_cast<double *>(wg.get());
        const float *Af = static_cast<const float *>(a.ptr), *Bf = static_cast<const float *>(b.ptr);
        const int64_t lda = a.pitch / in, ldb = b.pitch / in, ldd = dd.pitch / out;
        const double tau = double(2 * d + 16) * std::ldexp(1.0, -53 + 30);
        auto rows_grid = [&](int64_t n) {
            return dim3(unsigned(std::min<int64_t>((dp + 255) / 256, 64)), unsigned(std::min<int64_t>(n, 65535)));
        };
        auto norms_grid = [](int64_t n) { return dim3(unsigned(std::min<int64_t>((n + 7) / 8, 65535))); };
        launch("L2 GEMM: centring kernels", centre_rows, rows_grid(n2), 256, 0, stream, Bf, ldb, n2, d, Af, Bc, dp);
        launch("L2 GEMM: centring kernels", row_norms<double>, norms_grid(n2), 256, 0, stream, Bc, dp, n2, d, nb);
        for (int64_t i0 = 0; i0 < pb.n1; i0 += R) {
            const int64_t rows = std::min(R, pb.n1 - i0);
            launch("L2 GEMM: centring kernels", centre_rows, rows_grid(rows), 256, 0, stream, Af + i0 * lda, lda, rows,
                   d, Af, Ac, dp);
            launch("L2 GEMM: centring kernels", row_norms<double>, norms_grid(rows), 256, 0, stream, Ac, dp, rows, d,
                   na);
            cfg.gemm->abt(stream, 8, rows, n2, dp, Ac, dp, Bc, dp, G, n2);
            const dim3 grid(unsigned(std::min<int64_t>((n2 + 255) / 256, 64)), unsigned(std::min<int64_t>(rows, 65535)));
            float *Dc = static_cast<float *>(dd.ptr) + i0 * ldd;
            launch("L2 GEMM: finish kernel", pb.metric == APAIRS_METRIC_L2 ? l2_finish<true> : l2_finish<false>, grid,
                   256, 0, stream, Dc, ldd, rows, n2, G, na, nb, tau, Af + i0 * lda, lda, Bf, ldb, d);
        }
        st.finish();
        return;
    }
    if (cfg.gemm) {
        // COSINE's norms first (their buffers before the GEMM, so that a failed
        // allocation queues nothing).
        std::unique_ptr<StreamBuffer> norms;
        if (pb.metric == APAIRS_METRIC_COSINE) norms = std::make_unique<StreamBuffer>(size_t((pb.n1 + pb.n2) * in), stream);
        cfg.gemm->abt(stream, int(in), pb.n1, pb.n2, pb.d, a.ptr, a.pitch / in, b.ptr, b.pitch / in, dd.ptr,
                      dd.pitch / out);
        if (norms) {
            auto run = [&](auto zero) {
                using T = decltype(zero);
                T *na = static_cast<T *>(norms->get()), *nb = na + pb.n1;
                const unsigned rows_blocks = unsigned(std::min<int64_t>((std::max(pb.n1, pb.n2) + 7) / 8, 65535));
                launch("cosine kernels", row_norms<T>, rows_blocks, 256, 0, stream, static_cast<const T *>(a.ptr),
                       a.pitch / in, pb.n1, pb.d, na);
                launch("cosine kernels", row_norms<T>, rows_blocks, 256, 0, stream, static_cast<const T *>(b.ptr),
                       b.pitch / in, pb.n2, pb.d, nb);
                const dim3 grid(unsigned(std::min<int64_t>((pb.n2 + 255) / 256, 64)),
                                unsigned(std::min<int64_t>(pb.n1, 65535)));
                launch("cosine kernels", cosine_finish<T>, grid, 256, 0, stream, static_cast<T *>(dd.ptr),
                       dd.pitch / out, pb.n1, pb.n2, na, nb);
            };
            if (pb.dtype == APAIRS_DTYPE_F32) run(0.0f); else run(0.0);
        }
        st.finish();
        return;
    }
    // The tile kernel reads A and B transposed and zero-padded (transpose_padded), from
    // scratch allocated in stream order: one copy of each (of A alone when B is A), or,
    // where that would pass cfg.scratch_bytes, chunks of rows of A against chunks of rows
    // of B (the same sums in the same order: the same bits), whole tiles where the
    // budget holds a tile's rows, else whole 16-byte chunks of rows.
    auto round_up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
    const int64_t V = 16 / in, dpad = round_up(pb.d, KB), row_bytes = dpad * in;
    const bool same = a.ptr == b.ptr && a.pitch == b.pitch && pb.n1 == pb.n2;
    const int64_t fit = cfg.scratch_bytes / row_bytes;  // rows the budget holds
    int64_t ca = pb.n1, cb = pb.n2;  // rows of A and of B a chunk
    bool share = same;               // one copy serves A and B
    if ((same ? round_up(pb.n1, V) : round_up(pb.n1, V) + round_up(pb.n2, V)) > fit) {
        auto chunk = [&](int64_t tile) { return fit / 2 >= tile ? fit / 2 / tile * tile : std::max(V, fit / 2 / V * V); };
        ca = chunk(cfg.bm);
        cb = chunk(cfg.bn);
        share = false;
    }
    const int64_t ldta = round_up(std::min(ca, pb.n1), V), ldtb = share ? ldta : round_up(std::min(cb, pb.n2), V);
    // A tile past a copy's last row reads up to a tile's rows past its end: zeros.
    const int64_t slack = std::max(cfg.bm, cfg.bn) * in, copies = (ldta + (share ? 0 : ldtb)) * row_bytes;
    StreamBuffer wt(size_t(copies + slack), stream);
    check(cudaMemsetAsync(static_cast<char *>(wt.get()) + copies, 0, size_t(slack), stream), "cudaMemsetAsync(slack)");
    const dim3 block(TX, 2 * cfg.warps);
    dispatch(pb, [&](auto m) {
        using M = decltype(m);
        using T = typename M::in_t;
        using O = FullKernel<M>;
        using Out = typename M::out_t;
        T *at = static_cast<T *>(wt.get()), *bt = share ? at : at + ldta * dpad;
        const T *A = static_cast<const T *>(a.ptr), *B = static_cast<const T *>(b.ptr);
        const int64_t lda = a.pitch / in, ldb = b.pitch / in, ldd = dd.pitch / out;
        auto transpose = [&](const T *x, int64_t ldx, int64_t n, T *xt, int64_t ldt) {
            const dim3 tgrid(unsigned(std::min<int64_t>(ldt / 32 + 1, 1024)), unsigned(std::min<int64_t>(dpad / 32, 1024)));
            launch("pairwise transpose launch", transpose_padded<T>, tgrid, dim3(32, 8), 0, stream, x, ldx, n, pb.d, xt,
                   ldt, dpad);
        };
        const bool b_once = !share && cb >= pb.n2;  // B in one chunk: copied once
        if (b_once) transpose(B, ldb, pb.n2, bt, ldtb);
        for (int64_t i0 = 0; i0 < pb.n1; i0 += ca) {
            const int64_t rows = std::min(ca, pb.n1 - i0);
            transpose(A + i0 * lda, lda, rows, at, ldta);
            for (int64_t j0 = 0; j0 < pb.n2; j0 += cb) {
                const int64_t cols = std::min(cb, pb.n2 - j0);
                if (!share && !b_once) transpose(B + j0 * ldb, ldb, cols, bt, ldtb);
                const int64_t tiles_j = (cols + cfg.bn - 1) / cfg.bn, ntiles = (rows + cfg.bm - 1) / cfg.bm * tiles_j;
                const dim3 grid(unsigned(std::min<int64_t>(ntiles, std::min<int64_t>(cfg.grid, 0x7fffffff))));
                launch("pairwise kernel launch", tile_kernel<M, O>(pb), grid, block, size_t(cfg.dynamic_shared), stream,
                       m, at, ldta, bt, ldtb, rows, cols, pb.d, O{static_cast<Out *>(dd.ptr) + i0 * ldd + j0, ldd},
                       tiles_j, ntiles);
            }
        }
    });
    st.finish();
}

}  // namespace apairs::pairwise
