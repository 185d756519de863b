// Stopping a long-running command with SIGINT or SIGTERM.
//
// InstallStopSignals() makes both signals set one flag instead of killing
// the process, so `ofu record` can still write its file and `ofu top` can
// restore the terminal. Commands poll StopRequested() in their loops and
// while they wait.
//
// Thread-safety: the flag is a volatile sig_atomic_t, the one kind of state
// a signal handler may touch; that is why it is the program's one global.
#pragma once

namespace ofu::cli {

void InstallStopSignals();
bool StopRequested();

}  // namespace ofu::cli
