// The stream kernels' solves (lu.cu's getrs_stream_kernel, cholesky.cu's
// potrs_stream_kernel): n > 32, at most kRowsMaxRhs right-hand sides. As the rows kernels
// (solve.cuh), a warp per element, lane l holding rows l, l + 32, ... of up to NR columns
// of B, but the factor never staged whole: the two triangular solves read their
// triangles once each (a chunk of NR columns), in 32 x 32 tiles streamed through a ring
// of kStreamStages tiles in shared memory (cp.async, the next tile's copies in flight
// while the warp solves one), so an element takes kStreamStages 32 (32 | 1) entries of
// shared memory where the rows kernels take the whole factor, and each line of a tile is
// a run of 32 entries in memory.
//
// The lower solve reads a lower triangle Ml, the upper solve an upper one Mu, each an
// entry map of the element's factor: getrs Ml = Mu = A (L y = P^T b, then U x = y) or
// A^T (U^T y = b, then L^T z = y, x = P z); potrs Ml = L, Mu = L^T (or U^T, U). Row block
// kb (rows 32 kb ..) of the lower solve takes tiles (kb, 0), .., (kb, kb - 1) (Ml's
// entries left of the diagonal block, with x of those columns final), then the diagonal
// tile (kb, kb) column by column; the upper solve the same from the other end. Each row
// thus takes its fmas in the order the columns come (lower: j ascending; upper:
// descending), x_j first scaled by the diagonal's reciprocal (but a unit diagonal): the
// rows kernels' arithmetic (warp_lower_solve, warp_upper_solve), so the same bits. A SoA
// factor is streamed by the whole block where it has several warps (each entry's values
// of the block's elements one run, a barrier a tile). The copies are entry by entry, each
// thread stepping along one line of a tile by pointer increments: with the address worked
// out for each copy they were 27 k of an element's 51 k instructions (ncu, H200 run 326,
// getrs f64 n = 128 AoS: 301 us; with the steps 0.204 ms in run 328, 0.187 in run 329).
//
// The ring's tiles: two (H200 run 327, getrs: f64 n = 64 AoS 0.200 ms against three's
// 0.247, n = 128 0.205 against 0.210; f32 n = 64 0.253 against 0.269, n = 128 0.219
// against 0.235; SoA alike or better but f64 n = 128, 0.373 against 0.362): more warps an
// SM (f64 17 KB of shared memory a warp where three take 25).
#pragma once

#include <cstdint>

#include "batched/walker.cuh"

namespace apairs::batched {

constexpr int kTile = 32, kTileLd = kTile + 1, kStreamStages = 2;
// NR: the right-hand sides a chunk holds (at nrhs = 1: one).
constexpr int kStreamRhs = 4;
// A SoA factor's copies are 4- or 8-byte cp.async through L1, each a sector (or part) of a
// line whose other sectors hold other blocks' elements: the kernels ask for a 164 KB
// shared-memory carveout (two blocks an SM at n = 128, 92 KB of L1 for the lines in
// flight) where the largest (three blocks, some 28 KB of L1) held them to 2/3 to 3/4 of
// the speed (H200 runs 342-343, SoA ms at the largest / 164 KB: getrs f64 n = 128 0.321 /
// 0.214, n = 64 0.294 / 0.267, f32 n = 128 0.355 / 0.261; potrs n = 128 f64 0.264 / 0.178,
// f32 0.296 / 0.213; at 132 KB, fewer warps an SM, 0.24-0.34). The rows kernels, a whole
// factor a warp, mostly lost with it (SoA n = 64: potrf f32 and f64, getrf f32, 11-17 %).
// The carveout is the plan's, asked by each launch (launch_raw), so AoS and SoA plans of
// one kernel keep their own.
constexpr int64_t kStreamSoaSharedPerSm = 164 * 1024;
// AoS f64 past n = 96 (four rows a lane) with one right-hand side asks for it too: 9
// warps an SM with 92 KB of L1 where the largest keeps 13 with 28 KB (H200 run 430, three
// rounds: potrs n = 128 0.158 -> 0.146-0.147 ms, getrs 0.185 -> 0.178-0.180); f32 gained
// nothing (run 430, potrs 0.178 either way) and n = 64 neither (run 429), so they keep
// the largest (0), as does getrs's kernel of chunks of right-hand sides (not timed so).
inline int64_t stream_shared_per_sm(bool soa, bool f64, int n, int nrhs) {
    return soa || (f64 && n > 96 && nrhs == 1) ? kStreamSoaSharedPerSm : 0;
}

// A warp's ring (bytes).
template <class T>
__host__ __device__ constexpr int64_t stream_slot() {
    return round16(int64_t(kStreamStages) * kTile * kTileLd * int64_t(sizeof(T)));
}

// The index m of the triangle's row holding u in the order 0; 1, 2; 3, 4, 5; ...
__device__ __forceinline__ int tri_row(int u) {
    int m = 0;
    while ((m + 1) * (m + 2) / 2 <= u) ++m;
    return m;
}

template <class T, int R>
__device__ __forceinline__ T pick(const T (&v)[R], int k) {  // v[k] by compares (an index would be local memory)
    T o = v[0];
#pragma unroll
    for (int i = 1; i < R; ++i) o = i == k ? v[i] : o;
    return o;
}

// The solves of the block's elements (a block-uniform loop over its warps' elements). Op,
// the operation's view (all __device__):
//   p, ld, soa, stride: the factor; its entry (r, c) of element e at
//     p + (soa ? e : e * stride) + (r ld + c) es, es = soa ? stride : 1;
//   colm(up): the solve's matrix M(r, j) at (j ld + r) es (its columns contiguous), else
//     at (r ld + j) es;
//   scale(up): a non-unit diagonal (x_j times 1 / M(j, j), the entry (j, j) above);
//   live(e): the element is solved (e < batch and not skipped);
//   begin(e, live, lane, perm): this lane's rows' permutation (perm[k] for row lane + 32 k);
//   gather / scatter: x_r = b_perm(r) on the loads / x_perm(r) = z_r on the stores;
//   b, b_at(row, col, e): B's entry.
template <class T, int R, int NR, class Op>
__device__ __forceinline__ void stream_solves(const Op &op, int n, int nrhs_all, int64_t batch, T *base) {
    constexpr int S = kStreamStages;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    constexpr int64_t wslot = stream_slot<T>() / int64_t(sizeof(T));
    constexpr int TE = kTile * kTileLd;
    T *const ring = base + warp * wslot;
    const unsigned sbase = static_cast<unsigned>(__cvta_generic_to_shared(base)),
                   wbase = sbase + unsigned(warp * wslot * int64_t(sizeof(T)));
    const bool coop = op.soa && warps > 1;
    const int64_t ld = op.ld, es = op.soa ? op.stride : 1;
    constexpr int TL = R * (R + 1) / 2;  // tiles a solve
    // The copying thread's element (of the block's, where it copies) and tile row or column.
    const int cq = threadIdx.x % warps, cl = coop ? threadIdx.x / warps : lane;
    // Tile t: its row block kb, column block cb, and solve (up).
    auto tile = [&](int t, int &kb, int &cb, bool &up) {
        up = t >= TL;
        const int u = up ? t - TL : t, m = tri_row(u), i = u - m * (m + 1) / 2;
        kb = up ? R - 1 - m : m;
        cb = up ? R - 1 - i : i;
    };
    for (int64_t eb = int64_t(blockIdx.x) * warps; eb < batch; eb += int64_t(gridDim.x) * warps) {  // block-uniform
        const int64_t e = eb + warp;
        const bool live = op.live(e);
        if (!coop && !live) continue;
        const T *const src = op.p + (op.soa ? e : e * op.stride);
        // Tile t's copies into slot t % S (a diagonal tile: only its solve's triangle), and
        // a commit (an empty group past the last tile). Each copying thread (a lane of the
        // warp, or where the block copies, thread q + W l of element eb + q for the block's
        // W warps) takes one row (colm) or column of the tile, l, and steps along it by
        // pointer increments (shared offsets in bytes from the slot's window address): SoA
        // loads of consecutive threads then take consecutive elements, runs of W entries.
        const int64_t ce = coop ? eb + cq : e;
        const T *const csrc = op.p + (op.soa ? ce : ce * op.stride);
        const unsigned cbase = coop ? sbase + unsigned(cq * wslot * int64_t(sizeof(T))) : wbase;
        auto issue = [&](int t) {
            if (t < 2 * TL && ce < batch) {
                int kb, cb;
                bool up;
                tile(t, kb, cb, up);
                const bool colm = op.colm(up);
                const int r0 = kTile * kb, c0 = kTile * cb;
                // The thread's line is row l of the tile (colm) or column l, and i, the
                // column or row, runs over 0 .. min(32, n - its base); in a diagonal tile
                // only over the solve's strict triangle: i < l where colm and the lower
                // solve go together (or neither), i > l otherwise.
                const int me = colm ? r0 + cl : c0 + cl, ib = colm ? c0 : r0, iend = min(kTile, n - ib);
                const bool below = colm != up, diag = kb == cb;
                const int ilo = diag && !below ? cl + 1 : 0, ihi = diag && below ? min(cl, iend) : iend;
                const int64_t step = ld * es;  // the next column (colm) or row
                const int r = colm ? r0 + cl : r0, j = colm ? c0 : c0 + cl;
                const T *p = csrc + (colm ? int64_t(j) * ld + r : int64_t(r) * ld + j) * es + ilo * step;
                const unsigned sstep = unsigned((colm ? kTileLd : 1) * int(sizeof(T)));
                unsigned sh = cbase + unsigned(((t % S) * TE + (colm ? cl : cl * kTileLd)) * int(sizeof(T))) +
                              unsigned(ilo) * sstep;
                if (me < n)
#pragma unroll 4
                    for (int i = ilo; i < ihi; ++i, p += step, sh += sstep) cp_async_one_to(sh, p);
            }
            cp_commit();
        };
        // The right-hand sides NR at a time, the factor streamed once a chunk.
        for (int c0 = 0; c0 < nrhs_all; c0 += NR) {
            if (coop)
                __syncthreads();  // the previous element's tiles are read
            else
                __syncwarp();
            const int nrhs = min(NR, nrhs_all - c0);  // this chunk's columns c0 .. c0 + nrhs - 1
            T inv[R], x[NR][R];  // inv: the diagonal's reciprocals
            int perm[R];
            // One loop issues every tile (S - 1 ahead of the one solved), so that the copies'
            // code is in one place: t < 0 only issues.
            for (int t = 1 - S; t < 2 * TL; ++t) {
                if (t == 0) {  // while the first tiles are in flight
#pragma unroll
                    for (int k = 0; k < R; ++k) {
                        const int r = lane + 32 * k;
                        inv[k] = live && r < n ? T(1) / src[(int64_t(r) * ld + r) * es] : T(1);
                    }
                    op.begin(e, live, lane, perm);
#pragma unroll
                    for (int c = 0; c < NR; ++c)
#pragma unroll
                        for (int k = 0; k < R; ++k) {
                            const int r = lane + 32 * k, from = op.gather() ? perm[k] : r;
                            x[c][k] = live && c < nrhs && r < n ? op.b[op.b_at(from, c0 + c, e)] : T(0);
                        }
                }
                if (t >= 0) {  // tile t landed; slot (t - 1) % S free for t + S - 1
                    cp_wait<S - 2>();
                    if (coop)
                        __syncthreads();
                    else
                        __syncwarp();
                }
                issue(t + S - 1);
                if (t < 0 || !live) continue;
                const T *const m = ring + (t % S) * TE;
                int kb, cb;
                bool up;
                tile(t, kb, cb, up);
                const bool in = kTile * kb + lane < n;  // this lane's row of the block
                T acc[NR];
#pragma unroll
                for (int c = 0; c < NR; ++c) acc[c] = pick(x[c], kb);
                if (kb != cb) {  // x of block cb final: 32 columns of fmas (the last block's
                                 // columns past n skipped)
                    T xs[NR];
#pragma unroll
                    for (int c = 0; c < NR; ++c) xs[c] = pick(x[c], cb);
#pragma unroll
                    for (int q = 0; q < kTile; ++q) {
                        const int jj = up ? kTile - 1 - q : q;
                        if (kTile * cb + jj >= n) continue;  // uniform
                        const T v = m[jj * kTileLd + lane];
#pragma unroll
                        for (int c = 0; c < NR; ++c)
                            if (c < nrhs) {
                                const T y = __shfl_sync(0xffffffffu, xs[c], jj);
                                if (in) acc[c] = fma(-v, y, acc[c]);
                            }
                    }
                } else {  // the diagonal block, column by column
                    const bool scale = op.scale(up);
                    const T d = pick(inv, kb);
#pragma unroll
                    for (int q = 0; q < kTile; ++q) {
                        const int jj = up ? kTile - 1 - q : q;
                        if (kTile * kb + jj >= n) continue;  // uniform
                        const bool hit = up ? lane < jj : lane > jj && in;
                        const T v = m[jj * kTileLd + lane];
#pragma unroll
                        for (int c = 0; c < NR; ++c)
                            if (c < nrhs) {
                                if (scale && lane == jj) acc[c] *= d;
                                const T y = __shfl_sync(0xffffffffu, acc[c], jj);
                                if (hit) acc[c] = fma(-v, y, acc[c]);
                            }
                    }
                }
#pragma unroll
                for (int c = 0; c < NR; ++c)
#pragma unroll
                    for (int k = 0; k < R; ++k)
                        if (k == kb) x[c][k] = acc[c];
            }
            if (!live) continue;
            __syncwarp();  // every lane's loads of B before any lane's stores (gather, scatter)
#pragma unroll
            for (int c = 0; c < NR; ++c)
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    const int r = lane + 32 * k, to = op.scatter() ? perm[k] : r;
                    if (c < nrhs && r < n) op.b[op.b_at(to, c0 + c, e)] = x[c][k];
                }
        }
    }
}

}  // namespace apairs::batched
