#!/usr/bin/env bash
# Reading a long training log (docs/BENCHMARKS.md "Reader: training logs"):
# a SYNTHETIC torchtitan log of STEPS steps, each printed by 8 ranks plus one
# line without a metric (about 1.45 KB a step), written by this script; then
# the wall time, CPU seconds and peak RSS of `ofu correct --training-log` on it
# against the same command without the log (a small real trace from
# tests/data, so that what remains is the log's cost). With OLD_OFU=path an
# older `ofu` runs the same command too.
#
#   bench/training_log.sh BUILD [STEPS]     (default 250,000 steps: ~362 MB)
set -euo pipefail
build=${1:-build}
steps=${2:-250000}
new=$build/apps/ofu/ofu
trace=tests/data/kineto/hta-timeline-sampled-rank0.json.gz
work=$(mktemp -d "${TMPDIR:-/tmp}/ofu-log-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== training log: $steps steps x 8 ranks; $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC')"
python3 - "$work/train.log" "$steps" <<'PY'
import random, sys
random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write("# SYNTHETIC: torchtitan-format lines written by bench/training_log.sh\n")
    for step in range(1, int(sys.argv[2]) + 1):
        for rank in range(8):
            f.write(f"[rank{rank}]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: {step}  loss:  3.24405  "
                    f"grad_norm:  0.8319  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  "
                    f"mfu: {30 + random.random():.2f}%\n")
        f.write("[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - a line without the metric\n")
PY
echo "log: $(du -h "$work/train.log" | cut -f1), $(wc -l < "$work/train.log") lines"

run() {  # label, binary, args...
  local label=$1 binary=$2
  shift 2
  /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak RSS" -o "$work/time" \
    "$binary" correct --trace "$trace" --ofu 0.4 "$@" > "$work/out" 2>&1 || true
  printf '%-34s %s | %s\n' "$label" "$(cat "$work/time")" "$(grep -m1 'Reported MFU' "$work/out" || echo '-')"
}
run "this build, no log" "$new"
run "this build, --training-log" "$new" --training-log "$work/train.log"
if [ -n "${OLD_OFU:-}" ]; then
  run "OLD_OFU, --training-log" "$OLD_OFU" --training-log "$work/train.log"
fi
