// The result CSV: what the writer writes, the reader reads back, and how
// the reader rejects bad files.
#include "ofu/gemm/result_csv.h"

#include <gtest/gtest.h>

#include <ostream>

namespace ofu::gemm {
namespace {

CaseResult FullRow() {
  CaseResult r;
  r.sweep = "square";
  r.group = "g1";
  r.m = 4097;
  r.n = 4097;
  r.k = 4097;
  r.precision = kernels::Precision::kFp8;
  r.layout = "tn";
  r.power_limit_w = 420;
  r.gpu = "NVIDIA H100 80GB HBM3";
  r.kernel_name = "nvjet_qqtst_128x256_128x6_2x1_v_bz_TNT";
  r.kernel_family = "nvjet";
  r.tensor_core = true;
  r.algorithm_tiling = Tiling{128, 256, 128, 6, 2, 1};
  r.name_tiling = Tiling{128, 256, 128, 6, 2, std::nullopt};
  r.tile_check = TileCheck::kAgree;
  r.correction_tiling = "name";
  r.iterations = 1234;
  r.elapsed_s = 2.0625;
  r.time_per_iteration_us = 1671.4;
  r.achieved_tflops = 656.25;
  r.peak_tflops = 1979;
  r.mfu = 0.331607;
  r.mfu_span_s = 1.75;
  r.windows = 7;
  r.tensor_active = 0.41;
  r.sm_clock_mhz = 1755.5;
  r.sm_clock_point_mhz = 1740;
  r.source_clock_mhz = 1756;
  r.padding_factor = 0.8125;
  r.throughput_factor = 0.473;
  r.ofu_raw = 0.3933;
  r.ofu_point = 0.3898;
  r.ofu_oversampled = 0.3932;
  r.ofu_corrected = 0.3195;
  r.err_raw_pp = 6.17;
  r.err_point_pp = 5.82;
  r.err_oversampled_pp = 6.16;
  r.err_corrected_pp = -1.21;
  r.note = "also launched \"reduce\", 3x\nsecond line";
  return r;
}

void ExpectSame(const CaseResult& a, const CaseResult& b) {
  EXPECT_EQ(ResultCsvRow(a), ResultCsvRow(b));
  EXPECT_EQ(a.note, b.note);
  EXPECT_EQ(a.name_tiling, b.name_tiling);
  EXPECT_EQ(a.ofu_exact, b.ofu_exact);
}

TEST(ResultCsvTest, RoundTripsEveryColumn) {
  const CaseResult row = FullRow();
  CaseResult sparse;  // everything optional left absent
  sparse.layout = "nn";
  const std::string text = ResultCsvHeader() + ResultCsvRow(row) + ResultCsvRow(sparse);
  auto rows = ParseResultCsv(text, "r.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 2u);
  ExpectSame((*rows)[0], row);
  EXPECT_FALSE((*rows)[0].ofu_exact.has_value());  // empty field: absent, not 0
  EXPECT_DOUBLE_EQ(*(*rows)[0].err_corrected_pp, -1.21);
  EXPECT_FALSE((*rows)[0].name_tiling.cluster_n.has_value());
  ExpectSame((*rows)[1], sparse);
  EXPECT_FALSE((*rows)[1].mfu.has_value());
  EXPECT_DOUBLE_EQ(*(*rows)[0].mfu_span_s, 1.75);
  EXPECT_FALSE((*rows)[1].mfu_span_s.has_value());  // empty: the whole loop
  EXPECT_FALSE((*rows)[1].tensor_core.has_value());
}

TEST(ResultCsvTest, QuotesTextWithCommasQuotesAndLineBreaks) {
  const std::string line = ResultCsvRow(FullRow());
  EXPECT_NE(line.find("\"also launched \"\"reduce\"\", 3x\nsecond line\""), std::string::npos) << line;
  EXPECT_EQ(ResultCsvHeader().substr(0, 22), "sweep,group,m,n,k,prec");
}

TEST(ResultCsvTest, ReadsColumnsByNameAndIgnoresUnknownOnes) {
  auto rows = ParseResultCsv("extra,precision,layout,k,n,m,group,sweep,mfu\r\nzz,bf16,nn,3,2,1,g,s,0.5\r\n", "r.csv");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].m, 1);
  EXPECT_EQ((*rows)[0].k, 3);
  EXPECT_EQ((*rows)[0].layout, "nn");
  EXPECT_DOUBLE_EQ(*(*rows)[0].mfu, 0.5);
  EXPECT_FALSE((*rows)[0].ofu_raw.has_value());
}

struct BadCsv {
  const char* text;
  const char* expected;
};

// Names a case by the error it expects in a failure message, not by its bytes.
void PrintTo(const BadCsv& bad, std::ostream* os) { *os << "BadCsv expecting \"" << bad.expected << '"'; }

class ResultCsvErrorTest : public ::testing::TestWithParam<BadCsv> {};

TEST_P(ResultCsvErrorTest, NamesFileLineAndColumn) {
  auto rows = ParseResultCsv(GetParam().text, "r.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error().code, ErrorCode::kMalformedInput);
  EXPECT_NE(rows.error().message.find(GetParam().expected), std::string::npos) << rows.error().message;
}

constexpr const char* kHead = "sweep,group,m,n,k,precision,layout,mfu\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, ResultCsvErrorTest,
    ::testing::Values(
        BadCsv{"", "r.csv: empty file"}, BadCsv{"sweep,group,m,n,k,precision\n", "lacks required column 'layout'"},
        BadCsv{"sweep,group,m,n,k,precision,layout,m\n", "column 'm' appears twice"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns,g,1,2,3,bf16,tn,abc\n",
               "r.csv:2: column 'mfu': 'abc' is not a number"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns,g,1,2,3,bf16,tn,nan\n",
               "r.csv:2: column 'mfu': 'nan' is not a number"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns,g,-1,2,3,bf16,tn,\n",
               "r.csv:2: column 'm': '-1' is not a size"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns,g,1,2,3,fp9,tn,\n", "r.csv:2: column 'precision': 'fp9'"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns,g,1,2,3,bf16,xx,\n", "column 'layout': 'xx' is not a layout"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns,g,1,2,3,bf16,tn\n",
               "r.csv:2: 7 fields where the header has 8"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\n\"s,g,1,2,3,bf16,tn,\n",
               "r.csv:2: a quoted field is not closed"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\n\"s\"x,g,1,2,3,bf16,tn,\n",
               "r.csv:2: text after a closing quote"},
        BadCsv{"sweep,group,m,n,k,precision,layout,mfu\ns\"x,g,1,2,3,bf16,tn,\n", "a quote inside an unquoted field"}));

TEST(ResultCsvTest, ErrorLineCountsLineBreaksInsideQuotes) {
  const std::string text = std::string(kHead) + "\"a\nb\",g,1,2,3,bf16,tn,\ns,g,1,2,3,bf16,tn,bad\n";
  auto rows = ParseResultCsv(text, "r.csv");
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.error().message.find("r.csv:4: column 'mfu'"), std::string::npos) << rows.error().message;
}

}  // namespace
}  // namespace ofu::gemm
