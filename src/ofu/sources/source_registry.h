// The kinds of counter source ofu can open, as a value.
//
// Each kind is registered once with its scheme (the word of --source before
// the colon: "nvml", "dcgm", "scrape", "replay"), how to open it, how to
// probe it and a line of help. Everything that lists or chooses sources reads
// the registry: --source parsing and its error messages, auto-detection when
// no --source is given, `ofu sources` (sources_listing.h), the --source flag
// help, and `Source::kind()`, which is the scheme and labels the agent's
// ofu_build_info{source}. A new kind (ROCm SMI, say) is one more Register
// call in BuiltinSourceRegistry() (builtin_sources.h); docs/sources.md says how.
//
// There is no global registry: the product builds BuiltinSourceRegistry(),
// a test builds its own (with a fake kind, say), and each passes it down.
//
//   SourceRegistry registry = BuiltinSourceRegistry();
//   auto source = registry.Open("dcgm:unix:/run/dcgm.sock", options, clock);
//
// Thread-safety: a registry is a plain value; once built, its const methods
// may be called from several threads when the kinds' functions allow it
// (the built-in ones keep no state). Clock must outlive the sources opened.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/source.h"

namespace ofu::sources {

// How a kind takes the part of --source after its colon.
enum class SourceArgument {
  kNone,      // "nvml" only; "nvml:x" is an unknown source
  kOptional,  // "dcgm" or "dcgm:ADDRESS"
  kRequired,  // "replay:FILE"; "replay" alone is an error naming the form
};

struct SourceKind {
  // The --source word and Source::kind() of what `open` returns. Lower case,
  // no colon.
  std::string scheme;
  SourceArgument argument = SourceArgument::kNone;
  std::string argument_name;  // "ADDRESS", "URL", "FILE": in the forms and errors
  std::string argument_help;  // optional, e.g. "host[:port] or unix:/path"
  std::string help;           // one line for `ofu sources --help`: what it reads
  // Tried, in registration order, when no --source is given (its argument
  // left empty); one of them working makes `ofu sources` exit 0. For the
  // sources that find GPUs by themselves (NVML, DCGM), not those that need
  // to be told where to read (scrape, replay).
  bool auto_detect = false;

  using OpenFunction = std::function<Result<std::unique_ptr<Source>>(std::string_view argument,
                                                                     const SourceOptions& options, Clock& clock)>;
  using ProbeFunction = std::function<Result<std::string>(const SourceOptions& options, Clock& clock)>;
  // Opens the source; `argument` is empty when none was given. Errors say
  // what failed and what to do.
  OpenFunction open;
  // For `ofu sources`: whether the kind works on this machine as it stands,
  // without sampling. Ok: what was found ("nvml (libnvidia-ml.so.1, driver
  // 550.54.15)") or how to use it; an error: why it does not work.
  ProbeFunction probe;
};

// A --source value taken apart.
struct SourceSpec {
  std::string scheme;    // a registered SourceKind::scheme
  std::string argument;  // what followed the first colon; empty where none
};

class SourceRegistry {
 public:
  // Adds a kind after those registered before. kInvalidArgument when the
  // scheme is empty, holds a colon or is taken, when a kind that takes an
  // argument has no argument_name, or when open or probe is missing.
  Status Register(SourceKind kind);

  // Every kind, in registration order.
  const std::vector<SourceKind>& kinds() const { return kinds_; }

  // The kind registered under `scheme`; nullptr when none is.
  const SourceKind* Find(std::string_view scheme) const;

  // Every accepted --source form, for help and errors:
  // "nvml, dcgm, dcgm:ADDRESS (host[:port] or unix:/path), scrape:URL or replay:FILE".
  std::string Forms() const;

  // The schemes auto-detection tries, in order: "nvml, then dcgm".
  std::string AutoDetectOrder() const;

  // "scheme" or "scheme:argument"; only the first colon separates.
  // kInvalidArgument naming the accepted forms for an unknown scheme, or
  // naming the form when the kind's argument is missing.
  Result<SourceSpec> Parse(std::string_view text) const;

  // Opens `text` as --source takes it; an empty text auto-detects.
  Result<std::unique_ptr<Source>> Open(std::string_view text, const SourceOptions& options, Clock& clock) const;

  // Tries the auto_detect kinds in order and returns the first that opens.
  // kUnavailable when none does, with one line per kind tried and its reason.
  Result<std::unique_ptr<Source>> AutoDetect(const SourceOptions& options, Clock& clock) const;

 private:
  std::vector<SourceKind> kinds_;
};

}  // namespace ofu::sources
