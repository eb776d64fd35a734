#!/usr/bin/env python3
"""Times torch where ../shared/bench/peers.py has no row, on the device machine, in the
same call as apairs_bench (its rows' shapes). Timing as peers.py: CUDA events around each
call, two warm-up calls, the median of 10.

Usage: python3 tools/torch-peers.py lu_solve [N,N,...]   (default 16,32,64,128)
       python3 tools/torch-peers.py soa-gemm [N,N,...]   (default 2,4,8,16,32,64)

lu_solve: torch.linalg.lu_solve with one right-hand side, at the getrs rows' shapes:
  B = 2^28 bytes of factors / (n^2 element bytes), as apairs_bench's mat_batch; factors
  of uniform [0, 1) matrices plus n I by torch.linalg.lu_factor.

soa-gemm: batched gemm of interleaved (SoA) elements. peers.py's 'gemm (bmm, cuBLAS)'
  rows take contiguous (AoS) elements, which is what our AoS rows are compared with. A
  torch user whose elements are interleaved, entry (i, j) of every element stored
  together as in apairs_bench's SoA rows, has no batched gemm that reads them:
  torch.matmul on the permuted views copies them to contiguous elements first, and the
  product comes back contiguous, to be interleaved again. Shapes as apairs_bench's SoA
  gemm rows: B = max(1, 2^30 / (n^2 element bytes) / 4) elements, the batch stride B
  rounded up to 32; A, B, C tensors of shape (n, n, stride) (row-major entries, elements
  last), uniform [0, 1) inputs. Two forms, each writing C in place as our plans do:
  matmul of the permuted views, then C's copy back into the interleaved layout; and
  torch.einsum('ike,kje->ije') into a new tensor, copied the same way. The row's time is
  the faster form's; torch.bmm of the same count of contiguous elements (peers.py's
  row) is timed beside it.
"""
import sys

import torch

dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False


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


def lu_solve(ns, dt):
    es = 8 if dt == torch.float64 else 4
    for n in ns:
        B = max(1, (1 << 28) // (n * n * es))
        A = torch.rand(B, n, n, device=dev, dtype=dt) + n * torch.eye(n, device=dev, dtype=dt)
        LU, piv = torch.linalg.lu_factor(A)
        b = torch.rand(B, n, 1, device=dev, dtype=dt)
        ms = bench(lambda: torch.linalg.lu_solve(LU, piv, b))
        print(f"lu_solve {str(dt)[6:]} n={n} B={B} {ms:.3f} ms", flush=True)
        del A, LU, piv, b


def soa_gemm(ns, dt):
    es = 8 if dt == torch.float64 else 4
    for n in ns:
        B = max(1, (1 << 30) // (n * n * es) // 4)
        S = (B + 31) // 32 * 32
        a = torch.rand(n, n, S, device=dev, dtype=dt)[:, :, :B]
        b = torch.rand(n, n, S, device=dev, dtype=dt)[:, :, :B]
        c = torch.full((n, n, S), float("nan"), device=dev, dtype=dt)[:, :, :B]

        def by_matmul():
            c.copy_(torch.matmul(a.permute(2, 0, 1), b.permute(2, 0, 1)).permute(1, 2, 0))

        def by_einsum():
            c.copy_(torch.einsum("ike,kje->ije", a, b))

        t_mm = bench(by_matmul)
        ref = c.clone()
        t_es = bench(by_einsum)
        # (the two forms must agree: both are cuBLAS's products of the same elements)
        assert torch.allclose(ref, c, rtol=1e-5 if es == 4 else 1e-12, atol=0), "the two forms disagree"
        t = min(t_mm, t_es)
        del a, b, c, ref
        a = torch.rand(B, n, n, device=dev, dtype=dt)
        b = torch.rand(B, n, n, device=dev, dtype=dt)
        c = torch.empty(B, n, n, device=dev, dtype=dt)
        t_bmm = bench(lambda: torch.bmm(a, b, out=c))
        gbs = 3 * B * n * n * es / t / 1e6
        print(f"gemm SoA (torch matmul of interleaved elements) {str(dt)[6:]} n={n} B={B} {t:.3f} ms "
              f"{gbs:.1f} GB/s (matmul + copy {t_mm:.3f}, einsum + copy {t_es:.3f}; bmm of contiguous "
              f"elements {t_bmm:.3f})", flush=True)
        del a, b, c


cases = {"lu_solve": (lu_solve, "16,32,64,128"), "soa-gemm": (soa_gemm, "2,4,8,16,32,64")}
if len(sys.argv) not in (2, 3) or sys.argv[1] not in cases:
    sys.exit(__doc__)
run, default = cases[sys.argv[1]]
ns = [int(x) for x in (sys.argv[2] if len(sys.argv) == 3 else default).split(",")]
for dt in (torch.float64, torch.float32):
    run(ns, dt)
