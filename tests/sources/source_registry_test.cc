// The source registry: parsing --source values against the built-in kinds,
// auto-detection when nothing is installed, `ofu sources`' listing, and a
// fake kind registered the way a new vendor would be, seen by every reader
// of the registry (parsing, opening, auto-detection, the listing, the forms).
#include "ofu/sources/source_registry.h"

#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofu/render/sources_output.h"
#include "ofu/sources/builtin/builtin_sources.h"
#include "ofu/sources/sources_listing.h"

namespace ofu::sources {
namespace {

using render::FormatSourcesJson;
using render::FormatSourcesTable;
using ::testing::HasSubstr;
using ::testing::Not;

// Options under which neither NVML nor DCGM can load: a machine without GPUs.
SourceOptions NoVendorLibraries() {
  SourceOptions options;
  options.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  options.dcgm_library = "/nonexistent/libdcgm.so.4";
  return options;
}

TEST(ParseSourceSpec, AcceptsEveryDocumentedForm) {
  const SourceRegistry registry = BuiltinSourceRegistry();
  auto nvml = registry.Parse("nvml");
  ASSERT_TRUE(nvml.ok());
  EXPECT_EQ(nvml->scheme, "nvml");

  auto dcgm = registry.Parse("dcgm");
  ASSERT_TRUE(dcgm.ok());
  EXPECT_EQ(dcgm->scheme, "dcgm");
  EXPECT_EQ(dcgm->argument, "");

  auto unix_socket = registry.Parse("dcgm:unix:/run/dcgm.sock");
  ASSERT_TRUE(unix_socket.ok());
  EXPECT_EQ(unix_socket->scheme, "dcgm");
  EXPECT_EQ(unix_socket->argument, "unix:/run/dcgm.sock");

  auto scrape = registry.Parse("scrape:http://node1:9400/metrics");
  ASSERT_TRUE(scrape.ok());
  EXPECT_EQ(scrape->scheme, "scrape");
  EXPECT_EQ(scrape->argument, "http://node1:9400/metrics");

  auto replay = registry.Parse("replay:/tmp/a:b.om");  // only the first colon separates
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->scheme, "replay");
  EXPECT_EQ(replay->argument, "/tmp/a:b.om");
}

TEST(ParseSourceSpec, RejectsUnknownAndIncompleteForms) {
  const SourceRegistry registry = BuiltinSourceRegistry();
  for (const char* bad : {"", "nvm", "nvml:x", "replay", "replay:", "scrape", "file:x.om", "DCGM"}) {
    auto spec = registry.Parse(bad);
    EXPECT_FALSE(spec.ok()) << bad;
    if (!spec.ok()) {
      EXPECT_EQ(spec.error().code, ErrorCode::kInvalidArgument) << bad;
    }
  }
}

TEST(ParseSourceSpec, ErrorsNameTheAcceptedForms) {
  const SourceRegistry registry = BuiltinSourceRegistry();
  EXPECT_EQ(registry.Forms(),
            "nvml, dcgm, dcgm:ADDRESS (host[:port] or unix:/path), scrape:URL (a dcgm-exporter endpoint) "
            "or replay:FILE (a recording)");
  EXPECT_EQ(registry.AutoDetectOrder(), "nvml, then dcgm");
  auto unknown = registry.Parse("nvml:x");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message, "unknown source 'nvml:x'; use one of: " + registry.Forms());
  for (const auto& [text, message] : {std::pair{"replay", "source 'replay' needs an argument: replay:FILE"},
                                      std::pair{"scrape:", "source 'scrape' needs an argument: scrape:URL"},
                                      std::pair{"dcgm:", "source 'dcgm' needs an argument: dcgm:ADDRESS"}}) {
    auto spec = registry.Parse(text);
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_EQ(spec.error().message, message);
  }
}

TEST(AutoDetectSource, SaysWhatWasTriedAndWhyEachFailed) {
  FakeClock clock(0);
  auto source = BuiltinSourceRegistry().AutoDetect(NoVendorLibraries(), clock);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(source.error().message.find("nvml: "), std::string::npos) << source.error().message;
  EXPECT_NE(source.error().message.find("dcgm: "), std::string::npos) << source.error().message;
  EXPECT_NE(source.error().message.find("--source replay:FILE"), std::string::npos) << source.error().message;
}

TEST(BuiltinSources, OpenedSourceIsOfTheKindItWasOpenedAs) {
  FakeClock clock(0);
  auto source = BuiltinSourceRegistry().Open(std::string("replay:") + OFU_SOURCE_DIR +
                                                 "/data/recordings/synthetic-2xh100-bf16-matmul.om",
                                             SourceOptions{}, clock);
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_EQ((*source)->kind(), "replay");
}

TEST(BuiltinSources, ListingWithoutVendorLibrariesExplainsEachKind) {
  FakeClock clock(0);
  const SourcesListing listing = ListSources(BuiltinSourceRegistry(), NoVendorLibraries(), clock);
  ASSERT_EQ(listing.probes.size(), 4u);
  EXPECT_FALSE(listing.any_auto_detected);
  EXPECT_EQ(listing.probes[0].name, "nvml");
  EXPECT_FALSE(listing.probes[0].available);
  EXPECT_THAT(listing.probes[0].detail, HasSubstr("/nonexistent/libnvidia-ml.so.1"));
  EXPECT_EQ(listing.probes[1].name, "dcgm");
  EXPECT_FALSE(listing.probes[1].available);
  EXPECT_THAT(listing.probes[1].detail, HasSubstr("/nonexistent/libdcgm.so.4"));
  EXPECT_EQ(listing.probes[2].name, "scrape");
  EXPECT_TRUE(listing.probes[2].available);
  EXPECT_EQ(listing.probes[3].name, "replay");
  EXPECT_TRUE(listing.probes[3].available);
  const std::string table = FormatSourcesTable(listing);
  EXPECT_THAT(table, HasSubstr("replay  available   reads a recording given as --source replay:FILE\n"));
  EXPECT_THAT(table, HasSubstr("\nNo live source on this machine: ofu can still replay recordings"));
}

TEST(BuiltinSources, EveryKindIsInTheDocs) {
  std::ifstream file(std::string(OFU_SOURCE_DIR) + "/docs/sources.md");
  ASSERT_TRUE(file) << "docs/sources.md";
  std::stringstream docs;
  docs << file.rdbuf();
  const SourceRegistry registry = BuiltinSourceRegistry();
  for (const SourceKind& kind : registry.kinds()) {
    EXPECT_THAT(docs.str(), HasSubstr("| `" + kind.scheme)) << kind.scheme << " has no row in docs/sources.md";
  }
}

// A kind that never opens, for the registry's own checks.
SourceKind NeverOpens(std::string scheme) {
  SourceKind kind;
  kind.scheme = std::move(scheme);
  kind.open = [](std::string_view, const SourceOptions&, Clock&) -> Result<std::unique_ptr<Source>> {
    return Error::Unavailable("never opens");
  };
  kind.probe = [](const SourceOptions&, Clock&) -> Result<std::string> { return std::string("ok"); };
  return kind;
}

TEST(SourceRegistry, RejectsIncompleteOrDuplicateKinds) {
  SourceRegistry registry;
  EXPECT_TRUE(registry.Register(NeverOpens("one")).ok());
  EXPECT_FALSE(registry.Register(NeverOpens("one")).ok()) << "taken";
  EXPECT_FALSE(registry.Register(NeverOpens("")).ok()) << "empty";
  EXPECT_FALSE(registry.Register(NeverOpens("a:b")).ok()) << "colon";
  SourceKind no_probe = NeverOpens("two");
  no_probe.probe = nullptr;
  EXPECT_FALSE(registry.Register(no_probe).ok()) << "no probe";
  SourceKind no_open = NeverOpens("two");
  no_open.open = nullptr;
  EXPECT_FALSE(registry.Register(no_open).ok()) << "no open";
  SourceKind unnamed_argument = NeverOpens("two");
  unnamed_argument.argument = SourceArgument::kRequired;
  EXPECT_FALSE(registry.Register(unnamed_argument).ok()) << "argument without a name";
  EXPECT_EQ(registry.kinds().size(), 1u);
  EXPECT_EQ(registry.Find("two"), nullptr);
  ASSERT_NE(registry.Find("one"), nullptr);
  EXPECT_EQ(registry.Find("one")->scheme, "one");
}

// A vendor ofu does not know, registered as docs/sources.md says a new
// kind is: it reads "fake:SPEC" and has two GPUs.
class FakeSource final : public Source {
 public:
  explicit FakeSource(std::string spec) : spec_(std::move(spec)) {}
  std::string_view kind() const override { return "fake"; }
  std::string Describe() const override { return "fake of " + spec_; }
  bool live() const override { return true; }
  Result<std::optional<Snapshot>> Next() override { return std::optional<Snapshot>(); }

 private:
  std::string spec_;
};

SourceKind FakeKind(bool auto_detect) {
  SourceKind kind;
  kind.scheme = "fake";
  kind.argument = SourceArgument::kOptional;
  kind.argument_name = "SPEC";
  kind.help = "a vendor of two fake GPUs";
  kind.auto_detect = auto_detect;
  kind.open = [](std::string_view spec, const SourceOptions&, Clock&) -> Result<std::unique_ptr<Source>> {
    return std::unique_ptr<Source>(std::make_unique<FakeSource>(spec.empty() ? "the default" : std::string(spec)));
  };
  kind.probe = [](const SourceOptions&, Clock&) -> Result<std::string> { return std::string("2 fake GPUs"); };
  return kind;
}

SourceRegistry BuiltinsAndFake(bool auto_detect) {
  SourceRegistry registry = BuiltinSourceRegistry();
  EXPECT_TRUE(registry.Register(FakeKind(auto_detect)).ok());
  return registry;
}

TEST(FakeSourceKind, AppearsInOfuSources) {
  FakeClock clock(0);
  const SourcesListing listing = ListSources(BuiltinsAndFake(/*auto_detect=*/true), NoVendorLibraries(), clock);
  ASSERT_EQ(listing.probes.size(), 5u);
  EXPECT_EQ(listing.probes[4].name, "fake");
  EXPECT_TRUE(listing.probes[4].available);
  EXPECT_EQ(listing.probes[4].detail, "2 fake GPUs");
  // It finds GPUs by itself, so the machine has a live source after all.
  EXPECT_TRUE(listing.any_auto_detected);

  const std::string table = FormatSourcesTable(listing);
  EXPECT_THAT(table, HasSubstr("fake    available   2 fake GPUs\n"));
  EXPECT_THAT(table, HasSubstr("nvml    unavailable"));
  EXPECT_THAT(table, Not(HasSubstr("No live source")));

  const auto json = nlohmann::json::parse(FormatSourcesJson(listing));
  ASSERT_EQ(json.size(), 5u);
  EXPECT_EQ(json[4]["source"], "fake");
  EXPECT_EQ(json[4]["available"], true);
  EXPECT_EQ(json[4]["detail"], "2 fake GPUs");

  EXPECT_THAT(FormatSourceKindsHelp(BuiltinsAndFake(true)), HasSubstr("  fake     a vendor of two fake GPUs\n"));
}

TEST(FakeSourceKind, NotAutoDetectedLeavesTheMachineWithoutALiveSource) {
  FakeClock clock(0);
  const SourcesListing listing = ListSources(BuiltinsAndFake(/*auto_detect=*/false), NoVendorLibraries(), clock);
  EXPECT_TRUE(listing.probes.back().available);
  EXPECT_FALSE(listing.any_auto_detected);
}

TEST(FakeSourceKind, OpensThroughSourceFlagParsing) {
  FakeClock clock(0);
  const SourceRegistry registry = BuiltinsAndFake(/*auto_detect=*/false);
  EXPECT_THAT(registry.Forms(), HasSubstr("replay:FILE (a recording), fake or fake:SPEC"));

  auto source = registry.Open("fake:rack-7", NoVendorLibraries(), clock);
  ASSERT_TRUE(source.ok()) << source.error().message;
  EXPECT_EQ((*source)->kind(), "fake");
  EXPECT_EQ((*source)->Describe(), "fake of rack-7");

  auto bare = registry.Open("fake", NoVendorLibraries(), clock);
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_EQ((*bare)->Describe(), "fake of the default");

  auto incomplete = registry.Open("fake:", NoVendorLibraries(), clock);
  ASSERT_FALSE(incomplete.ok());
  EXPECT_EQ(incomplete.error().message, "source 'fake' needs an argument: fake:SPEC");

  // Without the registration the same text is an unknown source.
  auto unknown = BuiltinSourceRegistry().Open("fake:rack-7", NoVendorLibraries(), clock);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.error().message, HasSubstr("unknown source 'fake:rack-7'"));
}

TEST(FakeSourceKind, AutoDetectionTriesItAfterTheBuiltInKinds) {
  FakeClock clock(0);
  auto detected = BuiltinsAndFake(/*auto_detect=*/true).AutoDetect(NoVendorLibraries(), clock);
  ASSERT_TRUE(detected.ok()) << detected.error().message;
  EXPECT_EQ((*detected)->kind(), "fake");
  EXPECT_EQ((*detected)->Describe(), "fake of the default");

  auto none = BuiltinsAndFake(/*auto_detect=*/false).AutoDetect(NoVendorLibraries(), clock);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.error().message, Not(HasSubstr("  fake: ")));
  EXPECT_THAT(none.error().message, HasSubstr("--source fake:SPEC"));
}

}  // namespace
}  // namespace ofu::sources
