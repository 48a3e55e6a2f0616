#!/usr/bin/env bash
# Runs each test binary given as an argument, continues past failures, and ends with one line
# "N passed, N failed" (", N skipped" when some skipped). Counts come from cmocka's own summary
# lines; a binary that dies or exits non-zero without reporting a failure counts as one failure,
# and so does one that ran no test at all (nothing passed, failed or skipped).
# Exit status: 0 when nothing failed, 1 otherwise.
#   scripts/run-tests.sh build/tests/test_a build/tests/test_b
#   DLS_TEST_VERBOSE=1 shows every binary's whole output.
#   DLS_TEST_TIMEOUT=S bounds each binary (default 900 s); a timeout counts as a failure.
set -u
passed=0; failed=0; skipped=0
failed_names=()
for bin in "$@"; do
  name=${bin##*/}
  out=$(timeout --kill-after=10 "${DLS_TEST_TIMEOUT:-900}" "$bin" 2>&1); rc=$?
  [ "$rc" -eq 124 ] && out+=$'\n'"run-tests: $name timed out after ${DLS_TEST_TIMEOUT:-900} s"
  p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\..*/\1/p' | awk '{s+=$1} END {print s+0}')
  f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s).*/\1/p' | awk '{s+=$1} END {print s+0}')
  s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test(s).*/\1/p' | awk '{s+=$1} END {print s+0}')
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  if [ $((p + f + s)) -eq 0 ]; then f=1; out+=$'\n'"run-tests: $name ran no tests"; fi
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
  if [ "$f" -gt 0 ]; then
    failed_names+=("$name")
    printf 'FAIL  %-32s %d passed, %d failed (exit %d)\n' "$name" "$p" "$f" "$rc"
    printf '%s\n' "$out" | tail -n 60 | sed 's/^/      | /'
  else
    printf 'ok    %-32s %d passed%s\n' "$name" "$p" "$([ "$s" -gt 0 ] && echo ", $s skipped")"
    [ "${DLS_TEST_VERBOSE:-0}" = 1 ] && printf '%s\n' "$out" | sed 's/^/      | /'
  fi
done
[ ${#failed_names[@]} -gt 0 ] && echo "failed binaries: ${failed_names[*]}"
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
