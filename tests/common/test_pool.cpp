// The CUDA work-buffer pool (src/cuda/runtime.cu; tagged [cuda], run by suite gpu): while
// a context (or a plan, which holds a copy of it) lives, the memory an execute frees
// stays reserved for the next one instead of going back to the driver at each
// synchronisation; when the last holder goes, the pool returns it.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>

#include "apairs.h"
#include "catch.hpp"
#include "cuda/runtime.cuh"

namespace {

uint64_t reserved(cudaMemPool_t pool) {
    uint64_t bytes = 0;
    REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes) == cudaSuccess);
    return bytes;
}

// A buffer of the pool, written, freed in stream order, then the device synchronised.
void use_buffer(uint64_t bytes) {
    {
        apairs::cuda::StreamBuffer b(bytes, nullptr);
        REQUIRE(cudaMemsetAsync(b.get(), 0x5A, bytes, nullptr) == cudaSuccess);
    }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

struct ContextFree {
    void operator()(apairs_context_t c) const { apairs_context_destroy(c); }
};
struct PlanFree {
    void operator()(apairs_plan_t p) const { apairs_plan_destroy(p); }
};

}  // namespace

TEST_CASE("the work-buffer pool keeps freed buffers while a context or plan holds it, and returns them after",
          "[cuda]") {
    constexpr uint64_t kBytes = uint64_t(64) << 20;
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    const cudaMemPool_t pool = apairs::cuda::work_pool(0);
    INFO("a context or plan of another test case still holds the pool (leaked?)");
    REQUIRE(apairs::cuda::pool_holds(0) == 0);
    // No holder: nothing kept past the synchronisation.
    use_buffer(kBytes);
    CHECK(reserved(pool) == 0);

    apairs_context_t c = nullptr;
    REQUIRE(apairs_context_create(&c, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
    std::unique_ptr<apairs_context_s, ContextFree> ctx(c);
    apairs_plan_t p = nullptr;
    REQUIRE(apairs_plan_create_pairwise(&p, ctx.get(), APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, 3, 3, 2, 2, 2, 3) ==
            APAIRS_SUCCESS);
    std::unique_ptr<apairs_plan_s, PlanFree> plan(p);
    CHECK(apairs::cuda::pool_holds(0) == 1);  // the context's hold, shared by its plan's copy
    use_buffer(kBytes);
    CHECK(reserved(pool) >= kBytes);
    ctx.reset();  // the plan's copy of the context still holds the pool
    use_buffer(kBytes);
    CHECK(reserved(pool) >= kBytes);
    plan.reset();
    CHECK(apairs::cuda::pool_holds(0) == 0);
    CHECK(reserved(pool) == 0);
}
