"""Batched plans through ctypes (no NumPy): gemm on 500 elements of 2x3 times 3x2 in the
SoA layout (entry (i, j) of every element contiguous), then potrf + potrs on 500 SPD
2x2 matrices, one not positive definite, then gesv on 300 column-major 3x3 systems, one
singular, and dot on 300 pairs of 7-vectors (AoS); checked against plain Python.
    python3 batched.py [libapairs.so]"""
import ctypes, ctypes.util, os, random, sys
from ctypes import POINTER, byref, c_char_p, c_double, c_int32, c_int64, c_void_p

SUCCESS, AUTO, F64, AOS, SOA, ROW_MAJOR, COL_MAJOR, OP_N, LOWER = 0, 0, 2, 1, 2, 1, 2, 0, 1
path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("APAIRS_LIB") or ctypes.util.find_library("apairs")
if not path:
    sys.exit("libapairs not found: pass its path or set APAIRS_LIB")
lib = ctypes.CDLL(path)
for name, restype, argtypes in [
        ("apairs_status_string", c_char_p, [c_int32]), ("apairs_last_error", c_char_p, []),
        ("apairs_context_create", c_int32, [POINTER(c_void_p), c_int32, c_int32]),
        ("apairs_plan_create_gemm_batched", c_int32,
         [POINTER(c_void_p), c_void_p] + [c_int32] * 5 + [c_int64] * 3 + [c_double] * 2 + [c_int64] * 7),
        ("apairs_plan_execute_gemm", c_int32, [c_void_p] * 4),
        ("apairs_plan_create_potrf_batched", c_int32, [POINTER(c_void_p), c_void_p] + [c_int32] * 4 + [c_int64] * 4),
        ("apairs_plan_execute_potrf", c_int32, [c_void_p, c_void_p, POINTER(c_int32)]),
        ("apairs_plan_create_potrs_batched", c_int32, [POINTER(c_void_p), c_void_p] + [c_int32] * 4 + [c_int64] * 7),
        ("apairs_plan_execute_potrs", c_int32, [c_void_p] * 3),
        ("apairs_plan_create_gesv_batched", c_int32, [POINTER(c_void_p), c_void_p] + [c_int32] * 3 + [c_int64] * 7),
        ("apairs_plan_execute_gesv", c_int32, [c_void_p, c_void_p, POINTER(c_int32), c_void_p, POINTER(c_int32)]),
        ("apairs_plan_create_dot_batched", c_int32, [POINTER(c_void_p), c_void_p] + [c_int32] * 2 + [c_int64] * 4),
        ("apairs_plan_execute_dot", c_int32, [c_void_p] * 4),
        ("apairs_plan_destroy", c_int32, [c_void_p]), ("apairs_context_destroy", c_int32, [c_void_p])]:
    getattr(lib, name).restype, getattr(lib, name).argtypes = restype, argtypes


def check(status):
    if status != SUCCESS:
        sys.exit(f"{lib.apairs_status_string(status).decode()}: {lib.apairs_last_error().decode()}")


m, n, k, batch = 2, 2, 3, 500
stride = (batch + 31) // 32 * 32  # the batch stride, padded to 32 entries
A = (c_double * (m * k * stride))(*[random.uniform(-1, 1) for _ in range(m * k * stride)])
B = (c_double * (k * n * stride))(*[random.uniform(-1, 1) for _ in range(k * n * stride)])
C = (c_double * (m * n * stride))()
at = lambda X, cols, i, j, e: X[(i * cols + j) * stride + e]  # row-major entry grid, SoA
ctx, plan = c_void_p(), c_void_p()
check(lib.apairs_context_create(byref(ctx), AUTO, 0))
check(lib.apairs_plan_create_gemm_batched(byref(plan), ctx, F64, SOA, ROW_MAJOR, OP_N, OP_N, m, n, k, 1.0, 0.0,
                                          k, stride, n, stride, n, stride, batch))
check(lib.apairs_plan_execute_gemm(plan, A, B, C))
for e in range(batch):
    for i in range(m):
        for j in range(n):
            want = sum(at(A, k, i, l, e) * at(B, n, l, j, e) for l in range(k))
            if abs(at(C, n, i, j, e) - want) > 1e-14:
                sys.exit(f"C[{e}]({i}, {j}) = {at(C, n, i, j, e)!r}, expected {want!r}")
check(lib.apairs_plan_destroy(plan))

# potrf + potrs, SoA, lower: S_e = [[a, b], [b, c]] with a, c > |b| (element 5: not SPD).
S = (c_double * (4 * stride))()
for e in range(batch):
    a, b, c = random.uniform(1, 2), random.uniform(-0.5, 0.5), random.uniform(1, 2)
    if e == 5:
        c = b * b / a - 0.1  # the leading 2x2 minor is negative
    for (i, j), x in {(0, 0): a, (0, 1): float("nan"), (1, 0): b, (1, 1): c}.items():
        S[(i * 2 + j) * stride + e] = x  # the upper triangle is never read: NaN there
F = (c_double * (4 * stride))(*S)
info = (c_int32 * batch)()
check(lib.apairs_plan_create_potrf_batched(byref(plan), ctx, F64, SOA, ROW_MAJOR, LOWER, 2, 2, stride, batch))
check(lib.apairs_plan_execute_potrf(plan, F, info))
check(lib.apairs_plan_destroy(plan))
R = (c_double * (2 * stride))(*[random.uniform(-1, 1) for _ in range(2 * stride)])
X = (c_double * (2 * stride))(*R)
check(lib.apairs_plan_create_potrs_batched(byref(plan), ctx, F64, SOA, ROW_MAJOR, LOWER, 2, 1, 2, stride, 1, stride,
                                           batch))
check(lib.apairs_plan_execute_potrs(plan, F, X))
check(lib.apairs_plan_destroy(plan))
for e in range(batch):
    if info[e] != (2 if e == 5 else 0):
        sys.exit(f"info[{e}] = {info[e]}")
    if e == 5:
        continue
    a, b, c = S[e], S[2 * stride + e], S[3 * stride + e]
    x0, x1 = X[e], X[stride + e]
    if abs(a * x0 + b * x1 - R[e]) > 1e-14 or abs(b * x0 + c * x1 - R[stride + e]) > 1e-14:
        sys.exit(f"element {e}: S x != r")

# gesv, AoS, column-major (Fortran's A(3, 3, batch)): element 7 singular (a zero column).
n, batch = 3, 300
G = (c_double * (n * n * batch))(*[random.uniform(-1, 1) for _ in range(n * n * batch)])
for i in range(n):
    G[7 * n * n + 1 * n + i] = 0.0  # column 1 of element 7
G0 = list(G)
Y = (c_double * (n * batch))(*[random.uniform(-1, 1) for _ in range(n * batch)])
Y0 = list(Y)
ipiv, info = (c_int32 * (n * batch))(), (c_int32 * batch)()
check(lib.apairs_plan_create_gesv_batched(byref(plan), ctx, F64, AOS, COL_MAJOR, n, 1, n, n * n, n, n, batch))
check(lib.apairs_plan_execute_gesv(plan, G, ipiv, Y, info))
check(lib.apairs_plan_destroy(plan))
for e in range(batch):
    if e == 7:
        if info[e] != 2 or list(Y[e * n:(e + 1) * n]) != Y0[e * n:(e + 1) * n]:
            sys.exit(f"singular element: info {info[e]}, B changed")
        continue
    if info[e] != 0 or not all(i + 1 <= ipiv[e * n + i] <= n for i in range(n)):
        sys.exit(f"element {e}: info {info[e]}, ipiv {list(ipiv[e * n:(e + 1) * n])}")
    for i in range(n):  # A x = b, A column-major: A(i, j) at i + j * n
        r = sum(G0[e * n * n + i + j * n] * Y[e * n + j] for j in range(n)) - Y0[e * n + i]
        # backward stable (apairs.h): relative to |A| |x| + |b|, not absolute (a random
        # element may be ill-conditioned, its x large)
        scale = sum(abs(G0[e * n * n + i + j * n] * Y[e * n + j]) for j in range(n)) + abs(Y0[e * n + i])
        if abs(r) > 32 * n * 2.0**-53 * scale:
            sys.exit(f"element {e}: residual {r}, bound {32 * n * 2.0**-53 * scale}")

# dot, AoS: out[e] = x_e . y_e.
n = 7
U = (c_double * (n * batch))(*[random.uniform(-1, 1) for _ in range(n * batch)])
V = (c_double * (n * batch))(*[random.uniform(-1, 1) for _ in range(n * batch)])
D = (c_double * batch)()
check(lib.apairs_plan_create_dot_batched(byref(plan), ctx, F64, AOS, n, n, n, batch))
check(lib.apairs_plan_execute_dot(plan, U, V, D))
check(lib.apairs_plan_destroy(plan))
for e in range(batch):
    want = sum(U[e * n + i] * V[e * n + i] for i in range(n))
    if abs(D[e] - want) > 1e-14:
        sys.exit(f"dot[{e}] = {D[e]!r}, expected {want!r}")
check(lib.apairs_context_destroy(ctx))
print("ok")
