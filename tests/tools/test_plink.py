#!/usr/bin/env python3
"""apairs --bfile ... --distance ... against PLINK 1.9 itself, byte for byte.

    test_plink.py APAIRS LIBAPAIRS [PLINK]

APAIRS is the apairs executable, LIBAPAIRS the library (for the IBS counts through
ctypes), PLINK the PLINK 1.9 executable (default: plink1.9 or plink on PATH; exit 77,
Meson's "skipped", when there is none). Python 3 standard library only.

Checks: on PLINK --dummy cohorts of awkward sizes (2 to 130 samples, 1 to 2053
variants) with 0, 5 and 30 % missing calls, every shape (square, square0, triangle)
and every matrix (allele-ct, ibs, 1-ibs), weighted and flat-missing: our .dist, .mibs,
.mdist and .id files equal PLINK's byte for byte; with variants on X, Y, MT and XY and
with non-founders (parents in the .fam); with comment lines in the .fam and .bim; the
IBS0 / IBS1 / IBS2 counts of the library
equal those of PLINK's --genome full; one sample gives "0"; malformed filesets (bad
magic bytes, individual-major .bed, a .bed size that does not match the .bim and .fam,
a short .fam line) fail with a message and write nothing, leaving older files as they
were.
"""
import ctypes
import os
import shutil
import subprocess
import sys
import tempfile

APAIRS = os.path.abspath(sys.argv[1])
LIB = os.path.abspath(sys.argv[2])
PLINK = sys.argv[3] if len(sys.argv) > 3 else (shutil.which("plink1.9") or shutil.which("plink"))

failures = []
checks = 0


def check(cond, what, detail=""):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}" + (f"\n      {detail}" if detail else ""), flush=True)


def run(args, cwd):
    if args[0] == PLINK:
        # PLINK reserves half the machine's memory unless told; under Meson, whose
        # MALLOC_PERTURB_ makes glibc fill every allocation, that costs seconds per run.
        args = args[:1] + ["--memory", "256"] + args[1:]
    # The ASan runtime a sanitized build preloads is for this process's ctypes only: a
    # sanitized apairs carries its own, and PLINK wants none.
    env = {k: v for k, v in os.environ.items() if k not in ("MALLOC_PERTURB_", "LD_PRELOAD")}
    return subprocess.run(args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)


def dummy(tmp, name, n, m, miss, seed):
    r = run([PLINK, "--dummy", str(n), str(m), str(miss), "--seed", str(seed), "--make-bed", "--out", name], tmp)
    assert r.returncode == 0, r.stdout.decode() + r.stderr.decode()
    return name


def compare(tmp, bfile, mods, what):
    """Run PLINK and apairs with the same --distance words; compare every file."""
    r = run([PLINK, "--bfile", bfile, "--distance"] + mods + ["--out", "p_" + bfile], tmp)
    if r.returncode != 0:
        check(False, f"{what}: plink failed", r.stdout.decode()[-800:])
        return
    a = run([APAIRS, "--bfile", bfile, "--distance"] + mods + ["--out", "a_" + bfile], tmp)
    check(a.returncode == 0, f"{what}: apairs exit status {a.returncode}", a.stderr.decode())
    for ext in ("dist", "mibs", "mdist"):
        for suffix in ("", ".id"):
            p = os.path.join(tmp, f"p_{bfile}.{ext}{suffix}")
            q = os.path.join(tmp, f"a_{bfile}.{ext}{suffix}")
            if not os.path.exists(p):
                check(not os.path.exists(q), f"{what}: apairs wrote {ext}{suffix}, PLINK did not")
                continue
            pb = open(p, "rb").read()
            qb = open(q, "rb").read() if os.path.exists(q) else b"<missing>"
            detail = ""
            if pb != qb:
                pl, ql = pb.split(b"\n"), qb.split(b"\n")
                for i, (x, y) in enumerate(zip(pl, ql)):
                    if x != y:
                        detail = f"line {i + 1}: plink {x[:200]!r}\n      apairs {y[:200]!r}"
                        break
                else:
                    detail = f"{len(pl)} vs {len(ql)} lines"
            check(pb == qb, f"{what}: {ext}{suffix} differs from PLINK's", detail)
            os.remove(p)
            if os.path.exists(q):
                os.remove(q)


def genome_counts(tmp, bfile, what):
    """IBS0/1/2 of PLINK's --genome full against the library's counts (ctypes)."""
    r = run([PLINK, "--bfile", bfile, "--genome", "full", "--out", "g_" + bfile], tmp)
    if r.returncode != 0:
        check(False, f"{what}: plink --genome failed", r.stdout.decode()[-500:])
        return
    rows = [l.split() for l in open(os.path.join(tmp, f"g_{bfile}.genome")).read().splitlines()]
    head, rows = rows[0], rows[1:]
    col = {name: head.index(name) for name in ("IID1", "IID2", "IBS0", "IBS1", "IBS2")}
    fam = [l.split() for l in open(os.path.join(tmp, bfile + ".fam")).read().splitlines()]
    index = {f[1]: i for i, f in enumerate(fam)}
    n = len(fam)
    bed = open(os.path.join(tmp, bfile + ".bed"), "rb").read()[3:]
    stride = (n + 3) // 4
    m = len(bed) // stride
    # Sample-major packed rows, from the SNP-major .bed.
    ld = (m + 3) // 4
    packed = bytearray(n * ld)
    for k in range(m):
        for i in range(n):
            code = (bed[k * stride + i // 4] >> (2 * (i % 4))) & 3
            packed[i * ld + k // 4] |= code << (2 * (k % 4))
    lib = ctypes.CDLL(LIB)
    lib.apairs_last_error.restype = ctypes.c_char_p
    ctx = ctypes.c_void_p()
    assert lib.apairs_context_create(ctypes.byref(ctx), 1, 0) == 0
    buf = (ctypes.c_uint8 * len(packed)).from_buffer(packed)
    counts = {}
    for metric, name in ((3, "IBS0"), (4, "IBS1"), (5, "IBS2")):
        plan = ctypes.c_void_p()
        D = (ctypes.c_int32 * (n * n))()
        st = lib.apairs_plan_create_genotype(ctypes.byref(plan), ctx, metric, 0, ctypes.c_int64(n),
                                             ctypes.c_int64(n), ctypes.c_int64(m), ctypes.c_int64(ld),
                                             ctypes.c_int64(ld), ctypes.c_int64(n), None)
        assert st == 0, lib.apairs_last_error().decode()
        assert lib.apairs_plan_execute_genotype(plan, buf, buf, D) == 0, lib.apairs_last_error().decode()
        lib.apairs_plan_destroy(plan)
        counts[name] = D
    lib.apairs_context_destroy(ctx)
    bad = 0
    for r in rows:
        i, j = index[r[col["IID1"]]], index[r[col["IID2"]]]
        for name in ("IBS0", "IBS1", "IBS2"):
            if int(r[col[name]]) != counts[name][i * n + j]:
                bad += 1
    check(bad == 0 and len(rows) == n * (n - 1) // 2, f"{what}: --genome IBS0/IBS1/IBS2 counts",
          f"{bad} differ over {len(rows)} pairs")


def test_dummies(tmp):
    sizes = [(2, 1), (3, 3), (4, 4), (5, 5), (63, 63), (65, 65), (5, 1031), (17, 1000), (130, 2053)]
    for n, m in sizes:
        for miss in (0, 0.05, 0.3):
            name = dummy(tmp, f"d{n}_{m}_{int(miss * 100)}", n, m, miss, n * 1000 + m)
            for shape in ("square", "square0", "triangle"):
                for flat in ([], ["flat-missing"]):
                    mods = [shape, "ibs", "1-ibs", "allele-ct"] + flat
                    compare(tmp, name, mods, f"{n} x {m}, {miss:.0%} missing, {' '.join(mods)}")
            compare(tmp, name, [], f"{n} x {m}, {miss:.0%} missing, --distance (defaults)")
            if n >= 2 and miss and m >= 63:
                genome_counts(tmp, name, f"{n} x {m}, {miss:.0%} missing")


def test_chromosomes_and_founders(tmp):
    name = dummy(tmp, "chrom", 23, 400, 0.1, 7)
    bim = open(os.path.join(tmp, name + ".bim")).read().splitlines()
    codes = ["1", "X", "2", "Y", "XY", "MT", "22"]  # each chromosome in one run, as PLINK needs
    with open(os.path.join(tmp, name + ".bim"), "w") as f:
        for k, line in enumerate(bim):
            parts = line.split("\t")
            parts[0] = codes[min(k // 60, len(codes) - 1)]
            f.write("\t".join(parts) + "\n")
    # Parents for some samples: the missing-call weights come from the founders only.
    fam = [l.split() for l in open(os.path.join(tmp, name + ".fam")).read().splitlines()]
    for i in range(3, 9):
        fam[i][2], fam[i][3] = fam[0][1], fam[1][1]
        fam[i][0] = fam[0][0] = fam[1][0] = "fam1"
    with open(os.path.join(tmp, name + ".fam"), "w") as f:
        f.write("".join(" ".join(x) + "\n" for x in fam))
    for mods in (["square", "ibs", "1-ibs", "allele-ct"], ["triangle", "flat-missing", "1-ibs"]):
        compare(tmp, name, mods, "X/Y/MT/XY variants and non-founders, " + " ".join(mods))


def test_comment_lines(tmp):
    """PLINK 1.9 skips .fam and .bim lines whose first non-blank character is '#'."""
    name = dummy(tmp, "cmt", 7, 31, 0.05, 11)
    for ext, header in ((".fam", "#FID IID PAT MAT SEX PHENO\n"), (".bim", "# variants\n")):
        path = os.path.join(tmp, name + ext)
        lines = open(path).read().splitlines(True)
        with open(path, "w") as f:  # one at the top, one indented in the middle
            f.write(header + "".join(lines[:3]) + "   # a note\n" + "".join(lines[3:]))
    compare(tmp, name, ["square", "ibs", "allele-ct"], "comment lines in the .fam and .bim")


def test_one_sample(tmp):
    name = dummy(tmp, "one", 1, 9, 0, 3)
    r = run([APAIRS, "--bfile", name, "--distance", "square", "ibs", "--out", "one_a"], tmp)
    check(r.returncode == 0 and open(os.path.join(tmp, "one_a.mibs")).read() == "1\n", "one sample: 1",
          r.stderr.decode())


def test_malformed(tmp):
    name = dummy(tmp, "bad", 6, 10, 0, 5)
    bed = open(os.path.join(tmp, name + ".bed"), "rb").read()
    fam = open(os.path.join(tmp, name + ".fam")).read()
    # An older output that a failed run must leave as it was.
    with open(os.path.join(tmp, "out.dist"), "w") as f:
        f.write("old\n")
    cases = [
        ("wrong magic bytes", b"\x6c\x1c" + bed[2:], fam, "not a PLINK 1 .bed"),
        ("individual-major", bed[:2] + b"\x00" + bed[3:], fam, "individual-major"),
        ("truncated .bed", bed[:-1], fam, "bytes"),
        ("extra .bed byte", bed + b"\x00", fam, "bytes"),
        (".fam with three samples more", bed, fam + "x y 0 0 1 1\nx z 0 0 1 1\nx w 0 0 1 1\n", "bytes"),
        (".fam line with 3 fields", bed, fam + "x y 0\n", "has 3 fields"),
        ("empty .bed", b"", fam, "not a PLINK 1 .bed"),
    ]
    for what, b, f, words in cases:
        with open(os.path.join(tmp, "m.bed"), "wb") as fh:
            fh.write(b)
        with open(os.path.join(tmp, "m.fam"), "w") as fh:
            fh.write(f)
        shutil.copy(os.path.join(tmp, name + ".bim"), os.path.join(tmp, "m.bim"))
        before = sorted(os.listdir(tmp))
        r = run([APAIRS, "--bfile", "m", "--distance", "square", "ibs", "allele-ct", "--out", "out"], tmp)
        err = r.stderr.decode()
        check(r.returncode == 1 and words in err, f"malformed ({what}): exit 1 naming the problem",
              f"exit {r.returncode}: {err}")
        check(sorted(os.listdir(tmp)) == before, f"malformed ({what}): nothing written",
              f"{set(os.listdir(tmp)) ^ set(before)}")
        check(open(os.path.join(tmp, "out.dist")).read() == "old\n", f"malformed ({what}): old output kept")
    r = run([APAIRS, "--bfile", "nonexistent", "--distance", "--out", "out"], tmp)
    check(r.returncode == 1 and "nonexistent.fam" in r.stderr.decode(), "missing fileset: names the file",
          r.stderr.decode())
    r = run([APAIRS, "--bfile", name, "--distance", "gz"], tmp)
    check(r.returncode == 1 and "gz" in r.stderr.decode(), "gz: refused", r.stderr.decode())


def main():
    if not PLINK:
        print("PLINK 1.9 not found (plink1.9 or plink on PATH; tools/install-deps.sh installs it): skipping")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        test_dummies(tmp)
        test_chromosomes_and_founders(tmp)
        test_comment_lines(tmp)
        test_one_sample(tmp)
        test_malformed(tmp)
    print(f"{checks} checks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
