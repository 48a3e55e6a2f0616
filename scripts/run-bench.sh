#!/usr/bin/env bash
# Runs each benchmark binary given as an argument and lets it print its own figures.
# Benchmarks never assert timings; they print medians, ratios and instruction counts.
set -u
rc=0
for bin in "$@"; do
  echo "== ${bin##*/}"
  "$bin" 2>&1 || { echo "benchmark ${bin##*/} exited $?"; rc=1; }
  echo
done
exit $rc
