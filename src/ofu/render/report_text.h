// `ofu report`'s text output in the format --format names: JSON and CSV
// for programs, anything else the table for people (report_output.h
// writes each). One choice for a recording's report and a history's.
//
// Thread-safety: pure functions of their inputs.
#pragma once

#include <string>

#include "ofu/analysis/report.h"
#include "ofu/render/output_format.h"

namespace ofu::render {

std::string ReportText(const analysis::Report& report, OutputFormat format);

}  // namespace ofu::render
