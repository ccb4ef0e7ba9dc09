"""tcpd_convert.py - bench/data/tcpd-*.series from the Turing Change Point Dataset.

Usage: python3 bench/data/tcpd_convert.py TCPD_CHECKOUT
(a checkout of github.com/alan-turing-institute/TCPD; the files here were made
from commit 83b3039). Writes the series named in SERIES, each with the
labels its annotators agree on: a change is labelled where at least half of
the annotators of that series mark it in one run of marks each at most 3
points from the one before (at the run's median); the others' marks are
left out. Values as they are (all positive).
"""
import json
import os
import statistics
import sys

SERIES = {  # name: (dimension, license)
    "well_log": (0, "MIT"),
    "quality_control_4": (0, "MIT"),
    "run_log": (0, "MIT (stats.csv: Copyright 2019 Gerrit J.J. van den Burg)"),
}
TOL = 3


def agreed(marks):
    """Changes at least half of the annotators mark in one run of marks at most TOL apart."""
    pts = sorted((p, a) for a, ps in marks.items() for p in ps)
    need = (len(marks) + 1) // 2
    out, i = [], 0
    while i < len(pts):
        j = i
        while j + 1 < len(pts) and pts[j + 1][0] - pts[j][0] <= TOL:
            j += 1
        group = pts[i:j + 1]
        if len({a for _, a in group}) >= need:
            out.append(int(statistics.median(p for p, _ in group)))
        i = j + 1
    return out


def main(root):
    with open(os.path.join(root, "annotations.json")) as f:
        ann = json.load(f)
    for name, (dim, lic) in SERIES.items():
        with open(os.path.join(root, "datasets", name, name + ".json")) as f:
            d = json.load(f)
        s = d["series"][dim]
        vals = s["raw"]
        steps = agreed(ann[name])
        path = os.path.join("bench", "data", "tcpd-" + name + ".series")
        with open(path, "w") as out:
            out.write(f"# {d['longname']} ({s['label']}), {len(vals)} points: the Turing Change Point\n")
            out.write("# Dataset (van den Burg and Williams, 'An Evaluation of Change Point Detection\n")
            out.write("# Algorithms', arXiv:2003.06222), github.com/alan-turing-institute/TCPD commit\n")
            out.write(f"# 83b3039, datasets/{name}/{name}.json, {lic}. Labelled by\n")
            out.write(f"# {len(ann[name])} annotators (annotations.json); here the changes at least half of them\n")
            out.write("# mark in one run of marks at most 3 points apart (bench/data/tcpd_convert.py).\n")
            out.write("steps: " + " ".join(str(p) for p in steps) + "\n")
            for k in range(0, len(vals), 10):
                out.write(" ".join(f"{v:.6g}" for v in vals[k:k + 10]) + "\n")
        print(path, len(vals), "points, changes", steps)


if __name__ == "__main__":
    main(sys.argv[1])
