// The processes a command started, read from /proc: the root and every
// process whose parent chain leads to it (torchrun's workers, a shell's
// children). `proc_root` is injected so tests can lay out a fake /proc.
//
// A process that exits while the directory is read is skipped; a stat line
// that does not parse is skipped. Pure function of the files it reads; safe
// from any thread.
#pragma once

#include <string>
#include <vector>

namespace ofu::platform {

// The pids of `root` and its descendants, sorted; just {root} when
// `proc_root` cannot be read.
std::vector<int> ProcessTree(int root, const std::string& proc_root = "/proc");

// The pids whose parent is `parent`, sorted; empty when none (or when
// `proc_root` cannot be read).
std::vector<int> ChildrenOf(int parent, const std::string& proc_root = "/proc");

}  // namespace ofu::platform
