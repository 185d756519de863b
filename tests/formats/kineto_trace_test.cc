// Tests of the PyTorch profiler (Kineto) trace reader. Every trace here is
// synthetic: built in the test, in the shape PyTorch 2.x writes (and, where
// said, the shape of PyTorch 1.8/1.9 traces), with made-up names and times.
#include "ofu/formats/kineto_trace.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ofu::formats {
namespace {

// A trace with the given events (JSON objects, comma-separated) and the
// usual top-level keys around them.
std::string Trace(const std::string& events, const std::string& before = "") {
  return "{\n  \"schemaVersion\": 1,\n" + before +
         "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1},\n"
         "  \"traceEvents\": [\n" +
         events + "\n  ],\n  \"traceName\": \"synthetic.json\"\n}\n";
}

// Everything the reader returns, as text, so that two reads can be compared
// in one assertion and a difference shows where it is.
std::string Describe(const KernelTrace& trace) {
  std::ostringstream out;
  out << "format " << trace.format << " bytes " << trace.bytes_read << "\n";
  for (const TraceKernel& k : trace.kernels) {
    out << "kernel " << trace.NameOf(k) << " start " << k.start_us << " dur " << k.duration_us << " device " << k.device
        << " stream " << k.stream;
    if (k.grid) out << " grid " << k.grid->x << "," << k.grid->y << "," << k.grid->z;
    if (k.block) out << " block " << k.block->x << "," << k.block->y << "," << k.block->z;
    out << " op " << (k.op ? static_cast<int64_t>(*k.op) : -1) << " link " << static_cast<int>(k.link) << " launch "
        << static_cast<int>(k.launch) << "\n";
  }
  for (const FrameworkOp& op : trace.ops) {
    out << "op " << op.name << " start " << op.start_us << " dur " << op.duration_us << " dims";
    for (const auto& dims : op.input_dims) {
      out << " [";
      for (int64_t d : dims) out << d << " ";
      out << "]";
    }
    out << " types";
    for (const auto& type : op.input_types) out << " " << type;
    out << "\n";
  }
  for (const TraceDevice& d : trace.devices) {
    out << "device " << d.id << " " << d.name << " sms " << d.sm_count.value_or(-1) << " cc "
        << d.compute_major.value_or(-1) << "." << d.compute_minor.value_or(-1) << "\n";
  }
  for (const std::string& note : trace.notes) out << "note " << note << "\n";
  return out.str();
}

KernelTrace ParseOk(const std::string& text, std::size_t chunk_bytes = 0) {
  Result<KernelTrace> result = chunk_bytes == 0 ? ParseKinetoTrace(text, "mem.json")
                                                : ParseKinetoTrace(text, "mem.json", KinetoReadTuning{chunk_bytes});
  EXPECT_TRUE(result.ok()) << (result.ok() ? "" : result.error().message);
  return result.ok() ? std::move(result).value() : KernelTrace{};
}

// Parses with many chunk sizes and checks each gives the same result.
KernelTrace ParseEveryChunkSize(const std::string& text) {
  const KernelTrace reference = ParseOk(text);
  const std::string expected = Describe(reference);
  for (std::size_t chunk : {1, 2, 3, 7, 64, 1000, 4096}) {
    EXPECT_EQ(Describe(ParseOk(text, chunk)), expected) << "chunk size " << chunk;
  }
  return reference;
}

Error ParseError(const std::string& text, std::size_t chunk_bytes = 7) {
  // A small chunk size too, so that errors found after a refill are checked.
  Result<KernelTrace> whole = ParseKinetoTrace(text, "bad.json");
  Result<KernelTrace> chunked = ParseKinetoTrace(text, "bad.json", KinetoReadTuning{chunk_bytes});
  EXPECT_FALSE(whole.ok());
  EXPECT_FALSE(chunked.ok());
  if (whole.ok() || chunked.ok()) return Error{ErrorCode::kIo, "parsed"};
  EXPECT_EQ(whole.error().message, chunked.error().message);
  return whole.error();
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / ("kineto_trace_test_" + name)).string();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

void WriteGzip(const std::string& path, const std::string& text) {
  gzFile file = gzopen(path.c_str(), "wb9");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// One aten::mm with shapes, its launch and its kernel, as PyTorch 2.x writes
// them (field order as Kineto's).
const char* const kMmOp = R"(  {
    "ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4242, "tid": 4242,
    "ts": 1000.125, "dur": 40.5,
    "args": {
      "External id": 10, "Record function id": 0, "Ev Idx": 9,
      "Input Dims": [[128, 256], [256, 512]],
      "Input Strides": [[256, 1], [1, 256]],
      "Input type": ["c10::BFloat16", "c10::BFloat16"],
      "Concrete Inputs": ["", ""], "Fwd thread id": 0, "Sequence number": 77
    }
  })";

const char* const kMmLaunch = R"(  {
    "ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242,
    "ts": 1010, "dur": 5,
    "args": {"External id": 10, "cbid": 211, "correlation": 501}
  })";

const char* const kMmKernel = R"(  {
    "ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "pid": 0, "tid": 7,
    "ts": 1020, "dur": 12.25,
    "args": {
      "External id": 10, "queued": 0, "device": 0, "context": 1,
      "stream": 7, "correlation": 501, "registers per thread": 168,
      "shared memory": 213248, "blocks per SM": 0.484848, "warps per SM": 1.939394,
      "grid": [2, 32, 1], "block": [384, 1, 1],
      "est. achieved occupancy %": 3
    }
  })";

TEST(KinetoTraceTest, LinksKernelToMmByExternalId) {
  const std::string text = Trace(std::string(kMmOp) + ",\n" + kMmLaunch + ",\n" + kMmKernel);
  const KernelTrace trace = ParseEveryChunkSize(text);

  EXPECT_EQ(trace.format, "kineto");
  EXPECT_EQ(trace.bytes_read, text.size());
  ASSERT_EQ(trace.kernels.size(), 1u);
  const TraceKernel& kernel = trace.kernels[0];
  EXPECT_EQ(trace.NameOf(kernel),
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
            "segment_k_off_kernel__5x_cublas");
  EXPECT_DOUBLE_EQ(kernel.start_us, 1020);
  EXPECT_DOUBLE_EQ(kernel.duration_us, 12.25);
  EXPECT_EQ(kernel.device, 0);
  EXPECT_EQ(kernel.stream, 7);
  EXPECT_EQ(kernel.grid, (Dim3{2, 32, 1}));
  EXPECT_EQ(kernel.block, (Dim3{384, 1, 1}));
  EXPECT_FALSE(kernel.cluster.has_value());
  EXPECT_EQ(kernel.link, OpLink::kExternalId);
  ASSERT_TRUE(kernel.op.has_value());
  ASSERT_EQ(trace.ops.size(), 1u);
  const FrameworkOp& op = trace.ops[*kernel.op];
  EXPECT_EQ(op.name, "aten::mm");
  EXPECT_DOUBLE_EQ(op.start_us, 1000.125);
  EXPECT_DOUBLE_EQ(op.duration_us, 40.5);
  EXPECT_EQ(op.input_dims, (std::vector<std::vector<int64_t>>{{128, 256}, {256, 512}}));
  EXPECT_EQ(op.input_types, (std::vector<std::string>{"c10::BFloat16", "c10::BFloat16"}));
}

TEST(KinetoTraceTest, KernelWithoutArgsKeepsOptionalFieldsAbsent) {
  const KernelTrace trace = ParseOk(Trace(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 0})"));
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.kernels[0].device, -1);
  EXPECT_EQ(trace.kernels[0].stream, -1);
  EXPECT_FALSE(trace.kernels[0].grid.has_value());
  EXPECT_FALSE(trace.kernels[0].block.has_value());
  EXPECT_FALSE(trace.kernels[0].op.has_value());
  EXPECT_EQ(trace.kernels[0].link, OpLink::kNone);
  EXPECT_TRUE(trace.ops.empty());
}

// Kernels first, then launches, then ops: the reader must not rely on order.
// The kernels' External ids name a non-GEMM wrapper op, so linking falls
// back to the launch (by correlation) and the innermost GEMM op around it on
// the launching thread.
TEST(KinetoTraceTest, LinksByCorrelationAndInnermostNestingInAnyOrder) {
  const std::string events = R"(
  {"ph": "X", "cat": "kernel", "name": "gemm_in_mm", "pid": 0, "tid": 7, "ts": 500, "dur": 10,
   "args": {"External id": 20, "correlation": 71, "device": 1, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "gemm_in_matmul", "pid": 0, "tid": 7, "ts": 520, "dur": 10,
   "args": {"External id": 20, "correlation": 72, "device": 1, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "outside", "pid": 0, "tid": 7, "ts": 540, "dur": 10,
   "args": {"External id": 20, "correlation": 73, "device": 1, "stream": 7}},
  {"ph": "X", "cat": "kernel", "name": "no_launch", "pid": 0, "tid": 7, "ts": 560, "dur": 10,
   "args": {"correlation": 99}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 150, "dur": 3,
   "args": {"correlation": 71}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernelEx", "pid": 1, "tid": 2, "ts": 250, "dur": 3,
   "args": {"correlation": 72}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 350, "dur": 3,
   "args": {"correlation": 73}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 120, "dur": 80,
   "args": {"External id": 22, "Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 1, "tid": 2, "ts": 100, "dur": 200,
   "args": {"External id": 21, "Input Dims": [[64, 32], [32, 16]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 3, "ts": 0, "dur": 1000,
   "args": {"External id": 30, "Input Dims": [[16], [64, 32], [32, 16], [], []]}},
  {"ph": "X", "cat": "cpu_op", "name": "MyModule.wrapper", "pid": 1, "tid": 2, "ts": 90, "dur": 300,
   "args": {"External id": 20}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 2, "ts": 0, "dur": 2000},
  {"ph": "s", "id": 71, "pid": 1, "tid": 2, "ts": 150, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 71, "pid": 0, "tid": 7, "ts": 500, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"name": "process_name", "ph": "M", "ts": 0, "pid": 0, "tid": 0, "args": {"name": "python"}})";
  const KernelTrace trace = ParseEveryChunkSize(Trace(events));

  ASSERT_EQ(trace.kernels.size(), 4u);
  // Ops are kept only when linked, in file order: aten::mm, then aten::matmul.
  ASSERT_EQ(trace.ops.size(), 2u);
  EXPECT_EQ(trace.ops[0].name, "aten::mm");
  EXPECT_EQ(trace.ops[1].name, "aten::matmul");

  EXPECT_EQ(trace.NameOf(trace.kernels[0]), "gemm_in_mm");
  EXPECT_EQ(trace.kernels[0].link, OpLink::kCorrelationNesting);
  EXPECT_EQ(trace.kernels[0].op, 0u);
  EXPECT_EQ(trace.kernels[0].device, 1);

  EXPECT_EQ(trace.kernels[1].link, OpLink::kCorrelationNesting);
  EXPECT_EQ(trace.kernels[1].op, 1u);

  // Inside the wrapper only, and the addmm on thread 3 does not count.
  EXPECT_EQ(trace.kernels[2].link, OpLink::kNone);
  EXPECT_FALSE(trace.kernels[2].op.has_value());
  EXPECT_EQ(trace.kernels[3].link, OpLink::kNone);

  EXPECT_EQ(trace.ops[0].input_dims, (std::vector<std::vector<int64_t>>{{64, 32}, {32, 16}}));

  EXPECT_EQ(trace.kernels[0].launch, LaunchKind::kKernel);
  EXPECT_EQ(trace.kernels[1].launch, LaunchKind::kKernel);  // cuLaunchKernelEx
  EXPECT_EQ(trace.kernels[3].launch, LaunchKind::kUnknown);
}

// A CUDA graph replay: Kineto gives the graph's kernels the correlation of
// the cudaGraphLaunch and the External id of the op around it. Neither
// shaped the kernel, so it is linked to no op, even when that op is a GEMM.
TEST(KinetoTraceTest, KernelsReplayedFromAGraphAreMarkedAndLinkedToNoOp) {
  const std::string events = R"(
  {"ph": "X", "cat": "kernel", "name": "gemm_in_graph", "pid": 0, "tid": 7, "ts": 500, "dur": 10,
   "args": {"External id": 40, "correlation": 81}},
  {"ph": "X", "cat": "kernel", "name": "gemm_in_graph", "pid": 0, "tid": 7, "ts": 520, "dur": 10,
   "args": {"External id": 40, "correlation": 81}},
  {"ph": "X", "cat": "kernel", "name": "eager_gemm", "pid": 0, "tid": 7, "ts": 540, "dur": 10,
   "args": {"External id": 41, "correlation": 82}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 2, "ts": 150, "dur": 3,
   "args": {"External id": 40, "correlation": 81}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 250, "dur": 3,
   "args": {"External id": 41, "correlation": 82}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 140, "dur": 20,
   "args": {"External id": 40, "Input Dims": [[64, 32], [32, 16]]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 240, "dur": 20,
   "args": {"External id": 41, "Input Dims": [[8, 32], [32, 16]]}})";
  const KernelTrace trace = ParseEveryChunkSize(Trace(events));
  ASSERT_EQ(trace.kernels.size(), 3u);
  for (int i : {0, 1}) {
    EXPECT_EQ(trace.kernels[i].launch, LaunchKind::kGraph);
    EXPECT_EQ(trace.kernels[i].link, OpLink::kNone);
    EXPECT_FALSE(trace.kernels[i].op.has_value());
  }
  EXPECT_EQ(trace.kernels[2].launch, LaunchKind::kKernel);
  EXPECT_EQ(trace.kernels[2].link, OpLink::kExternalId);
  ASSERT_EQ(trace.ops.size(), 1u);
  EXPECT_EQ(trace.ops[0].input_dims, (std::vector<std::vector<int64_t>>{{8, 32}, {32, 16}}));
}

TEST(KinetoTraceTest, GraphLaunchNames) {
  EXPECT_TRUE(IsGraphLaunchName("cudaGraphLaunch"));
  EXPECT_TRUE(IsGraphLaunchName("cudaGraphLaunch_v10000"));
  EXPECT_TRUE(IsGraphLaunchName("cuGraphLaunch"));
  EXPECT_TRUE(IsGraphLaunchName("cudaGraphLaunch_ptsz"));
  EXPECT_FALSE(IsGraphLaunchName("cudaLaunchKernel"));
  EXPECT_FALSE(IsGraphLaunchName("cudaGraphLaunchX"));
  EXPECT_FALSE(IsGraphLaunchName("cudaGraphInstantiate"));
  EXPECT_FALSE(IsGraphLaunchName(""));
}

// Old traces (PyTorch 1.8/1.9) write the pid as a number and the tid as a
// string for CPU ops, "external id" in lower case, and capitalised categories.
TEST(KinetoTraceTest, ReadsOldSpellingsAndStringThreadIds) {
  const std::string events = R"(
  {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 24572, "tid": "24572",
   "ts": 1621401187225112, "dur": 197, "args": {"Device": 24572, "External id": 41}},
  {"ph": "X", "cat": "Operator", "name": "aten::bmm", "pid": "24572", "tid": "24610",
   "ts": 1621401187226000, "dur": 100, "args": {"External id": 50}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 24572, "tid": "24572",
   "ts": 1621401187225260, "dur": 15, "args": {"cbid": 211, "correlation": 364, "external id": 41}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 24572, "tid": 24610,
   "ts": 1621401187226050, "dur": 15, "args": {"cbid": 211, "correlation": 400}},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_64x32_sliced1x4_nn", "pid": 0, "tid": "stream 7",
   "ts": 1621401187225300, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 364, "external id": 41,
   "grid": [1, 1, 1], "block": [128, 1, 1]}},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": "stream 7",
   "ts": 1621401187226100, "dur": 4, "args": {"device": 0, "stream": 7, "correlation": 400}})";
  const KernelTrace trace = ParseEveryChunkSize(Trace(events));
  ASSERT_EQ(trace.kernels.size(), 2u);
  EXPECT_EQ(trace.kernels[0].link, OpLink::kExternalId);
  ASSERT_TRUE(trace.kernels[0].op.has_value());
  EXPECT_EQ(trace.ops[*trace.kernels[0].op].name, "aten::mm");
  // "24572"/"24610" as strings on the op, numbers on the launch.
  EXPECT_EQ(trace.kernels[1].link, OpLink::kCorrelationNesting);
  ASSERT_TRUE(trace.kernels[1].op.has_value());
  EXPECT_EQ(trace.ops[*trace.kernels[1].op].name, "aten::bmm");
  // No "Input Dims" in such traces: said once, for a person.
  bool noted = false;
  for (const std::string& note : trace.notes) noted |= note.find("record_shapes") != std::string::npos;
  EXPECT_TRUE(noted) << Describe(trace);
}

TEST(KinetoTraceTest, ReadsDeviceProperties) {
  const std::string devices = R"(  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 84929347584,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132
    , "regsPerMultiprocessor": 65536, "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472
    },
    {
      "id": 1, "name": "NVIDIA A100-SXM4-40GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108
    }
  ],
)";
  const KernelTrace trace = ParseEveryChunkSize(Trace(kMmKernel, devices));
  ASSERT_EQ(trace.devices.size(), 2u);
  EXPECT_EQ(trace.devices[0].id, 0);
  EXPECT_EQ(trace.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(trace.devices[0].sm_count, 132);
  EXPECT_EQ(trace.devices[0].compute_major, 9);
  EXPECT_EQ(trace.devices[0].compute_minor, 0);
  EXPECT_EQ(trace.devices[1].name, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(trace.devices[1].sm_count, 108);
}

TEST(KinetoTraceTest, DevicePropertiesNotAnArrayIsANote) {
  const KernelTrace trace = ParseOk(Trace(kMmKernel, "  \"deviceProperties\": {\"id\": 0},\n"));
  EXPECT_TRUE(trace.devices.empty());
  EXPECT_EQ(trace.kernels.size(), 1u);
  ASSERT_FALSE(trace.notes.empty());
  EXPECT_NE(trace.notes[0].find("device properties are not an array"), std::string::npos);
}

TEST(KinetoTraceTest, ReadsOldComputeProperties) {
  const std::string devices = R"(  "computeProperties": [
    {"id": 0, "name": "Tesla V100-DGXS-32GB", "major": 7, "minor": 0, "multiProcessorCount": 80}
  ],
)";
  const KernelTrace trace = ParseOk(Trace(kMmKernel, devices));
  ASSERT_EQ(trace.devices.size(), 1u);
  EXPECT_EQ(trace.devices[0].name, "Tesla V100-DGXS-32GB");
  EXPECT_EQ(trace.devices[0].sm_count, 80);
  EXPECT_EQ(trace.devices[0].compute_major, 7);
}

TEST(KinetoTraceTest, DecodesEscapesInNames) {
  // Backslash runs of every parity, so that a chunk boundary falls inside
  // each at some chunk size.
  const std::string events = R"js(
  {"ph": "X", "cat": "kernel", "name": "void f<\"q\">(caf\u00e9)", "ts": 1, "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "a\\", "ts": 2, "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "b\\\\\"}]{[\"", "ts": 3, "dur": 1},
  {"ph": "X", "cat": "python_function", "name": "\\\\\\\"}", "ts": 4, "dur": 1},
  {"ph": "X", "cat": "kernel", "name": "a\\", "ts": 5, "dur": 1})js";
  const KernelTrace trace = ParseEveryChunkSize(Trace(events, "  \"odd \\\"key\\\\\": \"}]\\\\\",\n"));
  ASSERT_EQ(trace.kernels.size(), 4u);
  EXPECT_EQ(trace.NameOf(trace.kernels[0]), "void f<\"q\">(caf\xC3\xA9)");
  EXPECT_EQ(trace.NameOf(trace.kernels[1]), "a\\");
  EXPECT_EQ(trace.NameOf(trace.kernels[2]), "b\\\\\"}]{[\"");
  // A name seen twice is stored once.
  EXPECT_EQ(trace.kernels[3].name_id, trace.kernels[1].name_id);
  EXPECT_EQ(trace.kernel_names.size(), 3u);
}

TEST(KinetoTraceTest, EventLargerThanTheChunkGrowsTheBuffer) {
  // A 6 MiB kernel name (more than the 4 MiB default chunk) and an op with
  // 20,000 inputs.
  const std::string long_name(6 << 20, 'k');
  std::string dims = "[1, 2]";
  for (int i = 0; i < 20'000; ++i) dims += ", [3, 4]";
  const std::string events = R"({"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 1,
   "ts": 10, "dur": 100, "args": {"External id": 5, "Input Dims": [)" +
                             dims + R"(]}},
  {"ph": "X", "cat": "kernel", "name": ")" +
                             long_name + R"(", "ts": 20, "dur": 1,
   "args": {"External id": 5}},
  {"ph": "X", "cat": "kernel", "name": "small", "ts": 30, "dur": 1, "args": {"External id": 5}})";
  const std::string text = Trace(events);
  const std::string expected = Describe(ParseOk(text));
  for (std::size_t chunk : {7, 4096, 1 << 20}) {
    EXPECT_EQ(Describe(ParseOk(text, chunk)), expected) << "chunk size " << chunk;
  }
  const KernelTrace trace = ParseOk(text);
  ASSERT_EQ(trace.kernels.size(), 2u);
  EXPECT_EQ(trace.NameOf(trace.kernels[0]).size(), long_name.size());
  ASSERT_EQ(trace.ops.size(), 1u);
  EXPECT_EQ(trace.ops[0].input_dims.size(), 20'001u);
  EXPECT_EQ(trace.kernels[1].op, 0u);
}

TEST(KinetoTraceTest, ReadsPlainAndGzipFilesAlike) {
  const std::string text = Trace(std::string(kMmKernel) + ",\n" + kMmLaunch + ",\n" + kMmOp);
  const std::string plain = TempPath("plain.json");
  const std::string gzip = TempPath("trace.json.gz");
  WriteFile(plain, text);
  WriteGzip(gzip, text);

  const std::string expected = Describe(ParseOk(text));
  for (const std::string& path : {plain, gzip}) {
    std::vector<std::pair<uint64_t, uint64_t>> calls;
    TraceReadOptions options;
    options.progress = [&](uint64_t done, uint64_t total) { calls.emplace_back(done, total); };
    const Result<KernelTrace> trace = ReadKinetoTrace(path, options);
    ASSERT_TRUE(trace.ok()) << trace.error().message;
    EXPECT_EQ(Describe(*trace), expected) << path;
    // At least the final call, with the stored size as the total.
    ASSERT_FALSE(calls.empty());
    const uint64_t size = std::filesystem::file_size(path);
    EXPECT_EQ(calls.back().second, size);
    EXPECT_GT(calls.back().first, 0u);
    EXPECT_LE(calls.back().first, size);

    const Result<KernelTrace> chunked = ReadKinetoTrace(path, {}, KinetoReadTuning{5});
    ASSERT_TRUE(chunked.ok()) << chunked.error().message;
    EXPECT_EQ(Describe(*chunked), expected) << path;
  }
  std::filesystem::remove(plain);
  std::filesystem::remove(gzip);
}

TEST(KinetoTraceTest, EmptyTraceIsValidWithANote) {
  const KernelTrace trace = ParseOk(R"({"traceEvents": []})");
  EXPECT_TRUE(trace.kernels.empty());
  ASSERT_EQ(trace.notes.size(), 1u);
  EXPECT_NE(trace.notes[0].find("no GPU kernel events"), std::string::npos);
}

// A trace with neither kernels nor launches: CUDA activity was not recorded.
TEST(KinetoTraceTest, NoCudaActivityIsToldToRecordWithCuda) {
  const KernelTrace trace = ParseOk(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1,
      "tid": 1, "ts": 10, "dur": 5, "args": {"External id": 1}}]})");
  ASSERT_EQ(trace.notes.size(), 1u);
  EXPECT_EQ(trace.notes[0].rfind("no CUDA activity recorded: ", 0), 0u) << trace.notes[0];
  EXPECT_NE(trace.notes[0].find("record it with ProfilerActivity.CUDA"), std::string::npos);
}

// Derived from a real trace (HolisticTraceAnalysis's AlexNet on an A100, see
// tests/data/kineto/README.md) with its GPU-side events taken out: its 79
// cudaLaunchKernel calls remain, its kernel records do not. The note says
// the launches were recorded and the kernel records are missing, not that
// CUDA activity was off.
TEST(KinetoTraceTest, LaunchesWithoutKernelRecordsSayWhatIsMissing) {
  const std::string path = std::string(OFU_TEST_DATA_DIR) +
                           "/kineto/derived-hta-alexnet-a100-no-kernel-records.json.gz";
  const Result<KernelTrace> trace = ReadKinetoTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_TRUE(trace->kernels.empty());
  ASSERT_EQ(trace->notes.size(), 1u);
  EXPECT_EQ(trace->notes[0].rfind("launches recorded, kernel records missing: the trace has 79 kernel launches "
                                  "(cudaLaunchKernel, cuLaunchKernel, ...",
                                  0),
            0u)
      << trace->notes[0];
  EXPECT_EQ(trace->notes[0].find("record it with ProfilerActivity.CUDA"), std::string::npos);
  EXPECT_NE(trace->notes[0].find("CUPTI"), std::string::npos);
}

// Real: the GeForce RTX 4060 trace of solangii/gpu-practice (see
// tests/data/kineto/README.md) holds 10 cudaLaunchKernel calls and no kernel
// record, as recorded.
TEST(KinetoTraceTest, RealTraceWithLaunchesButNoKernelRecords) {
  const Result<KernelTrace> trace = ReadKinetoTrace(std::string(OFU_TEST_DATA_DIR) +
                                                    "/kineto/geforce-rtx4060-gpu-practice.json");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_TRUE(trace->kernels.empty());
  ASSERT_EQ(trace->notes.size(), 1u);
  EXPECT_EQ(trace->notes[0].rfind("launches recorded, kernel records missing: the trace has 10 kernel launches ", 0),
            0u)
      << trace->notes[0];
}

// Real: the two-RTX-3090 trace of bclarkson-code/flow_matching holds 5 CUDA
// runtime calls (device queries, a synchronize) and no launch: CUDA activity
// was on, but no kernel ran while the profiler did.
TEST(KinetoTraceTest, RealTraceWithRuntimeCallsButNoLaunch) {
  const Result<KernelTrace> trace = ReadKinetoTrace(std::string(OFU_TEST_DATA_DIR) +
                                                    "/kineto/geforce-rtx3090-flow-matching.json");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_EQ(trace->notes.size(), 1u);
  EXPECT_EQ(trace->notes[0].rfind("no kernel launched while profiling: the trace has 5 CUDA runtime calls ", 0), 0u)
      << trace->notes[0];
}

TEST(KinetoTraceTest, AcceptsByteOrderMarkAndOuterWhitespace) {
  const KernelTrace trace = ParseOk("\xEF\xBB\xBF \n" + Trace(kMmKernel) + "\n\n");
  EXPECT_EQ(trace.kernels.size(), 1u);
}

// Real serializer output, from pytorch/kineto (see tests/data/kineto/README.md);
// the expected values were counted with Python's json module.
TEST(KinetoTraceTest, ReadsKinetosOwnTraceFile) {
  const std::string path = std::string(OFU_TEST_DATA_DIR) + "/kineto/after_fix_trace.json";
  const Result<KernelTrace> trace = ReadKinetoTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(trace->bytes_read, 15'398u);
  ASSERT_EQ(trace->kernels.size(), 1u);
  const TraceKernel& kernel = trace->kernels[0];
  EXPECT_EQ(trace->NameOf(kernel), "Kernel");
  EXPECT_DOUBLE_EQ(kernel.start_us, 88511388202.785);
  EXPECT_DOUBLE_EQ(kernel.duration_us, 0.020);
  EXPECT_EQ(kernel.device, 0);
  EXPECT_EQ(kernel.stream, 1);
  EXPECT_EQ(kernel.grid, (Dim3{1, 1, 1}));
  EXPECT_EQ(kernel.block, (Dim3{1, 1, 1}));
  // Its launch is inside "op1", which is not a GEMM op.
  EXPECT_EQ(kernel.link, OpLink::kNone);
  EXPECT_TRUE(trace->ops.empty());
  ASSERT_EQ(trace->devices.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(trace->devices[i].id, i);
    EXPECT_EQ(trace->devices[i].name, "NVIDIA H100");
    EXPECT_EQ(trace->devices[i].sm_count, 132);
    EXPECT_EQ(trace->devices[i].compute_major, 9);
    EXPECT_EQ(trace->devices[i].compute_minor, 0);
  }
  bool noted = false;
  for (const std::string& note : trace->notes) {
    noted |= note == "none of the 4 CPU ops is a GEMM op (aten::mm, addmm, bmm, ...)";
  }
  EXPECT_TRUE(noted) << Describe(*trace);

  // The same through every chunk size and from memory.
  EXPECT_EQ(Describe(ParseEveryChunkSize(ReadFile(path))), Describe(*trace));
}

// ----- errors: the offsets below are counted by hand.

TEST(KinetoTraceTest, TruncatedJsonIsMalformed) {
  // 27 bytes; the input ends inside the first event.
  const Error error = ParseError(R"({"traceEvents": [{"ph": "X")");
  EXPECT_EQ(error.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(error.message, "bad.json: byte 27: unexpected end of input");
}

TEST(KinetoTraceTest, TruncatedAfterAnEventIsMalformed) {
  const Error error = ParseError(R"({"traceEvents": [{"ph": "X"}, )");
  EXPECT_EQ(error.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(error.message, "bad.json: byte 30: unexpected end of input");
}

TEST(KinetoTraceTest, UnterminatedStringIsMalformed) {
  // 34 bytes.
  const Error error = ParseError(R"({"traceEvents": [{"name": "abc\"}])");
  EXPECT_EQ(error.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(error.message, "bad.json: byte 34: unexpected end of input inside a string");
}

TEST(KinetoTraceTest, TraceEventsNotAnArrayIsMalformed) {
  // The '{' of the value is byte 16.
  const Error error = ParseError(R"({"traceEvents": {"ph": "X"}})");
  EXPECT_EQ(error.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(error.message, "bad.json: byte 16: \"traceEvents\" is not an array");
}

TEST(KinetoTraceTest, TopLevelNotAnObjectIsMalformed) {
  const Error error = ParseError(R"(  [{"ph": "X"}])");
  EXPECT_EQ(error.message, "bad.json: byte 2: the top level is not a JSON object");
  EXPECT_EQ(ParseError("").message, "bad.json: byte 0: empty input");
}

TEST(KinetoTraceTest, MissingTraceEventsIsMalformed) {
  // 31 bytes, the error at the end.
  const Error error = ParseError(R"({"schemaVersion": 1, "x": [{}]})");
  EXPECT_EQ(error.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(error.message, "bad.json: byte 31: no traceEvents array");
}

TEST(KinetoTraceTest, KernelWithBadTimesIsMalformed) {
  // Each event starts at byte 17.
  EXPECT_EQ(
      ParseError(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1}]})").message,
      "bad.json: byte 17: a kernel event's \"ts\" is not a number");
  EXPECT_EQ(ParseError(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]})").message,
            "bad.json: byte 17: a kernel event has no \"dur\"");
  EXPECT_EQ(ParseError(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]})").message,
            "bad.json: byte 17: a kernel event has a negative \"dur\"");
  EXPECT_EQ(ParseError(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "dur": 2}]})").message,
            "bad.json: byte 17: a cpu_op event has no \"ts\"");
}

TEST(KinetoTraceTest, InvalidEventJsonIsMalformed) {
  // The second event starts at byte 30.
  const Error error = ParseError(R"({"traceEvents": [{"ph": "M"}, {"ph": "X", "cat": }]})");
  EXPECT_EQ(error.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(error.message.rfind("bad.json: byte 30: the event is not valid JSON", 0), 0u) << error.message;
  // Mismatched brackets balance by count but are still caught.
  EXPECT_EQ(ParseError(R"({"traceEvents": [{"a": [1}]]})").message.rfind("bad.json: byte 17: ", 0), 0u);
  EXPECT_EQ(ParseError(R"({"traceEvents": [1]})").message, "bad.json: byte 17: an event is not a JSON object");
}

TEST(KinetoTraceTest, TextAfterTheObjectIsMalformed) {
  EXPECT_EQ(ParseError(R"({"traceEvents": []} x)").message, "bad.json: byte 20: text after the top-level object");
  EXPECT_EQ(ParseError(R"({"traceEvents": [] "x": 1})").message,
            "bad.json: byte 19: expected ',' or '}' after a value");
}

TEST(KinetoTraceTest, MissingFileIsAnIoError) {
  const std::string path = TempPath("does-not-exist.json");
  const Result<KernelTrace> trace = ReadKinetoTrace(path);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kIo);
  EXPECT_NE(trace.error().message.find(path), std::string::npos) << trace.error().message;

  const Result<KernelTrace> directory = ReadKinetoTrace(::testing::TempDir());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.error().code, ErrorCode::kIo) << directory.error().message;
}

TEST(KinetoTraceTest, TruncatedGzipIsMalformed) {
  std::string events;
  for (int i = 0; i < 2000; ++i) {
    if (i > 0) events += ",\n";
    events += kMmKernel;
  }
  const std::string text = Trace(events);
  const std::string whole = TempPath("whole.json.gz");
  const std::string cut = TempPath("cut.json.gz");
  WriteGzip(whole, text);
  const std::string bytes = ReadFile(whole);
  WriteFile(cut, bytes.substr(0, bytes.size() - 100));

  ASSERT_TRUE(ReadKinetoTrace(whole).ok());
  const Result<KernelTrace> trace = ReadKinetoTrace(cut);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kMalformedInput);
  EXPECT_NE(trace.error().message.find(cut + ": byte "), std::string::npos) << trace.error().message;
  EXPECT_NE(trace.error().message.find("truncated"), std::string::npos) << trace.error().message;

  // Cut inside the 8-byte trailer only: all the text is there, the check
  // sum is not. Still an error: the file is not what was written.
  WriteFile(cut, bytes.substr(0, bytes.size() - 4));
  const Result<KernelTrace> no_trailer = ReadKinetoTrace(cut);
  ASSERT_FALSE(no_trailer.ok());
  EXPECT_EQ(no_trailer.error().code, ErrorCode::kMalformedInput);
  std::filesystem::remove(whole);
  std::filesystem::remove(cut);
}

// Traces of other vendors' devices (tests/data/kineto/README.md): the reader
// says what the device is and what in the file says so.
TEST(KinetoTraceTest, RealAmdAndMtiaTracesNameTheirPlatform) {
  const std::string dir = std::string(OFU_TEST_DATA_DIR) + "/kineto/";
  // AMD-AGI/TraceLens, an MI300X under ROCm: HIP runtime calls, ROCm's keys
  // and the device's name all say so; the device's name is the evidence kept.
  const Result<KernelTrace> mi300x = ReadKinetoTrace(dir + "amd-tracelens-mi300x-bert-small-subset.json.gz");
  ASSERT_TRUE(mi300x.ok()) << mi300x.error().message;
  ASSERT_TRUE(mi300x->other_platform.has_value());
  EXPECT_EQ(mi300x->other_platform->vendor, "AMD");
  EXPECT_EQ(mi300x->other_platform->device, "AMD Instinct MI300X VF");
  EXPECT_EQ(mi300x->other_platform->evidence, "deviceProperties name \"AMD Instinct MI300X VF\"");
  // HTA's MI250 trace has no ROCm keys; its devices are "AMD Radeon Graphics".
  const Result<KernelTrace> mi250 = ReadKinetoTrace(dir + "hta-amd-mi250-minitoy-rocm62.json.gz");
  ASSERT_TRUE(mi250.ok()) << mi250.error().message;
  ASSERT_TRUE(mi250->other_platform.has_value());
  EXPECT_EQ(mi250->other_platform->vendor, "AMD");
  EXPECT_EQ(mi250->other_platform->device, "AMD Radeon Graphics");
  // HTA's MTIA inference trace: device "ARTEMIS" with MTIA's fields.
  const Result<KernelTrace> mtia = ReadKinetoTrace(dir + "hta-mtia-inference-subset.json.gz");
  ASSERT_TRUE(mtia.ok()) << mtia.error().message;
  ASSERT_TRUE(mtia->other_platform.has_value());
  EXPECT_EQ(mtia->other_platform->vendor, "Meta");
  EXPECT_EQ(mtia->other_platform->device, "ARTEMIS");
  EXPECT_TRUE(mtia->kernels.empty());
  // An NVIDIA trace says nothing of the kind.
  const Result<KernelTrace> a100 = ReadKinetoTrace(dir + "hta-alexnet-a100.json.gz");
  ASSERT_TRUE(a100.ok()) << a100.error().message;
  EXPECT_FALSE(a100->other_platform.has_value());
}

// A top-level ROCm key alone is evidence too (SYNTHETIC trace, the keys as
// PyTorch for ROCm writes them).
TEST(KinetoTraceTest, RocmTopLevelKeyNamesAmd) {
  const std::string path = TempPath("rocm.json");
  WriteFile(path, R"({"hip_runtime_version": 60443483, "traceEvents": []})");
  const Result<KernelTrace> trace = ReadKinetoTrace(path);
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  ASSERT_TRUE(trace->other_platform.has_value());
  EXPECT_EQ(trace->other_platform->vendor, "AMD");
  EXPECT_EQ(trace->other_platform->evidence, "hip_runtime_version 60443483");
  std::filesystem::remove(path);
}

// HTA's CUPTI range-profiler trace (A100): 77 "cuda_profiler_range" records
// and no kernel events. The reader keeps their names and says what they are,
// not that CUPTI's kernel records were lost.
TEST(KinetoTraceTest, RealRangeProfilerTraceIsNamedForWhatItIs) {
  const Result<KernelTrace> trace = ReadKinetoTrace(std::string(OFU_TEST_DATA_DIR) +
                                                    "/kineto/hta-cupti-range-profiler-a100-subset.json.gz");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_TRUE(trace->kernels.empty());
  ASSERT_EQ(trace->range_profiler_kernels.size(), 77u);
  EXPECT_EQ(trace->range_profiler_kernels.front().rfind("void at::native::(anonymous namespace)::distribution_", 0),
            0u);
  EXPECT_EQ(trace->range_profiler_kernels.back().rfind("void epilogue::impl::globalKernel<float", 0), 0u);
  bool named = false, lost = false;
  for (const std::string& note : trace->notes) {
    named = named || note.find("CUPTI's range profiler, not as kernel activity: 77 records") != std::string::npos;
    lost = lost || note.find("were lost") != std::string::npos;
  }
  EXPECT_TRUE(named);
  EXPECT_FALSE(lost);
  EXPECT_FALSE(trace->other_platform.has_value());
}

}  // namespace
}  // namespace ofu::formats
