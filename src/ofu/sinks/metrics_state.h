// The agent's Prometheus metrics: the state behind /metrics and /healthz.
//
// It keeps, per GPU, the monotonic counters of docs/prometheus.md §1
// (utilized, observed, busy, busy-utilized and tensor-active seconds, and
// HMMA/IMMA/DFMA-active seconds where the source has those pipes, and the
// CUDA-core FP64/FP32/FP16-active seconds and the non-tensor FLOP bound where
// it has those and the SKU lists the lanes; each
// window adds what the counter rule of window_counters.h gives), the
// gauges of the last window, the GPU's info and up-ness, the job now on it,
// and per source the error counters; and renders them in Prometheus text or
// OpenMetrics. The contract (names, labels, what is absent when) is
// docs/prometheus.md; the rules in deploy/prometheus depend on it.
//
// Health: unhealthy when no window batch arrived for `stale_windows` windows,
// or when no GPU has answered in that long — a daemon that serves stale
// values behind a healthy endpoint is what dcgm-exporter's users were burnt by.
//
// It counts the windows a sink behind a queue (async_sink.h) dropped
// (ofu_sink_dropped_windows_total{sink}), so a store that cannot keep up is
// visible; and the connections the HTTP server (metrics_server.h) closed
// or refused to protect itself (ofu_http_connections_rejected_total{reason}),
// so an operator sees an attack or a misconfigured scraper.
//
// It exports what the agent itself costs: calls and time per library
// function of the NVML or DCGM source (ofu_source_calls_total{call},
// ofu_source_call_seconds_total{call,kind}; call_accounting.h) and the
// process figures under the names Prometheus client libraries use
// (process_cpu_seconds_total, process_resident_memory_bytes, ...;
// process_figures.h), so an operator sees what ofu costs and where.
//
// Thread-safety: Consume and CountDroppedWindow (sampling thread),
// CountRejectedConnection (HTTP thread) and Render/CheckHealth (HTTP thread)
// may run concurrently; a mutex guards the state, the rejection counters are
// atomic.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "ofu/core/sample.h"
#include "ofu/formats/exposition.h"
#include "ofu/net/connection_rejection.h"
#include "ofu/sinks/sink.h"
#include "ofu/sinks/window_counters.h"
#include "ofu/sources/call_accounting.h"
#include "ofu/sources/clock.h"
#include "ofu/sources/process_figures.h"

namespace ofu::sinks {

struct MetricsOptions {
  std::string version;       // ofu_build_info{version}
  std::string source_name;   // Source::kind(), e.g. "nvml": ofu_build_info{source}, errors' {source}
  double window_s = 1;       // ofu_window_seconds
  double stale_windows = 3;  // /healthz turns unhealthy after this many windows without data
  // The agent's own cost, read at each Render (docs/prometheus.md §1): the
  // source's library calls from this accounting (null: no ofu_source_call*
  // families), and the process_* figures from these /proc files (unset:
  // none; a read that fails leaves them out of that scrape).
  const sources::CallAccounting* call_accounting = nullptr;
  std::optional<sources::ProcFiles> proc_files = std::nullopt;
  // The counters exported, a family each (core/output_counters.h); not
  // owned, outlives the state.
  const OutputCounterTable* counters = &OutputCounterTable::Builtin();
};

// Why the HTTP server closed or refused a connection (net/connection_rejection.h);
// the {reason} label of ofu_http_connections_rejected_total (docs/prometheus.md §1).
using net::ConnectionRejection;
using net::kConnectionRejections;
std::string_view ConnectionRejectionLabel(ConnectionRejection reason);

struct Health {
  bool healthy = true;
  std::string reason;  // why not, for people; empty when healthy
};

class MetricsState : public Sink {
 public:
  // `clock` must outlive the state; it starts the staleness clock now.
  MetricsState(MetricsOptions options, sources::Clock& clock);

  std::string_view name() const override { return "metrics"; }
  Status Consume(const WindowBatch& batch) override;

  // New options after a config reload; the counters carry on.
  void Reconfigure(MetricsOptions options);

  std::string Render(formats::ExpositionFormat format) const;
  Health CheckHealth() const;

  // Declares a sink behind a queue (async_sink.h): its
  // ofu_sink_dropped_windows_total{sink} is exported from now on, from 0,
  // and kept across reloads (a counter never goes back).
  void AddQueuedSink(std::string_view sink);
  // Counts one window that sink dropped because its queue was full.
  void CountDroppedWindow(std::string_view sink);

  // Counts one connection the HTTP server closed or refused.
  void CountRejectedConnection(ConnectionRejection reason);
  std::uint64_t RejectedConnections(ConnectionRejection reason) const;

 private:
  struct GpuState {
    GpuIdentity identity;  // the window's; its key is the series' uuid label
    std::string sku, architecture;
    // Sums of CountersOfWindow (window_counters.h). A kWhenMeasured counter
    // is absent until the source first delivers its figure for this GPU in a
    // valid window (then a counter like the others).
    CounterValues counters;
    std::optional<double> ofu, tensor_active, sm_clock_mhz, spec_clock_mhz, last_valid_end_s;
    std::optional<double> ofu_clock_mhz;  // the clock the last OFU used (core/windows.h)
    std::string clock_source;             // of the last window with an OFU (ClockSourceName); empty before
    bool up = false;
    std::optional<attribution::JobInfo> job;
  };

  // The ofu_source_call* and process_* families (options_'s accounting and
  // /proc files); called by Render under the lock.
  void RenderOwnCost(formats::ExpositionWriter& out) const;

  MetricsOptions options_;
  sources::Clock& clock_;
  mutable std::mutex mutex_;
  std::map<std::string, GpuState> gpus_;                          // by GpuWindow::key()
  std::map<std::string, uint64_t> source_errors_;                 // by kind
  std::map<std::string, uint64_t, std::less<>> dropped_windows_;  // by sink name
  double last_batch_s_;  // clock time of the last batch (start time before the first)
  double last_up_s_;     // clock time of the last batch in which some GPU answered
  std::array<std::atomic<std::uint64_t>, kConnectionRejections> rejected_{};  // by ConnectionRejection
};

}  // namespace ofu::sinks
