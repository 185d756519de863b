# Stage A of the GPU validation (docs/gpu-validation.md): counters, and OFU
# against true MFU. Sourced by run-stage.sh, which defines step, bg_start,
# bg_stop, $OFU, $PROBE, $NVML_FLAG and $WORK.
#
#   1. ofu sources; the GPM metric ids the driver answers; the cost of
#      every call the NVML source makes per window (SM clock, GPM sample,
#      metrics get, power, energy, clock event reasons, processes); GPM logs at idle with
#      0.1 s and 1 s windows (a count and a rate of cycles differ only
#      between windows of different lengths);
#   2. two passes of the PyTorch phases (workload.py phases: bf16, fp16,
#      tf32, fp8 at 8192^3, bf16 4097^3, a copy loop, 10 s idle, GEMM bursts
#      after idle gaps, GEMMs alternating with copies, then fp32
#      8192^3 with allow_tf32=False: FP32 on the CUDA cores, whose true
#      FLOPs check the non-tensor bound in report.txt), one while
#      `ofu record` samples at 1 s, one at 0.1 s; ofu-gpm-probe logs GPM
#      5/248/250 and the clock at the same interval beside it;
#   3. gpuval.py joins the phases' timestamps with both and reports OFU,
#      exact-cycle OFU and true MFU per phase, NVML's and the SMs' clocks, and
#      ofu's own OFU per phase (`ofu report` on the recording with the phases
#      added: report-phases.json) (run-stage.sh's finish).

# 6 s loops and 10 s idle: about 75 s a pass, so that the stage fits its
# 270 s (each loop still spans five whole 1 s windows).
PHASE_S=${GPUVAL_PHASE_SECONDS:-6}
IDLE_S=${GPUVAL_IDLE_SECONDS:-10}
IDLE_LOG_S=${GPUVAL_IDLE_LOG_SECONDS:-4}
SETTLE_S=${GPUVAL_SETTLE_SECONDS:-2}

run_pass() {  # NAME WINDOW_S
  local name=$1 window=$2 d="$WORK/pass-$1"
  mkdir -p "$d"
  bg_start "record-$name" 300 -- "$OFU" record --source nvml "${NVML_FLAG[@]}" --window "$window" \
    --duration 3600 --out "$d/rec.om" --description "gpuval stage A, pass $name: workload.py phases"
  bg_start "probe-log-$name" 300 -- "$PROBE" "${NVML_FLAG[@]}" log --interval "$window" --duration 3600 \
    --out "$d/probe.csv"
  sleep "$SETTLE_S"  # the recorders' first windows
  step "workload-$name" 200 --stdout "pass-$name/workload.out" --stderr "pass-$name/workload.err" -- \
    python3 "$WORKLOAD" phases --out "$d/phases.jsonl" --seconds "$PHASE_S" --idle-seconds "$IDLE_S"
  sleep "$SETTLE_S"  # let the last window close
  bg_stop "record-$name"
  bg_stop "probe-log-$name"
  step "ofu-report-$name" 60 --stdout "pass-$name/report.txt" -- "$OFU" report --input "$d/rec.om" --window 10
  # ofu's own OFU per phase, clock model as shipped: the recording with the workload's phases.
  if [ -f "$d/phases.jsonl" ] && [ -f "$d/rec.om" ]; then
    step "with-phases-$name" 30 --stdout "pass-$name/rec-phases.om" -- \
      python3 "$here/gpuval.py" with-phases --recording "$d/rec.om" --phases "$d/phases.jsonl"
    step "ofu-report-phases-$name" 60 --expect 4 --stdout "pass-$name/report-phases.json" -- \
      "$OFU" report --input "$d/rec-phases.om" --window "$window" --format json
  fi
}

stage_main() {
  step ofu-version 10 --stdout ofu-version.txt -- "$OFU" --version
  step ofu-sources 30 --expect 5 --stdout sources.txt -- "$OFU" sources "${NVML_FLAG[@]}"
  step ofu-sources-json 30 --expect 5 --stdout sources.json -- "$OFU" sources --format json "${NVML_FLAG[@]}"
  step probe-info 30 --stdout probe-info.json -- "$PROBE" "${NVML_FLAG[@]}" info
  # The names NVML returns with each metric are read through pointers: should
  # that crash on this driver, list the ids again without them.
  step probe-metrics 60 --stdout probe-metrics.json -- "$PROBE" "${NVML_FLAG[@]}" metrics ||
    step probe-metrics-no-names 60 --stdout probe-metrics.json -- "$PROBE" "${NVML_FLAG[@]}" metrics --no-names
  # Nine kinds of call, at most 5 s each (0.5 s in all on the H100 for the first three).
  step probe-cost 60 --stdout probe-cost.json -- "$PROBE" "${NVML_FLAG[@]}" cost --limit 5
  local interval
  for interval in 0.1 1; do
    step "probe-idle-${interval}s" 20 -- "$PROBE" "${NVML_FLAG[@]}" log --interval "$interval" \
      --duration "$IDLE_LOG_S" --out "$WORK/probe-idle-${interval}s.csv"
  done
  run_pass 1s 1
  run_pass 0.1s 0.1
}
