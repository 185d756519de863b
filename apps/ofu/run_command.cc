#include "run_command.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/agent/job_recording.h"
#include "ofu/analysis/run_page.h"
#include "ofu/analysis/run_report.h"
#include "ofu/cli/spec_db.h"
#include "ofu/cli/stop_signal.h"
#include "ofu/formats/text_file.h"
#include "ofu/render/run_output.h"
#include "ofu/sources/replay.h"
#include "report_html.h"

namespace ofu::cli {
namespace {

constexpr const char* kRunHelp = R"(Run a command and report its OFU, its stalls and the MFU it printed.

The command runs as it would without ofu: its standard input, output and
error pass through unchanged, and ofu exits with its exit status (128 + N
when signal N ended it), so 'ofu run' can sit inside srun, torchrun, a
Kubernetes command or a CI step. While it runs, ofu records every GPU from
the best live source (as 'ofu record' does) and reads the job's output for
the MFU or TFLOP/s lines training frameworks print (the table of 'ofu
reconcile --training-log'). When it ends, ofu prints on stderr: the job's
GPUs and the rule that chose them, OFU over the run and its busy part per
GPU with the clock source, the phases (start-up, steady work, stalls near
zero such as evaluation, checkpoints or data waits, the tail) and the share
of GPU time lost in stalls, and the MFU the job printed beside OFU with the
likely reason for a gap. SIGINT or SIGTERM sent to ofu is passed to the
command; Ctrl-C in a terminal reaches the command directly.

Which GPUs: CUDA_VISIBLE_DEVICES when set, else those on which NVML lists a
process of the command or its descendants, else all.

Examples:
  ofu run -- python train.py --config small.yaml
  ofu run --report run.json --out run.om -- torchrun --nproc-per-node 8 train.py
  ofu run --html run.html -- python train.py
  ofu run --window 0.5 -- ./bench.sh

Exit status: the command's own; 1 usage; 5 no live source could be opened
(the command is not started). See docs/cli.md.)";

// The job's GPUs and the run's figures, from what was recorded.
Result<analysis::RunReport> BuildRun(const RunArgs& args, const agent::JobRecording& job, const GpuSpecDatabase& specs,
                                     const GpuSpec* gpu_model, analysis::Report& report, double* start_s) {
  std::stringstream text;
  job.writer.Write(sources::RecordingInfo{false, "ofu run", std::nullopt}, text);
  OFU_ASSIGN_OR_RETURN(sources::Recording recording, sources::ReadRecording(text, "the run's recording"));
  std::vector<analysis::RunGpu> seen;
  for (const agent::SeenGpu& gpu : job.gpus) seen.push_back({gpu.identity, gpu.pids});
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const analysis::RunGpuChoice choice = analysis::ChooseRunGpus(
      visible == nullptr ? std::nullopt : std::optional<std::string>(visible), seen, job.job_pids);
  std::erase_if(recording.gpus, [&](const sources::GpuRecording& gpu) {
    return std::find(choice.keys.begin(), choice.keys.end(), gpu.identity.key) == choice.keys.end();
  });
  analysis::ReportOptions options;
  options.windows.window_s = args.source.options.window_s;
  options.windows.interval_s = args.source.options.window_s;
  options.gpu_model = gpu_model;
  OFU_ASSIGN_OR_RETURN(report, analysis::BuildReport(recording, specs, options));
  analysis::RunReport run = analysis::BuildRunReport(report, recording, choice, job.log, job.log_error);
  run.command = args.command;
  run.exit_status = job.exit_status;
  run.seconds = job.ended_s - job.started_s;
  run.windows = job.windows;
  for (const int signal : job.forwarded) run.notes.push_back(fmt::format("signal {} passed to the command", signal));
  run.notes.insert(run.notes.end(), job.notes.begin(), job.notes.end());
  if (job.source_error) run.notes.push_back(fmt::format("recording stopped early: {}", job.source_error->message));
  *start_s = job.first_window_start_s.value_or(job.started_s);
  return run;
}

}  // namespace

void AddRunFlags(CLI::App& cmd, RunArgs& args) {
  cmd.description(kRunHelp);
  AddSourceFlags(cmd, args.source);
  cmd.add_option("--report", args.report,
                 "Also write the end-of-run report here as JSON (report's contract + \"run\")");
  cmd.add_option("--out,-o", args.out, "Keep the recording here (OpenMetrics, as ofu record writes it)");
  cmd.add_option("--html", args.html,
                 "Also write the run's page here: its OFU every window, its phases with the OFU and the MFU it "
                 "printed in each (one self-contained file, docs/html-report.md)");
  AddGpuModelFlag(cmd, args.gpu_model, "Treat every GPU as this model");
  AddSpecDbFlag(cmd, args.spec_db);
  cmd.add_option("command", args.command, "The command to run, after --")->required();
  cmd.positionals_at_end();
}

Result<int> RunRun(const RunArgs& args) {
  OFU_ASSIGN_OR_RETURN(auto specs, LoadSpecDatabase(args.spec_db));
  OFU_ASSIGN_OR_RETURN(const GpuSpec* const gpu_model, ResolveGpuModel(specs, args.gpu_model));
  OFU_ASSIGN_OR_RETURN(const formats::TrainingLogPatterns patterns, formats::TrainingLogPatterns::Embedded());
  sources::SystemClock system;
  agent::InterruptibleClock clock(system, 0.1);
  OFU_ASSIGN_OR_RETURN(auto source, OpenSourceFromFlags(args.source, clock));

  InstallForwardingSignals();
  agent::JobRecordingOptions options;
  options.take_signal = TakeSignalToForward;
  OFU_ASSIGN_OR_RETURN(agent::JobRecording job, agent::RecordJob(*source, clock, args.command, patterns, options));

  if (!args.out.empty()) {
    const Status written = job.writer.WriteFile(sources::RecordingInfo{false, "ofu run", std::nullopt}, args.out);
    if (!written.ok()) fmt::print(stderr, "ofu run: {}\n", written.error().message);
  }
  if (job.windows == 0) {
    fmt::print(stderr, "ofu run: no window was recorded ({}), so no report\n",
               job.source_error ? job.source_error->message : "the command ended before the first window");
    return job.exit_status;
  }
  analysis::Report report;
  double start_s = 0;
  auto run = BuildRun(args, job, specs, gpu_model, report, &start_s);
  if (!run.ok()) {
    fmt::print(stderr, "ofu run: no report: {}\n", run.error().message);
    return job.exit_status;
  }
  fmt::print(stderr, "{}", render::RenderRunText(*run, start_s));
  if (!args.report.empty()) {
    const Status written = formats::WriteFileAtomically(args.report, render::RenderRunJson(report, *run, start_s));
    if (!written.ok()) fmt::print(stderr, "ofu run: {}\n", written.error().message);
  }
  if (!args.html.empty()) {
    const Status written = WriteRunPage(args.html, report, analysis::RunPageOfRun(*run, report),
                                        fmt::format("ofu run: {}", fmt::join(args.command, " ")), system.NowS());
    if (!written.ok()) fmt::print(stderr, "ofu run: {}\n", written.error().message);
  }
  return job.exit_status;
}

}  // namespace ofu::cli
