// Genotype plans: the object behind apairs_plan_create_genotype.
#pragma once

#include <cstdint>
#include <memory>

#include "common/plan.hpp"
#include "genotype/problem.hpp"

namespace apairs::genotype {

std::unique_ptr<apairs_plan_s> make_plan(const apairs_context_s &ctx, Problem pb);

// apairs_genotype_pack: on the host, or on a CUDA context's device when both arrays are
// device memory (validates every argument).
void pack(const apairs_context_s &ctx, const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
          uint8_t *packed, int64_t ldp);

}  // namespace apairs::genotype
