// apairs_probe: measures the instruction rates that the genotype bounds are computed
// from, on the device it runs on (README, "Genotype plans"): POPC (32-bit population
// count), the binary tensor-core MMA (mma.sync m16n8k256 b1, AND + popc accumulation)
// and, for scale, the int8 MMA (m16n8k32 s8). Each kernel keeps 8 independent chains
// a warp in flight on every SM for long enough that launch costs vanish, and prints
// the rate per SM per clock at the SM clock the run reported.
//
//   apairs_probe            every probe on device 0
//
// Not a test and not installed: a benchmark companion, like apairs_bench.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CU(x)                                                                                    \
    do {                                                                                         \
        cudaError_t e_ = (x);                                                                    \
        if (e_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "apairs_probe: %s: %s\n", #x, cudaGetErrorString(e_));          \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

constexpr int kChains = 8, kIters = 4096;

// 8 chains of popc(x ^ k) accumulated: 1 POPC + 1 LOP + 1 IADD a step, so the POPC unit
// (16 lanes an SM a clock on sm_80/sm_90) is the limit, not the issue slots.
__global__ void probe_popc(unsigned seed, unsigned *out) {
    unsigned x[kChains], acc[kChains];
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = seed * (threadIdx.x + 1) + c, acc[c] = 0;
    for (int it = 0; it < kIters; ++it)
#pragma unroll
        for (int c = 0; c < kChains; ++c) acc[c] += __popc(x[c] ^ unsigned(it));
    unsigned s = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) s += acc[c];
    if (s == 0x12345678u) out[0] = s;
}

// 8 independent MMAs a step: m16n8k256 b1 (AND, popc-accumulated into s32) when Binary,
// else m16n8k32 s8; the same fragments (4 + 2 registers, 4 accumulators) either way.
template <bool Binary>
__global__ void probe_mma(unsigned seed, unsigned *out) {
    unsigned a[4], b[2];
    int d[kChains][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) a[r] = seed * (threadIdx.x + 3 * r + 1);
    b[0] = seed ^ threadIdx.x, b[1] = seed + threadIdx.x;
#pragma unroll
    for (int c = 0; c < kChains; ++c) d[c][0] = d[c][1] = d[c][2] = d[c][3] = c;
    for (int it = 0; it < kIters; ++it) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) {
            if constexpr (Binary)
                asm volatile(
                    "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                    "{%8,%9}, {%0,%1,%2,%3};\n"
                    : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
            else
                asm volatile(
                    "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                    "{%0,%1,%2,%3};\n"
                    : "+r"(d[c][0]), "+r"(d[c][1]), "+r"(d[c][2]), "+r"(d[c][3])
                    : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
    int s = 0;
#pragma unroll
    for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
    if (s == 0x12345678) out[0] = unsigned(s);
}

template <class K>
double time_ms(K kernel, int grid, int block, unsigned *out) {
    cudaEvent_t e0, e1;
    CU(cudaEventCreate(&e0));
    CU(cudaEventCreate(&e1));
    kernel<<<grid, block>>>(7u, out);  // warm-up
    CU(cudaGetLastError());
    float best = 1e30f;
    for (int r = 0; r < 5; ++r) {
        CU(cudaEventRecord(e0));
        kernel<<<grid, block>>>(7u + r, out);
        CU(cudaEventRecord(e1));
        CU(cudaEventSynchronize(e1));
        float ms = 0;
        CU(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    CU(cudaEventDestroy(e0));
    CU(cudaEventDestroy(e1));
    return best;
}

int main() {
    cudaDeviceProp p{};
    CU(cudaGetDeviceProperties(&p, 0));
    int clock_khz = 0;
    CU(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const double sms = p.multiProcessorCount, ghz = clock_khz * 1e-6;
    std::printf("%s: %d SMs, max SM clock %.3f GHz (rates below per SM per clock at that clock)\n", p.name,
                p.multiProcessorCount, ghz);
    unsigned *out = nullptr;
    CU(cudaMalloc(&out, 4));
    const int block = 256, grid = p.multiProcessorCount * 8;  // 64 warps an SM
    const double warps = double(grid) * block / 32, steps = warps * kIters * kChains;

    const double t_popc = time_ms(probe_popc, grid, block, out);
    const double popc = steps * 32 / (t_popc * 1e-3);  // 32-bit popcounts a second
    std::printf("popc 32-bit         %9.3f ms  %10.1f G popc/s        %6.2f popc / SM / clock\n", t_popc, popc * 1e-9,
                popc / (sms * ghz * 1e9));

    const double t_b1 = time_ms(probe_mma<true>, grid, block, out);
    const double b1 = steps * (16.0 * 8 * 256) / (t_b1 * 1e-3);  // 1-bit AND-popc MACs a second
    std::printf("mma b1 and.popc     %9.3f ms  %10.1f T bit-MACs/s     %6.0f bit-MACs / SM / clock\n", t_b1,
                b1 * 1e-12, b1 / (sms * ghz * 1e9));

    const double t_s8 = time_ms(probe_mma<false>, grid, block, out);
    const double s8 = steps * (16.0 * 8 * 32) / (t_s8 * 1e-3);
    std::printf("mma s8 (mma.sync)   %9.3f ms  %10.1f T int8 MACs/s    %6.0f MACs / SM / clock\n", t_s8,
                s8 * 1e-12, s8 / (sms * ghz * 1e9));
    CU(cudaFree(out));
    return 0;
}
