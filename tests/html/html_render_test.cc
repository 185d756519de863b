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
#include "html/real_trace_findings.h"
#include "ofu/analysis/html_report.h"
#include "ofu/render/html_page.h"

namespace {

namespace fs = std::filesystem;
using ofu::testing::Gpu;
using ofu::testing::Job;
using ofu::testing::Row;

const std::string kHostileJob = "</script><script>document.body.dataset.pwned='1'</script>";

// What the script drew: <main id="ofu-report">, without the page's own
// script text and data, which name every field.
std::string Drawn(const std::string& dom) {
  const auto begin = dom.find("<main id=\"ofu-report\"");
  const auto end = dom.find("</main>", begin);
  return begin == std::string::npos || end == std::string::npos ? std::string() : dom.substr(begin, end - begin);
}

// Text as the DOM dump writes it inside an element.
std::string EscapeText(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Two GPUs of two SKUs, a normal job and one with a hostile id, five jobs in
// the scatter (two flagged) and two markers, all synthetic; and the GEMM
// findings of one real trace (real_trace_findings.h), as --trace adds them.
ofu::analysis::HtmlReportView SyntheticView() {
  ofu::history::StoredHistory history;
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
  view.kernel_findings = ofu::testing::RaggedTraceFindings(specs);
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
    page_ = Write("report.html", ofu::render::RenderHtmlReport(SyntheticView()));
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

  // The GEMM findings of the trace: the pre-native kernel first, with its
  // advice as text (escaped as the DOM writes text), then tile padding.
  const ofu::analysis::KernelFindings findings = *SyntheticView().kernel_findings;
  ASSERT_FALSE(findings.gemms.empty());
  const std::string drawn_findings = Drawn(dom);
  EXPECT_EQ(Count(drawn_findings, "id=\"gemm-findings\""), 1);
  EXPECT_NE(drawn_findings.find("GEMM findings from the trace"), std::string::npos);
  EXPECT_EQ(Count(drawn_findings, "data-gemm-finding=\"pre-native kernel\""), 1);
  EXPECT_EQ(Count(drawn_findings, "data-gemm-finding=\"tile padding\""), static_cast<int>(findings.gemms.size()) - 1);
  EXPECT_NE(drawn_findings.find("pre-native kernel (sm75 s1688 bf16)"), std::string::npos);
  EXPECT_NE(drawn_findings.find(">4097×1000×8191<"), std::string::npos);
  EXPECT_NE(drawn_findings.find(EscapeText(findings.gemms.front().advice)), std::string::npos)
      << findings.gemms.front().advice;
  EXPECT_NE(drawn_findings.find("factor " + fmt::format("{:.3f}", *findings.factor) + " = tile padding " +
                                fmt::format("{:.3f}", *findings.padding_factor) + " × kernel throughput 0.513"),
            std::string::npos);

  // A distribution per SKU.
  EXPECT_EQ(Count(dom, "class=\"sku\" data-sku=\"h100-sxm5\""), 1);
  EXPECT_EQ(Count(dom, "class=\"sku\" data-sku=\"a100\""), 1);

  // No CUDA-core pipe counters in this data: the page says so and shows no
  // figure, series, column or advice for them (issue 18).
  const std::string drawn = Drawn(dom);
  EXPECT_NE(drawn.find("No CUDA-core pipe counters in this data"), std::string::npos);
  for (const char* none : {"data-advice-", "series fp32", "data-nt", "data-field=", "FP32 pipe", "TFLOP/s"}) {
    EXPECT_EQ(drawn.find(none), std::string::npos) << none;
  }
}

// Work outside the tensor cores (issue 18), SYNTHETIC: job SGEMM (OFU 0.02,
// FP32 pipe 0.7, bound 41.5 TFLOP/s on an H100 SXM5) gets its figures, its
// FP32 line and the CUDA-core advice; job BF16, without pipe counters, gets
// dashes and nothing else. One browser launch.
TEST_F(HtmlRender, NonTensorFiguresAndAdviceWhereMeasuredOnly) {
  const ofu::history::StoredHistory history = ofu::testing::SgemmAndBf16Jobs();
  const auto specs = *ofu::GpuSpecDatabase::Embedded();
  ofu::analysis::HtmlReportOptions options;
  options.title = "Synthetic CUDA-core job";
  options.synthetic = true;
  const fs::path page = Write("non_tensor.html",
                              ofu::render::RenderHtmlReport(ofu::analysis::BuildHtmlReportView(
                                  history, ofu::analysis::BuildStoreReport(history, specs), options)));
  const auto run = ofu::testing::RunChromium({"--dump-dom", "file://" + page.string()}, dir_ / "dom-nt");
  ASSERT_FALSE(run.timed_out) << run.err;
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_NE(run.out.find("data-rendered=\"ok\""), std::string::npos) << run.out.substr(0, 2000);
  EXPECT_EQ(run.out.find("data-error=\""), std::string::npos) << run.out.substr(run.out.find("<body"), 600);
  const std::string dom = Drawn(run.out);
  ASSERT_FALSE(dom.empty());

  // The advice, for the job and its GPU only, with the shared text.
  EXPECT_EQ(Count(dom, "data-advice-job=\"SGEMM\""), 1);
  EXPECT_EQ(Count(dom, "data-advice-gpu=\"GPU-1\""), 1);
  EXPECT_EQ(Count(dom, "data-advice-"), 2);
  EXPECT_NE(dom.find("job SGEMM: OFU 0.020 while the FP32 pipe is 70% active"), std::string::npos);
  EXPECT_NE(dom.find("Gain at most 7.4x"), std::string::npos);

  // The FP32 line beside OFU on SGEMM's timeline only.
  EXPECT_EQ(Count(dom, "class=\"series fp32\" data-fp32-job=\"SGEMM\""), 1);
  EXPECT_EQ(Count(dom, "class=\"series fp32\""), 1);
  EXPECT_EQ(Count(dom, "data-nt=\"job\""), 1);
  EXPECT_NE(dom.find("FP32 pipe 70.0 % · ≤ 41.5 TFLOP/s on CUDA cores"), std::string::npos);

  // The table: SGEMM's figures, dashes for BF16, no FP64/FP16 column (never measured).
  const auto row = [&](const std::string& attribute) {
    const auto at = dom.find(attribute);
    return at == std::string::npos ? std::string() : dom.substr(at, dom.find("</tr>", at) - at);
  };
  const std::string sgemm = row("data-nt-job=\"SGEMM\""), bf16 = row("data-nt-job=\"BF16\"");
  EXPECT_NE(sgemm.find("data-field=\"fp32_active\">70.0 %<"), std::string::npos) << sgemm;
  EXPECT_NE(sgemm.find("data-field=\"flops_upper_bound_tflops\">41.5<"), std::string::npos) << sgemm;
  EXPECT_NE(sgemm.find("data-field=\"share_of_peak\">62.1 %<"), std::string::npos) << sgemm;  // 41.51 / 66.9
  EXPECT_NE(bf16.find("data-field=\"fp32_active\">–<"), std::string::npos) << bf16;
  EXPECT_NE(bf16.find("data-field=\"flops_upper_bound_tflops\">–<"), std::string::npos) << bf16;
  EXPECT_EQ(bf16.find("0.0 %"), std::string::npos) << bf16;
  EXPECT_EQ(Count(dom, "data-field=\"fp64_active\""), 0);
  EXPECT_EQ(Count(dom, "data-field=\"fp16_active\""), 0);
  EXPECT_NE(row("data-nt-gpu=\"GPU-2\"").find("data-field=\"fp32_active\">–<"), std::string::npos);
  EXPECT_NE(dom.find("Fleet FP32 pipe"), std::string::npos);

  // No --trace: no GEMM findings section, card or table at all.
  for (const char* none : {"gemm-findings", "GEMM findings", "data-gemm-finding"}) {
    EXPECT_EQ(dom.find(none), std::string::npos) << none;
  }
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

namespace {

// A number attribute of the drawn page's <body> (data-chart-text-min, ...); -1 when absent.
double BodyNumber(const std::string& dom, const std::string& attribute) {
  const std::string key = attribute + "=\"";
  const auto body = dom.find("<body");
  const auto at = dom.find(key, body);
  if (body == std::string::npos || at == std::string::npos || at > dom.find('>', body)) return -1;
  return std::stod(dom.substr(at + key.size()));
}

// The page at a window `width` pixels wide, as the DOM its script drew.
std::string DomAtWidth(const fs::path& page, int width, const fs::path& scratch) {
  const auto run = ofu::testing::RunChromium(
      {fmt::format("--window-size={},2000", width), "--dump-dom", "file://" + page.string()}, scratch);
  EXPECT_FALSE(run.timed_out) << run.err;
  EXPECT_EQ(run.exit_code, 0) << run.err;
  return run.out;
}

// Chart text is the page's text size (issue 54): between the tables' 13 px
// and the body's 14 px, whatever the window's width. A chart drawn in a
// fixed viewBox and scaled to the page missed it both ways (about 3 px on a
// phone for a 1,300-unit heat map, 16 px on a wide screen for a 560-unit one).
void ExpectChartTextIsPageText(const std::string& dom, int width) {
  const double page = BodyNumber(dom, "data-page-text-px");
  const double min = BodyNumber(dom, "data-chart-text-min"), max = BodyNumber(dom, "data-chart-text-max");
  ASSERT_GT(page, 0) << dom.substr(0, 600);
  EXPECT_GE(min, 12.9) << "width " << width;
  EXPECT_LE(max, page) << "width " << width;
}

}  // namespace

// The store's page (the synthetic fleet above) at a wide screen's width and a phone's.
TEST_F(HtmlRender, ChartTextIsThePagesTextAtEveryWidth) {
  for (const int width : {1400, 390}) {
    const std::string dom = DomAtWidth(page_, width, dir_ / fmt::format("w{}", width));
    ASSERT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << width;
    ExpectChartTextIsPageText(dom, width);
  }
}

// One recording's page, drawn from the real H100 recording (data/recordings:
// 75 s of 1 s samples, eight phases with their true MFU), at 1,400 px and
// at a phone's 390 px: a point per second, each phase with its OFU beside
// its MFU in the chart and the table, GPU-hours with digits, and no fleet
// panels (jobs, heat map, scatter, regressions).
TEST_F(HtmlRender, OneRecordingsPageAtDesktopAndPhoneWidths) {
  const fs::path page = dir_ / "h100.html";
  const auto made = Ofu(fmt::format("report --input '{}' --html '{}'",
                                    OFU_SOURCE_DIR "/data/recordings/h100-sxm5-stage-a-1s.om", page.string()));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  for (const int width : {1400, 390}) {
    const std::string dom = DomAtWidth(page, width, dir_ / fmt::format("w{}", width));
    ASSERT_NE(dom.find("data-rendered=\"ok\""), std::string::npos) << width << dom.substr(0, 2000);
    EXPECT_EQ(dom.find("data-error=\""), std::string::npos) << dom.substr(dom.find("<body"), 600);
    const std::string drawn = Drawn(dom);
    EXPECT_NE(drawn.find("one point per 1 s"), std::string::npos);
    EXPECT_NE(drawn.find(">0.0208<"), std::string::npos) << "75 s of one GPU are 0.0208 GPU-hours";
    EXPECT_EQ(Count(drawn, "id=\"run\""), 1);
    EXPECT_EQ(Count(drawn, "data-phase-row="), 8);
    EXPECT_EQ(Count(drawn, "class=\"phase-mfu\""), 8);
    EXPECT_NE(drawn.find("data-phase-row=\"bf16-4097\""), std::string::npos);
    // bf16-4097: OFU 31.1 % beside its true MFU 13.7 % (a Turing-era kernel).
    EXPECT_NE(drawn.find("31.1 %</td><td class=\"num\" data-field=\"mfu\">13.7 %</td><td class=\"num\">17.3 pp"),
              std::string::npos);
    for (const char* fleet_only : {"id=\"jobs\"", "id=\"gpus\"", "id=\"scatter\"", "id=\"regressions\""}) {
      EXPECT_EQ(drawn.find(fleet_only), std::string::npos) << fleet_only;
    }
    ExpectChartTextIsPageText(dom, width);
  }
}
