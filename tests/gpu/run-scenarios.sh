#!/usr/bin/env bash
# Runs every scenario program in a folder, racy and correct, plain / under dlsync check / under
# dlsync fix, and prints one row per run plus a closing "N passed, N failed" line. The same script
# runs the simulator corpus ($BUILD/scenarios) and the real-CUDA one ($BUILD/gpu), so the two sets
# of rows compare line by line.
#
#   tests/gpu/run-scenarios.sh <folder with scen_* programs> <libdlsync.so> [log folder]
#
# Row: scenario, variant, mode, verdict (what the program printed: correct | stale | exit N |
# timeout | skip), races and injected (from the shim's exit summary, "-" when plain), and the
# outcome. A program that exits 77 cannot run on this machine (the two-device scenarios on a
# single GPU): its rows are SKIP, counted apart, and the closing line adds ", N skipped".
# Expectations (the simulator corpus's):
#   plain   racy: stale                       correct: correct
#   check   racy: stale and races >= 1        correct: correct and races = 0
#   fix     racy: correct and injected >= 1   correct: correct and injected = 0 (host_read_sync: 1,
#           fix waits at a host-visible import whatever the host does next)
# The shim is preloaded with CUDA_INJECTION64_PATH unset: it must subscribe to CUPTI by itself.
# check runs with DLSYNC_KERNEL_PAIRS=1, so the kernel-pair scenarios' hazards are listed too.
# With a log folder, each shim run writes its JSON-lines log there as <scenario>.<variant>.<mode>.jsonl
# and each run's stderr as <scenario>.<variant>.<mode>.err.
# SCEN_RUN_TIMEOUT (seconds, default 60) bounds each run. Exit status: 0 when every row passed.
set -u
dir=${1:?usage: run-scenarios.sh <scenario folder> <libdlsync.so> [log folder]}
shim=${2:?usage: run-scenarios.sh <scenario folder> <libdlsync.so> [log folder]}
logs=${3:-}
limit=${SCEN_RUN_TIMEOUT:-60}
[ -n "$logs" ] && mkdir -p "$logs"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

passed=0; failed=0; skipped=0
printf '%-16s %-8s %-6s %-8s %6s %9s  %s\n' scenario variant mode verdict races injected outcome
for prog in "$dir"/scen_*; do
  [ -x "$prog" ] || continue
  name=${prog##*/scen_}
  for variant in racy correct; do
    for mode in plain check fix; do
      env=(env -u CUDA_INJECTION64_PATH -u DLSYNC_LOG -u DLSYNC_MODE)
      if [ "$mode" != plain ]; then
        env+=("LD_PRELOAD=$shim" "DLSYNC_MODE=$mode" DLSYNC_VERBOSE=1 DLSYNC_KERNEL_PAIRS=1)
        [ -n "$logs" ] && env+=("DLSYNC_LOG=$logs/$name.$variant.$mode.jsonl")
      else
        env+=(-u LD_PRELOAD)
      fi
      "${env[@]}" timeout -k 5 "$limit" "$prog" "$variant" >"$tmp/out" 2>"$tmp/err"
      rc=$?
      [ -n "$logs" ] && cp "$tmp/err" "$logs/$name.$variant.$mode.err"
      verdict=$(sed -n 's/^verdict: //p' "$tmp/out" | head -n 1)
      if [ "$rc" -eq 77 ]; then
        skipped=$((skipped + 1))
        printf '%-16s %-8s %-6s %-8s %6s %9s  %s\n' "$name" "$variant" "$mode" skip - - "SKIP ($(head -n 1 "$tmp/out"))"
        continue
      fi
      if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then verdict=timeout
      elif [ "$rc" -ne 0 ] || [ -z "$verdict" ]; then verdict="exit $rc"; fi
      summary=$(grep '^dlsync: mode=' "$tmp/err" | tail -n 1)
      races=-; injected=-
      if [ "$mode" != plain ]; then
        races=$(printf '%s\n' "$summary" | sed -n 's/.* races=\([0-9]*\).*/\1/p')
        injected=$(printf '%s\n' "$summary" | sed -n 's/.* injected=\([0-9]*\).*/\1/p')
        races=${races:-?}; injected=${injected:-?}
      fi
      want=correct; [ "$variant" = racy ] && [ "$mode" != fix ] && want=stale
      why=""
      [ "$verdict" = "$want" ] || why="expected $want"
      case "$mode.$variant" in
        check.racy)    [ "$races" != "?" ] && [ "$races" -ge 1 ] || why="${why:+$why; }expected races >= 1" ;;
        check.correct) [ "$races" = 0 ] || why="${why:+$why; }expected no race" ;;
        fix.racy)      [ "$injected" != "?" ] && [ "$injected" -ge 1 ] || why="${why:+$why; }expected an injected wait" ;;
        fix.correct)   twin=0; [ "$name" = host_read_sync ] && twin=1
                       [ "$injected" = "$twin" ] || why="${why:+$why; }expected $twin injections" ;;
      esac
      if [ -z "$why" ]; then outcome=PASS; passed=$((passed + 1))
      else outcome="FAIL ($why)"; failed=$((failed + 1)); fi
      printf '%-16s %-8s %-6s %-8s %6s %9s  %s\n' "$name" "$variant" "$mode" "$verdict" "$races" "$injected" "$outcome"
    done
  done
done
if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"
else echo "$passed passed, $failed failed"; fi
[ "$failed" -eq 0 ]
