# Stage K of the GPU validation (docs/gpu-validation.md): per-kernel tensor
# throughput with Nsight Compute. Sourced by run-stage.sh, which defines
# step, $WORK, $here and the stage's deadline.
#
#   1. kernels_workload.py plan: the cases and their exact FLOPs (no torch);
#   2. ncu --version; ncu --query-metrics (kept: ncu-query-metrics.txt), and
#      stage_k.py select-metrics: the wanted metrics whose names this ncu
#      and GPU know (ncu-metrics.txt; the others in ncu-metrics-missing.txt),
#      so that one unknown name does not lose the rest;
#   3. three ncu runs, one per group of kernels_workload.py (gemm, sdpa,
#      train), each with --profile-from-start off (only each case's one
#      profiled call), --clock-control none (the clocks are left alone),
#      --launch-count as a bound, and a report file; a run that fails with
#      the selected metrics is run again with the core set (stage_k.py
#      core-metrics). Then ncu --import ... --page raw --csv --print-units
#      base of each report;
#   4. run-stage.sh's finish: gpuval.py summary K (stage_k.py) writes
#      stage-k-kernels.csv, stage-k-candidates.json and the summary, with
#      the training step explained by kernel family.
#
# Without ncu (the NVML double in CI) every ncu step is recorded as skipped,
# "ncu absent", and the summary says "ncu absent: skipped".

# Bounds on ncu's replays: gemm 20 cases x (sentinel + 1-2 kernels), sdpa 6
# x (sentinel + 1-4 kernels), the two-layer training step about 150-300.
K_GEMM_LAUNCHES=${GPUVAL_K_GEMM_LAUNCHES:-80}
K_SDPA_LAUNCHES=${GPUVAL_K_SDPA_LAUNCHES:-60}
K_TRAIN_LAUNCHES=${GPUVAL_K_TRAIN_LAUNCHES:-400}

find_ncu() {
  if command -v ncu >/dev/null 2>&1; then
    command -v ncu
    return 0
  fi
  first_file /usr/local/cuda/bin/ncu /usr/local/cuda-*/bin/ncu /opt/nvidia/nsight-compute/*/ncu \
    /usr/local/NVIDIA-Nsight-Compute*/ncu
}

# profile_group NCU GROUP SECONDS LAUNCHES: with the metrics in $K_METRICS
profile_group() {
  local ncu=$1 group=$2 seconds=$3 launches=$4 d="$WORK/kernels/$2"
  mkdir -p "$d"
  if [ -n "${K_BROKEN:-}" ]; then
    # ncu failed with the core set too (say it cannot read the counters, as
    # on gVisor machines): the other groups would only fail the same way.
    printf 'ncu-%s\tskipped\t-\t0\t%s\n' "$group" "$K_BROKEN" >>"$WORK/steps.tsv"
    return 0
  fi
  local run=("$ncu" --target-processes all --profile-from-start off --clock-control none
    --launch-count "$launches" -f -o "$d/report")
  step "ncu-$group" "$seconds" --stdout "kernels/$group/ncu.out" --stderr "kernels/$group/ncu.err" -- \
    "${run[@]}" --metrics "$K_METRICS" python3 "$here/kernels_workload.py" run --group "$group" --out "$d/cases.jsonl"
  if [ ! -f "$d/report.ncu-rep" ] && [ "$(step_status "ncu-$group")" = failed ]; then
    # Should the selected list still hold a name this ncu refuses, the core
    # set, here and for the groups after this one.
    rm -f "$d/cases.jsonl"
    K_METRICS=$(python3 "$here/stage_k.py" core-metrics)
    echo "$K_METRICS" >"$WORK/ncu-metrics-core.txt"
    step "ncu-$group-core" "$seconds" --stdout "kernels/$group/ncu-core.out" --stderr "kernels/$group/ncu-core.err" -- \
      "${run[@]}" --metrics "$K_METRICS" python3 "$here/kernels_workload.py" run --group "$group" --out "$d/cases.jsonl"
    if [ ! -f "$d/report.ncu-rep" ] && [ "$(step_status "ncu-$group-core")" = failed ]; then
      K_BROKEN="ncu failed with the core metrics too (kernels/$group/ncu-core.err)"
    fi
  fi
  if [ -f "$d/report.ncu-rep" ]; then
    step "ncu-$group-csv" 60 --stdout "kernels/$group/raw.csv" -- \
      "$ncu" --import "$d/report.ncu-rep" --page raw --csv --print-units base
  fi
}

stage_main() {
  mkdir -p "$WORK/kernels"
  step plan 20 --stdout kernels/plan.jsonl -- python3 "$here/kernels_workload.py" plan
  local ncu=${GPUVAL_NCU:-$(find_ncu || true)}
  if [ -z "$ncu" ] || [ ! -x "$ncu" ]; then
    printf 'ncu\tskipped\t-\t0\tncu absent: not on PATH nor in /usr/local/cuda*/bin or /opt/nvidia/nsight-compute/*\n' \
      >>"$WORK/steps.tsv"
    local g
    for g in gemm sdpa train; do
      printf 'ncu-%s\tskipped\t-\t0\tncu absent\n' "$g" >>"$WORK/steps.tsv"
    done
    log "ncu absent: stage K's profiling skipped"
    return 0
  fi
  step ncu-version 20 --stdout ncu-version.txt -- "$ncu" --version
  step ncu-query-metrics 40 --stdout ncu-query-metrics.txt -- "$ncu" --query-metrics
  K_METRICS=$(python3 "$here/stage_k.py" select-metrics --query "$WORK/ncu-query-metrics.txt" \
    --missing "$WORK/ncu-metrics-missing.txt" 2>>"$WORK/logs/select-metrics.err")
  [ -n "$K_METRICS" ] || K_METRICS=$(python3 "$here/stage_k.py" core-metrics)
  echo "$K_METRICS" >"$WORK/ncu-metrics.txt"
  # Most telling first: the GEMMs (the throughput table's families), then
  # attention, then the training step, which takes the longest.
  profile_group "$ncu" gemm 80 "$K_GEMM_LAUNCHES"
  profile_group "$ncu" sdpa 50 "$K_SDPA_LAUNCHES"
  profile_group "$ncu" train 110 "$K_TRAIN_LAUNCHES"
}
