// CUDA backend as seen from the plan: plain C++, no CUDA types, so that the rest of
// the core compiles without the CUDA toolkit. Only built when the `cuda` option is on.
#pragma once

#include <cstdint>
#include <string>

#include "occupancy.hpp"
#include "problem.hpp"

namespace apairs::cuda {

// Number of usable devices; 0 when the driver or any device is missing.
int device_count();

// Throws BACKEND_UNAVAILABLE unless `device` is a usable device ordinal.
void require_device(int device);

// True when ptr is device memory (not managed, not host): the host backend refuses it.
bool is_device_pointer(const void *ptr);

// What the plan chose for the tile kernel on one device, and why.
struct LaunchConfig {
    int device = 0;
    std::string device_name;
    int cc_major = 0, cc_minor = 0, sm_count = 0;
    int r = 0, c = 0, s = 0, ds = 0;  // block r x c threads, tile (r*s) x c, slices of d'=ds
    int regs_per_thread = 0;
    BlockChoice choice;               // the occupancy estimator's pick (block = r * c threads)
    int cuda_blocks_per_sm = 0;       // cudaOccupancyMaxActiveBlocksPerMultiprocessor, cross-check
    int64_t dynamic_shared = 0;       // bytes of dynamic shared memory per block
    int64_t grid = 0;                 // blocks launched (grid-stride over tiles beyond that)
};

LaunchConfig plan_pairwise(const PairwiseProblem &pb, int device, double occupancy_target);

// Runs the planned kernel. A, B, D may each be device or host memory (staged).
// Returns after queuing when all three are device memory; else after D is written.
void execute_pairwise(const PairwiseProblem &pb, const LaunchConfig &cfg, void *stream,
                      const void *A, const void *B, void *D);

// The device's limits as the occupancy estimator wants them.
DeviceLimits device_limits(int device);

// On the current device: the attributes of the problem's kernel as the estimator wants
// them, and CUDA's own count of resident blocks per SM for a block of r warps (tests
// compare the two for every r).
KernelAttributes kernel_attributes(const PairwiseProblem &pb);
int cuda_blocks_per_sm(const PairwiseProblem &pb, int r);

}  // namespace apairs::cuda
