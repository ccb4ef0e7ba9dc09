/* project_rows.c - what the projection says of its rows beside their bands:
 * each row's tornado and lean, the summary of the leans, the MoE fit's
 * report and its backtest. */
#include "project_parts.h"

#include "backtest.h"
#include "err.h"
#include "fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- rows */

static int cmp_bar(const void *a, const void *b)
{
	const struct project_bar *x = a, *y = b;
	if (x->swing != y->swing)
		return x->swing < y->swing ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The tornado of row r (its case k). */
int project_rows_tornado(struct projection *p, const struct mc *mc, struct model *m,
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
		calib_group_label(&mc->der->xt, g, b->name, sizeof b->name);
		for (int i = 0; i < mc->nasm; i++)
			if (mc->group[i] == g) {
				/* a transfer that carries the implementation gap says so */
				if (i >= ASM_COUNT && mc->der->xt.xfer[i - ASM_COUNT].gap_sigma > 0 &&
				    !strstr(b->name, "+ impl gap"))
					snprintf(b->name + strlen(b->name), sizeof b->name - strlen(b->name),
						 " (GPU + impl gap)");
				const struct dist *d = calibrate_asm(mc->c, mc->der, i);
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
void project_rows_lean(const struct mc *mc, struct model *m, struct project_row *r, size_t k)
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
			calib_group_label(&mc->der->xt, g, r->lean_by, sizeof r->lean_by);
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

void project_rows_lean_text(struct projection *p)
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

void project_rows_fit_report(struct projection *p, const struct calib *c, const struct model *m)
{
	const struct moe_reference *r = calibrate_moe_ref(c, m->der);
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
		q->value = m->der->moe_fit.value[i];
		q->se = m->der->moe_fit.se[i];
		q->held = m->der->moe_fit.held[i];
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
	if (m->der->moe_fit.ok)
		fit_moe_plateau(c, m->ref_gpu, m->der->moe_fit.value, &f->plateau_ms, &f->m_plateau);
	else
		f->plateau_ms = f->m_plateau = NAN;
	char note[1024];
	snprintf(note, sizeof note, "%s%s",
		 r->curve == MOE_CURVE_LINEAR ? "linear curve in use (the seed's; no plateau); "
						"physical fit shown: "
					      : "",
		 m->der->moe_fit.note);
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

int project_rows_backtest(struct projection *p, const struct calib *c, struct model *m)
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
	if (model_prepare(m, c, m->der, NULL))
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
