"""Checks shared by the install and package tests (tests/deploy/): the
installed program run as an operator runs it, with an empty environment."""
import json
import os
import re
import shutil
import subprocess
import sys

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)
    return condition


def run(args, timeout=60):
    # No environment: nothing may depend on a variable (LD_LIBRARY_PATH
    # certainly not; PATH only for the programs the scripts name).
    return subprocess.run(args, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=timeout)


def check_program(ofu, agent_toml, recording, scratch, version=None):
    """`ofu --version`, `ofu agent --check-config` on the installed config,
    `ofu report` on the installed bundled recording, and the installed agent
    loading the installed kubelet plugin (found from its own path)."""
    got = run([ofu, "--version"])
    want = f"ofu {version}\n" if version else None
    check(got.returncode == 0 and (got.stdout == want if want else re.fullmatch(r"ofu \d+\.\d+\.\d+\n", got.stdout)),
          f"{ofu} --version: {got.returncode} {got.stdout!r} {got.stderr!r}")

    checked = run([ofu, "agent", "--check-config", "--config", agent_toml])
    check(checked.returncode == 0 and checked.stdout.startswith("config ok: source auto, window 1 s"),
          f"agent --check-config --config {agent_toml}: {checked.returncode} {checked.stdout!r} {checked.stderr!r}")

    # As report_cli_test reads it from the source tree: 2 GPUs, 600 s + 510 s
    # (GPU 1 has a 90 s gap), marked SYNTHETIC.
    report = run([ofu, "report", "--format", "json", "--input", recording])
    if check(report.returncode == 0, f"ofu report --input {recording}: {report.returncode} {report.stderr}"):
        j = json.loads(report.stdout)
        check(j["source"]["synthetic"] is True, "the installed recording is not marked synthetic")
        check(j["overall"]["gpus"] == 2 and j["overall"]["seconds"] == 1110, f"ofu report overall: {j['overall']}")

    # With a kubelet socket that exists (a plain file: the connection is
    # refused) the agent loads libofu-kubelet.so, whose gRPC client reports the
    # refusal. Had it not found the plugin, the log would name the paths tried.
    socket = os.path.join(scratch, "kubelet.sock")
    open(socket, "w").close()
    config = os.path.join(scratch, "kubelet.toml")
    with open(config, "w") as f:
        f.write(f'[attribution]\nmethods = ["kubelet"]\ninterval = 0.2\nkubelet_socket = "{socket}"\n')
    agent = run([ofu, "agent", "--config", config, "--no-store", "--listen", "127.0.0.1:0", "--source",
                 "replay:" + recording, "--window", "0.2", "--duration", "1"])
    check(agent.returncode == 0, f"the installed agent exited {agent.returncode}: {agent.stderr}")
    check("pod-resources API at unix:" + socket in agent.stderr and "libofu-kubelet.so" not in agent.stderr,
          f"the installed agent did not load its kubelet plugin: {agent.stderr}")


def check_unit(path):
    """systemd-analyze verify: the unit parses, its keys are known, and the
    binary it starts exists."""
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        print(f"note: no systemd-analyze, {path} not verified", file=sys.stderr)
        return
    got = subprocess.run([analyze, "verify", path], capture_output=True, text=True, timeout=60)
    check(got.returncode == 0 and "Unknown" not in got.stderr,
          f"systemd-analyze verify {path}: {got.returncode} {got.stderr}")
