// One small functor per metric, shared by the host and the CUDA engines.
//
// A metric M describes F(a, b) over vectors a, b of length d as a fold:
//   acc_t init()                          the empty accumulator
//   void  step(acc_t&, in_t a, in_t b)    one dimension
//   void  merge(acc_t&, const acc_t&)     add a slice's partial result
//   out_t finish(const acc_t&)            the distance
//   static constexpr bool reorderable     true when the result does not depend on the
//                                         order of the steps (integer counts, max)
// The engines fold each slice of at most d' dimensions into a fresh accumulator and
// merge the slices in order, so both backends sum in the same blocked order.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/error.hpp"

namespace apairs::metric {

// Math that resolves to the right float/double function on host and device.
APAIRS_HD float absv(float x) { return fabsf(x); }
APAIRS_HD double absv(double x) { return fabs(x); }
APAIRS_HD float sqrtv(float x) { return sqrtf(x); }
APAIRS_HD double sqrtv(double x) { return sqrt(x); }
APAIRS_HD float powv(float x, float y) { return powf(x, y); }
APAIRS_HD double powv(double x, double y) { return pow(x, y); }

// LP's general p at or above this takes pow_term<true> (below).
inline constexpr double kLpScaledMinP = 1.25;

// t^p for t >= 0 (or NaN), p > 0: LP's step. On the device in float, 2^(p log2 t) with
// t's exponent split off exactly and the hardware's lg2 and ex2 approximations on the
// rest (two special-function instructions where powf takes about twenty instructions).
// Its error, within LP's float bound (bounds.hpp): lg2 on [1, 2) errs by at most 2^-22
// absolutely, the exponent y = p log2 t is formed with one rounding, and ex2 adds 2^-22
// relative, so the term errs by about (3.5 p + 2 p |ln t| + 3) u relatively. Subnormal
// t is first scaled by 2^24 (exactly); 0, inf and NaN map to themselves.
//   kScaled = false (any p > 0): t is scaled where it is subnormal.
//   kScaled = true (p >= kLpScaledMinP): every t is scaled, with the same bits: only
//     t >= 2^104 overflow, whose t^p >= 2^130 overflows anyway, and 0 gives 2^(-151 p)
//     < 2^-188, which rounds to 0; so only inf and NaN need a select.
// lg2 takes its .ftz form: its argument lies in [1, 2), where the plain form's three
// instructions for subnormal arguments never act. ex2 keeps the plain form, whose three
// for y < -126 make subnormal results: a term at the bottom of LP's range (2^-126 or a
// little more) can come out with y just below -126, through y's error (p 2^-22 from lg2,
// up to 2^-17 from p's rounding to float), and must not be flushed to 0. So a term takes
// 16 issue slots (kScaled; 19 otherwise) against the 16 cycles a warp's two
// special-function instructions hold their unit, where it took 24: the same bits as
// before for every input (tools/gpu-notes.md, runs 199 and 203). Elsewhere: pow.
template <bool kScaled>
APAIRS_HD float pow_term(float t, float p) {
#if defined(__CUDA_ARCH__)
    const bool scale = kScaled || t < 1.17549435e-38f;  // every t, or t below the smallest normal float
    const float ts = scale ? t * 16777216.0f : t;
    const unsigned bits = __float_as_uint(ts);
    // The biased exponent as a float without a conversion instruction: 2^23 + field - 2^23.
    const float e = __uint_as_float(0x4b000000u | (bits >> 23)) - (scale ? 8388759.0f : 8388735.0f);
    const float m = __uint_as_float((bits & 0x007fffffu) | 0x3f800000u);  // [1, 2)
    float lm, r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(lm) : "f"(m));
    const float y = fmaf(p, e, p * lm);
    asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(y));
    if (kScaled) return t < __int_as_float(0x7f800000) ? r : t;
    return (t == 0.0f || !(t < __int_as_float(0x7f800000))) ? t : r;
#else
    return powf(t, p);
#endif
}
template <bool kScaled>
APAIRS_HD double pow_term(double t, double p) { return pow(t, p); }

// sqrt(t) for t >= 0 (or NaN): LP's half-integer step. On the device in float, t
// rsqrt(t) by the hardware's approximation, refined by one Newton step on the exact
// residual t - s^2 (one special-function instruction and four arithmetic ones, where
// the correctly rounded sqrtf takes a longer sequence with a called slow path): within
// one ulp; 0, inf and NaN map to themselves. Elsewhere: the correctly rounded sqrt.
APAIRS_HD float sqrt_term(float t) {
#if defined(__CUDA_ARCH__)
    float r;
    asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(t));
    const float s = t * r;
    const float q = fmaf(fmaf(-s, s, t), 0.5f * r, s);
    return (t == 0.0f || t == __int_as_float(0x7f800000)) ? t : q;
#else
    return sqrtf(t);
#endif
}
APAIRS_HD double sqrt_term(double t) { return sqrt(t); }

// max that lets a NaN through (fmax would drop it); on the device one instruction for
// float (max.NaN, sm_80 and later).
// Only for a, b >= 0 or NaN (LINF's |t| and maxima of them).
template <class T>
APAIRS_HD T max_nan(T a, T b) {
#if defined(__CUDA_ARCH__)
#if __CUDA_ARCH__ >= 800
    if constexpr (std::is_same_v<T, float>) {
        float r;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
        return r;
    }
#endif
    return (b > a || b != b) ? b : a;
#else
    // On the host, the larger bit pattern as a signed integer: for signs clear it orders
    // the values as numbers and puts every NaN above infinity, so a NaN wins (its payload
    // is the larger one). One integer max a lane, which the compiler vectorises (the
    // comparisons above compile to scalar branches).
    using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
    I ia, ib;
    std::memcpy(&ia, &a, sizeof a);
    std::memcpy(&ib, &b, sizeof b);
    const I m = ib > ia ? ib : ia;
    T r;
    std::memcpy(&r, &m, sizeof r);
    return r;
#endif
}

template <class T>
struct L1 {
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = false;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += absv(a - b); }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct SqEuclidean {
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = false;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { T t = a - b; s += t * t; }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct L2 : SqEuclidean<T> {
    APAIRS_HD T finish(const T &s) const { return sqrtv(s); }
};

// LP with a general p; kScaled: p >= kLpScaledMinP, float only (pow_term).
template <class T, bool kScaled = false>
struct Lp {
    static_assert(!kScaled || std::is_same_v<T, float>);
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = false;
    T p, inv_p;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += pow_term<kScaled>(absv(a - b), p); }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return powv(s, inv_p); }
};

// LP with a small integer p = K (3 or 4): |t|^K by multiplication, not pow (a few
// instructions instead of a special-function sequence; (K - 1) roundings, within LP's
// bound); only the final root takes pow.
template <class T, int K>
struct LpInt {
    static_assert(K == 3 || K == 4, "LpInt: p = 3 or 4");
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = false;
    T inv_p;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const {
        const T t = absv(a - b), t2 = t * t;
        s += K == 3 ? t2 * t : t2 * t2;
    }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return powv(s, inv_p); }
};

// LP with a half-integer p = K + 1/2 (K = 0..3): |t|^p as |t|^K sqrt|t|, a square root
// within one ulp (sqrt_term) and K multiplications, no pow (within LP's bound).
template <class T, int K>
struct LpHalf {
    static_assert(K >= 0 && K <= 3, "LpHalf: p = 0.5, 1.5, 2.5 or 3.5");
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = false;
    T inv_p;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const {
        const T t = absv(a - b);
        T r = sqrt_term(t);
        for (int q = 0; q < K; ++q) r *= t;
        s += r;
    }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return powv(s, inv_p); }
};

template <class T>
struct LInf {
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = true;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s = max_nan(s, absv(a - b)); }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s = max_nan(s, t); }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct Dot {
    using in_t = T; using acc_t = T; using out_t = T;
    static constexpr bool reorderable = false;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += a * b; }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct CosineAcc { T ab, aa, bb; };

template <class T>
struct Cosine {
    using in_t = T; using acc_t = CosineAcc<T>; using out_t = T;
    static constexpr bool reorderable = false;
    APAIRS_HD acc_t init() const { return {T(0), T(0), T(0)}; }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s.ab += a * b; s.aa += a * a; s.bb += b * b; }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s.ab += t.ab; s.aa += t.aa; s.bb += t.bb; }
    // An all-zero vector is orthogonal to every vector without a NaN, infinite ones
    // included: a.b is then 0 * inf = NaN, so the zero test must come first, and a NaN
    // in the other vector shows in its squared norm (inf * inf is inf, never NaN).
    // Otherwise an infinite coordinate makes a.b infinite or NaN, hence the result NaN.
    APAIRS_HD out_t finish(const acc_t &s) const {
        if (s.aa == T(0)) return s.bb != s.bb ? s.bb : T(1);
        if (s.bb == T(0)) return s.aa != s.aa ? s.aa : T(1);
        if (s.ab != s.ab) return s.ab;  // a NaN, or inf * 0
        T c = s.ab / (sqrtv(s.aa) * sqrtv(s.bb));
        c = c > T(1) ? T(1) : (c < T(-1) ? T(-1) : c);  // comparisons keep a NaN
        return T(1) - c;
    }
};

// Counts differing coordinates. in_t is float, double or uint8_t; the count is
// exact in int32 (d < 2^31 is checked at plan time) and converted once at the end.
template <class T, class Out>
struct Hamming {
    using in_t = T; using acc_t = int32_t; using out_t = Out;
    static constexpr bool reorderable = true;
    APAIRS_HD acc_t init() const { return 0; }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += (a != b) ? 1 : 0; }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return static_cast<Out>(s); }
};

}  // namespace apairs::metric
