#include "ofu/sources/source_registry.h"

#include <fmt/format.h>

namespace ofu::sources {
namespace {

// "a, b or c"
std::string JoinAlternatives(const std::vector<std::string>& items, std::string_view last_separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? last_separator : std::string_view(", ");
    out += items[i];
  }
  return out;
}

// "dcgm:ADDRESS (host[:port] or unix:/path)"
std::string ArgumentForm(const SourceKind& kind) {
  std::string form = fmt::format("{}:{}", kind.scheme, kind.argument_name);
  if (!kind.argument_help.empty()) form += fmt::format(" ({})", kind.argument_help);
  return form;
}

}  // namespace

Status SourceRegistry::Register(SourceKind kind) {
  if (kind.scheme.empty() || kind.scheme.find(':') != std::string::npos) {
    return Error::InvalidArgument("source kind '{}': a scheme is one word without a colon", kind.scheme);
  }
  if (Find(kind.scheme) != nullptr) {
    return Error::InvalidArgument("source kind '{}' is registered already", kind.scheme);
  }
  if (kind.argument != SourceArgument::kNone && kind.argument_name.empty()) {
    return Error::InvalidArgument("source kind '{}' takes an argument but does not name it", kind.scheme);
  }
  if (!kind.open || !kind.probe) {
    return Error::InvalidArgument("source kind '{}' needs both an open and a probe function", kind.scheme);
  }
  kinds_.push_back(std::move(kind));
  return OkStatus();
}

const SourceKind* SourceRegistry::Find(std::string_view scheme) const {
  for (const SourceKind& kind : kinds_) {
    if (kind.scheme == scheme) return &kind;
  }
  return nullptr;
}

std::string SourceRegistry::Forms() const {
  std::vector<std::string> forms;
  for (const SourceKind& kind : kinds_) {
    if (kind.argument != SourceArgument::kRequired) forms.push_back(kind.scheme);
    if (kind.argument != SourceArgument::kNone) forms.push_back(ArgumentForm(kind));
  }
  return JoinAlternatives(forms, " or ");
}

std::string SourceRegistry::AutoDetectOrder() const {
  std::vector<std::string> schemes;
  for (const SourceKind& kind : kinds_) {
    if (kind.auto_detect) schemes.push_back(kind.scheme);
  }
  return JoinAlternatives(schemes, ", then ");
}

Result<SourceSpec> SourceRegistry::Parse(std::string_view text) const {
  const size_t colon = text.find(':');
  const bool has_colon = colon != std::string_view::npos;
  const std::string_view scheme = text.substr(0, colon);
  const std::string_view argument = has_colon ? text.substr(colon + 1) : std::string_view();
  const SourceKind* kind = Find(scheme);
  if (kind == nullptr || (kind->argument == SourceArgument::kNone && has_colon)) {
    return Error::InvalidArgument("unknown source '{}'; use one of: {}", text, Forms());
  }
  // "replay", "replay:" and "dcgm:" all lack what the colon promises.
  if (argument.empty() && (kind->argument == SourceArgument::kRequired || has_colon)) {
    return Error::InvalidArgument("source '{}' needs an argument: {}:{}", scheme, scheme, kind->argument_name);
  }
  return SourceSpec{std::string(scheme), std::string(argument)};
}

Result<std::unique_ptr<Source>> SourceRegistry::Open(std::string_view text, const SourceOptions& options,
                                                     Clock& clock) const {
  if (text.empty()) return AutoDetect(options, clock);
  OFU_ASSIGN_OR_RETURN(const SourceSpec spec, Parse(text));
  return Find(spec.scheme)->open(spec.argument, options, clock);
}

Result<std::unique_ptr<Source>> SourceRegistry::AutoDetect(const SourceOptions& options, Clock& clock) const {
  std::string reasons;
  std::vector<std::string> named;  // the kinds that must be asked for by name
  for (const SourceKind& kind : kinds_) {
    if (!kind.auto_detect) {
      named.push_back("--source " + (kind.argument == SourceArgument::kNone ? kind.scheme : ArgumentForm(kind)));
      continue;
    }
    auto source = kind.open("", options, clock);
    if (source.ok()) return source;
    reasons += fmt::format("  {}: {}\n", kind.scheme, source.error().message);
  }
  std::string message = "no live source works on this machine:\n" + reasons;
  if (!named.empty()) {
    message += fmt::format("To read a source that is not detected, name it: {}.", JoinAlternatives(named, " or "));
  }
  return Error::Unavailable("{}", message);
}

}  // namespace ofu::sources
