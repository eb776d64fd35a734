// How a batched plan runs on the CUDA backend, for every op: arrays in device memory are
// used in place, one launch for the whole batch; arrays in host memory are staged
// through device buffers in chunks of elements, the chunks spread over three streams so
// that one chunk's copies overlap another's kernels. So a host batch larger than device
// memory runs, within a bounded amount of it (APAIRS_OPTION_STAGING_BYTES). Plain C++
// (plan.cpp calls it); built only with the `cuda` option.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "batched/layout.hpp"

namespace apairs::batched {

// One array of an op, in the order of its execute function.
struct Operand {
    const char *name;
    Matrix m;     // its geometry (rows x cols per element, ld, stride, layout)
    size_t elem;  // bytes per entry
    bool read, write;
};

// Queues the op's kernel(s) on `stream` for elements [0, batch) of the device arrays
// `ptrs`, laid out as `mats` (a chunk's batch and, for a staged SoA operand, its
// batch stride differ from the plan's).
using ChunkLaunch = std::function<void(int64_t batch, const Matrix *mats, void *const *ptrs, void *stream)>;

// Runs the op: device arrays in place, host arrays staged `chunk` elements at a time (the
// plan's staging_chunk). Returns after queuing when every array is in device memory, else
// when the host arrays are written. At most kMaxOperands operands (gesv: A, ipiv, B, info).
constexpr int kMaxOperands = 4;
void execute_cuda(int device, void *stream, int64_t chunk, int64_t batch, const Operand *ops, int count,
                  const void *const *arrays, const ChunkLaunch &launch);

// The chunk (elements) for host arrays, chosen once by the plan as if every operand were
// staged: staging_bytes of device memory (0: the default, 192 MiB or a quarter of the free
// memory if less) hold three chunks in flight.
int64_t staging_chunk(int device, int64_t staging_bytes, int64_t batch, const Operand *ops, int count);

}  // namespace apairs::batched
