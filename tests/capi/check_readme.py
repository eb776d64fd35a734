#!/usr/bin/env python3
"""Check that each example program appears verbatim in README.md.

    check_readme.py README.md tests/capi/example.c tests/capi/example.f90 ...

The examples are tested programs (suite capi); the README shows them to users. Each
must appear, whole and unchanged, as the content of one fenced code block (``` or ~~~,
any info string such as ```c) of the README, so that what users read is what the
tests run. Exit 1 with a message naming each example that is missing or differs
(and, for the closest block, a unified diff), 0 when all are there.
"""
import difflib
import os
import re
import sys

FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")


def fenced_blocks(text):
    """[(first line number, content)] of every fenced code block (CommonMark rules:
    the closing fence uses the same character, at least as long, nothing after)."""
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, fence, start = len(m.group(1)), m.group(2), i + 1
        body, i = [], i + 1
        while i < len(lines):
            close = re.match(r"^ {0,3}(%s{%d,})\s*$" % (re.escape(fence[0]), len(fence)), lines[i])
            if close:
                break
            line = lines[i]
            # Content lines lose up to `indent` leading spaces (CommonMark).
            strip = min(indent, len(line) - len(line.lstrip(" ")))
            body.append(line[strip:])
            i += 1
        blocks.append((start + 1, "\n".join(body)))
        i += 1
    return blocks


def normalise(text):
    return text.replace("\r\n", "\n").rstrip("\n")


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    readme, examples = argv[1], argv[2:]
    if not os.path.exists(readme):
        print("%s does not exist: write it, with each of %s in a fenced code block"
              % (readme, ", ".join(os.path.basename(e) for e in examples)))
        return 1
    with open(readme, encoding="utf-8") as f:
        blocks = [(line, normalise(b)) for line, b in fenced_blocks(f.read())]
    failed = 0
    for path in examples:
        with open(path, encoding="utf-8") as f:
            want = normalise(f.read())
        if any(b == want for _, b in blocks):
            print("%s: in %s" % (os.path.basename(path), os.path.basename(readme)))
            continue
        failed += 1
        print("%s does not appear verbatim in a fenced code block of %s" % (path, readme))
        if blocks:
            ratio = lambda b: difflib.SequenceMatcher(None, b[1], want).ratio()
            line, closest = max(blocks, key=ratio)
            if ratio((line, closest)) > 0.5:
                print("  closest block starts at %s:%d; differences (README -> example):" % (readme, line))
                diff = difflib.unified_diff(closest.split("\n"), want.split("\n"),
                                            "README.md:%d" % line, path, lineterm="", n=1)
                for d in diff:
                    print("    " + d)
    if failed:
        print("Copy each example into %s unchanged (the examples are what the tests run)." % readme)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
