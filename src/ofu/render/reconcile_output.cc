#include "ofu/render/reconcile_output.h"

#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/formats/csv.h"
#include "ofu/render/json_fields.h"

namespace ofu::render {
namespace {

using analysis::FitStatistics;
using analysis::ReconciledJob;
using analysis::ReconcileReport;
using nlohmann::json;

std::string Optional(const std::optional<double>& v, const char* format = "{:.3f}") {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

json JsonOptional(const std::optional<double>& v) { return OrNull<json>(v); }

std::optional<double> Reported(const ReconciledJob& job) {
  return job.reported_known ? std::optional<double>(job.reported_mfu) : std::nullopt;
}

json FitJson(const FitStatistics& fit) {
  return {{"jobs", fit.jobs},
          {"pearson_r", JsonOptional(fit.pearson_r)},
          {"spearman_rho", JsonOptional(fit.spearman_rho)},
          {"mean_absolute_error", JsonOptional(fit.mean_absolute_error)}};
}

}  // namespace

std::string RenderReconcileTable(const ReconcileReport& report) {
  std::string out = fmt::format("OFU vs reported MFU: {} jobs from {} against {}{}\n\n", report.jobs.size(),
                                report.mfu_log, report.source,
                                report.method == "counters" ? " (OFU summed by the server from the agent's counters)"
                                                            : "");
  out += fmt::format("{:<16} {:>4} {:>7} {:>7} {:>9} {:>9} {:>9} {:>7}  {}\n", "JOB", "GPUS", "OFU", "CORR", "EXPECTED",
                     "REPORTED", "RESIDUAL", "RATIO", "FLAG");
  for (const ReconciledJob& job : report.jobs) {
    out += fmt::format("{:<16} {:>4} {:>7} {:>7} {:>9} {:>9} {:>9} {:>7}  {}\n", job.job_id, job.gpus,
                       Optional(job.ofu), Optional(job.corrected_ofu), Optional(job.expected_mfu),
                       Optional(Reported(job)), Optional(job.residual, "{:+.3f}"), Optional(job.ratio, "{:.2f}x"),
                       job.flag);
  }
  out += "\nFlagged jobs:\n";
  bool any = false;
  for (const ReconciledJob& job : report.jobs) {
    if (!job.flagged() && job.flag != "no_ofu" && job.flag != "no_mfu") continue;
    any = true;
    out += fmt::format("  {}: {}\n", job.job_id, job.explanation);
    for (const std::string& alternative : job.alternatives) out += fmt::format("      or: {}\n", alternative);
  }
  if (!any) out += "  none\n";
  bool rescaled = false;
  for (const ReconciledJob& job : report.jobs) {
    if (!job.logged_mfu || job.reported_mfu == *job.logged_mfu) continue;
    if (!rescaled) out += "\nReported MFU over each GPU's own peak (the log divides by another):\n";
    rescaled = true;
    out += fmt::format("  {}: logged {:.4f} over {:.1f} TFLOPS -> {:.4f}\n", job.job_id, *job.logged_mfu,
                       *job.peak_flops / 1e12, job.reported_mfu);
  }
  const auto fit = [&](const char* label, const FitStatistics& f) {
    out += fmt::format("{:<28} jobs {:>5}  Pearson r {:>6}  Spearman rho {:>6}  MAE {}\n", label, f.jobs,
                       Optional(f.pearson_r), Optional(f.spearman_rho), Optional(f.mean_absolute_error, "{:.4f}"));
  };
  out += "\nFleet (expected vs reported MFU):\n";
  fit("  all jobs with both", report.all);
  fit("  without flagged jobs", report.unflagged);
  if (report.jobs_without_mfu > 0) {
    out += fmt::format("\n{} job(s) in the OFU data have no line in the MFU log.\n", report.jobs_without_mfu);
  }
  if (!report.notes.empty()) {
    out += "\nNotes:\n";
    for (const std::string& note : report.notes) out += fmt::format("  - {}\n", note);
  }
  return out;
}

std::string RenderReconcileJson(const ReconcileReport& report) {
  json out;
  out["source"] = report.source;
  out["method"] = report.method;
  out["mfu_log"] = report.mfu_log;
  out["thresholds"] = {{"tolerance", report.options.tolerance}, {"match", report.options.match}};
  json jobs = json::array(), scatter = json::array();
  // Filled key by key: nlohmann's initializer lists deep-copy every element,
  // which made 100k jobs take seconds.
  for (const ReconciledJob& job : report.jobs) {
    json row = json::object();
    row["job_id"] = job.job_id;
    row["job_name"] = job.job_name;
    row["gpus"] = job.gpus;
    row["ofu"] = JsonOptional(job.ofu);
    row["factor"] = JsonOptional(job.factor);
    row["corrected_ofu"] = JsonOptional(job.corrected_ofu);
    row["mfu_scale"] = job.mfu_scale;
    row["reference_precision"] = kernels::PrecisionName(job.reference_precision);
    row["expected_mfu"] = JsonOptional(job.expected_mfu);
    row["reported_mfu"] = JsonOptional(Reported(job));
    row["flops_per_gpu"] = JsonOptional(job.flops_per_gpu);
    row["logged_mfu"] = JsonOptional(job.logged_mfu);
    row["peak_flops"] = JsonOptional(job.peak_flops);
    row["throughput_mfu"] = JsonOptional(job.throughput_mfu);
    row["recompute"] = job.recompute ? json(*job.recompute) : json(nullptr);
    row["residual"] = JsonOptional(job.residual);
    row["ratio"] = JsonOptional(job.ratio);
    row["flag"] = job.flag;
    row["flagged"] = job.flagged();
    row["explanation"] = job.explanation;
    row["alternatives"] = job.alternatives;
    row["notes"] = job.notes;
    jobs.push_back(std::move(row));
    if (job.expected_mfu) {
      json point = json::object();
      point["job_id"] = job.job_id;
      point["expected_mfu"] = *job.expected_mfu;
      point["reported_mfu"] = job.reported_mfu;
      point["flag"] = job.flag;
      scatter.push_back(std::move(point));
    }
  }
  out["jobs"] = std::move(jobs);
  out["statistics"] = {{"all", FitJson(report.all)}, {"unflagged", FitJson(report.unflagged)}};
  out["flags"] = report.flags;
  out["jobs_without_mfu"] = report.jobs_without_mfu;
  out["notes"] = report.notes;
  out["scatter"] = std::move(scatter);
  return out.dump(2) + "\n";
}

std::string RenderReconcileCsv(const ReconcileReport& report) {
  std::string out =
      "job_id,job_name,gpus,ofu,factor,corrected_ofu,mfu_scale,reference_precision,expected_mfu,reported_mfu,"
      "residual,ratio,flag\n";
  const auto cell = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); };
  for (const ReconciledJob& job : report.jobs) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", formats::CsvField(job.job_id),
                       formats::CsvField(job.job_name), job.gpus, cell(job.ofu), cell(job.factor),
                       cell(job.corrected_ofu), job.mfu_scale, kernels::PrecisionName(job.reference_precision),
                       cell(job.expected_mfu), cell(Reported(job)), cell(job.residual), cell(job.ratio), job.flag);
  }
  return out;
}

}  // namespace ofu::render
