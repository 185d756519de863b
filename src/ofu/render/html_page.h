// The HTML report's page (`ofu report --html OUT.html`): one self-contained
// file drawn from an analysis::HtmlReportView (analysis/html_report.h says
// what the view holds and how it is built).
//
// The view goes into the page as JSON (<script type="application/json">,
// every '<' written as \u003c so that no string can end the script element),
// beside the page's style and scripts (html/, compiled in); the script draws
// SVG charts from it. The page loads nothing: no external scripts, styles,
// fonts or network fetches, and its Content-Security-Policy forbids them.
// When the page has drawn it sets body[data-rendered="ok"]; a script error
// is written into the page (#ofu-errors, body[data-error]) instead.
// docs/html-report.md describes the data's fields.
//
// Thread-safety: a pure function of its argument.
#pragma once

#include <string>

#include "ofu/analysis/html_report.h"

namespace ofu::render {

// The whole page, UTF-8 (invalid UTF-8 in a string becomes U+FFFD).
std::string RenderHtmlReport(const analysis::HtmlReportView& view);

}  // namespace ofu::render
