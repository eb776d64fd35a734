#include "batched/plan.hpp"

#include <fmt/format.h>

#include "batched/host.hpp"
#include "host/host.hpp"
#if APAIRS_HAVE_CUDA
#include "batched/cuda.hpp"
#include "batched/execute.hpp"
#endif

namespace apairs::batched {
namespace {

std::string operand_name(const Matrix &x) {
    return fmt::format("{} {}", x.soa ? "SoA" : "AoS", x.row_major ? "row-major" : "column-major");
}

const char *type_name(int32_t dtype) { return dtype == APAIRS_DTYPE_F64 ? "f64" : "f32"; }

// gemm's and gemv's markers: alpha = 0 reads only the output (beta != 0) or nothing.
const char *scalars(double alpha, double beta) {
    return alpha == 0 ? (beta == 0 ? ",alpha=0,beta=0" : ",alpha=0") : beta == 0 ? ",beta=0" : "";
}

// One operation of the family: its problem, names, its arrays (in the order of its
// execute function) and how each backend runs it. On CUDA, `with` gives the problem of a
// chunk of the batch (execute.hpp) and `launch` queues its kernels.
template <class P>
P with_batch(const P &pb, int64_t batch) {
    P q = pb;
    q.batch = batch;
    return q;
}
template <class T>
T *arg(const void *const *x, int i) {
    return static_cast<T *>(const_cast<void *>(x[i]));
}
#if APAIRS_HAVE_CUDA
Operand operand_of(const char *name, const Matrix &m, size_t elem, bool read, bool write) {
    return Operand{name, m, elem, read, write};
}
#endif

struct Gemm {
    using Problem = GemmProblem;
    static constexpr const char *op = "gemm", *execute_fn = "apairs_plan_execute_gemm";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"A", "B", "C"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("gemm_batched<{},{}{},m={},n={},k={},{}{}> batch={}", type_name(pb.dtype),
                           pb.trans_a ? 'T' : 'N', pb.trans_b ? 'T' : 'N', pb.m, pb.n, pb.k, operand_name(pb.c),
                           scalars(pb.alpha, pb.beta), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        gemm_host(pb, x[0], x[1], arg<void>(x, 2), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = GemmConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_gemm_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        const size_t es = pb.elem_size();
        o[0] = operand_of("A", pb.a, es, pb.alpha != 0, false);
        o[1] = operand_of("B", pb.b, es, pb.alpha != 0, false);
        o[2] = operand_of("C", pb.c, es, pb.beta != 0, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.b = m[1], q.c = m[2];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_gemm_cuda(pb, c, stream, x[0], x[1], arg<void>(x, 2));
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
        potrf_host(pb, arg<void>(x, 0), arg<int32_t>(x, 1), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_potrf_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), true, true);
        o[1] = operand_of("info", pb.info, sizeof(int32_t), false, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.info = m[1];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_potrf_cuda(pb, c, stream, arg<void>(x, 0), arg<int32_t>(x, 1));
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
        potrs_host(pb, x[0], arg<void>(x, 1), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_potrs_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), true, false);
        o[1] = operand_of("B", pb.b, pb.elem_size(), true, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.b = m[1];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_potrs_cuda(pb, c, stream, x[0], arg<void>(x, 1));
    }
#endif
};

struct Posv {
    using Problem = PosvProblem;
    static constexpr const char *op = "posv", *execute_fn = "apairs_plan_execute_posv";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"A", "B", "info"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("posv_batched<{},{},n={},nrhs={},{}> batch={}", type_name(pb.dtype),
                           pb.lower ? "lower" : "upper", pb.n, pb.nrhs, operand_name(pb.a), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        posv_host(pb, arg<void>(x, 0), arg<void>(x, 1), arg<int32_t>(x, 2), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = PosvConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_posv_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), true, true);
        o[1] = operand_of("B", pb.b, pb.elem_size(), true, true);
        o[2] = operand_of("info", pb.info, sizeof(int32_t), false, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.b = m[1], q.info = m[2];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_posv_cuda(pb, c, stream, arg<void>(x, 0), arg<void>(x, 1), arg<int32_t>(x, 2));
    }
#endif
};

struct Dot {
    using Problem = DotProblem;
    static constexpr const char *op = "dot", *execute_fn = "apairs_plan_execute_dot";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"x", "y", "out"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("dot_batched<{},n={},{}> batch={}", type_name(pb.dtype), pb.n, pb.x.soa ? "SoA" : "AoS",
                           pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        dot_host(pb, x[0], x[1], arg<void>(x, 2), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_dot_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("x", pb.x, pb.elem_size(), true, false);
        o[1] = operand_of("y", pb.y, pb.elem_size(), true, false);
        o[2] = operand_of("out", pb.r, pb.elem_size(), false, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.x = m[0], q.y = m[1], q.r = m[2];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_dot_cuda(pb, c, stream, x[0], x[1], arg<void>(x, 2));
    }
#endif
};

struct Gemv {
    using Problem = GemvProblem;
    static constexpr const char *op = "gemv", *execute_fn = "apairs_plan_execute_gemv";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"A", "x", "y"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("gemv_batched<{},{},m={},n={},{}{}> batch={}", type_name(pb.dtype), pb.trans ? 'T' : 'N',
                           pb.m, pb.n, operand_name(pb.a), scalars(pb.alpha, pb.beta), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        gemv_host(pb, x[0], x[1], arg<void>(x, 2), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_gemv_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), pb.alpha != 0, false);
        o[1] = operand_of("x", pb.x, pb.elem_size(), pb.alpha != 0, false);
        o[2] = operand_of("y", pb.y, pb.elem_size(), pb.beta != 0, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.x = m[1], q.y = m[2];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_gemv_cuda(pb, c, stream, x[0], x[1], arg<void>(x, 2));
    }
#endif
};

struct Getrf {
    using Problem = GetrfProblem;
    static constexpr const char *op = "getrf", *execute_fn = "apairs_plan_execute_getrf";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"A", "ipiv", "info"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("getrf_batched<{},n={},{}> batch={}", type_name(pb.dtype), pb.n, operand_name(pb.a),
                           pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        getrf_host(pb, arg<void>(x, 0), arg<int32_t>(x, 1), arg<int32_t>(x, 2), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_getrf_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), true, true);
        o[1] = operand_of("ipiv", pb.piv, sizeof(int32_t), false, true);
        o[2] = operand_of("info", pb.info, sizeof(int32_t), false, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.piv = m[1], q.info = m[2];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_getrf_cuda(pb, c, stream, arg<void>(x, 0), arg<int32_t>(x, 1), arg<int32_t>(x, 2));
    }
#endif
};

struct Getrs {
    using Problem = GetrsProblem;
    static constexpr const char *op = "getrs", *execute_fn = "apairs_plan_execute_getrs";
    static constexpr int arity = 3;
    static constexpr const char *names[] = {"A", "ipiv", "B"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("getrs_batched<{},{},n={},nrhs={},{}> batch={}", type_name(pb.dtype), pb.trans ? 'T' : 'N',
                           pb.n, pb.nrhs, operand_name(pb.a), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        getrs_host(pb, x[0], static_cast<const int32_t *>(x[1]), arg<void>(x, 2), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_getrs_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), true, false);
        o[1] = operand_of("ipiv", pb.piv, sizeof(int32_t), true, false);
        o[2] = operand_of("B", pb.b, pb.elem_size(), true, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.piv = m[1], q.b = m[2];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_getrs_cuda(pb, c, stream, x[0], static_cast<const int32_t *>(x[1]), arg<void>(x, 2));
    }
#endif
};

struct Gesv {
    using Problem = GesvProblem;
    static constexpr const char *op = "gesv", *execute_fn = "apairs_plan_execute_gesv";
    static constexpr int arity = 4;
    static constexpr const char *names[] = {"A", "ipiv", "B", "info"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("gesv_batched<{},n={},nrhs={},{}> batch={}", type_name(pb.dtype), pb.n, pb.nrhs,
                           operand_name(pb.a), pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        gesv_host(pb, arg<void>(x, 0), arg<int32_t>(x, 1), arg<void>(x, 2), arg<int32_t>(x, 3), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = GesvConfig;
    static Config plan(const Problem &pb, int device, double target) { return plan_gesv_cuda(pb, device, target); }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("A", pb.a, pb.elem_size(), true, true);
        o[1] = operand_of("ipiv", pb.piv, sizeof(int32_t), false, true);
        o[2] = operand_of("B", pb.b, pb.elem_size(), true, true);
        o[3] = operand_of("info", pb.info, sizeof(int32_t), false, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.a = m[0], q.piv = m[1], q.b = m[2], q.info = m[3];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_gesv_cuda(pb, c, stream, arg<void>(x, 0), arg<int32_t>(x, 1), arg<void>(x, 2), arg<int32_t>(x, 3));
    }
#endif
};

struct Transpose {
    using Problem = TransposeProblem;
    static constexpr const char *op = "transpose", *execute_fn = "apairs_plan_execute_transpose";
    static constexpr int arity = 2;
    static constexpr const char *names[] = {"in", "out"};
    static std::string kernel(const Problem &pb) {
        return fmt::format("transpose_batched<{},entries={},{}->{}> batch={}",
                           pb.dtype == APAIRS_DTYPE_U8 ? "u8" : type_name(pb.dtype), pb.entries,
                           pb.in.soa ? "SoA" : "AoS", pb.out.soa ? "SoA" : "AoS", pb.batch);
    }
    static void host(const Problem &pb, const void *const *x, int threads) {
        transpose_host(pb, x[0], arg<void>(x, 1), threads);
    }
#if APAIRS_HAVE_CUDA
    using Config = CudaConfig;
    static Config plan(const Problem &pb, int device, double target) {
        return plan_transpose_cuda(pb, device, target);
    }
    static void operands(const Problem &pb, Operand *o) {
        o[0] = operand_of("in", pb.in, pb.elem_size(), true, false);
        o[1] = operand_of("out", pb.out, pb.elem_size(), false, true);
    }
    static Problem with(const Problem &pb, int64_t batch, const Matrix *m) {
        Problem q = with_batch(pb, batch);
        q.in = m[0], q.out = m[1];
        return q;
    }
    static void launch(const Problem &pb, const Config &c, void *stream, const void *const *x) {
        launch_transpose_cuda(pb, c, stream, x[0], arg<void>(x, 1));
    }
#endif
};

#if APAIRS_HAVE_CUDA
std::string describe(const CudaConfig &c) {
    const Occupancy &o = c.choice.chosen;
    return fmt::format("model={} threads/element={} block={} threads grid={} blocks, {} blocks/SM (CUDA API: {}), "
                       "occupancy {:.0f}% limited by {}; {} registers/thread, {} B shared/block; why: {}; block "
                       "size: {}",
                       model_name(c.model), c.group, c.block_threads, c.grid, o.blocks_per_sm, c.cuda_blocks_per_sm,
                       100 * o.occupancy, o.limiter, c.regs_per_thread, c.dynamic_shared, c.why_model,
                       c.choice.reason);
}
std::string describe(const GemmConfig &c) {
    if (c.gemm)
        return fmt::format("model=library ({}, cublasDgemmStridedBatched); why: double AoS elements with C of "
                           "38 or more rows or columns, or k past 40 with C of 20 or more: cuBLAS's DGEMM outruns "
                           "the family's kernels there",
                           c.gemm->library());
    return describe(c.kernel) + (c.gemm_unavailable.empty() ? "" : "; cuBLAS not used: " + c.gemm_unavailable);
}
std::string describe(const PosvConfig &c) {
    return fmt::format("potrf: {}; then potrs: {}", describe(c.potrf), describe(c.potrs));
}
std::string describe(const GesvConfig &c) {
    return fmt::format("getrf: {}; then getrs: {}", describe(c.getrf), describe(c.getrs));
}
const CudaConfig &first(const CudaConfig &c) { return c; }
const CudaConfig &first(const GemmConfig &c) { return c.kernel; }
const CudaConfig &first(const PosvConfig &c) { return c.potrf; }
const CudaConfig &first(const GesvConfig &c) { return c.getrf; }
#endif

template <class Op>
class BatchedPlan final : public apairs_plan_s {
public:
    BatchedPlan(const apairs_context_s &context, const typename Op::Problem &pb) : pb_(pb) {
        ctx = context;
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            cuda_ = Op::plan(pb_, ctx.device, ctx.occupancy_target);
            Op::operands(pb_, ops_);
            const CudaConfig &c = first(cuda_);
            chunk_ = staging_chunk(ctx.device, ctx.staging_bytes, pb_.batch, ops_, Op::arity);
            description = fmt::format(
                "backend=cuda device={} ({}, sm_{}{}, {} SMs) kernel={} {}; host arrays: staged in {}", c.device,
                c.device_name, c.cc_major, c.cc_minor, c.sm_count, Op::kernel(pb_), describe(cuda_),
                chunk_ >= pb_.batch ? std::string("one piece")
                                    : fmt::format("chunks of {} elements over 3 streams, copies overlapping kernels",
                                                  chunk_));
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
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            execute_cuda(ctx.device, ctx.stream, chunk_, pb_.batch, ops_, Op::arity, arrays,
                         [&](int64_t batch, const Matrix *mats, void *const *ptrs, void *stream) {
                             Op::launch(Op::with(pb_, batch, mats), cuda_, stream, ptrs);
                         });
            return;
        }
#endif
        host::require_host_memory(arrays, Op::names, Op::arity);
        Op::host(pb_, arrays, host::resolve_threads(ctx.host_threads));
    }

private:
    typename Op::Problem pb_;
#if APAIRS_HAVE_CUDA
    typename Op::Config cuda_;
    static_assert(Op::arity <= kMaxOperands, "execute_cuda's fixed arrays hold every operand");
    Operand ops_[Op::arity];
    int64_t chunk_ = 0;  // elements per chunk of staged host arrays
#endif
};

}  // namespace

#define APAIRS_BATCHED_PLAN(name, Op)                                                                    \
    std::unique_ptr<apairs_plan_s> make_##name##_plan(const apairs_context_s &ctx, const Op::Problem &pb) { \
        return std::make_unique<BatchedPlan<Op>>(ctx, pb);                                               \
    }
APAIRS_BATCHED_PLAN(gemm, Gemm)
APAIRS_BATCHED_PLAN(potrf, Potrf)
APAIRS_BATCHED_PLAN(potrs, Potrs)
APAIRS_BATCHED_PLAN(posv, Posv)
APAIRS_BATCHED_PLAN(dot, Dot)
APAIRS_BATCHED_PLAN(gemv, Gemv)
APAIRS_BATCHED_PLAN(getrf, Getrf)
APAIRS_BATCHED_PLAN(getrs, Getrs)
APAIRS_BATCHED_PLAN(gesv, Gesv)
APAIRS_BATCHED_PLAN(transpose, Transpose)
#undef APAIRS_BATCHED_PLAN

}  // namespace apairs::batched
