// Checks shared by the [cuda] core tests (pairwise, batched, twobody, genotype): a CUDA
// runtime call and an apairs call, each required to succeed, its message shown if not.
#pragma once

#include <cuda_runtime.h>

#include "apairs.h"
#include "catch.hpp"

namespace test {

inline void cuda_ok(cudaError_t e) {
    INFO(cudaGetErrorString(e));
    REQUIRE(e == cudaSuccess);
}

inline void api_ok(apairs_status_t s) {
    INFO(apairs_status_string(s) << ": " << apairs_last_error());
    REQUIRE(s == APAIRS_SUCCESS);
}

}  // namespace test
