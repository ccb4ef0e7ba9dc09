#!/usr/bin/env python3
"""gpu_check.py - tools/gpu-check's plans and its closing table.

usage: gpu_check.py plan TEMPLATE OUTDIR [--quick]
                                           writes OUTDIR/plan_{validate,small,san1,time,ncu}.tsv
       gpu_check.py table OUTDIR           prints the table from OUTDIR's rows and
                                           steps; exit 0 when everything passes, 4 not
       gpu_check.py ncu NCU.csv            prints the kernels' lines of an ncu CSV
                                           (exit 3 when ncu could read no counters)

The plans are what tools/gpu_check_main.c reads (its header gives the format).
  validate  every CUDA edge case (engine/cuda_cases.c) and the first size of
            each of the template's kernel entries (Kimi sizes), each run twice
  small     the edge cases small enough for the CPU simulator (for
            compute-sanitizer's memcheck, which slows kernels down a
            hundredfold)
  san1      the first of those per kernel (racecheck, synccheck: slower still)
  time      the tensor ceiling (cuBLAS), then the template's bench section
            with a 1 s limit per row; every row is validated before timing
            and re-checked after it; --quick: one size per kernel (QUICK_PICK)
            and no all-reduce or launch rows
Each plan sets its rows' watchdog (WATCHDOG_S): a row still running past it
is written "timeout" and the next runs in a fresh process.
  ncu       one run of each custom kernel's op at a Kimi size

The table puts each row's time beside its floor: the larger of its bytes over
the copy bandwidth and its flops over the tensor rate, both measured in the
same run; "% of floor" is the floor over the measured time.
"""
import itertools
import math
import os
import sys

ROW_LIMIT_S = 1  # the time step's limit per row (the 1 s)
CEILING_N = 8192  # the cuBLAS product that measures the tensor rate
# The ops timed by templates but validated only at their first size here.
NOT_VALIDATED = ("memcpy", "allreduce", "launch")
# Each row's watchdog, in seconds, per plan: a validation at a Kimi size
# (setup and the C reference on the CPU included), a timed row (the same plus
# at most 1 s of timing), a row under a sanitizer (10-100x slower) or ncu
# (one replay per section).
WATCHDOG_S = {"validate": 30, "time": 30, "small": 60, "san1": 60, "ncu": 40}
# --quick's timed sizes: the middle of each kernel's target range (MoE at
# M = 9 and 33, tree_attn at 16k context) and the template's other ops at
# their first size.
QUICK_PICK = [
    ("memcpy", {}),
    ("moe_w4a16", {"M": 9}),
    ("moe_w4a16", {"M": 33}),
    ("dense_gemv", {}),
    ("tree_build", {"B": 32}),
    ("tree_attn", {"B": 8, "ctx": 16384}),
    ("accept", {"B": 32}),
]
# Which template point of each custom kernel's op ncu profiles: the middle of
# its target range (moe M = 9..33, tree_attn ctx >= 16k, the block 16 tree).
NCU_PICK = [
    ("moe_w4a16", {"M": 9}),
    ("tree_attn", {"B": 8, "ctx": 16384}),
    ("tree_build", {"B": 32}),
    ("accept", {"B": 32}),
]


def bench_of(path):
    """The template's bench section (its base's when it has none)."""
    import yaml  # PyYAML

    doc = yaml.safe_load(open(path))
    bench = doc.get("bench")
    if bench is None and doc.get("extends"):
        base = yaml.safe_load(open(os.path.join(os.path.dirname(path), doc["extends"])))
        bench = base.get("bench")
    if not bench or not bench.get("ops"):
        raise SystemExit("gpu_check.py: %s has no bench.ops" % path)
    return bench


def kv(d):
    return ",".join("%s=%s" % (k, v) for k, v in d.items())


def points(entry):
    """Every size of one bench entry: the product of its list-valued params."""
    params = entry.get("params") or {}
    vals = [v if isinstance(v, list) else [v] for v in params.values()]
    return [dict(zip(params, c)) for c in itertools.product(*vals)] if params else [{}]


def watchdog(name):
    return "watchdog\t%d" % WATCHDOG_S[name]


def pick(bench, op, want):
    """The first template point of op matching want, or exit."""
    hit = [p for e in bench["ops"] if e["op"] == op for p in points(e)
           if all(p.get(k) == v for k, v in want.items())]
    if not hit:
        raise SystemExit("gpu_check.py: the template has no %s point with %s" % (op, kv(want)))
    return hit[0]


def time_plan(bench, quick):
    t = {k: v for k, v in (bench.get("timing") or {}).items() if k != "source"}
    t["timeout_s"] = ROW_LIMIT_S
    lines = ["seed\t%d" % bench.get("seed", 1), watchdog("time"), "ceiling\t%d" % CEILING_N,
             "timing\t" + " ".join("%s=%s" % p for p in t.items())]
    variants = bench.get("variants", ["cold"])
    if quick:
        return lines + ["op\t%s\t%s\t%s" % (op, variants[0], kv(pick(bench, op, want)))
                        for op, want in QUICK_PICK]
    for e in bench["ops"]:
        pts = points(e)
        if e["op"] == "allreduce":
            ms = ",".join(str(p.get("M", 9)) for p in pts)
            lines.append("allreduce\t%d\t%s" % (pts[0].get("hidden", 7168), ms))
        elif e["op"] == "launch":
            lines += ["launch\t" + kv(p) for p in pts]
        else:
            lines += ["op\t%s\t%s\t%s" % (e["op"], v, kv(p))
                      for v in e.get("variants", variants) for p in pts]
    return lines


def ncu_plan(bench, seed):
    return [seed, watchdog("ncu")] + ["once\t%s\t%s" % (op, kv(pick(bench, op, want)))
                                      for op, want in NCU_PICK]


def san1_plan(seed):
    """The first simulator-sized edge case of each kernel (engine/cuda_cases.c,
    read by the check program: `cases sim` rows, one per op)."""
    return [seed, watchdog("san1"), "cases\tsim1"]


def plan(template, out, quick=False):
    bench = bench_of(template)
    seed = "seed\t%d" % bench.get("seed", 1)
    kimi = ["validate\t%s\t%s" % (e["op"], kv(points(e)[0])) for e in bench["ops"]
            if e["op"] not in NOT_VALIDATED]
    plans = {
        "validate": [seed, watchdog("validate"), "cases\tall"] + kimi,
        "small": [seed, watchdog("small"), "cases\tsim"],
        "san1": san1_plan(seed),
        "time": time_plan(bench, quick),
        "ncu": ncu_plan(bench, seed),
    }
    for name, lines in plans.items():
        with open(os.path.join(out, "plan_%s.tsv" % name), "w") as f:
            f.write("\n".join(lines) + "\n")


def read_rows(path):
    """(rows, #device fields, tensor TFLOP/s, whether the plan ran to its end)
    of one rows_*.tsv."""
    rows, dev, tflops, end = [], None, float("nan"), False
    if not os.path.exists(path):
        return rows, dev, tflops, end
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if f[0] == "#end":
            end = True
        elif f[0] == "#device":
            dev = f
        elif f[0] == "#ceiling" and len(f) == 3:
            tflops = float(f[2])
        elif len(f) >= 15:
            rows.append(dict(op=f[0], variant=f[1], status=f[3], us=float(f[5]),
                             bytes=float(f[8]), flops=float(f[9]), gbps=float(f[10]),
                             err=float(f[12]), reason=f[15] if len(f) > 15 else "",
                             params=dict(p.split("=", 1) for p in f[14].split(",") if p)))
    return rows, dev, tflops, end


def passes(r):
    """ok passes; a skip passes only for want of a second GPU (all-reduce);
    unsupported and failed never do."""
    return r["status"] == "ok" or (r["status"] == "skipped" and "2 or more GPUs" in r["reason"])


def floor_us(r, copy_gbps, tflops):
    """(floor in us, "bytes" or "flops") of a row: the larger of the two times."""
    tb = r["bytes"] / (copy_gbps * 1e3) if r["bytes"] > 0 and copy_gbps > 0 else float("nan")
    tf = r["flops"] / (tflops * 1e6) if r["flops"] > 0 and tflops > 0 else float("nan")
    if math.isnan(tb) and math.isnan(tf):
        return float("nan"), ""
    if math.isnan(tf) or tb >= tf:
        return tb, "bytes"
    return tf, "flops"


SHOW = {"memcpy": ["mib"], "moe_w4a16": ["M", "hidden", "experts", "group"],
        "dense_gemv": ["M", "K", "N"], "tree_build": ["L", "V", "B"],
        "tree_attn": ["B", "ctx", "kv_lora"], "accept": ["B", "L", "row"],
        "allreduce": ["M", "busbw_gbps"], "launch": ["B", "pct_of_kernels"]}


def num(x, fmt):
    return "-" if x != x else fmt % x


def steps_of(out):
    path = os.path.join(out, "steps.tsv")
    if not os.path.exists(path):
        return []
    return [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]


def print_head(steps, dev, tflops):
    print("steps:")
    for s in steps:
        print("  %-9s %-11s %4s s of %4s s  %s" % (s[0], s[1], s[2], s[3], s[4] if len(s) > 4 else ""))
    if dev:
        print("device: %s (%s, %s SMs, %s GB); CUDA %s, driver %s, NCCL %s" %
              (dev[1], dev[2], dev[3], dev[4], dev[7], dev[8], dev[9] or "none"))
        print("ceilings (this run): copy %s GB/s (read + write); tensor %s TFLOP/s (cuBLAS bf16 "
              "%d^3)" % (dev[6], num(tflops, "%.0f"), CEILING_N))


def table(out):
    steps = steps_of(out)
    rows, dev, tflops, cut = [], None, float("nan"), []
    for name in ("validate", "time"):
        if name not in (st[0] for st in steps):
            continue  # not a step of this run (--quick --sim: no time step)
        r, d, t, end = read_rows(os.path.join(out, "rows_%s.tsv" % name))
        rows += r
        dev = dev or d
        tflops = t if t == t else tflops
        if not end:
            cut.append("note: the %s plan stopped after %d rows: the rest never ran" % (name, len(r)))
    copy = float(dev[6]) if dev else float("nan")
    print_head(steps, dev, tflops)
    for r in rows:
        if not passes(r):
            print("note: %s %s %s: %s: %s" % (r["op"], r["variant"], kv(r["params"]),
                                             r["status"], r["reason"]))
    for c in cut:
        print(c)
    hdr = "%-10s %-9s %-28s %10s %10s %-5s %7s %8s %9s %-11s" % (
        "op", "variant", "params", "us", "floor us", "bound", "%floor", "GB/s", "max err", "status")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        size = " ".join("%s=%s" % (k, r["params"][k]) for k in SHOW.get(r["op"], [])
                        if k in r["params"])
        fl, bound = floor_us(r, copy, tflops)
        pct = 100 * fl / r["us"] if r["us"] > 0 and fl == fl else float("nan")
        print("%-10s %-9s %-28s %10s %10s %-5s %7s %8s %9s %-11s" % (
            r["op"], r["variant"][:9], size[:28], num(r["us"], "%.2f"), num(fl, "%.2f"), bound,
            num(pct, "%.1f"), num(r["gbps"], "%.1f"), num(r["err"], "%.2g"), r["status"]))
    bad_steps = [s for s in steps if s[1] not in ("ok", "unavailable")]
    bad = [r for r in rows if not passes(r)]
    print("%d rows: %d pass, %d do not; %d of %d steps ok%s; %% of floor = floor / measured time" %
          (len(rows), len(rows) - len(bad), len(bad), sum(s[1] == "ok" for s in steps), len(steps),
           "".join(", %s %s" % (s[0], s[1]) for s in steps if s[1] != "ok")))
    return 0 if rows and not bad and not bad_steps and not cut else 4


NCU_KEEP = ("Duration", "DRAM Throughput", "Memory Throughput", "Compute (SM) Throughput",
            "Registers Per Thread", "Achieved Occupancy", "Grid Size", "Block Size")


def ncu(path):
    """Per kernel launch of ncu's --csv --page details output, the metrics
    that say whether it is bandwidth or issue bound and how full the SMs are."""
    import csv

    text = open(path).read()
    lines = [l for l in text.splitlines() if l.startswith('"')]
    n = 0
    for r in csv.DictReader(lines):
        if r.get("Metric Name") in NCU_KEEP:
            print("%-12s %-26s %s %s" % (r["Kernel Name"][:12], r["Metric Name"],
                                         r["Metric Value"], r["Metric Unit"]))
            n += 1
    if not n:
        print("ncu: no counters read (profiling refused on this machine?)")
        return 3
    return 0


def main(argv):
    if len(argv) in (4, 5) and argv[1] == "plan" and argv[4:] in ([], ["--quick"]):
        plan(argv[2], argv[3], quick=len(argv) == 5)
        return 0
    if len(argv) == 3 and argv[1] == "table":
        return table(argv[2])
    if len(argv) == 3 and argv[1] == "ncu":
        return ncu(argv[2])
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
