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
with non-founders (parents in the .fam); with comment lines in the .fam and .bim; with
A1 the major allele, some variants with no A2 among the founders, 5-10 % missing
(PLINK's missing-call weights); with .bim files as PLINK reads them (negative bp
positions left out, a 5-column .bim, a #CHROM header line, every spelling of the
chromosome codes, bp fields like "+7" or "12abc"); the IBS0 / IBS1 / IBS2 counts of the
library equal those of PLINK's --genome full. Where PLINK refuses a fileset, apairs
refuses it too, with a message, writing nothing and leaving older files as they were:
invalid chromosome codes ("contig7", "27"), invalid bp coordinates, a split chromosome,
too few .bim fields, #CHROM header lines it does not read, an IID of "0", fewer than 2
samples, no variants left. Malformed filesets (bad magic bytes, individual-major .bed,
a .bed size that does not match the .bim and .fam, a short .fam line) fail in the same
way.
"""
import ctypes
import os
import random
import shutil
import subprocess
import sys
import tempfile

APAIRS = os.path.abspath(sys.argv[1])
LIB = os.path.abspath(sys.argv[2])
PLINK = sys.argv[3] if len(sys.argv) > 3 else (shutil.which("plink1.9") or shutil.which("plink"))

SQUARE_ALL = ["square", "allele-ct", "ibs", "1-ibs"]  # every matrix, weighted (the default)

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


def write_fileset(tmp, name, G, fam=None, bim=None):
    """A fileset from G[i][k], sample i's count of A2 alleles at variant k (0, 1, 2, or
    None for a missing call). fam: rows of 6 fields (default: founders f<i> i<i>); bim:
    lines (default: chromosome 1, six columns, A1 = A, A2 = C)."""
    n, m = len(G), len(G[0]) if G else 0
    fam = [[f"f{i}", f"i{i}", "0", "0", "1", "-9"] for i in range(n)] if fam is None else fam
    bim = [f"1\tv{k}\t0\t{k + 1}\tA\tC" for k in range(m)] if bim is None else bim
    with open(os.path.join(tmp, name + ".fam"), "w") as f:
        f.write("".join(" ".join(row) + "\n" for row in fam))
    with open(os.path.join(tmp, name + ".bim"), "w") as f:
        f.write("".join(line + "\n" for line in bim))
    code = {0: 0, 1: 2, 2: 3, None: 1}  # .bed: 00 hom A1, 10 het, 11 hom A2, 01 missing
    stride = (n + 3) // 4
    bed = bytearray(b"\x6c\x1b\x01")
    for k in range(m):
        row = bytearray(stride)
        for i in range(n):
            row[i // 4] |= code[G[i][k]] << (2 * (i % 4))
        bed += row
    with open(os.path.join(tmp, name + ".bed"), "wb") as f:
        f.write(bed)
    return name


def genotypes(n, m, miss, seed):
    rng = random.Random(seed)
    G = [[None] * m for _ in range(n)]
    for k in range(m):
        q = rng.random()
        for i in range(n):
            if rng.random() >= miss:
                G[i][k] = (rng.random() < q) + (rng.random() < q)
    return G


def both_fail(tmp, bfile, what, words):
    """PLINK refuses the fileset: apairs must refuse it too, with a message containing
    words, writing nothing and leaving an older output as it was."""
    mods = ["square", "ibs", "allele-ct"]
    r = run([PLINK, "--bfile", bfile, "--distance"] + mods + ["--out", "p_" + bfile], tmp)
    check(r.returncode != 0, f"{what}: PLINK accepts it, so the case is wrong", r.stdout.decode()[-300:])
    for f in os.listdir(tmp):
        if f.startswith("old."):
            os.remove(os.path.join(tmp, f))
    with open(os.path.join(tmp, "old.dist"), "w") as f:
        f.write("old\n")
    before = sorted(os.listdir(tmp))
    a = run([APAIRS, "--bfile", bfile, "--distance"] + mods + ["--out", "old"], tmp)
    err = a.stderr.decode()
    check(a.returncode == 1 and words in err, f"{what}: apairs exit 1 naming the problem",
          f"exit {a.returncode}: {err}")
    check(sorted(os.listdir(tmp)) == before, f"{what}: apairs wrote nothing", f"{set(os.listdir(tmp)) ^ set(before)}")
    check(open(os.path.join(tmp, "old.dist")).read() == "old\n", f"{what}: old output kept")


def test_major_a1(tmp):
    """A1 the major allele (PLINK flips the frequency to the major allele for its
    missing-call weights), some variants with every founder call A1 (A2 frequency 0
    among the founders, though non-founders carry A2), 5-10 % missing calls."""
    rng = random.Random(23)
    n, m = 41, 300
    G = [[None] * m for _ in range(n)]
    for k in range(m):
        q = 0.0 if k % 6 == 0 else rng.uniform(0.01, 0.45)  # A2 frequency among the founders
        miss = rng.uniform(0.05, 0.10)
        for i in range(n):
            p = 0.3 if (i < 6 and q == 0.0) else q  # samples 0-5 are not founders
            if rng.random() >= miss:
                G[i][k] = (rng.random() < p) + (rng.random() < p)
    fam = [[f"f{i}", f"i{i}", "0", "0", str(1 + i % 2), "-9"] for i in range(n)]
    for i in range(6):
        fam[i][2], fam[i][3] = "i6", "i7"
    name = write_fileset(tmp, "major", G, fam)
    what = "A1 major, A2 absent from the founders on some variants"
    compare(tmp, name, SQUARE_ALL, what + ", " + " ".join(SQUARE_ALL))
    compare(tmp, name, [], what + ", --distance (defaults)")


def test_bim_rules(tmp):
    """The .bim as PLINK 1.9 reads it (load_bim, get_chrom_code_raw)."""
    n, m = 13, 48
    G = genotypes(n, m, 0.08, 31)
    six = [f"1\tv{k}\t0\t{k + 1}\tA\tC" for k in range(m)]

    # Negative bp positions: left out. "+7", "12abc", "1.5" and "-0" are read as 7, 12,
    # 1 and 0 (PLINK reads digits up to the first non-digit).
    bim = list(six)
    for k in range(0, m, 5):
        bim[k] = f"1\tv{k}\t0\t-{k + 1}\tA\tC"
    for k, pos in ((1, "+7"), (2, "12abc"), (3, "1.5"), (4, "-0"), (6, "-2147483646")):
        bim[k] = f"1\tv{k}\t0\t{pos}\tA\tC"
    bim[7] = "1\tv7\t0\t8"  # later lines need only the fields up to the position
    compare(tmp, write_fileset(tmp, "negpos", G, bim=bim), SQUARE_ALL, "negative bp positions left out")

    # Five columns (no cM): PLINK sees no sixth field on the first variant line.
    bim = [f"1\tv{k}\t{-(k + 1) if k % 7 == 3 else k + 1}\tA\tC" for k in range(m)]
    compare(tmp, write_fileset(tmp, "five", G, bim=["# a comment"] + bim), SQUARE_ALL, "5-column .bim")

    # A "#CHROM ID POS ALT REF" header sets the layout: no cM column, so on these
    # six-field lines PLINK reads the position from the third field (0), not the fourth.
    bim = ["#CHROM\tID\tPOS\tALT\tREF"] + [f"1\tv{k}\t0\t{-(k + 1) if k % 3 else k + 1}\tA\tC" for k in range(m)]
    compare(tmp, write_fileset(tmp, "header", G, bim=bim), SQUARE_ALL, "#CHROM header without CM")

    # Chromosome codes, each chromosome in one run of lines: 0 (unplaced) and XY stay,
    # 0X, 0Y and 0M (Oxford) are X, Y and MT and are left out, as X, Y and MT are.
    runs = [["00", "0"], ["chr1", "Chr01", "1"], ["02"], ["0x", "X", "chrX", "23"], ["3"], ["0Y", "y", "24"],
            ["xy", "chrXY", "25"], ["0m", "MT", "chrM", "26"], ["chr22", "22"]]
    codes = [c for run in runs for c in run]
    bim = [f"{codes[k * len(codes) // m]}\tv{k}\t0\t{k + 1}\tA\tC" for k in range(m)]
    fam = [[f"f{i}" if i else "0", f"i{i}", "0", "0", "1", "-9"] for i in range(n)]  # an FID "0" is allowed
    compare(tmp, write_fileset(tmp, "codes", G, fam, bim), SQUARE_ALL, "chromosome codes 00, chr1, 0X, 0Y, xy, 0m...")

    # What PLINK refuses.
    def fail(what, bim, words):
        both_fail(tmp, write_fileset(tmp, "refused", G, bim=bim), what, words)

    for code in ("contig7", "27", "chr", "0MT", "chrchr1", "X1"):
        fail(f"chromosome code '{code}'", six[:20] + [f"{code}\tv20\t0\t21\tA\tC"] + six[21:], "chromosome code")
    for pos in ("abc", "2147483647", "--1", "-"):
        fail(f"bp coordinate '{pos}'", six[:5] + [f"1\tv5\t0\t{pos}\tA\tC"] + six[6:], "bp coordinate")
    fail("split chromosome", [f"{1 + k // 10 % 2}\tv{k}\t0\t{k + 1}\tA\tC" for k in range(m)], "split")
    fail("first .bim line with 4 fields", ["1\tv0\t0\t1"] + six[1:], "has 4 fields")
    fail(".bim line with 3 fields", six[:9] + ["1\tv9\t0"] + six[10:], "has 3 fields")
    fail("#CHROM header in PLINK 2's column order", ["#CHROM\tPOS\tID\tREF\tALT"] + six, "column order")
    header = "#CHROM\tID\tCM\tPOS\tALT\tREF"
    fail("two #CHROM header lines", [header] + six[:3] + [header] + six[3:], "#CHROM")
    fail("every variant negative or on X",
         [f"1\tv{k}\t0\t-{k + 1}\tA\tC" if k < m // 2 else f"X\tv{k}\t0\t{k + 1}\tA\tC" for k in range(m)],
         "no variants left")


def test_fam_rules(tmp):
    G = genotypes(5, 20, 0.05, 41)
    fam = [[f"f{i}", f"i{i}", "0", "0", "1", "-9"] for i in range(5)]
    fam[3][1] = "0"
    both_fail(tmp, write_fileset(tmp, "iid0", G, fam), "IID '0'", "IID '0'")
    both_fail(tmp, write_fileset(tmp, "one", G[:1]), "one sample", "at least 2")
    write_fileset(tmp, "nobody", [], [], [f"1\tv{k}\t0\t{k + 1}\tA\tC" for k in range(20)])
    both_fail(tmp, "nobody", "no samples", "at least 2")


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
        test_major_a1(tmp)
        test_bim_rules(tmp)
        test_fam_rules(tmp)
        test_malformed(tmp)
    print(f"{checks} checks, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
