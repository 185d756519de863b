// Reads an Nsight Systems SQLite export (nsys export --type sqlite) into a
// KernelTrace.
//
// The export's schema changes between Nsight releases (NVIDIA says so and
// records the version in META_DATA_EXPORT), so the reader asks each table for
// its columns (pragma_table_info) and adapts instead of assuming a version.
// Tables are created lazily: a table that had no events is simply absent.
//
// Tables and columns read
//   CUPTI_ACTIVITY_KIND_KERNEL, one TraceKernel per row. Required: start, end
//     (ns), deviceId, streamId, gridX..Z, blockX..Z and a name:
//     demangledName (the name with template arguments) when the column exists
//     and is not NULL, else shortName. Both are ids into StringIds(id, value).
//     Optional: correlationId and globalPid (for the launch, below);
//     clusterX..Z (added for Hopper thread-block clusters in later releases),
//     read only when all three columns exist, and a row's cluster is set only
//     when none is NULL and it is not 0x0x0.
//   CUPTI_ACTIVITY_KIND_RUNTIME (start, globalTid, correlationId; optional
//     nameId): the CUDA API call that launched a kernel. It sets
//     TraceKernel::launch: kGraph when StringIds[nameId] is a graph launch
//     (IsGraphLaunchName), kKernel otherwise, kUnknown without a launch row.
//     A kGraph kernel is tied to no range (the range around the graph launch
//     replays the graph, it did not shape the kernel).
//   NVTX_EVENTS (start, end, eventType, globalTid, text and/or textId): only
//     eventType 59, NvtxPushPopRange. Push/pop ranges nest on one thread by
//     construction; start/end ranges (60) need not nest and may end on another
//     thread, and PyTorch only pushes and pops. The text is the `text` column
//     (an unregistered string) or, when that is NULL, StringIds[textId].
//     Ranges with a NULL end (never popped) or NULL globalTid are skipped.
//   TARGET_INFO_GPU (id, name, smCount, computeMajor, computeMinor, cuDevice)
//     and TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, numMultiprocessors), both
//     optional, for KernelTrace::devices. A device's id is the CUDA device id
//     that kernels' deviceId uses: cudaId where TARGET_INFO_CUDA_DEVICE maps
//     the GPU, else cuDevice, else TARGET_INFO_GPU.id.
//
// Kernels -> GEMM ops (OpLink::kNvtxNesting)
//   A kernel's launch is the RUNTIME row with the same correlationId and, when
//   the kernel table has globalPid, the same process. Correlation ids are only
//   unique within a process. globalTid packs the thread id in its low 24 bits
//   and the process id in the 24 above (Nsight's "serialized process and
//   thread identifiers"; PID = globalTid / 0x1000000 % 0x1000000), and
//   globalPid is the same number with the thread bits zero, so the two match
//   when globalPid >> 24 == globalTid >> 24. Without globalPid a correlation
//   id must be unique in the RUNTIME table to be used.
//   The op is the innermost push/pop range on the launch's thread that
//   contains the launch's start and whose text names a GEMM op: the text up to
//   the first ',' passes IsGemmOpName(). So under aten::matmul > aten::mm a
//   kernel gets aten::mm; a non-GEMM kernel launched inside a GEMM op (a copy
//   inside aten::mm, say) is linked too, and the analysis decides by name.
//   PyTorch's emit_nvtx writes the text with torch::profiler::impl::
//   getNvtxStr (torch/csrc/profiler/util.cpp): "<op>, seq = <n>" (", seq"
//   only for ops with a sequence number), ", op_id = <id>", then with
//   record_shapes=True ", sizes = [[1024], [64, 1024], []]" (one list per
//   input, [] for an input that is not a tensor) and ", input_op_ids =
//   [(id,nr), ...]". FrameworkOp::input_dims comes from the sizes list;
//   without one it is empty and a note says so. input_types stays empty: the
//   NVTX text carries no dtypes. ops holds only ranges some kernel links to,
//   in order of first link; start_us/duration_us are the range's.
//
// Units: times are Nsight's nanoseconds divided by 1000 (microseconds on the
// export's own timeline, not relative to the first kernel). Kernels come out
// in order of start (ties in table order). bytes_read is the database size.
//
// Errors: "<source>: ..." naming the table, column or row.
//   kIo              the file cannot be opened or read.
//   kMalformedInput  not an SQLite database (with SQLite's message); no
//                    CUPTI_ACTIVITY_KIND_KERNEL table ("was the trace captured
//                    with --trace=cuda?"); a required column missing from a
//                    table that is present; NULL in a required column; a
//                    StringIds id that does not exist; end < start; a value
//                    out of range; a corrupt database (SQLite's message).
//   Absent NVTX_EVENTS or RUNTIME tables, kernels without a launch row and
//   GEMM ranges without sizes are not errors: kernels stay unlinked and
//   KernelTrace::notes says why.
//
// Progress: TraceReadOptions::progress is called now and then with ROWS, not
// bytes: rows read so far and the row count of the tables to read (from
// COUNT(*), done only when a callback is set).
//
// Untrusted input: the database is only read (opened read-only, defensive
// mode, untrusted schema), tables must be real tables (a view with the right
// name is treated as absent), and a corrupt image gives an error, not a
// crash. The fuzzer feeds ParseNsysSqliteImage.
//
// Thread-safety: each call opens its own connection and shares nothing.
#pragma once

#include <string>
#include <string_view>

#include "ofu/core/result.h"
#include "ofu/formats/kernel_trace.h"

namespace ofu::formats {

// Opens `path` read-only. Errors: kIo when it cannot be opened as SQLite,
// kMalformedInput naming the table, column or row when the schema or a row
// is not what an Nsight export holds.
Result<KernelTrace> ReadNsysSqlite(const std::string& path, const TraceReadOptions& options = {});

// The same for a database image in memory (sqlite3_deserialize); for tests
// and fuzzing. `source_name` names it in errors. The bytes are copied.
Result<KernelTrace> ParseNsysSqliteImage(std::string_view bytes, std::string_view source_name);

}  // namespace ofu::formats
