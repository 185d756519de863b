#include "ofu/render/report_output.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "ofu/analysis/cuda_core_advice.h"
#include "ofu/core/clock_events.h"
#include "ofu/core/clock_model.h"
#include "ofu/formats/csv.h"
#include "ofu/render/json_fields.h"

namespace ofu::render {

using analysis::AdviseCudaCores;
using analysis::CudaCoreAdvice;
using analysis::FleetCoverage;
using analysis::GpuReport;
using analysis::HistoryRead;
using analysis::JobTotals;
using analysis::Report;
using formats::CsvField;

namespace {

// ordered_json keeps keys in the order written: identity first, then figures.
using json = nlohmann::ordered_json;

template <typename T>
json OrNull(const std::optional<T>& v) {
  return render::OrNull<json>(v);
}

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

json ReasonsJson(const std::optional<std::uint64_t>& mask) {
  return mask ? json(ClockEventReasonNames(*mask)) : json(nullptr);
}

json ClockSourceJson(std::uint8_t sources) { return sources == 0 ? json(nullptr) : json(ClockSourcesName(sources)); }

json SummaryFields(const Summary& s) {
  return {
      {"seconds", s.seconds},
      {"ofu", OrNull(s.ofu)},
      {"ofu_low", OrNull(s.ofu_low)},
      {"ofu_high", OrNull(s.ofu_high)},
      {"clock_source", ClockSourceJson(s.clock_sources)},
      {"ofu_clock_mhz", OrNull(s.ofu_clock_mhz)},
      {"active_ofu", OrNull(s.active_ofu)},
      {"busy_seconds", s.busy_seconds},
      {"p10", OrNull(s.p10)},
      {"p50", OrNull(s.p50)},
      {"p90", OrNull(s.p90)},
      {"tensor_active", OrNull(s.tensor_active)},
      {"tensor_seconds", s.tensor_seconds},
      {"idle_fraction", OrNull(s.idle_fraction)},
      {"sm_clock_mhz", OrNull(s.sm_clock_mhz)},
      {"sm_clock_min_mhz", OrNull(s.sm_clock_min_mhz)},
      {"sm_clock_max_mhz", OrNull(s.sm_clock_max_mhz)},
      {"power_w", OrNull(s.power_w)},
      {"clock_event_reasons", ReasonsJson(s.clock_event_reasons)},
      {"windows", s.windows},
      {"windows_without_clock", s.windows_without_clock},
      {"non_tensor", NonTensorJson<json>(s.non_tensor)},
  };
}

// `added`: the report's added counters (Report::added_counters), each a key
// after the summary's figures, null for a GPU without it.
json GpuJson(const GpuReport& g, const std::vector<std::string>& added) {
  json j;
  // The identity (core/gpu_identity.h): each row under its name, null when
  // not known, and the fields of added rows under theirs.
  ForEachField(g.identity, [&](const IdentityField& field, const std::string& value) {
    j[std::string(field.name)] = field.never_null ? json(value) : OrNull(value);
  });
  j["model"] = OrNull(g.model);
  j["sku"] = g.spec ? json(g.spec->id) : json(nullptr);
  j["sku_name"] = g.spec ? json(g.spec->name) : json(nullptr);
  j["spec_clock_mhz"] = g.spec ? json(g.spec->SpecClockMhz()) : json(nullptr);
  j["k_arch"] = g.spec ? json(g.spec->k_arch) : json(nullptr);
  j["clock_model_source"] = g.spec && g.spec->ClockModelFor(g.identity.model) ? json(g.spec->clock_model_source)
                                                                              : json(nullptr);
  j["share"] = OrNull(g.share);
  j.update(SummaryFields(g.summary));
  for (const std::string& name : added) {
    const auto it = g.summary.added.find(name);
    j[name] = it != g.summary.added.end() ? json(it->second) : json(nullptr);
  }
  j["interval_s"] = g.windowed.interval_s;
  j["interval_assumed"] = g.windowed.interval_assumed;
  json gaps = json::array();
  for (const auto& gap : g.windowed.gaps) {
    gaps.push_back({{"start_s", gap.start_s}, {"end_s", gap.end_s}, {"seconds", gap.seconds()}});
  }
  j["gaps"] = std::move(gaps);
  j["problems"] = g.problems;
  return j;
}

std::string Ratio(const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : "-"; }
std::string Mhz(const std::optional<double>& v) { return v ? fmt::format("{:.0f}", *v) : "-"; }
std::string Fraction(const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", *v * 100) : "-"; }

// The half width of an OFU's range around it, "±0.013", scaled by `scale`
// (100 for percent); "" where the clock is not in doubt.
std::string PlusMinus(const std::optional<double>& ofu, const std::optional<double>& low,
                      const std::optional<double>& high, double scale, int digits) {
  if (!ofu || !low || !high) return "";
  const double half = std::max(*ofu - *low, *high - *ofu) * scale;
  if (half < 0.5 * std::pow(10.0, -digits)) return "";
  return fmt::format("±{:.{}f}", half, digits);
}

// The clock a figure used, short: "model", "reported", "exact", or joined
// by "+" where its windows differ; "-" for none.
std::string ClockColumn(std::uint8_t sources) {
  return sources == 0 ? std::string("-") : ClockSourcesName(sources, ClockSourceShortName);
}

std::string SourceLine(const Report& r) {
  std::string line = fmt::format("Replay of {}", r.source_name);
  if (r.synthetic.value_or(false)) {
    line += " -- SYNTHETIC recording (generated, not measured on a GPU)";
  } else if (r.synthetic.has_value()) {
    line += " -- recorded on real hardware";
  }
  if (!r.description.empty()) line += fmt::format("\n  {}", r.description);
  if (r.dcgmi_dmon) {
    line += fmt::format("\n  a dcgmi dmon table, without timestamps: {} interval{}, assumed {:g} s apart", r.scrapes,
                        r.scrapes == 1 ? "" : "s", r.assumed_interval_s);
  } else if (r.timestamps_assumed && r.scrapes == 1) {
    line += fmt::format("\n  the file has no timestamps: 1 scrape, taken to stand for the {:g} s before it",
                        r.assumed_interval_s);
  } else if (r.timestamps_assumed) {
    line += fmt::format("\n  the file has no timestamps: {} scrapes, assumed {:g} s apart", r.scrapes,
                        r.assumed_interval_s);
  }
  return line;
}

std::string GpuLabel(const GpuIdentity& id) {
  std::string label = id.hostname.empty() ? "" : id.hostname + ":";
  label += id.gpu_index.empty() ? id.key : id.gpu_index;
  if (!id.mig_instance.empty()) label += fmt::format(" gi{}", id.mig_instance);
  return label;
}

std::string CsvNumber(const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; }

// Everything after "source": the part both kinds of report share.
void AddReportJson(const Report& r, json& root) {
  root["window_s"] = r.window_s;
  root["gpus"] = json::array();
  for (const auto& g : r.gpus) root["gpus"].push_back(GpuJson(g, r.added_counters));
  const FleetCoverage& c = r.coverage;
  json overall = {{"gpus", c.gpus_with_ofu}};
  overall.update(SummaryFields(r.overall));
  overall["coverage"] = {{"gpus", c.gpus},
                         {"gpus_with_ofu", c.gpus_with_ofu},
                         {"gpus_left_out", c.left_out.size()},
                         {"gpu_seconds", c.gpu_seconds},
                         {"seconds_left_out", c.seconds_left_out},
                         {"left_out", c.left_out}};
  root["overall"] = std::move(overall);
  json advice = json::array();
  for (const CudaCoreAdvice& a : AdviseCudaCores(r)) {
    json piece = {{"kind", "cuda_cores"}, {"gpu", a.gpu}};
    AddCudaCoreAdviceFields(a, piece);
    advice.push_back(std::move(piece));
  }
  root["advice"] = std::move(advice);
  root["notes"] = r.notes;
}

std::string Tflops(const std::optional<double>& v) { return v ? fmt::format("{:.2f}", *v) : "-"; }

// The CUDA-core pipes under the OFU table, when any device has them.
std::string NonTensorTable(const Report& r, std::size_t label_width) {
  bool any = r.overall.non_tensor.any_activity();
  for (const auto& g : r.gpus) any = any || g.summary.non_tensor.any_activity();
  if (!any) return "";
  std::string out = "\nCUDA-core pipes (non-tensor work, not in OFU; the bound is an upper bound, docs/metrics.md):\n";
  // One 6-wide column per pipe, then the bound and its share.
  auto row = [&](const std::string& label, const auto& pipe_cell, const std::string& bound, const std::string& peak) {
    out += fmt::format("{:<{}}", label, label_width);
    for (const CudaCorePipeInfo& pipe : CudaCorePipes()) out += fmt::format(" {:>6}", pipe_cell(pipe));
    out += fmt::format(" {:>13} {:>10}\n", bound, peak);
  };
  row(
      "GPU", [](const CudaCorePipeInfo& pipe) { return std::string(pipe.label); }, "bound TFLOP/s", "% of peak");
  auto figures = [&](const std::string& label, const NonTensorFigures& n) {
    row(
        label, [&n](const CudaCorePipeInfo& pipe) { return Ratio(n[pipe.pipe]); }, Tflops(n.flops_upper_bound_tflops),
        Fraction(n.share_of_peak));
  };
  for (const auto& g : r.gpus) figures(GpuLabel(g.identity), g.summary.non_tensor);
  figures("overall", r.overall.non_tensor);
  return out;
}

// What "overall" stands for, when it is not simply every GPU's every second.
// A GPU left out is named as its row of the table is (coverage keeps keys).
std::string CoverageLine(const Report& r) {
  const FleetCoverage& c = r.coverage;
  if (c.left_out.empty() && c.seconds_left_out == 0) return "";
  std::string line = fmt::format("overall covers {} of {} GPUs, {:.0f} GPU-seconds", c.gpus_with_ofu, c.gpus,
                                 c.gpu_seconds);
  std::vector<std::string> names;
  for (const std::string& key : c.left_out) {
    const auto row = std::find_if(r.gpus.begin(), r.gpus.end(),
                                  [&key](const GpuReport& g) { return g.identity.key == key; });
    names.push_back(row == r.gpus.end() ? key : GpuLabel(row->identity));
  }
  if (!names.empty()) line += fmt::format("; left out: {}", fmt::join(names, ", "));
  if (c.seconds_left_out > 0)
    line += fmt::format(" ({:.0f} s of data without an OFU, see the notes)", c.seconds_left_out);
  return line + "\n";
}

// What the "run MHz" and "clock" columns mean, for the clock sources the
// table shows: which GPUs' OFU uses a measured model (and where it comes
// from), which the reported clock as it is: asked for (--clock reported) on
// a measured board, or because nobody measured the board.
std::string ClockLines(const Report& r) {
  std::string out;
  std::vector<std::string> reported, unmeasured;
  std::vector<const GpuSpec*> modelled;
  for (const auto& g : r.gpus) {
    const std::uint8_t sources = g.summary.clock_sources;
    if ((sources & static_cast<std::uint8_t>(ClockSource::kReported)) != 0) {
      const bool measured = g.spec != nullptr && g.spec->ClockModelFor(g.identity.model).has_value();
      (measured ? reported : unmeasured).push_back(GpuLabel(g.identity));
    }
    if ((sources & static_cast<std::uint8_t>(ClockSource::kMeasuredModel)) != 0 &&
        std::find(modelled.begin(), modelled.end(), g.spec) == modelled.end()) {
      modelled.push_back(g.spec);
    }
  }
  for (const GpuSpec* spec : modelled) {
    out += fmt::format(
        "clock: {} OFU uses the clock the SMs ran (run MHz), estimated from the reported SM clock by the model "
        "measured on {} (range: what the measurements leave open; docs/metrics.md#the-sm-clock)\n",
        spec->id, fmt::join(spec->clock_model_measured_on, ", "));
  }
  if (!reported.empty()) {
    out += fmt::format(
        "clock: {}: OFU uses the reported SM clock as it is, as asked (--clock reported); the board's measured "
        "model would correct it (docs/metrics.md#the-sm-clock)\n",
        fmt::join(reported, ", "));
  }
  if (!unmeasured.empty()) {
    out += fmt::format(
        "clock: {}: OFU uses the reported SM clock as it is; no measurement of this board's run clock, which read "
        "5-22 % below the reported one under tensor load on the H100 and H200 measured (docs/metrics.md#the-sm-clock)\n",
        fmt::join(unmeasured, ", "));
  }
  return out;
}

// The per-GPU table and its notes, under a source line.
std::string ReportTable(const Report& r, std::string out) {
  std::size_t label_width = 7;  // "overall"
  for (const auto& g : r.gpus) label_width = std::max(label_width, GpuLabel(g.identity).size());
  constexpr std::string_view kRow = "{:<{}} {:<10} {:>6} {:>7} {:>7} {:>6} {:>7} {:>7} {:>7} {:>5} {:>8} {:>5}  {}\n";
  out += fmt::format(kRow, "GPU", label_width, "SKU", "OFU", "range", "active", "tensor", "SM MHz", "run MHz", "f_spec",
                     "idle", "seconds", "gaps", "clock");
  for (const auto& g : r.gpus) {
    const Summary& s = g.summary;
    out += fmt::format(kRow, GpuLabel(g.identity), label_width, g.spec ? g.spec->id : "?", Ratio(s.ofu),
                       PlusMinus(s.ofu, s.ofu_low, s.ofu_high, 1, 3), Ratio(s.active_ofu), Ratio(s.tensor_active),
                       Mhz(s.sm_clock_mhz), Mhz(s.ofu_clock_mhz), g.spec ? Mhz(g.spec->SpecClockMhz()) : "-",
                       Fraction(s.idle_fraction), fmt::format("{:.0f}", s.seconds), g.windowed.gaps.size(),
                       ClockColumn(s.clock_sources));
  }
  const Summary& o = r.overall;
  out += fmt::format(kRow, "overall", label_width, "", Ratio(o.ofu), PlusMinus(o.ofu, o.ofu_low, o.ofu_high, 1, 3),
                     Ratio(o.active_ofu), Ratio(o.tensor_active), "", "", "", Fraction(o.idle_fraction),
                     fmt::format("{:.0f}", o.seconds), "", ClockColumn(o.clock_sources));
  out += CoverageLine(r);
  out += ClockLines(r);
  if (o.p50)
    out += fmt::format("\nwindow OFU over all GPUs ({:g} s windows): p10 {:.3f}  p50 {:.3f}  p90 {:.3f}\n", r.window_s,
                       *o.p10, *o.p50, *o.p90);
  out += NonTensorTable(r, label_width);
  for (const CudaCoreAdvice& a : AdviseCudaCores(r)) out += fmt::format("\nadvice: {}\n", a.text);
  for (const auto& note : r.notes) out += fmt::format("note: {}\n", note);
  for (const auto& g : r.gpus) {
    for (const auto& problem : g.problems) out += fmt::format("note: {}: {}\n", GpuLabel(g.identity), problem);
  }
  return out;
}

std::string JobsTable(const std::vector<JobTotals>& jobs) {
  if (jobs.empty()) return "";
  std::size_t id_width = 3, user_width = 4, name_width = 4;
  for (const auto& j : jobs) {
    id_width = std::max(id_width, j.job_id.size());
    user_width = std::max(user_width, j.user.size());
    name_width = std::max(name_width, j.job_name.size());
  }
  constexpr std::string_view kRow = "{:<{}} {:<{}} {:<{}} {:>4} {:>9} {:>6} {:>7} {:>10}\n";
  std::string out = "\n";
  out += fmt::format(kRow, "JOB", id_width, "USER", user_width, "NAME", name_width, "GPUS", "GPU-hours", "OFU",
                     "active", "observed-h");
  for (const auto& j : jobs) {
    out += fmt::format(kRow, j.job_id, id_width, j.user, user_width, j.job_name, name_width, j.gpus,
                       fmt::format("{:.3f}", j.gpu_hours), Ratio(j.ofu), Ratio(j.active_ofu),
                       fmt::format("{:.3f}", j.observed_hours));
  }
  return out;
}

std::string Percent(const std::optional<double>& v) { return v ? fmt::format("{:.1f}", *v * 100) : "-"; }

// The phases the recording carries, OFU beside true MFU, before the GPU
// table: what a recording of known work teaches is how close OFU comes.
std::string PhaseTable(const Report& r) {
  if (r.phases.empty()) return "";
  std::size_t phase_width = 5, gpu_width = 3;
  for (const auto& p : r.phases) {
    phase_width = std::max(phase_width, p.phase.size());
    gpu_width = std::max(gpu_width, GpuLabel(p.gpu).size());
  }
  constexpr std::string_view kRow = "{:<{}} {:<{}} {:<9} {:>7} {:>7} {:>6} {:>7} {:>6} {:>6} {:>6} {:>8}  {}\n";
  std::string out =
      "Phases (OFU over the recorded windows wholly inside each phase; MFU as the recording states it):\n";
  out += fmt::format(kRow, "phase", phase_width, "GPU", gpu_width, "precision", "peak TF", "seconds", "SM MHz",
                     "run MHz", "OFU %", "range", "MFU %", "OFU-MFU", "clock");
  for (const auto& p : r.phases) {
    out += fmt::format(kRow, p.phase, phase_width, GpuLabel(p.gpu), gpu_width,
                       p.precision.empty() ? p.kind : p.precision,
                       p.peak_tflops ? fmt::format("{:g}", *p.peak_tflops) : "-",
                       fmt::format("{:.1f}", p.end_s - p.start_s), Mhz(p.sm_clock_mhz), Mhz(p.ofu_clock_mhz),
                       Percent(p.ofu), PlusMinus(p.ofu, p.ofu_low, p.ofu_high, 100, 1), Percent(p.mfu),
                       p.ofu_minus_mfu_pp ? fmt::format("{:+.1f} pp", *p.ofu_minus_mfu_pp) : "-",
                       ClockColumn(p.clock_sources));
  }
  out += "OFU counts tensor-pipe work only; MFU = the workload's own FLOPs over its time / the peak TF shown.\n\n";
  return out;
}

json PhasesJson(const Report& r) {
  json phases = json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"phase", p.phase},
                      {"kind", OrNull(p.kind)},
                      {"precision", OrNull(p.precision)},
                      {"start_s", p.start_s},
                      {"end_s", p.end_s},
                      {"gpu", p.gpu.key},
                      {"windows", p.windows},
                      {"seconds", p.seconds},
                      {"ofu", OrNull(p.ofu)},
                      {"ofu_low", OrNull(p.ofu_low)},
                      {"ofu_high", OrNull(p.ofu_high)},
                      {"clock_source", ClockSourceJson(p.clock_sources)},
                      {"ofu_clock_mhz", OrNull(p.ofu_clock_mhz)},
                      {"sm_clock_mhz", OrNull(p.sm_clock_mhz)},
                      {"mfu", OrNull(p.mfu)},
                      {"peak_tflops", OrNull(p.peak_tflops)},
                      {"ofu_minus_mfu_pp", OrNull(p.ofu_minus_mfu_pp)}});
  }
  return phases;
}

std::string TimeOrDash(const std::optional<double>& t) { return t ? fmt::format("{:.3f}", *t) : "-"; }

// Where the figures came from: a recording replayed, or a history read.
json SourceJson(const Report& r) {
  if (!r.history_read) {
    return {{"kind", "replay"},
            {"path", r.source_name},
            {"synthetic", OrNull(r.synthetic)},
            {"description", OrNull(r.description)},
            {"timestamps_assumed", r.timestamps_assumed},
            {"scrapes", r.timestamps_assumed ? json(r.scrapes) : json(nullptr)}};
  }
  const HistoryRead& h = *r.history_read;
  return {{"kind", "store"},
          {"path", r.source_name},
          {"since_s", OrNull(h.query.since_s)},
          {"until_s", OrNull(h.query.until_s)},
          {"job_id", OrNull(h.query.job_id)},
          {"method", h.method},
          {"step_s", h.step_s > 0 ? json(h.step_s) : json(nullptr)},
          {"rollups", h.rollups},
          {"windows_in_rollups", h.windows_in_rollups}};
}

json JobsJson(const std::vector<JobTotals>& jobs) {
  json out = json::array();
  for (const auto& j : jobs) {
    out.push_back({{"job_id", j.job_id},
                   {"user", OrNull(j.user)},
                   {"job_name", OrNull(j.job_name)},
                   {"scheduler", OrNull(j.scheduler)},
                   {"gpus", j.gpus},
                   {"gpus_left_out", j.gpus_left_out},
                   {"gpu_hours", j.gpu_hours},
                   {"ofu", OrNull(j.ofu)},
                   {"active_ofu", OrNull(j.active_ofu)},
                   {"observed_hours", j.observed_hours},
                   {"non_tensor", NonTensorJson<json>(j.non_tensor)}});
  }
  return out;
}

// The lines above a history report's table: the range, and how it was read.
std::string HistoryLines(const Report& r) {
  const HistoryRead& h = *r.history_read;
  std::string line = fmt::format("History store {} (windows ending in ({}, {}]{})", r.source_name,
                                 TimeOrDash(h.query.since_s), TimeOrDash(h.query.until_s),
                                 h.query.job_id ? ", job " + *h.query.job_id : "");
  if (h.method != "windows")
    line += fmt::format("\nFigures summed by the server from the agent's counters ({})", h.method);
  if (h.step_s > 0)
    line += fmt::format("\nWindows of {:g} s read by the server from the counters, not each scrape", h.step_s);
  if (h.rollups > 0) {
    line += fmt::format("\n{} windows read as {} hourly sums (percentiles within 0.05 pp)", h.windows_in_rollups,
                        h.rollups);
  }
  return line;
}

}  // namespace

// A replay's JSON ends with its phases, a history's with its jobs.
std::string RenderJson(const Report& r) {
  json root;
  root["source"] = SourceJson(r);
  AddReportJson(r, root);
  if (r.history_read) {
    root["jobs"] = JobsJson(r.jobs);
  } else {
    root["phases"] = PhasesJson(r);
  }
  return root.dump(2) + "\n";
}

std::string RenderTable(const Report& r) {
  if (!r.history_read) return ReportTable(r, SourceLine(r) + "\n\n" + PhaseTable(r));
  return ReportTable(r, HistoryLines(r) + "\n\n") + JobsTable(r.jobs);
}

std::string RenderCsv(const Report& r) {
  std::string out =
      "gpu,uuid,model,sku,seconds,ofu,active_ofu,p10,p50,p90,tensor_active,sm_clock_mhz,spec_clock_mhz,"
      "idle_fraction,gaps,";
  for (const CudaCorePipeInfo& pipe : CudaCorePipes()) out += fmt::format("{},", pipe.key());
  out += "non_tensor_tflops_upper_bound,non_tensor_share_of_peak,ofu_low,ofu_high,ofu_clock_mhz,clock_source\n";
  auto row = [&out](const std::string& name, const std::string& uuid, const std::string& model, const std::string& sku,
                    const Summary& s, const std::optional<double>& spec_clock, const std::string& gaps) {
    const NonTensorFigures& n = s.non_tensor;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},", CsvField(name), CsvField(uuid), CsvField(model),
                       sku, s.seconds, CsvNumber(s.ofu), CsvNumber(s.active_ofu), CsvNumber(s.p10), CsvNumber(s.p50),
                       CsvNumber(s.p90), CsvNumber(s.tensor_active), CsvNumber(s.sm_clock_mhz), CsvNumber(spec_clock),
                       CsvNumber(s.idle_fraction), gaps);
    for (const std::optional<double>& active : n.active) out += fmt::format("{},", CsvNumber(active));
    out += fmt::format("{},{},{},{},{},{}\n", CsvNumber(n.flops_upper_bound_tflops), CsvNumber(n.share_of_peak),
                       CsvNumber(s.ofu_low), CsvNumber(s.ofu_high), CsvNumber(s.ofu_clock_mhz),
                       ClockSourcesName(s.clock_sources));
  };
  for (const auto& g : r.gpus) {
    row(g.identity.key, g.identity.uuid, g.model, g.spec ? g.spec->id : "", g.summary,
        g.spec ? std::optional(g.spec->SpecClockMhz()) : std::nullopt, std::to_string(g.windowed.gaps.size()));
  }
  row("overall", "", "", "", r.overall, std::nullopt, "");
  return out;
}

}  // namespace ofu::render
