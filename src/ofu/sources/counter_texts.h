// The counter texts `ofu report --input` reads, one row each: how a text is
// recognised, what ofu reads from it and what it says when the text cannot
// give an OFU. A new format is a row here and, where needed, a reader in
// formats/ (the replay, sources/replay.h, turns what the reader gives into a
// Recording). Each row carries a small example text and the values ofu must
// read from it; tests/sources/counter_texts_test.cc reads every example.
//
// Recognition looks at the start of a file (the first 64 KiB) and tries the
// rows in order; the last row (dcgm-exporter / OpenMetrics exposition)
// takes whatever no other row claims.
//
// Thread-safety: the table is constant.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace ofu::sources {

enum class CounterTextKind {
  kDcgmiDmon,          // formats/dcgmi_dmon.h
  kPrometheusApiJson,  // formats/prometheus_api.h
  kNvidiaSmiQuery,     // formats/nvidia_smi.h, `nvidia-smi -q`
  kNvidiaSmiTable,     // formats/nvidia_smi.h, the default `nvidia-smi` table
  kNvidiaSmiDmon,      // formats/counter_table.h
  kNvidiaSmiQueryCsv,  // formats/counter_table.h
  kNamedColumnTable,   // formats/counter_table.h, the generic rule
  kExposition,         // formats/prometheus_text.h
};

// What ofu must read from a row's example: the GPUs' count and the first
// GPU's first sample and model (absent: the example has none).
struct CounterTextExample {
  std::string_view text;
  std::size_t gpus = 0;
  std::optional<double> sm_clock_mhz;
  std::optional<double> tensor_active;  // 0..1
  std::string_view model;
};

struct CounterTextFormat {
  CounterTextKind kind;
  std::string_view name;           // as notes name it: "nvidia-smi dmon table"
  std::string_view recognised_by;  // for people (docs/formats.md)
  std::string_view holds;          // what ofu reads from it
  // Why it has no tensor activity and where to get it; empty for a format
  // that can hold it (then a missing counter is the report's usual note).
  std::string_view no_tensor;
  double row_interval_s;  // rows without time are this far apart (tables); 0: not a table
  bool (*looks_like)(std::string_view head);
  CounterTextExample example;
};

// In the order recognition tries them; never empty.
std::span<const CounterTextFormat> CounterTextFormats();

// The first row whose looks_like accepts `head`; the exposition row when none does.
const CounterTextFormat& RecogniseCounterText(std::string_view head);

}  // namespace ofu::sources
