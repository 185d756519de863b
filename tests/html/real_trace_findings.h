// The GEMM findings of one real kernel trace for the HTML report tests: the
// bf16 GEMM 4097x1000x8191 that one H100 SXM5 ran in the GPU validation
// (tests/data/gpu-results/2026-11-26-h100-sxm5/ragged/, copied from
// docs/results/; measured, not synthetic). M and K are not multiples of 8,
// so cuBLAS ran cutlass_75_tensorop_bf16_s1688gemm_*_align1 for all of it.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/html_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/formats/trace_file.h"
#include "ofu/kernels/kernel_throughput.h"

namespace ofu::testing {

inline const std::string kRaggedTrace = std::string(OFU_TEST_DATA_DIR) +
                                        "/gpu-results/2026-11-26-h100-sxm5/ragged/trace-bf16-4097x1000x8191.json.gz";

// ComputeCorrection of the trace as `ofu report --trace` runs it (the
// H100 SXM5's rates, the embedded kernel-throughput table, default options).
inline analysis::CorrectionReport RaggedTraceCorrection(const GpuSpecDatabase& specs) {
  auto trace = formats::ReadKernelTrace(kRaggedTrace);
  EXPECT_TRUE(trace.ok()) << kRaggedTrace << ": " << (trace.ok() ? "" : trace.error().message);
  if (!trace.ok()) return {};
  const kernels::KernelThroughputTable table = *kernels::KernelThroughputTable::Embedded();
  analysis::CorrectionOptions options;
  options.gpu = *specs.Lookup("h100-sxm5");
  options.throughput = &table;
  return analysis::ComputeCorrection(*trace, options);
}

inline analysis::KernelFindings RaggedTraceFindings(const GpuSpecDatabase& specs) {
  return analysis::KernelFindingsOfCorrection(RaggedTraceCorrection(specs), {kRaggedTrace}, *specs.Lookup("h100-sxm5"));
}

}  // namespace ofu::testing
