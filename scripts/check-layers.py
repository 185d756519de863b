#!/usr/bin/env python3
"""Checks that each layer of src/ofu includes only the layers it may.

The table is the architecture, and it is written once: the "Layers" table of
docs/ARCHITECTURE.md, read by this script (column 1 the layer, column 3 what
it may include, comma-separated, "—" for nothing). A new include across
layers either fits the table or the table changes on purpose, in review.
Exit 1 names every include that breaks it, and a table that cannot be read.
Usage: check-layers.py SRC_DIR [ARCHITECTURE_MD]   (SRC_DIR holds ofu/)
"""
import pathlib
import re
import sys

DEFAULT_DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ARCHITECTURE.md"


def read_layer_table(doc: pathlib.Path) -> dict:
    """{layer: set of layers it may include} from the doc's "## Layers" table."""
    allowed = {}
    in_section = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_section = line.strip() == "## Layers"
            continue
        if not in_section or not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("layer", "") or set(cells[0]) <= {"-"}:
            continue
        may = set() if cells[2] in ("—", "-") else {name.strip() for name in cells[2].split(",")}
        allowed[cells[0]] = may
    unknown = {name for may in allowed.values() for name in may} - allowed.keys()
    if not allowed or unknown:
        raise SystemExit(f"{doc}: the Layers table is missing or names unknown layers: {sorted(unknown)}")
    return allowed


INCLUDE = re.compile(r'^\s*#\s*include\s+"ofu/([a-z_]+)/')


def main() -> int:
    root = pathlib.Path(sys.argv[1]) / "ofu"
    allowed = read_layer_table(pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_DOC)
    bad = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in {".h", ".cc", ".in"} or not path.is_file():
            continue
        layer = path.relative_to(root).parts[0]
        if layer not in allowed:
            bad.append(f"{path}: directory '{layer}' is not in the layer table of docs/ARCHITECTURE.md")
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) != layer and m.group(1) not in allowed[layer]:
                bad.append(f"{path}:{number}: layer '{layer}' may not include '{m.group(1)}' "
                           f"(allowed: {', '.join(sorted(allowed[layer])) or 'none'})")
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
