// The chain of methods and the static labels.
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ofu/attribution/chain_attributor.h"
#include "ofu/attribution/gpu_ref.h"
#include "ofu/attribution/static_labels.h"

namespace ofu::attribution {
namespace {

using ::testing::ElementsAre;

JobInfo Job(std::string id, std::string scheduler = "slurm") {
  JobInfo job;
  job.job_id = std::move(id);
  job.scheduler = std::move(scheduler);
  return job;
}

// A scripted method: a fixed answer (or error), and it records what it was asked.
class Scripted : public Attributor {
 public:
  Scripted(std::string name, Result<Attribution> answer, std::vector<std::string>* asked)
      : name_(std::move(name)), answer_(std::move(answer)), asked_(asked) {}
  std::string Describe() const override { return name_; }
  Result<Attribution> Attribute(const std::vector<GpuRef>& gpus) override {
    for (const GpuRef& gpu : gpus) asked_->push_back(name_ + ":" + gpu.uuid);
    return answer_;
  }

 private:
  std::string name_;
  Result<Attribution> answer_;
  std::vector<std::string>* asked_;
};

TEST(ChainAttributor, FirstAnswerPerGpuAndErrorsBecomeNotes) {
  std::vector<std::string> asked;
  Attribution second, third;
  second.jobs = {{"GPU-1", Job("11")}};
  second.notes = {"two jobs on GPU-1"};
  third.jobs = {{"GPU-1", Job("99")}, {"GPU-2", Job("22")}};
  std::vector<std::unique_ptr<Attributor>> methods;
  methods.push_back(std::make_unique<Scripted>("broken", Error{ErrorCode::kUnavailable, "socket gone"}, &asked));
  methods.push_back(std::make_unique<Scripted>("second", second, &asked));
  methods.push_back(std::make_unique<Scripted>("third", third, &asked));
  ChainAttributor chain(std::move(methods));
  EXPECT_EQ(chain.Describe(), "chain: broken, then second, then third");

  const Result<Attribution> got = chain.Attribute({{"GPU-1", 0, {}}, {"GPU-2", 1, {}}, {"GPU-3", 2, {}}});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->jobs.size(), 2u);
  EXPECT_EQ(got->jobs.at("GPU-1"), Job("11"));  // second answered first
  EXPECT_EQ(got->jobs.at("GPU-2"), Job("22"));
  EXPECT_THAT(got->notes, ElementsAre("broken: socket gone", "second: two jobs on GPU-1"));
  // The third method is asked only about what is still open.
  EXPECT_THAT(asked, ElementsAre("broken:GPU-1", "broken:GPU-2", "broken:GPU-3", "second:GPU-1", "second:GPU-2",
                                 "second:GPU-3", "third:GPU-2", "third:GPU-3"));
}

TEST(ChainAttributor, StopsAskingOnceEveryGpuHasAJob) {
  std::vector<std::string> asked;
  Attribution all;
  all.jobs = {{"GPU-1", Job("1")}};
  std::vector<std::unique_ptr<Attributor>> methods;
  methods.push_back(std::make_unique<Scripted>("a", all, &asked));
  methods.push_back(std::make_unique<Scripted>("b", all, &asked));
  ChainAttributor chain(std::move(methods));
  ASSERT_TRUE(chain.Attribute({{"GPU-1", 0, {}}}).ok());
  EXPECT_THAT(asked, ElementsAre("a:GPU-1"));
}

TEST(ChainAttributor, ErrorOnlyWhenEveryMethodFails) {
  std::vector<std::string> asked;
  std::vector<std::unique_ptr<Attributor>> methods;
  methods.push_back(std::make_unique<Scripted>("a", Error{ErrorCode::kIo, "dir unreadable"}, &asked));
  methods.push_back(std::make_unique<Scripted>("b", Error{ErrorCode::kUnavailable, "no socket"}, &asked));
  ChainAttributor chain(std::move(methods));
  const Result<Attribution> got = chain.Attribute({{"GPU-1", 0, {}}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().message, "every attribution method failed: a: dir unreadable; b: no socket");
}

TEST(StaticAttributor, ByUuidOrIndexUuidFirst) {
  JobInfo service = Job("inference-svc", "");
  service.user = "ops";
  StaticAttributor method({{"GPU-x", service}, {"0", Job("by-index-0", "")}, {"1", Job("bench", "custom")}});
  EXPECT_EQ(method.Describe(), "static labels (3 entries)");
  const Result<Attribution> got = method.Attribute({{"GPU-x", 0, {}}, {"GPU-y", 1, {}}, {"GPU-z", 2, {}}});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->jobs.size(), 2u);
  JobInfo want_x = service;
  want_x.scheduler = "static";               // filled in when the entry has none
  EXPECT_EQ(got->jobs.at("GPU-x"), want_x);  // the uuid key wins over index 0
  EXPECT_EQ(got->jobs.at("GPU-y"), Job("bench", "custom"));
  EXPECT_TRUE(got->notes.empty());
}

TEST(GpuRef, FromASourceReading) {
  sources::GpuReading reading;
  reading.identity.uuid = "GPU-1";
  reading.identity.gpu_index = "3";
  reading.processes = {{4242, std::nullopt}, {17, 1024}};
  const GpuRef gpu = ToGpuRef(reading);
  EXPECT_EQ(gpu.uuid, "GPU-1");
  EXPECT_EQ(gpu.index, 3);
  EXPECT_THAT(gpu.pids, ElementsAre(4242u, 17u));
  for (const char* bad : {"", "x", "3a", "-1"}) {
    reading.identity.gpu_index = bad;
    EXPECT_EQ(ToGpuRef(reading).index, -1) << bad;
  }
}

}  // namespace
}  // namespace ofu::attribution
