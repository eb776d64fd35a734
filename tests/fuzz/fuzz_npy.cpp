// Fuzz harness for tools/npy.hpp: the input is a .npy file, read through fmemopen.
//
// npy::Error is the expected way to refuse a bad file. A finding (abort) is:
// - std::bad_alloc (or npy::OutOfMemory, as npy::read reports a bad_alloc) or any other
//   exception: inputs are small, so a reader that sizes its
//   allocation by the file's claim instead of by the bytes it has is at fault;
// - a successful read that breaks the array's invariants: a known type, rows and cols
//   >= 1, rows * cols * itemsize without overflow and equal to bytes(), no more bytes
//   than the input holds after its header, data equal to those bytes;
// - a round trip through npy::write and npy::read (to a temporary file) that does not
//   give back the same array, or a written file whose header is not padded to 64 bytes.
// - a different outcome when the same bytes come through a stream that cannot seek (a
//   pipe: fopencookie without a seek function), where the reader takes its other path
//   (reading in growing chunks instead of checking the size up front).
// Crashes and overruns are the sanitizers' to report.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include <sys/types.h>
#include <unistd.h>

#include "npy.hpp"

namespace {

[[noreturn]] void finding(const std::string &what) {
    std::fprintf(stderr, "fuzz_npy: FINDING: %s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

// A read-only stream over a buffer that cannot seek or tell its position, like a pipe.
struct PipeCookie {
    const uint8_t *p;
    std::size_t left;
};

ssize_t pipe_read(void *cookie, char *buf, size_t n) {
    auto *c = static_cast<PipeCookie *>(cookie);
    // Hand out at most 3000 bytes a call, as a pipe hands out what it has.
    const std::size_t k = std::min(std::min(n, c->left), std::size_t(3000));
    std::memcpy(buf, c->p, k);
    c->p += k;
    c->left -= k;
    return ssize_t(k);
}

std::FILE *open_pipe(PipeCookie *c) {
    cookie_io_functions_t io{};
    io.read = pipe_read;
    return fopencookie(c, "rb", io);
}

constexpr std::size_t kRoundTripMax = std::size_t(1) << 16;

// Where the data of a well-formed input starts: magic, version, length, header.
bool data_offset(const uint8_t *p, std::size_t n, std::size_t *off) {
    if (n < 10) return false;
    if (p[6] == 1) {
        *off = 10 + (std::size_t(p[8]) | std::size_t(p[9]) << 8);
        return true;
    }
    if (n < 12 || (p[6] != 2 && p[6] != 3)) return false;
    *off = 12 + (std::size_t(p[8]) | std::size_t(p[9]) << 8 | std::size_t(p[10]) << 16 |
                 std::size_t(p[11]) << 24);
    return true;
}

std::string temp_path() {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/fuzz_npy_roundtrip_" + std::to_string(getpid()) + ".npy";
}

void check_array(const npy::Array &a, const uint8_t *data, std::size_t size) {
    if (a.type != npy::Type::F32 && a.type != npy::Type::F64 && a.type != npy::Type::U8)
        finding("read returned an array of type " + std::string(npy::name_of(a.type)));
    if (a.rows < 1 || a.cols < 1)
        finding("read returned a " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + " array");
    const std::size_t item = npy::itemsize_of(a.type);
    std::size_t n = 0, bytes = 0;
    if (__builtin_mul_overflow(std::size_t(a.rows), std::size_t(a.cols), &n) ||
        __builtin_mul_overflow(n, item, &bytes))
        finding("read returned " + std::to_string(a.rows) + " x " + std::to_string(a.cols) +
                " elements, whose byte count overflows size_t");
    if (a.bytes() != bytes) finding("bytes() = " + std::to_string(a.bytes()) + ", expected " + std::to_string(bytes));
    std::size_t off = 0;
    if (!data_offset(data, size, &off)) finding("read accepted an input without a valid preamble");
    if (off > size || bytes > size - off)
        finding("read returned " + std::to_string(bytes) + " bytes of data from an input of " + std::to_string(size) +
                " bytes whose header ends at " + std::to_string(off));
    if (a.data() == nullptr) finding("read returned no data pointer");
    if (std::memcmp(a.data(), data + off, bytes) != 0) finding("the array's data differ from the file's");

    if (bytes > kRoundTripMax) return;
    const std::string path = temp_path();
    npy::write(path, a.type, a.rows, a.cols, a.data());
    std::FILE *fp = std::fopen(path.c_str(), "rb");
    if (!fp) finding("cannot reopen " + path);
    std::fseek(fp, 0, SEEK_END);
    const long file_size = std::ftell(fp);
    std::rewind(fp);
    npy::Array b;
    try {
        b = npy::read(fp, path);
    } catch (const npy::Error &e) {
        std::fclose(fp);
        std::remove(path.c_str());
        finding(std::string("npy::read refused what npy::write wrote: ") + e.what());
    }
    std::fclose(fp);
    std::remove(path.c_str());
    if (b.type != a.type || b.rows != a.rows || b.cols != a.cols || b.bytes() != a.bytes() ||
        std::memcmp(a.data(), b.data(), bytes) != 0)
        finding("round trip through npy::write changed the array");
    if (file_size < 0 || std::size_t(file_size) < bytes || (std::size_t(file_size) - bytes) % 64 != 0)
        finding("npy::write: header of " + std::to_string(file_size - long(bytes)) + " bytes, not a multiple of 64");
}

// Reads the input from fp: true and the array, or false when npy::Error refused it.
bool read_stream(std::FILE *fp, std::size_t size, npy::Array &out) {
    if (!fp) finding("cannot open a stream over the input");
    try {
        out = npy::read(fp, "fuzz.npy");
        std::fclose(fp);
        return true;
    } catch (const npy::OutOfMemory &e) {  // npy::read's std::bad_alloc: the same finding as below
        finding("out of host memory on an input of " + std::to_string(size) + " bytes (" + e.what() +
                "): the reader allocates what the header claims instead of what the file holds");
    } catch (const npy::Error &e) {
        std::fclose(fp);
        if (std::strlen(e.what()) == 0) finding("npy::Error without a message");
        return false;
    } catch (const std::bad_alloc &) {
        finding("std::bad_alloc on an input of " + std::to_string(size) +
                " bytes: the reader allocates what the header claims instead of what the file holds");
    } catch (const std::exception &e) {
        finding(std::string("unexpected exception: ") + e.what());
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;  // fmemopen refuses an empty buffer
    std::vector<uint8_t> copy(data, data + size);
    npy::Array a, b;
    const bool ok = read_stream(fmemopen(copy.data(), copy.size(), "rb"), size, a);
    PipeCookie cookie{data, size};
    const bool ok_pipe = read_stream(open_pipe(&cookie), size, b);
    if (ok != ok_pipe)
        finding(std::string("a seekable stream ") + (ok ? "gave an array" : "was refused") + " but a pipe " +
                (ok_pipe ? "gave an array" : "was refused"));
    if (!ok) return 0;
    if (a.type != b.type || a.rows != b.rows || a.cols != b.cols)
        finding("a seekable stream and a pipe gave different arrays");
    check_array(a, data, size);
    check_array(b, data, size);
    return 0;
}
