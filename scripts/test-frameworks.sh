#!/usr/bin/env bash
# make test-frameworks: first the Python way (scripts/test-wheel.sh: the wheel built with pip,
# installed into a fresh venv, its command, module and pytest plugin); then real frameworks from PyPI exchanging tensors with numpy and Debian's torch,
# plainly and under dlsync (trace, fix), with both interpreter kinds: Debian's python3 (libpython
# inside the executable) and tests/python3-shared (the shared libpython), each in the same
# virtual environment. Outputs must be identical and each log must show every exchange once,
# with the right frameworks and shape (tests/frameworks/check_log.py). paddle-tvm-ffi exchanges
# between paddle and tvm-ffi through paddle's DLPack C exchange API table.
#
# The environment is build/frameworks/venv, made once (pip install takes about 4 minutes and
# 2.8 GB); it is remade when the pins below change. When PyPI cannot be reached and the
# environment does not exist yet, the test says SKIPPED and why, and exits 0.
#   usage: scripts/test-frameworks.sh BUILD_DIR [FRAMEWORK...]   (default: every framework)
set -u
build=${1:-build}
venv=$build/frameworks/venv
# Pinned minimum versions: the first releases whose DLPack paths these tests exercise.
pins=("numpy>=2.0" "jax[cpu]>=0.4.31" "tensorflow-cpu>=2.16" "paddlepaddle>=2.6" "apache-tvm-ffi>=0.1.0")
frameworks=(jax tensorflow paddle tvm-ffi paddle-tvm-ffi)
[ $# -gt 1 ] && frameworks=("${@:2}")
shim=$(cd "$build/lib" && pwd)/libdlsync.so
here=$(cd "$(dirname "$0")/.." && pwd)

wheel_rc=0
if [ $# -le 1 ]; then
    "$here/scripts/test-wheel.sh" "$build" || wheel_rc=1
fi

if [ ! -f "$venv/pins" ] || [ "$(cat "$venv/pins")" != "${pins[*]}" ]; then
    if ! /usr/bin/python3 -c 'import urllib.request as u; u.urlopen("https://pypi.org/simple/pip/", timeout=15)' \
            2>/dev/null; then
        echo "test-frameworks: SKIPPED: PyPI (https://pypi.org) cannot be reached, and $venv does not exist yet"
        exit $wheel_rc
    fi
    rm -rf "$venv"
    start=$SECONDS
    echo "test-frameworks: creating $venv (pip install ${pins[*]})"
    /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "${pins[@]}" || {
        echo "test-frameworks: FAILED: pip install" >&2; exit 1; }
    echo "${pins[*]}" > "$venv/pins"
    echo "test-frameworks: environment ready in $((SECONDS - start)) s"
fi
interpreters=("$venv/bin/python")
if [ -x "$build/tests/python3-shared" ]; then
    cp "$build/tests/python3-shared" "$venv/bin/python3-shared"
    interpreters+=("$venv/bin/python3-shared")
else
    echo "test-frameworks: no shared-libpython interpreter (libpython3-dev missing): only Debian's kind runs"
fi

fail=$wheel_rc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for py in "${interpreters[@]}"; do
    for fw in "${frameworks[@]}"; do
        name="$(basename "$py") $fw"
        if ! "$py" "$here/tests/frameworks/exchange.py" "$fw" > "$tmp/plain" 2> "$tmp/plain.err"; then
            echo "FAIL  $name: plain run failed"; sed 's/^/    /' "$tmp/plain.err" | tail -5; fail=1; continue
        fi
        torch=1
        grep -q "torch skipped" "$tmp/plain" && torch=0
        for mode in trace fix; do
            if ! LD_PRELOAD="$shim" DLSYNC_MODE=$mode DLSYNC_LOG="$tmp/log" \
                    "$py" "$here/tests/frameworks/exchange.py" "$fw" > "$tmp/out" 2> "$tmp/err"; then
                echo "FAIL  $name ($mode): the run failed"; sed 's/^/    /' "$tmp/err" | tail -5; fail=1
            elif ! cmp -s "$tmp/plain" "$tmp/out"; then
                echo "FAIL  $name ($mode): output differs from the plain run"; diff "$tmp/plain" "$tmp/out" | head; fail=1
            elif ! /usr/bin/python3 "$here/tests/frameworks/check_log.py" "$tmp/log" "$fw" $torch > "$tmp/check"; then
                echo "FAIL  $name ($mode)"; cat "$tmp/check"; fail=1
            else
                echo "ok    $name ($mode)$([ $torch = 1 ] || echo ', torch skipped')"; cat "$tmp/check"
            fi
            rm -f "$tmp/log"
        done
    done
done
[ $fail = 0 ] && echo "test-frameworks: all passed" || echo "test-frameworks: FAILED"
exit $fail
