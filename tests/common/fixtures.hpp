// Device fixtures for the estimator's tests: published per-SM limits (CUDA C
// Programming Guide, compute capability tables; whitepapers for SM counts) and the
// occupancy calculator's allocation granularities. Test data, not library code.
#pragma once

#include "common/occupancy.hpp"

namespace fixtures {

using apairs::DeviceLimits;

// Fixtures. Per-SM limits from the CUDA C Programming Guide's compute
// capability table (max 255 registers per thread on every architecture here;
// cuda_occupancy.h checks against 256 on cc >= 7, which no compiled kernel
// reaches). Granularities from cuda_occupancy.h (CUDA 13: cc 3.x-7.x shared
// 256 B, cc >= 8 128 B; 256 registers per warp; 4 sub-partitions), and for
// Fermi, which CUDA 13 no longer covers, from the CUDA 8 header: 128 B shared,
// 64 registers per warp, 2 sub-partitions. (That header also rounds warps of
// 21, 22, 29, 30, 37, 38, 45 or 46 registers/thread to 128 registers on Fermi;
// not modelled.)

inline DeviceLimits limits_fermi_m2090() {
  DeviceLimits d;
  d.name = "Tesla M2090";
  d.cc_major = 2, d.cc_minor = 0;
  d.sm_count = 16;
  d.max_threads_per_block = 1024, d.max_threads_per_sm = 1536, d.max_blocks_per_sm = 8;
  d.regs_per_sm = 32768, d.max_regs_per_block = 32768, d.max_regs_per_thread = 63;
  d.reg_alloc_unit = 64, d.warp_alloc_granularity = 2;
  d.shared_per_sm = 48 * 1024, d.max_shared_per_block = 48 * 1024;
  d.shared_alloc_unit = 128;
  return d;
}

inline DeviceLimits limits_kepler_k20() {
  DeviceLimits d;
  d.name = "Tesla K20";
  d.cc_major = 3, d.cc_minor = 5;
  d.sm_count = 13;
  d.max_threads_per_block = 1024, d.max_threads_per_sm = 2048, d.max_blocks_per_sm = 16;
  d.regs_per_sm = 65536, d.max_regs_per_block = 65536, d.max_regs_per_thread = 255;
  d.reg_alloc_unit = 256, d.warp_alloc_granularity = 4;
  d.shared_per_sm = 48 * 1024, d.max_shared_per_block = 48 * 1024;
  d.shared_alloc_unit = 256;
  return d;
}

inline DeviceLimits limits_v100() {
  DeviceLimits d;
  d.name = "Tesla V100-SXM2";
  d.cc_major = 7, d.cc_minor = 0;
  d.sm_count = 80;
  d.max_threads_per_block = 1024, d.max_threads_per_sm = 2048, d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536, d.max_regs_per_block = 65536, d.max_regs_per_thread = 255;
  d.reg_alloc_unit = 256, d.warp_alloc_granularity = 4;
  d.shared_per_sm = 96 * 1024, d.max_shared_per_block = 96 * 1024;
  d.shared_alloc_unit = 256;
  return d;
}

// Ampere and Hopper: the driver reserves 1 KB per block, which is why the
// opt-in per-block maximum is 1 KB below the per-SM carveout.
inline DeviceLimits limits_a100() {
  DeviceLimits d;
  d.name = "A100-SXM4";
  d.cc_major = 8, d.cc_minor = 0;
  d.sm_count = 108;
  d.max_threads_per_block = 1024, d.max_threads_per_sm = 2048, d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536, d.max_regs_per_block = 65536, d.max_regs_per_thread = 255;
  d.reg_alloc_unit = 256, d.warp_alloc_granularity = 4;
  d.shared_per_sm = 164 * 1024, d.max_shared_per_block = 163 * 1024, d.reserved_shared_per_block = 1024;
  d.shared_alloc_unit = 128;
  return d;
}

inline DeviceLimits limits_l40s() {
  DeviceLimits d;
  d.name = "L40S";
  d.cc_major = 8, d.cc_minor = 9;
  d.sm_count = 142;
  d.max_threads_per_block = 1024, d.max_threads_per_sm = 1536, d.max_blocks_per_sm = 24;
  d.regs_per_sm = 65536, d.max_regs_per_block = 65536, d.max_regs_per_thread = 255;
  d.reg_alloc_unit = 256, d.warp_alloc_granularity = 4;
  d.shared_per_sm = 100 * 1024, d.max_shared_per_block = 99 * 1024, d.reserved_shared_per_block = 1024;
  d.shared_alloc_unit = 128;
  return d;
}

inline DeviceLimits limits_h100_sxm() {
  DeviceLimits d;
  d.name = "H100 SXM5";
  d.cc_major = 9, d.cc_minor = 0;
  d.sm_count = 132;
  d.max_threads_per_block = 1024, d.max_threads_per_sm = 2048, d.max_blocks_per_sm = 32;
  d.regs_per_sm = 65536, d.max_regs_per_block = 65536, d.max_regs_per_thread = 255;
  d.reg_alloc_unit = 256, d.warp_alloc_granularity = 4;
  d.shared_per_sm = 228 * 1024, d.max_shared_per_block = 227 * 1024, d.reserved_shared_per_block = 1024;
  d.shared_alloc_unit = 128;
  return d;
}

// Same GH100 SM and SM count as the H100 SXM; only the memory differs.
inline DeviceLimits limits_h200() {
  DeviceLimits d = limits_h100_sxm();
  d.name = "H200";
  return d;
}

}  // namespace fixtures
