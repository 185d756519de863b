// The view of `ofu top` as plain lines, from snapshots built here with
// hand-computed OFU (H100 SXM5: f_spec = 989.4e12 / (132 * 4096) = 1829.95 MHz).
#include "ofu/render/top_view.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ofu/attribution/process_names.h"

namespace ofu::render {
namespace {

constexpr const char* kH100 = "NVIDIA H100 80GB HBM3";

sources::GpuReading Gpu(std::string index, std::optional<double> tensor, std::optional<double> clock,
                        std::optional<double> power = std::nullopt) {
  sources::GpuReading gpu;
  gpu.identity.key = "GPU-" + index;
  gpu.identity.uuid = "GPU-" + index;
  gpu.identity.gpu_index = std::move(index);
  gpu.identity.model = kH100;
  gpu.sample.tensor_active = tensor;
  gpu.sample.sm_clock_mhz = clock;
  gpu.sample.power_w = power;
  return gpu;
}

sources::Snapshot Snap(std::vector<sources::GpuReading> gpus, double time_s = 1700000000) {
  sources::Snapshot s;
  s.time_s = time_s;
  s.window_s = 1;
  s.gpus = std::move(gpus);
  return s;
}

std::string Text(const std::vector<TopLine>& lines) {
  std::string text;
  for (const auto& line : lines) text += line.text + "\n";
  return text;
}

class TopViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = GpuSpecDatabase::Embedded();
    ASSERT_TRUE(db.ok()) << db.error().message;
    specs_ = std::move(*db);
  }
  std::string Render(const TopModel& model, SortOrder sort = SortOrder::kOfu) {
    TopFrame frame;
    frame.source = "test source";
    frame.sort = sort;
    frame.width = 120;
    return Text(RenderTop(model, frame));
  }
  GpuSpecDatabase specs_;
};

TEST_F(TopViewTest, HalfTensorAtSpecClockIsFiftyPercentWithClockAgainstSpec) {
  TopModel model(specs_, 60);
  model.Add(Snap({Gpu("0", 0.5, 1830, 650)}));
  const std::string text = Render(model);
  // The H100 80GB HBM3's measured clock model, no clock event reasons: the SMs
  // ran 1685.720 MHz (by hand in tests/cli/report_cli_test.cc), so
  // 0.5 * 1685.720 / 1829.95 = 0.46059 -> 46.1 %; the bar 14 of 30. With the
  // reported clock it would be 0.500014, 50.0 %.
  EXPECT_NE(text.find("OFU      [██████████████░░░░░░░░░░░░░░░░]   46.1 %"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor     50.0 %   SM clock 1830/1830 MHz   power 650 W"), std::string::npos) << text;
  EXPECT_NE(text.find("run      1686 MHz: the clock the SMs ran, by this GPU's measured clock model"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ofu top — sort: OFU — test source"), std::string::npos) << text;
  EXPECT_EQ(text.find("SYNTHETIC"), std::string::npos);
}

// Issue 18: the CUDA-core pipes get a line only where the source delivers
// one. OFU 0.02 x 1830 / 1829.95 = 2.0 % with the FP32 pipe at 70 %: the
// advice; the same pipe beside OFU 50 %: no advice; no pipe counter: no line.
TEST_F(TopViewTest, CudaCorePipesShowWhenDeliveredWithAdviceWhenOfuIsLow) {
  TopModel model(specs_, 60);
  sources::GpuReading low = Gpu("0", 0.02, 1830);
  low.sample.fp32_active = 0.7;
  sources::GpuReading high = Gpu("1", 0.5, 1830);
  high.sample.fp32_active = 0.7;
  model.Add(Snap({low, high, Gpu("2", 0.02, 1830)}));
  const std::string text = Render(model, SortOrder::kGpuIndex);
  EXPECT_NE(text.find("cuda     FP32   70.0 %   FP64 —   FP16 —"), std::string::npos) << text;
  const std::string advice = "advice   math on CUDA cores, not tensor cores: TF32 for FP32 matmuls";
  const std::size_t gpu1 = text.find("GPU 1"), gpu2 = text.find("GPU 2");
  ASSERT_NE(gpu1, std::string::npos);
  ASSERT_NE(gpu2, std::string::npos);
  EXPECT_LT(text.find(advice), gpu1) << "GPU 0 has the advice\n" << text;
  EXPECT_EQ(text.find(advice, gpu1), std::string::npos) << "GPUs 1 and 2 have none\n" << text;
  EXPECT_EQ(text.find("cuda ", gpu2), std::string::npos) << "GPU 2 has no pipe counter\n" << text;
}

TEST_F(TopViewTest, AboveSpecClockIsShownAboveHundredNotClamped) {
  TopModel model(specs_, 60);
  model.Add(Snap({Gpu("0", 1.0, 1980)}));
  const std::string text = Render(model);
  // Steady tensor work: 1.0 * 1980 / 0.998 / 1829.95 = 1.08417 -> 108.4 %, bar full.
  EXPECT_NE(text.find("[██████████████████████████████]  108.4 %"), std::string::npos) << text;
}

TEST_F(TopViewTest, AbsentFiguresAreDashesNeverZero) {
  TopModel model(specs_, 60);
  model.Add(Snap({Gpu("0", 0.5, std::nullopt)}));
  const std::string text = Render(model);
  EXPECT_NE(text.find("░]        —"), std::string::npos) << text;
  EXPECT_NE(text.find("SM clock —/1830 MHz   power — W"), std::string::npos) << text;
  EXPECT_NE(text.find("throttle —"), std::string::npos) << text;
  EXPECT_NE(text.find("history  ·"), std::string::npos) << text;
  EXPECT_EQ(text.find("]    0.0 %"), std::string::npos) << text;
}

TEST_F(TopViewTest, ThrottleReasonsByName) {
  TopModel model(specs_, 60);
  sources::GpuReading gpu = Gpu("0", 0.5, 1830);
  gpu.sample.clock_event_reasons = 0x4 | 0x40;
  sources::GpuReading idle = Gpu("1", 0.0, 1830);
  idle.sample.clock_event_reasons = 0;
  model.Add(Snap({gpu, idle}));
  const std::string text = Render(model);
  EXPECT_NE(text.find("throttle sw_power_cap, hw_thermal\n"), std::string::npos) << text;
  EXPECT_NE(text.find("throttle none\n"), std::string::npos) << text;
}

TEST_F(TopViewTest, SparklineIsARingBufferOfOfuLevels) {
  TopModel model(specs_, 3);
  // The clock at f_spec exactly: with the reported clock, OFU would be the tensor activity itself.
  const double f_spec = 989.4e6 / (132.0 * 4096.0);
  for (std::optional<double> tensor :
       {std::optional<double>(0.9), std::optional<double>(0.0), std::optional<double>(0.5), std::optional<double>(),
        std::optional<double>(1.0)}) {
    model.Add(Snap({Gpu("0", tensor, f_spec)}));
  }
  // Last three, with the H100 80GB HBM3's measured clock model: tensor 0.5 ->
  // 0.5 x 1685.67 / 1829.95 = 0.4606 -> round(3.22) = level 3 (▄), absent
  // (·), 1.0 -> 1.002 -> █.
  EXPECT_NE(Render(model).find("history  ▄·█\n"), std::string::npos) << Render(model);
  EXPECT_EQ(SparkGlyph(0.0), "▁");
  EXPECT_EQ(SparkGlyph(0.2), "▂");  // 1.4 -> 1
  EXPECT_EQ(SparkGlyph(1.3), "█");
}

TEST_F(TopViewTest, SortOrdersAndTheirCycle) {
  TopModel model(specs_, 60);
  model.Add(Snap({Gpu("0", 0.25, 1830, 700), Gpu("1", 0.75, 1830, 300), Gpu("2", std::nullopt, 1830, 500)}));
  const auto order = [&](SortOrder sort) {
    std::string ids;
    for (const auto& gpu : model.Sorted(sort)) ids += gpu.reading->identity.gpu_index;
    return ids;
  };
  EXPECT_EQ(order(SortOrder::kOfu), "102");  // absent last
  EXPECT_EQ(order(SortOrder::kTensor), "102");
  EXPECT_EQ(order(SortOrder::kPower), "021");
  EXPECT_EQ(order(SortOrder::kGpuIndex), "012");
  EXPECT_EQ(NextSortOrder(SortOrder::kOfu), SortOrder::kTensor);
  EXPECT_EQ(NextSortOrder(SortOrder::kGpuIndex), SortOrder::kOfu);
  EXPECT_EQ(SortOrderForKey('p'), SortOrder::kPower);
  EXPECT_FALSE(SortOrderForKey('x').has_value());
  EXPECT_EQ(SortOrderForName("gpu"), SortOrder::kGpuIndex);
  EXPECT_EQ(SortOrderForName("tensor"), SortOrder::kTensor);
  EXPECT_FALSE(SortOrderForName("OFU").has_value());  // the flag's words are lower case
  EXPECT_NE(Render(model, SortOrder::kPower).find("sort: power"), std::string::npos);
}

TEST_F(TopViewTest, LostGpuSaysWhatIsWrongAndSyntheticIsMarked) {
  TopModel model(specs_, 60);
  sources::GpuReading lost = Gpu("3", std::nullopt, std::nullopt);
  lost.health = sources::GpuHealth::kLost;
  lost.problem = "GPU fell off the bus; check dmesg for Xid 79";
  sources::Snapshot s = Snap({lost});
  s.synthetic = true;
  model.Add(s);
  const std::string text = Render(model);
  EXPECT_NE(text.find("  lost: GPU fell off the bus; check dmesg for Xid 79\n"), std::string::npos) << text;
  EXPECT_NE(text.find("SYNTHETIC"), std::string::npos) << text;
}

TEST_F(TopViewTest, UnknownModelHasNoOfuAndSaysWhy) {
  TopModel model(specs_, 60);
  sources::GpuReading gpu = Gpu("0", 0.5, 1500);
  gpu.identity.model = "Imaginary GPU 9000";
  model.Add(Snap({gpu}));
  const std::string text = Render(model);
  EXPECT_NE(text.find("░]        —"), std::string::npos) << text;
  EXPECT_NE(text.find("model    "), std::string::npos) << text;
  EXPECT_NE(text.find("SM clock 1500/— MHz"), std::string::npos) << text;
}

TEST_F(TopViewTest, ProcessesByPidAndNameFromAFakeProcRoot) {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / fmt::format("ofu-proc-{}", ::getpid());
  fs::create_directories(root / "1234");
  std::ofstream(root / "1234" / "comm") << "python\n";

  TopModel model(specs_, 60);
  sources::GpuReading gpu = Gpu("0", 0.5, 1830);
  gpu.processes = {{1234, std::nullopt}, {99, std::nullopt}};
  model.Add(Snap({gpu}));
  TopFrame frame;
  frame.width = 120;
  frame.process_name = [&](std::uint32_t pid) { return attribution::ReadProcessName(root.string(), pid); };
  const std::string text = Text(RenderTop(model, frame));
  EXPECT_NE(text.find("procs    1234 python, 99 ?\n"), std::string::npos) << text;
  fs::remove_all(root);
}

TEST_F(TopViewTest, LinesFitTheWidthInColumnsNotBytes) {
  EXPECT_EQ(TruncateColumns("ab█c—d", 4), "ab█c");
  EXPECT_EQ(TruncateColumns("ab", 4), "ab");
  TopModel model(specs_, 60);
  model.Add(Snap({Gpu("0", 0.5, 1830)}));
  TopFrame frame;
  frame.width = 40;
  for (const TopLine& line : RenderTop(model, frame)) EXPECT_EQ(TruncateColumns(line.text, 40), line.text);
}

}  // namespace
}  // namespace ofu::render
