// The host engine's AVX2 copy of the folding against its baseline code: the same bits
// (NaN where NaN) for every metric and type, on shapes with partial register tiles, several slices and
// several groups of slices, and rows holding NaNs, infinities and a negative zero.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "apairs.h"
#include "catch.hpp"
#include "pairwise/host.hpp"

using namespace apairs::pairwise;

namespace {

template <class T>
void compare(int32_t metric, double p, int32_t dtype) {
    const int64_t n1 = 37, n2 = 70, d = 1100;  // 35 slices: two groups and a partial slice
    std::mt19937_64 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-2, 2);
    std::vector<T> A(size_t(n1 * d)), B(size_t(n2 * d));
    for (auto &x : A) x = T(u(rng));
    for (auto &x : B) x = T(u(rng));
    A[size_t(3 * d + 700)] = std::numeric_limits<T>::quiet_NaN();
    B[size_t(5 * d + 9)] = std::numeric_limits<T>::quiet_NaN();  // (one sign: two NaNs meeting keep either)
    A[size_t(7 * d + 40)] = std::numeric_limits<T>::infinity();
    B[size_t(11 * d + 40)] = std::numeric_limits<T>::infinity();
    A[size_t(13 * d + 2)] = T(-0.0);
    const Problem pb = make_problem(metric, p, dtype, n1, n2, d, d, d, n2);
    std::vector<T> base(size_t(n1 * n2), T(-7)), avx2(size_t(n1 * n2), T(-9));
    run_host_isa(pb, A.data(), B.data(), base.data(), 2, false);
    run_host_isa(pb, A.data(), B.data(), avx2.data(), 2, true);
    INFO("metric " << metric << " p " << p << " dtype " << dtype << " folding " << host_vector_isa());
    // The same bits, or NaN in both (a NaN's sign and payload are not specified: the
    // compiler may take |t| |t| as t t in one copy and not in the other).
    for (size_t q = 0; q < base.size(); ++q)
        if (std::memcmp(&base[q], &avx2[q], sizeof(T)) != 0 && !(std::isnan(base[q]) && std::isnan(avx2[q]))) {
            INFO("first difference at D[" << q / size_t(n2) << "][" << q % size_t(n2) << "]: " << base[q] << " against "
                                          << avx2[q]);
            FAIL_CHECK("the AVX2 folding differs");
            break;
        }
    REQUIRE(std::isnan(base[size_t(3 * n2)]));  // row 3 of A holds a NaN
}

}  // namespace

TEST_CASE("pairwise host: the AVX2 folding gives the baseline's bits", "[pairwise]") {
    if (std::strcmp(host_vector_isa(), "AVX2") != 0) WARN("this CPU runs the baseline code only: compared with itself");
    const struct {
        int32_t metric;
        double p;
    } metrics[] = {{APAIRS_METRIC_L1, 0},   {APAIRS_METRIC_L2, 0},   {APAIRS_METRIC_SQEUCLIDEAN, 0},
                   {APAIRS_METRIC_LP, 3},   {APAIRS_METRIC_LP, 2.5}, {APAIRS_METRIC_LP, 1.7},
                   {APAIRS_METRIC_LINF, 0}, {APAIRS_METRIC_DOT, 0},  {APAIRS_METRIC_COSINE, 0}};
    for (const auto &m : metrics) {
        compare<float>(m.metric, m.p, APAIRS_DTYPE_F32);
        compare<double>(m.metric, m.p, APAIRS_DTYPE_F64);
    }
}
