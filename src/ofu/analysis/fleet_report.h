// The fleet's report over a range (`ofu report --store/--prometheus`, `ofu
// reconcile`, `ofu regress`): the history read the way that serves it
// (history/history_source.h) and its Report. Unless windows are needed
// (an HTML page, --per-window), `history` has the GPUs and job intervals
// only: from Prometheus the server sums the counters (BuildTotalsReport);
// from the store the rows stream through the report (StoreReportBuilder), so
// memory does not grow with them.
//
// Errors: those of history_source.h. Thread-safety: no shared state.
#pragma once

#include <functional>
#include <string>

#include "ofu/analysis/store_report.h"
#include "ofu/core/gpu_spec.h"
#include "ofu/core/result.h"
#include "ofu/history/history_reader.h"
#include "ofu/history/history_source.h"

namespace ofu::analysis {

struct FleetReport {
  history::StoredHistory history;
  Report report;
  bool summed_by_server = false;
  bool has_data = false;  // a window, or a sum, in the range
};

// `query` as history::BoundQuery gives it. `specs` must outlive the result.
Result<FleetReport> LoadFleetReport(const history::HistorySource& source, const history::HistoryQuery& query,
                                    const GpuSpecDatabase& specs, bool windows_needed);

// kNoData when the range gave no window (or sum), naming `where` (the store's
// path or the server's URL), the query's job and whether the user gave a
// range (`range_given`: Prometheus's query always has one); or when no window
// had an OFU. OK otherwise.
Status CheckFleetHasOfu(const FleetReport& fleet, const history::HistorySource& source,
                        const history::HistoryQuery& query, bool range_given);

// For scans that need windows but only one GPU's at a time (`ofu regress`):
// the batches of history::ScanHistoryByGpu go to `on_batch`. The result's
// report covers the whole range (from the store: its rows as they pass; from
// Prometheus: the server's sums) and its history has the GPUs (and, from
// Prometheus, the step the windows were read at).
Result<FleetReport> ScanFleetHistory(const history::HistorySource& source, const history::HistoryQuery& query,
                                     const GpuSpecDatabase& specs,
                                     const std::function<Status(const history::StoredHistory& batch)>& on_batch);

}  // namespace ofu::analysis
