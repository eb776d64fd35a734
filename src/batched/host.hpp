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
// gemm and gemv with alpha = 0 (as BLAS, A, B and x are not read): every entry of `out`
// (C or y, as `m` describes it) becomes beta times itself, or +0 where beta = 0 (not read).
void scale_host(const Matrix &m, int32_t dtype, double beta, int64_t batch, void *out, int threads);
void gemv_host(const GemvProblem &pb, const void *A, const void *x, void *y, int threads);

void getrf_host(const GetrfProblem &pb, void *A, int32_t *ipiv, int32_t *info, int threads);
void getrs_host(const GetrsProblem &pb, const void *A, const int32_t *ipiv, void *B, int threads);
void gesv_host(const GesvProblem &pb, void *A, int32_t *ipiv, void *B, int32_t *info, int threads);

}  // namespace apairs::batched
