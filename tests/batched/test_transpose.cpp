// The layout adapter (AoS <-> SoA) through the public API on test::backend(): every
// value moved bit for bit, nothing else of the output written; and the CUDA engine's
// chunked staging of host arrays (APAIRS_OPTION_STAGING_BYTES): a plan run in many small
// chunks gives exactly the bits of one run in one piece, for ops of every shape of
// operand (AoS, SoA, padded, per-element info, an input-output array).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "reference.hpp"

using ref::Context;
using ref::Rng;

namespace {

// Random bits that are never the poison (floats: finite values; u8: anything).
template <class T>
T random_value(Rng &rng) {
    if constexpr (sizeof(T) == 1) {
        return T(rng() & 0xff);
    } else {
        std::uniform_real_distribution<double> u(-1e3, 1e3);
        T x;
        do x = T(u(rng));
        while (x == T(0));
        return x;
    }
}

template <class T>
T poison() {
    if constexpr (sizeof(T) == 1) return T(0x5a);
    else return ref::poison<T>();
}

template <class T>
void check_transpose(apairs_context_t ctx, int64_t entries, int64_t batch, int64_t pad_in, int64_t pad_out,
                     bool to_soa, Rng &rng) {
    INFO("entries " << entries << ", batch " << batch << ", to " << (to_soa ? "SoA" : "AoS") << ", pads " << pad_in
                    << "/" << pad_out);
    const int32_t dtype = sizeof(T) == 1 ? APAIRS_DTYPE_U8 : sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    // in: AoS (element stride >= entries) or SoA (batch stride >= batch); out the other.
    const int64_t si = (to_soa ? entries : batch) + pad_in, so = (to_soa ? batch : entries) + pad_out;
    auto aos_at = [](int64_t stride, int64_t i, int64_t e) { return size_t(e * stride + i); };
    auto soa_at = [](int64_t stride, int64_t i, int64_t e) { return size_t(i * stride + e); };
    const size_t in_size = to_soa ? size_t((batch - 1) * si + entries) : size_t((entries - 1) * si + batch);
    const size_t out_size = to_soa ? size_t((entries - 1) * so + batch) : size_t((batch - 1) * so + entries);
    std::vector<T> in(in_size), out(out_size, poison<T>());
    for (T &x : in) x = random_value<T>(rng);
    apairs_plan_t plan = nullptr;
    APAIRS_REQUIRE_OK(apairs_plan_create_transpose_batched(&plan, ctx, dtype,
                                                           to_soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS, entries,
                                                           si, so, batch));
    const std::vector<T> in0 = in;
    const apairs_status_t st = apairs_plan_execute_transpose(plan, in.data(), out.data());
    INFO(apairs_last_error());
    apairs_plan_destroy(plan);
    REQUIRE(st == APAIRS_SUCCESS);
    CHECK(std::memcmp(in.data(), in0.data(), in.size() * sizeof(T)) == 0);
    std::vector<char> written(out.size(), 0);
    int64_t bad = 0;
    for (int64_t e = 0; e < batch; ++e)
        for (int64_t i = 0; i < entries; ++i) {
            const size_t src = to_soa ? aos_at(si, i, e) : soa_at(si, i, e);
            const size_t dst = to_soa ? soa_at(so, i, e) : aos_at(so, i, e);
            written[dst] = 1;
            if (std::memcmp(&out[dst], &in[src], sizeof(T)) != 0) ++bad;
        }
    CHECK(bad == 0);
    const T p = poison<T>();
    int64_t touched = 0;
    for (size_t q = 0; q < out.size(); ++q)
        if (!written[q] && std::memcmp(&out[q], &p, sizeof(T)) != 0) ++touched;
    CHECK(touched == 0);
}

// The CUDA engine's smallest staging budget: a few elements per chunk.
constexpr double kTinyStaging = 4096;

// Runs `run(ctx)` on a default context and on one whose staging budget is tiny, and
// requires the outputs `run` returns to be identical bit for bit.
template <class Run>
void same_bits_in_chunks(Run run) {
    Context whole, chunked;
    APAIRS_REQUIRE_OK(apairs_context_set_option(chunked.h, APAIRS_OPTION_STAGING_BYTES, kTinyStaging));
    double v = -1;
    APAIRS_REQUIRE_OK(apairs_context_get_option(chunked.h, APAIRS_OPTION_STAGING_BYTES, &v));
    CHECK(v == kTinyStaging);
    const std::vector<unsigned char> a = run(whole.h, false), b = run(chunked.h, true);
    REQUIRE(a.size() == b.size());
    CHECK(std::memcmp(a.data(), b.data(), a.size()) == 0);
}

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T> &v) {
    std::vector<unsigned char> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}

void check_description(apairs_plan_t plan, bool chunked) {
    char buf[4096];
    APAIRS_REQUIRE_OK(apairs_plan_describe(plan, buf, sizeof buf, nullptr));
    INFO(buf);
    if (test::backend() == APAIRS_BACKEND_CUDA)
        CHECK((std::string(buf).find("host arrays: staged in chunks of") != std::string::npos) == chunked);
}

}  // namespace

TEMPLATE_TEST_CASE("batched transpose moves every value bit for bit and nothing else", "[batched][transpose]",
                   uint8_t, float, double) {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    Context ctx;
    int variant = 0;
    for (int64_t entries : {1, 5, 16, 33, 100})
        for (int64_t batch : {1, 31, 33, 97, 1031}) {
            ++variant;
            for (bool to_soa : {true, false})
                check_transpose<TestType>(ctx.h, entries, batch, variant % 3, variant * 7 % 5, to_soa, rng);
        }
    // Narrow elements (the CUDA engine's tiles of all entries by 2048 / TC elements) in
    // more tiles than the device holds at once (grid-stride rounds), padded and packed.
    for (bool to_soa : {true, false}) {
        check_transpose<TestType>(ctx.h, 4, 600001, 0, 0, to_soa, rng);
        check_transpose<TestType>(ctx.h, 13, 200003, 1, 3, to_soa, rng);
    }
    // The CUDA engine's square tiles (more than 16 entries) in more tiles than the device
    // holds at once (each unit several rounds of its grid stride), the last tiles partial
    // both ways, packed and padded.
    for (bool to_soa : {true, false}) {
        check_transpose<TestType>(ctx.h, 256, 20011, 0, 0, to_soa, rng);
        check_transpose<TestType>(ctx.h, 40, 100003, 3, 1, to_soa, rng);
    }
    // Entries and strides multiples of 4 (the CUDA engine moves 4-byte values AoS -> SoA in
    // 16-byte pieces there; host arrays are staged with the batch as SoA stride, so only
    // batches that are multiples of 4 reach that kernel): partial tiles at the batch's end,
    // padded strides.
    for (int64_t entries : {4, 8, 12, 16})
        for (int64_t batch : {1, 3, 516, 20004})
            check_transpose<TestType>(ctx.h, entries, batch, 4 * (entries / 4 % 2), (4 - batch % 4) % 4 + 4, true, rng);
}

TEST_CASE("batched transpose: bad arguments fail with a status and write nothing", "[batched][transpose]") {
    Context ctx;
    const apairs_plan_t sentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));
    apairs_plan_t plan = sentinel;
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, 9, APAIRS_LAYOUT_SOA, 4, 4, 8, 8) ==
          APAIRS_ERROR_UNKNOWN_ENUM);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, 0, 4, 4, 8, 8) ==
          APAIRS_ERROR_UNKNOWN_ENUM);
    CHECK(std::string(apairs_last_error()).find("to_layout = 0") != std::string::npos);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, 0, 4, 8, 8) ==
          APAIRS_ERROR_INVALID_VALUE);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, 4, 3, 8, 8) ==
          APAIRS_ERROR_INVALID_VALUE);
    CHECK(std::string(apairs_last_error()).find("stride_in = 3") != std::string::npos);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, 4, 4, 7, 8) ==
          APAIRS_ERROR_INVALID_VALUE);
    CHECK(std::string(apairs_last_error()).find("stride_out = 7") != std::string::npos);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, 4, 8, 3, 8) ==
          APAIRS_ERROR_INVALID_VALUE);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F64, APAIRS_LAYOUT_SOA, 4,
                                               int64_t(1) << 61, 8, 8) == APAIRS_ERROR_OVERFLOW);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, 4, 4, 8, 0) ==
          APAIRS_ERROR_INVALID_VALUE);
    // u8 spans allow counts past 2^62, where the engines' tile counts would overflow.
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_U8, APAIRS_LAYOUT_SOA, 1, 1, INT64_MAX,
                                               INT64_MAX) == APAIRS_ERROR_OVERFLOW);
    CHECK(std::string(apairs_last_error()).find("batch = 9223372036854775807") != std::string::npos);
    CHECK(apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_U8, APAIRS_LAYOUT_AOS, (int64_t(1) << 62) + 1,
                                               INT64_MAX / 2, (int64_t(1) << 62) + 1, 1) == APAIRS_ERROR_OVERFLOW);
    CHECK(apairs_plan_create_transpose_batched(&plan, nullptr, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, 4, 4, 8, 8) ==
          APAIRS_ERROR_NULL_POINTER);
    CHECK(plan == sentinel);
    APAIRS_REQUIRE_OK(
        apairs_plan_create_transpose_batched(&plan, ctx.h, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, 2, 2, 3, 3));
    float in[6] = {1, 2, 3, 4, 5, 6}, out[6] = {-1, -1, -1, -1, -1, -1};
    CHECK(apairs_plan_execute_transpose(plan, in, nullptr) == APAIRS_ERROR_NULL_POINTER);
    CHECK(apairs_plan_execute_dot(plan, in, in, out) == APAIRS_ERROR_UNSUPPORTED);
    CHECK(out[0] == -1);
    APAIRS_REQUIRE_OK(apairs_plan_execute_transpose(plan, in, out));
    const float want[6] = {1, 3, 5, 2, 4, 6};
    CHECK(std::memcmp(out, want, sizeof want) == 0);
    apairs_plan_destroy(plan);
    // The option: whole numbers of bytes only.
    CHECK(apairs_context_set_option(ctx.h, APAIRS_OPTION_STAGING_BYTES, -1) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(apairs_context_set_option(ctx.h, APAIRS_OPTION_STAGING_BYTES, 1.5) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(apairs_context_set_option(ctx.h, APAIRS_OPTION_STAGING_BYTES, NAN) == APAIRS_ERROR_INVALID_VALUE);
}

TEST_CASE("batched plans staged in many small chunks give the bits of one piece", "[batched][staging]") {
    const uint64_t seed = ref::fresh_seed();
    INFO("seed " << seed << ", backend " << test::backend_name());
    Rng rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);

    SECTION("gemm, SoA with a padded batch stride, beta != 0 (C read and written)") {
        const int64_t n = 5, batch = 1000, stride = 1003, span = (n * n - 1) * stride + batch;
        std::vector<double> A(static_cast<size_t>(span)), B(static_cast<size_t>(span)), C0(static_cast<size_t>(span));
        for (auto *v : {&A, &B, &C0})
            for (double &x : *v) x = u(rng);
        same_bits_in_chunks([&](apairs_context_t ctx, bool chunked) {
            apairs_plan_t plan = nullptr;
            APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_SOA,
                                                              APAIRS_ORDER_COL_MAJOR, APAIRS_OP_T, APAIRS_OP_N, n, n,
                                                              n, 1.5, -0.5, n, stride, n, stride, n, stride, batch));
            check_description(plan, chunked);
            std::vector<double> C = C0;
            APAIRS_REQUIRE_OK(apairs_plan_execute_gemm(plan, A.data(), B.data(), C.data()));
            apairs_plan_destroy(plan);
            return bytes_of(C);
        });
    }
    SECTION("gemm, AoS with padding inside and between elements, beta = 0 (C not read)") {
        const int64_t m = 3, n = 4, k = 7, batch = 777, lda = 9, sa = 30, ldb = 5, sb = 40, ldc = 6, sc = 20;
        std::vector<float> A(static_cast<size_t>((batch - 1) * sa + (m - 1) * lda + k)),
            B(static_cast<size_t>((batch - 1) * sb + (k - 1) * ldb + n)), C0(static_cast<size_t>((batch - 1) * sc + (m - 1) * ldc + n));
        for (float &x : A) x = float(u(rng));
        for (float &x : B) x = float(u(rng));
        for (float &x : C0) x = ref::poison<float>();
        same_bits_in_chunks([&](apairs_context_t ctx, bool chunked) {
            apairs_plan_t plan = nullptr;
            APAIRS_REQUIRE_OK(apairs_plan_create_gemm_batched(&plan, ctx, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS,
                                                              APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, APAIRS_OP_N, m, n,
                                                              k, 1.0, 0.0, lda, sa, ldb, sb, ldc, sc, batch));
            check_description(plan, chunked);
            std::vector<float> C = C0;
            APAIRS_REQUIRE_OK(apairs_plan_execute_gemm(plan, A.data(), B.data(), C.data()));
            apairs_plan_destroy(plan);
            // Every padding slot still holds its poison.
            for (int64_t e = 0; e < batch; ++e)
                for (int64_t s = 0; s < sc && e * sc + s < int64_t(C.size()); ++s) {
                    const bool entry = s / ldc < m && s % ldc < n;
                    if (!entry) CHECK(ref::is_poison(C[size_t(e * sc + s)]));
                    else CHECK(!ref::is_poison(C[size_t(e * sc + s)]));
                }
            return bytes_of(C);
        });
    }
    SECTION("posv, SoA: A in and out, B in and out, info out; some elements not positive definite") {
        const int64_t n = 6, nrhs = 3, batch = 301;
        std::vector<double> A0(static_cast<size_t>(n * n * batch)), B0(static_cast<size_t>(n * nrhs * batch));
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j)  // diagonally dominant, or not positive at e % 7 == 3
                    A0[size_t((i * n + j) * batch + e)] = i == j ? (e % 7 == 3 && i == 2 ? -1.0 : n + u(rng)) : u(rng) / n;
        for (double &x : B0) x = u(rng);
        same_bits_in_chunks([&](apairs_context_t ctx, bool chunked) {
            apairs_plan_t plan = nullptr;
            APAIRS_REQUIRE_OK(apairs_plan_create_posv_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_SOA,
                                                              APAIRS_ORDER_ROW_MAJOR, APAIRS_UPLO_LOWER, n, nrhs, n,
                                                              batch, nrhs, batch, batch));
            check_description(plan, chunked);
            std::vector<double> A = A0, B = B0;
            std::vector<int32_t> info(static_cast<size_t>(batch), -7);
            APAIRS_REQUIRE_OK(apairs_plan_execute_posv(plan, A.data(), B.data(), info.data()));
            apairs_plan_destroy(plan);
            for (int64_t e = 0; e < batch; ++e) CHECK(info[size_t(e)] == (e % 7 == 3 ? 3 : 0));
            std::vector<unsigned char> all = bytes_of(A), b = bytes_of(B), i = bytes_of(info);
            all.insert(all.end(), b.begin(), b.end());
            all.insert(all.end(), i.begin(), i.end());
            return all;
        });
    }
    SECTION("transpose, AoS to SoA, 20000 elements (1112 chunks)") {
        const int64_t entries = 9, batch = 20000;
        std::vector<float> in(static_cast<size_t>(entries * batch));
        for (float &x : in) x = float(u(rng));
        same_bits_in_chunks([&](apairs_context_t ctx, bool chunked) {
            apairs_plan_t plan = nullptr;
            APAIRS_REQUIRE_OK(apairs_plan_create_transpose_batched(&plan, ctx, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA,
                                                                   entries, entries, batch, batch));
            check_description(plan, chunked);
            std::vector<float> out(in.size(), ref::poison<float>());
            APAIRS_REQUIRE_OK(apairs_plan_execute_transpose(plan, in.data(), out.data()));
            apairs_plan_destroy(plan);
            for (int64_t e = 0; e < batch; e += 997)
                for (int64_t i = 0; i < entries; ++i)
                    CHECK(out[size_t(i * batch + e)] == in[size_t(e * entries + i)]);
            return bytes_of(out);
        });
    }
}
