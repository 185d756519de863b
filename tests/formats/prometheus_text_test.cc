#include "ofu/formats/prometheus_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

namespace ofu::formats {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

constexpr std::size_t kMiB = std::size_t{1} << 20;

// What the visitor saw, copied out of the reader's buffers.
struct RecordedSample {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  std::optional<double> timestamp_s;
  std::size_t line = 0;

  std::string label(std::string_view name_wanted) const {
    for (const auto& [label_name, label_value] : labels) {
      if (label_name == name_wanted) return label_value;
    }
    return "<missing>";
  }
};

struct RecordedMetadata {
  MetadataKind kind;
  std::string family;
  std::string text;
  std::size_t line;
  bool operator==(const RecordedMetadata&) const = default;
};

struct RecordedNonNumeric {
  std::string name;
  std::vector<std::pair<std::string, std::string>> labels;
  std::string value_text;
  bool out_of_range = false;
  std::size_t line = 0;
  bool operator==(const RecordedNonNumeric&) const = default;
};

class Recorder : public TextVisitor {
 public:
  void OnSample(const TextSample& sample) override {
    RecordedSample copy;
    copy.name = std::string(sample.name);
    for (const Label& label : sample.labels) {
      copy.labels.emplace_back(std::string(label.name), std::string(label.value));
    }
    copy.value = sample.value;
    copy.timestamp_s = sample.timestamp_s;
    copy.line = sample.line;
    samples.push_back(std::move(copy));
  }
  void OnMetadata(const TextMetadata& metadata) override {
    metadata_seen.push_back(RecordedMetadata{metadata.kind, std::string(metadata.family), std::string(metadata.text),
                                             metadata.line});
  }
  void OnNonNumericSample(const NonNumericSample& sample) override {
    RecordedNonNumeric copy;
    copy.name = std::string(sample.name);
    for (const Label& label : sample.labels) {
      copy.labels.emplace_back(std::string(label.name), std::string(label.value));
    }
    copy.value_text = std::string(sample.value_text);
    copy.out_of_range = sample.out_of_range;
    copy.line = sample.line;
    non_numeric.push_back(std::move(copy));
  }

  void OnStrayLine(const StrayLine& line) override { stray.emplace_back(line.line, std::string(line.text)); }

  std::vector<RecordedSample> samples;
  std::vector<RecordedMetadata> metadata_seen;
  std::vector<RecordedNonNumeric> non_numeric;
  std::vector<std::pair<std::size_t, std::string>> stray;  // (line, text)
};

struct Parsed {
  std::optional<ReadStats> stats;
  std::optional<Error> error;
  std::vector<RecordedSample> samples;
  std::vector<RecordedMetadata> metadata;
  std::vector<RecordedNonNumeric> non_numeric;
  std::vector<std::pair<std::size_t, std::string>> stray;

  std::string message() const { return error ? error->message : std::string(); }
};

Parsed Collect(const Result<ReadStats>& result, Recorder& recorder) {
  Parsed parsed;
  if (result.ok()) {
    parsed.stats = result.value();
  } else {
    parsed.error = result.error();
  }
  parsed.samples = std::move(recorder.samples);
  parsed.metadata = std::move(recorder.metadata_seen);
  parsed.non_numeric = std::move(recorder.non_numeric);
  parsed.stray = std::move(recorder.stray);
  return parsed;
}

Parsed ParseView(std::string_view text, const ParseOptions& options, std::string_view name) {
  Recorder recorder;
  const Result<ReadStats> result = ReadPrometheusText(text, name, recorder, options);
  return Collect(result, recorder);
}

Parsed ParseStream(std::istream& in, const ParseOptions& options, std::string_view name) {
  Recorder recorder;
  const Result<ReadStats> result = ReadPrometheusText(in, name, recorder, options);
  return Collect(result, recorder);
}

bool SameNumber(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// The two entry points must agree on everything: stats, error, every call.
void ExpectSameResults(const Parsed& view, const Parsed& stream) {
  ASSERT_EQ(view.stats.has_value(), stream.stats.has_value()) << view.message() << stream.message();
  if (view.stats) {
    EXPECT_EQ(view.stats->bytes, stream.stats->bytes);
    EXPECT_EQ(view.stats->lines, stream.stats->lines);
    EXPECT_EQ(view.stats->samples, stream.stats->samples);
    EXPECT_EQ(view.stats->non_numeric_samples, stream.stats->non_numeric_samples);
    EXPECT_EQ(view.stats->stray_lines, stream.stats->stray_lines);
    EXPECT_EQ(view.stats->saw_eof_marker, stream.stats->saw_eof_marker);
  } else {
    EXPECT_EQ(view.error->code, stream.error->code);
    EXPECT_EQ(view.error->message, stream.error->message);
  }
  ASSERT_EQ(view.samples.size(), stream.samples.size());
  for (std::size_t i = 0; i < view.samples.size(); ++i) {
    const RecordedSample& a = view.samples[i];
    const RecordedSample& b = stream.samples[i];
    EXPECT_EQ(a.name, b.name) << "sample " << i;
    EXPECT_EQ(a.labels, b.labels) << "sample " << i;
    EXPECT_TRUE(SameNumber(a.value, b.value)) << "sample " << i;
    EXPECT_EQ(a.timestamp_s, b.timestamp_s) << "sample " << i;
    EXPECT_EQ(a.line, b.line) << "sample " << i;
  }
  EXPECT_EQ(view.metadata, stream.metadata);
  EXPECT_EQ(view.non_numeric, stream.non_numeric);
  EXPECT_EQ(view.stray, stream.stray);
}

// Parses with both entry points, checks they agree and returns one result.
Parsed Parse(std::string_view text, const ParseOptions& options = {}, std::string_view name = "test.prom") {
  Parsed view = ParseView(text, options, name);
  std::istringstream in{std::string(text)};
  const Parsed stream = ParseStream(in, options, name);
  ExpectSameResults(view, stream);
  return view;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ---------------------------------------------------------------------------
// The public dcgm-exporter sample, line by line.

TEST(PrometheusTextReference, EverySampleOfTheDcgmExporterFile) {
  const std::string path = std::string(OFU_TEST_DATA_DIR) + "/dcgm-exporter-sample.prom";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  const Parsed parsed = ParseStream(in, {}, "dcgm-exporter-sample.prom");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.stats->bytes, 1234u);
  EXPECT_EQ(parsed.stats->lines, 8u);
  EXPECT_EQ(parsed.stats->samples, 4u);
  EXPECT_FALSE(parsed.stats->saw_eof_marker);
  EXPECT_THAT(parsed.metadata, IsEmpty());  // its "#" lines are plain comments
  ASSERT_EQ(parsed.samples.size(), 4u);

  const RecordedSample& a100 = parsed.samples[0];
  EXPECT_EQ(a100.line, 3u);
  EXPECT_EQ(a100.name, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE");
  EXPECT_THAT(a100.labels, ElementsAre(Pair("gpu", "0"), Pair("UUID", "GPU-34319582-d595-d1c7-d1d2-179bcfa61660"),
                                       Pair("device", "nvidia0"), Pair("Hostname", "ub20-a100-k8s")));
  EXPECT_DOUBLE_EQ(a100.value, 0.929260);
  EXPECT_FALSE(a100.timestamp_s.has_value());

  const RecordedSample& mig = parsed.samples[1];
  EXPECT_EQ(mig.line, 4u);
  EXPECT_EQ(mig.name, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE");
  EXPECT_THAT(mig.labels, ElementsAre(Pair("gpu", "0"), Pair("UUID", "GPU-34319582-d595-d1c7-d1d2-179bcfa61660"),
                                      Pair("device", "nvidia0"), Pair("GPU_I_PROFILE", "1g.5gb"),
                                      Pair("GPU_I_ID", "13"), Pair("Hostname", "ub20-a100-k8s")));
  EXPECT_DOUBLE_EQ(mig.value, 0.930433);
  EXPECT_FALSE(mig.timestamp_s.has_value());

  const RecordedSample& h100 = parsed.samples[2];
  EXPECT_EQ(h100.line, 6u);
  EXPECT_EQ(h100.name, "DCGM_FI_DEV_SM_CLOCK");
  EXPECT_THAT(h100.labels, ElementsAre(Pair("gpu", "0"), Pair("UUID", "GPU-927d7444-b45a-7c49-8402-5e686e46a026"),
                                       Pair("pci_bus_id", "00000000:00:09.0"), Pair("device", "nvidia0"),
                                       Pair("modelName", "NVIDIA H100 80GB HBM3"), Pair("Hostname", "6d6d7dc3ce21"),
                                       Pair("DCGM_FI_DRIVER_VERSION", "535.183.01")));
  EXPECT_EQ(h100.value, 345.0);
  EXPECT_FALSE(h100.timestamp_s.has_value());

  const RecordedSample& pod = parsed.samples[3];
  EXPECT_EQ(pod.line, 8u);
  EXPECT_EQ(pod.name, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
  EXPECT_THAT(pod.labels, ElementsAre(Pair("gpu", "0"), Pair("UUID", "GPU-58e8f5ea-13cc-013a-d88f-2bcf5ae8bc77"),
                                      Pair("pci_bus_id", "00000000:1A:00.0"), Pair("device", "nvidia0"),
                                      Pair("modelName", "NVIDIA H100 80GB HBM3"), Pair("GPU_I_PROFILE", "1g.10gb"),
                                      Pair("GPU_I_ID", "7"), Pair("Hostname", "gsrh100-074"),
                                      Pair("DCGM_FI_DRIVER_VERSION", "535.129.03"),
                                      Pair("container", "kserve-container"), Pair("namespace", "model-playground-stg"),
                                      Pair("pod", "text-embedding-predictor-00008-deployment-57946f6c67-vdtjl")));
  EXPECT_EQ(pod.value, 0.0);
  EXPECT_FALSE(pod.timestamp_s.has_value());
}

TEST(PrometheusTextReference, StreamAndBufferAgreeOnTheDcgmExporterFile) {
  const std::string path = std::string(OFU_TEST_DATA_DIR) + "/dcgm-exporter-sample.prom";
  const std::string text = ReadFile(path);
  ASSERT_EQ(text.size(), 1234u);
  const Parsed view = ParseView(text, {}, "dcgm-exporter-sample.prom");
  std::ifstream in(path, std::ios::binary);
  const Parsed stream = ParseStream(in, {}, "dcgm-exporter-sample.prom");
  ASSERT_EQ(view.samples.size(), 4u);
  ExpectSameResults(view, stream);
}

// ---------------------------------------------------------------------------
// Label syntax

TEST(PrometheusTextLabels, EscapesAreUnescaped) {
  const Parsed parsed = Parse(R"(m{a="x\\y",b="say \"hi\"",c="l1\nl2",d="plain"} 1)");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 1u);
  EXPECT_THAT(parsed.samples[0].labels,
              ElementsAre(Pair("a", "x\\y"), Pair("b", "say \"hi\""), Pair("c", "l1\nl2"), Pair("d", "plain")));
}

// Many escaped values in one line: each lives in the scratch buffer, and the
// first must still be intact when the visitor sees the last.
TEST(PrometheusTextLabels, ManyEscapedValuesInOneLineStayValid) {
  std::string line = "m{";
  for (int i = 0; i < 200; ++i) {
    line += "l" + std::to_string(i) + "=\"q\\\"" + std::to_string(i) + "\\\\\",";
  }
  line += "} 1\nshort{a=\"\\n\"} 2\n";
  const Parsed parsed = Parse(line);
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 2u);
  ASSERT_EQ(parsed.samples[0].labels.size(), 200u);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(parsed.samples[0].labels[i].first, "l" + std::to_string(i));
    EXPECT_EQ(parsed.samples[0].labels[i].second, "q\"" + std::to_string(i) + "\\");
  }
  EXPECT_THAT(parsed.samples[1].labels, ElementsAre(Pair("a", "\n")));
}

TEST(PrometheusTextLabels, TrailingCommaAndEmptyBraces) {
  const Parsed parsed = Parse("a{x=\"1\",} 2\nb{} 3\nc 4\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 3u);
  EXPECT_THAT(parsed.samples[0].labels, ElementsAre(Pair("x", "1")));
  EXPECT_EQ(parsed.samples[0].value, 2.0);
  EXPECT_THAT(parsed.samples[1].labels, IsEmpty());
  EXPECT_EQ(parsed.samples[1].value, 3.0);
  EXPECT_THAT(parsed.samples[2].labels, IsEmpty());
  EXPECT_EQ(parsed.samples[2].value, 4.0);
}

TEST(PrometheusTextLabels, BlanksBetweenTokens) {
  const Parsed parsed = Parse("  m { a = \"1\" ,\tb=\"2\" , }\t4   1700000000000  \nn{a=\"1\"}5\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[0].name, "m");
  EXPECT_THAT(parsed.samples[0].labels, ElementsAre(Pair("a", "1"), Pair("b", "2")));
  EXPECT_EQ(parsed.samples[0].value, 4.0);
  EXPECT_EQ(parsed.samples[0].timestamp_s, 1700000000.0);
  EXPECT_EQ(parsed.samples[1].value, 5.0);
}

TEST(PrometheusTextLabels, ValuesKeepSpacesCommasBracesAndUtf8) {
  const Parsed parsed = Parse("m{a=\"x, y} = z\",b=\"H100 \xC3\xA9\xE2\x82\xAC\"} 1\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 1u);
  EXPECT_THAT(parsed.samples[0].labels, ElementsAre(Pair("a", "x, y} = z"), Pair("b", "H100 \xC3\xA9\xE2\x82\xAC")));
}

TEST(PrometheusTextLabels, MetricNamesMayHaveColons) {
  const Parsed parsed = Parse("job:gpu_util:avg5m{job=\"x\"} 0.5\n_under 1\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[0].name, "job:gpu_util:avg5m");
  EXPECT_EQ(parsed.samples[1].name, "_under");
}

// ---------------------------------------------------------------------------
// Values and timestamps

TEST(PrometheusTextValues, FloatsAsGoParsesThem) {
  struct Case {
    const char* token;
    double expected;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Case cases[] = {
      {"0.929260", 0.929260},
      {"345", 345},
      {"1e3", 1000},
      {"-2.5E-2", -0.025},
      {"+7", 7},
      {".5", 0.5},
      {"5.", 5},
      {"0x1p3", 8},
      {"-0x1.8p1", -3},
      {"+Inf", inf},
      {"-Inf", -inf},
      {"Inf", inf},
      {"inf", inf},
      {"+infinity", inf},
      {"-INFINITY", -inf},
      {"1e-400", 0},
      {"4.9e-324", 4.9e-324},
      {"1.7976931348623157e308", 1.7976931348623157e308},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.token);
    const Parsed parsed = Parse(std::string("m ") + c.token + "\n");
    ASSERT_TRUE(parsed.stats) << parsed.message();
    ASSERT_EQ(parsed.samples.size(), 1u);
    EXPECT_EQ(parsed.samples[0].value, c.expected);
  }
}

TEST(PrometheusTextValues, NaNInAnyCaseAndSignedZero) {
  const Parsed parsed = Parse("a NaN\nb nan\nc NAN\nd -0\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 4u);
  EXPECT_TRUE(std::isnan(parsed.samples[0].value));
  EXPECT_TRUE(std::isnan(parsed.samples[1].value));
  EXPECT_TRUE(std::isnan(parsed.samples[2].value));
  EXPECT_EQ(parsed.samples[3].value, 0.0);
  EXPECT_TRUE(std::signbit(parsed.samples[3].value));
}

std::optional<double> TimestampOf(std::string_view line, TimestampUnit unit = TimestampUnit::kAuto) {
  ParseOptions options;
  options.timestamps = unit;
  const Parsed parsed = Parse(line, options);
  EXPECT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.samples.size(), 1u);
  return parsed.samples.empty() ? std::nullopt : parsed.samples[0].timestamp_s;
}

double SecondsOf(std::string_view line, TimestampUnit unit = TimestampUnit::kAuto) {
  return TimestampOf(line, unit).value_or(std::numeric_limits<double>::quiet_NaN());
}

TEST(PrometheusTextTimestamps, AutomaticRule) {
  EXPECT_EQ(TimestampOf("m 1\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(SecondsOf("m 1 1700000000123\n"), 1700000000.123);  // 0.0.4 milliseconds
  EXPECT_EQ(SecondsOf("m 1 1700000000\n"), 1700000000.0);              // integer seconds
  EXPECT_EQ(SecondsOf("m 1 1700000000.250\n"), 1700000000.25);         // OpenMetrics seconds
  EXPECT_EQ(SecondsOf("m 1 1.7e9\n"), 1.7e9);
  EXPECT_EQ(SecondsOf("m 1 99999999999\n"), 99999999999.0);  // just under 1e11: seconds
  EXPECT_EQ(SecondsOf("m 1 100000000000\n"), 100000000.0);   // 1e11: milliseconds
  EXPECT_DOUBLE_EQ(SecondsOf("m 1 -1700000000123\n"), -1700000000.123);
  EXPECT_EQ(SecondsOf("m 1 +5\n"), 5.0);
  EXPECT_EQ(SecondsOf("m 1 0\n"), 0.0);
}

TEST(PrometheusTextTimestamps, OptionsOverrideTheRule) {
  EXPECT_EQ(SecondsOf("m 1 1700000000\n", TimestampUnit::kMilliseconds), 1700000.0);
  EXPECT_DOUBLE_EQ(SecondsOf("m 1 1700000000.5\n", TimestampUnit::kMilliseconds), 1700000.0005);
  EXPECT_EQ(SecondsOf("m 1 1700000000123\n", TimestampUnit::kSeconds), 1700000000123.0);
  EXPECT_EQ(SecondsOf("m 1 1700000000.5\n", TimestampUnit::kSeconds), 1700000000.5);
}

// ---------------------------------------------------------------------------
// Metadata, OpenMetrics, comments

TEST(PrometheusTextMetadata, OpenMetricsFileWithUnitsExemplarsAndEof) {
  const char* text =
      "# TYPE gpu_energy_joules counter\n"
      "# UNIT gpu_energy_joules joules\n"
      "# HELP gpu_energy_joules Energy used by the GPU since boot.\n"
      "gpu_energy_joules_total{gpu=\"0\"} 123.5 1700000000.250 # {trace_id=\"abc123\"} 1.0 "
      "1700000000.125\n"
      "gpu_energy_joules_created{gpu=\"0\"} 1699990000.0 1700000000.250\n"
      "# TYPE gpu_info info\n"
      "gpu_info{gpu=\"0\",model=\"NVIDIA H100 80GB HBM3\"} 1\n"
      "gpu_temp_celsius{gpu=\"0\"} 41 # {span=\"x\"} 41\n"
      "# EOF\n";
  const Parsed parsed = Parse(text, {}, "om.txt");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_TRUE(parsed.stats->saw_eof_marker);
  EXPECT_EQ(parsed.stats->lines, 9u);
  EXPECT_EQ(parsed.stats->samples, 4u);

  EXPECT_THAT(parsed.metadata, ElementsAre(RecordedMetadata{MetadataKind::kType, "gpu_energy_joules", "counter", 1},
                                           RecordedMetadata{MetadataKind::kUnit, "gpu_energy_joules", "joules", 2},
                                           RecordedMetadata{MetadataKind::kHelp, "gpu_energy_joules",
                                                            "Energy used by the GPU since boot.", 3},
                                           RecordedMetadata{MetadataKind::kType, "gpu_info", "info", 6}));

  ASSERT_EQ(parsed.samples.size(), 4u);
  EXPECT_EQ(parsed.samples[0].name, "gpu_energy_joules_total");
  EXPECT_THAT(parsed.samples[0].labels, ElementsAre(Pair("gpu", "0")));  // no exemplar labels
  EXPECT_EQ(parsed.samples[0].value, 123.5);
  EXPECT_EQ(parsed.samples[0].timestamp_s, 1700000000.25);
  EXPECT_EQ(parsed.samples[0].line, 4u);
  EXPECT_EQ(parsed.samples[1].name, "gpu_energy_joules_created");
  EXPECT_EQ(parsed.samples[1].value, 1699990000.0);
  EXPECT_EQ(parsed.samples[1].timestamp_s, 1700000000.25);
  EXPECT_EQ(parsed.samples[2].label("model"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(parsed.samples[2].timestamp_s, std::nullopt);
  EXPECT_THAT(parsed.samples[3].labels, ElementsAre(Pair("gpu", "0")));
  EXPECT_EQ(parsed.samples[3].value, 41.0);
  EXPECT_EQ(parsed.samples[3].timestamp_s, std::nullopt);
}

TEST(PrometheusTextMetadata, AllKnownTypes) {
  const Parsed parsed = Parse(
      "# TYPE a counter\n# TYPE b gauge\n# TYPE c histogram\n# TYPE d summary\n# TYPE e untyped\n"
      "# TYPE f unknown\n# TYPE g info\n# TYPE h stateset\n# TYPE i gaugehistogram\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.metadata.size(), 9u);
  EXPECT_EQ(parsed.metadata[8].family, "i");
  EXPECT_EQ(parsed.metadata[8].text, "gaugehistogram");
}

TEST(PrometheusTextMetadata, HelpTextIsUnescapedLeniently) {
  const Parsed parsed = Parse(R"(# HELP m First\nsecond \\ back \"q\" and \t kept)"
                              "\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.metadata.size(), 1u);
  EXPECT_EQ(parsed.metadata[0].text, "First\nsecond \\ back \"q\" and \\t kept");
}

TEST(PrometheusTextMetadata, EmptyHelpAndOtherCommentsAreFine) {
  const Parsed parsed = Parse("# HELP m\n#\n# just a comment\n#HELPER not metadata\n   \n\t\n# EOF x\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_FALSE(parsed.stats->saw_eof_marker);  // "# EOF x" is a comment
  ASSERT_EQ(parsed.metadata.size(), 1u);
  EXPECT_EQ(parsed.metadata[0].kind, MetadataKind::kHelp);
  EXPECT_EQ(parsed.metadata[0].text, "");
  EXPECT_EQ(parsed.stats->lines, 7u);
  EXPECT_EQ(parsed.stats->samples, 0u);
}

TEST(PrometheusTextEof, BlankLinesMayFollowEof) {
  const Parsed parsed = Parse("a 1\n# EOF\n\n   \n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_TRUE(parsed.stats->saw_eof_marker);
  EXPECT_EQ(parsed.stats->samples, 1u);
}

TEST(PrometheusTextEof, TextAfterEofIsAnError) {
  const Parsed sample_after = Parse("a 1\n# EOF\nb 2\n", {}, "om.txt");
  ASSERT_TRUE(sample_after.error);
  EXPECT_EQ(sample_after.error->code, ErrorCode::kMalformedInput);
  EXPECT_EQ(sample_after.message(), "om.txt:3: text after \"# EOF\"");

  const Parsed comment_after = Parse("# EOF\n\n# another\n", {}, "om.txt");
  EXPECT_EQ(comment_after.message(), "om.txt:3: text after \"# EOF\"");
}

// ---------------------------------------------------------------------------
// Line ends and file shapes

TEST(PrometheusTextLines, CrlfLineEnds) {
  const Parsed parsed = Parse("# TYPE a gauge\r\na 1\r\nb{x=\"y\"} 2 1700000000000\r\n\r\n# EOF\r\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_TRUE(parsed.stats->saw_eof_marker);
  EXPECT_EQ(parsed.stats->lines, 5u);
  ASSERT_EQ(parsed.metadata.size(), 1u);
  EXPECT_EQ(parsed.metadata[0].text, "gauge");
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[0].value, 1.0);
  EXPECT_THAT(parsed.samples[1].labels, ElementsAre(Pair("x", "y")));
  EXPECT_EQ(parsed.samples[1].timestamp_s, 1700000000.0);
}

TEST(PrometheusTextLines, LastLineWithoutNewline) {
  const Parsed parsed = Parse("a 1\nb{g=\"0\"} 2 1700000000000");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.stats->lines, 2u);
  EXPECT_EQ(parsed.stats->bytes, 28u);
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[1].value, 2.0);
  EXPECT_EQ(parsed.samples[1].timestamp_s, 1700000000.0);
  EXPECT_EQ(parsed.samples[1].line, 2u);

  const Parsed crlf = Parse("a 1\r\nb 2\r");
  ASSERT_TRUE(crlf.stats) << crlf.message();
  ASSERT_EQ(crlf.samples.size(), 2u);
  EXPECT_EQ(crlf.samples[1].value, 2.0);
}

TEST(PrometheusTextLines, EmptyAndBlankInputs) {
  const Parsed empty = Parse("");
  ASSERT_TRUE(empty.stats);
  EXPECT_EQ(empty.stats->lines, 0u);
  EXPECT_EQ(empty.stats->bytes, 0u);
  const Parsed blank = Parse("\n\n \t\n");
  ASSERT_TRUE(blank.stats);
  EXPECT_EQ(blank.stats->lines, 3u);
  EXPECT_EQ(blank.stats->samples, 0u);
}

// Appends a comment line that brings `text` to exactly `size` bytes.
void PadTo(std::string& text, std::size_t size) {
  ASSERT_GE(size, text.size() + 2);
  const std::size_t filler = size - text.size() - 2;
  text += '#';
  text.append(filler, 'p');
  text += '\n';
}

// A file over three 1 MiB chunks, with a CRLF split across the first chunk
// boundary, a line cut inside a label value by the second, and a line ending
// exactly on the third.
TEST(PrometheusTextLines, LinesAcrossChunkBoundaries) {
  std::string text;
  std::vector<std::pair<std::string, double>> expected;  // series label, value
  std::size_t next_index = 0;
  auto add_plain = [&] {
    const std::string series = std::to_string(next_index);
    text += "chunk_test{series=\"" + series + "\",pad=\"" + std::string(next_index % 61, 'x') + "\"} " + series +
            ".5 " + std::to_string(1700000000000 + next_index) + "\n";
    expected.emplace_back(series, static_cast<double>(next_index) + 0.5);
    ++next_index;
  };
  auto fill_until = [&](std::size_t limit) {
    while (text.size() < limit) add_plain();
  };

  fill_until(kMiB - 400);
  const std::string crlf_line = "crlf_at_1mib{series=\"crlf\"} 11";
  PadTo(text, kMiB - 1 - crlf_line.size());
  text += crlf_line + "\r\n";
  ASSERT_EQ(text[kMiB - 1], '\r');
  ASSERT_EQ(text[kMiB], '\n');
  expected.emplace_back("crlf", 11.0);
  const std::size_t crlf_index = expected.size() - 1;

  fill_until(2 * kMiB - 400);
  PadTo(text, 2 * kMiB - 27);
  text += "straddles_2mib{series=\"straddle\"} 22 1700000000000\n";
  ASSERT_EQ(text.substr(2 * kMiB - 4, 8), "straddle");  // the cut is inside the value
  expected.emplace_back("straddle", 22.0);
  const std::size_t straddle_index = expected.size() - 1;

  fill_until(3 * kMiB - 400);
  const std::string exact_line = "ends_at_3mib{series=\"exact\"} 33";
  PadTo(text, 3 * kMiB - 1 - exact_line.size());
  text += exact_line + "\n";
  ASSERT_EQ(text.size(), 3 * kMiB);
  expected.emplace_back("exact", 33.0);
  const std::size_t exact_index = expected.size() - 1;

  fill_until(3 * kMiB + 1000);
  text += "last_line{series=\"last\"} 44";  // no final newline
  expected.emplace_back("last", 44.0);

  const Parsed parsed = Parse(text);
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.stats->bytes, text.size());
  EXPECT_EQ(parsed.stats->samples, expected.size());
  ASSERT_EQ(parsed.samples.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(parsed.samples[i].label("series"), expected[i].first) << "sample " << i;
    ASSERT_EQ(parsed.samples[i].value, expected[i].second) << "sample " << i;
  }
  EXPECT_EQ(parsed.samples[crlf_index].name, "crlf_at_1mib");
  EXPECT_THAT(parsed.samples[crlf_index].labels, ElementsAre(Pair("series", "crlf")));
  EXPECT_EQ(parsed.samples[straddle_index].name, "straddles_2mib");
  EXPECT_EQ(parsed.samples[straddle_index].timestamp_s, 1700000000.0);
  EXPECT_EQ(parsed.samples[exact_index].name, "ends_at_3mib");
  EXPECT_EQ(parsed.samples.back().name, "last_line");
}

TEST(PrometheusTextLines, LineOfExactlyOneMiBIsAccepted) {
  std::string line = "m{a=\"\"} 1";
  line.insert(5, kMiB - line.size(), 'v');
  ASSERT_EQ(line.size(), kMiB);
  const Parsed parsed = Parse("x 0\n" + line + "\ny 2\n");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  ASSERT_EQ(parsed.samples.size(), 3u);
  EXPECT_EQ(parsed.samples[1].label("a").size(), kMiB - 9);
}

TEST(PrometheusTextLines, LongerLinesAreRejected) {
  const std::string just_over = "x 0\nm " + std::string(kMiB - 1, '1') + "\ny 2\n";
  EXPECT_EQ(Parse(just_over, {}, "big.prom").message(), "big.prom:2: line longer than 1 MiB");

  // Three MiB with no newline: the stream reader gives up before reading it all.
  const std::string endless = "x 0\n" + std::string(3 * kMiB, 'm') + "\ny 2\n";
  const Parsed parsed = Parse(endless, {}, "big.prom");
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.error->code, ErrorCode::kMalformedInput);
  EXPECT_EQ(parsed.message(), "big.prom:2: line longer than 1 MiB");
  EXPECT_EQ(parsed.samples.size(), 1u);
}

// Two scrapes of the same series, grouped by family in the first and
// interleaved in the second, with metadata repeated: all kept in file order.
TEST(PrometheusTextScrapes, RepeatedSeriesGroupedAndInterleaved) {
  const char* text =
      "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n"
      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1980 1700000000000\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\"} 1975 1700000000000\n"
      "# TYPE DCGM_FI_PROF_PIPE_TENSOR_ACTIVE gauge\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\"} 0.5 1700000000000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"1\"} 0.25 1700000000000\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1410 1700000015000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\"} 0.75 1700000015000\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"1\"} 1400 1700000015000\n"
      "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"1\"} 0 1700000015000\n"
      "# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).\n"
      "# TYPE DCGM_FI_DEV_SM_CLOCK gauge\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1980 1700000030000\n";
  const Parsed parsed = Parse(text);
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.metadata.size(), 5u);
  struct Expected {
    const char* name;
    const char* gpu;
    double value;
    double timestamp_s;
    std::size_t line;
  };
  const Expected expected[] = {
      {"DCGM_FI_DEV_SM_CLOCK", "0", 1980, 1700000000, 3},
      {"DCGM_FI_DEV_SM_CLOCK", "1", 1975, 1700000000, 4},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "0", 0.5, 1700000000, 6},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "1", 0.25, 1700000000, 7},
      {"DCGM_FI_DEV_SM_CLOCK", "0", 1410, 1700000015, 8},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "0", 0.75, 1700000015, 9},
      {"DCGM_FI_DEV_SM_CLOCK", "1", 1400, 1700000015, 10},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "1", 0, 1700000015, 11},
      {"DCGM_FI_DEV_SM_CLOCK", "0", 1980, 1700000030, 14},
  };
  ASSERT_EQ(parsed.samples.size(), std::size(expected));
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(parsed.samples[i].name, expected[i].name);
    EXPECT_THAT(parsed.samples[i].labels, ElementsAre(Pair("gpu", expected[i].gpu)));
    EXPECT_EQ(parsed.samples[i].value, expected[i].value);
    EXPECT_EQ(parsed.samples[i].timestamp_s, expected[i].timestamp_s);
    EXPECT_EQ(parsed.samples[i].line, expected[i].line);
  }
}

// ---------------------------------------------------------------------------
// Malformed input: the first bad line stops the read and is named.

TEST(PrometheusTextErrors, EachMalformedLineIsNamed) {
  struct Case {
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {R"(m{gpu "0"} 1)", R"(expected '=' after label name "gpu")"},
      {R"(m{gpu="0} 1)", "label value is not terminated"},
      {R"(m{gpu="0\)", "label value is not terminated"},
      {"m abc", R"(invalid sample value "abc")"},
      {"m +nan", R"(invalid sample value "+nan")"},
      {"m 0x1", R"(invalid sample value "0x1")"},
      {"m 1e", R"(invalid sample value "1e")"},
      {"m 1e999", R"(sample value "1e999" is out of range)"},
      {"m 1 12x", R"(invalid timestamp "12x")"},
      {"m 1 1.5.5", R"(invalid timestamp "1.5.5")"},
      {"m 1 NaN", R"(invalid timestamp "NaN")"},
      {"m 1 99999999999999999999", R"(invalid timestamp "99999999999999999999")"},
      {R"(m{a="\q"} 1)", R"(unknown escape \q in label value)"},
      {R"(m{a="\t"} 1)", R"(unknown escape \t in label value)"},
      {R"({a="b"} 1)", "metric name missing"},
      {"1m 1", "metric name missing"},
      {"m 1 2 3", "unexpected text after timestamp"},
      {"m", "sample value missing"},
      {R"(m{a="1"})", "sample value missing"},
      {R"(m{1a="x"} 1)", "expected a label name or '}', found '1'"},
      {R"(m{,} 1)", "expected a label name or '}', found ','"},
      {R"(m{a="1" b="2"} 1)", R"(expected ',' or '}' after the value of label "a")"},
      {R"(m{a="1",a="2"} 1)", R"(duplicate label name "a")"},
      {R"(m{a="1")", "label set is not closed with '}'"},
      {R"(m{a=1} 1)", R"(expected '"' to open the value of label "a")"},
      {"m-x 1", R"(invalid character '-' after metric name "m")"},
      {R"(m 1 # trace_id="x")", "exemplar must start with '{'"},
      {R"(m 1 # {a="1"})", "exemplar value missing"},
      {R"(m 1 # {a="1"} x)", R"(invalid exemplar value "x")"},
      {R"(m 1 # {a="1"} 2 3 4)", "unexpected text after exemplar"},
      {"# TYPE m foo", R"(unknown metric type "foo")"},
      {"# TYPE m", "metric type missing in TYPE line"},
      {"# TYPE m gauge extra", R"(unexpected text after metric type "gauge")"},
      {"# HELP", "metric name missing in HELP line"},
      {"# HELP 1m text", R"(invalid metric name "1m" in HELP line)"},
      {"# UNIT m a b", R"(unexpected text after unit "a")"},
      {"m{a=\"\xff\"} 1", R"(value of label "a" is not valid UTF-8)"},
      {"m{a=\"\xC0\xAF\"} 1", R"(value of label "a" is not valid UTF-8)"},  // overlong '/'
      {std::string("m\0 1", 4), "line contains a NUL byte"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const std::string text =
        "# HELP m A gauge.\n"
        "# TYPE m gauge\n"
        "\n"
        "m{gpu=\"0\"} 1\n"
        "# a comment\n"
        "m{gpu=\"1\"} 2 1700000000000\n" +
        c.line + "\nm{gpu=\"2\"} 3\n";
    const Parsed parsed = Parse(text, {}, "name.prom");
    ASSERT_TRUE(parsed.error);
    EXPECT_EQ(parsed.error->code, ErrorCode::kMalformedInput);
    EXPECT_EQ(parsed.message(), "name.prom:7: " + c.reason);
    EXPECT_EQ(parsed.samples.size(), 2u);  // the lines before it were delivered
  }
}

TEST(PrometheusTextErrors, UnprintableBytesAreEscapedInMessages) {
  const Parsed parsed = Parse("m 1\x01\n", {}, "x.prom");
  EXPECT_EQ(parsed.message(), R"(x.prom:1: invalid sample value "1\x01")");
}

// ---------------------------------------------------------------------------
// Values that are not numbers

ParseOptions ReportNonNumeric() {
  ParseOptions options;
  options.non_numeric_values = NonNumericValues::kReport;
  return options;
}

// The default stays Prometheus' answer: the line stops the read.
TEST(PrometheusTextNonNumeric, ByDefaultTheLineIsAnError) {
  const Parsed parsed = Parse("m{gpu=\"0\"} 1\nm{gpu=\"1\"} ERROR - FAILED TO CONVERT TO STRING\nm{gpu=\"2\"} 3\n", {},
                              "x.prom");
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.message(), R"(x.prom:2: invalid sample value "ERROR")");
  EXPECT_EQ(parsed.samples.size(), 1u);
  EXPECT_THAT(parsed.non_numeric, IsEmpty());
}

// What dcgm-exporter writes for a field it cannot format (the line is from
// tests/data/scrapes/ampere-a800-mig.prom, shortened), a DCGM string field
// (dcgm-exporter issue 488), and a number beyond a double: each handed over
// with the rest of its line, and the read goes on.
TEST(PrometheusTextNonNumeric, ReportedWithTheRestOfTheLineAndTheReadGoesOn) {
  const char* text =
      "# TYPE DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION gauge\n"
      "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION{gpu=\"0\",UUID=\"GPU-1f02\",GPU_I_ID=\"3\"} ERROR - FAILED TO "
      "CONVERT TO STRING\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\"} 1410\n"
      "DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR{gpu=\"0\",note=\"a \\\"b\\\"\"} MIG-GPU-66068b5a/3 \t \r\n"
      "big   1e999\n"
      "tiny 1e-999\n"
      "after{} 2 1700000000000\n";
  const Parsed parsed = Parse(text, ReportNonNumeric(), "x.prom");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.stats->samples, 3u);
  EXPECT_EQ(parsed.stats->non_numeric_samples, 3u);
  ASSERT_EQ(parsed.non_numeric.size(), 3u);
  EXPECT_EQ(parsed.non_numeric[0], (RecordedNonNumeric{"DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION",
                                                       {{"gpu", "0"}, {"UUID", "GPU-1f02"}, {"GPU_I_ID", "3"}},
                                                       "ERROR - FAILED TO CONVERT TO STRING",
                                                       false,
                                                       2}));
  EXPECT_EQ(parsed.non_numeric[1], (RecordedNonNumeric{"DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR",
                                                       {{"gpu", "0"}, {"note", "a \"b\""}},
                                                       "MIG-GPU-66068b5a/3",
                                                       false,
                                                       4}));
  EXPECT_EQ(parsed.non_numeric[2], (RecordedNonNumeric{"big", {}, "1e999", true, 5}));
  ASSERT_EQ(parsed.samples.size(), 3u);
  EXPECT_EQ(parsed.samples[0].value, 1410.0);
  EXPECT_EQ(parsed.samples[1].name, "tiny");  // underflow is a number: zero
  EXPECT_EQ(parsed.samples[1].value, 0.0);
  EXPECT_EQ(parsed.samples[2].timestamp_s, 1700000000.0);
  EXPECT_EQ(parsed.samples[2].line, 7u);
}

// A value that starts like a number is still one token: "1 2 3" is a number
// with a bad timestamp after it, so syntax, not a text value.
TEST(PrometheusTextNonNumeric, SyntaxErrorsStillStopTheRead) {
  struct Case {
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {R"(m{gpu="0} ERROR)", "label value is not terminated"},
      {R"(m{gpu="0" ERROR)", R"(expected ',' or '}' after the value of label "gpu")"},
      {R"(m{gpu="\q"} ERROR)", R"(unknown escape \q in label value)"},
      {R"(m{gpu="0",gpu="1"} ERROR)", R"(duplicate label name "gpu")"},
      {R"(m{gpu="0"})", "sample value missing"},
      {"m-x ERROR", R"(invalid character '-' after metric name "m")"},
      {R"({gpu="0"} ERROR)", "metric name missing"},
      {"m 1 ERROR", R"(invalid timestamp "ERROR")"},
      {"m 1 2 3", "unexpected text after timestamp"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const Parsed parsed = Parse("ok 1\n" + c.line + "\nok 2\n", ReportNonNumeric(), "x.prom");
    ASSERT_TRUE(parsed.error);
    EXPECT_EQ(parsed.error->code, ErrorCode::kMalformedInput);
    EXPECT_EQ(parsed.message(), "x.prom:2: " + c.reason);
    EXPECT_THAT(parsed.non_numeric, IsEmpty());
  }
}

// ---------------------------------------------------------------------------
// Lines that cannot be a sample, as people paste scrapes

ParseOptions SkipStray() {
  ParseOptions options;
  options.stray_lines = StrayLines::kSkip;
  return options;
}

// Each line is one people paste around a scrape (curl -v's verbose lines
// and progress meter as curl prints them, a prompt, an elision, markup,
// prose): skipped under kSkip and handed over as written, blanks before it
// removed; the samples around it are read. Synthetic lines, one per kind;
// the real pasted files are read in tests/sources/real_scrapes_test.cc.
TEST(PrometheusTextStrayLines, SkippedAndHandedOverWithTheirLineNumbers) {
  const std::vector<std::string> stray = {
      "$ curl -v localhost:9400/metrics",
      "*   Trying 127.0.0.1:9400...",
      "> GET /metrics HTTP/1.1",
      "< HTTP/1.1 200 OK",
      "% Total    % Received % Xferd  Average Speed   Time    Time     Time  Current",
      "100  8410    0  8410    0     0   820k      0 --:--:-- --:--:-- --:--:--  821k",
      "...",
      "[...]",
      "<code># HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).</code>",
      "</code></pre>",
      "```shell",
      "root@node:~# curl localhost:9400/metrics",
      "curl localhost:9400/metrics",
      "Handling connection for 9400",
      "container=\"ctr\",",
      "* Connection #0 to host localhost left intact",
  };
  std::string text = "a 1\n";
  for (const std::string& line : stray) text += "  " + line + "\n";
  text += "b{gpu=\"0\"} 2\n";
  const Parsed parsed = Parse(text, SkipStray(), "x.prom");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_EQ(parsed.stats->samples, 2u);
  EXPECT_EQ(parsed.stats->stray_lines, stray.size());
  ASSERT_EQ(parsed.stray.size(), stray.size());
  for (std::size_t i = 0; i < stray.size(); ++i) {
    EXPECT_EQ(parsed.stray[i], std::make_pair(i + 2, stray[i]));
  }
  ASSERT_EQ(parsed.samples.size(), 2u);
  EXPECT_EQ(parsed.samples[1].line, stray.size() + 2);
}

// Without kSkip the first such line is today's error, naming file and line.
TEST(PrometheusTextStrayLines, ByDefaultTheFirstOneIsAnError) {
  const Parsed parsed = Parse("a 1\n* Connection #0 to host localhost left intact\nb 2\n", {}, "x.prom");
  ASSERT_TRUE(parsed.error);
  EXPECT_EQ(parsed.message(), "x.prom:2: metric name missing");
  EXPECT_THAT(parsed.stray, IsEmpty());
}

// What looks like a sample stays an error under kSkip: skipping it could
// hide a broken reading. Numbers after a bare name are samples.
TEST(PrometheusTextStrayLines, BrokenSamplesAreStillErrors) {
  struct Case {
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {R"(m{gpu="0} 1)", "label value is not terminated"},
      {R"(m{gpu="0" 1)", R"(expected ',' or '}' after the value of label "gpu")"},
      {R"({gpu="0"} 1)", "metric name missing"},
      {"m", "sample value missing"},
      {"m 1 x", R"(invalid timestamp "x")"},
      {R"(m{gpu="0"} ERROR)", R"(invalid sample value "ERROR")"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    const Parsed parsed = Parse("ok 1\n" + c.line + "\nok 2\n", SkipStray(), "x.prom");
    ASSERT_TRUE(parsed.error);
    EXPECT_EQ(parsed.message(), "x.prom:2: " + c.reason);
  }
  const Parsed numbers = Parse("big 1e999\nnan NaN\ninf +Inf\n", SkipStray(), "x.prom");
  ASSERT_TRUE(numbers.error);  // out of range is a number, too big: not stray
  EXPECT_EQ(numbers.message(), R"(x.prom:1: sample value "1e999" is out of range)");
}

// curl -v after an OpenMetrics body: its closing lines come after "# EOF".
TEST(PrometheusTextStrayLines, SkippedAfterEofButSamplesThereAreStillErrors) {
  const Parsed parsed = Parse("a 1\n# EOF\n* Connection #0 to host localhost left intact\n", SkipStray(), "x.om");
  ASSERT_TRUE(parsed.stats) << parsed.message();
  EXPECT_TRUE(parsed.stats->saw_eof_marker);
  EXPECT_EQ(parsed.stray.size(), 1u);
  const Parsed sample_after = Parse("a 1\n# EOF\nb 2\n", SkipStray(), "x.om");
  ASSERT_TRUE(sample_after.error);
  EXPECT_EQ(sample_after.message(), R"(x.om:3: text after "# EOF")");
}

// ---------------------------------------------------------------------------
// Stream failures

// Hands out its text once, then fails as a broken disk would.
class FailingStreambuf : public std::streambuf {
 public:
  explicit FailingStreambuf(std::string text) : text_(std::move(text)) {}

 protected:
  int_type underflow() override {
    if (served_) throw std::runtime_error("device error");
    served_ = true;
    setg(text_.data(), text_.data(), text_.data() + text_.size());
    return traits_type::to_int_type(text_[0]);
  }

 private:
  std::string text_;
  bool served_ = false;
};

TEST(PrometheusTextStream, ReadFailureIsAnIoError) {
  FailingStreambuf buffer("a 1\nb 2\n");
  std::istream in(&buffer);
  Recorder recorder;
  const Result<ReadStats> result = ReadPrometheusText(in, "broken.prom", recorder);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kIo);
  EXPECT_THAT(result.error().message, StartsWith("broken.prom: "));
}

TEST(PrometheusTextStream, UnopenedFileIsAnIoError) {
  std::ifstream in("/nonexistent/ofu/metrics.prom");
  Recorder recorder;
  const Result<ReadStats> result = ReadPrometheusText(in, "metrics.prom", recorder);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kIo);
  EXPECT_THAT(result.error().message, StartsWith("metrics.prom: "));
}

}  // namespace
}  // namespace ofu::formats
