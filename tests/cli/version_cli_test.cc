// `ofu --version` prints the version set once in CMake (project(ofu VERSION
// ...), given to the code as ofu/core/version.h).
#include "ofu/core/version.h"

#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "support/cli_runner.h"

namespace {

TEST(Version, IsMajorMinorPatch) {
  EXPECT_TRUE(std::regex_match(std::string(ofu::kVersion), std::regex(R"(\d+\.\d+\.\d+)"))) << ofu::kVersion;
}

class VersionCli : public ofu::testing::CliTest {};

TEST_F(VersionCli, OfuPrintsTheProjectVersion) {
  const ofu::testing::CommandResult result = Ofu("--version");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, std::string("ofu ") + ofu::kVersion + "\n");
}

}  // namespace
