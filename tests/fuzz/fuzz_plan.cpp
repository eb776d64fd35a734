// Fuzz harness for the C API on the host backend: the input is decoded into a sequence
// of API calls with arbitrary arguments, and every call is held to the contract of
// include/apairs.h. A violation calls abort() after printing what was violated.
//
// The contract checked here:
// - a failing call returns a known nonzero status, one the arguments justify (a model
//   of the documented rules below says which), writes no out-argument (sentinels), and
//   sets a non-empty apairs_last_error() beginning with the function's name; a
//   succeeding call leaves apairs_last_error() == ""; string and version functions
//   leave it alone;
// - contexts remember their options (a model of each context checks get_option);
// - apairs_plan_create_pairwise succeeds exactly when the arguments are valid;
// - apairs_plan_execute writes every D[i][j] (i < n1, j < n2) and nothing else: A, B
//   and D are allocated exactly as large as the plan's arguments say (AddressSanitizer
//   catches overruns), D is poisoned with a NaN payload (int32 pattern for HAMMING on
//   U8), and the padding between n2 and ldd must still hold the poison afterwards;
//   NULL pointers fail with APAIRS_ERROR_NULL_POINTER and write nothing;
// - cheap plausibility of the values: HAMMING counts in [0, d] and exact, LINF exact,
//   L1/L2/SQEUCLIDEAN/LP >= 0 (never NaN on finite rows), COSINE in [0, 2], a NaN in a
//   row gives NaN (except HAMMING); with B == A, D is symmetric with a zero diagonal;
//   executing twice gives the same bits;
// - apairs_plan_describe behaves like snprintf and writes nothing past size.
//
// Input format (all little-endian; reading past the end yields zero bytes): a sequence
// of operations, each an opcode byte followed by its arguments, at most kMaxOps of them.
// Integers and doubles use a compact tagged encoding (see Input::i64/i32/f64) so that
// small values, special values and raw bit patterns are all one mutation away.
// tests/fuzz/make_corpus.py writes inputs in this format; keep the two in step.
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "apairs.h"
#include "harness.hpp"

const char *const fuzz::kHarness = "fuzz_plan";

namespace {

// ---------------------------------------------------------------------------------
// Limits that keep one input well under a millisecond on average.
constexpr int kMaxOps = 48;
constexpr int kMaxExecutes = 6;
constexpr int64_t kMaxElements = int64_t(1) << 16;  // per array A, B, D
constexpr int64_t kMaxWork = int64_t(1) << 16;      // n1 * n2 * d per execution
constexpr int64_t kMaxWorkLp = int64_t(1) << 13;    // LP calls pow per element
constexpr int64_t kMaxExactCheck = int64_t(1) << 14;
constexpr int kMaxThreadsToRun = 4;  // plans asking for more threads are not executed
constexpr int kSlots = 4;

using fuzz::fmt_detail;
using fuzz::violation;

// ---------------------------------------------------------------------------------
// Input decoding.
struct Input : fuzz::Reader {
    // Tag byte t: t < 0xE0 gives t - 16 (-16 .. 207); 0xE0 <= t < 0xFF picks an entry of
    // kSpecial64; 0xFF is followed by 8 raw bytes.
    int64_t i64() {
        static const int64_t kSpecial64[31] = {
            INT64_MIN, INT64_MAX, -1, 0, INT32_MAX, int64_t(INT32_MAX) + 1,
            int64_t(1) << 24, (int64_t(1) << 24) + 1, int64_t(1) << 32, int64_t(1) << 61,
            int64_t(1) << 62, (int64_t(1) << 62) - 1, INT64_MAX / 2, INT64_MAX / 4 + 1,
            INT64_MAX / 8 + 1, INT64_MIN + 1, int64_t(1) << 31, 4096, 65536, 65537, 1000000,
            int64_t(3037000500), int64_t(2147483648LL) * 2 - 1, -(int64_t(1) << 32), 255, 256,
            1023, 1024, 1025, 3, 2};
        return Reader::i64(kSpecial64);
    }
    // As i64, but 0xFF is followed by 4 raw bytes, and specials are 32-bit.
    int32_t i32() {
        static const int32_t kSpecial32[31] = {
            INT32_MIN, INT32_MAX, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99, 100, 101,
            199, 200, 255, 256, 1024, 65535, 65536, INT32_MIN + 1, INT32_MAX - 1, -2, -100,
            1 << 30, -(1 << 30)};
        return Reader::i32(kSpecial32);
    }
    // Tag byte t: t < 0xC0 gives (t - 64) / 8 (-8 .. 15.875 in eighths); 0xC0 <= t < 0xFF
    // picks an entry of the special table; 0xFF is followed by 8 raw bytes (the bits).
    double f64() { return Reader::f64(special_double); }
    static double special_double(int k) {
        const double inf = std::numeric_limits<double>::infinity();
        const double fmin = std::numeric_limits<float>::min(), fmax = std::numeric_limits<float>::max();
        const double dmin = std::numeric_limits<double>::min(), dmax = std::numeric_limits<double>::max();
        switch (k) {
        case 0: return std::numeric_limits<double>::quiet_NaN();
        case 1: return -std::numeric_limits<double>::quiet_NaN();
        case 2: return fuzz::bits_to_double(0x7ff000000000dead);  // signalling NaN with payload
        case 3: return inf;
        case 4: return -inf;
        case 5: return -0.0;
        case 6: return dmin;
        case 7: return dmax;
        case 8: return fmin;
        case 9: return fmax;
        case 10: return std::nextafter(fmin, 0.0);
        case 11: return std::nextafter(fmax, inf);
        case 12: return 1 / fmin;
        case 13: return 1 / fmax;
        case 14: return std::nextafter(1 / fmax, 0.0);
        case 15: return std::nextafter(1 / fmin, inf);
        case 16: return std::numeric_limits<double>::denorm_min();
        case 17: return std::numeric_limits<double>::epsilon();
        case 18: return 1 / dmax;
        case 19: return std::nextafter(1 / dmax, 0.0);
        case 20: return 1 / dmin;
        case 21: return 3.2;
        case 22: return 0.1;
        case 23: return 1e-300;
        case 24: return 1e300;
        case 25: return 1e-30;
        case 26: return 1e30;
        case 27: return 1024;
        case 28: return 1025;
        case 29: return 1024.5;
        case 30: return 1 + std::numeric_limits<double>::epsilon();
        case 31: return 1 - std::numeric_limits<double>::epsilon() / 2;
        case 32: return 2 + std::numeric_limits<double>::epsilon() * 2;
        case 33: return std::nextafter(2.0, 0.0);
        case 34: return 0.999999;
        case 35: return 1e-5;
        case 36: return 2147483648.0;
        case 37: return -2147483649.0;
        case 38: return 9.3e18;
        case 39: return 1.5e-45;  // float denormal
        default: return std::ldexp(1.0, k * 31 - 40 * 31);  // 2^-9 .. 2^713 by powers of 2^31
        }
    }
};

// ---------------------------------------------------------------------------------
// Error-state checks.
std::string last_error() {
    const char *e = apairs_last_error();
    REQUIRE(e != nullptr);
    return e;
}

// After a status-returning call: success leaves "" behind; a failure a known code
// and a message that starts with the function's name.
// FUZZ_PLAN_TRACE=1 prints every call's status and message (to read a reproducer).
const bool g_trace = std::getenv("FUZZ_PLAN_TRACE") != nullptr;

void check_status(const char *fn, apairs_status_t s) {
    const std::string e = last_error();
    if (g_trace) std::fprintf(stderr, "  %s -> %d %s\n", fn, int(s), e.c_str());
    if (s == APAIRS_SUCCESS) {
        REQUIRE(e.empty(), "%s succeeded but apairs_last_error() = \"%s\"", fn, e.c_str());
        return;
    }
    REQUIRE(s >= APAIRS_ERROR_NULL_POINTER && s <= APAIRS_ERROR_INTERNAL, "%s returned unknown status %d",
            fn, int(s));
    REQUIRE(s != APAIRS_ERROR_INTERNAL, "%s: internal error: %s", fn, e.c_str());
    REQUIRE(!e.empty(), "%s failed with %d but apairs_last_error() is empty", fn, int(s));
    const std::string prefix = std::string(fn) + ": ";
    REQUIRE(e.compare(0, prefix.size(), prefix) == 0, "%s failed, last error does not name it: \"%s\"", fn,
            e.c_str());
}

// The expected outcome of a call: a set of acceptable failure statuses (bit s), or
// success when the set is empty.
struct Expect {
    uint32_t allowed = 0;
    void add(apairs_status_t s) { allowed |= 1u << s; }
    bool ok() const { return allowed == 0; }
};

void check_expect(const char *fn, apairs_status_t s, const Expect &x) {
    check_status(fn, s);
    if (x.ok())
        REQUIRE(s == APAIRS_SUCCESS, "%s failed with %d (%s) on valid arguments", fn, int(s),
                last_error().c_str());
    else
        REQUIRE(s != APAIRS_SUCCESS && (x.allowed >> s & 1u),
                "%s returned %d; the arguments justify only the set 0x%x", fn, int(s), unsigned(x.allowed));
}

// ---------------------------------------------------------------------------------
// Models of contexts and plans.
struct Ctx {
    apairs_context_t h = nullptr;
    int32_t backend = APAIRS_BACKEND_HOST;
    double occupancy = 0;
    double threads = 0;
    double staging = 0;
    double tf32 = 0;
};

struct Plan {
    apairs_plan_t h = nullptr;
    int32_t metric = 0;  // as normalised (LP with p = 1, 2, inf -> L1, L2, LINF)
    double p = 0;
    int32_t dtype = 0;
    int64_t n1 = 0, n2 = 0, d = 0, lda = 0, ldb = 0, ldd = 0;
    int threads = 0;
};

struct State {
    Ctx ctx[kSlots];
    Plan plan[kSlots];
    int32_t cuda_devices = 0;
    int executes = 0;
};

bool normal_in(double v, double lo, double hi) { return v >= lo && v <= hi; }

const char *metric_name(int32_t m) {
    switch (m) {
    case APAIRS_METRIC_L1: return "l1";
    case APAIRS_METRIC_L2: return "l2";
    case APAIRS_METRIC_SQEUCLIDEAN: return "sqeuclidean";
    case APAIRS_METRIC_LP: return "lp";
    case APAIRS_METRIC_LINF: return "linf";
    case APAIRS_METRIC_DOT: return "dot";
    case APAIRS_METRIC_COSINE: return "cosine";
    case APAIRS_METRIC_HAMMING: return "hamming";
    }
    return nullptr;
}

const char *dtype_name(int32_t t) {
    switch (t) {
    case APAIRS_DTYPE_F32: return "f32";
    case APAIRS_DTYPE_F64: return "f64";
    case APAIRS_DTYPE_U8: return "u8";
    }
    return nullptr;
}

int64_t in_size(int32_t dtype) { return dtype == APAIRS_DTYPE_F64 ? 8 : dtype == APAIRS_DTYPE_F32 ? 4 : 1; }
int64_t out_size(int32_t dtype) { return dtype == APAIRS_DTYPE_U8 ? 4 : in_size(dtype); }

bool fits(int64_t rows, int64_t ld, int64_t elem) {
    int64_t n, b;
    return !__builtin_mul_overflow(rows, ld, &n) && !__builtin_mul_overflow(n, elem, &b);
}

// The documented rules of apairs_plan_create_pairwise (include/apairs.h), written
// independently of capi/apairs.cpp: the statuses that these arguments justify.
Expect expect_plan(bool null_out, bool null_ctx, int32_t metric, double p, int32_t dtype, int64_t n1,
                   int64_t n2, int64_t d, int64_t lda, int64_t ldb, int64_t ldd) {
    Expect x;
    if (null_out || null_ctx) x.add(APAIRS_ERROR_NULL_POINTER);
    const bool known_metric = metric_name(metric) != nullptr, known_dtype = dtype_name(dtype) != nullptr;
    if (!known_metric || !known_dtype) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    if (!known_metric || !known_dtype) return x;  // the rest depends on both
    if (metric == APAIRS_METRIC_LP) {
        // p > 0 with p and 1/p normal numbers of the element type, or +infinity.
        const bool f32 = dtype == APAIRS_DTYPE_F32;
        const double lo = f32 ? double(std::numeric_limits<float>::min()) : std::numeric_limits<double>::min();
        const double hi = f32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max();
        const bool ok = p == std::numeric_limits<double>::infinity() ||
                        (p > 0 && normal_in(p, lo, hi) && normal_in(1 / p, lo, hi));
        if (!ok) x.add(APAIRS_ERROR_INVALID_VALUE);
    }
    if (dtype == APAIRS_DTYPE_U8 && metric != APAIRS_METRIC_HAMMING) x.add(APAIRS_ERROR_UNSUPPORTED);
    bool sizes_ok = true;
    if (n1 < 1 || n2 < 1 || d < 1 || lda < d || ldb < d || ldd < n2) {
        x.add(APAIRS_ERROR_INVALID_VALUE);
        sizes_ok = false;
    }
    if (sizes_ok && (!fits(n1, lda, in_size(dtype)) || !fits(n2, ldb, in_size(dtype)) ||
                     !fits(n1, ldd, out_size(dtype))))
        x.add(APAIRS_ERROR_OVERFLOW);
    if (metric == APAIRS_METRIC_HAMMING && d >= 1) {
        const int64_t max_d = dtype == APAIRS_DTYPE_F32 ? (int64_t(1) << 24) : (int64_t(1) << 31) - 1;
        if (d > max_d) x.add(APAIRS_ERROR_UNSUPPORTED);
    }
    return x;
}

// ---------------------------------------------------------------------------------
// Execution with exactly sized, poisoned buffers.
constexpr uint32_t kPoison32 = 0x7fc0dead;               // f32 NaN with a payload
constexpr uint64_t kPoison64 = 0x7ff800000000deadull;    // f64 NaN with a payload
constexpr uint32_t kPoisonI32 = 0x7f7f7f7f;              // int32 counts

template <class T> bool is_poison(const T &v);
template <> bool is_poison<float>(const float &v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return b == kPoison32;
}
template <> bool is_poison<double>(const double &v) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b == kPoison64;
}
template <> bool is_poison<int32_t>(const int32_t &v) { return uint32_t(v) == kPoisonI32; }

template <class T> T poison();
template <> float poison<float>() {
    float f;
    std::memcpy(&f, &kPoison32, 4);
    return f;
}
template <> double poison<double>() {
    double f;
    std::memcpy(&f, &kPoison64, 8);
    return f;
}
template <> int32_t poison<int32_t>() { return int32_t(kPoisonI32); }

template <class T> bool isnan_(T v) { return v != v; }
template <class T> bool isfinite_(T v) { return std::isfinite(v); }
template <> bool isfinite_<uint8_t>(uint8_t) { return true; }

// Fills the inputs: kind 0 raw bits from the chunk, 1 small integers, 2 sixteenths,
// 3 a pseudo-random sequence from a seed. NaNs are made canonical.
struct Filler {
    int kind = 3;
    std::vector<uint8_t> chunk;
    uint64_t state = 1;
    size_t pos = 0;

    uint8_t next_byte() {
        if (kind == 3 || chunk.empty()) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            return uint8_t(state >> 56);
        }
        const uint8_t b = chunk[pos % chunk.size()];
        ++pos;
        return b;
    }
    template <class T> T next();
};

template <> uint8_t Filler::next<uint8_t>() {
    const uint8_t b = next_byte();
    if (kind == 1 || kind == 3) return uint8_t(b % 3);  // genotype-like 0/1/2
    return b;
}
template <> float Filler::next<float>() {
    float f;
    if (kind == 0) {
        uint32_t b = 0;
        for (int k = 0; k < 4; ++k) b |= uint32_t(next_byte()) << (8 * k);
        std::memcpy(&f, &b, 4);
    } else if (kind == 1) {
        f = float(int(next_byte() % 5) - 2);
    } else if (kind == 2) {
        f = float(int(next_byte()) - 128) / 16.0f;
    } else {
        f = float(int(next_byte()) - 128) / 128.0f;
    }
    return f != f ? std::numeric_limits<float>::quiet_NaN() : f;
}
template <> double Filler::next<double>() {
    double f;
    if (kind == 0) {
        uint64_t b = 0;
        for (int k = 0; k < 8; ++k) b |= uint64_t(next_byte()) << (8 * k);
        std::memcpy(&f, &b, 8);
    } else if (kind == 1) {
        f = double(int(next_byte() % 5) - 2);
    } else if (kind == 2) {
        f = double(int(next_byte()) - 128) / 16.0;
    } else {
        f = double(int(next_byte()) - 128) / 128.0 + double(next_byte()) / 32768.0;
    }
    return f != f ? std::numeric_limits<double>::quiet_NaN() : f;
}

// Elements a rows x cols matrix with leading dimension ld occupies: all rows full
// (n * ld) or the last one only up to cols ((n - 1) * ld + cols). -1 when too large.
int64_t extent(int64_t rows, int64_t ld, int64_t cols, bool minimal) {
    int64_t e;
    if (minimal) {
        if (__builtin_mul_overflow(rows - 1, ld, &e) || __builtin_add_overflow(e, cols, &e)) return -1;
    } else if (__builtin_mul_overflow(rows, ld, &e)) {
        return -1;
    }
    return e;
}

bool nonneg_metric(int32_t m) {
    return m == APAIRS_METRIC_L1 || m == APAIRS_METRIC_L2 || m == APAIRS_METRIC_SQEUCLIDEAN ||
           m == APAIRS_METRIC_LP || m == APAIRS_METRIC_LINF;
}

template <class T, class O>
void execute_checked(const Plan &pl, unsigned flags, Filler &fill) {
    const bool null_a = flags & 1, null_b = flags & 2, null_d = flags & 4;
    const bool alias = (flags & 8) && pl.n1 == pl.n2 && pl.lda == pl.ldb;
    const bool minimal = flags & 16, repeat = flags & 32;
    const int64_t ea = extent(pl.n1, pl.lda, pl.d, minimal), eb = extent(pl.n2, pl.ldb, pl.d, minimal);
    const int64_t ed = extent(pl.n1, pl.ldd, pl.n2, minimal);
    const bool small = ea >= 0 && eb >= 0 && ed >= 0 && ea <= kMaxElements && eb <= kMaxElements &&
                       ed <= kMaxElements && pl.n1 <= kMaxElements && pl.n2 <= kMaxElements &&
                       pl.d <= kMaxElements;
    if (!small || pl.threads > kMaxThreadsToRun) {
        // Too large to run: still, any NULL must be refused before anything is touched.
        if (!(null_a || null_b || null_d)) return;
        std::vector<O> dummy_d(16, poison<O>());
        std::vector<T> dummy_in(16);
        const apairs_status_t s = apairs_plan_execute(pl.h, null_a ? nullptr : dummy_in.data(),
                                                      null_b ? nullptr : dummy_in.data(),
                                                      null_d ? nullptr : dummy_d.data());
        check_status("apairs_plan_execute", s);
        REQUIRE(s == APAIRS_ERROR_NULL_POINTER, "execute with a NULL array returned %d", int(s));
        for (const O &v : dummy_d) REQUIRE(is_poison(v), "failed execute wrote into D");
        return;
    }
    const int64_t work = pl.n1 * pl.n2 * pl.d;  // each <= kMaxElements: no overflow
    if (work > (pl.metric == APAIRS_METRIC_LP ? kMaxWorkLp : kMaxWork)) return;
    if (g_trace)
        std::fprintf(stderr, "  execute %s %s n1=%" PRId64 " n2=%" PRId64 " d=%" PRId64 " lda=%" PRId64 " ldb=%" PRId64
                     " ldd=%" PRId64 " flags=0x%x fill=%d\n", metric_name(pl.metric), dtype_name(pl.dtype), pl.n1,
                     pl.n2, pl.d, pl.lda, pl.ldb, pl.ldd, flags, fill.kind);

    std::vector<T> A(static_cast<size_t>(ea)), Bv(alias ? 0 : static_cast<size_t>(eb));
    for (T &v : A) v = fill.next<T>();
    for (T &v : Bv) v = fill.next<T>();
    const T *B = alias ? A.data() : Bv.data();
    std::vector<O> D(size_t(ed), poison<O>());

    const apairs_status_t s = apairs_plan_execute(pl.h, null_a ? nullptr : A.data(), null_b ? nullptr : B,
                                                  null_d ? nullptr : D.data());
    check_status("apairs_plan_execute", s);
    if (null_a || null_b || null_d) {
        REQUIRE(s == APAIRS_ERROR_NULL_POINTER, "execute with a NULL array returned %d", int(s));
        for (const O &v : D) REQUIRE(is_poison(v), "failed execute wrote into D");
        return;
    }
    REQUIRE(s == APAIRS_SUCCESS, "execute of a valid plan failed: %d %s", int(s), last_error().c_str());

    const int64_t n1 = pl.n1, n2 = pl.n2, d = pl.d, ldd = pl.ldd;
    for (int64_t i = 0; i < n1; ++i) {
        const O *row = &D[size_t(i * ldd)];
        for (int64_t j = 0; j < n2; ++j)
            REQUIRE(!is_poison(row[j]), "D[%" PRId64 "][%" PRId64 "] not written (n1=%" PRId64 " n2=%" PRId64
                    " ldd=%" PRId64 ")", i, j, n1, n2, ldd);
        const int64_t end = (minimal && i == n1 - 1) ? n2 : ldd;
        for (int64_t j = n2; j < end; ++j)
            REQUIRE(is_poison(row[j]), "padding D[%" PRId64 "][%" PRId64 "] written (n2=%" PRId64
                    " ldd=%" PRId64 ")", i, j, n2, ldd);
    }

    // Per-row facts: has a NaN, all finite, all zero, has a coordinate whose square is
    // a normal number (so that the row's squared norm cannot underflow to 0).
    struct Facts {
        std::vector<char> nan, fin, zero, big;
    };
    const double big_min = sizeof(T) == 4 ? std::ldexp(1.0, -60) : std::ldexp(1.0, -500);
    auto row_facts = [&](const T *X, int64_t n, int64_t ld, Facts &f) {
        f.nan.assign(size_t(n), 0);
        f.fin.assign(size_t(n), 1);
        f.zero.assign(size_t(n), 1);
        f.big.assign(size_t(n), 0);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < d; ++k) {
                const T v = X[i * ld + k];
                if (isnan_(v)) f.nan[size_t(i)] = 1;
                if (!isfinite_(v)) f.fin[size_t(i)] = 0;
                if (v != T(0)) f.zero[size_t(i)] = 0;
                if (std::fabs(double(v)) >= big_min) f.big[size_t(i)] = 1;
            }
    };
    Facts fa, fb;
    row_facts(A.data(), n1, pl.lda, fa);
    row_facts(B, n2, pl.ldb, fb);
    const std::vector<char> &nan_a = fa.nan, &fin_a = fa.fin;

    // What include/apairs.h promises for NaN, infinite and zero rows:
    // - a NaN in a row: NaN (HAMMING: a count, checked below);
    // - infinities (no NaN): L1, SQEUCLIDEAN, L2, LP, LINF give +inf or NaN; DOT +-inf or
    //   NaN; COSINE 1 against an all-zero row, else NaN;
    // - finite rows: L1, SQEUCLIDEAN, L2, LP, LINF give a number >= 0 (+inf on overflow);
    //   COSINE is 1 when a row is all zeros, else in [0, 2] (NaN only outside its range).
    const int32_t m = pl.metric;
    const bool exact = n1 * n2 * d <= kMaxExactCheck && (m == APAIRS_METRIC_HAMMING || m == APAIRS_METRIC_LINF);
    for (int64_t i = 0; i < n1; ++i)
        for (int64_t j = 0; j < n2; ++j) {
            const O v = D[size_t(i * ldd + j)];
            const size_t ui = size_t(i), uj = size_t(j);
            const bool any_nan = fa.nan[ui] || fb.nan[uj];
            const bool finite = fa.fin[ui] && fb.fin[uj];
            const double x = double(v);
            if (m == APAIRS_METRIC_HAMMING) {
                REQUIRE(!isnan_(v) && x >= 0 && x <= double(d) && x == std::floor(x),
                        "HAMMING D[%" PRId64 "][%" PRId64 "] = %g, d = %" PRId64, i, j, x, d);
            } else if (any_nan) {
                REQUIRE(isnan_(v), "%s D[%" PRId64 "][%" PRId64 "] = %g, but a row has a NaN", metric_name(m), i, j, x);
            } else if (nonneg_metric(m)) {
                if (finite)
                    REQUIRE(!isnan_(v) && x >= 0, "%s D[%" PRId64 "][%" PRId64 "] = %g on finite rows",
                            metric_name(m), i, j, x);
                else
                    REQUIRE(isnan_(v) || x == std::numeric_limits<double>::infinity(),
                            "%s D[%" PRId64 "][%" PRId64 "] = %g, but a row has an infinity", metric_name(m), i, j, x);
            } else if (m == APAIRS_METRIC_DOT) {
                if (!finite)
                    REQUIRE(!std::isfinite(x), "DOT D[%" PRId64 "][%" PRId64 "] = %g, but a row has an infinity", i, j,
                            x);
            } else if (m == APAIRS_METRIC_COSINE) {
                if (fa.zero[ui] || fb.zero[uj])
                    REQUIRE(x == 1, "COSINE D[%" PRId64 "][%" PRId64 "] = %g, but a row is all zeros", i, j, x);
                else if ((!fa.fin[ui] && fb.big[uj]) || (!fb.fin[uj] && fa.big[ui]))
                    REQUIRE(isnan_(v), "COSINE D[%" PRId64 "][%" PRId64 "] = %g, but a row has an infinity", i, j, x);
                else
                    REQUIRE(isnan_(v) || (x >= 0 && x <= 2), "COSINE D[%" PRId64 "][%" PRId64 "] = %g", i, j, x);
            }
            if (exact) {
                const T *a = &A[size_t(i * pl.lda)];
                const T *b = &B[size_t(j * pl.ldb)];
                if (m == APAIRS_METRIC_HAMMING) {
                    int64_t c = 0;
                    for (int64_t k = 0; k < d; ++k) c += a[k] != b[k];
                    REQUIRE(double(v) == double(c), "HAMMING D[%" PRId64 "][%" PRId64 "] = %g, expected %" PRId64,
                            i, j, double(v), c);
                } else if constexpr (std::is_floating_point_v<T>) {
                    T r = 0;
                    bool nan = false;
                    for (int64_t k = 0; k < d; ++k) {
                        const T t = std::fabs(T(a[k] - b[k]));
                        if (t != t) nan = true;
                        else if (t > r) r = t;
                    }
                    REQUIRE(nan ? isnan_(v) : double(v) == double(r), "LINF D[%" PRId64 "][%" PRId64 "] = %g, expected %g",
                            i, j, double(v), nan ? std::nan("") : double(r));
                }
            }
        }

    if (alias) {
        for (int64_t i = 0; i < n1; ++i) {
            const O dii = D[size_t(i * ldd + i)];
            if (m != APAIRS_METRIC_DOT && m != APAIRS_METRIC_COSINE && fin_a[size_t(i)])
                REQUIRE(double(dii) == 0, "%s with B = A: D[%" PRId64 "][%" PRId64 "] = %g, expected 0",
                        metric_name(m), i, i, double(dii));
            if (m == APAIRS_METRIC_HAMMING && !nan_a[size_t(i)])
                REQUIRE(double(dii) == 0, "HAMMING with B = A: D[%" PRId64 "][%" PRId64 "] = %g", i, i, double(dii));
            for (int64_t j = 0; j < i; ++j) {
                const O x = D[size_t(i * ldd + j)], y = D[size_t(j * ldd + i)];
                REQUIRE((isnan_(x) && isnan_(y)) || std::memcmp(&x, &y, sizeof(O)) == 0,
                        "%s with B = A: D[%" PRId64 "][%" PRId64 "] = %.17g but D[%" PRId64 "][%" PRId64 "] = %.17g",
                        metric_name(m), i, j, double(x), j, i, double(y));
            }
        }
    }

    if (repeat) {
        std::vector<O> D2(size_t(ed), poison<O>());
        const apairs_status_t s2 = apairs_plan_execute(pl.h, A.data(), B, D2.data());
        check_status("apairs_plan_execute", s2);
        REQUIRE(s2 == APAIRS_SUCCESS);
        for (size_t k = 0; k < D.size(); ++k)
            REQUIRE((isnan_(D[k]) && isnan_(D2[k]) && !is_poison(D[k]) && !is_poison(D2[k])) ||
                        std::memcmp(&D[k], &D2[k], sizeof(O)) == 0,
                    "a second execute gave different bits at element %zu", k);
    }
}

// ---------------------------------------------------------------------------------
// Operations.
apairs_context_t ctx_sentinel() { return reinterpret_cast<apairs_context_t>(uintptr_t(0x5e57c7c0)); }
apairs_plan_t plan_sentinel() { return reinterpret_cast<apairs_plan_t>(uintptr_t(0x5e57a7a0)); }

void destroy_ctx(Ctx &c) {
    if (!c.h) return;
    const apairs_status_t s = apairs_context_destroy(c.h);
    check_status("apairs_context_destroy", s);
    REQUIRE(s == APAIRS_SUCCESS);
    c = Ctx{};
}

void destroy_plan(Plan &p) {
    const apairs_status_t s = apairs_plan_destroy(p.h);  // NULL is a no-op
    check_status("apairs_plan_destroy", s);
    REQUIRE(s == APAIRS_SUCCESS);
    p = Plan{};
}

void op_ctx_create(State &st, Input &in) {
    Ctx &c = st.ctx[in.u8() % kSlots];
    const uint8_t flags = in.u8();
    const int32_t backend = in.i32(), device = in.i32();
    destroy_ctx(c);
    apairs_context_t h = ctx_sentinel();
    const apairs_status_t s = apairs_context_create((flags & 1) ? nullptr : &h, backend, device);
    Expect x;
    if (flags & 1) x.add(APAIRS_ERROR_NULL_POINTER);
    if (backend < APAIRS_BACKEND_AUTO || backend > APAIRS_BACKEND_CUDA) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    if (device < 0) x.add(APAIRS_ERROR_INVALID_VALUE);
    if (backend == APAIRS_BACKEND_CUDA && device >= st.cuda_devices) x.add(APAIRS_ERROR_BACKEND_UNAVAILABLE);
    if (backend == APAIRS_BACKEND_CUDA && st.cuda_devices > 0 && s != APAIRS_SUCCESS) {
        // A real device may still fail for reasons outside this model.
        x.add(APAIRS_ERROR_BACKEND_UNAVAILABLE);
        x.add(APAIRS_ERROR_DEVICE);
        x.add(APAIRS_ERROR_OUT_OF_MEMORY);
    }
    check_expect("apairs_context_create", s, x);
    if (s != APAIRS_SUCCESS) {
        REQUIRE(h == ctx_sentinel(), "failed apairs_context_create wrote *ctx");
        return;
    }
    REQUIRE(h != nullptr && h != ctx_sentinel(), "apairs_context_create succeeded without a handle");
    int32_t b = -12345;
    const apairs_status_t s2 = apairs_context_get_backend(h, &b);
    check_status("apairs_context_get_backend", s2);
    REQUIRE(s2 == APAIRS_SUCCESS && (b == APAIRS_BACKEND_HOST || b == APAIRS_BACKEND_CUDA), "backend %d", b);
    if (st.cuda_devices == 0 || backend == APAIRS_BACKEND_HOST)
        REQUIRE(b == APAIRS_BACKEND_HOST, "backend %d resolved to %d without a CUDA device", backend, b);
    c.h = h;
    c.backend = b;
    double v = -1;
    for (int32_t opt : {APAIRS_OPTION_OCCUPANCY_TARGET, APAIRS_OPTION_HOST_THREADS, APAIRS_OPTION_STAGING_BYTES,
                        APAIRS_OPTION_TF32}) {
        const apairs_status_t s3 = apairs_context_get_option(h, opt, &v);
        check_status("apairs_context_get_option", s3);
        REQUIRE(s3 == APAIRS_SUCCESS && v == 0, "a new context's option %d is %g", opt, v);
    }
}

// Slot byte: bit 7 set means a NULL handle; otherwise slot % kSlots (an empty slot is
// NULL too).
Ctx *pick_ctx(State &st, uint8_t b) { return (b & 0x80) ? nullptr : &st.ctx[b % kSlots]; }
Plan *pick_plan(State &st, uint8_t b) { return (b & 0x80) ? nullptr : &st.plan[b % kSlots]; }

void op_set_option(State &st, Input &in) {
    Ctx *c = pick_ctx(st, in.u8());
    const int32_t option = in.i32();
    const double value = in.f64();
    apairs_context_t h = c ? c->h : nullptr;
    if (c && c->h && c->backend != APAIRS_BACKEND_HOST) return;
    const apairs_status_t s = apairs_context_set_option(h, option, value);
    Expect x;
    if (!h) {
        x.add(APAIRS_ERROR_NULL_POINTER);
    } else if (option == APAIRS_OPTION_OCCUPANCY_TARGET) {
        if (!(value >= 0 && value <= 1)) x.add(APAIRS_ERROR_INVALID_VALUE);
    } else if (option == APAIRS_OPTION_HOST_THREADS) {
        if (!(value >= 0 && value <= 1024 && value == std::floor(value))) x.add(APAIRS_ERROR_INVALID_VALUE);
    } else if (option == APAIRS_OPTION_STAGING_BYTES) {
        if (!(value >= 0 && value <= 9007199254740992.0 && value == std::floor(value)))
            x.add(APAIRS_ERROR_INVALID_VALUE);
    } else if (option == APAIRS_OPTION_TF32) {
        if (!(value == 0 || value == 1)) x.add(APAIRS_ERROR_INVALID_VALUE);
    } else {
        x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    }
    check_expect("apairs_context_set_option", s, x);
    if (s == APAIRS_SUCCESS) {
        if (option == APAIRS_OPTION_OCCUPANCY_TARGET) c->occupancy = value;
        else if (option == APAIRS_OPTION_HOST_THREADS) c->threads = value;
        else if (option == APAIRS_OPTION_TF32) c->tf32 = value;
        else c->staging = value;
    }
}

void op_get_option(State &st, Input &in) {
    Ctx *c = pick_ctx(st, in.u8());
    const int32_t option = in.i32();
    const uint8_t flags = in.u8();
    apairs_context_t h = c ? c->h : nullptr;
    const double sentinel = fuzz::bits_to_double(0x7ff800000000beefull);
    double v = sentinel;
    const apairs_status_t s = apairs_context_get_option(h, option, (flags & 1) ? nullptr : &v);
    Expect x;
    if (!h || (flags & 1)) x.add(APAIRS_ERROR_NULL_POINTER);
    if (h && option != APAIRS_OPTION_OCCUPANCY_TARGET && option != APAIRS_OPTION_HOST_THREADS &&
        option != APAIRS_OPTION_STAGING_BYTES && option != APAIRS_OPTION_TF32)
        x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    check_expect("apairs_context_get_option", s, x);
    if (s != APAIRS_SUCCESS) {
        REQUIRE(std::memcmp(&v, &sentinel, 8) == 0, "failed apairs_context_get_option wrote *value");
        return;
    }
    const double want = option == APAIRS_OPTION_OCCUPANCY_TARGET ? c->occupancy
                        : option == APAIRS_OPTION_HOST_THREADS   ? c->threads
                        : option == APAIRS_OPTION_TF32           ? c->tf32
                                                                 : c->staging;
    REQUIRE(v == want, "option %d reads %.17g, was set to %.17g", option, v, want);
}

void op_plan_create(State &st, Input &in) {
    Plan &pl = st.plan[in.u8() % kSlots];
    Ctx *c = pick_ctx(st, in.u8());
    const uint8_t flags = in.u8();
    const int32_t metric = in.i32();
    const double p = in.f64();
    const int32_t dtype = in.i32();
    const int64_t n1 = in.i64(), n2 = in.i64(), d = in.i64(), lda = in.i64(), ldb = in.i64(), ldd = in.i64();
    apairs_context_t h = c ? c->h : nullptr;
    if (c && c->h && c->backend != APAIRS_BACKEND_HOST) return;  // the GPU is not fuzzed here
    destroy_plan(pl);

    apairs_plan_t out = plan_sentinel();
    const apairs_status_t s = apairs_plan_create_pairwise((flags & 1) ? nullptr : &out, h, metric, p, dtype, n1,
                                                          n2, d, lda, ldb, ldd);
    const Expect x = expect_plan(flags & 1, h == nullptr, metric, p, dtype, n1, n2, d, lda, ldb, ldd);
    if (s != APAIRS_SUCCESS && x.ok())
        violation("apairs_plan_create_pairwise failed on valid arguments",
                  fmt_detail("metric=%d p=%.17g dtype=%d n1=%" PRId64 " n2=%" PRId64 " d=%" PRId64 " lda=%" PRId64
                             " ldb=%" PRId64 " ldd=%" PRId64 ": %d %s",
                             metric, p, dtype, n1, n2, d, lda, ldb, ldd, int(s), last_error().c_str()));
    if (s == APAIRS_SUCCESS && !x.ok())
        violation("apairs_plan_create_pairwise accepted invalid arguments",
                  fmt_detail("metric=%d p=%.17g dtype=%d n1=%" PRId64 " n2=%" PRId64 " d=%" PRId64 " lda=%" PRId64
                             " ldb=%" PRId64 " ldd=%" PRId64 " (expected one of 0x%x)",
                             metric, p, dtype, n1, n2, d, lda, ldb, ldd, unsigned(x.allowed)));
    check_expect("apairs_plan_create_pairwise", s, x);
    if (s != APAIRS_SUCCESS) {
        REQUIRE(out == plan_sentinel(), "failed apairs_plan_create_pairwise wrote *plan");
        return;
    }
    REQUIRE(out != nullptr && out != plan_sentinel());
    pl.h = out;
    pl.metric = metric;
    pl.p = p;
    if (metric == APAIRS_METRIC_LP) {
        if (p == 1) pl.metric = APAIRS_METRIC_L1;
        else if (p == 2) pl.metric = APAIRS_METRIC_L2;
        else if (std::isinf(p)) pl.metric = APAIRS_METRIC_LINF;
    }
    pl.dtype = dtype;
    pl.n1 = n1; pl.n2 = n2; pl.d = d; pl.lda = lda; pl.ldb = ldb; pl.ldd = ldd;
    pl.threads = int(c->threads);
}

void op_plan_execute(State &st, Input &in) {
    Plan *pl = pick_plan(st, in.u8());
    const unsigned flags = in.u8();
    Filler fill;
    const uint8_t mode = in.u8();
    fill.kind = mode & 3;
    fill.state = 0x9e3779b97f4a7c15ull ^ (mode >> 2);
    if (fill.kind != 3) {
        const size_t want = in.u8();
        const size_t len = std::min(want, in.n);
        fill.chunk.assign(in.p, in.p + len);
        in.p += len;
        in.n -= len;
    }
    if (++st.executes > kMaxExecutes) return;
    if (!pl || !pl->h) {
        // A NULL plan: refused whatever the arrays.
        float buf[4] = {1, 2, 3, 4};
        std::vector<float> D(4, poison<float>());
        const apairs_status_t s = apairs_plan_execute(nullptr, (flags & 1) ? nullptr : buf,
                                                      (flags & 2) ? nullptr : buf, (flags & 4) ? nullptr : D.data());
        check_status("apairs_plan_execute", s);
        REQUIRE(s == APAIRS_ERROR_NULL_POINTER, "execute of a NULL plan returned %d", int(s));
        for (float v : D) REQUIRE(is_poison(v));
        return;
    }
    switch (pl->dtype) {
    case APAIRS_DTYPE_F32: return execute_checked<float, float>(*pl, flags, fill);
    case APAIRS_DTYPE_F64: return execute_checked<double, double>(*pl, flags, fill);
    case APAIRS_DTYPE_U8: return execute_checked<uint8_t, int32_t>(*pl, flags, fill);
    }
    violation("a plan with an unknown dtype was created");
}

void op_plan_describe(State &st, Input &in) {
    Plan *pl = pick_plan(st, in.u8());
    const int64_t size = in.i64();
    const uint8_t flags = in.u8();
    apairs_plan_t h = pl ? pl->h : nullptr;

    // The full length, from a sizing call.
    int64_t full = -1;
    if (h) {
        const apairs_status_t s = apairs_plan_describe(h, nullptr, 0, &full);
        check_status("apairs_plan_describe", s);
        REQUIRE(s == APAIRS_SUCCESS && full > 0 && full < 4096, "describe sizing: %d, length %" PRId64, int(s), full);
    }
    const bool null_buf = flags & 1, null_len = flags & 2;
    // The buffer is exactly size bytes (the tail beyond the text must stay untouched);
    // for sizes beyond 4096, exactly the full text and its NUL, all that may be written.
    size_t alloc = 0;
    if (!null_buf && size > 0) alloc = size_t(size <= 4096 ? size : full > 0 ? full + 1 : 4096);
    if (!null_buf && size == 0) alloc = 1;  // must stay untouched
    std::vector<char> buf(alloc, '\x5a');
    const int64_t len_sentinel = -777;
    int64_t len = len_sentinel;
    const apairs_status_t s = apairs_plan_describe(h, null_buf ? nullptr : buf.data(), size, null_len ? nullptr : &len);
    Expect x;
    if (!h) x.add(APAIRS_ERROR_NULL_POINTER);
    if (size < 0) x.add(APAIRS_ERROR_INVALID_VALUE);
    if (size > 0 && null_buf) x.add(APAIRS_ERROR_NULL_POINTER);
    check_expect("apairs_plan_describe", s, x);
    if (s != APAIRS_SUCCESS) {
        REQUIRE(len == len_sentinel, "failed describe wrote *length");
        for (char ch : buf) REQUIRE(ch == '\x5a', "failed describe wrote into buf");
        return;
    }
    if (!null_len) REQUIRE(len == full, "describe length %" PRId64 " vs %" PRId64, len, full);
    if (size == 0) {
        for (char ch : buf) REQUIRE(ch == '\x5a', "describe with size 0 wrote into buf");
        return;
    }
    const size_t n = size_t(std::min<int64_t>(full, size - 1));
    REQUIRE(buf[n] == '\0', "describe did not terminate at %zu", n);
    for (size_t k = n + 1; k < buf.size(); ++k) REQUIRE(buf[k] == '\x5a', "describe wrote past its text");
    for (size_t k = 0; k < n; ++k)
        REQUIRE(buf[k] >= 0x20 && buf[k] < 0x7f, "describe: non-printable byte %d at %zu", int(buf[k]), k);
    if (n == size_t(full)) {
        const std::string text(buf.data(), n);
        REQUIRE(text.compare(0, 13, "backend=host ") == 0, "describe: %s", text.c_str());
        const std::string kernel = std::string("kernel=pairwise<") + metric_name(pl->metric) +
                                   (pl->metric == APAIRS_METRIC_LP ? "(p=" : ",");
        REQUIRE(text.find(kernel) != std::string::npos, "describe lacks '%s': %s", kernel.c_str(), text.c_str());
        const std::string dt = std::string(",") + dtype_name(pl->dtype) + ",full-matrix>";
        REQUIRE(text.find(dt) != std::string::npos, "describe lacks '%s': %s", dt.c_str(), text.c_str());
        if (pl->threads > 0) {
            const std::string th = "threads=" + std::to_string(pl->threads) + " ";
            REQUIRE(text.find(th) != std::string::npos, "describe lacks '%s': %s", th.c_str(), text.c_str());
        }
    }
}

void op_plan_destroy(State &st, Input &in) {
    Plan *pl = pick_plan(st, in.u8());
    Plan none;  // NULL: a no-op
    destroy_plan(pl ? *pl : none);
}

void op_ctx_destroy(State &st, Input &in) {
    Ctx *c = pick_ctx(st, in.u8());
    if (c) {
        destroy_ctx(*c);
        return;
    }
    const apairs_status_t s = apairs_context_destroy(nullptr);
    check_status("apairs_context_destroy", s);
    REQUIRE(s == APAIRS_SUCCESS, "destroying a NULL context returned %d", int(s));
}

// The functions that return strings or the version must leave the last error alone.
void op_misc(State &st, Input &in) {
    const uint8_t sub = in.u8() % 5;
    if (sub == 0) {
        const int32_t code = in.i32();
        const std::string before = last_error();
        const char *str = apairs_status_string(code);
        REQUIRE(str != nullptr && str[0] != '\0');
        const bool known = code >= APAIRS_SUCCESS && code <= APAIRS_ERROR_INTERNAL;
        REQUIRE(known == (std::strcmp(str, "unknown status") != 0), "status %d: \"%s\"", code, str);
        if (code == APAIRS_SUCCESS) REQUIRE(std::strcmp(str, "success") == 0);
        REQUIRE(last_error() == before, "apairs_status_string changed the last error");
        const char *vs = apairs_version_string();
        REQUIRE(vs != nullptr);
        const std::string v = vs;
        const std::string want = std::to_string(APAIRS_VERSION_MAJOR) + "." + std::to_string(APAIRS_VERSION_MINOR) +
                                 "." + std::to_string(APAIRS_VERSION_PATCH) + " (";
        REQUIRE(apairs_version_number() == APAIRS_VERSION_NUMBER);
        REQUIRE(v.compare(0, want.size(), want) == 0, "version string \"%s\"", v.c_str());
        REQUIRE(last_error() == before, "the version functions changed the last error");
    } else if (sub == 1) {
        Ctx *c = pick_ctx(st, in.u8());
        const uint8_t flags = in.u8();
        apairs_context_t h = c ? c->h : nullptr;
        int32_t b = -4242;
        const apairs_status_t s = apairs_context_get_backend(h, (flags & 1) ? nullptr : &b);
        Expect x;
        if (!h || (flags & 1)) x.add(APAIRS_ERROR_NULL_POINTER);
        check_expect("apairs_context_get_backend", s, x);
        if (s != APAIRS_SUCCESS) REQUIRE(b == -4242, "failed get_backend wrote *backend");
        else REQUIRE(b == c->backend, "get_backend %d vs %d", b, c->backend);
    } else if (sub == 2) {
        Ctx *c = pick_ctx(st, in.u8());
        const uint8_t flags = in.u8();
        apairs_context_t h = c ? c->h : nullptr;
        if (h && c->backend != APAIRS_BACKEND_HOST) return;
        // A host context takes only NULL; the non-NULL value is never dereferenced.
        void *stream = (flags & 1) ? reinterpret_cast<void *>(uintptr_t(0xdeadbee0)) : nullptr;
        const apairs_status_t s = apairs_context_set_stream(h, stream);
        Expect x;
        if (!h) x.add(APAIRS_ERROR_NULL_POINTER);
        else if (stream) x.add(APAIRS_ERROR_UNSUPPORTED);
        check_expect("apairs_context_set_stream", s, x);
    } else if (sub == 3) {
        const uint8_t flags = in.u8();
        int32_t n = -99;
        const apairs_status_t s = apairs_cuda_device_count((flags & 1) ? nullptr : &n);
        Expect x;
        if (flags & 1) x.add(APAIRS_ERROR_NULL_POINTER);
        check_expect("apairs_cuda_device_count", s, x);
        if (s == APAIRS_SUCCESS) REQUIRE(n == st.cuda_devices, "device count %d then %d", st.cuda_devices, n);
        else REQUIRE(n == -99, "failed apairs_cuda_device_count wrote *count");
    } else {
        // The last error is per call: read it twice, it is the same.
        const std::string a = last_error(), b = last_error();
        REQUIRE(a == b);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Input in{data, size};
    State st;
    {
        const apairs_status_t s = apairs_cuda_device_count(&st.cuda_devices);
        check_status("apairs_cuda_device_count", s);
        REQUIRE(s == APAIRS_SUCCESS && st.cuda_devices >= 0);
    }
    for (int op = 0; op < kMaxOps && !in.empty(); ++op) {
        switch (in.u8() % 9) {
        case 0: op_ctx_create(st, in); break;
        case 1: op_ctx_destroy(st, in); break;
        case 2: op_set_option(st, in); break;
        case 3: op_get_option(st, in); break;
        case 4: op_plan_create(st, in); break;
        case 5: op_plan_execute(st, in); break;
        case 6: op_plan_describe(st, in); break;
        case 7: op_plan_destroy(st, in); break;
        case 8: op_misc(st, in); break;
        }
    }
    for (Plan &p : st.plan) destroy_plan(p);
    for (Ctx &c : st.ctx) destroy_ctx(c);
    return 0;
}
