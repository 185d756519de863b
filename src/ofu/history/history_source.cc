#include "ofu/history/history_source.h"

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace ofu::history {

ReadWay ChooseReadWay(const HistorySource& source, bool windows_needed) {
  if (windows_needed) return ReadWay::kWindows;
  if (!source.store.empty()) return ReadWay::kStoreStream;
  return source.per_window ? ReadWay::kWindows : ReadWay::kPrometheusTotals;
}

Status CheckOneSource(const HistorySource& source) {
  if (source.store.empty() == source.prometheus.empty()) {
    return Error::InvalidArgument("give one of --store PATH (the agent's history) or --prometheus URL");
  }
  return OkStatus();
}

Result<HistoryQuery> BoundQuery(const HistorySource& source, HistoryQuery query, double now_s) {
  OFU_RETURN_IF_ERROR(CheckOneSource(source));
  if (source.store.empty()) {
    // A Prometheus range must be bounded: the last day unless told.
    if (!query.until_s) query.until_s = now_s;
    if (!query.since_s) query.since_s = *query.until_s - 86400;
  }
  return query;
}

PrometheusQueryOptions QueryOptionsOf(const HistorySource& source) {
  PrometheusQueryOptions options;
  options.timeout_s = source.timeout_s;
  options.progress = source.progress;
  // per_window asks for every scrape; otherwise the step is chosen from the range.
  if (source.step_s) {
    options.step_s = *source.step_s;
  } else if (source.per_window) {
    options.step_s = 0;
  }
  return options;
}

Result<StoredHistory> ReadHistoryFrom(const HistorySource& source, const HistoryQuery& query) {
  if (source.store.empty()) return ReadPrometheusHistory(source.prometheus, query, QueryOptionsOf(source));
  auto history = ReadHistory(source.store, query, source.max_windows);
  // kInvalidArgument: more windows than max_windows; say how to narrow them.
  if (!history.ok() && history.error().code == ErrorCode::kInvalidArgument) {
    return Error{ErrorCode::kInvalidArgument,
                 history.error().message + "; narrow it with --since/--until or --job, or raise --max-windows"};
  }
  return history;
}

Result<HistoryTotals> ReadTotalsFrom(const HistorySource& source, const HistoryQuery& query,
                                     const GpuSpecDatabase* specs) {
  if (source.prometheus.empty()) return Error::InvalidArgument("the server's sums come from --prometheus only");
  if (source.dcgm_exporter) {
    DcgmTotalsOptions options;
    options.query = QueryOptionsOf(source);
    options.specs = specs;
    options.jobs = source.dcgm_jobs;
    return ReadDcgmTotals(source.prometheus, query, options, source.resolution);
  }
  PrometheusTotalsOptions options;
  options.query = QueryOptionsOf(source);
  return ReadTotalsAtResolution(source.prometheus, query, options, source.resolution);
}

namespace {

// One pass over the store: each GPU's rows go to `on_batch` once the stream
// moves on to the next GPU (it reads GPU by GPU).
Result<StoredHistory> ScanStoreByGpu(const std::string& path, const HistoryQuery& query,
                                     const std::function<Status(const StoredHistory& batch)>& on_batch,
                                     const std::function<void(const StoredHistory& head)>& on_head) {
  OFU_ASSIGN_OR_RETURN(auto stream, HistoryStream::Open(path, query));
  const StoredHistory& head = stream->history();
  if (on_head) on_head(head);
  StoredHistory batch;
  batch.path = head.path;
  batch.query = head.query;
  batch.gpus = head.gpus;
  // A GPU's rows and job intervals; a GPU with intervals and no rows in the
  // range too, as a scan over the whole history sees it.
  std::map<std::int64_t, std::vector<StoredJob>> jobs_of;  // GPU id -> its intervals
  for (const StoredJob& job : head.jobs) jobs_of[job.gpu_id].push_back(job);
  const auto send = [&](std::int64_t gpu) -> Status {
    auto jobs = jobs_of.extract(gpu);
    batch.jobs = jobs ? std::move(jobs.mapped()) : std::vector<StoredJob>{};
    if (batch.windows.empty() && batch.jobs.empty()) return OkStatus();
    OFU_RETURN_IF_ERROR(on_batch(batch));
    batch.windows.clear();
    return OkStatus();
  };
  StoredWindow row;
  while (true) {
    OFU_ASSIGN_OR_RETURN(const bool more, stream->Next(row));
    if (!more) break;
    if (!batch.windows.empty() && row.gpu_id != batch.windows.front().gpu_id) {
      OFU_RETURN_IF_ERROR(send(batch.windows.front().gpu_id));
    }
    batch.windows.push_back(row);
  }
  if (!batch.windows.empty()) OFU_RETURN_IF_ERROR(send(batch.windows.front().gpu_id));
  while (!jobs_of.empty()) OFU_RETURN_IF_ERROR(send(jobs_of.begin()->first));
  return head;
}

}  // namespace

Result<StoredHistory> ScanHistoryByGpu(const HistorySource& source, const HistoryQuery& query,
                                       const std::function<Status(const StoredHistory& batch)>& on_batch,
                                       const std::function<void(const StoredHistory& head)>& on_head) {
  if (!source.store.empty()) return ScanStoreByGpu(source.store, query, on_batch, on_head);
  return ReadHistoryAtResolutionInBatches(source.prometheus, query, QueryOptionsOf(source), source.resolution,
                                          on_batch);
}

}  // namespace ofu::history
