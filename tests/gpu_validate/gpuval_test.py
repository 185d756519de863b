#!/usr/bin/env python3
"""The pure-Python parts of the GPU validation (scripts/gpu-validate), on
SYNTHETIC inputs made up here with hand-computed answers: the spec lookup,
FLOP and MFU arithmetic, recording and probe-log parsing, the phase join,
the GPM cycle-counter decision, the orientation verdict, the agent step's
figures (per-thread CPU from two /proc snapshots, memory, the agent's
per-call table from /metrics), the probe's cost lines, the summaries.
Needs no GPU and no torch (workload.py imports torch only to run)."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu-validate"))
import agent_cost  # noqa: E402
import gpuval  # noqa: E402
import gpuval_core  # noqa: E402
import workload  # noqa: E402

# A made-up GPU with round numbers: f_spec = 200e12 / (100 x 1000) = 2000 MHz.
SYNTHETIC_SPECS = {
    "schema_version": 1,
    "architectures": {"synthetic": {"k_arch": 1.0}},
    "skus": [{"id": "synthetic-gpu", "name": "SYNTHETIC GPU", "architecture": "synthetic", "sm_count": 100,
              "basis_precision": "bf16", "aliases": ["SYNTHETIC GPU 80GB"],
              "precisions": {"bf16": {"flops_per_clock_per_sm": 1000, "peak_tflops": 200},
                             "fp8": {"flops_per_clock_per_sm": 2000, "peak_tflops": 400}}}],
}
SKU = SYNTHETIC_SPECS["skus"][0]

PROBE_HEADER = ("t_end_s,dt_s,gpm5_any_tensor_pct,gpm5_any_tensor_pct_rc,gpm7_hmma_pct,gpm7_hmma_pct_rc,"
                "gpm9_imma_pct,gpm9_imma_pct_rc,gpm2_sm_util_pct,gpm2_sm_util_pct_rc,gpm248_sm_cycles_elapsed,"
                "gpm248_sm_cycles_elapsed_rc,gpm249_sm_cycles_active,gpm249_sm_cycles_active_rc,"
                "gpm250_mma_cycles_active,gpm250_mma_cycles_active_rc,clock_mean_mhz,clock_last_mhz,"
                "clock_min_mhz,clock_max_mhz,clock_readings,test_double\n")


def probe_row(t_end, dt, util, v248, v250, clock):
    return f"{t_end},{dt},{util},0,,3,,3,,3,{v248},0,,3,{v250},0,{clock},{clock},{clock},{clock},10,1\n"


def recording(points, gpu="0", model="SYNTHETIC GPU 80GB"):
    """An OpenMetrics text like ofu record's: (t, tensor, clock) per window."""
    labels = f'gpu="{gpu}",UUID="GPU-synthetic",modelName="{model}"'
    lines = ['# TYPE ofu_recording info', 'ofu_recording_info{synthetic="true",description="SYNTHETIC"} 1 0',
             "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge"]
    lines += [f"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{labels}}} {a} {t}" for t, a, _ in points]
    lines += ["# TYPE DCGM_FI_DEV_SM_CLOCK gauge"]
    lines += [f"DCGM_FI_DEV_SM_CLOCK{{{labels}}} {c} {t}" for t, _, c in points]
    return "\n".join(lines + ["# EOF", ""])


class SpecsTest(unittest.TestCase):
    def test_lookup_follows_ofus_normalization(self):
        specs = gpuval_core.load_specs()
        self.assertEqual(gpuval_core.lookup_sku(specs, "NVIDIA H100 80GB HBM3")["id"], "h100-sxm5")
        self.assertEqual(gpuval_core.lookup_sku(specs, "  nvidia   H200 ")["id"], "h200-sxm")
        self.assertEqual(gpuval_core.lookup_sku(specs, "h100-sxm5")["id"], "h100-sxm5")
        self.assertIsNone(gpuval_core.lookup_sku(specs, "NVIDIA GeForce GTX 1080"))

    def test_f_spec_and_peaks(self):
        h100 = gpuval_core.lookup_sku(gpuval_core.load_specs(), "h100-sxm5")
        # 989.4e12 / (132 x 4096) = 1829.945 MHz.
        self.assertAlmostEqual(gpuval_core.f_spec_mhz(h100), 1829.945, places=3)
        self.assertEqual(gpuval_core.peak_tflops(h100, "fp8"), 1979)
        self.assertIsNone(gpuval_core.peak_tflops(h100, "fp4"))
        self.assertEqual(gpuval_core.f_spec_mhz(SKU), 2000.0)


class FlopsTest(unittest.TestCase):
    def test_gemm_flops_are_exact_integers(self):
        self.assertEqual(gpuval_core.gemm_flops(8192, 8192, 8192), 1099511627776)
        self.assertEqual(gpuval_core.gemm_flops(4097, 4097, 4097), 137539641346)  # 2 x 68769820673
        self.assertEqual(gpuval_core.gemm_flops(4097, 1000, 8191, iterations=3), 3 * 2 * 4097 * 1000 * 8191)

    def test_mfu(self):
        # 1e15 FLOPs in 2 s against 989.4 TFLOP/s: 500 / 989.4.
        self.assertAlmostEqual(gpuval_core.mfu(1e15, 2.0, 989.4), 500 / 989.4)
        self.assertIsNone(gpuval_core.mfu(1e15, 2.0, None))
        self.assertIsNone(gpuval_core.mfu(1e15, 0, 989.4))

    def test_flops_between_checkpoints(self):
        checkpoints = [[100, 0], [101, 1e12], [103, 3e12]]
        # at(100.5) = 0.5e12, at(102) = 2e12.
        self.assertAlmostEqual(gpuval_core.flops_between(checkpoints, 100.5, 102), 1.5e12)
        self.assertAlmostEqual(gpuval_core.flops_between(checkpoints, 99, 104), 3e12)  # clamped
        self.assertEqual(gpuval_core.flops_between(checkpoints, 102, 102), 0.0)

    def test_phase_mfu_whole_loop_and_span(self):
        phase = {"kind": "gemm", "precision": "bf16", "flops": 3e12, "elapsed_s": 3.0, "t_start": 100,
                 "t_end": 103, "checkpoints": [[100, 0], [101, 1e12], [103, 3e12]]}
        self.assertAlmostEqual(gpuval_core.phase_mfu(SKU, phase), 3e12 / 3 / 200e12)
        # (101, 103): 2e12 FLOPs in 2 s = 1 TFLOP/s of 200.
        self.assertAlmostEqual(gpuval_core.phase_mfu(SKU, phase, (101, 103)), 0.005)
        self.assertEqual(gpuval_core.phase_mfu(SKU, {"kind": "idle"}), 0.0)
        self.assertIsNone(gpuval_core.phase_mfu(SKU, dict(phase, precision="tf32")))  # no tf32 peak

    def test_transformer_flops(self):
        # layers 2, d 4, vocab 10, T 8: matmul params 12*2*16 + 4*10 = 424, 6 x 424 = 2544;
        # attention 12 * 2 * 4 * 8 = 768.
        self.assertEqual(gpuval_core.transformer_flops_per_token(2, 4, 10, 8), 3312)
        self.assertEqual(gpuval_core.transformer_flops_per_token(2, 4, 10, 8, causal=True), 2544 + 384)
        self.assertEqual(gpuval_core.transformer_flops_per_token(2, 4, 10, 8, flash_recompute=True), 3312 + 128)

    def test_the_training_steps_flops(self):
        # 6 x (12 x 8 x 2048^2 + 2048 x 32768) + 12 x 8 x 2048 x 2048 = 3,221,225,472 per token, x 16384 tokens.
        model, hardware = workload.train_flops(workload.TRAIN_CONFIG)
        self.assertEqual(model, 3221225472 * 16384)
        self.assertEqual(hardware - model, 2 * 8 * 2048 * 2048 * 16384)

    def test_workload_plan(self):
        names = [p["phase"] for p in workload.STAGE_A_PHASES]
        self.assertEqual(names, ["bf16-8192", "fp16-8192", "tf32-8192", "fp8-8192", "bf16-4097", "copy", "idle",
                                 "duty-8192", "mixed"])
        ragged = workload.ragged_phases()
        self.assertEqual(len(ragged), 6)
        self.assertTrue(all(p["m"] != p["n"] for p in ragged))
        self.assertEqual({(p["m"], p["n"], p["k"]) for p in ragged}, {
            (4097, 1000, 8191), (4097, 8191, 1000), (1000, 4097, 8191), (1000, 8191, 4097), (8191, 4097, 1000),
            (8191, 1000, 4097)})
        self.assertEqual(workload.iterations_for(10, 0.0014), 7143)
        self.assertEqual(workload.checkpoint_every(0.0014), 36)
        self.assertEqual(workload.checkpoint_every(0.09), 1)


class ParsingAndJoinTest(unittest.TestCase):
    def test_recording_windows_and_phase_join(self):
        text = recording([(10, 0.5, 1800), (11, 0.8, 1500), (12, 0.9, 1900)])
        windows = gpuval_core.recording_windows(text, window_s=1.0)
        self.assertEqual([(w["t_start"], w["t_end"]) for w in windows], [(9, 10), (10, 11), (11, 12)])
        self.assertEqual(windows[0]["model"], "SYNTHETIC GPU 80GB")
        # Inside [9.5, 12]: (10, 11) and (11, 12): OFU 0.8 x 1500 / 2000 = 0.6 and 0.9 x 1900 / 2000 = 0.855.
        j = gpuval_core.phase_ofu(windows, {"t_start": 9.5, "t_end": 12.0}, fspec=2000)
        self.assertAlmostEqual(j["ofu"], (0.6 + 0.855) / 2)
        self.assertEqual(j["windows"], 2)
        self.assertEqual(j["span"], (10, 12))
        self.assertAlmostEqual(j["clock_mhz"], 1700)
        # Window length defaults to the median spacing.
        self.assertEqual(gpuval_core.recording_windows(text)[0]["t_start"], 9)

    def test_phase_join_weights_by_window_length(self):
        windows = [{"t_start": 0, "t_end": 1, "ofu": 0.4}, {"t_start": 1, "t_end": 1.5, "ofu": 0.7},
                   {"t_start": 1.5, "t_end": 3, "ofu": 0.99}]
        j = gpuval_core.phase_ofu(windows, {"t_start": 0, "t_end": 2})
        self.assertAlmostEqual(j["ofu"], (0.4 * 1 + 0.7 * 0.5) / 1.5)  # = 0.5
        self.assertIsNone(gpuval_core.phase_ofu(windows, {"t_start": 5, "t_end": 6})["ofu"])

    def test_probe_log(self):
        text = PROBE_HEADER + probe_row(100.5, 0.5, 50, 8e10, 4e10, 1600) + "101,0.5,,3,,3,,3,,3,,3,,3,,3,,,,,0,1\n"
        rows = gpuval_core.read_probe_log(text)
        self.assertEqual(len(rows), 2)
        self.assertEqual(rows[0]["t_start"], 100.0)
        self.assertEqual(rows[0]["gpm248_sm_cycles_elapsed"], 8e10)
        self.assertIsNone(rows[1]["gpm5_any_tensor_pct"])
        raw = gpuval.raw_probe_windows(rows, 2000)
        self.assertAlmostEqual(raw[0]["ofu"], 0.5 * 1600 / 2000)
        self.assertIsNone(raw[1]["ofu"])

    def test_id_ranges(self):
        self.assertEqual(gpuval_core.id_ranges([8, 1, 2, 3, 5, 7]), "1-3,5,7-8")
        self.assertEqual(gpuval_core.id_ranges([]), "")


class CycleCountersTest(unittest.TestCase):
    @staticmethod
    def rows(values):
        return gpuval_core.read_probe_log(PROBE_HEADER + "".join(values))

    def test_summed_count_told_apart_by_two_window_lengths(self):
        # 132 SMs at 1500 MHz: 132 x 1.5e9 x dt cycles.
        rows = self.rows([probe_row(i, 0.1, 50, 132 * 1.5e9 * 0.1, 0.5 * 132 * 1.5e9 * 0.1, 1500) for i in range(5)] +
                         [probe_row(i, 1.0, 50, 132 * 1.5e9, 0.5 * 132 * 1.5e9, 1500) for i in range(5)] +
                         [probe_row(i, 1.0, 0, 132 * 2e7, 0, 20) for i in range(3)])  # clock < 100 MHz: unused
        c = gpuval.classify_cycles(rows, 132)
        self.assertEqual(c["verdict"], ("count", "summed over SMs"))
        self.assertEqual(c["windows"], 10)
        self.assertEqual(c["matches"][("count", "summed over SMs")], 10)
        self.assertEqual(c["matches"][("rate", "summed over SMs")], 5)  # the 1 s windows fit both
        self.assertAlmostEqual(c["ratios"][0.1]["count_ratio"], 132)
        self.assertAlmostEqual(c["ratios"][0.1]["rate_ratio"], 13.2)

    def test_per_sm_rate(self):
        rows = self.rows([probe_row(i, dt, 50, 1.7e9, 0.85e9, 1700) for i, dt in enumerate([0.1, 0.1, 1, 1, 0.5])])
        self.assertEqual(gpuval.classify_cycles(rows, 132)["verdict"], ("rate", "per SM"))

    def test_one_window_length_cannot_tell_count_from_rate(self):
        rows = self.rows([probe_row(i, 1.0, 50, 132 * 1.5e9, 1e11, 1500) for i in range(4)])
        c = gpuval.classify_cycles(rows, 132)
        self.assertIsNone(c["verdict"])
        self.assertIn("undecided between count summed over SMs and rate summed over SMs", c["text"])

    def test_nothing_fits(self):
        rows = self.rows([probe_row(i, 1.0, 50, 7e9, 1e9, 1500) for i in range(4)])
        self.assertIsNone(gpuval.classify_cycles(rows, 132)["verdict"])
        self.assertIsNone(gpuval.classify_cycles([], 132)["verdict"])

    def test_mma_basis_and_exact_ofu(self):
        same = self.rows([probe_row(0, 0.5, 25, 8e10, 2e10, 1600), probe_row(1, 0.5, 5, 8e10, 2e10, 1600)])
        median, nearest, n = gpuval.mma_basis(same, 100)
        self.assertEqual((median, nearest, n), (1.0, 1.0, 1))  # the 5 % window is not busy
        summed = self.rows([probe_row(0, 0.5, 25, 8e10, 2e10 * 100, 1600)])
        self.assertEqual(gpuval.mma_basis(summed, 100)[1], 100.0)
        # Count summed over 100 SMs, 0.5 s: 8e10 / (100 x 0.5) = 1600 MHz; 2e10 / 8e10 = 0.25 active;
        # OFU = 0.25 x 1600 / 2000 = 0.2.
        w = gpuval.exact_cycle_windows(same, ("count", "summed over SMs"), 1.0, 100, 2000)[0]
        self.assertAlmostEqual(w["sm_clock_mhz"], 1600)
        self.assertAlmostEqual(w["tensor_active"], 0.25)
        self.assertAlmostEqual(w["ofu"], 0.2)
        self.assertIsNone(gpuval.exact_cycle_windows(same, None, 1.0, 100, 2000)[0]["ofu"])


class VerdictsTest(unittest.TestCase):
    def test_orientation(self):
        rows = [{"err_swapped_pp": 0.3, "err_direct_pp": 2.0}, {"err_swapped_pp": -0.2, "err_direct_pp": 1.5},
                {"err_swapped_pp": 0.1, "err_direct_pp": 0.1}]  # pads alike: says nothing
        winner, text = gpuval.orientation_verdict(rows)
        self.assertEqual(winner, "swapped")
        self.assertIn("swapped 0.25 pp, direct 1.75 pp over 2 shapes", text)
        self.assertIsNone(gpuval.orientation_verdict([{"err_swapped_pp": 0.3, "err_direct_pp": 0.5}])[0])
        self.assertIsNone(gpuval.orientation_verdict(rows[2:])[0])

    def test_agent_cost_record(self):
        r = agent_cost.cost_record("with store", 60.0, 0.3, 0.12, 14336, 0)
        self.assertAlmostEqual(r["cpu_percent"], 0.7)
        self.assertAlmostEqual(r["max_rss_mib"], 14.0)
        # A run of the first GPU run's file: no VmHWM, so wait4's figure, marked as an upper bound.
        self.assertEqual(gpuval.agent_cost_lines({"runs": [r]}), [
            "agent (ofu agent --source nvml), CPU in % of one core:",
            "  with store: CPU 0.70 % of one core over 60 s, peak RSS 14.0 MiB (wait4, an upper bound), exit 0"])

    def test_parse_stat(self):
        # proc(5): pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
        # A comm with a space and a ')' must not shift the fields.
        line = "4242 (ofu a) b) S 1 4242 4242 0 -1 4194560 900 0 0 0 123 456 0 0 20 0 3 0 77 1 2\n"
        self.assertEqual(agent_cost.parse_stat(line), ("ofu a) b", 123, 456))

    def test_thread_cpu_from_two_snapshots(self):
        # SYNTHETIC /proc snapshots 10 s apart at 100 ticks a second.
        before = {100: {"name": "ofu", "utime": 50, "stime": 20},
                  101: {"name": "ofu-http", "utime": 5, "stime": 5},
                  102: {"name": "gone", "utime": 9, "stime": 9}}
        after = {100: {"name": "ofu", "utime": 80, "stime": 170},
                 101: {"name": "ofu-http", "utime": 5, "stime": 7},
                 103: {"name": "ofu-store", "utime": 3, "stime": 1}}
        rows = agent_cost.thread_cpu(before, after, 10.0, 100)
        # 100: (30 + 150) ticks = 1.8 s of 10 s = 18 %; 103 started in between: 0.04 s = 0.4 %; 101: 0.02 s = 0.2 %;
        # 102 ended in between and is left out.
        self.assertEqual([r["tid"] for r in rows], [100, 103, 101])
        self.assertAlmostEqual(rows[0]["user_s"], 0.30)
        self.assertAlmostEqual(rows[0]["system_s"], 1.50)
        self.assertAlmostEqual(rows[0]["cpu_percent"], 18.0)
        self.assertEqual((rows[1]["name"], rows[1]["new"]), ("ofu-store", True))
        self.assertAlmostEqual(rows[1]["cpu_percent"], 0.4)
        self.assertAlmostEqual(rows[2]["cpu_percent"], 0.2)
        self.assertFalse(rows[2]["new"])

    def test_memory_fields(self):
        status = "Name:\tofu\nVmHWM:\t   34128 kB\nVmRSS:\t   30000 kB\n"
        rollup = "55d0-7ffd ---p 00000000 00:00 0 [rollup]\nRss:   30000 kB\nPss:   20480 kB\nPss_Anon: 9000 kB\n"
        self.assertEqual(agent_cost.kib_field(status, "VmHWM"), 34128)
        self.assertEqual(agent_cost.kib_field(rollup, "Pss"), 20480)  # not Pss_Anon
        self.assertIsNone(agent_cost.kib_field(status, "VmSwap"))

    # A SYNTHETIC /proc/PID/smaps in the kernel's layout: the agent binary,
    # the driver's NVML, libc (shared with other processes: PSS < RSS), the
    # store's shared-memory file, the heap, an anonymous region and the stack.
    SMAPS = "\n".join([
        "55d000000000-55d000200000 r-xp 00000000 08:01 1234   /opt/ofu/bin/ofu",
        "Rss:                2048 kB", "Pss:                2048 kB", "Private_Dirty:        16 kB",
        "7f0000000000-7f0000400000 r-xp 00000000 08:01 99     /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04",
        "Rss:                3000 kB", "Pss:                3000 kB", "Private_Dirty:       100 kB",
        "7f1000000000-7f1000100000 rw-s 00000000 00:05 7      /dev/nvidiactl",
        "Rss:                 512 kB", "Pss:                 512 kB",
        "7f2000000000-7f2000200000 r-xp 00000000 08:01 55     /usr/lib/x86_64-linux-gnu/libc.so.6",
        "Rss:                1400 kB", "Pss:                 400 kB", "Private_Dirty:        24 kB",
        "7f3000000000-7f3000008000 rw-s 00000000 08:01 77     /var/lib/ofu/history.sqlite-shm",
        "Rss:                  32 kB", "Pss:                  32 kB", "Private_Dirty:        32 kB",
        "55d000400000-55d000500000 rw-p 00000000 00:00 0      [heap]",
        "Rss:                 700 kB", "Pss:                 700 kB", "Private_Dirty:       700 kB",
        "7f4000000000-7f4000100000 rw-p 00000000 00:00 0 ",
        "Rss:                 300 kB", "Pss:                 300 kB", "Private_Dirty:       300 kB",
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0      [stack]",
        "Rss:                  24 kB", "Pss:                  24 kB", "Private_Dirty:        24 kB",
        "VmFlags: rd wr mr mw me gd ac", ""])

    def test_memory_breakdown(self):
        b = agent_cost.memory_breakdown(self.SMAPS, "/opt/ofu/bin/ofu")
        by = {c["category"]: c for c in b["categories"]}
        self.assertEqual(list(by), ["driver library", "device files", "ofu binary and plugins", "history store",
                                    "heap and anonymous", "stack", "other libraries"])
        self.assertEqual(by["driver library"]["rss_kib"], 3000)
        self.assertEqual(by["device files"]["rss_kib"], 512)
        self.assertEqual(by["ofu binary and plugins"]["private_dirty_kib"], 16)
        self.assertEqual(by["heap and anonymous"]["rss_kib"], 1000)  # [heap] 700 + anonymous 300
        self.assertEqual(by["other libraries"]["pss_kib"], 400)
        self.assertEqual(b["rss_kib"], 2048 + 3000 + 512 + 1400 + 32 + 700 + 300 + 24)
        self.assertEqual(b["mappings"][0]["path"], "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04")
        self.assertEqual(agent_cost.memory_breakdown("", "/x")["rss_kib"], 0)
        line = gpuval.agent_run_line({"label": "l", "cpu_percent": 1.0, "wall_s": 30, "max_rss_mib": 20,
                                      "vm_hwm_mib": 8.0, "exit_code": 0, "memory": b})
        self.assertIn("RSS by kind (MiB): driver library 2.9, device files 0.5, ofu binary and plugins 2.0, "
                      "heap and anonymous 1.0, other libraries 1.4", line)

    # A SYNTHETIC /metrics page of an agent that accounts for its calls, after 50 windows of 0.1 s on one GPU.
    METRICS_WITH_CALLS = "\n".join([
        "# TYPE ofu_source_calls counter",
        'ofu_source_calls_total{call="nvmlDeviceGetClockInfo"} 50',
        'ofu_source_calls_total{call="nvmlGpmMetricsGet"} 50',
        'ofu_source_calls_total{call="nvmlInit_v2"} 1',
        'ofu_source_calls_total{call="nvmlDeviceGetName"} 0',
        'ofu_source_call_seconds_total{call="nvmlGpmMetricsGet",kind="wall"} 0.071',
        'ofu_source_call_seconds_total{call="nvmlGpmMetricsGet",kind="cpu"} 0.065',
        'ofu_source_call_seconds_total{call="nvmlGpmMetricsGet",kind="system"} 0.06',
        'ofu_source_call_seconds_total{call="nvmlDeviceGetClockInfo",kind="wall"} 0.00002',
        'ofu_source_call_seconds_total{call="nvmlDeviceGetClockInfo",kind="cpu"} 0.00001',
        'ofu_observed_seconds_total{uuid="GPU-synthetic-0",gpu="0"} 5.0000001',
        'ofu_window_seconds{uuid="GPU-synthetic-0",gpu="0"} 0.1',
        "process_cpu_seconds_total 0.37",
        "process_resident_memory_bytes 1.4e+07", ""])

    def test_source_call_table(self):
        t = agent_cost.source_call_table(self.METRICS_WITH_CALLS)
        self.assertTrue(t["present"])
        self.assertEqual(t["windows"], 50)
        self.assertEqual([e["call"] for e in t["calls"]],
                         ["nvmlDeviceGetClockInfo", "nvmlGpmMetricsGet", "nvmlInit_v2", "nvmlDeviceGetName"])
        get = t["calls"][1]
        self.assertEqual(get["calls"], 50)
        self.assertAlmostEqual(get["per_window"], 1.0)
        self.assertEqual(get["seconds"], {"kind=wall": 0.071, "kind=cpu": 0.065, "kind=system": 0.06})
        self.assertAlmostEqual(t["calls"][2]["per_window"], 0.02)
        # 0.071 s / 50 calls = 1420 us a call of wall time, 0.065 s / 50 = 1300 us of CPU.
        self.assertAlmostEqual(gpuval._mean_call_us(get), 1420.0)
        self.assertAlmostEqual(gpuval._mean_call_us(get, "cpu"), 1300.0)
        self.assertIsNone(gpuval._mean_call_us(t["calls"][2]))  # counted, never timed
        self.assertEqual(agent_cost.process_metrics(self.METRICS_WITH_CALLS),
                         {"process_cpu_seconds_total": 0.37, "process_resident_memory_bytes": 1.4e7})
        # An agent before issue 29: no table, and the step says so.
        self.assertEqual(agent_cost.source_call_table('ofu_window_seconds{gpu="0"} 0.1\n'), {"present": False})

    def test_agent_run_line(self):
        run = agent_cost.cost_record("full 0.1 s", 22.0, 0.2, 1.2, 40960, 0)  # 1.4 s of 22 s: 6.36 %
        run.update({"window_s": 0.1, "config": "full",
                    "steady": {"wall_s": 20.0, "user_s": 0.1, "system_s": 1.1, "cpu_percent": 6.0},
                    "threads": agent_cost.thread_cpu({1: {"name": "ofu", "utime": 0, "stime": 0}},
                                                     {1: {"name": "ofu", "utime": 10, "stime": 100},
                                                      2: {"name": "ofu-store", "utime": 1, "stime": 0}}, 20.0, 100),
                    "vm_hwm_mib": 30.25, "pss_mib": 18.5,
                    "source_calls": agent_cost.source_call_table(self.METRICS_WITH_CALLS)})
        self.assertEqual(gpuval.agent_run_line(run),
                         "full 0.1 s: CPU 6.36 % of one core over 22 s, steady 6.00 % over 20 s (busiest threads: "
                         "ofu 5.50, ofu-store 0.05), peak RSS 30.2 MiB (VmHWM; wait4 40.0), PSS 18.5 MiB, exit 0, "
                         "calls (us each): nvmlGpmMetricsGet 1/window 1420.0 us (cpu 1300.0), "
                         "nvmlDeviceGetClockInfo 1/window 0.4 us (cpu 0.2), nvmlInit_v2 0.02/window")
        run["source_calls"] = {"present": False}
        self.assertTrue(gpuval.agent_run_line(run).endswith("exit 0, per-call table absent"))

    def test_probe_cost_lines_per_metric(self):
        ok = [{"id": 5, "rc": "SUCCESS (0)", "value": 50.0}]
        cost = {"gpm_metrics_get_each": [{"ids": [5], "p50": 0.32, "metrics": ok},
                                         {"ids": [170], "p50": 101.25, "metrics": [{"id": 170, "rc": "NOT_SUPPORTED (3)"}]}],
                "gpm_metrics_get_growing": [{"ids": [5], "p50": 0.4, "metrics": ok},
                                            {"ids": [5, 1], "p50": 150.0, "metrics": ok + [{"id": 1, "rc": "SUCCESS (0)"}]}]}
        lines = gpuval.probe_cost_lines(cost)
        self.assertIn("cost per GPM metric alone (p50 us; ! its own return failed): 5 0.3, 170 101.2!", lines)
        self.assertIn("cost of growing sets in the source's order (metrics: p50 us): 1: 0.4, 2: 150.0", lines)

    def test_probe_cost_lines(self):
        cost = {"sm_clock_read": {"mean": 1.0, "p99": 0.5}, "gpm_sample": {"mean": 54.4, "p99": 72.1},
                "gpm_metrics_get_14": {"mean": 1462.1, "p99": 2083.2},
                "gpm_metrics_get_12": {"mean": 1400.0, "p99": 2000.0},
                "gpm_metrics_get_1": {"mean": 200.0, "p99": 250.0},
                "power_usage": {"mean": 12.0, "p99": 14.0, "failed_with": "NOT_SUPPORTED (3)"},
                "total_energy": {"call": "nvmlDeviceGetTotalEnergyConsumption", "absent": True}}
        self.assertEqual(gpuval.probe_cost_lines(cost), [
            "cost: SM clock read 1.0 us (p99 0.5); GPM sample 54.4 us (p99 72.1); "
            "metrics get of 14 1462.1 us (p99 2083.2)",
            "cost: metrics get of 12 1400.0 us (p99 2000.0); of 1 200.0 us (p99 250.0); "
            "power 12.0 us (p99 14.0) [NOT_SUPPORTED (3)]; energy absent"])
        # The first run's file has the three first keys only: one line.
        self.assertEqual(len(gpuval.probe_cost_lines({"sm_clock_read": {"mean": 1.0, "p99": 0.5}})), 1)

    def test_stage_b_table(self):
        text = ("sweep,group,m,n,k,precision,layout,mfu,achieved_tflops,err_raw_pp,err_corrected_pp,err_exact_pp,note\n"
                "s,g,4096,4096,4096,bf16,tn,0.6,593.6,4,0.2,,\n"
                "s,g,4097,4097,4097,bf16,tn,0.5,494.7,6,-0.6,-0.5,\n"
                "s,g,8192,8192,8192,fp8,tn,0.7,1385.3,1,0.5,,\n"
                "s,g,512,512,512,fp4,tn,,,,,,skipped: no fp4 peak\n")
        table = {(r["sweep"], r["precision"]): r for r in gpuval.stage_b_table(gpuval.read_gemm_csv(text))}
        bf16 = table[("s", "bf16")]
        self.assertEqual((bf16["measured"], bf16["skipped"]), (2, 0))
        self.assertAlmostEqual(bf16["raw_mean"], 5.0)
        self.assertAlmostEqual(bf16["corrected_max"], 0.6)
        self.assertAlmostEqual(bf16["corrected_mean"], 0.4)
        self.assertAlmostEqual(bf16["exact_mean"], 0.5)
        self.assertAlmostEqual(bf16["mfu_median"], 0.55)
        self.assertEqual((table[("s", "fp4")]["measured"], table[("s", "fp4")]["skipped"]), (0, 1))


class RecordingWithPhasesTest(unittest.TestCase):
    def test_phases_go_before_eof_with_their_mfu_and_peak(self):
        rec = recording([(1001, 0.5, 1800), (1002, 0.5, 1800)])  # ends with "# EOF", as ofu record writes it
        phases = [{"phase": "bf16-8192", "kind": "gemm", "precision": "bf16", "t_start": 1000.5, "t_end": 1010.5,
                   "elapsed_s": 10, "flops": 1e15},  # 100 TFLOP/s of 200: MFU 0.5
                  {"phase": "fp8-8192", "error": "RuntimeError: no fp8"},
                  {"phase": "idle", "kind": "idle", "t_start": 1011, "t_end": 1012}]
        text = gpuval.recording_with_phases(rec, phases, gpuval_core.lookup_sku(SYNTHETIC_SPECS, "SYNTHETIC GPU 80GB"))
        self.assertTrue(text.endswith(
            "# TYPE ofu_recording_phase info\n"
            "# HELP ofu_recording_phase What ran from start to end (epoch s) and its true MFU (workload.py).\n"
            'ofu_recording_phase_info{phase="bf16-8192",kind="gemm",start="1000.5",end="1010.5",precision="bf16",'
            'mfu="0.5",peak_tflops="200.0"} 1 1000.5\n'
            'ofu_recording_phase_info{phase="idle",kind="idle",start="1011.0",end="1012.0",mfu="0.0"} 1 1011.0\n'
            "# EOF\n"), text[-600:])
        self.assertEqual(text.count("# EOF"), 1)

    def test_phase_report_fields(self):
        self.assertEqual(gpuval.phase_report_fields(json.dumps({"phases": [
            {"phase": "a", "ofu": 0.7, "mfu": 0.69, "clock_source": "measured-model"}]})),
            {"a": (0.7, 0.69, "measured-model")})
        self.assertEqual(gpuval.phase_report_fields(""), {})
        self.assertEqual(gpuval.phase_report_fields("not json"), {})


class CtxswVerdictTest(unittest.TestCase):
    """GPM 170 against the SMs' own clock and NVML's, per phase (SYNTHETIC rows and phases)."""

    @staticmethod
    def passes(gpm170_of, sm_clocks=(1600, 1300), nvml=1980):
        # Two busy phases of 10 s at the SMs' clocks given, an idle one; 1 s probe rows, NVML reading `nvml`.
        phases, rows = [], []
        for i, sm in enumerate(sm_clocks):
            t0 = 1000 + 20 * i
            phases.append({"phase": f"p{i}", "kind": "gemm", "t_start": t0, "t_end": t0 + 10,
                           "sm_clock": {"median_mhz": sm} if sm else {"absent": "no clock probe"}})
            rows += [{"t_start": t0 + k, "t_end": t0 + k + 1, "dt_s": 1.0, "clock_mean_mhz": nvml,
                      "gpm170_ctxsw_cycles_elapsed": gpm170_of(sm, nvml)} for k in range(10)]
        phases.append({"phase": "idle", "kind": "idle", "t_start": 2000, "t_end": 2005})
        rows += [{"t_start": 2000 + k, "t_end": 2001 + k, "dt_s": 1.0, "clock_mean_mhz": nvml,
                  "gpm170_ctxsw_cycles_elapsed": 0.0} for k in range(5)]
        return {"1s": {"phases": phases, "probe": rows}}

    def test_equal_to_the_sms_clock(self):
        v = gpuval.ctxsw_verdict(self.passes(lambda sm, nvml: sm * 1e6))
        self.assertEqual(v["verdict"], "equal")
        self.assertEqual(v["text"], "equal to the SMs' clock (over 2 phases: 170/dt over the SMs' clock 1 to 1)")
        self.assertEqual([r["phase"] for r in v["phases"]], ["p0", "p1", "idle"])
        self.assertAlmostEqual(v["phases"][0]["gpm170_mhz"], 1600)

    def test_a_fixed_multiple(self):
        v = gpuval.ctxsw_verdict(self.passes(lambda sm, nvml: 8 * sm * 1e6))
        self.assertEqual(v["verdict"], "multiple")
        self.assertTrue(v["text"].startswith("a fixed multiple, 8 x the SMs' clock"), v["text"])

    def test_following_nvmls_reading_is_not_the_sms_clock(self):
        # 170 tracks NVML's 1980 while the SMs ran 1600 and 1300: ratios 1.2375 (printed 1.238) and 1.523.
        v = gpuval.ctxsw_verdict(self.passes(lambda sm, nvml: nvml * 1e6))
        self.assertEqual(v["verdict"], "unrelated")
        self.assertIn("1.238 to 1.523", v["text"])
        self.assertIn("it follows NVML's reported clock instead", v["text"])

    def test_undecided_without_the_sms_clock(self):
        v = gpuval.ctxsw_verdict(self.passes(lambda sm, nvml: nvml * 1e6, sm_clocks=(None, None)))
        self.assertIsNone(v["verdict"])
        self.assertEqual(v["text"], "undecided: no phase with work, GPM 170 above 0 and the SMs' own clock; "
                                    "170/dt over NVML's clock 1 to 1")

    def test_undecided_without_readings(self):
        v = gpuval.ctxsw_verdict({"1s": {"phases": [{"phase": "p", "t_start": 0, "t_end": 5}], "probe": []}})
        self.assertIsNone(v["verdict"])
        self.assertIn("no phase with GPM 170 readings", v["text"])


class StageSummaryTest(unittest.TestCase):
    """A whole work folder as the stages leave it, made up (SYNTHETIC)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.work = self.tmp.name
        self.spec_db = self.write("specs.json", json.dumps(SYNTHETIC_SPECS))
        self.write("env.json", json.dumps({"gpu": "SYNTHETIC GPU 80GB", "driver": "0.0-synthetic", "cuda": "13.0",
                                           "torch": "none", "synthetic": True}))
        self.write("steps.tsv", "ofu-sources\texpected\t5\t0.1\t\nworkload-1s\tok\t0\t12.0\t\n"
                                "sweep-llm\ttimeout\t124\t140.0\tcut\n")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.work, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_stage_a(self):
        self.write("probe-info.json", json.dumps({"test_double": True, "devices": [{"sm_count": 100}]}))
        self.write("pass-1s/report-phases.json", json.dumps({"phases": [
            {"phase": "bf16-8192", "ofu": 0.512, "mfu": 0.5, "clock_source": "measured-model"}]}))
        # bf16 phase [1000, 1010] at 100 TFLOP/s of 200: MFU 0.5 over any span.
        # The clock probe saw the SMs at 1600 MHz (1590-1610) where NVML said 1800 (below).
        phase = {"phase": "bf16-8192", "kind": "gemm", "precision": "bf16", "t_start": 1000, "t_end": 1010,
                 "elapsed_s": 10, "flops": 1e15, "checkpoints": [[1000, 0], [1010, 1e15]],
                 "sm_clock": {"median_mhz": 1600, "min_mhz": 1590, "max_mhz": 1610, "sms": 100, "span_s": 10}}
        self.write("pass-1s/phases.jsonl", json.dumps({"meta": {"device_name": "SYNTHETIC GPU 80GB"}}) + "\n" +
                   json.dumps(phase) + "\n" + json.dumps({"phase": "fp8-8192", "error": "RuntimeError: no fp8"}) +
                   "\n" + '{"phase": "cut sho')
        # ofu record: tensor 0.55 at 1800 MHz inside (OFU 0.495); a busy window after the phase is left out.
        self.write("pass-1s/rec.om", recording([(t, 0.55, 1800) for t in range(1001, 1011)] + [(1011, 0.9, 1800)]))
        # The probe: GPM 5 = 55 % (raw OFU 0.495); 248 summed over 100 SMs at 1800 MHz; 250 = 0.56 x 248
        # (exact OFU 0.56 x 1800 / 2000 = 0.504). 0.1 s windows at idle tell a count from a rate.
        self.write("pass-1s/probe.csv", PROBE_HEADER + "".join(
            probe_row(t, 1.0, 55, 1.8e11, 0.56 * 1.8e11, 1800) for t in range(1001, 1011)))
        self.write("probe-idle-0.1s.csv", PROBE_HEADER + "".join(
            probe_row(900 + i / 10, 0.1, 0, 1.8e10, 0, 1800) for i in range(1, 6)))
        self.write("probe-metrics.json", json.dumps({"supported": [{"id": i} for i in (1, 2, 3, 5, 248, 250)]}))
        self.write("probe-cost.json", json.dumps({"sm_clock_read": {"mean": 9.5, "p99": 20.1},
                                                  "gpm_sample": {"mean": 300.25, "p99": 410.0}}))
        self.write("sources.txt", "nvml    available   nvml (SYNTHETIC)\ndcgm    unavailable   none\n")
        text = gpuval.summarize("A", self.work, self.spec_db)
        self.assertTrue(text.startswith("SYNTHETIC INPUT"), text)
        self.assertIn("spec: synthetic-gpu (100 SMs, f_spec 2000 MHz)", text)
        self.assertIn("GPM metrics answered: 6 ids (1-3,5,248,250); 5:yes 248:yes 249:no 250:yes", text)
        self.assertIn("GPM 248: count summed over SMs (15 of 15 windows", text)
        self.assertIn("GPM 250: (250/248)/(util5/100) median 1.02 over 10 busy windows: same basis as 248", text)
        self.assertIn("cost: SM clock read 9.5 us (p99 20.1); GPM sample 300.2 us (p99 410.0)", text)
        # With the SMs' clock: 0.55 x 1600 / 2000 = 0.44, -6.0 pp against MFU 0.5.
        # ofu's own figure (`ofu report` on the recording with the phases, report-phases.json): 51.2 % against
        # MFU 50 %, +1.2 pp.
        self.assertIn("1s    bf16-8192         10.0   50.0 |   49.5   -0.5 |   49.5   -0.5 |   50.4   +0.4 |  1800  1600 |"
                      "   44.0   -6.0 |   51.2   +1.2\n", text)
        # NVML 1800 / SMs 1600 = 1.125.
        self.assertIn("SMs' clock (ofu's clock probe): 1 of 1 phases measured; NVML / SMs 1.125 to 1.125 "
                      "(median 1.125)", text)
        self.assertIn("1s    fp8-8192         failed: RuntimeError: no fp8", text)
        # The probe rows here carry no GPM 170 (as a driver that refuses it).
        self.assertIn("GPM 170: undecided: no phase with GPM 170 readings (refused, or no probe log)", text)
        self.assertIn("not ok: sweep-llm (timeout, rc 124)", text)
        with open(os.path.join(self.work, "stage-a-phases.csv"), encoding="utf-8") as f:
            rows = list(gpuval.csv.DictReader(f))
        self.assertEqual(rows[0]["windows_rec"], "10")
        self.assertAlmostEqual(float(rows[0]["err_exact_pp"]), 0.4)
        self.assertAlmostEqual(float(rows[0]["mfu_exact"]), 0.5)
        self.assertAlmostEqual(float(rows[0]["clock_nvml"]), 1800)
        self.assertAlmostEqual(float(rows[0]["sm_clock_run"]), 1600)
        self.assertEqual((rows[0]["sm_clock_min"], rows[0]["sm_clock_max"]), ("1590", "1610"))
        self.assertAlmostEqual(float(rows[0]["nvml_over_run"]), 1.125)
        self.assertAlmostEqual(float(rows[0]["ofu_run"]), 0.44)
        self.assertAlmostEqual(float(rows[0]["err_run_pp"]), -6.0)
        self.assertEqual((rows[0]["ofu_report"], rows[0]["ofu_report_clock"]), ("0.512", "measured-model"))
        self.assertAlmostEqual(float(rows[0]["err_report_pp"]), 1.2)

    def test_stage_a_without_the_clock_probe(self):
        phase = {"phase": "bf16-8192", "kind": "gemm", "precision": "bf16", "t_start": 1000, "t_end": 1010,
                 "elapsed_s": 10, "flops": 1e15, "checkpoints": [[1000, 0], [1010, 1e15]],
                 "sm_clock": {"absent": "no clock probe"}}
        meta = {"device_name": "SYNTHETIC GPU 80GB", "clock_probe": "absent: GPUVAL_CLOCK_PROBE is not set"}
        self.write("pass-1s/phases.jsonl", json.dumps({"meta": meta}) + "\n" + json.dumps(phase) + "\n")
        self.write("pass-1s/rec.om", recording([(t, 0.55, 1800) for t in range(1001, 1011)]))
        text = gpuval.summarize("A", self.work, self.spec_db)
        # NVML's clock is still shown; the SMs' is '-', and the summary says why.
        self.assertIn("|  1800     - |      -      - |      -      -\n", text)
        self.assertIn("SMs' clock (ofu's clock probe): not measured (absent: GPUVAL_CLOCK_PROBE is not set)", text)
        with open(os.path.join(self.work, "stage-a-phases.csv"), encoding="utf-8") as f:
            row = next(gpuval.csv.DictReader(f))
        self.assertEqual((row["clock_nvml"], row["sm_clock_run"], row["ofu_run"], row["sm_clock_why"]),
                         ("1800.0", "", "", "no clock probe"))

    def test_stage_c(self):
        phase = {"phase": "bf16-4097x1000x8191", "kind": "gemm", "precision": "bf16", "m": 4097, "n": 1000,
                 "k": 8191, "t_start": 2000, "t_end": 2004, "elapsed_s": 4, "flops": 3.6e14,
                 "checkpoints": [[2000, 0], [2004, 3.6e14]]}  # 90 TFLOP/s: MFU 0.45
        self.write("ragged/phases.jsonl", json.dumps({"meta": {"device_name": "SYNTHETIC GPU"}}) + "\n" +
                   json.dumps(phase) + "\n")  # no "sm_clock": a workload older than the clock probe
        self.write("ragged/rec.om", recording([(2000 + t / 2, 0.5, 2000) for t in range(1, 9)]))  # OFU 0.5
        self.write("ragged/correct-bf16-4097x1000x8191-swapped.json", json.dumps({"factor": 0.9}))
        self.write("ragged/correct-bf16-4097x1000x8191-direct.json", json.dumps({"factor": 0.8}))
        train = {"phase": "train-steady", "kind": "train", "precision": "bf16", "t_start": 3000, "t_end": 3010,
                 "elapsed_s": 10, "steps": 100, "tokens_per_step": 16384, "flops": 8e14, "hardware_flops": 8.8e14,
                 "checkpoints": [[3000, 0], [3010, 8e14]],  # MFU 0.4, HFU 0.44
                 "sm_clock": {"median_mhz": 1700, "min_mhz": 1700, "max_mhz": 1700, "sms": 100, "span_s": 10}}
        self.write("train/phases.jsonl", json.dumps(train) + "\n")
        self.write("train/rec.om", recording([(t, 0.5, 1800) for t in range(3001, 3011)]))  # OFU 0.45
        self.write("train/correct.json", json.dumps({"factor": 0.9, "mfu_scale": 1.0}))
        self.write("agent/agent-cost.json", json.dumps({"runs": [agent_cost.cost_record("with store", 60, 0.3, 0.12,
                                                                                        14336, 0)]}))
        text = gpuval.summarize("C", self.work, self.spec_db)
        self.assertIn("4097x1000x8191       45.0   50.0 |    45.0   +0.0 |    40.0   -5.0 |  2000     - |      -      -\n",
                      text)
        self.assertIn("nvjet tile orientation: swapped (mean |error| swapped 0.00 pp, direct 5.00 pp over 1 shapes)",
                      text)
        # corrected 0.45 x 0.9 = 0.405 against MFU 0.4: +0.5 pp.
        self.assertIn("training step train-steady: MFU 40.0 % (HFU 44.0 %), OFU 45.0 %, factor 0.9, corrected 40.5 % "
                      "(+0.5 pp), predicted MFU 40.5 % (+0.5 pp)", text)
        self.assertIn("\n  with store: CPU 0.70 % of one core over 60 s", text)
        # The SMs at 1700 MHz where NVML said 1800: 0.5 x 1700 / 2000 = 0.425, +2.5 pp against MFU 0.4.
        self.assertIn("\n  clock: NVML 1800 MHz, SMs 1700 MHz; OFU with the SMs' clock 42.5 % (+2.5 pp)\n", text)
        # 1800 / 1700 = 1.0588
        self.assertIn("SMs' clock (ofu's clock probe): 1 of 2 phases measured; NVML / SMs 1.059 to 1.059 "
                      "(median 1.059)", text)
        with open(os.path.join(self.work, "stage-c-ragged.csv"), encoding="utf-8") as f:
            row = next(gpuval.csv.DictReader(f))
        self.assertEqual((row["clock_nvml"], row["sm_clock_run"], row["sm_clock_why"]), ("2000.0", "", "not recorded"))

    def test_phase_ofu_command(self):
        phase = {"phase": "train-steady", "t_start": 3000, "t_end": 3010}
        phases = self.write("p.jsonl", json.dumps({"meta": {"device_name": "SYNTHETIC GPU"}}) + "\n" +
                            json.dumps(phase) + "\n")
        rec = self.write("r.om", recording([(t, 0.5, 1800) for t in range(3001, 3011)]))
        out = os.path.join(self.work, "out.txt")
        stdout = sys.stdout
        with open(out, "w") as f:
            sys.stdout = f
            try:
                rc = gpuval.main(["phase-ofu", "--recording", rec, "--phases", phases, "--phase", "train-steady",
                                  "--window", "1", "--spec-db", self.spec_db])
            finally:
                sys.stdout = stdout
        self.assertEqual(rc, 0)
        with open(out) as f:
            self.assertEqual(f.read().strip(), "0.450000")


if __name__ == "__main__":
    unittest.main()
