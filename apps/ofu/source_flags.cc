#include "source_flags.h"

#include <fmt/format.h>

#include "ofu/core/windows.h"
#include "ofu/sources/builtin_sources.h"

namespace ofu::cli {

void AddSourceFlags(CLI::App& command, SourceFlags& flags) {
  const sources::SourceRegistry registry = sources::BuiltinSourceRegistry();
  command
      .add_option("--source,-s", flags.source,
                  fmt::format("Where counters come from: {}. Default: {}", registry.Forms(),
                              registry.AutoDetectOrder()))
      ->type_name("SOURCE");
  command.add_option("--window,-w", flags.options.window_s, "Window length in seconds (at least 0.1)")
      ->check(CLI::Range(kMinWindowS, 3600.0))
      ->capture_default_str();
  command
      .add_option("--clock-readings", flags.options.clock_readings,
                  "SM clock readings per window (NVML); their mean is the window's clock")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  AddSourceLibraryFlags(command, flags.options);
}

void AddSourceLibraryFlags(CLI::App& command, sources::SourceOptions& options) {
  command.add_option("--nvml-library", options.nvml_library,
                     "NVML library to load (default: libnvidia-ml.so.1 from the linker's search path)");
  command.add_option("--dcgm-library", options.dcgm_library,
                     "DCGM library to load (default: libdcgm.so.4, then libdcgm.so.3)");
}

Result<std::unique_ptr<sources::Source>> OpenSourceFromFlags(const SourceFlags& flags, sources::Clock& clock) {
  return sources::BuiltinSourceRegistry().Open(flags.source, flags.options, clock);
}

}  // namespace ofu::cli
