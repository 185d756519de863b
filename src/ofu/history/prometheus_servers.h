// A fleet past one Prometheus server (`--prometheus` given more than once,
// or a file listing the servers): each server is read on a thread of its
// own, and their answers are added, exactly, as one history.
//
// Operators shard a large fleet's scrapes over several servers (hash-mod
// relabelling, one server per cluster or region) and run them in pairs for
// availability. Each server's sums (prometheus_totals.h, or its windows,
// prometheus_history.h) are exact for the GPUs it scraped; the fleet's are
// their sum, with two rules:
//
// One GPU, one server. A GPU is its key (the `uuid` label: UUID, or
// UUID/gi<N> for a MIG instance). A GPU found on several servers (both
// servers of an HA pair scrape it; it moved between shards during the
// range) is read from one of them only: the one whose answer has the most
// observed seconds for it, ties to the server listed first; its job sums
// and intervals come from that server too. Adding both would count its
// time twice; the server with more seconds missed fewer scrapes. Servers
// that differ only by a replica label (`replica`, `prometheus_replica`:
// the external label Thanos and VictoriaMetrics name replicas by) need
// nothing more: a server's query answers do not carry its external labels,
// so both name the GPU alike and the rule above picks one.
//
// A server that fails is never dropped silently. Its error is kept, named
// by its URL, in the history's notes ("its GPUs are missing from this
// answer"), and the other servers' GPUs are answered; only when every
// server fails is the read an error (the first server's, naming all).
//
// GPU ids are renumbered 1, 2, ... in the order of the servers, then of
// each server's GPUs; the windows, jobs and sums follow their GPU.
//
// Thread-safety: ReadFromServers calls `read` on several threads at once
// (each with its own URL); `read` must allow that. The merges are pure.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/history/history_reader.h"
#include "ofu/history/prometheus_totals.h"

namespace ofu::history {

// A file of servers (`--prometheus-file`): one URL a line; blank lines and
// lines starting with '#' are skipped, spaces around a URL trimmed. A URL
// is http:// or https://; anything else is kMalformedInput naming `name`
// and the line. No server at all is kMalformedInput too.
Result<std::vector<std::string>> ParseServerList(std::string_view text, std::string_view name);

// One server's answer, or why there is none.
template <typename T>
struct ServerAnswer {
  std::string url;
  Result<T> answer;
};

// `read` of every URL, each on a thread of its own; the answers in the
// order of `urls`.
std::vector<ServerAnswer<HistoryTotals>> ReadFromServers(
    const std::vector<std::string>& urls, const std::function<Result<HistoryTotals>(const std::string& url)>& read);
std::vector<ServerAnswer<StoredHistory>> ReadFromServers(
    const std::vector<std::string>& urls, const std::function<Result<StoredHistory>(const std::string& url)>& read);

// The servers' sums as one fleet's, by the rules above. `window_s` is the
// smallest server's (a note says so when they differ).
Result<HistoryTotals> MergeServerTotals(std::vector<ServerAnswer<HistoryTotals>> servers);

// The servers' windows as one history, by the same rules (a GPU's observed
// seconds: those of its windows). Notes go to `notes`.
Result<StoredHistory> MergeServerHistories(std::vector<ServerAnswer<StoredHistory>> servers,
                                           std::vector<std::string>& notes);

}  // namespace ofu::history
