/* apairs.h compiled as plain C (C99 and C11, -Wall -Wextra -Wpedantic -Werror), the way
 * a C user sees it: the header must be self-contained (it is included first), guarded
 * (it is included twice), and free of C++ or compiler extensions. The values it pins
 * here are part of the ABI: a released value never changes.
 *
 * Built twice from this one file (tests/capi/meson.build): as C99, where the pins use
 * the negative-array-size trick, and as C11, where they are _Static_assert. */

#include "apairs.h"
#include "apairs.h"

#include <stdio.h>

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define PIN(cond, name) _Static_assert(cond, #name)
#else
#define PIN(cond, name) typedef char pin_##name[(cond) ? 1 : -1]
#endif

/* Versions */
PIN(APAIRS_VERSION_MAJOR == 0, version_major);
PIN(APAIRS_VERSION_MINOR == 2, version_minor);
PIN(APAIRS_VERSION_PATCH == 0, version_patch);
PIN(APAIRS_VERSION_NUMBER == 200, version_number);

/* Types: every integer in the ABI has a fixed width; handles are plain pointers. */
PIN(sizeof(apairs_status_t) == 4, sizeof_status);
PIN((apairs_status_t)-1 < 0, status_is_signed);
PIN(sizeof(apairs_context_t) == sizeof(void *), sizeof_context);
PIN(sizeof(apairs_plan_t) == sizeof(void *), sizeof_plan);

/* Structs: libapairs has no public structs (its handles point to incomplete structs),
 * so there is no sizeof/offsetof to pin. A public struct, if one is ever unavoidable,
 * carries its own size as its first member and has its sizeof and offsets pinned here. */

/* apairs_status_e */
PIN(APAIRS_SUCCESS == 0, success);
PIN(APAIRS_ERROR_NULL_POINTER == 1, error_null_pointer);
PIN(APAIRS_ERROR_INVALID_VALUE == 2, error_invalid_value);
PIN(APAIRS_ERROR_OVERFLOW == 3, error_overflow);
PIN(APAIRS_ERROR_UNKNOWN_ENUM == 4, error_unknown_enum);
PIN(APAIRS_ERROR_UNSUPPORTED == 5, error_unsupported);
PIN(APAIRS_ERROR_BACKEND_UNAVAILABLE == 6, error_backend_unavailable);
PIN(APAIRS_ERROR_OUT_OF_MEMORY == 7, error_out_of_memory);
PIN(APAIRS_ERROR_DEVICE == 8, error_device);
PIN(APAIRS_ERROR_INVALID_POINTER == 9, error_invalid_pointer);
PIN(APAIRS_ERROR_INTERNAL == 10, error_internal);

/* apairs_backend_e, apairs_option_e */
PIN(APAIRS_BACKEND_AUTO == 0, backend_auto);
PIN(APAIRS_BACKEND_HOST == 1, backend_host);
PIN(APAIRS_BACKEND_CUDA == 2, backend_cuda);
PIN(APAIRS_OPTION_OCCUPANCY_TARGET == 1, option_occupancy_target);
PIN(APAIRS_OPTION_HOST_THREADS == 2, option_host_threads);
PIN(APAIRS_OPTION_STAGING_BYTES == 3, option_staging_bytes);
PIN(APAIRS_OPTION_TF32 == 4, option_tf32);

/* apairs_dtype_e */
PIN(APAIRS_DTYPE_F32 == 1, dtype_f32);
PIN(APAIRS_DTYPE_F64 == 2, dtype_f64);
PIN(APAIRS_DTYPE_U8 == 3, dtype_u8);

/* apairs_metric_e */
PIN(APAIRS_METRIC_L1 == 1, metric_l1);
PIN(APAIRS_METRIC_L2 == 2, metric_l2);
PIN(APAIRS_METRIC_SQEUCLIDEAN == 3, metric_sqeuclidean);
PIN(APAIRS_METRIC_LP == 4, metric_lp);
PIN(APAIRS_METRIC_LINF == 5, metric_linf);
PIN(APAIRS_METRIC_DOT == 6, metric_dot);
PIN(APAIRS_METRIC_COSINE == 7, metric_cosine);
PIN(APAIRS_METRIC_HAMMING == 8, metric_hamming);

/* Batched plans */
PIN(APAIRS_LAYOUT_AOS == 1, layout_aos);
PIN(APAIRS_LAYOUT_SOA == 2, layout_soa);
PIN(APAIRS_ORDER_ROW_MAJOR == 1, order_row_major);
PIN(APAIRS_ORDER_COL_MAJOR == 2, order_col_major);
PIN(APAIRS_OP_N == 0, op_n);
PIN(APAIRS_OP_T == 1, op_t);
PIN(APAIRS_UPLO_LOWER == 1, uplo_lower);
PIN(APAIRS_UPLO_UPPER == 2, uplo_upper);

/* Two-body and genotype plans */
PIN(APAIRS_PAIRS_AUTO == 1, pairs_auto);
PIN(APAIRS_PAIRS_CROSS == 2, pairs_cross);
PIN(APAIRS_KNN_MAX_K == 128, knn_max_k);
PIN(APAIRS_GENOTYPE_HAMMING == 1, genotype_hamming);
PIN(APAIRS_GENOTYPE_ALLELE_COUNT == 2, genotype_allele_count);
PIN(APAIRS_GENOTYPE_IBS0 == 3, genotype_ibs0);
PIN(APAIRS_GENOTYPE_IBS1 == 4, genotype_ibs1);
PIN(APAIRS_GENOTYPE_IBS2 == 5, genotype_ibs2);
PIN(APAIRS_GENOTYPE_NONMISSING == 6, genotype_nonmissing);
PIN(APAIRS_GENOTYPE_DISTANCE == 7, genotype_distance);
PIN(APAIRS_GENOTYPE_IBS == 8, genotype_ibs);
PIN(APAIRS_GENOTYPE_ONE_MINUS_IBS == 9, genotype_one_minus_ibs);
PIN(APAIRS_GENOTYPE_MISSING_WEIGHTED == 1, genotype_missing_weighted);
PIN(APAIRS_GENOTYPE_MISSING_FLAT == 2, genotype_missing_flat);

/* Signatures: each function assigned to a pointer of its exact released type; a change
 * of any parameter or result type is an incompatible-pointer error under -Werror. */
static int32_t (*const p_version_number)(void) = apairs_version_number;
static const char *(*const p_version_string)(void) = apairs_version_string;
static const char *(*const p_status_string)(int32_t) = apairs_status_string;
static const char *(*const p_last_error)(void) = apairs_last_error;
static int32_t (*const p_cuda_device_count)(int32_t *) = apairs_cuda_device_count;
static int32_t (*const p_context_create)(apairs_context_t *, int32_t, int32_t) = apairs_context_create;
static int32_t (*const p_context_destroy)(apairs_context_t) = apairs_context_destroy;
static int32_t (*const p_context_get_backend)(apairs_context_t, int32_t *) = apairs_context_get_backend;
static int32_t (*const p_context_set_stream)(apairs_context_t, void *) = apairs_context_set_stream;
static int32_t (*const p_context_set_option)(apairs_context_t, int32_t, double) = apairs_context_set_option;
static int32_t (*const p_context_get_option)(apairs_context_t, int32_t, double *) = apairs_context_get_option;
static int32_t (*const p_plan_create_pairwise)(apairs_plan_t *, apairs_context_t, int32_t, double, int32_t,
                                               int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) =
    apairs_plan_create_pairwise;
static int32_t (*const p_plan_execute)(apairs_plan_t, const void *, const void *, void *) = apairs_plan_execute;
static int32_t (*const p_plan_describe)(apairs_plan_t, char *, int64_t, int64_t *) = apairs_plan_describe;
static int32_t (*const p_plan_destroy)(apairs_plan_t) = apairs_plan_destroy;
static int32_t (*const p_plan_create_gemm_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t,
                                                   int32_t, int32_t, int64_t, int64_t, int64_t, double, double,
                                                   int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) =
    apairs_plan_create_gemm_batched;
static int32_t (*const p_plan_execute_gemm)(apairs_plan_t, const void *, const void *, void *) =
    apairs_plan_execute_gemm;
static int32_t (*const p_plan_create_potrf_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t,
                                                    int32_t, int64_t, int64_t, int64_t, int64_t) =
    apairs_plan_create_potrf_batched;
static int32_t (*const p_plan_execute_potrf)(apairs_plan_t, void *, int32_t *) = apairs_plan_execute_potrf;
static int32_t (*const p_plan_create_potrs_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t,
                                                    int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                                                    int64_t) = apairs_plan_create_potrs_batched;
static int32_t (*const p_plan_execute_potrs)(apairs_plan_t, const void *, void *) = apairs_plan_execute_potrs;
static apairs_status_t (*const p_plan_create_posv_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_posv_batched;
static apairs_status_t (*const p_plan_execute_posv)(apairs_plan_t, void *, void *, int32_t *) = apairs_plan_execute_posv;
static apairs_status_t (*const p_plan_create_dot_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_dot_batched;
static apairs_status_t (*const p_plan_execute_dot)(apairs_plan_t, const void *, const void *, void *) = apairs_plan_execute_dot;
static apairs_status_t (*const p_plan_create_gemv_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t, int32_t, int64_t, int64_t, double, double, int64_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_gemv_batched;
static apairs_status_t (*const p_plan_execute_gemv)(apairs_plan_t, const void *, const void *, void *) = apairs_plan_execute_gemv;
static apairs_status_t (*const p_plan_create_getrf_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_getrf_batched;
static apairs_status_t (*const p_plan_execute_getrf)(apairs_plan_t, void *, int32_t *, int32_t *) = apairs_plan_execute_getrf;
static apairs_status_t (*const p_plan_create_getrs_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_getrs_batched;
static apairs_status_t (*const p_plan_execute_getrs)(apairs_plan_t, const void *, const int32_t *, void *) = apairs_plan_execute_getrs;
static apairs_status_t (*const p_plan_create_gesv_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_gesv_batched;
static apairs_status_t (*const p_plan_execute_gesv)(apairs_plan_t, void *, int32_t *, void *, int32_t *) = apairs_plan_execute_gesv;
static apairs_status_t (*const p_plan_create_transpose_batched)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_transpose_batched;
static apairs_status_t (*const p_plan_execute_transpose)(apairs_plan_t, const void *, void *) = apairs_plan_execute_transpose;
static apairs_status_t (*const p_plan_create_pair_counts)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, double, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, const double *, int64_t, const double *) = apairs_plan_create_pair_counts;
static apairs_status_t (*const p_plan_execute_pair_counts)(apairs_plan_t, const void *, const void *, int64_t *) = apairs_plan_execute_pair_counts;
static apairs_status_t (*const p_plan_create_histogram_uniform)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, double, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, double, double, int64_t, const double *) = apairs_plan_create_histogram_uniform;
static apairs_status_t (*const p_plan_create_histogram_edges)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, double, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, const double *, int64_t, const double *) = apairs_plan_create_histogram_edges;
static apairs_status_t (*const p_plan_execute_histogram)(apairs_plan_t, const void *, const void *, int64_t *) = apairs_plan_execute_histogram;
static apairs_status_t (*const p_plan_execute_histogram_weighted)(apairs_plan_t, const void *, const void *, const double *, const double *, int64_t *, double *) = apairs_plan_execute_histogram_weighted;
static apairs_status_t (*const p_plan_create_knn)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, double, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) = apairs_plan_create_knn;
static apairs_status_t (*const p_plan_execute_knn)(apairs_plan_t, const void *, const void *, int64_t *, void *) = apairs_plan_execute_knn;
static apairs_status_t (*const p_genotype_pack)(apairs_context_t, const void *, int64_t, int64_t, int64_t, int32_t, void *, int64_t) = apairs_genotype_pack;
static apairs_status_t (*const p_genotype_missing_weights)(const void *, int64_t, int64_t, int64_t, const void *, void *) = apairs_genotype_missing_weights;
static apairs_status_t (*const p_plan_create_genotype)(apairs_plan_t *, apairs_context_t, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, const void *) = apairs_plan_create_genotype;
static apairs_status_t (*const p_plan_execute_genotype)(apairs_plan_t, const void *, const void *, void *) = apairs_plan_execute_genotype;

int main(void) {
    const void *const all[] = {
        (const void *)&p_version_string, (const void *)&p_status_string, (const void *)&p_last_error,
        (const void *)&p_cuda_device_count, (const void *)&p_context_create,
        (const void *)&p_context_destroy, (const void *)&p_context_get_backend,
        (const void *)&p_context_set_stream, (const void *)&p_context_set_option,
        (const void *)&p_context_get_option, (const void *)&p_plan_create_pairwise,
        (const void *)&p_plan_execute, (const void *)&p_plan_describe, (const void *)&p_plan_destroy,
        (const void *)&p_plan_create_gemm_batched, (const void *)&p_plan_execute_gemm,
        (const void *)&p_plan_create_potrf_batched, (const void *)&p_plan_execute_potrf,
        (const void *)&p_plan_create_potrs_batched, (const void *)&p_plan_execute_potrs,
        (const void *)&p_plan_create_posv_batched,
        (const void *)&p_plan_execute_posv,
        (const void *)&p_plan_create_dot_batched,
        (const void *)&p_plan_execute_dot,
        (const void *)&p_plan_create_gemv_batched,
        (const void *)&p_plan_execute_gemv,
        (const void *)&p_plan_create_getrf_batched,
        (const void *)&p_plan_execute_getrf,
        (const void *)&p_plan_create_getrs_batched,
        (const void *)&p_plan_execute_getrs,
        (const void *)&p_plan_create_gesv_batched,
        (const void *)&p_plan_execute_gesv,
        (const void *)&p_plan_create_transpose_batched,
        (const void *)&p_plan_execute_transpose,
        (const void *)&p_plan_create_pair_counts,
        (const void *)&p_plan_execute_pair_counts,
        (const void *)&p_plan_create_histogram_uniform,
        (const void *)&p_plan_create_histogram_edges,
        (const void *)&p_plan_execute_histogram,
        (const void *)&p_plan_execute_histogram_weighted,
        (const void *)&p_plan_create_knn,
        (const void *)&p_plan_execute_knn,
        (const void *)&p_genotype_pack,
        (const void *)&p_genotype_missing_weights,
        (const void *)&p_plan_create_genotype,
        (const void *)&p_plan_execute_genotype,
    };
    (void)all;

    /* It links, and the library it loaded is the one this header describes. */
    const int32_t loaded = p_version_number();
    if (loaded != APAIRS_VERSION_NUMBER) {
        fprintf(stderr, "apairs_version_number() = %d, header says %d\n", (int)loaded,
                APAIRS_VERSION_NUMBER);
        return 1;
    }
    /* Destroying NULL is a no-op that succeeds (header promise). */
    if (apairs_plan_destroy(NULL) != APAIRS_SUCCESS || apairs_context_destroy(NULL) != APAIRS_SUCCESS) {
        fprintf(stderr, "destroy(NULL) failed: %s\n", apairs_last_error());
        return 1;
    }
    printf("%s: header and library agree (version %d)\n", apairs_version_string(), (int)loaded);
    return 0;
}
