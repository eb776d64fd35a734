// The batched family's CUDA engine as the plan sees it: plain C++, no CUDA types. Only
// built when the `cuda` option is on.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "batched/problem.hpp"
#include "common/occupancy.hpp"
#include "cuda/blas.hpp"

namespace apairs::batched {

// Ha et al.'s execution models: one thread computes a whole element; a group of 2 to 32
// threads of one warp shares an element (no block barriers); a block computes one
// element through shared memory. The layout adapter moves tiles, not elements.
enum class Model { ThreadPerElement, WarpGroup, BlockPerElement, Tiles };
// "thread-per-element", "warp-group", "block-per-element", "tiles"
const char *model_name(Model m);

// What a batched plan chose on one device, and why (every op of the family).
struct CudaConfig {
    int device = 0;
    std::string device_name;
    int cc_major = 0, cc_minor = 0, sm_count = 0;
    Model model = Model::ThreadPerElement;
    int group = 1;                 // threads per element (1 for thread-per-element)
    int sub = 0;                   // block-per-element: threads per element; SoA split: warps per 32 elements
    int block_threads = 0;         // blocks of this many threads (the estimator's pick)
    int64_t dynamic_shared = 0;    // bytes per block
    int carveout = 100;            // the shared-memory carveout each launch asks for (percent of the largest)
    int64_t grid = 0;              // blocks launched (grid-stride beyond)
    int regs_per_thread = 0;
    BlockChoice choice;            // the minimal-block-size estimator's pick and its reason
    int cuda_blocks_per_sm = 0;    // cudaOccupancyMaxActiveBlocksPerMultiprocessor, cross-check
    std::string why_model;         // one sentence: why this model for this size and count
    const void *kernel = nullptr;  // the planned kernel (launch never picks another)
};

// Each op: plan_<op>_cuda picks the kernel and its launch configuration once (through
// launch.cuh's plan_kernel, which records the kernel in CudaConfig::kernel);
// launch_<op>_cuda queues that kernel on `stream` for arrays in device memory.
// src/batched/execute.cu stages host arrays, in chunks of elements, and calls launch
// once per chunk: so a launch may see a smaller batch than planned (kernels loop over
// elements with a grid stride and check the bound) and, for staged SoA operands, a
// smaller batch stride; it must never choose another kernel than the planned one.
//   gemm.cu: gemm; cholesky.cu: potrf, potrs, posv; vector.cu: dot, gemv;
//   lu.cu: getrf, getrs, gesv; transpose.cu: the layout adapter.
// gemm: the family's kernel, always planned (the fallback, and the device's description);
// double AoS elements of the shapes gemm_vendor_shape names go through cuBLAS's strided
// batched DGEMM instead, where libcublas loads (gemm_unavailable says why not).
struct GemmConfig {
    CudaConfig kernel;
    std::shared_ptr<const cuda::Gemm> gemm;
    std::string gemm_unavailable;
};
// C of 38 or more rows or columns, or k past 40 with C of 20 or more: where cuBLAS's
// DGEMM ran 1.03-10.6x the family's kernels head to head (H200 runs 440-442, batches of
// 805 MB to 3.2 GB: 3.6-3.9x at 128 x 128 x 128, 1.4-1.9x at 38..63 cubed, 1.3x at 32 x
// 32 x 48, 1.03-1.07x at 64 cubed), and not where the kernels won or tied (33 and 34
// cubed 0.90-0.96x, 36 cubed 1.02-1.03x, 32 cubed 0.99-1.12x, C of 8 or 16 with k of
// 65..128 0.86-1.01x).
constexpr bool gemm_vendor_shape(int64_t m, int64_t n, int64_t k) {
    return std::max(m, n) >= 38 || (k > 40 && std::max(m, n) >= 20);
}

GemmConfig plan_gemm_cuda(const GemmProblem &pb, int device, double occupancy_target);
void launch_gemm_cuda(const GemmProblem &pb, const GemmConfig &cfg, void *stream, const void *A, const void *B,
                      void *C);

CudaConfig plan_potrf_cuda(const PotrfProblem &pb, int device, double occupancy_target);
void launch_potrf_cuda(const PotrfProblem &pb, const CudaConfig &cfg, void *stream, void *A, int32_t *info);
CudaConfig plan_potrs_cuda(const PotrsProblem &pb, int device, double occupancy_target);
void launch_potrs_cuda(const PotrsProblem &pb, const CudaConfig &cfg, void *stream, const void *A, void *B);
// posv: potrf's and potrs's kernels in turn; potrs skips elements with info != 0.
struct PosvConfig {
    CudaConfig potrf, potrs;
};
PosvConfig plan_posv_cuda(const PosvProblem &pb, int device, double occupancy_target);
void launch_posv_cuda(const PosvProblem &pb, const PosvConfig &cfg, void *stream, void *A, void *B,
                      int32_t *info);

CudaConfig plan_dot_cuda(const DotProblem &pb, int device, double occupancy_target);
void launch_dot_cuda(const DotProblem &pb, const CudaConfig &cfg, void *stream, const void *x, const void *y,
                     void *r);
CudaConfig plan_gemv_cuda(const GemvProblem &pb, int device, double occupancy_target);
// gemm.cu: gemm and gemv with alpha = 0 (plan_gemm_cuda and plan_gemv_cuda call it): every
// entry of `out` (C or y, as `m` describes it) becomes beta times itself, +0 where beta = 0.
CudaConfig plan_scale_cuda(const Matrix &m, int32_t dtype, int64_t batch, int device, double occupancy_target);
void launch_scale_cuda(const Matrix &m, int32_t dtype, double beta, int64_t batch, const CudaConfig &cfg,
                       void *stream, void *out);
void launch_gemv_cuda(const GemvProblem &pb, const CudaConfig &cfg, void *stream, const void *A, const void *x,
                      void *y);

CudaConfig plan_getrf_cuda(const GetrfProblem &pb, int device, double occupancy_target);
void launch_getrf_cuda(const GetrfProblem &pb, const CudaConfig &cfg, void *stream, void *A, int32_t *ipiv,
                       int32_t *info);
CudaConfig plan_getrs_cuda(const GetrsProblem &pb, int device, double occupancy_target);
void launch_getrs_cuda(const GetrsProblem &pb, const CudaConfig &cfg, void *stream, const void *A,
                       const int32_t *ipiv, void *B);
struct GesvConfig {
    CudaConfig getrf, getrs;
};
GesvConfig plan_gesv_cuda(const GesvProblem &pb, int device, double occupancy_target);
void launch_gesv_cuda(const GesvProblem &pb, const GesvConfig &cfg, void *stream, void *A, int32_t *ipiv, void *B,
                      int32_t *info);

CudaConfig plan_transpose_cuda(const TransposeProblem &pb, int device, double occupancy_target);
void launch_transpose_cuda(const TransposeProblem &pb, const CudaConfig &cfg, void *stream, const void *in,
                           void *out);

}  // namespace apairs::batched
