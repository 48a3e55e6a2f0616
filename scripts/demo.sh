#!/usr/bin/env bash
# The headline demo, run by `make demo` with the absolute build folder as the only argument:
# a legacy producer -> consumer DLPack exchange (fake MXNet hands a tensor to fake TVM, each on
# its own stream) that reads stale data without dlsync, the `check` report that explains it,
# the correct result under `fix`, a new consumer using the C API (dlsync.h), and the race as an
# HTML report (build/demo/report.html).
set -euo pipefail
build=${1:?usage: scripts/demo.sh BUILD_DIR}
scen=$build/scenarios/scen_side_stream
api=$build/demo/demo_api
tool=$build/bin/dlsync
for f in "$scen" "$api" "$tool"; do
  [ -x "$f" ] || { echo "demo: $f is missing; run make first" >&2; exit 1; }
done

# The demo programs are linked against the CUDA simulator; say so, and whether a GPU is here.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "== GPU present ($(nvidia-smi -L | head -n1)); this demo still runs on the CUDA simulator"
  echo "   (the same scenarios on real CUDA kernels live in tests/gpu)"
else
  echo "== no GPU: running on the CUDA simulator (tests/cudasim)"
fi
export DLSYNC_CUPTI=$build/cudasim/libcupti.so.13

section() { printf '\n== %s\n$ %s\n' "$1" "$2"; }

section "1. without dlsync: fake MXNet writes 42 on its stream, fake TVM reads on another" \
        "scen_side_stream racy"
"$scen" racy 2>&1

section "2. dlsync check: the same program, unchanged, with the race explained" \
        "dlsync run --mode check -- scen_side_stream racy"
"$tool" run --mode check -- "$scen" racy 2>&1

section "3. dlsync fix (the default): the missing event wait is injected" \
        "dlsync run -- scen_side_stream racy"
"$tool" run --verbose -- "$scen" racy 2>&1

section "4. the C API: a new consumer asks the legacy producer for a tensor safe on its stream" \
        "dlsync run -- demo_api"
"$tool" run -- "$api" 2>&1

section "5. the race as a page: one self-contained HTML file, the race drawn beside its stacks" \
        "dlsync run --mode check --log demo.jsonl -- scen_side_stream racy; dlsync report --html report.html demo.jsonl"
mkdir -p "$build/demo"
rm -f "$build/demo/demo.jsonl"
"$tool" run --quiet --mode check --log "$build/demo/demo.jsonl" -- "$scen" racy >/dev/null 2>&1
"$tool" report --html "$build/demo/report.html" "$build/demo/demo.jsonl" >/dev/null
echo "demo: the HTML report is $build/demo/report.html (open it in any browser; it loads nothing)"
