#include "kernels_command.h"

#include <iostream>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "format_flag.h"
#include "ofu/cli/exit_codes.h"
#include "ofu/cli/spec_db.h"
#include "ofu/kernels/kernel_name.h"
#include "ofu/kernels/kernel_throughput.h"
#include "ofu/render/kernels_output.h"

namespace ofu::cli {
namespace {

constexpr const char* kKernelsHelp = R"(Read GEMM kernel names (cuBLAS and CUTLASS).

Run 'ofu kernels parse --help' for details.)";

constexpr const char* kParseHelp = R"(Read what GEMM kernel names encode: family, tile MxNxK, stages, cluster
MxN, input precision, whether tensor cores run the kernel, split-K and 2-CTA.

Families: nvjet_* (cuBLAS), sm90_xmma_*, sm100_*, sm80_xmma_*, ampere_*,
turing_*, volta_* (cuBLAS and cuDNN), cutlass_* (CUTLASS 2.x), cutlass3x_*
(CUTLASS 3.x), and the untiled SIMT kernels gemv*, gemmk1_kernel,
gemmSN_*, sgemm_largek_lds64, magma_*gemm*, *_convolve_sgemm and fermi*gemm*,
TensorRT-LLM's bmm_*/gemm_*, and DeepGEMM's deep_gemm::fp8_gemm_kernel<...>,
sm90_fp8_gemm_1d2d_impl<...>, sm100_fp8_gemm_1d1d_impl<...> (and dpsk::gemm::)
read from their template arguments, with the grouped MoE kind. A
demangled or mangled signature that names one of these also works. A field
the name does not encode is shown as '-' (null in JSON), never a default;
a name ofu cannot read is reported as unparsed with the reason, and with
whether it still names a GEMM and on which unit, when the name tells. The
meanings of the cuBLAS-internal names are inferred, not documented
(docs/kernels.md).

A kernel built for an older architecture than the GPU it runs on (cuBLAS
runs cutlass_75_tensorop_bf16_s1688gemm_* on an H100 when a dimension is
not a multiple of 8) issues that architecture's MMA instructions, which do
fewer FLOPs per tensor-active cycle, so OFU reads high. Such a kernel gets a
finding: against the GPU of --gpu-model, else against every architecture
data/kernel_throughput.json has a measured figure for.

NAME '-' reads names from standard input, one per line.

Examples:
  ofu kernels parse nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT
  ofu kernels parse --format json ampere_sgemm_128x64_nn
  ofu kernels parse 'void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_nn_align8>(...)'
  ofu kernels parse --gpu-model h100-sxm5 'cutlass_75_tensorop_bf16_s1688gemm_bf16_256x128_nn_align1'
  ofu kernels parse - < kernel-names.txt

Exit status: 0 when every name parsed, 2 when any did not (all are still
printed), 1 usage.)";

// Against the GPU of --gpu-model when given, else every architecture with a
// measured figure (kernels/kernel_throughput.h).
void AddFindings(const kernels::KernelThroughputTable& table, const GpuSpec* gpu, render::ParsedKernel& parsed) {
  if (!parsed.info.ok()) return;
  if (const std::string_view vendor = kernels::FamilyVendor(parsed.info->family); vendor != "NVIDIA") {
    parsed.findings.push_back(fmt::format(
        "a kernel of {} GPUs: OFU as ofu computes it (NVIDIA's tensor-pipe counters and peaks) is defined for NVIDIA "
        "tensor cores, so ofu reads its name but corrects no OFU with it",
        vendor));
    return;
  }
  if (gpu == nullptr) {
    parsed.findings = kernels::PreNativeFindingsWhereMeasured(table, *parsed.info);
  } else if (auto finding = kernels::PreNativeFinding(table, *parsed.info, gpu->architecture, gpu->name)) {
    parsed.findings.push_back(std::move(*finding));
  }
}

std::string Trim(std::string_view text) {
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  const auto end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

std::vector<std::string> CollectNames(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const std::string& arg : args) {
    if (arg != "-") {
      names.push_back(arg);
      continue;
    }
    for (std::string line; std::getline(std::cin, line);) {
      std::string name = Trim(line);
      if (!name.empty()) names.push_back(std::move(name));
    }
  }
  return names;
}

}  // namespace

void AddKernelsFlags(CLI::App& cmd, KernelsArgs& args) {
  cmd.description(kKernelsHelp);
  cmd.require_subcommand(1);
  CLI::App* parse = cmd.add_subcommand("parse", "Read tile, cluster, precision from GEMM kernel names");
  parse->description(kParseHelp);
  parse->add_option("names", args.names, "Kernel names; '-' reads them from stdin, one per line")->required();
  AddFormatFlag(*parse, args.format, {render::OutputFormat::kTable, render::OutputFormat::kJson},
                "Output: table or json");
  AddGpuModelFlag(*parse, args.gpu_model,
                  "Judge each kernel against this GPU: is it built for an older architecture, and what does that "
                  "cost");
  AddSpecDbFlag(*parse, args.spec_db);
}

Result<int> RunKernels(const KernelsArgs& args) {
  OFU_ASSIGN_OR_RETURN(const GpuSpecDatabase specs, LoadSpecDatabase(args.spec_db));
  OFU_ASSIGN_OR_RETURN(const GpuSpec* const gpu, ResolveGpuModel(specs, args.gpu_model));
  OFU_ASSIGN_OR_RETURN(const kernels::KernelThroughputTable table, kernels::KernelThroughputTable::Embedded());
  std::vector<render::ParsedKernel> all;
  for (std::string& name : CollectNames(args.names)) {
    auto info = kernels::ParseKernelName(name);
    auto kind = kernels::ClassifyKernelName(name);
    all.push_back(render::ParsedKernel{std::move(name), std::move(info), std::move(kind), {}});
    AddFindings(table, gpu, all.back());
  }
  if (all.empty()) return Error::InvalidArgument("no kernel names given (standard input was empty)");
  bool all_parsed = true;
  for (const render::ParsedKernel& parsed : all) all_parsed = all_parsed && parsed.info.ok();

  fmt::print("{}", args.format == render::OutputFormat::kJson ? render::FormatKernelsJson(all)
                                                              : render::FormatKernelsTable(all));
  return all_parsed ? kExitOk : kExitBadInput;
}

}  // namespace ofu::cli
