// CUDA engine: the tile / subtile / slice decomposition of Sarje & Aluru (2013).
//
// A block of r x c threads (c = 32, one warp across columns; r warps, chosen by the
// occupancy estimator) owns an (r*s) x c tile of D and computes it one r x c subtile
// at a time. The vectors are staged through shared memory d' dimensions at a time:
// each slice brings the tile's r*s rows of A and c rows of B, every thread folds the
// slice for its s outputs into fresh accumulators and merges them into its running
// totals, which stay in registers across slices. Tiles are visited in a grid-stride
// loop, so any n1 x n2 fits any grid.
#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <fmt/format.h>

#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "cuda/staging.cuh"
#include "pairwise/cuda.hpp"
#include "pairwise/output.hpp"

namespace apairs::pairwise {
using namespace apairs::cuda;
namespace {

constexpr int C = 32;          // columns of a tile = threads across a block row (a warp)
constexpr int DS = kSliceDims; // d': dimensions per slice
constexpr int PAD = DS + 1;    // shared-memory row stride: conflict-free column reads
constexpr int kMaxThreads = 512;  // r <= 16 warps; leaves the compiler up to 128 registers

// s, the subtiles per tile: as many as keep the running totals and the slice's partial
// sums (2 s accumulators) within 32 registers, at most 16. More subtiles mean a taller
// tile, so each staged B row serves more outputs: 16 for float, 8 for double, 2 to 5
// for cosine's three sums (tools/gpu-notes.md, run 5). LP's step is a pow, which the
// staging does not slow down but register pressure does: it keeps s = 4 (LP with p = 3
// or 4 multiplies instead, at s = 8: 16 spills in float).
// The largest block (16 warps) also stays within the default 48 KiB of dynamic shared
// memory: s * sizeof(element) <= 64.
constexpr int subtiles(int acc_bytes, int elem_bytes) {
    return std::min({16, std::max(2, 64 / acc_bytes), 64 / elem_bytes});
}
// The values README.md and the notes state: float / double sums, cosine float / double,
// uint8 and double Hamming (int32 counts).
static_assert(subtiles(4, 4) == 16 && subtiles(8, 8) == 8 && subtiles(12, 4) == 5 &&
              subtiles(24, 8) == 2 && subtiles(4, 1) == 16 && subtiles(4, 8) == 8);
template <class M>
constexpr int kSubtiles = subtiles(int(sizeof(typename M::acc_t)), int(sizeof(typename M::in_t)));
template <class T>
constexpr int kSubtiles<metric::Lp<T>> = 4;
template <class T, int K>
constexpr int kSubtiles<metric::LpInt<T, K>> = 8;  // 16 for float spills 8-16 bytes

template <class M, class O>
__global__ void __launch_bounds__(kMaxThreads)
pairwise_kernel(const M m, const typename M::in_t *__restrict__ A, int64_t lda,
                const typename M::in_t *__restrict__ B, int64_t ldb, int64_t n1, int64_t n2,
                int64_t d, const O out, int64_t tiles_j, int64_t ntiles) {
    using T = typename M::in_t;
    using acc_t = typename M::acc_t;
    constexpr int S = kSubtiles<M>;
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ typename O::Shared osh;

    const int R = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * C + tx, nthreads = R * C;
    T *As = reinterpret_cast<T *>(smem);  // (R*S) x PAD
    T *Bs = As + R * S * PAD;             // C x PAD

    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t i0 = t / tiles_j * (R * S), j0 = t % tiles_j * C;
        acc_t tot[S];
#pragma unroll
        for (int s = 0; s < S; ++s) tot[s] = m.init();

        for (int64_t k0 = 0; k0 < d; k0 += DS) {
            const int nk = static_cast<int>(d - k0 < DS ? d - k0 : DS);
            // Stage the slice: consecutive threads read consecutive dimensions of a row.
            for (int e = tid; e < R * S * DS; e += nthreads) {
                const int r = e / DS, k = e % DS;
                const int64_t i = i0 + r;
                As[r * PAD + k] = (i < n1 && k < nk) ? A[i * lda + k0 + k] : T(0);
            }
            for (int e = tid; e < C * DS; e += nthreads) {
                const int c = e / DS, k = e % DS;
                const int64_t j = j0 + c;
                Bs[c * PAD + k] = (j < n2 && k < nk) ? B[j * ldb + k0 + k] : T(0);
            }
            __syncthreads();
            // Fold the slice: each B element read from shared memory serves all s
            // subtiles (the A elements are warp-wide broadcasts).
            const T *b = Bs + tx * PAD;
            const T *a = As + ty * PAD;
            acc_t part[S];
#pragma unroll
            for (int s = 0; s < S; ++s) part[s] = m.init();
            auto fold = [&](int k) {
                const T bk = b[k];
#pragma unroll
                for (int s = 0; s < S; ++s) m.step(part[s], a[s * R * PAD + k], bk);
            };
            if (nk == DS) {
#pragma unroll 8
                for (int k = 0; k < DS; ++k) fold(k);
            } else {
                for (int k = 0; k < nk; ++k) fold(k);
            }
#pragma unroll
            for (int s = 0; s < S; ++s) m.merge(tot[s], part[s]);
            __syncthreads();
        }

        out.begin(osh, tid, nthreads);
        __syncthreads();
#pragma unroll
        for (int s = 0; s < S; ++s) {
            const int64_t i = i0 + s * R + ty, j = j0 + tx;
            if (i < n1 && j < n2) out.emit(osh, i, j, m.finish(tot[s]));
        }
        __syncthreads();
        out.end(osh, tid, nthreads);
    }
}

template <class M>
using FullKernel = output::FullMatrix<typename M::out_t>;

int64_t tile_count(const Problem &pb, int r, int s, int64_t *tiles_j) {
    *tiles_j = (pb.n2 + C - 1) / C;
    const int64_t rows = int64_t(r) * s;
    return (pb.n1 + rows - 1) / rows * *tiles_j;
}

// Dynamic shared memory of a block of r warps: (r*s) rows of A and c rows of B.
constexpr int64_t dynamic_shared(int r, int s, size_t elem) {
    return (int64_t(r) * s + C) * PAD * int64_t(elem);
}
static_assert(dynamic_shared(kMaxThreads / C, subtiles(4, 4), 4) <= 48 * 1024 &&
                  dynamic_shared(kMaxThreads / C, subtiles(4, 8), 8) <= 48 * 1024 &&
                  dynamic_shared(kMaxThreads / C, subtiles(4, 1), 1) <= 48 * 1024,
              "the largest block must fit the default 48 KiB of dynamic shared memory");

struct Kernel {
    const void *fn = nullptr;
    size_t elem = 0;  // bytes per input element
    int s = 0;        // subtiles per tile
};

Kernel kernel_for(const Problem &pb) {
    Kernel k;
    dispatch(pb, [&](auto m) {
        using M = decltype(m);
        k.fn = reinterpret_cast<const void *>(&pairwise_kernel<M, FullKernel<M>>);
        k.elem = sizeof(typename M::in_t);
        k.s = kSubtiles<M>;
    });
    return k;
}

}  // namespace

KernelAttributes kernel_attributes(const Problem &pb) {
    const Kernel k = kernel_for(pb);
    cudaFuncAttributes fa{};
    check(cudaFuncGetAttributes(&fa, k.fn), "cudaFuncGetAttributes");
    KernelAttributes ka;
    ka.regs_per_thread = fa.numRegs;
    // The unit of growth is a warp: one more row of threads, and s more rows of A staged.
    ka.shared_fixed = static_cast<int64_t>(fa.sharedSizeBytes) + dynamic_shared(0, k.s, k.elem);
    ka.threads_per_unit = C;
    ka.shared_per_unit = int64_t(k.s) * PAD * int64_t(k.elem);
    ka.max_threads_per_block = fa.maxThreadsPerBlock;
    return ka;
}

int cuda_blocks_per_sm(const Problem &pb, int r) {
    const Kernel k = kernel_for(pb);
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.fn, r * C,
                                                        size_t(dynamic_shared(r, k.s, k.elem))),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
}

CudaConfig plan_cuda(const Problem &pb, int device, double occupancy_target) {
    require_device(device);
    DeviceScope scope(device);
    const DeviceLimits limits = device_limits(device);
    const KernelAttributes ka = kernel_attributes(pb);
    CudaConfig cfg;
    cfg.device = device;
    cfg.device_name = limits.name;
    cfg.cc_major = limits.cc_major;
    cfg.cc_minor = limits.cc_minor;
    cfg.sm_count = limits.sm_count;
    cfg.c = C;
    cfg.s = kernel_for(pb).s;
    cfg.ds = DS;
    cfg.regs_per_thread = ka.regs_per_thread;
    try {
        cfg.choice = choose_block_size(limits, ka, occupancy_target);
    } catch (const std::invalid_argument &e) {
        throw Error(APAIRS_ERROR_UNSUPPORTED,
                    fmt::format("no launch configuration fits {}: {}", limits.name, e.what()));
    }
    cfg.r = cfg.choice.chosen.block_threads / C;
    cfg.dynamic_shared = dynamic_shared(cfg.r, cfg.s, pb.in_size());
    cfg.cuda_blocks_per_sm = cuda_blocks_per_sm(pb, cfg.r);
    int64_t tiles_j = 0;
    cfg.grid = std::min<int64_t>(tile_count(pb, cfg.r, cfg.s, &tiles_j), 0x7fffffff);
    return cfg;
}

void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream_ptr, const void *A, const void *B,
                  void *D) {
    DeviceScope scope(cfg.device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    const int64_t in = int64_t(pb.in_size()), out = int64_t(pb.out_size());

    // Device-resident arrays are used in place; host arrays are staged, packed. B = A
    // (same rows, same leading dimension) is staged once.
    Staging st(cfg.device, stream);
    const int a_slot = st.in(A, pb.n1, pb.d * in, pb.lda * in, "A");
    const int b_slot = st.in(B, pb.n2, pb.d * in, pb.ldb * in, "B");
    const int d_slot = st.out(D, pb.n1, pb.n2 * out, pb.ldd * out, "D");
    st.stage();
    const Staging::View a = st.view(a_slot), b = st.view(b_slot), dd = st.view(d_slot);

    int64_t tiles_j = 0;
    const int64_t ntiles = tile_count(pb, cfg.r, cfg.s, &tiles_j);
    const dim3 block(C, cfg.r), grid(static_cast<unsigned>(cfg.grid));
    dispatch(pb, [&](auto m) {
        using M = decltype(m);
        using T = typename M::in_t;
        using O = FullKernel<M>;
        pairwise_kernel<M, O><<<grid, block, cfg.dynamic_shared, stream>>>(
            m, static_cast<const T *>(a.ptr), a.pitch / in, static_cast<const T *>(b.ptr), b.pitch / in, pb.n1,
            pb.n2, pb.d, O{static_cast<typename M::out_t *>(dd.ptr), dd.pitch / out}, tiles_j, ntiles);
    });
    check(cudaGetLastError(), "pairwise kernel launch");
    st.finish();
}

}  // namespace apairs::pairwise
