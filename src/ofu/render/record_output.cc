#include "ofu/render/record_output.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ofu::render {

std::string FormatRecordSummaryLine(const RecordSummary& s) {
  std::string why;
  if (s.interrupted) why = fmt::format("; stopped early by a signal, {:g} of {:g} s recorded", s.seconds, s.duration_s);
  if (s.source_ended && s.seconds + 1e-9 < s.duration_s) {
    why = fmt::format("; the source ended after {:g} of the {:g} s asked", s.seconds, s.duration_s);
  }
  return fmt::format("ofu record: wrote {}: {} windows of {} GPU{}, {:g} s, {} samples{}{}{}\n", s.out, s.windows,
                     s.gpus, s.gpus == 1 ? "" : "s", s.seconds, s.samples,
                     s.skipped_values > 0 ? fmt::format(" ({} invalid values left out)", s.skipped_values) : "",
                     s.synthetic ? ", SYNTHETIC" : "", why);
}

std::string FormatRecordSummaryJson(const RecordSummary& s) {
  const nlohmann::json j = {{"out", s.out},
                            {"source", s.source},
                            {"windows", s.windows},
                            {"gpus", s.gpus},
                            {"seconds", s.seconds},
                            {"duration", s.duration_s},
                            {"samples", s.samples},
                            {"skipped_values", s.skipped_values},
                            {"synthetic", s.synthetic},
                            {"interrupted", s.interrupted},
                            {"source_ended", s.source_ended}};
  return j.dump(2) + "\n";
}

}  // namespace ofu::render
