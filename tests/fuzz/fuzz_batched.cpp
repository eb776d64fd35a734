// Fuzz harness for the batched C API on the host backend: the input is decoded into a
// few batched plan creations (gemm, potrf, potrs, posv, dot, gemv, getrf, getrs, gesv,
// transpose) with arbitrary arguments, each held to the contract of include/apairs.h and
// executed when it is small enough. A violation calls abort() after printing what was
// violated.
//
// The contract checked here:
// - apairs_plan_create_*_batched succeeds exactly when its arguments are valid; a failure
//   returns a status that one of the bad arguments justifies (the header fixes no order
//   among them), leaves *plan unchanged and sets a non-empty apairs_last_error() naming
//   the function. The model of the rules (expect_create) is written from the header's
//   text, not from src/batched/problem.cpp;
// - execution, on arrays allocated exactly to the span of their operand (AddressSanitizer
//   catches any access outside it):
//   * pure outputs (dot's out, info, ipiv, transpose's out) are poisoned and every entry
//     must be written; gemm's C and gemv's y are poisoned where beta rounds to 0 (they
//     must not be read);
//   * everything the operation does not write keeps its bits: padding between ld and the
//     extent and between elements, the other strict triangle of potrf/posv (a NaN there
//     also proves it is not read), B of the elements whose factorisation failed (posv,
//     gesv), the inputs of const arguments;
//   * values: gemm, gemv and dot within the header's bound (k + 2) u (|alpha| sum |a b| +
//     |beta c|); Cholesky and LU factors reconstruct their input within Higham's
//     componentwise bounds (gamma_{n+1} |L| |L^T|, gamma_n P |L| |U|), and solves leave
//     residuals within gamma_{3n+1} |L| |L^T| |x| (or P |L| |U| |x|); info in [0, n] and
//     exact where the input fixes it (diagonally dominant SPD: 0; such a matrix with a
//     negative diagonal entry at j: j + 1; LU: the first exactly zero pivot of U; a zero
//     column j: at most j + 1); ipiv[i] in [i + 1, n]; transpose moves every value bit
//     for bit;
//   * NULL arrays and a NULL plan handle fail with APAIRS_ERROR_NULL_POINTER and write
//     nothing; another operation's execute function (or apairs_plan_execute) fails with
//     APAIRS_ERROR_UNSUPPORTED and writes nothing; describe works on every plan.
//   Plans run when all their arrays together take at most kMaxBytes and the work is at
//   most kMaxWork; larger ones still get the NULL and wrong-function calls.
// alpha and beta are rounded to the dtype and must be finite there: an f32 one just
// above FLT_MAX (it rounds to FLT_MAX) succeeds (check_scalar).
//
// Input format (all little-endian; reading past the end yields zero bytes): one byte of
// context set-up (HOST_THREADS = byte % 4), then up to kMaxRecords records. A record is
//   op (byte % 10: gemm potrf potrs posv dot gemv getrf getrs gesv transpose)
//   create flags (bit 0: NULL plan out-pointer, bit 1: NULL context)
//   the enumerations, sizes and scalars of the op, batch, then (ld, stride) per operand
//   execute flags (bits 0-3: NULL array k, bit 4: call another op's execute function,
//   followed by a byte choosing it; bit 7: do not execute), fill byte
// in the order of Record::decode. Integers and doubles use fuzz_plan's tagged encoding
// (Input::i64/i32/f64); leading dimensions and strides are encoded relative to their
// minimum and to the largest value whose span fits (Input::rel), so that the edges are
// one mutation away. tests/fuzz/make_corpus.py writes inputs in this format; keep the two
// in step.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "apairs.h"
#include "harness.hpp"

const char *const fuzz::kHarness = "fuzz_batched";

namespace {

// ---------------------------------------------------------------------------------
// Limits that keep one input at a few milliseconds.
constexpr int kMaxRecords = 6;
constexpr int kMaxExecutes = 3;
constexpr int64_t kMaxBytes = int64_t(1) << 20;  // all arrays of one execution together
constexpr int64_t kMaxWork = int64_t(1) << 18;   // multiply-adds of the op and of its check

using fuzz::fmt_detail;
using fuzz::violation;

int64_t sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (!__builtin_add_overflow(a, b, &r)) return r;
    return b > 0 ? INT64_MAX : INT64_MIN;
}

// ---------------------------------------------------------------------------------
// Input decoding.
struct Input : fuzz::Reader {
    // Tag byte t: t < 0xE0 gives t - 16 (-16 .. 207, so 128 and 129 too); 0xE0 <= t < 0xFF
    // picks an entry of kSpecial64 (the other size limits and the 64-bit edges); 0xFF is
    // followed by 8 raw bytes.
    int64_t i64() {
        static const int64_t kSpecial64[31] = {
            INT64_MIN, INT64_MAX, -1, 0, 1024, 1025, 4096, 4097, INT32_MAX, int64_t(INT32_MAX) + 1,
            int64_t(1) << 32, int64_t(1) << 61, int64_t(1) << 62, INT64_MAX / 2, INT64_MAX / 4 + 1,
            INT64_MAX / 8 + 1, INT64_MIN + 1, int64_t(3037000500), int64_t(1) << 31, 65536, 1023, 4095,
            int64_t(1) << 40, -(int64_t(1) << 32), 255, 256, 257, 2048, 16384, 100000, INT64_MAX - 1};
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
    // A leading dimension or stride whose minimum is `min` and whose span just fits at
    // `fit`: tag t < 0x40 gives min + t - 8 (just below, at and above the minimum);
    // t < 0x60 the minimum rounded up to a multiple of 32, plus 32 (t - 0x40); t < 0x80
    // fit + t - 0x70 (around the overflow edge); otherwise an i64 follows (any value).
    int64_t rel(int64_t min, int64_t fit) {
        const uint8_t t = u8();
        if (t < 0x40) return sat_add(min, int64_t(t) - 8);
        if (t < 0x60) {
            const int64_t up = sat_add(min, 31);
            return sat_add(up - (up % 32 + 32) % 32, 32 * int64_t(t - 0x40));
        }
        if (t < 0x80) return sat_add(fit, int64_t(t) - 0x70);
        return i64();
    }
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
        case 12: return -fmax;
        case 13: return -dmax;
        case 14: return std::ldexp(1.0, 128);                  // f32's overflow threshold, rounded
        case 15: return fmax + std::ldexp(1.0, 103);           // the tie that rounds to f32 infinity
        case 16: return std::numeric_limits<double>::denorm_min();
        case 17: return std::numeric_limits<double>::epsilon();
        case 18: return 1e-50;                                 // 0 once rounded to f32
        case 19: return -1e-50;
        case 20: return 1e-40;                                 // an f32 subnormal
        case 21: return 3.2;
        case 22: return 0.1;
        case 23: return 1e-300;
        case 24: return 1e300;
        case 25: return 1e-30;
        case 26: return 1e30;
        case 27: return 1024;
        case 28: return 1025;
        case 29: return std::nextafter(fmax + std::ldexp(1.0, 103), 0.0);  // largest that rounds to fmax
        case 30: return std::nextafter(dmax, 0.0);
        case 31: return 0.5;
        case 32: return -1.0;
        case 33: return 1.0;
        case 34: return 0.999999;
        case 35: return 1e-5;
        case 36: return 2147483648.0;
        case 37: return -2147483649.0;
        case 38: return 9.3e18;
        case 39: return 1.5e-45;  // f32 denormal
        default: return std::ldexp(1.0, k * 31 - 40 * 31);  // 2^-9 .. 2^713 by powers of 2^31
        }
    }
};

// ---------------------------------------------------------------------------------
// Status checks (as fuzz_plan's).
const bool g_trace = std::getenv("FUZZ_BATCHED_TRACE") != nullptr;

std::string last_error() {
    const char *e = apairs_last_error();
    REQUIRE(e != nullptr);
    return e;
}

void check_status(const char *fn, apairs_status_t s) {
    const std::string e = last_error();
    if (g_trace) std::fprintf(stderr, "  %s -> %d %s\n", fn, int(s), e.c_str());
    if (s == APAIRS_SUCCESS) {
        REQUIRE(e.empty(), "%s succeeded but apairs_last_error() = \"%s\"", fn, e.c_str());
        return;
    }
    REQUIRE(s >= APAIRS_ERROR_NULL_POINTER && s <= APAIRS_ERROR_INTERNAL, "%s returned unknown status %d", fn,
            int(s));
    REQUIRE(s != APAIRS_ERROR_INTERNAL, "%s: internal error: %s", fn, e.c_str());
    REQUIRE(!e.empty(), "%s failed with %d but apairs_last_error() is empty", fn, int(s));
    const std::string prefix = std::string(fn) + ": ";
    REQUIRE(e.compare(0, prefix.size(), prefix) == 0, "%s failed, last error does not name it: \"%s\"", fn,
            e.c_str());
}

// The expected outcome of a create: the failure statuses its arguments justify (bit s),
// success when there are none.
struct Expect {
    uint32_t allowed = 0;
    void add(apairs_status_t s) { allowed |= 1u << s; }
    bool ok() const { return allowed == 0; }
};

// ---------------------------------------------------------------------------------
// The operations and their arguments.
enum Op { GEMM, POTRF, POTRS, POSV, DOT, GEMV, GETRF, GETRS, GESV, TRANSPOSE, kOps, PAIRWISE = kOps };

const char *const kOpName[kOps + 1] = {"gemm", "potrf", "potrs", "posv",    "dot",      "gemv",
                                        "getrf", "getrs", "gesv", "transpose", "pairwise"};
const char *const kCreateFn[kOps] = {
    "apairs_plan_create_gemm_batched",  "apairs_plan_create_potrf_batched", "apairs_plan_create_potrs_batched",
    "apairs_plan_create_posv_batched",  "apairs_plan_create_dot_batched",   "apairs_plan_create_gemv_batched",
    "apairs_plan_create_getrf_batched", "apairs_plan_create_getrs_batched", "apairs_plan_create_gesv_batched",
    "apairs_plan_create_transpose_batched"};
const char *const kExecuteFn[kOps + 1] = {
    "apairs_plan_execute_gemm",  "apairs_plan_execute_potrf", "apairs_plan_execute_potrs",
    "apairs_plan_execute_posv",  "apairs_plan_execute_dot",   "apairs_plan_execute_gemv",
    "apairs_plan_execute_getrf", "apairs_plan_execute_getrs", "apairs_plan_execute_gesv",
    "apairs_plan_execute_transpose", "apairs_plan_execute"};
// Arrays of each execute function, in the order of its C arguments.
const int kArrays[kOps + 1] = {3, 2, 2, 3, 3, 3, 3, 3, 4, 2, 3};

bool has_order(int op) { return op != DOT && op != TRANSPOSE; }
bool has_uplo(int op) { return op == POTRF || op == POTRS || op == POSV; }
bool has_nrhs(int op) { return op == POTRS || op == POSV || op == GETRS || op == GESV; }
bool has_scalars(int op) { return op == GEMM || op == GEMV; }

// One operand as apairs.h describes it: rows x cols as stored, ld, stride, layout, order.
struct Mat {
    bool soa = false, row = false;
    int64_t rows = 0, cols = 0, ld = 0, stride = 0;

    int64_t at(int64_t i, int64_t j, int64_t e) const {
        const int64_t idx = row ? i * ld + j : i + j * ld;
        return soa ? idx * stride + e : e * stride + idx;
    }
};

// The element extent (last index + 1) of a rows x cols matrix, -1 when it does not fit.
int64_t extent_of(bool row, int64_t rows, int64_t cols, int64_t ld) {
    const int64_t inner = row ? cols : rows, outer = row ? rows : cols;
    int64_t e;
    if (__builtin_mul_overflow(sat_add(outer, -1), ld, &e) || __builtin_add_overflow(e, inner, &e)) return -1;
    return e;
}

// The span in elements of an operand of `batch` elements, -1 when it (or its byte count
// at `elem` bytes an element) does not fit in int64_t.
int64_t span_of(bool soa, int64_t extent, int64_t stride, int64_t batch, int64_t elem) {
    const int64_t runs = soa ? extent - 1 : batch - 1, last = soa ? batch : extent;
    int64_t s, bytes;
    if (__builtin_mul_overflow(runs, stride, &s) || __builtin_add_overflow(s, last, &s) ||
        __builtin_mul_overflow(s, elem, &bytes))
        return -1;
    return s;
}

struct Record {
    int op = GEMM;
    bool null_plan = false, null_ctx = false;
    int32_t dtype = 0, layout = 0, order = 0, t1 = 0, t2 = 0;  // t1: trans_a, trans or uplo; t2: trans_b
    int64_t m = 0, n = 0, k = 0, nrhs = 0, batch = 0;          // transpose: entries in n
    double alpha = 0, beta = 0;
    int64_t ld[3] = {0, 0, 0}, stride[3] = {0, 0, 0};
    unsigned xflags = 0;
    int wrong = 0;
    uint8_t fill = 0;
};

int64_t elem_size(int op, int32_t dtype) {
    if (dtype == APAIRS_DTYPE_F32) return 4;
    if (dtype == APAIRS_DTYPE_F64) return 8;
    if (dtype == APAIRS_DTYPE_U8 && op == TRANSPOSE) return 1;
    return 8;  // not a dtype of this op: the widest, so that any overflow counts
}

// The operands of a record for given layout, order and transposition(s): their stored
// shapes, whether those shapes are valid sizes, whether they have a leading dimension
// (vectors have ld = their length).
struct Operand {
    bool soa, row;
    int64_t rows, cols;
    bool sized, has_ld;
};

int operands(const Record &r, bool soa, bool row, bool ta, bool tb, Operand out[3]) {
    auto in = [](int64_t v, int64_t max) { return v >= 1 && v <= max; };
    auto mat = [&](int64_t rows, int64_t cols, bool sized) { return Operand{soa, row, rows, cols, sized, true}; };
    auto vec = [&](bool s, int64_t len, bool sized) { return Operand{s, false, len, 1, sized, false}; };
    const bool n128 = in(r.n, 128), nrhs = in(r.nrhs, 1024);
    switch (r.op) {
    case GEMM: {
        const bool m = in(r.m, 128), n = in(r.n, 128), k = in(r.k, 128);
        out[0] = ta ? mat(r.k, r.m, k && m) : mat(r.m, r.k, m && k);
        out[1] = tb ? mat(r.n, r.k, n && k) : mat(r.k, r.n, k && n);
        out[2] = mat(r.m, r.n, m && n);
        return 3;
    }
    case POTRF:
    case GETRF: out[0] = mat(r.n, r.n, n128); return 1;
    case POTRS:
    case POSV:
    case GETRS:
    case GESV:
        out[0] = mat(r.n, r.n, n128);
        out[1] = mat(r.n, r.nrhs, n128 && nrhs);
        return 2;
    case DOT:
        out[0] = out[1] = vec(soa, r.n, in(r.n, 4096));
        return 2;
    case GEMV: {
        const bool m = in(r.m, 4096), n = in(r.n, 4096);
        out[0] = mat(r.m, r.n, m && n);
        out[1] = ta ? vec(soa, r.m, m) : vec(soa, r.n, n);
        out[2] = ta ? vec(soa, r.n, n) : vec(soa, r.m, m);
        return 3;
    }
    default:  // TRANSPOSE: soa is to_layout == SOA, the layout of out
        out[0] = vec(!soa, r.n, r.n >= 1);
        out[1] = vec(soa, r.n, r.n >= 1);
        return 2;
    }
}

// The minimum leading dimension, element extent and stride bounds used to decode an
// operand's ld and stride near their edges.
int64_t ld_min(const Operand &o) { return o.row ? o.cols : o.rows; }

void decode_operands(Input &in, Record &r) {
    // Unknown enumerations decode as AoS, column-major, not transposed.
    const bool soa = r.layout == APAIRS_LAYOUT_SOA;
    Operand ops[3];
    const int count = operands(r, soa, r.order == APAIRS_ORDER_ROW_MAJOR, r.t1 == APAIRS_OP_T,
                               r.t2 == APAIRS_OP_T, ops);
    const int64_t elem = elem_size(r.op, r.dtype);
    for (int k = 0; k < count; ++k) {
        const Operand &o = ops[k];
        int64_t ld = o.rows;
        if (o.has_ld) {
            const int64_t inner = ld_min(o), outer = o.row ? o.rows : o.cols;
            const int64_t fit = outer > 1 && inner >= 0 ? (INT64_MAX / elem - inner) / (outer - 1) : INT64_MAX;
            ld = r.ld[k] = in.rel(inner, fit);
        }
        const int64_t ext = extent_of(o.row, o.rows, o.cols, ld);
        const int64_t xt = ext < 0 ? INT64_MAX : ext;
        const int64_t runs = sat_add(o.soa ? xt : r.batch, -1), last = o.soa ? r.batch : xt;
        const int64_t fit = runs > 0 && last >= 0 && last <= INT64_MAX / elem ? (INT64_MAX / elem - last) / runs
                                                                               : INT64_MAX;
        r.stride[k] = in.rel(o.soa ? r.batch : xt, fit);
    }
}

Record decode(Input &in) {
    Record r;
    r.op = in.u8() % kOps;
    const uint8_t cf = in.u8();
    r.null_plan = cf & 1;
    r.null_ctx = cf & 2;
    r.dtype = in.i32();
    r.layout = in.i32();
    if (has_order(r.op)) r.order = in.i32();
    if (r.op == GEMM || r.op == GEMV || r.op == GETRS || has_uplo(r.op)) r.t1 = in.i32();
    if (r.op == GEMM) r.t2 = in.i32();
    if (r.op == GEMM || r.op == GEMV) r.m = in.i64();
    r.n = in.i64();
    if (r.op == GEMM) r.k = in.i64();
    if (has_nrhs(r.op)) r.nrhs = in.i64();
    if (has_scalars(r.op)) {
        r.alpha = in.f64();
        r.beta = in.f64();
    }
    r.batch = in.i64();
    decode_operands(in, r);
    r.xflags = in.u8();
    if (r.xflags & 16) r.wrong = in.u8() % kOps;
    r.fill = in.u8();
    return r;
}

// ---------------------------------------------------------------------------------
// The model: the statuses that apairs.h's rules give these arguments.
bool known_layout(int32_t v) { return v == APAIRS_LAYOUT_AOS || v == APAIRS_LAYOUT_SOA; }
bool known_order(int32_t v) { return v == APAIRS_ORDER_ROW_MAJOR || v == APAIRS_ORDER_COL_MAJOR; }
bool known_op(int32_t v) { return v == APAIRS_OP_N || v == APAIRS_OP_T; }
bool known_uplo(int32_t v) { return v == APAIRS_UPLO_LOWER || v == APAIRS_UPLO_UPPER; }

// alpha and beta: "rounded to the dtype (and must be finite there)". Doubles below the
// tie between FLT_MAX and 2^128 round to FLT_MAX (finite); from the tie on, to inf.
void check_scalar(Expect &x, int32_t dtype, double v) {
    if (!std::isfinite(v)) {
        x.add(APAIRS_ERROR_INVALID_VALUE);
        return;
    }
    if (dtype == APAIRS_DTYPE_F64) return;
    const double tie = double(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103);
    if (std::fabs(v) >= tie) x.add(APAIRS_ERROR_INVALID_VALUE);
}

Expect expect_create(const Record &r) {
    Expect x;
    if (r.null_plan || r.null_ctx) x.add(APAIRS_ERROR_NULL_POINTER);
    const bool f = r.dtype == APAIRS_DTYPE_F32 || r.dtype == APAIRS_DTYPE_F64;
    if (r.op == TRANSPOSE ? !(f || r.dtype == APAIRS_DTYPE_U8) : !f)
        x.add(r.dtype == APAIRS_DTYPE_U8 ? APAIRS_ERROR_UNSUPPORTED : APAIRS_ERROR_UNKNOWN_ENUM);
    if (!known_layout(r.layout)) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    if (has_order(r.op) && !known_order(r.order)) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    if ((r.op == GEMM || r.op == GEMV || r.op == GETRS) && !known_op(r.t1)) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    if (r.op == GEMM && !known_op(r.t2)) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    if (has_uplo(r.op) && !known_uplo(r.t1)) x.add(APAIRS_ERROR_UNKNOWN_ENUM);
    // Sizes: gemm's m, n, k 1 to 128; the factorisations' n 1 to 128 and nrhs 1 to 1024;
    // dot's and gemv's 1 to 4096; transpose's entries >= 1; batch >= 1.
    auto size = [&](int64_t v, int64_t max) {
        if (v < 1 || v > max) x.add(APAIRS_ERROR_INVALID_VALUE);
    };
    if (r.op == GEMM) size(r.m, 128), size(r.n, 128), size(r.k, 128);
    else if (r.op == DOT) size(r.n, 4096);
    else if (r.op == GEMV) size(r.m, 4096), size(r.n, 4096);
    else if (r.op == TRANSPOSE) size(r.n, INT64_MAX);
    else size(r.n, 128);
    if (has_nrhs(r.op)) size(r.nrhs, 1024);
    size(r.batch, INT64_MAX);
    // The transpose: entries or batch past 2^62 overflow (the other ops' spans of values
    // of 4 bytes or more keep their counts below 2^61).
    if (r.op == TRANSPOSE && (r.n > (int64_t(1) << 62) || r.batch > (int64_t(1) << 62)))
        x.add(APAIRS_ERROR_OVERFLOW);
    if (has_scalars(r.op)) {
        check_scalar(x, r.dtype, r.alpha);
        check_scalar(x, r.dtype, r.beta);
    }
    if (r.batch < 1) return x;  // the operands' bounds are in terms of batch
    // Each operand under every reading of the enumerations that are not known (a bad
    // layout leaves the stride's minimum open, a bad order the ld's, a bad trans the
    // shape): any status one of them gives is justified.
    const int64_t elem = elem_size(r.op, r.dtype);
    for (int l = 0; l < 2; ++l) {
        const bool soa = l == 1;
        if (known_layout(r.layout) && soa != (r.layout == APAIRS_LAYOUT_SOA)) continue;
        for (int o = 0; o < 2; ++o) {
            const bool row = o == 1;
            if (has_order(r.op) && known_order(r.order) && row != (r.order == APAIRS_ORDER_ROW_MAJOR)) continue;
            for (int t = 0; t < 4; ++t) {
                const bool ta = t & 1, tb = t & 2;
                const bool t1_op = r.op == GEMM || r.op == GEMV;
                if (t1_op && known_op(r.t1) && ta != (r.t1 == APAIRS_OP_T)) continue;
                if (!t1_op && ta) continue;
                if (r.op == GEMM && known_op(r.t2) && tb != (r.t2 == APAIRS_OP_T)) continue;
                if (r.op != GEMM && tb) continue;
                Operand ops[3];
                const int count = operands(r, soa, row, ta, tb, ops);
                for (int k = 0; k < count; ++k) {
                    const Operand &op = ops[k];
                    if (!op.sized) continue;
                    // ld at least the columns (row-major) or rows (column-major); vectors
                    // have ld = n.
                    const int64_t ld = op.has_ld ? r.ld[k] : op.rows;
                    if (ld < ld_min(op)) {
                        x.add(APAIRS_ERROR_INVALID_VALUE);
                        continue;
                    }
                    const int64_t ext = extent_of(op.row, op.rows, op.cols, ld);
                    if (ext < 0) {
                        // The extent itself overflows: no AoS stride can reach it.
                        x.add(APAIRS_ERROR_OVERFLOW);
                        if (!op.soa) x.add(APAIRS_ERROR_INVALID_VALUE);
                        continue;
                    }
                    // AoS: stride >= the element's extent; SoA: stride >= batch.
                    if (r.stride[k] < (op.soa ? r.batch : ext)) {
                        x.add(APAIRS_ERROR_INVALID_VALUE);
                        continue;
                    }
                    if (span_of(op.soa, ext, r.stride[k], r.batch, elem) < 0) x.add(APAIRS_ERROR_OVERFLOW);
                }
            }
        }
    }
    return x;
}

// ---------------------------------------------------------------------------------
// Calls.
apairs_plan_t plan_sentinel() { return reinterpret_cast<apairs_plan_t>(uintptr_t(0x5e57a7a0)); }

apairs_status_t create(const Record &r, apairs_context_t ctx, apairs_plan_t *out) {
    apairs_plan_t *p = r.null_plan ? nullptr : out;
    apairs_context_t c = r.null_ctx ? nullptr : ctx;
    switch (r.op) {
    case GEMM:
        return apairs_plan_create_gemm_batched(p, c, r.dtype, r.layout, r.order, r.t1, r.t2, r.m, r.n, r.k, r.alpha,
                                               r.beta, r.ld[0], r.stride[0], r.ld[1], r.stride[1], r.ld[2],
                                               r.stride[2], r.batch);
    case POTRF:
        return apairs_plan_create_potrf_batched(p, c, r.dtype, r.layout, r.order, r.t1, r.n, r.ld[0], r.stride[0],
                                                r.batch);
    case POTRS:
        return apairs_plan_create_potrs_batched(p, c, r.dtype, r.layout, r.order, r.t1, r.n, r.nrhs, r.ld[0],
                                                r.stride[0], r.ld[1], r.stride[1], r.batch);
    case POSV:
        return apairs_plan_create_posv_batched(p, c, r.dtype, r.layout, r.order, r.t1, r.n, r.nrhs, r.ld[0],
                                               r.stride[0], r.ld[1], r.stride[1], r.batch);
    case DOT: return apairs_plan_create_dot_batched(p, c, r.dtype, r.layout, r.n, r.stride[0], r.stride[1], r.batch);
    case GEMV:
        return apairs_plan_create_gemv_batched(p, c, r.dtype, r.layout, r.order, r.t1, r.m, r.n, r.alpha, r.beta,
                                               r.ld[0], r.stride[0], r.stride[1], r.stride[2], r.batch);
    case GETRF:
        return apairs_plan_create_getrf_batched(p, c, r.dtype, r.layout, r.order, r.n, r.ld[0], r.stride[0], r.batch);
    case GETRS:
        return apairs_plan_create_getrs_batched(p, c, r.dtype, r.layout, r.order, r.t1, r.n, r.nrhs, r.ld[0],
                                                r.stride[0], r.ld[1], r.stride[1], r.batch);
    case GESV:
        return apairs_plan_create_gesv_batched(p, c, r.dtype, r.layout, r.order, r.n, r.nrhs, r.ld[0], r.stride[0],
                                               r.ld[1], r.stride[1], r.batch);
    default:
        return apairs_plan_create_transpose_batched(p, c, r.dtype, r.layout, r.n, r.stride[0], r.stride[1], r.batch);
    }
}

// Calls the execute function of `op` with the arrays a[0..kArrays[op]).
apairs_status_t execute(int op, apairs_plan_t h, void *const a[4]) {
    auto i32p = [](void *p) { return static_cast<int32_t *>(p); };
    switch (op) {
    case GEMM: return apairs_plan_execute_gemm(h, a[0], a[1], a[2]);
    case POTRF: return apairs_plan_execute_potrf(h, a[0], i32p(a[1]));
    case POTRS: return apairs_plan_execute_potrs(h, a[0], a[1]);
    case POSV: return apairs_plan_execute_posv(h, a[0], a[1], i32p(a[2]));
    case DOT: return apairs_plan_execute_dot(h, a[0], a[1], a[2]);
    case GEMV: return apairs_plan_execute_gemv(h, a[0], a[1], a[2]);
    case GETRF: return apairs_plan_execute_getrf(h, a[0], i32p(a[1]), i32p(a[2]));
    case GETRS: return apairs_plan_execute_getrs(h, a[0], i32p(a[1]), a[2]);
    case GESV: return apairs_plan_execute_gesv(h, a[0], i32p(a[1]), a[2], i32p(a[3]));
    case TRANSPOSE: return apairs_plan_execute_transpose(h, a[0], a[1]);
    default: return apairs_plan_execute(h, a[0], a[1], a[2]);
    }
}

// ---------------------------------------------------------------------------------
// Arrays: each argument of an execution, exactly its span in elements of its type, with a
// copy of what it held before the call and which entries the operation may write.
constexpr uint32_t kPoison32 = 0x7fc0dead;             // f32 NaN with a payload
constexpr uint64_t kPoison64 = 0x7ff800000000deadull;  // f64 NaN with a payload
constexpr uint32_t kPoisonI32 = 0x7f7f7f7f;            // info and ipiv
constexpr uint8_t kPoisonU8 = 0xa5;

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
template <> uint8_t poison<uint8_t>() { return kPoisonU8; }

template <class T> bool is_poison(T v) {
    const T p = poison<T>();
    return std::memcmp(&v, &p, sizeof(T)) == 0;
}
template <class T> bool same_bits(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

template <class T>
struct Array {
    std::vector<T> v, before;
    std::vector<char> writable;  // entries the operation may write
    const char *name;

    Array(const char *nm, int64_t count) : v(size_t(count), poison<T>()), writable(size_t(count), 0), name(nm) {}
    T &operator[](int64_t k) { return v[size_t(k)]; }
    void snapshot() { before = v; }
    // Everything the operation may not write kept its bits.
    void check_kept(const char *op) const {
        for (size_t k = 0; k < v.size(); ++k)
            REQUIRE(writable[k] || same_bits(v[k], before[k]), "%s wrote %s[%zu], outside what it may write", op,
                    name, k);
    }
    void check_unchanged(const char *op) const {
        for (size_t k = 0; k < v.size(); ++k)
            REQUIRE(same_bits(v[k], before[k]), "%s changed %s[%zu]", op, name, k);
    }
};

// Fills: a pseudo-random sequence from the record's fill byte. Values are multiples of
// 2^-15 in [-1, 1] (bit 0 clear) or small integers -2..2 (bit 0 set): finite, exact in
// both types.
struct Rng {
    uint64_t state;
    bool ints;
    explicit Rng(uint8_t fill) : state(0x9e3779b97f4a7c15ull ^ (uint64_t(fill) * 0x100000001b3ull)), ints(fill & 1) {}
    uint64_t next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return state >> 16;
    }
    double value() {
        const uint64_t b = next();
        if (ints) return double(int(b % 5) - 2);
        return double(int64_t(b % 65537) - 32768) / 32768.0;
    }
    int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }
};

// The header's rounding of alpha and beta to the dtype (those just above FLT_MAX round
// to it).
template <class T> long double rounded(double v) {
    const double m = std::numeric_limits<T>::max();
    return (long double)(T(std::fabs(v) > m ? std::copysign(m, v) : v));
}

template <class T> long double unit() { return std::numeric_limits<T>::epsilon() / 2; }
template <class T> long double gamma(int64_t k) { return k * unit<T>() / (1 - k * unit<T>()); }
// Slack for subnormal results, which the relative bounds do not cover.
template <class T> long double tiny(int64_t k) { return (k + 4) * (long double)std::numeric_limits<T>::denorm_min(); }

// Values compared in long double, in which the harness's own sums are (nearly) exact.
void require_close(const char *op, const char *what, int64_t e, int64_t i, int64_t j, long double got,
                   long double ref, long double bound) {
    const long double d = std::fabs(got - ref);
    REQUIRE(d <= bound, "%s: %s of element %" PRId64 " at (%" PRId64 ", %" PRId64 ") is %.17Lg, expected %.17Lg "
            "within %.3Lg (off by %.3Lg)", op, what, e, i, j, got, ref, bound, d);
}

// ---------------------------------------------------------------------------------
// The executions: fill, call, check. `pl` is a plan the model found valid.
struct Plan {
    apairs_plan_t h = nullptr;
    Record r;
    Mat m[3];
    int64_t span[3] = {0, 0, 0};
};

struct Exec {
    const Plan &pl;
    Rng rng;
    unsigned nulls;  // bit k: array k is passed as NULL
    const char *op;
    Exec(const Plan &p, unsigned null_mask) : pl(p), rng(p.r.fill), nulls(null_mask), op(kOpName[p.r.op]) {}

    // Calls the plan's execute function with the arrays (NULL where asked); a failure
    // must be NULL_POINTER and leave every array as it was.
    bool call(std::initializer_list<void *> arrays) {
        void *a[4] = {};
        int k = 0;
        for (void *p : arrays) {
            a[k] = (nulls >> k & 1) ? nullptr : p;
            ++k;
        }
        const apairs_status_t s = execute(pl.r.op, pl.h, a);
        check_status(kExecuteFn[pl.r.op], s);
        if (nulls) {
            REQUIRE(s == APAIRS_ERROR_NULL_POINTER, "%s with a NULL array returned %d", kExecuteFn[pl.r.op], int(s));
            return false;
        }
        REQUIRE(s == APAIRS_SUCCESS, "%s of a valid plan failed: %d %s", kExecuteFn[pl.r.op], int(s),
                last_error().c_str());
        return true;
    }
};

// Marks the m x n entries of every element of `x` as writable.
template <class T> void mark(Array<T> &a, const Mat &x, int64_t batch) {
    for (int64_t e = 0; e < batch; ++e)
        for (int64_t i = 0; i < x.rows; ++i)
            for (int64_t j = 0; j < x.cols; ++j) a.writable[size_t(x.at(i, j, e))] = 1;
}
// The triangle (lower or upper, diagonal included) of every n x n element.
template <class T> void mark_triangle(Array<T> &a, const Mat &x, int64_t batch, bool lower) {
    for (int64_t e = 0; e < batch; ++e)
        for (int64_t i = 0; i < x.rows; ++i)
            for (int64_t j = 0; j < x.cols; ++j)
                if (lower ? j <= i : j >= i) a.writable[size_t(x.at(i, j, e))] = 1;
}
template <class T> void mark_all(Array<T> &a) { std::fill(a.writable.begin(), a.writable.end(), 1); }

template <class T> void fill_entries(Array<T> &a, const Mat &x, int64_t batch, Rng &rng) {
    for (int64_t e = 0; e < batch; ++e)
        for (int64_t i = 0; i < x.rows; ++i)
            for (int64_t j = 0; j < x.cols; ++j) a[x.at(i, j, e)] = T(rng.value());
}

// Padding (everything that is not an entry) gets values of its own, so that a write
// there shows as a change whatever is written.
template <class T> void fill_padding(Array<T> &a, Rng &rng) {
    for (T &v : a.v) v = T(rng.value() * 1024 + 4096);
}

// --- gemm and gemv: C = alpha op(A) op(B) + beta C, within (k + 2) u (|alpha| sum |a b| +
// |beta c|). gemv is gemm with a vector B and C.
template <class T, class FA, class FB>
void check_linear(const char *op, const Record &r, Array<T> &C, const Mat &mc, bool vector_c, int64_t rows,
                  int64_t cols, int64_t k, FA a_at, FB b_at) {
    const long double alpha = rounded<T>(r.alpha), beta = rounded<T>(r.beta);
    const long double big = (long double)std::numeric_limits<T>::max() / 4;
    for (int64_t e = 0; e < r.batch; ++e)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                const int64_t pos = vector_c ? mc.at(i, 0, e) : mc.at(i, j, e);
                const T got = C[pos];
                REQUIRE(!is_poison(got), "%s: C of element %" PRId64 " at (%" PRId64 ", %" PRId64 ") not written", op,
                        e, i, j);
                long double s = 0, sa = 0;
                for (int64_t l = 0; l < k; ++l) {
                    const long double p = (long double)a_at(e, i, l) * (long double)b_at(e, l, j);
                    s += p;
                    sa += std::fabs(p);
                }
                const long double c0 = beta == 0 ? 0 : (long double)C.before[size_t(pos)];
                const long double mag = std::fabs(alpha) * sa + std::fabs(beta * c0);
                if (mag > big) continue;  // may overflow on the way
                require_close(op, "C", e, i, j, got, alpha * s + beta * c0, (k + 2) * unit<T>() * mag + tiny<T>(k));
            }
}

template <class T> void run_gemm(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    Array<T> A("A", pl.span[0]), B("B", pl.span[1]), C("C", pl.span[2]);
    fill_padding(A, x.rng), fill_padding(B, x.rng), fill_padding(C, x.rng);
    fill_entries(A, pl.m[0], r.batch, x.rng);
    fill_entries(B, pl.m[1], r.batch, x.rng);
    // A beta that rounds to 0 never reads C: its entries are poison then.
    if (rounded<T>(r.beta) != 0) fill_entries(C, pl.m[2], r.batch, x.rng);
    else
        for (int64_t e = 0; e < r.batch; ++e)
            for (int64_t i = 0; i < r.m; ++i)
                for (int64_t j = 0; j < r.n; ++j) C[pl.m[2].at(i, j, e)] = poison<T>();
    mark(C, pl.m[2], r.batch);
    A.snapshot(), B.snapshot(), C.snapshot();
    const bool ok = x.call({A.v.data(), B.v.data(), C.v.data()});
    A.check_unchanged(x.op), B.check_unchanged(x.op);
    if (!ok) return C.check_unchanged(x.op);
    C.check_kept(x.op);
    const bool ta = r.t1 == APAIRS_OP_T, tb = r.t2 == APAIRS_OP_T;
    check_linear<T>(x.op, r, C, pl.m[2], false, r.m, r.n, r.k,
                    [&](int64_t e, int64_t i, int64_t l) { return A[ta ? pl.m[0].at(l, i, e) : pl.m[0].at(i, l, e)]; },
                    [&](int64_t e, int64_t l, int64_t j) { return B[tb ? pl.m[1].at(j, l, e) : pl.m[1].at(l, j, e)]; });
}

template <class T> void run_gemv(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    const bool t = r.t1 == APAIRS_OP_T;
    Array<T> A("A", pl.span[0]), X("x", pl.span[1]), Y("y", pl.span[2]);
    fill_padding(A, x.rng), fill_padding(X, x.rng), fill_padding(Y, x.rng);
    fill_entries(A, pl.m[0], r.batch, x.rng);
    fill_entries(X, pl.m[1], r.batch, x.rng);
    if (rounded<T>(r.beta) != 0) fill_entries(Y, pl.m[2], r.batch, x.rng);
    else
        for (int64_t e = 0; e < r.batch; ++e)
            for (int64_t i = 0; i < pl.m[2].rows; ++i) Y[pl.m[2].at(i, 0, e)] = poison<T>();
    mark(Y, pl.m[2], r.batch);
    A.snapshot(), X.snapshot(), Y.snapshot();
    const bool ok = x.call({A.v.data(), X.v.data(), Y.v.data()});
    A.check_unchanged(x.op), X.check_unchanged(x.op);
    if (!ok) return Y.check_unchanged(x.op);
    Y.check_kept(x.op);
    check_linear<T>(x.op, r, Y, pl.m[2], true, pl.m[2].rows, 1, pl.m[1].rows,
                    [&](int64_t e, int64_t i, int64_t l) { return A[t ? pl.m[0].at(l, i, e) : pl.m[0].at(i, l, e)]; },
                    [&](int64_t e, int64_t l, int64_t) { return X[pl.m[1].at(l, 0, e)]; });
}

template <class T> void run_dot(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    Array<T> X("x", pl.span[0]), Y("y", pl.span[1]), O("out", r.batch);
    fill_padding(X, x.rng), fill_padding(Y, x.rng);
    fill_entries(X, pl.m[0], r.batch, x.rng);
    fill_entries(Y, pl.m[1], r.batch, x.rng);
    mark_all(O);
    X.snapshot(), Y.snapshot(), O.snapshot();
    const bool ok = x.call({X.v.data(), Y.v.data(), O.v.data()});
    X.check_unchanged(x.op), Y.check_unchanged(x.op);
    if (!ok) return O.check_unchanged(x.op);
    for (int64_t e = 0; e < r.batch; ++e) {
        REQUIRE(!is_poison(O[e]), "dot: out[%" PRId64 "] not written", e);
        long double s = 0, sa = 0;
        for (int64_t i = 0; i < r.n; ++i) {
            const long double p = (long double)X[pl.m[0].at(i, 0, e)] * (long double)Y[pl.m[1].at(i, 0, e)];
            s += p;
            sa += std::fabs(p);
        }
        require_close(x.op, "out", e, 0, 0, O[e], s, (r.n + 2) * unit<T>() * sa + tiny<T>(r.n));
    }
}

template <class T> void run_transpose(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    Array<T> In("in", pl.span[0]), Out("out", pl.span[1]);
    // Raw bits, NaN payloads included: the values are moved, not computed.
    for (T &v : In.v) {
        const uint64_t b = x.rng.next() ^ (x.rng.next() << 32);
        std::memcpy(&v, &b, sizeof(T));
    }
    mark(Out, pl.m[1], r.batch);
    In.snapshot(), Out.snapshot();
    const bool ok = x.call({In.v.data(), Out.v.data()});
    In.check_unchanged(x.op);
    if (!ok) return Out.check_unchanged(x.op);
    Out.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e)
        for (int64_t i = 0; i < r.n; ++i)
            REQUIRE(same_bits(Out[pl.m[1].at(i, 0, e)], In[pl.m[0].at(i, 0, e)]),
                    "transpose: entry %" PRId64 " of element %" PRId64 " not moved bit for bit", i, e);
}

// --- Cholesky. Element kinds: 0 diagonally dominant SPD (info 0), 1 the same with a
// negative diagonal entry at j (info j + 1), 2 random (any info).
struct SpdKind {
    int kind;
    int64_t j;
};

// Fills the uplo triangle of each n x n element of A; the other strict triangle holds
// poison, which must be neither read nor written.
template <class T>
std::vector<SpdKind> fill_spd(Array<T> &A, const Mat &a, int64_t batch, int64_t n, bool lower, Rng &rng) {
    std::vector<SpdKind> kinds(static_cast<size_t>(batch));
    for (int64_t e = 0; e < batch; ++e) {
        SpdKind &k = kinds[size_t(e)];
        k.kind = int(rng.below(3));
        k.j = rng.below(n);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                T &v = A[a.at(i, j, e)];
                if (lower ? j > i : j < i) v = poison<T>();
                else if (i != j || k.kind == 2) v = T(rng.value());
                // |rng.value()| <= 2 (integer fills take -2 .. 2): a diagonal of 2 n + 1 or more
                // passes every row's sum of off-diagonal magnitudes, at most 2 (n - 1).
                else v = T((k.kind == 1 && i == k.j ? -1 : 1) * (2 * double(n) + 1 + std::fabs(rng.value())));
            }
    }
    return kinds;
}

// Entry (i, j), i >= j, of L L^T (lower) or, i <= j, of U^T U (upper) from the factor in
// A, over the first `cols` columns of L; with the sum of magnitudes.
template <class T>
void llt(Array<T> &A, const Mat &a, int64_t e, bool lower, int64_t i, int64_t j, long double &s, long double &sa) {
    s = sa = 0;
    const int64_t kmax = std::min(i, j);
    for (int64_t k = 0; k <= kmax; ++k) {
        const long double p = lower ? (long double)A[a.at(i, k, e)] * A[a.at(j, k, e)]
                                    : (long double)A[a.at(k, i, e)] * A[a.at(k, j, e)];
        s += p;
        sa += std::fabs(p);
    }
}

// info in [0, n], exact for kinds 0 and 1; where 0, the factor reconstructs A within
// gamma_{n+1} |L| |L^T| with a positive diagonal; where j > 0, the leading minor of order
// j - 1 is factored already.
template <class T>
void check_potrf(const char *op, Array<T> &A, const Mat &a, const int32_t *info, int64_t batch, int64_t n,
                 bool lower, const std::vector<SpdKind> &kinds) {
    for (int64_t e = 0; e < batch; ++e) {
        const int32_t f = info[e];
        REQUIRE(f >= 0 && f <= n, "%s: info[%" PRId64 "] = %d, n = %" PRId64, op, e, f, n);
        const SpdKind &k = kinds[size_t(e)];
        if (k.kind == 0) REQUIRE(f == 0, "%s: diagonally dominant SPD element %" PRId64 " gave info %d", op, e, f);
        if (k.kind == 1)
            REQUIRE(f == k.j + 1, "%s: element %" PRId64 " is SPD but for a negative diagonal at %" PRId64
                    " and gave info %d", op, e, k.j, f);
        const int64_t done = f == 0 ? n : f - 1;
        for (int64_t i = 0; i < done; ++i)
            for (int64_t j = 0; j < done; ++j) {
                if (lower ? j > i : j < i) continue;
                if (f == 0 && i == j)
                    REQUIRE(A[a.at(i, i, e)] > 0, "%s: diagonal %" PRId64 " of element %" PRId64 "'s factor is %g", op,
                            i, e, double(A[a.at(i, i, e)]));
                long double s, sa;
                llt(A, a, e, lower, i, j, s, sa);
                require_close(op, "L L^T", e, i, j, s, (long double)A.before[size_t(a.at(i, j, e))],
                              gamma<T>(n + 1) * sa + tiny<T>(n));
            }
    }
}

// Residuals of solves against M = L L^T: |b - M x| <= gamma_{3n+1} |L| |L^T| |x| for each
// right-hand side (Higham, Thm 10.4). `f` gives entries of the factor of element e.
template <class T, class F>
void check_chol_solve(const char *op, F fac, const Array<T> &B, const Mat &b, int64_t e, int64_t n, int64_t nrhs,
                      bool lower) {
    std::vector<long double> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), ya(static_cast<size_t>(n));
    for (int64_t c = 0; c < nrhs; ++c) {
        for (int64_t i = 0; i < n; ++i) x[size_t(i)] = B.v[size_t(b.at(i, c, e))];
        // y = L^T x, ya = |L^T| |x| (lower: L(i, k) = fac(i, k); upper: L(i, k) = U(k, i)).
        auto L = [&](int64_t i, int64_t k) -> long double { return lower ? fac(i, k) : fac(k, i); };
        for (int64_t k = 0; k < n; ++k) {
            long double s = 0, sa = 0;
            for (int64_t i = k; i < n; ++i) {
                s += L(i, k) * x[size_t(i)];
                sa += std::fabs(L(i, k) * x[size_t(i)]);
            }
            y[size_t(k)] = s, ya[size_t(k)] = sa;
        }
        for (int64_t i = 0; i < n; ++i) {
            long double s = 0, sa = 0;
            for (int64_t k = 0; k <= i; ++k) {
                s += L(i, k) * y[size_t(k)];
                sa += std::fabs(L(i, k)) * ya[size_t(k)];
            }
            const T b0 = B.before[size_t(b.at(i, c, e))];
            require_close(op, "residual b - A x", e, i, c, s, (long double)b0,
                          gamma<T>(3 * n + 1) * sa + tiny<T>(3 * n));
        }
    }
}

template <class T> void run_potrf(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    const bool lower = r.t1 == APAIRS_UPLO_LOWER;
    Array<T> A("A", pl.span[0]);
    Array<int32_t> info("info", r.batch);
    fill_padding(A, x.rng);
    const std::vector<SpdKind> kinds = fill_spd(A, pl.m[0], r.batch, r.n, lower, x.rng);
    mark_triangle(A, pl.m[0], r.batch, lower);
    mark_all(info);
    A.snapshot(), info.snapshot();
    const bool ok = x.call({A.v.data(), info.v.data()});
    if (!ok) return A.check_unchanged(x.op), info.check_unchanged(x.op);
    A.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e) REQUIRE(!is_poison(info[e]), "potrf: info[%" PRId64 "] not written", e);
    check_potrf(x.op, A, pl.m[0], info.v.data(), r.batch, r.n, lower, kinds);
}

// A Cholesky factor that is well conditioned: diagonal in [1, 2], the rest of its
// triangle within 1/n; the other strict triangle poison (potrs reads one triangle).
template <class T> void fill_factor(Array<T> &A, const Mat &a, int64_t batch, int64_t n, bool lower, Rng &rng) {
    for (int64_t e = 0; e < batch; ++e)
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                T &v = A[a.at(i, j, e)];
                if (lower ? j > i : j < i) v = poison<T>();
                else if (i == j) v = T(1 + std::fabs(rng.value()));
                else v = T(rng.value() / double(n));
            }
}

template <class T> void run_potrs(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    const bool lower = r.t1 == APAIRS_UPLO_LOWER;
    Array<T> A("A", pl.span[0]), B("B", pl.span[1]);
    fill_padding(A, x.rng), fill_padding(B, x.rng);
    fill_factor(A, pl.m[0], r.batch, r.n, lower, x.rng);
    fill_entries(B, pl.m[1], r.batch, x.rng);
    mark(B, pl.m[1], r.batch);
    A.snapshot(), B.snapshot();
    const bool ok = x.call({A.v.data(), B.v.data()});
    A.check_unchanged(x.op);
    if (!ok) return B.check_unchanged(x.op);
    B.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e)
        check_chol_solve(x.op, [&](int64_t i, int64_t j) { return (long double)A[pl.m[0].at(i, j, e)]; }, B,
                         pl.m[1], e, r.n, r.nrhs, lower);
}

template <class T> void run_posv(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    const bool lower = r.t1 == APAIRS_UPLO_LOWER;
    Array<T> A("A", pl.span[0]), B("B", pl.span[1]);
    Array<int32_t> info("info", r.batch);
    fill_padding(A, x.rng), fill_padding(B, x.rng);
    const std::vector<SpdKind> kinds = fill_spd(A, pl.m[0], r.batch, r.n, lower, x.rng);
    fill_entries(B, pl.m[1], r.batch, x.rng);
    mark_triangle(A, pl.m[0], r.batch, lower);
    mark_all(info);
    A.snapshot(), B.snapshot(), info.snapshot();
    const bool ok = x.call({A.v.data(), B.v.data(), info.v.data()});
    if (!ok) return A.check_unchanged(x.op), B.check_unchanged(x.op), info.check_unchanged(x.op);
    A.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e) REQUIRE(!is_poison(info[e]), "posv: info[%" PRId64 "] not written", e);
    check_potrf(x.op, A, pl.m[0], info.v.data(), r.batch, r.n, lower, kinds);
    // B: solved where info = 0, its bits kept elsewhere.
    for (int64_t e = 0; e < r.batch; ++e)
        if (info[e] == 0)
            for (int64_t i = 0; i < r.n; ++i)
                for (int64_t c = 0; c < r.nrhs; ++c) B.writable[size_t(pl.m[1].at(i, c, e))] = 1;
    B.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e)
        if (info[e] == 0)
            check_chol_solve(x.op, [&](int64_t i, int64_t j) { return (long double)A[pl.m[0].at(i, j, e)]; }, B,
                             pl.m[1], e, r.n, r.nrhs, lower);
}

// --- LU. ipiv of element e, entry i: AoS ipiv[e * n + i], SoA ipiv[i * batch + e].
int64_t piv_at(bool soa, int64_t n, int64_t batch, int64_t i, int64_t e) { return soa ? i * batch + e : e * n + i; }

// Fills each element: random, or (one in three) with column j exactly zero, which makes
// a pivot exactly zero at column j or before.
template <class T>
std::vector<int64_t> fill_lu(Array<T> &A, const Mat &a, int64_t batch, int64_t n, Rng &rng) {
    std::vector<int64_t> zero_col(static_cast<size_t>(batch), -1);
    for (int64_t e = 0; e < batch; ++e) {
        if (rng.below(3) == 0) zero_col[size_t(e)] = rng.below(n);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) A[a.at(i, j, e)] = j == zero_col[size_t(e)] ? T(0) : T(rng.value());
    }
    return zero_col;
}

// Applies ipiv's interchanges to the n rows of v (row i at v[i * w .. i * w + w)): in
// order i = 0..n-1 (P^T v) or reversed (P v), with A = P L U.
template <class V> void permute(std::vector<V> &v, int64_t w, const std::vector<int32_t> &piv, bool transposed) {
    const int64_t n = int64_t(piv.size());
    for (int64_t s = 0; s < n; ++s) {
        const int64_t i = transposed ? s : n - 1 - s, p = piv[size_t(i)] - 1;
        if (p != i)
            for (int64_t c = 0; c < w; ++c) std::swap(v[size_t(i * w + c)], v[size_t(p * w + c)]);
    }
}

// The unit lower L and upper U of element e from the factors in A, row-major n x n.
template <class T>
void unpack_lu(const std::vector<T> &A, const Mat &a, int64_t e, int64_t n, std::vector<long double> &L,
               std::vector<long double> &U) {
    L.assign(size_t(n * n), 0);
    U.assign(size_t(n * n), 0);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
            const long double v = A[size_t(a.at(i, j, e))];
            if (j < i) L[size_t(i * n + j)] = v;
            else U[size_t(i * n + j)] = v;
        }
    for (int64_t i = 0; i < n; ++i) L[size_t(i * n + i)] = 1;
}

// ipiv[i] in [i + 1, n]; info the first exactly zero pivot of U (1-based) or 0, at most
// j + 1 for a zero column j; P L U reconstructs A within gamma_n P |L| |U| (Higham,
// Thm 9.3). Returns the pivots of element e.
template <class T>
std::vector<int32_t> check_getrf(const char *op, Array<T> &A, const Mat &a, Array<int32_t> &ipiv, int32_t info,
                                 int64_t e, int64_t batch, int64_t n, int64_t zero_col) {
    std::vector<int32_t> piv(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        const int32_t p = ipiv[piv_at(a.soa, n, batch, i, e)];
        REQUIRE(!is_poison(p), "%s: ipiv %" PRId64 " of element %" PRId64 " not written", op, i, e);
        REQUIRE(p >= i + 1 && p <= n, "%s: ipiv %" PRId64 " of element %" PRId64 " is %d, n = %" PRId64, op, i, e, p,
                n);
        piv[size_t(i)] = p;
    }
    REQUIRE(info >= 0 && info <= n, "%s: info of element %" PRId64 " is %d, n = %" PRId64, op, e, info, n);
    int64_t first_zero = 0;
    for (int64_t i = 0; i < n && !first_zero; ++i)
        if (A[a.at(i, i, e)] == T(0)) first_zero = i + 1;
    REQUIRE(info == first_zero, "%s: info of element %" PRId64 " is %d, but U's first zero pivot is at %" PRId64, op,
            e, info, first_zero);
    if (zero_col >= 0)
        REQUIRE(info >= 1 && info <= zero_col + 1, "%s: element %" PRId64 " has column %" PRId64
                " zero but info %d", op, e, zero_col, info);
    std::vector<long double> L, U, M(static_cast<size_t>(n * n)), Ma(static_cast<size_t>(n * n));
    unpack_lu(A.v, a, e, n, L, U);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
            long double s = 0, sa = 0;
            for (int64_t k = 0; k <= std::min(i, j); ++k) {
                s += L[size_t(i * n + k)] * U[size_t(k * n + j)];
                sa += std::fabs(L[size_t(i * n + k)] * U[size_t(k * n + j)]);
            }
            M[size_t(i * n + j)] = s, Ma[size_t(i * n + j)] = sa;
        }
    permute(M, n, piv, false);
    permute(Ma, n, piv, false);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
            require_close(op, "P L U", e, i, j, M[size_t(i * n + j)], (long double)A.before[size_t(a.at(i, j, e))],
                          gamma<T>(n) * Ma[size_t(i * n + j)] + tiny<T>(n));
    return piv;
}

// Residuals of op(A) X = B against A = P L U from the factors in Afac: |b - op(A) x| <=
// gamma_{3n+1} P |L| |U| |x| (Higham, Thm 9.4; transposed alike).
template <class T>
void check_lu_solve(const char *op, const std::vector<T> &Afac, const Mat &a, const std::vector<int32_t> &piv,
                    bool trans, const Array<T> &B, const Mat &b, int64_t e, int64_t n, int64_t nrhs) {
    std::vector<long double> L, U;
    unpack_lu(Afac, a, e, n, L, U);
    const size_t un = static_cast<size_t>(n);
    std::vector<long double> v(un), va(un), w(un), wa(un);
    for (int64_t c = 0; c < nrhs; ++c) {
        for (int64_t i = 0; i < n; ++i) {
            v[size_t(i)] = B.v[size_t(b.at(i, c, e))];
            va[size_t(i)] = std::fabs(v[size_t(i)]);
        }
        // Multiplies by M (row-major n x n, or its transpose) into v, magnitudes alike.
        auto mul = [&](const std::vector<long double> &M, bool t) {
            for (int64_t i = 0; i < n; ++i) {
                long double s = 0, sa = 0;
                for (int64_t k = 0; k < n; ++k) {
                    const long double m = t ? M[size_t(k * n + i)] : M[size_t(i * n + k)];
                    s += m * v[size_t(k)];
                    sa += std::fabs(m) * va[size_t(k)];
                }
                w[size_t(i)] = s, wa[size_t(i)] = sa;
            }
            v.swap(w), va.swap(wa);
        };
        if (!trans) {  // A x = P (L (U x))
            mul(U, false), mul(L, false);
            permute(v, 1, piv, false), permute(va, 1, piv, false);
        } else {  // A^T x = U^T (L^T (P^T x))
            permute(v, 1, piv, true), permute(va, 1, piv, true);
            mul(L, true), mul(U, true);
        }
        for (int64_t i = 0; i < n; ++i)
            require_close(op, "residual b - op(A) x", e, i, c, v[size_t(i)],
                          (long double)B.before[size_t(b.at(i, c, e))],
                          gamma<T>(3 * n + 1) * va[size_t(i)] + tiny<T>(3 * n));
    }
}

template <class T> void run_getrf(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    Array<T> A("A", pl.span[0]);
    Array<int32_t> ipiv("ipiv", r.n * r.batch), info("info", r.batch);
    fill_padding(A, x.rng);
    const std::vector<int64_t> zero_col = fill_lu(A, pl.m[0], r.batch, r.n, x.rng);
    mark(A, pl.m[0], r.batch);
    mark_all(ipiv), mark_all(info);
    A.snapshot(), ipiv.snapshot(), info.snapshot();
    const bool ok = x.call({A.v.data(), ipiv.v.data(), info.v.data()});
    if (!ok) return A.check_unchanged(x.op), ipiv.check_unchanged(x.op), info.check_unchanged(x.op);
    A.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e) {
        REQUIRE(!is_poison(info[e]), "getrf: info[%" PRId64 "] not written", e);
        check_getrf(x.op, A, pl.m[0], ipiv, info[e], e, r.batch, r.n, zero_col[size_t(e)]);
    }
}

// getrs's input: factors of a well-conditioned matrix (unit L and U within 1/n off the
// diagonal, U's diagonal in [1, 2]) and valid pivots, random in [i + 1, n].
template <class T> void run_getrs(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    const bool trans = r.t1 == APAIRS_OP_T;
    Array<T> A("A", pl.span[0]), B("B", pl.span[1]);
    Array<int32_t> ipiv("ipiv", r.n * r.batch);
    fill_padding(A, x.rng), fill_padding(B, x.rng);
    for (int64_t e = 0; e < r.batch; ++e)
        for (int64_t i = 0; i < r.n; ++i) {
            for (int64_t j = 0; j < r.n; ++j)
                A[pl.m[0].at(i, j, e)] = T(i == j ? 1 + std::fabs(x.rng.value()) : x.rng.value() / double(r.n));
            ipiv[piv_at(pl.m[0].soa, r.n, r.batch, i, e)] = int32_t(i + 1 + x.rng.below(r.n - i));
        }
    fill_entries(B, pl.m[1], r.batch, x.rng);
    mark(B, pl.m[1], r.batch);
    A.snapshot(), B.snapshot(), ipiv.snapshot();
    const bool ok = x.call({A.v.data(), ipiv.v.data(), B.v.data()});
    A.check_unchanged(x.op), ipiv.check_unchanged(x.op);
    if (!ok) return B.check_unchanged(x.op);
    B.check_kept(x.op);
    std::vector<int32_t> piv(static_cast<size_t>(r.n));
    for (int64_t e = 0; e < r.batch; ++e) {
        for (int64_t i = 0; i < r.n; ++i) piv[size_t(i)] = ipiv[piv_at(pl.m[0].soa, r.n, r.batch, i, e)];
        check_lu_solve(x.op, A.v, pl.m[0], piv, trans, B, pl.m[1], e, r.n, r.nrhs);
    }
}

template <class T> void run_gesv(Exec &x) {
    const Plan &pl = x.pl;
    const Record &r = pl.r;
    Array<T> A("A", pl.span[0]), B("B", pl.span[1]);
    Array<int32_t> ipiv("ipiv", r.n * r.batch), info("info", r.batch);
    fill_padding(A, x.rng), fill_padding(B, x.rng);
    const std::vector<int64_t> zero_col = fill_lu(A, pl.m[0], r.batch, r.n, x.rng);
    fill_entries(B, pl.m[1], r.batch, x.rng);
    mark(A, pl.m[0], r.batch);
    mark_all(ipiv), mark_all(info);
    A.snapshot(), B.snapshot(), ipiv.snapshot(), info.snapshot();
    const bool ok = x.call({A.v.data(), ipiv.v.data(), B.v.data(), info.v.data()});
    if (!ok)
        return A.check_unchanged(x.op), B.check_unchanged(x.op), ipiv.check_unchanged(x.op),
               info.check_unchanged(x.op);
    A.check_kept(x.op);
    for (int64_t e = 0; e < r.batch; ++e) {
        REQUIRE(!is_poison(info[e]), "gesv: info[%" PRId64 "] not written", e);
        const std::vector<int32_t> piv =
            check_getrf(x.op, A, pl.m[0], ipiv, info[e], e, r.batch, r.n, zero_col[size_t(e)]);
        if (info[e] != 0) continue;  // B of this element must keep its bits
        for (int64_t i = 0; i < r.n; ++i)
            for (int64_t c = 0; c < r.nrhs; ++c) B.writable[size_t(pl.m[1].at(i, c, e))] = 1;
        check_lu_solve(x.op, A.v, pl.m[0], piv, false, B, pl.m[1], e, r.n, r.nrhs);
    }
    B.check_kept(x.op);
}

template <class T> void run_typed(Exec &x) {
    switch (x.pl.r.op) {
    case GEMM: return run_gemm<T>(x);
    case POTRF: return run_potrf<T>(x);
    case POTRS: return run_potrs<T>(x);
    case POSV: return run_posv<T>(x);
    case DOT: return run_dot<T>(x);
    case GEMV: return run_gemv<T>(x);
    case GETRF: return run_getrf<T>(x);
    case GETRS: return run_getrs<T>(x);
    case GESV: return run_gesv<T>(x);
    default: return run_transpose<T>(x);
    }
}

// ---------------------------------------------------------------------------------
// One record: create, check against the model, describe, refused calls, execute.

// The NULL-array bits of the execute flags that name arguments of `fn`.
unsigned null_bits(unsigned xflags, int fn) { return xflags & ((1u << kArrays[fn]) - 1); }

// A call that must fail before it touches memory: on the plan `h` of operation `op`
// (NULL: NULL_POINTER), through `fn` (another operation's execute function: UNSUPPORTED),
// with the arrays of `nulls` NULL (NULL_POINTER). The other arrays are 64 poisoned bytes:
// any use of them shows (AddressSanitizer or the poison).
void check_refused(apairs_plan_t h, int op, int fn, unsigned nulls) {
    std::vector<std::vector<uint8_t>> dummy(4, std::vector<uint8_t>(64, kPoisonU8));
    void *a[4];
    for (int k = 0; k < 4; ++k) a[k] = (nulls >> k & 1) ? nullptr : dummy[size_t(k)].data();
    const apairs_status_t s = execute(fn, h, a);
    check_status(kExecuteFn[fn], s);
    Expect x;
    if (!h || nulls) x.add(APAIRS_ERROR_NULL_POINTER);
    if (h && fn != op) x.add(APAIRS_ERROR_UNSUPPORTED);
    REQUIRE(s != APAIRS_SUCCESS && (x.allowed >> s & 1u), "%s on a %s plan%s (NULL arrays 0x%x) returned %d",
            kExecuteFn[fn], kOpName[op], h ? "" : " handle that is NULL", nulls, int(s));
    for (const auto &d : dummy)
        for (uint8_t b : d) REQUIRE(b == kPoisonU8, "a refused %s wrote into an array", kExecuteFn[fn]);
}

std::string describe_record(const Record &r) {
    return fmt_detail("%s dtype=%d layout=%d order=%d t1=%d t2=%d m=%" PRId64 " n=%" PRId64 " k=%" PRId64
                      " nrhs=%" PRId64 " alpha=%.17g beta=%.17g batch=%" PRId64 " ld=%" PRId64 ",%" PRId64 ",%" PRId64
                      " stride=%" PRId64 ",%" PRId64 ",%" PRId64 " null_plan=%d null_ctx=%d",
                      kOpName[r.op], r.dtype, r.layout, r.order, r.t1, r.t2, r.m, r.n, r.k, r.nrhs, r.alpha, r.beta,
                      r.batch, r.ld[0], r.ld[1], r.ld[2], r.stride[0], r.stride[1], r.stride[2], int(r.null_plan),
                      int(r.null_ctx));
}

// Multiply-adds of executing and checking a valid plan, in double (batch may be huge).
double work(const Record &r) {
    const double n = double(r.n), b = double(r.batch);
    switch (r.op) {
    case GEMM: return double(r.m) * n * double(r.k) * b;
    case GEMV: return double(r.m) * n * b;
    case DOT:
    case TRANSPOSE: return n * b;
    case POTRF:
    case GETRF: return n * n * n * b;
    default: return (n * n * n + 4 * n * n * double(r.nrhs)) * b;
    }
}

void run_record(apairs_context_t ctx, Input &in, int &executes) {
    const Record r = decode(in);
    const Expect x = expect_create(r);
    const char *fn = kCreateFn[r.op];
    if (g_trace) std::fprintf(stderr, "record: %s\n", describe_record(r).c_str());
    apairs_plan_t out = plan_sentinel();
    const apairs_status_t s = create(r, ctx, &out);
    check_status(fn, s);
    if (s != APAIRS_SUCCESS && x.ok())
        violation("a batched create failed on valid arguments",
                  fmt_detail("%s: %d %s", describe_record(r).c_str(), int(s), last_error().c_str()));
    if (s == APAIRS_SUCCESS && !x.ok())
        violation("a batched create accepted invalid arguments",
                  fmt_detail("%s (expected one of 0x%x)", describe_record(r).c_str(), unsigned(x.allowed)));
    if (s != APAIRS_SUCCESS) {
        REQUIRE(x.allowed >> s & 1u, "%s returned %d; the arguments justify only the set 0x%x: %s (%s)", fn, int(s),
                unsigned(x.allowed), describe_record(r).c_str(), last_error().c_str());
        REQUIRE(out == plan_sentinel(), "failed %s wrote *plan", fn);
        // No plan: executing a NULL handle is refused, whatever the arrays.
        if (!(r.xflags & 128)) check_refused(nullptr, r.op, r.op, null_bits(r.xflags, r.op));
        return;
    }
    REQUIRE(out != nullptr && out != plan_sentinel(), "%s succeeded without a plan", fn);

    Plan pl;
    pl.h = out;
    pl.r = r;
    Operand ops[3];
    const bool soa = r.layout == APAIRS_LAYOUT_SOA;
    const int count = operands(r, soa, r.order == APAIRS_ORDER_ROW_MAJOR, r.t1 == APAIRS_OP_T, r.t2 == APAIRS_OP_T,
                               ops);
    const int64_t elem = elem_size(r.op, r.dtype);
    double bytes = 0;
    for (int k = 0; k < count; ++k) {
        Mat &m = pl.m[k];
        m.soa = ops[k].soa, m.row = ops[k].row, m.rows = ops[k].rows, m.cols = ops[k].cols;
        m.ld = ops[k].has_ld ? r.ld[k] : ops[k].rows;
        m.stride = r.stride[k];
        pl.span[k] = span_of(m.soa, extent_of(m.row, m.rows, m.cols, m.ld), m.stride, r.batch, elem);
        REQUIRE(pl.span[k] > 0, "the model accepted an operand whose span does not fit");
        bytes += double(pl.span[k]) * double(elem);
    }
    bytes += double(r.batch) * (8 + 4 * double(r.n));  // out, info, ipiv at most

    // describe works on every plan: one line, from the host backend.
    int64_t len = -1;
    apairs_status_t sd = apairs_plan_describe(pl.h, nullptr, 0, &len);
    check_status("apairs_plan_describe", sd);
    REQUIRE(sd == APAIRS_SUCCESS && len > 0 && len < 4096, "describe: %d, length %" PRId64, int(sd), len);
    std::vector<char> text(static_cast<size_t>(len) + 1, '\x5a');
    sd = apairs_plan_describe(pl.h, text.data(), len + 1, nullptr);
    check_status("apairs_plan_describe", sd);
    REQUIRE(sd == APAIRS_SUCCESS && text[size_t(len)] == '\0' && std::strlen(text.data()) == size_t(len));
    REQUIRE(std::strncmp(text.data(), "backend=host ", 13) == 0, "describe: %s", text.data());

    if (r.xflags & 16) {
        const int other = r.wrong == r.op ? int(PAIRWISE) : r.wrong;
        check_refused(pl.h, r.op, other, null_bits(r.xflags, other));
    }
    if (!(r.xflags & 128)) {
        const unsigned nulls = null_bits(r.xflags, r.op);
        if (bytes <= double(kMaxBytes) && work(r) <= double(kMaxWork) && ++executes <= kMaxExecutes) {
            Exec e(pl, nulls);
            if (r.dtype == APAIRS_DTYPE_F32) run_typed<float>(e);
            else if (r.dtype == APAIRS_DTYPE_F64) run_typed<double>(e);
            else run_transpose<uint8_t>(e);
        } else if (nulls) {
            check_refused(pl.h, r.op, r.op, nulls);  // not run (too large): a NULL is still refused
        }
    }
    const apairs_status_t sx = apairs_plan_destroy(pl.h);
    check_status("apairs_plan_destroy", sx);
    REQUIRE(sx == APAIRS_SUCCESS);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Input in{data, size};
    apairs_context_t ctx = nullptr;
    apairs_status_t s = apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0);
    check_status("apairs_context_create", s);
    REQUIRE(s == APAIRS_SUCCESS);
    // HOST_THREADS 0 (OpenMP's choice) to 3: the element chunks split over threads or not.
    s = apairs_context_set_option(ctx, APAIRS_OPTION_HOST_THREADS, double(in.u8() % 4));
    check_status("apairs_context_set_option", s);
    REQUIRE(s == APAIRS_SUCCESS);
    int executes = 0;
    for (int k = 0; k < kMaxRecords && !in.empty(); ++k) run_record(ctx, in, executes);
    s = apairs_context_destroy(ctx);
    check_status("apairs_context_destroy", s);
    REQUIRE(s == APAIRS_SUCCESS);
    return 0;
}
