#include "ofu/sources/process_figures.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace ofu::sources {
namespace {

std::optional<std::string> ReadText(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// "btime 1764180000" in <root>/stat: the boot time, Unix seconds.
std::optional<double> BootTime(const std::filesystem::path& root) {
  std::ifstream in(root / "stat");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return std::nullopt;
}

// The soft limit on the line "Max open files  1024  524288  files".
std::optional<double> MaxFds(const std::filesystem::path& root) {
  std::ifstream in(root / "self" / "limits");
  std::string line;
  constexpr std::string_view kLine = "Max open files";
  while (std::getline(in, line)) {
    if (line.rfind(kLine, 0) != 0) continue;
    std::istringstream fields(line.substr(kLine.size()));
    std::string soft;
    fields >> soft;
    if (soft.empty() || soft == "unlimited") return std::nullopt;
    return std::stod(soft);
  }
  return std::nullopt;
}

std::optional<double> OpenFds(const std::filesystem::path& root) {
  std::error_code error;
  std::filesystem::directory_iterator entries(root / "self" / "fd", error);
  if (error) return std::nullopt;
  double count = 0;
  for (auto it = entries; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) return std::nullopt;
    ++count;
  }
  return count;
}

}  // namespace

ProcFiles SystemProcFiles() {
  ProcFiles files;
  files.ticks_per_second = sysconf(_SC_CLK_TCK);
  files.page_size = sysconf(_SC_PAGESIZE);
  return files;
}

Result<ProcessFigures> ReadProcessFigures(const ProcFiles& files) {
  const std::filesystem::path stat_path = files.root / "self" / "stat";
  const std::optional<std::string> stat = ReadText(stat_path);
  if (!stat) return Error::Io("{}: cannot read it", stat_path.string());
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
  // the fields are counted from the last ')'; the one after it is field 3.
  const std::size_t close = stat->rfind(')');
  if (close == std::string::npos) return Error::MalformedInput("{}: no ')' after the command name", stat_path.string());
  std::istringstream rest(stat->substr(close + 1));
  std::vector<std::string> fields(std::istream_iterator<std::string>(rest), {});
  constexpr std::size_t kFirst = 3;  // fields[0] is proc(5)'s field 3, state
  const auto field = [&](std::size_t number) -> std::optional<double> {
    if (number < kFirst || number - kFirst >= fields.size()) return std::nullopt;
    try {
      return std::stod(fields[number - kFirst]);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  const auto utime = field(14), stime = field(15), starttime = field(22), vsize = field(23), rss = field(24);
  if (!utime || !stime || !starttime || !vsize || !rss) {
    return Error::MalformedInput("{}: {} fields after the command name, not the numbers proc(5) lists",
                                 stat_path.string(), fields.size());
  }
  const double ticks = static_cast<double>(files.ticks_per_second);
  ProcessFigures figures;
  figures.user_seconds = *utime / ticks;
  figures.system_seconds = *stime / ticks;
  figures.cpu_seconds = (*utime + *stime) / ticks;
  figures.virtual_memory_bytes = *vsize;
  figures.resident_memory_bytes = *rss * static_cast<double>(files.page_size);
  if (const auto boot = BootTime(files.root)) figures.start_time_seconds = *boot + *starttime / ticks;
  figures.open_fds = OpenFds(files.root);
  figures.max_fds = MaxFds(files.root);
  return figures;
}

}  // namespace ofu::sources
