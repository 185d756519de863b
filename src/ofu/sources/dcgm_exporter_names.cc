#include "ofu/sources/dcgm_exporter_names.h"

#include <array>

namespace ofu::sources {
namespace {

struct NamedMetric {
  std::string_view name;
  KnownMetric metric;
};

constexpr std::array kMetrics = {
    NamedMetric{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", {CounterField::kTensorActive, ValueScale::kRatio, 1004}},
    NamedMetric{"DCGM_FI_PROF_TENSOR_UTIL_RATIO", {CounterField::kTensorActive, ValueScale::kRatio, 1004}},
    NamedMetric{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", {CounterField::kGrEngineActive, ValueScale::kRatio, 1001}},
    NamedMetric{"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", {CounterField::kGrEngineActive, ValueScale::kRatio, 1001}},
    NamedMetric{"DCGM_FI_DEV_SM_CLOCK", {CounterField::kSmClockMhz, ValueScale::kAbsolute, 100}},
    NamedMetric{"DCGM_FI_DEV_POWER_USAGE", {CounterField::kPowerW, ValueScale::kAbsolute, 155}},
    NamedMetric{"DCGM_FI_DEV_BOARD_POWER_WATTS", {CounterField::kPowerW, ValueScale::kAbsolute, 155}},
    NamedMetric{"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", {CounterField::kClockEventReasons, ValueScale::kAbsolute, 112}},
    NamedMetric{"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", {CounterField::kClockEventReasons, ValueScale::kAbsolute, 112}},
};

}  // namespace

std::optional<KnownMetric> LookupDcgmExporterMetric(std::string_view name) {
  for (const auto& m : kMetrics) {
    if (m.name == name) return m.metric;
  }
  return std::nullopt;
}

std::string_view DescribeField(CounterField field) {
  switch (field) {
    case CounterField::kTensorActive: return "tensor activity";
    case CounterField::kGrEngineActive: return "graphics engine activity";
    case CounterField::kSmClockMhz: return "SM clock";
    case CounterField::kPowerW: return "power";
    case CounterField::kClockEventReasons: return "clock event reasons";
  }
  return "counter";
}

}  // namespace ofu::sources
