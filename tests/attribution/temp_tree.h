// A scratch directory per test for synthetic file trees (fake /proc, mapping
// directories, sockets), removed afterwards. Every file the tests write is
// made up for the test; none is a copy of a real machine.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace ofu::attribution::testing {

class TempTree {
 public:
  TempTree() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // Short: unix socket paths must fit in 108 bytes.
    const std::size_t test = std::hash<std::string>{}(std::string(info->test_suite_name()) + "." + info->name());
    path_ = std::filesystem::temp_directory_path() / fmt::format("ofu-attr-{}-{}", ::getpid(), test % 100000);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempTree() {
    std::error_code ignored;
    // A test may have made a file unreadable; restore rights before removing.
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path_, ignored)) {
      ::chmod(entry.path().c_str(), entry.is_directory() ? 0755 : 0644);
    }
    std::filesystem::remove_all(path_, ignored);
  }
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }

  // Writes `content` (bytes, NULs included) to path()/relative, making directories.
  void Write(const std::string& relative, std::string_view content) const {
    const auto file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }

  std::string Read(const std::string& relative) const {
    std::ifstream in(path_ / relative, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  bool Exists(const std::string& relative) const { return std::filesystem::exists(path_ / relative); }

 private:
  std::filesystem::path path_;
};

}  // namespace ofu::attribution::testing
