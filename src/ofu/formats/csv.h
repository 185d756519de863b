// CSV, both ways: the one writer and the one reader of ofu.
//
// Writing (RFC 4180): a field is written as it is unless it holds a comma, a
// double quote, a carriage return or a line feed; then it is put in double
// quotes with each double quote doubled. Every CSV writer of ofu (`ofu
// report`, `reconcile`, `regress`, ofu-gemm's results) quotes through
// CsvField, so any text (a job name with a comma, a kernel name with quotes)
// comes back whole from any CSV reader.
//
// Reading has two dialects, chosen by CsvOptions:
//   strict (the default)  RFC 4180, for files ofu wrote (ofu-gemm's results):
//                         a quoted field may hold commas, quotes ("") and
//                         line breaks; a record ends at LF, CRLF or CR; a
//                         quote inside an unquoted field, text after a
//                         closing quote or a quote left open is an error.
//   lenient               for files people write by hand or other tools
//                         export (MFU logs, correction tables): one record
//                         per line (LF; a CR outside quotes is dropped); a
//                         quote anywhere opens or closes quoting, "" inside
//                         quotes is one quote; each field is trimmed of
//                         white space; blank lines and lines whose first
//                         non-blank character is '#' are skipped. A quote
//                         still open at the end of its line is an error.
// Both skip an empty line and give each record the 1-based line it starts
// on, so that an error names the file and the line.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::formats {

std::string CsvField(std::string_view text);

struct CsvOptions {
  bool lenient = false;  // see above
};

struct CsvRecord {
  int line = 0;  // 1-based line of the record's first character
  std::vector<std::string> fields;
};

// `text` without the white space (std::isspace) at either end: how the
// lenient dialect trims a field, and how the MFU log trims its values.
std::string_view TrimSpace(std::string_view text);

// The records of `text`; `source_name` (a path, "-") starts every error
// message, which also names the line (and the field, where there is one).
Result<std::vector<CsvRecord>> ReadCsv(std::string_view text, std::string_view source_name,
                                       const CsvOptions& options = {});

}  // namespace ofu::formats
