// Where a fleet's history is read from, and how (`ofu report`, `ofu
// reconcile`, `ofu regress`): the agent's store (a path) or a Prometheus
// server that scrapes the agents (a URL), and the way a read goes:
//
//   kPrometheusTotals  the server sums the counters (prometheus_totals.h):
//                      a few values per GPU and job, whatever the range
//   kStoreStream       the store's rows (or its hourly rollups) go one at a
//                      time through whoever reads them (HistoryStream), so
//                      memory does not grow with them
//   kWindows           every window is held: the store's rows up to
//                      max_windows, or Prometheus's scrapes at a step
//
// The first two serve a report; the windows are read only when something
// needs them all (an HTML page, --per-window from Prometheus).
//
// Errors: kInvalidArgument unless exactly one of store and prometheus is
// given, and (the store) when the selection has more than max_windows
// windows; otherwise the readers' (history_reader.h, prometheus_client.h).
// Thread-safety: no shared state; `progress` is called on the caller's thread.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/history/dcgm_hourly.h"
#include "ofu/history/history_reader.h"
#include "ofu/history/prometheus_history.h"
#include "ofu/history/prometheus_hourly.h"
#include "ofu/history/prometheus_totals.h"

namespace ofu::history {

struct HistorySource {
  std::string store;  // the agent's history store (SQLite); or
  // Prometheus servers' URLs (query API): one, or several that each hold
  // part of the fleet, read in parallel and added (prometheus_servers.h).
  std::vector<std::string> prometheus;
  double timeout_s = 60;  // per query to Prometheus
  // Read every window (the store: instead of its hourly rollups;
  // Prometheus: every scrape instead of the server's sums).
  bool per_window = false;
  // Prometheus, where windows are read: their length in seconds (0: every
  // scrape); unset: every scrape with per_window, else from the range.
  std::optional<double> step_s;
  // Where every window is held (kWindows from the store): refuse a range of
  // more than this many, about 300 bytes each in memory, rather than run out.
  std::size_t max_windows = kDefaultMaxWindows;
  static constexpr std::size_t kDefaultMaxWindows = 20'000'000;
  // Prometheus sums: from the hourly rollups where they cover the range, or
  // the raw counters (prometheus_hourly.h).
  Resolution resolution = Resolution::kAuto;
  // Prometheus sums: of the agent's counters, or of dcgm-exporter's series
  // (dcgm_hourly.h), whose jobs come from `dcgm_jobs`' labels.
  bool dcgm_exporter = false;
  DcgmJobLabels dcgm_jobs = DcgmJobLabels::kNone;
  // Progress of long Prometheus queries, for people; may be empty.
  std::function<void(const std::string&)> progress;
};

enum class ReadWay { kPrometheusTotals, kStoreStream, kWindows };

// How a report is read: totals or the store's stream unless per_window
// (Prometheus) or `windows_needed` asks for the windows.
ReadWay ChooseReadWay(const HistorySource& source, bool windows_needed);

// kInvalidArgument unless exactly one of store and prometheus is given.
Status CheckOneSource(const HistorySource& source);

// For people: the store's path, or the servers' URLs joined by ", ".
std::string SourceName(const HistorySource& source);

// `query` checked against `source`, with Prometheus's range bounded: it
// ends at `now_s` and begins a day before its end unless told.
Result<HistoryQuery> BoundQuery(const HistorySource& source, HistoryQuery query, double now_s);

// What a Prometheus read asks of the server (prometheus_history.h).
PrometheusQueryOptions QueryOptionsOf(const HistorySource& source);

// kWindows: every window in the range, from the store (all of it unless
// the query bounds it) or from Prometheus (the step bounds the windows: at
// most about 2,000 per GPU unless step_s or per_window asks for more).
// The store's kInvalidArgument for too many windows says how to narrow them.
// Several servers' notes (one that failed, GPUs on two) go to `notes`.
// Windows are the agent's: kInvalidArgument for dcgm_exporter (its series
// are read as sums, ReadTotalsFrom), here and in ScanHistoryByGpu.
Result<StoredHistory> ReadHistoryFrom(const HistorySource& source, const HistoryQuery& query,
                                      std::vector<std::string>* notes = nullptr);

// kPrometheusTotals: the servers' sums (Prometheus only), added over
// several servers by prometheus_servers.h's rules; of dcgm-exporter's
// series, `specs` (required then) gives each GPU's SKU and OFU scale.
Result<HistoryTotals> ReadTotalsFrom(const HistorySource& source, const HistoryQuery& query,
                                     const GpuSpecDatabase* specs = nullptr);

// For scans that need windows but one GPU's at a time: the history goes to
// `on_batch` in batches of GPUs, each GPU's windows and job intervals in one
// batch (the store's one GPU at a time, in its order, a GPU with job
// intervals and no windows in the range too; Prometheus's as many as a
// query holds), so that the fleet's windows are never held at once. Returns
// the history without windows: its GPUs and job intervals (the store), or
// its GPUs and step_s (Prometheus). An error from `on_batch` stops the scan.
// `on_head`, when given, is called once before the first batch with the
// history without windows where the source knows it first (the store: its
// GPUs and job intervals); Prometheus learns its GPUs with the batches and
// does not call it.
Result<StoredHistory> ScanHistoryByGpu(const HistorySource& source, const HistoryQuery& query,
                                       const std::function<Status(const StoredHistory& batch)>& on_batch,
                                       const std::function<void(const StoredHistory& head)>& on_head = nullptr);

}  // namespace ofu::history
