/* One plan executed from many threads at once (apairs.h: "a plan is immutable:
 * apairs_plan_execute and apairs_plan_describe may run concurrently on one plan").
 * Every thread's result must be bit-identical to a single-threaded run. Run by suite
 * capi in every build, and under ThreadSanitizer by .ci/run's -Db_sanitize=thread build. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apairs.h"

enum { THREADS = 8, REPEATS = 4, N1 = 67, N2 = 45, D = 37 };

static apairs_plan_t plans[2];
static const int32_t dtypes[2] = {APAIRS_DTYPE_F64, APAIRS_DTYPE_F32};
static double A64[N1 * D], B64[N2 * D], ref64[N1 * N2];
static float A32[N1 * D], B32[N2 * D], ref32[N1 * N2];

static int fail(const char *what, apairs_status_t s) {
    fprintf(stderr, "%s: %s: %s\n", what, apairs_status_string(s), apairs_last_error());
    return 1;
}

static void *worker(void *arg) {
    const int id = (int)(size_t)arg;
    double *d64 = malloc(sizeof(double) * N1 * N2);
    float *d32 = malloc(sizeof(float) * N1 * N2);
    char desc[512];
    size_t bad = 0;
    if (!d64 || !d32) return (void *)1;
    for (int r = 0; r < REPEATS; ++r) {
        const int which = (id + r) % 2;
        apairs_status_t s = which == 0 ? apairs_plan_execute(plans[0], A64, B64, d64)
                                       : apairs_plan_execute(plans[1], A32, B32, d32);
        if (s != APAIRS_SUCCESS) bad += (size_t)fail("apairs_plan_execute", s);
        else if (which == 0) bad += memcmp(d64, ref64, sizeof ref64) != 0;
        else bad += memcmp(d32, ref32, sizeof ref32) != 0;
        if (apairs_plan_describe(plans[which], desc, sizeof desc, NULL) != APAIRS_SUCCESS) ++bad;
    }
    free(d64);
    free(d32);
    return (void *)bad;
}

int main(void) {
    apairs_context_t ctx = NULL;
    apairs_status_t s;
    for (int k = 0; k < N1 * D; ++k) A64[k] = A32[k] = (float)((k * 37 % 101) / 50.0 - 1.0);
    for (int k = 0; k < N2 * D; ++k) B64[k] = B32[k] = (float)((k * 53 % 97) / 48.0 - 1.0);
    if ((s = apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0)) != APAIRS_SUCCESS) return fail("context", s);
    for (int p = 0; p < 2; ++p)
        if ((s = apairs_plan_create_pairwise(&plans[p], ctx, p == 0 ? APAIRS_METRIC_L2 : APAIRS_METRIC_COSINE,
                                             0.0, dtypes[p], N1, N2, D, D, D, N2)) != APAIRS_SUCCESS)
            return fail("plan", s);
    if ((s = apairs_context_destroy(ctx)) != APAIRS_SUCCESS) return fail("context_destroy", s);
    if ((s = apairs_plan_execute(plans[0], A64, B64, ref64)) != APAIRS_SUCCESS) return fail("reference", s);
    if ((s = apairs_plan_execute(plans[1], A32, B32, ref32)) != APAIRS_SUCCESS) return fail("reference", s);

    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; ++i)
        if (pthread_create(&t[i], NULL, worker, (void *)(size_t)i) != 0) return fail("pthread_create", 0);
    size_t bad = 0;
    for (int i = 0; i < THREADS; ++i) {
        void *r = NULL;
        pthread_join(t[i], &r);
        bad += (size_t)r;
    }
    for (int p = 0; p < 2; ++p) apairs_plan_destroy(plans[p]);
    printf("%d threads x %d executions of one plan: %s\n", THREADS, REPEATS,
           bad ? "MISMATCH or failure" : "bit-identical to the single-threaded run");
    return bad ? 1 : 0;
}
