#include "ofu/history/prometheus_increase.h"

#include <cmath>

#include <fmt/format.h>

namespace ofu::history {

std::string PromMs(double seconds) { return fmt::format("{}ms", static_cast<long long>(std::llround(seconds * 1000))); }

std::string PromIncreaseOver(const std::string& x, double window_s, double max_gap_s) {
  const std::string p = fmt::format("last_over_time({}[{}] offset {})", x, PromMs(max_gap_s), PromMs(window_s));
  return fmt::format("(({x} - {p}) >= 0 or (({x} + 0) and {p}))", fmt::arg("x", x), fmt::arg("p", p));
}

std::string PromJobIn(const std::string& matchers, double window_s) {
  return fmt::format("max by (uuid, job_id) (last_over_time(ofu_gpu_job_info{{{}}}[{}]))", matchers,
                     PromMs(window_s - 0.001));
}

std::string PromSplitByJob(const std::string& d, const std::string& job_in, bool only_jobs) {
  const std::string with_job = fmt::format("{} * on(uuid) group_left(job_id) {}", d, job_in);
  if (only_jobs) return with_job;
  return fmt::format("({}) or ({} unless on(uuid) {})", with_job, d, job_in);
}

}  // namespace ofu::history
