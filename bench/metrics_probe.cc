// Measures a running agent from outside, for docs/BENCHMARKS.md:
//
//   metrics_probe load HOST PORT RATE SECONDS
//       GET /metrics at a fixed RATE per second (one client, no pipelining);
//       prints the latency p50, p99 and max, and the body size.
//   metrics_probe freshness HOST PORT SECONDS
//       polls /metrics every 2 ms and, each time GPU 0's
//       ofu_last_window_timestamp_seconds changes, records how long after
//       that window's end the new value was served; prints p50, p99, max.
//   metrics_probe hostile HOST PORT CONNECTIONS PEERS SECONDS RATE [tls]
//       a slowloris attack while measuring as `load` does (a new connection
//       per request; with tls, HTTPS without verifying the certificate).
//       CONNECTIONS sockets from PEERS loopback source addresses
//       (127.1.x.y: HOST must be a loopback address): half trickle one byte
//       a second (a request head that never ends; with tls, a TLS record
//       that never completes, so the handshake stalls), half only connect.
//       Once a second each closed one is opened again, as slowloris does.
//       Prints the latencies, how often the agent closed an attacker, and
//       the agent's ofu_http_connections_rejected_total at the end.
//
// Latencies include the client's own work; both run on the same machine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

namespace {

using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<size_t>(std::lround(q * static_cast<double>(v.size() - 1)));
  return v[std::min(i, v.size() - 1)];
}

double WallNow() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

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

// One attacking socket.
struct Slot {
  int fd = -1;
  bool trickle = false;
  std::string source;  // local address
  size_t sent = 0;     // bytes sent on this connection
};

int Connect(const std::string& source, const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &from.sin_addr);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &to.sin_addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0 ||
      (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0 && errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether the agent has closed the socket (EOF or reset).
bool ClosedByPeer(int fd) {
  char buffer[512];
  const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN);
}

int Hostile(const std::string& host, int port, int connections, int peers, double seconds, double rate, bool tls) {
  // A request head that never ends, or (tls) a handshake record of 512 bytes
  // that never completes; one byte a second after the first.
  const std::string opening = tls ? std::string("\x16\x03\x01\x02\x00", 5) : "GET /metrics HTTP/1.1\r\nX-a: ";
  std::vector<Slot> slots(static_cast<size_t>(connections));
  for (size_t i = 0; i < slots.size(); ++i) {
    const size_t peer = i % static_cast<size_t>(std::max(peers, 1));
    slots[i].source = "127.1." + std::to_string(peer / 250) + "." + std::to_string(peer % 250 + 1);
    slots[i].trickle = i % 2 == 0;
  }
  std::atomic<bool> stop{false};
  std::atomic<long> reopened{0}, failed_connects{0};
  std::thread attacker([&] {
    auto next = Clock::now();
    while (!stop.load()) {
      for (Slot& slot : slots) {
        if (slot.fd >= 0 && ClosedByPeer(slot.fd)) {
          ::close(slot.fd);
          slot.fd = -1;
          reopened.fetch_add(1);
        }
        if (slot.fd < 0) {
          slot.fd = Connect(slot.source, host, port);
          slot.sent = 0;
          if (slot.fd < 0) failed_connects.fetch_add(1);
          continue;  // connecting; the first bytes go next round
        }
        if (!slot.trickle) continue;
        const std::string bytes = slot.sent == 0 ? opening : std::string(1, 'a');
        const ssize_t n = ::send(slot.fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) slot.sent += static_cast<size_t>(n);
      }
      next += std::chrono::seconds(1);
      while (!stop.load() && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (Slot& slot : slots) {
      if (slot.fd >= 0) ::close(slot.fd);
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(2));  // let the attack build up

  std::vector<double> latencies_ms;
  int errors = 0;
  std::string body;
  const auto period = std::chrono::duration<double>(1.0 / rate);
  const auto start = Clock::now();
  for (int i = 0; Clock::now() - start < std::chrono::duration<double>(seconds); ++i) {
    std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(period * i));
    const auto t0 = Clock::now();
    httplib::Result response = [&] {
      if (tls) {
        httplib::SSLClient client(host, port);
        client.enable_server_certificate_verification(false);
        client.set_connection_timeout(5, 0);
        client.set_read_timeout(5, 0);
        return client.Get("/metrics");
      }
      httplib::Client client(host, port);
      client.set_connection_timeout(5, 0);
      client.set_read_timeout(5, 0);
      return client.Get("/metrics");
    }();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!response || response->status != 200) {
      ++errors;
      continue;
    }
    body = response->body;
    latencies_ms.push_back(ms);
  }
  stop.store(true);
  attacker.join();
  std::printf(
      "hostile%s: %d connections from %d peers (half trickling), closed by the agent and reopened %ld "
      "times, failed connects %ld\n",
      tls ? " (TLS)" : "", connections, peers, reopened.load(), failed_connects.load());
  std::printf("requests %zu errors %d  latency ms: p50 %.3f p99 %.3f max %.3f\n", latencies_ms.size(), errors,
              Percentile(latencies_ms, 0.5), Percentile(latencies_ms, 0.99), Percentile(latencies_ms, 1.0));
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("ofu_http_connections_rejected_total{", 0) == 0) std::printf("  %s\n", line.c_str());
  }
  return errors == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // A write to a connection the agent closed must fail, not end the probe.
  std::signal(SIGPIPE, SIG_IGN);
  const std::string mode = argc > 1 ? argv[1] : "";
  if ((mode == "load" && argc == 6) || (mode == "freshness" && argc == 5)) {
    httplib::Client client(argv[2], std::atoi(argv[3]));
    client.set_read_timeout(5, 0);
    return mode == "load" ? Load(client, std::atof(argv[4]), std::atof(argv[5]))
                          : Freshness(client, std::atof(argv[4]));
  }
  if (mode == "hostile" && (argc == 8 || (argc == 9 && std::string(argv[8]) == "tls"))) {
    return Hostile(argv[2], std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]), std::atof(argv[6]),
                   std::atof(argv[7]), argc == 9);
  }
  std::fprintf(stderr,
               "usage: metrics_probe load HOST PORT RATE SECONDS | freshness HOST PORT SECONDS |\n"
               "       hostile HOST PORT CONNECTIONS PEERS SECONDS RATE [tls]\n");
  return 1;
}
