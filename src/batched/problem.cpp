#include "batched/problem.hpp"

#include <cmath>

namespace apairs::batched {
namespace {

// One operand: `rows` x `cols` as stored, with ld and stride as apairs.h defines them
// for the layout; checked and returned as a Matrix. The names are the C arguments'.
Matrix operand(bool soa, bool row_major, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch,
               size_t elem, const char *ld_name, const char *stride_name) {
    Matrix x;
    x.rows = rows, x.cols = cols, x.ld = ld, x.stride = stride, x.soa = soa, x.row_major = row_major;
    const int64_t inner = row_major ? cols : rows;
    if (ld < inner)
        fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected >= {} (the {} of the stored {} x {} matrix)", ld_name, ld,
             inner, row_major ? "columns" : "rows", rows, cols);
    int64_t extent = 0;  // (outer - 1) * ld + inner, checked
    if (!mul_ok((row_major ? rows : cols) - 1, ld, &extent) || __builtin_add_overflow(extent, inner, &extent))
        fail(APAIRS_ERROR_OVERFLOW, "{} = {}: the element's extent overflows 64 bits", ld_name, ld);
    const int64_t need = soa ? batch : extent;
    if (stride < need)
        fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected >= {} ({})", stride_name, stride, need,
             soa ? "the batch count: a SoA stride spans the batch" : "the element's extent: elements may not overlap");
    // The operand's span, in bytes, must fit in 64 bits.
    int64_t span = 0, bytes = 0;
    const int64_t runs = soa ? extent - 1 : batch - 1, last = soa ? batch : extent;
    if (!mul_ok(runs, stride, &span) || __builtin_add_overflow(span, last, &span) ||
        !mul_ok(span, static_cast<int64_t>(elem), &bytes))
        fail(APAIRS_ERROR_OVERFLOW, "{} = {} with batch = {}: the operand spans more than 64-bit byte counts",
             stride_name, stride, batch);
    return x;
}

bool op_of(int32_t v, const char *name) {
    if (v != APAIRS_OP_N && v != APAIRS_OP_T) fail(APAIRS_ERROR_UNKNOWN_ENUM, "{} = {}: not an apairs_op_e value", name, v);
    return v == APAIRS_OP_T;
}

void check_dtype_layout(int32_t dtype, int32_t layout, int32_t order, const char *op) {
    if (dtype != APAIRS_DTYPE_F32 && dtype != APAIRS_DTYPE_F64) {
        if (dtype == APAIRS_DTYPE_U8) fail(APAIRS_ERROR_UNSUPPORTED, "dtype = u8: batched {} takes f32 or f64", op);
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "dtype = {}: not an apairs_dtype_e value", dtype);
    }
    if (layout != APAIRS_LAYOUT_AOS && layout != APAIRS_LAYOUT_SOA)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "layout = {}: not an apairs_layout_e value", layout);
    if (order != APAIRS_ORDER_ROW_MAJOR && order != APAIRS_ORDER_COL_MAJOR)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "order = {}: not an apairs_order_e value", order);
}

bool lower_of(int32_t uplo) {
    if (uplo != APAIRS_UPLO_LOWER && uplo != APAIRS_UPLO_UPPER)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "uplo = {}: not an apairs_uplo_e value", uplo);
    return uplo == APAIRS_UPLO_LOWER;
}

void check_size(int64_t v, int64_t max, const char *name) {
    if (v < 1 || v > max) fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected 1 <= {} <= {}", name, v, name, max);
}


// Per-element scalars (dot's r, info): r[e], contiguous.
Matrix scalars() {
    Matrix x;
    x.rows = 1, x.cols = 1, x.ld = 1, x.stride = 1, x.soa = false, x.row_major = false;
    return x;
}

// A vector of n entries per element: an n x 1 column-major matrix (ld = n).
Matrix vector_operand(bool soa, int64_t n, int64_t stride, int64_t batch, size_t elem, const char *stride_name) {
    return operand(soa, false, n, 1, n, stride, batch, elem, "n", stride_name);
}

// LAPACK's ipiv: n int32 per element, ipiv[e * n + i] (AoS) or ipiv[i * batch + e] (SoA).
Matrix pivots(bool soa, int64_t n, int64_t batch) {
    return operand(soa, false, n, 1, n, soa ? batch : n, batch, sizeof(int32_t), "n", "ipiv");
}

// Returns v rounded to the dtype, so that every later test of it (beta = 0: C is not read,
// nor staged in) sees what the arithmetic uses (an f32 beta of 1e-46 is 0).
double finite_scalar(int32_t dtype, double v, const char *name) {
    // Finite once rounded to the dtype (a double a little past FLT_MAX rounds to it).
    if (!(dtype == APAIRS_DTYPE_F32 ? std::isfinite(static_cast<float>(v)) : std::isfinite(v)))
        fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected a finite {} number", name, v,
             dtype == APAIRS_DTYPE_F32 ? "f32" : "f64");
    return dtype == APAIRS_DTYPE_F32 ? double(static_cast<float>(v)) : v;
}

// The solves' checks, shared with the fused ops (posv, gesv) that name themselves in errors.
PotrsProblem potrs_problem(const char *op, int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n,
                           int64_t nrhs, int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch) {
    check_dtype_layout(dtype, layout, order, op);
    PotrsProblem pb;
    pb.dtype = dtype;
    pb.lower = lower_of(uplo);
    check_size(n, kMaxGemmSize, "n");
    check_size(nrhs, kMaxRhs, "nrhs");
    require_at_least(batch, 1, "batch");
    pb.n = n, pb.nrhs = nrhs, pb.batch = batch;
    const bool soa = layout == APAIRS_LAYOUT_SOA, row = order == APAIRS_ORDER_ROW_MAJOR;
    pb.a = operand(soa, row, n, n, lda, stride_a, batch, pb.elem_size(), "lda", "stride_a");
    pb.b = operand(soa, row, n, nrhs, ldb, stride_b, batch, pb.elem_size(), "ldb", "stride_b");
    return pb;
}

GetrsProblem getrs_problem(const char *op, int32_t dtype, int32_t layout, int32_t order, int32_t trans, int64_t n,
                           int64_t nrhs, int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch) {
    check_dtype_layout(dtype, layout, order, op);
    GetrsProblem pb;
    pb.dtype = dtype;
    pb.trans = op_of(trans, "trans");
    check_size(n, kMaxGemmSize, "n");
    check_size(nrhs, kMaxRhs, "nrhs");
    require_at_least(batch, 1, "batch");
    pb.n = n, pb.nrhs = nrhs, pb.batch = batch;
    const bool soa = layout == APAIRS_LAYOUT_SOA, row = order == APAIRS_ORDER_ROW_MAJOR;
    pb.a = operand(soa, row, n, n, lda, stride_a, batch, pb.elem_size(), "lda", "stride_a");
    pb.piv = pivots(soa, n, batch);
    pb.b = operand(soa, row, n, nrhs, ldb, stride_b, batch, pb.elem_size(), "ldb", "stride_b");
    return pb;
}

}  // namespace

PotrfProblem make_potrf_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t lda,
                                int64_t stride_a, int64_t batch) {
    check_dtype_layout(dtype, layout, order, "potrf");
    PotrfProblem pb;
    pb.dtype = dtype;
    pb.lower = lower_of(uplo);
    check_size(n, kMaxGemmSize, "n");
    require_at_least(batch, 1, "batch");
    pb.n = n, pb.batch = batch;
    pb.a = operand(layout == APAIRS_LAYOUT_SOA, order == APAIRS_ORDER_ROW_MAJOR, n, n, lda, stride_a, batch,
                   pb.elem_size(), "lda", "stride_a");
    pb.info = scalars();
    return pb;
}

PotrsProblem make_potrs_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                                int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch) {
    return potrs_problem("potrs", dtype, layout, order, uplo, n, nrhs, lda, stride_a, ldb, stride_b, batch);
}

GemmProblem make_gemm_problem(int32_t dtype, int32_t layout, int32_t order, int32_t trans_a, int32_t trans_b,
                              int64_t m, int64_t n, int64_t k, double alpha, double beta, int64_t lda,
                              int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t ldc, int64_t stride_c,
                              int64_t batch) {
    check_dtype_layout(dtype, layout, order, "gemm");
    GemmProblem pb;
    pb.dtype = dtype;
    pb.trans_a = op_of(trans_a, "trans_a");
    pb.trans_b = op_of(trans_b, "trans_b");
    check_size(m, kMaxGemmSize, "m");
    check_size(n, kMaxGemmSize, "n");
    check_size(k, kMaxGemmSize, "k");
    // alpha and beta are used in the element type: they must be finite there.
    alpha = finite_scalar(dtype, alpha, "alpha");
    beta = finite_scalar(dtype, beta, "beta");
    require_at_least(batch, 1, "batch");
    pb.m = m, pb.n = n, pb.k = k, pb.alpha = alpha, pb.beta = beta, pb.batch = batch;
    const bool soa = layout == APAIRS_LAYOUT_SOA, row = order == APAIRS_ORDER_ROW_MAJOR;
    const size_t es = pb.elem_size();
    pb.a = operand(soa, row, pb.trans_a ? k : m, pb.trans_a ? m : k, lda, stride_a, batch, es, "lda", "stride_a");
    pb.b = operand(soa, row, pb.trans_b ? n : k, pb.trans_b ? k : n, ldb, stride_b, batch, es, "ldb", "stride_b");
    pb.c = operand(soa, row, m, n, ldc, stride_c, batch, es, "ldc", "stride_c");
    return pb;
}

DotProblem make_dot_problem(int32_t dtype, int32_t layout, int64_t n, int64_t stride_x, int64_t stride_y,
                            int64_t batch) {
    check_dtype_layout(dtype, layout, APAIRS_ORDER_COL_MAJOR, "dot");
    DotProblem pb;
    pb.dtype = dtype;
    check_size(n, kMaxVectorSize, "n");
    require_at_least(batch, 1, "batch");
    pb.n = n, pb.batch = batch;
    const bool soa = layout == APAIRS_LAYOUT_SOA;
    pb.x = vector_operand(soa, n, stride_x, batch, pb.elem_size(), "stride_x");
    pb.y = vector_operand(soa, n, stride_y, batch, pb.elem_size(), "stride_y");
    pb.r = scalars();
    return pb;
}

GemvProblem make_gemv_problem(int32_t dtype, int32_t layout, int32_t order, int32_t trans, int64_t m, int64_t n,
                              double alpha, double beta, int64_t lda, int64_t stride_a, int64_t stride_x,
                              int64_t stride_y, int64_t batch) {
    check_dtype_layout(dtype, layout, order, "gemv");
    GemvProblem pb;
    pb.dtype = dtype;
    pb.trans = op_of(trans, "trans");
    check_size(m, kMaxVectorSize, "m");
    check_size(n, kMaxVectorSize, "n");
    pb.alpha = finite_scalar(dtype, alpha, "alpha");
    pb.beta = finite_scalar(dtype, beta, "beta");
    require_at_least(batch, 1, "batch");
    pb.m = m, pb.n = n, pb.batch = batch;
    const bool soa = layout == APAIRS_LAYOUT_SOA;
    const size_t es = pb.elem_size();
    pb.a = operand(soa, order == APAIRS_ORDER_ROW_MAJOR, m, n, lda, stride_a, batch, es, "lda", "stride_a");
    pb.x = vector_operand(soa, pb.x_len(), stride_x, batch, es, "stride_x");
    pb.y = vector_operand(soa, pb.y_len(), stride_y, batch, es, "stride_y");
    return pb;
}

GetrfProblem make_getrf_problem(int32_t dtype, int32_t layout, int32_t order, int64_t n, int64_t lda,
                                int64_t stride_a, int64_t batch) {
    check_dtype_layout(dtype, layout, order, "getrf");
    GetrfProblem pb;
    pb.dtype = dtype;
    check_size(n, kMaxGemmSize, "n");
    require_at_least(batch, 1, "batch");
    pb.n = n, pb.batch = batch;
    const bool soa = layout == APAIRS_LAYOUT_SOA;
    pb.a = operand(soa, order == APAIRS_ORDER_ROW_MAJOR, n, n, lda, stride_a, batch, pb.elem_size(), "lda",
                   "stride_a");
    pb.piv = pivots(soa, n, batch);
    pb.info = scalars();
    return pb;
}

GetrsProblem make_getrs_problem(int32_t dtype, int32_t layout, int32_t order, int32_t trans, int64_t n,
                                int64_t nrhs, int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b,
                                int64_t batch) {
    return getrs_problem("getrs", dtype, layout, order, trans, n, nrhs, lda, stride_a, ldb, stride_b, batch);
}

GesvProblem make_gesv_problem(int32_t dtype, int32_t layout, int32_t order, int64_t n, int64_t nrhs, int64_t lda,
                              int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch) {
    const GetrsProblem s =
        getrs_problem("gesv", dtype, layout, order, APAIRS_OP_N, n, nrhs, lda, stride_a, ldb, stride_b, batch);
    GesvProblem pb;
    pb.dtype = s.dtype, pb.n = s.n, pb.nrhs = s.nrhs, pb.a = s.a, pb.piv = s.piv, pb.b = s.b, pb.batch = s.batch;
    pb.info = scalars();
    return pb;
}

PosvProblem make_posv_problem(int32_t dtype, int32_t layout, int32_t order, int32_t uplo, int64_t n, int64_t nrhs,
                              int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t batch) {
    const PotrsProblem s =
        potrs_problem("posv", dtype, layout, order, uplo, n, nrhs, lda, stride_a, ldb, stride_b, batch);
    PosvProblem pb;
    pb.dtype = s.dtype, pb.lower = s.lower, pb.n = s.n, pb.nrhs = s.nrhs, pb.a = s.a, pb.b = s.b;
    pb.batch = s.batch;
    pb.info = scalars();
    return pb;
}

TransposeProblem make_transpose_problem(int32_t dtype, int32_t to_layout, int64_t entries, int64_t stride_in,
                                        int64_t stride_out, int64_t batch) {
    if (dtype != APAIRS_DTYPE_F32 && dtype != APAIRS_DTYPE_F64 && dtype != APAIRS_DTYPE_U8)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "dtype = {}: not an apairs_dtype_e value", dtype);
    if (to_layout != APAIRS_LAYOUT_AOS && to_layout != APAIRS_LAYOUT_SOA)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "to_layout = {}: not an apairs_layout_e value", to_layout);
    TransposeProblem pb;
    pb.dtype = dtype;
    require_at_least(entries, 1, "entries");
    require_at_least(batch, 1, "batch");
    // Byte spans bound the counts of every other op below 2^61 (values of 4 bytes or
    // more); u8 values would allow counts near 2^63, where tile and chunk counts
    // (count + tile - 1) overflow. No memory holds 2^62 bytes.
    constexpr int64_t kMaxCount = int64_t(1) << 62;
    if (entries > kMaxCount || batch > kMaxCount)
        fail(APAIRS_ERROR_OVERFLOW, "entries = {}, batch = {}: more than 2^62 values an element or elements",
             entries, batch);
    pb.entries = entries, pb.batch = batch;
    const bool to_soa = to_layout == APAIRS_LAYOUT_SOA;
    pb.in = operand(!to_soa, false, entries, 1, entries, stride_in, batch, pb.elem_size(), "entries", "stride_in");
    pb.out = operand(to_soa, false, entries, 1, entries, stride_out, batch, pb.elem_size(), "entries", "stride_out");
    return pb;
}

}  // namespace apairs::batched
