// Fleet analysis benchmarks on SYNTHETIC data made here.
//
//   BM_ParseMfuLog/100000        an MFU log of 100k jobs (CSV) parsed
//   BM_StoreReport/100000        per-job totals of 100k jobs (1 GPU, 8 rows each)
//   BM_Reconcile/100000          reconciliation of 100k jobs (flags, statistics)
//   BM_ReconcileJson/100000      its --format json output
//   BM_GenerateGpuDay            the generator alone: one GPU-day of 1 s
//                                windows (86,400 OFU values), 3 % noise
//   BM_ScanGpuDay                generator + change-point scan of one GPU-day
//   BM_ScanGpuDays/10000         10k GPU-days (864M windows) streamed one day
//                                at a time: never more than one day in memory;
//                                every 100th day has a planted 2.5x drop, and
//                                the counters say how many were found
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ofu/analysis/reconcile.h"
#include "ofu/analysis/regress.h"
#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/formats/mfu_log.h"
#include "ofu/render/reconcile_output.h"

namespace {

using namespace ofu;

constexpr int kWindowsPerDay = 86400;

// One GPU-day of window OFU into `out` (reused): level 0.4, 3 % noise, and a
// 2.5x drop at noon when `plant`.
class DayGenerator {
 public:
  explicit DayGenerator(std::uint64_t seed) : rng_(seed) {}
  void Fill(std::vector<double>& out, bool plant) {
    out.resize(kWindowsPerDay);
    for (int i = 0; i < kWindowsPerDay; ++i) {
      const double level = plant && i >= kWindowsPerDay / 2 ? 0.4 / 2.5 : 0.4;
      out[static_cast<size_t>(i)] = level * (1 + 0.03 * normal_(rng_));
    }
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0, 1};
};

std::string MfuCsv(int jobs) {
  std::string csv = "job_id,mfu,reference_precision,recompute\n";
  for (int j = 0; j < jobs; ++j) csv += fmt::format("job-{},{},bf16,false\n", j, 0.2 + 0.3 * (j % 100) / 100.0);
  return csv;
}

history::StoredHistory History(int jobs) {
  history::StoredHistory h;
  h.path = "synthetic";
  for (int j = 0; j < jobs; ++j) {
    history::StoredGpu gpu;
    gpu.id = j + 1;
    gpu.identity.key = fmt::format("GPU-{}", j);
    gpu.sku = "h100-sxm5";
    h.gpus.push_back(gpu);
    for (int w = 1; w <= 8; ++w) {
      history::StoredWindow row;
      row.gpu_id = gpu.id;
      row.end_s = 60.0 * w;
      row.span_s = row.up_s = 60;
      row.counters.Set(ofu::kCounterObserved, 60);
      row.counters.Set(ofu::kCounterBusy, 60);
      const double utilized_s = 60 * (0.2 + 0.3 * (j % 100) / 100.0);
      row.counters.Set(ofu::kCounterUtilized, utilized_s);
      row.counters.Set(ofu::kCounterBusyUtilized, utilized_s);
      h.windows.push_back(row);
    }
    history::StoredJob job;
    job.gpu_id = gpu.id;
    job.job_id = fmt::format("job-{}", j);
    job.start_s = 0;
    job.end_s = 480;
    h.jobs.push_back(job);
  }
  return h;
}

void BM_ParseMfuLog(benchmark::State& state) {
  const std::string csv = MfuCsv(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    auto log = formats::ParseMfuLog(csv, "mfu.csv");
    benchmark::DoNotOptimize(log);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(csv.size()));
}
BENCHMARK(BM_ParseMfuLog)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_StoreReport(benchmark::State& state) {
  const auto history = History(static_cast<int>(state.range(0)));
  const auto specs = *GpuSpecDatabase::Embedded();
  for (auto _ : state) {
    auto report = analysis::BuildStoreReport(history, specs);
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_StoreReport)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_Reconcile(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  const auto history = History(jobs);
  const auto specs = *GpuSpecDatabase::Embedded();
  const auto store = analysis::BuildStoreReport(history, specs);
  const auto log = *formats::ParseMfuLog(MfuCsv(jobs), "mfu.csv");
  for (auto _ : state) {
    auto report = analysis::Reconcile(history, store, log, {}, &specs, {});
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(state.iterations() * jobs);
}
BENCHMARK(BM_Reconcile)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_ReconcileJson(benchmark::State& state) {
  const int jobs = static_cast<int>(state.range(0));
  const auto history = History(jobs);
  const auto specs = *GpuSpecDatabase::Embedded();
  const auto store = analysis::BuildStoreReport(history, specs);
  const auto report = analysis::Reconcile(history, store, *formats::ParseMfuLog(MfuCsv(jobs), "mfu.csv"), {}, &specs,
                                          {});
  for (auto _ : state) {
    auto json = render::RenderReconcileJson(report);
    benchmark::DoNotOptimize(json);
  }
  state.SetItemsProcessed(state.iterations() * jobs);
}
BENCHMARK(BM_ReconcileJson)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_GenerateGpuDay(benchmark::State& state) {
  DayGenerator generator(1);
  std::vector<double> day;
  for (auto _ : state) {
    generator.Fill(day, false);
    benchmark::DoNotOptimize(day.data());
  }
  state.SetItemsProcessed(state.iterations() * kWindowsPerDay);
}
BENCHMARK(BM_GenerateGpuDay)->Unit(benchmark::kMillisecond);

void BM_ScanGpuDay(benchmark::State& state) {
  DayGenerator generator(2);
  std::vector<double> day;
  for (auto _ : state) {
    generator.Fill(day, false);
    auto changes = analysis::DetectChanges(day, {});
    benchmark::DoNotOptimize(changes);
  }
  state.SetItemsProcessed(state.iterations() * kWindowsPerDay);
}
BENCHMARK(BM_ScanGpuDay)->Unit(benchmark::kMillisecond);

void BM_ScanGpuDays(benchmark::State& state) {
  const int days = static_cast<int>(state.range(0));
  std::vector<double> day;
  long long found = 0, planted = 0, false_alarms = 0;
  for (auto _ : state) {
    DayGenerator generator(3);
    found = planted = false_alarms = 0;
    for (int d = 0; d < days; ++d) {
      const bool plant = d % 100 == 0;
      generator.Fill(day, plant);
      const auto changes = analysis::DetectChanges(day, {});
      planted += plant;
      if (plant) {
        found += changes.size() == 1;
      } else {
        false_alarms += static_cast<long long>(changes.size());
      }
    }
  }
  state.SetItemsProcessed(state.iterations() * days * static_cast<int64_t>(kWindowsPerDay));
  state.counters["gpu_days"] = days;
  state.counters["planted"] = static_cast<double>(planted);
  state.counters["found"] = static_cast<double>(found);
  state.counters["false_alarms"] = static_cast<double>(false_alarms);
}
BENCHMARK(BM_ScanGpuDays)->Arg(10000)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
