// Writing a regression scan (analysis/regress.h, `ofu regress`): a table for
// people, JSON (docs/cli.md) and CSV, one row per finding (a precision
// shift: one row per pipe). Times are epoch seconds, and in the table and
// JSON also RFC 3339 in UTC.
//
// Thread-safety: pure functions of their argument.
#pragma once

#include <string>

#include "ofu/analysis/regress.h"

namespace ofu::render {

std::string RenderRegressTable(const analysis::RegressReport& report);
std::string RenderRegressJson(const analysis::RegressReport& report);
std::string RenderRegressCsv(const analysis::RegressReport& report);

}  // namespace ofu::render
