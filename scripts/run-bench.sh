#!/usr/bin/env bash
# Runs each benchmark binary given as an argument and lets it print its own figures.
# Benchmarks never assert timings; they print medians, ratios and instruction counts, and each
# figure a budget holds (tests/bench/budget.h) with its verdict line. With --verdict PROGRAM
# first, PROGRAM (bench_verdict) reads all of their output and ends it with the one-line verdict
# of the budgets. Exits 1 when a benchmark failed or a figure is over its budget or was not
# measured.
#   scripts/run-bench.sh [--verdict PROGRAM] BENCHMARK...
set -u
verdict=
if [ "${1:-}" = --verdict ]; then
  verdict=$2
  shift 2
fi
out=$(mktemp "${TMPDIR:-/tmp}/dlsync-bench.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
rc=0
for bin in "$@"; do
  echo "== ${bin##*/}"
  "$bin" 2>&1 | tee -a "$out"
  status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || { echo "benchmark ${bin##*/} exited $status"; rc=1; }
  echo
done
if [ -n "$verdict" ]; then
  "$verdict" < "$out" || rc=1
fi
exit $rc
