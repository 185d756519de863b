// libFuzzer entry for the Nsight Systems SQLite export reader.
//
// The input is a database image; SQLite itself rejects most mutations as
// corrupt, and what gets through exercises the reader's handling of odd
// schemas, NULLs, dangling string ids and unordered ranges. Every string the
// result holds is read so that AddressSanitizer sees a bad one.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ofu/formats/nsys_sqlite.h"

namespace {

std::size_t Touch(const std::string& text) {
  std::size_t sum = text.size();
  for (const char c : text) sum += static_cast<unsigned char>(c);
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto result = ofu::formats::ParseNsysSqliteImage(bytes, "fuzz.sqlite");
  std::size_t checksum = 0;
  if (result.ok()) {
    const ofu::formats::KernelTrace& trace = *result;
    for (const std::string& name : trace.kernel_names) checksum += Touch(name);
    for (const auto& kernel : trace.kernels) {
      checksum += Touch(trace.NameOf(kernel));  // name_id must be in range
      if (kernel.op) checksum += Touch(trace.ops.at(*kernel.op).name);
    }
    for (const auto& op : trace.ops) {
      for (const auto& dims : op.input_dims) checksum += dims.size();
    }
    for (const auto& device : trace.devices) checksum += Touch(device.name);
    for (const std::string& note : trace.notes) checksum += Touch(note);
  } else {
    checksum += Touch(result.error().message);
  }
  volatile std::size_t sink = checksum;
  static_cast<void>(sink);
  return 0;
}
