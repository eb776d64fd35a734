#include "cuda/staging.cuh"

namespace apairs::cuda {

int Staging::declare(void *p, int64_t rows, int64_t width, int64_t pitch, const char *name, bool output,
                     bool read_first) {
    int dev = -1;
    const Memory kind = classify(p, &dev);
    if (kind == Memory::Device && dev != device_)
        fail(APAIRS_ERROR_INVALID_POINTER, "{} is memory of device {}, but the plan is on device {}", name, dev,
             device_);
    arrays_.push_back(Array{name, p, rows, width, pitch, kind == Memory::Host, output, read_first, nullptr});
    return static_cast<int>(arrays_.size()) - 1;
}

int Staging::in(const void *p, int64_t rows, int64_t width, int64_t pitch, const char *name) {
    for (size_t k = 0; k < arrays_.size(); ++k) {
        const Array &a = arrays_[k];
        if (!a.output && a.user == p && a.rows == rows && a.width == width && a.pitch == pitch)
            return static_cast<int>(k);  // the same input again (B = A): staged once
    }
    return declare(const_cast<void *>(p), rows, width, pitch, name, false, true);
}

int Staging::out(void *p, int64_t rows, int64_t width, int64_t pitch, const char *name, bool read_first) {
    return declare(p, rows, width, pitch, name, true, read_first);
}

bool Staging::any_staged() const {
    for (const Array &a : arrays_)
        if (a.host) return true;
    return false;
}

void Staging::stage() {
    started_ = true;
    for (Array &a : arrays_) {
        if (!a.host) continue;
        a.buffer = std::make_unique<StreamBuffer>(size_t(a.rows) * size_t(a.width), stream_);
        if (a.read_first)
            copy_rows(a.buffer->get(), a.width, a.user, a.pitch, a.width, a.rows, cudaMemcpyHostToDevice,
                      stream_, a.name);
    }
}

Staging::View Staging::view(int slot) const {
    const Array &a = arrays_[size_t(slot)];
    return a.host ? View{a.buffer->get(), a.width} : View{a.user, a.pitch};
}

void Staging::finish(bool wait) {
    for (Array &a : arrays_)
        if (a.host && a.output)
            copy_rows(a.user, a.pitch, a.buffer->get(), a.width, a.width, a.rows, cudaMemcpyDeviceToHost, stream_,
                      a.name);
    const bool staged = any_staged();
    for (Array &a : arrays_) a.buffer.reset();
    finished_ = true;
    if (staged && wait) check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

Staging::~Staging() {
    for (Array &a : arrays_) a.buffer.reset();
    // Unfinished (an exception): copies from or to the caller's arrays may be queued.
    if (started_ && !finished_ && any_staged() && cudaStreamSynchronize(stream_) != cudaSuccess)
        cudaGetLastError();
}

}  // namespace apairs::cuda
