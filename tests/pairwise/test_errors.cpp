// Argument checking and error reporting through the public API: every bad input gets
// its documented status, a message from apairs_last_error() that names the function
// and the offending argument, and changes nothing (out-handles keep a sentinel, D keeps
// its poison). Plus: pinned enum values, status strings, the per-thread last error,
// destroy(NULL), plans outliving contexts, AUTO backend resolution.
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "reference.hpp"

using namespace ref;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const apairs_context_t kCtxSentinel = reinterpret_cast<apairs_context_t>(uintptr_t(0xC0FFEE0));
const apairs_plan_t kPlanSentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));

// A status and the message apairs_last_error() gave right after it.
struct Result {
    apairs_status_t status;
    std::string message;
};

template <class F>
Result call(F &&f) {
    const apairs_status_t s = f();
    return {s, apairs_last_error()};
}

// `word` occurs in `s` as a whole identifier (so "plan" is not found inside
// "apairs_plan_execute", nor "d" inside "dtype").
bool has_word(const std::string &s, const std::string &word) {
    auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t at = s.find(word); at != std::string::npos; at = s.find(word, at + 1)) {
        const bool left = at == 0 || !ident(s[at - 1]);
        const bool right = at + word.size() == s.size() || !ident(s[at + word.size()]);
        if (left && right) return true;
    }
    return false;
}

// The failure is `want`, and the message names the function and each of `words`.
void expect(const Result &r, apairs_status_t want, const char *fn, std::vector<std::string> words) {
    INFO("status " << r.status << " (" << apairs_status_string(r.status) << "), last error \"" << r.message << "\"");
    CHECK(r.status == want);
    CHECK(r.message.find(fn) != std::string::npos);
    for (const std::string &w : words) {
        INFO("expected the message to name `" << w << "`");
        CHECK(has_word(r.message, w));
    }
}

// Plans with a sentinel in the out-handle: on failure it must be untouched; on success
// the plan is destroyed again.
Result try_plan(apairs_context_t ctx, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                int64_t d, int64_t lda, int64_t ldb, int64_t ldd) {
    apairs_plan_t plan = kPlanSentinel;
    const Result r = call([&] {
        return apairs_plan_create_pairwise(&plan, ctx, metric, p, dtype, n1, n2, d, lda, ldb, ldd);
    });
    if (r.status == APAIRS_SUCCESS) {
        CHECK(plan != kPlanSentinel);
        CHECK(plan != nullptr);
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    } else {
        CHECK(plan == kPlanSentinel);
    }
    return r;
}

const char *kCreate = "apairs_plan_create_pairwise";

// A good problem, to vary one argument at a time.
struct Good {
    int32_t metric = APAIRS_METRIC_L2;
    double p = 0;
    int32_t dtype = APAIRS_DTYPE_F64;
    int64_t n1 = 5, n2 = 7, d = 3, lda = 3, ldb = 4, ldd = 7;
};

Result try_plan(apairs_context_t ctx, const Good &g) {
    return try_plan(ctx, g.metric, g.p, g.dtype, g.n1, g.n2, g.d, g.lda, g.ldb, g.ldd);
}

}  // namespace

TEST_CASE("enum values and the version are pinned", "[errors]") {
    CHECK(APAIRS_SUCCESS == 0);
    CHECK(APAIRS_ERROR_NULL_POINTER == 1);
    CHECK(APAIRS_ERROR_INVALID_VALUE == 2);
    CHECK(APAIRS_ERROR_OVERFLOW == 3);
    CHECK(APAIRS_ERROR_UNKNOWN_ENUM == 4);
    CHECK(APAIRS_ERROR_UNSUPPORTED == 5);
    CHECK(APAIRS_ERROR_BACKEND_UNAVAILABLE == 6);
    CHECK(APAIRS_ERROR_OUT_OF_MEMORY == 7);
    CHECK(APAIRS_ERROR_DEVICE == 8);
    CHECK(APAIRS_ERROR_INVALID_POINTER == 9);
    CHECK(APAIRS_ERROR_INTERNAL == 10);

    CHECK(APAIRS_BACKEND_AUTO == 0);
    CHECK(APAIRS_BACKEND_HOST == 1);
    CHECK(APAIRS_BACKEND_CUDA == 2);
    CHECK(APAIRS_OPTION_OCCUPANCY_TARGET == 1);
    CHECK(APAIRS_OPTION_HOST_THREADS == 2);
    CHECK(APAIRS_OPTION_STAGING_BYTES == 3);
    CHECK(APAIRS_OPTION_TF32 == 4);
    CHECK(APAIRS_DTYPE_F32 == 1);
    CHECK(APAIRS_DTYPE_F64 == 2);
    CHECK(APAIRS_DTYPE_U8 == 3);
    CHECK(APAIRS_METRIC_L1 == 1);
    CHECK(APAIRS_METRIC_L2 == 2);
    CHECK(APAIRS_METRIC_SQEUCLIDEAN == 3);
    CHECK(APAIRS_METRIC_LP == 4);
    CHECK(APAIRS_METRIC_LINF == 5);
    CHECK(APAIRS_METRIC_DOT == 6);
    CHECK(APAIRS_METRIC_COSINE == 7);
    CHECK(APAIRS_METRIC_HAMMING == 8);

    CHECK(apairs_version_number() == APAIRS_VERSION_NUMBER);
    CHECK(APAIRS_VERSION_NUMBER ==
          APAIRS_VERSION_MAJOR * 10000 + APAIRS_VERSION_MINOR * 100 + APAIRS_VERSION_PATCH);
    const std::string v = apairs_version_string();
    const std::string mmp = std::to_string(APAIRS_VERSION_MAJOR) + "." + std::to_string(APAIRS_VERSION_MINOR) +
                            "." + std::to_string(APAIRS_VERSION_PATCH);
    INFO(v);
    CHECK(v.compare(0, mmp.size(), mmp) == 0);
    CHECK(std::string(apairs_last_error()).empty());
}

TEST_CASE("apairs_status_string: distinct descriptions, \"unknown status\" otherwise", "[errors]") {
    std::set<std::string> seen;
    for (apairs_status_t s = 0; s <= 10; ++s) {
        const char *str = apairs_status_string(s);
        REQUIRE(str != nullptr);
        INFO("status " << s << ": \"" << str << "\"");
        CHECK(std::string(str) != "");
        CHECK(std::string(str) != "unknown status");
        seen.insert(str);
    }
    CHECK(seen.size() == 11);
    CHECK(std::string(apairs_status_string(APAIRS_SUCCESS)) == "success");
    for (apairs_status_t s : {-1, 11, 99, 100, 150, 199, 1000, INT32_MAX, INT32_MIN}) {
        INFO("status " << s);
        REQUIRE(apairs_status_string(s) != nullptr);
        CHECK(std::string(apairs_status_string(s)) == "unknown status");
    }
}

TEST_CASE("NULL pointers and handles are refused and nothing is written", "[errors]") {
    Context ctx;

    expect(call([] { return apairs_cuda_device_count(nullptr); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_cuda_device_count", {"count"});
    expect(call([] { return apairs_context_create(nullptr, APAIRS_BACKEND_HOST, 0); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_context_create", {"ctx"});

    int32_t backend = -12345;
    expect(call([&] { return apairs_context_get_backend(nullptr, &backend); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_context_get_backend", {"ctx"});
    CHECK(backend == -12345);
    expect(call([&] { return apairs_context_get_backend(ctx.h, nullptr); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_context_get_backend", {"backend"});

    expect(call([] { return apairs_context_set_stream(nullptr, nullptr); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_context_set_stream", {"ctx"});
    expect(call([] { return apairs_context_set_option(nullptr, APAIRS_OPTION_HOST_THREADS, 1); }),
           APAIRS_ERROR_NULL_POINTER, "apairs_context_set_option", {"ctx"});
    double value = -777;
    expect(call([&] { return apairs_context_get_option(nullptr, APAIRS_OPTION_HOST_THREADS, &value); }),
           APAIRS_ERROR_NULL_POINTER, "apairs_context_get_option", {"ctx"});
    CHECK(value == -777);
    expect(call([&] { return apairs_context_get_option(ctx.h, APAIRS_OPTION_HOST_THREADS, nullptr); }),
           APAIRS_ERROR_NULL_POINTER, "apairs_context_get_option", {"value"});

    expect(call([&] {
               return apairs_plan_create_pairwise(nullptr, ctx.h, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, 2, 2, 2, 2, 2, 2);
           }),
           APAIRS_ERROR_NULL_POINTER, kCreate, {"plan"});
    expect(try_plan(nullptr, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, 2, 2, 2, 2, 2, 2), APAIRS_ERROR_NULL_POINTER,
           kCreate, {"ctx"});

    expect(call([] { return apairs_plan_describe(nullptr, nullptr, 0, nullptr); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_plan_describe", {"plan"});
}

TEST_CASE("a failed execute names the argument and leaves D poisoned", "[errors]") {
    Context ctx;
    const int64_t n1 = 4, n2 = 3, d = 5, ldd = 6;
    Plan plan(ctx.h, {APAIRS_METRIC_L1, 0, "l1"}, APAIRS_DTYPE_F32, n1, n2, d, d, d, ldd);
    std::vector<float> A(size_t(n1 * d), 0.5f), B(size_t(n2 * d), -0.5f);
    std::vector<float> D(size_t(n1 * ldd), poison<float>());
    auto all_poisoned = [&] {
        for (float v : D)
            if (!is_poison(v)) return false;
        return true;
    };
    const char *fn = "apairs_plan_execute";
    expect(call([&] { return apairs_plan_execute(nullptr, A.data(), B.data(), D.data()); }),
           APAIRS_ERROR_NULL_POINTER, fn, {"plan"});
    CHECK(all_poisoned());
    expect(call([&] { return apairs_plan_execute(plan.h, nullptr, B.data(), D.data()); }),
           APAIRS_ERROR_NULL_POINTER, fn, {"A"});
    CHECK(all_poisoned());
    expect(call([&] { return apairs_plan_execute(plan.h, A.data(), nullptr, D.data()); }),
           APAIRS_ERROR_NULL_POINTER, fn, {"B"});
    CHECK(all_poisoned());
    expect(call([&] { return apairs_plan_execute(plan.h, A.data(), B.data(), nullptr); }),
           APAIRS_ERROR_NULL_POINTER, fn, {"D"});
    CHECK(all_poisoned());

    // And the same plan then works: every entry is |0.5 - -0.5| * 5 = 5.
    APAIRS_REQUIRE_OK(apairs_plan_execute(plan.h, A.data(), B.data(), D.data()));
    for (int64_t i = 0; i < n1; ++i) {
        for (int64_t j = 0; j < n2; ++j) CHECK(D[size_t(i * ldd + j)] == 5.0f);
        for (int64_t j = n2; j < ldd; ++j) CHECK(is_poison(D[size_t(i * ldd + j)]));
    }
}

TEST_CASE("zero and negative sizes, short leading dimensions", "[errors]") {
    Context ctx;
    const int64_t big_neg = std::numeric_limits<int64_t>::min();
    for (int64_t bad : {int64_t(0), int64_t(-1), big_neg}) {
        INFO("bad size " << bad);
        Good g;
        g.n1 = bad;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"n1"});
        g = Good();
        g.n2 = bad;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"n2"});
        g = Good();
        g.d = bad;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"d"});
    }
    Good g;
    g.lda = g.d - 1;
    expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"lda"});
    g.lda = -3;
    expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"lda"});
    g = Good();
    g.ldb = g.d - 1;
    expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"ldb"});
    g = Good();
    g.ldd = g.n2 - 1;
    expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"ldd"});
    g.ldd = 0;
    expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"ldd"});
    // The good problem itself, and leading dimensions exactly at their minimum, plan.
    CHECK(try_plan(ctx.h, Good()).status == APAIRS_SUCCESS);
    g = Good();
    g.lda = g.ldb = g.d;
    g.ldd = g.n2;
    CHECK(try_plan(ctx.h, g).status == APAIRS_SUCCESS);
}

TEST_CASE("size products that overflow 64 bits", "[errors]") {
    Context ctx;
    const int64_t two30 = int64_t(1) << 30, two31 = int64_t(1) << 31, two40 = int64_t(1) << 40;
    // n1 * lda overflows.
    expect(try_plan(ctx.h, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, two40, 1, 1, two30, 1, 1), APAIRS_ERROR_OVERFLOW,
           kCreate, {"n1", "lda"});
    // n2 * ldb overflows.
    expect(try_plan(ctx.h, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, 1, two40, 1, 1, two30, two40),
           APAIRS_ERROR_OVERFLOW, kCreate, {"n2", "ldb"});
    // n1 * ldd overflows.
    expect(try_plan(ctx.h, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, two40, 1, 1, 1, 1, two30), APAIRS_ERROR_OVERFLOW,
           kCreate, {"n1", "ldd"});
    // n1 * lda = 2^61 elements fits in 64 bits, 2^64 bytes of F64 does not.
    expect(try_plan(ctx.h, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, two31, 1, 1, two30, 1, 1), APAIRS_ERROR_OVERFLOW,
           kCreate, {"n1", "lda"});
    // n1 * ldd = 2^61 int32 counts of U8 HAMMING: 2^63 bytes, one past INT64_MAX.
    expect(try_plan(ctx.h, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8, two31, 1, 1, 1, 1, two30),
           APAIRS_ERROR_OVERFLOW, kCreate, {"n1", "ldd"});
    // The same 2^61 elements as U8 input are 2^61 bytes: that fits, and plans
    // (planning allocates nothing).
    CHECK(try_plan(ctx.h, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8, two31, 1, 1, two30, 1, 1).status ==
          APAIRS_SUCCESS);
}

TEST_CASE("unknown metric, dtype, backend and option values", "[errors]") {
    Context ctx;
    for (int32_t metric : {0, 9, -1, 1000}) {
        INFO("metric " << metric);
        Good g;
        g.metric = metric;
        const Result r = try_plan(ctx.h, g);
        expect(r, APAIRS_ERROR_UNKNOWN_ENUM, kCreate, {"metric", std::to_string(metric)});
    }
    for (int32_t dtype : {0, 4, -1}) {
        INFO("dtype " << dtype);
        Good g;
        g.dtype = dtype;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_UNKNOWN_ENUM, kCreate, {"dtype", std::to_string(dtype)});
    }
    for (int32_t backend : {-1, 3, 100}) {
        INFO("backend " << backend);
        apairs_context_t c = kCtxSentinel;
        expect(call([&] { return apairs_context_create(&c, backend, 0); }), APAIRS_ERROR_UNKNOWN_ENUM,
               "apairs_context_create", {"backend", std::to_string(backend)});
        CHECK(c == kCtxSentinel);
    }
    for (int32_t option : {0, 5, 99, -1}) {
        INFO("option " << option);
        expect(call([&] { return apairs_context_set_option(ctx.h, option, 0.5); }), APAIRS_ERROR_UNKNOWN_ENUM,
               "apairs_context_set_option", {"option", std::to_string(option)});
        double value = -777;
        expect(call([&] { return apairs_context_get_option(ctx.h, option, &value); }), APAIRS_ERROR_UNKNOWN_ENUM,
               "apairs_context_get_option", {"option", std::to_string(option)});
        CHECK(value == -777);
    }
}

TEST_CASE("LP needs p > 0", "[errors]") {
    Context ctx;
    for (double p : {0.0, -0.0, -1.0, kNaN, -kInf}) {
        INFO("p = " << p);
        Good g;
        g.metric = APAIRS_METRIC_LP;
        g.p = p;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"p"});
    }
    for (double p : {1e-3, 0.5, 1.0, 2.0, 7.5, kInf}) {
        INFO("p = " << p);
        Good g;
        g.metric = APAIRS_METRIC_LP;
        g.p = p;
        CHECK(try_plan(ctx.h, g).status == APAIRS_SUCCESS);
    }
}

// apairs.h: p and 1/p must be normal numbers of the element type (or p = +infinity),
// since the kernels raise to p and to 1/p in that type.
TEST_CASE("LP refuses p or 1/p that is not a normal number of the element type", "[errors]") {
    Context ctx;
    struct Case {
        int32_t dtype;
        double p;
        const char *why;
    };
    const Case bad[] = {
        {APAIRS_DTYPE_F32, 1e-300, "p rounds to 0 in F32"},
        {APAIRS_DTYPE_F32, 1e300, "p rounds to inf in F32"},
        {APAIRS_DTYPE_F32, 1e-40, "p subnormal in F32, 1/p overflows"},
        {APAIRS_DTYPE_F32, 1e38, "p normal, 1/p = 1e-38 subnormal in F32"},
        {APAIRS_DTYPE_F32, 1e39, "p overflows F32"},
        {APAIRS_DTYPE_F64, 1e-310, "p subnormal in F64, 1/p overflows"},
        {APAIRS_DTYPE_F64, 1e-320, "p subnormal in F64"},
        {APAIRS_DTYPE_F64, 1e308, "p normal, 1/p = 1e-308 subnormal in F64"},
        {APAIRS_DTYPE_F64, std::numeric_limits<double>::denorm_min(), "smallest subnormal"},
    };
    for (const Case &c : bad) {
        INFO("dtype " << c.dtype << ", p = " << c.p << " (" << c.why << ")");
        Good g;
        g.metric = APAIRS_METRIC_LP;
        g.dtype = c.dtype;
        g.p = c.p;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_INVALID_VALUE, kCreate, {"p"});
    }
    // Just inside: p and 1/p both normal.
    const Case good[] = {
        {APAIRS_DTYPE_F32, 1e-30, ""}, {APAIRS_DTYPE_F32, 1e30, ""},  {APAIRS_DTYPE_F32, 1e-3, ""},
        {APAIRS_DTYPE_F64, 1e-300, ""}, {APAIRS_DTYPE_F64, 1e300, ""}, {APAIRS_DTYPE_F64, 1e-40, ""},
        {APAIRS_DTYPE_F64, 1e38, ""},   {APAIRS_DTYPE_F32, kInf, ""},  {APAIRS_DTYPE_F64, kInf, ""},
    };
    for (const Case &c : good) {
        INFO("dtype " << c.dtype << ", p = " << c.p);
        Good g;
        g.metric = APAIRS_METRIC_LP;
        g.dtype = c.dtype;
        g.p = c.p;
        const Result r = try_plan(ctx.h, g);
        INFO(r.message);
        CHECK(r.status == APAIRS_SUCCESS);
    }
}

TEST_CASE("other metrics ignore p", "[errors]") {
    Context ctx;
    for (int32_t metric : {APAIRS_METRIC_L1, APAIRS_METRIC_L2, APAIRS_METRIC_SQEUCLIDEAN, APAIRS_METRIC_LINF,
                           APAIRS_METRIC_DOT, APAIRS_METRIC_COSINE, APAIRS_METRIC_HAMMING}) {
        for (double p : {kNaN, -1.0, 0.0}) {
            INFO("metric " << metric << ", p = " << p);
            Good g;
            g.metric = metric;
            g.p = p;
            const Result r = try_plan(ctx.h, g);
            INFO(r.message);
            CHECK(r.status == APAIRS_SUCCESS);
        }
    }
}

TEST_CASE("unsupported combinations: U8 besides HAMMING, HAMMING past its exact range", "[errors]") {
    Context ctx;
    for (int32_t metric : {APAIRS_METRIC_L1, APAIRS_METRIC_L2, APAIRS_METRIC_SQEUCLIDEAN, APAIRS_METRIC_LP,
                           APAIRS_METRIC_LINF, APAIRS_METRIC_DOT, APAIRS_METRIC_COSINE}) {
        INFO("metric " << metric);
        Good g;
        g.metric = metric;
        g.p = 3;
        g.dtype = APAIRS_DTYPE_U8;
        expect(try_plan(ctx.h, g), APAIRS_ERROR_UNSUPPORTED, kCreate, {"dtype"});
    }
    const int64_t f32_max = int64_t(1) << 24;
    expect(try_plan(ctx.h, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_F32, 1, 1, f32_max + 1, f32_max + 1, f32_max + 1, 1),
           APAIRS_ERROR_UNSUPPORTED, kCreate, {"d"});
    CHECK(try_plan(ctx.h, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_F32, 1, 1, f32_max, f32_max, f32_max, 1).status ==
          APAIRS_SUCCESS);
    // U8 "needs d < 2^31": 2^31 - 1 is the largest d that plans.
    const int64_t two31 = int64_t(1) << 31;
    expect(try_plan(ctx.h, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8, 1, 1, two31, two31, two31, 1),
           APAIRS_ERROR_UNSUPPORTED, kCreate, {"d"});
    const Result r = try_plan(ctx.h, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8, 1, 1, two31 - 1, two31 - 1, two31 - 1, 1);
    INFO("U8 HAMMING with d = 2^31 - 1: " << r.message);
    CHECK(r.status == APAIRS_SUCCESS);
}

TEST_CASE("context options: ranges, round trip, failures change nothing", "[errors]") {
    Context ctx;
    double v = -777;
    APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, &v));
    CHECK(v == 0);
    APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_HOST_THREADS, &v));
    CHECK(v == 0);
    APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_TF32, &v));
    CHECK(v == 0);

    for (double occ : {0.0, 0.25, 0.5, 1.0, 1e-9}) {
        APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, occ));
        APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, &v));
        CHECK(v == occ);
    }
    for (double threads : {0.0, 1.0, 3.0, 64.0, 1024.0}) {
        APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_HOST_THREADS, threads));
        APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_HOST_THREADS, &v));
        CHECK(v == threads);
    }

    APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, 0.5));
    APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_HOST_THREADS, 2));
    for (double bad : {-0.1, 1.5, kNaN, kInf, -kInf}) {
        INFO("occupancy target " << bad);
        expect(call([&] { return apairs_context_set_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, bad); }),
               APAIRS_ERROR_INVALID_VALUE, "apairs_context_set_option", {"APAIRS_OPTION_OCCUPANCY_TARGET"});
        APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_OCCUPANCY_TARGET, &v));
        CHECK(v == 0.5);
    }
    for (double bad : {-1.0, 1.5, kNaN, kInf, 1e300, 1025.0, 65536.0}) {
        INFO("host threads " << bad);
        expect(call([&] { return apairs_context_set_option(ctx.h, APAIRS_OPTION_HOST_THREADS, bad); }),
               APAIRS_ERROR_INVALID_VALUE, "apairs_context_set_option", {"APAIRS_OPTION_HOST_THREADS"});
        APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_HOST_THREADS, &v));
        CHECK(v == 2);
    }
    for (double tf32 : {1.0, 0.0, 1.0}) {
        APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_TF32, tf32));
        APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_TF32, &v));
        CHECK(v == tf32);
    }
    for (double bad : {-1.0, 0.5, 2.0, kNaN, kInf}) {
        INFO("tf32 " << bad);
        expect(call([&] { return apairs_context_set_option(ctx.h, APAIRS_OPTION_TF32, bad); }),
               APAIRS_ERROR_INVALID_VALUE, "apairs_context_set_option", {"APAIRS_OPTION_TF32"});
        APAIRS_REQUIRE_OK(apairs_context_get_option(ctx.h, APAIRS_OPTION_TF32, &v));
        CHECK(v == 1);
    }
}

TEST_CASE("streams: a host context takes only NULL", "[errors]") {
    Context host(APAIRS_BACKEND_HOST);
    int dummy = 0;
    expect(call([&] { return apairs_context_set_stream(host.h, &dummy); }), APAIRS_ERROR_UNSUPPORTED,
           "apairs_context_set_stream", {"stream"});
    CHECK(apairs_context_set_stream(host.h, nullptr) == APAIRS_SUCCESS);
    Context ctx;  // the backend under test: NULL (the legacy default stream) is always fine
    CHECK(apairs_context_set_stream(ctx.h, nullptr) == APAIRS_SUCCESS);
}

TEST_CASE("context creation: device ordinals, CUDA availability, AUTO", "[errors]") {
    int32_t count = -1;
    APAIRS_REQUIRE_OK(apairs_cuda_device_count(&count));
    REQUIRE(count >= 0);
    INFO("CUDA devices: " << count);

    for (int32_t backend : {APAIRS_BACKEND_AUTO, APAIRS_BACKEND_HOST, APAIRS_BACKEND_CUDA}) {
        INFO("backend " << backend);
        apairs_context_t c = kCtxSentinel;
        expect(call([&] { return apairs_context_create(&c, backend, -1); }), APAIRS_ERROR_INVALID_VALUE,
               "apairs_context_create", {"device", "-1"});
        CHECK(c == kCtxSentinel);
    }

    // CUDA on a device that does not exist (with no device at all: any ordinal).
    apairs_context_t c = kCtxSentinel;
    const Result r = call([&] { return apairs_context_create(&c, APAIRS_BACKEND_CUDA, count); });
    if (count == 0) {
        INFO(r.message);
        CHECK(r.status == APAIRS_ERROR_BACKEND_UNAVAILABLE);
        CHECK((r.message.find("CUDA") != std::string::npos || has_word(r.message, "device")));
    } else {
        expect(r, APAIRS_ERROR_BACKEND_UNAVAILABLE, "apairs_context_create", {"device", std::to_string(count)});
    }
    CHECK(c == kCtxSentinel);

    // HOST ignores the device ordinal (but it must be >= 0).
    Context host(APAIRS_BACKEND_HOST, 7);
    int32_t b = -1;
    APAIRS_REQUIRE_OK(apairs_context_get_backend(host.h, &b));
    CHECK(b == APAIRS_BACKEND_HOST);

    // AUTO: CUDA when a device is present, else HOST; never AUTO itself.
    Context aut(APAIRS_BACKEND_AUTO);
    APAIRS_REQUIRE_OK(apairs_context_get_backend(aut.h, &b));
    CHECK(b == (count > 0 ? APAIRS_BACKEND_CUDA : APAIRS_BACKEND_HOST));
    if (test::backend() == APAIRS_BACKEND_CUDA) CHECK(b == APAIRS_BACKEND_CUDA);

    Context ctx;
    APAIRS_REQUIRE_OK(apairs_context_get_backend(ctx.h, &b));
    CHECK(b == test::backend());
}

TEST_CASE("apairs_plan_describe argument checks", "[errors]") {
    Context ctx;
    Plan plan(ctx.h, {APAIRS_METRIC_DOT, 0, "dot"}, APAIRS_DTYPE_F32, 3, 3, 3, 3, 3, 3);
    char buf[8] = "#######";
    int64_t len = -5;
    expect(call([&] { return apairs_plan_describe(plan.h, buf, -1, &len); }), APAIRS_ERROR_INVALID_VALUE,
           "apairs_plan_describe", {"size", "-1"});
    expect(call([&] { return apairs_plan_describe(plan.h, nullptr, 4, &len); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_plan_describe", {"buf"});
    expect(call([&] { return apairs_plan_describe(nullptr, buf, sizeof buf, &len); }), APAIRS_ERROR_NULL_POINTER,
           "apairs_plan_describe", {"plan"});
    CHECK(len == -5);
    CHECK(std::string(buf) == "#######");
}

TEST_CASE("destroying NULL is a no-op", "[errors]") {
    CHECK(apairs_context_destroy(nullptr) == APAIRS_SUCCESS);
    CHECK(std::string(apairs_last_error()).empty());
    CHECK(apairs_plan_destroy(nullptr) == APAIRS_SUCCESS);
    CHECK(std::string(apairs_last_error()).empty());
}

TEST_CASE("the last error is \"\" after a success and is kept per thread", "[errors]") {
    apairs_context_t c = kCtxSentinel;
    REQUIRE(apairs_context_create(&c, 42, 0) == APAIRS_ERROR_UNKNOWN_ENUM);
    CHECK(std::string(apairs_last_error()) != "");
    // apairs_status_string does not reset it.
    apairs_status_string(APAIRS_ERROR_UNKNOWN_ENUM);
    CHECK(std::string(apairs_last_error()) != "");
    int32_t count = 0;
    REQUIRE(apairs_cuda_device_count(&count) == APAIRS_SUCCESS);
    CHECK(std::string(apairs_last_error()) == "");

    // A failure in another thread is not seen here, and ours is not seen there.
    std::string seen_at_start = "unset", seen_after = "unset";
    apairs_status_t status = APAIRS_SUCCESS;
    REQUIRE(apairs_context_create(&c, -1, 0) == APAIRS_ERROR_UNKNOWN_ENUM);
    const std::string ours = apairs_last_error();
    std::thread t([&] {
        seen_at_start = apairs_last_error();
        apairs_context_t tc = kCtxSentinel;
        status = apairs_context_create(&tc, APAIRS_BACKEND_HOST, -1);
        seen_after = apairs_last_error();
    });
    t.join();
    CHECK(seen_at_start == "");
    CHECK(status == APAIRS_ERROR_INVALID_VALUE);
    CHECK(has_word(seen_after, "device"));
    CHECK(std::string(apairs_last_error()) == ours);
    // A success in another thread resets that thread's last error, not ours.
    REQUIRE(ours != "");
    std::string t2_after = "unset";
    status = APAIRS_ERROR_INTERNAL;
    std::thread t2([&] {
        apairs_context_t tc = kCtxSentinel;
        apairs_context_create(&tc, 42, 0);  // a failure there first, then a success
        status = apairs_plan_destroy(nullptr);
        t2_after = apairs_last_error();
    });
    t2.join();
    CHECK(status == APAIRS_SUCCESS);
    CHECK(t2_after == "");
    CHECK(std::string(apairs_last_error()) == ours);
}

TEST_CASE("a plan outlives its context", "[errors]") {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    const MetricSpec m{APAIRS_METRIC_L2, 0, "l2"};
    const int64_t n1 = 45, n2 = 38, d = 41, ldd = 40;
    apairs_plan_t plan = nullptr;
    {
        Context ctx;
        APAIRS_REQUIRE_OK(apairs_context_set_option(ctx.h, APAIRS_OPTION_HOST_THREADS, 2));
        APAIRS_REQUIRE_OK(apairs_plan_create_pairwise(&plan, ctx.h, m.metric, 0, APAIRS_DTYPE_F64, n1, n2, d, d + 1, d,
                                                      ldd));
    }  // the context is destroyed here
    Matrix<double> A(n1, d, d + 1), B(n2, d, d);
    fill_uniform(A, rng);
    fill_uniform(B, rng);
    execute_and_check(plan, m, A, B, ldd);
    CHECK(apairs_plan_describe(plan, nullptr, 0, nullptr) == APAIRS_SUCCESS);
    CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
}
