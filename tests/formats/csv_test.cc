// CsvField: RFC 4180 quoting, on values written out by hand.
#include "ofu/formats/csv.h"

#include <gtest/gtest.h>

namespace {

using ofu::formats::CsvField;

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

}  // namespace
