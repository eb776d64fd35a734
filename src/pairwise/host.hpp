// The all-pairs host (OpenMP) engine: the reference every other backend is tested against.
#pragma once

#include "pairwise/problem.hpp"

namespace apairs::pairwise {

// Each thread computes kTileRows x kTileCols tiles of D.
constexpr int64_t kTileRows = 32, kTileCols = 64;

// The vector instructions the engine's folding runs with on this CPU ("AVX2", or "the
// build's baseline").
const char *host_vector_isa();

// D = F(A, B) for a validated problem; A, B, D in host memory; `threads` resolved.
void run_host(const Problem &pb, const void *A, const void *B, void *D, int threads);

// The same with the folding's instruction set chosen: the AVX2 copy where `avx2` and
// the CPU has it, else the baseline code (for the test that the two give the same bits).
void run_host_isa(const Problem &pb, const void *A, const void *B, void *D, int threads, bool avx2);

}  // namespace apairs::pairwise
