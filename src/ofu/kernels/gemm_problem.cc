#include "ofu/kernels/gemm_problem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

namespace ofu::kernels {
namespace {

using Dims = std::vector<int64_t>;

// Sizes beyond this make FLOP counts inexact in a double; no real GEMM is near.
constexpr int64_t kMaxElements = int64_t{1} << 53;

Error Bad(std::string_view op, std::string reason) { return Error::MalformedInput("{}: {}", op, reason); }

// Product of dims[begin, end), or nullopt when it passes kMaxElements.
std::optional<int64_t> Product(const Dims& dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) {
    if (dims[i] != 0 && product > kMaxElements / dims[i]) return std::nullopt;
    product *= dims[i];
  }
  return product;
}

Result<GemmProblem> Checked(std::string_view op, GemmProblem p) {
  for (int64_t size : {p.m, p.n, p.k, p.batch}) {
    if (size < 0) return Bad(op, "negative size");
  }
  // m·n·k·batch must stay exact: check step by step.
  int64_t total = 1;
  for (int64_t size : {p.m, p.n, p.k, p.batch}) {
    if (size != 0 && total > kMaxElements / size) return Bad(op, "sizes too large (m·n·k·batch passes 2^53)");
    total *= size;
  }
  return p;
}

Result<GemmProblem> Matrices(std::string_view op, const Dims& a, const Dims& b) {
  if (a.size() != 2 || b.size() != 2) {
    return Bad(op, fmt::format("expected two 2-D matrices, got {} and {}", a, b));
  }
  if (a[1] != b[0]) return Bad(op, fmt::format("inner dimensions differ: {} and {}", a, b));
  return Checked(op, GemmProblem{a[0], b[1], a[1], 1});
}

Result<GemmProblem> Batched(std::string_view op, const Dims& a, const Dims& b) {
  if (a.size() != 3 || b.size() != 3) {
    return Bad(op, fmt::format("expected two 3-D batches of matrices, got {} and {}", a, b));
  }
  if (a[0] != b[0]) return Bad(op, fmt::format("batch sizes differ: {} and {}", a, b));
  if (a[2] != b[1]) return Bad(op, fmt::format("inner dimensions differ: {} and {}", a, b));
  return Checked(op, GemmProblem{a[1], b[2], a[2], a[0]});
}

Result<GemmProblem> Linear(std::string_view op, const Dims& x, const Dims& w) {
  if (x.empty() || w.size() != 2) {
    return Bad(op, fmt::format("expected input [..., k] and weight [n, k], got {} and {}", x, w));
  }
  if (x.back() != w[1])
    return Bad(op, fmt::format("input's last dimension {} differs from weight's {}", x.back(), w[1]));
  auto m = Product(x, 0, x.size() - 1);
  if (!m) return Bad(op, "sizes too large");
  return Checked(op, GemmProblem{*m, w[0], w[1], 1});
}

Result<GemmProblem> Matmul(std::string_view op, Dims a, Dims b) {
  if (a.empty() || b.empty()) return Bad(op, fmt::format("matmul of a scalar: {} and {}", a, b));
  if (a.size() == 1) a.insert(a.begin(), 1);  // [k] -> [1, k]
  if (b.size() == 1) b.push_back(1);          // [k] -> [k, 1]
  const int64_t k = a.back();
  if (k != b[b.size() - 2]) return Bad(op, fmt::format("inner dimensions differ: {} and {}", a, b));
  if (b.size() == 2) {
    auto m = Product(a, 0, a.size() - 1);
    if (!m) return Bad(op, "sizes too large");
    return Checked(op, GemmProblem{*m, b[1], k, 1});
  }
  // Broadcast the batch dimensions, aligned from the right.
  const size_t a_batch = a.size() - 2, b_batch = b.size() - 2;
  const size_t rank = std::max(a_batch, b_batch);
  Dims batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a_batch ? 1 : a[i - (rank - a_batch)];
    const int64_t db = i < rank - b_batch ? 1 : b[i - (rank - b_batch)];
    if (da != db && da != 1 && db != 1) {
      return Bad(op, fmt::format("batch dimensions do not broadcast: {} and {}", a, b));
    }
    batch[i] = da == 1 ? db : da;
  }
  auto batch_size = Product(batch, 0, batch.size());
  if (!batch_size) return Bad(op, "sizes too large");
  return Checked(op, GemmProblem{a[a.size() - 2], b.back(), k, *batch_size});
}

}  // namespace

Result<GemmProblem> GemmProblemFromOp(std::string_view op_name, const std::vector<Dims>& input_dims) {
  std::string_view op = op_name;
  if (op.substr(0, 6) == "aten::") op.remove_prefix(6);
  const auto need = [&](size_t count) -> std::optional<Error> {
    if (input_dims.size() >= count) return std::nullopt;
    return Bad(op_name, fmt::format("expected at least {} inputs, got {}", count, input_dims.size()));
  };
  if (op == "mm" || op == "_scaled_mm") {
    if (auto e = need(2)) return *e;
    return Matrices(op_name, input_dims[0], input_dims[1]);
  }
  if (op == "addmm") {
    if (auto e = need(3)) return *e;
    return Matrices(op_name, input_dims[1], input_dims[2]);
  }
  if (op == "bmm") {
    if (auto e = need(2)) return *e;
    return Batched(op_name, input_dims[0], input_dims[1]);
  }
  if (op == "baddbmm") {
    if (auto e = need(3)) return *e;
    return Batched(op_name, input_dims[1], input_dims[2]);
  }
  if (op == "linear") {
    if (auto e = need(2)) return *e;
    return Linear(op_name, input_dims[0], input_dims[1]);
  }
  if (op == "matmul") {
    if (auto e = need(2)) return *e;
    return Matmul(op_name, input_dims[0], input_dims[1]);
  }
  return Bad(op_name, "not a GEMM op ofu reads shapes from (mm, addmm, bmm, baddbmm, linear, _scaled_mm, matmul)");
}

std::optional<Precision> PrecisionFromTorchType(std::string_view type) {
  static constexpr std::pair<std::string_view, Precision> kTypes[] = {
      {"c10::BFloat16", Precision::kBf16},
      {"c10::Half", Precision::kFp16},
      {"float", Precision::kFp32},
      {"c10::Float8_e4m3fn", Precision::kFp8},
      {"c10::Float8_e5m2", Precision::kFp8},
      {"c10::Float8_e4m3fnuz", Precision::kFp8},
      {"c10::Float8_e5m2fnuz", Precision::kFp8},
      {"c10::Float4_e2m1fn_x2", Precision::kFp4},
      {"signed char", Precision::kInt8},
  };
  for (const auto& [name, precision] : kTypes) {
    if (type == name) return precision;
  }
  return std::nullopt;
}

}  // namespace ofu::kernels
