// A child process with its output passed through (platform/child_process.h)
// and the process tree read from /proc (platform/process_tree.h).
#include "ofu/platform/child_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "ofu/platform/process_tree.h"

namespace ofu::platform {
namespace {

struct Relayed {
  std::string out, err;  // what reached the two descriptors
  std::vector<std::pair<std::string, bool>> lines;
  int status = -1;
};

// Runs `script` with sh, relaying into two temporary files.
Relayed RunScript(const std::string& script) {
  Relayed result;
  auto child = ChildProcess::Start({"sh", "-c", script});
  EXPECT_TRUE(child.ok()) << child.error().message;
  if (!child.ok()) return result;
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  std::array<LineSplitter, 2> streams;
  child->Relay(fileno(out), fileno(err), [&](std::string_view bytes, bool from_stderr) {
    streams[from_stderr ? 1 : 0].Add(bytes,
                                     [&](std::string_view line) { result.lines.emplace_back(line, from_stderr); });
  });
  for (std::size_t i = 0; i < 2; ++i) {
    streams[i].Finish([&](std::string_view line) { result.lines.emplace_back(line, i == 1); });
  }
  result.status = child->Wait();
  for (auto [file, text] : {std::pair{out, &result.out}, std::pair{err, &result.err}}) {
    std::rewind(file);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text->append(buffer, n);
    std::fclose(file);
  }
  return result;
}

TEST(ChildProcess, OutputPassesThroughUnchangedAndLinesAreHandedOn) {
  const Relayed r = RunScript("printf 'one\\ntwo'; printf 'err line\\n' >&2; exit 3");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "one\ntwo");
  EXPECT_EQ(r.err, "err line\n");
  // The last line has no newline: it is handed on at the end.
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0], std::make_pair(std::string("one"), false));
  EXPECT_EQ(r.lines[1], std::make_pair(std::string("err line"), true));
  EXPECT_EQ(r.lines[2], std::make_pair(std::string("two"), false));
}

TEST(LineSplitter, ResyncSkipsToTheNextNewline) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  const auto keep = [&](std::string_view line) { lines.emplace_back(line); };
  splitter.Add("first\nsecond half", keep);
  splitter.Resync();  // bytes were lost here
  splitter.Add("rest of a lost line\nthird\n", keep);
  splitter.Finish(keep);
  EXPECT_EQ(lines, (std::vector<std::string>{"first", "third"}));
}

TEST(ChildProcess, AVeryLongLineIsHandedOnInPiecesAndPassesWhole) {
  const Relayed r = RunScript("head -c 150000 /dev/zero | tr '\\0' x; echo");
  EXPECT_EQ(r.out.size(), 150001u);
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(r.lines[0].first.size(), kMaxLineBytes);
  EXPECT_EQ(r.lines[1].first.size(), kMaxLineBytes);
  EXPECT_EQ(r.lines[2].first.size(), 150000u - 2 * kMaxLineBytes);
}

TEST(ChildProcess, ASignalEndingTheChildIsReportedAs128PlusIt) {
  EXPECT_EQ(RunScript("kill -9 $$").status, 137);
  EXPECT_EQ(RunScript("kill -TERM $$").status, 128 + 15);
  EXPECT_EQ(RunScript("exit 0").status, 0);
}

TEST(ChildProcess, AProgramThatIsNotThereIsUnavailable) {
  const auto child = ChildProcess::Start({"/nonexistent/program"});
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(child.error().message.find("cannot run '/nonexistent/program'"), std::string::npos);
  EXPECT_FALSE(ChildProcess::Start({}).ok());
}

// A fake /proc: 10 -> 11 -> 13, 10 -> 12, and 20 alone; a comm with spaces
// and parentheses must not shift the fields.
TEST(ProcessTree, ReadsTheRootAndItsDescendantsFromProc) {
  const auto root = std::filesystem::temp_directory_path() / ("ofu-proc-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  const std::vector<std::pair<int, std::string>> stats = {{10, "10 (python) S 1 10 10"},
                                                          {11, "11 (torch run (w) 0) S 10 10 10"},
                                                          {12, "12 (pt_main_thread) R 10 1"},
                                                          {13, "13 (sh) S 11 1 1"},
                                                          {20, "20 (other) S 1 20 20"}};
  for (const auto& [pid, stat] : stats) {
    std::filesystem::create_directories(root / std::to_string(pid));
    std::ofstream(root / std::to_string(pid) / "stat") << stat << "\n";
  }
  std::filesystem::create_directories(root / "self");  // not a pid: skipped
  EXPECT_EQ(ProcessTree(10, root.string()), (std::vector<int>{10, 11, 12, 13}));
  EXPECT_EQ(ProcessTree(20, root.string()), std::vector<int>{20});
  EXPECT_EQ(ChildrenOf(10, root.string()), (std::vector<int>{11, 12}));
  EXPECT_TRUE(ChildrenOf(13, root.string()).empty());
  EXPECT_EQ(ProcessTree(10, (root / "missing").string()), std::vector<int>{10});
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace ofu::platform
