// What `ofu kernels parse` shows: each kernel name with what it encodes
// (kernels/kernel_name.h), or why it was not read, and the findings against
// a GPU's architecture (kernels/kernel_throughput.h), as a table for people
// or as JSON.
//
// Thread-safety: pure functions over values.
#pragma once

#include <string>
#include <vector>

#include "ofu/core/result.h"
#include "ofu/kernels/kernel_name.h"

namespace ofu::render {

// One name as `ofu kernels parse` read it.
struct ParsedKernel {
  std::string name;
  Result<kernels::KernelInfo> info;
  kernels::KernelClass kind;          // what an unparsed name still says
  std::vector<std::string> findings;  // pre-native: what it costs, on which architecture
};

// A header, then one row per name (family, tile, stages, cluster, precision,
// tensor or simt, flags, name) and a line per finding; an unread name gets
// its reason and what the name still says.
std::string FormatKernelsTable(const std::vector<ParsedKernel>& all);

// An array, one object per name in order: "name", "parsed", "gemm", the
// fields of KernelInfo (null where the name does not give them, all null
// but "tensor_core" when not parsed, with "reason"), "truncated",
// "unknown_flags", "findings". Bytes of a name that are not UTF-8 are
// replaced, not fatal.
std::string FormatKernelsJson(const std::vector<ParsedKernel>& all);

}  // namespace ofu::render
