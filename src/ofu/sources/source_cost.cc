#include "ofu/sources/source_cost.h"

#include <time.h>

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

double PerCallUs(double seconds, std::uint64_t calls) { return seconds * 1e6 / static_cast<double>(calls); }

struct Sums {
  double calls = 0, wall_s = 0, cpu_s = 0;
};
Sums Sum(const SourceCost& cost) {
  Sums s;
  for (const CallTotals& t : cost.calls) {
    s.calls += static_cast<double>(t.calls);
    s.wall_s += t.wall_s;
    s.cpu_s += t.cpu_s;
  }
  return s;
}

// The process's CPU share spent in `cpu_s`; absent without a process figure
// or when the process used no measurable CPU.
std::optional<double> Share(double cpu_s, const SourceCost& cost) {
  if (!cost.process_cpu_s || *cost.process_cpu_s <= 0) return std::nullopt;
  return cpu_s / *cost.process_cpu_s;
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

std::string FormatSourceCostTable(const SourceCost& cost) {
  std::string out = fmt::format("{}: {} windows of {:.3g} s, {} GPU{}, {:.1f} s\n\n", cost.source, cost.windows,
                                cost.window_s, cost.gpus, cost.gpus == 1 ? "" : "s", cost.elapsed_s);
  const double windows = std::max(cost.windows, 1);
  const auto us = [](std::optional<double> v) { return v ? fmt::format("{:.2f}", *v) : std::string("-"); };
  const auto percent = [](std::optional<double> v) { return v ? fmt::format("{:.1f} %", *v * 100) : std::string("-"); };
  out += fmt::format("{:<42} {:>8} {:>10} {:>12} {:>12} {:>12} {:>12} {:>10}\n", "call", "calls", "per window",
                     "wall us/call", "cpu us/call", "user us/call", "sys us/call", "of process");
  for (const CallTotals& t : cost.calls) {
    out += fmt::format("{:<42} {:>8} {:>10.2f} {:>12.2f} {:>12.2f} {:>12} {:>12} {:>10}\n", t.call, t.calls,
                       static_cast<double>(t.calls) / windows, PerCallUs(t.wall_s, t.calls),
                       PerCallUs(t.cpu_s, t.calls),
                       us(t.user_s ? std::optional(PerCallUs(*t.user_s, t.calls)) : std::nullopt),
                       us(t.system_s ? std::optional(PerCallUs(*t.system_s, t.calls)) : std::nullopt),
                       percent(Share(t.cpu_s, cost)));
  }
  const Sums all = Sum(cost);
  out += fmt::format("{:<42} {:>8} {:>10.2f} {:>12} {:>12} {:>12} {:>12} {:>10}\n", "all calls", all.calls,
                     all.calls / windows, "", "", "", "", percent(Share(all.cpu_s, cost)));
  out += fmt::format("\nper window: {:.2f} library calls, {:.1f} us wall and {:.1f} us CPU inside them",
                     all.calls / windows, all.wall_s * 1e6 / windows, all.cpu_s * 1e6 / windows);
  if (cost.process_cpu_s) {
    out += fmt::format("; the process: {:.1f} us CPU ({:.3f} % of one core)", *cost.process_cpu_s * 1e6 / windows,
                       cost.elapsed_s > 0 ? *cost.process_cpu_s / cost.elapsed_s * 100 : 0.0);
  }
  out += "\n";
  return out;
}

std::string FormatSourceCostJson(const SourceCost& cost) {
  using nlohmann::json;
  const double windows = std::max(cost.windows, 1);
  const auto optional = [](std::optional<double> v) { return v ? json(*v) : json(nullptr); };
  json calls = json::array();
  for (const CallTotals& t : cost.calls) {
    calls.push_back(
        {{"call", t.call},
         {"calls", t.calls},
         {"per_window", static_cast<double>(t.calls) / windows},
         {"wall_us_per_call", PerCallUs(t.wall_s, t.calls)},
         {"cpu_us_per_call", PerCallUs(t.cpu_s, t.calls)},
         {"user_us_per_call", optional(t.user_s ? std::optional(PerCallUs(*t.user_s, t.calls)) : std::nullopt)},
         {"system_us_per_call", optional(t.system_s ? std::optional(PerCallUs(*t.system_s, t.calls)) : std::nullopt)},
         {"process_cpu_share", optional(Share(t.cpu_s, cost))}});
  }
  const Sums all = Sum(cost);
  // Built as json values, not optionals: GCC 13 misreads the optionals here
  // as maybe-uninitialized.
  json process_us = nullptr, core_percent = nullptr;
  if (cost.process_cpu_s) {
    process_us = *cost.process_cpu_s * 1e6 / windows;
    if (cost.elapsed_s > 0) core_percent = *cost.process_cpu_s / cost.elapsed_s * 100;
  }
  const json out = {{"source", cost.source},
                    {"window_s", cost.window_s},
                    {"windows", cost.windows},
                    {"gpus", cost.gpus},
                    {"elapsed_s", cost.elapsed_s},
                    {"process_cpu_s", optional(cost.process_cpu_s)},
                    {"per_window",
                     {{"calls", all.calls / windows},
                      {"wall_us", all.wall_s * 1e6 / windows},
                      {"cpu_us", all.cpu_s * 1e6 / windows},
                      {"process_cpu_us", process_us},
                      {"core_percent", core_percent}}},
                    {"calls", calls}};
  return out.dump(2) + "\n";
}

}  // namespace ofu::sources
