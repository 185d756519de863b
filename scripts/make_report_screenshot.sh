#!/bin/sh
# Regenerates the HTML report's screenshots, drawn by headless Chromium:
#   docs/images/html-report.png: the page of a SYNTHETIC example fleet
#     (tests/html/make_example_report.cc; nothing in it was measured on a GPU);
#   docs/images/recording-page-1400.png and recording-page-phone.png: the page
#     of one recording, the bundled REAL H100 one (data/recordings), at 1,400
#     px and at a phone's 390 px.
#
#   scripts/make_report_screenshot.sh [BUILD_DIR]   (default: build)
#
# Needs a configured build directory and chromium (scripts/install-deps.sh).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
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

# From the checkout, so that the page names the recording as the docs do.
(cd "$root" && "$build/apps/ofu/ofu" report --input data/recordings/h100-sxm5-stage-a-1s.om \
  --html "$scratch/recording.html" >/dev/null)
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$scratch/profile" --window-size=1400,1420 \
  --screenshot="$root/docs/images/recording-page-1400.png" "file://$scratch/recording.html" 2>/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$scratch/profile" --window-size=390,2200 \
  --screenshot="$root/docs/images/recording-page-phone.png" "file://$scratch/recording.html" 2>/dev/null
echo "wrote docs/images/recording-page-1400.png and recording-page-phone.png"
