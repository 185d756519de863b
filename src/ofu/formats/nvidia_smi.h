// What nvidia-smi's reports for people hold, and where a text names its GPU
// model. nvidia-smi has no tensor activity to give (only DCGM's profiling
// fields have it), so these readers find the SM clock and the GPU names, for
// a diagnosis and for the model of a GPU whose counters come from elsewhere
// in the same text.
//
// `nvidia-smi -q` (ReadNvidiaSmiQuery): "Key : Value" lines under section
// headers (a line with no " : "), one "GPU 00000000:17:00.0" block per GPU.
// Read: "Product Name", "GPU UUID", "Minor Number" of the block, and "SM" in
// the section "Clocks" (not "Max Clocks", "Applications Clocks", ...), in
// MHz. An excerpt without a "GPU <bus id>" line is one GPU. A line that is
// neither is skipped (counted in `skipped`): no line fails the read.
//
// The default `nvidia-smi` table (ReadNvidiaSmiTable): per GPU a row
// "|   0  NVIDIA H100 80GB HBM3          On  |": its index and name (cut
// short with "..." by the narrow layout of older drivers). It has no clock.
//
// Model names anywhere in a text (FindGpuModelMentions): the table rows
// above, "Product Name : X" of -q, and "Name: X" in a box of `dcgmi
// discovery -l` ("| 0      | Name: NVIDIA H100 80GB HBM3   |"); DCGM's
// "<<<NULL>>>" names nothing.
//
// Units: MHz. Absent values are absent (a "N/A" clock is no clock).
// Lifetime: results own their strings. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ofu::formats {

struct NvidiaSmiGpu {
  std::string bus_id;  // "00000000:17:00.0"; empty in an excerpt without it
  std::string index;   // -q's Minor Number, the table's GPU column; may be empty
  std::string name;    // "NVIDIA H100 80GB HBM3"; may end in "..." (cut) or be empty
  std::string uuid;
  std::optional<double> sm_clock_mhz;
  std::size_t line = 0;        // the block's (or row's) first line, 1-based
  std::size_t name_line = 0;   // where `name` is; 0 without one
  std::size_t clock_line = 0;  // where sm_clock_mhz is; 0 without one
};

struct NvidiaSmiText {
  std::vector<NvidiaSmiGpu> gpus;
  std::size_t lines = 0;
  std::size_t skipped = 0;  // lines that are none of the above
};

bool LooksLikeNvidiaSmiQuery(std::string_view head);
NvidiaSmiText ReadNvidiaSmiQuery(std::string_view text);

bool LooksLikeNvidiaSmiTable(std::string_view head);
NvidiaSmiText ReadNvidiaSmiTable(std::string_view text);

struct GpuModelMention {
  std::string model;  // as written, blanks trimmed
  std::size_t line = 0;
  std::string where;       // "nvidia-smi table", "nvidia-smi -q", "dcgmi discovery"
  bool truncated = false;  // ends in "...": nvidia-smi cut it to fit
};

std::vector<GpuModelMention> FindGpuModelMentions(std::string_view text);

}  // namespace ofu::formats
