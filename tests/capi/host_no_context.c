/* The HOST backend of a CUDA build leaves the GPU alone (apairs.h, apairs_plan_execute):
 * no CUDA context is created by creating a host context, planning, or executing any
 * family on host arrays, which a context would cost (hundreds of MiB of device memory
 * and the driver's start-up) on every GPU machine. Checked through the CUDA driver,
 * loaded here with dlopen: no context current on this thread and no device's primary
 * context active after each step. Then CUDA calls on the last device leave the thread's
 * current context as they found it (none; the caller's own) and create no other device's
 * context; their context must be seen, which shows the probe works. Exits 77 (skipped)
 * without a CUDA driver or device,
 * and on a build without CUDA, which cannot create one. A fresh process: the test
 * suites' CUDA cases create contexts. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apairs.h"

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_count_t)(int *);
typedef int (*cu_device_get_t)(int *, int);
typedef int (*cu_primary_state_t)(int, unsigned *, int *);
typedef int (*cu_ctx_current_t)(void **);
typedef int (*cu_ctx_set_t)(void *);
typedef int (*cu_primary_retain_t)(void **, int);
typedef int (*cu_primary_release_t)(int);

static cu_count_t cu_count;
static cu_device_get_t cu_device_get;
static cu_primary_state_t cu_primary_state;
static cu_ctx_current_t cu_ctx_current;
static cu_ctx_set_t cu_ctx_set;
static cu_primary_retain_t cu_primary_retain;
static cu_primary_release_t cu_primary_release;
static int failures;

/* Counts a failure unless, after `step`, no context is current on this thread and the
 * primary context of device `only` (none: -1), and no other device's, is active. */
static void expect_contexts(int only, const char *step) {
    void *current = NULL;
    int n = 0;
    if (cu_ctx_current(&current) != 0 || current != NULL) {
        fprintf(stderr, "FAILED: a CUDA context is current after %s\n", step);
        ++failures;
        return;
    }
    if (cu_count(&n) != 0) n = 0;
    for (int i = 0; i < n; ++i) {
        int dev = 0, active = 0;
        unsigned flags = 0;
        if (cu_device_get(&dev, i) != 0 || cu_primary_state(dev, &flags, &active) != 0 ||
            (active != 0) != (i == only)) {
            fprintf(stderr, "FAILED: device %d's primary context is %s after %s\n", i,
                    active ? "active" : "inactive", step);
            ++failures;
            return;
        }
    }
    if (only < 0)
        printf("ok: no CUDA context after %s\n", step);
    else
        printf("ok: device %d's context alone, and none current, after %s\n", only, step);
}

static int check(apairs_status_t s, const char *what) {
    if (s == APAIRS_SUCCESS) return 0;
    fprintf(stderr, "FAILED: %s: %s: %s\n", what, apairs_status_string(s), apairs_last_error());
    ++failures;
    return 1;
}

int main(void) {
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cuda) {
        printf("skipped: no CUDA driver (libcuda.so.1)\n");
        return 77;
    }
    const cu_init_t cu_init = (cu_init_t)(uintptr_t)dlsym(cuda, "cuInit");
    cu_count = (cu_count_t)(uintptr_t)dlsym(cuda, "cuDeviceGetCount");
    cu_device_get = (cu_device_get_t)(uintptr_t)dlsym(cuda, "cuDeviceGet");
    cu_primary_state = (cu_primary_state_t)(uintptr_t)dlsym(cuda, "cuDevicePrimaryCtxGetState");
    cu_ctx_current = (cu_ctx_current_t)(uintptr_t)dlsym(cuda, "cuCtxGetCurrent");
    cu_ctx_set = (cu_ctx_set_t)(uintptr_t)dlsym(cuda, "cuCtxSetCurrent");
    cu_primary_retain = (cu_primary_retain_t)(uintptr_t)dlsym(cuda, "cuDevicePrimaryCtxRetain");
    cu_primary_release = (cu_primary_release_t)(uintptr_t)dlsym(cuda, "cuDevicePrimaryCtxRelease_v2");
    int devices = 0;
    if (!cu_init || !cu_count || !cu_device_get || !cu_primary_state || !cu_ctx_current || !cu_ctx_set ||
        !cu_primary_retain || !cu_primary_release || cu_init(0) != 0 ||
        cu_count(&devices) != 0 || devices == 0) {
        printf("skipped: no CUDA device\n");
        return 77;
    }
    if (!strstr(apairs_version_string(), "cuda")) {
        printf("skipped: a build without CUDA (%s)\n", apairs_version_string());
        return 77;
    }
    expect_contexts(-1, "cuInit");

    int32_t count = 0;
    check(apairs_cuda_device_count(&count), "apairs_cuda_device_count");
    apairs_context_t ctx = NULL;
    if (check(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0), "apairs_context_create")) return 1;
    expect_contexts(-1, "apairs_cuda_device_count and apairs_context_create(HOST)");

    enum { N1 = 5, N2 = 3, D = 7, B = 3, N = 4 };
    double a[N1 * D], b[N2 * D], dist[N1 * N2];
    for (int k = 0; k < N1 * D; ++k) a[k] = (k * 37 % 101) / 50.0 - 1.0;
    for (int k = 0; k < N2 * D; ++k) b[k] = (k * 53 % 97) / 48.0 - 1.0;
    apairs_plan_t plan = NULL;
    if (!check(apairs_plan_create_pairwise(&plan, ctx, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, N1, N2, D, D, D, N2),
               "apairs_plan_create_pairwise")) {
        check(apairs_plan_execute(plan, a, b, dist), "apairs_plan_execute");
        apairs_plan_destroy(plan);
    }
    expect_contexts(-1, "a pairwise plan and execute");

    /* Batched: gemm, and potrf / getrf on SPD elements (diagonally dominant). */
    double ga[B * N * N], gb[B * N * N], gc[B * N * N];
    int32_t info[B], ipiv[B * N];
    for (int k = 0; k < B * N * N; ++k) {
        ga[k] = (k * 29 % 31) / 16.0 - 1.0;
        gb[k] = (k * 17 % 23) / 12.0 - 1.0;
    }
    if (!check(apairs_plan_create_gemm_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                               APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, APAIRS_OP_T, N, N, N, 1.0, 0.0,
                                               N, N * N, N, N * N, N, N * N, B),
               "apairs_plan_create_gemm_batched")) {
        check(apairs_plan_execute_gemm(plan, ga, gb, gc), "apairs_plan_execute_gemm");
        apairs_plan_destroy(plan);
    }
    /* potrf's elements SoA column-major (entry (i, j) of element e at (i + j N) B + e), getrf's
     * AoS row-major: the same symmetric, diagonally dominant matrices. */
    for (int e = 0; e < B; ++e)
        for (int i = 0; i < N; ++i)
            for (int j = 0; j < N; ++j) {
                const double x = i == j ? N + 1.0 + e : 0.5 / (1 + i + j);
                gc[(i + j * N) * B + e] = x;
                ga[e * N * N + i * N + j] = x;
            }
    if (!check(apairs_plan_create_potrf_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_SOA,
                                                APAIRS_ORDER_COL_MAJOR, APAIRS_UPLO_LOWER, N, N, B, B),
               "apairs_plan_create_potrf_batched")) {
        if (!check(apairs_plan_execute_potrf(plan, gc, info), "apairs_plan_execute_potrf"))
            for (int e = 0; e < B; ++e)
                if (info[e] != 0) {
                    fprintf(stderr, "FAILED: potrf element %d: info %d on an SPD matrix\n", e, (int)info[e]);
                    ++failures;
                }
        apairs_plan_destroy(plan);
    }
    if (!check(apairs_plan_create_getrf_batched(&plan, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS,
                                                APAIRS_ORDER_ROW_MAJOR, N, N, N * N, B),
               "apairs_plan_create_getrf_batched")) {
        if (!check(apairs_plan_execute_getrf(plan, ga, ipiv, info), "apairs_plan_execute_getrf"))
            for (int e = 0; e < B; ++e)
                if (info[e] != 0) {
                    fprintf(stderr, "FAILED: getrf element %d: info %d on a nonsingular matrix\n", e, (int)info[e]);
                    ++failures;
                }
        apairs_plan_destroy(plan);
    }
    expect_contexts(-1, "batched gemm, potrf and getrf plans and executes");

    /* Two-body: pair counts within two radii. */
    const double radii[2] = {0.5, 2.0};
    int64_t counts[2];
    if (!check(apairs_plan_create_pair_counts(&plan, ctx, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64,
                                              N1, N2, D, D, D, 2, radii, 0, NULL),
               "apairs_plan_create_pair_counts")) {
        check(apairs_plan_execute_pair_counts(plan, a, b, counts), "apairs_plan_execute_pair_counts");
        apairs_plan_destroy(plan);
    }
    expect_contexts(-1, "a pair-count plan and execute");

    /* Genotypes: pack (which asks where its arrays live), then IBS between the rows. */
    enum { GN = 6, GD = 13, GLD = (GD + 3) / 4 };
    uint8_t g[GN * GD], packed[GN * GLD];
    double ibs[GN * GN];
    for (int k = 0; k < GN * GD; ++k) g[k] = (uint8_t)(k * 7 % 3);
    check(apairs_genotype_pack(ctx, g, GN, GD, GD, 9, packed, GLD), "apairs_genotype_pack");
    if (!check(apairs_plan_create_genotype(&plan, ctx, APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_FLAT, GN, GN, GD,
                                           GLD, GLD, GN, NULL),
               "apairs_plan_create_genotype")) {
        check(apairs_plan_execute_genotype(plan, packed, packed, ibs), "apairs_plan_execute_genotype");
        apairs_plan_destroy(plan);
    }
    expect_contexts(-1, "apairs_genotype_pack and a genotype plan and execute");

    apairs_context_destroy(ctx);
    expect_contexts(-1, "apairs_context_destroy");

    /* CUDA, on the last device: every call runs in that device's primary context and leaves
     * this thread's current context as it found it. Here the thread has none, so none is
     * current after each call, and no other device's context is created (with one GPU, the
     * probe still sees the plan's own context: the check works). A COSINE plan (which
     * holds a cuBLAS handle) and a batched gemm staged over streams, on host arrays. */
    const int last = devices - 1;
    if (!check(apairs_context_create(&ctx, APAIRS_BACKEND_CUDA, last), "apairs_context_create(CUDA)")) {
        apairs_plan_t cosine = NULL, gemm = NULL;
        check(apairs_plan_create_pairwise(&cosine, ctx, APAIRS_METRIC_COSINE, 0, APAIRS_DTYPE_F64, N1, N2, D, D, D,
                                          N2),
              "apairs_plan_create_pairwise (CUDA COSINE)");
        check(apairs_plan_create_gemm_batched(&gemm, ctx, APAIRS_DTYPE_F64, APAIRS_LAYOUT_AOS, APAIRS_ORDER_ROW_MAJOR,
                                              APAIRS_OP_N, APAIRS_OP_T, N, N, N, 1.0, 0.0, N, N * N, N, N * N, N,
                                              N * N, B),
              "apairs_plan_create_gemm_batched (CUDA)");
        if (cosine && gemm) {
            check(apairs_plan_execute(cosine, a, b, dist), "apairs_plan_execute (CUDA)");
            check(apairs_plan_execute_gemm(gemm, ga, gb, gc), "apairs_plan_execute_gemm (CUDA)");
            expect_contexts(last, "CUDA plans and executes on the last device");
            /* A context the caller made current stays current: the plan's device's primary
             * context, then (two or more GPUs) device 0's, another device's than the plan's. */
            for (int which = 0; which < (devices > 1 ? 2 : 1); ++which) {
                int dev = 0;
                void *mine = NULL, *after = NULL;
                if (cu_device_get(&dev, which == 0 ? last : 0) != 0 || cu_primary_retain(&mine, dev) != 0 ||
                    cu_ctx_set(mine) != 0) {
                    fprintf(stderr, "FAILED: the driver would not make a context current\n");
                    ++failures;
                    break;
                }
                check(apairs_plan_execute(cosine, a, b, dist), "apairs_plan_execute (CUDA, a context current)");
                check(apairs_plan_execute_gemm(gemm, ga, gb, gc), "apairs_plan_execute_gemm (CUDA, a context current)");
                if (cu_ctx_current(&after) != 0 || after != mine) {
                    fprintf(stderr, "FAILED: an execute replaced the caller's current context (device %d's)\n",
                            which == 0 ? last : 0);
                    ++failures;
                } else {
                    printf("ok: the caller's current context (device %d's) kept\n", which == 0 ? last : 0);
                }
                cu_ctx_set(NULL);
                cu_primary_release(dev);
            }
        }
        apairs_plan_destroy(cosine);  /* (the cuBLAS handle released in the plan's context) */
        apairs_plan_destroy(gemm);
        expect_contexts(last, "destroying the CUDA plans");
        apairs_context_destroy(ctx);  /* (the last hold of the device's memory pool: trimmed) */
        expect_contexts(last, "destroying the CUDA context");
    }
    /* HOST calls after CUDA ones still touch no context. */
    if (!check(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0), "apairs_context_create(HOST)")) {
        if (!check(apairs_plan_create_pairwise(&plan, ctx, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, N1, N2, D, D, D,
                                               N2),
                   "apairs_plan_create_pairwise (HOST)")) {
            check(apairs_plan_execute(plan, a, b, dist), "apairs_plan_execute (HOST)");
            apairs_plan_destroy(plan);
        }
        apairs_context_destroy(ctx);
        expect_contexts(last, "a HOST plan and execute after the CUDA ones");
    }
    printf("%s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
