#!/usr/bin/env python3
"""GpuValidate.ImportGraph: the Python scripts of scripts/gpu-validate import
each other without a cycle, counting imports inside functions too (a cycle
through a function-level import still ties the files together: neither can
be read, tested or moved without the other). The shared helpers live in
gpuval_core.py, which imports none of the others but agent_cost.py.

Usage: import_graph_test.py [FOLDER]   (default: scripts/gpu-validate of this
checkout). Exits 1 and names each cycle found, 0 when there is none.
"""

import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_FOLDER = os.path.join(HERE, "..", "..", "scripts", "gpu-validate")


def imports_of(path, local):
    """The modules of `local` that the file at `path` imports, anywhere in it."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(n.split(".")[0] for n in names if n.split(".")[0] in local)
    return found


def import_graph(folder):
    local = {f[:-3] for f in os.listdir(folder) if f.endswith(".py")}
    return {m: imports_of(os.path.join(folder, m + ".py"), local) for m in sorted(local)}


def cycles(graph):
    """(the modules tied together, one cycle among them with its first module
    repeated at the end) per strongly connected component that has a cycle
    (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                out.append((sorted(component), path_within(graph, component, v)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_within(graph, component, start):
    """A shortest cycle through `start` inside `component` (breadth-first)."""
    previous, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & component):
                if w == start:
                    path = [v]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return path[::-1] + [start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def main(argv):
    folder = argv[1] if len(argv) > 1 else DEFAULT_FOLDER
    graph = import_graph(folder)
    found = cycles(graph)
    for component, cycle in found:
        print(f"FAIL import cycle among {', '.join(component)}: e.g. {' -> '.join(cycle)}")
    print(f"{len(graph)} modules, {sum(len(v) for v in graph.values())} local imports, {len(found)} cycles")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
