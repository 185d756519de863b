#include "ofu/simulation/fleet_sim.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ofu/core/gpu_share.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/non_tensor.h"
#include "ofu/core/precision.h"
#include "ofu/formats/csv.h"
#include "ofu/formats/exposition.h"
#include "ofu/formats/mfu_log.h"
#include "ofu/sinks/history_store.h"
#include "ofu/sources/clock.h"

namespace ofu::simulation {
namespace {

namespace fs = std::filesystem;

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
    for (size_t i = v.size(); i > 1; --i)
      std::swap(v[i - 1], v[static_cast<size_t>(Uniform() * static_cast<double>(i))]);
  }

 private:
  std::mt19937_64 engine_;
};

// What one GPU did in one window.
struct GpuState {
  int job = -1;  // index into jobs, -1: idle
  double ofu = 0;
  double hmma_share = 1, imma_share = 0;
  double fp32_active = 0;  // CUDA-core FP32 pipe
};

// FP32 pipe activity of a job's windows; the non_tensor_work job's (its
// matmuls on the CUDA cores) and its OFU level, which that leaves near 0.
constexpr double kFp32Active = 0.05;
constexpr double kNonTensorFp32Active = 0.7;
constexpr double kNonTensorOfuLevel = 0.02;

std::string Uuid(int gpu) { return fmt::format("GPU-sim-{:04}", gpu); }

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Error::Io("{}: cannot write", path.string());
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

// How the jobs tile the fleet: `groups` groups of GPUs, each running
// `slots` jobs back to back, `windows` windows in all.
struct Layout {
  int groups = 0;
  int slots = 0;
  int windows = 0;
  bool run_regression = false;  // `ofu regress` needs 3 runs on each side
};

// The jobs chosen to carry a plant (see fleet_sim.h).
struct Plants {
  std::optional<int> regressed;  // OFU drops half-way
  std::optional<int> switched;   // tensor time moves from HMMA to IMMA half-way
};

// The counters an agent would export for one GPU, summed from the start
// (core/output_counters.h).
using Counters = CounterValues;
using CounterHistory = std::vector<std::vector<Counters>>;  // [gpu][k]: after k windows (k = 0: all zero)
using GpuStates = std::vector<std::vector<GpuState>>;       // [gpu][window]

Status CheckOptions(const FleetSimOptions& options) {
  if (options.gpus < 1 || options.gpus_per_job < 1 || options.gpus % options.gpus_per_job != 0 || options.jobs < 1 ||
      options.windows_per_job < 4 || !(options.window_s >= 1) || options.window_s != std::floor(options.window_s)) {
    return Error::InvalidArgument(
        "fleet simulation: gpus must be a multiple of gpus_per_job, jobs >= 1, windows_per_job >= 4 and "
        "window_s a whole number of seconds");
  }
  if (options.openmetrics_slice_s != 0 && (!(options.openmetrics_slice_s >= options.window_s) ||
                                           options.openmetrics_slice_s != std::floor(options.openmetrics_slice_s))) {
    return Error::InvalidArgument(
        "fleet simulation: the OpenMetrics slice must be 0 (one file) or whole seconds, at least one window");
  }
  return OkStatus();
}

Layout LayoutOf(const FleetSimOptions& options) {
  Layout layout;
  layout.groups = options.gpus / options.gpus_per_job;
  layout.slots = (options.jobs + layout.groups - 1) / layout.groups;
  layout.windows = layout.slots * options.windows_per_job;
  layout.run_regression = layout.slots >= 6;
  return layout;
}

std::string Hostname(const FleetSimOptions& options, int gpu) {
  return fmt::format("sim-node-{:03}", gpu / options.gpus_per_job);
}

// The jobs, into truth.jobs: job j runs on group j % groups in slot j /
// groups. Group 0 runs one job name when there are runs enough for a
// regression across runs. Returns the jobs that may carry the other plants.
std::vector<int> PlanJobs(const FleetSimOptions& options, const Layout& layout, Random& random, FleetTruth& truth) {
  std::vector<int> candidates;
  double nightly_level = 0;
  for (int j = 0; j < options.jobs; ++j) {
    PlantedJob job;
    const int group = j % layout.groups, slot = j / layout.groups;
    const bool nightly = group == 0 && layout.run_regression;
    job.job_id = fmt::format("sim-{:05}", j + 1);
    job.job_name = nightly ? "nightly-finetune" : fmt::format("pretrain-{:05}", j + 1);
    for (int g = 0; g < options.gpus_per_job; ++g) job.gpus.push_back(Uuid(group * options.gpus_per_job + g));
    job.start_s = options.start_s + slot * options.windows_per_job * options.window_s;
    job.end_s = job.start_s + options.windows_per_job * options.window_s;
    job.ofu_level = random.Uniform(0.15, 0.55);
    // Runs of one job name do the same work: the same level, give or take 3 %.
    if (nightly) {
      if (slot == 0) nightly_level = job.ofu_level;
      job.ofu_level = nightly_level * (1 + 0.03 * random.Normal());
    }
    job.reference_precision = random.Uniform() < 0.25 ? "fp8" : "bf16";
    job.correction_file = j % 3 != 2;
    job.factor = job.correction_file ? random.Uniform(0.85, 0.98) : 1.0;
    if (nightly && slot >= layout.slots / 2) job.ofu_level *= kRegressionRatio;
    if (!nightly) candidates.push_back(j);
    truth.jobs.push_back(job);
  }
  if (layout.run_regression) {
    truth.run_regressions.push_back(
        {"nightly-finetune",
         truth.jobs[static_cast<size_t>(layout.slots / 2) * static_cast<size_t>(layout.groups)].job_id,
         kRegressionRatio});
  }
  return candidates;
}

// Shuffles the candidates and gives the first four a FLOPs miscalculation
// each (plant, ratio reported / done); the next two get the regression and
// the precision switch.
Plants PlantChanges(std::vector<int> candidates, Random& random, FleetTruth& truth) {
  random.Shuffle(candidates);
  const std::pair<const char*, double> kBugs[] = {{"causal_attention_full", 1.6},
                                                  {"moe_total_params", 4.5},
                                                  {"wrong_precision_peak", 2.0},
                                                  {"recomputation", 0.75},
                                                  {"non_tensor_work", 10.0}};
  Plants plants;
  for (size_t i = 0; i < candidates.size(); ++i) {
    PlantedJob& job = truth.jobs[static_cast<size_t>(candidates[i])];
    if (i < std::size(kBugs)) {
      job.plant = kBugs[i].first;
      job.planted_ratio = kBugs[i].second;
      job.recompute = job.plant == std::string("recomputation");
      if (job.plant == std::string("wrong_precision_peak")) job.reference_precision = "fp8";
      // FP32 GEMMs on the CUDA cores: tensor pipes near idle, the FP32 pipe
      // busy, and an MFU the application counts from its model FLOPs.
      if (job.plant == std::string("non_tensor_work")) job.ofu_level = kNonTensorOfuLevel;
    } else if (i == std::size(kBugs)) {
      plants.regressed = candidates[i];
    } else if (i == std::size(kBugs) + 1) {
      plants.switched = candidates[i];
    }
  }
  return plants;
}

// Every window of every GPU; for each job, in job order, its windows' OFU
// and then its MFU (the draws interleave so, and the files depend on it).
GpuStates SimulateWindows(const FleetSimOptions& options, const Layout& layout, const Plants& plants, Random& random,
                          FleetTruth& truth) {
  const int half = options.windows_per_job / 2;
  GpuStates states(static_cast<size_t>(options.gpus), std::vector<GpuState>(static_cast<size_t>(layout.windows)));
  for (int j = 0; j < options.jobs; ++j) {
    PlantedJob& job = truth.jobs[static_cast<size_t>(j)];
    const int group = j % layout.groups, first = (j / layout.groups) * options.windows_per_job;
    double ofu_sum = 0;
    int ofu_count = 0;
    for (int g = 0; g < options.gpus_per_job; ++g) {
      const int gpu = group * options.gpus_per_job + g;
      for (int w = 0; w < options.windows_per_job; ++w) {
        GpuState& s = states[static_cast<size_t>(gpu)][static_cast<size_t>(first) + static_cast<size_t>(w)];
        s.job = j;
        const double level = job.ofu_level * (plants.regressed == j && w >= half ? kRegressionRatio : 1.0);
        s.ofu = std::max(0.0, level * (1 + options.ofu_noise * random.Normal()));
        s.hmma_share = plants.switched == j && w >= half ? 0.3 : 0.97;
        s.imma_share = 1 - s.hmma_share;
        s.fp32_active = job.plant == "non_tensor_work" ? kNonTensorFp32Active : kFp32Active;
        ofu_sum += s.ofu;
        ++ofu_count;
      }
    }
    const double half_end = job.start_s + half * options.window_s;
    if (plants.regressed == j) {
      truth.regressions.push_back({job.job_id, job.job_name, half_end, kRegressionRatio, "ofu", job.gpus});
    }
    if (plants.switched == j) {
      truth.precision_shifts.push_back({job.job_id, job.job_name, half_end, 1.0, "hmma->imma", job.gpus});
    }
    job.realised_ofu = ofu_sum / ofu_count;
    job.expected_mfu = job.realised_ofu * job.factor;
    job.reported_mfu = job.expected_mfu * job.planted_ratio * (1 + options.mfu_noise * random.Normal());
  }
  return states;
}

// What the agent would have made of GPU `gpu`'s window: identity, counters
// and OFU.
sinks::GpuWindow WindowOf(const FleetSimOptions& options, const GpuSpec& spec, int gpu, const GpuState& s,
                          double end_s) {
  const double spec_mhz = spec.SpecClockMhz();
  sinks::GpuWindow window;
  window.identity.key = window.identity.uuid = Uuid(gpu);
  window.identity.model = "NVIDIA H100 80GB HBM3";
  window.identity.hostname = Hostname(options, gpu);
  window.identity.gpu_index = std::to_string(gpu % options.gpus_per_job);
  window.sku = spec.id;
  window.architecture = spec.architecture;
  window.spec_clock_mhz = spec_mhz;
  OfuWindow& o = window.window;
  o.start_s = end_s - options.window_s;
  o.end_s = end_s;
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
  o.non_tensor[CudaCorePipe::kFp32] = s.fp32_active;
  GpuIdentity whole;
  CompleteNonTensor(o.non_tensor, o.sm_clock_mhz, OfuScaleOf(spec, whole).non_tensor);
  return window;
}

// `previous` plus one stored window's increments.
Counters Advance(Counters next, const history::StoredWindow& row) {
  next.Add(row.counters);
  return next;
}

// OpenMetrics for backfill, one file per slice of time: a family's samples
// together, each series in time order, timestamps in seconds. Sample k is
// the counters after k windows, at start_s + k·window_s.
//
// Why slices: promtool 2.42 re-reads its whole input once for every 2 h
// block it writes, so a week in one file is read 84 times. A file per
// 2 h-aligned slice is read once. Slices are written as soon as the store
// has passed them, so a backfill can consume them while the simulation
// goes on, and only one slice's counters are held.
class OpenMetricsSlices {
 public:
  OpenMetricsSlices(const FleetSimOptions& options, const GpuSpec& spec, const GpuStates& states,
                    const FleetTruth& truth, const fs::path& out_dir)
      : options_(options), spec_(spec), states_(states), truth_(truth), out_dir_(out_dir) {}

  // The samples of slice [k_first, k_last]; counters[gpu][k - k_first].
  Status Write(int k_first, int k_last, const CounterHistory& counters) {
    const fs::path path = options_.openmetrics_slice_s > 0
                              ? out_dir_ / fmt::format("metrics-{:.0f}.om", SliceStartS(options_, TimeS(k_first)))
                              : out_dir_ / "metrics.om";
    // Written under another name and renamed when whole, so that a reader
    // waiting for slices never sees half of one.
    const fs::path part = fs::path(path).concat(".part");
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    std::string text;
    const auto flush = [&] {
      out << text;
      text.clear();
    };
    // Each sample time formatted once: fmt's fixed-precision path for a
    // 1.8e9 s time is slow (big-integer digits), and every counter of every
    // GPU repeats the same times.
    std::vector<std::string> times;
    times.reserve(static_cast<std::size_t>(k_last - k_first) + 1);
    for (int k = k_first; k <= k_last; ++k) times.push_back(fmt::format("{:.3f}", TimeS(k)));
    const auto time_at = [&](int k) -> const std::string& { return times[static_cast<std::size_t>(k - k_first)]; };
    if (k_first == 0) {
      text += fmt::format("# TYPE ofu_synthetic_fleet gauge\n# HELP ofu_synthetic_fleet {}\n", kSynthetic);
      text += fmt::format("ofu_synthetic_fleet{} 1 {}\n",
                          Labels({{"generator", "ofu-fleet-sim"}, {"seed", std::to_string(options_.seed)}}),
                          time_at(0));
    }
    // Each counter of the table, a family's samples GPU by GPU. A GPU that
    // does not export a counter has no series of it: a pipe counter exists from the first
    // window that had it (here: HMMA/IMMA on every GPU from the start, DFMA
    // on even GPUs), which the slice's last sample, after at least one
    // window, shows; the GPU then has it at every sample, 0 before.
    for (std::size_t id = 0; id < OutputCounterTable::Builtin().size(); ++id) {
      const OutputCounter& row = OutputCounterTable::Builtin()[id];
      text += fmt::format("# TYPE {0} counter\n# HELP {0} {0} (SYNTHETIC)\n", row.metric);
      const std::string sample_name = row.sample_name();
      for (int gpu = 0; gpu < options_.gpus; ++gpu) {
        const std::vector<Counters>& samples = counters[static_cast<size_t>(gpu)];
        if (!samples.back().has(id)) continue;
        const std::string labels = GpuLabels(gpu);
        for (int k = k_first; k <= k_last; ++k) {
          const double v = samples[static_cast<size_t>(k - k_first)].value_or_0(id) * row.metric_scale;
          text += fmt::format("{}{} {} {}\n", sample_name, labels, v, time_at(k));
        }
        if (text.size() > kFlushBytes) flush();
      }
    }
    text += "# TYPE ofu_gpu_info gauge\n# HELP ofu_gpu_info The GPU's model, SKU and architecture (SYNTHETIC).\n";
    for (int gpu = 0; gpu < options_.gpus; ++gpu) {
      const std::string labels = Labels({{"uuid", Uuid(gpu)},
                                         {"gpu", std::to_string(gpu % options_.gpus_per_job)},
                                         {"instance", Hostname(options_, gpu)},
                                         {"model", "NVIDIA H100 80GB HBM3"},
                                         {"sku", spec_.id},
                                         {"architecture", spec_.architecture}});
      for (int k = k_first; k <= k_last; ++k) text += fmt::format("ofu_gpu_info{} 1 {}\n", labels, time_at(k));
      if (text.size() > kFlushBytes) flush();
    }
    text += "# TYPE ofu_gpu_job_info gauge\n# HELP ofu_gpu_job_info The job on the GPU (SYNTHETIC).\n";
    for (int gpu = 0; gpu < options_.gpus; ++gpu) {
      for (int j = 0; j < options_.jobs; ++j) {
        const PlantedJob& job = truth_.jobs[static_cast<size_t>(j)];
        if (job.end_s < TimeS(k_first) || job.start_s > TimeS(k_last)) continue;
        if (std::find(job.gpus.begin(), job.gpus.end(), Uuid(gpu)) == job.gpus.end()) continue;
        const std::string labels = Labels({{"uuid", Uuid(gpu)},
                                           {"job_id", job.job_id},
                                           {"user", "synthetic"},
                                           {"job_name", job.job_name},
                                           {"scheduler", "synthetic"},
                                           {"instance", Hostname(options_, gpu)}});
        for (int k = std::max(k_first, 1); k <= k_last; ++k) {
          if (states_[static_cast<size_t>(gpu)][static_cast<size_t>(k - 1)].job == j) {
            text += fmt::format("ofu_gpu_job_info{} 1 {}\n", labels, time_at(k));
          }
        }
      }
      if (text.size() > kFlushBytes) flush();
    }
    text += "# EOF\n";
    flush();
    out.close();
    if (!out) return Error::Io("{}: cannot write", part.string());
    std::error_code ec;
    fs::rename(part, path, ec);
    if (ec) return Error::Io("{}: cannot rename to {}: {}", part.string(), path.string(), ec.message());
    files_.push_back(path.string());
    return OkStatus();
  }

  // The slice a sample at `time_s` falls in: [SliceStartS, SliceStartS + slice_s).
  static double SliceStartS(const FleetSimOptions& options, double time_s) {
    return options.openmetrics_slice_s > 0
               ? std::floor(time_s / options.openmetrics_slice_s) * options.openmetrics_slice_s
               : 0;
  }

  double TimeS(int k) const { return options_.start_s + k * options_.window_s; }
  std::vector<std::string> files() const { return files_; }

 private:
  static constexpr size_t kFlushBytes = 16u << 20;

  std::string GpuLabels(int gpu) const {
    return Labels({{"uuid", Uuid(gpu)},
                   {"gpu", std::to_string(gpu % options_.gpus_per_job)},
                   {"instance", Hostname(options_, gpu)}});
  }

  const FleetSimOptions& options_;
  const GpuSpec& spec_;
  const GpuStates& states_;
  const FleetTruth& truth_;
  fs::path out_dir_;
  std::vector<std::string> files_;
};

// The store at `path`, through the agent's own writer, window by window,
// and the counters' running sums, computed with the store's rule, into
// `openmetrics` slice by slice.
Status WriteStore(const FleetSimOptions& options, const Layout& layout, const GpuSpec& spec, const GpuStates& states,
                  const FleetTruth& truth, const std::string& path, OpenMetricsSlices& openmetrics) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix, ec);
  sources::FakeClock clock(options.start_s);
  sinks::HistoryOptions store_options;
  store_options.path = path;
  store_options.retention_days = 3650;  // keep it all: the data is old on purpose
  store_options.full_resolution_days = 3650;
  OFU_ASSIGN_OR_RETURN(auto store, sinks::HistoryStore::Open(store_options, clock));

  // counters[gpu][k - k_first]: the slice's samples, after k windows;
  // latest[gpu]: the last sample, which the next window advances.
  int k_first = 0;
  CounterHistory counters(static_cast<size_t>(options.gpus), std::vector<Counters>(1));
  std::vector<Counters> latest(static_cast<size_t>(options.gpus));
  for (int w = 0; w < layout.windows; ++w) {
    sinks::WindowBatch batch;
    batch.window_s = options.window_s;
    batch.end_s = options.start_s + (w + 1) * options.window_s;
    batch.notes.push_back(kSynthetic);
    for (int gpu = 0; gpu < options.gpus; ++gpu) {
      const GpuState& s = states[static_cast<size_t>(gpu)][static_cast<size_t>(w)];
      sinks::GpuWindow window = WindowOf(options, spec, gpu, s, batch.end_s);
      if (s.job >= 0) {
        const PlantedJob& job = truth.jobs[static_cast<size_t>(s.job)];
        attribution::JobInfo info;
        info.job_id = job.job_id;
        info.user = "synthetic";
        info.job_name = job.job_name;
        info.scheduler = "synthetic";
        batch.jobs[window.key()] = info;
      }
      const history::StoredWindow row = sinks::RowOfWindow(window, batch.end_s, batch.window_s);
      Counters& last = latest[static_cast<size_t>(gpu)];
      last = Advance(last, row);
      counters[static_cast<size_t>(gpu)].push_back(last);
      batch.gpus.push_back(std::move(window));
    }
    clock.SleepS(options.window_s);
    OFU_RETURN_IF_ERROR((store)->Consume(batch));

    // Sample k = w + 1 is known: close the slice if the next sample starts another.
    const int k = w + 1;
    const bool last = k == layout.windows;
    if (last || OpenMetricsSlices::SliceStartS(options, openmetrics.TimeS(k + 1)) !=
                    OpenMetricsSlices::SliceStartS(options, openmetrics.TimeS(k_first))) {
      OFU_RETURN_IF_ERROR(openmetrics.Write(k_first, k, counters));
      for (auto& samples : counters) samples.clear();
      k_first = k + 1;
    }
  }
  return OkStatus();
}

// The MFU log (reconcile's --mfu) as CSV, and one correction file per job
// that has one, into `corrections_dir` (emptied first).
Result<std::string> WriteCorrections(const FleetSimOptions& options, const FleetTruth& truth,
                                     const std::string& corrections_dir) {
  std::error_code ec;
  std::string csv = fmt::format("# {} (seed {})\njob_id,mfu,reference_precision,recompute\n", kSynthetic, options.seed);
  for (const auto& entry : fs::directory_iterator(corrections_dir, ec)) fs::remove(entry.path(), ec);
  for (const PlantedJob& job : truth.jobs) {
    csv += fmt::format("{},{},{},{}\n", formats::CsvField(job.job_id), job.reported_mfu, job.reference_precision,
                       job.recompute ? "true" : "false");
    if (!job.correction_file) continue;
    const std::optional<Precision> precision = PrecisionFromName(job.reference_precision);
    formats::JobCorrection correction;
    correction.reference_precision = precision;
    correction.factor = job.factor;
    correction.mfu_scale = 1.0;
    if (precision) correction.precision_mix.push_back({*precision, 1.0, *precision == Precision::kFp8 ? 2.0 : 1.0});
    OFU_RETURN_IF_ERROR(WriteText(fs::path(corrections_dir) / (job.job_id + ".json"),
                                  formats::CorrectionJson(correction, kSynthetic)));
  }
  return csv;
}

}  // namespace

Result<FleetTruth> SimulateFleet(const FleetSimOptions& options, const std::string& out_dir) {
  OFU_RETURN_IF_ERROR(CheckOptions(options));
  OFU_ASSIGN_OR_RETURN(auto specs, GpuSpecDatabase::Embedded());
  OFU_ASSIGN_OR_RETURN(auto spec, specs.Lookup("h100-sxm5"));

  std::error_code ec;
  fs::create_directories(fs::path(out_dir) / "corrections", ec);
  if (ec) return Error::Io("{}: cannot create: {}", out_dir, ec.message());

  // The plan and the windows: every random draw, in a fixed order.
  FleetTruth truth;
  truth.options = options;
  Random random(options.seed);
  const Layout layout = LayoutOf(options);
  truth.end_s = options.start_s + layout.windows * options.window_s;
  const Plants plants = PlantChanges(PlanJobs(options, layout, random, truth), random, truth);
  const GpuStates states = SimulateWindows(options, layout, plants, random, truth);

  // The files.
  truth.store = (fs::path(out_dir) / "history.sqlite").string();
  OpenMetricsSlices openmetrics(options, *spec, states, truth, out_dir);
  OFU_RETURN_IF_ERROR(WriteStore(options, layout, *spec, states, truth, truth.store, openmetrics));
  truth.openmetrics = openmetrics.files();
  truth.corrections_dir = (fs::path(out_dir) / "corrections").string();
  OFU_ASSIGN_OR_RETURN(auto mfu_log, WriteCorrections(options, truth, truth.corrections_dir));
  truth.mfu_log = (fs::path(out_dir) / "mfu.csv").string();
  OFU_RETURN_IF_ERROR(WriteText(truth.mfu_log, mfu_log));
  return truth;
}

}  // namespace ofu::simulation
