#!/usr/bin/env python3
"""`cmake --install` into a temporary prefix, then the installed program run
as an operator would: from the install tree, with an empty environment.

    install_test.py CMAKE BUILD_DIR

Checks the FHS layout deploy/install.cmake promises, the man pages (one per
command the installed `ofu --help` lists), `ofu agent --check-config` on the
installed agent.toml, `ofu report` on the installed bundled recording, and
that the installed agent opens the installed libofu-kubelet.so (found from
its own path, ../lib/ofu/) on a node with a kubelet socket.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)


def run(args, **kwargs):
    # No environment: nothing may depend on a variable (PATH only for the
    # shell the Slurm scripts name; LD_LIBRARY_PATH certainly not).
    return subprocess.run(args, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=60, **kwargs)


def main():
    cmake, build_dir = sys.argv[1], sys.argv[2]
    prefix = tempfile.mkdtemp(prefix="ofu-install-test-")
    try:
        installed = subprocess.run([cmake, "--install", build_dir, "--prefix", prefix], capture_output=True, text=True)
        if installed.returncode != 0:
            print(installed.stdout + installed.stderr, file=sys.stderr)
            return 1
        p = lambda rel: os.path.join(prefix, rel)

        # The layout.
        for rel in ["bin/ofu", "lib/ofu/libofu-kubelet.so", "etc/ofu/agent.toml",
                    "lib/systemd/system/ofu-agent.service", "share/ofu/prometheus/ofu-recording-rules.yml",
                    "share/ofu/prometheus/ofu-alert-rules.yml", "share/ofu/prometheus/ofu-regression-rules.yml",
                    "share/ofu/prometheus/dcgm-exporter-rules.yml", "share/ofu/gpu_specs.json",
                    "share/ofu/recordings/synthetic-2xh100-bf16-matmul.om", "share/doc/ofu/README.md",
                    "share/doc/ofu/agent.md", "share/doc/ofu/deploy.md"]:
            check(os.path.isfile(p(rel)), f"{rel} is not installed")
        for rel in ["bin/ofu", "lib/ofu/slurm/prolog.sh", "lib/ofu/slurm/epilog.sh"]:
            check(os.access(p(rel), os.X_OK), f"{rel} is not installed executable")

        # The unit starts this prefix's binary with this prefix's config.
        with open(p("lib/systemd/system/ofu-agent.service")) as f:
            unit = f.read()
        want = f"ExecStart={prefix}/bin/ofu agent --config {prefix}/etc/ofu/agent.toml\n"
        check(want in unit, f"the installed unit does not say {want!r}")

        # Man pages: ofu(1) and one per command of the installed program.
        help_text = run([p("bin/ofu"), "--help"]).stdout
        commands = re.findall(r"^  ([a-z-]+)  +", help_text.split("Commands:\n", 1)[-1].split("\n\n", 1)[0], re.M)
        check(len(commands) >= 9, f"ofu --help lists {len(commands)} commands: {commands}")
        for name in ["ofu"] + ["ofu-" + c for c in commands]:
            check(os.path.isfile(p(f"share/man/man1/{name}.1.gz")), f"man page {name}(1) is not installed")

        # --version and the agent's config check, on the installed config.
        version = run([p("bin/ofu"), "--version"])
        check(version.returncode == 0 and re.fullmatch(r"ofu \d+\.\d+\.\d+\n", version.stdout),
              f"ofu --version: {version.returncode} {version.stdout!r} {version.stderr!r}")
        checked = run([p("bin/ofu"), "agent", "--check-config", "--config", p("etc/ofu/agent.toml")])
        check(checked.returncode == 0 and checked.stdout.startswith("config ok: source auto, window 1 s"),
              f"agent --check-config: {checked.returncode} {checked.stdout!r} {checked.stderr!r}")

        # The bundled recording, as report_cli_test reads it from the source
        # tree: 2 GPUs, 600 s + 510 s (GPU 1 has a 90 s gap), SYNTHETIC.
        report = run([p("bin/ofu"), "report", "--format", "json", "--input",
                      p("share/ofu/recordings/synthetic-2xh100-bf16-matmul.om")])
        check(report.returncode == 0, f"ofu report: {report.returncode} {report.stderr}")
        if report.returncode == 0:
            j = json.loads(report.stdout)
            check(j["source"]["synthetic"] is True, "the installed recording is not marked synthetic")
            check(j["overall"]["gpus"] == 2 and j["overall"]["seconds"] == 1110,
                  f"ofu report overall: {j['overall']}")

        # The kubelet plugin is found from the binary's own path: with a
        # socket that exists (a plain file, so the connection is refused) the
        # installed agent loads the plugin, whose gRPC client then reports the
        # refused connection. Had it not found the plugin, the log would name
        # the paths it tried.
        socket = p("kubelet.sock")
        open(socket, "w").close()
        config = p("kubelet.toml")
        with open(config, "w") as f:
            f.write(f'[attribution]\nmethods = ["kubelet"]\ninterval = 0.2\nkubelet_socket = "{socket}"\n')
        agent = run([p("bin/ofu"), "agent", "--config", config, "--no-store", "--listen", "127.0.0.1:0", "--source",
                     "replay:" + p("share/ofu/recordings/synthetic-2xh100-bf16-matmul.om"), "--window", "0.2",
                     "--duration", "1"])
        check(agent.returncode == 0, f"the installed agent exited {agent.returncode}: {agent.stderr}")
        check("pod-resources API at unix:" + socket in agent.stderr and "libofu-kubelet.so" not in agent.stderr,
              f"the installed agent did not load its kubelet plugin: {agent.stderr}")
    finally:
        shutil.rmtree(prefix)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
