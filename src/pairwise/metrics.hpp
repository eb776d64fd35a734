// One small functor per metric, shared by the host and the CUDA engines.
//
// A metric M describes F(a, b) over vectors a, b of length d as a fold:
//   acc_t init()                          the empty accumulator
//   void  step(acc_t&, in_t a, in_t b)    one dimension
//   void  merge(acc_t&, const acc_t&)     add a slice's partial result
//   out_t finish(const acc_t&)            the distance
// The engines fold each slice of at most d' dimensions into a fresh accumulator and
// merge the slices in order, so both backends sum in the same blocked order.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/error.hpp"

namespace apairs::metric {

// Math that resolves to the right float/double function on host and device.
APAIRS_HD float absv(float x) { return fabsf(x); }
APAIRS_HD double absv(double x) { return fabs(x); }
APAIRS_HD float sqrtv(float x) { return sqrtf(x); }
APAIRS_HD double sqrtv(double x) { return sqrt(x); }
APAIRS_HD float powv(float x, float y) { return powf(x, y); }
APAIRS_HD double powv(double x, double y) { return pow(x, y); }

// max that lets a NaN through (fmax would drop it).
template <class T>
APAIRS_HD T max_nan(T a, T b) { return (b > a || b != b) ? b : a; }

template <class T>
struct L1 {
    using in_t = T; using acc_t = T; using out_t = T;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += absv(a - b); }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct SqEuclidean {
    using in_t = T; using acc_t = T; using out_t = T;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { T t = a - b; s += t * t; }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct L2 : SqEuclidean<T> {
    APAIRS_HD T finish(const T &s) const { return sqrtv(s); }
};

template <class T>
struct Lp {
    using in_t = T; using acc_t = T; using out_t = T;
    T p, inv_p;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += powv(absv(a - b), p); }
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
    T inv_p;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const {
        const T t = absv(a - b), t2 = t * t;
        s += K == 3 ? t2 * t : t2 * t2;
    }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return powv(s, inv_p); }
};

template <class T>
struct LInf {
    using in_t = T; using acc_t = T; using out_t = T;
    APAIRS_HD acc_t init() const { return T(0); }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s = max_nan(s, absv(a - b)); }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s = max_nan(s, t); }
    APAIRS_HD out_t finish(const acc_t &s) const { return s; }
};

template <class T>
struct Dot {
    using in_t = T; using acc_t = T; using out_t = T;
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
    APAIRS_HD acc_t init() const { return 0; }
    APAIRS_HD void step(acc_t &s, T a, T b) const { s += (a != b) ? 1 : 0; }
    APAIRS_HD void merge(acc_t &s, const acc_t &t) const { s += t; }
    APAIRS_HD out_t finish(const acc_t &s) const { return static_cast<Out>(s); }
};

}  // namespace apairs::metric
