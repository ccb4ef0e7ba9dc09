/* project_yaml.c - projection.yaml: the writer and the text form (the
 * strict reader: project_read.c). */
#include "project.h"

#include "backtest.h"
#include "project_schema.h"

#include "err.h"
#include "fsx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- writer */

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
		yschema_write_item(y, &project_schema_row, &p->rows[i]);
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
		yschema_write_fields(y, &project_schema_tornado, t);
		yout_key(y, "bars");
		yout_seq(y);
		for (int b = 0; b < t->nbars; b++)
			yschema_write_item(y, &project_schema_bar, &t->bars[b]);
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
	yschema_write_fields(y, &project_schema_grid, g);
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
		yschema_write_item(y, &project_schema_param, &f->params[i]);
	}
	yout_end(y);
	yout_key(y, "points");
	yout_seq(y);
	for (int i = 0; i < f->npoints; i++) {
		yschema_write_item(y, &project_schema_fit_point, &f->points[i]);
	}
	yout_end(y);
	yout_end(y);
}

static void backtest_out(struct yout *y, const struct projection *p)
{
	yout_key(y, "backtest");
	yout_seq(y);
	for (size_t i = 0; i < p->nbacktest; i++) {
		yschema_write_item(y, &project_schema_backtest, &p->backtest[i]);
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
		yschema_write_item(y, &project_schema_xback, &p->xback[i]);
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
		yschema_write_fields(y, &project_schema_head, p);
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
	yschema_write_item(y, &project_schema_central, k);
}

void project_emit(const struct projection *p, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_int(&y, "schema", p->schema);
	yschema_write_fields(&y, &project_schema_ident, p);
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
