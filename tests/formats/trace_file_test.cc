// Several traces read as one (trace_file.h): names interned once, ops
// renumbered, devices listed once, notes naming their file. The traces are
// SYNTHETIC, built here.
#include "ofu/formats/trace_file.h"

#include <gtest/gtest.h>

namespace ofu::formats {
namespace {

// A trace with one kernel per name, the i-th launched by op i when `with_ops`.
KernelTrace Trace(const std::string& format, const std::vector<std::string>& names, bool with_ops, int device_id,
                  const std::string& note) {
  KernelTrace trace;
  trace.format = format;
  trace.kernel_names = names;
  for (uint32_t i = 0; i < names.size(); ++i) {
    TraceKernel kernel;
    kernel.name_id = i;
    kernel.start_us = i;
    if (with_ops) {
      kernel.op = i;
      trace.ops.push_back(FrameworkOp{"aten::mm", {{8, 8}, {8, 8}}, {}, 0, 1});
    }
    trace.kernels.push_back(kernel);
  }
  trace.devices.push_back(TraceDevice{device_id, "NVIDIA H100 80GB HBM3", 132, 9, 0});
  trace.bytes_read = 100;
  trace.notes.push_back(note);
  return trace;
}

TEST(TraceFile, AppendInternsNamesAndRenumbersOps) {
  KernelTrace all;
  AppendKernelTrace(all, Trace("kineto", {"gemm_a", "gemm_b"}, true, 0, "first"), "rank0.json");
  AppendKernelTrace(all, Trace("kineto", {"gemm_b", "gemm_c"}, true, 0, "second"), "rank1.json");
  EXPECT_EQ(all.format, "kineto");
  EXPECT_EQ(all.kernel_names, (std::vector<std::string>{"gemm_a", "gemm_b", "gemm_c"}));
  ASSERT_EQ(all.kernels.size(), 4u);
  EXPECT_EQ(all.NameOf(all.kernels[2]), "gemm_b");
  EXPECT_EQ(all.NameOf(all.kernels[3]), "gemm_c");
  ASSERT_EQ(all.ops.size(), 4u);
  EXPECT_EQ(all.kernels[2].op, 2u);
  EXPECT_EQ(all.kernels[3].op, 3u);
  EXPECT_EQ(all.devices.size(), 1u);  // the same GPU listed by both ranks
  EXPECT_EQ(all.bytes_read, 200u);
  EXPECT_EQ(all.notes, (std::vector<std::string>{"rank0.json: first", "rank1.json: second"}));

  AppendKernelTrace(all, Trace("nsys-sqlite", {"gemm_a"}, false, 1, "third"), "");
  EXPECT_EQ(all.format, "mixed");
  EXPECT_FALSE(all.kernels.back().op);
  EXPECT_EQ(all.kernels.back().name_id, 0u);
  EXPECT_EQ(all.devices.size(), 2u);
  EXPECT_EQ(all.notes.back(), "third");
}

}  // namespace
}  // namespace ofu::formats
