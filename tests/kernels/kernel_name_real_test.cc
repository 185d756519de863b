// The kernel-name parser and classifier against tests/data/kernel-names-real.tsv:
// kernel names as public traces, issue threads and CUTLASS outputs print them.
// Every GEMM row must read to exactly its listed fields, every not-GEMM row
// must be classified as not a GEMM, and the share of GEMM names that parse
// with tile and precision is printed and must stay at or above 98 %.
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/tsv.h"

#include "ofu/kernels/family_table.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::kernels {
namespace {

// The columns of kernel-names-real.tsv, in order.
enum Column {
  kName,
  kExpected,
  kFamily,
  kTileM,
  kTileN,
  kTileK,
  kStages,
  kClusterM,
  kClusterN,
  kPrecision,
  kTensorCore,
  kSplitK,
  kTwoCta,
  kGpu,
  kSource,
  kColumns,
};

struct Row {
  int line = 0;
  std::vector<std::string> cells;
  const std::string& operator[](Column column) const { return cells[column]; }
};

using ofu::testing::SplitTabs;

// The rows after the comment lines and the one header line.
const std::vector<Row>& Rows() {
  static const std::vector<Row> rows = [] {
    std::vector<Row> out;
    std::ifstream in(std::string(OFU_TEST_DATA_DIR) + "/kernel-names-real.tsv");
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (line.empty() || line[0] == '#' || line.rfind("name\t", 0) == 0) continue;
      out.push_back(Row{number, SplitTabs(line)});
    }
    return out;
  }();
  return rows;
}

std::optional<int> ExpectedInt(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  return std::stoi(cell);
}
std::optional<bool> ExpectedBool(const std::string& cell) {
  if (cell.empty()) return std::nullopt;
  return cell == "true";
}
std::optional<std::string> PrecisionOf(const KernelInfo& info) {
  if (!info.precision) return std::nullopt;
  return std::string(PrecisionName(*info.precision));
}
bool IsGemmRow(const Row& row) { return row[kExpected] == "gemm" || row[kExpected] == "gemm_unparsed"; }

// The repository a source URL names ("owner/name"), or "issue threads".
std::string SourceGroup(const std::string& url) {
  constexpr std::string_view kGithub = "https://github.com/";
  if (url.rfind(kGithub, 0) != 0 || url.find("/blob/") == std::string::npos) return "issue threads";
  const std::size_t owner_end = url.find('/', kGithub.size());
  const std::size_t repo_end = url.find('/', owner_end + 1);
  return url.substr(kGithub.size(), repo_end - kGithub.size());
}

TEST(KernelNamesReal, TableIsWellFormed) {
  // Guards against a missing or truncated file, which would leave nothing to check.
  ASSERT_FALSE(Rows().empty()) << "tests/data/kernel-names-real.tsv not found or empty";
  std::set<std::string> names;
  int gemm = 0, not_gemm = 0;
  for (const Row& row : Rows()) {
    ASSERT_EQ(row.cells.size(), static_cast<std::size_t>(kColumns)) << "line " << row.line;
    EXPECT_TRUE(names.insert(row[kName]).second) << "line " << row.line << ": the name is listed twice";
    EXPECT_EQ(row[kSource].rfind("https://github.com/", 0), 0u) << "line " << row.line << ": no source URL";
    EXPECT_TRUE(IsGemmRow(row) || row[kExpected] == "not_gemm") << "line " << row.line << ": " << row[kExpected];
    (IsGemmRow(row) ? gemm : not_gemm) += 1;
  }
  EXPECT_GE(gemm, 300);
  EXPECT_GE(not_gemm, 100);
}

TEST(KernelNamesReal, EveryRowReadsAsListed) {
  for (const Row& row : Rows()) {
    if (row.cells.size() != kColumns) continue;  // reported by TableIsWellFormed
    SCOPED_TRACE(fmt::format("kernel-names-real.tsv line {}: {}", row.line, row[kName].substr(0, 160)));
    const auto parsed = ParseKernelName(row[kName]);
    const KernelClass kind = ClassifyKernelName(row[kName]);
    if (row[kExpected] == "not_gemm") {
      EXPECT_FALSE(parsed.ok()) << "parsed as " << FamilyName(parsed->family);
      EXPECT_FALSE(kind.gemm) << "classified as a GEMM";
      continue;
    }
    EXPECT_TRUE(kind.gemm) << "not classified as a GEMM: " << kind.reason;
    EXPECT_EQ(kind.tensor_core, ExpectedBool(row[kTensorCore]));
    if (row[kExpected] == "gemm_unparsed") {
      EXPECT_FALSE(parsed.ok()) << "listed as not read, but parsed as " << FamilyName(parsed->family);
      EXPECT_FALSE(kind.reason.empty());
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    const KernelInfo& info = *parsed;
    EXPECT_EQ(FamilyName(info.family), row[kFamily]);
    EXPECT_EQ(info.tile_m, ExpectedInt(row[kTileM]));
    EXPECT_EQ(info.tile_n, ExpectedInt(row[kTileN]));
    EXPECT_EQ(info.tile_k, ExpectedInt(row[kTileK]));
    EXPECT_EQ(info.stages, ExpectedInt(row[kStages]));
    EXPECT_EQ(info.cluster_m, ExpectedInt(row[kClusterM]));
    EXPECT_EQ(info.cluster_n, ExpectedInt(row[kClusterN]));
    EXPECT_EQ(PrecisionOf(info), row[kPrecision].empty() ? std::nullopt : std::optional<std::string>(row[kPrecision]));
    EXPECT_EQ(info.tensor_core, ExpectedBool(row[kTensorCore]));
    EXPECT_EQ(info.split_k, row[kSplitK] == "true");
    EXPECT_EQ(info.two_cta, row[kTwoCta] == "true");
    EXPECT_TRUE(info.unknown_flags.empty()) << "unknown flag " << info.unknown_flags.front();
    EXPECT_TRUE(kind.reason.empty());
  }
}

// A kernel family is one row of kernels/family_table.cc: every family has
// exactly one, the rows' families are the enum's values with none left out
// (an enum value without a row could never be parsed: the rows hold the
// parsers), and each row's example reads as that family. A real example is
// a `gemm` row of this table, whose every field EveryRowReadsAsListed checks.
TEST(KernelFamilyTable, EveryFamilyHasOneRowWithAnExampleThatReadsAsListed) {
  const auto rows = detail::FamilyRows();
  std::set<int> families;
  std::set<std::string_view> names;
  for (const detail::FamilyRow& row : rows) {
    SCOPED_TRACE(std::string(row.name));
    EXPECT_TRUE(families.insert(static_cast<int>(row.family)).second) << "two rows for one family";
    EXPECT_TRUE(names.insert(row.name).second) << "two rows with one name";
    EXPECT_EQ(FamilyName(row.family), row.name);
    EXPECT_EQ(detail::FindRow(row.family), &row);
    // A row is found one way: by its kernel function, or by its identifier.
    EXPECT_NE(row.parse_tokens == nullptr, row.is_kernel == nullptr && row.parse_function == nullptr);
    EXPECT_EQ(row.is_kernel == nullptr, row.parse_function == nullptr);
    if (row.parse_tokens != nullptr) {
      EXPECT_TRUE(row.prefixes[0].size() > 0 || row.claims != nullptr) << "an identifier row needs a prefix or a check";
    }
    const auto parsed = ParseKernelName(row.example);
    if (!row.reads_fields) {
      // The parser names the family and says why no field is read.
      ASSERT_FALSE(parsed.ok()) << row.example;
      EXPECT_EQ(parsed.error().message.rfind(std::string(row.name) + ":", 0), 0u) << parsed.error().message;
      continue;
    }
    ASSERT_TRUE(parsed.ok()) << row.example << ": " << parsed.error().message;
    EXPECT_EQ(parsed->family, row.family) << row.example;
    if (row.example_is_synthetic) continue;
    bool listed = false;
    for (const Row& real : Rows()) {
      if (real.cells.size() != kColumns || real[kName] != row.example) continue;
      listed = true;
      EXPECT_EQ(real[kExpected], "gemm") << "line " << real.line;
      EXPECT_EQ(real[kFamily], row.name) << "line " << real.line;
    }
    EXPECT_TRUE(listed) << "the example is not a row of kernel-names-real.tsv: " << row.example;
  }
  // The enum's values 0..n-1 all have rows.
  ASSERT_FALSE(families.empty());
  EXPECT_EQ(*families.begin(), 0);
  EXPECT_EQ(*families.rbegin(), static_cast<int>(families.size()) - 1);
  // Every family the real names are listed under has a row.
  for (const Row& real : Rows()) {
    if (real.cells.size() == kColumns && real[kExpected] == "gemm") {
      EXPECT_TRUE(names.count(real[kFamily]) == 1) << "line " << real.line << ": no row for " << real[kFamily];
    }
  }
}

// Complex kernels (cgemm, gcgemm, zgemm, fermiCgemm): ofu has no precision for them.
bool IsComplex(const KernelInfo& info) {
  for (const std::string_view kind : {"cgemm", "zgemm", "Cgemm", "Zgemm"}) {
    if (info.identifier.find(kind) != std::string::npos) return true;
  }
  return false;
}

// The share is computed from the table, whatever rows it holds: a GEMM name
// counts when it parses with its tile (unless its family has none) and its
// precision (unless it is complex); a GEMM ofu cannot read does not. GEMMs
// of other vendors' GPUs (AMD's Tensile) are not counted: ofu corrects OFU
// on NVIDIA GPUs only, and refuses the traces they come from.
bool OtherVendor(const Result<KernelInfo>& info) {
  if (!info.ok()) return false;
  const detail::FamilyRow* row = detail::FindRow(info->family);
  return row != nullptr && row->vendor != "NVIDIA";
}

TEST(KernelNamesReal, AtLeast98PercentOfGemmNamesParseWithTileAndPrecision) {
  int gemm = 0, parsed = 0, complete = 0;
  std::map<std::string, std::pair<int, int>> by_source;  // complete, all
  for (const Row& row : Rows()) {
    if (row.cells.size() != kColumns || !IsGemmRow(row)) continue;
    const auto info = ParseKernelName(row[kName]);
    if (OtherVendor(info)) continue;
    const bool with_tile_and_precision = info.ok() && (info->tile_m || !FamilyHasTile(info->family)) &&
                                         (info->precision || IsComplex(*info));
    gemm += 1;
    parsed += info.ok() ? 1 : 0;
    complete += with_tile_and_precision ? 1 : 0;
    auto& [source_complete, source_all] = by_source[SourceGroup(row[kSource])];
    source_complete += with_tile_and_precision ? 1 : 0;
    source_all += 1;
  }
  ASSERT_GT(gemm, 0);
  const double share = static_cast<double>(complete) / gemm;
  // Printed on purpose: docs/kernels.md records these lines.
  std::printf("kernel-names-real: %d of %d GEMM names parse (%.1f %%), %d with tile and precision (%.1f %%)\n", parsed,
              gemm, 100.0 * parsed / gemm, complete, 100.0 * share);
  for (const auto& [source, counts] : by_source) {
    std::printf("kernel-names-real:   %-45s %3d of %3d\n", source.c_str(), counts.first, counts.second);
  }
  EXPECT_GE(share, 0.98);
}

}  // namespace
}  // namespace ofu::kernels
