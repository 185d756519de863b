#!/usr/bin/env bash
# `ofu run`'s pass-through (docs/BENCHMARKS.md "`ofu run`: the job's output
# passing through"): a job that prints a lot, `cat` of a SYNTHETIC log of
# LINES lines of 100 bytes (random base64, written by this script), with its
# stdout to /dev/null, under `ofu run` against alone, side by side, RUNS
# times each in turn. ofu records from the bundled recording (--source
# replay:...), so no GPU is needed; the figure is what the relay and the log
# reading cost the job. Wall time, CPU seconds and peak RSS from
# /usr/bin/time; the medians are printed.
#
#   bench/run_passthrough.sh BUILD [LINES] [RUNS]   (default 14,000,000 lines: ~1.4 GB; 5 runs)
set -euo pipefail
build=${1:-build}
lines=${2:-14000000}
runs=${3:-5}
ofu=$build/apps/ofu/ofu
work=$(mktemp -d "${TMPDIR:-/tmp}/ofu-run-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== ofu run pass-through: $lines lines; $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC')"
head -c $((lines * 75)) /dev/urandom | base64 -w 99 > "$work/job.log"
echo "log: $(du -h "$work/job.log" | cut -f1), $(wc -l < "$work/job.log") lines (SYNTHETIC)"

measure() {  # label, command...
  local label=$1
  shift
  for _ in $(seq "$runs"); do
    /usr/bin/time -f "%e %U %S %M" -a -o "$work/$label.time" "$@" > /dev/null 2> /dev/null
  done
}
for _ in 1; do  # alternate the two, so that a drift of the machine hits both
  for i in $(seq "$runs"); do
    runs_saved=$runs; runs=1
    measure cat cat "$work/job.log"
    measure ofu_run "$ofu" run --source replay:data/recordings/h100-sxm5-stage-a-1s.om -- cat "$work/job.log"
    runs=$runs_saved
  done
done
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for label in cat ofu_run; do
  printf '%-8s wall %s s, user %s s, sys %s s, peak %s KiB (medians of %s)\n' "$label" \
    "$(cut -d' ' -f1 "$work/$label.time" | median)" "$(cut -d' ' -f2 "$work/$label.time" | median)" \
    "$(cut -d' ' -f3 "$work/$label.time" | median)" "$(cut -d' ' -f4 "$work/$label.time" | median)" "$runs"
done
