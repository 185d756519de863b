// libFuzzer entry for the readers of counter text that is not exposition:
// formats/counter_table.h (nvidia-smi dmon, --query-gpu CSV, named-column
// tables), formats/nvidia_smi.h (-q, the table, model names anywhere) and
// the recognition of sources/counter_texts.h. None may crash, and the
// column table must hand back only rows with as many cells as its header.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/formats/counter_table.h"
#include "ofu/formats/nvidia_smi.h"
#include "ofu/sources/counter_texts.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ofu::sources::RecogniseCounterText(text);
  if (auto table = ofu::formats::ReadCounterTable(text, "fuzz.txt"); table.ok()) {
    if (table->columns.size() != table->kinds.size() || table->columns.size() < 2) std::abort();
    for (const auto& row : table->rows) {
      if (row.line <= table->header_line || row.line > table->lines) std::abort();
    }
  }
  volatile std::size_t n = ofu::formats::ReadNvidiaSmiQuery(text).gpus.size() +
                           ofu::formats::ReadNvidiaSmiTable(text).gpus.size() +
                           ofu::formats::FindGpuModelMentions(text).size();
  (void)n;
  return 0;
}
