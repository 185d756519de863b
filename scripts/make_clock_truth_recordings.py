#!/usr/bin/env python3
"""Rebuilds an ofu recording from one run of the 2026-11-27 clock-truth measurement.

    scripts/make_clock_truth_recordings.py RUN_DIR > out.om

RUN_DIR is one folder of docs/results/2026-11-27-clock-truth/ (h100-plan1,
h100-plan2, h200-plan1, h200-plan2): a REAL measurement on one NVIDIA H100
80GB HBM3 or one NVIDIA H200 (driver 580.159.04, CUDA 13.0), made by a
separate instrument, not by `ofu record`. Its README.md describes the files.
This script writes the OpenMetrics recording that `ofu record` would have
written live from NVML with 100 ms GPM windows, in the format of the bundled
data/recordings/h100-sxm5-stage-a-1s.om (docs/formats.md, "Recordings written
by `ofu record`" and "Phases"). It invents no figure:

  * ofu_recording_info: GPU (run.json `device`), driver, CUDA, date and the
    folder; `recorded` and the sample's timestamp are the first window's end.
  * ofu_recording_phase_info, one per phase of run.json that analysis.json
    lists: start = host_start + 2.0 s (analysis.json drops each phase's first
    2 s), end = host_end; a phase shorter than 0.5 s after that is left out.
    mfu is the phase's `mfu` in analysis.json `rows` (the probe's true MFU);
    kind is idle (idle-*), duty (duty-*), mixed (mixed) or gemm (a precision
    and calls); precision is run.json `prec`; peak_tflops is run.json's
    `peaks` entry for that precision, the dense peak the analysis measured
    MFU against (the FP32 one is the CUDA-core peak at 1830 MHz).
  * Counters, one sample per gpm.csv row, the window (t0_ns, t1_ns], stamped
    t1 in epoch seconds:
      GPM 5, 1, 2, 10, 12, 13, 7 (percent) / 100 -> DCGM_FI_PROF_PIPE_TENSOR_ACTIVE,
        _GR_ENGINE_ACTIVE, _SM_ACTIVE, _DRAM_ACTIVE, _PIPE_FP32_ACTIVE,
        _PIPE_FP16_ACTIVE, _PIPE_TENSOR_HMMA_ACTIVE (the names
        src/ofu/sources/dcgm_exporter_names.cc reads), written only where the
        metric's return code is 0; a ratio above 1.05, which ofu's reader
        refuses, is left out with a warning on stderr (`ofu record` does the
        same and counts them);
      nvml-clock.csv rows with t_ns in the window -> DCGM_FI_DEV_SM_CLOCK
        (mean sm_mhz), DCGM_FI_DEV_POWER_USAGE (mean power_mw / 1000, W) and
        DCGM_FI_DEV_CLOCK_THROTTLE_REASONS (bitwise OR of `reasons` over the
        rows with rc_reasons 0); absent for a window without such rows.
  * Labels: gpu 0, device nvidia0, modelName from run.json, Hostname
    clock-truth-<folder>, an empty pci_bus_id (so left out, as `ofu record`
    leaves out an empty label) and a PLACEHOLDER UUID: the raw data has none.

Not used: probes.npz (the SMs' own clock64 readings), ncu.csv, log.txt.
Numbers are written as `ofu record` writes them: the shortest decimal that
reads back to the same double (Python's repr, without a trailing ".0").
The output is deterministic, byte for byte.

Python 3 standard library only.
"""
import csv
import datetime
import json
import os
import sys

DRIVER = "580.159.04"  # docs/results/2026-11-27-clock-truth/README.md and each log.txt
CUDA = "13.0"
SKIP_S = 2.0  # analysis.json drops each phase's first 2 s
MIN_PHASE_S = 0.5
MAX_ACTIVITY = 1.05  # ofu's reader refuses a ratio above this

HEADER = [
    "# TYPE ofu_recording info",
    "# HELP ofu_recording What this recording is and how it was made.",
]

# (family, GPM metric id, help text, DCGM field id), in ofu's CounterField order
# (src/ofu/core/sample.cc), which is the order `ofu record` writes families in.
GPM_FAMILIES = [
    ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", 5, "tensor activity", 1004),
    ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1, "graphics engine activity", 1001),
    ("DCGM_FI_PROF_SM_ACTIVE", 2, "SM activity", 1002),
    ("DCGM_FI_PROF_DRAM_ACTIVE", 10, "DRAM activity", 1005),
    ("DCGM_FI_PROF_PIPE_FP32_ACTIVE", 12, "FP32 pipe activity", 1007),
    ("DCGM_FI_PROF_PIPE_FP16_ACTIVE", 13, "FP16 pipe activity", 1008),
    ("DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", 7, "HMMA tensor activity", 1014),
]
CLOCK = ("DCGM_FI_DEV_SM_CLOCK", "SM clock", 100)
POWER = ("DCGM_FI_DEV_POWER_USAGE", "power", 155)
REASONS = ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "clock event reasons", 112)


def num(x):
    """The shortest decimal that reads back to the same double, as ofu writes it ("1980", not "1980.0")."""
    text = repr(float(x))
    return text[:-2] if text.endswith(".0") else text


def seconds(ns):
    """Integer nanoseconds as epoch seconds, correctly rounded (int / int)."""
    return ns / 1000000000


def label_value(text):
    """An OpenMetrics label value: backslash, quote and newline escaped."""
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def labels(pairs):
    """Label pairs as ofu writes them; a label with no value is left out."""
    return ",".join('{}="{}"'.format(k, label_value(v)) for k, v in pairs if v != "")


def placeholder_uuid(folder):
    """A made-up, well-formed GPU UUID: zeros, then the folder name's digits (h200-plan1 -> ...000000002001)."""
    digits = "".join(c for c in folder if c.isdigit())[-12:]
    return "GPU-00000000-0000-0000-0000-" + digits.rjust(12, "0")


def kind_of(phase):
    name = phase["name"]
    if name.startswith("idle"):
        return "idle"
    if name.startswith("duty-"):
        return "duty"
    if name == "mixed":
        return "mixed"
    if phase.get("prec") and phase.get("calls"):
        return "gemm"
    return None


def phase_lines(run, analysis, folder):
    mfu_of = {row["phase"]: row["mfu"] for row in analysis["rows"]}
    lines = []
    for phase in run["phases"]:
        name = phase["name"]
        if name not in mfu_of:
            print("{}: phase {} is not in analysis.json; left out".format(folder, name), file=sys.stderr)
            continue
        start, end = phase["host_start"] + SKIP_S, phase["host_end"]
        if end - start < MIN_PHASE_S:
            print("{}: phase {} is {:.3f} s after its first {} s; left out".format(
                folder, name, end - start, SKIP_S), file=sys.stderr)
            continue
        pairs = [("phase", name)]
        kind = kind_of(phase)
        if kind:
            pairs.append(("kind", kind))
        precision = phase.get("prec")
        if precision:
            pairs.append(("precision", precision))
        pairs += [("start", num(start)), ("end", num(end)), ("mfu", num(mfu_of[name]))]
        peak = run.get("peaks", {}).get(precision) if precision else None
        if peak:
            # 989429760000000.0 / 1e12 is 989.42976; %.12g keeps a quotient's last-bit noise out.
            pairs.append(("peak_tflops", num(float("%.12g" % (peak / 1e12)))))
        lines.append("ofu_recording_phase_info{{{}}} 1 {}".format(labels(pairs), num(start)))
    return lines


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: {} RUN_DIR > out.om".format(sys.argv[0]))
    run_dir = os.path.normpath(sys.argv[1])
    folder = os.path.basename(run_dir)
    with open(os.path.join(run_dir, "run.json"), encoding="utf-8") as f:
        run = json.load(f)
    with open(os.path.join(run_dir, "analysis.json"), encoding="utf-8") as f:
        analysis = json.load(f)
    windows = read_csv(os.path.join(run_dir, "gpm.csv"))
    nvml = read_csv(os.path.join(run_dir, "nvml-clock.csv"))
    if not windows:
        sys.exit("{}: gpm.csv has no windows".format(run_dir))

    nvml_t = [int(r["t_ns"]) for r in nvml]
    if any(a > b for a, b in zip(nvml_t, nvml_t[1:])):
        sys.exit("{}: nvml-clock.csv is not in time order".format(run_dir))

    gpu = run["device"]
    series = "{{{}}}".format(labels([
        ("gpu", "0"), ("UUID", placeholder_uuid(folder)), ("pci_bus_id", ""), ("device", "nvidia0"),
        ("modelName", gpu), ("Hostname", "clock-truth-" + folder)]))

    gpm_points = {family: [] for family, _, _, _ in GPM_FAMILIES}
    clock_points, power_points, reason_points = [], [], []
    too_high = 0
    j = 0  # first nvml row not yet behind the current window: two pointers, both forward only
    previous_t1 = None
    for row in windows:
        t0, t1 = int(row["t0_ns"]), int(row["t1_ns"])
        if t1 <= t0 or (previous_t1 is not None and t0 < previous_t1):
            sys.exit("{}: gpm.csv window ({}, {}] is empty or overlaps the one before".format(run_dir, t0, t1))
        previous_t1 = t1
        stamp = num(seconds(t1))
        for family, metric, _, _ in GPM_FAMILIES:
            if row["rc{}".format(metric)] != "0":
                continue
            value = float(row["m{}".format(metric)]) / 100
            if value > MAX_ACTIVITY:
                too_high += 1
                print("{}: GPM {} reads {} % in the window ending {}: above {} as a ratio; left out".format(
                    run_dir, metric, row["m{}".format(metric)], stamp, MAX_ACTIVITY), file=sys.stderr)
                continue
            gpm_points[family].append((num(value), stamp))
        while j < len(nvml) and nvml_t[j] <= t0:
            j += 1
        k = j
        mhz_sum = mw_sum = 0
        reasons, reasons_read = 0, False
        while k < len(nvml) and nvml_t[k] <= t1:
            mhz_sum += int(nvml[k]["sm_mhz"])
            mw_sum += int(nvml[k]["power_mw"])
            if nvml[k]["rc_reasons"] == "0":
                reasons |= int(nvml[k]["reasons"])
                reasons_read = True
            k += 1
        n = k - j
        if n:
            clock_points.append((num(mhz_sum / n), stamp))
            power_points.append((num(mw_sum / (1000 * n)), stamp))
        if reasons_read:
            reason_points.append((num(reasons), stamp))
        j = k
    if too_high:
        print("{}: {} GPM values above {} left out".format(run_dir, too_high, MAX_ACTIVITY), file=sys.stderr)

    first_stamp = num(seconds(int(windows[0]["t1_ns"])))
    recorded = datetime.datetime.fromtimestamp(int(windows[0]["t1_ns"]) // 1000000000, datetime.timezone.utc)
    description = ("{gpu}, driver {driver}, CUDA {cuda}, {date} UTC: clock-truth measurement, {folder} "
                   "(docs/results/2026-11-27-clock-truth/{folder}); not recorded by ofu: the counters are "
                   "rebuilt from its gpm.csv (NVML GPM, 100 ms windows) and nvml-clock.csv (NVML every 2 ms) "
                   "by scripts/make_clock_truth_recordings.py; placeholder UUID; the phases below say what ran "
                   "and their true MFU").format(gpu=gpu, driver=DRIVER, cuda=CUDA,
                                                date=recorded.strftime("%Y-%m-%d %H:%M"), folder=folder)
    info = labels([("synthetic", "false"), ("description", description), ("gpu_name", gpu),
                   ("driver", DRIVER), ("cuda", CUDA), ("recorded", recorded.strftime("%Y-%m-%dT%H:%M:%SZ"))])

    out = HEADER + ["ofu_recording_info{{{}}} 1 {}".format(info, first_stamp),
                    "# TYPE ofu_recording_phase info",
                    "# HELP ofu_recording_phase What ran from start to end (epoch s) and its true MFU."]
    out += phase_lines(run, analysis, folder)

    families = [(family, "{} (DCGM field {}), NVML GPM metric {} / 100".format(text, field, metric),
                 gpm_points[family]) for family, metric, text, field in GPM_FAMILIES]
    families += [
        (CLOCK[0], "{} (DCGM field {}), mean NVML SM clock (MHz) over the window".format(CLOCK[1], CLOCK[2]),
         clock_points),
        (POWER[0], "{} (DCGM field {}), mean NVML power (W) over the window".format(POWER[1], POWER[2]),
         power_points),
        (REASONS[0], "{} (DCGM field {}), NVML clock event reasons ORed over the window".format(
            REASONS[1], REASONS[2]), reason_points),
    ]
    for family, text, points in families:
        if not points:
            continue
        out += ["# TYPE {} gauge".format(family),
                "# HELP {} {}, rebuilt by scripts/make_clock_truth_recordings.py.".format(family, text)]
        out += ["{}{} {} {}".format(family, series, value, stamp) for value, stamp in points]
    out.append("# EOF")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
