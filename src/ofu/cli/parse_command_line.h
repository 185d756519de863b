// CLI11's parse, with the outcomes every ofu program treats alike: --help
// and --version print and exit 0, a usage error prints the message and the
// usage and exits kExitUsage (1).
//
// Every ofu program's main parses with it (ofu through RunCommandTable,
// ofu-gemm, ofu-gpm-probe, ofu-fleet-sim). Not thread-safe; main's thread.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

#include "ofu/cli/exit_codes.h"

namespace ofu::cli {

// Parses the command line into `app`. Returns the exit status when the
// program should stop now (help, version, a usage error), nullopt when it
// should go on and run what was asked.
inline std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace ofu::cli
