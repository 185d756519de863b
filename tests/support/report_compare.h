// Two reports' JSON compared number by number, for a report read another
// way that must agree to rounding (a store's hourly rollups instead of its
// windows: history/history_rollup.h).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ofu::testing {

// Every value of `a` and `b` agrees: percentiles (p10, p50, p90) within
// half a Summarizer histogram bin, other numbers to 1e-9 relative, the rest
// exactly. The rollup counts (which only say how the report was read) are
// not compared. `where` names the value in a failure.
inline void ExpectSameReport(const nlohmann::json& a, const nlohmann::json& b, const std::string& where) {
  ASSERT_EQ(a.type(), b.type()) << where;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (const auto& [key, value] : a.items()) {
      if (key == "rollups" || key == "windows_in_rollups") continue;
      ASSERT_TRUE(b.contains(key)) << where << "." << key;
      ExpectSameReport(value, b.at(key), where + "." + key);
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i) ExpectSameReport(a[i], b[i], fmt::format("{}[{}]", where, i));
  } else if (a.is_number()) {
    const bool percentile = where.ends_with(".p10") || where.ends_with(".p50") || where.ends_with(".p90");
    const double x = a.get<double>(), y = b.get<double>();
    EXPECT_NEAR(x, y, percentile ? 0.5 / 1024 + 1e-12 : 1e-9 * std::max(1.0, std::abs(x))) << where;
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

}  // namespace ofu::testing
