/*
 * libapairs: all-pairs distances on the GPU and the host, behind a stable C ABI.
 *
 * Read this header top to bottom: versions, status codes and errors, contexts,
 * all-pairs plans, batched plans, two-body statistics plans, genotype plans. Every
 * function returns an apairs_status_t (APAIRS_SUCCESS is 0), checks all of its
 * arguments before it touches memory, and writes nothing when it
 * fails; the per-thread message apairs_last_error() then names the offending
 * argument and value. (One exception: the CUDA runtime or cuBLAS failing in the middle
 * of a CUDA execute, APAIRS_ERROR_DEVICE or an OUT_OF_MEMORY it reports there, can leave
 * part of the outputs written, e.g. the chunks of a host-memory batch already copied
 * back. Bad arguments and the library's own allocations, which come first, never do.)
 *
 * Conventions
 * - Matrices are row-major. A is n1 x d with leading dimension lda (the distance in
 *   elements between A[i][0] and A[i+1][0]), B is n2 x d (ldb), D is n1 x n2 (ldd).
 *   A Fortran array A(d, n) is a row-major n x d matrix with lda = d.
 * - Sizes, leading dimensions and indices are int64_t; enumerations are passed as
 *   int32_t so that the ABI does not depend on the compiler's enum width.
 * - Handles are pointers to incomplete structs: type(c_ptr) in Fortran, c_void_p in
 *   ctypes. Destroying NULL is a no-op; destroying a handle twice is undefined (as
 *   free).
 * - Every array an execute writes (D, C, y, out, B of the solves, A, ipiv and info of the
 *   factorisations, the two-body and genotype outputs) must not overlap any other array
 *   of the call, written or read, except where a function says so (B may be A). This is
 *   not checked: overlapping arrays give unspecified results.
 *
 * Thread safety
 * - Version, status-string, last-error and apairs_cuda_device_count: any thread, any
 *   time; the last error is kept per thread.
 * - A context may be used by several threads to create plans, but must not be
 *   changed (set_stream, set_option) or destroyed while another thread uses it.
 * - A plan is immutable once created: apairs_plan_execute and apairs_plan_describe
 *   may run concurrently on one plan from several threads. apairs_plan_destroy must
 *   not race with any other use of that plan.
 * - Different contexts and plans are independent.
 */
#ifndef APAIRS_H
#define APAIRS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(APAIRS_BUILDING_LIBRARY)
#define APAIRS_API __attribute__((visibility("default")))
#else
#define APAIRS_API
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                 */
/* ------------------------------------------------------------------------ */

/* The single source of the library version: meson.build reads these three lines. */
#define APAIRS_VERSION_MAJOR 0
#define APAIRS_VERSION_MINOR 2
#define APAIRS_VERSION_PATCH 0

#define APAIRS_VERSION_NUMBER \
    (APAIRS_VERSION_MAJOR * 10000 + APAIRS_VERSION_MINOR * 100 + APAIRS_VERSION_PATCH)

/** The version of the library actually loaded, as APAIRS_VERSION_NUMBER: compare it
 *  with the macro to detect a header/library mismatch (dlopen users especially). */
APAIRS_API int32_t apairs_version_number(void);

/** The same as "MAJOR.MINOR.PATCH", followed by the backends compiled in,
 *  e.g. "0.1.0 (host+openmp, cuda sm_90)". Static storage; never NULL. */
APAIRS_API const char *apairs_version_string(void);

/* ------------------------------------------------------------------------ */
/* Status codes and errors                                                  */
/* ------------------------------------------------------------------------ */

/* The values are pinned: a value never changes meaning once released. New codes
 * take the next free number below 100; 100..199 are reserved for backends. */
typedef int32_t apairs_status_t;
enum apairs_status_e {
    APAIRS_SUCCESS = 0,
    APAIRS_ERROR_NULL_POINTER = 1,        /* a required pointer or handle is NULL */
    APAIRS_ERROR_INVALID_VALUE = 2,       /* a size, leading dimension, p or option out of range */
    APAIRS_ERROR_OVERFLOW = 3,            /* a size product does not fit in 64 bits (or in memory) */
    APAIRS_ERROR_UNKNOWN_ENUM = 4,        /* unknown metric, dtype, backend, option, layout, order, op or uplo */
    APAIRS_ERROR_UNSUPPORTED = 5,         /* valid values, but a combination this build does not do */
    APAIRS_ERROR_BACKEND_UNAVAILABLE = 6, /* backend not compiled in, or no such device */
    APAIRS_ERROR_OUT_OF_MEMORY = 7,       /* a host or device allocation failed */
    APAIRS_ERROR_DEVICE = 8,              /* the CUDA runtime reported an error */
    APAIRS_ERROR_INVALID_POINTER = 9,     /* a pointer the backend cannot use (e.g. device memory on the host backend) */
    APAIRS_ERROR_INTERNAL = 10            /* a bug in libapairs: please report it */
};

/** A short constant description of a status code ("success", "null pointer", ...).
 *  Unknown codes give "unknown status". Never NULL. */
APAIRS_API const char *apairs_status_string(apairs_status_t status);

/** The detailed message of the last libapairs call made on this thread: which
 *  function, which argument, which value, what was expected. Every function that
 *  returns an apairs_status_t resets it, so it is "" after a success; the functions
 *  returning strings or the version leave it alone. The pointer is valid until the
 *  next status-returning call on this thread, and for as long as the thread lives
 *  (atexit handlers and static destructors included); at most 4095 bytes. Never NULL. */
APAIRS_API const char *apairs_last_error(void);

/* ------------------------------------------------------------------------ */
/* Contexts: which backend, which device, which stream, which options        */
/* ------------------------------------------------------------------------ */

typedef struct apairs_context_s *apairs_context_t;

enum apairs_backend_e {
    APAIRS_BACKEND_AUTO = 0, /* CUDA when compiled in and device `device` exists, else HOST */
    APAIRS_BACKEND_HOST = 1, /* OpenMP on the CPU (threads: see APAIRS_OPTION_HOST_THREADS) */
    APAIRS_BACKEND_CUDA = 2  /* an NVIDIA GPU through the CUDA runtime */
};

enum apairs_option_e {
    /* Occupancy the CUDA launch configuration aims for, as a fraction in (0, 1];
     * 0 (the default) means the highest occupancy the kernel can reach on the device.
     * The plan picks the smallest block that reaches the target (at the default, batched
     * gemm's AoS kernels of a sub-block an element take blocks of one element instead
     * where those keep 90 % of that occupancy's warps, and say so in the description). */
    APAIRS_OPTION_OCCUPANCY_TARGET = 1,
    /* Host backend threads; 0 (the default) lets OpenMP decide. A whole number in [0, 1024].
     * Called from inside the caller's own OpenMP parallel region where no nested region
     * can be active (OpenMP's default), a plan runs on the calling thread alone. */
    APAIRS_OPTION_HOST_THREADS = 2,
    /* Device memory, in bytes, that executing a batched plan on CUDA may allocate to stage
     * arrays that live in host memory. Such a batch runs in chunks of elements that fit
     * (three in flight, on streams of their own, so that copies overlap kernels): a host
     * batch larger than device memory runs. 0 (the default): 192 MiB, or a quarter of
     * the device's free memory when that is less; a chunk holds at least one element, so
     * elements larger than a third of it take three elements' bytes. A whole number in
     * [0, 2^53]; read when the plan is created (its description states the chunk). */
    APAIRS_OPTION_STAGING_BYTES = 3,
    /* Opt-in tensor-core math for F32 DOT and COSINE on CUDA: 1 lets their cuBLAS GEMM
     * run on the TF32 tensor cores (faster, less accurate: the bounds under "Metrics"),
     * 0 (the default) keeps float arithmetic. 0 or 1; read when the plan is created (its
     * description says which math ran). F64, the other metrics (float L2's double GEMM
     * included) and the HOST backend are not affected. */
    APAIRS_OPTION_TF32 = 4
};

/** Number of CUDA devices this build can use: 0 when built without CUDA or when no
 *  device or driver is present (that is not an error). */
APAIRS_API apairs_status_t apairs_cuda_device_count(int32_t *count);

/** Create a context.
 *  @param[out] ctx     the new context; unchanged on failure
 *  @param[in]  backend an apairs_backend_e value
 *  @param[in]  device  CUDA device ordinal (>= 0) used by CUDA and by AUTO when it
 *                      resolves to CUDA; ignored by HOST but must still be >= 0
 *
 *  CUDA: every call on a CUDA context or on its plans runs on its device, in the context
 *  current on the calling thread when that context is the device's, else in the device's
 *  primary context, made current for the call alone. The thread's current context (or
 *  none) is the same after the call as before, and no other device's context is
 *  created (tested with CUDA 13.0). A plan belongs to the context it was made in (its
 *  cuBLAS handle, its kernels' settings), as a cuBLAS handle does: execute and destroy
 *  it with the same context current as when it was created, where "none" and "the
 *  device's primary context" count as one; its device arrays must be usable there. */
APAIRS_API apairs_status_t apairs_context_create(apairs_context_t *ctx, int32_t backend,
                                                 int32_t device);

/** Destroy a context. Plans made from it stay valid (they copy what they need).
 *
 *  CUDA: the device buffers an execute needs (staging of host arrays, the engines' work
 *  arrays; cuBLAS keeps its own workspace) come from a stream-ordered memory pool of the
 *  library's own per device, which keeps what an execute frees for the next one (about
 *  the most that executes on the device have needed at once) while any CUDA context or
 *  plan on that device lives; destroying the last of them returns that memory to the
 *  driver (what queued work still uses, once it completes). Do not reset the device
 *  (cudaDeviceReset) while a CUDA context or plan on it lives. */
APAIRS_API apairs_status_t apairs_context_destroy(apairs_context_t ctx);

/** The backend the context resolved to (HOST or CUDA, never AUTO). */
APAIRS_API apairs_status_t apairs_context_get_backend(apairs_context_t ctx, int32_t *backend);

/** Set the CUDA stream (a cudaStream_t passed as void*; NULL is the legacy default
 *  stream) used by plans created afterwards. It must belong to the context's device
 *  and outlive those plans. On a HOST context only NULL is accepted (another stream:
 *  APAIRS_ERROR_UNSUPPORTED). */
APAIRS_API apairs_status_t apairs_context_set_stream(apairs_context_t ctx, void *stream);

/** Set an apairs_option_e option; plans created afterwards use the value. */
APAIRS_API apairs_status_t apairs_context_set_option(apairs_context_t ctx, int32_t option,
                                                     double value);
APAIRS_API apairs_status_t apairs_context_get_option(apairs_context_t ctx, int32_t option,
                                                     double *value);

/* ------------------------------------------------------------------------ */
/* All-pairs plans: D[i][j] = F(A[i][:], B[j][:])                             */
/* ------------------------------------------------------------------------ */

typedef struct apairs_plan_s *apairs_plan_t;

/* Element types of A and B. D has the same type, except for HAMMING on U8, whose
 * counts are written as int32_t. */
enum apairs_dtype_e {
    APAIRS_DTYPE_F32 = 1, /* float  */
    APAIRS_DTYPE_F64 = 2, /* double */
    APAIRS_DTYPE_U8 = 3   /* uint8_t categories (e.g. 0/1/2 genotypes): HAMMING only */
};

/*
 * Metrics and what each guarantees. u is the unit roundoff of the element type
 * (2^-24 for F32, 2^-53 for F64); "exact" means the value computed in exact arithmetic
 * from the given inputs. Both backends accumulate in the element type in the same
 * blocked order: each distance folds every slice of 32 dimensions in order into a fresh
 * accumulator, adds the sums of 32 consecutive slices in order into a group sum, and
 * adds the group sums in order (three levels, so long sums stay accurate: in float at
 * d = 40000, L1 and L2 typically err by under 1e-6 relatively where a running sum of the
 * slices reaches 2e-6). Where a term is a product added to a sum (SQEUCLIDEAN, L2, DOT,
 * COSINE, LP with integer p), CUDA forms it with one fused multiply-add and the host
 * rounds the product first, so the backends may differ in the last bits; each meets the
 * bounds below. DOT and COSINE on CUDA use cuBLAS's GEMM for a.b instead, in
 * float or double arithmetic as the type says and in cuBLAS's own order, when libcublas
 * can be loaded (the plan's description says which); their bounds hold for any order.
 * Only with APAIRS_OPTION_TF32 = 1 does F32 DOT or COSINE run on the TF32 tensor cores
 * (each input keeps 10 of its 23 fraction bits, the products are summed in float):
 * then, with g = 2 (d + 4) u < 1/2, DOT's |error| <= (2^-9 + 2^-19 + 1.004 g / (1 - g))
 * sum |a_k b_k| and COSINE's |error| <= 2^-9 + 2^-19 + 2.008 g / (1 - 2 g), about a
 * thousand times the float bounds (sums in the tensor cores may truncate: 2 u an
 * addition, and each product's TF32 error passes through them too). The bounds below hold for both backends, for any d, and are
 * usually far from attained; b = min(d, 32) + min(ceil(d / 32), 32) + ceil(d / 1024)
 * is the number of additions any one term passes through, so L1, SQEUCLIDEAN and L2
 * also keep relative error <= (b + 4) u.
 *
 *   L1           sum |a_k - b_k|                      relative error <= (d + 4) u
 *   SQEUCLIDEAN  sum (a_k - b_k)^2                    relative error <= (d + 4) u
 *   L2           sqrt(sum (a_k - b_k)^2)              relative error <= (d + 4) u
 *                (differences are formed directly, never as |a|^2 + |b|^2 - 2 a.b in
 *                 the element type, so small distances keep their relative accuracy)
 *                F32 L2 and SQEUCLIDEAN with d >= 256 on CUDA, when libcublas loads:
 *                computed in double through a double GEMM on rows centred on A's first
 *                row (|a|^2 + |b|^2 - 2 a.b, whose rounding error is bounded by
 *                (2 d + 16) 2^-53 (|a|^2 + |b|^2)); each pair where that bound exceeds
 *                2^-30 of the result (near duplicates), or that is not finite, is
 *                recomputed directly in double; then rounded once to float: relative
 *                error <= 2^-24 + 2^-30, i.e. the correctly rounded value except within
 *                2^-30 of a rounding boundary (needs d <= 2^22; the plan's description
 *                says which path ran).
 *   LP           (sum |a_k - b_k|^p)^(1/p), p > 0     F64: relative error <= ((d + p + 12) / min(p, 1)
 *                                                       + max_k |ln|a_k - b_k|| + |ln D|) u,
 *                the log terms because p and 1/p are rounded to the element type.
 *                F32: relative error <= ((d + p + 20) / min(p, 1) + 3 max_k |ln|a_k - b_k||
 *                + |ln D|) u, because the CUDA backend forms |t|^p as 2^(p log2 |t|) with
 *                the hardware's log2 and exp2 approximations (two special-function
 *                instructions instead of powf's sequence).
 *                p = 1, 2 and +infinity take the L1, L2 and LINF paths; p = 3 and 4 form
 *                |t|^p by multiplication, p = 0.5, 1.5, 2.5 and 3.5 as |t|^k sqrt|t|
 *                (a square root within one ulp, no pow), within the same bounds.
 *   LINF         max |a_k - b_k|                      relative error <= u
 *   DOT          sum a_k b_k                          |error| <= (d + 4) u sum |a_k b_k|
 *   COSINE       1 - a.b / (|a| |b|), in [0, 2]       |error| <= (2 d + 8) u;
 *                1 when a or b is all zeros (and the other holds no NaN).
 *   HAMMING      number of k with a_k != b_k          exact; needs d < 2^31 (F32: d <= 2^24);
 *                                                     U8 writes int32_t counts
 *
 * Range: sums are formed without scaling, so SQEUCLIDEAN, L2, DOT, COSINE and LP keep
 * these bounds while no term falls below the smallest normal number of the type and no
 * sum overflows: every square or product (LP: |a_k - b_k|^p) at least 2^-126 (F32) or
 * 2^-1022 (F64) where nonzero, and the sums over the d dimensions (sum (a_k - b_k)^2,
 * sum |a_k b_k|, and for COSINE also |a|^2 and |b|^2) below 2^128 (F32) or 2^1024 (F64):
 * roughly d max_k |a_k - b_k|^2 < 2^128 (for F32, coordinates below 2^63 / sqrt(d)).
 * Outside it the result may be inf, NaN, or without meaning: L2 and SQEUCLIDEAN may give
 * inf or lose relative accuracy, COSINE may give NaN, or 1 where a norm overflows to inf
 * (not an error, and not within the bound), and COSINE treats a vector whose squared
 * norm underflows to 0 as all zeros. L1 and LINF have no lower limit and keep their bounds
 * while the result is finite (L1: while the sum stays below the largest finite number; a
 * difference |a_k - b_k| may itself overflow to inf); HAMMING has no limit.
 *
 * A NaN in a row makes every distance involving that row NaN, except HAMMING, where a
 * NaN coordinate always counts as different. Subnormal numbers are not flushed.
 * Infinite coordinates follow IEEE arithmetic in the element type: |a_k - b_k| is +inf,
 * or NaN when a_k and b_k are the same infinity, so L1, SQEUCLIDEAN, L2, LP and LINF give
 * +inf or NaN, and DOT gives +-inf or NaN (0 * inf is NaN). COSINE gives 1 between an
 * all-zero row and a row holding infinities (the all-zero rule wins), and NaN between a
 * row holding an infinity and any other row. HAMMING compares infinities as values
 * (inf == inf, -inf != inf).
 */
enum apairs_metric_e {
    APAIRS_METRIC_L1 = 1,
    APAIRS_METRIC_L2 = 2,
    APAIRS_METRIC_SQEUCLIDEAN = 3,
    APAIRS_METRIC_LP = 4,
    APAIRS_METRIC_LINF = 5,
    APAIRS_METRIC_DOT = 6,
    APAIRS_METRIC_COSINE = 7,
    APAIRS_METRIC_HAMMING = 8
};

/** Plan an all-pairs computation: validate the problem once and choose the launch
 *  configuration, which the plan keeps. Takes the context's backend, device, stream
 *  and options as they are now.
 *  @param[out] plan   the new plan; unchanged on failure
 *  @param[in]  ctx    the context
 *  @param[in]  metric an apairs_metric_e value
 *  @param[in]  p      the exponent of LP: > 0 with p and 1/p normal numbers of the
 *                     element type, or +infinity; ignored by the other metrics (pass 0)
 *  @param[in]  dtype  an apairs_dtype_e value
 *  @param[in]  n1, n2 rows of A and of B, >= 1
 *  @param[in]  d      columns of A and B, >= 1
 *  @param[in]  lda, ldb leading dimensions of A and B, >= d
 *  @param[in]  ldd    leading dimension of D, >= n2
 *  Fails with NULL_POINTER, INVALID_VALUE, OVERFLOW (n1 * ldd, n1 * lda, n2 * ldb or
 *  their byte counts exceed 64 bits), UNKNOWN_ENUM, UNSUPPORTED (e.g. DOT on U8), and on
 *  CUDA with BACKEND_UNAVAILABLE, DEVICE or OUT_OF_MEMORY. */
APAIRS_API apairs_status_t apairs_plan_create_pairwise(apairs_plan_t *plan, apairs_context_t ctx,
                                                       int32_t metric, double p, int32_t dtype,
                                                       int64_t n1, int64_t n2, int64_t d,
                                                       int64_t lda, int64_t ldb, int64_t ldd);

/** Execute a plan: D[i][j] = F(A[i][:], B[j][:]) for all i < n1, j < n2. Only the
 *  n1 x n2 entries of D are written; the padding between ldd and n2 is left alone.
 *  B may be the same array as A. D must not overlap A or B.
 *
 *  HOST backend: A, B and D are host memory; the call returns when D is written.
 *  When the library was built with CUDA it asks the CUDA runtime about each pointer and
 *  refuses device memory (INVALID_POINTER); the question initialises the CUDA driver but
 *  creates no CUDA context (tested with CUDA 13.0), and nothing else a HOST context, plan
 *  or execute does touches CUDA. Without CUDA it cannot tell.
 *
 *  CUDA backend: each of A, B, D may be device memory (cudaMalloc, managed) or host
 *  memory (pageable or pinned).
 *  - All three in device memory: the work is queued on the plan's stream and the call
 *    returns without waiting, like a cuBLAS call; synchronize the stream before
 *    reading D.
 *  - Any of them in host memory: those arrays are staged through device buffers
 *    allocated for the call, and the call returns only when D is written (the stream
 *    is synchronized).
 *  Device memory must belong to the plan's device (INVALID_POINTER otherwise).
 *  Scratch: the tile kernels (every metric not computed through cuBLAS) read A and B
 *  transposed, from copies allocated in stream order for the call: n1 + n2 rows (n1
 *  when B is A) rounded up to 16 bytes, times d rounded up to 32, elements of the dtype;
 *  at most 1 GiB (larger problems run in chunks of rows, with the same results), or
 *  2 x 16 bytes of rows, 32 x (d rounded up to 32) bytes, where that is more; the double
 *  GEMM of float L2 / SQEUCLIDEAN (README) allocates B centred in double with its norms
 *  (at most 1 GiB, else the plan takes the tile kernels) and, a chunk of rows of A at a
 *  time, their centred copy and their products with B (at most 512 MiB each, or one
 *  row's).
 *  Errors from earlier asynchronous work on the stream may surface here as DEVICE. A
 *  staged call that fails has drained the stream before it returns, so no copy to or
 *  from the caller's arrays is still running. */
APAIRS_API apairs_status_t apairs_plan_execute(apairs_plan_t plan, const void *A, const void *B,
                                               void *D);

/** Describe the plan in one line: backend, device, kernel, tile parameters (the tile
 *  of D a block computes and the outputs per thread, d'), block size, blocks per SM,
 *  occupancy, and why they were chosen.
 *  Works like snprintf: writes at most size - 1 characters and a terminating NUL when
 *  size >= 1 (buf may be NULL when size is 0), and sets *length (if not NULL) to the
 *  full length without the NUL. Truncation is not an error. */
APAIRS_API apairs_status_t apairs_plan_describe(apairs_plan_t plan, char *buf, int64_t size,
                                                int64_t *length);

/** Destroy a plan. NULL is a no-op. */
APAIRS_API apairs_status_t apairs_plan_destroy(apairs_plan_t plan);

/* ------------------------------------------------------------------------ */
/* Batched plans: many small independent problems of one shape               */
/* ------------------------------------------------------------------------ */

/*
 * A batch is `batch` elements (1 <= batch, 64-bit), each a small problem of the same
 * shape. Every matrix operand of a batched plan is described by a layout, an order, a
 * leading dimension `ld` and a `stride`; entry (i, j) of element e lies at
 *
 *   APAIRS_LAYOUT_AOS (each element contiguous):   X[e * stride + idx(i, j)]
 *   APAIRS_LAYOUT_SOA (interleaved):               X[idx(i, j) * stride + e]
 *   idx(i, j) = i * ld + j (APAIRS_ORDER_ROW_MAJOR) or i + j * ld (APAIRS_ORDER_COL_MAJOR)
 *
 * counted in elements of the dtype. ld is at least the matrix's columns (row-major) or
 * rows (column-major). In AoS, stride is the element stride, at least the element's
 * extent; in SoA it is the batch stride, at least `batch`: entry (i, j) of consecutive
 * elements is contiguous, so GPU threads that each own an element load together. A SoA
 * stride that is a multiple of 32 keeps every run on whole memory lines, and arrays on
 * 16-byte boundaries (as cudaMalloc's are) let the CUDA kernels move 16 bytes of
 * consecutive elements at a time (the fastest; any stride >= batch and any alignment of
 * the dtype is correct). Fortran and LAPACK users pass ORDER_COL_MAJOR.
 *
 * Staging: on CUDA, operands in host memory go through device buffers, in chunks of
 * elements (APAIRS_OPTION_STAGING_BYTES). An operand is copied in as its chunk's whole
 * span (what lies between elements is read along, never used) and, when the call writes
 * it, copied back element by element, each element's whole extent: the entries of an
 * element that the operation leaves alone (the padding between ld and the extent, the
 * other triangle of a Cholesky factor, the B of a failed posv or gesv element) are
 * written back with the values they held when the call began, so they are unchanged
 * unless another thread writes them during the call. Nothing between elements is
 * written (another operand may live there). Device arrays, and the HOST backend, have
 * only the entries each operation names below written.
 *
 * Accuracy: each entry is computed in the element type, its k products summed in order
 * (except on CUDA for AoS elements whose C is larger than 32 x 32, up to 64 x 64, with
 * k >= 32, and double ones whose C is larger than 16 x 16 with k >= 32 or larger than
 * 32 x 32 with k > 16: the tensor cores' double-precision mma adds them four at a time
 * in an order of its own, so the last bits may differ from the host's; float operands
 * are converted to double exactly there, and the sums, alpha and beta taken in double
 * and rounded to float once; and on CUDA for double AoS elements whose C has 38 or more
 * rows or columns, or whose k exceeds 40 with C of 20 or more rows or columns, with
 * alpha != 0: cuBLAS's strided batched DGEMM where libcublas loads (the fastest there;
 * apairs_plan_describe names it), summing in an order of its own), so in every case
 * |error| <= (k + 2) u (|alpha| sum_l |op(A)_il op(B)_lj| + |beta C_ij|), u the unit
 * roundoff of the dtype. alpha and beta are rounded to the dtype (and must be finite
 * there); a beta that is 0 after rounding never reads C (C may hold NaN or be
 * uninitialised). An alpha that is 0 after rounding never reads A or B, as in BLAS: C =
 * beta C exactly (+0 where beta is 0 too), whatever A and B hold (NaN included).
 * Only the m x n entries of each C element are written: never the padding between ld
 * and the extent, nor between elements.
 *
 * Memory: as apairs_plan_execute (device arrays are used in place and the call returns
 * after queuing; host arrays are staged and the call returns when C is written).
 * A plan is executed by the execute function of its operation; another fails with
 * APAIRS_ERROR_UNSUPPORTED.
 */
enum apairs_layout_e {
    APAIRS_LAYOUT_AOS = 1, /* array of structures: each element contiguous */
    APAIRS_LAYOUT_SOA = 2  /* structure of arrays: each entry's values of all elements contiguous */
};

enum apairs_order_e {
    APAIRS_ORDER_ROW_MAJOR = 1,
    APAIRS_ORDER_COL_MAJOR = 2
};

enum apairs_op_e {
    APAIRS_OP_N = 0, /* the matrix as stored */
    APAIRS_OP_T = 1  /* its transpose */
};

enum apairs_uplo_e {
    APAIRS_UPLO_LOWER = 1, /* the lower triangle holds the matrix / its factor L */
    APAIRS_UPLO_UPPER = 2  /* the upper triangle: U = L^T */
};

/** Plan a batched matrix product: C_e = alpha op(A_e) op(B_e) + beta C_e for every
 *  element e, with op(A) m x k, op(B) k x n and C m x n.
 *  @param[in] dtype    APAIRS_DTYPE_F32 or APAIRS_DTYPE_F64
 *  @param[in] layout   an apairs_layout_e value, for A, B and C
 *  @param[in] order    an apairs_order_e value, for A, B and C
 *  @param[in] trans_a, trans_b  apairs_op_e values
 *  @param[in] m, n, k  1 to 128
 *  @param[in] alpha, beta  finite numbers of the dtype
 *  @param[in] lda, stride_a, ldb, stride_b, ldc, stride_c  as described above, for the
 *             stored A (m x k, or k x m when trans_a), B (k x n, or n x k) and C
 *  @param[in] batch    >= 1
 *  Fails with NULL_POINTER, INVALID_VALUE, OVERFLOW (an operand's span exceeds 64-bit
 *  byte counts), UNKNOWN_ENUM, UNSUPPORTED, and on CUDA with BACKEND_UNAVAILABLE,
 *  DEVICE or OUT_OF_MEMORY. */
APAIRS_API apairs_status_t apairs_plan_create_gemm_batched(
    apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype, int32_t layout, int32_t order,
    int32_t trans_a, int32_t trans_b, int64_t m, int64_t n, int64_t k, double alpha, double beta,
    int64_t lda, int64_t stride_a, int64_t ldb, int64_t stride_b, int64_t ldc, int64_t stride_c,
    int64_t batch);

/** Execute a batched gemm plan: C_e = alpha op(A_e) op(B_e) + beta C_e for all e. C must
 *  not overlap A or B. */
APAIRS_API apairs_status_t apairs_plan_execute_gemm(apairs_plan_t plan, const void *A, const void *B,
                                                    void *C);

/** Plan a batched Cholesky factorisation, as LAPACK's potrf for each element:
 *  uplo = LOWER: A = L L^T with L written over the lower triangle; UPPER: A = U^T U with U
 *  over the upper triangle. The other strict triangle is neither read nor written.
 *  @param[in] n        1 to 128
 *  @param[in] lda, stride_a, layout, order  as for gemm (A is n x n)
 *  Accuracy: the computed factor satisfies |A - L L^T| <= gamma_{n+1} |L| |L^T| entrywise,
 *  gamma_{n+1} = (n + 1) u / (1 - (n + 1) u) (Higham, Accuracy and Stability of Numerical
 *  Algorithms, Thm 10.3).
 *  Fails with NULL_POINTER, INVALID_VALUE (n, batch, an ld below the row, a stride that
 *  overlaps elements), OVERFLOW (an operand's span exceeds 64-bit byte counts),
 *  UNKNOWN_ENUM (dtype, layout, order, uplo), UNSUPPORTED (dtype U8; on CUDA, a device
 *  whose blocks cannot hold the kernel's shared memory), and on CUDA with
 *  BACKEND_UNAVAILABLE, DEVICE or OUT_OF_MEMORY. */
APAIRS_API apairs_status_t apairs_plan_create_potrf_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                            int32_t dtype, int32_t layout, int32_t order,
                                                            int32_t uplo, int64_t n, int64_t lda,
                                                            int64_t stride_a, int64_t batch);

/** Execute a potrf plan. info (batch int32_t, contiguous) receives per element 0, or j > 0
 *  when the leading minor of order j is not positive definite or its stored triangle holds
 *  a NaN (LAPACK's info; the other triangle is never read): that element's factorisation
 *  stops at column j, the others complete. A bad
 *  argument fails the whole call and writes nothing. */
APAIRS_API apairs_status_t apairs_plan_execute_potrf(apairs_plan_t plan, void *A, int32_t *info);

/** Plan batched solves A X = B from potrf's factors, as LAPACK's potrs for each element:
 *  A holds the factor (uplo as it was factored), B is n x nrhs and is overwritten with X.
 *  @param[in] n        1 to 128
 *  @param[in] nrhs     1 to 1024 right-hand sides
 *  Accuracy: normwise backward stable; the tests hold ||A X - B|| / (||A|| ||X||) to a
 *  few n u.
 *  Fails as potrf, and with INVALID_VALUE for nrhs, ldb or stride_b and OVERFLOW for B's
 *  span. */
APAIRS_API apairs_status_t apairs_plan_create_potrs_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                            int32_t dtype, int32_t layout, int32_t order,
                                                            int32_t uplo, int64_t n, int64_t nrhs, int64_t lda,
                                                            int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                            int64_t batch);

/** Execute a potrs plan: B_e = A_e^-1 B_e from the factor in A_e. B must not overlap A. */
APAIRS_API apairs_status_t apairs_plan_execute_potrs(apairs_plan_t plan, const void *A, void *B);

/** Plan posv, potrf then potrs in one call (as LAPACK's posv for each element): A is
 *  factored in place, info written as by potrf, and B_e overwritten with the solution
 *  where info[e] = 0 and left unchanged where info[e] != 0.
 *  Arguments and accuracy as potrf and potrs. */
APAIRS_API apairs_status_t apairs_plan_create_posv_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                           int32_t dtype, int32_t layout, int32_t order,
                                                           int32_t uplo, int64_t n, int64_t nrhs, int64_t lda,
                                                           int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                           int64_t batch);

/** Execute a posv plan. info: batch int32_t, contiguous. */
APAIRS_API apairs_status_t apairs_plan_execute_posv(apairs_plan_t plan, void *A, void *B, int32_t *info);

/* Vectors of the batched plans (x, y of dot and gemv) have their n entries at
 *   AoS: x[e * stride + i]        SoA: x[i * stride + e]
 * (a stored n x 1 matrix with ld = n); stride as for matrices. */

/** Plan batched dot products: out[e] = sum_i x_e[i] y_e[i] for every element e.
 *  @param[in] n                   1 to 4096 entries per vector
 *  @param[in] stride_x, stride_y  element (AoS) or batch (SoA) strides
 *  The results are `batch` values of the dtype, contiguous.
 *  Accuracy (u: the unit roundoff of the dtype): f32 products are exact in double and summed
 *  there, then rounded once: |error| <= u |out[e]| + (n + 1) 2^-53 sum_i |x_i y_i|. f64: each
 *  thread sums its entries in order with fma, the partial sums are added in a fixed tree:
 *  |error| <= (n + 1) u sum_i |x_i y_i|. Both backends; results are deterministic for a
 *  plan. */
APAIRS_API apairs_status_t apairs_plan_create_dot_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                          int32_t layout, int64_t n, int64_t stride_x,
                                                          int64_t stride_y, int64_t batch);

/** Execute a dot plan: out[e] = x_e . y_e. out must not overlap x or y. */
APAIRS_API apairs_status_t apairs_plan_execute_dot(apairs_plan_t plan, const void *x, const void *y, void *out);

/** Plan batched matrix-vector products: y_e = alpha op(A_e) x_e + beta y_e, A stored
 *  m x n; op(A) = A takes x of n entries and y of m, A^T takes x of m and y of n.
 *  @param[in] m, n     1 to 4096
 *  @param[in] trans    an apairs_op_e value
 *  @param[in] alpha, beta  finite numbers of the dtype; beta = 0 never reads y, alpha =
 *                      0 never reads A or x (y = beta y exactly, as gemm's C)
 *  Accuracy, with k the length of x and t_i = |alpha| sum_l |op(A)_il x_l| + |beta y_i|:
 *  f32 sums in double and rounds once, |error| <= u |y_i| + (k + 2) 2^-53 t_i; f64
 *  |error| <= (k + 2) u t_i, gemm's bound. alpha and beta are rounded to the dtype once. */
APAIRS_API apairs_status_t apairs_plan_create_gemv_batched(apairs_plan_t *plan, apairs_context_t ctx, int32_t dtype,
                                                           int32_t layout, int32_t order, int32_t trans, int64_t m,
                                                           int64_t n, double alpha, double beta, int64_t lda,
                                                           int64_t stride_a, int64_t stride_x, int64_t stride_y,
                                                           int64_t batch);

/** Execute a gemv plan. y must not overlap A or x. */
APAIRS_API apairs_status_t apairs_plan_execute_gemv(apairs_plan_t plan, const void *A, const void *x, void *y);

/* Pivots of the LU plans (ipiv): n int32_t per element, ipiv[e * n + i] (AoS) or
 * ipiv[i * batch + e] (SoA), 1-based as LAPACK's: row i was interchanged with row ipiv[i]. */

/** Plan batched LU factorisations with partial pivoting, as LAPACK's getrf for each
 *  element: A_e = P L U, L unit lower triangular and U upper, written over A_e.
 *  @param[in] n        1 to 128
 *  On CUDA an element lives in one block's shared memory: f64 with n above about 110
 *  needs more than the 99 KiB per block of some GPUs (Hopper and A100 have enough) and
 *  fails there with APAIRS_ERROR_UNSUPPORTED at plan time.
 *  Pivots: in column j, the first row with the largest |a_ij| (a NaN counts as larger than
 *  any number, and NaNs as equal whatever their payloads), the same rule on both
 *  backends; rows are swapped whole and the entries below the pivot divided by it.
 *  (Reference LAPACK's getf2 multiplies them by the pivot's reciprocal instead: where
 *  candidates tie in exact arithmetic its rounding may pick another row, and a pivot that
 *  is exactly zero here may be a rounding residue there, or the reverse.)
 *  info[e] = 0, or j > 0 for the first column j whose pivot is exactly zero or NaN; the
 *  factorisation of that element still completes (as LAPACK's: a zero pivot's column is
 *  not scaled), the others are not affected.
 *  Accuracy: P L U = A + dA with |dA| <= gamma_n |L| |U| entrywise, gamma_n = n u / (1 - n u),
 *  and every |l_ij| <= 1 (Higham, Thm 9.3). The CUDA kernels fuse each update into one
 *  fma and the host rounds twice, so the two backends may differ in the last bits (and,
 *  on near-ties, in the pivot chosen); both meet the bound.
 *  Fails with NULL_POINTER, INVALID_VALUE (n, batch, lda, stride_a), OVERFLOW (A's span
 *  exceeds 64-bit byte counts), UNKNOWN_ENUM (dtype, layout, order), UNSUPPORTED (dtype
 *  U8, or the shared memory above), and on CUDA with BACKEND_UNAVAILABLE, DEVICE or
 *  OUT_OF_MEMORY. */
APAIRS_API apairs_status_t apairs_plan_create_getrf_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                            int32_t dtype, int32_t layout, int32_t order, int64_t n,
                                                            int64_t lda, int64_t stride_a, int64_t batch);

/** Execute a getrf plan. ipiv as above; info: batch int32_t, contiguous. */
APAIRS_API apairs_status_t apairs_plan_execute_getrf(apairs_plan_t plan, void *A, int32_t *ipiv, int32_t *info);

/** Plan batched solves op(A) X = B from getrf's factors and pivots (LAPACK's getrs).
 *  @param[in] trans    an apairs_op_e value
 *  @param[in] nrhs     1 to 1024
 *  Pivot entries outside 1..n are ignored (never used as an index).
 *  Accuracy: backward stable: (A + dA) X = B with |dA| <= gamma_{3n} P |L| |U| (Higham,
 *  Thm 9.4), so ||op(A) X - B|| <= gamma_{3n} || |L| |U| || ||X||, a few n u ||A|| ||X||
 *  for well-conditioned A; the tests hold both backends to it.
 *  Fails as getrf, and with INVALID_VALUE for nrhs, ldb or stride_b, OVERFLOW for B's span
 *  and UNKNOWN_ENUM for trans. */
APAIRS_API apairs_status_t apairs_plan_create_getrs_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                            int32_t dtype, int32_t layout, int32_t order,
                                                            int32_t trans, int64_t n, int64_t nrhs, int64_t lda,
                                                            int64_t stride_a, int64_t ldb, int64_t stride_b,
                                                            int64_t batch);

/** Execute a getrs plan: B_e overwritten with X_e. B must not overlap A or ipiv. */
APAIRS_API apairs_status_t apairs_plan_execute_getrs(apairs_plan_t plan, const void *A, const int32_t *ipiv,
                                                     void *B);

/** Plan gesv, getrf then getrs in one call (as LAPACK's gesv for each element): A is
 *  factored in place, ipiv and info written as by getrf, and B_e overwritten with the
 *  solution where info[e] = 0 and left unchanged (neither read nor written) where
 *  info[e] != 0. Accuracy as getrf and getrs. */
APAIRS_API apairs_status_t apairs_plan_create_gesv_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                           int32_t dtype, int32_t layout, int32_t order, int64_t n,
                                                           int64_t nrhs, int64_t lda, int64_t stride_a, int64_t ldb,
                                                           int64_t stride_b, int64_t batch);

/** Execute a gesv plan. */
APAIRS_API apairs_status_t apairs_plan_execute_gesv(apairs_plan_t plan, void *A, int32_t *ipiv, void *B,
                                                    int32_t *info);

/** Plan the layout adapter: every element's `entries` values (a whole AoS element
 *  extent, padding included) from one layout to the other:
 *    to_layout = SOA: out[i * stride_out + e] = in[e * stride_in + i]
 *    to_layout = AOS: out[e * stride_out + i] = in[i * stride_in + e]
 *  for i < entries and e < batch; nothing else of `out` is written. The values are
 *  copied bit for bit.
 *  @param[in] dtype    APAIRS_DTYPE_F32, F64 or U8
 *  @param[in] to_layout an apairs_layout_e value: the layout of `out`
 *  @param[in] entries  >= 1 values per element
 *  @param[in] stride_in, stride_out  the AoS element stride (>= entries) and the SoA
 *             batch stride (>= batch), as each side's layout needs
 *  Fails with NULL_POINTER, INVALID_VALUE, OVERFLOW (an operand's span exceeds 64-bit
 *  byte counts, or entries or batch exceeds 2^62), UNKNOWN_ENUM, and on CUDA with
 *  BACKEND_UNAVAILABLE, DEVICE or OUT_OF_MEMORY. */
APAIRS_API apairs_status_t apairs_plan_create_transpose_batched(apairs_plan_t *plan, apairs_context_t ctx,
                                                                int32_t dtype, int32_t to_layout, int64_t entries,
                                                                int64_t stride_in, int64_t stride_out,
                                                                int64_t batch);

/** Execute a transpose plan. out must not overlap in. */
APAIRS_API apairs_status_t apairs_plan_execute_transpose(apairs_plan_t plan, const void *in, void *out);

/* ------------------------------------------------------------------------ */
/* Two-body statistics plans                                                */
/* ------------------------------------------------------------------------ */

/*
 * Reduced outputs of the all-pairs computation that never materialise the n1 x n2
 * matrix: pair counts within radii, distance histograms and k nearest neighbours. A, B,
 * metric, p, dtype, n1, n2, d, lda and ldb mean what they mean for
 * apairs_plan_create_pairwise, with the same limits and the same metric functors.
 *
 * Pairs (an apairs_pairs_e value):
 *   AUTO   one set A of n1 points: every unordered pair {i, j}, i < j, once (kNN:
 *          every j != i). n2 and ldb are ignored (pass 0) and so is B at execute
 *          (pass NULL or A). n1 (n1 - 1) / 2 pairs.
 *   CROSS  two sets: every (i, j), i < n1, j < n2. n1 n2 pairs. B may be A.
 *
 * The distance of a pair is the value apairs_plan_execute would write into D for it,
 * computed in the element type with the accuracy stated above for its metric (HAMMING on
 * U8: the int32_t count): the same sums in the same order as its tile engines (where
 * apairs_plan_execute on CUDA goes through cuBLAS instead, float L2 / SQEUCLIDEAN with
 * d >= 256, DOT and COSINE, the two-body value is the tile engines', within the same
 * bound, not necessarily the same bits). Every rule below compares that value with thresholds given
 * as doubles, exactly (no rounding of the threshold). Where comparing in the metric's
 * own domain is exact, the engines do that instead of finishing the distance: for L2
 * the squared distance is compared with the largest squared value whose rounded square
 * root is still within the radius, so no square root is taken and the result is the
 * same. Bin and radius membership is therefore exact for the computed distance; a pair
 * whose exact distance lies within the metric's error bound of an edge may fall on
 * either side (the tests allow this only for pairs within a relative 1e-6 of an edge,
 * F32 with d <= 8 and F64).
 *
 * Periodic box (nbox = d, box[k] the side L of dimension k, finite and > 0, with L and
 * 1 / L normal numbers in the element type): only L2 with 1 <= d <= 3. The distance is
 * the minimum-image one: each difference t = a_k - b_k is replaced by
 * t' = t - L * rint(t * r), r = 1 / L rounded to the element type, each operation
 * rounded in the element type (on both backends: the same bits), and then by t' - L
 * where t' > L / 2, t' + L where t' < -L / 2, so |t'| <= L / 2 wherever |t| <= 2^21 L
 * (F32; 2^50 L in F64; farther, the rounded multiple can be wrong by more than one and
 * t' off by whole sides; accuracy is best within a few box lengths of the origin); then
 * L2 as usual. Radii and histogram edges must not exceed half the smallest side: past
 * it one pair can have several images within reach, and only the nearest is counted.
 * nbox = 0: no box (box may be NULL).
 *
 * A NaN distance is never within a radius, falls in the histogram's last slot, and is
 * the farthest neighbour (after every number; between NaNs the smaller index first).
 *
 * Memory and backends as apairs_plan_execute: HOST takes host arrays; CUDA takes device
 * or host arrays (a call with only device arrays returns after queuing, except
 * apairs_plan_execute_histogram_weighted, which checks the weights on the device and
 * waits for that check). Every output is written whole (never accumulated into): a
 * failed call writes nothing. apairs_plan_describe names the technique the plan chose
 * (host: tiles or a cell list; CUDA: how the counters are privatised) and why.
 */
enum apairs_pairs_e {
    APAIRS_PAIRS_AUTO = 1,  /* one set: each unordered pair i < j once */
    APAIRS_PAIRS_CROSS = 2  /* two sets: every (i, j) */
};

/* The largest k of a kNN plan. */
#define APAIRS_KNN_MAX_K 128

/** Plan cumulative pair counts: counts[q] = the number of pairs whose distance is
 *  <= radii[q] (a 2-point correlation function's DD(r)).
 *  @param[in] pairs    an apairs_pairs_e value
 *  @param[in] nradii   1 to 4096 radii
 *  @param[in] radii    nradii finite values, strictly increasing (copied by the plan)
 *  @param[in] nbox, box  0 and NULL, or the periodic box as described above
 *  Fails with NULL_POINTER, INVALID_VALUE (unsorted or non-finite radii, a radius beyond
 *  half the box, box side <= 0, ...), OVERFLOW (n1 * n2 of 2^60 or more, n1 * n1 with AUTO,
 *  or a size product past 64 bits), UNKNOWN_ENUM, UNSUPPORTED (a box with a
 *  metric other than L2 or d > 3), and on CUDA as apairs_plan_create_pairwise. */
APAIRS_API apairs_status_t apairs_plan_create_pair_counts(apairs_plan_t *plan, apairs_context_t ctx, int32_t pairs,
                                                          int32_t metric, double p, int32_t dtype, int64_t n1,
                                                          int64_t n2, int64_t d, int64_t lda, int64_t ldb,
                                                          int64_t nradii, const double *radii, int64_t nbox,
                                                          const double *box);

/** Execute a pair-count plan: counts (nradii int64_t) as above. */
APAIRS_API apairs_status_t apairs_plan_execute_pair_counts(apairs_plan_t plan, const void *A, const void *B,
                                                           int64_t *counts);

/*
 * Histograms of distances. nbins bins with edges e_0 < e_1 < ... < e_nbins; bin b holds
 * the pairs with e_b <= distance < e_{b+1}. The output has nbins + 2 slots:
 *   counts[0]          distance < e_0
 *   counts[1 + b]      bin b, 0 <= b < nbins
 *   counts[nbins + 1]  distance >= e_nbins, or NaN
 * so the slots always add up to the number of pairs, exactly (64-bit counts).
 * Uniform bins on [rmin, rmax): e_b = rmin + b * ((rmax - rmin) / nbins) in double for
 * b < nbins, and e_nbins = rmax; they must come out strictly increasing.
 *
 * Weights (apairs_plan_execute_histogram_weighted): each pair adds w_i w_j, the product
 * of its two points' weights (AUTO: both from weights_a), to its slot's sum. The
 * product is formed in double and rounded to the nearest multiple of 2^-32 (ties to
 * even), a resolution of 2.3e-10 (absolute error <= 2^-33 per pair); these fixed-point
 * values are added exactly in 128-bit integers, so the sums are the same bits on every
 * run, thread count and block size, and on both backends wherever the pairs' slots
 * agree (a distance's last bits may differ between them, see the metrics); each sum is
 * rounded to double once at the end. Weights must be finite with |w| <= 2^15
 * (INVALID_VALUE otherwise, checked before anything is written). The resolution is
 * absolute: products below 2^-33 count as 0, so scale small weights up (by a power of
 * two, exactly) and the sums down after.
 * Note that bins are closed below and pair counts above (distance <= radius): where
 * distances fall exactly on edges, as on a grid, the cumulative histogram at e differs
 * from the pair count at radius e by the pairs at distance e.
 */

/** Plan a histogram with nbins uniform bins on [rmin, rmax).
 *  @param[in] nbins    1 to 2^20 (the HOST backend keeps private counts of 32 bytes a
 *                      bin for each thread, 48 when weighted: 32 MiB a thread at 2^20
 *                      bins)
 *  @param[in] rmin, rmax  finite, rmin < rmax
 *  Other arguments and failures as apairs_plan_create_pair_counts (edges in place of
 *  radii). */
APAIRS_API apairs_status_t apairs_plan_create_histogram_uniform(apairs_plan_t *plan, apairs_context_t ctx,
                                                                int32_t pairs, int32_t metric, double p,
                                                                int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                                                                int64_t lda, int64_t ldb, int64_t nbins,
                                                                double rmin, double rmax, int64_t nbox,
                                                                const double *box);

/** Plan a histogram with caller-given edges: nbins + 1 finite doubles, strictly
 *  increasing (copied by the plan). nbins: 1 to 2^20. */
APAIRS_API apairs_status_t apairs_plan_create_histogram_edges(apairs_plan_t *plan, apairs_context_t ctx,
                                                              int32_t pairs, int32_t metric, double p,
                                                              int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                                                              int64_t lda, int64_t ldb, int64_t nbins,
                                                              const double *edges, int64_t nbox,
                                                              const double *box);

/** Execute a histogram plan: counts, nbins + 2 int64_t as above. */
APAIRS_API apairs_status_t apairs_plan_execute_histogram(apairs_plan_t plan, const void *A, const void *B,
                                                         int64_t *counts);

/** Execute a histogram plan with weights: weights_a (n1 doubles), weights_b (n2 doubles;
 *  ignored for AUTO, pass NULL or weights_a), counts and sums (nbins + 2 each). */
APAIRS_API apairs_status_t apairs_plan_execute_histogram_weighted(apairs_plan_t plan, const void *A,
                                                                  const void *B, const double *weights_a,
                                                                  const double *weights_b, int64_t *counts,
                                                                  double *sums);

/** Plan k nearest neighbours: for every row i of A, the k rows j of B (AUTO: of A,
 *  j != i) with the smallest distances, sorted by (distance, j): ties go to the smaller
 *  index. "Nearest" is the smallest value of the metric, for DOT too (negate the rows of
 *  one side for the largest inner products).
 *  @param[in] k        1 to APAIRS_KNN_MAX_K, and <= n2 (AUTO: <= n1 - 1)
 *  No periodic box. Fails as apairs_plan_create_pairwise (INVALID_VALUE for k). */
APAIRS_API apairs_status_t apairs_plan_create_knn(apairs_plan_t *plan, apairs_context_t ctx, int32_t pairs,
                                                  int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                                                  int64_t d, int64_t lda, int64_t ldb, int64_t k);

/** Execute a kNN plan: indices (n1 x k int64_t, row-major) and distances (n1 x k of the
 *  dtype; int32_t for HAMMING on U8): row i holds its k neighbours nearest first. */
APAIRS_API apairs_status_t apairs_plan_execute_knn(apairs_plan_t plan, const void *A, const void *B,
                                                   int64_t *indices, void *distances);

/* ------------------------------------------------------------------------ */
/* Genotype plans: PLINK-style distances on 2-bit packed genotypes           */
/* ------------------------------------------------------------------------ */

/*
 * Packed genotypes. A genotype g is 0, 1 or 2 copies of an allele, or a missing call.
 * A row (one sample) of d variants takes ceil(d / 4) bytes: variant k lives in byte
 * k / 4, bits 2 (k % 4) and 2 (k % 4) + 1 (the low bits hold the first variant), as the
 * two-bit code of PLINK 1's .bed format:
 *
 *   code (high bit, low bit)   00        01        10        11
 *   PLINK 1 .bed meaning       hom. A1   missing   het.      hom. A2
 *   g (copies of A2)           0         missing   1         2
 *
 * so a sample-major .bed (or the transpose of PLINK's SNP-major one) is already this
 * layout. The bits past variant d - 1 in a row's last byte are never read: any value
 * is fine. Rows are `ld` bytes apart (ld >= ceil(d / 4); any alignment). Which allele
 * is counted does not matter: every metric below is unchanged, bit for bit, when A1 and
 * A2 swap (WEIGHTED with the same weights). The weights apairs_genotype_missing_weights
 * (below) computes from the swapped rows are the same up to rounding (it takes the major
 * allele's frequency, whichever allele that is).
 *
 * Metrics, for rows a and b, over the variants k where neither a_k nor b_k is missing
 * (n_k = 1 there, else 0); N = sum n_k is the number of variants called in both:
 *
 *   HAMMING        sum n_k [a_k != b_k]          int32 counts (Payne et al. 2010, with
 *                                                missing calls excluded per pair)
 *   ALLELE_COUNT   sum n_k |a_k - b_k|           int32: PLINK's allele-count distance
 *                                                before any scaling for missing calls
 *   IBS0           sum n_k [|a_k - b_k| = 2]     int32: the counts behind PLINK's
 *   IBS1           sum n_k [|a_k - b_k| = 1]     --genome (IBS0 + IBS1 + IBS2 = N)
 *   IBS2           sum n_k [a_k = b_k]           int32
 *   NONMISSING     N                             int32
 *   DISTANCE       PLINK 1.9 `--distance` (allele counts, the .dist file): double
 *   IBS            PLINK 1.9 `--distance ibs` (the .mibs file): double
 *   ONE_MINUS_IBS  PLINK 1.9 `--distance 1-ibs` (the .mdist file): double
 *
 * The three PLINK metrics scale ALLELE_COUNT (c) for the variants missing in a or b, as
 * PLINK 1.9 does, operation for operation in double precision, so that the values are
 * PLINK's bit for bit (and its files, printed, byte for byte):
 *   DISTANCE       s = c * scale
 *   IBS            1 - s * (0.5 / d)
 *   ONE_MINUS_IBS  s * (0.5 / d)
 * with, per `missing` (apairs_genotype_missing_e):
 *   FLAT      scale = d / N                       (PLINK's `flat-missing`)
 *   WEIGHTED  scale = W / (W - w_miss(a, b))      (PLINK 1.9's default)
 * where w_k are per-variant weights (uint32), W = sum w_k and w_miss(a, b) the sum of w_k
 * over the variants missing in a or in b. PLINK 1.9 weights a missing call by the
 * distance it would expect there under Hardy-Weinberg: w_k proportional to
 * f (1 - f) (f^2 - f + 1) for the frequency f >= 0.5 of variant k's major allele among
 * the founders (and 1 when f = 1), rounded to integers that sum to just under 2^32;
 * apairs_genotype_missing_weights computes them. When no call is missing both scales are
 * exactly 1 (c is then PLINK's integer count). A pair with N = 0 gives NaN (0 * inf):
 * PLINK prints "nan" there.
 *
 * Accuracy: the int32 counts are exact (d < 2^30). The PLINK metrics are exact
 * functions of exact counts, rounded as PLINK rounds them (the same double operations
 * in the same order, so identical to PLINK 1.9's values). As approximations of the
 * real-valued formulas, with u = 2^-53: DISTANCE has relative error <= 2 u (two
 * roundings), IBS and ONE_MINUS_IBS (values in [0, 1]) absolute error <= 5 u.
 */
enum apairs_genotype_metric_e {
    APAIRS_GENOTYPE_HAMMING = 1,
    APAIRS_GENOTYPE_ALLELE_COUNT = 2,
    APAIRS_GENOTYPE_IBS0 = 3,
    APAIRS_GENOTYPE_IBS1 = 4,
    APAIRS_GENOTYPE_IBS2 = 5,
    APAIRS_GENOTYPE_NONMISSING = 6,
    APAIRS_GENOTYPE_DISTANCE = 7,
    APAIRS_GENOTYPE_IBS = 8,
    APAIRS_GENOTYPE_ONE_MINUS_IBS = 9
};

enum apairs_genotype_missing_e {
    APAIRS_GENOTYPE_MISSING_WEIGHTED = 1, /* PLINK 1.9's default scaling: needs weights */
    APAIRS_GENOTYPE_MISSING_FLAT = 2      /* PLINK's flat-missing: scale by d / N */
};

/** Pack rows of genotype bytes into the 2-bit layout above.
 *  @param[in]  ctx       the context: HOST packs host arrays with its threads; CUDA
 *                        packs on its device (stream; the call waits for it) when both
 *                        arrays are device memory of that device, on the host when both
 *                        are host memory (INVALID_POINTER when one is and one is not)
 *  @param[in]  genotypes n x d bytes, row i at genotypes + i * ld_genotypes; each 0, 1,
 *                        2 or `missing_value`
 *  @param[in]  n, d      rows and variants, >= 1; d < 2^30
 *  @param[in]  ld_genotypes  >= d
 *  @param[in]  missing_value the byte that marks a missing call: 3 to 255
 *  @param[out] packed    n rows of ld_packed bytes; the first ceil(d / 4) bytes of each row
 *                        are written (the unused high bits of the last one as 0), the rest
 *                        left alone
 *  @param[in]  ld_packed >= ceil(d / 4)
 *  Any byte that is not 0, 1, 2 or missing_value fails the call with INVALID_VALUE (naming
 *  the row, the variant and the value) before anything is written. */
APAIRS_API apairs_status_t apairs_genotype_pack(apairs_context_t ctx, const void *genotypes, int64_t n, int64_t d,
                                                int64_t ld_genotypes, int32_t missing_value, void *packed,
                                                int64_t ld_packed);

/** PLINK 1.9's missing-call weights of d variants (1 <= d < 2^30) from n >= 1 packed
 *  rows, every array in host memory (device memory: INVALID_POINTER):
 *  f the frequency of allele A2 among the rows i with founders[i] != 0 (all rows when
 *  founders is NULL; 0.5 when none is called), replaced by 1 - f when below 0.5 (the
 *  major allele's frequency: PLINK 1.9 without --keep-allele-order), then weights[k] as
 *  described above. A cohort where every variant is fixed (f = 1) gets equal weights.
 *  @param[in]  founders  NULL, or n bytes (0: not a founder)
 *  @param[out] weights   d uint32_t values, written only on success */
APAIRS_API apairs_status_t apairs_genotype_missing_weights(const void *packed, int64_t n, int64_t d, int64_t ld,
                                                           const void *founders, void *weights);

/** Plan genotype distances D[i][j] = F(A[i], B[j]) between n1 packed rows A and n2 packed
 *  rows B (D int32_t for the count metrics, double for DISTANCE, IBS and ONE_MINUS_IBS).
 *  @param[in] metric   an apairs_genotype_metric_e value
 *  @param[in] missing  DISTANCE, IBS, ONE_MINUS_IBS: an apairs_genotype_missing_e value;
 *                      the count metrics: 0
 *  @param[in] n1, n2, d  >= 1; d < 2^30
 *  @param[in] lda, ldb row strides of A and B in bytes, >= ceil(d / 4)
 *  @param[in] ldd      leading dimension of D in elements, >= n2
 *  @param[in] weights  WEIGHTED: d uint32_t weights (copied into the plan) whose sum is
 *                      positive and below 2^32; otherwise ignored (pass NULL)
 *  Fails with NULL_POINTER, INVALID_VALUE, OVERFLOW, UNKNOWN_ENUM, and on CUDA with
 *  BACKEND_UNAVAILABLE (also on a device below sm_80: the CUDA engine runs on the binary
 *  tensor cores) or DEVICE. Both backends give the same bits. */
APAIRS_API apairs_status_t apairs_plan_create_genotype(apairs_plan_t *plan, apairs_context_t ctx, int32_t metric,
                                                       int32_t missing, int64_t n1, int64_t n2, int64_t d,
                                                       int64_t lda, int64_t ldb, int64_t ldd, const void *weights);

/** Execute a genotype plan: D[i][j] for all i < n1, j < n2 (B may be A). Only the
 *  n1 x n2 entries of D are written. Memory as apairs_plan_execute: host memory on the
 *  HOST backend; on CUDA each of A, B, D device or host memory (staged; the call returns
 *  after queuing when all three are device memory). CUDA also allocates, in stream
 *  order, 12 bytes per 32 variants (d rounded up to 256) per row of A and of B (their bit
 *  planes) and, for WEIGHTED, 16 bytes per variant per 128 rows (masks of the missing
 *  calls); WEIGHTED uses D's entries as scratch before it writes them. With B = A (the
 *  same pointer and stride, n1 = n2) each pair is computed once. */
APAIRS_API apairs_status_t apairs_plan_execute_genotype(apairs_plan_t plan, const void *A, const void *B, void *D);

#ifdef __cplusplus
}
#endif

#endif /* APAIRS_H */
