// The replay reader over dcgm-exporter output published by others, one file
// per GPU family (tests/data/scrapes/README.md says where each comes from).
// Every value asserted here is also looked up in the file's own text, so a
// test cannot drift from the data it reads.
#include "ofu/sources/replay.h"

#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace ofu::sources {
namespace {

const std::string kScrapes = std::string(OFU_TEST_DATA_DIR) + "/scrapes/";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The value written on the line of `family` for the GPU with `uuid` (and,
// when given, the MIG instance `gi`), as a number; nullopt when the file
// has no such line.
std::optional<double> ValueInText(const std::string& text, const std::string& family, const std::string& uuid,
                                  const std::string& gi = "") {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(family + "{", 0) != 0) continue;
    if (line.find("UUID=\"" + uuid + "\"") == std::string::npos) continue;
    const bool has_gi = line.find("GPU_I_ID=") != std::string::npos;
    if (gi.empty() ? has_gi : line.find("GPU_I_ID=\"" + gi + "\"") == std::string::npos) continue;
    return std::stod(line.substr(line.rfind("} ") + 2));
  }
  return std::nullopt;
}

struct Expected {
  std::string key;
  std::string model;
  std::string mig_profile;  // empty for a whole GPU
  std::string mig_instance;
};

// Reads a file from tests/data/scrapes and checks what every file must give:
// no error, the GPUs in order with their model names exactly as written, one
// sample each (a single scrape, no timestamps), and tensor activity and SM
// clock equal to the text where the file has them and absent where not.
Recording ReadAndCheck(const std::string& name, const std::vector<Expected>& expected) {
  const std::string path = kScrapes + name;
  auto r = ReadRecordingFile(path);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  if (!r.ok()) return {};
  const std::string text = ReadText(path);
  EXPECT_TRUE(r->timestamps_assumed);
  EXPECT_EQ(r->gpus.size(), expected.size());
  for (std::size_t i = 0; i < expected.size() && i < r->gpus.size(); ++i) {
    const GpuRecording& gpu = r->gpus[i];
    SCOPED_TRACE(expected[i].key);
    EXPECT_EQ(gpu.identity.key, expected[i].key);
    EXPECT_EQ(gpu.identity.model, expected[i].model);
    EXPECT_EQ(gpu.identity.mig_profile, expected[i].mig_profile);
    EXPECT_EQ(gpu.identity.mig_instance, expected[i].mig_instance);
    EXPECT_EQ(gpu.samples.size(), 1u);
    if (gpu.samples.empty()) continue;
    const CounterSample& s = gpu.samples[0];
    EXPECT_EQ(s.tensor_active,
              ValueInText(text, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", gpu.identity.uuid, gpu.identity.mig_instance));
    EXPECT_EQ(s.sm_clock_mhz, ValueInText(text, "DCGM_FI_DEV_SM_CLOCK", gpu.identity.uuid, gpu.identity.mig_instance));
  }
  return std::move(*r);
}

// Volta: two excerpts of the 4x V100 output in dcgm-exporter issue 250. Only
// GPUs 0 and 1 carry a counter ofu reads (SM clock); GPUs 2 and 3 appear in
// families it does not use, so the recording does not hold them, and a note
// names each with the families it has and the counters it lacks.
TEST(RealScrapes, VoltaTeslaV100Sxm2) {
  const Recording r = ReadAndCheck("volta-tesla-v100-sxm2-32gb.prom",
                                   {{"GPU-a6158b59-2c1e-1e63-0068-9178c4298abd", "Tesla V100-SXM2-32GB", "", ""},
                                    {"GPU-8d5053b3-9280-7d1a-751b-4fd2fdd547c5", "Tesla V100-SXM2-32GB", "", ""}});
  EXPECT_EQ(r.samples_read, 9u);
  EXPECT_EQ(r.samples_used, 2u);
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].identity.hostname, "r6i3n0");
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 135);
  EXPECT_FALSE(r.gpus[0].samples[0].tensor_active.has_value());
  const std::string lacks =
      "; OFU needs tensor activity (DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM field 1004) and the SM clock "
      "(DCGM_FI_DEV_SM_CLOCK, field 100)";
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_EQ(r.notes[0], kScrapes +
                            "volta-tesla-v100-sxm2-32gb.prom: GPU GPU-a9079f15-493e-6c1c-c78c-73ec2b840cba, Tesla "
                            "V100-SXM2-32GB: no counter ofu uses, so no OFU: it has only DCGM_FI_DEV_POWER_MGMT_LIMIT, "
                            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" +
                            lacks);
  EXPECT_EQ(r.notes[1], kScrapes +
                            "volta-tesla-v100-sxm2-32gb.prom: GPU GPU-bd94f0f5-8c2f-bc95-74ad-5f99fdc33d01, Tesla "
                            "V100-SXM2-32GB: no counter ofu uses, so no OFU: it has only DCGM_FI_DEV_POWER_MGMT_LIMIT, "
                            "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" +
                            lacks);
}

// Some set-ups lower-case every name (dcgm_fi_dev_sm_clock,
// dcgm_fi_prof_gr_engine_active, ...). The real T4 scrape with its names
// lower-cased (derived here, in memory) reads to the same samples as the
// file itself: SM clock, power and tensor activity included.
TEST(RealScrapes, LowerCaseNamesReadAsTheirFields) {
  std::string text = ReadText(kScrapes + "turing-tesla-t4.prom");
  std::istringstream lines(text);
  std::string lowered;
  for (std::string line; std::getline(lines, line);) {
    std::size_t name_end = line.find_first_of("{ ");
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) name_end = line.find(' ', 7);
    const std::size_t name_start = line.rfind("# ", 0) == 0 ? 7 : 0;
    for (std::size_t i = name_start; i < name_end && i < line.size(); ++i) {
      if (line[i] >= 'A' && line[i] <= 'Z') line[i] = static_cast<char>(line[i] - 'A' + 'a');
    }
    lowered += line + "\n";
  }
  ASSERT_NE(lowered.find("dcgm_fi_dev_sm_clock{"), std::string::npos);
  ASSERT_EQ(lowered.find("DCGM_FI_DEV_SM_CLOCK"), std::string::npos);
  std::istringstream in(lowered);
  const auto r = ReadRecording(in, "t4-lower-case");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->gpus.size(), 1u);
  ASSERT_EQ(r->gpus[0].samples.size(), 1u);
  const CounterSample& s = r->gpus[0].samples[0];
  EXPECT_DOUBLE_EQ(*s.sm_clock_mhz, 660);
  EXPECT_DOUBLE_EQ(*s.tensor_active, 0.005822);
  EXPECT_DOUBLE_EQ(*s.power_w, 68.244);
  EXPECT_EQ(r->samples_used, ReadRecordingFile(kScrapes + "turing-tesla-t4.prom")->samples_used);
}

// Turing: a Tesla T4 in Ericsson's CNCF AI conformance evidence, with
// profiling fields on.
TEST(RealScrapes, TuringTeslaT4) {
  const Recording r = ReadAndCheck("turing-tesla-t4.prom",
                                   {{"GPU-6d5c0ac5-74d7-3130-46f1-e93ed57f469a", "Tesla T4", "", ""}});
  EXPECT_EQ(r.samples_read, 20u);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].identity.pci_bus_id, "00000000:37:00.0");
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].tensor_active, 0.005822);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 660);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].power_w, 68.244);
  EXPECT_TRUE(r.notes.empty());
}

// Ampere with MIG: 8x A800, GPU 0 split into three 2g.20gb instances, and
// the VGPU family dcgm-exporter cannot format, on every series.
TEST(RealScrapes, AmpereA800WithMigInstances) {
  const std::string model = "NVIDIA A800-SXM4-80GB";
  const std::string gpu0 = "GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418";
  const Recording r = ReadAndCheck("ampere-a800-mig.prom",
                                   {{gpu0 + "/gi3", model, "2g.20gb", "3"},
                                    {gpu0 + "/gi5", model, "2g.20gb", "5"},
                                    {gpu0 + "/gi6", model, "2g.20gb", "6"},
                                    {"GPU-9e5b8fec-61bf-5124-a0a9-079af1b65cc6", model, "", ""},
                                    {"GPU-5022ce43-b44a-987b-71c3-dee05378a618", model, "", ""},
                                    {"GPU-f22db14d-1597-8eb1-78dc-d93765918c73", model, "", ""},
                                    {"GPU-a878a9f3-cf6d-b94c-38ba-892ed140c7ee", model, "", ""},
                                    {"GPU-a1dd6923-de62-e22b-c882-4d6f7e1ec5ce", model, "", ""},
                                    {"GPU-c07eb90d-74b0-d3b4-e6ce-f18687564243", model, "", ""},
                                    {"GPU-4e75c9ab-0ed7-8a57-75f5-23761b9f053f", model, "", ""}});
  EXPECT_EQ(r.lines, 285u);
  EXPECT_EQ(r.samples_read, 233u);
  EXPECT_EQ(r.samples_used, 60u);  // SM clock, power, energy, GR engine, tensor, DRAM: 10 series each
  EXPECT_EQ(r.non_numeric_values, 10u);
  ASSERT_EQ(r.gpus.size(), 10u);
  EXPECT_EQ(r.gpus[0].identity.uuid, gpu0);
  EXPECT_EQ(r.gpus[0].identity.gpu_index, "0");
  EXPECT_EQ(r.gpus[0].identity.hostname, "msxf-hpc-64-35-ai");
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 1410);  // the MIG instances' own lines
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].tensor_active, 0.0);  // a real 0
  EXPECT_DOUBLE_EQ(*r.gpus[2].samples[0].power_w, 78.446);
  EXPECT_DOUBLE_EQ(*r.gpus[3].samples[0].sm_clock_mhz, 210);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_EQ(r.notes[0], kScrapes +
                            "ampere-a800-mig.prom:210: DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION: value 'ERROR - FAILED "
                            "TO CONVERT TO STRING' is not a number; 10 such samples skipped (family not used by ofu)");
}

// Ada: an RTX 4000 Ada in Akamai's LKE AI conformance evidence, with
// Kubernetes pod labels (pod_uid empty).
TEST(RealScrapes, AdaRtx4000AdaGeneration) {
  const Recording r = ReadAndCheck("ada-rtx-4000-ada.prom", {{"GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c",
                                                              "NVIDIA RTX 4000 Ada Generation", "", ""}});
  EXPECT_EQ(r.samples_read, 25u);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].tensor_active, 0.0);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 2310);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].gr_engine_active, 0.004656);
  EXPECT_TRUE(r.notes.empty());
}

// Hopper: the H100 lines DigitalOcean's documentation shows; profiling
// fields off, so tensor activity is absent.
TEST(RealScrapes, HopperH100) {
  const Recording r = ReadAndCheck("hopper-h100-80gb-hbm3.prom",
                                   {{"GPU-927d7444-b45a-7c49-8402-5e686e46a026", "NVIDIA H100 80GB HBM3", "", ""}});
  EXPECT_EQ(r.samples_read, 2u);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 345);
  EXPECT_FALSE(r.gpus[0].samples[0].tensor_active.has_value());
  EXPECT_TRUE(r.notes.empty());
}

// ---------------------------------------------------------------------------
// Scrapes as people paste them: prompts, elisions, fences, prose and quote
// marks around the samples (README.md says where each comes from). Every
// line that cannot be a sample gets one note with its line and text; the
// samples are read.

// The notes a file's stray lines get, from the list of (line, text) the
// file holds, in the form replay.h documents.
std::vector<std::string> StrayNotes(const std::string& name, const std::vector<std::pair<int, std::string>>& lines) {
  std::vector<std::string> notes;
  for (const auto& [line, text] : lines) {
    notes.push_back(kScrapes + name + ":" + std::to_string(line) + ": skipped a line that cannot be a sample: '" +
                    text + "'");
  }
  return notes;
}

// A pasted file of tests/data/scrapes, read with the default options; empty
// (after a failure) when it cannot be read.
Recording ReadPasted(const std::string& name) {
  auto r = ReadRecordingFile(kScrapes + name);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(*r) : Recording{};
}

// NVIDIA/gpu-monitoring-tools README, Quickstart: a fence, two "$" prompts,
// the exposition with "..." where lines were cut, a fence.
TEST(RealPastedScrapes, GpuMonitoringToolsReadmeWithPromptsAndElisions) {
  const std::string name = "pasted-gpu-monitoring-tools-readme-quickstart.prom";
  const Recording r = ReadPasted(name);
  EXPECT_EQ(r.lines, 15u);
  EXPECT_EQ(r.stray_lines, 6u);
  EXPECT_EQ(r.samples_read, 3u);
  EXPECT_EQ(r.notes, StrayNotes(name, {{1, "```"},
                                       {2, "$ docker run -d --gpus all --rm -p 9400:9400 nvcr.io/nvidia/k8s/..."},
                                       {3, "$ curl localhost:9400/metrics"},
                                       {10, "..."},
                                       {14, "..."},
                                       {15, "```"}}));
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].identity.key, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
  EXPECT_EQ(r.gpus[0].identity.model, "");  // this old output has no modelName label
  ASSERT_EQ(r.gpus[0].samples.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 139);
  EXPECT_FALSE(r.gpus[0].samples[0].tensor_active.has_value());

  RecordingOptions strict;
  strict.strict_values = true;
  const auto refused = ReadRecordingFile(kScrapes + name, strict);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, kScrapes + name + ":1: metric name missing");
}

// NVIDIA/dcgm-exporter README today: the commands have no "$" prompt, so
// "docker run ..." and "curl localhost:9400/metrics" read as a name and a
// value that is no number.
TEST(RealPastedScrapes, DcgmExporterReadmeWithBareCommands) {
  const std::string name = "pasted-dcgm-exporter-readme-quickstart.prom";
  const Recording r = ReadPasted(name);
  EXPECT_EQ(r.stray_lines, 6u);
  EXPECT_EQ(r.samples_read, 3u);
  ASSERT_EQ(r.notes.size(), 6u);
  EXPECT_EQ(r.notes[1],
            StrayNotes(name, {{2, "docker run -d --gpus all --cap-add SYS_ADMIN --rm -p 9400:9400 n..."}})[0]);
  EXPECT_EQ(r.notes[2], StrayNotes(name, {{3, "curl localhost:9400/metrics"}})[0]);
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.gpus[0].samples[0].sm_clock_mhz, 139);
}

// dcgm-exporter issue 68: numbered steps around two pastes of an A30 MIG
// instance, and one sample quoted with "> " (skipped: as written it is not
// a sample). The tensor series appears twice, so the file is two scrapes.
TEST(RealPastedScrapes, DcgmExporterIssue68StepsAndQuotedSample) {
  const std::string name = "pasted-dcgm-exporter-issue-68-a30-mig.prom";
  const Recording r = ReadPasted(name);
  EXPECT_EQ(r.stray_lines, 7u);
  EXPECT_EQ(r.samples_read, 3u);
  EXPECT_EQ(r.scrapes, 2u);
  ASSERT_EQ(r.notes.size(), 7u);
  EXPECT_EQ(r.notes[0], StrayNotes(name, {{1, "@nikkon-dev "}})[0]);
  EXPECT_EQ(r.notes[1], StrayNotes(name, {{2, "this is the test you requested."}})[0]);
  EXPECT_EQ(r.notes[6],
            StrayNotes(name, {{13, "> DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-603a8873-0edd-..."}})[0]);
  ASSERT_EQ(r.gpus.size(), 1u);
  const GpuRecording& gi = r.gpus[0];
  EXPECT_EQ(gi.identity.key, "GPU-603a8873-0edd-c157-ce48-2078e8b1a935/gi1");
  EXPECT_EQ(gi.identity.model, "NVIDIA A30");
  EXPECT_EQ(gi.identity.mig_profile, "2g.12gb");
  ASSERT_EQ(gi.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*gi.samples[0].tensor_active, 0.0);
  EXPECT_DOUBLE_EQ(*gi.samples[1].tensor_active, 0.022137);
  EXPECT_FALSE(gi.samples[1].gr_engine_active.has_value());  // its line was the quoted one
  EXPECT_FALSE(gi.samples[1].sm_clock_mhz.has_value());
}

// kubernetes/website, a GH200 scrape with prose and label fragments after
// it: ten stray lines, eight named and one note for the last two. Its only
// family (PCIe bytes) is none ofu uses, so no GPU.
TEST(RealPastedScrapes, KubernetesWebsiteGh200WithLabelFragments) {
  const std::string name = "pasted-kubernetes-website-gh200-dra.prom";
  const Recording r = ReadPasted(name);
  EXPECT_EQ(r.stray_lines, 10u);
  EXPECT_EQ(r.samples_read, 2u);
  EXPECT_TRUE(r.gpus.empty());
  ASSERT_EQ(r.notes.size(), kMaxStrayLineNotes + 2);
  // The GPU its samples name, though no counter ofu uses is among them.
  EXPECT_EQ(r.notes.back(),
            kScrapes + name +
                ": GPU GPU-a4f34abc-7715-3560-dcea-7238b9611a45, NVIDIA GH200 96GB HBM3: no counter "
                "ofu uses, so no OFU: it has only DCGM_FI_PROF_PCIE_RX_BYTES; OFU needs tensor activity "
                "(DCGM_FI_PROF_PIPE_TENSOR_ACTIVE, DCGM field 1004) and the SM clock "
                "(DCGM_FI_DEV_SM_CLOCK, field 100)");
  EXPECT_EQ(r.notes[1], StrayNotes(name, {{6, "with Pod DRA info:"}})[0]);
  EXPECT_EQ(r.notes[2], StrayNotes(name, {{8, "container=\"ctr\","}})[0]);
  EXPECT_EQ(r.notes[8], kScrapes + name +
                            ": 2 more lines that cannot be a sample skipped, the first on line 14 (--strict refuses "
                            "them)");
}

// A real `dcgmi dmon` table (NVIDIA/nvidia-gcp-samples, a T4 serving BERT on
// GKE, in its Markdown fence): read as samples of GPU 2, one per row, rows
// 1 s apart (dmon's default; the paste has no command line), TENSO as tensor
// activity, SMACT, SMOCC, DRAMA as theirs; no SM clock column.
TEST(RealDmonTables, TritonGkeT4Bert) {
  const std::string name = std::string(OFU_TEST_DATA_DIR) + "/dmon/nvidia-gcp-samples-triton-gke-t4-bert.txt";
  const auto r = ReadRecordingFile(name);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->gpus.size(), 1u);
  const GpuRecording& gpu = r->gpus[0];
  EXPECT_EQ(gpu.identity.key, "gpu2");
  EXPECT_EQ(gpu.identity.gpu_index, "2");
  ASSERT_EQ(gpu.samples.size(), 3u);
  const double tensor[] = {0.540, 0.525, 0.546};
  const double sm_active[] = {0.986, 0.959, 0.995};
  const double dram[] = {0.280, 0.278, 0.277};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(gpu.samples[i].time_s, static_cast<double>(i));
    EXPECT_DOUBLE_EQ(*gpu.samples[i].tensor_active, tensor[i]);
    EXPECT_DOUBLE_EQ(*gpu.samples[i].sm_active, sm_active[i]);
    EXPECT_DOUBLE_EQ(*gpu.samples[i].dram_active, dram[i]);
    EXPECT_FALSE(gpu.samples[i].sm_clock_mhz.has_value());
  }
  EXPECT_EQ(gpu.samples[0].sm_occupancy, 0.274);
  EXPECT_TRUE(r->timestamps_assumed);
  EXPECT_DOUBLE_EQ(r->assumed_interval_s, 1);
  EXPECT_EQ(r->scrapes, 3u);
  EXPECT_EQ(r->stray_lines, 2u);  // the fences
  ASSERT_GE(r->notes.size(), 2u);
  EXPECT_EQ(r->notes[0], name +
                             ": a `dcgmi dmon` table, not a dcgm-exporter scrape: 1 entities over 3 intervals, rows "
                             "taken to be 1 s apart: dmon's default -d 1000 ms (the file has no dmon command line to "
                             "say; if it ran with -d, the times are off by that factor); columns read: DRAMA (1005), "
                             "SMACT (1002), SMOCC (1003), TENSO (1004); columns ofu does not use: GPUTL (203), MCUTL "
                             "(204), PCITX (1009), PCIRX (1010)");
  EXPECT_NE(r->notes[1].find("OFU needs dmon's TENSO and SMCLK columns (SMCLK missing): run `dcgmi dmon -e 1004,100"),
            std::string::npos)
      << r->notes[1];
}

// SYNTHETIC: a dmon table as DCGM's current dcgmi writes it (DeviceMonitor.cpp:
// "#Entity" and "ID" lines, cells left-aligned, a blank cell where an entity
// lacks the field), after the command line that says -d 500. Values set by
// hand.
TEST(RealDmonTables, SyntheticCurrentFormatWithDelayAndBlankCell) {
  std::istringstream in(
      "$ dcgmi dmon -e 1004,100,155 -d 500\n"
      "#Entity           TENSO         SMCLK         POWER\n"
      "ID                                            W\n"
      "GPU 0             0.500         1755          612.400\n"
      "GPU-I 3           0.250                       \n"
      "GPU 0             N/A           1980          600.000\n"
      "GPU-I 3           0.125                       \n");
  const auto r = ReadRecording(in, "dmon.txt");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->gpus.size(), 2u);
  EXPECT_DOUBLE_EQ(r->assumed_interval_s, 0.5);
  const GpuRecording& gpu = r->gpus[0];
  ASSERT_EQ(gpu.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*gpu.samples[0].tensor_active, 0.5);
  EXPECT_DOUBLE_EQ(*gpu.samples[0].sm_clock_mhz, 1755);
  EXPECT_DOUBLE_EQ(*gpu.samples[0].power_w, 612.4);
  EXPECT_DOUBLE_EQ(gpu.samples[1].time_s, 0.5);
  EXPECT_FALSE(gpu.samples[1].tensor_active.has_value());  // N/A is absent, never 0
  EXPECT_DOUBLE_EQ(*gpu.samples[1].sm_clock_mhz, 1980);
  const GpuRecording& gi = r->gpus[1];
  EXPECT_EQ(gi.identity.key, "GPU-I 3");
  EXPECT_EQ(gi.identity.mig_instance, "3");
  ASSERT_EQ(gi.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(*gi.samples[1].tensor_active, 0.125);
  EXPECT_FALSE(gi.samples[1].sm_clock_mhz.has_value());
  EXPECT_NE(r->notes[0].find("rows 0.5 s apart, from the -d of the dmon command on line 1"), std::string::npos)
      << r->notes[0];
}

}  // namespace
}  // namespace ofu::sources
