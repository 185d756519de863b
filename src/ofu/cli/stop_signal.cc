#include "ofu/cli/stop_signal.h"

#include <csignal>

namespace ofu::cli {
namespace {

volatile std::sig_atomic_t g_stop_requested = 0;
volatile std::sig_atomic_t g_reload_requested = 0;

volatile std::sig_atomic_t g_forward_signal = 0;

extern "C" void OnStopSignal(int /*signal*/) { g_stop_requested = 1; }

// si_code > 0 (SI_KERNEL): the kernel raised it for the terminal; <= 0
// (SI_USER, SI_QUEUE, SI_TKILL): a process sent it.
extern "C" void OnForwardSignal(int signal, siginfo_t* info, void* /*context*/) {
  if (info == nullptr || info->si_code <= 0) g_forward_signal = signal;
}
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

void InstallForwardingSignals() {
  struct sigaction action {};
  action.sa_sigaction = OnForwardSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A parent may have blocked them (a test runner does); they must arrive.
  sigset_t both;
  sigemptyset(&both);
  sigaddset(&both, SIGINT);
  sigaddset(&both, SIGTERM);
  sigprocmask(SIG_UNBLOCK, &both, nullptr);
}

int TakeSignalToForward() {
  const int signal = g_forward_signal;
  g_forward_signal = 0;
  return signal;
}

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
