#include "ofu/sources/counter_texts.h"

#include <array>

#include "ofu/formats/counter_table.h"
#include "ofu/formats/dcgmi_dmon.h"
#include "ofu/formats/nvidia_smi.h"
#include "ofu/formats/prometheus_api.h"

namespace ofu::sources {
namespace {

// nvidia-smi's texts hold no dcgm-exporter metric: one that does is not theirs.
bool NoDcgmMetric(std::string_view head) { return head.find("DCGM_FI_") == std::string_view::npos; }

bool LooksLikeSmiQuery(std::string_view head) { return NoDcgmMetric(head) && formats::LooksLikeNvidiaSmiQuery(head); }
bool LooksLikeSmiTable(std::string_view head) { return NoDcgmMetric(head) && formats::LooksLikeNvidiaSmiTable(head); }
bool LooksLikeSmiDmon(std::string_view head) {
  return NoDcgmMetric(head) && formats::LooksLikeCounterTable(head) && head.find("pclk") != std::string_view::npos;
}
bool LooksLikeSmiCsv(std::string_view head) {
  return NoDcgmMetric(head) && formats::LooksLikeCounterTable(head) &&
         (head.find("clocks.") != std::string_view::npos || head.find("--query-gpu") != std::string_view::npos);
}
bool Everything(std::string_view) { return true; }

constexpr std::string_view kNvidiaSmiNoTensor =
    "no tensor activity, which nvidia-smi cannot give (only DCGM's profiling field 1004 has it): use `dcgmi dmon -e "
    "1004,100` or dcgm-exporter";

const std::array<CounterTextFormat, 8> kFormats = {{
    {CounterTextKind::kDcgmiDmon,
     "dcgmi dmon table",
     "a '#Entity' header line before any Prometheus line",
     "the TENSO (1004), SMCLK (100) and other columns of GPUs and GPU instances",
     "",
     1.0,
     formats::LooksLikeDcgmiDmon,
     {"#Entity   TENSO   SMCLK\nID\nGPU 0     0.500   1980\n", 1, 1980, 0.5, ""}},
    {CounterTextKind::kPrometheusApiJson,
     "Prometheus query API answer (JSON)",
     "a line starting with '{' whose object has \"status\" and \"data\" (/api/v1/query, /api/v1/query_range)",
     "every series of a vector or matrix named by __name__, as the same samples in exposition text would be",
     "",
     0.0,
     formats::LooksLikePrometheusApiJson,
     {R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"__name__":"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE","gpu":"0","UUID":"GPU-a","modelName":"NVIDIA H100 80GB HBM3"},"value":[1700000000,"0.5"]},)"
      R"({"metric":{"__name__":"DCGM_FI_DEV_SM_CLOCK","gpu":"0","UUID":"GPU-a","modelName":"NVIDIA H100 80GB HBM3"},"value":[1700000000,"1980"]}]}})"
      "\n",
      1, 1980, 0.5, "NVIDIA H100 80GB HBM3"}},
    {CounterTextKind::kNvidiaSmiQuery,
     "nvidia-smi -q report",
     "'NVSMI LOG', a 'Product Name : ...' line or an 'SM : N MHz' line",
     "per GPU block: the SM clock of its Clocks section (one reading), Product Name, Minor Number",
     kNvidiaSmiNoTensor,
     1.0,
     LooksLikeSmiQuery,
     {"GPU 00000000:17:00.0\n    Product Name                          : NVIDIA A100-SXM4-80GB\n    Clocks\n"
      "        SM                                : 1410 MHz\n",
      1, 1410, std::nullopt, "NVIDIA A100-SXM4-80GB"}},
    {CounterTextKind::kNvidiaSmiTable,
     "nvidia-smi table",
     "an 'NVIDIA-SMI ... Driver Version' line or a GPU row",
     "each GPU's index and name (no clock: the table has none)",
     kNvidiaSmiNoTensor,
     1.0,
     LooksLikeSmiTable,
     {"| NVIDIA-SMI 550.90.07              Driver Version: 550.90.07      CUDA Version: 12.4     |\n"
      "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:19:00.0 Off |                    0 |\n",
      1, std::nullopt, std::nullopt, "NVIDIA H100 80GB HBM3"}},
    {CounterTextKind::kNvidiaSmiDmon,
     "nvidia-smi dmon table",
     "a '# gpu ... pclk' header",
     "the SM clock (pclk) per GPU per row; rows 1 s apart (dmon's default -d 1)",
     kNvidiaSmiNoTensor,
     1.0,
     LooksLikeSmiDmon,
     {"# gpu   pwr  gtemp  mtemp    sm   mem   enc   dec  mclk  pclk\n"
      "# Idx     W      C      C     %     %     %     %   MHz   MHz\n"
      "    0   250     60      -    98    40     0     0  2619  1980\n",
      1, 1980, std::nullopt, ""}},
    {CounterTextKind::kNvidiaSmiQueryCsv,
     "nvidia-smi --query-gpu CSV",
     "a comma-separated header of clocks.* columns, or the --query-gpu command line",
     "clocks.sm / clocks.current.sm per row (index and name where asked for); rows 1 s apart (-l 1)",
     kNvidiaSmiNoTensor,
     1.0,
     LooksLikeSmiCsv,
     {"index, name, clocks.current.sm [MHz]\n0, NVIDIA H100 80GB HBM3, 1980 MHz\n", 1, 1980, std::nullopt,
      "NVIDIA H100 80GB HBM3"}},
    {CounterTextKind::kNamedColumnTable,
     "table with named columns (generic rule)",
     "a header naming a clock or tensor column (SM_CLK, sm_clock, clocks.sm, pclk, TENSO, tensor, "
     "PIPE_TENSOR_ACTIVE) and rows with as many cells",
     "GPU index, name, SM clock (MHz) and tensor activity (0..1, or % where the header says) by column name; rows "
     "1 s apart",
     "",
     1.0,
     formats::LooksLikeCounterTable,
     {"GPU  SM_CLK  TENSOR\n0    1755    0.25\n", 1, 1755, 0.25, ""}},
    {CounterTextKind::kExposition,
     "dcgm-exporter / OpenMetrics exposition",
     "anything no row above claims",
     "the dcgm-exporter metrics of dcgm_exporter_names.h (sources/replay.h)",
     "",
     0.0,
     Everything,
     {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 0.5\n"
      "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA H100 80GB HBM3\"} 1980\n",
      1, 1980, 0.5, "NVIDIA H100 80GB HBM3"}},
}};

}  // namespace

std::span<const CounterTextFormat> CounterTextFormats() { return kFormats; }

const CounterTextFormat& RecogniseCounterText(std::string_view head) {
  for (const CounterTextFormat& format : kFormats) {
    if (format.looks_like(head)) return format;
  }
  return kFormats.back();
}

}  // namespace ofu::sources
