// libFuzzer entry for the training-log reader (training_log.h): any text,
// read with the compiled-in table of line patterns (data/training_log_patterns.json,
// parsed once). A parsed log keeps the contract: at least one step, each step once, each
// value finite and not negative (an MFU at most 1: impossible ones are left
// out, counted and named in the notes), lines increasing, the median among
// the values; the row for reconcile carries FLOP/s per GPU exactly for the
// formats that print it; the framework is one of the table's, or the
// generic rule behind it (training_log_generic.h), whose log always says
// what to check; an error always names the file first.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "ofu/analysis/reconcile.h"
#include "ofu/formats/training_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The table is data compiled in: parsed once for the whole run.
  static const auto table = ofu::formats::TrainingLogPatterns::Embedded();
  if (!table.ok()) std::abort();
  const std::string name = "fuzz.log";
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto log = ofu::formats::ParseTrainingLog(text, name, *table);
  if (!log.ok()) {
    if (log.error().message.rfind(name, 0) != 0) std::abort();
    return 0;
  }
  if (log->steps.empty()) std::abort();
  const auto frameworks = table->Frameworks();
  const bool generic = log->format == ofu::formats::TrainingLogFormat::kGeneric;
  if (!generic && std::find(frameworks.begin(), frameworks.end(), log->format) == frameworks.end()) std::abort();
  if (generic && log->checks.empty()) std::abort();
  if (log->gpu_count && *log->gpu_count <= 0) std::abort();
  std::set<std::int64_t> steps;
  int previous_line = 0;
  double low = INFINITY, high = -INFINITY;
  for (const auto& step : log->steps) {
    if (!steps.insert(step.step).second) std::abort();
    if (!std::isfinite(step.value) || step.value < 0) std::abort();
    if (log->quantity == ofu::formats::TrainingLogQuantity::kMfu && step.value > 1) std::abort();
    if (step.line <= previous_line) std::abort();
    previous_line = step.line;
    low = std::min(low, step.value);
    high = std::max(high, step.value);
  }
  if (log->median < low || log->median > high) std::abort();
  if (log->peak_flops && !(*log->peak_flops > 0 && std::isfinite(*log->peak_flops))) std::abort();
  if (log->impossible_steps > 0 && log->notes.empty()) std::abort();
  const auto row = ofu::formats::ReportedMfuOf(*log, "job");
  if (row.flops_per_gpu.has_value() != (log->quantity == ofu::formats::TrainingLogQuantity::kFlopsPerGpu)) {
    std::abort();
  }
  // Over a GPU's peak (the H100 SXM5's bf16, FLOP/s): an MFU when there is
  // one is in 0..1, an absent one comes with a note saying why.
  const auto own = ofu::analysis::MfuOverOwnPeak(row, 989.4e12, "gpu");
  if (own.mfu && !(*own.mfu >= 0 && std::isfinite(*own.mfu))) std::abort();
  if (row.flops_per_gpu && own.mfu && *own.mfu > 1) std::abort();
  if (!own.mfu && own.note.empty()) std::abort();
  return 0;
}
