#include "ofu/render/report_text.h"

#include "ofu/render/report_output.h"

namespace ofu::render {

std::string ReportText(const analysis::Report& report, OutputFormat format) {
  if (format == OutputFormat::kJson) return RenderJson(report);
  if (format == OutputFormat::kCsv) return RenderCsv(report);
  return RenderTable(report);
}

}  // namespace ofu::render
