// Batched CUDA engine checks that need the runtime API (tagged [cuda]; run by suite gpu):
// the transpose planned for 16-byte pieces (4-byte values, entries and strides multiples
// of 4) on device arrays on the 16-byte grid (its 16-byte kernel: partial pieces and
// tiles at the batch's end) and off it (the scalar kernel) moves every value bit for bit
// and writes nothing else.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "apairs.h"
#include "catch.hpp"
#include "cuda_checks.hpp"

using test::api_ok;
using test::cuda_ok;

TEST_CASE("batched CUDA: a transpose planned for 16-byte pieces moves aligned arrays and arrays off the grid",
          "[cuda][batched][transpose]") {
    const uint64_t seed = std::random_device{}();
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    apairs_context_t ctx = nullptr;
    api_ok(apairs_context_create(&ctx, APAIRS_BACKEND_CUDA, 0));
    for (int64_t entries : {4, 12, 16})
        for (int64_t batch : {3, 130, 4099})
            for (int shift : {0, 1, 2, 3}) {  // in, out, both or neither one value off the grid
                INFO("entries " << entries << ", batch " << batch << ", shift " << shift);
                const int64_t si = entries + 4, so = (batch + 3) / 4 * 4 + 8;
                const size_t in_n = size_t(batch * si), out_n = size_t(entries * so);
                std::vector<float> in(in_n);
                for (float &x : in) x = float(int64_t(rng() % 2000001) - 1000000) + 0.5f;
                const float poison = -7.25e30f;
                std::vector<float> out(out_n, poison);
                float *din = nullptr, *dout = nullptr;
                cuda_ok(cudaMalloc(&din, (in_n + 1) * sizeof(float)));
                cuda_ok(cudaMalloc(&dout, (out_n + 1) * sizeof(float)));
                float *const pin = din + (shift == 0 || shift == 2), *const pout = dout + (shift == 1 || shift == 2);
                cuda_ok(cudaMemcpy(pin, in.data(), in_n * sizeof(float), cudaMemcpyHostToDevice));
                cuda_ok(cudaMemcpy(pout, out.data(), out_n * sizeof(float), cudaMemcpyHostToDevice));
                apairs_plan_t plan = nullptr;
                api_ok(apairs_plan_create_transpose_batched(&plan, ctx, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, entries,
                                                            si, so, batch));
                char buf[4096];
                api_ok(apairs_plan_describe(plan, buf, sizeof buf, nullptr));
                CHECK(std::strstr(buf, "in 16-byte pieces") != nullptr);
                const apairs_status_t st = apairs_plan_execute_transpose(plan, pin, pout);
                apairs_plan_destroy(plan);
                api_ok(st);
                std::vector<float> back(in_n);
                cuda_ok(cudaMemcpy(out.data(), pout, out_n * sizeof(float), cudaMemcpyDeviceToHost));
                cuda_ok(cudaMemcpy(back.data(), pin, in_n * sizeof(float), cudaMemcpyDeviceToHost));
                cudaFree(din);
                cudaFree(dout);
                CHECK(std::memcmp(back.data(), in.data(), in_n * sizeof(float)) == 0);
                int64_t bad = 0, touched = 0;
                for (int64_t i = 0; i < entries; ++i)
                    for (int64_t q = 0; q < so; ++q) {
                        const float got = out[size_t(i * so + q)];
                        if (q < batch)
                            bad += std::memcmp(&got, &in[size_t(q * si + i)], sizeof got) != 0;
                        else
                            touched += std::memcmp(&got, &poison, sizeof got) != 0;
                    }
                CHECK(bad == 0);
                CHECK(touched == 0);
            }
    apairs_context_destroy(ctx);
}
