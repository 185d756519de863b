#!/usr/bin/env python3
"""The agent's cost on a real driver (Stage C, docs/gpu-validation.md).

Runs `ofu agent --source nvml --window 0.1 --duration S` (10 Hz) as a child
process and takes its CPU time and peak RSS from the kernel's accounting of
that child (wait4), as bench/agent_bench.sh does with /usr/bin/time, which
the GPU machine may lack. Halfway through it reads /metrics once and keeps
it, to show that the agent served the real driver's values. Appends one run
to the JSON file given with --json:

  {"runs": [{"label", "wall_s", "user_s", "system_s", "cpu_percent",
             "max_rss_mib", "exit_code", "metrics_lines"}]}
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cost_record(label, wall_s, user_s, system_s, max_rss_kib, exit_code):
    """The figures of one run; CPU as a percentage of one core."""
    return {"label": label, "wall_s": wall_s, "user_s": user_s, "system_s": system_s,
            "cpu_percent": 100.0 * (user_s + system_s) / wall_s if wall_s > 0 else None,
            "max_rss_mib": max_rss_kib / 1024.0, "exit_code": exit_code}


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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ofu", required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--metrics-out", help="where to save the /metrics page read halfway")
    parser.add_argument("--log", help="the agent's standard error")
    parser.add_argument("agent_args", nargs="*", help="more ofu agent flags (after --)")
    args = parser.parse_args(argv)

    port = free_port()
    command = [args.ofu, "agent", "--source", "nvml", "--window", "0.1", "--listen", f"127.0.0.1:{port}",
               "--duration", f"{args.duration:g}"] + args.agent_args
    log = open(args.log, "w") if args.log else subprocess.DEVNULL
    started = time.monotonic()
    child = subprocess.Popen(command, stdout=log, stderr=log)
    page = {}

    def scrape():
        time.sleep(args.duration / 2)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                page["text"] = r.read().decode("utf-8", "replace")
        except Exception as e:  # recorded, not fatal
            page["error"] = f"{type(e).__name__}: {e}"

    reader = threading.Thread(target=scrape, daemon=True)
    reader.start()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - started
    reader.join(timeout=6)
    run = cost_record(args.label, wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss,
                      os.waitstatus_to_exitcode(status))
    run["command"] = command
    if "text" in page:
        run["metrics_lines"] = sum(1 for line in page["text"].splitlines() if line and not line.startswith("#"))
        if args.metrics_out:
            with open(args.metrics_out, "w", encoding="utf-8") as f:
                f.write(page["text"])
    else:
        run["metrics_error"] = page.get("error", "not read")
    append_run(args.json, run)
    print(json.dumps(run))
    return 0 if run["exit_code"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
