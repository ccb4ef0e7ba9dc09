/* fit.c - least-squares fits of the physical MoE curve (GSL) and of scaling laws. */
#include "fit.h"

#include "model.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OVERLAP_MAX 0.95
#define OVERLAP_GRID 96

/* The points in use and what is held: the problem the fit solves. */
struct prob {
	const struct calib *c;
	const struct gpu *ref;
	int n;
	double m[CALIB_MAX_MOE_POINTS * 2], y[CALIB_MAX_MOE_POINTS * 2];
	double layers;
	int is_free[MOE_P_COUNT];
	double p[MOE_P_COUNT]; /* current values (held ones stay) */
};

/* Memory time at efficiency 1, fixed 0, for overlap ov at M (ms). */
static double mem_unit(const struct prob *pb, double ov, double M)
{
	double p[MOE_P_COUNT] = {1, ov, 0};
	return model_phys_ms(pb->c, pb->ref, p, M);
}

/* Given overlap ov, the best 1/eff (u) and fixed cost (F, ms per step) for
 * the free ones among them, within u >= 1 and F >= 0; returns the sum of
 * squared relative residuals. */
static double inner(const struct prob *pb, double ov, double *u_out, double *F_out)
{
	int fu = pb->is_free[MOE_P_EFFICIENCY], fF = pb->is_free[MOE_P_FIXED_US];
	double u = 1 / pb->p[MOE_P_EFFICIENCY], F = pb->layers * pb->p[MOE_P_FIXED_US] / 1e3;
	double x1[CALIB_MAX_MOE_POINTS * 2], x2[CALIB_MAX_MOE_POINTS * 2];
	double s11 = 0, s12 = 0, s22 = 0, s1 = 0, s2 = 0, rss = 0;

	/* residual r_i = u x1_i + F x2_i - 1 */
	for (int i = 0; i < pb->n; i++) {
		x1[i] = mem_unit(pb, ov, pb->m[i]) / pb->y[i];
		x2[i] = 1 / pb->y[i];
		s11 += x1[i] * x1[i], s12 += x1[i] * x2[i], s22 += x2[i] * x2[i];
		s1 += x1[i], s2 += x2[i];
	}
	if (fu && fF) {
		double det = s11 * s22 - s12 * s12;
		if (pb->n >= 2 && fabs(det) > 1e-12 * s11 * s22) {
			u = (s1 * s22 - s2 * s12) / det;
			F = (s2 * s11 - s1 * s12) / det;
		}
		if (F < 0) {
			F = 0;
			u = s1 / s11;
		}
		if (u < 1) {
			u = 1;
			F = (s2 - s12) / s22;
			F = F > 0 ? F : 0;
		}
	} else if (fu) {
		u = (s1 - F * s12) / s11;
		u = u > 1 ? u : 1;
	} else if (fF) {
		F = (s2 - u * s12) / s22;
		F = F > 0 ? F : 0;
	}
	for (int i = 0; i < pb->n; i++) {
		double r = u * x1[i] + F * x2[i] - 1;
		rss += r * r;
	}
	*u_out = u;
	*F_out = F;
	return rss;
}

/* Overlap minimizing the inner residual: a grid, then golden-section search
 * around the best grid point. */
static double search_overlap(const struct prob *pb)
{
	double best = 0, bestv = INFINITY, u, F;
	for (int i = 0; i <= OVERLAP_GRID; i++) {
		double ov = OVERLAP_MAX * i / OVERLAP_GRID, v = inner(pb, ov, &u, &F);
		if (v < bestv)
			bestv = v, best = ov;
	}
	double step = OVERLAP_MAX / OVERLAP_GRID;
	double a = best - step > 0 ? best - step : 0;
	double b = best + step < OVERLAP_MAX ? best + step : OVERLAP_MAX;
	const double gr = (sqrt(5) - 1) / 2;
	double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
	double f1 = inner(pb, x1, &u, &F), f2 = inner(pb, x2, &u, &F);
	for (int it = 0; it < 80 && b - a > 1e-12; it++) {
		if (f1 < f2) {
			b = x2, x2 = x1, f2 = f1;
			x1 = b - gr * (b - a);
			f1 = inner(pb, x1, &u, &F);
		} else {
			a = x1, x1 = x2, f1 = f2;
			x2 = a + gr * (b - a);
			f2 = inner(pb, x2, &u, &F);
		}
	}
	double mid = (a + b) / 2;
	return inner(pb, mid, &u, &F) <= bestv ? mid : best;
}

/* ---------------------------------------------------------------- GSL polish */

struct nl_ctx {
	struct prob *pb;
	int idx[MOE_P_COUNT]; /* free parameter of each vector slot */
	int np;
};

static void nl_params(const struct nl_ctx *x, const gsl_vector *v, double p[MOE_P_COUNT])
{
	memcpy(p, x->pb->p, sizeof x->pb->p);
	for (int j = 0; j < x->np; j++)
		p[x->idx[j]] = gsl_vector_get(v, (size_t)j);
}

static int nl_f(const gsl_vector *v, void *params, gsl_vector *f)
{
	const struct nl_ctx *x = params;
	double p[MOE_P_COUNT];
	nl_params(x, v, p);
	for (int i = 0; i < x->pb->n; i++) {
		double t = model_phys_ms(x->pb->c, x->pb->ref, p, x->pb->m[i]);
		gsl_vector_set(f, (size_t)i, t / x->pb->y[i] - 1);
	}
	return GSL_SUCCESS;
}

static int in_bounds(const double p[MOE_P_COUNT])
{
	return p[MOE_P_EFFICIENCY] > 0 && p[MOE_P_EFFICIENCY] <= 1 && p[MOE_P_OVERLAP] >= 0 &&
	       p[MOE_P_OVERLAP] <= OVERLAP_MAX && p[MOE_P_FIXED_US] >= 0;
}

static double rss_at(const struct prob *pb, const double p[MOE_P_COUNT])
{
	double s = 0;
	for (int i = 0; i < pb->n; i++) {
		double r = model_phys_ms(pb->c, pb->ref, p, pb->m[i]) / pb->y[i] - 1;
		s += r * r;
	}
	return s;
}

/* Polishes the free parameters that sit inside their bounds with GSL's
 * trust-region least squares and fills their standard errors (more points
 * than parameters only). Keeps the start when GSL does no better. */
static void polish(struct prob *pb, struct moe_fit *f)
{
	struct nl_ctx x = {.pb = pb};
	for (int p = 0; p < MOE_P_COUNT; p++) {
		int at_bound = (p == MOE_P_EFFICIENCY && pb->p[p] >= 1) ||
			       (p == MOE_P_OVERLAP && (pb->p[p] <= 0 || pb->p[p] >= OVERLAP_MAX)) ||
			       (p == MOE_P_FIXED_US && pb->p[p] <= 0);
		if (pb->is_free[p] && !at_bound)
			x.idx[x.np++] = p;
	}
	if (x.np == 0 || pb->n <= x.np)
		return;
	gsl_multifit_nlinear_fdf fdf = {.f = nl_f, .n = (size_t)pb->n, .p = (size_t)x.np,
					.params = &x};
	gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_workspace *w =
		gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, fdf.n, fdf.p);
	gsl_vector *v = gsl_vector_alloc(fdf.p);
	gsl_matrix *cov = gsl_matrix_alloc(fdf.p, fdf.p);
	int info;
	if (!w || !v || !cov)
		goto done;
	for (int j = 0; j < x.np; j++)
		gsl_vector_set(v, (size_t)j, pb->p[x.idx[j]]);
	if (gsl_multifit_nlinear_init(v, &fdf, w) == GSL_SUCCESS) {
		double p[MOE_P_COUNT], before = rss_at(pb, pb->p);
		gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 1e-12, NULL, NULL, &info, w);
		nl_params(&x, gsl_multifit_nlinear_position(w), p);
		if (in_bounds(p) && rss_at(pb, p) <= before)
			memcpy(pb->p, p, sizeof p);
		/* errors at the solution: s^2 (J'J)^-1 with s^2 = rss / (n - p) */
		for (int j = 0; j < x.np; j++)
			gsl_vector_set(v, (size_t)j, pb->p[x.idx[j]]);
		gsl_multifit_nlinear_init(v, &fdf, w);
		if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, cov) == GSL_SUCCESS) {
			double s2 = rss_at(pb, pb->p) / (pb->n - x.np);
			for (int j = 0; j < x.np; j++)
				f->se[x.idx[j]] = sqrt(s2 * gsl_matrix_get(cov, (size_t)j, (size_t)j));
		}
	}
done:
	gsl_matrix_free(cov);
	gsl_vector_free(v);
	gsl_multifit_nlinear_free(w);
}

/* ---------------------------------------------------------------- the fit */

/* Appends "name=value" of the held parameters to f->note. */
static void note_held(struct moe_fit *f, const struct moe_physical *ph)
{
	size_t len = strlen(f->note);
	const char *sep = "; held at calibration values: ";
	for (int p = 0; p < MOE_P_COUNT; p++)
		if (f->held[p]) {
			len += (size_t)snprintf(f->note + len, sizeof f->note - len, "%s%s=%g (%s)", sep,
						calib_moe_param_name((enum moe_param)p), f->value[p],
						ph->source[p]);
			sep = ", ";
			if (len >= sizeof f->note)
				return;
		}
}

void fit_moe_physical(struct moe_fit *f, const struct calib *c, const struct gpu *ref,
		      const double *m, const double *ms, int n, const struct moe_physical *ph)
{
	struct prob pb;
	double ceff = c->asm_[ASM_MOE_COMPUTE_EFF].point;
	double flops = 0, u, F;
	int skipped = 0, nfree;

	gsl_set_error_handler_off();
	memset(f, 0, sizeof *f);
	memset(&pb, 0, sizeof pb);
	pb.c = c;
	pb.ref = ref;
	pb.layers = c->model.layers - c->model.dense_layers;
	{
		/* flops per verify token: from the model's own formula */
		double w = 3 * c->model.hidden * c->model.moe_intermediate /
			   (c->moe_ref.tp > 0 ? c->moe_ref.tp : c->model.tp);
		flops = pb.layers * 2 * w * (c->model.experts_per_token + c->model.shared_experts);
	}
	for (int i = 0; i < n && pb.n < CALIB_MAX_MOE_POINTS * 2; i++) {
		double roof = ceff > 0 ? flops * m[i] / (ref->bf16_tflops * 1e12 * ceff) * 1e3 : 0;
		if (roof > 0.8 * ms[i]) {
			skipped++;
			continue;
		}
		pb.m[pb.n] = m[i];
		pb.y[pb.n++] = ms[i];
	}
	for (int p = 0; p < MOE_P_COUNT; p++) {
		f->value[p] = pb.p[p] = ph->value[p];
		f->se[p] = NAN;
		f->held[p] = 1;
	}
	if (pb.p[MOE_P_OVERLAP] > OVERLAP_MAX)
		pb.p[MOE_P_OVERLAP] = OVERLAP_MAX;
	nfree = ph->nfit < pb.n ? ph->nfit : pb.n;
	for (int j = 0; j < nfree; j++) {
		pb.is_free[ph->fit[j]] = 1;
		f->held[ph->fit[j]] = 0;
	}
	f->npoints = pb.n;
	if (pb.n == 0) {
		snprintf(f->note, sizeof f->note, "no points to fit%s",
			 skipped ? " (every point is compute bound)" : "");
		return;
	}
	if (pb.is_free[MOE_P_OVERLAP])
		pb.p[MOE_P_OVERLAP] = search_overlap(&pb);
	inner(&pb, pb.p[MOE_P_OVERLAP], &u, &F);
	pb.p[MOE_P_EFFICIENCY] = 1 / u;
	pb.p[MOE_P_FIXED_US] = F * 1e3 / pb.layers;
	polish(&pb, f);

	double rss = rss_at(&pb, pb.p);
	for (int p = 0; p < MOE_P_COUNT; p++)
		f->value[p] = pb.p[p];
	f->rms_pct = sqrt(rss / pb.n) * 100;
	f->ok = isfinite(rss) && in_bounds(pb.p);
	/* as many points as parameters is exactly determined only when the
	 * curve passes through them (0.1% RMS: rounding) */
	int exact = nfree == pb.n && f->rms_pct < 0.1;
	int len = snprintf(f->note, sizeof f->note, "%d point%s, %d parameter%s fitted%s%s", pb.n,
			   pb.n == 1 ? "" : "s", nfree, nfree == 1 ? "" : "s",
			   exact ? " (exactly determined: the residuals say nothing of the "
				   "curve's error; the backtest does)"
			   : nfree == pb.n ? " (as many as the points, yet the curve cannot pass "
					     "through them: its residuals are drawn as its error)"
					   : "",
			   skipped ? ", compute-bound points left out" : "");
	if (len > 0 && (size_t)len < sizeof f->note)
		note_held(f, ph);
}

double fit_moe_loo(const struct calib *c, const struct gpu *ref, const double *m,
		   const double *ms, int n, const struct moe_physical *ph, enum moe_curve_kind k,
		   int i)
{
	double xm[CALIB_MAX_MOE_POINTS * 2], xy[CALIB_MAX_MOE_POINTS * 2];
	int r = 0;
	for (int j = 0; j < n && r < CALIB_MAX_MOE_POINTS * 2; j++)
		if (j != i)
			xm[r] = m[j], xy[r++] = ms[j];
	if (k == MOE_CURVE_LINEAR) {
		if (r < 2)
			return NAN;
		int s = 1;
		while (s < r - 1 && m[i] > xm[s])
			s++;
		return xy[s - 1] + (m[i] - xm[s - 1]) * (xy[s] - xy[s - 1]) / (xm[s] - xm[s - 1]);
	}
	struct moe_fit f;
	fit_moe_physical(&f, c, ref, xm, xy, r, ph);
	return f.ok ? model_phys_ms(c, ref, f.value, m[i]) : NAN;
}

void fit_moe_plateau(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		     double *plateau_ms, double *m95)
{
	double lo = model_phys_ms(c, ref, p, 1), hi = model_phys_ms(c, ref, p, 1e9);
	double a = 1, b = 1e9;
	*plateau_ms = hi;
	/* the curve rises monotonically: bisect for 95% of the plateau */
	if (!(hi > lo)) {
		*m95 = 1;
		return;
	}
	for (int it = 0; it < 200 && b - a > 1e-6 * b; it++) {
		double mid = sqrt(a * b);
		if (model_phys_ms(c, ref, p, mid) < 0.95 * hi)
			a = mid;
		else
			b = mid;
	}
	*m95 = b;
}

int fit_growth_frac(const double *x, const double *t, int n, double x0, double *f)
{
	double c0, c1, cov00, cov01, cov11, sumsq;
	int distinct = 0;
	for (int i = 1; i < n; i++)
		distinct |= x[i] != x[0];
	if (n < 2 || !distinct)
		return -1;
	gsl_set_error_handler_off();
	if (gsl_fit_linear(x, 1, t, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq))
		return -1;
	double at0 = c0 + c1 * x0;
	double v = at0 > 0 ? c1 * x0 / at0 : 1;
	*f = v < 0 ? 0 : v > 1 ? 1 : v;
	return 0;
}

/* ---------------------------------------------------------------- attention over context */

/* Distinct values of x[0..n). */
static int ndistinct(const double *x, int n)
{
	int d = 0;
	for (int i = 0; i < n; i++) {
		int j = 0;
		while (j < i && x[j] != x[i])
			j++;
		d += j == i;
	}
	return d;
}

/* Weighted least squares of t = a0 + a1 T + ctx (b + c T) with weights
 * 1 / t^2; p[4] and the covariance of (b, c) scaled by the residuals'
 * variance, R^2 on the times. Returns 0 or -1 (GSL failed, rank below 4,
 * no memory). */
static int ctx_solve(const double *ctx, const double *T, const double *t, int n, double p[4],
		     double cov[3], double *r2)
{
	gsl_matrix *X = gsl_matrix_alloc((size_t)n, 4), *C = gsl_matrix_alloc(4, 4);
	gsl_vector *y = gsl_vector_alloc((size_t)n), *w = gsl_vector_alloc((size_t)n);
	gsl_vector *c = gsl_vector_alloc(4);
	gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, 4);
	double chisq, ss = 0, st = 0, mean = 0;
	size_t rank = 0;
	int rc = -1;
	if (!X || !C || !y || !w || !c || !ws)
		goto done;
	for (int i = 0; i < n; i++) {
		double row[4] = {1, T[i], ctx[i], ctx[i] * T[i]};
		for (size_t j = 0; j < 4; j++)
			gsl_matrix_set(X, (size_t)i, j, row[j]);
		gsl_vector_set(y, (size_t)i, t[i]);
		gsl_vector_set(w, (size_t)i, 1 / (t[i] * t[i]));
		mean += t[i] / n;
	}
	gsl_set_error_handler_off();
	/* rank 4 or nothing: rows that cannot tell the four apart (the
	 * contexts measured at one width only) fit no law */
	if (gsl_multifit_wlinear_tsvd(X, w, y, 1e-10, c, C, &chisq, &rank, ws) || rank < 4)
		goto done;
	for (int i = 0; i < n; i++) {
		double f = gsl_vector_get(c, 0) + gsl_vector_get(c, 1) * T[i] +
			   ctx[i] * (gsl_vector_get(c, 2) + gsl_vector_get(c, 3) * T[i]);
		ss += (t[i] - f) * (t[i] - f);
		st += (t[i] - mean) * (t[i] - mean);
	}
	double s2 = chisq / (n - 4); /* the weights are relative: their scale is the residuals' */
	for (int j = 0; j < 4; j++)
		p[j] = gsl_vector_get(c, (size_t)j);
	cov[0] = s2 * gsl_matrix_get(C, 2, 2);
	cov[1] = s2 * gsl_matrix_get(C, 2, 3);
	cov[2] = s2 * gsl_matrix_get(C, 3, 3);
	*r2 = st > 0 ? 1 - ss / st : NAN;
	rc = 0;
done:
	gsl_matrix_free(X);
	gsl_matrix_free(C);
	gsl_vector_free(y);
	gsl_vector_free(w);
	gsl_vector_free(c);
	gsl_multifit_linear_free(ws);
	return rc;
}

/* Smallest and largest of x[0..n). */
static void span(const double *x, int n, double *lo, double *hi)
{
	*lo = *hi = x[0];
	for (int i = 1; i < n; i++)
		*lo = fmin(*lo, x[i]), *hi = fmax(*hi, x[i]);
}

int fit_ctx_law(struct ctx_law *l, const struct gpu *gpu, const double *ctx, const double *T,
		const double *t_us, int n)
{
	double p[4], cov[3], r2, c0, c1, t0, t1;
	memset(l, 0, sizeof *l);
	int nc = ndistinct(ctx, n), nt = ndistinct(T, n);
	if (n < FIT_CTX_MIN_ROWS || nc < 2 || nt < 2) {
		snprintf(l->what, sizeof l->what, "%d tree_attn row%s at %d context%s and %d width%s: "
			 "the law needs %d over 2 contexts and 2 widths", n, n == 1 ? "" : "s", nc,
			 nc == 1 ? "" : "s", nt, nt == 1 ? "" : "s", FIT_CTX_MIN_ROWS);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (!(t_us[i] > 0) || !(ctx[i] >= 0) || !(T[i] >= 1)) {
			snprintf(l->what, sizeof l->what, "a tree_attn row of %g us at ctx %g, T %g",
				 t_us[i], ctx[i], T[i]);
			return -1;
		}
	if (ctx_solve(ctx, T, t_us, n, p, cov, &r2)) {
		snprintf(l->what, sizeof l->what, "%d tree_attn rows cannot tell the law's four terms "
			 "apart (each context measured at one width?)", n);
		return -1;
	}
	span(ctx, n, &c0, &c1);
	span(T, n, &t0, &t1);
	if (!(p[2] > 0) || !(p[3] >= 0)) {
		snprintf(l->what, sizeof l->what, "%d tree_attn rows fitted %.3g us a context token "
			 "and %.3g us a token and query: a negative slope, the rows do not follow "
			 "t = a0 + a1 T + ctx (b + c T)", n, p[2], p[3]);
		return -1;
	}
	l->n = n;
	l->b_us = p[2];
	l->c_us = p[3];
	l->var_b = cov[0], l->cov_bc = cov[1], l->var_c = cov[2];
	l->r2 = r2;
	l->bw_tbps = gpu->bw_tbps;
	l->bf16_tflops = gpu->bf16_tflops;
	snprintf(l->what, sizeof l->what, "fit of %d tree_attn rows on %s (ctx %g-%g, T %g-%g), "
		 "R^2 %.4f: %.3g +- %.2g us a context token and layer (%.0f B at %g TB/s), "
		 "%.3g +- %.2g us a token and query", n, gpu->name, c0, c1, t0, t1, r2, l->b_us,
		 sqrt(l->var_b), l->b_us * gpu->bw_tbps * 1e6, gpu->bw_tbps, l->c_us, sqrt(l->var_c));
	return 0;
}
