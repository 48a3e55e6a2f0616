#!/usr/bin/env bash
# The GPU check's wheel step: the Python way, with the wheel built on another machine.
#
#   tests/gpu/run-wheel.sh <wheel> <site folder> [--fake BUILD]
#   tests/gpu/run-wheel.sh --needs <wheel>      what the wheel needs, and nothing else
#
# Installs the wheel offline into the site folder with this machine's python3 (pip install
# --no-index --no-deps --target: no network, nothing else changed), says what was installed
# (wheel, Python, the dlsync command's version) and what it needs (Requires-Python, its tag,
# the newest glibc symbol version and the shared libraries its two binaries ask for), then runs
# the twins of tests/gpu/handoff under
# `pytest --dlsync=check` with the site folder on PYTHONPATH: the wheel's pytest plugin starts
# pytest again under the wheel's own `dlsync run`. One row each:
#   wheel    install      ok                  PASS
#   handoff  test_racy    FAILED (by dlsync)  PASS     the racy torch -> CuPy hand-off must fail
#   handoff  test_synced  PASSED              PASS     its synced twin must pass
# then "N passed, N failed[, N skipped]"; exit 0 when nothing failed. Without torch and CuPy with
# CUDA the twins are skipped (their rows say SKIP, with pytest's reason). With --fake BUILD the
# twins run on the simulator build in BUILD with its fake frameworks (the dry run). The folder
# keeps the installation: `<site>/bin/dlsync` is the wheel's command for the steps after this one.
# HANDOFF_TIMEOUT (seconds, default 120) bounds the pytest run.
set -u
# needs FOLDER: the needs of the wheel unpacked or installed in FOLDER, on one line.
needs() {
  local d=$1 f glibc="" libs=""
  for f in "$d/dlsync/lib/libdlsync.so" "$d/dlsync/bin/dlsync"; do
    glibc+=" $(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//')"
    libs+=" $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ' -)"
  done
  # shellcheck disable=SC2046,SC2086
  echo "wheel needs: $(sed -n 's/^Requires-Python: /Python /p' "$d"/dlsync-*.dist-info/METADATA);" \
       "tag $(sed -n 's/^Tag: //p' "$d"/dlsync-*.dist-info/WHEEL); glibc >= $(printf '%s\n' $glibc | sort -V |
       tail -n 1); shared libraries:$(printf ' %s' $(printf '%s\n' $libs | sort -u))"
}
if [ "${1:-}" = --needs ]; then
  tmp=$(mktemp -d) || exit 1
  python3 -m zipfile -e "${2:?usage: run-wheel.sh --needs <wheel>}" "$tmp" && needs "$tmp"
  rc=$?; rm -rf "$tmp"; exit $rc
fi
wheel=${1:?usage: run-wheel.sh <wheel> <site folder> [--fake BUILD]}
site=${2:?usage: run-wheel.sh <wheel> <site folder> [--fake BUILD]}
fake=
if [ "${3:-}" = --fake ]; then fake=$(cd "${4:?--fake needs a build folder}" && pwd) || exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0; skipped=0
row() { # row KIND NAME RESULT OUTCOME
  printf '%-8s %-12s %-20s %s\n' "$1" "$2" "$3" "$4"
  case $4 in PASS) passed=$((passed + 1)) ;; SKIP*) skipped=$((skipped + 1)) ;; *) failed=$((failed + 1)) ;; esac
}
closing() {
  if [ "$skipped" -gt 0 ]; then echo "$passed passed, $failed failed, $skipped skipped"
  else echo "$passed passed, $failed failed"; fi
  [ "$failed" -eq 0 ]
}

rm -rf "$site"
if ! "$py" -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check --target "$site" \
    "$wheel" >"$tmp/pip" 2>&1; then
  sed 's/^/    /' "$tmp/pip" | tail -n 5
  row wheel install "pip failed" FAIL
  closing; exit
fi
version=$(PYTHONPATH=$site "$site/bin/dlsync" --version 2>&1 | head -n 1)
echo "wheel: $(basename "$wheel") into $site with $("$py" -c 'import sys; print("Python", sys.version.split()[0])'): $version"
needs "$site"
if [ -x "$site/dlsync/bin/dlsync" ] && [ -f "$site/dlsync/lib/libdlsync.so" ] && [ -n "$version" ]; then
  row wheel install ok PASS
else
  row wheel install "no dlsync command" FAIL
  closing; exit
fi

env=(env -u DLSYNC_MODE -u LD_PRELOAD -u CUDA_INJECTION64_PATH -u HANDOFF_FAKE "PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}")
[ -n "$fake" ] && env+=("HANDOFF_FAKE=$fake" "DLSYNC_CUPTI=$fake/cudasim/libcupti.so.13")
(cd "$tmp" && "${env[@]}" timeout -k 5 "${HANDOFF_TIMEOUT:-120}" "$py" -m pytest -p no:cacheprovider -rA \
  --dlsync=check "$here/handoff") >"$tmp/out" 2>&1
rc=$?
summary=$(grep '^dlsync: mode=check' "$tmp/out" | tail -n 1)
by_dlsync=$(printf '%s\n' "$summary" | sed -n 's/.*tests failed by dlsync=\([0-9]*\).*/\1/p')
for t in test_racy test_synced; do
  result=$(sed -n "s/^\(PASSED\|FAILED\|SKIPPED\|ERROR\) .*::$t\b.*/\1/p" "$tmp/out" | head -n 1)
  reason=$(sed -n "s/^SKIPPED \[[0-9]*\] [^:]*:[0-9]*: //p" "$tmp/out" | head -n 1)
  if [ -z "$result" ] && grep -q '^SKIPPED ' "$tmp/out"; then result=SKIPPED; fi
  case "$t.$result" in
    test_racy.FAILED)
      if [ "${by_dlsync:-0}" -ge 1 ]; then row handoff $t "FAILED (by dlsync)" PASS
      else row handoff $t "FAILED" "FAIL (not by dlsync's report: $summary)"; fi ;;
    test_synced.PASSED) row handoff $t PASSED PASS ;;
    *.SKIPPED) row handoff $t SKIPPED "SKIP (${reason:-see the pytest output})" ;;
    *) row handoff $t "${result:-none (exit $rc)}" "FAIL (expected $([ $t = test_racy ] && echo FAILED || echo PASSED))" ;;
  esac
done
[ -n "$summary" ] && echo "pytest: $summary"
if [ "$failed" -gt 0 ]; then sed 's/^/    /' "$tmp/out" | tail -n 40; fi
closing
