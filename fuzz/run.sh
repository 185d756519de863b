#!/usr/bin/env bash
# Runs every fuzz target for a short while from a scratch copy of its seed
# corpus (the committed corpus does not grow). Usage: fuzz/run.sh BUILD SECONDS
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-20}
status=0
for target in "$build"/fuzz/fuzz_*; do
  name=$(basename "$target")
  corpus=fuzz/corpus/${name#fuzz_}
  scratch=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$scratch"/
  echo "== $name: ${seconds}s"
  if ! "$target" -max_total_time="$seconds" -print_final_stats=1 "$scratch" 2>"$scratch.log"; then
    status=1
    tail -50 "$scratch.log"
  else
    grep -E "stat::number_of_executed_units|Done" "$scratch.log" | tail -2
  fi
  rm -rf "$scratch" "$scratch.log"
done
exit $status
