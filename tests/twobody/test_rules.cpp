// The two-body rules on the host (internal, suite unit): the squared domain that the CUDA
// engine uses for L2 histograms. sqrt_threshold(x) is the least s with sqrt(s) >= x, and
// bins over those thresholds give every sum of squares the slot its square root gets
// over the edges, from any first guess; the periodic box's minimum image lies within
// half a side up to apairs.h's bound.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "catch.hpp"
#include "twobody/rules.hpp"

using namespace apairs::twobody;

TEMPLATE_TEST_CASE("sqrt_threshold is the least sum of squares whose square root reaches x", "[twobody][rules]", float,
                   double) {
    using T = TestType;
    const T inf = std::numeric_limits<T>::infinity();
    std::mt19937_64 rng(3);
    std::uniform_real_distribution<double> u(-30.0, 30.0);
    std::vector<T> xs = {T(1), T(2), T(3), T(0.1), std::numeric_limits<T>::denorm_min(),
                         std::numeric_limits<T>::min(), std::sqrt(std::numeric_limits<T>::max()),
                         std::nextafter(std::sqrt(std::numeric_limits<T>::max()), inf)};
    for (int q = 0; q < 20000; ++q) xs.push_back(static_cast<T>(std::exp2(u(rng))));
    for (T x : xs) {
        const T s = sqrt_threshold(x);
        INFO("x = " << x << ", threshold " << s);
        CHECK(std::sqrt(s) >= x);
        if (s > T(0)) CHECK(std::sqrt(std::nextafter(s, T(0))) < x);
    }
    CHECK(sqrt_threshold(T(0)) == -inf);
    CHECK(sqrt_threshold(T(-2)) == -inf);
    CHECK(sqrt_threshold(inf) == inf);
}

TEMPLATE_TEST_CASE("bins in the squared domain give each sum of squares its square root's slot", "[twobody][rules]",
                   float, double) {
    using T = TestType;
    std::mt19937_64 rng(5);
    for (int trial = 0; trial < 6; ++trial) {
        // Uniform edges from rmin (sometimes negative or 0) over a few units.
        const int nbins = trial % 2 ? 256 : 7;
        const double rmin = trial < 2 ? 0.0 : trial < 4 ? -0.75 : 0.3, rmax = rmin + 1.0 + trial;
        std::vector<double> edges(size_t(nbins + 1));
        for (int b = 0; b <= nbins; ++b) edges[size_t(b)] = rmin + (rmax - rmin) * b / nbins;
        const std::vector<T> X = extended_edges<T>(edges);
        std::vector<T> Xs = X;
        for (size_t q = 1; q < Xs.size(); ++q) Xs[q] = sqrt_threshold(Xs[q]);
        const Bins<T> plain = make_bins(X, edges);
        Bins<T> sq = make_bins(Xs, edges);
        sq.squared = true;
        std::uniform_real_distribution<double> u(0.0, (rmax + 1) * (rmax + 1));
        for (int q = 0; q < 20000; ++q) {
            // Sums of squares: random, on an edge's square, its neighbours, 0, +inf, NaN.
            T s = static_cast<T>(u(rng));
            const T e = X[size_t(1 + rng() % size_t(nbins + 1))];
            switch (q % 8) {
            case 1: s = e * e; break;
            case 2: s = std::nextafter(e * e, T(0)); break;
            case 3: s = std::nextafter(e * e, std::numeric_limits<T>::infinity()); break;
            case 4: s = q % 16 == 4 ? T(0) : std::numeric_limits<T>::infinity(); break;
            case 5: s = q % 16 == 5 ? std::numeric_limits<T>::quiet_NaN() : s; break;
            }
            const T v = std::sqrt(s);
            const int want = plain.slot(v);
            INFO("s = " << s << ", sqrt " << v << ", trial " << trial);
            CHECK(sq.slot(s) == want);
            CHECK(sq.fix(s, sq.guess(s)) == want);
            CHECK(sq.fix(s, int(rng() % uint64_t(nbins + 2))) == want);  // any guess, fixed
            CHECK(plain.fix(v, plain.guess(v)) == want);
        }
    }
}

// apairs.h's periodic box: |t'| <= L / 2 wherever |t| <= 2^21 L (F32; 2^50 L in F64), for
// sides from 2^-20 to 2^20 and differences at every scale up to that bound, at whole and
// half multiples of L and next to them.
TEMPLATE_TEST_CASE("the minimum image is within half a side up to the header's bound", "[twobody][rules]", float,
                   double) {
    using T = TestType;
    const int max_lg = sizeof(T) == 4 ? 21 : 50;
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> lg_side(-20.0, 20.0), unit(-1.0, 1.0);
    std::uniform_int_distribution<int> lg_t(-3, max_lg);
    int64_t bad = 0;
    for (int q = 0; q < 200000; ++q) {
        const T side = static_cast<T>(std::exp2(lg_side(rng))), inv = T(1) / side, half = side * T(0.5);
        const int k = lg_t(rng);
        T t = static_cast<T>(unit(rng) * std::ldexp(double(side), k));
        if (q % 4 == 1) t = static_cast<T>(std::nearbyint(double(t) / double(side))) * side;  // near a multiple
        if (q % 4 == 2) {  // next to a half multiple
            const T h = static_cast<T>((std::nearbyint(double(t) / double(side)) + 0.5) * double(side));
            t = std::nextafter(h, q % 8 < 4 ? T(0) : std::numeric_limits<T>::infinity());
        }
        if (!(std::fabs(t) <= std::ldexp(side, max_lg))) continue;
        const T r = min_image(t, side, inv);
        if (!(r <= half && r >= -half)) {
            if (++bad <= 5) WARN("t = " << t << ", side = " << side << ": t' = " << r);
        }
    }
    CHECK(bad == 0);
}
