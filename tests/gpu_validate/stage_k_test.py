#!/usr/bin/env python3
"""Stage K (scripts/gpu-validate/stage_k.py, kernels_workload.py, the stage K
parts of explain_train.py and scripts/fit_kernel_throughput.py) on SYNTHETIC
inputs made up here with hand-computed answers: ncu's raw CSV, the metric
selection from --query-metrics, FLOPs per case, kernels split into cases at
the sentinel, relative throughput, the training step's family split and
the candidate rows. Needs no GPU, ncu or torch.

The ncu CSV below is SYNTHETIC: made-up kernels and values in the layout of
`ncu --import R --page raw --csv` (a header row "ID","Process ID",
"Process Name","Host Name","Kernel Name","Context","Stream","Block Size",
"Grid Size","Device","CC" then one column per metric, a units row empty
under the fixed columns, one row per kernel, numbers with thousands
separators) as public ncu-CSV parsers take it: e.g. the raw-page fixtures
of the parsers found with the code search "\\"Device\\",\\"CC\\",\\"dram__bytes_read.sum\\""
and `ncu --page raw --csv` in the Nsight Compute CLI documentation
(docs.nvidia.com/nsight-compute/NsightComputeCli, options --page, --csv,
--print-units)."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu-validate"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import explain_train  # noqa: E402
import fit_kernel_throughput  # noqa: E402
import gpuval  # noqa: E402
import gpuval_core  # noqa: E402
import kernels_workload  # noqa: E402
import stage_k  # noqa: E402
# The made-up GPU of gpuval_test: F_p = 1000 FLOPs per clock per SM in bf16, 2000 in fp8.
from gpuval_test import SKU, SYNTHETIC_SPECS  # noqa: E402,F401

FIXED = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"'
METRICS = ["gpc__cycles_elapsed.avg.per_second", "gpu__time_duration.sum", "sm__cycles_elapsed.max",
           "sm__cycles_elapsed.sum", "sm__pipe_tensor_cycles_active.sum", "sm__pipe_tensor_op_gmma_cycles_active.sum",
           "sm__pipe_tensor_op_hmma_cycles_active.sum"]
UNITS = ["hz", "nsecond", "cycle", "cycle", "cycle", "cycle", "cycle"]
SPIN = "at::cuda::(anonymous namespace)::spin_kernel(long)"
NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
CUTLASS75 = "cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_32x2_nn_align1"


def raw_csv(kernels, units=UNITS, preamble="==PROF== Connected to process 4242 (/usr/bin/python3)\n"):
    """SYNTHETIC ncu raw-page CSV: kernels as (id, name, values...)."""
    lines = [FIXED + "," + ",".join(f'"{m}"' for m in METRICS)]
    lines.append(",".join(['""'] * 11 + [f'"{u}"' for u in units]))
    for kid, name, *values in kernels:
        lines.append(f'"{kid}","4242","python3","synthetic-host","{name}","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0",'
                     + ",".join(f'"{v}"' for v in values))
    return preamble + "\n".join(lines) + "\n"


class NcuCsvTest(unittest.TestCase):
    def test_raw_page_with_units_row_and_separators(self):
        text = raw_csv([("0", SPIN, "1,500,000,000", "1,000", "1,500", "150,000", "0", "0", "0"),
                        ("1", NVJET, "1,500,000,000", "2,000,000", "3,000,000", "396,000,000", "300,000,000",
                         "299,000,000", "1,000,000")])
        rows = stage_k.parse_ncu_raw_csv(text)
        self.assertEqual([r["id"] for r in rows], ["0", "1"])
        self.assertEqual(rows[1]["kernel"], NVJET)
        self.assertEqual(rows[1]["grid"], "(132, 1, 1)")
        m = rows[1]["metrics"]
        self.assertEqual(m["sm__pipe_tensor_cycles_active.sum"], 300e6)
        self.assertAlmostEqual(m["gpu__time_duration.sum"], 2e-3)  # 2,000,000 ns
        self.assertEqual(m["gpc__cycles_elapsed.avg.per_second"], 1.5e9)

    def test_scaled_units_and_missing_values(self):
        units = ["Ghz", "msecond", "Kcycle", "Mcycle", "Mcycle", "Mcycle", "Mcycle"]
        rows = stage_k.parse_ncu_raw_csv(raw_csv([("3", NVJET, "1.98", "2.5", "3,000", "396", "n/a", "", "1.5")],
                                                 units=units))
        m = rows[0]["metrics"]
        self.assertAlmostEqual(m["gpc__cycles_elapsed.avg.per_second"], 1.98e9)
        self.assertAlmostEqual(m["gpu__time_duration.sum"], 2.5e-3)
        self.assertEqual(m["sm__cycles_elapsed.max"], 3e6)
        self.assertIsNone(m["sm__pipe_tensor_cycles_active.sum"])  # n/a: absent, not 0
        self.assertIsNone(m["sm__pipe_tensor_op_gmma_cycles_active.sum"])
        self.assertEqual(m["sm__pipe_tensor_op_hmma_cycles_active.sum"], 1.5e6)
        # Without the all-pipe counter, the per-pipe ones it has.
        self.assertEqual(stage_k.tensor_cycles(m), 1.5e6)

    def test_errors_name_the_line(self):
        with self.assertRaisesRegex(stage_k.NcuCsvError, "no header row"):
            stage_k.parse_ncu_raw_csv("==ERROR== the profiler could not start\n", "raw.csv")
        text = raw_csv([("0", NVJET, "1", "2", "3", "4", "5", "6", "7")])
        cut = text.rsplit(",", 3)[0] + "\n"
        with self.assertRaisesRegex(stage_k.NcuCsvError, r"raw.csv: line 4: 15 fields, the header has 18"):
            stage_k.parse_ncu_raw_csv(cut, "raw.csv")
        # ncu's messages between rows are skipped; the line numbers stay the file's.
        lines = cut.splitlines()
        warned = "\n".join(lines[:3] + ["==WARNING== SYNTHETIC: a message between the rows"] + lines[3:]) + "\n"
        with self.assertRaisesRegex(stage_k.NcuCsvError, r"raw.csv: line 5: 15 fields"):
            stage_k.parse_ncu_raw_csv(warned, "raw.csv")
        self.assertEqual(len(stage_k.parse_ncu_raw_csv(warned.replace(lines[3], text.splitlines()[3]))), 1)

    def test_units(self):
        self.assertEqual(stage_k.to_base_unit(2.0, "usecond"), (2e-6, "second"))
        self.assertEqual(stage_k.to_base_unit(3.0, "Kinst"), (3000.0, "inst"))
        self.assertEqual(stage_k.to_base_unit(5.0, "cycle/nsecond"), (5e9, "cycle/second"))
        self.assertEqual(stage_k.to_base_unit(40.0, "%"), (40.0, "%"))
        self.assertIsNone(gpuval_core.parse_number("n/a"))


class MetricSelectionTest(unittest.TestCase):
    QUERY = """Device NVIDIA SYNTHETIC (GH100)
----------------------------------------------- -------------------------------------------
Metric Name                                     Metric Description
----------------------------------------------- -------------------------------------------
gpc__cycles_elapsed                             # of cycles elapsed on GPC
gpu__time_duration                              total duration in nanoseconds
sm__cycles_elapsed                              # of cycles elapsed
sm__pipe_tensor_cycles_active                   # of cycles where tensor pipe was active
sm__pipe_tensor_op_hmma_cycles_active           # of cycles where HMMA tensor pipe was active
"""

    def test_keeps_what_the_query_lists(self):
        selected, missing, checked = stage_k.select_metrics(self.QUERY)
        self.assertTrue(checked)
        self.assertIn("sm__pipe_tensor_op_hmma_cycles_active.sum", selected)
        self.assertIn("sm__cycles_elapsed.max", selected)
        self.assertIn("gpc__cycles_elapsed.avg.per_second", selected)
        self.assertIn("sm__pipe_tensor_op_gmma_cycles_active.sum", missing)
        self.assertIn("smsp__cycles_active.avg", missing)
        self.assertEqual(len(selected) + len(missing), len(stage_k.WANTED))
        self.assertNotIn("Metric", stage_k.query_metric_names(self.QUERY))

    def test_unreadable_query_selects_all_unchecked(self):
        self.assertEqual(stage_k.select_metrics(""), (list(stage_k.WANTED), [], False))


class CasesTest(unittest.TestCase):
    def test_gemm_flops_and_alignments(self):
        cases = {c["case"]: c for c in kernels_workload.plan("gemm")}
        self.assertEqual(len(cases), 20)  # 5 precisions x aligned, n+1, n+2, n+4
        self.assertEqual(cases["gemm-bf16-aligned"]["flops"], 2 * 8192 ** 3)
        self.assertEqual(cases["gemm-int8-n+1"]["n"], 8193)
        self.assertEqual(cases["gemm-fp8-n+4"]["flops"], 2 * 8192 * 8196 * 8192)

    def test_attention_flops(self):
        cases = {c["case"]: c for c in kernels_workload.plan("sdpa")}
        self.assertEqual(sorted(cases), ["sdpa-cudnn-bwd", "sdpa-cudnn-fwd", "sdpa-efficient-bwd",
                                         "sdpa-efficient-fwd", "sdpa-flash-bwd", "sdpa-flash-fwd"])
        # 4 x b 8 x h 16 x 2048 x 2048 x d 128 = 2^38; backward 2.5 x.
        self.assertEqual(cases["sdpa-flash-fwd"]["flops"], 2 ** 38)
        self.assertEqual(cases["sdpa-cudnn-bwd"]["flops"], 5 * 2 ** 37)
        self.assertEqual(kernels_workload.attention_forward_flops(1, 1, 4, 4, 2, causal=True), 64)

    def test_training_step_has_no_per_kernel_flops(self):
        (case,) = kernels_workload.plan("train")
        self.assertIsNone(case["flops"])
        self.assertEqual(case["config"]["layers"], 2)
        self.assertEqual(case["config"]["d_model"], 2048)


class WorkloadOrderTest(unittest.TestCase):
    """kernels_workload.py run with a stand-in for torch (unittest.mock; no
    GPU): each case is warmed up with the profiler stopped, then profiled as
    start, the sentinel, one call, stop; each case is logged in order."""

    def test_each_case_between_start_and_stop(self):
        from unittest import mock
        torch = mock.MagicMock(name="torch")
        calls = []
        torch.cuda.profiler.start.side_effect = lambda: calls.append("start")
        torch.cuda.profiler.stop.side_effect = lambda: calls.append("stop")
        torch.cuda._sleep.side_effect = lambda cycles: calls.append("sentinel")
        torch.mm.side_effect = lambda a, b: calls.append("mm")
        torch._int_mm.side_effect = lambda a, b: calls.append("int_mm")
        modules = {"torch": torch, "torch.nn": torch.nn, "torch.nn.attention": torch.nn.attention}
        with tempfile.TemporaryDirectory() as d, mock.patch.dict(sys.modules, modules), \
                mock.patch.object(kernels_workload.workload, "meta", lambda t: {"meta": {"device_name": "MOCK"}}):
            out = os.path.join(d, "cases.jsonl")
            kernels_workload.main(["run", "--group", "gemm", "--out", out, "--warmups", "1"])
            records = [json.loads(line) for line in open(out)]
        self.assertEqual(records[0], {"meta": {"device_name": "MOCK"}})
        self.assertEqual([r["case"] for r in records[1:]], [c["case"] for c in kernels_workload.plan("gemm")])
        self.assertTrue(all(r["sentinel"] and "error" not in r for r in records[1:]))
        # bf16 aligned first: a warm-up call, then start, sentinel, the call, stop.
        self.assertEqual(calls[:5], ["mm", "start", "sentinel", "mm", "stop"])
        self.assertEqual(calls.count("start"), 20)
        self.assertEqual(calls[-5:], ["int_mm", "start", "sentinel", "int_mm", "stop"])


def gemm_case(name, n, flops, precision="bf16"):
    return {"case": name, "group": "gemm", "kind": "gemm", "precision": precision, "m": 100, "n": n, "k": 100,
            "flops": flops}


def kernel(kid, name, tensor, elapsed_sum=None, **more):
    metrics = {"sm__pipe_tensor_cycles_active.sum": tensor, "sm__cycles_elapsed.sum": elapsed_sum,
               "gpc__cycles_elapsed.avg.per_second": 1.5e9}
    metrics.update(more)
    return {"id": str(kid), "kernel": name, "block": "(128, 1, 1)", "grid": "(10, 1, 1)", "device": "0", "cc": "9.0",
            "metrics": metrics}


class KernelRowsTest(unittest.TestCase):
    def setUp(self):
        self.cases = [gemm_case("gemm-bf16-aligned", 100, 2_000_000),
                      gemm_case("gemm-fp8-n+1", 101, 2_020_000, precision="fp8") | {"error": "RuntimeError: refused"},
                      gemm_case("gemm-bf16-n+1", 101, 2_020_000)]
        self.kernels = [kernel(0, "stray_kernel_before_the_first_case", 0),
                        kernel(1, SPIN, 0), kernel(2, NVJET, 2500, elapsed_sum=5000),
                        kernel(3, SPIN, 0), kernel(4, CUTLASS75, 5050, elapsed_sum=10100),
                        kernel(5, "splitKreduce_kernel", 0, elapsed_sum=100)]

    def test_sentinels_split_cases_and_skip_the_failed_one(self):
        pairs = stage_k.assign_cases(self.kernels, self.cases)
        self.assertEqual([(c and c["case"], k["id"]) for c, k in pairs],
                         [(None, "0"), ("gemm-bf16-aligned", "2"), ("gemm-bf16-n+1", "4"), ("gemm-bf16-n+1", "5")])

    def test_relative_throughput(self):
        rows = {r["ncu_id"]: r for r in stage_k.kernel_rows([(self.cases, self.kernels)], SKU)}
        # 2e6 FLOPs / (2500 cycles x 1000 FLOPs per cycle per SM) = 0.8
        self.assertAlmostEqual(rows["2"]["rel_throughput"], 0.8)
        self.assertAlmostEqual(rows["2"]["tensor_active_frac"], 0.5)
        self.assertEqual(rows["2"]["sm_clock_mhz"], 1500)
        # 2.02e6 / (5050 x 1000) = 0.4, half the aligned kernel's
        self.assertAlmostEqual(rows["4"]["rel_throughput"], 0.4)
        self.assertAlmostEqual(rows["4"]["rel_to_aligned"], 0.5)
        # The reduction does none of the case's matmuls: no FLOPs, no rate.
        self.assertIsNone(rows["5"]["flops"])
        self.assertIsNone(rows["5"]["rel_throughput"])
        self.assertEqual(rows["0"]["case"], "unassigned")
        self.assertIsNone(stage_k.relative_throughput(2e6, None, 1000))
        self.assertIsNone(stage_k.relative_throughput(2e6, 100, None))

    def test_candidates_for_the_throughput_table(self):
        rows = stage_k.kernel_rows([(self.cases, self.kernels)], SKU)
        (cand,) = fit_kernel_throughput.stage_k_candidates(rows, "hopper", "SYNTHETIC GPU")
        self.assertEqual((cand["kernel_sm"], cand["mma_shape"], cand["label"]), (75, "1688", "sm75 s1688 16-bit"))
        self.assertEqual(cand["relative_throughput"], 0.5)
        self.assertEqual(cand["cases"], ["stage K gemm-bf16-n+1"])
        self.assertTrue(cand["candidate"])
        self.assertEqual(fit_kernel_throughput.stage_k_family("ampere_bf16_s16816gemm_bf16_128x128_ldg8_nn", "bf16"),
                         (80, "16816", "16-bit"))
        self.assertIsNone(fit_kernel_throughput.stage_k_family(NVJET, "bf16"))


REPO = os.path.join(HERE, "..", "..")
H200_CSV = "docs/results/2026-11-27-h200/stage-K/stage-k-kernels.csv"  # real: ncu on an H200, 2026-11-27


class RealStageKCsvTest(unittest.TestCase):
    """The first real stage K CSV (committed with the H200 run's results) and
    data/kernel_throughput.json's Nsight Compute rows, checked against it by
    fit_kernel_throughput.py --check."""

    def setUp(self):
        self.rows = fit_kernel_throughput.read_stage_k_csv(os.path.join(REPO, H200_CSV))
        with open(os.path.join(REPO, "data", "kernel_throughput.json")) as f:
            self.table = json.load(f)

    def test_candidates_from_the_h200_csv(self):
        cands = {fit_kernel_throughput.candidate_key(c): c
                 for c in fit_kernel_throughput.stage_k_candidates(self.rows, "hopper")}
        # By hand from the CSV's flops and tensor_cycles (F_p 4096 FLOPs per clock per SM, bf16/fp16):
        # aligned 1099511627776 / (1090519040 x 4096) = 0.246154; bf16 n+1 1099645845504 /
        # (2214592512 x 4096) = 0.121227 -> 0.492484; fp16 n+1 / (2181038080 x 4096) = 0.123092
        # -> 0.500061; mean 0.496.
        self.assertEqual(cands[(75, "1688", "16-bit")]["relative_throughput"], 0.496)
        self.assertEqual(cands[(75, "1688", "16-bit")]["cases"], ["stage K gemm-bf16-n+1", "stage K gemm-fp16-n+1"])
        # n+2 and n+4, bf16 and fp16: 1635778560 cycles each: 0.666829, 0.666992 (x2) -> 0.667.
        self.assertEqual(cands[(80, "16816", "16-bit")]["relative_throughput"], 0.667)
        # tf32 n+4 ran Hopper's own sm90_xmma kernel: not in the sm80 family.
        self.assertEqual(cands[(80, "1688", "tf32")]["cases"], ["stage K gemm-tf32-n+1", "stage K gemm-tf32-n+2"])
        # cuDNN's forward: 274877906944 / (268435456 x 4096) = 0.25, over 0.246154 = 1.015625.
        self.assertEqual(cands[("attention", "attention fwd (cuDNN SDPA)")]["relative_throughput"], 1.016)
        self.assertEqual(cands[("attention", "attention bwd (flash)")]["relative_throughput"], 0.677)
        self.assertEqual(len(cands), 9)

    def test_the_tables_ncu_rows_agree_with_it(self):
        self.assertEqual(fit_kernel_throughput.check_stage_k("t.json", self.table, REPO), [])
        keys = [key for _, key, _ in fit_kernel_throughput.ncu_rows(self.table)]
        self.assertEqual(len(keys), 9)
        self.assertIn((80, "16816", "16-bit"), keys)
        self.assertIn(("attention", "attention bwd (efficient)"), keys)

    def test_check_fails_on_a_row_that_differs(self):
        def problems(change):
            table = json.loads(json.dumps(self.table))
            change(table)
            return fit_kernel_throughput.check_stage_k("t.json", table, REPO)

        def by_family(table, kernel_sm, mma_shape):
            return next(e for e in table["figures"] if e["kernel_sm"] == kernel_sm and e["mma_shape"] == mma_shape)

        def set_figure(table):
            by_family(table, 80, "16816")["relative_throughput"] = 0.7

        (p,) = problems(set_figure)
        self.assertIn("figures[2]: (80, '16816', '16-bit') is 0.7", p)
        self.assertIn("gives 0.667", p)

        def drop_case(table):
            by_family(table, 75, "1688")["ncu_measurements"][0]["cases"].pop()

        (p,) = problems(drop_case)
        self.assertIn("figures[0].ncu_measurements[0]: cases", p)

        def drop_attention(table):
            table["attention_figures"] = [e for e in table["attention_figures"]
                                          if e["label"] != "attention fwd (flash)"]

        (p,) = problems(drop_attention)
        self.assertIn("no row for family ('attention', 'attention fwd (flash)')", p)

        def no_csv(table):
            by_family(table, 80, "16816")["stage_k_csv"] = "docs/results/none/stage-k-kernels.csv"

        self.assertTrue(any("does not exist" in p for p in problems(no_csv)))

        def twice(table):
            table["attention_figures"].append(dict(table["attention_figures"][0]))

        self.assertTrue(any("is also attention_figures[0]" in p for p in problems(twice)))


# A tiny made-up model: 2688 GEMM FLOPs a step (6 x (12 x 1 x 4^2 + 4 x 8) x 2
# tokens), attention forward 4 x 1 x 1 x 2 x 2 x 4 = 64, backward 160; model
# FLOPs 2688 + 3 x 64 = 2880.
TINY = {"layers": 1, "d_model": 4, "heads": 1, "vocab": 8, "seq_len": 2, "batch": 1, "causal": False}
FPROP = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0"
BPROP = "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x4x1_cga1x1x1_kernel0_0"


def train_row(name, tensor):
    return {"group": "train", "kernel": name, "tensor_cycles": tensor, "duration_us": 1.0,
            "native_flops_per_cycle_per_sm": 1.0}


class TrainingStepJoinTest(unittest.TestCase):
    ROWS = [train_row(NVJET, 1344), train_row(NVJET, 1344), train_row(FPROP, 128), train_row(BPROP, 200),
            train_row("cudnn::fusion::compute_dot_do_o", 84), train_row("vectorized_elementwise_kernel", 0)]

    def test_families(self):
        self.assertEqual(explain_train.join_family(FPROP), "attention fwd")
        self.assertEqual(explain_train.join_family("flash_fwd_kernel<Flash_fwd_kernel_traits>"), "attention fwd")
        self.assertEqual(explain_train.join_family("fmha_cutlassB_bf16_aligned_64x64_k128_sm80"), "attention bwd")
        self.assertEqual(explain_train.join_family(CUTLASS75), "GEMM")
        self.assertEqual(explain_train.step_family_flops(TINY), {"GEMM": 2688, "attention fwd": 64,
                                                                 "attention bwd": 160})

    def test_rates(self):
        rates = explain_train.family_rates(self.ROWS, TINY)
        self.assertEqual(rates["GEMM"]["kernels"], 2)
        self.assertEqual(rates["GEMM"]["rate"], 1.0)           # 2688 / 2688
        self.assertEqual(rates["attention fwd"]["rate"], 0.5)  # 64 / 128
        self.assertEqual(rates["attention bwd"]["rate"], 0.8)  # 160 / 200
        self.assertIsNone(rates["attention bwd helpers (cuDNN)"]["rate"])

    def test_gap_split(self):
        rates = explain_train.family_rates(self.ROWS, TINY)
        gap = explain_train.family_gap(rates, TINY, mfu=0.5, ofu=0.6, factor=0.9)
        # Work: GEMM 2688, fwd 128, bwd 200, helpers 84 (stage K's cycles,
        # scale 3016 / 3016 = 1): 3100 in all; OFU 60 pp split by it; HFU's
        # part is FLOPs x 50 / 2880 pp.
        self.assertAlmostEqual(gap["GEMM"]["ofu"], 60 * 2688 / 3100)
        self.assertAlmostEqual(gap["GEMM"]["hfu"], 2688 * 50 / 2880)
        self.assertAlmostEqual(gap["attention fwd"]["gap"], 60 * 128 / 3100 - 64 * 50 / 2880)
        self.assertAlmostEqual(gap["attention bwd"]["corrected_gap"], 0.9 * 60 * 200 / 3100 - 160 * 50 / 2880)
        self.assertAlmostEqual(gap["attention bwd helpers (cuDNN)"]["hfu"], 0.0)
        # The parts add up to OFU - HFU: 60 - (2688 + 64 + 160) x 50 / 2880.
        self.assertAlmostEqual(sum(g["gap"] for g in gap.values()), 60 - 2912 * 50 / 2880)
        self.assertAlmostEqual(sum(g["corrected_gap"] for g in gap.values()), 54 - 2912 * 50 / 2880)

    def test_family_flops_from_stage_cs_trace(self):
        """A SYNTHETIC one-step kineto trace: an aten::mm of [2, 4] x [4, 12]
        (2 x 2 x 12 x 4 = 192 FLOPs) and a cuDNN attention forward of
        [1, 1, 2, 4] (4 x 2 x 2 x 4 = 64), joined to their kernels by External
        id; the backward kernel gets 2.5 x 64 = 160."""
        events = [{"cat": "user_annotation", "name": "Optimizer.step#AdamW.step", "args": {}},
                  {"cat": "cpu_op", "name": "aten::mm", "args": {"External id": 1, "Input Dims": [[2, 4], [4, 12]]}},
                  {"cat": "cpu_op", "name": "aten::_cudnn_attention_forward",
                   "args": {"External id": 2, "Input Dims": [[1, 1, 2, 4]] * 3}},
                  {"cat": "kernel", "name": NVJET, "ts": 0, "dur": 10, "args": {"External id": 1}},
                  {"cat": "kernel", "name": FPROP, "ts": 10, "dur": 5, "args": {"External id": 2}},
                  {"cat": "kernel", "name": BPROP, "ts": 15, "dur": 7, "args": {"External id": 3}}]
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "stage-C", "train"))
            import gzip
            with gzip.open(os.path.join(d, "stage-C", "train", "trace.json.gz"), "wt") as f:
                json.dump({"traceEvents": events}, f)
            flops, times, ops = explain_train.trace_family_flops(d)
        self.assertEqual(flops, {"GEMM": 192, "attention fwd": 64, "attention bwd": 160})
        self.assertEqual(times, {"GEMM": 10, "attention fwd": 5, "attention bwd": 7})
        self.assertEqual(ops, 2)
        self.assertIsNone(explain_train.trace_family_flops(os.path.join(HERE, "no-such-results")))

    def test_lines_say_when_stage_k_is_absent(self):
        (line,) = explain_train.family_gap_lines(None, explain_train.DEFAULT_RESULTS)
        self.assertIn("stage K's CSV (stage-k-kernels.csv) is absent", line)

    def test_lines_against_a_made_up_stage_c(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "stage-C", "train"))
            with open(os.path.join(d, "stage-C", "train", "phases.jsonl"), "w") as f:
                f.write(json.dumps({"meta": {"device_name": "SYNTHETIC GPU"}}) + "\n")
                f.write(json.dumps({"phase": "train-steady", "config": TINY}) + "\n")
            with open(os.path.join(d, "stage-C", "stage-c-train.csv"), "w") as f:
                f.write("phase,mfu,hfu,ofu,factor,corrected\ntrain-steady,0.5,0.5055555555555555,0.6,0.9,0.54\n")
            lines = explain_train.family_gap_lines(self.ROWS, d, k_config=TINY)
        text = "\n".join(lines)
        self.assertIn("family FLOPs per step: analytic (stage C's trace not readable)", text)
        self.assertIn("OFU - HFU +9.44 pp, corrected - HFU +3.44 pp", text)
        self.assertRegex(text, r"corrected OFU - HFU is held by: .*\(sum \+3\.44 pp")


class StageSummaryTest(unittest.TestCase):
    def test_made_up_work_folder(self):
        with tempfile.TemporaryDirectory() as work:
            g = os.path.join(work, "kernels", "gemm")
            os.makedirs(g)
            cases = [gemm_case("gemm-bf16-aligned", 100, 2_000_000), gemm_case("gemm-bf16-n+1", 101, 2_020_000)]
            with open(os.path.join(g, "cases.jsonl"), "w") as f:
                f.write(json.dumps({"meta": {"device_name": "SYNTHETIC GPU 80GB"}}) + "\n")
                for c in cases:
                    f.write(json.dumps(dict(c, sentinel=True)) + "\n")
            with open(os.path.join(g, "raw.csv"), "w") as f:
                f.write(raw_csv([("0", SPIN, "1,500,000,000", "1,000", "1,500", "150,000", "0", "0", "0"),
                                 ("1", NVJET, "1,500,000,000", "2,000", "50", "5,000", "2,500", "2,500", "0"),
                                 ("2", SPIN, "1,500,000,000", "1,000", "1,500", "150,000", "0", "0", "0"),
                                 ("3", CUTLASS75, "1,500,000,000", "4,000", "101", "10,100", "5,050", "0", "5,050")]))
            with open(os.path.join(work, "env.json"), "w") as f:
                json.dump({"gpu": "SYNTHETIC GPU 80GB", "synthetic": True}, f)
            with open(os.path.join(work, "steps.tsv"), "w") as f:
                f.write("ncu-gemm\tok\t0\t12.0\t\n")
            text = stage_k.summarize(work, SYNTHETIC_SPECS)
            self.assertTrue(text.startswith("SYNTHETIC INPUT"))
            self.assertIn("SKU: synthetic-gpu", text)
            self.assertRegex(text, r"gemm-bf16-n\+1 +cutlass_75_tensorop_bf16_s1688gemm.* +50\.0 +0\.400 +0\.500 +1500")
            self.assertIn("candidate rows for data/kernel_throughput.json: 1", text)
            self.assertIn("sm75 s1688 16-bit: 0.500 over 1 case(s)", text)
            self.assertIn("stage K profiled no kernel of the training step", text)
            rows = gpuval_core.read_kernel_csv(os.path.join(work, "stage-k-kernels.csv"))
            self.assertEqual([r["ncu_id"] for r in rows], ["1", "3"])
            self.assertEqual(rows[1]["rel_to_aligned"], 0.5)
            with open(os.path.join(work, "stage-k-candidates.json")) as f:
                self.assertEqual(json.load(f)["candidates"][0]["relative_throughput"], 0.5)

    def test_ncu_absent(self):
        with tempfile.TemporaryDirectory() as work:
            with open(os.path.join(work, "steps.tsv"), "w") as f:
                f.write("plan\tok\t0\t1.0\t\nncu\tskipped\t-\t0\tncu absent: not on PATH\n")
            with open(os.path.join(work, "env.json"), "w") as f:
                json.dump({"gpu": "NVIDIA H200", "synthetic": True}, f)
            text = stage_k.summarize(work, gpuval_core.load_specs())
            self.assertIn("SKU: h200-sxm (from the device's name 'NVIDIA H200')", text)
            self.assertIn("ncu absent: skipped (not on PATH)", text)
            self.assertIn("kernels: none profiled (ncu absent)", text)
            self.assertIn("stage K's CSV (stage-k-kernels.csv) is absent", text)
            self.assertFalse(os.path.exists(os.path.join(work, "stage-k-kernels.csv")))


if __name__ == "__main__":
    unittest.main()
