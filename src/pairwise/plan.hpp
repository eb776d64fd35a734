// All-pairs plans: the object behind apairs_plan_create_pairwise.
#pragma once

#include <memory>

#include "common/plan.hpp"
#include "pairwise/problem.hpp"

namespace apairs::pairwise {

// Chooses and records the launch configuration of a validated problem on the
// context's backend; the plan keeps a copy of the context.
std::unique_ptr<apairs_plan_s> make_plan(const apairs_context_s &ctx, const Problem &pb);

}  // namespace apairs::pairwise
