#!/usr/bin/env python3
"""Checks that each layer includes only the layers it may.

The table is the architecture, and it is written once: the "Layers" table of
docs/ARCHITECTURE.md, read by this script (column 1 the layer, column 3 what
it may include, comma-separated, "—" for nothing). A new include across
layers either fits the table or the table changes on purpose, in review.

The layers are the directories of src/ofu, and two more: everything under
apps/ is the layer "apps" and everything under gpu/ the layer "gpu". A folder
one level down is a sub-layer of its own where the table has a row for it
("sources/nvml"): its files are that layer, and including it takes that name
in the includer's row; a parent's name ("sources") does not grant it. Those
two include the library as "ofu/<layer>/..." and their own headers by a name
beside the including file (or a file the build generates, *.inc): a bare
name found elsewhere, through an include path into another program's
folder, is what this check exists to stop.

Exit 1 names every include that breaks the table (file:line), and a table
that cannot be read.
Usage: check-layers.py ROOT [ARCHITECTURE_MD]   (ROOT holds src/ofu, apps, gpu)
"""
import pathlib
import re
import sys

DEFAULT_DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "ARCHITECTURE.md"
SUFFIXES = {".h", ".cc", ".in", ".cu"}
PROGRAM_LAYERS = ("apps", "gpu")  # top-level folders that are layers of their own


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


LAYER_INCLUDE = re.compile(r'^\s*#\s*include\s+"ofu/([a-z_]+)/(?:([a-z_]+)/)?')


def layer_named(top: str, sub, allowed: dict) -> str:
    """The layer of a path under src/ofu: "top/sub" where the table has that row, else "top"."""
    return f"{top}/{sub}" if sub and f"{top}/{sub}" in allowed else top
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def sources_of(root: pathlib.Path, allowed: dict):
    """(path, layer) of every file the check reads, in a stable order."""
    library = root / "src" / "ofu"
    for path in sorted(library.rglob("*")):
        if path.suffix in SUFFIXES and path.is_file():
            parts = path.relative_to(library).parts
            yield path, layer_named(parts[0], parts[1] if len(parts) > 2 else None, allowed)
    for layer in PROGRAM_LAYERS:
        for path in sorted((root / layer).rglob("*")):
            if path.suffix in SUFFIXES and path.is_file():
                yield path, layer


def check_file(path: pathlib.Path, layer: str, allowed: dict) -> list:
    bad = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = LAYER_INCLUDE.match(line)
        if m:
            included = layer_named(m.group(1), m.group(2), allowed)
            if included != layer and included not in allowed[layer]:
                bad.append(f"{path}:{number}: layer '{layer}' may not include '{included}' "
                           f"(allowed: {', '.join(sorted(allowed[layer])) or 'none'})")
            continue
        m = QUOTED_INCLUDE.match(line)
        if m and layer in PROGRAM_LAYERS and not m.group(1).endswith(".inc"):
            if not (path.parent / m.group(1)).is_file():
                bad.append(f"{path}:{number}: '{m.group(1)}' is neither beside {path.name} nor a library "
                           f"header (\"ofu/<layer>/...\"): layer '{layer}' reaches into another folder")
    return bad


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    if not (root / "src" / "ofu").is_dir():
        print(f"{root}: no src/ofu here; ROOT is the repository's top folder", file=sys.stderr)
        return 2
    allowed = read_layer_table(pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_DOC)
    bad = []
    for path, layer in sources_of(root, allowed):
        if layer not in allowed:
            bad.append(f"{path}: directory '{layer}' is not in the layer table of docs/ARCHITECTURE.md")
            continue
        bad.extend(check_file(path, layer, allowed))
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
