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
  command
      .add_option("--clock-readings", flags.options.clock_readings,
                  "SM clock readings per window (NVML); their mean is the window's clock; 0: ten a second")
      ->check(CLI::Validator(
          [](const std::string& text) {
            int readings = 0;
            try {
              readings = std::stoi(text);
            } catch (...) {
              return std::string("not a whole number");
            }
            const Status checked = sources::CheckSamplingSettings(1, readings, "--window", "--clock-readings");
            return checked.ok() ? std::string() : checked.error().message;
          },
          "0..1000"))
      ->check(NoteGiven(flags, "clock-readings"))
      ->capture_default_str();
  AddLibraryFlags(command, flags);
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
