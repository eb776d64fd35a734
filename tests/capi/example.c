/* Euclidean (L2) distances between the rows of A (5 x 3) and B (4 x 3), row-major. */
#include <math.h>
#include <stdio.h>
#include "apairs.h"

#define CHECK(call) do { apairs_status_t s_ = (call); if (s_ != APAIRS_SUCCESS) { \
    fprintf(stderr, "%s: %s\n", apairs_status_string(s_), apairs_last_error()); \
    return 1; } } while (0)

enum { N1 = 5, N2 = 4, D = 3 };

int main(void) {
    double A[N1][D], B[N2][D], Dist[N1][N2];
    for (int k = 0; k < D; ++k) {
        for (int i = 0; i < N1; ++i) A[i][k] = sin(3.0 * i + k);
        for (int j = 0; j < N2; ++j) B[j][k] = cos(2.0 * j - k);
    }
    apairs_context_t ctx = NULL;
    apairs_plan_t plan = NULL;
    CHECK(apairs_context_create(&ctx, APAIRS_BACKEND_AUTO, 0));
    CHECK(apairs_plan_create_pairwise(&plan, ctx, APAIRS_METRIC_L2, 0.0, APAIRS_DTYPE_F64,
                                      N1, N2, D, /*lda=*/D, /*ldb=*/D, /*ldd=*/N2));
    CHECK(apairs_plan_execute(plan, A, B, Dist));

    char desc[1024];
    CHECK(apairs_plan_describe(plan, desc, sizeof desc, NULL));
    printf("%s\n", desc);
    for (int i = 0; i < N1; ++i)
        for (int j = 0; j < N2; ++j) {
            double s = 0;
            for (int k = 0; k < D; ++k) s += (A[i][k] - B[j][k]) * (A[i][k] - B[j][k]);
            if (fabs(Dist[i][j] - sqrt(s)) > 1e-12 * (1 + sqrt(s))) {
                fprintf(stderr, "D[%d][%d] = %.17g, expected %.17g\n", i, j, Dist[i][j], sqrt(s));
                return 1;
            }
        }
    CHECK(apairs_plan_destroy(plan));
    CHECK(apairs_context_destroy(ctx));
    printf("ok\n");
    return 0;
}
