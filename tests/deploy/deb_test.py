#!/usr/bin/env python3
"""The Debian package: built by CPack from the build tree into a temporary
directory (what `make deb` makes in build/), checked by lintian, its control
files read, then extracted into a throwaway root (dpkg-deb -x) and the
program run from there.

    deb_test.py CPACK BUILD_DIR VERSION SOURCE_DIR

lintian must report no error, and every warning it reports must be listed,
with its reason, in docs/deploy.md ("lintian warnings kept").
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from deploy_checks import check, check_program, check_unit, failures


def control_file(deb, name, scratch):
    out = os.path.join(scratch, "control")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(["dpkg-deb", "--control", deb, out], check=True)
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def main():
    cpack, build_dir, version, source_dir = sys.argv[1:5]
    scratch = tempfile.mkdtemp(prefix="ofu-deb-test-")
    try:
        made = subprocess.run([cpack, "-G", "DEB", "--config", os.path.join(build_dir, "CPackConfig.cmake"), "-B",
                               scratch], capture_output=True, text=True, timeout=900)
        deb = os.path.join(scratch, f"ofu_{version}_amd64.deb")
        if made.returncode != 0 or not os.path.exists(deb):
            print(made.stdout + made.stderr, file=sys.stderr)
            return 1

        field = lambda name: subprocess.run(["dpkg-deb", "--field", deb, name], capture_output=True,
                                            text=True).stdout.strip()
        check(field("Package") == "ofu" and field("Version") == version,
              f"Package/Version: {field('Package')} {field('Version')}")
        depends = field("Depends")
        # adduser for postinst; the libraries from dpkg-shlibdeps.
        for wanted in ["adduser", "libc6 (>=", "libfmt9", "libsqlite3-0", "libsystemd0", "libgrpc++"]:
            check(wanted in depends, f"Depends lacks {wanted}: {depends}")
        check(control_file(deb, "conffiles", scratch) == "/etc/ofu/agent.toml\n", "conffiles is not /etc/ofu/agent.toml")
        postinst = control_file(deb, "postinst", scratch) or ""
        check("adduser --system --group --home /var/lib/ofu" in postinst and "chown ofu:ofu /var/lib/ofu" in postinst,
              "postinst does not create the ofu user and /var/lib/ofu")

        lintian = shutil.which("lintian")
        if check(lintian is not None, "no lintian (scripts/install-deps.sh installs it)"):
            got = subprocess.run([lintian, "--fail-on", "error", "--no-tag-display-limit", deb], capture_output=True,
                                 text=True, timeout=900)
            print(got.stdout, end="")
            check(got.returncode == 0, f"lintian reports errors:\n{got.stdout}{got.stderr}")
            with open(os.path.join(source_dir, "docs", "deploy.md")) as f:
                documented = f.read()
            for tag in re.findall(r"^W: ofu[^:]*: (\S+)", got.stdout, re.M):
                check(f"`{tag}`" in documented, f"lintian warning {tag} is not listed in docs/deploy.md")

        root = os.path.join(scratch, "root")
        subprocess.run(["dpkg-deb", "--extract", deb, root], check=True)
        unit = os.path.join(root, "usr/lib/systemd/system/ofu-agent.service")
        with open(unit) as f:
            check("ExecStart=/usr/bin/ofu agent --config /etc/ofu/agent.toml\n" in f.read(),
                  "the packaged unit does not start /usr/bin/ofu with /etc/ofu/agent.toml")
        check(os.path.isfile(os.path.join(root, "usr/share/man/man1/ofu-agent.1.gz")), "no ofu-agent(1) in the package")
        check_program(os.path.join(root, "usr/bin/ofu"), os.path.join(root, "etc/ofu/agent.toml"),
                      os.path.join(root, "usr/share/ofu/recordings/synthetic-2xh100-bf16-matmul.om"), scratch,
                      version=version)
    finally:
        shutil.rmtree(scratch)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
