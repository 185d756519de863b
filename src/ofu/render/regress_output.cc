#include "ofu/render/regress_output.h"

#include <cmath>
#include <ctime>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ofu/formats/csv.h"

namespace ofu::render {
namespace {

using analysis::ChangeOptions;
using analysis::OfuChange;
using analysis::PipeShift;
using analysis::PrecisionShift;
using analysis::RegressReport;
using analysis::RunChange;
using nlohmann::json;

std::string Rfc3339(double seconds) {
  const std::time_t t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

}  // namespace

std::string RenderRegressTable(const RegressReport& report) {
  std::string out =
      fmt::format("Regressions in {}: {} (job, GPU) timelines, {} windows, {} job names with enough runs\n",
                  report.source, report.series, report.windows, report.job_names);
  out += "\nOFU changes within jobs:\n";
  if (report.changes.empty()) out += "  none\n";
  for (const OfuChange& c : report.changes) {
    out += fmt::format("  {} ({}) at {}: OFU {:.3f} -> {:.3f} ({}) on {} GPU(s): {}\n", c.job_id, c.job_name,
                       Rfc3339(c.time_s), c.before, c.after,
                       c.ratio < 1 ? fmt::format("{:.2f}x lower", 1 / c.ratio) : fmt::format("{:.2f}x higher", c.ratio),
                       c.gpus.size(), fmt::join(c.gpus, ", "));
  }
  out += "\nOFU changes across runs of a job name:\n";
  if (report.run_changes.empty()) out += "  none\n";
  for (const RunChange& c : report.run_changes) {
    out += fmt::format("  {} from run {} ({}): OFU {:.3f} -> {:.3f} ({}), {} runs before, {} after\n", c.job_name,
                       c.first_job_id, Rfc3339(c.time_s), c.before, c.after,
                       c.ratio < 1 ? fmt::format("{:.2f}x lower", 1 / c.ratio) : fmt::format("{:.2f}x higher", c.ratio),
                       c.runs_before, c.runs_after);
  }
  out += "\nPrecision shifts (tensor-pipe shares):\n";
  if (report.precision_shifts.empty()) out += "  none\n";
  for (const PrecisionShift& s : report.precision_shifts) {
    std::vector<std::string> pipes;
    for (const PipeShift& p : s.pipes) pipes.push_back(fmt::format("{} {:.2f} -> {:.2f}", p.pipe, p.before, p.after));
    out += fmt::format("  {} ({}) at {}: {} on {} GPU(s): {}\n", s.job_id, s.job_name, Rfc3339(s.time_s),
                       fmt::join(pipes, ", "), s.gpus.size(), fmt::join(s.gpus, ", "));
  }
  for (const std::string& note : report.notes) out += fmt::format("\nnote: {}\n", note);
  return out;
}

std::string RenderRegressJson(const RegressReport& report) {
  json out;
  out["source"] = report.source;
  const ChangeOptions& o = report.options.ofu;
  out["method"] = {{"name", "binary segmentation, mean shift (CUSUM statistic), robust sigma"},
                   {"min_segment", o.min_segment},
                   {"threshold", o.threshold},
                   {"min_ratio", o.min_ratio},
                   {"min_share_shift", report.options.shares.min_difference},
                   {"min_runs", report.options.min_runs},
                   {"group_s", report.options.group_s}};
  out["series"] = report.series;
  out["windows"] = report.windows;
  out["job_names"] = report.job_names;
  json changes = json::array();
  for (const OfuChange& c : report.changes) {
    changes.push_back({{"job_id", c.job_id},
                       {"job_name", c.job_name},
                       {"time_s", c.time_s},
                       {"time", Rfc3339(c.time_s)},
                       {"before", c.before},
                       {"after", c.after},
                       {"ratio", c.ratio},
                       {"statistic", c.statistic},
                       {"gpus", c.gpus}});
  }
  out["changes"] = changes;
  json runs = json::array();
  for (const RunChange& c : report.run_changes) {
    runs.push_back({{"job_name", c.job_name},
                    {"first_job_id", c.first_job_id},
                    {"time_s", c.time_s},
                    {"time", Rfc3339(c.time_s)},
                    {"before", c.before},
                    {"after", c.after},
                    {"ratio", c.ratio},
                    {"runs_before", c.runs_before},
                    {"runs_after", c.runs_after}});
  }
  out["run_changes"] = runs;
  json shifts = json::array();
  for (const PrecisionShift& s : report.precision_shifts) {
    json pipes = json::array();
    for (const PipeShift& p : s.pipes) pipes.push_back({{"pipe", p.pipe}, {"before", p.before}, {"after", p.after}});
    shifts.push_back({{"job_id", s.job_id},
                      {"job_name", s.job_name},
                      {"time_s", s.time_s},
                      {"time", Rfc3339(s.time_s)},
                      {"pipes", pipes},
                      {"gpus", s.gpus}});
  }
  out["precision_shifts"] = shifts;
  out["notes"] = report.notes;
  return out.dump(2) + "\n";
}

std::string RenderRegressCsv(const RegressReport& report) {
  std::string out = "kind,job_id,job_name,time_s,what,before,after,ratio,gpus\n";
  for (const OfuChange& c : report.changes) {
    out += fmt::format("ofu_change,{},{},{},ofu,{},{},{},{}\n", formats::CsvField(c.job_id),
                       formats::CsvField(c.job_name), c.time_s, c.before, c.after, c.ratio, fmt::join(c.gpus, " "));
  }
  for (const RunChange& c : report.run_changes) {
    out += fmt::format("run_change,{},{},{},ofu,{},{},{},\n", formats::CsvField(c.first_job_id),
                       formats::CsvField(c.job_name), c.time_s, c.before, c.after, c.ratio);
  }
  for (const PrecisionShift& s : report.precision_shifts) {
    for (const PipeShift& p : s.pipes) {
      out += fmt::format("precision_shift,{},{},{},{}_share,{},{},,{}\n", formats::CsvField(s.job_id),
                         formats::CsvField(s.job_name), s.time_s, p.pipe, p.before, p.after, fmt::join(s.gpus, " "));
    }
  }
  return out;
}

}  // namespace ofu::render
