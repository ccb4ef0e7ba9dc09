/* project_yaml.c - projection.yaml: the writer, the strict reader, and the text form. */
#include "project.h"

#include "backtest.h"

#include "err.h"
#include "fsx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writer */

static void band_out(struct yout *y, const char *key, const struct band *b)
{
	yout_key(y, key);
	yout_map_flow(y);
	yout_kv_num(y, "point", b->point);
	yout_kv_num(y, "p5", b->p5);
	yout_kv_num(y, "p50", b->p50);
	yout_kv_num(y, "p95", b->p95);
	yout_end(y);
}

static void kv_bool(struct yout *y, const char *key, int v)
{
	yout_key(y, key);
	yout_bool(y, v);
}

static void rows_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "rows");
	yout_seq(y);
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *r = &p->rows[i];
		yout_map(y);
		yout_kv_str(y, "scenario", r->scenario);
		yout_kv_str(y, "target", r->target);
		yout_kv_str(y, "pipeline", tmpl_pipeline_name(r->pipeline));
		yout_kv_int(y, "block", r->block);
		yout_kv_int(y, "budget", r->budget);
		yout_kv_int(y, "concurrency", r->concurrency);
		yout_kv_int(y, "context", r->context);
		yout_kv_str(y, "context_from", r->context_from);
		yout_kv_num(y, "M", r->M);
		yout_kv_num(y, "accept", r->accept);
		yout_kv_num(y, "accept_lo", r->accept_lo);
		yout_kv_num(y, "accept_hi", r->accept_hi);
		yout_kv_str(y, "accept_from", r->accept_from);
		yout_kv_str(y, "estimator", tmpl_estimator_name(r->estimator));
		kv_bool(y, "runnable", r->runnable);
		yout_kv_str(y, "note", r->note);
		yout_key(y, "ms");
		yout_map_flow(y);
		for (int k = 0; k < COMP_COUNT; k++)
			yout_kv_num(y, model_comp_name((enum model_comp)k), r->ms[k]);
		yout_end(y);
		yout_kv_num(y, "moe_ms", r->moe_ms);
		yout_kv_num(y, "nonmoe_ms", r->nonmoe_ms);
		band_out(y, "step_ms", &r->step_ms);
		band_out(y, "tok_s", &r->tok_s);
		band_out(y, "moe_band", &r->moe_band);
		yout_kv_num(y, "lean_pct", r->lean_pct);
		yout_kv_str(y, "lean_by", r->lean_by);
		yout_kv_num(y, "lean_by_pct", r->lean_by_pct);
		yout_kv_num(y, "point_pctile", r->point_pctile);
		kv_bool(y, "moe_xfer", r->moe_xfer);
		yout_kv_num(y, "other_tok_s", r->other_tok_s);
		yout_kv_num(y, "other_pctile", r->other_pctile);
		yout_kv_num(y, "extrap_pct", r->extrap_pct);
		yout_kv_num(y, "xfer_cover_pct", r->xfer_cover_pct);
		yout_kv_num(y, "xfer_err_pct", r->xfer_err_pct);
		yout_kv_num(y, "xfer_gap_pct", r->xfer_gap_pct);
		yout_end(y);
	}
	yout_end(y);
}

static void tornado_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "tornado");
	yout_seq(y);
	for (size_t i = 0; i < p->ntornado; i++) {
		const struct project_tornado *t = &p->tornado[i];
		yout_map(y);
		yout_kv_str(y, "scenario", t->scenario);
		yout_kv_num(y, "accept", t->accept);
		yout_kv_num(y, "tok_s_point", t->tok_s_point);
		yout_key(y, "bars");
		yout_seq(y);
		for (int b = 0; b < t->nbars; b++) {
			const struct project_bar *r = &t->bars[b];
			yout_map_flow(y);
			yout_kv_str(y, "name", r->name);
			yout_kv_num(y, "value_point", r->value_point);
			yout_kv_num(y, "value_p5", r->value_p5);
			yout_kv_num(y, "value_p95", r->value_p95);
			yout_kv_num(y, "tok_s_p5", r->tok_s_p5);
			yout_kv_num(y, "tok_s_p95", r->tok_s_p95);
			yout_kv_num(y, "swing", r->swing);
			yout_end(y);
		}
		yout_end(y);
		yout_end(y);
	}
	yout_end(y);
}

static void int_list_out(struct yout *y, const char *key, const int *v, int n)
{
	yout_key(y, key);
	yout_seq(y);
	for (int i = 0; i < n; i++)
		yout_int(y, v[i]);
	yout_end(y);
}

static void grid_out(struct yout *y, const struct project_grid *g)
{
	yout_key(y, "grid");
	yout_map(y);
	yout_kv_str(y, "scenario", g->scenario);
	yout_kv_str(y, "pipeline", tmpl_pipeline_name(g->pipeline));
	yout_kv_int(y, "block", g->block);
	yout_kv_int(y, "context", g->context);
	yout_kv_num(y, "ref_budget", g->ref_budget);
	yout_kv_num(y, "ref_accept", g->ref_accept);
	yout_kv_str(y, "accept_kind", g->accept_kind);
	yout_kv_str(y, "accept_source", g->accept_source);
	yout_kv_int(y, "nadded", g->nadded);
	yout_key(y, "targets");
	yout_seq(y);
	for (int t = 0; t < g->ntargets; t++)
		yout_str(y, g->targets[t]);
	yout_end(y);
	int_list_out(y, "concurrency", g->conc, g->nconc);
	int_list_out(y, "budgets", g->budgets, g->nbudgets);
	yout_key(y, "curve_accept");
	yout_seq(y);
	for (int b = 0; b < g->nbudgets; b++)
		yout_num(y, g->curve_accept[b]);
	yout_end(y);
	yout_key(y, "cells"); /* target-major, then concurrency, then budget */
	yout_seq(y);
	for (int t = 0; t < g->ntargets; t++)
		for (int c = 0; c < g->nconc; c++)
			for (int b = 0; b < g->nbudgets; b++) {
				const struct project_cell *x = PROJECT_CELL(g, t, c, b);
				yout_map_flow(y);
				yout_kv_str(y, "target", g->targets[t]);
				yout_kv_int(y, "C", g->conc[c]);
				yout_kv_int(y, "B", g->budgets[b]);
				yout_kv_num(y, "M", x->M);
				yout_kv_num(y, "accept", x->accept);
				kv_bool(y, "capped", x->accept_capped);
				kv_bool(y, "lower_bound", x->accept_lower);
				yout_kv_num(y, "step_point", x->step_ms.point);
				yout_kv_num(y, "step_p5", x->step_ms.p5);
				yout_kv_num(y, "step_p50", x->step_ms.p50);
				yout_kv_num(y, "step_p95", x->step_ms.p95);
				yout_kv_num(y, "tok_point", x->tok_s.point);
				yout_kv_num(y, "tok_p5", x->tok_s.p5);
				yout_kv_num(y, "tok_p50", x->tok_s.p50);
				yout_kv_num(y, "tok_p95", x->tok_s.p95);
				yout_kv_num(y, "p_best", x->p_best);
				yout_kv_num(y, "regret", x->regret);
				kv_bool(y, "best", x->best);
				kv_bool(y, "runner", x->runner);
				yout_end(y);
			}
	yout_end(y);
	yout_end(y);
}

static void fit_out(struct yout *y, const struct project_fit *f)
{
	yout_key(y, "fit");
	yout_map(y);
	yout_kv_str(y, "curve", calib_moe_curve_name(f->curve));
	yout_kv_str(y, "gpu", f->gpu);
	yout_kv_str(y, "source", calib_provenance_name(f->source));
	yout_kv_num(y, "rms_pct", f->rms_pct);
	yout_kv_num(y, "plateau_ms", f->plateau_ms);
	yout_kv_num(y, "m_plateau", f->m_plateau);
	yout_kv_str(y, "note", f->note);
	yout_key(y, "params");
	yout_seq(y);
	for (int i = 0; i < f->nparams; i++) {
		const struct project_param *q = &f->params[i];
		yout_map_flow(y);
		yout_kv_str(y, "name", q->name);
		yout_kv_num(y, "value", q->value);
		yout_kv_num(y, "se", q->se);
		kv_bool(y, "held", q->held);
		yout_kv_str(y, "unit", q->unit);
		yout_end(y);
	}
	yout_end(y);
	yout_key(y, "points");
	yout_seq(y);
	for (int i = 0; i < f->npoints; i++) {
		const struct project_fit_point *q = &f->points[i];
		yout_map_flow(y);
		yout_kv_num(y, "m", q->m);
		yout_kv_num(y, "step_ms", q->step_ms);
		yout_kv_num(y, "fit_ms", q->fit_ms);
		yout_kv_num(y, "resid_pct", q->resid_pct);
		yout_kv_num(y, "loo_ms", q->loo_ms);
		yout_kv_num(y, "loo_pct", q->loo_pct);
		yout_end(y);
	}
	yout_end(y);
	yout_end(y);
}

static void backtest_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "backtest");
	yout_seq(y);
	for (size_t i = 0; i < p->nbacktest; i++) {
		const struct project_backtest *b = &p->backtest[i];
		yout_map(y);
		yout_kv_str(y, "what", b->what);
		yout_kv_num(y, "measured", b->measured);
		yout_kv_num(y, "predicted", b->predicted);
		yout_kv_num(y, "err_pct", b->err_pct);
		yout_kv_str(y, "band_scenario", b->band_scenario);
		yout_kv_num(y, "band_lo_pct", b->band_lo_pct);
		yout_kv_num(y, "band_hi_pct", b->band_hi_pct);
		yout_kv_str(y, "note", b->note);
		yout_end(y);
	}
	yout_end(y);
}

/* A backtest's pooled figures under key "pooled", its class and group
 * keys named k_cls and k_grp. */
static void xsum_out(struct yout *y, const struct project_xsum *sm, size_t n, const char *k_cls,
		     const char *k_grp)
{
	yout_key(y, "pooled");
	yout_seq(y);
	for (size_t i = 0; i < n; i++) {
		const struct project_xsum *x = &sm[i];
		yout_map_flow(y);
		yout_kv_str(y, k_cls, x->cls);
		yout_kv_str(y, k_grp, x->fam);
		yout_kv_int(y, "n", x->n);
		yout_kv_num(y, "cover_pct", x->cover_pct);
		yout_kv_num(y, "med_err_pct", x->med_err_pct);
		yout_kv_num(y, "bias_pct", x->bias_pct);
		yout_kv_num(y, "width_pct", x->width_pct);
		yout_end(y);
	}
	yout_end(y);
}

/* The implementation backtest's pooled figures (xbacktest.implementation). */
static void ximpl_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "implementation");
	yout_map(y);
	yout_kv_int(y, "points", p->iback_n);
	yout_kv_num(y, "cover_pct", p->iback_cover_pct);
	yout_kv_num(y, "err_pct", p->iback_err_pct);
	yout_kv_num(y, "width_pct", p->iback_width_pct);
	yout_kv_num(y, "bias_pct", p->iback_bias_pct);
	xsum_out(y, p->isum, p->nisum, "implementation", "pair");
	yout_end(y);
}

static void xback_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "xbacktest");
	yout_map(y);
	yout_kv_int(y, "points", p->xback_n);
	yout_kv_num(y, "cover_pct", p->xback_cover_pct);
	yout_kv_num(y, "err_pct", p->xback_err_pct);
	yout_key(y, "pairs");
	yout_seq(y);
	for (size_t i = 0; i < p->nxback; i++) {
		const struct project_xback *x = &p->xback[i];
		yout_map_flow(y);
		yout_kv_str(y, "class", x->cls);
		yout_kv_str(y, "from", x->from);
		yout_kv_str(y, "to", x->to);
		yout_kv_int(y, "n", x->n);
		yout_kv_num(y, "cover_pct", x->cover_pct);
		yout_kv_num(y, "med_err_pct", x->med_err_pct);
		yout_kv_num(y, "max_err_pct", x->max_err_pct);
		yout_kv_num(y, "bias_pct", x->bias_pct);
		yout_kv_num(y, "width_pct", x->width_pct);
		yout_end(y);
	}
	yout_end(y);
	xsum_out(y, p->xsum, p->nxsum, "class", "family");
	ximpl_out(y, p);
	yout_end(y);
}

void project_emit_xback(const struct projection *p, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	xback_out(&y, p);
	yout_end(&y);
}

static void inputs_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "inputs");
	yout_seq(y);
	for (size_t i = 0; i < p->ninputs; i++) {
		const struct project_input *in = &p->inputs[i];
		yout_map_flow(y);
		yout_kv_str(y, "name", in->name);
		yout_kv_num(y, "value", in->value);
		yout_kv_str(y, "prov", calib_provenance_name(in->prov));
		if (in->prov == PROV_OVERRIDE)
			yout_kv_num(y, "was", in->was);
		yout_kv_str(y, "source", in->source);
		yout_end(y);
	}
	yout_end(y);
}

void project_emit_sections(struct yout *y, const struct projection *p, unsigned parts)
{
	if (parts & PROJECT_TEXT_BANDS) {
		yout_kv_int(y, "samples", p->samples);
		yout_kv_int(y, "seed", (long long)p->seed);
		yout_kv_str(y, "curve", calib_moe_curve_name(p->curve));
		kv_bool(y, "recalibrated", p->recalibrated);
		yout_kv_str(y, "measured_on", p->measured_on);
		yout_kv_str(y, "lean", p->lean);
		yout_kv_num(y, "ess", p->ess);
		yout_kv_num(y, "ess_pct", p->ess_pct);
		kv_bool(y, "conflict", p->conflict);
		yout_kv_str(y, "weighting", p->weighting);
		yout_kv_str(y, "accept_kind", p->accept_kind);
		yout_kv_str(y, "accept_source", p->accept_source);
		yout_kv_str(y, "context_law_label", p->context_law_label);
		yout_kv_str(y, "context_law", p->context_law);
		yout_key(y, "notes");
		yout_seq(y);
		for (size_t i = 0; i < p->nnotes; i++)
			yout_str(y, p->notes[i]);
		yout_end(y);
	}
	if (parts & PROJECT_TEXT_TORNADO)
		tornado_out(y, p);
	if ((parts & PROJECT_TEXT_GRID) && p->has_grid)
		grid_out(y, &p->grid);
	if (parts & PROJECT_TEXT_FIT) {
		fit_out(y, &p->fit);
		backtest_out(y, p);
	}
	if (parts & PROJECT_TEXT_XBACK)
		xback_out(y, p);
	if (parts & PROJECT_TEXT_INPUTS)
		inputs_out(y, p);
}

/* The calibrated point (project_central), when kept. */
static void central_out(struct yout *y, const struct projection *p)
{
	const struct project_central *k = &p->central;
	if (!k->have)
		return;
	yout_key(y, "calibrated_point");
	yout_map(y);
	yout_kv_num(y, "a8_step_ms", k->a8_step_ms);
	yout_kv_num(y, "b16_step_ms", k->b16_step_ms);
	yout_kv_num(y, "growth", k->growth);
	yout_kv_num(y, "form", k->form);
	yout_kv_num(y, "moe_scale", k->moe_scale);
	yout_kv_num(y, "z_x", k->z_x);
	yout_key(y, "values");
	yout_seq(y);
	for (int i = 0; i < k->n; i++) {
		yout_map_flow(y);
		yout_kv_str(y, "name", k->name[i]);
		yout_kv_num(y, "value", k->v[i]);
		yout_end(y);
	}
	yout_end(y);
	yout_end(y);
}

void project_emit(const struct projection *p, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_int(&y, "schema", p->schema);
	yout_kv_str(&y, "run_id", p->run_id);
	yout_kv_str(&y, "template", p->template_name);
	yout_kv_str(&y, "calibration", p->calibration);
	project_emit_sections(&y, p, PROJECT_TEXT_BANDS);
	rows_out(&y, p);
	project_emit_sections(&y, p, PROJECT_TEXT_ALL & ~PROJECT_TEXT_BANDS);
	central_out(&y, p);
	yout_end(&y);
}

int project_write(const struct projection *p, const char *path)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	project_emit(p, f.fp);
	return fsx_commit(&f);
}

/* ---------------------------------------------------------------- reader */

#define NUM (Y_REQUIRED | Y_NULLABLE)

/* key's string into dst; flags: Y_REQUIRED, or 0 for a key a projection
 * written before it existed lacks (dst then stays as it is). */
static void str_key(struct yctx *c, struct ydoc_node *m, const char *key, unsigned flags,
		    char *dst, size_t len)
{
	const char *s = NULL;
	if (yget_str(c, m, key, flags, &s) || !s)
		return;
	if (strlen(s) >= len) {
		struct ydoc_node *n = ydoc_get(m, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: longer than %zu characters", key,
			  len - 1);
		return;
	}
	strcpy(dst, s);
}

static void str_in(struct yctx *c, struct ydoc_node *m, const char *key, char *dst, size_t len)
{
	str_key(c, m, key, Y_REQUIRED, dst, len);
}

static void int_in(struct yctx *c, struct ydoc_node *m, const char *key, int *out)
{
	yget_int(c, m, key, Y_REQUIRED, out);
}

static void band_in(struct yctx *c, struct ydoc_node *m, const char *key, struct band *b)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, key, YDOC_MAP, Y_REQUIRED, &n) || !n)
		return;
	yget_num(c, n, "point", NUM, &b->point);
	yget_num(c, n, "p5", NUM, &b->p5);
	yget_num(c, n, "p50", NUM, &b->p50);
	yget_num(c, n, "p95", NUM, &b->p95);
	yget_check_unknown(c, n);
}

static void pipeline_in(struct yctx *c, struct ydoc_node *m, enum pipeline_kind *out)
{
	const char *s = NULL;
	if (!yget_str(c, m, "pipeline", Y_REQUIRED, &s) && s && tmpl_pipeline_parse(s, out)) {
		struct ydoc_node *n = ydoc_get(m, "pipeline");
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "pipeline: expected sglang or native, got '%s'", s);
	}
}

/* A sequence under key (required) with at most max items; NULL on a problem. */
static struct ydoc_node *seq_in(struct yctx *c, struct ydoc_node *m, const char *key, size_t max)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, key, YDOC_SEQ, Y_REQUIRED, &n) || !n)
		return NULL;
	if (n->n > max) {
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: at most %zu items", key, max);
		return NULL;
	}
	return n;
}

static void row_in(struct yctx *c, struct ydoc_node *m, struct project_row *r)
{
	struct ydoc_node *ms = NULL;
	str_in(c, m, "scenario", r->scenario, sizeof r->scenario);
	str_in(c, m, "target", r->target, sizeof r->target);
	pipeline_in(c, m, &r->pipeline);
	int_in(c, m, "block", &r->block);
	int_in(c, m, "budget", &r->budget);
	int_in(c, m, "concurrency", &r->concurrency);
	yget_int(c, m, "context", Y_REQUIRED | Y_NONNEG, &r->context);
	str_key(c, m, "context_from", 0, r->context_from, sizeof r->context_from);
	yget_num(c, m, "M", NUM, &r->M);
	yget_num(c, m, "accept", NUM, &r->accept);
	yget_num(c, m, "accept_lo", NUM, &r->accept_lo);
	yget_num(c, m, "accept_hi", NUM, &r->accept_hi);
	str_in(c, m, "accept_from", r->accept_from, sizeof r->accept_from);
	{
		const char *e = NULL;
		if (!yget_str(c, m, "estimator", Y_REQUIRED, &e) && e &&
		    tmpl_estimator_parse(e, &r->estimator))
			ydiag_add(c->diag, c->file, m->line, m->col,
				  "estimator: expected seed or calibrated, got '%s'", e);
	}
	yget_bool(c, m, "runnable", Y_REQUIRED, &r->runnable);
	str_in(c, m, "note", r->note, sizeof r->note);
	if (!yget_node(c, m, "ms", YDOC_MAP, Y_REQUIRED, &ms) && ms) {
		for (int k = 0; k < COMP_COUNT; k++)
			yget_num(c, ms, model_comp_name((enum model_comp)k), NUM, &r->ms[k]);
		yget_check_unknown(c, ms);
	}
	yget_num(c, m, "moe_ms", NUM, &r->moe_ms);
	yget_num(c, m, "nonmoe_ms", NUM, &r->nonmoe_ms);
	band_in(c, m, "step_ms", &r->step_ms);
	band_in(c, m, "tok_s", &r->tok_s);
	band_in(c, m, "moe_band", &r->moe_band);
	yget_num(c, m, "lean_pct", NUM, &r->lean_pct);
	str_in(c, m, "lean_by", r->lean_by, sizeof r->lean_by);
	yget_num(c, m, "lean_by_pct", NUM, &r->lean_by_pct);
	yget_num(c, m, "point_pctile", NUM, &r->point_pctile);
	yget_bool(c, m, "moe_xfer", Y_REQUIRED, &r->moe_xfer);
	yget_num(c, m, "other_tok_s", NUM, &r->other_tok_s);
	yget_num(c, m, "other_pctile", NUM, &r->other_pctile);
	yget_num(c, m, "extrap_pct", NUM, &r->extrap_pct);
	yget_num(c, m, "xfer_cover_pct", NUM, &r->xfer_cover_pct);
	yget_num(c, m, "xfer_err_pct", NUM, &r->xfer_err_pct);
	r->xfer_gap_pct = NAN;
	yget_num(c, m, "xfer_gap_pct", Y_NULLABLE, &r->xfer_gap_pct);
	yget_check_unknown(c, m);
}

static int tornado_in(struct yctx *c, struct ydoc_node *m, struct project_tornado *t)
{
	struct ydoc_node *bars;
	str_in(c, m, "scenario", t->scenario, sizeof t->scenario);
	yget_num(c, m, "accept", NUM, &t->accept);
	yget_num(c, m, "tok_s_point", NUM, &t->tok_s_point);
	if ((bars = seq_in(c, m, "bars", CALIB_MAX_ASM)) != NULL) {
		t->bars = calloc(bars->n ? bars->n : 1, sizeof *t->bars);
		if (!t->bars)
			return err_nomem();
		for (size_t i = 0; i < bars->n; i++) {
			struct ydoc_node *b = bars->items[i];
			struct project_bar *r = &t->bars[t->nbars++];
			if (yget_expect(c, b, YDOC_MAP, "bar"))
				continue;
			str_in(c, b, "name", r->name, sizeof r->name);
			yget_num(c, b, "value_point", NUM, &r->value_point);
			yget_num(c, b, "value_p5", NUM, &r->value_p5);
			yget_num(c, b, "value_p95", NUM, &r->value_p95);
			yget_num(c, b, "tok_s_p5", NUM, &r->tok_s_p5);
			yget_num(c, b, "tok_s_p95", NUM, &r->tok_s_p95);
			yget_num(c, b, "swing", NUM, &r->swing);
			yget_check_unknown(c, b);
		}
	}
	yget_check_unknown(c, m);
	return 0;
}

static void int_list_in(struct yctx *c, struct ydoc_node *m, const char *key, int *out, int *n,
			int max)
{
	struct ydoc_node *s = seq_in(c, m, key, (size_t)max);
	*n = 0;
	for (size_t i = 0; s && i < s->n; i++) {
		double v;
		if (!yget_node_num(c, s->items[i], key, Y_POSITIVE | Y_INTEGER, &v))
			out[(*n)++] = (int)v;
	}
}

static void cell_in(struct yctx *c, struct ydoc_node *m, struct project_grid *g, int t, int ci,
		    int b)
{
	struct project_cell *x = PROJECT_CELL(g, t, ci, b);
	const char *tg = NULL;
	int C = 0, B = 0;
	if (yget_expect(c, m, YDOC_MAP, "cell"))
		return;
	yget_str(c, m, "target", Y_REQUIRED, &tg);
	int_in(c, m, "C", &C);
	int_in(c, m, "B", &B);
	if ((tg && strcmp(tg, g->targets[t])) || C != g->conc[ci] || B != g->budgets[b])
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "cells: expected %s C=%d B=%d here (target-major order)", g->targets[t],
			  g->conc[ci], g->budgets[b]);
	yget_num(c, m, "M", NUM, &x->M);
	yget_num(c, m, "accept", NUM, &x->accept);
	yget_bool(c, m, "capped", Y_REQUIRED, &x->accept_capped);
	yget_bool(c, m, "lower_bound", 0, &x->accept_lower); /* runs before it: absent */
	yget_num(c, m, "step_point", NUM, &x->step_ms.point);
	yget_num(c, m, "step_p5", NUM, &x->step_ms.p5);
	yget_num(c, m, "step_p50", NUM, &x->step_ms.p50);
	yget_num(c, m, "step_p95", NUM, &x->step_ms.p95);
	yget_num(c, m, "tok_point", NUM, &x->tok_s.point);
	yget_num(c, m, "tok_p5", NUM, &x->tok_s.p5);
	yget_num(c, m, "tok_p50", NUM, &x->tok_s.p50);
	yget_num(c, m, "tok_p95", NUM, &x->tok_s.p95);
	yget_num(c, m, "p_best", NUM, &x->p_best);
	yget_num(c, m, "regret", NUM, &x->regret);
	yget_bool(c, m, "best", Y_REQUIRED, &x->best);
	yget_bool(c, m, "runner", Y_REQUIRED, &x->runner);
	yget_check_unknown(c, m);
	if (x->best)
		g->best[t * g->nconc + ci] = b;
	if (x->runner)
		g->runner[t * g->nconc + ci] = b;
}

static int grid_in(struct yctx *c, struct ydoc_node *m, struct project_grid *g)
{
	struct ydoc_node *s, *cells;
	str_in(c, m, "scenario", g->scenario, sizeof g->scenario);
	pipeline_in(c, m, &g->pipeline);
	int_in(c, m, "block", &g->block);
	yget_int(c, m, "context", Y_REQUIRED | Y_NONNEG, &g->context);
	yget_num(c, m, "ref_budget", NUM, &g->ref_budget);
	yget_num(c, m, "ref_accept", NUM, &g->ref_accept);
	str_in(c, m, "accept_kind", g->accept_kind, sizeof g->accept_kind);
	str_in(c, m, "accept_source", g->accept_source, sizeof g->accept_source);
	int_in(c, m, "nadded", &g->nadded);
	if ((s = seq_in(c, m, "targets", PROJECT_MAX_GRID_TARGETS)) != NULL)
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_SCALAR, "targets"))
				snprintf(g->targets[g->ntargets++], sizeof g->targets[0], "%s",
					 s->items[i]->str);
	int_list_in(c, m, "concurrency", g->conc, &g->nconc, PROJECT_MAX_GRID_CONC);
	int_list_in(c, m, "budgets", g->budgets, &g->nbudgets, PROJECT_MAX_GRID_BUDGETS);
	if ((s = seq_in(c, m, "curve_accept", PROJECT_MAX_GRID_BUDGETS)) != NULL) {
		if ((int)s->n != g->nbudgets)
			ydiag_add(c->diag, c->file, s->line, s->col, "curve_accept: one per budget");
		for (size_t i = 0; i < s->n; i++)
			yget_node_num(c, s->items[i], "curve_accept", Y_NULLABLE, &g->curve_accept[i]);
	}
	size_t n = (size_t)g->ntargets * g->nconc * g->nbudgets;
	g->cells = calloc(n ? n : 1, sizeof *g->cells);
	g->best = calloc((size_t)(g->ntargets * g->nconc) + 1, sizeof *g->best);
	g->runner = calloc((size_t)(g->ntargets * g->nconc) + 1, sizeof *g->runner);
	if (!g->cells || !g->best || !g->runner)
		return err_nomem();
	if ((cells = seq_in(c, m, "cells", n)) != NULL) {
		if (cells->n != n)
			ydiag_add(c->diag, c->file, cells->line, cells->col,
				  "cells: expected %zu (targets x concurrency x budgets), got %zu", n,
				  cells->n);
		else
			for (size_t i = 0; i < n; i++)
				cell_in(c, cells->items[i], g, (int)(i / (g->nconc * g->nbudgets)),
					(int)(i / g->nbudgets % g->nconc), (int)(i % g->nbudgets));
	}
	yget_check_unknown(c, m);
	return 0;
}

static void fit_in(struct yctx *c, struct ydoc_node *m, struct project_fit *f)
{
	struct ydoc_node *s;
	const char *str = NULL;
	if (!yget_str(c, m, "curve", Y_REQUIRED, &str) && str && calib_moe_curve_parse(str, &f->curve))
		ydiag_add(c->diag, c->file, m->line, m->col, "curve: expected linear or physical");
	str_in(c, m, "gpu", f->gpu, sizeof f->gpu);
	str = NULL;
	if (!yget_str(c, m, "source", Y_REQUIRED, &str) && str && calib_provenance_parse(str, &f->source))
		ydiag_add(c->diag, c->file, m->line, m->col, "source: unknown provenance '%s'", str);
	yget_num(c, m, "rms_pct", NUM, &f->rms_pct);
	yget_num(c, m, "plateau_ms", NUM, &f->plateau_ms);
	yget_num(c, m, "m_plateau", NUM, &f->m_plateau);
	str_in(c, m, "note", f->note, sizeof f->note);
	if ((s = seq_in(c, m, "params", PROJECT_MAX_FIT_PARAMS)) != NULL)
		for (size_t i = 0; i < s->n; i++) {
			struct project_param *q = &f->params[f->nparams++];
			struct ydoc_node *it = s->items[i];
			if (yget_expect(c, it, YDOC_MAP, "param"))
				continue;
			str_in(c, it, "name", q->name, sizeof q->name);
			yget_num(c, it, "value", NUM, &q->value);
			yget_num(c, it, "se", NUM, &q->se);
			yget_bool(c, it, "held", Y_REQUIRED, &q->held);
			str_in(c, it, "unit", q->unit, sizeof q->unit);
			yget_check_unknown(c, it);
		}
	if ((s = seq_in(c, m, "points", PROJECT_MAX_FIT_POINTS)) != NULL)
		for (size_t i = 0; i < s->n; i++) {
			struct project_fit_point *q = &f->points[f->npoints++];
			struct ydoc_node *it = s->items[i];
			if (yget_expect(c, it, YDOC_MAP, "point"))
				continue;
			yget_num(c, it, "m", NUM, &q->m);
			yget_num(c, it, "step_ms", NUM, &q->step_ms);
			yget_num(c, it, "fit_ms", NUM, &q->fit_ms);
			yget_num(c, it, "resid_pct", NUM, &q->resid_pct);
			yget_num(c, it, "loo_ms", NUM, &q->loo_ms);
			yget_num(c, it, "loo_pct", NUM, &q->loo_pct);
			yget_check_unknown(c, it);
		}
	yget_check_unknown(c, m);
}

static void backtest_in(struct yctx *c, struct ydoc_node *m, struct project_backtest *b)
{
	str_in(c, m, "what", b->what, sizeof b->what);
	yget_num(c, m, "measured", NUM, &b->measured);
	yget_num(c, m, "predicted", NUM, &b->predicted);
	yget_num(c, m, "err_pct", NUM, &b->err_pct);
	str_in(c, m, "band_scenario", b->band_scenario, sizeof b->band_scenario);
	yget_num(c, m, "band_lo_pct", NUM, &b->band_lo_pct);
	yget_num(c, m, "band_hi_pct", NUM, &b->band_hi_pct);
	str_in(c, m, "note", b->note, sizeof b->note);
	yget_check_unknown(c, m);
}

/* xbacktest.implementation's pooled figures (optional: older records have
 * none; its per-pair list is not read back). */
static void ximpl_in(struct yctx *c, struct ydoc_node *m, struct projection *p)
{
	struct ydoc_node *im = NULL;
	p->iback_cover_pct = p->iback_err_pct = p->iback_width_pct = p->iback_bias_pct = NAN;
	if (yget_node(c, m, "implementation", YDOC_MAP, 0, &im) || !im)
		return;
	yget_int(c, im, "points", Y_REQUIRED, &p->iback_n);
	yget_num(c, im, "cover_pct", NUM, &p->iback_cover_pct);
	yget_num(c, im, "err_pct", NUM, &p->iback_err_pct);
	yget_num(c, im, "width_pct", NUM, &p->iback_width_pct);
	yget_num(c, im, "bias_pct", NUM, &p->iback_bias_pct);
	ydoc_get(im, "pooled");
	yget_check_unknown(c, im);
}

static int xback_in(struct yctx *c, struct ydoc_node *m, struct projection *p)
{
	struct ydoc_node *s;
	yget_int(c, m, "points", Y_REQUIRED, &p->xback_n);
	yget_num(c, m, "cover_pct", NUM, &p->xback_cover_pct);
	yget_num(c, m, "err_pct", NUM, &p->xback_err_pct);
	if ((s = seq_in(c, m, "pairs", 100000)) != NULL) {
		p->xback = calloc(s->n ? s->n : 1, sizeof *p->xback);
		if (!p->xback)
			return err_nomem();
		for (size_t i = 0; i < s->n; i++) {
			struct ydoc_node *it = s->items[i];
			struct project_xback *x = &p->xback[p->nxback++];
			if (yget_expect(c, it, YDOC_MAP, "pair"))
				continue;
			str_in(c, it, "class", x->cls, sizeof x->cls);
			str_in(c, it, "from", x->from, sizeof x->from);
			str_in(c, it, "to", x->to, sizeof x->to);
			int_in(c, it, "n", &x->n);
			yget_num(c, it, "cover_pct", NUM, &x->cover_pct);
			yget_num(c, it, "med_err_pct", NUM, &x->med_err_pct);
			yget_num(c, it, "max_err_pct", NUM, &x->max_err_pct);
			x->bias_pct = x->width_pct = NAN;
			yget_num(c, it, "bias_pct", Y_NULLABLE, &x->bias_pct);
			yget_num(c, it, "width_pct", Y_NULLABLE, &x->width_pct);
			yget_check_unknown(c, it);
		}
	}
	if ((s = seq_in(c, m, "pooled", 10000)) != NULL) {
		p->xsum = calloc(s->n ? s->n : 1, sizeof *p->xsum);
		if (!p->xsum)
			return err_nomem();
		for (size_t i = 0; i < s->n; i++) {
			struct ydoc_node *it = s->items[i];
			struct project_xsum *x = &p->xsum[p->nxsum++];
			if (yget_expect(c, it, YDOC_MAP, "pooled"))
				continue;
			str_in(c, it, "class", x->cls, sizeof x->cls);
			str_in(c, it, "family", x->fam, sizeof x->fam);
			int_in(c, it, "n", &x->n);
			yget_num(c, it, "cover_pct", NUM, &x->cover_pct);
			yget_num(c, it, "med_err_pct", NUM, &x->med_err_pct);
			x->bias_pct = x->width_pct = NAN;
			yget_num(c, it, "bias_pct", Y_NULLABLE, &x->bias_pct);
			yget_num(c, it, "width_pct", Y_NULLABLE, &x->width_pct);
			yget_check_unknown(c, it);
		}
	}
	ximpl_in(c, m, p);
	yget_check_unknown(c, m);
	return 0;
}

static void central_in(struct yctx *c, struct ydoc_node *m, struct project_central *k)
{
	struct ydoc_node *s = NULL;
	k->have = 1;
	yget_num(c, m, "a8_step_ms", NUM, &k->a8_step_ms);
	yget_num(c, m, "b16_step_ms", NUM, &k->b16_step_ms);
	yget_num(c, m, "growth", NUM, &k->growth);
	yget_num(c, m, "form", NUM, &k->form);
	yget_num(c, m, "moe_scale", NUM, &k->moe_scale);
	yget_num(c, m, "z_x", NUM, &k->z_x);
	if (!yget_node(c, m, "values", YDOC_SEQ, Y_REQUIRED, &s) && s)
		for (size_t i = 0; i < s->n && k->n < CALIB_MAX_ASM; i++) {
			struct ydoc_node *e = s->items[i];
			if (yget_expect(c, e, YDOC_MAP, "value"))
				continue;
			str_in(c, e, "name", k->name[k->n], sizeof k->name[k->n]);
			yget_num(c, e, "value", NUM, &k->v[k->n]);
			yget_check_unknown(c, e);
			k->n++;
		}
	yget_check_unknown(c, m);
}

static void input_in(struct yctx *c, struct ydoc_node *m, struct project_input *in)
{
	const char *s = NULL;
	str_in(c, m, "name", in->name, sizeof in->name);
	yget_num(c, m, "value", NUM, &in->value);
	if (!yget_str(c, m, "prov", Y_REQUIRED, &s) && s && calib_provenance_parse(s, &in->prov))
		ydiag_add(c->diag, c->file, m->line, m->col, "prov: unknown provenance '%s'", s);
	in->was = NAN;
	yget_num(c, m, "was", Y_NULLABLE, &in->was);
	str_in(c, m, "source", in->source, sizeof in->source);
	yget_check_unknown(c, m);
}

/* Allocates n items of size sz into *out (at least one). */
static int alloc_n(void *out, size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);
	*(void **)out = p;
	return p ? 0 : err_nomem();
}

static int read_root(struct projection *p, struct yctx *c, struct ydoc_node *root)
{
	struct ydoc_node *s, *g = NULL, *f = NULL;
	const char *curve = NULL;
	double seed = NAN;
	int rc = 0;

	int_in(c, root, "schema", &p->schema);
	if (p->schema != PROJECT_SCHEMA) {
		ydiag_add(c->diag, c->file, root->line, root->col,
			  "schema: this ddt reads projection schema %d, got %d", PROJECT_SCHEMA,
			  p->schema);
		return DDT_EINPUT;
	}
	str_in(c, root, "run_id", p->run_id, sizeof p->run_id);
	str_in(c, root, "template", p->template_name, sizeof p->template_name);
	str_in(c, root, "calibration", p->calibration, sizeof p->calibration);
	int_in(c, root, "samples", &p->samples);
	if (!yget_num(c, root, "seed", Y_REQUIRED | Y_NONNEG | Y_INTEGER, &seed) && !isnan(seed))
		p->seed = (uint64_t)seed;
	if (!yget_str(c, root, "curve", Y_REQUIRED, &curve) && curve &&
	    calib_moe_curve_parse(curve, &p->curve))
		ydiag_add(c->diag, c->file, root->line, root->col, "curve: expected linear or physical");
	yget_bool(c, root, "recalibrated", Y_REQUIRED, &p->recalibrated);
	str_in(c, root, "measured_on", p->measured_on, sizeof p->measured_on);
	str_in(c, root, "lean", p->lean, sizeof p->lean);
	yget_num(c, root, "ess", NUM, &p->ess);
	yget_num(c, root, "ess_pct", NUM, &p->ess_pct);
	yget_bool(c, root, "conflict", Y_REQUIRED, &p->conflict);
	str_in(c, root, "weighting", p->weighting, sizeof p->weighting);
	str_in(c, root, "accept_kind", p->accept_kind, sizeof p->accept_kind);
	str_in(c, root, "accept_source", p->accept_source, sizeof p->accept_source);
	str_key(c, root, "context_law_label", 0, p->context_law_label, sizeof p->context_law_label);
	str_key(c, root, "context_law", 0, p->context_law, sizeof p->context_law);
	if ((s = seq_in(c, root, "notes", 1000)) != NULL) {
		if ((rc = alloc_n(&p->notes, s->n, sizeof *p->notes)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_SCALAR, "notes"))
				snprintf(p->notes[p->nnotes++], sizeof *p->notes, "%s", s->items[i]->str);
	}
	if ((s = seq_in(c, root, "rows", 100000)) != NULL) {
		if ((rc = alloc_n(&p->rows, s->n, sizeof *p->rows)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "row"))
				row_in(c, s->items[i], &p->rows[p->nrows++]);
	}
	if ((s = seq_in(c, root, "tornado", 100000)) != NULL) {
		if ((rc = alloc_n(&p->tornado, s->n, sizeof *p->tornado)))
			return rc;
		for (size_t i = 0; i < s->n && !rc; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "tornado"))
				rc = tornado_in(c, s->items[i], &p->tornado[p->ntornado++]);
		if (rc)
			return rc;
	}
	if (!yget_node(c, root, "grid", YDOC_MAP, 0, &g) && g) {
		p->has_grid = 1;
		if ((rc = grid_in(c, g, &p->grid)))
			return rc;
	}
	if (!yget_node(c, root, "fit", YDOC_MAP, Y_REQUIRED, &f) && f)
		fit_in(c, f, &p->fit);
	if ((s = seq_in(c, root, "backtest", 1000)) != NULL) {
		if ((rc = alloc_n(&p->backtest, s->n, sizeof *p->backtest)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "backtest"))
				backtest_in(c, s->items[i], &p->backtest[p->nbacktest++]);
	}
	if (!yget_node(c, root, "xbacktest", YDOC_MAP, Y_REQUIRED, &g) && g &&
	    (rc = xback_in(c, g, p)))
		return rc;
	if ((s = seq_in(c, root, "inputs", 100000)) != NULL) {
		if ((rc = alloc_n(&p->inputs, s->n, sizeof *p->inputs)))
			return rc;
		for (size_t i = 0; i < s->n; i++)
			if (!yget_expect(c, s->items[i], YDOC_MAP, "input"))
				input_in(c, s->items[i], &p->inputs[p->ninputs++]);
	}
	if (!yget_node(c, root, "calibrated_point", YDOC_MAP, 0, &g) && g)
		central_in(c, g, &p->central);
	yget_check_unknown(c, root);
	return 0;
}

/* Parses a projection document already loaded. */
static int project_parse(struct projection *p, struct ydoc *doc, struct ydiag *diag)
{
	struct yctx c = {doc->file, diag};
	size_t before = diag->n;
	int rc;
	if (!doc->root) {
		ydiag_add(diag, doc->file, 0, 0, "empty projection");
		return DDT_EINPUT;
	}
	if (yget_expect(&c, doc->root, YDOC_MAP, "projection"))
		return DDT_EINPUT;
	if ((rc = read_root(p, &c, doc->root)) != 0)
		return rc;
	return diag->n > before ? DDT_EINPUT : 0;
}

int project_read(struct projection *p, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	int rc;
	memset(p, 0, sizeof *p);
	if ((rc = ydoc_load_file(&doc, path, diag)) == 0)
		rc = project_parse(p, doc, diag);
	ydoc_free(doc);
	return rc;
}

int project_normalize(struct projection *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct projection q;
	struct ydiag diag = {0};
	struct ydoc *doc = NULL;
	int rc;

	if (!fp)
		return err_nomem();
	project_emit(p, fp);
	if (fclose(fp) != 0) {
		free(buf);
		return err_nomem();
	}
	memset(&q, 0, sizeof q);
	rc = ydoc_load_buf(&doc, "projection", buf, len, &diag);
	if (!rc)
		rc = project_parse(&q, doc, &diag);
	if (rc)
		err_set(rc, "projection: %s", diag.n ? diag.msgs[0] : err_msg());
	ydoc_free(doc);
	ydiag_free(&diag);
	free(buf);
	if (rc) {
		project_free(&q);
		return rc;
	}
	project_free(p);
	*p = q;
	return 0;
}

/* ---------------------------------------------------------------- text */

static void text_rows(const struct projection *p, FILE *fp)
{
	fprintf(fp, "%-18s %-10s %-7s %5s %7s %-5s %8s %8s %8s %8s %8s  %-18s %s\n", "scenario",
		"estimator", "target", "M", "accept", "from", "step_ms", "tok/s", "p5", "p50", "p95",
		"other estimator", "backtest");
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *r = &p->rows[i];
		char acc[48], other[48], bt[48] = "-";
		if (!strcmp(r->accept_from, "trace"))
			snprintf(acc, sizeof acc, "%.3g", r->accept);
		else if (r->accept_hi > r->accept_lo)
			snprintf(acc, sizeof acc, "%g-%g", r->accept_lo, r->accept_hi);
		else
			snprintf(acc, sizeof acc, "%g", r->accept);
		snprintf(other, sizeof other, "%s %.0f at p%.0f",
			 r->estimator == EST_SEED ? "ddt" : "seed", r->other_tok_s, r->other_pctile);
		if (!isnan(r->xfer_cover_pct))
			snprintf(bt, sizeof bt, "%.0f%% in, %.1f%% err", r->xfer_cover_pct,
				 r->xfer_err_pct);
		fprintf(fp, "%-18s %-10s %-7s %5g %7s %-5s %8.3f %8.1f %8.1f %8.1f %8.1f  %-18s %s%s\n",
			r->scenario, tmpl_estimator_name(r->estimator), r->target, r->M, acc, r->accept_from,
			r->step_ms.point, r->tok_s.point, r->tok_s.p5, r->tok_s.p50, r->tok_s.p95,
			other, bt, r->runnable ? "" : "  [not runnable]");
	}
	fprintf(fp, "(seed: the seed's estimator, its point and where it falls in ddt's band; "
		    "calibrated: ddt's, point = the model at the calibrated central inputs, "
		    "within 1%% of the median; from: typed (the scenario's accept) or trace (its "
		    "mean, the bootstrap interval drawn); backtest: the transfer to this target "
		    "backtested with whole implementations held out (else GPUs), share of "
		    "held-out measurements inside p5-p95 and median |error|)\n");
}

static void text_tornado(const struct projection *p, FILE *fp)
{
	for (size_t i = 0; i < p->ntornado; i++) {
		const struct project_tornado *t = &p->tornado[i];
		fprintf(fp, "\ntornado %s accept %g (point %.1f tok/s)%s\n", t->scenario, t->accept,
			t->tok_s_point, t->nbars ? "" : ": pinned to an anchor, no assumption moves it");
		if (!t->nbars)
			continue;
		fprintf(fp, "  %-56s %9s %9s %9s\n", "assumption (value at p5 .. p95)", "tok/s@p5",
			"tok/s@p95", "swing");
		for (int b = 0; b < t->nbars; b++) {
			const struct project_bar *x = &t->bars[b];
			char name[128];
			snprintf(name, sizeof name, "%s (%.3g..%.3g)", x->name, x->value_p5,
				 x->value_p95);
			fprintf(fp, "  %-56s %9.1f %9.1f %9.1f\n", name, x->tok_s_p5, x->tok_s_p95,
				x->swing);
		}
	}
}

static void text_grid(const struct projection *p, FILE *fp)
{
	const struct project_grid *g = &p->grid;
	if (!p->has_grid)
		return;
	fprintf(fp, "\nbest budget per target and concurrency (%s pipeline, block %d; the budget "
		    "of least expected regret over the draws)\nacceptance: %s\n",
		tmpl_pipeline_name(g->pipeline), g->block, g->accept_source);
	fprintf(fp, "  %-13s %4s %6s %7s %9s %9s %9s %7s %8s   %s\n", "target", "C", "B", "accept",
		"tok/s", "p5", "p95", "P(best)", "regret", "runner-up: B, P(best), regret");
	for (int t = 0; t < g->ntargets; t++)
		for (int c = 0; c < g->nconc; c++) {
			int b = g->best[t * g->nconc + c], r = g->runner[t * g->nconc + c];
			const struct project_cell *x = PROJECT_CELL(g, t, c, b);
			const struct project_cell *y = PROJECT_CELL(g, t, c, r);
			fprintf(fp, "  %-13s %4d %6d %7.2f %9.1f %9.1f %9.1f %6.0f%% %8.1f   ",
				g->targets[t], g->conc[c], g->budgets[b], x->accept, x->tok_s.point,
				x->tok_s.p5, x->tok_s.p95, 100 * x->p_best, x->regret);
			if (r != b)
				fprintf(fp, "%d, %.0f%%, %.1f\n", g->budgets[r], 100 * y->p_best,
					y->regret);
			else
				fprintf(fp, "-\n");
		}
	fprintf(fp, "(regret: mean over the draws of the draw's best tok/s minus this budget's; "
		    "budgets: the template's");
	if (g->nadded) {
		fprintf(fp, " and %d added around the optima:", g->nadded);
		for (int b = 0; b < g->nbudgets; b++)
			if (g->budgets[b] & (g->budgets[b] - 1))
				fprintf(fp, " %d", g->budgets[b]);
	}
	fprintf(fp, ")\n");
}

static void text_fit(const struct projection *p, FILE *fp)
{
	const struct project_fit *f = &p->fit;
	fprintf(fp, "\nMoE curve: %s, points from %s (%s)\n", calib_moe_curve_name(f->curve), f->gpu,
		calib_provenance_name(f->source));
	for (int i = 0; i < f->nparams; i++) {
		const struct project_param *q = &f->params[i];
		fprintf(fp, "  %-11s %10.4g %s", q->name, q->value, q->unit);
		if (q->held)
			fprintf(fp, "  (held)");
		else if (!isnan(q->se))
			fprintf(fp, "  (fitted, se %.2g)", q->se);
		else
			fprintf(fp, "  (fitted)");
		fputc('\n', fp);
	}
	if (!isnan(f->plateau_ms))
		fprintf(fp, "  plateau %.3g ms on %s, 95%% of it at M=%.0f\n", f->plateau_ms, f->gpu,
			f->m_plateau);
	fprintf(fp, "  %6s %9s %9s %8s %9s %8s\n", "m", "measured", "fit", "resid", "left out",
		"error");
	for (int i = 0; i < f->npoints; i++) {
		const struct project_fit_point *q = &f->points[i];
		fprintf(fp, "  %6g %9.3f %9.3f %+7.2f%% %9.3f %+7.1f%%\n", q->m, q->step_ms, q->fit_ms,
			q->resid_pct, q->loo_ms, q->loo_pct);
	}
	fprintf(fp, "  note: %s\n", f->note);
	fprintf(fp, "\nbacktest (leave one out) beside the band it is asked to support\n");
	for (size_t i = 0; i < p->nbacktest; i++) {
		const struct project_backtest *b = &p->backtest[i];
		fprintf(fp, "  %-20s measured %8.3f predicted %8.3f error %+6.1f%%  | %s step band "
			    "%+.1f%%..%+.1f%%\n    %s\n",
			b->what, b->measured, b->predicted, b->err_pct, b->band_scenario,
			b->band_lo_pct, b->band_hi_pct, b->note);
	}
}

void project_write_text(const struct projection *p, unsigned parts, FILE *fp)
{
	if (parts & PROJECT_TEXT_BANDS) {
		fprintf(fp, "bands: %d draws, seed %llu, MoE curve %s%s\n", p->samples,
			(unsigned long long)p->seed, calib_moe_curve_name(p->curve),
			p->recalibrated ? ", recalibrated from tonight's GPU run" : "");
		text_rows(p, fp);
		fprintf(fp, "\nacceptance: %s\n", p->accept_source);
		fprintf(fp, "weighting: %s\n", p->weighting);
		fprintf(fp, "lean: %s\n", p->lean);
		for (size_t i = 0; i < p->nnotes; i++)
			fprintf(fp, "note: %s\n", p->notes[i]);
	}
	if (parts & PROJECT_TEXT_TORNADO)
		text_tornado(p, fp);
	if (parts & PROJECT_TEXT_GRID)
		text_grid(p, fp);
	if (parts & PROJECT_TEXT_FIT)
		text_fit(p, fp);
	if ((parts & PROJECT_TEXT_XBACK) && p->nxback) {
		fputc('\n', fp);
		backtest_write_text(p, fp);
	}
}
