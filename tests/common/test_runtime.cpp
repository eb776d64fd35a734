// The shared CUDA launch and staging pieces (src/cuda/runtime.*, staging.cu; tagged
// [cuda], run by suite gpu): every kernel launch is checked by its own status
// (cuda::launch, cudaLaunchKernel), so an error already pending in the runtime from an
// earlier failed call is neither reported by an execute as its own nor cleared by it:
// every family, device-resident arrays (queued) and host ones (staged, for the batched
// family in chunks over streams). (But for a launch whose kernel's shared-memory limit
// has to be raised again, cuda/runtime.cuh's raise_shared_limit: cudaFuncSetAttribute
// clears a pending error.)
// This binary shares one CUDA runtime with the library, so the error set here is the one
// the library's runtime sees.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "apairs.h"
#include "catch.hpp"

namespace {

// A failed allocation: cudaErrorMemoryAllocation, pending until read.
void leave_error_pending() {
    void *p = nullptr;
    REQUIRE(cudaMalloc(&p, size_t(1) << 62) == cudaErrorMemoryAllocation);
    REQUIRE(cudaPeekAtLastError() == cudaErrorMemoryAllocation);
}

template <class T>
T *device_copy(const std::vector<T> &h) {
    void *p = nullptr;
    REQUIRE(cudaMalloc(&p, h.size() * sizeof(T)) == cudaSuccess);
    REQUIRE(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
    return static_cast<T *>(p);
}

}  // namespace

// [api-error]: compute-sanitizer reports the failed allocation that this test makes on
// purpose (tools/device-run.sh leaves it out of the sanitizer runs).
TEST_CASE("an error pending in the CUDA runtime is neither reported by an execute nor cleared by it",
          "[cuda][api-error]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    apairs_context_t ctx = nullptr;
    REQUIRE(apairs_context_create(&ctx, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
    // Batched host arrays staged in chunks of a few elements, over the staging streams.
    REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_STAGING_BYTES, 16384) == APAIRS_SUCCESS);
    const int64_t n1 = 37, n2 = 29, d = 19, n = 8, batch = 67, gd = 45, gl = (gd + 3) / 4;
    std::vector<float> a(size_t(n1 * d)), b(size_t(n2 * d)), dist(size_t(n1 * n2), -1.0f);
    for (size_t k = 0; k < a.size(); ++k) a[k] = float((k * 37 % 101) / 50.0 - 1.0);
    for (size_t k = 0; k < b.size(); ++k) b[k] = float((k * 53 % 97) / 48.0 - 1.0);
    std::vector<double> ga(size_t(n * n * batch)), gc(ga.size(), -1.0), w(size_t(n1), 0.5);
    for (size_t k = 0; k < ga.size(); ++k) ga[k] = (k % (n * n)) % (n + 1) == 0 ? n + 1.0 : (k * 29 % 31) / 64.0;
    std::vector<int32_t> ipiv(static_cast<size_t>(n * batch)), info(static_cast<size_t>(batch));
    std::vector<uint8_t> geno(size_t(n1 * gd)), packed(size_t(n1 * gl));
    for (size_t k = 0; k < geno.size(); ++k) geno[k] = uint8_t(k * 7 % 3);
    std::vector<double> gdist(size_t(n1 * n1));
    std::vector<int64_t> counts(8), idx(size_t(n1 * 3));
    std::vector<double> sums(8);
    float *da = device_copy(a), *db = device_copy(b), *dd = device_copy(dist);
    uint8_t *dgeno = device_copy(geno), *dpacked = device_copy(packed);
    const double radii[2] = {1.0, 2.5};

    struct Op {
        std::string name;
        std::function<apairs_status_t(apairs_plan_t *)> plan;
        std::function<apairs_status_t(apairs_plan_t)> run;
    };
    const std::vector<Op> ops = {
        {"pairwise L1, device A and B, host D (tile and transpose kernels, staging)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_pairwise(p, ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d, n2);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute(p, da, db, dist.data()); }},
        {"pairwise L1, all three on the device (queued, nothing staged)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_pairwise(p, ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d, n2);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute(p, da, db, dd); }},
        {"pairwise COSINE (cuBLAS, norms and finish kernels)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_pairwise(p, ctx, APAIRS_METRIC_COSINE, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d,
                                                n2);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute(p, a.data(), b.data(), dist.data()); }},
        {"batched gemm, host arrays (staged in chunks)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_gemm_batched(p, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                    APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, APAIRS_OP_T, n, n, n, 1.0,
                                                    0.0, n, n * n, n, n * n, n, n * n, batch);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute_gemm(p, ga.data(), ga.data(), gc.data()); }},
        {"batched getrf, host arrays (staged in chunks)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_getrf_batched(p, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_SOA,
                                                     APAIRS_ORDER_COL_MAJOR, n, n, batch, batch);
         },
         [&](apairs_plan_t p) {
             std::vector<double> x = ga;
             return apairs_plan_execute_getrf(p, x.data(), ipiv.data(), info.data());
         }},
        {"pair counts (reduce and finish kernels)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_pair_counts(p, ctx, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32,
                                                   n1, n2, d, d, d, 2, radii, 0, nullptr);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute_pair_counts(p, a.data(), b.data(), counts.data()); }},
        {"weighted histogram (the weights' check kernel)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_histogram_uniform(p, ctx, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0,
                                                         APAIRS_DTYPE_F32, n1, n1, d, d, d, 4, 0.0, 4.0, 0, nullptr);
         },
         [&](apairs_plan_t p) {
             return apairs_plan_execute_histogram_weighted(p, a.data(), a.data(), w.data(), nullptr, counts.data(),
                                                           sums.data());
         }},
        {"kNN",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_knn(p, ctx, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, n1, n2,
                                           d, d, d, 3);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute_knn(p, a.data(), b.data(), idx.data(), dist.data()); }},
        {"genotype IBS, flat missing (planes and tensor-core kernels)",
         [&](apairs_plan_t *p) {
             return apairs_plan_create_genotype(p, ctx, APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_FLAT, n1, n1, gd,
                                                gl, gl, n1, nullptr);
         },
         [&](apairs_plan_t p) { return apairs_plan_execute_genotype(p, packed.data(), packed.data(), gdist.data()); }},
    };
    // Packing on the device (its check and pack kernels), then on the host for the plans.
    leave_error_pending();
    {
        const apairs_status_t s = apairs_genotype_pack(ctx, dgeno, n1, gd, gd, 9, dpacked, gl);
        INFO(apairs_last_error());
        CHECK(s == APAIRS_SUCCESS);
    }
    CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);
    CHECK(apairs_genotype_pack(ctx, geno.data(), n1, gd, gd, 9, packed.data(), gl) == APAIRS_SUCCESS);
    for (const Op &op : ops) {
        INFO(op.name);
        apairs_plan_t plan = nullptr;
        REQUIRE(op.plan(&plan) == APAIRS_SUCCESS);
        leave_error_pending();
        const apairs_status_t s = op.run(plan);
        INFO(apairs_last_error());
        CHECK(s == APAIRS_SUCCESS);
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        CHECK(cudaGetLastError() == cudaErrorMemoryAllocation);  // still pending, read here
        CHECK(cudaGetLastError() == cudaSuccess);
        apairs_plan_destroy(plan);
    }
    for (void *p : {static_cast<void *>(da), static_cast<void *>(db), static_cast<void *>(dd),
                    static_cast<void *>(dgeno), static_cast<void *>(dpacked)})
        REQUIRE(cudaFree(p) == cudaSuccess);
    apairs_context_destroy(ctx);
}
