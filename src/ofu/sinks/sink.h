// Where evaluated windows go: the Prometheus exposition, the embedded
// history store. The agent hands every window batch to each sink in turn.
//
// A sink that fails (a full disk) returns the error; the agent logs it with
// the sink's name and keeps feeding the other sinks, so metrics keep being
// served.
//
// Blocking. Consume runs on the agent's sampling thread: a sink that may
// block there (on a disk, a network) stalls sampling, and must be put
// behind an AsyncSink (async_sink.h), which gives it a bounded queue and a
// thread of its own. A sink that only updates memory (the metrics state)
// stays synchronous. A sink has no Flush or Close of its own: whatever it
// holds is written by the time its destructor returns.
//
// Thread-safety: Consume is called from one thread at a time (the agent's
// sampling thread, or an AsyncSink's worker); a sink that is also read from
// other threads (the HTTP exporter) says how.
#pragma once

#include <string_view>

#include "ofu/core/result.h"
#include "ofu/sinks/window_batch.h"

namespace ofu::sinks {

class Sink {
 public:
  virtual ~Sink() = default;
  // A short stable name ("metrics", "store"): in the agent's log lines and
  // the {sink} label of ofu_sink_dropped_windows_total. Valid while the sink lives.
  virtual std::string_view name() const = 0;
  virtual Status Consume(const WindowBatch& batch) = 0;
};

}  // namespace ofu::sinks
