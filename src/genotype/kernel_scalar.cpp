// The portable counting kernel: 64-bit words, the compiler's popcount. Also built as
// kernel_popcnt (APAIRS_GENOTYPE_POPCNT, with -mpopcnt), used when the CPU has POPCNT.
#include <cstdint>

#include "genotype/planes.hpp"

namespace {

struct Word {
    uint64_t v;
};
inline Word operator&(Word a, Word b) { return {a.v & b.v}; }
inline Word operator|(Word a, Word b) { return {a.v | b.v}; }
inline Word operator^(Word a, Word b) { return {a.v ^ b.v}; }
inline Word operator~(Word a) { return {~a.v}; }
inline uint32_t popc(Word a) { return static_cast<uint32_t>(__builtin_popcountll(a.v)); }

struct Isa {
    using W = Word;
    using C = uint32_t;
    static constexpr int kLanes = 1;
    static W load(const uint64_t *p) { return {*p}; }
    static C zero() { return 0; }
    static uint32_t reduce(C c) { return c; }
};

}  // namespace

#include "genotype/kernel.hpp"

namespace apairs::genotype {

#if defined(APAIRS_GENOTYPE_POPCNT)
CountTileSet count_tile_popcnt() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("popcnt") ? &count_tile_for<Isa> : nullptr;
}
#else
CountTileSet count_tile_scalar() { return &count_tile_for<Isa>; }
#endif

}  // namespace apairs::genotype
