// Device helper shared by the batched kernels (cuda.cu, cholesky.cu).
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

}  // namespace apairs::batched
