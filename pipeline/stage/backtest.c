/* backtest.c - the cross-GPU backtest of the transfer calibration (backtest.h). */
#include "backtest.h"

#include "err.h"
#include "sort.h"
#include "xfer.h"
#include "ximpl.h"

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

/* One compared point: its class, its group (the target's family; in the
 * implementation backtest the pair "from->to"), the signed error of p50,
 * the band's width over p50, inside. */
struct pt {
	int cls;
	char fam[24];
	double err, width;
	int inside;
};

struct pts {
	struct pt *v;
	size_t n, cap;
};

static int pts_add(struct pts *a, int cls, const char *fam, double err, double width, int inside)
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
	q->width = width;
	q->inside = inside;
	return 0;
}

/* A prediction from -> to at column j of the class: lf (log factor on
 * bandwidth scaling) and sigma. Returns 0 or -1 (nothing to say). */
struct pred {
	int (*fn)(const struct pred *pr, const struct gpu *from, const struct gpu *to, int j,
		  double *lf, double *sig);
	const struct calib *c;
	const struct meas_class *k;
	const struct xfer_fit *same, *cross; /* gpu/family: the fits for targets of the
					      * source's memory kind, and across kinds */
	const struct ximpl *s;               /* implementation: the set, skip, gap */
	unsigned skip;
	const struct ximpl_gaps *gap;
	const struct backtest_win *w;        /* the points scored (NULL: all) */
	struct projection *keep;             /* where each point is kept (NULL: nowhere) */
};

/* Keeps one point of class k in p->ipts. Returns 0 or DDT_ENOMEM. */
static int keep_point(struct projection *p, const struct meas_class *k, const char *from,
		      const char *to, double m, double meas, double p50, double sig)
{
	if (!(p->nipts & (p->nipts + 1)) || !p->ipts) {
		struct project_xpoint *v = realloc(p->ipts, 2 * (p->nipts + 1) * sizeof *v);
		if (!v)
			return err_nomem();
		p->ipts = v;
	}
	struct project_xpoint *q = &p->ipts[p->nipts++];
	snprintf(q->cls, sizeof q->cls, "%s", k->name);
	snprintf(q->from, sizeof q->from, "%s", from);
	snprintf(q->to, sizeof q->to, "%s", to);
	q->m = m;
	q->measured_us = meas;
	q->p50_us = p50;
	q->p5_us = p50 * exp(-Z95 * sig);
	q->p95_us = p50 * exp(Z95 * sig);
	return 0;
}

/* Whether w lets pair a -> b in. */
static int win_pair(const struct backtest_win *w, const char *a, const char *b)
{
	char key[72];
	size_t n;
	const char *s;
	if (!w || !w->pairs)
		return 1;
	n = (size_t)snprintf(key, sizeof key, "%s:%s", a, b);
	for (s = strstr(w->pairs, key); s; s = strstr(s + 1, key))
		if ((s == w->pairs || s[-1] == ',') && (s[n] == ',' || s[n] == '\0'))
			return 1;
	return 0;
}

/* Whether w lets M in. */
static int win_m(const struct backtest_win *w, double M)
{
	return !w || ((isnan(w->m_min) || M >= w->m_min) && (isnan(w->m_max) || M <= w->m_max));
}

static int pred_fit(const struct pred *pr, const struct gpu *from, const struct gpu *to, int j,
		    double *lf, double *sig)
{
	int seen, cross = strcmp(xfer_kind(pr->c, from), xfer_kind(pr->c, to)) != 0;
	const struct xfer_fit *x = cross ? pr->cross : pr->same;
	return !x->ok || xfer_predict(x, pr->c, pr->k, from, to, j, lf, sig, &seen);
}

static int pred_impl(const struct pred *pr, const struct gpu *from, const struct gpu *to, int j,
		     double *lf, double *sig)
{
	double gs, bias;
	return ximpl_predict(pr->s, pr->c, pr->skip, pr->gap, from, to, pr->k->m[j], lf, sig, &gs,
			     &bias);
}

/* One pair of class k: A's series moved onto B by pr. Each point goes to
 * all under group key. */
static int pair_run(struct project_xback *xb, const struct pred *pr, int ci,
		    const struct meas_series *sa, const struct meas_series *sb, const char *key,
		    struct pts *all)
{
	const struct calib *c = pr->c;
	const struct meas_class *k = pr->k;
	const struct gpu *ga = calib_gpu(c, sa->gpu), *gb = calib_gpu(c, sb->gpu);
	double errs[CALIB_MAX_MEAS_M], sgn[CALIB_MAX_MEAS_M], wid[CALIB_MAX_MEAS_M], max = 0;
	int inside = 0, rc;
	memset(xb, 0, sizeof *xb);
	snprintf(xb->cls, sizeof xb->cls, "%s", k->name);
	snprintf(xb->from, sizeof xb->from, "%s", sa->gpu);
	snprintf(xb->to, sizeof xb->to, "%s", sb->gpu);
	if (!win_pair(pr->w, sa->gpu, sb->gpu))
		return 0;
	for (int j = 0; j < k->nm; j++) {
		double lf, sig;
		if (!(sa->us[j] > 0) || !(sb->us[j] > 0) || !win_m(pr->w, k->m[j]) ||
		    pr->fn(pr, ga, gb, j, &lf, &sig))
			continue;
		double p50 = sa->us[j] * ga->bw_tbps / gb->bw_tbps * exp(lf);
		int in = sb->us[j] >= p50 * exp(-Z95 * sig) && sb->us[j] <= p50 * exp(Z95 * sig);
		double e = p50 / sb->us[j] - 1, w = exp(Z95 * sig) - exp(-Z95 * sig);
		if ((rc = pts_add(all, ci, key, e, w, in)) != 0 ||
		    (pr->keep && (rc = keep_point(pr->keep, k, sa->gpu, sb->gpu, k->m[j], sb->us[j],
						  p50, sig)) != 0))
			return rc;
		inside += in;
		sgn[xb->n] = e;
		wid[xb->n] = w;
		errs[xb->n++] = fabs(e);
		max = fmax(max, fabs(e));
	}
	xb->cover_pct = xb->n ? 100.0 * inside / xb->n : NAN;
	xb->max_err_pct = 100 * max;
	xb->med_err_pct = 100 * median(errs, xb->n);
	xb->bias_pct = 100 * median(sgn, xb->n);
	xb->width_pct = 100 * median(wid, xb->n);
	return 0;
}

/* Where summaries go. */
struct sums {
	struct project_xsum **v;
	size_t *n;
};

/* Appends the pooled figures of (class ci, group fam) from all to out (ci
 * -1, fam "": every one); nothing when no point matches. */
static int summarize(struct sums out, const struct measured *ms, const struct pts *all, int ci,
		     const char *fam, double *scratch)
{
	int n = 0, in = 0;
	double *sg = scratch + all->n, *wd = sg + all->n;
	for (size_t i = 0; i < all->n; i++)
		if ((ci < 0 || all->v[i].cls == ci) && (!fam[0] || !strcmp(all->v[i].fam, fam))) {
			sg[n] = all->v[i].err;
			wd[n] = all->v[i].width;
			scratch[n++] = fabs(all->v[i].err);
			in += all->v[i].inside;
		}
	if (!n)
		return 0;
	struct project_xsum *s = realloc(*out.v, (*out.n + 1) * sizeof *s);
	if (!s)
		return err_nomem();
	*out.v = s;
	s = &s[(*out.n)++];
	snprintf(s->cls, sizeof s->cls, "%s", ci < 0 ? "" : ms->cls[ci].name);
	snprintf(s->fam, sizeof s->fam, "%s", fam);
	s->n = n;
	s->cover_pct = 100.0 * in / n;
	s->med_err_pct = 100 * median(scratch, n);
	s->bias_pct = 100 * median(sg, n);
	s->width_pct = 100 * median(wd, n);
	return 0;
}

/* Whether point i of all is the first of its (class if by_cls, group). */
static int first_of(const struct pts *all, size_t i, int by_cls)
{
	for (size_t j = 0; j < i; j++)
		if ((!by_cls || all->v[j].cls == all->v[i].cls) &&
		    !strcmp(all->v[j].fam, all->v[i].fam))
			return 0;
	return 1;
}

/* Every summary: per class and group (in the order groups first appear),
 * per class, every class. */
static int summaries(struct sums out, const struct measured *ms, const struct pts *all)
{
	double *scratch = malloc(3 * (all->n ? all->n : 1) * sizeof *scratch);
	int rc = scratch ? 0 : err_nomem();
	for (int ci = 0; ci < ms->nclasses && !rc; ci++) {
		for (size_t i = 0; i < all->n && !rc; i++)
			if (all->v[i].cls == ci && first_of(all, i, 1))
				rc = summarize(out, ms, all, ci, all->v[i].fam, scratch);
		rc = rc ? rc : summarize(out, ms, all, ci, "", scratch);
	}
	rc = rc ? rc : summarize(out, ms, all, -1, "", scratch);
	free(scratch);
	return rc;
}

/* The implementation backtest's summaries: per held-out implementation,
 * per pair over implementations, every point. */
static int summaries_impl(struct sums out, const struct measured *ms, const struct pts *all)
{
	double *scratch = malloc(3 * (all->n ? all->n : 1) * sizeof *scratch);
	int rc = scratch ? 0 : err_nomem();
	for (int ci = 0; ci < ms->nclasses && !rc; ci++)
		rc = summarize(out, ms, all, ci, "", scratch);
	for (size_t i = 0; i < all->n && !rc; i++)
		if (first_of(all, i, 0))
			rc = summarize(out, ms, all, -1, all->v[i].fam, scratch);
	rc = rc ? rc : summarize(out, ms, all, -1, "", scratch);
	free(scratch);
	return rc;
}

/* Every ordered pair of class ci, B's twins (and in family mode B's family)
 * held out of the fit; a pair across memory kinds also without B's kind.
 * x[2] is scratch. */
static int class_run(struct projection *p, const struct calib *c, const struct meas_class *k,
		     int ci, struct xfer_fit *x, enum backtest_hold mode,
		     const struct backtest_win *w, struct pts *all)
{
	struct pred pr = {.fn = pred_fit, .c = c, .k = k, .same = &x[0], .cross = &x[1], .w = w};
	int rc;
	for (int b = 0; b < k->nseries; b++) {
		const struct gpu *gb = calib_gpu(c, k->series[b].gpu);
		if (!gb)
			continue;
		const char *fam = calib_family(c, gb->arch);
		struct xfer_hold hs = {.gpu = gb->id, .fam = mode == BACKTEST_FAMILY ? fam : NULL};
		struct xfer_hold hc = hs;
		hc.kind = xfer_kind(c, gb);
		if ((rc = xfer_fit_hold(&x[0], c, k, &hs)) != 0 ||
		    (rc = xfer_fit_hold(&x[1], c, k, &hc)) != 0)
			return rc;
		/* the fit without B's kind sizes its error by what leaving a kind
		 * out cost where both were there */
		memcpy(x[1].cv_nokind, x[0].cv_nokind, sizeof x[1].cv_nokind);
		for (int a = 0; a < k->nseries; a++) {
			const struct gpu *ga = calib_gpu(c, k->series[a].gpu);
			if (a == b || !ga || xfer_twins(ga, gb))
				continue;
			struct project_xback *xb = &p->xback[p->nxback];
			if ((rc = pair_run(xb, &pr, ci, &k->series[a], &k->series[b], fam, all)) != 0)
				return rc;
			p->nxback += xb->n > 0;
		}
	}
	return 0;
}

/* Each row's figures: the pair (reference GPU -> the row's target) of the
 * transfer's class. */
static void rows_xfer(struct projection *p, const struct calib *c, const char *ref)
{
	for (size_t r = 0; r < p->nrows; r++) {
		struct project_row *row = &p->rows[r];
		row->xfer_cover_pct = row->xfer_err_pct = NAN;
		for (size_t j = 0; j < p->nxback; j++) {
			const struct project_xback *x = &p->xback[j];
			if (!strcmp(x->cls, c->xfer_class) && !strcmp(x->from, ref) &&
			    !strcmp(x->to, row->target)) {
				row->xfer_cover_pct = x->cover_pct;
				row->xfer_err_pct = x->med_err_pct;
			}
		}
	}
}

int backtest_hold(struct projection *p, const struct calib *c, const struct calibration *d,
		  enum backtest_hold mode, const struct backtest_win *w)
{
	const struct measured *ms = calibrate_meas(c, d);
	size_t cap = 0;
	struct xfer_fit *x = malloc(2 * sizeof *x);
	struct pts all = {0};
	int rc = 0;

	free(p->xback);
	free(p->xsum);
	p->xback = NULL;
	p->xsum = NULL;
	p->nxback = p->nxsum = 0;
	for (int i = 0; i < ms->nclasses; i++)
		cap += (size_t)ms->cls[i].nseries * ms->cls[i].nseries;
	p->xback = calloc(cap ? cap : 1, sizeof *p->xback);
	if (!x || !p->xback) {
		rc = err_nomem();
		goto done;
	}
	for (int i = 0; i < ms->nclasses && !rc; i++)
		rc = class_run(p, c, &ms->cls[i], i, x, mode, w, &all);
	if (rc || (rc = summaries((struct sums){&p->xsum, &p->nxsum}, ms, &all)) != 0)
		goto done;
	backtest_pooled(p, "", "", &p->xback_n, &p->xback_cover_pct, &p->xback_err_pct);
	rows_xfer(p, c, calibrate_moe_ref(c, d)->gpu);
done:
	free(all.v);
	free(x);
	return rc;
}

int backtest_xgpu(struct projection *p, const struct calib *c, const struct calibration *d)
{
	return backtest_hold(p, c, d, BACKTEST_GPU, NULL);
}

/* Implementation i of s held out with every layout of its build (they
 * share its kernels): its pairs predicted by the other builds. */
static int impl_run(struct projection *p, const struct calib *c, const struct measured *ms,
		    const struct ximpl *s, int i, const struct backtest_win *w, struct pts *all)
{
	struct ximpl_gaps gap;
	const struct meas_class *k = s->k[i];
	struct pred pr = {.fn = pred_impl, .c = c, .k = k, .s = s, .skip = ximpl_build_mask(s, i), .gap = &gap,
			  .w = w, .keep = p};
	int ci = (int)(k - ms->cls), rc;
	ximpl_gap_est(&gap, s, c, pr.skip);
	for (int b = 0; b < k->nseries; b++)
		for (int a = 0; a < k->nseries; a++) {
			const struct gpu *ga = calib_gpu(c, k->series[a].gpu);
			const struct gpu *gb = calib_gpu(c, k->series[b].gpu);
			char key[24];
			if (a == b || !ga || !gb || xfer_twins(ga, gb))
				continue;
			snprintf(key, sizeof key, "%.12s->%.9s", ga->id, gb->id);
			struct project_xback *xb = &p->iback[p->niback];
			if ((rc = pair_run(xb, &pr, ci, &k->series[a], &k->series[b], key, all)) != 0)
				return rc;
			p->niback += xb->n > 0;
		}
	return 0;
}

/* The pooled figures of the implementation backtest (cls "", fam ""). */
static void impl_pooled(struct projection *p)
{
	p->iback_n = 0;
	p->iback_cover_pct = p->iback_err_pct = p->iback_width_pct = p->iback_bias_pct = NAN;
	for (size_t i = 0; i < p->nisum; i++)
		if (!p->isum[i].cls[0] && !p->isum[i].fam[0]) {
			p->iback_n = p->isum[i].n;
			p->iback_cover_pct = p->isum[i].cover_pct;
			p->iback_err_pct = p->isum[i].med_err_pct;
			p->iback_width_pct = p->isum[i].width_pct;
			p->iback_bias_pct = p->isum[i].bias_pct;
		}
}

/* Each row's transfer figures from the implementation backtest, where it
 * has the pair (moe_reference.gpu -> the row's target), and the gap in the
 * transfer the row takes. */
static void rows_impl(struct projection *p, const struct calib *c, const struct calibration *d)
{
	const struct xfer_table *xt = &d->xt;
	const char *ref_id = calibrate_moe_ref(c, d)->gpu;
	const struct gpu *ref = calib_gpu(c, ref_id);
	for (size_t r = 0; r < p->nrows; r++) {
		struct project_row *row = &p->rows[r];
		const struct gpu *t = calib_gpu(c, row->target);
		char key[24];
		int x = ref && t ? calib_xfer_index(xt, ref, t, row->M) : -1;
		row->xfer_gap_pct = x >= 0 && xt->xfer[x].gap_sigma > 0
					    ? 100 * (exp(Z95 * xt->xfer[x].gap_sigma) - 1)
					    : NAN;
		snprintf(key, sizeof key, "%.12s->%.9s", ref_id, row->target);
		for (size_t i = 0; i < p->nisum; i++)
			if (!p->isum[i].cls[0] && !strcmp(p->isum[i].fam, key)) {
				row->xfer_cover_pct = p->isum[i].cover_pct;
				row->xfer_err_pct = p->isum[i].med_err_pct;
			}
	}
}

int backtest_ximpl(struct projection *p, const struct calib *c, const struct calibration *d,
		   const struct backtest_win *w)
{
	const struct measured *ms = calibrate_meas(c, d);
	struct ximpl s;
	struct pts all = {0};
	size_t cap = 0;
	int rc;

	free(p->iback);
	free(p->isum);
	free(p->ipts);
	p->iback = NULL;
	p->isum = NULL;
	p->ipts = NULL;
	p->niback = p->nisum = p->nipts = 0;
	if ((rc = ximpl_init(&s, c, ms, c->xfer_class)) != 0)
		goto done;
	for (int i = 0; i < s.n; i++)
		cap += (size_t)s.k[i]->nseries * s.k[i]->nseries;
	if (!(p->iback = calloc(cap ? cap : 1, sizeof *p->iback))) {
		rc = err_nomem();
		goto done;
	}
	for (int i = 0; i < s.n && s.n > 1 && !rc; i++)
		rc = impl_run(p, c, ms, &s, i, w, &all);
	if (!rc)
		rc = summaries_impl((struct sums){&p->isum, &p->nisum}, ms, &all);
	impl_pooled(p);
	rows_impl(p, c, d);
done:
	ximpl_free(&s);
	free(all.v);
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

/* One pair line. */
static void pair_line(const struct project_xback *x, FILE *fp)
{
	fprintf(fp, "  %-22s %-13s %-13s %4d %8.0f%% %8.1f%% %8.1f%% %+8.1f%% %8.0f%%\n", x->cls,
		x->from, x->to, x->n, x->cover_pct, x->med_err_pct, x->max_err_pct, x->bias_pct,
		x->width_pct);
}

static void pair_head(FILE *fp)
{
	fprintf(fp, "  %-22s %-13s %-13s %4s %9s %9s %9s %9s %9s\n", "class", "from", "to", "n",
		"in p5-p95", "med|err|", "max|err|", "med err", "width");
}

/* One pooled line. */
static void sum_line(const struct project_xsum *s, const char *all_cls, const char *all_fam,
		     FILE *fp)
{
	fprintf(fp, "  %-22s %-27s %5d %8.1f%% %8.1f%% %+8.1f%% %8.0f%%\n",
		s->cls[0] ? s->cls : all_cls, s->fam[0] ? s->fam : all_fam, s->n, s->cover_pct,
		s->med_err_pct, s->bias_pct, s->width_pct);
}

static void sum_head(const char *grp, FILE *fp)
{
	fprintf(fp, "  %-22s %-27s %5s %9s %9s %9s %9s\n", "class", grp, "n", "in p5-p95",
		"med|err|", "med err", "width");
}

/* One backtest as text: the title, its pairs, its pooled figures. */
static void write_table(const char *title, const char *targets, const struct project_xback *x,
			size_t nx, const struct project_xsum *sm, size_t ns, const char *grp,
			const char *all_cls, const char *all_grp, FILE *fp)
{
	fprintf(fp, "%s\n", title);
	pair_head(fp);
	for (size_t j = 0; j < nx; j++)
		pair_line(&x[j], fp);
	fprintf(fp, "\npooled over the points (targets: %s; med err: signed, + = predicted slower "
		    "than measured; width: p95-p5 over p50)\n",
		targets);
	sum_head(grp, fp);
	for (size_t i = 0; i < ns; i++)
		sum_line(&sm[i], all_cls, all_grp, fp);
}

void backtest_write_text(const struct projection *p, FILE *fp)
{
	write_table("cross-GPU backtest: each GPU projected from each other one, its own "
		    "measurements and its twins' (same die, memory and bandwidth) held out of the "
		    "transfer calibration; a pair across memory kinds fitted without the target's "
		    "kind",
		    "80% inside p5-p95, median |error| of p50 10%", p->xback, p->nxback, p->xsum,
		    p->nxsum, "target family", "every class", "every family", fp);
}

void backtest_write_impl_text(const struct projection *p, FILE *fp)
{
	write_table("implementation backtest: each implementation of the transfer's kernel class "
		    "held out whole with every layout of its build (engine and version: one "
		    "kernel), its pairs projected by the law the other builds share, with the "
		    "implementation gap sized without them",
		    "80% inside p5-p95, median |error| of p50 12%, median width 50%", p->iback,
		    p->niback, p->isum, p->nisum, "pair", "every implementation", "every pair", fp);
}

/* The names of ximpl.h's pair kinds. */
static const char *const gap_kind[XIMPL_NQ] = {"same memory, faster", "same memory, slower",
					       "across memory, faster", "across memory, slower"};

/* One gap line: M (NaN: every M), its kind q, g. */
static void gap_line(double M, int q, const struct ximpl_gap *g, FILE *fp)
{
	char m[16];
	double se = sqrt(g->se2), half = sqrt(g->var + g->se2) * ximpl_t_scale(g->nimpl);
	snprintf(m, sizeof m, isnan(M) ? "every" : "%g", M);
	fprintf(fp, "  %-6s %-22s %6d %6d %+8.1f%% %8.1f%% %-9s %+8.0f%%\n", m, gap_kind[q],
		g->nimpl, g->n, 100 * (exp(g->bias) - 1), 100 * se,
		fabs(g->bias) > XIMPL_BIAS_Z * se ? "yes" : "no", 100 * (exp(Z95 * half) - 1));
}

int backtest_write_gap(const struct calib *c, const struct calibration *d,
		       const struct backtest_win *w, FILE *fp)
{
	struct ximpl s;
	int rc = ximpl_init(&s, c, calibrate_meas(c, d), c->xfer_class);
	if (!rc && s.n > 1) {
		fprintf(fp, "\nimplementation gap, every build in (%d implementations, %d builds), "
			    "each build left out in turn; bias: + = the law predicts slower than "
			    "measured, corrected where beyond %g standard errors; gap: 90%% "
			    "half-width with Student's t at builds - 1 degrees of freedom\n",
			s.n, s.nbuild, XIMPL_BIAS_Z);
		fprintf(fp, "  %-6s %-22s %6s %6s %9s %9s %-9s %9s\n", "M", "pair kind", "builds",
			"points", "bias", "se", "corrected", "gap");
		for (int r = 0; r <= s.gap.nm; r++)
			for (int q = 0; q < XIMPL_NQ; q++) {
				double M = r < s.gap.nm ? s.gap.m[r] : NAN;
				if (s.gap.g[r][q].nimpl && (isnan(M) || win_m(w, M)))
					gap_line(M, q, &s.gap.g[r][q], fp);
			}
	}
	ximpl_free(&s);
	return rc;
}

void backtest_write_points(const struct projection *p, FILE *fp)
{
	fprintf(fp, "class,from,to,m,measured_us,p5_us,p50_us,p95_us\n");
	for (size_t i = 0; i < p->nipts; i++) {
		const struct project_xpoint *q = &p->ipts[i];
		fprintf(fp, "%s,%s,%s,%g,%.4g,%.4g,%.4g,%.4g\n", q->cls, q->from, q->to, q->m,
			q->measured_us, q->p5_us, q->p50_us, q->p95_us);
	}
}

int backtest_gap_note(const struct projection *p, const struct calib *c,
		      const struct calibration *d, char *buf, size_t len)
{
	const struct project_row *w = NULL;
	for (size_t r = 0; r < p->nrows; r++)
		if (p->rows[r].estimator == EST_CALIBRATED && isfinite(p->rows[r].xfer_gap_pct) &&
		    (!w || p->rows[r].xfer_gap_pct > w->xfer_gap_pct))
			w = &p->rows[r];
	if (!w)
		return 0;
	size_t off = (size_t)snprintf(
		buf, len,
		"implementation gap: the MoE measured by one implementation and run by another "
		"(the native engine: no table holds it) moves by -%.0f%%..+%.0f%% (90%%) in the "
		"transfer %s -> %s at M=%g, sized by holding out each engine build of %s in turn "
		"(ddt backtest --hold-out implementation); every calibrated band draws it",
		100 - 100 / (1 + w->xfer_gap_pct / 100), w->xfer_gap_pct, calibrate_moe_ref(c, d)->gpu, w->target,
		w->M, c->xfer_class);
	if (w->xfer_gap_pct > BACKTEST_HONEST_PCT && off < len)
		snprintf(buf + off, len - off,
			 ". The implementations disagree beyond +-%d%%: no band honest at 90%% is "
			 "narrower than that",
			 BACKTEST_HONEST_PCT);
	return 1;
}
