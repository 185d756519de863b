// RecordingWriter: what it writes must read back through ReadRecording to
// the very same values (synthetic snapshots built here).
#include "ofu/sources/recording_writer.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "ofu/sources/replay.h"

namespace ofu::sources {
namespace {

GpuReading Gpu(std::string uuid, std::string index, double time_s) {
  GpuReading gpu;
  gpu.identity.key = uuid;
  gpu.identity.uuid = std::move(uuid);
  gpu.identity.gpu_index = std::move(index);
  gpu.identity.model = "NVIDIA H100 80GB HBM3";
  gpu.identity.hostname = "node-a";
  gpu.identity.pci_bus_id = "00000000:18:00.0";
  gpu.sample.time_s = time_s;
  return gpu;
}

// Every field of CounterSample set to a value that is awkward to print.
CounterSample EveryField(double time_s, double base) {
  CounterSample s;
  s.time_s = time_s;
  for (const CounterFieldInfo& info : AllCounterFields()) {
    const double v = info.is_activity ? base / (1.0 + static_cast<double>(info.field)) : 1000.0 / 3.0 + base;
    SetField(s, info.field, v);
  }
  s.clock_event_reasons = 0x4 | 0x8 | 0x80;  // sw_power_cap, hw_slowdown, hw_power_brake
  return s;
}

std::string Render(const RecordingWriter& writer, const RecordingInfo& info) {
  std::ostringstream out;
  writer.Write(info, out);
  return out.str();
}

Recording ReadBack(const std::string& text) {
  std::istringstream in(text);
  auto recording = ReadRecording(in, "written");
  EXPECT_TRUE(recording.ok()) << recording.error().message << "\n" << text;
  return recording.ok() ? std::move(*recording) : Recording{};
}

TEST(RecordingWriterTest, EveryFieldRoundTripsExactlyExceptDmmaWhichHasNoExporterName) {
  Snapshot a;
  a.time_s = 1700000000.25;
  a.gpus.push_back(Gpu("GPU-a", "0", a.time_s));
  a.gpus[0].sample = EveryField(a.time_s, 0.1);
  Snapshot b = a;
  b.time_s = 1700000001.25;
  b.gpus[0].sample = EveryField(b.time_s, 0.7);

  RecordingWriter writer;
  writer.Add(a);
  writer.Add(b);
  // 17 fields, DMMA not written: 16 per snapshot.
  EXPECT_EQ(writer.samples(), 32u);
  const Recording r = ReadBack(Render(writer, {}));
  ASSERT_EQ(r.gpus.size(), 1u);
  ASSERT_EQ(r.gpus[0].samples.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const CounterSample& want = (i == 0 ? a : b).gpus[0].sample;
    const CounterSample& got = r.gpus[0].samples[i];
    EXPECT_EQ(got.time_s, want.time_s);
    for (const CounterFieldInfo& info : AllCounterFields()) {
      if (info.field == CounterField::kDmmaActive) {
        EXPECT_FALSE(GetField(got, info.field).has_value());
        continue;
      }
      EXPECT_EQ(GetField(got, info.field), GetField(want, info.field)) << info.name;
    }
  }
  EXPECT_EQ(r.gpus[0].samples[0].clock_event_reasons, std::uint64_t{0x8c});
  EXPECT_EQ(r.gpus[0].identity.uuid, "GPU-a");
  EXPECT_EQ(r.gpus[0].identity.gpu_index, "0");
  EXPECT_EQ(r.gpus[0].identity.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.gpus[0].identity.hostname, "node-a");
  EXPECT_EQ(r.gpus[0].identity.pci_bus_id, "00000000:18:00.0");
}

TEST(RecordingWriterTest, AbsentStaysAbsentAndMigIdentityRoundTrips) {
  Snapshot s;
  s.time_s = 100;
  GpuReading whole = Gpu("GPU-p", "0", 100);
  whole.sample.tensor_active = 0.5;
  whole.sample.sm_clock_mhz = 1830;
  GpuReading mig = Gpu("GPU-p", "0", 100);
  mig.identity.mig_profile = "1g.10gb";
  mig.identity.mig_instance = "7";
  mig.sample.tensor_active = 0.125;
  mig.sample.sm_clock_mhz = 1755;             // its own clock, so nothing is lent from the parent
  GpuReading empty = Gpu("GPU-q", "1", 100);  // no value at all: writes nothing
  s.gpus = {whole, mig, empty};

  RecordingWriter writer;
  writer.Add(s);
  EXPECT_EQ(writer.samples(), 4u);
  const Recording r = ReadBack(Render(writer, {}));
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].identity.key, "GPU-p");
  EXPECT_EQ(r.gpus[1].identity.key, "GPU-p/gi7");
  EXPECT_EQ(r.gpus[1].identity.mig_profile, "1g.10gb");
  EXPECT_EQ(r.gpus[1].identity.mig_instance, "7");
  const CounterSample& got = r.gpus[1].samples.at(0);
  EXPECT_EQ(got.tensor_active, 0.125);
  EXPECT_EQ(got.sm_clock_mhz, 1755);
  EXPECT_FALSE(got.power_w.has_value());
  EXPECT_FALSE(got.clock_event_reasons.has_value());
  EXPECT_FALSE(r.gpus[0].samples.at(0).gr_engine_active.has_value());
}

TEST(RecordingWriterTest, InfoLineIsTimestampedAndRoundTrips) {
  Snapshot s;
  s.time_s = 1700000000;
  s.gpus.push_back(Gpu("GPU-a", "0", s.time_s));
  s.gpus[0].sample.tensor_active = 0.5;
  RecordingWriter writer;
  writer.Add(s);
  const std::string text = Render(writer, {true, "a \"quoted\"\\ line\nand more", std::nullopt});
  EXPECT_NE(text.find("ofu_recording_info{synthetic=\"true\",description=\"a \\\"quoted\\\"\\\\ line\\nand more\"} 1 "
                      "1700000000\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
  const Recording r = ReadBack(text);
  EXPECT_EQ(r.synthetic, std::optional<bool>(true));
  EXPECT_EQ(r.description, "a \"quoted\"\\ line\nand more");

  const Recording live = ReadBack(Render(writer, {false, "live", 5.0}));
  EXPECT_EQ(live.synthetic, std::optional<bool>(false));
}

TEST(RecordingWriterTest, EachFamilyIsContiguousWithOneTypeLine) {
  Snapshot s;
  s.gpus = {Gpu("GPU-a", "0", 0), Gpu("GPU-b", "1", 0)};
  RecordingWriter writer;
  for (int t = 1; t <= 3; ++t) {
    s.time_s = t;
    for (auto& gpu : s.gpus) {
      gpu.sample.time_s = t;
      gpu.sample.tensor_active = 0.25 * t;
      gpu.sample.sm_clock_mhz = 1000 + t;
    }
    writer.Add(s);
  }
  const std::string text = Render(writer, {});
  std::istringstream lines(text);
  std::string line, current;
  std::vector<std::string> families;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::string name = line.substr(0, line.find('{'));
    if (name != current) families.push_back(current = name);
  }
  EXPECT_EQ(families, (std::vector<std::string>{"ofu_recording_info", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                                                "DCGM_FI_DEV_SM_CLOCK"}));
  // Labels in a fixed order: gpu, UUID, pci_bus_id, device, modelName, Hostname.
  EXPECT_NE(text.find("DCGM_FI_DEV_SM_CLOCK{gpu=\"1\",UUID=\"GPU-b\",pci_bus_id=\"00000000:18:00.0\","
                      "device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node-a\"} 1003 3\n"),
            std::string::npos)
      << text;
}

TEST(RecordingWriterTest, ValuesTheReaderWouldRejectAreSkippedAndCounted) {
  Snapshot s;
  s.time_s = 10;
  s.gpus.push_back(Gpu("GPU-a", "0", 10));
  s.gpus[0].sample.tensor_active = 1.5;  // not a ratio
  s.gpus[0].sample.power_w = -1;
  s.gpus[0].sample.sm_clock_mhz = std::numeric_limits<double>::quiet_NaN();
  s.gpus[0].sample.gr_engine_active = 0.25;
  RecordingWriter writer;
  writer.Add(s);
  EXPECT_EQ(writer.samples(), 1u);
  EXPECT_EQ(writer.skipped_values(), 3u);
  const Recording r = ReadBack(Render(writer, {}));
  ASSERT_EQ(r.gpus.size(), 1u);
  EXPECT_EQ(r.gpus[0].samples.at(0).gr_engine_active, 0.25);
  EXPECT_FALSE(r.gpus[0].samples.at(0).tensor_active.has_value());
}

TEST(RecordingWriterTest, WriteFileReplacesTheTargetAndLeavesNoTemporary) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("ofu-writer-{}", ::getpid());
  fs::create_directories(dir);
  const fs::path path = dir / "out.om";
  std::ofstream(path) << "old content";
  Snapshot s;
  s.time_s = 10;
  s.gpus.push_back(Gpu("GPU-a", "0", 10));
  s.gpus[0].sample.tensor_active = 0.5;
  RecordingWriter writer;
  writer.Add(s);
  ASSERT_TRUE(writer.WriteFile({}, path.string()).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("# TYPE ofu_recording info", 0), 0u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);

  const Status bad = writer.WriteFile({}, (dir / "no-such-dir" / "x.om").string());
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kIo);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ofu::sources
