// Occupancy per SM after NVIDIA's occupancy calculator
// (/usr/local/cuda/include/cuda_occupancy.h, CUDA 13, function
// cudaOccMaxActiveBlocksPerMultiprocessor). Resident blocks per SM are the
// minimum of four limits:
//
//   warps          max warps per SM / warps per block (0 if the block is too big)
//   blocks         the architecture's max resident blocks per SM
//   registers      registers are allocated per warp, rounded up to reg_alloc_unit;
//                  each of warp_alloc_granularity register-file sub-partitions
//                  holds floor(regs_per_sm / partitions / regs_per_warp) warps
//                  (cudaOccMaxBlocksPerSMRegsLimit). The hardware launch check
//                  assumes the block's warps are spread over all partitions, so
//                  regs_per_warp * roundup(warps, partitions) must fit in
//                  max_regs_per_block.
//   shared memory  (bytes + reserved_shared_per_block) rounded up to
//                  shared_alloc_unit per block; the block cannot launch if that
//                  exceeds max_shared_per_block + reserved (cudaOccSMemPerBlock,
//                  opt-in limit: we assume the kernel opts in to the maximum);
//                  blocks = shared_per_sm / allocated bytes.
//
// Shared memory per SM: on Volta and later cudaOccSMemPreferenceVoltaPlus maps
// the default state (carveoutConfig SHAREDMEM_CARVEOUT_DEFAULT, cacheConfig
// CACHE_PREFER_NONE) to the full sharedMemPerMultiprocessor, i.e. the maximum
// carveout; before Volta, cudaOccSMemPreference with CACHE_PREFER_NONE also
// takes the high (48 KB) split. So shared_per_sm is the maximum in both cases.
// Not modelled: partitioned global caching (cc 5.2/6.x only, off by default),
// block barriers and virtual resources (kernel attributes we do not carry),
// and the GP100 (cc 6.0) two-partition special case.
#include "common/occupancy.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace apairs {
namespace {

int64_t round_up(int64_t x, int64_t unit) { return unit > 0 ? (x + unit - 1) / unit * unit : x; }

int block_limit(const DeviceLimits &d, const KernelAttributes &k) {
  return k.max_threads_per_block > 0 ? std::min(d.max_threads_per_block, k.max_threads_per_block)
                                     : d.max_threads_per_block;
}

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g%%", 100 * x);
  return buf;
}

std::string describe(const Occupancy &o) {
  return std::to_string(o.block_threads) + " threads, " + std::to_string(o.blocks_per_sm) +
         " blocks/SM, limited by " + o.limiter;
}

}  // namespace

int64_t shared_for_block(const KernelAttributes &k, int block_threads) {
  const int64_t units = (block_threads + k.threads_per_unit - 1) / k.threads_per_unit;
  return k.shared_fixed + k.shared_per_unit * units;
}

Occupancy occupancy_for(const DeviceLimits &d, const KernelAttributes &k, int block_threads) {
  if (block_threads <= 0) throw std::invalid_argument("occupancy_for: block_threads must be positive");
  const int warps = (block_threads + d.warp_size - 1) / d.warp_size;
  const int max_warps_per_sm = d.max_threads_per_sm / d.warp_size;

  const int by_warps = block_threads > block_limit(d, k) ? 0 : max_warps_per_sm / warps;
  const int by_blocks = d.max_blocks_per_sm;

  int by_regs = by_blocks;  // a kernel without registers is not limited by them
  const int64_t regs_per_warp = round_up(int64_t(k.regs_per_thread) * d.warp_size, d.reg_alloc_unit);
  const int partitions = d.warp_alloc_granularity;
  if (k.regs_per_thread > d.max_regs_per_thread ||
      regs_per_warp * round_up(warps, partitions) > d.max_regs_per_block)
    by_regs = 0;
  else if (regs_per_warp > 0)
    by_regs = int(d.regs_per_sm / partitions / regs_per_warp * partitions / warps);

  const int64_t shared = shared_for_block(k, block_threads);
  const int64_t allocated = round_up(shared + d.reserved_shared_per_block, d.shared_alloc_unit);
  int by_shared = by_blocks;  // a kernel without shared memory is not limited by it
  if (allocated > d.max_shared_per_block + d.reserved_shared_per_block)
    by_shared = 0;
  else if (allocated > 0)
    by_shared = int(d.shared_per_sm / allocated);

  Occupancy o;
  o.block_threads = block_threads;
  o.shared_per_block = shared;
  o.blocks_per_sm = std::min({by_warps, by_blocks, by_regs, by_shared});
  o.active_warps_per_sm = o.blocks_per_sm * warps;
  o.occupancy = double(o.active_warps_per_sm) / max_warps_per_sm;
  // On a tie the first limit in this order is reported.
  o.limiter = o.blocks_per_sm == 0      ? "cannot launch"
              : o.blocks_per_sm == by_warps  ? "warps"
              : o.blocks_per_sm == by_blocks ? "blocks"
              : o.blocks_per_sm == by_regs   ? "registers"
                                             : "shared memory";
  return o;
}

BlockChoice choose_block_size(const DeviceLimits &d, const KernelAttributes &k, double target) {
  if (!(target >= 0 && target <= 1))
    throw std::invalid_argument("choose_block_size: target occupancy must be in [0, 1], got " +
                                std::to_string(target));
  constexpr double eps = 1e-9;
  const int max_threads = block_limit(d, k);

  if (k.threads_per_unit < 1)
    throw std::invalid_argument("choose_block_size: threads_per_unit must be positive, got " +
                                std::to_string(k.threads_per_unit));
  Occupancy best, first_at_target;  // smallest block reaching the maximum / the target
  for (int t = k.threads_per_unit; t <= max_threads; t += k.threads_per_unit) {
    const Occupancy o = occupancy_for(d, k, t);
    if (o.occupancy > best.occupancy + eps) best = o;
    if (target > 0 && first_at_target.blocks_per_sm == 0 && o.occupancy >= target - eps)
      first_at_target = o;
  }
  if (best.blocks_per_sm == 0)
    throw std::invalid_argument(
        "choose_block_size: no block size of 1 to " + std::to_string(max_threads / k.threads_per_unit) +
        " units of " + std::to_string(k.threads_per_unit) + " threads can launch on " + d.name +
        " (kernel needs " + std::to_string(k.regs_per_thread) + " registers/thread, device allows " +
        std::to_string(d.max_regs_per_thread) + "; " + std::to_string(shared_for_block(k, k.threads_per_unit)) +
        " bytes of shared memory at one unit, device allows " +
        std::to_string(d.max_shared_per_block) + " per block)");

  BlockChoice c;
  c.target = target;
  c.max_reachable = best.occupancy;
  if (target == 0) {
    c.chosen = best;
    c.reason = "smallest block reaching the highest occupancy this kernel can reach (" +
               percent(best.occupancy) + "): " + describe(best);
  } else if (first_at_target.blocks_per_sm > 0) {
    c.chosen = first_at_target;
    c.reason = "smallest block reaching the target occupancy " + percent(target) + " (" +
               percent(first_at_target.occupancy) + "): " + describe(first_at_target);
  } else {
    c.chosen = best;
    c.reason = "target occupancy " + percent(target) + " is above the highest this kernel can reach (" +
               percent(best.occupancy) + "); smallest block reaching that: " + describe(best);
  }
  return c;
}

}  // namespace apairs
