// Contexts and plans: the objects behind the C handles.
#pragma once

#include <string>

#include "problem.hpp"
#if APAIRS_HAVE_CUDA
#include "cuda/backend.hpp"
#endif

struct apairs_context_s {
    int32_t backend = APAIRS_BACKEND_HOST;  // resolved: HOST or CUDA
    int32_t device = 0;
    void *stream = nullptr;
    double occupancy_target = 0;  // 0 = highest reachable
    int host_threads = 0;         // 0 = OpenMP default
};

struct apairs_plan_s {
    apairs::PairwiseProblem pb;
    apairs_context_s ctx;  // a copy: the plan outlives its context
#if APAIRS_HAVE_CUDA
    apairs::cuda::LaunchConfig cuda;
#endif
    std::string description;
};

namespace apairs {

// AUTO becomes CUDA when compiled in and a device is present, else HOST. Throws
// BACKEND_UNAVAILABLE when CUDA is asked for and cannot be had.
int32_t resolve_backend(int32_t backend, int32_t device);

// Chooses and records the launch configuration; the problem is already validated.
void plan_pairwise(apairs_plan_s &plan);

void execute(const apairs_plan_s &plan, const void *A, const void *B, void *D);

}  // namespace apairs
