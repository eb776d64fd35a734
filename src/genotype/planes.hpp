// The host engines' form of a packed row: three bit planes over 64-variant words
// (metrics.hpp), stored in chunks of kChunkWords words per plane,
//   row r, chunk c:  x[0..7], y[0..7], m[0..7]   (uint64_t, 192 bytes)
// so that one AVX-512 load takes a chunk's plane and a scalar engine walks the words.
// Variants past d (the last word's high bits, the padding words of the last chunk) have
// m = x = y = 0: they never count.
#pragma once

#include <cstdint>

namespace apairs::genotype {

constexpr int64_t kChunkWords = 8;                 // 64-bit words per plane per chunk
constexpr int64_t kChunkVariants = 64 * kChunkWords;
constexpr int64_t kChunkU64 = 3 * kChunkWords;     // uint64_t per chunk (three planes)
constexpr int64_t kSliceChunks = 16;               // chunks per cache slice (kernel.hpp)

inline int64_t chunks_for(int64_t d) { return (d + kChunkVariants - 1) / kChunkVariants; }

// The counts of one tile of pairs, as the ISA kernels (kernel.hpp) produce them:
// c[k][i * ldc + j] for count k of pair (i, j), i < ni rows of A, j < nj rows of B.
struct TileCounts {
    uint32_t *c[2];
    int64_t ldc;
};

// The weighted metrics' third sum per pair: the weight of the variants missing in both
// rows (uint32 arithmetic), both[i * ldc + j]; only for pairs whose rows both have a
// missing call (missing_a[i] && missing_b[j]), else left 0.
struct BothMissing {
    const uint32_t *weights = nullptr;  // nullptr: not wanted
    int64_t d = 0;
    const uint8_t *missing_a = nullptr, *missing_b = nullptr;
    uint32_t *both = nullptr;
};

// One metric's counting kernel for one instruction set: the counts of every pair of the
// rows `a` (ni pointers to row planes) and `b` (nj), ni, nj <= 64, over `chunks` chunks.
// `complete`: no row of a or b holds a missing call, so that the allele metrics may take
// their two-term form (metrics.hpp, AlleleShared). It throws nothing: the engines call it
// inside OpenMP regions.
using CountTileFn = void (*)(const uint64_t *const *a, int64_t ni, const uint64_t *const *b, int64_t nj,
                             int64_t chunks, const TileCounts &out, const BothMissing &bm, bool complete);
// An instruction set's kernels: the one for (metric, missing) (apairs.h values; only which
// counts they need matters). Throws INTERNAL for a metric it does not know, so the engines
// take their kernel before any parallel region.
using CountTileSet = CountTileFn (*)(int32_t metric, int32_t missing);

// The kernel sets this build and this CPU can run, best first (kernel_*.cpp).
CountTileSet count_tile_avx512();   // nullptr when not compiled in or not supported here
CountTileSet count_tile_avx2();     // likewise
CountTileSet count_tile_popcnt();   // likewise
CountTileSet count_tile_scalar();   // always
const char *count_tile_name(CountTileSet set);

}  // namespace apairs::genotype
