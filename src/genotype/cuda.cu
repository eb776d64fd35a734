// Genotype CUDA engine: packed rows become three bit planes over 32-bit words (a
// conversion kernel, which also sums each row's missing-call weight), then the tile /
// subtile / slice scheme of the all-pairs engine over them: a block of 32 x R threads
// owns an (R*S) x 32 tile of pairs, stages slices of the planes of its rows in shared
// memory, and each thread folds its S pairs with the metric's functor (metrics.hpp,
// shared with the host engines), popc on 32-bit words.
#include <cuda_runtime.h>

#include <algorithm>
#include <fmt/format.h>

#include "cuda/device.hpp"
#include "cuda/runtime.cuh"
#include "cuda/staging.cuh"
#include "genotype/cuda.hpp"
#include "genotype/dispatch.hpp"

namespace apairs::genotype {
using namespace apairs::cuda;
namespace {

constexpr int C = 32, R = kCudaRowsPerBlock, S = kCudaSubtiles, K = kCudaSliceWords;
constexpr int RS = 3 * K + 1;  // shared row stride in words: odd, so column reads do not conflict

inline int64_t words_for(int64_t d) { return (d + 31) / 32; }
inline int64_t padded_words(int64_t d) { return (words_for(d) + K - 1) / K * K; }

__device__ __forceinline__ uint32_t even_bits32(uint64_t x) {
    x &= 0x5555555555555555ULL;
    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    return static_cast<uint32_t>((x | (x >> 16)) & 0xFFFFFFFFULL);
}

__device__ __forceinline__ uint32_t valid_word(int64_t w, int64_t d) {
    const int64_t left = d - 32 * w;
    return left >= 32 ? 0xFFFFFFFFu : left <= 0 ? 0u : (1u << left) - 1u;
}

// One thread per (row, padded word): planes[(row * words + w) * 3 + {x, y, m}], and, with
// weights, the row's missing weight (uint32, wrapping: the sum is exact mod 2^32) and
// whether it has a missing call.
__global__ void to_planes(const uint8_t *__restrict__ packed, int64_t pitch, int64_t n, int64_t d, int64_t words,
                          uint32_t *__restrict__ planes, const uint32_t *__restrict__ weights,
                          uint32_t *__restrict__ wmiss, uint32_t *__restrict__ missing) {
    const int64_t bytes = (d + 3) / 4;
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n * words;
         t += int64_t(gridDim.x) * blockDim.x) {
        const int64_t row = t / words, w = t % words;
        const uint8_t *p = packed + row * pitch;
        uint64_t v = 0;
        for (int b = 0; b < 8; ++b) {
            const int64_t at = 8 * w + b;
            if (at < bytes) v |= uint64_t(p[at]) << (8 * b);
        }
        const uint32_t lo = even_bits32(v), hi = even_bits32(v >> 1), valid = valid_word(w, d);
        const uint32_t called = (hi | ~lo) & valid;
        uint32_t *out = planes + (row * words + w) * 3;
        out[0] = hi & valid;
        out[1] = hi & lo & valid;
        out[2] = called;
        uint32_t miss = valid & ~called;
        if (miss && missing) {
            missing[row] = 1;
            uint32_t sum = 0;
            if (weights)
                for (; miss; miss &= miss - 1) sum += weights[32 * w + __ffs(miss) - 1];
            atomicAdd(&wmiss[row], sum);
        }
    }
}

template <class M>
__global__ void __launch_bounds__(C *R)
genotype_kernel(const M m, const uint32_t *__restrict__ pa, int64_t n1, const uint32_t *__restrict__ pb, int64_t n2,
                int64_t d, int64_t words, const uint32_t *__restrict__ weights, const uint32_t *__restrict__ wmiss_a,
                const uint32_t *__restrict__ wmiss_b, const uint32_t *__restrict__ miss_a,
                const uint32_t *__restrict__ miss_b, uint32_t W, typename M::out_t *__restrict__ D, int64_t ldd,
                int64_t tiles_j, int64_t ntiles) {
    __shared__ uint32_t As[R * S * RS];
    __shared__ uint32_t Bs[C * RS];
    constexpr int KC = M::kCounts;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * C + tx;
    for (int64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const int64_t i0 = t / tiles_j * (R * S), j0 = t % tiles_j * C;
        uint32_t cnt[S][2], both[S];
#pragma unroll
        for (int s = 0; s < S; ++s) cnt[s][0] = cnt[s][1] = both[s] = 0;
        const int64_t j = j0 + tx;
        const bool need_both = weights && j < n2 && miss_b[j];
        for (int64_t w0 = 0; w0 < words; w0 += K) {
            // Stage the slice: K words x 3 planes per row, contiguous in global memory.
            for (int e = tid; e < R * S * 3 * K; e += C * R) {
                const int r = e / (3 * K), q = e % (3 * K);
                const int64_t i = i0 + r;
                As[r * RS + q] = i < n1 ? pa[(i * words + w0) * 3 + q] : 0u;
            }
            for (int e = tid; e < C * 3 * K; e += C * R) {
                const int c = e / (3 * K), q = e % (3 * K);
                const int64_t jj = j0 + c;
                Bs[c * RS + q] = jj < n2 ? pb[(jj * words + w0) * 3 + q] : 0u;
            }
            __syncthreads();
            const uint32_t *b = Bs + tx * RS;
#pragma unroll 4
            for (int k = 0; k < K; ++k) {
                const uint32_t xb = b[3 * k], yb = b[3 * k + 1], mb = b[3 * k + 2];
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const uint32_t *a = As + (s * R + ty) * RS + 3 * k;
                    m.step(cnt[s], a[0], a[1], a[2], xb, yb, mb);
                }
            }
            if (need_both) {
                for (int k = 0; k < K; ++k) {
                    const int64_t w = w0 + k;
                    const uint32_t valid = valid_word(w, d);
                    if (!valid) break;
#pragma unroll
                    for (int s = 0; s < S; ++s) {
                        const int64_t i = i0 + s * R + ty;
                        if (i >= n1 || !miss_a[i]) continue;
                        uint32_t bits = ~(As[(s * R + ty) * RS + 3 * k + 2] | b[3 * k + 2]) & valid;
                        for (; bits; bits &= bits - 1) both[s] += __ldg(&weights[32 * w + __ffs(bits) - 1]);
                    }
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (int s = 0; s < S; ++s) {
            const int64_t i = i0 + s * R + ty;
            if (i < n1 && j < n2) {
                const uint32_t den = weights ? W - wmiss_a[i] - wmiss_b[j] + both[s] : 0u;
                D[i * ldd + j] = m.finish(cnt[s], den);
            }
        }
        (void)KC;
    }
}

// The smallest linear index (i * d + k) of a byte that is not 0, 1, 2 or missing.
__global__ void find_bad(const uint8_t *__restrict__ g, int64_t n, int64_t d, int64_t ldg, int missing,
                         unsigned long long *first) {
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n * d; t += int64_t(gridDim.x) * blockDim.x) {
        const uint8_t v = g[(t / d) * ldg + t % d];
        if (v > 2 && v != missing) atomicMin(first, static_cast<unsigned long long>(t));
    }
}

// One thread per packed byte: four genotypes as PLINK codes (g -> 00, 10, 11; missing
// -> 01), the unused high bits of a row's last byte 0.
__global__ void pack_bytes(const uint8_t *__restrict__ g, int64_t n, int64_t d, int64_t ldg,
                           uint8_t *__restrict__ packed, int64_t ldp) {
    const int64_t bytes = (d + 3) / 4;
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < n * bytes;
         t += int64_t(gridDim.x) * blockDim.x) {
        const int64_t i = t / bytes, b = t % bytes;
        unsigned v = 0;
        for (int s = 0; s < 4 && 4 * b + s < d; ++s) {
            const unsigned x = g[i * ldg + 4 * b + s];
            v |= (x == 0 ? 0u : x == 1 ? 2u : x == 2 ? 3u : 1u) << (2 * s);
        }
        packed[i * ldp + b] = static_cast<uint8_t>(v);
    }
}

}  // namespace

void pack_cuda(int device, void *stream_ptr, const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
               uint8_t *packed, int64_t ldp) {
    require_device(device);
    DeviceScope scope(device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    const int grid = prop.multiProcessorCount * 8;
    StreamBuffer first(sizeof(unsigned long long), stream);
    const unsigned long long none = ~0ULL;
    unsigned long long found = none;
    check(cudaMemcpyAsync(first.get(), &none, sizeof none, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    find_bad<<<grid, 256, 0, stream>>>(g, n, d, ldg, missing_value, static_cast<unsigned long long *>(first.get()));
    check(cudaGetLastError(), "genotype find_bad launch");
    check(cudaMemcpyAsync(&found, first.get(), sizeof found, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    if (found != none) {
        const int64_t i = int64_t(found) / d, k = int64_t(found) % d;
        uint8_t v = 0;
        check(cudaMemcpy(&v, g + i * ldg + k, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
        fail(APAIRS_ERROR_INVALID_VALUE, "genotypes[{}][{}] = {}: expected 0, 1, 2 or missing_value = {}", i, k,
             int(v), missing_value);
    }
    pack_bytes<<<grid, 256, 0, stream>>>(g, n, d, ldg, packed, ldp);
    check(cudaGetLastError(), "genotype pack launch");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

CudaConfig plan_cuda(const Problem &pb, int device) {
    require_device(device);
    DeviceScope scope(device);
    CudaConfig cfg;
    cfg.device = device;
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    cfg.device_name = prop.name;
    cfg.sm_count = prop.multiProcessorCount;
    dispatch(pb.metric, pb.missing, pb.num(), pb.half(), [&](auto m) {
        cudaFuncAttributes fa{};
        check(cudaFuncGetAttributes(&fa, genotype_kernel<decltype(m)>), "cudaFuncGetAttributes");
        cfg.regs_per_thread = fa.numRegs;
        int blocks = 0;
        check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, genotype_kernel<decltype(m)>, C * R, 0),
              "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        const int64_t tiles = (pb.n1 + R * S - 1) / (R * S) * ((pb.n2 + C - 1) / C);
        cfg.grid = std::min<int64_t>(tiles, int64_t(std::max(blocks, 1)) * cfg.sm_count * 4);
    });
    return cfg;
}

void execute_cuda(const Problem &pb, const CudaConfig &cfg, void *stream_ptr, const void *A, const void *B,
                  void *D) {
    DeviceScope scope(cfg.device);
    cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
    const int64_t row_bytes = (pb.d + 3) / 4, out = int64_t(pb.out_size());
    Staging st(cfg.device, stream);
    const int a_slot = st.in(A, pb.n1, row_bytes, pb.lda, "A");
    const int b_slot = st.in(B, pb.n2, row_bytes, pb.ldb, "B");
    const int d_slot = st.out(D, pb.n1, pb.n2 * out, pb.ldd * out, "D");
    st.stage();
    const Staging::View a = st.view(a_slot), b = st.view(b_slot), dd = st.view(d_slot);

    const int64_t words = padded_words(pb.d);
    const bool same = a.ptr == b.ptr && a.pitch == b.pitch && pb.n1 == pb.n2;
    const bool w = pb.weighted();
    // Planes, and per row the missing weight and flag (zeroed first: atomics add to them).
    StreamBuffer planes_a(size_t(pb.n1 * words * 3) * 4, stream);
    std::unique_ptr<StreamBuffer> planes_b;
    if (!same) planes_b = std::make_unique<StreamBuffer>(size_t(pb.n2 * words * 3) * 4, stream);
    StreamBuffer meta(size_t(2 * (pb.n1 + pb.n2)) * 4, stream);
    std::unique_ptr<StreamBuffer> weights;
    if (w) {
        weights = std::make_unique<StreamBuffer>(size_t(pb.d) * 4, stream);
        check(cudaMemcpyAsync(weights->get(), pb.weights.data(), size_t(pb.d) * 4, cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync(weights)");
    }
    check(cudaMemsetAsync(meta.get(), 0, size_t(2 * (pb.n1 + pb.n2)) * 4, stream), "cudaMemsetAsync");
    uint32_t *wmiss_a = static_cast<uint32_t *>(meta.get()), *wmiss_b = wmiss_a + pb.n1;
    uint32_t *miss_a = wmiss_b + pb.n2, *miss_b = miss_a + pb.n1;
    const uint32_t *wts = w ? static_cast<const uint32_t *>(weights->get()) : nullptr;
    auto convert = [&](const Staging::View &v, int64_t n, void *planes, uint32_t *wm, uint32_t *mi) {
        const int64_t threads = n * words;
        const int grid = int(std::min<int64_t>((threads + 255) / 256, int64_t(cfg.sm_count) * 32));
        to_planes<<<grid, 256, 0, stream>>>(static_cast<const uint8_t *>(v.ptr), v.pitch, n, pb.d, words,
                                            static_cast<uint32_t *>(planes), wts, wm, mi);
        check(cudaGetLastError(), "genotype to_planes launch");
    };
    convert(a, pb.n1, planes_a.get(), wmiss_a, miss_a);
    if (!same) convert(b, pb.n2, planes_b->get(), wmiss_b, miss_b);
    const uint32_t *pa = static_cast<const uint32_t *>(planes_a.get());
    const uint32_t *pbp = same ? pa : static_cast<const uint32_t *>(planes_b->get());
    const int64_t tiles_j = (pb.n2 + C - 1) / C, ntiles = (pb.n1 + R * S - 1) / (R * S) * tiles_j;
    dispatch(pb.metric, pb.missing, pb.num(), pb.half(), [&](auto m) {
        using M = decltype(m);
        genotype_kernel<M><<<unsigned(cfg.grid), dim3(C, R), 0, stream>>>(
            m, pa, pb.n1, pbp, pb.n2, pb.d, words, wts, wmiss_a, same ? wmiss_a : wmiss_b, miss_a,
            same ? miss_a : miss_b, uint32_t(pb.weight_sum), static_cast<typename M::out_t *>(dd.ptr), dd.pitch / out,
            tiles_j, ntiles);
    });
    check(cudaGetLastError(), "genotype kernel launch");
    st.finish();
}

}  // namespace apairs::genotype
