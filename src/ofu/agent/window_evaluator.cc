#include "ofu/agent/window_evaluator.h"

#include <array>

#include <fmt/format.h>

#include "ofu/core/gpu_share.h"

namespace ofu::agent {

namespace {

// The rows marked agent_reads (core/sample.h), in table order.
constexpr std::size_t CountAgentFields() {
  std::size_t n = 0;
  for (const CounterFieldInfo& row : kBuiltinCounterRows) n += row.agent_reads ? 1 : 0;
  return n;
}

constexpr auto kAgentFields = [] {
  std::array<CounterField, CountAgentFields()> fields{};
  std::size_t i = 0;
  for (const CounterFieldInfo& row : kBuiltinCounterRows) {
    if (row.agent_reads) fields[i++] = row.field;
  }
  return fields;
}();

}  // namespace

std::span<const CounterField> AgentCounterFields() { return kAgentFields; }

WindowEvaluator::WindowEvaluator(const GpuSpecDatabase& specs, const GpuSpec* gpu_model, double busy_threshold)
    : specs_(specs), gpu_model_(gpu_model), busy_threshold_(busy_threshold) {}

const GpuSpec* WindowEvaluator::SpecFor(const std::string& model, std::vector<std::string>& notes) {
  if (auto it = cache_.find(model); it != cache_.end()) return it->second;
  const GpuSpec* spec = nullptr;
  if (model.empty()) {
    notes.push_back("a GPU reports no model name: no OFU for it (set gpu_model in the config)");
  } else if (auto found = specs_.Lookup(model); found.ok()) {
    spec = *found;
  } else {
    notes.push_back(found.error().message);
  }
  cache_.emplace(model, spec);
  return spec;
}

sinks::WindowBatch WindowEvaluator::Evaluate(const sources::Snapshot& snapshot) {
  sinks::WindowBatch batch;
  batch.end_s = snapshot.time_s;
  batch.window_s = snapshot.window_s;
  batch.notes = snapshot.notes;
  for (const sources::GpuReading& reading : snapshot.gpus) {
    sinks::GpuWindow gpu;
    gpu.identity = reading.identity;
    gpu.health = reading.health;
    gpu.problem = reading.problem;
    const GpuSpec* spec = gpu_model_ != nullptr ? gpu_model_ : SpecFor(reading.identity.model, batch.notes);
    std::optional<OfuScale> scale;
    if (spec != nullptr) {
      gpu.sku = spec->id;
      gpu.architecture = spec->architecture;
      gpu.spec_clock_mhz = spec->SpecClockMhz();
      scale = OfuScaleOf(*spec, reading.identity);
    }
    CounterSample sample = reading.sample;
    sample.time_s = snapshot.time_s;
    gpu.window = WindowOfSample(sample, snapshot.window_s, scale, busy_threshold_,
                                reading.clock_basis == sources::ClockBasis::kExactCycles);
    gpu.window.sm_clock_min_mhz = reading.sm_clock_min_mhz;
    gpu.window.sm_clock_max_mhz = reading.sm_clock_max_mhz;
    gpu.window.clock_readings = reading.clock_readings;
    gpu.pipes = {sample.hmma_active, sample.imma_active, sample.dfma_active};
    batch.gpus.push_back(std::move(gpu));
  }
  return batch;
}

}  // namespace ofu::agent
