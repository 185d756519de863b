// Writing a reconciliation (analysis/reconcile.h, `ofu reconcile`): a table
// for people; JSON (docs/cli.md, with the scatter points the HTML report
// plots: {job_id, expected_mfu, reported_mfu, flag}); CSV, one row per job.
// An absent figure is "-" in the table, null in JSON and empty in CSV.
//
// Thread-safety: pure functions of their argument.
#pragma once

#include <string>

#include "ofu/analysis/reconcile.h"

namespace ofu::render {

std::string RenderReconcileTable(const analysis::ReconcileReport& report);
std::string RenderReconcileJson(const analysis::ReconcileReport& report);
std::string RenderReconcileCsv(const analysis::ReconcileReport& report);

}  // namespace ofu::render
