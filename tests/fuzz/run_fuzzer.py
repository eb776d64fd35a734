#!/usr/bin/env python3
"""Runs a bounded libFuzzer pass for the test suite.

    run_fuzzer.py WORKDIR FUZZER SEED_CORPUS [libFuzzer flags...]

WORKDIR (under the build directory) is emptied and gets two subdirectories: new/, the
first corpus directory, where libFuzzer writes the inputs it finds (it must never write
into the source tree), and artifacts/, where it writes a crashing input. FUZZER then
replays SEED_CORPUS (read only: it is the second corpus directory) and fuzzes for the
-runs given. Exits with 0 when FUZZER did, else 1 (never libFuzzer's 77, which Meson
takes for a skip); on a finding, names the artifact to add to the corpus through
make_corpus.py.
"""
import os
import shutil
import subprocess
import sys
import time


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    work, fuzzer, seeds, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if not os.path.isdir(seeds) or not os.listdir(seeds):
        print("run_fuzzer.py: no seed corpus in %s" % seeds, file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    new = os.path.join(work, "new")
    artifacts = os.path.join(work, "artifacts") + os.sep
    os.makedirs(new)
    os.makedirs(artifacts)
    env = dict(os.environ)
    # UBSan only prints by default: make undefined behaviour a finding. Leaks are
    # findings too (libFuzzer checks them per input under ASan).
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
    # The host backend's OpenMP threads sleep between executions instead of spinning
    # against libFuzzer's own thread (on two cores, spinning halves the throughput).
    env.setdefault("OMP_WAIT_POLICY", "passive")
    cmd = [fuzzer] + flags + ["-artifact_prefix=" + artifacts, "-print_final_stats=1", new, seeds]
    print("run_fuzzer.py:", " ".join(cmd), flush=True)
    t0 = time.monotonic()
    rc = subprocess.call(cmd, env=env)
    dt = time.monotonic() - t0
    found = sorted(os.listdir(artifacts))
    print("run_fuzzer.py: exit %d after %.1f s; %d new inputs in %s; artifacts: %s"
          % (rc, dt, len(os.listdir(new)), new, ", ".join(os.path.join(artifacts, f) for f in found) or "none"),
          flush=True)
    if rc != 0 and found:
        print("run_fuzzer.py: reproduce with %s %s; add it to make_corpus.py once understood"
              % (fuzzer, os.path.join(artifacts, found[0])), file=sys.stderr)
    # libFuzzer exits with 77 on a finding (its -error_exitcode), which Meson reads as
    # "skipped": any failure is 1 here, so that a finding fails the test.
    return 1 if rc != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
