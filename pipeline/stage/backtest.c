/* backtest.c - the cross-GPU backtest of the transfer calibration (backtest.h). */
#include "backtest.h"

#include "err.h"
#include "sort.h"
#include "xfer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* z of the 95th percentile of the standard normal */
#define Z95 1.6448536269514722

/* Median of a[n] (sorts it); NaN for n = 0. */
static double median(double *a, int n)
{
	if (n == 0)
		return NAN;
	qsort(a, (size_t)n, sizeof *a, sort_cmp_double);
	return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

/* One compared point: its class, its target's family, |error|, inside. */
struct pt {
	int cls;
	char fam[24];
	double err;
	int inside;
};

struct pts {
	struct pt *v;
	size_t n, cap;
};

static int pts_add(struct pts *a, int cls, const char *fam, double err, int inside)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 256;
		struct pt *v = realloc(a->v, cap * sizeof *v);
		if (!v)
			return err_nomem();
		a->v = v;
		a->cap = cap;
	}
	struct pt *q = &a->v[a->n++];
	q->cls = cls;
	snprintf(q->fam, sizeof q->fam, "%s", fam);
	q->err = err;
	q->inside = inside;
	return 0;
}

/* One pair of class k: A's series moved onto B with x (calibrated without
 * B). Each point goes to all. */
static int pair_run(struct project_xback *xb, const struct calib *c, int ci,
		    const struct meas_class *k, const struct xfer_fit *x,
		    const struct meas_series *sa, const struct meas_series *sb, struct pts *all)
{
	const struct gpu *ga = calib_gpu(c, sa->gpu), *gb = calib_gpu(c, sb->gpu);
	const char *fam = calib_family(c, gb->arch);
	double errs[CALIB_MAX_MEAS_M], max = 0;
	int inside = 0, rc;
	memset(xb, 0, sizeof *xb);
	snprintf(xb->cls, sizeof xb->cls, "%s", k->name);
	snprintf(xb->from, sizeof xb->from, "%s", sa->gpu);
	snprintf(xb->to, sizeof xb->to, "%s", sb->gpu);
	for (int j = 0; j < k->nm; j++) {
		double lf, sig;
		int seen;
		if (!(sa->us[j] > 0) || !(sb->us[j] > 0) ||
		    xfer_predict(x, c, k, ga, gb, j, &lf, &sig, &seen))
			continue;
		double p50 = sa->us[j] * ga->bw_tbps / gb->bw_tbps * exp(lf);
		int in = sb->us[j] >= p50 * exp(-Z95 * sig) && sb->us[j] <= p50 * exp(Z95 * sig);
		double e = fabs(p50 / sb->us[j] - 1);
		if ((rc = pts_add(all, ci, fam, e, in)) != 0)
			return rc;
		inside += in;
		errs[xb->n++] = e;
		max = fmax(max, e);
	}
	xb->cover_pct = xb->n ? 100.0 * inside / xb->n : NAN;
	xb->max_err_pct = 100 * max;
	xb->med_err_pct = 100 * median(errs, xb->n);
	return 0;
}

/* Appends the pooled figures of (class ci, family fam) from all to p->xsum
 * (ci -1, fam "": every one); nothing when no point matches. */
static int summarize(struct projection *p, const struct calib *c, const struct pts *all, int ci,
		     const char *fam, double *scratch)
{
	int n = 0, in = 0;
	for (size_t i = 0; i < all->n; i++)
		if ((ci < 0 || all->v[i].cls == ci) && (!fam[0] || !strcmp(all->v[i].fam, fam))) {
			scratch[n++] = all->v[i].err;
			in += all->v[i].inside;
		}
	if (!n)
		return 0;
	struct project_xsum *s = realloc(p->xsum, (p->nxsum + 1) * sizeof *s);
	if (!s)
		return err_nomem();
	p->xsum = s;
	s = &p->xsum[p->nxsum++];
	snprintf(s->cls, sizeof s->cls, "%s", ci < 0 ? "" : c->meas.cls[ci].name);
	snprintf(s->fam, sizeof s->fam, "%s", fam);
	s->n = n;
	s->cover_pct = 100.0 * in / n;
	s->med_err_pct = 100 * median(scratch, n);
	return 0;
}

/* Every summary: per class and target family (in the order families first
 * appear), per class, every class. */
static int summaries(struct projection *p, const struct calib *c, const struct pts *all)
{
	double *scratch = malloc((all->n ? all->n : 1) * sizeof *scratch);
	int rc = scratch ? 0 : err_nomem();
	for (int ci = 0; ci < c->meas.nclasses && !rc; ci++) {
		for (size_t i = 0; i < all->n && !rc; i++) {
			int first = all->v[i].cls == ci;
			for (size_t j = 0; j < i && first; j++)
				first = !(all->v[j].cls == ci && !strcmp(all->v[j].fam, all->v[i].fam));
			if (first)
				rc = summarize(p, c, all, ci, all->v[i].fam, scratch);
		}
		rc = rc ? rc : summarize(p, c, all, ci, "", scratch);
	}
	rc = rc ? rc : summarize(p, c, all, -1, "", scratch);
	free(scratch);
	return rc;
}

/* Every ordered pair of class ci with its target held out. */
static int class_run(struct projection *p, const struct calib *c, int ci, struct xfer_fit *x,
		     struct pts *all)
{
	const struct meas_class *k = &c->meas.cls[ci];
	int rc;
	for (int b = 0; b < k->nseries; b++) {
		if (!calib_gpu(c, k->series[b].gpu))
			continue;
		if ((rc = xfer_fit(x, c, k, k->series[b].gpu)) != 0)
			return rc;
		for (int a = 0; a < k->nseries && x->ok; a++) {
			if (a == b || !calib_gpu(c, k->series[a].gpu))
				continue;
			struct project_xback *xb = &p->xback[p->nxback];
			if ((rc = pair_run(xb, c, ci, k, x, &k->series[a], &k->series[b], all)) != 0)
				return rc;
			p->nxback += xb->n > 0;
		}
	}
	return 0;
}

/* Each row's figures: the pair (reference GPU -> the row's target) of the
 * transfer's class. */
static void rows_xfer(struct projection *p, const struct calib *c)
{
	for (size_t r = 0; r < p->nrows; r++) {
		struct project_row *row = &p->rows[r];
		row->xfer_cover_pct = row->xfer_err_pct = NAN;
		for (size_t j = 0; j < p->nxback; j++) {
			const struct project_xback *x = &p->xback[j];
			if (!strcmp(x->cls, c->xfer_class) && !strcmp(x->from, c->moe_ref.gpu) &&
			    !strcmp(x->to, row->target)) {
				row->xfer_cover_pct = x->cover_pct;
				row->xfer_err_pct = x->med_err_pct;
			}
		}
	}
}

int backtest_xgpu(struct projection *p, const struct calib *c)
{
	size_t cap = 0;
	struct xfer_fit *x = malloc(sizeof *x);
	struct pts all = {0};
	int rc = 0;

	free(p->xback);
	free(p->xsum);
	p->xback = NULL;
	p->xsum = NULL;
	p->nxback = p->nxsum = 0;
	for (int i = 0; i < c->meas.nclasses; i++)
		cap += (size_t)c->meas.cls[i].nseries * c->meas.cls[i].nseries;
	p->xback = calloc(cap ? cap : 1, sizeof *p->xback);
	if (!x || !p->xback) {
		rc = err_nomem();
		goto done;
	}
	for (int i = 0; i < c->meas.nclasses && !rc; i++)
		rc = class_run(p, c, i, x, &all);
	if (rc || (rc = summaries(p, c, &all)) != 0)
		goto done;
	backtest_pooled(p, "", "", &p->xback_n, &p->xback_cover_pct, &p->xback_err_pct);
	rows_xfer(p, c);
done:
	free(all.v);
	free(x);
	return rc;
}

void backtest_pooled(const struct projection *p, const char *cls, const char *fam, int *n,
		     double *cover_pct, double *err_pct)
{
	*n = 0;
	*cover_pct = *err_pct = NAN;
	for (size_t i = 0; i < p->nxsum; i++)
		if (!strcmp(p->xsum[i].cls, cls) && !strcmp(p->xsum[i].fam, fam)) {
			*n = p->xsum[i].n;
			*cover_pct = p->xsum[i].cover_pct;
			*err_pct = p->xsum[i].med_err_pct;
		}
}

void backtest_write_text(const struct projection *p, FILE *fp)
{
	fprintf(fp, "cross-GPU backtest: each GPU projected from each other one, its own "
		    "measurements held out of the transfer calibration\n");
	fprintf(fp, "  %-10s %-13s %-13s %4s %9s %9s %9s\n", "class", "from", "to", "n",
		"in p5-p95", "med|err|", "max|err|");
	for (size_t j = 0; j < p->nxback; j++) {
		const struct project_xback *x = &p->xback[j];
		fprintf(fp, "  %-10s %-13s %-13s %4d %8.0f%% %8.1f%% %8.1f%%\n", x->cls, x->from,
			x->to, x->n, x->cover_pct, x->med_err_pct, x->max_err_pct);
	}
	fprintf(fp, "\npooled over the points (targets: 80%% inside p5-p95, median |error| of "
		    "p50 10%%)\n");
	fprintf(fp, "  %-10s %-27s %5s %9s %9s\n", "class", "target family", "n", "in p5-p95",
		"med|err|");
	for (size_t i = 0; i < p->nxsum; i++) {
		const struct project_xsum *s = &p->xsum[i];
		fprintf(fp, "  %-10s %-27s %5d %8.1f%% %8.1f%%\n", s->cls[0] ? s->cls : "every class",
			s->fam[0] ? s->fam : "every family", s->n, s->cover_pct, s->med_err_pct);
	}
}
