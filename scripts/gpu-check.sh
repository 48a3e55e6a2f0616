#!/usr/bin/env bash
# One-run validation of dlsync on a machine with an NVIDIA GPU (docs/gpu-validation.md).
#
#   scripts/gpu-check.sh --prepare  on a machine with network, before the tree goes to the GPU
#                                   machine: fetches and builds what the run needs into the
#                                   ignored folders .gpucarry/ and .gpuinc/ and lists them
#   scripts/gpu-check.sh            the run (needs no network), results in $OUT (default ./gpu-out)
#   scripts/gpu-check.sh --plan     the steps, their time limits and the budget; runs nothing
#
# The steps, in this order (the most telling first, so a spent budget skips the least), each
# under its own time limit (the table STEPS below); a failing step is recorded and the script
# goes on. GPU-only steps are skipped without a usable GPU.
#   env          machine, driver, toolkit, Python stack, what was carried
#   build-gpu    make gpu: the shim and the real-CUDA kit (tests/gpu)
#   probe        is a CUDA device usable?
#   injection    does preloading alone get the shim its CUPTI subscription on the real driver?
#   wheel        the carried wheel installed offline (tests/gpu/run-wheel.sh), and its pytest
#                plugin on a racy torch -> CuPy test (must fail) and its synced twin (must pass)
#   test-gpu     make test-gpu: the scenario corpus on the GPU, plain / check / fix
#   frameworks   tests/gpu/frameworks.py: torch, CuPy and JAX in every ordered pair, every
#                handover path, through the wheel's `dlsync run` when the wheel installed
#   cupti-share  two CUPTI clients side by side, dlsync as a third; torch.profiler's CUDA events
#                without and with dlsync; the same with a carried CUPTI >= 13.2 (its
#                multi-subscriber mode), or the driver's refusal
#   floor        a launch loop and a set/copy loop: plain, under an empty CUPTI subscriber
#                enabling the callbacks dlsync enables, under trace, fix, check, and fix with an
#                exported tensor pending; runs alternated; dlsync's own cost = the difference
#                to the empty subscriber
#   pipeline     racy vs dlsync fix vs a device synchronize at every exchange vs synchronized by
#                hand (events), for both release patterns
#   exchange     cost of one legacy exchange: without the shim, under trace, fix and check
#   train        tests/gpu/train_step.py: a torch training step handing a tensor to CuPy (or
#                JAX) and back, plain / fix / check, unsynchronized / device-synchronized / by hand
#   shipped-tests the DLPack interop tests the frameworks' installed packages ship, under check
#   sim-rows     the scenario corpus on the simulator, compared row by row with the GPU rows
# Figures are medians of $RUNS runs (default 5), the runs of the compared settings alternated.
# The whole script stays inside $BUDGET seconds (default 450: a run fits in 10 minutes with room
# for a rerun of what failed): a step gets at most its limit and the time left, and is skipped
# when under 10 s remain.
# $OUT receives results.md (the report), gpu-check.log (this script's output) and logs.tar.gz
# (every step's log, the shim's JSON-lines logs and stderr of each scenario run).
# Settings: OUT, BUILD (build folder, default build), JOBS (default 16), RUNS, BUDGET, CUDA_HOME,
# STEPS (a space-separated list: run only these, after env, build-gpu and probe; a rerun of what
# failed), FLOOR_OPS (operations per floor run, default 50000).
set -u
cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)
CARRY=$ROOT/.gpucarry

# name, time limit (s), needs a GPU, function. The limits add up past BUDGET on purpose: most
# steps end well inside theirs (docs/gpu-validation.md gives the expected times).
STEPS_TABLE=(
  "env 20 no s_env"
  "build-gpu 120 no s_build_gpu"
  "probe 30 no s_probe"
  "injection 30 yes s_injection"
  "wheel 90 yes s_wheel"
  "test-gpu 150 yes s_test_gpu"
  "frameworks 200 yes s_frameworks"
  "cupti-share 90 yes s_cupti_share"
  "floor 90 yes s_floor"
  "pipeline 60 yes s_pipeline"
  "exchange 30 yes s_exchange"
  "train 90 yes s_train"
  "shipped-tests 60 yes s_shipped_tests"
  "sim-rows 90 no s_sim_rows"
)
# The settings the floor, the pipeline and the exchange steps compare (run_in's modes).
export FLOOR_MODES="plain nullsub nullsub-rt trace fix check fix-pending"
export PIPELINE_VARIANTS="racy-plain racy-fix devsync-plain events-plain events-fix"
export EXCHANGE_MODES="plain trace fix check"
# The CUPTI to carry: the first with the multi-subscriber mode (13.2), its last patch release (the
# oldest such CUPTI, the likeliest to be accepted by an older driver); CUPTI_SPEC overrides.
CUPTI_SPEC=${CUPTI_SPEC:-nvidia-cuda-cupti>=13.2,<13.3}

# ---- --prepare: what the GPU machine cannot fetch ---------------------------------------------------
# .gpuinc/dlpack/dlpack.h   the system's DLPack header (the GPU image may have none)
# .gpucarry/dlsync-*.whl    the wheel (`pip wheel .`), installed there offline
# .gpucarry/cupti/          libcupti.so.13 of the newest nvidia-cuda-cupti 13.2.x on PyPI
#                           ($CUPTI_SPEC), and VERSION (the package's version)
# Then lists each file with its size, the wheel's needs, and the size of the tree that travels.
prepare() {
  local tmp rc=0 whl cupti_whl
  tmp=$(mktemp -d) || return 1
  mkdir -p "$ROOT/.gpuinc/dlpack" "$CARRY/cupti"
  if [ -f /usr/include/dlpack/dlpack.h ]; then cp /usr/include/dlpack/dlpack.h "$ROOT/.gpuinc/dlpack/"
  else echo "prepare: no /usr/include/dlpack/dlpack.h (apt-get install libdlpack-dev)"; rc=1; fi
  rm -f "$CARRY"/dlsync-*.whl
  if ! python3 -m pip wheel . --no-deps -q --disable-pip-version-check -w "$CARRY" >"$tmp/wheel.log" 2>&1; then
    tail -n 5 "$tmp/wheel.log"; echo "prepare: pip wheel . failed"; rc=1
  fi
  if python3 -m pip download -q --no-deps --only-binary=:all: --disable-pip-version-check --python-version 3.12 \
      --implementation cp --platform manylinux_2_25_x86_64 -d "$tmp/cupti" "$CUPTI_SPEC" \
      >"$tmp/cupti.log" 2>&1 && cupti_whl=$(ls "$tmp"/cupti/nvidia_cuda_cupti-*.whl 2>/dev/null | head -n 1) &&
      [ -n "$cupti_whl" ]; then
    python3 - "$cupti_whl" "$CARRY/cupti" <<'EOF' || rc=1
import os, sys, zipfile
whl, dest = sys.argv[1:]
with zipfile.ZipFile(whl) as z:
    with z.open("nvidia/cu13/lib/libcupti.so.13") as src, open(os.path.join(dest, "libcupti.so.13"), "wb") as out:
        out.write(src.read())
with open(os.path.join(dest, "VERSION"), "w") as f:
    f.write(os.path.basename(whl).split("-")[1] + "\n")
EOF
  else
    tail -n 3 "$tmp/cupti.log"; echo "prepare: no $CUPTI_SPEC could be downloaded"; rc=1
  fi
  echo "prepare: to carry along with the tree (ignored folders): .gpucarry .gpuinc"
  (cd "$ROOT" && find .gpucarry .gpuinc -type f -exec ls -l {} + | awk '{printf "  %10d  %s\n", $5, $9}')
  whl=$(ls "$CARRY"/dlsync-*.whl 2>/dev/null | head -n 1)
  [ -n "$whl" ] && tests/gpu/run-wheel.sh --needs "$whl" | sed 's/^/  /'
  local tree
  tree=$(cd "$ROOT" && { git ls-files -z; git ls-files -z --others --exclude-standard; } | xargs -0 du -cb 2>/dev/null |
         tail -n 1 | cut -f1)
  local carried
  carried=$(cd "$ROOT" && du -cb .gpucarry .gpuinc 2>/dev/null | tail -n 1 | cut -f1)
  echo "prepare: the tree travels with $(( (tree + carried) / 1024 )) KiB (files $((tree / 1024)) KiB, carried" \
       "$((carried / 1024)) KiB)"
  rm -rf "$tmp"
  return $rc
}

# --plan: each step with its limit, then one "skip  <step> <row>" line per row of a GPU-only step
# (the scenario rows are run-gpu-tests.sh's), with what else it needs.
plan() {
  local e name limit gpu fn sum=0 r m k v carried
  echo "gpu-check: steps, time limits (s), needs a GPU; BUDGET=${BUDGET:-450}"
  for e in "${STEPS_TABLE[@]}"; do
    read -r name limit gpu fn <<<"$e"
    printf '  %-14s %4d  %s\n' "$name" "$limit" "$gpu"
    sum=$((sum + limit))
  done
  echo "  limits add up to $sum s; each step gets at most the time left of the budget"
  echo "skip  injection preload alone: 1100 launches observed"
  carried=$(ls "$CARRY"/dlsync-*.whl 2>/dev/null | head -n 1)
  if [ -n "$carried" ]; then carried=" (${carried##*/})"; else carried=": no wheel carried (--prepare builds one)"; fi
  for r in install test_racy test_synced; do echo "skip  wheel $r$carried"; done
  python3 tests/gpu/frameworks.py --plan | sed -n 's/^skip  /skip  frameworks /p'
  carried=$(cat "$CARRY/cupti/VERSION" 2>/dev/null)
  if [ -n "$carried" ]; then carried=" $carried"; else carried=": none carried (--prepare fetches one)"; fi
  for r in "gpu_cupti_share" "gpu_cupti_share, dlsync preloaded" "torch.profiler" "torch.profiler under dlsync"; do
    echo "skip  cupti-share $r"
    echo "skip  cupti-share $r on the carried CUPTI$carried"
  done
  for k in launch copy; do for m in $FLOOR_MODES; do echo "skip  floor $k $m"; done; done
  for r in at-once later; do for v in $PIPELINE_VARIANTS; do echo "skip  pipeline $r $v"; done; done
  for m in $EXCHANGE_MODES; do echo "skip  exchange $m"; done
  python3 tests/gpu/train_step.py --plan | sed -n 's/^skip  train /skip  train /p'
  echo "skip  shipped-tests the installed frameworks' DLPack tests under check"
}

case "${1:-}" in
  --prepare) prepare; exit ;;
  --plan) plan; exit 0 ;;
  "") ;;
  *) echo "usage: scripts/gpu-check.sh [--prepare | --plan]"; exit 2 ;;
esac

OUT=${OUT:-./gpu-out}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 1
BUILD=${BUILD:-build}
JOBS=${JOBS:-16}
RUNS=${RUNS:-5}
BUDGET=${BUDGET:-450}
STEPS=${STEPS:-}
FLOOR_OPS=${FLOOR_OPS:-50000}
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
SITE=$W/site # the wheel's installation (the wheel step)
NEW_CUPTI=$CARRY/cupti/libcupti.so.13
export CUDA_HOME BUILD ABSB SHIM GPU JOBS RUNS W ROOT CARRY SITE NEW_CUPTI FLOOR_OPS
HAVE_GPU=0
declare -A STATUS

# step NAME LIMIT FUNCTION: runs FUNCTION under min(LIMIT, time left), logs to $W/logs/NAME.log,
# prints the log's tail, records the outcome in STATUS[NAME] (exit 77: the step skipped itself,
# its last line says why). Returns the function's status.
step() {
  local name=$1 limit=$2 fn=$3 left rc t0 dur
  left=$((BUDGET - ($(date +%s) - START) - 5))
  if [ "$left" -lt 10 ]; then
    STATUS[$name]="SKIPPED (time budget spent)"; echo "== $name: ${STATUS[$name]}"; return 1
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  echo "== $name (limit ${limit}s)"
  t0=$(date +%s)
  STEP_LIMIT=$limit timeout -k 10 "$limit" bash -c "$fn" >"$W/logs/$name.log" 2>&1
  rc=$?
  dur=$(($(date +%s) - t0))
  case $rc in
    0) STATUS[$name]="ok (${dur}s)" ;;
    77) STATUS[$name]="SKIPPED ($(tail -n 1 "$W/logs/$name.log"))" ;;
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

# The wheel's dlsync command, when the wheel step installed it: prints its path, else fails.
wheel_dlsync() { [ -x "$SITE/bin/dlsync" ] && PYTHONPATH=$SITE "$SITE/bin/dlsync" --version >/dev/null 2>&1 &&
  echo "$SITE/bin/dlsync"; }

s_env() {
  date -u +"date: %Y-%m-%dT%H:%M:%SZ"; uname -srm; echo "cpus: $(nproc)"
  timeout 20 nvidia-smi -L || echo "nvidia-smi -L: unavailable"
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv || true
  "$CUDA_HOME/bin/nvcc" --version | tail -n 2 || echo "nvcc: missing at $CUDA_HOME"
  ${CC:-cc} --version | head -n 1
  python3 - <<'EOF' || true
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for m in ("torch", "cupy", "jax", "pytest"):
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "unavailable:", e)
EOF
  local w
  w=$(ls "$CARRY"/dlsync-*.whl 2>/dev/null | head -n 1)
  echo "carried wheel: ${w:+${w##*/}}${w:-none}; carried CUPTI: $(cat "$CARRY/cupti/VERSION" 2>/dev/null || echo none)"
}

# The shim needs <dlpack/dlpack.h>; Debian's libdlpack-dev may be absent on the GPU machine. Use
# the copy carried in .gpuinc/ (--prepare), else one a Python package ships, through CPATH, and
# say so.
find_dlpack() {
  echo '#include <dlpack/dlpack.h>' | ${CC:-cc} -E -x c - >/dev/null 2>&1 && return 0
  if [ -f "$ROOT/.gpuinc/dlpack/dlpack.h" ]; then
    export CPATH="$ROOT/.gpuinc${CPATH:+:$CPATH}"
    echo "dlpack.h: none on the include path; using the carried $ROOT/.gpuinc/dlpack/dlpack.h"
    return 0
  fi
  local h
  # shellcheck disable=SC2046
  h=$(timeout 30 find /usr/include /usr/local /opt $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
        -name dlpack.h -path '*dlpack/dlpack.h' 2>/dev/null | head -n 1)
  [ -n "$h" ] || h=$(timeout 30 find /usr/local /opt -name dlpack.h 2>/dev/null | head -n 1)
  if [ -z "$h" ]; then echo "dlpack.h: not found; the build will fail"; return 1; fi
  mkdir -p "$W/include/dlpack" && cp "$h" "$W/include/dlpack/dlpack.h"
  export CPATH="$W/include${CPATH:+:$CPATH}"
  echo "dlpack.h: none on the include path; using $h"
}

s_build_gpu() { make -j"$JOBS" BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" gpu; }
s_probe() { "$GPU/gpu_probe"; }
s_test_gpu() {
  make --no-print-directory BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" test-gpu GPU_TEST_LOGS="$W/logs/scen-gpu" \
    | tee "$W/gpu-rows.txt"
  return "${PIPESTATUS[0]}"
}
# The simulator corpus (its programs only: the shim, the simulator and the fake frameworks), run
# by the same runner.
s_sim_rows() {
  local progs
  progs=$(for f in tests/scenarios/s_*.c; do n=${f##*/s_}; echo "$BUILD/scenarios/scen_${n%.c}"; done)
  # shellcheck disable=SC2086
  make -j"$JOBS" BUILD="$BUILD" CUDA_HOME="$CUDA_HOME" $progs >"$W/logs/sim-build.log" 2>&1 ||
    { tail -n 5 "$W/logs/sim-build.log"; echo "the simulator corpus did not build"; return 77; }
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

# The carried wheel into $SITE, offline, and the pytest twins; later steps use $SITE/bin/dlsync.
s_wheel() {
  local whl
  whl=$(ls "$CARRY"/dlsync-*.whl 2>/dev/null | head -n 1)
  if [ -z "$whl" ]; then echo "no wheel carried in .gpucarry/ (scripts/gpu-check.sh --prepare builds one)"; return 77; fi
  HANDOFF_TIMEOUT=$((STEP_LIMIT > 20 ? STEP_LIMIT - 15 : 5)) tests/gpu/run-wheel.sh "$whl" "$SITE"
}

# CUPTI sharing (README "Run under a profiler"): two clients subscribing as dlsync and a profiler
# do, against the simulator's model of this CUPTI's generation, then with the shim as a third;
# torch.profiler's CUDA events (kernels and copies) without dlsync and under fix and check, which
# must count the same: dlsync hosts the profiler's subscription where CUPTI would refuse it
# (shim/cuda/cupti_host.h). Then the same with the carried CUPTI >= 13.2, preloaded so that
# torch's profiler and dlsync both use it.
prof_events() { # prof_events ENV...: torch.profiler's CUDA event count, and dlsync's summary
  local prog='import torch
from torch.profiler import profile, ProfilerActivity
x = torch.ones(4, device="cuda")
with profile(activities=[ProfilerActivity.CUDA]) as p:
    (x * 2).sum().cpu(); torch.cuda.synchronize()
print(len([e for e in p.events() if e.device_type.name == "CUDA"]))'
  env "$@" timeout -k 5 60 python3 -c "$prog" >"$W/prof.out" 2>"$W/prof.err"
  local rc=$?
  echo "$(tail -n 1 "$W/prof.out") (exit $rc)$(grep -m 1 -i 'cupti' "$W/prof.err" | sed 's/^/; profiler: /' | cut -c1-200)" \
       "$(grep '^dlsync: mode=' "$W/prof.err" | tail -n 1 | sed 's/^/; /')"
}
s_cupti_share() {
  "$GPU/gpu_cupti_share"
  local rc=$?
  echo "--- with dlsync preloaded"
  env LD_PRELOAD="$SHIM" DLSYNC_VERBOSE=1 "$GPU/gpu_cupti_share" 2>&1
  if python3 -c 'import torch' 2>/dev/null; then
    echo "torch.profiler CUDA events: $(prof_events -u LD_PRELOAD)"
    echo "torch.profiler CUDA events under dlsync fix: $(prof_events LD_PRELOAD="$SHIM" DLSYNC_MODE=fix DLSYNC_VERBOSE=1)"
    echo "torch.profiler CUDA events under dlsync check: $(prof_events LD_PRELOAD="$SHIM" DLSYNC_MODE=check DLSYNC_VERBOSE=1)"
  fi
  echo "--- carried CUPTI: $(cat "$CARRY/cupti/VERSION" 2>/dev/null || echo "none (scripts/gpu-check.sh --prepare fetches one)")"
  [ -f "$NEW_CUPTI" ] || return "$rc"
  timeout -k 5 30 "$GPU/gpu_cupti_share" "$NEW_CUPTI"
  echo "gpu_cupti_share on it: exit $?"
  echo "--- with dlsync preloaded on it"
  timeout -k 5 30 env LD_PRELOAD="$SHIM" DLSYNC_CUPTI="$NEW_CUPTI" DLSYNC_VERBOSE=1 "$GPU/gpu_cupti_share" "$NEW_CUPTI" 2>&1
  echo "gpu_cupti_share on it, dlsync preloaded: exit $?"
  if python3 -c 'import torch' 2>/dev/null; then
    echo "torch.profiler CUDA events on it: $(prof_events LD_PRELOAD="$NEW_CUPTI")"
    echo "torch.profiler CUDA events on it under dlsync check: $(prof_events LD_PRELOAD="$NEW_CUPTI:$SHIM" \
      DLSYNC_CUPTI="$NEW_CUPTI" DLSYNC_MODE=check DLSYNC_VERBOSE=1)"
    echo "(both see callbacks when the profiler counts as many CUDA events as without dlsync and dlsync's ops > 0)"
  fi
  return "$rc"
}

s_frameworks() {
  local how=(--shim "$SHIM") launcher
  if launcher=$(wheel_dlsync); then how=(--launcher "$launcher"); export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}; fi
  FRAMEWORKS_TIMEOUT=90 python3 tests/gpu/frameworks.py "${how[@]}" --logs "$W/logs/frameworks" \
    --jobs "$JOBS" --budget $((STEP_LIMIT - 10)) | tee "$W/frameworks.txt"
  return "${PIPESTATUS[0]}"
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

# run_in MODE COMMAND...: COMMAND without the shim (plain), under the empty CUPTI subscriber
# (nullsub: the driver callbacks fix enables; nullsub-rt: the runtime ones too, as check enables
# them), or with the shim preloaded in MODE (trace, fix, check; fix-pending: fix, the command
# given `pending`). CUDA_INJECTION64_PATH is set only for the subscriber.
run_in() {
  local mode=$1; shift
  case $mode in
    plain) env -u LD_PRELOAD -u CUDA_INJECTION64_PATH "$@" ;;
    nullsub) env -u LD_PRELOAD CUDA_INJECTION64_PATH="$GPU/libnullsub.so" "$@" ;;
    nullsub-rt) env -u LD_PRELOAD CUDA_INJECTION64_PATH="$GPU/libnullsub.so" NULLSUB_RUNTIME=1 "$@" ;;
    fix-pending) env -u CUDA_INJECTION64_PATH LD_PRELOAD="$SHIM" DLSYNC_MODE=fix "$@" pending ;;
    *) env -u CUDA_INJECTION64_PATH LD_PRELOAD="$SHIM" DLSYNC_MODE="$mode" "$@" ;;
  esac
}
# alternate FIELD OUTFILE "MODES" COMMAND...: RUNS rounds, each running COMMAND once in every mode
# in turn (run_in); each run's line goes to the log, "<mode> <median of FIELD>" lines to OUTFILE.
alternate() {
  local field=$1 outfile=$2 modes=$3 i mode v; shift 3
  for i in $(seq "$RUNS"); do
    for mode in $modes; do
      v=$(run_in "$mode" "$@" 2>>"$W/logs/alternate.err")
      echo "$mode run $i: $v"
      printf '%s %s\n' "$mode" "$(printf '%s\n' "$v" | sed -n "s/.*$field=\([0-9.]*\).*/\1/p")" >>"$outfile.raw"
    done
  done
  for mode in $modes; do
    echo "$mode $(awk -v m="$mode" '$1 == m && NF == 2 {print $2}' "$outfile.raw" | median)"
  done >"$outfile"
  cat "$outfile"
}
export -f median run_in alternate

s_floor() {
  [ -f "$GPU/libnullsub.so" ] || { echo "no $GPU/libnullsub.so"; return 1; }
  alternate ns_issue "$W/floor-launch.txt" "$FLOOR_MODES" "$GPU/gpu_launch" "$FLOOR_OPS"
  alternate ns_issue "$W/floor-copy.txt" "$FLOOR_MODES" "$GPU/gpu_launch" "$FLOOR_OPS" copy
}
s_exchange() {
  SCEN_SPIN_CYCLES=0 alternate us_per_exchange "$W/exchange.txt" "$EXCHANGE_MODES" "$GPU/gpu_pipeline" racy 2000
}
# Prints "<variant> <release> pipeline: ..." lines, RUNS rounds of every variant in turn for each
# release pattern.
s_pipeline() {
  local release i v later
  for release in at-once later; do
    later=()
    [ "$release" = later ] && later=(later)
    for i in $(seq "$RUNS"); do
      for v in $PIPELINE_VARIANTS; do
        SCEN_SPIN_CYCLES=20000 run_in "${v#*-}" "$GPU/gpu_pipeline" "${v%-*}" 2000 "${later[@]}" | sed "s/^/$v $release /"
      done
    done
  done | tee "$W/pipeline.txt"
}
s_train() {
  local how=(--shim "$SHIM") launcher
  if launcher=$(wheel_dlsync); then how=(--launcher "$launcher"); export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}; fi
  python3 tests/gpu/train_step.py "${how[@]}" --logs "$W/logs/train" --budget $((STEP_LIMIT - 10)) | tee "$W/train.txt"
  return "${PIPESTATUS[0]}"
}
export -f wheel_dlsync prof_events

# ---- run -----------------------------------------------------------------------------------------
want() { [ -z "$STEPS" ] || [[ " $STEPS " == *" $1 "* ]]; }
find_dlpack
for e in "${STEPS_TABLE[@]}"; do
  read -r name limit gpu fn <<<"$e"
  case $name in env|build-gpu|probe) ;; *) want "$name" || { skip "$name" "not in STEPS"; continue; } ;; esac
  if [ "$gpu" = yes ] && [ "$HAVE_GPU" = 0 ]; then skip "$name" "no usable GPU"; continue; fi
  export -f "${fn?}"
  if step "$name" "$limit" "$fn" && [ "$name" = probe ]; then HAVE_GPU=1
  elif [ "$name" = probe ]; then STATUS[probe]="no usable GPU: $(tail -n 1 "$W/logs/probe.log" 2>/dev/null)"; fi
done

# ---- report --------------------------------------------------------------------------------------
section() { # section TITLE FILE [STEP]: the file in a code block, or the step's outcome
  echo; echo "## $1"; echo; echo '```'
  if [ -s "$2" ]; then cat "$2"; else echo "${STATUS[${3:-}]:-not run}"; fi
  echo '```'
}
added() { awk -v v="$1" -v p="$2" 'BEGIN { if (v == "n/a" || p == "n/a" || v == "" || p == "") print "-";
                                          else printf "%+.1f ns (%.2fx)", v - p, v / p }'; }
floor_table() { # floor_table FILE: the floor's rows
  local f=$1 m v p n nr
  p=$(awk '$1 == "plain" {print $2}' "$f"); n=$(awk '$1 == "nullsub" {print $2}' "$f")
  nr=$(awk '$1 == "nullsub-rt" {print $2}' "$f")
  echo "| setting | ns/op | added vs plain | dlsync's own cost (vs the same callbacks, empty) |"
  echo "|---|---|---|---|"
  while read -r m v; do
    case $m in
      plain) echo "| plain | $v | - | - |" ;;
      nullsub) echo "| empty subscriber, fix's callbacks | $v | $(added "$v" "$p") | - |" ;;
      nullsub-rt) echo "| empty subscriber, check's callbacks | $v | $(added "$v" "$p") | - |" ;;
      trace) echo "| trace (subscribes to nothing) | $v | $(added "$v" "$p") | $(added "$v" "$p") |" ;;
      check) echo "| check | $v | $(added "$v" "$p") | $(added "$v" "$nr") |" ;;
      *) echo "| $m | $v | $(added "$v" "$p") | $(added "$v" "$n") |" ;;
    esac
  done <"$f"
}
pipeline_table() {
  local r v t u w
  echo "| release | variant | median total ms | µs/exchange | wrong results (per run) |"
  echo "|---|---|---|---|---|"
  for r in at-once later; do
    for v in $PIPELINE_VARIANTS; do
      t=$(awk -v v="$v" -v r="$r" '$1 == v && $2 == r' "$W/pipeline.txt" | sed -n 's/.*total_ms=\([0-9.]*\).*/\1/p' | median)
      u=$(awk -v v="$v" -v r="$r" '$1 == v && $2 == r' "$W/pipeline.txt" | sed -n 's/.*us_per_exchange=\([0-9.]*\).*/\1/p' | median)
      w=$(awk -v v="$v" -v r="$r" '$1 == v && $2 == r' "$W/pipeline.txt" | sed -n 's/.*wrong=\([0-9]*\).*/\1/p' | paste -sd, -)
      echo "| $r | $v | $t | $u | ${w:-n/a} |"
      echo "$r $v $t" >>"$W/pipeline-medians.txt"
    done
  done
  echo
  for r in at-once later; do
    awk -v r="$r" '$1 == r { t[$2] = $3 } END {
      f = t["racy-fix"]
      if (f > 0 && t["events-plain"] > 0 && t["devsync-plain"] > 0 && t["racy-plain"] > 0)
        printf "- release %s: fix runs at %.2fx the speed of the program synchronized by hand, %.2fx the device-synchronize workaround'"'"'s, %.2fx the unsynchronized (wrong) run'"'"'s; the hand-synced program under fix: %.2fx its speed without dlsync\n",
          r, t["events-plain"] / f, t["devsync-plain"] / f, t["racy-plain"] / f, (t["events-fix"] > 0 ? t["events-plain"] / t["events-fix"] : 0)
      else printf "- release %s: no ratio (a variant has no figure)\n", r }' "$W/pipeline-medians.txt"
  done
}
{
  echo "# dlsync GPU check, $(date -u +%Y-%m-%d)"
  echo
  echo "Produced by \`scripts/gpu-check.sh\` (BUILD=$BUILD, RUNS=$RUNS, BUDGET=$BUDGET${STEPS:+, STEPS=$STEPS}) in $(($(date +%s) - START)) s."
  section "Machine" "$W/logs/env.log" env
  echo
  echo "## Steps"
  echo
  echo "| step | outcome |"
  echo "|---|---|"
  for e in "${STEPS_TABLE[@]}"; do
    read -r name _ <<<"$e"
    echo "| $name | ${STATUS[$name]:-not run} |"
  done
  echo
  echo "## CUPTI subscription by preload alone (CUDA_INJECTION64_PATH unset)"
  echo
  if [ -f "$W/logs/injection.log" ]; then
    echo '```'; grep -E 'launches observed|CUPTI subscription|warning' "$W/logs/injection.log"; echo '```'
  else
    echo "Not checked: ${STATUS[injection]}."
  fi
  section "The wheel, installed offline, and pytest --dlsync=check on the torch -> CuPy twins" "$W/logs/wheel.log" wheel
  section "Scenario corpus on the GPU" "$W/gpu-rows.txt" test-gpu
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
  section "Frameworks: torch, CuPy and JAX exchanging (tests/gpu/frameworks.py)" "$W/frameworks.txt" frameworks
  section "CUPTI sharing: two clients, dlsync as a third, torch.profiler under dlsync; a carried newer CUPTI" \
    "$W/logs/cupti-share.log" cupti-share
  echo
  echo "## The floor: what any CUPTI client pays, and what dlsync adds (medians of $RUNS alternated runs)"
  echo
  for kind in launch copy; do
    if [ -s "$W/floor-$kind.txt" ]; then
      if [ "$kind" = launch ]; then what="gpu_launch $FLOOR_OPS\`: empty kernel launches"
      else what="gpu_launch $FLOOR_OPS copy\`: a cudaMemsetAsync and a device-to-device cudaMemcpyAsync in turn"; fi
      echo "\`$what, host issue time per operation:"
      echo
      floor_table "$W/floor-$kind.txt"
      echo
    fi
  done
  [ -s "$W/floor-launch.txt" ] && echo "Measured with: \`[CUDA_INJECTION64_PATH=$GPU/libnullsub.so [NULLSUB_RUNTIME=1] | LD_PRELOAD=$SHIM DLSYNC_MODE=trace|fix|check] $GPU/gpu_launch $FLOOR_OPS [copy] [pending]\`" ||
    echo "Not measured: ${STATUS[floor]:-not run}."
  echo
  echo "## Pipeline (medians of $RUNS alternated runs)"
  echo
  if [ -s "$W/pipeline.txt" ]; then
    echo "\`gpu_pipeline racy|devsync|events 2000 [later]\`, writer spins 20000 cycles; the consumer releases each"
    echo "tensor right after enqueuing its copy (at-once) or when its buffer comes round again (later);"
    echo "events: synchronized by hand (an event after the write that the consumer waits on, one after the"
    echo "copy that the next write of the buffer waits on):"
    echo
    pipeline_table
    echo
    echo "Measured with: \`SCEN_SPIN_CYCLES=20000 [LD_PRELOAD=$SHIM DLSYNC_MODE=fix] $GPU/gpu_pipeline racy|devsync|events 2000 [later]\`"
  else
    echo "Not measured: ${STATUS[pipeline]:-not run}."
  fi
  echo
  echo "## Exchange cost (medians of $RUNS alternated runs)"
  echo
  if [ -s "$W/exchange.txt" ]; then
    echo "\`gpu_pipeline racy 2000\`, SCEN_SPIN_CYCLES=0 (write, export, import, read, release):"
    echo
    echo "| mode | µs/exchange | added vs plain |"
    echo "|---|---|---|"
    awk '$1 == "plain" {p = $2} {d = ($2 != "n/a" && p != "") ? sprintf("%+.2f µs", $2 - p) : "-"; print "| " $1 " | " $2 " | " d " |"}' "$W/exchange.txt"
  else
    echo "Not measured: ${STATUS[exchange]:-not run}."
  fi
  section "A training step handing a tensor to CuPy (or JAX) and back (tests/gpu/train_step.py)" "$W/train.txt" train
  section "DLPack tests shipped with the frameworks, under check" "$W/logs/shipped-tests.log" shipped-tests
  [ "$HAVE_GPU" = 1 ] || { echo; echo "No usable GPU: the GPU-only steps were skipped (see the probe step)."; }
} >"$OUT/results.md"

tar -czf "$OUT/logs.tar.gz" -C "$W" logs 2>/dev/null
echo
cat "$OUT/results.md"
echo
echo "gpu-check: results in $OUT/results.md, logs in $OUT/logs.tar.gz ($(($(date +%s) - START)) s)"
