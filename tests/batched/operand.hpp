// The batched tests' operand: one matrix (or vector) of every element of a batch, laid
// out as apairs.h describes (AoS or SoA, row- or column-major, padded ld and stride), in
// a buffer of exactly the span the header gives (after `offset` slots, so that the array
// handed to the library may start misaligned), every slot poisoned first.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "reference.hpp"

namespace test {

template <class T>
struct Operand {
    int64_t rows, cols, ld, stride, batch, offset;
    bool soa, row_major;
    std::vector<T> v;
    Operand(int64_t r, int64_t c, bool soa_, bool row, int64_t ld_pad, int64_t stride_pad, int64_t b,
            int64_t off = 0)
        : rows(r), cols(c), batch(b), offset(off), soa(soa_), row_major(row) {
        ld = (row ? c : r) + ld_pad;
        const int64_t extent = (row ? r - 1 : c - 1) * ld + (row ? c : r);
        stride = (soa ? b : extent) + stride_pad;
        const int64_t span = soa ? (extent - 1) * stride + b : (b - 1) * stride + extent;
        v.assign(size_t(off + span), ref::poison<T>());
    }
    // From a test's layout record (soa, row_major, ld_pad, stride_pad).
    template <class L>
    Operand(int64_t r, int64_t c, const L &l, int64_t b)
        : Operand(r, c, l.soa, l.row_major, l.ld_pad, l.stride_pad, b) {}
    // A vector of n entries: an n x 1 column-major matrix.
    static Operand vector(int64_t n, bool soa, int64_t stride_pad, int64_t b, int64_t off = 0) {
        return Operand(n, 1, soa, false, 0, stride_pad, b, off);
    }
    T *data() { return v.data() + offset; }
    int64_t index(int64_t i, int64_t j, int64_t e) const {
        const int64_t idx = row_major ? i * ld + j : i + j * ld;
        return offset + (soa ? idx * stride + e : e * stride + idx);
    }
    T &at(int64_t i, int64_t j, int64_t e) { return v[size_t(index(i, j, e))]; }
    const T &at(int64_t i, int64_t j, int64_t e) const { return v[size_t(index(i, j, e))]; }
    // Every entry uniform in [-1, 1], never 0.
    void fill(ref::Rng &rng) {
        std::uniform_real_distribution<double> u(-1, 1);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j) {
                    T x;
                    do x = static_cast<T>(u(rng));
                    while (x == T(0));
                    at(i, j, e) = x;
                }
    }
    // The slots that are no entry of an element and whose bits differ from `before`.
    int64_t padding_touched(const std::vector<T> &before) const {
        std::vector<char> entry(v.size(), 0);
        for (int64_t e = 0; e < batch; ++e)
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j) entry[size_t(index(i, j, e))] = 1;
        int64_t bad = 0;
        for (size_t s = 0; s < v.size(); ++s)
            if (!entry[s] && std::memcmp(&v[s], &before[s], sizeof(T)) != 0) ++bad;
        return bad;
    }
    // Every slot that is no entry of an element still holds its poison.
    bool padding_intact() const { return padding_touched(std::vector<T>(v.size(), ref::poison<T>())) == 0; }
};

}  // namespace test
