#!/usr/bin/env python3
"""Compare the dynamic symbols libapairs.so exports with the checked-in list.

    check_symbols.py LIBRARY SYMBOLS_FILE [--header include/apairs.h] [--node APAIRS_0.1]
    check_symbols.py --self-test

SYMBOLS_FILE (tests/capi/apairs.symbols) lists every exported symbol, one per line,
sorted; '#' starts a comment. A line may name the version node after the symbol
("apairs_foo APAIRS_0.2"); without one, the symbol belongs to --node (default
APAIRS_0.1), the first node of capi/apairs.map. The check fails (exit 1) when
  - a listed symbol is not exported, or an exported one is not listed,
  - a symbol is not the default version of its node (name@@NODE),
  - anything not named apairs_* is exported (a leak past the version script),
  - the list is not sorted or has duplicates,
  - (with --header) an APAIRS_API function of the header is not in the list, or a
    listed symbol is not declared in the header.
The version-node symbols themselves (APAIRS_0.1, type A) are ignored. Exit 77 (meson's
"skipped") when nm is not available. $NM overrides the nm program.
"""
import os
import re
import shutil
import subprocess
import sys

NODE_RE = re.compile(r"^APAIRS_\d+(\.\d+)*$")


def read_list(path, default_node, problems):
    entries = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) > 2:
                problems.append("%s:%d: expected 'symbol [NODE]', got %r" % (path, lineno, line))
                continue
            entries.append((parts[0], parts[1] if len(parts) == 2 else default_node))
    names = [n for n, _ in entries]
    if names != sorted(names):
        problems.append("%s is not sorted (keep it `LC_ALL=C sort`ed so that diffs stay readable)" % path)
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        problems.append("%s lists more than once: %s" % (path, ", ".join(dups)))
    return dict(entries)


def parse_nm(output):
    """nm -D --defined-only lines -> [(type, name, version or None, default?)]."""
    symbols = []
    for line in output.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        stype, full = parts[-2], parts[-1]
        if "@@" in full:
            name, version = full.split("@@", 1)
            default = True
        elif "@" in full:
            name, version = full.split("@", 1)
            default = False
        else:
            name, version, default = full, None, False
        symbols.append((stype, name, version, default))
    return symbols


def header_functions(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
    return set(re.findall(r"\bAPAIRS_API\b[^;()]*?\b(apairs_\w+)\s*\(", text))


def compare(symbols, expected, header=None):
    problems = []
    exported = {}
    for stype, name, version, default in symbols:
        if stype == "A" and NODE_RE.match(name):
            continue  # the version node itself
        if not name.startswith("apairs_"):
            problems.append("exported symbol %s (type %s) is not apairs_*: the version script or "
                            "visibility lets it leak" % (name, stype))
            continue
        exported[name] = (stype, version, default)
    for name in sorted(set(expected) - set(exported)):
        problems.append("%s is in the symbol list but not exported by the library" % name)
    for name in sorted(set(exported) - set(expected)):
        problems.append("%s is exported but not in the symbol list: a new symbol belongs in "
                        "tests/capi/apairs.symbols (and in a new version node once released)" % name)
    for name in sorted(set(exported) & set(expected)):
        stype, version, default = exported[name]
        if version is None:
            problems.append("%s is exported without a version (expected %s@@%s)" % (name, name, expected[name]))
        elif version != expected[name] or not default:
            problems.append("%s is exported as %s%s%s, expected %s@@%s" % (
                name, name, "@@" if default else "@", version, name, expected[name]))
        if stype not in ("T", "t", "i"):
            problems.append("%s has nm type %s, expected a function (T)" % (name, stype))
    if header is not None:
        for name in sorted(header - set(expected)):
            problems.append("%s is declared APAIRS_API in apairs.h but not in the symbol list" % name)
        for name in sorted(set(expected) - header):
            problems.append("%s is in the symbol list but not declared in apairs.h" % name)
    return problems


def self_test():
    good = [("A", "APAIRS_0.1", None, False), ("T", "apairs_a", "APAIRS_0.1", True),
            ("T", "apairs_b", "APAIRS_0.1", True)]
    expected = {"apairs_a": "APAIRS_0.1", "apairs_b": "APAIRS_0.1"}
    sample = ("0000000000000000 A APAIRS_0.1\n"
              "000000000000f020 T apairs_a@@APAIRS_0.1\n"
              "000000000000f030 T apairs_b@@APAIRS_0.1\n")
    cases = [
        ("nm output parsed", parse_nm(sample) == good),
        ("clean library passes", not compare(good, expected, {"apairs_a", "apairs_b"})),
        ("missing symbol", compare(good[:2], expected)),
        ("unlisted symbol", compare(good + [("T", "apairs_c", "APAIRS_0.1", True)], expected)),
        ("leaked symbol", compare(good + [("T", "_ZN3fmt6formatEv", "APAIRS_0.1", True)], expected)),
        ("unversioned symbol", compare([good[0], good[1], ("T", "apairs_b", None, False)], expected)),
        ("non-default version", compare([good[0], good[1], ("T", "apairs_b", "APAIRS_0.1", False)], expected)),
        ("wrong node", compare([good[0], good[1], ("T", "apairs_b", "APAIRS_0.2", True)], expected)),
        ("data symbol", compare([good[0], good[1], ("D", "apairs_b", "APAIRS_0.1", True)], expected)),
        ("header function not listed", compare(good, expected, {"apairs_a", "apairs_b", "apairs_c"})),
    ]
    failed = [what for what, ok in cases if not ok]
    for what, ok in cases:
        print("self-test: %s: %s" % (what, "ok" if ok else "NOT CAUGHT"))
    return 1 if failed else 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    args, opts, i = [], {"--header": None, "--node": "APAIRS_0.1"}, 1
    while i < len(argv):
        if argv[i] in opts and i + 1 < len(argv):
            opts[argv[i]] = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    library, list_path = args
    nm = os.environ.get("NM") or shutil.which("nm")
    if not nm or not shutil.which(nm):
        print("nm not found: skipping the exported-symbol check")
        return 77
    proc = subprocess.run([nm, "-D", "--defined-only", library], capture_output=True, text=True)
    if proc.returncode != 0:
        print("%s -D --defined-only %s failed:\n%s" % (nm, library, proc.stderr))
        return 1
    problems = []
    expected = read_list(list_path, opts["--node"], problems)
    header = header_functions(opts["--header"]) if opts["--header"] else None
    problems += compare(parse_nm(proc.stdout), expected, header)
    if problems:
        print("exported symbols of %s differ from %s:" % (library, list_path))
        for p in problems:
            print("  " + p)
        return 1
    print("%s exports exactly the %d symbols of %s" % (library, len(expected), list_path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
