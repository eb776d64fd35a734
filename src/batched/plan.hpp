// Batched plans: the objects behind apairs_plan_create_*_batched.
#pragma once

#include <memory>

#include "batched/problem.hpp"
#include "common/plan.hpp"

namespace apairs::batched {

std::unique_ptr<apairs_plan_s> make_gemm_plan(const apairs_context_s &ctx, const GemmProblem &pb);
std::unique_ptr<apairs_plan_s> make_potrf_plan(const apairs_context_s &ctx, const PotrfProblem &pb);
std::unique_ptr<apairs_plan_s> make_potrs_plan(const apairs_context_s &ctx, const PotrsProblem &pb);
std::unique_ptr<apairs_plan_s> make_posv_plan(const apairs_context_s &ctx, const PosvProblem &pb);
std::unique_ptr<apairs_plan_s> make_dot_plan(const apairs_context_s &ctx, const DotProblem &pb);
std::unique_ptr<apairs_plan_s> make_gemv_plan(const apairs_context_s &ctx, const GemvProblem &pb);
std::unique_ptr<apairs_plan_s> make_getrf_plan(const apairs_context_s &ctx, const GetrfProblem &pb);
std::unique_ptr<apairs_plan_s> make_getrs_plan(const apairs_context_s &ctx, const GetrsProblem &pb);
std::unique_ptr<apairs_plan_s> make_gesv_plan(const apairs_context_s &ctx, const GesvProblem &pb);
std::unique_ptr<apairs_plan_s> make_transpose_plan(const apairs_context_s &ctx, const TransposeProblem &pb);

}  // namespace apairs::batched
