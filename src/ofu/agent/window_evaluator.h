// Turns a source's Snapshot into a WindowBatch: finds each GPU's SKU in the
// spec database (once per model), and computes the window's OFU and whether
// it was busy with the same rules as `ofu report` (core/windows.h), and
// carries the per-pipe tensor activity (HMMA/IMMA/DFMA) where the source has it.
//
// A GPU whose model the database does not know keeps its tensor activity and
// clock but has no OFU (the agent must not guess f_spec); the evaluator says
// so once per model in the batch notes.
//
// Thread-safety: one thread at a time (it caches lookups).
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>

#include "ofu/core/gpu_spec.h"
#include "ofu/sinks/window_batch.h"
#include "ofu/sources/source.h"

namespace ofu::agent {

// The counters Evaluate reads from a reading's sample, hence the only ones
// the agent's outputs (/metrics, the history store) can carry: the agent asks
// its source for these alone (SourceOptions::fields), since every driver
// call costs CPU on the node. They are the built-in counter rows marked
// agent_reads (core/sample.h), in the table's order: tensor activity, the
// engine activity for "busy", the non-tensor pipes (FP64, FP32, FP16), the
// tensor pipes (IMMA, HMMA, DFMA), the clocks and the clock event reasons
// (the SKU's clock model tells a burst at the power cap from one below it
// by sw_power_cap, core/clock_model.h); not SM activity, occupancy, DRAM,
// DMMA, power or energy.
std::span<const CounterField> AgentCounterFields();

class WindowEvaluator {
 public:
  // `specs` must outlive the evaluator. `gpu_model`, when not null, is the
  // SKU every GPU is treated as (the config's gpu_model, resolved once by
  // the caller); it must outlive the evaluator too. Null: each GPU's SKU is
  // looked up by the model its source reports.
  WindowEvaluator(const GpuSpecDatabase& specs, const GpuSpec* gpu_model, double busy_threshold);

  sinks::WindowBatch Evaluate(const sources::Snapshot& snapshot);

 private:
  const GpuSpec* SpecFor(const std::string& model, std::vector<std::string>& notes);

  const GpuSpecDatabase& specs_;
  const GpuSpec* gpu_model_;  // null: by each GPU's model
  double busy_threshold_;
  std::map<std::string, const GpuSpec*> cache_;  // model -> spec (null: unknown, already noted)
};

}  // namespace ofu::agent
