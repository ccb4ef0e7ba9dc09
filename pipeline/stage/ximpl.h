/* ximpl.h - the transfer across implementations: one kernel class measured
 * by several implementations (measured.yaml's `implementation`: engine,
 * version, layout; the kernel per GPU in each series' source), the GPU-to-GPU
 * law they share and the gap an implementation never measured shows
 * against it.
 *
 * Each implementation i is fitted alone (xfer.h): lf_i(S, T, M), the log
 * factor on bandwidth scaling from GPU S to GPU T, with its held-out GPU
 * error sig_i. The shared law is their mean, each engine (the first word
 * of measured.yaml's implementation: vllm, sglang) weighing one, its builds
 * and layouts sharing that weight (they share its kernels),
 *
 *     lf(S, T, M) = sum_i w_i lf_i(S, T, M),   sig_gpu^2 = sum_i w_i sig_i^2,
 *     w_i = 1 / (engines x implementations of i's engine),
 *
 * where lf_i is the measured ratio when implementation i measured both GPUs
 * at M (sig_i: the calibration's sigma_floor). The implementation gap is
 * what that law missed by on implementations it was not given. The unit
 * left out is the engine build (engine and version: measured.yaml's
 * implementation less its layout): the layouts of one build (vLLM 0.24.0
 * EP-8 and TP-8) run the same kernels, so one left out while its twin
 * stays in the fit would be predicted by itself, and counted as two they
 * would claim twice the evidence. Each build J left out in turn (every
 * layout of it together), its measured pairs (A, B) at every M predicted
 * from A's measured time by the law of the other builds. Per measured M
 * and pair kind (both GPUs of one memory kind, or across kinds: a GDDR part
 * projected to HBM), over those errors e = log(predicted / measured):
 *
 *     bias = mean over J of J's mean e        (the law's signed error)
 *     var  = mean of (e - bias)^2             (the gap's spread)
 *     se2  = variance of J's means / n_J      (the doubt of the bias)
 *
 * n_J counts builds, not layouts: the degrees of freedom are the
 * independent builds'.
 *
 * A prediction is corrected by the bias where it is systematic (beyond
 * XIMPL_BIAS_Z standard errors) and carries the rest either way:
 *
 *     lf = lf(S, T, M) - bias,  sigma^2 = sig_gpu^2 + gap^2,
 *     gap = sqrt(var + se2) x t(0.95, n_J - 1) / z(0.95)
 *
 * (a new build is one more draw from a spread seen in n_J of them:
 * Student's predictive band, as a lognormal of the same p5-p95).
 *
 * A bucket with fewer than XIMPL_MIN_POINTS points or one implementation
 * takes the pooled figures of its pair kind over every M. An M between the
 * measured ones takes the nearest (in log M).
 */
#ifndef DDT_XIMPL_H
#define DDT_XIMPL_H

#include "calib.h"
#include "xfer.h"

#define XIMPL_MAX CALIB_MAX_CLASSES
#define XIMPL_MIN_POINTS 8
/* A bias is systematic, and corrected, beyond this many standard errors. */
#define XIMPL_BIAS_Z 2.0

/* The gap of one bucket (NaN bias: no point). */
struct ximpl_gap {
	double bias, var, se2;
	int n, nimpl; /* points, builds (the independent units) */
};

/* The pair kinds (ximpl_bucket): within one memory kind or across kinds,
 * each to a faster or a slower GPU (its own sign of bias: a pair and its
 * reverse err by opposite amounts). */
enum { XIMPL_SAME_UP, XIMPL_SAME_DOWN, XIMPL_CROSS_UP, XIMPL_CROSS_DOWN, XIMPL_NQ };

/* The gap per measured M and pair kind: g[i][q] at M m[i]; g[nm]: every M
 * pooled. */
struct ximpl_gaps {
	int nm;
	double m[CALIB_MAX_MEAS_M];
	struct ximpl_gap g[CALIB_MAX_MEAS_M + 1][XIMPL_NQ];
};

/* t(0.95, nimpl - 1) / z(0.95): how much wider than a normal one the 90%
 * predictive band of one more implementation is (1 for nimpl <= 1). */
double ximpl_t_scale(int nimpl);

/* The pair kind of from -> to: across memory kinds (xfer_kind) or not, to
 * a GPU of lower bandwidth or not. Cannot fail. */
int ximpl_bucket(const struct calib *c, const struct gpu *from, const struct gpu *to);

/* The implementations of one kernel class, each fitted alone. */
struct ximpl {
	int n, nbuild;
	const struct meas_class *k[XIMPL_MAX];
	struct xfer_fit *x[XIMPL_MAX];  /* owned */
	int build[XIMPL_MAX];           /* implementation i's build, 0 .. nbuild - 1 */
	struct ximpl_gaps gap;          /* with nothing held out */
};

/* The implementations of implementation i's build (bit j: implementation
 * j): what leaves the fit when i is held out. */
unsigned ximpl_build_mask(const struct ximpl *s, int i);

/* Fits every implementation of class `cls` in the measured tables ms (the
 * class itself and every class whose implementation.of names it) and sizes
 * the gap. Returns 0 (s->n
 * 0: no such class) or DDT_ENOMEM; s is freed by ximpl_free either way. */
int ximpl_init(struct ximpl *s, const struct calib *c, const struct measured *ms,
	       const char *cls);
void ximpl_free(struct ximpl *s);

/* The shared law from -> to at M over the implementations not in skip (bit
 * i: implementation i), each engine weighing one: lf and sig_gpu. Returns
 * 0, or -1 when none can say. */
int ximpl_shared(const struct ximpl *s, const struct calib *c, unsigned skip,
		 const struct gpu *from, const struct gpu *to, double M, double *lf, double *sig);

/* The gap of the implementations not in skip, each build of them left
 * out in turn, into gap. Cannot fail. */
void ximpl_gap_est(struct ximpl_gaps *gap, const struct ximpl *s, const struct calib *c,
		   unsigned skip);

/* The bucket of gap that serves (M, from, to), after the fallbacks; NULL
 * when no bucket has a point. */
const struct ximpl_gap *ximpl_gap_at(const struct ximpl_gaps *gap, const struct calib *c,
				     double M, const struct gpu *from, const struct gpu *to);

/* The corrected prediction from -> to at M with skip's implementations out
 * and gap (ximpl_gap_est with the same skip): lf, its total sigma, and the
 * gap's part of it (gap_sig, with the bias's doubt) and the bias applied.
 * Returns 0, or -1 when the shared law cannot say. */
int ximpl_predict(const struct ximpl *s, const struct calib *c, unsigned skip,
		  const struct ximpl_gaps *gap, const struct gpu *from, const struct gpu *to,
		  double M, double *lf, double *sig, double *gap_sig, double *bias);

#endif
