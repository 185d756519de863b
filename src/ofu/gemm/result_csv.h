// ofu-gemm's result file: one CSV row per case (case_result.h), RFC 4180.
//
// The first line names the columns; docs/gemm-harness.md lists them with
// their units. Absent values are empty fields, never 0. Text fields with a
// comma, a quote or a line break are quoted, quotes doubled.
//
// The reader takes the columns by name, in any order. The case's identity
// (sweep, group, m, n, k, precision, layout) is required; any other known
// column may be missing (its values are then absent), and unknown columns are
// ignored, so that files from older or newer harnesses still read. Bad
// input is an error (kMalformedInput) naming the file, the line and the
// column.
//
// Pure apart from the *File functions; thread-safe.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/gemm/case_result.h"

namespace ofu::gemm {

// The column names in output order.
std::vector<std::string_view> ResultColumns();

// The header line, then one line per row; each ends in "\n".
std::string ResultCsvHeader();
std::string ResultCsvRow(const CaseResult& row);

Result<std::vector<CaseResult>> ParseResultCsv(std::string_view text, std::string_view source_name);
// Errors: kIo when the file cannot be read; ParseResultCsv's otherwise.
Result<std::vector<CaseResult>> ReadResultCsvFile(const std::string& path);

}  // namespace ofu::gemm
