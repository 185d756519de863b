// The GPU spec database: what each SKU can do at its quoted peak.
//
// The data live in data/gpu_specs.json (compiled into the program; the command
// line's --spec-db reads another copy and hands its text to Parse). Each SKU lists its SM count, the
// dense FLOP per clock per SM and the vendor's dense peak for each precision,
// where the figures come from, and the model names NVML and dcgm-exporter
// report for it. The spec clock f_spec is derived, not stored:
//
//     f_spec = Peak_p / (N_SM * F_p)      for the SKU's basis precision p
//
// e.g. H100 SXM5: 989.4 TFLOPS / (132 * 4096 FLOP/clk) = 1830 MHz.
//
// Model names match only through the explicit alias list: a case-insensitive
// comparison after folding runs of white space and dropping a leading
// "NVIDIA " (older drivers omit it). There is no fuzzy matching: an unknown
// name is an error that says which file to extend.
//
// Every precision of a SKU implies the same clock (peak / (N_SM * F_p)) within
// the SKU's peak_tolerance, 1 % unless the file records a wider one with its
// reason (a vendor figure rounded further). Parse does not enforce it; the
// test suite checks the bundled file.
//
// A SKU that supports MIG lists its GPU-instance profiles ("1g.10gb",
// "3g.40gb", ...) with the SMs each instance gets; the profile names carry the
// memory size, so one SKU entry covering two memory sizes lists both sets.
//
// Non-tensor (CUDA-core) pipes. A SKU may list, under "non_tensor", the
// FP32, FP64 and FP16 (packed half2) pipes with their lanes per SM and the
// vendor's quoted peak for that pipe; a pipe no vendor figure was found for is
// absent, never guessed. A lane is one fused multiply-add per clock (2 FLOP);
// an FP16 lane is one half of a packed half2 FMA. The clock a pipe's peak is
// quoted at is derived like f_spec: peak / (SMs * lanes * 2). It is often
// not f_spec: H100 SXM5 quotes its CUDA-core peaks at 1980 MHz, its tensor
// peaks at 1830 MHz.
//
// Thread-safety: a GpuSpecDatabase is immutable after loading; share freely.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ofu/core/clock_model.h"
#include "ofu/core/result.h"

namespace ofu {

struct PrecisionSpec {
  double flops_per_clock_per_sm = 0;  // dense
  double peak_tflops = 0;             // dense, as the vendor quotes it
};

struct PipeSpec {
  int lanes_per_sm = 0;    // FMA lanes of the pipe per SM (2 FLOP per lane per clock)
  double peak_tflops = 0;  // the vendor's quoted peak for this pipe
  // The clock (MHz) the peak is quoted at: peak / (sm_count * lanes * 2).
  double QuotedClockMhz(int sm_count) const;
};

struct NonTensorSpec {
  std::optional<PipeSpec> fp64;
  std::optional<PipeSpec> fp32;
  std::optional<PipeSpec> fp16;  // packed half2, not the tensor cores
  std::string source;            // where the lanes and peaks come from
  std::string notes;
};

struct GpuSpec {
  std::string id;            // e.g. "h100-sxm5"
  std::string name;          // e.g. "H100 SXM5"
  std::string architecture;  // e.g. "hopper"
  int sm_count = 0;
  std::string basis_precision;                      // precision f_spec is derived from
  std::map<std::string, PrecisionSpec> precisions;  // keyed "tf32", "bf16", ...
  std::vector<std::string> aliases;                 // model names as drivers report them
  double k_arch = 1.0;                              // tensor clock-domain factor of the architecture
  std::string k_arch_source;
  std::string source;  // where the figures come from
  std::string notes;
  // How far (relative) a precision's implied clock may stray from f_spec: the
  // rounding of the vendor's figures. 0.01 unless the file says otherwise,
  // in which case peak_tolerance_reason says why.
  double peak_tolerance = 0.01;
  std::string peak_tolerance_reason;
  std::map<std::string, int> mig_profile_sms;  // MIG GPU-instance profile ("1g.10gb") -> its SMs
  std::string mig_source;  // where the profile SM counts come from (or why a MIG-capable SKU has none)
  // CUDA-core pipes; absent when no vendor figure for any pipe was found.
  std::optional<NonTensorSpec> non_tensor;
  // The measured relation between the reported and the run SM clock
  // (clock_model.h), with the files it comes from; absent for a SKU nobody
  // measured, never guessed.
  // It applies only to the boards it was measured on (clock_model_measured_on,
  // model names as the driver reports them): another board of the same SKU
  // entry (an H800 beside the H100) keeps the reported clock.
  std::optional<ClockModel> clock_model;
  std::vector<std::string> clock_model_measured_on;
  std::string clock_model_source;

  // f_spec in MHz, from the basis precision.
  double SpecClockMhz() const;
  // The dense peak of precision `p` ("bf16", "fp8", ...), TFLOPS; absent when
  // the SKU does not list it (or lists no positive figure).
  std::optional<double> PeakTflops(std::string_view p) const;
  // The clock (MHz) implied by precision `p`'s peak; 0 when p is not listed.
  double ImpliedClockMhz(const std::string& p) const;
  // The SMs of a MIG GPU instance of this SKU with profile `profile` as NVML/DCGM name it
  // ("1g.10gb", "3g.40gb", also with a "+me" suffix); absent when the profile is unknown.
  // Case is folded; a leading "MIG " (nvidia-smi's spelling) and any suffix
  // after the memory size ("+me", "+gfx", "+me.all", "-me") are dropped, since
  // they change the media engines of an instance, not its SMs. A compute-
  // instance profile ("1c.3g.40gb") is not a GPU-instance profile: absent.
  std::optional<int> MigSmCount(std::string_view profile) const;
  // The clock model for a board whose driver names it `model_name`: absent
  // when this SKU has none or it was not measured on that board.
  std::optional<ClockModel> ClockModelFor(std::string_view model_name) const;
};

class GpuSpecDatabase {
 public:
  // Parses the JSON text of a spec file. `source_name` names it in errors.
  static Result<GpuSpecDatabase> Parse(std::string_view json_text, std::string_view source_name);
  // The database compiled into the program from data/gpu_specs.json.
  static Result<GpuSpecDatabase> Embedded();

  // Finds the SKU for a model name as NVML reports it, or for a SKU id
  // ("h100-sxm5"). Error kUnknownModel names the spec file to extend.
  Result<const GpuSpec*> Lookup(std::string_view model_or_id) const;

  const std::vector<GpuSpec>& skus() const { return skus_; }
  const std::string& source_name() const { return source_name_; }

 private:
  std::vector<GpuSpec> skus_;
  std::string source_name_;
};

}  // namespace ofu
