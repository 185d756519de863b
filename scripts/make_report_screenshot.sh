#!/bin/sh
# Regenerates docs/images/html-report.png: the HTML report of a SYNTHETIC
# example fleet (tests/html/make_example_report.cc; nothing in it was
# measured on a GPU), drawn by headless Chromium.
#
#   scripts/make_report_screenshot.sh [BUILD_DIR]   (default: build)
#
# Needs a configured build directory and chromium (scripts/install-deps.sh).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --build "$build" --parallel 2 --target html_report_example ofu
"$build/tests/html_report_example" "$scratch/example-history.sqlite" "$scratch/report.html"
# The same store through the command, so the example cannot drift from it.
"$build/apps/ofu/ofu" report --store "$scratch/example-history.sqlite" --html "$scratch/cli.html" >/dev/null

chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$scratch/profile" --window-size=1400,2760 \
  --screenshot="$root/docs/images/html-report.png" "file://$scratch/report.html" 2>/dev/null
echo "wrote docs/images/html-report.png"
