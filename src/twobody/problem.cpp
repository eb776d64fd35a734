#include "twobody/problem.hpp"

#include <cfloat>
#include <cmath>

namespace apairs::twobody {
namespace {

// The points: an all-pairs problem (same metric, dtype and size rules); AUTO takes
// n2 = n1 and ldb = lda whatever was passed.
Problem base(Kind kind, int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
             int64_t lda, int64_t ldb) {
    if (pairs != APAIRS_PAIRS_AUTO && pairs != APAIRS_PAIRS_CROSS)
        fail(APAIRS_ERROR_UNKNOWN_ENUM, "pairs = {}: not an apairs_pairs_e value", pairs);
    Problem pb;
    pb.kind = kind;
    pb.autopairs = pairs == APAIRS_PAIRS_AUTO;
    if (pb.autopairs) n2 = n1, ldb = lda;
    // n1 n2 below 2^60, n1 n1 with AUTO (n1 n2 8-byte distances addressable; checked
    // first: make_problem would name ldd, which two-body calls do not take).
    int64_t prod = 0;
    if (n1 > 0 && n2 > 0 && (!mul_ok(n1, n2, &prod) || !mul_ok(prod, 8, &prod)))
        fail(APAIRS_ERROR_OVERFLOW, "{} = {} * {}: 2^60 or more (n1 * n2, n1 * n1 with AUTO, must be below 2^60)",
             pb.autopairs ? "n1 * n1" : "n1 * n2", n1, n2);
    pb.pw = pairwise::make_problem(metric, p, dtype, n1, n2, d, lda, ldb, n2);
    return pb;
}

void require_sorted(const double *v, int64_t n, const char *name) {
    for (int64_t q = 0; q < n; ++q) {
        if (!std::isfinite(v[q])) fail(APAIRS_ERROR_INVALID_VALUE, "{}[{}] = {}: expected a finite value", name, q, v[q]);
        if (q > 0 && !(v[q] > v[q - 1]))
            fail(APAIRS_ERROR_INVALID_VALUE, "{}[{}] = {} <= {}[{}] = {}: expected strictly increasing values", name,
                 q, v[q], name, q - 1, v[q - 1]);
    }
}

// The periodic box: nbox = 0, or nbox = d sides for L2 with d <= 3; `reach` (the
// largest radius or edge) must not pass half the smallest side.
void set_box(Problem &pb, int64_t nbox, const double *box, double reach, const char *reach_name) {
    if (nbox == 0) return;
    if (nbox != pb.pw.d)
        fail(APAIRS_ERROR_INVALID_VALUE, "nbox = {}: expected 0 (no box) or d = {}", nbox, pb.pw.d);
    require(box, "box");
    if (pb.pw.metric != APAIRS_METRIC_L2)
        fail(APAIRS_ERROR_UNSUPPORTED, "a periodic box needs metric = l2 (got {})", pairwise::metric_name(pb.pw.metric));
    if (pb.pw.d > 3) fail(APAIRS_ERROR_UNSUPPORTED, "d = {}: a periodic box takes 1 to 3 dimensions", pb.pw.d);
    double smallest = INFINITY;
    for (int64_t k = 0; k < nbox; ++k) {
        if (!(box[k] > 0) || !std::isfinite(box[k]))
            fail(APAIRS_ERROR_INVALID_VALUE, "box[{}] = {}: expected a finite side > 0", k, box[k]);
        // The engines take the side and its reciprocal rounded to the element type: both
        // must be normal numbers there (a float side of 1e39 is inf, 1e-39 subnormal).
        const bool f32 = pb.pw.dtype == APAIRS_DTYPE_F32;
        const double side = f32 ? double(float(box[k])) : box[k], inv = f32 ? double(1 / float(box[k])) : 1 / box[k];
        const double tiny = f32 ? double(FLT_MIN) : DBL_MIN, huge = f32 ? double(FLT_MAX) : DBL_MAX;
        if (!(side >= tiny && side <= huge && inv >= tiny && inv <= huge))
            fail(APAIRS_ERROR_INVALID_VALUE,
                 "box[{}] = {}: the side and its reciprocal must be normal numbers in the element type ({})", k,
                 box[k], f32 ? "f32" : "f64");
        smallest = std::min(smallest, box[k]);
    }
    if (reach > smallest / 2)
        fail(APAIRS_ERROR_INVALID_VALUE,
             "{} = {} is beyond half the smallest box side ({}): the minimum image is no longer the distance",
             reach_name, reach, smallest / 2);
    pb.box.assign(box, box + nbox);
}

void require_bins(int64_t nbins) {
    if (nbins < 1 || nbins > kMaxBins)
        fail(APAIRS_ERROR_INVALID_VALUE, "nbins = {}: expected 1 to {}", nbins, kMaxBins);
}

}  // namespace

Problem make_counts(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                    int64_t lda, int64_t ldb, int64_t nradii, const double *radii, int64_t nbox, const double *box) {
    Problem pb = base(Kind::Counts, pairs, metric, p, dtype, n1, n2, d, lda, ldb);
    if (nradii < 1 || nradii > kMaxRadii)
        fail(APAIRS_ERROR_INVALID_VALUE, "nradii = {}: expected 1 to {}", nradii, kMaxRadii);
    require(radii, "radii");
    require_sorted(radii, nradii, "radii");
    pb.thresholds.assign(radii, radii + nradii);
    set_box(pb, nbox, box, radii[nradii - 1], "the largest radius");
    return pb;
}

Problem make_histogram_uniform(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                               int64_t d, int64_t lda, int64_t ldb, int64_t nbins, double rmin, double rmax,
                               int64_t nbox, const double *box) {
    Problem pb = base(Kind::Histogram, pairs, metric, p, dtype, n1, n2, d, lda, ldb);
    require_bins(nbins);
    if (!std::isfinite(rmin) || !std::isfinite(rmax))
        fail(APAIRS_ERROR_INVALID_VALUE, "rmin = {}, rmax = {}: expected finite values", rmin, rmax);
    if (!(rmin < rmax)) fail(APAIRS_ERROR_INVALID_VALUE, "rmax = {} <= rmin = {}: expected rmin < rmax", rmax, rmin);
    const double w = (rmax - rmin) / static_cast<double>(nbins);
    if (!std::isfinite(w)) fail(APAIRS_ERROR_INVALID_VALUE, "rmax - rmin = {} - {} overflows", rmax, rmin);
    pb.thresholds.resize(static_cast<size_t>(nbins + 1));
    for (int64_t b = 0; b < nbins; ++b) pb.thresholds[size_t(b)] = rmin + static_cast<double>(b) * w;
    pb.thresholds[size_t(nbins)] = rmax;
    for (int64_t b = 1; b <= nbins; ++b)
        if (!(pb.thresholds[size_t(b)] > pb.thresholds[size_t(b - 1)]))
            fail(APAIRS_ERROR_INVALID_VALUE,
                 "nbins = {} on [{}, {}): edges {} and {} coincide in double; use fewer bins", nbins, rmin, rmax,
                 b - 1, b);
    pb.uniform = true;
    set_box(pb, nbox, box, rmax, "rmax");
    return pb;
}

Problem make_histogram_edges(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                             int64_t d, int64_t lda, int64_t ldb, int64_t nbins, const double *edges, int64_t nbox,
                             const double *box) {
    Problem pb = base(Kind::Histogram, pairs, metric, p, dtype, n1, n2, d, lda, ldb);
    require_bins(nbins);
    require(edges, "edges");
    require_sorted(edges, nbins + 1, "edges");
    pb.thresholds.assign(edges, edges + nbins + 1);
    set_box(pb, nbox, box, edges[nbins], "the last edge");
    return pb;
}

Problem make_knn(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                 int64_t lda, int64_t ldb, int64_t k) {
    Problem pb = base(Kind::Knn, pairs, metric, p, dtype, n1, n2, d, lda, ldb);
    const int64_t candidates = pb.autopairs ? pb.pw.n1 - 1 : pb.pw.n2;
    if (k < 1 || k > kMaxK)
        fail(APAIRS_ERROR_INVALID_VALUE, "k = {}: expected 1 to APAIRS_KNN_MAX_K = {}", k, kMaxK);
    if (k > candidates)
        fail(APAIRS_ERROR_INVALID_VALUE, "k = {}: only {} candidates ({})", k, candidates,
             pb.autopairs ? "n1 - 1, AUTO excludes i = j" : "n2");
    require_fits(pb.pw.n1, k, 8, "n1", "k");
    pb.k = k;
    return pb;
}

void weight_fail(const char *name, int64_t i, double w) {
    fail(APAIRS_ERROR_INVALID_VALUE, "{}[{}] = {}: weights must be finite with |w| <= 2^15", name, i, w);
}

void require_weights(const double *w, int64_t n, const char *name) {
    for (int64_t i = 0; i < n; ++i)
        if (!(std::fabs(w[i]) <= kMaxWeight)) weight_fail(name, i, w[i]);
}

}  // namespace apairs::twobody
