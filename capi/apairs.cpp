// The C boundary: it converts the C arguments, calls the core, and translates what
// the core throws into a status and the per-thread error message. Every extern "C" body
// runs inside guarded(), so no exception crosses the ABI. Validation lives with each
// family (src/pairwise/problem.cpp, src/common/context.cpp); only the pointers the C
// calling convention hands over (out-arguments, handles, arrays) are checked here.
#include "apairs.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "common/context.hpp"
#include "common/plan.hpp"
#include "batched/plan.hpp"
#include "genotype/host.hpp"
#include "genotype/plan.hpp"
#include "host/host.hpp"
#include "pairwise/plan.hpp"
#include "twobody/plan.hpp"
#if APAIRS_HAVE_CUDA
#include "cuda/device.hpp"
#endif

using apairs::Error;
using apairs::fail;
using apairs::require;

#define APAIRS_STR2(x) #x
#define APAIRS_STR(x) APAIRS_STR2(x)
#if defined(_OPENMP)
#define APAIRS_HOST_NAME "host+openmp"
#else
#define APAIRS_HOST_NAME "host"
#endif
#if APAIRS_HAVE_CUDA
#define APAIRS_CUDA_NAME ", cuda " APAIRS_CUDA_ARCHS
#else
#define APAIRS_CUDA_NAME ""
#endif
// "0.1.0 (host+openmp, cuda sm_90)"
#define APAIRS_VERSION_STRING                                                               \
    APAIRS_STR(APAIRS_VERSION_MAJOR) "." APAIRS_STR(APAIRS_VERSION_MINOR) "." APAIRS_STR( \
        APAIRS_VERSION_PATCH) " (" APAIRS_HOST_NAME APAIRS_CUDA_NAME ")"

namespace {

// The per-thread message: a fixed buffer, trivially destructible, so that it outlives the
// thread's thread_local destructors (an atexit handler or a static destructor may still
// call in after them), and filled without allocating (a failure for want of memory is
// still named). Messages are cut at kErrorBytes - 1 bytes.
constexpr size_t kErrorBytes = 4096;
thread_local char last_error[kErrorBytes];

template <class... Args>
void set_error(const char *format, Args... args) noexcept {
    std::snprintf(last_error, sizeof last_error, format, args...);
}

template <class F>
apairs_status_t guarded(const char *fn, F &&body) noexcept {
    try {
        last_error[0] = '\0';
        body();
        return APAIRS_SUCCESS;
    } catch (const Error &e) {
        set_error("%s: %s", fn, e.what());
        return e.status;
    } catch (const std::bad_alloc &) {
        set_error("%s: out of host memory", fn);
        return APAIRS_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        set_error("%s: internal error: %s", fn, e.what());
        return APAIRS_ERROR_INTERNAL;
    } catch (...) {
        set_error("%s: internal error: unknown exception", fn);
        return APAIRS_ERROR_INTERNAL;
    }
}

// An array argument of an execute function, by its C name.
struct Array {
    const char *name;
    const void *ptr;
};

// Every execute function: the handle and each array must be non-null, and the plan must
// be one of `op`'s; the arrays go to the plan in the order of the C arguments.
void execute_op(apairs_plan_t plan, const char *op, std::initializer_list<Array> args) {
    require(plan, "plan");
    const void *arrays[8] = {};
    size_t k = 0;
    for (const Array &a : args) {
        require(a.ptr, a.name);
        arrays[k++] = a.ptr;
    }
    apairs::require_op(*plan, op);
    plan->execute(arrays);
}

}  // namespace

extern "C" {

int32_t apairs_version_number(void) { return APAIRS_VERSION_NUMBER; }

const char *apairs_version_string(void) { return APAIRS_VERSION_STRING; }

const char *apairs_status_string(apairs_status_t status) {
    switch (status) {
    case APAIRS_SUCCESS: return "success";
    case APAIRS_ERROR_NULL_POINTER: return "null pointer";
    case APAIRS_ERROR_INVALID_VALUE: return "invalid value";
    case APAIRS_ERROR_OVERFLOW: return "size overflow";
    case APAIRS_ERROR_UNKNOWN_ENUM: return "unknown enumeration value";
    case APAIRS_ERROR_UNSUPPORTED: return "unsupported combination";
    case APAIRS_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case APAIRS_ERROR_OUT_OF_MEMORY: return "out of memory";
    case APAIRS_ERROR_DEVICE: return "CUDA device error";
    case APAIRS_ERROR_INVALID_POINTER: return "invalid pointer for this backend";
    case APAIRS_ERROR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *apairs_last_error(void) { return last_error; }

apairs_status_t apairs_cuda_device_count(int32_t *count) {
    return guarded(__func__, [&] {
        require(count, "count");
#if APAIRS_HAVE_CUDA
        *count = apairs::cuda::device_count();
#else
        *count = 0;
#endif
    });
}

apairs_status_t apairs_context_create(apairs_context_t *ctx, int32_t backend, int32_t device) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        *ctx = std::make_unique<apairs_context_s>(apairs::make_context(backend, device)).release();
    });
}

apairs_status_t apairs_context_destroy(apairs_context_t ctx) {
    return guarded(__func__, [&] { delete ctx; });
}

apairs_status_t apairs_context_get_backend(apairs_context_t ctx, int32_t *backend) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        require(backend, "backend");
        *backend = ctx->backend;
    });
}

apairs_status_t apairs_context_set_stream(apairs_context_t ctx, void *stream) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        apairs::set_stream(*ctx, stream);
    });
}

apairs_status_t apairs_context_set_option(apairs_context_t ctx, int32_t option, double value) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        apairs::set_option(*ctx, option, value);
    });
}

apairs_status_t apairs_context_get_option(apairs_context_t ctx, int32_t option, double *value) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        require(value, "value");
        *value = apairs::get_option(*ctx, option);
    });
}

apairs_status_t apairs_plan_create_pairwise(apairs_plan_t *plan, apairs_context_t ctx,
                                            int32_t metric, double p, int32_t dtype, int64_t n1,
                                            int64_t n2, int64_t d, int64_t lda, int64_t ldb,
                                            int64_t ldd) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(ctx, "ctx");
        const apairs::pairwise::Problem pb =
            apairs::pairwise::make_problem(metric, p, dtype, n1, n2, d, lda, ldb, ldd);
        *plan = apairs::pairwise::make_plan(*ctx, pb).release();
    });
}

apairs_status_t apairs_plan_execute(apairs_plan_t plan, const void *A, const void *B, void *D) {
    return guarded(__func__, [&] { execute_op(plan, "pairwise", {{"A", A}, {"B", B}, {"D", D}}); });
}

// Every batched create: check the handles, build the family's problem (which validates
// every argument), plan.
#define APAIRS_CREATE_BATCHED(make_problem, make_plan, ...)                     \
    guarded(__func__, [&] {                                                     \
        require(plan, "plan");                                                  \
        require(ctx, "ctx");                                                    \
        *plan = apairs::batched::make_plan(*ctx, apairs::batched::make_problem(__VA_ARGS__)).release(); \
    })

apairs_status_t apairs_plan_create_gemm_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                int32_t layout, int32_t order, int32_t trans_a, int32_t trans_b,
                                                int64_t m, int64_t n, int64_t k, double alpha, double beta,
                                                int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                int64_t ldc, int64_t stride_c, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_gemm_problem, make_gemm_plan, dtype, layout, order, trans_a, trans_b, m, n, k,
                                 alpha, beta, lda, stride_a, ldb, stride_b, ldc, stride_c, batch);
}

apairs_status_t apairs_plan_create_potrf_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                 int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t lda,
                                                 int64_t stride_a, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_potrf_problem, make_potrf_plan, dtype, layout, order, uplo, n, lda, stride_a,
                                 batch);
}

apairs_status_t apairs_plan_execute_potrf(apairs_plan_t plan, void *A, int32_t *info) {
    return guarded(__func__, [&] { execute_op(plan, "potrf", {{"A", A}, {"info", info}}); });
}

apairs_status_t apairs_plan_create_potrs_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                 int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                                                 int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                 int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_potrs_problem, make_potrs_plan, dtype, layout, order, uplo, n, nrhs, lda,
                                 stride_a, ldb, stride_b, batch);
}

apairs_status_t apairs_plan_execute_potrs(apairs_plan_t plan, const void *A, void *B) {
    return guarded(__func__, [&] { execute_op(plan, "potrs", {{"A", A}, {"B", B}}); });
}

apairs_status_t apairs_plan_execute_gemm(apairs_plan_t plan, const void *A, const void *B, void *C) {
    return guarded(__func__, [&] { execute_op(plan, "gemm", {{"A", A}, {"B", B}, {"C", C}}); });
}

apairs_status_t apairs_plan_create_posv_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                                                int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_posv_problem, make_posv_plan, dtype, layout, order, uplo, n, nrhs, lda,
                                 stride_a, ldb, stride_b, batch);
}

apairs_status_t apairs_plan_execute_posv(apairs_plan_t plan, void *A, void *B, int32_t *info) {
    return guarded(__func__, [&] { execute_op(plan, "posv", {{"A", A}, {"B", B}, {"info", info}}); });
}

apairs_status_t apairs_plan_create_dot_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                               int32_t layout, int64_t n, int64_t stride_x, int64_t stride_y,
                                               int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_dot_problem, make_dot_plan, dtype, layout, n, stride_x, stride_y, batch);
}

apairs_status_t apairs_plan_execute_dot(apairs_plan_t plan, const void *x, const void *y, void *out) {
    return guarded(__func__, [&] { execute_op(plan, "dot", {{"x", x}, {"y", y}, {"out", out}}); });
}

apairs_status_t apairs_plan_create_gemv_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                int32_t layout, int32_t order, int32_t trans, int64_t m, int64_t n,
                                                double alpha, double beta, int64_t lda, int64_t stride_a,
                                                int64_t stride_x, int64_t stride_y, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_gemv_problem, make_gemv_plan, dtype, layout, order, trans, m, n, alpha, beta,
                                 lda, stride_a, stride_x, stride_y, batch);
}

apairs_status_t apairs_plan_execute_gemv(apairs_plan_t plan, const void *A, const void *x, void *y) {
    return guarded(__func__, [&] { execute_op(plan, "gemv", {{"A", A}, {"x", x}, {"y", y}}); });
}

apairs_status_t apairs_plan_create_getrf_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                 int32_t layout, int32_t order, int64_t n, int64_t lda,
                                                 int64_t stride_a, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_getrf_problem, make_getrf_plan, dtype, layout, order, n, lda, stride_a, batch);
}

apairs_status_t apairs_plan_execute_getrf(apairs_plan_t plan, void *A, int32_t *ipiv, int32_t *info) {
    return guarded(__func__, [&] { execute_op(plan, "getrf", {{"A", A}, {"ipiv", ipiv}, {"info", info}}); });
}

apairs_status_t apairs_plan_create_getrs_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                 int32_t layout, int32_t order, int32_t trans, int64_t n,
                                                 int64_t nrhs, int64_t lda, int64_t stride_a, int64_t ldb,
                                                 int64_t stride_b, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_getrs_problem, make_getrs_plan, dtype, layout, order, trans, n, nrhs, lda,
                                 stride_a, ldb, stride_b, batch);
}

apairs_status_t apairs_plan_execute_getrs(apairs_plan_t plan, const void *A, const int32_t *ipiv, void *B) {
    return guarded(__func__, [&] { execute_op(plan, "getrs", {{"A", A}, {"ipiv", ipiv}, {"B", B}}); });
}

apairs_status_t apairs_plan_create_gesv_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                int32_t layout, int32_t order, int64_t n, int64_t nrhs, int64_t lda,
                                                int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_gesv_problem, make_gesv_plan, dtype, layout, order, n, nrhs, lda, stride_a,
                                 ldb, stride_b, batch);
}

apairs_status_t apairs_plan_execute_gesv(apairs_plan_t plan, void *A, int32_t *ipiv, void *B, int32_t *info) {
    return guarded(__func__,
                   [&] { execute_op(plan, "gesv", {{"A", A}, {"ipiv", ipiv}, {"B", B}, {"info", info}}); });
}

apairs_status_t apairs_plan_create_transpose_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                     int32_t to_layout, int64_t entries, int64_t stride_in,
                                                     int64_t stride_out, int64_t batch) {
    return APAIRS_CREATE_BATCHED(make_transpose_problem, make_transpose_plan, dtype, to_layout, entries, stride_in,
                                 stride_out, batch);
}

apairs_status_t apairs_plan_execute_transpose(apairs_plan_t plan, const void *in, void *out) {
    return guarded(__func__, [&] { execute_op(plan, "transpose", {{"in", in}, {"out", out}}); });
}

// Every two-body create: check the handles, build the family's problem (which validates
// every argument), plan.
#define APAIRS_CREATE_TWOBODY(make_problem, ...)                                              \
    guarded(__func__, [&] {                                                                   \
        require(plan, "plan");                                                                \
        require(ctx, "ctx");                                                                  \
        *plan = apairs::twobody::make_plan(*ctx, apairs::twobody::make_problem(__VA_ARGS__)).release(); \
    })

namespace {
// Every two-body execute: the plan checks its arrays (B may be NULL for AUTO), in the
// order of twobody::Array.
void execute_twobody(apairs_plan_t plan, const char *op, const void *A, const void *B, const void *wa,
                     const void *wb, const void *out0, const void *out1, bool weighted) {
    require(plan, "plan");
    apairs::require_op(*plan, op);
    static const int marker = 0;
    const void *arrays[apairs::twobody::kArrays] = {A, B, wa, wb, out0, out1, weighted ? &marker : nullptr};
    plan->execute(arrays);
}
}  // namespace

apairs_status_t apairs_plan_create_pair_counts(apairs_plan_t *plan, apairs_context_t ctx, int32_t pairs,
                                               int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                                               int64_t d, int64_t lda, int64_t ldb, int64_t nradii,
                                               const double *radii, int64_t nbox, const double *box) {
    return APAIRS_CREATE_TWOBODY(make_counts, pairs, metric, p, dtype, n1, n2, d, lda, ldb, nradii, radii, nbox,
                                 box);
}

apairs_status_t apairs_plan_execute_pair_counts(apairs_plan_t plan, const void *A, const void *B, int64_t *counts) {
    return guarded(__func__, [&] { execute_twobody(plan, "pair_counts", A, B, nullptr, nullptr, counts, nullptr, false); });
}

apairs_status_t apairs_plan_create_histogram_uniform(apairs_plan_t *plan, apairs_context_t ctx, int32_t pairs,
                                                     int32_t metric, double p, int32_t dtype, int64_t n1,
                                                     int64_t n2, int64_t d, int64_t lda, int64_t ldb, int64_t nbins,
                                                     double rmin, double rmax, int64_t nbox, const double *box) {
    return APAIRS_CREATE_TWOBODY(make_histogram_uniform, pairs, metric, p, dtype, n1, n2, d, lda, ldb, nbins, rmin,
                                 rmax, nbox, box);
}

apairs_status_t apairs_plan_create_histogram_edges(apairs_plan_t *plan, apairs_context_t ctx, int32_t pairs,
                                                   int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                                                   int64_t d, int64_t lda, int64_t ldb, int64_t nbins,
                                                   const double *edges, int64_t nbox, const double *box) {
    return APAIRS_CREATE_TWOBODY(make_histogram_edges, pairs, metric, p, dtype, n1, n2, d, lda, ldb, nbins, edges,
                                 nbox, box);
}

apairs_status_t apairs_plan_execute_histogram(apairs_plan_t plan, const void *A, const void *B, int64_t *counts) {
    return guarded(__func__, [&] { execute_twobody(plan, "histogram", A, B, nullptr, nullptr, counts, nullptr, false); });
}

apairs_status_t apairs_plan_execute_histogram_weighted(apairs_plan_t plan, const void *A, const void *B,
                                                       const double *weights_a, const double *weights_b,
                                                       int64_t *counts, double *sums) {
    return guarded(__func__, [&] {
        execute_twobody(plan, "histogram", A, B, weights_a, weights_b, counts, sums, true);
    });
}

apairs_status_t apairs_plan_create_knn(apairs_plan_t *plan, apairs_context_t ctx, int32_t pairs, int32_t metric,
                                       double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d, int64_t lda,
                                       int64_t ldb, int64_t k) {
    return APAIRS_CREATE_TWOBODY(make_knn, pairs, metric, p, dtype, n1, n2, d, lda, ldb, k);
}

apairs_status_t apairs_plan_execute_knn(apairs_plan_t plan, const void *A, const void *B, int64_t *indices,
                                        void *distances) {
    return guarded(__func__, [&] { execute_twobody(plan, "knn", A, B, nullptr, nullptr, indices, distances, false); });
}

apairs_status_t apairs_genotype_pack(apairs_context_t ctx, const void *genotypes, int64_t n, int64_t d,
                                     int64_t ld_genotypes, int32_t missing_value, void *packed, int64_t ld_packed) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        apairs::genotype::pack(*ctx, static_cast<const uint8_t *>(genotypes), n, d, ld_genotypes, missing_value,
                               static_cast<uint8_t *>(packed), ld_packed);
    });
}

apairs_status_t apairs_genotype_missing_weights(const void *packed, int64_t n, int64_t d, int64_t ld,
                                                const void *founders, void *weights) {
    return guarded(__func__, [&] {
        apairs::genotype::missing_weights_host(static_cast<const uint8_t *>(packed), n, d, ld,
                                               static_cast<const uint8_t *>(founders),
                                               static_cast<uint32_t *>(weights), apairs::host::resolve_threads(0));
    });
}

apairs_status_t apairs_plan_create_genotype(apairs_plan_t *plan, apairs_context_t ctx, int32_t metric,
                                            int32_t missing, int64_t n1, int64_t n2, int64_t d, int64_t lda,
                                            int64_t ldb, int64_t ldd, const void *weights) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(ctx, "ctx");
        *plan = apairs::genotype::make_plan(
                    *ctx, apairs::genotype::make_problem(metric, missing, n1, n2, d, lda, ldb, ldd,
                                                         static_cast<const uint32_t *>(weights)))
                    .release();
    });
}

apairs_status_t apairs_plan_execute_genotype(apairs_plan_t plan, const void *A, const void *B, void *D) {
    return guarded(__func__, [&] { execute_op(plan, "genotype", {{"A", A}, {"B", B}, {"D", D}}); });
}

apairs_status_t apairs_plan_describe(apairs_plan_t plan, char *buf, int64_t size, int64_t *length) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        if (size < 0) fail(APAIRS_ERROR_INVALID_VALUE, "size = {}: expected >= 0", size);
        if (size > 0) require(buf, "buf");
        const std::string &s = plan->description;
        if (size > 0) {
            const size_t n = std::min(s.size(), static_cast<size_t>(size - 1));
            std::memcpy(buf, s.data(), n);
            buf[n] = '\0';
        }
        if (length) *length = static_cast<int64_t>(s.size());
    });
}

apairs_status_t apairs_plan_destroy(apairs_plan_t plan) {
    return guarded(__func__, [&] { delete plan; });
}

}  // extern "C"
