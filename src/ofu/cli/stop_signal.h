// Stopping a long-running command with SIGINT or SIGTERM.
//
// InstallStopSignals() makes both signals set one flag instead of killing
// the process, so `ofu record` can still write its file and `ofu top` can
// restore the terminal. Commands poll StopRequested() in their loops and
// while they wait.
//
// Thread-safety: the flags are volatile sig_atomic_t, the one kind of state
// a signal handler may touch; that is why they are the program's globals.
#pragma once

namespace ofu::cli {

void InstallStopSignals();
bool StopRequested();

// For a command that runs a child (`ofu run`): SIGINT and SIGTERM no longer
// stop this process; each is kept to be passed on to the child. A signal
// the terminal sent (Ctrl-C reaches the whole foreground process group, the
// child included) is not passed on again; one another process sent (kill,
// Slurm, a container runtime) is. TakeSignalToForward() returns such a
// signal once, 0 when none is pending.
void InstallForwardingSignals();
int TakeSignalToForward();

// SIGHUP asks a daemon (`ofu agent`) to reload its configuration. Returns
// whether one arrived since the last call, and clears it.
void InstallReloadSignal();
bool TakeReloadRequest();

}  // namespace ofu::cli
