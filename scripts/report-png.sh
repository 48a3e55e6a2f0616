#!/usr/bin/env bash
# Makes docs/report.png, the README's picture of the HTML report, from a real run: the racy
# side_stream scenario (fake MXNet hands a tensor to fake TVM on another stream) under check, its
# log made into a page by `dlsync report --html`, the page rendered by headless Chromium at
# 1280 pixels wide (scripts/deps.sh --ci installs chromium).
#   scripts/report-png.sh [BUILD_DIR [OUT.png]]     (defaults: build, docs/report.png)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
out=${2:-docs/report.png}
command -v chromium >/dev/null || { echo "report-png: chromium is missing (scripts/deps.sh --ci installs it)" >&2; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
DLSYNC_CUPTI=$build/cudasim/libcupti.so.13 "$build/bin/dlsync" run --quiet --mode check --log run.jsonl \
  -- "$build/scenarios/scen_side_stream" racy >/dev/null 2>&1
"$build/bin/dlsync" report --html report.html run.jsonl >/dev/null
cd - >/dev/null
HOME=$dir chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$dir/profile" \
  --window-size=1280,1560 --force-device-scale-factor=0.75 --screenshot="$out" "file://$dir/report.html" >/dev/null 2>&1
echo "report-png: wrote $out"
