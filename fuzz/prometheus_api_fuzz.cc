// libFuzzer entry for formats/prometheus_api.h: a query API answer, pasted
// with text around it. Never crashes; a success holds only vectors or
// matrices.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/formats/prometheus_api.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ofu::formats::LooksLikePrometheusApiJson(text);
  const ofu::formats::PromApiSpan span = ofu::formats::FindPrometheusApiJson(text);
  if (span.found && (span.begin >= span.end || span.end > text.size() || span.first_line > span.last_line)) {
    std::abort();
  }
  const std::string_view json = span.found ? text.substr(span.begin, span.end - span.begin) : text;
  auto answer = ofu::formats::ReadPrometheusApiAnswer(json, "fuzz.json");
  if (answer.ok() && answer->status == "success" && answer->result_type != "vector" &&
      answer->result_type != "matrix") {
    std::abort();
  }
  return 0;
}
