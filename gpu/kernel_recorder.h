// The names of the kernels a stretch of GPU work launched, from CUPTI
// activity records (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL).
//
// CUPTI is never linked: Open() loads it with dlopen (sources/
// dynamic_library.h) from the candidates given, newest soname first, and
// resolves the five functions used into a table. Without CUPTI the harness
// still runs; rows then have no kernel name (and no name tiling).
//
// Record() enables kernel activity; Collect() flushes, disables it and
// returns each distinct kernel name with its launches and total time. Only
// the warm-up iterations are recorded, so that the activity buffers add no
// overhead to the timed loop.
//
// Thread-safety: one recorder per process, used from one thread. CUPTI's
// buffer-completion callback carries no user pointer, so the records it
// delivers go through one process-wide sink guarded by a mutex (the only
// shared state in ofu-gemm, forced by CUPTI's API).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/platform/dynamic_library.h"

namespace ofu::gpu {

struct KernelActivity {
  std::string name;
  int64_t launches = 0;
  double total_ns = 0;
};

struct CuptiFunctions;

class KernelRecorder {
 public:
  // Errors: kUnavailable naming every path tried, or the missing symbol.
  static Result<std::unique_ptr<KernelRecorder>> Open(const std::vector<std::string>& candidates);
  ~KernelRecorder();
  KernelRecorder(const KernelRecorder&) = delete;
  KernelRecorder& operator=(const KernelRecorder&) = delete;

  const std::string& path() const { return library_->path(); }

  Status Record();
  // Kernels seen since Record(), the longest total time first.
  Result<std::vector<KernelActivity>> Collect();

 private:
  KernelRecorder(std::unique_ptr<platform::DynamicLibrary> library, std::unique_ptr<CuptiFunctions> fn);
  std::unique_ptr<platform::DynamicLibrary> library_;
  std::unique_ptr<CuptiFunctions> fn_;
  bool registered_ = false;
};

// Where CUPTI is looked for: `flag` when given, else the soname and the
// toolkit's two usual directories under `cuda_library_dir`'s toolkit.
std::vector<std::string> CuptiCandidates(const std::string& flag, const std::string& cuda_library_dir);

}  // namespace ofu::gpu
