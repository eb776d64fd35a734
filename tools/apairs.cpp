// apairs: all-pairs distances between the rows of .npy files, from the command line.
//
//   apairs [options] [A.npy [B.npy]]   ->  D.npy, D[i][j] = F(A[i], B[j])
//
// A thin client of the public C API (apairs.h): it creates a context, plans, prints the
// plan's description, executes, writes D and summarises it. See --help.
#include <apairs.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "npy.hpp"
#include "output_file.hpp"
#include "plink.hpp"

namespace {

const char *kUsage = R"(usage: apairs [options] [A.npy [B.npy]]
       apairs --bfile PREFIX --distance [MODIFIERS...] [--out PREFIX] [options]

Computes D[i][j] = F(A[i,:], B[j,:]) for every row i of A and every row j of B with
libapairs, and writes D as a .npy file. B defaults to A (the same array is passed as
both operands). A and B must be 2-D, C-order, with the same dtype and the same number
of columns: float32 ('<f4'), float64 ('<f8'), or uint8 ('|u1', HAMMING only).
Format versions 1.0, 2.0 and 3.0 are read; Fortran order, other ranks, other dtypes and
big-endian data are refused with a message.

With no input file, apairs makes a synthetic demo set and says so: 4096 x 128 float32
points uniform in [0, 1), or, for --metric hamming, 4096 x 128 uint8 genotypes (0, 1
or 2, uniform), from a fixed seed (--seed), so that every run computes the same D.

PLINK mode (--bfile): reads a PLINK 1 fileset (PREFIX.bed in SNP-major mode, .bim,
.fam) and writes what PLINK 1.9's `--distance` writes, byte for byte: the same words
on apairs give the same files.
  --bfile PREFIX   the fileset
  --distance MODS  any of: square | square0 | triangle (the shape, default triangle),
                   allele-ct (OUT.dist: allele-count distances, the default when
                   neither ibs nor 1-ibs is given), ibs (OUT.mibs: IBS similarity),
                   1-ibs (OUT.mdist: 1 - IBS), flat-missing (scale for missing calls
                   by d / N instead of PLINK 1.9's weighted default; see apairs.h),
                   npy (also OUT.dist.npy, OUT.mibs.npy, OUT.mdist.npy: the full
                   square matrices as float64). Each file comes with its .id file
                   (FID and IID per line). bin, bin4 and gz are not supported.
  --out PREFIX     output prefix (default plink)
Variants on X, Y and MT and at negative positions are left out, as PLINK does;
missing-call weights are computed from the founders' major-allele frequencies (both
parents 0 in the .fam). All files appear whole or not at all: a fileset PLINK
refuses (bad magic bytes, an individual-major .bed, a .bed whose size does not match
the .bim and .fam, an invalid chromosome code or bp position, an IID of 0, fewer than
2 samples) writes nothing. --backend and --threads apply; the other options do not.

Options:
  --metric M       l1 | l2 | sqeuclidean | lp | linf | dot | cosine | hamming
                   (default l2)
                     l1           sum |a-b|          l2     sqrt(sum (a-b)^2)
                     sqeuclidean  sum (a-b)^2        lp     (sum |a-b|^p)^(1/p)
                     linf         max |a-b|          dot    sum a*b
                     cosine       1 - a.b/(|a||b|)   hamming  count of a != b
  --p P            exponent of lp, > 0; 'inf' is allowed (required by --metric lp,
                   ignored by the other metrics)
  --backend B      auto | host | cuda (default auto: CUDA when this libapairs has it
                   and the device exists, else host)
  --device N       CUDA device ordinal (default 0)
  --occupancy X    CUDA occupancy target in (0, 1]; 0 means the highest the kernel can
                   reach (the default). The plan takes the smallest block reaching it.
  --threads N      host backend threads; 0 lets OpenMP decide (default)
  -o, --output F   where to write D (default D.npy). D is float32 or float64 like the
                   inputs; HAMMING on uint8 writes int32 counts. F is written as a
                   temporary file beside it, created before any input is read (so a
                   bad F fails at once), then renamed over F: F holds the complete
                   new D or, after any error, exactly what it held before.
  --n N            rows of the synthetic demo set (default 4096; no input file only)
  --d D            columns of the synthetic demo set (default 128)
  --dtype T        dtype of the synthetic demo set: float32 | float64 | uint8
                   (default float32; uint8 for hamming)
  --seed S         seed of the synthetic demo set (default 42)
  --version        print the versions of apairs and of the loaded libapairs
  -h, --help       this text

Output (stdout): the library version, the backend the context resolved to, the plan's
description (kernel, launch configuration and why it was chosen), the plan and execute
times (steady clock; on the CUDA backend with these host-resident arrays the execute
time includes copying A and B to the device and D back), and a summary of D: shape,
min / max / mean (NaNs counted apart), sum and an FNV-1a 64-bit checksum of D's bytes.

Exit status: 0 on success, 1 on any error: bad usage, an unreadable or unsupported
input file, an output file that cannot be created or written (a full disk, a file-size
limit: SIGXFSZ is ignored so that it is reported), or a failing libapairs call (which
prints apairs_status_string and apairs_last_error).

Examples:
  apairs                                   # L2 demo, writes D.npy
  apairs --metric lp --p 3 X.npy -o D3.npy
  apairs --metric hamming --backend host G.npy G2.npy -o H.npy
)";

struct Options {
    std::string metric = "l2";
    double p = 0;
    bool have_p = false;
    std::string backend = "auto";
    int32_t device = 0;
    double occupancy = 0, threads = 0;
    bool have_occupancy = false, have_threads = false;  // else: the context defaults
    std::string output = "D.npy";
    int64_t n = 4096, d = 128;
    std::string dtype;  // synthetic set; empty: by metric
    uint64_t seed = 42;
    std::vector<std::string> inputs;
    // PLINK mode
    std::string bfile, out_prefix = "plink";
    bool have_distance = false, have_out = false;
    std::vector<std::string> distance;  // --distance modifiers
};

// Every error is thrown as a Failure and reported by main, which returns 1, so that
// the destructors run on every path (the output's temporary file is removed).
struct Failure : std::runtime_error {
    bool usage;
    Failure(const std::string &msg, bool is_usage) : std::runtime_error(msg), usage(is_usage) {}
};

[[noreturn]] void usage_error(const std::string &msg) { throw Failure(msg, true); }

[[noreturn]] void fail(const std::string &msg) { throw Failure(msg, false); }

// Every libapairs call goes through here: on failure, the status string and the
// library's detailed message (read before any other libapairs call).
void check(apairs_status_t st, const char *call) {
    if (st == APAIRS_SUCCESS) return;
    const std::string detail = apairs_last_error();
    fail(fmt::format("{} failed: {} (status {}): {}", call, apairs_status_string(st), st,
                     detail.empty() ? "(no detail)" : detail));
}
#define CHECK_API(fn, ...) check(fn(__VA_ARGS__), #fn)

double parse_double(const std::string &opt, const std::string &v) {
    const char *s = v.c_str();
    char *end = nullptr;
    errno = 0;
    double x = std::strtod(s, &end);
    if (v.empty() || *end != '\0') usage_error(fmt::format("{}: '{}' is not a number", opt, v));
    if (errno == ERANGE)  // overflow to +-inf, or underflow below the smallest normal double
        usage_error(fmt::format("{}: '{}' is out of range: the magnitude of a nonzero number must lie in "
                                "[{:.17g}, {:.17g}]{}",
                                opt, v, std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
                                x > 0 && std::isinf(x) && opt == "--p" ? " (write 'inf' for an infinite p)" : ""));
    return x;
}

int64_t parse_int(const std::string &opt, const std::string &v, int64_t lo, int64_t hi) {
    const char *s = v.c_str();
    char *end = nullptr;
    errno = 0;
    long long x = std::strtoll(s, &end, 10);
    if (v.empty() || *end != '\0') usage_error(fmt::format("{}: '{}' is not a whole number", opt, v));
    if (errno == ERANGE || x < lo || x > hi)
        usage_error(fmt::format("{}: '{}' is out of range [{}, {}]", opt, v, lo, hi));
    return x;
}

Options parse_args(int argc, char **argv) {
    Options o;
    bool only_positional = false;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (only_positional || a.empty() || a[0] != '-' || a == "-") {
            o.inputs.push_back(a);
            continue;
        }
        if (a == "--") {
            only_positional = true;
            continue;
        }
        if (a == "--distance") {  // PLINK's syntax: modifiers follow as separate words
            o.have_distance = true;
            while (i + 1 < argc && argv[i + 1][0] != '-') o.distance.push_back(argv[++i]);
            continue;
        }
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        }
        if (a == "--version") {
            fmt::print("apairs (tools) built against libapairs {}.{}.{}; loaded libapairs {}\n",
                       APAIRS_VERSION_MAJOR, APAIRS_VERSION_MINOR, APAIRS_VERSION_PATCH,
                       apairs_version_string());
            std::exit(0);
        }
        // --opt=value or --opt value
        std::string name = a, value;
        bool inline_value = false;
        if (a.rfind("--", 0) == 0) {
            auto eq = a.find('=');
            if (eq != std::string::npos) {
                name = a.substr(0, eq);
                value = a.substr(eq + 1);
                inline_value = true;
            }
        }
        static const char *with_value[] = {"--metric", "--p",      "--backend", "--device", "--occupancy",
                                           "--threads", "-o",      "--output",  "--n",      "--d",
                                           "--dtype",  "--seed",   "--bfile",   "--out"};
        bool known = false;
        for (const char *w : with_value) known = known || name == w;
        if (!known) usage_error(fmt::format("unknown option '{}'", a));
        if (!inline_value) {
            if (i + 1 >= argc) usage_error(fmt::format("option '{}' needs a value", name));
            value = argv[++i];
        }
        if (name == "--metric") {
            o.metric = value;
            std::transform(o.metric.begin(), o.metric.end(), o.metric.begin(),
                           [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        } else if (name == "--p") {
            o.p = parse_double(name, value);
            o.have_p = true;
        } else if (name == "--backend") {
            o.backend = value;
        } else if (name == "--device") {
            o.device = static_cast<int32_t>(parse_int(name, value, 0, std::numeric_limits<int32_t>::max()));
        } else if (name == "--occupancy") {
            o.occupancy = parse_double(name, value);  // the library checks the range
            o.have_occupancy = true;
        } else if (name == "--threads") {
            o.threads = parse_double(name, value);  // the library checks the range
            o.have_threads = true;
        } else if (name == "-o" || name == "--output") {
            o.output = value;
        } else if (name == "--n") {
            o.n = parse_int(name, value, 1, int64_t(1) << 40);
        } else if (name == "--d") {
            o.d = parse_int(name, value, 1, int64_t(1) << 40);
        } else if (name == "--dtype") {
            o.dtype = value;
        } else if (name == "--bfile") {
            o.bfile = value;
        } else if (name == "--out") {
            o.out_prefix = value;
            o.have_out = true;
        } else if (name == "--seed") {
            o.seed = static_cast<uint64_t>(parse_int(name, value, 0, std::numeric_limits<int64_t>::max()));
        }
    }
    if (o.inputs.size() > 2)
        usage_error(fmt::format("at most two input files (A and B), got {}", o.inputs.size()));
    if (o.bfile.empty() && (o.have_distance || o.have_out))
        usage_error("--distance and --out go with --bfile PREFIX");
    if (!o.bfile.empty() && !o.have_distance) usage_error("--bfile needs --distance (the only PLINK command apairs runs)");
    if (!o.bfile.empty() && !o.inputs.empty()) usage_error("--bfile takes no .npy input files");
    return o;
}

int32_t metric_id(const std::string &m) {
    static const struct {
        const char *name;
        int32_t id;
    } table[] = {{"l1", APAIRS_METRIC_L1},     {"l2", APAIRS_METRIC_L2},
                 {"sqeuclidean", APAIRS_METRIC_SQEUCLIDEAN},
                 {"lp", APAIRS_METRIC_LP},     {"linf", APAIRS_METRIC_LINF},
                 {"dot", APAIRS_METRIC_DOT},   {"cosine", APAIRS_METRIC_COSINE},
                 {"hamming", APAIRS_METRIC_HAMMING}};
    for (const auto &e : table)
        if (m == e.name) return e.id;
    usage_error(fmt::format("unknown metric '{}' (expected l1, l2, sqeuclidean, lp, linf, dot, cosine or hamming)", m));
}

int32_t backend_id(const std::string &b) {
    if (b == "auto") return APAIRS_BACKEND_AUTO;
    if (b == "host") return APAIRS_BACKEND_HOST;
    if (b == "cuda") return APAIRS_BACKEND_CUDA;
    usage_error(fmt::format("unknown backend '{}' (expected auto, host or cuda)", b));
}

const char *backend_name(int32_t b) {
    switch (b) {
    case APAIRS_BACKEND_HOST: return "host";
    case APAIRS_BACKEND_CUDA: return "cuda";
    case APAIRS_BACKEND_AUTO: return "auto";
    }
    return "unknown";
}

int32_t dtype_id(npy::Type t) {
    switch (t) {
    case npy::Type::F32: return APAIRS_DTYPE_F32;
    case npy::Type::F64: return APAIRS_DTYPE_F64;
    case npy::Type::U8: return APAIRS_DTYPE_U8;
    case npy::Type::I32: break;
    }
    fail("int32 inputs are not supported");
}

// Counter-based generator: element k of a stream depends only on (seed, k).
inline uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

npy::Array synthetic(npy::Type t, int64_t n, int64_t d, uint64_t seed) {
    npy::Array a = npy::allocate(t, n, d);
    const uint64_t count = static_cast<uint64_t>(n) * static_cast<uint64_t>(d);
    const uint64_t s = mix64(seed);
    for (uint64_t k = 0; k < count; ++k) {
        const uint64_t h = mix64(s ^ (k * 0xd1342543de82ef95ULL));
        switch (t) {
        case npy::Type::F32: static_cast<float *>(a.data())[k] = static_cast<float>(h >> 40) * 0x1p-24f; break;
        case npy::Type::F64: static_cast<double *>(a.data())[k] = static_cast<double>(h >> 11) * 0x1p-53; break;
        case npy::Type::U8:
            static_cast<uint8_t *>(a.data())[k] = static_cast<uint8_t>(((h >> 32) * 3) >> 32);
            break;
        case npy::Type::I32: break;
        }
    }
    return a;
}

struct Summary {
    double min = std::numeric_limits<double>::infinity(), max = -std::numeric_limits<double>::infinity();
    double sum = 0;
    int64_t finite = 0, nan = 0, inf = 0;
};

template <typename T>
Summary summarise(const T *x, std::size_t count) {
    Summary s;
    for (std::size_t k = 0; k < count; ++k) {
        const double v = static_cast<double>(x[k]);
        if (std::isnan(v)) {
            ++s.nan;
            continue;
        }
        if (std::isinf(v)) ++s.inf;
        else ++s.finite;
        s.min = std::min(s.min, v);
        s.max = std::max(s.max, v);
        s.sum += v;
    }
    return s;
}

uint64_t fnv1a64(const void *p, std::size_t bytes) {
    const unsigned char *b = static_cast<const unsigned char *>(p);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (std::size_t k = 0; k < bytes; ++k) {
        h ^= b[k];
        h *= 0x100000001b3ULL;
    }
    return h;
}

struct ContextDeleter {
    void operator()(apairs_context_s *c) const { apairs_context_destroy(c); }
};
struct PlanDeleter {
    void operator()(apairs_plan_s *p) const { apairs_plan_destroy(p); }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The plan's one-line description (apairs_plan_describe).
std::string describe(apairs_plan_t plan) {
    int64_t len = 0;
    CHECK_API(apairs_plan_describe, plan, nullptr, 0, &len);
    std::string desc(static_cast<std::size_t>(len) + 1, '\0');
    CHECK_API(apairs_plan_describe, plan, &desc[0], len + 1, nullptr);
    desc.resize(static_cast<std::size_t>(len));
    return desc;
}

// ---- PLINK mode: apairs --bfile PREFIX --distance ... -----------------------------

struct DistanceRequest {
    enum Shape { Triangle, Square, Square0 } shape = Triangle;
    bool alct = false, ibs = false, one_minus_ibs = false, flat = false, npy = false;
};

DistanceRequest parse_distance(const std::vector<std::string> &mods) {
    DistanceRequest r;
    int shapes = 0;
    for (const std::string &m : mods) {
        if (m == "square") r.shape = DistanceRequest::Square, ++shapes;
        else if (m == "square0") r.shape = DistanceRequest::Square0, ++shapes;
        else if (m == "triangle") r.shape = DistanceRequest::Triangle, ++shapes;
        else if (m == "allele-ct") r.alct = true;
        else if (m == "ibs") r.ibs = true;
        else if (m == "1-ibs") r.one_minus_ibs = true;
        else if (m == "flat-missing") r.flat = true;
        else if (m == "npy") r.npy = true;
        else if (m == "bin" || m == "bin4" || m == "gz")
            usage_error(fmt::format("--distance {}: not supported by apairs (text and npy only)", m));
        else usage_error(fmt::format("--distance: unknown modifier '{}'", m));
    }
    if (shapes > 1) usage_error("--distance: square, square0 and triangle are exclusive");
    if (!r.ibs && !r.one_minus_ibs) r.alct = true;
    return r;
}

// One output of --distance: which metric, its file suffix, and PLINK's diagonal.
struct DistanceOutput {
    int32_t metric;
    const char *suffix;   // "dist", "mibs", "mdist"
    const char *diagonal; // what PLINK prints on the diagonal
};

// PLINK 1.9's text for one matrix in one shape: tab-separated, rows ending in '\n'.
// triangle: the pairs j < i (the IBS similarity also prints its diagonal 1), so the
// distance files have no row for the first sample; square0: the lower triangle, the
// diagonal, and zeros above it.
void write_distance_text(apairs_tools::OutputFile &out, const double *D, int64_t n, DistanceRequest::Shape shape,
                         const DistanceOutput &what) {
    const bool similarity = what.metric == APAIRS_GENOTYPE_IBS;
    std::string line;
    for (int64_t i = 0; i < n; ++i) {
        line.clear();
        for (int64_t j = 0; j < i; ++j) {
            if (j) line += '\t';
            plink::append_g(line, D[i * n + j]);
        }
        if (shape == DistanceRequest::Triangle) {
            if (similarity) line += i ? "\t1" : "1";
            else if (i == 0) continue;
        } else {
            line += i ? "\t" : "";
            line += what.diagonal;
            for (int64_t j = i + 1; j < n; ++j) {
                line += '\t';
                if (shape == DistanceRequest::Square0) line += '0';
                else plink::append_g(line, D[i * n + j]);
            }
        }
        line += '\n';
        out.write(line);
    }
}

int run_plink(const Options &o) {
    const DistanceRequest req = parse_distance(o.distance);
    const int32_t backend = backend_id(o.backend);
    std::vector<DistanceOutput> outputs;
    if (req.alct) outputs.push_back({APAIRS_GENOTYPE_DISTANCE, "dist", "0"});
    if (req.ibs) outputs.push_back({APAIRS_GENOTYPE_IBS, "mibs", "1"});
    if (req.one_minus_ibs) outputs.push_back({APAIRS_GENOTYPE_ONE_MINUS_IBS, "mdist", "0"});

    // Every output's temporary file first: a bad --out fails before any work, and a
    // failure anywhere leaves none of them.
    std::vector<std::unique_ptr<apairs_tools::OutputFile>> text, ids, npys;
    for (const DistanceOutput &w : outputs) {
        const std::string base = o.out_prefix + "." + w.suffix;
        text.push_back(std::make_unique<apairs_tools::OutputFile>(base));
        ids.push_back(std::make_unique<apairs_tools::OutputFile>(base + ".id"));
        if (req.npy) npys.push_back(std::make_unique<apairs_tools::OutputFile>(base + ".npy"));
    }

    fmt::print("libapairs {}\n", apairs_version_string());
    const auto t_read = std::chrono::steady_clock::now();
    plink::Fileset fs;
    try {
        fs = plink::read_fileset(o.bfile);
    } catch (const plink::Error &e) {
        fail(e.what());
    } catch (const std::bad_alloc &) {
        fail("out of host memory reading the fileset");
    }
    const int64_t n = fs.samples, d = int64_t(fs.kept.size());
    fmt::print("input: {}: {} samples, {} variants ({} left out: X, Y, MT, negative positions), read in {:.3f} ms\n",
               o.bfile, n, fs.variants_in_file, fs.variants_in_file - d, ms_since(t_read));

    apairs_context_t raw_ctx = nullptr;
    CHECK_API(apairs_context_create, &raw_ctx, backend, o.device);
    std::unique_ptr<apairs_context_s, ContextDeleter> ctx(raw_ctx);
    if (o.have_threads) CHECK_API(apairs_context_set_option, ctx.get(), APAIRS_OPTION_HOST_THREADS, o.threads);

    const int32_t missing = req.flat ? APAIRS_GENOTYPE_MISSING_FLAT : APAIRS_GENOTYPE_MISSING_WEIGHTED;
    std::vector<uint32_t> weights;
    if (!req.flat) {
        const auto t0 = std::chrono::steady_clock::now();
        weights.resize(size_t(d));
        CHECK_API(apairs_genotype_missing_weights, fs.packed.data(), n, d, fs.ld, fs.founders.data(), weights.data());
        fmt::print("missing-call weights (PLINK 1.9's, from the founders): {:.3f} ms\n", ms_since(t0));
    }
    std::vector<double> D;
    try {
        D.resize(size_t(n) * size_t(n));
    } catch (const std::bad_alloc &) {
        fail(fmt::format("out of host memory allocating D ({} x {} float64)", n, n));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        apairs_plan_t raw_plan = nullptr;
        CHECK_API(apairs_plan_create_genotype, &raw_plan, ctx.get(), outputs[k].metric, missing, n, n, d, fs.ld, fs.ld,
                  n, req.flat ? nullptr : weights.data());
        std::unique_ptr<apairs_plan_s, PlanDeleter> plan(raw_plan);
        if (k == 0) fmt::print("plan: {}\n", describe(plan.get()));
        CHECK_API(apairs_plan_execute_genotype, plan.get(), fs.packed.data(), fs.packed.data(), D.data());
        const double exec_ms = ms_since(t0);
        // PLINK prints its diagonal as a constant: so do the .npy files.
        for (int64_t i = 0; i < n; ++i) D[size_t(i * n + i)] = outputs[k].metric == APAIRS_GENOTYPE_IBS ? 1.0 : 0.0;
        const auto t1 = std::chrono::steady_clock::now();
        write_distance_text(*text[k], D.data(), n, req.shape, outputs[k]);
        std::string id;
        for (int64_t i = 0; i < n; ++i) id += fs.fid[size_t(i)] + "\t" + fs.iid[size_t(i)] + "\n";
        ids[k]->write(id);
        if (req.npy) npy::write(*npys[k], npy::Type::F64, n, n, D.data());
        fmt::print("{}.{}: computed in {:.3f} ms, written in {:.3f} ms\n", o.out_prefix, outputs[k].suffix, exec_ms,
                   ms_since(t1));
    }
    // Every file written out and synced before any is renamed into place, so that a
    // write failing (a full disk) leaves none of them.
    for (auto *files : {&text, &ids, &npys})
        for (auto &f : *files) f->finish();
    for (auto *files : {&text, &ids, &npys})
        for (auto &f : *files) f->publish();
    return 0;
}

int run(const Options &o) {
    if (!o.bfile.empty()) return run_plink(o);
    const int32_t metric = metric_id(o.metric);
    const int32_t backend = backend_id(o.backend);
    double p = 0;
    if (metric == APAIRS_METRIC_LP) {
        if (!o.have_p) usage_error("--metric lp needs --p P (P > 0, or inf)");
        p = o.p;  // the library checks p > 0
    } else if (o.have_p) {
        fmt::print(stderr, "apairs: note: --p is used by --metric lp only; ignored for {}\n", o.metric);
    }
    npy::Type synthetic_type = metric == APAIRS_METRIC_HAMMING ? npy::Type::U8 : npy::Type::F32;
    if (o.dtype == "float32" || o.dtype == "f4") synthetic_type = npy::Type::F32;
    else if (o.dtype == "float64" || o.dtype == "f8") synthetic_type = npy::Type::F64;
    else if (o.dtype == "uint8" || o.dtype == "u1") synthetic_type = npy::Type::U8;
    else if (!o.dtype.empty())
        usage_error(fmt::format("--dtype: unknown '{}' (expected float32, float64 or uint8)", o.dtype));

    // The output's temporary file, before any work: a bad -o fails now. Removed by its
    // destructor on every error path; renamed over o.output once D is written.
    apairs_tools::OutputFile out(o.output);

    if (apairs_version_number() != APAIRS_VERSION_NUMBER)
        fmt::print(stderr, "apairs: warning: built against libapairs {} but loaded {}\n", APAIRS_VERSION_NUMBER,
                   apairs_version_number());
    fmt::print("libapairs {}\n", apairs_version_string());

    // Inputs
    npy::Array A, B;
    bool same = false;
    try {
        if (o.inputs.empty()) {
            const npy::Type t = synthetic_type;
            A = synthetic(t, o.n, o.d, o.seed);
            fmt::print("input: no file given, synthetic demo set A = B: {} x {} {} {} (seed {})\n", o.n, o.d,
                       npy::name_of(t),
                       t == npy::Type::U8 ? "genotypes 0/1/2 uniform" : "points uniform in [0, 1)", o.seed);
            B = A;
            same = true;
        } else {
            if (!o.dtype.empty()) fmt::print(stderr, "apairs: note: --dtype applies to the synthetic set only; ignored\n");
            A = npy::read(o.inputs[0]);
            fmt::print("input: A = {}: {} x {} {}\n", o.inputs[0], A.rows, A.cols, npy::name_of(A.type));
            if (o.inputs.size() == 2) {
                B = npy::read(o.inputs[1]);
                fmt::print("input: B = {}: {} x {} {}\n", o.inputs[1], B.rows, B.cols, npy::name_of(B.type));
                if (B.type != A.type)
                    fail(fmt::format("A is {} but B is {}; both must have the same dtype", npy::name_of(A.type),
                                     npy::name_of(B.type)));
                if (B.cols != A.cols)
                    fail(fmt::format("A has {} columns but B has {}; both must have the same number of dimensions",
                                     A.cols, B.cols));
            } else {
                B = A;
                same = true;
                fmt::print("input: B = A (the same array)\n");
            }
        }
    } catch (const npy::Error &e) {
        fail(e.what());
    } catch (const std::bad_alloc &) {
        fail("out of host memory reading the inputs");
    }
    const int32_t dtype = dtype_id(A.type);
    const int64_t n1 = A.rows, n2 = B.rows, d = A.cols;

    // Context
    apairs_context_t raw_ctx = nullptr;
    CHECK_API(apairs_context_create, &raw_ctx, backend, o.device);
    std::unique_ptr<apairs_context_s, ContextDeleter> ctx(raw_ctx);
    if (o.have_occupancy)
        CHECK_API(apairs_context_set_option, ctx.get(), APAIRS_OPTION_OCCUPANCY_TARGET, o.occupancy);
    if (o.have_threads)
        CHECK_API(apairs_context_set_option, ctx.get(), APAIRS_OPTION_HOST_THREADS, o.threads);
    int32_t resolved = 0;
    CHECK_API(apairs_context_get_backend, ctx.get(), &resolved);
    int32_t devices = 0;
    CHECK_API(apairs_cuda_device_count, &devices);
    fmt::print("backend: {} (requested {}; CUDA devices visible: {})\n", backend_name(resolved), o.backend, devices);

    // Plan
    const auto t_plan = std::chrono::steady_clock::now();
    apairs_plan_t raw_plan = nullptr;
    CHECK_API(apairs_plan_create_pairwise, &raw_plan, ctx.get(), metric, p, dtype, n1, n2, d, d, d, n2);
    const double plan_ms = ms_since(t_plan);
    std::unique_ptr<apairs_plan_s, PlanDeleter> plan(raw_plan);
    fmt::print("plan: {}\n", describe(plan.get()));

    // Output buffer
    const npy::Type out_type = dtype == APAIRS_DTYPE_U8 ? npy::Type::I32 : A.type;
    npy::Array D;
    try {
        D = npy::allocate(out_type, n1, n2);
    } catch (const npy::Error &e) {
        fail(fmt::format("D ({} x {} {}): {}", n1, n2, npy::name_of(out_type), e.what()));
    } catch (const std::bad_alloc &) {
        fail(fmt::format("out of host memory allocating D ({} x {} {}, {:.1f} MiB)", n1, n2,
                         npy::name_of(out_type),
                         double(n1) * double(n2) * double(npy::itemsize_of(out_type)) / 1048576.0));
    }

    // Execute
    const auto t_exec = std::chrono::steady_clock::now();
    CHECK_API(apairs_plan_execute, plan.get(), A.data(), same ? A.data() : B.data(), D.data());
    const double exec_ms = ms_since(t_exec);
    const double rate = double(n1) * double(n2) * double(d) / exec_ms / 1e9;
    fmt::print("time: plan {:.3f} ms, execute {:.3f} ms ({:.4g} T pair-dims/s{})\n", plan_ms, exec_ms, rate,
               resolved == APAIRS_BACKEND_CUDA ? "; host-resident arrays: includes host<->device copies" : "");

    // Write (atomically) and summarise
    npy::write(out, out_type, n1, n2, D.data());
    out.commit();
    const std::size_t count = static_cast<std::size_t>(n1) * static_cast<std::size_t>(n2);
    Summary s;
    switch (out_type) {
    case npy::Type::F32: s = summarise(static_cast<const float *>(D.data()), count); break;
    case npy::Type::F64: s = summarise(static_cast<const double *>(D.data()), count); break;
    case npy::Type::I32: s = summarise(static_cast<const int32_t *>(D.data()), count); break;
    case npy::Type::U8: break;
    }
    fmt::print("output: {} = D: {} x {} {}\n", o.output, n1, n2, npy::name_of(out_type));
    const int64_t counted = s.finite + s.inf;
    if (counted > 0)
        fmt::print("summary: min {:.9g}  max {:.9g}  mean {:.9g}", s.min, s.max, s.sum / double(counted));
    else
        fmt::print("summary: no non-NaN entries");
    if (s.nan || s.inf) fmt::print("  (NaN: {}, infinite: {})", s.nan, s.inf);
    fmt::print("\nchecksum: sum {:.17g}  fnv1a64 {:016x}\n", s.sum, fnv1a64(D.data(), D.bytes()));
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    apairs_tools::ignore_sigxfsz();  // a file-size limit: write() fails with EFBIG, reported
    try {
        return run(parse_args(argc, argv));
    } catch (const Failure &e) {
        std::fflush(stdout);
        fmt::print(stderr, "apairs: error: {}\n{}", e.what(), e.usage ? "Try 'apairs --help'.\n" : "");
    } catch (const std::bad_alloc &) {
        std::fflush(stdout);
        fmt::print(stderr, "apairs: error: out of host memory\n");
    } catch (const std::exception &e) {
        std::fflush(stdout);
        fmt::print(stderr, "apairs: error: {}\n", e.what());
    }
    return 1;
}
