// The batched family's CUDA engine as the plan sees it: plain C++, no CUDA types. Only
// built when the `cuda` option is on.
#pragma once

#include <string>

#include "batched/problem.hpp"
#include "common/occupancy.hpp"

namespace apairs::batched {

// Ha et al.'s execution models: one thread computes a whole element; a group of 2 to 32
// threads of one warp shares an element (no block barriers); a block computes one
// element through shared memory.
enum class Model { ThreadPerElement, WarpGroup, BlockPerElement };
const char *model_name(Model m);  // "thread-per-element", "warp-group", "block-per-element"

// What a batched plan chose on one device, and why (every op of the family).
struct CudaConfig {
    int device = 0;
    std::string device_name;
    int cc_major = 0, cc_minor = 0, sm_count = 0;
    Model model = Model::ThreadPerElement;
    int group = 1;                 // threads per element (1 for thread-per-element)
    int block_threads = 0;         // blocks of this many threads (the estimator's pick)
    int64_t dynamic_shared = 0;    // bytes per block
    int64_t grid = 0;              // blocks launched (grid-stride beyond)
    int regs_per_thread = 0;
    BlockChoice choice;            // the minimal-block-size estimator's pick and its reason
    int cuda_blocks_per_sm = 0;    // cudaOccupancyMaxActiveBlocksPerMultiprocessor, cross-check
    std::string why_model;         // one sentence: why this model for this size and count
};

CudaConfig plan_gemm_cuda(const GemmProblem &pb, int device, double occupancy_target);

// Runs the planned kernel; A, B, C may each be device or host memory (staged through
// src/cuda/staging). Returns after queuing when all three are device memory.
void execute_gemm_cuda(const GemmProblem &pb, const CudaConfig &cfg, void *stream, const void *A,
                       const void *B, void *C);

// Cholesky (src/batched/cholesky.cu): its own kernels, the same planning (launch.cuh).
CudaConfig plan_potrf_cuda(const PotrfProblem &pb, int device, double occupancy_target);
void execute_potrf_cuda(const PotrfProblem &pb, const CudaConfig &cfg, void *stream, void *A, int32_t *info);
CudaConfig plan_potrs_cuda(const PotrsProblem &pb, int device, double occupancy_target);
void execute_potrs_cuda(const PotrsProblem &pb, const CudaConfig &cfg, void *stream, const void *A, void *B);

}  // namespace apairs::batched
