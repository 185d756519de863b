// Writing CSV (RFC 4180): a field is written as it is unless it holds a
// comma, a double quote, a carriage return or a line feed; then it is put in
// double quotes with each double quote doubled. Every CSV writer of ofu
// (`ofu report`, `reconcile`, `regress`, ofu-gemm's results) quotes through
// this one function, so any text (a job name with a comma, a kernel name
// with quotes) comes back whole from any CSV reader.
//
// Thread-safety: a pure function.
#pragma once

#include <string>
#include <string_view>

namespace ofu::formats {

std::string CsvField(std::string_view text);

}  // namespace ofu::formats
