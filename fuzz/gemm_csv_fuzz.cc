// Fuzzes ofu-gemm's result-CSV reader, and checks that what it accepts
// survives a write and a second read unchanged (and summarizes).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ofu/gemm/result_csv.h"
#include "ofu/gemm/summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto rows = ofu::gemm::ParseResultCsv(text, "fuzz.csv");
  if (!rows.ok()) {
    if (rows.error().message.empty()) std::abort();
    return 0;
  }
  std::string written = ofu::gemm::ResultCsvHeader();
  for (const auto& row : *rows) written += ofu::gemm::ResultCsvRow(row);
  auto again = ofu::gemm::ParseResultCsv(written, "rewritten.csv");
  if (!again.ok() || again->size() != rows->size()) std::abort();
  for (std::size_t i = 0; i < rows->size(); ++i) {
    if (ofu::gemm::ResultCsvRow((*again)[i]) != ofu::gemm::ResultCsvRow((*rows)[i])) std::abort();
  }
  (void)ofu::gemm::FormatSummary(ofu::gemm::Summarize(*rows), "fuzz.csv");
  return 0;
}
