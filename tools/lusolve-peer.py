#!/usr/bin/env python3
"""Times torch.linalg.lu_solve (nrhs = 1) at apairs_bench's getrs shapes, the peer that
../shared/bench/peers.py lacks (on the device machine, in the same call as apairs_bench).

Usage: python3 tools/lusolve-peer.py [N,N,...]    (default 16,32,64,128)

Shapes: B = 2^28 bytes of factors / (n^2 element bytes), as apairs_bench's mat_batch;
factors of uniform [0, 1) matrices plus n I by torch.linalg.lu_factor. Timing as peers.py:
CUDA events around each call, two warm-up calls, the median of 10.
"""
import sys

import torch

dev = torch.device("cuda")


def bench(fn, reps=10, warm=2):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


ns = [int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "16,32,64,128").split(",")]
for dt in (torch.float64, torch.float32):
    es = 8 if dt == torch.float64 else 4
    for n in ns:
        B = max(1, (1 << 28) // (n * n * es))
        A = torch.rand(B, n, n, device=dev, dtype=dt) + n * torch.eye(n, device=dev, dtype=dt)
        LU, piv = torch.linalg.lu_factor(A)
        b = torch.rand(B, n, 1, device=dev, dtype=dt)
        ms = bench(lambda: torch.linalg.lu_solve(LU, piv, b))
        print(f"lu_solve {str(dt)[6:]} n={n} B={B} {ms:.3f} ms", flush=True)
        del A, LU, piv, b
