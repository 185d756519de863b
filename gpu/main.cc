// ofu-gemm: how close does OFU come to true MFU on controlled GEMMs?
//
// Runs the cases of sweep files with cuBLASLt on one GPU and writes one CSV
// row per case (docs/gemm-harness.md); summarizes a result file; lists a
// sweep's cases without a GPU. This file wires the flags to the harness
// (harness.h) and the host library (src/ofu/gemm) and maps errors to exit
// statuses (src/ofu/cli/exit_codes.h, shared with every ofu program).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "device.h"
#include "harness.h"
#include "kernel_recorder.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/parse_command_line.h"
#include "ofu/cli/spec_db.h"
#include "ofu/cli/window_flag.h"
#include "ofu/core/version.h"
#include "ofu/gemm/result_csv.h"
#include "ofu/gemm/summary.h"
#include "ofu/gemm/sweep.h"

namespace {

using ofu::cli::ExitCodeFor;

// The longest counter window ofu-gemm takes (its own range: the harness
// samples inside a case's steady loop); the shortest is NVML GPM's,
// kMinWindowS, as everywhere (cli::AddWindowFlag).
constexpr double kMaxCounterWindowS = 10;

constexpr const char* kAbout = R"(ofu-gemm -- measure how close OFU comes to true MFU on controlled GEMMs.

For each case of a sweep file ofu-gemm runs a cuBLASLt GEMM in a steady loop
of at least 2 s, timed with CUDA events (true MFU = 2MNK x iterations / time /
peak of the precision), while ofu's NVML source samples tensor activity and
the SM clock in the same process (OFU). It records the kernel cuBLASLt
launched (CUPTI), its tile and cluster from the algorithm and from the name,
the OFU corrected for tile padding, and each estimate's error in
percentage points.

Examples:
  ofu-gemm --list --sweep gpu/sweeps/square.toml
  ofu-gemm --sweep gpu/sweeps/square.toml --out square.csv
  ofu-gemm --summary square.csv

Exit status: 0 ok, 1 usage, 2 unreadable or malformed sweep or result file,
3 GPU model not in the spec database, 4 no measured case to summarize,
5 no CUDA device, driver, NVML or GPM. See docs/gemm-harness.md.)";

struct Args {
  std::vector<std::string> sweeps;
  std::string out = "-";
  std::optional<std::string> summary;
  bool list = false;
  int device = 0;
  std::optional<std::string> gpu_model;
  std::optional<std::string> spec_db;
  std::string nvml_library;
  std::string cupti_library;
  double window_s = 0.25;
};

int Fail(const ofu::Error& error) {
  fmt::print(stderr, "ofu-gemm: {}\n", error.message);
  return ExitCodeFor(error.code);
}

ofu::Result<std::vector<ofu::gemm::GemmCase>> LoadCases(const std::vector<std::string>& paths) {
  std::vector<ofu::gemm::GemmCase> cases;
  for (const std::string& path : paths) {
    OFU_ASSIGN_OR_RETURN(auto sweep, ofu::gemm::ReadSweepFile(path));
    cases.insert(cases.end(), sweep.cases.begin(), sweep.cases.end());
  }
  return cases;
}

int RunList(const Args& args) {
  auto cases = LoadCases(args.sweeps);
  if (!cases.ok()) return Fail(cases.error());
  fmt::print("{:<14} {:<22} {:<26} {:>6} {:>10} {}\n", "sweep", "group", "case", "min_s", "min_iter", "clock_study");
  for (const auto& c : *cases) {
    fmt::print("{:<14} {:<22} {:<26} {:>6} {:>10} {}\n", c.sweep, c.group, ofu::gemm::DescribeCase(c), c.min_seconds,
               c.min_iterations, c.clock_study ? "yes" : "no");
  }
  fmt::print(stderr, "{} cases\n", cases->size());
  return ofu::cli::kExitOk;
}

int RunSummary(const Args& args) {
  auto rows = ofu::gemm::ReadResultCsvFile(*args.summary);
  if (!rows.ok()) return Fail(rows.error());
  const ofu::gemm::Summary summary = ofu::gemm::Summarize(*rows);
  if (summary.measured == 0) {
    return Fail(ofu::Error::NoData("{}: no measured case to summarize ({} rows, {} skipped)", *args.summary,
                                   rows->size(), summary.skipped));
  }
  fmt::print("{}", ofu::gemm::FormatSummary(summary, *args.summary));
  return ofu::cli::kExitOk;
}

int RunSweeps(const Args& args) {
  // Inputs first, so that a bad sweep file is reported on any machine.
  auto cases = LoadCases(args.sweeps);
  if (!cases.ok()) return Fail(cases.error());
  auto specs = ofu::cli::LoadSpecDatabase(args.spec_db);
  if (!specs.ok()) return Fail(specs.error());
  // --gpu-model, resolved once and before the device: an unknown model fails the same way as in ofu.
  auto flag_gpu = ofu::cli::ResolveGpuModel(*specs, args.gpu_model);
  if (!flag_gpu.ok()) return Fail(flag_gpu.error());

  auto device = ofu::gpu::OpenCudaDevice(args.device);
  if (!device.ok()) return Fail(device.error());
  const ofu::GpuSpec* spec = *flag_gpu;
  if (spec == nullptr) {
    auto found = specs->Lookup(device->name);
    if (!found.ok()) return Fail(found.error());
    spec = *found;
  }

  auto recorder = ofu::gpu::KernelRecorder::Open(ofu::gpu::CuptiCandidates(args.cupti_library, OFU_CUDA_LIBRARY_DIR));
  std::unique_ptr<ofu::gpu::KernelRecorder> kernel_recorder;
  if (recorder.ok()) {
    kernel_recorder = std::move(recorder).value();
  } else {
    fmt::print(stderr, "ofu-gemm: warning: {}; rows will have no kernel name\n", recorder.error().message);
  }
  ofu::sources::SystemClock clock;
  ofu::gpu::HarnessOptions options;
  options.sampler.nvml_library = args.nvml_library;
  options.sampler.window_s = args.window_s;
  // Without counters there is no OFU to compare: fail once, here, rather
  // than skip every case for the same reason.
  if (auto probe = ofu::gpu::CounterSampler::Open(options.sampler, device->uuid, clock); !probe.ok()) {
    return Fail(probe.error());
  }
  auto harness = ofu::gpu::Harness::Open(*device, *spec, options, clock, std::move(kernel_recorder));
  if (!harness.ok()) return Fail(harness.error());

  std::ofstream file;
  if (args.out != "-") {
    file.open(args.out, std::ios::binary | std::ios::trunc);
    if (!file) return Fail(ofu::Error::Io("{}: cannot write the result file", args.out));
  }
  std::ostream& out = args.out == "-" ? std::cout : file;
  fmt::print(stderr, "ofu-gemm: {} ({}, sm_{}{}, CUDA runtime {}, driver API {}), spec {}: {} cases\n", device->name,
             device->uuid, device->compute_major, device->compute_minor, device->runtime_version,
             device->driver_version, spec->id, cases->size());
  out << ofu::gemm::ResultCsvHeader() << std::flush;
  for (std::size_t i = 0; i < cases->size(); ++i) {
    const auto& c = (*cases)[i];
    fmt::print(stderr, "[{}/{}] {} {}: ", i + 1, cases->size(), c.group, ofu::gemm::DescribeCase(c));
    const ofu::gemm::CaseResult row = (*harness)->Run(c);
    // Each row is flushed at once, so that a sweep cut short keeps its rows.
    out << ofu::gemm::ResultCsvRow(row) << std::flush;
    if (row.mfu || row.achieved_tflops > 0) {
      fmt::print(stderr, "{:.1f} TFLOP/s, MFU {}, OFU raw {} corrected {}\n", row.achieved_tflops,
                 row.mfu ? fmt::format("{:.3f}", *row.mfu) : "-",
                 row.ofu_raw ? fmt::format("{:.3f}", *row.ofu_raw) : "-",
                 row.ofu_corrected ? fmt::format("{:.3f}", *row.ofu_corrected) : "-");
    } else {
      fmt::print(stderr, "{}\n", row.note);
    }
  }
  return out ? ofu::cli::kExitOk : Fail(ofu::Error::Io("{}: write failed", args.out));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(kAbout, "ofu-gemm");
  app.set_version_flag("--version", fmt::format("ofu-gemm {}", ofu::kVersion));
  Args args;
  auto* sweep = app.add_option("--sweep,-s", args.sweeps, "Sweep file (TOML; repeatable); see gpu/sweeps/")
                    ->check(CLI::ExistingFile);
  auto* list = app.add_flag("--list,--dry-run", args.list, "Print the cases the sweeps expand to; needs no GPU");
  auto* summary = app.add_option("--summary", args.summary,
                                 "Summarize a result CSV (errors per precision); needs no GPU");
  app.add_option("--out,-o", args.out, "Result CSV to write ('-': standard output)")->capture_default_str();
  app.add_option("--device,-d", args.device, "CUDA device index")->check(CLI::NonNegativeNumber)->capture_default_str();
  ofu::cli::AddGpuModelFlag(app, args.gpu_model, "The spec database entry to use (default: the device's name)");
  ofu::cli::AddSpecDbFlag(app, args.spec_db);
  app.add_option("--nvml-library", args.nvml_library, "Path of libnvidia-ml.so.1");
  app.add_option("--cupti-library", args.cupti_library, "Path of libcupti.so (default: the CUDA toolkit's)");
  ofu::cli::AddWindowFlag(app, "--window", args.window_s, kMaxCounterWindowS, "Counter window");
  summary->excludes(sweep);
  summary->excludes(list);
  list->needs(sweep);
  if (auto exit_status = ofu::cli::ParseCommandLine(app, argc, argv)) return *exit_status;
  if (args.summary) return RunSummary(args);
  if (args.list) return RunList(args);
  if (args.sweeps.empty()) {
    fmt::print(stderr, "ofu-gemm: give --sweep FILE (to run or --list), or --summary FILE; see --help\n");
    return ofu::cli::kExitUsage;
  }
  return RunSweeps(args);
}
