#include "ofu/simulation/fleet_sim.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <optional>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/core/gpu_spec.h"
#include "ofu/formats/exposition.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sources/clock.h"

namespace ofu::simulation {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kSynthetic = "SYNTHETIC data from ofu-fleet-sim, not measured on a GPU";
constexpr double kClockMhz = 1755;  // a steady, slightly power-capped H100 SXM5
constexpr double kRegressionRatio = 1 / 2.5;

// mt19937_64 is specified bit for bit; the std distributions are not, so
// draw uniforms and normals here to keep files identical across libraries.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double Uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * Uniform(); }
  double Normal() {  // Box-Muller
    const double u1 = 1 - Uniform(), u2 = Uniform();
    return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
  }
  template <typename T>
  void Shuffle(std::vector<T>& v) {  // Fisher-Yates
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<size_t>(Uniform() * static_cast<double>(i))]);
  }

 private:
  std::mt19937_64 engine_;
};

// What one GPU did in one window.
struct GpuState {
  int job = -1;  // index into jobs, -1: idle
  double ofu = 0;
  double hmma_share = 1, imma_share = 0;
};

std::string Uuid(int gpu) { return fmt::format("GPU-sim-{:04}", gpu); }

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Error{ErrorCode::kIo, fmt::format("{}: cannot write", path.string())};
  return OkStatus();
}

std::string Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> labels) {
  std::string out = "{";
  for (const auto& [name, value] : labels) {
    if (out.size() > 1) out += ',';
    out += name;
    out += "=\"";
    formats::AppendEscapedLabelValue(out, value);
    out += '"';
  }
  return out + "}";
}

}  // namespace

Result<FleetTruth> SimulateFleet(const FleetSimOptions& options, const std::string& out_dir) {
  if (options.gpus < 1 || options.gpus_per_job < 1 || options.gpus % options.gpus_per_job != 0 || options.jobs < 1 ||
      options.windows_per_job < 4 || !(options.window_s >= 1) || options.window_s != std::floor(options.window_s)) {
    return Error{ErrorCode::kInvalidArgument,
                 "fleet simulation: gpus must be a multiple of gpus_per_job, jobs >= 1, windows_per_job >= 4 and "
                 "window_s a whole number of seconds"};
  }
  auto specs = GpuSpecDatabase::Embedded();
  if (!specs.ok()) return specs.error();
  auto spec = specs->Lookup("h100-sxm5");
  if (!spec.ok()) return spec.error();
  const double spec_mhz = (*spec)->SpecClockMhz();

  std::error_code ec;
  fs::create_directories(fs::path(out_dir) / "corrections", ec);
  if (ec) return Error{ErrorCode::kIo, fmt::format("{}: cannot create: {}", out_dir, ec.message())};

  FleetTruth truth;
  truth.options = options;
  Random random(options.seed);
  const int groups = options.gpus / options.gpus_per_job;
  const int slots = (options.jobs + groups - 1) / groups;
  const int windows = slots * options.windows_per_job;
  truth.end_s = options.start_s + windows * options.window_s;
  const bool run_regression = slots >= 6;  // `ofu regress` needs 3 runs on each side

  // Jobs: job j runs on group j % groups in slot j / groups.
  std::vector<int> candidates;
  double nightly_level = 0;
  for (int j = 0; j < options.jobs; ++j) {
    PlantedJob job;
    const int group = j % groups, slot = j / groups;
    job.job_id = fmt::format("sim-{:05}", j + 1);
    job.job_name = group == 0 && run_regression ? "nightly-finetune" : fmt::format("pretrain-{:05}", j + 1);
    for (int g = 0; g < options.gpus_per_job; ++g) job.gpus.push_back(Uuid(group * options.gpus_per_job + g));
    job.start_s = options.start_s + slot * options.windows_per_job * options.window_s;
    job.end_s = job.start_s + options.windows_per_job * options.window_s;
    job.ofu_level = random.Uniform(0.15, 0.55);
    // Runs of one job name do the same work: the same level, give or take 3 %.
    if (group == 0 && run_regression) {
      if (slot == 0) nightly_level = job.ofu_level;
      job.ofu_level = nightly_level * (1 + 0.03 * random.Normal());
    }
    job.reference_precision = random.Uniform() < 0.25 ? "fp8" : "bf16";
    job.correction_file = j % 3 != 2;
    job.factor = job.correction_file ? random.Uniform(0.85, 0.98) : 1.0;
    if (group == 0 && run_regression && slot >= slots / 2) job.ofu_level *= kRegressionRatio;
    if (group != 0 || !run_regression) candidates.push_back(j);
    truth.jobs.push_back(job);
  }
  if (run_regression) {
    truth.run_regressions.push_back({"nightly-finetune", truth.jobs[static_cast<size_t>((slots / 2) * groups)].job_id,
                                     kRegressionRatio});
  }
  random.Shuffle(candidates);
  // (plant, ratio reported / done) for the first four candidates; then the
  // regression and the precision switch.
  const std::pair<const char*, double> kBugs[] = {
      {"causal_attention_full", 1.6}, {"moe_total_params", 4.5}, {"wrong_precision_peak", 2.0}, {"recomputation", 0.75}};
  std::optional<int> regressed, switched;
  for (size_t i = 0; i < candidates.size(); ++i) {
    PlantedJob& job = truth.jobs[static_cast<size_t>(candidates[i])];
    if (i < std::size(kBugs)) {
      job.plant = kBugs[i].first;
      job.planted_ratio = kBugs[i].second;
      job.recompute = job.plant == std::string("recomputation");
      if (job.plant == std::string("wrong_precision_peak")) job.reference_precision = "fp8";
    } else if (i == std::size(kBugs)) {
      regressed = candidates[i];
    } else if (i == std::size(kBugs) + 1) {
      switched = candidates[i];
    }
  }

  // Every window of every GPU.
  const int half = options.windows_per_job / 2;
  std::vector<std::vector<GpuState>> states(static_cast<size_t>(options.gpus), std::vector<GpuState>(static_cast<size_t>(windows)));
  std::vector<double> ofu_sum(truth.jobs.size(), 0.0);
  std::vector<int> ofu_count(truth.jobs.size(), 0);
  for (int j = 0; j < options.jobs; ++j) {
    PlantedJob& job = truth.jobs[static_cast<size_t>(j)];
    const int group = j % groups, first = (j / groups) * options.windows_per_job;
    for (int g = 0; g < options.gpus_per_job; ++g) {
      const int gpu = group * options.gpus_per_job + g;
      for (int w = 0; w < options.windows_per_job; ++w) {
        GpuState& s = states[static_cast<size_t>(gpu)][static_cast<size_t>(first + w)];
        s.job = j;
        const double level = job.ofu_level * (regressed == j && w >= half ? kRegressionRatio : 1.0);
        s.ofu = std::max(0.0, level * (1 + options.ofu_noise * random.Normal()));
        s.hmma_share = switched == j && w >= half ? 0.3 : 0.97;
        s.imma_share = 1 - s.hmma_share;
        ofu_sum[static_cast<size_t>(j)] += s.ofu;
        ++ofu_count[static_cast<size_t>(j)];
      }
    }
    const double half_end = job.start_s + half * options.window_s;
    if (regressed == j) truth.regressions.push_back({job.job_id, job.job_name, half_end, kRegressionRatio, "ofu", job.gpus});
    if (switched == j) {
      truth.precision_shifts.push_back({job.job_id, job.job_name, half_end, 1.0, "hmma->imma", job.gpus});
    }
    job.realised_ofu = ofu_sum[static_cast<size_t>(j)] / ofu_count[static_cast<size_t>(j)];
    job.expected_mfu = job.realised_ofu * job.factor;
    job.reported_mfu = job.expected_mfu * job.planted_ratio * (1 + options.mfu_noise * random.Normal());
  }

  // The store, through the agent's own writer; and the counters' running sums.
  truth.store = (fs::path(out_dir) / "history.sqlite").string();
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(truth.store + suffix, ec);
  sources::FakeClock clock(options.start_s);
  sinks::HistoryOptions store_options;
  store_options.path = truth.store;
  store_options.retention_days = 3650;  // keep it all: the data is old on purpose
  store_options.full_resolution_days = 3650;
  auto store = sinks::HistoryStore::Open(store_options, clock);
  if (!store.ok()) return store.error();

  struct Counters {
    double observed = 0, utilized = 0, busy = 0, busy_utilized = 0, tensor = 0;
    std::optional<double> hmma, imma, dfma;
  };
  // [gpu][k]: counters after k windows (k = 0: the start, all zero).
  std::vector<std::vector<Counters>> counters(static_cast<size_t>(options.gpus), std::vector<Counters>(1));
  for (int w = 0; w < windows; ++w) {
    sinks::WindowBatch batch;
    batch.window_s = options.window_s;
    batch.end_s = options.start_s + (w + 1) * options.window_s;
    batch.notes.push_back(kSynthetic);
    for (int gpu = 0; gpu < options.gpus; ++gpu) {
      const GpuState& s = states[static_cast<size_t>(gpu)][static_cast<size_t>(w)];
      sinks::GpuWindow window;
      window.identity.key = window.identity.uuid = Uuid(gpu);
      window.identity.model = "NVIDIA H100 80GB HBM3";
      window.identity.hostname = fmt::format("sim-node-{:03}", gpu / options.gpus_per_job);
      window.identity.gpu_index = std::to_string(gpu % options.gpus_per_job);
      window.sku = (*spec)->id;
      window.architecture = (*spec)->architecture;
      window.spec_clock_mhz = spec_mhz;
      OfuWindow& o = window.window;
      o.start_s = batch.end_s - options.window_s;
      o.end_s = batch.end_s;
      o.covered_s = options.window_s;
      o.sm_clock_mhz = o.sm_clock_min_mhz = o.sm_clock_max_mhz = kClockMhz;
      o.clock_readings = 1;
      o.tensor_active = s.ofu * spec_mhz / kClockMhz;
      o.gr_engine_active = s.job >= 0 ? 0.95 : 0.0;
      o.ofu = s.ofu;
      o.busy = s.job >= 0;
      window.pipes.hmma = *o.tensor_active * s.hmma_share;
      window.pipes.imma = *o.tensor_active * s.imma_share;
      if (gpu % 2 == 0) window.pipes.dfma = 0.0;
      if (s.job >= 0) {
        const PlantedJob& job = truth.jobs[static_cast<size_t>(s.job)];
        attribution::JobInfo info;
        info.job_id = job.job_id;
        info.user = "synthetic";
        info.job_name = job.job_name;
        info.scheduler = "synthetic";
        batch.jobs[window.key()] = info;
      }
      const sinks::StoredWindow row = sinks::RowOfWindow(window, batch.end_s, batch.window_s);
      Counters next = counters[static_cast<size_t>(gpu)].back();
      next.observed += row.observed_s;
      next.utilized += row.utilized_s;
      next.busy += row.busy_s;
      next.busy_utilized += row.busy_utilized_s;
      next.tensor += row.tensor_active_s;
      if (row.hmma_active_s) next.hmma = next.hmma.value_or(0) + *row.hmma_active_s;
      if (row.imma_active_s) next.imma = next.imma.value_or(0) + *row.imma_active_s;
      if (row.dfma_active_s) next.dfma = next.dfma.value_or(0) + *row.dfma_active_s;
      counters[static_cast<size_t>(gpu)].push_back(next);
      batch.gpus.push_back(std::move(window));
    }
    clock.SleepS(options.window_s);
    if (Status s = (*store)->Consume(batch); !s.ok()) return s.error();
  }
  store->reset();

  // OpenMetrics for backfill: a family's samples together, each series in
  // time order, timestamps in seconds.
  std::string om;
  const auto time_at = [&](int k) { return fmt::format("{:.3f}", options.start_s + k * options.window_s); };
  const auto gpu_labels = [&](int gpu) {
    return Labels({{"uuid", Uuid(gpu)}, {"gpu", std::to_string(gpu % options.gpus_per_job)},
                   {"instance", fmt::format("sim-node-{:03}", gpu / options.gpus_per_job)}});
  };
  om += fmt::format("# TYPE ofu_synthetic_fleet gauge\n# HELP ofu_synthetic_fleet {}\n", kSynthetic);
  om += fmt::format("ofu_synthetic_fleet{} 1 {}\n", Labels({{"generator", "ofu-fleet-sim"}, {"seed", std::to_string(options.seed)}}),
                    time_at(0));
  const auto counter_family = [&](const char* name, auto value_of) {
    om += fmt::format("# TYPE {} counter\n# HELP {} {} (SYNTHETIC)\n", name, name, name);
    for (int gpu = 0; gpu < options.gpus; ++gpu) {
      const std::string labels = gpu_labels(gpu);
      for (int k = 0; k <= windows; ++k) {
        const std::optional<double> v = value_of(counters[static_cast<size_t>(gpu)][static_cast<size_t>(k)]);
        if (v) om += fmt::format("{}_total{} {} {}\n", name, labels, *v, time_at(k));
      }
    }
  };
  using C = const Counters&;
  counter_family("ofu_utilized_seconds", [](C c) { return std::optional(c.utilized); });
  counter_family("ofu_observed_seconds", [](C c) { return std::optional(c.observed); });
  counter_family("ofu_busy_seconds", [](C c) { return std::optional(c.busy); });
  counter_family("ofu_busy_utilized_seconds", [](C c) { return std::optional(c.busy_utilized); });
  counter_family("ofu_tensor_active_seconds", [](C c) { return std::optional(c.tensor); });
  // A pipe counter exists from the first window that had it (here: from the
  // start for HMMA/IMMA on every GPU, DFMA on even GPUs).
  const auto pipe = [&](std::optional<double> Counters::*field, int gpu, int k) -> std::optional<double> {
    const auto& list = counters[static_cast<size_t>(gpu)];
    if (list.size() > 1 && list[1].*field) return (list[static_cast<size_t>(k)].*field).value_or(0);
    return std::nullopt;
  };
  for (auto [name, field] : {std::pair{"ofu_hmma_active_seconds", &Counters::hmma},
                             std::pair{"ofu_imma_active_seconds", &Counters::imma},
                             std::pair{"ofu_dfma_active_seconds", &Counters::dfma}}) {
    om += fmt::format("# TYPE {} counter\n# HELP {} {} (SYNTHETIC)\n", name, name, name);
    for (int gpu = 0; gpu < options.gpus; ++gpu) {
      const std::string labels = gpu_labels(gpu);
      for (int k = 0; k <= windows; ++k) {
        if (auto v = pipe(field, gpu, k)) om += fmt::format("{}_total{} {} {}\n", name, labels, *v, time_at(k));
      }
    }
  }
  om += "# TYPE ofu_gpu_info gauge\n# HELP ofu_gpu_info The GPU's model, SKU and architecture (SYNTHETIC).\n";
  for (int gpu = 0; gpu < options.gpus; ++gpu) {
    const std::string labels =
        Labels({{"uuid", Uuid(gpu)}, {"gpu", std::to_string(gpu % options.gpus_per_job)},
                {"instance", fmt::format("sim-node-{:03}", gpu / options.gpus_per_job)},
                {"model", "NVIDIA H100 80GB HBM3"}, {"sku", (*spec)->id}, {"architecture", (*spec)->architecture}});
    for (int k = 0; k <= windows; ++k) om += fmt::format("ofu_gpu_info{} 1 {}\n", labels, time_at(k));
  }
  om += "# TYPE ofu_gpu_job_info gauge\n# HELP ofu_gpu_job_info The job on the GPU (SYNTHETIC).\n";
  for (int gpu = 0; gpu < options.gpus; ++gpu) {
    for (int j = 0; j < options.jobs; ++j) {
      const PlantedJob& job = truth.jobs[static_cast<size_t>(j)];
      if (std::find(job.gpus.begin(), job.gpus.end(), Uuid(gpu)) == job.gpus.end()) continue;
      const std::string labels =
          Labels({{"uuid", Uuid(gpu)}, {"job_id", job.job_id}, {"user", "synthetic"}, {"job_name", job.job_name},
                  {"scheduler", "synthetic"}, {"instance", fmt::format("sim-node-{:03}", gpu / options.gpus_per_job)}});
      for (int k = 1; k <= windows; ++k) {
        if (states[static_cast<size_t>(gpu)][static_cast<size_t>(k - 1)].job == j) {
          om += fmt::format("ofu_gpu_job_info{} 1 {}\n", labels, time_at(k));
        }
      }
    }
  }
  om += "# EOF\n";
  truth.openmetrics = (fs::path(out_dir) / "metrics.om").string();
  if (Status s = WriteText(truth.openmetrics, om); !s.ok()) return s.error();

  // The MFU log and the corrections.
  std::string csv = fmt::format("# {} (seed {})\njob_id,mfu,reference_precision,recompute\n", kSynthetic, options.seed);
  truth.corrections_dir = (fs::path(out_dir) / "corrections").string();
  for (const auto& entry : fs::directory_iterator(truth.corrections_dir, ec)) fs::remove(entry.path(), ec);
  for (const PlantedJob& job : truth.jobs) {
    csv += fmt::format("{},{},{},{}\n", job.job_id, job.reported_mfu, job.reference_precision,
                       job.recompute ? "true" : "false");
    if (!job.correction_file) continue;
    const double rate = job.reference_precision == "fp8" ? 2.0 : 1.0;
    const json correction = {{"synthetic", kSynthetic},
                             {"reference_precision", job.reference_precision},
                             {"factor", job.factor},
                             {"mfu_scale", 1.0},
                             {"precision_mix", json::array({{{"precision", job.reference_precision},
                                                             {"tensor_time_share", 1.0},
                                                             {"relative_rate", rate}}})}};
    if (Status s = WriteText(fs::path(truth.corrections_dir) / (job.job_id + ".json"), correction.dump(2) + "\n");
        !s.ok()) {
      return s.error();
    }
  }
  truth.mfu_log = (fs::path(out_dir) / "mfu.csv").string();
  if (Status s = WriteText(truth.mfu_log, csv); !s.ok()) return s.error();

  // The ground truth.
  json jobs = json::array();
  for (const PlantedJob& job : truth.jobs) {
    jobs.push_back({{"job_id", job.job_id}, {"job_name", job.job_name}, {"gpus", job.gpus}, {"start_s", job.start_s},
                    {"end_s", job.end_s}, {"ofu_level", job.ofu_level}, {"realised_ofu", job.realised_ofu},
                    {"factor", job.factor}, {"correction_file", job.correction_file},
                    {"reference_precision", job.reference_precision}, {"recompute", job.recompute},
                    {"expected_mfu", job.expected_mfu}, {"reported_mfu", job.reported_mfu}, {"plant", job.plant},
                    {"planted_ratio", job.planted_ratio}});
  }
  const auto changes = [](const std::vector<PlantedChange>& list) {
    json out = json::array();
    for (const PlantedChange& c : list) {
      out.push_back({{"job_id", c.job_id}, {"job_name", c.job_name}, {"time_s", c.time_s}, {"ratio", c.ratio},
                     {"what", c.what}, {"gpus", c.gpus}});
    }
    return out;
  };
  json runs = json::array();
  for (const PlantedRunChange& r : truth.run_regressions) {
    runs.push_back({{"job_name", r.job_name}, {"first_job_id", r.first_job_id}, {"ratio", r.ratio}});
  }
  const json ground = {{"synthetic", kSynthetic},
                       {"generator", "ofu-fleet-sim"},
                       {"options", {{"seed", options.seed}, {"gpus", options.gpus}, {"gpus_per_job", options.gpus_per_job},
                                    {"jobs", options.jobs}, {"windows_per_job", options.windows_per_job},
                                    {"window_s", options.window_s}, {"start_s", options.start_s},
                                    {"ofu_noise", options.ofu_noise}, {"mfu_noise", options.mfu_noise}}},
                       {"end_s", truth.end_s},
                       {"jobs", jobs},
                       {"regressions", changes(truth.regressions)},
                       {"precision_shifts", changes(truth.precision_shifts)},
                       {"run_regressions", runs}};
  truth.ground_truth = (fs::path(out_dir) / "ground_truth.json").string();
  if (Status s = WriteText(truth.ground_truth, ground.dump(2) + "\n"); !s.ok()) return s.error();
  return truth;
}

}  // namespace ofu::simulation
