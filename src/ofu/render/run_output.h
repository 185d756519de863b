// What `ofu run` shows at the end of a job: a text report for people (on
// stderr, so the job's own stdout stays clean) and, with --report FILE, JSON:
// `ofu report --format json`'s contract for the run's recording (the chosen
// GPUs) with one more key, "run":
//   {"command": [...], "exit_status": N, "seconds": S, "windows": W,
//    "gpus": {"rule", "why", "keys": [...], "shared": [...], "notes": [...]},
//    "ofu", "active_ofu", "stall_share", "stall_s",
//    "per_gpu": [{"key", "model", "ofu", "active_ofu", "clock_source", "stall_share",
//                 "phases": [{"kind", "start_s", "end_s", "seconds", "windows", "ofu"}]}],
//    "mfu": {"framework", "steps", "mfu", "logged_mfu", "flops_per_gpu", "ofu", "ofu_basis",
//            "ratio", "verdict", "explanation", "alternatives", "notes"} or null,
//    "mfu_missing": "why there is no MFU" (null with one), "notes": [...]}
// Phase times are seconds from the job's start. Ratios in 0..1; an absent
// figure is null, never 0.
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>

#include "ofu/analysis/report.h"
#include "ofu/analysis/run_report.h"

namespace ofu::render {

// `start_s` is the job's start on the recording's clock (epoch seconds).
std::string RenderRunText(const analysis::RunReport& run, double start_s);
std::string RenderRunJson(const analysis::Report& report, const analysis::RunReport& run, double start_s);

}  // namespace ofu::render
