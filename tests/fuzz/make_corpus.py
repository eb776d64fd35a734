#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz harnesses (Python 3 standard library only).

    python3 tests/fuzz/make_corpus.py            # (re)write tests/fuzz/corpus/{npy,plan,batched}
    python3 tests/fuzz/make_corpus.py --check    # exit 1 unless the committed corpus is current

The script owns both directories: files it does not write are removed (add a
reproducer of a finding here, as bytes, so that it stays in the corpus).

corpus/npy/   .npy files for fuzz_npy: every dtype, format versions 1.0/2.0/3.0, Fortran
              order, big-endian, 1-D/3-D, truncated header and data, empty arrays,
              malformed dicts, leading zeros, huge claimed shapes, and the size-wrap repros.
corpus/plan/  encodings of API call sequences for fuzz_plan (the format is described at
              the top of fuzz_plan.cpp; the encoder below mirrors its decoder): good
              problems for every metric and dtype, LP with p = 1, 2, inf, 0.5, 3.2, and
              bad arguments of every kind.
corpus/batched/  inputs for fuzz_batched (format at the top of fuzz_batched.cpp, encoder
              below): every batched operation in each dtype, layout, order, op and
              triangle, padded strides, singular and non-SPD elements, and every failing
              status: NULL handles, unknown enumerations, u8, sizes at the limits, leading
              dimensions and strides just below their minimum, spans one past 64 bits,
              non-finite alpha and beta, NULL arrays, another operation's execute function.
"""
import argparse
import base64
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

# ------------------------------------------------------------------------------------
# .npy

def npy_header(dict_text, version=(1, 0), pad=True, length=None):
    """The preamble and header of a .npy file whose header is dict_text (bytes)."""
    h = dict_text
    major = version[0]
    prefix = 10 if major == 1 else 12
    if pad:
        h += b" " * ((64 - (prefix + len(h) + 1) % 64) % 64) + b"\n"
    n = len(h) if length is None else length
    pre = b"\x93NUMPY" + bytes(version)
    pre += struct.pack("<H", n) if major == 1 else struct.pack("<I", n)
    return pre + h


def shape_text(shape):
    if len(shape) == 1:
        return "(%d,)" % shape[0]
    return "(" + ", ".join(str(s) for s in shape) + ")"


def npy_dict(descr, shape, fortran=False):
    return ("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }"
            % (descr, "True" if fortran else "False", shape_text(shape))).encode()


def elements(descr, count, seed=1):
    """count little-endian elements of a '<f4', '<f8' or '|u1'-like dtype."""
    kind, size = descr[1], int(descr[2:])
    out = bytearray()
    x = seed
    for _ in range(count):
        x = (x * 1103515245 + 12345) % (1 << 31)
        if kind == "f":
            v = (x % 2001 - 1000) / 64.0
            endian = ">" if descr[0] == ">" else "<"
            out += struct.pack(endian + ("f" if size == 4 else "d" if size == 8 else "e"), v)
        else:
            out += bytes([x % 3]) * size
    return bytes(out)


def npy(descr, shape, fortran=False, version=(1, 0), data=None):
    if data is None:
        data = elements(descr, math.prod(shape) if shape else 1)
    return npy_header(npy_dict(descr, shape, fortran), version) + data


def wrap_repro(descr, shape):
    """The size-wrap repro: a claimed shape whose byte count wraps size_t, and 4096 bytes."""
    h = ("{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % ((descr,) + shape)).encode()
    h += b" " * ((64 - (10 + len(h) + 1) % 64) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + b"A" * 4096


def npy_corpus():
    c = {}
    # Valid files: each dtype, each format version.
    for descr, shape in [("<f4", (3, 4)), ("<f8", (2, 5)), ("|u1", (4, 3))]:
        for v in [(1, 0), (2, 0), (3, 0)]:
            c["ok-%s-%dx%d-v%d.npy" % (descr[1:], shape[0], shape[1], v[0])] = npy(descr, shape, version=v)
    c["ok-u1-little.npy"] = npy("<u1", (2, 3))
    c["ok-u1-big.npy"] = npy(">u1", (2, 3))
    c["ok-u1-native.npy"] = npy("=u1", (2, 3))
    c["ok-f4-1x1.npy"] = npy("<f4", (1, 1))
    c["ok-f8-1x40.npy"] = npy("<f8", (1, 40))
    c["ok-f4-trailing-bytes.npy"] = npy("<f4", (2, 2)) + b"trailing"
    c["ok-f4-double-quotes.npy"] = npy_header(
        b"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2, 2), }") + elements("<f4", 4)
    c["ok-f4-key-order.npy"] = npy_header(
        b"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}") + elements("<f4", 6)
    c["ok-f4-no-padding.npy"] = npy_header(npy_dict("<f4", (2, 2)), pad=False) + elements("<f4", 4)
    c["ok-f4-leading-zeros.npy"] = npy_header(
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (002, 0003), }") + elements("<f4", 6)
    c["ok-f4-python2-long.npy"] = npy_header(
        b"{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 3L), }") + elements("<f4", 6)
    c["ok-f4-nan-inf.npy"] = npy_header(npy_dict("<f4", (1, 4))) + struct.pack(
        "<4f", float("nan"), float("inf"), -float("inf"), -0.0)
    # Refused: layout, rank, dtype.
    c["bad-fortran-order.npy"] = npy("<f4", (3, 4), fortran=True)
    c["bad-big-endian-f4.npy"] = npy(">f4", (2, 2))
    c["bad-big-endian-f8.npy"] = npy(">f8", (2, 2))
    c["bad-1d.npy"] = npy("<f4", (5,))
    c["bad-3d.npy"] = npy("<f4", (2, 2, 2))
    c["bad-0d.npy"] = npy_header(b"{'descr': '<f4', 'fortran_order': False, 'shape': (), }") + elements("<f4", 1)
    for descr in ["<i4", "<f2", "|b1", "<c8", "<i8", "|S3", "<U2", "|V4", "<f16", ""]:
        name = descr.replace("<", "le-").replace("|", "na-") or "empty"
        c["bad-dtype-%s.npy" % name] = npy_header(npy_dict(descr, (2, 2))) + b"\0" * 64
    c["bad-structured-dtype.npy"] = npy_header(
        b"{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (2, 2), }") + b"\0" * 32
    # Empty arrays.
    c["bad-empty-0x3.npy"] = npy("<f4", (0, 3), data=b"")
    c["bad-empty-3x0.npy"] = npy("<f8", (3, 0), data=b"")
    c["bad-empty-0x0.npy"] = npy("|u1", (0, 0), data=b"")
    # Truncated files.
    good = npy("<f4", (3, 4))
    c["bad-truncated-data.npy"] = good[:-5]
    c["bad-no-data.npy"] = good[:128]
    c["bad-truncated-header.npy"] = good[:40]
    c["bad-truncated-length.npy"] = good[:9]
    c["bad-truncated-length-v2.npy"] = npy("<f4", (1, 1), version=(2, 0))[:11]
    c["bad-magic-only.npy"] = b"\x93NUMPY"
    c["bad-no-magic.npy"] = b"\x93NUMPZ\x01\x00" + good[8:]
    c["bad-version-4.npy"] = npy("<f4", (1, 1), version=(4, 0))
    c["bad-version-0.npy"] = b"\x93NUMPY\x00\x00" + good[8:]
    c["bad-header-longer-than-file.npy"] = npy_header(npy_dict("<f4", (1, 1)), length=1000)
    c["bad-header-length-huge-v2.npy"] = npy_header(npy_dict("<f4", (1, 1)), version=(2, 0), length=0xFFFFFFFF)
    c["bad-header-length-16m-v3.npy"] = npy_header(npy_dict("<f4", (1, 1)), version=(3, 0), length=(1 << 24) + 1)
    c["bad-header-length-zero.npy"] = npy_header(b"", pad=False)
    # Malformed dicts.
    for name, text in [
            ("missing-descr", b"{'fortran_order': False, 'shape': (2, 2), }"),
            ("missing-shape", b"{'descr': '<f4', 'fortran_order': False, }"),
            ("missing-order", b"{'descr': '<f4', 'shape': (2, 2), }"),
            ("extra-key", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'x': 1, }"),
            ("unterminated-string", b"{'descr: '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
            ("escape", b"{'descr': '<f\\4', 'fortran_order': False, 'shape': (2, 2), }"),
            ("no-closing-brace", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), "),
            ("no-opening-brace", b"'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
            ("order-misspelled", b"{'descr': '<f4', 'fortran_order': false, 'shape': (2, 2), }"),
            ("order-number", b"{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 2), }"),
            ("shape-list", b"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 2], }"),
            ("shape-negative", b"{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 2), }"),
            ("shape-float", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2.0, 2), }"),
            ("shape-unclosed", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, }"),
            ("shape-double-comma", b"{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 2), }"),
            ("shape-hex", b"{'descr': '<f4', 'fortran_order': False, 'shape': (0x2, 2), }"),
            ("shape-20-digits", b"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1), }"),
            ("shape-int64-max-plus-1", b"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775808, 1), }"),
            ("descr-number", b"{'descr': 4, 'fortran_order': False, 'shape': (2, 2), }"),
            ("key-unquoted", b"{descr: '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
            ("no-colon", b"{'descr' '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
            ("nul-inside", b"{'descr': '<f4'\0, 'fortran_order': False, 'shape': (2, 2), }"),
            ("duplicate-key", b"{'descr': '<f8', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"),
            ("empty-dict", b"{}"),
            ("tabs", b"{\t'descr':\t'<f4',\t'fortran_order':\tFalse,\t'shape':\t(2,\t2)\t}")]:
        c["dict-%s.npy" % name] = npy_header(text) + elements("<f4", 4)
    # Huge claimed shapes over a small file: a reader must refuse them without trying to
    # allocate what the header claims.
    for name, descr, shape in [
            ("f4-2p40", "<f4", (1, 1 << 40)),
            ("f8-2p31-square", "<f8", (1 << 31, 1 << 31)),
            ("u1-int64-max", "|u1", (1, (1 << 63) - 1)),
            ("u1-int64-max-rows", "|u1", ((1 << 63) - 1, 1)),
            ("f4-2p32x2p32", "<f4", (1 << 32, 1 << 32)),
            ("f4-1e9", "<f4", (1000, 1000000)),
            ("u1-65536x65536", "|u1", (65536, 65536))]:
        c["huge-%s.npy" % name] = npy_header(npy_dict(descr, shape)) + b"\0" * 64
    # The size-wrap repros (byte counts that wrap size_t), each with 4096 bytes of 'A'.
    c["wrap-f4-1x2p62m1.npy"] = wrap_repro("<f4", (1, (1 << 62) - 1))
    c["wrap-u1-2xint64max.npy"] = wrap_repro("|u1", (2, (1 << 63) - 1))
    c["wrap-u1-3xsizemax3.npy"] = wrap_repro("|u1", (3, ((1 << 64) - 1) // 3))
    c["wrap-f8-1x2p61m1.npy"] = wrap_repro("<f8", (1, (1 << 61) - 1))
    return c

# ------------------------------------------------------------------------------------
# fuzz_plan's input format (see fuzz_plan.cpp: Input and the op_* functions)

def u8(v):
    return bytes([v & 0xFF])


def i64(v):
    """Tagged integer: tag t < 0xE0 is t - 16; 0xFF is followed by 8 raw bytes."""
    if -16 <= v <= 207:
        return u8(v + 16)
    return b"\xff" + struct.pack("<q", v)


def i32(v):
    if -16 <= v <= 207:
        return u8(v + 16)
    return b"\xff" + struct.pack("<i", v)


def special(k):
    """The k-th entry of a special table (same tag for i64, i32 and f64 tables)."""
    return u8(0xE0 + k)


def f64(v):
    """Tagged double: tag t < 0xC0 is (t - 64) / 8; 0xFF is followed by the 8 raw bytes."""
    if not math.isnan(v) and not math.isinf(v) and v * 8 == int(v * 8) and -64 <= v * 8 < 128 \
            and not (v == 0 and math.copysign(1, v) < 0):
        return u8(int(v * 8) + 64)
    return b"\xff" + struct.pack("<d", v)


def f64_bits(b):
    return b"\xff" + struct.pack("<Q", b)


def f64_special(k):
    return u8(0xC0 + k)


L1, L2, SQEUCLIDEAN, LP, LINF, DOT, COSINE, HAMMING = range(1, 9)
METRICS = {"l1": L1, "l2": L2, "sqeuclidean": SQEUCLIDEAN, "lp": LP, "linf": LINF,
           "dot": DOT, "cosine": COSINE, "hamming": HAMMING}
F32, F64, U8 = 1, 2, 3
DTYPES = {"f32": F32, "f64": F64, "u8": U8}
AUTO, HOST, CUDA = 0, 1, 2
OCCUPANCY, THREADS = 1, 2

# Execute flags.
NULL_A, NULL_B, NULL_D, ALIAS, MINIMAL, REPEAT = 1, 2, 4, 8, 16, 32
# Fill kinds.
RAW, SMALL, SIXTEENTHS, LCG = 0, 1, 2, 3


def ctx_create(slot=0, backend=HOST, device=0, null_out=False, raw_backend=None, raw_device=None):
    return (b"\x00" + u8(slot) + u8(1 if null_out else 0) + (raw_backend or i32(backend))
            + (raw_device or i32(device)))


def ctx_destroy(slot=0):
    return b"\x01" + u8(slot)


def set_option(slot, option, value=None, raw_value=None, raw_option=None):
    return b"\x02" + u8(slot) + (raw_option or i32(option)) + (raw_value or f64(value))


def get_option(slot, option, null_value=False):
    return b"\x03" + u8(slot) + i32(option) + u8(1 if null_value else 0)


def plan_create(metric, dtype, n1, n2, d, lda=None, ldb=None, ldd=None, p=0.0, pslot=0, cslot=0,
                null_out=False, raw_p=None, raw=None):
    lda = d if lda is None else lda
    ldb = d if ldb is None else ldb
    ldd = n2 if ldd is None else ldd
    sizes = raw if raw is not None else b"".join(i64(v) for v in (n1, n2, d, lda, ldb, ldd))
    return (b"\x04" + u8(pslot) + u8(cslot) + u8(1 if null_out else 0) + i32(metric)
            + (raw_p or f64(p)) + i32(dtype) + sizes)


def execute(pslot=0, flags=0, kind=LCG, seed=0, chunk=b""):
    out = b"\x05" + u8(pslot) + u8(flags) + u8(kind | (seed << 2))
    if kind != LCG:
        out += u8(len(chunk)) + chunk
    return out


def describe(pslot=0, size=1024, null_buf=False, null_len=False, raw_size=None):
    return b"\x06" + u8(pslot) + (raw_size or i64(size)) + u8((1 if null_buf else 0) | (2 if null_len else 0))


def plan_destroy(pslot=0):
    return b"\x07" + u8(pslot)


def status_string(code):
    return b"\x08\x00" + i32(code)


def get_backend(slot=0, null_out=False):
    return b"\x08\x01" + u8(slot) + u8(1 if null_out else 0)


def set_stream(slot=0, non_null=False):
    return b"\x08\x02" + u8(slot) + u8(1 if non_null else 0)


def device_count(null_out=False):
    return b"\x08\x03" + u8(1 if null_out else 0)


def last_error_twice():
    return b"\x08\x04"


NULL_SLOT = 0x80


def floats_f32(*vals):
    return b"".join(struct.pack("<f", v) for v in vals)


def floats_f64(*vals):
    return b"".join(struct.pack("<d", v) for v in vals)


def plan_corpus():
    c = {}
    host = ctx_create(0, HOST)
    # Good problems: every metric and dtype, awkward shapes (d across slices of 32, n
    # across host tiles of 32 x 64), padding in A, B and D.
    shapes = [(5, 7, 33, 35, 33, 9), (1, 1, 1, 1, 1, 1), (33, 65, 3, 3, 4, 70), (2, 3, 64, 64, 64, 3)]
    for mname, m in METRICS.items():
        for dname, t in DTYPES.items():
            if t == U8 and m != HAMMING:
                continue
            p = 3.0 if m == LP else 0.0
            for k, (n1, n2, d, lda, ldb, ldd) in enumerate(shapes):
                kinds = [LCG, SMALL] if k == 0 else [LCG]
                body = host + plan_create(m, t, n1, n2, d, lda, ldb, ldd, p=p)
                for kind in kinds:
                    body += execute(0, REPEAT if kind == LCG else 0, kind, seed=k + 1,
                                    chunk=bytes(range(7, 250, 11)) if kind != LCG else b"")
                body += describe(0, 1024) + plan_destroy(0) + ctx_destroy(0)
                c["good-%s-%s-%d" % (mname, dname, k)] = body
            # B = A (symmetric result, zero diagonal), and minimal extents.
            c["alias-%s-%s" % (mname, dname)] = (host + plan_create(m, t, 6, 6, 40, 41, 41, 8, p=p)
                                                 + execute(0, ALIAS | REPEAT, SMALL, chunk=bytes(range(200))))
            c["minimal-%s-%s" % (mname, dname)] = (host + plan_create(m, t, 3, 4, 5, 9, 6, 7, p=p)
                                                   + execute(0, MINIMAL, LCG, seed=3))
    # LP: p = 1, 2 and inf take other paths; 0.5 and 3.2 are general.
    for pname, p in [("1", 1.0), ("2", 2.0), ("inf", math.inf), ("0.5", 0.5), ("3.2", 3.2), ("0.125", 0.125),
                     ("15.875", 15.875), ("1e-3", 1e-3), ("100", 100.0)]:
        for dname, t in [("f32", F32), ("f64", F64)]:
            c["lp-%s-%s" % (pname, dname)] = (host + plan_create(LP, t, 4, 5, 37, p=p)
                                              + execute(0, REPEAT, LCG, seed=5) + execute(0, 0, SIXTEENTHS, chunk=bytes(range(0, 256, 3)))
                                              + describe(0, 4096))
    # Raw bit patterns: NaN, infinities, signed zero, subnormals in the inputs.
    specials32 = floats_f32(float("nan"), float("inf"), -float("inf"), -0.0, 1e-45, 3.4e38, -3.4e38, 1.0, 0.0)
    specials64 = floats_f64(float("nan"), float("inf"), -float("inf"), -0.0, 5e-324, 1.7e308, 1.0)
    payload_nan32 = struct.pack("<I", 0x7fc0dead) + struct.pack("<I", 0xffffffff) + floats_f32(2.0, 3.0)
    for mname, m in METRICS.items():
        c["raw-%s-f32" % mname] = host + plan_create(m, F32, 3, 5, 3) + execute(0, 0, RAW, chunk=specials32)
        c["raw-%s-f64" % mname] = host + plan_create(m, F64, 4, 3, 2) + execute(0, ALIAS, RAW, chunk=specials64)
        c["payload-nan-%s-f32" % mname] = host + plan_create(m, F32, 2, 2, 2) + execute(0, 0, RAW, chunk=payload_nan32)
    c["zeros-cosine-f32"] = host + plan_create(COSINE, F32, 3, 3, 4) + execute(0, 0, RAW, chunk=b"\0" * 16)
    c["zeros-cosine-f64"] = host + plan_create(COSINE, F64, 3, 3, 4) + execute(0, ALIAS, SMALL, chunk=b"\x02\x07")
    c["hamming-u8-raw"] = host + plan_create(HAMMING, U8, 7, 9, 50, 51, 53, 10) + execute(0, 0, RAW, chunk=bytes(range(97)))
    c["hamming-f32-big-d"] = host + plan_create(HAMMING, F32, 1, 2, 1 << 24) + describe(0, 100)
    c["hamming-f64-d-int32-max"] = host + plan_create(HAMMING, F64, 1, 1, (1 << 31) - 1) + describe(0, 100)
    # Huge leading dimensions with one row: the arrays stay small, the padding vast.
    c["one-row-huge-ld"] = (host + plan_create(L1, F32, 1, 3, 4, lda=1 << 40, ldb=4, ldd=1 << 50)
                            + execute(0, MINIMAL, LCG) + execute(0, NULL_D, LCG))
    c["one-row-huge-ldd-f64"] = (host + plan_create(LINF, F64, 1, 2, 3, ldd=(1 << 59))
                                 + execute(0, MINIMAL | REPEAT, SMALL, chunk=b"\x01\x02\x03\x04"))
    # NULL arrays.
    for flags, name in [(NULL_A, "a"), (NULL_B, "b"), (NULL_D, "d"), (NULL_A | NULL_B | NULL_D, "all")]:
        c["null-%s" % name] = host + plan_create(L2, F32, 3, 3, 3) + execute(0, flags, LCG)
    c["null-plan-execute"] = execute(NULL_SLOT, 0, LCG) + execute(2, NULL_A, LCG)
    c["null-huge-plan"] = host + plan_create(DOT, F64, 1 << 30, 1 << 30, 1 << 20) + execute(0, NULL_B, LCG)
    # Sizes that are not valid, and products that overflow.
    bad = [
        ("n1-zero", (0, 3, 3, 3, 3, 3)), ("n2-zero", (3, 0, 3, 3, 3, 3)), ("d-zero", (3, 3, 0, 3, 3, 3)),
        ("n1-negative", (-1, 3, 3, 3, 3, 3)), ("d-negative", (3, 3, -5, -5, -5, 3)),
        ("lda-small", (3, 3, 4, 3, 4, 3)), ("ldb-small", (3, 3, 4, 4, 3, 3)), ("ldd-small", (3, 4, 3, 3, 3, 3)),
        ("n1-int64-min", (-(1 << 63), 1, 1, 1, 1, 1)), ("ld-int64-min", (1, 1, 1, -(1 << 63), 1, 1)),
        ("overflow-n1-lda", (1 << 32, 1, 1, 1 << 32, 1, 1)), ("overflow-n2-ldb", (1, 1 << 33, 2, 2, 1 << 31, 1 << 33)),
        ("overflow-n1-ldd", (1 << 40, 1 << 30, 1, 1, 1, 1 << 30)),
        ("overflow-bytes-f64", (1 << 31, 1, 1, 1 << 31, 1, 1)), ("overflow-bytes-exact", (1 << 30, 1, 1, 1 << 30, 1, 1)),
        ("int64-max-all", ((1 << 63) - 1,) * 6), ("fits-exactly", (1, 1, 1, (1 << 60) - 1, 1, 1)),
    ]
    for name, sizes in bad:
        for dname, t in [("f32", F32), ("f64", F64)]:
            c["bad-%s-%s" % (name, dname)] = host + plan_create(L1, t, *sizes) + execute(0, 0, LCG) + describe(0, 64)
    c["bad-overflow-u8-ldd"] = host + plan_create(HAMMING, U8, 1 << 31, 1, 1, 1, 1, 1 << 31)
    c["bad-hamming-f32-d"] = host + plan_create(HAMMING, F32, 1, 1, (1 << 24) + 1)
    c["bad-hamming-f64-d"] = host + plan_create(HAMMING, F64, 1, 1, 1 << 31)
    c["bad-hamming-u8-d"] = host + plan_create(HAMMING, U8, 1, 1, 1 << 31)
    # Enumerations out of range.
    for m in [0, 9, -1, 1 << 30]:
        c["bad-metric-%d" % m] = host + plan_create(m, F32, 2, 2, 2)
    for t in [0, 4, -1, 255]:
        c["bad-dtype-%d" % t] = host + plan_create(L1, t, 2, 2, 2)
    for m in [L1, L2, SQEUCLIDEAN, LP, LINF, DOT, COSINE]:
        c["bad-u8-metric-%d" % m] = host + plan_create(m, U8, 2, 2, 2, p=2.5)
    # LP exponents that are not valid (or valid only in one element type).
    bad_p = [("0", f64(0.0)), ("neg", f64(-1.0)), ("neg-zero", f64(-0.0)), ("nan", f64_special(0)),
             ("neg-nan", f64_special(1)), ("snan-payload", f64_special(2)), ("neg-inf", f64_special(4)),
             ("dbl-min", f64_special(6)), ("dbl-max", f64_special(7)), ("flt-min", f64_special(8)),
             ("flt-max", f64_special(9)), ("below-flt-min", f64_special(10)), ("above-flt-max", f64_special(11)),
             ("inv-flt-min", f64_special(12)), ("inv-flt-max", f64_special(13)), ("denorm", f64_special(16)),
             ("1e-300", f64_special(23)), ("1e300", f64_special(24)), ("1e30", f64_special(26)),
             ("1e-30", f64_special(25)), ("near-1", f64_special(30)), ("near-2", f64_special(33))]
    for name, raw_p in bad_p:
        for dname, t in [("f32", F32), ("f64", F64)]:
            c["p-%s-%s" % (name, dname)] = (host + plan_create(LP, t, 2, 3, 4, raw_p=raw_p)
                                            + execute(0, 0, SIXTEENTHS, chunk=b"\x10\x90\x81") + describe(0, 2000))
    c["p-nan-l1"] = host + plan_create(L1, F32, 2, 3, 4, raw_p=f64_special(0)) + execute(0, 0, LCG)
    # Contexts: backends and devices, NULL out-pointers, options.
    c["ctx-cuda"] = ctx_create(0, CUDA, 0) + ctx_create(1, CUDA, 7) + plan_create(L1, F32, 2, 2, 2, cslot=0)
    c["ctx-auto"] = ctx_create(0, AUTO, 0) + get_backend(0) + ctx_create(1, AUTO, 123) + get_backend(1) \
        + plan_create(L1, F32, 2, 2, 2, cslot=1) + execute(0, 0, LCG)
    c["ctx-bad-backend"] = ctx_create(0, 3) + ctx_create(1, -1) + ctx_create(2, raw_backend=special(0)) \
        + ctx_create(3, HOST, -1) + ctx_create(0, CUDA, -1) + ctx_create(1, 9, -9)
    c["ctx-null-out"] = ctx_create(0, HOST, 0, null_out=True) + ctx_create(0, 3, -1, null_out=True)
    c["ctx-recreate"] = host + host + ctx_destroy(0) + ctx_destroy(0) + ctx_destroy(NULL_SLOT) + ctx_destroy(3)
    c["ctx-destroyed-before-plan-use"] = (host + plan_create(L2, F64, 3, 4, 5) + ctx_destroy(0)
                                          + execute(0, REPEAT, LCG) + describe(0, 300))
    opts = host
    for opt, val in [(OCCUPANCY, 0.5), (OCCUPANCY, 1.0), (OCCUPANCY, 1.5), (OCCUPANCY, -0.0), (OCCUPANCY, -0.125),
                     (THREADS, 2.0), (THREADS, 2.5), (THREADS, 1024.0), (THREADS, -1.0), (THREADS, 0.0)]:
        opts += set_option(0, opt, val) + get_option(0, opt)
    for raw in [f64_special(0), f64_special(3), f64_special(4), f64_special(5), f64_special(27), f64_special(28),
                f64_special(36), f64_special(37), f64_special(38), f64_special(16)]:
        opts += set_option(0, THREADS, raw_value=raw) + get_option(0, THREADS)
        opts += set_option(0, OCCUPANCY, raw_value=raw) + get_option(0, OCCUPANCY)
    c["options"] = opts
    c["options-unknown"] = (host + set_option(0, 0, 1.0) + set_option(0, 3, 1.0) + get_option(0, 0)
                            + get_option(0, 99) + get_option(0, OCCUPANCY, null_value=True)
                            + set_option(NULL_SLOT, OCCUPANCY, 0.5) + get_option(NULL_SLOT, THREADS)
                            + set_option(2, THREADS, 1.0))
    c["threads-1-plan"] = (host + set_option(0, THREADS, 1.0) + get_option(0, THREADS) + plan_create(L1, F32, 40, 70, 9) + execute(0, REPEAT, LCG)
                           + describe(0, 1000))
    c["threads-3-plan"] = (host + set_option(0, THREADS, 3.0) + get_option(0, THREADS)
                           + plan_create(COSINE, F64, 33, 65, 5) + execute(0, 0, LCG) + describe(0, 1000))
    c["threads-1024-plan"] = (host + set_option(0, THREADS, 1024.0) + plan_create(L1, F32, 4, 4, 4)
                              + execute(0, 0, LCG) + execute(0, NULL_A, LCG) + describe(0, 1000))
    c["occupancy-plan"] = host + set_option(0, OCCUPANCY, 0.25) + plan_create(DOT, F32, 3, 3, 3) + describe(0, 1000)
    # Plan creation with NULL out-pointers and NULL or empty contexts.
    c["plan-null-out"] = host + plan_create(L1, F32, 2, 2, 2, null_out=True) + execute(0, 0, LCG)
    c["plan-null-ctx"] = plan_create(L1, F32, 2, 2, 2, cslot=NULL_SLOT) + plan_create(L1, F32, 2, 2, 2, cslot=3)
    c["plan-null-everything"] = plan_create(0, 0, 0, 0, 0, cslot=NULL_SLOT, null_out=True, p=-1.0)
    c["plan-replace-slot"] = (host + plan_create(L1, F32, 2, 2, 2) + plan_create(L2, F64, 3, 3, 3)
                              + plan_create(L2, F64, -3, 3, 3) + execute(0, 0, LCG) + plan_destroy(0) + plan_destroy(0)
                              + plan_destroy(NULL_SLOT))
    c["four-plans"] = host + b"".join(plan_create(m, F32, 3, 4, 5, pslot=k, p=2.5) + execute(k, 0, LCG, seed=k)
                                      for k, m in enumerate([L1, LP, COSINE, HAMMING]))
    # describe: snprintf behaviour at every size.
    d = host + plan_create(LP, F32, 2, 2, 2, p=0.5)
    for size in [0, 1, 2, 10, 63, 64, 200, 1023, 1 << 20]:
        d += describe(0, size)
    d += describe(0, -1) + describe(0, 5, null_buf=True) + describe(0, 0, null_buf=True) + describe(0, 5, null_len=True)
    d += describe(0, 0, null_buf=True, null_len=True) + describe(NULL_SLOT, 10) + describe(2, 10)
    d += describe(0, raw_size=special(0)) + describe(0, raw_size=special(1)) + describe(0, raw_size=special(12))
    c["describe-sizes"] = d
    # Status strings, version, backend, stream, device count.
    c["status-strings"] = b"".join(status_string(k) for k in list(range(-3, 13)) + [99, 100, 199, 1 << 30, -(1 << 31)])
    c["misc"] = (host + get_backend(0) + get_backend(0, null_out=True) + get_backend(NULL_SLOT) + set_stream(0)
                 + set_stream(0, non_null=True) + set_stream(NULL_SLOT) + device_count() + device_count(null_out=True)
                 + last_error_twice() + plan_create(0, 0, 0, 0, 0) + last_error_twice() + status_string(3)
                 + last_error_twice())
    c["empty"] = b""
    c["one-byte"] = b"\x05"
    c["truncated-plan-create"] = host + plan_create(L1, F32, 100, 100, 100)[:9]
    return c

# ------------------------------------------------------------------------------------
# fuzz_batched's input format (see fuzz_batched.cpp: Input::rel and Record::decode)

# The operations (fuzz_batched.cpp's Op), prefixed apart from the metrics above.
B_GEMM, B_POTRF, B_POTRS, B_POSV, B_DOT, B_GEMV, B_GETRF, B_GETRS, B_GESV, B_TRANSPOSE = range(10)
AOS, SOA = 1, 2
ROW, COL = 1, 2
OP_N, OP_T = 0, 1
LOWER, UPPER = 1, 2
# Execute flags: NULL array k is 1 << k.
WRONG, NO_EXEC = 16, 128
# Fill byte: bit 0 small integers instead of multiples of 2^-15; the rest seeds.
INTS = 1

# Which fields each operation decodes, and whether each operand has a leading dimension.
FIELDS = {B_GEMM: ("order", "t1", "t2", "m", "n", "k", "alpha", "beta"), B_POTRF: ("order", "t1", "n"),
          B_POTRS: ("order", "t1", "n", "nrhs"), B_POSV: ("order", "t1", "n", "nrhs"), B_DOT: ("n",),
          B_GEMV: ("order", "t1", "m", "n", "alpha", "beta"), B_GETRF: ("order", "n"),
          B_GETRS: ("order", "t1", "n", "nrhs"), B_GESV: ("order", "n", "nrhs"), B_TRANSPOSE: ("n",)}
HAS_LD = {B_GEMM: (1, 1, 1), B_POTRF: (1,), B_POTRS: (1, 1), B_POSV: (1, 1), B_DOT: (0, 0), B_GEMV: (1, 0, 0),
          B_GETRF: (1,), B_GETRS: (1, 1), B_GESV: (1, 1), B_TRANSPOSE: (0, 0)}


def rel(delta=0):
    """A leading dimension or stride of its minimum plus delta (-8 .. 55)."""
    assert -8 <= delta <= 55
    return u8(delta + 8)


def r32(k=0):
    """The minimum rounded up to a multiple of 32, plus 32 k."""
    return u8(0x40 + k)


def fit(delta=0):
    """The largest value whose span fits in 64-bit byte counts, plus delta (-16 .. 15)."""
    return u8(0x70 + delta)


def absolute(v):
    """Any value: an i64, or an encoded one (special(k))."""
    return b"\x80" + (v if isinstance(v, bytes) else i64(v))


def batched(op, dtype=F64, layout=AOS, batch=1, order=COL, t1=None, t2=OP_N, m=1, n=1, k=1, nrhs=1, alpha=1.0,
            beta=0.0, ld=None, stride=None, null_plan=False, null_ctx=False, xflags=0, wrong=None, fill=0):
    """One record. Integers and doubles may be given as encoded bytes (special(k), f64_special(k), ...).
    ld and stride: one encoded entry per operand (default: the minimum)."""
    if t1 is None:
        t1 = LOWER if op in (B_POTRF, B_POTRS, B_POSV) else OP_N
    values = {"order": order, "t1": t1, "t2": t2, "m": m, "n": n, "k": k, "nrhs": nrhs, "alpha": alpha, "beta": beta}
    enc = {"order": i32, "t1": i32, "t2": i32, "m": i64, "n": i64, "k": i64, "nrhs": i64, "alpha": f64, "beta": f64}

    def field(name, v):
        return v if isinstance(v, bytes) else enc[name](v)

    has_ld = HAS_LD[op]
    ld = ld or [rel(0)] * len(has_ld)
    stride = stride or [rel(0)] * len(has_ld)
    out = u8(op) + u8((1 if null_plan else 0) | (2 if null_ctx else 0))
    out += (dtype if isinstance(dtype, bytes) else i32(dtype)) + (layout if isinstance(layout, bytes) else i32(layout))
    out += b"".join(field(f, values[f]) for f in FIELDS[op])
    out += batch if isinstance(batch, bytes) else i64(batch)
    for has, l, s in zip(has_ld, ld, stride):
        out += (l if has else b"") + s
    if wrong is not None:
        xflags |= WRONG
    out += u8(xflags) + (u8(wrong) if xflags & WRONG else b"") + u8(fill)
    return out


def batched_input(*records, threads=0):
    return u8(threads) + b"".join(records)


def batched_corpus():
    c = {}
    dtypes = [("f32", F32), ("f64", F64)]
    layouts = [("aos", AOS), ("soa", SOA)]
    # Every operation in each dtype and layout, one order each way, padded leading
    # dimensions and strides (SoA on whole 32-element runs).
    for dname, t in dtypes:
        for lname, lay in layouts:
            pad = [rel(3), r32(1) if lay == SOA else rel(5), rel(1)]
            c["gemm-%s-%s-nn" % (dname, lname)] = batched_input(
                batched(B_GEMM, t, lay, batch=5, order=COL, m=3, n=4, k=5, alpha=0.5, beta=-1.25, ld=[rel(2)] * 3,
                        stride=pad, fill=2))
            c["gemm-%s-%s-tt-row" % (dname, lname)] = batched_input(
                batched(B_GEMM, t, lay, batch=3, order=ROW, t1=OP_T, t2=OP_T, m=7, n=2, k=33, alpha=-2.0, beta=1.0,
                        ld=[rel(0), rel(1), rel(9)], stride=[rel(0), rel(0), rel(2)], fill=INTS | 4), threads=2)
            for uplo, uname in [(LOWER, "lower"), (UPPER, "upper")]:
                order = COL if uplo == LOWER else ROW
                c["potrf-%s-%s-%s" % (dname, lname, uname)] = batched_input(
                    batched(B_POTRF, t, lay, batch=9, order=order, t1=uplo, n=6, ld=[rel(1)], stride=[pad[1]], fill=6))
                c["potrs-%s-%s-%s" % (dname, lname, uname)] = batched_input(
                    batched(B_POTRS, t, lay, batch=4, order=order, t1=uplo, n=5, nrhs=3, ld=[rel(0), rel(2)],
                            stride=[pad[1], rel(3)], fill=8))
                c["posv-%s-%s-%s" % (dname, lname, uname)] = batched_input(
                    batched(B_POSV, t, lay, batch=12, order=order, t1=uplo, n=4, nrhs=2, ld=[rel(2), rel(0)],
                            stride=[rel(0), pad[1]], fill=10))
            c["dot-%s-%s" % (dname, lname)] = batched_input(
                batched(B_DOT, t, lay, batch=6, n=37, stride=[pad[1], rel(0)], fill=12))
            for trans, tname in [(OP_N, "n"), (OP_T, "t")]:
                c["gemv-%s-%s-%s" % (dname, lname, tname)] = batched_input(
                    batched(B_GEMV, t, lay, batch=5, order=ROW if trans else COL, t1=trans, m=9, n=4, alpha=1.5,
                            beta=0.25, ld=[rel(1), b"", b""], stride=[pad[1], rel(0), rel(2)], fill=14))
                c["getrs-%s-%s-%s" % (dname, lname, tname)] = batched_input(
                    batched(B_GETRS, t, lay, batch=5, order=COL if trans else ROW, t1=trans, n=6, nrhs=2,
                            ld=[rel(1), rel(0)], stride=[pad[1], rel(0)], fill=16))
            c["getrf-%s-%s" % (dname, lname)] = batched_input(
                batched(B_GETRF, t, lay, batch=10, order=COL, n=7, ld=[rel(2)], stride=[pad[1]], fill=18),
                batched(B_GETRF, t, lay, batch=3, order=ROW, n=5, fill=INTS | 20))
            c["gesv-%s-%s" % (dname, lname)] = batched_input(
                batched(B_GESV, t, lay, batch=9, order=ROW, n=5, nrhs=3, ld=[rel(0), rel(4)], stride=[rel(0), pad[1]],
                        fill=22),
                batched(B_GESV, t, lay, batch=4, order=COL, n=3, nrhs=1, fill=INTS | 24))
    for tname, t in [("u8", U8), ("f32", F32), ("f64", F64)]:
        for lname, lay in layouts:
            c["transpose-%s-to-%s" % (tname, lname)] = batched_input(
                batched(B_TRANSPOSE, t, lay, batch=7, n=13, stride=[rel(3), r32(0)], fill=26))
    # The host's special cases and chunking: square gemm of 2, 3, 4, 8, 16; more than one
    # chunk of elements (256 for gemm, dot and gemv; 64 for the factorisations) over threads.
    c["gemm-square-sizes"] = batched_input(*[batched(B_GEMM, F32, SOA, batch=3, m=s, n=s, k=s, beta=1.0, fill=s)
                                             for s in (2, 3, 4, 8, 16)], threads=1)
    c["gemm-chunks"] = batched_input(batched(B_GEMM, F64, AOS, batch=600, m=4, n=4, k=4, beta=0.5, fill=28), threads=3)
    c["getrf-chunks"] = batched_input(batched(B_GETRF, F32, SOA, batch=200, n=4, stride=[r32(0)], fill=30), threads=2)
    c["posv-chunks"] = batched_input(batched(B_POSV, F64, AOS, batch=150, n=3, nrhs=2, fill=32), threads=0)
    # Sizes at the limits: 128 (gemm, factorisations), 1024 (nrhs), 4096 (dot, gemv).
    c["gemm-128"] = batched_input(batched(B_GEMM, F32, AOS, m=128, n=3, k=128, alpha=f64_special(18), fill=34))
    # n = 128 factorisations are created but too slow to run and check here; n = 64 runs.
    c["potrf-128"] = batched_input(batched(B_POTRF, F64, AOS, n=128, t1=UPPER, fill=36),
                                   batched(B_POTRF, F32, SOA, n=64, t1=LOWER, fill=37))
    # Regression: a SoA 1 x 1 element with huge ld and strides has a valid span, and the
    # host engine once multiplied ld * stride (signed overflow) for the absent dimension.
    big = absolute((1 << 62) - 1)
    c["regression-soa-huge-ld"] = batched_input(
        batched(B_GEMV, F64, SOA, batch=2, order=COL, m=1, n=1, ld=[big, b"", b""], stride=[big] * 3, fill=40),
        batched(B_GEMM, F64, SOA, batch=2, order=COL, m=1, n=1, k=1, ld=[big] * 3, stride=[big] * 3, fill=41))
    # Regression (a harness bug): the diagonal of a "diagonally dominant" SPD element was
    # n + 1 + |v| where integer fills give off-diagonal entries of magnitude 2; posv f64 AoS
    # n = 4 element 67 of this input was no SPD matrix (a long double Cholesky stops at
    # column 4 too) and the harness called the library's info 4 wrong. Libfuzzer's bytes.
    c["regression-posv-ints-dominance"] = base64.b64decode("AAMAEhESERQS1hwR/0gIAAMAEhESEQE=")
    c["getrf-128"] = batched_input(batched(B_GETRF, F32, AOS, n=128, order=ROW, fill=38),
                                   batched(B_GETRF, F64, AOS, n=64, order=COL, fill=39))
    c["potrs-nrhs-1024"] = batched_input(batched(B_POTRS, F32, AOS, n=2, nrhs=special(4), fill=40))
    c["gesv-nrhs-1024"] = batched_input(batched(B_GESV, F64, SOA, n=3, nrhs=special(4), batch=2, fill=42))
    c["dot-4096"] = batched_input(batched(B_DOT, F32, AOS, n=special(6), batch=3, fill=44))
    c["gemv-4096"] = batched_input(batched(B_GEMV, F64, SOA, m=special(6), n=2, t1=OP_T, batch=2, fill=46))
    c["limits-plus-one"] = batched_input(
        batched(B_GEMM, F32, AOS, m=129), batched(B_GEMM, F32, AOS, k=129), batched(B_POTRF, F64, AOS, n=129),
        batched(B_POSV, F32, AOS, n=2, nrhs=special(5)), batched(B_DOT, F64, SOA, n=special(7)),
        batched(B_GEMV, F32, AOS, m=2, n=special(7)))
    c["sizes-zero-negative"] = batched_input(
        batched(B_GEMM, F64, AOS, m=0), batched(B_GETRF, F32, AOS, n=-1), batched(B_TRANSPOSE, F32, SOA, n=0),
        batched(B_GETRS, F64, AOS, n=3, nrhs=0), batched(B_DOT, F32, AOS, n=special(0)), batched(B_POTRS, F64, AOS, n=special(1)))
    c["batch-zero-negative"] = batched_input(
        batched(B_GEMM, F32, AOS, batch=0), batched(B_POTRF, F64, SOA, batch=-1), batched(B_TRANSPOSE, U8, AOS, batch=special(0)))
    # Leading dimensions and strides just below, at and above their minimum.
    c["ld-below"] = batched_input(
        batched(B_GEMM, F64, AOS, m=3, n=3, k=3, ld=[rel(0), rel(-1), rel(0)]),
        batched(B_POTRF, F32, SOA, n=4, ld=[rel(-1)]), batched(B_GESV, F64, AOS, n=3, nrhs=2, ld=[rel(0), rel(-2)]),
        batched(B_GEMV, F32, AOS, order=ROW, m=3, n=5, ld=[rel(-1), b"", b""]))
    c["stride-below"] = batched_input(
        batched(B_GEMM, F64, AOS, batch=2, m=3, n=3, k=3, stride=[rel(0), rel(0), rel(-1)]),
        batched(B_GETRF, F32, SOA, batch=5, n=4, stride=[rel(-1)]), batched(B_DOT, F64, SOA, batch=4, n=3, stride=[rel(-3), rel(0)]),
        batched(B_TRANSPOSE, F32, SOA, batch=3, n=5, stride=[rel(-1), rel(0)]),
        batched(B_TRANSPOSE, F64, AOS, batch=3, n=5, stride=[rel(0), rel(-1)]))
    c["stride-negative-ld-huge"] = batched_input(
        batched(B_POTRS, F64, AOS, n=2, nrhs=2, stride=[absolute(-1), rel(0)]),
        batched(B_GETRS, F32, AOS, n=2, nrhs=2, ld=[absolute(1 << 62), rel(0)]),
        batched(B_GETRF, F64, SOA, n=2, ld=[absolute(special(1))]))
    # Spans at the edge of 64-bit byte counts: the largest that fits, one past it; strides
    # and leading dimensions near INT64_MAX / elem. Huge plans are created, not executed;
    # NULL arrays are still refused.
    c["span-fits"] = batched_input(
        batched(B_TRANSPOSE, F32, SOA, batch=1 << 59, n=1, stride=[rel(0), fit(0)], xflags=1),
        batched(B_DOT, F64, AOS, batch=2, n=5, stride=[fit(0), fit(-3)], xflags=4),
        batched(B_GEMM, F32, SOA, batch=3, m=2, n=2, k=2, stride=[rel(0), fit(0), rel(0)], xflags=6),
        batched(B_GETRF, F64, AOS, batch=1, n=3, ld=[fit(0)], stride=[rel(0)], xflags=2))
    c["span-overflows"] = batched_input(
        batched(B_TRANSPOSE, F32, SOA, batch=special(14), n=1, stride=[rel(0), fit(1)]),
        batched(B_DOT, F64, AOS, batch=2, n=5, stride=[fit(1), rel(0)]),
        batched(B_GEMM, F32, SOA, batch=3, m=2, n=2, k=2, stride=[rel(0), rel(0), fit(1)]),
        batched(B_POSV, F64, AOS, batch=2, n=3, nrhs=1, ld=[fit(1), rel(0)], stride=[rel(0), rel(0)]),
        batched(B_TRANSPOSE, U8, AOS, batch=special(1), n=special(1)),
        batched(B_GEMV, F64, SOA, batch=special(15), m=5, n=3))
    # Enumerations: unknown values, u8 where only transpose takes it.
    c["unknown-dtype"] = batched_input(*[batched(op, d) for op, d in
                                         [(B_GEMM, 0), (B_POTRF, 4), (B_DOT, -1), (B_GETRS, special(1)), (B_TRANSPOSE, 4)]])
    c["u8-unsupported"] = batched_input(*[batched(op, U8) for op in range(B_TRANSPOSE)])
    c["unknown-layout"] = batched_input(batched(B_GEMM, F32, 0), batched(B_GESV, F64, 3), batched(B_TRANSPOSE, F32, -1),
                                        batched(B_DOT, F64, special(0)))
    c["unknown-order"] = batched_input(batched(B_POTRF, F32, AOS, order=0), batched(B_GEMV, F64, SOA, order=3),
                                       batched(B_GETRF, F32, AOS, order=-1, n=3, ld=[rel(-1)]))
    c["unknown-op-uplo"] = batched_input(
        batched(B_GEMM, F64, AOS, t1=2), batched(B_GEMM, F64, AOS, t2=-1), batched(B_GEMV, F32, AOS, t1=special(1)),
        batched(B_GETRS, F64, SOA, t1=5), batched(B_POTRF, F32, AOS, t1=0), batched(B_POSV, F64, AOS, t1=3),
        batched(B_POTRS, F32, AOS, t1=OP_T))
    c["many-bad"] = batched_input(
        batched(B_GEMM, 9, 9, order=9, t1=9, t2=9, m=0, n=999, k=-1, alpha=f64_special(0), beta=f64_special(3),
                batch=0, null_plan=True, null_ctx=True),
        batched(B_POSV, U8, SOA, order=ROW, t1=UPPER, n=200, nrhs=2000, batch=special(1), ld=[rel(-1), absolute(special(1))],
                stride=[absolute(special(0)), fit(5)]),
        batched(B_TRANSPOSE, 7, 0, n=special(1), batch=special(1), stride=[fit(3), rel(-2)]))
    # NULL handles.
    for half in (0, 1):
        c["null-plan-ctx-%d" % half] = batched_input(*[batched(op, F32, null_plan=(op % 2 == 0), null_ctx=(op % 3 != 1))
                                                       for op in range(5 * half, 5 * half + 5)])
    # alpha and beta: non-finite, beyond f32, rounding to 0 in f32 (C then never read),
    # and FLT_MAX's neighbourhood.
    c["scalars-nonfinite"] = batched_input(
        batched(B_GEMM, F32, AOS, alpha=f64_special(0)), batched(B_GEMM, F64, AOS, beta=f64_special(4)),
        batched(B_GEMV, F64, SOA, alpha=f64_special(2)), batched(B_GEMV, F32, AOS, beta=f64_special(1)),
        batched(B_GEMM, F32, AOS, alpha=f64(1e39)),
        batched(B_GEMV, F32, AOS, beta=f64_special(14)), batched(B_GEMM, F32, AOS, beta=f64_special(15)))
    c["scalars-f32-edges"] = batched_input(
        batched(B_GEMM, F32, AOS, m=2, n=2, k=2, alpha=f64_special(9), beta=f64_special(12), fill=48),
        batched(B_GEMM, F32, AOS, alpha=f64_special(11)), batched(B_GEMV, F32, SOA, beta=f64_special(29)),
        batched(B_GEMM, F64, AOS, m=3, n=2, k=2, alpha=f64_special(7), beta=f64_special(13), fill=50),
        batched(B_GEMV, F32, AOS, m=3, n=3, alpha=f64_special(23), beta=f64_special(18), fill=52))
    c["beta-zero-f32"] = batched_input(
        batched(B_GEMM, F32, SOA, batch=4, m=5, n=3, k=2, alpha=1.0, beta=f64_special(18), stride=[r32(0)] * 3, fill=54),
        batched(B_GEMV, F32, AOS, batch=3, m=4, n=6, alpha=-0.5, beta=f64_special(19), fill=56),
        batched(B_GEMM, F64, AOS, batch=2, m=2, n=2, k=2, beta=f64_special(5), fill=58))
    # NULL arrays (each, and all), and another operation's execute function.
    c["null-arrays"] = batched_input(
        batched(B_GEMM, F32, AOS, m=2, n=2, k=2, xflags=4), batched(B_POTRF, F64, AOS, n=3, xflags=2),
        batched(B_GESV, F32, SOA, n=2, nrhs=2, xflags=15), batched(B_TRANSPOSE, U8, AOS, n=3, xflags=1))
    c["wrong-execute"] = batched_input(
        batched(B_GEMM, F64, AOS, wrong=B_POTRF), batched(B_GETRF, F32, SOA, wrong=B_GESV, xflags=4),
        batched(B_TRANSPOSE, U8, SOA, n=4, batch=3, wrong=B_TRANSPOSE), batched(B_DOT, F32, AOS, n=3, wrong=B_GEMV))
    c["wrong-execute-huge"] = batched_input(
        batched(B_POSV, F64, SOA, n=8, nrhs=8, batch=1 << 50, stride=[rel(0), fit(0)], wrong=B_POTRS, xflags=NO_EXEC),
        batched(B_GEMV, F32, AOS, m=3, n=3, batch=1 << 40, wrong=B_DOT, xflags=2))
    c["empty"] = b""
    c["threads-only"] = b"\x03"
    c["truncated-record"] = batched_input(batched(B_GESV, F64, AOS, n=3, nrhs=2))[:9]
    return c

# ------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 unless the corpus on disk is what this writes")
    ap.add_argument("--out", default=CORPUS, help="corpus directory (default: %(default)s)")
    args = ap.parse_args()
    wanted = {"npy": npy_corpus(), "plan": plan_corpus(), "batched": batched_corpus()}
    problems = []
    total = 0
    for sub, files in wanted.items():
        d = os.path.join(args.out, sub)
        if not args.check:
            os.makedirs(d, exist_ok=True)
        present = set(os.listdir(d)) if os.path.isdir(d) else set()
        for name, data in sorted(files.items()):
            total += len(data)
            path = os.path.join(d, name)
            if args.check:
                if name not in present:
                    problems.append("missing " + path)
                else:
                    with open(path, "rb") as f:
                        if f.read() != data:
                            problems.append("differs " + path)
            else:
                with open(path, "wb") as f:
                    f.write(data)
        for name in sorted(present - set(files)):
            path = os.path.join(d, name)
            if args.check:
                problems.append("not written by make_corpus.py: " + path)
            else:
                os.remove(path)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        print("make_corpus.py: the corpus is stale; run python3 tests/fuzz/make_corpus.py", file=sys.stderr)
        return 1
    print("make_corpus.py: %d npy + %d plan + %d batched inputs, %d bytes%s"
          % (len(wanted["npy"]), len(wanted["plan"]), len(wanted["batched"]), total,
             " (current)" if args.check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
