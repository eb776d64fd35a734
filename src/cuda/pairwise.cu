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

#include "cuda/backend.hpp"
#include "cuda/runtime.cuh"
#include "output.hpp"

namespace apairs::cuda {
namespace {

constexpr int C = 32;          // columns of a tile = threads across a block row (a warp)
constexpr int DS = kSliceDims; // d': dimensions per slice
constexpr int PAD = DS + 1;    // shared-memory row stride: conflict-free column reads
constexpr int kMaxThreads = 512;  // r <= 16 warps; leaves the compiler up to 128 registers

// s, the subtiles per tile: as many as keep the running totals and the slice's partial
// sums (2 s accumulators) within 32 registers, at most 16. More subtiles mean a taller
// tile, so each staged B row serves more outputs: 16 for float, 8 for double, 2 to 5
// for cosine's three sums (tools/gpu-notes.md, run 5). LP's step is a pow, which the
// staging does not slow down but register pressure does: it keeps s = 4.
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

int64_t tile_count(const PairwiseProblem &pb, int r, int s, int64_t *tiles_j) {
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

Kernel kernel_for(const PairwiseProblem &pb) {
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

KernelAttributes kernel_attributes(const PairwiseProblem &pb) {
    const Kernel k = kernel_for(pb);
    cudaFuncAttributes fa{};
    check(cudaFuncGetAttributes(&fa, k.fn), "cudaFuncGetAttributes");
    KernelAttributes ka;
    ka.regs_per_thread = fa.numRegs;
    ka.shared_per_block = static_cast<int64_t>(fa.sharedSizeBytes) + dynamic_shared(0, k.s, k.elem);
    ka.shared_per_warp = int64_t(k.s) * PAD * int64_t(k.elem);
    ka.max_threads_per_block = fa.maxThreadsPerBlock;
    return ka;
}

int cuda_blocks_per_sm(const PairwiseProblem &pb, int r) {
    const Kernel k = kernel_for(pb);
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.fn, r * C,
                                                        size_t(dynamic_shared(r, k.s, k.elem))),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return blocks;
}

LaunchConfig plan_pairwise(const PairwiseProblem &pb, int device, double occupancy_target) {
    require_device(device);
    DeviceScope scope(device);
    const DeviceLimits limits = device_limits(device);
    const KernelAttributes ka = kernel_attributes(pb);
    LaunchConfig cfg;
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

void execute_pairwise(const PairwiseProblem &pb, const LaunchConfig &cfg, void *stream_ptr,
                      const void *A, const void *B, void *D) {
    DeviceScope scope(cfg.device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    const size_t in = pb.in_size(), out = pb.out_size();

    // Device-resident arrays are used in place; host arrays are staged, packed.
    auto device_or_host = [&](const void *p, const char *name) {
        int dev = -1;
        const Memory kind = classify(p, &dev);
        if (kind == Memory::Device && dev != cfg.device)
            throw Error(APAIRS_ERROR_INVALID_POINTER,
                        fmt::format("{} is memory of device {}, but the plan is on device {}", name,
                                    dev, cfg.device));
        return kind == Memory::Host;
    };
    // B is A: one array, staged once (same rows, same leading dimension).
    const bool alias = B == A && pb.ldb == pb.lda && pb.n2 == pb.n1;
    const bool stage_a = device_or_host(A, "A"), stage_b = !alias && device_or_host(B, "B");
    const bool stage_d = device_or_host(D, "D");

    const bool staged = stage_a || stage_b || stage_d;
    // Clear an error left by earlier work (e.g. a failed call of the caller's), so that
    // the launch check below reports this launch.
    cudaGetLastError();
    try {
        // An input on the host is copied, packed (leading dimension d), into a device buffer.
        auto stage_in = [&](const void *host, int64_t rows, int64_t ld, const char *what,
                             std::unique_ptr<StreamBuffer> &buf) {
            buf = std::make_unique<StreamBuffer>(size_t(rows) * pb.d * in, stream);
            copy_rows(buf->get(), pb.d * in, host, ld * in, pb.d * in, rows,
                      cudaMemcpyHostToDevice, stream, what);
            return static_cast<const void *>(buf->get());
        };
        std::unique_ptr<StreamBuffer> bufA, bufB, bufD;
        const void *a = stage_a ? stage_in(A, pb.n1, pb.lda, "copy A to the device", bufA) : A;
        const int64_t lda = stage_a ? pb.d : pb.lda;
        const void *b = alias     ? a
                        : stage_b ? stage_in(B, pb.n2, pb.ldb, "copy B to the device", bufB)
                                  : B;
        const int64_t ldb = alias ? lda : stage_b ? pb.d : pb.ldb;
        if (stage_d) bufD = std::make_unique<StreamBuffer>(size_t(pb.n1) * pb.n2 * out, stream);
        void *dd = stage_d ? bufD->get() : D;
        const int64_t ldd = stage_d ? pb.n2 : pb.ldd;

        int64_t tiles_j = 0;
        const int64_t ntiles = tile_count(pb, cfg.r, cfg.s, &tiles_j);
        const dim3 block(C, cfg.r), grid(static_cast<unsigned>(cfg.grid));
        dispatch(pb, [&](auto m) {
            using M = decltype(m);
            using T = typename M::in_t;
            using O = FullKernel<M>;
            pairwise_kernel<M, O><<<grid, block, cfg.dynamic_shared, stream>>>(
                m, static_cast<const T *>(a), lda, static_cast<const T *>(b), ldb, pb.n1, pb.n2,
                pb.d, O{static_cast<typename M::out_t *>(dd), ldd}, tiles_j, ntiles);
        });
        check(cudaGetLastError(), "pairwise kernel launch");

        if (stage_d)
            copy_rows(D, pb.ldd * out, dd, pb.n2 * out, pb.n2 * out, pb.n1,
                      cudaMemcpyDeviceToHost, stream, "copy D to the host");
        if (staged) {
            bufA.reset();
            bufB.reset();
            bufD.reset();
            check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        }
    } catch (...) {
        // A staged call must not return while copies from or to the caller's host arrays
        // may still run: drain the stream before reporting the error.
        if (staged && cudaStreamSynchronize(stream) != cudaSuccess) cudaGetLastError();
        throw;
    }
}

}  // namespace apairs::cuda
