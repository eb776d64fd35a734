// cuBLAS for the families that want a vendor GEMM where it is the fastest correct path
// (today: DOT, D = A B^T; batched double gemm of the larger elements). libcublas is
// loaded at run time (dlopen, the first time a plan asks), never linked, so libapairs
// loads and runs on machines without it; a plan that cannot get it falls back to its
// own kernel and says so in its description.
// Plain C++, no CUDA types. Only built when the `cuda` option is on.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace apairs::cuda {

class Gemm {
public:
    // A handle on `device`, in cuBLAS's default math mode (float GEMM in float
    // arithmetic), or with `tf32` in its TF32 tensor-op mode (float GEMM on the TF32
    // tensor cores; double unaffected); nullptr with the reason in *why when cuBLAS
    // cannot be loaded or initialised there.
    static std::shared_ptr<const Gemm> create(int device, std::string *why, bool tf32 = false);
    ~Gemm();
    Gemm(const Gemm &) = delete;
    Gemm &operator=(const Gemm &) = delete;

    // Whether the sizes fit cuBLAS's 32-bit arguments.
    static bool fits(int64_t n1, int64_t n2, int64_t k, int64_t lda, int64_t ldb, int64_t ldd);

    // Queues D = A B^T on `stream` for row-major A (n1 x k, lda), B (n2 x k, ldb), D
    // (n1 x n2, ldd) of float (elem 4) or double (elem 8) in device memory of the
    // handle's device. Thread-safe: the stream is set and the call queued under a lock.
    void abt(void *stream, int elem, int64_t n1, int64_t n2, int64_t k, const void *A, int64_t lda,
             const void *B, int64_t ldb, void *D, int64_t ldd) const;

    // Queues C_e = alpha op(A_e) op(B_e) + beta C_e for e < batch, double, elements
    // sa, sb, sc entries apart, row- or column-major (ld as stored; op(A) m x k, op(B) k
    // x n); cuBLAS's strided batched DGEMM (beta = 0: C is not read). Thread-safe as abt.
    void batched(void *stream, bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                 const double *A, int64_t lda, int64_t sa, const double *B, int64_t ldb, int64_t sb, double beta,
                 double *C, int64_t ldc, int64_t sc, int64_t batch) const;

    const std::string &library() const { return library_; }  // e.g. "cuBLAS 13.0.2 (libcublas.so.13)"
    bool tf32() const { return tf32_; }

private:
    Gemm() = default;
    void *handle_ = nullptr;
    int device_ = 0;
    bool tf32_ = false;
    std::string library_;
    mutable std::mutex mutex_;
};

}  // namespace apairs::cuda
