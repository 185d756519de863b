#include "ofu/history/history_source.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/history/prometheus_servers.h"

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
  for (const std::string& url : source.prometheus) {
    if (url.empty()) return Error::InvalidArgument("--prometheus: an empty URL");
  }
  return OkStatus();
}

std::string SourceName(const HistorySource& source) {
  return source.store.empty() ? fmt::format("{}", fmt::join(source.prometheus, ", ")) : source.store;
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

namespace {

// Each server's progress, named, one line at a time: the servers are read
// on threads of their own.
std::function<void(const std::string&)> ServerProgress(const HistorySource& source, const std::string& url,
                                                       std::mutex& lock) {
  if (!source.progress) return nullptr;
  return [&source, &lock, url](const std::string& line) {
    std::lock_guard hold(lock);
    source.progress(fmt::format("{}: {}", url, line));
  };
}

// dcgm-exporter's series are read as the server's sums (dcgm_hourly.h); the
// window readers read the agent's counters and would find none of them.
Status CheckAgentSeries(const HistorySource& source) {
  if (!source.dcgm_exporter) return OkStatus();
  return Error::InvalidArgument(
      "dcgm-exporter's series are read as the server's sums per GPU and job, not window by window: no "
      "--per-window, --html with --job-labels, or regress on them (report --html without --job-labels reads "
      "every sample of one server)");
}

}  // namespace

Result<StoredHistory> ReadHistoryFrom(const HistorySource& source, const HistoryQuery& query,
                                      std::vector<std::string>* notes) {
  OFU_RETURN_IF_ERROR(CheckAgentSeries(source));
  if (source.prometheus.size() > 1) {
    std::mutex lock;
    std::vector<std::string> merged_notes;
    OFU_ASSIGN_OR_RETURN(
        StoredHistory merged,
        MergeServerHistories(
            ReadFromServers(source.prometheus,
                            std::function<Result<StoredHistory>(const std::string&)>([&](const std::string& url) {
                              PrometheusQueryOptions options = QueryOptionsOf(source);
                              options.progress = ServerProgress(source, url, lock);
                              return ReadPrometheusHistory(url, query, options);
                            })),
            merged_notes));
    if (notes != nullptr) notes->insert(notes->end(), merged_notes.begin(), merged_notes.end());
    return merged;
  }
  if (source.store.empty()) return ReadPrometheusHistory(source.prometheus.front(), query, QueryOptionsOf(source));
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
  // One server's sums, its progress told to `progress`.
  const auto read_one = [&](const std::string& url,
                            std::function<void(const std::string&)> progress) -> Result<HistoryTotals> {
    if (source.dcgm_exporter) {
      DcgmTotalsOptions options;
      options.query = QueryOptionsOf(source);
      options.query.progress = std::move(progress);
      options.specs = specs;
      options.jobs = source.dcgm_jobs;
      return ReadDcgmTotals(url, query, options, source.resolution);
    }
    PrometheusTotalsOptions options;
    options.query = QueryOptionsOf(source);
    options.query.progress = std::move(progress);
    return ReadTotalsAtResolution(url, query, options, source.resolution);
  };
  if (source.prometheus.size() == 1) return read_one(source.prometheus.front(), source.progress);
  std::mutex lock;
  return MergeServerTotals(ReadFromServers(
      source.prometheus, std::function<Result<HistoryTotals>(const std::string&)>([&](const std::string& url) {
        return read_one(url, ServerProgress(source, url, lock));
      })));
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
  OFU_RETURN_IF_ERROR(CheckAgentSeries(source));
  if (source.prometheus.size() > 1) {
    // A GPU's batches would come from each server that has it before the
    // servers could be compared (prometheus_servers.h's rule).
    return Error::InvalidArgument(
        "this command reads one Prometheus server at a time; give one --prometheus (each shard in turn)");
  }
  return ReadHistoryAtResolutionInBatches(source.prometheus.front(), query, QueryOptionsOf(source), source.resolution,
                                          on_batch);
}

}  // namespace ofu::history
