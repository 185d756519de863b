// A device's share of its GPU and the weighting of fleet figures by it.
// The spec file below is SYNTHETIC (a made-up SKU with A100-like numbers),
// so that the arithmetic is checked apart from the shipped database.
#include "ofu/core/gpu_share.h"

#include <gtest/gtest.h>

#include "ofu/core/aggregate.h"

namespace ofu {
namespace {

constexpr std::string_view kSyntheticSpecs = R"({
  "schema_version": 1,
  "architectures": {"ampere": {"k_arch": 1.0, "k_arch_source": "test"}},
  "skus": [{
    "id": "test-a100", "name": "synthetic A100-like", "architecture": "ampere", "sm_count": 108,
    "basis_precision": "bf16",
    "precisions": {"bf16": {"flops_per_clock_per_sm": 2048, "peak_tflops": 312}},
    "aliases": ["Test GPU"], "source": "synthetic, for tests",
    "mig_profiles": {"1g.10gb": 14, "3g.40gb": 42, "7g.80gb": 98}, "mig_source": "synthetic, for tests"
  }]
})";

const GpuSpec& TestSpec() {
  static const GpuSpecDatabase db = [] {
    auto parsed = GpuSpecDatabase::Parse(kSyntheticSpecs, "synthetic.json");
    EXPECT_TRUE(parsed.ok()) << parsed.error().message;
    return parsed.ok() ? *parsed : GpuSpecDatabase{};
  }();
  return db.skus().front();
}

GpuIdentity Instance(std::string profile, std::string id) {
  GpuIdentity identity;
  identity.key = "GPU-a/gi" + id;
  identity.uuid = "GPU-a";
  identity.mig_profile = std::move(profile);
  identity.mig_instance = std::move(id);
  return identity;
}

TEST(GpuShare, AWholeGpuWeighsOne) {
  GpuIdentity whole;
  whole.key = whole.uuid = "GPU-a";
  EXPECT_FALSE(IsMigInstance(whole));
  EXPECT_EQ(GpuShare(TestSpec(), whole), 1.0);
  EXPECT_EQ(WhyNoGpuShare(TestSpec(), whole), "");
}

TEST(GpuShare, AMigInstanceWeighsItsProfilesSmsOverTheGpus) {
  EXPECT_DOUBLE_EQ(*GpuShare(TestSpec(), Instance("3g.40gb", "1")), 42.0 / 108);
  EXPECT_DOUBLE_EQ(*GpuShare(TestSpec(), Instance("1g.10gb", "9")), 14.0 / 108);
  // NVML and DCGM may add a media-engine suffix to the profile.
  EXPECT_DOUBLE_EQ(*GpuShare(TestSpec(), Instance("1g.10gb+me", "9")), 14.0 / 108);
}

TEST(GpuShare, AnUnknownOrMissingProfileHasNoShareAndSaysWhy) {
  EXPECT_FALSE(GpuShare(TestSpec(), Instance("5g.50gb", "2")));
  EXPECT_NE(WhyNoGpuShare(TestSpec(), Instance("5g.50gb", "2")).find("5g.50gb"), std::string::npos);
  EXPECT_FALSE(GpuShare(TestSpec(), Instance("", "2")));
  EXPECT_NE(WhyNoGpuShare(TestSpec(), Instance("", "2")).find("no profile"), std::string::npos);
}

OfuWindow Window(double seconds, double ofu) {
  OfuWindow w;
  w.covered_s = seconds;
  w.tensor_active = ofu;
  w.ofu = ofu;
  w.busy = ofu > 0;
  return w;
}

// Two 3g instances and one 1g instance of one GPU, 60 s each, at OFU 0.6,
// 0.3 and 0.9. Weighted by SMs: (42*0.6 + 42*0.3 + 14*0.9) / 98 = 50.4 / 98;
// by seconds alone it would be 0.6.
TEST(GpuShare, FleetFiguresWeighInstancesBySmsTimesSeconds) {
  Summarizer overall;
  overall.Add(Window(60, 0.6), *GpuShare(TestSpec(), Instance("3g.40gb", "1")));
  overall.Add(Window(60, 0.3), *GpuShare(TestSpec(), Instance("3g.40gb", "2")));
  overall.Add(Window(60, 0.9), *GpuShare(TestSpec(), Instance("1g.10gb", "9")));
  const Summary s = overall.Finish();
  EXPECT_DOUBLE_EQ(*s.ofu, 50.4 / 98);
  EXPECT_DOUBLE_EQ(s.seconds, 60.0 * 98 / 108);  // GPU-equivalent seconds
  EXPECT_DOUBLE_EQ(*s.tensor_active, 50.4 / 98);
  EXPECT_DOUBLE_EQ(*s.active_ofu, 50.4 / 98);
}

TEST(GpuShare, AWholeGpuAndAnInstanceWeighTheirShares) {
  // A whole GPU at 0.2 for 60 s beside a 1g slice at 1.0 for 60 s:
  // (0.2*60*1 + 1.0*60*14/108) / (60 + 60*14/108) = (0.2 + 14/108) / (1 + 14/108).
  Summarizer overall;
  overall.Add(Window(60, 0.2));
  overall.Add(Window(60, 1.0), 14.0 / 108);
  EXPECT_DOUBLE_EQ(*overall.Finish().ofu, (0.2 + 14.0 / 108) / (1 + 14.0 / 108));
}

}  // namespace
}  // namespace ofu
