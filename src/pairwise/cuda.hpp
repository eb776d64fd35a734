// The all-pairs CUDA engine as the plan sees it: plain C++, no CUDA types. Only built
// when the `cuda` option is on.
#pragma once

#include <cstdint>
#include <string>

#include "common/occupancy.hpp"
#include "cuda/blas.hpp"
#include "pairwise/problem.hpp"

namespace apairs::pairwise {

// What the plan chose for the tile kernel on one device, and why.
struct CudaConfig {
    int device = 0;
    std::string device_name;
    int cc_major = 0, cc_minor = 0, sm_count = 0;
    int warps = 0;                    // block: 16 x (2 warps) threads
    int tm = 0, tn = 0;               // outputs per thread: tm rows x tn columns
    int bm = 0, bn = 0;               // tile of D: bm = 2 warps tm rows, bn = 16 tn columns
    int ds = 0;                       // d': dimensions per slice (the summation's blocking)
    int regs_per_thread = 0;
    BlockChoice choice;               // the occupancy estimator's pick (unit: a warp), raised to the reuse floor
    int cuda_blocks_per_sm = 0;       // cudaOccupancyMaxActiveBlocksPerMultiprocessor, cross-check
    int64_t dynamic_shared = 0;       // bytes of dynamic shared memory per block
    int64_t grid = 0;                 // blocks launched (grid-stride over tiles beyond that)
    int64_t ntiles = 0, tiles_j = 0;  // tiles of D, and per row of tiles (chosen with the block)
    // DOT and COSINE, and float L2 and SQEUCLIDEAN with d >= 256: cuBLAS's GEMM when it
    // loads (then the kernel above is only the fallback), or why not.
    std::shared_ptr<const cuda::Gemm> gemm;
    std::string gemm_unavailable;
    int64_t l2_rows = 0;              // L2 / SQEUCLIDEAN through the double GEMM: rows of A a chunk
    // The tile kernel's transposed copies of A and B: at most this many bytes at once
    // (else chunks of rows of A against chunks of rows of B; at least 16 bytes of rows of
    // each, 2 x 16 bytes x d rounded up to 32, when one row is larger than that).
    int64_t scratch_bytes = int64_t(1) << 30;
};

// Float L2 and SQEUCLIDEAN take the double GEMM from this many dimensions (below, the
// tile kernel is as fast: run 44).
constexpr int64_t kGemmL2MinDims = 256;

// tf32: APAIRS_OPTION_TF32 (F32 DOT and COSINE through cuBLAS on the TF32 tensor cores).
CudaConfig plan_cuda(const Problem &pb, int device, double occupancy_target, bool tf32 = false);

// Runs the planned kernel. A, B, D may each be device or host memory (staged).
// Returns after queuing when all three are device memory; else after D is written.
void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream, const void *A, const void *B,
                  void *D);

// On the current device: the attributes of the problem's kernel as the estimator wants
// them, and CUDA's own count of resident blocks per SM for a block of r warps (tests
// compare the two for every block of 1, 2, ... warps).
KernelAttributes kernel_attributes(const Problem &pb);
int cuda_blocks_per_sm(const Problem &pb, int warps);

}  // namespace apairs::pairwise
