#include "ofu/analysis/correction.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace ofu::analysis {
namespace {

using kernels::KernelInfo;
using kernels::PaddedDim;
using kernels::PaddedGemm;
using kernels::Precision;

class RateTable {
 public:
  explicit RateTable(const GpuSpec* gpu) : gpu_(gpu) {}

  double RelativeRate(Precision p) {
    if (auto it = cache_.find(p); it != cache_.end()) return it->second;
    double rate = GenericRelativeRate(p).value_or(0.5);  // fp32 is not reached: on tensor cores it is tf32
    bool from_spec = false;
    if (gpu_ != nullptr) {
      auto bf16 = gpu_->precisions.find("bf16");
      auto own = gpu_->precisions.find(std::string(kernels::PrecisionName(p)));
      if (bf16 != gpu_->precisions.end() && own != gpu_->precisions.end() && bf16->second.flops_per_clock_per_sm > 0) {
        rate = own->second.flops_per_clock_per_sm / bf16->second.flops_per_clock_per_sm;
        from_spec = true;
      }
    }
    if (!from_spec) {
      notes_.push_back(gpu_ == nullptr
                           ? fmt::format("{} tensor rate: the generic {}x bf16 (no GPU model known; pass --gpu-model)",
                                         kernels::PrecisionName(p), rate)
                           : fmt::format("{} tensor rate: the generic {}x bf16 ({} lists no {} figure)",
                                         kernels::PrecisionName(p), rate, gpu_->name, kernels::PrecisionName(p)));
    }
    cache_.emplace(p, rate);
    return rate;
  }

  std::vector<std::string> TakeNotes() { return std::move(notes_); }

 private:
  const GpuSpec* gpu_;
  std::map<Precision, double> cache_;
  std::vector<std::string> notes_;
};

// Counts left-out kernels by reason, keeping the first example of each.
class LeftOutCounter {
 public:
  void Add(std::string_view reason, double time_us, const std::string& name, std::string_view detail = {}) {
    auto [it, inserted] = index_.try_emplace(std::string(reason), rows_.size());
    if (inserted) {
      rows_.push_back(LeftOut{std::string(reason), 0, 0, detail.empty() ? name : fmt::format("{} ({})", name, detail)});
    }
    rows_[it->second].kernels += 1;
    rows_[it->second].time_us += time_us;
  }
  std::vector<LeftOut> Take() {
    std::stable_sort(rows_.begin(), rows_.end(),
                     [](const LeftOut& a, const LeftOut& b) { return a.time_us > b.time_us; });
    return std::move(rows_);
  }

 private:
  std::map<std::string, size_t> index_;
  std::vector<LeftOut> rows_;
};

std::optional<Precision> PrecisionOf(const KernelInfo& info, const formats::FrameworkOp& op) {
  std::optional<Precision> p = info.precision;
  if (!p) {
    for (const std::string& type : op.input_types) {
      if ((p = kernels::PrecisionFromTorchType(type))) break;
    }
  }
  // Tensor cores have no fp32 mode: fp32 inputs on tensor cores run as tf32.
  if (p == Precision::kFp32 && info.tensor_core == true) p = Precision::kTf32;
  return p;
}

// "N = 4097 pads to 4608 with 256-wide tiles in clusters of 2; make N a
// multiple of 512", for each padded dimension, worst first.
std::string Advice(const PaddedGemm& padded, kernels::TileOrientation orientation) {
  const bool swapped = orientation == kernels::TileOrientation::kSwapped;
  struct Named {
    const char* label;
    const PaddedDim* dim;
    bool rows;  // the framework's M: its rows are usually tokens
  };
  std::vector<Named> dims = {
      {swapped ? "N" : "M", &padded.m, !swapped}, {swapped ? "M" : "N", &padded.n, swapped}, {"K", &padded.k, false}};
  const auto ratio = [](const PaddedDim& d) {
    return d.size == 0 ? 1.0 : static_cast<double>(d.padded) / static_cast<double>(d.size);
  };
  std::stable_sort(dims.begin(), dims.end(),
                   [&](const Named& a, const Named& b) { return ratio(*a.dim) > ratio(*b.dim); });
  std::vector<std::string> parts;
  for (const Named& named : dims) {
    const PaddedDim& d = *named.dim;
    if (d.padded == d.size) continue;
    std::string tiles = fmt::format("{}-{} tiles", d.tile, named.label[0] == 'K' ? "deep" : "wide");
    if (d.cluster > 1) tiles += fmt::format(" in clusters of {}", d.cluster);
    std::string part = fmt::format("{} = {} pads to {} with {}; make {} a multiple of {}", named.label, d.size,
                                   d.padded, tiles, named.label, d.step);
    if (named.rows && d.size < d.step) part += " or batch more rows per GEMM";
    parts.push_back(std::move(part));
  }
  std::string advice;
  for (size_t i = 0; i < parts.size(); ++i) advice += (i == 0 ? "" : "; ") + parts[i];
  return advice;
}

struct GroupKey {
  uint32_t name_id;
  std::string op_name;
  int64_t m, n, k, batch;
  Precision precision;
  auto Tie() const { return std::tie(name_id, op_name, m, n, k, batch, precision); }
  bool operator<(const GroupKey& other) const { return Tie() < other.Tie(); }
};

struct Group {
  PaddedGemm padded;
  kernels::KernelGeneration generation;
  int64_t launches = 0;
  double executed_time = 0;  // Σ E/(R·t): tensor time
  double wasted_time = 0;    // Σ (E−U)/(R·t): tensor time on padding
  double native_time = 0;    // Σ E/R: what a native kernel would take
};

// The dimensions of `problem` that are not multiples of the alignment that
// lets cuBLAS choose the GPU's own kernels: "K = 8191".
std::vector<std::string> Unaligned(const kernels::GemmProblem& problem, Precision precision) {
  const int64_t step = kernels::NativeAlignment(precision);
  std::vector<std::string> out;
  for (const auto& [label, size] : {std::pair{"M", problem.m}, std::pair{"N", problem.n}, std::pair{"K", problem.k}}) {
    if (size % step != 0) out.push_back(fmt::format("{} = {}", label, size));
  }
  return out;
}

std::string JoinAnd(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return out;
}

std::string ArchName(int sm) {
  switch (sm) {
    case 70: return "Volta";
    case 75: return "Turing";
    case 80: return "Ampere";
    case 90: return "Hopper";
    case 100: return "Blackwell";
    default: return fmt::format("sm{}", sm);
  }
}

// " (the pre-native families measured on hopper did 0.47-0.67 of ...)", or
// "" when none is measured there.
std::string MeasuredRange(const kernels::KernelThroughputTable& table, const std::string& architecture) {
  std::optional<double> low, high;
  for (const kernels::ThroughputFigure& figure : table.figures()) {
    if (figure.architecture != architecture) continue;
    low = std::min(low.value_or(figure.relative_throughput), figure.relative_throughput);
    high = std::max(high.value_or(figure.relative_throughput), figure.relative_throughput);
  }
  if (!low) return "";
  return fmt::format(
      " (the pre-native families measured on {} did {:.2f}-{:.2f} of the native FLOPs per "
      "tensor-active cycle)",
      architecture, *low, *high);
}

// The finding for a person: which dimensions, that cuBLAS therefore ran an
// older architecture's kernel, what it cost, what to change.
std::string PreNativeAdvice(const PreNativeGemm& g) {
  const int64_t step = kernels::NativeAlignment(g.precision);
  std::string cause;
  if (!g.unaligned.empty()) {
    cause = fmt::format("{} {} not {} of {}, so cuBLAS ran a pre-{} kernel ({})", JoinAnd(g.unaligned),
                        g.unaligned.size() == 1 ? "is" : "are", g.unaligned.size() == 1 ? "a multiple" : "multiples",
                        step, ArchName(g.native_sm), g.family);
  } else {
    cause = fmt::format(
        "cuBLAS ran a pre-{} kernel ({}) although every dimension is a multiple of {}: its heuristic chose it "
        "for this shape, so padding will not change it",
        ArchName(g.native_sm), g.family, step);
  }
  std::string cost;
  if (g.relative_throughput && g.lost_share) {
    cost = fmt::format(
        "; such kernels did {:.3f} of the FLOPs per tensor-active cycle of {}'s own (data/kernel_throughput.json), "
        "so this GEMM's {:.1f} % of tensor time would be {:.1f} % on a native kernel",
        *g.relative_throughput, ArchName(g.native_sm), 100.0 * g.tensor_time_share,
        100.0 * (g.tensor_time_share - *g.lost_share));
  } else {
    cost = fmt::format("; its throughput on {} is not measured (it holds {:.1f} % of tensor time)",
                       ArchName(g.native_sm), 100.0 * g.tensor_time_share);
  }
  std::string change;
  if (!g.unaligned.empty()) {
    std::vector<std::string> padded;
    for (const auto& [label, size] :
         {std::pair{"M", g.problem.m}, std::pair{"N", g.problem.n}, std::pair{"K", g.problem.k}}) {
      if (size % step != 0) padded.push_back(fmt::format("{} to {}", label, (size + step - 1) / step * step));
    }
    change = fmt::format(". Pad {} (multiples of {}: e.g. a vocabulary, hidden or head size padded with unused rows)",
                         JoinAnd(padded), step);
  }
  return cause + cost + change;
}

// Names repeat across launches: each distinct one is read once, and
// classified once when it cannot be read in full.
class KernelNames {
 public:
  explicit KernelNames(const std::vector<std::string>& names)
      : names_(names), parsed_(names.size()), classes_(names.size()) {}

  const Result<KernelInfo>& Info(uint32_t name_id) {
    if (!parsed_[name_id]) parsed_[name_id] = kernels::ParseKernelName(names_[name_id]);
    return *parsed_[name_id];
  }
  // For names not read in full: whether they still name a GEMM, and its unit.
  const kernels::KernelClass& Class(uint32_t name_id) {
    if (!classes_[name_id]) classes_[name_id] = kernels::ClassifyKernelName(names_[name_id]);
    return *classes_[name_id];
  }

 private:
  const std::vector<std::string>& names_;
  std::vector<std::optional<Result<KernelInfo>>> parsed_;
  std::vector<std::optional<kernels::KernelClass>> classes_;
};

// ComputeCorrection's steps: AddKernel for every kernel of the trace, in
// order, then Finish. One object because every step adds to the same
// coverage, sums and notes.
class CorrectionBuilder {
 public:
  CorrectionBuilder(const formats::KernelTrace& trace, const CorrectionOptions& options)
      : trace_(trace), options_(options), rates_(options.gpu), names_(trace.kernel_names) {
    report_.reference_precision = options.reference_precision;
  }

  void AddKernel(const formats::TraceKernel& kernel) {
    Coverage& coverage = report_.coverage;
    coverage.kernels += 1;
    coverage.kernel_time_us += kernel.duration_us;
    if (kernel.name_id >= trace_.kernel_names.size()) return;  // a reader bug; never index past
    const std::string& name = trace_.kernel_names[kernel.name_id];
    const Result<KernelInfo>& info = names_.Info(kernel.name_id);
    const formats::FrameworkOp* op = kernel.op && *kernel.op < trace_.ops.size() ? &trace_.ops[*kernel.op] : nullptr;
    // A name not read in full may still say it is a GEMM, and on which unit.
    const kernels::KernelClass* unread = info.ok() ? nullptr : &names_.Class(kernel.name_id);
    if (unread != nullptr && !unread->gemm && op == nullptr) return;  // neither named nor launched as a GEMM
    coverage.gemm_kernels += 1;
    coverage.gemm_time_us += kernel.duration_us;
    gemm_time_by_precision_[info.ok() ? info->precision : std::nullopt] += kernel.duration_us;

    if (unread != nullptr) {
      AddUnreadGemm(kernel, name, *unread, info.error(), op);
    } else if (OnTensorCores(kernel, name, *info)) {
      if (op == nullptr) {
        if (info->block_scaled) CountBlockScaledWithoutShape(kernel);
        AddWithoutOp(kernel, name);
      } else {
        AddTensorGemm(kernel, name, *info, *op);
      }
    }
  }

  CorrectionReport Finish() {
    report_.coverage.left_out = left_out_.Take();
    SetGemmTimeByPrecision();
    SetFactorAndPrecisionMix();
    ListWastefulGemms();
    ListPreNativeGemms();
    AddCountNotes();
    for (std::string& note : rates_.TakeNotes()) report_.notes.push_back(std::move(note));
    return std::move(report_);
  }

 private:
  // A GEMM whose name was not read: a SIMT one needs no tile, any other is
  // left out.
  void AddUnreadGemm(const formats::TraceKernel& kernel, const std::string& name, const kernels::KernelClass& unread,
                     const Error& why, const formats::FrameworkOp* op) {
    if (unread.gemm && unread.tensor_core == false) {
      AddSimt(kernel);
      return;
    }
    if (!unread.gemm && unread.helper) {
      // A copy, split-K reduction or epilogue inside the op: its time is the
      // op's, but it is not a product ofu could pad.
      left_out_.Add("launched by a GEMM op, but not named as a GEMM", kernel.duration_us, name);
      return;
    }
    if (!unread.gemm) {
      // A GEMM op launched it and its name marks no helper: the op's
      // product ran in it, under a name ofu has no row for.
      left_out_.Add(kGemmByOpReason, kernel.duration_us, name, op != nullptr ? op->name : std::string());
      report_.coverage.gemm_by_op_kernels += 1;
      report_.coverage.gemm_by_op_time_us += kernel.duration_us;
      return;
    }
    left_out_.Add("kernel name not read", kernel.duration_us, name, why.message);
  }

  // A tensor-core GEMM with no op, so no shape: left out, with why the trace
  // has none.
  void AddWithoutOp(const formats::TraceKernel& kernel, const std::string& name) {
    switch (kernel.launch) {
      case formats::LaunchKind::kGraph:
        left_out_.Add("replayed from a CUDA graph, so no op or shape", kernel.duration_us, name);
        graph_kernels_ += 1;
        graph_time_us_ += kernel.duration_us;
        return;
      case formats::LaunchKind::kUnknown:
        left_out_.Add("its launch is not in the trace, so no op or shape", kernel.duration_us, name);
        return;
      case formats::LaunchKind::kKernel:
        left_out_.Add("no GEMM op around its launch, so no shape", kernel.duration_us, name);
        return;
    }
  }

  // True for a tensor-core GEMM; a SIMT one is counted as such, one whose
  // unit is unknown is left out.
  bool OnTensorCores(const formats::TraceKernel& kernel, const std::string& name, const KernelInfo& info) {
    if (info.tensor_core == false) {
      AddSimt(kernel);
      return false;
    }
    if (!info.tensor_core) {
      left_out_.Add("the name does not say whether tensor cores run it", kernel.duration_us, name);
      return false;
    }
    return true;
  }

  void CountBlockScaledWithoutShape(const formats::TraceKernel& kernel) {
    report_.coverage.block_scaled_without_shape_kernels += 1;
    report_.coverage.block_scaled_without_shape_time_us += kernel.duration_us;
  }

  void AddSimt(const formats::TraceKernel& kernel) {
    report_.coverage.simt_kernels += 1;
    report_.coverage.simt_time_us += kernel.duration_us;
  }

  // A tensor-core GEMM with its op: shape, precision and tile, padded, into
  // the sums; or left out with the first thing missing.
  void AddTensorGemm(const formats::TraceKernel& kernel, const std::string& name, const KernelInfo& info,
                     const formats::FrameworkOp& op) {
    auto problem = kernels::GemmProblemFromOp(op.name, op.input_dims);
    if (!problem.ok()) {
      if (info.block_scaled) CountBlockScaledWithoutShape(kernel);
      left_out_.Add("the op's shapes could not be read", kernel.duration_us, name, problem.error().message);
      return;
    }
    const std::optional<Precision> precision = PrecisionOf(info, op);
    if (!precision) {
      left_out_.Add("precision unknown", kernel.duration_us, name);
      return;
    }
    if (!info.tile_m || !info.tile_n) {
      left_out_.Add("the name gives no tile", kernel.duration_us, name);
      return;
    }
    const kernels::TileShape tile = TileOf(info, kernel);
    const kernels::GemmProblem kernel_problem = kernels::KernelOrientation(*problem, options_.orientation);
    auto padded = kernels::PadGemm(kernel_problem, tile);
    if (!padded.ok()) {
      left_out_.Add("tile or shape out of range", kernel.duration_us, name, padded.error().message);
      return;
    }
    AddCorrected(kernel, op, info, *problem, *padded, *precision);
  }

  // The name's tile; its cluster from the name, else from the launch, else
  // 1x1. Counts what had to be assumed, for the notes.
  kernels::TileShape TileOf(const KernelInfo& info, const formats::TraceKernel& kernel) {
    kernels::TileShape tile;
    tile.tile_m = *info.tile_m;
    tile.tile_n = *info.tile_n;
    tile.tile_k = info.tile_k.value_or(0);
    if (!info.tile_k) unknown_tile_k_ += 1;
    if (info.cluster_m && info.cluster_n) {
      tile.cluster_m = *info.cluster_m;
      tile.cluster_n = *info.cluster_n;
    } else if (!kernels::FamilyHasClusters(info.family)) {
      tile.cluster_m = tile.cluster_n = 1;  // before Hopper there are no clusters
    } else if (kernel.cluster && kernel.cluster->x > 0 && kernel.cluster->y > 0) {
      tile.cluster_m = kernel.cluster->x;
      tile.cluster_n = kernel.cluster->y;
      launch_cluster_ += 1;
    } else {
      assumed_cluster_ += 1;
    }
    if (info.split_k) split_k_ += 1;
    return tile;
  }

  // Useful and executed tensor time (FLOPs / R_p) into the sums, by
  // precision and by GEMM shape.
  // Useful and executed tensor time (FLOPs / R_p, and / t for a kernel
  // built for an older architecture) into the sums, by precision and by
  // GEMM shape.
  void AddCorrected(const formats::TraceKernel& kernel, const formats::FrameworkOp& op, const KernelInfo& info,
                    const kernels::GemmProblem& problem, const PaddedGemm& padded, Precision precision) {
    const double rate = rates_.RelativeRate(precision);
    kernels::KernelGeneration generation;
    if (options_.throughput != nullptr && options_.gpu != nullptr) {
      generation = options_.throughput->Classify(info, precision, options_.gpu->architecture);
    }
    const double throughput = generation.RelativeThroughput();
    const double native = padded.executed_flops / rate;
    const double executed = native / throughput;
    const double useful = padded.useful_flops / rate;
    report_.coverage.corrected_kernels += 1;
    report_.coverage.corrected_time_us += kernel.duration_us;
    useful_time_ += useful;
    executed_time_ += executed;
    native_time_ += native;
    time_by_precision_[precision] += executed;

    Group& group =
        groups_[GroupKey{kernel.name_id, op.name, problem.m, problem.n, problem.k, problem.batch, precision}];
    group.padded = padded;
    group.generation = generation;
    group.launches += 1;
    group.executed_time += executed;
    group.wasted_time += (padded.executed_flops - padded.useful_flops) / rate / throughput;
    group.native_time += native;
  }

  void SetGemmTimeByPrecision() {
    Coverage& coverage = report_.coverage;
    for (const auto& [precision, time] : gemm_time_by_precision_) {
      coverage.gemm_time_by_precision.push_back(PrecisionTime{
          precision, time, coverage.gemm_time_us > 0 ? time / coverage.gemm_time_us : 0});
    }
    std::stable_sort(coverage.gemm_time_by_precision.begin(), coverage.gemm_time_by_precision.end(),
                     [](const PrecisionTime& a, const PrecisionTime& b) { return a.time_us > b.time_us; });
  }

  // factor, w_p and the MFU scale; or a note saying why there are none.
  void SetFactorAndPrecisionMix() {
    const Coverage& coverage = report_.coverage;
    if (coverage.gemm_time_us > 0) report_.non_tensor_gemm_share = coverage.simt_time_us / coverage.gemm_time_us;
    if (executed_time_ > 0) {
      report_.factor = useful_time_ / executed_time_;
      report_.padding_factor = useful_time_ / native_time_;
      report_.throughput_factor = native_time_ / executed_time_;
      double scale = 0;
      for (const auto& [precision, time] : time_by_precision_) {
        const double share = time / executed_time_;
        const double rate = rates_.RelativeRate(precision);
        report_.precision_mix.push_back(PrecisionShare{precision, share, rate});
        scale += share * rate;
      }
      report_.mfu_scale = scale / rates_.RelativeRate(options_.reference_precision);
      std::stable_sort(report_.precision_mix.begin(), report_.precision_mix.end(),
                       [](const PrecisionShare& a, const PrecisionShare& b) {
                         return a.tensor_time_share > b.tensor_time_share;
                       });
    } else if (coverage.kernels == 0) {
      report_.notes.push_back(RangeProfilerGemms().value_or(
          "no kernel events in the trace, so nothing to correct (the trace's notes say why)"));
    } else if (coverage.gemm_kernels == 0) {
      report_.notes.push_back(
          "no GEMM kernels in the trace (none named like a kernel family ofu reads or like a GEMM, none "
          "launched by a GEMM op)");
    } else {
      report_.notes.push_back("no GEMM kernel could be corrected; see why under 'left out'");
    }
  }

  // What the CUPTI range profiler's records say of GEMMs, when the trace has
  // them instead of kernel events: never "no GEMM" while GEMM names are there.
  std::optional<std::string> RangeProfilerGemms() const {
    const std::vector<std::string>& names = trace_.range_profiler_kernels;
    if (names.empty()) return std::nullopt;
    std::map<std::string_view, bool> gemm_by_name;
    int64_t gemm = 0;
    std::string_view example;
    for (const std::string& name : names) {
      auto [it, inserted] = gemm_by_name.try_emplace(name, false);
      if (inserted) it->second = kernels::ClassifyKernelName(name).gemm;
      if (!it->second) continue;
      gemm += 1;
      if (example.empty()) example = name;
    }
    if (gemm == 0) {
      return fmt::format("no kernel events in the trace; none of its {} CUPTI range-profiler records names a GEMM",
                         names.size());
    }
    return fmt::format(
        "no kernel events in the trace, but {} of its {} CUPTI range-profiler records name GEMM kernels (e.g. {}): "
        "GEMMs ofu cannot weigh or correct without kernel records",
        gemm, names.size(), example.substr(0, 120));
  }

  // The GEMM shapes that waste the most tensor time, worst first, with advice.
  // The fields every list of GEMMs shares, for one group of launches.
  GemmIdentity IdentityOf(const GroupKey& key, const Group& group) const {
    return GemmIdentity{trace_.kernel_names[key.name_id],
                        key.op_name,
                        kernels::GemmProblem{key.m, key.n, key.k, key.batch},
                        key.precision,
                        group.launches,
                        group.executed_time / executed_time_};
  }

  void ListWastefulGemms() {
    for (const auto& [key, group] : groups_) {
      if (group.wasted_time <= 0) continue;
      WastefulGemm row;
      static_cast<GemmIdentity&>(row) = IdentityOf(key, group);
      row.padded = group.padded;
      row.wasted_share = group.wasted_time / executed_time_;
      row.advice = Advice(group.padded, options_.orientation);
      report_.wasteful.push_back(std::move(row));
    }
    std::stable_sort(report_.wasteful.begin(), report_.wasteful.end(),
                     [](const WastefulGemm& a, const WastefulGemm& b) { return a.wasted_share > b.wasted_share; });
    if (report_.wasteful.size() > options_.max_wasteful) report_.wasteful.resize(options_.max_wasteful);
  }

  // The GEMMs on kernels built for an older architecture, largest tensor
  // time first, with advice; and a note per family.
  void ListPreNativeGemms() {
    struct FamilyTotal {
      const kernels::KernelGeneration* generation = nullptr;
      double time = 0;
      int64_t launches = 0;
    };
    std::map<std::string, FamilyTotal> families;
    for (const auto& [key, group] : groups_) {
      const kernels::KernelGeneration& g = group.generation;
      if (!g.pre_native) continue;
      PreNativeGemm row;
      static_cast<GemmIdentity&>(row) = IdentityOf(key, group);
      row.family = g.family;
      row.kernel_sm = g.kernel_sm;
      row.native_sm = g.native_sm;
      if (g.figure != nullptr) {
        row.relative_throughput = g.figure->relative_throughput;
        row.throughput_source = fmt::format("measured on {}", g.figure->measured_on);
        row.lost_share = (group.executed_time - group.native_time) / executed_time_;
      }
      row.unaligned = Unaligned(row.problem, row.precision);
      row.advice = PreNativeAdvice(row);
      report_.pre_native.push_back(std::move(row));
      FamilyTotal& total = families[g.family];
      total.generation = &g;
      total.time += group.executed_time;
      total.launches += group.launches;
    }
    std::stable_sort(report_.pre_native.begin(), report_.pre_native.end(),
                     [](const PreNativeGemm& a, const PreNativeGemm& b) {
                       return a.tensor_time_share > b.tensor_time_share;
                     });
    if (report_.pre_native.size() > options_.max_wasteful) report_.pre_native.resize(options_.max_wasteful);
    for (const auto& [family, total] : families) {
      const kernels::KernelGeneration& g = *total.generation;
      const double share = total.time / executed_time_;
      if (g.figure != nullptr) {
        report_.notes.push_back(fmt::format(
            "{} launch(es) ran {} kernels, built for sm{} ({}), on a GPU whose own kernels are sm{}: {:.1f} % of "
            "tensor time, counted at {:.3f} of the native FLOPs per tensor-active cycle (measured on {}; "
            "data/kernel_throughput.json)",
            total.launches, family, g.kernel_sm, g.figure->label, g.native_sm, 100.0 * share,
            g.figure->relative_throughput, g.figure->measured_on));
      } else {
        report_.notes.push_back(fmt::format(
            "{} launch(es) ran {} kernels, built for sm{}, on a GPU whose own kernels are sm{}: {:.1f} % of tensor "
            "time. No throughput is measured for this family on {}, so it is counted as native and the predicted "
            "MFU may be too high by up to that share{}",
            total.launches, family, g.kernel_sm, g.native_sm, 100.0 * share, options_.gpu->architecture,
            MeasuredRange(*options_.throughput, options_.gpu->architecture)));
      }
    }
  }

  // What was assumed about tiles and clusters, and how often.
  void AddCountNotes() {
    std::vector<std::string>& notes = report_.notes;
    if (unknown_tile_k_ > 0) {
      notes.push_back(fmt::format("{} kernel(s) name no tile K: K is not padded for them", unknown_tile_k_));
    }
    if (launch_cluster_ > 0) {
      notes.push_back(
          fmt::format("{} kernel(s) take their cluster from the launch (x as M, y as N; "
                      "not yet checked on hardware)",
                      launch_cluster_));
    }
    if (assumed_cluster_ > 0) {
      notes.push_back(
          fmt::format("{} kernel(s) choose their cluster at run time and the trace does not "
                      "record it: assumed 1x1, so cluster padding is not counted",
                      assumed_cluster_));
    }
    if (graph_kernels_ > 0) {
      notes.push_back(
          fmt::format("{} tensor-core GEMM kernel(s) ({:.1f} ms) were replayed from CUDA graphs: a graph's kernels are "
                      "not tied to the ops that captured them, so the trace gives them no shape. To correct them, "
                      "profile a few steps with CUDA graphs off (e.g. torch.compile without mode=\"reduce-overhead\", "
                      "vLLM's enforce_eager=True, SGLang's --disable-cuda-graph)",
                      graph_kernels_, graph_time_us_ / 1000.0));
    }
    if (split_k_ > 0) {
      notes.push_back(
          fmt::format("{} split-K kernel(s): the split count is unknown, so K is padded once "
                      "(a lower bound on the waste)",
                      split_k_));
    }
    const Coverage& c = report_.coverage;
    if (c.gemm_by_op_kernels > 0 && c.gemm_time_us > 0) {
      notes.push_back(UncorrectedGemmNote(
          c.gemm_by_op_kernels, c.gemm_by_op_time_us, "kernel(s) (",
          "are GEMMs because a GEMM op launched them, but their names are no kernel family ofu reads: tile and "
          "precision not readable from the name, so they are counted as GEMMs but left out of the factor and the "
          "precision mix",
          " (`ofu kernels parse NAME` says what ofu reads of a name)"));
    }
    if (c.block_scaled_without_shape_kernels > 0 && c.gemm_time_us > 0) {
      notes.push_back(UncorrectedGemmNote(
          c.block_scaled_without_shape_kernels, c.block_scaled_without_shape_time_us,
          "block-scaled GEMM kernel(s) (MX/NVFP4 or blockwise-scaled; ",
          "have no shape in the trace (a custom op launched them, as TensorRT-LLM's and FlashInfer's MoE runners "
          "do): they are counted as GEMMs but left out of the factor, the precision mix and the predicted MFU",
          "; \"GEMMs by precision\" counts them"));
    }
  }

  // "N <what>X ms, Y % of GEMM time) <why>, which cover the Z % of GEMM time
  // that was corrected<tail>": GEMM kernels counted but left out of the factor.
  std::string UncorrectedGemmNote(int64_t kernels, double time_us, std::string_view what, std::string_view why,
                                  std::string_view tail) const {
    const Coverage& c = report_.coverage;
    return fmt::format(
        "{} {}{:.1f} ms, {:.1f} % of GEMM time) {}, which cover the {:.1f} % of GEMM time that was "
        "corrected{}",
        kernels, what, time_us / 1000.0, 100.0 * time_us / c.gemm_time_us, why,
        100.0 * c.corrected_time_us / c.gemm_time_us, tail);
  }

  const formats::KernelTrace& trace_;
  const CorrectionOptions& options_;
  CorrectionReport report_;
  RateTable rates_;
  LeftOutCounter left_out_;
  KernelNames names_;
  double useful_time_ = 0, executed_time_ = 0;  // Σ U/R_p, Σ E/(R_p·t)
  double native_time_ = 0;                      // Σ E/R_p
  std::map<Precision, double> time_by_precision_;
  std::map<std::optional<Precision>, double> gemm_time_by_precision_;  // every GEMM kernel, by its name
  std::map<GroupKey, Group> groups_;
  int64_t unknown_tile_k_ = 0, assumed_cluster_ = 0, launch_cluster_ = 0, split_k_ = 0;
  int64_t graph_kernels_ = 0;  // tensor-core GEMMs left out as replayed from a graph
  double graph_time_us_ = 0;
};

}  // namespace

std::optional<double> GenericRelativeRate(Precision precision) {
  switch (precision) {
    case Precision::kFp16:
    case Precision::kBf16: return 1.0;
    case Precision::kTf32: return 0.5;
    case Precision::kFp8:
    case Precision::kInt8: return 2.0;
    case Precision::kFp4: return 4.0;
    case Precision::kFp32: return std::nullopt;
  }
  return std::nullopt;
}

Status RequireNvidiaTrace(const formats::KernelTrace& trace, std::string_view trace_name,
                          std::string_view gpu_model_flag) {
  if (!trace.other_platform) return OkStatus();
  const formats::TracePlatform& p = *trace.other_platform;
  const std::string device = p.device.empty() ? fmt::format("a {} device", p.vendor) : p.device;
  const std::string why = fmt::format(
      "OFU as ofu computes it is defined for NVIDIA tensor cores (the tensor-pipe activity DCGM and NVML count, and "
      "NVIDIA's peak rates), so this trace's kernels are not corrected");
  if (!gpu_model_flag.empty()) {
    return Error::InvalidArgument(
        "--gpu-model {}: {} was recorded on {} ({}, not NVIDIA: {}); an NVIDIA model cannot "
        "stand for it: {}",
        gpu_model_flag, trace_name, device, p.vendor, p.evidence, why);
  }
  return Error::NoData("{}: recorded on {} ({}, not NVIDIA: {}): {}", trace_name, device, p.vendor, p.evidence, why);
}

CorrectionReport ComputeCorrection(const formats::KernelTrace& trace, const CorrectionOptions& options) {
  CorrectionBuilder builder(trace, options);
  for (const formats::TraceKernel& kernel : trace.kernels) builder.AddKernel(kernel);
  return builder.Finish();
}

}  // namespace ofu::analysis
