#!/usr/bin/env python3
"""check_functions.py - measures every function outside the tests and fails
when one is over 100 lines or when the pipeline's median function is over 15
(README "Layout"; STYLE: functions short).

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
    """(name, first line, length in lines) of each function defined in path."""
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
            depth += 1
        elif c == "}":
            depth -= 1
            if transparent and transparent[-1] == depth + 1:
                transparent.pop()
                head_from = i + 1
            elif depth == len(transparent):
                if name and open_at:
                    end = text.count("\n", 0, i) + 1
                    found.append((name, open_at, end - open_at + 1))
                name, open_at, head_from = None, None, i + 1
        elif c == ";" and depth == len(transparent):
            head_from = i + 1
    return found


def measure(root):
    """(path, name, line, length) of every function under root's folders."""
    out = []
    for top in FOLDERS:
        for dirpath, _, names in sorted(os.walk(os.path.join(root, top))):
            for n in sorted(names):
                if n.endswith(EXTS):
                    p = os.path.join(dirpath, n)
                    rel = os.path.relpath(p, root)
                    out += [(rel, f, ln, k) for f, ln, k in functions(p)]
    return out


def check(rows, top=0):
    """The report's lines and the exit status."""
    lines = []
    for rel, f, ln, k in sorted(rows, key=lambda r: -r[3])[:top]:
        lines.append(f"  {k:4d}  {rel}:{ln}: {f}")
    bad = [r for r in rows if r[3] > MAX_LINES]
    for rel, f, ln, k in bad:
        lines.append(f"check-functions: {rel}:{ln}: {f} is {k} lines (at most {MAX_LINES}): "
                     "split it into steps with a contract comment each")
    pipe = [r[3] for r in rows if r[0].startswith("pipeline/")]
    med = statistics.median(pipe) if pipe else 0
    if med > MAX_PIPELINE_MEDIAN:
        lines.append(f"check-functions: the pipeline's median function is {med:g} lines "
                     f"(at most {MAX_PIPELINE_MEDIAN})")
    longest = max(rows, key=lambda r: r[3]) if rows else ("-", "-", 0, 0)
    lines.append(f"check-functions: {len(rows)} functions, longest {longest[3]} lines "
                 f"({longest[1]}); pipeline: {len(pipe)} functions, median {med:g} lines")
    return lines, 1 if bad or med > MAX_PIPELINE_MEDIAN else 0


def self_test():
    """A small tree whose functions' lengths are known."""
    src = ('/* { not code } */\n#define BRACE {\n'
           'static int f(int a)\n{\n\tconst char *s = "}";\n\treturn a + (s[0] == \'}\');\n}\n'
           'static const int t[] = {1, 2};\nstruct s { int a; };\n'
           'extern "C" {\nvoid g(void) { }\n}\n'
           'int __attribute__((unused)) h(void (*cb)(int))\n{\n' + "\tcb(0);\n" * 99 + "}\n"
           'struct s *s(struct s *s)\n{\n\treturn s;\n}\n')
    want = [("f", 3, 5), ("g", 11, 1), ("h", 13, 102), ("s", 115, 4)]
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "pipeline"))
        with open(os.path.join(root, "pipeline", "x.c"), "w") as f:
            f.write(src)
        got = functions(os.path.join(root, "pipeline", "x.c"))
        lines, rc = check(measure(root))
    if got != want or rc != 1 or not any(": h is 102 lines" in x for x in lines):
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
