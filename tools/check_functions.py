#!/usr/bin/env python3
"""check_functions.py - measures every function outside the tests and fails
when one is over 100 lines or when the pipeline's median function is over 15
(docs/layout.md; STYLE: functions short), and when a function that lib/,
engine/ or pipeline/ export is not named by its file (docs/layout.md: prefixes
name files).

A C file's exported (not static) functions are named `<prefix>_...` where the
prefix is the file's name (`calib_load` in calib.c), the module the file is a
part of (`project_write` in project_yaml.c) or the folder it is in
(`cpu_device_detect` in engine/cpu/device.c). CUDA sources (.cu) are not held
to it: their kernels and device helpers carry their op's short prefix (ta_, tb_, moe_); neither are
the files in NAMED_ELSEWHERE, which define functions whose names are another
program's.

A function's length is its definition's lines, from the line of its name to
its closing brace. Sources: lib/, engine/, pipeline/, bench/, fuzz/ and
tools/ (.c, .cu, .cpp); tests/ are not measured. Comments, strings and
preprocessor lines are read past, so braces in them do not count; the body
of `extern "C" { }` and `namespace { }` is read as top level.

Usage: tools/check_functions.py [--top N] [ROOT]
  exit 0: within the limits; 1: one line per function over the limit, or the
  median over its bound. --top N lists the N longest functions first.
"""
import os
import re
import statistics
import sys
import tempfile

MAX_LINES = 100
MAX_PIPELINE_MEDIAN = 15
FOLDERS = ("lib", "engine", "pipeline", "bench", "fuzz", "tools")
EXTS = (".c", ".cu", ".cpp")
NOT_NAMES = {"__attribute__", "__launch_bounds__", "__declspec", "alignas", "_Alignas",
             "__align__", "if", "for", "while", "switch", "sizeof", "return"}
IDENT = re.compile(r"[A-Za-z_]\w*")
PREFIX_FOLDERS = ("lib", "engine", "pipeline")
PREFIX_EXTS = (".c", ".cpp")
NAMED_ELSEWHERE = {
    "engine/cuda/backend.c": "the CUDA backend's forwards of ddt's own functions, under their names",
    "engine/cuda/sim/sim.cpp": "the CUDA runtime's functions, for running kernel sources on the CPU",
}


def blank(text):
    """text with comments, string and character literals and preprocessor
    lines replaced by spaces, newlines kept (so offsets keep their line)."""
    out, i, n, line_start = [], 0, len(text), True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while j < n and (text[j] != "\n" or text[j - 1] == "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j += 1
        else:
            out.append(c)
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:j]))
        i = j
    return "".join(out)


def function_name(head):
    """(name, offset in head) when a top-level declaration head defines a
    function (it ends with its parameter list, optionally const/noexcept),
    else (None, 0)."""
    h = re.sub(r"\s*\b(const|noexcept|override)\s*$", "", head.rstrip())
    if not h.endswith(")") or "=" in h.split("(")[0]:
        return None, 0
    name, at, depth = None, 0, 0
    for m in re.finditer(r"[()]|[A-Za-z_]\w*(?=\s*\()", h):
        t = m.group(0)
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        elif depth == 0 and t not in NOT_NAMES:
            name, at = t, m.start()
    return name, at


def functions(path):
    """(name, first line, length in lines, exported) of each function defined
    in path; exported is False for a static function."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found, depth, transparent, head_from, open_at = [], 0, [], 0, None
    name = None
    for i, c in enumerate(text):
        if c == "{":
            if depth == len(transparent):
                head = text[head_from:i]
                if re.fullmatch(r"extern|namespace(\s+\w+)?", head.strip()):
                    transparent.append(depth + 1)
                else:
                    name, at = function_name(head)
                    if name:
                        open_at = text.count("\n", 0, head_from + at) + 1
                        exported = not re.search(r"\bstatic\b", head)
            depth += 1
        elif c == "}":
            depth -= 1
            if transparent and transparent[-1] == depth + 1:
                transparent.pop()
                head_from = i + 1
            elif depth == len(transparent):
                if name and open_at:
                    end = text.count("\n", 0, i) + 1
                    found.append((name, open_at, end - open_at + 1, exported))
                name, open_at, head_from = None, None, i + 1
        elif c == ";" and depth == len(transparent):
            head_from = i + 1
    return found


def measure(root):
    """(path, name, line, length, exported) of every function under root's
    folders."""
    out = []
    for top in FOLDERS:
        for dirpath, _, names in sorted(os.walk(os.path.join(root, top))):
            for n in sorted(names):
                if n.endswith(EXTS):
                    p = os.path.join(dirpath, n)
                    rel = os.path.relpath(p, root)
                    out += [(rel, *f) for f in functions(p)]
    return out


def prefixes(rel):
    """The prefixes a function exported from the file rel may carry: the
    file's name, its module's (the name up to the first '_') and its folder's."""
    folder, name = os.path.split(rel)
    stem = os.path.splitext(name)[0]
    return {stem, stem.split("_")[0], os.path.basename(folder)}


def misnamed(rows):
    """The exported functions whose name is not their file's prefix."""
    out = []
    for rel, f, ln, k, exported in rows:
        if (not exported or f == "main" or not rel.endswith(PREFIX_EXTS)
                or not rel.startswith(tuple(p + "/" for p in PREFIX_FOLDERS))
                or rel in NAMED_ELSEWHERE):
            continue
        if not any(f == p or f.startswith(p + "_") for p in prefixes(rel)):
            out.append((rel, f, ln))
    return out


def check(rows, top=0):
    """The report's lines and the exit status."""
    lines = []
    for rel, f, ln, k, _ in sorted(rows, key=lambda r: -r[3])[:top]:
        lines.append(f"  {k:4d}  {rel}:{ln}: {f}")
    wrong = misnamed(rows)
    for rel, f, ln in wrong:
        want = " or ".join(sorted(p + "_" for p in prefixes(rel)))
        lines.append(f"check-functions: {rel}:{ln}: {f} is exported but not named by its file: "
                     f"call it {want}..., move it to the file its prefix names, or make it static")
    bad = [r for r in rows if r[3] > MAX_LINES]
    for rel, f, ln, k, _ in bad:
        lines.append(f"check-functions: {rel}:{ln}: {f} is {k} lines (at most {MAX_LINES}): "
                     "split it into steps with a contract comment each")
    pipe = [r[3] for r in rows if r[0].startswith("pipeline/")]
    med = statistics.median(pipe) if pipe else 0
    if med > MAX_PIPELINE_MEDIAN:
        lines.append(f"check-functions: the pipeline's median function is {med:g} lines "
                     f"(at most {MAX_PIPELINE_MEDIAN})")
    longest = max(rows, key=lambda r: r[3]) if rows else ("-", "-", 0, 0, False)
    lines.append(f"check-functions: {len(rows)} functions, longest {longest[3]} lines "
                 f"({longest[1]}); pipeline: {len(pipe)} functions, median {med:g} lines; "
                 f"{sum(1 for r in rows if r[4])} exported, {len(wrong)} not named by their file")
    return lines, 1 if bad or wrong or med > MAX_PIPELINE_MEDIAN else 0


def self_test():
    """A small tree whose functions' lengths and names are known."""
    src = ('/* { not code } */\n#define BRACE {\n'
           'static int f(int a)\n{\n\tconst char *s = "}";\n\treturn a + (s[0] == \'}\');\n}\n'
           'static const int t[] = {1, 2};\nstruct s { int a; };\n'
           'extern "C" {\nvoid x_part_g(void) { }\n}\n'
           'int __attribute__((unused)) h(void (*cb)(int))\n{\n' + "\tcb(0);\n" * 99 + "}\n"
           'struct s *x_s(struct s *s)\n{\n\treturn s;\n}\n')
    want = [("f", 3, 5, False), ("x_part_g", 11, 1, True), ("h", 13, 102, True),
            ("x_s", 115, 4, True)]
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "pipeline", "stage"))
        path = os.path.join(root, "pipeline", "stage", "x_part.c")
        with open(path, "w") as f:
            f.write(src)
        got = functions(path)
        lines, rc = check(measure(root))
    named = [x for x in lines if "not named by its file" in x]
    if (got != want or rc != 1 or not any(": h is 102 lines" in x for x in lines)
            or len(named) != 1 or "x_part.c:13: h is exported" not in named[0]):
        print(f"check-functions: self-test failed: got {got}, want {want}; {lines}")
        return 1
    return 0


def main():
    args = sys.argv[1:]
    if args == ["--self-test"]:
        return self_test()
    top = 0
    if args[:1] == ["--top"]:
        top, args = int(args[1]), args[2:]
    lines, rc = check(measure(args[0] if args else "."), top)
    print("\n".join(lines))
    return rc


if __name__ == "__main__":
    sys.exit(main())
