// Tests of the error helpers in core/result.h: factories, the two macros,
// and value() of an error, which must stop the process with the message.
#include "ofu/core/result.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ofu {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return Error::InvalidArgument("--count: {} is not positive", x);
  return x;
}

Status CheckEven(int x) {
  if (x % 2 != 0) return Error::MalformedInput("line {}: odd", x);
  return OkStatus();
}

// Declares a new variable from a Result, then uses it.
Result<int> Doubled(int x) {
  OFU_ASSIGN_OR_RETURN(int y, ParsePositive(x));
  return 2 * y;
}

// Assigns into an existing variable; the Result holds a move-only value.
Result<std::unique_ptr<int>> Boxed(int x) {
  if (x < 0) return Error::NoData("nothing for {}", x);
  return std::make_unique<int>(x);
}
Result<int> Unboxed(int x) {
  std::unique_ptr<int> box;
  OFU_ASSIGN_OR_RETURN(box, Boxed(x));
  return *box + 1;
}

Result<std::string> EvenName(int x) {
  OFU_RETURN_IF_ERROR(CheckEven(x));
  return std::to_string(x);
}

TEST(Result, FactoriesSetCodeAndFormatMessage) {
  Error e = Error::Io("{}: cannot open: {}", "run.om", "No such file");
  EXPECT_EQ(e.code, ErrorCode::kIo);
  EXPECT_EQ(e.message, "run.om: cannot open: No such file");
  EXPECT_EQ(Error::UnknownModel("x").code, ErrorCode::kUnknownModel);
  EXPECT_EQ(Error::Unavailable("x").code, ErrorCode::kUnavailable);
  EXPECT_EQ(Error::NoData("x").code, ErrorCode::kNoData);
  EXPECT_EQ(Error::MalformedInput("x").code, ErrorCode::kMalformedInput);
  EXPECT_EQ(Error::InvalidArgument("x").code, ErrorCode::kInvalidArgument);
}

TEST(Result, WithContextPrefixesAndKeepsCode) {
  Error e = Error::MalformedInput("line 3: bad value").WithContext("reading run.om");
  EXPECT_EQ(e.code, ErrorCode::kMalformedInput);
  EXPECT_EQ(e.message, "reading run.om: line 3: bad value");
}

TEST(Result, AssignOrReturnPassesValueOrError) {
  ASSERT_TRUE(Doubled(21).ok());
  EXPECT_EQ(*Doubled(21), 42);
  Result<int> bad = Doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(bad.error().message, "--count: -1 is not positive");

  EXPECT_EQ(*Unboxed(4), 5);
  EXPECT_EQ(Unboxed(-4).error().code, ErrorCode::kNoData);
}

TEST(Result, ReturnIfErrorWorksInAnyResult) {
  EXPECT_EQ(*EvenName(8), "8");
  Result<std::string> odd = EvenName(3);
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().message, "line 3: odd");
}

TEST(ResultDeathTest, ValueOfAnErrorAbortsWithItsMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<int> bad = Error::Io("gone.om: cannot open");
  EXPECT_DEATH((void)bad.value(), "value\\(\\) of a failed Result: gone.om: cannot open");
}

}  // namespace
}  // namespace ofu
