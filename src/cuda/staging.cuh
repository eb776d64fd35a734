// Staging of the caller's arrays for one execute call on the CUDA backend, shared by
// every family. Each array is declared with its geometry (rows of `width` bytes, `pitch`
// bytes apart): device memory of the plan's device is used in place; host memory
// (pageable or pinned) is copied, packed, through a device buffer allocated in stream
// order. Declaring classifies the pointer (INVALID_POINTER for memory of another
// device) and allocates no device memory (only its entry in the list), so every pointer
// is checked before any work; stage() then makes every allocation of the staging and
// queues the copies in, finish() allocates nothing, queues the copies out and, when
// anything was staged, waits for the stream, so the caller's host arrays are final when
// execute returns. An array declared twice as an input with the same geometry (B = A)
// is staged once. If anything throws before finish(), the destructor drains the stream:
// no copy from or to the caller's arrays is still running when the error is reported.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "cuda/runtime.cuh"

namespace apairs::cuda {

class Staging {
public:
    // Where the kernel finds an array: a device pointer and its pitch in bytes.
    struct View {
        void *ptr = nullptr;
        int64_t pitch = 0;
    };

    Staging(int device, cudaStream_t stream) : device_(device), stream_(stream) {}
    ~Staging();
    Staging(const Staging &) = delete;
    Staging &operator=(const Staging &) = delete;

    // An array the kernel reads; returns its slot.
    int in(const void *p, int64_t rows, int64_t width, int64_t pitch, const char *name);
    // An array the kernel writes (read_first: reads too, e.g. C with beta != 0).
    int out(void *p, int64_t rows, int64_t width, int64_t pitch, const char *name, bool read_first = false);

    // Allocate buffers, queue the copies in. Every allocation of the staging is made here,
    // so that a failed one (OUT_OF_MEMORY) comes before any output is written.
    void stage();
    View view(int slot) const;    // after stage()
    // Queue the copies out; when anything was staged, wait for the stream (wait = false:
    // the caller synchronizes the stream itself before the host arrays are used).
    void finish(bool wait = true);

    bool any_staged() const;

private:
    struct Array {
        const char *name;
        void *user;
        int64_t rows, width, pitch;
        bool host, output, read_first;
        std::unique_ptr<StreamBuffer> buffer;
    };
    int declare(void *p, int64_t rows, int64_t width, int64_t pitch, const char *name, bool output,
                bool read_first);

    int device_;
    cudaStream_t stream_;
    std::vector<Array> arrays_;
    bool started_ = false, finished_ = false;
};

}  // namespace apairs::cuda
