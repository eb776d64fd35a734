// Batched Cholesky (potrf) and solves (potrs) through the public API, on test::backend():
// every layout, order, triangle and type; sizes around the CUDA models' switch points;
// reconstruction |A - L L^T| against Higham's bound, solve residuals, LAPACK's info for
// elements that are not positive definite or hold a NaN mixed into a batch, the other
// triangle never read (it holds NaN) nor written, padding untouched.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "operand.hpp"
#include "reference.hpp"

using ref::Context;
using ref::Rng;
template <class T>
using Batch = test::Operand<T>;

namespace {

struct Layout {
    bool soa, row_major, lower;
    int64_t ld_pad, stride_pad;
};

std::ostream &operator<<(std::ostream &os, const Layout &l) {
    return os << (l.soa ? "SoA" : "AoS") << (l.row_major ? " row-major" : " col-major")
              << (l.lower ? " lower" : " upper") << " ld+" << l.ld_pad << " stride+" << l.stride_pad;
}


// In the stored triangle: (i, j) with i >= j for lower, i <= j for upper.
bool stored(const Layout &l, int64_t i, int64_t j) { return l.lower ? i >= j : i <= j; }

// What A(j, j) loses to the columns before j in A's Cholesky factor: sum_{q < j} L(j, q)^2,
// from a long double factorisation of A's leading (j + 1) x (j + 1) block.
long double diagonal_loss(const std::vector<long double> &A, int64_t n, int64_t j) {
    std::vector<long double> L(size_t((j + 1) * (j + 1)), 0);
    for (int64_t i = 0; i <= j; ++i)
        for (int64_t c = 0; c <= i; ++c) {
            long double s = A[size_t(i * n + c)];
            for (int64_t q = 0; q < c; ++q) s -= L[size_t(i * (j + 1) + q)] * L[size_t(c * (j + 1) + q)];
            L[size_t(i * (j + 1) + c)] = i == c ? sqrtl(s) : s / L[size_t(c * (j + 1) + c)];
        }
    long double loss = 0;
    for (int64_t q = 0; q < j; ++q) loss += L[size_t(j * (j + 1) + q)] * L[size_t(j * (j + 1) + q)];
    return loss;
}

// A well-conditioned SPD matrix per element: M M^T / n + I, M uniform in [-1, 1].
template <class T>
std::vector<long double> make_spd(int64_t n, Rng &rng) {
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<long double> M(size_t(n * n)), A(size_t(n * n));
    for (auto &x : M) x = u(rng);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
            long double s = 0;
            for (int64_t l = 0; l < n; ++l) s += M[size_t(i * n + l)] * M[size_t(j * n + l)];
            A[size_t(i * n + j)] = static_cast<T>(s / n + (i == j ? 1 : 0));  // as stored in T
        }
    return A;
}

// ||A X - B||_inf / (||A||_inf ||X||_inf) for element e, each norm the largest row sum of
// absolute values: A the exact matrix (n x n, row-major), X the solution, B the
// right-hand sides it solved. NaN (failing any bound) where X or the residual is not finite.
template <class T>
long double residual_ratio(const std::vector<long double> &A, const Batch<T> &X, const Batch<T> &B, int64_t e) {
    const int64_t n = X.rows, nrhs = X.cols;
    long double rnorm = 0, anorm = 0, xnorm = 0;
    for (int64_t i = 0; i < n; ++i) {
        long double arow = 0, xrow = 0, rrow = 0;
        for (int64_t j = 0; j < n; ++j) arow += fabsl(A[size_t(i * n + j)]);
        for (int64_t r = 0; r < nrhs; ++r) {
            long double ax = 0;
            for (int64_t j = 0; j < n; ++j) ax += A[size_t(i * n + j)] * static_cast<long double>(X.at(j, r, e));
            rrow += fabsl(ax - static_cast<long double>(B.at(i, r, e)));
            xrow += fabsl(static_cast<long double>(X.at(i, r, e)));
        }
        if (!std::isfinite(rrow) || !std::isfinite(xrow)) return std::numeric_limits<long double>::quiet_NaN();
        anorm = std::max(anorm, arow);
        xnorm = std::max(xnorm, xrow);
        rnorm = std::max(rnorm, rrow);
    }
    return rnorm / (anorm * xnorm);
}

template <class T>
void check_layout(apairs_context_t ctx, int64_t n, int64_t batch, const Layout &l, Rng &rng, double &worst_rec,
                  double &worst_res, bool one_rhs = false) {
    INFO("n = " << n << ", batch = " << batch << ", " << l);
    const int32_t dtype = ref::Type<T>::dtype;
    const int32_t layout = l.soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS;
    const int32_t order = l.row_major ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR;
    const int32_t uplo = l.lower ? APAIRS_UPLO_LOWER : APAIRS_UPLO_UPPER;
    const long double u = ref::Type<T>::u();
    const T nan = std::numeric_limits<T>::quiet_NaN();

    // Elements: SPD, except e = 1 (not positive definite at column bad_j), e = 2 (a NaN on
    // the diagonal at column bad_j) and e = 3 (not positive definite at column bad_j > 0
    // though its diagonal is positive: A(bad_j, bad_j) half what the columns before take
    // from it), when the batch has them.
    Batch<T> A(n, n, l, batch);
    std::vector<std::vector<long double>> exact{static_cast<size_t>(batch)};
    const int64_t bad_j = n / 2;
    for (int64_t e = 0; e < batch; ++e) {
        exact[size_t(e)] = make_spd<T>(n, rng);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
                A.at(i, j, e) = stored(l, i, j) ? static_cast<T>(exact[size_t(e)][size_t(i * n + j)]) : nan;
    }
    if (batch > 1) A.at(bad_j, bad_j, 1) = T(-1);
    if (batch > 2) A.at(bad_j, bad_j, 2) = nan;
    const bool schur = batch > 3 && bad_j > 0;
    if (schur) {
        const T half = static_cast<T>(diagonal_loss(exact[3], n, bad_j) / 2);
        A.at(bad_j, bad_j, 3) = half;
        exact[3][size_t(bad_j * n + bad_j)] = half;
    }
    const std::vector<T> A0 = A.v;

    apairs_plan_t potrf = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_potrf_batched(&potrf, ctx, dtype, layout, order, uplo, n, A.ld, A.stride, batch));
    std::vector<int32_t> info(size_t(batch), -7);
    const apairs_status_t st = apairs_plan_execute_potrf(potrf, A.v.data(), info.data());
    INFO(apairs_last_error());
    apairs_plan_destroy(potrf);
    REQUIRE(st == APAIRS_SUCCESS);

    for (int64_t e = 0; e < batch; ++e) {
        INFO("element " << e);
        const int32_t want = (e == 1 || e == 2 || (e == 3 && schur)) && batch > e ? int32_t(bad_j + 1) : 0;
        CHECK(info[size_t(e)] == want);
        // The other strict triangle: never written (still NaN, its bits unchanged).
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
                if (!stored(l, i, j)) {
                    const T x = A.at(i, j, e);
                    if (std::memcmp(&x, &nan, sizeof(T)) != 0) FAIL_CHECK("other triangle written at " << i << ", " << j);
                }
        // A failed element (info f): its columns from f - 1 on keep their original bits,
        // the columns before are factored (checked by reconstruction below).
        const int64_t cols = want != 0 ? int64_t(want) - 1 : n;
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = cols; j <= i; ++j) {
                const T *const x = l.lower ? &A.at(i, j, e) : &A.at(j, i, e);
                if (std::memcmp(x, &A0[size_t(x - A.v.data())], sizeof(T)) != 0)
                    FAIL_CHECK("column " << j << " written in an element that failed at column " << cols);
            }
        // Reconstruction: L L^T (L = the factor as a lower triangle) against A, entrywise,
        // in the factored columns.
        auto L = [&](int64_t i, int64_t j) -> long double {
            if (j > i) return 0;
            return static_cast<long double>(l.lower ? A.at(i, j, e) : A.at(j, i, e));
        };
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j <= i && j < cols; ++j) {
                long double s = 0, sa = 0;
                for (int64_t q = 0; q <= j; ++q) {
                    s += L(i, q) * L(j, q);
                    sa += fabsl(L(i, q) * L(j, q));
                }
                const long double err = fabsl(s - exact[size_t(e)][size_t(i * n + j)]);
                // apairs.h (Higham, Thm 10.3): gamma_{n+1} = (n+1) u / (1 - (n+1) u).
                // The bound is attained to first order (n = 1: fl(sqrt(a))^2); the slack
                // covers this check's own long double rounding of s, which for F64 is
                // larger than the bound's second-order margin.
                const long double bound = (n + 1) * u / (1 - (n + 1) * u) * sa;
                const long double slack = (n + 2) * std::ldexp(1.0L, -62) * sa;
                const double frac = double(err / bound);
                worst_rec = std::max(worst_rec, frac);
                if (!(err <= bound + slack)) FAIL_CHECK("|A - L L^T| at (" << i << ", " << j << ") = " << double(err) << " > bound " << double(bound));
            }
    }
    // Padding between ld and the extent, and between elements: untouched.
    {
        Batch<T> mask(n, n, l, batch);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) mask.at(i, j, e) = T(1);
        for (size_t s = 0; s < A.v.size(); ++s)
            if (!(mask.v[s] == T(1))) CHECK(std::memcmp(&A.v[s], &A0[s], sizeof(T)) == 0);
    }

    // potrs from the factors just computed, on the elements that factored.
    // nrhs: 1 and 3, and (small n) 17 and 130: the CUDA engine's warp-group teams and,
    // above 128 columns, several chunks.
    std::vector<int64_t> rhs_counts = {1, 3};
    if (one_rhs)
        rhs_counts = {1};
    else if (n <= 9)
        rhs_counts.insert(rhs_counts.end(), {17, 130});
    else if (n == 64)
        rhs_counts.insert(rhs_counts.end(), {8, 9});  // the CUDA rows kernel's most columns, and one past
    for (int64_t nrhs : rhs_counts) {
        INFO("nrhs = " << nrhs);
        Batch<T> B(n, nrhs, l, batch);
        std::uniform_real_distribution<double> ud(-1, 1);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t r = 0; r < nrhs; ++r) B.at(i, r, e) = static_cast<T>(ud(rng));
        Batch<T> B0 = B;
        apairs_plan_t potrs = nullptr;
        APAIRS_REQUIRE_OK(apairs_plan_create_potrs_batched(&potrs, ctx, dtype, layout, order, uplo, n, nrhs, A.ld,
                                                           A.stride, B.ld, B.stride, batch));
        const apairs_status_t s2 = apairs_plan_execute_potrs(potrs, A.v.data(), B.v.data());
        INFO(apairs_last_error());
        apairs_plan_destroy(potrs);
        REQUIRE(s2 == APAIRS_SUCCESS);
        CHECK(B.padding_intact());
        for (int64_t e = 0; e < batch; ++e) {
            if (info[size_t(e)] != 0) continue;
            // ||A X - B||_inf / (||A||_inf ||X||_inf) <= 8 n u ("a few n u", apairs.h).
            const long double ratio = residual_ratio(exact[size_t(e)], B, B0, e);
            const double frac = double(ratio / (8 * n * u));
            worst_res = std::max(worst_res, frac);
            if (!(frac <= 1.0)) FAIL_CHECK("element " << e << ": residual " << double(ratio) << " above 8 n u");
        }
    }
    // posv on the original matrices: the same factors as potrf (bit for bit: the same
    // kernels), the same info, B solved where info = 0 and unchanged elsewhere. One
    // right-hand side where potrs took one (on CUDA past n = 96 the stream kernel, which
    // skips the failed elements), else two.
    {
        const int64_t nrhs = one_rhs ? 1 : 2;
        Batch<T> A2(n, n, l, batch);
        A2.v = A0;
        Batch<T> B(n, nrhs, l, batch);
        std::uniform_real_distribution<double> ud(-1, 1);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t r = 0; r < nrhs; ++r) B.at(i, r, e) = static_cast<T>(ud(rng));
        Batch<T> B0 = B;
        apairs_plan_t posv = nullptr;
        APAIRS_REQUIRE_OK(apairs_plan_create_posv_batched(&posv, ctx, dtype, layout, order, uplo, n, nrhs, A2.ld,
                                                          A2.stride, B.ld, B.stride, batch));
        std::vector<int32_t> info2(size_t(batch), -7);
        const apairs_status_t s3 = apairs_plan_execute_posv(posv, A2.v.data(), B.v.data(), info2.data());
        INFO(apairs_last_error());
        apairs_plan_destroy(posv);
        REQUIRE(s3 == APAIRS_SUCCESS);
        CHECK(info2 == info);
        CHECK(std::memcmp(A2.v.data(), A.v.data(), A.v.size() * sizeof(T)) == 0);
        for (int64_t e = 0; e < batch; ++e) {
            INFO("posv element " << e);
            if (info2[size_t(e)] != 0) {
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t r = 0; r < nrhs; ++r) {
                        const T x = B.at(i, r, e), x0 = B0.at(i, r, e);
                        if (std::memcmp(&x, &x0, sizeof(T)) != 0) FAIL_CHECK("B written for a failed element");
                    }
                continue;
            }
            // As potrs: ||A X - B||_inf / (||A||_inf ||X||_inf) <= 8 n u.
            const long double ratio = residual_ratio(exact[size_t(e)], B, B0, e);
            worst_res = std::max(worst_res, double(ratio / (8 * n * u)));
            if (!(ratio <= 8 * n * u)) FAIL_CHECK("posv residual " << double(ratio) << " above 8 n u");
        }
        // Padding of B untouched.
        Batch<T> mask(n, nrhs, l, batch);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t r = 0; r < nrhs; ++r) mask.at(i, r, e) = T(1);
        for (size_t q = 0; q < B.v.size(); ++q)
            if (!(mask.v[q] == T(1))) CHECK(std::memcmp(&B.v[q], &B0.v[q], sizeof(T)) == 0);
    }
}

template <class T>
void check_all() {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name() << ", "
                 << ref::Type<T>::name);
    Rng rng(seed);
    Context ctx;
    double rec = 0, res = 0;
    int variant = 0;
    // 9..32: the CUDA warp kernels' row counts C = 16, 24, 32, each full and padded (rows
    // n .. C - 1 an identity block).
    for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 25, 31, 32, 33, 64, 128}) {
        for (int lay = 0; lay < 8; ++lay, ++variant) {
            if (n >= 64 && lay % 3 != 0) continue;  // the largest sizes: three layouts each
            const Layout l{bool(lay & 1), bool(lay & 2), bool(lay & 4), int64_t(variant % 3), int64_t(variant * 5 % 7)};
            const int64_t batch = n >= 64 ? 3 : n >= 16 ? 7 : (variant % 2 ? 301 : 5);
            check_layout<T>(ctx.h, n, batch, l, rng, rec, res);
        }
    }
    std::printf("[%s] potrf/potrs %-8s worst reconstruction %.4f of the bound, worst residual %.4f of 8 n u (seed %llu)\n",
                test::backend_name(), ref::Type<T>::name, rec, res, static_cast<unsigned long long>(seed));
}

}  // namespace

TEMPLATE_TEST_CASE("batched potrf, potrs and posv: factors, solves and per-element info", "[batched][potrf]", float, double) {
    check_all<TestType>();
}

// Batches larger than one resident wave of the CUDA thread and warp kernels on a 132-SM
// device (each warp then loops over several groups of elements, prefetching the next one
// into its other slot while this one computes), in the benchmark's layout and in a padded
// SoA column-major upper one; potrs with one right-hand side (the thread, warp and rows
// kernels). CUDA only: the host engine has no waves.
TEMPLATE_TEST_CASE("batched potrf and potrs: batches past one resident wave", "[batched][potrf]", float, double) {
    if (test::backend() != APAIRS_BACKEND_CUDA) return;  // nothing to test on the host
    using T = TestType;
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), " << ref::Type<T>::name);
    Rng rng(seed);
    Context ctx;
    double rec = 0, res = 0;
    // n > 32: the rows kernels of potrf and potrs (a warp an element, 2, 3 and 4 rows a
    // lane; potrf's groups of four columns whole or cut short by n).
    const std::pair<int64_t, int64_t> shapes[] = {{2, 300007}, {4, 150001}, {8, 110017}, {16, 9001},
                                                  {24, 5003},  {32, 4001},  {40, 4001},   {64, 2003},
                                                  {81, 1009},  {97, 911},   {128, 901}};
    for (const auto &[n, batch] : shapes)
        for (const Layout &l : {Layout{false, true, true, 0, 0}, Layout{true, false, false, 1, 3}})
            check_layout<T>(ctx.h, n, batch, l, rng, rec, res, true);
    std::printf("[cuda] potrf/potrs %-8s large batches: worst reconstruction %.4f of the bound, worst residual "
                "%.4f of 8 n u (seed %llu)\n",
                ref::Type<T>::name, rec, res, static_cast<unsigned long long>(seed));
}

// AoS whose element base, ld and stride are whole 16-byte pieces (ld and stride
// multiples of 4 entries), with no swap (row-major lower, column-major upper): the CUDA
// f64 warp kernel of n = 25 .. 32 stages and copies out those through the piece map
// (16-byte pieces, then each row's last entries), a failed element's copy-out stopping
// inside a piece where its failing column n / 2 is odd (26, 30, 31); the other sizes
// and f32 (the entry map) on the same grid, and row-major upper (swap), as controls.
// Both backends.
TEMPLATE_TEST_CASE("batched potrf and potrs: AoS on the 16-byte grid", "[batched][potrf]", float, double) {
    using T = TestType;
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), " << ref::Type<T>::name);
    Rng rng(seed);
    Context ctx;
    double rec = 0, res = 0;
    const int64_t batch = test::backend() == APAIRS_BACKEND_CUDA ? 2003 : 29;
    for (int64_t n : {9, 10, 14, 16, 20, 22, 26, 30, 31, 32}) {
        const int64_t ld_pad = (4 - n % 4) % 4 + (n % 3 == 0 ? 4 : 0), ld = n + ld_pad;
        const int64_t extent = (n - 1) * ld + n, stride_pad = (4 - extent % 4) % 4 + (n % 2 ? 4 : 0);
        for (const Layout &l : {Layout{false, true, true, ld_pad, stride_pad}, Layout{false, false, false, ld_pad, stride_pad},
                                Layout{false, true, false, ld_pad, stride_pad}})
            check_layout<T>(ctx.h, n, batch, l, rng, rec, res, true);
    }
    std::printf("[%s] potrf/potrs %-8s AoS on the 16-byte grid: worst reconstruction %.4f of the bound, worst residual "
                "%.4f of 8 n u (seed %llu)\n",
                test::backend_name(), ref::Type<T>::name, rec, res, static_cast<unsigned long long>(seed));
}

TEST_CASE("batched potrf, potrs and posv: every bad argument fails with its status and writes nothing",
          "[batched][potrf]") {
    Context ctx;
    const apairs_plan_t sentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));
    struct Bad {
        const char *what;
        apairs_status_t want;
        int32_t dtype = APAIRS_DTYPE_F64, layout = APAIRS_LAYOUT_AOS, order = APAIRS_ORDER_ROW_MAJOR,
                uplo = APAIRS_UPLO_LOWER;
        int64_t n = 4, nrhs = 2, lda = 4, sa = 16, ldb = 2, sb = 8, batch = 10;
        const char *word = nullptr;  // the message names it
        bool null_plan = false, null_ctx = false;
    };
    std::vector<Bad> bad;
    auto add = [&](Bad b) { bad.push_back(b); };
    { Bad b{"good", APAIRS_SUCCESS}; add(b); }
    { Bad b{"good, SoA column-major upper", APAIRS_SUCCESS}; b.layout = APAIRS_LAYOUT_SOA; b.order = APAIRS_ORDER_COL_MAJOR; b.uplo = APAIRS_UPLO_UPPER; b.sa = 10; b.ldb = 4; b.sb = 10; add(b); }
    { Bad b{"NULL plan pointer", APAIRS_ERROR_NULL_POINTER}; b.null_plan = true; b.word = "plan"; add(b); }
    { Bad b{"NULL context", APAIRS_ERROR_NULL_POINTER}; b.null_ctx = true; b.word = "ctx"; add(b); }
    { Bad b{"dtype", APAIRS_ERROR_UNKNOWN_ENUM}; b.dtype = 9; b.word = "dtype"; add(b); }
    { Bad b{"dtype 0", APAIRS_ERROR_UNKNOWN_ENUM}; b.dtype = 0; b.word = "dtype"; add(b); }
    { Bad b{"dtype u8", APAIRS_ERROR_UNSUPPORTED}; b.dtype = APAIRS_DTYPE_U8; b.word = "dtype"; add(b); }
    { Bad b{"layout", APAIRS_ERROR_UNKNOWN_ENUM}; b.layout = 0; b.word = "layout"; add(b); }
    { Bad b{"order", APAIRS_ERROR_UNKNOWN_ENUM}; b.order = 3; b.word = "order"; add(b); }
    { Bad b{"uplo", APAIRS_ERROR_UNKNOWN_ENUM}; b.uplo = 3; b.word = "uplo"; add(b); }
    { Bad b{"uplo 0", APAIRS_ERROR_UNKNOWN_ENUM}; b.uplo = 0; b.word = "uplo"; add(b); }
    { Bad b{"n = 0", APAIRS_ERROR_INVALID_VALUE}; b.n = 0; b.word = "n"; add(b); }
    { Bad b{"n < 0", APAIRS_ERROR_INVALID_VALUE}; b.n = -1; b.word = "n"; add(b); }
    { Bad b{"n = 129", APAIRS_ERROR_INVALID_VALUE}; b.n = 129; b.lda = 129; b.sa = 129 * 129; b.sb = 258; b.word = "n"; add(b); }
    { Bad b{"batch = 0", APAIRS_ERROR_INVALID_VALUE}; b.batch = 0; b.word = "batch"; add(b); }
    { Bad b{"batch < 0", APAIRS_ERROR_INVALID_VALUE}; b.batch = -1; b.word = "batch"; add(b); }
    { Bad b{"lda < n", APAIRS_ERROR_INVALID_VALUE}; b.lda = 3; b.word = "lda"; add(b); }
    { Bad b{"lda < n, column-major", APAIRS_ERROR_INVALID_VALUE}; b.order = APAIRS_ORDER_COL_MAJOR; b.lda = 3; b.ldb = 4; b.word = "lda"; add(b); }
    { Bad b{"AoS stride overlaps", APAIRS_ERROR_INVALID_VALUE}; b.sa = 15; b.word = "stride_a"; add(b); }
    { Bad b{"SoA stride < batch", APAIRS_ERROR_INVALID_VALUE}; b.layout = APAIRS_LAYOUT_SOA; b.sa = 9; b.sb = 10; b.word = "stride_a"; add(b); }
    { Bad b{"span overflows", APAIRS_ERROR_OVERFLOW}; b.sa = INT64_MAX / 4; b.word = "stride_a"; add(b); }
    { Bad b{"span's bytes overflow", APAIRS_ERROR_OVERFLOW}; b.sa = INT64_MAX / 36; b.word = "stride_a"; add(b); }
    { Bad b{"SoA span overflows", APAIRS_ERROR_OVERFLOW}; b.layout = APAIRS_LAYOUT_SOA; b.sa = INT64_MAX / 8; b.sb = 10; b.word = "stride_a"; add(b); }
    { Bad b{"ld overflows", APAIRS_ERROR_OVERFLOW}; b.lda = INT64_MAX / 2; b.sa = INT64_MAX; b.word = "lda"; add(b); }
    const size_t potrf_count = bad.size();
    // potrs and posv only (potrf has no B):
    { Bad b{"nrhs = 0", APAIRS_ERROR_INVALID_VALUE}; b.nrhs = 0; b.word = "nrhs"; add(b); }
    { Bad b{"nrhs < 0", APAIRS_ERROR_INVALID_VALUE}; b.nrhs = -1; b.word = "nrhs"; add(b); }
    { Bad b{"nrhs = 1025", APAIRS_ERROR_INVALID_VALUE}; b.nrhs = 1025; b.ldb = 1025; b.sb = 4100; b.word = "nrhs"; add(b); }
    { Bad b{"ldb < nrhs", APAIRS_ERROR_INVALID_VALUE}; b.ldb = 1; b.word = "ldb"; add(b); }
    { Bad b{"ldb < n, column-major", APAIRS_ERROR_INVALID_VALUE}; b.order = APAIRS_ORDER_COL_MAJOR; b.ldb = 3; b.word = "ldb"; add(b); }
    { Bad b{"stride_b overlaps", APAIRS_ERROR_INVALID_VALUE}; b.sb = 7; b.word = "stride_b"; add(b); }
    { Bad b{"SoA stride_b < batch", APAIRS_ERROR_INVALID_VALUE}; b.layout = APAIRS_LAYOUT_SOA; b.sa = 10; b.sb = 9; b.word = "stride_b"; add(b); }
    { Bad b{"B's span overflows", APAIRS_ERROR_OVERFLOW}; b.sb = INT64_MAX / 4; b.word = "stride_b"; add(b); }
    { Bad b{"ldb overflows", APAIRS_ERROR_OVERFLOW}; b.ldb = INT64_MAX / 2; b.sb = INT64_MAX; b.word = "ldb"; add(b); }
    for (size_t x = 0; x < bad.size(); ++x) {
        const Bad &b = bad[x];
        for (const char *op : {"potrf", "potrs", "posv"}) {
            const std::string name = op;
            if (name == "potrf" && x >= potrf_count) continue;
            INFO(b.what << ", " << op);
            apairs_plan_t plan = sentinel;
            apairs_plan_t *const out = b.null_plan ? nullptr : &plan;
            const apairs_context_t c = b.null_ctx ? nullptr : ctx.h;
            apairs_status_t st;
            if (name == "potrf")
                st = apairs_plan_create_potrf_batched(out, c, b.dtype, b.layout, b.order, b.uplo, b.n, b.lda, b.sa,
                                                      b.batch);
            else if (name == "potrs")
                st = apairs_plan_create_potrs_batched(out, c, b.dtype, b.layout, b.order, b.uplo, b.n, b.nrhs, b.lda,
                                                      b.sa, b.ldb, b.sb, b.batch);
            else
                st = apairs_plan_create_posv_batched(out, c, b.dtype, b.layout, b.order, b.uplo, b.n, b.nrhs, b.lda,
                                                     b.sa, b.ldb, b.sb, b.batch);
            const std::string msg = apairs_last_error();
            INFO("status " << apairs_status_string(st) << ", message \"" << msg << "\"");
            CHECK(st == b.want);
            if (st == APAIRS_SUCCESS) {
                CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
                continue;
            }
            CHECK(plan == sentinel);
            CHECK(msg.find("apairs_plan_create_" + name + "_batched") != std::string::npos);
            const char *says = b.null_plan || b.null_ctx ? " is NULL" : " = ";
            if (b.word) CHECK(msg.find(std::string(b.word) + says) != std::string::npos);
        }
    }

    // Execute: a NULL handle or array, or a plan of another operation (each of the three
    // executed by the other two functions), fails and writes nothing to the arrays it was
    // given (poisoned: any write shows).
    const double poison = ref::poison<double>();
    const int32_t poison_info = ref::poison<int32_t>();
    auto execute = [](const std::string &op, apairs_plan_t plan, double *A, double *B, int32_t *info) {
        if (op == "potrf") return apairs_plan_execute_potrf(plan, A, info);
        if (op == "potrs") return apairs_plan_execute_potrs(plan, A, B);
        return apairs_plan_execute_posv(plan, A, B, info);
    };
    for (const char *op : {"potrf", "potrs", "posv"}) {
        const std::string name = op;
        apairs_plan_t plan = nullptr;
        // n = 2, nrhs = 1, one element: A 4 entries, B 2, info 1.
        if (name == "potrf")
            APAIRS_REQUIRE_OK(apairs_plan_create_potrf_batched(&plan, ctx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                               APAIRS_ORDER_ROW_MAJOR, APAIRS_UPLO_LOWER, 2, 2, 4, 1));
        else if (name == "potrs")
            APAIRS_REQUIRE_OK(apairs_plan_create_potrs_batched(&plan, ctx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                               APAIRS_ORDER_ROW_MAJOR, APAIRS_UPLO_LOWER, 2, 1, 2, 4, 1,
                                                               2, 1));
        else
            APAIRS_REQUIRE_OK(apairs_plan_create_posv_batched(&plan, ctx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                              APAIRS_ORDER_ROW_MAJOR, APAIRS_UPLO_LOWER, 2, 1, 2, 4, 1,
                                                              2, 1));
        double a[4] = {poison, poison, poison, poison}, b[2] = {poison, poison};
        int32_t info = poison_info;
        auto untouched = [&] {
            bool same = info == poison_info;
            for (const double &x : a) same &= std::memcmp(&x, &poison, sizeof x) == 0;
            for (const double &x : b) same &= std::memcmp(&x, &poison, sizeof x) == 0;
            return same;
        };
        struct Null {
            const char *word;
            apairs_plan_t plan;
            double *A, *B;
            int32_t *info;
        };
        std::vector<Null> nulls = {{"plan", nullptr, a, b, &info}, {"A", plan, nullptr, b, &info}};
        if (name != "potrf") nulls.push_back({"B", plan, a, nullptr, &info});
        if (name != "potrs") nulls.push_back({"info", plan, a, b, nullptr});
        for (const Null &z : nulls) {
            INFO(op << " with " << z.word << " NULL");
            CHECK(execute(name, z.plan, z.A, z.B, z.info) == APAIRS_ERROR_NULL_POINTER);
            const std::string msg = apairs_last_error();
            INFO("message \"" << msg << "\"");
            CHECK(msg.find("apairs_plan_execute_" + name) != std::string::npos);
            CHECK(msg.find(std::string(z.word) + " is NULL") != std::string::npos);
            CHECK(untouched());
        }
        for (const char *other : {"potrf", "potrs", "posv"}) {
            if (name == other) continue;
            INFO(op << " plan executed by apairs_plan_execute_" << other);
            CHECK(execute(other, plan, a, b, &info) == APAIRS_ERROR_UNSUPPORTED);
            const std::string msg = apairs_last_error();
            INFO("message \"" << msg << "\"");
            CHECK(msg.find("apairs_plan_execute_" + name) != std::string::npos);  // the function to use
            CHECK(untouched());
        }
        CHECK(apairs_plan_execute_gemm(plan, a, a, b) == APAIRS_ERROR_UNSUPPORTED);
        CHECK(untouched());
        apairs_plan_destroy(plan);
    }

    // A potrf plan after failed executes still runs: [4 . ; 2 5], the strict upper triangle
    // never touched.
    apairs_plan_t plan = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_potrf_batched(&plan, ctx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                       APAIRS_ORDER_ROW_MAJOR, APAIRS_UPLO_LOWER, 2, 2, 4, 1));
    double a[4] = {4, 99, 2, 5};
    int32_t info = -1;
    CHECK(apairs_plan_execute_potrf(plan, a, nullptr) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_gemm(plan, a, a, a) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(std::string(apairs_last_error()).find("apairs_plan_execute_potrf") != std::string::npos);
    CHECK(a[0] == 4);
    CHECK(info == -1);
    APAIRS_REQUIRE_OK(apairs_plan_execute_potrf(plan, a, &info));
    CHECK(info == 0);
    CHECK(a[0] == 2);   // sqrt(4)
    CHECK(a[1] == 99);  // the strict upper triangle is not touched
    CHECK(a[2] == 1);   // 2 / 2
    CHECK(a[3] == 2);   // sqrt(5 - 1)
    apairs_plan_destroy(plan);
}
