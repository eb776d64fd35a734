// The batched family: many small independent problems of one shape. Each op validates
// its arguments once (make_*_problem), as apairs.h documents them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "batched/layout.hpp"

namespace apairs::batched {

// C = alpha op(A) op(B) + beta C for every element: op(A) m x k, op(B) k x n, C m x n.
struct GemmProblem {
    int32_t dtype = 0;          // APAIRS_DTYPE_F32 or F64
    bool trans_a = false, trans_b = false;
    int64_t m = 0, n = 0, k = 0;
    double alpha = 1, beta = 0; // beta = 0: C is never read (it may hold NaN)
    Matrix a, b, c;             // a: m x k (k x m when trans_a), b: k x n (n x k), c: m x n
    int64_t batch = 0;

    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// Validates apairs_plan_create_gemm_batched's arguments; throws Error naming the
// argument and its value (UNKNOWN_ENUM, INVALID_VALUE, OVERFLOW, UNSUPPORTED).
GemmProblem make_gemm_problem(int32_t dtype, int32_t layout, int32_t order, int32_t trans_a, int32_t trans_b,
                              int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t lda,
                              int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t ldc, int64_t stride_c,
                              int64_t batch);

// Cholesky factorisation of every element, as LAPACK's potrf: lower: A = L L^T, L
// written over the lower triangle; upper: A = U^T U, U over the upper triangle. The other
// strict triangle is neither read nor written. info[e] = 0, or j (1-based) when the
// leading minor of order j is not positive definite (or holds a NaN): the factorisation of
// that element stops there, the others complete.
struct PotrfProblem {
    int32_t dtype = 0;
    bool lower = true;
    int64_t n = 0;
    Matrix a;  // n x n
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// Solve A X = B for every element from potrf's factor (as LAPACK's potrs): B (n x nrhs)
// is overwritten with X.
struct PotrsProblem {
    int32_t dtype = 0;
    bool lower = true;
    int64_t n = 0, nrhs = 0;
    Matrix a, b;  // a: n x n (the factor), b: n x nrhs
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

PotrfProblem make_potrf_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t lda,
                                int64_t stride_a, int64_t batch);
PotrsProblem make_potrs_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                                int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch);

// The largest m, n, k a gemm plan takes (the element must fit one block's registers and
// shared memory on the CUDA backend), and the largest n of potrf and potrs; nrhs is
// at most kMaxRhs.
constexpr int64_t kMaxGemmSize = 128;
constexpr int64_t kMaxRhs = 1024;

}  // namespace apairs::batched
