/* xfer.c - the transfer calibration (xfer.h): per-column physical fits, family
 * offsets, and the held-out errors that size the bands. */
#include "xfer.h"
#include "ximpl.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int xfer_range_of(const struct calib *c, double M)
{
	M = floor(M);
	for (int r = 0; r < c->nranges; r++)
		if (M <= c->range_hi[r])
			return r;
	return c->nranges - 1;
}

const char *xfer_kind(const struct calib *c, const struct gpu *g)
{
	for (int i = 0; i < c->nkinds; i++)
		if (!strcmp(c->kinds[i].memory, g->memory))
			return c->kinds[i].kind;
	return g->memory;
}

double xfer_compute(const struct meas_class *k, const struct gpu *g)
{
	return !strcmp(k->compute, "fp8") ? g->fp8_tflops
	       : !strcmp(k->compute, "fp4") ? g->fp4_tflops
					    : g->bf16_tflops;
}

/* The curve's terms for g: 1, 1 / compute, 1 / bandwidth. */
static void terms(const struct meas_class *k, const struct gpu *g, double f[XFER_NPARAM])
{
	f[XFER_C] = 1;
	f[XFER_A] = 1 / xfer_compute(k, g);
	f[XFER_B] = 1 / g->bw_tbps;
}

static double curve_at(const struct xfer_col *col, const struct meas_class *k,
		       const struct gpu *g)
{
	double f[XFER_NPARAM], m = 0;
	terms(k, g, f);
	for (int i = 0; i < XFER_NPARAM; i++)
		m += f[i] * col->p[i];
	return m;
}

static int index_of(const char (*names)[24], int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	return -1;
}

/* ---------------------------------------------------------------- least squares */

/* Solves the n x n system a x = b in place (partial pivoting); inv, when
 * non-NULL, receives a^-1. Returns 0, or -1 when a is singular. */
static int solve(int n, double a[XFER_NPARAM][XFER_NPARAM], double *b,
		 double inv[XFER_NPARAM][XFER_NPARAM])
{
	double m[XFER_NPARAM][2 * XFER_NPARAM + 1];
	double scale = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			scale = fmax(scale, fabs(a[i][j]));
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < n; j++) {
			m[i][j] = a[i][j];
			m[i][n + j] = i == j;
		}
		m[i][2 * n] = b[i];
	}
	for (int i = 0; i < n; i++) {
		int p = i;
		for (int r = i + 1; r < n; r++)
			if (fabs(m[r][i]) > fabs(m[p][i]))
				p = r;
		if (!(fabs(m[p][i]) > 1e-12 * scale))
			return -1;
		for (int j = 0; j <= 2 * n; j++) {
			double t = m[i][j];
			m[i][j] = m[p][j];
			m[p][j] = t;
		}
		for (int r = 0; r < n; r++) {
			if (r == i)
				continue;
			double f = m[r][i] / m[i][i];
			for (int j = i; j <= 2 * n; j++)
				m[r][j] -= f * m[i][j];
		}
	}
	for (int i = 0; i < n; i++) {
		b[i] = m[i][2 * n] / m[i][i];
		for (int j = 0; inv && j < n; j++)
			inv[i][j] = m[i][n + j] / m[i][i];
	}
	return 0;
}

/* The subsets nnls tries, in order of preference: fewer parameters first,
 * then the bandwidth term, then the fixed one (an exactly determined fit
 * takes the first that meets every point: two GPUs give fixed + bytes /
 * bandwidth, one gives bytes / bandwidth). */
static const unsigned subsets[] = {
	1u << XFER_B, 1u << XFER_C, 1u << XFER_A, 1u << XFER_C | 1u << XFER_B,
	1u << XFER_A | 1u << XFER_B, 1u << XFER_C | 1u << XFER_A, 7u,
};

/* Relative least squares of rows x (terms / time) against 1 over the
 * parameters in mask, non-negative: every subset of the mask is solved and
 * the feasible one of least residual kept, a later one only when it is
 * better beyond rounding. Fills p, act, cov and s2 of col; returns 0, or -1
 * when no subset can be solved. */
static int nnls(struct xfer_col *col, const double (*x)[XFER_NPARAM], int n, unsigned mask)
{
	double best = INFINITY;
	for (size_t q = 0; q < sizeof subsets / sizeof *subsets; q++) {
		unsigned s = subsets[q];
		int idx[XFER_NPARAM], k = 0;
		double a[XFER_NPARAM][XFER_NPARAM] = {{0}}, b[XFER_NPARAM] = {0};
		double inv[XFER_NPARAM][XFER_NPARAM], rss = 0;
		if ((s & mask) != s)
			continue;
		for (int i = 0; i < XFER_NPARAM; i++)
			if (s >> i & 1)
				idx[k++] = i;
		if (k > n)
			continue;
		for (int r = 0; r < n; r++)
			for (int i = 0; i < k; i++) {
				b[i] += x[r][idx[i]];
				for (int j = 0; j < k; j++)
					a[i][j] += x[r][idx[i]] * x[r][idx[j]];
			}
		if (solve(k, a, b, inv))
			continue;
		int neg = 0;
		for (int i = 0; i < k; i++)
			neg |= b[i] < 0;
		if (neg)
			continue;
		for (int r = 0; r < n; r++) {
			double e = -1;
			for (int i = 0; i < k; i++)
				e += x[r][idx[i]] * b[i];
			rss += e * e;
		}
		if (isfinite(best) && !(rss < best - 1e-12 * (1 + best)))
			continue;
		best = rss;
		memset(col->p, 0, sizeof col->p);
		memset(col->cov, 0, sizeof col->cov);
		col->nact = k;
		for (int i = 0; i < k; i++) {
			col->p[idx[i]] = b[i];
			col->act[i] = idx[i];
			for (int j = 0; j < k; j++)
				col->cov[i][j] = inv[i][j];
		}
		col->s2 = n > k ? rss / (n - k) : 0;
	}
	return isfinite(best) ? 0 : -1;
}

/* ---------------------------------------------------------------- one fit */

/* What a fit sees: the class, its GPUs, the series in use. */
struct ctx {
	const struct calib *c;
	const struct meas_class *k;
	const struct gpu *g[CALIB_MAX_MEAS_GPUS];  /* NULL: not in the catalog */
	int kind[CALIB_MAX_MEAS_GPUS], fam[CALIB_MAX_MEAS_GPUS];
};

/* Fits column j for kind ki (x->nkinds: every GPU) over the series in use. */
static void col_fit(struct xfer_fit *x, const struct ctx *cx, int j, int ki)
{
	struct xfer_col *col = &x->col[j][ki];
	double rows[CALIB_MAX_MEAS_GPUS][XFER_NPARAM], bw0 = NAN;
	int n = 0, twobw = 0;

	memset(col, 0, sizeof *col);
	for (int pass = 0; pass < 2 && n == 0; pass++)
		for (int s = 0; s < cx->k->nseries; s++) {
			double t = cx->k->series[s].us[j];
			if (!x->use[s] || !(t > 0) || (pass == 0 && ki < x->nkinds && cx->kind[s] != ki))
				continue;
			terms(cx->k, cx->g[s], rows[n]);
			for (int i = 0; i < XFER_NPARAM; i++)
				rows[n][i] /= t;
			if (isnan(bw0))
				bw0 = cx->g[s]->bw_tbps;
			twobw |= fabs(cx->g[s]->bw_tbps / bw0 - 1) > 1e-9;
			col->kind_seen = pass == 0;
			n++;
		}
	if (n == 0)
		return;
	/* one bandwidth: time scales with it (b alone) */
	if (nnls(col, (const double (*)[XFER_NPARAM])rows, n, twobw ? 7u : 1u << XFER_B))
		return;
	col->npoints = n;
	double sum[CALIB_MAX_MEAS_GPUS] = {0};
	for (int f = 0; f < x->nfams; f++)
		col->off[f] = NAN;
	for (int s = 0; s < cx->k->nseries; s++) {
		double t = cx->k->series[s].us[j], m;
		if (!x->use[s] || !(t > 0) || !((m = curve_at(col, cx->k, cx->g[s])) > 0))
			continue;
		sum[cx->fam[s]] += log(t / m);
		col->nfam[cx->fam[s]]++;
	}
	for (int f = 0; f < x->nfams; f++)
		if (col->nfam[f])
			col->off[f] = sum[f] / col->nfam[f];
	col->ok = 1;
}

/* Every column and kind of x over its series in use. */
static void fit_all(struct xfer_fit *x, const struct ctx *cx)
{
	x->ok = 0;
	for (int j = 0; j < x->ncols; j++)
		for (int ki = 0; ki <= x->nkinds; ki++) {
			col_fit(x, cx, j, ki);
			x->ok |= x->col[j][ki].ok;
		}
}

/* The column fit that serves target g. */
static const struct xfer_col *col_for(const struct xfer_fit *x, const struct calib *c, int j,
				      const struct gpu *g)
{
	int ki = index_of(x->kinds, x->nkinds, xfer_kind(c, g));
	return &x->col[j][ki < 0 ? x->nkinds : ki];
}

/* log t_to - log t_from at column j, and the parameter variance of it. */
static int move_log(const struct xfer_fit *x, const struct ctx *cx, int j, const struct gpu *from,
		    const struct gpu *to, double *lr, double *var_p, int *seen_to, int *seen_from)
{
	const struct xfer_col *col = col_for(x, cx->c, j, to);
	double mf, mt, ff[XFER_NPARAM], ft[XFER_NPARAM], v[XFER_NPARAM];
	if (!col->ok || !((mf = curve_at(col, cx->k, from)) > 0) ||
	    !((mt = curve_at(col, cx->k, to)) > 0))
		return -1;
	int ft_i = index_of(x->fams, x->nfams, calib_family(cx->c, to->arch));
	int ff_i = index_of(x->fams, x->nfams, calib_family(cx->c, from->arch));
	double ot = ft_i >= 0 && !isnan(col->off[ft_i]) ? col->off[ft_i] : 0;
	double of = ff_i >= 0 && !isnan(col->off[ff_i]) ? col->off[ff_i] : 0;
	*seen_to = ft_i >= 0 && !isnan(col->off[ft_i]);
	*seen_from = ff_i >= 0 && !isnan(col->off[ff_i]);
	*lr = log(mt / mf) + ot - of;
	terms(cx->k, from, ff);
	terms(cx->k, to, ft);
	for (int i = 0; i < col->nact; i++)
		v[i] = ft[col->act[i]] / mt - ff[col->act[i]] / mf;
	*var_p = 0;
	for (int a = 0; a < col->nact; a++)
		for (int b = 0; b < col->nact; b++)
			*var_p += v[a] * col->cov[a][b] * v[b];
	*var_p *= col->s2;
	return 0;
}

/* ---------------------------------------------------------------- held-out errors */

struct acc {
	double se[CALIB_MAX_RANGES];
	int n[CALIB_MAX_RANGES];
};

/* Predicts series `target` (held out of h) from every series h uses, at
 * every column, into a. */
static void cv_score(const struct xfer_fit *h, const struct ctx *cx, int target, struct acc *a)
{
	const struct meas_series *st = &cx->k->series[target];
	for (int j = 0; j < h->ncols; j++) {
		int r = xfer_range_of(cx->c, h->m[j]);
		if (!(st->us[j] > 0))
			continue;
		for (int s = 0; s < cx->k->nseries; s++) {
			double lr, vp, t = cx->k->series[s].us[j];
			int st_seen, sf_seen;
			if (!h->use[s] || !(t > 0) ||
			    move_log(h, cx, j, cx->g[s], cx->g[target], &lr, &vp, &st_seen, &sf_seen))
				continue;
			double e = log(t) + lr - log(st->us[j]);
			a->se[r] += e * e;
			a->n[r]++;
		}
	}
}

/* The held-out errors of x: each series of a kind left out in turn, each
 * family left out whole. h is scratch. */
static void cross_validate(struct xfer_fit *x, struct xfer_fit *h, const struct ctx *cx)
{
	struct acc seen[XFER_MAX_KINDS], unseen, nokind;
	memset(seen, 0, sizeof seen);
	memset(&unseen, 0, sizeof unseen);
	memset(&nokind, 0, sizeof nokind);
	for (int s = 0; s < cx->k->nseries; s++) {
		if (!x->use[s])
			continue;
		/* with its twins: their tables say the same thing twice */
		*h = *x;
		for (int t = 0; t < cx->k->nseries; t++)
			if (cx->g[t] && xfer_twins(cx->g[s], cx->g[t]))
				h->use[t] = 0;
		fit_all(h, cx);
		cv_score(h, cx, s, &seen[cx->kind[s]]);
	}
	/* each memory kind left out whole: a target of a kind never measured */
	for (int ki = 0; ki < x->nkinds && x->nkinds > 1; ki++) {
		*h = *x;
		for (int s = 0; s < cx->k->nseries; s++)
			if (cx->kind[s] == ki)
				h->use[s] = 0;
		fit_all(h, cx);
		for (int s = 0; s < cx->k->nseries; s++)
			if (x->use[s] && cx->kind[s] == ki)
				cv_score(h, cx, s, &nokind);
	}
	for (int f = 0; f < x->nfams; f++) {
		*h = *x;
		for (int s = 0; s < cx->k->nseries; s++)
			if (cx->fam[s] == f)
				h->use[s] = 0;
		fit_all(h, cx);
		for (int s = 0; s < cx->k->nseries; s++)
			if (x->use[s] && cx->fam[s] == f)
				cv_score(h, cx, s, &unseen);
	}
	for (int r = 0; r < CALIB_MAX_RANGES; r++) {
		x->cv_unseen[r] = unseen.n[r] ? unseen.se[r] / unseen.n[r] : NAN;
		x->cv_nokind[r] = nokind.n[r] ? nokind.se[r] / nokind.n[r] : NAN;
		for (int ki = 0; ki < XFER_MAX_KINDS; ki++)
			x->cv_seen[r][ki] = ki < x->nkinds && seen[ki].n[r]
						    ? seen[ki].se[r] / seen[ki].n[r]
						    : NAN;
	}
}

/* ---------------------------------------------------------------- interface */

int xfer_twins(const struct gpu *a, const struct gpu *b)
{
	return !strcmp(a->arch, b->arch) && !strcmp(a->memory, b->memory) &&
	       fabs(a->bw_tbps / b->bw_tbps - 1) < 1e-9;
}

/* Whether h leaves g out. */
static int held(const struct calib *c, const struct xfer_hold *h, const struct gpu *g)
{
	const struct gpu *t = h && h->gpu ? calib_gpu(c, h->gpu) : NULL;
	if (!h)
		return 0;
	return (h->gpu && (!strcmp(h->gpu, g->id) || (t && xfer_twins(t, g)))) ||
	       (h->kind && !strcmp(h->kind, xfer_kind(c, g))) ||
	       (h->fam && !strcmp(h->fam, calib_family(c, g->arch)));
}

/* Fills cx and x's series, kinds and families. */
static void setup(struct xfer_fit *x, struct ctx *cx, const struct calib *c,
		  const struct meas_class *k, const struct xfer_hold *h)
{
	memset(x, 0, sizeof *x);
	memset(cx, 0, sizeof *cx);
	cx->c = c;
	cx->k = k;
	x->ncols = k->nm;
	memcpy(x->m, k->m, sizeof x->m);
	for (int s = 0; s < k->nseries; s++) {
		const struct gpu *g = calib_gpu(c, k->series[s].gpu);
		cx->g[s] = g;
		if (!g || held(c, h, g) || !(xfer_compute(k, g) > 0))
			continue;
		const char *kind = xfer_kind(c, g), *fam = calib_family(c, g->arch);
		int ki = index_of(x->kinds, x->nkinds, kind);
		int fi = index_of(x->fams, x->nfams, fam);
		if (ki < 0 && x->nkinds == XFER_MAX_KINDS)
			continue;
		if (ki < 0) {
			ki = x->nkinds++;
			snprintf(x->kinds[ki], sizeof x->kinds[ki], "%s", kind);
		}
		if (fi < 0) {
			fi = x->nfams++;
			snprintf(x->fams[fi], sizeof x->fams[fi], "%s", fam);
		}
		cx->kind[s] = ki;
		cx->fam[s] = fi;
		x->use[s] = 1;
		x->ngpus++;
	}
}

int xfer_fit(struct xfer_fit *x, const struct calib *c, const struct meas_class *k,
	     const char *exclude)
{
	struct xfer_hold h = {.gpu = exclude};
	return xfer_fit_hold(x, c, k, exclude ? &h : NULL);
}

int xfer_fit_hold(struct xfer_fit *x, const struct calib *c, const struct meas_class *k,
		  const struct xfer_hold *h)
{
	struct ctx cx;
	setup(x, &cx, c, k, h);
	fit_all(x, &cx);
	for (int r = 0; r < CALIB_MAX_RANGES; r++) {
		x->cv_unseen[r] = x->cv_nokind[r] = NAN;
		for (int ki = 0; ki < XFER_MAX_KINDS; ki++)
			x->cv_seen[r][ki] = NAN;
	}
	if (!x->ok)
		return 0;
	struct xfer_fit *scratch = malloc(sizeof *scratch);
	if (!scratch)
		return err_nomem();
	cross_validate(x, scratch, &cx);
	free(scratch);
	return 0;
}

int xfer_predict(const struct xfer_fit *x, const struct calib *c, const struct meas_class *k,
		 const struct gpu *from, const struct gpu *to, int j, double *lf, double *sig,
		 int *seen)
{
	struct ctx cx = {.c = c, .k = k};
	double lr, vp, cv;
	int seen_from;
	if (j < 0 || j >= x->ncols || move_log(x, &cx, j, from, to, &lr, &vp, seen, &seen_from))
		return -1;
	int r = xfer_range_of(c, x->m[j]);
	int ki = index_of(x->kinds, x->nkinds, xfer_kind(c, to));
	cv = *seen && ki >= 0 ? x->cv_seen[r][ki] : x->cv_unseen[r];
	if (isnan(cv))
		cv = x->cv_unseen[r];
	/* the target's memory kind never measured here: what that cost held out */
	if (ki < 0 && !isnan(x->cv_nokind[r]))
		cv = x->cv_nokind[r];
	/* a source whose family was never measured: its offset is unknown too */
	if (!seen_from && !isnan(x->cv_unseen[r]))
		cv += x->cv_unseen[r];
	*seen = (*seen ? XFER_SEEN_TO : 0) | (seen_from ? XFER_SEEN_FROM : 0);
	*lf = lr + log(to->bw_tbps / from->bw_tbps);
	*sig = sqrt((isnan(cv) ? 0 : cv) + vp + c->xfer_sigma_floor * c->xfer_sigma_floor);
	return isnan(cv) ? -1 : 0;
}

/* ---------------------------------------------------------------- the calibration's entries */

/* The curve of one pair from x, sorted by M, columns at the same M
 * averaged (tonight's fleet columns repeat the tables' M); sigma likewise
 * into sig. The columns that speak for the pair are those where both GPUs'
 * families were measured; without any, every column (the curve's physics
 * alone across families). */
static void xcurve_fill(struct xfer_curve *cv, double *sig, const struct xfer_fit *x,
			const struct calib *c, const struct meas_class *k, const struct gpu *from,
			const struct gpu *to)
{
	int cnt[CALIB_MAX_XCURVE] = {0}, both = 0;
	double lf, sg;
	int seen;
	for (int j = 0; j < x->ncols; j++)
		both |= !xfer_predict(x, c, k, from, to, j, &lf, &sg, &seen) &&
			seen == (XFER_SEEN_TO | XFER_SEEN_FROM);
	cv->n = 0;
	for (int j = 0; j < x->ncols; j++) {
		int at = 0;
		if (xfer_predict(x, c, k, from, to, j, &lf, &sg, &seen) ||
		    (both && seen != (XFER_SEEN_TO | XFER_SEEN_FROM)))
			continue;
		while (at < cv->n && cv->m[at] < x->m[j])
			at++;
		if (at == cv->n || cv->m[at] != x->m[j]) {
			if (cv->n == CALIB_MAX_XCURVE)
				continue;
			memmove(&cv->m[at + 1], &cv->m[at], (size_t)(cv->n - at) * sizeof *cv->m);
			memmove(&cv->lf[at + 1], &cv->lf[at], (size_t)(cv->n - at) * sizeof *cv->lf);
			memmove(&sig[at + 1], &sig[at], (size_t)(cv->n - at) * sizeof *sig);
			memmove(&cnt[at + 1], &cnt[at], (size_t)(cv->n - at) * sizeof *cnt);
			cv->m[at] = x->m[j];
			cv->lf[at] = sig[at] = 0;
			cnt[at] = 0;
			cv->n++;
		}
		cv->lf[at] += lf;
		sig[at] += sg * sg;
		cnt[at]++;
	}
	for (int i = 0; i < cv->n; i++) {
		cv->lf[i] /= cnt[i];
		sig[i] = sqrt(sig[i] / cnt[i]);
	}
}

/* The RMS of y over the curve's points in e's range (none inside: y at
 * m_lo). */
static double range_rms(const struct xfer_curve *cv, const double *y, const struct xfer_entry *e)
{
	double ss = 0;
	int n = 0;
	for (int i = 0; i < cv->n; i++)
		if (cv->m[i] >= e->m_lo && cv->m[i] <= e->m_hi)
			ss += y[i] * y[i], n++;
	return n ? sqrt(ss / n) : fabs(calib_xcurve_at(cv, y, e->m_lo));
}

/* Entry e's distribution: the curve's factor at its m_lo and the RMS sigma
 * of the curve's points in its range (none inside: at m_lo). */
static void xfer_dist(const struct calib *c, struct xfer_entry *e, const struct xfer_curve *cv,
		      const double *sig, int ngpus, const char *cls)
{
	double s = range_rms(cv, sig, e);
	memset(&e->d, 0, sizeof e->d);
	e->d.kind = DIST_LOGNORMAL;
	e->d.point = 1.0; /* the seed's perfect scaling */
	e->d.min = e->d.max = e->d.mode = e->d.mean = e->d.sd = NAN;
	e->d.median = exp(calib_xcurve_at(cv, cv->lf, e->m_lo));
	e->d.sigma = s > 1e-6 ? s : 1e-6;
	snprintf(e->d.unit, sizeof e->d.unit, "factor on (from bw / to bw) at M=%g, %s", e->m_lo,
		 cls);
	char src[2 * CALIB_SOURCE_LEN];
	if (e->nimpl > 1)
		snprintf(src, sizeof src,
			 "calibrated (ximpl.h): %d implementations (%d builds) of %s, shared law, "
			 "bias %.1f%% corrected, implementation gap %.0f%% (builds held out); %s",
			 e->nimpl, e->nbuild, cls, 100 * e->bias, 100 * e->gap_sigma, c->meas.source);
	else
		snprintf(src, sizeof src,
			 "calibrated (xfer.h) from %d measured GPUs of class %s: curve c + a/compute + "
			 "b/bandwidth per M, %s; sigma from held-out GPUs%s; %s",
			 ngpus, cls,
			 e->family_gpus ? "the target family's offset measured"
					: "the target family never measured (no offset)",
			 e->family_gpus ? "" : " and families", c->meas.source);
	memcpy(e->d.source, src, sizeof e->d.source - 1);
	e->d.source[sizeof e->d.source - 1] = '\0';
}

/* Whether tonight's series of class k measured both GPUs at M; lf: their
 * log factor on bandwidth scaling. */
static int tonight_pair(const struct meas_class *k, const struct gpu *from, const struct gpu *to,
			double M, double *lf)
{
	for (int j = 0; j < k->nm; j++) {
		double tf = NAN, tt = NAN;
		for (int s = 0; s < k->nseries && k->m[j] == M; s++)
			if (k->series[s].prov == PROV_TONIGHT && k->series[s].us[j] > 0) {
				if (!strcmp(k->series[s].gpu, from->id))
					tf = k->series[s].us[j];
				if (!strcmp(k->series[s].gpu, to->id))
					tt = k->series[s].us[j];
			}
		if (tf > 0 && tt > 0) {
			*lf = log(tt / tf * to->bw_tbps / from->bw_tbps);
			return 1;
		}
	}
	return 0;
}

/* The least M of class k above lo (INFINITY: none); its columns are not
 * sorted (tonight's follow the tables'). */
static double next_m(const struct meas_class *k, double lo)
{
	double m = INFINITY;
	for (int j = 0; j < k->nm; j++)
		if (k->m[j] > lo && k->m[j] < m)
			m = k->m[j];
	return m;
}

/* The curve of one pair from the implementations of s (two or more): the
 * shared law corrected by the systematic bias, sigma with the gap in, at
 * the M's of class k; gap and bias per point of the curve. Where tonight's
 * sweep measured both GPUs with the project's own kernel, that ratio: no
 * other implementation stands between them. */
static void xcurve_impl(struct xfer_curve *cv, double *sig, double *gap, double *bias,
			const struct ximpl *s, const struct calib *c, const struct meas_class *k,
			const struct gpu *from, const struct gpu *to)
{
	cv->n = 0;
	for (double M = next_m(k, 0); isfinite(M) && cv->n < CALIB_MAX_XCURVE; M = next_m(k, M)) {
		double lf, sg;
		if (tonight_pair(k, from, to, M, &lf)) {
			sg = c->xfer_sigma_floor;
			gap[cv->n] = bias[cv->n] = 0;
		} else if (ximpl_predict(s, c, 0, &s->gap, from, to, M, &lf, &sg, &gap[cv->n],
					 &bias[cv->n]))
			continue;
		cv->m[cv->n] = M;
		cv->lf[cv->n] = lf;
		sig[cv->n++] = sg;
	}
}

/* The entries of one target t (every range) from x (or, with two or more
 * implementations, s), or the prior. */
static void xfer_target(struct xfer_table *xt, const struct calib *c, const struct xfer_fit *x, const struct ximpl *s,
			const struct meas_class *k, const struct gpu *ref, const struct gpu *t)
{
	struct xfer_curve *cv = &xt->xcurve[xt->nxcurve];
	double sig[CALIB_MAX_XCURVE], gap[CALIB_MAX_XCURVE] = {0}, bias[CALIB_MAX_XCURVE] = {0};
	cv->n = 0;
	if (s && s->n > 1)
		xcurve_impl(cv, sig, gap, bias, s, c, k, ref, t);
	else if (x && x->ok)
		xcurve_fill(cv, sig, x, c, k, ref, t);
	for (int r = 0; r < c->nranges; r++) {
		struct xfer_entry *e = &xt->xfer[xt->nxfer];
		snprintf(e->from, sizeof e->from, "%s", ref->id);
		snprintf(e->to, sizeof e->to, "%s", t->id);
		snprintf(e->range, sizeof e->range, "%s", c->range_name[r]);
		e->m_lo = c->range_lo[r];
		e->m_hi = c->range_hi[r];
		e->family_gpus = 0;
		e->curve = cv->n ? xt->nxcurve : -1;
		e->nimpl = s && cv->n ? s->n : 0;
		e->nbuild = s && cv->n ? s->nbuild : 0;
		e->gap_sigma = cv->n ? range_rms(cv, gap, e) : 0;
		e->bias = cv->n ? range_rms(cv, bias, e) : 0;
		if (cv->n) {
			for (int s = 0; s < k->nseries; s++) {
				const struct gpu *g = calib_gpu(c, k->series[s].gpu);
				e->family_gpus += x->use[s] && g &&
						  !strcmp(calib_family(c, g->arch), calib_family(c, t->arch));
			}
			xfer_dist(c, e, cv, sig, x->ngpus, k->name);
		} else
			e->d = c->xfer_prior;
		xt->nxfer++;
	}
	xt->nxcurve += cv->n > 0;
}

/* The class named name in ms, or NULL. */
static const struct meas_class *class_in(const struct measured *ms, const char *name)
{
	for (int i = 0; i < ms->nclasses; i++)
		if (!strcmp(ms->cls[i].name, name))
			return &ms->cls[i];
	return NULL;
}

int xfer_build(const struct calib *c, struct xfer_table *t)
{
	return xfer_build_for(c, c->moe_ref.gpu, &c->meas, t);
}

int xfer_build_for(const struct calib *c, const char *ref_id, const struct measured *ms,
		   struct xfer_table *t)
{
	const struct gpu *ref = calib_gpu(c, ref_id);
	const struct meas_class *k = class_in(ms, c->xfer_class);
	struct xfer_fit *x = NULL;
	struct ximpl s = {0};
	int rc = 0;

	if (!ref)
		return err_set(DDT_EINPUT, "moe_reference.gpu: '%s' is not in the GPU catalog",
			       ref_id);
	if ((c->ngpus - 1) * (size_t)c->nranges > CALIB_MAX_XFER)
		return err_set(DDT_EINPUT, "moe_transfer: %zu GPUs x %d ranges exceed %d factors; "
			       "use fewer ranges", c->ngpus, c->nranges, CALIB_MAX_XFER);
	if (k && (!(x = malloc(sizeof *x)) || (rc = xfer_fit(x, c, k, NULL)) != 0 ||
		  (rc = ximpl_init(&s, c, ms, k->name)) != 0)) {
		free(x);
		ximpl_free(&s);
		return rc ? rc : err_nomem();
	}
	t->nxfer = t->nxcurve = 0;
	for (size_t i = 0; i < c->ngpus; i++)
		if (&c->gpus[i] != ref)
			xfer_target(t, c, x, &s, k, ref, &c->gpus[i]);
	snprintf(t->ref, sizeof t->ref, "%s", ref->id);
	free(x);
	ximpl_free(&s);
	return 0;
}
