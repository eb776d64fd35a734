#include "cuda/blas.hpp"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <fmt/format.h>

#include "cuda/runtime.cuh"

#define APAIRS_STR2(x) #x
#define APAIRS_STR(x) APAIRS_STR2(x)

namespace apairs::cuda {
namespace {

// The entry points used, resolved once from the first libcublas that loads.
struct Api {
    std::string name, error;
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasDestroy_v2) destroy = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSetMathMode) set_math_mode = nullptr;
    decltype(&cublasGetVersion_v2) version = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    decltype(&cublasDgemm_v2) dgemm = nullptr;
    decltype(&cublasDgemmStridedBatched) dgemm_batched = nullptr;
};

template <class F>
bool resolve(void *lib, const char *symbol, F *f, std::string *error) {
    *f = reinterpret_cast<F>(dlsym(lib, symbol));
    if (!*f) *error = fmt::format("libcublas lacks {}", symbol);
    return *f != nullptr;
}

Api load() {
    Api a;
    // The library is kept loaded for the life of the process (never dlclosed).
    void *lib = nullptr;
    for (const char *name : {"libcublas.so." APAIRS_STR(CUBLAS_VER_MAJOR), "libcublas.so"}) {
        if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
            a.name = name;
            break;
        }
    }
    if (!lib) {
        const char *e = dlerror();
        a.error = fmt::format("cannot load libcublas.so.{}: {}", CUBLAS_VER_MAJOR, e ? e : "not found");
        return a;
    }
    int major = 0;
    if (auto get = reinterpret_cast<decltype(&cublasGetProperty)>(dlsym(lib, "cublasGetProperty"));
        !get || get(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS || major != CUBLAS_VER_MAJOR) {
        a.error = fmt::format("{} is cuBLAS {}, not the {} libapairs was built with", a.name, major, CUBLAS_VER_MAJOR);
        return a;
    }
    // The major version the headers describe: another major may change these calls.
    if (!(resolve(lib, "cublasCreate_v2", &a.create, &a.error) &&
          resolve(lib, "cublasDestroy_v2", &a.destroy, &a.error) &&
          resolve(lib, "cublasSetStream_v2", &a.set_stream, &a.error) &&
          resolve(lib, "cublasSetMathMode", &a.set_math_mode, &a.error) &&
          resolve(lib, "cublasGetVersion_v2", &a.version, &a.error) &&
          resolve(lib, "cublasSgemm_v2", &a.sgemm, &a.error) &&
          resolve(lib, "cublasDgemm_v2", &a.dgemm, &a.error) &&
          resolve(lib, "cublasDgemmStridedBatched", &a.dgemm_batched, &a.error)))
        a.create = nullptr;
    return a;
}

const Api &api() {
    static const Api a = load();  // thread-safe initialisation
    return a;
}

void check_blas(cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    if (s == CUBLAS_STATUS_ALLOC_FAILED)
        throw Error(APAIRS_ERROR_OUT_OF_MEMORY, fmt::format("{}: cuBLAS could not allocate", what));
    throw Error(APAIRS_ERROR_DEVICE, fmt::format("{} failed: cuBLAS status {}", what, int(s)));
}

}  // namespace

std::shared_ptr<const Gemm> Gemm::create(int device, std::string *why, bool tf32) {
    const Api &a = api();
    if (!a.create) {
        *why = a.error;
        return nullptr;
    }
    DeviceScope scope(device);
    std::shared_ptr<Gemm> g(new Gemm);  // (first: its destructor releases the handle whatever throws after)
    g->device_ = device;
    cublasHandle_t h = nullptr;
    if (const cublasStatus_t s = a.create(&h); s != CUBLAS_STATUS_SUCCESS) {
        *why = fmt::format("cublasCreate failed (status {})", int(s));
        return nullptr;
    }
    g->handle_ = h;
    int v = 0;
    a.version(h, &v);
    g->library_ = fmt::format("cuBLAS {}.{}.{} ({})", v / 10000, v / 100 % 100, v % 100, a.name);
    g->tf32_ = tf32;
    if (a.set_math_mode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH) != CUBLAS_STATUS_SUCCESS) {
        *why = "cublasSetMathMode failed";
        return nullptr;
    }
    return g;
}

Gemm::~Gemm() {
    if (!handle_) return;
    try {  // (DeviceScope throws where the device cannot be made current: a destructor must not)
        DeviceScope scope(device_);
        api().destroy(static_cast<cublasHandle_t>(handle_));
    } catch (...) {  // the device or the runtime is gone: nothing left to release
    }
}

bool Gemm::fits(int64_t n1, int64_t n2, int64_t k, int64_t lda, int64_t ldb, int64_t ldd) {
    for (int64_t v : {n1, n2, k, lda, ldb, ldd})
        if (v > INT_MAX) return false;
    return true;
}

void Gemm::abt(void *stream, int elem, int64_t n1, int64_t n2, int64_t k, const void *A, int64_t lda,
               const void *B, int64_t ldb, void *D, int64_t ldd) const {
    // Row-major D = A B^T is column-major D^T (n2 x n1) = B A^T, where the row-major
    // B and A are the column-major B^T (k x n2) and A^T (k x n1).
    const Api &a = api();
    const cublasHandle_t h = static_cast<cublasHandle_t>(handle_);
    std::lock_guard<std::mutex> lock(mutex_);
    check_blas(a.set_stream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
    if (elem == 4) {
        const float one = 1, zero = 0;
        check_blas(a.sgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n2), int(n1), int(k), &one, static_cast<const float *>(B),
                           int(ldb), static_cast<const float *>(A), int(lda), &zero, static_cast<float *>(D), int(ldd)),
                   "cublasSgemm");
    } else {
        const double one = 1, zero = 0;
        check_blas(a.dgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, int(n2), int(n1), int(k), &one,
                           static_cast<const double *>(B), int(ldb), static_cast<const double *>(A), int(lda), &zero,
                           static_cast<double *>(D), int(ldd)),
                   "cublasDgemm");
    }
}

void Gemm::batched(void *stream, bool col_major, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                   const double *A, int64_t lda, int64_t sa, const double *B, int64_t ldb, int64_t sb, double beta,
                   double *C, int64_t ldc, int64_t sc, int64_t batch) const {
    // Row-major C = op(A) op(B) is column-major C^T (n x m) = op(B)^T op(A)^T, where the
    // row-major A and B are the column-major A^T and B^T: the same ops on B, then A.
    const Api &a = api();
    const cublasHandle_t h = static_cast<cublasHandle_t>(handle_);
    const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    std::lock_guard<std::mutex> lock(mutex_);
    check_blas(a.set_stream(h, static_cast<cudaStream_t>(stream)), "cublasSetStream");
    for (int64_t e0 = 0; e0 < batch; e0 += INT_MAX) {  // (cuBLAS counts elements in an int)
        const int count = int(std::min<int64_t>(INT_MAX, batch - e0));
        const double *const pa = A + e0 * sa, *const pb = B + e0 * sb;
        double *const pc = C + e0 * sc;
        check_blas(col_major ? a.dgemm_batched(h, oa, ob, int(m), int(n), int(k), &alpha, pa, int(lda), sa, pb,
                                               int(ldb), sb, &beta, pc, int(ldc), sc, count)
                             : a.dgemm_batched(h, ob, oa, int(n), int(m), int(k), &alpha, pb, int(ldb), sb, pa,
                                               int(lda), sa, &beta, pc, int(ldc), sc, count),
                   "cublasDgemmStridedBatched");
    }
}

}  // namespace apairs::cuda
