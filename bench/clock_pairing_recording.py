#!/usr/bin/env python3
# SYNTHETIC: 8 H100 80GB HBM3, 1 s samples for 6 h, tensor and clock moving, reasons; for a timing only.
import math, sys
out = sys.stdout
out.write('# TYPE ofu_recording info\nofu_recording_info{synthetic="true",description="bench: 8 GPUs x 6 h"} 1 1700000000\n')
N = 21600
for fam, fn in (("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", lambda g, t: 0.5 + 0.45 * math.sin(t / 37.0 + g)),
                ("DCGM_FI_DEV_SM_CLOCK", lambda g, t: 1600 + 300 * math.cos(t / 23.0 + g)),
                ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", lambda g, t: 4 if (t // 60) % 2 else 0)):
    out.write(f"# TYPE {fam} gauge\n")
    for g in range(8):
        labels = f'gpu="{g}",UUID="GPU-bench-{g}",modelName="NVIDIA H100 80GB HBM3",Hostname="bench"'
        for t in range(1, N + 1):
            v = fn(g, t)
            out.write(f"{fam}{{{labels}}} {v:.6g} {1700000000 + t}\n")
out.write("# EOF\n")
