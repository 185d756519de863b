// Where evaluated windows go: the Prometheus exposition, the embedded
// history store. The agent hands every window batch to each sink in turn.
//
// A sink that fails (a full disk) returns the error; the agent logs it and
// keeps feeding the other sinks, so metrics keep being served.
//
// Thread-safety: Consume is called from the agent's sampling thread only;
// a sink that is also read from other threads (the HTTP exporter) says how.
#pragma once

#include "ofu/core/result.h"
#include "ofu/sinks/window_batch.h"

namespace ofu::sinks {

class Sink {
 public:
  virtual ~Sink() = default;
  virtual Status Consume(const WindowBatch& batch) = 0;
};

}  // namespace ofu::sinks
