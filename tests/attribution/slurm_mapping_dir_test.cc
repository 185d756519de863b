// The Slurm mapping directory: the reader on synthetic directories, and
// deploy/slurm/prolog.sh and epilog.sh run as Slurm would run them (the
// variables set, a temp directory for OFU_JOB_MAP_DIR), read back by the
// reader.
#include <sys/wait.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "attribution/temp_tree.h"
#include "ofu/attribution/slurm_mapping_dir.h"

namespace ofu::attribution {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempTree;

JobInfo SlurmJob(std::string id) {
  JobInfo job;
  job.job_id = std::move(id);
  job.scheduler = "slurm";
  return job;
}

TEST(MappingFile, SkipsBlanksAndTheZeroFiller) {
  EXPECT_THAT(ParseMappingFile("  7 \r\n\n0\n8"), ElementsAre("7", "8"));
  EXPECT_THAT(ParseMappingFile("0\n"), ElementsAre());
  EXPECT_THAT(ParseMappingFile(""), ElementsAre());
}

TEST(SlurmMappingDir, OneFilePerGpuIndexLastLineWins) {
  TempTree tree;
  tree.Write("map/0", "101\n");
  tree.Write("map/1", "101\n102\n");  // shared GPU: 102 started last
  tree.Write("map/2", "0\n");         // "no job" filler
  tree.Write("map/3", "\n");
  tree.Write("map/notes.txt", "999\n");  // not a GPU index: ignored
  SlurmMappingDirAttributor method(tree.str() + "/map");
  const std::vector<GpuRef> gpus = {
      {"GPU-a", 0, {}},  {"GPU-b", 1, {}}, {"GPU-c", 2, {}}, {"GPU-d", 3, {}}, {"GPU-e", 4, {}},  // no file
      {"GPU-f", -1, {}},                                                                          // index unknown
  };
  const Result<Attribution> got = method.Attribute(gpus);
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->jobs.size(), 2u);
  EXPECT_EQ(got->jobs.at("GPU-a"), SlurmJob("101"));
  EXPECT_EQ(got->jobs.at("GPU-b"), SlurmJob("102"));
  ASSERT_EQ(got->notes.size(), 1u);
  EXPECT_THAT(got->notes[0], HasSubstr("GPU 1 (GPU-b) is shared by jobs 101, 102: attributed to 102"));
}

TEST(SlurmMappingDir, MissingDirectoryIsANoteNotAnError) {
  TempTree tree;
  SlurmMappingDirAttributor method(tree.str() + "/not-yet");
  const Result<Attribution> got = method.Attribute({{"GPU-a", 0, {}}});
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->jobs.empty());
  ASSERT_EQ(got->notes.size(), 1u);
  EXPECT_THAT(got->notes[0], HasSubstr("does not exist yet"));
}

TEST(SlurmMappingDir, NotADirectoryIsAnError) {
  TempTree tree;
  tree.Write("file", "x");
  SlurmMappingDirAttributor method(tree.str() + "/file");
  const Result<Attribution> got = method.Attribute({{"GPU-a", 0, {}}});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(got.error().message, HasSubstr(tree.str() + "/file is not a directory"));
}

// Runs a deploy/slurm script with exactly the given environment.
int RunScript(const std::string& script, const std::string& env) {
  const std::string command = fmt::format("env -i {} sh '{}/deploy/slurm/{}' 2>/dev/null", env, OFU_SOURCE_DIR, script);
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SlurmScripts, PrologAndEpilogKeepTheDirectory) {
  TempTree tree;
  const std::string dir = "OFU_JOB_MAP_DIR=" + tree.str() + "/map";
  // Job 42 on GPUs 0, 2 and 3 (a range, as SLURM_JOB_GPUS may hold).
  ASSERT_EQ(RunScript("prolog.sh", dir + " SLURM_JOB_ID=42 SLURM_JOB_GPUS=0,2-3"), 0);
  // Job 43 shares GPU 2; CUDA_VISIBLE_DEVICES is the fallback and a UUID in it is skipped.
  ASSERT_EQ(RunScript("prolog.sh", dir + " SLURM_JOB_ID=43 CUDA_VISIBLE_DEVICES=GPU-77,2"), 0);
  EXPECT_EQ(tree.Read("map/0"), "42\n");
  EXPECT_EQ(tree.Read("map/2"), "42\n43\n");
  EXPECT_EQ(tree.Read("map/3"), "42\n");
  EXPECT_FALSE(tree.Exists("map/1"));
  // A prolog that runs twice for one job (requeue) does not duplicate it.
  ASSERT_EQ(RunScript("prolog.sh", dir + " SLURM_JOB_ID=42 SLURM_JOB_GPUS=0"), 0);
  EXPECT_EQ(tree.Read("map/0"), "42\n");

  SlurmMappingDirAttributor method(tree.str() + "/map");
  const std::vector<GpuRef> gpus = {{"GPU-0", 0, {}}, {"GPU-1", 1, {}}, {"GPU-2", 2, {}}, {"GPU-3", 3, {}}};
  Result<Attribution> got = method.Attribute(gpus);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->jobs.size(), 3u);
  EXPECT_EQ(got->jobs.at("GPU-0"), SlurmJob("42"));
  EXPECT_EQ(got->jobs.at("GPU-2"), SlurmJob("43"));
  EXPECT_EQ(got->jobs.at("GPU-3"), SlurmJob("42"));

  // Job 42 ends (the epilog needs no GPU list): GPU 2 keeps 43, the rest empties.
  ASSERT_EQ(RunScript("epilog.sh", dir + " SLURM_JOB_ID=42"), 0);
  EXPECT_FALSE(tree.Exists("map/0"));
  EXPECT_FALSE(tree.Exists("map/3"));
  EXPECT_EQ(tree.Read("map/2"), "43\n");
  got = method.Attribute(gpus);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->jobs.size(), 1u);
  EXPECT_EQ(got->jobs.at("GPU-2"), SlurmJob("43"));

  ASSERT_EQ(RunScript("epilog.sh", dir + " SLURM_JOB_ID=43"), 0);
  EXPECT_FALSE(tree.Exists("map/2"));
}

TEST(SlurmScripts, NothingToDoStillSucceeds) {
  TempTree tree;
  const std::string dir = "OFU_JOB_MAP_DIR=" + tree.str() + "/map";
  EXPECT_EQ(RunScript("prolog.sh", dir + " SLURM_JOB_ID=42"), 0);   // a job without GPUs
  EXPECT_EQ(RunScript("prolog.sh", dir + " SLURM_JOB_GPUS=0"), 0);  // no job id
  EXPECT_FALSE(tree.Exists("map"));
  EXPECT_EQ(RunScript("epilog.sh", dir + " SLURM_JOB_ID=42"), 0);  // directory never made
  // A directory the prolog cannot create: still exit 0 (a failing Prolog drains the node).
  tree.Write("blocker", "x");
  const std::string blocked = "OFU_JOB_MAP_DIR=" + tree.str() + "/blocker/map";
  EXPECT_EQ(RunScript("prolog.sh", blocked + " SLURM_JOB_ID=1 SLURM_JOB_GPUS=0"), 0);
}

}  // namespace
}  // namespace ofu::attribution
