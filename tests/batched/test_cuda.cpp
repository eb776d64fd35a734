// Batched CUDA engine checks that need the runtime API (tagged [cuda]; run by suite gpu):
// the transpose planned for 16-byte pieces (4-byte values, entries and strides multiples
// of 4) given device arrays off the 16-byte grid takes its scalar kernel and still moves
// every value bit for bit, writing nothing else.
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

TEST_CASE("batched CUDA: a transpose planned for 16-byte pieces moves arrays off the 16-byte grid",
          "[cuda][batched][transpose]") {
    std::mt19937_64 rng(std::random_device{}());
    apairs_context_t ctx = nullptr;
    api_ok(apairs_context_create(&ctx, APAIRS_BACKEND_CUDA, 0));
    for (int64_t entries : {4, 16})
        for (int64_t batch : {3, 4099})
            for (int shift : {0, 1, 2}) {  // in, out, or both one value off the grid
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
                float *const pin = din + (shift != 1), *const pout = dout + (shift != 0);
                cuda_ok(cudaMemcpy(pin, in.data(), in_n * sizeof(float), cudaMemcpyHostToDevice));
                cuda_ok(cudaMemcpy(pout, out.data(), out_n * sizeof(float), cudaMemcpyHostToDevice));
                apairs_plan_t plan = nullptr;
                api_ok(apairs_plan_create_transpose_batched(&plan, ctx, APAIRS_DTYPE_F32, APAIRS_LAYOUT_SOA, entries,
                                                            si, so, batch));
                const apairs_status_t st = apairs_plan_execute_transpose(plan, pin, pout);
                apairs_plan_destroy(plan);
                api_ok(st);
                cuda_ok(cudaMemcpy(out.data(), pout, out_n * sizeof(float), cudaMemcpyDeviceToHost));
                cudaFree(din);
                cudaFree(dout);
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
