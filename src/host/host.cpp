#include "host/host.hpp"

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "common/error.hpp"
#if APAIRS_HAVE_CUDA
#include "cuda/device.hpp"
#endif

namespace apairs::host {

int resolve_threads(int requested) {
#if defined(_OPENMP)
    // Inside a caller's active parallel region that allows no further active level
    // (nesting off, OpenMP's default) the library's own regions run one thread: say so,
    // so that no per-thread scratch is made for threads that never run (a histogram's
    // 32 MiB a thread, for each of the caller's threads).
    if (omp_get_active_level() >= omp_get_max_active_levels()) return 1;
    return requested > 0 ? requested : omp_get_max_threads();
#else
    (void)requested;
    return 1;
#endif
}

int thread_index() {
#if defined(_OPENMP)
    return omp_get_thread_num();
#else
    return 0;
#endif
}

void require_host_memory(const void *const *arrays, const char *const *names, int count, const char *why) {
#if APAIRS_HAVE_CUDA
    for (int k = 0; k < count; ++k)
        if (cuda::is_device_pointer(arrays[k]))
            fail(APAIRS_ERROR_INVALID_POINTER, "{} is CUDA device memory, but {}", names[k], why);
#else
    (void)arrays, (void)names, (void)count, (void)why;
#endif
}

}  // namespace apairs::host
