// The C boundary: argument checks, the exception firewall and the per-thread error
// message. Every extern "C" body runs inside guarded(), so no exception crosses the
// ABI, and every argument is checked before anything is allocated or written.
#include "apairs.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>

#include "plan.hpp"

using apairs::Error;

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

// More threads than this is a mistake, and OpenMP runtimes abort the process when they
// cannot create the threads asked for.
constexpr int kMaxHostThreads = 1024;

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

template <class... Args>
[[noreturn]] void fail(apairs_status_t status, fmt::format_string<Args...> f, Args &&...args) {
    throw Error(status, fmt::format(f, std::forward<Args>(args)...));
}

void require(const void *p, const char *name) {
    if (p == nullptr) fail(APAIRS_ERROR_NULL_POINTER, "{} is NULL", name);
}

void require_at_least(int64_t v, int64_t min, const char *name, const char *what) {
    if (v < min) fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected {}", name, v, what);
}

// rows * ld * elem bytes must fit in int64 (and hence be addressable).
void require_fits(int64_t rows, int64_t ld, size_t elem, const char *rows_name, const char *ld_name) {
    int64_t n = 0, bytes = 0;
    if (!apairs::mul_ok(rows, ld, &n) || !apairs::mul_ok(n, static_cast<int64_t>(elem), &bytes))
        fail(APAIRS_ERROR_OVERFLOW, "{} * {} = {} * {} elements of {} bytes overflow 64 bits",
             rows_name, ld_name, rows, ld, elem);
}

apairs::PairwiseProblem check_pairwise(int32_t metric, double p, int32_t dtype, int64_t n1,
                                       int64_t n2, int64_t d, int64_t lda, int64_t ldb,
                                       int64_t ldd) {
    if (!apairs::metric_name(metric))
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "metric = {}: not an apairs_metric_e value", metric);
    if (!apairs::dtype_name(dtype))
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "dtype = {}: not an apairs_dtype_e value", dtype);
    apairs::PairwiseProblem pb{metric, 0.0, dtype, n1, n2, d, lda, ldb, ldd};
    if (metric == APAIRS_METRIC_LP) {
        if (!(p > 0))  // also catches NaN
            fail(APAIRS_ERROR_INVALID_VALUE, "p = {}: LP needs p > 0", p);
        // The kernels compute in the element type: p and 1/p must be normal numbers there.
        const bool f32 = dtype == APAIRS_DTYPE_F32;
        const double lo = f32 ? double(std::numeric_limits<float>::min())
                              : std::numeric_limits<double>::min();
        const double hi = f32 ? double(std::numeric_limits<float>::max())
                              : std::numeric_limits<double>::max();
        if (!std::isinf(p) && !(p >= lo && p <= hi && 1 / p >= lo && 1 / p <= hi))
            fail(APAIRS_ERROR_INVALID_VALUE,
                 "p = {}: p and 1/p must be normal {} numbers (or p = +infinity)", p,
                 apairs::dtype_name(dtype));
        if (p == 1) pb.metric = APAIRS_METRIC_L1;
        else if (p == 2) pb.metric = APAIRS_METRIC_L2;
        else if (std::isinf(p)) pb.metric = APAIRS_METRIC_LINF;
        else pb.p = p;
    }
    if (dtype == APAIRS_DTYPE_U8 && metric != APAIRS_METRIC_HAMMING)
        fail(APAIRS_ERROR_UNSUPPORTED, "metric = {} with dtype = u8: only HAMMING takes u8",
             apairs::metric_name(metric));
    require_at_least(n1, 1, "n1", ">= 1");
    require_at_least(n2, 1, "n2", ">= 1");
    require_at_least(d, 1, "d", ">= 1");
    if (lda < d) fail(APAIRS_ERROR_INVALID_VALUE, "lda = {}: expected lda >= d = {}", lda, d);
    if (ldb < d) fail(APAIRS_ERROR_INVALID_VALUE, "ldb = {}: expected ldb >= d = {}", ldb, d);
    if (ldd < n2) fail(APAIRS_ERROR_INVALID_VALUE, "ldd = {}: expected ldd >= n2 = {}", ldd, n2);
    require_fits(n1, lda, pb.in_size(), "n1", "lda");
    require_fits(n2, ldb, pb.in_size(), "n2", "ldb");
    require_fits(n1, ldd, pb.out_size(), "n1", "ldd");
    if (metric == APAIRS_METRIC_HAMMING) {
        const int64_t max_d = dtype == APAIRS_DTYPE_F32 ? (int64_t(1) << 24) : INT32_MAX;
        if (d > max_d)
            fail(APAIRS_ERROR_UNSUPPORTED, "d = {}: HAMMING on {} counts exactly only up to d = {}",
                 d, apairs::dtype_name(dtype), max_d);
    }
    return pb;
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
        if (backend < APAIRS_BACKEND_AUTO || backend > APAIRS_BACKEND_CUDA)
            fail(APAIRS_ERROR_UNKNOWN_ENUM, "backend = {}: not an apairs_backend_e value", backend);
        if (device < 0) fail(APAIRS_ERROR_INVALID_VALUE, "device = {}: expected >= 0", device);
        auto c = std::make_unique<apairs_context_s>();
        c->backend = apairs::resolve_backend(backend, device);
        c->device = device;
        *ctx = c.release();
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
        if (ctx->backend != APAIRS_BACKEND_CUDA && stream != nullptr)
            fail(APAIRS_ERROR_UNSUPPORTED, "stream = {}: a host context takes only NULL", stream);
        ctx->stream = stream;
    });
}

apairs_status_t apairs_context_set_option(apairs_context_t ctx, int32_t option, double value) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        switch (option) {
        case APAIRS_OPTION_OCCUPANCY_TARGET:
            if (!(value >= 0 && value <= 1))
                fail(APAIRS_ERROR_INVALID_VALUE,
                     "APAIRS_OPTION_OCCUPANCY_TARGET = {}: expected 0 (highest) or a fraction in (0, 1]",
                     value);
            ctx->occupancy_target = value;
            return;
        case APAIRS_OPTION_HOST_THREADS:
            if (!(value >= 0 && value <= kMaxHostThreads) || value != std::floor(value))
                fail(APAIRS_ERROR_INVALID_VALUE,
                     "APAIRS_OPTION_HOST_THREADS = {}: expected a whole number in [0, {}]", value,
                     kMaxHostThreads);
            ctx->host_threads = static_cast<int>(value);
            return;
        }
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "option = {}: not an apairs_option_e value", option);
    });
}

apairs_status_t apairs_context_get_option(apairs_context_t ctx, int32_t option, double *value) {
    return guarded(__func__, [&] {
        require(ctx, "ctx");
        require(value, "value");
        switch (option) {
        case APAIRS_OPTION_OCCUPANCY_TARGET: *value = ctx->occupancy_target; return;
        case APAIRS_OPTION_HOST_THREADS: *value = ctx->host_threads; return;
        }
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "option = {}: not an apairs_option_e value", option);
    });
}

apairs_status_t apairs_plan_create_pairwise(apairs_plan_t *plan, apairs_context_t ctx,
                                            int32_t metric, double p, int32_t dtype, int64_t n1,
                                            int64_t n2, int64_t d, int64_t lda, int64_t ldb,
                                            int64_t ldd) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(ctx, "ctx");
        const apairs::PairwiseProblem pb = check_pairwise(metric, p, dtype, n1, n2, d, lda, ldb, ldd);
        auto pl = std::make_unique<apairs_plan_s>();
        pl->pb = pb;
        pl->ctx = *ctx;
        apairs::plan_pairwise(*pl);
        *plan = pl.release();
    });
}

apairs_status_t apairs_plan_execute(apairs_plan_t plan, const void *A, const void *B, void *D) {
    return guarded(__func__, [&] {
        require(plan, "plan");
        require(A, "A");
        require(B, "B");
        require(D, "D");
        apairs::execute(*plan, A, B, D);
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
