// The AVX2 counting kernel, for CPUs without AVX-512's VPOPCNTQ: 256-bit vectors of the
// planes, each 64-bit lane's popcount by two 4-bit table lookups (VPSHUFB) summed per
// lane (VPSADBW). Built with -mavx2 (meson.build) and used only when the CPU has it;
// nothing in this file is shared with code built for other instruction sets (the
// kernel's instantiations are internal, see kernel.hpp).
#include <immintrin.h>

#include <cstdint>

#include "genotype/planes.hpp"

namespace {

struct Vec {
    __m256i v;
};
inline Vec operator&(Vec a, Vec b) { return {_mm256_and_si256(a.v, b.v)}; }
inline Vec operator|(Vec a, Vec b) { return {_mm256_or_si256(a.v, b.v)}; }
inline Vec operator^(Vec a, Vec b) { return {_mm256_xor_si256(a.v, b.v)}; }
inline Vec operator~(Vec a) { return {_mm256_xor_si256(a.v, _mm256_set1_epi64x(-1))}; }
inline Vec operator+(Vec a, Vec b) { return {_mm256_add_epi64(a.v, b.v)}; }
inline Vec &operator+=(Vec &a, Vec b) { return a = a + b; }
// Per 64-bit lane: the bytes' counts from a table of the 16 nibbles, summed by VPSADBW.
inline Vec popc(Vec a) {
    const __m256i table = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,  //
                                           0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i low = _mm256_set1_epi8(0x0F);
    const __m256i bytes = _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(a.v, low)),
                                          _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(a.v, 4), low)));
    return {_mm256_sad_epu8(bytes, _mm256_setzero_si256())};
}

struct Isa {
    using W = Vec;
    using C = Vec;
    static constexpr int kLanes = 4;
    static W load(const uint64_t *p) { return {_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p))}; }
    static C zero() { return {_mm256_setzero_si256()}; }
    static uint32_t reduce(C c) {  // once per slice
        alignas(32) uint64_t lanes[4];
        _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), c.v);
        return static_cast<uint32_t>(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
    }
};

}  // namespace

#include "genotype/kernel.hpp"

namespace apairs::genotype {

CountTileSet count_tile_avx2() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? &count_tile_for<Isa> : nullptr;
}

}  // namespace apairs::genotype
