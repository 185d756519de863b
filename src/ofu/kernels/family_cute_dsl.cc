// cute_dsl (kernels written in CUTLASS's Python DSL, CuTe DSL)
//   kernel_cutlass_<python function>_<its arguments, printed and squeezed>_<N>
// The DSL names a kernel "kernel_" + "cutlass_" + the Python function's name
// + each argument's text (a tensor's type and layout, an object's class),
// with punctuation removed, cut at 180 characters, and a counter appended
// (NVIDIA/cutlass python/CuTeDSL, `mangle_name` and the `kernel` launcher;
// NVIDIA/cutlass#2763). A tile is there only when the caller passed it as a
// plain argument, and where it stands is the caller's choice: ofu reads no
// field from these names. The family is named so that a reason says what the
// kernel is; whether it is a GEMM is read from its words (quack's
// `kernel_cutlass_kernel_quackgemm_default_epiGemmDefaultSm90` is,
// flash-attention's `kernel_cutlass_kernel_flash_attncuteflash_fwd_sm100...`
// is not), and a GEMM op that launched one makes it a GEMM too.
#include "ofu/kernels/family_table.h"

namespace ofu::kernels::detail {

Result<KernelInfo> ParseCuteDsl(const Tokens& /*tokens*/) {
  return Unparsed(
      "cute_dsl: a CuTe-DSL kernel (CUTLASS's Python DSL names it after the Python function and its arguments): "
      "tile and precision are not in the name");
}

}  // namespace ofu::kernels::detail
