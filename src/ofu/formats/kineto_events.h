// The event layer of the Kineto trace reader (kineto_trace.cc): parses each
// event's JSON text, which the scanner (kineto_scanner.h) cut out, keeps what
// the analysis needs, and once the whole file is read links kernels to GEMM
// ops (the rules are in kineto_trace.h). Internal to ofu_formats: included
// only by kineto_*.cc; nothing here is part of the library's interface.
//
// Thread-safety: an EventReader belongs to one read, on one thread.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ofu/formats/kernel_trace.h"

namespace ofu::formats::kineto_internal {

// An id ("External id", "correlation") that the event does not carry.
constexpr std::int64_t kNoId = std::numeric_limits<std::int64_t>::min();

// A GEMM op as read, before linking.
struct PendingOp {
  FrameworkOp op;
  std::int64_t external_id = kNoId;
  std::uint32_t thread = 0;
  bool has_input_dims = false;
};

// The ids a kernel carries, used only for linking.
struct KernelIds {
  std::int64_t external_id = kNoId;
  std::int64_t correlation = kNoId;
};

// A CUDA runtime or driver call.
struct Launch {
  std::int64_t correlation;
  double start_us;
  std::uint32_t thread;
  bool graph;   // cudaGraphLaunch / cuGraphLaunch
  bool kernel;  // launches GPU work: cudaLaunchKernel, cuLaunchKernel(Ex), ...Cooperative..., or a graph
};

// Hash and equality that look up a std::string key by string_view, so that
// interning a kernel name copies it only the first time it is seen.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class EventReader {
 public:
  // Reads one event (its JSON text, padded as simdjson needs). On a
  // malformed event returns false and says why in `what`.
  bool Read(std::string_view json, std::string* what);
  // Reads the value of "deviceProperties" or "computeProperties".
  bool ReadDevices(std::string_view json, std::string* what);
  // A top-level key other than the events and devices, with its value's raw
  // JSON text: ROCm's version keys say the trace is not an NVIDIA GPU's.
  void NoteTopLevel(std::string_view key, std::string_view value);

  // Links kernels to GEMM ops and hands over all that was read; call once,
  // after the last event. `bytes_read` is the uncompressed text's length.
  KernelTrace Finish(std::uint64_t bytes_read);

 private:
  // Parses `json` (padded, in place) into `doc`; on invalid JSON sets `what`
  // to `invalid` ("the event is not valid JSON") and simdjson's reason.
  bool Parse(std::string_view json, std::string_view invalid, simdjson::dom::element* doc, std::string* what);
  bool ReadKernel(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                  const simdjson::dom::element* args, std::string* what);
  bool ReadCpuOp(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                 const simdjson::dom::element* pid, const simdjson::dom::element* tid,
                 const simdjson::dom::element* args, std::string* what);
  bool ReadLaunch(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* pid,
                  const simdjson::dom::element* tid, const simdjson::dom::element* args, std::string* what);
  std::uint32_t ThreadOf(const simdjson::dom::element* pid, const simdjson::dom::element* tid);
  std::uint32_t InternKernelName(std::string_view name);
  // Evidence of another vendor's device, ranked: a device's own name (2)
  // over ROCm's top-level keys (1) over event names and categories (0); the
  // first of the highest rank is kept.
  void NotePlatform(std::string_view vendor, std::string_view device, std::string evidence, int rank);

  simdjson::dom::parser parser_;

  std::vector<std::string> kernel_names_;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> kernel_name_ids_;
  std::vector<TraceKernel> kernels_;
  std::vector<KernelIds> kernel_ids_;
  std::vector<PendingOp> ops_;
  std::vector<Launch> launches_;
  std::vector<TraceDevice> devices_;
  std::unordered_map<std::string, std::uint32_t> thread_ids_;
  std::string thread_key_;  // scratch, kept to reuse its allocation
  std::uint64_t cpu_ops_seen_ = 0;
  std::optional<TracePlatform> platform_;
  int platform_rank_ = -1;
  std::vector<std::string> range_profiler_kernels_;
  std::vector<std::string> notes_;
};

}  // namespace ofu::formats::kineto_internal
