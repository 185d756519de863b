#include "report_html.h"

#include <unistd.h>

#include <fmt/format.h>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/fleet_report.h"
#include "ofu/analysis/html_report.h"
#include "ofu/analysis/recording_history.h"
#include "ofu/formats/text_file.h"
#include "ofu/render/html_page.h"
#include "report_inputs.h"
#include "trace_input.h"

namespace ofu::cli {
namespace {

// --trace: what `ofu correct` finds in the traces (analysis::KernelFindingsOfTrace);
// the GPU is --gpu-model's, else the trace's (ChooseGpu).
Result<analysis::KernelFindings> TraceFindings(const ReportArgs& args, const GpuSpecDatabase& specs,
                                               const GpuSpec* flag_gpu) {
  Progress("reading the kernel trace");
  OFU_ASSIGN_OR_RETURN(const TraceInput input, ReadTraceInput(args.trace));
  OFU_RETURN_IF_ERROR(analysis::RequireNvidiaTrace(input.trace, input.name, args.gpu_model.value_or("")));
  const ChosenGpu gpu = ChooseGpu(specs, input.trace, flag_gpu);
  return analysis::KernelFindingsOfTrace(input.trace, args.trace, gpu.spec, gpu.note);
}

// One run's page keeps a point per sample for this many samples (two hours
// of 1 s windows); a longer run's points are wider buckets (html_report.h).
constexpr std::size_t kRunPagePoints = 7200;

analysis::HtmlReportOptions PageOptions(std::string title, std::string source, double now_s, bool synthetic,
                                        bool one_run) {
  analysis::HtmlReportOptions options;
  options.title = std::move(title);
  options.source = std::move(source);
  options.synthetic = synthetic;
  options.generated_at_s = now_s;
  if (one_run) options.max_points_per_series = kRunPagePoints;
  return options;
}

}  // namespace

Status WriteRunPage(const std::string& path, const analysis::Report& report, analysis::RunPage page,
                    const std::string& title, double now_s) {
  const history::StoredHistory history = analysis::HistoryOfRecording(report);
  analysis::HtmlReportView view = analysis::BuildHtmlReportView(
      history, report, PageOptions(title, "ofu run", now_s, report.synthetic.value_or(false), /*one_run=*/true));
  view.run_page = std::move(page);
  return formats::WriteFileAtomically(path, render::RenderHtmlReport(view));
}

Status WriteHtmlReport(const ReportArgs& args, const history::StoredHistory& history, const analysis::Report& store,
                       const GpuSpecDatabase& specs, const GpuSpec* gpu_model, const std::string& source, double now_s,
                       bool synthetic, std::optional<analysis::RunPage> run_page) {
  Progress("building the HTML report");
  const std::string title = args.title.value_or(args.history.job ? fmt::format("OFU report: job {}", *args.history.job)
                                                                 : "OFU report");
  analysis::HtmlReportView view = analysis::BuildHtmlReportView(
      history, store, PageOptions(title, source, now_s, synthetic, /*one_run=*/run_page.has_value()));
  view.run_page = std::move(run_page);

  // The analyses that need jobs: a recording has none.
  if (args.mfu && history.jobs.empty()) {
    fmt::print(stderr, "ofu report: {} has no jobs, so --mfu has nothing to reconcile\n", source);
  }
  OFU_RETURN_IF_ERROR(analysis::AddFleetAnalyses(
      view, history, store, {.mfu = args.mfu, .corrections = args.corrections, .specs = &specs, .progress = Progress}));
  if (!args.trace.empty()) {
    OFU_ASSIGN_OR_RETURN(view.kernel_findings, TraceFindings(args, specs, gpu_model));
  }
  OFU_RETURN_IF_ERROR(formats::WriteFileAtomically(args.html, render::RenderHtmlReport(view)));
  fmt::print("{}\n", args.html);
  return OkStatus();
}

}  // namespace ofu::cli
