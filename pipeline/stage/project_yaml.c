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

void project_emit_xback(const struct projection *p, FILE *fp)
{
	yschema_write_doc(fp, &project_schema_xback_sec, p);
}

void project_emit_sections(struct yout *y, const struct projection *p, unsigned parts)
{
	for (const struct project_schema_part *s = project_schema_doc; s->s; s++)
		if (s->section & parts)
			yschema_write_fields(y, s->s, p);
}

void project_emit(const struct projection *p, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	for (const struct project_schema_part *s = project_schema_doc; s->s; s++)
		yschema_write_fields(&y, s->s, p);
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
