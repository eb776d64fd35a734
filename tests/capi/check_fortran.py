#!/usr/bin/env python3
"""Check that the Fortran module capi/apairs.f90 still matches include/apairs.h.

    check_fortran.py include/apairs.h capi/apairs.f90
    check_fortran.py --self-test include/apairs.h capi/apairs.f90

The header is the source of truth. This script reads from it every numeric macro and
enumerator (APAIRS_*) and every APAIRS_API function with its parameter types; from the
module every `integer(c_int32_t), parameter :: APAIRS_*` constant and every interface
body with bind(C, name="apairs_...") and its dummy-argument declarations. It fails
(exit 1, one line per problem) when
  - a constant or function is on one side only,
  - a constant's value differs, or a Fortran constant is not integer(c_int32_t),
  - a function's argument count, an argument's kind (type, kind parameter, passed by
    value / by reference / as a character array) or its result differs from what
    TYPE_MAP says the C type must become,
  - a bind(C) name differs from the Fortran procedure name,
  - a dummy argument's name differs from the C parameter's (keyword calls),
  - an argument C writes is not intent(inout) (intent(out) lets the compiler drop the
    value a failed call must leave alone), an array C only reads is not intent(in), or
    an argument has an attribute other than value, intent and dimension(*),
  - the module renames an import (the kinds are checked by name).
Fortran names are case-insensitive, so a C constant whose name equals a function's
(APAIRS_VERSION_NUMBER and apairs_version_number) is spelled NAME_F in the module.

--self-test mutates the module text in memory in several ways and checks that each
mutation is caught (the checker's own test).
"""
import re
import sys

# C parameter type (base, number of '*', const) -> Fortran (type, kind, passing).
# passing: 'value' = the VALUE attribute; 'ref' = by reference, scalar, not intent(in);
# 'array' = by reference, dimension(*). Extend it when the header gains a new type.
TYPE_MAP = {
    ("int32_t", 0, False): ("integer", "c_int32_t", "value"),
    ("apairs_status_t", 0, False): ("integer", "c_int32_t", "value"),
    ("int64_t", 0, False): ("integer", "c_int64_t", "value"),
    ("double", 0, False): ("real", "c_double", "value"),
    ("apairs_context_t", 0, False): ("type", "c_ptr", "value"),
    ("apairs_plan_t", 0, False): ("type", "c_ptr", "value"),
    ("void", 1, False): ("type", "c_ptr", "value"),
    ("void", 1, True): ("type", "c_ptr", "value"),
    ("int32_t", 1, False): ("integer", "c_int32_t", "ref"),
    ("int32_t", 1, True): ("integer", "c_int32_t", "array"),
    ("int64_t", 1, False): ("integer", "c_int64_t", "ref"),
    ("double", 1, False): ("real", "c_double", "ref"),
    ("double", 1, True): ("real", "c_double", "array"),
    ("apairs_context_t", 1, False): ("type", "c_ptr", "ref"),
    ("apairs_plan_t", 1, False): ("type", "c_ptr", "ref"),
    ("char", 1, False): ("character", "c_char", "array"),
}
# C pointer parameters that are arrays (one entry per batch element, bin or neighbour), by
# parameter name: by reference with dimension(*), whatever TYPE_MAP says for their type
# as a scalar.
ARRAY_PARAMS = {"info", "ipiv", "counts", "sums", "indices"}
# C result type -> Fortran function result (type, kind); None = subroutine.
RESULT_MAP = {
    ("void", 0, False): None,
    ("int32_t", 0, False): ("integer", "c_int32_t"),
    ("apairs_status_t", 0, False): ("integer", "c_int32_t"),
    ("char", 1, True): ("type", "c_ptr"),
}
CONSTANT_KIND = ("integer", "c_int32_t")
# Module procedures that may be private (helpers of the *_f functions).
PRIVATE_HELPERS = {"apairs_c_strlen", "apairs_string_from_c"}


class Problems(list):
    def add(self, fmt, *args):
        self.append(fmt % args)


# ----------------------------------------------------------------------------------
# Small integer expressions (macro bodies, Fortran initialisers)
# ----------------------------------------------------------------------------------
def eval_int(expr, names):
    """Evaluate + - * / ( ) over integer literals and known names; None if not one."""
    expr = expr.strip()
    expr = re.sub(r"\b(\d+)(?:_\w+|[uUlL]+)?\b", r"\1", expr)  # 3_c_int32_t, 3u, 3L
    tokens = re.findall(r"\d+|[A-Za-z_]\w*|[-+*/()]|\S", expr)
    if not tokens:
        return None
    out = []
    for t in tokens:
        if t.isdigit() or t in "+-*()":
            out.append(t)
        elif t == "/":
            out.append("//")
        elif re.match(r"[A-Za-z_]\w*$", t) and t.upper() in names:
            out.append("(%d)" % names[t.upper()])
        else:
            return None
    try:
        value = eval("".join(out), {"__builtins__": {}}, {})
    except Exception:
        return None
    return value if isinstance(value, int) else None


# ----------------------------------------------------------------------------------
# The C header
# ----------------------------------------------------------------------------------
def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: " " + "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def c_type_str(key, name=""):
    base, stars, const = key
    return ("const " if const else "") + base + (" " + "*" * stars if stars else "") + (" " + name if name else "")


def c_type_key(decl):
    """'const void *' -> ('void', 1, True)."""
    stars = decl.count("*")
    words = [w for w in re.findall(r"[A-Za-z_]\w*", decl)]
    const = "const" in words
    words = [w for w in words if w not in ("const", "volatile", "restrict", "struct", "enum")]
    base = " ".join(words)
    return (base, stars, const)


def parse_header(text, problems):
    text = strip_c_comments(text.replace("\\\n", " "))
    constants = {}  # upper name -> (name, value)

    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(APAIRS_\w+)[ \t]+(.+)$", text, flags=re.M):
        name, body = m.group(1), m.group(2)
        value = eval_int(body, {k: v for k, (_, v) in constants.items()})
        if value is not None:
            constants[name.upper()] = (name, value)

    for m in re.finditer(r"\benum\b\s*\w*\s*\{(.*?)\}", text, flags=re.S):
        nxt = 0
        for item in m.group(1).split(","):
            item = item.strip()
            if not item:
                continue
            em = re.match(r"([A-Za-z_]\w*)\s*(?:=\s*(.+))?$", item, flags=re.S)
            if not em:
                problems.add("apairs.h: cannot parse enumerator %r", item)
                continue
            name, body = em.group(1), em.group(2)
            if body is not None:
                value = eval_int(body, {k: v for k, (_, v) in constants.items()})
                if value is None:
                    problems.add("apairs.h: cannot evaluate enumerator %s = %s", name, body.strip())
                    continue
            else:
                value = nxt
            constants[name.upper()] = (name, value)
            nxt = value + 1

    functions = {}  # name -> (result key, [(param name, key)])
    body = re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)
    for m in re.finditer(r"\bAPAIRS_API\b([^;()]*?)\b(apairs_\w+)\s*\(([^()]*)\)\s*;", body):
        result, name, params = m.group(1), m.group(2), m.group(3)
        args = []
        params = " ".join(params.split())
        if params not in ("void", ""):
            for i, p in enumerate(params.split(",")):
                p = p.strip()
                pm = re.match(r"(.*?[\s*])([A-Za-z_]\w*)$", p)
                if pm and pm.group(1).strip():
                    decl, pname = pm.group(1), pm.group(2)
                else:
                    decl, pname = p, "arg%d" % (i + 1)
                args.append((pname, c_type_key(decl)))
        elif params == "":
            problems.add("apairs.h: %s() has an empty parameter list; C needs (void)", name)
        functions[name] = (c_type_key(result), args)
    if not functions:
        problems.add("apairs.h: no APAIRS_API function found (is this the header?)")
    return constants, functions


# ----------------------------------------------------------------------------------
# The Fortran module
# ----------------------------------------------------------------------------------
def fortran_statements(text):
    """Statements with comments removed and & continuations joined, lower-cased
    outside string literals, each with the line number it starts on."""
    statements, current, start = [], "", None
    for lineno, line in enumerate(text.split("\n"), 1):
        out, quote = [], None
        for ch in line:
            if quote:
                out.append(ch)
                if ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
                out.append(ch)
            elif ch == "!":
                break
            else:
                out.append(ch.lower())
        code = "".join(out).strip()
        if not code:
            continue
        if current and code.startswith("&"):
            code = code[1:].lstrip()
        cont = code.endswith("&")
        if cont:
            code = code[:-1].rstrip()
        if start is None:
            start = lineno
        current = (current + " " + code).strip()
        if not cont:
            for part in current.split(";"):
                if part.strip():
                    statements.append((start, part.strip()))
            current, start = "", None
    return statements


DECL_RE = re.compile(
    r"^(integer|real|type|character|logical|complex)\s*(\(([^()]*)\))?\s*(,(.*?))?::\s*(.+)$")


def split_top(s, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_kind(ftype, spec):
    spec = (spec or "").replace(" ", "")
    if ftype == "character":
        m = re.search(r"kind=(\w+)", spec)
        return m.group(1) if m else ("default" if not spec else spec)
    return spec.replace("kind=", "") or "default"


def parse_decl(stmt):
    """integer(c_int32_t), value :: a, b -> [(name, info)]."""
    m = DECL_RE.match(stmt)
    if not m:
        return None
    ftype, spec, attrs = m.group(1), m.group(3), m.group(5) or ""
    kind = parse_kind(ftype, spec)
    attrs = split_top(attrs)
    info_attrs = {"value": False, "intent": None, "dimension": None, "parameter": False,
                  "other": []}
    for a in attrs:
        if a == "value":
            info_attrs["value"] = True
        elif a.startswith("intent"):
            info_attrs["intent"] = a[a.index("(") + 1:a.rindex(")")].replace(" ", "")
        elif a.startswith("dimension"):
            info_attrs["dimension"] = a[a.index("(") + 1:a.rindex(")")].replace(" ", "")
        elif a == "parameter":
            info_attrs["parameter"] = True
        else:
            info_attrs["other"].append(a)
    entities = []
    for ent in split_top(m.group(6)):
        em = re.match(r"([a-z_]\w*)\s*(\(([^)]*)\))?\s*(=(.*))?$", ent, flags=re.S)
        if not em:
            entities.append((ent, None))
            continue
        info = dict(info_attrs, type=ftype, kind=kind, init=em.group(5))
        if em.group(3) is not None:
            info["dimension"] = em.group(3).replace(" ", "")
        entities.append((em.group(1), info))
    return entities


PROC_RE = re.compile(
    r"^(?:(integer|real|type|character|logical)\s*(\(([^()]*)\))?\s+)?"
    r"(?:(?:pure|elemental|recursive|impure)\s+)*"
    r"(function|subroutine)\s+([a-z_]\w*)\s*\(([^()]*)\)\s*(.*)$")


def parse_module(text, problems):
    constants = {}  # upper name -> (name as written, value, (type, kind), line)
    functions = {}  # c name -> dict
    in_interface = False
    proc = None
    depth = 0  # nesting of function/subroutine inside an interface block
    for lineno, stmt in fortran_statements(text):
        if re.match(r"^use\b", stmt) and "=>" in stmt:
            problems.add("apairs.f90:%d: a renamed import (%s): kinds are checked by their names",
                         lineno, stmt)
        if re.match(r"^(abstract\s+)?interface\b", stmt):
            in_interface = True
            continue
        if re.match(r"^end\s*interface\b", stmt):
            in_interface = False
            continue
        if in_interface:
            pm = PROC_RE.match(stmt)
            if pm and depth == 0:
                depth = 1
                tail = pm.group(7)
                bm = re.search(r"bind\s*\(\s*c\s*(?:,\s*name\s*=\s*(['\"])(.*?)\1)?\s*\)", tail)
                rm = re.search(r"result\s*\(\s*([a-z_]\w*)\s*\)", tail)
                proc = {
                    "fname": pm.group(5),
                    "kind": pm.group(4),
                    "dummies": [d.strip() for d in pm.group(6).split(",") if d.strip()],
                    "bind": (bm.group(2) if bm and bm.group(2) is not None else
                             (pm.group(5) if bm else None)),
                    "result": rm.group(1) if rm else pm.group(5),
                    "prefix": (pm.group(1), parse_kind(pm.group(1), pm.group(3))) if pm.group(1) else None,
                    "decls": {},
                    "line": lineno,
                }
                continue
            if re.match(r"^end\s*(function|subroutine)\b", stmt) or stmt == "end":
                if proc is not None and proc["bind"] is not None:
                    if proc["bind"].startswith("apairs_"):
                        if proc["bind"] in functions:
                            problems.add("apairs.f90:%d: second interface for %s", proc["line"], proc["bind"])
                        functions[proc["bind"]] = proc
                proc, depth = None, 0
                continue
            if proc is not None:
                ents = parse_decl(stmt)
                if ents:
                    for name, info in ents:
                        proc["decls"][name] = info
            continue
        pv = re.match(r"^private\s*(::)?\s*(.*)$", stmt)
        if pv:
            for name in split_top(pv.group(2)):
                if name.startswith("apairs_") and name not in PRIVATE_HELPERS:
                    problems.add("apairs.f90:%d: %s is private; users need it", lineno, name)
            if not pv.group(2):
                problems.add("apairs.f90:%d: a bare PRIVATE statement hides the API", lineno)
        ents = parse_decl(stmt)
        if ents:
            for name, info in ents:
                if info and info["parameter"] and name.upper().startswith("APAIRS_"):
                    constants[name.upper()] = (name, info["init"], (info["type"], info["kind"]), lineno)
        if re.match(r"^contains\b", stmt):
            break

    # Evaluate constants in order (they may refer to one another).
    values = {}
    evaluated = {}
    for key, (name, init, kind, lineno) in constants.items():
        value = eval_int(init or "", values)
        if value is None:
            problems.add("apairs.f90:%d: cannot evaluate %s = %s", lineno, key, init)
            continue
        values[key] = value
        evaluated[key] = (value, kind, lineno)
    return evaluated, functions


# ----------------------------------------------------------------------------------
# The comparison
# ----------------------------------------------------------------------------------
def fortran_constant_name(c_name, function_names):
    upper = c_name.upper()
    return upper + "_F" if upper.lower() in function_names else upper


def describe_passing(info):
    if info is None:
        return "undeclared"
    if info["value"]:
        passing = "value"
    elif info["dimension"] == "*":
        passing = "array"
    elif info["dimension"]:
        passing = "dimension(%s)" % info["dimension"]
    else:
        passing = "ref"
    return "%s(%s), %s" % (info["type"], info["kind"], passing)


def compare(header_text, module_text):
    problems = Problems()
    c_consts, c_funcs = parse_header(header_text, problems)
    f_consts, f_funcs = parse_module(module_text, problems)

    # Constants
    expected = {}
    for key, (name, value) in c_consts.items():
        expected[fortran_constant_name(name, c_funcs)] = (name, value)
    for fname, (cname, value) in sorted(expected.items()):
        if fname not in f_consts:
            problems.add("constant %s (= %d in apairs.h) is missing from apairs.f90%s", cname, value,
                         "" if fname == cname.upper() else " (as %s)" % fname)
            continue
        fvalue, kind, lineno = f_consts[fname]
        if fvalue != value:
            problems.add("apairs.f90:%d: %s = %d but apairs.h says %s = %d", lineno, fname, fvalue, cname, value)
        if kind != CONSTANT_KIND:
            problems.add("apairs.f90:%d: %s is %s(%s), expected %s(%s)", lineno, fname, kind[0], kind[1],
                         *CONSTANT_KIND)
    for fname in sorted(set(f_consts) - set(expected)):
        problems.add("apairs.f90:%d: constant %s is not in apairs.h", f_consts[fname][2], fname)

    # Functions
    for name in sorted(set(c_funcs) - set(f_funcs)):
        problems.add("function %s is declared in apairs.h but has no bind(C) interface in apairs.f90", name)
    for name in sorted(set(f_funcs) - set(c_funcs)):
        problems.add("apairs.f90:%d: bind(C, name=\"%s\") is not a function of apairs.h",
                     f_funcs[name]["line"], name)
    for name in sorted(set(c_funcs) & set(f_funcs)):
        c_result, c_args = c_funcs[name]
        f = f_funcs[name]
        where = "apairs.f90:%d: %s" % (f["line"], name)
        if f["fname"] != name:
            problems.add("%s: the Fortran name is %s; use the C name", where, f["fname"])
        # result
        if c_result not in RESULT_MAP:
            problems.add("%s: no Fortran mapping for the C result type '%s'; extend RESULT_MAP in %s",
                         where, c_type_str(c_result), __file__)
        else:
            want = RESULT_MAP[c_result]
            if want is None:
                if f["kind"] != "subroutine":
                    problems.add("%s: C returns void, so it must be a subroutine", where)
            elif f["kind"] != "function":
                problems.add("%s: C returns a value, so it must be a function", where)
            else:
                rinfo = f["decls"].get(f["result"])
                got = (rinfo["type"], rinfo["kind"]) if rinfo else f["prefix"]
                if got != want:
                    problems.add("%s: result is %s, expected %s(%s) for C %r", where,
                                 "%s(%s)" % got if got else "undeclared", want[0], want[1],
                                 c_type_str(c_result))
        # arguments
        if len(c_args) != len(f["dummies"]):
            problems.add("%s: %d argument(s) in apairs.h, %d in apairs.f90", where, len(c_args),
                         len(f["dummies"]))
            continue
        for i, ((cname, ckey), dummy) in enumerate(zip(c_args, f["dummies"]), 1):
            info = f["decls"].get(dummy)
            cdesc = c_type_str(ckey, cname)
            if ckey not in TYPE_MAP:
                problems.add("%s: no Fortran mapping for argument %d (%s); extend TYPE_MAP in %s",
                             where, i, cdesc, __file__)
                continue
            ftype, fkind, passing = TYPE_MAP[ckey]
            if cname in ARRAY_PARAMS and ckey[1] == 1:
                passing = "array"
            want = "%s(%s), %s" % (ftype, fkind, passing)
            got = describe_passing(info)
            if got != want:
                problems.add("%s: argument %d (%s) is %s in apairs.f90, expected %s", where, i, cdesc,
                             "%s: %s" % (dummy, got), want)
                continue
            if dummy != cname.lower():
                problems.add("%s: argument %d is named %s in apairs.f90 but %s in apairs.h (a keyword "
                             "call would pass it to another parameter)", where, i, dummy, cname)
            if info["other"]:
                problems.add("%s: argument %d (%s) has the attribute(s) %s: only value, intent and "
                             "dimension(*) keep the C calling convention", where, i, cdesc,
                             ", ".join(info["other"]))
            if passing in ("ref", "array") and not ckey[2] and info["intent"] != "inout":
                problems.add("%s: argument %d (%s) is written by C, so it must be intent(inout), not %s "
                             "(intent(out) lets the compiler drop the caller's value, which a failed "
                             "call must leave alone)", where, i, cdesc,
                             "intent(%s)" % info["intent"] if info["intent"] else "without intent")
            if passing == "array" and ckey[2] and info["intent"] != "in":
                problems.add("%s: argument %d (%s) is only read by C, so it must be intent(in)",
                             where, i, cdesc)
            if passing == "value" and info["intent"] not in (None, "in"):
                problems.add("%s: argument %d (%s) is passed by value: intent(%s) makes no sense",
                             where, i, cdesc, info["intent"])
    return problems, c_consts, c_funcs


# ----------------------------------------------------------------------------------
def self_test(header_text, module_text):
    problems, _, _ = compare(header_text, module_text)
    if problems:
        print("self-test: the unmodified module already fails:\n  " + "\n  ".join(problems))
        return 1
    mutations = [
        ("a changed enum value",
         lambda t: re.sub(r"(APAIRS_METRIC_COSINE\s*=\s*)7", r"\g<1>9", t)),
        ("a missing constant",
         lambda t: re.sub(r"\n[^\n]*APAIRS_DTYPE_U8 = 3", "", t)),
        ("an extra constant",
         lambda t: t.replace("APAIRS_DTYPE_U8 = 3", "APAIRS_DTYPE_U8 = 3\n  integer(c_int32_t), parameter :: APAIRS_DTYPE_U16 = 4")),
        ("a constant of the wrong kind",
         lambda t: re.sub(r"integer\(c_int32_t\), parameter :: APAIRS_BACKEND_CUDA",
                          "integer(c_int64_t), parameter :: APAIRS_BACKEND_CUDA", t)),
        ("a missing function",
         lambda t: re.sub(r"\n\s*function apairs_plan_destroy\(.*?end function apairs_plan_destroy", "", t,
                          flags=re.S)),
        ("an int64 argument declared as int32",
         lambda t: t.replace("integer(c_int64_t), value :: ldb", "integer(c_int32_t), value :: ldb")),
        ("a value argument passed by reference",
         lambda t: t.replace("integer(c_int32_t), value :: backend", "integer(c_int32_t) :: backend")),
        ("an out-parameter passed by value",
         lambda t: t.replace("real(c_double), intent(inout) :: value", "real(c_double), value :: value")),
        ("a dropped argument",
         lambda t: t.replace("(plan, A, B, D) bind", "(plan, A, B) bind")),
        ("a wrong bind name",
         lambda t: t.replace('name="apairs_context_set_stream"', 'name="apairs_context_set_streams"')),
        ("a private API function",
         lambda t: t.replace("private :: apairs_c_strlen", "private :: apairs_plan_execute, apairs_c_strlen")),
        ("a handle out-parameter declared intent(out)",
         lambda t: t.replace("type(c_ptr), intent(inout) :: ctx", "type(c_ptr), intent(out) :: ctx", 1)),
        ("an output array declared intent(out)",
         lambda t: t.replace("dimension(*), intent(inout) :: info", "dimension(*), intent(out) :: info", 1)),
        ("an input array not intent(in)",
         lambda t: t.replace("dimension(*), intent(in) :: radii", "dimension(*) :: radii", 1)),
        ("two same-kind arguments swapped by name",
         lambda t: re.sub(r"(function apairs_plan_create_pairwise\(plan, ctx, metric, p, dtype, )n1, n2",
                          r"\1n2, n1", t, count=1)),
        ("an extra attribute on an argument",
         lambda t: t.replace("integer(c_int64_t), value :: ldb", "integer(c_int64_t), value, volatile :: ldb", 1)),
        ("a renamed kind import",
         lambda t: t.replace("only: c_int32_t,", "only: c_int32_t, c_long_long => c_int64_t,", 1)),
        ("a wrong result kind",
         lambda t: re.sub(r"(apairs_last_error\(\) bind.*?)type\(c_ptr\) :: r", r"\1integer(c_int32_t) :: r",
                          t, count=1, flags=re.S)),
    ]
    header_mutations = [
        ("a new header function",
         lambda t: t.replace("#ifdef __cplusplus\n}", "APAIRS_API apairs_status_t apairs_new(int32_t x);\n"
                             "#ifdef __cplusplus\n}")),
        ("a new header enumerator",
         lambda t: t.replace("APAIRS_METRIC_HAMMING = 8", "APAIRS_METRIC_HAMMING = 8,\n    APAIRS_METRIC_JACCARD = 9")),
        ("a changed header argument type",
         lambda t: t.replace("int32_t device);", "int64_t device);")),
    ]
    failed = 0
    for what, mutate in mutations + header_mutations:
        is_header = (what, mutate) in header_mutations
        h = mutate(header_text) if is_header else header_text
        m = module_text if is_header else mutate(module_text)
        if (h, m) == (header_text, module_text):
            print("self-test: mutation '%s' did not apply (update the self-test)" % what)
            failed += 1
            continue
        problems, _, _ = compare(h, m)
        if problems:
            print("self-test: caught %s: %s" % (what, problems[0]))
        else:
            print("self-test: NOT caught: %s" % what)
            failed += 1
    return 1 if failed else 0


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        header_text = f.read()
    with open(args[1], encoding="utf-8") as f:
        module_text = f.read()
    if "--self-test" in argv:
        return self_test(header_text, module_text)
    problems, c_consts, c_funcs = compare(header_text, module_text)
    if problems:
        print("apairs.f90 has drifted from apairs.h (%d problem(s)):" % len(problems))
        for p in problems:
            print("  " + p)
        print("Fix capi/apairs.f90 (or this checker's TYPE_MAP for a new C type).")
        return 1
    print("apairs.f90 matches apairs.h: %d constants, %d functions" % (len(c_consts), len(c_funcs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
