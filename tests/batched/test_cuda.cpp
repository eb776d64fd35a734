// Batched CUDA engine checks that need the runtime API (tagged [cuda]; run by suite gpu):
// the transpose planned for 16-byte pieces (4-byte values, entries and strides multiples
// of 4) on device arrays on the 16-byte grid (its 16-byte kernel: partial pieces and
// tiles at the batch's end) and off it (the scalar kernel) moves every value bit for bit
// and writes nothing else, as does the tile kernel (more than 16 entries) on device
// arrays of padded strides, both directions, in u8, f32 and f64; gemv and dot planned for
// bulk copies (sm_90) on device arrays on the grid (the copies) and off it (plain loads
// into the same stages), and SoA gemv planned for staging by cp.async on arrays on the
// grid and off it (plain loads), match
// a long-double reference and leave the outputs' padding alone; potrf's f64 warp kernel
// of n = 25..32 gives the same bits staged in 16-byte pieces (arrays on the grid) and an
// entry at a time (off it); potrf's warp kernels (n = 9..32) give the bits of their
// column loop emulated on the host, and getrf's kernels (every model: thread, warp-group,
// line, rows and panel; 18 sizes from 1 to 128) the bits, pivots and info of theirs, and
// getrs's kernels of n > 8 with at most 8 right-hand sides (rows and stream; 13 sizes from
// 9 to 128, every layout, order and op) the bits of its column solves; an execute whose
// kernel's shared-memory limit was lowered after planning raises it again and runs; gemm
// with alpha = 0 scales C bit for bit on device arrays on and off the 16-byte grid;
// double AoS gemm of the larger shapes goes through cuBLAS within the bound, writing
// only C.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "apairs.h"
#include "batched/cuda.hpp"
#include "catch.hpp"
#include "cuda_checks.hpp"
#include "reference.hpp"

using test::api_ok;
using test::cuda_ok;

namespace {

// A CUDA context on device 0 (options as given), destroyed on scope exit.
struct CudaContext {
    apairs_context_t h = nullptr;
    CudaContext() { api_ok(apairs_context_create(&h, APAIRS_BACKEND_CUDA, 0)); }
    ~CudaContext() { apairs_context_destroy(h); }
    CudaContext(const CudaContext &) = delete;
    CudaContext &operator=(const CudaContext &) = delete;
};

}  // namespace

TEST_CASE("batched CUDA: a transpose planned for 16-byte pieces moves aligned arrays and arrays off the grid",
          "[cuda][batched][transpose]") {
    const uint64_t seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    const CudaContext cx;
    apairs_context_t ctx = cx.h;
    for (int64_t entries : {4, 12, 16})
        for (int64_t batch : {3, 130, 4099})
            for (int shift : {0, 1, 2, 3}) {  // in, out, both or neither one value off the grid
                INFO("entries " << entries << ", batch " << batch << ", shift " << shift);
                const int64_t si = entries + 4, so = (batch + 3) / 4 * 4 + 8;
                const size_t in_n = size_t(batch * si), out_n = size_t(entries * so);
                std::vector<float> in(in_n);
                for (float &x : in) x = float(int64_t(rng() % 2000001) - 1000000) + 0.5f;
                const float poison = -7.25e30f;
                std::vector<float> out(out_n, poison);
                float *din = nullptr, *dout = nullptr;
                cuda_ok(cudaMalloc(&din, (in_n + 1) * sizeof(float)));
                cuda_ok(cudaMalloc(&dout, (out_n + 1) * sizeof(float)));
                float *const pin = din + (shift == 0 || shift == 2), *const pout = dout + (shift == 1 || shift == 2);
                cuda_ok(cudaMemcpy(pin, in.data(), in_n * sizeof(float), cudaMemcpyHostToDevice));
                cuda_ok(cudaMemcpy(pout, out.data(), out_n * sizeof(float), cudaMemcpyHostToDevice));
                apairs_plan_t plan = nullptr;
                api_ok(apairs_plan_create_transpose_batched(&plan, ctx, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, entries,
                                                            si, so, batch));
                char buf[4096];
                api_ok(apairs_plan_describe(plan, buf, sizeof buf, nullptr));
                CHECK(std::strstr(buf, "in 16-byte pieces") != nullptr);
                const apairs_status_t st = apairs_plan_execute_transpose(plan, pin, pout);
                apairs_plan_destroy(plan);
                api_ok(st);
                std::vector<float> back(in_n);
                cuda_ok(cudaMemcpy(out.data(), pout, out_n * sizeof(float), cudaMemcpyDeviceToHost));
                cuda_ok(cudaMemcpy(back.data(), pin, in_n * sizeof(float), cudaMemcpyDeviceToHost));
                cudaFree(din);
                cudaFree(dout);
                CHECK(std::memcmp(back.data(), in.data(), in_n * sizeof(float)) == 0);
                int64_t bad = 0, touched = 0;
                for (int64_t i = 0; i < entries; ++i)
                    for (int64_t q = 0; q < so; ++q) {
                        const float got = out[size_t(i * so + q)];
                        if (q < batch)
                            bad += std::memcmp(&got, &in[size_t(q * si + i)], sizeof got) != 0;
                        else
                            touched += std::memcmp(&got, &poison, sizeof got) != 0;
                    }
                CHECK(bad == 0);
                CHECK(touched == 0);
            }
}

TEMPLATE_TEST_CASE("batched CUDA: the tile transpose moves device arrays of any strides, whole and partial tiles",
                   "[cuda][batched][transpose]", uint8_t, float, double) {
    using T = TestType;
    const uint64_t seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    const CudaContext cx;
    const int32_t dtype = sizeof(T) == 1 ? APAIRS_DTYPE_U8 : sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    const T poison = sizeof(T) == 1 ? T(0x5a) : T(-7.25e30f);
    auto value = [&]() {
        if constexpr (sizeof(T) == 1) {
            T x;
            do x = T(rng() & 0xff);
            while (x == poison);
            return x;
        } else {
            return T(int64_t(rng() % 2000001) - 1000000) + T(0.5);
        }
    };
    // Entries past the narrow kernel's 16: one partial tile (17), whole 64-wide tiles (64,
    // 256), whole and partial (100); batches of one partial tile, either side of 64, and more
    // tiles than the device holds at once (20011 x 256: grid-stride rounds).
    int variant = 0;
    for (int64_t entries : {17, 64, 100, 256})
        for (int64_t batch : {1, 63, 65, 1031, 20011})
            for (bool to_soa : {true, false}) {
                if (batch == 20011 && entries != 256) continue;
                ++variant;
                INFO("entries " << entries << ", batch " << batch << (to_soa ? ", to SoA" : ", to AoS"));
                // in: AoS (element stride >= entries) or SoA (batch stride >= batch); out the other.
                const int64_t si = (to_soa ? entries : batch) + variant % 3,
                              so = (to_soa ? batch : entries) + variant * 7 % 5;
                const int64_t in_rows = to_soa ? batch : entries, out_rows = to_soa ? entries : batch;
                const int64_t out_cols = to_soa ? batch : entries;
                std::vector<T> in(size_t(in_rows * si));
                for (T &x : in) x = value();
                std::vector<T> out(size_t(out_rows * so), poison);
                T *din = nullptr, *dout = nullptr;
                cuda_ok(cudaMalloc(&din, in.size() * sizeof(T)));
                cuda_ok(cudaMalloc(&dout, out.size() * sizeof(T)));
                cuda_ok(cudaMemcpy(din, in.data(), in.size() * sizeof(T), cudaMemcpyHostToDevice));
                cuda_ok(cudaMemcpy(dout, out.data(), out.size() * sizeof(T), cudaMemcpyHostToDevice));
                apairs_plan_t plan = nullptr;
                api_ok(apairs_plan_create_transpose_batched(&plan, cx.h, dtype,
                                                            to_soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS, entries,
                                                            si, so, batch));
                char buf[4096];
                api_ok(apairs_plan_describe(plan, buf, sizeof buf, nullptr));
                INFO(buf);
                CHECK(std::strstr(buf, sizeof(T) == 4 ? "64x64 tiles" : "32x32 tiles") != nullptr);
                const apairs_status_t st = apairs_plan_execute_transpose(plan, din, dout);
                apairs_plan_destroy(plan);
                api_ok(st);
                std::vector<T> back(in.size());
                cuda_ok(cudaMemcpy(out.data(), dout, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
                cuda_ok(cudaMemcpy(back.data(), din, in.size() * sizeof(T), cudaMemcpyDeviceToHost));
                cudaFree(din);
                cudaFree(dout);
                CHECK(std::memcmp(back.data(), in.data(), in.size() * sizeof(T)) == 0);
                int64_t bad = 0, touched = 0;
                for (int64_t r = 0; r < out_rows; ++r)
                    for (int64_t c = 0; c < so; ++c) {
                        const T got = out[size_t(r * so + c)];
                        if (c < out_cols)
                            bad += std::memcmp(&got, &in[size_t(c * si + r)], sizeof got) != 0;
                        else
                            touched += std::memcmp(&got, &poison, sizeof got) != 0;
                    }
                CHECK(bad == 0);
                CHECK(touched == 0);
            }
}

namespace {

// A device copy of `host` starting `shift` values past its allocation's start (on the
// 16-byte grid for shift 0), freed on scope exit.
template <class T>
struct DeviceCopy {
    T *base = nullptr, *p = nullptr;
    size_t n = 0;
    DeviceCopy(const std::vector<T> &host, int shift) : n(host.size()) {
        cuda_ok(cudaMalloc(&base, (n + size_t(std::max(shift, 1))) * sizeof(T)));
        p = base + shift;
        cuda_ok(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
    ~DeviceCopy() { cudaFree(base); }
    DeviceCopy(const DeviceCopy &) = delete;
    DeviceCopy &operator=(const DeviceCopy &) = delete;
    std::vector<T> back() const {
        std::vector<T> h(n);
        cuda_ok(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
        return h;
    }
};

// Executes `plan` through `exec` and destroys it; where `kernel` is given, the plan's
// description must name it.
template <class Exec>
void run_plan(apairs_plan_t plan, const char *kernel, Exec exec) {
    char buf[4096];
    api_ok(apairs_plan_describe(plan, buf, sizeof buf, nullptr));
    INFO(buf);
    if (kernel) CHECK(std::strstr(buf, kernel) != nullptr);
    const apairs_status_t st = exec(plan);
    apairs_plan_destroy(plan);
    api_ok(st);
}

// y_e = alpha op(A_e) x_e + beta y_e with op(A) m x n stored by rows (row-major A and op
// N, or column-major A and op T: the same memory). AoS: elements sa apart, x of stride n,
// y of stride m + 1 (one padding entry each). SoA: entries sa apart (sa >= batch), x's
// and y's entries batch + pad apart (y's padding: the entries past the batch). Device
// arrays shifted by `shift` values (bit 0: A, bit 1: x, bit 2: y) off the 16-byte grid,
// or (shift < 0) host arrays, staged. The plan's description must name `kernel` where
// given.
struct GemvShape {
    int64_t m, n, ld, sa, batch;  // op(A) m x n, its rows ld apart, elements (AoS) or entries (SoA) sa apart
    bool trans;
    double beta;
    bool soa = false;
    int64_t pad = 1;  // SoA: x's and y's entries batch + pad apart
};
template <class T>
void check_gemv(apairs_context_t ctx, std::mt19937_64 &rng, const GemvShape &c, int shift, const char *kernel,
                const std::function<void()> &before_execute = {}) {
    const int64_t m = c.m, n = c.n, ld = c.ld, sa = c.sa, batch = c.batch;
    const bool trans = c.trans, soa = c.soa;
    const double beta = c.beta;
    INFO((soa ? "SoA" : "AoS") << " m " << m << ", n " << n << ", ld " << ld << ", stride " << sa << ", batch "
                               << batch << (trans ? ", T" : ", N") << ", beta " << beta << ", shift " << shift
                               << (sizeof(T) == 8 ? ", f64" : ", f32"));
    const int64_t xl = n, yl = m, sx = soa ? batch + c.pad : xl, sy = soa ? batch + c.pad : yl + 1;
    // Offsets of A(e; i, l), x(e; l), y(e; i); a y entry is padding where its element or row is past the end.
    auto ia = [&](int64_t e, int64_t i, int64_t l) { return size_t(soa ? (i * ld + l) * sa + e : e * sa + i * ld + l); };
    auto ix = [&](int64_t e, int64_t l) { return size_t(soa ? l * sx + e : e * sx + l); };
    auto iy = [&](int64_t e, int64_t i) { return size_t(soa ? i * sy + e : e * sy + i); };
    const size_t na = size_t(soa ? m * ld * sa : batch * sa), nx = size_t(soa ? xl * sx : batch * sx),
                 ny = size_t(soa ? yl * sy : batch * sy);
    auto padding = [&](size_t k) { return soa ? int64_t(k % size_t(sy)) >= batch : int64_t(k % size_t(sy)) == yl; };
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> A(na), x(nx), y(ny);
    for (T &v : A) v = T(u(rng));
    for (T &v : x) v = T(u(rng));
    const T poison = T(-7.25e30);
    for (size_t i = 0; i < ny; ++i) y[i] = padding(i) ? poison : beta != 0 ? T(u(rng)) : T(NAN);
    const double alpha = -0.75;
    apairs_plan_t plan = nullptr;
    api_ok(apairs_plan_create_gemv_batched(
        &plan, ctx, ref::Type<T>::dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
        trans ? APAIRS_ORDER_COL_MAJOR : APAIRS_ORDER_ROW_MAJOR, trans ? APAIRS_OP_T : APAIRS_OP_N, trans ? n : m,
        trans ? m : n, alpha, beta, ld, sa, sx, sy, batch));
    if (before_execute) before_execute();
    std::vector<T> out = y;
    if (shift < 0) {
        run_plan(plan, kernel,
                 [&](apairs_plan_t p) { return apairs_plan_execute_gemv(p, A.data(), x.data(), out.data()); });
    } else {
        const DeviceCopy<T> dA(A, shift & 1), dx(x, shift >> 1 & 1), dy(y, shift >> 2 & 1);
        run_plan(plan, kernel, [&](apairs_plan_t p) { return apairs_plan_execute_gemv(p, dA.p, dx.p, dy.p); });
        out = dy.back();
    }
    // apairs.h (GEMV_ACCURACY), t = |alpha| sum_l |a_il x_l| + |beta y_i|: f32 |error| <=
    // u |y_i| + (k + 2) 2^-53 t; f64 (k + 2) u t (u = 2^-53), plus the reference's rounding.
    const long double d = std::ldexp(1.0L, -53), uT = sizeof(T) == 8 ? 0 : std::ldexp(1.0L, -24);
    int64_t bad = 0, touched = 0;
    for (int64_t e = 0; e < batch; ++e) {
        for (int64_t i = 0; i < yl; ++i) {
            long double s = 0, t = 0;
            for (int64_t l = 0; l < xl; ++l) {
                const long double p = static_cast<long double>(A[ia(e, i, l)]) * x[ix(e, l)];
                s += p;
                t += fabsl(p);
            }
            const long double y0 = beta != 0 ? static_cast<long double>(y[iy(e, i)]) : 0;
            const long double want = alpha * s + beta * y0;
            t = std::fabs(alpha) * t + std::fabs(beta) * fabsl(y0);
            const long double bound = uT * fabsl(want) + (xl + 2) * d * t + (xl + 16) * std::ldexp(1.0L, -62) * t;
            const T got = out[iy(e, i)];
            if (!(fabsl(got - want) <= bound) && ++bad <= 5)
                FAIL_CHECK("y[" << e << "][" << i << "] = " << +got << ", reference " << double(want));
        }
    }
    for (size_t k = 0; k < ny; ++k) touched += padding(k) && std::memcmp(&out[k], &poison, sizeof(T)) != 0;
    CHECK(bad == 0);
    CHECK(touched == 0);
}

// r_e = x_e . y_e, x of stride n, y of stride sy (padded), on device arrays shifted by
// `shift` values (bit 0: x, bit 1: y, bit 2: r) off the 16-byte grid.
template <class T>
void check_bulk_dot(apairs_context_t ctx, std::mt19937_64 &rng, int64_t n, int64_t sy, int64_t batch, int shift,
                    const char *kernel) {
    INFO("dot n " << n << ", stride y " << sy << ", batch " << batch << ", shift " << shift
                  << (sizeof(T) == 8 ? ", f64" : ", f32"));
    const size_t nx = size_t(batch * n), ny = size_t(batch * sy), nr = size_t(batch + 1);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> x(nx), y(ny), r(nr, T(-7.25e30));
    for (T &v : x) v = T(u(rng));
    for (T &v : y) v = T(u(rng));
    const DeviceCopy<T> dx(x, shift & 1), dy(y, shift >> 1 & 1), dr(r, shift >> 2 & 1);
    apairs_plan_t plan = nullptr;
    api_ok(apairs_plan_create_dot_batched(&plan, ctx, ref::Type<T>::dtype,
                                          APAIRS_LAYOUT_AOS, n, n, sy, batch));
    run_plan(plan, kernel,
             [&](apairs_plan_t p) { return apairs_plan_execute_dot(p, dx.p, dy.p, dr.p); });
    const std::vector<T> out = dr.back();
    // apairs.h (DOT_ACCURACY): f32 |error| <= u |r| + (n + 1) 2^-53 sum |x y|; f64 (n + 1)
    // u sum |x y|; plus the reference's rounding.
    const long double d = std::ldexp(1.0L, -53), uT = sizeof(T) == 8 ? 0 : std::ldexp(1.0L, -24);
    int64_t bad = 0;
    for (int64_t e = 0; e < batch; ++e) {
        long double s = 0, t = 0;
        for (int64_t l = 0; l < n; ++l) {
            const long double p = static_cast<long double>(x[size_t(e * n + l)]) * y[size_t(e * sy + l)];
            s += p;
            t += fabsl(p);
        }
        const long double bound = uT * fabsl(s) + (n + 1) * d * t + (n + 16) * std::ldexp(1.0L, -62) * t;
        if (!(fabsl(out[size_t(e)] - s) <= bound) && ++bad <= 5)
            FAIL_CHECK("r[" << e << "] = " << +out[size_t(e)] << ", reference " << double(s));
    }
    CHECK(bad == 0);
    CHECK(std::memcmp(&out[size_t(batch)], &r[size_t(batch)], sizeof(T)) == 0);  // one past: untouched
}

}  // namespace

// A seeded generator, the bits tests' distribution of entries, and two CUDA contexts: one as
// created, one (small) for host arrays staged in small chunks.
struct Setup {
    const uint64_t seed = std::random_device{}();
    std::mt19937_64 rng{seed};
    std::uniform_real_distribution<double> u{-1, 1};  // the bits tests' entries
    const CudaContext cx, small;
};

TEST_CASE("batched CUDA: gemv and dot planned for bulk copies, on arrays on the 16-byte grid and off it",
          "[cuda][batched][gemv][dot]") {
    Setup su;
    INFO("seed " << su.seed);
    std::mt19937_64 &rng = su.rng;
    apairs_context_t ctx = su.cx.h;
    // The bulk kernel where the device is sm_90 or later and the build has code of sm_90
    // or later ("... cuda sm_80 sm_90)" in the version string).
    int cc = 0, arch = 0;
    cuda_ok(cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, 0));
    for (const char *v = std::strstr(apairs_version_string(), "sm_"); v; v = std::strstr(v + 3, "sm_"))
        arch = std::max(arch, std::atoi(v + 3));
    const bool bulk = cc >= 9 && arch >= 90;
    const char *gemv = bulk ? "gemv_bulk<" : nullptr, *dot = bulk ? "dot_bulk<" : nullptr;
    // Stages of several elements with the last one partial (batches not a multiple of E),
    // A's stride padded by a chunk, 2 to 8 lanes a row (rows of 2 chunks: f64 3 x 4, f32
    // 4 x 8; f64 8 x 8: 4 lanes of a chunk; 64 x 64: one element a stage, 8 lanes x 4
    // chunks; f32 5 x 12: 3 chunks on 4 lanes, rows padded to 8 slots; f32 16 x 32 with
    // rows 36 apart: the copies move the rows' padding), op T of column-major, beta = 0 on
    // a y of NaN; each on the grid and with A, x and y off it (plain loads), and with A
    // alone off it. The batches give the plan's 8 stages an SM on devices of up to 162
    // SMs.
    for (int shift : {0, 7, 1, 6}) {
        check_gemv<double>(ctx, rng, {8, 8, 8, 64, 80021, false, 0.5}, shift, gemv);
        check_gemv<double>(ctx, rng, {16, 16, 16, 256 + 2, 30011, true, 0.0}, shift, gemv);
        check_gemv<double>(ctx, rng, {64, 64, 64, 64 * 64, 3001, false, 1.0}, shift, gemv);
        check_gemv<double>(ctx, rng, {3, 4, 4, 12, 400009, false, 0.0}, shift, gemv);
        check_gemv<float>(ctx, rng, {4, 8, 8, 32, 300007, false, 0.5}, shift, gemv);
        check_gemv<float>(ctx, rng, {32, 32, 32, 32 * 32 + 4, 20011, true, 0.0}, shift, gemv);
        check_gemv<float>(ctx, rng, {5, 12, 12, 60, 160009, false, -1.0}, shift, gemv);
        check_gemv<float>(ctx, rng, {16, 32, 36, 15 * 36 + 32, 40009, false, 0.5}, shift, gemv);
        check_bulk_dot<double>(ctx, rng, 32, 34, 200003, shift, dot);
        check_bulk_dot<float>(ctx, rng, 64, 68, 100003, shift, dot);
    }
    // Not the bulk kernel: rows of one chunk (f32 4 x 4), elements padded by more than an
    // eighth (f64 8 x 8 in strides of 80).
    check_gemv<float>(ctx, rng, {4, 4, 4, 16, 400009, false, 0.5}, 0, "gemv_flat<");
    check_gemv<double>(ctx, rng, {8, 8, 8, 80, 80021, false, 0.5}, 0, "gemv_flat<");
    // Host arrays staged in chunks of 1600 elements (3 MiB over three chunks of 648 bytes
    // an element, in runs of 32): 50 stages of 32 a chunk (the last chunk's 21 elements one
    // partial stage), so most blocks of the plan's grid get no stage of a chunk and some one.
    api_ok(apairs_context_set_option(su.small.h, APAIRS_OPTION_STAGING_BYTES, double(3 << 20)));
    check_gemv<double>(su.small.h, rng, {8, 8, 8, 64, 80021, false, 0.5}, -1, gemv);
}

// alpha = 0 (C = beta C, A and B never read): the scale kernel's flat 16-byte run (C's
// entries fill their span: AoS and SoA without padding) and its entry walk (padded), on
// device arrays 0 to 3 values off the 16-byte grid (the flat run's scalar head), 15
// entries an element (its scalar tail), batches of 1, 37 and 300007 (a thread walking
// many elements): every entry beta C bit for bit (beta = 0: +0, one entry NaN before), the
// padding and the values either side of C untouched; A and B hold NaN.
TEMPLATE_TEST_CASE("batched CUDA: gemm with alpha = 0 scales C on arrays on the 16-byte grid and off it",
                   "[cuda][batched][gemm]", float, double) {
    using T = TestType;
    Setup su;
    INFO("seed " << su.seed);
    const int32_t dtype = std::is_same<T, double>::value ? APAIRS_DTYPE_F64 : APAIRS_DTYPE_F32;
    const int64_t m = 3, n = 5, k = 4, guard = 8;
    const T poison = T(-7.25e30);
    for (bool soa : {false, true})
        for (int64_t pad : {0, 1})
            for (int64_t batch : {1, 37, 300007})
                for (double beta : {0.0, 0.5})
                    for (int shift : {0, 1, 2, 3}) {
                        INFO((soa ? "SoA" : "AoS") << " pad " << pad << " batch " << batch << " beta " << beta
                                                   << " shift " << shift);
                        const int64_t ld = n + pad, extent = (m - 1) * ld + n, stride = (soa ? batch : extent) + pad;
                        const int64_t span = soa ? (extent - 1) * stride + batch : (batch - 1) * stride + extent;
                        // C with `guard` poison values before and after it in its allocation.
                        std::vector<T> c(size_t(span + 2 * guard), poison);
                        std::vector<char> entry(size_t(span), 0);
                        for (int64_t e = 0; e < batch; ++e)
                            for (int64_t i = 0; i < m; ++i)
                                for (int64_t j = 0; j < n; ++j) {
                                    const int64_t x = soa ? (i * ld + j) * stride + e : e * stride + i * ld + j;
                                    entry[size_t(x)] = 1;
                                    c[size_t(guard + x)] = T(su.u(su.rng));
                                }
                        // beta = 0: a NaN entry, which 0 x C would keep.
                        if (beta == 0)
                            c[size_t(guard + (soa ? batch - 1 : (batch - 1) * stride))] =
                                std::numeric_limits<T>::quiet_NaN();
                        const DeviceCopy<T> dc(c, shift);
                        const T nan = std::numeric_limits<T>::quiet_NaN();
                        const DeviceCopy<T> da(std::vector<T>(size_t(m * k * batch), nan), 0),
                            db(std::vector<T>(size_t(k * n * batch), nan), 0);
                        apairs_plan_t plan = nullptr;
                        api_ok(apairs_plan_create_gemm_batched(
                            &plan, su.cx.h, dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS, APAIRS_ORDER_ROW_MAJOR,
                            APAIRS_OP_N, APAIRS_OP_N, m, n, k, 0.0, beta, k, soa ? batch : m * k, n,
                            soa ? batch : k * n, ld, stride, batch));
                        run_plan(plan, ",alpha=0", [&](apairs_plan_t p) {
                            return apairs_plan_execute_gemm(p, da.p, db.p, dc.p + guard);
                        });
                        const std::vector<T> got = dc.back();
                        int64_t bad = 0, touched = 0;
                        for (int64_t x = 0; x < span + 2 * guard; ++x) {
                            const bool in = x >= guard && x < guard + span && entry[size_t(x - guard)];
                            const T want = !in ? c[size_t(x)] : beta == 0 ? T(0) : T(beta) * c[size_t(x)];
                            (in ? bad : touched) += std::memcmp(&want, &got[size_t(x)], sizeof(T)) != 0;
                        }
                        CHECK(bad == 0);
                        CHECK(touched == 0);
                    }
}

// Double AoS gemm of the shapes gemm_vendor_shape names goes through cuBLAS's strided
// batched DGEMM (the device image has the toolkit's libcublas), the rest through the
// family's kernels, and the plan's description says which; float and SoA never. On device
// arrays with padded rows and elements, both orders and every pair of ops, beta = 0 on a
// C of NaN and beta = 0.5: every entry of C within apairs.h's bound of a long-double
// reference, and nothing else written (the padding, the gaps between elements, the
// guards either side).
TEST_CASE("batched CUDA: double AoS gemm of the larger shapes goes through cuBLAS, keeps the bound, writes only C",
          "[cuda][batched][gemm]") {
    Setup su;
    INFO("seed " << su.seed);
    struct Shape {
        int64_t m, n, k;
    };
    const double poison = -7.25e30, alpha = -0.75, u = std::ldexp(1.0, -53);
    auto describe = [](apairs_plan_t p) {
        char buf[4096];
        api_ok(apairs_plan_describe(p, buf, sizeof buf, nullptr));
        return std::string(buf);
    };
    for (const Shape s : {Shape{40, 24, 45}, Shape{38, 5, 3}, Shape{3, 38, 2}, Shape{20, 7, 41}, Shape{1, 128, 9},
                          Shape{33, 33, 33}, Shape{16, 16, 65}})
        for (bool row : {true, false})
            for (int ops = 0; ops < 4; ++ops) {
                const bool ta = ops & 1, tb = ops & 2, vendor = apairs::batched::gemm_vendor_shape(s.m, s.n, s.k);
                const double beta = ops == 1 || ops == 2 ? 0.5 : 0.0;
                const int64_t batch = 37, pad = 1 + ops % 2, guard = 8;
                INFO("m " << s.m << " n " << s.n << " k " << s.k << (row ? " row" : " col") << "-major op "
                          << (ta ? 'T' : 'N') << (tb ? 'T' : 'N') << " beta " << beta);
                // A stored operand of r x c: its ld, element stride, and entry (i, j) of element e.
                struct Op {
                    int64_t r, c, ld, stride;
                    bool row;
                    int64_t at(int64_t i, int64_t j, int64_t e) const { return e * stride + (row ? i * ld + j : i + j * ld); }
                    int64_t span(int64_t b) const { return (b - 1) * stride + (row ? (r - 1) * ld + c : (c - 1) * ld + r); }
                };
                auto make = [&](int64_t r, int64_t c) {
                    const int64_t ld = (row ? c : r) + pad;
                    return Op{r, c, ld, (row ? (r - 1) * ld + c : (c - 1) * ld + r) + pad + 1, row};
                };
                const Op A = ta ? make(s.k, s.m) : make(s.m, s.k), B = tb ? make(s.n, s.k) : make(s.k, s.n),
                         C = make(s.m, s.n);
                std::vector<double> a(size_t(A.span(batch)), poison), b(size_t(B.span(batch)), poison),
                    c(size_t(C.span(batch) + 2 * guard), poison);
                for (int64_t e = 0; e < batch; ++e) {
                    for (int64_t i = 0; i < A.r; ++i)
                        for (int64_t j = 0; j < A.c; ++j) a[size_t(A.at(i, j, e))] = su.u(su.rng);
                    for (int64_t i = 0; i < B.r; ++i)
                        for (int64_t j = 0; j < B.c; ++j) b[size_t(B.at(i, j, e))] = su.u(su.rng);
                    for (int64_t i = 0; i < s.m; ++i)
                        for (int64_t j = 0; j < s.n; ++j)
                            c[size_t(guard + C.at(i, j, e))] =
                                beta == 0 ? std::numeric_limits<double>::quiet_NaN() : su.u(su.rng);
                }
                const DeviceCopy<double> da(a, 0), db(b, 0), dc(c, 0);
                apairs_plan_t plan = nullptr;
                api_ok(apairs_plan_create_gemm_batched(&plan, su.cx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                       row ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR,
                                                       ta ? APAIRS_OP_T : APAIRS_OP_N, tb ? APAIRS_OP_T : APAIRS_OP_N,
                                                       s.m, s.n, s.k, alpha, beta, A.ld, A.stride, B.ld, B.stride,
                                                       C.ld, C.stride, batch));
                const std::string text = describe(plan);
                INFO(text);
                CHECK((text.find("cublasDgemmStridedBatched") != std::string::npos) == vendor);
                run_plan(plan, nullptr,
                         [&](apairs_plan_t p) { return apairs_plan_execute_gemm(p, da.p, db.p, dc.p + guard); });
                const std::vector<double> got = dc.back();
                std::vector<char> entry(c.size(), 0);
                int64_t bad = 0, touched = 0;
                for (int64_t e = 0; e < batch; ++e)
                    for (int64_t i = 0; i < s.m; ++i)
                        for (int64_t j = 0; j < s.n; ++j) {
                            long double sum = 0, scale = 0;
                            for (int64_t l = 0; l < s.k; ++l) {
                                const long double x = a[size_t(ta ? A.at(l, i, e) : A.at(i, l, e))],
                                                  y = b[size_t(tb ? B.at(j, l, e) : B.at(l, j, e))];
                                sum += x * y, scale += fabsl(x * y);
                            }
                            const size_t x = size_t(guard + C.at(i, j, e));
                            entry[x] = 1;
                            const long double c0 = beta == 0 ? 0 : c[x], want = alpha * sum + beta * c0;
                            const long double bound = (s.k + 2) * u * (std::fabs(alpha) * scale + beta * fabsl(c0));
                            bad += !(fabsl(got[x] - want) <= bound);
                        }
                for (size_t x = 0; x < c.size(); ++x)
                    if (!entry[x]) touched += std::memcmp(&c[x], &got[x], sizeof(double)) != 0;
                CHECK(bad == 0);
                CHECK(touched == 0);
            }
    // Float (its sums in double: the family's kernels) and SoA never take cuBLAS's path.
    for (int32_t dtype : {APAIRS_DTYPE_F32, APAIRS_DTYPE_F64}) {
        const bool soa = dtype == APAIRS_DTYPE_F64;
        const int64_t m = 64, batch = 5, stride = soa ? batch : m * m;
        apairs_plan_t plan = nullptr;
        api_ok(apairs_plan_create_gemm_batched(&plan, su.cx.h, dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
                                               APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, APAIRS_OP_N, m, m, m, 1.0, 0.0, m,
                                               stride, m, stride, m, stride, batch));
        const std::string text = describe(plan);
        apairs_plan_destroy(plan);
        INFO(text);
        CHECK(text.find("cuBLAS") == std::string::npos);
    }
}

// The dynamic shared-memory limit belongs to the kernel (in a context), not to the plan:
// lower at a launch than planning set (here lowered by hand; in use, by another plan, or
// a call in another CUDA context than planning's), the launch fails without running and
// is made again once the limit is raised (cuda/runtime.cuh, raise_shared_limit): the
// execute succeeds, with the plan's results, and the limit is back. (plan_gemv_cuda at
// target 0: the context's default, as the plan's.)
// [api-error]: compute-sanitizer reports the launch that fails on purpose.
TEST_CASE("batched CUDA: an execute raises its kernel's shared-memory limit again where it was lowered since "
          "planning",
          "[cuda][batched][gemv][api-error]") {
    Setup su;
    INFO("seed " << su.seed);
    // f64 64 x 64 (AoS, y padded by one entry): the bulk kernel on sm_90, whose stages ask
    // for more than 48 KB a block (elsewhere the flat kernel, which asks for less: nothing
    // to test).
    const GemvShape c{64, 64, 64, 64 * 64, 3001, false, 0.5};
    const apairs::batched::GemvProblem pb = apairs::batched::make_gemv_problem(
        APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS, APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, c.m, c.n, -0.75, c.beta, c.ld, c.sa,
        c.n, c.m + 1, c.batch);
    const apairs::batched::CudaConfig cfg = apairs::batched::plan_gemv_cuda(pb, 0, 0.0);
    INFO(cfg.why_model << ", " << cfg.dynamic_shared << " bytes of dynamic shared memory a block");
    if (cfg.dynamic_shared <= 48 * 1024) {
        WARN("the plan asks for no more than the default 48 KB on this device: nothing to lower");
        return;
    }
    auto lower = [&] { cuda_ok(cudaFuncSetAttribute(cfg.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0)); };
    auto raised = [&] {
        cudaFuncAttributes fa{};
        cuda_ok(cudaFuncGetAttributes(&fa, cfg.kernel));
        return fa.maxDynamicSharedSizeBytes >= cfg.dynamic_shared;
    };
    // The launch fails, the limit is raised, the launch is made again, and the failure
    // leaves no error behind.
    check_gemv<double>(su.cx.h, su.rng, c, 0, "gemv_bulk<", lower);
    CHECK(raised());
    CHECK(cudaPeekAtLastError() == cudaSuccess);
}

TEST_CASE("batched CUDA: SoA gemv planned for staging by cp.async, on arrays on the 16-byte grid and off it",
          "[cuda][batched][gemv]") {
    Setup su;
    INFO("seed " << su.seed);
    std::mt19937_64 &rng = su.rng;
    apairs_context_t ctx = su.cx.h;
    const char *staged = "gemv_soa_staged<";
    // f32 in groups of 64 elements (two a lane), f64 of 32, with the last group partial
    // (f32 100003: 35 left, 90016: one whole half, 300007: 39, 12011: 43, 40003: 3, 250:
    // 58; f64 160031: 31, 200003: 3, 250000: 16) or whole (f64 12032, 192); rows of whole
    // tiles (f32 tiles of 4: 16, 4, 64, 20 rows; f64 tiles of 8: 8, 56 rows) and of a
    // partial one (f32 13 rows; f64 5 rows in a tile of 8, 3 in a tile of 4); tall
    // elements of few groups (4096 rows: more items than elements, the grid sized by the
    // items); 1 to 64 columns; op T; beta = 0 on a y of NaN; x's and y's entries padded
    // past the batch. Tile counts of 5 and 7 make a warp's item cursor wrap (the grid's
    // warps not a multiple of them). Each on the grid (shift 0: the copies) and off it (A,
    // x and y, A alone, x alone: plain loads), and with y alone off it (the copies; y is
    // stored, never copied). The batches make the plan's items fill half the device (512
    // threads an SM) on devices of up to 162 SMs.
    for (int shift : {0, 7, 1, 2, 4}) {
        check_gemv<float>(ctx, rng, {16, 16, 16, 100004, 100003, false, 0.5, true, 1}, shift, staged);
        check_gemv<float>(ctx, rng, {13, 10, 10, 90016, 90016, true, 0.0, true, 4}, shift, staged);
        check_gemv<float>(ctx, rng, {4, 4, 4, 300008, 300007, false, -1.0, true, 5}, shift, staged);
        check_gemv<float>(ctx, rng, {64, 64, 64, 12012, 12011, false, 0.5, true, 1}, shift, staged);
        check_gemv<float>(ctx, rng, {20, 1, 1, 40004, 40003, false, 0.5, true, 1}, shift, staged);
        check_gemv<float>(ctx, rng, {4096, 2, 2, 256, 250, false, 1.0, true, 6}, shift, staged);
        check_gemv<double>(ctx, rng, {8, 8, 8, 160032, 160031, false, 0.5, true, 1}, shift, staged);
        check_gemv<double>(ctx, rng, {5, 7, 9, 200004, 200003, true, 1.0, true, 3}, shift, staged);
        check_gemv<double>(ctx, rng, {3, 16, 16, 250000, 250000, false, 0.0, true, 0}, shift, staged);
        check_gemv<double>(ctx, rng, {56, 5, 5, 12032, 12032, false, 0.5, true, 2}, shift, staged);
        check_gemv<double>(ctx, rng, {4096, 1, 1, 192, 192, true, -0.5, true, 2}, shift, staged);
    }
    // Entries an odd count apart (off the grid at every entry but the first): plain loads.
    check_gemv<float>(ctx, rng, {16, 16, 16, 100003, 100003, false, 0.5, true, 2}, 0, staged);
    // Host arrays staged in chunks (3 MiB: chunks of a few thousand elements, whose own
    // strides need not be on the grid).
    api_ok(apairs_context_set_option(su.small.h, APAIRS_OPTION_STAGING_BYTES, double(3 << 20)));
    check_gemv<float>(su.small.h, rng, {16, 16, 16, 100004, 100003, false, 0.5, true, 1}, -1, nullptr);
}

// SoA gemv of few elements, where even a block of 32 warps for each 32 elements leaves
// most of the device idle: the split kernel with several blocks sharing each 32 elements'
// tiles of rows (block rb of RB taking tiles rb WT .. rb WT + WT - 1 of every RB WT) and
// rows of 4, 2 or 1 a thread (the planner's picks for 132 SMs: 128 x 129, 97 elements: 256 warps a group in 8
// blocks, 2 column ranges, rows of 1; 300 x 70: 16 blocks, one range; 64 x 1000, 33
// elements (a group of one): 16 blocks of 8 ranges; 4096 x 2, op T: 64 blocks; 128 x 128,
// 2048 elements: 2 blocks, rows of 4; 130 x 128, 2048 elements: 2 blocks, rows of 8 with
// a partial last tile). Partial groups and tiles, beta = 0 on a y of NaN, device arrays on
// the grid and off it, and host arrays staged in one piece and in chunks of fewer elements
// than planned (3 MiB). The plans of 2048 elements take several blocks where the device
// has 128 SMs or more (its fill: 1024 threads an SM); elsewhere their kernel is not asserted.
TEST_CASE("batched CUDA: SoA gemv of few elements shares each 32 elements' rows among blocks",
          "[cuda][batched][gemv]") {
    Setup su;
    INFO("seed " << su.seed);
    std::mt19937_64 &rng = su.rng;
    apairs_context_t ctx = su.cx.h;
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0));
    const char *blocks = "blocks sharing their rows", *many = prop.multiProcessorCount >= 128 ? blocks : nullptr;
    for (int shift : {0, 7}) {
        check_gemv<double>(ctx, rng, {128, 129, 130, 100, 97, false, 0.5, true, 3}, shift, blocks);
        check_gemv<float>(ctx, rng, {300, 70, 70, 97, 97, false, 0.0, true, 1}, shift, blocks);
        check_gemv<float>(ctx, rng, {64, 1000, 1000, 40, 33, false, -1.0, true, 2}, shift, blocks);
        check_gemv<double>(ctx, rng, {4096, 2, 3, 1, 1, true, 0.5, true, 1}, shift, blocks);
        check_gemv<double>(ctx, rng, {128, 128, 128, 2048, 2048, false, 0.0, true, 1}, shift, many);
        check_gemv<double>(ctx, rng, {130, 128, 128, 2050, 2048, false, 0.5, true, 2}, shift, many);
    }
    check_gemv<float>(ctx, rng, {300, 70, 70, 97, 97, false, 0.5, true, 1}, -1, blocks);
    api_ok(apairs_context_set_option(su.small.h, APAIRS_OPTION_STAGING_BYTES, double(3 << 20)));
    check_gemv<double>(su.small.h, rng, {130, 128, 128, 2048, 2048, false, 0.5, true, 1}, -1, many);
}

// potrf's f64 warp kernel of n = 25..32 on AoS device arrays whose base, ld and stride
// lie on the 16-byte grid (staged and copied out in 16-byte pieces) and on the same
// arrays one value off the grid (an entry at a time): the same bits, the same info
// (element 1 not positive definite at column n / 2: its copy-out stops inside a piece at
// odd n / 2), and the other triangle (NaN) and the padding between elements untouched.
// Row-major lower and column-major upper (the same memory).
TEST_CASE("batched CUDA: potrf's 16-byte staging gives the bits of the entry-by-entry staging",
          "[cuda][batched][potrf]") {
    Setup su;
    INFO("seed " << su.seed);
    std::mt19937_64 &rng = su.rng;
    std::uniform_real_distribution<double> u(-1, 1);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t n : {25, 26, 30, 31, 32})
        for (const bool row_lower : {true, false}) {
            const int64_t ld = (n + 1) / 2 * 2, stride = ((n - 1) * ld + n + 1) / 2 * 2 + 2, batch = 2003;
            INFO("n " << n << (row_lower ? ", row-major lower" : ", column-major upper"));
            std::vector<double> a(size_t(batch * stride), -3.5);  // padding: -3.5
            std::vector<double> m(size_t(n * n));
            for (int64_t e = 0; e < batch; ++e) {
                for (double &x : m) x = u(rng);
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        double s = i == j ? 1.0 : 0.0;
                        for (int64_t q = 0; q < n; ++q) s += m[size_t(i * n + q)] * m[size_t(j * n + q)] / double(n);
                        // Memory position (i, j) of row-major: logical (i, j) of row-major lower,
                        // (j, i) of column-major upper: the lower triangle both ways.
                        a[size_t(e * stride + i * ld + j)] = j <= i ? s : nan;
                    }
            }
            a[size_t(1 * stride + (n / 2) * ld + n / 2)] = -1.0;
            std::vector<double> out[2];
            std::vector<int32_t> info[2];
            for (int shift : {0, 1}) {
                DeviceCopy<double> d(a, shift);
                DeviceCopy<int32_t> di(std::vector<int32_t>(size_t(batch), -7), 0);
                apairs_plan_t plan = nullptr;
                api_ok(apairs_plan_create_potrf_batched(&plan, su.cx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                        row_lower ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR,
                                                        row_lower ? APAIRS_UPLO_LOWER : APAIRS_UPLO_UPPER, n, ld,
                                                        stride, batch));
                run_plan(plan, "potrf_warp<", [&](apairs_plan_t p) { return apairs_plan_execute_potrf(p, d.p, di.p); });
                cuda_ok(cudaDeviceSynchronize());
                out[shift] = d.back();
                info[shift] = di.back();
            }
            CHECK(std::memcmp(out[0].data(), out[1].data(), out[0].size() * sizeof(double)) == 0);
            CHECK(info[0] == info[1]);
            int64_t bad_info = 0, touched = 0, unfactored = 0;
            for (int64_t e = 0; e < batch; ++e) {
                bad_info += info[0][size_t(e)] != (e == 1 ? int32_t(n / 2 + 1) : 0);
                for (int64_t x = 0; x < stride; ++x) {
                    const int64_t i = x / ld, j = x % ld;
                    const double got = out[0][size_t(e * stride + x)], was = a[size_t(e * stride + x)];
                    const bool entry = i < n && j <= i;
                    if (!entry || (e == 1 && j >= n / 2))  // not the triangle, or past the failure
                        touched += std::memcmp(&got, &was, sizeof got) != 0;
                    else
                        unfactored += std::memcmp(&got, &was, sizeof got) == 0 && i != 0;
                }
            }
            CHECK(bad_info == 0);
            CHECK(touched == 0);
            CHECK(unfactored < batch);  // (a factor entry may equal its input by chance, rarely)
        }
}

// The potrf warp kernels' column loop (n = 9..32: two rows a lane in double, four in
// float, one at n = 17..24), emulated on the host: right-looking, column j's pivot d, its
// square root s and correctly rounded reciprocal 1 / s, the column scaled by it, every
// entry k > j of every row below updated by fma(-l_ij, l_kj, a_ik) in order of j, and
// info = j + 1 at the first pivot not > 0. The device must give these bits for every
// factored entry, AoS (row- and column-major) and SoA, and the same info, and leave the
// columns from a failure on (elements 5 and 7: columns n / 2 and 0) as they were.
template <class T>
int emulate_warp_potrf(std::vector<T> &a, int64_t n) {  // a: n x n row-major, lower used
    int fail = 0;
    for (int64_t j = 0; j < n; ++j) {
        const T d = a[size_t(j * n + j)];
        if (fail == 0 && !(d > T(0))) fail = int(j + 1);
        const T s = std::sqrt(d), inv = T(1) / s;
        for (int64_t i = j + 1; i < n; ++i) a[size_t(i * n + j)] = a[size_t(i * n + j)] * inv;
        a[size_t(j * n + j)] = s;
        for (int64_t i = j + 1; i < n; ++i)
            for (int64_t k = j + 1; k <= i; ++k)
                a[size_t(i * n + k)] = std::fma(-a[size_t(i * n + j)], a[size_t(k * n + j)], a[size_t(i * n + k)]);
    }
    return fail;
}

TEMPLATE_TEST_CASE("batched CUDA: potrf's warp kernels give the bits of their column loop emulated on the host",
                   "[cuda][batched][potrf]", float, double) {
    using T = TestType;
    Setup su;
    INFO("seed " << su.seed);
    auto &u = su.u;
    const int32_t dtype = ref::Type<T>::dtype;
    // cm: column-major with ld = n + 2 (the kernels' swapped fast grid, rows padded).
    for (int64_t n : {9, 12, 16, 17, 24, 25, 31, 32})
        for (const auto &[soa, cm] : {std::pair{false, false}, {true, false}, {false, true}}) {
            INFO("n " << n << (soa ? " SoA" : " AoS") << (cm ? " column-major, ld n + 2" : ""));
            const int64_t batch = 1003, ld = cm ? n + 2 : n, stride = soa ? batch + 5 : n * ld + 3;
            auto at = [&](int64_t e, int64_t i, int64_t j) {
                const int64_t idx = cm ? j * ld + i : i * ld + j;
                return size_t(soa ? idx * stride + e : e * stride + idx);
            };
            std::vector<T> a(size_t(soa ? n * ld * stride : batch * stride), T(-3.5));  // padding: -3.5
            std::vector<std::vector<T>> want(size_t(batch), std::vector<T>(size_t(n * n)));
            std::vector<int32_t> want_info(static_cast<size_t>(batch));
            std::vector<double> m(size_t(n * n));
            for (int64_t e = 0; e < batch; ++e) {
                for (double &x : m) x = u(su.rng);
                std::vector<T> &w = want[size_t(e)];
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j <= i; ++j) {
                        double s = i == j ? 1.0 : 0.0;
                        for (int64_t q = 0; q < n; ++q) s += m[size_t(i * n + q)] * m[size_t(j * n + q)] / double(n);
                        w[size_t(i * n + j)] = T(s);
                    }
                if (e == 5) w[size_t((n / 2) * n + n / 2)] = T(-1);
                if (e == 7) w[0] = T(0);
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j <= i; ++j) a[at(e, i, j)] = w[size_t(i * n + j)];
                want_info[size_t(e)] = emulate_warp_potrf(w, n);
            }
            CHECK(want_info[5] == int32_t(n / 2 + 1));
            CHECK(want_info[7] == 1);
            DeviceCopy<T> d(a, 0);
            DeviceCopy<int32_t> di(std::vector<int32_t>(size_t(batch), -7), 0);
            apairs_plan_t plan = nullptr;
            api_ok(apairs_plan_create_potrf_batched(&plan, su.cx.h, dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
                                                    cm ? APAIRS_ORDER_COL_MAJOR : APAIRS_ORDER_ROW_MAJOR,
                                                    APAIRS_UPLO_LOWER, n, ld, stride, batch));
            run_plan(plan, "potrf_warp<", [&](apairs_plan_t p) { return apairs_plan_execute_potrf(p, d.p, di.p); });
            cuda_ok(cudaDeviceSynchronize());
            const std::vector<T> got = d.back();
            const std::vector<int32_t> info = di.back();
            CHECK(info == want_info);
            int64_t differ = 0, touched = 0;
            for (int64_t e = 0; e < batch; ++e) {
                const int f = want_info[size_t(e)];
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j <= i; ++j) {
                        const T g = got[at(e, i, j)];
                        const T w = f > 0 && j >= f - 1 ? a[at(e, i, j)] : want[size_t(e)][size_t(i * n + j)];
                        differ += std::memcmp(&g, &w, sizeof g) != 0;
                    }
            }
            // Everything outside the triangles (the other triangle, padding) untouched.
            std::vector<char> tri(a.size(), 0);
            for (int64_t e = 0; e < batch; ++e)
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j <= i; ++j) tri[at(e, i, j)] = 1;
            for (size_t x = 0; x < a.size(); ++x) touched += !tri[x] && std::memcmp(&got[x], &a[x], sizeof(T)) != 0;
            CHECK(differ == 0);
            CHECK(touched == 0);
        }
}

// f(0) .. f(count - 1) over the host's cores (the emulations of the bits tests: f32 getrf
// n = 128 takes some 2 million fmas an element).
template <class F>
void parallel_for(int64_t count, F f) {
    const int64_t nt = std::max<int64_t>(1, std::min<int64_t>(count, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int64_t k = 0; k < nt; ++k)
        pool.emplace_back([&, k] {
            for (int64_t i = k; i < count; i += nt) f(i);
        });
    for (std::thread &t : pool) t.join();
}

// getrf's column loop, emulated on the host: right-looking, column j's pivot the first
// row of largest |a_ij| (a NaN above every number), whole rows swapped, the column below
// the pivot divided by it (by 1 where it is 0), every entry right of it in every row below
// updated by fma(-l_ij, u_jk, a_ik) in order of j; info = j + 1 at the first pivot that
// is 0 or NaN. Every CUDA kernel of getrf (thread, warp-group, line, rows and panel) must
// give these bits, pivots and info (with f64 multipliers off CUDA's division fast path:
// tiny, huge and subnormal entries).
template <class T>
int32_t emulate_getrf(std::vector<T> &a, int64_t n, int32_t *ipiv) {  // a: n x n row-major
    auto key = [](T x) {
        using U = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
        U b;
        std::memcpy(&b, &x, sizeof b);
        return b & (~U(0) >> 1);
    };
    int32_t info = 0;
    for (int64_t j = 0; j < n; ++j) {
        int64_t p = j;
        for (int64_t i = j + 1; i < n; ++i)
            if (key(a[size_t(i * n + j)]) > key(a[size_t(p * n + j)])) p = i;
        ipiv[j] = int32_t(p + 1);
        if (p != j)
            for (int64_t k = 0; k < n; ++k) std::swap(a[size_t(j * n + k)], a[size_t(p * n + k)]);
        const T d = a[size_t(j * n + j)];
        if ((d == T(0) || d != d) && info == 0) info = int32_t(j + 1);
        const T div = d == T(0) ? T(1) : d;
        for (int64_t i = j + 1; i < n; ++i) {
            const T l = a[size_t(i * n + j)] / div;
            a[size_t(i * n + j)] = l;
            for (int64_t k = j + 1; k < n; ++k)
                a[size_t(i * n + k)] = std::fma(-l, a[size_t(j * n + k)], a[size_t(i * n + k)]);
        }
    }
    return info;
}

TEMPLATE_TEST_CASE("batched CUDA: getrf's kernels give the bits of its column loop emulated on the host",
                   "[cuda][batched][getrf]", float, double) {
    using T = TestType;
    Setup su;
    INFO("seed " << su.seed);
    auto &u = su.u;
    const int32_t dtype = ref::Type<T>::dtype;
    int variant = 0;
    // The kernel each n takes where it does not depend on the device's shared memory.
    const int64_t panel_min = sizeof(T) == 8 ? 64 : 65;
    auto kernel = [&](int64_t n) -> const char * {
        return n <= 8 ? "getrf_thread<" : n <= 32 ? "getrf_warp<" : n >= panel_min ? "getrf_panel<" : nullptr;
    };
    // Every layout and order; batches past one resident grid for the panel kernel in f32
    // too (three to twelve teams an SM), f64 n = 128 (one an SM) at 271.
    for (int64_t n : {1, 3, 8, 9, 16, 17, 24, 25, 32, 33, 47, 64, 65, 96, 97, 100, 127, 128})
        for (int lay = 0; lay < 4; ++lay, ++variant) {
            const bool soa = lay & 1, row_major = lay & 2;
            INFO("n " << n << (soa ? " SoA" : " AoS") << (row_major ? " row-major" : " column-major"));
            const int64_t batch = n > 32 ? (sizeof(T) == 4 ? 1601 : 271) : 1003, ld = n + variant % 3,
                          stride = soa ? batch + variant % 5 : n * ld + variant % 7;
            auto at = [&](int64_t e, int64_t i, int64_t j) {
                const int64_t idx = row_major ? i * ld + j : i + j * ld;
                return size_t(soa ? idx * stride + e : e * stride + idx);
            };
            std::vector<T> a(size_t(soa ? n * ld * stride : batch * stride), T(-3.5));  // padding: -3.5
            std::vector<T> want(size_t(batch * n * n));
            std::vector<int32_t> want_piv(size_t(batch * n)), want_info(static_cast<size_t>(batch));
            for (int64_t e = 0; e < batch; ++e) {
                T *w = want.data() + e * n * n;
                for (int64_t x = 0; x < n * n; ++x) w[x] = T(u(su.rng));
                if (n > 2 && e == 1)  // a copy of row 0 further down: a tie in column 0, then a zero row
                    for (int64_t k = 0; k < n; ++k) w[(n - 1) * n + k] = w[k];
                if (e == 2) w[(n / 2) * n + n / 2] = std::numeric_limits<T>::quiet_NaN();
                if (e == 3)
                    for (int64_t i = 0; i < n; ++i) w[i * n + n / 2] = T(0);  // a zero column: info n / 2 + 1
                // Magnitudes at the ends of the range (f64: CUDA's division off its fast path, by
                // a tiny dividend, a tiny quotient or a huge divisor): e = 4 every other row
                // tiny, e = 5 one row huge, e = 6 a subnormal in every row.
                const T tiny = sizeof(T) == 8 ? T(1e-300) : T(1e-30), huge = sizeof(T) == 8 ? T(1e300) : T(1e30);
                if (e == 4)
                    for (int64_t i = 0; i < n; i += 2)
                        for (int64_t k = 0; k < n; ++k) w[i * n + k] *= tiny;
                if (e == 5)
                    for (int64_t k = 0; k < n; ++k) w[(n / 3) * n + k] *= huge;
                if (e == 6)
                    for (int64_t i = 0; i < n; ++i)
                        w[i * n + (i * 7 + 3) % n] = 3 * std::numeric_limits<T>::denorm_min();
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j < n; ++j) a[at(e, i, j)] = w[i * n + j];
            }
            parallel_for(batch, [&](int64_t e) {
                T *w = want.data() + e * n * n;
                std::vector<T> m(w, w + n * n);
                want_info[size_t(e)] = emulate_getrf(m, n, want_piv.data() + e * n);
                std::copy(m.begin(), m.end(), w);
            });
            if (n > 2) CHECK(want_info[1] > 0);
            CHECK(want_info[3] == (batch > 3 ? int32_t(n / 2 + 1) : want_info[3]));
            DeviceCopy<T> d(a, 0);
            // The pivots and info with 5 values of padding after them (-7).
            DeviceCopy<int32_t> dp(std::vector<int32_t>(size_t(batch * n + 5), -7), 0);
            DeviceCopy<int32_t> di(std::vector<int32_t>(size_t(batch + 5), -7), 0);
            apairs_plan_t plan = nullptr;
            api_ok(apairs_plan_create_getrf_batched(&plan, su.cx.h, dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
                                                    row_major ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR, n,
                                                    ld, stride, batch));
            run_plan(plan, kernel(n),
                     [&](apairs_plan_t p) { return apairs_plan_execute_getrf(p, d.p, dp.p, di.p); });
            cuda_ok(cudaDeviceSynchronize());
            const std::vector<T> got = d.back();
            std::vector<int32_t> piv = dp.back(), info = di.back();
            CHECK(std::vector<int32_t>(piv.end() - 5, piv.end()) == std::vector<int32_t>(5, -7));
            CHECK(std::vector<int32_t>(info.end() - 5, info.end()) == std::vector<int32_t>(5, -7));
            info.resize(size_t(batch));
            CHECK(info == want_info);
            int64_t differ = 0, bad_piv = 0, touched = 0;
            std::vector<char> entry(a.size(), 0);
            for (int64_t e = 0; e < batch; ++e)
                for (int64_t i = 0; i < n; ++i) {
                    bad_piv += piv[size_t(soa ? i * batch + e : e * n + i)] != want_piv[size_t(e * n + i)];
                    for (int64_t j = 0; j < n; ++j) {
                        const T g = got[at(e, i, j)], w = want[size_t((e * n + i) * n + j)];
                        // (NaNs compare as NaNs: the device's carry no payload or sign of the input's)
                        differ += !(std::isnan(g) && std::isnan(w)) && std::memcmp(&g, &w, sizeof g) != 0;
                        entry[at(e, i, j)] = 1;
                    }
                }
            for (size_t x = 0; x < a.size(); ++x) touched += !entry[x] && std::memcmp(&got[x], &a[x], sizeof(T)) != 0;
            CHECK(differ == 0);
            CHECK(bad_piv == 0);
            CHECK(touched == 0);
        }
}

// The operands of the solve bits tests (getrs, potrs): A of n x n and B of n x nrhs, both
// padded with -3.5, in one layout (SoA or AoS, row- or column-major), their leading
// dimensions and strides varied by `variant`; nrhs 1, 2, 5 or 8 by `variant`.
struct SolveShape {
    int64_t n, nrhs, batch, ld, stride, ldb, strideb;
    bool soa, row_major;
    SolveShape(int64_t n_, int64_t batch_, bool soa_, bool row_major_, int variant)
        : n(n_), nrhs(std::array<int64_t, 4>{1, 2, 5, 8}[size_t((variant + variant / 8) % 4)]), batch(batch_),
          soa(soa_), row_major(row_major_) {
        ld = n + variant % 3;
        stride = soa ? batch + variant % 5 : n * ld + variant % 7;
        ldb = (row_major ? nrhs : n) + variant % 2;
        strideb = soa ? batch + variant % 3 : (row_major ? n * ldb : nrhs * ldb) + (variant % 2 ? 0 : 3);
    }
    size_t at(int64_t e, int64_t i, int64_t j, int64_t l, int64_t s) const {
        const int64_t idx = row_major ? i * l + j : i + j * l;
        return size_t(soa ? idx * s + e : e * s + idx);
    }
    size_t a_at(int64_t e, int64_t i, int64_t j) const { return at(e, i, j, ld, stride); }
    size_t b_at(int64_t e, int64_t i, int64_t r) const { return at(e, i, r, ldb, strideb); }
    size_t a_size() const { return size_t(soa ? n * ld * stride : batch * stride); }
    size_t b_size() const { return size_t(soa ? (row_major ? n * ldb : nrhs * ldb) * strideb : batch * strideb); }
    const char *describe_layout() const { return soa ? (row_major ? " SoA row-major" : " SoA column-major")
                                                     : (row_major ? " AoS row-major" : " AoS column-major"); }
};

// Element e's right-hand sides: fresh entries in [-1, 1) into b, each column solved on the
// host by solve(x) into want[(e nrhs + r) n ..].
template <class T, class Solve>
void fill_rhs(const SolveShape &c, int64_t e, Setup &su, std::vector<T> &b, std::vector<T> &want, Solve solve) {
    std::vector<T> x(static_cast<size_t>(c.n));
    for (int64_t r = 0; r < c.nrhs; ++r) {
        for (int64_t i = 0; i < c.n; ++i) b[c.b_at(e, i, r)] = x[size_t(i)] = T(su.u(su.rng));
        solve(x);
        for (int64_t i = 0; i < c.n; ++i) want[size_t((e * c.nrhs + r) * c.n + i)] = x[size_t(i)];
    }
}

// B after the solve: column r of element e bit for bit want[(e nrhs + r) n ..], every
// other entry (padding) as it was.
template <class T>
void check_solved(const SolveShape &c, const std::vector<T> &b, const std::vector<T> &got, const std::vector<T> &want) {
    int64_t differ = 0, touched = 0;
    std::vector<char> entry(b.size(), 0);
    for (int64_t e = 0; e < c.batch; ++e)
        for (int64_t r = 0; r < c.nrhs; ++r)
            for (int64_t i = 0; i < c.n; ++i) {
                const T g = got[c.b_at(e, i, r)], w = want[size_t((e * c.nrhs + r) * c.n + i)];
                differ += std::memcmp(&g, &w, sizeof g) != 0;
                entry[c.b_at(e, i, r)] = 1;
            }
    for (size_t q = 0; q < b.size(); ++q) touched += !entry[q] && std::memcmp(&got[q], &b[q], sizeof(T)) != 0;
    CHECK(differ == 0);
    CHECK(touched == 0);
}

// getrs's column solves, emulated on the host for one column x of B: the pivots folded
// into one permutation (x_r = b_perm(r), or transposed x_perm(r) = z_r at the end); both
// triangular solves by columns, x_j first multiplied by the reciprocal of its diagonal
// entry (but L's unit one), then every row the column reaches updated by x_r = fma(-m_rj,
// x_j, x_r) in order of j. Every CUDA getrs kernel for n > 8 with at most 8 right-hand
// sides (rows and stream) must give these bits. lu: n x n row-major.
template <class T>
void emulate_getrs(const std::vector<T> &lu, int64_t n, const int32_t *ipiv, bool trans, std::vector<T> &x) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) perm[size_t(r)] = r;
    for (int64_t i = 0; i < n; ++i) std::swap(perm[size_t(i)], perm[size_t(ipiv[i] - 1)]);
    auto m = [&](int64_t r, int64_t j) { return trans ? lu[size_t(j * n + r)] : lu[size_t(r * n + j)]; };
    std::vector<T> z(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) z[size_t(r)] = trans ? x[size_t(r)] : x[size_t(perm[size_t(r)])];
    for (int64_t j = 0; j < n; ++j) {  // lower: L (unit) or U^T
        if (trans) z[size_t(j)] *= T(1) / m(j, j);
        for (int64_t r = j + 1; r < n; ++r) z[size_t(r)] = std::fma(-m(r, j), z[size_t(j)], z[size_t(r)]);
    }
    for (int64_t j = n - 1; j >= 0; --j) {  // upper: U or L^T (unit)
        if (!trans) z[size_t(j)] *= T(1) / m(j, j);
        for (int64_t r = 0; r < j; ++r) z[size_t(r)] = std::fma(-m(r, j), z[size_t(j)], z[size_t(r)]);
    }
    for (int64_t r = 0; r < n; ++r) x[size_t(trans ? perm[size_t(r)] : r)] = z[size_t(r)];
}

TEMPLATE_TEST_CASE("batched CUDA: getrs's kernels give the bits of its column solves emulated on the host",
                   "[cuda][batched][getrs]", float, double) {
    using T = TestType;
    Setup su;
    INFO("seed " << su.seed);
    auto &u = su.u;
    const int32_t dtype = ref::Type<T>::dtype;
    int variant = 0;
    // The rows kernel for n <= 32 and f32 SoA n <= 59, the stream kernel above.
    auto kernel = [&](int64_t n, bool soa) -> const char * {
        return n <= 32 || (sizeof(T) == 4 && soa && n <= 59) ? "getrs_rows<" : "getrs_stream<";
    };
    // Every layout, order and op at sizes about each multiple of 32 (the rows a lane and
    // the stream kernel's tiles; 47 and 100: a partial last tile; 59 and 60: f32 SoA's
    // switch from the rows kernel to the stream kernel); nrhs 1, 2, 5 (the
    // stream kernel's two chunks of at most 4) and 8 in turn, each size starting one
    // further, so that every layout meets each; SoA blocks with a partial last one; and
    // (n = 33, op N) batches past one resident grid, AoS and SoA (f32 SoA: the rows
    // kernel's block staging; f64: the stream kernel's block copies).
    for (int64_t n : {9, 16, 31, 32, 33, 47, 59, 60, 64, 65, 96, 97, 100, 127, 128})
        for (int lay = 0; lay < 8; ++lay, ++variant) {
            const bool soa = lay & 1, row_major = lay & 2, trans = lay & 4;
            const SolveShape c(n, n == 33 && !trans ? 20011 : n > 32 ? 203 : 1003, soa, row_major, variant);
            const int64_t nrhs = c.nrhs, batch = c.batch;
            INFO("n " << n << " nrhs " << nrhs << c.describe_layout() << (trans ? " op T" : " op N"));
            // Factors: off-diagonal entries in [-2/n, 2/n), diagonal ones of magnitude [1, 2);
            // pivots anywhere in [i, n); B in [-1, 1).
            std::vector<T> a(c.a_size(), T(-3.5)), b(c.b_size(), T(-3.5));
            std::vector<int32_t> piv(size_t(batch * n), -7);
            std::vector<T> want(size_t(batch * n * nrhs));
            std::vector<T> lu(size_t(n * n));
            for (int64_t e = 0; e < batch; ++e) {
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j < n; ++j) {
                        const double v = u(su.rng);
                        lu[size_t(i * n + j)] = T(i == j ? (v < 0 ? v - 1 : v + 1) : 2 * v / double(n));
                        a[c.a_at(e, i, j)] = lu[size_t(i * n + j)];
                    }
                for (int64_t i = 0; i < n; ++i) {
                    const int32_t p = int32_t(i + int64_t((u(su.rng) + 1) / 2 * double(n - i)) % (n - i));
                    piv[size_t(soa ? i * batch + e : e * n + i)] = p + 1;
                }
                std::vector<int32_t> pe(static_cast<size_t>(n));
                for (int64_t i = 0; i < n; ++i) pe[size_t(i)] = piv[size_t(soa ? i * batch + e : e * n + i)];
                fill_rhs(c, e, su, b, want, [&](std::vector<T> &x) { emulate_getrs(lu, n, pe.data(), trans, x); });
            }
            DeviceCopy<T> da(a, 0), db(b, 0);
            DeviceCopy<int32_t> dp(piv, 0);
            apairs_plan_t plan = nullptr;
            api_ok(apairs_plan_create_getrs_batched(&plan, su.cx.h, dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
                                                    row_major ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR,
                                                    trans ? APAIRS_OP_T : APAIRS_OP_N, n, nrhs, c.ld, c.stride, c.ldb,
                                                    c.strideb, batch));
            run_plan(plan, kernel(n, soa),
                     [&](apairs_plan_t p) { return apairs_plan_execute_getrs(p, da.p, dp.p, db.p); });
            cuda_ok(cudaDeviceSynchronize());
            check_solved(c, b, db.back(), want);
            CHECK(da.back() == a);  // the factors are read only
        }
}

// potrs's column solves, emulated on the host for one column x of B: L y = b by columns
// (y_j first multiplied by the reciprocal of L(j, j), then every row below updated by
// y_r = fma(-L(r, j), y_j, y_r) in order of j), then L^T x = y the same from the last
// column up (x_r = fma(-L(j, r), x_j, x_r)). Every CUDA potrs kernel for n > 32 with at
// most 8 right-hand sides (rows and stream) must give these bits. l: n x n row-major, the
// logical L (its lower triangle).
template <class T>
void emulate_potrs(const std::vector<T> &l, int64_t n, std::vector<T> &x) {
    for (int64_t j = 0; j < n; ++j) {
        x[size_t(j)] *= T(1) / l[size_t(j * n + j)];
        for (int64_t r = j + 1; r < n; ++r) x[size_t(r)] = std::fma(-l[size_t(r * n + j)], x[size_t(j)], x[size_t(r)]);
    }
    for (int64_t j = n - 1; j >= 0; --j) {
        x[size_t(j)] *= T(1) / l[size_t(j * n + j)];
        for (int64_t r = 0; r < j; ++r) x[size_t(r)] = std::fma(-l[size_t(j * n + r)], x[size_t(j)], x[size_t(r)]);
    }
}

TEMPLATE_TEST_CASE("batched CUDA: potrs's kernels give the bits of its column solves emulated on the host",
                   "[cuda][batched][potrs]", float, double) {
    using T = TestType;
    Setup su;
    INFO("seed " << su.seed);
    auto &u = su.u;
    const int32_t dtype = ref::Type<T>::dtype;
    int variant = 0;
    // The stream kernel for one right-hand side past n = 96, else the rows kernel.
    auto kernel = [&](int64_t n, int64_t nrhs) -> const char * {
        return nrhs == 1 && n > 96 ? "potrs_stream<" : "potrs_rows<";
    };
    // Every layout, order and triangle at sizes about each multiple of 32 (47 and 100: a
    // partial last tile); nrhs 1, 2, 5 and 8 in turn, each size starting one further, so
    // that every layout meets each (the stream kernel every layout, order and triangle
    // once over n = 97 .. 128); SoA blocks with a partial last one; and batches past one
    // resident grid: the rows kernel at n = 33 and 65 (lower, AoS and SoA), the stream
    // kernel at n = 97 (SoA) and 100 (AoS).
    for (int64_t n : {33, 47, 64, 65, 96, 97, 100, 127, 128})
        for (int lay = 0; lay < 8; ++lay, ++variant) {
            const bool soa = lay & 1, row_major = lay & 2, upper = lay & 4;
            const bool one = (variant + variant / 8) % 4 == 0;  // SolveShape's nrhs = 1
            const int64_t batch = (n == 33 || n == 65) && !upper ? 20011 : (n == 97 || n == 100) && one ? 4001 : 203;
            const SolveShape c(n, batch, soa, row_major, variant);
            const int64_t nrhs = c.nrhs;
            INFO("n " << n << " nrhs " << nrhs << c.describe_layout() << (upper ? " upper" : " lower"));
            // L: off-diagonal entries in [-2/n, 2/n), diagonal ones in [1, 2), stored as L
            // (lower) or U = L^T (upper), the other triangle left as padding; B in [-1, 1).
            std::vector<T> a(c.a_size(), T(-3.5)), b(c.b_size(), T(-3.5));
            std::vector<T> want(size_t(batch * n * nrhs));
            std::vector<T> l(size_t(n * n), T(0));
            for (int64_t e = 0; e < batch; ++e) {
                for (int64_t i = 0; i < n; ++i)
                    for (int64_t j = 0; j <= i; ++j) {
                        const double v = u(su.rng);
                        l[size_t(i * n + j)] = T(i == j ? std::fabs(v) + 1 : 2 * v / double(n));
                        a[upper ? c.a_at(e, j, i) : c.a_at(e, i, j)] = l[size_t(i * n + j)];
                    }
                fill_rhs(c, e, su, b, want, [&](std::vector<T> &x) { emulate_potrs(l, n, x); });
            }
            DeviceCopy<T> da(a, 0), db(b, 0);
            apairs_plan_t plan = nullptr;
            api_ok(apairs_plan_create_potrs_batched(&plan, su.cx.h, dtype, soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
                                                    row_major ? APAIRS_ORDER_ROW_MAJOR : APAIRS_ORDER_COL_MAJOR,
                                                    upper ? APAIRS_UPLO_UPPER : APAIRS_UPLO_LOWER, n, nrhs, c.ld,
                                                    c.stride, c.ldb, c.strideb, batch));
            run_plan(plan, kernel(n, nrhs), [&](apairs_plan_t p) { return apairs_plan_execute_potrs(p, da.p, db.p); });
            cuda_ok(cudaDeviceSynchronize());
            check_solved(c, b, db.back(), want);
            CHECK(da.back() == a);  // the factor is read only
        }
}

// The rows and stream kernels (potrf, potrs, getrf and getrs past their warp kernels)
// stage a SoA factor with the whole block, each entry one run of the block's elements:
// plan_rows makes the block a multiple of 8 warps in f32 and 4 in f64 where that keeps 3/4
// of the estimator's warps an SM, so that the runs are whole 32-byte sectors (H200 run
// 341: potrs f32 n = 64, 9 warps -> 8, 0.200 -> 0.176 ms).
// Asserted for potrs and getrs of one right-hand side on sm_90, where each such block
// keeps 3/4 of the warps at these sizes (not so the larger triangles: potrf f32 n = 128
// stays at 7 warps, runs of 28 bytes, where 2 aligned warps lost), reported elsewhere.
TEMPLATE_TEST_CASE("batched CUDA: the rows and stream kernels' SoA blocks take whole sectors",
                   "[cuda][batched][potrs][getrs]", float, double) {
    using T = TestType;
    const int32_t dtype = ref::Type<T>::dtype, soa = APAIRS_LAYOUT_SOA, rm = APAIRS_ORDER_ROW_MAJOR;
    const int64_t batch = 20011, stride = 20032, es = int64_t(sizeof(T));
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0));
    auto whole = [&](const apairs::batched::CudaConfig &cfg, const std::string &what) {
        INFO(what << ": " << cfg.why_model);
        const bool ok = cfg.block_threads % 32 == 0 && cfg.block_threads / 32 * es % 32 == 0;
        if (prop.major == 9 && prop.minor == 0)
            CHECK(ok);
        else if (!ok)
            WARN("not whole sectors on this device");
    };
    for (int64_t n : {33, 47, 59, 60, 64, 65, 97, 128}) {
        const auto pp =
            apairs::batched::make_potrs_problem(dtype, soa, rm, APAIRS_UPLO_LOWER, n, 1, n, stride, 1, stride, batch);
        whole(apairs::batched::plan_potrs_cuda(pp, 0, 0.0), "potrs n " + std::to_string(n));
        const auto gp =
            apairs::batched::make_getrs_problem(dtype, soa, rm, APAIRS_OP_N, n, 1, n, stride, 1, stride, batch);
        whole(apairs::batched::plan_getrs_cuda(gp, 0, 0.0), "getrs n " + std::to_string(n));
    }
}

// The SoA stream plans ask for a smaller shared-memory carveout (kStreamSoaSharedPerSm)
// than the f32 AoS plans of the same kernel (f64 AoS past n = 96 with one right-hand
// side asks for the same as SoA). A carveout set on the function (its attribute) would be the last plan's for every
// plan of it: each plan keeps its own, which each of its launches asks for (launch_raw;
// what a launch got is not observable here).
TEST_CASE("batched CUDA: a SoA stream plan keeps its carveout when an AoS plan of its kernel follows",
          "[cuda][batched][potrs][getrs]") {
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0));
    if (prop.sharedMemPerMultiprocessor <= 164 * 1024) {
        WARN("no carveout below this device's shared memory: nothing to test");
        return;
    }
    const int64_t n = 128, batch = 4001, stride = 4032;
    const int32_t rm = APAIRS_ORDER_ROW_MAJOR;
    for (const bool potrs : {false, true}) {
        auto plan = [&](bool soa, int32_t dtype = APAIRS_DTYPE_F32, int64_t nrhs = 1) {
            const int32_t layout = soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS;
            const int64_t sa = soa ? stride : n * n, sb = soa ? stride : n * nrhs;
            if (potrs)
                return apairs::batched::plan_potrs_cuda(
                    apairs::batched::make_potrs_problem(dtype, layout, rm, APAIRS_UPLO_LOWER, n, nrhs, n, sa, nrhs, sb,
                                                        batch),
                    0, 0.0);
            return apairs::batched::plan_getrs_cuda(
                apairs::batched::make_getrs_problem(dtype, layout, rm, APAIRS_OP_N, n, nrhs, n, sa, nrhs, sb, batch),
                0, 0.0);
        };
        const apairs::batched::CudaConfig soa = plan(true), aos = plan(false);
        INFO((potrs ? "potrs" : "getrs") << " SoA: " << soa.why_model << "; AoS: " << aos.why_model);
        CHECK(soa.kernel == aos.kernel);
        CHECK(soa.carveout < aos.carveout);
        CHECK(aos.carveout == 100);
        const apairs::batched::CudaConfig aos64 = plan(false, APAIRS_DTYPE_F64);
        CHECK(aos64.carveout == plan(true, APAIRS_DTYPE_F64).carveout);
        CHECK(aos64.carveout < 100);
        if (!potrs) CHECK(plan(false, APAIRS_DTYPE_F64, 4).carveout == 100);  // chunks of right-hand sides
    }
}
