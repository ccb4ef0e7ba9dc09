/* estimate.c - point estimates of decode throughput for scenarios, and their tables. */
#include "estimate.h"
#include "csv.h"
#include "estimate_schema.h"

#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int estimate_run(struct estimate *e, const struct model *m, const struct scenario *scs, size_t n)
{
	const struct calib *c = m->cal;
	size_t total = 0;

	memset(e, 0, sizeof *e);
	for (size_t i = 0; i < n; i++)
		total += (size_t)scs[i].naccept;
	e->rows = calloc(total ? total : 1, sizeof *e->rows);
	if (!e->rows)
		return err_nomem();
	for (size_t i = 0; i < n; i++) {
		const struct scenario *s = &scs[i];
		const struct gpu *g = calib_gpu(c, s->target);
		if (!g) {
			estimate_free(e);
			return err_set(DDT_EINPUT, "scenario %s: target '%s' is not in the GPU catalog",
				       s->name, s->target);
		}
		for (int k = 0; k < s->naccept; k++) {
			struct estimate_row *r = &e->rows[e->n++];
			struct model_in in = {g, s->pipeline, s->block, s->budget, s->concurrency,
					      s->accept[k], s->context};
			r->sc = *s;
			r->target = g;
			r->accept = s->accept[k];
			model_eval(m, &in, &r->out);
			r->runnable = s->runnable;
			snprintf(r->note, sizeof r->note, "%s", s->note);
			if (s->pipeline == PIPE_SGLANG && s->budget > c->sglang_max_budget) {
				r->runnable = 0;
				if (!r->note[0])
					snprintf(r->note, sizeof r->note,
						 "budget > %g needs the native engine",
						 c->sglang_max_budget);
			}
		}
	}
	return 0;
}

int estimate_from_projection(struct estimate *e, const struct projection *p,
			     const struct calib *c)
{
	memset(e, 0, sizeof *e);
	e->rows = calloc(p->nrows ? p->nrows : 1, sizeof *e->rows);
	if (!e->rows)
		return err_nomem();
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *pr = &p->rows[i];
		struct estimate_row *r = &e->rows[e->n++];
		if (!(r->target = calib_gpu(c, pr->target))) {
			estimate_free(e);
			return err_set(DDT_EINPUT, "scenario %s: target '%s' is not in the GPU catalog",
				       pr->scenario, pr->target);
		}
		snprintf(r->sc.name, sizeof r->sc.name, "%s", pr->scenario);
		snprintf(r->sc.target, sizeof r->sc.target, "%s", pr->target);
		r->sc.pipeline = pr->pipeline;
		r->sc.estimator = pr->estimator;
		r->sc.block = pr->block;
		r->sc.budget = pr->budget;
		r->sc.concurrency = pr->concurrency;
		r->sc.context = pr->context;
		r->sc.naccept = 1;
		r->sc.accept[0] = pr->accept;
		r->accept = pr->accept;
		r->runnable = pr->runnable;
		snprintf(r->note, sizeof r->note, "%s", pr->note);
		r->out.M = pr->M;
		memcpy(r->out.ms, pr->ms, sizeof r->out.ms);
		r->out.nonmoe_ms = pr->nonmoe_ms;
		r->out.step_ms = pr->step_ms.point;
		r->out.tok_s = pr->tok_s.point;
	}
	return 0;
}

void estimate_free(struct estimate *e)
{
	free(e->rows);
	memset(e, 0, sizeof *e);
}

/* The projection row of estimate row i, or NULL. */
static const struct project_row *band_of(const struct projection *p, size_t i)
{
	return p && i < p->nrows ? &p->rows[i] : NULL;
}

static void csv_sections(const struct projection *p, const struct estimate_source *src, FILE *fp);
static void csv_origin(const struct estimate_source *src, FILE *fp);

/* v in fmt, or "" when it is not a number (an empty CSV field). */
static const char *num_text(char *buf, double v, const char *fmt)
{
	buf[0] = '\0';
	if (isfinite(v))
		snprintf(buf, 32, fmt, v);
	return buf;
}

void estimate_write_csv(const struct estimate *e, const struct projection *p,
			const struct estimate_source *src, FILE *fp)
{
	fprintf(fp, ESTIMATE_CSV_HEADER ",attn_lmhead_ms,draft_ms,tree_ms,overhead_ms,runnable"
					",tok_s_p5,tok_s_p50,tok_s_p95,step_ms_p5,step_ms_p50,"
					"step_ms_p95,allreduce_ms,moe_ms_p5,moe_ms_p50,"
					"moe_ms_p95,estimator,other_tok_s,other_pctile,"
					"xfer_cover_pct,xfer_err_pct,accept_from,accept_lo,"
					"accept_hi,context,context_from,context_law\n");
	for (size_t i = 0; i < e->n; i++) {
		const struct estimate_row *r = &e->rows[i];
		const struct project_row *b = band_of(p, i);
		char n[2][32];
		csv_field(fp, r->sc.name);
		fputc(',', fp);
		csv_field(fp, r->target->id);
		fprintf(fp, ",%s,%d,%d,%d,%g,%g,%.4f,%.4f,%.4f,%.2f,%.4f,%.4f,%.4f,%.4f,%s",
			tmpl_pipeline_name(r->sc.pipeline), r->sc.block, r->sc.budget,
			r->sc.concurrency, r->out.M, r->accept, r->out.ms[COMP_MOE],
			r->out.nonmoe_ms, r->out.step_ms, r->out.tok_s, r->out.ms[COMP_ATTN],
			r->out.ms[COMP_DRAFT], r->out.ms[COMP_TREE], r->out.ms[COMP_OVERHEAD],
			r->runnable ? "yes" : "no");
		if (b)
			fprintf(fp, ",%.2f,%.2f,%.2f,%.4f,%.4f,%.4f", b->tok_s.p5, b->tok_s.p50,
				b->tok_s.p95, b->step_ms.p5, b->step_ms.p50, b->step_ms.p95);
		else
			fputs(",,,,,,", fp);
		fprintf(fp, ",%.4f", r->out.ms[COMP_ALLREDUCE]);
		if (b)
			fprintf(fp, ",%.4f,%.4f,%.4f", b->moe_band.p5, b->moe_band.p50, b->moe_band.p95);
		else
			fputs(",,,", fp);
		fprintf(fp, ",%s", tmpl_estimator_name(r->sc.estimator));
		if (b)
			fprintf(fp, ",%.2f,%.1f,%s,%s,%s,%.4g,%.4g", b->other_tok_s, b->other_pctile,
				num_text(n[0], b->xfer_cover_pct, "%.1f"),
				num_text(n[1], b->xfer_err_pct, "%.2f"), b->accept_from, b->accept_lo,
				b->accept_hi);
		else
			fputs(",,,,,,", fp);
		fprintf(fp, ",%d,%s,", r->sc.context, b ? b->context_from : "");
		csv_field(fp, r->sc.context && p ? p->context_law_label : "");
		fputc('\n', fp);
	}
	csv_sections(p, src, fp);
}

static void csv_tornado(const struct projection *p, FILE *fp)
{
	fputs("\ntornado_scenario,accept,tok_s_point,assumption,value_point,value_p5,value_p95,"
	      "tok_s_at_p5,tok_s_at_p95,swing\n", fp);
	for (size_t i = 0; i < p->ntornado; i++) {
		const struct project_tornado *t = &p->tornado[i];
		for (int b = 0; b < t->nbars; b++) {
			const struct project_bar *x = &t->bars[b];
			csv_field(fp, t->scenario);
			fprintf(fp, ",%g,%.2f,", t->accept, t->tok_s_point);
			csv_field(fp, x->name);
			fprintf(fp, ",%.6g,%.6g,%.6g,%.2f,%.2f,%.2f\n", x->value_point, x->value_p5,
				x->value_p95, x->tok_s_p5, x->tok_s_p95, x->swing);
		}
	}
}

static void csv_grid(const struct project_grid *g, FILE *fp)
{
	fprintf(fp, "\ngrid_target,concurrency,budget,M,accept,accept_capped,accept_lower_bound,step_ms_point,"
		    "step_ms_p5,step_ms_p50,step_ms_p95,tok_s_point,tok_s_p5,tok_s_p50,tok_s_p95,"
		    "p_best,best,regret,runner_up\n");
	for (int t = 0; t < g->ntargets; t++)
		for (int c = 0; c < g->nconc; c++)
			for (int b = 0; b < g->nbudgets; b++) {
				const struct project_cell *x = PROJECT_CELL(g, t, c, b);
				csv_field(fp, g->targets[t]);
				fprintf(fp, ",%d,%d,%g,%.4f,%s,%s,%.4f,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%.2f,"
					    "%.4f,%s,%.2f,%s\n",
					g->conc[c], g->budgets[b], x->M, x->accept,
					x->accept_capped ? "yes" : "no", x->accept_lower ? "yes" : "no",
					x->step_ms.point, x->step_ms.p5,
					x->step_ms.p50, x->step_ms.p95, x->tok_s.point, x->tok_s.p5,
					x->tok_s.p50, x->tok_s.p95, x->p_best, x->best ? "yes" : "no",
					x->regret, x->runner ? "yes" : "no");
			}
}

static void csv_pair(FILE *fp, const char *a, const char *b)
{
	csv_field(fp, a);
	fputc(',', fp);
	csv_field(fp, b);
	fputc('\n', fp);
}

/* The notes the table prints under the rows and the fit: weighting, lean,
 * caveats, the MoE curve. */
static void csv_notes(const struct projection *p, FILE *fp)
{
	const struct project_fit *f = &p->fit;
	char line[600];
	fputs("\nnote\n", fp);
	snprintf(line, sizeof line, "weighting: %s", p->weighting);
	csv_field(fp, line);
	fputc('\n', fp);
	snprintf(line, sizeof line, "lean: %s", p->lean);
	csv_field(fp, line);
	fputc('\n', fp);
	snprintf(line, sizeof line, "acceptance: %s", p->accept_source);
	csv_field(fp, line);
	fputc('\n', fp);
	for (size_t i = 0; i < p->nnotes; i++) {
		csv_field(fp, p->notes[i]);
		fputc('\n', fp);
	}
	snprintf(line, sizeof line, "MoE curve: %s, points from %s (%s); %s",
		 calib_moe_curve_name(f->curve), f->gpu, calib_provenance_name(f->source), f->note);
	csv_field(fp, line);
	fputc('\n', fp);
}

/* The MoE curve's parameters and points, and the leave-one-out backtest. */
static void csv_fit(const struct projection *p, FILE *fp)
{
	const struct project_fit *f = &p->fit;
	char n[2][32];
	fputs("\nfit_param,value,se,held,unit\n", fp);
	for (int i = 0; i < f->nparams; i++) {
		const struct project_param *q = &f->params[i];
		fprintf(fp, "%s,%.6g,%s,%s,", q->name, q->value, num_text(n[0], q->se, "%.3g"),
			q->held ? "yes" : "no");
		csv_field(fp, q->unit);
		fputc('\n', fp);
	}
	fputs("\nfit_m,measured_ms,fit_ms,resid_pct,left_out_ms,left_out_err_pct\n", fp);
	for (int i = 0; i < f->npoints; i++) {
		const struct project_fit_point *q = &f->points[i];
		fprintf(fp, "%g,%.4f,%.4f,%.3f,%s,%s\n", q->m, q->step_ms, q->fit_ms, q->resid_pct,
			num_text(n[0], q->loo_ms, "%.4f"), num_text(n[1], q->loo_pct, "%.2f"));
	}
	fputs("\nbacktest,measured_ms,predicted_ms,err_pct,band_scenario,band_lo_pct,band_hi_pct,"
	      "note\n", fp);
	for (size_t i = 0; i < p->nbacktest; i++) {
		const struct project_backtest *b = &p->backtest[i];
		csv_field(fp, b->what);
		fprintf(fp, ",%.4f,%s,%s,", b->measured, num_text(n[0], b->predicted, "%.4f"),
			num_text(n[1], b->err_pct, "%.2f"));
		csv_field(fp, b->band_scenario);
		fprintf(fp, ",%.2f,%.2f,", b->band_lo_pct, b->band_hi_pct);
		csv_field(fp, b->note);
		fputc('\n', fp);
	}
}

/* The inputs under their --set keys, as the table lists them. */
static void csv_inputs(const struct projection *p, FILE *fp)
{
	char n[32];
	fputs("\ninput,value,basis,was,source\n", fp);
	for (size_t i = 0; i < p->ninputs; i++) {
		const struct project_input *in = &p->inputs[i];
		csv_field(fp, in->name);
		fprintf(fp, ",%.6g,%s,%s,", in->value, calib_provenance_name(in->prov),
			in->prov == PROV_OVERRIDE ? num_text(n, in->was, "%.6g") : "");
		csv_field(fp, in->source);
		fputc('\n', fp);
	}
}

/* The sections after the rows: what the table form shows besides them
 * (tornado, grid, notes, fit and backtest, inputs), then where the estimate
 * came from and its overrides. */
static void csv_sections(const struct projection *p, const struct estimate_source *src, FILE *fp)
{
	if (p && p->ntornado)
		csv_tornado(p, fp);
	if (p && p->has_grid)
		csv_grid(&p->grid, fp);
	if (p) {
		csv_notes(p, fp);
		csv_fit(p, fp);
		csv_inputs(p, fp);
	}
	if (src)
		csv_origin(src, fp);
}

/* made_from's text keys (the record's table), one line each, then one line
 * per argument; then the overrides. */
static void csv_origin(const struct estimate_source *src, FILE *fp)
{
	struct estimate_origin o;
	estimate_origin_of(&o, src);
	fputs("\nmade_from,value\n", fp);
	for (size_t i = 0; i < estimate_schema_made_from.n; i++) {
		const struct yschema_field *f = &estimate_schema_made_from.fields[i];
		if (f->type == YS_STR)
			csv_pair(fp, f->key, (const char *)&o.made_from + f->off);
	}
	for (int i = 0; i < o.made_from.nargs; i++)
		csv_pair(fp, "arg", o.made_from.args[i]);
	fputs("\noverride,value,was\n", fp);
	for (int i = 0; i < o.noverrides; i++) {
		const struct calib_override *v = &o.overrides[i];
		csv_field(fp, v->key);
		fputc(',', fp);
		csv_pair(fp, v->value, v->was);
	}
}

void estimate_write_yaml(const struct estimate *e, const struct projection *p,
			 const struct estimate_source *src, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	if (src) {
		struct estimate_origin o;
		estimate_origin_of(&o, src);
		estimate_origin_write(&y, &o);
	}
	if (p)
		project_emit_sections(&y, p, PROJECT_TEXT_BANDS);
	yout_key(&y, "estimates");
	yout_seq(&y);
	for (size_t i = 0; i < e->n; i++) {
		struct estimate_rec r;
		estimate_rec_of(&r, &e->rows[i], band_of(p, i), p);
		estimate_rec_write(&y, &r);
	}
	yout_end(&y);
	if (p)
		project_emit_sections(&y, p, (p->ntornado ? PROJECT_TEXT_TORNADO : 0) |
						      PROJECT_TEXT_GRID | PROJECT_TEXT_FIT |
						      PROJECT_TEXT_INPUTS);
	yout_end(&y);
}

/* One line saying where a component's time comes from (p: the
 * projection the row belongs to, may be NULL). */
static void comp_basis(const struct model *m, const struct projection *p,
		       const struct estimate_row *r, int k, char *buf, size_t len)
{
	const struct calib *c = m->cal;
	static const char *const what[] = {"", "attention + lm_head", "drafter forward",
					   "tree build + accept", "launch + scheduling"};
	if (k == COMP_MOE) {
		const struct xfer_table *xt = &m->der->xt;
		int x = calib_xfer_index(xt, m->ref_gpu, r->target, r->out.M);
		char pair[96] = "";
		if (x >= 0)
			snprintf(pair, sizeof pair, " x transfer %s->%s %s (assumed)", xt->xfer[x].from,
				 xt->xfer[x].to, xt->xfer[x].range);
		snprintf(buf, len, "%s %s curve at M=%g (%s) x bw %.3g/%.3g%s", m->ref_gpu->id,
			 calib_moe_curve_name(m->curve), r->out.M, calib_provenance_name(c->moe_ref.prov),
			 m->ref_gpu->bw_tbps, r->target->bw_tbps, pair);
		return;
	}
	if (k == COMP_ALLREDUCE) {
		const struct ar_gpu *a = calib_ar(c, r->target->id);
		int cal = r->sc.estimator == EST_CALIBRATED;
		snprintf(buf, len, "%g x %g all-reduces of %.0f KB, %s latency of %s%s%s "
			 "[aic-095f58a-allreduce]%s",
			 c->ar.per_layer, c->model.layers, c->model.hidden * 2 * r->out.M / 1024,
			 c->ar.impl, a && a->like[0] ? a->like : r->target->id,
			 a && a->pcie ? " x pcie factor" : "", a && a->like[0] ? " (assumed like)" : "",
			 cal ? " x allreduce_impl (the public implementations' spread), not cut" : "");
		return;
	}
	if (k == COMP_ATTN && r->sc.context) {
		snprintf(buf, len, "%s: share %.2f of the %s step (measured), split assumed; + context "
			 "%d vs anchor_context (assumed): %s", what[k], m->share[k - 1],
			 c->sglang_b8.gpu, r->sc.context,
			 p && !strncmp(p->context_law_label, "fit", 3)
				 ? p->context_law_label
				 : "geometry fallback (MLA latent KV reads or scores, attn_ctx_eff)");
		return;
	}
	if (k == COMP_TREE && r->sc.pipeline == PIPE_NATIVE && r->sc.estimator == EST_CALIBRATED) {
		if (m->der->law_tree.n)
			snprintf(buf, len, "native tree kernels: tree_build + accept measured tonight "
				 "at B, x C sequences");
		else
			snprintf(buf, len, "native tree kernels: native_tree_us at C x B = %g (assumed), "
				 "tree_scale_frac of it growing with C x B", m->tree0);
		return;
	}
	snprintf(buf, len, "%s: share %.2f of the %s step (measured), split assumed", what[k],
		 m->share[k - 1], c->sglang_b8.gpu);
}

/* The model's inputs under the keys --set takes, as every document lists
 * them, then every --set in the order given. */
static void write_inputs(const struct projection *p, const struct calib *c, FILE *fp)
{
	fprintf(fp, "inputs (each one a --set KEY)\n");
	fprintf(fp, "  %-44s %10s  %-26s %s\n", "key", "value", "basis", "source");
	for (size_t i = 0; i < p->ninputs; i++) {
		const struct project_input *in = &p->inputs[i];
		char basis[48];
		project_input_basis(in, basis, sizeof basis);
		fprintf(fp, "  %-44s %10.4g  %-26s %s\n", in->name, in->value, basis, in->source);
	}
	if (c->nsets)
		fprintf(fp, "\noverrides (--set, in the order given)\n");
	for (int i = 0; i < c->nsets; i++)
		fprintf(fp, "  %s=%s%s%s%s\n", c->sets[i].key, c->sets[i].value,
			c->sets[i].was[0] ? "  (was " : "", c->sets[i].was,
			c->sets[i].was[0] ? ")" : "");
}

/* Where row i's acceptance comes from, in words. */
static void accept_line(const struct projection *p, size_t i, FILE *fp)
{
	const struct project_row *b = band_of(p, i);
	if (!b)
		return;
	if (!strcmp(b->accept_from, "trace"))
		fprintf(fp, "  acceptance: %.3g (%.3g-%.3g) from the %s\n", b->accept, b->accept_lo,
			b->accept_hi, p->accept_source);
	else
		fprintf(fp, "  acceptance: typed in (the scenario's accept%s)\n",
			b->accept_hi > b->accept_lo ? ", a range sampled uniformly" : "");
}

void estimate_write_table(const struct estimate *e, const struct model *m,
			  const struct projection *p, FILE *fp)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct estimate_row *r = &e->rows[i];
		int first = i == 0 || strcmp(e->rows[i - 1].sc.name, r->sc.name) != 0;
		if (!first)
			continue;
		char ctx[48] = "";
		if (r->sc.context)
			snprintf(ctx, sizeof ctx, ", context %d%s", r->sc.context,
				 band_of(p, i) && !strcmp(band_of(p, i)->context_from, "trace")
					 ? " (the trace's mean)"
					 : "");
		fprintf(fp, "%s%s: %s, %s pipeline, block %d, budget %d, C=%d, M=%g%s%s\n",
			i ? "\n" : "", r->sc.name, r->target->name, tmpl_pipeline_name(r->sc.pipeline),
			r->sc.block, r->sc.budget, r->sc.concurrency, r->out.M, ctx,
			r->runnable ? "" : "  [NOT RUNNABLE]");
		if (r->note[0])
			fprintf(fp, "  note: %s\n", r->note);
		accept_line(p, i, fp);
		fprintf(fp, "  %-12s %9s %7s  %s\n", "component", "ms", "share", "basis");
		for (int k = 0; k < COMP_COUNT; k++) {
			char basis[256];
			comp_basis(m, p, r, k, basis, sizeof basis);
			fprintf(fp, "  %-12s %9.3f %6.1f%%  %s\n", model_comp_name((enum model_comp)k),
				r->out.ms[k], 100 * r->out.ms[k] / r->out.step_ms, basis);
		}
		fprintf(fp, "  %-12s %9.3f %6.1f%%\n", "step", r->out.step_ms, 100.0);
		fprintf(fp, "  %-12s %9s\n", "accept", "tok/s");
		for (size_t j = i; j < e->n && !strcmp(e->rows[j].sc.name, r->sc.name); j++)
			fprintf(fp, "  %-12g %9.1f\n", e->rows[j].accept, e->rows[j].out.tok_s);
	}
	fputc('\n', fp);
	write_inputs(p, m->cal, fp);
}
