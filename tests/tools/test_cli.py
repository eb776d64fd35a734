#!/usr/bin/env python3
"""The apairs command-line program (and apairs_bench's --json) as users meet them.

    test_cli.py APAIRS [APAIRS_BENCH]

APAIRS is the apairs executable; APAIRS_BENCH defaults to apairs_bench beside it (its
checks are skipped, saying so, when there is none). Python 3 standard library only.

Checks: .npy headers that lie about their size (size_t wrap-around, petabytes in a
small file; regular files and pipes) fail with exit status 1 and a message naming the
file and the shape, and write nothing; leading zeros in the shape are refused as NumPy
refuses them; truncated data is reported; a valid file (also through a pipe, larger
than the reader's first chunk) gives a valid .npy; the dtypes '=f4', '|f4', 'f4' (f8,
u1 the same) read as NumPy reads them; a directory as input says why; out-of-range
numbers say so; a bad -o fails before any work and leaves no temporary file; the
output is replaced atomically (a file-size limit leaves the old file byte-identical and
no temporary file); permissions are those fopen would give; names of up to 255 bytes
are written; a dangling symbolic link makes the file it points to; SIGTERM removes the
temporary file; apairs_bench --json goes through the same atomic writer, and its
integer options are range-checked.
"""
import ast
import math
import os
import resource
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

APAIRS = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
BENCH = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None

failures = []
checks = 0


def check(cond, what, detail=""):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print(f"FAIL: {what}" + (f"\n      {detail}" if detail else ""), flush=True)


def npy_bytes(descr, shape, body, version=1):
    """A .npy file whose header says descr and shape (a string, written verbatim)."""
    h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).encode()
    prefix = 10 if version == 1 else 12
    h += b" " * ((64 - (prefix + len(h) + 1) % 64) % 64) + b"\n"
    length = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + length + h + body


def parse_npy(data):
    """(descr, fortran_order, shape, payload) of a .npy file's bytes; raises on a bad one."""
    assert data[:6] == b"\x93NUMPY", "magic"
    major = data[6]
    if major == 1:
        (hl,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hl,) = struct.unpack("<I", data[8:12])
        start = 12
    header = data[start:start + hl].decode("latin1")
    assert (start + hl) % 64 == 0, "header not padded to 64 bytes"
    assert header.endswith("\n"), "header does not end in a newline"
    d = ast.literal_eval(header)
    assert set(d) == {"descr", "fortran_order", "shape"}, d
    return d["descr"], d["fortran_order"], d["shape"], data[start + hl:]


def run(args, cwd, stdin_data=None, preexec=None, timeout=120):
    return subprocess.run([APAIRS] + args, cwd=cwd, input=stdin_data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, preexec_fn=preexec, timeout=timeout)


def text(b):
    return b.decode("utf-8", "replace")


def listing(d):
    return sorted(os.listdir(d))


def sanitizer_free(r):
    e = text(r.stderr)
    return "Sanitizer" not in e and "runtime error" not in e


def fsize_limit(nbytes):
    def f():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return f


# The four size_t wrap-around shapes of issue 5 and a petabyte claim in a tiny file.
LYING = [
    ("wrap-f4.npy", "<f4", 1, 2**62 - 1),
    ("wrap-u1-2.npy", "|u1", 2, 2**63 - 1),
    ("wrap-u1-3.npy", "|u1", 3, (2**64 - 1) // 3),
    ("wrap-f8.npy", "<f8", 1, 2**61 - 1),
    ("peta.npy", "<f8", 1000000, 125000000),   # 10^15 bytes
    ("huge.npy", "<f8", 2**62, 2**62),         # overflows 64 bits many times over
]
ITEM = {"<f4": 4, "<f8": 8, "|u1": 1}


def test_lying_headers(tmp):
    body = b"A" * 4096
    for name, descr, rows, cols in LYING:
        path = os.path.join(tmp, name)
        with open(path, "wb") as f:
            f.write(npy_bytes(descr, "(%d, %d)" % (rows, cols), body))
        shape = "(%d, %d)" % (rows, cols)
        needs = str(rows * cols * ITEM[descr])
        before = listing(tmp)
        r = run([name, "-o", "out.npy"], tmp)
        err = text(r.stderr)
        check(r.returncode == 1, f"{name}: exit status 1", f"got {r.returncode}; stderr: {err[-600:]}")
        check(sanitizer_free(r), f"{name}: no sanitizer report", err[-600:])
        check(name in err and shape in err, f"{name}: the message names the file and the shape {shape}", err)
        check(needs in err and "4096" in err, f"{name}: the message says the bytes needed ({needs}) and present (4096)",
              err)
        check("out of host memory" not in err, f"{name}: not reported as out of memory", err)
        check(listing(tmp) == before, f"{name}: nothing written", f"{before} -> {listing(tmp)}")
        # The same through a pipe (not seekable: the reader must not trust the header).
        r = run(["/dev/stdin", "-o", "out.npy"], tmp, stdin_data=npy_bytes(descr, shape, body))
        err = text(r.stderr)
        check(r.returncode == 1, f"{name} through a pipe: exit status 1", f"got {r.returncode}; stderr: {err[-600:]}")
        check(sanitizer_free(r), f"{name} through a pipe: no sanitizer report", err[-600:])
        check(shape in err and "out of host memory" not in err,
              f"{name} through a pipe: the message names the shape", err)
        check(listing(tmp) == before, f"{name} through a pipe: nothing written", f"{before} -> {listing(tmp)}")


def test_header_and_data(tmp):
    six = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    for shape in ["(03, 2)", "(3, 02)", "(3, 00002)"]:
        with open(os.path.join(tmp, "lz.npy"), "wb") as f:
            f.write(npy_bytes("<f4", shape, six))
        r = run(["lz.npy", "-o", "out.npy"], tmp)
        err = text(r.stderr)
        check(r.returncode == 1 and "leading zero" in err, f"shape {shape}: leading zeros refused", err)
    # All zeros is a valid Python literal (0): then refused as empty, not as malformed.
    with open(os.path.join(tmp, "zero.npy"), "wb") as f:
        f.write(npy_bytes("<f4", "(00, 2)", b""))
    r = run(["zero.npy", "-o", "out.npy"], tmp)
    err = text(r.stderr)
    check(r.returncode == 1 and "leading zero" not in err and "empty" in err, "shape (00, 2): read as (0, 2)", err)
    # Text after the header's dictionary (NumPy: "Cannot parse header").
    h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }garbage"
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    with open(os.path.join(tmp, "tail.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + six)
    r = run(["tail.npy", "-o", "out.npy"], tmp)
    err = text(r.stderr)
    check(r.returncode == 1 and "after the dictionary" in err, "text after the header's dictionary: refused", err)
    check(not os.path.exists(os.path.join(tmp, "out.npy")), "text after the header's dictionary: nothing written")
    # Truncated data.
    with open(os.path.join(tmp, "short.npy"), "wb") as f:
        f.write(npy_bytes("<f4", "(3, 2)", six[:20]))
    r = run(["short.npy", "-o", "out.npy"], tmp)
    err = text(r.stderr)
    check(r.returncode == 1 and "short.npy" in err and "(3, 2)" in err and "24" in err and "20" in err,
          "truncated data: the message says shape, bytes needed and present", err)
    check(not os.path.exists(os.path.join(tmp, "out.npy")), "truncated data: nothing written")


def check_l2_output(path, rows, what):
    with open(path, "rb") as f:
        data = f.read()
    try:
        descr, fortran, shape, payload = parse_npy(data)
    except Exception as e:  # noqa: BLE001
        check(False, f"{what}: the output is a valid .npy", repr(e))
        return
    n = len(rows)
    check(descr == "<f4" and fortran is False and shape == (n, n), f"{what}: header", f"{descr} {fortran} {shape}")
    check(len(payload) == n * n * 4, f"{what}: data length", f"{len(payload)} != {n * n * 4}")
    if len(payload) == n * n * 4:
        D = struct.unpack("<%df" % (n * n), payload)
        ok = all(abs(D[i * n + j] - math.dist(rows[i], rows[j])) <= 1e-5 * (1 + math.dist(rows[i], rows[j]))
                 for i in range(n) for j in range(n))
        check(ok, f"{what}: values are the L2 distances", str(D))


def test_valid(tmp):
    rows = [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]
    body = struct.pack("<6f", *[x for r in rows for x in r])
    with open(os.path.join(tmp, "ok.npy"), "wb") as f:
        f.write(npy_bytes("<f4", "(3, 2)", body))
    r = run(["ok.npy", "-o", "D.npy", "--backend", "host"], tmp)
    check(r.returncode == 0, "valid file: exit status 0", text(r.stderr))
    check_l2_output(os.path.join(tmp, "D.npy"), rows, "valid file")
    # Format version 2.0, through a pipe.
    r = run(["/dev/stdin", "-o", "D2.npy", "--backend", "host"], tmp,
            stdin_data=npy_bytes("<f4", "(3, 2)", body, version=2))
    check(r.returncode == 0, "valid file through a pipe: exit status 0", text(r.stderr))
    check_l2_output(os.path.join(tmp, "D2.npy"), rows, "valid file through a pipe")
    # Larger than the reader's first chunk (1 MiB), through a pipe: 2 x 300000 float32,
    # row 0 all 0, row 1 all 1, so the L1 distance is exactly 300000.
    d = 300000
    big = npy_bytes("<f4", "(2, %d)" % d, struct.pack("<%df" % d, *([0.0] * d)) + struct.pack("<%df" % d, *([1.0] * d)))
    r = run(["/dev/stdin", "-o", "D3.npy", "--backend", "host", "--metric", "l1"], tmp, stdin_data=big)
    check(r.returncode == 0, "2.4 MB file through a pipe: exit status 0", text(r.stderr))
    try:
        with open(os.path.join(tmp, "D3.npy"), "rb") as f:
            descr, _, shape, payload = parse_npy(f.read())
        D = struct.unpack("<4f", payload)
        check(shape == (2, 2) and D == (0.0, float(d), float(d), 0.0), "2.4 MB file through a pipe: D", str(D))
    except Exception as e:  # noqa: BLE001
        check(False, "2.4 MB file through a pipe: valid output", repr(e))
    # Cut short through a pipe.
    r = run(["/dev/stdin", "-o", "D4.npy"], tmp, stdin_data=big[:len(big) - 1000])
    err = text(r.stderr)
    check(r.returncode == 1 and "(2, 300000)" in err and "2400000" in err and "2399000" in err,
          "truncated file through a pipe: bytes needed and present", err)
    check(not os.path.exists(os.path.join(tmp, "D4.npy")), "truncated file through a pipe: nothing written")


def test_dtypes(tmp):
    # The byte order as '=', '|' or nothing is the host's (little-endian) to NumPy: the
    # same array as '<f4' / '<f8' (uint8: as '|u1').
    rows = [(1.0, 2.0), (3.0, 4.0), (5.0, 6.0)]
    flat = [x for r in rows for x in r]
    bodies = {"f4": struct.pack("<6f", *flat), "f8": struct.pack("<6d", *flat), "u1": bytes([0, 1, 2, 1, 0, 2])}
    for ty, body in bodies.items():
        extra = ["--metric", "hamming"] if ty == "u1" else []
        outs = {}
        for prefix in ("<", "=", "|", ""):
            with open(os.path.join(tmp, "in.npy"), "wb") as f:
                f.write(npy_bytes(prefix + ty, "(3, 2)", body))
            r = run(["in.npy", "-o", "D.npy", "--backend", "host"] + extra, tmp)
            check(r.returncode == 0, f"dtype '{prefix}{ty}': read", text(r.stderr))
            if r.returncode == 0:
                with open(os.path.join(tmp, "D.npy"), "rb") as f:
                    outs[prefix] = f.read()
        check(len(set(outs.values())) == 1, f"dtype {ty}: every byte-order spelling gives the same D")
    with open(os.path.join(tmp, "be.npy"), "wb") as f:
        f.write(npy_bytes(">f4", "(3, 2)", bodies["f4"]))
    r = run(["be.npy", "-o", "D.npy"], tmp)
    check(r.returncode == 1 and "big-endian" in text(r.stderr), "dtype '>f4': refused as big-endian", text(r.stderr))
    # A directory as input: the reason (errno's), not "not a .npy file".
    os.mkdir(os.path.join(tmp, "adir"))
    r = run(["adir", "-o", "D.npy"], tmp)
    err = text(r.stderr)
    check(r.returncode == 1 and "adir" in err and os.strerror(21) in err and "not a .npy" not in err,
          "a directory as input: errno's message", err)


def test_numbers(tmp):
    for args in (["--metric", "lp", "--p", "1e999"], ["--metric", "lp", "--p", "1e-400"], ["--occupancy", "1e999"],
                 ["--n", "99999999999999999999999"]):
        r = run(args + ["-o", "out.npy"], tmp)
        err = text(r.stderr)
        check(r.returncode == 1 and "out of range" in err and "not a number" not in err and "not a whole" not in err,
              f"{' '.join(args)}: says out of range", err)
        rng = "[1, 1099511627776]" if args[0] == "--n" else "1.7976931348623157e+308"
        check(rng in err, f"{' '.join(args)}: says the range {rng}", err)
    check(not os.path.exists(os.path.join(tmp, "out.npy")), "bad numbers: nothing written")


def no_work(r):
    out = text(r.stdout)
    return "plan:" not in out and "time:" not in out and "input:" not in out


def test_bad_output(tmp):
    os.mkdir(os.path.join(tmp, "adir"))
    before = listing(tmp)
    r = run(["--n", "600", "-o", "missing/D.npy"], tmp)
    err = text(r.stderr)
    check(r.returncode == 1 and "missing/D.npy" in err and "missing" in err, "-o missing/D.npy: fails", err)
    check(no_work(r), "-o missing/D.npy: fails before any work", text(r.stdout))
    r = run(["--n", "600", "-o", "adir"], tmp)
    err = text(r.stderr)
    check(r.returncode == 1 and "adir" in err and "directory" in err, "-o naming a directory: fails", err)
    check(no_work(r), "-o naming a directory: fails before any work", text(r.stdout))
    r = run(["--n", "600", "-o", "adir/"], tmp)
    check(r.returncode == 1 and no_work(r), "-o adir/: fails before any work", text(r.stderr))
    with open(os.path.join(tmp, "plainfile"), "w") as f:
        f.write("x")
    before = listing(tmp)
    r = run(["--n", "600", "-o", "plainfile/D.npy"], tmp)
    check(r.returncode == 1 and no_work(r) and "plainfile/D.npy" in text(r.stderr),
          "-o under a regular file: fails before any work", text(r.stderr))
    check(listing(tmp) == before and listing(os.path.join(tmp, "adir")) == [], "bad -o: no temporary file left",
          f"{before} -> {listing(tmp)}; adir: {listing(os.path.join(tmp, 'adir'))}")
    # An unreadable input with a good -o: the temporary file is removed on that path too.
    r = run(["nosuch.npy", "-o", "D.npy"], tmp)
    check(r.returncode == 1 and "nosuch.npy" in text(r.stderr), "missing input: fails", text(r.stderr))
    check(listing(tmp) == before, "missing input: no temporary file left", f"{before} -> {listing(tmp)}")
    # A special file is written directly.
    r = run(["--n", "50", "-o", "/dev/null", "--backend", "host"], tmp)
    check(r.returncode == 0, "-o /dev/null works", text(r.stderr))


def test_atomic(tmp):
    target = os.path.join(tmp, "D.npy")
    old = b"old contents of D.npy, not a .npy file\n" * 10
    with open(target, "wb") as f:
        f.write(old)
    os.chmod(target, 0o640)
    before = listing(tmp)
    # 600 x 600 float32 is 1.44 MB; the limit lets the header through, not the data.
    r = run(["--n", "600", "--backend", "host", "-o", "D.npy"], tmp, preexec=fsize_limit(64 * 1024))
    err = text(r.stderr)
    check(r.returncode == 1, "file-size limit: exit status 1 (not killed by SIGXFSZ)",
          f"got {r.returncode}; stderr: {err}")
    check("D.npy" in err and "write failed" in err and "too large" in err.lower(),
          "file-size limit: the message says the write failed and why", err)
    with open(target, "rb") as f:
        check(f.read() == old, "file-size limit: the old D.npy is byte-identical")
    check(listing(tmp) == before, "file-size limit: no temporary file left", f"{before} -> {listing(tmp)}")
    # Without the limit: replaced by a valid file, same permissions, no temporary file.
    r = run(["--n", "600", "--backend", "host", "-o", "D.npy"], tmp)
    check(r.returncode == 0, "no limit: exit status 0", text(r.stderr))
    with open(target, "rb") as f:
        data = f.read()
    try:
        descr, fortran, shape, payload = parse_npy(data)
        check(descr == "<f4" and shape == (600, 600) and len(payload) == 600 * 600 * 4,
              "no limit: D.npy replaced by a valid 600 x 600 float32 .npy", f"{descr} {shape} {len(payload)}")
    except Exception as e:  # noqa: BLE001
        check(False, "no limit: D.npy is a valid .npy", repr(e))
    check(stat.S_IMODE(os.stat(target).st_mode) == 0o640, "an existing file keeps its permissions",
          oct(os.stat(target).st_mode))
    check(listing(tmp) == before, "no limit: no temporary file left", f"{before} -> {listing(tmp)}")
    # A new file gets 0666 & ~umask, as fopen(path, "w") would give it.
    r = run(["--n", "20", "--backend", "host", "-o", "new.npy"], tmp, preexec=lambda: os.umask(0o027))
    check(r.returncode == 0 and stat.S_IMODE(os.stat(os.path.join(tmp, "new.npy")).st_mode) == 0o640,
          "a new file has the permissions 0666 & ~umask", text(r.stderr))
    # Through a symbolic link: the file it points to is replaced, the link kept.
    os.symlink("new.npy", os.path.join(tmp, "link.npy"))
    r = run(["--n", "30", "--backend", "host", "-o", "link.npy"], tmp)
    check(r.returncode == 0 and os.path.islink(os.path.join(tmp, "link.npy")), "a symbolic link is kept",
          text(r.stderr))
    with open(os.path.join(tmp, "new.npy"), "rb") as f:
        check(parse_npy(f.read())[2] == (30, 30), "the file behind the link is replaced")


def test_output_names(tmp):
    # The longest legal names (NAME_MAX, 255 bytes, and 244, where the temporary file's
    # name used to pass 255): written, no temporary file left.
    for n in (244, 255):
        name = "d" * (n - 4) + ".npy"
        r = run(["--n", "20", "--backend", "host", "-o", name], tmp)
        check(r.returncode == 0, f"-o a name of {n} bytes: exit status 0", text(r.stderr)[-300:])
        if r.returncode == 0:
            with open(os.path.join(tmp, name), "rb") as f:
                check(parse_npy(f.read())[2] == (20, 20), f"-o a name of {n} bytes: the file is written")
        check(listing(tmp) == ([name] if r.returncode == 0 else []), f"-o a name of {n} bytes: no temporary file left",
              str(listing(tmp)))
        if os.path.exists(os.path.join(tmp, name)):
            os.remove(os.path.join(tmp, name))
    # Dangling symbolic links: as fopen("w"), the file they point to is made, the links
    # kept; a relative link is relative to its own directory; a chain is followed.
    os.mkdir(os.path.join(tmp, "sub"))
    os.symlink("made.npy", os.path.join(tmp, "dangling.npy"))
    os.symlink("t.npy", os.path.join(tmp, "sub", "l.npy"))
    os.symlink("sub/l2.npy", os.path.join(tmp, "chain.npy"))
    os.symlink("t2.npy", os.path.join(tmp, "sub", "l2.npy"))
    for link, made in (("dangling.npy", "made.npy"), ("sub/l.npy", "sub/t.npy"), ("chain.npy", "sub/t2.npy")):
        r = run(["--n", "20", "--backend", "host", "-o", link], tmp)
        check(r.returncode == 0 and os.path.islink(os.path.join(tmp, link)),
              f"-o {link}, a dangling symbolic link: exit status 0, the link kept", text(r.stderr))
        try:
            with open(os.path.join(tmp, made), "rb") as f:
                check(parse_npy(f.read())[2] == (20, 20), f"-o {link}: {made}, the file it points to, is written")
        except OSError as e:
            check(False, f"-o {link}: {made}, the file it points to, is written", repr(e))
    check(not any(".tmp-" in n for d in ("", "sub") for n in os.listdir(os.path.join(tmp, d))),
          "dangling symbolic links: no temporary file left", f"{listing(tmp)} {listing(os.path.join(tmp, 'sub'))}")


def test_sigterm(tmp):
    before = listing(tmp)
    p = subprocess.Popen([APAIRS, "--n", "6000", "--d", "256", "--backend", "host", "-o", "D.npy"], cwd=tmp,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    seen = False
    while time.time() < deadline and p.poll() is None:
        if any(n.startswith(".D.npy.tmp") for n in os.listdir(tmp)):
            seen = True
            break
        time.sleep(0.01)
    if seen and p.poll() is None:
        p.send_signal(signal.SIGTERM)
    p.communicate(timeout=60)
    check(seen, "SIGTERM: the temporary file exists while apairs works")
    if seen:
        check(p.returncode == -signal.SIGTERM, "SIGTERM: apairs ends by the signal", str(p.returncode))
        check(listing(tmp) == before, "SIGTERM: the temporary file is removed", f"{before} -> {listing(tmp)}")


def run_bench(args, cwd, preexec=None):
    # Two cheap host cases (hamming 1024 x 1024 d=512, l1 333 x 333 d=4000): two rows
    # make the JSON longer than the 1024-byte file-size limit used below.
    return subprocess.run([BENCH, "--backend", "host", "--quick", "--only", "hamming", "--only", "333x333 d=4000"] + args,
                          cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec, timeout=300)


def test_bench_json(tmp):
    if not BENCH or not os.path.exists(BENCH):
        print(f"SKIP: apairs_bench --json (no apairs_bench at {BENCH})")
        return
    r = run_bench(["--json", "missing/b.json"], tmp)
    check(r.returncode == 1 and "missing/b.json" in text(r.stderr) and "apairs hamming" not in text(r.stdout),
          "apairs_bench --json into a missing directory: fails before any case", text(r.stderr))
    check(listing(tmp) == [], "apairs_bench --json into a missing directory: nothing written", str(listing(tmp)))
    target = os.path.join(tmp, "b.json")
    r = run_bench(["--json", "b.json"], tmp)
    check(r.returncode == 0, "apairs_bench --json: exit status 0", text(r.stderr))
    try:
        import json
        with open(target) as f:
            j = json.load(f)
        check(j["backend"] == "host" and len(j["rows"]) == 2, "apairs_bench --json: the file is valid", str(j))
    except Exception as e:  # noqa: BLE001
        check(False, "apairs_bench --json: the file is valid JSON", repr(e))
    check(listing(tmp) == ["b.json"], "apairs_bench --json: no temporary file left", str(listing(tmp)))
    # A file-size limit of 1024 bytes: the smallest that LLVM's OpenMP runtime (clang
    # builds) survives, as it sizes a 1024-byte shared-memory file when it starts.
    limit = 1024
    size = os.path.getsize(target)
    check(size > limit + 100, f"apairs_bench --json: the JSON ({size} bytes) is longer than the limit ({limit})")
    old = b'{"old": true}\n'
    with open(target, "wb") as f:
        f.write(old)
    r = run_bench(["--json", "b.json"], tmp, preexec=fsize_limit(limit))
    err = text(r.stderr)
    check(r.returncode == 1 and "b.json" in err and "write failed" in err,
          "apairs_bench --json with a file-size limit: exit status 1, the write failure said", f"{r.returncode}: {err}")
    with open(target, "rb") as f:
        check(f.read() == old, "apairs_bench --json with a file-size limit: the old file is byte-identical")
    check(listing(tmp) == ["b.json"], "apairs_bench --json with a file-size limit: no temporary file left",
          str(listing(tmp)))
    # Integer options: range-checked, never cast from NaN or a huge double (undefined).
    for opt, v, says in (("--device", "1e20", "out of range [0, 2147483647]"), ("--reps", "nan", "not a whole number"),
                         ("--reps", "0", "out of range"), ("--host-batch", "1.5", "not a whole number"),
                         ("--soa-pad", "-1", "out of range"), ("--soa-pad", "1e999", "out of range")):
        r = run_bench([opt, v, "--list"], tmp)
        err = text(r.stderr)
        check(r.returncode == 1 and f"{opt}: '{v}' is {says}" in err and sanitizer_free(r),
              f"apairs_bench {opt} {v}: refused, saying {says}", err)


def main():
    global BENCH
    if not APAIRS:
        print(__doc__)
        return 2
    if BENCH is None:
        BENCH = os.path.join(os.path.dirname(APAIRS), "apairs_bench")
    t0 = time.time()
    for test in (test_lying_headers, test_header_and_data, test_valid, test_dtypes, test_numbers, test_bad_output,
                 test_atomic, test_output_names, test_sigterm, test_bench_json):
        with tempfile.TemporaryDirectory(prefix="apairs-cli-") as tmp:
            t = time.time()
            n = len(failures)
            test(tmp)
            print(f"{test.__name__}: {'ok' if len(failures) == n else 'FAILED'} ({time.time() - t:.1f} s)", flush=True)
    print(f"{checks} checks, {len(failures)} failed, {time.time() - t0:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
