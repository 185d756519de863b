#include "ofu/render/sources_output.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ofu::render {
namespace {

using sources::CallTotals;
using sources::SourceCost;
using sources::SourceProbe;
using sources::SourcesListing;

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

std::string FormatSourcesTable(const SourcesListing& listing) {
  std::string out;
  for (const SourceProbe& probe : listing.probes) {
    out += fmt::format("{:<7} {:<11} {}\n", probe.name, probe.available ? "available" : "unavailable", probe.detail);
  }
  if (!listing.any_auto_detected) {
    out +=
        "\nNo live source on this machine: ofu can still replay recordings "
        "(ofu report --input FILE, ofu top --source replay:FILE).\n";
  }
  return out;
}

std::string FormatSourcesJson(const SourcesListing& listing) {
  auto out = nlohmann::ordered_json::array();
  for (const SourceProbe& probe : listing.probes) {
    out.push_back({{"source", probe.name}, {"available", probe.available}, {"detail", probe.detail}});
  }
  return out.dump(2) + "\n";
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

}  // namespace ofu::render
