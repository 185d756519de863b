#include "ofu/formats/dcgmi_dmon.h"

#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ofu::formats {
namespace {

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Row {
  DmonEntityKind kind;
  std::string entity;
  std::string id;
  std::vector<std::optional<double>> values;
  std::size_t line;
};

class Collect : public DmonVisitor {
 public:
  void OnHeader(const DmonHeader& h) override { columns.assign(h.columns.begin(), h.columns.end()); }
  void OnRow(const DmonRow& r) override {
    rows.push_back(Row{r.kind, std::string(r.entity), std::string(r.id), {r.values.begin(), r.values.end()}, r.line});
  }
  void OnStrayLine(const DmonStrayLine& s) override { stray.emplace_back(s.text); }

  std::vector<std::string> columns;
  std::vector<Row> rows;
  std::vector<std::string> stray;
};

// The real paste (tests/data/dmon): DCGM's older layout, "# EntityId", no
// units line, numbers right-aligned, inside a Markdown fence.
TEST(DcgmiDmon, RealOlderLayoutInAFence) {
  const std::string text = ReadText(std::string(OFU_TEST_DATA_DIR) + "/dmon/nvidia-gcp-samples-triton-gke-t4-bert.txt");
  ASSERT_TRUE(LooksLikeDcgmiDmon(text));
  Collect c;
  const auto stats = ReadDcgmiDmon(text, "t4.txt", c);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  EXPECT_EQ(c.columns,
            (std::vector<std::string>{"GPUTL", "MCUTL", "DRAMA", "SMACT", "SMOCC", "TENSO", "PCITX", "PCIRX"}));
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].kind, DmonEntityKind::kGpu);
  EXPECT_EQ(c.rows[0].entity, "GPU 2");
  EXPECT_EQ(c.rows[0].id, "2");
  EXPECT_EQ(c.rows[0].line, 3u);
  EXPECT_EQ(c.rows[0].values[5], 0.540);
  EXPECT_EQ(c.rows[2].values[7], 4204315331.0);
  EXPECT_EQ(c.stray, (std::vector<std::string>{"```text", "```"}));
  EXPECT_FALSE(stats->delay_ms.has_value());
}

// The real scrapes are not dmon tables.
TEST(DcgmiDmon, ScrapesAreNotDmonTables) {
  for (const char* name : {"turing-tesla-t4.prom", "pasted-dcgm-exporter-readme-quickstart.prom"}) {
    EXPECT_FALSE(LooksLikeDcgmiDmon(ReadText(std::string(OFU_TEST_DATA_DIR) + "/scrapes/" + name))) << name;
  }
}

// SYNTHETIC, in an older dmon layout: "# Entity" then
// an indented "Id" units line, GPU and MIG rows; a link row and a CPU core
// row are entities too (kind kOther).
TEST(DcgmiDmon, OlderSpacedHeaderAndOtherEntities) {
  Collect c;
  const auto stats = ReadDcgmiDmon(
      "  # Entity  GRACT  TENSO\n"
      "      Id\n"
      "   GPU 0  0.429  0.011\n"
      "   GPU-I 1  0.750  0.020\n"
      "   GPU-CI 4  0.750  0.020\n"
      "   GPU 0 LINK 1  0.1  0.2\n"
      "   CPU Core 7  0.1  0.2\n",
      "x", c);
  ASSERT_TRUE(stats.ok()) << stats.error().message;
  ASSERT_EQ(c.rows.size(), 5u);
  EXPECT_EQ(c.rows[1].kind, DmonEntityKind::kGpuInstance);
  EXPECT_EQ(c.rows[1].id, "1");
  EXPECT_EQ(c.rows[2].kind, DmonEntityKind::kComputeInstance);
  EXPECT_EQ(c.rows[3].kind, DmonEntityKind::kOther);
  EXPECT_EQ(c.rows[3].entity, "GPU 0 LINK 1");
  EXPECT_EQ(c.rows[4].entity, "CPU Core 7");
  EXPECT_TRUE(c.stray.empty());
}

TEST(DcgmiDmon, DelayFromTheCommandLine) {
  Collect c;
  const auto stats = ReadDcgmiDmon("root@h:~# dcgmi dmon -e 1004 --delay=250\n#Entity TENSO\nID\nGPU 0 0.5\n", "x", c);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->delay_ms, 250);
  EXPECT_EQ(stats->delay_line, 1u);
}

TEST(DcgmiDmon, RowsThatCannotBeReadStopTheRead) {
  Collect c;
  auto r = ReadDcgmiDmon("GPU 0 0.5\n#Entity TENSO\n", "x.txt", c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "x.txt:1: a dcgmi dmon row before any '#Entity' header line");
  r = ReadDcgmiDmon("#Entity TENSO\nGPU 0 0.5 0.6\n", "x.txt", c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "x.txt:2: a dcgmi dmon row with more values than the header has columns");
  r = ReadDcgmiDmon("just text\n", "x.txt", c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "x.txt: no dcgmi dmon header line ('#Entity ...')");
}

}  // namespace
}  // namespace ofu::formats
