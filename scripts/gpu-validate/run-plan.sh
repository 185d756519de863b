#!/usr/bin/env bash
# Several stages in one device call, in the order given, inside one time
# limit (docs/gpu-validation.md, "2. The device calls"):
#
#   GPUVAL_CALL_S=560 bash scripts/gpu-validate/run-plan.sh C K     (carry: [".gpuval"])
#
# A call costs a warm wait and a transfer, and a machine left idle for 30 s
# must be started again (1-2 min), so the stages that belong to one session's
# plan run back to back in one call. Each stage runs through run-stage.sh
# with its own budget (its default, or less: never more than what is left of
# GPUVAL_CALL_S less RESERVE_S for this script's last lines), leaves its own
# summary and archive in $OUT, and ends its own background processes. A
# stage that cannot have at least its minimum (MIN_S) is not started and is
# listed as skipped. At the end every summary is printed again, last, so that
# the device tool's output tail holds them.
#
# Environment: GPUVAL_CALL_S (seconds for the whole call; default 560, under
# the tool's 600 s per call), OUT and everything run-stage.sh reads.
# GPUVAL_CLOCK, a command that prints the time in whole seconds (default
# `date +%s`), is read once per stage; tests give it a clock of their own.
# GPUVAL_BUDGET_S is set per stage here; a value in the environment is
# ignored. Exit status: 0 when every stage ran and exited 0, else 1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
if [ $# -eq 0 ]; then
  echo "usage: [GPUVAL_CALL_S=S] $0 STAGE...   (stages: A B C K; see docs/gpu-validation.md)" >&2
  exit 1
fi
for stage in "$@"; do
  case $stage in
    A|B|C|K) ;;
    *) echo "$0: unknown stage '$stage' (stages: A B C K)" >&2; exit 1 ;;
  esac
done

CALL_S=${GPUVAL_CALL_S:-560}
RESERVE_S=10
MIN_S=60
OUT=${OUT:-$repo/.gpuval-out}
export OUT
CLOCK=${GPUVAL_CLOCK:-date +%s}
now() { $CLOCK; }
# The call's time starts with the first stage's reading, so that the first
# stage always gets min(its default, CALL_S - RESERVE_S), whatever second
# the script started in.
START=

default_budget() {  # what run-stage.sh would give the stage alone
  case $1 in
    A) echo 270 ;;
    K) echo 300 ;;
    *) echo 240 ;;
  esac
}

status=0
ran=()
for stage in "$@"; do
  t=$(now)
  [ -z "$START" ] && START=$t
  left=$((START + CALL_S - RESERVE_S - t))
  budget=$(default_budget "$stage")
  [ "$left" -lt "$budget" ] && budget=$left
  if [ "$budget" -lt "$MIN_S" ]; then
    echo "[gpuval-plan] stage $stage skipped: ${left} s left of the call's ${CALL_S} s, under its minimum of ${MIN_S} s"
    status=1
    continue
  fi
  echo "[gpuval-plan] stage $stage: budget ${budget} s ($((t - START)) s into the call)"
  GPUVAL_BUDGET_S=$budget bash "$here/run-stage.sh" "$stage" || status=1
  ran+=("$stage")
done

echo
echo "==== plan: $*; ran: ${ran[*]:-none}; $(( $(now) - START )) s of ${CALL_S} s ===="
for stage in "${ran[@]}"; do
  [ -f "$OUT/stage-$stage-summary.txt" ] && cat "$OUT/stage-$stage-summary.txt"
done
exit $status
