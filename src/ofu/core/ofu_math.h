// The OFU arithmetic, free of any I/O.
//
//     OFU = A_tensor * f_SM / f_spec * k_arch
//
// A_tensor is the 0..1 tensor-pipe activity, f_SM the mean SM clock in MHz,
// f_spec the clock behind the vendor's quoted peak (GpuSpec::SpecClockMhz)
// and k_arch the architecture's tensor clock-domain factor. The result is not
// clamped: a GPU running above f_spec reports OFU above 1.
//
// Thread-safety: pure functions, callable from any thread.
#pragma once

#include <optional>
#include <vector>

#include "ofu/core/clock_model.h"
#include "ofu/core/non_tensor.h"

namespace ofu {

struct OfuScale {
  double spec_clock_mhz = 0;  // f_spec
  double k_arch = 1.0;
  // The device's CUDA-core pipes, for the non-tensor bound beside OFU
  // (non_tensor.h); absent when the spec lists none.
  std::optional<NonTensorScale> non_tensor = std::nullopt;
  // The SKU's measured clock model (clock_model.h): absent for a SKU nobody
  // measured, whose OFU then uses the reported clock as it is.
  std::optional<ClockModel> clock_model = std::nullopt;
};

double ComputeOfu(double tensor_active, double sm_clock_mhz, const OfuScale& scale);

// The q-quantile (0 <= q <= 1) of `values` by linear interpolation between
// closest ranks (numpy's default). Precondition: values is not empty.
double Percentile(std::vector<double> values, double q);

}  // namespace ofu
