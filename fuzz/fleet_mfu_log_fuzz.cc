// libFuzzer entry for the MFU log reader, CSV and JSON lines: the first byte
// picks the name (and so the format hint), the rest is the text. A parsed log
// keeps the contract: ids non-empty and unique, MFU finite and not negative,
// lines increasing; an error always says which file.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "ofu/formats/mfu_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string name = data[0] % 2 == 0 ? "fuzz.csv" : "fuzz.jsonl";
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto log = ofu::formats::ParseMfuLog(text, name);
  if (!log.ok()) {
    if (log.error().message.rfind(name, 0) != 0) std::abort();  // errors name the file first
    return 0;
  }
  std::set<std::string> ids;
  int previous_line = 0;
  for (const auto& job : log->jobs) {
    if (job.job_id.empty() || !ids.insert(job.job_id).second) std::abort();
    if (!std::isfinite(job.mfu) || job.mfu < 0) std::abort();
    if (job.line <= previous_line) std::abort();
    previous_line = job.line;
    if (job.tokens_per_s && (*job.tokens_per_s < 0 || !std::isfinite(*job.tokens_per_s))) std::abort();
  }
  return 0;
}
