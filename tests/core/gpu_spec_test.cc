#include "ofu/core/gpu_spec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include <set>
#include <string>
#include <utility>
#include <vector>

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
  // The ids of the first version of the file stay: tests and recordings use them.
  EXPECT_EQ(Sku("a100").sm_count, 108);
  EXPECT_EQ(Sku("h100-sxm5").sm_count, 132);
  EXPECT_EQ(Sku("h200-sxm").sm_count, 132);
  EXPECT_EQ(Sku("h100-pcie").sm_count, 114);
  EXPECT_EQ(Sku("h100-nvl").sm_count, 132);
  EXPECT_EQ(Sku("b200").sm_count, 148);
  EXPECT_EQ(Sku("gb200").sm_count, 148);
  EXPECT_EQ(Sku("l40s").sm_count, 142);
  EXPECT_EQ(Sku("v100-sxm2").sm_count, 80);
  EXPECT_EQ(Sku("t4").sm_count, 40);
  EXPECT_EQ(Sku("a10g").sm_count, 80);
  EXPECT_EQ(Sku("l4").sm_count, 58);
  EXPECT_EQ(Sku("h20").sm_count, 78);
  EXPECT_EQ(Sku("rtx-pro-6000-blackwell").sm_count, 188);
  // Compute capability 12.0, not data-centre Blackwell (data/kernel_throughput.json).
  EXPECT_EQ(Sku("rtx-pro-6000-blackwell").architecture, "blackwell-rtx");
  EXPECT_EQ(Sku("rtx-5090").architecture, "blackwell-rtx");
  EXPECT_EQ(Sku("b200").architecture, "blackwell");
  // README.md's Supported GPUs table (scripts/gpu_table.py) lists the same 69:
  // 43 data-centre and workstation SKUs and 26 GeForce ones (issue 41).
  EXPECT_EQ(Db().skus().size(), 69u);
}

TEST(GpuSpec, SpecClockIsDerivedFromThePeak) {
  // 989.4e12 / (132 * 4096) Hz = 1829.95 MHz, not NVML's 1980 MHz maximum.
  EXPECT_NEAR(Sku("h100-sxm5").SpecClockMhz(), 1829.95, 0.01);
  EXPECT_NEAR(Sku("h200-sxm").SpecClockMhz(), 1829.95, 0.01);
  EXPECT_NEAR(Sku("a100").SpecClockMhz(), 1410.6, 0.1);                    // 312e12 / (108 * 2048)
  EXPECT_NEAR(Sku("h100-pcie").SpecClockMhz(), 1619.0, 0.1);               // 756e12 / (114 * 4096)
  EXPECT_NEAR(Sku("h100-nvl").SpecClockMhz(), 1544.4, 0.1);                // 835e12 / (132 * 4096)
  EXPECT_NEAR(Sku("l40s").SpecClockMhz(), 2489.5, 0.1);                    // 362e12 / (142 * 1024)
  EXPECT_NEAR(Sku("b200").SpecClockMhz(), 1855.7, 0.1);                    // 2250e12 / (148 * 8192)
  EXPECT_NEAR(Sku("t4").SpecClockMhz(), 1586.9, 0.1);                      // 65e12 / (40 * 1024): FP16 is T4's basis
  EXPECT_NEAR(Sku("v100-sxm2").SpecClockMhz(), 1525.9, 0.1);               // 125e12 / (80 * 1024)
  EXPECT_NEAR(Sku("a10g").SpecClockMhz(), 1709.0, 0.1);                    // 70e12 / (80 * 512)
  EXPECT_NEAR(Sku("l40").SpecClockMhz(), 2489.5, 0.1);                     // 181e12 / (142 * 512)
  EXPECT_NEAR(Sku("h20").SpecClockMhz(), 463.2, 0.1);                      // 148e12 / (78 * 4096): see its notes
  EXPECT_NEAR(Sku("rtx-pro-6000-blackwell").SpecClockMhz(), 2597.2, 0.1);  // 2000e12 / (188 * 4096), FP4
}

// The arithmetic of every SKU: each precision's peak equals
// sm_count x flops_per_clock_per_sm x f_spec within the SKU's peak_tolerance,
// 1 % by default (the rounding of vendor figures); a SKU whose vendor figure
// needs more says so in peak_tolerance_reason, and no SKU gets more than 3 %.
TEST(GpuSpec, EveryPrecisionOfEverySkuFitsItsSpecClock) {
  for (const auto& spec : Db().skus()) {
    SCOPED_TRACE(spec.id);
    const double f_spec_mhz = spec.SpecClockMhz();
    EXPECT_GT(f_spec_mhz, 0);
    EXPECT_LE(spec.peak_tolerance, 0.03);
    if (spec.peak_tolerance != 0.01) {
      EXPECT_FALSE(spec.peak_tolerance_reason.empty());
    }
    for (const auto& [precision, figures] : spec.precisions) {
      // TFLOPS = SMs x FLOP/clk x MHz / 1e6.
      const double expected = spec.sm_count * figures.flops_per_clock_per_sm * f_spec_mhz / 1e6;
      EXPECT_NEAR(figures.peak_tflops / expected, 1.0, spec.peak_tolerance) << precision;
      EXPECT_NEAR(spec.ImpliedClockMhz(precision) / f_spec_mhz, 1.0, spec.peak_tolerance) << precision;
    }
  }
  // FP8 does twice the FLOPs per clock of BF16 at the same clock on Hopper.
  EXPECT_NEAR(Sku("h100-sxm5").ImpliedClockMhz("fp8"), 1830.1, 0.1);
  // B200's TF32 "1.1 PF" is the widest rounding of the 2024 file: 2.2 %.
  EXPECT_NEAR(Sku("b200").ImpliedClockMhz("tf32") / Sku("b200").SpecClockMhz(), 0.978, 0.001);
}

TEST(GpuSpec, EverySkuHasSourceAliasesAndKnownPrecisions) {
  const std::set<std::string> known = {"fp64", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8"};
  for (const auto& spec : Db().skus()) {
    SCOPED_TRACE(spec.id);
    EXPECT_FALSE(spec.source.empty());
    EXPECT_FALSE(spec.name.empty());
    EXPECT_FALSE(spec.aliases.empty());
    EXPECT_GT(spec.sm_count, 0);
    EXPECT_TRUE(spec.precisions.contains(spec.basis_precision));
    for (const auto& [precision, figures] : spec.precisions) EXPECT_TRUE(known.contains(precision)) << precision;
  }
  // Volta has no BF16 or TF32 tensor path; Turing neither.
  EXPECT_FALSE(Sku("v100-sxm2").precisions.contains("bf16"));
  EXPECT_FALSE(Sku("t4").precisions.contains("bf16"));
  EXPECT_FALSE(Sku("t4").precisions.contains("tf32"));
}

TEST(GpuSpec, EveryAliasAndIdFindsItsOwnSku) {
  // A name claimed by two SKUs is a parse error, and each name must come back
  // to the SKU that lists it: together, aliases are unique across SKUs.
  std::set<std::string> ids;
  for (const auto& spec : Db().skus()) {
    EXPECT_TRUE(ids.insert(spec.id).second) << spec.id;
    EXPECT_EQ(Sku(spec.id).id, spec.id);
    for (const auto& alias : spec.aliases) EXPECT_EQ(Sku(alias).id, spec.id) << alias;
  }
}

TEST(GpuSpec, ModelNamesMatchThroughTheAliasList) {
  EXPECT_EQ(Sku("NVIDIA H100 80GB HBM3").id, "h100-sxm5");
  EXPECT_EQ(Sku("NVIDIA H800").id, "h100-sxm5");
  EXPECT_EQ(Sku("H100 80GB HBM3").id, "h100-sxm5");               // older drivers drop "NVIDIA "
  EXPECT_EQ(Sku("  nvidia   h100 80gb  HBM3 ").id, "h100-sxm5");  // case and spacing
  EXPECT_EQ(Sku("NVIDIA A100-SXM4-80GB").id, "a100");
  EXPECT_EQ(Sku("NVIDIA H100 PCIe").id, "h100-pcie");
  EXPECT_EQ(Sku("NVIDIA H200").id, "h200-sxm");
}

TEST(GpuSpec, RealModelNamesOfEveryFamilyResolve) {
  // Spellings as nvidia-smi --query-gpu=name, dcgm-exporter's modelName and
  // torch.cuda.get_device_name() give them (sources in each SKU's alias_sources).
  const std::vector<std::pair<std::string, std::string>> names = {
      {"Tesla T4", "t4"},   // f_spec = 65e12 / (40 SMs x 1024 FLOP/clk) = 1586.9 MHz
      {"NVIDIA T4", "t4"},  // folds to the id
      {"Tesla V100-SXM2-32GB", "v100-sxm2"},
      {"Tesla V100-SXM2-16GB", "v100-sxm2"},
      {"Tesla V100-PCIE-32GB", "v100-pcie"},
      {"Tesla V100S-PCIE-32GB", "v100s-pcie"},
      {"Quadro RTX 8000", "quadro-rtx-8000"},
      {"NVIDIA A10G", "a10g"},
      {"NVIDIA A800-SXM4-80GB", "a800"},
      {"NVIDIA A100-SXM4-80GB", "a100"},
      {"NVIDIA RTX A6000", "rtx-a6000"},
      {"NVIDIA RTX 4000 Ada Generation", "rtx-4000-ada"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA H100 80GB HBM3", "h100-sxm5"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H100 NVL", "h100-nvl"},
      {"NVIDIA H800", "h100-sxm5"},
      {"NVIDIA H800 PCIe", "h100-pcie"},
      {"NVIDIA H20", "h20"},
      {"NVIDIA H200", "h200-sxm"},
      {"NVIDIA H200 NVL", "h200-nvl"},
      {"NVIDIA GH200 480GB", "gh200"},
      {"NVIDIA GH200 96GB HBM3", "gh200"},  // dcgm-exporter's modelName (tests/data/scrapes/pasted-kubernetes-...)
      {"NVIDIA GH200 120GB", "gh200"},      // the driver README's name for device 2342
      {"NVIDIA GH200 144G HBM3e", "gh200"},
      {"NVIDIA B200", "b200"},
      {"NVIDIA B300 SXM6 AC", "b300"},
      {"NVIDIA GB200", "gb200"},
      {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtx-pro-6000-blackwell"},
  };
  for (const auto& [name, id] : names) EXPECT_EQ(Sku(name).id, id) << name;
  EXPECT_NEAR(Sku("Tesla T4").SpecClockMhz(), 1586.9, 0.1);
}

// GeForce names (issue 41) as NVML and torch.cuda.get_device_name() give them.
// A name matches whole, so a card never takes its Ti, SUPER or Laptop sibling's
// name, and the three "6000" workstation cards stay apart.
TEST(GpuSpec, GeForceNamesMatchWholeNotByPrefix) {
  const std::vector<std::pair<std::string, std::string>> names = {
      {"NVIDIA GeForce RTX 2080 Ti", "rtx-2080-ti"},
      {"GeForce RTX 2080 Ti", "rtx-2080-ti"},  // drivers before 470 drop "NVIDIA "
      {"NVIDIA GeForce RTX 2080", "rtx-2080"},
      {"NVIDIA GeForce RTX 2070", "rtx-2070"},
      {"NVIDIA GeForce RTX 2060", "rtx-2060"},
      {"NVIDIA TITAN RTX", "titan-rtx"},
      {"NVIDIA GeForce RTX 3090", "rtx-3090"},
      {"NVIDIA GeForce RTX 3090 Ti", "rtx-3090-ti"},
      {"NVIDIA GeForce RTX 3080", "rtx-3080"},
      {"NVIDIA GeForce RTX 3080 Ti", "rtx-3080-ti"},
      {"NVIDIA GeForce RTX 3060", "rtx-3060"},
      {"NVIDIA GeForce RTX 4090", "rtx-4090"},
      {"NVIDIA GeForce RTX 4080", "rtx-4080"},
      {"NVIDIA GeForce RTX 4080 SUPER", "rtx-4080-super"},
      {"NVIDIA GeForce RTX 4070", "rtx-4070"},
      {"NVIDIA GeForce RTX 4070 Ti", "rtx-4070-ti"},
      {"NVIDIA GeForce RTX 4070 SUPER", "rtx-4070-super"},
      {"NVIDIA GeForce RTX 4070 Ti SUPER", "rtx-4070-ti-super"},
      {"NVIDIA GeForce RTX 4060 Ti", "rtx-4060-ti"},
      {"NVIDIA GeForce RTX 5090", "rtx-5090"},
      {"NVIDIA GeForce RTX 5080", "rtx-5080"},
      {"NVIDIA GeForce RTX 5070 Ti", "rtx-5070-ti"},
      {"NVIDIA GeForce RTX 5070", "rtx-5070"},
      {"NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"},
      {"NVIDIA RTX 4500 Ada Generation", "rtx-4500-ada"},  // 60 SMs x 2048 x 2580 MHz = 317.03 TFLOPS FP8
      {"Quadro RTX 6000", "quadro-rtx-6000"},
      {"NVIDIA RTX A6000", "rtx-a6000"},
  };
  for (const auto& [name, id] : names) EXPECT_EQ(Sku(name).id, id) << name;
  // Not listed: no boost clock was sourced for the 2080 SUPER, and laptop parts
  // are other chips at other clocks. Neither may fall to a listed neighbour.
  EXPECT_FALSE(Db().Lookup("NVIDIA GeForce RTX 2080 SUPER").ok());
  EXPECT_FALSE(Db().Lookup("NVIDIA GeForce RTX 4090 Laptop GPU").ok());
  EXPECT_FALSE(Db().Lookup("NVIDIA GeForce RTX 40").ok());
}

// f_spec by hand from the vendor figures, and the GeForce FP32-accumulate rate:
// half the per-SM FP16 rate of the professional card of the same chip.
TEST(GpuSpec, GeForceSpecClocksAndHalfRateFp32Accumulate) {
  EXPECT_NEAR(Sku("rtx-2080-ti").SpecClockMhz(), 1545.27, 0.01);        // 53.8e12 / (68 * 512)
  EXPECT_NEAR(Sku("rtx-3090").SpecClockMhz(), 1695.88, 0.01);           // 71.2e12 / (82 * 512)
  EXPECT_NEAR(Sku("rtx-4090").SpecClockMhz(), 2520.75, 0.01);           // 165.2e12 / (128 * 512)
  EXPECT_NEAR(Sku("rtx-5090").SpecClockMhz(), 2406.94, 0.01);           // 1676e12 / (170 * 4096), FP4
  EXPECT_NEAR(Sku("rtx-5090").ImpliedClockMhz("bf16"), 2406.94, 0.01);  // 209.5e12 / (170 * 512)
  EXPECT_EQ(Sku("rtx-2080-ti").precisions.at("fp16").flops_per_clock_per_sm, 512);
  EXPECT_EQ(Sku("quadro-rtx-6000").precisions.at("fp16").flops_per_clock_per_sm, 1024);  // same TU102
  EXPECT_EQ(Sku("titan-rtx").precisions.at("fp16").flops_per_clock_per_sm, 1024);        // TITAN: full rate
  EXPECT_EQ(Sku("rtx-3090").precisions.at("bf16").flops_per_clock_per_sm, 512);
  EXPECT_EQ(Sku("rtx-a6000").precisions.at("bf16").flops_per_clock_per_sm, 1024);  // same GA102
  EXPECT_EQ(Sku("rtx-4090").precisions.at("fp8").flops_per_clock_per_sm, 1024);
  EXPECT_EQ(Sku("l40s").precisions.at("fp8").flops_per_clock_per_sm, 2048);      // AD102 at full rate
  EXPECT_EQ(Sku("rtx-5090").precisions.at("fp4").flops_per_clock_per_sm, 4096);  // FP4 is not halved
  EXPECT_FALSE(Sku("rtx-2080-ti").precisions.contains("bf16"));                  // Turing: no BF16/TF32 path
}

TEST(GpuSpec, UnknownModelNamesTheFileToExtend) {
  auto spec = Db().Lookup("NVIDIA GeForce GTX 1080");  // a real GPU the file does not list (no tensor cores)
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, ErrorCode::kUnknownModel);
  EXPECT_NE(spec.error().message.find("data/gpu_specs.json"), std::string::npos) << spec.error().message;
  EXPECT_NE(spec.error().message.find("NVIDIA GeForce GTX 1080"), std::string::npos);
  // No prefix matching: "NVIDIA H100" alone is not "NVIDIA H100 80GB HBM3".
  EXPECT_FALSE(Db().Lookup("NVIDIA H100").ok());
}

TEST(GpuSpec, MigSmCountOfHandPickedProfiles) {
  const GpuSpec& a100 = Sku("a100");
  EXPECT_EQ(a100.MigSmCount("3g.40gb"), 42);     // A100 80GB: 3 of 7 slices x 14 SMs
  EXPECT_EQ(a100.MigSmCount("3g.20gb"), 42);     // A100 40GB names, same entry
  EXPECT_EQ(a100.MigSmCount("1g.10gb+me"), 14);  // media extensions do not change the SMs
  EXPECT_EQ(a100.MigSmCount("7g.80gb"), 98);     // 7 x 14 of 108: the full instance is not the full GPU
  EXPECT_EQ(a100.MigSmCount("MIG 1g.5gb"), 14);  // nvidia-smi's spelling
  EXPECT_EQ(a100.MigSmCount(" 2G.20GB "), 28);
  EXPECT_EQ(a100.MigSmCount("9g.90gb"), std::nullopt);
  EXPECT_EQ(a100.MigSmCount("1c.3g.40gb"), std::nullopt);  // a compute-instance profile
  EXPECT_EQ(a100.MigSmCount(""), std::nullopt);
  EXPECT_EQ(a100.MigSmCount("1g.10gbx"), std::nullopt);
  // H100 SXM5: 1g.20gb gets 26 SMs, not the 16 of 1g.10gb.
  EXPECT_EQ(Sku("h100-sxm5").MigSmCount("1g.10gb"), 16);
  EXPECT_EQ(Sku("h100-sxm5").MigSmCount("1g.20gb"), 26);
  EXPECT_EQ(Sku("h100-sxm5").MigSmCount("7g.80gb"), 132);
  EXPECT_EQ(Sku("h100-pcie").MigSmCount("3g.40gb"), 46);
  EXPECT_EQ(Sku("rtx-pro-6000-blackwell").MigSmCount("1g.24gb-me"), 46);
  EXPECT_EQ(Sku("rtx-pro-6000-blackwell").MigSmCount("1g.24gb+me.all"), 46);
  EXPECT_EQ(Sku("t4").MigSmCount("1g.10gb"), std::nullopt);  // no MIG before Ampere
  for (const auto& spec : Db().skus()) {
    SCOPED_TRACE(spec.id);
    if (!spec.mig_profile_sms.empty()) {
      EXPECT_FALSE(spec.mig_source.empty());
    }
    for (const auto& [profile, sms] : spec.mig_profile_sms) {
      EXPECT_EQ(spec.MigSmCount(profile), sms);
      EXPECT_LE(sms, spec.sm_count) << profile;
    }
  }
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

// The "add a GPU" recipe of docs/ARCHITECTURE.md, followed once: one more
// object in data/gpu_specs.json's "skus" (here a SYNTHETIC one, added to the
// file's text in memory) is all a new GPU needs; its model name then resolves
// and its f_spec follows from the basis precision's peak.
TEST(GpuSpec, AddingASkuToTheSpecFileIsAllANewGpuNeeds) {
  std::ifstream file(std::string(OFU_SOURCE_DIR) + "/data/gpu_specs.json");
  ASSERT_TRUE(file) << "data/gpu_specs.json";
  std::stringstream text;
  text << file.rdbuf();
  nlohmann::json spec_file = nlohmann::json::parse(text.str());
  const size_t skus_before = spec_file["skus"].size();
  spec_file["skus"].push_back({
      {"id", "x100-example"},
      {"name", "X100 Example (synthetic)"},
      {"architecture", "hopper"},
      {"sm_count", 100},
      {"basis_precision", "bf16"},
      {"precisions", {{"bf16", {{"flops_per_clock_per_sm", 2048}, {"peak_tflops", 409.6}}}}},
      {"aliases", {"NVIDIA X100 Example"}},
      {"alias_sources", "synthetic, for the recipe test"},
      {"source", "synthetic, for the recipe test"},
  });

  auto db = GpuSpecDatabase::Parse(spec_file.dump(), "gpu_specs.json + x100");
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(db->skus().size(), skus_before + 1);
  auto added = db->Lookup("NVIDIA X100 Example");
  ASSERT_TRUE(added.ok()) << added.error().message;
  EXPECT_EQ((*added)->id, "x100-example");
  // 409.6e12 / (100 SMs x 2048 FLOP/clk) = 2.0e9 Hz
  EXPECT_DOUBLE_EQ((*added)->SpecClockMhz(), 2000.0);
  // The SKUs already there still resolve as before.
  EXPECT_EQ((*db->Lookup("NVIDIA H100 80GB HBM3"))->id, Sku("NVIDIA H100 80GB HBM3").id);
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
