#include "lt_gemm.h"

#include <charconv>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "cuda_status.h"
#include "fill.h"

namespace ofu::gpu {
namespace {

using kernels::Precision;

struct TypeChoice {
  cudaDataType_t ab, d;
  cublasComputeType_t compute;
  FillKind fill;
  double bytes_per_element;  // of A and B
};

TypeChoice TypesFor(Precision p) {
  switch (p) {
    case Precision::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, FillKind::kFloat16, 2};
    case Precision::kBf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, FillKind::kBfloat16, 2};
    case Precision::kTf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, FillKind::kFloat32, 4};
    case Precision::kFp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, FillKind::kFp8E4M3, 1};
    case Precision::kFp4: return {CUDA_R_4F_E2M1, CUDA_R_16BF, CUBLAS_COMPUTE_32F, FillKind::kRandomBytes, 0.5};
    case Precision::kFp32:
    case Precision::kInt8: break;
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, FillKind::kFloat32, 4};
}

int64_t RoundUp(int64_t value, int64_t step) { return (value + step - 1) / step * step; }

// "128x256" → {128, 256}; "64xAUTO" → {64, absent}.
std::pair<std::optional<int>, std::optional<int>> TwoDims(std::string_view text) {
  const std::size_t x = text.find('x');
  std::pair<std::optional<int>, std::optional<int>> out;
  int value = 0;
  if (auto r = std::from_chars(text.data(), text.data() + x, value); r.ec == std::errc()) out.first = value;
  if (x != std::string_view::npos) {
    std::string_view rest = text.substr(x + 1);
    rest = rest.substr(0, rest.find('x'));
    if (auto r = std::from_chars(rest.data(), rest.data() + rest.size(), value);
        r.ec == std::errc() && r.ptr == rest.data() + rest.size()) {
      out.second = value;
    }
  }
  return out;
}

// The enum names of the toolkit's header, generated at configure time.
std::string_view TileName(uint32_t id) {
  switch (id) {
#define OFU_LT_TILE(name, text) \
  case name:                    \
    return text;
#define OFU_LT_STAGE(name, text)
#define OFU_LT_CLUSTER(name, text)
#include "cublaslt_ids.inc"
#undef OFU_LT_TILE
#undef OFU_LT_STAGE
#undef OFU_LT_CLUSTER
    default: return "";
  }
}

std::string_view StageName(uint32_t id) {
  switch (id) {
#define OFU_LT_TILE(name, text)
#define OFU_LT_STAGE(name, text) \
  case name:                     \
    return text;
#define OFU_LT_CLUSTER(name, text)
#include "cublaslt_ids.inc"
#undef OFU_LT_TILE
#undef OFU_LT_STAGE
#undef OFU_LT_CLUSTER
    default: return "";
  }
}

std::string_view ClusterName(uint32_t id) {
  switch (id) {
#define OFU_LT_TILE(name, text)
#define OFU_LT_STAGE(name, text)
#define OFU_LT_CLUSTER(name, text) \
  case name:                       \
    return text;
#include "cublaslt_ids.inc"
#undef OFU_LT_TILE
#undef OFU_LT_STAGE
#undef OFU_LT_CLUSTER
    default: return "";
  }
}

template <typename T>
std::optional<T> AlgoConfig(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  T value{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value), &written) !=
          CUBLAS_STATUS_SUCCESS ||
      written != sizeof(value)) {
    return std::nullopt;
  }
  return value;
}

Status Allocate(void** out, double bytes, std::string_view what) {
  const auto size = static_cast<std::size_t>(std::llround(bytes));
  return CudaStatus(cudaMalloc(out, size), fmt::format("cudaMalloc({} bytes for {})", size, what));
}

}  // namespace

Result<std::unique_ptr<LtGemm>> LtGemm::Create(const gemm::GemmCase& gemm_case, cublasLtHandle_t handle,
                                               cudaStream_t stream) {
  std::unique_ptr<LtGemm> gemm(new LtGemm());
  gemm->handle_ = handle;
  gemm->stream_ = stream;
  OFU_RETURN_IF_ERROR(gemm->Build(gemm_case));
  return gemm;
}

Status LtGemm::Build(const gemm::GemmCase& c) {
  const TypeChoice types = TypesFor(c.precision);
  const bool transpose_a = c.layout[0] == 't';
  const bool transpose_b = c.layout[1] == 't';
  // Stored shapes, column-major: op(A) is M×K, op(B) K×N, D M×N.
  const int64_t a_rows = transpose_a ? c.k : c.m, a_cols = transpose_a ? c.m : c.k;
  const int64_t b_rows = transpose_b ? c.n : c.k, b_cols = transpose_b ? c.k : c.n;
  const int64_t lda = RoundUp(a_rows, 32), ldb = RoundUp(b_rows, 32), ldd = RoundUp(c.m, 32);
  const double d_bytes_per_element = types.d == CUDA_R_32F ? 4 : 2;

  OFU_RETURN_IF_ERROR(Allocate(&a_, static_cast<double>(lda * a_cols) * types.bytes_per_element, "A"));
  OFU_RETURN_IF_ERROR(Allocate(&b_, static_cast<double>(ldb * b_cols) * types.bytes_per_element, "B"));
  OFU_RETURN_IF_ERROR(Allocate(&d_, static_cast<double>(ldd * c.n) * d_bytes_per_element, "D"));
  OFU_RETURN_IF_ERROR(Allocate(&workspace_, static_cast<double>(kWorkspaceBytes), "the workspace"));
  const auto elements = [](int64_t ld, int64_t cols, double bytes_per_element) {
    // Packed fp4 is filled byte by byte.
    return static_cast<std::size_t>(static_cast<double>(ld * cols) * (bytes_per_element < 1 ? bytes_per_element : 1));
  };
  OFU_RETURN_IF_ERROR(CudaStatus(FillDevice(a_, elements(lda, a_cols, types.bytes_per_element), types.fill, 1, stream_),
                                 "fill A"));
  OFU_RETURN_IF_ERROR(CudaStatus(FillDevice(b_, elements(ldb, b_cols, types.bytes_per_element), types.fill, 2, stream_),
                                 "fill B"));

  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescCreate(&op_, types.compute, CUDA_R_32F), "cublasLtMatmulDescCreate"));
  const cublasOperation_t op_a = transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)),
                               "set TRANSA"));
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)),
                               "set TRANSB"));
  if (c.precision == Precision::kFp4) {
    // One UE4M3 scale per 16 elements along K, in cuBLASLt's tiled layout:
    // rows padded to 128, scale columns to 4.
    const cublasLtMatmulMatrixScale_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode,
                                                                sizeof(mode)),
                                 "set A_SCALE_MODE"));
    OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode,
                                                                sizeof(mode)),
                                 "set B_SCALE_MODE"));
    const int64_t k_blocks = RoundUp((c.k + 15) / 16, 4);
    const auto a_scales = static_cast<std::size_t>(RoundUp(c.m, 128) * k_blocks);
    const auto b_scales = static_cast<std::size_t>(RoundUp(c.n, 128) * k_blocks);
    OFU_RETURN_IF_ERROR(Allocate(&a_scale_, static_cast<double>(a_scales), "A's scales"));
    OFU_RETURN_IF_ERROR(Allocate(&b_scale_, static_cast<double>(b_scales), "B's scales"));
    OFU_RETURN_IF_ERROR(CudaStatus(FillDevice(a_scale_, a_scales, FillKind::kScaleOne, 0, stream_), "fill A's scales"));
    OFU_RETURN_IF_ERROR(CudaStatus(FillDevice(b_scale_, b_scales, FillKind::kScaleOne, 0, stream_), "fill B's scales"));
    OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale_,
                                                                sizeof(a_scale_)),
                                 "set A_SCALE_POINTER"));
    OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale_,
                                                                sizeof(b_scale_)),
                                 "set B_SCALE_POINTER"));
  }

  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatrixLayoutCreate(&a_layout_, types.ab, static_cast<uint64_t>(a_rows),
                                                          static_cast<uint64_t>(a_cols), lda),
                               "layout A"));
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatrixLayoutCreate(&b_layout_, types.ab, static_cast<uint64_t>(b_rows),
                                                          static_cast<uint64_t>(b_cols), ldb),
                               "layout B"));
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatrixLayoutCreate(&d_layout_, types.d, static_cast<uint64_t>(c.m),
                                                          static_cast<uint64_t>(c.n), ldd),
                               "layout D"));

  cublasLtMatmulPreference_t preference = nullptr;
  OFU_RETURN_IF_ERROR(LtStatus(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate"));
  const std::size_t workspace = kWorkspaceBytes;
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof(workspace));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t asked = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_layout_, b_layout_, d_layout_, d_layout_,
                                                              preference, 1, &heuristic, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  OFU_RETURN_IF_ERROR(LtStatus(asked, "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0) {
    return Error::Unavailable("cublasLtMatmulAlgoGetHeuristic: no algorithm for this shape, layout and precision");
  }
  algo_ = heuristic.algo;

  if (auto id = AlgoConfig<uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_TILE_ID)) {
    const auto [m, n] = TwoDims(TileName(*id));
    tiling_.tile_m = m;
    tiling_.tile_n = n;
  }
  if (auto id = AlgoConfig<uint32_t>(algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID)) {
    const auto [k, stages] = TwoDims(StageName(*id));
    tiling_.tile_k = k;
    tiling_.stages = stages;
  }
  if (auto id = AlgoConfig<uint16_t>(algo_, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)) {
    const auto [cm, cn] = TwoDims(ClusterName(*id));
    tiling_.cluster_m = cm;
    tiling_.cluster_n = cn;
  }
  if (auto splits = AlgoConfig<int32_t>(algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM); splits && *splits > 1)
    split_k_ = *splits;
  return CudaStatus(cudaStreamSynchronize(stream_), "fill operands");
}

Status LtGemm::Enqueue(int64_t iterations) {
  for (int64_t i = 0; i < iterations; ++i) {
    const cublasStatus_t ran = cublasLtMatmul(handle_, op_, &alpha_, a_, a_layout_, b_, b_layout_, &beta_, d_,
                                              d_layout_, d_, d_layout_, &algo_, workspace_, kWorkspaceBytes, stream_);
    if (ran != CUBLAS_STATUS_SUCCESS) return LtStatus(ran, "cublasLtMatmul");
  }
  return OkStatus();
}

LtGemm::~LtGemm() {
  // Teardown cannot report errors to anyone; each call is independent.
  if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
  if (b_layout_ != nullptr) cublasLtMatrixLayoutDestroy(b_layout_);
  if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
  if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
  for (void* p : {a_, b_, d_, a_scale_, b_scale_, workspace_}) {
    if (p != nullptr) cudaFree(p);
  }
}

}  // namespace ofu::gpu
