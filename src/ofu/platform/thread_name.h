// Names the calling thread, so that top -H, /proc/PID/task/TID/comm and the
// GPU validation's per-thread CPU table (scripts/gpu-validate/agent_cost.py)
// tell the agent's threads apart instead of showing "ofu" for each.
//
// Linux keeps at most 15 bytes of a thread's name; a longer name is cut to
// 15. Naming is best effort: a failure changes nothing and is not reported
// (the name is for people, and nothing reads it back).
//
// Thread-safety: names only the calling thread.
#pragma once

#include <string_view>

namespace ofu::platform {

inline constexpr std::size_t kMaxThreadNameBytes = 15;

void NameThisThread(std::string_view name);

}  // namespace ofu::platform
