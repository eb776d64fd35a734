// CUDA-only checks that need the runtime API (tagged [cuda]; run by suite gpu):
// the occupancy estimator against cudaOccupancyMaxActiveBlocksPerMultiprocessor for
// every kernel the plans pick, and the device-memory paths of execute.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "apairs.h"
#include "catch.hpp"
#include "cuda_checks.hpp"
#include "common/occupancy.hpp"
#include "cuda/device.hpp"
#include "pairwise/bounds.hpp"
#include "pairwise/cuda.hpp"

namespace {

using test::cuda_ok;

// Row i of A against row j of B (rows of d): a.b, sum |a_k b_k|, |a|^2, |b|^2 in long double.
struct DotSums {
    long double ab, scale, aa, bb;
};
template <class T>
DotSums dot_sums(const std::vector<T> &A, const std::vector<T> &B, int64_t i, int64_t j, int64_t d) {
    DotSums r{0, 0, 0, 0};
    for (int64_t k = 0; k < d; ++k) {
        const long double x = A[size_t(i * d + k)], y = B[size_t(j * d + k)];
        r.ab += x * y;
        r.scale += std::fabs(x * y);
        r.aa += x * x;
        r.bb += y * y;
    }
    return r;
}

struct Plan {
    apairs_context_t ctx = nullptr;
    apairs_plan_t plan = nullptr;
    ~Plan() {
        apairs_plan_destroy(plan);
        apairs_context_destroy(ctx);
    }
};

}  // namespace

TEST_CASE("estimator agrees with the CUDA occupancy API for every kernel and block", "[cuda]") {
    const apairs::DeviceLimits limits = apairs::cuda::device_limits(0);
    INFO(limits.name);
    const int metrics[] = {APAIRS_METRIC_L1, APAIRS_METRIC_L2, APAIRS_METRIC_SQEUCLIDEAN,
                           APAIRS_METRIC_LP, APAIRS_METRIC_LINF, APAIRS_METRIC_DOT,
                           APAIRS_METRIC_COSINE, APAIRS_METRIC_HAMMING};
    // d = 100 and 2000: one group of slices, and the long-sums form of the kernel; LP's
    // three functors (integer, half-integer and general p).
    for (int dtype : {APAIRS_DTYPE_F32, APAIRS_DTYPE_F64, APAIRS_DTYPE_U8}) {
        for (int metric : metrics) for (int64_t d : {100, 2000}) for (double p : {3.0, 2.5, 3.7}) {
            if (dtype == APAIRS_DTYPE_U8 && metric != APAIRS_METRIC_HAMMING) continue;
            if (metric != APAIRS_METRIC_LP && p != 3.0) continue;
            const apairs::pairwise::Problem pb = apairs::pairwise::make_problem(metric, p, dtype, 1000, 1000, d, d, d, 1000);
            const apairs::KernelAttributes ka = apairs::pairwise::kernel_attributes(pb);
            // Every block size the plan may pick, not only the one it picked.
            for (int r = 1; r * 32 <= ka.max_threads_per_block; ++r) {
                CAPTURE(metric, p, dtype, d, r, ka.regs_per_thread);
                CHECK(apairs::occupancy_for(limits, ka, 32 * r).blocks_per_sm ==
                      apairs::pairwise::cuda_blocks_per_sm(pb, r));
            }
            for (double target : {0.0, 0.25, 0.5, 1.0}) {
                const apairs::pairwise::CudaConfig c = apairs::pairwise::plan_cuda(pb, 0, target);
                CAPTURE(metric, p, dtype, d, target, c.warps, c.choice.reason);
                CHECK(c.choice.chosen.blocks_per_sm == c.cuda_blocks_per_sm);
                CHECK(c.choice.chosen.block_threads == 32 * c.warps);
                if (target > 0 && target <= c.choice.max_reachable) {
                    CHECK(c.choice.chosen.occupancy >= target - 1e-9);
                }
            }
        }
    }
}

// Grids smaller than the tile count (the plan launches one block a tile up to 2^31 - 1
// tiles; beyond that the blocks stride over the tiles), forced through the internal API:
// one block for all, grids that divide the tile count and grids that do not, in both
// forms of the kernel (d <= 1024, and the long-sums form past it, the last group
// partial), for the metrics with three levels of sums and for one (LINF). Every grid
// gives the bits of one block a tile, and L1 its bound.
TEMPLATE_TEST_CASE("grids smaller than the tile count give the bits of one block a tile", "[cuda]", float, double) {
    using T = TestType;
    const int32_t dtype = sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-1, 1);
    struct Case {
        int32_t metric;
        double p;
        int64_t d;
    };
    for (const Case c : {Case{APAIRS_METRIC_LINF, 0, 37}, Case{APAIRS_METRIC_L1, 0, 37}, Case{APAIRS_METRIC_L1, 0, 1100}, Case{APAIRS_METRIC_L1, 0, 4131},
                         Case{APAIRS_METRIC_L2, 0, 2100}, Case{APAIRS_METRIC_SQEUCLIDEAN, 0, 1100},
                         Case{APAIRS_METRIC_LP, 3, 2100}, Case{APAIRS_METRIC_LP, 2.5, 1100}, Case{APAIRS_METRIC_LP, 3.7, 1100}}) {
        const int64_t n1 = 301, n2 = 149, d = c.d, lda = d + 1, ldd = n2 + 3;
        INFO("metric " << c.metric << " p " << c.p << ", d = " << d);
        std::vector<T> A(size_t(n1 * lda)), B(size_t(n2 * lda));
        for (auto &x : A) x = T(u(rng));
        for (auto &x : B) x = T(u(rng));
        const apairs::pairwise::Problem pb = apairs::pairwise::make_problem(c.metric, c.p, dtype, n1, n2, d, lda, lda, ldd);
        apairs::pairwise::CudaConfig cfg = apairs::pairwise::plan_cuda(pb, 0, 0);
        cfg.gemm.reset();  // float L2 and SQEUCLIDEAN: the tile kernel, not the double GEMM
        cfg.l2_rows = 0;
        REQUIRE(cfg.ntiles > 3);
        auto run = [&](int64_t grid) {
            std::vector<T> D(size_t(n1 * ldd), std::numeric_limits<T>::quiet_NaN());
            cfg.grid = grid;
            apairs::pairwise::execute_cuda(pb, cfg, nullptr, A.data(), B.data(), D.data());
            return D;
        };
        const std::vector<T> whole = run(cfg.ntiles);
        for (int64_t grid : {int64_t(1), int64_t(2), int64_t(7), cfg.ntiles - 1}) {
            INFO("grid " << grid << " of " << cfg.ntiles << " tiles");
            const std::vector<T> D = run(grid);
            for (int64_t i = 0; i < n1; ++i)
                for (int64_t j = 0; j < ldd; ++j) {
                    const size_t at = size_t(i * ldd + j);
                    CAPTURE(i, j);
                    if (j >= n2) {
                        REQUIRE((std::isnan(whole[at]) && std::isnan(D[at])));
                        continue;
                    }
                    REQUIRE(!std::isnan(D[at]));
                    REQUIRE(std::memcmp(&whole[at], &D[at], sizeof(T)) == 0);
                }
        }
        if (c.metric == APAIRS_METRIC_L1)  // and the values, against long double
            for (int64_t i = 0; i < n1; ++i)
                for (int64_t j = 0; j < n2; ++j) {
                    long double s = 0;
                    for (int64_t k = 0; k < d; ++k) s += std::fabs((long double)A[size_t(i * lda + k)] - B[size_t(j * lda + k)]);
                    CAPTURE(i, j);
                    REQUIRE(std::fabs(whole[size_t(i * ldd + j)] - s) <=
                            apairs::pairwise::error_bound(APAIRS_METRIC_L1, 1, std::ldexp(1.0L, sizeof(T) == 4 ? -24 : -53), d, s));
                }
    }
}

TEST_CASE("device, mixed and staged memory on a stream of the caller agree with the host", "[cuda]") {
    const int64_t n1 = 131, n2 = 67, d = 45;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> A(n1 * d), B(n2 * d), D(n1 * n2), ref(n1 * n2);
    for (auto &x : A) x = u(rng);
    for (auto &x : B) x = u(rng);

    Plan p;
    REQUIRE(apairs_context_create(&p.ctx, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
    cudaStream_t stream;
    cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    REQUIRE(apairs_context_set_stream(p.ctx, stream) == APAIRS_SUCCESS);
    REQUIRE(apairs_plan_create_pairwise(&p.plan, p.ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n1,
                                        n2, d, d, d, n2) == APAIRS_SUCCESS);
    // The host path (staged) is the reference for the device path.
    REQUIRE(apairs_plan_execute(p.plan, A.data(), B.data(), ref.data()) == APAIRS_SUCCESS);

    {  // The staged GPU result agrees with the host backend within the header's L1 bound.
        Plan h;
        std::vector<float> href(ref.size());
        REQUIRE(apairs_context_create(&h.ctx, APAIRS_BACKEND_HOST, 0) == APAIRS_SUCCESS);
        REQUIRE(apairs_plan_create_pairwise(&h.plan, h.ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32,
                                            n1, n2, d, d, d, n2) == APAIRS_SUCCESS);
        REQUIRE(apairs_plan_execute(h.plan, A.data(), B.data(), href.data()) == APAIRS_SUCCESS);
        const double bound = 2 * (d + 4) * std::ldexp(1.0, -24);
        for (size_t k = 0; k < ref.size(); ++k) {
            CAPTURE(k, ref[k], href[k]);
            REQUIRE(std::fabs(ref[k] - href[k]) <= bound * href[k]);
        }
    }

    float *dA, *dB, *dD;
    cuda_ok(cudaMalloc(&dA, A.size() * 4));
    cuda_ok(cudaMalloc(&dB, B.size() * 4));
    cuda_ok(cudaMalloc(&dD, D.size() * 4));
    cuda_ok(cudaMemcpy(dA, A.data(), A.size() * 4, cudaMemcpyHostToDevice));
    cuda_ok(cudaMemcpy(dB, B.data(), B.size() * 4, cudaMemcpyHostToDevice));
    cuda_ok(cudaMemset(dD, 0xff, D.size() * 4));  // NaN poison
    REQUIRE(apairs_plan_execute(p.plan, dA, dB, dD) == APAIRS_SUCCESS);
    cuda_ok(cudaMemcpyAsync(D.data(), dD, D.size() * 4, cudaMemcpyDeviceToHost, stream));
    cuda_ok(cudaStreamSynchronize(stream));
    for (size_t k = 0; k < D.size(); ++k) {
        CAPTURE(k);
        REQUIRE(D[k] == ref[k]);  // same kernel, same order: bitwise equal
    }

    // Mixed: device A and B, host D (staged back, synchronous).
    std::vector<float> D2(D.size(), std::nanf(""));
    REQUIRE(apairs_plan_execute(p.plan, dA, dB, D2.data()) == APAIRS_SUCCESS);
    CHECK(std::memcmp(D2.data(), ref.data(), D2.size() * 4) == 0);

    // The host backend refuses device memory and writes nothing.
    Plan h;
    REQUIRE(apairs_context_create(&h.ctx, APAIRS_BACKEND_HOST, 0) == APAIRS_SUCCESS);
    REQUIRE(apairs_plan_create_pairwise(&h.plan, h.ctx, APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n1,
                                        n2, d, d, d, n2) == APAIRS_SUCCESS);
    std::vector<float> D3(D.size(), std::nanf(""));
    CHECK(apairs_plan_execute(h.plan, dA, B.data(), D3.data()) == APAIRS_ERROR_INVALID_POINTER);
    CHECK(std::string(apairs_last_error()).find("A is CUDA device memory") != std::string::npos);
    for (float x : D3) REQUIRE(std::isnan(x));

    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
    cudaStreamDestroy(stream);
}

TEST_CASE("n1 * n2 beyond 2^31 outputs: 64-bit indexing on the device", "[cuda][large]") {
    // n1 * n2 = 2^31 + ... outputs: exercises 64-bit output indexing on the device.
    const int64_t n1 = 47000, n2 = 46000, d = 3;
    REQUIRE(n1 * n2 > (int64_t(1) << 31));
    Plan p;
    REQUIRE(apairs_context_create(&p.ctx, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
    REQUIRE(apairs_plan_create_pairwise(&p.plan, p.ctx, APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8,
                                        n1, n2, d, d, d, n2) == APAIRS_SUCCESS);
    std::mt19937 rng(std::random_device{}());
    std::vector<uint8_t> A(n1 * d), B(n2 * d);
    for (auto &x : A) x = rng() % 3;
    for (auto &x : B) x = rng() % 3;
    uint8_t *dA, *dB;
    int32_t *dD;
    cuda_ok(cudaMalloc(&dA, A.size()));
    cuda_ok(cudaMalloc(&dB, B.size()));
    cuda_ok(cudaMalloc(&dD, size_t(n1 * n2) * 4));
    cuda_ok(cudaMemcpy(dA, A.data(), A.size(), cudaMemcpyHostToDevice));
    cuda_ok(cudaMemcpy(dB, B.data(), B.size(), cudaMemcpyHostToDevice));
    cuda_ok(cudaMemset(dD, 0x7f, size_t(n1 * n2) * 4));
    REQUIRE(apairs_plan_execute(p.plan, dA, dB, dD) == APAIRS_SUCCESS);
    cuda_ok(cudaDeviceSynchronize());
    // Check the last rows (beyond 2^31 elements) and a sample of the rest.
    for (int64_t i : {int64_t(0), n1 / 2, n1 - 2, n1 - 1}) {
        std::vector<int32_t> row(n2);
        cuda_ok(cudaMemcpy(row.data(), dD + i * n2, n2 * 4, cudaMemcpyDeviceToHost));
        for (int64_t j = 0; j < n2; ++j) {
            int32_t ref = 0;
            for (int64_t k = 0; k < d; ++k) ref += A[i * d + k] != B[j * d + k];
            CAPTURE(i, j);
            REQUIRE(row[j] == ref);
        }
    }
    cudaFree(dA);
    cudaFree(dB);
    cudaFree(dD);
}

TEMPLATE_TEST_CASE("DOT and COSINE: cuBLAS's GEMM and the engine's own kernel (its fallback) keep the bounds",
                   "[cuda]", float, double) {
    using T = TestType;
    const int64_t n1 = 131, n2 = 67, d = 300, ldd = n2 + 3;
    const int32_t dtype = sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<T> A(n1 * d), B(n2 * d);
    for (auto &x : A) x = T(u(rng));
    for (auto &x : B) x = T(u(rng));
    std::fill(A.begin() + 5 * d, A.begin() + 6 * d, T(0));  // COSINE: an all-zero row gives 1
    const long double unit = std::ldexp(1.0L, sizeof(T) == 4 ? -24 : -53);
    for (int32_t metric : {APAIRS_METRIC_DOT, APAIRS_METRIC_COSINE}) {
        const apairs::pairwise::Problem pb = apairs::pairwise::make_problem(metric, 0, dtype, n1, n2, d, d, d, ldd);
        apairs::pairwise::CudaConfig cfg = apairs::pairwise::plan_cuda(pb, 0, 0);
        INFO("metric " << metric << ", cuBLAS: " << (cfg.gemm ? cfg.gemm->library() : "unavailable: " + cfg.gemm_unavailable));
        CHECK(cfg.gemm != nullptr);  // the device image has the toolkit's libcublas
        for (bool vendor : {true, false}) {
            INFO((vendor ? "cuBLAS" : "own kernel"));
            if (!vendor) cfg.gemm.reset();
            std::vector<T> D(size_t(n1 * ldd), std::numeric_limits<T>::quiet_NaN());
            apairs::pairwise::execute_cuda(pb, cfg, nullptr, A.data(), B.data(), D.data());
            for (int64_t i = 0; i < n1; ++i)
                for (int64_t j = 0; j < ldd; ++j) {
                    CAPTURE(i, j);
                    const T v = D[size_t(i * ldd + j)];
                    if (j >= n2) {
                        REQUIRE(std::isnan(v));  // padding untouched
                        continue;
                    }
                    const auto [ab, scale, aa, bb] = dot_sums(A, B, i, j, d);
                    if (metric == APAIRS_METRIC_DOT) {
                        REQUIRE(std::fabs((long double)v - ab) <= (d + 4) * unit * scale);
                    } else {
                        const long double c = aa == 0 ? 1 : 1 - ab / std::sqrt(aa * bb);
                        REQUIRE(std::fabs((long double)v - c) <= (2 * d + 8) * unit);
                    }
                }
        }
    }
}

// One plan whose stream is CUDA's per-thread default stream (or the legacy one), executed
// from several threads at once, each on its own arrays: cuBLAS's GEMM (one handle a plan,
// its default workspace) is queued by each thread on that thread's own stream, so the
// GEMMs run concurrently; every result must keep DOT's bound against its own thread's
// inputs (inputs scaled by the thread's number, so that another thread's partial sums
// would show). Small n1 x n2 and long rows: the shapes where a GEMM splits its sums.
TEMPLATE_TEST_CASE("one DOT plan on the per-thread stream, executed from 8 threads at once", "[cuda][threads]", float,
                   double) {
    using T = TestType;
    const int64_t n1 = 37, n2 = 29, d = 20011;
    const int threads = 8, reps = 6;
    const int32_t dtype = sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    const long double unit = std::ldexp(1.0L, sizeof(T) == 4 ? -24 : -53);
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<std::vector<T>> A(threads), B(threads);
    std::vector<std::vector<long double>> ref(threads), scale(threads);
    for (int t = 0; t < threads; ++t) {
        A[t].resize(size_t(n1 * d)), B[t].resize(size_t(n2 * d));
        for (auto &x : A[t]) x = T(u(rng) * (t + 1));
        for (auto &x : B[t]) x = T(u(rng));
        ref[t].resize(size_t(n1 * n2)), scale[t].resize(size_t(n1 * n2));
        for (int64_t i = 0; i < n1; ++i)
            for (int64_t j = 0; j < n2; ++j) {
                const DotSums s = dot_sums(A[t], B[t], i, j, d);
                ref[t][size_t(i * n2 + j)] = s.ab, scale[t][size_t(i * n2 + j)] = s.scale;
            }
    }
    for (cudaStream_t stream : {cudaStreamPerThread, cudaStreamLegacy}) {
        INFO((stream == cudaStreamPerThread ? "cudaStreamPerThread" : "cudaStreamLegacy"));
        Plan p;
        REQUIRE(apairs_context_create(&p.ctx, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
        REQUIRE(apairs_context_set_stream(p.ctx, stream) == APAIRS_SUCCESS);
        REQUIRE(apairs_plan_create_pairwise(&p.plan, p.ctx, APAIRS_METRIC_DOT, 0, dtype, n1, n2, d, d, d, n2) ==
                APAIRS_SUCCESS);
        char text[4096] = "";
        REQUIRE(apairs_plan_describe(p.plan, text, sizeof text, nullptr) == APAIRS_SUCCESS);
        INFO(text);
        CHECK(std::string(text).find("cuBLAS") != std::string::npos);
        std::vector<std::string> failures(threads);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                T *dA = nullptr, *dB = nullptr, *dD = nullptr;
                std::vector<T> D(size_t(n1 * n2));
                auto fail = [&](const std::string &why) {
                    if (failures[t].empty()) failures[t] = why;
                };
                if (cudaMalloc(&dA, A[t].size() * sizeof(T)) != cudaSuccess ||
                    cudaMalloc(&dB, B[t].size() * sizeof(T)) != cudaSuccess ||
                    cudaMalloc(&dD, D.size() * sizeof(T)) != cudaSuccess ||
                    cudaMemcpy(dA, A[t].data(), A[t].size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess ||
                    cudaMemcpy(dB, B[t].data(), B[t].size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess)
                    fail("cudaMalloc or cudaMemcpy failed");
                for (int r = 0; r < reps && failures[t].empty(); ++r) {
                    // Device arrays (returns without waiting), then host ones (staged).
                    const bool staged = r % 2 == 1;
                    std::fill(D.begin(), D.end(), std::numeric_limits<T>::quiet_NaN());
                    apairs_status_t st;
                    if (staged) {
                        st = apairs_plan_execute(p.plan, A[t].data(), B[t].data(), D.data());
                    } else {
                        cudaMemsetAsync(dD, 0xff, D.size() * sizeof(T), stream);
                        st = apairs_plan_execute(p.plan, dA, dB, dD);
                        if (st == APAIRS_SUCCESS &&
                            (cudaMemcpyAsync(D.data(), dD, D.size() * sizeof(T), cudaMemcpyDeviceToHost, stream) !=
                                 cudaSuccess ||
                             cudaStreamSynchronize(stream) != cudaSuccess))
                            fail("copying D back failed");
                    }
                    if (st != APAIRS_SUCCESS) fail(std::string("execute: ") + apairs_last_error());
                    for (size_t k = 0; k < D.size() && failures[t].empty(); ++k)
                        if (!(std::fabs((long double)D[k] - ref[t][k]) <= (d + 4) * unit * scale[t][k]))
                            fail("rep " + std::to_string(r) + (staged ? " (staged)" : " (device arrays)") + ", D[" +
                                 std::to_string(k) + "] = " + std::to_string(double(D[k])) + ", expected " +
                                 std::to_string(double(ref[t][k])));
                }
                cudaFree(dA), cudaFree(dB), cudaFree(dD);
            });
        for (auto &th : pool) th.join();
        for (int t = 0; t < threads; ++t) {
            INFO("thread " << t << ": " << failures[t]);
            CHECK(failures[t].empty());
        }
    }
}

// The tile kernel's transposed copies in chunks (CudaConfig::scratch_bytes forced small:
// rows of A against rows of B, several of each, partial last chunks; whole tiles, and
// 16-byte chunks of rows when the budget holds less than a tile): the same bits as in
// one piece, for A and B apart (B chunked, or in one piece) and for B = A (one array),
// and D's padding untouched.
TEMPLATE_TEST_CASE("the tile kernel in chunks of rows gives the bits of one piece", "[cuda]", float, double) {
    using T = TestType;
    const int32_t dtype = sizeof(T) == 4 ? APAIRS_DTYPE_F32 : APAIRS_DTYPE_F64;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-2, 2);
    // d = 1100: the long-sums form of the kernel (past one group of 1024 dimensions).
    for (int32_t metric : {APAIRS_METRIC_L1, APAIRS_METRIC_LINF, APAIRS_METRIC_LP}) for (int64_t d : {77, 1100}) {
        for (int64_t nb : {211, 50, 0}) {  // 0: B = A
            const bool same = nb == 0;
            const int64_t n1 = 389, n2 = same ? n1 : nb, lda = d + 3, ldd = n2 + 5;
            INFO("metric " << metric << ", d = " << d << (same ? ", B = A" : ", n2 = " + std::to_string(nb)));
            std::vector<T> A(size_t(n1 * lda)), Bv(size_t(n2 * lda));
            for (auto &x : A) x = T(u(rng));
            for (auto &x : Bv) x = T(u(rng));
            const T *B = same ? A.data() : Bv.data();
            const apairs::pairwise::Problem pb =
                apairs::pairwise::make_problem(metric, 3.0, dtype, n1, n2, d, lda, lda, ldd);
            apairs::pairwise::CudaConfig cfg = apairs::pairwise::plan_cuda(pb, 0, 0);
            T *dA = nullptr, *dD = nullptr;
            cuda_ok(cudaMalloc(&dA, A.size() * sizeof(T)));
            cuda_ok(cudaMalloc(&dD, size_t(n1 * ldd) * sizeof(T)));
            cuda_ok(cudaMemcpy(dA, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
            T *dB = dA;
            if (!same) {
                cuda_ok(cudaMalloc(&dB, Bv.size() * sizeof(T)));
                cuda_ok(cudaMemcpy(dB, Bv.data(), Bv.size() * sizeof(T), cudaMemcpyHostToDevice));
            }
            auto run = [&](int64_t scratch) {
                std::vector<T> D(size_t(n1 * ldd), std::numeric_limits<T>::quiet_NaN());
                cuda_ok(cudaMemcpy(dD, D.data(), D.size() * sizeof(T), cudaMemcpyHostToDevice));
                cfg.scratch_bytes = scratch;
                apairs::pairwise::execute_cuda(pb, cfg, nullptr, dA, dB, dD);
                cuda_ok(cudaDeviceSynchronize());
                cuda_ok(cudaMemcpy(D.data(), dD, D.size() * sizeof(T), cudaMemcpyDeviceToHost));
                return D;
            };
            const std::vector<T> whole = run(int64_t(1) << 30);
            // Room for about 2.5 tiles of rows: chunks of one tile of A and of one or two of
            // B; then for 2 x 16 bytes of rows and a row more: chunks of 16 bytes of rows.
            const int64_t row = (d + 31) / 32 * 32 * int64_t(sizeof(T)), v = 16 / int64_t(sizeof(T));
            for (int64_t scratch : {(2 * cfg.bm + cfg.bm / 2) * row, (2 * v + 1) * row}) {
                INFO("scratch " << scratch);
                const std::vector<T> chunked = run(scratch);
                for (int64_t i = 0; i < n1; ++i)
                    for (int64_t j = 0; j < ldd; ++j) {
                        CAPTURE(i, j);
                        const size_t at = size_t(i * ldd + j);
                        if (j >= n2) {
                            REQUIRE((std::isnan(whole[at]) && std::isnan(chunked[at])));
                            continue;
                        }
                        REQUIRE(std::memcmp(&whole[at], &chunked[at], sizeof(T)) == 0);
                        // and the value itself, against a long-double reference (L1 only: the
                        // others' bounds are checked elsewhere)
                        if (metric == APAIRS_METRIC_L1) {
                            long double s = 0;
                            for (int64_t k = 0; k < d; ++k) s += std::fabs((long double)A[size_t(i * lda + k)] - (long double)B[size_t(j * lda + k)]);
                            REQUIRE(std::fabs((long double)whole[at] - s) <= (d + 4) * std::ldexp(1.0L, sizeof(T) == 4 ? -24 : -53) * s * 2);
                        }
                    }
            }
            cuda_ok(cudaFree(dA));
            cuda_ok(cudaFree(dD));
            if (!same) cuda_ok(cudaFree(dB));
        }
    }
}

// APAIRS_OPTION_TF32: float DOT and COSINE on the TF32 tensor cores keep apairs.h's TF32
// bounds, differ from the float path (the option took effect), and say so in the plan's
// description; double ignores the option (its exact bound, "never TF32").
TEST_CASE("APAIRS_OPTION_TF32: float DOT and COSINE on the TF32 tensor cores keep their bounds", "[cuda]") {
    const int64_t n1 = 131, n2 = 67, d = 997, ldd = n2 + 3;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<float> A(n1 * d), B(n2 * d);
    for (auto &x : A) x = float(u(rng));
    for (auto &x : B) x = float(u(rng));
    std::vector<double> A64(A.begin(), A.end()), B64(B.begin(), B.end());
    const long double unit = std::ldexp(1.0L, -24);
    for (int32_t metric : {APAIRS_METRIC_DOT, APAIRS_METRIC_COSINE}) {
        INFO("metric " << metric);
        Plan tf32, exact, dbl;
        for (Plan *p : {&tf32, &exact, &dbl}) {
            REQUIRE(apairs_context_create(&p->ctx, APAIRS_BACKEND_CUDA, 0) == APAIRS_SUCCESS);
            REQUIRE(apairs_context_set_option(p->ctx, APAIRS_OPTION_TF32, p == &exact ? 0 : 1) == APAIRS_SUCCESS);
            REQUIRE(apairs_plan_create_pairwise(&p->plan, p->ctx, metric, 0, p == &dbl ? APAIRS_DTYPE_F64 : APAIRS_DTYPE_F32,
                                                n1, n2, d, d, d, ldd) == APAIRS_SUCCESS);
        }
        auto describe = [](const Plan &p) {
            char buf[4096];
            REQUIRE(apairs_plan_describe(p.plan, buf, sizeof buf, nullptr) == APAIRS_SUCCESS);
            return std::string(buf);
        };
        INFO(describe(tf32));
        CHECK(describe(tf32).find("TF32 tensor cores") != std::string::npos);
        CHECK(describe(exact).find("never TF32") != std::string::npos);
        CHECK(describe(dbl).find("never TF32") != std::string::npos);
        std::vector<float> Dt(size_t(n1 * ldd), std::numeric_limits<float>::quiet_NaN()), De = Dt;
        std::vector<double> Dd(size_t(n1 * ldd), std::numeric_limits<double>::quiet_NaN());
        REQUIRE(apairs_plan_execute(tf32.plan, A.data(), B.data(), Dt.data()) == APAIRS_SUCCESS);
        REQUIRE(apairs_plan_execute(exact.plan, A.data(), B.data(), De.data()) == APAIRS_SUCCESS);
        REQUIRE(apairs_plan_execute(dbl.plan, A64.data(), B64.data(), Dd.data()) == APAIRS_SUCCESS);
        int64_t differ = 0;
        long double worst = 0;
        for (int64_t i = 0; i < n1; ++i)
            for (int64_t j = 0; j < ldd; ++j) {
                CAPTURE(i, j);
                const size_t at = size_t(i * ldd + j);
                if (j >= n2) {
                    REQUIRE((std::isnan(Dt[at]) && std::isnan(De[at]) && std::isnan(Dd[at])));  // padding untouched
                    continue;
                }
                const auto [ab, scale, aa, bb] = dot_sums(A, B, i, j, d);
                const long double want = metric == APAIRS_METRIC_DOT ? ab : 1 - ab / std::sqrt(aa * bb);
                using apairs::pairwise::error_bound;
                const long double bound = error_bound(metric, 0, unit, d, want, scale, 0, true);
                const long double exact_bound = error_bound(metric, 0, unit, d, want, scale);
                const long double bound64 = error_bound(metric, 0, std::ldexp(1.0L, -53), d, want, scale);
                REQUIRE(std::fabs((long double)Dt[at] - want) <= bound);
                REQUIRE(std::fabs((long double)De[at] - want) <= exact_bound);
                REQUIRE(std::fabs((long double)Dd[at] - want) <= bound64);
                worst = std::max(worst, std::fabs((long double)Dt[at] - want) / bound);
                differ += Dt[at] != De[at];
            }
        INFO("worst TF32 error / bound " << double(worst) << ", entries differing from float: " << differ);
        CHECK(differ > n1 * n2 / 2);  // the TF32 path ran (its errors are ~2^-11, float's ~2^-24)
    }
}

// The double GEMM's scratch stays within what apairs.h states: each chunk's centred rows
// of A and its products with B at most 512 MiB (or one row's), B centred with its norms
// at most 1 GiB (else the tile kernels; n2 = 131072 at d = 1024 is 2^30 bytes of B alone,
// 130944 the most that fit with the norms). Plans only: nothing is allocated for A.
TEST_CASE("float L2 through the double GEMM keeps its scratch within apairs.h's bounds", "[cuda]") {
    struct Shape {
        int64_t n1, n2, d;
    };
    for (const Shape sh : {Shape{1000000, 64, 8192}, Shape{300000, 4, 1000}, Shape{5000, 1000000, 300},
                           Shape{3, 2, 1 << 22}, Shape{70000, 70000, 256}, Shape{3, 131072, 1024},
                           Shape{3, 130944, 1024}}) {
        INFO("n1 " << sh.n1 << ", n2 " << sh.n2 << ", d " << sh.d);
        const apairs::pairwise::Problem pb =
            apairs::pairwise::make_problem(APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, sh.n1, sh.n2, sh.d, sh.d, sh.d, sh.n2);
        const apairs::pairwise::CudaConfig cfg = apairs::pairwise::plan_cuda(pb, 0, 0);
        INFO("cuBLAS: " << (cfg.gemm ? cfg.gemm->library() : "unavailable: " + cfg.gemm_unavailable));
        const int64_t dp = (sh.d + 31) / 32 * 32, mib = int64_t(1) << 20;
        if (sh.n2 * (dp + 1) * 8 > 1024 * mib) {
            CHECK(cfg.gemm == nullptr);
            CHECK(cfg.l2_rows == 0);
            continue;
        }
        REQUIRE(cfg.gemm != nullptr);
        REQUIRE(cfg.l2_rows >= 1);
        CHECK(cfg.l2_rows <= sh.n1);
        CHECK((cfg.l2_rows == 1 || cfg.l2_rows * (dp + 1) * 8 <= 512 * mib));
        CHECK((cfg.l2_rows == 1 || cfg.l2_rows * sh.n2 * 8 <= 512 * mib));
    }
}

// Float L2 and SQEUCLIDEAN with d >= 256 through the double GEMM (apairs.h: relative error
// <= 2^-24 + 2^-30): rows offset by 100 and by 1000, near duplicates (copies moved by up
// to 1e-3 and by one ulp), exact duplicates, a zero distance to A's first row (the centre),
// non-finite coordinates (recomputed directly: inf, NaN, the same infinity), odd sizes and
// a chunk size forced small (several chunks, a partial last one); against a long-double
// reference, and the padding of D untouched. The tile kernel (the fallback) stays within
// its own (d + 4) u.
TEST_CASE("float L2 and SQEUCLIDEAN through the double GEMM keep 2^-24 + 2^-30", "[cuda]") {
    const int64_t n1 = 97, n2 = 131, ldd = n2 + 2;
    std::mt19937 rng(std::random_device{}());
    std::uniform_real_distribution<double> u(-1, 1);
    for (int64_t d : {int64_t(256), int64_t(301)}) {
        for (double offset : {0.0, 100.0, 1000.0}) {
            std::vector<float> A(size_t(n1 * d)), B(size_t(n2 * d));
            for (auto &x : A) x = float(offset + u(rng));
            for (auto &x : B) x = float(offset + u(rng));
            for (int64_t j = 0; j < 40; ++j) {  // B rows 0..39: near copies of A rows
                const int64_t i = (j * 7) % n1;
                for (int64_t k = 0; k < d; ++k) {
                    const float a = A[size_t(i * d + k)];
                    B[size_t(j * d + k)] = j < 10   ? a                                                     // exact
                                           : j < 25 ? std::nextafter(a, (k % 2) ? 1e30f : -1e30f)          // 1 ulp
                                                    : float(a + 1e-3 * u(rng));                             // 1e-3
                }
            }
            for (int64_t k = 0; k < d; ++k) B[size_t(45 * d + k)] = A[size_t(k)];  // A's first row: s = 0
            A[size_t(3 * d + 5)] = INFINITY;
            B[size_t(50 * d + 5)] = INFINITY;   // (3, 50): inf - inf = NaN
            B[size_t(51 * d + 7)] = -INFINITY;  // (i, 51): inf
            A[size_t(4 * d + 1)] = NAN;
            for (int32_t metric : {APAIRS_METRIC_L2, APAIRS_METRIC_SQEUCLIDEAN}) {
                const apairs::pairwise::Problem pb =
                    apairs::pairwise::make_problem(metric, 0, APAIRS_DTYPE_F32, n1, n2, d, d, d, ldd);
                apairs::pairwise::CudaConfig cfg = apairs::pairwise::plan_cuda(pb, 0, 0);
                INFO("d " << d << ", offset " << offset << ", metric " << metric << ", cuBLAS: "
                          << (cfg.gemm ? cfg.gemm->library() : "unavailable: " + cfg.gemm_unavailable));
                REQUIRE(cfg.gemm != nullptr);  // the device image has the toolkit's libcublas
                REQUIRE(cfg.l2_rows == n1);
                for (int64_t rows : {n1, int64_t(13)}) {  // one chunk; eight, the last partial
                    for (bool vendor : {true, false}) {
                        if (!vendor && rows != n1) continue;
                        INFO((vendor ? "double GEMM" : "tile kernel") << ", " << rows << " rows a chunk");
                        apairs::pairwise::CudaConfig c = cfg;
                        c.l2_rows = vendor ? rows : 0;
                        if (!vendor) c.gemm.reset();
                        std::vector<float> D(size_t(n1 * ldd), std::numeric_limits<float>::quiet_NaN());
                        apairs::pairwise::execute_cuda(pb, c, nullptr, A.data(), B.data(), D.data());
                        const long double bound = vendor ? std::ldexp(1.0L, -24) + std::ldexp(1.0L, -30)
                                                         : (d + 4) * std::ldexp(1.0L, -24);
                        for (int64_t i = 0; i < n1; ++i)
                            for (int64_t j = 0; j < ldd; ++j) {
                                CAPTURE(i, j);
                                const float v = D[size_t(i * ldd + j)];
                                if (j >= n2) {
                                    REQUIRE(std::isnan(v));  // padding untouched
                                    continue;
                                }
                                long double s = 0;
                                for (int64_t k = 0; k < d; ++k) {
                                    const long double t = (long double)A[size_t(i * d + k)] - B[size_t(j * d + k)];
                                    s += t * t;
                                }
                                if (metric == APAIRS_METRIC_L2) s = std::sqrt(s);
                                if (std::isnan(s)) {
                                    REQUIRE(std::isnan(v));
                                } else if (std::isinf(s) || s == 0) {
                                    REQUIRE((long double)v == s);
                                } else {
                                    REQUIRE(std::fabs((long double)v - s) <= bound * s);
                                }
                            }
                    }
                }
            }
        }
    }
}
