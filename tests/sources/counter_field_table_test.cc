// The "add an input counter" recipe of docs/ARCHITECTURE.md, followed once:
// a TEST-ONLY counter is one row added to the counter table (core/sample.h),
// and with no other change the replay reads it from the dcgm-exporter metric
// the row names, the windows average it and the report's JSON carries it
// for each GPU, null for a GPU without it.
//
// The reading is read from a real scrape: dcgm-exporter on eight A800s, GPU
// 0 split into three MIG instances (tests/data/scrapes/ampere-a800-mig.prom,
// source in its README). Its DCGM_FI_DEV_GPU_TEMP values, by hand from the
// file: 33 for each instance of GPU 0; GPUs 1-7: 27, 26, 31, 31, 26, 26, 29.
// The activity is read from a SYNTHETIC text below, hand values.
#include <algorithm>
#include <cstddef>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/sample.h"
#include "ofu/render/report_output.h"
#include "ofu/sources/dcgm_exporter_names.h"
#include "ofu/sources/replay.h"

namespace {

using nlohmann::json;
using ofu::CounterField;
using ofu::CounterFieldInfo;
using ofu::CounterFieldTable;

// The rows the recipe adds: a reading (DCGM field 150, GPU temperature in
// C) and an activity of a made-up metric.
const CounterFieldInfo kTemperatureRow = {
    CounterField::kTensorActive,  // set by With
    "test_gpu_temp_c",
    "GPU temperature (TEST-ONLY counter)",
    /*is_activity=*/false,
    150,
    0,
    nullptr,
    "DCGM_FI_DEV_GPU_TEMP",
};
const CounterFieldInfo kActivityRow = {
    CounterField::kTensorActive,
    "test_pipe_active",
    "a pipe's activity (TEST-ONLY counter)",
    /*is_activity=*/true,
    0,
    0,
    nullptr,
    "TEST_ONLY_PIPE_ACTIVE",
};

json ReportJson(std::istream& in, const std::string& name, const CounterFieldTable* fields) {
  ofu::sources::RecordingOptions options;
  options.fields = fields;
  auto recording = ofu::sources::ReadRecording(in, name, options);
  EXPECT_TRUE(recording.ok()) << recording.error().message;
  auto specs = ofu::GpuSpecDatabase::Embedded();
  EXPECT_TRUE(specs.ok());
  auto report = ofu::analysis::BuildReport(*recording, *specs, {});
  EXPECT_TRUE(report.ok()) << report.error().message;
  return json::parse(ofu::render::RenderJson(*report));
}

json ScrapeReport(const CounterFieldTable* fields) {
  std::ifstream file(std::string(OFU_TEST_DATA_DIR) + "/scrapes/ampere-a800-mig.prom");
  EXPECT_TRUE(file.good());
  return ReportJson(file, "ampere-a800-mig.prom", fields);
}

TEST(CounterFieldTable, AnAddedRowComesAfterTheBuiltinOnes) {
  const CounterFieldTable table = CounterFieldTable::Builtin().With(kTemperatureRow).With(kActivityRow);
  ASSERT_EQ(CounterFieldTable::Builtin().rows().size(), ofu::kBuiltinCounterFields);
  ASSERT_EQ(table.rows().size(), ofu::kBuiltinCounterFields + 2);
  for (std::size_t i = 0; i < table.rows().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table.rows()[i].field), i) << table.rows()[i].name;
  }
  EXPECT_EQ(table.added()[0].name, "test_gpu_temp_c");
  EXPECT_EQ(table.AddedForMetric("TEST_ONLY_PIPE_ACTIVE"), &table.added()[1]);
  EXPECT_EQ(table.AddedForMetric("DCGM_FI_DEV_SM_CLOCK"), nullptr);  // a built-in metric, not an added row
  EXPECT_TRUE(CounterFieldTable::Builtin().added().empty());

  // An added row's value lives in the sample under its name; set, read and
  // cleared there, and no built-in field is touched.
  ofu::CounterSample sample;
  table.added()[0].Set(sample, 41.5);
  EXPECT_EQ(table.added()[0].Get(sample), 41.5);
  EXPECT_EQ(sample.added.all().at("test_gpu_temp_c"), 41.5);
  EXPECT_FALSE(table.added()[1].Get(sample).has_value());
  for (const CounterFieldInfo& builtin : ofu::AllCounterFields()) {
    EXPECT_FALSE(builtin.Get(sample).has_value()) << builtin.name;
  }
  table.added()[0].Set(sample, std::nullopt);
  EXPECT_TRUE(sample.added.empty());
}

TEST(CounterFieldTable, AnAddedReadingFromARealScrapeIsInTheReportJson) {
  const CounterFieldTable table = CounterFieldTable::Builtin().With(kTemperatureRow);
  const json report = ScrapeReport(&table);
  // By GPU index and MIG instance, from the file (see the top).
  const std::map<std::string, double> expected = {{"0/3", 33}, {"0/5", 33}, {"0/6", 33}, {"1/", 27}, {"2/", 26},
                                                  {"3/", 31},  {"4/", 31},  {"5/", 26},  {"6/", 26}, {"7/", 29}};
  ASSERT_EQ(report["gpus"].size(), expected.size());
  for (const json& gpu : report["gpus"]) {
    const std::string key = gpu["gpu"].get<std::string>() + "/" +
                            (gpu["mig_instance"].is_null() ? "" : gpu["mig_instance"].get<std::string>());
    ASSERT_TRUE(gpu.contains("test_gpu_temp_c")) << key;
    EXPECT_EQ(gpu["test_gpu_temp_c"], expected.at(key)) << key;
  }

  // Read with the built-in table, the same scrape gives the same report
  // without the key: the row changed nothing else.
  const json builtin = ScrapeReport(nullptr);
  json without = report;
  for (json& gpu : without["gpus"]) gpu.erase("test_gpu_temp_c");
  EXPECT_EQ(without, builtin);
  EXPECT_FALSE(builtin["gpus"][0].contains("test_gpu_temp_c"));
}

TEST(CounterFieldTable, AnAddedActivityIsTimeWeightedAndNullWhereAbsent) {
  // SYNTHETIC: two H100s sampled at T0 + 10, 20, 30 s (T0 a multiple of 60,
  // so one 60 s window). GPU-a has the added activity at +10 (0.2) and +30
  // (0.8) only: the first covers one nominal interval (10 s), the second the
  // 20 s since the first, so the window's mean is (0.2 x 10 + 0.8 x 20) / 30
  // = 0.6, where a plain mean would be 0.5. GPU-b has none of it.
  std::string text;
  for (int k = 1; k <= 3; ++k) {
    const std::string ms = std::to_string(1790000040 + 10 * k) + "000";
    for (const char* uuid : {"GPU-a", "GPU-b"}) {
      const std::string labels = std::string("{gpu=\"0\",UUID=\"") + uuid + "\",modelName=\"NVIDIA H100 80GB HBM3\"}";
      text += "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" + labels + " 0.5 " + ms + "\n";
      text += "DCGM_FI_DEV_SM_CLOCK" + labels + " 1500 " + ms + "\n";
    }
  }
  text += "TEST_ONLY_PIPE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\"} 0.2 1790000050000\n";
  text += "TEST_ONLY_PIPE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\"} 0.8 1790000070000\n";
  const CounterFieldTable table = CounterFieldTable::Builtin().With(kActivityRow);
  std::istringstream in(text);
  const json report = ReportJson(in, "synthetic.prom", &table);
  ASSERT_EQ(report["gpus"].size(), 2u);
  EXPECT_EQ(report["gpus"][0]["uuid"], "GPU-a");
  EXPECT_DOUBLE_EQ(report["gpus"][0]["test_pipe_active"].get<double>(), 0.6);
  EXPECT_TRUE(report["gpus"][1].contains("test_pipe_active"));
  EXPECT_TRUE(report["gpus"][1]["test_pipe_active"].is_null());
}

// A built-in counter's dcgm-exporter spellings are its row's: the list the
// readers look names up in and ask Prometheus for is made from the rows.
// These are the 28 names, fields, scales and DCGM field ids the hand-written
// list had (sources/dcgm_exporter_names.cc before issue 56), by hand.
TEST(CounterFieldTable, TheExporterSpellingsComeFromTheRows) {
  using ofu::sources::ValueScale;
  struct Spelling {
    const char* name;
    CounterField field;
    ValueScale scale;
    int id;
  };
  constexpr ValueScale kRatio = ValueScale::kRatio;
  constexpr ValueScale kAbs = ValueScale::kAbsolute;
  const Spelling expected[] = {
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", CounterField::kTensorActive, kRatio, 1004},
      {"DCGM_FI_PROF_TENSOR_UTIL_RATIO", CounterField::kTensorActive, kRatio, 1004},
      {"dcgm_fi_prof_pipe_tensor_active", CounterField::kTensorActive, kRatio, 1004},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", CounterField::kGrEngineActive, kRatio, 1001},
      {"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", CounterField::kGrEngineActive, kRatio, 1001},
      {"dcgm_fi_prof_gr_engine_active", CounterField::kGrEngineActive, kRatio, 1001},
      {"DCGM_FI_PROF_SM_ACTIVE", CounterField::kSmActive, kRatio, 1002},
      {"dcgm_fi_prof_sm_active", CounterField::kSmActive, kRatio, 1002},
      {"DCGM_FI_PROF_SM_OCCUPANCY", CounterField::kSmOccupancy, kRatio, 1003},
      {"dcgm_fi_prof_sm_occupancy", CounterField::kSmOccupancy, kRatio, 1003},
      {"DCGM_FI_PROF_DRAM_ACTIVE", CounterField::kDramActive, kRatio, 1005},
      {"dcgm_fi_prof_dram_active", CounterField::kDramActive, kRatio, 1005},
      {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", CounterField::kFp64Active, kRatio, 1006},
      {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", CounterField::kFp32Active, kRatio, 1007},
      {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", CounterField::kFp16Active, kRatio, 1008},
      {"DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", CounterField::kImmaActive, kRatio, 1013},
      {"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", CounterField::kHmmaActive, kRatio, 1014},
      {"DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", CounterField::kDfmaActive, kRatio, 1015},
      {"DCGM_FI_DEV_SM_CLOCK", CounterField::kSmClockMhz, kAbs, 100},
      {"dcgm_sm_clock", CounterField::kSmClockMhz, kAbs, 100},
      {"DCGM_FI_DEV_MAX_SM_CLOCK", CounterField::kMaxSmClockMhz, kAbs, 113},
      {"DCGM_FI_DEV_POWER_USAGE", CounterField::kPowerW, kAbs, 155},
      {"DCGM_FI_DEV_BOARD_POWER_WATTS", CounterField::kPowerW, kAbs, 155},
      {"dcgm_power_usage", CounterField::kPowerW, kAbs, 155},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", CounterField::kEnergyMj, kAbs, 156},
      {"dcgm_total_energy_consumption", CounterField::kEnergyMj, kAbs, 156},
      {"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", CounterField::kClockEventReasons, kAbs, 112},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", CounterField::kClockEventReasons, kAbs, 112},
  };
  const std::vector<std::string_view> names = ofu::sources::DcgmExporterMetricNames();
  EXPECT_EQ(names.size(), std::size(expected));
  for (const Spelling& s : expected) {
    EXPECT_NE(std::find(names.begin(), names.end(), s.name), names.end()) << s.name;
    const auto known = ofu::sources::LookupDcgmExporterMetric(s.name);
    ASSERT_TRUE(known) << s.name;
    EXPECT_EQ(known->field, s.field) << s.name;
    EXPECT_EQ(known->scale, s.scale) << s.name;
    EXPECT_EQ(known->dcgm_field_id, s.id) << s.name;
  }
  // What ofu writes is the row's own name; DMMA has no dcgm-exporter metric.
  EXPECT_EQ(ofu::sources::DcgmExporterNameFor(CounterField::kTensorActive)->name, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE");
  EXPECT_EQ(ofu::sources::DcgmExporterNameFor(CounterField::kPowerW)->name, "DCGM_FI_DEV_POWER_USAGE");
  EXPECT_EQ(ofu::sources::DcgmExporterNameFor(CounterField::kClockEventReasons)->name,
            "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS");
  EXPECT_FALSE(ofu::sources::DcgmExporterNameFor(CounterField::kDmmaActive));
  for (const CounterFieldInfo& row : CounterFieldTable::Builtin().rows()) {
    EXPECT_EQ(row.exporter_name.empty(), row.field == CounterField::kDmmaActive) << row.name;
  }
}

}  // namespace
