// The C boundary: it converts the C arguments, calls the core, and translates what
// the core throws into a status and the per-thread error message. Every extern "C" body
// runs inside guarded(), so no exception crosses the ABI. Validation lives with each
// family (src/pairwise/problem.cpp, src/common/context.cpp); only the pointers the C
// calling convention hands over (out-arguments, handles, arrays) are checked here.
#include "apairs.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "common/context.hpp"
#include "common/plan.hpp"
#include "batched/plan.hpp"
#include "pairwise/plan.hpp"
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

thread_local std::string last_error;

template <class F>
apairs_status_t guarded(const char *fn, F &&body) noexcept {
    try {
        last_error.clear();
        body();
        return APAIRS_SUCCESS;
    } catch (const Error &e) {
        try { last_error = fmt::format("{}: {}", fn, e.what()); } catch (...) {}
        return e.status;
    } catch (const std::bad_alloc &) {
        try { last_error = fmt::format("{}: out of host memory", fn); } catch (...) {}
        return APAIRS_ERROR_OUT_OF_MEMORY;
    } catch (const std::exception &e) {
        try { last_error = fmt::format("{}: internal error: {}", fn, e.what()); } catch (...) {}
        return APAIRS_ERROR_INTERNAL;
    } catch (...) {
        try { last_error = fmt::format("{}: internal error: unknown exception", fn); } catch (...) {}
        return APAIRS_ERROR_INTERNAL;
    }
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

const char *apairs_last_error(void) { return last_error.c_str(); }

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
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(A, "A");
        require(B, "B");
        require(D, "D");
        apairs::require_op(*plan, "pairwise");
        const void *const arrays[] = {A, B, D};
        plan->execute(arrays);
    });
}

apairs_status_t apairs_plan_create_gemm_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                int32_t layout, int32_t order, int32_t trans_a, int32_t trans_b,
                                                int64_t m, int64_t n, int64_t k, double alpha, double beta,
                                                int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                int64_t ldc, int64_t stride_c, int64_t batch) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(ctx, "ctx");
        const apairs::batched::GemmProblem pb = apairs::batched::make_gemm_problem(
            dtype, layout, order, trans_a, trans_b, m, n, k, alpha, beta, lda, stride_a, ldb, stride_b, ldc,
            stride_c, batch);
        *plan = apairs::batched::make_gemm_plan(*ctx, pb).release();
    });
}

apairs_status_t apairs_plan_create_potrf_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                 int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t lda,
                                                 int64_t stride_a, int64_t batch) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(ctx, "ctx");
        const apairs::batched::PotrfProblem pb =
            apairs::batched::make_potrf_problem(dtype, layout, order, uplo, n, lda, stride_a, batch);
        *plan = apairs::batched::make_potrf_plan(*ctx, pb).release();
    });
}

apairs_status_t apairs_plan_execute_potrf(apairs_plan_t plan, void *A, int32_t *info) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(A, "A");
        require(info, "info");
        apairs::require_op(*plan, "potrf");
        const void *const arrays[] = {A, info};
        plan->execute(arrays);
    });
}

apairs_status_t apairs_plan_create_potrs_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                 int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                                                 int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                 int64_t batch) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(ctx, "ctx");
        const apairs::batched::PotrsProblem pb = apairs::batched::make_potrs_problem(
            dtype, layout, order, uplo, n, nrhs, lda, stride_a, ldb, stride_b, batch);
        *plan = apairs::batched::make_potrs_plan(*ctx, pb).release();
    });
}

apairs_status_t apairs_plan_execute_potrs(apairs_plan_t plan, const void *A, void *B) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(A, "A");
        require(B, "B");
        apairs::require_op(*plan, "potrs");
        const void *const arrays[] = {A, B};
        plan->execute(arrays);
    });
}

apairs_status_t apairs_plan_execute_gemm(apairs_plan_t plan, const void *A, const void *B, void *C) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(A, "A");
        require(B, "B");
        require(C, "C");
        apairs::require_op(*plan, "gemm");
        const void *const arrays[] = {A, B, C};
        plan->execute(arrays);
    });
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
