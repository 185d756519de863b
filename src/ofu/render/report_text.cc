#include "ofu/render/report_text.h"

#include "ofu/analysis/report_output.h"

namespace ofu::render {
namespace {

template <typename AnyReport>
std::string TextOf(const AnyReport& report, std::string_view format) {
  if (format == "json") return analysis::RenderJson(report);
  if (format == "csv") return analysis::RenderCsv(report);
  return analysis::RenderTable(report);
}

}  // namespace

std::string ReportText(const analysis::Report& report, std::string_view format) { return TextOf(report, format); }

std::string ReportText(const analysis::StoreReport& report, std::string_view format) { return TextOf(report, format); }

}  // namespace ofu::render
