// The Debian Prometheus serving OpenMetrics backfilled with promtool: what
// the fleet tests run ofu's --prometheus paths against. The data, and
// whether it is SYNTHETIC, is the caller's.
#pragma once

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/background_process.h"
#include "support/cli_runner.h"

namespace ofu::testing {

// Starts `prometheus` (OFU_PROMETHEUS) on dir/tsdb with `extra_flags`, on a
// free loopback port written to `port`, and waits until it is ready. The
// retention is long: the data may be years old. A failure names the server's
// log (dir/prometheus.log). Again after Stop(): it reads blocks written
// since (promtool's backfill of recording rules).
inline ::testing::AssertionResult StartPrometheus(BackgroundProcess& prometheus, const std::filesystem::path& dir,
                                                  int& port, const std::vector<std::string>& extra_flags = {}) {
  const std::filesystem::path tsdb = dir / "tsdb";
  {
    std::ofstream config(dir / "prometheus.yml");
    config << "global:\n  scrape_interval: 1m\n";
  }
  port = FreeLoopbackPort();
  std::vector<std::string> argv = {OFU_PROMETHEUS, "--config.file=" + (dir / "prometheus.yml").string(),
                                   "--storage.tsdb.path=" + tsdb.string(), "--storage.tsdb.retention.time=36500d",
                                   fmt::format("--web.listen-address=127.0.0.1:{}", port)};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  const std::filesystem::path log = dir / "prometheus.log";
  if (!prometheus.Start(argv, {}, log.string())) return ::testing::AssertionFailure() << "cannot start prometheus";
  httplib::Client client("127.0.0.1", port);
  for (int i = 0; i < 300; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto response = client.Get("/-/ready");
    if (response && response->status == 200) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "prometheus not ready after 60 s: " << Slurp(log);
}

// Waits until the server on `port` (Prometheus, or VictoriaMetrics, which
// speaks its query API) answers an instant query at `at_s` with at least
// one sample of `series` in the `range_s` seconds before it: backfilled
// data is in place once it can be read, not when the server says it is
// ready. A failure after `timeout` names `server`, its last answer and its
// log (`log`).
inline ::testing::AssertionResult SeriesVisible(int port, const std::string& series, double at_s, double range_s,
                                                const std::string& server, const std::filesystem::path& log,
                                                std::chrono::seconds timeout = std::chrono::seconds(60)) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  const httplib::Params params = {{"query", fmt::format("count_over_time({}[{:.0f}s])", series, range_s)},
                                  {"time", fmt::format("{:.3f}", at_s)}};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last = "no answer";
  while (true) {
    auto response = client.Get("/api/v1/query", params, httplib::Headers{});
    if (response) {
      last = fmt::format("HTTP {}: {}", response->status, response->body.substr(0, 400));
      // A vector with a sample: "result":[{"metric":{...},"value":[t,"n"]}].
      if (response->status == 200 && response->body.find("\"value\"") != std::string::npos) {
        return ::testing::AssertionSuccess();
      }
    }
    if (std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return ::testing::AssertionFailure() << server << " on port " << port << " has no sample of " << series << " in the "
                                       << range_s << " s before " << at_s << " after " << timeout.count()
                                       << " s; its last answer: " << last << "\nits log:\n"
                                       << Slurp(log);
}

// Backfills `om` into dir/tsdb with `promtool` (OFU_PROMTOOL), then starts
// the server on it (StartPrometheus). A failure names promtool's output.
inline ::testing::AssertionResult ServeBackfilled(BackgroundProcess& prometheus, const std::filesystem::path& dir,
                                                  const std::filesystem::path& om, int& port,
                                                  const std::vector<std::string>& extra_flags = {}) {
  const std::filesystem::path tsdb = dir / "tsdb";
  auto backfill = RunShell(
      fmt::format("'{}' tsdb create-blocks-from openmetrics '{}' '{}'", OFU_PROMTOOL, om.string(), tsdb.string()), dir);
  if (backfill.exit_code != 0) return ::testing::AssertionFailure() << "promtool: " << backfill.out << backfill.err;
  return StartPrometheus(prometheus, dir, port, extra_flags);
}

// The blocks (ULID directories) in `tsdb`.
inline int BlockCount(const std::filesystem::path& tsdb) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(tsdb)) {
    if (entry.is_directory() && entry.path().filename().string().size() == 26) ++n;
  }
  return n;
}

// promtool's backfill of the recording rules in `rule_file` over at least
// (start_s, end_s], evaluated by the server on `port`, into dir/tsdb
// (restart the server to read them); `log`, when given, gets promtool's
// output. The range is widened to whole 2-hour blocks (start down to a
// multiple of 7200 s, end up to one less 1 s): promtool 2.42 queries each
// 2-hour block from the group's first evaluation in it, and where the
// block's part of the range holds none (the group's evaluation offset is
// hashed from its name, which holds the rule file's path, so a test's pid
// decides it) the query fails, and promtool drops the rule and still exits
// 0: every rule, when the range starts late in its first block. Seen as a
// flake (no rollups after the restart, about one run in four here), and
// reproduced with fixed file names. A run that writes no block fails here.
inline ::testing::AssertionResult BackfillRules(const std::filesystem::path& dir, int port,
                                                const std::filesystem::path& rule_file, double start_s, double end_s,
                                                std::string* log = nullptr) {
  const std::filesystem::path tsdb = dir / "tsdb";
  const int before = BlockCount(tsdb);
  constexpr double kBlockS = 7200;
  const double from = std::floor(start_s / kBlockS) * kBlockS, to = std::ceil(end_s / kBlockS) * kBlockS - 1;
  auto backfill = RunShell(fmt::format("'{}' tsdb create-blocks-from rules --url http://127.0.0.1:{} --start {:.0f} "
                                       "--end {:.0f} --output-dir '{}' '{}'",
                                       OFU_PROMTOOL, port, from, to, tsdb.string(), rule_file.string()),
                           dir);
  if (log != nullptr) *log = backfill.out + backfill.err;
  if (backfill.exit_code != 0) return ::testing::AssertionFailure() << "promtool: " << backfill.out << backfill.err;
  if (BlockCount(tsdb) <= before) {
    return ::testing::AssertionFailure() << "promtool wrote no block: " << backfill.out << backfill.err;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace ofu::testing
