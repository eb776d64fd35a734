#!/usr/bin/env python3
# Used by tools/gpu-notes.md, run 3: python3 tools/l2-accuracy.py path/to/apairs (needs numpy, torch, a GPU).
# Small distances: libapairs (direct differences) vs torch.cdist with and without the
# matrix-product expansion, against float64 on the same float32 inputs.
import subprocess, sys, numpy as np, torch
rng = np.random.default_rng(1)
n, d = 2000, 128
a = rng.random((n, d), dtype=np.float32)
b = (a + np.float32(1e-3) * rng.random((n, d), dtype=np.float32)).astype(np.float32)
np.save("/tmp/A.npy", a); np.save("/tmp/B.npy", b)
ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
exact = torch.cdist(ta.double(), tb.double(), compute_mode="donot_use_mm_for_euclid_dist")
def worst(D, tag):
    diag = torch.arange(n, device="cuda")
    rel = ((D.double() - exact).abs() / exact)
    print(f"{tag:34s} max rel error {rel.max().item():.3e}  on the near-duplicate pairs {rel[diag, diag].max().item():.3e}")
worst(torch.cdist(ta, tb, compute_mode="use_mm_for_euclid_dist"), "torch.cdist p=2 (mm)")
worst(torch.cdist(ta, tb, compute_mode="donot_use_mm_for_euclid_dist"), "torch.cdist p=2 (no-mm)")
subprocess.run([sys.argv[1], "--metric", "l2", "/tmp/A.npy", "/tmp/B.npy", "-o", "/tmp/D.npy"], check=True, stdout=subprocess.DEVNULL)
worst(torch.from_numpy(np.load("/tmp/D.npy")).cuda(), "libapairs l2 (cuda)")
print("u(f32) * (d + 4) =", 2**-24 * (d + 4))
