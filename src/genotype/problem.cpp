#include "genotype/problem.hpp"

namespace apairs::genotype {

const char *metric_name(int32_t metric) {
    switch (metric) {
    case APAIRS_GENOTYPE_HAMMING: return "hamming";
    case APAIRS_GENOTYPE_ALLELE_COUNT: return "allele-count";
    case APAIRS_GENOTYPE_IBS0: return "ibs0";
    case APAIRS_GENOTYPE_IBS1: return "ibs1";
    case APAIRS_GENOTYPE_IBS2: return "ibs2";
    case APAIRS_GENOTYPE_NONMISSING: return "nonmissing";
    case APAIRS_GENOTYPE_DISTANCE: return "distance";
    case APAIRS_GENOTYPE_IBS: return "ibs";
    case APAIRS_GENOTYPE_ONE_MINUS_IBS: return "1-ibs";
    }
    return nullptr;
}

void require_rows(int64_t n, int64_t d, int64_t ld, int64_t min_ld, const char *ld_name) {
    require_at_least(n, 1, "n");
    require_at_least(d, 1, "d");
    if (d > kMaxVariants)
        fail(APAIRS_ERROR_INVALID_VALUE, "d = {}: expected d < 2^30 (the counts must stay exact in int32)", d);
    if (ld < min_ld) fail(APAIRS_ERROR_INVALID_VALUE, "{} = {}: expected {} >= {}", ld_name, ld, ld_name, min_ld);
    require_fits(n, ld, 1, "n", ld_name);
}

Problem make_problem(int32_t metric, int32_t missing, int64_t n1, int64_t n2, int64_t d, int64_t lda,
                     int64_t ldb, int64_t ldd, const uint32_t *weights) {
    if (!metric_name(metric))
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "metric = {}: not an apairs_genotype_metric_e value", metric);
    Problem pb;
    pb.metric = metric;
    if (pb.plink()) {
        if (missing != APAIRS_GENOTYPE_MISSING_WEIGHTED && missing != APAIRS_GENOTYPE_MISSING_FLAT)
            fail(APAIRS_ERROR_UNKNOWN_ENUM,
                 "missing = {}: metric {} needs an apairs_genotype_missing_e value (WEIGHTED or FLAT)", missing,
                 metric_name(metric));
    } else if (missing != 0) {
        fail(APAIRS_ERROR_INVALID_VALUE, "missing = {}: the count metric {} takes missing = 0", missing,
             metric_name(metric));
    }
    pb.missing = missing;
    require_at_least(n1, 1, "n1");
    require_at_least(n2, 1, "n2");
    require_at_least(d, 1, "d");
    if (d > kMaxVariants)
        fail(APAIRS_ERROR_INVALID_VALUE, "d = {}: expected d < 2^30 (the counts must stay exact in int32)", d);
    const int64_t row = packed_bytes(d);
    if (lda < row) fail(APAIRS_ERROR_INVALID_VALUE, "lda = {}: expected lda >= ceil(d / 4) = {} bytes", lda, row);
    if (ldb < row) fail(APAIRS_ERROR_INVALID_VALUE, "ldb = {}: expected ldb >= ceil(d / 4) = {} bytes", ldb, row);
    if (ldd < n2) fail(APAIRS_ERROR_INVALID_VALUE, "ldd = {}: expected ldd >= n2 = {}", ldd, n2);
    require_fits(n1, lda, 1, "n1", "lda");
    require_fits(n2, ldb, 1, "n2", "ldb");
    require_fits(n1, ldd, pb.out_size(), "n1", "ldd");
    pb.n1 = n1, pb.n2 = n2, pb.d = d, pb.lda = lda, pb.ldb = ldb, pb.ldd = ldd;
    if (pb.weighted()) {
        require(weights, "weights");
        pb.weights.assign(weights, weights + d);
        for (uint32_t w : pb.weights) pb.weight_sum += w;
        if (pb.weight_sum == 0 || pb.weight_sum >= (uint64_t(1) << 32))
            fail(APAIRS_ERROR_INVALID_VALUE, "weights: their sum is {}: expected 0 < sum < 2^32", pb.weight_sum);
    }
    return pb;
}

}  // namespace apairs::genotype
