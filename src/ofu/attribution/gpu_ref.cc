#include "ofu/attribution/gpu_ref.h"

#include <charconv>

namespace ofu::attribution {

GpuRef ToGpuRef(const sources::GpuReading& reading) {
  GpuRef gpu;
  gpu.uuid = reading.identity.uuid;
  const std::string& text = reading.identity.gpu_index;
  int index = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec == std::errc() && end == text.data() + text.size() && index >= 0) gpu.index = index;
  gpu.pids.reserve(reading.processes.size());
  for (const sources::GpuProcess& process : reading.processes) gpu.pids.push_back(process.pid);
  return gpu;
}

}  // namespace ofu::attribution
