// Draws the OFU report from the JSON in #ofu-data (html_report.h says what
// it holds). Every string from the data goes into the page as text
// (textContent, setAttribute), never as markup. Charts are SVG; tooltips are
// <title> elements. When everything is drawn: body[data-rendered="ok"].
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("ofu-data").textContent);
  const root = document.getElementById("ofu-report");
  const SVG_NS = "http://www.w3.org/2000/svg";
  // Okabe-Ito colours: distinguishable with colour-vision deficiencies.
  const BLUE = "#0072b2", VERMILLION = "#d55e00", PURPLE = "#cc79a7", GREEN = "#009e73", ORANGE = "#e69f00";

  // ---- DOM helpers -------------------------------------------------------

  function el(tag, attrs, parent) {
    const node = document.createElement(tag);
    setAll(node, attrs);
    if (parent) parent.appendChild(node);
    return node;
  }
  function svg(tag, attrs, parent) {
    const node = document.createElementNS(SVG_NS, tag);
    setAll(node, attrs);
    if (parent) parent.appendChild(node);
    return node;
  }
  function setAll(node, attrs) {
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null) continue;
      if (key === "text") node.textContent = String(value);
      else node.setAttribute(key, String(value));
    }
  }
  function tooltip(node, text) {
    svg("title", { text: text }, node);
    return node;
  }
  // A chart as wide as its parent in pixels, so that one unit is one pixel
  // and its text is the size the style sheet says, on a phone as on a wide
  // screen (a fixed viewBox scaled with the page made it larger or smaller
  // than the page's text). Returns the svg; its width is svg.W.
  function innerWidth(parent, fallback) {
    const style = getComputedStyle(parent);
    const inner = parent.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return inner > 0 ? Math.floor(inner) : fallback;
  }
  function chartOf(parent, height, label) {
    const W = Math.max(240, innerWidth(parent, 600));
    const node = svg("svg", { viewBox: "0 0 " + W + " " + height, width: W, height: height, role: "img", "aria-label": label }, parent);
    node.W = W;
    return node;
  }

  // ---- Formatting --------------------------------------------------------

  function pct(v, digits) {
    return v === null || v === undefined ? "–" : (100 * v).toFixed(digits === undefined ? 1 : digits) + " %";
  }
  function num(v, digits) {
    return v === null || v === undefined ? "–" : v.toFixed(digits);
  }
  // GPU-hours with three significant digits below 10, so a short run reads
  // 0.0208, not 0.0.
  function hours(h) {
    return h >= 10 || h === 0 ? h.toFixed(1) : String(+h.toPrecision(3));
  }
  function pad(n) {
    return String(n).padStart(2, "0");
  }
  // Times are UTC, said once in the header, so the page reads the same everywhere.
  function utc(t, parts) {
    const d = new Date(t * 1000);
    const date = d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate());
    const time = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
    if (parts === "date") return date;
    if (parts === "time") return time;
    if (parts === "seconds") return time + ":" + pad(d.getUTCSeconds());
    return date + " " + time;
  }
  function duration(s) {
    if (s < 60) return s + " s";
    if (s < 3600) return s / 60 + " min";
    if (s < 86400) return s / 3600 + " h";
    return s / 86400 + " d";
  }
  // Seconds since the run's start, for people: "45 s", "12.5 min", "3.2 h".
  function elapsed(s) {
    if (s < 120) return +s.toFixed(1) + " s";
    if (s < 7200) return +(s / 60).toFixed(1) + " min";
    return +(s / 3600).toFixed(2) + " h";
  }
  function jobLabel(job) {
    return job.job_name ? job.job_id + " · " + job.job_name : job.job_id;
  }
  function gpuLabel(gpu) {
    const where = gpu.hostname ? gpu.hostname + " / " : "";
    return where + "GPU " + gpu.index;
  }

  // ---- Work outside the tensor cores -------------------------------------

  // The figures of a "non_tensor" object, in table order; null: not measured.
  // Its pipes come from the data (the C++ pipe table), the bound after them.
  const PIPE_FIELDS = data.cuda_core_pipes.map((p) => ({ key: p.key, head: p.label + " pipe", format: (v) => pct(v) }));
  const NON_TENSOR_FIELDS = PIPE_FIELDS.concat([
    { key: "flops_upper_bound_tflops", head: "non-tensor bound (TFLOP/s)", format: (v) => num(v, 1) },
    { key: "share_of_peak", head: "of the CUDA-core peak", format: (v) => pct(v) },
  ]);
  function hasNonTensor(nt) {
    return NON_TENSOR_FIELDS.some((f) => nt[f.key] !== null);
  }
  // One line for tooltips and job cards; empty when nothing was measured.
  function nonTensorText(nt) {
    const parts = [];
    for (const f of PIPE_FIELDS) if (nt[f.key] !== null) parts.push(f.head + " " + pct(nt[f.key]));
    if (nt.flops_upper_bound_tflops !== null) parts.push("≤ " + num(nt.flops_upper_bound_tflops, 1) + " TFLOP/s on CUDA cores");
    return parts.join(" · ");
  }

  // ---- Scales and ticks --------------------------------------------------

  function niceStep(span, count) {
    const raw = span / Math.max(count, 1);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
    return 10 * power;
  }
  function niceMax(v) {
    if (!(v > 0)) return 1;
    const step = niceStep(v, 5);
    return Math.ceil(v / step - 1e-9) * step;
  }
  function valueTicks(max, count) {
    const step = niceStep(max, count);
    const ticks = [];
    for (let v = 0; v <= max + step * 1e-6; v += step) ticks.push(v);
    return ticks;
  }
  const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
                      2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400];
  function timeTicks(t0, t1, count) {
    const span = Math.max(t1 - t0, 1);
    let step = TIME_STEPS[TIME_STEPS.length - 1];
    for (const s of TIME_STEPS) if (span / s <= count) { step = s; break; }
    const ticks = [];
    for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
    const format = step >= 86400 ? "date" : step < 60 ? "seconds" : "time";
    return { ticks: ticks, label: (t, i) => (format === "time" && (i === 0 || t % 86400 === 0) ? utc(t) : utc(t, format)) };
  }
  function linear(d0, d1, r0, r1) {
    const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
    return (v) => r0 + (v - d0) * k;
  }

  // ---- Axes --------------------------------------------------------------

  // A frame with horizontal grid lines (OFU or MFU as %) and a time or value
  // axis at the bottom; returns the scales.
  function frame(parent, box, xDomain, yMax, xAxis) {
    const x = linear(xDomain[0], xDomain[1], box.left, box.right);
    const y = linear(0, yMax, box.bottom, box.top);
    const g = svg("g", { class: "axes" }, parent);
    for (const v of valueTicks(yMax, 4)) {
      const tick = svg("g", { class: "tick" }, g);
      svg("line", { x1: box.left, x2: box.right, y1: y(v), y2: y(v) }, tick);
      svg("text", { x: box.left - 6, y: y(v) + 4, "text-anchor": "end", text: Math.round(v * 100) + "%" }, tick);
    }
    svg("line", { class: "axis", x1: box.left, x2: box.right, y1: box.bottom, y2: box.bottom }, g);
    if (xAxis === "elapsed") {
      const span = xDomain[1] - xDomain[0], step = niceStep(Math.max(span, 1), Math.max(2, Math.floor((box.right - box.left) / 90)));
      for (let v = 0; v <= span + step * 1e-6; v += step) {
        svg("line", { class: "axis", x1: x(xDomain[0] + v), x2: x(xDomain[0] + v), y1: box.bottom, y2: box.bottom + 4 }, g);
        svg("text", { x: x(xDomain[0] + v), y: box.bottom + 17, "text-anchor": "middle", text: elapsed(v) }, g);
      }
    } else if (xAxis === "time") {
      const t = timeTicks(xDomain[0], xDomain[1], Math.max(2, Math.floor((box.right - box.left) / 130)));
      let lastEnd = -Infinity;
      t.ticks.forEach((v, i) => {
        svg("line", { class: "axis", x1: x(v), x2: x(v), y1: box.bottom, y2: box.bottom + 4 }, g);
        // A label near an end is anchored inside the chart; one that would
        // run into the label before it (about 7.5 px a character) is left out.
        const label = t.label(v, i), width = 7.5 * label.length;
        const anchor = x(v) - box.left < width / 2 ? "start" : box.right - x(v) < width / 2 ? "end" : "middle";
        const start = anchor === "start" ? x(v) : anchor === "end" ? x(v) - width : x(v) - width / 2;
        if (start < lastEnd + 8) return;
        lastEnd = start + width;
        svg("text", { x: x(v), y: box.bottom + 16, "text-anchor": anchor, text: label }, g);
      });
    } else {
      for (const v of valueTicks(xDomain[1], 4)) {
        svg("line", { class: "axis", x1: x(v), x2: x(v), y1: box.bottom, y2: box.bottom + 4 }, g);
        svg("text", { x: x(v), y: box.bottom + 16, "text-anchor": "middle", text: Math.round(v * 100) + "%" }, g);
      }
    }
    return { x: x, y: y };
  }

  function markerColor(kind) {
    return /shift|precision/i.test(kind) ? PURPLE : /improve/i.test(kind) ? GREEN : VERMILLION;
  }
  function markerText(m) {
    const change = m.ratio === null ? "" : m.ratio < 1 ? (1 / m.ratio).toFixed(1) + "× lower" : m.ratio.toFixed(1) + "× higher";
    return [m.kind, change].filter(Boolean).join(" · ");
  }
  function markerTooltip(m) {
    return markerText(m) + " at " + utc(m.t_s, "seconds") + " UTC" +
      (m.before_ofu !== null || m.after_ofu !== null ? "\nOFU " + pct(m.before_ofu) + " → " + pct(m.after_ofu) : "") +
      (m.description ? "\n" + m.description : "");
  }
  function markersFor(field, value) {
    return (data.markers || []).filter((m) => m[field] !== "" && m[field] === value);
  }

  // ---- Header and summary ------------------------------------------------

  function drawHeader() {
    if (data.synthetic) {
      el("div", { class: "synthetic", role: "note", "data-synthetic": "true",
                  text: "SYNTHETIC DATA — made up to demonstrate ofu, not measured on any GPU." }, root);
    }
    const header = el("header", { class: "report" }, root);
    el("h1", { text: data.title }, header);
    const q = data.query;
    const range = data.start_s === null ? "no stored windows" : utc(data.start_s) + " to " + utc(data.end_s) + " UTC";
    const asked = [q.job_id !== null ? "job " + q.job_id : "", q.since_s !== null ? "since " + utc(q.since_s) : "",
                   q.until_s !== null ? "until " + utc(q.until_s) : ""].filter(Boolean).join(", ");
    el("div", { class: "meta", text: "Source: " + data.source + (asked ? " (" + asked + ")" : "") }, header);
    el("div", { class: "meta", text: "Data: " + range + (data.bucket_s ? " · one point per " + duration(data.bucket_s) : "") +
                " · generated " + utc(data.generated_at_s) + " UTC" }, header);

    const cards = el("div", { class: "cards" }, root);
    const card = (value, label) => {
      const c = el("div", { class: "card" }, cards);
      el("div", { class: "value", text: value }, c);
      el("div", { class: "label", text: label }, c);
    };
    const run = data.run_page && data.run_page.run;
    card(pct(data.overall_ofu), (data.run_page ? "OFU" : "Fleet OFU") + (data.clock_source ? " (SM clock: " + data.clock_source + ")" : ""));
    if (run) {
      card(pct(run.mfu), "MFU the job printed" + (run.mfu_ofu !== null ? " (OFU " + pct(run.mfu_ofu) + " over its " + run.ofu_basis + ")" : ""));
      if (run.stall_share !== null) card(pct(run.stall_share), "GPU time in stalls");
    }
    card(String(data.gpus_total), "GPUs");
    if (!data.run_page) card(String(data.jobs_total), "Jobs");
    card(hours(data.observed_hours), "Observed GPU-hours");
    if (data.scatter) card(String(data.scatter.points.filter((p) => p.flagged).length), "Jobs flagged (OFU ≠ MFU)");
    if (data.markers) card(String(data.markers.length), "Regressions and shifts");
    const nt = data.overall_non_tensor;
    if (nt.fp32_active !== null) card(pct(nt.fp32_active), (data.run_page ? "" : "Fleet ") + "FP32 pipe (CUDA cores)");
    if (nt.flops_upper_bound_tflops !== null) card(num(nt.flops_upper_bound_tflops, 1), "Non-tensor TFLOP/s per GPU (bound)");
    if (data.kernel_findings) card(String(data.kernel_findings.gemms.length), "GEMM findings (trace)");
    if (data.cuda_core_advice_total) card(String(data.cuda_core_advice_total), "Math on CUDA cores (advice)");
  }

  function panel(id, heading, intro) {
    const section = el("section", { class: "panel", id: id }, root);
    el("h2", { text: heading }, section);
    if (intro) el("div", { class: "intro", text: intro }, section);
    return section;
  }
  function absent(parent, text) {
    el("p", { class: "absent", text: text }, parent);
  }
  function leftOut(parent, shown, total, what) {
    if (total > shown) absent(parent, "Showing " + shown + " of " + total + " " + what + " (those with the most observed time); the totals and distributions cover all.");
  }

  // ---- Work outside the tensor cores: advice and figures -----------------

  function drawNonTensor() {
    const th = data.cuda_core_thresholds;
    const section = panel("non-tensor", "Tensor cores or CUDA cores?",
      "OFU counts only the tensor cores. Math on the CUDA cores (FP32 GEMMs without TF32 or bf16, elementwise " +
      "work) shows in the FP64, FP32 and FP16 pipes instead. The non-tensor bound is an upper bound on that work's " +
      "FLOP rate: pipe activity counts issue cycles, not useful FLOPs (docs/metrics.md).");
    const rows = data.jobs.map((j) => ({ kind: "job", id: j.job_id, label: jobLabel(j), ofu: j.ofu, nt: j.non_tensor }))
      .concat(data.gpus.map((g) => ({ kind: "gpu", id: g.uuid, label: gpuLabel(g), ofu: g.ofu, nt: g.non_tensor })));
    const measured = hasNonTensor(data.overall_non_tensor) || rows.some((r) => hasNonTensor(r.nt));
    if (!measured) {
      return absent(section, "No CUDA-core pipe counters in this data (FP64/FP32/FP16 pipe activity: DCGM fields " +
                             "1006–1008, NVML GPM metrics 11–13), so work on the CUDA cores cannot be told from idle " +
                             "time here; only OFU is shown.");
    }
    if (data.cuda_core_advice.length) {
      const list = el("ul", { class: "advice" }, section);
      for (const a of data.cuda_core_advice) {
        el("li", { "data-advice-job": a.job_id || null, "data-advice-gpu": a.gpu_uuid || null, "data-pipe": a.pipe,
                   text: a.text }, list);
      }
      if (data.cuda_core_advice_total > data.cuda_core_advice.length) {
        absent(section, "Showing " + data.cuda_core_advice.length + " of " + data.cuda_core_advice_total +
                        " pieces of advice (jobs first, then GPUs); `ofu report --format json` lists every GPU's.");
      }
    } else {
      el("p", { class: "no-advice", text: "No job or GPU has an OFU below " + pct(th.low_ofu, 0) + " while a CUDA-core pipe is at least " +
                pct(th.busy_pipe, 0) + " active: nothing points to math left on the CUDA cores." }, section);
    }
    // Only the columns something was measured for; "–" where one row lacks it.
    const fields = NON_TENSOR_FIELDS.filter((f) => rows.some((r) => r.nt[f.key] !== null) || data.overall_non_tensor[f.key] !== null);
    const wrap = el("div", { class: "scroll" }, section);
    const table = el("table", { class: "non-tensor" }, wrap);
    const hr = el("tr", {}, el("thead", {}, table));
    for (const h of ["", "OFU"].concat(fields.map((f) => f.head))) el("th", { text: h }, hr);
    const body = el("tbody", {}, table);
    const advised = new Set(data.cuda_core_advice.map((a) => (a.job_id ? "job:" + a.job_id : "gpu:" + a.gpu_uuid)));
    const addRow = (attrs, label, ofu, nt, key) => {
      const tr = el("tr", attrs, body);
      el("td", { class: advised.has(key) ? "flag" : null, text: label }, tr);
      el("td", { class: "num", text: pct(ofu) }, tr);
      for (const f of fields) el("td", { class: "num", "data-field": f.key, text: nt[f.key] === null ? "–" : f.format(nt[f.key]) }, tr);
    };
    for (const r of rows) {
      addRow(r.kind === "job" ? { "data-nt-job": r.id } : { "data-nt-gpu": r.id }, (r.kind === "job" ? "job " : "") + r.label,
             r.ofu, r.nt, r.kind + ":" + r.id);
    }
    addRow({ "data-nt-fleet": "" }, "fleet", data.overall_ofu, data.overall_non_tensor);
  }

  // ---- Timelines ---------------------------------------------------------

  // Path segments of one series, broken wherever the OFU is absent.
  function segments(points, xOf, yOf) {
    const runs = [];
    let run = [];
    for (let i = 0; i < points[0].length; ++i) {
      const v = points[1][i];
      if (v === null) {
        if (run.length) runs.push(run);
        run = [];
      } else {
        run.push([xOf(points[0][i]), yOf(v)]);
      }
    }
    if (run.length) runs.push(run);
    return runs;
  }

  function seriesMax(points) {
    let max = 0;
    for (const column of points.slice(1)) for (const v of column) if (v !== null) max = Math.max(max, v);
    return max;
  }
  function linePath(runs) {
    return runs.map((run) => "M" + run.map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join("L")).join("");
  }

  function drawJobs() {
    const withFp32 = data.jobs.some((j) => j.points.length > 2);
    const section = panel("jobs", "OFU by job",
      "Each job's OFU over all its GPUs, as sums of utilized over observed seconds per " + duration(data.bucket_s || 1) +
      ". Breaks in a line are times without data, not zeros. Dashed lines mark regressions and precision shifts." +
      (withFp32 ? " The orange line is the FP32 pipe's activity (work on the CUDA cores, not in OFU), where measured." : ""));
    if (!data.jobs.length) return absent(section, "No job has stored windows in this range (or no scheduler attribution was stored).");
    leftOut(section, data.jobs.length, data.jobs_total, "jobs");
    const yMax = niceMax(Math.max(0.1, ...data.jobs.map((j) => seriesMax(j.points))));
    const grid = el("div", { class: "grid2" }, section);
    const half = data.bucket_s / 2;
    for (const job of data.jobs) {
      const card = el("div", { class: "job", "data-job": job.job_id }, grid);
      const head = el("div", { class: "head" }, card);
      el("h3", { text: jobLabel(job) }, head);
      el("span", { class: "ofu", text: "OFU " + pct(job.ofu) }, head);
      el("div", { class: "who", text: [job.user, job.gpus + " GPU" + (job.gpus === 1 ? "" : "s"),
                                         hours(job.gpu_hours) + " GPU-hours"].filter(Boolean).join(" · ") }, card);
      if (hasNonTensor(job.non_tensor)) el("div", { class: "nt", "data-nt": "job", text: nonTensorText(job.non_tensor) }, card);
      const H = 170;
      const chart = chartOf(card, H, "OFU over time of job " + job.job_id), W = chart.W;
      const t = job.points[0];
      if (!t.length) {
        svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", text: "no stored windows of this job in the range" }, chart);
        continue;
      }
      const t0 = t[0] - data.bucket_s, t1 = t[t.length - 1];
      const box = { left: 40, right: W - 8, top: 16, bottom: H - 24 };
      const s = frame(chart, box, [t0, t1], yMax, "time");
      const runs = segments(job.points, (v) => s.x(v - half), s.y);
      let d = "", area = "";
      for (const run of runs) {
        d += "M" + run.map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join("L");
        area += "M" + run[0][0].toFixed(1) + "," + box.bottom + "L" + run.map((p) => p[0].toFixed(1) + "," + p[1].toFixed(1)).join("L") +
                "L" + run[run.length - 1][0].toFixed(1) + "," + box.bottom + "Z";
      }
      svg("path", { class: "area", d: area }, chart);
      tooltip(svg("path", { class: "series", "data-job": job.job_id, d: d }, chart), jobLabel(job) + ": OFU " + pct(job.ofu));
      for (const run of runs) {
        if (run.length === 1) svg("circle", { cx: run[0][0], cy: run[0][1], r: 2, fill: BLUE }, chart);
      }
      const fp32 = job.points[2];
      if (fp32) {
        const fpRuns = segments([t, fp32], (v) => s.x(v - half), s.y);
        tooltip(svg("path", { class: "series fp32", "data-fp32-job": job.job_id, d: linePath(fpRuns) }, chart),
                jobLabel(job) + ": FP32 pipe " + pct(job.non_tensor.fp32_active));
        for (const run of fpRuns) {
          if (run.length === 1) svg("circle", { cx: run[0][0], cy: run[0][1], r: 2, fill: ORANGE }, chart);
        }
      }
      // Hover targets, one per bucket, where they stay few.
      if (t.length <= 200) {
        const w = Math.max(1, s.x(t0 + data.bucket_s) - s.x(t0));
        t.forEach((tt, i) => {
          tooltip(svg("rect", { class: "hit", x: s.x(tt - data.bucket_s), y: box.top, width: w, height: box.bottom - box.top }, chart),
                  utc(tt - data.bucket_s, "seconds") + "–" + utc(tt, "seconds") + " UTC: OFU " +
                  (job.points[1][i] === null ? "no data" : pct(job.points[1][i])) +
                  (fp32 && fp32[i] !== null ? ", FP32 pipe " + pct(fp32[i]) : ""));
        });
      }
      markersFor("job_id", job.job_id).forEach((m, i) => drawMarker(chart, m, s.x(m.t_s), box, i));
    }
  }

  // ---- One run or recording: its timeline and phases ---------------------

  // A phase's band: stalls stand out, start-up and tail are grey, a
  // recording's own phases alternate so that neighbours can be told apart.
  function phaseFill(phase, i) {
    if (phase.kind === "stall") return "rgba(213, 94, 0, .13)";
    if (phase.kind === "startup" || phase.kind === "tail") return "rgba(95, 107, 122, .12)";
    return i % 2 ? "rgba(0, 114, 178, .07)" : "rgba(0, 158, 115, .07)";
  }

  function drawRun() {
    const page = data.run_page, run = page.run;
    const recorded = page.phases_basis === "recorded";
    const section = panel("run", run ? "The run" : "Timeline and phases",
      "OFU every " + duration(data.bucket_s || 1) + " on each GPU (blue), with the " +
      (recorded ? "phases the recording carries and the true MFU each measured" :
                  "phases found in it: start-up until the first tensor work, steady work, stalls near zero " +
                  "(evaluation, checkpoints, data waits) and the tail") +
      " (green dashes: " + (recorded ? "the phase's MFU" : "the MFU the job printed during the phase") +
      "). Breaks in a line are times without data, not zeros.");
    if (run) {
      const facts = el("ul", { class: "run-facts" }, section);
      el("li", { "data-run": "command", text: "Command: " + run.command.join(" ") + " — exited " + run.exit_status +
                 " after " + elapsed(run.seconds) }, facts);
      el("li", { "data-run": "gpus", text: "GPUs chosen by " + run.gpu_rule + (run.gpu_why ? " (" + run.gpu_why + ")" : "") +
                 (run.shared.length ? "; shared with other processes: " + run.shared.join(", ") : "") }, facts);
      el("li", { "data-run": "mfu", text: run.mfu !== null ?
                 "MFU " + pct(run.mfu) + " as the job printed it (" + run.framework + ", " + run.steps + " steps), beside OFU " +
                 pct(run.mfu_ofu) + " over its " + run.ofu_basis + (run.verdict ? ": " + run.verdict + " — " + run.explanation : "") :
                 "No MFU read from the job's output: " + run.mfu_missing }, facts);
      if (run.stall_share !== null) {
        el("li", { "data-run": "stalls", text: "Stalls: " + elapsed(run.stall_s) + ", " + pct(run.stall_share) +
                   " of the GPU time with an OFU" }, facts);
      }
    }
    if (!data.gpus.length) return absent(section, "No GPU has windows in this recording.");
    const legend = el("div", { class: "legend" }, section);
    const l1 = el("span", {}, legend);
    el("span", { class: "swatch", style: "background:" + BLUE }, l1);
    l1.append("OFU");
    const l2 = el("span", {}, legend);
    el("span", { class: "swatch", style: "background:" + GREEN }, l2);
    l2.append(recorded ? "MFU of the phase (recorded)" : "MFU printed in the phase");
    if (!recorded) {
      const l3 = el("span", {}, legend);
      el("span", { class: "swatch", style: "background:" + phaseFill({ kind: "stall" }) }, l3);
      l3.append("stall");
    }

    const t0 = data.start_s, t1 = data.end_s, half = data.bucket_s / 2;
    for (const gpu of data.gpus) {
      const phases = page.phases.filter((p) => p.gpu === gpu.uuid);
      const card = el("div", { class: "run-gpu", "data-gpu": gpu.uuid }, section);
      const head = el("div", { class: "head" }, card);
      el("h3", { text: gpuLabel(gpu) + " · " + gpu.model }, head);
      el("span", { class: "ofu", text: "OFU " + pct(gpu.ofu) }, head);
      const H = 200;
      const c = chartOf(card, H, "OFU over time of " + gpuLabel(gpu)), W = c.W;
      const box = { left: 46, right: W - 10, top: 22, bottom: H - 26 };
      const top = Math.max(0.1, seriesMax(gpu.points), ...phases.map((p) => p.mfu || 0));
      const bands = svg("g", { class: "phases" }, c);
      const s = frame(c, box, [t0, t1], niceMax(top), "elapsed");
      phases.forEach((p, i) => {
        const x0 = Math.max(box.left, s.x(p.start_s)), x1 = Math.min(box.right, s.x(p.end_s));
        const g = svg("g", { class: "phase", "data-phase": p.name }, bands);
        svg("rect", { x: x0, y: box.top, width: Math.max(1, x1 - x0), height: box.bottom - box.top, fill: phaseFill(p, i) }, g);
        // The name where it fits (about 7 px a character at 13 px).
        if (x1 - x0 > 7.5 * p.name.length + 4) {
          svg("text", { class: "phase-label", x: (x0 + x1) / 2, y: box.top - 7, "text-anchor": "middle", text: p.name }, g);
        }
        tooltip(g, p.name + (p.kind && p.kind !== p.name ? " (" + p.kind + ")" : "") + ": " + elapsed(p.start_s - t0) + " to " +
                   elapsed(p.end_s - t0) + "\nOFU " + pct(p.ofu) + (p.mfu !== null ? ", MFU " + pct(p.mfu) : ""));
      });
      const runs = segments(gpu.points, (v) => s.x(v - half), s.y);
      tooltip(svg("path", { class: "series", "data-gpu": gpu.uuid, d: linePath(runs) }, c), gpuLabel(gpu) + ": OFU " + pct(gpu.ofu));
      for (const r of runs) if (r.length === 1) svg("circle", { cx: r[0][0], cy: r[0][1], r: 2, fill: BLUE }, c);
      for (const p of phases) {
        if (p.mfu === null) continue;
        const x0 = Math.max(box.left, s.x(p.start_s)), x1 = Math.min(box.right, s.x(p.end_s));
        tooltip(svg("line", { class: "phase-mfu", "data-phase-mfu": p.name, x1: x0, x2: x1, y1: s.y(p.mfu), y2: s.y(p.mfu) }, c),
                p.name + ": MFU " + pct(p.mfu) + " beside OFU " + pct(p.ofu));
      }
    }

    // The phases as a table: OFU beside MFU.
    const many = data.gpus.length > 1;
    const wrap = el("div", { class: "scroll" }, section);
    const table = el("table", { class: "phases" }, wrap);
    const hr = el("tr", {}, el("thead", {}, table));
    const heads = (many ? ["GPU"] : []).concat(["phase", "from", "to", "seconds", "OFU", "MFU", "OFU − MFU"]);
    for (const h of heads) el("th", { text: h }, hr);
    const body = el("tbody", {}, table);
    const nameOf = new Map(data.gpus.map((g) => [g.uuid, gpuLabel(g)]));
    for (const p of page.phases) {
      const tr = el("tr", { "data-phase-row": p.name }, body);
      if (many) el("td", { text: nameOf.get(p.gpu) || p.gpu }, tr);
      el("td", { text: p.name + (p.kind && p.kind !== p.name ? " (" + p.kind + ")" : "") }, tr);
      el("td", { class: "num", text: elapsed(p.start_s - t0) }, tr);
      el("td", { class: "num", text: elapsed(p.end_s - t0) }, tr);
      el("td", { class: "num", text: p.seconds.toFixed(1) }, tr);
      el("td", { class: "num", "data-field": "ofu", text: pct(p.ofu) }, tr);
      el("td", { class: "num", "data-field": "mfu", text: p.mfu === null ? "–" :
                 pct(p.mfu) + (p.mfu_steps ? " (" + p.mfu_steps + " step" + (p.mfu_steps === 1 ? "" : "s") + ")" : "") }, tr);
      el("td", { class: "num", text: p.ofu === null || p.mfu === null ? "–" : (100 * (p.ofu - p.mfu)).toFixed(1) + " pp" }, tr);
    }
    if (!page.phases.length) absent(section, "No phase: no GPU of this recording has a window with an OFU.");
  }

  // The i-th marker of a chart: labels step down so that close ones stay readable.
  function drawMarker(chart, m, x, box, i) {
    const color = markerColor(m.kind);
    const g = svg("g", { class: "marker", "data-marker-kind": m.kind }, chart);
    svg("line", { x1: x, x2: x, y1: box.top - 4, y2: box.bottom, stroke: color }, g);
    const right = x < (box.left + box.right) / 2;
    svg("text", { x: right ? x + 4 : x - 4, y: box.top + 6 + 13 * (i % 4), "text-anchor": right ? "start" : "end", fill: color,
                  style: "fill:" + color, text: markerText(m) }, g);
    tooltip(g, markerTooltip(m));
  }

  // Viridis, sampled: perceptually even, readable in grey and by most
  // colour-vision deficiencies.
  const VIRIDIS = [[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142], [31, 158, 137],
                   [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]];
  function heat(v) {
    const f = Math.min(Math.max(v, 0), 1) * (VIRIDIS.length - 1);
    const i = Math.min(Math.floor(f), VIRIDIS.length - 2), k = f - i;
    const c = VIRIDIS[i].map((a, j) => Math.round(a + (VIRIDIS[i + 1][j] - a) * k));
    return "rgb(" + c.join(",") + ")";
  }

  function drawGpus() {
    const section = panel("gpus", "OFU by GPU",
      "One row per GPU, one cell per " + duration(data.bucket_s || 1) + ", coloured by OFU. Grey: no data.");
    if (!data.gpus.length) return absent(section, "No GPU has stored windows in this range.");
    leftOut(section, data.gpus.length, data.gpus_total, "GPUs");
    const legend = el("div", { class: "legend" }, section);
    const ramp = el("span", {}, legend);
    ramp.append("OFU 0 %");
    el("span", { class: "ramp", style: "background:linear-gradient(90deg," + VIRIDIS.map((c) => "rgb(" + c.join(",") + ")").join(",") + ")" }, ramp);
    ramp.append("≥ 100 %");
    const noData = el("span", {}, legend);
    el("span", { class: "swatch", style: "background:#f0f1f3;border:1px solid #d9dee4" }, noData);
    noData.append("no data");

    const rowH = 18, H = 6 + rowH * data.gpus.length + 28;
    const chart = chartOf(section, H, "OFU heat map, one row per GPU"), W = chart.W;
    const labelW = Math.min(250, Math.round(W * 0.4));
    const box = { left: labelW, right: W - 10, top: 6, bottom: 6 + rowH * data.gpus.length };
    const x = linear(data.start_s, data.end_s, box.left, box.right);
    const ticks = timeTicks(data.start_s, data.end_s, Math.max(2, Math.floor((box.right - box.left) / 110)));
    ticks.ticks.forEach((t, i) => {
      svg("line", { class: "grid", x1: x(t), x2: x(t), y1: box.top, y2: box.bottom + 4 }, chart);
      svg("text", { x: x(t), y: box.bottom + 18, "text-anchor": "middle", text: ticks.label(t, i) }, chart);
    });
    data.gpus.forEach((gpu, row) => {
      const y = box.top + row * rowH;
      const g = svg("g", { class: "gpu-row", "data-gpu": gpu.uuid }, chart);
      tooltip(svg("text", { class: "gpu-label", x: labelW - 8, y: y + rowH - 4, "text-anchor": "end",
                            text: gpuLabel(gpu) + " · " + pct(gpu.ofu) }, g),
              gpu.uuid + "\n" + gpu.model + (gpu.sku ? " (" + gpu.sku + ")" : " (not in the spec database)") +
              "\nOFU " + pct(gpu.ofu) + " over " + hours(gpu.observed_hours) + " observed hours" +
              (gpu.clock_source ? "\nSM clock: " + gpu.clock_source : "") +
              (hasNonTensor(gpu.non_tensor) ? "\n" + nonTensorText(gpu.non_tensor) : ""));
      svg("rect", { class: "nodata", x: box.left, y: y + 1, width: box.right - box.left, height: rowH - 2 }, g);
      const [ts, vs, fp32] = gpu.points;
      const w = Math.max(0.5, x(data.start_s + data.bucket_s) - x(data.start_s));
      for (let i = 0; i < ts.length; ++i) {
        if (vs[i] === null) continue;
        const cell = svg("rect", { x: Math.max(box.left, x(ts[i] - data.bucket_s)).toFixed(2), y: y + 1, width: w.toFixed(2),
                                   height: rowH - 2, fill: heat(vs[i]) }, g);
        if (ts.length <= 300) {
          tooltip(cell, gpuLabel(gpu) + ", until " + utc(ts[i], "seconds") + " UTC: OFU " + pct(vs[i]) +
                        (fp32 && fp32[i] !== null ? ", FP32 pipe " + pct(fp32[i]) : ""));
        }
      }
      for (const m of markersFor("gpu_uuid", gpu.uuid)) {
        const mx = x(m.t_s), color = markerColor(m.kind);
        const mg = svg("g", { class: "marker", "data-marker-kind": m.kind }, g);
        svg("path", { d: "M" + (mx - 5) + "," + y + "L" + (mx + 5) + "," + y + "L" + mx + "," + (y + 7) + "Z", fill: color, stroke: "#fff" }, mg);
        svg("line", { x1: mx, x2: mx, y1: y, y2: y + rowH, stroke: color }, mg);
        tooltip(mg, markerTooltip(m));
      }
    });
  }

  // ---- OFU vs MFU --------------------------------------------------------

  function drawScatter() {
    const section = panel("scatter", "OFU vs reported MFU",
      "Each job: the MFU its OFU implies at the job's reference precision (x) against the MFU it reported (y). " +
      "On the dashed line they agree; flagged jobs are far from it.");
    if (!data.scatter) return absent(section, data.scatter_absent);
    const sc = data.scatter;
    if (sc.note) el("p", { class: "muted", text: sc.note }, section);
    const stats = [sc.pearson_r !== null ? "Pearson r = " + num(sc.pearson_r, 2) : "",
                   sc.spearman_rho !== null ? "Spearman ρ = " + num(sc.spearman_rho, 2) : "",
                   sc.mean_abs_error !== null ? "mean absolute error " + pct(sc.mean_abs_error) : ""].filter(Boolean);
    if (stats.length) el("p", { text: stats.join(" · ") }, section);
    if (!sc.points.length) return absent(section, "The MFU log has no job that is also in this report.");
    const layout = el("div", { class: "scatter-layout" }, section);
    const left = el("div", {}, layout);
    const legend = el("div", { class: "legend" }, left);
    const l1 = el("span", {}, legend);
    el("span", { class: "swatch", style: "background:" + BLUE + ";border-radius:50%" }, l1);
    l1.append("consistent");
    const l2 = el("span", {}, legend);
    el("span", { class: "swatch", style: "background:" + VERMILLION + ";clip-path:polygon(50% 0,100% 100%,0 100%)" }, l2);
    l2.append("flagged");

    const W = Math.min(540, Math.max(240, innerWidth(left, 540))), H = Math.round(W * 0.9);
    const chart = svg("svg", { viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img", "aria-label": "OFU-implied MFU against reported MFU, one point per job" }, left);
    const max = niceMax(Math.max(0.1, ...sc.points.map((p) => Math.max(p.expected_mfu, p.reported_mfu))) * 1.05);
    const box = { left: 52, right: W - 12, top: 12, bottom: H - 46 };
    const s = frame(chart, box, [0, max], max, "value");
    svg("line", { class: "diagonal", x1: s.x(0), y1: s.y(0), x2: s.x(max), y2: s.y(max) }, chart);
    svg("text", { class: "axis-label", x: (box.left + box.right) / 2, y: H - 8, "text-anchor": "middle", text: "MFU expected from OFU" }, chart);
    svg("text", { class: "axis-label", x: 14, y: (box.top + box.bottom) / 2, "text-anchor": "middle",
                  transform: "rotate(-90 14 " + (box.top + box.bottom) / 2 + ")", text: "reported MFU" }, chart);
    // Flagged last, so they are on top.
    const ordered = sc.points.filter((p) => !p.flagged).concat(sc.points.filter((p) => p.flagged));
    for (const p of ordered) {
      const x = s.x(p.expected_mfu), y = s.y(p.reported_mfu);
      const tip = p.job_id + "\nexpected " + pct(p.expected_mfu) + ", reported " + pct(p.reported_mfu) + (p.reason ? "\n" + p.reason : "");
      if (p.flagged) {
        const g = svg("g", {}, chart);
        svg("path", { class: "scatter-point flagged", "data-job": p.job_id, fill: VERMILLION,
                      d: "M" + x + "," + (y - 6) + "L" + (x + 5.5) + "," + (y + 4) + "L" + (x - 5.5) + "," + (y + 4) + "Z" }, g);
        svg("text", { x: x + 8, y: y + 4, style: "fill:" + VERMILLION, text: p.job_id }, g);
        tooltip(g, tip);
      } else {
        tooltip(svg("circle", { class: "scatter-point", "data-job": p.job_id, cx: x, cy: y, r: 4.5, fill: BLUE, "fill-opacity": 0.8 }, chart), tip);
      }
    }

    const right = el("div", {}, layout);
    const flagged = sc.points.filter((p) => p.flagged);
    el("h3", { text: "Flagged jobs (" + flagged.length + ")" }, right);
    if (!flagged.length) return absent(right, "No job is flagged: every reported MFU is close to what the hardware did.");
    const table = el("table", {}, right);
    const hr = el("tr", {}, el("thead", {}, table));
    for (const h of ["job", "expected", "reported", "most likely explanation"]) el("th", { text: h }, hr);
    const body = el("tbody", {}, table);
    for (const p of flagged) {
      const tr = el("tr", { "data-flagged-job": p.job_id }, body);
      el("td", { class: "flag", text: p.job_id }, tr);
      el("td", { class: "num", text: pct(p.expected_mfu) }, tr);
      el("td", { class: "num", text: pct(p.reported_mfu) }, tr);
      el("td", { text: p.reason }, tr);
    }
  }

  // ---- GEMM findings from a kernel trace (ofu report --trace) -----------

  function gemmShape(g) {
    return g.m + "×" + g.n + "×" + g.k + (g.batch !== 1 ? " (×" + g.batch + ")" : "");
  }

  // Only with a trace: without one there is no section at all.
  function drawKernelFindings() {
    const kf = data.kernel_findings;
    if (!kf) return;
    const section = panel("gemm-findings", "GEMM findings from the trace",
      "What ofu correct finds in the kernel trace: GEMMs that ran on kernels built for an older GPU architecture " +
      "(fewer FLOPs per tensor-active cycle, so OFU reads above MFU) and GEMMs whose tiles pad the work. " +
      "Corrected OFU = OFU × factor; the factor is the tile-padding part × the kernel-throughput part.");
    el("div", { class: "muted", text: "Trace: " + kf.traces.join(", ") + " · GPU: " +
                (kf.gpu_sku ? kf.gpu_name + " (" + kf.gpu_sku + ")" : "not known (generic precision rates)") }, section);
    el("p", { class: "factors", text: "factor " + num(kf.factor, 3) + " = tile padding " + num(kf.padding_factor, 3) +
              " × kernel throughput " + num(kf.throughput_factor, 3) }, section);
    if (!kf.gemms.length) {
      absent(section, kf.factor === null ? "No GEMM kernel of the trace could be corrected (ofu correct lists why)." :
        "No GEMM of the trace ran on a pre-native kernel or wasted tensor time on tile padding.");
    } else {
      const wrap = el("div", { class: "scroll" }, section);
      const table = el("table", { class: "gemm-findings" }, wrap);
      const hr = el("tr", {}, el("thead", {}, table));
      for (const h of ["finding", "op", "shape M×N×K", "precision", "tensor time", "lost / wasted", "advice", "kernel"]) {
        el("th", { text: h }, hr);
      }
      const body = el("tbody", {}, table);
      for (const g of kf.gemms) {
        const tr = el("tr", { "data-gemm-finding": g.kind }, body);
        el("td", { class: "flag", text: g.kind + (g.family ? " (" + g.family + ")" : "") }, tr);
        el("td", { text: g.op }, tr);
        el("td", { class: "num", text: gemmShape(g) }, tr);
        el("td", { text: g.precision }, tr);
        el("td", { class: "num", text: pct(g.tensor_time_share) }, tr);
        el("td", { class: "num", text: pct(g.lost_share) }, tr);
        el("td", { class: "advice", text: g.advice }, tr);
        el("td", { class: "kernel", text: g.kernel }, tr);
      }
    }
    if (kf.notes.length) {
      const list = el("ul", { class: "finding-notes muted" }, section);
      for (const n of kf.notes) el("li", { text: n }, list);
    }
  }

  // ---- Distributions by SKU ----------------------------------------------

  function drawSkus() {
    const section = panel("skus", "OFU by GPU model",
      "Per SKU: the spread of per-GPU OFU (box: quartiles, whiskers: min and max, dots: GPUs) and the observed " +
      "GPU-hours at each OFU level.");
    if (!data.skus.length) return absent(section, "No GPU has stored windows in this range.");
    const grid = el("div", { class: "skus" }, section);
    // Every card first, so that each chart is measured at the width it keeps
    // (the grid narrows the first card when the second arrives).
    const cards = data.skus.map((sku) => el("section", { class: "sku", "data-sku": sku.sku }, grid));
    for (const [i, sku] of data.skus.entries()) {
      const card = cards[i];
      const head = el("div", { class: "head" }, card);
      el("h3", { text: (sku.sku || "unknown model") + (sku.model ? " — " + sku.model : "") }, head);
      el("div", { class: "muted", text: sku.gpus + " GPU" + (sku.gpus === 1 ? "" : "s") + " · OFU " + pct(sku.ofu) + " · " +
                  hours(sku.observed_hours) + " observed hours" }, card);
      if (!sku.box) {
        absent(card, sku.sku ? "No window of these GPUs has an OFU." :
          "These GPUs' model is not in the spec database, so no OFU was computed (extend data/gpu_specs.json).");
        continue;
      }
      const W = Math.max(240, innerWidth(card, 620)), bx = { left: 44, right: W - 12 };
      const top = Math.max(1, niceMax(sku.box.max));
      // Box plot of per-GPU OFU.
      const boxSvg = svg("svg", { viewBox: "0 0 " + W + " 58", width: W, height: 58, role: "img", "aria-label": "per-GPU OFU of " + (sku.sku || "unknown") }, card);
      const x = linear(0, top, bx.left, bx.right);
      for (const v of valueTicks(top, 5)) {
        svg("line", { class: "grid", x1: x(v), x2: x(v), y1: 4, y2: 38 }, boxSvg);
        svg("text", { x: x(v), y: 52, "text-anchor": "middle", text: Math.round(v * 100) + "%" }, boxSvg);
      }
      const b = sku.box;
      const g = svg("g", {}, boxSvg);
      svg("line", { class: "whisker", x1: x(b.min), x2: x(b.q1), y1: 21, y2: 21 }, g);
      svg("line", { class: "whisker", x1: x(b.q3), x2: x(b.max), y1: 21, y2: 21 }, g);
      svg("line", { class: "whisker", x1: x(b.min), x2: x(b.min), y1: 14, y2: 28 }, g);
      svg("line", { class: "whisker", x1: x(b.max), x2: x(b.max), y1: 14, y2: 28 }, g);
      svg("rect", { class: "box", x: x(b.q1), y: 10, width: Math.max(1, x(b.q3) - x(b.q1)), height: 22 }, g);
      svg("line", { class: "whisker", x1: x(b.median), x2: x(b.median), y1: 10, y2: 32, "stroke-width": 2.5 }, g);
      tooltip(g, "per-GPU OFU: min " + pct(b.min) + ", quartiles " + pct(b.q1) + " / " + pct(b.median) + " / " + pct(b.q3) + ", max " + pct(b.max));
      if (sku.gpu_ofu.length <= 500) {
        sku.gpu_ofu.forEach((v, i) => svg("circle", { class: "dot", cx: x(v), cy: 21 + ((i * 7) % 13) - 6, r: 2 }, boxSvg));
      }
      // Histogram of observed hours by window OFU.
      const bins = sku.hours_by_bin, per = sku.bins_per_unit;
      const hs = svg("svg", { viewBox: "0 0 " + W + " 130", width: W, height: 130, role: "img", "aria-label": "observed hours by OFU of " + (sku.sku || "unknown") }, card);
      const hMax = niceMax(Math.max(...bins));
      const hx = linear(0, bins.length, bx.left, bx.right), hy = linear(0, hMax, 104, 8);
      for (const v of valueTicks(hMax, 3)) {
        svg("line", { class: "grid", x1: bx.left, x2: bx.right, y1: hy(v), y2: hy(v) }, hs);
        svg("text", { x: bx.left - 6, y: hy(v) + 4, "text-anchor": "end", text: hours(v) + " h" }, hs);
      }
      bins.forEach((h, i) => {
        if (h <= 0) return;
        const label = i === bins.length - 1 ? "≥ 100 %" : Math.round(100 * i / per) + "–" + Math.round(100 * (i + 1) / per) + " %";
        tooltip(svg("rect", { class: "bar", x: hx(i) + 1, y: hy(h), width: Math.max(1, hx(i + 1) - hx(i) - 2), height: 104 - hy(h) }, hs),
                "OFU " + label + ": " + hours(h) + " observed hours");
      });
      for (let i = 0; i <= bins.length - 1; i += 4) {
        svg("text", { x: hx(i), y: 120, "text-anchor": "middle", text: Math.round(100 * i / per) + "%" }, hs);
      }
      svg("line", { class: "axis", x1: bx.left, x2: bx.right, y1: 104, y2: 104 }, hs);
    }
  }

  // ---- Regressions -------------------------------------------------------

  function drawMarkers() {
    const section = panel("regressions", "Regressions and precision shifts",
      "Changes in OFU found by the regression scan; they are also marked on the timelines above.");
    if (!data.markers) return absent(section, data.markers_absent);
    if (!data.markers.length) return absent(section, "No regression or precision shift found in this range.");
    const table = el("table", {}, section);
    const hr = el("tr", {}, el("thead", {}, table));
    for (const h of ["when (UTC)", "kind", "job", "GPU", "OFU before", "OFU after", "change", "description"]) el("th", { text: h }, hr);
    const body = el("tbody", {}, table);
    for (const m of data.markers) {
      const tr = el("tr", { "data-marker": m.kind }, body);
      el("td", { class: "num", text: utc(m.t_s, "date") + " " + utc(m.t_s, "seconds") }, tr);
      const kind = el("td", {}, tr);
      el("span", { class: "kind", style: "background:" + markerColor(m.kind), text: m.kind }, kind);
      el("td", { text: m.job_id || "–" }, tr);
      el("td", { text: m.gpu_uuid || "–" }, tr);
      el("td", { class: "num", text: pct(m.before_ofu) }, tr);
      el("td", { class: "num", text: pct(m.after_ofu) }, tr);
      el("td", { class: "num", text: m.ratio === null ? "–" : "×" + m.ratio.toFixed(2) }, tr);
      el("td", { text: m.description }, tr);
    }
  }

  function drawNotes() {
    const footer = el("footer", {}, root);
    if (data.notes.length) {
      const details = el("details", { class: "notes" }, footer);
      el("summary", { text: data.notes.length + " data-quality note" + (data.notes.length === 1 ? "" : "s") }, details);
      const list = el("ul", {}, details);
      for (const n of data.notes) el("li", { text: n }, list);
    }
    el("p", { text: "OFU = tensor activity × SM clock / f_spec, per GPU window; a job's OFU is the time-weighted mean " +
                    "over its GPUs. Generated by ofu." }, footer);
  }

  // The effective size of the charts' text, in CSS pixels (font size times
  // the chart's scale), on the body for people checking the page and for
  // the tests: data-chart-text-min / -max, beside the page's own size.
  function measureChartText() {
    let min = Infinity, max = 0;
    for (const t of root.querySelectorAll("svg text")) {
      const box = t.ownerSVGElement, view = box.viewBox.baseVal, width = box.getBoundingClientRect().width;
      if (!view || !view.width || !width) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * width / view.width;
      min = Math.min(min, px);
      max = Math.max(max, px);
    }
    if (max > 0) {
      document.body.dataset.chartTextMin = min.toFixed(2);
      document.body.dataset.chartTextMax = max.toFixed(2);
    }
    document.body.dataset.pageTextPx = parseFloat(getComputedStyle(document.body).fontSize);
  }

  // A store's page shows jobs, GPUs and the fleet analyses; one run's page
  // (data.run_page) its timeline and phases instead.
  function drawAll() {
    root.textContent = "";
    drawHeader();
    if (data.run_page) drawRun();
    drawNonTensor();
    if (!data.run_page) {
      drawJobs();
      drawGpus();
      drawScatter();
    }
    drawKernelFindings();
    drawSkus();
    if (!data.run_page) drawMarkers();
    drawNotes();
    measureChartText();
    document.body.dataset.rendered = "ok";
  }

  drawAll();
  // Charts are drawn at the page's width in pixels: draw again when it changes.
  let drawnWidth = root.clientWidth, pending = 0;
  new ResizeObserver(() => {
    clearTimeout(pending);
    pending = setTimeout(() => {
      if (root.clientWidth !== drawnWidth) {
        drawnWidth = root.clientWidth;
        drawAll();
      }
    }, 150);
  }).observe(root);
})();
