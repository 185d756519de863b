// Real PyTorch profiler traces from GeForce cards (issue 41, class 5;
// tests/data/kineto/README.md): an RTX 4060 (solangii/gpu-practice) and two
// RTX 3090s (bclarkson-code/flow_matching). Neither trace holds a kernel
// record, so nothing can be corrected (exit 4), but the GPU's rates now come
// from the trace's own device name; before the GeForce entries of
// data/gpu_specs.json, ofu fell back to generic rates and told the user to
// pass --gpu-model.
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/core/gpu_spec.h"
#include "support/cli_runner.h"

namespace {

struct GeForceTrace {
  const char* file;    // under tests/data/kineto
  const char* sku;     // the SKU its device name resolves to
  const char* device;  // deviceProperties[0].name, read from the file
  int num_sms;         // deviceProperties[0].numSms, read from the file
  double bf16_tflops;  // the SKU's dense BF16 (FP32 accumulate) peak, by hand
};

// RTX 4060: 24 SMs x 512 FLOP/clk x 2460 MHz = 30.23 TFLOPS (Derived, llm.c's
// 96 tensor cores and 2460 MHz). RTX 3090: NVIDIA's 71.2 TFLOPS (RTX Blackwell
// whitepaper Table 3) = 82 SMs x 512 x 1695.9 MHz.
constexpr GeForceTrace kTraces[] = {
    {"geforce-rtx4060-gpu-practice.json", "rtx-4060", "NVIDIA GeForce RTX 4060", 24, 24 * 512 * 2460e6 / 1e12},
    {"geforce-rtx3090-flow-matching.json", "rtx-3090", "NVIDIA GeForce RTX 3090", 82, 71.2},
};

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TracePath(const GeForceTrace& t) { return std::string(OFU_TEST_DATA_DIR "/kineto/") + t.file; }

class GeForceCli : public ofu::testing::CliTest {};

TEST_F(GeForceCli, RealGeForceTracesTakeTheirRatesFromTheTrace) {
  auto db = ofu::GpuSpecDatabase::Embedded();
  ASSERT_TRUE(db.ok());
  for (const GeForceTrace& t : kTraces) {
    SCOPED_TRACE(t.file);
    // The file says what the test expects of it.
    const auto trace = nlohmann::json::parse(ReadText(TracePath(t)));
    ASSERT_FALSE(trace["deviceProperties"].empty());
    EXPECT_EQ(trace["deviceProperties"][0]["name"], t.device);
    EXPECT_EQ(trace["deviceProperties"][0]["numSms"], t.num_sms);

    const auto result = Ofu("correct --trace '" + TracePath(t) + "' --ofu 0.3 --format json");
    EXPECT_EQ(result.exit_code, 4) << result.err;  // no GEMM kernel to correct
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_EQ(json["gpu"]["sku"], t.sku);
    EXPECT_EQ(json["gpu"]["from"], "the trace");
    EXPECT_EQ(json["gpu"]["rates"], "spec");
    EXPECT_EQ(json["notes"].dump().find("unknown GPU model"), std::string::npos) << json["notes"];

    // The SKU the trace resolves to has the trace's SM count and the hand peak.
    auto spec = db->Lookup(t.device);
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ((*spec)->id, t.sku);
    EXPECT_EQ((*spec)->sm_count, t.num_sms);
    EXPECT_NEAR((*spec)->precisions.at("bf16").peak_tflops, t.bf16_tflops, 0.01);
  }
}

// The same traces against the spec database without its GeForce entries, as
// it was before issue 41: the device is unknown and ofu says to pass
// --gpu-model. This is the answer the entries change.
TEST_F(GeForceCli, WithoutTheGeForceEntriesTheTracesAskForGpuModel) {
  auto specs = nlohmann::json::parse(ReadText(OFU_SOURCE_DIR "/data/gpu_specs.json"));
  auto& skus = specs["skus"];
  for (auto it = skus.begin(); it != skus.end();) {
    it = it->at("aliases").dump().find("GeForce") != std::string::npos ? skus.erase(it) : it + 1;
  }
  const std::string no_geforce = Write("no-geforce.json", specs.dump()).string();
  for (const GeForceTrace& t : kTraces) {
    SCOPED_TRACE(t.file);
    const auto result = Ofu("correct --trace '" + TracePath(t) + "' --ofu 0.3 --spec-db '" + no_geforce +
                            "' --format json");
    EXPECT_EQ(result.exit_code, 4) << result.err;
    const auto json = nlohmann::json::parse(result.out);
    EXPECT_TRUE(json["gpu"]["sku"].is_null());
    EXPECT_EQ(json["gpu"]["rates"], "generic");
    const std::string notes = json["notes"].dump();
    EXPECT_NE(notes.find(std::string("unknown GPU model \\\"") + t.device + "\\\""), std::string::npos) << notes;
    EXPECT_NE(notes.find("--gpu-model"), std::string::npos) << notes;
  }
}

}  // namespace
