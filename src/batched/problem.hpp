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
    Matrix a, info;  // a: n x n; info: one int32 per element, info[e]
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

// x_e . y_e for every element: vectors of n entries, r[e] = the result (contiguous).
// Vectors are stored as n x 1 matrices: entry i of element e at e * stride + i (AoS) or
// i * stride + e (SoA).
struct DotProblem {
    int32_t dtype = 0;
    int64_t n = 0;
    Matrix x, y, r;  // r: one entry per element, r[e]
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// y_e = alpha op(A_e) x_e + beta y_e: A stored m x n; op(A) = A takes x of n entries and
// writes y of m, op(A) = A^T takes m and writes n. beta = 0 never reads y.
struct GemvProblem {
    int32_t dtype = 0;
    bool trans = false;
    int64_t m = 0, n = 0;  // A as stored
    double alpha = 1, beta = 0;
    Matrix a, x, y;
    int64_t batch = 0;
    int64_t x_len() const { return trans ? m : n; }
    int64_t y_len() const { return trans ? n : m; }
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// LU with partial pivoting, as LAPACK's getrf: A_e = P L U, L unit lower and U upper
// written over A_e. ipiv (n int32 per element, 1-based, laid out as `piv`): row i was
// swapped with row ipiv[i]. info[e] = 0, or j when U(j, j) is exactly zero or the pivot
// column holds a NaN (the first such j; the factorisation still completes, as LAPACK's).
struct GetrfProblem {
    int32_t dtype = 0;
    int64_t n = 0;
    Matrix a, piv, info;  // piv: n x 1 int32 (AoS stride n, SoA stride batch); info: r-like
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// Solve op(A) X = B from getrf's factors and pivots, as LAPACK's getrs.
struct GetrsProblem {
    int32_t dtype = 0;
    bool trans = false;
    int64_t n = 0, nrhs = 0;
    Matrix a, piv, b;
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// getrf then getrs (as LAPACK's gesv): A_e overwritten with its factors, ipiv written, B_e
// with the solution when info[e] = 0 and left unchanged otherwise.
struct GesvProblem {
    int32_t dtype = 0;
    int64_t n = 0, nrhs = 0;
    Matrix a, piv, b, info;
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// potrf then potrs (as LAPACK's posv): B_e solved when info[e] = 0, else unchanged.
struct PosvProblem {
    int32_t dtype = 0;
    bool lower = true;
    int64_t n = 0, nrhs = 0;
    Matrix a, b, info;
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
};

// The layout adapter: every element's `entries` values from AoS (x[e * stride + i]) to
// SoA (x[i * stride + e]) or back. `in` and `out` are entries x 1 column "matrices".
struct TransposeProblem {
    int32_t dtype = 0;
    int64_t entries = 0;
    Matrix in, out;
    int64_t batch = 0;
    size_t elem_size() const { return dtype == APAIRS_DTYPE_F64 ? 8 : dtype == APAIRS_DTYPE_F32 ? 4 : 1; }
};

DotProblem make_dot_problem(int32_t dtype, int32_t layout, int64_t n, int64_t stride_x, int64_t stride_y,
                            int64_t batch);
GemvProblem make_gemv_problem(int32_t dtype, int32_t layout, int32_t order, int32_t trans, int64_t m, int64_t n,
                              double alpha, double beta, int64_t lda, int64_t stride_a, int64_t stride_x,
                              int64_t stride_y, int64_t batch);
GetrfProblem make_getrf_problem(int32_t dtype, int32_t layout, int32_t order, int64_t n, int64_t lda,
                                int64_t stride_a, int64_t batch);
GetrsProblem make_getrs_problem(int32_t dtype, int32_t layout, int32_t order, int32_t trans, int64_t n,
                                int64_t nrhs, int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                int64_t batch);
GesvProblem make_gesv_problem(int32_t dtype, int32_t layout, int32_t order, int64_t n, int64_t nrhs, int64_t lda,
                              int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch);
PosvProblem make_posv_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                              int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch);
TransposeProblem make_transpose_problem(int32_t dtype, int32_t to_layout, int64_t entries, int64_t stride_in,
                                        int64_t stride_out, int64_t batch);

PotrfProblem make_potrf_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t lda,
                                int64_t stride_a, int64_t batch);
PotrsProblem make_potrs_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                                int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch);

// The largest m, n, k a gemm plan takes (the element must fit one block's registers and
// shared memory on the CUDA backend), and the largest n of the factorisations; nrhs is
// at most kMaxRhs.
constexpr int64_t kMaxGemmSize = 128;
constexpr int64_t kMaxRhs = 1024;
// The largest n of dot and gemv (m and n).
constexpr int64_t kMaxVectorSize = 4096;

}  // namespace apairs::batched
