// `ofu report`'s text output in the format --format names: "json" and "csv"
// for programs, anything else the table for people (report_output.h
// writes each). One choice for a recording's report and a history's.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <string>
#include <string_view>

#include "ofu/analysis/report.h"

namespace ofu::render {

std::string ReportText(const analysis::Report& report, std::string_view format);

}  // namespace ofu::render
