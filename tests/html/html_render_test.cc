// The HTML report as a browser draws it: headless Chromium loads a page made
// from a synthetic view model and the test reads the DOM its scripts built
// (--dump-dom), then takes a screenshot. Two browser launches in all.
// Skipped, with the reason, where no Chromium was found at configure time.
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "html/chromium.h"
#include "html/html_test_support.h"
#include "ofu/analysis/html_report.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::Gpu;
using ofu::testing::Job;
using ofu::testing::Row;

const std::string kHostileJob = "</script><script>document.body.dataset.pwned='1'</script>";

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Two GPUs of two SKUs, a normal job and one with a hostile id, five jobs in
// the scatter (two flagged) and two markers. All synthetic.
ofu::analysis::HtmlReportView SyntheticView() {
  ofu::sinks::StoredHistory history;
  history.path = "synthetic.sqlite";
  history.gpus = {Gpu(1, "h100-sxm5", "NVIDIA H100 80GB HBM3", "node-a"),
                  Gpu(2, "a100", "NVIDIA A100-SXM4-40GB", "node-b")};
  const double t0 = 1790000000;
  for (int i = 1; i <= 120; ++i) {
    if (i < 50 || i > 60) history.windows.push_back(Row(1, t0 + 60 * i, (i < 80 ? 0.45 : 0.18) * 60, 60, 60));
    history.windows.push_back(Row(2, t0 + 60 * i, 0.3 * 60, 60, 60));
  }
  history.jobs = {Job(1, "J1", t0, std::nullopt), Job(2, kHostileJob, t0, std::nullopt, "mallory")};
  const auto specs = *ofu::GpuSpecDatabase::Embedded();
  ofu::analysis::HtmlReportOptions options;
  options.title = "Synthetic fleet";
  options.source = history.path;
  options.generated_at_s = t0 + 7300;
  options.synthetic = true;
  auto view = ofu::analysis::BuildHtmlReportView(history, ofu::analysis::BuildStoreReport(history, specs), options);

  view.scatter.emplace();
  view.scatter->pearson_r = 0.78;
  view.scatter->spearman_rho = 0.74;
  view.scatter->points = {{"J1", 0.41, 0.43, false, ""},
                          {"J2", 0.30, 0.52, true,
                           "reported MFU above what the hardware did: causal attention counted in full"},
                          {"J3", 0.25, 0.24, false, ""},
                          {"J4", 0.50, 0.21, true, "far below: recomputation counted by OFU, not MFU"},
                          {kHostileJob, 0.2, 0.21, false, ""}};
  view.markers.emplace();
  view.markers->push_back({"J1", "GPU-1", t0 + 60 * 80, 0.45, 0.18, 0.4, "regression", "debug overhead"});
  view.markers->push_back({"", "GPU-2", t0 + 60 * 30, 0.3, 0.3, 1.0, "precision shift", "BF16 to FP8"});
  return view;
}

class HtmlRender : public ofu::testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    if (ofu::testing::ChromiumPath().empty()) {
      GTEST_SKIP() << "no chromium found when configuring (Debian: apt-get install chromium; "
                      "scripts/install-deps.sh installs it)";
    }
    page_ = Write("report.html", ofu::analysis::RenderHtmlReport(SyntheticView()));
  }
  fs::path page_;
};

TEST_F(HtmlRender, DrawsEverySectionWithoutScriptErrors) {
  const auto run = ofu::testing::RunChromium({"--dump-dom", "file://" + page_.string()}, dir_ / "dom");
  ASSERT_FALSE(run.timed_out) << run.err;
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string& dom = run.out;
  ASSERT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_EQ(dom.find("data-error=\""), std::string::npos) << dom.substr(dom.find("<body"), 600);
  EXPECT_EQ(dom.find("data-pwned"), std::string::npos);
  EXPECT_NE(dom.find("data-synthetic=\"true\""), std::string::npos);

  // A timeline path per job, the hostile one shown as text, not run.
  EXPECT_EQ(Count(dom, "class=\"series\" data-job=\"J1\""), 1);
  EXPECT_EQ(Count(dom, "class=\"series\" data-job="), 2);
  EXPECT_NE(dom.find("&lt;/script&gt;&lt;script&gt;document.body.dataset.pwned"), std::string::npos);
  // A heat-map row per GPU.
  EXPECT_EQ(Count(dom, "class=\"gpu-row\""), 2);

  // The scatter: five points, two flagged, both listed with their reasons.
  EXPECT_EQ(Count(dom, "class=\"scatter-point"), 5);
  EXPECT_EQ(Count(dom, "class=\"scatter-point flagged\""), 2);
  EXPECT_EQ(Count(dom, "data-flagged-job="), 2);
  EXPECT_NE(dom.find("causal attention counted in full"), std::string::npos);
  EXPECT_NE(dom.find("Pearson r = 0.78"), std::string::npos);

  // The markers: listed once each, drawn on J1's timeline and GPU rows.
  EXPECT_EQ(Count(dom, "data-marker=\"regression\""), 1);
  EXPECT_EQ(Count(dom, "data-marker=\"precision shift\""), 1);
  // regression: on J1's chart and on GPU-1's row; precision shift: on GPU-2's row.
  EXPECT_EQ(Count(dom, "class=\"marker\" data-marker-kind=\"regression\""), 2);
  EXPECT_EQ(Count(dom, "class=\"marker\" data-marker-kind=\"precision shift\""), 1);
  EXPECT_NE(dom.find("regression · 2.5× lower"), std::string::npos);
  EXPECT_NE(dom.find("debug overhead"), std::string::npos);

  // A distribution per SKU.
  EXPECT_EQ(Count(dom, "class=\"sku\" data-sku=\"h100-sxm5\""), 1);
  EXPECT_EQ(Count(dom, "class=\"sku\" data-sku=\"a100\""), 1);
}

TEST_F(HtmlRender, ScreenshotIsAPng) {
  const fs::path png = dir_ / "report.png";
  const auto run = ofu::testing::RunChromium({"--screenshot=" + png.string(), "--window-size=1400,1800",
                                              "--hide-scrollbars", "file://" + page_.string()},
                                             dir_ / "shot");
  ASSERT_FALSE(run.timed_out) << run.err;
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_TRUE(fs::exists(png)) << run.err;
  const std::string bytes = ofu::testing::Slurp(png);
  EXPECT_GT(bytes.size(), 10'000u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
}

}  // namespace
