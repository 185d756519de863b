// libFuzzer entry for replay: text -> per-GPU samples -> windows -> report.
//
// Goes past the text reader into what the replay makes of the values (scales,
// sentinels, identities, timestamps) and through windowing and the report,
// so that odd but parseable input (huge or tiny timestamps, duplicate series,
// MIG without a parent, values that are not numbers and the notes they
// leave) cannot crash the arithmetic.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "ofu/analysis/report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/render/report_output.h"
#include "ofu/sources/replay.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const ofu::GpuSpecDatabase specs = std::move(ofu::GpuSpecDatabase::Embedded()).value();
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto recording = ofu::sources::ReadRecording(in, "fuzz.prom");
  if (!recording.ok()) return 0;
  std::size_t note_bytes = 0;
  for (const std::string& note : recording->notes) note_bytes += note.size();
  volatile std::size_t notes_sink = note_bytes + recording->non_numeric_values;
  (void)notes_sink;
  ofu::analysis::ReportOptions options;
  options.windows.window_s = 60;
  options.gpu_model = *specs.Lookup("h100-sxm5");  // so every GPU goes through the OFU arithmetic
  auto report = ofu::analysis::BuildReport(*recording, specs, options);
  if (report.ok()) {
    volatile std::size_t n = ofu::render::RenderJson(*report).size() + ofu::render::RenderTable(*report).size();
    (void)n;
  }
  return 0;
}
