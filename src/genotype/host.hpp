// The genotype host engine: packed rows to bit planes, the counting kernels of the best
// instruction set this CPU has, the missing-call scaling, D. Also packing and PLINK's
// missing-call weights.
#pragma once

#include <cstdint>

#include "genotype/problem.hpp"

namespace apairs::genotype {

// Tiles of kTileRows x kTileRows pairs per OpenMP task.
constexpr int64_t kTileRows = 48;
static_assert(kTileRows <= 64, "the weighted sum's masks hold a tile's rows of B in 64 bits (kernel.hpp)");

// The name of the counting kernel run_host uses on this CPU ("avx512-vpopcntq", ...).
const char *host_kernel_name();

// D = F(A, B) for a validated problem; host memory; `threads` resolved. When A and B are
// the same rows (A == B, n1 == n2, lda == ldb) only the pairs i <= j are computed and
// D[j][i] is written from D[i][j] (every metric is symmetric, bit for bit).
void run_host(const Problem &pb, const void *A, const void *B, void *D, int threads);

// apairs_genotype_pack's argument checks (all but the bytes), and its host engine;
// apairs_genotype_missing_weights (arguments validated here).
void check_pack_args(const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
                     const uint8_t *packed, int64_t ldp);
void pack_host(const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value, uint8_t *packed,
               int64_t ldp, int threads);
void missing_weights_host(const uint8_t *packed, int64_t n, int64_t d, int64_t ld, const uint8_t *founders,
                          uint32_t *weights, int threads);

}  // namespace apairs::genotype
