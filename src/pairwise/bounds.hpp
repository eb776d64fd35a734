// The accuracy apairs.h promises for one entry of D, written once: the unit tests hold
// every result to it and apairs_bench's spot check reports against it. Header-only,
// plain C++, nothing from the library: a program that includes it links nothing.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "apairs.h"

namespace apairs::pairwise {

// The largest |computed - exact| apairs.h allows for one entry:
//   metric   the metric whose bound applies (LP with p = 1, 2 or inf takes the L1, L2
//            or LINF path, and their bounds)
//   p        LP's exponent
//   u        the unit roundoff of the element type (2^-24 F32, 2^-53 F64)
//   d        the number of dimensions
//   value    the exact distance
//   scale    DOT: sum_k |a_k b_k|
//   max_log  LP: max_k |ln|a_k - b_k|| over the k with a_k != b_k
//   tf32     F32 DOT and COSINE under APAIRS_OPTION_TF32 (on CUDA)
// 0 means exact (HAMMING).
inline long double error_bound(int32_t metric, long double p, long double u, int64_t d, long double value,
                               long double scale = 0, long double max_log = 0, bool tf32 = false) {
    const long double dd = static_cast<long double>(d), v = std::fabs(value);
    switch (metric) {
    case APAIRS_METRIC_L1:
    case APAIRS_METRIC_L2:
    case APAIRS_METRIC_SQEUCLIDEAN: {
        // The engines' three-level blocked order: no term passes through more than b
        // additions (problem.hpp, kSliceDims and kSlicesPerGroup).
        const long double slices = std::ceil(dd / 32), groups = std::ceil(dd / 1024);
        const long double b = std::min(dd, 32.0L) + std::min(slices, 32.0L) + groups;
        return (std::min(dd, b) + 4) * u * v;
    }
    case APAIRS_METRIC_LP: {
        // The log terms: p and 1/p are rounded to the element type. F32 (u > 2^-30) also
        // allows CUDA's step 2^(p log2 t) by the lg2 and ex2 approximations (metrics.hpp,
        // pow_term): about (3.5 + 2 |ln t| + 3 / p) u more after the final root.
        const long double log_value = (v != 0 && std::isfinite(v)) ? std::fabs(std::log(v)) : 0;
        if (u > 0x1p-30L) return ((dd + p + 20) / std::min(p, 1.0L) + 3 * max_log + log_value) * u * v;
        return ((dd + p + 12) / std::min(p, 1.0L) + max_log + log_value) * u * v;
    }
    case APAIRS_METRIC_LINF: return u * v;
    // TF32: each input keeps 10 fraction bits (a product errs by under 2^-9 + 2^-20 of
    // itself), the tensor cores' float sums may truncate (2 u an addition, g for the
    // whole sum, applied to products already off by up to 1 + 2^-9 + 2^-20 < 1.004).
    case APAIRS_METRIC_DOT: {
        if (!tf32) return (dd + 4) * u * scale;
        const long double g = 2 * (dd + 4) * u;
        return (0x1p-9L + 0x1p-19L + 1.004L * g / (1 - g)) * scale;
    }
    case APAIRS_METRIC_COSINE: {
        if (!tf32) return (2 * dd + 8) * u;
        const long double g = 2 * (dd + 4) * u;
        return 0x1p-9L + 0x1p-19L + 2.008L * g / (1 - 2 * g);
    }
    default: return 0;
    }
}

}  // namespace apairs::pairwise
