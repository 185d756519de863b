// The `windows`, `rollups` and `gpus` tables' columns as the store writes
// them and the reader reads them: one list, one binder, one reader, so the two
// cannot drift.
// Internal to the history store (history_store.cc, history_reader.cc).
//
// Thread-safety: stateless; the statement passed in keeps its connection's
// one-thread-at-a-time rule.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "ofu/core/result.h"
#include "ofu/formats/sqlite_handles.h"
#include "ofu/sinks/history_reader.h"
#include "ofu/sinks/history_rollup.h"

namespace ofu::sinks {

// In this order: BindWindow binds ?1..?22, ColumnWindow reads columns 0..21.
inline constexpr const char* kWindowColumns =
    "gpu_id, end_s, span_s, observed_s, utilized_s, busy_s, busy_utilized_s, tensor_active_s, clock_mhz, "
    "clock_min_mhz, clock_max_mhz, clock_windows, up_s, flags, hmma_active_s, imma_active_s, dfma_active_s, "
    "fp64_active_s, fp32_active_s, fp16_active_s, non_tensor_tflop, non_tensor_peak_s";

// The same for a schema version 2 or 3 store, which has no CUDA-core columns.
inline constexpr const char* kWindowColumnsV3 =
    "gpu_id, end_s, span_s, observed_s, utilized_s, busy_s, busy_utilized_s, tensor_active_s, clock_mhz, "
    "clock_min_mhz, clock_max_mhz, clock_windows, up_s, flags, hmma_active_s, imma_active_s, dfma_active_s, "
    "NULL, NULL, NULL, NULL, NULL";

// The same for a schema version 1 store, which has no per-pipe columns.
inline constexpr const char* kWindowColumnsV1 =
    "gpu_id, end_s, span_s, observed_s, utilized_s, busy_s, busy_utilized_s, tensor_active_s, clock_mhz, "
    "clock_min_mhz, clock_max_mhz, clock_windows, up_s, flags, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";

inline void BindWindow(sqlite3_stmt* s, const StoredWindow& w) {
  sqlite3_bind_int64(s, 1, w.gpu_id);
  sqlite3_bind_double(s, 2, w.end_s);
  sqlite3_bind_double(s, 3, w.span_s);
  sqlite3_bind_double(s, 4, w.observed_s);
  sqlite3_bind_double(s, 5, w.utilized_s);
  sqlite3_bind_double(s, 6, w.busy_s);
  sqlite3_bind_double(s, 7, w.busy_utilized_s);
  sqlite3_bind_double(s, 8, w.tensor_active_s);
  formats::BindOptional(s, 9, w.clock_mhz);
  formats::BindOptional(s, 10, w.clock_min_mhz);
  formats::BindOptional(s, 11, w.clock_max_mhz);
  sqlite3_bind_int64(s, 12, w.clock_windows);
  sqlite3_bind_double(s, 13, w.up_s);
  sqlite3_bind_int64(s, 14, static_cast<sqlite3_int64>(w.flags));
  formats::BindOptional(s, 15, w.hmma_active_s);
  formats::BindOptional(s, 16, w.imma_active_s);
  formats::BindOptional(s, 17, w.dfma_active_s);
  formats::BindOptional(s, 18, w.fp64_active_s);
  formats::BindOptional(s, 19, w.fp32_active_s);
  formats::BindOptional(s, 20, w.fp16_active_s);
  formats::BindOptional(s, 21, w.non_tensor_tflop);
  formats::BindOptional(s, 22, w.non_tensor_peak_s);
}

// Reads the columns of kWindowColumns.
inline StoredWindow ColumnWindow(sqlite3_stmt* s) {
  StoredWindow w;
  w.gpu_id = sqlite3_column_int64(s, 0);
  w.end_s = sqlite3_column_double(s, 1);
  w.span_s = sqlite3_column_double(s, 2);
  w.observed_s = sqlite3_column_double(s, 3);
  w.utilized_s = sqlite3_column_double(s, 4);
  w.busy_s = sqlite3_column_double(s, 5);
  w.busy_utilized_s = sqlite3_column_double(s, 6);
  w.tensor_active_s = sqlite3_column_double(s, 7);
  w.clock_mhz = formats::ColumnOptional(s, 8);
  w.clock_min_mhz = formats::ColumnOptional(s, 9);
  w.clock_max_mhz = formats::ColumnOptional(s, 10);
  w.clock_windows = sqlite3_column_int64(s, 11);
  w.up_s = sqlite3_column_double(s, 12);
  w.flags = static_cast<std::uint32_t>(sqlite3_column_int64(s, 13));
  w.hmma_active_s = formats::ColumnOptional(s, 14);
  w.imma_active_s = formats::ColumnOptional(s, 15);
  w.dfma_active_s = formats::ColumnOptional(s, 16);
  w.fp64_active_s = formats::ColumnOptional(s, 17);
  w.fp32_active_s = formats::ColumnOptional(s, 18);
  w.fp16_active_s = formats::ColumnOptional(s, 19);
  w.non_tensor_tflop = formats::ColumnOptional(s, 20);
  w.non_tensor_peak_s = formats::ColumnOptional(s, 21);
  return w;
}

// A `rollups` row is a window's columns (its sums, kWindowColumns), then
// these: BindRollup binds ?1..?30, ColumnRollup reads columns 0..29 of
// "SELECT kWindowColumns, kRollupColumns".
inline constexpr const char* kRollupColumns =
    "after_s, until_s, windows, first_start_s, first_span_s, clock_only_windows, clock_only_s, ofu_histogram";

inline void BindRollup(sqlite3_stmt* s, const StoredRollup& r) {
  BindWindow(s, r.total);
  sqlite3_bind_double(s, 23, r.after_s);
  sqlite3_bind_double(s, 24, r.until_s);
  sqlite3_bind_int64(s, 25, r.windows);
  sqlite3_bind_double(s, 26, r.first_start_s);
  sqlite3_bind_double(s, 27, r.first_span_s);
  sqlite3_bind_int64(s, 28, r.clock_only_windows);
  sqlite3_bind_double(s, 29, r.clock_only_s);
  const std::string bins = EncodeOfuBins(r.ofu_bins);
  sqlite3_bind_blob(s, 30, bins.data(), static_cast<int>(bins.size()), SQLITE_TRANSIENT);
}

// kMalformedInput, naming the GPU and the span, when the histogram is not valid.
inline Result<StoredRollup> ColumnRollup(sqlite3_stmt* s) {
  StoredRollup r;
  r.total = ColumnWindow(s);
  r.after_s = sqlite3_column_double(s, 22);
  r.until_s = sqlite3_column_double(s, 23);
  r.windows = sqlite3_column_int64(s, 24);
  r.first_start_s = sqlite3_column_double(s, 25);
  r.first_span_s = sqlite3_column_double(s, 26);
  r.clock_only_windows = sqlite3_column_int64(s, 27);
  r.clock_only_s = sqlite3_column_double(s, 28);
  const auto* blob = static_cast<const unsigned char*>(sqlite3_column_blob(s, 29));
  auto bins = DecodeOfuBins(blob, static_cast<std::size_t>(sqlite3_column_bytes(s, 29)));
  if (!bins.ok()) {
    return Error::MalformedInput("rollup of GPU {} for the windows ending in ({}, {}]: {}", r.total.gpu_id, r.after_s,
                                 r.until_s, bins.error().message);
  }
  r.ofu_bins = std::move(*bins);
  return r;
}

// A `gpus` row: ColumnGpu reads the columns of kGpuColumns, in this order.
// Stores before schema 3 have no MIG columns: their GPUs are whole.
inline constexpr const char* kGpuColumns =
    "id, uuid, gpu_index, model, sku, architecture, hostname, mig_profile, mig_instance";
inline constexpr const char* kGpuColumnsV2 = "id, uuid, gpu_index, model, sku, architecture, hostname, '', ''";
inline constexpr int kGpuColumnCount = 9;

inline StoredGpu ColumnGpu(sqlite3_stmt* s) {
  StoredGpu gpu;
  gpu.id = sqlite3_column_int64(s, 0);
  gpu.uuid = formats::ColumnText(s, 1);
  gpu.gpu_index = formats::ColumnText(s, 2);
  gpu.model = formats::ColumnText(s, 3);
  gpu.sku = formats::ColumnText(s, 4);
  gpu.architecture = formats::ColumnText(s, 5);
  gpu.hostname = formats::ColumnText(s, 6);
  gpu.mig_profile = formats::ColumnText(s, 7);
  gpu.mig_instance = formats::ColumnText(s, 8);
  return gpu;
}

}  // namespace ofu::sinks
