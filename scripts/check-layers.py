#!/usr/bin/env python3
"""Checks that each layer of src/ofu includes only the layers below it.

The table is the architecture (docs/ARCHITECTURE.md, "Layers"): data flows
sources -> core windows -> sinks, and analysis reads what sinks stored. A new
include across layers either fits this table or the table changes on purpose,
in review. Exit 1 names every include that breaks it.
Usage: check-layers.py SRC_DIR   (the directory holding ofu/)
"""
import pathlib
import re
import sys

ALLOWED = {
    "core": set(),
    "formats": {"core"},
    "kernels": {"core"},
    "gemm": {"core", "kernels"},
    "sources": {"core", "formats"},
    "attribution": {"core", "sources"},
    "sinks": {"core", "formats", "sources", "attribution"},
    "agent": {"core", "formats", "sources", "attribution", "sinks"},
    "analysis": {"core", "formats", "kernels", "sources", "sinks"},
    "simulation": {"core", "formats", "sources", "sinks"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"ofu/([a-z_]+)/')


def main() -> int:
    root = pathlib.Path(sys.argv[1]) / "ofu"
    bad = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".h", ".cc", ".in"} or not path.is_file():
            continue
        layer = path.relative_to(root).parts[0]
        if layer not in ALLOWED:
            bad.append(f"{path}: directory '{layer}' is not in the layer table of {sys.argv[0]}")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != layer and m.group(1) not in ALLOWED[layer]:
                bad.append(f"{path}:{number}: layer '{layer}' may not include '{m.group(1)}' "
                           f"(allowed: {', '.join(sorted(ALLOWED[layer])) or 'none'})")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
