#!/usr/bin/env bash
# Runs clang-tidy with the committed .clang-tidy over ofu's C++ sources.
#
#   scripts/tidy.sh [BUILD_DIR [FILE_REGEX]]     (make tidy)
#
# BUILD_DIR (default build) is a configured and built tree: clang-tidy reads
# its compile_commands.json and needs the headers the build generates.
# FILE_REGEX narrows the files (default: every .cc under src apps gpu tests
# bench fuzz; .cu files are nvcc's and are left out). The findings go to
# stdout and to BUILD_DIR/clang-tidy.log, then a count per check. Slow: about
# 3 CPU-seconds per file, on every core. Exits 1 when there is a finding.
set -euo pipefail

cd "$(dirname "$0")/.."
build=${1:-build}
files=${2:-"/(src/ofu|apps|gpu|tests|bench|fuzz)/.*\.cc$"}
run_clang_tidy=$(command -v run-clang-tidy || command -v run-clang-tidy-14 || true)
if [ -z "$run_clang_tidy" ]; then
  echo "tidy: run-clang-tidy not found; scripts/install-deps.sh installs it (Debian package clang-tidy)" >&2
  exit 77
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: $build/compile_commands.json not found; configure and build first (make build)" >&2
  exit 2
fi

log="$build/clang-tidy.log"
# Without colours (it adds them even into a pipe).
"$run_clang_tidy" -p "$build" -quiet -j "$(nproc)" "$files" 2>/dev/null | sed -u 's/\x1b\[[0-9;]*m//g' | tee "$log" || true
# A finding in a header is reported once per file that includes it: count each once.
findings=$(grep -E '^/.*:[0-9]+:[0-9]+: (warning|error): ' "$log" | sort -u || true)
echo
echo "tidy: $(grep -c . <<<"$findings" || true) findings; per check (full output in $log):"
grep -oE '\[[a-z0-9.,-]+\]$' <<<"$findings" | sort | uniq -c | sort -rn || true
[ -z "$findings" ]
