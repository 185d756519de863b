// Throughput of the PyTorch profiler (Kineto) trace reader on a synthetic
// trace of about 256 MB: for each of ~170,000 launches one cpu_op (with
// "Input Dims", "Input type", strides and concrete inputs, as record_shapes
// writes them), one cuda_runtime call and one kernel with the full set of
// kernel args, laid out and named as PyTorch 2.x writes them. About half the
// ops are GEMM ops. The trace is written to a temporary file, plain and
// gzipped, without ever being held whole in memory, so the peak RSS counter
// is the reader's own (plus the program's baseline).
//
// The figures count uncompressed bytes, for both files.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "ofu/formats/kineto_trace.h"

namespace {

using ofu::formats::KernelTrace;
using ofu::formats::ReadKinetoTrace;

constexpr std::uint64_t kTargetBytes = std::uint64_t{256} << 20;

struct OpKind {
  const char* op;
  const char* dims;
  const char* types;
  const char* kernel;
};

// Names as real traces spell them; the shapes are a transformer layer's.
constexpr std::array<OpKind, 8> kOps = {{
    {"aten::mm", "[[8192, 4096], [4096, 4096]]", R"(["c10::BFloat16", "c10::BFloat16"])",
     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"},
    {"aten::addmm", "[[4096], [8192, 4096], [4096, 11008], [], []]",
     R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"])",
     "nvjet_tst_192x192_64x4_2x1_v_bz_coopA_TNT"},
    {"aten::bmm", "[[256, 128, 64], [256, 64, 128]]", R"(["c10::BFloat16", "c10::BFloat16"])",
     "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)"},
    {"aten::linear", "[[8, 1024, 4096], [4096, 4096], [4096]]",
     R"(["c10::BFloat16", "c10::BFloat16", "c10::BFloat16"])",
     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas"},
    {"aten::add", "[[8, 1024, 4096], [8, 1024, 4096], []]", R"(["c10::BFloat16", "c10::BFloat16", "Scalar"])",
     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)"},
    {"aten::copy_", "[[8, 1024, 4096], [8, 1024, 4096], []]", R"(["c10::BFloat16", "float", "Scalar"])",
     "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)"},
    {"aten::_softmax", "[[8, 32, 1024, 1024], [], []]", R"(["c10::BFloat16", "Scalar", "Scalar"])",
     "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 10, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)"},
    {"aten::native_layer_norm", "[[8, 1024, 4096], [], [4096], [4096], []]",
     R"(["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"])",
     "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"},
}};

struct BenchFiles {
  std::string plain;
  std::string gzip;
  std::uint64_t bytes = 0;
  std::uint64_t kernels = 0;
};

// Writes one launch (op, runtime call, kernel) in Kineto's layout.
int FormatLaunch(char* out, std::size_t size, std::uint64_t i) {
  const OpKind& kind = kOps[i % kOps.size()];
  const std::uint64_t ts = 1'000'000 + i * 40;
  const std::uint64_t external_id = 1000 + i;
  const std::uint64_t correlation = 50'000 + i;
  return std::snprintf(
      out, size,
      "  {\n"
      "    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 2871, \"tid\": 2871,\n"
      "    \"ts\": %llu.%03u, \"dur\": 21.450,\n"
      "    \"args\": {\n"
      "      \"External id\": %llu,\"Record function id\": 0, \"Ev Idx\": %llu, \"Input Dims\": %s, "
      "\"Input type\": %s, \"Input Strides\": [[4096, 1], [1, 4096]], \"Concrete Inputs\": [\"\", \"\"], "
      "\"Fwd thread id\": 0, \"Sequence number\": %llu\n"
      "    }\n"
      "  },\n"
      "  {\n"
      "    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 2871, \"tid\": 2871,\n"
      "    \"ts\": %llu.%03u, \"dur\": 6.113,\n"
      "    \"args\": {\n"
      "      \"External id\": %llu,\n"
      "      \"cbid\": 211, \"correlation\": %llu\n"
      "    }\n"
      "  },\n"
      "  {\n"
      "    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n"
      "    \"ts\": %llu.%03u, \"dur\": 18.304,\n"
      "    \"args\": {\n"
      "      \"External id\": %llu,\n"
      "      \"queued\": 0, \"device\": 0, \"context\": 1,\n"
      "      \"stream\": 7, \"correlation\": %llu,\n"
      "      \"registers per thread\": 168,\n"
      "      \"shared memory\": 213248,\n"
      "      \"blocks per SM\": 0.969697,\n"
      "      \"warps per SM\": 11.636364,\n"
      "      \"grid\": [128, 1, 1],\n"
      "      \"block\": [384, 1, 1],\n"
      "      \"est. achieved occupancy %%\": 18\n"
      "    }\n"
      "  }",
      kind.op, static_cast<unsigned long long>(ts), static_cast<unsigned>(i % 1000),
      static_cast<unsigned long long>(external_id), static_cast<unsigned long long>(i), kind.dims, kind.types,
      static_cast<unsigned long long>(i) / 3, static_cast<unsigned long long>(ts) + 5, static_cast<unsigned>(i % 1000),
      static_cast<unsigned long long>(external_id), static_cast<unsigned long long>(correlation), kind.kernel,
      static_cast<unsigned long long>(ts) + 30, static_cast<unsigned>(i % 1000),
      static_cast<unsigned long long>(external_id), static_cast<unsigned long long>(correlation));
}

// Writes the trace to both files a piece at a time.
BenchFiles MakeFiles() {
  BenchFiles files;
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string stem = "ofu_kineto_bench_" + std::to_string(::getpid());
  files.plain = (dir / (stem + ".json")).string();
  files.gzip = (dir / (stem + ".json.gz")).string();
  std::FILE* plain = std::fopen(files.plain.c_str(), "wb");
  gzFile gzip = gzopen(files.gzip.c_str(), "wb6");
  if (plain == nullptr || gzip == nullptr) {
    std::fprintf(stderr, "cannot write %s or %s\n", files.plain.c_str(), files.gzip.c_str());
    std::exit(1);
  }
  std::string piece;
  auto flush = [&](bool force) {
    if (!force && piece.size() < (std::size_t{1} << 20)) return;
    std::fwrite(piece.data(), 1, piece.size(), plain);
    gzwrite(gzip, piece.data(), static_cast<unsigned>(piece.size()));
    files.bytes += piece.size();
    piece.clear();
  };
  piece +=
      "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, \"name\": \"NVIDIA "
      "H100 80GB HBM3\", \"totalGlobalMem\": 84929347584,\n      \"computeMajor\": 9, \"computeMinor\": 0,\n"
      "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": "
      "65536, \"warpSize\": 32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n    }\n  ],\n"
      "  \"traceEvents\": [\n";
  char buffer[8192];
  for (std::uint64_t i = 0; files.bytes + piece.size() < kTargetBytes; ++i) {
    if (i > 0) piece += ",\n";
    const int n = FormatLaunch(buffer, sizeof buffer, i);
    piece.append(buffer, static_cast<std::size_t>(n));
    ++files.kernels;
    flush(false);
  }
  piece += "\n  ],\n  \"traceName\": \"synthetic_bench.json\"\n}\n";
  flush(true);
  std::fclose(plain);
  gzclose(gzip);
  return files;
}

const BenchFiles& Files() {
  static const BenchFiles files = MakeFiles();
  return files;
}

double PeakRssMiB() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void ReadOne(benchmark::State& state, const std::string& path) {
  const BenchFiles& files = Files();
  std::size_t kernels = 0;
  for (auto _ : state) {
    const ofu::Result<KernelTrace> trace = ReadKinetoTrace(path);
    if (!trace.ok()) {
      state.SkipWithError(trace.error().message.c_str());
      return;
    }
    kernels = trace->kernels.size();
    benchmark::DoNotOptimize(kernels);
  }
  if (kernels != files.kernels) state.SkipWithError("wrong kernel count");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * files.bytes));
  state.counters["kernels/s"] = benchmark::Counter(static_cast<double>(state.iterations() * kernels),
                                                   benchmark::Counter::kIsRate);
  state.counters["trace_MB"] = static_cast<double>(files.bytes) / 1e6;
  state.counters["stored_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  state.counters["peak_rss_MiB"] = PeakRssMiB();
}

void BM_ReadKinetoPlain(benchmark::State& state) { ReadOne(state, Files().plain); }
void BM_ReadKinetoGzip(benchmark::State& state) { ReadOne(state, Files().gzip); }

BENCHMARK(BM_ReadKinetoPlain)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ReadKinetoGzip)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::fprintf(stderr, "baseline peak RSS before any read: %.1f MiB\n", PeakRssMiB());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove(Files().plain);
  std::filesystem::remove(Files().gzip);
  return 0;
}
