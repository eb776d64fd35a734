#include "genotype/plan.hpp"

#include <fmt/format.h>

#include <utility>

#include "genotype/host.hpp"
#include "genotype/planes.hpp"
#include "host/host.hpp"
#if APAIRS_HAVE_CUDA
#include "cuda/device.hpp"
#include "genotype/cuda.hpp"
#endif

namespace apairs::genotype {
namespace {

const char *missing_name(const Problem &pb) {
    if (!pb.plink()) return "excluded per pair";
    return pb.weighted() ? "PLINK 1.9 weighted scaling" : "PLINK flat-missing scaling";
}

class Plan final : public apairs_plan_s {
public:
    Plan(const apairs_context_s &context, Problem pb) : pb_(std::move(pb)) {
        ctx = context;
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA) {
            cuda_ = plan_cuda(pb_, ctx.device);
            description = fmt::format(
                "backend=cuda device={} ({}, {} SMs) kernel=genotype_mma<{},{}> block=256 threads tile={}x{} pairs "
                "(warp tiles 64x32), slices of 256 variants of 3 bit planes (g>=1, g==2, called; 2 in the allele form) in {} stages, {} KiB "
                "of shared memory, {} blocks/SM, {} registers/thread; why: every count is a sum of popc(P_a & Q_b) "
                "over planes derived from those of the two rows, which the binary tensor cores (mma m16n8k256 .b1, "
                "AND + popc) sum 256 variants an instruction, 38x the rate of POPC{}; missing calls {}{}",
                cuda_.device, cuda_.device_name, cuda_.sm_count, metric_name(pb_.metric), pb_.d, kCudaTileRows,
                kCudaTileRows, kCudaStages, cuda_.smem / 1024, cuda_.blocks_per_sm,
                cuda_.regs_per_thread, cuda_.allele_form ?
                    "; pairs of tiles of rows without a missing call take the allele count from the rows' sums and "
                    "popc(X_a & X_b) + popc(Y_a & Y_b): 2 MMAs a fragment where the other tiles take 4 (5 with "
                    "flat-missing's count of common calls)" : "",
                missing_name(pb_),
                pb_.weighted() ? ", the weight missing in both rows of each pair summed first by a sparse kernel "
                                 "over the missing calls"
                               : "");
            return;
        }
#endif
        const int threads = host::resolve_threads(ctx.host_threads);
        description = fmt::format(
            "backend=host threads={} kernel=genotype<{},{}> counting={} tile={}x{} pairs, slices of {} "
            "variants; why: rows become three bit planes (g>=1, g==2, called) so that each count is "
            "a popcount of 64 (256 with AVX2, 512 with AVX-512) variants at once, {} x {}-pair tiles per thread ({}), counts "
            "in registers for 2-3 x 4 pairs at a time, missing calls {}",
            threads, metric_name(pb_.metric), pb_.d, host_kernel_name(), kTileRows, kTileRows,
            kChunkVariants * kSliceChunks, kTileRows, kTileRows,
            ctx.host_threads > 0 ? "APAIRS_OPTION_HOST_THREADS" : "OpenMP's default", missing_name(pb_));
    }

    const char *op() const override { return "genotype"; }
    const char *execute_function() const override { return "apairs_plan_execute_genotype"; }

    void execute(const void *const *arrays) const override {
#if APAIRS_HAVE_CUDA
        if (ctx.backend == APAIRS_BACKEND_CUDA)
            return execute_cuda(pb_, cuda_, ctx.stream, arrays[0], arrays[1], const_cast<void *>(arrays[2]));
#endif
        static const char *const names[] = {"A", "B", "D"};
        host::require_host_memory(arrays, names, 3);
        run_host(pb_, arrays[0], arrays[1], const_cast<void *>(arrays[2]), host::resolve_threads(ctx.host_threads));
    }

private:
    Problem pb_;
#if APAIRS_HAVE_CUDA
    CudaConfig cuda_;
#endif
};

}  // namespace

std::unique_ptr<apairs_plan_s> make_plan(const apairs_context_s &ctx, Problem pb) {
    return std::make_unique<Plan>(ctx, std::move(pb));
}

void pack(const apairs_context_s &ctx, const uint8_t *g, int64_t n, int64_t d, int64_t ldg, int32_t missing_value,
          uint8_t *packed, int64_t ldp) {
    check_pack_args(g, n, d, ldg, missing_value, packed, ldp);
#if APAIRS_HAVE_CUDA
    const int gdev = cuda::device_of_pointer(g), pdev = cuda::device_of_pointer(packed);
    const bool dev_g = gdev >= 0, dev_p = pdev >= 0;
    if (ctx.backend == APAIRS_BACKEND_CUDA && (dev_g || dev_p)) {
        if (!dev_g || !dev_p)
            fail(APAIRS_ERROR_INVALID_POINTER, "{} is device memory but {} is not: pass both on the device or both on "
                 "the host", dev_g ? "genotypes" : "packed", dev_g ? "packed" : "genotypes");
        for (const auto &[name, dev] : {std::pair<const char *, int>{"genotypes", gdev}, {"packed", pdev}})
            if (dev != ctx.device)
                fail(APAIRS_ERROR_INVALID_POINTER, "{} is memory of device {}, but the context is on device {}", name,
                     dev, ctx.device);
        return pack_cuda(ctx.device, ctx.stream, g, n, d, ldg, missing_value, packed, ldp);
    }
#endif
    const void *arrays[] = {g, packed};
    static const char *const names[] = {"genotypes", "packed"};
    host::require_host_memory(arrays, names, 2);
    pack_host(g, n, d, ldg, missing_value, packed, ldp, host::resolve_threads(ctx.host_threads));
}

}  // namespace apairs::genotype
