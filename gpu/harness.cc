#include "harness.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cuda_status.h"
#include "lt_gemm.h"
#include "ofu/gemm/evaluate.h"
#include "power_limit.h"

namespace ofu::gpu {
namespace {

// When the GPU reaches a point in the stream, on the host's wall clock.
struct StreamTime {
  sources::Clock* clock = nullptr;
  double seconds = 0;
};

void CUDART_CB StampTime(void* data) {
  auto* stamp = static_cast<StreamTime*>(data);
  stamp->seconds = stamp->clock->NowS();
}

// A skipped case is an error of this kind; others abort the case too but
// say the harness itself failed.
Error Skip(std::string reason) { return Error::Unavailable("{}", std::move(reason)); }

}  // namespace

Result<std::unique_ptr<Harness>> Harness::Open(const CudaDevice& device, const GpuSpec& spec,
                                               const HarnessOptions& options, sources::Clock& clock,
                                               std::unique_ptr<KernelRecorder> recorder) {
  std::unique_ptr<Harness> harness(new Harness(device, spec, options, clock));
  harness->recorder_ = std::move(recorder);
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtCreate(&harness->lt_), "cublasLtCreate"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&harness->stream_, cudaStreamNonBlocking),
                                 "cudaStreamCreate"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&harness->start_), "cudaEventCreate"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&harness->stop_), "cudaEventCreate"));
  return harness;
}

Harness::~Harness() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  if (lt_ != nullptr) cublasLtDestroy(lt_);
}

gemm::CaseResult Harness::Run(const gemm::GemmCase& c) {
  auto row = TryRun(c);
  if (row.ok()) return std::move(row).value();
  // Leave the device usable for the next case whatever happened.
  cudaStreamSynchronize(stream_);
  cudaGetLastError();
  return gemm::SkippedCase(c, device_.name, row.error().message);
}

Result<gemm::CaseResult> Harness::TryRun(const gemm::GemmCase& c) {
  if (c.precision != kernels::Precision::kFp32 && !gemm::PeakTflops(spec_, c.precision)) {
    return Skip(fmt::format("the spec database gives {} no {} peak (fp8 needs Hopper or later, fp4 Blackwell)",
                            spec_.name, kernels::PrecisionName(c.precision)));
  }
  OFU_ASSIGN_OR_RETURN(auto sampler, CounterSampler::Open(options_.sampler, device_.uuid, clock_));

  gemm::CaseRun run;
  run.gemm_case = c;
  run.gpu_model = device_.name;
  std::unique_ptr<PowerLimit> power;
  if (c.power_limit_fraction) {
    auto reduced = PowerLimit::Reduce(options_.sampler.nvml_library, sampler->device(), *c.power_limit_fraction);
    if (!reduced.ok()) return Skip("reduced power limit not set: " + reduced.error().message);
    power = std::move(reduced).value();
    run.power_limit_w = power->watts();
  }

  auto gemm = LtGemm::Create(c, lt_, stream_);
  if (!gemm.ok()) return Skip(gemm.error().message);
  run.algorithm_tiling = (*gemm)->tiling();
  if ((*gemm)->split_k() > 1) run.note = fmt::format("algorithm splits K in {}", (*gemm)->split_k());

  // Warm-up, recording which kernels it launches.
  if (recorder_ != nullptr) {
    if (Status s = recorder_->Record(); !s.ok()) run.note += (run.note.empty() ? "" : "; ") + s.error().message;
  }
  OFU_RETURN_IF_ERROR((*gemm)->Enqueue(options_.warmup_iterations));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaStreamSynchronize(stream_), "warm-up"));
  if (recorder_ != nullptr) {
    auto kernels = recorder_->Collect();
    if (kernels.ok() && !kernels->empty()) {
      run.kernel_name = kernels->front().name;
      for (std::size_t i = 1; i < kernels->size(); ++i) {
        run.note += fmt::format("{}also launched {} ({}x)", run.note.empty() ? "" : "; ", (*kernels)[i].name,
                                (*kernels)[i].launches);
      }
    }
  } else {
    run.note += std::string(run.note.empty() ? "" : "; ") + "no CUPTI: kernel name not recorded";
  }

  // Calibration: size the steady loop.
  cudaEventRecord(start_, stream_);
  OFU_RETURN_IF_ERROR((*gemm)->Enqueue(options_.calibration_iterations));
  cudaEventRecord(stop_, stream_);
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventSynchronize(stop_), "calibration"));
  float calibration_ms = 0;
  cudaEventElapsedTime(&calibration_ms, start_, stop_);
  const double per_iteration_s = std::max(1e-7, calibration_ms / 1e3 / options_.calibration_iterations);
  const auto needed = static_cast<int64_t>(std::ceil(c.min_seconds / per_iteration_s));
  run.measurement.iterations = std::max<int64_t>({c.min_iterations, needed, 1});

  // The steady loop, with counters sampled alongside.
  StreamTime began{&clock_, 0}, ended{&clock_, 0};
  sampler->Start();
  cudaLaunchHostFunc(stream_, StampTime, &began);
  cudaEventRecord(start_, stream_);
  Status enqueued = (*gemm)->Enqueue(run.measurement.iterations);
  cudaEventRecord(stop_, stream_);
  cudaLaunchHostFunc(stream_, StampTime, &ended);
  const Status finished = CudaStatus(cudaStreamSynchronize(stream_), "steady loop");
  std::string sampler_note;
  run.measurement.windows = sampler->Stop(began.seconds, ended.seconds, sampler_note);
  if (!enqueued.ok()) return enqueued.error();
  if (!finished.ok()) return finished.error();
  float loop_ms = 0;
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&loop_ms, start_, stop_), "cudaEventElapsedTime"));
  run.measurement.elapsed_s = loop_ms / 1e3;
  if (!sampler_note.empty()) run.note += (run.note.empty() ? "" : "; ") + sampler_note;
  return gemm::EvaluateCase(run, spec_);
}

}  // namespace ofu::gpu
