// libFuzzer entry for the recording writer: whatever the reader accepts,
// written out by RecordingWriter and read back, must give the same GPUs,
// instants and values. A difference is a crash (the round trip `ofu record`
// promises is broken), so the fuzzer reports it with the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unordered_map>

#include "ofu/sources/recording_writer.h"
#include "ofu/sources/replay.h"

namespace {

bool SameSample(const ofu::CounterSample& a, const ofu::CounterSample& b) {
  if (a.time_s != b.time_s) return false;
  for (const auto& info : ofu::AllCounterFields()) {
    if (info.field == ofu::CounterField::kDmmaActive) continue;  // not written (no dcgm-exporter name)
    if (ofu::GetField(a, info.field) != ofu::GetField(b, info.field)) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto original = ofu::sources::ReadRecording(in, "fuzz.prom");
  if (!original.ok()) return 0;

  ofu::sources::RecordingWriter writer;
  for (const auto& gpu : original->gpus) {
    for (const auto& sample : gpu.samples) {
      ofu::sources::Snapshot snapshot;
      snapshot.time_s = sample.time_s;
      ofu::sources::GpuReading reading;
      reading.identity = gpu.identity;
      reading.sample = sample;
      snapshot.gpus.push_back(reading);
      writer.Add(snapshot);
    }
  }
  std::ostringstream text;
  writer.Write(ofu::sources::RecordingInfo{}, text);

  std::istringstream again(text.str());
  auto copy = ofu::sources::ReadRecording(again, "roundtrip.om");
  if (!copy.ok()) std::abort();  // the writer wrote something its own reader refuses
  std::size_t written_gpus = 0;
  for (const auto& gpu : original->gpus) written_gpus += gpu.samples.empty() ? 0 : 1;
  if (copy->gpus.size() != written_gpus) std::abort();
  // GPUs come back in the order their first family lists them, so match by key.
  std::unordered_map<std::string, const ofu::sources::GpuRecording*> by_key;
  for (const auto& gpu : copy->gpus) by_key[gpu.identity.key] = &gpu;
  for (const auto& gpu : original->gpus) {
    if (gpu.samples.empty()) continue;
    auto found = by_key.find(gpu.identity.key);
    if (found == by_key.end()) std::abort();
    const auto& other = *found->second;
    if (other.samples.size() != gpu.samples.size()) std::abort();
    for (std::size_t i = 0; i < gpu.samples.size(); ++i) {
      if (!SameSample(gpu.samples[i], other.samples[i])) std::abort();
    }
  }
  return 0;
}
