// `ofu report`'s HTML page (--html) and the progress lines of a long report:
// the page of a history, with the fleet analyses and a trace's GEMM findings.
#pragma once

#include <optional>
#include <string>

#include "ofu/analysis/report.h"
#include "ofu/analysis/run_page.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/history/history_reader.h"

#include "report_command.h"

namespace ofu::cli {

// --html: the page of `history`, written next to its destination first so a
// reader never sees half a file. The fleet analyses fill the page's markers
// (the regression scan) and scatter (the reconciliation, with --mfu);
// --trace adds the trace's GEMM findings, on `gpu_model` (--gpu-model as the
// command resolved it; null: the trace's GPU). `store` is BuildStoreReport of
// `history`.
// `run_page`, for one recording's page, adds its phases and draws its
// timeline at the history's own resolution (up to kRunPagePoints points).
Status WriteHtmlReport(const ReportArgs& args, const history::StoredHistory& history, const analysis::Report& store,
                       const GpuSpecDatabase& specs, const GpuSpec* gpu_model, const std::string& source, double now_s,
                       bool synthetic, std::optional<analysis::RunPage> run_page = std::nullopt);

// `ofu run --html`: the page of the run whose recording's report is
// `report` (one window per sample), with `page` (analysis::RunPageOfRun).
Status WriteRunPage(const std::string& path, const analysis::Report& report, analysis::RunPage page,
                    const std::string& title, double now_s);

}  // namespace ofu::cli
