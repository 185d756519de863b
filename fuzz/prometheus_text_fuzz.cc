// libFuzzer entry for the Prometheus / OpenMetrics text reader.
//
// The visitor reads every byte of every view it is given, so that
// AddressSanitizer sees a view that points outside the reader's buffers or
// into a scratch buffer that has moved. Each input is read three times: as
// Prometheus would (a value that is not a number stops the read), with such
// samples going to OnNonNumericSample, and as the replay reads it (those,
// and lines that cannot be a sample going to OnStrayLine).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "ofu/formats/prometheus_text.h"

namespace {

class TouchEverything : public ofu::formats::TextVisitor {
 public:
  void OnSample(const ofu::formats::TextSample& sample) override {
    Touch(sample.name);
    for (const ofu::formats::Label& label : sample.labels) {
      Touch(label.name);
      Touch(label.value);
    }
    checksum_ += sample.line + (sample.timestamp_s ? 1 : 0) + (sample.value > 0 ? 1 : 0);
  }

  void OnNonNumericSample(const ofu::formats::NonNumericSample& sample) override {
    Touch(sample.name);
    for (const ofu::formats::Label& label : sample.labels) {
      Touch(label.name);
      Touch(label.value);
    }
    Touch(sample.value_text);
    checksum_ += sample.line + (sample.out_of_range ? 1 : 0);
  }

  void OnStrayLine(const ofu::formats::StrayLine& line) override {
    Touch(line.text);
    checksum_ += line.line;
  }

  void OnMetadata(const ofu::formats::TextMetadata& metadata) override {
    Touch(metadata.family);
    Touch(metadata.text);
    checksum_ += metadata.line + static_cast<std::size_t>(metadata.kind);
  }

  std::size_t checksum() const { return checksum_; }

 private:
  void Touch(std::string_view text) {
    checksum_ += text.size();
    for (const char c : text) checksum_ += static_cast<unsigned char>(c);
  }

  std::size_t checksum_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t checksum = 0;
  using ofu::formats::NonNumericValues;
  using ofu::formats::StrayLines;
  const std::pair<NonNumericValues, StrayLines> modes[] = {{NonNumericValues::kError, StrayLines::kError},
                                                           {NonNumericValues::kReport, StrayLines::kError},
                                                           {NonNumericValues::kReport, StrayLines::kSkip}};
  for (const auto& [values, stray] : modes) {
    ofu::formats::ParseOptions options;
    options.non_numeric_values = values;
    options.stray_lines = stray;
    TouchEverything visitor;
    const auto result = ofu::formats::ReadPrometheusText(text, "fuzz.prom", visitor, options);
    checksum += visitor.checksum() +
                (result.ok() ? result->samples + result->non_numeric_samples + result->stray_lines : 0);
  }
  // Keeps the checksum (and so every read) observable.
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
