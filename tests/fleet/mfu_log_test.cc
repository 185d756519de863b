// MFU logs (CSV and JSON lines) and per-job corrections: what they read, and
// errors that name the file, line and field. Inputs are made up here.
#include "ofu/formats/mfu_log.h"

#include <gtest/gtest.h>

namespace {

using ofu::Precision;
using ofu::formats::CorrectionJson;
using ofu::formats::JobCorrection;
using ofu::formats::ParseCorrectionCsv;
using ofu::formats::ParseCorrectionJson;
using ofu::formats::ParseMfuLog;

TEST(MfuLog, CsvWithHeaderInAnyOrderOptionalFieldsAndComments) {
  auto log = ParseMfuLog(
      "# synthetic\n"
      "reference_precision,job_id,mfu,recompute,tokens_per_s,model_flops_per_token,extra\n"
      "bf16,job-1,0.41,true,1000,6e9,x\n"
      "\n"
      "FP8,\"job,2\",1.3,,,,\n",
      "mfu.csv");
  ASSERT_TRUE(log.ok()) << log.error().message;
  ASSERT_EQ(log->jobs.size(), 2u);
  EXPECT_EQ(log->jobs[0].job_id, "job-1");
  EXPECT_DOUBLE_EQ(log->jobs[0].mfu, 0.41);
  EXPECT_EQ(log->jobs[0].reference_precision, Precision::kBf16);
  EXPECT_EQ(log->jobs[0].recompute, true);
  EXPECT_EQ(log->jobs[0].tokens_per_s, 1000.0);
  EXPECT_EQ(log->jobs[0].model_flops_per_token, 6e9);
  EXPECT_EQ(log->jobs[0].line, 3);
  EXPECT_EQ(log->jobs[1].job_id, "job,2");
  EXPECT_DOUBLE_EQ(log->jobs[1].mfu, 1.3);  // above 1 is kept: that is what a FLOPs bug looks like
  EXPECT_EQ(log->jobs[1].reference_precision, Precision::kFp8);
  EXPECT_FALSE(log->jobs[1].recompute);  // empty cell: absent, not false
  EXPECT_FALSE(log->jobs[1].tokens_per_s);
}

TEST(MfuLog, JsonLinesNullIsAbsent) {
  auto log = ParseMfuLog(
      "{\"job_id\": \"a\", \"mfu\": 0.3, \"reference_precision\": \"bf16\", \"recompute\": null}\n"
      "{\"job_id\": 7, \"mfu\": \"0.25\", \"reference_precision\": \"tf32\", \"recompute\": false}\n",
      "mfu.jsonl");
  ASSERT_TRUE(log.ok()) << log.error().message;
  ASSERT_EQ(log->jobs.size(), 2u);
  EXPECT_FALSE(log->jobs[0].recompute);
  EXPECT_EQ(log->jobs[1].job_id, "7");
  EXPECT_EQ(log->jobs[1].recompute, false);
  EXPECT_EQ(log->jobs[1].reference_precision, Precision::kTf32);
}

TEST(MfuLog, ErrorsNameFileLineAndField) {
  const auto message = [](std::string_view text, const std::string& name) {
    auto log = ParseMfuLog(text, name);
    EXPECT_FALSE(log.ok());
    return log.ok() ? std::string() : log.error().message;
  };
  EXPECT_EQ(message("job_id,mfu,reference_precision\na,0.4,bf16\nb,abc,bf16\n", "m.csv"),
            "m.csv:3: field 'mfu': 'abc' is not a number");
  EXPECT_EQ(message("job_id,mfu\na,0.4\n", "m.csv"),
            "m.csv:1: field 'reference_precision': no such column in the header");
  EXPECT_EQ(message("job_id,mfu,reference_precision\na,0.4,bf17\n", "m.csv"),
            "m.csv:2: field 'reference_precision': 'bf17' is not a precision (bf16, fp16, tf32, fp8, fp4, fp32, int8)");
  EXPECT_EQ(message("job_id,mfu,reference_precision\na,0.4,bf16\na,0.5,bf16\n", "m.csv"),
            "m.csv:3: field 'job_id': job a is listed twice");
  EXPECT_EQ(message("job_id,mfu,reference_precision,recompute\na,0.4,bf16,maybe\n", "m.csv"),
            "m.csv:2: field 'recompute': 'maybe' is not true or false");
  EXPECT_EQ(message("job_id,mfu,reference_precision\na,-0.1,bf16\n", "m.csv"),
            "m.csv:2: field 'mfu': -0.1 is negative");
  EXPECT_EQ(message("{\"job_id\": \"a\", \"mfu\": 0.3}\n", "m.jsonl"),
            "m.jsonl:1: field 'reference_precision': missing");
  EXPECT_EQ(message("{\"job_id\": \"a\",\n", "m.jsonl"), "m.jsonl:1: not a JSON object");
}

TEST(Corrections, OfuCorrectJsonAndCsv) {
  auto json = ParseCorrectionJson(R"({"factor": 0.9, "mfu_scale": 1.5, "reference_precision": "bf16",
    "precision_mix": [{"precision": "fp8", "tensor_time_share": 0.5, "relative_rate": 2},
                      {"precision": "bf16", "tensor_time_share": 0.5, "relative_rate": 1}]})",
                                  "j.json");
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_EQ(json->factor, 0.9);
  EXPECT_EQ(json->mfu_scale, 1.5);
  ASSERT_EQ(json->precision_mix.size(), 2u);
  EXPECT_EQ(json->precision_mix[0].precision, Precision::kFp8);

  auto nulls = ParseCorrectionJson(R"({"factor": null, "mfu_scale": null, "precision_mix": []})", "n.json");
  ASSERT_TRUE(nulls.ok());
  EXPECT_FALSE(nulls->factor);

  auto bad = ParseCorrectionJson(R"({"factor": "0.9"})", "b.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "b.json: field 'factor': not a positive number or null");

  auto csv = ParseCorrectionCsv("job_id,factor,mfu_scale\na,0.9,\nb,0.8,2\n", "c.csv");
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(csv->at("a").factor, 0.9);
  EXPECT_FALSE(csv->at("a").mfu_scale);
  EXPECT_EQ(csv->at("b").mfu_scale, 2.0);
  auto bad_csv = ParseCorrectionCsv("job_id,factor\na,zero\n", "c.csv");
  ASSERT_FALSE(bad_csv.ok());
  EXPECT_EQ(bad_csv.error().message, "c.csv:2: field 'factor': 'zero' is not a number");
}

TEST(Corrections, WrittenJsonHasTheKeysGivenAndReadsBack) {
  JobCorrection c;
  c.factor = 0.8;
  c.reference_precision = Precision::kFp8;
  c.precision_mix.push_back({Precision::kFp8, 1.0, 2.0});
  // Keys sorted; no mfu_scale, as none was given; the label when asked.
  EXPECT_EQ(CorrectionJson(c, "SYNTHETIC test"), R"({
  "factor": 0.8,
  "precision_mix": [
    {
      "precision": "fp8",
      "relative_rate": 2.0,
      "tensor_time_share": 1.0
    }
  ],
  "reference_precision": "fp8",
  "synthetic": "SYNTHETIC test"
}
)");
  EXPECT_EQ(CorrectionJson(JobCorrection{}), "{}\n");
  auto back = ParseCorrectionJson(CorrectionJson(c), "w.json");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->factor, 0.8);
  EXPECT_FALSE(back->mfu_scale);
  EXPECT_EQ(back->reference_precision, Precision::kFp8);
  ASSERT_EQ(back->precision_mix.size(), 1u);
  EXPECT_EQ(back->precision_mix[0].relative_rate, 2.0);
}

TEST(MfuLog, PeakFlopsIsOptionalAndPositive) {
  auto log = ParseMfuLog(
      "job_id,mfu,reference_precision,peak_flops\n"
      "a,1.2,bf16,312e12\n"
      "b,0.4,bf16,\n",
      "mfu.csv");
  ASSERT_TRUE(log.ok()) << log.error().message;
  EXPECT_EQ(log->jobs[0].peak_flops, 312e12);
  EXPECT_FALSE(log->jobs[1].peak_flops);
  auto zero = ParseMfuLog("{\"job_id\": \"a\", \"mfu\": 0.4, \"reference_precision\": \"bf16\", \"peak_flops\": 0}\n",
                          "mfu.jsonl");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "mfu.jsonl:1: field 'peak_flops': 0 is not positive");
}

}  // namespace
