// Counter texts that are not dcgm-exporter exposition (issue 52, classes 4,
// 6 and 8): every row of sources/counter_texts.h on its own example, and the
// real files of tests/data/counter-texts (README.md there says where each
// comes from). Expected values are read off the files by hand.
#include "ofu/sources/counter_texts.h"

#include <algorithm>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/formats/nvidia_smi.h"
#include "ofu/formats/text_file.h"
#include "ofu/render/report_output.h"
#include "ofu/sources/replay.h"

namespace ofu::sources {
namespace {

const std::string kTexts = std::string(OFU_TEST_DATA_DIR) + "/counter-texts/";

Recording Read(const std::string& name) {
  auto r = ReadRecordingFile(kTexts + name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : Recording{};
}

// The note that contains `part`, or "" (so a failure prints the notes).
std::string NoteWith(const Recording& r, const std::string& part) {
  for (const auto& note : r.notes) {
    if (note.find(part) != std::string::npos) return note;
  }
  std::string all;
  for (const auto& note : r.notes) all += "\n  " + note;
  ADD_FAILURE() << "no note with '" << part << "' among:" << all;
  return "";
}

analysis::Report ReportOf(const Recording& r) {
  static const GpuSpecDatabase specs = std::move(GpuSpecDatabase::Embedded()).value();
  analysis::ReportOptions options;
  options.reported_clock = true;  // OFU = tensor x reported clock / f_spec, by hand
  auto report = analysis::BuildReport(r, specs, options);
  EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.error().message);
  return report.ok() ? std::move(*report) : analysis::Report{};
}

// The H100 SXM5's f_spec: the clock behind its dense peak, 1829.95 MHz in
// data/gpu_specs.json (989.4 TFLOP/s over 132 SMs x 4096 FLOP per clock).
double FSpec(const analysis::Report& report) {
  EXPECT_FALSE(report.gpus.empty());
  if (report.gpus.empty() || report.gpus[0].spec == nullptr) return 0;
  const double f_spec = report.gpus[0].spec->SpecClockMhz();
  EXPECT_NEAR(f_spec, 1830, 0.1);
  return f_spec;
}

TEST(CounterTexts, EveryRowsExampleIsRecognisedAndReadsToItsStatedValues) {
  ASSERT_FALSE(CounterTextFormats().empty());
  EXPECT_EQ(CounterTextFormats().back().kind, CounterTextKind::kExposition);
  for (const CounterTextFormat& format : CounterTextFormats()) {
    SCOPED_TRACE(std::string(format.name));
    const CounterTextExample& e = format.example;
    ASSERT_FALSE(e.text.empty());
    EXPECT_EQ(RecogniseCounterText(e.text).kind, format.kind);
    std::istringstream in{std::string(e.text)};
    auto r = ReadRecording(in, "example");
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_EQ(r->gpus.size(), e.gpus);
    const GpuRecording& gpu = r->gpus[0];
    EXPECT_EQ(gpu.identity.model, e.model);
    if (!e.sm_clock_mhz && !e.tensor_active) continue;
    ASSERT_FALSE(gpu.samples.empty());
    EXPECT_EQ(gpu.samples[0].sm_clock_mhz, e.sm_clock_mhz);
    EXPECT_EQ(gpu.samples[0].tensor_active, e.tensor_active);
    // A format without tensor activity says why, with what to use instead.
    if (!format.no_tensor.empty()) NoteWith(*r, std::string(format.no_tensor));
  }
}

// Class 4, nvidia-smi dmon (mozilla/DeepSpeech#178): before, "no GPU
// counters found ... missing: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE,
// DCGM_FI_DEV_SM_CLOCK", though the pclk column has the clock.
TEST(CounterTexts, NvidiaSmiDmonGivesItsClockAndSaysTensorActivityIsNotThere) {
  const Recording r = Read("nvidia-smi-dmon-deepspeech-issue178.txt");
  ASSERT_EQ(r.gpus.size(), 4u);
  // Rows "0 111 83 25 ... 4513  1683 ..." to "3 86 70 18 ... 4513 1784": pclk is the 9th column.
  const double pclk[] = {1683, 1733, 1759, 1784};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.gpus[i].identity.gpu_index, std::to_string(i));
    ASSERT_EQ(r.gpus[i].samples.size(), 1u);
    EXPECT_EQ(r.gpus[i].samples[0].sm_clock_mhz, pclk[i]);
    EXPECT_FALSE(r.gpus[i].samples[0].tensor_active);  // absent, never 0
  }
  EXPECT_EQ(r.stray_lines, 0u);
  EXPECT_NE(NoteWith(r,
                     "this nvidia-smi dmon table has the SM clock (pclk) but no tensor activity, which nvidia-smi "
                     "cannot give")
                .find("use `dcgmi dmon -e 1004,100` or dcgm-exporter"),
            std::string::npos);
  NoteWith(r,
           "GPU from 'gpu', SM clock (MHz) from 'pclk'; columns not used: pwr, temp, sm, mem, enc, dec, mclk, pviol");
}

// nvidia-smi --query-gpu=clocks.gr,clocks.mem (noonghunna/club-3090#107):
// the graphics clock is not read as the SM clock; the prompt line is skipped.
TEST(CounterTexts, QueryGpuCsvWithTheGraphicsClockOnlyIsDiagnosedNotMisread) {
  const Recording r = Read("nvidia-smi-query-gpu-clocks-gr-club3090-issue107.csv.txt");
  EXPECT_EQ(r.stray_lines, 1u);
  NoteWith(r, ":1: skipped a line that cannot be a sample: '$ nvidia-smi --query-gpu=clocks.gr,clocks.mem");
  NoteWith(r,
           "this nvidia-smi --query-gpu CSV has the graphics clock (clocks.current.graphics [MHz]), which is not "
           "the SM clock (clocks.sm) but no tensor activity");
  for (const auto& gpu : r.gpus) {
    for (const auto& s : gpu.samples) EXPECT_FALSE(s.sm_clock_mhz);
  }
}

// nvidia-smi -q (NVIDIA/DCGM#152): "SM : 1410 MHz" of Clocks (line 13), not
// of Max Clocks (line 26, also 1410) or Applications Clocks (no SM line).
TEST(CounterTexts, NvidiaSmiQueryGivesTheClocksSectionsSmClock) {
  const Recording r = Read("nvidia-smi-q-clocks-a100-dcgm-issue152.txt");
  ASSERT_EQ(r.gpus.size(), 1u);
  ASSERT_EQ(r.gpus[0].samples.size(), 1u);
  EXPECT_EQ(r.gpus[0].samples[0].sm_clock_mhz, 1410.0);
  NoteWith(r, "this nvidia-smi -q report has the SM clock of GPU 0 (1410 MHz, line 13) but no tensor activity");
}

// nvidia-smi -q's head (MatthiasSchinzel/sysmon#12): before, exit 2 with
// ":11: MIG Mode ... no value" (a one-word section header read as a sample).
TEST(CounterTexts, NvidiaSmiQueryHeaderNamesTheModelAndFailsNothing) {
  const Recording r = Read("nvidia-smi-q-header-gtx780-sysmon-issue12.txt");
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].identity.model, "GeForce GTX 780");
  NoteWith(r, "GPU model 'GeForce GTX 780' from line 11 (nvidia-smi -q report)");
  NoteWith(r, "this nvidia-smi -q report has GPU names but no tensor activity");
}

// Class 6 on real text: the nvidia-smi table of wilicc/gpu-burn#114 names
// both GPUs "NVIDIA H100 80GB HBM3" (lines 10 and 14).
TEST(CounterTexts, NvidiaSmiTableNamesEachGpusModel) {
  const Recording r = Read("nvidia-smi-table-h100-gpuburn-issue114.txt");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.gpus[1].identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.gpus[1].identity.gpu_index, "1");
  NoteWith(r, "GPU model 'NVIDIA H100 80GB HBM3' from line 10 (nvidia-smi table)");
  NoteWith(r, "this nvidia-smi table has GPU names but no tensor activity, which nvidia-smi cannot give");
}

TEST(CounterTexts, ACutModelNameIsNotLookedUp) {
  const Recording r = Read("nvidia-smi-table-a100-cut-name-dcgm-issue70.txt");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].identity.model, "");
  NoteWith(r, ":10: GPU model 'NVIDIA A100 80G...' (nvidia-smi table) is cut short");
}

TEST(CounterTexts, ModelMentionsOfRealDiscoveryOutput) {
  const auto h100 = formats::ReadTextFile(kTexts + "dcgmi-discovery-h100-kempnerpulse-issue15.txt");
  ASSERT_TRUE(h100.ok());
  const auto mentions = formats::FindGpuModelMentions(*h100);
  ASSERT_EQ(mentions.size(), 1u);
  EXPECT_EQ(mentions[0].model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(mentions[0].line, 6u);
  EXPECT_EQ(mentions[0].where, "dcgmi discovery");
  const auto null_name = formats::ReadTextFile(kTexts + "dcgmi-discovery-null-name-dcgm-issue229.txt");
  ASSERT_TRUE(null_name.ok());
  EXPECT_TRUE(formats::FindGpuModelMentions(*null_name).empty());  // "Name: <<<NULL>>>" names nothing
}

// Class 6: a dmon table pasted under dcgmi discovery -l. Before: no model,
// "the data name no GPU model (no modelName label)", no OFU.
// OFU = 0.300 x 1830 / 1830 (H100 SXM5's f_spec) = 0.300.
TEST(CounterTexts, DmonUnderDiscoveryTakesTheModelTheDiscoveryNames) {
  const Recording r = Read("SYNTHETIC-dcgmi-dmon-under-discovery-h100.txt");
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].identity.model, "NVIDIA H100 80GB HBM3");
  NoteWith(r, "GPU model 'NVIDIA H100 80GB HBM3' from line 6 (dcgmi discovery)");
  const analysis::Report report = ReportOf(r);
  ASSERT_TRUE(report.overall.ofu);
  EXPECT_NEAR(*report.overall.ofu, 0.300 * 1830 / FSpec(report), 1e-12);
}

TEST(CounterTexts, TwoModelsInTheTextAreNotGuessedBetween) {
  const Recording r = Read("SYNTHETIC-dmon-two-models-discovery.txt");
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].identity.model, "");
  EXPECT_EQ(r.gpus[1].identity.model, "");
  NoteWith(r,
           "the text names 2 different GPU models ('NVIDIA H100 80GB HBM3' on line 1, 'NVIDIA A100-SXM4-80GB' on "
           "line 2)");
}

// Prometheus API answers (cncf/k8s-ai-conformance): before, exit 2 at the
// first line. The series are read with their labels; the metric is one ofu
// does not use, so the GPU is listed with the counters it lacks.
TEST(CounterTexts, RealPrometheusApiAnswersAreRead) {
  struct Case {
    const char* file;
    const char* uuid;
    const char* model;
    std::size_t stray;
  } cases[] = {
      {"prom-api-query-pretty-t4-k8s-ai-conformance-rafay.txt", "GPU-f4b6eae2-9160-3e9b-d87b-ffb86f9c8eef", "Tesla T4",
       6},
      {"victoriametrics-api-query-t4-k8s-ai-conformance-ericsson.txt", "GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a",
       "Tesla T4", 3},
      {"prom-api-query-compact-l40s-k8s-ai-conformance-upcloud.txt", "GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43",
       "NVIDIA L40S", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const Recording r = Read(c.file);
    EXPECT_EQ(r.stray_lines, c.stray);
    NoteWith(r, "read as a Prometheus query API answer (vector");
    NoteWith(r, std::string("GPU ") + c.uuid + ", " + c.model + ": no counter ofu uses");
  }
}

// query_range's matrix: OFU = 0.5 x 1464 / 1830 = 0.4 on an H100 SXM5.
TEST(CounterTexts, PrometheusMatrixAnswerGivesOfu) {
  const Recording r = Read("SYNTHETIC-prom-api-query-range-matrix-h100.json.txt");
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].identity.model, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(r.gpus[0].samples.size(), 3u);
  EXPECT_EQ(r.gpus[0].samples[2].time_s, 1700000060.0);
  EXPECT_EQ(r.gpus[0].samples[2].tensor_active, 0.5);
  EXPECT_EQ(r.gpus[0].samples[2].sm_clock_mhz, 1464.0);
  EXPECT_EQ(r.stray_lines, 1u);  // the curl command
  const analysis::Report report = ReportOf(r);
  ASSERT_TRUE(report.overall.ofu);
  EXPECT_NEAR(*report.overall.ofu, 0.5 * 1464 / FSpec(report), 1e-12);
}

// PromQL console output (name{labels} value, ", " between labels): the
// exposition reader takes it as it is. OFU = 0.25 x 1830 / 1830 = 0.25.
TEST(CounterTexts, PromqlConsoleOutputIsReadAsExposition) {
  const Recording r = Read("SYNTHETIC-promql-console-h100.txt");
  ASSERT_EQ(r.gpus.size(), 1u);
  const analysis::Report report = ReportOf(r);
  ASSERT_TRUE(report.overall.ofu);
  EXPECT_NEAR(*report.overall.ofu, 0.25 * 1830 / FSpec(report), 1e-12);
}

// The generic rule, and one odd line (line 4) that fails nothing.
// OFU: GPU 0 0.20 x 1755 / 1830, GPU 1 0.40 x 1980 / 1830, both H100 SXM5.
TEST(CounterTexts, ATableWithNamedColumnsIsReadByTheGenericRuleAndSkipsAnOddLine) {
  const Recording r = Read("SYNTHETIC-sm-clk-table.txt");
  ASSERT_EQ(r.gpus.size(), 2u);
  ASSERT_EQ(r.gpus[1].samples.size(), 2u);
  EXPECT_EQ(r.gpus[1].samples[1].sm_clock_mhz, 1980.0);
  EXPECT_EQ(r.gpus[1].samples[1].tensor_active, 0.40);
  EXPECT_EQ(r.gpus[1].samples[1].time_s - r.gpus[1].samples[0].time_s, 1.0);
  EXPECT_EQ(r.stray_lines, 1u);
  NoteWith(r, ":4: skipped a line that cannot be a sample: 'this line is not a row'");
  NoteWith(r,
           "read as a table with named columns (generic rule) (columns recognised by name: docs/formats.md): 4 "
           "rows from line 1");
  NoteWith(r, "SM clock (MHz) from 'SM_CLK', tensor activity (0..1) from 'TENSOR'");
  static const GpuSpecDatabase specs = std::move(GpuSpecDatabase::Embedded()).value();
  analysis::ReportOptions options;
  options.reported_clock = true;
  options.gpu_model = *specs.Lookup("h100-sxm5");
  auto report = analysis::BuildReport(r, specs, options);
  ASSERT_TRUE(report.ok());
  ASSERT_TRUE(report->gpus[0].summary.ofu);
  EXPECT_NEAR(*report->gpus[0].summary.ofu, 0.20 * 1755 / FSpec(*report), 1e-12);  // 0.19181
  EXPECT_NEAR(*report->gpus[1].summary.ofu, 0.40 * 1980 / FSpec(*report), 1e-12);  // 0.43280
}

// Every diagnosis is in the JSON's notes too, not only in the text.
TEST(CounterTexts, DiagnosesAreInTheJsonNotes) {
  const Recording r = Read("nvidia-smi-dmon-deepspeech-issue178.txt");
  const analysis::Report report = ReportOf(r);
  const auto json = nlohmann::json::parse(render::RenderJson(report));
  bool found = false;
  for (const auto& note : json.at("notes")) {
    found = found || note.get<std::string>().find(
                         "this nvidia-smi dmon table has the SM clock (pclk) but no tensor "
                         "activity") != std::string::npos;
  }
  EXPECT_TRUE(found) << json.at("notes").dump();
}

// Class 8: a note quotes UTF-8 as it is, and still escapes control bytes
// and bytes that are not UTF-8. Before: '\xe2\x80\x94 pasted'.
TEST(CounterTexts, NotesQuoteUtf8AsItIs) {
  std::istringstream in(
      "\xe2\x80\x94 pasted\n"
      "bad \xff\x01 byte\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1980\n");
  auto r = ReadRecording(in, "utf8.prom");
  ASSERT_TRUE(r.ok()) << r.error().message;
  NoteWith(*r, "utf8.prom:1: skipped a line that cannot be a sample: '\xe2\x80\x94 pasted'");
  NoteWith(*r, "utf8.prom:2: skipped a line that cannot be a sample: 'bad \\xff\\x01 byte'");
}

}  // namespace
}  // namespace ofu::sources
