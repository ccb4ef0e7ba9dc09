#!/usr/bin/env python3
"""sass_check.py - reads the machine code (SASS) of the CUDA kernels and checks
what can be known without a GPU: no local memory (spills or stack arrays),
tensor-core instructions where a kernel's speed depends on them, registers
within the budget of each kernel's planned occupancy, and instruction budgets
for the hot loops. Prints the table it checks; exits 1 when a row fails.

usage: sass_check.py CUOBJDUMP CUBIN...   (one cubin per source file and arch,
                                          named <file>.sm_<NN>.cubin)

The hot-loop budgets (engine/cuda/NOTES.md derives them):
  moe_gemm1, moe_gemm2: every innermost loop that holds HMMA streams 128 bytes
    of weights per HMMA (an INT4 16x16 A tile, or four of a bf16 16x16 tile's
    rows); at 4.3 TB/s an SM must retire those bytes at 4 warp-instructions
    per cycle shared with everything else, so the loop may spend at most 0.17
    instructions per weight byte (Marlin's order; the loops take 0.162-0.167).
  moe_gemm2 also per item: a warp's work item at the Kimi shape streams
    item_bytes of INT4 weights (one 16-row tile over inter = 256: 4 stages of
    512 B = 2048 B); the instructions of the loop around the hot loop (the
    item's set-up, prologue, drain and epilogue, every path counted), plus
    the hot loop's as many times as the item needs, over item_bytes: at most
    0.25 per byte (the hot loop alone says nothing about an item whose
    pipeline fills and drains around 2 KB).
  ta_main: the instructions of one 32-key chunk per warp (36.9 KB of cache
    per CTA); at one CTA per SM the HBM share of an SM allows ~1120 per warp
    at full issue: the budget keeps it at half that.
"""
import re
import subprocess
import sys

# kernel (demangled prefix) -> threads per block, planned blocks per SM,
# needs HMMA, hot-loop check ("bytes": per-weight-byte budget, "chunk":
# instructions per iteration)
KERNELS = {
    "moe_gemm1": dict(threads=256, blocks=3, hmma=True, loop=("bytes", 0.17)),
    "moe_gemm2": dict(threads=256, blocks=3, hmma=True, loop=("bytes", 0.17),
                      item=(0.25, 2048)),
    "moe_route": dict(threads=512, blocks=1),
    "moe_finalize": dict(threads=256, blocks=4),
    "moe_pack_q4": dict(threads=256, blocks=4),
    "moe_pack_scales": dict(threads=256, blocks=4),
    "moe_pack_bf16": dict(threads=256, blocks=4),
    "ta_main": dict(threads=256, blocks=1, hmma=True, loop=("chunk", 560)),
    "ta_combine": dict(threads=256, blocks=4),
    "ta_convert": dict(threads=256, blocks=4),
    "tb_scan": dict(threads=256, blocks=2),
    "tb_tree": dict(threads=512, blocks=1),
    "ac_kernel": dict(threads=256, blocks=1),
}
REGS_PER_SM = 65536
WEIGHT_BYTES_PER_HMMA = 128


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def short_name(mangled):
    """_Z9moe_gemm18moe_args -> moe_gemm1; _Z7tb_scanILi4EEv7tb_args -> tb_scan<4>."""
    m = re.match(r"_Z(\d+)", mangled)
    if not m:
        return mangled
    n = int(m.group(1))
    start = m.end()
    name = mangled[start:start + n]
    t = re.match(r"ILi(\d+)EE", mangled[start + n:])
    return "%s<%s>" % (name, t.group(1)) if t else name


def res_usage(cuobjdump, cubin):
    """{mangled: {REG, STACK, SHARED, LOCAL}} from cuobjdump -res-usage."""
    out, fn = {}, None
    for line in run([cuobjdump, "-res-usage", cubin]).splitlines():
        m = re.match(r"\s*Function (\S+):", line)
        if m:
            fn = m.group(1)
            continue
        if fn and "REG:" in line:
            out[fn] = {k: int(v) for k, v in re.findall(r"(\w+):(\d+)", line)}
            fn = None
    return out


def sass(cuobjdump, cubin):
    """{mangled: [(addr, text)]} from cuobjdump -sass."""
    funcs, cur = {}, None
    for line in run([cuobjdump, "-sass", cubin]).splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2).strip()))
    return funcs


def opcode(text):
    t = re.sub(r"^@!?U?P\w+\s+", "", text)
    return t.split()[0] if t else ""


def hot_loops(code):
    """Innermost loops (backward branch ranges) that hold HMMA:
    [(first, last, instructions, hmma)]."""
    loops = []
    # branches after the last EXIT are the divergence stubs of warp
    # primitives (BRA.DIV targets) jumping back, not loops
    exits = [a for a, t in code if opcode(t) == "EXIT"]
    end = exits[-1] if exits else code[-1][0] if code else 0
    for i, (addr, text) in enumerate(code):
        if addr > end:
            break
        m = re.search(r"\bBRA\s+(?:\S+,\s*)?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr and opcode(text).startswith("BRA"):
            lo = int(m.group(1), 16)
            body = [t for a, t in code if lo <= a <= addr]
            hmma = sum(opcode(t).startswith("HMMA") for t in body)
            if hmma:
                loops.append((lo, addr, len(body), hmma))
    return [l for l in loops
            if not any(o != l and l[0] <= o[0] and o[1] <= l[1] for o in loops)]


def all_loops(code):
    """Every backward-branch range before the last EXIT: [(first, last, n)]."""
    exits = [a for a, t in code if opcode(t) == "EXIT"]
    end = exits[-1] if exits else code[-1][0] if code else 0
    out = []
    for addr, text in code:
        if addr > end:
            break
        m = re.search(r"\bBRA\s+(?:\S+,\s*)?(0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < addr and opcode(text).startswith("BRA"):
            lo = int(m.group(1), 16)
            out.append((lo, addr, sum(1 for a, _ in code if lo <= a <= addr)))
    return out


def item_cost(code, hot, item_bytes):
    """(instructions per item, description) for the heaviest hot loop (the
    INT4 one, not the bf16 shared expert's): the outermost loop around it
    (one item per trip) counted outside every hot loop, plus the hot loop's
    instructions times item_bytes / (its HMMA x 128 B)."""
    lo, hi, n, h = max(hot, key=lambda l: l[2])
    reps = item_bytes / (h * WEIGHT_BYTES_PER_HMMA)
    parents = [l for l in all_loops(code) if l[0] <= lo and hi <= l[1] and (l[0], l[1]) != (lo, hi)]
    if not parents:
        return n * reps, "%.0f = %d x %.2f" % (n * reps, n, reps)
    plo, phi, pn = max(parents, key=lambda l: l[2])
    inside = sum(l[2] for l in hot if plo <= l[0] and l[1] <= phi)
    total = pn - inside + n * reps
    return total, "%.0f = %d + %d x %.2f" % (total, pn - inside, n, reps)


def check_kernel(arch, name, spec, res, code):
    """One table row: (arch, kernel, regs, budget, local, hmma, loop, ok, why)."""
    why = []
    budget = min(255, REGS_PER_SM // (spec["threads"] * spec["blocks"]))
    if res["REG"] > budget:
        why.append("%d registers > %d (%d blocks of %d threads per SM)" %
                   (res["REG"], budget, spec["blocks"], spec["threads"]))
    spill = sum(opcode(t).startswith(("LDL", "STL")) for _, t in code)
    if res.get("LOCAL", 0) or res.get("STACK", 0) or spill:
        why.append("local memory: %d B, stack %d B, %d LDL/STL" %
                   (res.get("LOCAL", 0), res.get("STACK", 0), spill))
    hmma = sum(opcode(t).startswith("HMMA") for _, t in code)
    if spec.get("hmma") and not hmma:
        why.append("no HMMA")
    loop = "-"
    if spec.get("loop"):
        kind, limit = spec["loop"]
        loops = hot_loops(code)
        if not loops:
            why.append("no loop with HMMA found")
        for lo, hi, n, h in loops:
            if kind == "bytes":
                v = n / (h * WEIGHT_BYTES_PER_HMMA)
                desc = "%.3f insn/B (%d/%dB)" % (v, n, h * WEIGHT_BYTES_PER_HMMA)
            else:
                v = n
                desc = "%d insn/chunk (%d HMMA)" % (n, h)
            loop = desc if loop == "-" else loop + "; " + desc
            if v > limit:
                why.append("loop at %#x: %s over %s" % (lo, desc, limit))
        if spec.get("item") and loops:
            limit, item_bytes = spec["item"]
            insn, how = item_cost(code, loops, item_bytes)
            desc = "item %.3f insn/B (%s per %d B)" % (insn / item_bytes, how, item_bytes)
            loop += "; " + desc
            if insn / item_bytes > limit:
                why.append("%s over %s" % (desc, limit))
    return (arch, name, res["REG"], budget, res.get("LOCAL", 0), hmma, loop, not why,
            "; ".join(why))


def main(argv):
    if len(argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    cuobjdump, rows, seen = argv[1], [], set()
    for cubin in argv[2:]:
        m = re.search(r"\.sm_(\d+)\.cubin$", cubin)
        arch = "sm_" + m.group(1) if m else "?"
        res, code = res_usage(cuobjdump, cubin), sass(cuobjdump, cubin)
        for mangled in sorted(res):
            name = short_name(mangled)
            base = name.split("<")[0]
            if base not in KERNELS:
                continue
            seen.add((arch, base))
            rows.append(check_kernel(arch, name, KERNELS[base], res[mangled],
                                     code.get(mangled, [])))
    archs = sorted({r[0] for r in rows})
    for arch in archs:
        for base in KERNELS:
            if (arch, base) not in seen:
                rows.append((arch, base, 0, 0, 0, 0, "-", False, "kernel not found"))
    hdr = "%-6s %-16s %5s %6s %5s %5s  %-34s %s" % (
        "arch", "kernel", "regs", "budget", "local", "HMMA", "hot loop", "check")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print("%-6s %-16s %5d %6d %5d %5d  %-34s %s" % (
            r[0], r[1], r[2], r[3], r[4], r[5], r[6], "ok" if r[7] else "FAILED: " + r[8]))
    bad = sum(not r[7] for r in rows)
    print("sass-check: %d kernels on %s, %d failed" % (len(rows), ", ".join(archs), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
