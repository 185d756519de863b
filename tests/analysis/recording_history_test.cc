// A recording's report as stored rows (analysis/recording_history.h), the
// input `ofu report --input FILE --html` gives the HTML report. Expected
// rows worked out by hand from the store's rule (history::RowOfWindow).
#include "ofu/analysis/recording_history.h"

#include <gtest/gtest.h>

#include <set>

#include "ofu/analysis/html_report.h"
#include "ofu/core/gpu_key.h"
#include "ofu/history/history_reader.h"
#include "ofu/sources/replay.h"

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
  h100.identity.pci_bus_id = "00000000:18:00.0";
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
  EXPECT_EQ(history.gpus[0].identity.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(history.gpus[0].identity.model, "NVIDIA H100 80GB HBM3");  // the data name none: the model used
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

// The key rule (core/gpu_key.h): the UUID, else host and index; a MIG
// instance adds "/gi<N>" to its GPU's key; a key set is read before the UUID.
TEST(GpuKey, OneRuleForWholeGpusAndMigInstances) {
  EXPECT_EQ(WholeGpuKey("GPU-a", "node1", "0"), "GPU-a");
  EXPECT_EQ(WholeGpuKey("", "node1", "3"), "node1/gpu3");
  EXPECT_EQ(WholeGpuKey("", "", "3"), "gpu3");
  EXPECT_EQ(MigInstanceKey("GPU-a", "5"), "GPU-a/gi5");
  GpuIdentity instance;
  instance.uuid = "GPU-a";
  EXPECT_EQ(GpuKey(instance), "GPU-a");  // no key set: the UUID
  instance.key = "GPU-a/gi5";
  EXPECT_EQ(GpuKey(instance), "GPU-a/gi5");  // never the UUID first
}

// The real 8x A800 node of tests/data/scrapes (README: GPU 0 as three
// 2g.20gb instances, GPU_I_ID 3, 5 and 6, beside seven whole GPUs). Before
// the identity was copied whole, the three instances were stored under
// their GPU's UUID, so the HTML page drew three timelines under one key.
TEST(HistoryOfRecording, TheRealA800MigScrapeKeepsEachInstanceApartOnThePage) {
  const GpuSpecDatabase specs = *GpuSpecDatabase::Embedded();
  auto recording = sources::ReadRecordingFile(OFU_TEST_DATA_DIR "/scrapes/ampere-a800-mig.prom");
  ASSERT_TRUE(recording.ok()) << recording.error().message;
  ReportOptions options;
  options.windows.window_s = 60;
  auto report = BuildReport(*recording, specs, options);
  ASSERT_TRUE(report.ok()) << report.error().message;

  const history::StoredHistory history = HistoryOfRecording(*report);
  ASSERT_EQ(history.gpus.size(), 10u);
  const std::string gpu0 = "GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418";
  const char* const instances[] = {"3", "5", "6"};
  for (int i = 0; i < 3; ++i) {
    const GpuIdentity& id = history.gpus[i].identity;
    EXPECT_EQ(id.key, gpu0 + "/gi" + instances[i]);
    EXPECT_EQ(id.uuid, gpu0);
    EXPECT_EQ(id.mig_profile, "2g.20gb");
    EXPECT_EQ(id.mig_instance, instances[i]);
    EXPECT_EQ(id.gpu_index, "0");
    EXPECT_EQ(id.hostname, "msxf-hpc-64-35-ai");
    EXPECT_EQ(id.model, "NVIDIA A800-SXM4-80GB");
    EXPECT_EQ(history.gpus[i].sku, report->gpus[i].spec->id);
  }
  EXPECT_EQ(history.gpus[3].key(), "GPU-9e5b8fec-61bf-5124-a0a9-079af1b65cc6");  // GPU 1, whole
  EXPECT_EQ(history.gpus[3].identity.mig_profile, "");

  HtmlReportOptions page;
  page.source = "ampere-a800-mig.prom";
  const HtmlReportView view = BuildHtmlReportView(history, *report, page);
  ASSERT_EQ(view.gpus.size(), 10u);
  std::set<std::string> keys;
  for (const GpuTimeline& gpu : view.gpus) keys.insert(gpu.uuid);
  EXPECT_EQ(keys.size(), 10u);  // ten devices, ten timelines, ten keys
  for (const char* instance : instances) EXPECT_EQ(keys.count(gpu0 + "/gi" + instance), 1u) << instance;
  EXPECT_EQ(keys.count(gpu0), 0u);  // the GPU itself is its instances
}

}  // namespace
}  // namespace ofu::analysis
