#include "ofu/core/gpu_spec.h"

#include <gtest/gtest.h>

#include <string>

namespace ofu {
namespace {

const GpuSpecDatabase& Db() {
  static const GpuSpecDatabase db = [] {
    auto parsed = GpuSpecDatabase::Embedded();
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().message);
    return std::move(parsed).value();
  }();
  return db;
}

const GpuSpec& Sku(std::string_view id) {
  auto spec = Db().Lookup(id);
  EXPECT_TRUE(spec.ok()) << id;
  return **spec;
}

TEST(GpuSpec, EverySkuOfTheDesignIsThereWithItsSmCount) {
  EXPECT_EQ(Sku("a100").sm_count, 108);
  EXPECT_EQ(Sku("h100-sxm5").sm_count, 132);
  EXPECT_EQ(Sku("h200-sxm").sm_count, 132);
  EXPECT_EQ(Sku("h100-pcie").sm_count, 114);
  EXPECT_EQ(Sku("h100-nvl").sm_count, 132);
  EXPECT_EQ(Sku("b200").sm_count, 148);
  EXPECT_EQ(Sku("gb200").sm_count, 148);
  EXPECT_EQ(Sku("l40s").sm_count, 142);
  EXPECT_EQ(Db().skus().size(), 8u);
}

TEST(GpuSpec, SpecClockIsDerivedFromThePeak) {
  // 989.4e12 / (132 * 4096) Hz = 1829.95 MHz, not NVML's 1980 MHz maximum.
  EXPECT_NEAR(Sku("h100-sxm5").SpecClockMhz(), 1829.95, 0.01);
  EXPECT_NEAR(Sku("h200-sxm").SpecClockMhz(), 1829.95, 0.01);
  EXPECT_NEAR(Sku("a100").SpecClockMhz(), 1410.6, 0.1);     // 312e12 / (108 * 2048)
  EXPECT_NEAR(Sku("h100-pcie").SpecClockMhz(), 1619.0, 0.1);  // 756e12 / (114 * 4096)
  EXPECT_NEAR(Sku("h100-nvl").SpecClockMhz(), 1544.4, 0.1);   // 835e12 / (132 * 4096)
  EXPECT_NEAR(Sku("l40s").SpecClockMhz(), 2489.5, 0.1);       // 362e12 / (142 * 1024)
  EXPECT_NEAR(Sku("b200").SpecClockMhz(), 1855.7, 0.1);       // 2250e12 / (148 * 8192)
}

TEST(GpuSpec, PrecisionsAgreeOnTheClockWithinTheNotedRounding) {
  // Vendor peaks are rounded; B200's TF32 "1.1 PF" is the worst at 2.2 %.
  for (const auto& spec : Db().skus()) {
    for (const auto& [precision, figures] : spec.precisions) {
      EXPECT_NEAR(spec.ImpliedClockMhz(precision) / spec.SpecClockMhz(), 1.0, 0.025)
          << spec.id << " " << precision;
    }
  }
  // FP8 does twice the FLOPs per clock of BF16 at the same clock on Hopper.
  EXPECT_NEAR(Sku("h100-sxm5").ImpliedClockMhz("fp8"), 1830.1, 0.1);
}

TEST(GpuSpec, ModelNamesMatchThroughTheAliasList) {
  EXPECT_EQ(Sku("NVIDIA H100 80GB HBM3").id, "h100-sxm5");
  EXPECT_EQ(Sku("NVIDIA H800").id, "h100-sxm5");
  EXPECT_EQ(Sku("H100 80GB HBM3").id, "h100-sxm5");           // older drivers drop "NVIDIA "
  EXPECT_EQ(Sku("  nvidia   h100 80gb  HBM3 ").id, "h100-sxm5");  // case and spacing
  EXPECT_EQ(Sku("NVIDIA A100-SXM4-80GB").id, "a100");
  EXPECT_EQ(Sku("NVIDIA H100 PCIe").id, "h100-pcie");
  EXPECT_EQ(Sku("NVIDIA H200").id, "h200-sxm");
}

TEST(GpuSpec, UnknownModelNamesTheFileToExtend) {
  auto spec = Db().Lookup("NVIDIA H200 NVL");  // a real SKU we do not list
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ErrorCode::kUnknownModel);
  EXPECT_NE(spec.error().message.find("data/gpu_specs.json"), std::string::npos) << spec.error().message;
  EXPECT_NE(spec.error().message.find("NVIDIA H200 NVL"), std::string::npos);
  // No prefix matching: "NVIDIA H100" alone is not "NVIDIA H100 80GB HBM3".
  EXPECT_FALSE(Db().Lookup("NVIDIA H100").ok());
}

TEST(GpuSpec, KArchDefaultsToOneWithProvenance) {
  EXPECT_EQ(Sku("h100-sxm5").k_arch, 1.0);
  EXPECT_FALSE(Sku("h100-sxm5").k_arch_source.empty());
}

constexpr std::string_view kMinimal = R"({
  "architectures": {"hopper": {"k_arch": 1.0, "k_arch_source": "test"}},
  "skus": [ {"id": "x", "name": "X", "architecture": "hopper", "sm_count": 10, "basis_precision": "bf16",
             "precisions": {"bf16": {"flops_per_clock_per_sm": 1000, "peak_tflops": 20}},
             "aliases": ["Test GPU"], "source": "test"} ]})";

TEST(GpuSpec, ParsesAMinimalFile) {
  auto db = GpuSpecDatabase::Parse(kMinimal, "mine.json");
  ASSERT_TRUE(db.ok()) << db.error().message;
  // 20e12 / (10 * 1000) Hz = 2000 MHz
  EXPECT_DOUBLE_EQ((*db->Lookup("Test GPU"))->SpecClockMhz(), 2000.0);
  EXPECT_NE(db->Lookup("other").error().message.find("mine.json"), std::string::npos);
}

TEST(GpuSpec, MalformedFilesAreErrorsNamingWhatIsWrong) {
  auto not_json = GpuSpecDatabase::Parse("{ nope", "bad.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.error().code, ErrorCode::kMalformedInput);
  EXPECT_EQ(not_json.error().message.rfind("bad.json: ", 0), 0u);

  std::string missing(kMinimal);
  missing.replace(missing.find("\"sm_count\": 10, "), 16, "");
  auto no_sm = GpuSpecDatabase::Parse(missing, "bad.json");
  ASSERT_FALSE(no_sm.ok());
  EXPECT_NE(no_sm.error().message.find("skus[0]"), std::string::npos) << no_sm.error().message;

  std::string bad_basis(kMinimal);
  bad_basis.replace(bad_basis.find("\"basis_precision\": \"bf16\""), 25, "\"basis_precision\": \"fp8\"");
  auto no_basis = GpuSpecDatabase::Parse(bad_basis, "bad.json");
  ASSERT_FALSE(no_basis.ok());
  EXPECT_NE(no_basis.error().message.find("basis_precision"), std::string::npos);
}

TEST(GpuSpec, MigProfilesAndToleranceAreCheckedWhenParsed) {
  auto with = [](std::string_view insert) {
    std::string text(kMinimal);
    text.insert(text.find("\"source\": \"test\""), insert);
    return GpuSpecDatabase::Parse(text, "mig.json");
  };
  auto good = with(R"("mig_profiles": {"1g.5gb": 2, "2g.10gb": 4}, "mig_source": "test", )");
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ((*good->Lookup("x"))->MigSmCount("2g.10gb+me"), 4);

  struct Case {
    std::string_view insert, message;
  };
  for (const Case& c : {
           Case{R"("mig_profiles": {"1g.5gb": 11}, "mig_source": "test", )", "between 1 and sm_count"},
           Case{R"("mig_profiles": {"1g.5gb": 0}, "mig_source": "test", )", "between 1 and sm_count"},
           Case{R"("mig_profiles": {"1g.5gb": 2.5}, "mig_source": "test", )", "whole number of SMs"},
           Case{R"("mig_profiles": {"1g.5gb": "2"}, "mig_source": "test", )", "whole number of SMs"},
           Case{R"("mig_profiles": {"1g.5gb+me": 2}, "mig_source": "test", )", "not a GPU-instance profile"},
           Case{R"("mig_profiles": {"MIG 1g.5gb": 2}, "mig_source": "test", )", "not a GPU-instance profile"},
           Case{R"("mig_profiles": {"1g.5gb": 2}, )", "needs a mig_source"},
           Case{R"("mig_profiles": [1, 2], "mig_source": "test", )", "skus[0]"},
           Case{R"("peak_tolerance": 0.02, )", "needs a peak_tolerance_reason"},
           Case{R"("peak_tolerance": 0.5, "peak_tolerance_reason": "r", )", "at most 0.1"},
           Case{R"("peak_tolerance": -1, "peak_tolerance_reason": "r", )", "above 0"},
       }) {
    auto db = with(c.insert);
    ASSERT_FALSE(db.ok()) << c.insert;
    EXPECT_EQ(db.error().code, ErrorCode::kMalformedInput);
    EXPECT_NE(db.error().message.find(c.message), std::string::npos) << db.error().message;
    EXPECT_NE(db.error().message.find("(x)"), std::string::npos) << db.error().message;  // names the SKU
  }
}

TEST(GpuSpec, NumbersTooLargeForADoubleAreAnErrorNotACrash) {
  // Found by fuzzing: nlohmann throws out_of_range, not parse_error, for these.
  auto db = GpuSpecDatabase::Parse("[-4e7724]", "big.json");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().code, ErrorCode::kMalformedInput);
}

TEST(GpuSpec, AnAliasClaimedByTwoSkusIsAnError) {
  std::string twice(kMinimal);
  const std::string sku = twice.substr(twice.find("{\"id\""), twice.rfind('}') - twice.find("{\"id\"") - 1);
  std::string second = sku;
  second.replace(second.find("\"id\": \"x\""), 9, "\"id\": \"y\"");
  twice.insert(twice.rfind(']'), ", " + second);
  auto db = GpuSpecDatabase::Parse(twice, "dup.json");
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("Test GPU"), std::string::npos) << db.error().message;
}

}  // namespace
}  // namespace ofu
