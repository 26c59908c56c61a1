#!/usr/bin/env python3
"""The layout's rules, checked on the sources and on the built objects (ctest `layout`):

1. the floors: no core object (engine/) calls a function defined by a binding (bindings/);
2. no import circle: among the core's and the bindings' objects, the graph "A calls a
   function defined in B" has no cycle. In the core a node is a family (the files that
   share a prefix: http_*.c, url_*.c, warc_*.c ... are one module split along its seams,
   whose files share an internal header and call one another); in the bindings a node
   is a file (each binding its own module; the embedded Lua table and its loader one);
3. no source file of engine/, bindings/, cli/ or lua/luacrawl/ is over MAX_LINES lines;
4. docs/architecture.md names every such file in its file tables.

usage: check_layout.py SOURCE_DIR BUILD_DIR
"""
import glob
import os
import re
import subprocess
import sys

MAX_LINES = 900
FOLDERS = ["engine", "bindings", "cli", "lua/luacrawl"]


def objects(build):
    """{unit name: (floor, paths)} of the core's families and the bindings' files."""
    found = {}
    for floor, target in (("engine", "luacrawl_core"), ("bindings", "luacrawl_bindings")):
        for path in glob.glob(f"{build}/CMakeFiles/{target}.dir/**/*.o", recursive=True):
            name = os.path.basename(path)[: -len(".c.o")]
            if target == "luacrawl_core":
                name = name.split("_")[0]  # the family
            elif "/embedded/" in path:
                name = "lua_embed"  # the generated table and its loader: one unit
            found.setdefault(name, (floor, []))[1].append(path)
    return found


def symbols(paths):
    defined, undefined = set(), set()
    for path in paths:
        out = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBRVW":
                defined.add(parts[2])
            elif len(parts) == 2 and parts[0] == "U":
                undefined.add(parts[1])
    return defined, undefined


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    src, build = sys.argv[1], sys.argv[2]
    failures = []

    units = objects(build)
    if not units:
        print(f"check_layout: no objects under {build}/CMakeFiles")
        return 2
    owner, needs = {}, {}
    for name, (floor, paths) in units.items():
        defined, undefined = symbols(paths)
        needs[name] = undefined
        for sym in defined:
            owner[sym] = name
    graph = {n: {owner[s] for s in needs[n] if s in owner and owner[s] != n} for n in units}
    for name in sorted(units):
        if units[name][0] != "engine":
            continue
        up = sorted(d for d in graph[name] if units[d][0] != "engine")
        if up:
            failures.append(f"floors: engine/{name}*.c calls into the bindings: {', '.join(up)}")
    for comp in cycles(graph):
        edges = "; ".join(f"{a} -> {', '.join(sorted(graph[a] & set(comp)))}" for a in comp)
        failures.append(f"import circle of {len(comp)} files: {edges}")

    docs = open(os.path.join(src, "docs/architecture.md"), encoding="utf-8").read()
    named = set(re.findall(r"`([A-Za-z0-9_.]+)`", docs))
    for folder in FOLDERS:
        for path in sorted(glob.glob(os.path.join(src, folder, "*.[ch]")) +
                           glob.glob(os.path.join(src, folder, "*.lua"))):
            base = os.path.basename(path)
            with open(path, encoding="utf-8") as f:
                n = sum(1 for _ in f)
            if n > MAX_LINES:
                failures.append(f"size: {folder}/{base} has {n} lines (at most {MAX_LINES})")
            stem, ext = os.path.splitext(base)
            # A row may name a header as `.h` beside its `name.c`.
            if base not in named and not (ext == ".h" and f"{stem}.c" in named):
                failures.append(f"docs: docs/architecture.md does not name {folder}/{base}")

    for f in failures:
        print("check_layout:", f)
    print(f"check_layout: {len(units)} object units, {len(failures)} findings")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
