// apairs_bench: times apairs_plan_execute on the cases of the 'pairwise' suite of
// shared/bench/peers.py, the batched plans (gemm, gemv, potrf, potrs, getrf, dot,
// and the AoS -> SoA transpose) on the rows of its 'batched' suite, and the two-body
// statistics plans on the rows of its 'stats' suite (--suite), and
// prints its rows in the same format, shapes and rates, so that the two outputs can be
// read side by side.
//
// CUDA backend: every array is device memory (cudaMalloc, filled once from a host
// buffer of random values), so execute queues the kernel and returns; it is timed with
// CUDA events around each call on the plan's stream, after warm-up, and the median of
// the repeats is reported. Host backend: host memory, steady clock, and small sizes (a
// smoke test; --host-batch for the batched suite's host target).
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
#include <thread>
#include <utility>
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
with --suite batched or all, on the rows of its 'batched' suite) and prints one line
per case in peers.py's format:
    name  shape  median-ms ms  rate T pair-dims/s      (rate = n1*n2*d / time)
followed by a line starting with '#': the plan's describe() line, the plan time and a
spot check of 16 entries of D against a long-double reference (the error as a fraction
of the bound documented in apairs.h; 'CHECK FAILED' if it is exceeded).

Cases (CUDA; n = 6000, or 2000 with --quick):
  l1, l2, sqeuclidean, lp p=3, lp p=4, lp p=2.5, linf
                                   float32  n x n d=5419 (peers: torch.cdist p=1, 2, 2, 3,
                                   3, 2.5, inf; p=2's matrix-product path for sqeuclidean)
  lp p=2.7 (a general p: 2^(p log2 t))  float32  n x n d=5419 (peer: torch.cdist p=2.5)
  l1, l2                           float64  n x n d=5419
  l1                               float32  n/3 x n/3 d=40000, and d=5419 (the rate of
                                   d=40000's shape at the d of the rows above)
  l1, l2                           float32  16384 x 16384 d=128
  dot, cosine (against the dot peer) float32  n x n d=5419
  dot tf32, cosine tf32            float32  n x n d=5419 (APAIRS_OPTION_TF32)
  hamming (0/1/2 genotypes)        uint8    8192 x 8192 d=4096 (4096 x 4096 with --quick)
Host backend (a smoke test, --quick or not): n = 1000, d = 512 for the d=5419 cases,
333 x 333 d=4000, 2048 x 2048 d=128, hamming 1024 x 1024 d=512; 3 repeats after one
warm-up call, or with --quick one call and no warm-up.

CUDA timing: A, B, D in device memory filled once with uniform random values in
[0, 1) (hamming: 0/1/2), warm-up calls first, then CUDA events around each
apairs_plan_execute, median of the repeats (5; 3 for hamming), like peers.py.
Host timing: steady clock around each call, same repeats.

Batched suite (--suite batched): the rows of peers.py's 'batched' suite, same shapes
(printed 'n=8 B=4194304' as peers.py does) and the same byte counts, so that the GB/s
and ms ratios are direct; float64 then float32; each in AoS row-major (ld = n, stride =
the element's extent) and SoA (batch stride = B rounded up to 32), named e.g.
'apairs potrf SoA float64'. For n = 2, 4, 8, 16, 32, 64, 128 and
B = max(1, 2^30 / (n*n*es) / 4) elements (es: element size; 2^28 with --quick):
  apairs gemm          C = A B (alpha 1, beta 0)     3 B n^2 es     gemm (bmm, cuBLAS)
  apairs gemv          y = A x (op N, beta 0)        B (n^2+2n) es  gemv (bmm)
  apairs potrf         A = L L^T, lower, in place    2 B n^2 es     potrf (cholesky_ex)
  apairs potrs nrhs=1  x = A^-1 b from potrf's L     B (n^2+2n) es  potrs (cholesky_solve)
  apairs getrf         A = P L U, in place           2 B n^2 es     getrf (lu_factor_ex)
then dot (out_e = x_e . y_e; n = 16, 32, 64, 160, 512, 4096; B = 2^30 / (n*es) / 2;
(2n+1) B es bytes; peer 'dot (vecdot)'), then 'apairs transpose AoS->SoA' (no peer) of
the n*n entries of each element for n = 4 and 16 (B as gemm's; 2 B n^2 es bytes).
Inputs: uniform in [0, 1) as torch.rand; potrf and potrs: symmetric, off-diagonal
uniform in [-1, 1), diagonal n + 1 (positive definite by Gershgorin); potrs solves from
the factor our potrf plan made once before timing; getrf: uniform in [-1, 1) (pivoting
happens). What a call overwrites (potrf's and getrf's A, potrs's b) is restored from a
pristine copy before every call, outside the timed region (a device-to-device copy).
The '#' line: the check of six whole elements against a long-double reference (gemm,
gemv, dot: apairs.h's bounds; potrf: |A - L L^T| <= gamma_{n+1} |L| |L^T|; potrs: the
residual |b - A x| <= gamma_{3n+1} |L| |L^T| |x|; getrf: |P^T A - L U| <= gamma_n |L| |U|
and |l_ij| <= 1 (each pivot the largest of its column); transpose: exact), the worst
error as a fraction of the bound (failing above 2), info = 0 for every element, the
bandwidth bound (those bytes at the copy bandwidth) and the fraction of it reached,
and the plan's describe() line. Timing: device arrays, one warm-up call, CUDA events,
median of 5. Host backend: n = 8 (dot 16, transpose 4), B = 10^4 or --host-batch.

Stats suite (--suite stats): the rows of peers.py's 'stats' suite, same shapes (N =
131072, 32768 with --quick; host backend N = 20000, the issue's host target): float32
points uniform in [0, 1)^3, AUTO (N (N - 1) / 2 distinct pairs), one execute call each:
  apairs SDH histogram f32 (distinct pairs)  256 and 4096 uniform bins on [0, sqrt(3))
                                             (peer: SDH cdist+histc); on CUDA also
                                             N = 4000000 with 256 bins (one call)
  apairs 2PCF count r<=0.1 f32               pair counts within 0.1 (peer: 2PCF count)
  apairs kNN k=16 f32                        (peer: kNN k=16 cdist+topk; rate over the
                                             N x N ordered pairs as peers.py's)
in G pairs/s. The '#' line: histogram slots adding up to N(N-1)/2 exactly and every
slot of the histogram of the first 1500 points against a brute force, the count within
5% of its expectation for the unit cube, three kNN rows (distances and indices) against
a long-double brute force. Outputs in device memory on CUDA, host memory on the host.

Genotype suite (--suite genotype): PLINK 1.9's --distance on packed genotypes, A = B,
0/1/2 drawn from a per-variant frequency; host: n = 2000 samples x d = 100000 variants
(the symmetric path); CUDA: 8192 x 8192, d = 4096, device-resident packed rows and D,
CUDA events (the plane conversion kernel included), median of 5 after 2 warm-ups:
  apairs genotype distance            no missing call (plink --distance square)
  apairs genotype ibs 5% missing      5 % missing calls, PLINK's weighted scaling
  apairs genotype ibs flat 5% missing the same, flat-missing
rate = n * n * d / time in T pair-genotypes/s; the '#' line checks 16 entries exactly
against a count from the packed bytes. Compare with PLINK 1.9 on the same shape:
  plink --dummy 2000 100000 --make-bed --out big
  plink --bfile big --distance square --threads 2     (and apairs --bfile ... the same)
With --cohort, also (last; never by default: 6 GB of host memory, seconds of GPU time)
  apairs genotype cohort distance     CUDA: 20000 x 20000, d = 500000 (a real cohort),
                                      DISTANCE, 5 % missing calls, weighted scaling
from HOST memory: the 2.5 GB of packed rows (A = B) and the 3.2 GB D, so the time is
the whole call, staging in and out included: one call (no warm-up; --reps N for more)
under a wall clock. The packed rows are generated directly (their time is on the '#'
line). On the host backend the same case has PLINK's shape, 2000 x 2000, d = 500000
(1000 x 1000, d = 100000 with --quick). PLINK 1.9 on 2000 x 500000 scaled by pairs:
  plink --dummy 2000 500000 0.05 --make-bed --out c5
  plink --bfile c5 --distance square --threads 2       (its time x 100 / this time)

Options:
  --suite S        pairwise (default) | batched | stats | genotype | all
  --copy-gbs X     the device's copy bandwidth in GB/s (read + write bytes per second)
                   for the batched suite's bandwidth-bound fraction; default: measured
                   here with a 1 GiB device-to-device cudaMemcpy timed by CUDA events
                   (median of 5), and printed
  --backend B      cuda | host (default: cuda when a CUDA device is visible, else host)
  --device N       CUDA device ordinal (default 0)
  --quick          smaller CUDA cases (as peers.py --quick)
  --host-batch N   the batched suite's element count on the host backend (default
                   10000); the host target (gemm and potrf float64, n = 8, 10^6
                   elements): --backend host --suite batched --host-batch 1000000
                   --only 'gemm AoS float64' --only 'potrf AoS float64'
  --only S         run only the cases whose "name shape " (the two joined by a space,
                   a space after) contains S (e.g. 'float64', 'hamming', 'd=128'); may
                   be given several times (any match); S of parts joined by '&' matches
                   where each part does ('gemm SoA&n=32 ')
  --cohort         add the genotype suite's cohort case (implies --suite genotype
                   unless --suite is given; --cohort --only cohort runs it alone)
  --reps N         repeats per case instead of the defaults (1 to 10^6)
  --soa-pad N      add N elements (0 to 2^30) to every SoA batch stride of the batched suite
  --col-major      the batched suite's potrf and getrf cases column-major (LAPACK's
                   order; named 'apairs potrf col-major AoS float64', ...; no peer row
                   matches them)
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
    bool tf32 = false;  // APAIRS_OPTION_TF32 for this case's plan
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
    add("sqeuclidean", APAIRS_METRIC_SQEUCLIDEAN, 0, APAIRS_DTYPE_F32, n, n, d);
    add("lp p=3", APAIRS_METRIC_LP, 3.0, APAIRS_DTYPE_F32, n, n, d);
    add("lp p=4", APAIRS_METRIC_LP, 4.0, APAIRS_DTYPE_F32, n, n, d);
    add("lp p=2.5", APAIRS_METRIC_LP, 2.5, APAIRS_DTYPE_F32, n, n, d);
    add("lp p=2.7", APAIRS_METRIC_LP, 2.7, APAIRS_DTYPE_F32, n, n, d);
    add("linf", APAIRS_METRIC_LINF, 0, APAIRS_DTYPE_F32, n, n, d);
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F64, n, n, d);
    add("l2", APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F64, n, n, d);
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n / 3, n / 3, host ? 4000 : 40000);
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, n / 3, n / 3, d);  // d = 40000's rate at its own n
    const int64_t big = host ? 2048 : 16384;
    add("l1", APAIRS_METRIC_L1, 0, APAIRS_DTYPE_F32, big, big, 128);
    add("l2", APAIRS_METRIC_L2, 0, APAIRS_DTYPE_F32, big, big, 128);
    add("dot", APAIRS_METRIC_DOT, 0, APAIRS_DTYPE_F32, n, n, d, 5, 2);
    add("cosine", APAIRS_METRIC_COSINE, 0, APAIRS_DTYPE_F32, n, n, d, 5, 2);
    if (!host) {  // the opt-in TF32 tensor-core path (APAIRS_OPTION_TF32)
        add("dot tf32", APAIRS_METRIC_DOT, 0, APAIRS_DTYPE_F32, n, n, d, 5, 2);
        add("cosine tf32", APAIRS_METRIC_COSINE, 0, APAIRS_DTYPE_F32, n, n, d, 5, 2);
        cs[cs.size() - 2].tf32 = cs[cs.size() - 1].tf32 = true;
    }
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
    long double acc = 0, absdot = 0, aa = 0, bb = 0;
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
        case APAIRS_METRIC_L2:
        case APAIRS_METRIC_SQEUCLIDEAN: acc += df * df; break;
        case APAIRS_METRIC_LP: acc += std::pow(df, p); break;
        case APAIRS_METRIC_LINF: acc = std::max(acc, df); break;
        case APAIRS_METRIC_DOT:
            acc += a * b;
            absdot += std::fabs(a * b);
            break;
        case APAIRS_METRIC_COSINE:
            acc += a * b;
            aa += a * a;
            bb += b * b;
            break;
        case APAIRS_METRIC_HAMMING: diff += a != b; break;
        }
    }
    long double ref = acc;
    if (c.metric == APAIRS_METRIC_L2) ref = std::sqrt(acc);
    if (c.metric == APAIRS_METRIC_LP) ref = std::pow(acc, 1.0L / p);
    if (c.metric == APAIRS_METRIC_HAMMING) ref = static_cast<long double>(diff);
    if (c.metric == APAIRS_METRIC_COSINE) ref = 1 - acc / std::sqrt(aa * bb);  // the inputs have no zero row

    // The bound apairs.h states, as the library writes it down (src/pairwise/bounds.hpp).
    const long double u = c.dtype == APAIRS_DTYPE_F64 ? 0x1p-53L : 0x1p-24L;
    const long double max_log = df_max > 0 ? std::max(std::fabs(std::log(df_min)), std::fabs(std::log(df_max))) : 0;
    long double bound = apairs::pairwise::error_bound(c.metric, p, u, c.d, ref, absdot, max_log, c.tf32);
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

// Calls `call` warm + reps times and returns the milliseconds of the last reps calls,
// calling `before` ahead of each, outside the timed region (batched: restoring what the
// call overwrites). CUDA: events on the legacy default stream (NULL), the stream of the
// context's plans, which also orders `before`'s copies ahead of the call; host: steady
// clock.
template <class Call, class Before>
std::vector<double> time_calls(bool cuda, int warm, int reps, Call &&call, Before &&before) {
    std::vector<double> ts;
#if APAIRS_BENCH_CUDA
    std::unique_ptr<Events> ev;
    if (cuda) {
        ev = std::make_unique<Events>();
        CU(cudaDeviceSynchronize());
    }
#endif
    for (int r = -warm; r < reps; ++r) {
        before();
        double ms = 0;
        if (!cuda) {
            const auto t0 = std::chrono::steady_clock::now();
            call();
            ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        } else {
#if APAIRS_BENCH_CUDA
            CU(cudaEventRecord(ev->start, nullptr));
            call();
            CU(cudaEventRecord(ev->stop, nullptr));
            CU(cudaEventSynchronize(ev->stop));
            float f = 0;
            CU(cudaEventElapsedTime(&f, ev->start, ev->stop));
            ms = f;
#endif
        }
        if (r >= 0) ts.push_back(ms);
    }
#if APAIRS_BENCH_CUDA
    if (cuda) CU(cudaDeviceSynchronize());
#endif
    return ts;
}

Row run_case(const Case &c, apairs_context_t ctx, const Settings &st) {
    Row row{c.name, c.shape(), 0, 0, "", ""};
    // Host: 3 repeats after 1 warm-up, or with --quick a single call, no warm-up.
    int reps = st.cuda ? c.reps : st.quick ? 1 : 3;
    const int warm = st.cuda ? c.warm : st.quick ? 0 : 1;
    if (st.reps > 0) reps = st.reps;

    PlanHolder plan;
    const auto tp = std::chrono::steady_clock::now();
    API(apairs_context_set_option, ctx, APAIRS_OPTION_TF32, c.tf32 ? 1.0 : 0.0);
    API(apairs_plan_create_pairwise, &plan.p, ctx, c.metric, c.p, c.dtype, c.n1, c.n2, c.d, c.d, c.d, c.n2);
    API(apairs_context_set_option, ctx, APAIRS_OPTION_TF32, 0.0);
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
        // NaN bytes (hamming: -1), as on CUDA: an entry the call fails to write fails the spot check.
        std::memset(D->get(), 0xff, d_bytes);
        ts = time_calls(false, warm, reps, [&] { API(apairs_plan_execute, plan.p, A->get(), B->get(), D->get()); },
                        [] {});
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
        ts = time_calls(true, warm, reps, [&] { API(apairs_plan_execute, plan.p, dA.p, dB.p, dD.p); }, [] {});
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
// The batched suite: the rows of peers.py's 'batched' suite (gemm, gemv, potrf, potrs
// nrhs=1, getrf, dot), same shapes and byte formulas, each in AoS and SoA, and two rows
// without a peer there: getrs nrhs=1 (potrs's bytes and shapes) and the AoS -> SoA
// transpose. One case type, one runner: an operation is its operands, its plan, its
// execute call and its check.

enum class BOp { Gemm, Gemv, Potrf, Potrs, Getrf, Getrs, Dot, Transpose };

// --soa-pad: extra elements in every SoA batch stride (0 by default).
int64_t g_soa_pad = 0;
// --col-major: the potrf and getrf cases column-major (false by default).
bool g_col_major = false;

struct BatchCase {
    BOp op;
    std::string name;  // "apairs potrf AoS float64"
    int32_t dtype;
    bool soa;
    int64_t n, batch;
    bool col = false;  // column-major (--col-major: the potrf and getrf cases)
    std::string shape() const { return fmt::format("n={} B={}", n, batch); }  // as peers.py
    int64_t es() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
    // A SoA batch stride: the count rounded up to 32 (apairs.h's recommendation), plus
    // --soa-pad elements.
    int64_t soa_stride() const { return (batch + 31) / 32 * 32 + g_soa_pad; }
    // The bytes peers.py counts for its row of the same shape (transpose: read + write).
    double bytes() const {
        const double b = double(batch), nn = double(n), e = double(es());
        switch (op) {
        case BOp::Gemm: return 3 * b * nn * nn * e;
        case BOp::Gemv:
        case BOp::Potrs:
        case BOp::Getrs: return b * (nn * nn + 2 * nn) * e;
        case BOp::Potrf:
        case BOp::Getrf:
        case BOp::Transpose: return 2 * b * nn * nn * e;
        case BOp::Dot: return (2 * nn + 1) * b * e;
        }
        return 0;
    }
};

// Per dtype (float64 first, as peers.py): for each n the square-matrix operations in
// peers.py's order, then dot's n, then the transposes. Host: n = 8 (dot 16, transpose 4)
// and `host_batch` elements.
std::vector<BatchCase> make_batch_cases(bool quick, bool host, int64_t host_batch) {
    std::vector<BatchCase> cs;
    const int64_t budget = int64_t(1) << (quick ? 28 : 30);
    // Each in AoS and SoA; the transpose (AoS -> SoA) once, its name saying so.
    auto add = [&](BOp op, const char *what, int32_t dt, int64_t n, int64_t b) {
        for (bool soa : {false, true}) {
            if (op == BOp::Transpose && soa) break;
            const char *layout = op == BOp::Transpose ? "" : soa ? " SoA" : " AoS";
            const bool col = g_col_major && (op == BOp::Potrf || op == BOp::Getrf);
            const std::string name =
                fmt::format("apairs {}{}{} {}", what, col ? " col-major" : "", layout, dtype_name(dt));
            cs.push_back(BatchCase{op, name, dt, soa, n, host ? host_batch : b, col});
        }
    };
    for (int32_t dt : {APAIRS_DTYPE_F64, APAIRS_DTYPE_F32}) {
        const int64_t es = dt == APAIRS_DTYPE_F64 ? 8 : 4;
        auto mat_batch = [&](int64_t n) { return std::max<int64_t>(1, budget / (n * n * es) / 4); };
        for (int64_t n : host ? std::vector<int64_t>{8} : std::vector<int64_t>{2, 4, 8, 16, 32, 64, 128}) {
            add(BOp::Gemm, "gemm", dt, n, mat_batch(n));
            add(BOp::Gemv, "gemv", dt, n, mat_batch(n));
            add(BOp::Potrf, "potrf", dt, n, mat_batch(n));
            add(BOp::Potrs, "potrs nrhs=1", dt, n, mat_batch(n));
            add(BOp::Getrf, "getrf", dt, n, mat_batch(n));
            add(BOp::Getrs, "getrs nrhs=1", dt, n, mat_batch(n));
        }
        for (int64_t n : host ? std::vector<int64_t>{16} : std::vector<int64_t>{16, 32, 64, 160, 512, 4096})
            add(BOp::Dot, "dot", dt, n, std::max<int64_t>(1, budget / (n * es) / 2));
        for (int64_t n : host ? std::vector<int64_t>{4} : std::vector<int64_t>{4, 16})
            add(BOp::Transpose, "transpose AoS->SoA", dt, n, mat_batch(n));
    }
    return cs;
}

// An operand's contents before the call: uniform in [0, 1) (as peers.py's torch.rand),
// uniform in [-1, 1) (getrf: pivoting happens), symmetric positive definite (off the
// diagonal uniform in [-1, 1), n + 1 on it: diagonally dominant, so SPD by Gershgorin),
// or an output (NaN bytes: an entry the call fails to write fails the check).
enum class Gen { Output, Uniform, Signed, Spd };
constexpr int32_t kInt32 = 0;  // the dtype of info and ipiv (int32_t; not an apairs dtype)

struct Operand {
    int32_t dtype;
    int64_t entries;  // values per element
    bool soa;
    int64_t stride;  // the AoS element stride or the SoA batch stride
    int64_t batch;
    Gen gen = Gen::Output;
    uint64_t seed = 0;
    int64_t n = 0;          // Spd: the matrix order
    bool in_place = false;  // the call overwrites it: restored before each call, untimed
    bool info = false;      // LAPACK's info: must be 0 for every element
    std::size_t esize() const { return dtype == APAIRS_DTYPE_F64 ? 8 : 4; }
    int64_t count() const { return soa ? entries * stride : batch * stride; }
    std::size_t bytes() const { return std::size_t(count()) * esize(); }
    int64_t index(int64_t e, int64_t i) const { return soa ? i * stride + e : e * stride + i; }
    // Entry i of element e before the call, exact in the dtype; it depends on (e, i) only,
    // so AoS and SoA hold the same problems, and the check regenerates what it needs.
    long double initial(int64_t e, int64_t i) const {
        switch (gen) {
        case Gen::Output: break;
        case Gen::Uniform: return value(dtype, seed, uint64_t(e * entries + i));
        case Gen::Signed: return 2 * value(dtype, seed, uint64_t(e * entries + i)) - 1;
        case Gen::Spd: {
            const int64_t r = i / n, c = i % n;
            if (r == c) return static_cast<long double>(n + 1);
            return 2 * value(dtype, seed, uint64_t(e * n * n + std::min(r, c) * n + std::max(r, c))) - 1;
        }
        }
        return std::numeric_limits<long double>::quiet_NaN();
    }
};

void store(int32_t t, void *buf, int64_t k, long double v) {
    switch (t) {
    case APAIRS_DTYPE_F32: static_cast<float *>(buf)[k] = static_cast<float>(v); break;
    case APAIRS_DTYPE_F64: static_cast<double *>(buf)[k] = static_cast<double>(v); break;
    default: static_cast<int32_t *>(buf)[k] = static_cast<int32_t>(v); break;
    }
}

// f(lo, hi) over [0, count) in a few threads: filling a 1 GiB operand serially would
// cost as much as timing it.
template <class F>
void parallel_for(int64_t count, F &&f) {
    const int64_t t = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, 32);
    if (t == 1 || count < 1024) return f(int64_t(0), count);
    const int64_t per = (count + t - 1) / t;
    std::vector<std::thread> ths;
    for (int64_t lo = 0; lo < count; lo += per)
        ths.emplace_back([&f, lo, hi = std::min(count, lo + per)] { f(lo, hi); });
    for (std::thread &th : ths) th.join();
}

void fill_operand(const Operand &o, void *buf) {
    if (o.gen == Gen::Output) {
        std::memset(buf, 0xff, o.bytes());
        return;
    }
    std::memset(buf, 0, o.bytes());  // padding
    // Walk memory in order: elements outer in AoS, entries outer in SoA.
    const int64_t outer = o.soa ? o.entries : o.batch, inner = o.soa ? o.batch : o.entries;
    parallel_for(outer, [&](int64_t lo, int64_t hi) {
        for (int64_t a = lo; a < hi; ++a)
            for (int64_t b = 0; b < inner; ++b) {
                const int64_t e = o.soa ? b : a, i = o.soa ? a : b;
                store(o.dtype, buf, o.index(e, i), o.initial(e, i));
            }
    });
}

std::unique_ptr<HostBuf> host_buffer(std::size_t bytes) {
    try {
        return std::make_unique<HostBuf>(bytes);
    } catch (const std::bad_alloc &) {
        throw Skip(fmt::format("cannot allocate {:.1f} MiB of host memory", double(bytes) / 1048576.0));
    }
}

// A case's operands in the backend's memory (host buffers, or device buffers filled once
// through a host staging buffer), with pristine copies of those the call overwrites.
class Arrays {
public:
    Arrays(std::vector<Operand> ops, bool cuda) : ops_(std::move(ops)), cuda_(cuda) {
        std::size_t most = 0;
        for (const Operand &o : ops_) most = std::max(most, o.bytes());
        if (!cuda_) {
            for (const Operand &o : ops_) {
                host_.push_back(host_buffer(o.bytes()));
                fill_operand(o, host_.back()->get());
                host_pristine_.push_back(o.in_place ? host_buffer(o.bytes()) : nullptr);
                if (o.in_place) std::memcpy(host_pristine_.back()->get(), host_.back()->get(), o.bytes());
            }
            return;
        }
#if APAIRS_BENCH_CUDA
        const std::unique_ptr<HostBuf> staging = host_buffer(most);
        for (const Operand &o : ops_) {
            dev_.push_back(std::make_unique<DevBuf>(o.bytes()));
            dev_pristine_.push_back(o.in_place ? std::make_unique<DevBuf>(o.bytes()) : nullptr);
            fill_operand(o, staging->get());
            CU(cudaMemcpy(dev_.back()->p, staging->get(), o.bytes(), cudaMemcpyHostToDevice));
            if (o.in_place) CU(cudaMemcpy(dev_pristine_.back()->p, staging->get(), o.bytes(), cudaMemcpyHostToDevice));
        }
        if (std::any_of(ops_.begin(), ops_.end(), [](const Operand &o) { return o.in_place; })) {
            int device = 0, l2 = 0;
            CU(cudaGetDevice(&device));
            CU(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
            flush_ = std::make_unique<DevBuf>(std::max<std::size_t>(2 * std::size_t(l2), std::size_t(1) << 20));
        }
        CU(cudaDeviceSynchronize());
#else
        die("this apairs_bench was built without CUDA");
#endif
    }
    const std::vector<Operand> &operands() const { return ops_; }
    void *ptr(std::size_t k) const {
#if APAIRS_BENCH_CUDA
        if (cuda_) return dev_[k]->p;
#endif
        return host_[k]->get();
    }
    template <class T>
    T *as(std::size_t k) const {
        return static_cast<T *>(ptr(k));
    }
    // The overwritten operands back to their contents before the calls: a host memcpy,
    // or a device-to-device copy queued on the plans' stream (the legacy default stream)
    // ahead of the timed call and outside its events, then a memset of twice the L2
    // cache, so that the call does not find the copy's last lines there (peers.py's
    // calls read inputs that no copy just wrote).
    void restore() const {
        for (std::size_t k = 0; k < ops_.size(); ++k) {
            if (!ops_[k].in_place) continue;
#if APAIRS_BENCH_CUDA
            if (cuda_) {
                CU(cudaMemcpyAsync(dev_[k]->p, dev_pristine_[k]->p, ops_[k].bytes(), cudaMemcpyDeviceToDevice,
                                   nullptr));
                continue;
            }
#endif
            std::memcpy(host_[k]->get(), host_pristine_[k]->get(), ops_[k].bytes());
        }
#if APAIRS_BENCH_CUDA
        if (flush_) CU(cudaMemsetAsync(flush_->p, 0, flush_->bytes, nullptr));
#endif
    }
    // Element e of operand k as it is now (after the calls), read back.
    std::vector<long double> element(std::size_t k, int64_t e) const {
        const Operand &o = ops_[k];
        std::vector<long double> v(std::size_t(o.entries));
        if (!cuda_) {
            for (int64_t i = 0; i < o.entries; ++i)
                v[std::size_t(i)] = read_entry(o.dtype, host_[k]->get(), o.index(e, i));
            return v;
        }
#if APAIRS_BENCH_CUDA
        // One strided copy gathers the element's entries in either layout.
        const std::size_t es = o.esize();
        std::vector<unsigned char> buf(std::size_t(o.entries) * es);
        CU(cudaMemcpy2D(buf.data(), es,
                        static_cast<const unsigned char *>(dev_[k]->p) + std::size_t(o.index(e, 0)) * es,
                        o.soa ? std::size_t(o.stride) * es : es, es, std::size_t(o.entries), cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < o.entries; ++i) v[std::size_t(i)] = read_entry(o.dtype, buf.data(), i);
#endif
        return v;
    }
    // Element e of operand k as it was before the calls (regenerated).
    std::vector<long double> initial(std::size_t k, int64_t e) const {
        std::vector<long double> v(std::size_t(ops_[k].entries));
        for (int64_t i = 0; i < ops_[k].entries; ++i) v[std::size_t(i)] = ops_[k].initial(e, i);
        return v;
    }
    // The elements whose int32 operand k (info) is nonzero: their count and the first.
    std::pair<int64_t, int64_t> nonzero(std::size_t k) const {
        const Operand &o = ops_[k];
        const int32_t *p = as<const int32_t>(k);
        std::vector<int32_t> copy;
#if APAIRS_BENCH_CUDA
        if (cuda_) {
            copy.resize(std::size_t(o.count()));
            CU(cudaMemcpy(copy.data(), dev_[k]->p, o.bytes(), cudaMemcpyDeviceToHost));
            p = copy.data();
        }
#endif
        std::pair<int64_t, int64_t> r{0, -1};
        for (int64_t e = 0; e < o.batch; ++e)
            if (p[o.index(e, 0)] != 0 && r.first++ == 0) r.second = e;
        return r;
    }

private:
    std::vector<Operand> ops_;
    bool cuda_;
    std::vector<std::unique_ptr<HostBuf>> host_, host_pristine_;
#if APAIRS_BENCH_CUDA
    std::vector<std::unique_ptr<DevBuf>> dev_, dev_pristine_;
    std::unique_ptr<DevBuf> flush_;  // evicts the restored operands from L2
#endif
};

// The operands of each operation, in its execute function's order. Matrices n x n
// row-major (ld = n), vectors n x 1 (apairs.h's vector convention); AoS strides are the
// extents, SoA strides the batch rounded up to 32 (ipiv: the batch, as apairs.h fixes).
std::vector<Operand> operands(const BatchCase &c) {
    const int64_t n = c.n, b = c.batch, s = c.soa_stride();
    auto mat = [&](Gen g, uint64_t seed, bool in_place = false) {
        return Operand{c.dtype, n * n, c.soa, c.soa ? s : n * n, b, g, seed, n, in_place};
    };
    auto vec = [&](Gen g, uint64_t seed, bool in_place = false) {
        return Operand{c.dtype, n, c.soa, c.soa ? s : n, b, g, seed, n, in_place};
    };
    const Operand info{kInt32, 1, false, 1, b, Gen::Output, 0, 0, false, true};
    switch (c.op) {
    case BOp::Gemm: return {mat(Gen::Uniform, 11), mat(Gen::Uniform, 12), mat(Gen::Output, 0)};
    case BOp::Gemv: return {mat(Gen::Uniform, 21), vec(Gen::Uniform, 22), vec(Gen::Output, 0)};
    case BOp::Potrf: return {mat(Gen::Spd, 31, true), info};
    case BOp::Potrs: return {mat(Gen::Spd, 31), vec(Gen::Uniform, 32, true), info};  // A: factored once
    case BOp::Getrf: return {mat(Gen::Signed, 41, true), Operand{kInt32, n, c.soa, c.soa ? b : n, b}, info};
    case BOp::Getrs:  // A and ipiv: factored once
        return {mat(Gen::Signed, 41), Operand{kInt32, n, c.soa, c.soa ? b : n, b}, vec(Gen::Uniform, 42, true), info};
    case BOp::Dot: return {vec(Gen::Uniform, 51), vec(Gen::Uniform, 52), Operand{c.dtype, 1, false, 1, b}};
    case BOp::Transpose:
        return {Operand{c.dtype, n * n, false, n * n, b, Gen::Uniform, 61}, Operand{c.dtype, n * n, true, s, b}};
    }
    return {};
}

void create_plan(const BatchCase &c, const std::vector<Operand> &o, apairs_context_t ctx, apairs_plan_t *p) {
    const int32_t lay = c.soa ? APAIRS_LAYOUT_SOA : APAIRS_LAYOUT_AOS,
                  ord = c.col ? APAIRS_ORDER_COL_MAJOR : APAIRS_ORDER_ROW_MAJOR;
    const int64_t n = c.n, b = c.batch;
    switch (c.op) {
    case BOp::Gemm:
        API(apairs_plan_create_gemm_batched, p, ctx, c.dtype, lay, ord, APAIRS_OP_N, APAIRS_OP_N, n, n, n, 1.0, 0.0, n,
            o[0].stride, n, o[1].stride, n, o[2].stride, b);
        break;
    case BOp::Gemv:
        API(apairs_plan_create_gemv_batched, p, ctx, c.dtype, lay, ord, APAIRS_OP_N, n, n, 1.0, 0.0, n, o[0].stride,
            o[1].stride, o[2].stride, b);
        break;
    case BOp::Potrf:
        API(apairs_plan_create_potrf_batched, p, ctx, c.dtype, lay, ord, APAIRS_UPLO_LOWER, n, n, o[0].stride, b);
        break;
    case BOp::Potrs:
        API(apairs_plan_create_potrs_batched, p, ctx, c.dtype, lay, ord, APAIRS_UPLO_LOWER, n, 1, n, o[0].stride, 1,
            o[1].stride, b);
        break;
    case BOp::Getrf: API(apairs_plan_create_getrf_batched, p, ctx, c.dtype, lay, ord, n, n, o[0].stride, b); break;
    case BOp::Getrs:
        API(apairs_plan_create_getrs_batched, p, ctx, c.dtype, lay, ord, APAIRS_OP_N, n, 1, n, o[0].stride, 1,
            o[2].stride, b);
        break;
    case BOp::Dot: API(apairs_plan_create_dot_batched, p, ctx, c.dtype, lay, n, o[0].stride, o[1].stride, b); break;
    case BOp::Transpose:
        API(apairs_plan_create_transpose_batched, p, ctx, c.dtype, APAIRS_LAYOUT_SOA, n * n, o[0].stride, o[1].stride,
            b);
        break;
    }
}

void execute(const BatchCase &c, apairs_plan_t p, const Arrays &x) {
    switch (c.op) {
    case BOp::Gemm: API(apairs_plan_execute_gemm, p, x.ptr(0), x.ptr(1), x.ptr(2)); break;
    case BOp::Gemv: API(apairs_plan_execute_gemv, p, x.ptr(0), x.ptr(1), x.ptr(2)); break;
    case BOp::Potrf: API(apairs_plan_execute_potrf, p, x.ptr(0), x.as<int32_t>(1)); break;
    case BOp::Potrs: API(apairs_plan_execute_potrs, p, x.ptr(0), x.ptr(1)); break;
    case BOp::Getrf: API(apairs_plan_execute_getrf, p, x.ptr(0), x.as<int32_t>(1), x.as<int32_t>(2)); break;
    case BOp::Getrs: API(apairs_plan_execute_getrs, p, x.ptr(0), x.as<int32_t>(1), x.ptr(2)); break;
    case BOp::Dot: API(apairs_plan_execute_dot, p, x.ptr(0), x.ptr(1), x.ptr(2)); break;
    case BOp::Transpose: API(apairs_plan_execute_transpose, p, x.ptr(0), x.ptr(1)); break;
    }
}

// potrs and getrs solve from factors: potrf's or getrf's output, made once with our own
// plan (writing the case's info operand) before anything is timed.
void prepare(const BatchCase &c, apairs_context_t ctx, const Arrays &x) {
    if (c.op != BOp::Potrs && c.op != BOp::Getrs) return;
    BatchCase f = c;
    f.op = c.op == BOp::Potrs ? BOp::Potrf : BOp::Getrf;
    PlanHolder plan;
    create_plan(f, operands(f), ctx, &plan.p);
    if (c.op == BOp::Potrs)
        API(apairs_plan_execute_potrf, plan.p, x.ptr(0), x.as<int32_t>(2));
    else
        API(apairs_plan_execute_getrf, plan.p, x.ptr(0), x.as<int32_t>(1), x.as<int32_t>(3));
}

// The check: |got - ref| as a fraction of `bound`; fails above 2 (room for the
// reference's own rounding), as the other checks.
template <class Where>
void judge(Check &ck, long double got, long double ref, long double bound, Where &&where) {
    const long double err = std::fabs(got - ref);
    const double frac = std::isnan(got) ? std::numeric_limits<double>::infinity()
                        : err == 0      ? 0.0
                                        : static_cast<double>(err / bound);
    ++ck.checked;
    ck.worst = std::max(ck.worst, frac);
    if (!(frac <= 2.0)) {
        if (!ck.failed)
            ck.first_failure = fmt::format("{} = {:.17g}, reference {:.17g}", where(), double(got), double(ref));
        ck.failed = true;
    }
}

void fail(Check &ck, const std::string &what) {
    if (!ck.failed) ck.first_failure = what;
    ck.failed = true;
}

// What each check holds the result to (apairs.h's bounds, as tests/batched reads them).
const char *bound_text(BOp op) {
    switch (op) {
    case BOp::Gemm: return "apairs.h's bound (k + 2) u sum |a b|";
    case BOp::Gemv: return "the gemv bound (n + 2) 2^-53 sum |a x| (+ u |y| in float32)";
    case BOp::Dot: return "the dot bound (n + 1) 2^-53 sum |x y| (+ u |r| in float32)";
    case BOp::Potrf: return "|A - L L^T| <= gamma_{n+1} |L| |L^T|";
    case BOp::Potrs: return "the residual |b - A x| <= gamma_{3n+1} |L| |L^T| |x|";
    case BOp::Getrf: return "|P^T A - L U| <= gamma_n |L| |U|, pivots largest in their columns";
    case BOp::Getrs: return "the residual |b - A x| <= gamma_{3n} P |L| |U| |x|";
    case BOp::Transpose: return "bit-for-bit copies";
    }
    return "";
}

// Element e: `now` holds each operand as the calls left it, `was` as it was before.
void check_element(const BatchCase &c, int64_t e, const std::vector<std::vector<long double>> &now,
                   const std::vector<std::vector<long double>> &was, Check &ck) {
    const int64_t n = c.n;
    const long double u = c.dtype == APAIRS_DTYPE_F64 ? 0x1p-53L : 0x1p-24L, d53 = 0x1p-53L;
    const long double u_out = c.dtype == APAIRS_DTYPE_F32 ? u : 0;  // f32 rounds a double sum once
    auto gamma = [&](int64_t k) { return k * u / (1 - k * u); };
    auto at = [n](const std::vector<long double> &m, int64_t i, int64_t j) { return m[std::size_t(i * n + j)]; };
    switch (c.op) {
    case BOp::Gemm:
    case BOp::Gemv: {
        const int64_t cols = c.op == BOp::Gemm ? n : 1;  // of B (gemm) or x (gemv)
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < cols; ++j) {
                long double ref = 0, abs = 0;
                for (int64_t l = 0; l < n; ++l) {
                    const long double t = at(was[0], i, l) * was[1][std::size_t(l * cols + j)];
                    ref += t;
                    abs += std::fabs(t);
                }
                const long double bound =
                    c.op == BOp::Gemm ? (n + 2) * u * abs : u_out * std::fabs(ref) + (n + 2) * d53 * abs;
                judge(ck, now[2][std::size_t(i * cols + j)], ref, bound,
                      [&] { return fmt::format("{}[{}]({}, {})", c.op == BOp::Gemm ? "C" : "y", e, i, j); });
            }
        break;
    }
    case BOp::Dot: {
        long double ref = 0, abs = 0;
        for (int64_t i = 0; i < n; ++i) {
            ref += was[0][std::size_t(i)] * was[1][std::size_t(i)];
            abs += std::fabs(was[0][std::size_t(i)] * was[1][std::size_t(i)]);
        }
        judge(ck, now[2][0], ref, u_out * std::fabs(ref) + (n + 1) * d53 * abs,
              [&] { return fmt::format("out[{}]", e); });
        break;
    }
    case BOp::Transpose:
        for (int64_t i = 0; i < n * n; ++i)
            judge(ck, now[1][std::size_t(i)], was[0][std::size_t(i)], 0,
                  [&] { return fmt::format("out[{}] of element {}", i, e); });
        break;
    case BOp::Potrf:
    case BOp::Potrs: {
        const std::vector<long double> &L = now[0];  // the lower triangle holds the factor
        auto llt = [&](int64_t i, int64_t j, bool absolute) {  // (L L^T)(i, j) or (|L| |L^T|)(i, j)
            long double s = 0;
            for (int64_t k = 0; k <= std::min(i, j); ++k)
                s += absolute ? std::fabs(at(L, i, k) * at(L, j, k)) : at(L, i, k) * at(L, j, k);
            return s;
        };
        if (c.op == BOp::Potrf) {
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j <= i; ++j)
                    judge(ck, llt(i, j, false), at(was[0], i, j), gamma(n + 1) * llt(i, j, true),
                          [&] { return fmt::format("(L L^T)[{}]({}, {})", e, i, j); });
            break;
        }
        // Higham, Thm 10.4: (A + dA) x = b, |dA| <= gamma_{3n+1} |L| |L^T|.
        const std::vector<long double> &x = now[1], &b = was[1];
        for (int64_t i = 0; i < n; ++i) {
            long double ax = 0, bound = 0;
            for (int64_t j = 0; j < n; ++j) {
                ax += at(was[0], i, j) * x[std::size_t(j)];
                bound += llt(i, j, true) * std::fabs(x[std::size_t(j)]);
            }
            judge(ck, ax, b[std::size_t(i)], gamma(3 * n + 1) * bound,
                  [&] { return fmt::format("(A x)[{}]({})", e, i); });
        }
        break;
    }
    case BOp::Getrf: {
        const std::vector<long double> &LU = now[0], &piv = now[1];
        std::vector<long double> pa = was[0];  // P^T A: the interchanges applied in order
        for (int64_t j = 0; j < n; ++j) {
            const long double p = piv[std::size_t(j)];
            if (!(p >= j + 1 && p <= n))
                return fail(ck, fmt::format("ipiv[{}]({}) = {} is outside [{}, {}]", e, j, double(p), j + 1, n));
            for (int64_t k = 0; k < n; ++k)
                std::swap(pa[std::size_t(j * n + k)], pa[std::size_t((int64_t(p) - 1) * n + k)]);
        }
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < i; ++j)  // each pivot a largest entry of its column: |l_ij| <= 1
                if (!(std::fabs(at(LU, i, j)) <= 1))
                    return fail(ck, fmt::format("|L[{}]({}, {})| = {:.17g} > 1: a pivot not its column's largest", e,
                                                i, j, double(at(LU, i, j))));
        // Higham, Thm 9.3: L U = P^T A + dA, |dA| <= gamma_n |L| |U|.
        for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j) {
                long double s = 0, abs = 0;
                for (int64_t k = 0; k <= std::min(i, j); ++k) {
                    const long double t = (k == i ? 1 : at(LU, i, k)) * at(LU, k, j);
                    s += t;
                    abs += std::fabs(t);
                }
                judge(ck, s, pa[std::size_t(i * n + j)], gamma(n) * abs,
                      [&] { return fmt::format("(L U)[{}]({}, {})", e, i, j); });
            }
        break;
    }
    case BOp::Getrs: {
        // Higham, Thm 9.4: (A + dA) x = b, |dA| <= gamma_{3n} P |L| |U|: row i of P^T A is
        // row i of L U, so the bound of A's row p_i is that of L U's row i.
        const std::vector<long double> &LU = now[0], &piv = now[1], &x = now[2], &b = was[2];
        std::vector<int64_t> row(static_cast<std::size_t>(n));  // P^T A's row i is A's row row[i]
        for (int64_t i = 0; i < n; ++i) row[std::size_t(i)] = i;
        for (int64_t j = 0; j < n; ++j) {
            const long double p = piv[std::size_t(j)];
            if (!(p >= j + 1 && p <= n))
                return fail(ck, fmt::format("ipiv[{}]({}) = {} is outside [{}, {}]", e, j, double(p), j + 1, n));
            std::swap(row[std::size_t(j)], row[std::size_t(int64_t(p) - 1)]);
        }
        for (int64_t i = 0; i < n; ++i) {
            long double ax = 0, bound = 0;
            for (int64_t j = 0; j < n; ++j) {
                ax += at(was[0], row[std::size_t(i)], j) * x[std::size_t(j)];
                long double lu = 0;
                for (int64_t k = 0; k <= std::min(i, j); ++k)
                    lu += std::fabs((k == i ? 1 : at(LU, i, k)) * at(LU, k, j));
                bound += lu * std::fabs(x[std::size_t(j)]);
            }
            judge(ck, ax, b[std::size_t(row[std::size_t(i)])], gamma(3 * n) * bound,
                  [&] { return fmt::format("(A x)[{}]({})", e, row[std::size_t(i)]); });
        }
        break;
    }
    }
}

// Six elements (the first, the last, four drawn) checked whole, and every element's info.
std::string check_case(const BatchCase &c, const Arrays &x) {
    Check ck;
    bool has_info = false;
    for (std::size_t k = 0; k < x.operands().size(); ++k) {
        if (!x.operands()[k].info) continue;
        has_info = true;
        const auto [bad, first] = x.nonzero(k);
        if (bad) fail(ck, fmt::format("info != 0 for {} of {} elements (the first: element {})", bad, c.batch, first));
    }
    std::vector<int64_t> elems = {0, c.batch - 1};
    for (uint64_t k = 0; elems.size() < 6; ++k) elems.push_back(int64_t(draw(98, k) % uint64_t(c.batch)));
    std::sort(elems.begin(), elems.end());
    elems.erase(std::unique(elems.begin(), elems.end()), elems.end());
    for (int64_t e : elems) {
        std::vector<std::vector<long double>> now, was;
        for (std::size_t k = 0; k < x.operands().size(); ++k) {
            now.push_back(x.element(k, e));
            was.push_back(x.initial(k, e));
        }
        if (c.col)  // the input's and the factor's n x n grids read transposed: logical order
            for (auto *m : {&now[0], &was[0]})
                for (int64_t i = 0; i < c.n; ++i)
                    for (int64_t j = 0; j < i; ++j)
                        std::swap((*m)[std::size_t(i * c.n + j)], (*m)[std::size_t(j * c.n + i)]);
        check_element(c, e, now, was, ck);
    }
    if (ck.failed) return fmt::format("CHECK FAILED: {}", ck.first_failure);
    return fmt::format("check: {} entries of {} elements ok{}, worst error {:.2g} of {}", ck.checked, elems.size(),
                       has_info ? " (info 0 everywhere)" : "", ck.worst, bound_text(c.op));
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
            const std::vector<double> ts = time_calls(
                true, 1, 5, [&] { CU(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, nullptr)); },
                [] {});
            *bytes_out = bytes;
            return 2.0 * double(bytes) / median(ts) / 1e6;
        } catch (const Skip &) {
        }
    }
    return 0;
}
#endif

// One warm-up call, then the median of 5 (host: 3, or 1 and no warm-up with --quick);
// in-place operands restored before every call, outside the timed region.
Row run_batch_case(const BatchCase &c, apairs_context_t ctx, const Settings &st, double copy_gbs) {
    Row row{c.name, c.shape(), 0, 0, "", "", "batched", "GB/s"};
    int reps = st.cuda ? 5 : st.quick ? 1 : 3;
    const int warm = st.cuda ? 1 : st.quick ? 0 : 1;
    if (st.reps > 0) reps = st.reps;

    PlanHolder plan;
    const auto tp = std::chrono::steady_clock::now();
    create_plan(c, operands(c), ctx, &plan.p);
    const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
    row.plan = fmt::format("plan {:.3f} ms; {}", plan_ms, describe(plan.p));

    const Arrays x(operands(c), st.cuda);
    prepare(c, ctx, x);
    const std::vector<double> ts = time_calls(
        st.cuda, warm, reps, [&] { execute(c, plan.p, x); }, [&] { x.restore(); });
    row.ms = median(ts);
    row.rate = c.bytes() / row.ms / 1e6;
    row.check = check_case(c, x);
    if (st.cuda && copy_gbs > 0)
        row.check += fmt::format(" | bandwidth bound {:.3f} ms ({:.0f} MB at {:.0f} GB/s copy): {:.1f}% of it reached",
                                 c.bytes() / copy_gbs / 1e6, c.bytes() / 1e6, copy_gbs, 100.0 * row.rate / copy_gbs);
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

// ---------------------------------------------------------------------------------
// The stats suite: the rows of peers.py's 'stats' suite (two-body statistics of
// float32 points uniform in the unit cube, as torch.rand(N, 3)), same shapes and rates:
// SDH histograms (256 and 4096 uniform bins on [0, sqrt(3))), pair counts within
// r = 0.1 and kNN with k = 16, each through one execute call on the whole set (AUTO:
// N (N - 1) / 2 distinct pairs; kNN: the N x N ordered pairs, i = j excluded).

struct StatsCase {
    std::string name;
    int kind;  // 0 histogram, 1 pair counts, 2 kNN
    int64_t n, bins, k;
    int reps, warm;
    std::string shape() const {
        return kind == 0 ? fmt::format("N={} bins={}", n, bins) : fmt::format("N={}", n);
    }
};

std::vector<StatsCase> make_stats_cases(bool quick, bool host) {
    const int64_t n = host ? 20000 : quick ? 32768 : 131072;
    std::vector<StatsCase> cs = {
        {"apairs SDH histogram f32 (distinct pairs)", 0, n, 256, 0, 3, 1},
        {"apairs SDH histogram f32 (distinct pairs)", 0, n, 4096, 0, 3, 1},
        {"apairs 2PCF count r<=0.1 f32", 1, n, 0, 0, 3, 1},
        {"apairs kNN k=16 f32", 2, n, 0, 16, 3, 1},
    };
    if (!host && !quick) cs.push_back({"apairs SDH histogram f32 (distinct pairs)", 0, 4000000, 256, 0, 1, 0});
    return cs;
}

Row run_stats_case(const StatsCase &c, apairs_context_t ctx, const Settings &st) {
    Row row{c.name, c.shape(), 0, 0, "", "", "stats", c.kind == 2 ? "G ordered pairs/s" : "G distinct pairs/s"};
    int reps = st.quick && !st.cuda ? 1 : c.reps;
    const int warm = st.quick && !st.cuda ? 0 : c.warm;
    if (st.reps > 0) reps = st.reps;
    const int64_t n = c.n, d = 3;
    const double rmax = std::sqrt(3.0), radius = 0.1;
    PlanHolder plan;
    const auto tp = std::chrono::steady_clock::now();
    switch (c.kind) {
    case 0:
        API(apairs_plan_create_histogram_uniform, &plan.p, ctx, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0.0,
            APAIRS_DTYPE_F32, n, 0, d, d, 0, c.bins, 0.0, rmax, 0, nullptr);
        break;
    case 1:
        API(apairs_plan_create_pair_counts, &plan.p, ctx, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0.0, APAIRS_DTYPE_F32,
            n, 0, d, d, 0, 1, &radius, 0, nullptr);
        break;
    default:
        API(apairs_plan_create_knn, &plan.p, ctx, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0.0, APAIRS_DTYPE_F32, n, 0, d,
            d, 0, c.k);
    }
    const double plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tp).count();
    row.plan = describe(plan.p);
    [[maybe_unused]] const std::size_t a_bytes = std::size_t(n * d) * 4;
    const std::size_t out_elems = c.kind == 0 ? std::size_t(c.bins + 2) : c.kind == 1 ? 1 : std::size_t(n * c.k);
    std::vector<float> pts(std::size_t(n * d));
    fill(APAIRS_DTYPE_F32, kSeedA, pts.data(), uint64_t(n * d));
    // Poisoned, as on CUDA: an output the call fails to write fails the check.
    std::vector<int64_t> out(out_elems, -1);
    std::vector<float> dist(c.kind == 2 ? out_elems : 0, std::numeric_limits<float>::quiet_NaN());
    auto execute = [&](const void *A, void *o0, void *o1) {
        if (c.kind == 0) API(apairs_plan_execute_histogram, plan.p, A, nullptr, static_cast<int64_t *>(o0));
        else if (c.kind == 1) API(apairs_plan_execute_pair_counts, plan.p, A, nullptr, static_cast<int64_t *>(o0));
        else API(apairs_plan_execute_knn, plan.p, A, nullptr, static_cast<int64_t *>(o0), o1);
    };
    std::vector<double> ts;
    if (!st.cuda) {
        ts = time_calls(false, warm, reps, [&] { execute(pts.data(), out.data(), dist.data()); }, [] {});
    } else {
#if APAIRS_BENCH_CUDA
        DevBuf dA(a_bytes), dO(out_elems * 8), dD(c.kind == 2 ? out_elems * 4 : 4);
        CU(cudaMemcpy(dA.p, pts.data(), a_bytes, cudaMemcpyHostToDevice));
        CU(cudaMemset(dO.p, 0xff, out_elems * 8));
        ts = time_calls(true, warm, reps, [&] { execute(dA.p, dO.p, dD.p); }, [] {});
        CU(cudaMemcpy(out.data(), dO.p, out_elems * 8, cudaMemcpyDeviceToHost));
        if (c.kind == 2) CU(cudaMemcpy(dist.data(), dD.p, out_elems * 4, cudaMemcpyDeviceToHost));
#else
        die("this apairs_bench was built without CUDA");
#endif
    }
    row.ms = median(ts);
    const double pairs = c.kind == 2 ? double(n) * double(n) : 0.5 * double(n) * double(n - 1);
    row.rate = pairs / row.ms / 1e6;

    // The check: histogram totals exact, and every slot of the same histogram of the
    // first 1500 points against a brute force; the count against its expectation for
    // uniform points in the unit cube (2 pi r^3 / 3 (1 - 9 r / 16 ...) per pair: only a
    // sanity band); kNN rows 0, n/2 and n-1 against a long-double brute force.
    const int64_t distinct = n * (n - 1) / 2;
    auto dist_ld = [&](int64_t i, int64_t j) {
        long double s = 0;
        for (int64_t k = 0; k < d; ++k) {
            const long double t = (long double)pts[std::size_t(i * d + k)] - pts[std::size_t(j * d + k)];
            s += t * t;
        }
        return sqrtl(s);
    };
    if (c.kind == 0) {
        int64_t total = 0;
        for (int64_t v : out) total += v;
        // The bins (a total alone misses pairs put in the wrong bin): a plan of its own on
        // the first m points (host arrays, either backend), each slot between the brute
        // force's pairs surely in it and those plus the pairs within a relative 2e-6 of
        // one of its edges (past float32's error: either side is right for them).
        const int64_t m = std::min<int64_t>(n, 1500);
        PlanHolder sample;
        API(apairs_plan_create_histogram_uniform, &sample.p, ctx, APAIRS_PAIRS_AUTO, APAIRS_METRIC_L2, 0.0,
            APAIRS_DTYPE_F32, m, 0, d, d, 0, c.bins, 0.0, rmax, 0, nullptr);
        std::vector<int64_t> got(out.size(), -1), sure(out.size()), either(out.size());
        API(apairs_plan_execute_histogram, sample.p, pts.data(), nullptr, got.data());
        std::vector<double> e(std::size_t(c.bins + 1), rmax);  // the edges, as apairs.h defines them
        for (int64_t b = 0; b < c.bins; ++b) e[std::size_t(b)] = double(b) * (rmax / double(c.bins));
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = i + 1; j < m; ++j) {
                const long double r = dist_ld(i, j), tol = 2e-6L * r;
                const std::size_t s = std::size_t(std::upper_bound(e.begin(), e.end(), r) - e.begin());
                if (s < e.size() && e[s] - r <= tol) ++either[s], ++either[s + 1];
                else if (s > 0 && r - e[s - 1] <= tol) ++either[s - 1], ++either[s];
                else ++sure[s];
            }
        int64_t wrong = 0;
        for (std::size_t s = 0; s < got.size(); ++s) wrong += got[s] < sure[s] || got[s] > sure[s] + either[s];
        if (total != distinct)
            row.check = fmt::format("CHECK FAILED: the slots add up to {}, not N(N-1)/2 = {}", total, distinct);
        else if (wrong)
            row.check = fmt::format("CHECK FAILED: {} of the {} slots of the first {} points' histogram differ from "
                                    "a brute force", wrong, got.size(), m);
        else
            row.check = fmt::format("check: the {} slots add up to N(N-1)/2 = {} exactly; the first {} points' "
                                    "slots match a brute force", out.size(), distinct, m);
    } else if (c.kind == 1) {
        // Unit cube, r = 0.1: P(|x - y| <= r) = 4/3 pi r^3 - 3/2 pi r^4 + 8/5 r^5 ... (boundary terms).
        const double p = 4.0 / 3.0 * M_PI * std::pow(radius, 3) - 1.5 * M_PI * std::pow(radius, 4) + 1.6 * std::pow(radius, 5);
        const double expect = p * double(distinct), rel = std::fabs(double(out[0]) - expect) / expect;
        row.check = rel < 0.05 ? fmt::format("check: {} pairs within r, {:.2f}% from the expected {:.0f}", out[0], 100 * rel, expect)
                               : fmt::format("CHECK FAILED: {} pairs within r, expected about {:.0f}", out[0], expect);
    } else {
        int bad = 0, bad_index = 0;
        for (int64_t i : {int64_t(0), n / 2, n - 1}) {
            std::vector<std::pair<long double, int64_t>> all;
            for (int64_t j = 0; j < n; ++j)
                if (j != i) all.push_back({dist_ld(i, j), j});
            std::partial_sort(all.begin(), all.begin() + c.k, all.end());
            auto near = [](long double got, long double want) { return fabsl(got - want) <= 1e-6L * want + 1e-12L; };
            for (int64_t q = 0; q < c.k; ++q) {
                const long double reported = dist[std::size_t(i * c.k + q)];
                bad += !near(reported, all[std::size_t(q)].first);
                // The index: another point, not listed twice, at the reported distance.
                const int64_t *row_idx = &out[std::size_t(i * c.k)], j = row_idx[q];
                bad_index += j < 0 || j >= n || j == i || std::find(row_idx, row_idx + q, j) != row_idx + q ||
                             !near(reported, dist_ld(i, j));
            }
        }
        row.check = bad || bad_index
                        ? fmt::format("CHECK FAILED: of the {} neighbours of rows 0, N/2, N-1, {} distances differ "
                                      "from brute force, {} indices are wrong (out of range, the row itself, "
                                      "repeated, or not at the reported distance)",
                                      3 * c.k, bad, bad_index)
                        : fmt::format("check: rows 0, N/2, N-1: the {} neighbour distances match a long-double brute "
                                      "force, the indices are distinct points at those distances", c.k);
    }
    row.plan = fmt::format("plan {:.3f} ms; {}", plan_ms, row.plan);
    return row;
}


// ---------------------------------------------------------------------------------
// The genotype suite: apairs_plan_execute_genotype on a packed cohort, A = B.

struct GenoCase {
    std::string name;
    int32_t metric, missing;
    int64_t n, d;
    double miss;
    bool cohort = false;  // host-memory A, B and D, one call timed by the wall clock
    std::string shape() const { return fmt::format("{}x{} d={}", n, n, d); }
};

std::vector<GenoCase> make_geno_cases(bool quick, bool host, bool cohort) {
    // Host: PLINK's comparison shape; CUDA: the issue's 8192 x 8192, d = 4096.
    const int64_t n = host ? (quick ? 1000 : 2000) : (quick ? 4096 : 8192),
                  d = host ? (quick ? 20000 : 100000) : 4096;
    std::vector<GenoCase> cs = {
        {"apairs genotype distance", APAIRS_GENOTYPE_DISTANCE, APAIRS_GENOTYPE_MISSING_WEIGHTED, n, d, 0.0},
        {"apairs genotype ibs 5% missing", APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_WEIGHTED, n, d, 0.05},
        {"apairs genotype ibs flat 5% missing", APAIRS_GENOTYPE_IBS, APAIRS_GENOTYPE_MISSING_FLAT, n, d, 0.05}};
    // The cohort (--cohort): CUDA 20000 samples x 500000 variants; host PLINK's shape of
    // the comparison, 2000 x 500000 (--quick: 1000 x 100000).
    if (cohort)
        cs.push_back({"apairs genotype cohort distance", APAIRS_GENOTYPE_DISTANCE, APAIRS_GENOTYPE_MISSING_WEIGHTED,
                      host ? (quick ? 1000 : 2000) : 20000, host && quick ? 100000 : 500000, 0.05, true});
    return cs;
}

// Sample i's call at variant k: 0/1/2 from variant k's allele frequency f (the upper 32
// bits of draw(kSeedB, k)), missing (255) with probability `miss`.
inline uint8_t geno_call(int64_t i, int64_t k, int64_t d, uint32_t f, double miss) {
    const uint64_t h = draw(kSeedA, uint64_t(i * d + k));
    if (double(h >> 40) * 0x1p-24 < miss) return 255;
    return uint8_t(((h & 0xffffffffu) < f) + (((h >> 8) & 0xffffffffu) < f));
}

// The packed rows (README "Genotype plans": g = 0 -> 00, missing -> 01, g = 1 -> 10,
// g = 2 -> 11, four calls a byte, low bits first, the last byte's unused bits 0), written
// directly: the cohort's 0/1/2 bytes would be 10 GB. Rows in parallel.
void fill_packed(const GenoCase &c, uint8_t *packed, int64_t ld) {
    std::vector<uint32_t> f(std::size_t(c.d));
    for (int64_t k = 0; k < c.d; ++k) f[std::size_t(k)] = uint32_t(draw(kSeedB, uint64_t(k)) >> 32);
    const int64_t d = c.d;
    const double miss = c.miss;
    const uint32_t *fk = f.data();
    parallel_for(c.n, [=](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) {
            uint8_t *row = packed + std::size_t(i * ld);
            for (int64_t b = 0; b < ld; ++b) {
                unsigned byte = 0;
                for (int64_t k = 4 * b, t = 0; t < 4 && k < d; ++k, ++t) {
                    const unsigned g = geno_call(i, k, d, fk[k], miss);
                    byte |= (g == 255 ? 1u : g == 0 ? 0u : g + 1) << (2 * t);
                }
                row[b] = uint8_t(byte);
            }
        }
    });
}

Row run_geno_case(const GenoCase &c, apairs_context_t ctx, const Settings &st) {
    Row row{c.name, c.shape(), 0, 0, "", "", "genotype", "T pair-genotypes/s"};
    int reps = st.cuda ? 5 : st.quick ? 1 : 3, warm = st.cuda ? 2 : st.quick ? 0 : 1;
    if (c.cohort) reps = 1, warm = 0;  // one call of seconds; a warm-up would cost as much
    if (st.reps > 0) reps = st.reps;
    const int64_t ld = (c.d + 3) / 4;
    const std::size_t packed_bytes = std::size_t(c.n * ld), d_bytes = std::size_t(c.n * c.n) * sizeof(double);
    std::unique_ptr<HostBuf> packed_buf, D_buf;
    try {
        packed_buf = std::make_unique<HostBuf>(packed_bytes);
        D_buf = std::make_unique<HostBuf>(d_bytes);
    } catch (const std::bad_alloc &) {
        throw Skip(fmt::format("cannot allocate {:.1f} MiB of host memory",
                               double(packed_bytes + d_bytes) / 1048576.0));
    }
    uint8_t *packed = static_cast<uint8_t *>(packed_buf->get());
    double *D = static_cast<double *>(D_buf->get());
    const auto tg = std::chrono::steady_clock::now();
    fill_packed(c, packed, ld);
    const double gen_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tg).count();
    std::vector<uint32_t> w(std::size_t(c.d));
    API(apairs_genotype_missing_weights, packed, c.n, c.d, ld, nullptr, w.data());
    const double weights_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tg).count() - gen_s;
    PlanHolder plan;
    API(apairs_plan_create_genotype, &plan.p, ctx, c.metric, c.missing, c.n, c.n, c.d, ld, ld, c.n, w.data());
    row.plan = describe(plan.p);
    // NaN bytes: an entry that is not written fails the spot check.
    parallel_for(c.n, [&](int64_t lo, int64_t hi) {
        std::memset(D + lo * c.n, 0xff, std::size_t((hi - lo) * c.n) * sizeof(double));
    });
    std::vector<double> ts;
    if (!st.cuda || c.cohort) {
        // Host memory: the host engine, or on CUDA the library's staging of A (= B) in and
        // D out, the whole call under a steady clock (synchronised, in case it returns early).
        ts = time_calls(false, warm, reps, [&] {
            API(apairs_plan_execute_genotype, plan.p, packed, packed, D);
#if APAIRS_BENCH_CUDA
            if (st.cuda) CU(cudaDeviceSynchronize());
#endif
        }, [] {});
        if (c.cohort)
            row.plan = fmt::format("host A = B and D, {} call{} under the wall clock; packed rows generated in "
                                   "{:.2f} s, weights in {:.2f} s; {}",
                                   reps, reps == 1 ? "" : "s", gen_s, weights_s, row.plan);
    } else {
#if APAIRS_BENCH_CUDA
        // Device-resident packed rows and D: execute queues its kernels (the plane
        // conversion included) and returns; CUDA events around each call.
        DevBuf dG(packed_bytes), dD(d_bytes);
        CU(cudaMemcpy(dG.p, packed, packed_bytes, cudaMemcpyHostToDevice));
        CU(cudaMemset(dD.p, 0xff, dD.bytes));
        ts = time_calls(true, warm, reps, [&] { API(apairs_plan_execute_genotype, plan.p, dG.p, dG.p, dD.p); },
                        [] {});
        CU(cudaMemcpy(D, dD.p, dD.bytes, cudaMemcpyDeviceToHost));
#else
        die("this apairs_bench was built without CUDA");
#endif
    }
    row.ms = median(ts);
    row.rate = double(c.n) * double(c.n) * double(c.d) / row.ms / 1e9;
    // Spot check: the allele count and the weights missing in either, from the calls
    // decoded from the packed bytes.
    auto call = [&](int64_t i, int64_t k) {
        static constexpr uint8_t kCall[4] = {0, 255, 1, 2};
        return kCall[(packed[std::size_t(i * ld + k / 4)] >> (2 * (k % 4))) & 3];
    };
    uint64_t W = 0;
    for (uint32_t x : w) W += x;
    int bad = 0;
    for (int s = 0; s < 16; ++s) {
        const int64_t i = int64_t(draw(s, 1) % uint64_t(c.n)), j = int64_t(draw(s, 2) % uint64_t(c.n));
        uint64_t alct = 0, nm = 0;
        uint32_t wmiss = 0;
        for (int64_t k = 0; k < c.d; ++k) {
            const uint8_t a = call(i, k), b = call(j, k);
            if (a == 255 || b == 255) {
                wmiss += w[std::size_t(k)];
                continue;
            }
            ++nm;
            alct += uint64_t(a > b ? a - b : b - a);
        }
        const double sc = c.missing == APAIRS_GENOTYPE_MISSING_FLAT
                              ? (double(c.d) / double(nm)) * double(alct)
                              : (double(W) / double(uint32_t(uint32_t(W) - wmiss))) * double(alct);
        const double want = c.metric == APAIRS_GENOTYPE_IBS ? 1.0 - sc * (0.5 / double(c.d)) : sc;
        bad += !(D[std::size_t(i * c.n + j)] == want);
    }
    row.check = bad ? fmt::format("CHECK FAILED: {} of 16 entries differ from the count", bad)
                    : std::string("check: 16 entries exact");
    return row;
}

int main(int argc, char **argv) {
    apairs_tools::ignore_sigxfsz();  // a file-size limit: the --json write fails with EFBIG, reported
    std::string backend, json, suite = "pairwise";
    std::vector<std::string> only;
    double copy_gbs = 0;
    bool quick = false, list = false, cohort = false, suite_given = false;
    int64_t host_batch = 10000;
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
        // An option cast to an integer: a whole number in [lo, hi] (NaN, 1e20 and 2.5 are
        // refused, not cast: that is undefined); strtod's forms, so --host-batch 1e6 works.
        auto whole = [&](const char *opt, int64_t lo, int64_t hi) -> int64_t {
            const std::string v = need(opt);
            const double x = number(opt, v);
            if (!(x == std::floor(x))) {  // NaN too
                fmt::print(stderr, "apairs_bench: {}: '{}' is not a whole number\n", opt, v);
                std::exit(1);
            }
            if (!(x >= double(lo) && x <= double(hi))) {
                fmt::print(stderr, "apairs_bench: {}: '{}' is out of range [{}, {}]\n", opt, v, lo, hi);
                std::exit(1);
            }
            return static_cast<int64_t>(x);
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--suite") {
            suite = need("--suite");
            suite_given = true;
            if (suite != "pairwise" && suite != "batched" && suite != "stats" && suite != "genotype" &&
                suite != "all") {
                fmt::print(stderr, "apairs_bench: --suite: '{}' (expected pairwise, batched, stats, genotype or all)\n",
                           suite);
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
            st.device = static_cast<int32_t>(whole("--device", 0, std::numeric_limits<int32_t>::max()));
        } else if (a == "--quick") {
            quick = true;
            st.quick = true;
        } else if (a == "--cohort") {
            cohort = true;
        } else if (a == "--only") {
            only.push_back(need("--only"));
        } else if (a == "--host-batch") {
            host_batch = whole("--host-batch", 1, int64_t(1000000000000));
        } else if (a == "--col-major") {
            g_col_major = true;
        } else if (a == "--soa-pad") {
            g_soa_pad = whole("--soa-pad", 0, int64_t(1) << 30);
        } else if (a == "--reps") {
            st.reps = static_cast<int>(whole("--reps", 1, 1000000));
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

    if (cohort && !suite_given) suite = "genotype";
    if (cohort && suite != "genotype" && suite != "all")
        die(fmt::format("--cohort adds a case to the genotype suite, not to --suite {}", suite));
    const bool run_pairwise = suite == "pairwise" || suite == "all", run_batched = suite == "batched" || suite == "all",
               run_stats = suite == "stats" || suite == "all", run_genotype = suite == "genotype" || suite == "all";
    auto keep = [&](const std::string &name, const std::string &shape) {
        bool k = only.empty();
        const std::string both = name + " " + shape + " ";
        for (const std::string &s : only) {
            bool all = true;
            for (size_t at = 0, amp; all && at <= s.size(); at = amp + 1) {
                amp = std::min(s.find('&', at), s.size());
                all = both.find(s.substr(at, amp - at)) != std::string::npos;
            }
            k = k || all;
        }
        return k;
    };
    std::vector<Case> cases;
    if (run_pairwise)
        for (const Case &c : make_cases(quick, !st.cuda))
            if (keep(c.name, c.shape())) cases.push_back(c);
    std::vector<BatchCase> batch_cases;
    if (run_batched)
        for (const BatchCase &c : make_batch_cases(quick, !st.cuda, host_batch))
            if (keep(c.name, c.shape())) batch_cases.push_back(c);
    std::vector<StatsCase> stats_cases;
    if (run_stats)
        for (const StatsCase &c : make_stats_cases(quick, !st.cuda))
            if (keep(c.name, c.shape())) stats_cases.push_back(c);
    std::vector<GenoCase> geno_cases;
    if (run_genotype)
        for (const GenoCase &c : make_geno_cases(quick, !st.cuda, cohort))
            if (keep(c.name, c.shape())) geno_cases.push_back(c);
    if (list) {
        for (const Case &c : cases) fmt::print("{:36s} {:28s}\n", c.name, c.shape());
        for (const BatchCase &c : batch_cases) fmt::print("{:36s} {:28s}\n", c.name, c.shape());
        for (const StatsCase &c : stats_cases) fmt::print("{:36s} {:28s}\n", c.name, c.shape());
        for (const GenoCase &c : geno_cases) fmt::print("{:36s} {:28s}\n", c.name, c.shape());
        return 0;
    }
    if (cases.empty() && batch_cases.empty() && stats_cases.empty() && geno_cases.empty())
        die("no case matches --only");

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
               st.cuda ? std::string(" (device-resident inputs, CUDA events") +
                             (geno_cases.empty() || !geno_cases.back().cohort
                                  ? ")"
                                  : "; the cohort case: host memory, wall clock)")
                       : fmt::format(" (host memory, steady clock; {})", [&] {
                             std::vector<std::string> parts;
                             if (run_pairwise) parts.push_back("smoke-test sizes");
                             if (run_batched) parts.push_back(fmt::format("batched B={}", host_batch));
                             if (run_stats) parts.push_back("stats N=20000");
                             if (run_genotype) parts.push_back(cohort ? "genotype, cohort" : "genotype");
                             std::string joined;
                             for (const std::string &x : parts) joined += (joined.empty() ? "" : ", ") + x;
                             return joined;
                         }()));
    std::fflush(stdout);

    std::vector<Row> rows;
    int failures = 0;
    // One case: its row in peers.py's format (on the host the rates are too small for 3
    // decimals) and its '#' line; a skip or a failing call says so and the run goes on.
    auto report = [&](const std::string &name, const std::string &shape, auto &&run) {
        try {
            Row r = run();
            if (st.cuda)
                fmt::print("{:36s} {:28s} {:10.3f} ms {:10.3f} {}\n", r.name, r.shape, r.ms, r.rate, r.unit);
            else
                fmt::print("{:36s} {:28s} {:10.3f} ms {:10.4g} {}\n", r.name, r.shape, r.ms, r.rate, r.unit);
            fmt::print("#   {} | {}\n", r.check, r.plan);
            if (r.check.rfind("CHECK FAILED", 0) == 0) ++failures;
            rows.push_back(std::move(r));
        } catch (const Skip &e) {
            fmt::print("{:36s} {:28s} skipped: {}\n", name, shape, e.what());
        } catch (const ApiFailure &e) {
            fmt::print("{:36s} {:28s} FAILED: {}\n", name, shape, e.what());
            ++failures;
        }
        std::fflush(stdout);
    };
    for (const Case &c : cases) report(c.name, c.shape(), [&] { return run_case(c, ctx, st); });
    if (!batch_cases.empty()) {
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
        for (const BatchCase &c : batch_cases)
            report(c.name, c.shape(), [&] { return run_batch_case(c, ctx, st, copy_gbs); });
    }
    for (const StatsCase &c : stats_cases) report(c.name, c.shape(), [&] { return run_stats_case(c, ctx, st); });
    for (const GenoCase &c : geno_cases) report(c.name, c.shape(), [&] { return run_geno_case(c, ctx, st); });
    if (json_out) write_json(*json_out, device, backend, rows);
    return failures ? 1 : 0;
}
