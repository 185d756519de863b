#include "ofu/analysis/fleet_report.h"

#include <memory>
#include <utility>

#include <fmt/format.h>

namespace ofu::analysis {

Result<FleetReport> LoadFleetReport(const history::HistorySource& source, const history::HistoryQuery& query,
                                    const GpuSpecDatabase& specs, bool windows_needed) {
  FleetReport out;
  switch (history::ChooseReadWay(source, windows_needed)) {
    case history::ReadWay::kPrometheusTotals: {
      OFU_ASSIGN_OR_RETURN(auto totals, history::ReadTotalsFrom(source, query, &specs));
      out.report = BuildTotalsReport(totals, specs);
      out.has_data = !totals.of_gpu.empty();
      out.history = std::move(totals.history);
      out.summed_by_server = true;
      return out;
    }
    case history::ReadWay::kStoreStream: {
      // The store's rows stream through the report: memory does not grow with them.
      OFU_ASSIGN_OR_RETURN(auto streamed, ReadStoreReport(source.store, query, specs, {.rollups = !source.per_window}));
      out.history = std::move(streamed.head);
      out.report = std::move(streamed.report);
      out.has_data = streamed.rows > 0;
      return out;
    }
    case history::ReadWay::kWindows: break;
  }
  std::vector<std::string> notes;
  OFU_ASSIGN_OR_RETURN(out.history, history::ReadHistoryFrom(source, query, &notes));
  out.report = BuildStoreReport(out.history, specs);
  out.report.notes.insert(out.report.notes.end(), notes.begin(), notes.end());
  out.has_data = !out.history.windows.empty();
  return out;
}

Status CheckFleetHasOfu(const FleetReport& fleet, const history::HistorySource& source,
                        const history::HistoryQuery& query, bool range_given) {
  const std::string where = history::SourceName(source);
  if (!fleet.has_data) {
    return Error::NoData("{}: no windows{}{} in the {}", where,
                         query.job_id ? fmt::format(" of job {}", *query.job_id) : "",
                         range_given ? " in that time range" : "", source.store.empty() ? "server" : "store");
  }
  if (!fleet.report.overall.ofu) {
    return Error::NoData("{}: no stored window has an OFU (see the notes above)", where);
  }
  return OkStatus();
}

Result<FleetReport> ScanFleetHistory(const history::HistorySource& source, const history::HistoryQuery& query,
                                     const GpuSpecDatabase& specs,
                                     const std::function<Status(const history::StoredHistory& batch)>& on_batch) {
  if (!source.store.empty()) {
    // One pass: every row to the report as its GPU's batch passes. The
    // builder is made from the store's head, which outlives it here.
    history::StoredHistory head;
    std::unique_ptr<StoreReportBuilder> report;
    const auto start = [&](const history::StoredHistory& stored) {
      head = stored;
      report = std::make_unique<StoreReportBuilder>(head, specs);
    };
    const auto add = [&](const history::StoredHistory& batch) -> Status {
      for (const history::StoredWindow& row : batch.windows) report->Add(row);
      return on_batch(batch);
    };
    OFU_RETURN_IF_ERROR(history::ScanHistoryByGpu(source, query, add, start));
    FleetReport out;
    out.has_data = report->rows() > 0;
    out.report = report->Finish();
    out.history = std::move(head);
    return out;
  }
  OFU_ASSIGN_OR_RETURN(FleetReport out, LoadFleetReport(source, query, specs, /*windows_needed=*/false));
  OFU_ASSIGN_OR_RETURN(auto gpus, history::ScanHistoryByGpu(source, query, on_batch));
  out.history.step_s = gpus.step_s;
  return out;
}

}  // namespace ofu::analysis
