// The OFU report: per GPU and overall, of a recording (BuildReport, here) or
// of stored history (store_report.h, which also fills history_read and jobs).
// It is the one report model; each output format has one writer
// (render/report_output.h).
//
// For each GPU of the recording: find its SKU in the spec database (or use
// the --gpu-model override), cut its samples into windows, and summarize.
// When the recording carries phases, the per-phase table beside them.
// The overall summary weighs every GPU-second the same, and a MIG instance's
// seconds by its share of the GPU (core/gpu_share.h).
//
// Partial answers: a GPU whose model is not in the database, or that has no
// model name, or whose counters are missing, gets no OFU (absent, never a
// guessed f_spec) and a problem that says what to do; every other GPU gets
// its full answer. FleetCoverage says how many GPUs and GPU-seconds the overall
// figures stand for and which were left out. With ReportOptions::strict an
// unknown model fails the whole report with kUnknownModel instead (the error
// names the file to extend), for scripts that want all or nothing.
//
// Thread-safety: pure function of its inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ofu/analysis/phase_table.h"
#include "ofu/core/aggregate.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/core/windows.h"
#include "ofu/history/history_reader.h"
#include "ofu/sources/replay.h"

namespace ofu::analysis {

struct ReportOptions {
  WindowOptions windows;
  // The SKU every GPU is treated as: --gpu-model, resolved once by the
  // command (cli::ResolveGpuModel) and never looked up again by name. It
  // must point into the database BuildReport is given. Null: each GPU's
  // model as the data name it.
  const GpuSpec* gpu_model = nullptr;
  bool strict = false;  // an unknown model fails the report
  // Use the reported SM clock as it is, even for a board with a measured
  // clock model (core/clock_model.h): to compare with dashboards that do.
  bool reported_clock = false;
};

struct GpuReport {
  GpuIdentity identity;
  std::string model;              // the model used: the data's, or the id of ReportOptions::gpu_model
  const GpuSpec* spec = nullptr;  // into the database; null when the model is unknown
  // Its share of the physical GPU (gpu_share.h): 1 for a whole GPU; absent
  // without a spec or for a MIG profile the database does not list.
  std::optional<double> share;
  WindowedGpu windowed;
  Summary summary;
  std::vector<std::string> problems;  // why figures are absent, for people
};

// What the overall figures stand for. A device (GPU or MIG instance) is in
// them when it has a share (so a SKU) and at least one window with an OFU.
struct FleetCoverage {
  int gpus = 0;            // devices in the input
  int gpus_with_ofu = 0;   // of them, in the overall figures
  double gpu_seconds = 0;  // their seconds with an OFU, weighted by share (= overall.seconds)
  // Seconds of data (windows with tensor activity or a clock reading) that
  // the overall figures do not include, unweighted: devices left out, and
  // windows of included devices that lack a counter. A window with tensor
  // activity counts its covered seconds; one with clock readings alone
  // counts one nominal sampling interval per reading (at most its length),
  // so a single 30 s scrape is 30 s of data, not a whole window.
  double seconds_left_out = 0;
  std::vector<std::string> left_out;  // keys of the devices with data that are not in the overall
};

// Adds devices to the overall figures and counts what they cover; one place
// for the recording's report and the store's.
class OverallBuilder {
 public:
  // `gpu` has its share set when its OFU counts (absent: left out);
  // `windows` are all of its windows.
  void Add(const GpuReport& gpu, const std::vector<OfuWindow>& windows);
  // The same without holding a GPU's windows: AddWindow for each of them,
  // then EndGpu; one GPU at a time.
  void AddWindow(const GpuReport& gpu, const OfuWindow& window);
  // Windows summed already (a store's rollup): the same as AddWindow of each.
  void AddTotals(const GpuReport& gpu, const WindowTotals& totals);
  // The clock sources of a GPU's windows added as sums (Summarizer::AddClockSources),
  // counted when the GPU is.
  void AddClockSources(const GpuReport& gpu, std::uint8_t sources) {
    if (gpu.share) summarizer_.AddClockSources(sources);
  }
  void EndGpu(const GpuReport& gpu);
  Summary FinishSummary() const { return summarizer_.Finish(); }
  const FleetCoverage& coverage() const { return coverage_; }

 private:
  Summarizer summarizer_;
  FleetCoverage coverage_;
  // The GPU being added: any window in the figures, and its seconds left out.
  bool any_ofu_ = false;
  double left_out_ = 0;
};

// One job's totals over the range of a report of stored history
// (store_report.h says how each is summed).
struct JobTotals {
  std::string job_id;
  std::string user;
  std::string job_name;
  std::string scheduler;
  int gpus = 0;
  int gpus_left_out = 0;
  double gpu_hours = 0;
  std::optional<double> ofu;
  std::optional<double> active_ofu;
  double observed_hours = 0;
  NonTensorFigures non_tensor;
};

// How a report of stored history was read (`--store`, `--prometheus`).
struct HistoryRead {
  history::HistoryQuery query;  // its path is the report's source_name
  // How the figures were made: "windows" (summed here from the rows of the
  // store, or from Prometheus's raw samples) or "counters" (Prometheus summed
  // the agent's counters; BuildTotalsReport).
  std::string method = "windows";
  // > 0: the windows were made every this many seconds from the counters
  // (Prometheus over a long range, PrometheusQueryOptions::step_s), not
  // taken from each scrape; percentiles are of these windows. The
  // history's StoredHistory::step_s.
  double step_s = 0;
  // > 0: this many of the windows were read as `rollups` hourly sums of the
  // store (history/history_rollup.h): percentiles within half a histogram bin.
  std::int64_t rollups = 0;
  std::int64_t windows_in_rollups = 0;
};

struct Report {
  std::string source_name;
  std::optional<bool> synthetic;
  std::string description;
  bool timestamps_assumed = false;
  double assumed_interval_s = 0;
  bool dcgmi_dmon = false;  // the input was a `dcgmi dmon` table (Recording::dcgmi_dmon): scrapes are its intervals
  std::size_t scrapes = 0;  // in a file without timestamps (Recording::scrapes); else 0
  double window_s = 0;
  std::vector<GpuReport> gpus;
  Summary overall;
  FleetCoverage coverage;
  // When the recording carries phases: each phase on each GPU (phase_table.h),
  // MIG parents left out as from the overall figures. Empty when it carries none.
  std::vector<PhaseRow> phases;
  std::vector<std::string> notes;  // about the input as a whole, for people
  // The names of the counters added to the counter table the recording was
  // read with (core/sample.h), in the table's order: each GPU's summary has
  // its mean in Summary::added, or lacks it. Empty for the built-in table.
  std::vector<std::string> added_counters;
  // A report of stored history (the store or Prometheus; store_report.h):
  // how it was read, and its jobs' totals by job id. Absent and empty for a
  // recording replayed.
  std::optional<HistoryRead> history_read;
  std::vector<JobTotals> jobs;
};

// What to do about the counters OFU needs that the data lack: names each
// missing one (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM_FI_DEV_SM_CLOCK) and
// gives the line of dcgm-exporter's counters file that enables it
// (sources::DcgmExporterCountersLine). Empty when neither is missing.
std::string MissingCountersAdvice(bool tensor_missing, bool clock_missing);

// Sets gpu.spec and gpu.share: `given` when it is not null (--gpu-model,
// already resolved; gpu.model becomes its id), else gpu.model's SKU in
// `specs`, with a problem when either is unknown. Error only with `strict`
// and a model the database lacks.
Status ResolveSpec(GpuReport& gpu, const GpuSpec* given, const GpuSpecDatabase& specs, bool strict);

// kNoData when the recording at `input` gave no GPU (naming how many
// samples it read and the counters to enable) or no GPU an OFU. OK otherwise.
Status CheckReportHasOfu(const Report& report, const std::string& input, std::size_t samples_read);

// `specs` must outlive the returned report (GpuReport::spec points into it).
Result<Report> BuildReport(const sources::Recording& recording, const GpuSpecDatabase& specs,
                           const ReportOptions& options);

}  // namespace ofu::analysis
