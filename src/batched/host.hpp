// The batched family's host (OpenMP) engine: OpenMP over elements; the reference the
// GPU is tested against.
#pragma once

#include "batched/problem.hpp"

namespace apairs::batched {

void gemm_host(const GemmProblem &pb, const void *A, const void *B, void *C, int threads);
void potrf_host(const PotrfProblem &pb, void *A, int32_t *info, int threads);
void potrs_host(const PotrsProblem &pb, const void *A, void *B, int threads);

}  // namespace apairs::batched
