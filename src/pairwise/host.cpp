// Host engine: OpenMP over output tiles, cache-blocked, register-blocked, vectorised
// across columns.
//
// Each thread takes a TI x TJ tile of D. For every slice of DS dimensions it copies
// the tile's B rows transposed into a small buffer, then folds RI x RJ micro-tiles held
// in registers, the innermost loop over RJ consecutive columns (vectorised) without
// reordering any sum: every D[i][j] is folded over k in order within a slice, slices
// are added in order into group sums and group sums in order into the total, the same
// association the CUDA engine uses (problem.hpp). On x86-64 CPUs with AVX2 and FMA the
// folding runs as a copy compiled for them (fold_slice_avx2), the same bits: no sum is
// contracted into an FMA (-ffp-contract=off, src/meson.build).
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

// The register tile: RI rows of A against RJ columns of the transposed B slice, each
// entry folded over the slice's nk dimensions in order into a fresh accumulator and then
// merged into the tile's group sums (the association the CUDA engine uses). Held in
// registers, the accumulators take one load of B per RI steps.
constexpr int64_t RI = 4, RJ = 8;
template <int64_t R, int64_t Cn, class M>
inline void block(const M &m, const typename M::in_t *a, int64_t lda, const typename M::in_t *bt, int64_t nk,
                  typename M::acc_t *sums) {
    typename M::acc_t acc[R][Cn];
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < Cn; ++c) acc[r][c] = m.init();
    for (int64_t kk = 0; kk < nk; ++kk) {
        const typename M::in_t *b = bt + kk * TJ;
#pragma GCC unroll 8
        for (int64_t r = 0; r < R; ++r) {
            const typename M::in_t av = a[r * lda + kk];
#pragma GCC unroll 16
            for (int64_t c = 0; c < Cn; ++c) m.step(acc[r][c], av, b[c]);
        }
    }
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < Cn; ++c) m.merge(sums[r * TJ + c], acc[r][c]);
}
// The same for a partial tile at the edges (ri <= RI rows, rj <= RJ columns).
template <class M>
void block_edge(const M &m, const typename M::in_t *a, int64_t lda, const typename M::in_t *bt, int64_t nk,
                typename M::acc_t *sums, int64_t ri, int64_t rj) {
    for (int64_t r = 0; r < ri; ++r)
        for (int64_t c = 0; c < rj; ++c) {
            typename M::acc_t acc = m.init();
            for (int64_t kk = 0; kk < nk; ++kk) m.step(acc, a[r * lda + kk], bt[kk * TJ + c]);
            m.merge(sums[r * TJ + c], acc);
        }
}

// One slice (nk <= DS dimensions from k0) of a tile: every RI x RJ block of its ni rows
// of A against the slice of its nj rows of B (bt, transposed), folded into mid.
template <class M>
inline void fold_slice(const M &m, const typename M::in_t *a0, int64_t lda, int64_t ni, int64_t nj, int64_t nk,
                       const typename M::in_t *bt, typename M::acc_t *mid) {
    for (int64_t ii = 0; ii < ni; ii += RI)
        for (int64_t jj = 0; jj < nj; jj += RJ) {
            const typename M::in_t *a = a0 + ii * lda;
            if (ii + RI <= ni && jj + RJ <= nj)
                block<RI, RJ>(m, a, lda, &bt[jj], nk, &mid[ii * TJ + jj]);
            else
                block_edge(m, a, lda, &bt[jj], nk, &mid[ii * TJ + jj], std::min(RI, ni - ii), std::min(RJ, nj - jj));
        }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define APAIRS_PAIRWISE_AVX2 1
// fold_slice compiled for AVX2 and FMA: every call inlined into it (flatten), so that the
// blocks' column loops are vectorised 4 doubles or 8 floats wide. Internal linkage (the
// anonymous namespace): no other file can end up calling this code.
template <class M>
__attribute__((target("avx2,fma"), flatten)) void fold_slice_avx2(const M &m, const typename M::in_t *a0, int64_t lda,
                                                                  int64_t ni, int64_t nj, int64_t nk,
                                                                  const typename M::in_t *bt, typename M::acc_t *mid) {
    fold_slice(m, a0, lda, ni, nj, nk, bt, mid);
}
#endif

bool use_avx2() {
#if APAIRS_PAIRWISE_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return false;
#endif
}

template <class M, class O>
void run(const M m, const Problem &pb, const typename M::in_t *A, const typename M::in_t *B,
         const O out, int threads, bool avx2) {
    using in_t = typename M::in_t;
    using acc_t = typename M::acc_t;
    const int64_t tiles_j = (pb.n2 + TJ - 1) / TJ;
    const int64_t ntiles = (pb.n1 + TI - 1) / TI * tiles_j;

    // Every thread's scratch is allocated here, before the parallel region: nothing
    // inside it can throw (an exception may not leave an OpenMP region).
    struct Scratch {
        std::vector<acc_t> tot = std::vector<acc_t>(TI * TJ), mid = std::vector<acc_t>(TI * TJ);
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
        std::vector<acc_t> &tot = w.tot, &mid = w.mid;
        std::vector<in_t> &bt = w.bt;
#pragma omp for schedule(dynamic)
        for (int64_t t = 0; t < ntiles; ++t) {
            const int64_t i0 = t / tiles_j * TI, j0 = t % tiles_j * TJ;
            const int64_t ni = std::min(TI, pb.n1 - i0), nj = std::min(TJ, pb.n2 - j0);
            std::fill(tot.begin(), tot.end(), m.init());
            std::fill(mid.begin(), mid.end(), m.init());
            for (int64_t k0 = 0, slice = 1; k0 < pb.d; k0 += DS, ++slice) {
                const int64_t nk = std::min(DS, pb.d - k0);
                for (int64_t jj = 0; jj < nj; ++jj)
                    for (int64_t kk = 0; kk < nk; ++kk)
                        bt[kk * TJ + jj] = B[(j0 + jj) * pb.ldb + k0 + kk];
                const in_t *a0 = A + i0 * pb.lda + k0;
#if APAIRS_PAIRWISE_AVX2
                if (avx2) fold_slice_avx2(m, a0, pb.lda, ni, nj, nk, bt.data(), mid.data());
                else
#endif
                    fold_slice(m, a0, pb.lda, ni, nj, nk, bt.data(), mid.data());
                if (slice % kSlicesPerGroup == 0 || k0 + DS >= pb.d)
                    for (int64_t q = 0; q < TI * TJ; ++q) {
                        m.merge(tot[q], mid[q]);
                        mid[q] = m.init();
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

const char *host_vector_isa() { return use_avx2() ? "AVX2" : "the build's baseline"; }

void run_host_isa(const Problem &pb, const void *A, const void *B, void *D, int threads, bool avx2) {
    avx2 = avx2 && use_avx2();
    dispatch(pb, [&](auto m) {
        using M = decltype(m);
        using in_t = typename M::in_t;
        using out_t = typename M::out_t;
        run(m, pb, static_cast<const in_t *>(A), static_cast<const in_t *>(B),
            output::FullMatrix<out_t>{static_cast<out_t *>(D), pb.ldd}, threads, avx2);
    });
}

void run_host(const Problem &pb, const void *A, const void *B, void *D, int threads) {
    run_host_isa(pb, A, B, D, threads, true);
}

}  // namespace apairs::pairwise
