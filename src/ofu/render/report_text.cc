#include "ofu/render/report_text.h"

#include "ofu/analysis/report_output.h"

namespace ofu::render {

std::string ReportText(const analysis::Report& report, std::string_view format) {
  if (format == "json") return analysis::RenderJson(report);
  if (format == "csv") return analysis::RenderCsv(report);
  return analysis::RenderTable(report);
}

}  // namespace ofu::render
