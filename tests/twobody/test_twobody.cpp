// Two-body statistics through the public API, on test::backend(): pair counts, distance
// histograms (uniform and caller-edged, weighted, periodic) and kNN against a
// long-double reference computed pair by pair (../pairwise/reference.hpp), on fresh
// random inputs of awkward sizes. A pair whose reference distance lies within a relative
// 1e-6 of an edge or radius (or within twice the metric's documented error bound, where
// that is larger) may fall on either side; every other pair must land exactly where the
// reference puts it, and the totals always equal the number of pairs. Outputs are
// poisoned first. A failure prints its seed; APAIRS_TEST_SEED=N replays it.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "reference.hpp"

using namespace ref;

namespace {

constexpr int64_t kPoison64 = 0x5a5a5a5a5a5a5a5a;

// A parameter type that does not take part in deduction (B: a pointer, null for AUTO).
template <class T>
using NoDeduce = typename std::enable_if<true, T>::type;

struct TPlan {
    apairs_plan_t h = nullptr;
    TPlan() = default;
    TPlan(const TPlan &) = delete;
    TPlan &operator=(const TPlan &) = delete;
    ~TPlan() { apairs_plan_destroy(h); }
};

struct Threads {  // a context with a given host thread count (0: the default)
    Context ctx;
    explicit Threads(int n = 0) {
        if (n > 0) APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_HOST_THREADS, n));
    }
};

// The reference distance of a pair and how far from it the library's value may lie:
// the larger of a relative 1e-6 and twice the bound apairs.h states for the metric.
struct RefPair {
    long double dist, margin;
};

template <class T>
RefPair ref_pair(const MetricSpec &m, const T *a, const T *b, int64_t d, const std::vector<double> &box) {
    long double scale = 0, max_log = 0;
    long double r;
    if (!box.empty()) {
        long double s = 0;
        for (int64_t k = 0; k < d; ++k) {
            long double t = (long double)a[k] - (long double)b[k];
            t -= box[size_t(k)] * nearbyintl(t / box[size_t(k)]);
            s += t * t;
        }
        r = sqrtl(s);
        // With a box the error is absolute (apairs.h): the coordinates' and sides' roundings.
        const long double L = *std::max_element(box.begin(), box.end());
        return {r, std::max(1e-6L * r, 16 * d * Type<T>::u() * 2 * L)};
    } else {
        r = reference_entry(m, a, b, d, &scale, nullptr, &max_log);
    }
    const long double bound = apairs::pairwise::error_bound(effective_metric(m), m.p, Type<T>::u(), d, r, scale,
                                                            max_log);
    if (m.metric == APAIRS_METRIC_HAMMING) return {r, 0};  // exact: no pair may differ
    return {r, std::max(1e-6L * fabsl(r), 2 * bound)};
}

// Every pair of the problem (AUTO: i < j), as reference distances.
template <class T>
std::vector<RefPair> ref_pairs(const MetricSpec &m, const Matrix<T> &A, const Matrix<T> &B, bool autopairs,
                               const std::vector<double> &box = {}) {
    std::vector<RefPair> out;
    for (int64_t i = 0; i < A.rows; ++i)
        for (int64_t j = autopairs ? i + 1 : 0; j < (autopairs ? A.rows : B.rows); ++j)
            out.push_back(ref_pair(m, A.row(i), (autopairs ? A : B).row(j), A.cols, box));
    return out;
}

// Whether a reference distance is certainly below (-1), certainly at or above (+1), or
// too close to call (0) for threshold e. An exact distance (margin 0) is always decided.
int side(const RefPair &p, double e) {
    if (p.dist != p.dist) return 1;
    if (p.margin == 0) return p.dist < (long double)e ? -1 : 1;
    if (p.dist < (long double)e - p.margin) return -1;
    if (p.dist > (long double)e + p.margin) return 1;
    return 0;
}

// The same for "within radius r" (distance <= r): 1 certainly within, -1 certainly not.
int within(const RefPair &p, double r) {
    if (p.dist != p.dist) return -1;
    if (p.margin == 0) return p.dist <= (long double)r ? 1 : -1;
    if (p.dist < (long double)r - p.margin) return 1;
    if (p.dist > (long double)r + p.margin) return -1;
    return 0;
}

// The histogram slots a reference pair may land in: [lo, hi] (lo == hi unless it is
// within its margin of an edge).
std::pair<int64_t, int64_t> slot_range(const RefPair &p, const std::vector<double> &edges) {
    const int64_t nb = int64_t(edges.size()) - 1;
    if (p.dist != p.dist) return {nb + 1, nb + 1};
    int64_t lo = 0, hi = 0;  // number of edges certainly <= dist, possibly <= dist
    for (double e : edges) {
        const int s = side(p, e);
        if (s > 0) ++lo, ++hi;
        else if (s == 0) ++hi;
    }
    return {lo, hi};  // slot = number of edges <= dist: 0 below e_0, nbins + 1 at or above the last
}

// Checks a histogram (nbins + 2 slots) against reference pairs: the total exactly, each
// slot within [certain, certain + ambiguous touching it].
void check_histogram(const std::vector<int64_t> &got, const std::vector<RefPair> &pairs,
                     const std::vector<double> &edges) {
    const size_t slots = edges.size() + 1;
    REQUIRE(got.size() == slots);
    std::vector<int64_t> certain(slots, 0), maybe(slots, 0);
    for (const RefPair &p : pairs) {
        const auto r = slot_range(p, edges);
        if (r.first == r.second) ++certain[size_t(r.first)];
        else {
            for (int64_t s = r.first; s <= r.second; ++s) ++maybe[size_t(s)];
        }
    }
    int64_t total = 0;
    for (size_t s = 0; s < slots; ++s) {
        INFO("slot " << s << " of " << slots << ": got " << got[s] << ", certain " << certain[s] << ", ambiguous "
                     << maybe[s]);
        CHECK(got[s] >= certain[s]);
        CHECK(got[s] <= certain[s] + maybe[s]);
        total += got[s];
    }
    CHECK(total == int64_t(pairs.size()));
}

void check_counts(const std::vector<int64_t> &got, const std::vector<RefPair> &pairs, const std::vector<double> &radii) {
    for (size_t q = 0; q < radii.size(); ++q) {
        int64_t certain = 0, possible = 0;
        for (const RefPair &p : pairs) {
            const int w = within(p, radii[q]);
            certain += w > 0;
            possible += w >= 0;
        }
        INFO("radius " << radii[q] << ": got " << got[q] << ", certain " << certain << ", possible " << possible);
        CHECK(got[q] >= certain);
        CHECK(got[q] <= possible);
        if (q > 0) CHECK(got[q] >= got[q - 1]);
    }
}

// Random points, uniform in [lo, hi), with some rows duplicated (exact zero distances,
// ties) and for CROSS some rows of A copied into B.
template <class T>
void fill_points(Matrix<T> &X, Rng &rng, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    for (int64_t i = 0; i < X.rows; ++i)
        for (int64_t k = 0; k < X.cols; ++k) X.row(i)[k] = T(u(rng));
    std::uniform_int_distribution<int64_t> ri(0, X.rows - 1);
    for (int64_t t = 0; t < X.rows / 8; ++t) copy_row(X, ri(rng), X, ri(rng));
}

struct Shape {
    int64_t n1, n2, d, pad;
    bool autopairs;
};

const std::vector<Shape> kShapes = {
    {1, 1, 1, 0, false}, {2, 0, 3, 1, true},    {1, 0, 2, 0, true},     {7, 5, 3, 2, false},
    {31, 0, 3, 0, true}, {17, 513, 2, 1, false}, {513, 0, 1, 0, true},  {131, 67, 33, 3, false},
    {600, 0, 3, 0, true}, {67, 600, 8, 0, false}, {40, 0, 70, 1, true},
};

// Runs a histogram plan; counts (and sums) poisoned first.
template <class T>
std::vector<int64_t> run_histogram(apairs_context_t ctx, const MetricSpec &m, const Matrix<T> &A, const NoDeduce<Matrix<T>> *B,
                                   const std::vector<double> &edges, bool uniform, const std::vector<double> &box = {},
                                   const std::vector<double> *wa = nullptr, const std::vector<double> *wb = nullptr,
                                   std::vector<double> *sums = nullptr) {
    TPlan plan;
    const bool autopairs = B == nullptr;
    const int64_t nbins = int64_t(edges.size()) - 1;
    const int32_t pairs = autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS;
    if (uniform)
        APAIRS_REQUIRE_OK(apairs_plan_create_histogram_uniform(
            &plan.h, ctx, pairs, m.metric, m.p, Type<T>::dtype, A.rows, autopairs ? 0 : B->rows, A.cols, A.ld,
            autopairs ? 0 : B->ld, nbins, edges.front(), edges.back(), int64_t(box.size()), box.data()));
    else
        APAIRS_REQUIRE_OK(apairs_plan_create_histogram_edges(&plan.h, ctx, pairs, m.metric, m.p, Type<T>::dtype, A.rows,
                                                             autopairs ? 0 : B->rows, A.cols, A.ld,
                                                             autopairs ? 0 : B->ld, nbins, edges.data(),
                                                             int64_t(box.size()), box.data()));
    std::vector<int64_t> counts(size_t(nbins + 2), kPoison64);
    if (wa) {
        sums->assign(size_t(nbins + 2), poison<double>());
        APAIRS_REQUIRE_OK(apairs_plan_execute_histogram_weighted(plan.h, A.data(), autopairs ? nullptr : B->data(),
                                                                 wa->data(), wb ? wb->data() : nullptr, counts.data(),
                                                                 sums->data()));
        for (double s : *sums) CHECK_FALSE(is_poison(s));
    } else {
        APAIRS_REQUIRE_OK(apairs_plan_execute_histogram(plan.h, A.data(), autopairs ? nullptr : B->data(), counts.data()));
    }
    for (int64_t c : counts) CHECK(c != kPoison64);
    return counts;
}

template <class T>
std::vector<int64_t> run_counts(apairs_context_t ctx, const MetricSpec &m, const Matrix<T> &A, const NoDeduce<Matrix<T>> *B,
                                const std::vector<double> &radii, const std::vector<double> &box = {}) {
    TPlan plan;
    const bool autopairs = B == nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_pair_counts(
        &plan.h, ctx, autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS, m.metric, m.p, Type<T>::dtype, A.rows,
        autopairs ? 0 : B->rows, A.cols, A.ld, autopairs ? 0 : B->ld, int64_t(radii.size()), radii.data(),
        int64_t(box.size()), box.data()));
    std::vector<int64_t> counts(radii.size(), kPoison64);
    APAIRS_REQUIRE_OK(apairs_plan_execute_pair_counts(plan.h, A.data(), autopairs ? nullptr : B->data(), counts.data()));
    for (int64_t c : counts) CHECK(c != kPoison64);
    return counts;
}

std::vector<MetricSpec> test_metrics() {
    return {{APAIRS_METRIC_L1, 0, "l1"},       {APAIRS_METRIC_L2, 0, "l2"},     {APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"},
            lp(3),                             lp(2.5),                         {APAIRS_METRIC_LINF, 0, "linf"},
            {APAIRS_METRIC_DOT, 0, "dot"},     {APAIRS_METRIC_COSINE, 0, "cosine"}, {APAIRS_METRIC_HAMMING, 0, "hamming"}};
}

// Edges spread over the range of the reference distances.
std::vector<double> edges_for(const std::vector<RefPair> &pairs, int64_t nbins, Rng &rng, bool uniform) {
    long double lo = INFINITY, hi = -INFINITY;
    for (const RefPair &p : pairs)
        if (p.dist == p.dist) lo = std::min(lo, p.dist), hi = std::max(hi, p.dist);
    if (!(lo < hi)) lo = 0, hi = 1;
    // A little inside the range, so that slots 0 and nbins + 1 get pairs too.
    const double a = double(lo + (hi - lo) * 0.05L), b = double(hi - (hi - lo) * 0.05L);
    std::vector<double> e(size_t(nbins + 1));
    if (uniform) {
        const double w = (b - a) / double(nbins);
        for (int64_t q = 0; q < nbins; ++q) e[size_t(q)] = a + double(q) * w;
        e[size_t(nbins)] = b;
    } else {
        std::uniform_real_distribution<double> u(a, b);
        for (double &x : e) x = u(rng);
        std::sort(e.begin(), e.end());
        e.erase(std::unique(e.begin(), e.end()), e.end());
    }
    return e;
}

template <class T>
void histogram_and_counts_all_shapes() {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name() << ", "
                 << Type<T>::name);
    Rng rng(seed);
    Context ctx;
    for (const MetricSpec &m : test_metrics()) {
        for (const Shape &s : kShapes) {
            INFO(m.name << " n1=" << s.n1 << " n2=" << s.n2 << " d=" << s.d << (s.autopairs ? " AUTO" : " CROSS"));
            Matrix<T> A(s.n1, s.d, s.d + s.pad), B(s.autopairs ? 0 : s.n2, s.d, s.d + s.pad);
            if (m.metric == APAIRS_METRIC_HAMMING) {
                fill_choice<T>(A, rng, {T(0), T(1), T(2)});
                if (!s.autopairs) fill_choice<T>(B, rng, {T(0), T(1), T(2)});
            } else {
                fill_points(A, rng, -1, 1);
                if (!s.autopairs) fill_points(B, rng, -1, 1);
            }
            const Matrix<T> *Bp = s.autopairs ? nullptr : &B;
            const std::vector<RefPair> pairs = ref_pairs(m, A, B, s.autopairs);
            for (bool uniform : {true, false}) {
                const int64_t nbins = uniform ? 1 + int64_t(rng() % 300) : 1 + int64_t(rng() % 40);
                const std::vector<double> e = edges_for(pairs, nbins, rng, uniform);
                INFO((uniform ? "uniform" : "caller-edged") << " nbins=" << e.size() - 1);
                check_histogram(run_histogram(ctx.h, m, A, Bp, e, uniform), pairs, e);
            }
            std::vector<double> radii = edges_for(pairs, 1 + int64_t(rng() % 5), rng, false);
            check_counts(run_counts(ctx.h, m, A, Bp, radii), pairs, radii);
        }
    }
}

}  // namespace

TEMPLATE_TEST_CASE("histograms and pair counts match a long-double reference except within 1e-6 of an edge",
                   "[twobody]", float, double) {
    histogram_and_counts_all_shapes<TestType>();
}

// The host backend counts uniform bins of L2 and SQEUCLIDEAN in d <= 3 by a vectorised
// pass that trusts a bin computed from the distance unless the distance is near an edge;
// caller edges and weighted histograms take the exact binary search or a guess fixed
// against the edges. All three must give the same counts to the last pair, on points
// whose distances sit on, just below and just above the edges, far out of range,
// non-finite, with a large rmin, and in row counts that leave every vector tail.
TEMPLATE_TEST_CASE("uniform bins count exactly as the same edges given explicitly, near every edge", "[twobody]",
                   float, double) {
    using T = TestType;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    struct Range {
        double rmin, rmax;
        int64_t nbins;
    };
    for (const Range &r : {Range{0, std::sqrt(3.0), 256}, Range{0, 2, 7}, Range{100, 101.5, 300},
                           Range{0.25, 0.5, 4096}, Range{1e-3, 1e3, 1000}, Range{1e6, 1e6 + 1, 64}}) {
        const double w = (r.rmax - r.rmin) / double(r.nbins);
        std::vector<double> edges(size_t(r.nbins + 1));  // as apairs.h defines uniform edges
        for (int64_t b = 0; b < r.nbins; ++b) edges[size_t(b)] = r.rmin + double(b) * w;
        edges.back() = r.rmax;
        // Coordinates: lattice points k w (and rmin + k w) and their neighbours one ulp
        // away, so that many distances (exactly so in d = 1) fall on or next to an edge.
        std::vector<T> pool;
        std::uniform_int_distribution<int64_t> kb(0, r.nbins + 2);
        for (int q = 0; q < 64; ++q) {
            const T x = T(double(kb(rng)) * w), y = T(r.rmin + double(kb(rng)) * w);
            for (T v : {x, y}) {
                pool.push_back(v);
                pool.push_back(std::nextafter(v, T(-INFINITY)));
                pool.push_back(std::nextafter(v, T(INFINITY)));
            }
        }
        pool.push_back(T(0));
        for (const MetricSpec &m : {MetricSpec{APAIRS_METRIC_L2, 0, "l2"}, MetricSpec{APAIRS_METRIC_SQEUCLIDEAN, 0,
                                                                                        "sqeuclidean"}}) {
            for (int64_t d = 1; d <= 3; ++d) {
                for (bool autopairs : {true, false}) {
                    INFO(m.name << " d=" << d << (autopairs ? " AUTO" : " CROSS") << " rmin=" << r.rmin
                                << " rmax=" << r.rmax << " nbins=" << r.nbins);
                    Matrix<T> A(autopairs ? 263 : 37, d, d + 1), B(autopairs ? 0 : 83, d, d);
                    fill_choice<T>(A, rng, pool);
                    if (!autopairs) fill_choice<T>(B, rng, pool);
                    A.row(5)[0] = T(NAN), A.row(6)[d - 1] = T(INFINITY), A.row(7)[0] = T(1e30);
                    const Matrix<T> *Bp = autopairs ? nullptr : &B;
                    const std::vector<int64_t> uniform = run_histogram(ctx.h, m, A, Bp, edges, true);
                    CHECK(uniform == run_histogram(ctx.h, m, A, Bp, edges, false));
                    std::vector<double> wa(size_t(A.rows), 1.0), wb(size_t(B.rows), 1.0), sums;
                    CHECK(uniform == run_histogram(ctx.h, m, A, Bp, edges, true, {}, &wa, autopairs ? nullptr : &wb,
                                                   &sums));
                    const int64_t pairs = autopairs ? A.rows * (A.rows - 1) / 2 : A.rows * B.rows;
                    CHECK(std::accumulate(uniform.begin(), uniform.end(), int64_t(0)) == pairs);
                }
            }
        }
    }
}

TEST_CASE("AUTO is CROSS of a set with itself, halved, less the diagonal", "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    Context ctx;
    for (const MetricSpec &m : test_metrics()) {
        INFO(m.name);
        Matrix<float> A(523, 3, 4);
        fill_points(A, rng, 0, 1);
        const std::vector<double> e = {0.0, 0.1, 0.2, 0.25, 0.5, 0.9, 1.3, 2.0};
        const std::vector<int64_t> a = run_histogram(ctx.h, m, A, nullptr, e, false);
        const std::vector<int64_t> c = run_histogram(ctx.h, m, A, &A, e, false);
        // The diagonal: F(a, a) for every row, in the library's own arithmetic.
        const std::vector<double> radii = {0.05, 0.1, 0.3};
        std::vector<int64_t> diag(e.size() + 1, 0), diag_counts(radii.size(), 0);
        for (int64_t i = 0; i < A.rows; ++i) {
            Matrix<float> one(1, 3, 3);
            copy_row(A, i, one, 0);
            const std::vector<int64_t> h = run_histogram(ctx.h, m, one, &one, e, false);
            for (size_t s = 0; s < h.size(); ++s) diag[s] += h[s];
            const std::vector<int64_t> c1 = run_counts(ctx.h, m, one, &one, radii);
            for (size_t q = 0; q < c1.size(); ++q) diag_counts[q] += c1[q];
        }
        for (size_t s = 0; s < a.size(); ++s) CHECK(2 * a[s] + diag[s] == c[s]);
        const std::vector<int64_t> ca = run_counts(ctx.h, m, A, nullptr, radii), cc = run_counts(ctx.h, m, A, &A, radii);
        for (size_t q = 0; q < radii.size(); ++q) CHECK(2 * ca[q] + diag_counts[q] == cc[q]);
    }
}

TEST_CASE("pair counts: the cell list equals brute force on clustered, degenerate and non-finite points",
          "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const MetricSpec l2{APAIRS_METRIC_L2, 0, "l2"};
    for (int64_t d = 1; d <= 3; ++d) {
        INFO("d = " << d);
        // Clusters of identical points, a far outlier, points exactly on cell boundaries.
        Matrix<double> A(1500, d, d);
        fill_points(A, rng, 0, 1);
        for (int64_t i = 0; i < 100; ++i)
            for (int64_t k = 0; k < d; ++k) A.row(i)[k] = 0.1 * double(i % 7);  // on a lattice of the radius
        for (int64_t k = 0; k < d; ++k) A.row(200)[k] = 1e6, A.row(201)[k] = std::nan(""), A.row(202)[k] = INFINITY;
        const std::vector<RefPair> pairs = ref_pairs(l2, A, A, true);
        for (const std::vector<double> &radii :
             {std::vector<double>{0.1}, std::vector<double>{1e-9, 0.03, 0.1, 0.2}, std::vector<double>{0.0},
              std::vector<double>{1e-300}, std::vector<double>{-1.0, 5.0}}) {
            check_counts(run_counts(ctx.h, l2, A, nullptr, radii), pairs, radii);
        }
        Matrix<double> B(700, d, d);
        fill_points(B, rng, 0.5, 1.5);
        const std::vector<RefPair> cross = ref_pairs(l2, A, B, false);
        const std::vector<double> radii = {0.02, 0.1};
        check_counts(run_counts(ctx.h, l2, A, &B, radii), cross, radii);
    }
    // Points whose extent passes DBL_MAX (the cells cannot span it: brute force counts).
    {
        Matrix<double> A(500, 1, 1);
        fill_points(A, rng, 0, 1);
        A.row(7)[0] = -1e308, A.row(300)[0] = 1e308;
        const std::vector<double> radii = {0.01, 1.0};
        check_counts(run_counts(ctx.h, l2, A, nullptr, radii), ref_pairs(l2, A, A, true), radii);
    }
    // Differences whose square underflows to 0 in F32 (1e-23 apart) count as the computed
    // distance, 0, says: within any radius, as the brute-force histogram bins them.
    {
        Matrix<float> A(400, 1, 1);
        fill_points(A, rng, 0, 1e-21);
        A.row(0)[0] = 0, A.row(1)[0] = 1e-23f;
        const std::vector<double> radii = {1e-25};
        const std::vector<int64_t> c = run_counts(ctx.h, l2, A, nullptr, radii);
        const std::vector<int64_t> h = run_histogram(ctx.h, l2, A, nullptr, {0.0, 1e-25}, false);
        CHECK(c[0] == h[1]);  // counts: slot 0 within the radius; histogram: slot 1 the first bin
    }
}

TEST_CASE("weighted histograms: exact fixed-point sums, the same bits for any thread count and every run",
          "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    const MetricSpec l2{APAIRS_METRIC_L2, 0, "l2"};
    for (bool autopairs : {true, false}) {
        INFO((autopairs ? "AUTO" : "CROSS"));
        Matrix<float> A(777, 3, 3), B(autopairs ? 0 : 1031, 3, 3);
        fill_points(A, rng, 0, 1);
        if (!autopairs) fill_points(B, rng, 0, 1);
        std::uniform_real_distribution<double> uw(-3, 7);
        std::vector<double> wa(size_t(A.rows)), wb(size_t(autopairs ? 0 : B.rows));
        for (double &w : wa) w = uw(rng);
        for (double &w : wb) w = uw(rng);
        wa[0] = 32768, wa[1] = -32768;  // the extremes allowed
        const std::vector<double> e = {0.0, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6};
        const Matrix<float> *Bp = autopairs ? nullptr : &B;
        std::vector<double> first;
        std::vector<int64_t> first_counts;  // (run 0: checked against the reference)
        for (int threads : {0, 1, 2, 3, 7, 0}) {
            Threads t(threads);
            std::vector<double> sums;
            const std::vector<int64_t> c =
                run_histogram(t.ctx.h, l2, A, Bp, e, false, {}, &wa, autopairs ? nullptr : &wb, &sums);
            if (first.empty()) {
                first = sums, first_counts = c;
                // Against the exact fixed-point sum of the reference slots (pairs near an
                // edge may go either way: their weights bound the difference).
                const std::vector<RefPair> pairs = ref_pairs(l2, A, B, autopairs);
                std::vector<__int128> exact(e.size() + 1, 0), slack(e.size() + 1, 0);
                size_t k = 0;
                for (int64_t i = 0; i < A.rows; ++i)
                    for (int64_t j = autopairs ? i + 1 : 0; j < (autopairs ? A.rows : B.rows); ++j, ++k) {
                        const double w = wa[size_t(i)] * (autopairs ? wa[size_t(j)] : wb[size_t(j)]);
                        const __int128 f = (__int128)std::llrint(std::ldexp(w, 32));
                        const auto r = slot_range(pairs[k], e);
                        if (r.first == r.second) exact[size_t(r.first)] += f;
                        else
                            for (int64_t s = r.first; s <= r.second; ++s) slack[size_t(s)] += f < 0 ? -f : f;
                    }
                for (size_t s = 0; s < exact.size(); ++s) {
                    const long double want = std::ldexp((long double)exact[s], -32);
                    INFO("slot " << s << " got " << sums[s] << " want " << (double)want);
                    // The reference rounds twice (to long double, then double): one ulp.
                    if (slack[s] == 0)
                        CHECK((sums[s] == double(want) || std::nextafter(sums[s], INFINITY) == double(want) ||
                               std::nextafter(sums[s], -INFINITY) == double(want)));
                    else CHECK(fabsl(sums[s] - want) <= std::ldexp((long double)slack[s], -32) + fabsl(want) * 1e-15L);
                }
            } else {
                CHECK(c == first_counts);
                CHECK(std::memcmp(sums.data(), first.data(), sums.size() * sizeof(double)) == 0);
            }
        }
    }
}

TEST_CASE("radial distribution function of uniform points in a periodic box is 1 within its statistical error",
          "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const MetricSpec l2{APAIRS_METRIC_L2, 0, "l2"};
    const std::vector<double> box = {1.0, 1.3, 0.9};
    const int64_t n = 3000, nbins = 30;
    Matrix<double> A(n, 3, 3);
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < 3; ++k) A.row(i)[k] = u(rng) * box[size_t(k)];
    const double rmax = 0.45;  // half the smallest side
    std::vector<double> e(size_t(nbins + 1));
    for (int64_t b = 0; b <= nbins; ++b) e[size_t(b)] = b < nbins ? double(b) * (rmax / nbins) : rmax;
    const std::vector<int64_t> c = run_histogram(ctx.h, l2, A, nullptr, e, true, box);
    const double volume = box[0] * box[1] * box[2], npairs = 0.5 * double(n) * double(n - 1);
    int64_t total = 0;
    for (int64_t b = 0; b < nbins; ++b) {
        const double r0 = e[size_t(b)], r1 = e[size_t(b + 1)];
        const double p = 4.0 / 3.0 * M_PI * (r1 * r1 * r1 - r0 * r0 * r0) / volume;  // shell / box
        const double expect = npairs * p, sigma = std::sqrt(npairs * p * (1 - p));
        const double g = double(c[size_t(b + 1)]) / expect;
        INFO("bin " << b << " [" << r0 << ", " << r1 << "): g = " << g << " (" << c[size_t(b + 1)] << " pairs, "
                    << expect << " expected, sigma " << sigma << ")");
        CHECK(std::fabs(double(c[size_t(b + 1)]) - expect) <= 5 * sigma + 1);
    }
    for (int64_t v : c) total += v;
    CHECK(total == int64_t(npairs));
    CHECK(c[0] == 0);
    // And the periodic histogram against the reference minimum image.
    Matrix<float> S(400, 3, 3);
    for (int64_t i = 0; i < S.rows; ++i)
        for (int64_t k = 0; k < 3; ++k) S.row(i)[k] = float(u(rng) * box[size_t(k)] * 1.5 - 0.2);  // some outside
    const std::vector<RefPair> pairs = ref_pairs(l2, S, S, true, box);
    check_histogram(run_histogram(ctx.h, l2, S, nullptr, e, true, box), pairs, e);
    const std::vector<double> radii = {0.05, 0.2, 0.45};
    check_counts(run_counts(ctx.h, l2, S, nullptr, radii, box), pairs, radii);
}

TEMPLATE_TEST_CASE("periodic box: the minimum image of points many box lengths away", "[twobody]", float, double) {
    Context ctx;
    const MetricSpec l2{APAIRS_METRIC_L2, 0, "l2"};
    // One pair 9.5 box lengths apart in float (t / L rounds to exactly 9.5, whose even
    // rint, 10, leaves |t'| = 1.5000019 > L / 2): the other image, 1.499998, is within 1.5.
    {
        Matrix<TestType> A(1, 1, 1), B(1, 1, 1);
        A.row(0)[0] = 0;
        B.row(0)[0] = TestType(-28.499998f);
        const std::vector<double> box = {3}, radii = {1.5};
        CHECK(run_counts(ctx.h, l2, A, &B, radii, box) == std::vector<int64_t>{1});
        CHECK(run_histogram(ctx.h, l2, A, &B, {0, 1.5}, true, box) == std::vector<int64_t>{0, 1, 0});
    }
    // Points spread over 40 box lengths each way, against the exact minimum image: the
    // rounding of coordinates that large is the margin (apairs.h: accuracy best near the
    // origin), so the reference margins grow with them.
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name());
    Rng rng(seed);
    std::uniform_real_distribution<double> u(-40, 40);
    const std::vector<double> box = {1.0, 1.3, 0.9};
    Matrix<TestType> S(131, 3, 3);
    for (int64_t i = 0; i < S.rows; ++i)
        for (int64_t k = 0; k < 3; ++k) S.row(i)[k] = TestType(u(rng) * box[size_t(k)]);
    std::vector<RefPair> pairs = ref_pairs(l2, S, S, true, box);
    for (RefPair &p : pairs) p.margin *= 80;
    const std::vector<double> radii = {0.05, 0.2, 0.45}, e = {0, 0.1, 0.2, 0.3, 0.45};
    check_counts(run_counts(ctx.h, l2, S, nullptr, radii, box), pairs, radii);
    check_histogram(run_histogram(ctx.h, l2, S, nullptr, e, false, box), pairs, e);
}

namespace {

template <class T>
void check_knn(apairs_context_t ctx, const MetricSpec &m, const Matrix<T> &A, const NoDeduce<Matrix<T>> *B, int64_t k,
               bool exact_ties) {
    const bool autopairs = B == nullptr;
    const Matrix<T> &Bm = autopairs ? A : *B;
    TPlan plan;
    APAIRS_REQUIRE_OK(apairs_plan_create_knn(&plan.h, ctx, autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS, m.metric,
                                             m.p, Type<T>::dtype, A.rows, autopairs ? 0 : Bm.rows, A.cols, A.ld,
                                             autopairs ? 0 : Bm.ld, k));
    std::vector<int64_t> idx(size_t(A.rows * k), kPoison64);
    std::vector<T> dist(size_t(A.rows * k), poison<T>());
    APAIRS_REQUIRE_OK(apairs_plan_execute_knn(plan.h, A.data(), autopairs ? nullptr : Bm.data(), idx.data(), dist.data()));
    for (int64_t i = 0; i < A.rows; ++i) {
        std::vector<std::pair<long double, int64_t>> all;
        std::vector<RefPair> rp(size_t(Bm.rows));
        for (int64_t j = 0; j < Bm.rows; ++j) {
            rp[size_t(j)] = ref_pair(m, A.row(i), Bm.row(j), A.cols, {});
            if (autopairs && j == i) continue;
            all.push_back({rp[size_t(j)].dist, j});
        }
        std::sort(all.begin(), all.end());
        INFO("row " << i << " k " << k);
        const int64_t *gi = &idx[size_t(i * k)];
        const T *gd = &dist[size_t(i * k)];
        for (int64_t q = 0; q < k; ++q) {
            INFO("neighbour " << q << ": got " << gi[q] << " at " << gd[q] << ", reference " << all[size_t(q)].second
                              << " at " << (double)all[size_t(q)].first);
            REQUIRE(gi[q] >= 0);
            REQUIRE(gi[q] < Bm.rows);
            CHECK(!(autopairs && gi[q] == i));
            if (exact_ties) {
                // Distances exact in T: the order is fully determined.
                CHECK(gi[q] == all[size_t(q)].second);
                CHECK(gd[q] == T(all[size_t(q)].first));
            } else {
                const RefPair &r = rp[size_t(gi[q])];
                CHECK(fabsl((long double)gd[q] - r.dist) <= r.margin);
                // The q-th got neighbour is at most a margin farther than the q-th reference one.
                CHECK(r.dist <= all[size_t(q)].first + r.margin + rp[size_t(all[size_t(q)].second)].margin);
            }
            if (q > 0) {
                CHECK(gi[q] != gi[q - 1]);
                CHECK((gd[q] > gd[q - 1] || (gd[q] == gd[q - 1] && gi[q] > gi[q - 1])));
            }
        }
        // Every identical duplicate row of a listed neighbour with a smaller index is listed before it.
        for (int64_t q = 0; q < k; ++q)
            for (int64_t j = 0; j < gi[q]; ++j) {
                if (autopairs && j == i) continue;
                if (std::memcmp(Bm.row(j), Bm.row(gi[q]), size_t(A.cols) * sizeof(T)) != 0) continue;
                CHECK(std::find(gi, gi + q, j) != gi + q);
            }
    }
}

}  // namespace

TEMPLATE_TEST_CASE("kNN matches a sorted brute-force reference, duplicates and ties to the smaller index",
                   "[twobody]", float, double) {
    using T = TestType;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name() << ", " << Type<T>::name);
    Rng rng(seed);
    Context ctx;
    // Small integer coordinates: L1, L2, SQEUCLIDEAN, LINF and HAMMING distances are exact,
    // so ties abound and the whole order is determined.
    for (const MetricSpec &m : std::vector<MetricSpec>{{APAIRS_METRIC_L1, 0, "l1"},
                                                       {APAIRS_METRIC_L2, 0, "l2"},
                                                       {APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"},
                                                       {APAIRS_METRIC_LINF, 0, "linf"},
                                                       {APAIRS_METRIC_HAMMING, 0, "hamming"}}) {
        for (const Shape &s : std::vector<Shape>{{2, 0, 3, 0, true}, {37, 0, 3, 1, true}, {300, 0, 2, 0, true},
                                                 {45, 600, 3, 0, false}, {1, 1, 4, 0, false}, {9, 130, 40, 2, false}}) {
            INFO(m.name << " n1=" << s.n1 << " n2=" << s.n2 << " d=" << s.d);
            Matrix<T> A(s.n1, s.d, s.d + s.pad), B(s.autopairs ? 0 : s.n2, s.d, s.d + s.pad);
            fill_choice<T>(A, rng, {T(0), T(1), T(2), T(3)});
            if (!s.autopairs) fill_choice<T>(B, rng, {T(0), T(1), T(2), T(3)});
            const int64_t cand = s.autopairs ? s.n1 - 1 : s.n2;
            for (int64_t k : {int64_t(1), int64_t(5), int64_t(16), int64_t(64), int64_t(128)}) {
                if (k > cand) continue;
                check_knn(ctx.h, m, A, s.autopairs ? nullptr : &B, k, true);
            }
        }
    }
    // Random coordinates, every metric, duplicates: near-ties judged by the bound.
    for (const MetricSpec &m : test_metrics()) {
        INFO(m.name);
        Matrix<T> A(150, 5, 6), B(520, 5, 5);
        fill_points(A, rng, -1, 1);
        fill_points(B, rng, -1, 1);
        copy_row(A, 3, B, 10), copy_row(A, 3, B, 400);
        check_knn(ctx.h, m, A, &B, 17, false);
        check_knn(ctx.h, m, A, nullptr, 64, false);
    }
}

// apairs.h: a NaN distance is the farthest neighbour, after every number, and between
// NaNs the smaller index first. Rows with a NaN coordinate (at every distance NaN) among
// rows of small integers (exact distances, ties): every row's k = all candidates, in
// (distance, index) order with the NaN rows last by index.
TEMPLATE_TEST_CASE("kNN puts NaN distances after every number, by index", "[twobody]", float, double) {
    using T = TestType;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name() << ", " << Type<T>::name);
    Rng rng(seed);
    Context ctx;
    const int64_t n = 23, d = 3;
    Matrix<T> A(n, d, d);
    fill_choice<T>(A, rng, {T(0), T(1), T(2), T(3)});
    const std::vector<int64_t> nan_rows = {0, 5, 6, 22};
    for (int64_t r : nan_rows) A.row(r)[r % d] = std::numeric_limits<T>::quiet_NaN();
    const auto is_nan_row = [&](int64_t r) { return std::find(nan_rows.begin(), nan_rows.end(), r) != nan_rows.end(); };
    for (const MetricSpec &m : std::vector<MetricSpec>{{APAIRS_METRIC_L1, 0, "l1"}, {APAIRS_METRIC_L2, 0, "l2"},
                                                       {APAIRS_METRIC_LINF, 0, "linf"}}) {
        INFO(m.name);
        const int64_t k = n - 1;
        TPlan plan;
        APAIRS_REQUIRE_OK(apairs_plan_create_knn(&plan.h, ctx.h, APAIRS_PAIRS_AUTO, m.metric, m.p, Type<T>::dtype, n, 0,
                                                 d, d, 0, k));
        std::vector<int64_t> idx(size_t(n * k), kPoison64);
        std::vector<T> dist(size_t(n * k), poison<T>());
        APAIRS_REQUIRE_OK(apairs_plan_execute_knn(plan.h, A.data(), nullptr, idx.data(), dist.data()));
        for (int64_t i = 0; i < n; ++i) {
            // The expected order: numbers by (distance, index), then the NaNs by index.
            std::vector<std::pair<long double, int64_t>> numbers;
            std::vector<int64_t> nans;
            for (int64_t j = 0; j < n; ++j) {
                if (j == i) continue;
                if (is_nan_row(i) || is_nan_row(j)) {
                    nans.push_back(j);
                    continue;
                }
                numbers.push_back({ref_pair(m, A.row(i), A.row(j), d, {}).dist, j});
            }
            std::sort(numbers.begin(), numbers.end());
            for (int64_t q = 0; q < k; ++q) {
                const bool want_nan = q >= int64_t(numbers.size());
                const int64_t want = want_nan ? nans[size_t(q - int64_t(numbers.size()))] : numbers[size_t(q)].second;
                const T got = dist[size_t(i * k + q)];
                INFO("row " << i << ", neighbour " << q << ": got " << idx[size_t(i * k + q)] << " at " << got
                            << ", expected " << want);
                CHECK(idx[size_t(i * k + q)] == want);
                if (want_nan)
                    CHECK(std::isnan(got));
                else
                    CHECK(got == T(numbers[size_t(q)].first));
            }
        }
    }
}

// apairs.h: a pair's distance is the value apairs_plan_execute writes, the same sums in
// the same order as its tile engines: past one group of 32 slices too (d = 1100: two
// groups, the last partial; 2100: three), where the order has its third level. CUDA's
// float L2 / SQEUCLIDEAN (d >= 256) go through cuBLAS in apairs_plan_execute: double only.
TEMPLATE_TEST_CASE("kNN distances are the bits of apairs_plan_execute past one group of slices", "[twobody]",
                   float, double) {
    using T = TestType;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name() << ", " << Type<T>::name);
    Rng rng(seed);
    Context ctx;
    std::vector<MetricSpec> metrics = {{APAIRS_METRIC_L1, 0, "l1"}, {APAIRS_METRIC_LP, 3, "lp3"},
                                       {APAIRS_METRIC_LP, 2.5, "lp2.5"}, {APAIRS_METRIC_LP, 3.7, "lp3.7"}};
    if (sizeof(T) == 8 || test::backend() != APAIRS_BACKEND_CUDA)
        metrics.insert(metrics.end(), {{APAIRS_METRIC_L2, 0, "l2"}, {APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"}});
    for (int64_t d : {int64_t(1100), int64_t(2100)})
        for (const MetricSpec &m : metrics) {
            INFO(m.name << " d=" << d);
            const int64_t n1 = 7, n2 = 11, k = n2;
            Matrix<T> A(n1, d, d + 1), B(n2, d, d);
            fill_points(A, rng, -1, 2);
            fill_points(B, rng, -1, 2);
            TPlan knn, pw;
            APAIRS_REQUIRE_OK(apairs_plan_create_knn(&knn.h, ctx.h, APAIRS_PAIRS_CROSS, m.metric, m.p, Type<T>::dtype,
                                                     n1, n2, d, A.ld, B.ld, k));
            APAIRS_REQUIRE_OK(
                apairs_plan_create_pairwise(&pw.h, ctx.h, m.metric, m.p, Type<T>::dtype, n1, n2, d, A.ld, B.ld, n2));
            std::vector<int64_t> idx(size_t(n1 * k), kPoison64);
            std::vector<T> dist(size_t(n1 * k), poison<T>()), D(size_t(n1 * n2), poison<T>());
            APAIRS_REQUIRE_OK(apairs_plan_execute_knn(knn.h, A.data(), B.data(), idx.data(), dist.data()));
            APAIRS_REQUIRE_OK(apairs_plan_execute(pw.h, A.data(), B.data(), D.data()));
            for (int64_t i = 0; i < n1; ++i)
                for (int64_t q = 0; q < k; ++q) {
                    const int64_t j = idx[size_t(i * k + q)];
                    INFO("row " << i << " neighbour " << q << " = " << j);
                    REQUIRE(j >= 0);
                    REQUIRE(j < n2);
                    const T got = dist[size_t(i * k + q)], want = D[size_t(i * n2 + j)];
                    INFO("kNN " << got << ", apairs_plan_execute " << want);
                    CHECK(std::memcmp(&got, &want, sizeof(T)) == 0);
                }
        }
}

TEST_CASE("kNN and counts are the same for any thread count", "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    Matrix<float> A(700, 3, 3);
    fill_points(A, rng, 0, 1);
    std::vector<int64_t> first_idx, first_counts;
    for (int threads : {1, 2, 5}) {
        Threads t(threads);
        TPlan p;
        APAIRS_REQUIRE_OK(apairs_plan_create_knn(&p.h, t.ctx.h, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32,
                                                 A.rows, 0, 3, 3, 0, 8));
        std::vector<int64_t> idx(size_t(A.rows * 8));
        std::vector<float> dist(size_t(A.rows * 8));
        APAIRS_REQUIRE_OK(apairs_plan_execute_knn(p.h, A.data(), nullptr, idx.data(), dist.data()));
        const std::vector<double> radii = {0.05, 0.1, 0.2};
        const std::vector<int64_t> c = run_counts(t.ctx.h, {APAIRS_METRIC_L2, 0, "l2"}, A, nullptr, radii);
        if (first_idx.empty()) first_idx = idx, first_counts = c;
        CHECK(idx == first_idx);
        CHECK(c == first_counts);
    }
}

// ---- Bad inputs: a clear status, the message naming the argument, nothing written -------

namespace {

void expect_status(apairs_status_t got, apairs_status_t want, const char *what, const char *names) {
    INFO(what << ": got " << apairs_status_string(got) << " (" << apairs_last_error() << ")");
    CHECK(got == want);
    CHECK(std::strstr(apairs_last_error(), names) != nullptr);
}

}  // namespace

TEST_CASE("bad two-body arguments get clear statuses and write nothing", "[twobody]") {
    Context ctx;
    const int32_t F32 = APAIRS_DTYPE_F32, L2 = APAIRS_METRIC_L2, AUTO = APAIRS_PAIRS_AUTO, CROSS = APAIRS_PAIRS_CROSS;
    const double radii[] = {0.1, 0.2}, unsorted[] = {0.2, 0.1}, nan_r[] = {NAN}, box[] = {1, 1, 1},
                 badbox[] = {1, 0, 1}, edges[] = {0, 0.1, 0.3}, bad_edges[] = {0, 0.3, 0.1};
    apairs_plan_t sentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0x1234));
    struct Case {
        const char *what;
        apairs_status_t want;
        const char *names;  // what the message must hold: the argument and its value
        std::function<apairs_status_t(apairs_plan_t *)> call;
    };
    const int64_t big = int64_t(1) << 40;
    const std::vector<Case> cases = {
        {"null plan", APAIRS_ERROR_NULL_POINTER, "plan is NULL",
         [&](apairs_plan_t *) { return apairs_plan_create_pair_counts(nullptr, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, radii, 0, nullptr); }},
        {"null ctx", APAIRS_ERROR_NULL_POINTER, "ctx is NULL",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, nullptr, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, radii, 0, nullptr); }},
        {"unknown pairs", APAIRS_ERROR_UNKNOWN_ENUM, "pairs = 3",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, 3, L2, 0, F32, 10, 0, 3, 3, 0, 2, radii, 0, nullptr); }},
        {"unknown metric", APAIRS_ERROR_UNKNOWN_ENUM, "metric = 99",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, 99, 0, F32, 10, 0, 3, 3, 0, 2, radii, 0, nullptr); }},
        {"n1 = 0", APAIRS_ERROR_INVALID_VALUE, "n1 = 0",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 0, 0, 3, 3, 0, 2, radii, 0, nullptr); }},
        {"n2 = 0 in CROSS", APAIRS_ERROR_INVALID_VALUE, "n2 = 0",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, CROSS, L2, 0, F32, 10, 0, 3, 3, 3, 2, radii, 0, nullptr); }},
        {"lda < d", APAIRS_ERROR_INVALID_VALUE, "lda = 2",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 2, 0, 2, radii, 0, nullptr); }},
        {"n1 * n1 pairs overflowing 64 bits with AUTO", APAIRS_ERROR_OVERFLOW, "n1 * n1",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, big, 0, 3, big, 0, 2, radii, 0, nullptr); }},
        {"overflowing n1 * lda", APAIRS_ERROR_OVERFLOW, "n1 * lda = 1000 * 4611686018427387904",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 1000, 0, 3, int64_t(1) << 62, 0, 2, radii, 0, nullptr); }},
        {"overflowing n2 * ldb in CROSS", APAIRS_ERROR_OVERFLOW, "n2 * ldb = 1000 * 4611686018427387904",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, CROSS, L2, 0, F32, 10, 1000, 3, 3, int64_t(1) << 62, 1); }},
        {"overflowing n1 * n2 pairs", APAIRS_ERROR_OVERFLOW, "n1 * n2",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_edges(p, ctx.h, CROSS, L2, 0, F32, big, big, 1, 1, 1, 2, edges, 0, nullptr); }},
        {"n1 * n2 = 2^60 exactly", APAIRS_ERROR_OVERFLOW, "n1 * n2",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, CROSS, L2, 0, F32, int64_t(1) << 30, int64_t(1) << 30, 1, 1, 1, 2, radii, 0, nullptr); }},
        {"n1 * n1 past 2^60 with AUTO", APAIRS_ERROR_OVERFLOW, "n1 * n1",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 1200000000, 0, 1, 1, 0, 2, radii, 0, nullptr); }},
        {"nradii = 0", APAIRS_ERROR_INVALID_VALUE, "nradii = 0",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 0, radii, 0, nullptr); }},
        {"null radii", APAIRS_ERROR_NULL_POINTER, "radii is NULL",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, nullptr, 0, nullptr); }},
        {"unsorted radii", APAIRS_ERROR_INVALID_VALUE, "radii[1]",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, unsorted, 0, nullptr); }},
        {"equal radii", APAIRS_ERROR_INVALID_VALUE, "radii[1]",
         [&](apairs_plan_t *p) { const double r2[] = {0.1, 0.1}; return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, r2, 0, nullptr); }},
        {"equal edges", APAIRS_ERROR_INVALID_VALUE, "edges[2]",
         [&](apairs_plan_t *p) { const double e3[] = {0, 0.1, 0.1}; return apairs_plan_create_histogram_edges(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, e3, 0, nullptr); }},
        {"NaN radius", APAIRS_ERROR_INVALID_VALUE, "radii[0]",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 1, nan_r, 0, nullptr); }},
        {"box side 0", APAIRS_ERROR_INVALID_VALUE, "box[1]",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, radii, 3, badbox); }},
        {"nbox != d", APAIRS_ERROR_INVALID_VALUE, "nbox = 2",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, radii, 2, box); }},
        {"null box", APAIRS_ERROR_NULL_POINTER, "box is NULL",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, radii, 3, nullptr); }},
        {"an F32 box side that is inf in float", APAIRS_ERROR_INVALID_VALUE, "box[0]",
         [&](apairs_plan_t *p) { const double b1[] = {1e39}; return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 1, 1, 0, 2, radii, 1, b1); }},
        {"an F32 box side that is subnormal in float", APAIRS_ERROR_INVALID_VALUE, "box[0]",
         [&](apairs_plan_t *p) { const double b1[] = {1e-39}, r1[] = {1e-40}; return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 1, 1, 0, 1, r1, 1, b1); }},
        {"an F64 box side whose reciprocal is subnormal", APAIRS_ERROR_INVALID_VALUE, "box[0]",
         [&](apairs_plan_t *p) { const double b1[] = {1e308}; return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, APAIRS_DTYPE_F64, 10, 0, 1, 1, 0, 2, radii, 1, b1); }},
        {"box with L1", APAIRS_ERROR_UNSUPPORTED, "metric",
         [&](apairs_plan_t *p) { return apairs_plan_create_pair_counts(p, ctx.h, AUTO, APAIRS_METRIC_L1, 0, F32, 10, 0, 3, 3, 0, 2, radii, 3, box); }},
        {"box in d = 4", APAIRS_ERROR_UNSUPPORTED, "d = 4",
         [&](apairs_plan_t *p) { const double b4[] = {1, 1, 1, 1}; return apairs_plan_create_pair_counts(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 4, 4, 0, 2, radii, 4, b4); }},
        {"rmax beyond half the box", APAIRS_ERROR_INVALID_VALUE, "rmax = 0.6",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_uniform(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 8, 0, 0.6, 3, box); }},
        {"rmax <= rmin", APAIRS_ERROR_INVALID_VALUE, "rmax = 1",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_uniform(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 8, 1, 1, 0, nullptr); }},
        {"rmax infinite", APAIRS_ERROR_INVALID_VALUE, "rmax = inf",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_uniform(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 8, 0, INFINITY, 0, nullptr); }},
        {"nbins = 0", APAIRS_ERROR_INVALID_VALUE, "nbins = 0",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_uniform(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 0, 0, 1, 0, nullptr); }},
        {"nbins too many", APAIRS_ERROR_INVALID_VALUE, "nbins = 1048577",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_uniform(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, (int64_t(1) << 20) + 1, 0, 1, 0, nullptr); }},
        {"bins collapsing in double", APAIRS_ERROR_INVALID_VALUE, "nbins = 1000",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_uniform(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 1000, 1e9, 1e9 + 1e-6, 0, nullptr); }},
        {"unsorted edges", APAIRS_ERROR_INVALID_VALUE, "edges[2]",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_edges(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, bad_edges, 0, nullptr); }},
        {"null edges", APAIRS_ERROR_NULL_POINTER, "edges is NULL",
         [&](apairs_plan_t *p) { return apairs_plan_create_histogram_edges(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 2, nullptr, 0, nullptr); }},
        {"k = 0", APAIRS_ERROR_INVALID_VALUE, "k = 0",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, CROSS, L2, 0, F32, 10, 5, 3, 3, 3, 0); }},
        {"k > n2", APAIRS_ERROR_INVALID_VALUE, "k = 6",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, CROSS, L2, 0, F32, 10, 5, 3, 3, 3, 6); }},
        {"k > n1 - 1 in AUTO", APAIRS_ERROR_INVALID_VALUE, "k = 10",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, AUTO, L2, 0, F32, 10, 0, 3, 3, 0, 10); }},
        {"k > APAIRS_KNN_MAX_K", APAIRS_ERROR_INVALID_VALUE, "k = 129",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, CROSS, L2, 0, F32, 1000, 1000, 3, 3, 3, APAIRS_KNN_MAX_K + 1); }},
        {"LP p <= 0", APAIRS_ERROR_INVALID_VALUE, "p = -1",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, CROSS, APAIRS_METRIC_LP, -1, F32, 10, 5, 3, 3, 3, 1); }},
        {"DOT on U8", APAIRS_ERROR_UNSUPPORTED, "dtype = u8",
         [&](apairs_plan_t *p) { return apairs_plan_create_knn(p, ctx.h, CROSS, APAIRS_METRIC_DOT, 0, APAIRS_DTYPE_U8, 10, 5, 3, 3, 3, 1); }},
    };
    for (const Case &c : cases) {
        apairs_plan_t p = sentinel;
        expect_status(c.call(&p), c.want, c.what, c.names);
        CHECK(p == sentinel);  // unchanged on failure
    }

    // Execute-time errors write nothing.
    Matrix<float> A(50, 3, 3);
    Rng rng(1);
    fill_points(A, rng, 0, 1);
    TPlan h, k, pc;
    APAIRS_REQUIRE_OK(apairs_plan_create_histogram_edges(&h.h, ctx.h, CROSS, L2, 0, F32, 50, 50, 3, 3, 3, 2, edges, 0, nullptr));
    APAIRS_REQUIRE_OK(apairs_plan_create_knn(&k.h, ctx.h, AUTO, L2, 0, F32, 50, 0, 3, 3, 0, 4));
    APAIRS_REQUIRE_OK(apairs_plan_create_pair_counts(&pc.h, ctx.h, AUTO, L2, 0, F32, 50, 0, 3, 3, 0, 2, radii, 0, nullptr));
    std::vector<int64_t> counts(4, kPoison64), idx(200, kPoison64);
    std::vector<double> sums(4, poison<double>()), w(50, 1.0), wbad(50, 1.0);
    std::vector<float> dist(200, poison<float>());
    wbad[17] = NAN;
    auto untouched = [&] {
        for (int64_t c : counts) CHECK(c == kPoison64);
        for (double s : sums) CHECK(is_poison(s));
        for (int64_t v : idx) CHECK(v == kPoison64);
        for (float v : dist) CHECK(is_poison(v));
    };
    expect_status(apairs_plan_execute_histogram(nullptr, A.data(), A.data(), counts.data()), APAIRS_ERROR_NULL_POINTER, "null plan", "plan is NULL");
    expect_status(apairs_plan_execute_histogram(h.h, nullptr, A.data(), counts.data()), APAIRS_ERROR_NULL_POINTER, "null A", "A is NULL");
    expect_status(apairs_plan_execute_histogram(h.h, A.data(), nullptr, counts.data()), APAIRS_ERROR_NULL_POINTER, "null B in CROSS", "B is NULL");
    expect_status(apairs_plan_execute_histogram(h.h, A.data(), A.data(), nullptr), APAIRS_ERROR_NULL_POINTER, "null counts", "counts is NULL");
    expect_status(apairs_plan_execute_histogram_weighted(h.h, A.data(), A.data(), w.data(), nullptr, counts.data(), sums.data()),
                  APAIRS_ERROR_NULL_POINTER, "null weights_b in CROSS", "weights_b is NULL");
    expect_status(apairs_plan_execute_histogram_weighted(h.h, A.data(), A.data(), w.data(), w.data(), counts.data(), nullptr),
                  APAIRS_ERROR_NULL_POINTER, "null sums", "sums is NULL");
    expect_status(apairs_plan_execute_histogram_weighted(h.h, A.data(), A.data(), w.data(), wbad.data(), counts.data(), sums.data()),
                  APAIRS_ERROR_INVALID_VALUE, "NaN weight", "weights_b[17] = nan");
    wbad[17] = 40000;
    expect_status(apairs_plan_execute_histogram_weighted(h.h, A.data(), A.data(), wbad.data(), w.data(), counts.data(), sums.data()),
                  APAIRS_ERROR_INVALID_VALUE, "weight beyond 2^15", "weights_a[17] = 40000");
    expect_status(apairs_plan_execute_knn(k.h, A.data(), nullptr, idx.data(), nullptr), APAIRS_ERROR_NULL_POINTER, "null distances", "distances is NULL");
    expect_status(apairs_plan_execute_knn(k.h, A.data(), nullptr, nullptr, dist.data()), APAIRS_ERROR_NULL_POINTER, "null indices", "indices is NULL");
    expect_status(apairs_plan_execute_histogram(k.h, A.data(), nullptr, counts.data()), APAIRS_ERROR_UNSUPPORTED, "a kNN plan to execute_histogram", "apairs_plan_execute_knn");
    expect_status(apairs_plan_execute_knn(pc.h, A.data(), nullptr, idx.data(), dist.data()), APAIRS_ERROR_UNSUPPORTED, "a counts plan to execute_knn", "apairs_plan_execute_pair_counts");
    expect_status(apairs_plan_execute(pc.h, A.data(), A.data(), dist.data()), APAIRS_ERROR_UNSUPPORTED, "a counts plan to apairs_plan_execute", "apairs_plan_execute_pair_counts");
    // A null weights_a is named, in CROSS and in AUTO (where it is weights_b too).
    expect_status(apairs_plan_execute_histogram_weighted(h.h, A.data(), A.data(), nullptr, w.data(), counts.data(), sums.data()),
                  APAIRS_ERROR_NULL_POINTER, "null weights_a in CROSS", "weights_a is NULL");
    TPlan ha;
    APAIRS_REQUIRE_OK(apairs_plan_create_histogram_edges(&ha.h, ctx.h, AUTO, L2, 0, F32, 50, 0, 3, 3, 0, 2, edges, 0, nullptr));
    expect_status(apairs_plan_execute_histogram_weighted(ha.h, A.data(), nullptr, nullptr, nullptr, counts.data(), sums.data()),
                  APAIRS_ERROR_NULL_POINTER, "null weights_a in AUTO", "weights_a is NULL");
    untouched();
    // AUTO ignores B and weights_b.
    APAIRS_REQUIRE_OK(apairs_plan_execute_knn(k.h, A.data(), nullptr, idx.data(), dist.data()));
}

TEST_CASE("two-body plans describe the technique they chose", "[twobody]") {
    Context ctx;
    TPlan a, b, c;
    const double radii[] = {0.1};
    APAIRS_REQUIRE_OK(apairs_plan_create_pair_counts(&a.h, ctx.h, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0,
                                                     APAIRS_DTYPE_F32, 100, 0, 3, 3, 0, 1, radii, 0, nullptr));
    APAIRS_REQUIRE_OK(apairs_plan_create_histogram_uniform(&b.h, ctx.h, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L1, 0,
                                                           APAIRS_DTYPE_F64, 100, 50, 7, 7, 7, 256, 0, 2, 0, nullptr));
    APAIRS_REQUIRE_OK(apairs_plan_create_knn(&c.h, ctx.h, APAIRS_PAIRS_AUTO, APAIRS_METRIC_COSINE, 0, APAIRS_DTYPE_F32,
                                             100, 0, 3, 3, 0, 16));
    for (apairs_plan_t p : {a.h, b.h, c.h}) {
        char buf[2048];
        int64_t len = 0;
        APAIRS_REQUIRE_OK(apairs_plan_describe(p, buf, sizeof buf, &len));
        INFO(buf);
        CHECK(std::string(buf).find("twobody<") != std::string::npos);
        CHECK(std::string(buf).find("why:") != std::string::npos);
    }
}

TEMPLATE_TEST_CASE("edges and radii on exact distances: e_b <= distance < e_b+1 and distance <= r", "[twobody]",
                   float, double) {
    using T = TestType;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    // Small integers: L1, SQEUCLIDEAN, LINF and HAMMING distances are exact integers, and
    // so is L2 for points on one axis (d = 1); edges and radii sit on those integers.
    const std::vector<std::pair<MetricSpec, int64_t>> cases = {{{APAIRS_METRIC_L1, 0, "l1"}, 3},
                                                               {{APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"}, 2},
                                                               {{APAIRS_METRIC_LINF, 0, "linf"}, 4},
                                                               {{APAIRS_METRIC_HAMMING, 0, "hamming"}, 9},
                                                               {{APAIRS_METRIC_L2, 0, "l2"}, 1}};
    for (const auto &mc : cases) {
        const MetricSpec &m = mc.first;
        INFO(m.name);
        for (bool autopairs : {true, false}) {
            Matrix<T> A(301, mc.second, mc.second), B(autopairs ? 0 : 77, mc.second, mc.second);
            fill_choice<T>(A, rng, {T(0), T(1), T(2), T(3), T(4)});
            if (!autopairs) fill_choice<T>(B, rng, {T(0), T(1), T(2), T(3), T(4)});
            const Matrix<T> *Bp = autopairs ? nullptr : &B;
            // The exact slot of every pair.
            std::vector<int64_t> want(10, 0);
            std::vector<double> edges = {0, 1, 2, 3, 4, 5, 6, 7, 8};
            std::vector<int64_t> within(edges.size(), 0);
            for (const RefPair &p : ref_pairs(m, A, B, autopairs)) {
                const double dd = double(p.dist);
                REQUIRE(dd == std::floor(dd));  // the test's premise: integer distances
                ++want[size_t(std::min<double>(dd + 1, 9))];
                for (size_t q = 0; q < edges.size(); ++q) within[q] += dd <= edges[q];
            }
            CHECK(run_histogram(ctx.h, m, A, Bp, edges, true) == want);
            CHECK(run_histogram(ctx.h, m, A, Bp, edges, false) == want);
            CHECK(run_counts(ctx.h, m, A, Bp, edges) == within);
        }
    }
}

// More than 16 radii take a binary search for a pair's first radius (the engines' radius
// slot) instead of a scan. Small integers as in the test above, so that every distance
// is an exact integer: radii on every half-integer from -0.5 to the largest distance
// (a random subset of them, at least 17, always with the largest distance itself, the
// top of the search), each count exactly the pairs with distance <= r; L2 in d = 1 takes
// the cell list, the others the brute-force pass.
TEMPLATE_TEST_CASE("pair counts with more than 16 radii: distance <= r exactly, radii on the distances",
                   "[twobody]", float, double) {
    using T = TestType;
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    std::uniform_real_distribution<double> u(0, 1);
    const std::vector<std::pair<MetricSpec, int64_t>> cases = {{{APAIRS_METRIC_L1, 0, "l1"}, 3},
                                                               {{APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"}, 2},
                                                               {{APAIRS_METRIC_LINF, 0, "linf"}, 4},
                                                               {{APAIRS_METRIC_HAMMING, 0, "hamming"}, 23},
                                                               {{APAIRS_METRIC_L2, 0, "l2"}, 1}};
    const std::vector<T> values = {T(0), T(1), T(2), T(3), T(4), T(5), T(6), T(7), T(8), T(9)};
    for (const auto &mc : cases) {
        const MetricSpec &m = mc.first;
        const int64_t d = mc.second;
        for (bool autopairs : {true, false}) {
            Matrix<T> A(150 + int64_t(rng() % 60), d, d + int64_t(rng() % 2)),
                B(autopairs ? 0 : 40 + int64_t(rng() % 60), d, d);
            fill_choice<T>(A, rng, values);
            if (!autopairs) fill_choice<T>(B, rng, values);
            const Matrix<T> *Bp = autopairs ? nullptr : &B;
            std::vector<double> dist;
            double top = 0;
            for (const RefPair &p : ref_pairs(m, A, B, autopairs)) {
                const double dd = double(p.dist);
                REQUIRE(dd == std::floor(dd));  // the test's premise: integer distances
                dist.push_back(dd);
                top = std::max(top, dd);
            }
            std::vector<double> all;
            for (double r = -0.5; r < top; r += 0.5) all.push_back(r);
            REQUIRE(all.size() >= 17);
            const double keep = 0.4 + 0.6 * u(rng);
            std::vector<double> radii;
            for (double r : all)
                if (u(rng) < keep) radii.push_back(r);
            if (radii.size() < 16) radii = all;
            radii.push_back(top);  // the largest radius on the largest distance
            std::vector<int64_t> want(radii.size(), 0);
            for (double dd : dist)
                for (size_t q = 0; q < radii.size(); ++q) want[q] += dd <= radii[q];
            INFO(m.name << (autopairs ? " AUTO" : " CROSS") << " n1=" << A.rows << " n2=" << B.rows << ", "
                        << radii.size() << " radii up to " << top);
            CHECK(run_counts(ctx.h, m, A, Bp, radii) == want);
        }
    }
}

// The cell list bins points into cells a little wider than the largest radius, so that a
// pair within it always lies in neighbouring cells. Pairs at exactly the largest radius
// along an axis, their first point a few 2^-13 radii below a whole number of radii from
// the lowest coordinate (where the cell boundaries would fall for cells a hair narrower
// than the radius), among random points; coordinates on a grid of 2^-13 in [0, 4], so
// that every squared distance is exact in double: each count is exactly the pairs with
// squared distance <= r^2, counted in integers.
TEST_CASE("pair counts: the cell list counts pairs at exactly the largest radius across cell boundaries",
          "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const MetricSpec l2{APAIRS_METRIC_L2, 0, "l2"};
    const int64_t R = 8192;  // the largest radius, 1.0, in grid units of 2^-13
    std::uniform_int_distribution<int64_t> coord(0, 4 * R);
    using Point = std::array<int64_t, 3>;
    for (int64_t d = 1; d <= 3; ++d) {
        for (bool autopairs : {true, false}) {
            INFO("d = " << d << (autopairs ? " AUTO" : " CROSS"));
            std::vector<Point> pa, pb;
            pa.push_back({0, 0, 0});  // the lowest coordinate in every dimension: 0
            for (int64_t c = 1; c <= 3; ++c)
                for (int64_t j = 1; j <= 8 * (c + 1) + 4; ++j) {
                    Point p = {coord(rng), coord(rng), coord(rng)};
                    const int64_t k = int64_t(rng() % uint64_t(d));
                    p[size_t(k)] = c * R - j;
                    Point q = p;
                    q[size_t(k)] += R;
                    pa.push_back(p);
                    (autopairs ? pa : pb).push_back(q);
                }
            const int64_t fill = 60 + int64_t(rng() % 100);
            for (int64_t t = 0; t < fill; ++t) {
                pa.push_back({coord(rng), coord(rng), coord(rng)});
                if (!autopairs) pb.push_back({coord(rng), coord(rng), coord(rng)});
            }
            std::shuffle(pa.begin(), pa.end(), rng);
            std::shuffle(pb.begin(), pb.end(), rng);
            auto to_matrix = [&](const std::vector<Point> &pts) {
                Matrix<double> X(int64_t(pts.size()), d, d);
                for (size_t i = 0; i < pts.size(); ++i)
                    for (int64_t k = 0; k < d; ++k) X.row(int64_t(i))[k] = std::ldexp(double(pts[i][size_t(k)]), -13);
                return X;
            };
            const Matrix<double> A = to_matrix(pa), B = to_matrix(pb);
            // Radii in grid units: a few below R, and R.
            std::vector<int64_t> ru = {R / 8 + int64_t(rng() % 64), R / 2 + int64_t(rng() % 64), R - int64_t(rng() % 9), R};
            std::sort(ru.begin(), ru.end());
            ru.erase(std::unique(ru.begin(), ru.end()), ru.end());
            std::vector<double> radii;
            for (int64_t r : ru) radii.push_back(std::ldexp(double(r), -13));
            std::vector<int64_t> want(ru.size(), 0);
            const std::vector<Point> &qb = autopairs ? pa : pb;
            for (size_t i = 0; i < pa.size(); ++i)
                for (size_t j = autopairs ? i + 1 : 0; j < qb.size(); ++j) {
                    int64_t s = 0;
                    for (int64_t k = 0; k < d; ++k) {
                        const int64_t t = pa[i][size_t(k)] - qb[j][size_t(k)];
                        s += t * t;
                    }
                    for (size_t q = 0; q < ru.size(); ++q) want[q] += s <= ru[q] * ru[q];
                }
            CHECK(run_counts(ctx.h, l2, A, autopairs ? nullptr : &B, radii) == want);
        }
    }
}

// apairs.h: the fixed-point sums are exact and each is rounded to double once at the end,
// to nearest with ties to even. One point against points at L1 distances 0 to 3 (one slot
// each), weights +-2^15 and +-2^-37, +-2^-38 (products +-2^30, and +-2^-22, +-2^-23: the
// bits just at and above the rounding position of a sum near 2^30 or 2^31): many sums
// fall exactly halfway between two doubles. Each sum must be the correctly rounded exact
// sum (|sum| < 2^32, so the fixed-point value is exact in long double and rounds once).
TEST_CASE("weighted histograms: a sum halfway between two doubles rounds to the even one", "[twobody]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const MetricSpec l1{APAIRS_METRIC_L1, 0, "l1"};
    const std::vector<double> e = {0.5, 1.5, 2.5};  // slot s holds the distance s
    int64_t ties = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int64_t n2 = trial < 2 ? 2 : 1 + int64_t(rng() % 45);
        Matrix<double> A(1, 1, 1), B(n2, 1, 1 + int64_t(rng() % 2));
        A.row(0)[0] = 0;
        fill_choice<double>(B, rng, {0.0, 1.0, -1.0, 2.0, -2.0, 3.0});
        std::vector<double> wa = {rng() % 2 ? 32768.0 : -32768.0};
        std::vector<double> wb(static_cast<size_t>(n2));
        int big = 0;
        for (double &w : wb) {
            const double sign = rng() % 2 ? 1.0 : -1.0;
            if (rng() % 6 == 0 && big < 3) w = sign * 32768.0, ++big;
            else w = sign * std::ldexp(1.0, -37 - int(rng() % 2));
        }
        if (trial < 2) {  // 2^30 + 2^-23: halfway above 2^30 (even); 2^30 + 3 2^-23: halfway, odd below
            B.row(0)[0] = B.row(1)[0] = 0;
            wa = {32768.0};
            wb = {32768.0, trial == 0 ? std::ldexp(1.0, -38) : 3 * std::ldexp(1.0, -38)};
        }
        INFO("trial " << trial << " n2 = " << n2);
        std::vector<double> sums;
        const std::vector<int64_t> c = run_histogram(ctx.h, l1, A, &B, e, false, {}, &wa, &wb, &sums);
        std::vector<__int128> exact(e.size() + 1, 0);
        std::vector<int64_t> want_counts(e.size() + 1, 0);
        for (int64_t j = 0; j < n2; ++j) {
            const size_t s = size_t(std::fabs(B.row(j)[0]));
            exact[s] += (__int128)std::llrint(std::ldexp(wa[0] * wb[size_t(j)], 32));  // exact: powers of two
            ++want_counts[s];
        }
        CHECK(c == want_counts);
        for (size_t s = 0; s < exact.size(); ++s) {
            REQUIRE((exact[s] < ((__int128)1 << 64) && exact[s] > -((__int128)1 << 64)));
            const long double x = (long double)exact[s];  // exact: below 2^64 in magnitude
            const double want = double(std::ldexp(x, -32));  // one rounding, to nearest even
            const long double r = std::ldexp(x, -32) - (long double)want;
            const long double ulp = (long double)std::nextafter(std::fabs(want), INFINITY) - std::fabs(want);
            ties += want != 0 && fabsl(r) * 2 == ulp;
            INFO("slot " << s << ": got " << sums[s] << ", want " << want);
            CHECK(std::memcmp(&sums[s], &want, sizeof want) == 0);
        }
    }
    CHECK(ties > 0);  // the premise: some sums were ties
}
