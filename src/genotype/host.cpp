// Genotype host engine (see host.hpp and planes.hpp).
#include "genotype/host.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "genotype/dispatch.hpp"
#include "genotype/planes.hpp"
#include "host/host.hpp"

namespace apairs::genotype {

void unhandled_metric(int32_t metric_id) {
    throw Error(APAIRS_ERROR_INTERNAL, fmt::format("genotype dispatch: unhandled metric {}", metric_id));
}

#if !APAIRS_HAVE_GENOTYPE_AVX512
CountTileSet count_tile_avx512() { return nullptr; }
#endif
#if !APAIRS_HAVE_GENOTYPE_AVX2
CountTileSet count_tile_avx2() { return nullptr; }
#endif
#if !APAIRS_HAVE_GENOTYPE_POPCNT
CountTileSet count_tile_popcnt() { return nullptr; }
#endif

const char *count_tile_name(CountTileSet set) {
    if (set && set == count_tile_avx512()) return "avx512-vpopcntq";
    if (set && set == count_tile_avx2()) return "avx2";
    if (set && set == count_tile_popcnt()) return "popcnt";
    return "portable";
}

namespace {

CountTileSet best_kernel() {
    if (CountTileSet f = count_tile_avx512()) return f;
    if (CountTileSet f = count_tile_avx2()) return f;
    if (CountTileSet f = count_tile_popcnt()) return f;
    return count_tile_scalar();
}

// The even bits (0, 2, ..., 62) of x, packed into the low 32 bits.
inline uint64_t even_bits(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    return (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
}

// Mask of the variants of word w (64 w .. 64 w + 63) that lie below d.
inline uint64_t valid_bits(int64_t w, int64_t d) {
    const int64_t left = d - 64 * w;
    return left >= 64 ? ~uint64_t(0) : left <= 0 ? 0 : (uint64_t(1) << left) - 1;
}

// A packed row's planes (chunks * kChunkU64 words), and, when `w` is given, the sum of
// the weights of its missing calls (uint32 arithmetic, as PLINK sums them).
bool row_to_planes(const uint8_t *row, int64_t d, int64_t chunks, uint64_t *out, const uint32_t *w,
                   uint32_t *wmiss) {
    const int64_t bytes = packed_bytes(d), words = (d + 63) / 64;
    bool any_missing = false;
    uint32_t miss_w = 0;
    std::memset(out, 0, size_t(chunks * kChunkU64) * sizeof(uint64_t));
    for (int64_t k = 0; k < words; ++k) {
        uint8_t buf[16] = {};
        const int64_t at = 16 * k, len = std::min<int64_t>(16, bytes - at);
        std::memcpy(buf, row + at, size_t(len));
        uint64_t lo_hi[2];
        std::memcpy(lo_hi, buf, 16);
        const uint64_t lo = even_bits(lo_hi[0]) | (even_bits(lo_hi[1]) << 32);
        const uint64_t hi = even_bits(lo_hi[0] >> 1) | (even_bits(lo_hi[1] >> 1) << 32);
        const uint64_t valid = valid_bits(k, d);
        const uint64_t called = (hi | ~lo) & valid;
        uint64_t *chunk = out + (k / kChunkWords) * kChunkU64 + k % kChunkWords;
        chunk[0] = hi & valid;                    // x: g >= 1
        chunk[kChunkWords] = hi & lo & valid;     // y: g == 2
        chunk[2 * kChunkWords] = called;          // m
        uint64_t miss = valid & ~called;
        any_missing |= miss != 0;
        if (w)
            for (; miss; miss &= miss - 1) miss_w += w[64 * k + __builtin_ctzll(miss)];
    }
    if (wmiss) *wmiss = miss_w;
    return any_missing;
}

struct Rows {
    std::vector<uint64_t> planes;
    std::vector<uint32_t> wmiss;   // weighted: per row
    std::vector<uint8_t> missing;  // per row: any missing call
    std::vector<const uint64_t *> ptr;
};

Rows to_planes(const Problem &pb, const uint8_t *G, int64_t n, int64_t ld, int64_t chunks,
               [[maybe_unused]] int threads) {
    Rows r;
    r.planes.resize(size_t(n * chunks * kChunkU64));
    r.wmiss.assign(size_t(n), 0);
    r.missing.assign(size_t(n), 0);
    r.ptr.resize(size_t(n));
    const uint32_t *w = pb.weighted() ? pb.weights.data() : nullptr;
#pragma omp parallel for num_threads(threads) if (threads != 1) schedule(static)
    for (int64_t i = 0; i < n; ++i)
        r.missing[size_t(i)] = row_to_planes(G + i * ld, pb.d, chunks, &r.planes[size_t(i * chunks * kChunkU64)], w,
                                             &r.wmiss[size_t(i)]);
    for (int64_t i = 0; i < n; ++i) r.ptr[size_t(i)] = &r.planes[size_t(i * chunks * kChunkU64)];
    return r;
}

template <class M>
void run(const M m, const Problem &pb, const Rows &ra, const Rows &rb, bool symmetric, typename M::out_t *D,
         int64_t chunks, int threads) {
    const CountTileFn count = best_kernel()(pb.metric, pb.missing);  // may throw: before the region
    const int64_t T = kTileRows, ti_n = (pb.n1 + T - 1) / T, tj_n = (pb.n2 + T - 1) / T;
    // Symmetric: the tiles (ti, tj) with ti <= tj, enumerated row by row.
    std::vector<std::pair<int64_t, int64_t>> tiles;
    for (int64_t ti = 0; ti < ti_n; ++ti)
        for (int64_t tj = symmetric ? ti : 0; tj < tj_n; ++tj) tiles.emplace_back(ti, tj);
    const int64_t ntiles = int64_t(tiles.size());
    // Scratch before the parallel region: nothing inside it may throw.
    std::vector<std::vector<uint32_t>> scratch(size_t(threads), std::vector<uint32_t>(size_t(3 * T * T)));
    const uint32_t W = uint32_t(pb.weight_sum);
#pragma omp parallel num_threads(threads) if (threads != 1)
    {
#if defined(_OPENMP)
        std::vector<uint32_t> &cnt = scratch[size_t(omp_get_thread_num())];
#else
        std::vector<uint32_t> &cnt = scratch[0];
#endif
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < ntiles; ++t) {
            const int64_t i0 = tiles[size_t(t)].first * T, j0 = tiles[size_t(t)].second * T;
            const int64_t ni = std::min(T, pb.n1 - i0), nj = std::min(T, pb.n2 - j0);
            const TileCounts tc{{cnt.data(), cnt.data() + T * T}, T};
            BothMissing bm;
            if (pb.weighted()) {
                bm.weights = pb.weights.data(), bm.d = pb.d, bm.both = cnt.data() + 2 * T * T;
                bm.missing_a = &ra.missing[size_t(i0)], bm.missing_b = &rb.missing[size_t(j0)];
            }
            // No missing call in the tile's rows: the allele metrics' two-term form.
            const bool complete =
                std::none_of(&ra.missing[size_t(i0)], &ra.missing[size_t(i0 + ni)], [](uint8_t x) { return x; }) &&
                std::none_of(&rb.missing[size_t(j0)], &rb.missing[size_t(j0 + nj)], [](uint8_t x) { return x; });
            count(&ra.ptr[size_t(i0)], ni, &rb.ptr[size_t(j0)], nj, chunks, tc, bm, complete);
            for (int64_t i = 0; i < ni; ++i)
                for (int64_t j = 0; j < nj; ++j) {
                    const int64_t gi = i0 + i, gj = j0 + j;
                    if (symmetric && gj < gi) continue;  // the diagonal tiles' lower halves
                    uint32_t c[2] = {tc.c[0][i * T + j], tc.c[1][i * T + j]}, den = 0;
                    if (pb.weighted()) {
                        den = W - ra.wmiss[size_t(gi)] - rb.wmiss[size_t(gj)] + bm.both[i * T + j];
                    }
                    const typename M::out_t v = m.finish(c, den);
                    D[gi * pb.ldd + gj] = v;
                    if (symmetric) D[gj * pb.ldd + gi] = v;
                }
        }
    }
}

}  // namespace

const char *host_kernel_name() { return count_tile_name(best_kernel()); }

void run_host(const Problem &pb, const void *A, const void *B, void *D, int threads) {
    const int64_t chunks = chunks_for(pb.d);
    const bool symmetric = A == B && pb.n1 == pb.n2 && pb.lda == pb.ldb;
    const Rows ra = to_planes(pb, static_cast<const uint8_t *>(A), pb.n1, pb.lda, chunks, threads);
    Rows rb_own;
    if (A != B || pb.lda != pb.ldb || pb.n1 != pb.n2)
        rb_own = to_planes(pb, static_cast<const uint8_t *>(B), pb.n2, pb.ldb, chunks, threads);
    const Rows &rb = (A == B && pb.lda == pb.ldb && pb.n1 == pb.n2) ? ra : rb_own;
    dispatch(pb.metric, pb.missing, pb.num(), pb.half(), [&](auto m) {
        using M = decltype(m);
        run(m, pb, ra, rb, symmetric, static_cast<typename M::out_t *>(D), chunks, threads);
    });
}

void check_pack_args(const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
                     const uint8_t *packed, int64_t ldp) {
    require(g, "genotypes");
    require(packed, "packed");
    if (missing_value < 3 || missing_value > 255)
        fail(APAIRS_ERROR_INVALID_VALUE, "missing_value = {}: expected 3 to 255 (0, 1, 2 are genotypes)",
             missing_value);
    require_rows(n, d, ldg, d, "ld_genotypes");
    require_rows(n, d, ldp, packed_bytes(d), "ld_packed");
}

void pack_host(const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value, uint8_t *packed,
               int64_t ldp, [[maybe_unused]] int threads) {
    check_pack_args(g, n, d, ldg, missing_value, packed, ldp);
    // Every byte checked before anything is written.
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t *row = g + i * ldg;
        for (int64_t k = 0; k < d; ++k)
            if (row[k] > 2 && row[k] != missing_value)
                fail(APAIRS_ERROR_INVALID_VALUE,
                     "genotypes[{}][{}] = {}: expected 0, 1, 2 or missing_value = {}", i, k, int(row[k]),
                     missing_value);
    }
    static const uint8_t code[3] = {0, 2, 3};  // g -> PLINK code; missing -> 1
    const int64_t bytes = packed_bytes(d);
#pragma omp parallel for num_threads(threads) if (threads != 1) schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const uint8_t *row = g + i * ldg;
        uint8_t *out = packed + i * ldp;
        for (int64_t b = 0; b < bytes; ++b) {
            uint8_t v = 0;
            for (int64_t k = 4 * b, s = 0; k < std::min(d, 4 * b + 4); ++k, s += 2)
                v = uint8_t(v | ((row[k] <= 2 ? code[row[k]] : 1) << s));
            out[b] = v;
        }
    }
}

void missing_weights_host(const uint8_t *packed, int64_t n, int64_t d, int64_t ld, const uint8_t *founders,
                          uint32_t *weights, [[maybe_unused]] int threads) {
    require(packed, "packed");
    require(weights, "weights");
    require_rows(n, d, ld, packed_bytes(d), "ld");
    {  // (host memory only: this function has no CUDA form)
        const void *arrays[] = {packed, weights, founders};
        static const char *const names[] = {"packed", "weights", "founders"};
        host::require_host_memory(arrays, names, founders ? 3 : 2, "the weights are computed on the host");
    }
    // Per variant: the called founders and the copies of A2 among them, counted a byte
    // (four variants) at a time through tables of four 16-bit fields, flushed before a
    // field can overflow; OpenMP over byte columns.
    struct Tables {
        uint64_t called[256], copies[256];
        Tables() {
            for (int v = 0; v < 256; ++v) {
                called[v] = copies[v] = 0;
                for (int t = 0; t < 4; ++t) {
                    const int c = (v >> (2 * t)) & 3;
                    called[v] |= uint64_t(c != 1) << (16 * t);
                    copies[v] |= uint64_t(c == 3 ? 2 : c == 2 ? 1 : 0) << (16 * t);
                }
            }
        }
    };
    static const Tables tab;
    const int64_t bytes = packed_bytes(d);
    std::vector<int64_t> called(size_t(4 * bytes)), copies(size_t(4 * bytes));
#pragma omp parallel for num_threads(threads) if (threads != 1) schedule(static)
    for (int64_t b0 = 0; b0 < bytes; b0 += 1024) {
        const int64_t b1 = std::min(bytes, b0 + 1024);
        uint64_t acc_called[1024] = {}, acc_copies[1024] = {};
        auto flush = [&] {
            for (int64_t b = b0; b < b1; ++b)
                for (int t = 0; t < 4; ++t) {
                    called[size_t(4 * b + t)] += int64_t((acc_called[b - b0] >> (16 * t)) & 0xFFFF);
                    copies[size_t(4 * b + t)] += int64_t((acc_copies[b - b0] >> (16 * t)) & 0xFFFF);
                }
            std::fill(acc_called, acc_called + 1024, 0);
            std::fill(acc_copies, acc_copies + 1024, 0);
        };
        int64_t pending = 0;
        for (int64_t i = 0; i < n; ++i) {
            if (founders && !founders[i]) continue;
            const uint8_t *row = packed + i * ld;
            for (int64_t b = b0; b < b1; ++b) {
                acc_called[b - b0] += tab.called[row[b]];
                acc_copies[b - b0] += tab.copies[row[b]];
            }
            if (++pending == 32767) flush(), pending = 0;  // copies: at most 2 per row in 16 bits
        }
        flush();
    }
    // Frequency of A2 among the founders: copies / (2 called), 0.5 when none is called,
    // taken as the major allele's (1 - f below 0.5: PLINK 1.9 without
    // --keep-allele-order, whose A1 is then the minor allele); then PLINK 1.9's
    // expected-distance weight, scaled to sum to just under 2^32 and rounded (its
    // operations, in its order). Every raw weight is positive (1 at a fixed variant).
    std::vector<double> raw(static_cast<size_t>(d));
    double total = 0;
    for (int64_t k = 0; k < d; ++k) {
        const int64_t alleles = 2 * called[size_t(k)];
        double f = alleles ? double(copies[size_t(k)]) / double(alleles) : 0.5;
        if (f < 0.5) f = 1.0 - f;
        if (f != 1.0) f = f * (1.0 - f) * (f * f - f + 1);
        raw[size_t(k)] = f;
        total += f;
    }
    const double scale = (4294967296.0 - double(d)) / total;
    for (int64_t k = 0; k < d; ++k) weights[k] = uint32_t(raw[size_t(k)] * scale + 0.5);
}

}  // namespace apairs::genotype
