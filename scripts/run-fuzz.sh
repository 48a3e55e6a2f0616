#!/usr/bin/env bash
# Runs each libFuzzer harness for a bounded time from its in-tree seed corpus.
#   scripts/run-fuzz.sh SECONDS BUILD_DIR NAME...   (make fuzz calls it)
# For NAME: BUILD_DIR/tests/fuzz_NAME reads tests/fuzz/corpus/NAME/ and keeps what it finds in
# BUILD_DIR/corpus/NAME/; a crash, leak or sanitizer report leaves its input in
# BUILD_DIR/artifacts/ and fails the run. Prints one line per harness; exit 0 when none failed.
set -u
secs=$1 build=$2; shift 2
src=$(cd "$(dirname "$0")/.." && pwd)
failed=()
mkdir -p "$build/artifacts"
for name in "$@"; do
  work="$build/corpus/$name"
  mkdir -p "$work"
  log="$build/fuzz_$name.log"
  start=$SECONDS
  "$build/tests/fuzz_$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/${name}-" "$work" "$src/tests/fuzz/corpus/$name" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ "$rc" -ne 0 ]; then
    failed+=("$name")
    printf 'FAIL  fuzz_%-10s exit %d after %d s (log %s)\n' "$name" "$rc" $((SECONDS - start)) "$log"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 20 | sed 's/^/      | /'
  else
    printf 'ok    fuzz_%-10s %s runs in %d s, corpus %d inputs\n' "$name" "${runs:-?}" $((SECONDS - start)) \
        "$(ls "$work" | wc -l)"
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: failed: ${failed[*]}"; exit 1; }
