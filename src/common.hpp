// Shared by every part of the core: the host/device function marker, the
// library's exception type, and checked 64-bit size arithmetic.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "apairs.h"

#if defined(__CUDACC__)
#define APAIRS_HD __host__ __device__ __forceinline__
#else
#define APAIRS_HD inline
#endif

namespace apairs {

// Every failure inside the core is an Error carrying the status the C boundary
// returns and the message apairs_last_error() shows.
struct Error : std::runtime_error {
    apairs_status_t status;
    Error(apairs_status_t s, const std::string &msg) : std::runtime_error(msg), status(s) {}
};

// *out = a * b; false when that overflows int64.
inline bool mul_ok(int64_t a, int64_t b, int64_t *out) {
    return !__builtin_mul_overflow(a, b, out);
}

}  // namespace apairs
