// Batched dot and gemv through the public API, on test::backend(): every layout (AoS,
// SoA), order, op and type, sizes at and past each switch point of the CUDA engine's
// models (16-byte chunks per lane: 1, 2, 4, ... 32 lanes across a vector, then a block),
// misaligned elements and arrays, padded strides whose padding must keep its poison,
// beta = 0 on a y full of NaN, batches large enough for several grid-stride rounds, and
// every bad argument. References in long double; inputs fresh every run (the seed is
// printed on failure; APAIRS_TEST_SEED=N replays it).
#include <cmath>
#include <cstdint>
#include <cstdlib>
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
using ref::fresh_seed;
using ref::Rng;
using test::Operand;

namespace {


// |got - want| / bound, +inf for a NaN (a poison left in place) or a bound exceeded by
// a NaN; counts and reports the first failures.
template <class T>
double judge(T got, long double want, long double bound, int64_t *bad, const std::string &where) {
    const long double err = fabsl(static_cast<long double>(got) - want);
    const double frac = got != got ? std::numeric_limits<double>::infinity() : double(err / bound);
    if (!(frac <= 1.0) && ++*bad <= 5)
        FAIL_CHECK(where << " = " << +got << (ref::is_poison(got) ? " (poison: never written)" : "")
                         << ", reference " << double(want) << ", error / bound " << frac);
    return frac;
}

// The reference's own rounding (long double, a 64-bit significand): n additions of
// products of at most `scale` in sum, as reference.hpp allows for the pairwise DOT.
long double ref_slack(int64_t n, long double scale) { return (n + 16) * std::ldexp(1.0L, -62) * scale; }

const char *layout_name(bool soa) { return soa ? " SoA" : " AoS"; }

// ---- dot -------------------------------------------------------------------------------

struct DotCase {
    int64_t n, batch;
    bool soa;
    int64_t pad_x, pad_y;  // stride padding
    int64_t off_x, off_y;  // array offsets, in elements
};

std::ostream &operator<<(std::ostream &os, const DotCase &c) {
    return os << "dot n=" << c.n << " batch=" << c.batch << layout_name(c.soa) << " stride_x+" << c.pad_x
              << " stride_y+" << c.pad_y << " offsets " << c.off_x << "," << c.off_y;
}

// apairs.h (DOT_ACCURACY): f32 sums in double and rounds once:
// |error| <= u |r| + (n + 1) 2^-53 sum |x_i y_i|; f64: |error| <= (n + 1) u sum |x_i y_i|.
template <class T>
long double dot_bound(int64_t n, long double r, long double scale) {
    const long double d = std::ldexp(1.0L, -53);
    return (sizeof(T) == 4 ? ref::Type<T>::u() * fabsl(r) : 0) + (n + 1) * d * scale + ref_slack(n, scale);
}

template <class T>
double run_dot(apairs_context_t ctx, const DotCase &c, Rng &rng) {
    INFO(c);
    auto x = Operand<T>::vector(c.n, c.soa, c.pad_x, c.batch, c.off_x);
    auto y = Operand<T>::vector(c.n, c.soa, c.pad_y, c.batch, c.off_y);
    x.fill(rng);
    y.fill(rng);
    // r: batch values, contiguous; three poisoned slots after them must stay poisoned.
    std::vector<T> r(size_t(c.batch + 3), ref::poison<T>());
    apairs_plan_t plan = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_dot_batched(&plan, ctx, ref::Type<T>::dtype,
                                                     c.soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS, c.n, x.stride,
                                                     y.stride, c.batch));
    const apairs_status_t st = apairs_plan_execute_dot(plan, x.data(), y.data(), r.data());
    INFO(apairs_last_error());
    apairs_plan_destroy(plan);
    REQUIRE(st == APAIRS_SUCCESS);

    double worst = 0;
    int64_t bad = 0;
    for (int64_t e = 0; e < c.batch; ++e) {
        long double s = 0, scale = 0;
        for (int64_t i = 0; i < c.n; ++i) {
            const long double p = static_cast<long double>(x.at(i, 0, e)) * y.at(i, 0, e);
            s += p;
            scale += fabsl(p);
        }
        worst = std::max(worst, judge(r[size_t(e)], s, dot_bound<T>(c.n, s, scale), &bad,
                                      "r[" + std::to_string(e) + "]"));
    }
    CHECK(bad == 0);
    for (int k = 0; k < 3; ++k) CHECK(ref::is_poison(r[size_t(c.batch + k)]));
    return worst;
}

// n: 1, primes, and each switch point of the lanes across a vector (16-byte chunks: 4
// floats, 2 doubles; 1 to 32 lanes, a warp from 128 floats / 64 doubles on), and 4096.
std::vector<DotCase> dot_cases() {
    const int64_t ns[] = {1,  2,  3,  4,   5,   7,   8,   9,   13,  16,   17,   31,   32,   33,  63,
                          64, 65, 97, 127, 128, 129, 255, 256, 257, 509, 1024, 1031, 2048, 4093, 4096};
    std::vector<DotCase> cs;
    int v = 0;
    for (int64_t n : ns)
        for (int soa = 0; soa < 2; ++soa, ++v) {
            DotCase c{};
            c.n = n;
            c.soa = soa;
            c.batch = n >= 1024 ? 3 + v % 5 : (v % 3 == 0 ? 1 : v % 3 == 1 ? 97 : 1009);
            c.pad_x = (v % 4 == 1) ? 3 : 0;
            c.pad_y = (v % 4 == 2) ? 1 : (v % 4 == 3 ? 5 : 0);
            c.off_x = v % 5 == 3 ? 1 : 0;
            c.off_y = v % 7 == 4 ? 3 : 0;
            cs.push_back(c);
        }
    // Batches for several grid-stride rounds of the device: thread-per-element SoA, a
    // warp-group of 2..4 lanes on packed aligned and misaligned AoS, warp-per-element.
    cs.push_back(DotCase{3, 600001, true, 0, 0, 0, 0});
    // f32 SoA, 4 adjacent elements per thread (batches from 2 x 896 per SM: 236481 on 132
    // SMs): padded strides and an offset (host arrays are staged with the batch as the
    // stride: an odd one here, so entry by entry), the last thread's elements past the
    // batch; on the 16-byte grid (a batch that is a multiple of 4: one 16-byte load an
    // entry), in one grid-stride round and in several.
    cs.push_back(DotCase{11, 300037, true, 1, 2, 1, 0});
    cs.push_back(DotCase{3, 600004, true, 3, 3, 0, 0});
    cs.push_back(DotCase{2, 2200004, true, 1, 1, 0, 0});
    // f32 SoA 4 adjacent elements a thread, 37 columns (9 rounds of 4 columns loaded
    // together, then one alone), on a batch whose threads at two elements each fill less
    // than the device but more than 7/8 of it on GPUs of 123 to 139 SMs (the H100 SXM's
    // and H200's 132); double: one element a thread, 4 rounds of 8 columns, then 5.
    cs.push_back(DotCase{37, 250004, true, 0, 0, 0, 0});
    cs.push_back(DotCase{16, 200003, false, 0, 0, 0, 0});
    cs.push_back(DotCase{17, 100003, false, 0, 0, 1, 1});
    cs.push_back(DotCase{8, 150001, false, 0, 0, 0, 2});
    cs.push_back(DotCase{64, 40009, true, 0, 7, 0, 0});
    cs.push_back(DotCase{300, 20011, false, 1, 0, 0, 0});
    // AoS on the 16-byte grid with enough elements for the flat kernel (lanes x elements
    // past the device's fill on GPUs of up to 256 SMs): 1, 2, 4 chunks per lane, 16 lanes
    // with idle ones (n = 160), a partial last chunk (n = 6 in strides of 8), misaligned
    // arrays (scalar loads).
    cs.push_back(DotCase{32, 300007, false, 0, 0, 0, 0});
    cs.push_back(DotCase{64, 100003, false, 0, 0, 0, 0});
    cs.push_back(DotCase{160, 20011, false, 0, 0, 0, 0});
    cs.push_back(DotCase{6, 150001, false, 2, 2, 0, 0});
    cs.push_back(DotCase{32, 100003, false, 0, 0, 1, 0});
    return cs;
}

// ---- gemv ------------------------------------------------------------------------------

struct GemvCase {
    int64_t m, n, batch;
    bool trans, soa, row_major;
    int64_t ld_pad, stride_pad, off;
    double alpha, beta;
};

std::ostream &operator<<(std::ostream &os, const GemvCase &c) {
    return os << "gemv m=" << c.m << " n=" << c.n << " batch=" << c.batch << " op=" << (c.trans ? 'T' : 'N')
              << layout_name(c.soa) << (c.row_major ? " row-major" : " col-major") << " ld+" << c.ld_pad
              << " stride+" << c.stride_pad << " offset " << c.off << " alpha=" << c.alpha << " beta=" << c.beta;
}

template <class T>
double run_gemv(apairs_context_t ctx, const GemvCase &c, Rng &rng) {
    INFO(c);
    const int64_t xl = c.trans ? c.m : c.n, yl = c.trans ? c.n : c.m;
    Operand<T> A(c.m, c.n, c.soa, c.row_major, c.ld_pad, c.stride_pad, c.batch, c.off);
    auto x = Operand<T>::vector(xl, c.soa, (c.stride_pad * 3) % 5, c.batch, 0);
    auto y = Operand<T>::vector(yl, c.soa, c.stride_pad % 2, c.batch, c.off % 2);
    A.fill(rng);
    x.fill(rng);
    if (c.beta != 0) y.fill(rng);  // beta = 0: y keeps its NaN poison, which must not be read
    const std::vector<T> y0 = y.v;
    apairs_plan_t plan = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_gemv_batched(
        &plan, ctx, ref::Type<T>::dtype, c.soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
        c.row_major ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR, c.trans ? APAIRS_OP_T : APAIRS_OP_N, c.m, c.n,
        c.alpha, c.beta, A.ld, A.stride, x.stride, y.stride, c.batch));
    const apairs_status_t st = apairs_plan_execute_gemv(plan, A.data(), x.data(), y.data());
    INFO(apairs_last_error());
    apairs_plan_destroy(plan);
    REQUIRE(st == APAIRS_SUCCESS);

    // apairs.h (GEMV_ACCURACY), with k = x's length and t = |alpha| sum_l |a_il x_l| +
    // |beta y_i|: f32: |error| <= u |y_i| + (k + 2) 2^-53 t; f64: |error| <= (k + 2) u t.
    const long double d = std::ldexp(1.0L, -53);
    double worst = 0;
    int64_t bad = 0;
    for (int64_t e = 0; e < c.batch; ++e)
        for (int64_t i = 0; i < yl; ++i) {
            long double s = 0, scale = 0;
            for (int64_t l = 0; l < xl; ++l) {
                const long double p = static_cast<long double>(c.trans ? A.at(l, i, e) : A.at(i, l, e)) * x.at(l, 0, e);
                s += p;
                scale += fabsl(p);
            }
            const long double b0 = c.beta != 0 ? static_cast<long double>(y0[size_t(y.index(i, 0, e))]) : 0;
            const long double want = c.alpha * s + c.beta * b0;
            const long double t = std::fabs(c.alpha) * scale + std::fabs(c.beta) * fabsl(b0);
            const long double bound =
                (sizeof(T) == 4 ? ref::Type<T>::u() * fabsl(want) : 0) + (xl + 2) * d * t + ref_slack(xl, t) + 1e-300L;
            worst = std::max(worst, judge(y.at(i, 0, e), want, bound, &bad,
                                          "y[" + std::to_string(e) + "][" + std::to_string(i) + "]"));
        }
    CHECK(bad == 0);
    CHECK(y.padding_touched(y0) == 0);
    return worst;
}

// Sizes at and past the switch points of both AoS kernels (lanes across a contiguous row
// or column: 1, 2, ... 32, then a block for few elements), primes, 1 and 4096; every
// layout, order and op, padded ld and strides, misaligned arrays.
std::vector<GemvCase> gemv_cases() {
    const int64_t sizes[][2] = {{1, 1},    {2, 2},   {3, 3},   {4, 4},     {5, 3},     {2, 7},     {8, 8},
                                {9, 5},    {16, 16}, {17, 13}, {32, 32},   {33, 31},   {64, 64},   {65, 63},
                                {1, 300},  {300, 1}, {128, 129}, {257, 255}, {1024, 3}, {3, 1031}, {4096, 2},
                                {2, 4096}, {611, 733}};
    std::vector<GemvCase> cs;
    int v = 0;
    for (const auto &s : sizes) {
        const int64_t work = s[0] * s[1];
        for (int combo = 0; combo < 8; ++combo, ++v) {
            GemvCase c{};
            c.m = s[0], c.n = s[1];
            c.soa = combo & 1;
            c.row_major = combo & 2;
            c.trans = combo & 4;
            c.batch = work > 100000 ? 2 : work > 4000 ? 5 : (v % 3 == 0 ? 1 : v % 3 == 1 ? 97 : 13);
            c.ld_pad = v % 3 == 2 ? 1 : v % 5 == 1 ? 4 : 0;
            c.stride_pad = (v * 5) % 7;
            c.off = v % 4 == 3 ? 1 : 0;
            c.alpha = v % 5 == 0 ? 1.0 : -0.75;
            c.beta = v % 3 == 0 ? 0.0 : (v % 3 == 1 ? 1.0 : 0.5);
            cs.push_back(c);
        }
    }
    // Many small elements: several grid-stride rounds of thread-per-element (SoA) and of
    // warp-groups (AoS, both kernels), packed and aligned.
    cs.push_back(GemvCase{4, 4, 200003, false, true, true, 0, 0, 0, 1.0, 0.0});
    cs.push_back(GemvCase{4, 4, 200003, false, false, true, 0, 0, 0, 2.0, -1.0});
    cs.push_back(GemvCase{16, 16, 40009, true, false, true, 0, 0, 0, 1.0, 0.5});
    cs.push_back(GemvCase{16, 16, 40009, false, false, true, 0, 0, 0, -0.5, 0.0});
    cs.push_back(GemvCase{8, 3, 100003, false, false, false, 0, 0, 0, 1.0, 1.0});
    cs.push_back(GemvCase{64, 64, 5003, false, true, false, 0, 0, 0, 1.0, 0.0});
    // f32 SoA, one row of A: 4 adjacent elements per thread (as dot), beta read, on the
    // 16-byte grid (the staged stride, the batch, a multiple of 4) and off it.
    cs.push_back(GemvCase{1, 7, 300004, false, true, true, 0, 0, 0, 1.5, 0.5});
    cs.push_back(GemvCase{1, 5, 300003, false, true, false, 0, 0, 0, -0.75, 1.0});
    // The flat AoS kernel (contiguous rows on the 16-byte grid, enough elements): rows of
    // 2 floats two to a lane (3 rows: a half chunk), rows padded to a power of two of
    // slots, 1 to 4 chunks per lane, idle lanes (n = 12), partial chunks (n = 6, ld 8),
    // op T of column-major, misaligned arrays (scalar loads), beta = 0 on NaN y.
    cs.push_back(GemvCase{2, 2, 300007, false, false, true, 0, 0, 0, 1.0, 0.0});
    cs.push_back(GemvCase{3, 2, 150001, false, false, true, 0, 2, 0, -0.75, 0.5});
    cs.push_back(GemvCase{3, 128, 20011, false, false, true, 0, 0, 0, 1.0, 0.0});
    cs.push_back(GemvCase{5, 8, 40009, false, false, true, 0, 0, 0, 1.0, 1.0});
    cs.push_back(GemvCase{7, 64, 5003, false, false, true, 0, 4, 0, 1.0, 0.0});
    cs.push_back(GemvCase{64, 64, 3001, false, false, true, 0, 0, 0, 2.0, 0.5});
    cs.push_back(GemvCase{16, 12, 20011, false, false, true, 0, 0, 0, 1.0, 0.0});
    cs.push_back(GemvCase{4, 6, 50021, false, false, true, 2, 14, 0, 1.0, -1.0});
    cs.push_back(GemvCase{8, 8, 100003, true, false, false, 0, 0, 0, 1.0, 1.0});
    cs.push_back(GemvCase{4, 4, 100003, false, false, true, 0, 0, 1, 1.0, 0.0});
    // One chunk per lane, 4 row slots per lane reduced together (lanes >= 4): f32 8 lanes
    // with 2 idle (n = 24), 9 rows padded to 16 slots (x loaded once), beta != 0.
    cs.push_back(GemvCase{9, 24, 40009, false, false, true, 0, 0, 0, 1.0, 0.5});
    // x loaded once per element for a lane's 4 slots: all in one element (f32 4 lanes,
    // n = 12, 20 rows padded to 32 slots; rows of 8 with 70 rows, f32 2 lanes: slots
    // reduced one by one), 2 elements of 2 slots (f32: n = 8 with 24 rows, n = 24 with 6
    // rows; n = 16 and 12 with 16 rows above, odd batches).
    cs.push_back(GemvCase{20, 12, 20011, false, false, true, 0, 0, 0, 1.0, 0.0});
    cs.push_back(GemvCase{70, 8, 3001, false, false, true, 0, 0, 0, -1.0, 0.5});
    cs.push_back(GemvCase{24, 8, 20011, false, false, true, 0, 0, 0, 1.0, 0.0});
    cs.push_back(GemvCase{6, 24, 30011, false, false, true, 0, 0, 0, 0.5, 1.0});
    // SoA of more than 8 rows: many elements, a warp per row tile (a full tile of 8 rows
    // and a partial one of 4); few elements of long rows, the split kernel with a partial
    // tile of 8 rows, op N and T. (Few elements of 9..128 rows, tiles of 4 rows: the sizes
    // above.)
    cs.push_back(GemvCase{12, 2, 140009, false, true, false, 0, 1, 0, 1.0, 0.5});
    cs.push_back(GemvCase{12, 300, 5, false, true, false, 1, 2, 0, -0.75, 0.5});
    cs.push_back(GemvCase{300, 12, 3, true, true, true, 0, 0, 0, 1.0, 0.0});
    return cs;
}

template <class T, class Case, class Run>
void check_all(const char *what, const std::vector<Case> &cases, Run run) {
    const uint64_t seed = fresh_seed();
    INFO("seed " << seed << " (replay: APAIRS_TEST_SEED=" << seed << "), backend " << test::backend_name() << ", "
                 << ref::Type<T>::name);
    Rng rng(seed);
    Context ctx;
    double worst = 0;
    for (const Case &c : cases) worst = std::max(worst, run(ctx.h, c, rng));
    ref::print_worst(std::string(what) + " " + ref::Type<T>::name, worst, seed);
}

}  // namespace

TEMPLATE_TEST_CASE("batched dot matches a long-double reference in every layout", "[batched][dot]", float, double) {
    check_all<TestType>("dot batched", dot_cases(), run_dot<TestType>);
}

TEMPLATE_TEST_CASE("batched gemv matches a long-double reference in every layout", "[batched][gemv]", float,
                   double) {
    check_all<TestType>("gemv batched", gemv_cases(), run_gemv<TestType>);
}

TEST_CASE("batched dot: SoA entries further apart than a CUDA copy's largest pitch", "[batched][dot]") {
    // Entry i of element e at i * stride + e with stride 2^30 floats: the two entries of
    // a chunk lie 4 GiB apart, past cudaMemcpy2D's largest pitch (about 2 GiB), so the
    // CUDA backend stages such rows one copy each. The arrays are reserved, not touched
    // (malloc: only the entries' pages are ever written).
#if defined(__SANITIZE_ADDRESS__)
    return;  // (AddressSanitizer maps shadow for the whole 8 GiB and aborts if it cannot)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return;
#endif
#endif
    Context ctx;
    const int64_t n = 2, batch = 1001, stride = int64_t(1) << 30;
    const size_t bytes = size_t(stride + batch) * sizeof(float);
    float *x = static_cast<float *>(std::malloc(bytes)), *y = static_cast<float *>(std::malloc(bytes));
    if (!x || !y) {
        std::free(x), std::free(y);
        WARN("cannot reserve 2 x 4 GiB of address space: not run");
        return;
    }
    Rng rng(fresh_seed());
    std::uniform_real_distribution<float> u(-1, 1);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t e = 0; e < batch; ++e) x[i * stride + e] = u(rng), y[i * stride + e] = u(rng);
    std::vector<float> out(size_t(batch), std::nanf(""));
    apairs_plan_t plan = nullptr;
    APAIRS_REQUIRE_OK(
        apairs_plan_create_dot_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, n, stride, stride, batch));
    const apairs_status_t st = apairs_plan_execute_dot(plan, x, y, out.data());
    INFO(apairs_last_error());
    CHECK(st == APAIRS_SUCCESS);
    apairs_plan_destroy(plan);
    int64_t bad = 0;
    for (int64_t e = 0; e < batch; ++e) {
        const double p0 = double(x[e]) * y[e], p1 = double(x[stride + e]) * y[stride + e];
        // apairs.h (f32): |error| <= u |out| + (n + 1) 2^-53 sum |x_i y_i|, u = 2^-24
        const double got = out[size_t(e)];
        bad += !(std::fabs(got - (p0 + p1)) <= 0x1p-24 * std::fabs(got) + 3 * 0x1p-53 * (std::fabs(p0) + std::fabs(p1)));
    }
    CHECK(bad == 0);
    std::free(x), std::free(y);
}

TEST_CASE("batched gemv: alpha and beta are taken in the element type", "[batched][gemv]") {
    Context ctx;
    apairs_plan_t plan = nullptr;
    // 1e39 is finite as a double but not as a float.
    CHECK(apairs_plan_create_gemv_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, APAIRS_ORDER_ROW_MAJOR,
                                          APAIRS_OP_N, 1, 1, 1e39, 0, 1, 1, 1, 1, 1) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(std::string(apairs_last_error()).find("alpha = ") != std::string::npos);
    CHECK(apairs_plan_create_gemv_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, APAIRS_ORDER_ROW_MAJOR,
                                          APAIRS_OP_N, 1, 1, 1, -1e39, 1, 1, 1, 1, 1) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(plan == nullptr);
    APAIRS_REQUIRE_OK(apairs_plan_create_gemv_batched(&plan, ctx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                      APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, 1, 1, 1e39, 0, 1, 1, 1, 1,
                                                      1));
    double a = 1e-20, x = 1e-20, y = std::nan("");
    APAIRS_REQUIRE_OK(apairs_plan_execute_gemv(plan, &a, &x, &y));
    CHECK(std::fabs(y - 0.1) < 1e-16);
    apairs_plan_destroy(plan);
}

namespace {

// Runs `create` on each row of a table of bad arguments: the status, *plan untouched, a
// message naming the function and the argument.
template <class Bad, class Create>
void check_bad(const std::vector<Bad> &bad, const char *fn, Create create) {
    const apairs_plan_t sentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));
    for (const Bad &b : bad) {
        INFO(b.what);
        apairs_plan_t plan = sentinel;
        const apairs_status_t st = create(&plan, b);
        const std::string msg = apairs_last_error();
        INFO("status " << apairs_status_string(st) << ", message \"" << msg << "\"");
        CHECK(st == b.want);
        if (b.want == APAIRS_SUCCESS) {
            CHECK(msg.empty());
            CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
            continue;
        }
        CHECK(plan == sentinel);
        CHECK(msg.find(fn) != std::string::npos);
        if (b.word) CHECK(msg.find(std::string(b.word) + " = ") != std::string::npos);
    }
}

}  // namespace

TEST_CASE("batched dot: every bad argument fails with its status, a message, and writes nothing",
          "[batched][dot]") {
    Context ctx;
    struct Bad {
        const char *what;
        apairs_status_t want;
        int32_t dtype = APAIRS_DTYPE_F32, layout = APAIRS_LAYOUT_AOS;
        int64_t n = 5, sx = 5, sy = 7, batch = 10;
        const char *word = nullptr;
    };
    std::vector<Bad> bad;
    auto add = [&](Bad b) { bad.push_back(b); };
    { Bad b{"good", APAIRS_SUCCESS}; add(b); }
    { Bad b{"good SoA", APAIRS_SUCCESS}; b.layout = APAIRS_LAYOUT_SOA; b.sx = 10; b.sy = 12; add(b); }
    { Bad b{"good n = 4096", APAIRS_SUCCESS}; b.n = 4096; b.sx = b.sy = 4096; add(b); }
    { Bad b{"dtype", APAIRS_ERROR_UNKNOWN_ENUM}; b.dtype = 9; b.word = "dtype"; add(b); }
    { Bad b{"dtype u8", APAIRS_ERROR_UNSUPPORTED}; b.dtype = APAIRS_DTYPE_U8; b.word = "dtype"; add(b); }
    { Bad b{"layout", APAIRS_ERROR_UNKNOWN_ENUM}; b.layout = 0; b.word = "layout"; add(b); }
    { Bad b{"n = 0", APAIRS_ERROR_INVALID_VALUE}; b.n = 0; b.word = "n"; add(b); }
    { Bad b{"n < 0", APAIRS_ERROR_INVALID_VALUE}; b.n = -3; b.word = "n"; add(b); }
    { Bad b{"n = 4097", APAIRS_ERROR_INVALID_VALUE}; b.n = 4097; b.sx = b.sy = 4097; b.word = "n"; add(b); }
    { Bad b{"batch = 0", APAIRS_ERROR_INVALID_VALUE}; b.batch = 0; b.word = "batch"; add(b); }
    { Bad b{"batch < 0", APAIRS_ERROR_INVALID_VALUE}; b.batch = -1; b.word = "batch"; add(b); }
    { Bad b{"AoS stride_x < n", APAIRS_ERROR_INVALID_VALUE}; b.sx = 4; b.word = "stride_x"; add(b); }
    { Bad b{"stride_y negative", APAIRS_ERROR_INVALID_VALUE}; b.sy = -5; b.word = "stride_y"; add(b); }
    { Bad b{"SoA stride_y < batch", APAIRS_ERROR_INVALID_VALUE}; b.layout = APAIRS_LAYOUT_SOA; b.sx = 10; b.sy = 9; b.word = "stride_y"; add(b); }
    { Bad b{"span overflows", APAIRS_ERROR_OVERFLOW}; b.sx = INT64_MAX / 4; b.word = "stride_x"; add(b); }
    { Bad b{"batch overflows", APAIRS_ERROR_OVERFLOW}; b.batch = INT64_MAX / 8; b.word = "stride_x"; add(b); }
    { Bad b{"SoA span overflows", APAIRS_ERROR_OVERFLOW}; b.layout = APAIRS_LAYOUT_SOA; b.sx = 10; b.sy = INT64_MAX / 2; b.word = "stride_y"; add(b); }
    check_bad(bad, "apairs_plan_create_dot_batched", [&](apairs_plan_t *p, const Bad &b) {
        return apairs_plan_create_dot_batched(p, ctx.h, b.dtype, b.layout, b.n, b.sx, b.sy, b.batch);
    });

    // NULL handles and arrays; plans executed by another operation's function.
    apairs_plan_t dot = nullptr, gemv = nullptr;
    CHECK(apairs_plan_create_dot_batched(nullptr, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, 2, 2, 2, 2) ==
          APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_create_dot_batched(&dot, nullptr, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, 2, 2, 2, 2) ==
          APAIRS_ERROR_NULL_POINTER);
    CHECK(dot == nullptr);
    APAIRS_REQUIRE_OK(apairs_plan_create_dot_batched(&dot, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, 2, 2, 2, 2));
    APAIRS_REQUIRE_OK(apairs_plan_create_gemv_batched(&gemv, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS,
                                                      APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, 2, 2, 1, 0, 2, 4, 2, 2,
                                                      1));
    float x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8}, r[2] = {-1, -1};
    CHECK(apairs_plan_execute_dot(dot, nullptr, y, r) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_dot(dot, x, nullptr, r) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_dot(dot, x, y, nullptr) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_dot(nullptr, x, y, r) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_gemm(dot, x, y, r) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(std::string(apairs_last_error()).find("apairs_plan_execute_dot") != std::string::npos);
    CHECK(apairs_plan_execute(dot, x, y, r) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(apairs_plan_execute_gemv(dot, x, y, r) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(apairs_plan_execute_dot(gemv, x, y, r) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(std::string(apairs_last_error()).find("apairs_plan_execute_gemv") != std::string::npos);
    for (float v : r) CHECK(v == -1.0f);  // nothing written by the failures
    APAIRS_REQUIRE_OK(apairs_plan_execute_dot(dot, x, y, r));
    CHECK(r[0] == 17.0f);  // 1*5 + 2*6
    CHECK(r[1] == 53.0f);  // 3*7 + 4*8
    apairs_plan_destroy(dot);
    apairs_plan_destroy(gemv);
}

TEST_CASE("batched gemv: every bad argument fails with its status, a message, and writes nothing",
          "[batched][gemv]") {
    Context ctx;
    struct Bad {
        const char *what;
        apairs_status_t want;
        int32_t dtype = APAIRS_DTYPE_F64, layout = APAIRS_LAYOUT_AOS, order = APAIRS_ORDER_ROW_MAJOR, trans = 0;
        int64_t m = 3, n = 4;
        double alpha = 1, beta = 0;
        int64_t lda = 4, sa = 12, sx = 4, sy = 3, batch = 10;
        const char *word = nullptr;
    };
    std::vector<Bad> bad;
    auto add = [&](Bad b) { bad.push_back(b); };
    { Bad b{"good", APAIRS_SUCCESS}; add(b); }
    { Bad b{"good T", APAIRS_SUCCESS}; b.trans = APAIRS_OP_T; b.sx = 3; b.sy = 4; add(b); }
    { Bad b{"good col-major SoA", APAIRS_SUCCESS}; b.layout = APAIRS_LAYOUT_SOA; b.order = APAIRS_ORDER_COL_MAJOR; b.lda = 3; b.sa = b.sx = b.sy = 10; add(b); }
    { Bad b{"dtype", APAIRS_ERROR_UNKNOWN_ENUM}; b.dtype = -2; b.word = "dtype"; add(b); }
    { Bad b{"dtype u8", APAIRS_ERROR_UNSUPPORTED}; b.dtype = APAIRS_DTYPE_U8; b.word = "dtype"; add(b); }
    { Bad b{"layout", APAIRS_ERROR_UNKNOWN_ENUM}; b.layout = 7; b.word = "layout"; add(b); }
    { Bad b{"order", APAIRS_ERROR_UNKNOWN_ENUM}; b.order = 3; b.word = "order"; add(b); }
    { Bad b{"trans", APAIRS_ERROR_UNKNOWN_ENUM}; b.trans = 2; b.word = "trans"; add(b); }
    { Bad b{"m = 0", APAIRS_ERROR_INVALID_VALUE}; b.m = 0; b.word = "m"; add(b); }
    { Bad b{"n < 0", APAIRS_ERROR_INVALID_VALUE}; b.n = -4; b.word = "n"; add(b); }
    { Bad b{"m = 4097", APAIRS_ERROR_INVALID_VALUE}; b.m = 4097; b.sa = 4097 * 4; b.sy = 4097; b.word = "m"; add(b); }
    { Bad b{"n = 4097", APAIRS_ERROR_INVALID_VALUE}; b.n = 4097; b.lda = 4097; b.sa = 3 * 4097; b.sx = 4097; b.word = "n"; add(b); }
    { Bad b{"alpha NaN", APAIRS_ERROR_INVALID_VALUE}; b.alpha = std::nan(""); b.word = "alpha"; add(b); }
    { Bad b{"alpha -inf", APAIRS_ERROR_INVALID_VALUE}; b.alpha = -INFINITY; b.word = "alpha"; add(b); }
    { Bad b{"beta inf", APAIRS_ERROR_INVALID_VALUE}; b.beta = INFINITY; b.word = "beta"; add(b); }
    { Bad b{"batch = 0", APAIRS_ERROR_INVALID_VALUE}; b.batch = 0; b.word = "batch"; add(b); }
    { Bad b{"lda < n (row-major)", APAIRS_ERROR_INVALID_VALUE}; b.lda = 3; b.word = "lda"; add(b); }
    { Bad b{"lda < m (col-major)", APAIRS_ERROR_INVALID_VALUE}; b.order = APAIRS_ORDER_COL_MAJOR; b.lda = 2; b.word = "lda"; add(b); }
    { Bad b{"stride_a overlaps", APAIRS_ERROR_INVALID_VALUE}; b.sa = 11; b.word = "stride_a"; add(b); }
    { Bad b{"stride_x < n", APAIRS_ERROR_INVALID_VALUE}; b.sx = 3; b.word = "stride_x"; add(b); }
    { Bad b{"stride_x < m (T)", APAIRS_ERROR_INVALID_VALUE}; b.trans = APAIRS_OP_T; b.sx = 2; b.sy = 4; b.word = "stride_x"; add(b); }
    { Bad b{"stride_y < m", APAIRS_ERROR_INVALID_VALUE}; b.sy = 2; b.word = "stride_y"; add(b); }
    { Bad b{"stride_y negative", APAIRS_ERROR_INVALID_VALUE}; b.sy = -3; b.word = "stride_y"; add(b); }
    { Bad b{"SoA stride_x < batch", APAIRS_ERROR_INVALID_VALUE}; b.layout = APAIRS_LAYOUT_SOA; b.sa = b.sy = 10; b.sx = 9; b.word = "stride_x"; add(b); }
    { Bad b{"span overflows", APAIRS_ERROR_OVERFLOW}; b.sa = INT64_MAX / 4; b.word = "stride_a"; add(b); }
    { Bad b{"y span overflows", APAIRS_ERROR_OVERFLOW}; b.sy = INT64_MAX / 4; b.word = "stride_y"; add(b); }
    { Bad b{"ld overflows", APAIRS_ERROR_OVERFLOW}; b.lda = INT64_MAX / 2; b.sa = INT64_MAX; b.word = "lda"; add(b); }
    check_bad(bad, "apairs_plan_create_gemv_batched", [&](apairs_plan_t *p, const Bad &b) {
        return apairs_plan_create_gemv_batched(p, ctx.h, b.dtype, b.layout, b.order, b.trans, b.m, b.n, b.alpha,
                                               b.beta, b.lda, b.sa, b.sx, b.sy, b.batch);
    });

    apairs_plan_t gemv = nullptr;
    CHECK(apairs_plan_create_gemv_batched(nullptr, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, APAIRS_ORDER_ROW_MAJOR,
                                          APAIRS_OP_N, 2, 2, 1, 0, 2, 4, 2, 2, 1) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_create_gemv_batched(&gemv, nullptr, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS,
                                          APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, 2, 2, 1, 0, 2, 4, 2, 2,
                                          1) == APAIRS_ERROR_NULL_POINTER);
    CHECK(gemv == nullptr);
    APAIRS_REQUIRE_OK(apairs_plan_create_gemv_batched(&gemv, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS,
                                                      APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, 2, 2, 1, 0, 2, 4, 2, 2,
                                                      1));
    float a[4] = {1, 2, 3, 4}, x[2] = {5, 6}, y[2] = {-1, -1};
    CHECK(apairs_plan_execute_gemv(gemv, nullptr, x, y) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_gemv(gemv, a, nullptr, y) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_gemv(gemv, a, x, nullptr) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_gemm(gemv, a, x, y) == APAIRS_ERROR_UNSUPPORTED);
    for (float v : y) CHECK(v == -1.0f);
    APAIRS_REQUIRE_OK(apairs_plan_execute_gemv(gemv, a, x, y));
    CHECK(y[0] == 17.0f);  // [1 2; 3 4] [5; 6] = [17; 39]
    CHECK(y[1] == 39.0f);
    apairs_plan_destroy(gemv);
}
