// End-to-end tests of `ofu sources` and of auto-detection failing, on a
// machine where the vendor libraries are missing (paths that do not exist).
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace {

constexpr const char* kNoLibraries =
    "--nvml-library /nonexistent/libnvidia-ml.so.1 "
    "--dcgm-library /nonexistent/libdcgm.so.4";

class SourcesCli : public ofu::testing::CliTest {};

TEST_F(SourcesCli, WithoutDriverExplainsEachSourceAndExitsFive) {
  auto result = Ofu(std::string("sources ") + kNoLibraries);
  EXPECT_EQ(result.exit_code, 5) << result.err;
  // One line per source, the live ones unavailable with the path that failed.
  EXPECT_NE(result.out.find("nvml    unavailable"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("dcgm    unavailable"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("/nonexistent/libdcgm.so.4"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("replay  available"), std::string::npos) << result.out;
}

TEST_F(SourcesCli, JsonListsEverySource) {
  auto result = Ofu(std::string("sources --format json ") + kNoLibraries);
  EXPECT_EQ(result.exit_code, 5);
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_EQ(json.size(), 4u);
  EXPECT_EQ(json[0]["source"], "nvml");
  EXPECT_EQ(json[0]["available"], false);
  EXPECT_NE(json[0]["detail"].get<std::string>().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(json[1]["source"], "dcgm");
  EXPECT_EQ(json[1]["available"], false);
  EXPECT_EQ(json[2]["source"], "scrape");
  EXPECT_EQ(json[3]["source"], "replay");
  EXPECT_EQ(json[3]["available"], true);
}

}  // namespace
