// Genotype plans on CUDA with device-resident arrays (tagged [cuda]; run by suite gpu):
// packed rows in device memory, D in device memory (execute returns after queuing), the
// same bits as the host backend for every metric, weighted and flat, with missing calls;
// A != B, with a pitch larger than the row, in one tile and in several (edges cut), with
// tiles of rows with and without missing calls, and A = B (one device array: the engine
// computes the tiles on and above the diagonal and writes both triangles).
#include <cuda_runtime.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "apairs.h"
#include "catch.hpp"
#include "cuda_checks.hpp"

namespace {

using test::api_ok;
using test::cuda_ok;

// D of one plan on `backend`; A, B and D device memory on CUDA.
template <class O>
std::vector<O> run(int32_t backend, int32_t metric, int32_t missing, const std::vector<uint8_t> &A, int64_t n1,
                   const std::vector<uint8_t> &B, int64_t n2, int64_t d, int64_t ld, const std::vector<uint32_t> &w,
                   bool same = false) {
    apairs_context_t ctx = nullptr;
    api_ok(apairs_context_create(&ctx, backend, 0));
    apairs_plan_t plan = nullptr;
    api_ok(apairs_plan_create_genotype(&plan, ctx, metric, missing, n1, n2, d, ld, ld, n2,
                                       missing == APAIRS_GENOTYPE_MISSING_WEIGHTED ? w.data() : nullptr));
    std::vector<O> D(size_t(n1 * n2));
    if (backend == APAIRS_BACKEND_HOST) {
        api_ok(apairs_plan_execute_genotype(plan, A.data(), B.data(), D.data()));
    } else {
        void *dA = nullptr, *dB = nullptr, *dD = nullptr;
        cuda_ok(cudaMalloc(&dA, A.size()));
        if (!same) cuda_ok(cudaMalloc(&dB, B.size()));
        cuda_ok(cudaMalloc(&dD, D.size() * sizeof(O)));
        cuda_ok(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice));
        if (same) dB = dA;
        else cuda_ok(cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice));
        cuda_ok(cudaMemset(dD, 0xff, D.size() * sizeof(O)));
        api_ok(apairs_plan_execute_genotype(plan, dA, dB, dD));
        cuda_ok(cudaDeviceSynchronize());
        cuda_ok(cudaMemcpy(D.data(), dD, D.size() * sizeof(O), cudaMemcpyDeviceToHost));
        cudaFree(dA), cudaFree(dD);
        if (!same) cudaFree(dB);
    }
    apairs_plan_destroy(plan);
    apairs_context_destroy(ctx);
    return D;
}

}  // namespace

TEST_CASE("genotype on CUDA: device-resident arrays give the host backend's bits", "[cuda][genotype]") {
    std::mt19937_64 rng(std::random_device{}());
    struct Shape {
        int64_t n1, n2, d;
        bool same;
        int missing_tiles;  // rows with missing calls: those of the tiles of 128 rows t with t % 2 == missing_tiles
    };
    // One tile, with missing calls and without; several tiles with cut edges; A = B over
    // 4 x 4 tiles (10 computed). Where neither tile of a pair holds a missing call, the
    // allele-count metrics take the engine's row-sum form: the mixed shapes have pairs of
    // tiles of both kinds.
    for (const Shape sh : {Shape{45, 70, 5, false, 0}, Shape{45, 70, 5, false, 1}, Shape{45, 70, 1000, false, 0},
                           Shape{45, 70, 1000, false, 1}, Shape{45, 70, 1024, false, 1},
                           Shape{45, 70, 4133, false, 0}, Shape{45, 70, 4133, false, 1},
                           Shape{300, 131, 517, false, 1}, Shape{390, 390, 1031, true, 0},
                           Shape{390, 390, 1031, true, 1}}) {
        const int64_t n1 = sh.n1, n2 = sh.n2, d = sh.d, ld = (d + 3) / 4 + 5;
        const bool same = sh.same;
        auto cohort = [&](int64_t n) {
            std::vector<uint8_t> g(size_t(n * d));
            for (int64_t i = 0; i < n; ++i)
                for (int64_t k = 0; k < d; ++k) {
                    const bool may_miss = (i / 128) % 2 == sh.missing_tiles;
                    g[size_t(i * d + k)] = may_miss && rng() % 20 == 0 ? 9 : uint8_t(rng() % 3);
                }
            std::vector<uint8_t> packed(size_t(n * ld), 0xA5);
            apairs_context_t ctx = nullptr;
            api_ok(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0));
            api_ok(apairs_genotype_pack(ctx, g.data(), n, d, d, 9, packed.data(), ld));
            apairs_context_destroy(ctx);
            return packed;
        };
        const std::vector<uint8_t> A = cohort(n1), B = same ? A : cohort(n2);
        std::vector<uint32_t> w(static_cast<size_t>(d));
        api_ok(apairs_genotype_missing_weights(A.data(), n1, d, ld, nullptr, w.data()));
        for (int32_t m = APAIRS_GENOTYPE_HAMMING; m <= APAIRS_GENOTYPE_NONMISSING; ++m) {
            CAPTURE(n1, n2, d, same, sh.missing_tiles, m);
            CHECK(run<int32_t>(APAIRS_BACKEND_CUDA, m, 0, A, n1, B, n2, d, ld, w, same) ==
                  run<int32_t>(APAIRS_BACKEND_HOST, m, 0, A, n1, B, n2, d, ld, w));
        }
        for (int32_t m = APAIRS_GENOTYPE_DISTANCE; m <= APAIRS_GENOTYPE_ONE_MINUS_IBS; ++m)
            for (int32_t missing : {APAIRS_GENOTYPE_MISSING_WEIGHTED, APAIRS_GENOTYPE_MISSING_FLAT}) {
                CAPTURE(n1, n2, d, same, sh.missing_tiles, m, missing);
                const std::vector<double> cu =
                    run<double>(APAIRS_BACKEND_CUDA, m, missing, A, n1, B, n2, d, ld, w, same);
                const std::vector<double> host = run<double>(APAIRS_BACKEND_HOST, m, missing, A, n1, B, n2, d, ld, w);
                CHECK(std::memcmp(cu.data(), host.data(), cu.size() * sizeof(double)) == 0);
            }
    }
}

TEST_CASE("genotype on CUDA: apairs_genotype_pack on the device equals the host's, and refuses bad bytes",
          "[cuda][genotype]") {
    std::mt19937_64 rng(std::random_device{}());
    const int64_t n = 37, d = 1031, ldg = d + 3, ldp = (d + 3) / 4 + 2;
    std::vector<uint8_t> g(size_t(n * ldg), 0);
    for (auto &x : g) x = rng() % 10 == 0 ? 200 : uint8_t(rng() % 3);
    apairs_context_t host = nullptr, cu = nullptr;
    api_ok(apairs_context_create(&host, APAIRS_BACKEND_HOST, 0));
    api_ok(apairs_context_create(&cu, APAIRS_BACKEND_CUDA, 0));
    std::vector<uint8_t> want(size_t(n * ldp), 0x5A), got(size_t(n * ldp), 0);
    api_ok(apairs_genotype_pack(host, g.data(), n, d, ldg, 200, want.data(), ldp));
    void *dg = nullptr, *dp = nullptr;
    cuda_ok(cudaMalloc(&dg, g.size()));
    cuda_ok(cudaMalloc(&dp, got.size()));
    cuda_ok(cudaMemcpy(dg, g.data(), g.size(), cudaMemcpyHostToDevice));
    cuda_ok(cudaMemset(dp, 0x5A, got.size()));
    api_ok(apairs_genotype_pack(cu, dg, n, d, ldg, 200, dp, ldp));
    cuda_ok(cudaMemcpy(got.data(), dp, got.size(), cudaMemcpyDeviceToHost));
    CHECK(got == want);  // the padding bytes (0x5A) untouched on both
    // A bad byte: INVALID_VALUE naming it, nothing written.
    g[size_t(30 * ldg + 1000)] = 7;
    cuda_ok(cudaMemcpy(dg, g.data(), g.size(), cudaMemcpyHostToDevice));
    cuda_ok(cudaMemset(dp, 0x5A, got.size()));
    CHECK(apairs_genotype_pack(cu, dg, n, d, ldg, 200, dp, ldp) == APAIRS_ERROR_INVALID_VALUE);
    CHECK(std::string(apairs_last_error()).find("genotypes[30][1000] = 7") != std::string::npos);
    cuda_ok(cudaMemcpy(got.data(), dp, got.size(), cudaMemcpyDeviceToHost));
    for (uint8_t v : got) CHECK(v == 0x5A);
    // One array on the device, the other on the host.
    CHECK(apairs_genotype_pack(cu, dg, n, d, ldg, 200, got.data(), ldp) == APAIRS_ERROR_INVALID_POINTER);
    // The missing-call weights take host memory only: device arrays are refused, nothing
    // written (they were read and written in place, a crash on a GPU-only pointer).
    std::vector<uint32_t> weights(size_t(d), 0xA5A5A5A5u);
    CHECK(apairs_genotype_missing_weights(dp, n, d, ldp, nullptr, weights.data()) == APAIRS_ERROR_INVALID_POINTER);
    CHECK(std::string(apairs_last_error()).find("packed") != std::string::npos);
    CHECK(apairs_genotype_missing_weights(want.data(), n, d, ldp, dg, weights.data()) ==
          APAIRS_ERROR_INVALID_POINTER);
    for (uint32_t w : weights) CHECK(w == 0xA5A5A5A5u);
    uint32_t *dw = nullptr;
    cuda_ok(cudaMalloc(&dw, size_t(d) * sizeof(uint32_t)));
    CHECK(apairs_genotype_missing_weights(want.data(), n, d, ldp, nullptr, dw) == APAIRS_ERROR_INVALID_POINTER);
    CHECK(apairs_genotype_missing_weights(want.data(), n, d, ldp, nullptr, weights.data()) == APAIRS_SUCCESS);
    cudaFree(dw);
    cudaFree(dg), cudaFree(dp);
    apairs_context_destroy(host);
    apairs_context_destroy(cu);
}
