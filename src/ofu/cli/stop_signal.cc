#include "ofu/cli/stop_signal.h"

#include <csignal>

namespace ofu::cli {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;
volatile std::sig_atomic_t g_reload_requested = 0;

extern "C" void OnStopSignal(int /*signal*/) { g_stop_requested = 1; }
extern "C" void OnReloadSignal(int /*signal*/) { g_reload_requested = 1; }

}  // namespace

void InstallStopSignals() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool StopRequested() { return g_stop_requested != 0; }

void InstallReloadSignal() {
  struct sigaction action {};
  action.sa_handler = OnReloadSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGHUP, &action, nullptr);
}

bool TakeReloadRequest() {
  const bool requested = g_reload_requested != 0;
  g_reload_requested = 0;
  return requested;
}

}  // namespace ofu::cli
