// What the fuzz harnesses share: how a contract violation is reported (abort after a
// message, so that libFuzzer keeps the input), and the reader of the input's compact
// tagged encoding of integers and doubles. Each harness keeps its own tables of special
// values, biased towards its API's edges (fuzz_plan.cpp, fuzz_batched.cpp).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace fuzz {

// The harness's name, for the violation message: defined by each harness.
extern const char *const kHarness;

[[noreturn]] inline void violation(const char *what, const std::string &detail = "") {
    std::fprintf(stderr, "%s: CONTRACT VIOLATION: %s%s%s\n", kHarness, what, detail.empty() ? "" : ": ",
                 detail.c_str());
    std::fflush(stderr);
    std::abort();
}

inline std::string fmt_detail() { return ""; }
__attribute__((format(printf, 1, 2))) inline std::string fmt_detail(const char *f, ...) {
    char buf[1024];
    std::va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

#define REQUIRE(cond, ...)                                                           \
    do {                                                                             \
        if (!(cond)) ::fuzz::violation(#cond, ::fuzz::fmt_detail(__VA_ARGS__));      \
    } while (0)

inline double bits_to_double(uint64_t b) {
    double d;
    std::memcpy(&d, &b, 8);
    return d;
}

// The input, little-endian, read in order; reading past the end yields zero bytes.
struct Reader {
    const uint8_t *p;
    size_t n;

    bool empty() const { return n == 0; }
    uint8_t u8() {
        if (n == 0) return 0;
        --n;
        return *p++;
    }
    uint64_t raw(int bytes) {
        uint64_t v = 0;
        for (int k = 0; k < bytes; ++k) v |= uint64_t(u8()) << (8 * k);
        return v;
    }
    // Tag byte t: t < 0xE0 gives t - 16 (-16 .. 207); 0xE0 <= t < 0xFF picks an entry of
    // `special`; 0xFF is followed by 8 raw bytes.
    int64_t i64(const int64_t (&special)[31]) {
        const uint8_t t = u8();
        if (t < 0xE0) return int64_t(t) - 16;
        if (t < 0xFF) return special[t - 0xE0];
        return static_cast<int64_t>(raw(8));
    }
    // As i64, but 0xFF is followed by 4 raw bytes.
    int32_t i32(const int32_t (&special)[31]) {
        const uint8_t t = u8();
        if (t < 0xE0) return int32_t(t) - 16;
        if (t < 0xFF) return special[t - 0xE0];
        return static_cast<int32_t>(static_cast<uint32_t>(raw(4)));
    }
    // Tag byte t: t < 0xC0 gives (t - 64) / 8 (-8 .. 15.875 in eighths); 0xC0 <= t < 0xFF
    // gives special(t - 0xC0); 0xFF is followed by 8 raw bytes (the bits).
    template <class Special>
    double f64(Special special) {
        const uint8_t t = u8();
        if (t < 0xC0) return (int(t) - 64) / 8.0;
        if (t < 0xFF) return special(t - 0xC0);
        return bits_to_double(raw(8));
    }
};

}  // namespace fuzz
