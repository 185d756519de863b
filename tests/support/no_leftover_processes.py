#!/usr/bin/env python3
"""Fails when a test of this build tree left a process running.

    no_leftover_processes.py BUILD_DIR [GRACE_SECONDS]

CTest runs this last (the ofu_no_leftovers fixture's cleanup, see
tests/hygiene.cmake). Every other test runs with OFU_TEST_BUILD_TREE=BUILD_DIR
in its environment, and whatever a test starts (ofu, a Prometheus server, a
Python HTTP server, the fake kubelet, tmux, Chromium...) inherits it. So a
process whose environment holds that entry was started by a test of this
build tree, and once every test has ended it should not exist. Other build
trees (other checkouts, the ASan build) have other values and are not ours.

A process that is exiting just now (a test sent SIGTERM and did not wait) gets
GRACE_SECONDS (default 10) to go. Zombies are ignored: they hold no resources,
and their parent, if it is a leftover, is named anyway. The leftovers are
named and left alone; kill them by their ids.

Blind spot: a process started with a cleared environment (`env -i ...`) does
not carry the entry.

Exit status: 0 none left, 1 some left (named on stdout), 2 usage.
"""

import os
import sys
import time

MARKER = "OFU_TEST_BUILD_TREE"


def leftovers(build_dir):
    """(pid, ppid, command line) of each live process carrying our marker."""
    wanted = f"{MARKER}={build_dir}".encode()
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if wanted not in f.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as f:
                # pid (comm) state ppid ...; comm may hold spaces and parentheses.
                state, ppid = f.read().rsplit(b")", 1)[1].split()[:2]
            if state == b"Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                command = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # gone meanwhile, or not ours to read
        found.append((int(entry), int(ppid), command))
    return found


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    build_dir = argv[1]
    grace_s = float(argv[2]) if len(argv) == 3 else 10.0
    deadline = time.monotonic() + grace_s
    while True:
        left = leftovers(build_dir)
        if not left or time.monotonic() >= deadline:
            break
        time.sleep(0.2)
    if not left:
        print(f"no process left by the tests of {build_dir}")
        return 0
    print(f"{len(left)} process(es) started by the tests of {build_dir} are still running "
          f"after every test ended (waited {grace_s:g} s); a test did not stop what it started:")
    for pid, ppid, command in left:
        print(f"  pid {pid} (parent {ppid}): {command[:300]}")
    print("kill them with: kill " + " ".join(str(pid) for pid, _, _ in left))
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
