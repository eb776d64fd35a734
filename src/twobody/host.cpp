// Two-body host engine: OpenMP over tiles of pairs; every thread reduces into its own
// privatised output, and the private outputs are added in thread order at the end
// (integers, so the result does not depend on the thread count or the schedule).
//
// Distances: a TI x TJ tile at a time, B's tile transposed slice by slice so that the
// innermost loop runs over TJ consecutive columns (vectorised), each distance folded by
// the metric functor over k in order within a slice of 32 dimensions and the slices
// merged in order: the association of the all-pairs engines, so a distance here is the
// value apairs_plan_execute would write into D.
//
// Pair counts with L2 in 1 to 3 dimensions (no box) take a cell list instead: points
// binned into cubic cells of side >= the largest radius (1 + 2^-10), each cell paired
// only with its 3^d neighbours; the margin makes the pruning conservative for the
// computed distances, so the counts are those of the brute-force pass.
#include "twobody/host.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#if defined(_OPENMP)
#include <omp.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "twobody/rules.hpp"

namespace apairs::twobody {
namespace {

constexpr int64_t TI = kTileRows, TJ = kTileCols, DS = pairwise::kSliceDims;

inline int thread_id() {
#if defined(_OPENMP)
    return omp_get_thread_num();
#else
    return 0;
#endif
}

// ---- Distance tiles -----------------------------------------------------------------

template <class M, bool Periodic>
struct Tiler {
    using in_t = typename M::in_t;
    using acc_t = typename M::acc_t;
    using out_t = typename M::out_t;
    M m;
    const in_t *A, *B;
    int64_t lda, ldb, d;
    in_t side[3] = {}, inv[3] = {};

    struct Scratch {
        std::vector<in_t> bt = std::vector<in_t>(size_t(DS * TJ));
        std::vector<acc_t> acc = std::vector<acc_t>(size_t(TJ));
        std::vector<acc_t> mid = std::vector<acc_t>(size_t(TI * TJ));
        std::vector<acc_t> tot = std::vector<acc_t>(size_t(TI * TJ));
        std::vector<out_t> dist = std::vector<out_t>(size_t(TI * TJ));
    };

    // One term of the fold: the minimum image first with a periodic box.
    void step(acc_t &acc, in_t a, in_t b, int64_t k) const {
        if constexpr (Periodic) m.step(acc, min_image(a - b, side[k], inv[k]), in_t(0));
        else m.step(acc, a, b);
    }

    // d = D <= 3: one pass per row, the accumulator in a register, finish(merge(init,
    // fold)) as the one-slice case of the general path.
    template <int D>
    void fused(Scratch &s, int64_t i0, int64_t ni, int64_t j0, int64_t nj) const {
        in_t *bt = s.bt.data();
        out_t *dist = s.dist.data();
        for (int64_t jj = 0; jj < nj; ++jj)
            for (int kk = 0; kk < D; ++kk) bt[kk * TJ + jj] = B[(j0 + jj) * ldb + kk];
        for (int64_t ii = 0; ii < ni; ++ii) {
            const in_t *a = A + (i0 + ii) * lda;
            in_t av[D];
            for (int kk = 0; kk < D; ++kk) av[kk] = a[kk];
#pragma omp simd
            for (int64_t jj = 0; jj < nj; ++jj) {
                acc_t x = m.init();
                for (int kk = 0; kk < D; ++kk) step(x, av[kk], bt[kk * TJ + jj], kk);
                acc_t t = m.init();
                m.merge(t, x);
                dist[ii * TJ + jj] = m.finish(t);
            }
        }
    }

    // dist[ii * TJ + jj] = F(A[i0 + ii], B[j0 + jj]) for ii < ni, jj < nj.
    void tile(Scratch &s, int64_t i0, int64_t ni, int64_t j0, int64_t nj) const {
        acc_t *acc = s.acc.data(), *mid = s.mid.data(), *tot = s.tot.data();
        in_t *bt = s.bt.data();
        out_t *dist = s.dist.data();
        switch (d) {  // most two-body problems: a fused pass with d known at compile time
        case 1: return fused<1>(s, i0, ni, j0, nj);
        case 2: return fused<2>(s, i0, ni, j0, nj);
        case 3: return fused<3>(s, i0, ni, j0, nj);
        }
        // The pairwise engines' three levels: each slice of DS dimensions into a fresh
        // sum, kSlicesPerGroup slices' sums into a group sum, the group sums into the total
        // (apairs.h: the distance is the one apairs_plan_execute writes).
        for (int64_t ii = 0; ii < ni; ++ii)
#pragma omp simd
            for (int64_t jj = 0; jj < nj; ++jj) tot[ii * TJ + jj] = mid[ii * TJ + jj] = m.init();
        for (int64_t k0 = 0, slice = 1; k0 < d; k0 += DS, ++slice) {
            const int64_t nk = std::min(DS, d - k0);
            for (int64_t jj = 0; jj < nj; ++jj)
                for (int64_t kk = 0; kk < nk; ++kk) bt[kk * TJ + jj] = B[(j0 + jj) * ldb + k0 + kk];
            for (int64_t ii = 0; ii < ni; ++ii) {
                const in_t *a = A + (i0 + ii) * lda + k0;
#pragma omp simd
                for (int64_t jj = 0; jj < nj; ++jj) acc[jj] = m.init();
                for (int64_t kk = 0; kk < nk; ++kk) {
                    const in_t av = a[kk];
                    const in_t *b = bt + kk * TJ;
#pragma omp simd
                    for (int64_t jj = 0; jj < nj; ++jj) step(acc[jj], av, b[jj], k0 + kk);
                }
                acc_t *g = mid + ii * TJ;
#pragma omp simd
                for (int64_t jj = 0; jj < nj; ++jj) m.merge(g[jj], acc[jj]);
            }
            if (slice % pairwise::kSlicesPerGroup == 0 || k0 + DS >= d)
                for (int64_t ii = 0; ii < ni; ++ii)
#pragma omp simd
                    for (int64_t jj = 0; jj < nj; ++jj) {
                        m.merge(tot[ii * TJ + jj], mid[ii * TJ + jj]);
                        mid[ii * TJ + jj] = m.init();
                    }
        }
        for (int64_t ii = 0; ii < ni; ++ii)
#pragma omp simd
            for (int64_t jj = 0; jj < nj; ++jj) dist[ii * TJ + jj] = m.finish(tot[ii * TJ + jj]);
    }
};

// ---- Counts and histograms: a slot per pair, privatised per thread --------------------

// Runs per_pair(thread, i, j0, jstart, nj, v) for every row i of every tile in parallel:
// v[jj] is the distance of (i, j0 + jj), and the pairs are jj in [jstart, nj) (AUTO: j > i).
template <class Tl, class F>
void for_each_pair(const Tl &tl, int64_t n1, int64_t n2, bool autopairs, int threads, F &&per_pair) {
    const int64_t tiles_j = (n2 + TJ - 1) / TJ, tiles_i = (n1 + TI - 1) / TI;
    std::vector<typename Tl::Scratch> scratch{size_t(threads)};
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads != 1)
    for (int64_t t = 0; t < tiles_i * tiles_j; ++t) {
        const int tid = thread_id();
        const int64_t i0 = t / tiles_j * TI, j0 = t % tiles_j * TJ;
        const int64_t ni = std::min(TI, n1 - i0), nj = std::min(TJ, n2 - j0);
        if (autopairs && j0 + nj - 1 <= i0) continue;  // no j > i in this tile
        typename Tl::Scratch &s = scratch[size_t(tid)];
        tl.tile(s, i0, ni, j0, nj);
        for (int64_t ii = 0; ii < ni; ++ii) {
            const int64_t i = i0 + ii;
            const int64_t jstart = autopairs ? std::max<int64_t>(0, i + 1 - j0) : 0;
            per_pair(tid, i, j0, jstart, nj, &s.dist[size_t(ii * TJ)]);
        }
    }
}

template <class Tl>
void counts_brute(const Tl &tl, const Problem &pb, const std::vector<typename Tl::out_t> &R, int threads,
                  std::vector<std::vector<int64_t>> &diff) {
    const int nr = int(R.size());
    const typename Tl::out_t *r = R.data();
    for_each_pair(tl, pb.pw.n1, pb.pw.n2, pb.autopairs, threads,
                  [&](int tid, int64_t, int64_t, int64_t js, int64_t nj, const typename Tl::out_t *v) {
                      int64_t *h = diff[size_t(tid)].data();
                      for (int64_t jj = js; jj < nj; ++jj) ++h[radius_slot(v[jj], r, nr)];
                  });
}

// ---- The cell list (L2 / squared domain, d <= 3, float or double) ------------------------

template <class T>
struct Grid {
    int64_t nc[3] = {1, 1, 1};
    double lo[3] = {0, 0, 0}, h = 1;
    std::vector<int64_t> start;    // cell c holds sorted points start[c] .. start[c + 1]
    std::vector<int64_t> index;    // original row of each sorted point
    std::vector<T> x;              // sorted coordinates, d per point

    int64_t cell_of(const T *p, int d, int64_t *c3) const {
        int64_t c = 0;
        for (int k = d - 1; k >= 0; --k) {
            const double f = std::floor((double(p[k]) - lo[k]) / h);
            const int64_t ck = f < 0 ? 0 : f >= double(nc[k]) ? nc[k] - 1 : int64_t(f);
            if (c3) c3[k] = ck;
            c = c * nc[k] + ck;
        }
        return c;
    }
};

template <class T>
bool finite_row(const T *p, int d) {
    for (int k = 0; k < d; ++k)
        if (!std::isfinite(p[k])) return false;
    return true;
}

// Cells of side h >= reach over the bounding box of both sets; at most ~2 (n1 + n2) cells.
// False where the cells cannot work: an extent beyond the double range (the brute-force
// pass then counts). Cells are at least 2^-63 (F32) / 2^-511 (F64) wide, so that a pair in
// cells apart differs by a t whose square does not underflow (a squared distance that
// underflowed to 0 would be within any radius).
template <class T>
bool grid_geometry(Grid<T> &g, const T *A, int64_t n1, int64_t lda, const T *B, int64_t n2, int64_t ldb, int d,
                   double reach) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    auto scan = [&](const T *X, int64_t n, int64_t ld) {
        for (int64_t i = 0; i < n; ++i) {
            const T *p = X + i * ld;
            if (!finite_row(p, d)) continue;
            for (int k = 0; k < d; ++k) lo[k] = std::min(lo[k], double(p[k])), hi[k] = std::max(hi[k], double(p[k]));
        }
    };
    scan(A, n1, lda);
    if (B != A) scan(B, n2, ldb);
    for (int k = 0; k < d; ++k)
        if (hi[k] > lo[k] && !std::isfinite(hi[k] - lo[k])) return false;
    double h = std::max(reach * (1 + std::ldexp(1.0, -10)), std::ldexp(1.0, sizeof(T) == 4 ? -63 : -511));
    const double cap = 2.0 * double(n1 + n2) + 27;
    for (;;) {
        double cells = 1;
        for (int k = 0; k < d; ++k) cells *= std::max(1.0, std::floor((hi[k] > lo[k] ? hi[k] - lo[k] : 0) / h) + 1);
        if (cells <= cap) break;
        h *= 1.25;
    }
    g.h = h;
    for (int k = 0; k < d; ++k) {
        g.lo[k] = hi[k] >= lo[k] ? lo[k] : 0;
        g.nc[k] = int64_t(std::floor((hi[k] > lo[k] ? hi[k] - lo[k] : 0) / h)) + 1;
    }
    return true;
}

template <class T>
void grid_fill(Grid<T> &g, const T *X, int64_t n, int64_t ld, int d) {
    const int64_t ncell = g.nc[0] * g.nc[1] * g.nc[2];
    std::vector<int64_t> cell(size_t(n), -1);
    g.start.assign(size_t(ncell + 1), 0);
    for (int64_t i = 0; i < n; ++i) {
        const T *p = X + i * ld;
        if (!finite_row(p, d)) continue;  // a non-finite coordinate is never within a radius
        cell[size_t(i)] = g.cell_of(p, d, nullptr);
        ++g.start[size_t(cell[size_t(i)] + 1)];
    }
    for (int64_t c = 0; c < ncell; ++c) g.start[size_t(c + 1)] += g.start[size_t(c)];
    const int64_t m = g.start[size_t(ncell)];
    g.index.resize(size_t(m));
    g.x.resize(size_t(m * d));
    std::vector<int64_t> pos(g.start.begin(), g.start.end() - 1);
    for (int64_t i = 0; i < n; ++i) {
        if (cell[size_t(i)] < 0) continue;
        const int64_t at = pos[size_t(cell[size_t(i)])]++;
        g.index[size_t(at)] = i;
        for (int k = 0; k < d; ++k) g.x[size_t(at * d + k)] = X[i * ld + k];
    }
}

// False (nothing counted) where the cells cannot work (grid_geometry).
template <class M>
bool counts_cells(const M &m, const Problem &pb, const typename M::in_t *A, const typename M::in_t *B,
                  const std::vector<typename M::out_t> &R, [[maybe_unused]] int threads,
                  std::vector<std::vector<int64_t>> &diff) {
    using T = typename M::in_t;
    using V = typename M::out_t;
    const int d = int(pb.pw.d), nr = int(R.size());
    const V *r = R.data();
    Grid<T> ga, gb;
    if (!grid_geometry(ga, A, pb.pw.n1, pb.pw.lda, B, pb.pw.n2, pb.pw.ldb, d, pb.thresholds.back())) return false;
    grid_fill(ga, A, pb.pw.n1, pb.pw.lda, d);
    if (!pb.autopairs) {
        gb.nc[0] = ga.nc[0], gb.nc[1] = ga.nc[1], gb.nc[2] = ga.nc[2], gb.h = ga.h;
        std::copy(ga.lo, ga.lo + 3, gb.lo);
        grid_fill(gb, B, pb.pw.n2, pb.pw.ldb, d);
    }
    const Grid<T> &g2 = pb.autopairs ? ga : gb;
    const int64_t ncell = ga.nc[0] * ga.nc[1] * ga.nc[2];
    // d <= 32: one slice, so the distance is finish(merge(init, fold)), as the tiles do.
    auto dist = [&](const T *a, const T *b) {
        typename M::acc_t acc = m.init(), tot = m.init();
        for (int k = 0; k < d; ++k) m.step(acc, a[k], b[k]);
        m.merge(tot, acc);
        return m.finish(tot);
    };
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads != 1)
    for (int64_t c = 0; c < ncell; ++c) {
        int64_t *hst = diff[size_t(thread_id())].data();
        const int64_t a0 = ga.start[size_t(c)], a1 = ga.start[size_t(c + 1)];
        if (a0 == a1) continue;
        int64_t c3[3] = {c % ga.nc[0], c / ga.nc[0] % ga.nc[1], c / (ga.nc[0] * ga.nc[1])};
        for (int64_t dz = (d > 2 ? -1 : 0); dz <= (d > 2 ? 1 : 0); ++dz)
            for (int64_t dy = (d > 1 ? -1 : 0); dy <= (d > 1 ? 1 : 0); ++dy)
                for (int64_t dx = -1; dx <= 1; ++dx) {
                    const int64_t x = c3[0] + dx, y = c3[1] + dy, z = c3[2] + dz;
                    if (x < 0 || y < 0 || z < 0 || x >= ga.nc[0] || y >= ga.nc[1] || z >= ga.nc[2]) continue;
                    const int64_t c2 = (z * ga.nc[1] + y) * ga.nc[0] + x;
                    if (pb.autopairs && c2 < c) continue;  // each unordered cell pair once
                    const int64_t b0 = g2.start[size_t(c2)], b1 = g2.start[size_t(c2 + 1)];
                    for (int64_t p = a0; p < a1; ++p) {
                        const T *a = &ga.x[size_t(p * d)];
                        const int64_t q0 = (pb.autopairs && c2 == c) ? p + 1 : b0;
                        for (int64_t q = q0; q < b1; ++q) ++hst[radius_slot(dist(a, &g2.x[size_t(q * d)]), r, nr)];
                    }
                }
    }
    return true;
}

// ---- kNN: per-row sorted lists, rows owned by one thread -----------------------------

template <class Tl>
void knn(const Tl &tl, const Problem &pb, const Outputs &out, int threads) {
    using V = typename Tl::out_t;
    const int64_t n1 = pb.pw.n1, n2 = pb.pw.n2, k = pb.k;
    const int64_t tiles_i = (n1 + TI - 1) / TI;
    struct Scratch {
        typename Tl::Scratch tile;
        std::vector<V> dist;
        std::vector<int64_t> idx;
        std::vector<int64_t> cnt = std::vector<int64_t>(size_t(TI));
    };
    std::vector<Scratch> scratch{size_t(threads)};
    for (Scratch &s : scratch) s.dist.resize(size_t(TI * k)), s.idx.resize(size_t(TI * k));
    V *dout = static_cast<V *>(out.distances);
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads != 1)
    for (int64_t it = 0; it < tiles_i; ++it) {
        Scratch &s = scratch[size_t(thread_id())];
        const int64_t i0 = it * TI, ni = std::min(TI, n1 - i0);
        std::fill(s.cnt.begin(), s.cnt.end(), 0);
        for (int64_t j0 = 0; j0 < n2; j0 += TJ) {
            const int64_t nj = std::min(TJ, n2 - j0);
            tl.tile(s.tile, i0, ni, j0, nj);
            for (int64_t ii = 0; ii < ni; ++ii) {
                V *ld = &s.dist[size_t(ii * k)];
                int64_t *li = &s.idx[size_t(ii * k)];
                int64_t &c = s.cnt[size_t(ii)];
                const V *v = &s.tile.dist[size_t(ii * TJ)];
                for (int64_t jj = 0; jj < nj; ++jj) {
                    const int64_t j = j0 + jj;
                    if (pb.autopairs && j == i0 + ii) continue;
                    if (c == k && !nearer(v[jj], j, ld[k - 1], li[k - 1])) continue;
                    int64_t p = c < k ? c++ : k - 1;  // insertion: shift the farther ones
                    while (p > 0 && nearer(v[jj], j, ld[p - 1], li[p - 1])) {
                        ld[p] = ld[p - 1], li[p] = li[p - 1];
                        --p;
                    }
                    ld[p] = v[jj], li[p] = j;
                }
            }
        }
        for (int64_t ii = 0; ii < ni; ++ii)
            for (int64_t q = 0; q < k; ++q) {
                out.indices[(i0 + ii) * k + q] = s.idx[size_t(ii * k + q)];
                dout[(i0 + ii) * k + q] = s.dist[size_t(ii * k + q)];
            }
    }
}

// ---- Uniform-bin histograms of L2 / squared L2 in 1 to 3 dimensions with AVX-512 --------
//
// The generic pass above writes each tile's distances to memory, then fixes and counts
// every pair in scalar code (about 4.5 ns a pair on one core of this project's EPYC). Here a row
// of a tile is a loop over 16 floats (8 doubles) at a time: the distance by the same
// operations in the same order as the tiles (separate IEEE subtractions,
// multiplications and additions, in their rounding-mode forms so that no compiler fuses
// them, then the correctly rounded square root: the same bits), then the bin from
// t = (v - e0) * inv_width in the element type, taken as certain where t is farther from
// an integer (from 0, from nbins) than a bound on its error plus the edges' rounding
// (CertainBins below); only the other lanes (distances within about 1e-4 bin widths of an
// edge, NaN) go through the exact Bins::fix. So the slots, and the counts, are those of
// the generic pass. Chosen at run time where the CPU has AVX-512F and DQ.
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#if !defined(__clang__)
// GCC 12's rounding-mode intrinsics start from _mm512_undefined_*(), which its
// -Wmaybe-uninitialized reports at every use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define APAIRS_AVX512 __attribute__((target("avx512f,avx512dq")))
#define APAIRS_AVX512_INLINE __attribute__((target("avx512f,avx512dq"), always_inline)) static inline
constexpr int kNear = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

template <class T>
struct Avx512;
template <>
struct Avx512<float> {
    using V = __m512;
    using I = __m512i;
    using Mask = __mmask16;
    static constexpr int W = 16;
    APAIRS_AVX512_INLINE V set1(float x) { return _mm512_set1_ps(x); }
    APAIRS_AVX512_INLINE V load(Mask m, const float *p) { return _mm512_maskz_loadu_ps(m, p); }
    APAIRS_AVX512_INLINE V sub(V a, V b) { return _mm512_sub_round_ps(a, b, kNear); }
    APAIRS_AVX512_INLINE V add(V a, V b) { return _mm512_add_round_ps(a, b, kNear); }
    APAIRS_AVX512_INLINE V mul(V a, V b) { return _mm512_mul_round_ps(a, b, kNear); }
    APAIRS_AVX512_INLINE V sqrt(V a) { return _mm512_sqrt_round_ps(a, kNear); }
    APAIRS_AVX512_INLINE V abs(V a) { return _mm512_abs_ps(a); }
    APAIRS_AVX512_INLINE V floor(V a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
    APAIRS_AVX512_INLINE V clamp(V g, V top) { return _mm512_min_ps(_mm512_max_ps(g, _mm512_setzero_ps()), top); }
    APAIRS_AVX512_INLINE I to_int(V g) { return _mm512_cvttps_epi32(g); }
    APAIRS_AVX512_INLINE Mask ge(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
    APAIRS_AVX512_INLINE Mask le(V a, V b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
    APAIRS_AVX512_INLINE void store(int32_t *p, I g) { _mm512_storeu_si512(p, g); }
    APAIRS_AVX512_INLINE void store(float *p, V v) { _mm512_storeu_ps(p, v); }
};
template <>
struct Avx512<double> {
    using V = __m512d;
    using I = __m256i;
    using Mask = __mmask8;
    static constexpr int W = 8;
    APAIRS_AVX512_INLINE V set1(double x) { return _mm512_set1_pd(x); }
    APAIRS_AVX512_INLINE V load(Mask m, const double *p) { return _mm512_maskz_loadu_pd(m, p); }
    APAIRS_AVX512_INLINE V sub(V a, V b) { return _mm512_sub_round_pd(a, b, kNear); }
    APAIRS_AVX512_INLINE V add(V a, V b) { return _mm512_add_round_pd(a, b, kNear); }
    APAIRS_AVX512_INLINE V mul(V a, V b) { return _mm512_mul_round_pd(a, b, kNear); }
    APAIRS_AVX512_INLINE V sqrt(V a) { return _mm512_sqrt_round_pd(a, kNear); }
    APAIRS_AVX512_INLINE V abs(V a) { return _mm512_abs_pd(a); }
    APAIRS_AVX512_INLINE V floor(V a) { return _mm512_roundscale_pd(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
    APAIRS_AVX512_INLINE V clamp(V g, V top) { return _mm512_min_pd(_mm512_max_pd(g, _mm512_setzero_pd()), top); }
    APAIRS_AVX512_INLINE I to_int(V g) { return _mm512_cvttpd_epi32(g); }
    APAIRS_AVX512_INLINE Mask ge(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
    APAIRS_AVX512_INLINE Mask le(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
    APAIRS_AVX512_INLINE void store(int32_t *p, I g) { _mm256_storeu_si256(reinterpret_cast<__m256i *>(p), g); }
    APAIRS_AVX512_INLINE void store(double *p, V v) { _mm512_storeu_pd(p, v); }
};

bool have_avx512() {
    static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
    return yes;
}

// Where a guess is certain (rules.hpp's bin_margin: the distance itself, no
// approximation): margin(t) = k |t| + c.
template <class T>
struct CertainBins {
    T k, c;
    bool usable;  // c small enough that almost every lane is certain
    explicit CertainBins(const std::vector<double> &edges) {
        const BinMargin m = bin_margin<T>(edges, 0);
        k = T(m.k), c = T(m.c);
        // The margin's analysis assumes (v - e0) * iw finite for v up to the top edge: an
        // inverse width or a span past T's range (bins of a few subnormal widths, or rmin
        // and rmax near -max and max) sent lanes certain into the last slot
        // (tests/twobody/test_rules.cpp's emulation of this pass).
        const T iw = T(double(edges.size() - 1) / (edges.back() - edges.front()));
        const T span = ceil_to<T>(edges.back()) - T(edges.front());
        usable = m.c < 0.0625 && m.k * double(edges.size()) < 0.0625 && std::isfinite(iw) && std::isfinite(span);
    }
};

// Whether an unweighted execute of pb takes the AVX-512 pass (histogram_avx512, and
// what describe_host_technique says).
bool uses_avx512_histogram(const Problem &pb) {
    if (pb.kind != Kind::Histogram || !pb.uniform || pb.pw.d > 3 || !pb.box.empty() ||
        (pb.pw.metric != APAIRS_METRIC_L2 && pb.pw.metric != APAIRS_METRIC_SQEUCLIDEAN))
        return false;
    const bool usable = pb.pw.dtype == APAIRS_DTYPE_F32   ? CertainBins<float>(pb.thresholds).usable
                        : pb.pw.dtype == APAIRS_DTYPE_F64 ? CertainBins<double>(pb.thresholds).usable
                                                          : false;
    return usable && have_avx512();
}

// Counts the slots of the pairs (a, bt[.][j]) for j in [js, nj) into h (4 interleaved
// copies of hs counters). bt: the tile's points dimension-major, row stride TJ.
// Sqrt: L2 (else squared L2).
template <class T, int D, bool Sqrt>
APAIRS_AVX512 void histogram_row_avx512(const Bins<T> &bins, const CertainBins<T> &cb, const T *a, const T *bt,
                                        int64_t js, int64_t nj, int64_t *h, size_t hs) {
    using S = Avx512<T>;
    using V = typename S::V;
    using Mask = typename S::Mask;
    constexpr int W = S::W;
    V av[D];
    for (int k = 0; k < D; ++k) av[k] = S::set1(a[k]);
    const V e0 = S::set1(T(bins.e0)), iw = S::set1(T(bins.inv_width)), one = S::set1(T(1)),
            nb = S::set1(T(bins.nbins)), nb1 = S::set1(T(bins.nbins - 1)), top = S::set1(T(bins.nbins + 1)),
            zero = S::set1(T(0)), mk = S::set1(cb.k), mc = S::set1(cb.c);
    int64_t *const hc[4] = {h, h + hs, h + 2 * hs, h + 3 * hs};
    alignas(64) int32_t slot[W];
    alignas(64) T val[W];
    for (int64_t j = js; j < nj; j += W) {
        const int64_t left = nj - j;
        const Mask live = left >= W ? Mask(~Mask(0)) : Mask((1u << left) - 1);
        V t = S::sub(av[0], S::load(live, bt + j));
        V s = S::mul(t, t);  // 0 + t * t, exactly (t * t is +0 or more, or NaN)
        for (int k = 1; k < D; ++k) {
            t = S::sub(av[k], S::load(live, bt + k * TJ + j));
            s = S::add(s, S::mul(t, t));
        }
        const V v = Sqrt ? S::sqrt(s) : s;
        const V x = S::mul(S::sub(v, e0), iw);
        const V margin = S::add(S::mul(S::abs(x), mk), mc);
        const V fl = S::floor(x), frac = S::sub(x, fl);
        const Mask inside = Mask(S::ge(fl, zero) & S::le(fl, nb1) & S::ge(frac, margin) &
                                 S::le(margin, S::sub(one, frac)));
        const Mask below = S::le(x, S::sub(zero, margin)), above = S::ge(x, S::add(nb, margin));
        const Mask certain = Mask(inside | below | above);
        S::store(slot, S::to_int(S::clamp(S::add(fl, one), top)));  // NaN: 0, fixed below
        if (__builtin_expect(Mask(certain & live) != live, 0)) {
            S::store(val, v);
            for (int l = 0; l < W; ++l)
                if (((live & ~certain) >> l) & 1) slot[l] = bins.fix(val[l], slot[l]);
        }
        if (left >= W) {
#pragma GCC unroll 16
            for (int l = 0; l < W; ++l) ++hc[l & 3][slot[l]];
        } else {
            for (int l = 0; l < left; ++l) ++hc[l & 3][slot[l]];
        }
    }
}

// The whole histogram (no weights, uniform bins, no box) for M = L2 or squared L2 in
// d = 1, 2, 3; false if this path does not apply (then the generic pass runs).
template <class M>
bool histogram_avx512(const Problem &pb, const typename M::in_t *A, const typename M::in_t *B,
                      const Bins<typename M::out_t> &bins, int threads, std::vector<std::vector<int64_t>> &hist,
                      size_t hs) {
    using T = typename M::in_t;
    constexpr bool L2 = std::is_same<M, metric::L2<T>>::value;
    if constexpr (!(std::is_floating_point<T>::value && (L2 || std::is_same<M, metric::SqEuclidean<T>>::value))) {
        return false;
    } else {
        if (!uses_avx512_histogram(pb)) return false;
        const int64_t d = pb.pw.d, n1 = pb.pw.n1, n2 = pb.pw.n2, lda = pb.pw.lda, ldb = pb.pw.ldb;
        const CertainBins<T> cb(pb.thresholds);
        using Row = void (*)(const Bins<T> &, const CertainBins<T> &, const T *, const T *, int64_t, int64_t,
                             int64_t *, size_t);
        static constexpr Row rows[3] = {&histogram_row_avx512<T, 1, L2>, &histogram_row_avx512<T, 2, L2>,
                                        &histogram_row_avx512<T, 3, L2>};
        const Row row = rows[d - 1];
        const int64_t tiles_j = (n2 + TJ - 1) / TJ, tiles_i = (n1 + TI - 1) / TI;
        std::vector<std::vector<T>> scratch(size_t(threads), std::vector<T>(size_t(3 * TJ)));
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (threads != 1)
        for (int64_t t = 0; t < tiles_i * tiles_j; ++t) {
            const int tid = thread_id();
            const int64_t i0 = t / tiles_j * TI, j0 = t % tiles_j * TJ;
            const int64_t ni = std::min(TI, n1 - i0), nj = std::min(TJ, n2 - j0);
            if (pb.autopairs && j0 + nj - 1 <= i0) continue;  // no j > i in this tile
            T *bt = scratch[size_t(tid)].data();
            for (int64_t jj = 0; jj < nj; ++jj)
                for (int64_t k = 0; k < d; ++k) bt[k * TJ + jj] = B[(j0 + jj) * ldb + k];
            for (int64_t ii = 0; ii < ni; ++ii) {
                const int64_t i = i0 + ii;
                const int64_t js = pb.autopairs ? std::max<int64_t>(0, i + 1 - j0) : 0;
                row(bins, cb, A + i * lda, bt, js, nj, hist[size_t(tid)].data(), hs);
            }
        }
        return true;
    }
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
template <class M, class... X>
bool histogram_avx512(X &&...) {
    return false;
}
#endif

// ---- The whole run for one metric functor ---------------------------------------------

template <class M, bool Periodic>
void run_metric(const M &m, const Problem &pb, const void *Av, const void *Bv, const Outputs &out, int threads) {
    using T = typename M::in_t;
    using V = typename M::out_t;
    Tiler<M, Periodic> tl{m, static_cast<const T *>(Av), static_cast<const T *>(Bv), pb.pw.lda, pb.pw.ldb, pb.pw.d};
    if constexpr (Periodic)
        for (size_t k = 0; k < pb.box.size(); ++k) tl.side[k] = T(pb.box[k]), tl.inv[k] = T(1 / T(pb.box[k]));
    if (pb.kind == Kind::Knn) return knn(tl, pb, out, threads);
    if (pb.kind == Kind::Counts) {
        // L2 arrives here as SqEuclidean (run_host): squared thresholds.
        const bool squared = pb.pw.metric == APAIRS_METRIC_L2;
        std::vector<V> R(pb.thresholds.size());
        for (size_t q = 0; q < R.size(); ++q) {
            if constexpr (std::is_floating_point<V>::value)
                R[q] = squared ? squared_threshold<V>(pb.thresholds[q]) : floor_to<V>(pb.thresholds[q]);
            else
                R[q] = floor_to<V>(pb.thresholds[q]);
        }
        // Slot q < nradii: the first radius the pair is within; nradii: none.
        std::vector<std::vector<int64_t>> priv(size_t(threads), std::vector<int64_t>(R.size() + 1, 0));
        bool done = false;
        if constexpr (std::is_same<M, metric::SqEuclidean<T>>::value && !Periodic) {
            if (squared && host_uses_cells(pb)) done = counts_cells(m, pb, tl.A, tl.B, R, threads, priv);
        }
        if (!done) counts_brute(tl, pb, R, threads, priv);
        int64_t run = 0;
        for (size_t q = 0; q < R.size(); ++q) {
            for (int t = 0; t < threads; ++t) run += priv[size_t(t)][q];
            out.counts[q] = run;
        }
        return;
    }
    // Histogram. Uniform bins: a vectorised pass of guesses per row, then the scalar pass
    // that fixes each guess and counts; caller edges: a binary search per pair.
    const int nbins = int(pb.nbins());
    const std::vector<V> X = extended_edges<V>(pb.thresholds);
    const Bins<V> bins = make_bins(X, pb.thresholds);
    const size_t hs = size_t(nbins + 2);
    // Four interleaved copies per thread for the counts: consecutive pairs in one bin
    // then do not wait on each other's increments.
    std::vector<std::vector<int64_t>> hist(size_t(threads), std::vector<int64_t>(4 * hs, 0));
    std::vector<std::vector<int32_t>> guesses(size_t(threads), std::vector<int32_t>(size_t(TJ), 0));
    auto slots = [&](int tid, int64_t js, int64_t nj, const V *v, auto &&count) {
        if (pb.uniform) {
            int32_t *g = guesses[size_t(tid)].data();
#pragma omp simd
            for (int64_t jj = js; jj < nj; ++jj) g[jj] = bins.guess(v[jj]);
            for (int64_t jj = js; jj < nj; ++jj) count(jj, bins.fix(v[jj], g[jj]));
        } else {
            for (int64_t jj = js; jj < nj; ++jj) count(jj, bins.slot(v[jj]));
        }
    };
    if (!out.sums) {
        bool done = false;
        if constexpr (!Periodic) done = histogram_avx512<M>(pb, tl.A, tl.B, bins, threads, hist, hs);
        if (!done)
            for_each_pair(tl, pb.pw.n1, pb.pw.n2, pb.autopairs, threads,
                          [&](int tid, int64_t, int64_t, int64_t js, int64_t nj, const V *v) {
                              int64_t *h = hist[size_t(tid)].data();
                              slots(tid, js, nj, v,
                                    [h, hs](int64_t jj, int s) { ++h[size_t(jj & 3) * hs + size_t(s)]; });
                          });
    } else {
        std::vector<std::vector<__int128>> wsum(size_t(threads), std::vector<__int128>(hs, 0));
        for_each_pair(tl, pb.pw.n1, pb.pw.n2, pb.autopairs, threads,
                      [&](int tid, int64_t i, int64_t j0, int64_t js, int64_t nj, const V *v) {
                          int64_t *h = hist[size_t(tid)].data();
                          __int128 *w = wsum[size_t(tid)].data();
                          const double wi = out.wa[i];
                          const double *wb = out.wb + j0;
                          slots(tid, js, nj, v, [&](int64_t jj, int s) {
                              ++h[size_t(jj & 3) * hs + size_t(s)];
                              w[s] += fixed_weight(wi, wb[jj]);
                          });
                      });
        for (size_t b = 0; b < hs; ++b) {
            __int128 s = 0;
            for (int t = 0; t < threads; ++t) s += wsum[size_t(t)][b];
            out.sums[b] = fixed128_to_double(static_cast<int64_t>(s >> 64), static_cast<uint64_t>(s));
        }
    }
    for (size_t b = 0; b < hs; ++b) {
        int64_t s = 0;
        for (int t = 0; t < threads; ++t)
            for (size_t c = 0; c < 4; ++c) s += hist[size_t(t)][c * hs + b];
        out.counts[b] = s;
    }
}

}  // namespace

bool host_uses_cells(const Problem &pb) {
    return pb.kind == Kind::Counts && pb.pw.metric == APAIRS_METRIC_L2 && pb.pw.d <= 3 && pb.box.empty() &&
           pb.thresholds.back() >= 0 && (pb.pw.dtype == APAIRS_DTYPE_F32 || pb.pw.dtype == APAIRS_DTYPE_F64);
}

std::string describe_host_technique(const Problem &pb) {
    if (host_uses_cells(pb))
        return fmt::format(
            "cell list: points binned into cells of side >= the largest radius (+2^-10), each cell paired with its "
            "{} neighbours{}, squared distances against squared radii (no sqrt), per-thread counts added in thread "
            "order; why: L2 in d <= 3 with a finite reach prunes most pairs, and the margin keeps the counts those "
            "of the brute-force pass",
            pb.pw.d == 1 ? 3 : pb.pw.d == 2 ? 9 : 27, pb.autopairs ? " (each unordered cell pair once)" : "");
#if defined(APAIRS_AVX512)
    if (uses_avx512_histogram(pb))
        return fmt::format(
            "AVX-512 rows over {}x{} tiles: each row's distances {} at a time, the bin taken from the distance where "
            "it is farther from an edge than the rounding can move it and fixed against the edges elsewhere, "
            "per-thread privatised histogram reduced in thread order (64-bit counts; weighted runs take the "
            "guessed-and-fixed pass); why: uniform bins of L2 or SQEUCLIDEAN in d <= 3 on a CPU with AVX-512",
            TI, TJ, pb.pw.dtype == APAIRS_DTYPE_F32 ? 16 : 8);
#endif
    const char *out = pb.kind == Kind::Knn ? "a sorted list of k (distance, index) per row, rows owned by one thread"
                      : pb.kind == Kind::Counts
                          ? (pb.pw.metric == APAIRS_METRIC_L2 ? "per-thread radius counts, squared distances against "
                                                                "squared radii (no sqrt)"
                                                              : "per-thread radius counts")
                          : (pb.uniform ? "per-thread privatised histogram, uniform bin guessed from the distance "
                                          "and corrected against the edges"
                                        : "per-thread privatised histogram, binary search over the edges");
    return fmt::format("brute force over {}x{} distance tiles (B transposed per 32-dimension slice, columns "
                       "vectorised){}, then {}{}; why: {}",
                       TI, TJ, pb.box.empty() ? "" : ", minimum image per dimension", out,
                       pb.kind == Kind::Histogram ? ", reduced in thread order (64-bit counts, 128-bit fixed-point "
                                                    "weight sums: the same bits for any thread count)"
                                                  : "",
                       pb.kind == Kind::Knn ? "every row needs every candidate; AUTO computes each pair twice so that no "
                                              "two threads touch one row"
                       : pb.kind == Kind::Histogram ? "a histogram needs every pair"
                                                    : "the cell list takes only L2 in d <= 3 without a box");
}

void run_host(const Problem &pb, const void *A, const void *B, const Outputs &out, int threads) {
    if (pb.autopairs) B = A;
    pairwise::dispatch(pb.pw, [&](auto m) {
        using M = decltype(m);
        using T = typename M::in_t;
        if constexpr (SquaredDomain<M>::value) {
            // L2: counts in the squared domain; periodic boxes only here.
            if (pb.kind == Kind::Counts) {
                if (!pb.box.empty()) return run_metric<metric::SqEuclidean<T>, true>({}, pb, A, B, out, threads);
                return run_metric<metric::SqEuclidean<T>, false>({}, pb, A, B, out, threads);
            }
            if (!pb.box.empty()) return run_metric<M, true>(m, pb, A, B, out, threads);
        }
        run_metric<M, false>(m, pb, A, B, out, threads);
    });
}

}  // namespace apairs::twobody
