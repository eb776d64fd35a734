// Two-body statistics plans: the objects behind apairs_plan_create_pair_counts,
// _histogram_uniform, _histogram_edges and _knn.
#pragma once

#include <memory>

#include "common/plan.hpp"
#include "twobody/problem.hpp"

namespace apairs::twobody {

// The execute functions hand the plan six arrays, in this order (unused ones null):
// A, B, weights_a, weights_b, then counts and sums (histogram), counts (pair counts) or
// indices and distances (kNN); then kWeighted, non-null for the weighted histogram.
enum Array { kA = 0, kB, kWeightsA, kWeightsB, kOut0, kOut1, kWeighted, kArrays };

std::unique_ptr<apairs_plan_s> make_plan(const apairs_context_s &ctx, const Problem &pb);

}  // namespace apairs::twobody
