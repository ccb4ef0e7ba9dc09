/* fit.h - least-squares fits: the physical MoE curve to measured points (GSL),
 * its leave-one-out predictions, and the small fits of tonight's scaling laws. */
#ifndef DDT_FIT_H
#define DDT_FIT_H

#include "calibrate.h"

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

/* The fraction of a component that grows with its driver, from times t at
 * drivers x: the line t = a + b x gives f = b x0 / (a + b x0), clamped to
 * [0, 1]. Returns 0, or -1 with fewer than two distinct x. */
int fit_growth_frac(const double *x, const double *t, int n, double x0, double *f);

/* The fewest tree_attn rows the law of attention over context is fitted
 * to: its four parameters and two degrees of freedom for their errors. */
#define FIT_CTX_MIN_ROWS 6

/* Attention over context from n tree_attn rows measured on gpu (one
 * sequence, one layer): time t_us at context ctx and T = 1 + B queries,
 * fitted to t = a0 + a1 T + ctx (b + c T) by weighted least squares (GSL;
 * relative residuals: each row weighs the same whatever its size), the
 * covariance of (b, c) scaled by the residuals' variance. Needs
 * FIT_CTX_MIN_ROWS rows over two contexts and two widths, and b > 0,
 * c >= 0. Returns 0 with l filled (l->what: the rows, R^2, b and c with
 * their standard errors), or -1 with l->n 0 and why in l->what (the
 * model then takes MLA's geometry). */
int fit_ctx_law(struct ctx_law *l, const struct gpu *gpu, const double *ctx, const double *T,
		const double *t_us, int n);

#endif
