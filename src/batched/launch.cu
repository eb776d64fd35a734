#include "batched/launch.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>

#include "cuda/device.hpp"
#include "cuda/runtime.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

CudaConfig plan_kernel(const KernelSpec &k, int64_t batch, int device, double occupancy_target, int units_min,
                       const std::string &what) {
    require_device(device);
    DeviceScope scope(device);
    // One plan at a time: the carveout set on the function below is what CUDA's occupancy
    // count at the end reads, and plans of one kernel may ask for different carveouts
    // (potrs's and getrs's stream kernels: AoS and SoA).
    static std::mutex planning;
    const std::lock_guard<std::mutex> hold(planning);
    DeviceLimits limits = device_limits(device);
    check(cudaFuncSetAttribute(k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(limits.max_shared_per_block)),
          "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)");
    // A smaller carveout: the percentage rounded down, which the driver rounds up to the
    // supported capacity asked for; the estimator plans with that capacity.
    int carveout = int(cudaSharedmemCarveoutMaxShared);
    const int64_t full = limits.shared_per_sm;
    const bool carved = k.shared_per_sm > 0 && k.shared_per_sm < full;
    if (carved) {
        carveout = int(k.shared_per_sm * 100 / full);
        limits.shared_per_sm = k.shared_per_sm;
        limits.max_shared_per_block =
            std::min(limits.max_shared_per_block, k.shared_per_sm - limits.reserved_shared_per_block);
    }
    // Each launch asks for the plan's carveout (launch_raw); the function's attribute is
    // set too for CUDA's occupancy count below (the last plan made of a kernel sets it).
    check(cudaFuncSetAttribute(k.fn, cudaFuncAttributePreferredSharedMemoryCarveout, carveout),
          "cudaFuncSetAttribute(PreferredSharedMemoryCarveout)");

    cudaFuncAttributes fa{};
    check(cudaFuncGetAttributes(&fa, k.fn), "cudaFuncGetAttributes");
    CudaConfig cfg;
    cfg.device = device;
    cfg.device_name = limits.name;
    cfg.cc_major = limits.cc_major;
    cfg.cc_minor = limits.cc_minor;
    cfg.sm_count = limits.sm_count;
    cfg.model = k.model;
    cfg.group = k.group;
    cfg.sub = k.sub;
    cfg.regs_per_thread = fa.numRegs;
    cfg.kernel = k.fn;
    cfg.carveout = carveout;

    KernelAttributes ka;
    ka.regs_per_thread = fa.numRegs;
    ka.shared_fixed = int64_t(fa.sharedSizeBytes) + k.block_shared;
    ka.max_threads_per_block = fa.maxThreadsPerBlock;
    for (;;) {
        ka.threads_per_unit = k.unit_threads * units_min;
        ka.shared_per_unit = k.unit_shared * units_min;
        try {
            cfg.choice = choose_block_size(limits, ka, occupancy_target);
            break;
        } catch (const std::invalid_argument &e) {
            if (units_min > 1) {
                units_min /= 2;
                continue;
            }
            fail(APAIRS_ERROR_UNSUPPORTED,
                 "{}: no launch configuration of {} ({} bytes of shared memory per {} threads) fits {}: {}", what,
                 k.name, k.unit_shared, k.unit_threads, limits.name, e.what());
        }
    }
    cfg.block_threads = cfg.choice.chosen.block_threads;
    const int units = cfg.block_threads / k.unit_threads;
    cfg.dynamic_shared = k.block_shared + int64_t(units) * k.unit_shared;
    const int64_t per_block = int64_t(units) * k.unit_elements, work = k.items > 0 ? k.items : batch;
    const int64_t blocks = (work + per_block - 1) / per_block;
    // A resident grid (one wave at the estimated occupancy); grid-stride beyond it.
    const int64_t resident = int64_t(std::max(1, cfg.choice.chosen.blocks_per_sm)) * limits.sm_count;
    cfg.grid = std::max<int64_t>(1, std::min({blocks, resident, int64_t(0x7fffffff)}));

    int cuda_blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&cuda_blocks, k.fn, cfg.block_threads,
                                                        size_t(cfg.dynamic_shared)),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    cfg.cuda_blocks_per_sm = cuda_blocks;
    cfg.why_model = fmt::format("{} ({}, {} {} per block of {} threads)", k.why, k.name, per_block,
                                k.items > 0 ? "work items" : "elements", cfg.block_threads);
    if (carved)
        cfg.why_model += fmt::format("; under a {} KB shared-memory carveout (the device's largest {} KB: the rest "
                                     "is L1)",
                                     k.shared_per_sm / 1024, full / 1024);
    return cfg;
}

CudaConfig plan_rows(const KernelSpec &k, bool soa, int64_t es, int64_t batch, int device, double occupancy_target,
                     const std::string &what) {
    const CudaConfig base = plan_kernel(k, batch, device, occupancy_target, 1, what);
    if (!soa) return base;
    const int base_warps = base.block_threads / 32, base_sm = base_warps * base.choice.chosen.blocks_per_sm;
    auto resized = [&](CudaConfig c, const char *runs) {
        const int warps = c.block_threads / 32;
        c.why_model += fmt::format("; {} warps a block where the estimator's pick was {}, so that each SoA entry's "
                                   "copies take {} ({} warps an SM, {} at {})",
                                   warps, base_warps, runs, warps * c.choice.chosen.blocks_per_sm, base_sm,
                                   base_warps);
        return c;
    };
    // Whole sectors: blocks of a multiple of `whole` warps (f32 8, f64 4), where that keeps
    // 3/4 of the pick's warps an SM.
    int whole = 1;
    while (whole * es % 32 != 0) whole *= 2;
    if (base_warps % whole == 0) return base;
    {
        const CudaConfig c = plan_kernel(k, batch, device, occupancy_target, whole, what);
        const int warps = c.block_threads / 32;
        if (warps % whole == 0 && 4 * warps * c.choice.chosen.blocks_per_sm >= 3 * base_sm)
            return resized(c, "whole 32-byte sectors");
    }
    // Else, where the pick's runs are shorter than a sector (fewer warps than `whole`), the
    // largest block in units of a power of two warps towards it that keeps 3/4 of them; a
    // pick of longer runs stays (an aligned run shorter than the pick's loses: f32 potrf n
    // = 128, 2 warps 1.019 ms against 7 warps' 0.881, H200 run 341).
    for (int w = whole / 2; w > base_warps; w /= 2) {
        const CudaConfig c = plan_kernel(k, batch, device, occupancy_target, w, what);
        const int warps = c.block_threads / 32;
        if (warps >= w && 4 * warps * c.choice.chosen.blocks_per_sm >= 3 * base_sm)
            return resized(c, fmt::format("runs of {} bytes", warps * es).c_str());
    }
    return base;
}

void launch_planned_raw(const CudaConfig &cfg, void *stream, void *args, const char *what) {
    void *params[] = {args};
    launch_raw(cfg.kernel, dim3(unsigned(cfg.grid)), dim3(unsigned(cfg.block_threads)), params, cfg.dynamic_shared,
               static_cast<cudaStream_t>(stream), what, cfg.carveout);
}

}  // namespace apairs::batched
