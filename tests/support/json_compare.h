// Two JSON answers of ofu compared field by field, numbers to a relative
// tolerance, for tests that ask two servers (or two set-ups) the same
// question: the differences, each named by its path, so that a failure says
// where the answers part.
#pragma once

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"

namespace ofu::testing {

// Appends to `out` every difference between `a` and `b` below `where`,
// skipping the keys in `ignored` at any depth ("source" and "path" name
// the server asked, not its answer).
inline void CompareJson(const nlohmann::json& a, const nlohmann::json& b, const std::string& where,
                        std::vector<std::string>& out, double relative = 1e-8,
                        const std::set<std::string>& ignored = {"source", "path"}) {
  if (a.is_object() && b.is_object()) {
    std::size_t compared = 0;
    for (const auto& [key, value] : a.items()) {
      if (ignored.contains(key)) continue;
      ++compared;
      if (!b.contains(key)) {
        out.push_back(where + "." + key + " missing");
        continue;
      }
      CompareJson(value, b[key], where + "." + key, out, relative, ignored);
    }
    std::size_t other = 0;
    for (const auto& [key, value] : b.items()) other += ignored.contains(key) ? 0 : 1;
    if (compared != other) out.push_back(where + ": different keys");
  } else if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) {
      out.push_back(fmt::format("{}: {} vs {} entries", where, a.size(), b.size()));
      return;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
      CompareJson(a[i], b[i], fmt::format("{}[{}]", where, i), out, relative, ignored);
    }
  } else if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (std::abs(x - y) > relative * std::max(std::abs(x), std::abs(y)) + 1e-12) {
      out.push_back(fmt::format("{}: {} vs {}", where, x, y));
    }
  } else if (a != b) {
    out.push_back(fmt::format("{}: {} vs {}", where, a.dump().substr(0, 120), b.dump().substr(0, 120)));
  }
}

// `ofu ARGS --format json` run in `dir` (OFU_BINARY): its answer parsed,
// discarded (is_discarded()) when it is not JSON; a test failure, naming
// the command and what it printed on stderr, when it exits other than
// `expected_exit`.
inline nlohmann::json OfuJson(const std::filesystem::path& dir, const std::string& args, int expected_exit = 0) {
  auto result = RunShell(fmt::format("'{}' {} --format json", OFU_BINARY, args), dir);
  EXPECT_EQ(result.exit_code, expected_exit) << args << "\n" << result.err;
  return nlohmann::json::parse(result.out, nullptr, false);
}

}  // namespace ofu::testing
