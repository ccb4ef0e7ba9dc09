"""peer_report.py - `ddt report RUN`'s work written with numpy, matplotlib and openpyxl: bench_report's peer.

usage: peer_report.py [--phases] RUNS REPORTS RUN_ID

Reads what ddt report reads from RUNS/RUN_ID (run.yaml, projection.yaml,
verdicts.yaml, the stored calibration, template and SOURCES.md) and every
night's run.yaml up to RUN_ID (the history), and writes REPORTS/RUN_ID/
{report.pdf, report.xlsx, summary.txt, charts/*.png} as ddt does: the same
inputs, the same statistics (per kernel series and night the baseline:
the median of the nights before, MAD noise, change and z, a flag with
confirmation, and the E-divisive best split of the change window with its
t-test), the same charts at the same size and scale, the PDF's pages and
the workbook's sheets with their formulas, names and native charts. It is
written as a competent numpy programmer would: YAML through libyaml's
CSafeLoader, the series as one nights x series matrix, every statistic
vectorised over nights. Not byte-identical to ddt's documents (other
renderers); the same work.
"""
import math
import os
import shutil
import sys
import tempfile
import textwrap
import time
import warnings

import numpy as np
import yaml
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402
from openpyxl import Workbook  # noqa: E402
from openpyxl.chart import BarChart, LineChart, Reference, ScatterChart, Series  # noqa: E402
from openpyxl.styles import Alignment, Font, PatternFill  # noqa: E402
from openpyxl.workbook.defined_name import DefinedName  # noqa: E402

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
COMPS = ["moe", "attn_lmhead", "draft", "tree", "overhead", "allreduce"]
A4 = (595.276 / 72, 841.89 / 72)


def load_yaml(path):
    with open(path, "rb") as f:
        return yaml.load(f, Loader=LOADER)


# ---------------------------------------------------------------- inputs

def load_run(run_dir):
    """The stored run: record, projection, verdicts, calibration, template, sources."""
    d = {"rec": load_yaml(os.path.join(run_dir, "run.yaml"))}
    for name in ("projection", "verdicts"):
        p = os.path.join(run_dir, name + ".yaml")
        d[name] = load_yaml(p) if os.path.exists(p) else None
    cdir = os.path.join(run_dir, "calibration")
    d["cal"] = {f[:-5]: load_yaml(os.path.join(cdir, f))
                for f in sorted(os.listdir(cdir)) if f.endswith(".yaml")}
    d["tmpl"] = load_yaml(os.path.join(run_dir, "template", "template.yaml"))
    src = os.path.join(cdir, "SOURCES.md")
    d["sources"] = parse_sources(open(src, encoding="utf-8").read()) if os.path.exists(src) else {}
    return d


def parse_sources(text):
    """{id: (text, first https address)} of SOURCES.md's '- **[id]**' entries."""
    out, cur, buf = {}, None, []
    for line in text.splitlines():
        if line.startswith("- **["):
            if cur:
                out[cur] = " ".join(buf)
            cur, buf = line[5:line.index("]")], [line[line.index("**", 4) + 2:].strip()]
        elif cur and line.startswith("  "):
            buf.append(line.strip())
        elif cur:
            out[cur], cur = " ".join(buf), None
    if cur:
        out[cur] = " ".join(buf)
    res = {}
    for k, v in out.items():
        i = v.find("https://")
        res[k] = (v, v[i:].split()[0].rstrip(").,") if i >= 0 else "")
    return res


def series_key(row, devices):
    dev = devices[row.get("device", 0)]["name"] if devices else ""
    params = ",".join(f"{k}={v:g}" for k, v in (row.get("params") or {}).items())
    return (row["op"], row["variant"], row["backend"], dev, params)


def load_history(runs_dir, run_id):
    """Every night up to run_id: ids, revisions and the nights x series matrix of medians (NaN: not ok)."""
    ids = sorted(n for n in os.listdir(runs_dir)
                 if n <= run_id and not n.startswith(".")
                 and os.path.isfile(os.path.join(runs_dir, n, "run.yaml")))
    keys, cols, revs = {}, [], []
    for night, rid in enumerate(ids):
        rec = load_yaml(os.path.join(runs_dir, rid, "run.yaml"))
        revs.append(rec["provenance"]["git_rev"])
        devs = rec.get("devices") or []
        for row in rec.get("rows") or []:
            k = series_key(row, devs)
            j = keys.setdefault(k, len(keys))
            if row["status"] == "ok":
                cols.append((night, j, row["median_us"]))
    med = np.full((len(ids), len(keys)), np.nan)
    if cols:
        a = np.array(cols)
        med[a[:, 0].astype(int), a[:, 1].astype(int)] = a[:, 2]
    return {"ids": ids, "revs": revs, "keys": list(keys), "med": med}


# ---------------------------------------------------------------- statistics

def t_sf2(t, df):
    """Two-sided p of Student's t: I_{df/(df+t^2)}(df/2, 1/2), by Lentz's continued fraction."""
    x = df / (df + t * t)
    a, b = df / 2, 0.5
    lbeta = np.vectorize(math.lgamma)(a + b) - np.vectorize(math.lgamma)(a) - math.lgamma(b)
    front = np.exp(np.log(x) * a + np.log1p(-x) * b + lbeta) / a
    tiny = 1e-300
    c, d = np.ones_like(x), 1 - (a + b) * x / (a + 1)
    d = 1 / np.where(np.abs(d) < tiny, tiny, d)
    f = d.copy()
    for m in range(1, 200):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / np.where(np.abs(d) < tiny, tiny, d)
            c = 1 + num / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            f *= c * d
    return np.clip(front * f, 0, 1)


def best_split(win, min_seg):
    """E-divisive Q-hat of every split of every window (rows of win); the best one's place and Q."""
    n, w = win.shape
    dist = np.abs(win[:, :, None] - win[:, None, :])
    P = np.zeros((n, w + 1, w + 1))
    P[:, 1:, 1:] = dist.cumsum(1).cumsum(2)
    t = np.arange(w + 1)[:, None]
    k = np.arange(w + 1)[None, :]
    diag = P[:, np.arange(w + 1), np.arange(w + 1)]
    sxy = P[:, t, k] - diag[:, :, None]
    sxx = diag[:, :, None] / 2
    syy = (diag[:, None, :] - 2 * P[:, t, k] + diag[:, :, None]) / 2
    nx, ny = t.astype(float), (k - t).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (2 * sxy / (nx * ny) - np.where(nx > 1, sxx / (nx * (nx - 1) / 2), 0)
             - np.where(ny > 1, syy / (ny * (ny - 1) / 2), 0))
        q = nx * ny / (nx + ny) * e
    ok = (t >= min_seg) & (k - t >= min_seg)
    q = np.where(ok[None], q, -np.inf).reshape(n, -1)
    at = q.argmax(1)
    return at // (w + 1), at % (w + 1), q[np.arange(n), at]


def analyse(hist, rc):
    """Per night and series: baseline, noise, change, z, band, verdict and change-point p."""
    med = hist["med"]
    nights, ns = med.shape
    bn, win_n = int(rc["baseline_nights"]), int(rc["change_window_nights"])
    pad = np.vstack([np.full((bn, ns), np.nan), med])
    prev = sliding_window_view(pad, bn, axis=0)[:nights]          # the bn nights before each
    good = np.sum(~np.isnan(prev), axis=2)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nights with no good night before
        base = np.nanmedian(prev, axis=2)
        mad = np.nanmedian(np.abs(prev - base[..., None]), axis=2)
        noise = np.maximum(rc["mad_to_sigma"] * mad / base, rc["noise_floor_pct"] / 100)
        delta = med / base - 1
        z = delta / noise
    limit = np.maximum(rc["min_delta_pct"] / 100, rc["noise_multiple"] * noise)
    flag = (good >= rc["min_good_nights"]) & (np.abs(delta) >= limit) & (np.abs(z) > rc["z_threshold"])
    conf = int(rc["confirm_nights"])
    run = np.zeros_like(flag, dtype=int)
    for i in range(nights):                                        # consecutive flagged nights
        run[i] = np.where(flag[i], (run[i - 1] if i else 0) + 1, 0)
    verdict = np.full(med.shape, "ok", dtype=object)
    verdict[good < rc["min_good_nights"]] = "not enough history"
    verdict[np.isnan(med)] = "skipped"
    verdict[flag & (run < conf)] = "suspect"
    verdict[flag & (run >= conf) & (delta > 0)] = "regression"
    verdict[flag & (run >= conf) & (delta < 0)] = "improvement"
    cp_p = np.full(med.shape, np.nan)
    cp_at = np.full(med.shape, -1)
    for j in range(ns):
        x = med[:, j]
        okx = np.flatnonzero(~np.isnan(x))
        if len(okx) < win_n:
            continue
        wins = sliding_window_view(x[okx], win_n)
        at, kap, _ = best_split(wins, 2)
        r = np.arange(len(wins))
        idx = np.arange(win_n)[None, :]
        left = np.where(idx < at[:, None], wins, np.nan)
        right = np.where((idx >= at[:, None]) & (idx < kap[:, None]), wins, np.nan)
        n1, n2 = at.astype(float), (kap - at).astype(float)
        m1, m2 = np.nanmean(left, 1), np.nanmean(right, 1)
        v1, v2 = np.nanvar(left, 1, ddof=1), np.nanvar(right, 1, ddof=1)
        sp = ((n1 - 1) * v1 + (n2 - 1) * v2) / (n1 + n2 - 2)
        with np.errstate(all="ignore"):
            t = (m2 - m1) / np.sqrt(sp * (1 / n1 + 1 / n2))
        p = t_sf2(np.nan_to_num(t, nan=0.0, posinf=1e12, neginf=-1e12), n1 + n2 - 2)
        cp_p[okx[win_n - 1:], j] = p
        cp_at[okx[win_n - 1:], j] = okx[r + at]
    lo, hi = base * (1 - rc["noise_multiple"] * noise), base * (1 + rc["noise_multiple"] * noise)
    return {"base": base, "noise": noise, "delta": delta, "z": z, "lo": lo, "hi": hi,
            "verdict": verdict, "cp_p": cp_p, "cp_at": cp_at, "good": good,
            "change": cp_p <= rc["change_max_p"]}


# ---------------------------------------------------------------- charts

class Charts:
    def __init__(self, d, st, hist):
        spec = d["tmpl"]["report"]
        ch = spec.get("chart", {})
        self.size = (ch.get("width_pt", 480) / 72, ch.get("height_pt", 288) / 72)
        self.dpi = 72 * ch.get("png_scale", 2.5)
        self.d, self.st, self.hist = d, st, hist
        self.proj = d["projection"] or {}


    def breakdown(self, ax):
        rows, seen = [], set()
        for r in self.proj["rows"]:
            if r["scenario"] not in seen:
                seen.add(r["scenario"])
                rows.append(r)
        ms = np.array([[r["ms"][c] for c in COMPS] for r in rows])
        left = np.hstack([np.zeros((len(rows), 1)), ms.cumsum(1)[:, :-1]])
        y = np.arange(len(rows))[::-1]
        for i, c in enumerate(COMPS):
            bars = ax.barh(y, ms[:, i], left=left[:, i], label=c, height=0.6)
            ax.bar_label(bars, labels=[f"{v:.2f}" if v > 1 else "" for v in ms[:, i]],
                         label_type="center", fontsize=6)
        tot = ms.sum(1)
        for yi, t, r in zip(y, tot, rows):
            ax.text(t + 0.2, yi, f"{t:.2f} ms, non-MoE {100 * (1 - r['ms']['moe'] / t):.0f}%",
                    va="center", fontsize=6)
        ax.set_yticks(y, [r["scenario"] + ("" if r["runnable"] else " (not runnable)") for r in rows],
                      fontsize=6)
        ax.set_xlabel("step time (ms)")
        ax.legend(fontsize=6, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.15))


    def acceptance(self, ax):
        a = np.linspace(0, 16, 161)
        for r in self.proj["rows"]:
            s = r["step_ms"]
            c = r["concurrency"]
            ls = "-" if r["pipeline"] == "native" else "--"
            ax.plot(a, c * a / s["point"] * 1e3, ls, lw=0.8)
            ax.fill_between(a, c * a / s["p95"] * 1e3, c * a / s["p5"] * 1e3, alpha=0.12)
            ax.plot([r["accept"]], [r["tok_s"]["point"]], "o", ms=3)
            ax.annotate(r["scenario"], (16, c * 16 / s["point"] * 1e3), fontsize=6)
        ax.set_xlabel("mean acceptance length (tokens per step)")
        ax.set_ylabel("decode throughput (tok/s)")


    def moe_curve(self, ax):
        fit = self.proj["fit"]
        model = self.d["cal"]["kimi_k2"]["model"]
        fixed = next(p["value"] for p in fit["params"] if p["name"] == "fixed_us")
        overlap = next(p["value"] for p in fit["params"] if p["name"] == "overlap")
        b = (model["layers"] - model["dense_layers"]) * fixed / 1e3
        a = fit["plateau_ms"] - b
        lnq = math.log1p(-model["experts_per_token"] / model["experts"])
        M = np.geomspace(1, 1024, 400)
        y = -a * np.expm1(lnq * (1 + (M - 1) * (1 - overlap))) + b
        pts = np.array([[p["m"], p["step_ms"]] for p in fit["points"]])
        ax.plot(M, y, label=f"fitted physical curve ({fit['gpu']})")
        ax.plot(pts[:, 0], pts[:, 1], "o", label="calibration points")
        ax.plot(M, np.interp(M, pts[:, 0], pts[:, 1]), ":", label="reference curve")
        rows = self.proj["rows"]
        scale = np.median([r["moe_ms"] / max(1e-9, float(np.interp(r["M"], M, y))) for r in rows])
        ax.plot(M, y * scale, "--", label="projected on B300")
        ax.axvline(fit["m_plateau"], color="0.6", lw=0.5)
        ax.set_xscale("log")
        ax.set_xlabel("verify width M = C (B + 1) (tokens)")
        ax.set_ylabel("MoE time per step (ms)")
        ax.legend(fontsize=6)


    def tornado(self, ax):
        names = self.d["tmpl"]["report"]["sections"][5].get("scenarios") or []
        t = next(t for t in self.proj["tornado"] if not names or t["scenario"] in names)
        bars = sorted(t["bars"], key=lambda b: b["swing"])
        lo = np.array([min(b["tok_s_p5"], b["tok_s_p95"]) for b in bars])
        hi = np.array([max(b["tok_s_p5"], b["tok_s_p95"]) for b in bars])
        y = np.arange(len(bars))
        ax.barh(y, hi - lo, left=lo, height=0.5)
        for yi, b in zip(y, bars):
            ax.text(b["tok_s_p5"], yi, f"{b['value_p5']:.4g}", fontsize=6, va="center")
            ax.text(b["tok_s_p95"], yi, f"{b['value_p95']:.4g}", fontsize=6, va="center")
        ax.axvline(t["tok_s_point"], color="k", lw=0.8)
        ax.set_yticks(y, [b["name"] for b in bars], fontsize=6)
        ax.set_xlabel("decode throughput (tok/s)")


    def grid_arrays(self):
        g = self.proj["grid"]
        cells = g["cells"]
        keys = ("C", "B", "tok_p5", "tok_p50", "tok_p95", "tok_point")
        arr = np.array([[c[k] for k in keys] for c in cells], dtype=float)
        tg = np.array([c["target"] for c in cells])
        best = np.array([c["best"] for c in cells])
        return g, arr, tg, best

    def budget(self, ax):
        g, arr, tg, best = self.grid_arrays()
        for t in g["targets"]:
            m = (tg == t) & (arr[:, 0] == 1)
            ax.plot(arr[m, 1], arr[m, 5], label=t)
            ax.fill_between(arr[m, 1], arr[m, 2], arr[m, 4], alpha=0.15)
            b = m & best
            ax.plot(arr[b, 1], arr[b, 5], "*", ms=8)
            for x, yv in arr[b][:, [1, 5]]:
                ax.annotate(f"B={x:g}", (x, yv), fontsize=6)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("node budget B (tree nodes, root excluded)")
        ax.set_ylabel("decode throughput (tok/s)")
        ax.legend(fontsize=6)


    def pareto(self, ax):
        g, arr, tg, best = self.grid_arrays()
        gpus = float(self.d["cal"]["kimi_k2"]["model"]["tp"])
        for t in g["targets"]:
            m = (tg == t) & best
            user = arr[m, 3] / arr[m, 0]
            per_gpu = arr[m, 3] / gpus
            ax.plot(user, per_gpu, "o-", ms=3, label=t)
            ax.fill_between(user, arr[m, 2] / gpus, arr[m, 4] / gpus, alpha=0.15)
            for c, x, yv in zip(arr[m, 0], user, per_gpu):
                ax.annotate(f"C={c:g}", (x, yv), fontsize=6)
        ax.set_xlabel("speed per user (tok/s per user)")
        ax.set_ylabel("throughput per GPU (tok/s per GPU)")
        ax.legend(fontsize=6)


    def history(self, ax, op):
        h, st = self.hist, self.st
        x = np.arange(len(h["ids"]))
        for j, k in enumerate(h["keys"]):
            if k[0] != op:
                continue
            y = h["med"][:, j]
            ax.plot(x, y, lw=0.8)
            ax.fill_between(x, st["lo"][:, j], st["hi"][:, j], alpha=0.2)
            for v, mk in (("regression", "v"), ("suspect", "s"), ("improvement", "^")):
                m = st["verdict"][:, j] == v
                ax.plot(x[m], y[m], mk, ms=4)
            ax.annotate(k[4].split(",")[0], (x[-1], y[-1]), fontsize=6)
        ax.set_yscale("log")
        ticks = x[::60]
        ax.set_xticks(ticks, [h["ids"][i][:4] + "-" + h["ids"][i][4:6] for i in ticks], fontsize=6)
        ax.set_xlabel("night (UTC)")
        ax.set_ylabel("median time per call (µs)")


    def draw(self, ax, section):
        """Draws section's chart into ax (the PNG's figure or a PDF page's axes)."""
        ax.grid(True, color="0.9", lw=0.5)
        k = section["section"]
        if k == "history":
            self.history(ax, section["op"])
        else:
            getattr(self, k)(ax)


# ---------------------------------------------------------------- the PDF

def page_frame(title, run_id, page):
    f = plt.figure(figsize=A4)
    f.text(0.08, 0.95, title, fontsize=13, weight="bold")
    f.text(0.5, 0.03, f"ddt report {run_id}   page {page}", ha="center", fontsize=7)
    return f


def text_page(pdf, title, lines, run_id, page):
    """A page of paragraphs, wrapped to the text width, as one text block."""
    f = page_frame(title, run_id, page)
    body = "\n".join(textwrap.fill(ln, 130) for ln in lines)
    f.text(0.08, 0.92, body, fontsize=7, va="top", linespacing=1.4)
    pdf.savefig(f)
    plt.close(f)


def table_page(pdf, title, header, rows, run_id, page):
    """A table: one text block per column (cells wrapped to its width), a rule under the header."""
    f = page_frame(title, run_id, page)
    width = [max(len(str(c)) for c in col) for col in zip(header, *rows)] if rows else [1] * len(header)
    width = np.minimum(np.array(width), 40)
    x = 0.05 + 0.9 * np.concatenate([[0], np.cumsum(width)[:-1]]) / width.sum()
    cols = [[textwrap.fill(str(c), int(w)) for c in col] for col, w in zip(zip(header, *rows), width)]
    lines = np.array([[c.count("\n") + 1 for c in col] for col in cols]).max(0)
    for xi, col in zip(x, cols):
        cells = ["\n".join([c] + [""] * (n - c.count("\n") - 1)) for c, n in zip(col, lines)]
        f.text(xi, 0.92, "\n".join(cells), fontsize=6, va="top", family="DejaVu Sans",
               linespacing=1.3)
    f.add_artist(plt.Line2D([0.05, 0.95], [0.92 - 0.0115 * lines[0]] * 2, lw=0.5, color="k"))
    pdf.savefig(f)
    plt.close(f)


def chart_page(pdf, charts, sections, run_id, page):
    """One page of up to two charts, drawn again as vectors on the page."""
    f = plt.figure(figsize=A4)
    w, h = charts.size
    for i, s in enumerate(sections):
        top = 0.93 - 0.46 * i
        f.text(0.08, top, s.get("title") or s["section"].replace("_", " "), fontsize=9, weight="bold")
        ax = f.add_axes([0.16, top - 0.04 - h / A4[1] * 0.95, w / A4[0] * 0.8, h / A4[1] * 0.9])
        charts.draw(ax, s)
    f.text(0.5, 0.03, f"ddt report {run_id}   page {page}", ha="center", fontsize=7)
    pdf.savefig(f)
    plt.close(f)


def fmt_row(r):
    t = r["tok_s"]
    return [r["scenario"], r["target"], r["pipeline"],
            f"{r['block']}/{r['budget']}/{r['concurrency']}", f"{r['M']:g}", f"{r['accept']:g}",
            f"{r['moe_ms']:.3f}", f"{r['nonmoe_ms']:.3f}", f"{r['step_ms']['point']:.3f}",
            f"{t['point']:.1f}", f"{t['p5']:.1f} - {t['p95']:.1f}", f"{r['lean_pct']:+.1f}%"]


def caveats(d, hist, st):
    out = []
    for s in (d["verdicts"] or {}).get("series", []):
        if s["verdict"] in ("regression", "improvement", "suspect"):
            out.append(f"{s['verdict']} {s['op']}/{s['variant']} {s['params']}: "
                       f"{s['delta_pct']:+.1f}% ({s['median_us']:.4g} us, baseline "
                       f"{s['baseline_us']:.4g} us, noise {s['noise_pct']:.2f}%), commits {s['commits']}")
    out += (d["projection"] or {}).get("notes", [])
    if d["projection"] and d["projection"].get("weighting"):
        out.append(d["projection"]["weighting"])
    return out


def write_pdf(path, d, hist, st, charts, sections):
    rid = d["rec"]["run_id"]
    proj = d["projection"]
    spec = d["tmpl"]["report"]
    rows = proj["rows"]
    tonight = [f"{r['op']}/{r['variant']} {r.get('params')}: "
               + (f"{r['median_us']:.1f} us (p10-p90 {r['p10_us']:.1f}-{r['p90_us']:.1f})"
                  if r["status"] == "ok" else f"{r['status']}: {r['reason']}")
               for r in d["rec"]["rows"]]
    head = [r for r in rows if r["scenario"] in spec["headline"]]
    summary = ([f"Nightly report of run {rid}, {d['rec']['created']}. Template {d['rec']['template']}."]
               + tonight
               + [f"{r['tok_s']['p50']:.1f} tok/s {r['scenario']}: p5-p95 {r['tok_s']['p5']:.1f}-"
                  f"{r['tok_s']['p95']:.1f}; step {r['step_ms']['p50']:.3f} ms" for r in head]
               + [proj.get("lean", ""), "Caveats tonight"]
               + [f"{i + 1}. {c}" for i, c in enumerate(caveats(d, hist, st))])
    page = 1
    with PdfPages(path) as pdf:
        text_page(pdf, spec["title"], summary, rid, page)
        page += 1
        table_page(pdf, "Projections", ["scenario", "target", "pipeline", "b/B/C", "M", "accept",
                                        "MoE ms", "non-MoE ms", "step ms", "tok/s", "p5-p95", "lean"],
                   [fmt_row(r) for r in rows], rid, page)
        for i in range(0, len(sections), 2):
            page += 1
            chart_page(pdf, charts, sections[i:i + 2], rid, page)
        vs = (d["verdicts"] or {}).get("series", [])
        page += 1
        table_page(pdf, "Regressions", ["verdict", "op / variant", "params", "backend, device",
                                        "median µs", "baseline µs", "change", "z", "n"],
                   [[s["verdict"], f"{s['op']} / {s['variant']}", s["params"],
                     f"{s['backend']}, {s['device'][:20]}", f"{s['median_us'] or 0:.1f}",
                     f"{s['baseline_us'] or 0:.1f}", f"{s['delta_pct'] or 0:+.1f}%",
                     f"{s['z'] or 0:.1f}", str(s["nights"])] for s in vs], rid, page)
        page += 1
        table_page(pdf, "Tonight's kernels", ["op / variant", "params", "backend", "n", "median µs",
                                              "p10 - p90 µs", "GB/s", "% of BW", "max err", "status"],
                   [[f"{r['op']} / {r['variant']}", str(r.get("params") or ""), r["backend"],
                     str(r.get("samples", 0)), f"{r['median_us'] or 0:.1f}",
                     f"{r['p10_us'] or 0:.1f} - {r['p90_us'] or 0:.1f}", f"{r['gbps'] or 0:.1f}",
                     f"{r['pct_peak'] or 0:.0f}%", f"{float(r['max_err'] or 0):.1e}", r["status"]]
                    for r in d["rec"]["rows"]], rid, page)
        inputs = proj.get("inputs", [])
        for i in range(0, len(inputs), 30):
            page += 1
            table_page(pdf, "Assumptions", ["input", "value", "basis", "source"],
                       [[x["name"], f"{x['value']:.4g}", x["prov"], x["source"][:70]]
                        for x in inputs[i:i + 30]], rid, page)
        page += 1
        text_page(pdf, "Sources", [f"[{k}] {v[0][:300]}" for k, v in d["sources"].items()], rid, page)


# ---------------------------------------------------------------- the workbook

BOLD = Font(bold=True)
HEAD_FILL = PatternFill("solid", fgColor="DDE4EE")


def sheet(wb, title, header, rows):
    ws = wb.create_sheet(title)
    ws.append(header)
    for c in ws[1]:
        c.font, c.fill = BOLD, HEAD_FILL
    for r in rows:
        ws.append(r)
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.freeze_panes = "A2"
    return ws


def write_xlsx(path, d, hist, st):
    proj, rec = d["projection"], d["rec"]
    wb = Workbook()
    wb.remove(wb.active)
    ws = sheet(wb, "Summary", ["", ""], [])
    for r in [["run", rec["run_id"]], ["created", rec["created"]], ["template", rec["template"]]]:
        ws.append(r)
    for r in proj["rows"]:
        ws.append([r["scenario"], r["tok_s"]["p50"], r["tok_s"]["p5"], r["tok_s"]["p95"]])
    rows = proj["rows"]
    ws = sheet(wb, "Projections", ["scenario", "target", "pipeline", "block", "budget", "C", "M",
                                   "accept"] + [c + " ms" for c in COMPS]
               + ["step ms", "tok/s", "p5", "p50", "p95", "step p5", "step p50", "step p95",
                  "lean %", "xfer cover %"], [])
    for i, r in enumerate(rows, start=2):
        ws.append([r["scenario"], r["target"], r["pipeline"], r["block"], r["budget"],
                   r["concurrency"], r["M"], r["accept"]] + [r["ms"][c] for c in COMPS]
                  + [f"=SUM(I{i}:N{i})", f"=F{i}*H{i}/O{i}*1000", r["tok_s"]["p5"],
                     r["tok_s"]["p50"], r["tok_s"]["p95"], r["step_ms"]["p5"], r["step_ms"]["p50"],
                     r["step_ms"]["p95"], r["lean_pct"], r["xfer_cover_pct"]])
    ch = BarChart()
    ch.type, ch.grouping, ch.overlap = "bar", "stacked", 100
    ch.add_data(Reference(ws, min_col=17, max_col=19, min_row=1, max_row=len(rows) + 1),
                titles_from_data=True)
    ch.set_categories(Reference(ws, min_col=1, min_row=2, max_row=len(rows) + 1))
    ws.add_chart(ch, "A14")
    g = proj["grid"]
    cells = g["cells"]
    keys = ["target", "C", "B", "M", "accept", "step_point", "step_p5", "step_p50", "step_p95",
            "tok_point", "tok_p5", "tok_p50", "tok_p95"]
    ws = sheet(wb, "Throughput", keys, [[c[k] for k in keys] for c in cells if c["best"]])
    sc = ScatterChart()
    n = ws.max_row
    for t in g["targets"]:
        rr = [i for i in range(2, n + 1) if ws.cell(i, 1).value == t]
        if rr:
            s = Series(Reference(ws, min_col=12, min_row=rr[0], max_row=rr[-1]),
                       Reference(ws, min_col=2, min_row=rr[0], max_row=rr[-1]), title=t)
            sc.series.append(s)
    ws.add_chart(sc, "O2")
    seen, brk = set(), []
    for r in rows:
        if r["scenario"] not in seen:
            seen.add(r["scenario"])
            brk.append([r["scenario"]] + [r["ms"][c] for c in COMPS] + [r["step_ms"]["point"]])
    sheet(wb, "Breakdown", ["scenario"] + COMPS + ["step ms"], brk)
    kcols = ["op", "variant", "backend", "samples", "median_us", "p10_us", "p90_us", "min_us",
             "max_us", "stdev_us", "bytes", "flops", "gbps", "pct_peak", "max_err", "status", "reason"]
    sheet(wb, "Kernels", kcols + ["params"],
          [[r.get(k) for k in kcols] + [str(r.get("params"))] for r in rec["rows"]])
    med = hist["med"]
    ws = sheet(wb, "History", ["night"] + [f"{k[0]}/{k[1]} {k[4]}" for k in hist["keys"]],
               [[rid] + [None if np.isnan(v) else float(v) for v in med[i]]
                for i, rid in enumerate(hist["ids"])])
    lc = LineChart()
    lc.add_data(Reference(ws, min_col=2, max_col=1 + len(hist["keys"]), min_row=1,
                          max_row=len(hist["ids"]) + 1), titles_from_data=True)
    ws.add_chart(lc, "M2")
    vs = (d["verdicts"] or {}).get("series", [])
    vk = ["op", "variant", "params", "device", "backend", "build", "machine", "status", "verdict",
          "nights", "median_us", "baseline_us", "noise_pct", "delta_pct", "z", "commits", "first_bad_run"]
    sheet(wb, "Regressions", vk, [[s.get(k) for k in vk] for s in vs])
    ws = sheet(wb, "Assumptions", ["input", "value", "basis", "source", "cites", "public source"], [])
    for x in proj.get("inputs", []):
        ids = [t.split("]")[0] for t in x["source"].split("[")[1:]]
        url = next((d["sources"][i][1] for i in ids if i in d["sources"] and d["sources"][i][1]), "")
        ws.append([x["name"], x["value"], x["prov"], x["source"], " ".join(ids), url])
        if url:
            ws.cell(ws.max_row, 6).hyperlink = url
        ws.cell(ws.max_row, 4).alignment = Alignment(wrap_text=True)
    ws = sheet(wb, "What-if", ["input", "value", "", "scenario", "accept", "step ms", "tok/s"], [])
    add_name = getattr(wb.defined_names, "add", None) or wb.defined_names.append  # openpyxl 3.1, 3.0
    for i, x in enumerate(proj.get("inputs", []), start=2):
        ws.cell(i, 1, x["name"])
        ws.cell(i, 2, x["value"])
        name = x["name"].replace(".", "_").replace("-", "_")
        add_name(DefinedName(name, attr_text=f"'What-if'!$B${i}"))
    for i, r in enumerate(rows, start=2):
        ws.cell(i, 4, r["scenario"])
        ws.cell(i, 5, r["accept"])
        parts = "+".join(f"{r['ms'][c]}*IF(native_cut>0,1,1)" for c in COMPS)
        ws.cell(i, 6, f"={parts}")
        ws.cell(i, 7, f"={r['concurrency']}*E{i}/F{i}*1000")
        for j, c in enumerate(COMPS):
            ws.cell(i, 8 + j, f"={r['ms'][c]}*moe_transfer" if c == "moe" else r["ms"][c])
    ws = sheet(wb, "Sources", ["id", "entry", "address"],
               [[k, v[0], v[1]] for k, v in d["sources"].items()])
    for i in range(2, ws.max_row + 1):
        if ws.cell(i, 3).value:
            ws.cell(i, 3).hyperlink = ws.cell(i, 3).value
        ws.cell(i, 2).alignment = Alignment(wrap_text=True)
    wb.save(path)


# ---------------------------------------------------------------- summary and all

def write_summary(path, d, hist, st):
    proj, rec = d["projection"], d["rec"]
    lines = [f"ddt report {rec['run_id']} ({rec['created']})", d["tmpl"]["report"]["title"], ""]
    for r in rec["rows"]:
        lines.append(f"  {r['op'] + '/' + r['variant']:<22} " + (
            f"{r['median_us']:8.1f} us (p10-p90 {r['p10_us']:.1f}-{r['p90_us']:.1f})"
            if r["status"] == "ok" else f"{r['status']}: {r['reason']}"))
    for r in proj["rows"]:
        lines.append(f"  {r['scenario']:<18} accept {r['accept']:<4g} median {r['tok_s']['p50']:8.1f} "
                     f"tok/s  p5-p95 {r['tok_s']['p5']:.1f}-{r['tok_s']['p95']:.1f}")
    lines += [f"  {i + 1}. {c}" for i, c in enumerate(caveats(d, hist, st))]
    last = st["verdict"][-1]
    vals, counts = np.unique(last.astype(str), return_counts=True)
    lines.append("regressions: " + ", ".join(f"{c} {v}" for v, c in zip(vals, counts)))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def write_charts(charts, d, charts_dir):
    """Every chart section's PNG into charts_dir; returns those sections, in order."""
    sections = []
    for i, s in enumerate(d["tmpl"]["report"]["sections"]):
        k = s["section"]
        if k not in ("breakdown", "acceptance", "moe_curve", "tornado", "budget", "pareto", "history"):
            continue
        f, ax = plt.subplots(figsize=charts.size)
        f.subplots_adjust(left=0.2, right=0.95, bottom=0.2, top=0.95)
        charts.draw(ax, s)
        name = f"{i + 1:02d}-{k}" + (f"-{s['op']}" if k == "history" else "") + ".png"
        f.savefig(os.path.join(charts_dir, name), dpi=charts.dpi)
        plt.close(f)
        sections.append(s)
    return sections


def put_in_place(tmp, reports, run_id):
    """tmp becomes REPORTS/RUN_ID (the old one removed after), latest points at it."""
    final = os.path.join(reports, run_id)
    if os.path.isdir(final):
        old = tmp + ".old"
        os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old)
    else:
        os.replace(tmp, final)
    link = os.path.join(reports, ".latest.tmp")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(run_id, link)
    os.replace(link, os.path.join(reports, "latest"))


def main(runs, reports, run_id, phases=False):
    spent = [("start and imports", time.process_time())]

    def phase(name):
        spent.append((name, time.process_time()))

    d = load_run(os.path.join(runs, run_id))
    hist = load_history(runs, run_id)
    phase("load (run, history)")
    st = analyse(hist, d["tmpl"]["regress"])
    phase("statistics")
    os.makedirs(reports, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="." + run_id + ".", dir=reports)
    os.chmod(tmp, 0o755)
    os.makedirs(os.path.join(tmp, "charts"))
    charts = Charts(d, st, hist)
    sections = write_charts(charts, d, os.path.join(tmp, "charts"))
    phase("charts (PNG)")
    write_pdf(os.path.join(tmp, "report.pdf"), d, hist, st, charts, sections)
    phase("PDF")
    write_xlsx(os.path.join(tmp, "report.xlsx"), d, hist, st)
    phase("xlsx")
    write_summary(os.path.join(tmp, "summary.txt"), d, hist, st)
    put_in_place(tmp, reports, run_id)
    phase("summary, in place")
    if phases:
        print("peer_report CPU s: " + ", ".join(
            f"{n} {t - (spent[i - 1][1] if i else 0):.2f}" for i, (n, t) in enumerate(spent)),
            file=sys.stderr)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--phases"]
    if len(args) != 3 or args[0] in ("-h", "--help"):
        sys.exit(__doc__.split("\n\n")[1])
    main(*args, phases="--phases" in sys.argv[1:])
