// Genotype plans: the object behind apairs_plan_create_genotype.
#pragma once

#include <memory>

#include "common/plan.hpp"
#include "genotype/problem.hpp"

namespace apairs::genotype {

std::unique_ptr<apairs_plan_s> make_plan(const apairs_context_s &ctx, Problem pb);

}  // namespace apairs::genotype
