#include "batched/plan.hpp"

#include <fmt/format.h>

#include "batched/host.hpp"
#include "host/host.hpp"
#if APAIRS_HAVE_CUDA
#include "batched/cuda.hpp"
#endif

namespace apairs::batched {
namespace {

std::string operand_name(const Matrix &x) {
    return fmt::format("{} {}", x.soa ? "SoA" : "AoS", x.row_major ? "row-major" : "column-major");
}

const char *type_name(int32_t dtype) { return dtype == APAIRS_DTYPE_F64 ? "f64" : "f32"; }

// One operation of the family: its problem, names, and how each backend runs it. The
// arrays arrive in the order of the operation's execute function.
struct Gemm {
    using Problem = GemmProblem;
    static constexpr const char *op = "gemm", *execute_fn = "apairs_plan_execute_gemm";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"A", "B", "C"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("gemm_batched<{},{}{},m={},n={},k={},{}{}> batch={}", type_name(pb.dtype),
                           pb.trans_a ? 'T' : 'N', pb.trans_b ? 'T' : 'N', pb.m, pb.n, pb.k, operand_name(pb.c),
                           pb.beta == 0 ? ",beta=0" : "", pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        gemm_host(pb, x[0], x[1], const_cast<void *>(x[2]), threads);
    }
#if APAIRS_HAVE_CUDA
    static CudaConfig plan(const Problem &pb, int device, double target) { return plan_gemm_cuda(pb, device, target); }
    static void cuda(const Problem &pb, const CudaConfig &c, void *stream, const void *const *x) {
        execute_gemm_cuda(pb, c, stream, x[0], x[1], const_cast<void *>(x[2]));
    }
#endif
};

struct Potrf {
    using Problem = PotrfProblem;
    static constexpr const char *op = "potrf", *execute_fn = "apairs_plan_execute_potrf";
    static constexpr int arity = 2;
    static constexpr const char *names[] = {"A", "info"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("potrf_batched<{},{},n={},{}> batch={}", type_name(pb.dtype), pb.lower ? "lower" : "upper",
                           pb.n, operand_name(pb.a), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        potrf_host(pb, const_cast<void *>(x[0]), static_cast<int32_t *>(const_cast<void *>(x[1])), threads);
    }
#if APAIRS_HAVE_CUDA
    static CudaConfig plan(const Problem &pb, int device, double target) { return plan_potrf_cuda(pb, device, target); }
    static void cuda(const Problem &pb, const CudaConfig &c, void *stream, const void *const *x) {
        execute_potrf_cuda(pb, c, stream, const_cast<void *>(x[0]), static_cast<int32_t *>(const_cast<void *>(x[1])));
    }
#endif
};

struct Potrs {
    using Problem = PotrsProblem;
    static constexpr const char *op = "potrs", *execute_fn = "apairs_plan_execute_potrs";
    static constexpr int arity = 2;
    static constexpr const char *names[] = {"A", "B"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("potrs_batched<{},{},n={},nrhs={},{}> batch={}", type_name(pb.dtype),
                           pb.lower ? "lower" : "upper", pb.n, pb.nrhs, operand_name(pb.a), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        potrs_host(pb, x[0], const_cast<void *>(x[1]), threads);
    }
#if APAIRS_HAVE_CUDA
    static CudaConfig plan(const Problem &pb, int device, double target) { return plan_potrs_cuda(pb, device, target); }
    static void cuda(const Problem &pb, const CudaConfig &c, void *stream, const void *const *x) {
        execute_potrs_cuda(pb, c, stream, x[0], const_cast<void *>(x[1]));
    }
#endif
};

template <class Op>
class BatchedPlan final : public apairs_plan_s {
public:
    BatchedPlan(const apairs_context_s &context, const typename Op::Problem &pb) : pb_(pb) {
        ctx = context;
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            cuda_ = Op::plan(pb_, ctx.device, ctx.occupancy_target);
            const CudaConfig &c = cuda_;
            const Occupancy &o = c.choice.chosen;
            description = fmt::format(
                "backend=cuda device={} ({}, sm_{}{}, {} SMs) kernel={} model={} threads/element={} block={} "
                "threads grid={} blocks, {} blocks/SM (CUDA API: {}), occupancy {:.0f}% limited by {}; {} "
                "registers/thread, {} B shared/block; why: {}; block size: {}",
                c.device, c.device_name, c.cc_major, c.cc_minor, c.sm_count, Op::kernel(pb_), model_name(c.model),
                c.group, c.block_threads, c.grid, o.blocks_per_sm, c.cuda_blocks_per_sm, 100 * o.occupancy,
                o.limiter, c.regs_per_thread, c.dynamic_shared, c.why_model, c.choice.reason);
            return;
        }
#endif
        const int threads = host::resolve_threads(ctx.host_threads);
        description = fmt::format("backend=host threads={} kernel={} model=elements-per-thread; why: {} threads ({}) "
                                  "each take whole elements, in chunks",
                                  threads, Op::kernel(pb_), threads,
                                  ctx.host_threads > 0 ? "APAIRS_OPTION_HOST_THREADS" : "OpenMP's default");
    }

    const char *op() const override { return Op::op; }
    const char *execute_function() const override { return Op::execute_fn; }

    void execute(const void *const *arrays) const override {
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) return Op::cuda(pb_, cuda_, ctx.stream, arrays);
#endif
        host::require_host_memory(arrays, Op::names, Op::arity);
        Op::host(pb_, arrays, host::resolve_threads(ctx.host_threads));
    }

private:
    typename Op::Problem pb_;
#if APAIRS_HAVE_CUDA
    CudaConfig cuda_;
#endif
};

}  // namespace

std::unique_ptr<apairs_plan_s> make_gemm_plan(const apairs_context_s &ctx, const GemmProblem &pb) {
    return std::make_unique<BatchedPlan<Gemm>>(ctx, pb);
}
std::unique_ptr<apairs_plan_s> make_potrf_plan(const apairs_context_s &ctx, const PotrfProblem &pb) {
    return std::make_unique<BatchedPlan<Potrf>>(ctx, pb);
}
std::unique_ptr<apairs_plan_s> make_potrs_plan(const apairs_context_s &ctx, const PotrsProblem &pb) {
    return std::make_unique<BatchedPlan<Potrs>>(ctx, pb);
}

}  // namespace apairs::batched
