// The two-body statistics family: pair counts within radii, distance histograms and k
// nearest neighbours, reduced outputs of the all-pairs computation (issue 8). The points,
// metric, dtype and leading dimensions are an all-pairs problem (pairwise::Problem,
// validated by pairwise::make_problem, so the two families accept the same inputs), and
// the distances are folded by the same metric functors (pairwise/metrics.hpp) in the
// same blocked order: a pair's distance is the value the full matrix would hold.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "pairwise/problem.hpp"

namespace apairs::twobody {

enum class Kind { Counts, Histogram, Knn };

constexpr int64_t kMaxRadii = 4096;
constexpr int64_t kMaxBins = int64_t(1) << 20;
constexpr int64_t kMaxK = APAIRS_KNN_MAX_K;
// Weights: |w| <= 2^15, products rounded to multiples of 2^-32 (apairs.h).
constexpr double kMaxWeight = 32768.0;
constexpr int kWeightFractionBits = 32;

struct Problem {
    Kind kind = Kind::Counts;
    bool autopairs = false;       // APAIRS_PAIRS_AUTO: B is A, pairs i < j
    pairwise::Problem pw;         // metric, p, dtype, n1, n2 (= n1 for AUTO), d, lda, ldb
    std::vector<double> thresholds;  // Counts: the radii; Histogram: the nbins + 1 edges
    bool uniform = false;         // Histogram: uniform bins (a bin guess from the distance)
    std::vector<double> box;      // periodic sides (empty: none)
    int64_t k = 0;                // Knn

    int64_t nbins() const { return static_cast<int64_t>(thresholds.size()) - 1; }
    // Slots of the output: Counts nradii, Histogram nbins + 2, Knn n1 * k.
    int64_t slots() const {
        return kind == Kind::Counts ? int64_t(thresholds.size()) : kind == Kind::Histogram ? nbins() + 2 : pw.n1 * k;
    }
    // The number of pairs the statistics cover.
    long double pairs() const {
        return autopairs ? 0.5L * pw.n1 * (pw.n1 - 1) : static_cast<long double>(pw.n1) * pw.n2;
    }
};

// Validate the arguments of the create functions (apairs.h) and return the problem;
// throw Error naming the argument. `thresholds` and `box` are read here only.
Problem make_counts(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                    int64_t lda, int64_t ldb, int64_t nradii, const double *radii, int64_t nbox, const double *box);
Problem make_histogram_uniform(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                               int64_t d, int64_t lda, int64_t ldb, int64_t nbins, double rmin, double rmax,
                               int64_t nbox, const double *box);
Problem make_histogram_edges(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                             int64_t d, int64_t lda, int64_t ldb, int64_t nbins, const double *edges, int64_t nbox,
                             const double *box);
Problem make_knn(int32_t pairs, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2, int64_t d,
                 int64_t lda, int64_t ldb, int64_t k);

// Weights are checked at execute, before anything is written: each finite with |w| <=
// 2^15 (kMaxWeight), else the call fails naming the first bad one (weight_fail: the one
// message of both engines).
void require_weights(const double *w, int64_t n, const char *name);
[[noreturn]] void weight_fail(const char *name, int64_t i, double w);

// ---- Thresholds in the element type ---------------------------------------------------
// The engines compare distances of type T (float, double, int32 for HAMMING on U8) with
// double thresholds exactly by converting each threshold once, at plan time:
//   dist <= r  <=>  dist <= floor_T(r)        (the largest T not above r)
//   dist >= e  <=>  dist >= ceil_T(e)         (the smallest T not below e)
// and for L2 in the squared domain, since the correctly rounded sqrt is monotone:
//   sqrt_T(s) <= r  <=>  s <= max { s : sqrt_T(s) <= floor_T(r) }.

template <class T>
T floor_to(double r) {
    if constexpr (std::is_integral<T>::value) {
        const double f = std::floor(r);
        return f < double(std::numeric_limits<T>::min()) ? std::numeric_limits<T>::min()
               : f > double(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max()
                                                           : static_cast<T>(f);
    } else {
        T t = static_cast<T>(r);
        if (static_cast<double>(t) > r) t = std::nextafter(t, -std::numeric_limits<T>::infinity());
        return t;
    }
}

template <class T>
T ceil_to(double e) {
    if constexpr (std::is_integral<T>::value) {
        const double c = std::ceil(e);
        return c < double(std::numeric_limits<T>::min()) ? std::numeric_limits<T>::min()
               : c > double(std::numeric_limits<T>::max()) ? std::numeric_limits<T>::max()
                                                           : static_cast<T>(c);
    } else {
        T t = static_cast<T>(e);
        if (static_cast<double>(t) < e) t = std::nextafter(t, std::numeric_limits<T>::infinity());
        return t;
    }
}

// The largest s >= 0 of type T with sqrt_T(s) <= floor_T(r); -1 when r < 0 (no s).
template <class T>
T squared_threshold(double r) {
    const T rt = floor_to<T>(r);
    if (rt < T(0)) return T(-1);
    if (std::isinf(rt)) return rt;
    T s = rt * rt;  // within an ulp or two of the answer
    const T inf = std::numeric_limits<T>::infinity();
    while (s > T(0) && std::sqrt(s) > rt) s = std::nextafter(s, T(0));
    while (s < inf && std::sqrt(std::nextafter(s, inf)) <= rt) s = std::nextafter(s, inf);
    return s;
}

}  // namespace apairs::twobody
