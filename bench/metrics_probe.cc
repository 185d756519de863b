// Measures a running agent from outside, for docs/BENCHMARKS.md:
//
//   metrics_probe load HOST PORT RATE SECONDS
//       GET /metrics at a fixed RATE per second (one client, no pipelining);
//       prints the latency p50, p99 and max, and the body size.
//   metrics_probe freshness HOST PORT SECONDS
//       polls /metrics every 2 ms and, each time GPU 0's
//       ofu_last_window_timestamp_seconds changes, records how long after
//       that window's end the new value was served; prints p50, p99, max.
//
// Latencies include the client's own work; both run on the same machine.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

namespace {

using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The value of the first line starting with `prefix` (a sample of GPU 0).
bool FindValue(const std::string& body, const std::string& prefix, double* value) {
  size_t at = body.find(prefix);
  if (at == std::string::npos) return false;
  at = body.find(' ', at + prefix.size());
  if (at == std::string::npos) return false;
  *value = std::strtod(body.c_str() + at + 1, nullptr);
  return true;
}

int Load(httplib::Client& client, double rate, double seconds) {
  std::vector<double> latencies_ms;
  size_t bytes = 0;
  int errors = 0;
  const auto period = std::chrono::duration<double>(1.0 / rate);
  const auto start = Clock::now();
  for (int i = 0; Clock::now() - start < std::chrono::duration<double>(seconds); ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(period * i));
    const auto t0 = Clock::now();
    auto response = client.Get("/metrics");
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!response || response->status != 200) {
      ++errors;
      continue;
    }
    bytes = response->body.size();
    latencies_ms.push_back(ms);
  }
  std::printf("requests %zu errors %d body %zu B  latency ms: p50 %.3f p99 %.3f max %.3f\n", latencies_ms.size(),
              errors, bytes, Percentile(latencies_ms, 0.5), Percentile(latencies_ms, 0.99),
              Percentile(latencies_ms, 1.0));
  return errors == 0 ? 0 : 1;
}

int Freshness(httplib::Client& client, double seconds) {
  const std::string prefix = "ofu_last_window_timestamp_seconds{uuid=\"";
  std::vector<double> delays_ms;
  double last = 0;
  const auto start = Clock::now();
  while (Clock::now() - start < std::chrono::duration<double>(seconds)) {
    auto response = client.Get("/metrics");
    const double now = WallNow();
    double value = 0;
    if (response && response->status == 200 && FindValue(response->body, prefix, &value) && value != last) {
      if (last != 0) delays_ms.push_back((now - value) * 1000);
      last = value;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::printf("windows %zu  window end -> on /metrics, ms: p50 %.1f p99 %.1f max %.1f\n", delays_ms.size(),
              Percentile(delays_ms, 0.5), Percentile(delays_ms, 0.99), Percentile(delays_ms, 1.0));
  return delays_ms.empty() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if ((mode == "load" && argc == 6) || (mode == "freshness" && argc == 5)) {
    httplib::Client client(argv[2], std::atoi(argv[3]));
    client.set_read_timeout(5, 0);
    return mode == "load" ? Load(client, std::atof(argv[4]), std::atof(argv[5])) : Freshness(client, std::atof(argv[4]));
  }
  std::fprintf(stderr, "usage: metrics_probe load HOST PORT RATE SECONDS | freshness HOST PORT SECONDS\n");
  return 1;
}
