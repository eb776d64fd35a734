// Device helpers shared by the batched kernels (gemm.cu, cholesky.cu, lu.cu): the index
// walk of the staging loops, and a team's staging of its elements through shared memory.
#pragma once

namespace apairs::batched {

// A walk over a 3-D index space (d0 fastest) in steps of `step` linear positions,
// without divisions after the start: the staging loops' way of visiting an element's
// entries in memory order.
struct Walker {
    int d0, d1, d2, e0, e1, s0, s1, s2;
    __device__ Walker(int start, int step, int E0, int E1) : e0(E0), e1(E1) {
        d0 = start % E0;
        int y = start / E0;
        d1 = y % E1;
        d2 = y / E1;
        s0 = step % E0;
        y = step / E0;
        s1 = y % E1;
        s2 = y / E1;
    }
    __device__ __forceinline__ void advance() {
        d0 += s0;
        int carry = d0 >= e0;
        d0 -= carry ? e0 : 0;
        d1 += s1 + carry;
        carry = d1 >= e1;
        d1 -= carry ? e1 : 0;
        d2 += s2 + carry;
    }
};

// A team: a warp (warp_team) or a whole block.
__device__ __forceinline__ void team_sync(bool warp_team) {
    if (warp_team)
        __syncwarp();
    else
        __syncthreads();
}

// Visits the fast-grid rectangle nr x nc of a team's `ept` elements in memory order
// (AoS: (c, r, q) with c fastest; SoA: (q, c, r)), the team's `tt` threads `tt` positions
// apart; map(q, r, c, &global_offset, &shared_offset) says whether (and where) to copy.
// Loads CH entries before storing them, so that CH loads per thread are in flight.
// S: the shared-memory type (T, or a wider one the loads convert to).
template <int CH, class T, class S, class Map>
__device__ __forceinline__ void team_load(const T *g, S *sh, bool soa, int tid, int tt, int ept, int nr, int nc,
                                          Map map) {
    Walker w = soa ? Walker(tid, tt, ept, nc) : Walker(tid, tt, nc, nr);
    const int last = soa ? nr : ept;
    while (w.d2 < last) {
        S v[CH];
        int dst[CH];
#pragma unroll
        for (int c = 0; c < CH; ++c) {
            const int q = soa ? w.d0 : w.d2;
            const int rr = soa ? w.d2 : w.d1, col = soa ? w.d1 : w.d0;
            int64_t go = 0;
            int so = -1;
            const bool ok = w.d2 < last && map(q, rr, col, go, so);
            v[c] = ok ? g[go] : S(0);
            dst[c] = ok ? so : -1;
            w.advance();
        }
#pragma unroll
        for (int c = 0; c < CH; ++c)
            if (dst[c] >= 0) sh[dst[c]] = v[c];
    }
}

template <class T, class Map>
__device__ __forceinline__ void team_store(T *g, const T *sh, bool soa, int tid, int tt, int ept, int nr, int nc,
                                           Map map) {
    Walker w = soa ? Walker(tid, tt, ept, nc) : Walker(tid, tt, nc, nr);
    const int last = soa ? nr : ept;
#pragma unroll 4
    for (; w.d2 < last; w.advance()) {
        const int q = soa ? w.d0 : w.d2;
        const int rr = soa ? w.d2 : w.d1, col = soa ? w.d1 : w.d0;
        int64_t go = 0;
        int so = -1;
        if (map(q, rr, col, go, so)) g[go] = sh[so];
    }
}

}  // namespace apairs::batched
