// The CUDA backend as the rest of the core sees it: plain C++, no CUDA types, so that
// everything outside src/cuda/ and the families' .cu files compiles without the toolkit.
// Only built when the `cuda` option is on.
#pragma once

#include "common/occupancy.hpp"

namespace apairs::cuda {

// Number of usable devices; 0 when the driver or any device is missing.
int device_count();

// Throws BACKEND_UNAVAILABLE unless `device` is a usable device ordinal.
void require_device(int device);

// True when ptr is device memory (not managed, not host): the host backend refuses it.
bool is_device_pointer(const void *ptr);

// The device's limits as the occupancy estimator wants them.
DeviceLimits device_limits(int device);

}  // namespace apairs::cuda
