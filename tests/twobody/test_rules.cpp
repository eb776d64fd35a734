// The two-body rules on the host (internal, suite unit): the squared domain that the CUDA
// engine uses for L2 histograms. sqrt_threshold(x) is the least s with sqrt(s) >= x, and
// bins over those thresholds give every sum of squares the slot its square root gets
// over the edges, from any first guess; the periodic box's minimum image lies within
// half a side up to apairs.h's bound. The AVX-512 histogram pass's certain lanes (host.cpp,
// bin_margin) are emulated lane by lane in scalar code, since no CPU that tests them
// need have AVX-512.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "reference.hpp"  // ref::fresh_seed
#include "twobody/problem.hpp"
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

namespace {

// x rounded to T here (a volatile store): no product below is fused into an fma with
// what follows, whatever -ffp-contract and -march the test is built with (tests/meson.build
// gives this target neither -ffp-contract=off nor an ISA).
template <class T>
T rounded(T x) {
    volatile T r = x;
    return r;
}

// One lane of host.cpp's histogram_row_avx512 after the distance v: the same operations
// in the same order, each rounded to T. certain: the lane skips Bins::fix; slot: what the
// row stores, clamp(floor(x) + 1, 0, nbins + 1) as an int (NaN: 0).
struct Lane {
    bool certain;
    int slot;
};
template <class T>
Lane avx512_lane(T v, T e0, T iw, T k, T c, int nbins) {
    const T x = rounded(rounded(v - e0) * iw);
    const T margin = rounded(rounded(std::fabs(x) * k) + c);
    const T fl = std::floor(x), frac = rounded(x - fl);
    const bool inside = fl >= T(0) && fl <= T(nbins - 1) && frac >= margin && margin <= rounded(T(1) - frac);
    const bool below = x <= rounded(T(0) - margin), above = x >= rounded(T(nbins) + margin);
    T g = rounded(fl + T(1));
    g = g > T(0) ? g : T(0);                  // _mm512_max_p?(g, 0): NaN -> 0
    g = g < T(nbins + 1) ? g : T(nbins + 1);  // _mm512_min_p?(g, top)
    return {inside || below || above, static_cast<int>(g)};
}

template <class T>
std::string show(T x) {
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<T>::max_digits10) << x;
    return s.str();
}

}  // namespace

// host.cpp's AVX-512 histogram pass (no CPU that runs the tests need have AVX-512): its
// certain lanes, those that skip Bins::fix, must hold Bins::slot's slot. Uniform bins as
// make_histogram_uniform and the host build them: rmin 0, inside (0, rmax), next to rmax
// (a narrow range far from 0) and negative; rmax from a subnormal to half the largest
// value; 1 to 10^6 bins. Distances: every edge (X[1 + b], the least value at or above it;
// a sample of them for 10^6 bins) and 4 ulps either side, square roots next to squared
// edges, random below rmin, near 0 (subnormals), past rmax up to the largest value, +inf,
// NaN, and 20000 at random in the bins. Checked: every set CertainBins calls usable (the
// sets the pass takes; not those whose 1 / width or span overflows T: this test found
// those wrong), and every other set whose 1 / width is a normal number and whose
// v - e0 cannot overflow up to rmax (bin_margin's claim holds there too); each lane's slot
// after Bins::fix is Bins::slot's as well. And where usable, a random lane farther from
// every edge than 16 u (|t| + (|rmin| + max(|rmin|, rmax)) / w + 1) (3.5 times
// bin_margin or more) is certain, so a margin grown useless fails.
TEMPLATE_TEST_CASE("the AVX-512 histogram's certain lanes take the exact slot", "[twobody][rules]", float, double) {
    using T = TestType;
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << ")");
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const T inf = std::numeric_limits<T>::infinity(), least = std::numeric_limits<T>::min(),
            largest = std::numeric_limits<T>::max();
    const double u = std::ldexp(1.0, -std::numeric_limits<T>::digits), tiny = double(least), huge = double(largest);
    const int32_t dtype = sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    for (const double rmax : {tiny / 2, tiny * 4, 1e-30, 1e-3, 1.0, 10.0, 1000.0, 1e6, 1e30, huge / 2}) {
        for (const int nbins : {1, 7, 256, 4096, 1000000}) {
            for (int shape = 0; shape < 5; ++shape) {
                // 0; in (0, rmax); next to rmax; negative; below -rmax (in float, v - e0 then
                // overflows for distances just below rmax).
                const double rmin = shape == 0   ? 0.0
                                    : shape == 1 ? rmax * (0.01 + 0.9 * unit(rng))
                                    : shape == 2 ? rmax * (1 - 0x1p-10)
                                    : shape == 3 ? -rmax * (0.1 + 0.9 * unit(rng))
                                                 : -std::min(rmax * 1.03, std::numeric_limits<double>::max() - rmax);
                INFO("rmin " << show(rmin) << ", rmax " << show(rmax) << ", " << nbins << " bins");
                const Problem pb = make_histogram_uniform(APAIRS_PAIRS_CROSS, APAIRS_METRIC_L2, 0.0, dtype, 1, 1, 1,
                                                          1, 1, nbins, rmin, rmax, 0, nullptr);
                const std::vector<T> X = extended_edges<T>(pb.thresholds);
                const Bins<T> bins = make_bins(X, pb.thresholds);
                // As CertainBins and the row take them.
                const BinMargin m = bin_margin<T>(pb.thresholds, 0);
                const T k = T(m.k), c = T(m.c), e0 = T(bins.e0), iw = T(bins.inv_width);
                const bool finite = std::isfinite(iw) && std::isfinite(ceil_to<T>(pb.thresholds.back()) - e0);
                const bool usable = m.c < 0.0625 && m.k * double(pb.thresholds.size()) < 0.0625 && finite;
                if (rmin == 0 && rmax <= 1e30 && finite && (nbins <= 4096 || sizeof(T) == 8)) CHECK(usable);
                if (!usable && !(std::isnormal(iw) && std::fabs(rmin) + rmax < huge)) continue;
                const double w = (rmax - rmin) / nbins, scale = (std::fabs(rmin) + std::max(std::fabs(rmin), rmax)) / w;

                std::vector<T> vs;
                auto around = [&](T e) {  // e and 4 ulps either side
                    vs.push_back(e);
                    T lo = e, hi = e;
                    for (int q = 0; q < 4; ++q)
                        vs.push_back(lo = std::nextafter(lo, -inf)), vs.push_back(hi = std::nextafter(hi, inf));
                };
                if (nbins <= 4096) {
                    for (int b = 0; b <= nbins; ++b) around(X[size_t(1 + b)]);
                } else {
                    for (int b : {0, 1, 2, nbins - 2, nbins - 1, nbins}) around(X[size_t(1 + b)]);
                    for (int q = 0; q < 5000; ++q) around(X[size_t(1 + rng() % uint64_t(nbins + 1))]);
                }
                for (int q = 0; q < 1000; ++q) {  // L2: square roots of sums of squares next to e^2
                    const T e = X[size_t(1 + rng() % uint64_t(nbins + 1))], s = e * e;
                    if (e > T(0) && s < inf)
                        for (T t : {std::nextafter(s, T(0)), s, std::nextafter(s, inf)}) vs.push_back(std::sqrt(t));
                }
                for (T v : {T(0), std::numeric_limits<T>::denorm_min(), least / T(2), std::nextafter(least, T(0)),
                            least, std::nextafter(largest, T(0)), largest, inf, std::numeric_limits<T>::quiet_NaN()})
                    vs.push_back(v);
                for (int q = 0; q < 200; ++q) {
                    vs.push_back(T(unit(rng)) * least);  // subnormal
                    vs.push_back(static_cast<T>(std::min(rmax * std::exp2(12 * unit(rng)), huge)));  // past rmax
                    if (rmin > 0) vs.push_back(static_cast<T>(rmin * unit(rng)));                     // below rmin
                }
                const size_t nfixed = vs.size();  // then at random in the bins
                const double lo = std::max(rmin, 0.0);
                for (int q = 0; q < 20000; ++q) vs.push_back(static_cast<T>(lo + (rmax - lo) * unit(rng)));

                int64_t bad = 0, needless = 0;
                for (size_t q = 0; q < vs.size(); ++q) {
                    const T v = vs[q];
                    const Lane lane = avx512_lane(v, e0, iw, k, c, nbins);
                    const int want = bins.slot(v), got = lane.certain ? lane.slot : bins.fix(v, lane.slot);
                    if (got != want && ++bad <= 5) {
                        INFO("v = " << show(v) << (lane.certain ? " (certain)" : " (fixed)"));
                        CHECK(got == want);
                    }
                    if (q >= nfixed && usable && !lane.certain) {
                        const double t = double(rounded(rounded(v - e0) * iw));
                        const double gap = t < 0       ? -t
                                           : t > nbins ? t - nbins
                                                       : std::min(t - std::floor(t), std::ceil(t) - t);
                        if (gap >= 16 * u * (std::fabs(t) + scale + 1) && ++needless <= 5) {
                            INFO("v = " << show(v) << ", t = " << show(t) << ": uncertain " << show(gap)
                                        << " from an edge, margin " << show(std::fabs(t) * m.k + m.c));
                            CHECK(false);
                        }
                    }
                }
                CHECK(bad == 0);
                CHECK(needless == 0);
            }
        }
    }
}
