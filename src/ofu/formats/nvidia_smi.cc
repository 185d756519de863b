#include "ofu/formats/nvidia_smi.h"

#include <charconv>
#include <cmath>

#include <re2/re2.h>

#include "ofu/formats/csv.h"
#include "ofu/formats/text_file.h"

namespace ofu::formats {
namespace {

// A -q line "    Key      : Value": its key and value, blanks trimmed.
struct KeyValue {
  std::string_view key;
  std::string_view value;
};

std::optional<KeyValue> KeyValueOf(std::string_view line) {
  const std::size_t colon = line.find(" : ");
  if (colon == std::string_view::npos) return std::nullopt;
  return KeyValue{TrimSpace(line.substr(0, colon)), TrimSpace(line.substr(colon + 3))};
}

std::optional<double> Mhz(std::string_view value) {
  if (!value.ends_with("MHz")) return std::nullopt;
  value = TrimSpace(value.substr(0, value.size() - 3));
  double v = 0;
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// "|   0  NVIDIA H100 80GB HBM3          On  |": index, name. The name runs
// to the persistence mode (On/Off) before the first inner bar.
const RE2& TableRow() {
  static const RE2 kRow(R"(^\|\s*(\d+)\s+(\S.*?)\s+(?:On|Off)\s*\|)");
  return kRow;
}

// "| 0      | Name: NVIDIA H100 80GB HBM3     |" of dcgmi discovery -l.
const RE2& DiscoveryName() {
  static const RE2 kName(R"(\|\s*Name:\s*([^|]*?)\s*\|)");
  return kName;
}

}  // namespace

bool LooksLikeNvidiaSmiQuery(std::string_view head) {
  for (std::string_view line : TextLines(head)) {
    if (line.find("NVSMI LOG") != std::string_view::npos) return true;
    const auto kv = KeyValueOf(line);
    if (kv && (kv->key == "Product Name" || (kv->key == "SM" && Mhz(kv->value)))) return true;
  }
  return false;
}

NvidiaSmiText ReadNvidiaSmiQuery(std::string_view text) {
  NvidiaSmiText out;
  const std::vector<std::string_view> lines = TextLines(text);
  out.lines = lines.size();
  std::string_view section;
  const auto current = [&out](std::size_t number) -> NvidiaSmiGpu& {
    if (out.gpus.empty()) out.gpus.push_back(NvidiaSmiGpu{.line = number});
    return out.gpus.back();
  };
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    const std::string_view line = lines[number - 1];
    const std::string_view trimmed = TrimSpace(line);
    if (trimmed.empty()) continue;
    const auto kv = KeyValueOf(line);
    if (!kv) {
      if (trimmed.starts_with("GPU ") && trimmed.find(':') != std::string_view::npos &&
          trimmed.find(' ', 4) == std::string_view::npos) {
        out.gpus.push_back(NvidiaSmiGpu{.bus_id = std::string(trimmed.substr(4)), .line = number});
        section = {};
      } else if (line.starts_with("    ") && !line.starts_with("        ")) {
        section = trimmed;  // a section header of a GPU block
      } else {
        ++out.skipped;
      }
      continue;
    }
    const bool in_gpu_block = line.starts_with("    ") && !line.starts_with("        ");
    if (in_gpu_block) section = {};
    if (in_gpu_block && kv->key == "Product Name") {
      current(number).name = std::string(kv->value);
      current(number).name_line = number;
    } else if (in_gpu_block && kv->key == "GPU UUID") {
      current(number).uuid = std::string(kv->value);
    } else if (in_gpu_block && kv->key == "Minor Number") {
      current(number).index = std::string(kv->value);
    } else if (section == "Clocks" && kv->key == "SM") {
      NvidiaSmiGpu& gpu = current(number);
      gpu.sm_clock_mhz = Mhz(kv->value);
      gpu.clock_line = gpu.sm_clock_mhz ? number : 0;
    }
  }
  return out;
}

bool LooksLikeNvidiaSmiTable(std::string_view head) {
  for (std::string_view line : TextLines(head)) {
    if (line.find("NVIDIA-SMI") != std::string_view::npos && line.find("Driver Version") != std::string_view::npos) {
      return true;
    }
    if (RE2::PartialMatch(line, TableRow())) return true;
  }
  return false;
}

NvidiaSmiText ReadNvidiaSmiTable(std::string_view text) {
  NvidiaSmiText out;
  const std::vector<std::string_view> lines = TextLines(text);
  out.lines = lines.size();
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    std::string index, name;
    if (RE2::PartialMatch(lines[number - 1], TableRow(), &index, &name)) {
      out.gpus.push_back(NvidiaSmiGpu{.index = index, .name = name, .line = number, .name_line = number});
    } else {
      ++out.skipped;
    }
  }
  return out;
}

std::vector<GpuModelMention> FindGpuModelMentions(std::string_view text) {
  std::vector<GpuModelMention> out;
  const std::vector<std::string_view> lines = TextLines(text);
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    const std::string_view line = lines[number - 1];
    std::string index, name, where;
    if (RE2::PartialMatch(line, TableRow(), &index, &name)) {
      where = "nvidia-smi table";
    } else if (RE2::PartialMatch(line, DiscoveryName(), &name)) {
      where = "dcgmi discovery";
    } else if (const auto kv = KeyValueOf(line); kv && kv->key == "Product Name") {
      name = std::string(kv->value);
      where = "nvidia-smi -q";
    } else {
      continue;
    }
    name = std::string(TrimSpace(name));
    if (name.empty() || name == "<<<NULL>>>" || name == "N/A") continue;
    const bool truncated = name.ends_with("...");
    out.push_back(GpuModelMention{std::move(name), number, std::move(where), truncated});
  }
  return out;
}

}  // namespace ofu::formats
