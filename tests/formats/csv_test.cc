// CsvField and ReadCsv: RFC 4180 quoting both ways, and the lenient
// dialect of hand-written files, on text written out by hand.
#include "ofu/formats/csv.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using ofu::formats::CsvField;
using ofu::formats::CsvRecord;
using ofu::formats::ReadCsv;
using Fields = std::vector<std::string>;

constexpr ofu::formats::CsvOptions kLenient{.lenient = true};

// The records' lines and fields, for one comparison.
std::vector<std::pair<int, Fields>> Flat(const std::vector<CsvRecord>& records) {
  std::vector<std::pair<int, Fields>> out;
  for (const CsvRecord& r : records) out.emplace_back(r.line, r.fields);
  return out;
}

TEST(CsvField, PlainTextIsWrittenAsItIs) {
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("h100-sxm5"), "h100-sxm5");
  EXPECT_EQ(CsvField("it's a 'name' with spaces"), "it's a 'name' with spaces");
}

TEST(CsvField, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(CsvField("train, v2"), "\"train, v2\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("\""), "\"\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\rhere"), "\"cr\rhere\"");
}

TEST(ReadCsv, StrictReadsQuotedCommasQuotesAndLineBreaks) {
  const auto records = ReadCsv("a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n\n1,,3", "t.csv");
  ASSERT_TRUE(records.ok()) << records.error().message;
  // The blank line 4 is skipped; the third record starts on line 5.
  EXPECT_EQ(Flat(*records), (std::vector<std::pair<int, Fields>>{
                                {1, {"a", "b", "c"}}, {2, {"x, y", "say \"hi\"", "two\nlines"}}, {5, {"1", "", "3"}}}));
}

TEST(ReadCsv, StrictKeepsSpacesAndHashes) {
  const auto records = ReadCsv(" a ,# b\n", "t.csv");
  ASSERT_TRUE(records.ok()) << records.error().message;
  EXPECT_EQ(Flat(*records), (std::vector<std::pair<int, Fields>>{{1, {" a ", "# b"}}}));
}

TEST(ReadCsv, StrictNamesTheLineAndFieldOfBadQuoting) {
  const auto open = ReadCsv("a,b\n1,\"2\n3\n", "t.csv");
  ASSERT_FALSE(open.ok());
  EXPECT_EQ(open.error().message, "t.csv:2: a quoted field is not closed");
  const auto after = ReadCsv("a,b\n1,\"2\"x\n", "t.csv");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.error().message, "t.csv:2: text after a closing quote (field 2)");
  const auto inside = ReadCsv("a,b\nx\"y,2\n", "t.csv");
  ASSERT_FALSE(inside.ok());
  EXPECT_EQ(inside.error().message, "t.csv:2: a quote inside an unquoted field (field 1)");
}

TEST(ReadCsv, WhatCsvFieldWritesComesBackWhole) {
  const Fields fields = {"plain", "train, v2", "say \"hi\"", "two\nlines", "cr\rhere", "", "\""};
  std::string text;
  for (const std::string& f : fields) text += (text.empty() ? "" : ",") + CsvField(f);
  const auto records = ReadCsv(text + "\r\n", "t.csv");
  ASSERT_TRUE(records.ok()) << records.error().message;
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].fields, fields);
}

TEST(ReadCsv, LenientTrimsSkipsCommentsAndBlankLinesAndDropsCr) {
  const auto records = ReadCsv("# a comment\n job_id , mfu \r\n\n   \n  # indented comment\n\"j,1\" ,0.4\r\n", "m.csv",
                               kLenient);
  ASSERT_TRUE(records.ok()) << records.error().message;
  EXPECT_EQ(Flat(*records), (std::vector<std::pair<int, Fields>>{{2, {"job_id", "mfu"}}, {6, {"j,1", "0.4"}}}));
}

TEST(ReadCsv, LenientLetsAQuoteOpenAndCloseAnywhere) {
  // x"a,b"y reads as one field xa,by; "" inside quotes is one quote.
  const auto records = ReadCsv("x\"a,b\"y,\"q\"\"q\"\n", "m.csv", kLenient);
  ASSERT_TRUE(records.ok()) << records.error().message;
  EXPECT_EQ(Flat(*records), (std::vector<std::pair<int, Fields>>{{1, {"xa,by", "q\"q"}}}));
}

TEST(ReadCsv, LenientEndsAQuoteAtTheEndOfItsLine) {
  const auto records = ReadCsv("job_id,mfu\n\"j1,0.4\nj2,0.5\n", "m.csv", kLenient);
  ASSERT_FALSE(records.ok());
  EXPECT_EQ(records.error().message, "m.csv:2: unterminated quote");
}

TEST(TrimSpace, TakesWhiteSpaceOffBothEndsOnly) {
  EXPECT_EQ(ofu::formats::TrimSpace(" \t a b \r\n"), "a b");
  EXPECT_EQ(ofu::formats::TrimSpace("   "), "");
  EXPECT_EQ(ofu::formats::TrimSpace("x"), "x");
}

TEST(ReadCsv, EmptyTextHasNoRecords) {
  EXPECT_TRUE(ReadCsv("", "t.csv")->empty());
  EXPECT_TRUE(ReadCsv("\n\r\n", "t.csv")->empty());
  EXPECT_TRUE(ReadCsv("# only a comment\n", "m.csv", kLenient)->empty());
}

}  // namespace
