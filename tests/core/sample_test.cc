// The input counter table (core/sample.h): each row sits at its field's
// place and names the member that holds it, so GetField and SetField reach
// exactly that member and no other.
#include "ofu/core/sample.h"

#include <cstddef>
#include <cstdint>
#include <optional>

#include <gtest/gtest.h>

namespace {

using ofu::AllCounterFields;
using ofu::CounterField;
using ofu::CounterFieldInfo;
using ofu::CounterSample;

TEST(CounterFields, EachRowIsAtItsFieldsPlace) {
  ASSERT_EQ(AllCounterFields().size(), static_cast<std::size_t>(CounterField::kClockEventReasons) + 1);
  for (std::size_t i = 0; i < AllCounterFields().size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(AllCounterFields()[i].field), i) << AllCounterFields()[i].name;
  }
}

TEST(CounterFields, SetFieldReachesItsOwnMemberAndNoOther) {
  for (const CounterFieldInfo& info : AllCounterFields()) {
    CounterSample sample;
    ofu::SetField(sample, info.field, 42.0);
    for (const CounterFieldInfo& other : AllCounterFields()) {
      const std::optional<double> value = ofu::GetField(sample, other.field);
      if (other.field == info.field) {
        EXPECT_EQ(value, 42.0) << info.name;
      } else {
        EXPECT_FALSE(value.has_value()) << "setting " << info.name << " set " << other.name;
      }
    }
    if (info.member != nullptr) {
      EXPECT_EQ(sample.*info.member, 42.0) << info.name;
    } else {
      EXPECT_EQ(sample.clock_event_reasons, std::uint64_t{42}) << info.name;
    }
  }
}

TEST(CounterFields, NamedMembersAreTheRowsOnes) {
  // Spot checks written by hand: the table's member for a field is the
  // struct's member of that name.
  EXPECT_EQ(ofu::InfoFor(CounterField::kTensorActive).member, &CounterSample::tensor_active);
  EXPECT_EQ(ofu::InfoFor(CounterField::kSmClockMhz).member, &CounterSample::sm_clock_mhz);
  EXPECT_EQ(ofu::InfoFor(CounterField::kEnergyMj).member, &CounterSample::energy_mj);
  EXPECT_EQ(ofu::InfoFor(CounterField::kClockEventReasons).member, nullptr);
}

TEST(CounterFields, ClockEventReasonsTakeOnlyExactMasks) {
  CounterSample sample;
  ofu::SetField(sample, CounterField::kClockEventReasons, 1.5);
  EXPECT_FALSE(sample.clock_event_reasons.has_value());
  ofu::SetField(sample, CounterField::kClockEventReasons, -1.0);
  EXPECT_FALSE(sample.clock_event_reasons.has_value());
  ofu::SetField(sample, CounterField::kClockEventReasons, 4.0);
  EXPECT_EQ(sample.clock_event_reasons, std::uint64_t{4});
  ofu::SetField(sample, CounterField::kClockEventReasons, std::nullopt);
  EXPECT_FALSE(sample.clock_event_reasons.has_value());
}

}  // namespace
