// The example report of docs/html-report.md: writes a SYNTHETIC history
// store (made up here, not measured on any GPU) and the HTML report of it,
// with a synthetic OFU-vs-MFU scatter and the markers of the changes planted
// in the store, as the reconciliation and the regression scan will fill them.
//
//   html_report_example STORE.sqlite OUT.html
//
// The fleet: 24 h of 60 s windows on three nodes (2 x 8 H100 SXM5, 4 A100).
//   job 81234 alice train-llama-70b  node-a, all day, OFU ~0.42; a planted
//             2.5x regression (debug overhead) from 14:00 to 17:00
//   job 81240 bob   pretrain-moe     node-b, 02:00-20:00, OFU ~0.38, then
//             ~0.30 after a planted BF16 -> FP8 switch at 11:00; the agent
//             was down 09:00-09:40 (a gap)
//   job 81251 carol finetune-7b      node-c, 06:00-18:00, OFU ~0.28
//   job 81260 dave  eval-sweep       node-c, 19:00-23:00, OFU ~0.12
// Idle GPUs have OFU 0 (not busy).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ofu/analysis/html_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/history/history_reader.h"
#include "ofu/render/html_page.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sources/clock.h"

namespace {

constexpr double kT0 = 1789948800;  // 2026-09-21T00:00:00Z (synthetic)
constexpr double kWindowS = 60;

// Deterministic noise in [-1, 1].
class Noise {
 public:
  double Next() {
    state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state_ >> 11) / static_cast<double>(1ull << 52) - 1.0;
  }

 private:
  std::uint64_t state_ = 42;
};

struct Node {
  std::string hostname, model, sku, architecture;
  int gpus;
};

struct PlannedJob {
  std::string job_id, user, name;
  int node;
  double start_h, end_h;
};

// OFU of a busy GPU of `job` at hour `h` (the planted changes are here).
double PlannedOfu(const PlannedJob& job, double h, int gpu, Noise& noise) {
  double ofu = 0.28;
  if (job.job_id == "81234") ofu = h >= 14 && h < 17 ? 0.168 : 0.42;
  if (job.job_id == "81240") ofu = h < 11 ? 0.38 : 0.30;
  if (job.job_id == "81260") ofu = 0.12;
  return std::max(0.0, ofu * (1 + 0.04 * noise.Next()) - 0.01 * (gpu % 3));
}

int WriteStore(const std::string& path, ofu::sources::Clock& clock) {
  std::filesystem::remove(path);
  ofu::sinks::HistoryOptions options;
  options.path = path;
  options.full_resolution_days = 30;
  auto store = ofu::sinks::HistoryStore::Open(options, clock);
  if (!store.ok()) {
    fmt::print(stderr, "{}\n", store.error().message);
    return 1;
  }
  const std::vector<Node> nodes = {{"node-a", "NVIDIA H100 80GB HBM3", "h100-sxm5", "hopper", 8},
                                   {"node-b", "NVIDIA H100 80GB HBM3", "h100-sxm5", "hopper", 8},
                                   {"node-c", "NVIDIA A100-SXM4-40GB", "a100", "ampere", 4}};
  const std::vector<PlannedJob> jobs = {{"81234", "alice", "train-llama-70b", 0, 0, 24},
                                        {"81240", "bob", "pretrain-moe", 1, 2, 20},
                                        {"81251", "carol", "finetune-7b", 2, 6, 18},
                                        {"81260", "dave", "eval-sweep", 2, 19, 23}};
  Noise noise;
  for (int w = 1; w <= 24 * 60; ++w) {
    const double end_s = kT0 + w * kWindowS;
    const double h = (end_s - kT0) / 3600;
    ofu::sinks::WindowBatch batch;
    batch.end_s = end_s;
    batch.window_s = kWindowS;
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (n == 1 && h > 9 && h <= 9 + 40.0 / 60) continue;  // the agent on node-b was down
      const Node& node = nodes[n];
      const PlannedJob* running = nullptr;
      for (const PlannedJob& job : jobs) {
        if (job.node == static_cast<int>(n) && h > job.start_h && h <= job.end_h) running = &job;
      }
      for (int g = 0; g < node.gpus; ++g) {
        ofu::sinks::GpuWindow gpu;
        gpu.identity.uuid = fmt::format("GPU-{}-{:02d}-5e0c-synthetic", node.hostname, g);
        gpu.identity.key = gpu.identity.uuid;
        gpu.identity.gpu_index = std::to_string(g);
        gpu.identity.model = node.model;
        gpu.identity.hostname = node.hostname;
        gpu.sku = node.sku;
        gpu.architecture = node.architecture;
        gpu.window.start_s = end_s - kWindowS;
        gpu.window.end_s = end_s;
        gpu.window.covered_s = kWindowS;
        const double ofu = running ? PlannedOfu(*running, h, g, noise) : 0.0;
        gpu.window.ofu = ofu;
        gpu.window.busy = running != nullptr;
        gpu.window.tensor_active = ofu * 1830 / 1755;
        gpu.window.sm_clock_mhz = gpu.window.sm_clock_min_mhz = gpu.window.sm_clock_max_mhz = 1755.0;
        gpu.window.clock_readings = 1;
        if (running) {
          ofu::attribution::JobInfo info;
          info.job_id = running->job_id;
          info.user = running->user;
          info.job_name = running->name;
          info.scheduler = "slurm";
          batch.jobs[gpu.identity.uuid] = info;
        }
        batch.gpus.push_back(std::move(gpu));
      }
    }
    if (const auto status = (*store)->Consume(batch); !status.ok()) {
      fmt::print(stderr, "{}\n", status.error().message);
      return 1;
    }
  }
  return 0;
}

// A synthetic reconciliation: the four jobs above and 36 more, near the
// diagonal, two of them planted far from it.
ofu::analysis::MfuScatter SyntheticScatter() {
  Noise noise;
  ofu::analysis::MfuScatter scatter;
  scatter.note = "SYNTHETIC: made-up MFU log; reference precision BF16.";
  scatter.points = {{"81234", 0.40, 0.41, false, ""},
                    {"81240", 0.35, 0.34, false, ""},
                    {"81251", 0.28, 0.30, false, ""},
                    {"81260", 0.12, 0.11, false, ""}};
  for (int i = 0; i < 36; ++i) {
    const double expected = 0.12 + 0.4 * (0.5 + 0.5 * noise.Next());
    scatter.points.push_back({fmt::format("8{:04d}", 1300 + i), expected,
                              std::max(0.02, expected + 0.035 * noise.Next()), false, ""});
  }
  scatter.points.push_back({"81302", 0.31, 0.55, true,
                            "Reported MFU 1.8x above what the hardware did: FLOPs over-counted "
                            "(causal attention counted in full?)"});
  scatter.points.push_back({"81317", 0.44, 0.21, true,
                            "Reported MFU far below OFU: activation recomputation (OFU counts it, MFU does not) "
                            "or FLOPs under-counted"});
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0, abs_error = 0;
  for (const auto& p : scatter.points) {
    sx += p.expected_mfu, sy += p.reported_mfu;
    sxx += p.expected_mfu * p.expected_mfu, syy += p.reported_mfu * p.reported_mfu;
    sxy += p.expected_mfu * p.reported_mfu;
    abs_error += std::abs(p.reported_mfu - p.expected_mfu);
  }
  const double n = static_cast<double>(scatter.points.size());
  scatter.pearson_r = (n * sxy - sx * sy) / std::sqrt((n * sxx - sx * sx) * (n * syy - sy * sy));
  scatter.mean_abs_error = abs_error / n;
  return scatter;
}

std::vector<ofu::analysis::RegressionMarker> PlantedMarkers() {
  return {{"81234", "", kT0 + 14 * 3600, 0.42, 0.168, 0.4, "regression",
           "SYNTHETIC: planted 2.5x drop on all 8 GPUs of node-a (debug overhead)"},
          {"81234", "", kT0 + 17 * 3600, 0.168, 0.42, 2.5, "improvement", "SYNTHETIC: back to the earlier level"},
          {"81240", "GPU-node-b-00-5e0c-synthetic", kT0 + 11 * 3600, 0.38, 0.30, 0.3 / 0.38, "precision shift",
           "SYNTHETIC: HMMA BF16 share 97 % -> 12 %, FP8 share 0 % -> 85 %"}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fmt::print(stderr, "usage: html_report_example STORE.sqlite OUT.html\n");
    return 1;
  }
  ofu::sources::FakeClock clock(kT0);
  if (const int rc = WriteStore(argv[1], clock); rc != 0) return rc;
  auto history = ofu::history::ReadHistory(argv[1], {});
  auto specs = ofu::GpuSpecDatabase::Embedded();
  if (!history.ok() || !specs.ok()) {
    fmt::print(stderr, "cannot read back {}\n", argv[1]);
    return 1;
  }
  ofu::analysis::HtmlReportOptions options;
  options.title = "OFU report: example fleet";
  options.source = "example-history.sqlite (synthetic)";
  options.generated_at_s = kT0 + 86400 + 300;
  options.synthetic = true;
  auto view = ofu::analysis::BuildHtmlReportView(*history, ofu::analysis::BuildStoreReport(*history, *specs), options);
  view.scatter = SyntheticScatter();
  view.markers = PlantedMarkers();
  std::ofstream(argv[2], std::ios::binary) << ofu::render::RenderHtmlReport(view);
  return 0;
}
