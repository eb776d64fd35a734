// The host backend's shared pieces, used by every family's host engine.
#pragma once

namespace apairs::host {

// The number of threads a request resolves to (0 = OpenMP's default; 1 without OpenMP,
// and 1 inside a caller's parallel region where no nested region can be active).
int resolve_threads(int requested);

// The calling thread's index within the innermost OpenMP parallel region (0 outside one,
// or without OpenMP): the slot of the per-thread scratch allocated before the region
// (nothing may throw inside a region: an exception escaping it ends the process).
int thread_index();

// Throws INVALID_POINTER when one of the `count` arrays is CUDA device memory (a CUDA
// build asks the runtime; without CUDA nothing can be told and nothing is checked);
// `why` ends the message.
void require_host_memory(const void *const *arrays, const char *const *names, int count,
                         const char *why = "the plan's backend is host");

}  // namespace apairs::host
