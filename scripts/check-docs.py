#!/usr/bin/env python3
"""Checks that docs/ARCHITECTURE.md and the README's layout name only what exists.

  docs/ARCHITECTURE.md  every file path it names (sources/source.h,
                        apps/ofu/source_flags.cc, data/gpu_specs.json, ...;
                        relative to the repository, src/ofu/ or docs/) is a
                        file, and every code name in backticks (`AddLibraryFlags`,
                        `history::ChooseReadWay`, `OFU_ASSIGN_OR_RETURN`,
                        `Agent.SomeTest`) is found in src/, apps/, gpu/ or
                        tests/. The recipes' placeholders (foo, Foo) are skipped.
  README.md "## Layout"  every directory of src/ofu/ (a layer) has a row of
                        its own, and every path the table names exists.

Usage: check-docs.py REPO_ROOT. Prints each stale name and exits 1; exits 0
when there is none. CTest runs it (docs.ArchitectureAndLayoutAreTrue) and
tests/docs/check_docs_test.py sees it fail on a tree it makes.
"""

import os
import re
import sys

CODE_DIRS = ("src", "apps", "gpu", "tests")
CODE_ENDINGS = (".h", ".cc", ".cu", ".cuh", ".py")
PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.\{[\w,]+\}|\.(?:h|cc|cu|py|md|json|sh|toml)))(?![\w/])")
# A code name: CamelCase with a capital after the first letter, a namespace
# qualified name, a macro with an underscore, or a GoogleTest Suite.Name.
CODE_RE = re.compile(r"^(?:[A-Za-z_]\w*::)*(?:[A-Z][a-z0-9]+[A-Z]\w*|[A-Z][A-Z0-9]*_[A-Z0-9_]+|[A-Z]\w*)"
                     r"(?:\.(?:\w+|\*))?(?:\(\))?$")


def code_text(root):
    chunks = []
    for top in CODE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith(CODE_ENDINGS):
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        chunks.append(fh.read())
    return "\n".join(chunks)


def path_exists(root, path):
    m = re.fullmatch(r"(.*)\.\{([\w,]+)\}", path)
    paths = [f"{m.group(1)}.{e}" for e in m.group(2).split(",")] if m else [path]
    return all(any(os.path.isfile(os.path.join(root, base, p)) for base in ("", "src/ofu", "docs")) for p in paths)


def placeholder(name):
    return "foo" in name.lower()


def check_architecture(root, code):
    problems = []
    with open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        text = f.read()
    for path in sorted(set(PATH_RE.findall(text))):
        if not placeholder(path) and not path_exists(root, path):
            problems.append(f"docs/ARCHITECTURE.md names {path}, which is not a file")
    for token in sorted(set(re.findall(r"`([^`\n]+)`", text))):
        if placeholder(token) or not CODE_RE.match(token):
            continue
        name = re.sub(r"\(\)$", "", token)
        if "." in name:  # a GoogleTest Suite.Name or Suite.*
            suite, test = name.split(".", 1)
            found = re.search(rf"\b{re.escape(suite)}\b", code) and (
                test == "*" or re.search(rf"\b{re.escape(suite)}\s*,\s*{re.escape(test)}\b", code))
        else:
            found = all(re.search(rf"\b{re.escape(part)}\b", code) for part in name.split("::"))
        if not found:
            problems.append(f"docs/ARCHITECTURE.md names `{token}`, which is not in {', '.join(CODE_DIRS)}")
    # Its claims of size and count: "no file in apps/ofu is over N lines",
    # "the N changes people make most often" / "N changes come up" against
    # the recipes it holds.
    for limit in re.findall(r"no file in apps/ofu is over (\d+) lines", text):
        for name in sorted(os.listdir(os.path.join(root, "apps", "ofu"))):
            if not name.endswith((".cc", ".h")):
                continue
            with open(os.path.join(root, "apps", "ofu", name), encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            if lines > int(limit):
                problems.append(f"docs/ARCHITECTURE.md says no file in apps/ofu is over {limit} lines; "
                                f"apps/ofu/{name} has {lines}")
    recipes = len(re.findall(r"^### ", text.split("## Recipes", 1)[-1], re.M))
    words = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
             "ten": 10}
    for word in re.findall(r"\b(\w+) changes (?:people make|come up)", text, re.I):
        if words.get(word.lower()) != recipes:
            problems.append(f"docs/ARCHITECTURE.md speaks of {word} changes; its Recipes section has {recipes}")
    return problems


def check_readme_layout(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Layout\n(.*?)(?=^## )", text, re.S | re.M)
    if not m:
        return ["README.md has no '## Layout' section"]
    rows = [line for line in m.group(1).splitlines() if line.startswith("| `")]
    named = [re.findall(r"`([^`]+)`", row.split("|")[1]) for row in rows]
    problems = []
    for paths in named:
        for p in paths:
            if not os.path.exists(os.path.join(root, p)):
                problems.append(f"README.md's layout names {p}, which does not exist")
    layers = sorted(d for d in os.listdir(os.path.join(root, "src", "ofu"))
                    if os.path.isdir(os.path.join(root, "src", "ofu", d)))
    for layer in layers:
        rows_with = [paths for paths in named if f"src/ofu/{layer}/" in paths]
        if not rows_with:
            problems.append(f"README.md's layout has no row for the layer src/ofu/{layer}/")
        elif any(len([p for p in paths if p.startswith("src/ofu/")]) > 1 for paths in rows_with):
            problems.append(f"README.md's layout gives src/ofu/{layer}/ a row shared with another layer")
    return problems


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    problems = check_architecture(root, code_text(root)) + check_readme_layout(root)
    for p in problems:
        print("FAIL " + p)
    print(f"{len(problems)} stale names")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
