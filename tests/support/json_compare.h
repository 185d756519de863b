// Two JSON answers of ofu compared field by field, numbers to a relative
// tolerance, for tests that ask two servers (or two set-ups) the same
// question: the differences, each named by its path, so that a failure says
// where the answers part.
#pragma once

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

}  // namespace ofu::testing
