#!/usr/bin/env bash
# Installs the Debian packages dlsync's build, tests and benchmarks need, when they are missing.
# With --ci also what CI and `make fuzz` / `make format` add: clang (the clang build, libFuzzer
# through libclang-rt-dev), llvm (llvm-symbolizer for sanitizer stacks and for the source lines
# of `dlsync report`), clang-format, and chromium (the HTML report's tests render the page in
# headless Chromium; without it they are skipped and say so). binutils (build-essential) gives
# addr2line, the other symbolizer `dlsync report` uses.
# As root it runs apt-get; otherwise it prints the exact command to run and fails.
# The CUDA 13 toolkit (headers, nvcc, libcupti) is not a Debian package: it must already be at
# $CUDA_HOME (default /usr/local/cuda).
set -u
pkgs=(build-essential pkg-config libcmocka-dev libdlpack-dev
      valgrind python3 python3-numpy python3-torch python3-venv libpython3-dev
      python3-pytest python3-pytest-xdist)
[ "${1:-}" = --ci ] && pkgs+=(clang llvm libclang-rt-dev clang-format chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/cuda.h" ] || [ ! -f "$cuda/include/cupti_callbacks.h" ]; then
  echo "deps: the CUDA 13 toolkit is missing at $cuda (need include/cuda.h, include/cupti_callbacks.h)." >&2
  echo "deps: install NVIDIA's cuda-toolkit-13-0 (with CUPTI) or set CUDA_HOME; Debian does not package it." >&2
  exit 1
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "deps: missing packages; run as root:" >&2
  echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || {
  echo "deps: apt-get install ${missing[*]} failed" >&2; exit 1; }
