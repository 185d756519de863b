// The agent's sampling loop, one window at a time:
//
//   source.Next() → WindowEvaluator (OFU, busy) → attribution (GPU → job)
//                 → every sink (metrics, history store)
//
// Attribution runs every `attribution_interval_s`, not every window (a /proc
// scan at 10 Hz would cost more than the sampling); between passes the last
// answer stands. A failing sink is reported through `log`, as "sink NAME:
// error", and the others are still fed: a full disk must not stop /metrics.
// Sinks that may block come wrapped in an AsyncSink (sinks/async_sink.h). A note or a sink's error is
// logged when it first appears, not again while it repeats window after
// window; a sink that works again after failing is logged as recovered.
//
// Ownership: the Agent borrows everything; all must outlive it.
// Thread-safety: one thread calls Step().
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/agent/window_evaluator.h"
#include "ofu/attribution/attributor.h"
#include "ofu/core/result.h"
#include "ofu/sinks/sink.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::agent {

using Log = std::function<void(std::string_view message)>;

class Agent {
 public:
  Agent(sources::Source& source, WindowEvaluator& evaluator, attribution::Attributor* attributor,
        std::vector<sinks::Sink*> sinks, sources::Clock& clock, double attribution_interval_s, Log log);

  // One window. Returns false when a finite source (a replay) has ended;
  // an Error only when the source can never continue.
  Result<bool> Step();

  uint64_t windows() const { return windows_; }

 private:
  void Attribute(sinks::WindowBatch& batch, const sources::Snapshot& snapshot);
  // Logs the notes not in `last`, then makes them the new `last`.
  void LogNew(std::vector<std::string> notes, std::set<std::string>& last);

  sources::Source& source_;
  WindowEvaluator& evaluator_;
  attribution::Attributor* attributor_;
  std::vector<sinks::Sink*> sinks_;
  sources::Clock& clock_;
  double attribution_interval_s_;
  Log log_;
  std::optional<double> last_attribution_s_;
  std::map<std::string, attribution::JobInfo> jobs_;
  std::set<std::string> last_source_notes_;       // of the last window
  std::set<std::string> last_attribution_notes_;  // of the last attribution pass
  std::vector<std::string> sink_errors_;          // per sink: its last error, "" when fine
  uint64_t windows_ = 0;
};

}  // namespace ofu::agent
