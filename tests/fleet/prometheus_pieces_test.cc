// QueryOverPieces against a fake query API on loopback (synthetic answers):
// the pieces it asks for tile the range, none longer than planned, and a
// refusal for size halves a piece. The fake records each query's time and
// the range length in its text; it refuses a piece longer than `limit_s_`.
#include <atomic>
#include <cmath>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "ofu/history/prometheus_client.h"
#include "support/loopback_http_server.h"

namespace ofu::history {
namespace {

class PrometheusPieces : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.server().Post("/api/v1/query", [this](const httplib::Request& request, httplib::Response& response) {
      const std::string query = request.get_param_value("query");
      const double time = std::stod(request.get_param_value("time"));
      // "x[123456ms]": the piece's length.
      const size_t open = query.rfind('['), ms = query.rfind("ms]");
      const double length = std::stod(query.substr(open + 1, ms - open - 1)) / 1000;
      {
        const std::lock_guard<std::mutex> lock(mutex_);
        asked_.emplace_back(time - length, time);
        if (asked_.size() > 1000) {  // a planning loop: fail the query, and so the test, instead of hanging
          response.status = 400;
          response.set_content(R"({"status":"error","errorType":"bad_data","error":"more than 1000 queries"})",
                               "application/json");
          return;
        }
      }
      if (length > limit_s_) {
        response.status = 422;
        response.set_content(
            R"({"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"})",
            "application/json");
        return;
      }
      response.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[]}})", "application/json");
    });
    port_ = http_.Start();
    ASSERT_GT(port_, 0);
  }

  // The pieces answered (not refused), in the order asked.
  Result<std::vector<std::pair<double, double>>> Run(double since, double until, double& piece_s, double min_s) {
    auto client = PrometheusClient::Open(fmt::format("http://127.0.0.1:{}", port_), 10);
    if (!client.ok()) return client.error();
    std::vector<std::pair<double, double>> answered;
    OFU_RETURN_IF_ERROR(QueryOverPieces(
        **client, since, until, piece_s, min_s, [](double length_s) { return "x" + PromRange(length_s); },
        [&](PromAnswer&&, double end) {
          answered.emplace_back(0, end);
          return OkStatus();
        }));
    return answered;
  }

  int port_ = 0;
  std::atomic<double> limit_s_{1e18};
  std::mutex mutex_;
  std::vector<std::pair<double, double>> asked_;  // (start, end) as the server read them
  // Last: destroyed (stopped) first, before what its handlers use.
  ofu::testing::LoopbackHttpServer http_;
};

// A fractional piece length (86,702 s in 27 pieces: 3211.185… s, as a
// resampled scan planned it) once made a piece a rounding error too long,
// planned again forever. Now: 27 pieces, in time order, meeting end to end.
TEST_F(PrometheusPieces, AFractionalPieceLengthTilesTheRangeOnce) {
  const double since = 1789999699, until = 1790086401;
  double piece_s = (until - since) / 27;
  auto answered = Run(since, until, piece_s, 45);
  ASSERT_TRUE(answered.ok()) << answered.error().message;
  ASSERT_EQ(asked_.size(), 27u);
  EXPECT_NEAR(asked_.front().first, since, 1e-3);
  EXPECT_DOUBLE_EQ(asked_.back().second, until);
  for (size_t i = 1; i < asked_.size(); ++i) EXPECT_NEAR(asked_[i].first, asked_[i - 1].second, 2e-3) << i;
  for (const auto& [start, end] : asked_) EXPECT_NEAR(end - start, 3211.185, 1e-3);
}

// Refused above 1,000 s: a 4,000 s range asked whole is halved twice; the
// four 1,000 s quarters are answered, and piece_s comes back lowered to
// 1,000 so that the caller plans its next range at that size.
TEST_F(PrometheusPieces, ARefusalHalvesThePieceAndLowersThePlan) {
  limit_s_ = 1000;
  double piece_s = 4000;
  auto answered = Run(0, 4000, piece_s, 1);
  ASSERT_TRUE(answered.ok()) << answered.error().message;
  ASSERT_EQ(answered->size(), 4u);
  EXPECT_EQ((*answered)[0].second, 1000);
  EXPECT_EQ((*answered)[3].second, 4000);
  EXPECT_EQ(piece_s, 1000);
  // Asked: 4,000 (refused), 2,000 (refused), then 1,000 s pieces (the second
  // half's 2,000 s re-planned at the lowered size).
  ASSERT_GE(asked_.size(), 6u);
  EXPECT_EQ(asked_[0].second - asked_[0].first, 4000);
  EXPECT_EQ(asked_[1].second - asked_[1].first, 2000);

  // Below the smallest piece allowed, the refusal is an error naming the limit.
  asked_.clear();
  limit_s_ = 10;
  piece_s = 100;
  auto refused = Run(0, 100, piece_s, 60);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--query.max-samples"), std::string::npos) << refused.error().message;
}

// The refusals that ask for less, as servers word them. VictoriaMetrics
// 1.79's answer to a 1,024-GPU batch's query (seen by
// bench/fleet_hourly_exactness.sh, 2026-11-28) was an error before it was
// recognised: the GPUs' regex made the query 26,793 bytes.
TEST(PrometheusRefusals, SizeRefusalsAreToldApartFromOtherErrors) {
  for (const char* refusal : {
           "query processing would load too many samples into memory in query execution",
           "too long query; got 26793 bytes; mustn't exceed `-search.maxQueryLen=16384` bytes",
           "cannot select more than -search.maxSamplesPerQuery=1000000000 samples",
       }) {
    EXPECT_TRUE(IsRefusalForSize(refusal)) << refusal;
  }
  for (const char* error : {
           "parse error at char 5: unexpected identifier",
           "unknown function with name \"rat\"",
       }) {
    EXPECT_FALSE(IsRefusalForSize(error)) << error;
  }
}

}  // namespace
}  // namespace ofu::history

// A GPU list asked about in one regex is split where the regex would pass
// the bound (VictoriaMetrics refuses a query over -search.maxQueryLen): the
// UUIDs here are 4 characters, 9 with "a|b" separators for two.
TEST(PrometheusAlternatives, ListsAreSplitWhereTheRegexWouldPassTheBound) {
  using ofu::history::PromExactAlternatives;
  using ofu::history::SplitAlternatives;
  const std::vector<std::string> uuids = {"GPU0", "GPU1", "GPU2", "GPU3", "GPU4"};
  // "GPU0|GPU1" is 9 bytes, "GPU0|GPU1|GPU2" 14: a bound of 13 holds two.
  const auto groups = SplitAlternatives(uuids, 13);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], (std::vector<std::string>{"GPU0", "GPU1"}));
  EXPECT_EQ(groups[1], (std::vector<std::string>{"GPU2", "GPU3"}));
  EXPECT_EQ(groups[2], (std::vector<std::string>{"GPU4"}));
  for (const auto& group : groups) EXPECT_LE(PromExactAlternatives(group).size(), 13u);
  // Exactly at the bound: all five are 24 bytes.
  EXPECT_EQ(SplitAlternatives(uuids, 24).size(), 1u);
  EXPECT_EQ(SplitAlternatives(uuids, 23).size(), 2u);
  // The escaped length counts: "a.b" is written a\\.b (the regex's escape,
  // escaped again in the PromQL string), 5 bytes.
  EXPECT_EQ(PromExactAlternatives({"a.b"}), "a\\\\.b");
  EXPECT_EQ(SplitAlternatives({"a.b", "a.b"}, 10).size(), 2u);
  EXPECT_EQ(SplitAlternatives({"a.b", "a.b"}, 11).size(), 1u);
  // A value longer than the bound is a group of its own; nothing is lost.
  const auto long_one = SplitAlternatives({"x", "longer-than-the-bound", "y"}, 4);
  ASSERT_EQ(long_one.size(), 3u);
  EXPECT_EQ(long_one[1], (std::vector<std::string>{"longer-than-the-bound"}));
  EXPECT_TRUE(SplitAlternatives({}, 10).empty());
  // The default bound keeps 1,024 UUIDs of 40 characters (41 KiB of regex) in 11 groups.
  std::vector<std::string> fleet;
  for (int i = 0; i < 1024; ++i) fleet.push_back(fmt::format("GPU-{:08d}-0000-0000-0000-{:012d}", i, i));
  const auto fleet_groups = SplitAlternatives(fleet);
  std::size_t total = 0;
  for (const auto& group : fleet_groups) {
    EXPECT_LE(PromExactAlternatives(group).size(), ofu::history::kMaxAlternativesBytes);
    total += group.size();
  }
  EXPECT_EQ(total, 1024u);
  EXPECT_EQ(fleet_groups.size(), 11u);
}
