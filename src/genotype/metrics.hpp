// One small functor per genotype metric, shared by the host engines (portable, POPCNT,
// AVX2 and AVX-512) and the CUDA engine.
//
// The engines hold each packed row as three bit planes over 64-variant words (32 on CUDA)
// (planes.hpp): x = [g >= 1], y = [g == 2], m = [called]; x and y are 0 where the call is
// missing. g = x + y (a thermometer code), so |g_a - g_b| = (x_a ^ x_b) + (y_a ^ y_b).
// A metric M is
//   kCounts                        how many counts per pair it accumulates (1 or 2)
//   step(C *c, xa, ya, ma, xb, yb, mb)  adds one word's (or one vector's) counts; W is
//                                  the word type (uint64_t, or an engine's vector type
//                                  with &, |, ^, ~ and a popc() found by lookup), C what
//                                  popc(W) returns
//   out_t finish(const uint32_t *c, uint32_t den)  the value of D; den is the weighted
//                                  denominator W - w_miss(a, b) (WEIGHTED metrics only)
#pragma once

#include <cstdint>

#include "common/hd.hpp"

namespace apairs::genotype::metric {

APAIRS_HD uint32_t popc(uint32_t x) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__popc(x));
#else
    return static_cast<uint32_t>(__builtin_popcount(x));
#endif
}

APAIRS_HD uint32_t popc(uint64_t x) {
#if defined(__CUDA_ARCH__)
    return static_cast<uint32_t>(__popcll(x));
#else
    return static_cast<uint32_t>(__builtin_popcountll(x));
#endif
}

// What every count metric shares: one count, written as int32.
struct Count {
    using out_t = int32_t;
    static constexpr int kCounts = 1;
    APAIRS_HD out_t finish(const uint32_t *c, uint32_t) const { return static_cast<out_t>(c[0]); }
};

// Differing genotypes.
struct Hamming : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &ma, const W &xb, const W &yb, const W &mb) const {
        c[0] += popc(((xa ^ xb) | (ya ^ yb)) & (ma & mb));
    }
};

// sum |g_a - g_b|.
struct AlleleCount : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &ma, const W &xb, const W &yb, const W &mb) const {
        const W m = ma & mb;
        c[0] += popc((xa ^ xb) & m) + popc((ya ^ yb) & m);
    }
};

// |g_a - g_b| = 2: both planes differ.
struct Ibs0 : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &ma, const W &xb, const W &yb, const W &mb) const {
        c[0] += popc((xa ^ xb) & (ya ^ yb) & (ma & mb));
    }
};

// |g_a - g_b| = 1: exactly one plane differs.
struct Ibs1 : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &ma, const W &xb, const W &yb, const W &mb) const {
        c[0] += popc((xa ^ xb ^ ya ^ yb) & (ma & mb));
    }
};

// g_a = g_b, both called.
struct Ibs2 : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &ma, const W &xb, const W &yb, const W &mb) const {
        c[0] += popc(~((xa ^ xb) | (ya ^ yb)) & (ma & mb));
    }
};

// Variants called in both.
struct NonMissing : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &, const W &, const W &ma, const W &, const W &, const W &mb) const {
        c[0] += popc(ma & mb);
    }
};

// The allele count's form for rows without missing calls: x and y are then binary over
// every variant, |x_a - x_b| = x_a + x_b - 2 x_a x_b, so
//   sum |g_a - g_b| = S_a + S_b - 2 (popc(x_a & x_b) + popc(y_a & y_b))
// with S a row's sum of popc(x) + popc(y): half the operations a word. This counts the
// shared part; the engines add the rows' sums (exact integers: the same values).
struct AlleleShared : Count {
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &, const W &xb, const W &yb, const W &) const {
        c[0] += popc(xa & xb) + popc(ya & yb);
    }
};

// PLINK 1.9's --distance values (apairs.h): the allele count c scaled for missing calls,
// s = (num / den) * c with num = d, den = N (flat-missing; N counted as a second count)
// or num = W, den = W - w_miss(a, b) (weighted, den from the engine), then
//   kind 0: s (.dist)   kind 1: 1 - s * half (.mibs)   kind 2: s * half (.mdist)
// with half = 0.5 / d: PLINK's operations in PLINK's order, in double.
template <int Kind, bool Weighted>
struct Plink {
    using out_t = double;
    static constexpr int kCounts = Weighted ? 1 : 2;
    double num, half;
    template <class W, class C>
    APAIRS_HD void step(C *c, const W &xa, const W &ya, const W &ma, const W &xb, const W &yb, const W &mb) const {
        const W m = ma & mb;
        c[0] += popc((xa ^ xb) & m) + popc((ya ^ yb) & m);
        if constexpr (!Weighted) c[1] += popc(m);
    }
    APAIRS_HD out_t finish(const uint32_t *c, uint32_t den) const {
        // No call missing in the pair: the scale num / num is exactly 1 (num > 0), so the
        // division, the costliest operation of a pair on the GPU, is skipped bit for bit.
        const double q = static_cast<double>(Weighted ? den : c[1]), c0 = static_cast<double>(c[0]);
        const double s = q == num ? c0 : (num / q) * c0;
        if constexpr (Kind == 0) return s;
        else if constexpr (Kind == 1) {
            // s * half rounded on its own, as PLINK (built for baseline x86-64) does: the
            // device compiler would fuse it with the subtraction into an FMA (one rounding
            // fewer, another last bit), so there the product is an explicit IEEE multiply.
#if defined(__CUDA_ARCH__)
            return 1.0 - __dmul_rn(s, half);
#else
            return 1.0 - s * half;
#endif
        }
        else return s * half;
    }
};

// The metrics whose first count is the allele count (AlleleShared's form applies).
template <class M> inline constexpr bool kAlleleForm = false;
template <> inline constexpr bool kAlleleForm<AlleleCount> = true;
template <int K, bool W> inline constexpr bool kAlleleForm<Plink<K, W>> = true;

}  // namespace apairs::genotype::metric
