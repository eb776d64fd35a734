#!/usr/bin/env python3
"""Check that include/apairs.h only grows from a released header.

    check_abi.py BASELINE_HEADER HEADER
    check_abi.py --self-test BASELINE_HEADER HEADER

BASELINE_HEADER is the header of a release, checked in unchanged
(tests/capi/abi/apairs-0.1.0.h). The check fails (exit 1, one line per problem) when,
in HEADER,
  - an enumerator or numeric APAIRS_* macro of the baseline is gone or has another
    value (the version macros APAIRS_VERSION_* excepted),
  - an APAIRS_API function of the baseline is gone, or its result type, its number of
    parameters or a parameter's type differs (parameter names may change),
  - a typedef of the baseline is gone or names another type.
New enumerators, macros, functions and typedefs are fine: that is growth. Exported
symbols are checked apart (check_symbols.py). --self-test mutates HEADER in memory in
several ways and checks that each mutation is caught.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_fortran import Problems, c_type_str, parse_header, strip_c_comments  # noqa: E402

UNPINNED = re.compile(r"^APAIRS_VERSION_")


def typedefs(text):
    text = " ".join(strip_c_comments(text).split())
    return {m.group(2): " ".join(m.group(1).split())
            for m in re.finditer(r"\btypedef\s+([^;]*?)\s*\b(\w+)\s*;", text)}


def compare(base_text, text):
    problems = Problems()
    base_consts, base_funcs = parse_header(base_text, problems)
    consts, funcs = parse_header(text, problems)
    for key, (name, value) in sorted(base_consts.items()):
        if UNPINNED.match(name):
            continue
        if key not in consts:
            problems.add("%s = %d was released and is gone", name, value)
        elif consts[key][1] != value:
            problems.add("%s was released as %d and is now %d", name, value, consts[key][1])
    for name, (result, args) in sorted(base_funcs.items()):
        if name not in funcs:
            problems.add("%s was released and is gone", name)
            continue
        new_result, new_args = funcs[name]
        if new_result != result:
            problems.add("%s: result was %s, now %s", name, c_type_str(result), c_type_str(new_result))
        if len(new_args) != len(args):
            problems.add("%s: had %d parameters, now %d", name, len(args), len(new_args))
            continue
        for i, ((pname, key), (_, new_key)) in enumerate(zip(args, new_args)):
            if key != new_key:
                problems.add("%s: parameter %d (%s) was %s, now %s", name, i + 1, pname, c_type_str(key),
                             c_type_str(new_key))
    new_types = typedefs(text)
    for name, decl in sorted(typedefs(base_text).items()):
        if name not in new_types:
            problems.add("typedef %s was released and is gone", name)
        elif new_types[name] != decl:
            problems.add("typedef %s was '%s', now '%s'", name, decl, new_types[name])
    return problems


def self_test(base_text, text):
    mutations = [
        ("renumbered enumerator", lambda t: re.sub(r"APAIRS_METRIC_L2 = 2", "APAIRS_METRIC_L2 = 12", t)),
        ("removed enumerator", lambda t: re.sub(r"\s*APAIRS_DTYPE_U8 = 3", "", t).replace("APAIRS_DTYPE_F64 = 2,", "APAIRS_DTYPE_F64 = 2")),
        ("removed function", lambda t: re.sub(r"APAIRS_API apairs_status_t apairs_plan_destroy\([^)]*\);", "", t)),
        ("narrowed parameter", lambda t: t.replace("int64_t n1, int64_t n2, int64_t d,", "int32_t n1, int64_t n2, int64_t d,", 1)),
        ("added parameter", lambda t: t.replace("apairs_plan_destroy(apairs_plan_t plan)", "apairs_plan_destroy(apairs_plan_t plan, int32_t flags)", 1)),
        ("changed result", lambda t: t.replace("APAIRS_API int32_t apairs_version_number(void)", "APAIRS_API int64_t apairs_version_number(void)", 1)),
        ("changed typedef", lambda t: t.replace("typedef int32_t apairs_status_t;", "typedef int64_t apairs_status_t;", 1)),
    ]
    ok = not compare(base_text, text)
    if not ok:
        print("self-test: the unmutated header must pass")
    for what, mutate in mutations:
        mutated = mutate(text)
        if mutated == text:
            print("self-test: mutation '%s' did not apply (update the self-test)" % what)
            ok = False
        elif not compare(base_text, mutated):
            print("self-test: mutation '%s' was not caught" % what)
            ok = False
    # Growth is fine: a new enumerator, function and typedef.
    grown = text.replace("#ifdef __cplusplus\n}", "typedef int32_t apairs_new_t;\nenum { APAIRS_NEW_THING = 77 };\n"
                         "APAIRS_API apairs_status_t apairs_new_function(int64_t x);\n#ifdef __cplusplus\n}", 1)
    if grown == text or compare(base_text, grown):
        print("self-test: growth must pass")
        ok = False
    print("self-test %s (%d mutations)" % ("passed" if ok else "FAILED", len(mutations)))
    return 0 if ok else 1


def main(argv):
    selftest = "--self-test" in argv
    args = [a for a in argv[1:] if a != "--self-test"]
    if len(args) != 2:
        print(__doc__)
        return 2
    base_text, text = (open(p, encoding="utf-8").read() for p in args)
    if selftest:
        return self_test(base_text, text)
    problems = compare(base_text, text)
    for p in problems:
        print("%s: %s" % (args[1], p))
    print("%s: %s against %s" % (args[1], "%d ABI problems" % len(problems) if problems else "only grows",
                                 os.path.basename(args[0])))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
