#include "batched/execute.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "cuda/runtime.cuh"
#include "cuda/staging.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

constexpr int kStreams = 3;
constexpr int64_t kDefaultStaging = int64_t(192) << 20;

// Device bytes one element of `op` occupies when staged (its AoS stride, or its SoA
// entry grid).
int64_t staged_bytes_per_element(const Operand &op) {
    return (op.m.soa ? op.m.extent() : op.m.stride) * int64_t(op.elem);
}

// A written operand must be copied in first when it has entries the op does not write
// (padding inside an element, or between AoS elements): the copy back returns them as
// they were.
bool has_gaps(const Matrix &m) {
    const bool interior = m.extent() != m.rows * m.cols;
    return interior || (!m.soa && m.stride > m.extent());
}

// The internal streams of a chunked run, joined to the caller's stream at the start and
// drained on every exit (an exception included): no copy touches the caller's arrays
// once execute has returned.
class Streams {
public:
    Streams(cudaStream_t caller) {
        cudaEvent_t start = nullptr;
        check(cudaEventCreateWithFlags(&start, cudaEventDisableTiming), "cudaEventCreate");
        const cudaError_t rec = cudaEventRecord(start, caller);
        for (int i = 0; i < kStreams && rec == cudaSuccess; ++i) {
            cudaStream_t s = nullptr;
            if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) break;
            s_.push_back(s);
            cudaStreamWaitEvent(s, start, 0);
        }
        cudaEventDestroy(start);
        check(rec, "cudaEventRecord");
        if (int(s_.size()) < kStreams) {
            drain();
            check(cudaErrorMemoryAllocation, "cudaStreamCreate (staging streams)");
        }
    }
    ~Streams() { drain(); }
    cudaStream_t operator[](int64_t i) const { return s_[size_t(i % kStreams)]; }
    void synchronize() {
        for (cudaStream_t s : s_) check(cudaStreamSynchronize(s), "cudaStreamSynchronize (staging streams)");
    }

private:
    void drain() {
        for (cudaStream_t s : s_) {
            if (cudaStreamSynchronize(s) != cudaSuccess) cudaGetLastError();
            cudaStreamDestroy(s);
        }
        s_.clear();
    }
    std::vector<cudaStream_t> s_;
};

}  // namespace

int64_t staging_chunk(int device, int64_t staging_bytes, int64_t batch, const Operand *ops, int count) {
    int64_t per = 0;
    for (int k = 0; k < count; ++k) per += staged_bytes_per_element(ops[k]);
    int64_t budget = staging_bytes;
    if (budget <= 0) {
        DeviceScope scope(device);
        size_t free = 0, total = 0;
        budget = kDefaultStaging;
        if (cudaMemGetInfo(&free, &total) == cudaSuccess)
            budget = std::min<int64_t>(budget, int64_t(free / 4));
        else
            cudaGetLastError();
    }
    // kStreams chunks in flight; chunks of whole 32-element runs (SoA rows stay aligned)
    // where the budget allows more than 32 elements.
    int64_t chunk = std::max<int64_t>(1, budget / kStreams / std::max<int64_t>(1, per));
    if (chunk > kSoaAlign) chunk = chunk / kSoaAlign * kSoaAlign;
    return std::min(chunk, batch);
}

void execute_cuda(int device, void *stream_ptr, int64_t staging_bytes, int64_t batch, const Operand *ops, int count,
                  const void *const *arrays, const ChunkLaunch &launch) {
    DeviceScope scope(device);
    cudaStream_t caller = static_cast<cudaStream_t>(stream_ptr);
    std::vector<Operand> staged;  // the host operands (geometry for the chunk size)
    std::vector<bool> host(static_cast<size_t>(count));
    for (int k = 0; k < count; ++k) {
        int dev = -1;
        const Memory kind = classify(arrays[k], &dev);
        if (kind == Memory::Device && dev != device)
            fail(APAIRS_ERROR_INVALID_POINTER, "{} is memory of device {}, but the plan is on device {}",
                 ops[k].name, dev, device);
        host[size_t(k)] = kind == Memory::Host;
        if (host[size_t(k)]) staged.push_back(ops[k]);
    }
    std::vector<Matrix> mats(static_cast<size_t>(count));
    std::vector<void *> ptrs(static_cast<size_t>(count));
    if (staged.empty()) {
        for (int k = 0; k < count; ++k) mats[size_t(k)] = ops[k].m, ptrs[size_t(k)] = const_cast<void *>(arrays[k]);
        launch(batch, mats.data(), ptrs.data(), caller);
        return;
    }

    const int64_t chunk = staging_chunk(device, staging_bytes, batch, staged.data(), int(staged.size()));
    const int64_t chunks = (batch + chunk - 1) / chunk;
    std::unique_ptr<Streams> streams;
    if (chunks > 1) streams = std::make_unique<Streams>(caller);
    auto stream_of = [&](int64_t i) { return streams ? (*streams)[i] : caller; };

    // Chunk i: stage in, launch; then the copies out of chunk i - 1. With pageable host
    // memory a copy returns only once the host side is done, so queuing chunk i before
    // chunk i - 1's copies out keeps a kernel running during every copy.
    struct Slots {
        std::unique_ptr<Staging> st;
        std::vector<int> slot;
    };
    std::vector<Slots> ring(size_t(std::min<int64_t>(chunks, kStreams)));
    for (int64_t i = 0; i <= chunks; ++i) {
        if (i < chunks) {
            Slots &r = ring[size_t(i % int64_t(ring.size()))];
            r.st = std::make_unique<Staging>(device, stream_of(i));
            r.slot.assign(size_t(count), -1);
            const int64_t e0 = i * chunk, c = std::min(chunk, batch - e0);
            for (int k = 0; k < count; ++k) {
                const Operand &op = ops[k];
                const Matrix &m = op.m;
                const int64_t es = int64_t(op.elem);
                Matrix sub = m;
                char *base = static_cast<char *>(const_cast<void *>(arrays[k]));
                if (!host[size_t(k)]) {  // in place: the chunk's first element
                    ptrs[size_t(k)] = base + (m.soa ? e0 : e0 * m.stride) * es;
                    mats[size_t(k)] = sub;
                    continue;
                }
                // AoS: one run of the chunk's span; SoA: each entry's run of c elements,
                // packed (the chunk's batch stride is c).
                const int64_t rows = m.soa ? m.extent() : 1;
                const int64_t width = (m.soa ? c : (c - 1) * m.stride + m.extent()) * es;
                const int64_t pitch = m.soa ? m.stride * es : width;
                char *p = base + (m.soa ? e0 : e0 * m.stride) * es;
                if (m.soa) sub.stride = c;
                mats[size_t(k)] = sub;
                r.slot[size_t(k)] = op.write ? r.st->out(p, rows, width, pitch, op.name, op.read || has_gaps(m))
                                             : r.st->in(p, rows, width, pitch, op.name);
            }
            r.st->stage();
            for (int k = 0; k < count; ++k)
                if (r.slot[size_t(k)] >= 0) ptrs[size_t(k)] = r.st->view(r.slot[size_t(k)]).ptr;
            launch(c, mats.data(), ptrs.data(), stream_of(i));
        }
        if (i >= 1) ring[size_t((i - 1) % int64_t(ring.size()))].st->finish(/*wait=*/chunks == 1);
    }
    if (streams) streams->synchronize();
}

}  // namespace apairs::batched
