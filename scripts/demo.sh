#!/usr/bin/env bash
# Runs the headline demo from the build folder given as the only argument (make demo passes the
# absolute build dir). For now: the CUDA simulator's producer/consumer race and its fix by an
# event wait.
set -euo pipefail
build=${1:?usage: scripts/demo.sh BUILD_DIR}
demo=$build/cudasim/demo_race
if [ ! -x "$demo" ]; then
  echo "demo: $demo is missing; run make first" >&2
  exit 1
fi
echo "== dlsync demo: a cross-stream race on the CUDA simulator =="
"$demo"
