// Output stages: what happens to each finished distance D[i][j].
//
// An engine hands every finished value to an output policy O:
//   typename O::Shared                       per-block scratch (GPU: in shared memory;
//                                            host: one per thread), for reduced outputs
//   void begin(Shared&, int tid, int nthreads)   before the block's first emit
//   void emit(Shared&, int64_t i, int64_t j, value)
//   void end(Shared&, int tid, int nthreads)     after the block's last emit
// The engine puts a barrier between begin/emit and emit/end. Today there is the full
// matrix; pair counts within radii and distance histograms become new policies (a
// Shared histogram, end() flushing it with atomics) without touching metrics or tiles.
#pragma once

#include <cstdint>

#include "common/error.hpp"

namespace apairs::output {

template <class T>
struct FullMatrix {
    using value_t = T;
    struct Shared {};
    T *D;
    int64_t ldd;
    APAIRS_HD void begin(Shared &, int, int) const {}
    APAIRS_HD void emit(Shared &, int64_t i, int64_t j, T v) const { D[i * ldd + j] = v; }
    APAIRS_HD void end(Shared &, int, int) const {}
};

}  // namespace apairs::output
