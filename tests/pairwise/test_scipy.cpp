// External oracle: SciPy's distance test data (tests/data/scipy-distance, README.md),
// whose pdist references were computed by MATLAB. pdist is the condensed upper
// triangle (i < j, row by row) of the all-pairs matrix, which we compute through the
// library with A and B the same pointer. A missing file fails the test.
//
// Tolerances
// - F64: the references are printed with 8 significant digits, so they are held to
//   1e-7 relative; a zero reference (iris has duplicate rows) needs an exact 0, which
//   the library gives for identical rows. COSINE adds its absolute bound from apairs.h,
//   (2d + 8) u: 1 - cos loses its relative accuracy near 0 (in MATLAB's reference too),
//   and iris has pairs of parallel, not identical, rows.
// - F32: the inputs themselves are rounded to float first (|delta x| <= u |x|), which
//   moves a norm-based distance by at most u * N(|a| + |b|) (triangle inequality, N the
//   metric's norm) and 1 - cos by at most 2u (the angle moves by at most u per row);
//   on top come the bound of apairs.h for F32 and the 1e-7 of the printed references.
// - HAMMING: the fraction count / d of a 0/1 input is exact in both types.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "reference.hpp"

#ifndef APAIRS_SCIPY_DATA
#error "APAIRS_SCIPY_DATA (the directory of the SciPy test data) must be defined by the build"
#endif

using namespace ref;

namespace {

// A whitespace-separated text matrix; every line one row. Fails the test if missing.
struct Table {
    int64_t rows = 0, cols = 0;
    std::vector<double> v;
};

Table load(const std::string &name) {
    const std::string path = std::string(APAIRS_SCIPY_DATA) + "/" + name;
    INFO("SciPy data file " << path);
    std::ifstream in(path);
    REQUIRE(in.is_open());
    Table t;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        int64_t n = 0;
        for (double x; ls >> x; ++n) t.v.push_back(x);
        if (n == 0) continue;
        if (t.rows == 0) t.cols = n;
        REQUIRE(n == t.cols);
        ++t.rows;
    }
    REQUIRE(t.rows > 0);
    return t;
}

template <class T>
Matrix<T> to_matrix(const Table &t) {
    Matrix<T> m(t.rows, t.cols, t.cols);
    for (int64_t i = 0; i < t.rows; ++i)
        for (int64_t k = 0; k < t.cols; ++k) m.row(i)[k] = static_cast<T>(t.v[size_t(i * t.cols + k)]);
    return m;
}

// pdist through the library: D = F(X, X) with B passed as A, then the condensed upper
// triangle; the diagonal and the lower triangle are checked on the way.
template <class T>
std::vector<double> pdist(apairs_context_t ctx, const MetricSpec &m, const Matrix<T> &X) {
    using O = typename Type<T>::out;
    const int64_t n = X.rows;
    Plan plan(ctx, m, Type<T>::dtype, n, n, X.cols, X.ld, X.ld, n);
    std::vector<O> D(size_t(n * n), poison<O>());
    APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, X.data(), X.data(), D.data()));
    std::vector<double> condensed;
    int64_t asymmetric = 0, bad_diagonal = 0;
    for (int64_t i = 0; i < n; ++i) {
        const O diag = D[size_t(i * n + i)];
        if (m.metric == APAIRS_METRIC_COSINE ? !(std::fabs(double(diag)) <= 1e-5) : diag != O(0)) ++bad_diagonal;
        for (int64_t j = i + 1; j < n; ++j) {
            const O v = D[size_t(i * n + j)];
            // Each entry is computed on its own, in the same order: F(a, b) and F(b, a)
            // only differ through the order of operands, so allow the bound, not bits.
            if (!(std::fabs(double(v) - double(D[size_t(j * n + i)])) <= 1e-5 * (1 + std::fabs(double(v)))))
                ++asymmetric;
            condensed.push_back(m.metric == APAIRS_METRIC_HAMMING ? double(v) / double(X.cols) : double(v));
        }
    }
    CHECK(bad_diagonal == 0);
    CHECK(asymmetric == 0);
    return condensed;
}

// u * N(|a| + |b|): how far rounding the inputs to float can move a norm distance.
long double input_rounding(const MetricSpec &m, const Matrix<double> &X, int64_t i, int64_t j, long double u) {
    long double s = 0;
    for (int64_t k = 0; k < X.cols; ++k) {
        const long double t = std::fabs(X.row(i)[k]) + std::fabs(X.row(j)[k]);
        switch (effective_metric(m)) {
        case APAIRS_METRIC_L1: s += t; break;
        case APAIRS_METRIC_L2: s += t * t; break;
        case APAIRS_METRIC_LINF: s = std::max(s, t); break;
        case APAIRS_METRIC_LP: s += powl(t, m.p); break;
        default: break;
        }
    }
    switch (effective_metric(m)) {
    case APAIRS_METRIC_L2: return u * sqrtl(s);
    case APAIRS_METRIC_LP: return u * powl(s, 1 / static_cast<long double>(m.p));
    case APAIRS_METRIC_COSINE: return 2 * u;
    case APAIRS_METRIC_HAMMING: return 0;
    default: return u * s;
    }
}

// Compares pdist of `input` through F64 and F32 (and U8 for HAMMING) with `reference`.
void check_pdist(const std::string &input, const std::string &reference, const MetricSpec &m) {
    INFO(m.name << " on " << input << " vs " << reference << ", backend " << test::backend_name());
    const Table in = load(input), expected = load(reference);
    const int64_t n = in.rows, d = in.cols;
    REQUIRE(int64_t(expected.v.size()) == n * (n - 1) / 2);
    Context ctx;
    const Matrix<double> X = to_matrix<double>(in);

    auto compare = [&](const std::vector<double> &got, const char *type, auto tolerance) {
        INFO(type);
        REQUIRE(got.size() == expected.v.size());
        double worst = 0;
        int64_t bad = 0, at = 0;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = i + 1; j < n; ++j, ++at) {
                const double r = expected.v[size_t(at)], v = got[size_t(at)];
                const double tol = static_cast<double>(tolerance(i, j, r));
                const double err = std::fabs(v - r);
                if (err > 0) worst = std::max(worst, tol > 0 ? err / tol : INFINITY);
                if (!(err <= tol) && ++bad <= 5)
                    FAIL_CHECK("pdist(" << i << ", " << j << ") = " << v << ", MATLAB " << r << ", tolerance " << tol);
            }
        CHECK(bad == 0);
        std::printf("[%s] scipy %-32s %s worst error = %.3g of the tolerance\n", test::backend_name(),
                    (m.name + " " + input).c_str(), type, worst);
    };

    // F64: 1e-7 relative (+ COSINE's absolute bound).
    const long double u64 = Type<double>::u(), u32 = Type<float>::u();
    const long double cos64 = m.metric == APAIRS_METRIC_COSINE ? (2 * d + 8) * u64 : 0;
    compare(pdist(ctx.h, m, X), "f64", [&](int64_t, int64_t, double r) { return 1e-7L * std::fabs(r) + cos64; });

    // F32: inputs rounded to float, the F32 bound, the printed digits.
    const Matrix<float> Xf = to_matrix<float>(in);
    compare(pdist(ctx.h, m, Xf), "f32", [&](int64_t i, int64_t j, double r) {
        long double scale = 0;
        const long double exact = reference_entry(m, Xf.row(i), Xf.row(j), d, &scale);
        const Allowed a = allowed_error(m, d, u32, exact, scale);
        return 1e-7L * std::fabs(r) + a.bound + a.slack + input_rounding(m, X, i, j, u32);
    });

    if (m.metric == APAIRS_METRIC_HAMMING) {
        const Matrix<uint8_t> Xu = to_matrix<uint8_t>(in);
        compare(pdist(ctx.h, m, Xu), "u8", [&](int64_t, int64_t, double r) { return 1e-7L * std::fabs(r); });
    }
}

const MetricSpec kEuclidean{APAIRS_METRIC_L2, 0, "euclidean"}, kCityblock{APAIRS_METRIC_L1, 0, "cityblock"},
    kChebyshev{APAIRS_METRIC_LINF, 0, "chebyshev"}, kCosine{APAIRS_METRIC_COSINE, 0, "cosine"},
    kHamming{APAIRS_METRIC_HAMMING, 0, "hamming"};

}  // namespace

TEST_CASE("pdist of pdist-double-inp matches MATLAB", "[scipy]") {
    check_pdist("pdist-double-inp.txt", "pdist-euclidean-ml.txt", kEuclidean);
    check_pdist("pdist-double-inp.txt", "pdist-cityblock-ml.txt", kCityblock);
    check_pdist("pdist-double-inp.txt", "pdist-chebyshev-ml.txt", kChebyshev);
    check_pdist("pdist-double-inp.txt", "pdist-minkowski-3.2-ml.txt", lp(3.2));
    check_pdist("pdist-double-inp.txt", "pdist-cosine-ml.txt", kCosine);
}

TEST_CASE("pdist of iris matches MATLAB", "[scipy]") {
    check_pdist("iris.txt", "pdist-euclidean-ml-iris.txt", kEuclidean);
    check_pdist("iris.txt", "pdist-cityblock-ml-iris.txt", kCityblock);
    check_pdist("iris.txt", "pdist-chebyshev-ml-iris.txt", kChebyshev);
    check_pdist("iris.txt", "pdist-cosine-ml-iris.txt", kCosine);
    check_pdist("iris.txt", "pdist-minkowski-3.2-ml-iris.txt", lp(3.2));
    check_pdist("iris.txt", "pdist-minkowski-5.8-ml-iris.txt", lp(5.8));
}

TEST_CASE("pdist hamming of pdist-boolean-inp matches MATLAB (F64, F32 and U8)", "[scipy]") {
    check_pdist("pdist-boolean-inp.txt", "pdist-hamming-ml.txt", kHamming);
}

TEST_CASE("cdist of cdist-X1 (10 x 23) against cdist-X2 (20 x 23)", "[scipy]") {
    const Table t1 = load("cdist-X1.txt"), t2 = load("cdist-X2.txt");
    REQUIRE(t1.rows == 10);
    REQUIRE(t2.rows == 20);
    REQUIRE(t1.cols == 23);
    REQUIRE(t2.cols == 23);
    Context ctx;
    for (const MetricSpec &m : {kEuclidean, kCosine, lp(3.2), kChebyshev, MetricSpec{APAIRS_METRIC_DOT, 0, "dot"}}) {
        INFO(m.name << ", backend " << test::backend_name());
        run_and_check(ctx.h, m, to_matrix<double>(t1), to_matrix<double>(t2), 20);
        run_and_check(ctx.h, m, to_matrix<float>(t1), to_matrix<float>(t2), 21);  // one padding column
        run_and_check(ctx.h, m, to_matrix<double>(t2), to_matrix<double>(t1), 10);
    }
}
