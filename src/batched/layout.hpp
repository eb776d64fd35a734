// How one operand of every element of a batch is stored: the batched family's layouts.
//
//   AoS (each element contiguous):  entry (i, j) of element e at  e * stride + idx(i, j)
//   SoA (interleaved):              entry (i, j) of element e at  idx(i, j) * stride + e
//   idx(i, j) = i * ld + j (row-major) or i + j * ld (column-major)
//
// So in AoS `stride` is the element stride (>= the element's extent) and in SoA it is the
// batch stride (>= the batch count, padded for whole memory sectors: soa_padded_count),
// and entry (i, j) of consecutive elements is contiguous, which is what makes
// thread-per-element loads coalesce. Shared by host and device code.
#pragma once

#include <cstdint>

#include "common/error.hpp"

namespace apairs::batched {

// Entry (i, j) of element e at e * elem + i * row + j * col (in entries of the dtype).
struct Strides {
    int64_t elem, row, col;
};

struct Matrix {
    int64_t rows = 0, cols = 0;  // as stored (before any transpose the op applies)
    int64_t ld = 0, stride = 0;
    bool soa = false, row_major = true;

    APAIRS_HD int64_t index(int64_t i, int64_t j, int64_t e) const {
        const int64_t idx = row_major ? i * ld + j : i + j * ld;
        return soa ? idx * stride + e : e * stride + idx;
    }
    // The same as three strides (after a transpose when `trans`). A dimension of extent 1
    // gets stride 0: its ld * stride (SoA) need not fit in 64 bits, since validation only
    // bounds the entries that exist.
    Strides strides(bool trans = false) const {
        int64_t r = row_major ? ld : 1, c = row_major ? 1 : ld;
        if (soa) r = rows > 1 ? r * stride : 0, c = cols > 1 ? c * stride : 0;
        Strides s{soa ? 1 : stride, r, c};
        if (trans) {
            const int64_t t = s.row;
            s.row = s.col, s.col = t;
        }
        return s;
    }
    // Elements of one entry grid: the AoS extent of an element, the SoA count of entries.
    int64_t extent() const { return row_major ? (rows - 1) * ld + cols : (cols - 1) * ld + rows; }
    // The number of array elements the operand spans for `batch` elements.
    int64_t span(int64_t batch) const { return soa ? (extent() - 1) * stride + batch : (batch - 1) * stride + extent(); }
};

// The batch count padded so that each entry's run of a SoA array is a whole number of
// 128-byte lines for float and double (32 entries): the stride the plan recommends.
constexpr int64_t kSoaAlign = 32;
inline int64_t soa_padded_count(int64_t batch) { return (batch + kSoaAlign - 1) / kSoaAlign * kSoaAlign; }

}  // namespace apairs::batched
