// Reader for the table `dcgmi dmon` prints (DCGM's command-line monitor).
//
// What dmon writes (dcgmi/DeviceMonitor.cpp in NVIDIA/DCGM):
//
//   #Entity           TENSO         SMCLK        POWER
//   ID                                           W
//   GPU 0             0.123         1980         612.400
//   GPU-I 1           0.250                      N/A
//
// a header of the fields' short names (DCGM's dcgm_fields.cpp: TENSO is field
// 1004, SMCLK 100, ...), a units line starting "ID", then one row per entity
// per interval (every -d milliseconds, 1000 by default), the header again
// every 14 intervals. Every cell is left-aligned at its column's start; a
// field the entity does not have is left blank, a value DCGM does not have is
// "N/A". Older DCGM versions wrote "# Entity" (or "# EntityId") and an "Id"
// (or "# ID") units line, and right-aligned some values; pastes of both are
// read.
//
// What it accepts
//   * header lines (the first token "#Entity" or "#EntityId", or "#" then
//     "Entity"/"EntityId"): their tokens after that are the column names, in
//     upper case as dmon writes them; a later header replaces the columns;
//   * a units line right after a header (first token "ID"/"Id", or "#" then
//     "ID"/"Id"): skipped;
//   * rows: an entity ("GPU 0", "GPU-I 1", "GPU-CI 2", "vGPU 3", "Switch 4",
//     "CPU 5", "CX 6", "GPU 0 LINK 1", "CPU Core 7") then one cell per
//     column. With as many value tokens as columns, they are taken in order;
//     with fewer (blank cells), each token goes to the column whose span in
//     the header holds the token's first byte. "N/A" (and any other text that
//     is not a number) is an absent value, never 0;
//   * anything else (a shell prompt, the dmon command line, "dmon was stopped
//     due to receiving a signal", Markdown fences, prose): a stray line,
//     handed to DmonVisitor::OnStrayLine. A dmon command line
//     ("dcgmi dmon ... -d 100") also tells the interval: DmonStats::delay_ms.
// What it rejects (kMalformedInput "<source>:<line>: ..."): a row before any
// header, a row with more value tokens than columns, a row whose tokens
// cannot be placed in columns, a NUL byte, a line longer than 1 MiB, a text
// with no header at all.
//
// Lifetime: the views handed to the visitor point into `text` or into the
// reader's scratch space and are valid only during that call.
// Thread-safety: no shared state.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "ofu/core/result.h"

namespace ofu::formats {

// DCGM's entity groups as dmon names them.
enum class DmonEntityKind { kGpu, kGpuInstance, kComputeInstance, kOther };

struct DmonRow {
  DmonEntityKind kind;
  std::string_view entity;  // as written: "GPU 0", "GPU-I 1", "GPU 0 LINK 1"
  std::string_view id;      // the entity's number: "0", "1"; for a link, the link's
  // One per column of the current header, in its order: absent for a blank
  // cell, "N/A" or text that is not a number.
  std::span<const std::optional<double>> values;
  std::size_t line = 0;  // 1-based
};

struct DmonHeader {
  std::span<const std::string_view> columns;  // "TENSO", "SMCLK", ...
  std::size_t line = 0;
};

struct DmonStrayLine {
  std::string_view text;  // without its line end and leading blanks; never empty
  std::size_t line = 0;
};

class DmonVisitor {
 public:
  virtual ~DmonVisitor() = default;
  virtual void OnHeader(const DmonHeader& header) = 0;
  virtual void OnRow(const DmonRow& row) = 0;
  virtual void OnStrayLine(const DmonStrayLine& /*line*/) {}
};

struct DmonStats {
  std::size_t lines = 0;
  std::size_t headers = 0;
  std::size_t rows = 0;
  std::size_t stray_lines = 0;
  std::size_t not_numbers = 0;  // cells with text that is not a number ("N/A" counted too)
  // The -d of a "dcgmi dmon" command line in the text, milliseconds; absent
  // when the text holds none (then dmon's default, 1000 ms, applies).
  std::optional<double> delay_ms;
  std::size_t delay_line = 0;  // where that command line is
};

// True when `a` and `b` are the same but for the case of ASCII letters (DCGM's
// names are ASCII: "TENSO" and "tenso", "DCGM_FI_DEV_SM_CLOCK" and
// "dcgm_fi_dev_sm_clock").
bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b);

// True when `head` (the start of a file) is a dmon table: a header line comes
// before any line of Prometheus text (a "# HELP"/"# TYPE" line or a sample of
// a DCGM_ metric). Lines such as a shell prompt may come before the header.
bool LooksLikeDcgmiDmon(std::string_view head);

Result<DmonStats> ReadDcgmiDmon(std::string_view text, std::string_view source_name, DmonVisitor& visitor);

}  // namespace ofu::formats
