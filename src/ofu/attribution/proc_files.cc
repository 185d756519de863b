#include "ofu/attribution/proc_files.h"

#include <charconv>
#include <vector>

namespace ofu::attribution {
namespace {

// Calls visit(line) for each `separator`-terminated piece; stops when visit returns true.
template <typename Visit>
void ForEachPiece(std::string_view text, char separator, Visit visit) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (visit(text.substr(start, end - start))) return;
    start = end + 1;
  }
}

std::optional<std::uint32_t> ParseUint32(std::string_view s) {
  std::uint32_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

}  // namespace

SlurmEnviron ParseSlurmEnviron(std::string_view environment) {
  SlurmEnviron env;
  std::string old_job_id;  // SLURM_JOBID, used only when SLURM_JOB_ID is absent
  bool have_job_id = false, have_old = false, have_user = false, have_name = false;
  ForEachPiece(environment, '\0', [&](std::string_view entry) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) return false;
    const std::string_view key = entry.substr(0, eq), value = entry.substr(eq + 1);
    auto take_first = [&](bool& seen, std::string& into) {
      if (!seen) into = value;
      seen = true;
    };
    if (key == "SLURM_JOB_ID") take_first(have_job_id, env.job_id);
    if (key == "SLURM_JOBID") take_first(have_old, old_job_id);
    if (key == "SLURM_JOB_USER") take_first(have_user, env.user);
    if (key == "SLURM_JOB_NAME") take_first(have_name, env.job_name);
    return false;
  });
  if (!have_job_id) env.job_id = old_job_id;
  return env;
}

std::optional<std::uint32_t> ParseStatusUid(std::string_view status) {
  std::optional<std::uint32_t> uid;
  ForEachPiece(status, '\n', [&](std::string_view line) {
    if (line.substr(0, 4) != "Uid:") return false;
    line.remove_prefix(4);
    const std::size_t begin = line.find_first_not_of(" \t");
    if (begin == std::string_view::npos) return true;
    line.remove_prefix(begin);
    uid = ParseUint32(line.substr(0, line.find_first_of(" \t")));
    return true;
  });
  return uid;
}

std::optional<std::string> LookupPasswdName(std::string_view passwd, std::uint32_t uid) {
  std::optional<std::string> name;
  ForEachPiece(passwd, '\n', [&](std::string_view line) {
    if (line.empty() || line[0] == '#' || line[0] == '+' || line[0] == '-') return false;
    std::vector<std::string_view> fields;
    ForEachPiece(line, ':', [&](std::string_view field) {
      fields.push_back(field);
      return fields.size() == 3;
    });
    // ForEachPiece skips an empty trailing piece, so "name::" yields fewer
    // than three fields; such a line has no uid anyway.
    if (fields.size() < 3 || fields[0].empty()) return false;
    if (ParseUint32(fields[2]) != uid) return false;
    name = std::string(fields[0]);
    return true;
  });
  return name;
}

}  // namespace ofu::attribution
