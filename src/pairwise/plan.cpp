#include "pairwise/plan.hpp"

#include <fmt/format.h>

#include "host/host.hpp"
#include "pairwise/host.hpp"
#if APAIRS_HAVE_CUDA
#include "pairwise/cuda.hpp"
#endif

namespace apairs::pairwise {
namespace {

std::string kernel_name(const Problem &pb) {
    std::string m = metric_name(pb.metric);
    if (pb.metric == APAIRS_METRIC_LP)
        m += fmt::format("(p={:g}{})", pb.p,
                         pb.p == 3 || pb.p == 4                          ? ", |t|^p by multiplication"
                         : pb.p == 0.5 || pb.p == 1.5 || pb.p == 2.5 || pb.p == 3.5 ? ", |t|^p as |t|^k sqrt|t|"
                         : pb.dtype == APAIRS_DTYPE_F32 ? ", |t|^p as 2^(p log2 t) on CUDA"
                                                        : "");
    return fmt::format("pairwise<{},{},full-matrix>", m, dtype_name(pb.dtype));
}

std::string describe_host(const apairs_context_s &ctx, const Problem &pb) {
    const int threads = host::resolve_threads(ctx.host_threads);
    return fmt::format(
        "backend=host threads={} kernel={} tile={}x{} d'={}; why: {} threads ({}), each "
        "computing {}x{} tiles of D whose accumulators and transposed {}-row slice of B "
        "({} dimensions) stay in the L1/L2 caches, the inner loop vectorised ({}) across the {} "
        "columns without reordering any sum",
        threads, kernel_name(pb), kTileRows, kTileCols, kSliceDims, threads,
        ctx.host_threads > 0 ? "APAIRS_OPTION_HOST_THREADS" : "OpenMP's default", kTileRows, kTileCols,
        kTileCols, kSliceDims, host_vector_isa(), kTileCols);
}

#if APAIRS_HAVE_CUDA
std::string describe_cuda(const Problem &pb, const CudaConfig &c) {
    const Occupancy &o = c.choice.chosen;
    return fmt::format(
        "backend=cuda device={} ({}, sm_{}{}, {} SMs) kernel={} tile={}x{} of {}x{} per thread d'={} "
        "block=16x{}={} threads grid={} blocks, {} blocks/SM (CUDA API: {}), "
        "occupancy {:.0f}% limited by {} (target {}); {} registers/thread, {} B shared/block; "
        "why: {}",
        c.device, c.device_name, c.cc_major, c.cc_minor, c.sm_count, kernel_name(pb), c.bm, c.bn, c.tm, c.tn,
        c.ds, 2 * c.warps, o.block_threads, c.grid, o.blocks_per_sm, c.cuda_blocks_per_sm,
        100 * o.occupancy, o.limiter,
        c.choice.target > 0 ? fmt::format("{:.0f}%", 100 * c.choice.target)
                            : fmt::format("highest reachable, {:.0f}%", 100 * c.choice.max_reachable),
        c.regs_per_thread, o.shared_per_block, c.choice.reason) +
           (c.gemm && c.l2_rows > 0
                ? fmt::format("; executed instead through {} dgemm ({} rows of A a call): rows centred on A's first "
                              "row in double, |a|^2 + |b|^2 - 2 a.b from the GEMM (FP64, tensor cores where the device "
                              "has them), each pair whose rounding bound exceeds 2^-30 of it (near duplicates) or "
                              "that is not finite recomputed directly in double, rounded once to float: relative "
                              "error <= 2^-24 + 2^-30 (chosen for d >= {})",
                              c.gemm->library(), c.l2_rows, kGemmL2MinDims)
            : c.gemm && c.gemm->tf32()
                ? fmt::format("; executed instead by {} sgemm on the TF32 tensor cores (APAIRS_OPTION_TF32: inputs "
                              "kept to 10 fraction bits, products summed in float){}",
                              c.gemm->library(),
                              pb.metric == APAIRS_METRIC_COSINE ? ", then the rows' squared norms in float and the finish" : "")
            : c.gemm ? fmt::format("; executed instead by {} {}gemm, D = A B^T in {} arithmetic (default math mode, "
                                 "never TF32){}: the vendor GEMM is the fastest exact path for {}",
                                 c.gemm->library(), pb.dtype == APAIRS_DTYPE_F64 ? "d" : "s",
                                 pb.dtype == APAIRS_DTYPE_F64 ? "double" : "float",
                                 pb.metric == APAIRS_METRIC_COSINE ? ", then the rows' squared norms and the finish" : "",
                                 metric_name(pb.metric))
            : !c.gemm_unavailable.empty() ? fmt::format("; cuBLAS not used: {}", c.gemm_unavailable)
                                          : std::string());
}
#endif

class Plan final : public apairs_plan_s {
public:
    Plan(const apairs_context_s &context, const Problem &pb) : pb_(pb) {
        ctx = context;
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            cuda_ = plan_cuda(pb_, ctx.device, ctx.occupancy_target, ctx.tf32);
            description = describe_cuda(pb_, cuda_);
            return;
        }
#endif
        description = describe_host(ctx, pb_);
    }

    const char *op() const override { return "pairwise"; }
    const char *execute_function() const override { return "apairs_plan_execute"; }

    void execute(const void *const *arrays) const override {
        const void *A = arrays[0], *B = arrays[1];
        void *D = const_cast<void *>(arrays[2]);
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) return execute_cuda(pb_, cuda_, ctx.stream, A, B, D);
#endif
        static const char *const names[] = {"A", "B", "D"};
        host::require_host_memory(arrays, names, 3);
        run_host(pb_, A, B, D, host::resolve_threads(ctx.host_threads));
    }

private:
    Problem pb_;
#if APAIRS_HAVE_CUDA
    CudaConfig cuda_;
#endif
};

}  // namespace

std::unique_ptr<apairs_plan_s> make_plan(const apairs_context_s &ctx, const Problem &pb) {
    return std::make_unique<Plan>(ctx, pb);
}

}  // namespace apairs::pairwise
