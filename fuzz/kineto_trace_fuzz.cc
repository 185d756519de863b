// libFuzzer entry for the PyTorch profiler (Kineto) trace reader.
//
// The input is parsed whole and, when it is large enough to cross a chunk
// boundary, again with a tiny chunk size: both must succeed or fail alike,
// which checks that the scanner's refills never change what it sees. Every
// kept string is read, so that AddressSanitizer sees any that points into a
// buffer that has moved.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ofu/formats/kineto_trace.h"

namespace {

std::size_t Checksum(const ofu::formats::KernelTrace& trace) {
  std::size_t sum = trace.kernels.size() + trace.ops.size() + trace.devices.size();
  for (const std::string& name : trace.kernel_names) {
    for (const char c : name) sum += static_cast<unsigned char>(c);
  }
  for (const ofu::formats::TraceKernel& kernel : trace.kernels) {
    sum += trace.NameOf(kernel).size() + static_cast<std::size_t>(kernel.link);
    if (kernel.op) sum += trace.ops.at(*kernel.op).name.size();
  }
  for (const ofu::formats::FrameworkOp& op : trace.ops) {
    for (const auto& dims : op.input_dims) sum += dims.size();
    for (const auto& type : op.input_types) sum += type.size();
  }
  for (const std::string& note : trace.notes) sum += note.size();
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto whole = ofu::formats::ParseKinetoTrace(text, "fuzz.json");
  const auto chunked = ofu::formats::ParseKinetoTrace(text, "fuzz.json", ofu::formats::KinetoReadTuning{3});
  if (whole.ok() != chunked.ok()) std::abort();
  if (!whole.ok() && whole.error().message != chunked.error().message) std::abort();
  if (whole.ok() && Checksum(*whole) != Checksum(*chunked)) std::abort();
  volatile std::size_t sink = whole.ok() ? Checksum(*whole) : whole.error().message.size();
  static_cast<void>(sink);
  return 0;
}
