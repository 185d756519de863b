// Parsing --source values and auto-detection when nothing is installed.
#include "ofu/sources/source_factory.h"

#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

TEST(ParseSourceSpec, AcceptsEveryDocumentedForm) {
  auto nvml = ParseSourceSpec("nvml");
  ASSERT_TRUE(nvml.ok());
  EXPECT_EQ(nvml->kind, SourceKind::kNvml);

  auto dcgm = ParseSourceSpec("dcgm");
  ASSERT_TRUE(dcgm.ok());
  EXPECT_EQ(dcgm->kind, SourceKind::kDcgm);
  EXPECT_EQ(dcgm->argument, "");

  auto unix_socket = ParseSourceSpec("dcgm:unix:/run/dcgm.sock");
  ASSERT_TRUE(unix_socket.ok());
  EXPECT_EQ(unix_socket->kind, SourceKind::kDcgm);
  EXPECT_EQ(unix_socket->argument, "unix:/run/dcgm.sock");

  auto scrape = ParseSourceSpec("scrape:http://node1:9400/metrics");
  ASSERT_TRUE(scrape.ok());
  EXPECT_EQ(scrape->kind, SourceKind::kScrape);
  EXPECT_EQ(scrape->argument, "http://node1:9400/metrics");

  auto replay = ParseSourceSpec("replay:/tmp/a:b.om");  // only the first colon separates
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->kind, SourceKind::kReplay);
  EXPECT_EQ(replay->argument, "/tmp/a:b.om");
}

TEST(ParseSourceSpec, RejectsUnknownAndIncompleteForms) {
  for (const char* bad : {"", "nvm", "nvml:x", "replay", "replay:", "scrape", "file:x.om", "DCGM"}) {
    auto spec = ParseSourceSpec(bad);
    EXPECT_FALSE(spec.ok()) << bad;
    if (!spec.ok()) {
      EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument) << bad;
    }
  }
}

TEST(AutoDetectSource, SaysWhatWasTriedAndWhyEachFailed) {
  FakeClock clock(0);
  SourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  options.dcgm_library = "/nonexistent/libdcgm.so.4";
  auto source = AutoDetectSource(options, clock);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(source.error().message.find("nvml: "), std::string::npos) << source.error().message;
  EXPECT_NE(source.error().message.find("dcgm: "), std::string::npos) << source.error().message;
  EXPECT_NE(source.error().message.find("--source replay:FILE"), std::string::npos) << source.error().message;
}

}  // namespace
}  // namespace ofu::sources
