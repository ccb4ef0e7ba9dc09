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
#include "project_parts.h"
#include "sort.h"
#include "xfer.h"
#include "rng.h"

#include <gsl/gsl_cdf.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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
	double h = calibrate_law_hold(m->cal, m->der, i);
	if (!isnan(h))
		return h;
	if (isnan(f))
		return m->growth;
	return x != 1 ? (f - 1) / (x - 1) : NAN;
}

/* A model of c and tonight's laws d without the --set holds of the derived
 * inputs (the all-reduce and the laws), for what they replaced: on *du, a
 * copy of d that leaves them out (unheld), to free. */
static int unheld_model(const struct calib *c, const struct calibration *d, struct model *m,
			struct calibration **du)
{
	if (!(*du = malloc(sizeof **du)))
		return err_nomem();
	**du = *d;
	(*du)->unheld = 1;
	return model_prepare(m, c, *du, NULL);
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
	for (int i = 0; i < calib_nassumptions(&m->der->xt) && !rc; i++) {
		const struct dist *d = calibrate_asm(c, m->der, i);
		calib_assumption_label(&m->der->xt, i, name, sizeof name);
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
	struct calibration *du = NULL;
	char name[96];
	int rc = c->nsets ? unheld_model(c, m->der, &u, &du) : 0;
	for (size_t i = 0; i < c->ngpus && !rc; i++) {
		const struct ar_gpu *a = calib_ar(c, c->gpus[i].id);
		snprintf(name, sizeof name, "allreduce.%s.step_ms_at_m%g", c->gpus[i].id, m->m0);
		rc = add_key(p, c, name, model_allreduce_ms(m, &c->gpus[i], m->m0),
			     a->like[0] ? PROV_ASSUMED : PROV_MEASURED, a->source,
			     du ? model_allreduce_ms(&u, &c->gpus[i], m->m0) : NAN);
	}
	const struct comp_law *laws[2] = {&m->der->law_attn, &m->der->law_draft};
	for (int i = 0; i < 2 && !rc; i++) {
		char what[300];
		snprintf(name, sizeof name, "law.%s", i ? "draft" : "attn_lmhead");
		if (laws[i]->n)
			snprintf(what, sizeof what, "%s; value: the growth g that matches it at "
				 "anchors.sglang_b16", laws[i]->what);
		rc = add_key(p, c, name, law_growth(m, i), laws[i]->n ? PROV_TONIGHT : PROV_DERIVED,
			     laws[i]->n ? what : "growth g: share of the time that grows with its "
						 "driver, solved from anchors.sglang_b16",
			     du ? law_growth(&u, i) : NAN);
	}
	free(du);
	return rc;
}

/* Every input of the model under the key --set takes for it. */
static int list_inputs(struct projection *p, const struct calib *c, const struct model *m)
{
	const struct moe_reference *r = calibrate_moe_ref(c, m->der);
	char name[96];
	int rc = list_anchors(p, c);
	for (int i = 0; i < r->npoints && !rc; i++) {
		snprintf(name, sizeof name, "moe_reference.%s.m%g_ms", r->gpu, r->points[i].m);
		rc = add_key(p, c, name, r->points[i].step_ms, r->prov, r->points[i].source, NAN);
	}
	for (int i = 0; i < MOE_P_COUNT && !rc; i++) {
		snprintf(name, sizeof name, "moe_reference.physical.%s",
			 calib_moe_param_name((enum moe_param)i));
		rc = add_key(p, c, name, m->der->moe_fit.value[i],
			     m->der->moe_fit.held[i] ? PROV_CALIBRATION : PROV_DERIVED,
			     m->der->moe_fit.held[i] ? r->phys.source[i]
						    : "fitted to the MoE reference points",
			     NAN);
	}
	rc = rc ? rc : list_assumptions(p, c, m);
	return rc ? rc : list_derived(p, c, m);
}

/* ---------------------------------------------------------------- the run */

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
	r->moe_xfer = calib_xfer_index(&m->der->xt, m->ref_gpu, g, o.M) >= 0;
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
		project_rows_lean(mc, m, &p->rows[i], (size_t)case_of[i]);
	}
	if (!sensitivity)
		return 0;
	p->tornado = calloc(p->nrows ? p->nrows : 1, sizeof *p->tornado);
	if (!p->tornado)
		return err_nomem();
	for (size_t i = 0; i < p->nrows; i++) {
		int rc = project_rows_tornado(p, mc, m, &p->rows[i], (size_t)case_of[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* How the draws vary beyond the assumptions, from c and its fit. */
static void mc_spread(struct mc *mc, const struct calib *c)
{
	const struct moe_fit *f = &mc->der->moe_fit;
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
	mc->der = m->der;
	mc->nasm = calib_nassumptions(&m->der->xt);
	mc->ngroups = calib_ngroups(&m->der->xt);
	for (int i = 0; i < mc->nasm; i++) {
		mc->group[i] = calib_assumption_group(&m->der->xt, i);
		mc->point[i] = calibrate_asm(c, m->der, i)->point;
		mc->need[i] = i < ASM_COUNT;
	}
	if (m->k8.xfer >= 0)
		mc->need[m->k8.xfer] = 1;
	if (m->k16.xfer >= 0)
		mc->need[m->k16.xfer] = 1;
}

/* What follows the draws: the notes on them, the fit's report, the
 * backtests and the list of inputs, each reading the model prepared
 * afresh from c. Returns 0 or an error code. */
static int finish_notes(struct projection *p, const struct calib *c, struct model *m,
			const struct mc *mc)
{
	int rc;

	/* the law when a row takes it, or when tonight measured it */
	int ctx = (p->has_grid && p->grid.context > 0) || m->der->law_ctx.n;
	for (size_t i = 0; i < p->nrows; i++)
		ctx |= p->rows[i].context > 0;
	if (ctx)
		add_note(p, "attention over context: %s", p->context_law);
	if (mc->rejected)
		add_note(p, "%d draws were redrawn: their values left the anchor step shorter than "
			 "its MoE and all-reduce time", mc->rejected);
	if (p->conflict)
		add_note(p, "%s", p->weighting);
	project_rows_lean_text(p);
	if ((rc = model_prepare(m, c, m->der, NULL)) != 0)
		return rc;
	project_rows_fit_report(p, c, m);
	struct backtest_win win = {c->xback_m_min, c->xback_m_max, NULL};
	if ((rc = project_rows_backtest(p, c, m)) != 0 || (rc = model_prepare(m, c, m->der, NULL)) != 0 ||
	    (rc = list_inputs(p, c, m)) != 0 || (rc = note_extrap(p, m)) != 0 ||
	    (rc = backtest_xgpu(p, c, m->der)) != 0 ||
	    (rc = backtest_ximpl(p, c, m->der, &win)) != 0)
		return rc;
	char gap[PROJECT_NOTE_LEN];
	if (backtest_gap_note(p, c, m->der, gap, sizeof gap))
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
		rc = project_grid_want(acc, cfg, gs);
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
 * tonight's tree_attn rows (d->law_ctx), else MLA's geometry and why no
 * law (p->context_law holds merge_ctx's reason, or nothing: no GPU run). */
static void context_law_text(struct projection *p, const struct calib *c,
			     const struct calibration *d)
{
	const struct ctx_law *l = &d->law_ctx;
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

/* Projects scenarios scs[0..n) into p by cfg, on the facts c and the
 * derived calibration the calibrate stage makes of them and d0
 * (calibrate_projection: cfg's curve, tonight's run folded in; run NULL
 * for none). Returns 0 or an error code. */
static int compute(struct projection *p, const struct calib *c, const struct calibration *d0,
		   const struct scenario *scs, size_t n, const struct run_record *run,
		   const struct project_config *cfg)
{
	struct calibration *d = malloc(sizeof *d);
	struct model *m = malloc(sizeof *m);
	struct mc mc = {0};
	struct project_accept acc = {0};
	long *row_case = NULL, *cell_case = NULL, *row_lane = NULL, *cell_lane = NULL;
	int *race_c = NULL;
	const struct scenario *gs = NULL;
	struct scenario *own = NULL; /* scs with the trace's context (trace_contexts) */
	int rc = 0;

	if (!d || !m) {
		rc = err_nomem();
		goto done;
	}
	p->schema = PROJECT_SCHEMA;
	p->samples = cfg->samples;
	p->seed = cfg->seed;
	copy_str(p->calibration, sizeof p->calibration, c->path);
	if ((rc = calibrate_projection(d, c, d0, cfg->moe_curve, run, p)) != 0)
		goto done;
	context_law_text(p, c, d);
	p->curve = calibrate_moe_ref(c, d)->curve;
	if ((rc = model_prepare(m, c, d, NULL)) != 0)
		goto done;
	mc_init(&mc, c, m);
	gs = cfg->grid ? project_grid_scenario(cfg, scs, n) : NULL;
	if ((rc = accept_prepare(&acc, cfg, scs, n, gs)) != 0 ||
	    (rc = trace_contexts(p, c, &acc, scs, n, &own)) != 0)
		goto done;
	if (own)
		gs = cfg->grid ? project_grid_scenario(cfg, own, n) : NULL;
	if ((rc = rows_setup(p, c, own ? own : scs, n, &mc, m, &acc, &row_case, &row_lane)) != 0)
		goto done;
	rows_context_from(p, scs, n);
	mc.row_lane = row_lane;
	if (gs && (rc = project_grid_races(p, cfg, c, gs, &mc, m, &acc, &cell_case, &cell_lane,
					   &race_c)))
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
		project_grid_finish(p, &mc, cell_case, cell_lane, gs->estimator == EST_CALIBRATED);
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
	free(d);
	return rc;
}

int project_scenarios(struct projection *p, const struct calib *c, const struct calibration *d,
		      const struct scenario *scs, size_t n, const struct run_record *run,
		      const struct project_config *cfg)
{
	memset(p, 0, sizeof *p);
	int rc = compute(p, c, d, scs, n, run, cfg);
	return rc ? rc : project_normalize(p);
}

int project_run(struct projection *p, const struct calib *c, const struct calibration *d,
		const struct tmpl *t, const struct run_record *run,
		const struct project_config *cfg)
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
	rc = compute(p, c, d, t->scenarios, t->nscenarios, run, cfg);
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
