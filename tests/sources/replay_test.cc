#include "ofu/sources/replay.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

Result<Recording> Read(const std::string& text, const RecordingOptions& options = {}) {
  std::istringstream in(text);
  return ReadRecording(in, "test.prom", options);
}

const GpuRecording* Find(const Recording& r, std::string_view key) {
  for (const auto& g : r.gpus) {
    if (g.identity.key == key) return &g;
  }
  return nullptr;
}

// tests/data/dcgm-exporter-sample.prom: literal lines published by NVIDIA
// and in dcgm-exporter issues (see tests/data/README.md).
TEST(Replay, ReadsEveryLineOfThePublicDcgmExporterSample) {
  std::ifstream file(OFU_TEST_DATA_DIR "/dcgm-exporter-sample.prom");
  ASSERT_TRUE(file);
  auto r = ReadRecording(file, "dcgm-exporter-sample.prom");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->samples_read, 4u);
  EXPECT_EQ(r->samples_used, 4u);
  EXPECT_TRUE(r->timestamps_assumed);
  ASSERT_EQ(r->gpus.size(), 4u);

  const GpuRecording* a100 = Find(*r, "GPU-34319582-d595-d1c7-d1d2-179bcfa61660");
  ASSERT_NE(a100, nullptr);
  EXPECT_EQ(a100->identity.hostname, "ub20-a100-k8s");
  EXPECT_EQ(a100->identity.gpu_index, "0");
  EXPECT_EQ(a100->identity.model, "");  // the line has no modelName
  ASSERT_EQ(a100->samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*a100->samples[0].tensor_active, 0.929260);
  EXPECT_FALSE(a100->samples[0].sm_clock_mhz.has_value());

  const GpuRecording* mig = Find(*r, "GPU-34319582-d595-d1c7-d1d2-179bcfa61660/gi13");
  ASSERT_NE(mig, nullptr);
  EXPECT_EQ(mig->identity.mig_profile, "1g.5gb");
  EXPECT_EQ(mig->identity.mig_instance, "13");
  EXPECT_DOUBLE_EQ(*mig->samples[0].tensor_active, 0.930433);

  const GpuRecording* h100 = Find(*r, "GPU-927d7444-b45a-7c49-8402-5e686e46a026");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100->identity.pci_bus_id, "00000000:00:09.0");
  EXPECT_EQ(h100->identity.hostname, "6d6d7dc3ce21");
  EXPECT_DOUBLE_EQ(*h100->samples[0].sm_clock_mhz, 345);
  EXPECT_FALSE(h100->samples[0].tensor_active.has_value());

  const GpuRecording* pod = Find(*r, "GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77/gi7");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->identity.mig_profile, "1g.10gb");
  EXPECT_DOUBLE_EQ(*pod->samples[0].gr_engine_active, 0.0);  // a real 0, not absent
  EXPECT_FALSE(pod->samples[0].tensor_active.has_value());
}

TEST(Replay, TimestampedScrapesBecomeSamplesPerInstant) {
  // 0.0.4 timestamps are milliseconds.
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 0.5 1700000001000\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a\"} 1830 1700000001000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-a\"} 0.25 1700000002000\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a\"} 1500 1700000002000\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->timestamps_assumed);
  ASSERT_EQ(r->gpus.size(), 1u);
  const auto& s = r->gpus[0].samples;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].time_s, 1700000001.0);
  EXPECT_DOUBLE_EQ(*s[0].tensor_active, 0.5);
  EXPECT_DOUBLE_EQ(*s[0].sm_clock_mhz, 1830);
  EXPECT_DOUBLE_EQ(s[1].time_s, 1700000002.0);
  EXPECT_DOUBLE_EQ(*s[1].sm_clock_mhz, 1500);
  EXPECT_EQ(r->gpus[0].identity.model, "NVIDIA H100 80GB HBM3");
}

TEST(Replay, GroupedByFamilyEqualsInterleaved) {
  const std::string interleaved =
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5 1700000001\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.6 1700000002\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1700 1700000002\n";
  const std::string grouped =
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5 1700000001\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.6 1700000002\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1700 1700000002\n";
  auto a = Read(interleaved), b = Read(grouped);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->gpus[0].samples.size(), 2u);
  ASSERT_EQ(b->gpus[0].samples.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(a->gpus[0].samples[i].time_s, b->gpus[0].samples[i].time_s);
    EXPECT_EQ(*a->gpus[0].samples[i].tensor_active, *b->gpus[0].samples[i].tensor_active);
    EXPECT_EQ(*a->gpus[0].samples[i].sm_clock_mhz, *b->gpus[0].samples[i].sm_clock_mhz);
  }
}

TEST(Replay, ScrapesWithoutTimestampsAreSplitWhereASeriesRepeats) {
  RecordingOptions options;
  options.untimestamped_interval_s = 15;
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.7\n"  // repeats: scrape 2
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1700\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.9\n",  // scrape 3
      options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->timestamps_assumed);
  EXPECT_EQ(r->assumed_interval_s, 15);
  const auto& s = r->gpus[0].samples;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].time_s, 0);
  EXPECT_EQ(s[1].time_s, 15);
  EXPECT_EQ(s[2].time_s, 30);
  EXPECT_DOUBLE_EQ(*s[1].tensor_active, 0.7);
  EXPECT_DOUBLE_EQ(*s[1].sm_clock_mhz, 1700);
  EXPECT_FALSE(s[2].sm_clock_mhz.has_value());
}

TEST(Replay, LegacyAndDcgm46NamesAndBothLabelSpellingsAgree) {
  auto legacy = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\",Hostname=\"n1\"} 0.5 1700000001\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{UUID=\"GPU-a\",Hostname=\"n1\"} 0.9 1700000001\n"
      "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-a\",Hostname=\"n1\"} 600 1700000001\n"
      "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{UUID=\"GPU-a\",Hostname=\"n1\"} 4 1700000001\n");
  auto current = Read(
      "DCGM_FI_PROF_TENSOR_UTIL_RATIO{uuid=\"GPU-a\",hostname=\"n1\"} 0.5 1700000001\n"
      "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO{uuid=\"GPU-a\",hostname=\"n1\"} 0.9 1700000001\n"
      "DCGM_FI_DEV_BOARD_POWER_WATTS{uuid=\"GPU-a\",hostname=\"n1\"} 600 1700000001\n"
      "DCGM_FI_DEV_CLOCKS_EVENT_REASONS{uuid=\"GPU-a\",hostname=\"n1\"} 4 1700000001\n");
  ASSERT_TRUE(legacy.ok() && current.ok());
  for (const Recording* r : {&*legacy, &*current}) {
    ASSERT_EQ(r->gpus.size(), 1u);
    EXPECT_EQ(r->gpus[0].identity.key, "GPU-a");
    EXPECT_EQ(r->gpus[0].identity.hostname, "n1");
    const CounterSample& s = r->gpus[0].samples.at(0);
    EXPECT_DOUBLE_EQ(*s.tensor_active, 0.5);
    EXPECT_DOUBLE_EQ(*s.gr_engine_active, 0.9);
    EXPECT_DOUBLE_EQ(*s.power_w, 600);
    EXPECT_EQ(*s.clock_event_reasons, 4u);
  }
}

TEST(Replay, PercentScaleFromUnitLineOrOption) {
  auto by_unit = Read(
      "# UNIT DCGM_FI_PROF_PIPE_TENSOR_ACTIVE percent\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 50 1700000001\n");
  ASSERT_TRUE(by_unit.ok()) << by_unit.error().message;
  EXPECT_DOUBLE_EQ(*by_unit->gpus[0].samples[0].tensor_active, 0.5);

  RecordingOptions options;
  options.activity_scale = ValueScale::kPercent;
  auto by_option = Read("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 25 1700000001\n", options);
  ASSERT_TRUE(by_option.ok());
  EXPECT_DOUBLE_EQ(*by_option->gpus[0].samples[0].tensor_active, 0.25);
}

TEST(Replay, PercentInARatioMetricIsAnErrorWithAHint) {
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5 1700000001\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 93 1700000002\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(r.error().message.rfind("test.prom:2: ", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find("--activity-scale percent"), std::string::npos);
}

TEST(Replay, BlankSentinelsAndNaNAreAbsentNotZero) {
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 140737488355328.0 1700000001\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} NaN 1700000002\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->blank_values, 2u);
  ASSERT_EQ(r->gpus[0].samples.size(), 1u);
  EXPECT_FALSE(r->gpus[0].samples[0].tensor_active.has_value());
  EXPECT_DOUBLE_EQ(*r->gpus[0].samples[0].sm_clock_mhz, 1830);
}

TEST(Replay, MixingTimestampedAndBareSamplesIsAnError) {
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5 1700000001\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("test.prom:2: ", 0), 0u) << r.error().message;
}

TEST(Replay, TheSameSeriesTwiceAtOneInstantIsAnErrorNamingBothLines) {
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5 1700000001\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001\n"
      "DCGM_FI_PROF_TENSOR_UTIL_RATIO{UUID=\"GPU-a\"} 0.6 1700000001\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("test.prom:3: ", 0), 0u) << r.error().message;
  EXPECT_NE(r.error().message.find("line 1"), std::string::npos);
}

TEST(Replay, ASampleWithoutGpuIdentityIsAnError) {
  auto r = Read("DCGM_FI_DEV_SM_CLOCK{Hostname=\"n1\"} 1830 1700000001\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("test.prom:1: ", 0), 0u) << r.error().message;
}

TEST(Replay, TimestampsBeyondTheYear5138AreAnError) {
  // Found by fuzzing: such times overflowed the window arithmetic.
  auto r =
      Read("DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001\nDCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1e300\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("test.prom:2: timestamp", 0), 0u) << r.error().message;
}

TEST(Replay, GpuWithoutUuidIsKeyedByHostAndIndex) {
  auto r = Read("DCGM_FI_DEV_SM_CLOCK{gpu=\"3\",Hostname=\"n1\"} 1830 1700000001\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->gpus[0].identity.key, "n1/gpu3");
}

TEST(Replay, NegativeClockIsAnError) {
  auto r = Read("DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} -5 1700000001\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("SM clock"), std::string::npos);
}

TEST(Replay, MalformedTextIsAnErrorWithTheLine) {
  auto r = Read("DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001\nDCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a} 1\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(r.error().message.rfind("test.prom:2: ", 0), 0u) << r.error().message;
}

TEST(Replay, MigInstanceTakesItsParentsClockWhenItHasNone) {
  auto r = Read(
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1755 1700000001\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\",GPU_I_ID=\"2\",GPU_I_PROFILE=\"3g.40gb\"} 0.4 1700000001\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const GpuRecording* mig = Find(*r, "GPU-a/gi2");
  ASSERT_NE(mig, nullptr);
  ASSERT_EQ(mig->samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*mig->samples[0].sm_clock_mhz, 1755);
  EXPECT_DOUBLE_EQ(*mig->samples[0].tensor_active, 0.4);
}

TEST(Replay, RecordingInfoSaysWhetherItIsSynthetic) {
  auto r = Read(
      "ofu_recording_info{synthetic=\"true\",description=\"made up\"} 1\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->synthetic, std::optional<bool>(true));
  EXPECT_EQ(r->description, "made up");
  auto plain = Read("DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\n");
  EXPECT_FALSE(plain->synthetic.has_value());
}

TEST(Replay, UnknownMetricsAreSkippedAndCounted) {
  auto r = Read("DCGM_FI_DEV_GPU_TEMP{UUID=\"GPU-a\"} 40\nDCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->samples_read, 2u);
  EXPECT_EQ(r->samples_used, 1u);
}

// ---------------------------------------------------------------------------
// Exposition text as exporters really write it

// dcgm-exporter writes this for fields it cannot format (the VGPU line is
// real, from tests/data/scrapes/ampere-a800-mig.prom; the rest is made up).
TEST(ReplayLeniency, NonNumericValuesInUnusedFamiliesAreSkippedWithOneNotePerFamily) {
  auto r = Read(
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1410\n"
      "# HELP DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION vGPU Per Process Utilization\n"
      "# TYPE DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION gauge\n"
      "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{UUID=\"GPU-a\"} ERROR - FAILED TO CONVERT TO STRING\n"
      "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{UUID=\"GPU-b\"} ERROR - FAILED TO CONVERT TO STRING\n"
      "DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR{UUID=\"GPU-a\"} MIG-GPU-a/3\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.25\n"
      "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{noidentity=\"x\"} ERROR - FAILED TO CONVERT TO STRING\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->samples_read, 6u);
  EXPECT_EQ(r->samples_used, 2u);
  EXPECT_EQ(r->non_numeric_values, 4u);
  ASSERT_EQ(r->gpus.size(), 1u);  // GPU-b appears only in a family ofu does not use
  EXPECT_DOUBLE_EQ(*r->gpus[0].samples.at(0).tensor_active, 0.25);
  EXPECT_DOUBLE_EQ(*r->gpus[0].samples.at(0).sm_clock_mhz, 1410);
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_EQ(r->notes[0],
            "test.prom:4: DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION: value 'ERROR - FAILED TO CONVERT TO STRING' is not "
            "a number; 3 such samples skipped (family not used by ofu)");
  EXPECT_EQ(r->notes[1],
            "test.prom:6: DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR: value 'MIG-GPU-a/3' is not a number; 1 such sample "
            "skipped (family not used by ofu)");
}

TEST(ReplayLeniency, NonNumericValueInAUsedFamilyMakesThatReadingAbsentNotZero) {
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} ERROR - FAILED TO CONVERT TO STRING 1700000001000\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 1700000001000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-b\"} ERROR 1700000001000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5 1700000002000\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1755 1700000002000\n"
      "DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-a\"} 1e999 1700000002000\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->timestamps_assumed);
  EXPECT_EQ(r->non_numeric_values, 3u);
  ASSERT_EQ(r->gpus.size(), 2u);
  const GpuRecording* a = Find(*r, "GPU-a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->samples.size(), 2u);
  EXPECT_FALSE(a->samples[0].tensor_active.has_value());
  EXPECT_DOUBLE_EQ(*a->samples[0].sm_clock_mhz, 1830);
  EXPECT_DOUBLE_EQ(*a->samples[1].tensor_active, 0.5);
  EXPECT_FALSE(a->samples[1].power_w.has_value());
  const GpuRecording* b = Find(*r, "GPU-b");  // known, with nothing to say
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->samples.empty());
  ASSERT_EQ(r->notes.size(), 2u);
  EXPECT_EQ(r->notes[0],
            "test.prom:1: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE: value 'ERROR - FAILED TO CONVERT TO STRING 1700000001000' "
            "is not a number; 2 such samples skipped, so those GPUs' tensor activity is absent at those instants");
  EXPECT_EQ(r->notes[1],
            "test.prom:6: DCGM_FI_DEV_POWER_USAGE: value '1e999 1700000002000' is out of range; 1 such sample "
            "skipped, so that GPU's power is absent at that instant");
}

// Without timestamps a repeated series starts a new scrape; a series whose
// value is text is still a series, or scrape 2's tensor value would land in
// scrape 1 here.
TEST(ReplayLeniency, NonNumericSamplesStillMarkScrapesInAFileWithoutTimestamps) {
  auto r = Read(
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} ERROR\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1700\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->timestamps_assumed);
  const auto& s = r->gpus.at(0).samples;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[0].tensor_active.has_value());
  EXPECT_DOUBLE_EQ(*s[0].sm_clock_mhz, 1830);
  EXPECT_DOUBLE_EQ(*s[1].tensor_active, 0.5);
  EXPECT_DOUBLE_EQ(*s[1].sm_clock_mhz, 1700);
}

TEST(ReplayLeniency, ANonNumericSampleOfAUsedFamilyStillNeedsAGpuIdentity) {
  auto r = Read("DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830\nDCGM_FI_DEV_SM_CLOCK{Hostname=\"n1\"} ERROR\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("test.prom:2: DCGM_FI_DEV_SM_CLOCK has neither", 0), 0u) << r.error().message;
}

TEST(ReplayLeniency, NotesShowOddBytesEscapedAndLongValuesCut) {
  auto r = Read("odd{} \x01\xff" + std::string(100, 'x') + "\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "test.prom:1: odd: value '\\x01\\xff" + std::string(62, 'x') +
                             "...' is not a number; 1 such sample skipped (family not used by ofu)");
}

TEST(ReplayLeniency, RecordingInfoWithATextValueStillSaysWhatTheRecordingIs) {
  auto r = Read(
      "ofu_recording_info{synthetic=\"true\",description=\"made up\"} yes\nDCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->synthetic, std::optional<bool>(true));
  EXPECT_TRUE(r->notes.empty());
}

// Repeated and changing HELP/TYPE lines (promtool's parser refuses a second
// HELP or TYPE for a family; Prometheus' scraper does not) and families ofu
// does not know.
TEST(ReplayLeniency, RepeatedHelpAndTypeAndUnknownFamiliesDoNotStopARead) {
  auto r = Read(
      "# HELP DCGM_FI_PROF_PIPE_TENSOR_ACTIVE Ratio of cycles the tensor (HMMA) pipe is active (in %).\n"
      "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge\n"
      "# HELP DCGM_FI_PROF_PIPE_TENSOR_ACTIVE Ratio of cycles the tensor (HMMA) pipe is active.\n"
      "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{UUID=\"GPU-a\"} 0.5\n"
      "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE counter\n"
      "# TYPE DCGM_FI_DEV_FUTURE_FIELD untyped\n"
      "DCGM_FI_DEV_FUTURE_FIELD{UUID=\"GPU-a\"} 7\n"
      "DCGM_EXP_XID_ERRORS_COUNT{UUID=\"GPU-a\",window_size_in_ms=\"300000\",xid=\"31\"} 1\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->samples_read, 3u);
  EXPECT_EQ(r->samples_used, 1u);
  EXPECT_DOUBLE_EQ(*r->gpus.at(0).samples.at(0).tensor_active, 0.5);
  EXPECT_TRUE(r->notes.empty());
}

// dcgm-exporter 1.x names, also served by later exporters run with
// --use-old-namespace (NVIDIA/dcgm-exporter etc/1.x-compatibility-metrics.csv).
TEST(ReplayLeniency, DcgmExporter1xNamesAreRead) {
  auto r = Read(
      "# HELP dcgm_fi_prof_pipe_tensor_active Ratio of cycles the tensor (HMMA) pipe is active (in %).\n"
      "# TYPE dcgm_fi_prof_pipe_tensor_active gauge\n"
      "dcgm_fi_prof_pipe_tensor_active{gpu=\"0\",uuid=\"GPU-a\"} 0.25\n"
      "dcgm_sm_clock{gpu=\"0\",uuid=\"GPU-a\"} 1530\n"
      "dcgm_power_usage{gpu=\"0\",uuid=\"GPU-a\"} 250.5\n"
      "dcgm_fi_prof_gr_engine_active{gpu=\"0\",uuid=\"GPU-a\"} 0.75\n"
      "dcgm_gpu_utilization{gpu=\"0\",uuid=\"GPU-a\"} 90\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->samples_used, 4u);
  const CounterSample& s = r->gpus.at(0).samples.at(0);
  EXPECT_EQ(r->gpus[0].identity.uuid, "GPU-a");
  EXPECT_DOUBLE_EQ(*s.tensor_active, 0.25);
  EXPECT_DOUBLE_EQ(*s.sm_clock_mhz, 1530);
  EXPECT_DOUBLE_EQ(*s.power_w, 250.5);
  EXPECT_DOUBLE_EQ(*s.gr_engine_active, 0.75);
}

TEST(ReplayLeniency, MalformedSyntaxStillStopsTheReadNamingTheLine) {
  for (const char* bad : {"DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\" ERROR\n",           // label set not closed
                          "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-\\a\"} 1830\n",         // bad escape
                          "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1830 later\n"}) {  // bad timestamp
    SCOPED_TRACE(bad);
    auto r = Read(std::string("DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{UUID=\"GPU-a\"} ERROR - FAILED TO CONVERT TO "
                              "STRING\n") +
                  bad);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedInput);
    EXPECT_EQ(r.error().message.rfind("test.prom:2: ", 0), 0u) << r.error().message;
  }
}

// Phases (docs/formats.md, "Phases"): labelled intervals with an optional
// true MFU, read in file order; other labels on them and on the header are
// for people and change nothing.
TEST(Replay, ReadsPhasesAndHeaderLabels) {
  auto r = Read(
      "# TYPE ofu_recording info\n"
      "ofu_recording_info{synthetic=\"false\",description=\"d\",driver=\"580.159.04\"} 1 100\n"
      "# TYPE ofu_recording_phase info\n"
      "ofu_recording_phase_info{phase=\"bf16\",kind=\"gemm\",precision=\"bf16\",start=\"101.5\",end=\"107\","
      "mfu=\"0.69\",peak_tflops=\"989.4\",note=\"any\"} 1 101.5\n"
      "ofu_recording_phase_info{phase=\"idle\",start=\"107\",end=\"110\"} 1 107\n"
      "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1980 101\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->synthetic, std::optional<bool>(false));
  EXPECT_EQ(r->description, "d");
  ASSERT_EQ(r->phases.size(), 2u);
  const RecordedPhase& gemm = r->phases[0];
  EXPECT_EQ(gemm.name, "bf16");
  EXPECT_EQ(gemm.kind, "gemm");
  EXPECT_EQ(gemm.precision, "bf16");
  EXPECT_DOUBLE_EQ(gemm.start_s, 101.5);
  EXPECT_DOUBLE_EQ(gemm.end_s, 107);
  EXPECT_EQ(gemm.mfu, std::optional<double>(0.69));
  EXPECT_EQ(gemm.peak_tflops, std::optional<double>(989.4));
  EXPECT_EQ(gemm.line, 4u);
  EXPECT_EQ(r->phases[1].name, "idle");
  EXPECT_TRUE(r->phases[1].kind.empty());
  EXPECT_FALSE(r->phases[1].mfu.has_value());  // not stated: absent, not 0
  ASSERT_EQ(r->gpus.size(), 1u);
  EXPECT_EQ(r->gpus[0].samples.size(), 1u);
}

TEST(Replay, RefusesAPhaseThatCannotBeWhatItSays) {
  const std::string head = "DCGM_FI_DEV_SM_CLOCK{UUID=\"GPU-a\"} 1980 101\n";
  const std::pair<std::string, std::string> cases[] = {
      {"ofu_recording_phase_info{start=\"1\",end=\"2\"} 1\n", "test.prom:2: ofu_recording_phase_info has no phase"},
      {"ofu_recording_phase_info{phase=\"p\",end=\"2\"} 1\n", "test.prom:2: phase p has no start label"},
      {"ofu_recording_phase_info{phase=\"p\",start=\"1\",end=\"1\"} 1\n", "test.prom:2: phase p: end 1 is not after"},
      {"ofu_recording_phase_info{phase=\"p\",start=\"1\",end=\"2s\"} 1\n",
       "test.prom:2: phase p: end=\"2s\" is not a finite number >= 0"},
      {"ofu_recording_phase_info{phase=\"p\",start=\"1\",end=\"2\",mfu=\"-0.1\"} 1\n",
       "test.prom:2: phase p: mfu=\"-0.1\" is not a finite number >= 0"},
      {"ofu_recording_phase_info{phase=\"p\",start=\"1\",end=\"2\",mfu=\"nan\"} 1\n",
       "test.prom:2: phase p: mfu=\"nan\" is not a finite number >= 0"},
  };
  for (const auto& [line, error] : cases) {
    auto r = Read(head + line);
    ASSERT_FALSE(r.ok()) << line;
    EXPECT_EQ(r.error().code, ErrorCode::kMalformedInput);
    EXPECT_EQ(r.error().message.rfind(error, 0), 0u) << r.error().message;
  }
}

}  // namespace
}  // namespace ofu::sources
