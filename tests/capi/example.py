"""Cosine distances between the rows of A (5 x 3) and B (4 x 3): python3 example.py [libapairs.so]"""
import ctypes, ctypes.util, itertools, math, os, sys
from ctypes import POINTER, byref, c_char_p, c_double, c_int32, c_int64, c_void_p

APAIRS_SUCCESS, APAIRS_BACKEND_AUTO, APAIRS_METRIC_COSINE, APAIRS_DTYPE_F64 = 0, 0, 7, 2
path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("APAIRS_LIB") or ctypes.util.find_library("apairs")
if not path:
    sys.exit("libapairs not found: pass its path or set APAIRS_LIB")
lib = ctypes.CDLL(path)
for name, restype, argtypes in [
        ("apairs_status_string", c_char_p, [c_int32]),
        ("apairs_last_error", c_char_p, []),
        ("apairs_context_create", c_int32, [POINTER(c_void_p), c_int32, c_int32]),
        ("apairs_plan_create_pairwise", c_int32,
         [POINTER(c_void_p), c_void_p, c_int32, c_double, c_int32] + [c_int64] * 6),
        ("apairs_plan_execute", c_int32, [c_void_p] * 4),
        ("apairs_plan_describe", c_int32, [c_void_p, c_char_p, c_int64, POINTER(c_int64)]),
        ("apairs_plan_destroy", c_int32, [c_void_p]), ("apairs_context_destroy", c_int32, [c_void_p])]:
    getattr(lib, name).restype, getattr(lib, name).argtypes = restype, argtypes

def check(status):
    if status != APAIRS_SUCCESS:
        sys.exit(f"{lib.apairs_status_string(status).decode()}: {lib.apairs_last_error().decode()}")

n1, n2, d = 5, 4, 3
A = (c_double * (n1 * d))(*[math.sin(3 * i + k) for i in range(n1) for k in range(d)])
B = (c_double * (n2 * d))(*[math.cos(2 * j - k) for j in range(n2) for k in range(d)])
D = (c_double * (n1 * n2))()
ctx, plan = c_void_p(), c_void_p()
check(lib.apairs_context_create(byref(ctx), APAIRS_BACKEND_AUTO, 0))
check(lib.apairs_plan_create_pairwise(byref(plan), ctx, APAIRS_METRIC_COSINE, 0.0, APAIRS_DTYPE_F64,
                                      n1, n2, d, d, d, n2))  # lda = ldb = d, ldd = n2
check(lib.apairs_plan_execute(plan, A, B, D))
desc = ctypes.create_string_buffer(1024)
check(lib.apairs_plan_describe(plan, desc, len(desc), None))
print(desc.value.decode())
dot = lambda u, v: sum(x * y for x, y in zip(u, v))
for i, j in itertools.product(range(n1), range(n2)):
    a, b = A[i * d:(i + 1) * d], B[j * d:(j + 1) * d]
    want = 1 - dot(a, b) / math.sqrt(dot(a, a) * dot(b, b))
    if abs(D[i * n2 + j] - want) > 1e-12:
        sys.exit(f"D[{i}][{j}] = {D[i * n2 + j]!r}, expected {want!r}")
check(lib.apairs_plan_destroy(plan))
check(lib.apairs_context_destroy(ctx))
print("ok")
