#include "harness.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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

// How much of the steady loop runs between two checkpoints (see TryRun).
constexpr double kCheckpointPeriodS = 0.1;

// A skipped case is an error of this kind; others abort the case too but
// say the harness itself failed.
Error Skip(std::string reason) { return Error::Unavailable("{}", std::move(reason)); }

}  // namespace

Result<std::unique_ptr<Harness>> Harness::Open(const CudaDevice& device, const GpuSpec& spec,
                                               const HarnessOptions& options, sources::Clock& clock,
                                               std::unique_ptr<KernelRecorder> recorder) {
  std::unique_ptr<Harness> harness(new Harness(device, spec, options, clock));
  harness->recorder_ = std::move(recorder);
  OFU_ASSIGN_OR_RETURN(harness->throughput_, kernels::KernelThroughputTable::Embedded());
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtCreate(&harness->lt_), "cublasLtCreate"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaStreamCreateWithFlags(&harness->stream_, cudaStreamNonBlocking),
                                 "cudaStreamCreate"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&harness->start_), "cudaEventCreate"));
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventCreate(&harness->stop_), "cudaEventCreate"));
  // Twice as many probe blocks as SMs, so that every SM runs one.
  harness->probe_blocks_ = 2 * std::max(device.sm_count, 1);
  if (cudaMalloc(reinterpret_cast<void**>(&harness->probe_records_),
                 2 * static_cast<std::size_t>(harness->probe_blocks_) * sizeof(DeviceProbeRecord)) != cudaSuccess) {
    harness->probe_records_ = nullptr;
    cudaGetLastError();
  }
  return harness;
}

Harness::~Harness() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  if (lt_ != nullptr) cublasLtDestroy(lt_);
  if (probe_records_ != nullptr) cudaFree(probe_records_);
}

void Harness::CollectProbes(gemm::Measurement& measurement, std::string& note) {
  if (probe_records_ == nullptr) {
    note += std::string(note.empty() ? "" : "; ") + "no clock probe buffer: the SMs' own clock not measured";
    return;
  }
  std::vector<DeviceProbeRecord> host(2 * static_cast<std::size_t>(probe_blocks_));
  const cudaError_t copied = cudaMemcpy(host.data(), probe_records_, host.size() * sizeof(DeviceProbeRecord),
                                        cudaMemcpyDeviceToHost);
  if (copied != cudaSuccess) {
    note += fmt::format("{}clock probe records not read: {}", note.empty() ? "" : "; ", cudaGetErrorString(copied));
    return;
  }
  for (int launch = 0; launch < 2; ++launch) {
    gemm::ProbeLaunch records;
    for (int b = 0; b < probe_blocks_; ++b) {
      const DeviceProbeRecord& r = host[static_cast<std::size_t>(launch) * static_cast<std::size_t>(probe_blocks_) +
                                        static_cast<std::size_t>(b)];
      records.push_back(gemm::ProbeRecord{static_cast<int>(r.sm), r.cycles, r.global_ns});
    }
    measurement.probes.push_back(std::move(records));
  }
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

  // The steady loop, with counters sampled alongside. It is enqueued in
  // chunks of about kCheckpointPeriodS each followed by a host timestamp,
  // so that the MFU can be taken over exactly the counter windows' span
  // (gemm/evaluate.h). A host function stalls the stream until it has run
  // (typically tens of µs); at ten per second that is well under 0.1 % of
  // the loop, and the stall lies in both the MFU and the counters alike.
  // Finer checkpoints would add little: a window is 0.25 s, and within
  // 0.1 s the rate is interpolated linearly.
  const int64_t total = run.measurement.iterations;
  const int64_t chunk = std::clamp<int64_t>(static_cast<int64_t>(kCheckpointPeriodS / per_iteration_s), 1, total);
  const int64_t chunks = (total + chunk - 1) / chunk;
  // One stamp per chunk boundary plus the loop's start and end; sized
  // before the first launch, so the addresses the callbacks write to stay put.
  std::vector<StreamTime> stamps(static_cast<std::size_t>(chunks) + 1, StreamTime{&clock_, 0});
  std::vector<int64_t> done(stamps.size(), 0);
  sampler->Start();
  // The clock probe just before the loop, and (below) just after it.
  bool probed = probe_records_ != nullptr && LaunchClockProbe(probe_records_, probe_blocks_, stream_) == cudaSuccess;
  Status enqueued = CudaStatus(cudaLaunchHostFunc(stream_, StampTime, &stamps[0]), "cudaLaunchHostFunc");
  cudaEventRecord(start_, stream_);
  for (int64_t i = 1; i <= chunks && enqueued.ok(); ++i) {
    const int64_t n = std::min(chunk, total - done[static_cast<std::size_t>(i - 1)]);
    enqueued = (*gemm)->Enqueue(n);
    done[static_cast<std::size_t>(i)] = done[static_cast<std::size_t>(i - 1)] + n;
    if (i == chunks) cudaEventRecord(stop_, stream_);  // the last stamp is the loop's end
    if (enqueued.ok()) {
      enqueued = CudaStatus(cudaLaunchHostFunc(stream_, StampTime, &stamps[static_cast<std::size_t>(i)]),
                            "cudaLaunchHostFunc");
    }
  }
  probed = probed && enqueued.ok() &&
           LaunchClockProbe(probe_records_ + probe_blocks_, probe_blocks_, stream_) == cudaSuccess;
  const Status finished = CudaStatus(cudaStreamSynchronize(stream_), "steady loop");
  std::string sampler_note;
  run.measurement.windows = sampler->Stop(stamps.front().seconds, stamps.back().seconds, sampler_note);
  if (!enqueued.ok()) return enqueued.error();
  if (!finished.ok()) return finished.error();
  for (std::size_t i = 0; i < stamps.size(); ++i) {
    run.measurement.checkpoints.push_back(gemm::LoopCheckpoint{stamps[i].seconds, done[i]});
  }
  float loop_ms = 0;
  OFU_RETURN_IF_ERROR(CudaStatus(cudaEventElapsedTime(&loop_ms, start_, stop_), "cudaEventElapsedTime"));
  run.measurement.elapsed_s = loop_ms / 1e3;
  if (probed) {
    CollectProbes(run.measurement, run.note);
  } else {
    cudaGetLastError();
    run.note += std::string(run.note.empty() ? "" : "; ") +
                "the clock probe did not launch: the SMs' own clock not measured";
  }
  if (!sampler_note.empty()) run.note += (run.note.empty() ? "" : "; ") + sampler_note;
  return gemm::EvaluateCase(run, spec_, throughput_ ? &*throughput_ : nullptr);
}

}  // namespace ofu::gpu
