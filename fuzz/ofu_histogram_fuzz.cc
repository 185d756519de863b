// libFuzzer entry for a history store rollup's ofu_histogram column
// (history/history_rollup.h): bytes read from a file that may be damaged. A
// blob it accepts must encode back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ofu/history/history_rollup.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bins = ofu::history::DecodeOfuBins(data, size);
  if (bins.ok() && ofu::history::EncodeOfuBins(*bins) != std::string(reinterpret_cast<const char*>(data), size)) {
    std::abort();  // accepted, but not what it encodes to
  }
  return 0;
}
