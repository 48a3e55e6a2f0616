#!/usr/bin/env bash
# `make test-gpu`: the scenario corpus on the real GPU, or a clean skip where there is none.
#
#   tests/gpu/run-gpu-tests.sh <absolute build folder> [log folder]
#
# Asks gpu_probe (under a timeout, so a broken driver cannot hang it) whether a CUDA device is
# usable. With one, runs run-scenarios.sh on <build>/gpu with <build>/lib/libdlsync.so and exits
# with its status. Without one, prints why, one "skip" line per scenario, one per row of the GPU
# check's other GPU-only steps (scripts/gpu-check.sh --plan: the wheel's twins, the framework
# cases, CUPTI sharing, the floor, the pipeline, the exchange cost, the training step), and the
# closing line "0 passed, 0 failed, N skipped" (N = the rows that would have run: scenarios x
# 2 variants x 3 modes, and those rows), and exits 0, so CI without a GPU still proves the GPU
# code builds and the GPU check's drivers plan their runs.
# DLS_GPU_PROBE_TIMEOUT (seconds, default 30) bounds the probe.
set -u
build=${1:?usage: run-gpu-tests.sh <build folder> [log folder]}
logs=${2:-}
probe_out=$(timeout -k 5 "${DLS_GPU_PROBE_TIMEOUT:-30}" "$build/gpu/gpu_probe" 2>&1)
rc=$?
if [ "$rc" -eq 0 ]; then
  echo "$probe_out"
  exec "$(dirname "$0")/run-scenarios.sh" "$build/gpu" "$build/lib/libdlsync.so" ${logs:+"$logs"}
fi
[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && probe_out="gpu: none (the probe did not answer in time)"
echo "${probe_out:-gpu: none (probe exit $rc)}; GPU tests skipped"
n=0
for prog in "$build"/gpu/scen_*; do
  [ -x "$prog" ] || continue
  echo "skip  ${prog##*/scen_} (racy, correct) x (plain, check, fix)"
  n=$((n + 6))
done
# The GPU check's other steps say what they would run.
rows=$("$(dirname "$0")/../../scripts/gpu-check.sh" --plan 2>&1) || rows="gpu-check.sh --plan failed: $rows"
printf '%s\n' "$rows" | grep -v '^  '
n=$((n + $(printf '%s\n' "$rows" | grep -c '^skip ')))
echo "0 passed, 0 failed, $n skipped"
