#include "ofu/history/prometheus_servers.h"

#include <algorithm>
#include <cstdint>
#include <future>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ofu/formats/csv.h"

namespace ofu::history {
namespace {

template <typename T>
std::vector<ServerAnswer<T>> ReadEach(const std::vector<std::string>& urls,
                                      const std::function<Result<T>(const std::string& url)>& read) {
  std::vector<std::future<Result<T>>> pending;
  pending.reserve(urls.size());
  for (const std::string& url : urls) pending.push_back(std::async(std::launch::async, read, url));
  std::vector<ServerAnswer<T>> out;
  out.reserve(urls.size());
  for (std::size_t i = 0; i < urls.size(); ++i) out.push_back(ServerAnswer<T>{urls[i], pending[i].get()});
  return out;
}

// Which server each GPU is read from: for each server, its GPU ids that
// are kept and their new ids; and the kept GPUs, renumbered.
struct Choice {
  std::vector<std::map<std::int64_t, std::int64_t>> new_id;  // per server: its id -> the merged id
  std::vector<StoredGpu> gpus;
  int on_several = 0;  // GPUs found on more than one server
};

// `gpus_of(s)` the GPUs server s answered with (none when it failed);
// `observed_of(s, id)` the seconds its answer observed that GPU.
Choice ChooseServers(std::size_t servers, const std::function<const std::vector<StoredGpu>*(std::size_t)>& gpus_of,
                     const std::function<double(std::size_t, std::int64_t)>& observed_of) {
  struct Best {
    std::size_t server = 0;
    std::int64_t id = 0;
    double observed_s = 0;
    int seen = 0;
  };
  std::map<std::string, Best> best;  // by key
  for (std::size_t s = 0; s < servers; ++s) {
    const std::vector<StoredGpu>* gpus = gpus_of(s);
    if (gpus == nullptr) continue;
    for (const StoredGpu& gpu : *gpus) {
      const double observed = observed_of(s, gpu.id);
      auto [it, inserted] = best.try_emplace(gpu.key(), Best{s, gpu.id, observed, 0});
      ++it->second.seen;
      if (!inserted && observed > it->second.observed_s) {
        it->second.server = s;
        it->second.id = gpu.id;
        it->second.observed_s = observed;
      }
    }
  }
  Choice choice;
  choice.new_id.resize(servers);
  for (std::size_t s = 0; s < servers; ++s) {
    const std::vector<StoredGpu>* gpus = gpus_of(s);
    if (gpus == nullptr) continue;
    for (const StoredGpu& gpu : *gpus) {
      const Best& chosen = best.at(gpu.key());
      if (chosen.server != s || chosen.id != gpu.id) continue;
      StoredGpu kept = gpu;
      kept.id = static_cast<std::int64_t>(choice.gpus.size()) + 1;
      choice.new_id[s][gpu.id] = kept.id;
      choice.gpus.push_back(std::move(kept));
      if (chosen.seen > 1) ++choice.on_several;
    }
  }
  return choice;
}

// The notes every merge gives: the servers that failed, the GPUs found twice.
template <typename T>
Status ServerNotes(const std::vector<ServerAnswer<T>>& servers, const Choice& choice, std::vector<std::string>& notes) {
  std::vector<std::string> failed;
  for (const ServerAnswer<T>& server : servers) {
    if (server.answer.ok()) continue;
    failed.push_back(fmt::format("{}: {}", server.url, server.answer.error().message));
  }
  if (failed.size() == servers.size()) {
    return Error{servers.front().answer.error().code,
                 fmt::format("no Prometheus server answered: {}", fmt::join(failed, "; "))};
  }
  for (const std::string& why : failed) {
    notes.push_back(fmt::format("server {}; its GPUs are missing from this answer", why));
  }
  if (choice.on_several > 0) {
    notes.push_back(fmt::format(
        "{} GPU(s) were on more than one server (replicas, or moved between shards); each is counted once, from "
        "the server with the most observed seconds for it",
        choice.on_several));
  }
  return OkStatus();
}

std::string PathOf(const std::vector<std::string>& urls) { return fmt::format("{}", fmt::join(urls, ", ")); }

template <typename T>
std::vector<std::string> UrlsOf(const std::vector<ServerAnswer<T>>& servers) {
  std::vector<std::string> urls;
  for (const ServerAnswer<T>& server : servers) urls.push_back(server.url);
  return urls;
}

}  // namespace

Result<std::vector<std::string>> ParseServerList(std::string_view text, std::string_view name) {
  std::vector<std::string> urls;
  int number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    line = formats::TrimSpace(line);
    if (line.empty() || line.front() == '#') continue;
    if (!line.starts_with("http://") && !line.starts_with("https://")) {
      return Error::MalformedInput("{}:{}: not a Prometheus URL (http:// or https://): '{}'", name, number,
                                   line.substr(0, 80));
    }
    urls.emplace_back(line);
  }
  if (urls.empty()) return Error::MalformedInput("{}: no Prometheus URL in it", name);
  return urls;
}

std::vector<ServerAnswer<HistoryTotals>> ReadFromServers(
    const std::vector<std::string>& urls, const std::function<Result<HistoryTotals>(const std::string& url)>& read) {
  return ReadEach(urls, read);
}

std::vector<ServerAnswer<StoredHistory>> ReadFromServers(
    const std::vector<std::string>& urls, const std::function<Result<StoredHistory>(const std::string& url)>& read) {
  return ReadEach(urls, read);
}

Result<HistoryTotals> MergeServerTotals(std::vector<ServerAnswer<HistoryTotals>> servers) {
  if (servers.empty()) return Error::InvalidArgument("no Prometheus server given");
  const Choice choice = ChooseServers(
      servers.size(),
      [&](std::size_t s) { return servers[s].answer.ok() ? &servers[s].answer->history.gpus : nullptr; },
      [&](std::size_t s, std::int64_t id) {
        const auto& of_gpu = servers[s].answer->of_gpu;
        const auto it = of_gpu.find(id);
        return it == of_gpu.end() ? 0.0 : it->second.counters.observed_s();
      });
  HistoryTotals merged;
  OFU_RETURN_IF_ERROR(ServerNotes(servers, choice, merged.notes));
  merged.history.path = PathOf(UrlsOf(servers));
  merged.history.gpus = choice.gpus;
  bool first = true;
  std::set<double> intervals;  // the servers' scrape intervals
  for (std::size_t s = 0; s < servers.size(); ++s) {
    if (!servers[s].answer.ok()) continue;
    HistoryTotals& totals = *servers[s].answer;
    const auto& ids = choice.new_id[s];
    if (first) merged.history.query = totals.history.query;
    first = false;
    if (totals.window_s > 0) intervals.insert(totals.window_s);
    for (StoredJob job : totals.history.jobs) {
      const auto id = ids.find(job.gpu_id);
      if (id == ids.end()) continue;
      job.gpu_id = id->second;
      merged.history.jobs.push_back(std::move(job));
    }
    for (auto& [gpu, sums] : totals.of_gpu) {
      const auto id = ids.find(gpu);
      if (id == ids.end()) continue;
      sums.gpu_id = id->second;
      merged.of_gpu[id->second] = sums;
    }
    for (auto& [key, sums] : totals.of_job) {
      const auto id = ids.find(key.second);
      if (id == ids.end()) continue;
      sums.gpu_id = id->second;
      merged.of_job[{key.first, id->second}] = sums;
    }
    for (const std::string& note : totals.notes) merged.notes.push_back(fmt::format("{}: {}", servers[s].url, note));
  }
  if (!intervals.empty()) merged.window_s = *intervals.begin();
  if (intervals.size() > 1) {
    merged.notes.push_back(fmt::format("the servers' scrape intervals differ ({} s); each server's sums are exact",
                                       fmt::join(intervals, ", ")));
  }
  return merged;
}

Result<StoredHistory> MergeServerHistories(std::vector<ServerAnswer<StoredHistory>> servers,
                                           std::vector<std::string>& notes) {
  if (servers.empty()) return Error::InvalidArgument("no Prometheus server given");
  // Each GPU's observed seconds on each server.
  std::vector<std::map<std::int64_t, double>> observed(servers.size());
  for (std::size_t s = 0; s < servers.size(); ++s) {
    if (!servers[s].answer.ok()) continue;
    for (const StoredWindow& w : servers[s].answer->windows) observed[s][w.gpu_id] += w.counters.observed_s();
  }
  const Choice choice = ChooseServers(
      servers.size(), [&](std::size_t s) { return servers[s].answer.ok() ? &servers[s].answer->gpus : nullptr; },
      [&](std::size_t s, std::int64_t id) {
        const auto it = observed[s].find(id);
        return it == observed[s].end() ? 0.0 : it->second;
      });
  OFU_RETURN_IF_ERROR(ServerNotes(servers, choice, notes));
  StoredHistory merged;
  merged.path = PathOf(UrlsOf(servers));
  merged.gpus = choice.gpus;
  bool first = true;
  for (std::size_t s = 0; s < servers.size(); ++s) {
    if (!servers[s].answer.ok()) continue;
    StoredHistory& history = *servers[s].answer;
    const auto& ids = choice.new_id[s];
    if (first) {
      merged.query = history.query;
      merged.step_s = history.step_s;
    }
    first = false;
    for (StoredWindow& w : history.windows) {
      const auto id = ids.find(w.gpu_id);
      if (id == ids.end()) continue;
      w.gpu_id = id->second;
      merged.windows.push_back(w);
    }
    for (StoredJob& job : history.jobs) {
      const auto id = ids.find(job.gpu_id);
      if (id == ids.end()) continue;
      job.gpu_id = id->second;
      merged.jobs.push_back(std::move(job));
    }
  }
  // By GPU id, then time, as a reader gives them: the ids follow the servers' order.
  std::stable_sort(merged.windows.begin(), merged.windows.end(), [](const StoredWindow& a, const StoredWindow& b) {
    return a.gpu_id != b.gpu_id ? a.gpu_id < b.gpu_id : a.end_s < b.end_s;
  });
  return merged;
}

}  // namespace ofu::history
