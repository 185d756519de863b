// read_text_file FILE
//
// Reads FILE with the ofu text reader (the istream variant, straight from
// disk) and prints one JSON line:
//   {"file":..., "bytes":N, "samples":N, "seconds":S, "mb_per_s":X, "samples_per_s":Y}
// bench/compare_promtool.sh times it against `promtool check metrics`.
// Exit status: 0 read, 1 usage or I/O error, 2 the file is malformed.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

#include "ofu/formats/prometheus_text.h"

namespace {

class CountingVisitor : public ofu::formats::TextVisitor {
 public:
  void OnSample(const ofu::formats::TextSample& sample) override { value_sum += sample.value; }
  double value_sum = 0;
};

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: read_text_file FILE\n");
    return 1;
  }
  const std::string path = argv[1];
  const auto start = std::chrono::steady_clock::now();
  std::ifstream in(path, std::ios::binary);
  CountingVisitor visitor;
  const auto result = ofu::formats::ReadPrometheusText(in, path, visitor);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (!result.ok()) {
    std::fprintf(stderr, "read_text_file: %s\n", result.error().message.c_str());
    return result.error().code == ofu::ErrorCode::kMalformedInput ? 2 : 1;
  }
  const double seconds = elapsed.count();
  std::printf(
      "{\"file\":%s, \"bytes\":%zu, \"samples\":%zu, \"seconds\":%.6f, \"mb_per_s\":%.1f, "
      "\"samples_per_s\":%.0f}\n",
      JsonString(path).c_str(), result->bytes, result->samples, seconds,
      static_cast<double>(result->bytes) / 1e6 / seconds, static_cast<double>(result->samples) / seconds);
  return 0;
}
