#include "ofu/gemm/clock_probe.h"

#include <algorithm>
#include <map>

#include "ofu/core/ofu_math.h"

namespace ofu::gemm {
namespace {

// Each SM's earliest record in a launch.
std::map<int, ProbeRecord> EarliestBySm(const ProbeLaunch& launch) {
  std::map<int, ProbeRecord> by_sm;
  for (const ProbeRecord& r : launch) {
    auto [it, inserted] = by_sm.try_emplace(r.sm, r);
    if (!inserted && r.global_ns < it->second.global_ns) it->second = r;
  }
  return by_sm;
}

std::int64_t EarliestNs(const ProbeLaunch& launch) {
  return std::min_element(launch.begin(), launch.end(),
                          [](const ProbeRecord& a, const ProbeRecord& b) { return a.global_ns < b.global_ns; })
      ->global_ns;
}

}  // namespace

Result<SpanClock> ClockBetween(const ProbeLaunch& before, const ProbeLaunch& after) {
  if (before.empty() || after.empty()) return Error::NoData("a probe launch has no records");
  const std::map<int, ProbeRecord> first = EarliestBySm(before);
  const std::map<int, ProbeRecord> last = EarliestBySm(after);
  std::vector<double> mhz;
  bool any_common = false;
  for (const auto& [sm, a] : first) {
    const auto b = last.find(sm);
    if (b == last.end()) continue;
    any_common = true;
    const std::int64_t cycles = b->second.cycles - a.cycles;
    const std::int64_t ns = b->second.global_ns - a.global_ns;
    if (cycles <= 0 || ns <= 0) continue;
    mhz.push_back(static_cast<double>(cycles) / static_cast<double>(ns) * 1000.0);
  }
  if (!any_common) return Error::NoData("no SM ran a block of both probe launches");
  if (mhz.empty()) return Error::NoData("no SM's cycle counter and global timer both advanced between the launches");
  SpanClock span;
  span.start_ns = static_cast<double>(EarliestNs(before));
  span.end_ns = static_cast<double>(EarliestNs(after));
  span.sms = static_cast<int>(mhz.size());
  span.median_mhz = Percentile(mhz, 0.5);
  span.min_mhz = *std::min_element(mhz.begin(), mhz.end());
  span.max_mhz = *std::max_element(mhz.begin(), mhz.end());
  return span;
}

}  // namespace ofu::gemm
