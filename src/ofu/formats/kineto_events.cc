// The Kineto reader's events and linking: see kineto_events.h.
#include "ofu/formats/kineto_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

namespace ofu::formats::kineto_internal {
namespace {

enum class EventKind { kOther, kKernel, kCpuOp, kLaunch, kRangeProfiler, kMtia };

// A runtime or driver call that launches a kernel: cudaLaunchKernel,
// cudaLaunchKernelExC, cuLaunchKernel, cuLaunchKernelEx, the cooperative
// forms, with or without a "_v7000" or "_ptsz" suffix.
bool IsKernelLaunchName(std::string_view name) {
  for (std::string_view call :
       {std::string_view("cudaLaunchKernel"), std::string_view("cuLaunchKernel"),
        std::string_view("cudaLaunchCooperativeKernel"), std::string_view("cuLaunchCooperativeKernel"),
        std::string_view("hipLaunchKernel"), std::string_view("hipExtModuleLaunchKernel"),
        std::string_view("hipModuleLaunchKernel")}) {
    if (name.starts_with(call)) return true;
  }
  return false;
}

EventKind KindOf(std::string_view cat) {
  if (cat == "kernel" || cat == "Kernel") return EventKind::kKernel;
  if (cat == "cpu_op" || cat == "operator" || cat == "Operator") return EventKind::kCpuOp;
  if (cat == "cuda_runtime" || cat == "cuda_driver" || cat == "Runtime") return EventKind::kLaunch;
  if (cat == "cuda_profiler_range") return EventKind::kRangeProfiler;
  if (cat.starts_with("mtia_")) return EventKind::kMtia;  // mtia_ccp_events, mtia_runtime (Meta's MTIA)
  return EventKind::kOther;
}

bool IsExternalIdKey(std::string_view key) { return key == "External id" || key == "external id"; }

std::optional<std::int64_t> AsInt(simdjson::dom::element value) {
  std::int64_t n;
  if (value.get_int64().get(n)) return std::nullopt;
  return n;
}

std::optional<Dim3> AsDim3(simdjson::dom::element value) {
  simdjson::dom::array array;
  if (value.get_array().get(array) || array.size() != 3) return std::nullopt;
  std::int64_t xyz[3];
  std::size_t i = 0;
  for (simdjson::dom::element item : array) {
    if (item.get_int64().get(xyz[i])) return std::nullopt;
    ++i;
  }
  return Dim3{xyz[0], xyz[1], xyz[2]};
}

// Reads a required time field ("ts" or "dur") of a kept event.
bool RequireTime(const simdjson::dom::element* field, std::string_view field_name, std::string_view kind, double* out,
                 std::string* what) {
  if (field == nullptr) {
    *what = fmt::format("a {} event has no \"{}\"", kind, field_name);
    return false;
  }
  if (field->get_double().get(*out)) {
    *what = fmt::format("a {} event's \"{}\" is not a number", kind, field_name);
    return false;
  }
  return true;
}

// Threads are named by "pid/tid" as text, so that a tid written as the
// string "24572" (old traces do, for CPU ops) and as the number 24572 (for
// the runtime calls of the same thread) are the same thread.
void AppendIdText(const simdjson::dom::element* value, std::string* key) {
  if (value == nullptr) return;
  std::int64_t n;
  std::string_view text;
  if (!value->get_int64().get(n)) {
    char digits[24];
    const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, n);
    key->append(digits, end);
  } else if (!value->get_string().get(text)) {
    key->append(text);
  } else {
    key->append(simdjson::minify(*value));
  }
}

// ---------------------------------------------------------------------------
// Linking

// The GEMM ops of one thread sorted by start (outer first on ties), each
// with the innermost earlier op that contains it. The ops one thread runs
// nest like calls, so the innermost op containing a time t is the last op
// starting at or before t, or, if that one ended before t, the nearest of
// its ancestors that did not: a walk as long as the nesting is deep.
class OpNesting {
 public:
  explicit OpNesting(const std::vector<PendingOp>& ops, std::size_t thread_count) : ops_(ops) {
    order_.resize(ops.size());
    for (std::uint32_t i = 0; i < ops.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [&](std::uint32_t a, std::uint32_t b) {
      const PendingOp& x = ops[a];
      const PendingOp& y = ops[b];
      if (x.thread != y.thread) return x.thread < y.thread;
      if (x.op.start_us != y.op.start_us) return x.op.start_us < y.op.start_us;
      if (End(a) != End(b)) return End(a) > End(b);
      return a < b;
    });
    ranges_.assign(thread_count, {0, 0});
    parent_.assign(order_.size(), -1);
    std::vector<std::size_t> open;  // positions in order_ of the ops still open
    for (std::size_t pos = 0; pos < order_.size(); ++pos) {
      const std::uint32_t thread = ops[order_[pos]].thread;
      if (pos == 0 || ops[order_[pos - 1]].thread != thread) {
        open.clear();
        ranges_[thread].first = pos;
      }
      ranges_[thread].second = pos + 1;
      while (!open.empty() && End(order_[open.back()]) < End(order_[pos])) open.pop_back();
      if (!open.empty()) parent_[pos] = static_cast<std::int64_t>(open.back());
      open.push_back(pos);
    }
  }

  // The innermost op on `thread` whose [start, end] holds `t`.
  std::optional<std::uint32_t> Innermost(std::uint32_t thread, double t) const {
    if (thread >= ranges_.size()) return std::nullopt;
    const auto [first, last] = ranges_[thread];
    const auto begin = order_.begin() + static_cast<std::ptrdiff_t>(first);
    const auto end = order_.begin() + static_cast<std::ptrdiff_t>(last);
    const auto after = std::upper_bound(begin, end, t,
                                        [&](double time, std::uint32_t op) { return time < ops_[op].op.start_us; });
    if (after == begin) return std::nullopt;
    auto pos = static_cast<std::int64_t>(after - order_.begin()) - 1;
    while (pos >= 0) {
      const std::uint32_t op = order_[static_cast<std::size_t>(pos)];
      if (End(op) >= t) return op;
      pos = parent_[static_cast<std::size_t>(pos)];
    }
    return std::nullopt;
  }

 private:
  double End(std::uint32_t op) const { return ops_[op].op.start_us + ops_[op].op.duration_us; }

  const std::vector<PendingOp>& ops_;
  std::vector<std::uint32_t> order_;
  std::vector<std::int64_t> parent_;                         // position in order_, -1 for none
  std::vector<std::pair<std::size_t, std::size_t>> ranges_;  // by thread: [first, last) in order_
};

// Ties each kernel to the GEMM op that shaped it (the rules are in
// kineto_trace.h), keeps in trace.ops only the ops some kernel links to, and
// adds the notes on linking. Sorts `launches`; moves the kept ops out of `ops`.
void LinkKernels(std::vector<TraceKernel>& kernels, const std::vector<KernelIds>& kernel_ids,
                 std::vector<PendingOp>& ops, std::vector<Launch>& launches, std::size_t thread_count,
                 std::uint64_t cpu_ops_seen, std::size_t range_profiler_records, KernelTrace& trace) {
  std::unordered_map<std::int64_t, std::uint32_t> op_by_external_id;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    if (ops[i].external_id != kNoId) op_by_external_id.try_emplace(ops[i].external_id, i);
  }
  std::sort(launches.begin(), launches.end(),
            [](const Launch& a, const Launch& b) { return a.correlation < b.correlation; });
  const OpNesting nesting(ops, thread_count);

  std::vector<std::int64_t> new_index(ops.size(), -1);
  std::size_t by_external_id = 0, by_nesting = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    TraceKernel& kernel = kernels[k];
    const KernelIds& ids = kernel_ids[k];
    const Launch* launch = nullptr;
    if (ids.correlation != kNoId) {
      const auto it = std::lower_bound(launches.begin(), launches.end(), ids.correlation,
                                       [](const Launch& l, std::int64_t correlation) {
                                         return l.correlation < correlation;
                                       });
      if (it != launches.end() && it->correlation == ids.correlation) {
        launch = &*it;
        kernel.launch = launch->graph ? LaunchKind::kGraph : LaunchKind::kKernel;
      }
    }
    // A graph's kernels are not tied to the op around the graph launch: that
    // op replays the graph, it did not shape this kernel.
    const bool graph = kernel.launch == LaunchKind::kGraph;
    std::optional<std::uint32_t> op;
    if (!graph && ids.external_id != kNoId) {
      const auto it = op_by_external_id.find(ids.external_id);
      if (it != op_by_external_id.end()) {
        op = it->second;
        kernel.link = OpLink::kExternalId;
        ++by_external_id;
      }
    }
    if (!op && !graph && launch != nullptr) {
      op = nesting.Innermost(launch->thread, launch->start_us);
      if (op) {
        kernel.link = OpLink::kCorrelationNesting;
        ++by_nesting;
      }
    }
    if (op) new_index[*op] = 0;  // marked; numbered below
    kernel.op = op;
  }

  // Keep only the ops some kernel links to, in file order.
  std::size_t without_dims = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (new_index[i] < 0) continue;
    new_index[i] = static_cast<std::int64_t>(trace.ops.size());
    if (!ops[i].has_input_dims) ++without_dims;
    trace.ops.push_back(std::move(ops[i].op));
  }
  for (TraceKernel& kernel : kernels) {
    if (kernel.op) kernel.op = static_cast<std::uint32_t>(new_index[*kernel.op]);
  }

  if (kernels.empty() && range_profiler_records > 0) {
    // CUPTI's range profiler replaced the kernel activity records: each
    // kernel is named by a record of its own, with counter values, but the
    // records' "ts" and "dur" are the profiler's replay ranges.
    trace.notes.push_back(fmt::format(
        "kernels recorded by CUPTI's range profiler, not as kernel activity: {} record{} (\"cat\": "
        "\"cuda_profiler_range\") name the kernels and carry counter values, but no kernel's own start or "
        "duration (the profiler replays each kernel), so no time can be weighed and no GEMM corrected; record "
        "with ProfilerActivity.CUDA and without the experimental CUPTI range profiler (\"cat\": \"kernel\" "
        "events) for a correction",
        range_profiler_records, range_profiler_records == 1 ? "" : "s"));
    return;
  }
  if (kernels.empty()) {
    const auto kernel_launches = std::count_if(launches.begin(), launches.end(),
                                               [](const Launch& l) { return l.kernel; });
    if (kernel_launches > 0) {
      // The profiler ran with CUDA activity on (the launches are CUPTI's
      // runtime and driver records), but the kernels' own records never
      // reached the trace.
      trace.notes.push_back(fmt::format(
          "launches recorded, kernel records missing: the trace has {} kernel launch{} (cudaLaunchKernel, "
          "cuLaunchKernel, ...: \"cat\": \"cuda_runtime\"/\"cuda_driver\") but no GPU kernel events "
          "(\"cat\": \"kernel\"), so ProfilerActivity.CUDA was on and CUPTI's activity records were lost: "
          "likely CUPTI's kernel tracing unavailable where it ran (WSL, a container or driver without profiling "
          "permission), its activity buffers dropped, or the records stamped outside the profiling window "
          "(KINETO_LOG_LEVEL=0 prints \"Record counts: Out-of-range\"); profile a longer window after a warm-up "
          "step, or on a host where `nsys profile --trace=cuda` shows kernels",
          kernel_launches, kernel_launches == 1 ? "" : "es"));
      return;
    }
    if (!launches.empty()) {
      // CUDA activity was on (CUPTI recorded runtime calls), but nothing
      // launched a kernel while the profiler ran.
      trace.notes.push_back(fmt::format(
          "no kernel launched while profiling: the trace has {} CUDA runtime call{} (\"cat\": \"cuda_runtime\") "
          "but no kernel launch among them and no GPU kernel events (\"cat\": \"kernel\"); profile the steps "
          "that run the model, after a warm-up step (torch.profiler.schedule(wait=1, warmup=1, active=3))",
          launches.size(), launches.size() == 1 ? "" : "s"));
      return;
    }
    trace.notes.push_back(
        "no CUDA activity recorded: the trace has no GPU kernel events (\"cat\": \"kernel\") and no CUDA "
        "runtime calls (\"cat\": \"cuda_runtime\"); record it with ProfilerActivity.CUDA");
    return;
  }
  if (cpu_ops_seen == 0) {
    trace.notes.push_back("the trace has no CPU op events, so kernels cannot be tied to framework ops");
  } else if (ops.empty()) {
    trace.notes.push_back(fmt::format("none of the {} CPU ops is a GEMM op (aten::mm, addmm, bmm, ...)", cpu_ops_seen));
  }
  trace.notes.push_back(
      fmt::format("{} of {} kernels are linked to a GEMM op ({} by External id, {} by correlation and nesting)",
                  by_external_id + by_nesting, kernels.size(), by_external_id, by_nesting));
  if (without_dims > 0) {
    trace.notes.push_back(
        fmt::format("{} of {} linked GEMM ops have no \"Input Dims\"; record the trace with record_shapes=True",
                    without_dims, trace.ops.size()));
  }
}

}  // namespace

bool EventReader::Parse(std::string_view json, std::string_view invalid, simdjson::dom::element* doc,
                        std::string* what) {
  if (const auto error =
          parser_.parse(reinterpret_cast<const std::uint8_t*>(json.data()), json.size(), false).get(*doc)) {
    *what = fmt::format("{} ({})", invalid, simdjson::error_message(error));
    return false;
  }
  return true;
}

bool EventReader::Read(std::string_view json, std::string* what) {
  simdjson::dom::element doc;
  if (!Parse(json, "the event is not valid JSON", &doc, what)) return false;
  simdjson::dom::object event;
  if (doc.get_object().get(event)) {
    *what = "the event is not a JSON object";
    return false;
  }

  // One pass over the fields; events have ten or so.
  std::string_view ph, cat, name;
  bool has_name = false;
  simdjson::dom::element ts, dur, pid, tid, args;
  bool has_ts = false, has_dur = false, has_pid = false, has_tid = false, has_args = false;
  for (const simdjson::dom::key_value_pair field : event) {
    const std::string_view key = field.key;
    if (key == "ph") {
      if (field.value.get_string().get(ph)) ph = {};
    } else if (key == "cat") {
      if (field.value.get_string().get(cat)) cat = {};
    } else if (key == "name") {
      has_name = !field.value.get_string().get(name);
    } else if (key == "ts") {
      ts = field.value;
      has_ts = true;
    } else if (key == "dur") {
      dur = field.value;
      has_dur = true;
    } else if (key == "pid") {
      pid = field.value;
      has_pid = true;
    } else if (key == "tid") {
      tid = field.value;
      has_tid = true;
    } else if (key == "args") {
      args = field.value;
      has_args = true;
    }
  }
  const EventKind kind = KindOf(cat);
  if (kind == EventKind::kMtia) {
    // Any phase: MTIA's device and runtime events say where the trace was recorded.
    if (!platform_) NotePlatform("Meta", "", fmt::format("events of category \"{}\" (Meta's MTIA)", cat), 0);
    return true;
  }
  if (ph != "X") return true;

  const simdjson::dom::element* ts_p = has_ts ? &ts : nullptr;
  const simdjson::dom::element* dur_p = has_dur ? &dur : nullptr;
  const simdjson::dom::element* pid_p = has_pid ? &pid : nullptr;
  const simdjson::dom::element* tid_p = has_tid ? &tid : nullptr;
  const simdjson::dom::element* args_p = has_args ? &args : nullptr;
  switch (kind) {
    case EventKind::kKernel:
      if (!has_name) {
        *what = "a kernel event has no \"name\" string";
        return false;
      }
      return ReadKernel(name, ts_p, dur_p, args_p, what);
    case EventKind::kCpuOp:
      ++cpu_ops_seen_;
      // Only GEMM ops are kept; the rest are not checked further.
      if (!has_name || !IsGemmOpName(name)) return true;
      return ReadCpuOp(name, ts_p, dur_p, pid_p, tid_p, args_p, what);
    case EventKind::kLaunch: return ReadLaunch(has_name ? name : std::string_view(), ts_p, pid_p, tid_p, args_p, what);
    case EventKind::kRangeProfiler:
      // CUPTI's range profiler: one record per kernel it replayed, named
      // after the kernel; its "ts" and "dur" are not the kernel's.
      if (has_name) range_profiler_kernels_.emplace_back(name);
      return true;
    case EventKind::kMtia:
    case EventKind::kOther: return true;
  }
  return true;
}

bool EventReader::ReadKernel(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                             const simdjson::dom::element* args, std::string* what) {
  TraceKernel kernel;
  if (!RequireTime(ts, "ts", "kernel", &kernel.start_us, what)) return false;
  if (!RequireTime(dur, "dur", "kernel", &kernel.duration_us, what)) return false;
  if (kernel.duration_us < 0) {
    *what = "a kernel event has a negative \"dur\"";
    return false;
  }
  KernelIds ids;
  simdjson::dom::object fields;
  if (args != nullptr && !args->get_object().get(fields)) {
    for (const simdjson::dom::key_value_pair field : fields) {
      const std::string_view key = field.key;
      if (key == "device") {
        const std::optional<std::int64_t> device = AsInt(field.value);
        if (device && *device >= 0 && *device <= std::numeric_limits<std::int32_t>::max()) {
          kernel.device = static_cast<std::int32_t>(*device);
        }
      } else if (key == "stream") {
        kernel.stream = AsInt(field.value).value_or(-1);
      } else if (key == "grid") {
        kernel.grid = AsDim3(field.value);
      } else if (key == "block") {
        kernel.block = AsDim3(field.value);
      } else if (key == "correlation") {
        ids.correlation = AsInt(field.value).value_or(kNoId);
      } else if (IsExternalIdKey(key)) {
        ids.external_id = AsInt(field.value).value_or(kNoId);
      }
    }
  }
  kernel.name_id = InternKernelName(name);
  kernels_.push_back(kernel);
  kernel_ids_.push_back(ids);
  return true;
}

bool EventReader::ReadCpuOp(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* dur,
                            const simdjson::dom::element* pid, const simdjson::dom::element* tid,
                            const simdjson::dom::element* args, std::string* what) {
  PendingOp pending;
  FrameworkOp& op = pending.op;
  if (!RequireTime(ts, "ts", "cpu_op", &op.start_us, what)) return false;
  if (!RequireTime(dur, "dur", "cpu_op", &op.duration_us, what)) return false;
  if (op.duration_us < 0) {
    *what = "a cpu_op event has a negative \"dur\"";
    return false;
  }
  op.name = name;
  pending.thread = ThreadOf(pid, tid);
  simdjson::dom::object fields;
  if (args != nullptr && !args->get_object().get(fields)) {
    for (const simdjson::dom::key_value_pair field : fields) {
      const std::string_view key = field.key;
      if (IsExternalIdKey(key)) {
        pending.external_id = AsInt(field.value).value_or(kNoId);
      } else if (key == "Input Dims") {
        simdjson::dom::array inputs;
        if (field.value.get_array().get(inputs)) continue;
        pending.has_input_dims = true;
        op.input_dims.reserve(inputs.size());
        for (simdjson::dom::element input : inputs) {
          std::vector<std::int64_t>& dims = op.input_dims.emplace_back();
          simdjson::dom::array values;
          if (input.get_array().get(values)) continue;
          for (simdjson::dom::element value : values) {
            std::int64_t n;
            if (value.get_int64().get(n)) {  // e.g. a tensor list: [[2, 3], [4, 5]]
              dims.clear();
              break;
            }
            dims.push_back(n);
          }
        }
      } else if (key == "Input type") {
        simdjson::dom::array types;
        if (field.value.get_array().get(types)) continue;
        op.input_types.reserve(types.size());
        for (simdjson::dom::element type : types) {
          std::string_view text;
          op.input_types.emplace_back(type.get_string().get(text) ? std::string_view() : text);
        }
      }
    }
  }
  ops_.push_back(std::move(pending));
  return true;
}

bool EventReader::ReadLaunch(std::string_view name, const simdjson::dom::element* ts, const simdjson::dom::element* pid,
                             const simdjson::dom::element* tid, const simdjson::dom::element* args, std::string* what) {
  simdjson::dom::element correlation;
  std::int64_t id;
  if (args == nullptr || (*args)["correlation"].get(correlation) || correlation.get_int64().get(id)) {
    return true;  // a call that launches nothing, e.g. cudaStreamSynchronize in some versions
  }
  double start_us;
  if (!RequireTime(ts, "ts", "cuda_runtime", &start_us, what)) return false;
  if (!platform_ && name.starts_with("hip"))
    NotePlatform("AMD", "", fmt::format("HIP runtime calls (\"{}\")", name), 0);
  const bool graph = IsGraphLaunchName(name);
  launches_.push_back(Launch{id, start_us, ThreadOf(pid, tid), graph, graph || IsKernelLaunchName(name)});
  return true;
}

std::uint32_t EventReader::ThreadOf(const simdjson::dom::element* pid, const simdjson::dom::element* tid) {
  thread_key_.clear();
  AppendIdText(pid, &thread_key_);
  thread_key_.push_back('\0');  // cannot occur in the text of either id
  AppendIdText(tid, &thread_key_);
  const auto [it, inserted] = thread_ids_.try_emplace(thread_key_, static_cast<std::uint32_t>(thread_ids_.size()));
  return it->second;
}

std::uint32_t EventReader::InternKernelName(std::string_view name) {
  const auto it = kernel_name_ids_.find(name);
  if (it != kernel_name_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(kernel_names_.size());
  kernel_names_.emplace_back(name);
  kernel_name_ids_.emplace(kernel_names_.back(), id);
  return id;
}

bool EventReader::ReadDevices(std::string_view json, std::string* what) {
  simdjson::dom::element doc;
  if (!Parse(json, "the device properties are not valid JSON", &doc, what)) return false;
  simdjson::dom::array entries;
  if (doc.get_array().get(entries)) {
    // Only descriptive, so not worth refusing the trace for.
    notes_.push_back("the trace's device properties are not an array; its GPUs are not read");
    return true;
  }
  for (simdjson::dom::element entry : entries) {
    simdjson::dom::object fields;
    if (entry.get_object().get(fields)) continue;
    TraceDevice device;
    bool mtia_fields = false;
    for (const simdjson::dom::key_value_pair field : fields) {
      const std::string_view key = field.key;
      const std::optional<std::int64_t> n = AsInt(field.value);
      const bool fits = n && *n >= std::numeric_limits<int>::min() && *n <= std::numeric_limits<int>::max();
      const int value = fits ? static_cast<int>(*n) : 0;
      if (key == "id") {
        if (fits) device.id = value;
      } else if (key == "name") {
        std::string_view name;
        if (!field.value.get_string().get(name)) device.name = name;
      } else if (key == "runtimeMajorVersion") {
        mtia_fields = true;
      } else if (key == "numSms" || key == "multiProcessorCount") {
        if (fits) device.sm_count = value;
      } else if (key == "computeMajor" || key == "major") {
        if (fits) device.compute_major = value;
      } else if (key == "computeMinor" || key == "minor") {
        if (fits) device.compute_minor = value;
      }
    }
    // ROCm's Kineto names AMD devices "AMD Instinct MI300X VF", "AMD Radeon
    // Graphics"; MTIA's carry a runtime version and no compute capability.
    if (device.name.starts_with("AMD ")) {
      NotePlatform("AMD", device.name, fmt::format("deviceProperties name \"{}\"", device.name), 2);
    } else if (mtia_fields && !device.compute_major) {
      NotePlatform("Meta", device.name,
                   fmt::format("deviceProperties \"{}\" with MTIA's fields (runtimeMajorVersion, no compute "
                               "capability)",
                               device.name),
                   2);
    }
    devices_.push_back(std::move(device));
  }
  return true;
}

void EventReader::NoteTopLevel(std::string_view key, std::string_view value) {
  // PyTorch built for ROCm writes these at the top of every trace.
  if (key == "roctracer_version" || key == "hip_runtime_version" || key == "hip_driver_version") {
    NotePlatform("AMD", "", fmt::format("{} {}", key, value), 1);
  }
}

void EventReader::NotePlatform(std::string_view vendor, std::string_view device, std::string evidence, int rank) {
  if (!platform_ || rank > platform_rank_) {
    platform_ = TracePlatform{std::string(vendor), std::string(device), std::move(evidence)};
    platform_rank_ = rank;
  }
}

KernelTrace EventReader::Finish(std::uint64_t bytes_read) {
  KernelTrace trace;
  trace.format = "kineto";
  trace.bytes_read = bytes_read;
  trace.notes = std::move(notes_);
  LinkKernels(kernels_, kernel_ids_, ops_, launches_, thread_ids_.size(), cpu_ops_seen_, range_profiler_kernels_.size(),
              trace);
  trace.kernel_names = std::move(kernel_names_);
  trace.kernels = std::move(kernels_);
  trace.devices = std::move(devices_);
  trace.other_platform = std::move(platform_);
  trace.range_profiler_kernels = std::move(range_profiler_kernels_);
  return trace;
}

}  // namespace ofu::formats::kineto_internal
