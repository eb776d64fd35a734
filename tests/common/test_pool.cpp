// The CUDA work-buffer pool (src/cuda/runtime.cu; tagged [cuda], run by suite gpu): while
// a context (or a plan, which holds a copy of it) lives, the memory an execute frees
// stays reserved for the next one instead of going back to the driver at each
// synchronisation; when the last holder goes, the pool returns it.
#include <cuda_runtime.h>

#include <cstdint>

#include "apairs.h"
#include "catch.hpp"
#include "cuda/runtime.cuh"

namespace {

uint64_t reserved(cudaMemPool_t pool) {
    uint64_t bytes = 0;
    REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &bytes) == cudaSuccess);
    return bytes;
}

// A 64 MiB buffer of the pool, written, freed in stream order, then the device synchronised.
void use_buffer(uint64_t bytes) {
    {
        apairs::cuda::StreamBuffer b(bytes, nullptr);
        REQUIRE(cudaMemsetAsync(b.get(), 0x5A, bytes, nullptr) == cudaSuccess);
    }
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}

}  // namespace

TEST_CASE("the work-buffer pool keeps freed buffers while a context or plan holds it, and returns them after",
          "[cuda]") {
    constexpr uint64_t kBytes = uint64_t(64) << 20;
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    const cudaMemPool_t pool = apairs::cuda::work_pool(0);
    // No holder (the other test cases destroy theirs): nothing kept past the synchronisation.
    use_buffer(kBytes);
    CHECK(reserved(pool) == 0);

    apairs_context_t ctx = nullptr;
    REQUIRE(apairs_context_create(&ctx, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
    apairs_plan_t plan = nullptr;
    REQUIRE(apairs_plan_create_pairwise(&plan, ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, 3, 3, 2, 2, 2, 3) ==
            APAIRS_SUCCESS);
    use_buffer(kBytes);
    CHECK(reserved(pool) >= kBytes);
    apairs_context_destroy(ctx);  // the plan's copy still holds the pool
    use_buffer(kBytes);
    CHECK(reserved(pool) >= kBytes);
    apairs_plan_destroy(plan);
    CHECK(reserved(pool) == 0);
}
