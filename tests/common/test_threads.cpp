// The host backend's thread count inside a caller's own OpenMP parallel region: where no
// nested region can be active (OpenMP's default), the library's regions run one thread,
// so a call asks for one (per-thread scratch is sized by the count: T callers each
// sizing it for T threads took T^2 histograms' memory).
#include <string>
#include <vector>
#if defined(_OPENMP)
#include <omp.h>
#endif

#include "apairs.h"
#include "catch.hpp"
#include "host/host.hpp"

using apairs::host::resolve_threads;

TEST_CASE("host threads: one inside a caller's parallel region that allows no nesting", "[threads]") {
    CHECK(resolve_threads(3) == 3);
#if defined(_OPENMP)
    apairs_context_t ctx = nullptr;
    REQUIRE(apairs_context_create(&ctx, APAIRS_BACKEND_HOST, 0) == APAIRS_SUCCESS);
    REQUIRE(apairs_context_set_option(ctx, APAIRS_OPTION_HOST_THREADS, 4) == APAIRS_SUCCESS);
    const bool nested = omp_get_max_active_levels() > 1;  // (OMP_MAX_ACTIVE_LEVELS set by the caller)
    std::vector<int> zero(2, -1), five(2, -1);
    std::vector<std::string> text(2);
#pragma omp parallel num_threads(2)
    {
        const int t = omp_get_thread_num();
        if (omp_get_num_threads() == 2) {
            zero[size_t(t)] = resolve_threads(0), five[size_t(t)] = resolve_threads(5);
            apairs_plan_t plan = nullptr;
            char buf[4096] = "";
            if (apairs_plan_create_pairwise(&plan, ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, 3, 3, 2, 2, 2, 3) ==
                    APAIRS_SUCCESS &&
                apairs_plan_describe(plan, buf, sizeof buf, nullptr) == APAIRS_SUCCESS)
                text[size_t(t)] = buf;
            apairs_plan_destroy(plan);
        }
    }
    apairs_context_destroy(ctx);
    if (zero[0] < 0) {
        WARN("the runtime gave the region one thread: nothing to check");
        return;
    }
    for (int t = 0; t < 2; ++t) {
        INFO("thread " << t << ": " << text[size_t(t)]);
        CHECK(zero[size_t(t)] == (nested ? omp_get_max_threads() : 1));
        CHECK(five[size_t(t)] == (nested ? 5 : 1));
        if (!nested) CHECK(text[size_t(t)].find("threads=1 ") != std::string::npos);
    }
#endif
}
