#include "ofu/platform/process_tree.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>

namespace ofu::platform {
namespace {

std::optional<int> Number(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The parent pid of /proc/<pid>/stat: "pid (comm) state ppid ...", where comm
// may hold spaces and parentheses, so the fields after the last ')' count.
std::optional<int> ParentOf(const std::filesystem::path& stat_path) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos || close + 4 > line.size()) return std::nullopt;
  std::string_view rest = std::string_view(line).substr(close + 2);  // "S 1234 ..."
  const std::size_t state_end = rest.find(' ');
  if (state_end == std::string_view::npos) return std::nullopt;
  rest.remove_prefix(state_end + 1);
  return Number(rest.substr(0, rest.find(' ')));
}

// Every process's parent: parent -> child.
std::multimap<int, int> ChildrenByParent(const std::string& proc_root) {
  std::multimap<int, int> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const auto pid = Number(entry.path().filename().string());
    if (!pid) continue;
    if (const auto parent = ParentOf(entry.path() / "stat")) children.emplace(*parent, *pid);
  }
  return children;
}

}  // namespace

std::vector<int> ChildrenOf(int parent, const std::string& proc_root) {
  const std::multimap<int, int> children = ChildrenByParent(proc_root);
  std::vector<int> out;
  const auto [begin, end] = children.equal_range(parent);
  for (auto it = begin; it != end; ++it) out.push_back(it->second);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> ProcessTree(int root, const std::string& proc_root) {
  const std::multimap<int, int> children = ChildrenByParent(proc_root);
  std::vector<int> tree = {root};
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const auto [begin, end] = children.equal_range(tree[i]);
    for (auto it = begin; it != end; ++it) {
      if (std::find(tree.begin(), tree.end(), it->second) == tree.end()) tree.push_back(it->second);
    }
  }
  std::sort(tree.begin(), tree.end());
  return tree;
}

}  // namespace ofu::platform
