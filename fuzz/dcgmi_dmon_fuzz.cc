// libFuzzer entry for the `dcgmi dmon` table reader (formats/dcgmi_dmon.h).
//
// The visitor reads every byte of every view and every value it is given, so
// that AddressSanitizer sees a view that points outside the text or a span
// longer than the reader's storage. The format sniffer runs on the same bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ofu/formats/dcgmi_dmon.h"

namespace {

class TouchEverything : public ofu::formats::DmonVisitor {
 public:
  void OnHeader(const ofu::formats::DmonHeader& header) override {
    for (std::string_view column : header.columns) Touch(column);
    checksum_ += header.line;
  }
  void OnRow(const ofu::formats::DmonRow& row) override {
    Touch(row.entity);
    Touch(row.id);
    for (const auto& value : row.values) checksum_ += value ? (*value > 0 ? 2 : 1) : 0;
    checksum_ += row.line + static_cast<std::size_t>(row.kind);
  }
  void OnStrayLine(const ofu::formats::DmonStrayLine& line) override {
    Touch(line.text);
    checksum_ += line.line;
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
  TouchEverything visitor;
  const auto result = ofu::formats::ReadDcgmiDmon(text, "fuzz.txt", visitor);
  std::size_t checksum = visitor.checksum() + (ofu::formats::LooksLikeDcgmiDmon(text) ? 1 : 0);
  if (result.ok()) checksum += result->rows + result->stray_lines + (result->delay_ms ? 1 : 0);
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
