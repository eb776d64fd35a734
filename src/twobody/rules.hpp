// The rules every two-body engine applies to a finished pair, written once for the host
// and CUDA engines: which radius slot or histogram slot a distance falls in, the
// fixed-point weight of a pair, the minimum image, and the kNN order. Thresholds arrive
// already converted to the distance type (problem.hpp: floor_to, ceil_to,
// squared_threshold), so every comparison here is exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/error.hpp"
#include "pairwise/metrics.hpp"
#include "twobody/problem.hpp"

namespace apairs::twobody {

// ---- Radii: the first q with v <= R[q] (R ascending), or n when none (NaN: n). --------
template <class V>
APAIRS_HD int radius_slot(V v, const V *R, int n) {
    if (n <= 16) {
        int q = 0;
        while (q < n && !(v <= R[q])) ++q;
        return q;
    }
    int lo = 0, hi = n;  // invariant: v > R[q] for q < lo; v <= R[q] or NaN-free for q >= hi
    if (!(v <= R[n - 1])) return n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (v <= R[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

// ---- Histogram: the output slot of a distance v (apairs.h: 0 below e_0, 1 + b for bin
// b, nbins + 1 at or above e_nbins or NaN). X: the nbins + 1 edges ceil-converted to V
// (so v >= e_b <=> v >= X[1 + b]) between sentinels: X[0] = -inf, X[nbins + 2] =
// X[nbins + 3] = +inf (the type's extremes for integers), nbins + 4 values; slot s holds
// X[s] <= v < X[s + 1]. slot() is exact (a binary search); uniform bins first guess the
// slot from (v - e_0) * nbins / (rmax - rmin) in G, the distance's own precision, and
// fix() corrects the guess by one step each way against the edges and falls back to
// slot() in the rare case (a NaN, +inf, a guess off by more than one) that is not enough.
//
// Squared (L2 on CUDA): v is the sum of squares s whose distance is sqrt(s), and X holds
// sqrt_threshold of each edge, so that sqrt(s) >= e <=> s >= X (exact, no square root per
// pair); only the guess takes an approximate square root.
template <class V>
struct Bins {
    using G = typename std::conditional<std::is_same<V, float>::value, float, double>::type;
    const V *X;
    int nbins;
    G e0, inv_width;
    bool squared = false;

    APAIRS_HD int slot(V v) const {
        const V *E = X + 1;
        if (!(v >= E[0])) return v < E[0] ? 0 : nbins + 1;  // below, or NaN
        if (!(v < E[nbins])) return nbins + 1;
        int lo = 0, hi = nbins - 1;  // E[lo] <= v < E[hi + 1]
        while (lo < hi) {
            const int mid = (lo + hi + 1) / 2;
            if (v >= E[mid]) lo = mid;
            else hi = mid - 1;
        }
        return lo + 1;
    }
    // Branch-free, so that a loop of guesses vectorises.
    APAIRS_HD int guess(V v) const {
        G x = static_cast<G>(v);
        if (squared) {
#if defined(__CUDA_ARCH__)
            const float f = static_cast<float>(x);
            x = static_cast<G>(f * rsqrtf(f));  // approximate; 0 and +inf give NaN, fixed below
#else
            x = std::sqrt(x);
#endif
        }
        G g = (x - e0) * inv_width + G(1);
        g = g >= G(0) ? g : G(0);  // and NaN -> 0
        g = g <= G(nbins + 1) ? g : G(nbins + 1);
        return static_cast<int>(g);
    }
    APAIRS_HD int fix(V v, int s) const {
        const bool down = v < X[s], up = !(v < X[s + 1]);  // a NaN goes up, then to slot()
        if (__builtin_expect(!(down | up), 1)) return s;   // X[s] <= v < X[s + 1]: right
        s += (up ? 1 : 0) - (down ? 1 : 0);
        return (X[s] <= v && v < X[s + 1]) ? s : slot(v);
    }
};

// When a uniform bin computed from the distance is certain (the engines' fast paths). With
// u the unit roundoff of V and r the distance v itself or an approximation within rel u
// |v| of it, t = fl(fl(r - e0) * iw) (e0, iw: rmin and nbins / (rmax - rmin) rounded to
// V) is within (3.1 + rel) u |t| + (1.1 + rel) u |rmin| / w of tau = (v - rmin) / w (w the
// bin width); t - 1/2 = fma(r, iw, -rmin iw - 1/2) (the constant rounded to V) within
// (2 + rel) u |t| + (2 + rel) u |rmin| / w + u. Each edge's X (rmin + b w in double, rounded up to V) lies at
// tau = b + [-2^-50, 2.1 u max(|rmin|, |rmax|) / w]. The margin k |t| + c below covers
// both, with room: t <= -margin is slot 0, t >= nbins + margin slot nbins + 1, and
// floor(t) + 1 is the slot when the fraction of t lies in [margin, 1 - margin].
struct BinMargin {
    double k, c;
};

template <class V>
BinMargin bin_margin(const std::vector<double> &edges, double rel) {
    const double u = std::ldexp(1.0, -std::numeric_limits<V>::digits);
    const double rmin = edges.front(), rmax = edges.back(), w = (rmax - rmin) / double(edges.size() - 1);
    const double big = std::max(std::fabs(rmin), std::fabs(rmax));
    return {(4 + rel) * u, ((2 + rel) * std::fabs(rmin) + 2.5 * big) * u / w + (4 + rel) * u};
}

// The smallest s with sqrt(s) >= x (IEEE square roots, rounded to nearest): s >= it <=>
// sqrt(s) >= x for every s >= 0 (a sum of squares). -inf for x <= 0, +inf for +inf.
template <class V>
V sqrt_threshold(V x) {
    const V inf = std::numeric_limits<V>::infinity();
    if (!(x > V(0))) return -inf;
    if (std::isinf(x)) return x;
    V s = x * x;  // within an ulp or two of the answer
    while (s > V(0) && std::sqrt(std::nextafter(s, V(0))) >= x) s = std::nextafter(s, V(0));
    while (s < inf && !(std::sqrt(s) >= x)) s = std::nextafter(s, inf);
    return s;
}

// The extended edges of Bins from the double edges of a problem.
template <class V>
std::vector<V> extended_edges(const std::vector<double> &edges) {
    const V lo = std::numeric_limits<V>::has_infinity ? -std::numeric_limits<V>::infinity()
                                                      : std::numeric_limits<V>::lowest();
    const V hi = std::numeric_limits<V>::has_infinity ? std::numeric_limits<V>::infinity()
                                                      : std::numeric_limits<V>::max();
    std::vector<V> x;
    x.reserve(edges.size() + 3);
    x.push_back(lo);
    for (double e : edges) x.push_back(ceil_to<V>(e));
    x.push_back(hi);
    x.push_back(hi);
    return x;
}

template <class V>
Bins<V> make_bins(const std::vector<V> &x, const std::vector<double> &edges) {
    using G = typename Bins<V>::G;
    const int nbins = static_cast<int>(edges.size()) - 1;
    return Bins<V>{x.data(), nbins, static_cast<G>(edges.front()),
                   static_cast<G>(double(nbins) / (edges.back() - edges.front()))};
}

// ---- Weights: w_a w_b in double, rounded to the nearest multiple of 2^-32 (ties to
// even); |w| <= 2^15 keeps it below 2^62 in magnitude. -------------------------------
APAIRS_HD int64_t fixed_weight(double wa, double wb) {
    return static_cast<int64_t>(rint(wa * wb * 4294967296.0));
}
APAIRS_HD int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
    return __clzll(static_cast<long long>(x));
#else
    return __builtin_clzll(x);
#endif
}
// The 128-bit fixed-point sum hi * 2^64 + lo (two's complement) times 2^-32, rounded to
// the nearest double (ties to even) by integer arithmetic: the same bits on the host
// and the device.
APAIRS_HD double fixed128_to_double(int64_t hi, uint64_t lo) {
    using u128 = unsigned __int128;
    const u128 x = (static_cast<u128>(static_cast<uint64_t>(hi)) << 64) | lo;
    const bool neg = hi < 0;
    const u128 m = neg ? u128(0) - x : x;
    if (m == 0) return 0.0;
    const uint64_t mh = static_cast<uint64_t>(m >> 64);
    const int msb = mh ? 127 - clz64(mh) : 63 - clz64(static_cast<uint64_t>(m));
    uint64_t mant = static_cast<uint64_t>(m);
    int sh = 0;
    if (msb > 52) {
        sh = msb - 52;
        mant = static_cast<uint64_t>(m >> sh);
        const u128 rem = m & ((u128(1) << sh) - 1), half = u128(1) << (sh - 1);
        if (rem > half || (rem == half && (mant & 1))) ++mant;  // 2^53 at most: exact
    }
    const double r = ldexp(static_cast<double>(mant), sh - 32);
    return neg ? -r : r;
}

APAIRS_HD float rintv(float x) { return rintf(x); }
APAIRS_HD double rintv(double x) { return rint(x); }
// x - y z with the product rounded first, on the device too (where the compiler would
// otherwise fuse them into one fma): the host's bits.
template <class T>
APAIRS_HD T sub_product(T x, T y, T z) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(T) == 4) return __fsub_rn(x, __fmul_rn(y, z));
    else return __dsub_rn(x, __dmul_rn(y, z));
#else
    return x - y * z;
#endif
}
// The minimum image of a difference t (apairs.h): t - side rint(t inv_side), inv_side =
// 1 / side rounded to T, each operation rounded in T; then, where the reciprocal's
// rounding chose the wrong multiple (far from the origin, or t just past half a side),
// one side more (exact: Sterbenz), so that |result| <= side / 2 wherever |t| <= 2^21
// sides (F32; 2^50 in F64: to first order |t - side q| <= side / 2 + 3 u |t|, within
// 3 side / 2 there; test_rules.cpp samples the bound).
template <class T>
APAIRS_HD T min_image(T t, T side, T inv_side) {
    T r = sub_product(t, side, rintv(t * inv_side));
    const T half = side * T(0.5);
    if (r > half) r -= side;
    else if (r < -half) r += side;
    return r;
}

// ---- kNN order: (distance, index), a NaN after every number. -------------------------
template <class V>
APAIRS_HD bool nearer(V d1, int64_t i1, V d2, int64_t i2) {
    const bool n1 = d1 != d1, n2 = d2 != d2;
    if (n1 || n2) return n1 && n2 ? i1 < i2 : n2;
    return d1 < d2 || (d1 == d2 && i1 < i2);
}

// Whether the engines count metric M in its squared domain (L2: compare sum of squares
// with squared thresholds, no square root).
template <class M>
struct SquaredDomain { static constexpr bool value = false; };
template <class T>
struct SquaredDomain<metric::L2<T>> { static constexpr bool value = true; };

}  // namespace apairs::twobody
