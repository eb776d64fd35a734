// The plan behind every apairs_plan_t, whatever its family: FFTW's model, one handle
// type for every kind of problem. A family (src/pairwise/, ...) derives from it, keeps
// its own problem, validation and launch configuration, and implements execute().
#pragma once

#include <string>

#include "common/context.hpp"

struct apairs_plan_s {
    virtual ~apairs_plan_s() = default;

    // "pairwise", "gemm", ...: the operation, and the C function that executes it.
    virtual const char *op() const = 0;
    virtual const char *execute_function() const = 0;

    // Runs the plan on the caller's arrays, in the order of its execute function's
    // arguments (apairs::require_op has checked that function is the right one). Arrays
    // the plan writes arrive here as const and are cast back by the family. Checks every
    // pointer before writing anything; throws apairs::Error.
    virtual void execute(const void *const *arrays) const = 0;

    // One line: backend, kernel, launch configuration and why (apairs_plan_describe).
    std::string description;

    // A copy of the context at creation: the plan outlives it.
    apairs_context_s ctx;
};

namespace apairs {

// Every execute function first checks that it was given a plan of its operation.
inline void require_op(const apairs_plan_s &plan, const char *op) {
    if (std::string(plan.op()) != op)
        fail(APAIRS_ERROR_UNSUPPORTED, "plan is a {} plan: execute it with {}", plan.op(), plan.execute_function());
}

}  // namespace apairs
