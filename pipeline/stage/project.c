/* project.c - projections with uncertainty: Monte Carlo bands, the lean,
 * the tornado, the budget grid, the MoE fit and its backtest, on the
 * calibration with tonight's measurements merged in (calibrate.c).
 * (Writing and text: project_yaml.c; reading: project_read.c.) */
#include "project.h"

#include "backtest.h"
#include "calibrate.h"
#include "err.h"
#include "fit.h"
#include "project_accept.h"
#include "project_mc.h"
#include "sort.h"
#include "xfer.h"
#include "rng.h"

#include <gsl/gsl_cdf.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies src into dst[len], cut short when it does not fit. */
static void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---------------------------------------------------------------- tonight */

/* Adds a note; one longer than PROJECT_NOTE_LEN is refused, never cut. */
static int vnote(struct projection *p, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static int vnote(struct projection *p, const char *fmt, va_list ap)
{
	char (*n)[PROJECT_NOTE_LEN] = realloc(p->notes, (p->nnotes + 1) * sizeof *p->notes);
	if (!n)
		return err_nomem();
	p->notes = n;
	int len = vsnprintf(p->notes[p->nnotes], sizeof *p->notes, fmt, ap);
	if (len < 0 || (size_t)len >= sizeof *p->notes)
		return err_set(DDT_EGENERIC, "projection note of %d bytes exceeds %d: '%.60s...'",
			       len, PROJECT_NOTE_LEN, p->notes[p->nnotes]);
	p->nnotes++;
	return 0;
}

static int add_note(struct projection *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int add_note(struct projection *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vnote(p, fmt, ap);
	va_end(ap);
	return rc;
}

int project_note(struct projection *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vnote(p, fmt, ap);
	va_end(ap);
	return rc;
}

static int add_input(struct projection *p, const char *name, double value, enum provenance prov,
		     const char *source)
{
	struct project_input *in = realloc(p->inputs, (p->ninputs + 1) * sizeof *p->inputs);
	if (!in)
		return err_nomem();
	p->inputs = in;
	in = &p->inputs[p->ninputs++];
	memset(in, 0, sizeof *in);
	snprintf(in->name, sizeof in->name, "%s", name);
	in->value = value;
	in->prov = prov;
	in->was = NAN;
	snprintf(in->source, sizeof in->source, "%s", source);
	return 0;
}

const struct gpu *project_device_gpu(const struct calib *c, const char *device_name)
{
	return calibrate_device_gpu(c, device_name);
}

/* ---------------------------------------------------------------- rows */

static int cmp_bar(const void *a, const void *b)
{
	const struct project_bar *x = a, *y = b;
	if (x->swing != y->swing)
		return x->swing < y->swing ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The tornado of row r (its case k). */
static int tornado_row(struct projection *p, const struct mc *mc, struct model *m,
		       const struct project_row *r, size_t k)
{
	struct project_tornado *t = &p->tornado[p->ntornado++];
	double K = r->concurrency * r->accept * 1000.0;
	memset(t, 0, sizeof *t);
	snprintf(t->scenario, sizeof t->scenario, "%s", r->scenario);
	t->accept = r->accept;
	t->tok_s_point = r->tok_s.point;
	t->bars = calloc((size_t)mc->ngroups, sizeof *t->bars);
	if (!t->bars)
		return err_nomem();
	int cal = r->estimator == EST_CALIBRATED;
	double base[CALIB_MAX_ASM];
	project_mc_use_estimator(mc, m, cal, base);
	for (int g = 0; g < mc->ngroups; g++) {
		double lo = project_mc_step_with(mc, m, k, g, 0.05, cal), hi = project_mc_step_with(mc, m, k, g, 0.95, cal);
		struct project_bar *b = &t->bars[t->nbars];
		if (isnan(lo) || isnan(hi) || fabs(K / lo - K / hi) < 1e-9 * t->tok_s_point)
			continue;
		calib_group_label(mc->c, g, b->name, sizeof b->name);
		for (int i = 0; i < mc->nasm; i++)
			if (mc->group[i] == g) {
				/* a transfer that carries the implementation gap says so */
				if (i >= ASM_COUNT && mc->c->xfer[i - ASM_COUNT].gap_sigma > 0 &&
				    !strstr(b->name, "+ impl gap"))
					snprintf(b->name + strlen(b->name), sizeof b->name - strlen(b->name),
						 " (GPU + impl gap)");
				const struct dist *d = &mc->c->asm_[i];
				/* a pair's first range that this row uses, else its first */
				if (i >= ASM_COUNT && i != mc->cases[k].k.xfer && b->value_p5 != 0)
					continue;
				b->value_point = base[i];
				b->value_p5 = d->kind == DIST_FIXED ? d->point : calib_dist_quantile(d, 0.05);
				b->value_p95 = d->kind == DIST_FIXED ? d->point : calib_dist_quantile(d, 0.95);
			}
		b->tok_s_p5 = K / lo;
		b->tok_s_p95 = K / hi;
		b->swing = fabs(b->tok_s_p95 - b->tok_s_p5);
		t->nbars++;
	}
	qsort(t->bars, (size_t)t->nbars, sizeof *t->bars, cmp_bar);
	return 0;
}

/* The lean of row r: which group, alone at its median, moves tok/s most
 * (from the row's own point). */
static void lean_row(const struct mc *mc, struct model *m, struct project_row *r, size_t k)
{
	double best = 0;
	r->lean_pct = 100 * (r->tok_s.p50 - r->tok_s.point) / r->tok_s.point;
	r->lean_by[0] = '\0';
	r->lean_by_pct = 0;
	int cal = r->estimator == EST_CALIBRATED;
	for (int g = 0; g < mc->ngroups; g++) {
		double st = project_mc_step_with(mc, m, k, g, 0.5, cal);
		double d = 100 * ((cal ? mc->cases[k].cal_step : mc->cases[k].point_step) / st - 1);
		if (!isnan(st) && fabs(d) > fabs(best) + 1e-12) {
			best = d;
			calib_group_label(mc->c, g, r->lean_by, sizeof r->lean_by);
		}
	}
	r->lean_by_pct = best;
}

/* ---------------------------------------------------------------- summary */

/* The band has some width (the row is not pinned to an anchor). */
static int has_band(const struct project_row *r)
{
	return r->step_ms.p95 - r->step_ms.p5 > 1e-6 * r->step_ms.point;
}

static void lean_text(struct projection *p)
{
	double lo = INFINITY, hi = -INFINITY, plo = INFINITY, phi = -INFINITY;
	const struct project_row *most = NULL;
	size_t anchored = 0;
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *r = &p->rows[i];
		if (!has_band(r)) {
			anchored++;
			continue;
		}
		lo = fmin(lo, r->lean_pct), hi = fmax(hi, r->lean_pct);
		plo = fmin(plo, r->point_pctile), phi = fmax(phi, r->point_pctile);
		if (!most || fabs(r->lean_by_pct) > fabs(most->lean_by_pct))
			most = r;
	}
	if (!most) {
		snprintf(p->lean, sizeof p->lean, "Every projected step is pinned to an anchor: no "
			 "assumption moves it.");
		return;
	}
	const char *way = hi < 0 ? "below" : lo > 0 ? "above" : "on both sides of";
	char by[48], at[32];
	if (fabs(hi - lo) < 0.05)
		snprintf(by, sizeof by, "tok/s %+.1f%%", lo);
	else
		snprintf(by, sizeof by, "tok/s %+.1f%% to %+.1f%%", lo, hi);
	if (fabs(phi - plo) < 0.5)
		snprintf(at, sizeof at, "p%.0f", plo);
	else
		snprintf(at, sizeof at, "p%.0f-p%.0f", plo, phi);
	int n = snprintf(p->lean, sizeof p->lean,
			 "The medians sit %s the point estimates (%s); the point estimates fall at "
			 "%s of their bands. %s leans most: alone at its median it moves %s "
			 "(accept %g) by %+.1f%%.",
			 way, by, at, most->lean_by[0] ? most->lean_by : "no assumption",
			 most->scenario, most->accept, most->lean_by_pct);
	if (anchored && n > 0 && (size_t)n < sizeof p->lean)
		snprintf(p->lean + n, sizeof p->lean - (size_t)n,
			 " %zu row%s sit%s on an anchor (no band).", anchored, anchored == 1 ? "" : "s",
			 anchored == 1 ? "s" : "");
}

/* ---------------------------------------------------------------- fit, backtest */

static void fit_report(struct projection *p, const struct calib *c, const struct model *m)
{
	const struct moe_reference *r = &c->moe_ref;
	struct project_fit *f = &p->fit;
	double xm[CALIB_MAX_MOE_POINTS], ys[CALIB_MAX_MOE_POINTS];

	memset(f, 0, sizeof *f);
	f->curve = r->curve;
	snprintf(f->gpu, sizeof f->gpu, "%s", r->gpu);
	f->source = r->prov;
	f->nparams = MOE_P_COUNT;
	for (int i = 0; i < MOE_P_COUNT; i++) {
		struct project_param *q = &f->params[i];
		snprintf(q->name, sizeof q->name, "%s", calib_moe_param_name((enum moe_param)i));
		snprintf(q->unit, sizeof q->unit, "%s",
			 i == MOE_P_EFFICIENCY ? "of bandwidth"
			 : i == MOE_P_OVERLAP  ? "of routing shared"
					       : "us per layer");
		q->value = r->fit.value[i];
		q->se = r->fit.se[i];
		q->held = r->fit.held[i];
	}
	f->npoints = r->npoints;
	for (int i = 0; i < r->npoints; i++)
		xm[i] = r->points[i].m, ys[i] = r->points[i].step_ms;
	double ss = 0;
	for (int i = 0; i < r->npoints && i < PROJECT_MAX_FIT_POINTS; i++) {
		struct project_fit_point *q = &f->points[i];
		q->m = xm[i];
		q->step_ms = ys[i];
		q->fit_ms = model_moe_ref_ms(m, xm[i]);
		q->resid_pct = 100 * (q->fit_ms - ys[i]) / ys[i];
		ss += q->resid_pct * q->resid_pct;
		q->loo_ms = fit_moe_loo(c, m->ref_gpu, xm, ys, r->npoints, &r->phys, r->curve, i);
		q->loo_pct = 100 * (q->loo_ms - ys[i]) / ys[i];
	}
	f->rms_pct = r->npoints ? sqrt(ss / r->npoints) : NAN;
	if (r->fit.ok)
		fit_moe_plateau(c, m->ref_gpu, r->fit.value, &f->plateau_ms, &f->m_plateau);
	else
		f->plateau_ms = f->m_plateau = NAN;
	char note[1024];
	snprintf(note, sizeof note, "%s%s",
		 r->curve == MOE_CURVE_LINEAR ? "linear curve in use (the seed's; no plateau); "
						"physical fit shown: "
					      : "",
		 r->fit.note);
	copy_str(f->note, sizeof f->note, note);
}

/* How much a row suits showing a band beside: a band of some width first,
 * then a runnable configuration. */
static int band_rank(const struct project_row *r)
{
	return 2 * has_band(r) + r->runnable;
}

/* The row whose M is nearest m (log distance) among the best-ranked rows;
 * NULL when there are no rows. */
static const struct project_row *nearest_row(const struct projection *p, double m)
{
	const struct project_row *best = NULL;
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *r = &p->rows[i];
		if (!best || band_rank(r) > band_rank(best) ||
		    (band_rank(r) == band_rank(best) && fabs(log(r->M / m)) < fabs(log(best->M / m))))
			best = r;
	}
	return best;
}

static void beside_band(struct project_backtest *b, const struct project_row *r)
{
	if (!r) {
		b->band_lo_pct = b->band_hi_pct = NAN;
		return;
	}
	snprintf(b->band_scenario, sizeof b->band_scenario, "%s", r->scenario);
	b->band_lo_pct = 100 * (r->step_ms.p5 / r->step_ms.p50 - 1);
	b->band_hi_pct = 100 * (r->step_ms.p95 / r->step_ms.p50 - 1);
}

static int backtest(struct projection *p, const struct calib *c, struct model *m)
{
	const struct project_fit *f = &p->fit;
	size_t n = (size_t)f->npoints + 1;
	p->backtest = calloc(n, sizeof *p->backtest);
	if (!p->backtest)
		return err_nomem();
	for (int i = 0; i < f->npoints; i++) {
		struct project_backtest *b = &p->backtest[p->nbacktest++];
		const struct project_row *r = nearest_row(p, f->points[i].m);
		snprintf(b->what, sizeof b->what, "moe_reference m=%g", f->points[i].m);
		b->measured = f->points[i].step_ms;
		b->predicted = f->points[i].loo_ms;
		b->err_pct = f->points[i].loo_pct;
		beside_band(b, r);
		if (isnan(b->predicted))
			snprintf(b->note, sizeof b->note, "the %s curve cannot be drawn from the other "
				 "point%s", calib_moe_curve_name(f->curve), f->npoints == 2 ? "" : "s");
		else if (r)
			snprintf(b->note, sizeof b->note,
				 "MoE is %.0f%% of %s's step: this error moves that step by %+.1f%%",
				 100 * r->moe_ms / r->step_ms.point, r->scenario,
				 b->err_pct * r->moe_ms / r->step_ms.point);
	}
	/* the b16 anchor without itself: the growth it fixes set to 0 */
	const struct anchor *a = &c->sglang_b16;
	const struct gpu *g = calib_gpu(c, a->gpu);
	struct model_in in = {g, a->pipeline, a->block, a->budget, a->concurrency, 1, 0};
	struct model_out o;
	struct project_backtest *b = &p->backtest[p->nbacktest++];
	if (model_prepare(m, c, NULL))
		return DDT_EINPUT;
	int used = m->growth_used;
	model_set_growth(m, 0);
	model_eval(m, &in, &o);
	snprintf(b->what, sizeof b->what, "anchors.sglang_b16");
	b->measured = a->step_ms;
	b->predicted = o.step_ms;
	b->err_pct = 100 * (o.step_ms - a->step_ms) / a->step_ms;
	beside_band(b, nearest_row(p, a->concurrency * (a->budget + 1)));
	snprintf(b->note, sizeof b->note, "%s",
		 used ? "predicted with no growth of attention and draft (the growth is what this "
			"anchor fixes)"
		      : "predicted by tonight's measured scaling laws");
	return 0;
}

/* ---------------------------------------------------------------- inputs */

void project_input_basis(const struct project_input *in, char *buf, size_t len)
{
	if (in->prov == PROV_OVERRIDE && isfinite(in->was))
		snprintf(buf, len, "%s (was %.4g)", calib_provenance_name(in->prov), in->was);
	else
		snprintf(buf, len, "%s", calib_provenance_name(in->prov));
}

/* Marks the last input overridden, replacing was, its source kept after. */
static void input_overridden(struct projection *p, double was)
{
	static const char set[] = "set on the command line; before: ";
	struct project_input *in = &p->inputs[p->ninputs - 1];
	/* an overridden input's source is a calibration one: it fits after set */
	size_t n = strnlen(in->source, sizeof in->source - sizeof set);
	memmove(in->source + sizeof set - 1, in->source, n);
	memcpy(in->source, set, sizeof set - 1);
	in->source[sizeof set - 1 + n] = '\0';
	in->prov = PROV_OVERRIDE;
	in->was = was;
}

/* Adds an input; overridden when key was set with --set (was: what it
 * replaced, from the log, else from `unheld`, a model without the holds). */
static int add_key(struct projection *p, const struct calib *c, const char *key, double v,
		   enum provenance prov, const char *source, double unheld)
{
	const struct calib_override *o = calib_override_of(c, key);
	int rc = add_input(p, key, v, prov, source);
	double was;
	if (rc || !o)
		return rc;
	input_overridden(p, o->was[0] && !yget_parse_num(o->was, &was) ? was : unheld);
	return 0;
}

/* The growth a law's row shows: the held or solved g, or for tonight's
 * measured law the g that matches it at the b16 anchor's driver. */
static double law_growth(const struct model *m, int i)
{
	double f = i ? m->k16.draft_f : m->k16.attn_f, x = i ? m->k16.draft_x : m->k16.attn_x;
	double h = m->cal->law_hold[i];
	if (!isnan(h))
		return h;
	if (isnan(f))
		return m->growth;
	return x != 1 ? (f - 1) / (x - 1) : NAN;
}

/* A model of c without the --set holds of the derived inputs (the
 * all-reduce and the laws), for what they replaced; *cc and *ar to free. */
static int unheld_model(const struct calib *c, struct model *m, struct calib **cc,
			struct ar_gpu **ar)
{
	*cc = malloc(sizeof **cc);
	*ar = malloc((c->ar.n ? c->ar.n : 1) * sizeof **ar);
	if (!*cc || !*ar)
		return err_nomem();
	**cc = *c;
	memcpy(*ar, c->ar.per_gpu, c->ar.n * sizeof **ar);
	for (size_t i = 0; i < c->ar.n; i++)
		(*ar)[i].hold_m = (*ar)[i].hold_ms = 0;
	(*cc)->ar.per_gpu = *ar;
	(*cc)->law_hold[0] = (*cc)->law_hold[1] = NAN;
	return model_prepare(m, *cc, NULL);
}

static int list_anchors(struct projection *p, const struct calib *c)
{
	const struct anchor *a[2] = {&c->sglang_b8, &c->sglang_b16};
	static const char *const name[2] = {"anchors.sglang_b8.step_ms", "anchors.sglang_b16.step_ms"};
	static const enum provenance pv[2] = {PROV_MEASURED, PROV_CALIBRATION};
	int rc = 0;
	for (int i = 0; i < 2 && !rc; i++)
		if (!(rc = add_input(p, name[i], a[i]->step_ms, pv[i], a[i]->source)) &&
		    a[i]->overridden)
			input_overridden(p, a[i]->was_step_ms);
	return rc;
}

static int list_assumptions(struct projection *p, const struct calib *c, const struct model *m)
{
	char name[96], src[PROJECT_SOURCE_LEN];
	int rc = 0;
	for (int i = 0; i < calib_nassumptions(c) && !rc; i++) {
		const struct dist *d = &c->asm_[i];
		calib_assumption_label(c, i, name, sizeof name);
		enum provenance pv = !strncmp(d->source, "tonight", 7) ? PROV_TONIGHT : PROV_ASSUMED;
		if (d->kind == DIST_FIXED || pv != PROV_ASSUMED || d->overridden)
			snprintf(src, sizeof src, "%s", d->source);
		else
			snprintf(src, sizeof src, "%s %g..%g: %s", calib_dist_kind_name(d->kind),
				 calib_dist_quantile(d, 0.05), calib_dist_quantile(d, 0.95), d->source);
		if (!(rc = add_input(p, name, m->v[i], pv, src)) && d->overridden)
			input_overridden(p, d->was);
	}
	return rc;
}

/* The all-reduce per step at the anchor's width, and the laws. */
static int list_derived(struct projection *p, const struct calib *c, const struct model *m)
{
	struct model u = {0};
	struct calib *cc = NULL;
	struct ar_gpu *ar = NULL;
	char name[96];
	int rc = c->nsets ? unheld_model(c, &u, &cc, &ar) : 0;
	for (size_t i = 0; i < c->ngpus && !rc; i++) {
		const struct ar_gpu *a = calib_ar(c, c->gpus[i].id);
		snprintf(name, sizeof name, "allreduce.%s.step_ms_at_m%g", c->gpus[i].id, m->m0);
		rc = add_key(p, c, name, model_allreduce_ms(m, &c->gpus[i], m->m0),
			     a->like[0] ? PROV_ASSUMED : PROV_MEASURED, a->source,
			     cc ? model_allreduce_ms(&u, &cc->gpus[i], m->m0) : NAN);
	}
	const struct comp_law *laws[2] = {&c->law_attn, &c->law_draft};
	for (int i = 0; i < 2 && !rc; i++) {
		char what[300];
		snprintf(name, sizeof name, "law.%s", i ? "draft" : "attn_lmhead");
		if (laws[i]->n)
			snprintf(what, sizeof what, "%s; value: the growth g that matches it at "
				 "anchors.sglang_b16", laws[i]->what);
		rc = add_key(p, c, name, law_growth(m, i), laws[i]->n ? PROV_TONIGHT : PROV_DERIVED,
			     laws[i]->n ? what : "growth g: share of the time that grows with its "
						 "driver, solved from anchors.sglang_b16",
			     cc ? law_growth(&u, i) : NAN);
	}
	free(cc);
	free(ar);
	return rc;
}

/* Every input of the model under the key --set takes for it. */
static int list_inputs(struct projection *p, const struct calib *c, const struct model *m)
{
	char name[96];
	int rc = list_anchors(p, c);
	for (int i = 0; i < c->moe_ref.npoints && !rc; i++) {
		snprintf(name, sizeof name, "moe_reference.%s.m%g_ms", c->moe_ref.gpu,
			 c->moe_ref.points[i].m);
		rc = add_key(p, c, name, c->moe_ref.points[i].step_ms, c->moe_ref.prov,
			     c->moe_ref.points[i].source, NAN);
	}
	for (int i = 0; i < MOE_P_COUNT && !rc; i++) {
		snprintf(name, sizeof name, "moe_reference.physical.%s",
			 calib_moe_param_name((enum moe_param)i));
		rc = add_key(p, c, name, c->moe_ref.fit.value[i],
			     c->moe_ref.fit.held[i] ? PROV_CALIBRATION : PROV_DERIVED,
			     c->moe_ref.fit.held[i] ? c->moe_ref.phys.source[i]
						    : "fitted to the MoE reference points",
			     NAN);
	}
	rc = rc ? rc : list_assumptions(p, c, m);
	return rc ? rc : list_derived(p, c, m);
}

/* ---------------------------------------------------------------- the run */

/* The scenario the grid takes its block, pipeline and acceptance from. */
static const struct scenario *grid_scenario(const struct project_config *cfg,
					    const struct scenario *scs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(scs[i].name, cfg->grid_scenario))
			return &scs[i];
	for (size_t i = 0; i < n; i++)
		if (scs[i].pipeline == PIPE_NATIVE)
			return &scs[i];
	return n ? &scs[0] : NULL;
}

/* The budgets the grid may add around an optimum, one per gap of cfg's
 * list (gap i lies below budgets[i]; gap n above the last): the geometric
 * midpoint of two neighbours, half a step beyond an end; 0 where no whole
 * number lies strictly between. */
static void grid_gaps(const struct project_config *cfg, int gap[PROJECT_MAX_GRID_BUDGETS + 1])
{
	int n = cfg->nbudgets;
	const int *b = cfg->budgets;
	/* half a step beyond an end: the square root of the end's step */
	double r_lo = n > 1 ? sqrt((double)b[1] / b[0]) : sqrt(2);
	double r_hi = n > 1 ? sqrt((double)b[n - 1] / b[n - 2]) : sqrt(2);
	for (int i = 0; i <= n; i++) {
		double v = i == 0   ? b[0] / r_lo
			   : i == n ? b[n - 1] * r_hi
				    : sqrt((double)b[i - 1] * b[i]);
		long w = lround(v);
		gap[i] = w >= 1 && w <= (1 << 20) && (i == 0 || w > b[i - 1]) && (i == n || w < b[i])
				 ? (int)w
				 : 0;
	}
}

/* Asks acc for every acceptance the grid of scenario s may need: its
 * block at cfg's budgets, every gap's and s's own. Returns 0 or an error. */
static int grid_want(struct project_accept *acc, const struct project_config *cfg,
		     const struct scenario *s)
{
	int gap[PROJECT_MAX_GRID_BUDGETS + 1], rc = project_accept_want(acc, s->block, s->budget);
	grid_gaps(cfg, gap);
	for (int i = 0; i < cfg->nbudgets && !rc; i++)
		rc = project_accept_want(acc, s->block, cfg->budgets[i]);
	for (int i = 0; i <= cfg->nbudgets && !rc; i++)
		rc = gap[i] ? project_accept_want(acc, s->block, gap[i]) : 0;
	return rc;
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

/* g's budgets: cfg's, and the gaps beside each (target, C)'s point
 * optimum over them (the model at its seed point values, the source's
 * point acceptance). Returns 0 or an error code. */
static int grid_budgets(struct project_grid *g, const struct project_config *cfg,
			const struct calib *c, struct mc *mc, const struct model *m, struct project_accept *acc)
{
	int gap[PROJECT_MAX_GRID_BUDGETS + 1], add[PROJECT_MAX_GRID_BUDGETS + 1] = {0};
	grid_gaps(cfg, gap);
	g->nbudgets = cfg->nbudgets;
	memcpy(g->budgets, cfg->budgets, sizeof g->budgets);
	for (int t = 0; t < g->ntargets; t++)
		for (int ci = 0; ci < g->nconc; ci++) {
			int best = 0;
			double bv = -1;
			for (int b = 0; b < cfg->nbudgets; b++) {
				struct model_in in = {calib_gpu(c, g->targets[t]), g->pipeline, g->block,
						      cfg->budgets[b], g->conc[ci], 1, g->context};
				long k = project_mc_case_of(mc, m, &in, 0), l = project_accept_lane(acc, g->block, cfg->budgets[b]);
				if (k < 0 || l < 0)
					return (int)(k < 0 ? k : l);
				double v = acc->lanes[l].point / mc->cases[k].point_step;
				if (v > bv)
					bv = v, best = b;
			}
			add[best] = add[best + 1] = 1;
		}
	for (int i = 0; i <= cfg->nbudgets; i++)
		if (add[i] && gap[i] && g->nbudgets < PROJECT_MAX_GRID_BUDGETS)
			g->budgets[g->nbudgets++] = gap[i];
	g->nadded = g->nbudgets - cfg->nbudgets;
	qsort(g->budgets, (size_t)g->nbudgets, sizeof *g->budgets, cmp_int);
	return 0;
}

/* Grid set-up: its budgets (grid_budgets), cells, their cases and
 * acceptance lanes. */
static int grid_setup(struct projection *p, const struct project_config *cfg, const struct calib *c,
		      const struct scenario *s, struct mc *mc, const struct model *m,
		      struct project_accept *acc, long **case_of, long **lane_of)
{
	struct project_grid *g = &p->grid;
	int rc;

	snprintf(g->scenario, sizeof g->scenario, "%s", s->name);
	g->pipeline = s->pipeline;
	g->block = s->block;
	g->context = s->context;
	g->ref_budget = s->budget;
	g->ntargets = cfg->ntargets;
	g->nconc = cfg->nconc;
	memcpy(g->targets, cfg->targets, sizeof g->targets);
	memcpy(g->conc, cfg->conc, sizeof g->conc);
	for (int t = 0; t < g->ntargets; t++)
		if (!calib_gpu(c, g->targets[t]))
			return err_set(DDT_EINPUT, "projection.grid: target '%s' is not in the GPU "
				       "catalog", g->targets[t]);
	if ((rc = grid_budgets(g, cfg, c, mc, m, acc)) != 0)
		return rc;
	size_t ncells = (size_t)g->ntargets * g->nconc * g->nbudgets;
	g->cells = calloc(ncells, sizeof *g->cells);
	g->best = calloc((size_t)g->ntargets * g->nconc, sizeof *g->best);
	g->runner = calloc((size_t)g->ntargets * g->nconc, sizeof *g->runner);
	*case_of = calloc(ncells, sizeof **case_of);
	*lane_of = calloc(ncells, sizeof **lane_of);
	if (!g->cells || !g->best || !g->runner || !*case_of || !*lane_of)
		return err_nomem();
	for (int t = 0; t < g->ntargets; t++)
		for (int ci = 0; ci < g->nconc; ci++)
			for (int b = 0; b < g->nbudgets; b++) {
				struct project_cell *cell = PROJECT_CELL(g, t, ci, b);
				struct model_in in = {calib_gpu(c, g->targets[t]), g->pipeline, g->block,
						      g->budgets[b], g->conc[ci], 1, g->context};
				size_t i = (size_t)(cell - g->cells);
				cell->M = (double)g->conc[ci] * (g->budgets[b] + 1);
				(*case_of)[i] = project_mc_case_of(mc, m, &in, 0);
				(*lane_of)[i] = project_accept_lane(acc, g->block, g->budgets[b]);
				if ((*case_of)[i] < 0 || (*lane_of)[i] < 0)
					return (int)((*case_of)[i] < 0 ? (*case_of)[i] : (*lane_of)[i]);
				g->curve_accept[b] = project_accept_curve(acc, (size_t)(*lane_of)[i]);
			}
	return 0;
}

/* The (target, C) race r's best and runner-up: least and next least regret. */
static void grid_choose(struct project_grid *g, int r)
{
	struct project_cell *x = g->cells + (size_t)r * g->nbudgets;
	int best = 0, next = g->nbudgets > 1 ? 1 : 0;
	for (int b = 1; b < g->nbudgets; b++)
		if (x[b].regret < x[best].regret)
			best = b;
	if (next == best)
		next = 0;
	for (int b = 0; b < g->nbudgets; b++)
		if (b != best && x[b].regret < x[next].regret)
			next = b;
	g->best[r] = best;
	g->runner[r] = next;
	x[best].best = 1;
	x[next].runner = next != best;
}

/* Grid results: each cell's bands (its acceptance and step drawn
 * together), how often it wins, its regret; the best budget and the
 * runner-up per (target, C). */
static void grid_finish(struct projection *p, struct mc *mc, const long *case_of,
			const long *lane_of, int cal)
{
	struct project_grid *g = &p->grid;
	size_t n = mc->nsamples, ncells = (size_t)g->ntargets * g->nconc * g->nbudgets;
	double *tok = malloc(n * sizeof *tok), q[3];
	for (size_t i = 0; i < ncells; i++) {
		struct project_cell *cell = &g->cells[i];
		const struct project_accept_lane *l = &mc->acc->lanes[lane_of[i]];
		const double *a = project_accept_draws(mc->acc, (size_t)lane_of[i]);
		const double *st = mc->step + (size_t)case_of[i] * n;
		int ci = (int)(i / g->nbudgets % g->nconc);
		double C = g->conc[ci], cap = fmin(g->block, l->budget + 1);
		cell->p_best = (double)mc->wins[i] / (double)n;
		cell->regret = mc->regret[i];
		cell->accept = l->point;
		cell->accept_capped = l->point >= cap - 1e-9;
		cell->accept_lower = l->k_limited > 0;
		project_mc_band(mc, (size_t)case_of[i], cal, &cell->step_ms);
		cell->tok_s = project_mc_tok_band(&cell->step_ms, C, cell->accept);
		if (!tok)
			continue;
		for (size_t s = 0; s < n; s++)
			tok[s] = C * a[s] * 1000.0 / st[s];
		project_mc_quantiles3(tok, n, mc->scratch, mc->qw, q);
		cell->tok_s.p5 = q[0], cell->tok_s.p50 = q[1], cell->tok_s.p95 = q[2];
	}
	free(tok);
	for (int r = 0; r < g->ntargets * g->nconc; r++)
		grid_choose(g, r);
}

/* Fills row r of scenario s at acceptance [lo, hi] (its point components
 * from m, the seed's values). */
static void row_fill(struct project_row *r, const struct calib *c, const struct model *m,
		     const struct scenario *s, const struct gpu *g, double lo, double hi)
{
	struct model_in in = {g, s->pipeline, s->block, s->budget, s->concurrency, (lo + hi) / 2,
			      s->context};
	struct model_out o;
	model_eval(m, &in, &o);
	snprintf(r->scenario, sizeof r->scenario, "%s", s->name);
	snprintf(r->target, sizeof r->target, "%s", s->target);
	r->pipeline = s->pipeline;
	r->estimator = s->estimator;
	r->block = s->block;
	r->budget = s->budget;
	r->concurrency = s->concurrency;
	r->context = s->context;
	r->M = o.M;
	r->accept = (lo + hi) / 2;
	r->accept_lo = lo;
	r->accept_hi = hi;
	r->runnable = s->runnable;
	snprintf(r->note, sizeof r->note, "%s", s->note);
	if (s->pipeline == PIPE_SGLANG && s->budget > c->sglang_max_budget) {
		r->runnable = 0;
		if (!r->note[0])
			snprintf(r->note, sizeof r->note, "budget > %g needs the native engine",
				 c->sglang_max_budget);
	}
	memcpy(r->ms, o.ms, sizeof r->ms);
	r->moe_ms = o.ms[COMP_MOE];
	r->nonmoe_ms = o.nonmoe_ms;
	r->moe_xfer = calib_xfer_index(c, m->ref_gpu, g, o.M) >= 0;
	r->xfer_cover_pct = r->xfer_err_pct = r->xfer_gap_pct = NAN;
}

/* A row's acceptance from the source: lane l of acc. Returns its index or
 * a negative error code. */
static long row_lane(struct project_accept *acc, const struct scenario *s)
{
	if (acc->kind != ACCEPT_TRACE)
		return err_set(DDT_EINPUT, "scenario %s: accept: curve takes the acceptance from a "
			       "drafter trace (projection.acceptance_curve.trace); the published "
			       "curve is another model and task: type the acceptance", s->name);
	return project_accept_lane(acc, s->block, s->budget);
}

/* The point rows (before any band): the seed's scenarios one per
 * acceptance, ddt's one per scenario (a list of acceptances is a range),
 * one per scenario of `accept: curve` (the source's lane: its mean, its
 * interval). */
static int rows_setup(struct projection *p, const struct calib *c, const struct scenario *scs,
		      size_t n, struct mc *mc, const struct model *m, struct project_accept *acc,
		      long **case_of, long **lane_of)
{
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += scs[i].accept_curve ? 1 : (size_t)scs[i].naccept;
	p->rows = calloc(total ? total : 1, sizeof *p->rows);
	*case_of = calloc(total ? total : 1, sizeof **case_of);
	*lane_of = calloc(total ? total : 1, sizeof **lane_of);
	if (!p->rows || !*case_of || !*lane_of)
		return err_nomem();
	for (size_t i = 0; i < n; i++) {
		const struct scenario *s = &scs[i];
		const struct gpu *g = calib_gpu(c, s->target);
		int range = s->estimator == EST_CALIBRATED && s->naccept > 1;
		long lane = -1;
		if (!g)
			return err_set(DDT_EINPUT, "scenario %s: target '%s' is not in the GPU catalog",
				       s->name, s->target);
		if (s->context > c->model.context_tokens)
			return err_set(DDT_EINPUT, "scenario %s: context %d is beyond the model's %g "
				       "tokens", s->name, s->context, c->model.context_tokens);
		if (s->accept_curve && (lane = row_lane(acc, s)) < 0)
			return (int)lane;
		for (int a = 0; a < (range || lane >= 0 ? 1 : s->naccept); a++) {
			const struct project_accept_lane *l = lane >= 0 ? &acc->lanes[lane] : NULL;
			double lo = l ? l->lo : s->accept[a], hi = l ? l->hi : s->accept[a];
			for (int j = 0; range && j < s->naccept; j++)
				lo = fmin(lo, s->accept[j]), hi = fmax(hi, s->accept[j]);
			row_fill(&p->rows[p->nrows], c, m, s, g, lo, hi);
			if (l)
				p->rows[p->nrows].accept = l->point;
			snprintf(p->rows[p->nrows].accept_from, sizeof p->rows[0].accept_from, "%s",
				 l ? "trace" : "typed");
			struct model_in in = {g, s->pipeline, s->block, s->budget, s->concurrency, 1,
					      s->context};
			long k = project_mc_case_of(mc, m, &in, 1);
			if (k < 0)
				return (int)k;
			(*lane_of)[p->nrows] = lane;
			(*case_of)[p->nrows++] = k;
		}
	}
	return 0;
}

/* The MoE band of case k from its kept draws; point: the row's estimator
 * (calibrated: the model at the central inputs). */
static void moe_band(struct mc *mc, struct model *m, size_t k, int cal, struct band *b)
{
	double v[CALIB_MAX_ASM], q[3];
	struct model_out o;
	long col = mc->cases[k].moe_col;
	b->point = b->p5 = b->p50 = b->p95 = NAN;
	if (col >= 0) {
		project_mc_quantiles3(mc->moe + (size_t)col * mc->nsamples, mc->nsamples, mc->scratch, mc->qw, q);
		b->p5 = q[0], b->p50 = q[1], b->p95 = q[2];
	}
	project_mc_use_estimator(mc, m, cal, v);
	if (model_set_values(m, v) == 0) {
		model_case_eval(m, &mc->cases[k].k, &o);
		b->point = o.ms[COMP_MOE];
	}
}

/* Row r's bands from the draws of case k, its point from its estimator
 * (calibrated: the model at the central inputs, the acceptance at its
 * geometric mean over the draws) and the other estimator's figure beside it
 * (a seed row: ddt's median). */
static void row_band(struct project_row *r, struct mc *mc, struct model *m, size_t k, long lane)
{
	int cal = r->estimator == EST_CALIBRATED;
	double q[3], *tok = malloc(mc->nsamples * sizeof *tok);
	double K = r->concurrency * r->accept * 1000.0;
	struct model_out o;

	project_mc_band(mc, k, cal, &r->step_ms);
	r->tok_s = project_mc_tok_band(&r->step_ms, r->concurrency, r->accept);
	moe_band(mc, m, k, cal, &r->moe_band);
	r->extrap_pct = 100 * (exp(mc->cases[k].k.moe_x_sig) - 1);
	if (cal && lane < 0)
		r->tok_s.point = r->concurrency *
				 project_mc_central_accept(mc, r->accept_lo, r->accept_hi) * 1000.0 /
				 r->step_ms.point;
	/* the row's components at its own point (calibrated: the central one) */
	double v[CALIB_MAX_ASM];
	project_mc_use_estimator(mc, m, cal, v);
	if (model_set_values(m, v) == 0) {
		model_case_eval(m, &mc->cases[k].k, &o);
		memcpy(r->ms, o.ms, sizeof r->ms);
		r->moe_ms = o.ms[COMP_MOE];
		r->nonmoe_ms = o.nonmoe_ms;
	}
	if (!tok) {
		r->point_pctile = r->other_pctile = r->other_tok_s = NAN;
		return;
	}
	project_mc_row_tok_draws(mc, k, r->concurrency, r->accept_lo, r->accept_hi, lane, tok);
	if (r->accept_hi > r->accept_lo) {
		project_mc_quantiles3(tok, mc->nsamples, mc->scratch, mc->qw, q);
		r->tok_s.p5 = q[0];
		r->tok_s.p50 = q[1];
		r->tok_s.p95 = q[2];
	}
	r->point_pctile = project_mc_pctile_of(tok, mc->nsamples, r->tok_s.point);
	r->other_tok_s = cal ? K / mc->cases[k].point_step : r->tok_s.p50;
	r->other_pctile = project_mc_pctile_of(tok, mc->nsamples, r->other_tok_s);
	free(tok);
}

static int rows_finish(struct projection *p, struct mc *mc, struct model *m, const long *case_of,
		       int sensitivity)
{
	for (size_t i = 0; i < p->nrows; i++) {
		row_band(&p->rows[i], mc, m, (size_t)case_of[i], mc->row_lane[i]);
		lean_row(mc, m, &p->rows[i], (size_t)case_of[i]);
	}
	if (!sensitivity)
		return 0;
	p->tornado = calloc(p->nrows ? p->nrows : 1, sizeof *p->tornado);
	if (!p->tornado)
		return err_nomem();
	for (size_t i = 0; i < p->nrows; i++) {
		int rc = tornado_row(p, mc, m, &p->rows[i], (size_t)case_of[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* How the draws vary beyond the assumptions, from c and its fit. */
static void mc_spread(struct mc *mc, const struct calib *c)
{
	const struct moe_fit *f = &c->moe_ref.fit;
	int nfree = 0;
	for (int i = 0; i < MOE_P_COUNT; i++)
		nfree += !f->held[i];
	mc->a8_sig = isnan(c->sglang_b8.error_pct) ? 0 : log1p(c->sglang_b8.error_pct / 100);
	mc->b16_sig = isnan(c->sglang_b16.error_pct) ? 0 : log1p(c->sglang_b16.error_pct / 100);
	mc->b16_est = c->sglang_b16.estimate && mc->b16_sig > 0;
	/* exactly determined: the residuals say nothing, so the form is sampled;
	 * more points than parameters: the residuals' scatter, grown for the
	 * parameters' own uncertainty */
	/* either form declared: mix the other in while the fit cannot tell
	 * them apart, or misses its own points by more than the calibration
	 * allows (the form itself is then in doubt) */
	mc->mix_forms = f->ok && (f->npoints <= nfree || f->rms_pct > c->moe_ref.phys.mix_rms_pct);
	/* as many points as parameters but a curve that cannot pass through
	 * them (bounds, a plateau): its residuals are its error, not zero */
	mc->fit_sig = !f->ok			 ? 0
		      : f->npoints > nfree ? f->rms_pct / 100 * sqrt((double)f->npoints / (f->npoints - nfree))
					   : f->rms_pct / 100;
}

/* Notes for the rows beyond the measured M range. */
static int note_extrap(struct projection *p, const struct model *m)
{
	char list[160] = "";
	size_t len = 0;
	int n = 0;
	for (size_t i = 0; i < p->nrows && len < sizeof list - 1; i++)
		if (p->rows[i].extrap_pct > 0 && (i == 0 || p->rows[i - 1].M != p->rows[i].M ||
						  strcmp(p->rows[i - 1].scenario, p->rows[i].scenario)))
			len += (size_t)snprintf(list + len, sizeof list - len, "%s%s (M=%g, +-%.1f%%)",
						n++ ? ", " : "", p->rows[i].scenario, p->rows[i].M,
						p->rows[i].extrap_pct);
	if (!n)
		return 0;
	return add_note(p, "beyond the measured M range (%g-%g on %s): %s; their bands include the "
			"curve's extrapolation error (leaving out the end point and predicting it: "
			"%.1f%% per e-fold of M above, %.1f%% below)",
			m->m_lo, m->m_hi, m->ref_gpu->id, list, 100 * m->xsig_hi, 100 * m->xsig_lo);
}

/* Projects scs with calibration c (a private copy). */
/* mc's assumptions from c: each one's group and point, and which the cases
 * read (every named one, and the anchors' own transfer: their MoE moves
 * with it). */
static void mc_init(struct mc *mc, const struct calib *c, const struct model *m)
{
	mc->c = c;
	mc->nasm = calib_nassumptions(c);
	mc->ngroups = calib_ngroups(c);
	for (int i = 0; i < mc->nasm; i++) {
		mc->group[i] = calib_assumption_group(c, i);
		mc->point[i] = c->asm_[i].point;
		mc->need[i] = i < ASM_COUNT;
	}
	if (m->k8.xfer >= 0)
		mc->need[m->k8.xfer] = 1;
	if (m->k16.xfer >= 0)
		mc->need[m->k16.xfer] = 1;
}

/* The grid's cells of scenario gs as cases of mc, and its races: one per
 * (target, C), lanes the budgets, in cell order. *cell_case, *cell_lane
 * and *race_c are the caller's to free, even on error. Returns 0 or an
 * error code. */
static int grid_races(struct projection *p, const struct project_config *cfg,
		      const struct calib *c, const struct scenario *gs, struct mc *mc,
		      const struct model *m, struct project_accept *acc, long **cell_case, long **cell_lane,
		      int **race_c)
{
	struct project_grid *g = &p->grid;
	int rc;

	p->has_grid = 1;
	if ((rc = grid_setup(p, cfg, c, gs, mc, m, acc, cell_case, cell_lane)) != 0)
		return rc;
	size_t ncells = (size_t)g->ntargets * g->nconc * g->nbudgets;
	mc->nraces = g->ntargets * g->nconc;
	mc->nlanes = g->nbudgets;
	mc->race_case = *cell_case;
	mc->race_acc = *cell_lane;
	if (!(*race_c = malloc((size_t)mc->nraces * sizeof **race_c)) ||
	    !(mc->wins = calloc(ncells, sizeof *mc->wins)) ||
	    !(mc->regret = calloc(ncells, sizeof *mc->regret)))
		return err_nomem();
	for (int r = 0; r < mc->nraces; r++)
		(*race_c)[r] = g->conc[r % g->nconc];
	mc->race_c = *race_c;
	return 0;
}

/* What follows the draws: the notes on them, the fit's report, the
 * backtests and the list of inputs, each reading the model prepared
 * afresh from c. Returns 0 or an error code. */
static int finish_notes(struct projection *p, const struct calib *c, struct model *m,
			const struct mc *mc)
{
	int rc;

	/* the law when a row takes it, or when tonight measured it */
	int ctx = (p->has_grid && p->grid.context > 0) || c->law_ctx.n;
	for (size_t i = 0; i < p->nrows; i++)
		ctx |= p->rows[i].context > 0;
	if (ctx)
		add_note(p, "attention over context: %s", p->context_law);
	if (mc->rejected)
		add_note(p, "%d draws were redrawn: their values left the anchor step shorter than "
			 "its MoE and all-reduce time", mc->rejected);
	if (p->conflict)
		add_note(p, "%s", p->weighting);
	lean_text(p);
	if ((rc = model_prepare(m, c, NULL)) != 0)
		return rc;
	fit_report(p, c, m);
	struct backtest_win win = {c->xback_m_min, c->xback_m_max, NULL};
	if ((rc = backtest(p, c, m)) != 0 || (rc = model_prepare(m, c, NULL)) != 0 ||
	    (rc = list_inputs(p, c, m)) != 0 || (rc = note_extrap(p, m)) != 0 ||
	    (rc = backtest_xgpu(p, c)) != 0 || (rc = backtest_ximpl(p, c, &win)) != 0)
		return rc;
	char gap[PROJECT_NOTE_LEN];
	if (backtest_gap_note(p, c, gap, sizeof gap))
		add_note(p, "%s", gap);
	if (m->growth_clamped)
		return add_note(p, "the sglang_b16 anchor cannot be met with these shares; growth "
				"clamped to %g", m->growth);
	return 0;
}

/* Frees what the draws of mc hold (mc itself is the caller's). */
static void mc_free(struct mc *mc)
{
	free(mc->cases);
	free(mc->step);
	free(mc->moe);
	free(mc->u);
	free(mc->b16);
	free(mc->scratch);
	free(mc->qw);
	free(mc->wins);
	free(mc->regret);
}

/* The acceptance source for scenarios scs[0..n) and the grid of scenario
 * gs (NULL: none): every (block, budget) asked for, a trace replayed.
 * Returns 0 or an error code. */
static int accept_prepare(struct project_accept *acc, const struct project_config *cfg,
			  const struct scenario *scs, size_t n, const struct scenario *gs)
{
	int rc = 0;
	project_accept_init(acc, cfg, gs && !gs->accept_curve ? gs : NULL);
	for (size_t i = 0; i < n && !rc; i++)
		if (scs[i].accept_curve)
			rc = project_accept_want(acc, scs[i].block, scs[i].budget);
	if (!rc && gs)
		rc = grid_want(acc, cfg, gs);
	return rc ? rc : project_accept_replay(acc);
}

/* project_accept_warnings' lines into the notes. */
static void accept_note(void *p, const char *line)
{
	add_note(p, "%s", line);
}

/* After the model's draws: the source's level point (a published curve's:
 * the grid scenario's acceptance at its geometric mean over the draws, as
 * its row's point), its draws (a published level: the same uniform as the
 * grid scenario's row), and the source in words. Returns 0 or DDT_ENOMEM. */
static int accept_draw(struct projection *p, struct mc *mc, struct project_accept *acc,
		       const struct scenario *gs, const struct project_config *cfg)
{
	int rc;
	if (gs && gs->estimator == EST_CALIBRATED && acc->level_hi > acc->level_lo)
		project_accept_set_level_point(acc, project_mc_central_accept(mc, acc->level_lo, acc->level_hi));
	const double *u_level = MC_U(mc, mc->ngroups + KN_ACCEPT);
	if ((rc = project_accept_draw(acc, mc->nsamples, u_level, cfg->seed)) != 0)
		return rc;
	mc->acc = acc;
	copy_str(p->accept_kind, sizeof p->accept_kind,
		 acc->kind == ACCEPT_TRACE ? "trace" : "published");
	project_accept_describe(acc, gs ? gs->name : "the grid scenario", p->accept_source,
		      sizeof p->accept_source);
	project_accept_warnings(acc, accept_note, p); /* lower bounds, small traces: page one */
	if (!p->has_grid)
		return 0;
	struct project_grid *g = &p->grid;
	long l = project_accept_lane(acc, g->block, (int)g->ref_budget);
	g->ref_accept = acc->kind == ACCEPT_PUBLISHED ? acc->level_point
			: l >= 0 ? acc->lanes[l].point : NAN;
	copy_str(g->accept_kind, sizeof g->accept_kind, p->accept_kind);
	copy_str(g->accept_source, sizeof g->accept_source, p->accept_source);
	return 0;
}

/* Where attention over context comes from, in p: the law fitted to
 * tonight's tree_attn rows (c->law_ctx), else MLA's geometry and why no
 * law (p->context_law holds merge_ctx's reason, or nothing: no GPU run). */
static void context_law_text(struct projection *p, const struct calib *c)
{
	const struct ctx_law *l = &c->law_ctx;
	const struct geometry *g = &c->model;
	char why[300];
	if (l->n) {
		snprintf(p->context_law_label, sizeof p->context_law_label,
			 "fit of %d tree_attn rows, R^2 %.3f", l->n, l->r2);
		snprintf(p->context_law, sizeof p->context_law, "%s; b moves to each target with "
			 "its bandwidth, c with its bf16 peak; attn_ctx_eff unused", l->what);
		return;
	}
	copy_str(why, sizeof why, p->context_law[0] ? p->context_law : "no GPU run to fit it to");
	copy_str(p->context_law_label, sizeof p->context_law_label, "geometry fallback");
	snprintf(p->context_law, sizeof p->context_law, "geometry fallback (%s): a context token "
		 "costs its MLA latent KV row, %g + %g values of %g bytes a layer ([kimi-k2-config]), "
		 "read at the target's bandwidth, or %g heads' scores and values over it at its "
		 "bf16 peak, whichever is longer, at attn_ctx_eff", why, g->kv_lora_rank,
		 g->qk_rope_dim, g->kv_cache_bytes, g->attn_heads / g->tp);
}

/* Each row's context_from: its scenario's own context ("scenario"), one
 * it took from the acceptance trace ("trace"), or none ("": the anchors').
 * own[0..n): the scenarios as given. */
static void rows_context_from(struct projection *p, const struct scenario *own, size_t n)
{
	for (size_t i = 0; i < p->nrows; i++) {
		struct project_row *r = &p->rows[i];
		int given = 0;
		for (size_t j = 0; j < n; j++)
			if (!strcmp(own[j].name, r->scenario))
				given = own[j].context > 0;
		copy_str(r->context_from, sizeof r->context_from,
			 !r->context ? "" : given ? "scenario" : "trace");
	}
}

/* The scenarios scs[0..n) with the acceptance trace's mean context given
 * to ddt's (calibrated) ones that have none, into *own (malloc'd; NULL:
 * the trace records no context, scs stand): attention grows linearly in
 * context, so the mean context gives the mean step. The seed's rows keep
 * the anchors' (the seed estimator has no context). Returns 0, DDT_EINPUT
 * (a mean beyond the model's context) or DDT_ENOMEM. */
static int trace_contexts(struct projection *p, const struct calib *c,
			  const struct project_accept *acc, const struct scenario *scs, size_t n,
			  struct scenario **own)
{
	double q[3];
	long long steps = project_accept_context(acc, q);
	long ctx = lround(steps ? q[0] : 0);
	char list[300] = "";
	size_t len = 0;
	*own = NULL;
	if (ctx <= 0)
		return 0;
	if (ctx > c->model.context_tokens)
		return err_set(DDT_EINPUT, "%s: the steps' mean context %ld is beyond the model's %g "
			       "tokens", acc->cfg->accept_trace, ctx, c->model.context_tokens);
	if (!(*own = malloc((n ? n : 1) * sizeof **own)))
		return err_nomem();
	memcpy(*own, scs, n * sizeof *scs);
	for (size_t i = 0; i < n; i++)
		if (!scs[i].context && scs[i].estimator == EST_CALIBRATED) {
			(*own)[i].context = (int)ctx;
			if (len < sizeof list)
				len += (size_t)snprintf(list + len, sizeof list - len, "%s%s",
							len ? ", " : "", scs[i].name);
		}
	if (!len)
		return 0;
	return add_note(p, "context from the acceptance trace: %s take%s its steps' mean context, "
			"%ld tokens (%lld steps record it, p5-p95 %.0f-%.0f): attention grows "
			"linearly in context, so the mean context gives the mean step", list,
			strchr(list, ',') ? "" : "s", ctx, steps, q[1], q[2]);
}

/* Projects scenarios scs[0..n) into p by cfg, on a copy of c0 with
 * tonight's run folded in (run: NULL for none). Returns 0 or an error code. */
static int compute(struct projection *p, const struct calib *c0, const struct scenario *scs,
		   size_t n, const struct run_record *run, const struct project_config *cfg)
{
	struct calib *c = malloc(sizeof *c);
	struct model *m = malloc(sizeof *m);
	struct mc mc = {0};
	struct project_accept acc = {0};
	long *row_case = NULL, *cell_case = NULL, *row_lane = NULL, *cell_lane = NULL;
	int *race_c = NULL;
	const struct scenario *gs = NULL;
	struct scenario *own = NULL; /* scs with the trace's context (trace_contexts) */
	int rc = 0;

	if (!c || !m) {
		rc = err_nomem();
		goto done;
	}
	*c = *c0; /* shallow: the catalog and all-reduce table stay the caller's */
	p->schema = PROJECT_SCHEMA;
	p->samples = cfg->samples;
	p->seed = cfg->seed;
	copy_str(p->calibration, sizeof p->calibration, c0->path);
	if (cfg->moe_curve >= 0 && (enum moe_curve_kind)cfg->moe_curve != c->moe_ref.curve) {
		c->moe_ref.curve = (enum moe_curve_kind)cfg->moe_curve;
		if ((rc = calibrate_moe(c)) != 0)
			goto done;
	}
	if (run && (rc = calibrate_tonight(c, run, p)) != 0)
		goto done;
	context_law_text(p, c);
	p->curve = c->moe_ref.curve;
	if ((rc = model_prepare(m, c, NULL)) != 0)
		goto done;
	mc_init(&mc, c, m);
	gs = cfg->grid ? grid_scenario(cfg, scs, n) : NULL;
	if ((rc = accept_prepare(&acc, cfg, scs, n, gs)) != 0 ||
	    (rc = trace_contexts(p, c, &acc, scs, n, &own)) != 0)
		goto done;
	if (own)
		gs = cfg->grid ? grid_scenario(cfg, own, n) : NULL;
	if ((rc = rows_setup(p, c, own ? own : scs, n, &mc, m, &acc, &row_case, &row_lane)) != 0)
		goto done;
	rows_context_from(p, scs, n);
	mc.row_lane = row_lane;
	if (gs && (rc = grid_races(p, cfg, c, gs, &mc, m, &acc, &cell_case, &cell_lane, &race_c)))
		goto done;
	mc_spread(&mc, c);
	if ((rc = project_mc_run(&mc, m, cfg->samples, cfg->seed)) != 0 ||
	    (rc = project_mc_weigh(&mc, p, cfg->seed)) != 0)
		goto done;
	project_mc_central(&mc);
	if ((rc = project_mc_cal_point(&mc, m)) != 0 || (rc = accept_draw(p, &mc, &acc, gs, cfg)) != 0)
		goto done;
	project_mc_keep_central(p, &mc, m);
	if (p->has_grid) {
		project_mc_run_races(&mc);
		grid_finish(p, &mc, cell_case, cell_lane, gs->estimator == EST_CALIBRATED);
	}
	if ((rc = rows_finish(p, &mc, m, row_case, cfg->sensitivity)) != 0)
		goto done;
	rc = finish_notes(p, c, m, &mc);
done:
	mc_free(&mc);
	project_accept_free(&acc);
	free(race_c);
	free(row_case);
	free(row_lane);
	free(cell_case);
	free(cell_lane);
	free(own);
	free(m);
	free(c);
	return rc;
}

int project_scenarios(struct projection *p, const struct calib *c, const struct scenario *scs,
		      size_t n, const struct run_record *run, const struct project_config *cfg)
{
	memset(p, 0, sizeof *p);
	int rc = compute(p, c, scs, n, run, cfg);
	return rc ? rc : project_normalize(p);
}

int project_run(struct projection *p, const struct calib *c, const struct tmpl *t,
		const struct run_record *run, const struct project_config *cfg)
{
	struct project_config own;
	struct ydiag diag = {0};
	int rc;

	memset(p, 0, sizeof *p);
	if (!cfg) {
		if ((rc = project_config_load(&own, t, &diag)) != 0) {
			err_set(rc, "%s", diag.n ? diag.msgs[0] : "projection: bad settings");
			ydiag_free(&diag);
			return rc;
		}
		cfg = &own;
	}
	ydiag_free(&diag);
	rc = compute(p, c, t->scenarios, t->nscenarios, run, cfg);
	snprintf(p->template_name, sizeof p->template_name, "%s", t->name);
	return rc ? rc : project_normalize(p);
}

const struct project_row *project_find_row(const struct projection *p, const char *scenario,
					   double accept)
{
	for (size_t i = 0; i < p->nrows; i++)
		if (!strcmp(p->rows[i].scenario, scenario) && p->rows[i].accept == accept)
			return &p->rows[i];
	return NULL;
}

void project_free(struct projection *p)
{
	for (size_t i = 0; i < p->ntornado; i++)
		free(p->tornado[i].bars);
	free(p->tornado);
	free(p->rows);
	free(p->grid.cells);
	free(p->grid.best);
	free(p->grid.runner);
	free(p->backtest);
	free(p->xback);
	free(p->xsum);
	free(p->iback);
	free(p->isum);
	free(p->ipts);
	free(p->inputs);
	free(p->notes);
	memset(p, 0, sizeof *p);
}
