// The batched family's host (OpenMP) engine: OpenMP over elements; the reference the
// GPU is tested against. host.cpp: gemm, potrf, potrs, posv; host_vector.cpp: dot, gemv;
// host_lu.cpp: getrf, getrs, gesv; transpose in host.cpp.
#pragma once

#include "batched/problem.hpp"

namespace apairs::batched {

void gemm_host(const GemmProblem &pb, const void *A, const void *B, void *C, int threads);
void potrf_host(const PotrfProblem &pb, void *A, int32_t *info, int threads);
void potrs_host(const PotrsProblem &pb, const void *A, void *B, int threads);
void posv_host(const PosvProblem &pb, void *A, void *B, int32_t *info, int threads);
void transpose_host(const TransposeProblem &pb, const void *in, void *out, int threads);

void dot_host(const DotProblem &pb, const void *x, const void *y, void *r, int threads);
void gemv_host(const GemvProblem &pb, const void *A, const void *x, void *y, int threads);

void getrf_host(const GetrfProblem &pb, void *A, int32_t *ipiv, int32_t *info, int threads);
void getrs_host(const GetrsProblem &pb, const void *A, const int32_t *ipiv, void *B, int threads);
void gesv_host(const GesvProblem &pb, void *A, int32_t *ipiv, void *B, int32_t *info, int threads);

}  // namespace apairs::batched
