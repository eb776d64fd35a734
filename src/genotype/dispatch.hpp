// Maps (metric, missing) to the metric functor: every engine calls dispatch() with a
// generic callable, f(M{...}).
#pragma once

#include <cstdint>

#include "apairs.h"
#include "genotype/metrics.hpp"

namespace apairs::genotype {

// Throws INTERNAL (host.cpp). Out of line, so that the kernel files, built for other
// instruction sets, emit no inline code that another file could end up sharing.
[[noreturn]] void unhandled_metric(int32_t metric_id);

// num, half: the PLINK metrics' constants (unused by the counting kernels).
template <class F>
void dispatch(int32_t metric_id, int32_t missing, double num, double half, F &&f) {
    using namespace metric;
    const bool w = missing == APAIRS_GENOTYPE_MISSING_WEIGHTED;
    switch (metric_id) {
    case APAIRS_GENOTYPE_HAMMING: return f(Hamming{});
    case APAIRS_GENOTYPE_ALLELE_COUNT: return f(AlleleCount{});
    case APAIRS_GENOTYPE_IBS0: return f(Ibs0{});
    case APAIRS_GENOTYPE_IBS1: return f(Ibs1{});
    case APAIRS_GENOTYPE_IBS2: return f(Ibs2{});
    case APAIRS_GENOTYPE_NONMISSING: return f(NonMissing{});
    case APAIRS_GENOTYPE_DISTANCE:
        return w ? f(Plink<0, true>{num, half}) : f(Plink<0, false>{num, half});
    case APAIRS_GENOTYPE_IBS: return w ? f(Plink<1, true>{num, half}) : f(Plink<1, false>{num, half});
    case APAIRS_GENOTYPE_ONE_MINUS_IBS:
        return w ? f(Plink<2, true>{num, half}) : f(Plink<2, false>{num, half});
    }
    unhandled_metric(metric_id);
}

}  // namespace apairs::genotype
