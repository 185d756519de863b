#include "ofu/agent/queued_sink.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace ofu::agent {

std::size_t QueuedWindows(double window_s) {
  if (!(window_s > 0)) return kMinQueuedWindows;
  return std::max(kMinQueuedWindows, static_cast<std::size_t>(std::ceil(kQueuedSeconds / window_s)));
}

std::unique_ptr<sinks::AsyncSink> QueueSink(std::unique_ptr<sinks::Sink> sink, sinks::MetricsState& metrics,
                                            double window_s) {
  std::string name(sink->name());
  metrics.AddQueuedSink(name);
  sinks::AsyncSinkOptions options;
  options.capacity = QueuedWindows(window_s);
  options.on_drop = [&metrics, name] { metrics.CountDroppedWindow(name); };
  return std::make_unique<sinks::AsyncSink>(std::move(sink), std::move(options));
}

}  // namespace ofu::agent
