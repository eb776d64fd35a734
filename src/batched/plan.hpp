// Batched plans: the objects behind apairs_plan_create_*_batched.
#pragma once

#include <memory>

#include "batched/problem.hpp"
#include "common/plan.hpp"

namespace apairs::batched {

std::unique_ptr<apairs_plan_s> make_gemm_plan(const apairs_context_s &ctx, const GemmProblem &pb);
std::unique_ptr<apairs_plan_s> make_potrf_plan(const apairs_context_s &ctx, const PotrfProblem &pb);
std::unique_ptr<apairs_plan_s> make_potrs_plan(const apairs_context_s &ctx, const PotrsProblem &pb);

}  // namespace apairs::batched
