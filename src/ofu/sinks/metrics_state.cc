#include "ofu/sinks/metrics_state.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <vector>

#include <fmt/format.h>

namespace ofu::sinks {
namespace {

using formats::ExpositionWriter;
using formats::MetricType;

std::string_view ErrorKind(sources::GpuHealth health) {
  switch (health) {
    case sources::GpuHealth::kOk: return "";
    case sources::GpuHealth::kLost: return "gpu_lost";
    case sources::GpuHealth::kNoPermission: return "no_permission";
    case sources::GpuHealth::kNotSupported: return "not_supported";
    case sources::GpuHealth::kUnavailable: return "unavailable";
  }
  return "unknown";
}

// GPUs in the order people expect: by index on the node, then by key.
template <typename State>
std::vector<const State*> Ordered(const std::map<std::string, State>& gpus) {
  std::vector<const State*> order;
  for (const auto& [key, gpu] : gpus) order.push_back(&gpu);
  std::stable_sort(order.begin(), order.end(), [](const State* a, const State* b) {
    const std::string& a_index = a->identity.gpu_index;
    const std::string& b_index = b->identity.gpu_index;
    const long ia = a_index.empty() ? -1 : std::strtol(a_index.c_str(), nullptr, 10);
    const long ib = b_index.empty() ? -1 : std::strtol(b_index.c_str(), nullptr, 10);
    return ia < ib;
  });
  return order;
}

constexpr ConnectionRejection kAllRejections[] = {
    ConnectionRejection::kPerPeerLimit,       ConnectionRejection::kTotalLimit,
    ConnectionRejection::kHeaderDeadline,     ConnectionRejection::kTlsHandshakeDeadline,
    ConnectionRejection::kTlsHandshakeFailed, ConnectionRejection::kWriteDeadline,
    ConnectionRejection::kBadRequest};
static_assert(std::size(kAllRejections) == kConnectionRejections);

// The process_* families are the process's own: no labels.
constexpr formats::LabelPairs kNoLabels{};

}  // namespace

std::string_view ConnectionRejectionLabel(ConnectionRejection reason) {
  switch (reason) {
    case ConnectionRejection::kPerPeerLimit: return "per_peer_limit";
    case ConnectionRejection::kTotalLimit: return "total_limit";
    case ConnectionRejection::kHeaderDeadline: return "header_deadline";
    case ConnectionRejection::kTlsHandshakeDeadline: return "tls_handshake_deadline";
    case ConnectionRejection::kTlsHandshakeFailed: return "tls_handshake_failed";
    case ConnectionRejection::kWriteDeadline: return "write_deadline";
    case ConnectionRejection::kBadRequest: return "bad_request";
  }
  return "unknown";
}

void MetricsState::CountRejectedConnection(ConnectionRejection reason) {
  rejected_[static_cast<std::size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t MetricsState::RejectedConnections(ConnectionRejection reason) const {
  return rejected_[static_cast<std::size_t>(reason)].load(std::memory_order_relaxed);
}

MetricsState::MetricsState(MetricsOptions options, sources::Clock& clock)
    : options_(std::move(options)), clock_(clock), last_batch_s_(clock.NowS()), last_up_s_(last_batch_s_) {}

Status MetricsState::Consume(const WindowBatch& batch) {
  const double now = clock_.NowS();
  std::lock_guard lock(mutex_);
  last_batch_s_ = now;
  bool any_up = false;
  for (const GpuWindow& window : batch.gpus) {
    GpuState& gpu = gpus_[window.key()];
    gpu.identity = window.identity;
    gpu.identity.key = window.key();
    gpu.sku = window.sku;
    gpu.architecture = window.architecture;
    gpu.spec_clock_mhz = window.spec_clock_mhz;
    gpu.up = window.up();
    any_up = any_up || gpu.up;
    if (!gpu.up) source_errors_[std::string(ErrorKind(window.health))] += 1;

    const OfuWindow& w = window.window;
    gpu.ofu = w.ofu;
    gpu.tensor_active = w.tensor_active;
    gpu.sm_clock_mhz = w.sm_clock_mhz;
    gpu.ofu_clock_mhz = w.ofu_clock_mhz;
    if (w.clock_source) gpu.clock_source = ClockSourceName(*w.clock_source);
    // The counter rule (window_counters.h): only valid windows advance them.
    gpu.counters.Add(CountersOfWindow(window, batch.window_s, *options_.counters));
    if (AdvancesCounters(w)) gpu.last_valid_end_s = batch.end_s;
    auto job = batch.jobs.find(window.key());
    if (job == batch.jobs.end()) {
      gpu.job.reset();
    } else {
      gpu.job = job->second;
    }
  }
  if (any_up) last_up_s_ = now;
  return OkStatus();
}

void MetricsState::AddQueuedSink(std::string_view sink) {
  std::lock_guard lock(mutex_);
  dropped_windows_.try_emplace(std::string(sink), 0);
}

void MetricsState::CountDroppedWindow(std::string_view sink) {
  std::lock_guard lock(mutex_);
  auto counter = dropped_windows_.find(sink);
  if (counter == dropped_windows_.end()) counter = dropped_windows_.emplace(std::string(sink), 0).first;
  ++counter->second;
}

void MetricsState::Reconfigure(MetricsOptions options) {
  std::lock_guard lock(mutex_);
  options_ = std::move(options);
}

Health MetricsState::CheckHealth() const {
  const double now = clock_.NowS();
  std::lock_guard lock(mutex_);
  const double limit = options_.stale_windows * options_.window_s;
  if (now - last_batch_s_ > limit) {
    return {false, fmt::format("no window from the {} source for {:.1f} s (limit {:.1f} s: {} windows)",
                               options_.source_name, now - last_batch_s_, limit, options_.stale_windows)};
  }
  if (now - last_up_s_ > limit) {
    return {false, fmt::format("no GPU has answered for {:.1f} s (limit {:.1f} s); see ofu_gpu_up and "
                               "ofu_source_errors_total",
                               now - last_up_s_, limit)};
  }
  return {true, ""};
}

std::string MetricsState::Render(formats::ExpositionFormat format) const {
  std::lock_guard lock(mutex_);
  ExpositionWriter out(format);
  const std::vector<const GpuState*> gpus = Ordered(gpus_);
  // The labels of every per-GPU series: its key and its index on the host.
  const auto series_labels = [](const GpuState& gpu) {
    return std::array<formats::LabelPair, 2>{{{"uuid", gpu.identity.key}, {"gpu", gpu.identity.gpu_index}}};
  };

  const auto gauge = [&](std::string_view family, std::string_view help, std::optional<double> GpuState::*field) {
    out.Family(family, MetricType::kGauge, help);
    for (const GpuState* gpu : gpus) {
      if (gpu->*field) out.Sample(series_labels(*gpu), *(gpu->*field));
    }
  };

  // The output counters, a family each in table order. A kWhenMeasured one
  // the source never delivered for a GPU has no series for it, not 0.
  for (std::size_t id = 0; id < options_.counters->size(); ++id) {
    const OutputCounter& row = (*options_.counters)[id];
    out.Family(row.metric, MetricType::kCounter, row.help);
    for (const GpuState* gpu : gpus) {
      if (const std::optional<double> value = gpu->counters[id]) {
        out.Sample(series_labels(*gpu), *value * row.metric_scale);
      }
    }
  }
  gauge("ofu_ofu_ratio", "OFU of the last window.", &GpuState::ofu);
  gauge("ofu_tensor_active_ratio", "Tensor pipe activity (0..1) of the last window.", &GpuState::tensor_active);
  gauge("ofu_sm_clock_mhz", "Mean SM clock of the last window, MHz.", &GpuState::sm_clock_mhz);
  gauge("ofu_spec_clock_mhz", "Clock behind the vendor's dense peak (f_spec), MHz.", &GpuState::spec_clock_mhz);
  gauge("ofu_ofu_clock_mhz",
        "The SM clock the last window's OFU used, MHz: the clock the SMs ran as the SKU's measured model estimates "
        "it, or the reported one (ofu_gpu_info's clock_source says which).",
        &GpuState::ofu_clock_mhz);
  out.Family("ofu_window_seconds", MetricType::kGauge, "The agent's window length, seconds.");
  for (const GpuState* gpu : gpus) out.Sample(series_labels(*gpu), options_.window_s);
  gauge("ofu_last_window_timestamp_seconds", "Unix time of the end of the last valid window.",
        &GpuState::last_valid_end_s);

  out.Family("ofu_gpu", MetricType::kInfo,
             "The GPU's model, spec-database SKU and architecture; a MIG instance's profile and instance id; the clock "
             "its OFU uses (clock_source: exact-cycles, measured-model or reported).");
  for (const GpuState* gpu : gpus) {
    const auto series = series_labels(*gpu);
    std::vector<formats::LabelPair> labels(series.begin(), series.end());
    labels.insert(labels.end(),
                  {{"model", gpu->identity.model}, {"sku", gpu->sku}, {"architecture", gpu->architecture}});
    // The identity's info labels (core/gpu_identity.h), where not empty: an
    // empty label is no label in Prometheus, so whole GPUs carry no MIG ones.
    ForEachField(gpu->identity, [&](const IdentityField& field, const std::string& value) {
      if (field.info_label && !value.empty()) labels.push_back({field.name, value});
    });
    if (!gpu->clock_source.empty()) labels.push_back({"clock_source", gpu->clock_source});
    out.Sample(labels, 1);
  }
  out.Family("ofu_gpu_up", MetricType::kGauge,
             "1 when the GPU answered in the last window, 0 when lost or unreachable.");
  for (const GpuState* gpu : gpus) out.Sample(series_labels(*gpu), gpu->up ? 1 : 0);
  out.Family("ofu_gpu_job", MetricType::kInfo, "The job running on the GPU now; join on uuid.");
  for (const GpuState* gpu : gpus) {
    if (!gpu->job) continue;
    out.Sample({{"uuid", gpu->identity.key},
                {"job_id", gpu->job->job_id},
                {"user", gpu->job->user},
                {"job_name", gpu->job->job_name},
                {"scheduler", gpu->job->scheduler}},
               1);
  }
  out.Family("ofu_source_errors", MetricType::kCounter,
             "GPU-windows in which the source could not read a GPU, by kind.");
  for (const auto& [kind, count] : source_errors_) {
    out.Sample({{"source", options_.source_name}, {"kind", kind}}, static_cast<double>(count));
  }
  out.Family("ofu_sink_dropped_windows", MetricType::kCounter,
             "Windows a sink behind a queue dropped because the queue was full (the sink was slower than the "
             "sampling), by sink.");
  for (const auto& [sink, count] : dropped_windows_) {
    out.Sample({{"sink", sink}}, static_cast<double>(count));
  }
  // Every reason from the start, 0 until it happens: a counter that appears
  // only with its first increment hides that increment from increase().
  out.Family("ofu_http_connections_rejected", MetricType::kCounter,
             "Connections the agent's HTTP server closed or refused to protect itself, by reason.");
  for (const ConnectionRejection reason : kAllRejections) {
    out.Sample({{"reason", ConnectionRejectionLabel(reason)}}, static_cast<double>(RejectedConnections(reason)));
  }
  out.Family("ofu_build", MetricType::kInfo, "The agent's version and the source it reads.");
  out.Sample({{"version", options_.version}, {"source", options_.source_name}}, 1);
  RenderOwnCost(out);
  return out.Finish();
}

// Every function the library exports that the source resolved is listed
// from 0; `kind` separates wall time from this thread's CPU time and its
// user and system parts, which are not to be summed with each other.
void MetricsState::RenderOwnCost(formats::ExpositionWriter& out) const {
  if (options_.call_accounting != nullptr) {
    const std::vector<sources::CallTotals> calls = options_.call_accounting->Snapshot();
    out.Family("ofu_source_calls", MetricType::kCounter,
               "Calls the source made into its GPU library (NVML, DCGM), by the library's function name.");
    for (const sources::CallTotals& call : calls) out.Sample({{"call", call.call}}, static_cast<double>(call.calls));
    out.Family("ofu_source_call_seconds", MetricType::kCounter,
               "Time spent inside the source's GPU library calls, by function; kind: wall (elapsed), cpu (the "
               "calling thread's CPU time), user and system (its parts). Do not sum over kind.");
    for (const sources::CallTotals& call : calls) {
      out.Sample({{"call", call.call}, {"kind", "wall"}}, call.wall_s);
      out.Sample({{"call", call.call}, {"kind", "cpu"}}, call.cpu_s);
      if (call.user_s) out.Sample({{"call", call.call}, {"kind", "user"}}, *call.user_s);
      if (call.system_s) out.Sample({{"call", call.call}, {"kind", "system"}}, *call.system_s);
    }
  }
  if (!options_.proc_files) return;
  const auto figures = sources::ReadProcessFigures(*options_.proc_files);
  if (!figures.ok()) return;
  out.Family("process_cpu_seconds", MetricType::kCounter, "Total user and system CPU time spent in seconds.");
  out.Sample(kNoLabels, figures->cpu_seconds);
  out.Family("process_resident_memory_bytes", MetricType::kGauge, "Resident memory size in bytes.");
  out.Sample(kNoLabels, figures->resident_memory_bytes);
  out.Family("process_virtual_memory_bytes", MetricType::kGauge, "Virtual memory size in bytes.");
  out.Sample(kNoLabels, figures->virtual_memory_bytes);
  if (figures->start_time_seconds) {
    out.Family("process_start_time_seconds", MetricType::kGauge,
               "Start time of the process since unix epoch in seconds.");
    out.Sample(kNoLabels, *figures->start_time_seconds);
  }
  if (figures->open_fds) {
    out.Family("process_open_fds", MetricType::kGauge, "Number of open file descriptors.");
    out.Sample(kNoLabels, *figures->open_fds);
  }
  if (figures->max_fds) {
    out.Family("process_max_fds", MetricType::kGauge, "Maximum number of open file descriptors.");
    out.Sample(kNoLabels, *figures->max_fds);
  }
}

}  // namespace ofu::sinks
