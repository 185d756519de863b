#include "ofu/formats/kernel_trace.h"

#include <array>

namespace ofu::formats {

bool IsGemmOpName(std::string_view op_name) {
  constexpr std::string_view kPrefix = "aten::";
  if (op_name.substr(0, kPrefix.size()) == kPrefix) op_name.remove_prefix(kPrefix.size());
  static constexpr std::array<std::string_view, 7> kGemmOps = {"mm",     "addmm",      "bmm",   "baddbmm",
                                                               "linear", "_scaled_mm", "matmul"};
  for (std::string_view gemm : kGemmOps) {
    if (op_name == gemm) return true;
  }
  return false;
}

bool IsGraphLaunchName(std::string_view api_name) {
  for (std::string_view call : {std::string_view("cudaGraphLaunch"), std::string_view("cuGraphLaunch")}) {
    if (!api_name.starts_with(call)) continue;
    const std::string_view rest = api_name.substr(call.size());
    if (rest.empty() || rest.front() == '_') return true;  // "_v10000", "_ptsz"
  }
  return false;
}

}  // namespace ofu::formats
