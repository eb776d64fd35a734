// The host backend's shared pieces, used by every family's host engine.
#pragma once

namespace apairs::host {

// The number of threads a request resolves to (0 = OpenMP's default; 1 without OpenMP).
int resolve_threads(int requested);

// Throws INVALID_POINTER when one of the `count` arrays is CUDA device memory (a CUDA
// build asks the runtime; without CUDA nothing can be told and nothing is checked).
void require_host_memory(const void *const *arrays, const char *const *names, int count);

}  // namespace apairs::host
