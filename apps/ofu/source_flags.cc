#include "source_flags.h"

#include <fmt/format.h>

#include "ofu/sources/builtin/builtin_sources.h"
#include "window_flag.h"

namespace ofu::cli {
namespace {

// An option's check that records that the option was given. CLI11 runs
// checks on values from the command line only, not on defaults.
CLI::Validator NoteGiven(SourceFlags& flags, const char* name) {
  return CLI::Validator(
      [&flags, name](std::string&) {
        flags.given.insert(name);
        return std::string();
      },
      "");
}

}  // namespace

void AddSourceFlags(CLI::App& command, SourceFlags& flags) {
  const sources::SourceRegistry registry = sources::BuiltinSourceRegistry();
  command
      .add_option("--source,-s", flags.source,
                  fmt::format("Where counters come from: {}. Default: {}", registry.Forms(),
                              registry.AutoDetectOrder()))
      ->type_name("SOURCE")
      ->check(NoteGiven(flags, "source"));
  AddWindowFlag(command, "--window,-w", flags.options.window_s, kMaxSampledWindowS, "Window length")
      ->check(NoteGiven(flags, "window"));
  AddClockReadingsFlag(command, flags.options.clock_readings,
                       "SM clock readings per window (NVML); their mean is the window's clock")
      ->check(NoteGiven(flags, "clock-readings"));
  AddLibraryFlags(command, flags);
}

CLI::Option* AddClockReadingsFlag(CLI::App& command, int& readings, const std::string& what) {
  return command.add_option("--clock-readings", readings, what + "; 0: ten a second")
      ->check(CLI::Validator(
          [](const std::string& text) {
            int value = 0;
            try {
              value = std::stoi(text);
            } catch (...) {
              return std::string("not a whole number");
            }
            const Status checked = sources::CheckSamplingSettings(1, value, "--window", "--clock-readings");
            return checked.ok() ? std::string() : checked.error().message;
          },
          fmt::format("0..{}", sources::kMaxClockReadings)))
      ->capture_default_str();
}

void OverrideWithGivenFlags(const SourceFlags& flags, std::string& source, sources::SourceOptions& options) {
  const auto given = [&flags](const char* flag) { return flags.given.count(flag) > 0; };
  if (given("source")) source = flags.source;
  if (given("window")) options.window_s = flags.options.window_s;
  if (given("clock-readings")) options.clock_readings = flags.options.clock_readings;
  if (given("nvml-library")) options.nvml_library = flags.options.nvml_library;
  if (given("dcgm-library")) options.dcgm_library = flags.options.dcgm_library;
}

void AddLibraryFlags(CLI::App& command, SourceFlags& flags) {
  command
      .add_option("--nvml-library", flags.options.nvml_library,
                  "NVML library to load (default: libnvidia-ml.so.1 from the linker's search path)")
      ->check(NoteGiven(flags, "nvml-library"));
  command
      .add_option("--dcgm-library", flags.options.dcgm_library,
                  "DCGM library to load (default: libdcgm.so.4, then libdcgm.so.3)")
      ->check(NoteGiven(flags, "dcgm-library"));
}

Result<std::unique_ptr<sources::Source>> OpenSourceFromFlags(const SourceFlags& flags, sources::Clock& clock) {
  return sources::BuiltinSourceRegistry().Open(flags.source, flags.options, clock);
}

}  // namespace ofu::cli
