// The counting loop nest of the host engines, written once and compiled per instruction
// set (kernel_avx512.cpp, kernel_popcnt.cpp, kernel_scalar.cpp). Each of those files
// defines, in an anonymous namespace, an `Isa` with
//   W                   the word type (a wrapper, so that every instantiation here has
//                       internal linkage: code built for one instruction set is never
//                       shared with another file's), with &, |, ^, ~ and popc(W) -> C
//   C                   the count type popc returns (per lane for a vector)
//   kLanes              words of a chunk plane one W holds (1 for a word, 8 for a
//                       512-bit vector)
//   W load(const uint64_t *p), C zero(), uint32_t reduce(C),
//   unsigned nonzero_lanes(W) (bit t: word t of W is not 0), void store(uint64_t *lanes, W)
// and then includes this file, which defines count_tile<Isa> in the same namespace.
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
// rows of each pair: ~(m_a | m_b), limited to variants below d in the last chunk.
template <class Isa>
void both_missing_slice(const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj, int64_t c_begin,
                        int64_t c_end, int64_t chunks, const apairs::genotype::BothMissing &bm, int64_t ldc) {
    using W = typename Isa::W;
    constexpr int64_t CW = apairs::genotype::kChunkWords;
    alignas(64) uint64_t valid_last[CW];
    for (int64_t l = 0; l < CW; ++l) {
        const int64_t left = bm.d - 64 * ((chunks - 1) * CW + l);
        valid_last[l] = left >= 64 ? ~uint64_t(0) : left <= 0 ? 0 : (uint64_t(1) << left) - 1;
    }
    for (int64_t i = 0; i < ni; ++i) {
        if (!bm.missing_a[i]) continue;
        for (int64_t j = 0; j < nj; ++j) {
            if (!bm.missing_b[j]) continue;
            uint32_t sum = 0;
            for (int64_t c = c_begin; c < c_end; ++c)
                for (int l = 0; l < CW; l += Isa::kLanes) {
                    const int64_t off = c * apairs::genotype::kChunkU64 + 2 * CW + l;
                    W both = ~(Isa::load(a[i] + off) | Isa::load(b[j] + off));
                    if (c == chunks - 1) both = both & Isa::load(valid_last + l);
                    unsigned nonzero = Isa::nonzero_lanes(both);
                    if (!nonzero) continue;
                    alignas(64) uint64_t lanes[Isa::kLanes];
                    Isa::store(lanes, both);
                    for (; nonzero; nonzero &= nonzero - 1) {
                        const int t = __builtin_ctz(nonzero);
                        const uint32_t *w = bm.weights + 64 * (c * CW + l + t);
                        for (uint64_t bits = lanes[t]; bits; bits &= bits - 1) sum += w[__builtin_ctzll(bits)];
                    }
                }
            bm.both[i * ldc + j] += sum;
        }
    }
}

template <class Isa, class M>
void count_tile_m(const M &m, const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj,
                  int64_t chunks, const apairs::genotype::TileCounts &out, const apairs::genotype::BothMissing &bm) {
    // Two counts need twice the accumulators: fewer rows at once keep them in registers.
    constexpr int RI = M::kCounts == 1 ? 3 : 2, RJ = 4, K = M::kCounts;
    for (int k = 0; k < K; ++k)
        for (int64_t i = 0; i < ni; ++i)
            for (int64_t j = 0; j < nj; ++j) out.c[k][i * out.ldc + j] = 0;
    if (bm.weights)
        for (int64_t i = 0; i < ni; ++i)
            for (int64_t j = 0; j < nj; ++j) bm.both[i * out.ldc + j] = 0;
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
        if (bm.weights) both_missing_slice<Isa>(a, ni, b, nj, c0, c1, chunks, bm, out.ldc);
    }
}

template <class Isa>
void count_tile(int32_t metric, int32_t missing, const uint64_t *const *a, int64_t ni, const uint64_t *const *b,
                int64_t nj, int64_t chunks, const apairs::genotype::TileCounts &out,
                const apairs::genotype::BothMissing &bm) {
    apairs::genotype::dispatch(metric, missing, 0.0, 0.0,
                               [&](auto m) { count_tile_m<Isa>(m, a, ni, b, nj, chunks, out, bm); });
}

}  // namespace
