// Contexts: the object behind apairs_context_t, shared by every family. A plan copies
// its context when it is created, so it outlives it.
#pragma once

#include <cstdint>
#include <memory>

#include "common/error.hpp"

struct apairs_context_s {
    int32_t backend = APAIRS_BACKEND_HOST;  // resolved: HOST or CUDA
    int32_t device = 0;
    void *stream = nullptr;
    double occupancy_target = 0;  // 0 = highest reachable
    int host_threads = 0;         // 0 = OpenMP default
    int64_t staging_bytes = 0;    // batched CUDA staging of host arrays; 0 = default
    bool tf32 = false;            // F32 DOT and COSINE on CUDA: cuBLAS on the TF32 tensor cores
    // CUDA: a hold on the device's work-buffer pool (cuda::hold_pool), which keeps the
    // buffers that executes free for the next one while any context or plan (each plan
    // holds a copy of its context) on the device lives.
    std::shared_ptr<void> pool;
};

namespace apairs {

// A context for `backend` (an apairs_backend_e value) on `device`: AUTO becomes CUDA
// when compiled in and the device is present, else HOST. Throws UNKNOWN_ENUM,
// INVALID_VALUE, or BACKEND_UNAVAILABLE when CUDA is asked for and cannot be had.
apairs_context_s make_context(int32_t backend, int32_t device);

void set_stream(apairs_context_s &ctx, void *stream);
void set_option(apairs_context_s &ctx, int32_t option, double value);
double get_option(const apairs_context_s &ctx, int32_t option);

}  // namespace apairs
