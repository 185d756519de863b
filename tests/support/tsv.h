// Splitting the tab-separated rows of the test data tables (kernel names).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ofu::testing {

// The cells of one line, split at every tab; an empty cell stays empty.
inline std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t start = 0;
  while (true) {
    const std::size_t tab = line.find('\t', start);
    cells.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return cells;
    start = tab + 1;
  }
}

}  // namespace ofu::testing
