# Stage C of the GPU validation (docs/gpu-validation.md): traces, a real
# training loop, and the agent on the real driver. Sourced by run-stage.sh,
# which defines step, bg_start, bg_stop, $OFU, $NVML_FLAG and $WORK.
#
#   1. ragged bf16 GEMMs, the six orders of (4097, 1000, 8191) as torch
#      M x N x K, each a timed loop while `ofu record` samples at 0.5 s and
#      then a profiler trace (record_shapes=True); `ofu correct` of each
#      trace with --tile-orientation swapped and direct. The orientation
#      whose corrected OFU comes closer to the measured MFU is the one that
#      maps an nvjet tile's sides to the kernel's M and N (gpuval.py);
#   2. a small transformer's training step (workload.py train: bf16
#      autocast, random tokens, MFU counted analytically) run under
#      `ofu run` at 1 s windows, printing its throughput as Megatron-LM
#      does; ofu's OFU of its steady phases beside the MFU it read from
#      those lines and the MFU the workload measured; then traced for two
#      steps, and corrected by `ofu correct --ofu` with the OFU of its
#      steady loop;
#   3. `ofu agent --source nvml` at 0.1 s and 1 s windows, each with the
#      full configuration (the defaults, with a history store) and the
#      minimal one (agent-minimal.toml: no store, no attribution), 20 s
#      each: CPU % of one core overall and per thread, peak RSS, PSS, and
#      the agent's own per-call table where /metrics has one
#      (agent_cost.py).

# Cut to fit the stage's 240 s: about 50 s of ragged GEMMs and traces, 45 s
# of training (104 s together on the H100 of 2026-11-26), four agent runs
# of 20 s and about 2 s each to start and stop: about 190 s.
RAGGED_S=${GPUVAL_RAGGED_SECONDS:-5}
TRAIN_S=${GPUVAL_TRAIN_SECONDS:-20}
AGENT_S=${GPUVAL_AGENT_SECONDS:-20}
SETTLE_S=${GPUVAL_SETTLE_SECONDS:-2}

stage_main() {
  step ofu-version 10 --stdout ofu-version.txt -- "$OFU" --version
  local d="$WORK/ragged"
  mkdir -p "$d"
  bg_start record-ragged 240 -- "$OFU" record --source nvml "${NVML_FLAG[@]}" --window 0.5 --duration 3600 \
    --out "$d/rec.om" --description "gpuval stage C: ragged bf16 GEMMs (workload.py ragged)"
  sleep "$SETTLE_S"
  step workload-ragged 150 --stdout ragged/workload.out --stderr ragged/workload.err -- \
    python3 "$WORKLOAD" ragged --out "$d" --seconds "$RAGGED_S"
  sleep "$SETTLE_S"
  bg_stop record-ragged
  local trace phase o
  for trace in "$d"/trace-*.json.gz; do
    [ -f "$trace" ] || continue
    phase=$(basename "$trace" .json.gz)
    phase=${phase#trace-}
    for o in swapped direct; do
      step "correct-$phase-$o" 60 --expect 4 --stdout "ragged/correct-$phase-$o.json" -- \
        "$OFU" correct --trace "$trace" --tile-orientation "$o" --format json
    done
    step "correct-$phase-table" 60 --expect 4 --stdout "ragged/correct-$phase-swapped.txt" -- \
      "$OFU" correct --trace "$trace" --tile-orientation swapped
  done

  d="$WORK/train"
  mkdir -p "$d"
  # The training step under `ofu run` (the ofu-run issue): it records at 1 s
  # as `ofu record` did here before, and reads the throughput lines the step
  # prints (Megatron-LM's format, exact model FLOPs) as the job's own MFU.
  # Its stderr holds the workload's and ofu's end-of-run report; its exit
  # status is the workload's.
  step workload-train 150 --stdout train/workload.out --stderr train/workload.err -- \
    "$OFU" run --source nvml "${NVML_FLAG[@]}" --window 1 --out "$d/rec.om" --report "$d/run.json" \
    --html "$d/run.html" -- python3 "$WORKLOAD" train --out "$d" --seconds "$TRAIN_S"
  local ofu_value=""
  if [ -f "$d/rec.om" ] && [ -f "$d/phases.jsonl" ]; then
    ofu_value=$(python3 "$here/gpuval.py" phase-ofu --recording "$d/rec.om" --phases "$d/phases.jsonl" \
      --phase train-steady --window 1 2>>"$WORK/logs/phase-ofu.err")
  fi
  local ofu_flag=()
  [ -n "$ofu_value" ] && ofu_flag=(--ofu "$ofu_value")
  if [ -f "$d/trace.json.gz" ]; then
    step correct-train 90 --expect 4 --stdout train/correct.json -- \
      "$OFU" correct --trace "$d/trace.json.gz" --reference-precision bf16 --format json "${ofu_flag[@]}"
    step correct-train-table 90 --expect 4 --stdout train/correct.txt -- \
      "$OFU" correct --trace "$d/trace.json.gz" --reference-precision bf16 "${ofu_flag[@]}"
  fi

  d="$WORK/agent"
  mkdir -p "$d"
  # Most telling first, should time run short: the full configuration at
  # 0.1 s is the first run's "with store" (6.49 % of a core on the H100).
  local window config name extra
  for window in 0.1 1; do
    for config in full minimal; do
      name="agent-$config-${window}s"
      if [ "$(remaining)" -lt $((AGENT_S + 10)) ]; then
        printf '%s\tskipped\t-\t0\tno stage time left\n' "$name" >>"$WORK/steps.tsv"
        log "$name: skipped (no stage time left)"
        continue
      fi
      if [ "$config" = full ]; then
        extra=(-- "${NVML_FLAG[@]}" --store "$d/history-${window}s.sqlite")
      else
        extra=(--config "$here/agent-minimal.toml" -- "${NVML_FLAG[@]}")
      fi
      step "$name" $((AGENT_S + 40)) -- python3 "$here/agent_cost.py" --ofu "$OFU" \
        --label "$config ${window} s" --config-name "$config" --window "$window" --duration "$AGENT_S" \
        --json "$d/agent-cost.json" --metrics-out "$d/metrics-$config-${window}s.txt" \
        --log "$d/$name.log" "${extra[@]}"
    done
  done
}
