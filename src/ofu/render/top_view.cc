#include "ofu/render/top_view.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/analysis/cuda_core_advice.h"
#include "ofu/core/clock_events.h"
#include "ofu/core/ofu_math.h"
#include "ofu/core/windows.h"

namespace ofu::render {
namespace {

constexpr std::string_view kAbsent = "—";
constexpr std::size_t kBarColumns = 30;
constexpr std::string_view kIndent = "  ";

std::string Percent(std::optional<double> ratio) {
  return ratio ? fmt::format("{:.1f} %", *ratio * 100) : std::string(kAbsent);
}

std::string Number(std::optional<double> value) { return value ? fmt::format("{:.0f}", *value) : std::string(kAbsent); }

// The bar is full at 100 %; the figure beside it is never clamped.
std::string Bar(std::optional<double> ofu) {
  const double fill = ofu ? std::clamp(*ofu, 0.0, 1.0) : 0.0;
  const auto full = static_cast<std::size_t>(std::lround(fill * static_cast<double>(kBarColumns)));
  std::string bar = "[";
  for (std::size_t i = 0; i < kBarColumns; ++i) bar += i < full ? "█" : "░";
  bar += "]";
  return bar;
}

std::string GpuTitle(const sources::GpuReading& gpu, std::size_t position) {
  const GpuIdentity& id = gpu.identity;
  std::string title = fmt::format("GPU {}", id.gpu_index.empty() ? fmt::format("#{}", position) : id.gpu_index);
  if (!id.mig_instance.empty()) title += fmt::format(" MIG gi{} {}", id.mig_instance, id.mig_profile);
  if (!id.model.empty()) title += "  " + id.model;
  if (!id.hostname.empty()) title += "  on " + id.hostname;
  if (!id.uuid.empty()) title += "  " + id.uuid;
  return title;
}

std::string Throttle(const CounterSample& sample) {
  if (!sample.clock_event_reasons) return std::string(kAbsent);
  if (*sample.clock_event_reasons == 0) return "none";
  return fmt::format("{}", fmt::join(ClockEventReasonNames(*sample.clock_event_reasons), ", "));
}

std::string UtcTime(double time_s) {
  const auto seconds = static_cast<std::time_t>(std::floor(time_s));
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return fmt::format("{} s", time_s);
  std::array<char, 32> text{};
  const std::size_t n = std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return std::string(text.data(), n);
}

double IndexOrder(const sources::GpuReading& gpu) {
  try {
    return std::stod(gpu.identity.gpu_index);
  } catch (...) {  // no index, or not a number: after every numbered GPU
    return 1e18;
  }
}

// The CUDA-core pipes (issue 18), only where the source delivers one: work
// that the tensor-pipe OFU does not see. Low OFU beside a busy pipe gets the
// usual fix, as in `ofu report` (ofu/analysis/cuda_core_advice.h).
template <typename AddLine>
void AddCudaCoreLine(const TopModel::Gpu& gpu, const CounterSample& sample, const AddLine& add) {
  NonTensorFigures pipes;
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) pipes[pipe.pipe] = GetField(sample, pipe.activity);
  if (!pipes.any_activity()) return;
  // FP32 first, in a column of its own: the pipe a model left in fp32 keeps busy.
  std::string line = fmt::format("{}cuda     {} {:>8}", kIndent, InfoFor(CudaCorePipe::kFp32).label,
                                 Percent(pipes[CudaCorePipe::kFp32]));
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) {
    if (pipe.pipe != CudaCorePipe::kFp32) line += fmt::format("   {} {}", pipe.label, Percent(pipes[pipe.pipe]));
  }
  add(line, LineStyle::kNormal);
  const bool busy = BusiestPipe(pipes, analysis::kBusyPipe).has_value();
  if (busy && gpu.ofu && *gpu.ofu < analysis::kLowOfu) {
    add(fmt::format("{}advice   math on CUDA cores, not tensor cores: TF32 for FP32 matmuls, or bf16/fp16 autocast",
                    kIndent),
        LineStyle::kWarning);
  }
}

}  // namespace

std::string_view SortOrderName(SortOrder order) {
  switch (order) {
    case SortOrder::kOfu: return "OFU";
    case SortOrder::kTensor: return "tensor";
    case SortOrder::kPower: return "power";
    case SortOrder::kGpuIndex: return "GPU";
  }
  return "OFU";
}

SortOrder NextSortOrder(SortOrder order) {
  switch (order) {
    case SortOrder::kOfu: return SortOrder::kTensor;
    case SortOrder::kTensor: return SortOrder::kPower;
    case SortOrder::kPower: return SortOrder::kGpuIndex;
    case SortOrder::kGpuIndex: return SortOrder::kOfu;
  }
  return SortOrder::kOfu;
}

std::optional<SortOrder> SortOrderForKey(int key) {
  switch (key) {
    case 'o': return SortOrder::kOfu;
    case 't': return SortOrder::kTensor;
    case 'p': return SortOrder::kPower;
    case 'g': return SortOrder::kGpuIndex;
    default: return std::nullopt;
  }
}

std::optional<SortOrder> SortOrderForName(std::string_view name) {
  if (name == "ofu") return SortOrder::kOfu;
  if (name == "tensor") return SortOrder::kTensor;
  if (name == "power") return SortOrder::kPower;
  if (name == "gpu") return SortOrder::kGpuIndex;
  return std::nullopt;
}

std::string_view SparkGlyph(std::optional<double> ofu) {
  static constexpr std::array<std::string_view, 8> kLevels = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (!ofu) return "·";
  const long level = std::lround(std::clamp(*ofu, 0.0, 1.0) * 7);
  return kLevels[static_cast<std::size_t>(level)];
}

std::string TruncateColumns(std::string_view text, std::size_t columns) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    // A byte that is not a UTF-8 continuation byte starts a code point.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      if (seen == columns) return std::string(text.substr(0, i));
      ++seen;
    }
  }
  return std::string(text);
}

TopModel::TopModel(const GpuSpecDatabase& specs, std::size_t history) : specs_(specs), history_(history) {}

const TopModel::SpecEntry& TopModel::SpecFor(const std::string& model) const {
  auto it = spec_cache_.find(model);
  if (it != spec_cache_.end()) return it->second;
  SpecEntry entry;
  if (model.empty()) {
    entry.problem = "the source gives no model name, so f_spec is unknown";
  } else if (auto spec = specs_.Lookup(model); spec.ok()) {
    entry.scale = OfuScale{(*spec)->SpecClockMhz(), (*spec)->k_arch};
    entry.scale->clock_model = (*spec)->ClockModelFor(model);
  } else {
    entry.problem = spec.error().message;
  }
  return spec_cache_.emplace(model, std::move(entry)).first->second;
}

OfuWindow TopModel::WindowOf(const sources::GpuReading& gpu) const {
  // The report's rule for one window (core/windows.h).
  return WindowOfSample(gpu.sample, 1, SpecFor(gpu.identity.model).scale, 0,
                        gpu.clock_basis == sources::ClockBasis::kExactCycles);
}

void TopModel::Add(const sources::Snapshot& snapshot) {
  latest_ = snapshot;
  ++windows_;
  for (const sources::GpuReading& gpu : latest_->gpus) {
    auto& ring = histories_[gpu.identity.key];
    ring.push_back(WindowOf(gpu).ofu);
    while (ring.size() > history_) ring.pop_front();
  }
}

std::vector<TopModel::Gpu> TopModel::Sorted(SortOrder order) const {
  std::vector<Gpu> gpus;
  if (!latest_) return gpus;
  for (const sources::GpuReading& reading : latest_->gpus) {
    Gpu gpu;
    gpu.reading = &reading;
    const OfuWindow window = WindowOf(reading);
    gpu.ofu = window.ofu;
    gpu.ofu_clock_mhz = window.ofu_clock_mhz;
    gpu.clock_source = window.clock_source;
    const SpecEntry& spec = SpecFor(reading.identity.model);
    if (spec.scale) gpu.spec_clock_mhz = spec.scale->spec_clock_mhz;
    gpu.model_problem = spec.problem;
    gpu.history = &histories_.at(reading.identity.key);
    gpus.push_back(gpu);
  }
  // Largest first; a GPU without the figure goes last.
  const auto descending = [](std::optional<double> a, std::optional<double> b) {
    if (a.has_value() != b.has_value()) return a.has_value();
    return a && *a > *b;
  };
  std::stable_sort(gpus.begin(), gpus.end(), [&](const Gpu& a, const Gpu& b) {
    switch (order) {
      case SortOrder::kOfu: return descending(a.ofu, b.ofu);
      case SortOrder::kTensor: return descending(a.reading->sample.tensor_active, b.reading->sample.tensor_active);
      case SortOrder::kPower: return descending(a.reading->sample.power_w, b.reading->sample.power_w);
      case SortOrder::kGpuIndex: return IndexOrder(*a.reading) < IndexOrder(*b.reading);
    }
    return false;
  });
  return gpus;
}

std::vector<TopLine> RenderTop(const TopModel& model, const TopFrame& frame) {
  std::vector<TopLine> lines;
  const auto add = [&](const std::string& text, LineStyle style = LineStyle::kNormal) {
    lines.push_back(TopLine{TruncateColumns(text, frame.width), style});
  };
  const std::optional<sources::Snapshot>& snapshot = model.latest();

  // The sort order comes before the source, whose description can be long:
  // a narrow terminal cuts the end of the line, not the part the keys change.
  add(fmt::format("ofu top — sort: {}{} — {}", SortOrderName(frame.sort),
                  frame.interactive ? " (s: sort, q: quit)" : "", frame.source),
      LineStyle::kHeader);
  if (snapshot && snapshot->synthetic.value_or(false)) {
    add("SYNTHETIC data: generated or from a test double, not measured on a GPU", LineStyle::kWarning);
  }
  if (!snapshot) {
    add("waiting for the first window…");
    return lines;
  }
  add(fmt::format("window ending {} ({:.1f} s), {} GPU{}, {} window{} seen{}", UtcTime(snapshot->time_s),
                  snapshot->window_s, snapshot->gpus.size(), snapshot->gpus.size() == 1 ? "" : "s", model.windows(),
                  model.windows() == 1 ? "" : "s", frame.ended ? " — end of recording" : ""));
  for (const std::string& note : snapshot->notes) add("note: " + note, LineStyle::kWarning);

  const std::vector<TopModel::Gpu> gpus = model.Sorted(frame.sort);
  for (const TopModel::Gpu& gpu : gpus) {
    const sources::GpuReading& reading = *gpu.reading;
    const CounterSample& sample = reading.sample;
    const std::size_t position = static_cast<std::size_t>(&reading - snapshot->gpus.data());
    add("");
    add(GpuTitle(reading, position), LineStyle::kHeader);
    if (reading.health != sources::GpuHealth::kOk) {
      add(fmt::format("{}{}: {}", kIndent, sources::HealthName(reading.health),
                      reading.problem.empty() ? "no further detail from the source" : reading.problem),
          LineStyle::kProblem);
    }
    add(fmt::format("{}OFU      {} {:>8}", kIndent, Bar(gpu.ofu), Percent(gpu.ofu)));
    std::string spark;
    const std::size_t room = frame.width > 11 ? frame.width - 11 : 0;
    const std::size_t count = std::min(gpu.history->size(), room);
    for (std::size_t i = gpu.history->size() - count; i < gpu.history->size(); ++i) {
      spark += SparkGlyph((*gpu.history)[i]);
    }
    add(fmt::format("{}history  {}", kIndent, spark));
    add(fmt::format("{}tensor   {:>8}   SM clock {}/{} MHz   power {} W", kIndent, Percent(sample.tensor_active),
                    Number(sample.sm_clock_mhz), Number(gpu.spec_clock_mhz), Number(sample.power_w)));
    // Where the OFU's clock is not the reported one, the clock it used.
    if (gpu.clock_source == ClockSource::kMeasuredModel && gpu.ofu_clock_mhz) {
      add(fmt::format("{}run      {} MHz: the clock the SMs ran, by this GPU's measured clock model", kIndent,
                      Number(gpu.ofu_clock_mhz)));
    } else if (gpu.clock_source == ClockSource::kExactCycles && gpu.ofu_clock_mhz) {
      add(fmt::format("{}run      {} MHz: the SMs' own cycles", kIndent, Number(gpu.ofu_clock_mhz)));
    }
    AddCudaCoreLine(gpu, sample, add);
    add(fmt::format("{}throttle {}", kIndent, Throttle(sample)));
    if (!gpu.model_problem.empty()) add(fmt::format("{}model    {}", kIndent, gpu.model_problem), LineStyle::kWarning);
    if (!reading.processes.empty()) {
      std::string procs;
      for (const sources::GpuProcess& p : reading.processes) {
        procs += fmt::format("{}{} {}", procs.empty() ? "" : ", ", p.pid,
                             frame.process_name ? frame.process_name(p.pid) : std::string("?"));
      }
      add(fmt::format("{}procs    {}", kIndent, procs));
    }
  }
  return lines;
}

}  // namespace ofu::render
