#!/usr/bin/env python3
"""The agent's cost on a real driver (Stage C, docs/gpu-validation.md).

Runs `ofu agent --source nvml --window W` as a child process for a fixed
time and measures it, with no tool the GPU machine may lack:

  - whole run (start-up included): CPU time and "max RSS" from the
    kernel's accounting of the child (wait4), as bench/agent_bench.sh does
    with /usr/bin/time. That max RSS is not the agent's alone: the kernel
    keeps the pre-exec image's high-water mark, and a child Python starts
    (vfork or fork) begins as Python, so /bin/true started this way reports
    Python's ~21 MiB. The agent's own peak is VmHWM below;
  - steady state, from the first served /metrics page to the end: CPU of
    the process and of each thread, from /proc/PID/stat and
    /proc/PID/task/TID/stat (utime, stime) read at both ends, each thread
    named by its comm; peak RSS (VmHWM, /proc/PID/status) and PSS
    (/proc/PID/smaps_rollup) at the end, and what the resident memory is
    made of (/proc/PID/smaps by category: driver library, device files,
    ofu's binary and plugins, history store, heap, stack, other libraries);
  - the agent's own accounting from /metrics read at the end: the per-call
    table (ofu_source_calls_total{call}, ofu_source_call_seconds_total
    {call,...}) and the process_* figures, or "absent" where the agent does
    not export them (agents before issue 29).

Then it stops the agent with SIGTERM (exit 0) and appends one run to the
JSON file given with --json:

  {"runs": [{"label", "wall_s", "user_s", "system_s", "cpu_percent",
             "max_rss_mib", "exit_code", "command", "metrics_lines",
             "window_s", "config", "steady": {"wall_s", "user_s",
             "system_s", "cpu_percent"}, "threads": [{"tid", "name",
             "user_s", "system_s", "cpu_percent", "new"}], "vm_hwm_mib",
             "vm_rss_mib", "pss_mib", "memory": {"categories", "mappings",
             "rss_kib", "pss_kib"}, "source_calls": {"present", ...},
             "process_metrics": {...}}]}

The first eight keys mean what they meant in the first run's file
(docs/results/2026-11-26-h100-sxm5/stage-C/agent/agent-cost.json); the
others are added. The agent is given --duration as a safety net, and is
killed if this script is stopped, so nothing outlives the step.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request

# --------------------------------------------------------------------------
# Pure functions (tested in tests/gpu_validate/gpuval_test.py).


def cost_record(label, wall_s, user_s, system_s, max_rss_kib, exit_code):
    """The figures of one run; CPU as a percentage of one core."""
    return {"label": label, "wall_s": wall_s, "user_s": user_s, "system_s": system_s,
            "cpu_percent": 100.0 * (user_s + system_s) / wall_s if wall_s > 0 else None,
            "max_rss_mib": max_rss_kib / 1024.0, "exit_code": exit_code}


def parse_stat(text):
    """(comm, utime, stime) of a /proc/PID/stat or /proc/PID/task/TID/stat
    line, times in clock ticks. comm may hold spaces and parentheses, so the
    fields are counted from the last ')': utime and stime are fields 14 and
    15 of proc(5), the 12th and 13th after it."""
    open_, close = text.index("("), text.rindex(")")
    rest = text[close + 2:].split()
    return text[open_ + 1:close], int(rest[11]), int(rest[12])


def thread_cpu(before, after, wall_s, ticks_per_s):
    """CPU of each thread between two snapshots {tid: {"name", "utime",
    "stime"}} (ticks) taken wall_s apart: [{"tid", "name", "user_s",
    "system_s", "cpu_percent", "new"}], most CPU first. A thread only in
    `after` started in between and counts from zero ("new": true); one only
    in `before` ended in between and is left out (its time is in the
    process's figure, not in any thread's)."""
    rows = []
    for tid, a in after.items():
        b = before.get(tid)
        user = (a["utime"] - (b["utime"] if b else 0)) / ticks_per_s
        system = (a["stime"] - (b["stime"] if b else 0)) / ticks_per_s
        rows.append({"tid": tid, "name": a["name"], "user_s": user, "system_s": system,
                     "cpu_percent": 100.0 * (user + system) / wall_s if wall_s > 0 else None,
                     "new": b is None})
    rows.sort(key=lambda r: (-(r["user_s"] + r["system_s"]), r["tid"]))
    return rows


def kib_field(text, key):
    """A "Key:   1234 kB" line of /proc/PID/status or smaps_rollup, in KiB; None when absent."""
    m = re.search(rf"^{re.escape(key)}:\s+(\d+)\s+kB", text, re.M)
    return int(m.group(1)) if m else None


_MAPPING = re.compile(r"^[0-9a-f]+-[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\d+\s*(.*)$")

# What a mapping of the agent is, for the memory breakdown: the first
# category whose test matches its path. The driver's libraries and device
# files are not ofu's to cut; the agent's heap also holds what the driver
# allocates inside the process (it cannot be told apart there).
MEMORY_CATEGORIES = (
    ("driver library", lambda p, ofu: re.search(r"/lib(nvidia-[a-z-]+|cuda|dcgm[a-z_]*)\.so", p) is not None),
    ("device files", lambda p, ofu: p.startswith("/dev/")),
    ("ofu binary and plugins", lambda p, ofu: p == ofu or re.search(r"/libofu-[a-z-]+\.so", p) is not None),
    ("history store", lambda p, ofu: p.endswith((".sqlite-shm", ".sqlite", ".sqlite-wal"))),
    ("heap and anonymous", lambda p, ofu: p in ("", "[heap]") or p.startswith("[anon")),
    ("stack", lambda p, ofu: p.startswith("[stack")),
    ("other libraries", lambda p, ofu: ".so" in p),
    ("other", lambda p, ofu: True),
)


def memory_breakdown(smaps_text, ofu_path):
    """What the agent's resident memory is made of, from /proc/PID/smaps:
    {"categories": [{"category", "rss_kib", "pss_kib", "private_dirty_kib"}]
    in MEMORY_CATEGORIES order (empty ones left out), "mappings": the 12
    largest files or regions by RSS [{"path", "category", "rss_kib",
    "pss_kib", "private_dirty_kib"}], "rss_kib", "pss_kib"}. A mapping's path
    is its smaps pathname ("" for an anonymous one; " (deleted)" dropped)."""
    per_path = {}
    current = None
    for line in smaps_text.splitlines():
        m = _MAPPING.match(line)
        if m:
            path = m.group(1).strip()
            if path.endswith(" (deleted)"):
                path = path[: -len(" (deleted)")]
            current = per_path.setdefault(path, {"rss_kib": 0, "pss_kib": 0, "private_dirty_kib": 0})
            continue
        if current is None:
            continue
        for key, field in (("Rss", "rss_kib"), ("Pss", "pss_kib"), ("Private_Dirty", "private_dirty_kib")):
            if line.startswith(key + ":"):
                value = kib_field(line, key)
                if value is not None:
                    current[field] += value
    categories = {name: {"category": name, "rss_kib": 0, "pss_kib": 0, "private_dirty_kib": 0}
                  for name, _ in MEMORY_CATEGORIES}
    mappings = []
    for path, figures in per_path.items():
        name = next(n for n, test in MEMORY_CATEGORIES if test(path, ofu_path))
        for field in ("rss_kib", "pss_kib", "private_dirty_kib"):
            categories[name][field] += figures[field]
        mappings.append({"path": path, "category": name, **figures})
    mappings.sort(key=lambda r: (-r["rss_kib"], r["path"]))
    rows = [c for c in categories.values() if c["rss_kib"] or c["pss_kib"]]
    return {"categories": rows, "mappings": mappings[:12],
            "rss_kib": sum(c["rss_kib"] for c in rows), "pss_kib": sum(c["pss_kib"] for c in rows)}


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+(\S+))?\s*$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_exposition(text):
    """[(name, {label: value}, value, timestamp or None)] of every sample of
    a Prometheus or OpenMetrics text page; # lines are skipped, and so is a
    sample whose value or timestamp is no number."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
            t = float(m.group(4)) if m.group(4) is not None else None
        except ValueError:
            continue
        out.append((m.group(1), dict(_LABEL.findall(m.group(2) or "")), value, t))
    return out


def windows_served(samples):
    """Windows the agent measured: the first GPU's ofu_observed_seconds_total
    over its ofu_window_seconds, rounded; None without both."""
    observed = {s[1].get("gpu"): s[2] for s in samples if s[0] == "ofu_observed_seconds_total"}
    window = {s[1].get("gpu"): s[2] for s in samples if s[0] == "ofu_window_seconds"}
    gpus = sorted(set(observed) & set(window), key=lambda g: (g is None, str(g)))
    if not gpus or window[gpus[0]] <= 0:
        return None
    return int(round(observed[gpus[0]] / window[gpus[0]]))


def source_call_table(text):
    """The agent's own per-call table from a /metrics page:
    {"present": False} when the page has no ofu_source_calls_total, else
    {"present": True, "windows": N or None, "calls": [{"call", "calls",
    "per_window", "seconds": {LABELS: s}}]}, most calls first. Samples of
    one call with other labels (a GPU, a source) are summed; LABELS names
    the seconds series' labels other than `call` ("k=v,..."; "" when none),
    so that wall, user and system time stay apart whatever they are called."""
    samples = parse_exposition(text)
    counts = [s for s in samples if s[0] == "ofu_source_calls_total" and "call" in s[1]]
    if not counts:
        return {"present": False}
    windows = windows_served(samples)
    table = {}
    for _, labels, value, _ in counts:
        entry = table.setdefault(labels["call"], {"call": labels["call"], "calls": 0.0, "seconds": {}})
        entry["calls"] += value
    for name, labels, value, _ in samples:
        if name != "ofu_source_call_seconds_total" or "call" not in labels:
            continue
        entry = table.setdefault(labels["call"], {"call": labels["call"], "calls": 0.0, "seconds": {}})
        key = ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k != "call")
        entry["seconds"][key] = entry["seconds"].get(key, 0.0) + value
    rows = sorted(table.values(), key=lambda e: (-e["calls"], e["call"]))
    for e in rows:
        e["per_window"] = e["calls"] / windows if windows else None
    return {"present": True, "windows": windows, "calls": rows}


def process_metrics(text):
    """The process_* samples of a /metrics page (process_cpu_seconds_total,
    process_resident_memory_bytes, ...): {name: value}; {} when none."""
    return {name: value for name, _, value, _ in parse_exposition(text) if name.startswith("process_")}


def append_run(path, run):
    data = {"runs": []}
    if os.path.exists(path):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError):
            pass
    data.setdefault("runs", []).append(run)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)


# --------------------------------------------------------------------------
# Reading the running agent.


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def read_tasks(pid):
    """{tid: {"name", "utime", "stime"}} of every thread of pid; a thread
    that ends while it is read is skipped."""
    tasks = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return tasks
    for tid in tids:
        stat = read_text(f"/proc/{pid}/task/{tid}/stat")
        if stat is None:
            continue
        comm, utime, stime = parse_stat(stat)
        name = (read_text(f"/proc/{pid}/task/{tid}/comm") or comm).strip()
        tasks[int(tid)] = {"name": name, "utime": utime, "stime": stime}
    return tasks


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port, timeout=5):
    """The /metrics page, or None when it cannot be read."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=timeout) as r:
            return r.read().decode("utf-8", "replace")
    except Exception:  # not served yet, or gone: the caller decides
        return None


class Child:
    """The agent's process, reaped with wait4 (never Popen.poll, which would
    take its rusage)."""

    def __init__(self, pid):
        self.pid = pid
        self.reaped = None  # (status, rusage) once it ended

    def alive(self):
        if self.reaped is None:
            got, status, usage = os.wait4(self.pid, os.WNOHANG)
            if got == self.pid:
                self.reaped = (status, usage)
        return self.reaped is None

    def wait(self, timeout_s):
        """True once reaped, waiting at most timeout_s."""
        end = time.monotonic() + timeout_s
        while self.alive() and time.monotonic() < end:
            time.sleep(0.05)
        return not self.alive()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ofu", required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--duration", type=float, default=30, help="seconds measured after the first served page")
    parser.add_argument("--window", type=float, default=0.1)
    parser.add_argument("--config", help="an ofu agent config file (e.g. agent-minimal.toml)")
    parser.add_argument("--config-name", default="full", help="what the run's config is called in the results")
    parser.add_argument("--ready-timeout", type=float, default=15, help="seconds to wait for the first page")
    parser.add_argument("--metrics-out", help="where to save the /metrics page read at the end")
    parser.add_argument("--log", help="the agent's standard error")
    parser.add_argument("agent_args", nargs="*", help="more ofu agent flags (after --)")
    args = parser.parse_args(argv)

    port = free_port()
    # --duration: the agent ends by itself even if this script is killed hard.
    safety_s = args.ready_timeout + args.duration + 20
    command = [args.ofu, "agent", "--source", "nvml", "--window", f"{args.window:g}",
               "--listen", f"127.0.0.1:{port}", "--duration", f"{safety_s:g}"]
    if args.config:
        command += ["--config", args.config]
    command += args.agent_args
    log = open(args.log, "w") if args.log else subprocess.DEVNULL
    started = time.monotonic()
    agent = Child(subprocess.Popen(command, stdout=log, stderr=log).pid)
    # A step's timeout sends SIGTERM: take the agent down with this script.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    page = proc0 = proc1 = None
    tasks0, tasks1, t0, t1 = {}, {}, 0.0, 0.0
    status_text = rollup = smaps = ""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        ready_by = started + args.ready_timeout
        while agent.alive() and scrape(port, timeout=1) is None and time.monotonic() < ready_by:
            time.sleep(0.1)
        t0 = time.monotonic()
        proc0 = read_text(f"/proc/{agent.pid}/stat")
        tasks0 = read_tasks(agent.pid)
        while agent.alive() and time.monotonic() < t0 + args.duration:
            time.sleep(min(0.2, max(0.0, t0 + args.duration - time.monotonic())))
        if agent.alive():
            t1 = time.monotonic()
            proc1 = read_text(f"/proc/{agent.pid}/stat")
            tasks1 = read_tasks(agent.pid)
            status_text = read_text(f"/proc/{agent.pid}/status") or ""
            rollup = read_text(f"/proc/{agent.pid}/smaps_rollup") or ""
            smaps = read_text(f"/proc/{agent.pid}/smaps") or ""
            page = scrape(port)
            os.kill(agent.pid, signal.SIGTERM)  # exit 0: stopped by a signal
            if not agent.wait(15):
                os.kill(agent.pid, signal.SIGKILL)
                agent.wait(5)
    finally:
        if agent.alive():
            os.kill(agent.pid, signal.SIGKILL)
            agent.wait(5)
    wall = time.monotonic() - started
    if agent.reaped is not None:
        status, usage = agent.reaped
        run = cost_record(args.label, wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss,
                          os.waitstatus_to_exitcode(status))
    else:
        run = {"label": args.label, "wall_s": wall, "exit_code": None, "error": "the agent could not be reaped"}
    run["command"] = command
    run["window_s"] = args.window
    run["config"] = args.config_name
    if agent.reaped is not None and t1 == 0.0:
        run["error"] = f"the agent ended before the {args.duration:g} s were over (exit {run['exit_code']})"
    if proc0 and proc1 and t1 > t0:
        _, u0, s0 = parse_stat(proc0)
        _, u1, s1 = parse_stat(proc1)
        user, system = (u1 - u0) / ticks, (s1 - s0) / ticks
        run["steady"] = {"wall_s": t1 - t0, "user_s": user, "system_s": system,
                         "cpu_percent": 100.0 * (user + system) / (t1 - t0)}
        run["threads"] = thread_cpu(tasks0, tasks1, t1 - t0, ticks)
    else:
        run["steady"] = None
        run["threads"] = []
    hwm, rss, pss = kib_field(status_text, "VmHWM"), kib_field(status_text, "VmRSS"), kib_field(rollup, "Pss")
    run["vm_hwm_mib"] = hwm / 1024.0 if hwm is not None else None
    run["vm_rss_mib"] = rss / 1024.0 if rss is not None else None
    run["pss_mib"] = pss / 1024.0 if pss is not None else None
    run["memory"] = memory_breakdown(smaps, os.path.realpath(args.ofu)) if smaps else None
    if page is not None:
        run["metrics_lines"] = sum(1 for line in page.splitlines() if line and not line.startswith("#"))
        run["source_calls"] = source_call_table(page)
        run["process_metrics"] = process_metrics(page)
        if args.metrics_out:
            with open(args.metrics_out, "w", encoding="utf-8") as f:
                f.write(page)
    else:
        run["metrics_error"] = "the /metrics page could not be read at the end"
        run["source_calls"] = {"present": False}
        run["process_metrics"] = {}
    append_run(args.json, run)
    print(json.dumps(run))
    return 0 if run.get("exit_code") == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
