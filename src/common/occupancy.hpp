// Occupancy calculation and the minimal-block-size estimator (Ha et al. 2013,
// section E.1): start at one unit of work and grow a unit at a time until the
// occupancy target is met. A kernel names its unit of growth: a warp (a tile row of
// the all-pairs engine), a group of 2 to 32 threads (one small element per group), or
// a whole element's block. Plain host C++, no CUDA headers; every family calls it.
//
// The per-SM limits follow NVIDIA's occupancy calculator
// (cuda_occupancy.h, cudaOccMaxActiveBlocksPerMultiprocessor); occupancy.cpp
// says which parts of it are modelled. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace apairs {

struct DeviceLimits {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0, warp_size = 32;
  int max_threads_per_block = 0, max_threads_per_sm = 0, max_blocks_per_sm = 0;
  int regs_per_sm = 0, max_regs_per_block = 0, max_regs_per_thread = 0;
  int reg_alloc_unit = 0;          // registers are allocated per warp in units of this many
  int warp_alloc_granularity = 1;  // register allocation granularity in warps (the register file's
                                   // sub-partitions, as in CUDA's occupancy calculator)
  int64_t shared_per_sm = 0;              // bytes per SM at the maximum shared-memory carveout
  int64_t max_shared_per_block = 0;       // opt-in maximum per block, excluding the reserve
  int64_t reserved_shared_per_block = 0;  // bytes the driver reserves per block (cc >= 8.0)
  int shared_alloc_unit = 0;              // shared memory is allocated per block in units of this
};

struct KernelAttributes {
  int regs_per_thread = 0;
  int64_t shared_fixed = 0;       // static + dynamic bytes that do not grow with the block
  int threads_per_unit = 32;      // the unit of growth: a block holds 1, 2, ... units
  int64_t shared_per_unit = 0;    // dynamic bytes each unit adds (e.g. a tile row per warp)
  int max_threads_per_block = 0;  // the kernel's own limit (launch bounds); 0 = device limit
};

struct Occupancy {
  int block_threads = 0, blocks_per_sm = 0, active_warps_per_sm = 0;
  double occupancy = 0;           // active warps / max warps per SM
  const char *limiter = "";       // "warps", "blocks", "registers", "shared memory", or "cannot launch"
  int64_t shared_per_block = 0;   // bytes this block size needs (shared_for_block: before the
                                  // driver's reserve and the allocation rounding)
};

// Shared memory the kernel needs for a block of block_threads threads:
// shared_fixed + shared_per_unit * units (units rounded up).
int64_t shared_for_block(const KernelAttributes &, int block_threads);

// Resident blocks and occupancy per SM for one block size (block_threads > 0,
// else std::invalid_argument). A block that cannot launch has blocks_per_sm 0.
Occupancy occupancy_for(const DeviceLimits &, const KernelAttributes &, int block_threads);

struct BlockChoice {
  Occupancy chosen;
  double target = 0;         // as requested
  double max_reachable = 0;  // highest occupancy over all block sizes the kernel allows
  std::string reason;        // one English sentence
};

// target in (0,1], or 0 = the highest occupancy reachable by any block size the kernel allows.
// Tries one unit, two units, ... up to min(device, kernel) max threads per block and
// picks the SMALLEST block whose occupancy >= target. If the target is above what is
// reachable, picks the smallest block reaching the maximum and says so in reason.
// Throws std::invalid_argument if target is outside [0,1] or no block size can launch.
BlockChoice choose_block_size(const DeviceLimits &, const KernelAttributes &, double target);

}  // namespace apairs
