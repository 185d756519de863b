// The agent asks its source only for AgentCounterFields() (issue 29: every
// driver call costs CPU on the node). These tests check that the list is
// complete: a window carrying only those counters gives the agent's outputs
// exactly what a window carrying every counter gives. SYNTHETIC values.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "ofu/agent/window_evaluator.h"
#include "ofu/sinks/metrics_state.h"
#include "ofu/sinks/window_counters.h"

namespace ofu {
namespace {

// Every counter present and distinct from its neighbours, as `ofu top` reads them.
CounterSample EveryCounter() {
  CounterSample sample;
  sample.tensor_active = 0.5;
  sample.gr_engine_active = 0.9;
  sample.sm_active = 0.8;
  sample.sm_occupancy = 0.4;
  sample.dram_active = 0.3;
  sample.fp64_active = 0.01;
  sample.fp32_active = 0.1;
  sample.fp16_active = 0.02;
  sample.imma_active = 0.05;
  sample.hmma_active = 0.45;
  sample.dfma_active = 0.0;
  sample.dmma_active = 0.0;
  sample.sm_clock_mhz = 1755;
  sample.max_sm_clock_mhz = 1980;
  sample.power_w = 650;
  sample.energy_mj = 1e6;
  sample.clock_event_reasons = 4;
  return sample;
}

CounterSample OnlyAgentCounters(const CounterSample& all) {
  CounterSample kept;
  for (const CounterField field : agent::AgentCounterFields()) SetField(kept, field, GetField(all, field));
  return kept;
}

sinks::WindowBatch Evaluate(const CounterSample& sample) {
  static const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  agent::WindowEvaluator evaluator(specs, nullptr, 0.01);
  sources::Snapshot snapshot;
  snapshot.time_s = 1001;
  snapshot.window_s = 1;
  sources::GpuReading reading;
  reading.identity.key = reading.identity.uuid = "GPU-a";
  reading.identity.gpu_index = "0";
  reading.identity.model = "NVIDIA H100 80GB HBM3";
  reading.sample = sample;
  reading.clock_readings = 10;
  reading.clock_basis = sources::ClockBasis::kOversampled;
  snapshot.gpus = {reading};
  return evaluator.Evaluate(snapshot);
}

std::string Exposition(const sinks::WindowBatch& batch) {
  sources::FakeClock clock(1000);
  sinks::MetricsState state({"0.1.0", "nvml", 1.0, 3}, clock);
  EXPECT_TRUE(state.Consume(batch).ok());
  return state.Render(formats::ExpositionFormat::kPrometheusText);
}

TEST(AgentCounterFields, ExpositionIsTheSameWithOnlyThoseCounters) {
  const CounterSample all = EveryCounter();
  const std::string full = Exposition(Evaluate(all));
  const std::string reduced = Exposition(Evaluate(OnlyAgentCounters(all)));
  EXPECT_EQ(reduced, full);
  // The comparison has teeth: the exposition carries the non-tensor pipes.
  EXPECT_NE(full.find("ofu_fp32_active_seconds_total"), std::string::npos);
}

TEST(AgentCounterFields, StoredCountersAndWindowFiguresAreTheSame) {
  const CounterSample all = EveryCounter();
  const sinks::WindowBatch full = Evaluate(all);
  const sinks::WindowBatch reduced = Evaluate(OnlyAgentCounters(all));
  ASSERT_EQ(full.gpus.size(), 1u);
  ASSERT_EQ(reduced.gpus.size(), 1u);
  const OfuWindow& f = full.gpus[0].window;
  const OfuWindow& r = reduced.gpus[0].window;
  ASSERT_TRUE(f.ofu.has_value());
  EXPECT_EQ(r.ofu, f.ofu);
  EXPECT_EQ(r.busy, f.busy);
  EXPECT_EQ(r.tensor_active, f.tensor_active);
  EXPECT_EQ(r.sm_clock_mhz, f.sm_clock_mhz);
  EXPECT_EQ(r.non_tensor.flops_upper_bound_tflops, f.non_tensor.flops_upper_bound_tflops);
  const CounterValues cf = sinks::CountersOfWindow(full.gpus[0], 1);
  const CounterValues cr = sinks::CountersOfWindow(reduced.gpus[0], 1);
  EXPECT_EQ(cr.utilized_s(), cf.utilized_s());
  EXPECT_EQ(cr.busy_s(), cf.busy_s());
  EXPECT_EQ(cr[kCounterHmmaActive], cf[kCounterHmmaActive]);
  EXPECT_EQ(cr[kCounterImmaActive], cf[kCounterImmaActive]);
  EXPECT_EQ(cr[kCounterDfmaActive], cf[kCounterDfmaActive]);
  EXPECT_EQ(cr[kCounterFp64Active], cf[kCounterFp64Active]);
  EXPECT_EQ(cr[kCounterFp32Active], cf[kCounterFp32Active]);
  EXPECT_EQ(cr[kCounterFp16Active], cf[kCounterFp16Active]);
  EXPECT_EQ(cr[kCounterNonTensorTflop], cf[kCounterNonTensorTflop]);
}

TEST(AgentCounterFields, LeavesOutWhatNoAgentOutputCarries) {
  const auto fields = agent::AgentCounterFields();
  for (const CounterField unused : {CounterField::kSmActive, CounterField::kSmOccupancy, CounterField::kDramActive,
                                    CounterField::kDmmaActive, CounterField::kPowerW, CounterField::kEnergyMj}) {
    EXPECT_EQ(std::find(fields.begin(), fields.end(), unused), fields.end()) << InfoFor(unused).name;
  }
  // The clock event reasons are read: the clock model's power state (sw_power_cap) changes OFU.
  EXPECT_NE(std::find(fields.begin(), fields.end(), CounterField::kClockEventReasons), fields.end());
  EXPECT_EQ(fields.size(), 11u);
}

}  // namespace
}  // namespace ofu
