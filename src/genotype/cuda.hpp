// The genotype CUDA engine as the plan sees it: plain C++, no CUDA types. Only built
// when the `cuda` option is on.
#pragma once

#include <cstdint>
#include <string>

#include "genotype/problem.hpp"

namespace apairs::genotype {

// Blocks of 8 warps own kCudaTileRows x kCudaTileRows pairs (warp tiles of 64 x 32),
// staging 256 variants of the three bit planes (two in the allele form) a stage, kCudaStages stages in flight.
constexpr int kCudaTileRows = 128, kCudaStages = 4;

struct CudaConfig {
    int device = 0;
    std::string device_name;
    int sm_count = 0, regs_per_thread = 0, blocks_per_sm = 0;
    size_t smem = 0;  // dynamic shared memory of the GEMM kernel
    bool allele_form = false;  // tiles without missing calls take the allele count's two-MMA form
};

CudaConfig plan_cuda(const Problem &pb, int device);

// A, B (packed rows) and D may each be device or host memory (staged). Returns after
// queuing when all three are device memory; else after D is written.
void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream, const void *A, const void *B, void *D);

// apairs_genotype_pack on the device: g and packed device memory of `device` (arguments
// validated by the caller, except the bytes: a first kernel finds the first bad one,
// and the call fails, INVALID_VALUE, before the packing kernel runs). Waits for the
// stream.
void pack_cuda(int device, void *stream, const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
               uint8_t *packed, int64_t ldp);

}  // namespace apairs::genotype
