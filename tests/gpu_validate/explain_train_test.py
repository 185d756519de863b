#!/usr/bin/env python3
"""scripts/gpu-validate/explain_train.py: its pure functions on SYNTHETIC
inputs made up here with hand-computed answers, then one run over the real
H100 results committed in docs/results/2026-11-26-h100-sxm5 (recorded data,
so the figures the README quotes are checked to come out of the script)."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu-validate"))
import explain_train as et  # noqa: E402

NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NTT"
FPROP = "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_cga1x1x1_kernel0_0"
BPROP = "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x128_1x4x1_cga1x1x1_kernel0_0"


def kernel(name, ts, dur, ext=None):
    return {"cat": "kernel", "name": name, "ts": ts, "dur": dur, "args": {"External id": ext}}


def op(name, ext, dims, concrete=None):
    args = {"External id": ext, "Input Dims": dims}
    if concrete is not None:
        args["Concrete Inputs"] = concrete
    return {"cat": "cpu_op", "name": name, "args": args}


class FamiliesTest(unittest.TestCase):
    def test_kernel_family_by_name(self):
        self.assertEqual(et.kernel_family(NVJET), "GEMM (nvjet)")
        self.assertEqual(et.kernel_family(FPROP), "attention fwd (cuDNN SDPA)")
        self.assertEqual(et.kernel_family(BPROP), "attention bwd (cuDNN SDPA)")
        self.assertEqual(et.kernel_family("void cudnn::fusion::convert_dq_to_16bits<true>(void const*)"),
                         "attention bwd helpers (cuDNN)")
        self.assertEqual(et.kernel_family("Memset (Device)"), "copies and casts")
        self.assertEqual(et.kernel_family("void at::native::vectorized_gather_kernel<16, long>()"), et.OTHER)

    def test_real_h200_gemm_kernels_are_gemms(self):
        # Every kernel that stage K profiled for a GEMM case on the H200
        # (docs/results/2026-11-27-h200, recorded names) is a GEMM, the
        # CUTLASS and xmma ones included (they read "other" before); the
        # attention kernels of the SDPA cases keep their families, the
        # memory-efficient ones (fmha_cutlass*) too.
        import csv
        path = os.path.join(HERE, "..", "..", "docs", "results", "2026-11-27-h200", "stage-K",
                            "stage-k-kernels.csv")
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        gemm = {r["kernel"] for r in rows if r["group"] == "gemm"}
        self.assertGreaterEqual(len(gemm), 8)
        for name in gemm:
            self.assertTrue(et.kernel_family(name).startswith("GEMM"), name)
            self.assertEqual(et.join_family(name), "GEMM", name)
        self.assertEqual(et.kernel_family(
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_128x256_64x3_nn_align2>(T1::Params)"),
            "GEMM (CUTLASS, xmma)")
        sdpa = {r["kernel"] for r in rows if r["group"] == "sdpa"}
        efficient = [n for n in sdpa if n.startswith("fmha_cutlass")]
        self.assertEqual(len(efficient), 2)
        for name in efficient:
            self.assertTrue(et.kernel_family(name).startswith("attention"), name)
        self.assertFalse(any(et.kernel_family(n).startswith("GEMM") for n in sdpa))

    def test_family_times_and_busy(self):
        # SYNTHETIC: [0, 10] and [5, 15] overlap, [20, 25] apart: busy 20 of a span of 25.
        ks = [kernel(NVJET, 0, 10), kernel(NVJET, 5, 10), kernel("Memset (Device)", 20, 5)]
        self.assertEqual(et.family_times(ks), {"GEMM (nvjet)": [2, 20.0], "copies and casts": [1, 5.0]})
        self.assertEqual(et.busy_us(ks), (20.0, 25.0))
        self.assertEqual(et.busy_us([]), (0.0, 0.0))


class FlopsTest(unittest.TestCase):
    def test_gemm_op_flops(self):
        self.assertEqual(et.gemm_op_flops("aten::mm", [[4, 3], [3, 5]]), 2 * 4 * 5 * 3)
        self.assertEqual(et.gemm_op_flops("aten::addmm", [[5], [4, 3], [3, 5]]), 120)
        self.assertEqual(et.gemm_op_flops("aten::bmm", [[2, 4, 3], [2, 3, 5]]), 240)
        self.assertIsNone(et.gemm_op_flops("aten::mm", [[4, 3], [2, 5]]))  # K differs
        self.assertIsNone(et.gemm_op_flops("aten::mm", [[4, 3]]))

    def test_attention_forward_and_backward(self):
        # b 1, h 2, s 4, d_head 8: 4 x 1 x 2 x 4 x 4 x 8 = 1024; causal half.
        dims = [[1, 2, 4, 8]] * 3
        self.assertEqual(et.attention_forward_flops(dims), 1024)
        self.assertEqual(et.attention_forward_flops(dims, causal=True), 512)
        self.assertEqual(et.attention_flops(1024, 2.5), {"forward": 1024, "backward": 2560.0, "total": 3584.0})

    def test_analytic_matches_the_workload_count(self):
        # SYNTHETIC config: matmul params 12 x 16 + 4 x 8 = 224, so GEMMs 6 x 224 = 1344 per token;
        # attention 12 x 1 x 4 x 2 = 96, recompute 2 x 1 x 4 x 2 = 16; 2 tokens.
        config = {"layers": 1, "d_model": 4, "heads": 2, "vocab": 8, "seq_len": 2, "batch": 1, "causal": False}
        self.assertEqual(et.analytic_flops(config), {"model": 2880, "hardware": 2912, "gemm": 2688,
                                                     "attention_model": 192, "attention_hardware": 224})
        # The same attention from the shapes: b 1, h 2, s 2, d_head 2 -> forward 64, x 3 and x 3.5.
        fwd = et.attention_forward_flops([[1, 2, 2, 2]] * 3)
        self.assertEqual((3 * fwd, 3.5 * fwd), (192, 224))

    def test_trace_flops_joins_ops_to_kernels_once(self):
        # SYNTHETIC trace of 2 steps: one mm (4x3 @ 3x5 = 120 FLOPs) whose External id launched two nvjet
        # kernels (counted once), an aten::matmul wrapper with the same id (no formula, skipped), one
        # attention forward (1024 FLOPs) seen as two nested ops with one id, and an add (not counted).
        events = [op("aten::matmul", 1, [[4, 3], [3, 5]]), op("aten::mm", 1, [[4, 3], [3, 5]]),
                  op("aten::_scaled_dot_product_cudnn_attention", 2, [[1, 2, 4, 8]] * 3),
                  op("aten::_cudnn_attention_forward", 2, [[1, 2, 4, 8]] * 3),
                  op("aten::add", 3, [[4, 5], [4, 5]]),
                  kernel(NVJET, 0, 1, 1), kernel(NVJET, 1, 1, 1), kernel(FPROP, 2, 1, 2),
                  kernel("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>", 3,
                         1, 3)]
        self.assertEqual(et.trace_flops(events, 2), {"gemm": 60.0, "gemm_ops": 0.5, "attention_forward": 512.0,
                                                     "attention_forward_ops": 0.5})

    def test_causal_flags_from_concrete_inputs(self):
        concrete = [""] * 10 + ["True", "False", ""]
        events = [op("aten::_cudnn_attention_forward", 1, [], concrete),
                  op("aten::_cudnn_attention_forward", 2, [], [""] * 10 + ["False"]),
                  op("aten::_cudnn_attention_backward", 3, [], ["x"] * 3)]  # too short: left out
        self.assertEqual(et.attention_causal_flags(events), {"aten::_cudnn_attention_forward": ["False", "True"]})


class SplitTest(unittest.TestCase):
    def test_split_at_native_gemms(self):
        # SYNTHETIC: 100 model FLOPs a step at MFU 0.5, OFU 0.6: tensor work 120. GEMMs 80 useful at tile
        # factor 0.8: 100 executed. Attention 20 of work for 12 hardware (10 model) FLOPs: 0.6 and 0.5.
        # 1 FLOP = 0.5 pp; OFU - HFU = 60 - 46 = 14 pp = padding 20 x 0.5 + attention (20 - 12) x 0.5.
        s = et.split_tensor_work(100, 0.5, 0.6, 80, 0.8, 1.0, 12, 10)
        self.assertAlmostEqual(s["tensor"], 120)
        self.assertAlmostEqual(s["gemm"], 100)
        self.assertAlmostEqual(s["attention"], 20)
        self.assertAlmostEqual(s["attention_rate_hw"], 0.6)
        self.assertAlmostEqual(s["attention_rate_model"], 0.5)
        self.assertAlmostEqual(s["pp_gemm_padding"], 10)
        self.assertAlmostEqual(s["pp_gemm_ratio"], 0)
        self.assertAlmostEqual(s["pp_attention"], 4)

    def test_split_with_gemms_reading_high(self):
        # GEMMs at OFU / MFU 1.1 take 110 of the 120: attention 10 for 12 FLOPs (1.2), -1 pp; GEMMs +5 pp.
        s = et.split_tensor_work(100, 0.5, 0.6, 80, 0.8, 1.1, 12, 10)
        self.assertAlmostEqual(s["attention"], 10)
        self.assertAlmostEqual(s["attention_rate_hw"], 1.2)
        self.assertAlmostEqual(s["pp_gemm_ratio"], 5)
        self.assertAlmostEqual(s["pp_attention"], -1)
        self.assertIsNone(et.split_tensor_work(100, 0.5, 0.6, 80, 0.8, 1.5, 12, 10)["attention_rate_hw"])

    def test_forward_backward_bounds(self):
        # SYNTHETIC: W 20, fwd 4 and bwd 10 FLOPs, kernels 1 s and 2 s at 7 FLOP/s.
        # W_f >= max(4, 20 - 2 x 7 = 6), W_f <= min(1 x 7, 20 - 10): [6, 7]; W_b [13, 14].
        b = et.forward_backward_bounds(20, 4, 10, 1.0, 2.0, 7)
        self.assertEqual(b["fwd_work"], (6, 7))
        self.assertEqual(b["bwd_work"], (13, 14))
        self.assertAlmostEqual(b["fwd_rate"][0], 4 / 7)
        self.assertAlmostEqual(b["fwd_rate"][1], 4 / 6)
        self.assertAlmostEqual(b["bwd_rate"][0], 10 / 14)
        self.assertAlmostEqual(b["bwd_rate"][1], 10 / 13)
        # W 30 cannot fit: the forward would need 16 in a kernel that holds 7.
        self.assertIsNone(et.forward_backward_bounds(30, 4, 10, 1.0, 2.0, 7))

    def test_stage_a_ratios_keep_the_tensor_8192_loops(self):
        rows = [{"pass": "1s", "phase": "bf16-8192", "kind": "gemm", "precision": "bf16", "mfu_rec": "0.5",
                 "ofu_rec": "0.55"},
                {"pass": "1s", "phase": "bf16-4097", "kind": "gemm", "precision": "bf16", "mfu_rec": "0.1",
                 "ofu_rec": "0.3"},
                {"pass": "1s", "phase": "fp32-simt-8192", "kind": "gemm", "precision": "fp32", "mfu_rec": "0.7",
                 "ofu_rec": "0"},
                {"pass": "1s", "phase": "idle", "kind": "idle", "precision": "", "mfu_rec": "0", "ofu_rec": "0"},
                {"pass": "0.1s", "phase": "fp8-8192", "kind": "gemm", "precision": "fp8", "mfu_rec": "",
                 "ofu_rec": "0.6"}]
        got = et.stage_a_ratios(rows)
        self.assertEqual(len(got), 1)
        self.assertEqual(got[0][:2], ("1s", "bf16-8192"))
        self.assertAlmostEqual(got[0][2], 1.1)


class RealH100Test(unittest.TestCase):
    """REAL data: the committed H100 results. The figures are the ones the
    results README quotes; they must keep coming out of the script."""

    def test_committed_results(self):
        needed = [os.path.join("stage-C", "train", f) for f in ("trace.json.gz", "phases.jsonl", "rec.om")]
        needed += [os.path.join("stage-C", "stage-c-train.csv"), os.path.join("stage-A", "stage-a-phases.csv")]
        missing = [f for f in needed if not os.path.isfile(os.path.join(et.DEFAULT_RESULTS, f))]
        if missing:
            self.skipTest(f"not in this checkout: {', '.join(missing)}")
        out = et.explain(et.DEFAULT_RESULTS)
        self.assertIn("analytic 6 x matmul params x tokens 4.617949e+13: equal", out)
        self.assertIn("= 3 x fwd yes", out)
        self.assertIn("= 3.5 x fwd yes", out)
        self.assertRegex(out, r"GEMMs at native \(OFU = MFU\) +57\.609 +46\.573 +11\.037 +7\.697 +0\.697 +0\.598")
        self.assertIn("bwd hw/act 0.622-0.704", out)


if __name__ == "__main__":
    unittest.main()
