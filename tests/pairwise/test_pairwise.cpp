// All-pairs numerics through the public API, on test::backend(): every metric and
// element type against a long-double reference (reference.hpp) on awkward shapes,
// padded leading dimensions and B aliasing A; NaN propagation; plan reuse; options;
// apairs_plan_describe. Inputs are fresh every run: a failure prints its seed, and
// APAIRS_TEST_SEED=N replays it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "reference.hpp"

using namespace ref;

namespace {

// One problem shape. pad_* are added to d (lda, ldb) and to n2 (ldd). alias: B is
// passed as the same pointer as A (n2 = n1, ldb = lda).
struct Shape {
    int64_t n1, n2, d, pad_a, pad_b, pad_d;
    bool alias;
};

std::ostream &operator<<(std::ostream &os, const Shape &s) {
    return os << "n1=" << s.n1 << " n2=" << s.n2 << " d=" << s.d << " lda=" << s.d + s.pad_a
              << " ldb=" << (s.alias ? s.d + s.pad_a : s.d + s.pad_b) << " ldd=" << s.n2 + s.pad_d
              << (s.alias ? " B=A" : "");
}

// ~30 shapes: 1, odd and prime sizes, multiples of the 32-dimension slice and one more
// or less, sizes past the GPU tile (up to 128 x 32 outputs), 257 x 257, d = 2000.
const std::vector<Shape> kShapes = {
    {1, 1, 1, 0, 0, 0, false},     {1, 1, 1, 0, 0, 0, true},      {1, 7, 3, 2, 0, 1, false},
    {7, 1, 31, 0, 5, 3, false},    {2, 2, 32, 0, 0, 0, true},     {2, 31, 33, 1, 1, 0, false},
    {31, 2, 100, 0, 0, 2, false},  {7, 7, 517, 3, 0, 0, true},    {31, 33, 31, 0, 1, 1, false},
    {33, 31, 33, 4, 4, 4, false},  {33, 33, 1, 0, 0, 0, true},    {67, 31, 3, 1, 2, 3, false},
    {31, 67, 32, 0, 0, 5, false},  {67, 67, 33, 2, 2, 1, true},   {131, 7, 100, 0, 0, 0, false},
    {7, 131, 31, 1, 0, 7, false},  {131, 131, 3, 0, 0, 0, true},  {131, 67, 33, 0, 3, 0, false},
    {67, 131, 1, 2, 2, 2, false},  {257, 257, 33, 0, 0, 3, true}, {257, 257, 1, 1, 1, 1, false},
    {7, 31, 2000, 5, 3, 1, false}, {2, 33, 2000, 0, 0, 0, false}, {1, 131, 517, 0, 0, 0, false},
    {131, 1, 517, 7, 0, 0, false}, {33, 67, 100, 0, 0, 0, false}, {129, 129, 65, 0, 0, 0, true},
    {128, 32, 64, 0, 0, 0, false}, {3, 3, 3, 1, 1, 1, true},      {31, 31, 100, 0, 0, 0, true},
    {2, 2, 2000, 1, 1, 0, true},
};

// Fresh inputs for one shape and metric: uniform in [-1, 1] (HAMMING: a few values, so
// that equal coordinates occur; U8: 0/1/2 genotypes), a few rows of A copied into B so
// that some distances are exactly 0, and for COSINE a zero row in A and in B.
template <class T>
void make_inputs(const Shape &s, const MetricSpec &m, Rng &rng, Matrix<T> &A, Matrix<T> &B) {
    if constexpr (std::is_same<T, uint8_t>::value) {
        fill_choice<T>(A, rng, {T(0), T(1), T(2)});
        if (!s.alias) fill_choice<T>(B, rng, {T(0), T(1), T(2)});
    } else if (m.metric == APAIRS_METRIC_HAMMING) {
        fill_choice<T>(A, rng, {T(-1), T(-0.5), T(0.25), T(1)});
        if (!s.alias) fill_choice<T>(B, rng, {T(-1), T(-0.5), T(0.25), T(1)});
    } else {
        fill_uniform(A, rng);
        if (!s.alias) fill_uniform(B, rng);
    }
    if (!s.alias) {
        std::uniform_int_distribution<int64_t> ri(0, s.n1 - 1), rj(0, s.n2 - 1);
        for (int64_t t = 0; t < std::min<int64_t>(3, s.n2 / 2); ++t)
            copy_row(A, ri(rng), B, rj(rng));
    }
    if (m.metric == APAIRS_METRIC_COSINE) {
        if (s.n1 >= 2) {
            T *z = A.row(std::uniform_int_distribution<int64_t>(0, s.n1 - 1)(rng));
            std::fill(z, z + s.d, T(0));
        }
        if (!s.alias && s.n2 >= 2) {
            T *z = B.row(std::uniform_int_distribution<int64_t>(0, s.n2 - 1)(rng));
            std::fill(z, z + s.d, T(0));
        }
    }
}

// apairs_plan_describe's whole text.
std::string describe(apairs_plan_t plan) {
    int64_t len = -1;
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan, nullptr, 0, &len));
    std::vector<char> buf(size_t(len) + 1, '#');
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan, buf.data(), len + 1, nullptr));
    return std::string(buf.data());
}

// Every shape for one metric and type; returns the worst error fraction.
template <class T>
double check_all_shapes(const MetricSpec &m) {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name()
                 << ", " << m.name << " " << Type<T>::name);
    Rng rng(seed);
    Context ctx;
    double worst = 0;
    for (const Shape &s : kShapes) {
        // LP with a general p: the reference's powl costs ~350 ns a term, so the two
        // largest shapes (over a million terms each) are left to the other metrics,
        // which exercise the same tiles; 257 x 257 (d = 1), 131 x 131 and d = 2000 remain.
        if (effective_metric(m) == APAIRS_METRIC_LP && s.n1 * s.n2 * s.d > 1000000) continue;
        INFO(s);
        Matrix<T> A(s.n1, s.d, s.d + s.pad_a);
        Matrix<T> Bown(s.alias ? 0 : s.n2, s.d, s.d + s.pad_b);
        make_inputs(s, m, rng, A, Bown);
        const Matrix<T> &B = s.alias ? A : Bown;
        worst = std::max(worst, run_and_check(ctx.h, m, A, B, s.n2 + s.pad_d).worst);
    }
    print_worst(m.name + " " + Type<T>::name, worst, seed);
    return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("every metric matches a long-double reference within the bounds of apairs.h",
                   "[pairwise]", float, double) {
    for (const MetricSpec &m : float_metrics()) {
        DYNAMIC_SECTION(m.name << " " << Type<TestType>::name) { check_all_shapes<TestType>(m); }
    }
}

TEST_CASE("HAMMING on U8 genotypes writes exact int32 counts", "[pairwise]") {
    check_all_shapes<uint8_t>({APAIRS_METRIC_HAMMING, 0, "hamming"});
}

TEMPLATE_TEST_CASE("a NaN in a row makes its distances NaN; HAMMING counts it as different",
                   "[pairwise]", float, double) {
    using T = TestType;
    using O = typename Type<T>::out;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (const MetricSpec &m : float_metrics()) {
        DYNAMIC_SECTION(m.name << " " << Type<T>::name) {
            const uint64_t seed = fresh_seed();
            INFO("seed " << seed << ", backend " << test::backend_name());
            Rng rng(seed);
            Context ctx;
            for (const Shape &s : {Shape{9, 13, 70, 1, 2, 3, false}, Shape{37, 37, 45, 0, 0, 0, true},
                                   Shape{131, 3, 1, 0, 0, 0, false}}) {
                INFO(s);
                Matrix<T> A(s.n1, s.d, s.d + s.pad_a), Bown(s.alias ? 0 : s.n2, s.d, s.d + s.pad_b);
                if (m.metric == APAIRS_METRIC_HAMMING) {
                    fill_choice<T>(A, rng, {T(-1), T(1)});
                    if (!s.alias) fill_choice<T>(Bown, rng, {T(-1), T(1)});
                } else {
                    fill_uniform(A, rng);
                    if (!s.alias) fill_uniform(Bown, rng);
                }
                // Row 1 of A: NaN in the last (partial) slice; row n1-1: NaN at k = 0 and
                // (HAMMING) NaN against NaN, which still counts as different.
                const int64_t i1 = 1 % s.n1, i2 = s.n1 - 1;
                A.row(i1)[s.d - 1] = nan;
                A.row(i2)[0] = nan;
                if (!s.alias) {
                    copy_row(A, i2, Bown, 0);  // NaN vs NaN at k = 0
                    Bown.row(s.n2 - 1)[s.d / 2] = nan;
                }
                const Matrix<T> &B = s.alias ? A : Bown;
                const int64_t ldd = s.n2 + s.pad_d;
                Plan plan(ctx.h, m, Type<T>::dtype, s.n1, s.n2, s.d, A.ld, B.ld, ldd);
                std::vector<O> D(size_t(s.n1 * ldd), poison<O>());
                APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A.data(), B.data(), D.data()));
                check_against_reference(m, A, B, D, ldd);  // the reference propagates NaN
                // And spelled out: which rows and columns must be NaN.
                int64_t nans = 0, expected = 0;
                for (int64_t i = 0; i < s.n1; ++i)
                    for (int64_t j = 0; j < s.n2; ++j) {
                        const bool row_nan = i == i1 || i == i2;
                        const bool col_nan = s.alias ? (j == i1 || j == i2) : (j == 0 || j == s.n2 - 1);
                        expected += (row_nan || col_nan) ? 1 : 0;
                        nans += (is_nan(D[size_t(i * ldd + j)]) && !is_poison(D[size_t(i * ldd + j)])) ? 1 : 0;
                    }
                if (m.metric == APAIRS_METRIC_HAMMING) CHECK(nans == 0);
                else CHECK(nans == expected);
            }
        }
    }
}

// apairs.h: "A NaN in a row makes every distance involving that row NaN" and COSINE is
// "1 when a or b is all zeros". A row with a NaN is not all zeros, so NaN must win.
TEMPLATE_TEST_CASE("COSINE: a NaN row against an all-zeros row is NaN", "[pairwise]", float, double) {
    using T = TestType;
    using O = typename Type<T>::out;
    const T nan = std::numeric_limits<T>::quiet_NaN();
    Context ctx;
    const MetricSpec m{APAIRS_METRIC_COSINE, 0, "cosine"};
    // Row 0: (NaN, 1, 1), row 1: zeros, row 2: (1, 2, 3); all pairs, B = A.
    Matrix<T> A(3, 3, 3);
    const T rows[3][3] = {{nan, T(1), T(1)}, {T(0), T(0), T(0)}, {T(1), T(2), T(3)}};
    for (int i = 0; i < 3; ++i) std::copy(rows[i], rows[i] + 3, A.row(i));
    Plan plan(ctx.h, m, Type<T>::dtype, 3, 3, 3, 3, 3, 3);
    std::vector<O> D(9, poison<O>());
    APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A.data(), A.data(), D.data()));
    CHECK(D[1 * 3 + 1] == O(1));  // zeros vs zeros
    CHECK(D[1 * 3 + 2] == O(1));  // zeros vs (1, 2, 3)
    CHECK(is_nan(D[0 * 3 + 2]));  // NaN row vs (1, 2, 3)
    INFO("D[0][1] (NaN row vs zeros) = " << D[0 * 3 + 1] << ", D[1][0] (zeros vs NaN row) = " << D[1 * 3 + 0]);
    CHECK(is_nan(D[0 * 3 + 1]));
    CHECK(is_nan(D[1 * 3 + 0]));
}

// apairs.h: infinite coordinates follow IEEE arithmetic (the reference's long double
// arithmetic does the same), COSINE is 1 between an all-zero row and a row holding
// infinities and NaN between such a row and any other; HAMMING compares them as values.
TEMPLATE_TEST_CASE("infinite coordinates follow the rules of apairs.h", "[pairwise]", float, double) {
    using T = TestType;
    using O = typename Type<T>::out;
    const T inf = std::numeric_limits<T>::infinity();
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const int64_t d = 37;  // one full slice and a partial one
    // Rows: all zeros; +inf at k = 0; -inf at k = d - 1; finite; +inf everywhere; +inf at
    // k = 0 and -inf at k = 33 (in the second slice).
    auto make = [&](Matrix<T> &M) {
        fill_uniform(M, rng);
        std::fill(M.row(0), M.row(0) + d, T(0));
        M.row(1)[0] = inf;
        M.row(2)[d - 1] = -inf;
        std::fill(M.row(4), M.row(4) + d, inf);
        M.row(5)[0] = inf;
        M.row(5)[33] = -inf;
    };
    Matrix<T> A(6, d, d), B(6, d, d + 2);
    make(A);
    make(B);
    // LP with p below 1 too, where an infinite term read as a finite one (CUDA's float
    // t^p once took inf's bits for 2^128: 2^(128 p) is finite for p < 1).
    std::vector<MetricSpec> metrics = float_metrics();
    for (double p : {0.1, 0.24, 0.26, 0.29, 0.32, 0.38, 0.61, 0.93}) metrics.push_back(lp(p));
    for (const MetricSpec &m : metrics) {
        INFO(m.name << " " << Type<T>::name);
        for (const bool alias : {false, true}) {
            INFO((alias ? "B = A" : "B != A"));
            const Matrix<T> &BB = alias ? A : B;
            run_and_check(ctx.h, m, A, BB, 7);
        }
    }
    // The case spelled out: an all-zero row against a row holding inf is 1.
    Plan plan(ctx.h, {APAIRS_METRIC_COSINE, 0, "cosine"}, Type<T>::dtype, 6, 6, d, A.ld, B.ld, 6);
    std::vector<O> D(36, poison<O>());
    APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A.data(), B.data(), D.data()));
    for (int64_t j : {1, 2, 4, 5}) {
        INFO("j = " << j);
        CHECK(D[size_t(0 * 6 + j)] == O(1));
        CHECK(D[size_t(j * 6 + 0)] == O(1));
        CHECK(is_nan(D[size_t(j * 6 + 3)]));
    }
}

// apairs.h states the L2 and COSINE bounds with no range condition (unlike LP's "while
// no term overflows or underflows"), and COSINE is 1 only "when a or b is all zeros".
// Coordinates around sqrt(DBL_MIN) / sqrt(DBL_MAX) (F32: FLT_*) probe that: the exact
// results below are all representable.
TEMPLATE_TEST_CASE("L2 and COSINE keep their bounds at the edges of the documented range", "[pairwise]",
                   float, double) {
    // apairs.h's range: no term below the smallest normal number, no sum past the largest;
    // below it, COSINE treats a vector whose squared norm underflows as all zeros. Test
    // just inside the range, and that documented rule.
    using T = TestType;
    const int e = std::is_same<T, float>::value ? 60 : 500;
    const T tiny = std::ldexp(T(1), -e), huge = std::ldexp(T(1), e);
    const T below = std::is_same<T, float>::value ? T(1e-30) : T(1e-200);  // squares underflow
    const MetricSpec l2{APAIRS_METRIC_L2, 0, "l2"}, cosine{APAIRS_METRIC_COSINE, 0, "cosine"};
    struct Case {
        const char *what;
        MetricSpec m;
        T a0, a1, b0, b1;
    };
    const Case cases[] = {
        {"L2 of tiny vectors: exact 2 * tiny", l2, tiny, 0, -tiny, 0},
        {"L2 of huge vectors: exact 2 * huge", l2, huge, 0, -huge, 0},
        {"COSINE of tiny parallel vectors: exact 0", cosine, tiny, 2 * tiny, 2 * tiny, 4 * tiny},
        {"COSINE of tiny opposite vectors: exact 2", cosine, tiny, tiny, -tiny, -tiny},
        {"COSINE of huge parallel vectors: exact 0", cosine, huge, huge, 2 * huge, 2 * huge},
    };
    Context ctx;
    for (const Case &c : cases) {
        INFO(c.what << " (" << Type<T>::name << ", tiny 2^-" << e << ", huge 2^" << e << ")");
        Matrix<T> A(1, 2, 2), B(1, 2, 2);
        A.row(0)[0] = c.a0;
        A.row(0)[1] = c.a1;
        B.row(0)[0] = c.b0;
        B.row(0)[1] = c.b1;
        run_and_check(ctx.h, c.m, A, B, 1);
    }
    // The range is on the sums (apairs.h): d = 8, A's coordinates 2^(e+1), B's -2^(e+1) and
    // 2^e in turn: squared differences of 2^(2e+4) and 2^(2e), summed to 2^(2e+6) + 2^(2e+2)
    // (F32: 2^126 + 2^122, within a factor 4 of the overflow; |A|^2 = 2^(2e+5)).
    {
        INFO("d = 8, coordinates +-2^" << e + 1 << ": the sums just inside the range");
        const T big = std::ldexp(T(1), e + 1);
        Matrix<T> A(1, 8, 8), B(1, 8, 8);
        for (int k = 0; k < 8; ++k) A.row(0)[k] = big, B.row(0)[k] = k % 2 ? -big : big / 2;
        run_and_check(ctx.h, l2, A, B, 1);
        run_and_check(ctx.h, cosine, A, B, 1);
        run_and_check(ctx.h, MetricSpec{APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"}, A, B, 1);
    }
    // Subnormal coordinates are not flushed: L1 and LINF of differences of a few smallest
    // subnormals are exact (a flush to zero gives 0).
    {
        const T sub = std::numeric_limits<T>::denorm_min();
        Matrix<T> A(1, 5, 5), B(1, 5, 5);
        for (int k = 0; k < 5; ++k) A.row(0)[k] = T(k + 1) * sub, B.row(0)[k] = -T(k) * sub;
        for (const MetricSpec &m : {MetricSpec{APAIRS_METRIC_L1, 0, "l1"}, MetricSpec{APAIRS_METRIC_LINF, 0, "linf"}}) {
            INFO(m.name << " of subnormal coordinates");
            Plan p(ctx.h, m, Type<T>::dtype, 1, 1, 5, 5, 5, 1);
            T D = std::numeric_limits<T>::quiet_NaN();
            REQUIRE(apairs_plan_execute(p.h, A.row(0), B.row(0), &D) == APAIRS_SUCCESS);
            CHECK(D == (m.metric == APAIRS_METRIC_L1 ? T(25) * sub : T(9) * sub));  // sum / max of 2k + 1
        }
    }
    // Below the range: a vector whose squared norm underflows counts as all zeros.
    Plan plan(ctx.h, cosine, Type<T>::dtype, 1, 1, 2, 2, 2, 1);
    const T a[2] = {below, 2 * below}, b[2] = {2 * below, 4 * below};
    T D = std::numeric_limits<T>::quiet_NaN();
    REQUIRE(apairs_plan_execute(plan.h, a, b, &D) == APAIRS_SUCCESS);
    CHECK(D == T(1));
}

// apairs.h: LP's bound is ((d + p + 12) / min(p, 1) + max_k |ln|x_k|| + |ln D|) u with
// x_k = a_k - b_k, while no nonzero term |x_k|^p overflows or falls below the smallest
// normal number of the type. The log terms come from p and 1/p being rounded to the
// element type, so they only show when |x_k| and D are far from 1; the random inputs of
// the other tests lie in [-1, 1] and cannot see them. Here |x_k| spans 10^-12..10^12
// (F32) and 10^-150..10^150 (F64), narrowed for each p and d to where every term, and
// the sum of d of them, stays normal (values outside are skipped, and check_against_
// reference confirms that no entry fell outside LP's range).
TEMPLATE_TEST_CASE("LP keeps its bound when |a_k - b_k| spans many decades", "[pairwise]", float, double) {
    using T = TestType;
    const long double span = std::is_same<T, float>::value ? 12 : 150;
    const long double log_min = log10l(std::numeric_limits<T>::min());
    const long double log_max = log10l(std::numeric_limits<T>::max());
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name()
                 << ", " << Type<T>::name);
    Rng rng(seed);
    Context ctx;
    const int64_t n1 = 25, n2 = 25;
    for (double p : {0.5, 0.7, 1.1, 1.7, 2.5, 3.0, 3.2, 4.0, 5.8}) {
        const MetricSpec m = lp(p);
        double worst = 0;
        for (int64_t d : {1, 2, 5, 33, 70}) {
            // A's and B's coordinates have opposite signs at each k, so that |x_k| =
            // |a_k| + |b_k| lies in [v_lo, 2 v_hi] for magnitudes in [v_lo, v_hi]:
            // v_lo^p >= the smallest normal, d (2 v_hi)^p <= the largest finite.
            const long double lo = std::max(-span, log_min / p + 0.01L);
            const long double hi = std::min(span, (log_max - log10l(d)) / p - log10l(2) - 0.01L);
            INFO(m.name << ", d = " << d << ", magnitudes 1e" << double(lo) << "..1e" << double(hi));
            REQUIRE(lo < hi);
            std::vector<int> sign(static_cast<size_t>(d));
            for (int &sg : sign) sg = std::uniform_int_distribution<int>(0, 1)(rng) ? 1 : -1;
            std::uniform_real_distribution<long double> any(lo, hi), jitter(-0.5L, 0.5L);
            int64_t outside = 0;  // values whose p-th power the clamp failed to keep normal
            auto value = [&](long double e, int sg) {
                const T v = static_cast<T>(sg * powl(10.0L, std::min(hi, std::max(lo, e))));
                const long double t = powl(fabsl(static_cast<long double>(v)), static_cast<long double>(p));
                if (!(t >= std::numeric_limits<T>::min() && t * d <= std::numeric_limits<T>::max())) ++outside;
                return v;
            };
            // Row 0: zeros (x_k = the other row). Rows 1..12: one magnitude per row on a
            // grid from lo to hi (A and B interleaved). Rows 13..: every coordinate its
            // own magnitude anywhere in [lo, hi].
            auto fill = [&](Matrix<T> &M, int side) {
                const int64_t grid = 12;
                std::fill(M.row(0), M.row(0) + d, T(0));
                for (int64_t i = 1; i < M.rows; ++i) {
                    const long double e = lo + (hi - lo) * ((i - 1) * 2 + (side > 0 ? 0 : 1)) / (2 * grid - 1);
                    for (int64_t k = 0; k < d; ++k)
                        M.row(i)[k] = value(i <= grid ? e + jitter(rng) : any(rng), side * sign[size_t(k)]);
                }
            };
            Matrix<T> A(n1, d, d), B(n2, d, d);
            fill(A, 1);
            fill(B, -1);
            REQUIRE(outside == 0);
            const Outcome out = run_and_check(ctx.h, m, A, B, n2);
            CHECK(out.out_of_range == 0);
            worst = std::max(worst, out.worst);
        }
        print_worst(m.name + " " + Type<T>::name + " range", worst, seed);
    }
}

// A single coordinate against 0: D = |a|, and the log terms of LP's bound are 2 |ln|a||.
template <class T>
double lp_single(apairs_context_t ctx, double p, T a) {
    INFO(Type<T>::name << " p = " << p << ", A = {" << +a << "}, B = {0}");
    const long double t = powl(fabsl(static_cast<long double>(a)), static_cast<long double>(p));
    INFO("|a|^p = " << double(t));
    REQUIRE(t >= std::numeric_limits<T>::min());
    REQUIRE(t <= std::numeric_limits<T>::max());
    Matrix<T> A(1, 1, 1), B(1, 1, 1);
    A.row(0)[0] = a;
    B.row(0)[0] = T(0);
    const Outcome out = run_and_check(ctx, lp(p), A, B, 1);
    CHECK(out.out_of_range == 0);
    return out.worst;
}

TEST_CASE("LP keeps its bound on the review's single-coordinate cases", "[pairwise]") {
    INFO("backend " << test::backend_name());
    Context ctx;
    double worst = 0;
    worst = std::max(worst, lp_single<double>(ctx.h, 3.2, 8.4747394501723391e-95));
    worst = std::max(worst, lp_single<double>(ctx.h, 1.1, 3.4441365152874943e-151));
    worst = std::max(worst, lp_single<float>(ctx.h, 1.7, 1.00053285e-06f));
    print_worst("lp review cases", worst, 0);
}

// LP with a general p takes two forms of CUDA's float t^p (metrics.hpp, pow_term): p >=
// 1.25 scales every |a_k - b_k| by 2^24 and leaves 0 to ex2's underflow, below it only
// the subnormal ones. Both sides of the switch: zero differences give exactly 0,
// subnormal ones next to a normal one keep the bound (p = 0.6: their terms are normal,
// in LP's range), NaN and inf as IEEE, and a difference of 2^105 (past the scaled form's
// 2^104, where t^p overflows for p >= 1.25) gives inf, while p = 1.2 keeps the finite
// t^p of 2^103 and 2^105 (2^123.6, 2^126) within the bound; and terms at the bottom of
// the range for p up to 1000.
TEMPLATE_TEST_CASE("LP with a general p: zero, subnormal, non-finite and large differences", "[pairwise]", float,
                   double) {
    using T = TestType;
    INFO("backend " << test::backend_name() << ", " << Type<T>::name);
    Context ctx;
    const T sub = std::numeric_limits<T>::denorm_min(), nan = std::numeric_limits<T>::quiet_NaN();
    const T inf = std::numeric_limits<T>::infinity();
    // Rows of A against rows of B (d = 3); row 0 of each all zeros.
    const T a[5][3] = {{0, 0, 0}, {T(1.5), 7 * sub, 0}, {T(0.75), T(-0.5), T(0x1p-20)}, {inf, 1, 0}, {nan, 0, 0}};
    const T b[3][3] = {{0, 0, 0}, {3 * sub, 0, 0}, {T(0.25), 0, -sub}};
    Matrix<T> A(5, 3, 3), B(3, 3, 3);
    for (int i = 0; i < 5; ++i) std::copy(a[i], a[i] + 3, A.row(i));
    for (int j = 0; j < 3; ++j) std::copy(b[j], b[j] + 3, B.row(j));
    for (double p : {0.6, 1.2, 1.24, 1.25, 1.3, 2.7, 7.5}) {
        const MetricSpec m = lp(p);
        INFO(m.name);
        Plan plan(ctx.h, m, Type<T>::dtype, 5, 3, 3, 3, 3, 3);
        std::vector<T> D(15, poison<T>());
        APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A.data(), B.data(), D.data()));
        check_against_reference(m, A, B, D, 3);
        CHECK(D[0] == T(0));  // zeros against zeros
        // 1.5 beside a subnormal difference and a zero one (for every p here but 0.6 the
        // subnormal term is below LP's range, so the reference check above only asks that
        // this entry be written).
        CHECK(std::fabs(D[3] - T(1.5)) <= 64 * std::numeric_limits<T>::epsilon() * T(1.5));
        for (int j = 0; j < 3; ++j) {  // the inf and NaN rows
            CHECK(D[size_t(3 * 3 + j)] == inf);
            CHECK(is_nan(D[size_t(4 * 3 + j)]));
        }
    }
    // p = 1.2 at 2^105 too: t^p = 2^126 is in range, and overflows if the 2^24 scaling
    // were taken below p = 1.25.
    const std::pair<double, int> cases[] = {{1.2, 103}, {1.2, 105}, {1.25, 105}, {2.7, 105}};
    for (const auto &[p, ex] : cases) {
        INFO("p = " << p << ", t = 2^" << ex);
        const T t = std::ldexp(T(1), ex);
        Matrix<T> A1(1, 1, 1), B1(1, 1, 1);
        A1.row(0)[0] = t;
        B1.row(0)[0] = 0;
        Plan plan(ctx.h, lp(p), Type<T>::dtype, 1, 1, 1, 1, 1, 1);
        T D = poison<T>();
        APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A1.data(), B1.data(), &D));
        if (std::is_same<T, float>::value && p >= 1.25) CHECK(D == inf);  // t^p >= 2^131
        else check_against_reference(lp(p), A1, B1, std::vector<T>{D}, 1);
    }
    // The bottom of LP's range: |t|^p just at or above the smallest normal number, where
    // y = p log2 t, through its error (lg2's, p's rounding to float), can come out just
    // below -126: ex2's .ftz form would flush such a term to 0, so D = 0 where it is
    // about t (review of run 199). D = t within the bound, t alone in d = 1.
    for (double p : {1.3, 2.7, 20.0, 100.0, 1000.0}) {
        const long double lo = std::numeric_limits<T>::min();
        T t = static_cast<T>(powl(2.0L, log2l(lo) / p));
        while (powl(static_cast<long double>(t), p) < lo) t = std::nextafter(t, T(2));
        INFO("p = " << p << ", t = " << +t << ", t^p = " << double(powl(static_cast<long double>(t), p)));
        Matrix<T> A1(1, 1, 1), B1(1, 1, 1);
        A1.row(0)[0] = t;
        B1.row(0)[0] = 0;
        const Outcome out = run_and_check(ctx.h, lp(p), A1, B1, 1);
        CHECK(out.out_of_range == 0);
    }
}

TEST_CASE("one plan executed twice on fresh inputs is right both times", "[pairwise]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const Shape s{67, 33, 100, 3, 1, 2, false};
    INFO(s);
    for (const MetricSpec &m : {MetricSpec{APAIRS_METRIC_L2, 0, "l2"}, lp(3.2), MetricSpec{APAIRS_METRIC_COSINE, 0, "cosine"}}) {
        INFO(m.name);
        Plan plan(ctx.h, m, APAIRS_DTYPE_F64, s.n1, s.n2, s.d, s.d + s.pad_a, s.d + s.pad_b, s.n2 + s.pad_d);
        for (int run = 0; run < 2; ++run) {
            INFO("run " << run);
            Matrix<double> A(s.n1, s.d, s.d + s.pad_a), B(s.n2, s.d, s.d + s.pad_b);
            make_inputs(s, m, rng, A, B);
            execute_and_check(plan.h, m, A, B, s.n2 + s.pad_d);
        }
    }
    const MetricSpec h{APAIRS_METRIC_HAMMING, 0, "hamming"};
    Plan plan(ctx.h, h, APAIRS_DTYPE_U8, s.n1, s.n2, s.d, s.d + s.pad_a, s.d + s.pad_b, s.n2 + s.pad_d);
    for (int run = 0; run < 2; ++run) {
        INFO("hamming u8, run " << run);
        Matrix<uint8_t> A(s.n1, s.d, s.d + s.pad_a), B(s.n2, s.d, s.d + s.pad_b);
        make_inputs(s, h, rng, A, B);
        execute_and_check(plan.h, h, A, B, s.n2 + s.pad_d);
    }
}

TEST_CASE("results stay within the bounds whatever the context options", "[pairwise]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    const Shape s{131, 67, 45, 1, 0, 1, false};
    INFO(s);
    Matrix<float> A(s.n1, s.d, s.d + s.pad_a), B(s.n2, s.d, s.d + s.pad_b);
    const MetricSpec m{APAIRS_METRIC_COSINE, 0, "cosine"};
    make_inputs(s, m, rng, A, B);
    const bool cuda = std::string(test::backend_name()) == "cuda";
    for (double threads : {1.0, 3.0}) {
        for (double occupancy : {0.0, 0.25, 0.5, 1.0}) {
            INFO("host threads " << threads << ", occupancy target " << occupancy);
            Context ctx;
            APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_HOST_THREADS, threads));
            APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, occupancy));
            Plan plan(ctx.h, m, Type<float>::dtype, s.n1, s.n2, s.d, A.ld, B.ld, s.n2 + s.pad_d);
            // The options took effect: the plan's description shows the one its backend uses.
            const std::string text = describe(plan.h);
            INFO(text);
            if (cuda) {
                // describe_cuda: "(target 25%)", or "(target highest reachable, NN%)" for 0.
                const std::string want =
                    occupancy > 0 ? "(target " + std::to_string(int(std::lround(100 * occupancy))) + "%)"
                                  : std::string("(target highest reachable");
                INFO("expected \"" << want << "\"");
                CHECK(text.find(want) != std::string::npos);
            } else {
                // describe_host: "backend=host threads=N kernel=..."; a build without
                // OpenMP (no "+openmp" in the version string) always runs one thread.
                const bool openmp = std::strstr(apairs_version_string(), "+openmp") != nullptr;
                const std::string want = "threads=" + std::to_string(openmp ? int(threads) : 1) + " ";
                INFO("expected \"" << want << "\"");
                CHECK(text.find(want) != std::string::npos);
            }
            execute_and_check(plan.h, m, A, B, s.n2 + s.pad_d);
        }
    }
}

TEST_CASE("apairs_plan_describe names backend and kernel, with snprintf semantics", "[pairwise]") {
    Context ctx;
    Plan plan(ctx.h, lp(3.2), APAIRS_DTYPE_F32, 67, 33, 100, 101, 100, 40);

    int64_t len = -1;
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan.h, nullptr, 0, &len));
    REQUIRE(len > 8);

    std::vector<char> full(size_t(len) + 8, '#');
    int64_t len_full = -1;
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan.h, full.data(), len + 1, &len_full));
    CHECK(len_full == len);
    CHECK(full[size_t(len)] == '\0');
    CHECK(full[size_t(len) + 1] == '#');
    const std::string text(full.data());
    INFO(text);
    CHECK(int64_t(text.size()) == len);
    CHECK(text.find(std::string("backend=") + test::backend_name()) != std::string::npos);
    CHECK(text.find(test::backend() == APAIRS_BACKEND_CUDA ? "backend=host" : "backend=cuda") == std::string::npos);
    CHECK(text.find("kernel=") != std::string::npos);

    // A small buffer: size - 1 characters and a NUL, nothing past it; length unchanged.
    char small[16];
    std::memset(small, '#', sizeof small);
    int64_t len_small = -1;
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan.h, small, 8, &len_small));
    CHECK(len_small == len);
    CHECK(std::string(small) == text.substr(0, 7));
    CHECK(small[8] == '#');

    // size 1: just the NUL; size len: one character short; length may be NULL.
    std::memset(small, '#', sizeof small);
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan.h, small, 1, nullptr));
    CHECK(small[0] == '\0');
    CHECK(small[1] == '#');
    std::vector<char> almost(size_t(len) + 1, '#');
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan.h, almost.data(), len, nullptr));
    CHECK(std::string(almost.data()) == text.substr(0, size_t(len) - 1));
    CHECK(almost[size_t(len)] == '#');
}

// Long float sums: at d = 40000 the engines' three-level blocked order (slices of 32,
// groups of 32 slices, totals) keeps L1, squared L2 and L2 within 1e-6 relative of the
// exact value (a plain running sum of the slices reaches about 2e-6 here), on data
// offset from the origin so that no distance is small.
TEST_CASE("float L1, L2 and squared L2 at d = 40000 stay within 1e-6 relative", "[pairwise]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    const int64_t n1 = 13, n2 = 70, d = 40000;
    Matrix<float> A(n1, d, d), B(n2, d, d);
    fill_uniform(A, rng);
    fill_uniform(B, rng);
    for (auto &x : A.v) x += 100.0f;
    for (const MetricSpec &m : {MetricSpec{APAIRS_METRIC_L1, 0, "l1"}, MetricSpec{APAIRS_METRIC_L2, 0, "l2"},
                                MetricSpec{APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"}}) {
        INFO(m.name);
        std::vector<float> D(size_t(n1 * n2), poison<float>());
        Plan plan(ctx.h, m, APAIRS_DTYPE_F32, n1, n2, d, d, d, n2);
        APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A.data(), B.data(), D.data()));
        double worst = 0;
        for (int64_t i = 0; i < n1; ++i)
            for (int64_t j = 0; j < n2; ++j) {
                long double s = 0;
                for (int64_t k = 0; k < d; ++k) {
                    const long double t = (long double)A.row(i)[k] - B.row(j)[k];
                    s += m.metric == APAIRS_METRIC_L1 ? fabsl(t) : t * t;
                }
                if (m.metric == APAIRS_METRIC_L2) s = sqrtl(s);
                worst = std::max(worst, double(fabsl((long double)D[size_t(i * n2 + j)] - s) / s));
            }
        INFO("worst relative error " << worst);
        CHECK(worst <= 1e-6);
    }
}
