#include "plan.hpp"

#include <fmt/format.h>

#include "host/pairwise.hpp"

namespace apairs {

namespace {

std::string kernel_name(const PairwiseProblem &pb) {
    std::string m = metric_name(pb.metric);
    if (pb.metric == APAIRS_METRIC_LP) m += fmt::format("(p={:g})", pb.p);
    return fmt::format("pairwise<{},{},full-matrix>", m, dtype_name(pb.dtype));
}

std::string describe_host(const apairs_plan_s &plan) {
    const int threads = host::resolve_threads(plan.ctx.host_threads);
    const int64_t r = host::kTileRows, c = host::kTileCols;
    return fmt::format(
        "backend=host threads={} kernel={} tile={}x{} d'={}; why: {} threads ({}), each "
        "computing {}x{} tiles of D whose accumulators and transposed {}-row slice of B "
        "({} dimensions) stay in the L1/L2 caches, the inner loop vectorised across the {} "
        "columns without reordering any sum",
        threads, kernel_name(plan.pb), r, c, kSliceDims, threads,
        plan.ctx.host_threads > 0 ? "APAIRS_OPTION_HOST_THREADS" : "OpenMP's default", r, c, c,
        kSliceDims, c);
}

#if APAIRS_HAVE_CUDA
std::string describe_cuda(const apairs_plan_s &plan) {
    const cuda::LaunchConfig &c = plan.cuda;
    const Occupancy &o = c.choice.chosen;
    return fmt::format(
        "backend=cuda device={} ({}, sm_{}{}, {} SMs) kernel={} r={} c={} s={} d'={} "
        "tile={}x{} block={}x{}={} threads grid={} blocks, {} blocks/SM (CUDA API: {}), "
        "occupancy {:.0f}% limited by {} (target {}); {} registers/thread, {} B shared/block; "
        "why: {}",
        c.device, c.device_name, c.cc_major, c.cc_minor, c.sm_count, kernel_name(plan.pb), c.r,
        c.c, c.s, c.ds, c.r * c.s, c.c, c.c, c.r, o.block_threads, c.grid, o.blocks_per_sm,
        c.cuda_blocks_per_sm, 100 * o.occupancy, o.limiter,
        c.choice.target > 0 ? fmt::format("{:.0f}%", 100 * c.choice.target)
                            : fmt::format("highest reachable, {:.0f}%", 100 * c.choice.max_reachable),
        c.regs_per_thread, o.shared_per_block, c.choice.reason);
}
#endif

}  // namespace

int32_t resolve_backend(int32_t backend, int32_t device) {
#if APAIRS_HAVE_CUDA
    if (backend == APAIRS_BACKEND_AUTO)
        return device < cuda::device_count() ? APAIRS_BACKEND_CUDA : APAIRS_BACKEND_HOST;
    if (backend == APAIRS_BACKEND_CUDA) cuda::require_device(device);
    return backend;
#else
    (void)device;
    if (backend == APAIRS_BACKEND_CUDA)
        throw Error(APAIRS_ERROR_BACKEND_UNAVAILABLE,
                    "backend = APAIRS_BACKEND_CUDA: this libapairs was built without CUDA");
    return APAIRS_BACKEND_HOST;
#endif
}

void plan_pairwise(apairs_plan_s &plan) {
#if APAIRS_HAVE_CUDA
    if (plan.ctx.backend == APAIRS_BACKEND_CUDA) {
        plan.cuda = cuda::plan_pairwise(plan.pb, plan.ctx.device, plan.ctx.occupancy_target);
        plan.description = describe_cuda(plan);
        return;
    }
#endif
    plan.description = describe_host(plan);
}

void execute(const apairs_plan_s &plan, const void *A, const void *B, void *D) {
#if APAIRS_HAVE_CUDA
    if (plan.ctx.backend == APAIRS_BACKEND_CUDA) {
        cuda::execute_pairwise(plan.pb, plan.cuda, plan.ctx.stream, A, B, D);
        return;
    }
    const char *names[] = {"A", "B", "D"};
    const void *ptrs[] = {A, B, D};
    for (int k = 0; k < 3; ++k)
        if (cuda::is_device_pointer(ptrs[k]))
            throw Error(APAIRS_ERROR_INVALID_POINTER,
                        fmt::format("{} is CUDA device memory, but the plan's backend is host",
                                    names[k]));
#endif
    host::pairwise(plan.pb, A, B, D, plan.ctx.host_threads);
}

}  // namespace apairs
