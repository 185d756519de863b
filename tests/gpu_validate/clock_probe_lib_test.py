#!/usr/bin/env python3
"""libofu-clock-probe.so (gpu/clock_probe_lib.h) through workload.py's
ctypes wrapper, on the CPU: the span arithmetic of two launches' records
(made up here, SYNTHETIC, with clocks computed by hand) and the reasons the
wrapper gives when the library cannot be used. Launching needs a GPU and is
not run here.

  clock_probe_lib_test.py LIBRARY
"""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts", "gpu-validate"))
import workload  # noqa: E402

LIBRARY = None


class ClockProbeLibraryTest(unittest.TestCase):
    def setUp(self):
        self.lib, why = workload.ClockProbe.open_library(LIBRARY)
        self.assertIsNone(why)

    def test_span_of_two_launches(self):
        # Three blocks on SMs 0, 1 and 0 again (SM 0's earliest record counts). Over 1 ms (1e6 ns):
        # SM 0 ran 1,800,000 cycles = 1800 MHz, SM 1 1,600,000 = 1600 MHz; median of two = 1700.
        before = [[0, 5_000, 1_000_000], [1, 9_000, 1_000_200], [0, 7_000, 1_000_500]]
        after = [[0, 1_805_000, 2_000_000], [1, 1_609_000, 2_000_200], [0, 1_900_000, 2_000_900]]
        span = workload.span_of_records(self.lib, before, after)
        self.assertEqual(span["sms"], 2)
        self.assertAlmostEqual(span["median_mhz"], 1700.0)
        self.assertAlmostEqual(span["min_mhz"], 1600.0)
        self.assertAlmostEqual(span["max_mhz"], 1800.0)
        self.assertAlmostEqual(span["span_s"], 0.001)  # earliest record of each launch: 1,000,000 to 2,000,000 ns

    def test_no_sm_in_both_launches_is_absent_with_a_reason(self):
        span = workload.span_of_records(self.lib, [[0, 1, 10]], [[1, 2, 20]])
        self.assertEqual(span, {"absent": "no SM ran a block of both probe launches"})

    def test_counters_that_did_not_advance(self):
        span = workload.span_of_records(self.lib, [[0, 100, 10]], [[0, 100, 20]])
        self.assertIn("absent", span)
        self.assertIn("advanced", span["absent"])


class OpenLibraryTest(unittest.TestCase):
    def test_unset_missing_and_not_a_library(self):
        self.assertEqual(workload.ClockProbe.open_library(""), (None, "GPUVAL_CLOCK_PROBE is not set"))
        lib, why = workload.ClockProbe.open_library("/nonexistent/libofu-clock-probe.so")
        self.assertIsNone(lib)
        self.assertIn("does not exist", why)
        with tempfile.NamedTemporaryFile(suffix=".so") as f:
            f.write(b"not an ELF file")
            f.flush()
            lib, why = workload.ClockProbe.open_library(f.name)
            self.assertIsNone(lib)
            self.assertTrue(why.startswith(f.name + ": "), why)


if __name__ == "__main__":
    LIBRARY = sys.argv.pop(1)
    unittest.main()
