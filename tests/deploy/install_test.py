#!/usr/bin/env python3
"""`cmake --install` into a temporary prefix, then the installed program run
as an operator would: from the install tree, with an empty environment.

    install_test.py CMAKE BUILD_DIR

Checks the FHS layout deploy/install.cmake promises, the man pages (one per
command the installed `ofu --help` lists), the unit, and what
deploy_checks.check_program runs: `ofu agent --check-config` on the
installed agent.toml, `ofu report` on the installed bundled recording, and
the installed agent opening the installed libofu-kubelet.so.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from deploy_checks import check, check_program, check_unit, failures, run


def main():
    cmake, build_dir = sys.argv[1], sys.argv[2]
    prefix = tempfile.mkdtemp(prefix="ofu-install-test-")
    try:
        installed = subprocess.run([cmake, "--install", build_dir, "--prefix", prefix], capture_output=True, text=True)
        if installed.returncode != 0:
            print(installed.stdout + installed.stderr, file=sys.stderr)
            return 1
        p = lambda rel: os.path.join(prefix, rel)

        for rel in ["bin/ofu", "lib/ofu/libofu-kubelet.so", "lib/ofu/libofu-http.so", "etc/ofu/agent.toml",
                    "lib/systemd/system/ofu-agent.service", "share/ofu/prometheus/ofu-recording-rules.yml",
                    "share/ofu/prometheus/ofu-alert-rules.yml", "share/ofu/prometheus/ofu-regression-rules.yml",
                    "share/ofu/prometheus/dcgm-exporter-rules.yml", "share/ofu/gpu_specs.json",
                    "share/ofu/recordings/synthetic-2xh100-bf16-matmul.om",
                    "share/ofu/recordings/h100-sxm5-stage-a-1s.om", "share/doc/ofu/README.md",
                    "share/doc/ofu/agent.md", "share/doc/ofu/deploy.md", "share/doc/ofu/copyright",
                    "share/ofu/kubernetes/ofu-agent.yaml", "share/ofu/kubernetes/servicemonitor.yaml",
                    "share/ofu/grafana/ofu-fleet.json", "share/ofu/grafana/ofu-dcgm-exporter.json"]:
            check(os.path.isfile(p(rel)), f"{rel} is not installed")
        for rel in ["bin/ofu", "lib/ofu/slurm/prolog.sh", "lib/ofu/slurm/epilog.sh"]:
            check(os.access(p(rel), os.X_OK), f"{rel} is not installed executable")

        # The unit starts this prefix's binary with this prefix's config.
        unit = p("lib/systemd/system/ofu-agent.service")
        with open(unit) as f:
            text = f.read()
        want = f"ExecStart={prefix}/bin/ofu agent --config {prefix}/etc/ofu/agent.toml\n"
        check(want in text, f"the installed unit does not say {want!r}")
        check_unit(unit)

        # Man pages: ofu(1) and one per command of the installed program.
        help_text = run([p("bin/ofu"), "--help"]).stdout
        listed = help_text.split("Commands:\n", 1)[-1].split("\n\n", 1)[0]
        commands = re.findall(r"^  ([a-z-]+)  +", listed, re.M)
        check(len(commands) >= 9, f"ofu --help lists {len(commands)} commands: {commands}")
        for name in ["ofu"] + ["ofu-" + c for c in commands]:
            check(os.path.isfile(p(f"share/man/man1/{name}.1.gz")), f"man page {name}(1) is not installed")

        # The installed ofu opens the installed HTTP client plugin (it never
        # looks in a build tree): a scrape of a closed port fails on the
        # connection, not on loading the plugin.
        scrape = run([p("bin/ofu"), "record", "--source", "scrape:http://127.0.0.1:1/metrics", "--duration", "1",
                      "--out", os.path.join(prefix, "scrape.om")])
        check(scrape.returncode != 0 and "is dcgm-exporter running there" in scrape.stderr
              and "plugin" not in scrape.stderr, f"the installed ofu could not use its HTTP client: {scrape.stderr!r}")

        check_program(p("bin/ofu"), p("etc/ofu/agent.toml"),
                      p("share/ofu/recordings/synthetic-2xh100-bf16-matmul.om"), prefix)
    finally:
        shutil.rmtree(prefix)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
