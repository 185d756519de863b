// Fuzzes the CSV reader in both dialects. What the strict reader accepts,
// written back field by field through CsvField, must read back to the same
// fields; the lenient reader must give every record a trimmed, comment-free
// first field.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ofu/formats/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto records = ofu::formats::ReadCsv(text, "fuzz.csv"); records.ok()) {
    std::string written;
    for (const auto& record : *records) {
      std::string line;
      for (std::size_t f = 0; f < record.fields.size(); ++f) {
        if (f > 0) line += ',';
        line += ofu::formats::CsvField(record.fields[f]);
      }
      written += line + "\n";  // never blank: the reader keeps no record of one empty field
    }
    auto again = ofu::formats::ReadCsv(written, "rewritten.csv");
    if (!again.ok()) std::abort();
    if (again->size() != records->size()) std::abort();
    for (std::size_t r = 0; r < records->size(); ++r) {
      if ((*again)[r].fields != (*records)[r].fields) std::abort();
    }
  } else if (records.error().message.empty()) {
    std::abort();
  }
  if (auto records = ofu::formats::ReadCsv(text, "fuzz.csv", {.lenient = true}); records.ok()) {
    for (const auto& record : *records) {
      if (record.fields.empty() || record.line < 1) std::abort();
      const std::string& first = record.fields.front();
      if (!first.empty() && (std::isspace(static_cast<unsigned char>(first.front())) != 0 ||
                             std::isspace(static_cast<unsigned char>(first.back())) != 0)) {
        std::abort();
      }
    }
  } else if (records.error().message.empty()) {
    std::abort();
  }
  return 0;
}
