#include "ofu/render/report_text.h"

#include "ofu/render/report_output.h"

namespace ofu::render {

std::string ReportText(const analysis::Report& report, std::string_view format) {
  if (format == "json") return RenderJson(report);
  if (format == "csv") return RenderCsv(report);
  return RenderTable(report);
}

}  // namespace ofu::render
