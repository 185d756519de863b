#include "kernel_recorder.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include <cupti_activity.h>
#include <fmt/format.h>

namespace ofu::gpu {

// The CUPTI functions used, typed from the toolkit's declarations (never
// linked: the addresses come from dlsym).
struct CuptiFunctions {
  decltype(&cuptiActivityEnable) ActivityEnable = nullptr;
  decltype(&cuptiActivityDisable) ActivityDisable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) ActivityRegisterCallbacks = nullptr;
  decltype(&cuptiActivityFlushAll) ActivityFlushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) ActivityGetNextRecord = nullptr;
  decltype(&cuptiGetResultString) GetResultString = nullptr;
};

namespace {

constexpr std::size_t kBufferBytes = std::size_t{8} << 20;
constexpr std::size_t kBufferAlign = 8;

// The sink CUPTI's callbacks write to (see the header for why it is shared).
struct ActivitySink {
  std::mutex mutex;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  std::map<std::string, KernelActivity> kernels;
  int64_t dropped = 0;
};

ActivitySink& Sink() {
  static ActivitySink sink;
  return sink;
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  ActivitySink& sink = Sink();
  {
    std::lock_guard<std::mutex> lock(sink.mutex);
    CUpti_Activity* record = nullptr;
    while (sink.next_record != nullptr && sink.next_record(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
      // Only the leading fields are read; later CUPTI versions append.
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (kernel->name == nullptr) continue;
      KernelActivity& entry = sink.kernels[kernel->name];
      entry.name = kernel->name;
      entry.launches += 1;
      if (kernel->end > kernel->start) entry.total_ns += static_cast<double>(kernel->end - kernel->start);
    }
  }
  std::free(buffer);
}

}  // namespace

std::vector<std::string> CuptiCandidates(const std::string& flag, const std::string& cuda_library_dir) {
  if (!flag.empty()) return {flag};
  return {"libcupti.so.13", "libcupti.so", cuda_library_dir + "/libcupti.so.13",
          cuda_library_dir + "/../extras/CUPTI/lib64/libcupti.so.13"};
}

KernelRecorder::KernelRecorder(std::unique_ptr<platform::DynamicLibrary> library, std::unique_ptr<CuptiFunctions> fn)
    : library_(std::move(library)), fn_(std::move(fn)) {}

KernelRecorder::~KernelRecorder() {
  if (registered_) fn_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard<std::mutex> lock(Sink().mutex);
  Sink().next_record = nullptr;
}

Result<std::unique_ptr<KernelRecorder>> KernelRecorder::Open(const std::vector<std::string>& candidates) {
  auto library = platform::DynamicLibrary::Open(candidates);
  if (!library.ok()) {
    return Error::Unavailable(
        "cannot load CUPTI ({}); pass --cupti-library PATH (libcupti.so.13 ships with the "
        "CUDA toolkit)",
        library.error().message);
  }
  auto fn = std::make_unique<CuptiFunctions>();
  const platform::DynamicLibrary& lib = **library;
  fn->ActivityEnable = lib.Function<decltype(fn->ActivityEnable)>({"cuptiActivityEnable"});
  fn->ActivityDisable = lib.Function<decltype(fn->ActivityDisable)>({"cuptiActivityDisable"});
  fn->ActivityRegisterCallbacks =
      lib.Function<decltype(fn->ActivityRegisterCallbacks)>({"cuptiActivityRegisterCallbacks"});
  fn->ActivityFlushAll = lib.Function<decltype(fn->ActivityFlushAll)>({"cuptiActivityFlushAll"});
  fn->ActivityGetNextRecord = lib.Function<decltype(fn->ActivityGetNextRecord)>({"cuptiActivityGetNextRecord"});
  fn->GetResultString = lib.Function<decltype(fn->GetResultString)>({"cuptiGetResultString"});
  const std::pair<const void*, const char*> required[] = {
      {reinterpret_cast<const void*>(fn->ActivityEnable), "cuptiActivityEnable"},
      {reinterpret_cast<const void*>(fn->ActivityDisable), "cuptiActivityDisable"},
      {reinterpret_cast<const void*>(fn->ActivityRegisterCallbacks), "cuptiActivityRegisterCallbacks"},
      {reinterpret_cast<const void*>(fn->ActivityFlushAll), "cuptiActivityFlushAll"},
      {reinterpret_cast<const void*>(fn->ActivityGetNextRecord), "cuptiActivityGetNextRecord"}};
  for (const auto& [address, name] : required) {
    if (address == nullptr) {
      return Error::Unavailable("{} lacks {}", (*library)->path(), name);
    }
  }
  return std::unique_ptr<KernelRecorder>(new KernelRecorder(std::move(library).value(), std::move(fn)));
}

Status KernelRecorder::Record() {
  const auto check = [this](CUptiResult got, std::string_view call) -> Status {
    if (got == CUPTI_SUCCESS) return OkStatus();
    const char* text = nullptr;
    if (fn_->GetResultString != nullptr) fn_->GetResultString(got, &text);
    return Error::Unavailable("{}: CUPTI error {} ({})", call, static_cast<int>(got),
                              text != nullptr ? text : "no description");
  };
  {
    std::lock_guard<std::mutex> lock(Sink().mutex);
    Sink().next_record = fn_->ActivityGetNextRecord;
    Sink().kernels.clear();
  }
  if (!registered_) {
    if (Status s = check(fn_->ActivityRegisterCallbacks(BufferRequested, BufferCompleted),
                         "cuptiActivityRegisterCallbacks");
        !s.ok()) {
      return s;
    }
    registered_ = true;
  }
  return check(fn_->ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "cuptiActivityEnable");
}

Result<std::vector<KernelActivity>> KernelRecorder::Collect() {
  fn_->ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  fn_->ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::vector<KernelActivity> kernels;
  {
    std::lock_guard<std::mutex> lock(Sink().mutex);
    for (auto& [name, activity] : Sink().kernels) kernels.push_back(activity);
    Sink().kernels.clear();
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelActivity& a, const KernelActivity& b) { return a.total_ns > b.total_ns; });
  return kernels;
}

}  // namespace ofu::gpu
