// Shared by every part of the core: the host/device function marker, the library's
// exception type, the argument checks every family's validation uses, and checked
// 64-bit size arithmetic.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "apairs.h"
#include "common/hd.hpp"

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

template <class... Args>
[[noreturn]] void fail(apairs_status_t status, fmt::format_string<Args...> f, Args &&...args) {
    throw Error(status, fmt::format(f, std::forward<Args>(args)...));
}

inline void require(const void *p, const char *name) {
    if (p == nullptr) fail(APAIRS_ERROR_NULL_POINTER, "{} is NULL", name);
}

inline void require_at_least(int64_t v, int64_t min, const char *name) {
    if (v < min) fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected >= {}", name, v, min);
}

// rows * ld elements of elem bytes must fit in int64 (and hence be addressable).
inline void require_fits(int64_t rows, int64_t ld, size_t elem, const char *rows_name, const char *ld_name) {
    int64_t n = 0, bytes = 0;
    if (!mul_ok(rows, ld, &n) || !mul_ok(n, static_cast<int64_t>(elem), &bytes))
        fail(APAIRS_ERROR_OVERFLOW, "{} * {} = {} * {} elements of {} bytes overflow 64 bits", rows_name,
             ld_name, rows, ld, elem);
}

}  // namespace apairs
