#include "ofu/gemm/case_result.h"

namespace ofu::gemm {
namespace {

// Fields both sides give agree; true when they share none as well, so
// callers check SharesTile first.
bool Matches(const std::optional<int>& a, const std::optional<int>& b) { return !a || !b || *a == *b; }

bool SharesTile(const Tiling& a, const Tiling& b) {
  return (a.tile_m && b.tile_m) || (a.tile_n && b.tile_n) || (a.tile_k && b.tile_k) || (a.cluster_m && b.cluster_m) ||
         (a.cluster_n && b.cluster_n) || (a.stages && b.stages);
}

Tiling Transposed(const Tiling& t) {
  Tiling out = t;
  out.tile_m = t.tile_n;
  out.tile_n = t.tile_m;
  out.cluster_m = t.cluster_n;
  out.cluster_n = t.cluster_m;
  return out;
}

bool AllMatch(const Tiling& a, const Tiling& b) {
  return Matches(a.tile_m, b.tile_m) && Matches(a.tile_n, b.tile_n) && Matches(a.tile_k, b.tile_k) &&
         Matches(a.stages, b.stages) && Matches(a.cluster_m, b.cluster_m) && Matches(a.cluster_n, b.cluster_n);
}

}  // namespace

std::string_view TileCheckName(TileCheck check) {
  switch (check) {
    case TileCheck::kUnknown: return "unknown";
    case TileCheck::kAgree: return "agree";
    case TileCheck::kSwapped: return "swapped";
    case TileCheck::kDisagree: return "disagree";
  }
  return "unknown";
}

std::optional<TileCheck> TileCheckFromName(std::string_view name) {
  for (TileCheck check : {TileCheck::kUnknown, TileCheck::kAgree, TileCheck::kSwapped, TileCheck::kDisagree}) {
    if (TileCheckName(check) == name) return check;
  }
  return std::nullopt;
}

TileCheck CompareTiling(const Tiling& algorithm, const Tiling& name) {
  if (!SharesTile(algorithm, name)) return TileCheck::kUnknown;
  if (AllMatch(algorithm, name)) return TileCheck::kAgree;
  if (AllMatch(Transposed(algorithm), name)) return TileCheck::kSwapped;
  return TileCheck::kDisagree;
}

}  // namespace ofu::gemm
