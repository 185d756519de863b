// How a command prints its result: the values --format takes. The flag's
// text is parsed into this once per command (apps/ofu/format_flag.h) and the
// writers are chosen by the value, never by comparing the text again.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace ofu::render {

enum class OutputFormat {
  kTable,  // "table": aligned columns for people
  kText,   // "text": a line for people (`ofu record`'s summary)
  kJson,   // "json": for programs, the documented contract (docs/cli.md)
  kCsv,    // "csv": for programs, one row per item
};

// The spelling --format takes for each value, in the enum's order.
inline constexpr std::array<std::string_view, 4> kOutputFormatNames = {"table", "text", "json", "csv"};

constexpr std::string_view OutputFormatName(OutputFormat format) {
  return kOutputFormatNames[static_cast<std::size_t>(format)];
}

// The value spelled `name`; nullopt for any other text.
constexpr std::optional<OutputFormat> OutputFormatOfName(std::string_view name) {
  for (std::size_t i = 0; i < kOutputFormatNames.size(); ++i) {
    if (kOutputFormatNames[i] == name) return static_cast<OutputFormat>(i);
  }
  return std::nullopt;
}

}  // namespace ofu::render
