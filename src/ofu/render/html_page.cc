#include "ofu/render/html_page.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ofu/render/html/html_assets.h"
#include "ofu/render/json_fields.h"

namespace ofu::render {

using analysis::CudaCoreFinding;
using analysis::GemmFinding;
using analysis::GpuTimeline;
using analysis::HtmlReportView;
using analysis::JobTimeline;
using analysis::KernelFindings;
using analysis::RegressionMarker;
using analysis::ScatterPoint;
using analysis::SkuDistribution;
using analysis::TimelinePoint;
using nlohmann::json;

namespace {

json Optional(const std::optional<double>& value) { return OrNull<json>(value); }

json PointsJson(const std::vector<TimelinePoint>& points) {
  // Columns, not objects: [[t...], [ofu...]] is a third of the size. A third
  // column [fp32_active...] only when some point has one.
  json t = json::array(), ofu = json::array(), fp32 = json::array();
  bool any_fp32 = false;
  for (const TimelinePoint& p : points) {
    t.push_back(p.t_s);
    ofu.push_back(Optional(p.ofu));
    fp32.push_back(Optional(p.fp32_active));
    any_fp32 = any_fp32 || p.fp32_active.has_value();
  }
  json columns = json::array({std::move(t), std::move(ofu)});
  if (any_fp32) columns.push_back(std::move(fp32));
  return columns;
}

json AdviceJson(const CudaCoreFinding& finding) {
  json out = {{"job_id", finding.job_id}, {"gpu_uuid", finding.gpu_uuid}, {"subject", finding.advice.gpu}};
  AddCudaCoreAdviceFields(finding.advice, out);
  return out;
}

json KernelFindingsJson(const KernelFindings& findings) {
  json gemms = json::array();
  for (const GemmFinding& g : findings.gemms) {
    json row = GemmIdentityJson<json>(g);
    row["kind"] = g.kind;
    row["lost_share"] = Optional(g.lost_share);
    row["family"] = g.family;
    row["unaligned"] = g.unaligned;
    row["advice"] = g.advice;
    gemms.push_back(std::move(row));
  }
  return {{"traces", findings.traces},
          {"gpu_sku", findings.gpu_sku},
          {"gpu_name", findings.gpu_name},
          {"factor", Optional(findings.factor)},
          {"padding_factor", Optional(findings.padding_factor)},
          {"throughput_factor", Optional(findings.throughput_factor)},
          {"gemms", std::move(gemms)},
          {"notes", findings.notes}};
}

json RunPageJson(const analysis::RunPage& page) {
  json phases = json::array();
  for (const analysis::PagePhase& p : page.phases) {
    phases.push_back({{"gpu", p.gpu},
                      {"name", p.name},
                      {"kind", p.kind},
                      {"start_s", p.start_s},
                      {"end_s", p.end_s},
                      {"seconds", p.seconds},
                      {"ofu", Optional(p.ofu)},
                      {"mfu", Optional(p.mfu)},
                      {"mfu_steps", p.mfu_steps}});
  }
  json run = nullptr;
  if (page.run) {
    const analysis::PageRun& r = *page.run;
    run = {{"command", r.command},
           {"exit_status", r.exit_status},
           {"seconds", r.seconds},
           {"gpu_rule", r.gpu_rule},
           {"gpu_why", r.gpu_why},
           {"shared", r.shared},
           {"stall_share", Optional(r.stall_share)},
           {"stall_s", r.stall_s},
           {"mfu", Optional(r.mfu)},
           {"framework", r.framework},
           {"steps", r.steps},
           {"mfu_ofu", Optional(r.mfu_ofu)},
           {"ofu_basis", r.ofu_basis},
           {"verdict", r.verdict},
           {"explanation", r.explanation},
           {"mfu_missing", r.mfu_missing}};
  }
  return {{"phases_basis", page.phases_basis}, {"phases", std::move(phases)}, {"run", std::move(run)}};
}

json ViewJson(const HtmlReportView& view) {
  json j;
  j["title"] = view.title;
  j["source"] = view.source;
  j["generated_at_s"] = view.generated_at_s;
  j["synthetic"] = view.synthetic;
  j["query"] = {{"since_s", Optional(view.query.since_s)},
                {"until_s", Optional(view.query.until_s)},
                {"job_id", view.query.job_id ? json(*view.query.job_id) : json(nullptr)}};
  j["start_s"] = Optional(view.start_s);
  j["end_s"] = Optional(view.end_s);
  j["bucket_s"] = view.bucket_s;
  j["overall_ofu"] = Optional(view.overall_ofu);
  j["clock_source"] = view.overall_clock_source.empty() ? json(nullptr) : json(view.overall_clock_source);
  j["observed_hours"] = view.observed_hours;
  j["gpus_total"] = view.gpus_total;
  j["jobs_total"] = view.jobs_total;
  j["gpus"] = json::array();
  for (const GpuTimeline& gpu : view.gpus) {
    j["gpus"].push_back({{"uuid", gpu.uuid},
                         {"index", gpu.gpu_index},
                         {"model", gpu.model},
                         {"sku", gpu.sku},
                         {"hostname", gpu.hostname},
                         {"ofu", Optional(gpu.ofu)},
                         {"clock_source", gpu.clock_source.empty() ? json(nullptr) : json(gpu.clock_source)},
                         {"observed_hours", gpu.observed_hours},
                         {"non_tensor", NonTensorJson<json>(gpu.non_tensor)},
                         {"points", PointsJson(gpu.points)}});
  }
  j["jobs"] = json::array();
  for (const JobTimeline& job : view.jobs) {
    j["jobs"].push_back({{"job_id", job.job_id},
                         {"user", job.user},
                         {"job_name", job.job_name},
                         {"gpus", job.gpus},
                         {"gpu_hours", job.gpu_hours},
                         {"ofu", Optional(job.ofu)},
                         {"non_tensor", NonTensorJson<json>(job.non_tensor)},
                         {"points", PointsJson(job.points)}});
  }
  j["skus"] = json::array();
  for (const SkuDistribution& sku : view.skus) {
    json box = nullptr;
    if (sku.box) {
      box = {{"min", sku.box->min},
             {"q1", sku.box->q1},
             {"median", sku.box->median},
             {"q3", sku.box->q3},
             {"max", sku.box->max}};
    }
    j["skus"].push_back({{"sku", sku.sku},
                         {"model", sku.model},
                         {"gpus", sku.gpus},
                         {"gpu_ofu", sku.gpu_ofu},
                         {"box", box},
                         {"hours_by_bin", sku.observed_hours_by_bin},
                         {"bins_per_unit", analysis::kOfuBinsPerUnit},
                         {"ofu", Optional(sku.ofu)},
                         {"observed_hours", sku.observed_hours}});
  }
  j["notes"] = view.notes;
  j["overall_non_tensor"] = NonTensorJson<json>(view.overall_non_tensor);
  // The CUDA-core pipes in table order: the page's columns for each "non_tensor" object.
  j["cuda_core_pipes"] = json::array();
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) {
    j["cuda_core_pipes"].push_back({{"key", pipe.key()}, {"label", pipe.label}});
  }
  j["cuda_core_advice"] = json::array();
  for (const CudaCoreFinding& finding : view.cuda_core_advice) j["cuda_core_advice"].push_back(AdviceJson(finding));
  j["cuda_core_advice_total"] = view.cuda_core_advice_total;
  // The advice's thresholds, so that the page can say what was looked for.
  j["cuda_core_thresholds"] = {{"low_ofu", analysis::kLowOfu}, {"busy_pipe", analysis::kBusyPipe}};
  if (view.scatter) {
    json points = json::array();
    for (const ScatterPoint& p : view.scatter->points) {
      points.push_back({{"job_id", p.job_id},
                        {"expected_mfu", p.expected_mfu},
                        {"reported_mfu", p.reported_mfu},
                        {"flagged", p.flagged},
                        {"reason", p.reason}});
    }
    j["scatter"] = {{"points", std::move(points)},
                    {"pearson_r", Optional(view.scatter->pearson_r)},
                    {"spearman_rho", Optional(view.scatter->spearman_rho)},
                    {"mean_abs_error", Optional(view.scatter->mean_abs_error)},
                    {"note", view.scatter->note}};
  } else {
    j["scatter"] = nullptr;
  }
  j["scatter_absent"] = view.scatter_absent;
  if (view.markers) {
    j["markers"] = json::array();
    for (const RegressionMarker& m : *view.markers) {
      j["markers"].push_back({{"job_id", m.job_id},
                              {"gpu_uuid", m.gpu_uuid},
                              {"t_s", m.t_s},
                              {"before_ofu", Optional(m.before_ofu)},
                              {"after_ofu", Optional(m.after_ofu)},
                              {"ratio", Optional(m.ratio)},
                              {"kind", m.kind},
                              {"description", m.description}});
    }
  } else {
    j["markers"] = nullptr;
  }
  j["markers_absent"] = view.markers_absent;
  j["kernel_findings"] = view.kernel_findings ? KernelFindingsJson(*view.kernel_findings) : json(nullptr);
  j["run_page"] = view.run_page ? RunPageJson(*view.run_page) : json(nullptr);
  return j;
}

// JSON that is safe inside a <script> element: every '<' (only ever inside a
// string) becomes \u003c, so no "</script" or "<!--" can appear.
std::string ScriptSafeJson(const json& j) {
  const std::string text = j.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string RenderHtmlReport(const HtmlReportView& view) {
  return fmt::format(
      "<!DOCTYPE html>\n"
      "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // No network: nothing may be fetched, not even by a bug.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
      "<title>{}</title>\n<style>\n{}</style>\n</head>\n"
      "<body>\n<noscript>This report draws its charts with JavaScript; please enable it.</noscript>\n"
      "<pre id=\"ofu-errors\" hidden></pre>\n<main id=\"ofu-report\"></main>\n"
      "<script>\n{}</script>\n"
      "<script type=\"application/json\" id=\"ofu-data\">{}</script>\n"
      "<script>\n{}</script>\n</body>\n</html>\n",
      EscapeHtml(view.title), html::kReportCss, html::kErrorTrapJs, ScriptSafeJson(ViewJson(view)), html::kReportJs);
}

}  // namespace ofu::render
