#include "ofu/core/output_counters.h"

#include <cassert>
#include <utility>

namespace ofu {

static_assert(PipeActiveCounter(CudaCorePipe::kFp64) == kCounterFp64Active &&
              PipeActiveCounter(CudaCorePipe::kFp32) == kCounterFp32Active &&
              PipeActiveCounter(CudaCorePipe::kFp16) == kCounterFp16Active);

namespace {

std::optional<double> One(const OfuWindow&, const TensorPipes&) { return 1.0; }
std::optional<double> Ofu(const OfuWindow& w, const TensorPipes&) { return w.ofu; }
std::optional<double> Busy(const OfuWindow& w, const TensorPipes&) { return w.busy ? 1.0 : 0.0; }
std::optional<double> BusyOfu(const OfuWindow& w, const TensorPipes&) { return w.busy ? w.ofu : 0.0; }
std::optional<double> Tensor(const OfuWindow& w, const TensorPipes&) { return w.tensor_active; }
std::optional<double> Hmma(const OfuWindow&, const TensorPipes& p) { return p.hmma; }
std::optional<double> Imma(const OfuWindow&, const TensorPipes& p) { return p.imma; }
std::optional<double> Dfma(const OfuWindow&, const TensorPipes& p) { return p.dfma; }
template <CudaCorePipe P>
std::optional<double> Pipe(const OfuWindow& w, const TensorPipes&) {
  return w.non_tensor[P];
}
std::optional<double> Bound(const OfuWindow& w, const TensorPipes&) { return w.non_tensor.flops_upper_bound_tflops; }
std::optional<double> Peak(const OfuWindow& w, const TensorPipes&) { return w.non_tensor.share_of_peak; }

void PutHmma(OfuWindow&, TensorPipes& p, double v) { p.hmma = v; }
void PutImma(OfuWindow&, TensorPipes& p, double v) { p.imma = v; }
void PutDfma(OfuWindow&, TensorPipes& p, double v) { p.dfma = v; }
template <CudaCorePipe P>
void PutPipe(OfuWindow& w, TensorPipes&, double v) {
  w.non_tensor[P] = v;
}
void PutBound(OfuWindow& w, TensorPipes&, double v) { w.non_tensor.flops_upper_bound_tflops = v; }
void PutPeak(OfuWindow& w, TensorPipes&, double v) { w.non_tensor.share_of_peak = v; }

constexpr Presence kAlways = Presence::kAlways;
constexpr Presence kMeasured = Presence::kWhenMeasured;

// In OutputCounterId order.
std::vector<OutputCounter> BuiltinRows() {
  return {
      {"utilized_s", "ofu_utilized_seconds", "Integral of OFU over time, over windows with valid data.", "s", 1,
       kAlways, Ofu, nullptr},
      {"observed_s", "ofu_observed_seconds",
       "Seconds of windows with valid data; utilized/observed is the OFU of any range.", "s", 1, kAlways, One, nullptr},
      {"busy_s", "ofu_busy_seconds", "Seconds of busy windows with valid data.", "s", 1, kAlways, Busy, nullptr},
      {"busy_utilized_s", "ofu_busy_utilized_seconds", "Integral of OFU over busy windows with valid data.", "s", 1,
       kAlways, BusyOfu, nullptr},
      {"tensor_active_s", "ofu_tensor_active_seconds", "Integral of tensor pipe activity over windows with valid data.",
       "s", 1, kAlways, Tensor, nullptr},
      {"hmma_active_s", "ofu_hmma_active_seconds",
       "Integral of HMMA (fp16/bf16/tf32/fp8) tensor pipe activity over windows with valid data.", "s", 1, kMeasured,
       Hmma, PutHmma},
      {"imma_active_s", "ofu_imma_active_seconds",
       "Integral of IMMA (integer) tensor pipe activity over windows with valid data.", "s", 1, kMeasured, Imma,
       PutImma},
      {"dfma_active_s", "ofu_dfma_active_seconds",
       "Integral of DFMA (fp64) tensor pipe activity over windows with valid data.", "s", 1, kMeasured, Dfma, PutDfma},
      {"fp64_active_s", "ofu_fp64_active_seconds",
       "Integral of FP64 CUDA-core pipe activity (non-tensor) over windows with valid data.", "s", 1, kMeasured,
       Pipe<CudaCorePipe::kFp64>, PutPipe<CudaCorePipe::kFp64>},
      {"fp32_active_s", "ofu_fp32_active_seconds",
       "Integral of FP32 CUDA-core pipe activity (non-tensor) over windows with valid data.", "s", 1, kMeasured,
       Pipe<CudaCorePipe::kFp32>, PutPipe<CudaCorePipe::kFp32>},
      {"fp16_active_s", "ofu_fp16_active_seconds",
       "Integral of FP16 CUDA-core pipe activity (non-tensor) over windows with valid data.", "s", 1, kMeasured,
       Pipe<CudaCorePipe::kFp16>, PutPipe<CudaCorePipe::kFp16>},
      {"non_tensor_tflop", "ofu_non_tensor_flop_upper_bound",
       "Upper bound of the FLOPs done on CUDA cores (pipe activity x SMs x lanes x 2 x SM clock), over windows with "
       "valid data; rate() is FLOP/s.",
       "TFLOP", 1e12, kMeasured, Bound, PutBound},
      {"non_tensor_peak_s", "ofu_non_tensor_peak_seconds",
       "Integral of the non-tensor bound's share of the CUDA-core peak over windows with valid data.", "s", 1,
       kMeasured, Peak, PutPeak},
  };
}

}  // namespace

const OutputCounterTable& OutputCounterTable::Builtin() {
  static const OutputCounterTable table(BuiltinRows());
  return table;
}

OutputCounterTable OutputCounterTable::With(const OutputCounter& row) const {
  assert(rows_.size() < kMaxOutputCounters && row.presence == Presence::kWhenMeasured);
  std::vector<OutputCounter> rows = rows_;
  rows.push_back(row);
  return OutputCounterTable(std::move(rows));
}

void CounterValues::Add(std::size_t id, std::optional<double> part) {
  if (!part) return;
  values_[id] += *part;
  if (id >= kBuiltinAlways) present_ |= 1u << id;
}

void CounterValues::Add(const CounterValues& part) {
  // An absent value is held as 0, so adding every slot is the rule above.
  for (std::size_t id = 0; id < kMaxOutputCounters; ++id) values_[id] += part.values_[id];
  present_ |= part.present_;
}

bool AdvancesCounters(const OfuWindow& window) { return window.ofu.has_value() && window.tensor_active.has_value(); }

CounterValues CountersOfWindow(const OfuWindow& window, const TensorPipes& pipes, double window_s,
                               const OutputCounterTable& table) {
  CounterValues counters;
  if (!AdvancesCounters(window)) return counters;
  for (std::size_t id = 0; id < table.size(); ++id) {
    if (const std::optional<double> figure = table[id].per_second(window, pipes)) counters.Set(id, *figure * window_s);
  }
  return counters;
}

}  // namespace ofu
