// Which backend the numerical suites run on: the same test binary runs once for the
// host (suite `unit`) and once for CUDA (suite `gpu`, APAIRS_TEST_BACKEND=cuda).
#pragma once

#include <cstdint>

namespace test {
int32_t backend();            // APAIRS_BACKEND_HOST or APAIRS_BACKEND_CUDA
const char *backend_name();   // "host" or "cuda"
}  // namespace test
