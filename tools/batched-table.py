#!/usr/bin/env python3
"""Rewrites the rows of README.md's batched table (*Batched plans*, "Speed today") from
the two files `tools/device-run.sh run --batched [--passes N]` leaves in its $OUT:

    tools/batched-table.py OUT/batched.json OUT/peers-batched.json [README.md]

Each row `| op type | shape | ours AoS / SoA (ms) | fraction of bound | peer (ms) |
peer / ours |` already in the table is filled in again (the fraction from the spot-check
line of apairs_bench, against the copy bandwidth measured in the same pass); rows are
neither added nor removed, and the text around the table is left for the author. A
row of ours whose spot check failed ('CHECK FAILED') makes it refuse, naming the rows,
and leave the README as it was.
"""
import json
import re
import sys


def fraction(check):
    m = re.search(r"([0-9.]+)% of it reached", check or "")
    return f"{float(m.group(1)):.0f} %" if m else "-"


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    readme = sys.argv[3] if len(sys.argv) == 4 else "README.md"
    rows = json.load(open(sys.argv[1]))["rows"]
    # A row whose spot check failed is no measurement to publish (device-run.sh keeps one
    # only when every pass of it failed).
    bad = [f"{r['name']} {r['shape']}: {r['check']}" for r in rows
           if str(r.get("check") or "").startswith("CHECK FAILED")]
    if bad:
        sys.exit(f"{sys.argv[1]}: {len(bad)} row(s) failed their spot check; {readme} left as it was:\n  " +
                 "\n  ".join(bad))
    ours = {}
    for r in rows:
        # 'apairs gemm AoS float64', 'apairs potrs nrhs=1 SoA float32', 'apairs transpose AoS->SoA float64'
        m = re.match(r"apairs (\w+)(?: nrhs=1)? (AoS|SoA|AoS->SoA) (float\d+)$", r["name"])
        if m:
            layout = "" if m.group(2) == "AoS->SoA" else m.group(2)
            ours[(m.group(1), m.group(3), r["shape"], layout)] = r
    # 'gemm (bmm, cuBLAS) float64' -> ('gemm', 'float64', shape): ms, '(bmm, cuBLAS)'
    peers = {}
    for r in json.load(open(sys.argv[2]))["rows"]:
        w = r["name"].split(" ")
        peers[(w[0], w[-1], r["shape"])] = (r["ms"], " ".join(w[1:-1]))
    lines = open(readme).read().split("\n")
    done = 0
    for i, ln in enumerate(lines):
        m = re.match(r"\| (\w+) (float\d+) \| (n=\d+ B=\d+) \|", ln)
        if not m or ln.count("|") != 7:
            continue
        op, ty, shape = m.groups()
        a, s = ours.get((op, ty, shape, "AoS")), ours.get((op, ty, shape, "SoA"))
        if a is None or s is None:
            t = ours.get((op, ty, shape, ""))
            if t is None:
                sys.exit(f"no measurement for the row {op} {ty} {shape}")
            lines[i] = f"| {op} {ty} | {shape} | {t['ms']:.3f} | {fraction(t['check'])} | - | - |"
        else:
            p = peers.get((op, ty, shape))
            peer, ratio = ("-", "-") if p is None else (f"{p[0]:.3f} {p[1]}", f"{p[0] / a['ms']:.2f}x / {p[0] / s['ms']:.2f}x")
            lines[i] = (f"| {op} {ty} | {shape} | {a['ms']:.3f} / {s['ms']:.3f} | "
                        f"{fraction(a['check'])} / {fraction(s['check'])} | {peer} | {ratio} |")
        done += 1
    open(readme, "w").write("\n".join(lines))
    print(f"{done} rows rewritten in {readme}")


if __name__ == "__main__":
    main()
