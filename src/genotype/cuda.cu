// Genotype CUDA engine on the binary tensor cores. Every genotype metric is a sum of
// bilinear counts popc(P_a & Q_b) between bit planes of the two rows (Terms below): the
// packed rows become three planes (x, y, called) in a conversion kernel, and a binary
// GEMM (mma.sync m16n8k256 .b1, AND + popc accumulation into int32: BMMA on sm_80 /
// sm_90) sums each plane pair over 256 variants an instruction. Blocks of 8 warps own
// 128 x 128 pairs, stage 256 variants of the planes of their rows through shared
// memory in a kCudaStages-deep cp.async pipeline (rows swizzled so ldmatrix reads
// conflict-free), derive the planes each term pairs in registers, and each warp
// accumulates 64 x 32 pairs; the epilogue turns the counts into the metric's value with
// the functor the host engines use (metrics.hpp), so the values are the host's bit for
// bit. Pairs of tiles whose rows hold no missing call take the allele-count metrics
// from the rows' sums and two plane pairs instead of four (kAlleleForm), staging two
// planes. With A = B only the tiles on and above the diagonal run, each pair written to
// both triangles. PLINK's weighted scaling needs, per pair, the weight of the variants
// missing in both rows: a sparse kernel sums it from per-variant masks of the missing
// rows (work proportional to the number of such (pair, variant) events, d n1 n2 p^2 for
// a missing rate p), before the GEMM reads it.
#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <fmt/format.h>

#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "cuda/staging.cuh"
#include "genotype/cuda.hpp"
#include "genotype/dispatch.hpp"

namespace apairs::genotype {
using namespace apairs::cuda;
namespace {

constexpr int BM = kCudaTileRows, BN = kCudaTileRows, THREADS = 256, STAGES = kCudaStages;
constexpr int KW = 8;  // 32-bit words of a plane a stage: 256 variants, one k-step of the MMA

// Each row is staged as three bit planes (two in the allele form) over its variants, X = [g >= 1], Y = [g == 2]
// and C = [called] (X, Y 0 where the call is missing, all 0 past d); the planes a
// metric's counts pair are derived from them in registers, fragment by fragment:
//   X, XBAR = C & ~X = [g == 0], Y, YBAR = C & ~Y = [g <= 1], Z1 = X & ~Y = [g == 1], C.
enum Plane : uint8_t { X, XBAR, Y, YBAR, Z1, CALLED };
constexpr int NP = 3;  // staged planes: X, Y, C

__device__ __forceinline__ uint32_t derive(Plane p, uint32_t x, uint32_t y, uint32_t c) {
    switch (p) {
    case X: return x;
    case XBAR: return c & ~x;
    case Y: return y;
    case YBAR: return c & ~y;
    case Z1: return x & ~y;
    default: return c;
    }
}

// A metric's first count as a sum of plane-pair counts popc(plane a[q] of row i &
// plane b[q] of row j); b names the distinct B planes (derived once a k-step), bi[q]
// the one term q takes.
struct Terms {
    int n;
    Plane a[4];
    int nb;
    Plane b[4];
    uint8_t bi[4];
};

// With x = g >= 1 and y = g == 2: |g_a - g_b| over the calls of both =
// popc(x_a & xbar_b) + popc(xbar_a & x_b) + popc(y_a & ybar_b) + popc(ybar_a & y_b),
// each term counting the variants where that plane differs, one way round.
constexpr Terms kAllele{4, {X, XBAR, Y, YBAR}, 4, {XBAR, X, YBAR, Y}, {0, 1, 2, 3}};
template <class M> struct TermsOf;
template <> struct TermsOf<metric::AlleleCount> { static constexpr Terms t = kAllele; };
template <int K, bool W> struct TermsOf<metric::Plink<K, W>> { static constexpr Terms t = kAllele; };
// Differing: x differs, or x = 1 on both and y differs (1 against 2).
template <> struct TermsOf<metric::Hamming> {
    static constexpr Terms t{4, {X, XBAR, Z1, Y}, 4, {XBAR, X, Y, Z1}, {0, 1, 2, 3}};
};
template <> struct TermsOf<metric::Ibs0> {  // 0 against 2
    static constexpr Terms t{2, {XBAR, Y}, 2, {Y, XBAR}, {0, 1}};
};
template <> struct TermsOf<metric::Ibs1> {  // 0 against 1, 1 against 2
    static constexpr Terms t{4, {XBAR, Z1, Z1, Y}, 3, {Z1, XBAR, Y}, {0, 1, 2, 0}};
};
template <> struct TermsOf<metric::Ibs2> {  // equal calls
    static constexpr Terms t{3, {XBAR, Z1, Y}, 3, {XBAR, Z1, Y}, {0, 1, 2}};
};
template <> struct TermsOf<metric::NonMissing> {
    static constexpr Terms t{1, {CALLED}, 1, {CALLED}, {0}};
};

// The flat-missing PLINK metrics take a second count: popc(C_a & C_b).
template <class M> constexpr bool kFlat = false;
template <int K> constexpr bool kFlat<metric::Plink<K, false>> = true;

// Where neither tile of rows holds a missing call, the allele count takes half the MMAs
// (metric::AlleleShared): S_a + S_b - 2 (popc(X_a & X_b) + popc(Y_a & Y_b)), with S the
// row sums of X and Y (to_planes); two plane pairs a k-step, no derived planes, C not
// staged. (With missing calls S would depend on the other row's calls.)
using metric::kAlleleForm;

__device__ __forceinline__ uint32_t even_bits32(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    return static_cast<uint32_t>((x | (x >> 16)) & 0xFFFFFFFFULL);
}

__device__ __forceinline__ uint32_t valid_word(int64_t w, int64_t d) {
    const int64_t left = d - 32 * w;
    return left >= 32 ? 0xFFFFFFFFu : left <= 0 ? 0u : (1u << left) - 1u;
}

// The 32 variants w*32.. of a packed row as (lo, hi) code bits: PLINK's codes are
// 00 g = 0, 01 missing, 10 g = 1, 11 g = 2.
__device__ __forceinline__ void code_bits(const uint8_t *p, int64_t bytes, int64_t w, uint32_t &lo, uint32_t &hi) {
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) {
        const int64_t at = 8 * w + b;
        if (at < bytes) v |= uint64_t(p[at]) << (8 * b);
    }
    lo = even_bits32(v), hi = even_bits32(v >> 1);
}

// One thread per (row, plane word): planes[(row * 3 + p) * kw + w] for X, Y, C; per row
// its sum of X and Y (sum g over its calls: the allele form's row sums, above) and a
// flag per tile of rows holding a missing call, and, with weights, the row's missing
// weight (uint32, wrapping: exact mod 2^32); the caller zeroes the sums and flags. kw is
// a multiple of 8, so each aligned group of 8 lanes works on one row: it adds its sum
// with one atomic.
__global__ void to_planes(const uint8_t *__restrict__ packed, int64_t pitch, int64_t n, int64_t d, int64_t kw,
                          uint32_t *__restrict__ planes, uint32_t *__restrict__ rowsum,
                          uint32_t *__restrict__ tile_missing, const uint32_t *__restrict__ weights,
                          uint32_t *__restrict__ wmiss) {
    const int64_t bytes = (d + 3) / 4, total = n * kw;
    const int lane = threadIdx.x & 31;
    // The loop runs warp-uniformly (the shuffles below take every lane).
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t - lane < total;
         t += int64_t(gridDim.x) * blockDim.x) {
        const bool in = t < total;
        const int64_t row = in ? t / kw : 0, w = in ? t % kw : 0;
        uint32_t sum = 0;
        if (in) {
            uint32_t lo, hi;
            code_bits(packed + row * pitch, bytes, w, lo, hi);
            const uint32_t valid = valid_word(w, d), called = (hi | ~lo) & valid;
            const uint32_t x = hi & valid, y = hi & lo & valid;
            uint32_t *out = planes + row * NP * kw + w;
            out[0] = x;
            out[kw] = y;
            out[2 * kw] = called;
            sum = __popc(x) + __popc(y);
            if (valid & ~called) {
                tile_missing[row / BM] = 1u;
                if (weights) {
                    uint32_t ws = 0;
                    for (uint32_t miss = valid & ~called; miss; miss &= miss - 1) ws += weights[32 * w + __ffs(miss) - 1];
                    atomicAdd(&wmiss[row], ws);
                }
            }
        }
        sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 1);
        sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 2);
        sum += __shfl_xor_sync(0xFFFFFFFFu, sum, 4);
        if (in && (lane & 7) == 0 && sum) atomicAdd(&rowsum[row], sum);
    }
}

// Missing-row masks: masks[v * ld + r] bit b = row 32 r + b misses variant v (ld a
// multiple of 4: a tile of 128 rows is one aligned uint4; rows past n miss nothing),
// only for the tiles of rows flagged as holding a missing call (missing_both reads no
// other). A warp per (r, plane word w): lane b loads row 32 r + b's C word, and 32
// ballots transpose the missing bits, one variant each.
__global__ void missing_masks(const uint32_t *__restrict__ planes, int64_t n, int64_t d, int64_t kw, int64_t ld,
                              const uint32_t *__restrict__ tile_missing, uint32_t *__restrict__ masks) {
    static_assert(BM == 128, "four words of masks a tile of rows");
    const int lane = threadIdx.x & 31;
    const int64_t words = (d + 31) / 32, warps = int64_t(gridDim.x) * (blockDim.x / 32);
    for (int64_t t = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32; t < ld * words; t += warps) {
        const int64_t r = t / words, w = t % words, row = 32 * r + lane;
        if (!tile_missing[r / 4]) continue;  // uniform in the warp
        const uint32_t miss = row < n ? ~planes[(row * NP + 2) * kw + w] & valid_word(w, d) : 0u;
        uint32_t mine = 0;
#pragma unroll
        for (int b = 0; b < 32; ++b) {
            const uint32_t m = __ballot_sync(0xFFFFFFFFu, (miss >> b) & 1u);
            if (lane == b) mine = m;
        }
        if (32 * w + lane < d) masks[(32 * w + lane) * ld + r] = mine;
    }
}

// The tile t of a grid over (ti, tj): all tiles, or (same) those with tj >= ti, row by row.
__device__ __forceinline__ void tile_of(int64_t t, int64_t tiles_j, bool same, int64_t &ti, int64_t &tj) {
    if (!same) {
        ti = t / tiles_j, tj = t % tiles_j;
        return;
    }
    // Row ti holds tiles_j - ti tiles; start(ti) = ti * tiles_j - ti (ti - 1) / 2.
    int64_t r = int64_t((2.0 * tiles_j + 1 - sqrt((2.0 * tiles_j + 1) * (2.0 * tiles_j + 1) - 8.0 * t)) / 2);
    auto start = [&](int64_t i) { return i * tiles_j - i * (i - 1) / 2; };
    while (r > 0 && start(r) > t) --r;
    while (start(r + 1) <= t) ++r;
    ti = r, tj = r + (t - start(r));
}

// The weight of the variants missing in rows i of A and j of B, for the 128 x 128 tiles
// of the grid whose rows on both sides hold a missing call (the others are left alone:
// the GEMM's epilogue takes 0 there), written into D's slot at (i, j) as a 64-bit integer
// (the count, zero-extended), whose low half the GEMM's epilogue reads before it writes
// the value there: no n1 x n2 buffer of its own. Work in proportion to the (pair,
// variant) events, d n1 n2 p^2 for a missing rate p: each (variant, row of A missing
// it) adds the variant's weight to the counters of that row's pairs with the rows of B
// missing it (shared-memory atomics; the sums are exact modulo 2^32 in any order).
//
// A warp takes 32 consecutive variants at a time, a lane each: the lane lists its
// variant's missing rows of A and of B (bytes, in shared memory). The work items, the
// (variant, row of A) pairs, are then shared evenly among the lanes: lane k takes items
// k, k + 32, ... of the warp's prefix sums of the items (the owning variant found by one
// OR reduction a round, below), the row from the owner's list, and adds to the columns
// of the owner's list of B. (A lane per variant, walking its own masks, left most lanes
// idle while a few walked long lists: 7.9 active lanes a warp, 1.43 ms where this takes
// 0.64 at 8192 x 8192 x 4096, 5 % missing; tools/gpu-notes.md runs 99-107.) A variant
// with more than kList missing rows on either side (rare but at high missing rates) its
// lane adds alone, from the masks.
constexpr int kList = 16;
// The counters: BM rows of BN, a word of padding a row, so that the lanes adding to one
// column of B from several rows of A (one variant's items) hit distinct banks; then per
// lane its lists, kList rows of A and kList of B (the latter filled to a whole word
// with BN, the padding column); then per warp 32 bytes: for each position of a round,
// the lane whose items start there.
constexpr int kBothLd = BN + 1;
constexpr int kBothSmem = BM * kBothLd * 4 + THREADS * 2 * kList + THREADS;
__global__ void __launch_bounds__(THREADS)
missing_both(const uint32_t *__restrict__ ma, int64_t ld_a, int64_t n1, const uint32_t *__restrict__ mb, int64_t ld_b,
             int64_t n2, int64_t d, const uint32_t *__restrict__ weights, const uint32_t *__restrict__ tile_missing_a,
             const uint32_t *__restrict__ tile_missing_b, double *__restrict__ D, int64_t ldd, int64_t tiles_j,
             int64_t ntiles, bool same) {
    static_assert(BM == 128 && BN == 128, "one uint4 of masks a tile of rows, a byte a row");
    extern __shared__ uint32_t acc[];  // the counters, then the lists, then the owners' tables
    const int lane = threadIdx.x & 31;
    uint8_t *const lists = reinterpret_cast<uint8_t *>(acc + BM * kBothLd) + (threadIdx.x - lane) * 2 * kList;
    uint8_t *const mine = lists + lane * 2 * kList;
    uint8_t *const owners = reinterpret_cast<uint8_t *>(acc + BM * kBothLd) + THREADS * 2 * kList + (threadIdx.x - lane);
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        int64_t ti, tj;
        tile_of(t, tiles_j, same, ti, tj);
        if (!tile_missing_a[ti] || !tile_missing_b[tj]) continue;  // uniform in the block
        for (int e = threadIdx.x; e < BM * kBothLd; e += THREADS) acc[e] = 0;
        __syncthreads();
        for (int64_t v0 = threadIdx.x - lane; v0 < d; v0 += THREADS) {  // uniform in the warp
            const int64_t v = v0 + lane;
            uint4 va = make_uint4(0, 0, 0, 0), vb = va;
            if (v < d) {
                va = *reinterpret_cast<const uint4 *>(ma + v * ld_a + 4 * ti);
                vb = *reinterpret_cast<const uint4 *>(mb + v * ld_b + 4 * tj);
            }
            const uint32_t a[4] = {va.x, va.y, va.z, va.w}, b[4] = {vb.x, vb.y, vb.z, vb.w};
            uint32_t na = __popc(a[0]) + __popc(a[1]) + __popc(a[2]) + __popc(a[3]);
            const uint32_t nb = __popc(b[0]) + __popc(b[1]) + __popc(b[2]) + __popc(b[3]);
            const uint32_t w = na && nb ? __ldg(weights + v) : 0u;
            if (!nb) na = 0;
            if (na > kList || nb > kList) {
#pragma unroll
                for (int qa = 0; qa < 4; ++qa)
                    for (uint32_t x = a[qa]; x; x &= x - 1) {
                        uint32_t *const row = acc + (32 * qa + __ffs(x) - 1) * kBothLd;
#pragma unroll
                        for (int qb = 0; qb < 4; ++qb)
                            for (uint32_t y = b[qb]; y; y &= y - 1) atomicAdd(row + 32 * qb + __ffs(y) - 1, w);
                    }
                na = 0;
            } else if (na) {
                int k = 0;
#pragma unroll
                for (int qa = 0; qa < 4; ++qa)
                    for (uint32_t x = a[qa]; x; x &= x - 1) mine[k++] = uint8_t(32 * qa + __ffs(x) - 1);
                k = kList;
#pragma unroll
                for (int qb = 0; qb < 4; ++qb)
                    for (uint32_t y = b[qb]; y; y &= y - 1) mine[k++] = uint8_t(32 * qb + __ffs(y) - 1);
                for (; k % 4; ++k) mine[k] = uint8_t(BN);  // to a whole word: the padding column
            }
            __syncwarp();
            uint32_t incl = na;  // inclusive prefix sum of the items over the warp's lanes
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const uint32_t x = __shfl_up_sync(0xFFFFFFFFu, incl, o);
                if (lane >= o) incl += x;
            }
            const uint32_t total = __shfl_sync(0xFFFFFFFFu, incl, 31), excl = incl - na;
            int carry = 0;  // the owner of the round's item 0 when no variant's items start there
            for (uint32_t g0 = 0; g0 < total; g0 += 32) {  // uniform
                const uint32_t g = g0 + lane;
                // The owner of item g: the lanes whose items start in this round publish
                // their lane at the start's position; lane k's owner started at the last
                // such position <= k, or before the round (the last round's lane 31's).
                const int32_t at = int32_t(excl - g0);
                const bool starts = na && at >= 0 && at < 32;
                const uint32_t starts_at = __reduce_or_sync(0xFFFFFFFFu, starts ? 1u << at : 0u);
                if (starts) owners[at] = uint8_t(lane);
                __syncwarp();
                const uint32_t below = starts_at & (0xFFFFFFFFu >> (31 - lane));
                const int owner = below ? owners[31 - __clz(below)] : carry;
                carry = __shfl_sync(0xFFFFFFFFu, owner, 31);
                __syncwarp();  // the table is read before the next round writes it
                const uint32_t k = g - __shfl_sync(0xFFFFFFFFu, excl, owner);
                const uint32_t wt = __shfl_sync(0xFFFFFFFFu, w, owner), cnt = __shfl_sync(0xFFFFFFFFu, nb, owner);
                if (g >= total) continue;
                const uint8_t *const list = lists + owner * 2 * kList;
                uint32_t *const row = acc + list[k] * kBothLd;
                // Four columns a word (past the list: the row's padding column, never read).
                const uint32_t *const cols = reinterpret_cast<const uint32_t *>(list + kList);
                for (uint32_t c = 0; c < cnt; c += 4) {
                    const uint32_t four = cols[c / 4];
#pragma unroll
                    for (uint32_t u = 0; u < 4; ++u) atomicAdd(row + ((four >> (8 * u)) & 0xFFu), wt);
                }
            }
            __syncwarp();  // the lists are read before the next variants' are written
        }
        __syncthreads();
        for (int e = threadIdx.x; e < BM * BN; e += THREADS) {
            const int64_t i = ti * BM + e / BN, j = tj * BN + e % BN;
            // The whole slot (the count in its low half): a warp's stores cover whole
            // sectors, which L2 then need not fetch from memory first.
            if (i < n1 && j < n2)
                *reinterpret_cast<unsigned long long *>(D + i * ldd + j) = acc[e / BN * kBothLd + e % BN];
        }
        __syncthreads();
    }
}

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t &r0, uint32_t &r1, uint32_t &r2, uint32_t &r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

__device__ __forceinline__ void bmma(int (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // plan_cuda refuses devices below sm_80
#endif
}

// Shared memory of a stage: 3 planes x (BM + BN) rows x 32 bytes (two 16-byte chunks,
// swapped in rows whose bit 2 is set: the 8 rows an ldmatrix phase reads then cover
// all 32 banks).
__device__ __forceinline__ uint32_t chunk_offset(int plane, int row, int chunk) {
    return uint32_t(((plane * (BM + BN) + row) * 2 + (chunk ^ ((row >> 2) & 1))) * 16);
}

template <class M>
__global__ void __launch_bounds__(THREADS, kFlat<M> ? 1 : 2)
genotype_mma(const M m, const uint32_t *__restrict__ pa, int64_t n1, const uint32_t *__restrict__ pb, int64_t n2,
             int64_t kw, uint32_t d, const uint32_t *__restrict__ rowsum_a, const uint32_t *__restrict__ rowsum_b,
             const uint32_t *__restrict__ tile_missing_a, const uint32_t *__restrict__ tile_missing_b,
             const uint32_t *__restrict__ wmiss_a, const uint32_t *__restrict__ wmiss_b, uint32_t W,
             typename M::out_t *__restrict__ D, int64_t ldd, int64_t tiles_j, int64_t ntiles, bool same,
             bool pair_stores) {
    constexpr int NC = kFlat<M> ? 2 : 1;
    constexpr uint32_t kStageBytes = uint32_t(NP * (BM + BN) * 32);
    extern __shared__ __align__(16) uint8_t smem[];
    const uint32_t base = smem_addr(smem);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp & 1, wn = warp >> 1;  // warp tile: rows 64 wm.., columns 32 wn..
    const int64_t ksteps = kw / KW;

    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        int64_t ti, tj;
        tile_of(t, tiles_j, same, ti, tj);
        const int64_t i0 = ti * BM, j0 = tj * BN;
        const bool missing = tile_missing_a[ti] || tile_missing_b[tj];  // uniform in the block

        int acc[NC][4][4][4];
#pragma unroll
        for (int c = 0; c < NC; ++c)
#pragma unroll
            for (int x = 0; x < 4; ++x)
#pragma unroll
                for (int y = 0; y < 4; ++y)
#pragma unroll
                    for (int z = 0; z < 4; ++z) acc[c][x][y][z] = 0;

        // The k-loop, with the terms of T (Fast: the allele form's X & X and Y & Y).
        auto mainloop = [&](auto fast_c) {
            constexpr bool Fast = decltype(fast_c)::value;
            constexpr Terms T = TermsOf<M>::t;  // the lambda's own: no capture, no stack copy
            constexpr int NS = Fast ? 2 : NP;  // planes staged: X, Y (, C)
            // Stage k-step ks into buffer ks % STAGES: NS planes x (BM + BN) rows x 2
            // chunks. Thread (r, chunk) = (tid / 2, tid % 2) stages, for each plane, chunk
            // `chunk` of row r of A's tile and of row r of B's (rows past the end repeat
            // the last: their values are never written): two source rows, fixed for the tile.
            static_assert(THREADS == 2 * BM && BM == BN, "a thread a row of A and of B, one chunk");
            const int lrow = tid >> 1, lchunk = tid & 1;
            const uint32_t *src_a = pa + std::min<int64_t>(i0 + lrow, n1 - 1) * NP * kw + 4 * lchunk;
            const uint32_t *src_b = pb + std::min<int64_t>(j0 + lrow, n2 - 1) * NP * kw + 4 * lchunk;
            auto load = [&](int64_t ks) {
                const uint32_t buf = base + uint32_t(ks % STAGES) * kStageBytes;
#pragma unroll
                for (int p = 0; p < NS; ++p) {
                    cp_async16(buf + chunk_offset(p, lrow, lchunk), src_a + p * kw + ks * KW);
                    cp_async16(buf + chunk_offset(p, BM + lrow, lchunk), src_b + p * kw + ks * KW);
                }
            };
#pragma unroll
            for (int s = 0; s < STAGES - 1; ++s) {
                if (s < ksteps) load(s);
                asm volatile("cp.async.commit_group;\n" ::);
            }
            // ldmatrix addresses: A fragments (16 rows x 256 bits) from lane's row
            // (lane & 15), chunk lane >> 4; B fragments (two n8 tiles) from row
            // (lane & 7) + 8 (lane >> 4), chunk (lane >> 3) & 1.
            const int ar = 64 * wm + (lane & 15), ac = lane >> 4;
            const int br = BM + 32 * wn + (lane & 7) + 8 * (lane >> 4), bc = (lane >> 3) & 1;
            for (int64_t ks = 0; ks < ksteps; ++ks) {
                asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
                __syncthreads();
                if (ks + STAGES - 1 < ksteps) load(ks + STAGES - 1);
                asm volatile("cp.async.commit_group;\n" ::);
                const uint32_t buf = base + uint32_t(ks % STAGES) * kStageBytes;
                // B: the staged planes of the warp's 4 n8 tiles, then the planes the terms
                // pair (and, flat, C for the second count), derived once.
                constexpr int ND = Fast ? 1 : T.nb + NC - 1;
                uint32_t braw[NS][4][2], bd[ND][4][2];
#pragma unroll
                for (int p = 0; p < NS; ++p)
#pragma unroll
                    for (int n2t = 0; n2t < 2; ++n2t)
                        ldmatrix_x4(buf + chunk_offset(p, br + 16 * n2t, bc), braw[p][2 * n2t][0],
                                    braw[p][2 * n2t][1], braw[p][2 * n2t + 1][0], braw[p][2 * n2t + 1][1]);
                if constexpr (!Fast)
#pragma unroll
                    for (int k = 0; k < ND; ++k)
#pragma unroll
                        for (int n8 = 0; n8 < 4; ++n8)
#pragma unroll
                            for (int r = 0; r < 2; ++r)
                                bd[k][n8][r] = derive(k < T.nb ? T.b[k] : CALLED, braw[0][n8][r], braw[1][n8][r],
                                                      braw[NS - 1][n8][r]);
                // A, one m16 tile at a time: its staged planes, each term's plane derived.
#pragma unroll
                for (int mt = 0; mt < 4; ++mt) {
                    uint32_t araw[NS][4];
#pragma unroll
                    for (int p = 0; p < NS; ++p)
                        ldmatrix_x4(buf + chunk_offset(p, ar + 16 * mt, ac), araw[p][0], araw[p][1], araw[p][2],
                                    araw[p][3]);
                    if constexpr (Fast) {
#pragma unroll
                        for (int p = 0; p < 2; ++p)
#pragma unroll
                            for (int n8 = 0; n8 < 4; ++n8) bmma(acc[0][mt][n8], araw[p], braw[p][n8][0], braw[p][n8][1]);
                    } else {
#pragma unroll
                        for (int q = 0; q < T.n; ++q) {
                            uint32_t af[4];
#pragma unroll
                            for (int r = 0; r < 4; ++r) af[r] = derive(T.a[q], araw[0][r], araw[1][r], araw[NS - 1][r]);
#pragma unroll
                            for (int n8 = 0; n8 < 4; ++n8)
                                bmma(acc[0][mt][n8], af, bd[T.bi[q]][n8][0], bd[T.bi[q]][n8][1]);
                        }
                        if constexpr (NC > 1)
#pragma unroll
                            for (int n8 = 0; n8 < 4; ++n8)
                                bmma(acc[1][mt][n8], araw[NS - 1], bd[T.nb][n8][0], bd[T.nb][n8][1]);
                    }
                }
            }
            asm volatile("cp.async.wait_group 0;\n" ::);
            __syncthreads();  // the buffers are refilled by the next tile
        };
        const bool fast = kAlleleForm<M> && !missing;
        if constexpr (kAlleleForm<M>) {
            if (fast) mainloop(std::true_type{});
            else mainloop(std::false_type{});
        } else {
            mainloop(std::false_type{});
        }

        // Epilogue: fragment (mt, n8) element e is row 16 mt + lane / 4 + 8 (e / 2),
        // column 8 n8 + 2 (lane % 4) + e % 2 of the warp tile. Fast: the count from the
        // row sums (above), and, flat, all d variants called in both. Weighted: the
        // weight missing in both rows, which missing_both left in D's own slot where any
        // was (0 elsewhere). A = B: off the diagonal each value goes to both triangles; a
        // diagonal tile computes both itself (its slots are read, then written, by one
        // thread each).
        const bool read_both = wmiss_a && tile_missing_a[ti] && tile_missing_b[tj], mirror = same && ti != tj;
        using out_t = typename M::out_t;
#pragma unroll
        for (int mt = 0; mt < 4; ++mt)
#pragma unroll
            for (int n8 = 0; n8 < 4; ++n8)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    // Elements 2 h and 2 h + 1: one row, columns j and j + 1.
                    const int64_t i = i0 + 64 * wm + 16 * mt + (lane >> 2) + 8 * h;
                    const int64_t j = j0 + 32 * wn + 8 * n8 + 2 * (lane & 3);
                    if (i >= n1 || j >= n2) continue;
                    out_t v[2];
#pragma unroll
                    for (int c = 0; c < 2; ++c) {
                        const int e = 2 * h + c;
                        const bool in = j + c < n2;
                        uint32_t cnt[2] = {uint32_t(acc[0][mt][n8][e]), NC > 1 ? uint32_t(acc[NC - 1][mt][n8][e]) : 0u};
                        if (fast) {
                            cnt[0] = rowsum_a[i] + (in ? rowsum_b[j + c] : 0u) - 2u * cnt[0];
                            cnt[1] = d;
                        }
                        const uint32_t both =
                            read_both && in ? *reinterpret_cast<const uint32_t *>(D + i * ldd + j + c) : 0u;
                        // (Fast: no call of either row missing, so no weight either.)
                        const uint32_t den =
                            !wmiss_a || !in ? 0u : fast ? W : W - wmiss_a[i] - wmiss_b[j + c] + both;
                        v[c] = m.finish(cnt, den);
                    }
                    out_t *p = D + i * ldd + j;
                    if (pair_stores && j + 1 < n2) {
                        // 8 or 16 aligned bytes: a warp's store covers whole sectors.
                        if constexpr (sizeof(out_t) == 8)
                            *reinterpret_cast<double2 *>(p) = make_double2(v[0], v[1]);
                        else
                            *reinterpret_cast<int2 *>(p) = make_int2(v[0], v[1]);
                    } else {
                        p[0] = v[0];
                        if (j + 1 < n2) p[1] = v[1];
                    }
                    if (mirror) {
                        D[j * ldd + i] = v[0];
                        if (j + 1 < n2) D[(j + 1) * ldd + i] = v[1];
                    }
                }
    }
}

// The smallest linear index (i * d + k) of a byte that is not 0, 1, 2 or missing.
__global__ void find_bad(const uint8_t *__restrict__ g, int64_t n, int64_t d, int64_t ldg, int missing,
                         unsigned long long *first) {
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n * d; t += int64_t(gridDim.x) * blockDim.x) {
        const uint8_t v = g[(t / d) * ldg + t % d];
        if (v > 2 && v != missing) atomicMin(first, static_cast<unsigned long long>(t));
    }
}

// One thread per packed byte: four genotypes as PLINK codes (g -> 00, 10, 11; missing
// -> 01), the unused high bits of a row's last byte 0.
__global__ void pack_bytes(const uint8_t *__restrict__ g, int64_t n, int64_t d, int64_t ldg,
                           uint8_t *__restrict__ packed, int64_t ldp) {
    const int64_t bytes = (d + 3) / 4;
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n * bytes;
         t += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i = t / bytes, b = t % bytes;
        unsigned v = 0;
        for (int s = 0; s < 4 && 4 * b + s < d; ++s) {
            const unsigned x = g[i * ldg + 4 * b + s];
            v |= (x == 0 ? 0u : x == 1 ? 2u : x == 2 ? 3u : 1u) << (2 * s);
        }
        packed[i * ldp + b] = static_cast<uint8_t>(v);
    }
}

constexpr size_t kMmaSmem = size_t(STAGES) * NP * (BM + BN) * 32;

int64_t tiles(const Problem &pb, bool same) {
    const int64_t ti = (pb.n1 + BM - 1) / BM, tj = (pb.n2 + BN - 1) / BN;
    return same ? ti * (ti + 1) / 2 : ti * tj;
}

}  // namespace

void pack_cuda(int device, void *stream_ptr, const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
               uint8_t *packed, int64_t ldp) {
    require_device(device);
    DeviceScope scope(device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    const int grid = prop.multiProcessorCount * 8;
    StreamBuffer first(sizeof(unsigned long long), stream);
    const unsigned long long none = ~0ULL;
    unsigned long long found = none;
    check(cudaMemcpyAsync(first.get(), &none, sizeof none, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    launch("genotype find_bad launch", find_bad, grid, 256, 0, stream, g, n, d, ldg, missing_value,
           static_cast<unsigned long long *>(first.get()));
    check(cudaMemcpyAsync(&found, first.get(), sizeof found, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (found != none) {
        const int64_t i = int64_t(found) / d, k = int64_t(found) % d;
        uint8_t v = 0;
        check(cudaMemcpy(&v, g + i * ldg + k, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
        fail(APAIRS_ERROR_INVALID_VALUE, "genotypes[{}][{}] = {}: expected 0, 1, 2 or missing_value = {}", i, k,
             int(v), missing_value);
    }
    launch("genotype pack launch", pack_bytes, grid, 256, 0, stream, g, n, d, ldg, packed, ldp);
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

CudaConfig plan_cuda(const Problem &pb, int device) {
    require_device(device);
    DeviceScope scope(device);
    CudaConfig cfg;
    cfg.device = device;
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    if (prop.major < 8)
        fail(APAIRS_ERROR_BACKEND_UNAVAILABLE,
             "device {} ({}) is sm_{}{}: genotype plans on CUDA need sm_80 or later (binary tensor-core MMA)", device,
             prop.name, prop.major, prop.minor);
    cfg.device_name = prop.name;
    cfg.sm_count = prop.multiProcessorCount;
    dispatch(pb.metric, pb.missing, pb.num(), pb.half(), [&](auto m) {
        using M = decltype(m);
        const auto kernel = genotype_mma<M>;
        cfg.allele_form = kAlleleForm<M>;
        cfg.smem = kMmaSmem;
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(cfg.smem)),
              "cudaFuncSetAttribute");
        cudaFuncAttributes fa{};
        check(cudaFuncGetAttributes(&fa, kernel), "cudaFuncGetAttributes");
        cfg.regs_per_thread = fa.numRegs;
        int blocks = 0;
        check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, THREADS, cfg.smem),
              "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        cfg.blocks_per_sm = std::max(blocks, 1);
    });
    check(cudaFuncSetAttribute(missing_both, cudaFuncAttributeMaxDynamicSharedMemorySize, kBothSmem),
          "cudaFuncSetAttribute");
    return cfg;
}

void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream_ptr, const void *A, const void *B,
                  void *D) {
    DeviceScope scope(cfg.device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    const int64_t row_bytes = (pb.d + 3) / 4, out = int64_t(pb.out_size());
    Staging st(cfg.device, stream);
    const int a_slot = st.in(A, pb.n1, row_bytes, pb.lda, "A");
    const int b_slot = st.in(B, pb.n2, row_bytes, pb.ldb, "B");
    const int d_slot = st.out(D, pb.n1, pb.n2 * out, pb.ldd * out, "D");
    st.stage();
    const Staging::View a = st.view(a_slot), b = st.view(b_slot), dd = st.view(d_slot);

    const int64_t kw = (pb.d + 32 * KW - 1) / (32 * KW) * KW;
    const bool same = a.ptr == b.ptr && a.pitch == b.pitch && pb.n1 == pb.n2;
    const bool w = pb.weighted();
    StreamBuffer planes_a(size_t(pb.n1 * NP * kw) * 4, stream);
    std::unique_ptr<StreamBuffer> planes_b;
    if (!same) planes_b = std::make_unique<StreamBuffer>(size_t(pb.n2 * NP * kw) * 4, stream);
    // Per row its sum of X and Y, per tile of rows its missing flag and, weighted, per row
    // its missing weight: zeroed, the conversion adds. Weighted: the missing-row masks
    // and the weight missing in both of each pair.
    std::unique_ptr<StreamBuffer> weights, masks_a, masks_b;
    const int64_t tiles_a = (pb.n1 + BM - 1) / BM, tiles_b = (pb.n2 + BN - 1) / BN;
    const int64_t ld_ma = tiles_a * 4, ld_mb = tiles_b * 4;
    const int grid_fill = cfg.sm_count * 16;
    const int64_t rows = pb.n1 + (same ? 0 : pb.n2), flags = tiles_a + (same ? 0 : tiles_b);
    const size_t meta_bytes = size_t(rows * (w ? 2 : 1) + flags) * 4;
    StreamBuffer meta(meta_bytes, stream);
    check(cudaMemsetAsync(meta.get(), 0, meta_bytes, stream), "cudaMemsetAsync");
    uint32_t *rs_a = static_cast<uint32_t *>(meta.get()), *rs_b = same ? rs_a : rs_a + pb.n1;
    uint32_t *tm_a = rs_a + rows, *tm_b = same ? tm_a : tm_a + tiles_a;
    uint32_t *wmiss_a = w ? tm_a + flags : nullptr, *wmiss_b = w ? (same ? wmiss_a : wmiss_a + pb.n1) : nullptr;
    if (w) {
        weights = std::make_unique<StreamBuffer>(size_t(pb.d) * 4, stream);
        check(cudaMemcpyAsync(weights->get(), pb.weights.data(), size_t(pb.d) * 4, cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync(weights)");
        masks_a = std::make_unique<StreamBuffer>(size_t(ld_ma * pb.d) * 4, stream);
        if (!same) masks_b = std::make_unique<StreamBuffer>(size_t(ld_mb * pb.d) * 4, stream);
    }
    const uint32_t *wts = w ? static_cast<const uint32_t *>(weights->get()) : nullptr;

    dispatch(pb.metric, pb.missing, pb.num(), pb.half(), [&](auto m) {
        using M = decltype(m);
        auto convert = [&](const Staging::View &v, int64_t n, void *planes, uint32_t *rs, uint32_t *tm, uint32_t *wm) {
            launch("genotype to_planes launch", to_planes, grid_fill, 256, 0, stream,
                   static_cast<const uint8_t *>(v.ptr), v.pitch, n, pb.d, kw, static_cast<uint32_t *>(planes), rs, tm,
                   wts, wm);
        };
        convert(a, pb.n1, planes_a.get(), rs_a, tm_a, wmiss_a);
        if (!same) convert(b, pb.n2, planes_b->get(), rs_b, tm_b, wmiss_b);
        const int64_t tiles_j = (pb.n2 + BN - 1) / BN, ntiles = tiles(pb, same);
        if (w) {
            auto mask = [&](const void *planes, int64_t n, int64_t ld, const uint32_t *tm, void *out) {
                launch("genotype missing_masks launch", missing_masks, grid_fill, 256, 0, stream,
                       static_cast<const uint32_t *>(planes), n, pb.d, kw, ld, tm, static_cast<uint32_t *>(out));
            };
            mask(planes_a.get(), pb.n1, ld_ma, tm_a, masks_a->get());
            if (!same) mask(planes_b->get(), pb.n2, ld_mb, tm_b, masks_b->get());
            const uint32_t *ma = static_cast<const uint32_t *>(masks_a->get());
            const uint32_t *mb = same ? ma : static_cast<const uint32_t *>(masks_b->get());
            const unsigned grid = unsigned(std::min<int64_t>(ntiles, int64_t(cfg.sm_count) * 3 * 8));
            launch("genotype missing_both launch", missing_both, grid, THREADS, kBothSmem, stream, ma, ld_ma, pb.n1,
                   mb, same ? ld_ma : ld_mb, pb.n2, pb.d, wts, tm_a, tm_b, static_cast<double *>(dd.ptr),
                   dd.pitch / out, tiles_j, ntiles, same);
        }
        const uint32_t *pa = static_cast<const uint32_t *>(planes_a.get());
        const uint32_t *pbp = same ? pa : static_cast<const uint32_t *>(planes_b->get());
        const unsigned grid = unsigned(std::min<int64_t>(ntiles, int64_t(cfg.sm_count) * cfg.blocks_per_sm * 8));
        // Columns j, j + 1 (j even) in one store where every such pair is aligned.
        const bool pair_stores = reinterpret_cast<uintptr_t>(dd.ptr) % (2 * out) == 0 && dd.pitch % (2 * out) == 0;
        launch("genotype kernel launch", genotype_mma<M>, grid, THREADS, size_t(cfg.smem), stream, m, pa, pb.n1, pbp,
               pb.n2, kw, uint32_t(pb.d), rs_a, rs_b, tm_a, tm_b, wmiss_a, wmiss_b, uint32_t(pb.weight_sum),
               static_cast<typename M::out_t *>(dd.ptr), dd.pitch / out, tiles_j, ntiles, same, pair_stores);
    });
    st.finish();
}

}  // namespace apairs::genotype
