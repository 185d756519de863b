#include "ofu/analysis/cuda_core_advice.h"

#include <fmt/format.h>

namespace ofu::analysis {
namespace {

// The tensor precision that takes over a pipe's work.
std::string TensorPrecisionFor(CudaCorePipe pipe) {
  switch (pipe) {
    case CudaCorePipe::kFp32: return "tf32";
    case CudaCorePipe::kFp16: return "fp16";
    case CudaCorePipe::kFp64: return "fp64";
  }
  return "";
}

std::optional<double> Gain(const GpuSpec* spec, const std::optional<PipeSpec>& pipe, const std::string& precision) {
  if (spec == nullptr || !pipe) return std::nullopt;
  auto it = spec->precisions.find(precision);
  if (it == spec->precisions.end() || pipe->peak_tflops <= 0) return std::nullopt;
  return it->second.peak_tflops / pipe->peak_tflops;
}

constexpr const char* kTf32Fix =
    "enable TF32 for FP32 matmuls (torch.backends.cuda.matmul.allow_tf32 = True, or "
    "torch.set_float32_matmul_precision(\"high\")), or run the model under bf16/fp16 autocast";
constexpr const char* kFp16AutocastFix =
    "use mixed precision: run the model under torch.autocast(\"cuda\", dtype=torch.float16), with "
    "torch.cuda.amp.GradScaler when training; this GPU's tensor cores take FP16, not TF32 or bf16, so "
    "allow_tf32 changes nothing here";

}  // namespace

bool HasTf32(const GpuSpec& spec) { return spec.precisions.count("tf32") > 0; }

std::optional<std::string> AdviseSimtGemms(const CorrectionReport& report, const GpuSpec* gpu) {
  const Coverage& c = report.coverage;
  if (c.simt_kernels == 0) return std::nullopt;
  const double share = report.non_tensor_gemm_share.value_or(0);
  if (report.factor && share < 0.5) return std::nullopt;
  std::string fix;
  if (gpu == nullptr) {
    fix = std::string(kTf32Fix) +
          " (on Volta and Turing GPUs, such as V100 and T4, only fp16 autocast reaches the "
          "tensor cores: they have no TF32 or bf16)";
  } else if (HasTf32(*gpu)) {
    fix = kTf32Fix;
  } else {
    fix = fmt::format("{} ({})", kFp16AutocastFix, gpu->name);
  }
  return fmt::format(
      "{:.1f} % of GEMM time ({} kernel(s)) ran on the CUDA cores, not the tensor cores, so OFU does not count it. "
      "Recording shapes (record_shapes=True) would not change that. If they are FP32 GEMMs (sgemm kernels: a model "
      "left in fp32), what moves them to the tensor cores is a precision those take: {}.",
      100.0 * share, c.simt_kernels, fix);
}

std::optional<CudaCoreAdvice> AdviseCudaCores(const std::string& gpu, const GpuSpec* spec, const Summary& summary) {
  if (!summary.ofu || *summary.ofu >= kLowOfu) return std::nullopt;
  const std::optional<CudaCorePipe> busiest = BusiestPipe(summary.non_tensor, kBusyPipe);
  if (!busiest) return std::nullopt;
  const CudaCorePipeInfo& pipe = InfoFor(*busiest);
  static const std::optional<PipeSpec> kNone;
  const std::optional<PipeSpec>& pipe_spec = spec != nullptr && spec->non_tensor ? (*spec->non_tensor).*pipe.spec
                                                                                 : kNone;

  CudaCoreAdvice advice;
  advice.gpu = gpu;
  advice.pipe = pipe.name;
  advice.pipe_active = *summary.non_tensor[*busiest];
  advice.ofu = *summary.ofu;
  advice.tensor_precision = TensorPrecisionFor(*busiest);
  advice.gain_upper_bound = Gain(spec, pipe_spec, advice.tensor_precision);
  std::string fix;
  if (advice.pipe == "fp32" && spec != nullptr && !HasTf32(*spec)) {
    // V100, T4: no TF32 and no bf16 on the tensor cores, so fp16 it is.
    advice.tensor_precision = "fp16";
    advice.gain_upper_bound = Gain(spec, pipe_spec, advice.tensor_precision);
    fix = kFp16AutocastFix;
  } else if (advice.pipe == "fp32") {
    advice.bf16_gain_upper_bound = Gain(spec, pipe_spec, "bf16");
    fix = kTf32Fix;
  } else if (advice.pipe == "fp16") {
    fix =
        "make sure the fp16/bf16 matmuls reach tensor-core kernels (shapes multiple of 8, cuBLAS/cuDNN, not "
        "hand-written elementwise loops)";
  } else {
    fix =
        "FP64 runs on tensor cores only through DMMA-capable libraries (cuBLAS DGEMM on A100/H100); check that "
        "the FP64 math is a GEMM the library can take";
  }
  advice.text = fmt::format(
      "{}: OFU {:.3f} while the {} pipe is {:.0f}% active: the math runs on the CUDA cores, not the tensor "
      "cores. Usual fix: {}.",
      gpu, advice.ofu, pipe.label, advice.pipe_active * 100, fix);
  if (advice.gain_upper_bound) {
    advice.text += fmt::format(" Gain at most {:.1f}x ({} tensor peak over the {} CUDA-core peak",
                               *advice.gain_upper_bound, advice.tensor_precision, advice.pipe);
    if (advice.bf16_gain_upper_bound) advice.text += fmt::format("; {:.1f}x with bf16", *advice.bf16_gain_upper_bound);
    advice.text += ").";
  }
  return advice;
}

std::vector<CudaCoreAdvice> AdviseCudaCores(const Report& report) {
  std::vector<CudaCoreAdvice> out;
  for (const GpuReport& gpu : report.gpus) {
    if (auto advice = AdviseCudaCores(gpu.identity.key, gpu.spec, gpu.summary)) out.push_back(std::move(*advice));
  }
  return out;
}

}  // namespace ofu::analysis
