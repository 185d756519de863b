// A recording's report as stored rows (analysis/recording_history.h), the
// input `ofu report --input FILE --html` gives the HTML report. Expected
// rows worked out by hand from the store's rule (history::RowOfWindow).
#include "ofu/analysis/recording_history.h"

#include <gtest/gtest.h>

#include "ofu/history/history_reader.h"

namespace ofu::analysis {
namespace {

// covered_s: the seconds of tensor data in it (the whole window where it has
// tensor data, unless given).
OfuWindow Window(double start_s, double end_s, std::optional<double> ofu, std::optional<double> tensor,
                 std::optional<double> clock_mhz, bool busy, std::optional<double> covered_s = std::nullopt) {
  OfuWindow w;
  w.start_s = start_s;
  w.end_s = end_s;
  w.covered_s = covered_s.value_or(tensor ? end_s - start_s : 0);
  w.ofu = ofu;
  w.tensor_active = tensor;
  w.sm_clock_mhz = clock_mhz;
  w.busy = busy;
  return w;
}

TEST(HistoryOfRecording, OneStoredGpuPerGpuAndOneRowPerWindow) {
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  Report report;
  report.source_name = "run.om";
  GpuReport h100;
  h100.identity.key = "GPU-a";
  h100.identity.uuid = "GPU-a";
  h100.identity.gpu_index = "0";
  h100.identity.hostname = "node1";
  h100.model = "NVIDIA H100 80GB HBM3";
  h100.spec = *specs.Lookup("h100-sxm5");
  h100.windowed.windows = {Window(0, 10, 0.5, 0.6, 1800, true), Window(10, 20, std::nullopt, std::nullopt, 1700, false),
                           Window(20, 30, 0.25, 0.3, 1800, true, /*covered_s=*/4)};
  GpuReport mystery;  // no UUID in the recording, a model the database lacks, no clock
  mystery.identity.key = "node1/1";
  mystery.identity.gpu_index = "1";
  mystery.model = "NVIDIA Mystery 1";
  mystery.windowed.windows = {Window(0, 5, std::nullopt, 0.3, std::nullopt, true)};
  report.gpus = {h100, mystery};

  const history::StoredHistory history = HistoryOfRecording(report);
  EXPECT_EQ(history.path, "run.om");
  EXPECT_TRUE(history.jobs.empty());
  ASSERT_EQ(history.gpus.size(), 2u);
  EXPECT_EQ(history.gpus[0].id, 1);
  EXPECT_EQ(history.gpus[0].key(), "GPU-a");
  EXPECT_EQ(history.gpus[0].identity.gpu_index, "0");
  EXPECT_EQ(history.gpus[0].identity.hostname, "node1");
  EXPECT_EQ(history.gpus[0].sku, "h100-sxm5");
  EXPECT_EQ(history.gpus[0].architecture, h100.spec->architecture);
  EXPECT_EQ(history.gpus[0].last_end_s, 30);
  EXPECT_EQ(history.gpus[1].id, 2);
  EXPECT_EQ(history.gpus[1].key(), "node1/1");  // the key stands in for the missing UUID
  EXPECT_EQ(history.gpus[1].sku, "");
  EXPECT_EQ(history.gpus[1].last_end_s, 5);

  ASSERT_EQ(history.windows.size(), 4u);
  // 10 s at OFU 0.5, busy, tensor 0.6: 10 observed, 5 utilized, 6 tensor-active seconds.
  const history::StoredWindow& first = history.windows[0];
  EXPECT_EQ(first.gpu_id, 1);
  EXPECT_EQ(first.end_s, 10);
  EXPECT_EQ(first.span_s, 10);
  EXPECT_DOUBLE_EQ(first.counters.observed_s(), 10);
  EXPECT_DOUBLE_EQ(first.counters.utilized_s(), 5);
  EXPECT_DOUBLE_EQ(first.counters.busy_s(), 10);
  EXPECT_DOUBLE_EQ(first.counters.busy_utilized_s(), 5);
  EXPECT_DOUBLE_EQ(first.counters.tensor_active_s(), 6);
  EXPECT_EQ(first.clock_mhz, 1800);
  EXPECT_EQ(first.flags, 0u);
  // No OFU: a row with its clock only, flagged as without tensor activity.
  const history::StoredWindow& second = history.windows[1];
  EXPECT_EQ(second.gpu_id, 1);
  EXPECT_EQ(second.span_s, 10);
  EXPECT_EQ(second.counters.observed_s(), 0);
  EXPECT_EQ(second.clock_mhz, 1700);
  EXPECT_EQ(second.flags, history::kHistoryNoTensor);
  // The recording ended 4 s into the last window: the row spans those 4 s
  // (4 observed, 0.25 x 4 = 1 utilized, 0.3 x 4 = 1.2 tensor-active), not 10.
  const history::StoredWindow& partial = history.windows[2];
  EXPECT_EQ(partial.gpu_id, 1);
  EXPECT_EQ(partial.end_s, 30);
  EXPECT_EQ(partial.span_s, 4);
  EXPECT_DOUBLE_EQ(partial.counters.observed_s(), 4);
  EXPECT_DOUBLE_EQ(partial.counters.utilized_s(), 1);
  EXPECT_DOUBLE_EQ(partial.counters.tensor_active_s(), 1.2);
  const history::StoredWindow& third = history.windows[3];
  EXPECT_EQ(third.gpu_id, 2);
  EXPECT_EQ(third.span_s, 5);
  EXPECT_EQ(third.counters.observed_s(), 0);
  EXPECT_FALSE(third.clock_mhz);
  EXPECT_EQ(third.flags, history::kHistoryNoClock | history::kHistoryUnknownModel);
}

}  // namespace
}  // namespace ofu::analysis
