// Throughput of the Prometheus text reader on a synthetic dcgm-exporter
// recording: 8 GPUs x 20 metrics with the full label set dcgm-exporter
// writes (as in tests/data/dcgm-exporter-sample.prom), HELP and TYPE before
// each family, millisecond timestamps, repeated scrapes; about 50 MB in all.
// The text is made in memory, so the figures are parsing only, no disk.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include "ofu/formats/prometheus_text.h"

namespace {

using ofu::formats::ReadPrometheusText;

constexpr std::size_t kTargetBytes = std::size_t{50} << 20;
constexpr int kGpus = 8;
constexpr std::int64_t kScrapeIntervalMs = 15'000;

struct Family {
  const char* name;
  const char* help;
  bool fractional;  // dcgm-exporter writes ratios as %f, the rest as integers
};

constexpr std::array<Family, 20> kFamilies = {{
    {"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", false},
    {"DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", false},
    {"DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", false},
    {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", false},
    {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", true},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", false},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "Total number of PCIe retries.", false},
    {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", false},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", false},
    {"DCGM_FI_DEV_ENC_UTIL", "Encoder utilization (in %).", false},
    {"DCGM_FI_DEV_DEC_UTIL", "Decoder utilization (in %).", false},
    {"DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", false},
    {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", false},
    {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", false},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "Total number of NVLink bandwidth counters for all lanes.", false},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", true},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "Ratio of cycles the tensor (HMMA) pipe is active.", true},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "Ratio of cycles the device memory interface is active sending or receiving data.",
     true},
    {"DCGM_FI_PROF_PCIE_TX_BYTES",
     "The rate of data transmitted over the PCIe bus - including both protocol headers and data payloads - in bytes per second.",
     false},
    {"DCGM_FI_PROF_PCIE_RX_BYTES",
     "The rate of data received over the PCIe bus - including both protocol headers and data payloads - in bytes per second.",
     false},
}};

// A fixed pseudo-random sequence, so every run parses the same bytes.
class Lcg {
 public:
  std::uint32_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state_ >> 33);
  }

 private:
  std::uint64_t state_ = 42;
};

std::string LabelSet(int gpu) {
  char labels[512];
  std::snprintf(labels, sizeof labels,
                "gpu=\"%d\",UUID=\"GPU-927d7444-b45a-7c49-8402-5e686e46a0%02d\","
                "pci_bus_id=\"00000000:%02X:00.0\",device=\"nvidia%d\","
                "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"6d6d7dc3ce21\","
                "DCGM_FI_DRIVER_VERSION=\"535.183.01\"",
                gpu, gpu, 0x18 + gpu * 0x10, gpu);
  return labels;
}

std::string MakeDcgmExporterText(std::size_t target_bytes) {
  std::array<std::string, kGpus> label_sets;
  for (int gpu = 0; gpu < kGpus; ++gpu) label_sets[gpu] = LabelSet(gpu);

  std::string text;
  text.reserve(target_bytes + (64 << 10));
  Lcg random;
  std::int64_t timestamp_ms = 1'700'000'000'000;
  char line[1024];
  while (text.size() < target_bytes) {
    for (const Family& family : kFamilies) {
      text += "# HELP ";
      text += family.name;
      text += ' ';
      text += family.help;
      text += "\n# TYPE ";
      text += family.name;
      text += " gauge\n";
      for (int gpu = 0; gpu < kGpus; ++gpu) {
        const std::uint32_t r = random.Next();
        const int written = family.fractional ? std::snprintf(line, sizeof line, "%s{%s} %f %lld\n", family.name,
                                                              label_sets[gpu].c_str(), (r % 1'000'000) / 1e6,
                                                              static_cast<long long>(timestamp_ms))
                                              : std::snprintf(line, sizeof line, "%s{%s} %u %lld\n", family.name,
                                                              label_sets[gpu].c_str(), r % 100'000,
                                                              static_cast<long long>(timestamp_ms));
        text.append(line, static_cast<std::size_t>(written));
      }
    }
    timestamp_ms += kScrapeIntervalMs;
  }
  return text;
}

const std::string& BenchText() {
  static const std::string text = MakeDcgmExporterText(kTargetBytes);
  return text;
}

// Touches what a real consumer would, so nothing is optimised away.
class CountingVisitor : public ofu::formats::TextVisitor {
 public:
  void OnSample(const ofu::formats::TextSample& sample) override {
    ++samples;
    value_sum += sample.value;
    label_count += sample.labels.size();
  }

  std::size_t samples = 0;
  std::size_t label_count = 0;
  double value_sum = 0;
};

void ReportThroughput(benchmark::State& state, std::size_t bytes, std::size_t samples) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
}

void BM_ReadStringView(benchmark::State& state) {
  const std::string& text = BenchText();
  std::size_t samples = 0;
  for (auto _ : state) {
    CountingVisitor visitor;
    const auto result = ReadPrometheusText(std::string_view(text), "bench.prom", visitor);
    if (!result.ok()) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    samples += result->samples;
    benchmark::DoNotOptimize(visitor.value_sum);
  }
  ReportThroughput(state, BenchText().size(), samples);
}
BENCHMARK(BM_ReadStringView)->Unit(benchmark::kMillisecond);

void BM_ReadIstream(benchmark::State& state) {
  const std::string& text = BenchText();
  std::istringstream in(text);
  std::size_t samples = 0;
  for (auto _ : state) {
    in.clear();
    in.seekg(0);
    CountingVisitor visitor;
    const auto result = ReadPrometheusText(in, "bench.prom", visitor);
    if (!result.ok()) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
    samples += result->samples;
    benchmark::DoNotOptimize(visitor.value_sum);
  }
  ReportThroughput(state, text.size(), samples);
}
BENCHMARK(BM_ReadIstream)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
