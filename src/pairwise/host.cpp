// Host engine: OpenMP over output tiles, cache-blocked, vectorised across columns.
//
// Each thread takes a TI x TJ tile of D. For every slice of DS dimensions it copies
// the tile's B rows transposed into a small buffer, so that the innermost loop runs
// over TJ consecutive columns and vectorises without reordering any sum: every D[i][j]
// is folded over k in order within a slice and slices are merged in order, the same
// association the CUDA engine uses.
#include "pairwise/host.hpp"

#include <algorithm>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "pairwise/output.hpp"

namespace apairs::pairwise {
namespace {

constexpr int64_t TI = kTileRows, TJ = kTileCols, DS = kSliceDims;

template <class M, class O>
void run(const M m, const Problem &pb, const typename M::in_t *A, const typename M::in_t *B,
         const O out, int threads) {
    using in_t = typename M::in_t;
    using acc_t = typename M::acc_t;
    const int64_t tiles_j = (pb.n2 + TJ - 1) / TJ;
    const int64_t ntiles = (pb.n1 + TI - 1) / TI * tiles_j;

    // Every thread's scratch is allocated here, before the parallel region: nothing
    // inside it can throw (an exception may not leave an OpenMP region).
    struct Scratch {
        std::vector<acc_t> tot = std::vector<acc_t>(TI * TJ), part = std::vector<acc_t>(TJ);
        std::vector<in_t> bt = std::vector<in_t>(DS * TJ);
        typename O::Shared sh{};
    };
    std::vector<Scratch> scratch(static_cast<size_t>(threads));

#pragma omp parallel num_threads(threads) if (threads != 1)
    {
#if defined(_OPENMP)
        Scratch &w = scratch[static_cast<size_t>(omp_get_thread_num())];
#else
        Scratch &w = scratch[0];
#endif
        std::vector<acc_t> &tot = w.tot;
        std::vector<in_t> &bt = w.bt;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < ntiles; ++t) {
            const int64_t i0 = t / tiles_j * TI, j0 = t % tiles_j * TJ;
            const int64_t ni = std::min(TI, pb.n1 - i0), nj = std::min(TJ, pb.n2 - j0);
            std::fill(tot.begin(), tot.end(), m.init());
            for (int64_t k0 = 0; k0 < pb.d; k0 += DS) {
                const int64_t nk = std::min(DS, pb.d - k0);
                for (int64_t jj = 0; jj < nj; ++jj)
                    for (int64_t kk = 0; kk < nk; ++kk)
                        bt[kk * TJ + jj] = B[(j0 + jj) * pb.ldb + k0 + kk];
                for (int64_t ii = 0; ii < ni; ++ii) {
                    const in_t *a = A + (i0 + ii) * pb.lda + k0;
                    acc_t *p = w.part.data();
                    for (int64_t jj = 0; jj < nj; ++jj) p[jj] = m.init();
                    for (int64_t kk = 0; kk < nk; ++kk) {
                        const in_t av = a[kk];
                        const in_t *b = &bt[kk * TJ];
#pragma omp simd
                        for (int64_t jj = 0; jj < nj; ++jj) m.step(p[jj], av, b[jj]);
                    }
                    acc_t *row = &tot[ii * TJ];
                    for (int64_t jj = 0; jj < nj; ++jj) m.merge(row[jj], p[jj]);
                }
            }
            out.begin(w.sh, 0, 1);
            for (int64_t ii = 0; ii < ni; ++ii)
                for (int64_t jj = 0; jj < nj; ++jj)
                    out.emit(w.sh, i0 + ii, j0 + jj, m.finish(tot[ii * TJ + jj]));
            out.end(w.sh, 0, 1);
        }
    }
}

}  // namespace

void run_host(const Problem &pb, const void *A, const void *B, void *D, int threads) {
    dispatch(pb, [&](auto m) {
        using M = decltype(m);
        using in_t = typename M::in_t;
        using out_t = typename M::out_t;
        run(m, pb, static_cast<const in_t *>(A), static_cast<const in_t *>(B),
            output::FullMatrix<out_t>{static_cast<out_t *>(D), pb.ldd}, threads);
    });
}

}  // namespace apairs::pairwise
