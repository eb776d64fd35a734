// Two-body CUDA engine checks that need the runtime API (tagged [cuda]; run by suite gpu):
// each output technique the plan may pick (per-warp, per-block and global counters, the
// register counter of one radius, kNN lists in registers and in local memory) on
// device-resident arrays, against the host backend on inputs whose distances are exact
// (integer coordinates, L1 and SQEUCLIDEAN), so the two backends must agree bit for bit:
// counts, weighted sums (weights multiples of 1/4: exact products) and kNN lists.
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "apairs.h"
#include "catch.hpp"
#include "cuda_checks.hpp"

namespace {

using test::api_ok;
using test::cuda_ok;

struct Ctx {
    apairs_context_t h = nullptr;
    explicit Ctx(int32_t backend) { api_ok(apairs_context_create(&h, backend, 0)); }
    ~Ctx() { apairs_context_destroy(h); }
};

struct Plan {
    apairs_plan_t h = nullptr;
    ~Plan() { apairs_plan_destroy(h); }
};

template <class T>
struct Dev {
    T *p = nullptr;
    size_t n;
    explicit Dev(size_t n_) : n(n_) { cuda_ok(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(T))); }
    Dev(const std::vector<T> &v) : Dev(v.size()) { cuda_ok(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice)); }
    ~Dev() { cudaFree(p); }
    std::vector<T> get() const {
        std::vector<T> v(n);
        cuda_ok(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
        return v;
    }
};

std::string describe(apairs_plan_t p) {
    char buf[4096];
    api_ok(apairs_plan_describe(p, buf, sizeof buf, nullptr));
    return buf;
}

// Points with integer coordinates in [0, 6), d dimensions, some duplicated.
std::vector<float> points(int64_t n, int64_t d, std::mt19937_64 &rng) {
    std::vector<float> x(size_t(n * d));
    for (float &v : x) v = float(rng() % 6);
    return x;
}

struct Hist {
    std::vector<int64_t> counts;
    std::vector<double> sums;
    std::string plan;
};

// Uniform bins: nbins on [rmin, rmax).
struct Uniform {
    int64_t nbins;
    double rmin, rmax;
};

// A histogram on `backend`, inputs and outputs in device memory on CUDA; caller edges, or
// uniform bins with `u`.
Hist histogram(int32_t backend, int32_t metric, bool autopairs, const std::vector<float> &A,
               const std::vector<float> &B, int64_t d, const std::vector<double> &edges, const std::vector<double> *wa,
               const std::vector<double> *wb, const Uniform *u = nullptr) {
    Ctx ctx(backend);
    Plan p;
    const int64_t n1 = int64_t(A.size()) / d, n2 = int64_t(B.size()) / d;
    const int64_t nb = u ? u->nbins : int64_t(edges.size()) - 1;
    const int32_t pairs = autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS;
    if (u)
        api_ok(apairs_plan_create_histogram_uniform(&p.h, ctx.h, pairs, metric, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d,
                                                    nb, u->rmin, u->rmax, 0, nullptr));
    else
        api_ok(apairs_plan_create_histogram_edges(&p.h, ctx.h, pairs, metric, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d, nb,
                                                  edges.data(), 0, nullptr));
    Hist h;
    h.plan = describe(p.h);
    h.counts.assign(size_t(nb + 2), -7);
    h.sums.assign(size_t(nb + 2), -7);
    if (backend == APAIRS_BACKEND_HOST) {
        if (wa) api_ok(apairs_plan_execute_histogram_weighted(p.h, A.data(), B.data(), wa->data(), wb->data(), h.counts.data(), h.sums.data()));
        else api_ok(apairs_plan_execute_histogram(p.h, A.data(), B.data(), h.counts.data()));
        return h;
    }
    Dev<float> dA(A), dB(B);
    Dev<int64_t> dc(h.counts);
    Dev<double> ds(h.sums);
    if (wa) {
        Dev<double> dwa(*wa), dwb(*wb);
        api_ok(apairs_plan_execute_histogram_weighted(p.h, dA.p, dB.p, dwa.p, dwb.p, dc.p, ds.p));
        cuda_ok(cudaDeviceSynchronize());
        h.sums = ds.get();
    } else {
        api_ok(apairs_plan_execute_histogram(p.h, dA.p, dB.p, dc.p));
    }
    cuda_ok(cudaDeviceSynchronize());
    h.counts = dc.get();
    return h;
}

}  // namespace

TEST_CASE("two-body CUDA: every counter technique equals the host on exact distances", "[cuda][twobody]") {
    std::mt19937_64 rng(7);
    const int64_t d = 3;
    const std::vector<float> A = points(1031, d, rng), B = points(517, d, rng);
    std::vector<double> wa(A.size() / d), wb(B.size() / d);
    for (double &w : wa) w = double(int64_t(rng() % 41) - 20) / 4;
    for (double &w : wb) w = double(int64_t(rng() % 41) - 20) / 4;
    // L1 distances of integer points are integers 0..15: edges between them.
    for (const auto &want : std::vector<std::pair<int64_t, const char *>>{
             {10, "one per lane"}, {300, "one per warp"}, {3000, "one shared-memory copy"}, {60000, "global 64-bit atomics"}}) {
        std::vector<double> edges(size_t(want.first + 1));
        for (size_t b = 0; b < edges.size(); ++b) edges[b] = -0.5 + 16.0 * double(b) / double(want.first);
        for (bool autopairs : {true, false}) {
            for (bool weighted : {false, true}) {
                INFO(want.first << " bins, " << (autopairs ? "AUTO" : "CROSS") << (weighted ? ", weighted" : ""));
                const Hist h = histogram(APAIRS_BACKEND_HOST, APAIRS_METRIC_L1, autopairs, A, B, d, edges,
                                         weighted ? &wa : nullptr, weighted ? (autopairs ? &wa : &wb) : nullptr);
                const Hist c = histogram(APAIRS_BACKEND_CUDA, APAIRS_METRIC_L1, autopairs, A, B, d, edges,
                                         weighted ? &wa : nullptr, weighted ? (autopairs ? &wa : &wb) : nullptr);
                INFO(c.plan);
                CHECK(c.plan.find(want.second) != std::string::npos);
                CHECK(c.counts == h.counts);
                if (weighted) CHECK(std::memcmp(c.sums.data(), h.sums.data(), h.sums.size() * sizeof(double)) == 0);
            }
        }
    }
}

// L2 on CUDA compares sums of squares with each edge's least sum of squares whose square
// root reaches it; the host takes square roots. Integer points: exact sums, many of them
// perfect squares or squares of an edge, so that distances fall exactly on edges. 1800
// points: whole tiles and a last tile whose points fill some of a thread's rows. Uniform
// bins from 0 (the kernels without a lower clamp) and from rmin > w / 2 (with one);
// SQEUCLIDEAN's integer distances on and between uniform edges too.
TEST_CASE("two-body CUDA: L2 histograms in the squared domain equal the host's square roots", "[cuda][twobody]") {
    std::mt19937_64 rng(11);
    const int64_t d = 3;
    const std::vector<float> A = points(1800, d, rng), B = points(517, d, rng);
    std::vector<double> roots;  // edges at sqrt(0), sqrt(1), ..., sqrt(76): every distance lies on one
    for (int k = 0; k <= 76; ++k) roots.push_back(std::sqrt(double(k)));
    const Uniform integers{9, 0.0, 9.0}, fine{256, 0.0, std::sqrt(75.0)}, offset{100, 0.5, 8.5};
    const Uniform sq_integers{75, 0.0, 75.0}, sq_halves{150, 0.0, 75.0}, sq_offset{40, 10.0, 50.0};
    for (bool autopairs : {true, false}) {
        for (const Uniform *u : {&integers, &fine, &offset, static_cast<const Uniform *>(nullptr)}) {
            INFO((autopairs ? "AUTO" : "CROSS") << ", " << (u ? std::to_string(u->nbins) + " uniform bins" : "edges at sqrt(k)"));
            const Hist h = histogram(APAIRS_BACKEND_HOST, APAIRS_METRIC_L2, autopairs, A, B, d, roots, nullptr, nullptr, u);
            const Hist c = histogram(APAIRS_BACKEND_CUDA, APAIRS_METRIC_L2, autopairs, A, B, d, roots, nullptr, nullptr, u);
            INFO(c.plan);
            CHECK(c.plan.find("squared domain") != std::string::npos);
            CHECK(c.counts == h.counts);
        }
        for (const Uniform *u : {&sq_integers, &sq_halves, &sq_offset}) {
            INFO((autopairs ? "AUTO" : "CROSS") << ", SQEUCLIDEAN, " << u->nbins << " uniform bins from " << u->rmin);
            const Hist h = histogram(APAIRS_BACKEND_HOST, APAIRS_METRIC_SQEUCLIDEAN, autopairs, A, B, d, {}, nullptr,
                                     nullptr, u);
            const Hist c = histogram(APAIRS_BACKEND_CUDA, APAIRS_METRIC_SQEUCLIDEAN, autopairs, A, B, d, {}, nullptr,
                                     nullptr, u);
            INFO(c.plan);
            CHECK(c.counts == h.counts);
        }
    }
}

// The uniform kernels' whole tiles (1024 points of A a block: AUTO past 1024 points and
// CROSS 1100 x 1100 reach the unrolled block of full tiles, not only the diagonal and
// partial ones), at bin counts whose counters are per lane, per warp and per block, with
// NaN rows (slot nbins + 1) inside full tiles; the one-radius kernel's full 512-point
// tiles. Integer coordinates in [0, 60): exact sums of squares (many distinct distances,
// anywhere in a bin), so that both backends must agree bit for bit.
TEST_CASE("two-body CUDA: the uniform kernels' full tiles and NaN rows equal the host", "[cuda][twobody]") {
    std::mt19937_64 rng(17);
    const int64_t d = 3;
    auto spread = [&](int64_t n) {
        std::vector<float> x(size_t(n * d));
        for (float &v : x) v = float(rng() % 60);
        return x;
    };
    std::vector<float> A = spread(2100), B = spread(1100), C = spread(1100);
    A[size_t(7 * d)] = std::nanf(""), A[size_t(1029 * d + 1)] = std::nanf(""), B[size_t(500 * d + 2)] = std::nanf("");
    const double sq_top = 3.0 * 59 * 59 + 1, top = std::sqrt(sq_top);
    for (int64_t nbins : {100, 300, 4500})
        for (double rmin : {0.0, 1.25})
            for (int32_t metric : {APAIRS_METRIC_L2, APAIRS_METRIC_SQEUCLIDEAN})
                for (bool autopairs : {true, false}) {
                    const bool sq = metric == APAIRS_METRIC_SQEUCLIDEAN;
                    const Uniform u{nbins, sq ? rmin * rmin : rmin, sq ? sq_top : top};
                    const std::vector<float> &a = autopairs ? A : C;
                    INFO((autopairs ? "AUTO" : "CROSS") << (sq ? " SQEUCLIDEAN " : " L2 ") << nbins
                                                        << " uniform bins from " << u.rmin);
                    const Hist h = histogram(APAIRS_BACKEND_HOST, metric, autopairs, a, B, d, {}, nullptr, nullptr, &u);
                    const Hist c = histogram(APAIRS_BACKEND_CUDA, metric, autopairs, a, B, d, {}, nullptr, nullptr, &u);
                    INFO(c.plan);
                    CHECK(c.counts == h.counts);
                    CHECK(h.counts[size_t(nbins + 1)] > 0);  // the NaN pairs (and any beyond rmax)
                }
    for (bool autopairs : {true, false}) {
        const std::vector<float> &a = autopairs ? A : C;
        const double radius[] = {31.5};
        int64_t host = -1, dev = -2;
        for (int32_t backend : {APAIRS_BACKEND_HOST, APAIRS_BACKEND_CUDA}) {
            Ctx ctx(backend);
            Plan p;
            api_ok(apairs_plan_create_pair_counts(&p.h, ctx.h, autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS,
                                                  APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, int64_t(a.size()) / d,
                                                  int64_t(B.size()) / d, d, d, d, 1, radius, 0, nullptr));
            int64_t *const out = backend == APAIRS_BACKEND_HOST ? &host : &dev;
            api_ok(apairs_plan_execute_pair_counts(p.h, a.data(), B.data(), out));
        }
        INFO((autopairs ? "AUTO" : "CROSS") << " one radius");
        CHECK(dev == host);
    }
}

TEST_CASE("two-body CUDA: pair counts (one radius in a register, several in shared memory) equal the host",
          "[cuda][twobody]") {
    std::mt19937_64 rng(11);
    for (int64_t d : {int64_t(3), int64_t(5)}) {
        const std::vector<float> A = points(777, d, rng);
        for (const std::vector<double> &radii : {std::vector<double>{4.0}, std::vector<double>{0.0, 1.0, 4.0, 9.5, 30}}) {
            std::vector<int64_t> host(radii.size()), dev(radii.size());
            for (int32_t backend : {APAIRS_BACKEND_HOST, APAIRS_BACKEND_CUDA}) {
                Ctx ctx(backend);
                Plan p;
                api_ok(apairs_plan_create_pair_counts(&p.h, ctx.h, APAIRS_PAIRS_AUTO, APAIRS_METRIC_SQEUCLIDEAN, 0,
                                                      APAIRS_DTYPE_F32, int64_t(A.size()) / d, 0, d, d, 0,
                                                      int64_t(radii.size()), radii.data(), 0, nullptr));
                api_ok(apairs_plan_execute_pair_counts(p.h, A.data(), nullptr,
                                                       (backend == APAIRS_BACKEND_HOST ? host : dev).data()));
            }
            INFO("d = " << d << ", " << radii.size() << " radii");
            CHECK(dev == host);
        }
    }
}

TEST_CASE("two-body CUDA: kNN lists in registers and in local memory equal the host", "[cuda][twobody]") {
    std::mt19937_64 rng(13);
    // L1, and L2 (on CUDA pairs beyond the list's last distance are dropped by their sum of
    // squares before the square root).
    for (int32_t metric : {APAIRS_METRIC_L1, APAIRS_METRIC_L2})
    for (int64_t d : {int64_t(3), int64_t(7)}) {
        const std::vector<float> A = points(300, d, rng), B = points(700, d, rng);
        for (int64_t k : {int64_t(1), int64_t(16), int64_t(20), int64_t(100)}) {
            for (bool autopairs : {true, false}) {
                const int64_t n1 = int64_t(A.size()) / d, n2 = autopairs ? n1 : int64_t(B.size()) / d;
                std::vector<int64_t> hi(size_t(n1 * k)), ci(size_t(n1 * k), -1);
                std::vector<float> hd(size_t(n1 * k)), cd(size_t(n1 * k), -1);
                {
                    Ctx ctx(APAIRS_BACKEND_HOST);
                    Plan p;
                    api_ok(apairs_plan_create_knn(&p.h, ctx.h, autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS,
                                                  metric, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d, k));
                    api_ok(apairs_plan_execute_knn(p.h, A.data(), B.data(), hi.data(), hd.data()));
                }
                {
                    Ctx ctx(APAIRS_BACKEND_CUDA);
                    Plan p;
                    api_ok(apairs_plan_create_knn(&p.h, ctx.h, autopairs ? APAIRS_PAIRS_AUTO : APAIRS_PAIRS_CROSS,
                                                  metric, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d, k));
                    Dev<float> dA(A), dB(B);
                    Dev<int64_t> di(ci);
                    Dev<float> dd(cd);
                    api_ok(apairs_plan_execute_knn(p.h, dA.p, dB.p, di.p, dd.p));
                    cuda_ok(cudaDeviceSynchronize());
                    ci = di.get(), cd = dd.get();
                }
                INFO("metric " << metric << ", d = " << d << ", k = " << k << (autopairs ? ", AUTO" : ", CROSS"));
                CHECK(ci == hi);
                CHECK(cd == hd);
            }
        }
    }
}

TEST_CASE("two-body CUDA: a bad weight on the device writes nothing", "[cuda][twobody]") {
    Ctx ctx(APAIRS_BACKEND_CUDA);
    Plan p;
    const double edges[] = {0, 1, 2};
    api_ok(apairs_plan_create_histogram_edges(&p.h, ctx.h, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32,
                                              100, 0, 3, 3, 0, 2, edges, 0, nullptr));
    std::vector<float> A(300, 0.5f);
    std::vector<double> w(100, 1.0);
    w[50] = 1e9;
    Dev<float> dA(A);
    Dev<double> dw(w);
    const std::vector<int64_t> poison(4, 0x5a5a5a5a5a5a5a5a);
    const std::vector<double> sums_poison(4, -7.25);
    Dev<int64_t> dc(poison);
    Dev<double> ds(sums_poison);
    CHECK(apairs_plan_execute_histogram_weighted(p.h, dA.p, nullptr, dw.p, nullptr, dc.p, ds.p) ==
          APAIRS_ERROR_INVALID_VALUE);
    CHECK(dc.get() == poison);
    CHECK(ds.get() == sums_poison);
}

TEST_CASE("two-body CUDA: a later plan of the same kernel does not undo an earlier plan's shared memory",
          "[cuda][twobody]") {
    // The weighted histogram kernel's dynamic shared-memory limit belongs to the kernel,
    // not to a plan: plan X (4000 bins, some 82 KB) raised it, plan Y (3000 bins) set it
    // lower, and X's next execute must still launch.
    std::mt19937_64 rng(0x5eed5);
    const int64_t n = 200, d = 8;
    std::vector<double> A(static_cast<size_t>(n * d)), B(static_cast<size_t>(n * d)), wa(static_cast<size_t>(n)),
        wb(static_cast<size_t>(n));
    for (double &v : A) v = double(rng() % 6);
    for (double &v : B) v = double(rng() % 6);
    for (double &w : wa) w = double(rng() % 8 + 1) / 4;
    for (double &w : wb) w = double(rng() % 8 + 1) / 4;
    auto run = [&](int32_t backend, int64_t nbins, bool later_plan) {
        Ctx ctx(backend);
        Plan x, y;
        api_ok(apairs_plan_create_histogram_uniform(&x.h, ctx.h, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L1, 0,
                                                    APAIRS_DTYPE_F64, n, n, d, d, d, nbins, 0, 48, 0, nullptr));
        if (later_plan)
            api_ok(apairs_plan_create_histogram_uniform(&y.h, ctx.h, APAIRS_PAIRS_CROSS, APAIRS_METRIC_L1, 0,
                                                        APAIRS_DTYPE_F64, n, n, d, d, d, nbins - 1000, 0, 48, 0,
                                                        nullptr));
        Hist h;
        h.counts.assign(size_t(nbins + 2), -7);
        h.sums.assign(size_t(nbins + 2), -7);
        api_ok(apairs_plan_execute_histogram_weighted(x.h, A.data(), B.data(), wa.data(), wb.data(), h.counts.data(),
                                                      h.sums.data()));
        return h;
    };
    const Hist host = run(APAIRS_BACKEND_HOST, 4000, false), cuda = run(APAIRS_BACKEND_CUDA, 4000, true);
    CHECK(cuda.counts == host.counts);
    CHECK(cuda.sums == host.sums);
}
