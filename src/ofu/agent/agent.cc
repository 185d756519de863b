#include "ofu/agent/agent.h"

#include <fmt/format.h>

#include "ofu/attribution/gpu_ref.h"

namespace ofu::agent {

Agent::Agent(sources::Source& source, WindowEvaluator& evaluator, attribution::Attributor* attributor,
             std::vector<sinks::Sink*> sinks, sources::Clock& clock, double attribution_interval_s, Log log)
    : source_(source),
      evaluator_(evaluator),
      attributor_(attributor),
      sinks_(std::move(sinks)),
      clock_(clock),
      attribution_interval_s_(attribution_interval_s),
      log_(std::move(log)),
      sink_errors_(sinks_.size()) {}

void Agent::Attribute(sinks::WindowBatch& batch, const sources::Snapshot& snapshot) {
  if (attributor_ == nullptr) return;
  const double now = clock_.NowS();
  if (!last_attribution_s_ || now - *last_attribution_s_ >= attribution_interval_s_) {
    last_attribution_s_ = now;
    std::vector<attribution::GpuRef> gpus;
    for (size_t i = 0; i < snapshot.gpus.size(); ++i) {
      attribution::GpuRef ref = attribution::ToGpuRef(snapshot.gpus[i]);
      ref.uuid = batch.gpus[i].key();  // jobs are keyed like every sink: per device (MIG instances apart)
      gpus.push_back(std::move(ref));
    }
    auto attribution = attributor_->Attribute(gpus);
    std::vector<std::string> notes;
    if (attribution.ok()) {
      jobs_ = std::move(attribution->jobs);
      notes = std::move(attribution->notes);
    } else {
      // Keep the last answer: a flaky kubelet socket must not blank every job.
      notes.push_back(fmt::format("attribution: {}", attribution.error().message));
    }
    LogNew(std::move(notes), last_attribution_notes_);
  }
  batch.jobs = jobs_;
}

void Agent::LogNew(std::vector<std::string> notes, std::set<std::string>& last) {
  std::set<std::string> now(std::make_move_iterator(notes.begin()), std::make_move_iterator(notes.end()));
  for (const std::string& note : now) {
    if (last.count(note) == 0) log_(note);
  }
  last = std::move(now);
}

Result<bool> Agent::Step() {
  OFU_ASSIGN_OR_RETURN(auto snapshot, source_.Next());
  if (!snapshot) return false;
  sinks::WindowBatch batch = evaluator_.Evaluate(*snapshot);
  LogNew(batch.notes, last_source_notes_);
  Attribute(batch, *snapshot);
  for (size_t i = 0; i < sinks_.size(); ++i) {
    const Status status = sinks_[i]->Consume(batch);
    const std::string error = status.ok() ? "" : fmt::format("sink {}: {}", sinks_[i]->name(), status.error().message);
    if (error == sink_errors_[i]) continue;
    if (!error.empty()) {
      log_(error);
    } else {
      log_(fmt::format("recovered: {}", sink_errors_[i]));
    }
    sink_errors_[i] = error;
  }
  ++windows_;
  return true;
}

}  // namespace ofu::agent
