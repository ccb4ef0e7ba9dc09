#!/usr/bin/env python3
"""check_layers.py - fails on an include that points up the layers, or on an
include cycle between files of different folders, or on a cycle between folders
(docs/layout.md).

The layers, lowest first; a file may include headers of its own layer and of
the layers below it, never above:

    lib  ->  engine  ->  pipeline/record  ->  pipeline/stage
         ->  pipeline/render  ->  pipeline/job  ->  pipeline/cmd

Subfolders belong to their folder's layer (engine/cpu is engine). A quoted
include resolves as the compiler resolves it: the including file's folder
first, then the layers' folders in order (the Makefile's -I list). Angle
includes and headers outside the layers (system, cmocka, CUDA) are not
checked. For file cycles, x.c and x.h are one node; a cycle whose nodes all
share one folder is that folder's business and is not reported. Folders are
nodes too: a folder whose files include a folder whose files include it back
(engine -> engine/cpu -> engine) is a cycle even when no file cycle closes.

Usage: tools/check_layers.py [ROOT]   (exit 0: clean; 1: one line per problem)
       tools/check_layers.py --self-test  (the check catches what it should)
"""
import os
import re
import sys
import tempfile

LAYERS = ["lib", "engine", "pipeline/record", "pipeline/stage", "pipeline/render",
          "pipeline/job", "pipeline/cmd"]
EXTS = (".c", ".h", ".cu", ".cuh", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def layer_of(path):
    """The index of the layer that holds path (relative to the root), or None."""
    best = None
    for i, d in enumerate(LAYERS):
        if path == d or path.startswith(d + "/"):
            if best is None or len(d) > len(LAYERS[best]):
                best = i
    return best


def sources(root):
    for top in ("lib", "engine", "pipeline"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith(EXTS):
                    yield os.path.relpath(os.path.join(dirpath, n), root)


def resolve(root, src, name):
    """The project file that `#include "name"` in src reaches, or None."""
    for d in [os.path.dirname(src)] + LAYERS:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(root, p)):
            return p
    return None


def includes(root):
    """(src, line, header) for every quoted include that reaches a project file."""
    for src in sources(root):
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            for ln, text in enumerate(f, 1):
                m = INCLUDE.match(text)
                if m:
                    h = resolve(root, src, m.group(1))
                    if h:
                        yield src, ln, h


def node(path):
    return os.path.splitext(path)[0]


def cycles(edges):
    """Strongly connected components with more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], [0]
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = n[0]
        n[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = n[0]
                n[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(edges.get(w, ())))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def problems_in(root):
    """One line per upward include and per cycle across folders under root."""
    problems, edges, dirs = [], {}, {}
    for src, ln, h in includes(root):
        ls, lh = layer_of(src), layer_of(h)
        if ls is not None and lh is not None and lh > ls:
            problems.append(f"{src}:{ln}: includes {h} ({LAYERS[lh]}), above its layer "
                            f"{LAYERS[ls]}: move the shared part down or the file up")
        a, b = node(src), node(h)
        if a != b:
            edges.setdefault(a, set()).add(b)
        da, db = os.path.dirname(src), os.path.dirname(h)
        if da != db:
            dirs.setdefault(da, {}).setdefault(db, f"{src}:{ln}")
    for comp in cycles(edges):
        if len({os.path.dirname(x) for x in comp}) > 1:
            problems.append("include cycle across folders: " + " <-> ".join(comp) +
                            ": cut it so one of them needs nothing of the others")
    for comp in cycles({d: set(to) for d, to in dirs.items()}):
        why = [dirs[a][b] for a in comp for b in comp if b in dirs.get(a, {})]
        problems.append("folder cycle: " + " <-> ".join(comp) + " (" + ", ".join(why) +
                        "): move what both need into the lower folder")
    return problems


def self_test():
    """Small trees: a clean one passes, an upward include and a cycle across
    folders of one layer are each caught, a cycle inside one folder is not."""
    cases = [
        ({"lib/a.h": "", "engine/e.h": '#include "a.h"\n'}, []),
        ({"engine/e.c": '#include "record.h"\n', "pipeline/record/record.h": ""},
         ["engine/e.c:1: includes pipeline/record/record.h"]),
        ({"engine/r.h": '#include "cpu/c.h"\n', "engine/cpu/c.h": '#include "r.h"\n'},
         ["include cycle across folders: engine/cpu/c <-> engine/r", "folder cycle: engine"]),
        ({"engine/h.c": '#include "cpu/c.h"\n', "engine/cpu/c.h": "",
          "engine/cpu/k.c": '#include "r.h"\n', "engine/r.h": ""},
         ["folder cycle: engine <-> engine/cpu"]),
        ({"engine/h.c": '#include "p.h"\n', "engine/p.h": "",
          "engine/cpu/k.c": '#include "r.h"\n', "engine/r.h": ""}, []),
        ({"pipeline/stage/x.h": '#include "y.h"\n', "pipeline/stage/y.h": '#include "x.h"\n'},
         []),
    ]
    for files, want in cases:
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            got = problems_in(root)
            if len(got) != len(want) or any(not g.startswith(w) for g, w in zip(got, want)):
                print(f"check-layers: self-test failed on {sorted(files)}: got {got}, want {want}")
                return 1
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems = problems_in(sys.argv[1] if len(sys.argv) > 1 else ".")
    for p in problems:
        print("check-layers: " + p)
    if not problems:
        print(f"check-layers: {len(LAYERS)} layers, every include points down, no cycle "
              "across files or folders")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
