#include "twobody/plan.hpp"

#include <string>

#include <fmt/format.h>

#include "host/host.hpp"
#include "twobody/host.hpp"
#if APAIRS_HAVE_CUDA
#include "twobody/cuda.hpp"
#endif

namespace apairs::twobody {
namespace {

const char *kind_name(Kind k) {
    return k == Kind::Counts ? "pair_counts" : k == Kind::Histogram ? "histogram" : "knn";
}

std::string kernel_name(const Problem &pb) {
    std::string m = pairwise::metric_name(pb.pw.metric);
    if (pb.pw.metric == APAIRS_METRIC_LP) m += fmt::format("(p={:g})", pb.pw.p);
    std::string what;
    switch (pb.kind) {
    case Kind::Counts: what = fmt::format("{} radii", pb.thresholds.size()); break;
    case Kind::Histogram:
        what = fmt::format("{} {} bins", pb.nbins(), pb.uniform ? "uniform" : "caller-edged");
        break;
    case Kind::Knn: what = fmt::format("k={}", pb.k); break;
    }
    return fmt::format("twobody<{},{},{},{},{}{}>", kind_name(pb.kind), m, pairwise::dtype_name(pb.pw.dtype),
                       pb.autopairs ? "auto" : "cross", what, pb.box.empty() ? "" : ",periodic box");
}

class Plan final : public apairs_plan_s {
public:
    Plan(const apairs_context_s &context, const Problem &pb) : pb_(pb) {
        ctx = context;
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            cuda_ = plan_cuda(pb_, ctx.device);
            const CudaConfig &c = cuda_;
            description = fmt::format(
                "backend=cuda device={} ({}, sm_{}{}, {} SMs) kernel={} block={} threads grid={} blocks, {} blocks/SM, "
                "{} registers/thread, {} B local/thread, {} B shared/block{}; why: {}",
                c.device, c.device_name, c.cc_major, c.cc_minor, c.sm_count, kernel_name(pb_), c.threads, c.grid,
                c.blocks_per_sm, c.regs, c.stack, c.shared_plain,
                c.shared != c.shared_plain ? fmt::format(" ({} B with weights)", c.shared) : std::string(), c.why);
            return;
        }
#endif
        const int threads = host::resolve_threads(ctx.host_threads);
        description = fmt::format("backend=host threads={} ({}) kernel={} technique: {}", threads,
                                  ctx.host_threads > 0 ? "APAIRS_OPTION_HOST_THREADS" : "OpenMP's default",
                                  kernel_name(pb_), describe_host_technique(pb_));
    }

    const char *op() const override { return kind_name(pb_.kind); }
    const char *execute_function() const override {
        switch (pb_.kind) {
        case Kind::Counts: return "apairs_plan_execute_pair_counts";
        case Kind::Histogram: return "apairs_plan_execute_histogram or apairs_plan_execute_histogram_weighted";
        case Kind::Knn: return "apairs_plan_execute_knn";
        }
        return "";
    }

    void execute(const void *const *arrays) const override {
        const void *A = arrays[kA], *B = pb_.autopairs ? arrays[kA] : arrays[kB];
        const bool weighted = arrays[kWeighted] != nullptr;
        Outputs out;
        const char *names[kArrays] = {"A", "B", "weights_a", "weights_b", "counts", "sums"};
        if (pb_.kind == Kind::Knn) names[kOut0] = "indices", names[kOut1] = "distances";
        require(A, "A");
        require(B, "B");
        require(arrays[kOut0], names[kOut0]);
        const void *check[kArrays] = {A, B, nullptr, nullptr, arrays[kOut0], nullptr};
        const char *check_names[kArrays] = {"A", "B", "", "", names[kOut0], ""};
        int n = 3;
        switch (pb_.kind) {
        case Kind::Counts: out.counts = static_cast<int64_t *>(const_cast<void *>(arrays[kOut0])); break;
        case Kind::Knn:
            require(arrays[kOut1], names[kOut1]);
            out.indices = static_cast<int64_t *>(const_cast<void *>(arrays[kOut0]));
            out.distances = const_cast<void *>(arrays[kOut1]);
            check[n] = arrays[kOut1], check_names[n++] = names[kOut1];
            break;
        case Kind::Histogram:
            out.counts = static_cast<int64_t *>(const_cast<void *>(arrays[kOut0]));
            if (weighted) {
                const void *wb = pb_.autopairs ? arrays[kWeightsA] : arrays[kWeightsB];
                require(arrays[kWeightsA], "weights_a");
                require(wb, "weights_b");
                require(arrays[kOut1], "sums");
                out.wa = static_cast<const double *>(arrays[kWeightsA]);
                out.wb = static_cast<const double *>(wb);
                out.sums = static_cast<double *>(const_cast<void *>(arrays[kOut1]));
                check[n] = out.wa, check_names[n++] = "weights_a";
                check[n] = out.wb, check_names[n++] = "weights_b";
                check[n] = out.sums, check_names[n++] = "sums";
            }
            break;
        }
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            return execute_cuda(pb_, cuda_, ctx.stream, A, B, out);
        }
#endif
        host::require_host_memory(check, check_names, n);
        if (out.wa) {
            require_weights(out.wa, pb_.pw.n1, "weights_a");
            if (!pb_.autopairs) require_weights(out.wb, pb_.pw.n2, "weights_b");
        }
        run_host(pb_, A, B, out, host::resolve_threads(ctx.host_threads));
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

}  // namespace apairs::twobody
