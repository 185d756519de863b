// Several Prometheus servers' answers as one fleet's (history/prometheus_servers.h),
// on SYNTHETIC answers whose merged figures are worked out by hand: one GPU
// per key, from the server that observed it longest; ids renumbered in the
// servers' order; a failed server named; every server failed is an error.
// The servers themselves are in tests/fleet/several_servers_test.cc.
#include "ofu/history/prometheus_servers.h"

#include <gtest/gtest.h>

namespace ofu::history {
namespace {

StoredGpu Gpu(std::int64_t id, std::string key) {
  StoredGpu gpu;
  gpu.id = id;
  gpu.identity.key = std::move(key);
  return gpu;
}

StoredJob Job(std::int64_t gpu, double end_s) {
  StoredJob job;
  job.gpu_id = gpu;
  job.job_id = "J";
  job.end_s = end_s;
  return job;
}

StoredWindow Sums(std::int64_t gpu, double observed_s, double utilized_s) {
  StoredWindow w;
  w.gpu_id = gpu;
  w.counters.Set(kCounterObserved, observed_s);
  w.counters.Set(kCounterUtilized, utilized_s);
  w.flags = kHistoryDownsampled;
  return w;
}

// Server a: GPU-x (100 s) and GPU-y (50 s), job J on GPU-y. Server b:
// GPU-y again (80 s: it missed fewer scrapes) and GPU-z (30 s), job J on
// GPU-y and GPU-z.
HistoryTotals ServerA() {
  HistoryTotals t;
  t.history.gpus = {Gpu(1, "GPU-x"), Gpu(2, "GPU-y")};
  t.history.jobs = {Job(2, 50)};
  t.of_gpu = {{1, Sums(1, 100, 40)}, {2, Sums(2, 50, 10)}};
  t.of_job = {{{"J", 2}, Sums(2, 50, 10)}};
  t.window_s = 15;
  t.notes = {"2 GPUs by spans"};
  return t;
}
HistoryTotals ServerB() {
  HistoryTotals t;
  t.history.gpus = {Gpu(1, "GPU-y"), Gpu(2, "GPU-z")};
  t.history.jobs = {Job(1, 80), Job(2, 30)};
  t.of_gpu = {{1, Sums(1, 80, 16)}, {2, Sums(2, 30, 3)}};
  t.of_job = {{{"J", 1}, Sums(1, 80, 16)}, {{"J", 2}, Sums(2, 30, 3)}};
  t.window_s = 30;
  return t;
}

TEST(MergeServerTotals, OneGpuOneServerTheOneThatObservedItLongest) {
  std::vector<ServerAnswer<HistoryTotals>> servers;
  servers.push_back({"http://a", ServerA()});
  servers.push_back({"http://b", ServerB()});
  const auto merged = MergeServerTotals(std::move(servers));
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  // GPU-x from a (id 1), GPU-y from b (80 s > 50 s; id 2), GPU-z from b (id 3).
  ASSERT_EQ(merged->history.gpus.size(), 3u);
  EXPECT_EQ(merged->history.gpus[0].key(), "GPU-x");
  EXPECT_EQ(merged->history.gpus[1].key(), "GPU-y");
  EXPECT_EQ(merged->history.gpus[2].key(), "GPU-z");
  for (std::int64_t id = 1; id <= 3; ++id) EXPECT_EQ(merged->history.gpus[id - 1].id, id);
  EXPECT_DOUBLE_EQ(merged->of_gpu.at(1).counters.observed_s(), 100);
  EXPECT_DOUBLE_EQ(merged->of_gpu.at(2).counters.observed_s(), 80);
  EXPECT_DOUBLE_EQ(merged->of_gpu.at(2).counters.utilized_s(), 16);
  EXPECT_EQ(merged->of_gpu.at(2).gpu_id, 2);
  EXPECT_DOUBLE_EQ(merged->of_gpu.at(3).counters.observed_s(), 30);
  // The job: GPU-y's sums and interval from b, GPU-z's from b; a's GPU-y dropped.
  ASSERT_EQ(merged->of_job.size(), 2u);
  EXPECT_DOUBLE_EQ(merged->of_job.at({"J", 2}).counters.utilized_s(), 16);
  EXPECT_DOUBLE_EQ(merged->of_job.at({"J", 3}).counters.utilized_s(), 3);
  ASSERT_EQ(merged->history.jobs.size(), 2u);
  EXPECT_EQ(merged->history.jobs[0].gpu_id, 2);
  EXPECT_EQ(merged->history.jobs[0].end_s, 80);
  EXPECT_EQ(merged->history.jobs[1].gpu_id, 3);
  // The smaller scrape interval, and notes that say what happened.
  EXPECT_DOUBLE_EQ(merged->window_s, 15);
  EXPECT_EQ(merged->history.path, "http://a, http://b");
  const std::string notes = ::testing::PrintToString(merged->notes);
  EXPECT_NE(notes.find("1 GPU(s) were on more than one server"), std::string::npos) << notes;
  EXPECT_NE(notes.find("http://a: 2 GPUs by spans"), std::string::npos) << notes;
  EXPECT_NE(notes.find("scrape intervals differ (15, 30 s)"), std::string::npos) << notes;
}

TEST(MergeServerTotals, ATieGoesToTheServerListedFirst) {
  HistoryTotals b = ServerB();
  b.of_gpu.at(1) = Sums(1, 50, 99);  // GPU-y: 50 s on both
  std::vector<ServerAnswer<HistoryTotals>> servers;
  servers.push_back({"http://a", ServerA()});
  servers.push_back({"http://b", std::move(b)});
  const auto merged = MergeServerTotals(std::move(servers));
  ASSERT_TRUE(merged.ok());
  EXPECT_DOUBLE_EQ(merged->of_gpu.at(2).counters.utilized_s(), 10);  // a's
}

TEST(MergeServerTotals, AFailedServerIsNamedAndEveryServerFailedIsAnError) {
  std::vector<ServerAnswer<HistoryTotals>> servers;
  servers.push_back({"http://a", ServerA()});
  servers.push_back({"http://b", Error::Unavailable("connection refused")});
  const auto merged = MergeServerTotals(std::move(servers));
  ASSERT_TRUE(merged.ok());
  EXPECT_EQ(merged->history.gpus.size(), 2u);
  const std::string notes = ::testing::PrintToString(merged->notes);
  EXPECT_NE(notes.find("server http://b: connection refused; its GPUs are missing from this answer"), std::string::npos)
      << notes;

  std::vector<ServerAnswer<HistoryTotals>> none;
  none.push_back({"http://a", Error::Unavailable("refused")});
  none.push_back({"http://b", Error::Unavailable("timed out")});
  const auto failed = MergeServerTotals(std::move(none));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(failed.error().message, "no Prometheus server answered: http://a: refused; http://b: timed out");
}

TEST(MergeServerHistories, WindowsFollowTheirGpuAndStayInOrder) {
  StoredHistory a, b;
  a.gpus = {Gpu(1, "GPU-x"), Gpu(2, "GPU-y")};
  a.windows = {Sums(1, 60, 1), Sums(1, 60, 2), Sums(2, 60, 3)};
  a.windows[1].end_s = 120;
  b.gpus = {Gpu(1, "GPU-y"), Gpu(2, "GPU-z")};
  b.windows = {Sums(1, 60, 4), Sums(1, 60, 5), Sums(2, 60, 6)};  // GPU-y: 120 s here, 60 s on a
  b.windows[1].end_s = 120;
  std::vector<ServerAnswer<StoredHistory>> servers;
  servers.push_back({"http://a", std::move(a)});
  servers.push_back({"http://b", std::move(b)});
  std::vector<std::string> notes;
  const auto merged = MergeServerHistories(std::move(servers), notes);
  ASSERT_TRUE(merged.ok());
  ASSERT_EQ(merged->gpus.size(), 3u);
  std::vector<std::pair<std::int64_t, double>> rows;
  for (const StoredWindow& w : merged->windows) rows.emplace_back(w.gpu_id, w.counters.utilized_s());
  // GPU-x (1) from a; GPU-y (2) from b; GPU-z (3) from b.
  EXPECT_EQ(rows, (std::vector<std::pair<std::int64_t, double>>{{1, 1}, {1, 2}, {2, 4}, {2, 5}, {3, 6}}));
  EXPECT_EQ(notes.size(), 1u);
}

TEST(ParseServerList, UrlsCommentsAndErrors) {
  const auto urls = ParseServerList("# shards\nhttp://a:9090\n\n  https://b:8428  \n", "servers.txt");
  ASSERT_TRUE(urls.ok()) << urls.error().message;
  EXPECT_EQ(*urls, (std::vector<std::string>{"http://a:9090", "https://b:8428"}));
  const auto bad = ParseServerList("http://a:9090\nprometheus:9090\n", "servers.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "servers.txt:2: not a Prometheus URL (http:// or https://): 'prometheus:9090'");
  EXPECT_FALSE(ParseServerList("# none\n", "servers.txt").ok());
}

}  // namespace
}  // namespace ofu::history
