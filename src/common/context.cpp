#include "common/context.hpp"

#include <cmath>

#if APAIRS_HAVE_CUDA
#include "cuda/device.hpp"
#endif

namespace apairs {
namespace {

// More threads than this is a mistake, and OpenMP runtimes abort the process when they
// cannot create the threads asked for.
constexpr int kMaxHostThreads = 1024;

[[noreturn]] void unknown_option(int32_t option) {
    fail(APAIRS_ERROR_UNKNOWN_ENUM, "option = {}: not an apairs_option_e value", option);
}

}  // namespace

apairs_context_s make_context(int32_t backend, int32_t device) {
    if (backend < APAIRS_BACKEND_AUTO || backend > APAIRS_BACKEND_CUDA)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "backend = {}: not an apairs_backend_e value", backend);
    if (device < 0) fail(APAIRS_ERROR_INVALID_VALUE, "device = {}: expected >= 0", device);
    apairs_context_s c;
    c.device = device;
#if APAIRS_HAVE_CUDA
    if (backend == APAIRS_BACKEND_AUTO)
        c.backend = device < cuda::device_count() ? APAIRS_BACKEND_CUDA : APAIRS_BACKEND_HOST;
    else if (backend == APAIRS_BACKEND_CUDA) {
        cuda::require_device(device);
        c.backend = APAIRS_BACKEND_CUDA;
    }
    if (c.backend == APAIRS_BACKEND_CUDA) c.pool = cuda::hold_pool(device);
#else
    if (backend == APAIRS_BACKEND_CUDA)
        fail(APAIRS_ERROR_BACKEND_UNAVAILABLE,
             "backend = APAIRS_BACKEND_CUDA: this libapairs was built without CUDA");
#endif
    return c;
}

void set_stream(apairs_context_s &ctx, void *stream) {
    if (ctx.backend != APAIRS_BACKEND_CUDA && stream != nullptr)
        fail(APAIRS_ERROR_UNSUPPORTED, "stream = {}: a host context takes only NULL", stream);
    ctx.stream = stream;
}

void set_option(apairs_context_s &ctx, int32_t option, double value) {
    switch (option) {
    case APAIRS_OPTION_OCCUPANCY_TARGET:
        if (!(value >= 0 && value <= 1))
            fail(APAIRS_ERROR_INVALID_VALUE,
                 "APAIRS_OPTION_OCCUPANCY_TARGET = {}: expected 0 (highest) or a fraction in (0, 1]", value);
        ctx.occupancy_target = value;
        return;
    case APAIRS_OPTION_HOST_THREADS:
        if (!(value >= 0 && value <= kMaxHostThreads) || value != std::floor(value))
            fail(APAIRS_ERROR_INVALID_VALUE,
                 "APAIRS_OPTION_HOST_THREADS = {}: expected a whole number in [0, {}]", value, kMaxHostThreads);
        ctx.host_threads = static_cast<int>(value);
        return;
    case APAIRS_OPTION_STAGING_BYTES:
        // 2^53: every whole number below is exact in a double.
        if (!(value >= 0 && value <= 9007199254740992.0) || value != std::floor(value))
            fail(APAIRS_ERROR_INVALID_VALUE,
                 "APAIRS_OPTION_STAGING_BYTES = {}: expected a whole number of bytes in [0, 2^53]", value);
        ctx.staging_bytes = static_cast<int64_t>(value);
        return;
    case APAIRS_OPTION_TF32:
        if (!(value == 0 || value == 1))
            fail(APAIRS_ERROR_INVALID_VALUE, "APAIRS_OPTION_TF32 = {}: expected 0 (float arithmetic) or 1 (TF32)",
                 value);
        ctx.tf32 = value == 1;
        return;
    }
    unknown_option(option);
}

double get_option(const apairs_context_s &ctx, int32_t option) {
    switch (option) {
    case APAIRS_OPTION_OCCUPANCY_TARGET: return ctx.occupancy_target;
    case APAIRS_OPTION_HOST_THREADS: return ctx.host_threads;
    case APAIRS_OPTION_STAGING_BYTES: return double(ctx.staging_bytes);
    case APAIRS_OPTION_TF32: return ctx.tf32 ? 1 : 0;
    }
    unknown_option(option);
}

}  // namespace apairs
