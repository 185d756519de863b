// The Debian VictoriaMetrics (victoria-metrics 1.79) serving the same
// OpenMetrics the Prometheus tests backfill: the second engine behind
// Prometheus's query API that the fleet tests run ofu's --prometheus paths
// against. The data, and whether it is SYNTHETIC, is the caller's.
#pragma once

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "support/background_process.h"
#include "support/cli_runner.h"

namespace ofu::testing {

// OpenMetrics text (timestamps in seconds) as the Prometheus text that
// VictoriaMetrics's /api/v1/import/prometheus takes (timestamps in
// milliseconds); comments and # EOF dropped.
inline std::string PrometheusTextOfOpenMetrics(const std::string& om) {
  std::istringstream in(om);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t at = line.rfind(' ');
    if (at == std::string::npos) continue;
    const double seconds = std::stod(line.substr(at + 1));
    out += fmt::format("{} {}\n", line.substr(0, at), std::llround(seconds * 1000));
  }
  return out;
}

// Starts `victoria-metrics` (OFU_VICTORIA_METRICS) on dir/vmdata on a free
// loopback port written to `port`, imports `om` and flushes it so that
// queries see it. The retention is long: the data may be years old. A
// failure names the server's log (dir/victoria-metrics.log).
// `extra_flags` go to the server too.
inline ::testing::AssertionResult ServeImported(BackgroundProcess& vm, const std::filesystem::path& dir,
                                                const std::string& om, int& port,
                                                const std::vector<std::string>& extra_flags = {}) {
  port = FreeLoopbackPort();
  const std::filesystem::path log = dir / "victoria-metrics.log";
  std::vector<std::string> argv = {OFU_VICTORIA_METRICS, "-storageDataPath=" + (dir / "vmdata").string(),
                                   fmt::format("-httpListenAddr=127.0.0.1:{}", port), "-retentionPeriod=100y",
                                   "-search.disableCache"};
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  if (!vm.Start(argv, {}, log.string())) return ::testing::AssertionFailure() << "cannot start victoria-metrics";
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto response = client.Get("/health");
    ready = response && response->status == 200;
  }
  if (!ready) return ::testing::AssertionFailure() << "victoria-metrics not ready after 30 s: " << Slurp(log);
  auto imported = client.Post("/api/v1/import/prometheus", PrometheusTextOfOpenMetrics(om), "text/plain");
  if (!imported || imported->status / 100 != 2) {
    return ::testing::AssertionFailure() << "import refused: " << (imported ? imported->body : "no answer");
  }
  auto flushed = client.Get("/internal/force_flush");
  if (!flushed || flushed->status != 200) return ::testing::AssertionFailure() << "force_flush failed";
  return ::testing::AssertionSuccess();
}

// Evaluates the recording rules of `rules` over [from_s, to_s] with vmalert
// (OFU_VMALERT) in replay mode, reading from the server on `port` and
// writing to the VictoriaMetrics on `write_port` (0: the same server), at
// each group's own interval; then flushes the one written to.
// VictoriaMetrics's way of backfilling rules (promtool's for Prometheus),
// and, writing elsewhere, of federating a shard's rollups to a global
// server. vmalert's output is kept in dir/vmalert.log.
inline ::testing::AssertionResult ReplayRules(const std::filesystem::path& dir, const std::filesystem::path& rules,
                                              int port, double from_s, double to_s, int write_port = 0) {
  const auto rfc3339 = [](double t) {
    const auto time = static_cast<std::time_t>(t);
    char text[32];
    std::tm tm{};
    gmtime_r(&time, &tm);
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return std::string(text);
  };
  if (write_port == 0) write_port = port;
  const std::string url = fmt::format("http://127.0.0.1:{}", port);
  const std::string write_url = fmt::format("http://127.0.0.1:{}", write_port);
  auto replay = RunShell(fmt::format("'{}' -rule='{}' -datasource.url={} -remoteWrite.url={} "
                                     "-datasource.queryStep=0s -replay.rulesDelay=0s -replay.disableProgressBar "
                                     "-replay.timeFrom={} -replay.timeTo={}",
                                     OFU_VMALERT, rules.string(), url, write_url, rfc3339(from_s), rfc3339(to_s)),
                         dir);
  // Kept: vmalert 1.79 exits 0 even when a remote write was dropped
  // (VictoriaMetrics issue 6512), so its log is what tells.
  std::ofstream(dir / "vmalert.log") << replay.out << replay.err;
  if (replay.exit_code != 0) return ::testing::AssertionFailure() << "vmalert: " << replay.out << replay.err;
  httplib::Client client("127.0.0.1", write_port);
  auto flushed = client.Get("/internal/force_flush");
  if (!flushed || flushed->status != 200) return ::testing::AssertionFailure() << "force_flush failed";
  return ::testing::AssertionSuccess();
}

}  // namespace ofu::testing
