#include "batched/execute.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "cuda/runtime.cuh"

namespace apairs::batched {
using namespace apairs::cuda;

namespace {

constexpr int kStreams = 3;
constexpr int64_t kDefaultStaging = int64_t(192) << 20;

// An operand the op neither reads nor writes (gemm's A and B with alpha = 0) is not staged.
bool used(const Operand &op) { return op.read || op.write; }

// Device bytes one element of `op` occupies when staged (its AoS stride, or its SoA
// entry grid).
// (An AoS stride is bounded only through (batch - 1) * stride: with one element it may be
// any size, and the element is its extent. Capped at 2^56 bytes, far past any staging
// budget, so that the operands' sum cannot overflow.)
int64_t staged_bytes_per_element(const Operand &op) {
    constexpr int64_t kCap = int64_t(1) << 56;
    if (!used(op)) return 0;
    const int64_t n = op.m.soa ? op.m.extent() : op.m.stride;
    return n > kCap / int64_t(op.elem) ? kCap : n * int64_t(op.elem);
}

// A written operand must be copied in first when its elements hold entries the op does
// not write (padding between ld and the extent): the copy back returns them as they were.
// (What lies between AoS elements is neither copied in nor back: it may be another
// operand's, as with {A, B} stored per element.)
bool has_padding(const Matrix &m) { return m.extent() != m.rows * m.cols; }

// The internal streams of a chunked run, joined to the caller's stream at the start and
// drained on every exit (an exception included): no copy touches the caller's arrays
// once execute has returned.
class Streams {
public:
    Streams(cudaStream_t caller) {
        s_.reserve(kStreams);  // (before any CUDA object: push_back below cannot throw and leak them)
        cudaEvent_t start = nullptr;
        check(cudaEventCreateWithFlags(&start, cudaEventDisableTiming), "cudaEventCreate");
        const cudaError_t rec = cudaEventRecord(start, caller);
        cudaError_t wait = cudaSuccess;  // (a stream that cannot wait would race the caller's work)
        for (int i = 0; i < kStreams && rec == cudaSuccess && wait == cudaSuccess; ++i) {
            cudaStream_t s = nullptr;
            if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) break;
            s_.push_back(s);
            wait = cudaStreamWaitEvent(s, start, 0);
        }
        cudaEventDestroy(start);
        if (rec != cudaSuccess || wait != cudaSuccess) drain();
        check(rec, "cudaEventRecord");
        check(wait, "cudaStreamWaitEvent (staging streams)");
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

// Waits for a stream on the way out of an exception: no copy from or to the caller's
// arrays may still run once the error is reported.
struct Drain {
    cudaStream_t s;
    bool armed = true;
    ~Drain() {
        if (armed && cudaStreamSynchronize(s) != cudaSuccess) cudaGetLastError();
    }
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

void execute_cuda(int device, void *stream_ptr, int64_t chunk, int64_t batch, const Operand *ops, int count,
                  const void *const *arrays, const ChunkLaunch &launch) {
    DeviceScope scope(device);
    cudaStream_t caller = static_cast<cudaStream_t>(stream_ptr);
    // (fixed arrays, count <= kMaxOperands: no vectors allocated a call)
    std::array<bool, kMaxOperands> host{};
    bool any_host = false;
    for (int k = 0; k < count; ++k) {
        int dev = -1;
        const Memory kind = classify(arrays[k], &dev);
        if (kind == Memory::Device && dev != device)
            fail(APAIRS_ERROR_INVALID_POINTER, "{} is memory of device {}, but the plan is on device {}",
                 ops[k].name, dev, device);
        host[size_t(k)] = kind == Memory::Host && used(ops[k]);
        any_host = any_host || host[size_t(k)];
    }
    std::array<Matrix, kMaxOperands> mats{};
    std::array<void *, kMaxOperands> ptrs{};
    if (!any_host) {
        for (int k = 0; k < count; ++k) mats[size_t(k)] = ops[k].m, ptrs[size_t(k)] = const_cast<void *>(arrays[k]);
        launch(batch, mats.data(), ptrs.data(), caller);
        return;
    }

    const int64_t chunks = (batch + chunk - 1) / chunk;
    std::unique_ptr<Streams> streams;
    if (chunks > 1) streams = std::make_unique<Streams>(caller);
    auto stream_of = [&](int64_t i) { return streams ? (*streams)[i] : caller; };

    // Where a host operand's chunk of c elements from e0 lies, as rows of `width` bytes,
    // `upitch` apart in the caller's array and `dpitch` apart in the device buffer. SoA:
    // each entry's run of c elements (packed on the device: batch stride c). AoS: the
    // device keeps the element stride (the kernels' layout); copied in as one run of the
    // chunk's span (what lies between elements read along, never used), copied back
    // (`out`) element by element, each its extent, so that nothing between elements is
    // written (it may be another operand's, as with {A, B} stored per element).
    // `bytes`: the device buffer's size.
    struct Box {
        char *user;
        int64_t rows, width, upitch, dpitch, bytes;
    };
    auto box = [&](int k, int64_t e0, int64_t c, bool out) {
        const Matrix &m = ops[k].m;
        const int64_t es = int64_t(ops[k].elem);
        char *base = static_cast<char *>(const_cast<void *>(arrays[k]));
        if (m.soa) return Box{base + e0 * es, m.extent(), c * es, m.stride * es, c * es, m.extent() * c * es};
        char *const user = base + e0 * m.stride * es;
        const int64_t bytes = ((c - 1) * m.stride + m.extent()) * es;
        if (!out || m.stride == m.extent() || c == 1) return Box{user, 1, bytes, bytes, bytes, bytes};
        return Box{user, c, m.extent() * es, m.stride * es, m.stride * es, bytes};
    };
    // Every allocation first (one set of device buffers per stream in flight, each for the
    // largest chunk; the copies allocate nothing): one that fails does so before any copy
    // touches the caller's arrays, so a failed call writes nothing.
    const int sets = int(std::min<int64_t>(chunks, 3));
    std::vector<std::unique_ptr<StreamBuffer>> buffers(size_t(sets) * size_t(count));
    for (int s = 0; s < sets; ++s)
        for (int k = 0; k < count; ++k)
            if (host[size_t(k)]) {
                buffers[size_t(s * count + k)] =
                    std::make_unique<StreamBuffer>(size_t(box(k, 0, chunk, false).bytes), stream_of(s));
            }

    // Chunk i on stream i % 3: copies in, the op's kernels, then the copies out of chunk
    // i - 1. With pageable host memory a copy returns only once the host side is done, so
    // queuing chunk i before chunk i - 1's copies out keeps a kernel running during
    // every copy. Buffer set i % 3 is reused by chunk i + 3 on the same stream, after.
    auto copy_out = [&](int64_t i) {
        const int64_t e0 = i * chunk, c = std::min(chunk, batch - e0);
        for (int k = 0; k < count; ++k)
            if (host[size_t(k)] && ops[k].write) {
                const Box b = box(k, e0, c, true);
                copy_rows(b.user, b.upitch, buffers[size_t(int(i % sets) * count + k)]->get(), b.dpitch, b.width,
                          b.rows, cudaMemcpyDeviceToHost, stream_of(i), ops[k].name);
            }
    };
    Drain drain{caller};  // the chunked run's own streams drain themselves
    for (int64_t i = 0; i < chunks; ++i) {
        const int64_t e0 = i * chunk, c = std::min(chunk, batch - e0);
        for (int k = 0; k < count; ++k) {
            const Operand &op = ops[k];
            Matrix sub = op.m;
            if (!host[size_t(k)]) {  // in place: the chunk's first element
                char *base = static_cast<char *>(const_cast<void *>(arrays[k]));
                ptrs[size_t(k)] = base + (sub.soa ? e0 : e0 * sub.stride) * int64_t(op.elem);
                mats[size_t(k)] = sub;
                continue;
            }
            void *dev = buffers[size_t(int(i % sets) * count + k)]->get();
            if (sub.soa) sub.stride = c;
            mats[size_t(k)] = sub, ptrs[size_t(k)] = dev;
            // A written operand is copied in too when the op reads it or leaves entries
            // unwritten (padding): the copy back then returns them as they were.
            if (op.read || has_padding(op.m)) {
                const Box b = box(k, e0, c, false);
                copy_rows(dev, b.dpitch, b.user, b.upitch, b.width, b.rows, cudaMemcpyHostToDevice, stream_of(i),
                          ops[k].name);
            }
        }
        launch(c, mats.data(), ptrs.data(), stream_of(i));
        if (i >= 1) copy_out(i - 1);
    }
    copy_out(chunks - 1);
    drain.armed = false;
    if (streams)
        streams->synchronize();
    else
        check(cudaStreamSynchronize(caller), "cudaStreamSynchronize");
}

}  // namespace apairs::batched
