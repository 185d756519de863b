#include "ofu/sources/source_cost.h"

#include <time.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace ofu::sources {
namespace {

// What was added between two snapshots of the same accounting, per call;
// calls not made in between are left out.
std::vector<CallTotals> Difference(const std::vector<CallTotals>& before, const std::vector<CallTotals>& after) {
  std::map<std::string, const CallTotals*> earlier;
  for (const CallTotals& t : before) earlier[t.call] = &t;
  std::vector<CallTotals> out;
  for (const CallTotals& t : after) {
    CallTotals d = t;
    if (const auto it = earlier.find(t.call); it != earlier.end()) {
      const CallTotals& b = *it->second;
      d.calls -= b.calls;
      d.wall_s -= b.wall_s;
      d.cpu_s -= b.cpu_s;
      if (d.user_s && b.user_s) *d.user_s -= *b.user_s;
      if (d.system_s && b.system_s) *d.system_s -= *b.system_s;
    }
    if (d.calls > 0) out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const CallTotals& a, const CallTotals& b) { return a.cpu_s > b.cpu_s; });
  return out;
}

}  // namespace

std::optional<double> ProcessCpuSeconds() {
  timespec t{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0) return std::nullopt;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

Result<SourceCost> MeasureSourceCost(Source& source, const CallAccounting& accounting, int windows,
                                     const std::function<std::optional<double>()>& process_cpu_s, Clock& clock) {
  SourceCost cost;
  cost.source = source.Describe();
  OFU_ASSIGN_OR_RETURN(auto first, source.Next());
  if (!first) return Error::NoData("{} ended before its first window", cost.source);
  const std::vector<CallTotals> before = accounting.Snapshot();
  const std::optional<double> cpu_before = process_cpu_s();
  const double start_s = clock.NowS();
  for (int i = 0; i < windows; ++i) {
    OFU_ASSIGN_OR_RETURN(auto snapshot, source.Next());
    if (!snapshot) return Error::NoData("{} ended after {} of {} windows", cost.source, i, windows);
    cost.window_s = snapshot->window_s;
    cost.gpus = static_cast<int>(snapshot->gpus.size());
    ++cost.windows;
  }
  cost.elapsed_s = clock.NowS() - start_s;
  const std::optional<double> cpu_after = process_cpu_s();
  if (cpu_before && cpu_after) cost.process_cpu_s = *cpu_after - *cpu_before;
  cost.calls = Difference(before, accounting.Snapshot());
  return cost;
}

}  // namespace ofu::sources
