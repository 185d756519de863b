#include "stop_signal.h"

#include <csignal>

namespace ofu::cli {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;

extern "C" void OnStopSignal(int /*signal*/) { g_stop_requested = 1; }

}  // namespace

void InstallStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool StopRequested() { return g_stop_requested != 0; }

}  // namespace ofu::cli
