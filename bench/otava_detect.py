"""otava_detect.py - Apache Otava's change points on every night's prefix of each series.

Reads series from the file named by the first argument, one per line:
"<id> <v1> <v2> ...". For every prefix of at least 8 nights it runs Otava's
compute_change_points with its defaults (window 50, p-value 0.001, no minimum
magnitude) and prints "<id> <nights> <index>" for each change point found,
the index 0-based into the series. bench_regress.c matches these to the
known change points exactly as it matches ddt's verdicts. The series goes in
as a Python list: Otava 0.8.0's ChangePointDetector slices its window only
when the series is not a NumPy array (given an array, a window that does not
start at 0 yields indexes past the end and a ValueError). A prefix that still
raises ValueError gives no change points; their number goes to stderr.
"""
import sys

from otava.analysis import compute_change_points


def main(path):
    out = sys.stdout
    failed = 0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            sid, values = parts[0], [float(v) for v in parts[1:]]
            for t in range(8, len(values) + 1):
                try:
                    cps, _ = compute_change_points(values[:t])
                except ValueError:
                    failed += 1
                    continue
                for cp in cps:
                    out.write(f"{sid} {t} {int(cp.index)}\n")
    out.flush()
    if failed:
        print(f"otava_detect: Otava raised ValueError on {failed} prefixes", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
