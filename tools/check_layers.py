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

With --render-calls it also fails on a file of pipeline/render/ that names a
function defined in pipeline/stage/ (one with external linkage in a .c file,
or a static inline one in a header): the documents read what the stages
computed, which the job layer hands them, and never run a stage. Reading a
stage's data (a name table) is fine; a render file's own static function
of the same name is its own. --except FILE leaves a render file out.

Usage: tools/check_layers.py [--render-calls [--except FILE]...] [ROOT]
                                     (exit 0: clean; 1: one line per problem)
       tools/check_layers.py --self-test  (the check catches what it should)
"""
import os
import re
import sys
import tempfile

from check_functions import blank as code_only  # one C comment and string blanker

LAYERS = ["lib", "engine", "pipeline/record", "pipeline/stage", "pipeline/render",
          "pipeline/job", "pipeline/cmd"]
EXTS = (".c", ".h", ".cu", ".cuh", ".cpp")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
STAGE, RENDER = "pipeline/stage", "pipeline/render"
IDENT = re.compile(r"[A-Za-z_]\w*")


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


def definitions(code):
    """(name, is_static) of every function defined at file scope of code
    (code_only's text): a name, its parenthesised parameters, then a body."""
    found, depth, start = [], 0, 0
    for m in re.finditer(r"[{};]", code):
        if m.group() == "{":
            if depth == 0:
                head = code[start:m.start()]
                d = re.search(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", head)
                if d and d.group(1) not in ("if", "for", "while", "switch"):
                    found.append((d.group(1), re.search(r"\bstatic\b", head) is not None))
            depth += 1
        elif m.group() == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = m.end()
        elif depth == 0:
            start = m.end()
    return found


def read_code(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return code_only(f.read())


def stage_functions(root):
    """name -> the stage file defining it, for every function render/ may not
    name: external ones of .c files, static inline ones of headers."""
    funcs = {}
    for rel in sources(root):
        if not rel.startswith(STAGE + "/"):
            continue
        header = rel.endswith((".h", ".cuh"))
        for name, static in definitions(read_code(root, rel)):
            if header or not static:
                funcs.setdefault(name, rel)
    return funcs


def render_calls(root, skip=()):
    """One line per place a render/ file (but those in skip) names a stage function."""
    funcs, problems = stage_functions(root), []
    for rel in sources(root):
        if not rel.startswith(RENDER + "/") or rel in skip:
            continue
        code = read_code(root, rel)
        own = {name for name, _ in definitions(code)}
        for ln, line in enumerate(code.split("\n"), 1):
            for m in IDENT.finditer(line):
                name = m.group()
                if name not in funcs or name in own:
                    continue
                before = line[:m.start()].rstrip()
                if before.endswith((".", "->")) or re.search(r"\b(struct|union|enum)$", before):
                    continue  # a member, or a tag that shares the name
                problems.append(f"{rel}:{ln}: calls {name} ({funcs[name]}), a stage function: "
                                "a document reads what the job layer computed for it")
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
    stage = {"pipeline/stage/s.h": "extern const char *const s_names[];\n"
                                    "static inline int s_twice(int x)\n{\n\treturn 2 * x;\n}\n",
             "pipeline/stage/s.c": '#include "s.h"\nconst char *const s_names[] = {"a"};\n'
                                    "static int s_own(void) { return 1; }\n"
                                    "int s_run(const struct s *p,\n\t  int (*f)(int))\n{\n"
                                    "\tif (p) { return s_own(); }\n\treturn 0;\n}\n"
                                    "void s_free(struct s *p) {}\n"}
    calls = [  # (render files, skip, what --render-calls reports)
        ({"pipeline/render/r.c": "int r(void)\n{\n\treturn s_run(0, 0);\n}\n"}, (),
         ["pipeline/render/r.c:3: calls s_run (pipeline/stage/s.c)"]),
        ({"pipeline/render/r.c": "int r(void)\n{\n\treturn s_twice(2);\n}\n"}, (),
         ["pipeline/render/r.c:3: calls s_twice (pipeline/stage/s.h)"]),
        ({"pipeline/render/r.c": "void (*g)(struct s *) = s_free;\n"}, (),
         ["pipeline/render/r.c:1: calls s_free"]),
        ({"pipeline/render/r.c": "/* s_run(p) */\nconst char *r(int v)\n{\n\tputs(\"s_run(\");"
          "\n\treturn p->s_run ? s_names[v] : x.s_free;\n}\nstruct s_run *q;\n"
          "static int s_own(void)\n{\n\treturn 0;\n}\nint t(void) { return s_own(); }\n"},
         (), []),
        ({"pipeline/render/r.c": "int r(void)\n{\n\treturn s_run(0, 0);\n}\n",
          "pipeline/job/j.c": "int j(void) { return s_run(0, 0); }\n"},
         ("pipeline/render/r.c",), []),
    ]
    for files, want in cases + [({**stage, **f}, w) for f, _, w in calls]:
        with tempfile.TemporaryDirectory() as root:
            for path, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as f:
                    f.write(text)
            skip = next((k for f, k, _ in calls if {**stage, **f} == files), ())
            got = problems_in(root) + (render_calls(root, skip) if "pipeline/stage/s.c" in files
                                       else [])
            if len(got) != len(want) or any(not g.startswith(w) for g, w in zip(got, want)):
                print(f"check-layers: self-test failed on {sorted(files)}: got {got}, want {want}")
                return 1
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test()
    calls, skip, root = False, [], "."
    while args:
        a = args.pop(0)
        if a == "--render-calls":
            calls = True
        elif a == "--except" and args:
            skip.append(os.path.normpath(args.pop(0)))
        elif a.startswith("-"):
            print(f"check-layers: unknown option {a} (see tools/check_layers.py)")
            return 2
        else:
            root = a
    problems = problems_in(root) + (render_calls(root, skip) if calls else [])
    for p in problems:
        print("check-layers: " + p)
    if not problems:
        print(f"check-layers: {len(LAYERS)} layers, every include points down, no cycle "
              "across files or folders" + (", no document calls a stage" if calls else "") +
              (f" ({', '.join(skip)} left out)" if skip else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
