#include "record_command.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "format_flag.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/stop_signal.h"
#include "ofu/render/record_output.h"
#include "ofu/sources/recording_writer.h"

namespace ofu::cli {
namespace {

// A stop is noticed within this long while a live source waits for its window.
constexpr double kSleepSliceS = 0.1;

constexpr const char* kRecordHelp = R"(Record counters from a source into an OpenMetrics file.

The file uses dcgm-exporter's metric names and labels, with a timestamp on
every sample, so that 'ofu report --input FILE', 'ofu top --source
replay:FILE' and 'promtool tsdb create-blocks-from openmetrics FILE DIR' all
read it. It is written when recording ends (through a temporary file and a
rename, so it is whole or absent): after --duration, at the end of a replay,
or on SIGINT/SIGTERM, which stops early and still writes what was recorded.

Examples:
  ofu record --duration 5m --out run.om
  ofu record --source dcgm --window 10 --duration 1h --out night.om --description "nightly GEMM sweep"

Exit status: 0 ok (also when stopped early by a signal), 1 usage, 2
unreadable recording or unwritable output, 4 no window recorded, 5 no source
could be opened. See docs/cli.md.)";

// The recording loop's clock: system time, but a wait ends early when a
// signal asks to stop, so Ctrl-C does not wait out a long window.
class StoppableClock final : public sources::Clock {
 public:
  double NowS() override { return system_.NowS(); }
  void SleepS(double seconds) override {
    while (seconds > 0 && !StopRequested()) {
      const double slice = std::min(seconds, kSleepSliceS);
      system_.SleepS(slice);
      seconds -= slice;
    }
  }

 private:
  sources::SystemClock system_;
};

}  // namespace

Result<double> ParseDuration(std::string_view text) {
  const auto bad = [&] {
    return Error::InvalidArgument(
        "--duration '{}' is not a duration: give seconds (90) or a number with s, m or h "
        "(30s, 5m, 1.5h), more than 0",
        text);
  };
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [rest, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || rest == text.data()) return bad();
  const std::string_view suffix(rest, static_cast<std::size_t>(end - rest));
  double unit = 0;
  if (suffix.empty() || suffix == "s") unit = 1;
  if (suffix == "m") unit = 60;
  if (suffix == "h") unit = 3600;
  if (unit == 0 || !(value > 0) || !(value * unit < 1e9)) return bad();
  return value * unit;
}

void AddRecordFlags(CLI::App& cmd, RecordArgs& args) {
  cmd.description(kRecordHelp);
  AddSourceFlags(cmd, args.source);
  cmd.add_option("--duration,-d", args.duration, "How long to record: seconds, or 30s, 5m, 1h")->required();
  cmd.add_option("--out,-o", args.out, "The OpenMetrics file to write (replaced if it exists)")->required();
  cmd.add_option("--description", args.description,
                 "What this recording is; stored in its ofu_recording_info line (default: the source)");
  AddFormatFlag(cmd, args.format, {render::OutputFormat::kText, render::OutputFormat::kJson},
                "Final summary: text (one line on stderr) or json (on stdout)");
}

Result<int> RunRecord(const RecordArgs& args) {
  OFU_ASSIGN_OR_RETURN(auto duration, ParseDuration(args.duration));

  InstallStopSignals();

  StoppableClock clock;
  SourceFlags flags = args.source;
  flags.options.pace_replay = false;  // a replay is copied as fast as it reads
  OFU_ASSIGN_OR_RETURN(auto source, OpenSourceFromFlags(flags, clock));
  const std::string description = (source)->Describe();

  sources::RecordingWriter writer;
  render::RecordSummary summary;
  std::optional<Error> failure;
  const bool progress = ::isatty(STDERR_FILENO) == 1;
  auto last_progress = std::chrono::steady_clock::now();
  const auto started = last_progress;
  // The tolerance keeps 60 windows of 1 s from needing a 61st to cover 60 s.
  while (!StopRequested() && summary.seconds + 1e-9 < duration) {
    auto next = (source)->Next();
    if (!next.ok()) {
      failure = next.error();
      break;
    }
    if (!next->has_value()) {
      summary.source_ended = true;
      break;
    }
    const sources::Snapshot& snapshot = **next;
    writer.Add(snapshot);
    ++summary.windows;
    summary.gpus = std::max(summary.gpus, snapshot.gpus.size());
    summary.seconds += snapshot.window_s;
    summary.synthetic = summary.synthetic || snapshot.synthetic.value_or(false);
    const auto now = std::chrono::steady_clock::now();
    if (progress && now - last_progress >= std::chrono::seconds(1)) {
      last_progress = now;
      fmt::print(stderr, "\rofu record: {} windows, {} GPUs, {:.0f} of {:g} s, {:.0f} s elapsed   ", summary.windows,
                 summary.gpus, summary.seconds, duration, std::chrono::duration<double>(now - started).count());
    }
  }
  summary.interrupted = StopRequested();
  if (progress && last_progress != started) fmt::print(stderr, "\n");

  if (summary.windows == 0) {
    if (failure) return *failure;
    return Error::NoData("{} gave no window{}; nothing written to {}", description,
                         summary.interrupted ? " before the signal" : "", args.out);
  }
  sources::RecordingInfo info;
  info.synthetic = summary.synthetic;
  info.description = args.description.empty() ? fmt::format("ofu record from {}", description) : args.description;
  OFU_RETURN_IF_ERROR(writer.WriteFile(info, args.out));
  summary.out = args.out;
  summary.source = description;
  summary.duration_s = duration;
  summary.samples = writer.samples();
  summary.skipped_values = writer.skipped_values();
  if (args.format == render::OutputFormat::kJson) {
    fmt::print("{}", render::FormatRecordSummaryJson(summary));
  } else {
    fmt::print(stderr, "{}", render::FormatRecordSummaryLine(summary));
  }
  // A source that broke mid-way: what came before is saved, but the run failed.
  if (failure) return *failure;
  return kExitOk;
}

}  // namespace ofu::cli
