"""peer_model.py - the model's Monte Carlo step (model_case_step) as a numpy vectorised loop: bench_model's peer.

usage: peer_model.py CASES EVALUATIONS

CASES (written by bench_model) holds the model's values as "name value"
lines, then "v" and the assumption values, then one line per compiled case:
"case" and its fields in CASE_FIELDS order, and last the step model_case_step
gave for it. The peer evaluates the step of every case for every Monte
Carlo draw in blocks of draws x cases (each model value a column over the
draws, each case field a row over the cases, the transfer factor gathered
from each draw's values), as a numpy program of the Monte Carlo would,
about EVALUATIONS case-steps on one core. It prints two lines:
"evaluations_per_s X" (CPU time) and "max_rel_diff X" against the steps in
CASES (every draw here has the same values, so each must equal C's).
"""
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

CASE_FIELDS = ["moe_lr", "moe_x_sig", "moe_mem_ms", "xfer", "xfer_adj", "moe_flop_ms",
               "ar_small_ms", "ar_pcie", "ar_link_ms", "bwr_anchor", "attn_c", "attn_g",
               "spec", "draft_c", "draft_g", "native", "tree_meas_ms", "tree_x", "context",
               "ctx_ms_tok"]
BLOCK = 256  # draws per block: the fastest here (64-8192 tried); 128 KB temporaries stay in cache


def read(path):
    m, v, cases = {}, None, []
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "v":
                v = np.array(w[1:], dtype=float)
            elif w[0] == "case":
                cases.append([float(x) for x in w[1:]])
            else:
                m[w[0]] = float(w[1])
    c = np.array(cases)
    k = {name: c[:, i] for i, name in enumerate(CASE_FIELDS)}
    return m, v, k, c[:, len(CASE_FIELDS)]


def step(m, v, k):
    """Steps of every (draw, case): m's values are columns (draws, 1), v is (draws, nv), k's rows (cases,)."""
    has_x = k["xfer"] >= 0
    xv = v[:, np.where(has_x, k["xfer"], 0).astype(np.intp)]
    xf = np.where(has_x, xv * m["c_xfer"] * np.where(m["xfer_curve"] > 0, k["xfer_adj"], 1), 1)
    moe = k["moe_mem_ms"] * np.exp(m["form"] * k["moe_lr"] + m["z_x"] * k["moe_x_sig"]) \
        * m["moe_scale"] * xf
    moe = np.maximum(moe, k["moe_flop_ms"] * m["c_inv_ceff"])
    ar = k["ar_small_ms"] * np.where(k["ar_pcie"] > 0, m["c_pcie"], 1) + k["ar_link_ms"]
    nonmoe = k["bwr_anchor"] * (m["c_attn"] * k["attn_c"] + m["c_attn_g"] * k["attn_g"]
                                + k["spec"] * (m["c_draft"] * k["draft_c"] + m["c_draft_g"] * k["draft_g"])) \
        + m["c_over"] + ar
    ctx = np.where(k["context"] > 0, (k["context"] - m["anchor_context"]) * k["ctx_ms_tok"]
                   / m["attn_ctx_eff"], 0)
    tree_k = np.where(np.isnan(k["tree_meas_ms"]), m["c_tn0"] + m["c_tn1"] * k["tree_x"],
                      k["tree_meas_ms"])
    kernels = (k["native"] > 0) & (m["tree_kernels"] > 0)
    seed = np.where(k["native"] > 0, m["c_cut1"], m["c_cut0"]) \
        * (nonmoe + k["spec"] * (m["c_tree0"] + m["c_tree1"] * k["tree_x"]))
    rest = np.where(kernels, m["c_cut1"] * nonmoe + k["spec"] * tree_k, seed) + ctx
    return moe + rest


def main(path, evaluations):
    m, v, k, want = read(path)
    ncases = len(want)
    cols = {name: np.full((BLOCK, 1), val) for name, val in m.items()}
    vs = np.tile(v, (BLOCK, 1))
    blocks = max(1, int(evaluations) // (BLOCK * ncases))
    got = step(cols, vs, k)
    diff = np.max(np.abs(got / want[None, :] - 1))
    total = 0.0
    t0 = time.process_time()
    for _ in range(blocks):
        total += step(cols, vs, k).sum()
    spent = time.process_time() - t0
    print(f"evaluations_per_s {blocks * BLOCK * ncases / spent:.6g}")
    print(f"max_rel_diff {diff:.3g}")
    print(f"checksum {total:.6g}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1], float(sys.argv[2]))
