#!/usr/bin/env bash
# `make run`: the main job. With an NVIDIA GPU and its driver, ofu shows
# live OFU (`ofu top`; one snapshot when not on a terminal). Without one it
# says so plainly, shows why each live source is unavailable, and replays
# the bundled recording instead: a real one, taken on an H100 while known
# work ran (data/recordings/README.md), so the report's first table shows
# each phase's OFU beside its true MFU.
set -euo pipefail
ofu=${1:-build/apps/ofu/ofu}
recording=data/recordings/h100-sxm5-stage-a-1s.om

if "$ofu" sources >/dev/null 2>&1; then
  echo "Live GPU source found:"
  "$ofu" sources
  echo
  if [ -t 1 ]; then exec "$ofu" top; fi
  exec "$ofu" top --once
fi

if compgen -G "/proc/driver/nvidia/gpus/*" >/dev/null || compgen -G "/dev/nvidia[0-9]*" >/dev/null; then
  echo "An NVIDIA GPU is present, but neither NVML GPM nor DCGM can be used:"
else
  echo "No NVIDIA GPU on this machine (no /proc/driver/nvidia/gpus, no /dev/nvidia*). Live sources:"
fi
"$ofu" sources || true
echo
echo "Replaying the bundled recording instead: $recording"
echo "It is a real recording, measured on an NVIDIA H100 80GB HBM3 (driver 580.159.04) on 2026-11-26 by the"
echo "project's GPU validation while known work ran, so each phase's OFU stands beside its true MFU."
echo
"$ofu" report --input "$recording" --window 10
echo
echo "Reading the phases: OFU tracks MFU within about 1 pp where cuBLAS ran Hopper's own kernels."
echo "'run MHz' is the clock the SMs ran, which OFU uses: NVML's 'SM MHz' reads high under tensor"
echo "load outside steady work at the power cap (docs/metrics.md#the-sm-clock)."
echo "bf16-4097 reads about 2.3x high: 4097 is not a multiple of 8, so cuBLAS ran a Turing-era kernel"
echo "that does about half the FLOPs per tensor-active cycle; with a trace, 'ofu correct' counts that"
echo "and says what to pad (docs/kernels.md). fp32-simt ran on the CUDA cores, which OFU does not count."
echo
echo "Watch it play back in real time: $ofu top --source replay:$recording"
echo "See it as a page (a point per second, each phase's OFU beside its MFU):"
echo "  $ofu report --input $recording --html recording.html"
