// Host (OpenMP) backend: the reference every other backend is tested against.
#pragma once

#include "problem.hpp"

namespace apairs::host {

// Each thread computes kTileRows x kTileCols tiles of D.
constexpr int64_t kTileRows = 32, kTileCols = 64;

// The number of threads a request resolves to (0 = OpenMP's default; 1 without OpenMP).
int resolve_threads(int requested);

// D = F(A, B) for a validated problem; A, B, D in host memory.
void pairwise(const PairwiseProblem &pb, const void *A, const void *B, void *D, int threads);

}  // namespace apairs::host
