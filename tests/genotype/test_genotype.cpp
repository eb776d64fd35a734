// The genotype family through the public API: apairs_genotype_pack,
// apairs_genotype_missing_weights and every metric of apairs_plan_create_genotype,
// against a straightforward reference computed from the unpacked bytes (g = 0, 1, 2 or
// missing), on fresh random cohorts of awkward sizes, strides and missing rates, with
// every entry of D checked to be written; every bad argument gets its status and writes
// nothing. The plans run on the suite's backend (host in `unit`, CUDA in `gpu`).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "reference.hpp"

namespace {

using ref::Rng;
constexpr uint8_t kMiss = 9;  // the missing value of the unpacked cohorts

struct Cohort {
    int64_t n = 0, d = 0, ld = 0;      // packed stride
    std::vector<uint8_t> g;            // n x d, 0/1/2/kMiss
    std::vector<uint8_t> packed;       // n x ld
};

int64_t row_bytes(int64_t d) { return (d + 3) / 4; }

// A cohort with missing rate `miss`; packed with padding bytes and junk in the unused
// high bits of each row's last byte (the engine must never read them).
Cohort make_cohort(Rng &rng, int64_t n, int64_t d, double miss, int64_t pad = 3) {
    Cohort c;
    c.n = n, c.d = d, c.ld = row_bytes(d) + pad;
    c.g.resize(size_t(n * d));
    std::uniform_real_distribution<double> u(0, 1);
    // Per-variant allele frequency, so that IBS0 and IBS2 both occur.
    std::vector<double> f(static_cast<size_t>(d));
    for (auto &x : f) x = u(rng);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t k = 0; k < d; ++k) {
            if (u(rng) < miss) {
                c.g[size_t(i * d + k)] = kMiss;
                continue;
            }
            c.g[size_t(i * d + k)] = uint8_t((u(rng) < f[size_t(k)]) + (u(rng) < f[size_t(k)]));
        }
    c.packed.assign(size_t(n * c.ld), 0xA5);
    apairs_context_t ctx = nullptr;
    APAIRS_REQUIRE_OK(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0));
    APAIRS_REQUIRE_OK(apairs_genotype_pack(ctx, c.g.data(), n, d, d, kMiss, c.packed.data(), c.ld));
    apairs_context_destroy(ctx);
    // The pack leaves the padding bytes alone; junk the unused bits of the last byte.
    for (int64_t i = 0; i < n; ++i) {
        if (pad > 0) REQUIRE(c.packed[size_t(i * c.ld + row_bytes(d))] == 0xA5);
        if (d % 4) c.packed[size_t(i * c.ld + row_bytes(d) - 1)] |= uint8_t(0xFF << (2 * (d % 4)));
    }
    return c;
}

// PLINK .bed code of variant k of row i, straight from the bytes.
int code_at(const Cohort &c, int64_t i, int64_t k) { return (c.packed[size_t(i * c.ld + k / 4)] >> (2 * (k % 4))) & 3; }

// The reference weights (apairs.h, PLINK 1.9's formula: the major allele's frequency)
// from the unpacked genotypes.
std::vector<uint32_t> reference_weights(const Cohort &c) {
    std::vector<double> raw(static_cast<size_t>(c.d));
    double total = 0;
    for (int64_t k = 0; k < c.d; ++k) {
        int64_t alleles = 0, copies = 0;
        for (int64_t i = 0; i < c.n; ++i) {
            const uint8_t g = c.g[size_t(i * c.d + k)];
            if (g == kMiss) continue;
            alleles += 2, copies += g;
        }
        double f = alleles ? double(copies) / double(alleles) : 0.5;
        if (f < 0.5) f = 1.0 - f;
        if (f != 1.0) f = f * (1.0 - f) * (f * f - f + 1);
        raw[size_t(k)] = f;
        total += f;
    }
    std::vector<uint32_t> w(static_cast<size_t>(c.d));
    const double scale = (4294967296.0 - double(c.d)) / total;
    for (int64_t k = 0; k < c.d; ++k) w[size_t(k)] = uint32_t(raw[size_t(k)] * scale + 0.5);
    return w;
}

const int32_t kCountMetrics[] = {APAIRS_GENOTYPE_HAMMING, APAIRS_GENOTYPE_ALLELE_COUNT, APAIRS_GENOTYPE_IBS0,
                                 APAIRS_GENOTYPE_IBS1,    APAIRS_GENOTYPE_IBS2,         APAIRS_GENOTYPE_NONMISSING};
const int32_t kPlinkMetrics[] = {APAIRS_GENOTYPE_DISTANCE, APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_ONE_MINUS_IBS};

// The reference value of one pair: counts from the bytes, the PLINK metrics by the
// formulas of apairs.h (PLINK's double operations in its order).
double reference(int32_t metric, int32_t missing, const Cohort &A, int64_t i, const Cohort &B, int64_t j,
                 const std::vector<uint32_t> &w) {
    int64_t ham = 0, alct = 0, ibs0 = 0, ibs1 = 0, nm = 0;
    uint32_t wmiss = 0;  // weight missing in a or b, as uint32
    uint64_t W = 0;
    for (uint32_t x : w) W += x;
    for (int64_t k = 0; k < A.d; ++k) {
        const uint8_t a = A.g[size_t(i * A.d + k)], b = B.g[size_t(j * B.d + k)];
        if (a == kMiss || b == kMiss) {
            if (!w.empty()) wmiss += w[size_t(k)];
            continue;
        }
        ++nm;
        const int diff = std::abs(int(a) - int(b));
        ham += diff != 0, alct += diff, ibs0 += diff == 2, ibs1 += diff == 1;
    }
    switch (metric) {
    case APAIRS_GENOTYPE_HAMMING: return double(ham);
    case APAIRS_GENOTYPE_ALLELE_COUNT: return double(alct);
    case APAIRS_GENOTYPE_IBS0: return double(ibs0);
    case APAIRS_GENOTYPE_IBS1: return double(ibs1);
    case APAIRS_GENOTYPE_IBS2: return double(nm - ham);
    case APAIRS_GENOTYPE_NONMISSING: return double(nm);
    }
    const double s = missing == APAIRS_GENOTYPE_MISSING_FLAT
                         ? (double(A.d) / double(uint32_t(nm))) * double(alct)
                         : (double(W) / double(uint32_t(uint32_t(W) - wmiss))) * double(alct);
    const double half = 0.5 / double(A.d);
    if (metric == APAIRS_GENOTYPE_DISTANCE) return s;
    if (metric == APAIRS_GENOTYPE_IBS) return 1.0 - s * half;
    return s * half;
}

// Plans, executes on a poisoned D with padding columns, compares every entry exactly
// (bit for bit; NaN where the reference is NaN) and checks the padding is untouched.
template <class O>
void check_metric(int32_t metric, int32_t missing, const Cohort &A, const Cohort &B, bool same,
                  const std::vector<uint32_t> &w, int threads) {
    INFO("[" << test::backend_name() << "] metric " << metric << " missing " << missing << " n1 " << A.n << " n2 "
             << B.n << " d " << A.d
                   << (same ? " (B = A)" : "") << " threads " << threads);
    apairs_context_t ctx = nullptr;
    APAIRS_REQUIRE_OK(apairs_context_create(&ctx, test::backend(), 0));
    APAIRS_REQUIRE_OK(apairs_context_set_option(ctx, APAIRS_OPTION_HOST_THREADS, threads));
    apairs_plan_t plan = nullptr;
    const int64_t ldd = B.n + 2;
    APAIRS_REQUIRE_OK(apairs_plan_create_genotype(&plan, ctx, metric, missing, A.n, B.n, A.d, A.ld, B.ld, ldd,
                                                  missing == APAIRS_GENOTYPE_MISSING_WEIGHTED ? w.data() : nullptr));
    std::vector<O> D(size_t(A.n * ldd), ref::poison<O>());
    APAIRS_REQUIRE_OK(apairs_plan_execute_genotype(plan, A.packed.data(), same ? A.packed.data() : B.packed.data(),
                                                   D.data()));
    int64_t bad = 0;
    for (int64_t i = 0; i < A.n; ++i) {
        for (int64_t j = 0; j < B.n; ++j) {
            const double want = reference(metric, missing, A, i, B, j, missing ? w : std::vector<uint32_t>{});
            const O got = D[size_t(i * ldd + j)];
            const bool ok = std::isnan(want) ? (got != got) : (double(got) == want && !(got != got));
            if (!ok && bad++ < 5) {
                UNSCOPED_INFO("D[" << i << "][" << j << "] = " << double(got) << ", reference " << want);
            }
        }
        for (int64_t j = B.n; j < ldd; ++j) CHECK(ref::is_poison(D[size_t(i * ldd + j)]));
    }
    CHECK(bad == 0);
    apairs_plan_destroy(plan);
    apairs_context_destroy(ctx);
}

void check_all(const Cohort &A, const Cohort &B, bool same, int threads) {
    // Weights from A's rows (any weights will do for B's rows too).
    std::vector<uint32_t> w(static_cast<size_t>(A.d));
    APAIRS_REQUIRE_OK(apairs_genotype_missing_weights(A.packed.data(), A.n, A.d, A.ld, nullptr, w.data()));
    CHECK(w == reference_weights(A));
    for (int32_t m : kCountMetrics) check_metric<int32_t>(m, 0, A, B, same, w, threads);
    for (int32_t m : kPlinkMetrics) {
        check_metric<double>(m, APAIRS_GENOTYPE_MISSING_FLAT, A, B, same, w, threads);
        check_metric<double>(m, APAIRS_GENOTYPE_MISSING_WEIGHTED, A, B, same, w, threads);
    }
}

}  // namespace

TEST_CASE("genotype: pack writes PLINK's codes and leaves the rest alone", "[genotype]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    for (int64_t d : {1, 3, 4, 5, 63, 65, 1031}) {
        const Cohort c = make_cohort(rng, 3, d, 0.2);
        for (int64_t i = 0; i < c.n; ++i)
            for (int64_t k = 0; k < d; ++k) {
                const uint8_t g = c.g[size_t(i * d + k)];
                const int want = g == kMiss ? 1 : g == 0 ? 0 : g == 1 ? 2 : 3;
                REQUIRE(code_at(c, i, k) == want);
            }
    }
}

TEST_CASE("genotype: every metric equals the reference, exactly", "[genotype]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    struct Shape {
        int64_t n1, n2, d;
        double miss;
    };
    const Shape shapes[] = {{1, 1, 1, 0.0},   {3, 5, 3, 0.3},    {4, 4, 4, 0.1},     {5, 7, 5, 0.2},
                            {7, 3, 63, 0.05}, {13, 11, 65, 0.1}, {2, 53, 1031, 0.05}, {53, 49, 1000, 0.0},
                            {50, 97, 517, 0.02}, {150, 131, 300, 0.0}};  // the last: several CUDA tiles, no missing call
    for (const Shape &s : shapes) {
        const Cohort A = make_cohort(rng, s.n1, s.d, s.miss);
        const Cohort B = make_cohort(rng, s.n2, s.d, s.miss, 0);
        check_all(A, B, false, 2);
        check_all(A, A, true, 1);  // the symmetric path, one thread
        check_all(A, A, false, 2); // the same rows as two arrays
    }
}

TEST_CASE("genotype: many missing calls, an all-missing row, and a pair with nothing in common", "[genotype]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    Cohort A = make_cohort(rng, 6, 130, 0.6);
    // Row 0 all missing (N = 0 against everyone: the PLINK metrics give NaN), row 1 and 2
    // complementary halves.
    for (int64_t k = 0; k < A.d; ++k) {
        A.g[size_t(k)] = kMiss;
        A.g[size_t(A.d + k)] = k < 65 ? kMiss : 1;
        A.g[size_t(2 * A.d + k)] = k < 65 ? 2 : kMiss;
    }
    apairs_context_t ctx = nullptr;
    APAIRS_REQUIRE_OK(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0));
    APAIRS_REQUIRE_OK(apairs_genotype_pack(ctx, A.g.data(), A.n, A.d, A.d, kMiss, A.packed.data(), A.ld));
    apairs_context_destroy(ctx);
    check_all(A, A, true, 2);
    check_all(A, A, false, 1);
}

TEST_CASE("genotype: the packed kernels equal U8 HAMMING and L1 on 0/1/2 floats", "[genotype]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    for (int64_t d : {1, 65, 1000}) {
        const Cohort A = make_cohort(rng, 17, d, 0.0), B = make_cohort(rng, 9, d, 0.0);
        apairs_context_t ctx = nullptr;
        APAIRS_REQUIRE_OK(apairs_context_create(&ctx, test::backend(), 0));
        auto run_pairwise = [&](int32_t metric, int32_t dtype, const void *a, const void *b, void *D) {
            apairs_plan_t p = nullptr;
            APAIRS_REQUIRE_OK(apairs_plan_create_pairwise(&p, ctx, metric, 0, dtype, A.n, B.n, d, d, d, B.n));
            APAIRS_REQUIRE_OK(apairs_plan_execute(p, a, b, D));
            apairs_plan_destroy(p);
        };
        auto run_genotype = [&](int32_t metric, void *D) {
            apairs_plan_t p = nullptr;
            APAIRS_REQUIRE_OK(apairs_plan_create_genotype(&p, ctx, metric, 0, A.n, B.n, d, A.ld, B.ld, B.n, nullptr));
            APAIRS_REQUIRE_OK(apairs_plan_execute_genotype(p, A.packed.data(), B.packed.data(), D));
            apairs_plan_destroy(p);
        };
        std::vector<int32_t> hu8(size_t(A.n * B.n)), hg(size_t(A.n * B.n)), alct(size_t(A.n * B.n));
        run_pairwise(APAIRS_METRIC_HAMMING, APAIRS_DTYPE_U8, A.g.data(), B.g.data(), hu8.data());
        run_genotype(APAIRS_GENOTYPE_HAMMING, hg.data());
        CHECK(hu8 == hg);
        std::vector<double> fa(A.g.begin(), A.g.end()), fb(B.g.begin(), B.g.end()), l1(size_t(A.n * B.n));
        run_pairwise(APAIRS_METRIC_L1, APAIRS_DTYPE_F64, fa.data(), fb.data(), l1.data());
        run_genotype(APAIRS_GENOTYPE_ALLELE_COUNT, alct.data());
        for (size_t k = 0; k < l1.size(); ++k) CHECK(double(alct[k]) == l1[k]);
        apairs_context_destroy(ctx);
    }
}

namespace {

struct Result {
    apairs_status_t status;
    std::string message;
};

template <class F>
Result call(F &&f) {
    const apairs_status_t s = f();
    return {s, apairs_last_error()};
}

void expect(const Result &r, apairs_status_t want, const char *fn, const char *word) {
    INFO("status " << r.status << " (" << apairs_status_string(r.status) << "), last error \"" << r.message << "\"");
    CHECK(r.status == want);
    CHECK(r.message.find(fn) != std::string::npos);
    CHECK(r.message.find(word) != std::string::npos);
}

}  // namespace

TEST_CASE("genotype: every bad argument gets its status, a message, and writes nothing", "[genotype][errors]") {
    Rng rng(ref::fresh_seed());
    const Cohort c = make_cohort(rng, 5, 37, 0.1);
    apairs_context_t ctx = nullptr;
    APAIRS_REQUIRE_OK(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0));
    const apairs_plan_t sentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));
    const std::vector<uint32_t> w(37, 1000);
    const std::vector<uint32_t> w0(37, 0);
    const int64_t rb = row_bytes(37);
    const char *fn = "apairs_plan_create_genotype";
    struct Case {
        int32_t metric, missing;
        int64_t n1, n2, d, lda, ldb, ldd;
        const uint32_t *weights;
        apairs_status_t want;
        const char *word;
    };
    const Case cases[] = {
        {0, 0, 5, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_UNKNOWN_ENUM, "metric"},
        {10, 0, 5, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_UNKNOWN_ENUM, "metric"},
        {APAIRS_GENOTYPE_IBS, 0, 5, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_UNKNOWN_ENUM, "missing"},
        {APAIRS_GENOTYPE_IBS, 3, 5, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_UNKNOWN_ENUM, "missing"},
        {APAIRS_GENOTYPE_HAMMING, 1, 5, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_INVALID_VALUE, "missing"},
        {APAIRS_GENOTYPE_HAMMING, 0, 0, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_INVALID_VALUE, "n1"},
        {APAIRS_GENOTYPE_HAMMING, 0, 5, -1, 37, rb, rb, 5, nullptr, APAIRS_ERROR_INVALID_VALUE, "n2"},
        {APAIRS_GENOTYPE_HAMMING, 0, 5, 5, 0, rb, rb, 5, nullptr, APAIRS_ERROR_INVALID_VALUE, "d"},
        {APAIRS_GENOTYPE_HAMMING, 0, 5, 5, int64_t(1) << 30, int64_t(1) << 29, int64_t(1) << 29, 5, nullptr,
         APAIRS_ERROR_INVALID_VALUE, "2^30"},
        {APAIRS_GENOTYPE_HAMMING, 0, 5, 5, 37, rb - 1, rb, 5, nullptr, APAIRS_ERROR_INVALID_VALUE, "lda"},
        {APAIRS_GENOTYPE_HAMMING, 0, 5, 5, 37, rb, rb - 1, 5, nullptr, APAIRS_ERROR_INVALID_VALUE, "ldb"},
        {APAIRS_GENOTYPE_HAMMING, 0, 5, 5, 37, rb, rb, 4, nullptr, APAIRS_ERROR_INVALID_VALUE, "ldd"},
        {APAIRS_GENOTYPE_HAMMING, 0, int64_t(1) << 62, 5, 37, rb, rb, 5, nullptr, APAIRS_ERROR_OVERFLOW, "n1"},
        {APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_FLAT, 5, 5, 37, rb, rb, int64_t(1) << 61, nullptr,
         APAIRS_ERROR_OVERFLOW, "ldd"},
        {APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_WEIGHTED, 5, 5, 37, rb, rb, 5, nullptr,
         APAIRS_ERROR_NULL_POINTER, "weights"},
        {APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_WEIGHTED, 5, 5, 37, rb, rb, 5, w0.data(),
         APAIRS_ERROR_INVALID_VALUE, "weights"},
    };
    for (const Case &k : cases) {
        apairs_plan_t plan = sentinel;
        const Result r = call([&] {
            return apairs_plan_create_genotype(&plan, ctx, k.metric, k.missing, k.n1, k.n2, k.d, k.lda, k.ldb, k.ldd,
                                               k.weights);
        });
        expect(r, k.want, fn, k.word);
        CHECK(plan == sentinel);
    }
    expect(call([&] { return apairs_plan_create_genotype(nullptr, ctx, 1, 0, 5, 5, 37, rb, rb, 5, nullptr); }),
           APAIRS_ERROR_NULL_POINTER, fn, "plan");
    apairs_plan_t plan = nullptr;
    expect(call([&] { return apairs_plan_create_genotype(&plan, nullptr, 1, 0, 5, 5, 37, rb, rb, 5, nullptr); }),
           APAIRS_ERROR_NULL_POINTER, fn, "ctx");

    // Execute: null arrays, a plan of another family both ways; D untouched.
    APAIRS_REQUIRE_OK(apairs_plan_create_genotype(&plan, ctx, APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_WEIGHTED, 5,
                                                  5, 37, c.ld, c.ld, 5, w.data()));
    std::vector<double> D(25, ref::poison<double>());
    const char *ex = "apairs_plan_execute_genotype";
    expect(call([&] { return apairs_plan_execute_genotype(plan, nullptr, c.packed.data(), D.data()); }),
           APAIRS_ERROR_NULL_POINTER, ex, "A");
    expect(call([&] { return apairs_plan_execute_genotype(plan, c.packed.data(), nullptr, D.data()); }),
           APAIRS_ERROR_NULL_POINTER, ex, "B");
    expect(call([&] { return apairs_plan_execute_genotype(plan, c.packed.data(), c.packed.data(), nullptr); }),
           APAIRS_ERROR_NULL_POINTER, ex, "D");
    expect(call([&] { return apairs_plan_execute_genotype(nullptr, c.packed.data(), c.packed.data(), D.data()); }),
           APAIRS_ERROR_NULL_POINTER, ex, "plan");
    expect(call([&] { return apairs_plan_execute(plan, c.packed.data(), c.packed.data(), D.data()); }),
           APAIRS_ERROR_UNSUPPORTED, "apairs_plan_execute", "apairs_plan_execute_genotype");
    for (double v : D) CHECK(ref::is_poison(v));
    apairs_plan_t pw = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_pairwise(&pw, ctx, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8, 2, 2, 3, 3, 3, 2));
    expect(call([&] { return apairs_plan_execute_genotype(pw, c.packed.data(), c.packed.data(), D.data()); }),
           APAIRS_ERROR_UNSUPPORTED, ex, "apairs_plan_execute");
    apairs_plan_destroy(pw);
    apairs_plan_destroy(plan);

    // Pack: a bad byte anywhere fails before anything is written.
    std::vector<uint8_t> g = c.g, out(size_t(5 * rb), 0x5A);
    g[size_t(4 * 37 + 36)] = 7;
    const char *pk = "apairs_genotype_pack";
    expect(call([&] { return apairs_genotype_pack(ctx, g.data(), 5, 37, 37, kMiss, out.data(), rb); }),
           APAIRS_ERROR_INVALID_VALUE, pk, "genotypes[4][36] = 7");
    for (uint8_t v : out) CHECK(v == 0x5A);
    expect(call([&] { return apairs_genotype_pack(ctx, c.g.data(), 5, 37, 37, 2, out.data(), rb); }),
           APAIRS_ERROR_INVALID_VALUE, pk, "missing_value");
    expect(call([&] { return apairs_genotype_pack(ctx, c.g.data(), 5, 37, 37, 256, out.data(), rb); }),
           APAIRS_ERROR_INVALID_VALUE, pk, "missing_value");
    expect(call([&] { return apairs_genotype_pack(ctx, c.g.data(), 5, 37, 36, kMiss, out.data(), rb); }),
           APAIRS_ERROR_INVALID_VALUE, pk, "ld_genotypes");
    expect(call([&] { return apairs_genotype_pack(ctx, c.g.data(), 5, 37, 37, kMiss, out.data(), rb - 1); }),
           APAIRS_ERROR_INVALID_VALUE, pk, "ld_packed");
    expect(call([&] { return apairs_genotype_pack(ctx, c.g.data(), 0, 37, 37, kMiss, out.data(), rb); }),
           APAIRS_ERROR_INVALID_VALUE, pk, "n");
    expect(call([&] { return apairs_genotype_pack(ctx, nullptr, 5, 37, 37, kMiss, out.data(), rb); }),
           APAIRS_ERROR_NULL_POINTER, pk, "genotypes");
    expect(call([&] { return apairs_genotype_pack(ctx, c.g.data(), 5, 37, 37, kMiss, nullptr, rb); }),
           APAIRS_ERROR_NULL_POINTER, pk, "packed");
    expect(call([&] { return apairs_genotype_pack(nullptr, c.g.data(), 5, 37, 37, kMiss, out.data(), rb); }),
           APAIRS_ERROR_NULL_POINTER, pk, "ctx");
    for (uint8_t v : out) CHECK(v == 0x5A);

    // Weights: bad arguments write nothing.
    std::vector<uint8_t> zeros(size_t(5 * 37), 0), zpacked(size_t(5 * rb));
    APAIRS_REQUIRE_OK(apairs_genotype_pack(ctx, zeros.data(), 5, 37, 37, kMiss, zpacked.data(), rb));
    std::vector<uint32_t> wout(37, 77);
    const char *mw = "apairs_genotype_missing_weights";
    expect(call([&] { return apairs_genotype_missing_weights(nullptr, 5, 37, rb, nullptr, wout.data()); }),
           APAIRS_ERROR_NULL_POINTER, mw, "packed");
    expect(call([&] { return apairs_genotype_missing_weights(zpacked.data(), 5, 37, rb, nullptr, nullptr); }),
           APAIRS_ERROR_NULL_POINTER, mw, "weights");
    expect(call([&] { return apairs_genotype_missing_weights(zpacked.data(), 5, 37, rb - 1, nullptr, wout.data()); }),
           APAIRS_ERROR_INVALID_VALUE, mw, "ld");
    for (uint32_t v : wout) CHECK(v == 77);
    // Every variant fixed for A1 (every call g = 0): f = 0 is taken as the major allele's
    // f = 1 (PLINK 1.9 without --keep-allele-order), so every weight is the same.
    APAIRS_REQUIRE_OK(apairs_genotype_missing_weights(zpacked.data(), 5, 37, rb, nullptr, wout.data()));
    CHECK(wout == std::vector<uint32_t>(37, uint32_t((4294967296.0 - 37.0) / 37.0 + 0.5)));
    // Founders: only the marked rows count.
    const std::vector<uint8_t> founders = {0, 1, 0, 1, 1};
    APAIRS_REQUIRE_OK(apairs_genotype_missing_weights(c.packed.data(), 5, 37, c.ld, founders.data(), wout.data()));
    Cohort sub;
    sub.n = 3, sub.d = 37;
    for (int64_t i : {1, 3, 4}) sub.g.insert(sub.g.end(), c.g.begin() + i * 37, c.g.begin() + (i + 1) * 37);
    CHECK(wout == reference_weights(sub));
    apairs_context_destroy(ctx);
}

TEST_CASE("genotype: swapping A1 and A2 changes no metric", "[genotype]") {
    // apairs.h: which allele is counted does not matter. Every count and FLAT metric of the
    // swapped rows (g -> 2 - g, missing kept) equals the original bit for bit, and so does
    // WEIGHTED with the same weights; apairs_genotype_missing_weights of the swapped rows
    // gives the same weights up to the rounding of the major allele's frequency (exactly
    // the same at the variants fixed for either allele, which are here too).
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    auto swapped = [](const Cohort &c) {
        Cohort s = c;
        for (uint8_t &g : s.g)
            if (g != kMiss) g = uint8_t(2 - g);
        apairs_context_t ctx = nullptr;
        APAIRS_REQUIRE_OK(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0));
        APAIRS_REQUIRE_OK(apairs_genotype_pack(ctx, s.g.data(), s.n, s.d, s.d, kMiss, s.packed.data(), s.ld));
        apairs_context_destroy(ctx);
        return s;
    };
    Cohort A = make_cohort(rng, 23, 301, 0.1), B = make_cohort(rng, 17, 301, 0.1, 0);
    // Variants 0-9 fixed for A1 (g = 0 where called), 10-19 for A2 (g = 2).
    for (int64_t i = 0; i < A.n; ++i)
        for (int64_t k = 0; k < 20; ++k)
            if (A.g[size_t(i * A.d + k)] != kMiss) A.g[size_t(i * A.d + k)] = k < 10 ? 0 : 2;
    A = swapped(swapped(A));  // (repacked)
    const Cohort As = swapped(A), Bs = swapped(B);
    std::vector<uint32_t> w(size_t(A.d)), ws(size_t(A.d));
    APAIRS_REQUIRE_OK(apairs_genotype_missing_weights(A.packed.data(), A.n, A.d, A.ld, nullptr, w.data()));
    APAIRS_REQUIRE_OK(apairs_genotype_missing_weights(As.packed.data(), As.n, As.d, As.ld, nullptr, ws.data()));
    for (size_t k = 0; k < w.size(); ++k) CHECK(std::fabs(double(w[k]) - double(ws[k])) <= 1e-9 * double(w[k]) + 1);
    for (size_t k = 0; k < 20; ++k) CHECK(w[k] == ws[k]);
    CHECK(w[0] == w[10]);  // fixed either way: the same weight
    apairs_context_t ctx = nullptr;
    APAIRS_REQUIRE_OK(apairs_context_create(&ctx, test::backend(), 0));
    auto run = [&](int32_t metric, int32_t missing, const Cohort &a, const Cohort &b, size_t bytes) {
        apairs_plan_t plan = nullptr;
        APAIRS_REQUIRE_OK(apairs_plan_create_genotype(&plan, ctx, metric, missing, a.n, b.n, a.d, a.ld, b.ld, b.n,
                                                      missing == APAIRS_GENOTYPE_MISSING_WEIGHTED ? w.data()
                                                                                                  : nullptr));
        std::vector<unsigned char> D(size_t(a.n * b.n) * bytes, 0xA5);
        APAIRS_REQUIRE_OK(apairs_plan_execute_genotype(plan, a.packed.data(), b.packed.data(), D.data()));
        apairs_plan_destroy(plan);
        return D;
    };
    for (int32_t m : kCountMetrics) {
        INFO("metric " << m);
        CHECK(run(m, 0, A, B, 4) == run(m, 0, As, Bs, 4));
    }
    for (int32_t m : kPlinkMetrics)
        for (int32_t missing : {APAIRS_GENOTYPE_MISSING_FLAT, APAIRS_GENOTYPE_MISSING_WEIGHTED}) {
            INFO("metric " << m << " missing " << missing);
            CHECK(run(m, missing, A, B, 8) == run(m, missing, As, Bs, 8));
        }
    apairs_context_destroy(ctx);
}

// apairs_genotype_pack takes bytes 0, 1, 2 and missing_value only: any other byte, 3 (the
// first past the genotypes) and 255 included, anywhere in the rows, fails with its
// position before anything is written; missing_value may be anything from 3 to 255, its
// bytes packed as PLINK's missing code (1).
TEST_CASE("genotype: pack refuses every byte but 0, 1, 2 and missing_value; missing_value 3 to 255",
          "[genotype][errors]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    apairs_context_t ctx = nullptr;
    APAIRS_REQUIRE_OK(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0));
    const int64_t n = 1 + int64_t(rng() % 9), d = 1 + int64_t(rng() % 70), ldg = d + int64_t(rng() % 3);
    const int64_t rb = row_bytes(d);
    std::vector<uint8_t> good(size_t(n * ldg), 0);
    for (uint8_t &g : good) g = uint8_t(rng() % 3);
    for (int bad = 3; bad <= 255; ++bad) {
        for (int32_t mv : {3, 128, 255}) {
            if (bad == mv) continue;
            std::vector<uint8_t> g = good, out(size_t(n * rb), 0x5A);
            const int64_t i = int64_t(rng() % uint64_t(n)), k = int64_t(rng() % uint64_t(d));
            g[size_t(i * ldg + k)] = uint8_t(bad);
            INFO("byte " << bad << " at [" << i << "][" << k << "], missing_value " << mv << ", n " << n << " d " << d);
            const apairs_status_t s = apairs_genotype_pack(ctx, g.data(), n, d, ldg, mv, out.data(), rb);
            CHECK(s == APAIRS_ERROR_INVALID_VALUE);
            const std::string msg = apairs_last_error();
            CHECK(msg.find("genotypes[" + std::to_string(i) + "][" + std::to_string(k) + "] = " + std::to_string(bad)) !=
                  std::string::npos);
            for (uint8_t v : out) CHECK(v == 0x5A);
        }
    }
    // missing_value at both ends of its range: its bytes pack as code 1, the rest as PLINK's.
    for (int32_t mv : {3, 255}) {
        std::vector<uint8_t> g = good, out(size_t(n * rb), 0x5A);
        for (uint8_t &x : g)
            if (rng() % 4 == 0) x = uint8_t(mv);
        INFO("missing_value " << mv);
        APAIRS_REQUIRE_OK(apairs_genotype_pack(ctx, g.data(), n, d, ldg, mv, out.data(), rb));
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < d; ++k) {
                const uint8_t x = g[size_t(i * ldg + k)];
                const int want = x == mv ? 1 : x == 0 ? 0 : x == 1 ? 2 : 3;
                CHECK(((out[size_t(i * rb + k / 4)] >> (2 * (k % 4))) & 3) == want);
            }
    }
    apairs_context_destroy(ctx);
}

// B given as the same pointer as A with another stride (ldb != lda, n1 = n2): B's rows are
// other bytes of A's array (a row's tail and padding, the next row's head), not A's rows,
// so D is not symmetric. Every metric against the reference of the rows B's stride picks.
TEST_CASE("genotype: B at A's address with another stride is read with its own stride", "[genotype]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    for (int64_t d : {5, 67, 301}) {
        const int64_t n = 3 + int64_t(rng() % 20);
        const Cohort A = make_cohort(rng, n, d, 0.1, 3 + int64_t(rng() % 3));
        // B: the same bytes read n rows at stride ldb, decoded from the codes; the unused
        // bits of its last byte are ignored, as for any row.
        Cohort B;
        B.n = n, B.d = d, B.ld = row_bytes(d) + int64_t(rng() % 3);
        REQUIRE(B.ld != A.ld);
        B.g.resize(size_t(n * d));
        for (int64_t j = 0; j < n; ++j)
            for (int64_t k = 0; k < d; ++k) {
                const int code = (A.packed[size_t(j * B.ld + k / 4)] >> (2 * (k % 4))) & 3;
                B.g[size_t(j * d + k)] = code == 1 ? kMiss : code == 0 ? 0 : code == 2 ? 1 : 2;
            }
        B.packed = A.packed;  // (not read: `same` passes A's array for B)
        check_all(A, B, true, 2);
        check_all(A, B, true, 1);
    }
}

// The allele metrics take a two-term form for tiles whose rows have no missing call,
// which needs every row of both A and B complete: one side complete and the other with
// missing calls, each way round, through check_all (every metric, every entry exact).
TEST_CASE("genotype: one cohort complete and the other with missing calls, each way round", "[genotype]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed);
    Rng rng(seed);
    for (int64_t d : {3, 70, 517}) {
        const int64_t n1 = 1 + int64_t(rng() % 40), n2 = 1 + int64_t(rng() % 40);
        const double miss = d < 10 ? 0.4 : 0.05;
        const Cohort full = make_cohort(rng, n1, d, 0.0);
        Cohort holes;
        do holes = make_cohort(rng, n2, d, miss, 0);
        while (std::count(holes.g.begin(), holes.g.end(), kMiss) == 0);  // at least one missing call
        check_all(full, holes, false, 2);
        check_all(holes, full, false, 1);
    }
}
