// apairs_bench: times apairs_plan_execute on the cases of the 'pairwise' suite of
// shared/bench/peers.py, and apairs_plan_execute_gemm on the batched gemm rows of its
// 'batched' suite (--suite), and prints its rows in the same format, so that the two
// outputs can be read side by side.
//
// CUDA backend: A, B and D are device memory (cudaMalloc, filled once from a host
// buffer of uniform random values), so execute queues the kernel and returns; it is
// timed with CUDA events around each call on the plan's stream, after warm-up, and the
// median of the repeats is reported. Host backend: host memory, steady clock, and small
// sizes (a smoke test).
//
// Built with the CUDA part when meson defines APAIRS_BENCH_CUDA=1 (have_cuda and
// cuda_runtime.h found); without it, only the host backend is available.
#include <apairs.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef APAIRS_BENCH_CUDA
#define APAIRS_BENCH_CUDA 0
#endif
#if APAIRS_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#include "output_file.hpp"
#include "pairwise/bounds.hpp"

namespace {

const char *kUsage = R"(usage: apairs_bench [options]

Times libapairs on the cases of the 'pairwise' suite of shared/bench/peers.py (and,
with --suite batched or all, on the batched gemm rows of its 'batched' suite) and
prints one line per case in peers.py's format:
    name  shape  median-ms ms  rate T pair-dims/s      (rate = n1*n2*d / time)
followed by a line starting with '#': the plan's describe() line, the plan time and a
spot check of 16 entries of D against a long-double reference (the error as a fraction
of the bound documented in apairs.h; 'CHECK FAILED' if it is exceeded).

Cases (CUDA; n = 6000, or 2000 with --quick):
  l1, l2, lp p=3, lp p=2.5, linf   float32  n x n d=5419
  l1, l2                           float64  n x n d=5419
  l1                               float32  n/3 x n/3 d=40000
  l1, l2                           float32  16384 x 16384 d=128
  dot                              float32  n x n d=5419
  hamming (0/1/2 genotypes)        uint8    8192 x 8192 d=4096 (4096 x 4096 with --quick)
Host backend (a smoke test, --quick or not): n = 1000, d = 512 for the d=5419 cases,
333 x 333 d=4000, 2048 x 2048 d=128, hamming 1024 x 1024 d=512; 3 repeats after one
warm-up call, or with --quick one call and no warm-up.

CUDA timing: A, B, D in device memory filled once with uniform random values in
[0, 1) (hamming: 0/1/2), warm-up calls first, then CUDA events around each
apairs_plan_execute, median of the repeats (5; 3 for hamming), like peers.py.
Host timing: steady clock around each call, same repeats.

Batched suite (--suite batched): gemm C_e = A_e B_e (alpha = 1, beta = 0) for float64
then float32, n = 2, 4, 8, 16, 32, 64, 128 (m = n = k), B = max(1, 2^30 / (n*n*es) / 4)
elements (es: element size; 2^28 with --quick), AoS row-major (ld = n, stride = n*n) and
SoA (ld = n, batch stride = B rounded up to 32); rows named 'apairs gemm AoS float64',
shaped 'n=4 B=16777216', rate in GB/s counting 3*B*n*n*es bytes, as peers.py's
'gemm (bmm, cuBLAS)' rows. The '#' line holds the spot check (C entries of a few
elements against a long-double reference, as a fraction of apairs.h's bound
(k + 2) u sum |a b|), the fraction of the bandwidth bound reached (those bytes at the
copy bandwidth) and the plan's describe() line. Timing: device arrays, one warm-up call,
CUDA events, median of 5. Host backend: a smoke test, n = 8 and B = 10^4.

Options:
  --suite S        pairwise (default) | batched | all
  --copy-gbs X     the device's copy bandwidth in GB/s (read + write bytes per second)
                   for the batched suite's bandwidth-bound fraction; default: measured
                   here with a 1 GiB device-to-device cudaMemcpy timed by CUDA events
                   (median of 5), and printed
  --backend B      cuda | host (default: cuda when a CUDA device is visible, else host)
  --device N       CUDA device ordinal (default 0)
  --quick          smaller CUDA cases (as peers.py --quick)
  --only S         run only the cases whose name or shape contains S (e.g. 'float64',
                   'hamming', 'd=128'); may be given several times (any match)
  --reps N         repeats per case instead of the defaults
  --occupancy X    set APAIRS_OPTION_OCCUPANCY_TARGET on the context (CUDA)
  --threads N      set APAIRS_OPTION_HOST_THREADS on the context (host)
  --json F         also write the rows to F as peers.py does:
                   {"device": ..., "rows": [{"suite", "name", "shape", "ms", "rate",
                   "unit"}, ...]} (rows here also carry "plan" and "check"). F is
                   written as a temporary file beside it, created before the first
                   case runs, then renamed over F: complete or, on error, untouched.
  --list           list the cases and exit
  -h, --help       this text

A case that cannot allocate its memory prints a line saying so and the run goes on;
a failing libapairs call prints its status and apairs_last_error, and the run goes on;
any other CUDA error ends the run with exit status 1.
)";

// ---------------------------------------------------------------------------------
// Cases and data

struct Case {
    std::string name;  // "apairs l1 float32"
    int32_t metric;
    double p;
    int32_t dtype;
    int64_t n1, n2, d;
    int reps, warm;
    std::string shape() const { return fmt::format("{}x{} d={}", n1, n2, d); }
};

const char *dtype_name(int32_t t) {
    switch (t) {
    case APAIRS_DTYPE_F32: return "float32";
    case APAIRS_DTYPE_F64: return "float64";
    case APAIRS_DTYPE_U8: return "uint8";
    }
    return "?";
}

std::size_t in_size(int32_t t) { return t == APAIRS_DTYPE_F64 ? 8 : t == APAIRS_DTYPE_F32 ? 4 : 1; }
std::size_t out_size(int32_t t) { return t == APAIRS_DTYPE_F64 ? 8 : 4; }  // U8 hamming: int32

std::vector<Case> make_cases(bool quick, bool host) {
    std::vector<Case> cs;
    const int64_t n = host ? 1000 : quick ? 2000 : 6000;
    const int64_t d = host ? 512 : 5419;
    auto add = [&](const std::string &what, int32_t metric, double p, int32_t dtype, int64_t n1, int64_t n2,
                   int64_t dd, int reps = 5, int warm = 1) {
        cs.push_back(Case{fmt::format("apairs {} {}", what, dtype_name(dtype)), metric, p, dtype, n1, n2, dd,
                          reps, warm});
    };
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n, n, d);
    add("l2", APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, n, n, d);
    add("lp p=3", APAIRS_METRIC_LP, 3.0, APAIRS_DTYPE_F32, n, n, d);
    add("lp p=2.5", APAIRS_METRIC_LP, 2.5, APAIRS_DTYPE_F32, n, n, d);
    add("linf", APAIRS_METRIC_LINF, 0, APAIRS_DTYPE_F32, n, n, d);
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F64, n, n, d);
    add("l2", APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, n, n, d);
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n / 3, n / 3, host ? 4000 : 40000);
    const int64_t big = host ? 2048 : 16384;
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, big, big, 128);
    add("l2", APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, big, big, 128);
    add("dot", APAIRS_METRIC_DOT, 0, APAIRS_DTYPE_F32, n, n, d, 5, 2);
    const int64_t hn = host ? 1024 : quick ? 4096 : 8192, hd = host ? 512 : 4096;
    add("hamming", APAIRS_METRIC_HAMMING, 0, APAIRS_DTYPE_U8, hn, hn, hd, 3, 1);
    return cs;
}

// Counter-based generator: element k of stream `seed` depends only on (seed, k), so the
// spot check can regenerate any input element without keeping the inputs.
inline uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
inline uint64_t draw(uint64_t seed, uint64_t k) { return mix64(mix64(seed) ^ (k * 0xd1342543de82ef95ULL)); }

// The value, as long double, of element k of stream seed for dtype t: uniform in [0, 1)
// (never all zeros), or 0/1/2 for uint8.
long double value(int32_t t, uint64_t seed, uint64_t k) {
    const uint64_t h = draw(seed, k);
    switch (t) {
    case APAIRS_DTYPE_F32: return static_cast<float>(h >> 40) * 0x1p-24f;
    case APAIRS_DTYPE_F64: return static_cast<double>(h >> 11) * 0x1p-53;
    default: return static_cast<long double>(((h >> 32) * 3) >> 32);
    }
}

void fill(int32_t t, uint64_t seed, void *buf, uint64_t count) {
    for (uint64_t k = 0; k < count; ++k) {
        const uint64_t h = draw(seed, k);
        switch (t) {
        case APAIRS_DTYPE_F32: static_cast<float *>(buf)[k] = static_cast<float>(h >> 40) * 0x1p-24f; break;
        case APAIRS_DTYPE_F64: static_cast<double *>(buf)[k] = static_cast<double>(h >> 11) * 0x1p-53; break;
        default: static_cast<uint8_t *>(buf)[k] = static_cast<uint8_t>(((h >> 32) * 3) >> 32); break;
        }
    }
}

struct HostBuf {
    std::unique_ptr<unsigned char, void (*)(void *)> p{nullptr, std::free};
    explicit HostBuf(std::size_t bytes) {
        void *q = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
        if (!q) throw std::bad_alloc();
        p.reset(static_cast<unsigned char *>(q));
    }
    void *get() const { return p.get(); }
};

// ---------------------------------------------------------------------------------
// Spot check: 16 entries of D against a long-double reference; the error is reported as
// a fraction of the bound apairs.h documents, and fails above twice that bound.

constexpr uint64_t kSeedA = 1, kSeedB = 2;

struct Check {
    double worst = 0;  // largest |err| / bound seen
    int checked = 0;
    bool failed = false;
    std::string first_failure;
};

void check_entry(const Case &c, int64_t i, int64_t j, double got, Check &ck) {
    long double acc = 0, absdot = 0;
    long double df_min = std::numeric_limits<long double>::infinity(), df_max = 0;  // nonzero |a_k - b_k|
    int64_t diff = 0;
    const long double p = c.metric == APAIRS_METRIC_L2 ? 2.0L : static_cast<long double>(c.p);
    for (int64_t k = 0; k < c.d; ++k) {
        const long double a = value(c.dtype, kSeedA, uint64_t(i * c.d + k));
        const long double b = value(c.dtype, kSeedB, uint64_t(j * c.d + k));
        // The library forms a - b in the element type: so does the reference.
        long double df = c.dtype == APAIRS_DTYPE_F32 ? static_cast<long double>(static_cast<float>(a - b))
                                                       : static_cast<long double>(static_cast<double>(a - b));
        df = std::fabs(df);
        if (df != 0) {
            df_min = std::min(df_min, df);
            df_max = std::max(df_max, df);
        }
        switch (c.metric) {
        case APAIRS_METRIC_L1: acc += df; break;
        case APAIRS_METRIC_L2: acc += df * df; break;
        case APAIRS_METRIC_LP: acc += std::pow(df, p); break;
        case APAIRS_METRIC_LINF: acc = std::max(acc, df); break;
        case APAIRS_METRIC_DOT:
            acc += a * b;
            absdot += std::fabs(a * b);
            break;
        case APAIRS_METRIC_HAMMING: diff += a != b; break;
        }
    }
    long double ref = acc;
    if (c.metric == APAIRS_METRIC_L2) ref = std::sqrt(acc);
    if (c.metric == APAIRS_METRIC_LP) ref = std::pow(acc, 1.0L / p);
    if (c.metric == APAIRS_METRIC_HAMMING) ref = static_cast<long double>(diff);

    // The bound apairs.h states, as the library writes it down (src/pairwise/bounds.hpp).
    const long double u = c.dtype == APAIRS_DTYPE_F64 ? 0x1p-53L : 0x1p-24L;
    const long double max_log = df_max > 0 ? std::max(std::fabs(std::log(df_min)), std::fabs(std::log(df_max))) : 0;
    long double bound = apairs::pairwise::error_bound(c.metric, p, u, c.d, ref, absdot, max_log);
    bound += 1e-30L;
    const long double err = std::fabs(static_cast<long double>(got) - ref);
    // err / bound; failing above 2 leaves room for the reference's own rounding.
    const double frac = std::isnan(got) ? std::numeric_limits<double>::infinity() : static_cast<double>(err / bound);
    ++ck.checked;
    if (c.metric == APAIRS_METRIC_HAMMING) {
        if (err != 0 || std::isnan(got)) {
            ck.worst = std::numeric_limits<double>::infinity();
            if (!ck.failed) ck.first_failure = fmt::format("D[{}][{}] = {} but the count is {}", i, j, got, double(ref));
            ck.failed = true;
        }
        return;
    }
    ck.worst = std::max(ck.worst, frac);
    if (!(frac <= 2.0)) {
        if (!ck.failed)
            ck.first_failure = fmt::format("D[{}][{}] = {:.17g}, reference {:.17g}", i, j, got, double(ref));
        ck.failed = true;
    }
}

std::vector<std::pair<int64_t, int64_t>> sample_entries(const Case &c) {
    std::vector<std::pair<int64_t, int64_t>> s = {{0, 0}, {c.n1 - 1, c.n2 - 1}, {0, c.n2 - 1}, {c.n1 - 1, 0}};
    for (uint64_t k = 0; s.size() < 16; ++k)
        s.emplace_back(int64_t(draw(99, 2 * k) % uint64_t(c.n1)), int64_t(draw(99, 2 * k + 1) % uint64_t(c.n2)));
    return s;
}

double read_entry(int32_t dtype, const void *D, int64_t index) {
    switch (dtype) {
    case APAIRS_DTYPE_F32: return static_cast<const float *>(D)[index];
    case APAIRS_DTYPE_F64: return static_cast<const double *>(D)[index];
    default: return static_cast<const int32_t *>(D)[index];
    }
}

// ---------------------------------------------------------------------------------
// Errors

struct Skip : std::runtime_error {  // the case cannot allocate: say so and go on
    using std::runtime_error::runtime_error;
};
struct ApiFailure : std::runtime_error {  // a libapairs call failed: say so and go on
    using std::runtime_error::runtime_error;
};

void api(apairs_status_t st, const char *fn) {
    if (st == APAIRS_SUCCESS) return;
    const std::string detail = apairs_last_error();
    if (st == APAIRS_ERROR_OUT_OF_MEMORY)
        throw Skip(fmt::format("cannot allocate: {}: {}: {}", fn, apairs_status_string(st), detail));
    throw ApiFailure(fmt::format("{} failed: {} (status {}): {}", fn, apairs_status_string(st), st, detail));
}
#define API(fn, ...) api(fn(__VA_ARGS__), #fn)

[[noreturn]] void die(const std::string &msg) {
    std::fflush(stdout);
    fmt::print(stderr, "apairs_bench: error: {}\n", msg);
    std::exit(1);
}

#if APAIRS_BENCH_CUDA
void cuda_check(cudaError_t e, const char *what, int line) {
    if (e == cudaSuccess) return;
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();  // not sticky: clear it and go on
        throw Skip(fmt::format("cannot allocate: {}: {}", what, cudaGetErrorString(e)));
    }
    die(fmt::format("{} (apairs_bench.cpp:{}) failed: {} ({})", what, line, cudaGetErrorString(e),
                    cudaGetErrorName(e)));
}
#define CU(call) cuda_check((call), #call, __LINE__)

struct DevBuf {
    void *p = nullptr;
    std::size_t bytes;
    explicit DevBuf(std::size_t b) : bytes(b) {
        cudaError_t e = cudaMalloc(&p, b);
        if (e == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            std::size_t free_b = 0, total_b = 0;
            (void)cudaMemGetInfo(&free_b, &total_b);
            throw Skip(fmt::format("cannot allocate {:.1f} MiB of device memory (cudaMalloc: out of memory; {:.1f} of {:.1f} MiB free)",
                                   double(b) / 1048576.0, double(free_b) / 1048576.0, double(total_b) / 1048576.0));
        }
        cuda_check(e, "cudaMalloc", __LINE__);
    }
    ~DevBuf() {
        if (p) {
            cudaError_t e = cudaFree(p);
            if (e != cudaSuccess)
                fmt::print(stderr, "apairs_bench: warning: cudaFree: {}\n", cudaGetErrorString(e));
        }
    }
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
};

struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    Events() {
        CU(cudaEventCreate(&start));
        CU(cudaEventCreate(&stop));
    }
    ~Events() {
        if (start) (void)cudaEventDestroy(start);
        if (stop) (void)cudaEventDestroy(stop);
    }
};
#endif

// ---------------------------------------------------------------------------------
// Running a case

struct Row {
    std::string name, shape;
    double ms, rate;
    std::string plan, check;
    std::string suite = "pairwise", unit = "T pair-dims/s";
};

struct Settings {
    bool cuda = false;
    int32_t device = 0;
    int reps = 0;  // 0: per case
    bool quick = false;
};

double median(std::vector<double> ts) {
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];  // as peers.py: the upper middle for an even count
}

std::string describe(apairs_plan_t plan) {
    int64_t len = 0;
    API(apairs_plan_describe, plan, nullptr, 0, &len);
    std::string s(static_cast<std::size_t>(len) + 1, '\0');
    API(apairs_plan_describe, plan, &s[0], len + 1, nullptr);
    s.resize(static_cast<std::size_t>(len));
    return s;
}

struct PlanHolder {
    apairs_plan_t p = nullptr;
    ~PlanHolder() { apairs_plan_destroy(p); }
};

Row run_case(const Case &c, apairs_context_t ctx, const Settings &st) {
    Row row{c.name, c.shape(), 0, 0, "", ""};
    // Host: 3 repeats after 1 warm-up, or with --quick a single call, no warm-up.
    int reps = st.cuda ? c.reps : st.quick ? 1 : 3;
    const int warm = st.cuda ? c.warm : st.quick ? 0 : 1;
    if (st.reps > 0) reps = st.reps;

    PlanHolder plan;
    const auto tp = std::chrono::steady_clock::now();
    API(apairs_plan_create_pairwise, &plan.p, ctx, c.metric, c.p, c.dtype, c.n1, c.n2, c.d, c.d, c.d, c.n2);
    const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
    row.plan = describe(plan.p);

    const std::size_t a_bytes = std::size_t(c.n1) * std::size_t(c.d) * in_size(c.dtype);
    const std::size_t b_bytes = std::size_t(c.n2) * std::size_t(c.d) * in_size(c.dtype);
    const std::size_t d_bytes = std::size_t(c.n1) * std::size_t(c.n2) * out_size(c.dtype);
    std::vector<double> ts;
    std::vector<std::pair<int64_t, int64_t>> samples = sample_entries(c);
    std::vector<double> got;

    if (!st.cuda) {
        std::unique_ptr<HostBuf> A, B, D;
        try {
            A = std::make_unique<HostBuf>(a_bytes);
            B = std::make_unique<HostBuf>(b_bytes);
            D = std::make_unique<HostBuf>(d_bytes);
        } catch (const std::bad_alloc &) {
            throw Skip(fmt::format("cannot allocate {:.1f} MiB of host memory",
                                   double(a_bytes + b_bytes + d_bytes) / 1048576.0));
        }
        fill(c.dtype, kSeedA, A->get(), uint64_t(c.n1 * c.d));
        fill(c.dtype, kSeedB, B->get(), uint64_t(c.n2 * c.d));
        for (int w = 0; w < warm; ++w) API(apairs_plan_execute, plan.p, A->get(), B->get(), D->get());
        for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            API(apairs_plan_execute, plan.p, A->get(), B->get(), D->get());
            ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        for (auto [i, j] : samples) got.push_back(read_entry(c.dtype, D->get(), i * c.n2 + j));
    } else {
#if APAIRS_BENCH_CUDA
        DevBuf dA(a_bytes), dB(b_bytes), dD(d_bytes);
        {
            std::unique_ptr<HostBuf> h;
            try {
                h = std::make_unique<HostBuf>(std::max(a_bytes, b_bytes));
            } catch (const std::bad_alloc &) {
                throw Skip(fmt::format("cannot allocate a {:.1f} MiB host staging buffer",
                                       double(std::max(a_bytes, b_bytes)) / 1048576.0));
            }
            fill(c.dtype, kSeedA, h->get(), uint64_t(c.n1 * c.d));
            CU(cudaMemcpy(dA.p, h->get(), a_bytes, cudaMemcpyHostToDevice));
            fill(c.dtype, kSeedB, h->get(), uint64_t(c.n2 * c.d));
            CU(cudaMemcpy(dB.p, h->get(), b_bytes, cudaMemcpyHostToDevice));
        }
        // NaN bytes: an entry the kernel fails to write fails the spot check.
        CU(cudaMemset(dD.p, 0xff, d_bytes));
        CU(cudaDeviceSynchronize());
        Events ev;
        // The plan uses the context's stream: the legacy default stream (NULL), on which
        // the events are recorded too.
        for (int w = 0; w < warm; ++w) API(apairs_plan_execute, plan.p, dA.p, dB.p, dD.p);
        CU(cudaDeviceSynchronize());
        for (int r = 0; r < reps; ++r) {
            CU(cudaEventRecord(ev.start, nullptr));
            API(apairs_plan_execute, plan.p, dA.p, dB.p, dD.p);
            CU(cudaEventRecord(ev.stop, nullptr));
            CU(cudaEventSynchronize(ev.stop));
            float ms = 0;
            CU(cudaEventElapsedTime(&ms, ev.start, ev.stop));
            ts.push_back(ms);
        }
        CU(cudaDeviceSynchronize());
        for (auto [i, j] : samples) {
            unsigned char buf[8];
            const std::size_t es = out_size(c.dtype);
            CU(cudaMemcpy(buf, static_cast<unsigned char *>(dD.p) + std::size_t(i * c.n2 + j) * es, es,
                          cudaMemcpyDeviceToHost));
            got.push_back(read_entry(c.dtype, buf, 0));
        }
#else
        die("this apairs_bench was built without CUDA");
#endif
    }

    row.ms = median(ts);
    row.rate = double(c.n1) * double(c.n2) * double(c.d) / row.ms / 1e9;

    Check ck;
    for (std::size_t k = 0; k < samples.size(); ++k) check_entry(c, samples[k].first, samples[k].second, got[k], ck);
    if (ck.failed)
        row.check = fmt::format("CHECK FAILED: {}", ck.first_failure);
    else if (c.metric == APAIRS_METRIC_HAMMING)
        row.check = fmt::format("check: {} entries exact", ck.checked);
    else
        row.check = fmt::format("check: {} entries ok, worst error {:.2g} of the documented bound", ck.checked,
                                ck.worst);
    row.plan = fmt::format("plan {:.3f} ms; {}", plan_ms, row.plan);
    return row;
}

// ---------------------------------------------------------------------------------
// The batched suite: gemm

struct GemmCase {
    std::string name;  // "apairs gemm AoS float64"
    int32_t dtype;
    bool soa;
    int64_t n, batch;
    int reps, warm;
    std::string shape() const { return fmt::format("n={} B={}", n, batch); }
    int64_t es() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
    // SoA: the batch stride, the count rounded up to 32 (apairs.h's recommendation).
    int64_t stride() const { return soa ? (batch + 31) / 32 * 32 : n * n; }
    int64_t count() const { return soa ? n * n * stride() : batch * n * n; }  // array elements
    int64_t index(int64_t i, int64_t j, int64_t e) const {
        return soa ? (i * n + j) * stride() + e : e * n * n + i * n + j;
    }
    double bytes() const { return 3.0 * double(batch) * double(n * n) * double(es()); }  // as peers.py
};

std::vector<GemmCase> make_gemm_cases(bool quick, bool host) {
    std::vector<GemmCase> cs;
    const int64_t budget = int64_t(1) << (quick ? 28 : 30);
    for (int32_t dt : {APAIRS_DTYPE_F64, APAIRS_DTYPE_F32}) {
        const int64_t es = dt == APAIRS_DTYPE_F64 ? 8 : 4;
        std::vector<int64_t> ns = {2, 4, 8, 16, 32, 64, 128};
        if (host) ns = {8};
        for (int64_t n : ns) {
            const int64_t b = host ? 10000 : std::max<int64_t>(1, budget / (n * n * es) / 4);
            for (bool soa : {false, true})
                cs.push_back(GemmCase{fmt::format("apairs gemm {} {}", soa ? "SoA" : "AoS", dtype_name(dt)), dt, soa,
                                      n, b, 5, 1});
        }
    }
    return cs;
}

constexpr uint64_t kSeedGemmA = 11, kSeedGemmB = 12;

// The elements and entries the spot check compares.
std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> gemm_samples(const GemmCase &c) {
    std::vector<int64_t> elems = {0, c.batch - 1};
    for (uint64_t k = 0; elems.size() < 6; ++k) elems.push_back(int64_t(draw(98, k) % uint64_t(c.batch)));
    std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> s;
    uint64_t k = 0;
    for (int64_t e : elems) {
        s.push_back({e, {0, 0}});
        s.push_back({e, {c.n - 1, c.n - 1}});
        for (int t = 0; t < 4; ++t, ++k)
            s.push_back({e, {int64_t(draw(97, 2 * k) % uint64_t(c.n)), int64_t(draw(97, 2 * k + 1) % uint64_t(c.n))}});
    }
    return s;
}

// C_e(i, j) against a long-double reference; apairs.h's bound (k + 2) u sum |a b|
// (alpha = 1, beta = 0); fails above twice the bound, as the pairwise check.
void check_gemm_entry(const GemmCase &c, int64_t e, int64_t i, int64_t j, double got, Check &ck) {
    long double ref = 0, absum = 0;
    for (int64_t l = 0; l < c.n; ++l) {
        const long double a = value(c.dtype, kSeedGemmA, uint64_t(c.index(i, l, e)));
        const long double b = value(c.dtype, kSeedGemmB, uint64_t(c.index(l, j, e)));
        ref += a * b;
        absum += std::fabs(a * b);
    }
    const long double u = c.dtype == APAIRS_DTYPE_F64 ? 0x1p-53L : 0x1p-24L;
    const long double bound = (c.n + 2) * u * absum + 1e-30L;
    const long double err = std::fabs(static_cast<long double>(got) - ref);
    const double frac = std::isnan(got) ? std::numeric_limits<double>::infinity() : static_cast<double>(err / bound);
    ++ck.checked;
    ck.worst = std::max(ck.worst, frac);
    if (!(frac <= 2.0)) {
        if (!ck.failed)
            ck.first_failure = fmt::format("C[{}]({}, {}) = {:.17g}, reference {:.17g}", e, i, j, got, double(ref));
        ck.failed = true;
    }
}

#if APAIRS_BENCH_CUDA
// Device-to-device copy bandwidth in GB/s (bytes read + written per second, as
// peers.py's 'copy d2d' row): cudaMemcpy of 1 GiB (256 MiB if that cannot be had), one
// warm-up, median of 5 timed by CUDA events. 0 when no buffer can be had.
double measure_copy_gbs(std::size_t *bytes_out) {
    for (std::size_t bytes : {std::size_t(1) << 30, std::size_t(1) << 28}) {
        try {
            DevBuf src(bytes), dst(bytes);
            CU(cudaMemset(src.p, 0x3c, bytes));
            Events ev;
            CU(cudaMemcpy(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice));
            CU(cudaDeviceSynchronize());
            std::vector<double> ts;
            for (int r = 0; r < 5; ++r) {
                CU(cudaEventRecord(ev.start, nullptr));
                CU(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, nullptr));
                CU(cudaEventRecord(ev.stop, nullptr));
                CU(cudaEventSynchronize(ev.stop));
                float ms = 0;
                CU(cudaEventElapsedTime(&ms, ev.start, ev.stop));
                ts.push_back(ms);
            }
            *bytes_out = bytes;
            return 2.0 * double(bytes) / median(ts) / 1e6;
        } catch (const Skip &) {
        }
    }
    return 0;
}
#endif

Row run_gemm_case(const GemmCase &c, apairs_context_t ctx, const Settings &st, double copy_gbs) {
    Row row{c.name, c.shape(), 0, 0, "", "", "batched", "GB/s"};
    int reps = st.cuda ? c.reps : st.quick ? 1 : 3;
    const int warm = st.cuda ? c.warm : st.quick ? 0 : 1;
    if (st.reps > 0) reps = st.reps;

    PlanHolder plan;
    const int64_t n = c.n, ld = n, stride = c.stride();
    const auto tp = std::chrono::steady_clock::now();
    API(apairs_plan_create_gemm_batched, &plan.p, ctx, c.dtype, c.soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
        APAIRS_ORDER_ROW_MAJOR, APAIRS_OP_N, APAIRS_OP_N, n, n, n, 1.0, 0.0, ld, stride, ld, stride, ld, stride,
        c.batch);
    const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
    row.plan = describe(plan.p);

    const std::size_t bytes = std::size_t(c.count()) * std::size_t(c.es());
    std::vector<double> ts;
    const auto samples = gemm_samples(c);
    std::vector<double> got;

    if (!st.cuda) {
        std::unique_ptr<HostBuf> A, B, C;
        try {
            A = std::make_unique<HostBuf>(bytes);
            B = std::make_unique<HostBuf>(bytes);
            C = std::make_unique<HostBuf>(bytes);
        } catch (const std::bad_alloc &) {
            throw Skip(fmt::format("cannot allocate {:.1f} MiB of host memory", 3.0 * double(bytes) / 1048576.0));
        }
        fill(c.dtype, kSeedGemmA, A->get(), uint64_t(c.count()));
        fill(c.dtype, kSeedGemmB, B->get(), uint64_t(c.count()));
        std::memset(C->get(), 0xff, bytes);  // NaN: an entry never written fails the check
        for (int w = 0; w < warm; ++w) API(apairs_plan_execute_gemm, plan.p, A->get(), B->get(), C->get());
        for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            API(apairs_plan_execute_gemm, plan.p, A->get(), B->get(), C->get());
            ts.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        for (const auto &[e, ij] : samples) got.push_back(read_entry(c.dtype, C->get(), c.index(ij.first, ij.second, e)));
    } else {
#if APAIRS_BENCH_CUDA
        DevBuf dA(bytes), dB(bytes), dC(bytes);
        {
            std::unique_ptr<HostBuf> h;
            try {
                h = std::make_unique<HostBuf>(bytes);
            } catch (const std::bad_alloc &) {
                throw Skip(fmt::format("cannot allocate a {:.1f} MiB host staging buffer", double(bytes) / 1048576.0));
            }
            fill(c.dtype, kSeedGemmA, h->get(), uint64_t(c.count()));
            CU(cudaMemcpy(dA.p, h->get(), bytes, cudaMemcpyHostToDevice));
            fill(c.dtype, kSeedGemmB, h->get(), uint64_t(c.count()));
            CU(cudaMemcpy(dB.p, h->get(), bytes, cudaMemcpyHostToDevice));
        }
        CU(cudaMemset(dC.p, 0xff, bytes));  // NaN (beta = 0 must not read it)
        CU(cudaDeviceSynchronize());
        Events ev;
        for (int w = 0; w < warm; ++w) API(apairs_plan_execute_gemm, plan.p, dA.p, dB.p, dC.p);
        CU(cudaDeviceSynchronize());
        for (int r = 0; r < reps; ++r) {
            CU(cudaEventRecord(ev.start, nullptr));
            API(apairs_plan_execute_gemm, plan.p, dA.p, dB.p, dC.p);
            CU(cudaEventRecord(ev.stop, nullptr));
            CU(cudaEventSynchronize(ev.stop));
            float ms = 0;
            CU(cudaEventElapsedTime(&ms, ev.start, ev.stop));
            ts.push_back(ms);
        }
        CU(cudaDeviceSynchronize());
        for (const auto &[e, ij] : samples) {
            unsigned char buf[8];
            const std::size_t es = std::size_t(c.es());
            CU(cudaMemcpy(buf, static_cast<unsigned char *>(dC.p) + std::size_t(c.index(ij.first, ij.second, e)) * es,
                          es, cudaMemcpyDeviceToHost));
            got.push_back(read_entry(c.dtype, buf, 0));
        }
#else
        die("this apairs_bench was built without CUDA");
#endif
    }

    row.ms = median(ts);
    row.rate = c.bytes() / row.ms / 1e6;

    Check ck;
    for (std::size_t k = 0; k < samples.size(); ++k)
        check_gemm_entry(c, samples[k].first, samples[k].second.first, samples[k].second.second, got[k], ck);
    if (ck.failed)
        row.check = fmt::format("CHECK FAILED: {}", ck.first_failure);
    else
        row.check = fmt::format("check: {} entries of {} elements ok, worst error {:.2g} of the documented bound",
                                ck.checked, samples.size() / 6, ck.worst);
    std::string bound;
    if (st.cuda && copy_gbs > 0)
        bound = fmt::format(" | bandwidth bound {:.3f} ms ({:.0f} MB at {:.0f} GB/s copy): {:.1f}% of it reached",
                            c.bytes() / copy_gbs / 1e6, c.bytes() / 1e6, copy_gbs, 100.0 * row.rate / copy_gbs);
    row.check += bound;
    row.plan = fmt::format("plan {:.3f} ms; {}", plan_ms, row.plan);
    return row;
}

// ---------------------------------------------------------------------------------
// Output

std::string json_string(const std::string &s) {
    std::string o = "\"";
    for (unsigned char ch : s) {
        switch (ch) {
        case '"': o += "\\\""; break;
        case '\\': o += "\\\\"; break;
        case '\n': o += "\\n"; break;
        case '\t': o += "\\t"; break;
        default:
            if (ch < 0x20) o += fmt::format("\\u{:04x}", ch);
            else o += static_cast<char>(ch);
        }
    }
    return o + "\"";
}

void write_json(apairs_tools::OutputFile &out, const std::string &device, const std::string &backend,
                const std::vector<Row> &rows) {
    std::ostringstream f;
    f << "{\n \"device\": " << json_string(device) << ",\n \"library\": " << json_string(apairs_version_string())
      << ",\n \"backend\": " << json_string(backend) << ",\n \"rows\": [";
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const Row &r = rows[k];
        f << (k ? ",\n" : "\n") << "  {\n   \"suite\": " << json_string(r.suite) << ",\n   \"name\": "
          << json_string(r.name) << ",\n   \"shape\": " << json_string(r.shape)
          << ",\n   \"ms\": " << fmt::format("{}", r.ms) << ",\n   \"rate\": " << fmt::format("{}", r.rate)
          << ",\n   \"unit\": " << json_string(r.unit)
          << ",\n   \"plan\": " << json_string(r.plan) << ",\n   \"check\": " << json_string(r.check) << "\n  }";
    }
    f << "\n ]\n}\n";
    try {
        out.write(f.str());
        out.commit();
    } catch (const apairs_tools::OutputError &e) {
        die(e.what());
    }
}

std::string host_cpu_name() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) {
            auto c = line.find(':');
            if (c != std::string::npos) return line.substr(c + 2);
        }
    return "unknown CPU";
}

}  // namespace

int main(int argc, char **argv) {
    apairs_tools::ignore_sigxfsz();  // a file-size limit: the --json write fails with EFBIG, reported
    std::string backend, json, suite = "pairwise";
    std::vector<std::string> only;
    double copy_gbs = 0;
    bool quick = false, list = false;
    Settings st;
    bool have_occ = false, have_threads = false;
    double occ = 0, threads = 0;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto need = [&](const char *opt) -> std::string {
            if (i + 1 >= argc) {
                fmt::print(stderr, "apairs_bench: option '{}' needs a value\n", opt);
                std::exit(1);
            }
            return argv[++i];
        };
        auto number = [&](const char *opt, const std::string &v) -> double {
            char *end = nullptr;
            double x = std::strtod(v.c_str(), &end);
            if (v.empty() || *end) {
                fmt::print(stderr, "apairs_bench: {}: '{}' is not a number\n", opt, v);
                std::exit(1);
            }
            return x;
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--suite") {
            suite = need("--suite");
            if (suite != "pairwise" && suite != "batched" && suite != "all") {
                fmt::print(stderr, "apairs_bench: --suite: '{}' (expected pairwise, batched or all)\n", suite);
                return 1;
            }
        } else if (a == "--copy-gbs") {
            copy_gbs = number("--copy-gbs", need("--copy-gbs"));
            if (!(copy_gbs > 0)) {
                fmt::print(stderr, "apairs_bench: --copy-gbs: expected a positive number of GB/s\n");
                return 1;
            }
        } else if (a == "--backend") {
            backend = need("--backend");
            if (backend != "cuda" && backend != "host") {
                fmt::print(stderr, "apairs_bench: --backend: '{}' (expected cuda or host)\n", backend);
                return 1;
            }
        } else if (a == "--device") {
            st.device = static_cast<int32_t>(number("--device", need("--device")));
        } else if (a == "--quick") {
            quick = true;
            st.quick = true;
        } else if (a == "--only") {
            only.push_back(need("--only"));
        } else if (a == "--reps") {
            st.reps = std::max(1, static_cast<int>(number("--reps", need("--reps"))));
        } else if (a == "--occupancy") {
            occ = number("--occupancy", need("--occupancy"));
            have_occ = true;
        } else if (a == "--threads") {
            threads = number("--threads", need("--threads"));
            have_threads = true;
        } else if (a == "--json") {
            json = need("--json");
        } else if (a == "--list") {
            list = true;
        } else {
            fmt::print(stderr, "apairs_bench: unknown argument '{}'\nTry 'apairs_bench --help'.\n", a);
            return 1;
        }
    }

    int32_t devices = 0;
    if (apairs_cuda_device_count(&devices) != APAIRS_SUCCESS)
        die(fmt::format("apairs_cuda_device_count: {}", apairs_last_error()));
    if (backend.empty()) backend = (APAIRS_BENCH_CUDA != 0 && devices > 0) ? "cuda" : "host";
    st.cuda = backend == "cuda";
#if !APAIRS_BENCH_CUDA
    if (st.cuda) die("this apairs_bench was built without CUDA (meson found no CUDA); use --backend host");
#endif

    const bool run_pairwise = suite != "batched", run_batched = suite != "pairwise";
    auto keep = [&](const std::string &name, const std::string &shape) {
        bool k = only.empty();
        for (const std::string &s : only)
            k = k || name.find(s) != std::string::npos || shape.find(s) != std::string::npos;
        return k;
    };
    std::vector<Case> cases;
    if (run_pairwise)
        for (const Case &c : make_cases(quick, !st.cuda))
            if (keep(c.name, c.shape())) cases.push_back(c);
    std::vector<GemmCase> gemm_cases;
    if (run_batched)
        for (const GemmCase &c : make_gemm_cases(quick, !st.cuda))
            if (keep(c.name, c.shape())) gemm_cases.push_back(c);
    if (list) {
        for (const Case &c : cases) fmt::print("{:36s} {:28s}\n", c.name, c.shape());
        for (const GemmCase &c : gemm_cases) fmt::print("{:36s} {:28s}\n", c.name, c.shape());
        return 0;
    }
    if (cases.empty() && gemm_cases.empty()) die("no case matches --only");

    // The --json file's temporary file, before any case runs: a bad path fails now. It
    // is removed on every error path (die() and std::exit included: output_file.hpp).
    std::unique_ptr<apairs_tools::OutputFile> json_out;
    if (!json.empty()) {
        try {
            json_out = std::make_unique<apairs_tools::OutputFile>(json);
        } catch (const apairs_tools::OutputError &e) {
            die(e.what());
        }
    }

    apairs_context_t ctx = nullptr;
    if (apairs_status_t s = apairs_context_create(&ctx, st.cuda ? APAIRS_BACKEND_CUDA : APAIRS_BACKEND_HOST,
                                                  st.device);
        s != APAIRS_SUCCESS)
        die(fmt::format("apairs_context_create failed: {} (status {}): {}", apairs_status_string(s), s,
                        apairs_last_error()));
    std::unique_ptr<apairs_context_s, apairs_status_t (*)(apairs_context_t)> ctx_holder(ctx, apairs_context_destroy);
    auto set_option = [&](int32_t opt, double v, const char *name) {
        if (apairs_status_t s = apairs_context_set_option(ctx, opt, v); s != APAIRS_SUCCESS)
            die(fmt::format("apairs_context_set_option({}, {}) failed: {} (status {}): {}", name, v,
                            apairs_status_string(s), s, apairs_last_error()));
    };
    if (have_occ) set_option(APAIRS_OPTION_OCCUPANCY_TARGET, occ, "APAIRS_OPTION_OCCUPANCY_TARGET");
    if (have_threads) set_option(APAIRS_OPTION_HOST_THREADS, threads, "APAIRS_OPTION_HOST_THREADS");

    std::string device;
    if (st.cuda) {
#if APAIRS_BENCH_CUDA
        CU(cudaSetDevice(st.device));
        cudaDeviceProp prop;
        CU(cudaGetDeviceProperties(&prop, st.device));
        device = prop.name;
#endif
    } else {
        device = "host: " + host_cpu_name();
    }
    fmt::print("{} | libapairs {} | backend {}{}\n", device, apairs_version_string(), backend,
               st.cuda ? " (device-resident inputs, CUDA events)" : " (host memory, steady clock; smoke-test sizes)");
    std::fflush(stdout);

    std::vector<Row> rows;
    int failures = 0;
    for (const Case &c : cases) {
        try {
            Row r = run_case(c, ctx, st);
            // peers.py's format; on the host the rates are too small for 3 decimals.
            if (st.cuda)
                fmt::print("{:36s} {:28s} {:10.3f} ms {:10.3f} {}\n", r.name, r.shape, r.ms, r.rate, "T pair-dims/s");
            else
                fmt::print("{:36s} {:28s} {:10.3f} ms {:10.4g} {}\n", r.name, r.shape, r.ms, r.rate, "T pair-dims/s");
            fmt::print("#   {} | {}\n", r.check, r.plan);
            if (r.check.rfind("CHECK FAILED", 0) == 0) ++failures;
            rows.push_back(std::move(r));
        } catch (const Skip &e) {
            fmt::print("{:36s} {:28s} skipped: {}\n", c.name, c.shape(), e.what());
        } catch (const ApiFailure &e) {
            fmt::print("{:36s} {:28s} FAILED: {}\n", c.name, c.shape(), e.what());
            ++failures;
        }
        std::fflush(stdout);
    }
    if (!gemm_cases.empty()) {
#if APAIRS_BENCH_CUDA
        if (st.cuda) {
            if (copy_gbs > 0) {
                fmt::print("# copy bandwidth {:.1f} GB/s (--copy-gbs)\n", copy_gbs);
            } else {
                std::size_t copied = 0;
                copy_gbs = measure_copy_gbs(&copied);
                if (copy_gbs > 0)
                    fmt::print("# copy bandwidth {:.1f} GB/s (measured: device-to-device cudaMemcpy of {} MiB, "
                               "read + written bytes, median of 5)\n",
                               copy_gbs, copied >> 20);
                else
                    fmt::print("# copy bandwidth not measured (no buffer could be had); pass --copy-gbs\n");
            }
            std::fflush(stdout);
        }
#endif
        for (const GemmCase &c : gemm_cases) {
            try {
                Row r = run_gemm_case(c, ctx, st, copy_gbs);
                if (st.cuda)
                    fmt::print("{:36s} {:28s} {:10.3f} ms {:10.3f} {}\n", r.name, r.shape, r.ms, r.rate, r.unit);
                else
                    fmt::print("{:36s} {:28s} {:10.3f} ms {:10.4g} {}\n", r.name, r.shape, r.ms, r.rate, r.unit);
                fmt::print("#   {} | {}\n", r.check, r.plan);
                if (r.check.rfind("CHECK FAILED", 0) == 0) ++failures;
                rows.push_back(std::move(r));
            } catch (const Skip &e) {
                fmt::print("{:36s} {:28s} skipped: {}\n", c.name, c.shape(), e.what());
            } catch (const ApiFailure &e) {
                fmt::print("{:36s} {:28s} FAILED: {}\n", c.name, c.shape(), e.what());
                ++failures;
            }
            std::fflush(stdout);
        }
    }
    if (json_out) write_json(*json_out, device, backend, rows);
    return failures ? 1 : 0;
}
