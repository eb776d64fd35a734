// Device helpers shared by the batched kernels (gemm.cu, cholesky.cu, lu.cu, vector.cu):
// the index walk of the staging loops, a team's staging of its elements through shared
// memory, and the asynchronous copies global -> shared (cp.async, sm_80 and later) with
// their commit and wait.
#pragma once

#include <cstdint>

namespace apairs::batched {

// x rounded up to a multiple of 16 (bytes: shared-memory slots on the 16-byte grid).
__host__ __device__ constexpr int64_t round16(int64_t x) { return (x + 15) / 16 * 16; }

// 16 bytes by cp.async, bypassing L1. L2_LINE: ask L2 for the source's whole 128-byte line,
// where the line's other runs are read by neighbouring blocks or teams at about the same
// time (SoA staging: a run of an entry is 32 to 128 bytes; H100 run 125, gemm f64 SoA 32 x
// 32 0.446 -> 0.348 ms, 16 x 16 0.341 -> 0.323). cp_async16_to takes the destination as a
// shared-window address (__cvta_generic_to_shared of it), for loops that work it out once.
template <bool L2_LINE = false>
__device__ __forceinline__ void cp_async16_to(unsigned s, const void *src) {
    if constexpr (L2_LINE)
        asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
    else
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
}
template <bool L2_LINE = false>
__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
    cp_async16_to<L2_LINE>(static_cast<unsigned>(__cvta_generic_to_shared(dst)), src);
}
// One entry (4, 8 or 16 bytes) by cp.async, through L1.
template <class T>
__device__ __forceinline__ void cp_async_one(T *dst, const T *src) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(int(sizeof(T))) : "memory");
}

// The same to a shared-window address (__cvta_generic_to_shared of the destination).
template <class T>
__device__ __forceinline__ void cp_async_one_to(unsigned s, const T *src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(s), "l"(src), "n"(int(sizeof(T))) : "memory");
}

// Closes the thread's group of cp.async copies issued since the last commit.
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of the thread's committed groups are pending.
template <int N>
__device__ __forceinline__ void cp_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

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
