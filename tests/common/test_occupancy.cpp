// Occupancy calculator and minimal-block-size estimator, on device fixtures.
// Every expectation below was worked out by hand from the fixture limits; the
// arithmetic is in the comments.
#include "catch.hpp"

#include "common/occupancy.hpp"
#include "fixtures.hpp"

#include <stdexcept>
#include <string>
#include <vector>

using namespace apairs;
using namespace fixtures;

namespace {

// A kernel grown a warp at a time (the all-pairs engine's unit), unless `unit` says
// otherwise.
KernelAttributes kernel(int regs, int64_t shared = 0, int64_t shared_per_unit = 0, int max_threads = 0,
                        int unit = 32) {
  KernelAttributes k;
  k.regs_per_thread = regs;
  k.shared_fixed = shared;
  k.threads_per_unit = unit;
  k.shared_per_unit = shared_per_unit;
  k.max_threads_per_block = max_threads;
  return k;
}

std::vector<DeviceLimits> all_fixtures() {
  return {limits_fermi_m2090(), limits_kepler_k20(), limits_v100(), limits_a100(),
          limits_l40s(),        limits_h100_sxm(),   limits_h200()};
}

}  // namespace

TEST_CASE("fixtures carry the published limits", "[occupancy]") {
  for (const DeviceLimits &d : all_fixtures()) {
    INFO(d.name);
    CHECK(d.warp_size == 32);
    CHECK(d.max_threads_per_block == 1024);
    CHECK(d.max_threads_per_sm % d.warp_size == 0);
    CHECK(d.max_regs_per_block <= d.regs_per_sm);
    CHECK(d.max_shared_per_block + d.reserved_shared_per_block <= d.shared_per_sm);
    CHECK(d.reg_alloc_unit > 0);
    CHECK(d.shared_alloc_unit > 0);
    CHECK(d.reserved_shared_per_block == (d.cc_major >= 8 ? 1024 : 0));
  }
  CHECK(limits_h100_sxm().sm_count == 132);
  CHECK(limits_h200().sm_count == 132);
  CHECK(limits_h200().shared_per_sm == 228 * 1024);
  CHECK(limits_a100().sm_count == 108);
  CHECK(limits_a100().shared_per_sm == 164 * 1024);
  CHECK(limits_v100().sm_count == 80);
  CHECK(limits_v100().shared_per_sm == 96 * 1024);
  CHECK(limits_fermi_m2090().max_threads_per_sm == 1536);
  CHECK(limits_fermi_m2090().max_blocks_per_sm == 8);
  CHECK(limits_fermi_m2090().max_regs_per_thread == 63);
}

TEST_CASE("32 registers, no shared memory: full occupancy at the smallest block that fills", "[occupancy]") {
  const KernelAttributes k = kernel(32);

  SECTION("H100/H200/A100/V100: 32 blocks x 2 warps fill 64 warps") {
    for (const DeviceLimits &d : {limits_h100_sxm(), limits_h200(), limits_a100(), limits_v100()}) {
      INFO(d.name);
      // One warp per block: only 32 blocks may be resident, 32 of 64 warps.
      const Occupancy one = occupancy_for(d, k, 32);
      CHECK(one.blocks_per_sm == 32);
      CHECK(one.occupancy == Approx(0.5));
      CHECK(std::string(one.limiter) == "blocks");
      // 32 regs x 32 threads = 1024 registers per warp, 16384 per partition
      // = 16 warps per partition, 64 per SM: registers do not bind below 100%.
      const BlockChoice c = choose_block_size(d, k, 0);
      CHECK(c.chosen.block_threads == 64);
      CHECK(c.chosen.blocks_per_sm == 32);
      CHECK(c.chosen.active_warps_per_sm == 64);
      CHECK(c.chosen.occupancy == Approx(1.0));
      CHECK(c.max_reachable == Approx(1.0));
      CHECK(std::string(c.chosen.limiter) == "warps");  // tied with blocks and registers
    }
  }
  SECTION("Kepler K20: 16 blocks x 4 warps") {
    const BlockChoice c = choose_block_size(limits_kepler_k20(), k, 0);
    CHECK(c.chosen.block_threads == 128);
    CHECK(c.chosen.blocks_per_sm == 16);
    CHECK(c.chosen.occupancy == Approx(1.0));
  }
  SECTION("Fermi M2090: 32 registers already limit to 32 of 48 warps") {
    // 1024 registers per warp (64-register unit), 16384 per partition = 16
    // warps per partition, 2 partitions = 32 warps.
    const BlockChoice c = choose_block_size(limits_fermi_m2090(), k, 0);
    CHECK(c.max_reachable == Approx(32.0 / 48));
    CHECK(c.chosen.block_threads == 128);  // 8 blocks x 4 warps; 96 threads gives 8 x 3 = 24
    CHECK(std::string(c.chosen.limiter) == "blocks");  // tied with registers: 32 warps / 4
    CHECK(occupancy_for(limits_fermi_m2090(), k, 256).blocks_per_sm == 4);
    CHECK(std::string(occupancy_for(limits_fermi_m2090(), k, 256).limiter) == "registers");
  }
  SECTION("Fermi M2090, 20 registers: 8 blocks x 6 warps = 48 warps") {
    // 640 registers per warp, 16384 / 640 = 25 warps per partition, 50 per SM.
    const BlockChoice c = choose_block_size(limits_fermi_m2090(), kernel(20), 0);
    CHECK(c.chosen.block_threads == 192);
    CHECK(c.chosen.blocks_per_sm == 8);
    CHECK(c.chosen.occupancy == Approx(1.0));
    CHECK(occupancy_for(limits_fermi_m2090(), kernel(20), 160).occupancy == Approx(40.0 / 48));
  }
}

TEST_CASE("register-heavy kernel: 128 registers per thread", "[occupancy]") {
  const DeviceLimits d = limits_h100_sxm();
  const KernelAttributes k = kernel(128);
  // 128 x 32 = 4096 registers per warp; 16384 per partition = 4 warps, 16 per SM.
  const Occupancy one = occupancy_for(d, k, 32);
  CHECK(one.blocks_per_sm == 16);
  CHECK(one.occupancy == Approx(0.25));
  CHECK(std::string(one.limiter) == "registers");
  // 512 threads = 16 warps = 65536 registers: exactly one block.
  CHECK(occupancy_for(d, k, 512).blocks_per_sm == 1);
  // 544 threads = 17 warps, rounded up to 20 (4 partitions) x 4096 > 65536.
  CHECK(std::string(occupancy_for(d, k, 544).limiter) == "cannot launch");
  CHECK(occupancy_for(d, k, 1024).blocks_per_sm == 0);

  const BlockChoice c = choose_block_size(d, k, 0);
  CHECK(c.chosen.block_threads == 32);
  CHECK(c.max_reachable == Approx(0.25));

  SECTION("Fermi M2090 at its 63-register maximum") {
    // 63 x 32 = 2016 -> 2048 per warp; 16384 / 2048 = 8 warps per partition, 16 per SM.
    const BlockChoice f = choose_block_size(limits_fermi_m2090(), kernel(63), 0);
    CHECK(f.max_reachable == Approx(16.0 / 48));
    CHECK(f.chosen.block_threads == 64);  // 32 threads: at most 8 blocks = 8 warps
    CHECK(std::string(occupancy_for(limits_fermi_m2090(), kernel(63), 128).limiter) == "registers");
  }
}

TEST_CASE("shared-memory-heavy kernels", "[occupancy]") {
  SECTION("H100: 100 KiB per block leaves room for two blocks") {
    // (102400 + 1024 reserved) = 103424 per block; 233472 / 103424 = 2.
    const DeviceLimits d = limits_h100_sxm();
    const KernelAttributes k = kernel(32, 100 * 1024);
    const BlockChoice full = choose_block_size(d, k, 0);
    CHECK(full.chosen.block_threads == 1024);
    CHECK(full.chosen.blocks_per_sm == 2);
    CHECK(full.chosen.occupancy == Approx(1.0));
    const BlockChoice half = choose_block_size(d, k, 0.5);
    CHECK(half.chosen.block_threads == 512);
    CHECK(std::string(half.chosen.limiter) == "shared memory");
  }
  SECTION("V100: 64 KiB per block, one block, at most 50%") {
    const BlockChoice c = choose_block_size(limits_v100(), kernel(32, 64 * 1024), 0);
    CHECK(c.chosen.block_threads == 1024);
    CHECK(c.chosen.blocks_per_sm == 1);
    CHECK(c.max_reachable == Approx(0.5));
  }
  SECTION("A100: per-block reserve and 128-byte rounding") {
    const DeviceLimits d = limits_a100();
    // 82944 + 1024 = 83968, twice that is exactly 164 KiB.
    CHECK(occupancy_for(d, kernel(32, 82944), 256).blocks_per_sm == 2);
    // One byte more rounds up to 84096: only one block fits.
    CHECK(occupancy_for(d, kernel(32, 82945), 256).blocks_per_sm == 1);
    // The opt-in maximum (163 KiB) launches, one byte more does not.
    CHECK(occupancy_for(d, kernel(32, 163 * 1024), 256).blocks_per_sm == 1);
    CHECK(std::string(occupancy_for(d, kernel(32, 163 * 1024 + 1), 256).limiter) == "cannot launch");
  }
  SECTION("shared memory that grows per warp") {
    const KernelAttributes k = kernel(32, 4096, 1024);
    const Occupancy o = occupancy_for(limits_a100(), k, 100);  // 4 warps
    CHECK(o.shared_per_block == 4096 + 4 * 1024);
    CHECK(shared_for_block(k, 100) == 4096 + 4 * 1024);
    // (8192 + 1024) = 9216 per block, 167936 / 9216 = 18 blocks; 18 x 4 > 64 warps.
    CHECK(o.blocks_per_sm == 16);
    CHECK(std::string(o.limiter) == "warps");
  }
}

TEST_CASE("the estimator grows a block by the kernel's unit of work", "[occupancy]") {
  const DeviceLimits d = limits_h100_sxm();  // 64 warps, 32 blocks, 228 KiB per SM
  SECTION("a group of 8 threads: blocks of 8, 16, ... threads") {
    // 16 registers: never the limit. A block of 8 to 32 threads takes one warp, and 32
    // blocks per SM give 32 warps: 50%. 40 threads (5 units) take 2 warps: 32 blocks
    // fill all 64 warps, 100%, the first size to reach it (occupancy counts warps; a
    // family that wants full warps makes its unit 32 threads).
    const KernelAttributes k = kernel(16, 0, 0, 0, 8);
    CHECK(occupancy_for(d, k, 8).occupancy == Approx(0.5));
    const BlockChoice c = choose_block_size(d, k, 0);
    CHECK(c.chosen.block_threads == 40);
    CHECK(c.chosen.occupancy == Approx(1.0));
    // A target of 50% is met by the smallest block: one unit of 8 threads.
    CHECK(choose_block_size(d, k, 0.5).chosen.block_threads == 8);
    // Every block tried is a whole number of units.
    CHECK(choose_block_size(d, k, 0.7).chosen.block_threads % 8 == 0);
  }
  SECTION("an element's whole block of 96 threads, with shared memory per element") {
    // One element = 96 threads (3 warps) and 20 KiB of shared memory. Blocks of 1, 2, 3
    // elements: 96 threads, 20480 + 1024 reserved = 21504 B (10 blocks, 30 warps,
    // 46.9%); 192 threads, 41984 B (5 blocks, 30 warps); 288 threads, 62464 B (3
    // blocks, 27 warps); ... 960 threads, 205824 B (1 block, 30 warps). The highest,
    // 30/64, is first reached at 96.
    const KernelAttributes k = kernel(32, 0, 20 * 1024, 0, 96);
    CHECK(shared_for_block(k, 96) == 20 * 1024);
    CHECK(shared_for_block(k, 288) == 3 * 20 * 1024);
    const BlockChoice c = choose_block_size(d, k, 0);
    CHECK(c.chosen.block_threads == 96);
    CHECK(c.chosen.blocks_per_sm == 10);
    CHECK(c.chosen.occupancy == Approx(30.0 / 64));
    CHECK(std::string(c.chosen.limiter) == "shared memory");
  }
  SECTION("a unit of no threads is refused") {
    CHECK_THROWS_AS(choose_block_size(d, kernel(32, 0, 0, 0, 0), 0), std::invalid_argument);
  }
}

TEST_CASE("kernels that cannot launch anywhere throw", "[occupancy]") {
  CHECK_THROWS_AS(choose_block_size(limits_a100(), kernel(32, 200 * 1024), 0), std::invalid_argument);
  CHECK_THROWS_AS(choose_block_size(limits_h100_sxm(), kernel(32, 227 * 1024 + 1), 0), std::invalid_argument);
  CHECK_THROWS_AS(choose_block_size(limits_fermi_m2090(), kernel(64), 0), std::invalid_argument);
  CHECK_THROWS_AS(choose_block_size(limits_h200(), kernel(32, 0, 228 * 1024), 0), std::invalid_argument);
  CHECK_THROWS_WITH(choose_block_size(limits_v100(), kernel(32, 97 * 1024), 0),
                    Catch::Contains("Tesla V100-SXM2") && Catch::Contains("shared memory"));
  // The largest launchable kernel does not throw.
  CHECK_NOTHROW(choose_block_size(limits_h100_sxm(), kernel(255, 227 * 1024), 0));
}

TEST_CASE("invalid arguments throw", "[occupancy]") {
  CHECK_THROWS_AS(choose_block_size(limits_a100(), kernel(32), -0.1), std::invalid_argument);
  CHECK_THROWS_AS(choose_block_size(limits_a100(), kernel(32), 1.5), std::invalid_argument);
  CHECK_THROWS_AS(occupancy_for(limits_a100(), kernel(32), 0), std::invalid_argument);
}

// Ha et al. 2013, Table I: 64 threads 50%, 128 75%, 192/256/512/768 100%;
// their minimal-block strategy picks 192, Thrust's maximal one 768.
//
// A brute-force search over every fixture, 0..255 registers, 0..64 KiB of
// fixed shared memory and 0..4 KiB per warp (128-byte steps) finds this row
// pattern only on the L40S, and only with shared memory that grows per warp:
//  - Fermi (the paper's Tesla C2050 has the M2090's SM): at most 8 blocks of
//    48 warps, so 64-thread blocks reach 16/48 = 33%, never 50%.
//  - Kepler, Volta, Ampere GA100, Hopper: 64 warps per SM; 768 threads = 24
//    warps fit twice, 75%, and 192 threads = 6 warps at most 60/64.
//  - A 48-warp SM with >= 12 blocks (cc 8.6/8.9) needs 12 blocks at 2 warps
//    but 9 at 4 warps: no register count does that (floor(W/2) = 12 and
//    floor(W/4) = 9 have no common W), shared memory of S + P x warps does.
// Pinned case: 32 registers, 5376 bytes fixed (5 KiB tile + 256 B scratch),
// 1 KiB staged per warp; 1..40 registers give the same pattern.
TEST_CASE("Ha et al. Table I pattern on a 48-warp SM (L40S)", "[occupancy]") {
  const DeviceLimits d = limits_l40s();
  const KernelAttributes k = kernel(32, 5376, 1024);
  // Allocated per block: 5376 + 1024 w + 1024 reserved, rounded to 128.
  CHECK(occupancy_for(d, k, 64).occupancy == Approx(0.50));   // 102400 / 8448  = 12 x 2 warps
  CHECK(occupancy_for(d, k, 128).occupancy == Approx(0.75));  // 102400 / 10496 =  9 x 4 warps
  CHECK(occupancy_for(d, k, 192).occupancy == Approx(1.0));   // 102400 / 12544 =  8 x 6 warps
  CHECK(occupancy_for(d, k, 256).occupancy == Approx(1.0));   // warps: 6 x 8
  CHECK(occupancy_for(d, k, 512).occupancy == Approx(1.0));   // warps: 3 x 16
  CHECK(occupancy_for(d, k, 768).occupancy == Approx(1.0));   // warps: 2 x 24
  CHECK(std::string(occupancy_for(d, k, 128).limiter) == "shared memory");

  const BlockChoice ours = choose_block_size(d, k, 0);
  CHECK(ours.chosen.block_threads == 192);
  CHECK(ours.max_reachable == Approx(1.0));
  CHECK(choose_block_size(d, k, 0.75).chosen.block_threads == 128);
  CHECK(choose_block_size(d, k, 0.5).chosen.block_threads == 64);

  // The maximal-block strategy (Thrust): the largest block at full occupancy.
  int largest = 0;
  for (int t = 32; t <= d.max_threads_per_block; t += 32)
    if (occupancy_for(d, k, t).occupancy == Approx(1.0)) largest = t;
  CHECK(largest == 768);

  // Launch bounds of 128 threads cap what is reachable.
  const BlockChoice capped = choose_block_size(d, kernel(32, 5376, 1024, 128), 0);
  CHECK(capped.chosen.block_threads == 128);
  CHECK(capped.max_reachable == Approx(0.75));
}

TEST_CASE("the Table I pattern is out of reach on Fermi and on 64-warp SMs", "[occupancy]") {
  const KernelAttributes light = kernel(1);  // nothing but the warp and block limits bind
  CHECK(occupancy_for(limits_fermi_m2090(), light, 64).occupancy == Approx(16.0 / 48));
  CHECK(occupancy_for(limits_kepler_k20(), light, 192).occupancy == Approx(60.0 / 64));
  for (const DeviceLimits &d : {limits_kepler_k20(), limits_v100(), limits_a100(), limits_h100_sxm()}) {
    INFO(d.name);
    CHECK(occupancy_for(d, light, 768).occupancy == Approx(0.75));
  }
}

TEST_CASE("a lower target picks a smaller block", "[occupancy]") {
  const DeviceLimits d = limits_h100_sxm();
  const KernelAttributes k = kernel(32, 100 * 1024);
  const BlockChoice max = choose_block_size(d, k, 0);
  const BlockChoice half = choose_block_size(d, k, 0.5);
  CHECK(half.chosen.block_threads < max.chosen.block_threads);
  CHECK(half.chosen.occupancy >= 0.5);
  CHECK(half.target == 0.5);
  CHECK_THAT(half.reason, Catch::Contains("target"));
}

TEST_CASE("a target above what is reachable falls back to the maximum", "[occupancy]") {
  const BlockChoice c = choose_block_size(limits_h100_sxm(), kernel(128), 0.5);
  CHECK(c.chosen.block_threads == 32);
  CHECK(c.chosen.occupancy == Approx(0.25));
  CHECK(c.max_reachable == Approx(0.25));
  CHECK_THAT(c.reason, Catch::Contains("above"));
  CHECK_THAT(c.reason, Catch::Contains("25%"));
  CHECK_THAT(c.reason, Catch::Contains("registers"));
}

TEST_CASE("choices are whole warps, minimal, and explained", "[occupancy]") {
  const std::vector<KernelAttributes> kernels = {
      kernel(32), kernel(63), kernel(128), kernel(40, 16 * 1024), kernel(24, 2048, 512),
      kernel(32, 5376, 1024), kernel(48, 0, 0, 256)};
  for (const DeviceLimits &d : all_fixtures())
    for (const KernelAttributes &k : kernels)
      for (double target : {0.0, 0.25, 0.5, 0.75, 1.0}) {
        if (k.regs_per_thread > d.max_regs_per_thread) continue;
        INFO(d.name << ", " << k.regs_per_thread << " regs, " << k.shared_fixed << " + "
                    << k.shared_per_unit << "/warp B, target " << target);
        const BlockChoice c = choose_block_size(d, k, target);
        const Occupancy &o = c.chosen;
        CHECK(o.block_threads > 0);
        CHECK(o.block_threads % d.warp_size == 0);
        CHECK(o.block_threads <= (k.max_threads_per_block ? k.max_threads_per_block : d.max_threads_per_block));
        CHECK(o.blocks_per_sm > 0);
        CHECK(o.occupancy <= c.max_reachable + 1e-12);
        const double wanted = target > 0 && target <= c.max_reachable ? target : c.max_reachable;
        CHECK(o.occupancy >= wanted - 1e-9);
        for (int t = d.warp_size; t < o.block_threads; t += d.warp_size)
          CHECK(occupancy_for(d, k, t).occupancy < wanted - 1e-9);
        CHECK_THAT(c.reason, Catch::Contains(o.limiter));
        CHECK_THAT(c.reason, Catch::Contains(std::to_string(o.block_threads) + " threads"));
      }
}
