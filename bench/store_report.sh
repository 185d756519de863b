#!/usr/bin/env bash
# The store's report at scale (issue 15, Done when 4; `make bench` runs it,
# docs/BENCHMARKS.md "Store report at 10^8 windows" records it): SYNTHETIC
# stores from store_fill (bench/store_fill.cc), then the wall time and peak
# RSS of `ofu report --store` (fleet-wide from the store's hourly rollups,
# fleet-wide from every window with --per-window, and one job) for this build and,
# with OLD_OFU=path, an older `ofu` on the same stores up to OLD_MAX_ROWS
# rows (default 2 x 10^7: a report that holds every row needs ~300 B a row).
# User and system CPU seconds are printed too: on a shared machine the wall
# time says as much about the load as about ofu.
# Where both ran, their outputs are compared byte for byte.
#
#   bench/store_report.sh BUILD [GPUS] [WINDOWS_PER_GPU...]
#
# Defaults: 1,024 GPUs with 977, 9,766 and 97,657 windows of 15 s each:
# 10^6, 10^7 and 10^8 rows. 10^8 rows are about 12 GB on disk (STORE_DIR,
# default a temporary directory) and take minutes to write; each store is
# deleted before the next is written.
set -euo pipefail
build=${1:-build}
gpus=${2:-1024}
if [ $# -gt 2 ]; then sizes=("${@:3}"); else sizes=(977 9766 97657); fi
new=$build/apps/ofu/ofu
fill=$build/bench/store_fill
old_max_rows=${OLD_MAX_ROWS:-20000000}
work=$(mktemp -d "${STORE_DIR:-${TMPDIR:-/tmp}}/ofu-store-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== store report: $gpus GPUs; $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores;" \
  "$(date -u '+%Y-%m-%d %H:%M UTC')"
for windows in "${sizes[@]}"; do
  rows=$((gpus * windows))
  need_kib=$((rows / 1024 * 130))  # about 120 bytes a row, and room
  free_kib=$(df -Pk "$work" | awk 'NR == 2 {print $4}')
  if [ "$free_kib" -lt "$need_kib" ]; then
    echo "== $rows rows: skipped, needs about $((need_kib / 1048576)) GiB free in $work, has $((free_kib / 1048576))"
    continue
  fi
  store=$work/history.sqlite
  /usr/bin/time -f "store_fill: %e s" "$fill" "$store" "$gpus" "$windows" 2>"$work/err" >/dev/null
  echo "== $rows rows ($gpus GPUs x $windows windows), $(du -h "$store" | cut -f1) on disk;" \
    "$(tail -1 "$work/err")"
  binaries=("$new")
  if [ -n "${OLD_OFU:-}" ]; then
    if [ "$rows" -le "$old_max_rows" ]; then binaries+=("$OLD_OFU"); else echo "   $OLD_OFU: not run (> OLD_MAX_ROWS)"; fi
  fi
  # The store's hourly rollups (the default), then every window (--per-window), side by side.
  for args in "report --store $store" "report --store $store --per-window" "report --store $store --job job-0-0"; do
    outputs=()
    for binary in "${binaries[@]}"; do
      out=$work/out.${#outputs[@]}
      load=$(cut -d' ' -f1-3 /proc/loadavg)
      /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak RSS, exit %x" "$binary" $args --format json >"$out" 2>"$work/err" || true
      echo "   $binary ${args/$work\//} : $(tail -1 "$work/err") (load $load)"
      outputs+=("$out")
    done
    if [ "${#outputs[@]}" -eq 2 ]; then
      if cmp -s "${outputs[0]}" "${outputs[1]}"; then echo "   outputs identical"; else echo "   outputs DIFFER"; fi
    fi
  done
  # The floor: SQLite alone reading one column of every row.
  if command -v sqlite3 >/dev/null; then
    /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak RSS" sqlite3 "$store" "SELECT sum(utilized_s) FROM windows" \
      >/dev/null 2>"$work/err" || true
    echo "   sqlite3 SELECT sum(utilized_s) FROM windows : $(tail -1 "$work/err")"
  fi
  rm -f "$store" "$store-wal" "$store-shm"
done
