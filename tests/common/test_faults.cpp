// Allocation failure: the n-th allocation of a call is made to fail, for every n the call
// reaches (apairs::fault counts device allocations in the library; this program's
// operator new counts host ones). Each failing call must return APAIRS_ERROR_OUT_OF_MEMORY
// with a message, leave its out-arguments and every output untouched, and leak nothing (checked by
// LeakSanitizer in sanitized builds). Runs on test::backend(): host in suite unit, CUDA
// (staging buffers included) in suite gpu.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "apairs.h"
#include "backend.hpp"
#include "catch.hpp"
#include "common/fault.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define APAIRS_TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define APAIRS_TEST_LSAN 1
#endif
#endif
#if APAIRS_TEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

// Every host allocation of this program asks apairs::fault whether it must fail.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // malloc'd by our operator new
#endif
void *operator new(std::size_t n) {
    if (apairs::fault::allocation_fails()) throw std::bad_alloc();
    if (void *p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void *operator new[](std::size_t n) { return operator new(n); }
void *operator new(std::size_t n, const std::nothrow_t &) noexcept {
    if (apairs::fault::allocation_fails()) return nullptr;
    return std::malloc(n ? n : 1);
}
void *operator new[](std::size_t n, const std::nothrow_t &t) noexcept { return operator new(n, t); }
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }

namespace {

const apairs_context_t kCtxSentinel = reinterpret_cast<apairs_context_t>(uintptr_t(0xC0FFEE0));
const apairs_plan_t kPlanSentinel = reinterpret_cast<apairs_plan_t>(uintptr_t(0xDEADBE0));
constexpr int64_t kMaxSweep = 100000;

// Runs call() with the n-th allocation failing, for n = 1, 2, ... until a run succeeds;
// failed(status) checks each failing run. Returns the number of failing runs.
// call() runs once first with every allocation granted: the runtimes below the library
// (OpenMP, CUDA) initialise themselves on first use, and a failure injected into their
// own start-up is theirs to handle (LLVM's libomp, for one, then waits forever on a lock).
template <class Call, class Failed>
int64_t sweep(const std::string &what, Call call, Failed failed, bool warm_up = true) {
    if (warm_up) REQUIRE(call() == APAIRS_SUCCESS);
    int64_t n = 1;
    for (; n < kMaxSweep; ++n) {
        apairs::fault::fail_nth_allocation(n);
        const apairs_status_t st = call();
        const int64_t counted = apairs::fault::allocations_counted();
        apairs::fault::fail_nth_allocation(0);
        INFO(what << ": allocation " << n << " of " << counted << " made to fail; status "
                  << apairs_status_string(st) << ", last error \"" << apairs_last_error() << "\"");
        if (st == APAIRS_SUCCESS) {
            CHECK(counted < n);  // success only once every allocation went through
            break;
        }
        REQUIRE(counted >= n);  // the call failed because of the injected failure, not another
        CHECK(st == APAIRS_ERROR_OUT_OF_MEMORY);
        CHECK(std::string(apairs_last_error()).find("memory") != std::string::npos);
        failed();
    }
    REQUIRE(n < kMaxSweep);
    std::printf("[%s] %-44s %3lld allocation failures, each reported\n", test::backend_name(), what.c_str(),
                static_cast<long long>(n - 1));
    return n - 1;
}

struct Problem {
    const char *name;
    int32_t metric;
    double p;
    int32_t dtype;
};

}  // namespace

TEST_CASE("every allocation that fails gives OUT_OF_MEMORY, writes nothing and leaks nothing",
          "[faults]") {
    const int32_t backend = test::backend();

    // The runtimes warmed up: CUDA by a context, OpenMP (a plan asks it how many threads
    // it may run, and libomp loads its tool libraries then) by a plan executed once.
    apairs_context_t ctx = kCtxSentinel;
    REQUIRE(apairs_context_create(&ctx, backend, 0) == APAIRS_SUCCESS);
    {
        apairs_plan_t plan = nullptr;
        const float A[6] = {1, 2, 3, 4, 5, 6};
        float D[9] = {};
        REQUIRE(apairs_plan_create_pairwise(&plan, ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, 3, 3, 2, 2, 2, 3) ==
                APAIRS_SUCCESS);
        REQUIRE(apairs_plan_execute(plan, A, A, D) == APAIRS_SUCCESS);
        REQUIRE(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }
    REQUIRE(apairs_context_destroy(ctx) == APAIRS_SUCCESS);
    ctx = kCtxSentinel;
    CHECK(sweep("apairs_context_create", [&] { return apairs_context_create(&ctx, backend, 0); },
                [&] { CHECK(ctx == kCtxSentinel); }, false) >= 1);
    REQUIRE(ctx != kCtxSentinel);
    REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_HOST_THREADS, 2) == APAIRS_SUCCESS);

    const Problem problems[] = {{"l2 f64", APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64},
                                {"lp(p=3.5) f32", APAIRS_METRIC_LP, 3.5, APAIRS_DTYPE_F32},
                                {"cosine f32", APAIRS_METRIC_COSINE, 0, APAIRS_DTYPE_F32},
                                {"hamming u8", APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8}};
    const int64_t n1 = 37, n2 = 45, d = 70, lda = 71, ldb = 70, ldd = 47;
    for (const Problem &pb : problems) {
        INFO(pb.name);
        apairs_plan_t plan = kPlanSentinel;
        CHECK(sweep(std::string("apairs_plan_create_pairwise ") + pb.name,
                    [&] {
                        return apairs_plan_create_pairwise(&plan, ctx, pb.metric, pb.p, pb.dtype, n1, n2, d,
                                                           lda, ldb, ldd);
                    },
                    [&] { CHECK(plan == kPlanSentinel); }, false) >= 1);
        REQUIRE(plan != kPlanSentinel);

        // Host arrays: the host backend allocates its per-thread scratch, the CUDA backend
        // its staging buffers. D's bytes are poisoned and must stay so on failure.
        const size_t in = pb.dtype == APAIRS_DTYPE_F64 ? 8 : pb.dtype == APAIRS_DTYPE_F32 ? 4 : 1;
        const size_t out = pb.dtype == APAIRS_DTYPE_U8 ? 4 : in;
        std::vector<unsigned char> A(size_t(n1 * lda) * in), B(size_t(n2 * ldb) * in);
        for (size_t k = 0; k < A.size(); ++k) A[k] = static_cast<unsigned char>((k * 7 + 3) % 3 + 0x3c);
        for (size_t k = 0; k < B.size(); ++k) B[k] = static_cast<unsigned char>((k * 5 + 1) % 3 + 0x3c);
        std::vector<unsigned char> D(size_t(n1 * ldd) * out, 0xA7), poisoned = D;
        CHECK(sweep(std::string("apairs_plan_execute ") + pb.name, [&] {
                        D = poisoned;  // same size: no allocation
                        return apairs_plan_execute(plan, A.data(), B.data(), D.data());
                    },
                    [&] { CHECK(std::memcmp(D.data(), poisoned.data(), D.size()) == 0); }) >= 1);
        // The successful run wrote every entry (no 0xA7A7... pattern left in n1 x n2).
        int64_t unwritten = 0;
        for (int64_t i = 0; i < n1; ++i)
            for (int64_t j = 0; j < n2; ++j)
                unwritten += std::memcmp(&D[size_t(i * ldd + j) * out], poisoned.data(), out) == 0;
        CHECK(unwritten == 0);
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }

    // A batched gemm plan: its creation always allocates; its execution on the host
    // allocates nothing, on CUDA its staging buffers: in one piece, and (a staging budget
    // of 1 KiB) in chunks over three streams, where every buffer is had before the first
    // copy, so that no failure leaves some chunks written.
    for (const double staging : {0.0, 1024.0}) {
        INFO("APAIRS_OPTION_STAGING_BYTES = " << staging);
        REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_STAGING_BYTES, staging) == APAIRS_SUCCESS);
        const int64_t m = 5, n = 3, k = 7, batch = 33;
        apairs_plan_t plan = kPlanSentinel;
        CHECK(sweep("apairs_plan_create_gemm_batched",
                    [&] {
                        return apairs_plan_create_gemm_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                               APAIRS_ORDER_COL_MAJOR, APAIRS_OP_N, APAIRS_OP_T, m, n,
                                                               k, 1.0, 0.5, m, m * k, n, n * k, m, m * n, batch);
                    },
                    [&] { CHECK(plan == kPlanSentinel); }, false) >= 1);
        REQUIRE(plan != kPlanSentinel);
        std::vector<double> A(size_t(m * k * batch), 0.25), B(size_t(n * k * batch), -0.5);
        std::vector<double> C(size_t(m * n * batch), 2.0), C0 = C;
        const int64_t failures = sweep("apairs_plan_execute_gemm",
                                       [&] {
                                           C = C0;
                                           return apairs_plan_execute_gemm(plan, A.data(), B.data(), C.data());
                                       },
                                       [&] { CHECK(C == C0); });
        CHECK(failures >= (backend == APAIRS_BACKEND_CUDA ? 1 : 0));
        for (double c : C) CHECK(c == 1.0 - 7 * 0.125);  // 0.5 * 2 + 7 * (0.25 * -0.5)
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }
    REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_STAGING_BYTES, 0) == APAIRS_SUCCESS);

    // gesv and gemv: the host engines' per-thread scratch (LU's element copies, gemv's
    // double sums) is allocated before their parallel regions, where a failure would end
    // the process instead of returning OUT_OF_MEMORY (2 threads here), and before any
    // element is written.
    {
        const int64_t n = 6, nrhs = 2, batch = 301;
        apairs_plan_t plan = kPlanSentinel;
        CHECK(sweep("apairs_plan_create_gesv_batched",
                    [&] {
                        return apairs_plan_create_gesv_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                               APAIRS_ORDER_ROW_MAJOR, n, nrhs, n, n * n, nrhs,
                                                               n * nrhs, batch);
                    },
                    [&] { CHECK(plan == kPlanSentinel); }, false) >= 1);
        REQUIRE(plan != kPlanSentinel);
        // A_e = 4 I + 1 (diagonally dominant), B_e all ones: x_e = 1 / (4 + n) = 0.1.
        std::vector<double> A(size_t(n * n * batch)), B(size_t(n * nrhs * batch), 1.0), A0, B0 = B;
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) A[size_t((e * n + i) * n + j)] = i == j ? 5.0 : 1.0;
        A0 = A;
        std::vector<int32_t> ipiv(size_t(n * batch), -7), info(size_t(batch), -7), ipiv0 = ipiv, info0 = info;
        sweep("apairs_plan_execute_gesv",
              [&] {
                  A = A0, B = B0, ipiv = ipiv0, info = info0;
                  return apairs_plan_execute_gesv(plan, A.data(), ipiv.data(), B.data(), info.data());
              },
              [&] { CHECK((A == A0 && B == B0 && ipiv == ipiv0 && info == info0)); });
        for (int32_t f : info) CHECK(f == 0);
        for (double x : B) CHECK(std::fabs(x - 0.1) < 1e-15);
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);

        const int64_t m = 7, cols = 5;
        plan = kPlanSentinel;
        REQUIRE(apairs_plan_create_gemv_batched(&plan, ctx, APAIRS_DTYPE_F32, APAIRS_LAYOUT_AOS, APAIRS_ORDER_COL_MAJOR,
                                                APAIRS_OP_N, m, cols, 1.0, 0.0, m, m * cols, cols, m, batch) ==
                APAIRS_SUCCESS);
        std::vector<float> Ag(size_t(m * cols * batch), 0.5f), xg(size_t(cols * batch), 2.0f),
            yg(size_t(m * batch), -3.0f), yg0 = yg;
        sweep("apairs_plan_execute_gemv",
              [&] {
                  yg = yg0;
                  return apairs_plan_execute_gemv(plan, Ag.data(), xg.data(), yg.data());
              },
              [&] { CHECK(yg == yg0); });
        for (float y : yg) CHECK(y == 5.0f);  // five products of 0.5 * 2
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }
    CHECK(apairs_context_destroy(ctx) == APAIRS_SUCCESS);
#if APAIRS_TEST_LSAN
    CHECK(__lsan_do_recoverable_leak_check() == 0);
#endif
}

// The other families' plans and executes, and the batched factorisations: each plan's
// creation, then its execute on host arrays (the host engines' per-thread scratch, had
// before their parallel regions; CUDA's staging and work buffers) with every output
// poisoned and left so by each failure.
TEST_CASE("two-body, genotype and factorisation calls: every failed allocation gives OUT_OF_MEMORY and writes "
          "nothing",
          "[faults]") {
    const int32_t backend = test::backend();
    apairs_context_t ctx = nullptr;
    REQUIRE(apairs_context_create(&ctx, backend, 0) == APAIRS_SUCCESS);
    REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_HOST_THREADS, 2) == APAIRS_SUCCESS);
    // Plans created with every allocation failing in turn; the last (successful) one kept.
    auto plan_sweep = [](const std::string &what, auto create) {
        apairs_plan_t plan = kPlanSentinel;
        CHECK(sweep(what, [&] { return create(&plan); }, [&] { CHECK(plan == kPlanSentinel); }, false) >= 1);
        REQUIRE(plan != kPlanSentinel);
        return plan;
    };

    // Two-body: n points in the unit cube, d = 3.
    const int64_t n1 = 157, n2 = 131, d = 3;
    std::vector<double> A(size_t(n1 * d)), B(size_t(n2 * d)), wa(size_t(n1), 0.5);
    for (size_t k = 0; k < A.size(); ++k) A[k] = double((k * 7919) % 1009) / 1009.0;
    for (size_t k = 0; k < B.size(); ++k) B[k] = double((k * 104729) % 997) / 997.0;
    for (size_t k = 0; k < wa.size(); ++k) wa[k] = 0.25 + double(k % 5);
    const double radii[3] = {0.05, 0.2, 0.45}, box[3] = {1.0, 1.0, 1.0};
    struct Counts {
        const char *name;
        int32_t pairs;
        const double *box;
    };
    // (on the host, no box: the cell list; a periodic box: the brute force with minimum images)
    for (const Counts &c : {Counts{"pair counts, CROSS", APAIRS_PAIRS_CROSS, nullptr},
                            Counts{"pair counts, AUTO, periodic box", APAIRS_PAIRS_AUTO, box}}) {
        const bool cross = c.pairs == APAIRS_PAIRS_CROSS;
        apairs_plan_t plan = plan_sweep(std::string("apairs_plan_create_pair_counts ") + c.name, [&](apairs_plan_t *p) {
            return apairs_plan_create_pair_counts(p, ctx, c.pairs, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, n1,
                                                  cross ? n2 : 0, d, d, cross ? d : 0, 3, radii, c.box ? 3 : 0,
                                                  c.box);
        });
        std::vector<int64_t> counts(3, -5), counts0 = counts;
        sweep(std::string("apairs_plan_execute_pair_counts ") + c.name,
              [&] {
                  counts = counts0;
                  return apairs_plan_execute_pair_counts(plan, A.data(), cross ? B.data() : nullptr, counts.data());
              },
              [&] { CHECK(counts == counts0); });
        CHECK((counts[0] >= 0 && counts[0] <= counts[1] && counts[1] <= counts[2] && counts[2] > 0));
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }
    {
        apairs_plan_t plan = plan_sweep("apairs_plan_create_histogram_uniform", [&](apairs_plan_t *p) {
            return apairs_plan_create_histogram_uniform(p, ctx, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L2, 0,
                                                        APAIRS_DTYPE_F64, n1, n2, d, d, d, 17, 0.0, 1.5, 0, nullptr);
        });
        std::vector<int64_t> counts(19, -5), counts0 = counts;
        std::vector<double> sums(19, -5.0), sums0 = sums;
        CHECK(sweep("apairs_plan_execute_histogram_weighted",
              [&] {
                  counts = counts0, sums = sums0;
                  return apairs_plan_execute_histogram_weighted(plan, A.data(), B.data(), wa.data(), wa.data(),
                                                                counts.data(), sums.data());
              },
              [&] { CHECK((counts == counts0 && sums == sums0)); }) >= 1);
        int64_t total = 0;
        for (int64_t c : counts) total += c;
        CHECK(total == n1 * n2);
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }
    {
        const int64_t k = 4;
        apairs_plan_t plan = plan_sweep("apairs_plan_create_knn", [&](apairs_plan_t *p) {
            return apairs_plan_create_knn(p, ctx, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, n1, n2,
                                          d, d, d, k);
        });
        std::vector<int64_t> idx(size_t(n1 * k), -5), idx0 = idx;
        std::vector<double> dist(size_t(n1 * k), -5.0), dist0 = dist;
        CHECK(sweep("apairs_plan_execute_knn",
              [&] {
                  idx = idx0, dist = dist0;
                  return apairs_plan_execute_knn(plan, A.data(), B.data(), idx.data(), dist.data());
              },
              [&] { CHECK((idx == idx0 && dist == dist0)); }) >= 1);
        for (int64_t j : idx) CHECK((j >= 0 && j < n2));
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }

    // Genotypes: pack, PLINK's weights, and WEIGHTED distances (the masks of missing calls).
    {
        const int64_t n = 29, v = 203, ld = (v + 3) / 4;
        std::vector<uint8_t> g(size_t(n * v)), packed(size_t(n * ld), 0xEE), packed0 = packed;
        for (size_t k = 0; k < g.size(); ++k) g[k] = uint8_t((k * 31 + k / 7) % 11 == 0 ? 9 : (k * 13 + k / 5) % 3);
        sweep("apairs_genotype_pack",
              [&] {
                  packed = packed0;
                  return apairs_genotype_pack(ctx, g.data(), n, v, v, 9, packed.data(), ld);
              },
              [&] { CHECK(packed == packed0); });
        std::vector<uint32_t> w(size_t(v), 7u), w0 = w;
        CHECK(sweep("apairs_genotype_missing_weights",
              [&] {
                  w = w0;
                  return apairs_genotype_missing_weights(packed.data(), n, v, ld, nullptr, w.data());
              },
              [&] { CHECK(w == w0); }) >= 1);
        CHECK(w != w0);
        apairs_plan_t plan = plan_sweep("apairs_plan_create_genotype", [&](apairs_plan_t *p) {
            return apairs_plan_create_genotype(p, ctx, APAIRS_GENOTYPE_DISTANCE, APAIRS_GENOTYPE_MISSING_WEIGHTED, n, n,
                                               v, ld, ld, n, w.data());
        });
        std::vector<double> D(size_t(n * n), -5.0), D0 = D;
        CHECK(sweep("apairs_plan_execute_genotype",
              [&] {
                  D = D0;
                  return apairs_plan_execute_genotype(plan, packed.data(), packed.data(), D.data());
              },
              [&] { CHECK(D == D0); }) >= 1);
        for (double x : D) CHECK((x >= 0 || std::isnan(x)));
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
    }

    // Batched factorisations: getrf (LU's per-thread element copies on the host) and posv;
    // on CUDA staged in chunks of a few elements over the staging streams (three outputs
    // each, all copied out chunk by chunk).
    {
        REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_STAGING_BYTES, 8192) == APAIRS_SUCCESS);
        const int64_t n = 7, nrhs = 3, batch = 97;
        std::vector<double> Af(size_t(n * n * batch)), Bf(size_t(n * nrhs * batch), 1.0);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) Af[size_t((e * n + i) * n + j)] = i == j ? 6.0 : 0.5 + 0.01 * double(e % 3);
        const std::vector<double> Af0 = Af, Bf0 = Bf;
        std::vector<int32_t> ipiv(size_t(n * batch), -7), info(size_t(batch), -7);
        const std::vector<int32_t> ipiv0 = ipiv, info0 = info;
        apairs_plan_t plan = plan_sweep("apairs_plan_create_getrf_batched", [&](apairs_plan_t *p) {
            return apairs_plan_create_getrf_batched(p, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                    APAIRS_ORDER_ROW_MAJOR, n, n, n * n, batch);
        });
        std::vector<double> Aw = Af;
        CHECK(sweep("apairs_plan_execute_getrf",
              [&] {
                  Aw = Af0, ipiv = ipiv0, info = info0;
                  return apairs_plan_execute_getrf(plan, Aw.data(), ipiv.data(), info.data());
              },
              [&] { CHECK((Aw == Af0 && ipiv == ipiv0 && info == info0)); }) >= 1);
        for (int32_t f : info) CHECK(f == 0);
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
        plan = plan_sweep("apairs_plan_create_posv_batched", [&](apairs_plan_t *p) {
            return apairs_plan_create_posv_batched(p, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_SOA, APAIRS_ORDER_COL_MAJOR,
                                                   APAIRS_UPLO_LOWER, n, nrhs, n, batch, n, batch, batch);
        });
        // The same matrices in SoA column-major order (entry (i, j) of element e at (i + j n)
        // batch + e): symmetric and diagonally dominant, so positive definite.
        std::vector<double> As(Af.size()), Bw = Bf;
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) As[size_t((i + j * n) * batch + e)] = Af0[size_t((e * n + i) * n + j)];
        const std::vector<double> As0 = As;
        sweep("apairs_plan_execute_posv",
              [&] {
                  Aw = As0, Bw = Bf0, info = info0;
                  return apairs_plan_execute_posv(plan, Aw.data(), Bw.data(), info.data());
              },
              [&] { CHECK((Aw == As0 && Bw == Bf0 && info == info0)); });
        for (int32_t f : info) CHECK(f == 0);
        CHECK(apairs_plan_destroy(plan) == APAIRS_SUCCESS);
        REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_STAGING_BYTES, 0) == APAIRS_SUCCESS);
    }
    CHECK(apairs_context_destroy(ctx) == APAIRS_SUCCESS);
#if APAIRS_TEST_LSAN
    CHECK(__lsan_do_recoverable_leak_check() == 0);
#endif
}
