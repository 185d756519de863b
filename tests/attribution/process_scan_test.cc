// The process scan against synthetic /proc trees built in a temp directory.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attribution/temp_tree.h"
#include "ofu/attribution/process_scan.h"

namespace ofu::attribution {
namespace {

using namespace std::string_literals;
using ::testing::HasSubstr;
using testing::TempTree;

constexpr const char* kPasswd =
    "root:x:0:0:root:/root:/bin/sh\n"
    "bob:x:1001:1001::/home/bob:/bin/sh\n";

std::string Status(int uid) { return fmt::format("Name:\tpython\nUid:\t{0}\t{0}\t{0}\t{0}\n", uid); }

// A fake process: the files given are written, the others do not exist.
void Process(const TempTree& tree, int pid, const std::string& cgroup, const std::string& environ, int uid) {
  const std::string dir = fmt::format("proc/{}/", pid);
  tree.Write(dir + "cgroup", cgroup);
  if (!environ.empty()) tree.Write(dir + "environ", environ);
  if (uid >= 0) tree.Write(dir + "status", Status(uid));
}

ProcessScanAttributor Scanner(const TempTree& tree) {
  tree.Write("passwd", kPasswd);
  return ProcessScanAttributor({tree.str() + "/proc", tree.str() + "/passwd"});
}

TEST(ProcessScan, SlurmKubernetesAndEnvironFallback) {
  TempTree tree;
  // Slurm cgroup v2; user and job name from the environment.
  Process(tree, 100, "0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0\n",
          "SLURM_JOB_ID=123\0SLURM_JOB_USER=alice\0SLURM_JOB_NAME=train\0"s, 1001);
  // Kubernetes pod (cgroupfs driver); user from status through passwd.
  Process(tree, 200,
          "11:devices:/kubepods/burstable/pod74c13223-5a00-11e9-b385-42010a80018d/"
          "34dc0b5e\n",
          "", 1001);
  // No job in the cgroup: SLURM_JOB_ID from the environment; uid 1002 has no name.
  Process(tree, 300, "0::/user.slice/user-1002.slice/session-4.scope\n",
          "SLURM_JOB_ID=555\0SLURM_JOB_NAME=interactive\0"s, 1002);
  const std::vector<GpuRef> gpus = {{"GPU-0", 0, {100}}, {"GPU-1", 1, {200}}, {"GPU-2", 2, {300}}, {"GPU-3", 3, {}}};

  auto method = Scanner(tree);
  const Result<Attribution> got = method.Attribute(gpus);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(got->notes.empty()) << got->notes.front();
  ASSERT_EQ(got->jobs.size(), 3u);

  JobInfo slurm;
  slurm.job_id = "123", slurm.user = "alice", slurm.job_name = "train", slurm.scheduler = "slurm";
  EXPECT_EQ(got->jobs.at("GPU-0"), slurm);

  JobInfo pod;
  pod.job_id = "74c13223-5a00-11e9-b385-42010a80018d", pod.user = "bob", pod.scheduler = "kubernetes";
  EXPECT_EQ(got->jobs.at("GPU-1"), pod);

  JobInfo fallback;
  fallback.job_id = "555", fallback.user = "1002", fallback.job_name = "interactive";
  fallback.scheduler = "slurm";
  EXPECT_EQ(got->jobs.at("GPU-2"), fallback);
}

TEST(ProcessScan, VanishedPidsAreSkippedSilently) {
  TempTree tree;
  // 400 exited after its cgroup was read: environ and status are gone.
  Process(tree, 400, "0::/user.slice/user-0.slice\n", "", -1);
  // 401 is listed by the source but already gone. 402 is a real job.
  Process(tree, 402, "4:devices:/slurm/uid_1001/job_8/step_0/task_0\n", "HOME=/\0"s, 1001);
  auto method = Scanner(tree);
  const Result<Attribution> got = method.Attribute({{"GPU-0", 0, {400, 401, 402}}, {"GPU-1", 1, {401}}});
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->notes.empty());
  ASSERT_EQ(got->jobs.size(), 1u);
  EXPECT_EQ(got->jobs.at("GPU-0").job_id, "8");
  EXPECT_EQ(got->jobs.at("GPU-0").user, "bob");  // no SLURM_JOB_USER: uid 1001 via passwd
}

TEST(ProcessScan, SeveralJobsOnOneGpuMostPidsThenSmallestId) {
  TempTree tree;
  const auto slurm = [](int job) {
    return fmt::format("0::/system.slice/slurmstepd.scope/job_{}/step_0/user/task_0\n", job);
  };
  Process(tree, 501, slurm(77), "SLURM_JOB_ID=77\0"s, 0);
  Process(tree, 502, slurm(77), "SLURM_JOB_ID=77\0SLURM_JOB_USER=carol\0"s, 0);
  Process(tree, 503, slurm(9), "SLURM_JOB_ID=9\0"s, 0);
  Process(tree, 601, slurm(10), "SLURM_JOB_ID=10\0"s, 0);
  Process(tree, 602, slurm(9), "SLURM_JOB_ID=9\0"s, 0);
  auto method = Scanner(tree);
  const Result<Attribution> got = method.Attribute({{"GPU-most", 0, {503, 501, 502}}, {"GPU-tie", 1, {601, 602}}});
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->jobs.size(), 2u);
  // 77 has two processes; the user comes from the one whose environment has it.
  EXPECT_EQ(got->jobs.at("GPU-most").job_id, "77");
  EXPECT_EQ(got->jobs.at("GPU-most").user, "carol");
  // One process each: 9 < 10 as numbers (as text "10" < "9").
  EXPECT_EQ(got->jobs.at("GPU-tie").job_id, "9");
  ASSERT_EQ(got->notes.size(), 2u);
  EXPECT_THAT(got->notes[0], HasSubstr("GPU GPU-most runs processes of 2 jobs (slurm 77: 2 process(es), "
                                       "slurm 9: 1 process(es)): attributed to 77"));
  EXPECT_THAT(got->notes[1], HasSubstr("attributed to 9,"));
}

TEST(ProcessScan, UnreadableFileIsNoted) {
  TempTree tree;
  Process(tree, 700, "0::/system.slice/slurmstepd.scope/job_700/step_0/user/task_0\n",
          "SLURM_JOB_ID=700\0SLURM_JOB_USER=alice\0"s, 1001);
  ASSERT_EQ(::chmod((tree.str() + "/proc/700/environ").c_str(), 0), 0);
  auto method = Scanner(tree);
  // Root reads any file, so drop to "nobody" in a child process to meet EACCES.
  EXPECT_EXIT(
      {
        if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) std::exit(3);
        const Result<Attribution> got = method.Attribute({{"GPU-0", 0, {700}}});
        if (!got.ok() || got->jobs.size() != 1) std::exit(4);
        const JobInfo& job = got->jobs.at("GPU-0");
        // The cgroup still names the job; the user falls back to status + passwd.
        if (job.job_id != "700" || job.user != "bob") std::exit(5);
        for (const std::string& note : got->notes) std::fprintf(stderr, "%s\n", note.c_str());
        std::exit(0);
      },
      ::testing::ExitedWithCode(0),
      "permission denied reading 1 file\\(s\\) under .*/proc \\(first: .*/proc/700/environ\\)");
}

TEST(ProcessScan, MissingProcRootIsAnError) {
  TempTree tree;
  ProcessScanAttributor method({tree.str() + "/no-proc", tree.str() + "/passwd"});
  const Result<Attribution> got = method.Attribute({{"GPU-0", 0, {1}}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(got.error().message, HasSubstr(tree.str() + "/no-proc is not a readable directory"));
}

TEST(ProcessScan, MissingPasswdGivesUidNumbers) {
  TempTree tree;
  Process(tree, 800, "4:devices:/slurm/uid_1001/job_3/step_0\n", "PATH=/bin\0"s, 1001);
  ProcessScanAttributor method({tree.str() + "/proc", tree.str() + "/no-passwd"});
  const Result<Attribution> got = method.Attribute({{"GPU-0", 0, {800}}});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->jobs.at("GPU-0").user, "1001");
}

}  // namespace
}  // namespace ofu::attribution
