// The AVX-512 counting kernel: 512-bit vectors of the planes, VPOPCNTQ per 64-bit lane.
// Built with -mavx512f -mavx512vpopcntdq (meson.build) and used only when the CPU has
// both; nothing in this file is shared with code built for other instruction sets (the
// kernel's instantiations are internal, see kernel.hpp).
#include <immintrin.h>

#include <cstdint>

#include "genotype/planes.hpp"

namespace {

struct Vec {
    __m512i v;
};
inline Vec operator&(Vec a, Vec b) { return {_mm512_and_si512(a.v, b.v)}; }
inline Vec operator|(Vec a, Vec b) { return {_mm512_or_si512(a.v, b.v)}; }
inline Vec operator^(Vec a, Vec b) { return {_mm512_xor_si512(a.v, b.v)}; }
inline Vec operator~(Vec a) { return {_mm512_ternarylogic_epi64(a.v, a.v, a.v, 0x55)}; }
inline Vec operator+(Vec a, Vec b) { return {_mm512_add_epi64(a.v, b.v)}; }
inline Vec &operator+=(Vec &a, Vec b) { return a = a + b; }
inline Vec popc(Vec a) { return {_mm512_popcnt_epi64(a.v)}; }

struct Isa {
    using W = Vec;
    using C = Vec;
    static constexpr int kLanes = 8;
    static W load(const uint64_t *p) { return {_mm512_loadu_si512(p)}; }
    static C zero() { return {_mm512_setzero_si512()}; }
    static uint32_t reduce(C c) {  // once per slice: a store is as good as shuffles
        alignas(64) uint64_t lanes[8];
        _mm512_store_si512(lanes, c.v);
        uint64_t sum = 0;
        for (uint64_t v : lanes) sum += v;
        return static_cast<uint32_t>(sum);
    }
};

}  // namespace

#include "genotype/kernel.hpp"

namespace apairs::genotype {

CountTileSet count_tile_avx512() {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512vpopcntdq")) return nullptr;
    return &count_tile_for<Isa>;
}

}  // namespace apairs::genotype
