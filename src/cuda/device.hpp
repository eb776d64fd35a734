// The CUDA backend as the rest of the core sees it: plain C++, no CUDA types, so that
// everything outside src/cuda/ and the families' .cu files compiles without the toolkit.
// Only built when the `cuda` option is on.
#pragma once

#include <memory>

#include "common/occupancy.hpp"

namespace apairs::cuda {

// Number of usable devices; 0 when the driver or any device is missing.
int device_count();

// Throws BACKEND_UNAVAILABLE unless `device` is a usable device ordinal.
void require_device(int device);

// True when ptr is device memory (not managed, not host): the host backend refuses it.
bool is_device_pointer(const void *ptr);
// The device whose memory ptr is, or -1 where it is not device memory.
int device_of_pointer(const void *ptr);

// A hold on the library's work-buffer pool of `device` (the stream-ordered pool that
// every StreamBuffer on the device comes from): while any hold lives, the pool keeps
// the memory that executes free (about the peak that executes on the device have needed
// at once) for the next execute, instead of unmapping it at each synchronisation and
// mapping it again (about 0.1 ms for the genotype engine's 17 MB of planes, 1 ms for
// the pairwise engine's copies at d = 40000); when the last hold goes, the pool returns
// what it keeps to the driver.
std::shared_ptr<void> hold_pool(int device);

// The device's limits as the occupancy estimator wants them.
DeviceLimits device_limits(int device);

}  // namespace apairs::cuda
