/* fit.h - least-squares fits: the physical MoE curve to measured points (GSL),
 * its leave-one-out predictions, and the small fits of tonight's scaling laws. */
#ifndef DDT_FIT_H
#define DDT_FIT_H

#include "calib.h"

/* Fits the physical curve (model.h: model_phys_ms) to n points (m, step_ms)
 * measured on ref. The parameters freed are the first min(n, ph->nfit) of
 * ph->fit; the others are held at ph->value. Residuals are relative (each
 * point weighs the same whatever its size); points the compute roof would
 * bind (roof > 80% of the time, at the point compute efficiency) are left
 * out, since the curve fitted is the memory side. Variable projection: the
 * curve is linear in 1/efficiency and the fixed cost for a given overlap, so
 * overlap is searched in one dimension and the rest solved exactly, within
 * efficiency <= 1, fixed >= 0, overlap in [0, 0.95]; then a GSL
 * nonlinear least-squares pass polishes the free parameters and gives their
 * standard errors when there are more points than parameters. Fills f (ok 0
 * with a note when it cannot). Cannot fail otherwise. */
void fit_moe_physical(struct moe_fit *f, const struct calib *c, const struct gpu *ref,
		      const double *m, const double *ms, int n, const struct moe_physical *ph);

/* Point i predicted from the other n-1 points with curve k (NaN when the
 * rest cannot draw the curve: a line needs two points). */
double fit_moe_loo(const struct calib *c, const struct gpu *ref, const double *m,
		   const double *ms, int n, const struct moe_physical *ph, enum moe_curve_kind k,
		   int i);

/* The physical curve's plateau on ref (M -> infinity, memory side) and the M
 * where it reaches 95% of it. */
void fit_moe_plateau(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		     double *plateau_ms, double *m95);

/* ---- transfer factors from measured cross-GPU tables ---- */

#define FIT_XFER_MAX_FAMPAIRS 48

/* One M range of the transfer fit: log factor = off[family pair] + b
 * log(bw_to / bw_from), by least squares over every ordered pair of measured
 * GPUs and every M of the range both measured (b from the variation within
 * family pairs); a family pair never measured takes a + b log(...), a the
 * mean over every pair. */
struct xfer_fit_range {
	double a, b;               /* intercept, slope on the log bandwidth ratio */
	double sd;                 /* residual sd of the log factor (no offsets) */
	int n;                     /* points */
	int nfam;
	char fam_from[FIT_XFER_MAX_FAMPAIRS][24], fam_to[FIT_XFER_MAX_FAMPAIRS][24];
	double off[FIT_XFER_MAX_FAMPAIRS];  /* the family pair's intercept */
	double sdo[FIT_XFER_MAX_FAMPAIRS];  /* sd about it (NaN: one point) */
	int no[FIT_XFER_MAX_FAMPAIRS];      /* its points */
	int npairs[FIT_XFER_MAX_FAMPAIRS];  /* its GPU pairs */
};

struct xfer_fit {
	int ok;                    /* 0: no range has two points of two bandwidth ratios */
	int nranges;
	struct xfer_fit_range r[CALIB_MAX_RANGES];
	int ngpus;                 /* series used */
};

/* Fits the transfer factors of class k (c's M ranges and families) from its
 * series, leaving out GPU `exclude` (NULL: none) and GPUs not in c's
 * catalog. Cannot fail; f->ok says whether anything was fitted. */
void fit_xfer(struct xfer_fit *f, const struct calib *c, const struct meas_class *k,
	      const char *exclude);

/* The calibrated factor from -> to in range r: median and sigma of its log
 * (c's sigma_floor added), and how many measured GPU pairs the family pair
 * had (0: the range's line alone). Returns 0, or -1 when range r was not
 * fitted. */
int fit_xfer_factor(const struct xfer_fit *f, const struct calib *c, const struct gpu *from,
		    const struct gpu *to, int r, double *median, double *sigma, int *npairs);

/* The range of c that holds M (whole tokens; below the first: the first). */
int fit_xfer_range(const struct calib *c, double M);

/* The fraction of a component that grows with its driver, from times t at
 * drivers x: the line t = a + b x gives f = b x0 / (a + b x0), clamped to
 * [0, 1]. Returns 0, or -1 with fewer than two distinct x. */
int fit_growth_frac(const double *x, const double *t, int n, double x0, double *f);

#endif
