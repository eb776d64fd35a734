// The genotype family: a validated problem (apairs_plan_create_genotype), and the
// validation of the packing and weighting functions.
#pragma once

#include <cstdint>
#include <vector>

#include "common/error.hpp"

namespace apairs::genotype {

struct Problem {
    int32_t metric = 0;   // apairs_genotype_metric_e
    int32_t missing = 0;  // apairs_genotype_missing_e for the PLINK metrics, else 0
    int64_t n1 = 0, n2 = 0, d = 0, lda = 0, ldb = 0, ldd = 0;
    std::vector<uint32_t> weights;  // WEIGHTED: d weights
    uint64_t weight_sum = 0;        // their sum, < 2^32

    bool plink() const { return metric >= APAIRS_GENOTYPE_DISTANCE; }
    bool weighted() const { return missing == APAIRS_GENOTYPE_MISSING_WEIGHTED; }
    size_t out_size() const { return plink() ? 8 : 4; }
    // The PLINK metrics' constants (metrics.hpp): num = d or W, half = 0.5 / d.
    double num() const { return weighted() ? double(weight_sum) : double(d); }
    double half() const { return 0.5 / double(d); }
};

inline int64_t packed_bytes(int64_t d) { return d / 4 + (d % 4 != 0); }

// The largest d: the counts (up to 2 d) stay exact in int32.
constexpr int64_t kMaxVariants = (int64_t(1) << 30) - 1;

const char *metric_name(int32_t metric);  // "hamming", ..., nullptr when unknown

// Validates the arguments of apairs_plan_create_genotype as apairs.h documents them
// (weights may be NULL only when not WEIGHTED); throws Error.
Problem make_problem(int32_t metric, int32_t missing, int64_t n1, int64_t n2, int64_t d, int64_t lda,
                     int64_t ldb, int64_t ldd, const uint32_t *weights);

// Shape checks shared by pack and missing_weights: n, d >= 1, d <= kMaxVariants,
// ld >= min_ld, n * ld bytes addressable.
void require_rows(int64_t n, int64_t d, int64_t ld, int64_t min_ld, const char *ld_name);

}  // namespace apairs::genotype
