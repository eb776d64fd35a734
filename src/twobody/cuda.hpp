// The two-body CUDA engine as the plan sees it: plain C++, no CUDA types. Only built
// when the `cuda` option is on.
#pragma once

#include <cstdint>
#include <string>

#include "twobody/host.hpp"

namespace apairs::twobody {

// What the plan chose on one device, and why.
struct CudaConfig {
    int device = 0;
    std::string device_name;
    int cc_major = 0, cc_minor = 0, sm_count = 0;
    int threads = 0;          // per block: one point of A per thread
    int64_t grid = 0;         // blocks (grid-stride over the tiles beyond that)
    int blocks_per_sm = 0;    // cudaOccupancyMaxActiveBlocksPerMultiprocessor for that block
    int regs = 0;             // registers per thread of the kernel
    int64_t stack = 0;        // local-memory bytes per thread (kNN lists longer than 32)
    int copies = 0;           // counts and histograms: shared-memory copies per block
                              // (one per warp, or 1), 0: global atomics
    int fast = 0;             // the reduce kernel's compile-time specialisation without weights
                              // (cuda.cu's Fast), 0: the generic kernel
    int64_t shared = 0;       // dynamic shared memory per block, bytes
    int64_t shared_plain = 0; // the same for an execute without weights (the grid is sized for it)
    int kmax = 0;             // kNN: the compiled list length (k rounded up)
    bool fixed_d = false;     // d = 3 compiled in (the point in registers), else any d
    std::string why;
};

CudaConfig plan_cuda(const Problem &pb, int device);

// Runs the planned kernels. A, B, weights and outputs may be device or host memory
// (staged). Returns after queuing when everything is device memory, except weighted
// histograms, which check their weights on the device and wait for that check.
void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream, const void *A, const void *B,
                  const Outputs &out);

}  // namespace apairs::twobody
