#!/usr/bin/env bash
# One-run validation of dlsync on a machine with an NVIDIA GPU (docs/gpu-validation.md).
#
#   scripts/gpu-check.sh            results in $OUT (default ./gpu-out)
#
# Steps, each under its own timeout; a failing step is recorded and the script goes on:
#   env          machine, driver, toolkit, Python stack
#   build        make -k -j$JOBS (everything the machine's packages allow)
#   build-gpu    make gpu: the shim and the real-CUDA kit (tests/gpu)
#   probe        is a CUDA device usable? (without one, the GPU-only steps below are skipped)
#   test-gpu     make test-gpu: the scenario corpus on the GPU, plain / check / fix
#   sim-rows     the same corpus on the simulator, compared row by row with the GPU rows
#   injection    does preloading alone get the shim its CUPTI subscription on the real driver?
#   cupti-share  two CUPTI clients side by side (the simulator's model of this CUPTI generation),
#                dlsync as a third; torch.profiler's CUDA events without and with dlsync
#   frameworks   tests/gpu/frameworks.py: torch, CuPy and JAX in every ordered pair, every handover
#                path (legacy capsule, protocol without / with the wrong / with the right stream)
#   shipped-tests the DLPack interop tests the frameworks' installed packages ship, under check
#   launch       launch-heavy loop: ns/launch without the shim, under trace, fix and check, with
#                nothing tracked and with one exported tensor pending its first use
#   exchange     cost of one legacy exchange: without the shim, under trace, fix and check
#   pipeline     racy pipeline vs dlsync fix vs a device synchronize at every exchange, for both
#                release patterns (right after the consumer's enqueue; when the buffer comes round)
# Figures are medians of $RUNS runs (default 5). The whole script stays inside $BUDGET seconds
# (default 420): a step gets at most the time left, and is skipped when under 10 s remain.
# $OUT receives results.md (the report), gpu-check.log (this script's output) and logs.tar.gz
# (every step's log, the shim's JSON-lines logs and stderr of each scenario run).
# Settings: OUT, BUILD (build folder, default build), JOBS (default 16), RUNS, BUDGET, CUDA_HOME.
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
OUT=${OUT:-./gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
BUILD=${BUILD:-build}
JOBS=${JOBS:-16}
RUNS=${RUNS:-5}
BUDGET=${BUDGET:-420}
W=$(mktemp -d) || exit 1
mkdir -p "$W/logs"
trap 'rm -rf "$W"' EXIT
START=$(date +%s)
exec > >(tee "$OUT/gpu-check.log") 2>&1

if [ -z "${CUDA_HOME:-}" ]; then
  CUDA_HOME=/usr/local/cuda
  if [ ! -f "$CUDA_HOME/include/cuda.h" ] && command -v nvcc >/dev/null; then
    CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  fi
fi
ABSB=$(mkdir -p "$BUILD" && cd "$BUILD" && pwd)
SHIM=$ABSB/lib/libdlsync.so
GPU=$ABSB/gpu
export CUDA_HOME BUILD ABSB SHIM GPU JOBS RUNS W ROOT
HAVE_GPU=0
declare -A STATUS ratios

# step NAME LIMIT FUNCTION: runs FUNCTION under min(LIMIT, time left), logs to $W/logs/NAME.log,
# prints the log's tail, records the outcome in STATUS[NAME]. Returns the function's status.
step() {
  local name=$1 limit=$2 fn=$3 left rc t0 dur
  left=$((BUDGET - ($(date +%s) - START) - 5))
  if [ "$left" -lt 10 ]; then
    STATUS[$name]="SKIPPED (time budget spent)"; echo "== $name: ${STATUS[$name]}"; return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (limit ${limit}s)"
  t0=$(date +%s)
  timeout -k 10 "$limit" bash -c "$(declare -f "$fn" median); $fn" >"$W/logs/$name.log" 2>&1
  rc=$?
  dur=$(($(date +%s) - t0))
  case $rc in
    0) STATUS[$name]="ok (${dur}s)" ;;
    124|137) STATUS[$name]="TIMEOUT after ${limit}s" ;;
    *) STATUS[$name]="FAILED (exit $rc, ${dur}s)" ;;
  esac
  tail -n 30 "$W/logs/$name.log" | sed 's/^/   | /'
  echo "== $name: ${STATUS[$name]}"
  return $rc
}
skip() { STATUS[$1]="SKIPPED ($2)"; echo "== $1: ${STATUS[$1]}"; }

# Reads numbers on stdin, prints their median ("n/a" for none).
median() {
  sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "n/a"; else if (NR % 2) print a[(NR + 1) / 2];
                                   else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}

s_env() {
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"; uname -srm; echo "cpus: $(nproc)"
  timeout 20 nvidia-smi -L || echo "nvidia-smi -L: unavailable"
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
  "$CUDA_HOME/bin/nvcc" --version | tail -n 2 || echo "nvcc: missing at $CUDA_HOME"
  ${CC:-cc} --version | head -n 1
  python3 - <<'EOF' || true
import importlib
for m in ("torch", "cupy", "jax"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "unavailable:", e)
EOF
}

# The shim needs <dlpack/dlpack.h>; Debian's libdlpack-dev may be absent on the GPU machine. Use
# the copy carried in .gpuinc/ (docs/gpu-validation.md), else one a Python package ships, through
# CPATH, and say so.
find_dlpack() {
  echo '#include <dlpack/dlpack.h>' | ${CC:-cc} -E -x c - >/dev/null 2>&1 && return 0
  if [ -f "$ROOT/.gpuinc/dlpack/dlpack.h" ]; then
    export CPATH="$ROOT/.gpuinc${CPATH:+:$CPATH}"
    echo "dlpack.h: none on the include path; using the carried $ROOT/.gpuinc/dlpack/dlpack.h"
    return 0
  fi
  local h
  h=$(timeout 30 find /usr/include /usr/local /opt $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
        -name dlpack.h -path '*dlpack/dlpack.h' 2>/dev/null | head -n 1)
  [ -n "$h" ] || h=$(timeout 30 find /usr/local /opt -name dlpack.h 2>/dev/null | head -n 1)
  if [ -z "$h" ]; then echo "dlpack.h: not found; the build will fail"; return 1; fi
  mkdir -p "$W/include/dlpack" && cp "$h" "$W/include/dlpack/dlpack.h"
  export CPATH="$W/include${CPATH:+:$CPATH}"
  echo "dlpack.h: none on the include path; using $h"
}

s_build() { make -k -j"$JOBS" BUILD="$BUILD" CUDA_HOME="$CUDA_HOME"; }
s_build_gpu() { make -j"$JOBS" BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" gpu; }
s_probe() { "$GPU/gpu_probe"; }
s_test_gpu() {
  make --no-print-directory BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" test-gpu GPU_TEST_LOGS="$W/logs/scen-gpu" \
    | tee "$W/gpu-rows.txt"
  return "${PIPESTATUS[0]}"
}
s_sim_rows() {
  tests/gpu/run-scenarios.sh "$ABSB/scenarios" "$SHIM" "$W/logs/scen-sim" | tee "$W/sim-rows.txt"
  return "${PIPESTATUS[0]}"
}

# Preload only, CUDA_INJECTION64_PATH unset: the shim must have registered itself for injection and
# subscribed to CUPTI at cuInit. 1000 warm-up + 100 timed launches must each be seen.
s_injection() {
  env -u CUDA_INJECTION64_PATH LD_PRELOAD="$SHIM" DLSYNC_MODE=check DLSYNC_DEBUG_OPS=1 DLSYNC_VERBOSE=1 \
    "$GPU/gpu_launch" 100 >"$W/inj.out" 2>"$W/inj.err"
  local rc=$? seen
  seen=$(grep -c '^dlsync: op exit launch ' "$W/inj.err")
  cat "$W/inj.out"; grep -v '^dlsync: op ' "$W/inj.err"
  echo "launches observed: $seen of 1100"
  if [ "$rc" -eq 0 ] && [ "$seen" -ge 1100 ]; then
    echo "CUPTI subscription by preload alone: YES"
    return 0
  fi
  echo "CUPTI subscription by preload alone: NO"
  env CUDA_INJECTION64_PATH="$SHIM" LD_PRELOAD="$SHIM" DLSYNC_MODE=check DLSYNC_DEBUG_OPS=1 \
    "$GPU/gpu_launch" 100 >/dev/null 2>"$W/inj2.err"
  echo "with CUDA_INJECTION64_PATH=$SHIM set by hand: $(grep -c '^dlsync: op exit launch ' "$W/inj2.err") launches observed"
  return 1
}

# CUPTI sharing (README "Run under a profiler"): two clients subscribing as dlsync and a profiler
# do, against the simulator's model of this CUPTI's generation, then with the shim as a third;
# torch.profiler's CUDA events without and with dlsync.
s_cupti_share() {
  "$GPU/gpu_cupti_share"
  local rc=$?
  echo "--- with dlsync preloaded"
  env LD_PRELOAD="$SHIM" DLSYNC_VERBOSE=1 "$GPU/gpu_cupti_share" 2>&1
  local prof='import torch
from torch.profiler import profile, ProfilerActivity
x = torch.ones(4, device="cuda")
with profile(activities=[ProfilerActivity.CUDA]) as p:
    (x * 2).sum(); torch.cuda.synchronize()
print(len([e for e in p.events() if e.device_type.name == "CUDA"]))'
  if python3 -c 'import torch' 2>/dev/null; then
    echo "torch.profiler CUDA events: $(python3 -c "$prof" 2>/dev/null | tail -n 1)"
    echo "torch.profiler CUDA events under dlsync: $(LD_PRELOAD="$SHIM" python3 -c "$prof" 2>/dev/null | tail -n 1)"
  fi
  return "$rc"
}

s_frameworks() {
  FRAMEWORKS_TIMEOUT=90 python3 tests/gpu/frameworks.py --shim "$SHIM" --logs "$W/logs/frameworks" \
    --jobs "$JOBS" | tee "$W/frameworks.txt"
  local rc=${PIPESTATUS[0]} cupti
  # No CUDA operation seen in any check run: the shim found no CUPTI it could use; run again with
  # the toolkit's.
  if grep -q '^note: ' "$W/frameworks.txt" && ! grep -q '^note: .*, [1-9][0-9]* CUDA op' "$W/frameworks.txt"; then
    for cupti in "$CUDA_HOME/lib64/libcupti.so.13" "$CUDA_HOME/extras/CUPTI/lib64/libcupti.so.13"; do
      [ -f "$cupti" ] || continue
      echo "the shim observed no CUDA operation; again with DLSYNC_CUPTI=$cupti:"
      DLSYNC_CUPTI=$cupti FRAMEWORKS_TIMEOUT=90 python3 tests/gpu/frameworks.py --shim "$SHIM" \
        --logs "$W/logs/frameworks-cupti" --jobs "$JOBS" | tee -a "$W/frameworks.txt"
      rc=${PIPESTATUS[0]}
      break
    done
  fi
  return "$rc"
}

# The frameworks' own DLPack interop tests, where their installed packages ship them: each runs
# once under check; its race reports are listed for reading (true race or false positive).
s_shipped_tests() {
  local files f n=0 races
  files=$(python3 - <<'EOF'
import glob, importlib, os, sys
for m in ("torch", "cupy", "cupyx", "jax", "jaxlib"):
    try:
        root = os.path.dirname(importlib.import_module(m).__file__)
    except Exception as e:
        print(f"{m}: not importable ({e})", file=sys.stderr)
        continue
    hits = sorted(f for f in glob.glob(root + "/**/*.py", recursive=True)
                  if "dlpack" in os.path.basename(f).lower() and "test" in f[len(root):].lower())
    print(f"{m}: {len(hits)} DLPack test file(s) shipped under {root}", file=sys.stderr)
    print("\n".join(hits))
EOF
)
  for f in $files; do
    n=$((n + 1))
    env -u CUDA_INJECTION64_PATH LD_PRELOAD="$SHIM" DLSYNC_MODE=check DLSYNC_VERBOSE=1 \
      DLSYNC_LOG="$W/logs/shipped-$n.jsonl" XLA_PYTHON_CLIENT_PREALLOCATE=false \
      timeout -k 5 60 python3 -m pytest -q -x -p no:cacheprovider "$f" 2>&1 | tail -n 3
    races=$(grep -c '"ev":"race"' "$W/logs/shipped-$n.jsonl" 2>/dev/null)
    echo "shipped test $f: ${races:-0} race report(s) (log shipped-$n.jsonl)"
    grep '"ev":"race"' "$W/logs/shipped-$n.jsonl" 2>/dev/null | head -n 5
  done
  [ "$n" -gt 0 ] || echo "no DLPack interop test ships in the installed torch, CuPy or JAX packages"
}

# Prints "<mode> <median>" for each mode; $1 = field to pick, rest = command. Mode "plain" runs
# without the shim.
measure() {
  local field=$1 mode i v; shift
  for mode in plain trace fix check; do
    for i in $(seq "$RUNS"); do
      if [ "$mode" = plain ]; then v=$(env -u LD_PRELOAD "$@")
      else v=$(env LD_PRELOAD="$SHIM" DLSYNC_MODE=$mode "$@"); fi
      echo "$mode run $i: $v" >&2
      printf '%s\n' "$v" | sed -n "s/.*$field=\([0-9.]*\).*/\1/p"
    done | median | sed "s/^/$mode /"
  done
}
s_launch() {
  measure ns_issue "$GPU/gpu_launch" 200000 | tee "$W/launch.txt"
  measure ns_issue "$GPU/gpu_launch" 200000 pending | tee "$W/launch-pending.txt"
}
s_exchange() {
  SCEN_SPIN_CYCLES=0 measure us_per_exchange "$GPU/gpu_pipeline" racy 2000 | tee "$W/exchange.txt"
}
# Prints "<variant> <release> pipeline: ..." lines, RUNS of each variant for each release pattern.
s_pipeline() {
  local release mode i later
  for release in at-once later; do
    later=()
    [ "$release" = later ] && later=(later)
    for mode in racy-plain racy-fix devsync-plain; do
      for i in $(seq "$RUNS"); do
        case $mode in
          racy-plain) env -u LD_PRELOAD SCEN_SPIN_CYCLES=20000 "$GPU/gpu_pipeline" racy 2000 "${later[@]}" ;;
          racy-fix) env LD_PRELOAD="$SHIM" DLSYNC_MODE=fix SCEN_SPIN_CYCLES=20000 "$GPU/gpu_pipeline" racy 2000 \
                      "${later[@]}" ;;
          devsync-plain) env -u LD_PRELOAD SCEN_SPIN_CYCLES=20000 "$GPU/gpu_pipeline" devsync 2000 "${later[@]}" ;;
        esac | sed "s/^/$mode $release /"
      done
    done
  done | tee "$W/pipeline.txt"
}
export -f median measure

# ---- run -----------------------------------------------------------------------------------------
step env 60 s_env
find_dlpack
step build 200 s_build
step build-gpu 150 s_build_gpu
if step probe 30 s_probe; then HAVE_GPU=1
else STATUS[probe]="no usable GPU: $(tail -n 1 "$W/logs/probe.log" 2>/dev/null)"; fi
step test-gpu 180 s_test_gpu
if [ -x "$ABSB/scenarios/scen_side_stream" ]; then step sim-rows 60 s_sim_rows
else skip sim-rows "the simulator corpus was not built"; fi
if [ "$HAVE_GPU" = 1 ]; then
  step injection 60 s_injection
  step cupti-share 60 s_cupti_share
  step frameworks 240 s_frameworks
  step shipped-tests 60 s_shipped_tests
  step launch 150 s_launch
  step exchange 90 s_exchange
  step pipeline 120 s_pipeline
else
  for s in injection cupti-share frameworks shipped-tests launch exchange pipeline; do skip "$s" "no usable GPU"; done
fi

# ---- report --------------------------------------------------------------------------------------
{
  echo "# dlsync GPU check, $(date -u +%Y-%m-%d)"
  echo
  echo "Produced by \`scripts/gpu-check.sh\` (BUILD=$BUILD, RUNS=$RUNS) in $(($(date +%s) - START)) s."
  echo
  echo '```'
  cat "$W/logs/env.log" 2>/dev/null
  echo '```'
  echo
  echo "## Steps"
  echo
  echo "| step | outcome |"
  echo "|---|---|"
  for s in env build build-gpu probe test-gpu sim-rows injection cupti-share frameworks shipped-tests launch exchange pipeline; do
    echo "| $s | ${STATUS[$s]:-not run} |"
  done
  echo
  echo "## CUPTI subscription by preload alone (CUDA_INJECTION64_PATH unset)"
  echo
  if [ -f "$W/logs/injection.log" ]; then
    echo '```'; grep -E 'launches observed|CUPTI subscription|warning' "$W/logs/injection.log"; echo '```'
  else
    echo "Not checked: ${STATUS[injection]}."
  fi
  echo
  echo "## Scenario corpus: GPU rows, and the simulator's where they differ"
  echo
  echo '```'
  cat "$W/gpu-rows.txt" 2>/dev/null
  echo '```'
  if [ -f "$W/sim-rows.txt" ] && grep -q PASS "$W/gpu-rows.txt" 2>/dev/null; then
    echo
    echo "Rows where the GPU and the simulator differ (verdict, races or injected):"
    echo
    echo '```'
    awk 'NR == FNR { if ($3 ~ /^(plain|check|fix)$/) sim[$1 " " $2 " " $3] = $4 " " $5 " " $6; next }
         $3 ~ /^(plain|check|fix)$/ { k = $1 " " $2 " " $3; g = $4 " " $5 " " $6
           if (!(k in sim)) print k ": gpu " g ", not in the simulator corpus"
           else if (sim[k] != g) print k ": gpu " g ", simulator " sim[k]; n++ }
         END { print n + 0 " GPU rows compared" }' "$W/sim-rows.txt" "$W/gpu-rows.txt"
    echo '```'
  fi
  echo
  echo "## CUPTI sharing: two clients, dlsync as a third, torch.profiler under dlsync"
  echo
  echo '```'
  cat "$W/logs/cupti-share.log" 2>/dev/null || echo "${STATUS[cupti-share]}"
  echo '```'
  echo
  echo "## Frameworks: torch, CuPy and JAX exchanging (tests/gpu/frameworks.py)"
  echo
  echo '```'
  cat "$W/frameworks.txt" 2>/dev/null || echo "${STATUS[frameworks]}"
  echo '```'
  echo
  echo "## DLPack tests shipped with the frameworks, under check"
  echo
  echo '```'
  grep -v '^ *$' "$W/logs/shipped-tests.log" 2>/dev/null || echo "${STATUS[shipped-tests]}"
  echo '```'
  echo
  echo "## Overhead (medians of $RUNS runs)"
  echo
  if [ -f "$W/launch.txt" ]; then
    echo "Launch-heavy loop (\`gpu_launch 200000 [pending]\`, empty kernel, host issue time per launch;"
    echo "nothing tracked, and one exported tensor pending its first use):"
    echo
    echo "| mode | ns/launch | added vs plain | ns/launch, tensor pending | added vs plain |"
    echo "|---|---|---|---|---|"
    awk 'function added(v, p) { return (p != "" && v != "n/a" && p != "n/a") ? sprintf("%+.1f ns (%.2fx)", v - p, v / p) : "-" }
         NR == FNR { pend[$1] = $2; next }
         $1 == "plain" { p = $2; q = pend["plain"] }
         { v = ($1 in pend) ? pend[$1] : "n/a"
           print "| " $1 " | " $2 " | " added($2, p) " | " v " | " added(v, q) " |" }' \
      "$W/launch-pending.txt" "$W/launch.txt" 2>/dev/null
    echo
    echo "Measured with: \`[LD_PRELOAD=$SHIM DLSYNC_MODE=trace|fix|check] $GPU/gpu_launch 200000 [pending]\`"
    echo
  fi
  if [ -f "$W/exchange.txt" ]; then
    echo "Exchange cost (\`gpu_pipeline racy 2000\`, SCEN_SPIN_CYCLES=0: write, export, import, read, release):"
    echo
    echo "| mode | µs/exchange | added vs plain |"
    echo "|---|---|---|"
    awk '$1 == "plain" {p = $2} {d = ($2 != "n/a" && p != "") ? sprintf("%+.2f µs", $2 - p) : "-"; print "| " $1 " | " $2 " | " d " |"}' "$W/exchange.txt"
    echo
    echo "Measured with: \`SCEN_SPIN_CYCLES=0 [LD_PRELOAD=$SHIM DLSYNC_MODE=trace|fix|check] $GPU/gpu_pipeline racy 2000\`"
    echo
  fi
  if [ -f "$W/pipeline.txt" ]; then
    echo "Pipeline (\`gpu_pipeline racy|devsync 2000 [later]\`, writer spins 20000 cycles; the consumer"
    echo "releases each tensor right after enqueuing its copy (at-once) or when its buffer comes round"
    echo "again (later)):"
    echo
    echo "| release | variant | median total ms | µs/exchange | wrong results (per run) |"
    echo "|---|---|---|---|---|"
    for r in at-once later; do
      for m in racy-plain racy-fix devsync-plain; do
        t=$(awk -v m="$m" -v r="$r" '$1 == m && $2 == r' "$W/pipeline.txt" | sed -n 's/.*total_ms=\([0-9.]*\).*/\1/p' | median)
        u=$(awk -v m="$m" -v r="$r" '$1 == m && $2 == r' "$W/pipeline.txt" | sed -n 's/.*us_per_exchange=\([0-9.]*\).*/\1/p' | median)
        w=$(awk -v m="$m" -v r="$r" '$1 == m && $2 == r' "$W/pipeline.txt" | sed -n 's/.*wrong=\([0-9]*\).*/\1/p' | paste -sd, -)
        echo "| $r | $m | $t | $u | ${w:-n/a} |"
        eval "total_${m//-/_}=\$t"
      done
      ratios[$r]=$(awk -v r="$total_racy_plain" -v f="$total_racy_fix" -v d="$total_devsync_plain" 'BEGIN {
        if (r > 0 && f > 0 && d > 0)
          printf "fix: %.2fx the speed of the unsynchronized (wrong) run, %.2fx the device-synchronize workaround", r / f, d / f
        else print "fix: no ratio (a variant has no figure)" }')
    done
    echo
    for r in at-once later; do echo "- release $r: ${ratios[$r]}"; done
    echo
    echo "Measured with: \`SCEN_SPIN_CYCLES=20000 [LD_PRELOAD=$SHIM DLSYNC_MODE=fix] $GPU/gpu_pipeline racy|devsync 2000 [later]\`"
    echo
  fi
  [ "$HAVE_GPU" = 1 ] || echo "No usable GPU: the GPU-only steps were skipped (see the probe step)."
} >"$OUT/results.md"

tar -czf "$OUT/logs.tar.gz" -C "$W" logs 2>/dev/null
echo
cat "$OUT/results.md"
echo
echo "gpu-check: results in $OUT/results.md, logs in $OUT/logs.tar.gz ($(($(date +%s) - START)) s)"
