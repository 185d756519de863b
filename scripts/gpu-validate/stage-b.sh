# Stage B of the GPU validation (docs/gpu-validation.md): the ofu-gemm
# sweeps (docs/gemm-harness.md), trimmed to fit one device call:
# scripts/gpu-validate/sweeps/{square,llm,clock-study}.toml. Sourced by
# run-stage.sh, which defines step, $GEMM, $NVML_FLAG, $CUPTI_LIB and $WORK.
#
# Each sweep is one step with its own timeout; ofu-gemm flushes a row per
# case, so a sweep cut short keeps the rows it finished. The clock study
# runs at the default power limit only: a lent machine's settings are left
# as found. ofu-gemm --summary of each sweep and of all rows together goes
# to ofu-gemm-summary.txt; gpuval.py condenses them per precision.

stage_main() {
  local flags=("${NVML_FLAG[@]}")
  [ -n "$CUPTI_LIB" ] && flags+=(--cupti-library "$CUPTI_LIB")
  step ofu-gemm-version 10 --stdout ofu-gemm-version.txt -- "$GEMM" --version
  local s
  for s in square llm clock-study; do
    step "list-$s" 20 --stdout "$s.list.txt" -- "$GEMM" --list --sweep "$here/sweeps/$s.toml"
  done
  step sweep-square 170 --stderr logs/sweep-square.progress -- \
    "$GEMM" --sweep "$here/sweeps/square.toml" --out "$WORK/square.csv" "${flags[@]}"
  step sweep-llm 140 --stderr logs/sweep-llm.progress -- \
    "$GEMM" --sweep "$here/sweeps/llm.toml" --out "$WORK/llm.csv" "${flags[@]}"
  step sweep-clock-study 70 --stderr logs/sweep-clock-study.progress -- \
    "$GEMM" --sweep "$here/sweeps/clock-study.toml" --out "$WORK/clock-study.csv" "${flags[@]}"
  # All rows in one file (one header), then ofu-gemm's own summaries.
  local first=1
  : >"$WORK/all.csv"
  for s in square llm clock-study; do
    [ -s "$WORK/$s.csv" ] || continue
    if [ $first = 1 ]; then
      cat "$WORK/$s.csv" >>"$WORK/all.csv"
      first=0
    else
      tail -n +2 "$WORK/$s.csv" >>"$WORK/all.csv"
    fi
  done
  : >"$WORK/ofu-gemm-summary.txt"
  for s in all square llm clock-study; do
    [ -s "$WORK/$s.csv" ] || continue
    step "summary-$s" 30 --expect 4 --stdout "logs/summary-$s.txt" -- "$GEMM" --summary "$WORK/$s.csv"
    { echo "===== ofu-gemm --summary $s.csv"; cat "$WORK/logs/summary-$s.txt"; echo; } >>"$WORK/ofu-gemm-summary.txt"
  done
}
