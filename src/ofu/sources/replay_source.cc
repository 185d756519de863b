#include "ofu/sources/replay_source.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "ofu/sources/replay.h"

namespace ofu::sources {
namespace {

// Pacing never waits longer than this, so a recording with a long gap does
// not freeze `ofu top`.
constexpr double kMaxPaceS = 10;

class ReplaySource final : public Source {
 public:
  ReplaySource(std::string path, Recording recording, const SourceOptions& options, Clock& clock)
      : path_(std::move(path)),
        recording_(std::move(recording)),
        options_(options),
        clock_(clock),
        next_index_(recording_.gpus.size(), 0) {}

  std::string_view kind() const override { return "replay"; }

  std::string Describe() const override {
    return fmt::format("replay of {} ({} GPUs{})", path_, recording_.gpus.size(),
                       recording_.synthetic.value_or(false) ? ", SYNTHETIC recording" : "");
  }

  bool live() const override { return false; }

  Result<std::optional<Snapshot>> Next() override {
    const std::optional<double> time_s = EarliestPending();
    if (!time_s) return std::optional<Snapshot>();

    Snapshot snapshot;
    snapshot.time_s = *time_s;
    snapshot.synthetic = recording_.synthetic;
    snapshot.window_s = previous_time_s_ ? *time_s - *previous_time_s_ : TimeToFollowing(*time_s);
    if (options_.pace_replay && previous_time_s_) clock_.SleepS(std::min(snapshot.window_s, kMaxPaceS));
    previous_time_s_ = *time_s;

    for (std::size_t g = 0; g < recording_.gpus.size(); ++g) {
      const GpuRecording& gpu = recording_.gpus[g];
      GpuReading reading;
      reading.identity = gpu.identity;
      reading.sample.time_s = *time_s;
      std::size_t& i = next_index_[g];
      if (i < gpu.samples.size() && gpu.samples[i].time_s == *time_s) {
        reading.sample = gpu.samples[i++];
        if (reading.sample.sm_clock_mhz) {
          reading.clock_basis = ClockBasis::kPointReading;
          reading.clock_readings = 1;
        }
      }
      snapshot.gpus.push_back(std::move(reading));
    }
    return std::optional<Snapshot>(std::move(snapshot));
  }

 private:
  std::optional<double> EarliestPending() const {
    std::optional<double> earliest;
    for (std::size_t g = 0; g < recording_.gpus.size(); ++g) {
      const auto& samples = recording_.gpus[g].samples;
      if (next_index_[g] < samples.size()) {
        const double t = samples[next_index_[g]].time_s;
        if (!earliest || t < *earliest) earliest = t;
      }
    }
    return earliest;
  }

  // For the first snapshot: the spacing to the next sample time, or the
  // recording's assumed interval when there is only one.
  double TimeToFollowing(double time_s) const {
    double following = std::numeric_limits<double>::infinity();
    for (const auto& gpu : recording_.gpus) {
      for (const auto& sample : gpu.samples) {
        if (sample.time_s > time_s) {
          following = std::min(following, sample.time_s);
          break;
        }
      }
    }
    if (following != std::numeric_limits<double>::infinity()) return following - time_s;
    return recording_.assumed_interval_s > 0 ? recording_.assumed_interval_s : options_.window_s;
  }

  std::string path_;
  Recording recording_;
  SourceOptions options_;
  Clock& clock_;
  std::vector<std::size_t> next_index_;
  std::optional<double> previous_time_s_;
};

}  // namespace

Result<std::unique_ptr<Source>> OpenReplaySource(const std::string& path, const SourceOptions& options, Clock& clock) {
  OFU_ASSIGN_OR_RETURN(auto recording, ReadRecordingFile(path));
  return std::unique_ptr<Source>(new ReplaySource(path, std::move(recording), options, clock));
}

}  // namespace ofu::sources
