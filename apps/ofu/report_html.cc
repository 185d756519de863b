#include "report_html.h"

#include <unistd.h>

#include <fmt/format.h>

#include "ofu/analysis/correction.h"
#include "ofu/analysis/fleet_report.h"
#include "ofu/analysis/html_report.h"
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

}  // namespace

Status WriteHtmlReport(const ReportArgs& args, const history::StoredHistory& history, const analysis::Report& store,
                       const GpuSpecDatabase& specs, const GpuSpec* gpu_model, const std::string& source, double now_s,
                       bool synthetic) {
  Progress("building the HTML report");
  analysis::HtmlReportOptions options;
  options.source = source;
  options.synthetic = synthetic;
  options.generated_at_s = now_s;
  options.title = args.title.value_or(args.history.job ? fmt::format("OFU report: job {}", *args.history.job)
                                                       : "OFU report");
  analysis::HtmlReportView view = analysis::BuildHtmlReportView(history, store, options);

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
