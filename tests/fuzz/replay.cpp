// A plain driver for builds without libFuzzer: runs LLVMFuzzerTestOneInput once on
// every file named on the command line, and on every regular file under each directory
// named (recursively, in sorted order). A finding aborts the process, as it does under
// libFuzzer, so the seed corpus replays as an ordinary regression test.
//
//   fuzz_plan tests/fuzz/corpus/plan [more files or directories...]
//
// Exits 1 when a path does not exist or when no input was found at all (a test that
// replays nothing proves nothing).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool read_file(const fs::path &p, std::vector<uint8_t> &out) {
    std::ifstream f(p, std::ios::binary);
    if (!f) return false;
    out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    return !f.bad();
}

int main(int argc, char **argv) {
    std::vector<fs::path> files;
    for (int k = 1; k < argc; ++k) {
        const fs::path arg = argv[k];
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            for (const auto &e : fs::recursive_directory_iterator(arg, ec))
                if (e.is_regular_file()) files.push_back(e.path());
            if (ec) {
                std::fprintf(stderr, "replay: %s: %s\n", argv[k], ec.message().c_str());
                return 1;
            }
        } else if (fs::is_regular_file(arg, ec)) {
            files.push_back(arg);
        } else {
            std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[k]);
            return 1;
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "usage: %s FILE_OR_DIR... (found no input to replay)\n", argv[0]);
        return 1;
    }
    std::vector<uint8_t> buf;
    for (const fs::path &p : files) {
        if (!read_file(p, buf)) {
            std::fprintf(stderr, "replay: cannot read %s\n", p.c_str());
            return 1;
        }
        // Print before running, so that the input of a crash is the last line shown.
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", p.c_str(), buf.size());
        std::fflush(stderr);
        // A copy of exactly the input's size, so that a harness reading past the end of
        // its input is caught by a sanitizer, as under libFuzzer.
        std::vector<uint8_t> exact(buf.begin(), buf.end());
        LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
    }
    std::printf("replay: %zu inputs, no finding\n", files.size());
    return 0;
}
