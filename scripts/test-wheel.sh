#!/usr/bin/env bash
# The Python way (make test-frameworks runs it first): builds the wheel with `pip wheel .`
# (the manylinux_2_28 one: zig cc from PyPI's ziglang),
# from a fresh build/wheel with libelf's, libdw's and the C++ library's development files hidden
# (as root: a mount namespace of its own with overlays; built with them in view otherwise),
# installs the built file into a fresh virtual environment (build/python/venv, made anew each run
# with Debian's python3 and its site packages: numpy, torch, pytest, pytest-xdist) and checks:
#   - the wheel is manylinux_2_28_x86_64, and its command and shim need the C library alone, of
#     glibc 2.28 or older (scripts/check-glibc.sh);
#   - `dlsync` on the venv's PATH and `python -m dlsync` are build/bin/dlsync (version, exit
#     statuses) and preload the venv's own libdlsync.so;
#   - `import dlsync` loads no CUDA and sees no shim without one;
#   - the pytest plugin on tests/python/cases (a legacy producer and consumer called through ctypes
#     CDLL and PyDLL, on the simulator): under --dlsync=check the racy tests fail with the
#     consumer's Python line in the failure, their synced twins pass, the expect-race marker works
#     both ways, the summary line counts; --dlsync=fix makes the racy tests' value right; the
#     same with pytest-xdist (-n 2);
#   - `dlsync run` from the venv traces real numpy and torch exchanges;
#   - the wheel built again with the CUDA toolkit and the system's dlpack/ headers hidden too
#     (NVIDIA's header packages and apache-tvm-ffi from PyPI; skipped offline) installs and scans;
#   - `auditwheel show` names a manylinux tag (auditwheel from PyPI, in build/python/tools; skipped
#     when PyPI cannot be reached).
#   usage: scripts/test-wheel.sh BUILD_DIR
set -u
build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
top=$build/python
venv=$top/venv
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { echo "ok    wheel: $1"; }
bad() { echo "FAIL  wheel: $1"; [ -f "$tmp/out" ] && sed 's/^/    /' "$tmp/out" | tail -40; fail=1; }
# has FILE PATTERN...: every grep -E pattern is in FILE
has() { local f=$1; shift; for p in "$@"; do grep -Eq -- "$p" "$f" || { echo "    missing: $p"; return 1; }; done; }

for m in pytest xdist venv; do
    "$py" -c "import $m" 2>/dev/null || { echo "test-wheel: SKIPPED: $py lacks $m (scripts/deps.sh installs it)"; exit 0; }
done

# What a machine with only a C compiler, the C library's headers and the CUDA and DLPack headers
# lacks, hidden from the wheel's build: libelf's and libdw's headers and link-time libraries, and
# the C++ library's (its headers; libstdc++.so and .a, which -lstdc++ needs; the run-time
# libstdc++.so.6 stays).
cc=${CC:-cc}
unset CC # the wheel under test is the manylinux one, which a CC of one's own would replace
dev=(/usr/include/libelf.h /usr/include/gelf.h /usr/include/nlist.h /usr/include/dwarf.h /usr/include/elfutils
     /usr/include/c++)
for l in libelf.so libelf.a libdw.so libdw.a libstdc++.so libstdc++.a; do
    f=$("$cc" -print-file-name=$l 2>/dev/null)
    case "$f" in /*) dev+=("$(cd -P "$(dirname "$f")" && pwd)/$l") ;; esac
done
# present PATH...: the paths that exist (a dangling link too), one per line.
present() { for f in "$@"; do if [ -e "$f" ] || [ -L "$f" ]; then echo "$f"; fi; done; }
mapfile -t dev < <(present "${dev[@]}")
# hiding PATH... -- CMD...: runs CMD with each PATH hidden: as root, in a mount namespace of its
# own (`unshare -m`), each directory holding one gets a read-only overlay whose top layer holds a
# whiteout for it. CMD's status; 97 when the paths cannot be hidden here, 98 when one is still
# there, or gelf.h or -lstdc++ is still found.
hiding() {
    local layers f dir mounts=() n=0
    declare -A layer
    [ "$(id -u)" = 0 ] && command -v unshare > /dev/null || return 97
    layers=$(mktemp -d -p "$tmp")
    while [ "$1" != -- ]; do
        dir=$(dirname "$1")
        if [ -z "${layer[$dir]:-}" ]; then
            layer[$dir]=$layers/$n; n=$((n + 1)); mkdir -p "${layer[$dir]}"; mounts+=("$dir" "${layer[$dir]}")
        fi
        mknod "${layer[$dir]}/$(basename "$1")" c 0 0 || return 97
        shift
    done
    HOST_CC=$cc unshare -m bash -c '
        gone=()
        while [ "$1" != -- ]; do
            mount -t overlay overlay -o "ro,lowerdir=$2:$1" "$1" || exit 97
            for f in "$2"/*; do gone+=("$1/${f##*/}"); done
            shift 2
        done
        shift
        for f in "${gone[@]}"; do [ -e "$f" ] || [ -L "$f" ] && exit 98; done
        echo "#include <gelf.h>" | "$HOST_CC" -E -x c - -o /dev/null 2>/dev/null && exit 98
        echo "int main(void) { return 0; }" | "$HOST_CC" -x c - -o /dev/null -lstdc++ 2>/dev/null && exit 98
        exec "$@"' hiding "${mounts[@]}" -- "$@"
}

# The wheel, built as a user would (pip's isolated build; the backend needs nothing from PyPI
# but ziglang, the compiler, when the CUDA toolkit and the DLPack headers are there), from a
# fresh build/wheel, with the paths above hidden where that can be done.
mkdir -p "$top"
if [ ! -x "$top/builder/bin/pip" ]; then "$py" -m venv "$top/builder" || { echo "FAIL  wheel: venv"; exit 1; }; fi
rm -rf "$top/dist" "$here/build/wheel"
start=$SECONDS
pip_wheel=("$top/builder/bin/pip" wheel "$here" --no-deps -q --disable-pip-version-check)
hiding "${dev[@]}" -- "${pip_wheel[@]}" -w "$top/dist" > "$tmp/out" 2>&1
rc=$?
hid="with the ${#dev[@]} development files of libelf, libdw and libstdc++ found here hidden"
if [ $rc = 97 ]; then
    echo "skip  wheel: building $hid (needs root and unshare)"
    hid="with the ${#dev[@]} development files of libelf, libdw and libstdc++ found here in view"
    "${pip_wheel[@]}" -w "$top/dist" > "$tmp/out" 2>&1
    rc=$?
fi
[ $rc = 98 ] && { bad "hiding libelf and libstdc++'s development files from the build did not take"; exit 1; }
[ $rc = 0 ] || { bad "pip wheel . ($hid) failed"; exit 1; }
wheel=$(ls "$top"/dist/dlsync-*.whl)
ok "pip wheel . built $(basename "$wheel") in $((SECONDS - start)) s, $hid"

rm -rf "$venv"
"$py" -m venv --system-site-packages "$venv" && "$venv/bin/pip" install -q --no-deps --disable-pip-version-check \
    "$wheel" > "$tmp/out" 2>&1 || { bad "pip install $(basename "$wheel") into a fresh venv failed"; exit 1; }
ok "installed into a fresh venv"
export PATH="$venv/bin:$PATH"

# The command: the same as build/bin/dlsync, finding the venv's own shim.
same=1
for args in "--version" "" "bogus" "run --mode nope -- true" "run -- /nonexistent/program" "run -- false"; do
    # shellcheck disable=SC2086
    "$build/bin/dlsync" $args > "$tmp/a" 2>&1; a=$?
    # shellcheck disable=SC2086
    "$venv/bin/dlsync" $args > "$tmp/b" 2>&1; b=$?
    # shellcheck disable=SC2086
    "$venv/bin/python" -m dlsync $args > "$tmp/c" 2>&1; c=$?
    if [ $a != $b ] || [ $a != $c ] || ! cmp -s "$tmp/a" "$tmp/b" || ! cmp -s "$tmp/a" "$tmp/c"; then
        echo "    dlsync $args: exit $a / $b / $c"; diff "$tmp/a" "$tmp/b" | head -5; same=0
    fi
done
[ $same = 1 ] && ok "dlsync and python -m dlsync: the same output and exit status as build/bin/dlsync" ||
    bad "dlsync from the venv differs from build/bin/dlsync"
site=$("$venv/bin/python" -c 'import dlsync, os; print(os.path.dirname(dlsync.__file__))')
# What the installed command and shim link: the C library alone (no libelf, no libstdc++), of
# glibc 2.28 or older.
case "$wheel" in *-manylinux_2_28_x86_64.whl) ok "the wheel is tagged manylinux_2_28_x86_64" ;;
*) bad "the wheel's tag is not manylinux_2_28_x86_64: $(basename "$wheel")" ;; esac
if command -v readelf > /dev/null && command -v objdump > /dev/null; then
    "$here/scripts/check-glibc.sh" "$site/bin/dlsync" "$site/lib/libdlsync.so" > "$tmp/out" 2>&1 &&
        ok "dlsync and libdlsync.so need the C library alone, GLIBC_2.28 or older: GLIBC_$(sed -n \
        's/.*: GLIBC_\([0-9.]*\),.*/\1/p' "$tmp/out" | sort -uV | tail -1)" || bad "dlsync and libdlsync.so need more than glibc 2.28"
else
    echo "skip  wheel: the libraries dlsync and libdlsync.so need (no readelf, objdump)"
fi
dlsync run -- "$venv/bin/python" -c \
    'import dlsync; print(dlsync.active(), dlsync.mode()); print(open("/proc/self/maps").read())' > "$tmp/out" 2>&1
if has "$tmp/out" "^True fix$" "$site/lib/libdlsync.so" && ! grep -q "$build/lib/libdlsync.so" "$tmp/out"; then
    ok "dlsync run preloads the venv's libdlsync.so ($site/lib)"
else
    bad "dlsync run from the venv did not preload the venv's shim"
fi
"$venv/bin/python" -c 'import dlsync; print(dlsync.active(), dlsync.mode(), "libcuda" in open("/proc/self/maps").read())' \
    > "$tmp/out" 2>&1
has "$tmp/out" "^False None False$" && ok "import dlsync without the shim: inactive, no CUDA loaded" ||
    bad "import dlsync without the shim"

# The pytest plugin on the simulator.
export DLSYNC_TEST_SCENARIOS=$build/scenarios DLSYNC_CUPTI=$build/cudasim/libcupti.so.13
cases=$here/tests/python/cases
script=$here/tests/python/scen_ctypes.py
read_line=$(grep -n "# the consumer's read" "$script" | cut -d: -f1)
consumer="Scenario.exchange \\($script:$read_line\\)"
run_pytest() { (cd "$tmp" && "$venv/bin/python" -m pytest -p no:cacheprovider -rA "$@" "$cases") > "$tmp/out" 2>&1; }
outcomes=("FAILED .*test_racy\\[cdll\\]" "FAILED .*test_racy\\[pydll\\]" "PASSED .*test_synced\\[cdll\\]"
          "PASSED .*test_synced\\[pydll\\]" "PASSED .*test_racy_expected\\[cdll\\]" "PASSED .*test_racy_expected\\[pydll\\]"
          "FAILED .*test_synced_expected\\[cdll\\]" "FAILED .*test_synced_expected\\[pydll\\]"
          "FAILED .*test_racy_value_unchecked\\[cdll\\]" "FAILED .*test_racy_value_unchecked\\[pydll\\]"
          "dlsync reported 1 race while the test ran" "dlsync races" "at $consumer"
          "dlsync: the test expects a race \\(@pytest.mark.dlsync_race\\), and none was reported")
run_pytest --dlsync=check
if has "$tmp/out" "${outcomes[@]}" "dlsync: mode=check races=1 exchanges=10 injected=0 tests failed by dlsync=6$" \
        "6 failed, 4 passed"; then
    ok "pytest --dlsync=check: racy tests fail with the consumer's line ($(basename "$script"):$read_line), synced pass, marker both ways"
else
    bad "pytest --dlsync=check"
fi
run_pytest --dlsync -n 2
has "$tmp/out" "${outcomes[@]}" "dlsync: mode=check races=2 exchanges=10 injected=0 tests failed by dlsync=6 \\(2 workers\\)$" \
    "6 failed, 4 passed" && ok "pytest --dlsync -n 2 (pytest-xdist): the same, counted over both workers" ||
    bad "pytest --dlsync -n 2"
run_pytest --dlsync=fix
has "$tmp/out" "PASSED .*test_racy\\[cdll\\]" "PASSED .*test_racy\\[pydll\\]" "10 passed" \
    "dlsync: mode=fix races=0 exchanges=10 injected=6 tests failed by dlsync=0$" &&
    ok "pytest --dlsync=fix: the racy tests read the right value" || bad "pytest --dlsync=fix"
run_pytest
has "$tmp/out" "FAILED .*test_racy\\[cdll\\]" "2 failed, 8 passed" && ! grep -q "^dlsync:" "$tmp/out" &&
    ok "pytest without --dlsync: the plugin stays out (the racy tests read stale data)" || bad "pytest without --dlsync"

# The relaunch guard: started "again" without the shim, the plugin stops instead of looping.
DLSYNC_PYTEST_RELAUNCHED=1 run_pytest --dlsync
has "$tmp/out" "started again under .dlsync run., but the dlsync shim is not loaded" &&
    ok "pytest --dlsync relaunched without the shim: one error, no loop" || bad "the relaunch guard"

# A build that lacks something says so in one line.
(cd "$here" && CC=/nonexistent/cc "$py" -c 'import sys; sys.path.insert(0, "python/backend")
import dlsync_backend; dlsync_backend.build_wheel(sys.argv[1])' "$tmp") > "$tmp/out" 2>&1
if [ "$(cat "$tmp/out")" = "dlsync build: no C compiler (/nonexistent/cc) found: install gcc or clang, or set CC" ]; then
    ok "a build without a C compiler says so in one line"
else
    bad "the build's error for a missing compiler"
fi

# Real numpy and torch exchanges traced by the venv's command.
if "$venv/bin/python" -c 'import numpy, torch' 2>/dev/null; then
    dlsync run --mode trace --log "$tmp/log" -- "$venv/bin/python" -c '
import numpy as np, torch
from torch.utils.dlpack import to_dlpack, from_dlpack
a = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print(from_dlpack(to_dlpack(a)).sum().item(), torch.from_dlpack(np.arange(6.0)).sum().item())' > "$tmp/out" 2>&1
    if has "$tmp/out" "^66.0 15.0$" && has "$tmp/log" '"ev":"export".*"framework":"pytorch"' \
            '"ev":"export".*"framework":"numpy"' '"ev":"import"'; then
        ok "dlsync run --mode trace from the venv traces numpy and torch exchanges"
    else
        bad "dlsync run with numpy and torch"; cat "$tmp/log" 2>/dev/null | head -5
    fi
else
    echo "skip  wheel: numpy and torch trace (Debian's python3-numpy / python3-torch missing)"
fi

# The wheel where there is only Python, make, a C compiler and the C library's headers: the files
# above hidden, and the CUDA toolkit (/usr/local/cuda; CUDA_HOME and CUDA_PATH unset) and the
# system's dlpack/ headers too, so the build takes NVIDIA's header packages and apache-tvm-ffi's
# dlpack.h from PyPI (skipped when PyPI cannot be reached or nothing can be hidden here). Its
# wheel, installed into a venv of its own, runs `dlsync scan`.
bare=("${dev[@]}")
mapfile -t -O ${#bare[@]} bare < <(present /usr/local/cuda "$(readlink -f /usr/local/cuda)" /usr/include/dlpack | sort -u)
if ! "$py" -c 'import urllib.request as u; u.urlopen("https://pypi.org/simple/pip/", timeout=15)' 2>/dev/null; then
    echo "skip  wheel: the build with only a compiler (PyPI cannot be reached for NVIDIA's header packages)"
else
    rm -rf "$top/dist-bare" "$top/bare" "$here/build/wheel"
    start=$SECONDS
    (unset CUDA_HOME CUDA_PATH; hiding "${bare[@]}" -- "${pip_wheel[@]}" -w "$top/dist-bare") > "$tmp/out" 2>&1
    rc=$?
    if [ $rc = 97 ]; then
        echo "skip  wheel: the build with only a compiler (hiding the toolkit needs root and unshare)"
    elif [ $rc != 0 ]; then
        bad "pip wheel . with the CUDA toolkit, dlpack/ and the development files hidden (exit $rc)"
    elif "$py" -m venv "$top/bare" && "$top/bare/bin/pip" install -q --no-deps --disable-pip-version-check \
            "$top"/dist-bare/dlsync-*.whl > "$tmp/out" 2>&1 &&
            "$top/bare/bin/dlsync" scan "$build/tests/tool/libscanfix.so" > "$tmp/out" 2>&1 &&
            has "$tmp/out" "8 DLPack-related symbols" "fix::fromDLPack\\(DLManagedTensor\\*\\)"; then
        ok "pip wheel . with the CUDA toolkit, dlpack/ and ${#dev[@]} development files hidden (${#bare[@]} paths): built from PyPI's headers in $((SECONDS - start)) s, installed, scans"
    else
        bad "the wheel built with only a compiler: install or dlsync scan"
    fi
fi

# The manylinux tag.
if [ -x "$top/tools/bin/auditwheel" ] || { "$py" -m venv "$top/tools" &&
        "$top/tools/bin/pip" install -q --disable-pip-version-check auditwheel > /dev/null 2>&1; }; then
    "$top/tools/bin/auditwheel" show "$wheel" > "$tmp/out" 2>&1
    tag=$(grep -o 'consistent with the following platform tag: "[^"]*"' <(tr '\n' ' ' < "$tmp/out" | tr -s ' ') |
          sed 's/.*"\(.*\)"/\1/')
    case "$tag" in
    manylinux_*) ok "auditwheel show: $tag (no CUDA library in the wheel)" ;;
    *) bad "auditwheel show names no manylinux tag" ;;
    esac
    if python3 -m zipfile -l "$wheel" | grep -Eq 'libcuda|libcudart|libcupti'; then bad "the wheel carries a CUDA library"; fi
else
    echo "skip  wheel: auditwheel (PyPI cannot be reached)"
fi
[ $fail = 0 ] && echo "test-wheel: all passed" || echo "test-wheel: FAILED"
exit $fail
