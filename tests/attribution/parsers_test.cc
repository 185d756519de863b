// The cgroup-line, environ, status and passwd parsers, on synthetic lines
// in the formats the kernel, Slurm and the kubelet write.
#include <string>

#include <gtest/gtest.h>

#include "ofu/attribution/cgroup_path.h"
#include "ofu/attribution/proc_files.h"

namespace ofu::attribution {
namespace {

using namespace std::string_literals;  // NUL bytes inside literals

void ExpectJob(std::string_view line, std::string_view scheduler, std::string_view id,
               std::string_view container = "") {
  SCOPED_TRACE(std::string(line));
  const auto job = ParseCgroupLine(line);
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->scheduler, scheduler);
  EXPECT_EQ(job->job_id, id);
  EXPECT_EQ(job->container_id, container);
}

TEST(CgroupPath, SlurmCgroupV1) {
  ExpectJob("4:devices:/slurm/uid_1000/job_123/step_0/task_0", "slurm", "123");
  ExpectJob("7:freezer:/slurm/uid_0/job_9/step_batch", "slurm", "9");
  // Several slurmd on one host: the root is slurm_<node>.
  ExpectJob("5:cpuset:/slurm_node7/uid_0/job_41/step_extern", "slurm", "41");
}

TEST(CgroupPath, SlurmCgroupV2) {
  ExpectJob("0::/system.slice/slurmstepd.scope/job_123/step_0/user/task_0", "slurm", "123");
  ExpectJob("0::/system.slice/node7_slurmstepd.scope/job_77/step_batch/user/task_0", "slurm", "77");
  ExpectJob("0::/system.slice/slurmstepd.scope/job_5/step_extern/slurm", "slurm", "5");
}

TEST(CgroupPath, KubernetesCgroupfsDriver) {
  ExpectJob(
      "11:devices:/kubepods/burstable/pod74c13223-5a00-11e9-b385-42010a80018d/"
      "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376",
      "kubernetes", "74c13223-5a00-11e9-b385-42010a80018d",
      "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376");
  // Guaranteed pods sit right under kubepods.
  ExpectJob("3:memory:/kubepods/pod0a1b2c3d-0000-4000-8000-00000000abcd/beef", "kubernetes",
            "0a1b2c3d-0000-4000-8000-00000000abcd", "beef");
}

TEST(CgroupPath, KubernetesSystemdDriverRestoresDashes) {
  ExpectJob(
      "0::/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-pod1f5e3a2b_4c6d_4e8f_9a0b_1c2d3e4f5a6b.slice/"
      "cri-containerd-abc123.scope",
      "kubernetes", "1f5e3a2b-4c6d-4e8f-9a0b-1c2d3e4f5a6b", "abc123");
  ExpectJob(
      "0::/kubepods.slice/kubepods-pod1f5e3a2b_4c6d_4e8f_9a0b_1c2d3e4f5a6c.slice/"
      "crio-0f.scope",
      "kubernetes", "1f5e3a2b-4c6d-4e8f-9a0b-1c2d3e4f5a6c", "0f");
  // The pod's own cgroup (no container below it yet).
  ExpectJob(
      "0::/kubepods.slice/kubepods-besteffort.slice/"
      "kubepods-besteffort-pod1f5e3a2b_4c6d_4e8f_9a0b_1c2d3e4f5a6d.slice",
      "kubernetes", "1f5e3a2b-4c6d-4e8f-9a0b-1c2d3e4f5a6d", "");
}

TEST(CgroupPath, NoJob) {
  for (const char* line : {
           "0::/user.slice/user-1000.slice/session-3.scope",
           "0::/system.slice/docker-0123abcd.scope",
           "0::/job_123/step_0",              // job_ outside a Slurm root
           "0::/slurm/uid_1/job_/step_0",     // no digits
           "0::/slurm/uid_1/job_12a/step_0",  // not all digits
           "11:devices:/kubepods/burstable/podnot-a-uid/abc",
           "0::/kubepods.slice/kubepods-burstable.slice",
           "0::/system.slice/pod74c13223-5a00-11e9-b385-42010a80018d",  // no kubepods
           "garbage",
           "0:/slurm/uid_1/job_3",  // only one ':'
           "",
       }) {
    EXPECT_FALSE(ParseCgroupLine(line).has_value()) << line;
  }
}

TEST(CgroupPath, FileTakesFirstLineThatNamesAJob) {
  const auto job = ParseCgroupFile(
      "12:pids:/user.slice/user-1000.slice\n"
      "4:devices:/slurm/uid_1000/job_5/step_0/task_0\n"
      "3:memory:/slurm/uid_1000/job_6/step_0/task_0\n");
  ASSERT_TRUE(job.has_value());
  EXPECT_EQ(job->job_id, "5");
  EXPECT_FALSE(ParseCgroupFile("0::/init.scope\n").has_value());
}

TEST(ProcFiles, SlurmEnvironFirstDefinitionWins) {
  const SlurmEnviron env = ParseSlurmEnviron(
      "PATH=/bin\0SLURM_JOB_ID=4242\0SLURM_JOB_USER=alice\0SLURM_JOB_NAME=train=v2\0"
      "SLURM_JOB_ID=9\0"s);
  EXPECT_EQ(env.job_id, "4242");
  EXPECT_EQ(env.user, "alice");
  EXPECT_EQ(env.job_name, "train=v2");  // only the first '=' splits
}

TEST(ProcFiles, SlurmEnvironOldSpellingAndAbsence) {
  EXPECT_EQ(ParseSlurmEnviron("SLURM_JOBID=17\0HOME=/\0"s).job_id, "17");
  EXPECT_EQ(ParseSlurmEnviron("SLURM_JOBID=17\0SLURM_JOB_ID=18"s).job_id, "18");
  const SlurmEnviron none = ParseSlurmEnviron("HOME=/root\0NOEQUALS\0\0"s);
  EXPECT_EQ(none.job_id, "");
  EXPECT_EQ(none.user, "");
  EXPECT_EQ(none.job_name, "");
}

TEST(ProcFiles, StatusRealUid) {
  EXPECT_EQ(ParseStatusUid("Name:\tpython\nUmask:\t0022\nUid:\t1001\t0\t1001\t1001\nGid:\t5\n"), 1001u);
  EXPECT_FALSE(ParseStatusUid("Name:\tpython\n").has_value());
  EXPECT_FALSE(ParseStatusUid("Uid:\tabc\t1\n").has_value());
  EXPECT_FALSE(ParseStatusUid("Uid:\n").has_value());
}

TEST(ProcFiles, PasswdLookup) {
  const std::string passwd =
      "# synthetic\n"
      "root:x:0:0:root:/root:/bin/bash\n"
      "+nis::::::\n"
      "alice:x:1001:1001::/home/alice:/bin/sh\n"
      "alice2:x:1001:1001::/home/alice2:/bin/sh\n"
      "broken:x\n"
      "bob::1002:1002::/home/bob:/bin/sh";
  EXPECT_EQ(LookupPasswdName(passwd, 0), "root");
  EXPECT_EQ(LookupPasswdName(passwd, 1001), "alice");  // the first entry
  EXPECT_EQ(LookupPasswdName(passwd, 1002), "bob");    // empty password field, no final newline
  EXPECT_FALSE(LookupPasswdName(passwd, 5).has_value());
}

}  // namespace
}  // namespace ofu::attribution
