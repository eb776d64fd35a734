// CUDA runtime helpers for the .cu files of every family: error translation, a scoped
// device switch, pointer classification, stream-ordered buffers and pitched copies.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <utility>

#include "common/error.hpp"

struct CUctx_st;  // the driver's context (CUcontext in cuda.h)

namespace apairs::cuda {

// Throws Error(DEVICE, or OUT_OF_MEMORY for allocation failures) naming `what`.
void check(cudaError_t err, const char *what);

static_assert(CUDART_VERSION >= 12000, "libapairs needs CUDA 12 or later (cudaLaunchKernelEx, memory pools)");

// After a launch of `kernel` that failed asking `shared` bytes of dynamic shared memory:
// where more than the 48 KB default was asked, clears the failure and, where the
// kernel's limit in the current context is lower, raises it to the device's opt-in most;
// true where raised (the launch may be made again; else the caller reports its error). A
// kernel's limit is a context's, set when planning: a call may run in
// another context than planning's (the thread's current one), or find the limit lowered
// since by another plan of the same kernel. So no launch queries an attribute
// (cudaFuncGetAttributes took 0.7 us of CPU time where the launch itself took 5, H200 run
// 310 of tools/gpu-notes.md). Raising a limit clears an error pending in the runtime
// (cudaFuncSetAttribute does, run 314): the one exception to the rule of `launch` below.
bool raise_shared_limit(const void *kernel, int64_t shared);

// kernel<<<grid, block, shared, stream>>>(args...), checked: cudaLaunchKernelEx returns
// the launch's own error, so an error already pending in the runtime from an earlier
// failed call (which cudaGetLastError would return) is neither reported as this launch's
// nor cleared (tests/common/test_runtime.cpp). A launch refused for a shared-memory limit
// lower than planning set is made again once the limit is raised (raise_shared_limit).
template <class... P, class... A>
void launch(const char *what, void (*kernel)(P...), dim3 grid, dim3 block, size_t shared, cudaStream_t stream,
            A &&...args) {
    cudaLaunchConfig_t c{};
    c.gridDim = grid;
    c.blockDim = block;
    c.dynamicSmemBytes = shared;
    c.stream = stream;
    cudaError_t err = cudaLaunchKernelEx(&c, kernel, args...);
    if (err != cudaSuccess && raise_shared_limit(reinterpret_cast<const void *>(kernel), int64_t(shared)))
        err = cudaLaunchKernelEx(&c, kernel, args...);
    check(err, what);
}

// Runs the scope on `device`: in the context of the device current on the thread, else in
// the device's primary context, made current for the scope; the thread's current context
// (or none) is restored after (runtime.cu says how).
class DeviceScope {
public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;

private:
    ::CUctx_st *previous_ = nullptr;  // the caller's current context (CUcontext), or none
    bool restore_ = false;
};

enum class Memory { Host, Device, Managed };

// Where ptr lives; for Device, *device is its ordinal. (cudaPointerGetAttributes creates
// no context: a host-backend call leaves the GPU alone, tests/capi/host_no_context.c.)
Memory classify(const void *ptr, int *device);

// The library's work-buffer pool of `device`, created on first use (hold_pool in
// device.hpp says what it keeps).
cudaMemPool_t work_pool(int device);

// How many holds keep `device`'s pool retaining: one a CUDA context, shared by the plans
// made from it (for the tests).
int64_t pool_holds(int device);

// A device buffer allocated and freed in stream order, from the current device's
// work-buffer pool (hold_pool in device.hpp).
class StreamBuffer {
public:
    StreamBuffer(size_t bytes, cudaStream_t stream);
    ~StreamBuffer();
    StreamBuffer(const StreamBuffer &) = delete;
    StreamBuffer &operator=(const StreamBuffer &) = delete;
    void *get() const { return ptr_; }

private:
    void *ptr_ = nullptr;
    cudaStream_t stream_;
};

// `launch` for a kernel known by its address, `params` as cudaLaunchKernel takes them;
// `carveout` (percent of the device's largest shared memory, 0 .. 100; -1: none) is the
// shared-memory carveout this launch asks for, a launch attribute (CUDA 12.6 and later,
// where the driver takes it; else the kernel's function attribute, which the last plan
// made of the kernel set).
void launch_raw(const void *kernel, dim3 grid, dim3 block, void **params, int64_t shared, cudaStream_t stream,
                const char *what, int carveout = -1);

// Copies `rows` rows of `width` bytes between pitched arrays, asynchronously; a failure
// names the array `name` and the direction. Allocates nothing unless it fails, so copies
// out of a call's outputs follow its allocations without one between them.
void copy_rows(void *dst, int64_t dpitch, const void *src, int64_t spitch, int64_t width,
               int64_t rows, cudaMemcpyKind kind, cudaStream_t stream, const char *name);

}  // namespace apairs::cuda
