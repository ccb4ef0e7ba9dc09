/* backtest.c - the cross-GPU backtest of the transfer factors (backtest.h). */
#include "backtest.h"

#include "err.h"
#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* z of the 95th percentile of the standard normal */
#define Z95 1.6448536269514722

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Median of a[n] (sorts it); NaN for n = 0. */
static double median(double *a, int n)
{
	if (n == 0)
		return NAN;
	qsort(a, (size_t)n, sizeof *a, cmp_double);
	return n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
}

/* One pair of class k: A's series projected onto B with f (fitted without B).
 * errs[] receives each point's |error|. */
static void pair_run(struct project_xback *x, const struct calib *c, const struct meas_class *k,
		     const struct xfer_fit *f, const struct meas_series *sa,
		     const struct meas_series *sb, double *errs)
{
	const struct gpu *ga = calib_gpu(c, sa->gpu), *gb = calib_gpu(c, sb->gpu);
	int inside = 0;
	double max = 0;
	memset(x, 0, sizeof *x);
	snprintf(x->cls, sizeof x->cls, "%s", k->name);
	snprintf(x->from, sizeof x->from, "%s", sa->gpu);
	snprintf(x->to, sizeof x->to, "%s", sb->gpu);
	for (int j = 0; j < k->nm; j++) {
		double med, sig;
		int np;
		if (!(sa->us[j] > 0) || !(sb->us[j] > 0) ||
		    fit_xfer_factor(f, c, ga, gb, fit_xfer_range(c, k->m[j]), &med, &sig, &np))
			continue;
		double p50 = sa->us[j] * ga->bw_tbps / gb->bw_tbps * med;
		double lo = p50 * exp(-Z95 * sig), hi = p50 * exp(Z95 * sig);
		inside += sb->us[j] >= lo && sb->us[j] <= hi;
		errs[x->n] = fabs(p50 / sb->us[j] - 1);
		max = fmax(max, errs[x->n]);
		x->n++;
	}
	x->cover_pct = x->n ? 100.0 * inside / x->n : NAN;
	x->max_err_pct = 100 * max;
	x->med_err_pct = 100 * median(errs, x->n);
}

int backtest_xgpu(struct projection *p, const struct calib *c)
{
	size_t cap = 0;
	struct xfer_fit *f = malloc(sizeof *f);
	double errs[CALIB_MAX_MEAS_M];
	int rc = 0;

	free(p->xback);
	p->xback = NULL;
	p->nxback = 0;
	for (int i = 0; i < c->meas.nclasses; i++)
		cap += (size_t)c->meas.cls[i].nseries * c->meas.cls[i].nseries;
	p->xback = calloc(cap ? cap : 1, sizeof *p->xback);
	if (!f || !p->xback) {
		rc = err_nomem();
		goto done;
	}
	for (int i = 0; i < c->meas.nclasses; i++) {
		const struct meas_class *k = &c->meas.cls[i];
		for (int b = 0; b < k->nseries; b++) {
			if (!calib_gpu(c, k->series[b].gpu))
				continue;
			fit_xfer(f, c, k, k->series[b].gpu);
			for (int a = 0; a < k->nseries && f->ok; a++) {
				if (a == b || !calib_gpu(c, k->series[a].gpu))
					continue;
				struct project_xback *x = &p->xback[p->nxback];
				pair_run(x, c, k, f, &k->series[a], &k->series[b], errs);
				p->nxback += x->n > 0;
			}
		}
	}
	backtest_class(p, "", &p->xback_n, &p->xback_cover_pct, &p->xback_err_pct);
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
done:
	free(f);
	return rc;
}

void backtest_class(const struct projection *p, const char *cls, int *n, double *cover_pct,
		    double *err_pct)
{
	double in = 0, *e = malloc((p->nxback ? p->nxback : 1) * sizeof *e);
	int pairs = 0;
	*n = 0;
	for (size_t j = 0; j < p->nxback; j++) {
		const struct project_xback *x = &p->xback[j];
		if (cls[0] && strcmp(cls, x->cls))
			continue;
		*n += x->n;
		in += x->cover_pct / 100 * x->n;
		if (e)
			e[pairs] = x->med_err_pct;
		pairs++;
	}
	*cover_pct = *n ? 100 * in / *n : NAN;
	*err_pct = e ? median(e, pairs) : NAN;
	free(e);
}

void backtest_write_text(const struct projection *p, FILE *fp)
{
	char last[24] = "";
	fprintf(fp, "cross-GPU backtest: each GPU projected from each other one, its own "
		    "measurements held out of the transfer fit\n");
	fprintf(fp, "  %-10s %-13s %-13s %4s %9s %9s %9s\n", "class", "from", "to", "n",
		"in p5-p95", "med|err|", "max|err|");
	for (size_t j = 0; j < p->nxback; j++) {
		const struct project_xback *x = &p->xback[j];
		if (last[0] && strcmp(last, x->cls)) {
			int n;
			double cv, er;
			backtest_class(p, last, &n, &cv, &er);
			fprintf(fp, "  %-10s %-27s %4d %8.0f%% %8.1f%%   (pairs' median)\n", last,
				"all pairs", n, cv, er);
		}
		snprintf(last, sizeof last, "%s", x->cls);
		fprintf(fp, "  %-10s %-13s %-13s %4d %8.0f%% %8.1f%% %8.1f%%\n", x->cls, x->from,
			x->to, x->n, x->cover_pct, x->med_err_pct, x->max_err_pct);
	}
	if (last[0]) {
		int n;
		double cv, er;
		backtest_class(p, last, &n, &cv, &er);
		fprintf(fp, "  %-10s %-27s %4d %8.0f%% %8.1f%%   (pairs' median)\n", last,
			"all pairs", n, cv, er);
	}
	fprintf(fp, "  every class: %d points, %.1f%% inside p5-p95 (target 80%%), median over "
		    "pairs of the median |error| of p50 %.1f%% (target 10%%)\n",
		p->xback_n, p->xback_cover_pct, p->xback_err_pct);
}
