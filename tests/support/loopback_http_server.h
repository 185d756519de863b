// An HTTP server on 127.0.0.1, on a port the kernel picks, served from its
// own thread: the fake endpoints of tests (a dcgm-exporter's /metrics, the
// Prometheus query API). Register handlers on server() before Start();
// Stop() (or the destructor) closes the port and joins the thread.
//
// Thread-safety: Start and Stop from the test's thread; the handlers run on
// the server's thread.
#pragma once

#include <chrono>
#include <thread>

#include <httplib.h>

namespace ofu::testing {

class LoopbackHttpServer {
 public:
  LoopbackHttpServer() = default;
  LoopbackHttpServer(const LoopbackHttpServer&) = delete;
  LoopbackHttpServer& operator=(const LoopbackHttpServer&) = delete;
  ~LoopbackHttpServer() { Stop(); }

  httplib::Server& server() { return server_; }

  // Binds and starts serving; returns once it accepts connections. The
  // port, or a value ≤ 0 when none could be bound.
  int Start() {
    const int port = server_.bind_to_any_port("127.0.0.1");
    if (port <= 0) return port;
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return port;
  }

  // The port is closed when this returns. Idempotent.
  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

 private:
  httplib::Server server_;
  std::thread thread_;
};

}  // namespace ofu::testing
