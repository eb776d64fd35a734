// The layout adapter: AoS <-> SoA for every element's `entries` values. As a matrix,
// AoS is batch x entries (row e at e * stride) and SoA is entries x batch (row i at
// i * stride): the adapter is a matrix transpose, done in 32 x 32 tiles through shared
// memory so that both the reads and the writes run along rows (whole memory lines).
#include <cuda_runtime.h>

#include <cstdint>

#include <fmt/format.h>

#include "batched/cuda.hpp"
#include "batched/launch.cuh"
#include "cuda/device.hpp"
#include "cuda/runtime.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

constexpr int kTile = 32, kRows = 8;  // a tile, and the rows of threads that move it
constexpr int kUnit = kTile * kRows;  // threads per tile

template <class T>
struct TransposeArgs {
    const T *in;
    T *out;
    int64_t rows, cols;  // of `in`: rows x cols, row r at r * ld_in
    int64_t ld_in, ld_out;
};

// out[c * ld_out + r] = in[r * ld_in + c]. A unit of 256 threads moves one tile (each
// thread 4 values: all four loads in flight before the stores); a block of several
// units moves several tiles at once, and tiles beyond the grid come in a grid stride.
// The tile's row of 33 entries keeps the column reads free of bank conflicts.
template <class T>
__global__ void transpose_kernel(const TransposeArgs<T> g) {
    extern __shared__ __align__(16) unsigned char transpose_smem[];
    const int unit = threadIdx.x / kUnit, units = blockDim.x / kUnit;
    const int tx = threadIdx.x % kTile, ty = (threadIdx.x % kUnit) / kTile;
    T(*tile)[kTile + 1] = reinterpret_cast<T(*)[kTile + 1]>(transpose_smem) + unit * kTile;
    const int64_t tiles_c = (g.cols + kTile - 1) / kTile;
    const int64_t tiles = (g.rows + kTile - 1) / kTile * tiles_c;
    for (int64_t t = int64_t(blockIdx.x) * units + unit; t < tiles; t += int64_t(gridDim.x) * units) {
        const int64_t r0 = t / tiles_c * kTile, c0 = t % tiles_c * kTile;
        T v[kTile / kRows];
#pragma unroll
        for (int k = 0; k < kTile / kRows; ++k) {
            const int64_t r = r0 + ty + k * kRows, c = c0 + tx;
            if (r < g.rows && c < g.cols) v[k] = g.in[r * g.ld_in + c];
        }
#pragma unroll
        for (int k = 0; k < kTile / kRows; ++k) tile[ty + k * kRows][tx] = v[k];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kTile / kRows; ++k) {
            const int64_t c = c0 + ty + k * kRows, r = r0 + tx;  // out row c, column r
            if (r < g.rows && c < g.cols) g.out[c * g.ld_out + r] = tile[tx][ty + k * kRows];
        }
        __syncthreads();
    }
}

// The values are moved as unsigned integers of their width: bit for bit.
template <class T>
KernelSpec spec() {
    KernelSpec k;
    k.fn = reinterpret_cast<const void *>(&transpose_kernel<T>);
    k.model = Model::Tiles;
    k.unit_threads = kUnit;
    k.unit_elements = 1;  // a unit moves one tile
    k.unit_shared = int64_t(kTile) * (kTile + 1) * int64_t(sizeof(T));
    k.name = fmt::format("transpose<{}-byte values, {}x{} tiles>", sizeof(T), kTile, kTile);
    k.why = "a transpose of the batch x entries matrix in 32 x 32 tiles through shared memory, so that reads and "
            "writes both run along rows";
    return k;
}

KernelSpec spec_for(const TransposeProblem &pb) {
    switch (pb.elem_size()) {
    case 8: return spec<uint64_t>();
    case 4: return spec<uint32_t>();
    default: return spec<uint8_t>();
    }
}

int64_t tiles_of(const TransposeProblem &pb) {
    return (pb.batch + kTile - 1) / kTile * ((pb.entries + kTile - 1) / kTile);
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

}  // namespace

CudaConfig plan_transpose_cuda(const TransposeProblem &pb, int device, double occupancy_target) {
    return plan_kernel(spec_for(pb), tiles_of(pb), device, occupancy_target, 1,
                       fmt::format("batched transpose of {} entries", pb.entries));
}

void launch_transpose_cuda(const TransposeProblem &pb, const CudaConfig &cfg, void *stream, const void *in,
                           void *out) {
    DeviceScope scope(cfg.device);
    constexpr const char *what = "batched transpose kernel launch";
    switch (pb.elem_size()) {
    case 8: return launch_planned(cfg, stream, args_of<uint64_t>(pb, in, out), what);
    case 4: return launch_planned(cfg, stream, args_of<uint32_t>(pb, in, out), what);
    default: return launch_planned(cfg, stream, args_of<uint8_t>(pb, in, out), what);
    }
}

}  // namespace apairs::batched
