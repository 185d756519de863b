#!/usr/bin/env bash
# The GPU validation's stages end to end, without a GPU: run-stage.sh A, B,
# C and K with this build's programs, the NVML double (SYNTHETIC data) and
# short workloads. Without torch (as here) the PyTorch steps fail and are
# recorded; without a CUDA device ofu-gemm exits 5 and that is recorded;
# without Nsight Compute stage K records each ncu step as skipped.
# What is checked is the plumbing a GPU session relies on: every stage
# leaves exactly its summary and its archive in $OUT, says SYNTHETIC, keeps
# within its budget, records each step, and leaves no process behind.
# Usage: dry_run_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pkg=$tmp/pkg
mkdir -p "$pkg"
ln -s "$build/apps/ofu/ofu" "$pkg/ofu"
ln -s "$build/gpu/ofu-gpm-probe" "$pkg/ofu-gpm-probe"
[ -x "$build/gpu/ofu-gemm" ] && ln -s "$build/gpu/ofu-gemm" "$pkg/ofu-gemm"
[ -f "$build/gpu/libofu-clock-probe.so" ] && ln -s "$build/gpu/libofu-clock-probe.so" "$pkg/libofu-clock-probe.so"
# The double's default driver is the one measured on an H100 (580.159.04,
# docs/results/2026-11-26-h100-sxm5/): GPM 248-250 are refused, so stage A
# must say what it said there (stage-A-summary.txt: "248:no ... undecided").
cat >"$tmp/nvml.json" <<'JSON'
{"driver_version": "580.00-synthetic",
 "devices": [{"name": "NVIDIA H100 80GB HBM3", "uuid": "GPU-synthetic-0", "sm_count": 132,
              "max_sm_clock_mhz": 1980, "clocks": [1755],
              "gpm": [{"1": 90, "5": 50.0, "7": 49.0, "170": 175500000, "171": 1000}]}]}
JSON
export GPUVAL_PKG=$pkg GPUVAL_NVML=$build/doubles/libnvidia-ml.so.1 GPUVAL_SYNTHETIC=1
# The PyTorch workloads' SYNTHETIC stand-in: the phases files workload.py would write,
# made-up timings and SMs' clock, so that the joins, verdicts and reports run end to end.
export GPUVAL_WORKLOAD=$src/tests/gpu_validate/fake_workload.py
export OFU_FAKE_NVML_SCENARIO=$tmp/nvml.json TMPDIR=$tmp GPUVAL_BUDGET_S=90
export GPUVAL_PHASE_SECONDS=1 GPUVAL_IDLE_SECONDS=1 GPUVAL_RAGGED_SECONDS=1 GPUVAL_TRAIN_SECONDS=1
export GPUVAL_AGENT_SECONDS=2 GPUVAL_IDLE_LOG_SECONDS=1 GPUVAL_SETTLE_SECONDS=0.5
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}protect_shadow_gap=0"

fail=0
expect() {  # DESCRIPTION COMMAND...
  if "${@:2}"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi
}
for stage in A B C K; do
  out=$tmp/out-$stage
  started=$(date +%s)
  rc=0
  OUT=$out bash "$src/scripts/gpu-validate/run-stage.sh" "$stage" >"$tmp/$stage.stdout" 2>"$tmp/$stage.stderr" || rc=$?
  took=$(($(date +%s) - started))
  echo "== stage $stage: exit $rc, $took s"
  summary=$out/stage-$stage-summary.txt
  expect "stage $stage exits 0" [ "$rc" = 0 ]
  expect "stage $stage leaves its summary and its archive, nothing else" \
    [ "$(ls "$out" | tr '\n' ' ')" = "stage-$stage-summary.txt stage-$stage.tar.gz " ]
  expect "stage $stage's summary says SYNTHETIC" grep -q '^SYNTHETIC INPUT' "$summary"
  expect "stage $stage prints its summary last" grep -q "stage time: .* s of 90 s" "$tmp/$stage.stdout"
  expect "stage $stage keeps within its budget" [ "$took" -lt 90 ]
  tar -tzf "$out/stage-$stage.tar.gz" | sed 's|^\./||' | sort >"$tmp/$stage.files"
  for f in steps.tsv env.txt env.json summary.txt; do
    expect "stage $stage archives $f" grep -qx "$f" "$tmp/$stage.files"
  done
  expect "no scratch folder is left" [ -z "$(ls -d "$tmp"/gpuval-* 2>/dev/null)" ]
  expect "no program of the stage still runs" [ -z "$(pgrep -f "$pkg/" || true)" ]
  if [ $fail = 1 ]; then
    echo "--- stdout"; cat "$tmp/$stage.stdout"; echo "--- stderr"; tail -n 40 "$tmp/$stage.stderr"
  fi
done

for f in probe-info.json probe-metrics.json probe-cost.json probe-idle-0.1s.csv pass-1s/rec.om pass-1s/probe.csv \
  pass-0.1s/rec.om pass-0.1s/probe.csv pass-1s/report.txt stage-a-phases.csv; do
  expect "stage A archives $f" grep -qx "$f" "$tmp/A.files"
done
expect "stage A reads the GPM metric list" \
  grep -q "^GPM metrics answered: 5 ids (1,5,7,170-171); 5:yes 248:no 249:no 250:no" "$tmp/out-A/stage-A-summary.txt"
expect "stage A says GPM 248 cannot be decided without it" \
  grep -q "^GPM 248: undecided: no window with GPM 248 and a clock" "$tmp/out-A/stage-A-summary.txt"
expect "stage A measures the calls' cost" grep -q "^cost: SM clock read .* us" "$tmp/out-A/stage-A-summary.txt"
expect "stage A's ofu sources ran on the double" grep -q "^ofu-sources	ok	0" <(tar -xzOf "$tmp/out-A/stage-A.tar.gz" ./steps.tsv)
for f in square.list.txt llm.list.txt clock-study.list.txt; do
  if [ -L "$pkg/ofu-gemm" ]; then expect "stage B archives $f" grep -qx "$f" "$tmp/B.files"; fi
done
expect "stage B records the sweeps' outcome" grep -q "^sweep-square	" <(tar -xzOf "$tmp/out-B/stage-B.tar.gz" ./steps.tsv)
expect "stage A times every call the source makes" \
  grep -q "^cost: metrics get of 12 .*; power .*; energy .*; clock event reasons .*; process list .* us" \
  "$tmp/out-A/stage-A-summary.txt"
# The SMs' own clock beside NVML's, per phase (fake_workload.py's SYNTHETIC phases), GPM 170
# against it over the phases (the double's 170 is a fixed number per window, so no verdict of
# it means anything; the line must say over how many phases it was taken), and ofu's own OFU
# per phase from `ofu report` on the recording with the phases.
expect "stage A gives GPM 170's verdict over the phases" \
  grep -Eq "^GPM 170: .*over [0-9]+ phases" "$tmp/out-A/stage-A-summary.txt"
expect "stage A measured the SMs' clock in its phases" \
  grep -Eq "^SMs' clock \(ofu's clock probe\): [0-9]+ of [0-9]+ phases measured; NVML / SMs" "$tmp/out-A/stage-A-summary.txt"
expect "stage C measured the SMs' clock in its phases" \
  grep -Eq "^SMs' clock \(ofu's clock probe\): [0-9]+ of [0-9]+ phases measured; NVML / SMs" "$tmp/out-C/stage-C-summary.txt"
expect "stage A gives ofu's own OFU per phase" python3 - "$tmp/out-A/stage-A.tar.gz" <<'PY'
import csv, io, sys, tarfile
archive = tarfile.open(sys.argv[1])
rows = list(csv.DictReader(io.TextIOWrapper(archive.extractfile("./stage-a-phases.csv"))))
bf16 = [r for r in rows if r["phase"] == "bf16-8192"]
assert len(bf16) == 2, rows  # both passes
for r in bf16:
    assert r["sm_clock_run"] == "1600.0", r
# The 1 s phases hold whole windows of the 0.1 s pass only.
r = next(r for r in bf16 if r["pass"] == "0.1s")
assert r["ofu_report"] and r["ofu_report_clock"] == "measured-model" and r["ofu_run"], r
gpm170 = list(csv.DictReader(io.TextIOWrapper(archive.extractfile("./stage-a-gpm170.csv"))))
assert any(r["phase"] == "bf16-8192" and r["gpm170_mhz"] for r in gpm170), gpm170
PY
expect "stage A prices each GPM metric alone and growing sets" \
  grep -q "^cost per GPM metric alone (p50 us; ! its own return failed): 5 [0-9.]*, " "$tmp/out-A/stage-A-summary.txt"
expect "stage A archives its GPM 170 table" grep -qx "stage-a-gpm170.csv" "$tmp/A.files"
expect "stage A's phase table has NVML's and the SMs' clocks" grep -q \
  ",clock_nvml,sm_clock_run,sm_clock_min,sm_clock_max,nvml_over_run,ofu_run,err_run_pp,sm_clock_why,ofu_report," \
  <(tar -xzOf "$tmp/out-A/stage-A.tar.gz" ./stage-a-phases.csv)
for table in stage-c-ragged.csv stage-c-train.csv; do
  expect "stage C's $table has NVML's and the SMs' clocks" grep -q ",clock_nvml,sm_clock_run,.*,err_run_pp," \
    <(tar -xzOf "$tmp/out-C/stage-C.tar.gz" "./$table")
done
# The training step under `ofu run`: ofu read the step's Megatron-LM throughput lines
# (fake_workload.py prints ten, SYNTHETIC) and set their MFU beside the OFU of the
# steady phases; the run's JSON report and page are archived.
expect "stage C runs the training step under ofu run and reads its MFU lines" \
  grep -Eq "^  ofu run: read 10 Megatron-LM lines, MFU +[0-9.]+ % \(measured +[0-9.]+ %\), beside OFU" \
  "$tmp/out-C/stage-C-summary.txt"
for f in ragged/rec.om agent/agent-cost.json train/rec.om train/run.json train/run.html; do
  expect "stage C archives $f" grep -qx "$f" "$tmp/C.files"
done
# The agent step: four runs, the full and the minimal configuration at 0.1 s and 1 s windows, each with
# steady CPU per thread, VmHWM and PSS, and the per-call table or "absent".
for run in "full 0.1 s" "minimal 0.1 s" "full 1 s" "minimal 1 s"; do
  expect "stage C measures the agent: $run" grep -Eq \
    "^  $run: CPU .* % of one core over .* s, steady .* % over .* s \(busiest threads: .*\), peak RSS .* MiB \(VmHWM; .*PSS [0-9.]+ MiB, RSS by kind \(MiB\): .*other libraries [0-9.]+, exit 0, (per-call table absent|calls \(us each\): .*)\$" \
    "$tmp/out-C/stage-C-summary.txt"
  name=agent-$(echo "$run" | awk '{ print $1 "-" $2 "s" }')
  expect "stage C records $name" grep -q "^$name	ok	0" <(tar -xzOf "$tmp/out-C/stage-C.tar.gz" ./steps.tsv)
  expect "stage C archives $name's log" grep -qx "agent/$name.log" "$tmp/C.files"
  expect "stage C archives $name's /metrics page" grep -qx "agent/metrics-${name#agent-}.txt" "$tmp/C.files"
done
expect "only the full runs keep a store" \
  [ "$(grep '^agent/history' "$tmp/C.files" | tr '\n' ' ')" = "agent/history-0.1s.sqlite agent/history-1s.sqlite " ]
expect "the agent-cost.json has per-thread figures for each run" python3 - "$tmp/out-C/stage-C.tar.gz" <<'PY'
import json, sys, tarfile
runs = json.load(tarfile.open(sys.argv[1]).extractfile("./agent/agent-cost.json"))["runs"]
assert [(r["config"], r["window_s"]) for r in runs] == [("full", 0.1), ("minimal", 0.1), ("full", 1.0), ("minimal", 1.0)], runs
for r in runs:
    assert r["threads"] and all("name" in t and "cpu_percent" in t for t in r["threads"]), r
    assert r["vm_hwm_mib"] > 0 and r["pss_mib"] > 0, r
    # This build's agent accounts for its calls (issue 29): the step reads its table and process figures.
    calls = r["source_calls"]
    assert calls["present"] and calls["windows"] > 0, calls
    assert any(c["call"] == "nvmlGpmSampleGet" and c["calls"] > 0 for c in calls["calls"]), calls
    assert r["process_metrics"]["process_resident_memory_bytes"] > 0, r["process_metrics"]
    # What the resident memory is made of, by kind, adding up to the whole.
    kinds = {c["category"]: c["rss_kib"] for c in r["memory"]["categories"]}
    assert kinds.get("ofu binary and plugins", 0) > 0 and kinds.get("other libraries", 0) > 0, kinds
    assert sum(kinds.values()) == r["memory"]["rss_kib"] > 0, r["memory"]
PY

# Several stages in one call (run-plan.sh), on an H200 double: the stage reads
# its SKU from the device, and a stage that cannot have its minimum of the
# call's time is skipped, not started. The plan reads a clock of the test's
# own that moves one second per reading, so the figures do not depend on
# the second the test started in: A gets 70 - 10 = 60 s; one second later
# B has 59 s, under its 60 s minimum.
cat >"$tmp/nvml-h200.json" <<'JSON'
{"devices": [{"name": "NVIDIA H200", "uuid": "GPU-synthetic-h200", "sm_count": 132, "max_sm_clock_mhz": 1980,
              "clocks": [1755], "gpm": [{"1": 90, "5": 50.0}]}]}
JSON
echo 1000 >"$tmp/clock.now"
cat >"$tmp/clock" <<CLOCK
#!/bin/sh
t=\$(cat "$tmp/clock.now"); echo \$((t + 1)) >"$tmp/clock.now"; echo "\$t"
CLOCK
chmod +x "$tmp/clock"
rc=0
OFU_FAKE_NVML_SCENARIO=$tmp/nvml-h200.json GPUVAL_CALL_S=70 GPUVAL_CLOCK=$tmp/clock OUT=$tmp/out-plan \
  bash "$src/scripts/gpu-validate/run-plan.sh" A B >"$tmp/plan.stdout" 2>"$tmp/plan.stderr" || rc=$?
expect "the plan exits 1 when a stage was skipped" [ "$rc" = 1 ]
expect "the plan runs A with the call's time" grep -q '^\[gpuval-plan\] stage A: budget 60 s' "$tmp/plan.stdout"
expect "the plan skips B" \
  grep -q '^\[gpuval-plan\] stage B skipped: 59 s left of the call.s 70 s, under its minimum of 60 s' "$tmp/plan.stdout"
expect "the plan leaves A's files only" \
  [ "$(ls "$tmp/out-plan" | tr '\n' ' ')" = "stage-A-summary.txt stage-A.tar.gz " ]
expect "the plan prints A's summary last" grep -q "^==== plan: A B; ran: A;" "$tmp/plan.stdout"
expect "stage A on an H200 uses the H200's spec" grep -q "^spec: h200-sxm (132 SMs" "$tmp/plan.stdout"
expect "no program of the plan still runs" [ -z "$(pgrep -f "$pkg/" || true)" ]
if [ $fail = 1 ]; then
  echo "--- plan stdout"; cat "$tmp/plan.stdout"; echo "--- plan stderr"; tail -n 20 "$tmp/plan.stderr"
fi
# Stage K without ncu (none here): the plan is made, every ncu step is recorded
# as skipped, and the summary says so and that the training step cannot be
# explained by kernel family; the SKU is the double's device name.
kdir=$tmp/out-K
expect "stage K says ncu is absent" grep -q "^ncu absent: skipped" "$kdir/stage-K-summary.txt"
expect "stage K reads the SKU from the device" \
  grep -q "^SKU: h100-sxm5 (from the device's name 'NVIDIA H100 80GB HBM3')" "$kdir/stage-K-summary.txt"
expect "stage K says the per-kernel CSV is absent" \
  grep -q "stage K's CSV (stage-k-kernels.csv) is absent" "$kdir/stage-K-summary.txt"
for s in ncu ncu-gemm ncu-sdpa ncu-train; do
  expect "stage K records $s as skipped" grep -q "^$s	skipped	-	0	ncu absent" <(tar -xzOf "$kdir/stage-K.tar.gz" ./steps.tsv)
done
expect "stage K archives its plan of 27 cases" [ "$(tar -xzOf "$kdir/stage-K.tar.gz" ./kernels/plan.jsonl | wc -l)" = 27 ]
expect "stage K archives its (empty) candidate rows" grep -qx "stage-k-candidates.json" "$tmp/K.files"

# Stage K with a SYNTHETIC ncu (fake_ncu.py: made-up kernels, no torch run):
# the metric list checked against its --query-metrics, its refusal of one
# listed name answered with the core set for that group and the next ones,
# the reports imported as CSV, the kernels split into cases, the rates, the
# candidate rows and the training step's family split in the summary.
out=$tmp/out-K-fake
rc=0
GPUVAL_NCU=$src/tests/gpu_validate/fake_ncu.py OUT=$out \
  bash "$src/scripts/gpu-validate/run-stage.sh" K >"$tmp/K-fake.stdout" 2>"$tmp/K-fake.stderr" || rc=$?
expect "stage K with a synthetic ncu exits 0" [ "$rc" = 0 ]
tar -xzOf "$out/stage-K.tar.gz" ./steps.tsv >"$tmp/K-fake.steps"
for s in ncu-version ncu-query-metrics ncu-gemm-core ncu-gemm-csv ncu-sdpa ncu-sdpa-csv ncu-train ncu-train-csv; do
  expect "stage K with a synthetic ncu: $s ok" grep -q "^$s	ok	0" "$tmp/K-fake.steps"
done
expect "stage K falls back to the core metrics once" \
  [ "$(grep -c '^ncu-gemm	failed	1' "$tmp/K-fake.steps")$(grep -c -- '-core	' "$tmp/K-fake.steps")" = 11 ]
ksum=$out/stage-K-summary.txt
expect "stage K names the metrics this ncu lacks" \
  grep -q "^metrics: 10 asked; not on this device/ncu: sm__pipe_tensor_op_gmma_cycles_active.sum" "$ksum"
expect "stage K says it used the core set" grep -q "^metrics: ncu failed with the selected list; the core set" "$ksum"
expect "stage K's SKU comes from the NVML double" \
  grep -q "^SKU: h100-sxm5 (from the device's name 'NVIDIA H100 80GB HBM3')" "$ksum"
expect "stage K rates the unaligned bf16 GEMM's kernel" \
  grep -Eq "^gemm-bf16-n\+1 +cutlass_75_tensorop_bf16_s1688gemm.* 0\.500 +0\.500 +1755\$" "$ksum"
expect "stage K proposes a candidate row" grep -q "^  sm75 s1688 16-bit: 0.500 over 6 case(s)" "$ksum"
expect "stage K explains the training step by family" grep -q "^  corrected OFU - HFU is held by: GEMM" "$ksum"
tar -tzf "$out/stage-K.tar.gz" | sed 's|^\./||' >"$tmp/K-fake.files"
for f in stage-k-kernels.csv stage-k-candidates.json ncu-query-metrics.txt ncu-metrics.txt kernels/gemm/raw.csv \
  kernels/gemm/cases.jsonl kernels/train/raw.csv; do
  expect "stage K with a synthetic ncu archives $f" grep -qx "$f" "$tmp/K-fake.files"
done
# An ncu that cannot profile at all (as on gVisor machines): after the core
# set fails too, the other groups are skipped rather than failed again.
rc=0
FAKE_NCU_BROKEN=1 GPUVAL_NCU=$src/tests/gpu_validate/fake_ncu.py OUT=$tmp/out-K-broken \
  bash "$src/scripts/gpu-validate/run-stage.sh" K >"$tmp/K-broken.stdout" 2>"$tmp/K-broken.stderr" || rc=$?
expect "stage K with a broken ncu exits 0" [ "$rc" = 0 ]
for s in ncu-sdpa ncu-train; do
  expect "stage K with a broken ncu skips $s" grep -q "^$s	skipped	-	0	ncu failed with the core metrics too" \
    <(tar -xzOf "$tmp/out-K-broken/stage-K.tar.gz" ./steps.tsv)
done
expect "stage K with a broken ncu says no kernel was profiled" \
  grep -q "^kernels: none profiled" "$tmp/out-K-broken/stage-K-summary.txt"
if [ $fail = 1 ]; then
  echo "--- stdout"; cat "$tmp/K-fake.stdout"; echo "--- stderr"; tail -n 40 "$tmp/K-fake.stderr"
fi
exit $fail
