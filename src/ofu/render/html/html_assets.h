// The HTML report's style and scripts (report.css, error_trap.js,
// report.js beside this file), compiled in by CMake ("# HTML report assets"
// in src/CMakeLists.txt) so that `ofu` needs no data files at run time.
#pragma once

namespace ofu::render::html {

extern const char* const kReportCss;
// Runs first: records any later script error into the page.
extern const char* const kErrorTrapJs;
// Draws the report from the JSON in #ofu-data.
extern const char* const kReportJs;

}  // namespace ofu::render::html
