// The JSON a Prometheus-compatible query API answers (/api/v1/query and
// /api/v1/query_range of Prometheus, Thanos, Mimir, VictoriaMetrics):
//
//   {"status":"success","data":{"resultType":"vector"|"matrix",
//     "result":[{"metric":{"__name__":"...",...},"value":[t,"v"]}       vector
//               {"metric":{...},"values":[[t,"v"],...]}]}}              matrix
//   {"status":"error","errorType":"...","error":"..."}
//
// Extra members (VictoriaMetrics's "isPartial", "stats", warnings) are
// ignored. Times are seconds since the epoch (a number, fractional or not);
// values are strings as Go formats floats ("NaN", "+Inf" included).
//
// Text around the JSON object, as people paste answers (a curl command and
// its progress meter, "Handling connection for 9090", a ``` fence):
// FindPrometheusApiJson gives where the object is, so callers can name the
// lines around it.
//
// The answer is read as it is parsed (nlohmann's SAX interface): no
// document of the whole text is held beside the series it gives, which
// halved the memory and the CPU of a 10,000-GPU month's report
// (docs/BENCHMARKS.md). A member given twice counts as its last occurrence.
//
// Errors: kMalformedInput "<source>: ..." for text that is not JSON, a
// success without a vector or matrix, a series without "metric" or without
// samples, a sample that is not [time, "value"].
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ofu/core/result.h"

namespace ofu::formats {

// One series of an answer: its labels (with __name__ where the query kept it)
// and its (time s, value) samples in time order; one sample for a vector.
struct PromSeries {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<double, double>> samples;

  const std::string& Label(const std::string& name) const;
};

struct PromApiAnswer {
  std::string status;       // "success" or "error"
  std::string error_type;   // with status "error"
  std::string error;        // with status "error"
  std::string result_type;  // "vector" or "matrix" with status "success"
  std::vector<PromSeries> series;
};

// Where a pasted answer's JSON object is: from the first line that starts
// (after blanks) with '{' to the last '}' of the text. `found` false when
// there is none, or when that line comes after a line of Prometheus text.
struct PromApiSpan {
  bool found = false;
  std::size_t begin = 0, end = 0;             // byte offsets, [begin, end)
  std::size_t first_line = 0, last_line = 0;  // 1-based
};
PromApiSpan FindPrometheusApiJson(std::string_view text);

// True when `head` holds the start of such an answer: a '{' line whose
// object has "status" and "data" or "resultType" in the head.
bool LooksLikePrometheusApiJson(std::string_view head);

// The message of the error for text that is not JSON at all.
std::string NotPrometheusApiJson(std::string_view source_name);

// The answer in `json_text` (just the JSON). A "status":"error" answer is
// returned as such, not as an error.
Result<PromApiAnswer> ReadPrometheusApiAnswer(std::string_view json_text, std::string_view source_name);

}  // namespace ofu::formats
