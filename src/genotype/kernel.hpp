// The counting loop nest of the host engines, written once and compiled per instruction
// set (kernel_avx512.cpp, kernel_avx2.cpp, kernel_scalar.cpp, the last also as the popcnt
// kernel). Each of those files defines, in an anonymous namespace, an `Isa` with
//   W                   the word type (a wrapper, so that every instantiation here has
//                       internal linkage: code built for one instruction set is never
//                       shared with another file's), with &, |, ^, ~ and popc(W) -> C
//   C                   the count type popc returns (per lane for a vector)
//   kLanes              words of a chunk plane one W holds (1 for a word, 4 or 8 for
//                       a 256- or 512-bit vector)
//   W load(const uint64_t *p), C zero(), uint32_t reduce(C)
// and then includes this file, which defines count_tile_for<Isa> (the set's selector, an
// apairs::genotype::CountTileSet) in the same namespace.
//
// Blocking: the tile's rows are visited in slices of kSliceChunks chunks (3 KiB of planes
// per row), so that a slice of the tile's rows stays in the L2 cache; within a slice,
// RI x RJ pairs are folded at once with their counts in registers (each row's planes
// loaded once per RJ or RI pairs), and added to the tile's counts after the slice.
#pragma once

#include <cstdint>

#include "apairs.h"
#include "genotype/dispatch.hpp"
#include "genotype/planes.hpp"

namespace {

template <class Isa, int RI, int RJ, class M>
inline void micro_tile(const M &m, const uint64_t *const *a, const uint64_t *const *b, int64_t c_begin,
                       int64_t c_end, uint32_t *const *out_rows, int64_t ri, int64_t rj, int64_t j0) {
    using W = typename Isa::W;
    using C = typename Isa::C;
    constexpr int K = M::kCounts;
    C acc[RI][RJ][K];
#pragma GCC unroll 16
    for (int r = 0; r < RI; ++r)
#pragma GCC unroll 16
        for (int s = 0; s < RJ; ++s)
#pragma GCC unroll 2
            for (int k = 0; k < K; ++k) acc[r][s][k] = Isa::zero();
    for (int64_t c = c_begin; c < c_end; ++c) {
        for (int l = 0; l < apairs::genotype::kChunkWords; l += Isa::kLanes) {
            const int64_t off = c * apairs::genotype::kChunkU64 + l;
            W xa[RI], ya[RI], ma[RI];
#pragma GCC unroll 16
            for (int r = 0; r < RI; ++r) {
                xa[r] = Isa::load(a[r] + off);
                ya[r] = Isa::load(a[r] + off + apairs::genotype::kChunkWords);
                ma[r] = Isa::load(a[r] + off + 2 * apairs::genotype::kChunkWords);
            }
#pragma GCC unroll 16
            for (int s = 0; s < RJ; ++s) {
                const W xb = Isa::load(b[s] + off);
                const W yb = Isa::load(b[s] + off + apairs::genotype::kChunkWords);
                const W mb = Isa::load(b[s] + off + 2 * apairs::genotype::kChunkWords);
#pragma GCC unroll 16
                for (int r = 0; r < RI; ++r) m.step(acc[r][s], xa[r], ya[r], ma[r], xb, yb, mb);
            }
        }
    }
    // out_rows[k * RI + r] points at count k of row r's first pair in this tile.
#pragma GCC unroll 16
    for (int r = 0; r < RI; ++r)
#pragma GCC unroll 16
        for (int s = 0; s < RJ; ++s)
            if (r < ri && s < rj)
                for (int k = 0; k < K; ++k) out_rows[k * RI + r][j0 + s] += Isa::reduce(acc[r][s][k]);
}

// Adds to bm.both the weights of the variants of chunks [c_begin, c_end) missing in both
// rows of each pair (uint32 sums, exact mod 2^32 in any order), in work proportional to
// the missing calls rather than to pairs x variants: for each 64-variant word, the B
// rows missing each variant are gathered into a mask (a row a bit, nj <= 64), then each
// variant a row of A misses adds its weight to the pairs in that variant's mask. With a
// missing rate p that is about ni nj 64 p^2 additions a word, against ni nj word scans.
inline void both_missing_slice(const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj,
                               int64_t c_begin, int64_t c_end, const apairs::genotype::BothMissing &bm, int64_t ldc) {
    constexpr int64_t CW = apairs::genotype::kChunkWords;
    bool any_a = false;
    for (int64_t i = 0; i < ni; ++i) any_a |= bm.missing_a[i] != 0;
    if (!any_a) return;
    uint64_t rows_missing[64] = {};  // variant t of the word: bit s = row s of B misses it
    for (int64_t c = c_begin; c < c_end; ++c)
        for (int64_t l = 0; l < CW; ++l) {
            const int64_t word = c * CW + l, off = c * apairs::genotype::kChunkU64 + 2 * CW + l;
            const int64_t left = bm.d - 64 * word;
            if (left <= 0) return;  // the padding past d: the last chunk's last words
            const uint64_t valid = left >= 64 ? ~uint64_t(0) : (uint64_t(1) << left) - 1;
            uint64_t any_b = 0;  // variants of the word missing in some row of B
            for (int64_t s = 0; s < nj; ++s) {
                if (!bm.missing_b[s]) continue;
                const uint64_t miss = ~b[s][off] & valid;
                any_b |= miss;
                for (uint64_t bits = miss; bits; bits &= bits - 1) rows_missing[__builtin_ctzll(bits)] |= uint64_t(1) << s;
            }
            if (!any_b) continue;
            const uint32_t *w = bm.weights + 64 * word;
            for (int64_t i = 0; i < ni; ++i) {
                if (!bm.missing_a[i]) continue;
                uint32_t *both = bm.both + i * ldc;
                for (uint64_t bits = ~a[i][off] & any_b; bits; bits &= bits - 1) {
                    const int t = __builtin_ctzll(bits);
                    for (uint64_t js = rows_missing[t]; js; js &= js - 1) both[__builtin_ctzll(js)] += w[t];
                }
            }
            for (uint64_t bits = any_b; bits; bits &= bits - 1) rows_missing[__builtin_ctzll(bits)] = 0;
        }
}

// The counts of M (zeroed by the caller) slice by slice, and, when `both`, the weight
// missing in both rows of each pair.
template <class Isa, class M>
void count_slices(const M &m, const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj,
                  int64_t chunks, const apairs::genotype::TileCounts &out, const apairs::genotype::BothMissing &bm,
                  bool both) {
    // Two counts need twice the accumulators: fewer rows at once keep them in registers.
    constexpr int RI = M::kCounts == 1 ? 3 : 2, RJ = 4, K = M::kCounts;
    for (int64_t c0 = 0; c0 < chunks; c0 += apairs::genotype::kSliceChunks) {
        const int64_t c1 = c0 + apairs::genotype::kSliceChunks < chunks ? c0 + apairs::genotype::kSliceChunks : chunks;
        for (int64_t i = 0; i < ni; i += RI) {
            const int64_t ri = ni - i < RI ? ni - i : RI;
            // Rows past the edge repeat the last row; their counts are dropped.
            const uint64_t *ar[RI];
            uint32_t *rows[K * RI];
            for (int r = 0; r < RI; ++r) {
                const int64_t ii = i + (r < ri ? r : ri - 1);
                ar[r] = a[ii];
                for (int k = 0; k < K; ++k) rows[k * RI + r] = out.c[k] + ii * out.ldc;
            }
            for (int64_t j = 0; j < nj; j += RJ) {
                const int64_t rj = nj - j < RJ ? nj - j : RJ;
                const uint64_t *br[RJ];
                for (int s = 0; s < RJ; ++s) br[s] = b[j + (s < rj ? s : rj - 1)];
                micro_tile<Isa, RI, RJ>(m, ar, br, c0, c1, rows, ri, rj, j);
            }
        }
        if (both) both_missing_slice(a, ni, b, nj, c0, c1, bm, out.ldc);
    }
}

// A row's sums over its planes: popc(x) + popc(y) (the allele form's S) and popc(m).
template <class Isa>
void row_sums(const uint64_t *row, int64_t chunks, uint32_t &s, uint32_t &called) {
    using C = typename Isa::C;
    C sxy = Isa::zero(), sm = Isa::zero();
    for (int64_t c = 0; c < chunks; ++c)
        for (int l = 0; l < apairs::genotype::kChunkWords; l += Isa::kLanes) {
            const uint64_t *p = row + c * apairs::genotype::kChunkU64 + l;
            sxy += popc(Isa::load(p)) + popc(Isa::load(p + apairs::genotype::kChunkWords));
            sm += popc(Isa::load(p + 2 * apairs::genotype::kChunkWords));
        }
    s = Isa::reduce(sxy), called = Isa::reduce(sm);
}

template <class Isa, class M>
void count_tile_m(const M &m, const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj,
                  int64_t chunks, const apairs::genotype::TileCounts &out, const apairs::genotype::BothMissing &bm,
                  bool complete) {
    using apairs::genotype::metric::AlleleShared;
    for (int k = 0; k < M::kCounts; ++k)
        for (int64_t i = 0; i < ni; ++i)
            for (int64_t j = 0; j < nj; ++j) out.c[k][i * out.ldc + j] = 0;
    if (bm.weights)
        for (int64_t i = 0; i < ni; ++i)
            for (int64_t j = 0; j < nj; ++j) bm.both[i * out.ldc + j] = 0;
    if constexpr (apairs::genotype::metric::kAlleleForm<M>) {
        if (complete) {
            // S_a + S_b - 2 (popc(x_a & x_b) + popc(y_a & y_b)); every variant called in
            // both rows, and, complete, no weight missing in either.
            count_slices<Isa>(AlleleShared{}, a, ni, b, nj, chunks, out, bm, false);
            uint32_t sa[64], sb[64], called = 0;
            for (int64_t i = 0; i < ni; ++i) row_sums<Isa>(a[i], chunks, sa[i], called);
            for (int64_t j = 0; j < nj; ++j) row_sums<Isa>(b[j], chunks, sb[j], called);
            for (int64_t i = 0; i < ni; ++i)
                for (int64_t j = 0; j < nj; ++j) {
                    uint32_t &c = out.c[0][i * out.ldc + j];
                    c = sa[i] + sb[j] - 2 * c;
                    if constexpr (M::kCounts == 2) out.c[1][i * out.ldc + j] = called;
                }
            return;
        }
    }
    count_slices<Isa>(m, a, ni, b, nj, chunks, out, bm, bm.weights != nullptr);
}

template <class Isa, class M>
void count_tile(const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj, int64_t chunks,
                const apairs::genotype::TileCounts &out, const apairs::genotype::BothMissing &bm, bool complete) {
    count_tile_m<Isa>(M{}, a, ni, b, nj, chunks, out, bm, complete);  // (the counts need no constants)
}

template <class Isa>
apairs::genotype::CountTileFn count_tile_for(int32_t metric, int32_t missing) {
    apairs::genotype::CountTileFn fn = nullptr;
    apairs::genotype::dispatch(metric, missing, 0.0, 0.0, [&](auto m) { fn = &count_tile<Isa, decltype(m)>; });
    return fn;
}

}  // namespace
