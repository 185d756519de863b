// Names of processes, from <proc-root>/PID/comm (Linux procfs). The root is
// injectable so tests use a fake tree.
//
// Thread-safety: reads only procfs; callable from any thread.
#pragma once

#include <cstdint>
#include <string>

namespace ofu::attribution {

// The process's command name, or "?" when it cannot be read (gone, other
// namespace, no procfs).
std::string ReadProcessName(const std::string& proc_root, std::uint32_t pid);

}  // namespace ofu::attribution
