// The process figures (process_figures.h) from SYNTHETIC /proc files
// written by the test, so every expected value is computed by hand.
#include "ofu/sources/process_figures.h"

#include <unistd.h>

#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

namespace fs = std::filesystem;

class ProcessFiguresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            fmt::format("ofu-proc-{}-{}", ::getpid(), ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "self" / "fd");
    files_.root = root_;
    files_.ticks_per_second = 100;
    files_.page_size = 4096;
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const fs::path& relative, const std::string& text) { std::ofstream(root_ / relative) << text; }

  // SYNTHETIC: a stat line whose command name holds a space and a ')', with
  // utime 150 and stime 1830 ticks, starttime 12345 ticks, vsize 1 GiB and
  // rss 8192 pages (fields 14, 15, 22, 23, 24 of proc(5)).
  static constexpr const char* kStat =
      "4242 (ofu a)b) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 1830 0 0 20 0 5 0 12345 1073741824 8192 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";

  fs::path root_;
  ProcFiles files_;
};

TEST_F(ProcessFiguresTest, ReadsWhatPrometheusClientsRead) {
  Write("self/stat", kStat);
  Write("stat", "cpu  1 2 3 4\nbtime 1764180000\nprocesses 100\n");
  Write("self/limits",
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max open files            1024                 524288               files     \n");
  for (int fd = 0; fd < 7; ++fd) Write(fs::path("self/fd") / std::to_string(fd), "");
  auto figures = ReadProcessFigures(files_);
  ASSERT_TRUE(figures.ok()) << figures.error().message;
  EXPECT_DOUBLE_EQ(figures->user_seconds, 1.5);     // 150 ticks / 100
  EXPECT_DOUBLE_EQ(figures->system_seconds, 18.3);  // 1830 / 100
  EXPECT_DOUBLE_EQ(figures->cpu_seconds, 19.8);
  EXPECT_DOUBLE_EQ(figures->virtual_memory_bytes, 1073741824);
  EXPECT_DOUBLE_EQ(figures->resident_memory_bytes, 8192.0 * 4096);  // 32 MiB
  ASSERT_TRUE(figures->start_time_seconds);
  EXPECT_DOUBLE_EQ(*figures->start_time_seconds, 1764180000 + 123.45);
  EXPECT_EQ(figures->open_fds, 7);
  EXPECT_EQ(figures->max_fds, 1024);
}

TEST_F(ProcessFiguresTest, WhatCannotBeReadIsAbsentNotZero) {
  Write("self/stat", kStat);
  fs::remove_all(root_ / "self" / "fd");
  Write("self/limits", "Max open files            unlimited            unlimited            files\n");
  auto figures = ReadProcessFigures(files_);
  ASSERT_TRUE(figures.ok()) << figures.error().message;
  EXPECT_FALSE(figures->start_time_seconds.has_value());  // no <root>/stat
  EXPECT_FALSE(figures->open_fds.has_value());
  EXPECT_FALSE(figures->max_fds.has_value());
  EXPECT_DOUBLE_EQ(figures->cpu_seconds, 19.8);
}

TEST_F(ProcessFiguresTest, AMissingOrTruncatedStatIsAnError) {
  auto missing = ReadProcessFigures(files_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIo);
  Write("self/stat", "4242 (ofu) S 1 4242 4242 0 -1 4194560 100 0 0 0 150\n");
  auto truncated = ReadProcessFigures(files_);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().code, ErrorCode::kMalformedInput);
  EXPECT_NE(truncated.error().message.find("self/stat"), std::string::npos) << truncated.error().message;
}

// The real /proc of this test process: present and plausible.
TEST(ProcessFiguresLiveTest, ReadsThisProcess) {
  auto figures = ReadProcessFigures(SystemProcFiles());
  ASSERT_TRUE(figures.ok()) << figures.error().message;
  EXPECT_GT(figures->resident_memory_bytes, 0);
  EXPECT_GE(figures->virtual_memory_bytes, figures->resident_memory_bytes);
  ASSERT_TRUE(figures->open_fds);
  EXPECT_GE(*figures->open_fds, 3);  // stdin, stdout, stderr at least
  ASSERT_TRUE(figures->start_time_seconds);
  EXPECT_GT(*figures->start_time_seconds, 1.5e9);
}

}  // namespace
}  // namespace ofu::sources
