// Two-body CUDA engine (Pitaksiranan, Nouri & Tu, "Efficient 2-body statistics
// computation on GPUs"): points of A held by the threads in registers (d = 3 compiled in:
// one per thread, or two or four in the kernels compiled for one radius or uniform bins;
// any other d reads its row through the cache), the points of B staged a tile at a time
// through shared memory, and the output privatised:
//   counts and histograms  a shared-memory histogram of 32-bit counters per warp (when
//                          the copies fit) or per block, incremented with shared atomics
//                          and flushed into 64-bit global counters with one atomic per
//                          slot before a counter could overflow; histograms too large for
//                          shared memory go straight to the global counters (atomics);
//                          one radius: a per-thread counter in a register, reduced
//                          across the warp per tile;
//   weights                128-bit fixed-point sums (two 64-bit words, carries counted
//                          exactly) in shared memory, flushed the same way;
//   kNN                    a per-thread sorted list of (distance, index): registers for
//                          k <= 32 (unrolled insertion), local memory above.
// AUTO visits only the tiles with j-block >= i-block; a diagonal tile uses the paper's
// balanced pairing: point p of the tile pairs with (p + s) mod S for s = 1 .. S/2 (the last
// step by half of the points), so every thread does the same work and each pair is seen once.
// The caller's outputs are written only by a final one-block kernel (cumulative counts,
// sums rounded to double by rules.hpp's fixed128_to_double, as on the host), so a failed
// call writes nothing.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "cuda/staging.cuh"
#include "twobody/cuda.hpp"
#include "twobody/rules.hpp"

namespace apairs::twobody {
using namespace apairs::cuda;
namespace {

constexpr int TB = 256;       // threads per block of the count / histogram kernel = tile width
constexpr int KT = 128;       // threads per block of the kNN kernel
constexpr int DS = pairwise::kSliceDims;
constexpr int64_t kDefaultShared = 48 * 1024;

// Modes of the reduce kernel's output.
enum Mode : int { kUniform = 0, kEdges = 1, kRadii = 2, kOneRadius = 3 };
// Reduce kernels specialised at compile time for the common cases (the mode and the
// output technique fixed, no weights), so that the per-pair code has no branch on them:
// kFastNone runs the generic kernel (mode, copies and weights read at run time).
// kFastUniformShared reads its edges from shared memory (staged), kFastUniformGlobal
// from global memory (too many to stage).
// kFastUniformLanes: staged edges and one copy of the counters per lane (kLaneCopies).
// The uniform ones come in two kinds: | kFastSquared for L2 (bins in the squared domain);
// float lane kernels | kFastFromZero where rmin <= w / 2: t = (r - rmin) / w >= -1/2 for
// every r >= 0, so that the bin's lower clamp (certain_slot) can go.
enum Fast : int {
    kFastNone = 0, kFastOneRadius = 1, kFastUniformShared = 2, kFastUniformGlobal = 3, kFastUniformLanes = 4,
    kFastSquared = 8, kFastFromZero = 16
};
// Points of A per thread: the compiled kernels (d = 3, no weights) hold two (one radius)
// or four (uniform bins), so that each point of B loaded from shared memory serves as many
// pairs; tiles are TB * rows points wide.
constexpr int rows_of(int fast) {
    return fast == kFastNone ? 1 : fast == kFastOneRadius ? 2 : 4;
}

// Counters: `copies` copies of `slots` counters per block, copy-major (copy q's slot s at
// q * slots + s), except kLaneCopies copies, one per lane of a warp (shared by the
// block's warps), interleaved: lane q's slot s at s * 32 + q, so that a warp's 32
// increments always fall on 32 distinct banks.
constexpr int kLaneCopies = 32;

__device__ __forceinline__ int counter_at(int copies, int slots, int q, int s) {
    return copies == kLaneCopies ? s * kLaneCopies + q : q * slots + s;
}

// Uniform float bins: when a bin taken from the distance is certain (certain_slot).
struct Certain {
    float iw, shift, hi, half;  // half < 0: never certain
};

template <class T>
struct Box {
    T side[3], inv[3];
};

// The distance of (a, b) folded as the host engine does: D > 0 (d = D): a in registers,
// b strided (shared memory, stride TB); D = 0: any d, a and b contiguous rows, slices
// of DS dimensions merged in order.
template <class M, bool P, int D>
__device__ __forceinline__ typename M::out_t distance(const M &m, const Box<typename M::in_t> &box,
                                                      const typename M::in_t *a, const typename M::in_t *b,
                                                      int bstride, int64_t d) {
    using T = typename M::in_t;
    using acc_t = typename M::acc_t;
    acc_t tot = m.init();
    if constexpr (D > 0) {
        acc_t x = m.init();
#pragma unroll
        for (int k = 0; k < D; ++k) {
            if constexpr (P) m.step(x, min_image(a[k] - b[k * bstride], box.side[k], box.inv[k]), T(0));
            else m.step(x, a[k], b[k * bstride]);
        }
        // SqEuclidean's fold is +0 or more, or NaN: merging it into init() (0 + x) gives x
        // itself, an addition the compiler cannot drop on its own (it would for -0).
        if constexpr (std::is_same<M, metric::SqEuclidean<T>>::value) tot = x;
        else m.merge(tot, x);
    } else {  // the pairwise engines' three levels: slices, groups of slices, the total
        acc_t mid = m.init();
        for (int64_t k0 = 0, slice = 1; k0 < d; k0 += DS, ++slice) {
            const int64_t k1 = d - k0 < DS ? d : k0 + DS;
            acc_t x = m.init();
            for (int64_t k = k0; k < k1; ++k) m.step(x, a[k], __ldg(b + k));
            m.merge(mid, x);
            if (slice % pairwise::kSlicesPerGroup == 0 || k1 == d) {
                m.merge(tot, mid);
                mid = m.init();
            }
        }
    }
    return m.finish(tot);
}

// A point of B staged point-major with a stride of 4 (d <= 3): one 16-byte shared load
// for float (two for double) instead of one load per coordinate.
template <class T>
__device__ __forceinline__ void load_point(T (&v)[4], const T *p) {
    if constexpr (std::is_same<T, float>::value) {
        const float4 f = *reinterpret_cast<const float4 *>(p);
        v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
    } else if constexpr (std::is_same<T, double>::value) {
        const double2 a = reinterpret_cast<const double2 *>(p)[0], b = reinterpret_cast<const double2 *>(p)[1];
        v[0] = a.x, v[1] = a.y, v[2] = b.x, v[3] = b.y;
    } else {
#pragma unroll
        for (int k = 0; k < 4; ++k) v[k] = p[k];
    }
}

// The output stage of the count / histogram kernel (apairs::output's begin / emit / end
// shape: per-block scratch in shared memory, flushed to global memory).
template <class V>
struct Reduce {
    int mode;
    int slots;          // counters per copy: nbins + 2, or nradii + 1
    int copies;         // shared copies (kLaneCopies, warps or 1); 0: global atomics
    Certain certain;    // uniform float bins: when a bin from the distance is certain
    int xs;             // histogram edges staged in shared memory (nbins + 4), or 0: read in place
    bool weighted;
    Bins<V> bins;       // histogram edges (device memory)
    const V *radii;     // radius thresholds (device memory), `slots - 1` of them
    unsigned long long *gcount;  // global 64-bit counters, `slots`
    unsigned long long *glo;     // global 128-bit sums: low words
    long long *ghi;              //                      high words

    // b: bins with their edges where the block reads them (shared memory or bins.X).
    __device__ __forceinline__ int slot(const Bins<V> &b, V v) const {
        switch (mode) {
        case kUniform: return b.fix(v, b.guess(v));
        case kEdges: return b.slot(v);
        default: return radius_slot(v, radii, slots - 1);
        }
    }
};

// 128-bit two's-complement accumulation with 64-bit atomics: the carry out of the low
// word is counted exactly, so the sum is exact in any order.
__device__ __forceinline__ void add128(unsigned long long *lo, long long *hi, long long x) {
    const unsigned long long ux = static_cast<unsigned long long>(x);
    const unsigned long long old = atomicAdd(lo, ux);
    const long long carry = (old + ux < old) ? 1 : 0;
    const long long h = (x < 0 ? -1 : 0) + carry;
    if (h) atomicAdd(reinterpret_cast<unsigned long long *>(hi), static_cast<unsigned long long>(h));
}

// A block's shared counters (and 128-bit sums) to zero.
__device__ __forceinline__ void zero_block(int tid, unsigned int *cnt, int ncnt, unsigned long long *slo, long long *shi,
                                           int nsums) {
    for (int e = tid; e < ncnt; e += TB) cnt[e] = 0;
    for (int e = tid; e < nsums; e += TB) slo[e] = 0, shi[e] = 0;
}

// A block's shared counters (summed over the copies) and 128-bit sums into the global
// ones: one 64-bit atomic per slot, the low word's carry counted exactly.
template <class V>
__device__ __forceinline__ void flush_block(const Reduce<V> &out, int tid, const unsigned int *cnt,
                                            const unsigned long long *slo, const long long *shi, bool wshared) {
    for (int s = tid; s < out.slots; s += TB) {
        unsigned long long c = 0;
        for (int q = 0; q < out.copies; ++q) c += cnt[counter_at(out.copies, out.slots, q, s)];
        if (c) atomicAdd(out.gcount + s, c);
        if (wshared && (slo[s] | static_cast<unsigned long long>(shi[s]))) {
            const unsigned long long old = atomicAdd(out.glo + s, slo[s]);
            const long long h = shi[s] + ((old + slo[s] < old) ? 1 : 0);
            if (h) atomicAdd(reinterpret_cast<unsigned long long *>(out.ghi + s), static_cast<unsigned long long>(h));
        }
    }
}

// The slot of v for uniform bins: for float, taken from t = (r - rmin) / w where that is
// certain, else fixed against the edges (reading them). r: the distance, or in the
// squared domain sqrt.approx.ftz(v), one MUFU.SQRT (the CUDA guide's sqrtf without
// -prec-sqrt: 1 ulp on compute capability 5.2 and later, 3 before, so within 3.5 ulp, 7 u,
// of the rounded square root; rel = 8 in bin_margin). A subnormal v is flushed to 0: r =
// 0 where the true root is below 2^-63, which gives the true slot where rmin = 0 (u = -1/2
// exactly: never certain) or rmin >= 2^-60 (the underflow slot; the host enables the test
// only then). In the kernel u = t - 1/2 = fma(r, iw, shift) is clamped to [-1, nbins]
// (outside, the slot is 0 or nbins + 1 however large the error; NaN stays NaN; the lower
// clamp is dropped where shift >= -1, kFastFromZero), and y = u + 1.5 * 2^23 holds
// rint(u) = floor(t) in its low bits: no conversion instruction. The slot floor(t) + 1 is
// certain when |u - rint(u)| <= half, half = 1/2 - bin_margin's largest margin over |t| <=
// nbins + 1 (rules.hpp): then t lies in (floor(t) + margin, floor(t) + 1 - margin).
__device__ __forceinline__ float sqrt_ftz(float x) {
    float y;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}
__device__ __forceinline__ float min_nan(float a, float b) {  // NaN if either is NaN
#if __CUDA_ARCH__ >= 800
    float y;
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
    return y;
#else
    return a > b || b != b ? b : a;
#endif
}
__device__ __forceinline__ float max_nan(float a, float b) {  // NaN if either is NaN
#if __CUDA_ARCH__ >= 800
    float y;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(y) : "f"(a), "f"(b));
    return y;
#else
    return a < b || b != b ? b : a;
#endif
}

// sb = the slot + kSlotBias (the bias is the magic number's bits: y's bits need no
// correction), and the return value |u - rint(u)|: the bin is certain where it is <=
// c.half (NaN or +inf: never). Squared: v is a sum of squares.
constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
constexpr int kSlotBias = 0x4B400000 - 1;  // the bits of kMagic, less 1
template <bool Squared, bool FromZero, class V>
__device__ __forceinline__ float certain_slot(const Certain &c, V v, int &sb) {
    if constexpr (std::is_same<V, float>::value) {
        const float r = Squared ? sqrt_ftz(v) : v;
        float u = fmaf(r, c.iw, c.shift);
        u = min_nan(u, c.hi);
        if (!FromZero) u = u < -1.0f ? -1.0f : u;  // keeps a NaN
        const float y = u + kMagic;
        sb = __float_as_int(y);
        return fabsf(u - (y - kMagic));
    }
    sb = 0;
    return __int_as_float(0x7f800000);
}

// (The compiled kernels are told they run 3 blocks an SM: the compiler would otherwise keep
// their registers for 6 and spill the tile's addresses in the loop; at 4, it rebuilds
// them in the loop. Run 41: 3 blocks 1.7 % faster than 4.)
template <class M, bool P, int D, int F>
__global__ void __launch_bounds__(TB, F == kFastNone ? 1 : 3)
reduce_kernel(const M m, const Box<typename M::in_t> box, const typename M::in_t *__restrict__ A, int64_t lda,
              const typename M::in_t *__restrict__ B, int64_t ldb, const double *__restrict__ wa,
              const double *__restrict__ wb, int64_t n1, int64_t n2, int64_t d, bool autopairs, int64_t tiles_j,
              int64_t ntiles, int64_t flush_tiles, const Reduce<typename M::out_t> out) {
    using T = typename M::in_t;
    using V = typename M::out_t;
    extern __shared__ __align__(16) unsigned char smem[];
    const int tid = threadIdx.x, warp = tid / 32;
    constexpr int R = rows_of(F), S = TB * R;  // points of A per thread, tile width
    // The mode, and whether there are weights, known at compile time in the fast kernels.
    constexpr int FK = F & ~(kFastSquared | kFastFromZero);
    constexpr bool fast_uniform = FK == kFastUniformShared || FK == kFastUniformGlobal || FK == kFastUniformLanes;
    const int mode = F == kFastOneRadius ? int(kOneRadius) : fast_uniform ? int(kUniform) : out.mode;
    const bool weighted = F == kFastNone && out.weighted;
    // Shared memory: B's tile (TB points of stride 4), its weights, the counters, the
    // 128-bit sums, the edges.
    T *Bs = reinterpret_cast<T *>(smem);
    double *Ws = reinterpret_cast<double *>(smem + ((D > 0 ? 4 : 0) * S * sizeof(T) + 15) / 16 * 16);
    // Weight sums in shared memory only with shared counters (global mode: global atomics).
    const bool wshared = weighted && out.copies > 0;
    unsigned long long *slo = reinterpret_cast<unsigned long long *>(Ws + (weighted ? S : 0));
    long long *shi = reinterpret_cast<long long *>(slo + (wshared ? out.slots : 0));
    unsigned int *cnt = reinterpret_cast<unsigned int *>(shi + (wshared ? out.slots : 0));
    const int ncnt = out.copies * out.slots;
    // The histogram's edges: staged after the counters (8-byte aligned) when they fit.
    V *Xs = reinterpret_cast<V *>(reinterpret_cast<uintptr_t>(cnt + ncnt + 1) & ~uintptr_t(7));
    Bins<V> bins = out.bins;
    if (FK == kFastUniformShared || FK == kFastUniformLanes || (F == kFastNone && out.xs)) {
        for (int e = tid; e < out.xs; e += TB) Xs[e] = out.bins.X[e];
        bins.X = Xs;
    }
    const V r0 = mode == kOneRadius ? out.radii[0] : V(0);
    // This warp's (or lane's) copy of the counters in shared memory: slot s at mycnt[s * cs].
    const bool lanes = FK == kFastUniformLanes || (F == kFastNone && out.copies == kLaneCopies);
    unsigned int *mycnt = lanes ? cnt + (tid & 31) : cnt + (out.copies > 1 ? warp : 0) * out.slots;
    const int cs = lanes ? kLaneCopies : 1;
    // Uniform bins: the shared-memory address of the counter of a biased slot sb
    // (certain_slot) is sb * 4 * cs + cbase, in 32-bit arithmetic (modulo 2^32).
    const unsigned cbase = unsigned(__cvta_generic_to_shared(mycnt)) - unsigned(kSlotBias) * 4u * unsigned(cs);

    unsigned int mine = 0;  // kOneRadius: this thread's pairs within the radius
    auto flush_mine = [&] {
        unsigned int w = mine;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) w += __shfl_xor_sync(0xffffffffu, w, o);
        if ((tid & 31) == 0 && w) {
            if (out.copies) atomicAdd(cnt + 0, w);
            else atomicAdd(out.gcount, static_cast<unsigned long long>(w));
        }
        mine = 0;
    };
    // Uniform bins (fast kernels): G distances, one branch to the edges for all of them
    // (taken where any bin is uncertain), then G shared atomics.
    auto emit_uniform = [&](auto &v) {
        constexpr int G = sizeof(v) / sizeof(v[0]);
        int sb[G];
        float e[G], most = 0.0f;
#pragma unroll
        for (int g = 0; g < G; ++g) {
            e[g] = certain_slot<(F & kFastSquared) != 0, (F & kFastFromZero) != 0>(out.certain, v[g], sb[g]);
            most = g == 0 ? e[g] : max_nan(most, e[g]);
        }
        if (!(most <= out.certain.half)) {
#pragma unroll
            for (int g = 0; g < G; ++g)
                if (!(e[g] <= out.certain.half)) sb[g] = bins.fix(v[g], bins.guess(v[g])) + kSlotBias;
        }
#pragma unroll
        for (int g = 0; g < G; ++g)
            asm volatile("red.shared.add.u32 [%0], 1;" ::"r"(unsigned(sb[g]) * 4u * unsigned(cs) + cbase));
    };
    auto emit = [&](V v, double wi, double wj) {
        if (mode == kOneRadius) {
            mine += (v <= r0) ? 1u : 0u;
            return;
        }
        if (fast_uniform) {
            V g[1] = {v};
            emit_uniform(g);
            return;
        }
        const int s = out.slot(bins, v);
        if (out.copies) atomicAdd(mycnt + s * cs, 1u);
        else atomicAdd(out.gcount + s, 1ull);
        if (wshared) add128(slo + s, shi + s, fixed_weight(wi, wj));
        else if (weighted) add128(out.glo + s, out.ghi + s, fixed_weight(wi, wj));
    };

    zero_block(tid, cnt, ncnt, slo, shi, wshared ? out.slots : 0);
    __syncthreads();
    int64_t since_flush = 0;
    // Tile t = bi * tiles_j + bj, stepped by gridDim.x without a 64-bit division in the
    // loop (a subroutine call on the GPU): (step_i, step_j) = divmod(gridDim.x, tiles_j).
    int64_t bi = 0, bj = blockIdx.x;
    if (tiles_j <= 0xffffffffll) {
        const uint32_t tj = static_cast<uint32_t>(tiles_j);
        bi = blockIdx.x / tj, bj = blockIdx.x % tj;
    }
    int64_t step_i = 0, step_j = gridDim.x;
    if (tiles_j <= 0xffffffffll) {
        const uint32_t tj = static_cast<uint32_t>(tiles_j);
        step_i = gridDim.x / tj, step_j = gridDim.x % tj;
    }
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        if (t != blockIdx.x) {
            bi += step_i, bj += step_j;
            if (bj >= tiles_j) bj -= tiles_j, ++bi;
        }
        if (autopairs && bj < bi) continue;  // the same for the whole block
        const int64_t j0 = bj * S;
        // This thread's points: i = bi * S + r * TB + tid, in registers (D > 0) or rows.
        bool has_i[R], all_i = true;
        T ar[R][D > 0 ? D : 1];
        const T *arow[R];
        double wi[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int64_t i = bi * S + r * TB + tid;
            has_i[r] = i < n1;
            all_i &= has_i[r];
            arow[r] = A + (has_i[r] ? i : 0) * lda;
            if constexpr (D > 0) {
#pragma unroll
                for (int k = 0; k < D; ++k) ar[r][k] = has_i[r] ? arow[r][k] : T(0);
            }
            wi[r] = (weighted && has_i[r]) ? wa[i] : 0.0;
        }
        // Stage B's tile (and its weights).
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int jt = r * TB + tid;
            const int64_t j = j0 + jt;
            if constexpr (D > 0) {
#pragma unroll
                for (int k = 0; k < 4; ++k) Bs[4 * jt + k] = j < n2 && k < D ? B[j * ldb + k] : T(0);  // pad: 0
            }
            if (weighted) Ws[jt] = j < n2 ? wb[j] : 0.0;
        }
        __syncthreads();
        // The distance of this thread's point r and B's point jj (both in range).
        auto dist = [&](int r, int jj) {
            if constexpr (D > 0) {
                T bv[4];
                load_point(bv, Bs + 4 * jj);
                return distance<M, P, D>(m, box, ar[r], bv, 1, d);
            } else {
                return distance<M, P, D>(m, box, arow[r], B + (j0 + jj) * ldb, 1, d);
            }
        };
        auto pair = [&](int r, int jj) { emit(dist(r, jj), wi[r], weighted ? Ws[jj] : 0.0); };
        // Off-diagonal tiles: every jj in range (a whole tile unrolled, without checks; the
        // uniform-bin kernels two points of B, 2R pairs, a group). A diagonal tile (AUTO):
        // balanced pairing, point p = r * TB + tid pairs with jj = p + s mod S for s = 1 ..
        // S/2, the last step by the points p < S/2.
        if (!(autopairs && bi == bj)) {
            const int nj = n2 - j0 < S ? int(n2 - j0) : S;
            if (all_i && nj == S) {
                if constexpr (fast_uniform && D > 0) {
#pragma unroll 2
                    for (int jj = 0; jj < S; jj += 2) {
                        V v[2 * R];
                        T b0[4], b1[4];
                        load_point(b0, Bs + 4 * jj);
                        load_point(b1, Bs + 4 * jj + 4);
#pragma unroll
                        for (int r = 0; r < R; ++r) {
                            v[r] = distance<M, P, D>(m, box, ar[r], b0, 1, d);
                            v[R + r] = distance<M, P, D>(m, box, ar[r], b1, 1, d);
                        }
                        emit_uniform(v);
                    }
                } else {
#pragma unroll 4
                    for (int jj = 0; jj < S; ++jj) {
#pragma unroll
                        for (int r = 0; r < R; ++r) pair(r, jj);
                    }
                }
            } else {
                for (int jj = 0; jj < nj; ++jj) {
#pragma unroll
                    for (int r = 0; r < R; ++r)
                        if (has_i[r]) pair(r, jj);
                }
            }
        } else {
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int p = r * TB + tid;
                for (int q = 0; q < S / 2; ++q) {
                    const int jj = (p + q + 1) % S;
                    if (has_i[r] && j0 + jj < n2 && (q + 1 < S / 2 || p < S / 2)) pair(r, jj);
                }
            }
        }
        if (mode == kOneRadius) flush_mine();
        __syncthreads();
        if (++since_flush == flush_tiles) {  // before a 32-bit counter could overflow
            flush_block(out, tid, cnt, slo, shi, wshared);
            __syncthreads();
            zero_block(tid, cnt, ncnt, slo, shi, wshared ? out.slots : 0);
            __syncthreads();
            since_flush = 0;
        }
    }
    flush_block(out, tid, cnt, slo, shi, wshared);
}

// The caller's outputs, from the global counters, by one block: pair counts cumulative,
// histogram counts as they are, sums rounded to double. Nothing when a weight was bad.
__global__ void finish_kernel(int mode, int slots, int64_t nout, const unsigned long long *gcount,
                              const unsigned long long *glo, const long long *ghi, int64_t *counts, double *sums,
                              const unsigned long long *bad) {
    if (bad[0] | bad[1]) return;
    if (mode == kRadii || mode == kOneRadius) {
        if (threadIdx.x == 0) {
            unsigned long long run = 0;
            for (int64_t q = 0; q < nout; ++q) {
                run += gcount[q];
                counts[q] = static_cast<int64_t>(run);
            }
        }
        return;
    }
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
        counts[s] = static_cast<int64_t>(gcount[s]);
        if (sums) sums[s] = fixed128_to_double(ghi[s], glo[s]);
    }
}

// Weights must be finite with |w| <= 2^15: *bad = n - i for the first i that is not (0:
// every weight good), so that the message can name it as the host's check does.
__global__ void check_weights(const double *w, int64_t n, unsigned long long *bad) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        if (!(fabs(w[i]) <= kMaxWeight)) atomicMax(bad, static_cast<unsigned long long>(n - i));
}

// ---- kNN ------------------------------------------------------------------------------

template <class V>
__device__ __forceinline__ V far_value() {
    if constexpr (std::is_floating_point<V>::value) return V(__int_as_float(0x7fc00000));
    else return V(0x7fffffff);
}

// The largest s whose square root (rounded, as L2's) is <= r: a sum of squares above it
// is farther than r. +inf for r NaN (a list not yet full) or +inf.
template <class V>
__device__ V sqrt_at_most(V r) {
    const V inf = V(__int_as_float(0x7f800000));
    if (!(r < inf)) return inf;
    V s = r * r;  // within an ulp or two of the answer
    while (s > V(0) && metric::sqrtv(s) > r) s = nextafter(s, V(0));
    while (s < inf && metric::sqrtv(nextafter(s, inf)) <= r) s = nextafter(s, inf);
    return s;
}

template <class M, int D, int K>
__global__ void __launch_bounds__(KT)
knn_kernel(const M m, const typename M::in_t *__restrict__ A, int64_t lda, const typename M::in_t *__restrict__ B,
           int64_t ldb, int64_t n1, int64_t n2, int64_t d, bool autopairs, int k, int64_t *__restrict__ idx,
           typename M::out_t *__restrict__ dist) {
    using T = typename M::in_t;
    using V = typename M::out_t;
    extern __shared__ __align__(16) unsigned char smem[];
    T *Bs = reinterpret_cast<T *>(smem);
    const int tid = threadIdx.x;
    const Box<T> box{};
    const int64_t blocks_i = (n1 + KT - 1) / KT;
    for (int64_t bi = blockIdx.x; bi < blocks_i; bi += gridDim.x) {
        const int64_t i = bi * KT + tid;
        const bool has_i = i < n1;
        T ar[D > 0 ? D : 1];
        const T *arow = A + (has_i ? i : 0) * lda;
        if constexpr (D > 0) {
#pragma unroll
            for (int q = 0; q < D; ++q) ar[q] = has_i ? arow[q] : T(0);
        }
        V ld[K];
        int64_t li[K];
#pragma unroll
        for (int q = 0; q < K; ++q) ld[q] = far_value<V>(), li[q] = INT64_MAX;
        // L2: a pair whose sum of squares exceeds `reject` is farther than the list's last
        // entry, so it is dropped before the square root (the same lists, fewer roots).
        constexpr bool kL2 = std::is_same<M, metric::L2<T>>::value;
        V reject{};
        if constexpr (kL2) reject = sqrt_at_most(ld[K - 1]);
        for (int64_t j0 = 0; j0 < n2; j0 += KT) {
            if constexpr (D > 0) {
                const int64_t j = j0 + tid;
#pragma unroll
                for (int q = 0; q < 4; ++q) Bs[4 * tid + q] = j < n2 && q < D ? B[j * ldb + q] : T(0);  // pad: 0
            }
            __syncthreads();
            // The pair (i, j0 + jj), both in range and distinct.
            auto visit = [&](int jj) {
                const int64_t j = j0 + jj;
                T bv[4];
                if constexpr (D > 0) load_point(bv, Bs + 4 * jj);
                V v;
                if constexpr (kL2) {
                    const metric::SqEuclidean<T> sq{};
                    V s2;
                    if constexpr (D > 0) s2 = distance<metric::SqEuclidean<T>, false, D>(sq, box, ar, bv, 1, d);
                    else s2 = distance<metric::SqEuclidean<T>, false, D>(sq, box, arow, B + j * ldb, 1, d);
                    if (s2 > reject) return;
                    v = m.finish(s2);
                } else {
                    if constexpr (D > 0) v = distance<M, false, D>(m, box, ar, bv, 1, d);
                    else v = distance<M, false, D>(m, box, arow, B + j * ldb, 1, d);
                }
                if (!nearer(v, j, ld[K - 1], li[K - 1])) return;
                if constexpr (K <= 32) {
                    // Unrolled: the list stays in registers.
                    ld[K - 1] = v, li[K - 1] = j;
#pragma unroll
                    for (int q = K - 1; q > 0; --q)
                        if (nearer(ld[q], li[q], ld[q - 1], li[q - 1])) {
                            const V tv = ld[q];
                            ld[q] = ld[q - 1], ld[q - 1] = tv;
                            const int64_t ti = li[q];
                            li[q] = li[q - 1], li[q - 1] = ti;
                        }
                } else {
                    int q = K - 1;
#pragma unroll 1
                    while (q > 0 && nearer(v, j, ld[q - 1], li[q - 1])) {
                        ld[q] = ld[q - 1], li[q] = li[q - 1];
                        --q;
                    }
                    ld[q] = v, li[q] = j;
                }
                if constexpr (kL2) reject = sqrt_at_most(ld[K - 1]);
            };
            // A whole tile without i itself: unrolled, no check per pair.
            const int nj = n2 - j0 < KT ? int(n2 - j0) : KT;
            if (has_i) {
                const bool own = autopairs && i >= j0 && i < j0 + nj;
                if (nj == KT && !own) {
#pragma unroll 4
                    for (int jj = 0; jj < KT; ++jj) visit(jj);
                } else {
                    for (int jj = 0; jj < nj; ++jj)
                        if (!(autopairs && j0 + jj == i)) visit(jj);
                }
            }
            __syncthreads();
        }
        if (has_i)
#pragma unroll
            for (int q = 0; q < K; ++q)
                if (q < k) idx[i * k + q] = li[q], dist[i * k + q] = ld[q];
    }
}

// ---- Dispatch -------------------------------------------------------------------------

// Calls f(m, P, D) with the functor the engines use (L2: SqEuclidean), the
// periodic flag and the compiled dimension count (d = 3, or with a box d = 1, 2, 3;
// 0 = any d).
template <class F>
void with_kernel(const Problem &pb, F &&f) {
    const bool periodic = !pb.box.empty();
    auto boxed = [&](auto m) {
        if (pb.pw.d == 1) return f(m, std::true_type{}, std::integral_constant<int, 1>{});
        if (pb.pw.d == 2) return f(m, std::true_type{}, std::integral_constant<int, 2>{});
        f(m, std::true_type{}, std::integral_constant<int, 3>{});
    };
    pairwise::dispatch(pb.pw, [&](auto m) {
        using M = decltype(m);
        using T = typename M::in_t;
        if constexpr (SquaredDomain<M>::value) {
            // Counts and histograms alike: thresholds in the squared domain (no square root).
            const metric::SqEuclidean<T> sq{};
            if (periodic) return boxed(sq);
            if (pb.pw.d == 3) return f(sq, std::false_type{}, std::integral_constant<int, 3>{});
            return f(sq, std::false_type{}, std::integral_constant<int, 0>{});
        }
        if (pb.pw.d == 3) return f(m, std::false_type{}, std::integral_constant<int, 3>{});
        f(m, std::false_type{}, std::integral_constant<int, 0>{});
    });
}

int knn_list(int64_t k) { return k <= 16 ? 16 : k <= 32 ? 32 : 128; }

template <class F>
void with_knn(const Problem &pb, F &&f) {
    const int K = knn_list(pb.k);
    pairwise::dispatch(pb.pw, [&](auto m) {
        auto go = [&](auto dc) {
            if (K == 16) return f(m, dc, std::integral_constant<int, 16>{});
            if (K == 32) return f(m, dc, std::integral_constant<int, 32>{});
            f(m, dc, std::integral_constant<int, 128>{});
        };
        if (pb.pw.d == 3) go(std::integral_constant<int, 3>{});
        else go(std::integral_constant<int, 0>{});
    });
}

// Calls g(F) with the reduce kernel's compile-time specialisation `fast` where the
// functor and dimension count have one (SqEuclidean in d = 3: L2 and SQEUCLIDEAN), else
// with kFastNone.
template <class M, int D, class G>
void with_fast(int fast, G &&g) {
    if constexpr (D == 3 && std::is_same<M, metric::SqEuclidean<typename M::in_t>>::value) {
        if (fast == kFastOneRadius) return g(std::integral_constant<int, kFastOneRadius>{});
        if (fast == kFastUniformShared) return g(std::integral_constant<int, kFastUniformShared>{});
        if (fast == kFastUniformGlobal) return g(std::integral_constant<int, kFastUniformGlobal>{});
        if (fast == kFastUniformLanes) return g(std::integral_constant<int, kFastUniformLanes>{});
        if (fast == (kFastUniformShared | kFastSquared))
            return g(std::integral_constant<int, kFastUniformShared | kFastSquared>{});
        if (fast == (kFastUniformGlobal | kFastSquared))
            return g(std::integral_constant<int, kFastUniformGlobal | kFastSquared>{});
        if (fast == (kFastUniformLanes | kFastSquared))
            return g(std::integral_constant<int, kFastUniformLanes | kFastSquared>{});
        if constexpr (std::is_same<typename M::in_t, float>::value) {
            if (fast == (kFastUniformLanes | kFastFromZero))
                return g(std::integral_constant<int, kFastUniformLanes | kFastFromZero>{});
            if (fast == (kFastUniformLanes | kFastSquared | kFastFromZero))
                return g(std::integral_constant<int, kFastUniformLanes | kFastSquared | kFastFromZero>{});
        }
    }
    g(std::integral_constant<int, kFastNone>{});
}

// The kernel a problem runs (reduce kernels: the specialisation `fast`), for the
// occupancy query and the attributes.
const void *kernel_of(const Problem &pb, int fast) {
    const void *fn = nullptr;
    if (pb.kind == Kind::Knn)
        with_knn(pb, [&](auto m, auto dc, auto kc) {
            fn = reinterpret_cast<const void *>(&knn_kernel<decltype(m), decltype(dc)::value, decltype(kc)::value>);
        });
    else
        with_kernel(pb, [&](auto m, auto pc, auto dc) {
            with_fast<decltype(m), decltype(dc)::value>(fast, [&](auto fc) {
                fn = reinterpret_cast<const void *>(
                    &reduce_kernel<decltype(m), decltype(pc)::value, decltype(dc)::value, decltype(fc)::value>);
            });
        });
    return fn;
}

// The specialisation a reduce problem's kernel is compiled with for `fast` (kFastNone where
// its functor and dimension count have none).
int compiled_fast(const Problem &pb, int fast) {
    int f = kFastNone;
    with_kernel(pb, [&](auto m, auto, auto dc) {
        with_fast<decltype(m), decltype(dc)::value>(fast, [&](auto fc) { f = decltype(fc)::value; });
    });
    return f;
}

size_t in_bytes(const Problem &pb) { return pb.pw.in_size(); }

size_t out_bytes(const Problem &pb) {
    return pb.pw.dtype == APAIRS_DTYPE_U8 ? 4 : pb.pw.in_size();  // HAMMING on U8: int32
}

int mode_of(const Problem &pb) {
    if (pb.kind == Kind::Counts) return pb.thresholds.size() == 1 ? kOneRadius : kRadii;
    return pb.uniform ? kUniform : kEdges;
}

// Counters per copy: histogram slots, or differential radius slots (+1: "none").
int slots_of(const Problem &pb) {
    return pb.kind == Kind::Counts ? int(pb.thresholds.size()) + 1 : int(pb.nbins()) + 2;
}

// Histogram edges staged in shared memory: nbins + 4 values when they take at most 16 KiB.
int staged_edges(const Problem &pb) {
    const int64_t xs = pb.kind == Kind::Histogram ? pb.nbins() + 4 : 0;
    return xs * int64_t(out_bytes(pb)) <= 16 * 1024 ? int(xs) : 0;
}

// The shared memory of a reduce block: B's tile (TB * rows points), weights and sums
// (weighted: rows = 1), counters, the staged edges (8-byte aligned after the counters).
int64_t reduce_shared(const Problem &pb, bool fixed_d, int copies, bool weighted, int rows) {
    const int64_t slots = slots_of(pb);
    int64_t b = (fixed_d ? 4 * TB * rows * int64_t(in_bytes(pb)) + 15 : 0) / 16 * 16;  // D <= 3, stride 4
    if (weighted) b += TB * 8 + (copies > 0 ? slots * 16 : 0);
    return b + int64_t(copies) * slots * 4 + 8 + int64_t(staged_edges(pb)) * int64_t(out_bytes(pb));
}

// Uniform bins: the width w, and the shift of u = r / w + shift = t - 1/2 (certain_slot).
double bin_width(const Problem &pb) {
    return (pb.thresholds.back() - pb.thresholds.front()) / double(pb.nbins());
}
double bin_shift(const Problem &pb) { return -pb.thresholds.front() / bin_width(pb) - 0.5; }

// The compile-time specialisation of the reduce kernel for a problem without weights:
// L2 or SQEUCLIDEAN in d = 3, one radius, or uniform bins with shared counters.
int fast_of(const Problem &pb, int copies) {
    if (pb.kind == Kind::Knn || pb.pw.d != 3 || pb.pw.dtype == APAIRS_DTYPE_U8 ||
        (pb.pw.metric != APAIRS_METRIC_L2 && pb.pw.metric != APAIRS_METRIC_SQEUCLIDEAN))
        return kFastNone;
    if (mode_of(pb) == kOneRadius) return kFastOneRadius;
    if (mode_of(pb) != kUniform || copies == 0) return kFastNone;
    const int sq = pb.pw.metric == APAIRS_METRIC_L2 ? kFastSquared : 0;
    if (copies == kLaneCopies)
        return kFastUniformLanes | sq | (pb.pw.dtype == APAIRS_DTYPE_F32 && bin_shift(pb) >= -1.0 ? kFastFromZero : 0);
    return (staged_edges(pb) > 0 ? kFastUniformShared : kFastUniformGlobal) | sq;
}

}  // namespace

CudaConfig plan_cuda(const Problem &pb, int device) {
    require_device(device);
    DeviceScope scope(device);
    const DeviceLimits limits = device_limits(device);
    CudaConfig c;
    c.device = device;
    c.device_name = limits.name;
    c.cc_major = limits.cc_major, c.cc_minor = limits.cc_minor, c.sm_count = limits.sm_count;
    c.fixed_d = pb.pw.d == 3 || !pb.box.empty();
    const int64_t max_shared = std::min<int64_t>(limits.max_shared_per_block, 96 * 1024);
    if (pb.kind != Kind::Knn) {
        // Per-lane copies when they fit the default 48 KiB (weights included, which an
        // execute may ask for), else per-warp copies, else one per block up to 96 KiB,
        // else global atomics.
        const int warps = TB / 32;
        if (reduce_shared(pb, c.fixed_d, kLaneCopies, true, 1) <= kDefaultShared && mode_of(pb) != kOneRadius)
            c.copies = kLaneCopies;
        else if (reduce_shared(pb, c.fixed_d, warps, true, 1) <= kDefaultShared && mode_of(pb) != kOneRadius)
            c.copies = warps;
        else if (reduce_shared(pb, c.fixed_d, 1, true, 1) <= max_shared) c.copies = 1;
        else c.copies = 0;
        c.fast = compiled_fast(pb, fast_of(pb, c.copies));
    }
    // The kernel an execute without weights runs (the occupancy and attributes reported).
    const void *fn = kernel_of(pb, c.fast);
    cudaFuncAttributes fa{};
    check(cudaFuncGetAttributes(&fa, fn), "cudaFuncGetAttributes");
    c.regs = fa.numRegs;
    c.stack = static_cast<int64_t>(fa.localSizeBytes);
    int64_t tiles = 0;
    if (pb.kind == Kind::Knn) {
        c.threads = KT;
        c.kmax = knn_list(pb.k);
        c.shared = c.fixed_d ? 4 * KT * int64_t(in_bytes(pb)) : 0;  // point-major, stride 4
        tiles = (pb.pw.n1 + KT - 1) / KT;
        c.why = fmt::format("one row of A per thread ({} per block), B staged {} points at a time{}; a sorted list "
                            "of {} (distance, index) per thread in {} ({} for k = {})",
                            KT, KT, c.fixed_d ? " through shared memory, the row in registers (d = 3 compiled in)"
                                              : " (any d: rows read through the cache)",
                            c.kmax, c.kmax <= 32 ? "registers, unrolled insertion" : "local memory", c.kmax, pb.k);
    } else {
        c.threads = TB;
        const int64_t slots = slots_of(pb);
        const bool one_radius = mode_of(pb) == kOneRadius;
        // Enough for both kernels an execute may run: with weights (generic, one row) or not.
        c.shared = std::max(reduce_shared(pb, c.fixed_d, c.copies, true, 1),
                            reduce_shared(pb, c.fixed_d, c.copies, false, rows_of(c.fast)));
        // The device's whole opt-in limit, as batched plans set it: a plan of the same
        // kernel that needs less never lowers it under another thread's launch.
        if (c.shared > kDefaultShared)
            for (const void *k : {fn, kernel_of(pb, kFastNone)})
                check(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           int(limits.max_shared_per_block)),
                      "cudaFuncSetAttribute");
        const int64_t S = int64_t(TB) * rows_of(c.fast);
        tiles = (pb.pw.n1 + S - 1) / S * ((pb.pw.n2 + S - 1) / S);
        const std::string out =
            one_radius ? "a per-thread counter in a register, summed across the warp per tile (one radius)"
            : c.copies == kLaneCopies
                ? fmt::format("{} shared-memory copies of the {} 32-bit counters, one per lane, interleaved (a warp's "
                              "increments on 32 distinct banks; they fit 48 KiB)",
                              c.copies, slots)
            : c.copies > 1
                ? fmt::format("{} shared-memory copies of the {} 32-bit counters, one per warp (they fit 48 KiB: "
                              "less contention than one per block)",
                              c.copies, slots)
            : c.copies == 1 ? fmt::format("one shared-memory copy of the {} 32-bit counters per block (per-warp copies "
                                          "would not fit 48 KiB)",
                                          slots)
                            : fmt::format("global 64-bit atomics ({} slots do not fit {} KiB of shared memory)", slots,
                                          max_shared / 1024);
        c.why = fmt::format("{} of A per thread ({} per block){}, B staged {} points at a time through shared "
                            "memory; AUTO visits the tiles with j-block >= i-block, diagonal tiles by balanced pairing "
                            "(every point half a tile of pairs); output: {}, flushed into 64-bit global counters{}",
                            rows_of(c.fast) == 1 ? std::string("one point") : fmt::format("{} points", rows_of(c.fast)),
                            S,
                            c.fixed_d ? fmt::format(" in registers (d = {} compiled in)", pb.pw.d)
                                      : std::string(" (any d: rows read through the cache)"),
                            S, out,
                            pb.kind == Kind::Histogram ? "; weights: 128-bit fixed-point sums in shared memory" : "");
        if (pb.pw.metric == APAIRS_METRIC_L2)
            c.why += "; L2 compared in the squared domain (each threshold or edge as the least sum of squares whose "
                     "square root reaches it: exact, no square root per pair)";
        if (staged_edges(pb)) c.why += fmt::format("; the {} edges staged in shared memory", staged_edges(pb));
        if (c.fast != kFastNone)
            c.why += fmt::format("; without weights a kernel compiled for {} (no run-time branch per pair)",
                                 c.fast == kFastOneRadius ? "one radius" : "uniform bins with shared counters");
        if (pb.kind == Kind::Histogram && pb.uniform && pb.pw.dtype == APAIRS_DTYPE_F32)
            c.why += "; each bin taken from the distance (an approximate square root in the squared domain) where its "
                     "rounding error provably cannot cross an edge, fixed against the edges elsewhere";
    }
    // The grid fills the device with the kernel an execute without weights runs, at its own
    // shared memory (the weights' 128-bit sums, reserved in c.shared, can be most of it:
    // 64 KiB for 4096 bins). A weighted execute runs the same grid; blocks that do not fit
    // at once wait their turn (the kernel strides over the tiles).
    c.shared_plain = pb.kind == Kind::Knn ? c.shared : reduce_shared(pb, c.fixed_d, c.copies, false, rows_of(c.fast));
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&c.blocks_per_sm, fn, c.threads, size_t(c.shared_plain)),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    if (c.blocks_per_sm < 1) fail(APAIRS_ERROR_UNSUPPORTED, "the {} kernel does not fit {}", "two-body", limits.name);
    c.grid = std::max<int64_t>(1, std::min<int64_t>(tiles, int64_t(c.blocks_per_sm) * c.sm_count));
    return c;
}

void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream_ptr, const void *A, const void *B,
                  const Outputs &out) {
    DeviceScope scope(cfg.device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    const int64_t in = int64_t(in_bytes(pb));
    if (pb.autopairs) B = A;
    Staging st(cfg.device, stream);
    const int a_slot = st.in(A, pb.pw.n1, pb.pw.d * in, pb.pw.lda * in, "A");
    const int b_slot = st.in(B, pb.pw.n2, pb.pw.d * in, pb.pw.ldb * in, "B");
    if (pb.kind == Kind::Knn) {
        const int i_slot = st.out(out.indices, pb.pw.n1, pb.k * 8, pb.k * 8, "indices");
        const int d_slot = st.out(out.distances, pb.pw.n1, pb.k * int64_t(out_bytes(pb)), pb.k * int64_t(out_bytes(pb)),
                                  "distances");
        st.stage();
        const Staging::View a = st.view(a_slot), b = st.view(b_slot), vi = st.view(i_slot), vd = st.view(d_slot);
        with_knn(pb, [&](auto m, auto dc, auto kc) {
            using M = decltype(m);
            using T = typename M::in_t;
            launch("kNN kernel launch", knn_kernel<M, decltype(dc)::value, decltype(kc)::value>,
                   unsigned(cfg.grid), KT, size_t(cfg.shared), stream, m, static_cast<const T *>(a.ptr),
                   a.pitch / in, static_cast<const T *>(b.ptr), b.pitch / in, pb.pw.n1, pb.pw.n2, pb.pw.d,
                   pb.autopairs, int(pb.k), static_cast<int64_t *>(vi.ptr),
                   static_cast<typename M::out_t *>(vd.ptr));
        });
        st.finish();
        return;
    }

    const bool weighted = out.sums != nullptr;
    const int slots = slots_of(pb), mode = mode_of(pb);
    const int64_t nout = pb.kind == Kind::Counts ? int64_t(pb.thresholds.size()) : slots;
    int wa_slot = -1, wb_slot = -1, s_slot = -1;
    if (weighted) {
        wa_slot = st.in(out.wa, 1, pb.pw.n1 * 8, pb.pw.n1 * 8, "weights_a");
        wb_slot = st.in(out.wb, 1, pb.pw.n2 * 8, pb.pw.n2 * 8, "weights_b");
    }
    const int c_slot = st.out(out.counts, 1, nout * 8, nout * 8, "counts");
    if (weighted) s_slot = st.out(out.sums, 1, nout * 8, nout * 8, "sums");
    st.stage();
    const Staging::View a = st.view(a_slot), b = st.view(b_slot), vc = st.view(c_slot);

    // Scratch: counters, 128-bit sums, the weights flag, the thresholds.
    const size_t edges_bytes = (pb.thresholds.size() + 3) * 8;
    StreamBuffer scratch(size_t(slots) * 24 + 16 + edges_bytes, stream);
    unsigned char *base = static_cast<unsigned char *>(scratch.get());
    auto *gcount = reinterpret_cast<unsigned long long *>(base);
    auto *glo = gcount + slots;
    auto *ghi = reinterpret_cast<long long *>(glo + slots);
    auto *bad = reinterpret_cast<unsigned long long *>(ghi + slots);  // weights_a's, weights_b's (check_weights)
    void *thr = base + size_t(slots) * 24 + 16;
    check(cudaMemsetAsync(base, 0, size_t(slots) * 24 + 16, stream), "cudaMemsetAsync");
    if (weighted) {
        launch("two-body check_weights launch", check_weights, 64, 256, 0, stream,
               static_cast<const double *>(st.view(wa_slot).ptr), pb.pw.n1, bad);
        launch("two-body check_weights launch", check_weights, 64, 256, 0, stream,
               static_cast<const double *>(st.view(wb_slot).ptr), pb.pw.n2, bad + 1);
    }
    // Tiles of S = TB * rows points (the kernel this execute runs).
    const int fast = weighted ? int(kFastNone) : cfg.fast;
    const int64_t S = int64_t(TB) * rows_of(fast);
    const int64_t tiles_j = (pb.pw.n2 + S - 1) / S;
    const int64_t ntiles = (pb.pw.n1 + S - 1) / S * tiles_j;
    // A block's 32-bit counter takes at most S * S pairs per tile.
    const int64_t flush_tiles = (int64_t(1) << 32) / (S * S) - 1;
    with_kernel(pb, [&](auto m, auto pc, auto dc) {
        using M = decltype(m);
        using T = typename M::in_t;
        using V = typename M::out_t;
        // Thresholds in the distance type (or the squared domain), as the host converts them.
        std::vector<V> host_thr;
        if (pb.kind == Kind::Counts) {
            for (double r : pb.thresholds) {
                if constexpr (std::is_floating_point<V>::value)
                    host_thr.push_back(pb.pw.metric == APAIRS_METRIC_L2 ? squared_threshold<V>(r) : floor_to<V>(r));
                else
                    host_thr.push_back(floor_to<V>(r));
            }
        } else {
            host_thr = extended_edges<V>(pb.thresholds);
            if constexpr (std::is_floating_point<V>::value)
                if (pb.pw.metric == APAIRS_METRIC_L2)  // the squared domain: sqrt(s) >= e <=> s >= X
                    for (size_t q = 1; q < host_thr.size(); ++q) host_thr[q] = sqrt_threshold<V>(host_thr[q]);
        }
        check(cudaMemcpyAsync(thr, host_thr.data(), host_thr.size() * sizeof(V), cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync");
        Reduce<V> r{};
        r.mode = mode;
        r.slots = slots;
        r.copies = cfg.copies;
        r.certain = Certain{0, 0, 0, -1};
        r.xs = staged_edges(pb);
        r.weighted = weighted;
        r.radii = static_cast<const V *>(thr);
        if (pb.kind == Kind::Histogram) {
            r.bins = make_bins(host_thr, pb.thresholds);
            r.bins.X = static_cast<const V *>(thr);
            r.bins.squared = pb.pw.metric == APAIRS_METRIC_L2;
            if constexpr (std::is_same<V, float>::value) {
                // Squared: r within 7 u of the distance (certain_slot); rel = 8 with room. A
                // flushed subnormal sum needs rmin = 0 or rmin >= 2^-60 (certain_slot).
                const BinMargin bm = bin_margin<float>(pb.thresholds, r.bins.squared ? 8.0 : 0.0);
                const double m = bm.k * double(pb.nbins() + 1) + bm.c;  // |t| <= nbins + 1
                const double rmin = pb.thresholds.front();
                if (pb.uniform && m < 0.25 && pb.nbins() < (int64_t(1) << 21) &&
                    (rmin == 0 || rmin >= std::ldexp(1.0, -60)))
                    r.certain = Certain{float(1 / bin_width(pb)), float(bin_shift(pb)), float(pb.nbins()),
                                        float(0.5 - m)};
            }
        }
        r.gcount = gcount, r.glo = glo, r.ghi = ghi;
        Box<T> box{};
        for (size_t k = 0; k < pb.box.size(); ++k) box.side[k] = T(pb.box[k]), box.inv[k] = T(1 / T(pb.box[k]));
        const int64_t shared = reduce_shared(pb, decltype(dc)::value > 0, cfg.copies, weighted, rows_of(fast));
        with_fast<M, decltype(dc)::value>(fast, [&](auto fc) {
            // (a limit lowered since planning is raised again by `launch`)
            launch("two-body kernel launch",
                   reduce_kernel<M, decltype(pc)::value, decltype(dc)::value, decltype(fc)::value>,
                   unsigned(cfg.grid), TB, size_t(shared), stream, m, box, static_cast<const T *>(a.ptr),
                   a.pitch / in, static_cast<const T *>(b.ptr), b.pitch / in,
                   weighted ? static_cast<const double *>(st.view(wa_slot).ptr) : nullptr,
                   weighted ? static_cast<const double *>(st.view(wb_slot).ptr) : nullptr, pb.pw.n1, pb.pw.n2,
                   pb.pw.d, pb.autopairs, tiles_j, ntiles, flush_tiles, r);
        });
        // (host_thr may go now: a copy from pageable memory has read it when it returns.)
    });
    launch("two-body finish kernel launch", finish_kernel, 1, 256, 0, stream, mode, slots, nout, gcount, glo, ghi,
           static_cast<int64_t *>(vc.ptr), weighted ? static_cast<double *>(st.view(s_slot).ptr) : nullptr, bad);
    if (weighted) {
        unsigned long long flag[2] = {0, 0};
        check(cudaMemcpyAsync(flag, bad, sizeof flag, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        // The first bad weight, weights_a's before weights_b's, named as the host names it.
        for (int q = 0; q < 2; ++q)
            if (flag[q]) {
                const int64_t n = q == 0 ? pb.pw.n1 : pb.pw.n2, i = n - int64_t(flag[q]);
                double w = 0;
                check(cudaMemcpy(&w, static_cast<const double *>(st.view(q == 0 ? wa_slot : wb_slot).ptr) + i,
                                 sizeof w, cudaMemcpyDeviceToHost),
                      "cudaMemcpy");
                weight_fail(q == 0 ? "weights_a" : "weights_b", i, w);
            }
    }
    st.finish();
}

}  // namespace apairs::twobody
