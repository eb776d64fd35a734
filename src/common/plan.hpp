// The plan behind every apairs_plan_t, whatever its family: FFTW's model, one handle
// type for every kind of problem. A family (src/pairwise/, ...) derives from it, keeps
// its own problem, validation and launch configuration, and implements execute().
#pragma once

#include <string>

#include "common/context.hpp"

struct apairs_plan_s {
    virtual ~apairs_plan_s() = default;

    // "pairwise", ...: names the family in messages (e.g. a plan given to the execute
    // call of another family).
    virtual const char *family() const = 0;

    // Runs the plan on the caller's arrays, in the order of the family's execute call;
    // `count` is how many that call passed. Arrays the family writes are passed here as
    // const and cast back by the family. Checks every pointer before writing anything;
    // throws apairs::Error.
    virtual void execute(const void *const *arrays, int count) const = 0;

    // One line: backend, kernel, launch configuration and why (apairs_plan_describe).
    std::string description;

    // A copy of the context at creation: the plan outlives it.
    apairs_context_s ctx;
};
