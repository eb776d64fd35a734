// The layout adapter: AoS <-> SoA for every element's `entries` values. As a matrix,
// AoS is batch x entries (row e at e * stride) and SoA is entries x batch (row i at
// i * stride): the adapter is a matrix transpose, done in square tiles through shared
// memory (64 x 64 for 4-byte values, else 32 x 32) so that both the reads and the writes
// run along rows (whole memory lines);
// elements of at most 16 entries take tiles of all their entries instead (narrow kernel).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "batched/cuda.hpp"
#include "batched/launch.cuh"
#include "cuda/device.hpp"
#include "cuda/runtime.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

// The narrow kernel's threads per tile.
constexpr int kUnit = 256;

template <class T>
struct TransposeArgs {
    const T *in;
    T *out;
    int64_t rows, cols;  // of `in`: rows x cols, row r at r * ld_in
    int64_t ld_in, ld_out;
};

// The tile kernel: out[c * ld_out + r] = in[r * ld_in + c], a tile of TILE x TILE values
// a block of 256 threads, each thread moving TILE^2 / 256 of them (all its loads in flight
// before the stores), tiles beyond the grid in a grid stride. A row of TILE + 1 entries
// keeps the column reads free of bank conflicts. 4-byte values take tiles of 64: 16
// values, 64 bytes in flight a thread (H200 runs 418-419: float n = 16 0.163-0.167 ->
// 0.155-0.160 ms against 32 x 32 tiles of 8 values a thread; double's tiles of 32, 4
// values a thread, as fast as before, and 64 x 64 slower). The loads bypass L1 (no line is
// read twice): lines in flight in the 28 KB of L1 that the largest shared-memory carveout
// leaves held float to the times above (run 419, with them: 0.154-0.155). At most 64
// registers (four blocks an SM; six, at 40, no faster: run 418). The kernel takes blocks
// of exactly kTileThreads: its launch bounds cap the planner's blocks at one unit.
__host__ __device__ constexpr int tile_of_size(int64_t bytes) { return bytes == 4 ? 64 : 32; }
template <class T>
constexpr int kTileOf = tile_of_size(sizeof(T));
constexpr int kTileThreads = 256;

template <class T, int TILE>
__global__ void __launch_bounds__(kTileThreads, 4) transpose_kernel(const TransposeArgs<T> g) {
    extern __shared__ __align__(16) unsigned char transpose_smem[];
    constexpr int kPer = TILE * TILE / kTileThreads, kStep = kTileThreads / TILE;
    T(*tile)[TILE + 1] = reinterpret_cast<T(*)[TILE + 1]>(transpose_smem);
    const int tx = int(threadIdx.x) % TILE, ty = int(threadIdx.x) / TILE;
    const int64_t tiles_c = (g.cols + TILE - 1) / TILE;
    const int64_t tiles = (g.rows + TILE - 1) / TILE * tiles_c;
    const int64_t in_step = kStep * g.ld_in, out_step = kStep * g.ld_out;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t r0 = t / tiles_c * TILE, c0 = t % tiles_c * TILE;
        const bool whole = r0 + TILE <= g.rows && c0 + TILE <= g.cols;
        T v[kPer];
        int64_t in_at = (r0 + ty) * g.ld_in + c0 + tx;  // in row r0 + ty + k kStep, column c0 + tx
#pragma unroll
        for (int k = 0; k < kPer; ++k, in_at += in_step)
            if (whole || (r0 + ty + k * kStep < g.rows && c0 + tx < g.cols)) v[k] = __ldcg(g.in + in_at);
#pragma unroll
        for (int k = 0; k < kPer; ++k) tile[ty + k * kStep][tx] = v[k];
        __syncthreads();
        int64_t out_at = (c0 + ty) * g.ld_out + r0 + tx;  // out row c0 + ty + k kStep, column r0 + tx
#pragma unroll
        for (int k = 0; k < kPer; ++k, out_at += out_step)
            if (whole || (c0 + ty + k * kStep < g.cols && r0 + tx < g.rows)) g.out[out_at] = tile[tx][ty + k * kStep];
        __syncthreads();
    }
}

// Narrow matrices: one side of `in` of at most kNarrow entries (a batch of small AoS
// elements, or its SoA image). A 32 x 32 tile would be mostly empty there; the tile is
// instead the whole narrow side (padded to TC, a power of two) by TW = kNarrowTile / TC
// of the wide side, every thread moving 8 values (all loads in flight before the stores).
// The reads of a warp cover 32 consecutive values of `in` in its row order, the writes 32
// of `out` in its own; the tile is held as out's rows, each padded so that neither phase
// meets more than a 2-way bank conflict (the 16-byte kernel's tile instead: unpadded,
// swizzled; narrow_vec_tile).
constexpr int kNarrow = 16, kLgNarrowTile = 11, kNarrowTile = 1 << kLgNarrowTile;
static_assert(kNarrowTile % kUnit == 0, "whole values per thread");

template <class T>
struct NarrowArgs {
    const T *in;
    T *out;
    int64_t rows, cols;  // of `in`
    int64_t ld_in, ld_out;
    int lg_tc;  // log2 of the narrow side's tile extent TC
    int pitch;  // of a row of the tile in shared memory (an out row)
};

// The vec case's tile: 4 entries of an element in by one 16-byte load, 4 elements of an
// entry out by one 16-byte store. The tile holds out's rows unpadded (TW values each),
// their 16-byte granules swizzled: granule q of row c at q ^ s(c), s(c) = (c / 4) * 32 / TC
// mod 8, so that the reads' stores into the tile (a warp: 32 / (TC / 4) elements times
// TC / 4 granules of entries) and the writes' 16-byte loads meet no bank conflict.
template <class T>
__device__ __forceinline__ void narrow_vec_tile(const NarrowArgs<T> &g, T *tile, int64_t w0, int tid) {
    static_assert(sizeof(T) == 4, "4-byte values");
    constexpr int kPieces = kNarrowTile / kUnit / 4;  // 16-byte pieces a thread moves
    const int lg_tc = g.lg_tc, lg_q = lg_tc - 2, lg_tw = kLgNarrowTile - lg_tc, TW = 1 << lg_tw;
    const int64_t wide = g.rows, nlen = g.cols;
    auto swz = [&](int c) { return ((c >> 2) << (5 - lg_tc)) & 7; };
    uint4 v[kPieces];
#pragma unroll
    for (int k = 0; k < kPieces; ++k) {
        const int ch = tid + k * kUnit, w = ch >> lg_q, c4 = ch & ((1 << lg_q) - 1);
        v[k] = make_uint4(0, 0, 0, 0);
        if (w0 + w < wide && 4 * c4 < nlen)
            v[k] = *reinterpret_cast<const uint4 *>(g.in + (w0 + w) * g.ld_in + 4 * c4);
    }
#pragma unroll
    for (int k = 0; k < kPieces; ++k) {
        const int ch = tid + k * kUnit, w = ch >> lg_q, c4 = ch & ((1 << lg_q) - 1);
        T *const t = tile + 4 * c4 * TW + ((((w >> 2) ^ swz(4 * c4))) << 2) + (w & 3);
        t[0] = v[k].x;
        t[TW] = v[k].y;
        t[2 * TW] = v[k].z;
        t[3 * TW] = v[k].w;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPieces; ++k) {
        const int p = tid + k * kUnit, c = p >> (lg_tw - 2), q = p & ((TW >> 2) - 1), r = 4 * q;
        const uint4 x = *reinterpret_cast<const uint4 *>(tile + c * TW + ((q ^ swz(c)) << 2));
        T *const dst = g.out + c * g.ld_out + w0 + r;
        if (c < nlen && w0 + r + 4 <= wide) {
            *reinterpret_cast<uint4 *>(dst) = x;
        } else if (c < nlen) {
            const T xs[4] = {x.x, x.y, x.z, x.w};
            for (int j = 0; j < 4 && w0 + r + j < wide; ++j) dst[j] = xs[j];
        }
    }
}

// NC: the narrow side is in's columns (AoS -> SoA), else its rows (SoA -> AoS). On the
// narrow side's pass (NC: the reads, else the writes) each thread keeps one narrow index
// and walks the wide side by kUnit / TC, so its addresses are one pointer and a step.
// VEC (4-byte values, NC; vec_shape and both arrays on the 16-byte grid): narrow_vec_tile,
// a kernel of its own (in one with the scalar walk, both fit 32 registers no more).
template <class T, bool NC, bool VEC = false>
__global__ void __launch_bounds__(1024, sizeof(T) == 4 && NC ? 2 : 1) transpose_narrow_kernel(const NarrowArgs<T> g) {
    extern __shared__ __align__(16) unsigned char transpose_smem[];
    constexpr int kPer = kNarrowTile / kUnit;
    const int unit = threadIdx.x / kUnit, units = blockDim.x / kUnit, tid = threadIdx.x % kUnit;
    const int lg_tc = g.lg_tc, lg_tw = kLgNarrowTile - lg_tc, P = g.pitch;
    const int TC = 1 << lg_tc, TW = 1 << lg_tw, walk = kUnit >> lg_tc;
    const int narrow = tid & (TC - 1), wide0 = tid >> lg_tc;  // this thread's indices on the narrow side's pass
    T *const tile = reinterpret_cast<T *>(transpose_smem) + unit * (NC ? TC : TW) * P;
    const int64_t wide = NC ? g.rows : g.cols, nlen = NC ? g.cols : g.rows;
    const int64_t tiles = (wide + TW - 1) / TW;
    for (int64_t t = int64_t(blockIdx.x) * units + unit; t < tiles; t += int64_t(gridDim.x) * units) {
        const int64_t w0 = t * TW;
        if constexpr (VEC) {
            narrow_vec_tile(g, tile, w0, tid);
            __syncthreads();
            continue;
        }
        T v[kPer];
        // The tile holds out's rows: tile[c * P + r] for in's (r, c), tile-relative.
        if constexpr (NC) {
            const T *p = g.in + (w0 + wide0) * g.ld_in + narrow;
            const int64_t step = int64_t(walk) * g.ld_in;
#pragma unroll
            for (int k = 0; k < kPer; ++k, p += step)
                if (narrow < nlen && w0 + wide0 + k * walk < wide) v[k] = *p;
#pragma unroll
            for (int k = 0; k < kPer; ++k) tile[narrow * P + wide0 + k * walk] = v[k];
        } else {
#pragma unroll
            for (int k = 0; k < kPer; ++k) {
                const int q = tid + k * kUnit, r = q >> lg_tw, c = q & (TW - 1);
                if (r < nlen && w0 + c < wide) v[k] = g.in[r * g.ld_in + w0 + c];
            }
#pragma unroll
            for (int k = 0; k < kPer; ++k) {
                const int q = tid + k * kUnit;
                tile[(q & (TW - 1)) * P + (q >> lg_tw)] = v[k];
            }
        }
        __syncthreads();
        if constexpr (NC) {
            // out row c (narrow), columns w0 + r.
#pragma unroll 1
            for (int k = 0; k < kPer; ++k) {
                const int q = tid + k * kUnit, c = q >> lg_tw, r = q & (TW - 1);
                if (c < nlen && w0 + r < wide) g.out[c * g.ld_out + w0 + r] = tile[c * P + r];
            }
        } else {
            // out row w0 + c (wide), column `narrow`.
            T *p = g.out + (w0 + wide0) * g.ld_out + narrow;
            const int64_t step = int64_t(walk) * g.ld_out;
#pragma unroll 1
            for (int k = 0; k < kPer; ++k, p += step)
                if (narrow < nlen && w0 + wide0 + k * walk < wide) *p = tile[(wide0 + k * walk) * P + narrow];
        }
        __syncthreads();
    }
}

// The values are moved as unsigned integers of their width: bit for bit.
template <class T>
KernelSpec spec() {
    constexpr int tile = kTileOf<T>;
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&transpose_kernel<T, tile>);
    k.model = Model::Tiles;
    k.unit_threads = kTileThreads;
    k.unit_elements = 1;  // a unit moves one tile
    k.unit_shared = int64_t(tile) * (tile + 1) * int64_t(sizeof(T));
    k.name = fmt::format("transpose<{}-byte values, {}x{} tiles>", sizeof(T), tile, tile);
    k.why = fmt::format("a transpose of the batch x entries matrix in {} x {} tiles through shared memory, so that "
                        "reads and writes both run along rows",
                        tile, tile);
    return k;
}

// The narrow kernel's tile: lg_tc, TW and the pitch of its rows (out's rows: TC of TW
// values when in's columns are narrow, TW of TC otherwise). With in's columns narrow the
// reads put 32 / TC consecutive rows of TC values into the tile's columns: a pitch of TW
// plus 128 bytes / TC values keeps them on distinct banks; else an odd pitch.
struct Narrow {
    int lg_tc = 0, tw = 0, pitch = 0, tile_rows = 0;
};
Narrow narrow_of(const TransposeProblem &pb) {
    Narrow n;
    while ((int64_t(1) << n.lg_tc) < pb.entries) ++n.lg_tc;
    const int tc = 1 << n.lg_tc, words = 128 / int(pb.elem_size());
    n.tw = kNarrowTile / tc;
    const bool narrow_cols = !pb.in.soa;
    n.pitch = narrow_cols ? n.tw + std::max(1, words / tc) : tc + 1;
    n.tile_rows = narrow_cols ? tc : n.tw;
    return n;
}
bool is_narrow(const TransposeProblem &pb) {
    return pb.entries <= kNarrow && (pb.elem_size() == 4 || pb.elem_size() == 8);
}
// The shapes of the narrow kernel's 16-byte pieces (4-byte values, AoS -> SoA, TC >= 4,
// entries and both strides multiples of 4); the launch also needs both arrays on the
// 16-byte grid.
bool vec_shape(const TransposeProblem &pb) {
    return pb.elem_size() == 4 && !pb.in.soa && narrow_of(pb).lg_tc >= 2 && pb.entries % 4 == 0 &&
           pb.in.stride % 4 == 0 && pb.out.stride % 4 == 0;
}

template <class T>
KernelSpec narrow_spec(const TransposeProblem &pb) {
    const Narrow n = narrow_of(pb);
    KernelSpec k;
    const bool vec = sizeof(T) == 4 && vec_shape(pb);
    k.fn = pb.in.soa ? reinterpret_cast<const void *>(&transpose_narrow_kernel<T, false>)
           : vec     ? reinterpret_cast<const void *>(&transpose_narrow_kernel<T, true, sizeof(T) == 4>)  // (vec: 4-byte T)
                     : reinterpret_cast<const void *>(&transpose_narrow_kernel<T, true>);
    k.model = Model::Tiles;
    k.unit_threads = kUnit;
    k.unit_elements = 1;  // a unit moves one tile
    k.unit_shared = int64_t(n.tile_rows) * n.pitch * int64_t(sizeof(T));
    k.name = fmt::format("transpose_narrow<{}-byte values{}, {} x {} tiles>", sizeof(T),
                         vec ? " in 16-byte pieces" : "", n.tw, 1 << n.lg_tc);
    k.why = fmt::format("{} entries per element: a tile holds all of them for {} elements, so that the reads and "
                        "writes of every warp run along 32 consecutive values",
                        pb.entries, n.tw);
    return k;
}

KernelSpec spec_for(const TransposeProblem &pb) {
    if (is_narrow(pb)) return pb.elem_size() == 8 ? narrow_spec<uint64_t>(pb) : narrow_spec<uint32_t>(pb);
    switch (pb.elem_size()) {
    case 8: return spec<uint64_t>();
    case 4: return spec<uint32_t>();
    default: return spec<uint8_t>();
    }
}

int64_t tiles_of(const TransposeProblem &pb) {
    if (is_narrow(pb)) return (pb.batch + narrow_of(pb).tw - 1) / narrow_of(pb).tw;
    const int tile = tile_of_size(pb.elem_size());
    return (pb.batch + tile - 1) / tile * ((pb.entries + tile - 1) / tile);
}

template <class T>
TransposeArgs<T> args_of(const TransposeProblem &pb, const void *in, void *out) {
    TransposeArgs<T> g;
    g.in = static_cast<const T *>(in);
    g.out = static_cast<T *>(out);
    // To SoA: in is batch x entries (AoS rows); to AoS: in is entries x batch.
    g.rows = pb.in.soa ? pb.entries : pb.batch;
    g.cols = pb.in.soa ? pb.batch : pb.entries;
    g.ld_in = pb.in.stride;
    g.ld_out = pb.out.stride;
    return g;
}

template <class T>
NarrowArgs<T> narrow_args_of(const TransposeProblem &pb, const void *in, void *out) {
    const TransposeArgs<T> t = args_of<T>(pb, in, out);
    const Narrow n = narrow_of(pb);
    NarrowArgs<T> g;
    g.in = t.in, g.out = t.out;
    g.rows = t.rows, g.cols = t.cols;
    g.ld_in = t.ld_in, g.ld_out = t.ld_out;
    g.lg_tc = n.lg_tc;
    g.pitch = n.pitch;
    return g;
}

}  // namespace

CudaConfig plan_transpose_cuda(const TransposeProblem &pb, int device, double occupancy_target) {
    return plan_kernel(spec_for(pb), tiles_of(pb), device, occupancy_target, 1,
                       fmt::format("batched transpose of {} entries", pb.entries));
}

void launch_transpose_cuda(const TransposeProblem &pb, const CudaConfig &cfg, void *stream, const void *in,
                           void *out) {
    DeviceScope scope(cfg.device);
    constexpr const char *what = "batched transpose kernel launch";
    if (is_narrow(pb) && pb.elem_size() == 8)
        return launch_planned(cfg, stream, narrow_args_of<uint64_t>(pb, in, out), what);
    if (is_narrow(pb)) {
        // Planned for 16-byte pieces, given arrays off the 16-byte grid (or a chunk of the
        // staging whose strides are not multiples of 4): the scalar kernel (the same tile,
        // shared memory and register cap).
        const NarrowArgs<uint32_t> g = narrow_args_of<uint32_t>(pb, in, out);
        auto on16 = [](const void *p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
        if ((vec_shape(pb) && on16(in) && on16(out)) ||
            cfg.kernel != reinterpret_cast<const void *>(&transpose_narrow_kernel<uint32_t, true, true>))
            return launch_planned(cfg, stream, g, what);
        CudaConfig scalar = cfg;
        scalar.kernel = reinterpret_cast<const void *>(&transpose_narrow_kernel<uint32_t, true>);
        return launch_planned(scalar, stream, g, what);
    }
    switch (pb.elem_size()) {
    case 8: return launch_planned(cfg, stream, args_of<uint64_t>(pb, in, out), what);
    case 4: return launch_planned(cfg, stream, args_of<uint32_t>(pb, in, out), what);
    default: return launch_planned(cfg, stream, args_of<uint8_t>(pb, in, out), what);
    }
}

}  // namespace apairs::batched
