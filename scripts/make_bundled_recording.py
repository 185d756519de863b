#!/usr/bin/env python3
"""Writes ofu's bundled recording, data/recordings/h100-sxm5-stage-a-1s.om.

It is a REAL recording: `ofu record` at 1 s windows on one NVIDIA H100 80GB
HBM3 during stage A of the project's GPU validation (2026-11-26, commit
83407f9), committed raw under docs/results/2026-11-26-h100-sxm5/stage-A/.
This script only makes that file self-describing; it invents no figure:

  * every sample line of pass-1s/rec.om is copied unchanged;
  * its ofu_recording_info header gets a description naming the GPU, driver,
    CUDA version, date and commit, plus the labels gpu_name, driver, cuda and
    recorded (from stage-A/env.json and the header's own timestamp);
  * one ofu_recording_phase_info sample per phase of pass-1s/phases.jsonl
    (what the workload timed with CUDA events), labelled with its start and
    end (epoch seconds, the recording's clock) and its true MFU: the loop's
    achieved TFLOP/s over the dense peak of its precision in
    data/gpu_specs.json (the FP32 CUDA-core peak, non_tensor.fp32, for an
    FP32 loop with TF32 off); 0 for a phase without FLOPs (copy, idle).
    docs/formats.md, "Phases", defines the family.

The output is deterministic, so the committed file can be checked byte for
byte (CTest BundledRecording.RealRegeneratesByteForByte):

  scripts/make_bundled_recording.py > data/recordings/h100-sxm5-stage-a-1s.om

Python 3 standard library only.
"""
import datetime
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STAGE = os.path.join(ROOT, "docs", "results", "2026-11-26-h100-sxm5", "stage-A")
RECORDING = os.path.join(STAGE, "pass-1s", "rec.om")
PHASES = os.path.join(STAGE, "pass-1s", "phases.jsonl")
ENV = os.path.join(STAGE, "env.json")
SPECS = os.path.join(ROOT, "data", "gpu_specs.json")
SKU = "h100-sxm5"
COMMIT = "83407f9"  # docs/results/2026-11-26-h100-sxm5/README.md, stage-A/env.txt

HEADER = [
    "# TYPE ofu_recording info",
    "# HELP ofu_recording What this recording is and how it was made.",
]


def label_value(text):
    """An OpenMetrics label value: backslash, quote and newline escaped."""
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels(pairs):
    return ",".join('{}="{}"'.format(k, label_value(v)) for k, v in pairs)


def read_phases(path):
    """(meta, [phase records]) of the workload's JSON lines."""
    meta, phases = {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if "meta" in record:
                meta = record["meta"]
            elif "phase" in record:
                phases.append(record)
    return meta, phases


def peak_of(sku, phase):
    """(label, TFLOPS) of the peak a phase's MFU is measured against, or None."""
    precision = phase.get("precision")
    if precision == "fp32" and not phase.get("allow_tf32", True):
        return "fp32", sku["non_tensor"]["fp32"]["peak_tflops"]  # CUDA cores
    entry = sku["precisions"].get(precision)
    return (precision, entry["peak_tflops"]) if entry else None


def phase_line(sku, phase):
    pairs = [("phase", phase["phase"]), ("kind", phase["kind"])]
    peak = peak_of(sku, phase) if phase["kind"] == "gemm" else None
    if peak:
        pairs.append(("precision", peak[0]))
    pairs += [("start", repr(phase["t_start"])), ("end", repr(phase["t_end"]))]
    if peak:
        pairs += [("mfu", repr(phase["achieved_tflops"] / peak[1])), ("peak_tflops", repr(peak[1]))]
    elif phase.get("flops") == 0:
        pairs.append(("mfu", "0"))  # no FLOPs: a copy or idle
    return "ofu_recording_phase_info{{{}}} 1 {}".format(labels(pairs), repr(phase["t_start"]))


def main():
    with open(RECORDING, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(ENV, encoding="utf-8") as f:
        env = json.load(f)
    with open(SPECS, encoding="utf-8") as f:
        sku = next(s for s in json.load(f)["skus"] if s["id"] == SKU)
    meta, phases = read_phases(PHASES)

    # The raw header: the two comment lines and one info sample, rewritten below.
    if lines[:2] != HEADER or not lines[2].startswith("ofu_recording_info{"):
        sys.exit("{}: the first three lines are not ofu record's header".format(RECORDING))
    if 'synthetic="false"' not in lines[2] or meta.get("device_name") != env["gpu"]:
        sys.exit("{}: not the real recording this script expects".format(RECORDING))
    timestamp = lines[2].rsplit(" ", 1)[1]
    recorded = datetime.datetime.fromtimestamp(float(timestamp), datetime.timezone.utc)
    description = ("{gpu} (SXM5), driver {driver}, CUDA {cuda}, {date} UTC: ofu GPU validation stage A, "
                   "commit {commit}; the phases below say what ran").format(
                       gpu=env["gpu"], driver=env["driver"], cuda=env["cuda"],
                       date=recorded.strftime("%Y-%m-%d %H:%M"), commit=COMMIT)
    info = labels([("synthetic", "false"), ("description", description), ("gpu_name", env["gpu"]),
                   ("driver", env["driver"]), ("cuda", env["cuda"]),
                   ("recorded", recorded.strftime("%Y-%m-%dT%H:%M:%SZ"))])

    out = HEADER + ["ofu_recording_info{{{}}} 1 {}".format(info, timestamp),
                    "# TYPE ofu_recording_phase info",
                    "# HELP ofu_recording_phase What ran from start to end (epoch s) and its true MFU.",
                    ] + [phase_line(sku, p) for p in phases] + lines[3:]
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
