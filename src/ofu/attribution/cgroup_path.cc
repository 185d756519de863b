#include "ofu/attribution/cgroup_path.h"

#include <vector>

namespace ofu::attribution {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// 8-4-4-4-12 hex digits, the form Kubernetes gives pod UIDs.
bool IsUid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash_here ? s[i] != '-' : !IsHex(s[i])) return false;
  }
  return true;
}

std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    if (end > start) parts.push_back(path.substr(start, end - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The slurmd (v1) or slurmstepd (v2) cgroup under which job_<id> lives.
bool IsSlurmRoot(std::string_view part) {
  return part == "slurm" || StartsWith(part, "slurm_") || EndsWith(part, "slurmstepd.scope");
}

std::optional<CgroupJob> SlurmJob(const std::vector<std::string_view>& parts) {
  bool under_slurm = false;
  for (const std::string_view part : parts) {
    if (IsSlurmRoot(part)) {
      under_slurm = true;
    } else if (under_slurm && StartsWith(part, "job_") && AllDigits(part.substr(4))) {
      return CgroupJob{"slurm", std::string(part.substr(4)), ""};
    }
  }
  return std::nullopt;
}

// The pod UID of one path component, or empty: "pod<uid>" (cgroupfs driver)
// or "kubepods[-<qos>]-pod<uid_with_underscores>.slice" (systemd driver).
std::string PodUid(std::string_view part) {
  std::string_view raw;
  if (StartsWith(part, "pod")) {
    raw = part.substr(3);
  } else if (StartsWith(part, "kubepods") && EndsWith(part, ".slice")) {
    const std::size_t at = part.rfind("-pod");
    if (at == std::string_view::npos) return "";
    raw = part.substr(at + 4, part.size() - (at + 4) - 6);
  } else {
    return "";
  }
  std::string uid(raw);
  for (char& c : uid) {
    if (c == '_') c = '-';  // systemd reserves '-' for nesting, so the kubelet writes '_'
  }
  return IsUid(uid) ? uid : "";
}

// "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope" or a bare id.
std::string ContainerId(std::string_view part) {
  if (EndsWith(part, ".scope")) {
    part.remove_suffix(6);
    const std::size_t dash = part.rfind('-');
    if (dash == std::string_view::npos) return "";
    part.remove_prefix(dash + 1);
  }
  for (const char c : part) {
    if (!IsHex(c)) return "";
  }
  return std::string(part);
}

std::optional<CgroupJob> KubernetesJob(const std::vector<std::string_view>& parts) {
  bool under_kubepods = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].find("kubepods") != std::string_view::npos) under_kubepods = true;
    if (!under_kubepods) continue;
    std::string uid = PodUid(parts[i]);
    if (uid.empty()) continue;
    std::string container = i + 1 < parts.size() ? ContainerId(parts[i + 1]) : "";
    return CgroupJob{"kubernetes", std::move(uid), std::move(container)};
  }
  return std::nullopt;
}

}  // namespace

std::optional<CgroupJob> ParseCgroupLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  // hierarchy-id ':' controllers ':' path; the path itself may hold ':'.
  const std::size_t first = line.find(':');
  if (first == std::string_view::npos) return std::nullopt;
  const std::size_t second = line.find(':', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const std::vector<std::string_view> parts = SplitPath(line.substr(second + 1));
  if (auto slurm = SlurmJob(parts)) return slurm;
  return KubernetesJob(parts);
}

std::optional<CgroupJob> ParseCgroupFile(std::string_view content) {
  std::size_t start = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string_view::npos) end = content.size();
    if (auto job = ParseCgroupLine(content.substr(start, end - start))) return job;
    start = end + 1;
  }
  return std::nullopt;
}

}  // namespace ofu::attribution
