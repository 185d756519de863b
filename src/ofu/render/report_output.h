// Rendering a Report for people (table) and programs (JSON, CSV).
//
// JSON contract (docs/report-json.md; later tools rely on it):
//   {"source": {...}, "window_s": W,
//    "gpus": [{"uuid","key","model","sku","seconds","ofu","active_ofu",
//              "tensor_active","sm_clock_mhz","spec_clock_mhz","idle_fraction","share",
//              "gaps":[{"start_s","end_s","seconds"}],"problems":[...], ...}],
//    "overall": {"ofu","active_ofu","seconds","gpus", ...,
//                "coverage": {"gpus","gpus_with_ofu","gpus_left_out","gpu_seconds",
//                             "seconds_left_out","left_out":[keys]}},
//    "notes": [...],
//    "phases": [{"phase","kind","precision","start_s","end_s","gpu","windows","seconds",
//                "ofu","sm_clock_mhz","mfu","peak_tflops","ofu_minus_mfu_pp"}]}
// ("phases": replay reports only, [] when the recording carries none; the
// table shows them first, above the GPUs; phase_table.h).
// Ratios are numbers in 0..1 (OFU may exceed 1); an absent figure is null,
// never 0. CSV has one row per GPU and a last row "overall", absent = empty.
//
// A report of stored history (`ofu report --store` or `--prometheus`; Report::
// history_read present) has the same
// contract, with "source": {"kind": "store", "path", "since_s", "until_s",
// "job_id"} and a "jobs" array after "overall":
//   [{"job_id","user","job_name","scheduler","gpus","gpus_left_out","gpu_hours","ofu",
//     "active_ofu","observed_hours"}]
// The table lists the jobs under the GPUs; the CSV has no jobs.
//
// Thread-safety: pure functions of their arguments, callable from any thread.
#pragma once

#include <string>

#include "ofu/analysis/report.h"

namespace ofu::render {

// One writer per format, for a recording replayed and for a history read
// alike (Report::history_read says which).
std::string RenderJson(const analysis::Report& report);
std::string RenderTable(const analysis::Report& report);
std::string RenderCsv(const analysis::Report& report);

}  // namespace ofu::render
