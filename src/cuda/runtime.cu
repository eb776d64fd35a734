#include "cuda/runtime.cuh"

#include <cuda.h>

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "common/fault.hpp"
#include "cuda/device.hpp"

namespace apairs::cuda {

void check(cudaError_t err, const char *what) {
    if (err == cudaSuccess) return;
    cudaGetLastError();  // clear the error this failure left in the runtime (non-sticky ones)
    const apairs_status_t s =
        err == cudaErrorMemoryAllocation ? APAIRS_ERROR_OUT_OF_MEMORY : APAIRS_ERROR_DEVICE;
    throw Error(s, fmt::format("{} failed: {} ({})", what, cudaGetErrorString(err),
                               cudaGetErrorName(err)));
}

namespace {

// The driver's current-context calls, through the runtime (the library does not link
// libcuda: it loads where no driver is installed).
struct CtxCalls {
    CUresult (*get)(CUcontext *) = nullptr;
    CUresult (*set)(CUcontext) = nullptr;
};
const CtxCalls &ctx_calls() {
    static const CtxCalls calls = [] {
        CtxCalls c;
        void *get = nullptr, *set = nullptr;
        cudaDriverEntryPointQueryResult qg{}, qs{};
#if CUDART_VERSION >= 12050
        check(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get, 12000, cudaEnableDefault, &qg),
              "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
        check(cudaGetDriverEntryPointByVersion("cuCtxSetCurrent", &set, 12000, cudaEnableDefault, &qs),
              "cudaGetDriverEntryPointByVersion(cuCtxSetCurrent)");
#else
        check(cudaGetDriverEntryPoint("cuCtxGetCurrent", &get, cudaEnableDefault, &qg),
              "cudaGetDriverEntryPoint(cuCtxGetCurrent)");
        check(cudaGetDriverEntryPoint("cuCtxSetCurrent", &set, cudaEnableDefault, &qs),
              "cudaGetDriverEntryPoint(cuCtxSetCurrent)");
#endif
        if (!get || !set || qg != cudaDriverEntryPointSuccess || qs != cudaDriverEntryPointSuccess)
            throw Error(APAIRS_ERROR_DEVICE, "the CUDA driver has no cuCtxGetCurrent / cuCtxSetCurrent");
        c.get = reinterpret_cast<CUresult (*)(CUcontext *)>(get);
        c.set = reinterpret_cast<CUresult (*)(CUcontext)>(set);
        return c;
    }();
    return calls;
}

}  // namespace

// The caller's state is the driver's current context of the thread (what its own CUDA
// runtime, or the driver API, sees; libapairs.so's runtime is linked statically and
// private to it). A context of `device` already current is used as it is; otherwise
// cudaSetDevice makes the device's primary context current, and the way out makes the
// caller's context current again, or none where the thread had none: no call leaves a
// context current that was not, nor creates device 0's (cudaSetDevice back to the
// runtime's default device would). tests/capi/host_no_context.c checks both.
DeviceScope::DeviceScope(int device) {
    const CtxCalls &calls = ctx_calls();
    CUcontext current = nullptr;
    if (const CUresult r = calls.get(&current); r != CUDA_SUCCESS)
        throw Error(APAIRS_ERROR_DEVICE, fmt::format("cuCtxGetCurrent failed (CUresult {})", int(r)));
    if (current) {
        int cur = -1;
        check(cudaGetDevice(&cur), "cudaGetDevice");
        if (cur == device) return;  // nothing to restore
    }
    if (const cudaError_t err = cudaSetDevice(device); err != cudaSuccess) {
        calls.set(current);  // (in case it failed after changing the thread's context)
        check(err, "cudaSetDevice");
    }
    previous_ = current;
    restore_ = true;
}

DeviceScope::~DeviceScope() {
    if (restore_) ctx_calls().set(previous_);  // (a failure leaves nothing to do)
}

Memory classify(const void *ptr, int *device) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
        cudaGetLastError();
        return Memory::Host;  // no driver, or memory CUDA does not know
    }
    *device = attr.device;
    switch (attr.type) {
    case cudaMemoryTypeDevice: return Memory::Device;
    case cudaMemoryTypeManaged: return Memory::Managed;
    default: return Memory::Host;  // unregistered or pinned host memory: staged
    }
}

namespace {

// The work-buffer pools, one a device, created on first use and kept for the process
// (never destroyed: a hold may be released during static destruction), with the
// number of holds on each: the release threshold is "keep everything" while there is
// one, 0 otherwise.
struct Pools {
    std::mutex mu;
    std::map<int, std::pair<cudaMemPool_t, int64_t>> of;  // device -> (pool, holds)
};
Pools &pools() {
    static Pools *p = new Pools;
    return *p;
}

cudaMemPool_t pool_locked(Pools &ps, int device) {
    auto &e = ps.of[device];
    if (!e.first) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = device;
        check(cudaMemPoolCreate(&e.first, &props), "cudaMemPoolCreate");
    }
    return e.first;
}

void set_threshold(cudaMemPool_t pool, uint64_t bytes) {
    if (cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &bytes) != cudaSuccess) cudaGetLastError();
}

}  // namespace

std::shared_ptr<void> hold_pool(int device) {
    DeviceScope scope(device);  // the runtime calls below start no other device's context
    Pools &ps = pools();
    cudaMemPool_t pool;
    {
        std::lock_guard<std::mutex> lock(ps.mu);
        pool = pool_locked(ps, device);
        if (ps.of[device].second++ == 0) set_threshold(pool, UINT64_MAX);
    }
    // Outside the lock: if the control block cannot be allocated, shared_ptr calls the
    // release (which takes the lock) before it throws. The release throws nothing.
    return std::shared_ptr<void>(pool, [device](void *) {
        Pools &ps = pools();
        std::lock_guard<std::mutex> lock(ps.mu);
        auto &e = ps.of[device];
        if (--e.second == 0) {
            try {
                DeviceScope scope(device);
                set_threshold(e.first, 0);
                if (cudaMemPoolTrimTo(e.first, 0) != cudaSuccess) cudaGetLastError();
            } catch (...) {  // the device is gone: nothing to return
            }
        }
    });
}

int64_t pool_holds(int device) {
    Pools &ps = pools();
    std::lock_guard<std::mutex> lock(ps.mu);
    const auto it = ps.of.find(device);
    return it == ps.of.end() ? 0 : it->second.second;
}

cudaMemPool_t work_pool(int device) {
    Pools &ps = pools();
    std::lock_guard<std::mutex> lock(ps.mu);
    return pool_locked(ps, device);
}

StreamBuffer::StreamBuffer(size_t bytes, cudaStream_t stream) : stream_(stream) {
    if (fault::allocation_fails()) check(cudaErrorMemoryAllocation, "cudaMallocFromPoolAsync (work buffer, injected)");
    int device = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaMallocFromPoolAsync(&ptr_, bytes, work_pool(device), stream), "cudaMallocFromPoolAsync (work buffer)");
}

StreamBuffer::~StreamBuffer() {
    if (cudaFreeAsync(ptr_, stream_) != cudaSuccess) cudaGetLastError();
}

bool raise_shared_limit(const void *kernel, int64_t shared) {
    if (shared <= 48 * 1024) return false;  // (every kernel's default: another cause)
    cudaGetLastError();  // the failed launch's error (cudaFuncSetAttribute below clears it anyway)
    cudaFuncAttributes fa{};
    int device = 0, most = 0;
    // (a failure of another cause is reported as it was: the caller's error stands.) The
    // device's whole opt-in limit, not this launch's need: two threads raising it at once
    // then set the same value, and neither lowers the other's.
    return cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.maxDynamicSharedSizeBytes < shared &&
           cudaGetDevice(&device) == cudaSuccess &&
           cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) == cudaSuccess &&
           shared <= most &&
           cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most) == cudaSuccess;
}

void launch_raw(const void *kernel, dim3 grid, dim3 block, void **params, int64_t shared, cudaStream_t stream,
                const char *what, int carveout) {
#if CUDART_VERSION >= 12060
    auto go = [&](bool attr) {
        if (!attr) return cudaLaunchKernel(kernel, grid, block, params, size_t(shared), stream);
        cudaLaunchAttribute at{};
        at.id = cudaLaunchAttributePreferredSharedMemoryCarveout;
        at.val.sharedMemCarveout = unsigned(carveout);
        cudaLaunchConfig_t lc{};
        lc.gridDim = grid;
        lc.blockDim = block;
        lc.dynamicSmemBytes = size_t(shared);
        lc.stream = stream;
        lc.attrs = &at;
        lc.numAttrs = 1;
        return cudaLaunchKernelExC(&lc, kernel, params);
    };
    const bool attr = carveout >= 0;
    cudaError_t err = go(attr);
    if (err != cudaSuccess && raise_shared_limit(kernel, shared)) err = go(attr);
    // A driver that refuses the attribute (a hint): the launch without it, under the
    // function's carveout (set when planning). The failed launch's error is cleared first.
    if (err != cudaSuccess && attr && (err == cudaErrorInvalidValue || err == cudaErrorNotSupported)) {
        cudaGetLastError();
        err = go(false);
    }
#else
    (void)carveout;  // the function's carveout, set when planning (the last plan of the kernel made)
    cudaError_t err = cudaLaunchKernel(kernel, grid, block, params, size_t(shared), stream);
    if (err != cudaSuccess && raise_shared_limit(kernel, shared))
        err = cudaLaunchKernel(kernel, grid, block, params, size_t(shared), stream);
#endif
    check(err, what);
}

void copy_rows(void *dst, int64_t dpitch, const void *src, int64_t spitch, int64_t width,
               int64_t rows, cudaMemcpyKind kind, cudaStream_t stream, const char *name) {
    // (the message is formatted only on failure: a successful copy allocates nothing)
    auto ok = [&](cudaError_t err) {
        if (err != cudaSuccess)
            check(err, fmt::format("copy {} to the {}", name, kind == cudaMemcpyHostToDevice ? "device" : "host")
                           .c_str());
    };
    // Packed rows are one 1-D copy; padded rows the 2-D copy, which refuses pitches beyond
    // the device's maximum (cudaDevAttrMaxPitch, about 2 GiB: a SoA operand's entries of a
    // chunk lie stride * size apart), so rows that far apart go one 1-D copy each.
    if (dpitch == width && spitch == width) {
        ok(cudaMemcpyAsync(dst, src, size_t(width) * size_t(rows), kind, stream));
        return;
    }
    int device = 0, max_pitch = 0;
    check(cudaGetDevice(&device), "cudaGetDevice");
    check(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device), "cudaDeviceGetAttribute(MaxPitch)");
    if (dpitch > max_pitch || spitch > max_pitch) {
        for (int64_t r = 0; r < rows; ++r)
            ok(cudaMemcpyAsync(static_cast<char *>(dst) + r * dpitch, static_cast<const char *>(src) + r * spitch,
                               size_t(width), kind, stream));
        return;
    }
    ok(cudaMemcpy2DAsync(dst, size_t(dpitch), src, size_t(spitch), size_t(width), size_t(rows), kind, stream));
}

int device_count() {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

void require_device(int device) {
    const int n = device_count();
    if (device < 0 || device >= n)
        throw Error(APAIRS_ERROR_BACKEND_UNAVAILABLE,
                    n == 0 ? fmt::format("device = {}: no CUDA device or driver is present", device)
                           : fmt::format("device = {}: expected 0 <= device < {}", device, n));
}

bool is_device_pointer(const void *ptr) {
    int dev = -1;
    return classify(ptr, &dev) == Memory::Device;
}

int device_of_pointer(const void *ptr) {
    int dev = -1;
    return classify(ptr, &dev) == Memory::Device ? dev : -1;
}

DeviceLimits device_limits(int device) {
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    DeviceLimits l;
    l.name = p.name;
    l.cc_major = p.major;
    l.cc_minor = p.minor;
    l.sm_count = p.multiProcessorCount;
    l.warp_size = p.warpSize;
    l.max_threads_per_block = p.maxThreadsPerBlock;
    l.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    l.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
    l.regs_per_sm = p.regsPerMultiprocessor;
    l.max_regs_per_block = p.regsPerBlock;
    l.max_regs_per_thread = 255;  // every architecture CUDA 13 supports (sm_75 and later)
    l.reg_alloc_unit = 256;
    l.warp_alloc_granularity = 4;  // register-file sub-partitions (sm_75 and later)
    l.shared_per_sm = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
    l.max_shared_per_block = static_cast<int64_t>(p.sharedMemPerBlockOptin);
    l.reserved_shared_per_block = static_cast<int64_t>(p.reservedSharedMemPerBlock);
    l.shared_alloc_unit = p.major >= 8 ? 128 : 256;  // cuda_occupancy.h's granularity
    return l;
}

}  // namespace apairs::cuda
