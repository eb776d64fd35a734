// Bulk copies from global to shared memory on sm_90 (the copy engine of the Tensor
// Memory Accelerator, PTX cp.async.bulk), completed through a shared-memory mbarrier.
// One thread moves a whole run of bytes with one instruction, and the bytes in flight
// are bounded by shared memory rather than by registers: a streaming kernel keeps
// several stages of a block's input in flight while it computes on an earlier one.
//
// Use: one thread inits each barrier (count 1) and calls bulk_fence_init(), then the
// block synchronises; per stage, one thread calls bulk_expect(bar, bytes) and then
// bulk_copy(...) for runs summing to `bytes` (each on the 16-byte grid, a multiple of 16
// bytes); every reader calls bulk_wait(bar, phase), phase being the barrier's use count
// mod 2. A stage is refilled only after a block barrier that follows every read of it.
// These compile to nothing below sm_90: callers test bulk_available() on the device and
// the kernel's PTX version (cudaFuncAttributes::ptxVersion >= 90) when planning.
#pragma once

#include <cstdint>

namespace apairs::cuda {

__device__ __forceinline__ constexpr bool bulk_available() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return true;
#else
    return false;
#endif
}

__device__ __forceinline__ uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bulk_init(uint64_t *bar, uint32_t count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(shared_address(bar)), "r"(count) : "memory");
#endif
}

// Makes the barriers' initialisation visible to the copy engine.
__device__ __forceinline__ void bulk_fence_init() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
#endif
}

// Arrives on `bar` (its one arrival of the phase), expecting `bytes` of copies.
__device__ __forceinline__ void bulk_expect(uint64_t *bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(shared_address(bar)), "r"(bytes)
                 : "memory");
#endif
}

// `bytes` (a multiple of 16) from global `src` to shared `dst`, both on the 16-byte grid.
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
            shared_address(dst)),
        "l"(src), "r"(bytes), "r"(shared_address(bar))
        : "memory");
#endif
}

// Waits until the phase `phase` (0 or 1) of `bar` has completed.
__device__ __forceinline__ void bulk_wait(uint64_t *bar, uint32_t phase) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "wait_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait_%=;\n"
        "}\n" ::"r"(shared_address(bar)),
        "r"(phase)
        : "memory");
#endif
}

}  // namespace apairs::cuda
