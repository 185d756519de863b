#!/usr/bin/env bash
# Times the ofu text reader against `promtool check metrics` on the same
# file, side by side in one run.
#
# Usage: bench/compare_promtool.sh [BUILD_DIR]     (default: build)
#   needs BUILD_DIR/bench/read_text_file (ninja -C build read_text_file),
#   promtool (Prometheus 2.x) on PATH or in $PROMTOOL, python3, /usr/bin/time.
# Environment: OFU_COMPARE_MB  approximate file size in MB (default 150)
#              OFU_COMPARE_REPS repetitions of each tool (default 3)
#
# The file is SYNTHETIC: dcgm-exporter-style lines (8 GPUs x 20 metrics, the
# full dcgm-exporter label set, millisecond timestamps) repeated over many
# 15-second scrapes. It is written under /tmp and removed at exit.
#
# Why HELP/TYPE appear only once per family: promtool (Prometheus 2.42,
# expfmt text parser) rejects a second HELP or TYPE line for a family
# ("second HELP line for metric name"), so a plain concatenation of scrapes
# is not accepted. It does accept timestamps and the same series repeated,
# so the file keeps both and only drops the repeated metadata.
#
# The two tools do different amounts of work: read_text_file only parses and
# counts; promtool parses into protobuf metric families held in memory and
# then lints them. The comparison is "how long does it take to read this
# file", which is what ofu needs.
set -euo pipefail

build_dir=${1:-build}
reader="$build_dir/bench/read_text_file"
promtool_bin=${PROMTOOL:-promtool}
target_mb=${OFU_COMPARE_MB:-150}
reps=${OFU_COMPARE_REPS:-3}

die() { echo "compare_promtool: $*" >&2; exit 1; }
[[ -x $reader ]] || die "$reader not found; build it: ninja -C $build_dir read_text_file"
command -v "$promtool_bin" >/dev/null || die "promtool not found (set PROMTOOL=...)"
command -v python3 >/dev/null || die "python3 not found"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found"

workdir=$(mktemp -d /tmp/ofu-compare-promtool.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
file="$workdir/dcgm-exporter-synthetic.prom"

# --- SYNTHETIC data generator ---------------------------------------------
python3 - "$file" "$target_mb" <<'PY'
import random, sys

path, target_mb = sys.argv[1], float(sys.argv[2])
random.seed(42)
families = [  # name, type, help, fractional value
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", False),
    ("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", False),
    ("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", False),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", False),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", True),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", False),
    ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", False),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", False),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", False),
    ("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", False),
    ("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", False),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", False),
    ("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", False),
    ("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", False),
    ("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total number of NVLink bandwidth counters for all lanes.", False),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.", True),
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active.", True),
    ("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active sending or receiving data.", True),
    ("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", False),
    ("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.", False),
]
labels = [
    'gpu="%d",UUID="GPU-927d7444-b45a-7c49-8402-5e686e46a0%02d",pci_bus_id="00000000:%02X:00.0",'
    'device="nvidia%d",modelName="NVIDIA H100 80GB HBM3",Hostname="6d6d7dc3ce21",'
    'DCGM_FI_DRIVER_VERSION="535.183.01"' % (g, g, 0x18 + g * 0x10, g)
    for g in range(8)
]
target = int(target_mb * 1e6)
written = 0
ts = 1_700_000_000_000
first = True
with open(path, "w") as out:
    while written < target:
        parts = []
        for name, kind, help_text, fractional in families:
            if first:
                parts.append("# HELP %s %s\n# TYPE %s %s\n" % (name, help_text, name, kind))
            for label_set in labels:
                value = "%f" % random.random() if fractional else str(random.randrange(100000))
                parts.append("%s{%s} %s %d\n" % (name, label_set, value, ts))
        chunk = "".join(parts)
        out.write(chunk)
        written += len(chunk)
        ts += 15_000
        first = False
PY
# ---------------------------------------------------------------------------

bytes=$(stat -c %s "$file")
lines=$(wc -l < "$file")
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "file:     $file (SYNTHETIC dcgm-exporter text, ms timestamps)"
echo "size:     $bytes bytes ($mb MB), $lines lines"

# How promtool behaves on this file: its exit status and what it prints.
# 0 = clean, 3 = lint problems only (the file was parsed), 1 = parse error.
set +e
"$promtool_bin" check metrics < "$file" > "$workdir/promtool.out" 2>&1
promtool_rc=$?
set -e
echo "promtool: exit $promtool_rc; it printed $(wc -l < "$workdir/promtool.out") line(s), by message:"
# Lint lines are "METRIC_NAME message"; count them by message.
awk '{ name = $1; $1 = ""; count[$0]++ } END { for (m in count) printf "%12d x%s\n", count[m], m }' \
  "$workdir/promtool.out" | sort -rn
case $promtool_rc in
  0) echo "          (exit 0: parsed and linted cleanly)" ;;
  3) echo "          (exit 3: lint findings only, the file was parsed)" ;;
  *) die "promtool could not parse the file (exit $promtool_rc)" ;;
esac
# Proof that promtool reads to the end: spoil only the last sample and it
# must report that very line.
spoiled="$workdir/spoiled.prom"
sed '$ s/ [^ ]* \([0-9]*\)$/ not_a_number \1/' "$file" > "$spoiled"
set +e
spoiled_msg=$("$promtool_bin" check metrics < "$spoiled" 2>&1)
set -e
rm -f "$spoiled"
if grep -q "line $lines:" <<<"$spoiled_msg"; then
  echo "          (check: with its last line spoiled, promtool reports \"line $lines\", so it parses the whole file)"
else
  echo "          (check FAILED: with the last line spoiled promtool said: $spoiled_msg)"
fi

# Each tool once more, alternating, so both see the same machine state.
"$reader" "$file" > "$workdir/ofu.json" || die "read_text_file failed on the file"
echo "ofu:      $(cat "$workdir/ofu.json")"

# Prints "wall_seconds max_rss_kb" of one run; the exit status is not ours
# to judge here (promtool exits 3 on lint findings, checked above).
measure() {  # measure STDIN_FILE CMD...
  local stdin_file=$1
  shift
  /usr/bin/time -f '%e %M' -o "$workdir/time" "$@" < "$stdin_file" > /dev/null 2>&1 || true
  tail -n 1 "$workdir/time"
}

ofu_times=()
promtool_times=()
ofu_rss=0
promtool_rss=0
echo
printf '%-4s %12s %14s\n' "rep" "ofu_s" "promtool_s"
for ((i = 1; i <= reps; i++)); do
  read -r ofu_s ofu_kb < <(measure /dev/null "$reader" "$file")
  read -r prom_s prom_kb < <(measure "$file" "$promtool_bin" check metrics)
  ofu_times+=("$ofu_s")
  promtool_times+=("$prom_s")
  ((ofu_kb > ofu_rss)) && ofu_rss=$ofu_kb
  ((prom_kb > promtool_rss)) && promtool_rss=$prom_kb
  printf '%-4s %12s %14s\n' "$i" "$ofu_s" "$prom_s"
done

best() { printf '%s\n' "$@" | sort -g | head -n 1; }
ofu_best=$(best "${ofu_times[@]}")
prom_best=$(best "${promtool_times[@]}")

echo
printf '%-22s %10s %10s %14s\n' "tool" "best_s" "MB/s" "max_rss_MiB"
awk -v b="$bytes" -v o="$ofu_best" -v p="$prom_best" -v orss="$ofu_rss" -v prss="$promtool_rss" 'BEGIN {
  printf "%-22s %10.2f %10.1f %14.1f\n", "ofu read_text_file", o, b / 1e6 / o, orss / 1024
  printf "%-22s %10.2f %10.1f %14.1f\n", "promtool check metrics", p, b / 1e6 / p, prss / 1024
  printf "\nratio ofu/promtool (throughput, MB/s over MB/s): %.1fx\n", p / o
}'
echo "(wall times from /usr/bin/time -f %e, 10 ms resolution, include process start)"
