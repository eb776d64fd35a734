// Test main: picks the backend from APAIRS_TEST_BACKEND (host | cuda) and exits with 77
// (Meson's "skipped") when CUDA is asked for but this build or machine has no device.
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "apairs.h"
#include "backend.hpp"

namespace {
int32_t g_backend = APAIRS_BACKEND_HOST;
}

int32_t test::backend() { return g_backend; }
const char *test::backend_name() { return g_backend == APAIRS_BACKEND_CUDA ? "cuda" : "host"; }

int main(int argc, char **argv) {
    const char *env = std::getenv("APAIRS_TEST_BACKEND");
    if (env && std::strcmp(env, "cuda") == 0) {
        int32_t n = 0;
        if (apairs_cuda_device_count(&n) != APAIRS_SUCCESS || n == 0) {
            std::printf("no CUDA device (or built without CUDA): skipping the gpu suite\n");
            return 77;
        }
        g_backend = APAIRS_BACKEND_CUDA;
    } else if (env && std::strcmp(env, "host") != 0) {
        std::fprintf(stderr, "APAIRS_TEST_BACKEND=%s: expected host or cuda\n", env);
        return 2;
    }
    std::printf("libapairs %s, testing backend %s\n", apairs_version_string(), test::backend_name());
    return Catch::Session().run(argc, argv);
}
