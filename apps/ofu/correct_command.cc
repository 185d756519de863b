#include "correct_command.h"

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format_flag.h"
#include "ofu/analysis/correction.h"
#include "ofu/analysis/cuda_core_advice.h"
#include "ofu/analysis/report.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/formats/training_log.h"
#include "ofu/kernels/kernel_throughput.h"
#include "ofu/render/correction_output.h"
#include "ofu/sources/replay.h"
#include "trace_input.h"

namespace ofu::cli {
namespace {

constexpr const char* kCorrectHelp = R"(Correct OFU for tile quantization and precision, from a kernel trace.

Tensor activity counts the padded work GEMM tiles execute, and a busy tensor
pipe does twice the FLOPs in fp8 that it does in bf16. Given a trace of the
same job, ofu works out per GEMM kernel the useful FLOPs (2MNK) and the
executed ones (padded to whole tiles and clusters, in the kernel's own
orientation), and from them:
  correction factor   useful / executed tensor work, weighed as the pipes see it
  corrected OFU       OFU x factor
  predicted MFU       corrected OFU x sum over precisions of (share of tensor
                      time x peak of that precision / peak of the reference)
and lists the GEMMs that waste the most tensor time, with what to change.

Traces: PyTorch profiler Chrome traces (plain or .gz; record with
record_shapes=True) and Nsight Systems SQLite exports (nsys export --type
sqlite; shapes from torch.autograd.profiler.emit_nvtx(record_shapes=True)).
A directory stands for every trace in it (one per rank, as
tensorboard_trace_handler writes them); they are corrected as one job.

With --training-log, the MFU the job's own log prints (torchtitan, nanoGPT,
nanochat, llm.c, prime-rl, modula; the median over its steps, over this GPU's
own peak) is set beside the predicted one, with the ratio and its most likely
meaning (the flags of `ofu reconcile`). Megatron-LM, MaxText and nanotron
print TFLOP/s per GPU: it is divided by the GPU's peak of
--reference-precision, both named in the notes. MFU values above 100 % or
below 0 are left out with a note. A log that cannot be used is noted and the
trace's answer is still printed (exit 2).

Examples:
  ofu correct --trace step.json.gz
  ofu correct --trace step.json.gz --ofu 0.42
  ofu correct --trace run.sqlite --input run.om --reference-precision bf16
  ofu correct --trace step.json.gz --input run.om --training-log train.log
  ofu correct --trace step.json.gz --format json
  ofu correct --trace ./profiler-logs/ --input run.om   # every rank's trace

Exit status: 0 ok, 1 usage, 2 unreadable or malformed trace or recording
(or a refused --training-log, after the report), 3 unknown GPU model, 4 no
GEMM kernel could be corrected (or the recording gives no OFU). See
docs/cli.md.)";

}  // namespace

void AddCorrectFlags(CLI::App& cmd, CorrectArgs& args) {
  cmd.description(kCorrectHelp);
  cmd.add_option("--trace,-t", args.trace,
                 "PyTorch profiler trace (.json or .json.gz) or Nsight Systems SQLite export; a directory reads "
                 "every trace in it (one per rank); repeatable")
      ->required()
      ->take_all();
  auto* ofu =
      cmd.add_option("--ofu", args.ofu, "Measured OFU to correct, as a ratio (0.42)")->check(CLI::Range(0.0, 10.0));
  auto* input = cmd.add_option("--input,-i", args.input, "Recording to take the measured OFU from (as ofu report)");
  ofu->excludes(input);
  input->excludes(ofu);
  cmd.add_option(
      "--training-log", args.training_log,
      "The job's training log (torchtitan, nanoGPT, nanochat, llm.c, prime-rl, modula, Megatron-LM, MaxText, "
      "nanotron): its MFU beside the predicted one");
  cmd.add_option("--reference-precision", args.reference_precision,
                 "Precision the MFU is quoted against (the framework's peak); for a training log of TFLOP/s per GPU, "
                 "the precision whose peak divides it")
      ->check(CLI::IsMember({"fp16", "bf16", "tf32", "fp8", "fp4", "int8"}))
      ->capture_default_str();
  AddGpuModelFlag(cmd, args.gpu_model, "GPU whose per-precision peaks weigh the mix (default: the trace's device)");
  AddSpecDbFlag(cmd, args.spec_db);
  cmd.add_flag("--strict", args.strict,
               "With --input: fail (exit 3) when a GPU's model is not in the spec database, instead of taking "
               "the OFU of the others, and (exit 2) on a value that is not a number or a line that cannot be a "
               "sample (a pasted prompt, curl -v line, elision or markup)");
  cmd.add_option("--tile-orientation", args.orientation,
                 "swapped: the kernel's M is the framework's N (cuBLAS computing Bt*At for row-major "
                 "PyTorch); direct: the kernel's M is the framework's M")
      ->check(CLI::IsMember({"swapped", "direct"}))
      ->capture_default_str();
  cmd.add_option("--top", args.top, "Rows in the table of wasteful GEMMs")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  AddFormatFlag(cmd, args.format, {render::OutputFormat::kTable, render::OutputFormat::kJson},
                "Output: table (for people) or json (for programs)");
}

Result<int> RunCorrect(const CorrectArgs& args) {
  OFU_ASSIGN_OR_RETURN(auto specs, LoadSpecDatabase(args.spec_db));
  OFU_ASSIGN_OR_RETURN(const GpuSpec* const flag_gpu, ResolveGpuModel(specs, args.gpu_model));

  // The OFU to correct, before the (possibly long) trace read.
  std::optional<double> measured = args.ofu;
  std::string ofu_source = "--ofu";
  std::string ofu_clock_source;
  std::optional<double> fp32_pipe_active;
  if (args.input) {
    sources::RecordingOptions recording_options;
    recording_options.strict_values = args.strict;  // stray lines and text values refused, as in ofu report
    OFU_ASSIGN_OR_RETURN(auto recording, sources::ReadRecordingFile(*args.input, recording_options));
    analysis::ReportOptions options;
    options.gpu_model = flag_gpu;
    options.strict = args.strict;
    OFU_ASSIGN_OR_RETURN(auto report, analysis::BuildReport(recording, specs, options));
    if (const analysis::FleetCoverage& c = report.coverage; !c.left_out.empty()) {
      fmt::print(stderr, "ofu correct: the OFU of {} covers {} of its {} GPUs; left out (no OFU): {}\n", *args.input,
                 c.gpus_with_ofu, c.gpus, fmt::join(c.left_out, ", "));
    }
    if (!report.overall.ofu) {
      return Error::NoData(
          "{}: no OFU could be computed from this recording (see "
          "`ofu report --input {}`)",
          *args.input, *args.input);
    }
    measured = report.overall.ofu;
    ofu_source = *args.input;
    ofu_clock_source = ClockSourcesName(report.overall.clock_sources);
    fp32_pipe_active = report.overall.non_tensor[CudaCorePipe::kFp32];
  }

  // A refused log is noted and the trace still answers (exit 2 after the
  // report: the log is a malformed input, the rest is not).
  std::optional<formats::TrainingLog> training_log;
  std::optional<Error> training_log_error;
  if (args.training_log) {
    auto log = formats::ReadTrainingLog(*args.training_log);
    if (log.ok()) {
      training_log = std::move(*log);
      // Megatron-LM, MaxText and nanotron print FLOP/s, not the precision:
      // it is divided by the peak of the precision the user names.
      if (training_log->quantity == formats::TrainingLogQuantity::kFlopsPerGpu) {
        training_log->reference_precision = *kernels::PrecisionFromName(args.reference_precision);
      }
    } else {
      training_log_error = log.error();
    }
  }

  OFU_ASSIGN_OR_RETURN(const TraceInput input, ReadTraceInput(args.trace));
  const formats::KernelTrace& trace = input.trace;
  OFU_RETURN_IF_ERROR(analysis::RequireNvidiaTrace(trace, input.name, args.gpu_model.value_or("")));

  const ChosenGpu gpu = ChooseGpu(specs, trace, flag_gpu);
  OFU_ASSIGN_OR_RETURN(const kernels::KernelThroughputTable throughput, kernels::KernelThroughputTable::Embedded());
  analysis::CorrectionOptions options;
  options.gpu = gpu.spec;
  options.throughput = &throughput;
  options.reference_precision = *kernels::PrecisionFromName(args.reference_precision);
  options.orientation = args.orientation == "direct" ? kernels::TileOrientation::kDirect
                                                     : kernels::TileOrientation::kSwapped;
  options.max_wasteful = static_cast<size_t>(args.top);
  analysis::CorrectionReport report = analysis::ComputeCorrection(trace, options);
  if (!gpu.note.empty()) report.notes.push_back(gpu.note);
  // GEMMs on the CUDA cores: the precision to change, not shapes to record.
  if (auto simt = analysis::AdviseSimtGemms(report, gpu.spec)) report.notes.push_back(std::move(*simt));

  analysis::CorrectionView view;
  const std::string& trace_name = input.name;
  view.trace_path = trace_name;
  view.trace = &trace;
  view.report = &report;
  view.gpu = gpu.spec;
  view.gpu_origin = gpu.origin;
  view.ofu = measured;
  view.ofu_source = ofu_source;
  view.ofu_clock_source = ofu_clock_source;
  view.fp32_pipe_active = fp32_pipe_active;
  view.training_log = training_log ? &*training_log : nullptr;
  if (training_log_error) view.training_log_error = training_log_error->message;
  fmt::print("{}", args.format == render::OutputFormat::kJson ? render::RenderCorrectionJson(view)
                                                              : render::RenderCorrectionTable(view));
  if (!report.factor) {
    return Error::NoData("{}: no GEMM kernel could be corrected (see the coverage above)", trace_name);
  }
  if (training_log_error) return *training_log_error;
  return kExitOk;
}

}  // namespace ofu::cli
