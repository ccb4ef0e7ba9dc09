/* ximpl.c - the transfer across implementations (ximpl.h): the shared law
 * and the implementation gap sized by leaving implementations out. */
#include "ximpl.h"

#include "err.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double ximpl_t_scale(int nimpl)
{
	return nimpl > 1 ? gsl_cdf_tdist_Pinv(0.95, nimpl - 1) / gsl_cdf_ugaussian_Pinv(0.95) : 1;
}

int ximpl_bucket(const struct calib *c, const struct gpu *from, const struct gpu *to)
{
	int cross = strcmp(xfer_kind(c, from), xfer_kind(c, to)) != 0;
	return 2 * cross + (to->bw_tbps < from->bw_tbps);
}

/* Whether class k is an implementation of cls. */
static int impl_of(const struct meas_class *k, const char *cls)
{
	return !strcmp(k->name, cls) || !strcmp(k->impl_of, cls);
}

/* Whether classes a and b are of one build: engine and version, the first
 * two words of impl (a class with none is a build of its own). */
static size_t build_len(const char *impl)
{
	size_t n = strcspn(impl, " ");
	return impl[n] ? n + 1 + strcspn(impl + n + 1, " ") : n;
}

static int same_build(const struct meas_class *a, const struct meas_class *b)
{
	size_t n = build_len(a->impl);
	return a == b || (n && n == build_len(b->impl) && !strncmp(a->impl, b->impl, n));
}

unsigned ximpl_build_mask(const struct ximpl *s, int i)
{
	unsigned m = 0;
	for (int j = 0; j < s->n; j++)
		m |= (unsigned)(s->build[j] == s->build[i]) << j;
	return m;
}

/* Numbers the builds of s in the order they first appear. */
static void number_builds(struct ximpl *s)
{
	s->nbuild = 0;
	for (int i = 0; i < s->n; i++) {
		int j = 0;
		while (j < i && !same_build(s->k[j], s->k[i]))
			j++;
		s->build[i] = j < i ? s->build[j] : s->nbuild++;
	}
}

int ximpl_init(struct ximpl *s, const struct calib *c, const struct measured *ms,
	       const char *cls)
{
	int rc;
	memset(s, 0, sizeof *s);
	for (int i = 0; i < ms->nclasses && s->n < XIMPL_MAX; i++) {
		const struct meas_class *k = &ms->cls[i];
		if (!impl_of(k, cls))
			continue;
		if (!(s->x[s->n] = malloc(sizeof *s->x[s->n])))
			return err_nomem();
		s->k[s->n] = k;
		if ((rc = xfer_fit(s->x[s->n++], c, k, NULL)) != 0)
			return rc;
	}
	number_builds(s);
	ximpl_gap_est(&s->gap, s, c, 0);
	return 0;
}

void ximpl_free(struct ximpl *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->x[i]);
	memset(s, 0, sizeof *s);
}

/* Implementation i's factor from -> to at M: the measured ratio where it
 * measured both GPUs there (sigma: the calibration's floor), else its fit's
 * prediction (xfer.h) with its held-out GPU error. Returns 0 or -1. */
static int impl_at(const struct ximpl *s, int i, const struct calib *c, const struct gpu *from,
		   const struct gpu *to, double M, double *lf, double *sig)
{
	const struct meas_class *k = s->k[i];
	const struct meas_series *sf = calib_series(k, from->id), *st = calib_series(k, to->id);
	int seen;
	for (int j = 0; j < k->nm; j++) {
		if (k->m[j] != M)
			continue;
		if (sf && st && sf->us[j] > 0 && st->us[j] > 0) {
			*lf = log(st->us[j] / sf->us[j] * to->bw_tbps / from->bw_tbps);
			*sig = c->xfer_sigma_floor;
			return 0;
		}
		if (s->x[i]->ok && !xfer_predict(s->x[i], c, k, from, to, j, lf, sig, &seen))
			return 0;
	}
	return -1;
}

/* Whether classes a and b are of one engine (the first word of impl). */
static int same_engine(const struct meas_class *a, const struct meas_class *b)
{
	size_t n = strcspn(a->impl, " ");
	return n == strcspn(b->impl, " ") && !strncmp(a->impl, b->impl, n);
}

int ximpl_shared(const struct ximpl *s, const struct calib *c, unsigned skip,
		 const struct gpu *from, const struct gpu *to, double M, double *lf, double *sig)
{
	double l[XIMPL_MAX], g[XIMPL_MAX], sl = 0, ss = 0, sw = 0;
	int ok[XIMPL_MAX] = {0};
	for (int i = 0; i < s->n; i++)
		ok[i] = !(skip >> i & 1) && !impl_at(s, i, c, from, to, M, &l[i], &g[i]);
	/* each engine weighs one: its builds and layouts share its kernels */
	for (int i = 0; i < s->n; i++) {
		int peers = 0;
		for (int j = 0; j < s->n && ok[i]; j++)
			peers += ok[j] && same_engine(s->k[i], s->k[j]);
		if (!ok[i])
			continue;
		sl += l[i] / peers;
		ss += g[i] * g[i] / peers;
		sw += 1.0 / peers;
	}
	if (!(sw > 0))
		return -1;
	*lf = sl / sw;
	*sig = sqrt(ss / sw);
	return 0;
}

/* Errors of one implementation's pairs, per bucket (M index of gaps, nm:
 * every M; pair kind): sum, sum of squares, count. */
struct gacc {
	double se[CALIB_MAX_MEAS_M + 1][XIMPL_NQ], se2[CALIB_MAX_MEAS_M + 1][XIMPL_NQ];
	int n[CALIB_MAX_MEAS_M + 1][XIMPL_NQ];
};

/* The bucket of gap at M exactly, or -1. */
static int m_index(const struct ximpl_gaps *gap, double M)
{
	for (int i = 0; i < gap->nm; i++)
		if (gap->m[i] == M)
			return i;
	return -1;
}

/* Implementation j's measured pairs predicted by the law without skip and
 * j's build, added to a. */
static void gap_score(struct gacc *a, const struct ximpl_gaps *gap, const struct ximpl *s,
		      const struct calib *c, unsigned skip, int j)
{
	const struct meas_class *k = s->k[j];
	skip |= ximpl_build_mask(s, j);
	for (int ia = 0; ia < k->nseries; ia++)
		for (int ib = 0; ib < k->nseries; ib++) {
			const struct gpu *ga = calib_gpu(c, k->series[ia].gpu);
			const struct gpu *gb = calib_gpu(c, k->series[ib].gpu);
			if (ia == ib || !ga || !gb || xfer_twins(ga, gb))
				continue;
			int q = ximpl_bucket(c, ga, gb);
			for (int m = 0; m < k->nm; m++) {
				double ta = k->series[ia].us[m], tb = k->series[ib].us[m], lf, sg;
				if (!(ta > 0) || !(tb > 0) ||
				    ximpl_shared(s, c, skip, ga, gb, k->m[m], &lf, &sg))
					continue;
				double e = log(ta * ga->bw_tbps / gb->bw_tbps / tb) + lf;
				int r[2] = {m_index(gap, k->m[m]), gap->nm};
				for (int i = 0; i < 2; i++) {
					a->se[r[i]][q] += e;
					a->se2[r[i]][q] += e * e;
					a->n[r[i]][q]++;
				}
			}
		}
}

/* Bucket (r, q) of g from the builds' sums a[na]: one mean per build. */
static void gap_bucket(struct ximpl_gap *g, const struct gacc *a, int na, int r, int q)
{
	double mu[XIMPL_MAX], sm = 0, sv = 0, ss = 0;
	memset(g, 0, sizeof *g);
	for (int j = 0; j < na; j++)
		if (a[j].n[r][q]) {
			mu[j] = a[j].se[r][q] / a[j].n[r][q];
			sm += mu[j];
			g->nimpl++;
			g->n += a[j].n[r][q];
		}
	if (!g->nimpl) {
		g->bias = g->var = g->se2 = NAN;
		return;
	}
	g->bias = sm / g->nimpl;
	for (int j = 0; j < na; j++)
		if (a[j].n[r][q]) {
			double d = mu[j] - g->bias;
			/* sum (e - b)^2 = sum e^2 - 2 b sum e + n b^2 */
			ss += a[j].se2[r][q] - 2 * g->bias * a[j].se[r][q] +
			      a[j].n[r][q] * g->bias * g->bias;
			sv += d * d;
		}
	g->var = ss / g->n;
	g->se2 = g->nimpl > 1 ? sv / (g->nimpl - 1) / g->nimpl : g->var;
}

void ximpl_gap_est(struct ximpl_gaps *gap, const struct ximpl *s, const struct calib *c,
		   unsigned skip)
{
	/* a[b]: build b's errors, every layout of it scored with all of it out */
	struct gacc *a = calloc((size_t)(s->nbuild ? s->nbuild : 1), sizeof *a);
	memset(gap, 0, sizeof *gap);
	for (int i = 0; i < s->n; i++)
		for (int j = 0; j < s->k[i]->nm; j++)
			if (m_index(gap, s->k[i]->m[j]) < 0 && gap->nm < CALIB_MAX_MEAS_M)
				gap->m[gap->nm++] = s->k[i]->m[j];
	for (int j = 0; a && j < s->n; j++)
		if (!(skip >> j & 1))
			gap_score(&a[s->build[j]], gap, s, c, skip, j);
	for (int r = 0; r <= gap->nm; r++)
		for (int q = 0; q < XIMPL_NQ; q++) {
			if (a)
				gap_bucket(&gap->g[r][q], a, s->nbuild, r, q);
			else
				gap->g[r][q].bias = NAN;
		}
	free(a);
}

/* Whether bucket g has enough to speak. */
static int gap_ok(const struct ximpl_gap *g)
{
	return g->nimpl >= 2 && g->n >= XIMPL_MIN_POINTS && !isnan(g->bias);
}

const struct ximpl_gap *ximpl_gap_at(const struct ximpl_gaps *gap, const struct calib *c,
				     double M, const struct gpu *from, const struct gpu *to)
{
	int q = ximpl_bucket(c, from, to), near = -1;
	for (int i = 0; i < gap->nm; i++)
		if (near < 0 || fabs(log(gap->m[i] / M)) < fabs(log(gap->m[near] / M)))
			near = i;
	/* then the pair kind over every M, then either direction of it */
	const struct ximpl_gap *order[3] = {near >= 0 ? &gap->g[near][q] : &gap->g[gap->nm][q],
					    &gap->g[gap->nm][q], &gap->g[gap->nm][q ^ 1]};
	for (int i = 0; i < 3; i++)
		if (gap_ok(order[i]))
			return order[i];
	return NULL;
}

int ximpl_predict(const struct ximpl *s, const struct calib *c, unsigned skip,
		  const struct ximpl_gaps *gap, const struct gpu *from, const struct gpu *to,
		  double M, double *lf, double *sig, double *gap_sig, double *bias)
{
	double sg;
	if (ximpl_shared(s, c, skip, from, to, M, lf, &sg))
		return -1;
	const struct ximpl_gap *g = ximpl_gap_at(gap, c, M, from, to);
	/* corrected only where systematic: beyond twice its own doubt */
	*bias = g && fabs(g->bias) > XIMPL_BIAS_Z * sqrt(g->se2) ? g->bias : 0;
	/* a new build is one more draw from a spread seen in n_J of
	 * them: the predictive band of Student's t with n_J - 1 degrees of
	 * freedom, as a lognormal of the same p5-p95 */
	*gap_sig = g ? sqrt(g->var + g->se2) * ximpl_t_scale(g->nimpl) : 0;
	*lf -= *bias;
	*sig = sqrt(sg * sg + *gap_sig * *gap_sig);
	return 0;
}
