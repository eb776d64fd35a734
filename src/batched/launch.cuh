// Planning shared by the batched CUDA engines (cuda.cu: gemm; cholesky.cu: potrf, potrs):
// a kernel described by its unit of growth, sized by the minimal-block-size estimator.
#pragma once

#include <cstdint>
#include <string>

#include "batched/cuda.hpp"

namespace apairs::batched {

// One kernel as the planner sees it.
struct KernelSpec {
    Model model = Model::ThreadPerElement;
    const void *fn = nullptr;
    std::string name;
    int group = 1;            // threads per element
    int unit_threads = 32;    // the estimator's unit of growth (a warp of elements, a team, a sub-block)
    int unit_elements = 1;    // elements a unit computes at once (work items, where `items` is set)
    int64_t items = 0;        // the grid's work in items of the kernel's own (0: the batch's elements)
    int64_t unit_shared = 0;  // dynamic shared bytes per unit
    int64_t block_shared = 0; // dynamic shared bytes per block, before the units' (a table every unit reads)
    int sub = 0;              // block-per-element: threads per element; SoA split: warps per 32 elements
    int64_t shared_per_sm = 0;  // 0: the device's largest shared-memory carveout; else the carveout (bytes per
                                // SM, one the device supports) this kernel asks for, the rest staying L1
    std::string why;          // why this model, one sentence
};

// The configuration of `k` for `batch` elements on `device`: opts in to the device's
// shared memory and the largest carveout, or k.shared_per_sm where smaller (the
// estimator assumes the same), grows blocks a unit at a time with units of `units_min`
// kernel units (halved while nothing launches), a resident grid, and CUDA's own
// occupancy count beside the estimator's. `what` names the problem in the UNSUPPORTED
// error thrown when no block can launch.
CudaConfig plan_kernel(const KernelSpec &k, int64_t batch, int device, double occupancy_target, int units_min,
                       const std::string &what);

// The rows kernels (potrs n > 32, getrs n > 8, and the stream kernels, stream.cuh: a
// warp an element) take at most this many right-hand sides, solved one after another
// (getrs's stream kernel: 4 at a time; potrs's takes one); more take the chunked
// kernels, whose threads solve columns side by side (8: an estimate, not a measured
// crossover).
constexpr int kRowsMaxRhs = 8;

// A rows kernel (potrf n > 32, potrs n > 32, getrf n > 32, getrs n > 8: a warp an
// element, its operand in a shared-memory slot of `slot_bytes`) as the planner sees it;
// the caller names it and says why.
inline KernelSpec rows_kernel_spec(const void *fn, int64_t slot_bytes) {
    KernelSpec k;
    k.model = Model::WarpGroup;
    k.fn = fn;
    k.group = 32;
    k.unit_threads = 32;
    k.unit_elements = 1;
    k.unit_shared = slot_bytes;
    return k;
}

// The rows and stream kernels (potrf, potrs, getrf, getrs: a warp an element) copy a SoA
// factor with the whole block, each entry's values of the block's warps' elements one
// run: plan_kernel's pick where it is a multiple of 32 / es warps (whole 32-byte sectors:
// 8 in f32, 4 in f64), else the estimator's pick in units of that many warps where it
// keeps 3/4 of the first pick's warps an SM (H200 run 341: potrs f32 SoA n = 64, 9 warps
// -> 8, 0.200 -> 0.176 ms); else, where the first pick's runs are shorter than a sector,
// the largest pick in units of a power of two warps towards one that keeps 3/4 of them;
// saying so.
CudaConfig plan_rows(const KernelSpec &k, bool soa, int64_t es, int64_t batch, int device, double occupancy_target,
                     const std::string &what);

// Queues the planned kernel with `args` (one struct, passed by value) on `stream`.
void launch_planned_raw(const CudaConfig &cfg, void *stream, void *args, const char *what);
template <class Args>
void launch_planned(const CudaConfig &cfg, void *stream, Args args, const char *what) {
    launch_planned_raw(cfg, stream, &args, what);
}

}  // namespace apairs::batched
