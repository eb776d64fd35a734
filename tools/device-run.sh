#!/usr/bin/env bash
# Developer script for a lent GPU machine (see tools/gpu-notes.md).
#   tools/device-run.sh pack            here: copy the runnable parts of build/ (stripped,
#                                       xz-compressed) and ../shared/bench/peers.py into
#                                       .device/ (carry it: [".device"])
#   tools/device-run.sh run [--bench] [--batched] [--passes N] [--quick] [--profile] [--sanitize] [--no-tests]
#                                       there: gpu suite (binaries run directly: the build
#                                       was configured by another Meson), the demo, and
#                                       optionally apairs_bench beside peers.py (--batched:
#                                       N passes of both, alternating, each row's median
#                                       time of ours and of the peer's; the peers' times
#                                       move between calls more than ours); then
#                                       compute-sanitizer memcheck and racecheck on the
#                                       pairwise cases, or with --sanitize the whole gpu
#                                       suite under memcheck, racecheck, initcheck and
#                                       synccheck; --no-tests: the benchmarks alone;
#                                       --profile: ncu (--set full) on one warm launch of
#                                       each batched row listed below, the reports, their
#                                       details and SASS source pages in profiles.tgz
# Logs go to $OUT (or /tmp/apairs-device); a summary is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = pack ]; then
  # No -e above (run goes on past failures): every step here is checked, so that a missing
  # binary or a failed strip or xz fails pack instead of carrying a half-packed .device.
  failed() { echo "$0 pack: $1 failed" >&2; exit 1; }
  { rm -rf .device/build && mkdir -p .device/build; } || failed "making .device/build"
  for f in capi/libapairs.so.0 tests/test_api tests/test_core tests/capi/host_no_context tools/apairs tools/apairs_bench; do
    { mkdir -p ".device/build/$(dirname $f)" && cp -L "build/$f" ".device/build/$f" &&
      strip --strip-debug ".device/build/$f" &&
      xz -T0 -6 -f ".device/build/$f"; } || failed "packing build/$f"
    # (xz: the device tool carries 64 MiB at most; run unpacks)
  done
  cp ../shared/bench/peers.py .device/ || failed "copying ../shared/bench/peers.py"
  du -sh .device
  exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 pack | run [--bench] [--batched] [--passes N] [--quick] [--profile] [--sanitize] [--no-tests]" >&2; exit 2; }
shift
passes=1
args=("$@")
for i in "${!args[@]}"; do [ "${args[$i]}" = --passes ] && passes=${args[$((i + 1))]:-}; done
[[ $passes =~ ^[1-9][0-9]*$ ]] || { echo "--passes N: N a positive count" >&2; exit 2; }
b=.device/build
# Binaries carried compressed (to fit the carry limit) are unpacked first.
find .device -name '*.xz' -exec xz -d -f {} \; 2>/dev/null
find "$b" -type f -exec chmod +x {} + 2>/dev/null
out=${OUT:-/tmp/apairs-device}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv | tee "$out/gpu.txt"

summary=()
note() { summary+=("$1"); }
suite() {  # name, then the command
  local name=$1; shift
  APAIRS_TEST_BACKEND=cuda "$@" >"$out/$name.log" 2>&1
  local rc=$?
  note "$name rc=$rc: $(grep -E 'test cases|All tests passed|ERROR SUMMARY|^passed|^FAILED|^skipped' "$out/$name.log" | tail -1)"
  [ $rc -eq 0 ] || tail -60 "$out/$name.log"
}
tests=1; [[ " $* " == *" --no-tests "* ]] && tests=0
if [ $tests = 1 ]; then
  suite gpu-api "$b/tests/test_api"
  suite gpu-core "$b/tests/test_core" '[cuda],[faults]'
  suite host-no-context "$b/tests/capi/host_no_context"
  "$b/tools/apairs" -o "$out/D.npy" >"$out/demo.log" 2>&1
  note "demo rc=$?"
  cat "$out/demo.log"
fi

if [[ " $* " == *" --bench "* ]]; then
  q=""; [[ " $* " == *" --quick "* ]] && q="--quick"
  "$b/tools/apairs_bench" $q --json "$out/apairs.json" >"$out/bench.log" 2>&1
  note "bench rc=$?"
  python3 .device/peers.py --suite pairwise $q --json "$out/peers.json" >"$out/peers.log" 2>&1
  note "peers rc=$?"
  python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
ours = json.load(open(f"{out}/apairs.json"))["rows"]
peers = json.load(open(f"{out}/peers.json"))["rows"]
def peer_key(name):  # torch.cdist p=1 float32 / cuBLAS a@b.T (dot) float32 / ... p=0 (hamming count)
    dt = "float64" if "float64" in name else "float32"
    if "(dot)" in name: return ("dot", dt)
    if "p=0" in name: return ("hamming", "uint8")
    return ("p=" + name.split("p=")[1].split()[0], dt)
def our_key(name):  # apairs l1 float32 / apairs lp p=2.5 float32 / apairs hamming uint8
    w = name.split()
    m = {"l1": "p=1", "l2": "p=2", "linf": "p=inf", "lp": w[2] if len(w) > 3 else ""}.get(w[1], w[1])
    if m == "p=2.7": m = "p=2.5"  # a general p, against torch.cdist p=2.5 (issue 7's target)
    if m == "p=4": m = "p=3"  # the integer p's target is against torch.cdist p=3 (issue 7)
    if m == "sqeuclidean": m = "p=2"  # against p=2's paths (torch has no squared distance)
    return (m, w[-1])
print(f"{'case':28s} {'shape':22s} {'apairs ms':>10s} {'peer ms':>10s} {'speedup':>8s}  peer")
for r in ours:
    for p in peers:
        # cosine is timed against the same peer as dot: cuBLAS's a @ b.T (issue 7's target)
        if p["shape"] == r["shape"] and peer_key(p["name"]) == (("dot",) + our_key(r["name"])[1:] if our_key(r["name"])[0] == "cosine" else our_key(r["name"])):
            print(f"{r['name']:28s} {r['shape']:22s} {r['ms']:10.3f} {p['ms']:10.3f} {p['ms'] / r['ms']:8.2f}  {p['name']}")
PY
fi
if [[ " $* " == *" --batched "* ]]; then
  q=""; [[ " $* " == *" --quick "* ]] && q="--quick"
  for ((r = 1; r <= passes; ++r)); do
    "$b/tools/apairs_bench" --suite batched $q --json "$out/batched.$r.json" >"$out/batched.$r.log" 2>&1
    note "batched bench pass $r rc=$?"
    python3 .device/peers.py --suite batched $q --json "$out/peers-batched.$r.json" >"$out/peers-batched.$r.log" 2>&1
    note "batched peers pass $r rc=$?"
    grep '^#.*copy' "$out/batched.$r.log" | head -1
  done
  cp "$out/batched.1.log" "$out/batched.log"  # (pass 1's log; the json files below are medians)
  # batched.json and peers-batched.json: each row the pass of median time (ours and the
  # peer's separately); the passes' own files go into one tar.
  python3 - "$out" "$passes" <<'PY'
import json, sys
out, passes = sys.argv[1], int(sys.argv[2])
def failed(row):
    return str(row.get("check") or "").startswith("CHECK FAILED")
def median_rows(stem):
    runs = [json.load(open(f"{out}/{stem}.{r}.json")) for r in range(1, passes + 1)]
    groups = {}
    for run in runs:
        for row in run["rows"]:
            groups.setdefault((row["name"], row["shape"]), []).append(row)
    doc = dict(runs[0])
    doc["rows"] = []
    # A pass whose spot check failed is no measurement: the median of the passes that
    # passed; a row whose every pass failed keeps a failed one (batched-table.py refuses it).
    for (name, shape), g in groups.items():
        ok = [x for x in g if not failed(x)]
        if len(ok) < len(g):
            print(f"{stem}: {name} {shape}: {len(g) - len(ok)} of {len(g)} passes failed their check"
                  + (", left out of the median" if ok else "; the row stays marked failed"))
        doc["rows"].append(sorted(ok or g, key=lambda x: x["ms"])[len(ok or g) // 2])
    doc["passes"] = passes
    json.dump(doc, open(f"{out}/{stem}.json", "w"), indent=1)
    return doc["rows"]
ours = median_rows("batched")
# Keyed by (operation, shape, dtype): peers' 'potrf (cholesky_ex) float64' and our
# 'apairs potrf AoS float64' name the operation by their first and second words.
peers = {(p["name"].split()[0], p["shape"], p["name"].split()[-1]): p for p in median_rows("peers-batched")}
print(f"medians of {passes} pass(es)")
print(f"{'case':36s} {'shape':22s} {'ours ms':>9s} {'GB/s':>8s} {'peer ms':>9s} {'peer/ours':>9s}  peer")
for r in ours:
    if r.get("suite") != "batched":
        continue
    p = peers.get((r["name"].split()[1], r["shape"], r["name"].split()[-1]))
    pm = p["ms"] if p else float("nan")
    print(f"{r['name']:36s} {r['shape']:22s} {r['ms']:9.3f} {r['rate']:8.0f} {pm:9.3f} {pm / r['ms']:9.2f}  "
          f"{p['name'] if p else '(no peer)'}")
PY
  (cd "$out" && tar cf batched-passes.tar batched.[0-9]*.json batched.[0-9]*.log peers-batched.[0-9]*.json \
     peers-batched.[0-9]*.log && rm -f batched.[0-9]*.json batched.[0-9]*.log peers-batched.[0-9]*.json peers-batched.[0-9]*.log)
  grep -E '^(apairs|#).*(potrf|chol)' "$out/batched.log" | head -2
fi
if [[ " $* " == *" --profile "* ]]; then
  # The batched rows that miss their targets on the H200 (runs 209-214 of the notes), one warm
  # launch each (the bench's first launch skipped) under ncu's full set of sections; the
  # text of each report's details and of its SASS with per-instruction counters and stall
  # samples (the source page).
  export PATH="/usr/local/cuda/bin:$PATH"
  prof=("gemm SoA float64&n=8 " "gemm AoS float64&n=16 " "gemm AoS float64&n=32 " "gemv AoS float32&n=8 "
        "gemv AoS float64&n=32 " "potrf AoS float32&n=32 " "dot AoS float64&n=16 " "transpose AoS->SoA float32&n=16 ")
  for i in "${!prof[@]}"; do
    ncu --set full --import-source no --clock-control none -k 'regex:(gemm|getrf|getrs|potrf|potrs|transpose|vec)_' \
      --launch-skip 1 --launch-count 1 -f -o "$out/prof$i" "$b/tools/apairs_bench" --suite batched --only "${prof[$i]}" \
      >"$out/prof$i.log" 2>&1
    note "ncu '${prof[$i]}' rc=$?"
    ncu --import "$out/prof$i.ncu-rep" --page details >"$out/prof$i.txt" 2>&1
    ncu --import "$out/prof$i.ncu-rep" --page source --print-source sass --csv >"$out/prof$i.sass.csv" 2>&1
  done
  (cd "$out" && tar czf profiles.tgz prof[0-9]* && rm -f prof[0-9]*)
fi
# Sanitizers last: slow, and the rest should report even if they run out of time.
if [ $tests = 0 ]; then
  :
elif [[ " $* " == *" --sanitize "* ]]; then
  # The eight runs at once (the machine has the cores; the GPU interleaves them), each
  # writing its summary line to a file of its own.
  for tool in memcheck racecheck initcheck synccheck; do
    (suite "$tool-api" compute-sanitizer --tool "$tool" --error-exitcode 9 "$b/tests/test_api"
     printf '%s\n' "${summary[-1]}" >"$out/$tool-api.summary") &
    (suite "$tool-core" compute-sanitizer --tool "$tool" --error-exitcode 9 "$b/tests/test_core" '[cuda]~[large]~[api-error],[faults]'
     printf '%s\n' "${summary[-1]}" >"$out/$tool-core.summary") &
  done
  wait
  for f in "$out"/*.summary; do note "$(cat "$f")"; done
else
  suite memcheck compute-sanitizer --tool memcheck --error-exitcode 9 "$b/tests/test_api" '[pairwise],[batched]'
  suite racecheck compute-sanitizer --tool racecheck --error-exitcode 9 "$b/tests/test_core" '[cuda]~[large]~[api-error]'
  suite racecheck-batched compute-sanitizer --tool racecheck --error-exitcode 9 "$b/tests/test_api" '[batched]'
fi
printf '%s\n' "${summary[@]}"
