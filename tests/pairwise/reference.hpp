// Shared by the public-API tests: element-type traits, poison values, random inputs,
// RAII handles, the long-double reference and the accuracy bounds of apairs.h.
//
// The reference is deliberately naive: a plain loop over i, j and k in long double,
// no slicing, no tiling, powl for LP. Every entry of D is held to the bound apairs.h
// states for its metric, and every padding entry of D must still hold its poison.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "pairwise/bounds.hpp"
#include "catch.hpp"

// REQUIRE a libapairs call to succeed; on failure show the status and the message.
#define APAIRS_REQUIRE_OK(expr)                                                               \
    do {                                                                                      \
        const apairs_status_t apairs_st_ = (expr);                                            \
        INFO(#expr << " -> " << apairs_status_string(apairs_st_) << ": " << apairs_last_error()); \
        REQUIRE(apairs_st_ == APAIRS_SUCCESS);                                                \
    } while (0)

namespace ref {

// ---- Element types -----------------------------------------------------------------

template <class T>
struct Type;
template <>
struct Type<float> {
    using out = float;
    static constexpr int32_t dtype = APAIRS_DTYPE_F32;
    static constexpr const char *name = "f32";
    static long double u() { return std::ldexp(1.0L, -24); }
};
template <>
struct Type<double> {
    using out = double;
    static constexpr int32_t dtype = APAIRS_DTYPE_F64;
    static constexpr const char *name = "f64";
    static long double u() { return std::ldexp(1.0L, -53); }
};
template <>
struct Type<uint8_t> {
    using out = int32_t;  // HAMMING on U8 writes int32_t counts
    static constexpr int32_t dtype = APAIRS_DTYPE_U8;
    static constexpr const char *name = "u8";
    static long double u() { return 0; }
};

// ---- Poison: what D holds before execute, and what its padding must still hold after --

template <class O>
O poison();
template <>
inline float poison<float>() {
    const uint32_t bits = 0x7fc0deadu;  // a quiet NaN with a payload no arithmetic makes
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
template <>
inline double poison<double>() {
    const uint64_t bits = 0x7ff800000000deadull;
    double f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}
template <>
inline int32_t poison<int32_t>() { return 0x7f7f7f7f; }

template <class O>
bool is_poison(O v) {
    const O p = poison<O>();
    return std::memcmp(&v, &p, sizeof(O)) == 0;
}

template <class O>
bool is_nan(O v) { return v != v; }

// Padding of A and B: NaN (floats) or a category that never occurs (U8), so that a
// kernel reading past d would show up in D.
template <class T>
T pad_value() { return std::numeric_limits<T>::quiet_NaN(); }
template <>
inline uint8_t pad_value<uint8_t>() { return 0xA5; }

// ---- Random inputs ---------------------------------------------------------------------

using Rng = std::mt19937_64;

// A fresh seed for every run, or APAIRS_TEST_SEED=N to replay one (print it with INFO).
inline uint64_t fresh_seed() {
    if (const char *s = std::getenv("APAIRS_TEST_SEED")) return std::strtoull(s, nullptr, 0);
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd();
}

template <class T>
struct Matrix {
    int64_t rows = 0, cols = 0, ld = 0;
    std::vector<T> v;
    Matrix(int64_t r, int64_t c, int64_t ld_) : rows(r), cols(c), ld(ld_), v(size_t(r * ld_), pad_value<T>()) {}
    T *row(int64_t i) { return v.data() + i * ld; }
    const T *row(int64_t i) const { return v.data() + i * ld; }
    T *data() { return v.data(); }
    const T *data() const { return v.data(); }
};

// Uniform in [-1, 1], never 0.
template <class T>
void fill_uniform(Matrix<T> &m, Rng &rng) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t k = 0; k < m.cols; ++k) {
            T x;
            do x = static_cast<T>(u(rng));
            while (x == T(0));
            m.row(i)[k] = x;
        }
}

// Drawn from a few values, so that equal coordinates are common (HAMMING).
template <class T>
void fill_choice(Matrix<T> &m, Rng &rng, const std::vector<T> &values) {
    std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
    for (int64_t i = 0; i < m.rows; ++i)
        for (int64_t k = 0; k < m.cols; ++k) m.row(i)[k] = values[pick(rng)];
}

template <class T>
void copy_row(const Matrix<T> &from, int64_t i, Matrix<T> &to, int64_t j) {
    std::copy(from.row(i), from.row(i) + from.cols, to.row(j));
}

// ---- Metrics, reference, bounds ---------------------------------------------------------

struct MetricSpec {
    int32_t metric;
    double p;  // LP only
    std::string name;
};

inline MetricSpec lp(double p) {
    std::ostringstream s;
    s << "lp(p=" << p << ")";
    return {APAIRS_METRIC_LP, p, s.str()};
}

// Every metric on F32 / F64, LP with general p (above and below 1) and with the fast
// paths: p = 1, 2, inf (L1, L2, LINF), 3 and 4 (multiplication), 0.5, 1.5, 2.5, 3.5
// (|t|^k sqrt|t|).
inline std::vector<MetricSpec> float_metrics() {
    return {{APAIRS_METRIC_L1, 0, "l1"},
            {APAIRS_METRIC_L2, 0, "l2"},
            {APAIRS_METRIC_SQEUCLIDEAN, 0, "sqeuclidean"},
            lp(0.5),
            lp(0.7),
            lp(1.5),
            lp(2.5),
            lp(3.5),
            lp(3),  // p = 3 and 4: |t|^p by multiplication
            lp(3.2),
            lp(4),
            lp(5.8),
            lp(1),
            lp(2),
            lp(std::numeric_limits<double>::infinity()),
            {APAIRS_METRIC_LINF, 0, "linf"},
            {APAIRS_METRIC_DOT, 0, "dot"},
            {APAIRS_METRIC_COSINE, 0, "cosine"},
            {APAIRS_METRIC_HAMMING, 0, "hamming"}};
}

// The metric whose bound applies: LP with p = 1, 2, inf takes the L1, L2, LINF paths.
inline int32_t effective_metric(const MetricSpec &m) {
    if (m.metric != APAIRS_METRIC_LP) return m.metric;
    if (m.p == 1) return APAIRS_METRIC_L1;
    if (m.p == 2) return APAIRS_METRIC_L2;
    if (std::isinf(m.p)) return APAIRS_METRIC_LINF;
    return APAIRS_METRIC_LP;
}

// max that keeps a NaN (inf - inf), as the library's LINF does.
inline long double max_nan(long double s, long double t) { return (t != t || t > s) ? t : s; }

// F(a, b) in long double, one plain loop over k. *scale gets sum |a_k b_k| (DOT's bound).
// A NaN anywhere in a or b makes the result NaN (HAMMING: NaN != anything, itself too).
// *in_range (if given) is false when LP's bound does not apply: some nonzero term
// |a_k - b_k|^p underflows or overflows T (F32 with p = 5.8: |a_k - b_k| < 3.5e-7).
// *max_log (if given; LP with finite p only, else 0) gets max_k |ln|a_k - b_k|| over the
// k with a_k != b_k, a term of LP's bound.
template <class T>
long double reference_entry(const MetricSpec &m, const T *a, const T *b, int64_t d, long double *scale,
                            bool *in_range = nullptr, long double *max_log = nullptr) {
    *scale = 0;
    if (in_range) *in_range = true;
    if (max_log) *max_log = 0;
    bool nan = false;
    long double s = 0, aa = 0, bb = 0;
    // LP: the smallest and largest nonzero |a_k - b_k|; max_k |ln|x_k|| is at one of them.
    long double xmin = std::numeric_limits<long double>::infinity(), xmax = 0;
    for (int64_t k = 0; k < d; ++k) {
        const long double x = a[k], y = b[k];
        if (x != x || y != y) nan = true;
        switch (m.metric) {
        case APAIRS_METRIC_L1: s += fabsl(x - y); break;
        case APAIRS_METRIC_L2:
        case APAIRS_METRIC_SQEUCLIDEAN: s += (x - y) * (x - y); break;
        case APAIRS_METRIC_LP:
            if (std::isinf(m.p)) s = max_nan(s, fabsl(x - y));
            else {
                const long double ax = fabsl(x - y);
                const long double t = powl(ax, static_cast<long double>(m.p));
                if (ax != 0 && ax == ax) {
                    xmin = std::min(xmin, ax);
                    xmax = std::max(xmax, ax);
                }
                if (in_range && t != 0 &&
                    (t < std::numeric_limits<T>::min() || t > std::numeric_limits<T>::max()))
                    *in_range = false;
                s += t;
            }
            break;
        case APAIRS_METRIC_LINF: s = max_nan(s, fabsl(x - y)); break;
        case APAIRS_METRIC_DOT:
            s += x * y;
            *scale += fabsl(x * y);
            break;
        case APAIRS_METRIC_COSINE:
            s += x * y;
            aa += x * x;
            bb += y * y;
            break;
        case APAIRS_METRIC_HAMMING: s += (x != y) ? 1 : 0; break;
        }
    }
    if (max_log && xmax > 0) *max_log = std::max(fabsl(logl(xmin)), fabsl(logl(xmax)));
    const long double qnan = std::numeric_limits<long double>::quiet_NaN();
    if (nan && m.metric != APAIRS_METRIC_HAMMING) return qnan;
    switch (m.metric) {
    case APAIRS_METRIC_L2: return sqrtl(s);
    case APAIRS_METRIC_LP: return std::isinf(m.p) ? s : powl(s, 1.0L / static_cast<long double>(m.p));
    case APAIRS_METRIC_COSINE: return (aa == 0 || bb == 0) ? 1.0L : 1.0L - s / (sqrtl(aa) * sqrtl(bb));
    default: return s;
    }
}

// The error apairs.h allows for one entry: `bound` is the header's bound (0: exact),
// from the library's own statement of it (src/pairwise/bounds.hpp);
// `slack` covers the reference's own rounding in long double (64-bit significand:
// about (d + 16) * 2^-62 of the same magnitude, a few thousandths of the bound at most).
// LP: ((d + p + 12) / min(p, 1) + max_k |ln|x_k|| + |ln D|) u |D| with x_k = a_k - b_k,
// the log terms because p and 1/p are rounded to T; `max_log` is max_k |ln|x_k|| over
// the nonzero x_k (reference_entry's *max_log), |ln D| is taken from r (none for r = 0).
struct Allowed {
    long double bound = 0, slack = 0;
};

inline Allowed allowed_error(const MetricSpec &m, int64_t d, long double u, long double r, long double scale,
                             long double max_log = 0) {
    const int32_t metric = effective_metric(m);
    const long double bound = apairs::pairwise::error_bound(metric, m.p, u, d, r, scale, max_log);
    const long double dd = static_cast<long double>(d);
    const long double ref_eps = (dd + 16) * std::ldexp(1.0L, -62);
    switch (metric) {
    case APAIRS_METRIC_L1:
    case APAIRS_METRIC_L2:
    case APAIRS_METRIC_SQEUCLIDEAN:
    case APAIRS_METRIC_LINF: return {bound, ref_eps * fabsl(r)};
    case APAIRS_METRIC_LP: {
        const long double logs = max_log + ((r != 0 && std::isfinite(r)) ? fabsl(logl(fabsl(r))) : 0);
        return {bound, (ref_eps * (m.p + 2) / std::min(m.p, 1.0) + std::ldexp(1.0L, -62) * logs) * fabsl(r)};
    }
    case APAIRS_METRIC_DOT: return {bound, ref_eps * scale};
    case APAIRS_METRIC_COSINE: return {bound, 4 * ref_eps};
    default: return {0, 0};  // HAMMING: exact
    }
}

// One entry judged: `fraction` is |value - reference| / bound (0 when exact; +inf for a
// wrong NaN, a poison value, a nonzero value where only exact 0 is allowed, or a cosine
// outside [0, 2]); `ok` when the error is within bound + slack.
struct Verdict {
    double fraction = 0;
    bool ok = true;
};

template <class O>
Verdict judge(const MetricSpec &m, O value, long double r, const Allowed &a) {
    const double inf = std::numeric_limits<double>::infinity();
    if (is_poison(value)) return {inf, false};
    const long double v = static_cast<long double>(value);
    if (r != r) return v != v ? Verdict{0, true} : Verdict{inf, false};
    if (v != v) return {inf, false};
    if (std::isinf(r)) return v == r ? Verdict{0, true} : Verdict{inf, false};  // +-inf exactly
    if (m.metric == APAIRS_METRIC_COSINE && !(v >= 0 && v <= 2)) return {inf, false};
    const long double err = fabsl(v - r);
    if (err == 0) return {0, true};
    if (a.bound == 0) return {inf, false};
    return {static_cast<double>(err / a.bound), err <= a.bound + a.slack};
}

struct Outcome {
    double worst = 0;        // largest error / bound over the n1 x n2 entries
    int64_t bad = 0;         // entries beyond their bound (or unwritten)
    int64_t bad_padding = 0; // padding entries of D that lost their poison
    int64_t out_of_range = 0; // LP entries outside the bound's range: only checked to be written
};

// Checks all n1 x n2 entries of D (leading dimension ldd) against the reference, and
// that D's padding columns n2..ldd-1 still hold poison. B may be A itself.
template <class T, class O>
Outcome check_against_reference(const MetricSpec &m, const Matrix<T> &A, const Matrix<T> &B,
                                const std::vector<O> &D, int64_t ldd) {
    const int64_t n1 = A.rows, n2 = B.rows, d = A.cols;
    const long double u = Type<T>::u();
    Outcome out;
    for (int64_t i = 0; i < n1; ++i) {
        for (int64_t j = 0; j < n2; ++j) {
            long double scale = 0;
            bool in_range = true;
            long double max_log = 0;
            const long double r = reference_entry(m, A.row(i), B.row(j), d, &scale, &in_range, &max_log);
            Allowed a = allowed_error(m, d, u, r, scale, max_log);
            if (!in_range) {
                a.bound = std::numeric_limits<long double>::infinity();  // only "written"
                ++out.out_of_range;
            }
            const O v = D[size_t(i * ldd + j)];
            const Verdict vd = judge(m, v, r, a);
            out.worst = std::max(out.worst, vd.fraction);
            if (!vd.ok && ++out.bad <= 5) {
                std::ostringstream s;
                s.precision(21);
                s << m.name << " " << Type<T>::name << ": D[" << i << "][" << j << "] = " << +v
                  << (is_poison(v) ? " (poison: never written)" : "") << ", reference " << r
                  << ", bound " << a.bound << " (error / bound = " << vd.fraction << ")";
                FAIL_CHECK(s.str());
            }
        }
        for (int64_t j = n2; j < ldd; ++j)
            if (!is_poison(D[size_t(i * ldd + j)]) && ++out.bad_padding <= 5)
                FAIL_CHECK("padding D[" << i << "][" << j << "] (n2 = " << n2 << ", ldd = " << ldd
                                        << ") was overwritten with " << +D[size_t(i * ldd + j)]);
    }
    CHECK(out.bad == 0);
    CHECK(out.bad_padding == 0);
    return out;
}

// ---- Handles ---------------------------------------------------------------------------

struct Context {
    apairs_context_t h = nullptr;
    explicit Context(int32_t backend = test::backend(), int32_t device = 0) {
        APAIRS_REQUIRE_OK(apairs_context_create(&h, backend, device));
    }
    ~Context() { apairs_context_destroy(h); }
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;
};

struct Plan {
    apairs_plan_t h = nullptr;
    Plan(apairs_context_t ctx, const MetricSpec &m, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
         int64_t lda, int64_t ldb, int64_t ldd) {
        INFO("plan " << m.name << " dtype " << dtype << " n1 " << n1 << " n2 " << n2 << " d " << d
                     << " lda " << lda << " ldb " << ldb << " ldd " << ldd);
        APAIRS_REQUIRE_OK(apairs_plan_create_pairwise(&h, ctx, m.metric, m.p, dtype, n1, n2, d, lda, ldb, ldd));
    }
    ~Plan() { apairs_plan_destroy(h); }
    Plan(const Plan &) = delete;
    Plan &operator=(const Plan &) = delete;
};

// Executes `plan` on A and B (B may be A: then the same pointer is passed) into a
// poisoned D and checks the result.
template <class T>
Outcome execute_and_check(apairs_plan_t plan, const MetricSpec &m, const Matrix<T> &A,
                          const Matrix<T> &B, int64_t ldd) {
    using O = typename Type<T>::out;
    std::vector<O> D(size_t(A.rows * ldd), poison<O>());
    APAIRS_REQUIRE_OK(apairs_plan_execute(plan, A.data(), B.data(), D.data()));
    return check_against_reference(m, A, B, D, ldd);
}

// Plans, executes and checks in one go.
template <class T>
Outcome run_and_check(apairs_context_t ctx, const MetricSpec &m, const Matrix<T> &A,
                      const Matrix<T> &B, int64_t ldd) {
    Plan plan(ctx, m, Type<T>::dtype, A.rows, B.rows, A.cols, A.ld, B.ld, ldd);
    return execute_and_check(plan.h, m, A, B, ldd);
}

// The evidence line: the worst observed error as a fraction of the bound.
inline void print_worst(const std::string &what, double worst, uint64_t seed) {
    std::printf("[%s] %-24s worst error = %.4f of the bound (seed %llu)\n", test::backend_name(),
                what.c_str(), worst, static_cast<unsigned long long>(seed));
}

}  // namespace ref
