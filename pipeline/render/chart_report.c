/* chart_report.c - the report's charts: step breakdown, tok/s vs acceptance, MoE
 * time vs M, the tornado, tok/s vs budget (a kernel's history: chart_history.c). */
#include "chart.h"

#include "chart_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BARS 24

int chart_report_is_chart(enum report_section_kind k)
{
	return k == RSEC_BREAKDOWN || k == RSEC_ACCEPTANCE || k == RSEC_MOE_CURVE ||
	       k == RSEC_TORNADO || k == RSEC_BUDGET || k == RSEC_PARETO || k == RSEC_HISTORY;
}

void chart_report_name(const struct report_spec *spec, int i, char *buf, size_t len)
{
	const struct report_section *s = &spec->sections[i];
	if (s->kind == RSEC_HISTORY)
		snprintf(buf, len, "%02d-history-%s%s%s.png", i + 1, s->op, s->variant[0] ? "-" : "",
			 s->variant);
	else
		snprintf(buf, len, "%02d-%s.png", i + 1, report_spec_section_name(s->kind));
	/* op and variant names are [A-Za-z0-9_]; anything else becomes '_' */
	for (char *p = buf; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			*p = '_';
}

/* ---------------------------------------------------------------- helpers */

/* True when scenario name is one the section draws (all when none named). */
static int section_has(const struct report_section *s, const char *name)
{
	if (!s->nscenarios)
		return 1;
	for (int i = 0; i < s->nscenarios; i++)
		if (!strcmp(s->scenarios[i], name))
			return 1;
	return 0;
}

/* The first estimate row of each scenario the section draws, in template
 * order, into rows[]; returns how many. */
static int section_rows(const struct report_data *d, const struct report_section *s,
			size_t *rows, int max)
{
	int n = 0;
	for (size_t i = 0; i < d->est.n && n < max; i++) {
		const char *name = d->est.rows[i].sc.name;
		if ((i == 0 || strcmp(d->est.rows[i - 1].sc.name, name)) && section_has(s, name))
			rows[n++] = i;
	}
	return n;
}

static const char *title_or(const struct report_section *s, const char *dflt)
{
	return s->title[0] ? s->title : dflt;
}

/* ---------------------------------------------------------------- breakdown */

/* The ms of a bar segment [x0, x0 + ms] of category i, centred on it when it
 * fits inside with a margin; left out otherwise (the tables carry every one). */
static void segment_value(struct chart *c, int i, double x0, double ms)
{
	char txt[24];
	double tw, th, w = chart_px(c, x0 + ms) - chart_px(c, x0);
	PangoLayout *l;

	snprintf(txt, sizeof txt, ms < 10 ? "%.2f" : "%.1f", ms);
	l = chart_layout(c->cr, CHART_SANS, 6, 0, txt, 0, 0);
	chart_layout_size(l, &tw, &th);
	g_object_unref(l);
	if (tw + 6 <= w)
		chart_label(c, chart_px(c, x0) + w / 2, chart_cat_y(c, i), 0.5, 0.5, txt, 6, INK_TEXT);
}

static void draw_breakdown(struct chart *c, const struct report_data *d,
			   const struct report_section *s)
{
	size_t rows[MAX_BARS];
	int n = section_rows(d, s, rows, MAX_BARS);
	double maxstep = 0;
	struct report_figure f[MAX_BARS];

	for (int i = 0; i < n; i++) {
		report_figure(d, rows[i], &f[i]);
		maxstep = f[i].step_ms > maxstep ? f[i].step_ms : maxstep;
		const struct estimate_row *r = f[i].est;
		snprintf(c->cat_labels[i], sizeof c->cat_labels[0], "%s%s", r->sc.name,
			 r->runnable ? "" : " (not runnable)");
	}
	snprintf(c->note, sizeof c->note,
		 "One decode step per scenario (point estimate), each component in ms where it "
		 "fits; at the end, the step and its non-MoE share.");
	c->pad_right = 92; /* the end labels, outside the data */
	chart_axis_linear(&c->x, 0, maxstep, 12, 1, "step time (ms)");
	chart_axis_category(&c->y, n, "");
	for (int k = 0; k < COMP_COUNT; k++)
		chart_legend_add(c, chart_comp_ink(k), SWATCH_BOX, MARK_NONE,
				 model_comp_names[k]);
	chart_layout_frame(c);
	for (int i = 0; i < n; i++) {
		double x = 0;
		char lab[64];
		for (int k = 0; k < COMP_COUNT; k++) {
			if (f[i].ms[k] > 0) {
				chart_hbar(c, i, x, x + f[i].ms[k], 0.62, chart_comp_ink(k),
					   f[i].est->runnable ? 1 : 0.45);
				segment_value(c, i, x, f[i].ms[k]);
			}
			x += isfinite(f[i].ms[k]) ? f[i].ms[k] : 0;
		}
		snprintf(lab, sizeof lab, "%.2f ms, non-MoE %.0f%%", f[i].step_ms,
			 100 * f[i].nonmoe_ms / f[i].step_ms);
		chart_text(c, chart_px(c, x) + 4, chart_cat_y(c, i), 0, 0.5, lab, 7, INK_TEXT, 0);
	}
	if (!n)
		chart_empty(c, "no scenarios");
}

/* ---------------------------------------------------------------- acceptance */

#define ACC_STEPS 61

/* True when scenario rows a and b draw the same line on this chart: same
 * pipeline, block, concurrency and runnability, steps within 0.5%. */
static int same_acceptance_line(const struct report_data *d, size_t a, size_t b)
{
	const struct estimate_row *x = &d->est.rows[a], *y = &d->est.rows[b];
	struct report_figure fa, fb;
	if (x->sc.pipeline != y->sc.pipeline || x->sc.block != y->sc.block ||
	    x->sc.concurrency != y->sc.concurrency || x->runnable != y->runnable)
		return 0;
	report_figure(d, a, &fa);
	report_figure(d, b, &fb);
	return fabs(fa.step_ms - fb.step_ms) <= 5e-3 * fa.step_ms;
}

/* The end label of line i: its scenario's name and those of the later lines
 * that coincide with it ("a", then "= b" on the next line). Returns -1 when an earlier line already
 * draws line i. */
static int acceptance_line_label(const struct report_data *d, const size_t *rows, int n, int i,
				 char *buf, size_t len)
{
	size_t off;
	for (int j = 0; j < i; j++)
		if (same_acceptance_line(d, rows[j], rows[i]))
			return -1;
	off = (size_t)snprintf(buf, len, "%s", d->est.rows[rows[i]].sc.name);
	for (int j = i + 1; j < n && off < len; j++)
		if (same_acceptance_line(d, rows[i], rows[j]))
			off += (size_t)snprintf(buf + off, len - off, "\n= %s",
						d->est.rows[rows[j]].sc.name);
	return 0;
}

static void draw_acceptance(struct chart *c, const struct report_data *d,
			    const struct report_section *s)
{
	size_t rows[MAX_BARS];
	int n = section_rows(d, s, rows, MAX_BARS), have_sg = 0, have_nat = 0, dashed = 0;
	double amax = 1, tmax = 0;
	const struct anchor *a = &d->cal.sglang_b8;

	for (int i = 0; i < n; i++) {
		struct report_figure f;
		const struct estimate_row *r = &d->est.rows[rows[i]];
		report_figure(d, rows[i], &f);
		double step = isfinite(f.step_p5) ? f.step_p5 : f.step_ms;
		amax = r->sc.block > amax ? r->sc.block : amax;
		double t = r->sc.concurrency * r->sc.block / step * 1000;
		tmax = t > tmax ? t : tmax;
	}
	if (isfinite(a->tok_s))
		tmax = a->tok_s > tmax ? a->tok_s : tmax;
	snprintf(c->note, sizeof c->note,
		 "tok/s = C x acceptance / step; the band is the Monte Carlo p5-p95 of the step; "
		 "markers at each scenario's acceptances.");
	c->pad_right = 84; /* the scenario's name at the end of each line */
	chart_axis_linear(&c->x, 0, amax, 9, 1, "mean acceptance length (tokens per step)");
	chart_axis_linear(&c->y, 0, tmax, 7, 1, "decode throughput (tok/s)");
	for (int i = 0; i < n; i++) {
		const struct estimate_row *r = &d->est.rows[rows[i]];
		have_sg |= r->sc.pipeline == PIPE_SGLANG;
		have_nat |= r->sc.pipeline == PIPE_NATIVE;
		dashed |= !r->runnable;
	}
	if (have_sg)
		chart_legend_add(c, INK_SGLANG, SWATCH_LINE, MARK_NONE, "SGLang pipeline");
	if (have_nat)
		chart_legend_add(c, INK_NATIVE, SWATCH_LINE, MARK_NONE, "native engine");
	if (dashed)
		chart_legend_add(c, INK_MUTED, SWATCH_DASH, MARK_NONE, "not runnable");
	if (d->have_proj)
		chart_legend_add(c, INK_MUTED, SWATCH_BAND, MARK_NONE, "p5-p95 band");
	if (isfinite(a->tok_s))
		chart_legend_add(c, INK_MEASURED, SWATCH_MARK, MARK_DIAMOND, "measured (anchor)");
	chart_layout_frame(c);

	for (int i = 0; i < n; i++) {
		const struct estimate_row *r = &d->est.rows[rows[i]];
		enum chart_ink ink = r->sc.pipeline == PIPE_NATIVE ? INK_NATIVE : INK_SGLANG;
		struct report_figure f;
		double xs[ACC_STEPS], y[ACC_STEPS], lo[ACC_STEPS], hi[ACC_STEPS];
		double C = r->sc.concurrency;
		char lab[160];

		if (acceptance_line_label(d, rows, n, i, lab, sizeof lab) < 0)
			continue; /* drawn with an earlier scenario it coincides with */
		report_figure(d, rows[i], &f);
		for (int k = 0; k < ACC_STEPS; k++) {
			xs[k] = 1 + (r->sc.block - 1) * (double)k / (ACC_STEPS - 1);
			y[k] = C * xs[k] / f.step_ms * 1000;
			lo[k] = C * xs[k] / f.step_p95 * 1000;
			hi[k] = C * xs[k] / f.step_p5 * 1000;
		}
		if (isfinite(f.step_p5) && isfinite(f.step_p95))
			chart_band(c, xs, lo, hi, ACC_STEPS, ink, 0.16);
		chart_line(c, xs, y, ACC_STEPS, ink, 1.6, !r->runnable);
		for (size_t j = rows[i]; j < d->est.n && !strcmp(d->est.rows[j].sc.name, r->sc.name);
		     j++)
			chart_mark(c, d->est.rows[j].accept, C * d->est.rows[j].accept / f.step_ms * 1000,
				   MARK_CIRCLE, ink, 4);
		if (xs[ACC_STEPS - 1] < c->x.hi) /* ends inside: label above its end */
			chart_text(c, chart_px(c, xs[ACC_STEPS - 1]), chart_py(c, y[ACC_STEPS - 1]) - 4,
				   0.5, 1, lab, 6.5, ink, 0);
		else
			chart_text(c, chart_px(c, xs[ACC_STEPS - 1]) + 3, chart_py(c, y[ACC_STEPS - 1]),
				   0, 0.5, lab, 6.5, ink, 0);
	}
	if (isfinite(a->tok_s))
		chart_mark(c, a->accept, a->tok_s, MARK_DIAMOND, INK_MEASURED, 6);
	if (!n)
		chart_empty(c, "no scenarios");
}

/* ---------------------------------------------------------------- MoE curve */

static void draw_moe_curve(struct chart *c, const struct report_data *d,
			   const struct report_section *s)
{
	const struct moe_reference *ref = &d->cal.moe_ref;
	const struct project_fit *fit = d->have_proj ? &d->proj.fit : NULL;
	const struct report_moe_curve *m = &d->moe;
	const struct gpu *refg = calib_gpu(&d->cal, ref->gpu), *fitg = m->fitg, *target = m->target;
	const double *xs = m->xs, *yref = m->ref, *yfit = m->fit, *ytgt = m->tgt;
	double mmax = REPORT_CURVE_MMAX, ymax = 0;
	int have_fit = m->have_fit, tonight = fit && fit->source == PROV_TONIGHT && fit->npoints > 0;
	char lab[128];

	(void)s;
	for (int i = 0; i < REPORT_CURVE_STEPS; i++)
		ymax = fmax(ymax, fmax(yref[i], isfinite(yfit[i]) ? yfit[i] : 0));
	for (int i = 0; i < ref->npoints; i++)
		ymax = fmax(ymax, ref->points[i].step_ms);
	for (int i = 0; tonight && i < fit->npoints; i++)
		ymax = fmax(ymax, fit->points[i].step_ms);

	/* the reference curve is drawn only where the fit does not repeat it */
	int show_ref = !have_fit;
	for (int i = 0; have_fit && i < REPORT_CURVE_STEPS; i++)
		show_ref |= fabs(yfit[i] - yref[i]) > 1e-3 * fabs(yref[i]);
	int cpu_sweep = 0;
	for (size_t i = 0; !tonight && i < d->rec.nrows; i++)
		cpu_sweep |= !strcmp(d->rec.rows[i].op, "moe_w4a16") && d->rec.rows[i].status == REC_OK;
	snprintf(c->note, sizeof c->note, "MoE forward of all MoE layers per decode step, TP-%g; "
		 "%s curve; log x.%s", ref->tp, calib_moe_curve_name(d->model.curve),
		 cpu_sweep ? " Tonight's sweep ran off-GPU: not on this scale." : "");
	chart_axis_log(&c->x, 1, mmax, "verify width M = C (B + 1) (tokens)");
	chart_axis_linear(&c->y, 0, ymax * 1.05, 7, 1, "MoE time per step (ms)");
	snprintf(lab, sizeof lab, "calibration points (%s)", refg ? refg->name : ref->gpu);
	chart_legend_add(c, INK_CALIBRATION, SWATCH_MARK, MARK_SQUARE, lab);
	if (tonight) {
		snprintf(lab, sizeof lab, "tonight's sweep (%s)", fit->gpu);
		chart_legend_add(c, INK_MEASURED, SWATCH_MARK, MARK_CIRCLE, lab);
	}
	snprintf(lab, sizeof lab, "reference curve (%s)", refg ? refg->name : ref->gpu);
	if (show_ref)
		chart_legend_add(c, INK_CALIBRATION, SWATCH_LINE, MARK_NONE, lab);
	if (have_fit) {
		snprintf(lab, sizeof lab, "fitted physical curve (%s)", fitg->name);
		chart_legend_add(c, INK_FIT, SWATCH_DASH, MARK_NONE, lab);
	}
	if (target) {
		snprintf(lab, sizeof lab, "projected on %s", target->name);
		chart_legend_add(c, INK_PROJECTED, SWATCH_LINE, MARK_NONE, lab);
	}
	chart_layout_frame(c);
	if (show_ref)
		chart_line(c, xs, yref, REPORT_CURVE_STEPS, INK_CALIBRATION, 1.3, 0);
	if (have_fit)
		chart_line(c, xs, yfit, REPORT_CURVE_STEPS, INK_FIT, 1.6, 1);
	if (target)
		chart_line(c, xs, ytgt, REPORT_CURVE_STEPS, INK_PROJECTED, 1.8, 0);
	if (have_fit && isfinite(fit->m_plateau) && fit->m_plateau > 1 && fit->m_plateau < mmax) {
		chart_vline(c, fit->m_plateau, INK_MUTED, 0.7, 1);
		snprintf(lab, sizeof lab, "95%% of plateau at M=%.0f", fit->m_plateau);
		chart_text(c, chart_px(c, fit->m_plateau) - 3, c->py + 3, 1, 0, lab, 6.5, INK_MUTED,
			   0);
	}
	for (int i = 0; i < ref->npoints; i++)
		chart_mark(c, ref->points[i].m, ref->points[i].step_ms, MARK_SQUARE, INK_CALIBRATION,
			   5);
	for (int i = 0; tonight && i < fit->npoints; i++)
		chart_mark(c, fit->points[i].m, fit->points[i].step_ms, MARK_CIRCLE, INK_MEASURED, 4);
	for (size_t i = 0; target && i < d->est.n; i++) {
		const struct estimate_row *r = &d->est.rows[i];
		if (r->target == target && (i == 0 || r->out.M != d->est.rows[i - 1].out.M))
			chart_mark(c, r->out.M, m->row_ms[i],
				   MARK_DIAMOND, INK_PROJECTED, 5);
	}
}

/* ---------------------------------------------------------------- tornado */

#define TORNADO_BARS 10

/* The tornado of the section's first scenario; without one named, of the
 * first headline scenario that has one (page one's answer and its
 * sensitivity come from one model). */
static const struct project_tornado *pick_tornado(const struct report_data *d,
						  const struct report_section *s)
{
	for (int h = 0; !s->nscenarios && h < d->spec.nheadline; h++)
		for (size_t i = 0; i < d->proj.ntornado; i++)
			if (!strcmp(d->proj.tornado[i].scenario, d->spec.headline[h]))
				return &d->proj.tornado[i];
	for (size_t i = 0; i < d->proj.ntornado; i++)
		if (section_has(s, d->proj.tornado[i].scenario))
			return &d->proj.tornado[i];
	return NULL;
}

static void draw_tornado(struct chart *c, const struct report_data *d,
			 const struct report_section *s)
{
	const struct project_tornado *t = d->have_proj ? pick_tornado(d, s) : NULL;
	int n = t ? (t->nbars < TORNADO_BARS ? t->nbars : TORNADO_BARS) : 0;
	double lo = INFINITY, hi = -INFINITY;

	if (t) {
		long r = report_scenario_row(d, t->scenario);
		int cal = r >= 0 && d->est.rows[r].sc.estimator == EST_CALIBRATED;
		snprintf(c->note, sizeof c->note,
			 "%s at acceptance %g: tok/s with one assumption at its p5 and p95, the rest "
			 "at %s (the dashed line).", t->scenario, t->accept,
			 cal ? "their central values, ddt's calibrated point" : "the seed's points");
		lo = hi = t->tok_s_point;
	}
	for (int i = 0; i < n; i++) {
		const struct project_bar *b = &t->bars[i];
		lo = fmin(lo, fmin(b->tok_s_p5, b->tok_s_p95));
		hi = fmax(hi, fmax(b->tok_s_p5, b->tok_s_p95));
		snprintf(c->cat_labels[i], sizeof c->cat_labels[0], "%s", b->name);
	}
	double pad = (hi - lo) * 0.25 + 1;
	chart_axis_linear(&c->x, lo - pad, hi + pad, 8, 0, "decode throughput (tok/s)");
	chart_axis_category(&c->y, n ? n : 1, "");
	if (n) {
		chart_legend_add(c, INK_PROJECTED, SWATCH_BOX, MARK_NONE,
				 "tok/s range (label: the input at that end)");
		chart_legend_add(c, INK_TEXT, SWATCH_DASH, MARK_NONE, "every assumption at its point");
	}
	chart_layout_frame(c);
	if (!n) {
		chart_empty(c, d->have_proj ? "no tornado for this scenario"
					    : "no projection stored with this run");
		return;
	}
	double labels[TORNADO_BARS][2];
	char ltext[TORNADO_BARS][2][32];
	for (int i = 0; i < n; i++) {
		const struct project_bar *b = &t->bars[i];
		char l5[32], l95[32];
		int p5_left = b->tok_s_p5 <= b->tok_s_p95;
		chart_hbar(c, i, b->tok_s_p5, b->tok_s_p95, 0.6, INK_PROJECTED, 0.85);
		chart_fmt_num(l5, sizeof l5, b->value_p5);
		chart_fmt_num(l95, sizeof l95, b->value_p95);
		double xl = chart_px(c, fmin(b->tok_s_p5, b->tok_s_p95)) - 3;
		double xr = chart_px(c, fmax(b->tok_s_p5, b->tok_s_p95)) + 3;
		labels[i][0] = xl, labels[i][1] = xr;
		snprintf(ltext[i][0], sizeof ltext[i][0], "%s", p5_left ? l5 : l95);
		snprintf(ltext[i][1], sizeof ltext[i][1], "%s", p5_left ? l95 : l5);
	}
	chart_vline(c, t->tok_s_point, INK_TEXT, 0.9, 1);
	for (int i = 0; i < n; i++) { /* over the point line, legible */
		chart_label(c, labels[i][0], chart_cat_y(c, i), 1, 0.5, ltext[i][0], 6.5, INK_MUTED);
		chart_label(c, labels[i][1], chart_cat_y(c, i), 0, 0.5, ltext[i][1], 6.5, INK_MUTED);
	}
}

/* ---------------------------------------------------------------- budget */

#define BUDGET_LINES 6

/* True when targets a and b project tok/s within 1% of each other at every
 * budget of concurrency index ci: on this chart one line shows both. */
static int same_curve(const struct project_grid *g, int a, int b, int ci)
{
	for (int k = 0; k < g->nbudgets; k++) {
		double x = PROJECT_CELL(g, a, ci, k)->tok_s.point, y = PROJECT_CELL(g, b, ci, k)->tok_s.point;
		if (!(fabs(x - y) <= 1e-2 * fabs(x)))
			return 0;
	}
	return 1;
}

static void draw_budget(struct chart *c, const struct report_data *d,
			const struct report_section *s)
{
	const struct project_grid *g = d->have_proj && d->proj.has_grid ? &d->proj.grid : NULL;
	static const enum chart_mark marks[] = {MARK_CIRCLE, MARK_SQUARE, MARK_TRIANGLE,
						MARK_DIAMOND, MARK_CROSS, MARK_RING};
	int ci = 0, lines[BUDGET_LINES], nlines = 0;
	double ymax = 0, xs[PROJECT_MAX_GRID_BUDGETS];

	(void)s;
	if (g) {
		for (int k = 0; k < g->nconc; k++)
			if (g->conc[k] == 1)
				ci = k;
		for (int t = 0; t < g->ntargets; t++)
			for (int b = 0; b < g->nbudgets; b++) {
				const struct project_cell *cell = PROJECT_CELL(g, t, ci, b);
				ymax = fmax(ymax, isfinite(cell->tok_s.p95) ? cell->tok_s.p95
									    : cell->tok_s.point);
			}
		snprintf(c->note, sizeof c->note,
			 "%s pipeline, block %d, C=%d; acceptance follows the DDTree budget curve. "
			 "Star: best budget.", tmpl_pipeline_name(g->pipeline), g->block, g->conc[ci]);
		chart_axis_log2(&c->x, g->budgets[0], g->budgets[g->nbudgets - 1],
				"node budget B (tree nodes, root excluded)");
		/* one line per distinct curve; targets that coincide share it */
		for (int t = 0; t < g->ntargets && nlines < BUDGET_LINES; t++) {
			int dup = 0;
			for (int k = 0; k < nlines && !dup; k++)
				dup = same_curve(g, lines[k], t, ci);
			if (!dup)
				lines[nlines++] = t;
		}
	} else
		chart_axis_log2(&c->x, 4, 1024, "node budget B (tree nodes, root excluded)");
	chart_axis_linear(&c->y, 0, ymax > 0 ? ymax : 1, 7, 1, "decode throughput (tok/s)");
	for (int k = 0; k < nlines; k++) {
		char label[80];
		size_t off = 0;
		label[0] = '\0';
		for (int t = 0; t < g->ntargets && off < sizeof label; t++)
			if (t == lines[k] || (t > lines[k] && same_curve(g, lines[k], t, ci))) {
				const struct gpu *gp = calib_gpu(&d->cal, g->targets[t]);
				off += (size_t)snprintf(label + off, sizeof label - off, "%s%s",
							off ? " ≈ " : "", gp ? gp->name : g->targets[t]);
			}
		chart_legend_add(c, chart_target_ink(k), k % 2 ? SWATCH_DASH : SWATCH_LINE, marks[k],
				 label);
	}
	if (g) {
		chart_legend_add(c, INK_MUTED, SWATCH_BAND, MARK_NONE, "p5-p95 band");
		chart_legend_add(c, INK_MUTED, SWATCH_MARK, MARK_STAR, "best budget");
		for (int i = 0; i < g->ntargets * g->nconc * g->nbudgets; i++)
			if (g->cells[i].accept_lower) {
				chart_legend_add(c, INK_MUTED, SWATCH_MARK, MARK_NONE,
						 "≥ lower bound (past the trace's top-K)");
				break;
			}
	}
	chart_layout_frame(c);
	if (!g) {
		chart_empty(c, "no budget grid stored with this run");
		return;
	}
	for (int b = 0; b < g->nbudgets; b++)
		xs[b] = g->budgets[b];
	for (int k = 0; k < nlines; k++) {
		int t = lines[k];
		double y[PROJECT_MAX_GRID_BUDGETS], lo[PROJECT_MAX_GRID_BUDGETS],
			hi[PROJECT_MAX_GRID_BUDGETS];
		for (int b = 0; b < g->nbudgets; b++) {
			const struct project_cell *cell = PROJECT_CELL(g, t, ci, b);
			y[b] = cell->tok_s.point;
			lo[b] = cell->tok_s.p5;
			hi[b] = cell->tok_s.p95;
		}
		enum chart_ink ink = chart_target_ink(k);
		chart_band(c, xs, lo, hi, (size_t)g->nbudgets, ink, 0.1);
		chart_line(c, xs, y, (size_t)g->nbudgets, ink, 1.4, k % 2);
		for (int b = 0; b < g->nbudgets; b++) {
			chart_mark(c, xs[b], y[b], marks[k], ink, 3.5);
			if (PROJECT_CELL(g, t, ci, b)->accept_lower) /* a lower bound: past top-K */
				chart_label(c, chart_px(c, xs[b]), chart_py(c, y[b]) + 4, 0.5, 0,
					    "≥", 6.5, ink);
		}
		int best = g->best[t * g->nconc + ci];
		if (best >= 0 && best < g->nbudgets) {
			char lab[48];
			chart_mark(c, xs[best], y[best], MARK_STAR, ink, 6);
			snprintf(lab, sizeof lab, "B=%d", g->budgets[best]);
			chart_label(c, chart_px(c, xs[best]), chart_py(c, y[best]) - 7, 0.5, 1, lab, 6.5,
				    ink);
		}
	}
}

/* ---------------------------------------------------------------- pareto */

double chart_report_gpus(const struct report_data *d)
{
	return d->cal.model.tp >= 1 ? d->cal.model.tp : 1;
}

void chart_report_pareto_curve(const struct report_data *d, int t, struct pareto_curve *pc)
{
	const struct project_grid *g = &d->proj.grid;
	double gpus = chart_report_gpus(d);
	pc->n = 0;
	for (int ci = 0; ci < g->nconc; ci++) {
		int b = g->best[t * g->nconc + ci];
		if (b < 0 || b >= g->nbudgets)
			continue;
		const struct project_cell *cell = PROJECT_CELL(g, t, ci, b);
		int k = pc->n++;
		pc->conc[k] = g->conc[ci];
		pc->budget[k] = g->budgets[b];
		pc->user[k] = cell->tok_s.p50 / g->conc[ci];
		pc->gpu[k] = cell->tok_s.p50 / gpus;
		pc->lo[k] = cell->tok_s.p5;
		pc->hi[k] = cell->tok_s.p95;
	}
}

/* True when two targets' curves agree within 1% at every point. */
static int pareto_same(const struct pareto_curve *a, const struct pareto_curve *b)
{
	if (a->n != b->n)
		return 0;
	for (int k = 0; k < a->n; k++)
		if (!(fabs(a->gpu[k] - b->gpu[k]) <= 1e-2 * fabs(a->gpu[k])))
			return 0;
	return 1;
}

/* The p5-p95 band of a curve: each concurrency's draws scale per user and
 * per GPU together, so its band runs along the ray through the origin; the
 * polygon joins the p5 ends and the p95 ends. */
static void pareto_band(struct chart *c, const struct pareto_curve *pc, double gpus,
			enum chart_ink ink)
{
	double xs[2 * PROJECT_MAX_GRID_CONC], ys[2 * PROJECT_MAX_GRID_CONC];
	int m = 0;
	for (int k = 0; k < pc->n; k++, m++)
		xs[m] = pc->lo[k] / pc->conc[k], ys[m] = pc->lo[k] / gpus;
	for (int k = pc->n; k-- > 0; m++)
		xs[m] = pc->hi[k] / pc->conc[k], ys[m] = pc->hi[k] / gpus;
	if (pc->n >= 2)
		chart_polygon(c, xs, ys, (size_t)m, ink, 0.13);
	for (int k = 0; k < pc->n; k++) { /* each point's own band */
		double bx[2] = {pc->lo[k] / pc->conc[k], pc->hi[k] / pc->conc[k]};
		double by[2] = {pc->lo[k] / gpus, pc->hi[k] / gpus};
		chart_line(c, bx, by, 2, ink, 0.8, 0);
	}
}

int chart_report_pareto_groups(const struct report_data *d, int *group)
{
	const struct project_grid *g = &d->proj.grid;
	struct pareto_curve first[PROJECT_MAX_GRID_TARGETS];
	int n = 0;
	for (int t = 0; t < g->ntargets; t++) {
		struct pareto_curve pc;
		chart_report_pareto_curve(d, t, &pc);
		group[t] = -1;
		for (int k = 0; k < n && group[t] < 0; k++)
			if (pareto_same(&first[k], &pc))
				group[t] = k;
		if (group[t] < 0 && pc.n) {
			first[n] = pc;
			group[t] = n++;
		}
	}
	return n;
}

/* The legend label of group k: its targets' names joined by "≈". */
static void pareto_label(const struct report_data *d, const int *group, int k, char *label,
			 size_t len)
{
	const struct project_grid *g = &d->proj.grid;
	size_t off = 0;
	label[0] = '\0';
	for (int t = 0; t < g->ntargets && off < len; t++)
		if (group[t] == k) {
			const struct gpu *gp = calib_gpu(&d->cal, g->targets[t]);
			off += (size_t)snprintf(label + off, len - off, "%s%s", off ? " ≈ " : "",
						gp ? gp->name : g->targets[t]);
		}
}

static void draw_pareto(struct chart *c, const struct report_data *d)
{
	static const enum chart_mark marks[] = {MARK_CIRCLE, MARK_SQUARE, MARK_TRIANGLE,
						MARK_DIAMOND, MARK_CROSS, MARK_RING};
	const struct project_grid *g = d->have_proj && d->proj.has_grid ? &d->proj.grid : NULL;
	struct pareto_curve curves[BUDGET_LINES];
	int group[PROJECT_MAX_GRID_TARGETS], nlines = 0;
	double gpus = chart_report_gpus(d), xmax = 0, ymax = 0;

	if (g)
		nlines = chart_report_pareto_groups(d, group);
	nlines = nlines < BUDGET_LINES ? nlines : BUDGET_LINES;
	for (int k = 0; k < nlines; k++) {
		int t = 0;
		while (group[t] != k)
			t++;
		chart_report_pareto_curve(d, t, &curves[k]);
		for (int i = 0; i < curves[k].n; i++) {
			xmax = fmax(xmax, fmax(curves[k].hi[i] / curves[k].conc[i], curves[k].user[i]));
			ymax = fmax(ymax, fmax(curves[k].hi[i] / gpus, curves[k].gpu[i]));
		}
	}
	if (g)
		snprintf(c->note, sizeof c->note,
			 "%s pipeline, block %d, %g GPUs per replica (TP-%g). Each point: one "
			 "concurrency C at its best node budget; line: the median of the draws, "
			 "shaded: p5-p95. Up and to the right is better.",
			 tmpl_pipeline_name(g->pipeline), g->block, gpus, gpus);
	chart_axis_linear(&c->x, 0, xmax > 0 ? xmax : 1, 8, 1, "speed per user (tok/s per user)");
	chart_axis_linear(&c->y, 0, ymax > 0 ? ymax : 1, 7, 1, "throughput per GPU (tok/s per GPU)");
	for (int k = 0; k < nlines; k++) {
		char label[80];
		pareto_label(d, group, k, label, sizeof label);
		chart_legend_add(c, chart_target_ink(k), k % 2 ? SWATCH_DASH : SWATCH_LINE, marks[k],
				 label);
	}
	if (nlines)
		chart_legend_add(c, INK_MUTED, SWATCH_BAND, MARK_NONE, "p5-p95 band");
	chart_layout_frame(c);
	if (!nlines) {
		chart_empty(c, "no budget grid stored with this run");
		return;
	}
	for (int k = 0; k < nlines; k++)
		pareto_band(c, &curves[k], gpus, chart_target_ink(k));
	for (int k = 0; k < nlines; k++) {
		const struct pareto_curve *pc = &curves[k];
		chart_line(c, pc->user, pc->gpu, (size_t)pc->n, chart_target_ink(k), 1.4, k % 2);
		for (int i = 0; i < pc->n; i++)
			chart_mark(c, pc->user[i], pc->gpu[i], marks[k], chart_target_ink(k), 3.5);
	}
	for (int i = 0; i < curves[0].n; i++) { /* the concurrencies, on the first curve */
		char lab[32];
		snprintf(lab, sizeof lab, "C=%d", curves[0].conc[i]);
		chart_label(c, chart_px(c, curves[0].user[i]) + 5, chart_py(c, curves[0].gpu[i]) - 5, 0,
			    1, lab, 6.5, chart_target_ink(0));
	}
}

/* ---------------------------------------------------------------- dispatch */

int chart_report_empty(const struct report_data *d, const struct report_section *s, char *msg,
		       size_t len)
{
	size_t rows[MAX_BARS];
	int idx[HIST_SERIES], nights;
	double lo, hi;

	msg[0] = '\0';
	switch (s->kind) {
	case RSEC_BREAKDOWN:
	case RSEC_ACCEPTANCE:
		if (!section_rows(d, s, rows, MAX_BARS))
			snprintf(msg, len, "no scenario of the template is in this section");
		break;
	case RSEC_TORNADO:
		if (!d->have_proj || !pick_tornado(d, s))
			snprintf(msg, len, "no tornado is stored with this run");
		break;
	case RSEC_BUDGET:
	case RSEC_PARETO:
		if (!d->have_proj || !d->proj.has_grid)
			snprintf(msg, len, "no budget grid is stored with this run");
		break;
	case RSEC_HISTORY:
		if (!chart_history_pick(d, s, idx, &nights, &lo, &hi))
			snprintf(msg, len, "no history yet: no night has measured %s", s->op);
		else if (nights < 2)
			snprintf(msg, len, "no history yet: tonight is the first night %s was "
				 "measured", s->op);
		break;
	default:
		break;
	}
	return msg[0] != '\0';
}

void chart_report_draw(cairo_t *cr, double w, double h, const void *arg)
{
	const struct report_chart *rc = arg;
	const struct report_data *d = rc->d;
	const struct report_section *s = rc->sec;
	struct chart c;
	char title[160];

	switch (s->kind) {
	case RSEC_BREAKDOWN:
		chart_begin(&c, cr, w, h, title_or(s, "Step time per scenario, by component"));
		draw_breakdown(&c, d, s);
		break;
	case RSEC_ACCEPTANCE:
		chart_begin(&c, cr, w, h, title_or(s, "tok/s vs acceptance, per pipeline"));
		draw_acceptance(&c, d, s);
		break;
	case RSEC_MOE_CURVE:
		chart_begin(&c, cr, w, h, title_or(s, "MoE time vs verify width M"));
		draw_moe_curve(&c, d, s);
		break;
	case RSEC_TORNADO:
		chart_begin(&c, cr, w, h, title_or(s, "Sensitivity: which assumption moves tok/s"));
		draw_tornado(&c, d, s);
		break;
	case RSEC_BUDGET:
		chart_begin(&c, cr, w, h, title_or(s, "tok/s vs node budget, per target"));
		draw_budget(&c, d, s);
		break;
	case RSEC_PARETO:
		chart_begin(&c, cr, w, h,
			    title_or(s, "Throughput per GPU vs speed per user, per target"));
		draw_pareto(&c, d);
		break;
	case RSEC_HISTORY:
		snprintf(title, sizeof title, "History of %s%s%s", s->op, s->variant[0] ? "/" : "",
			 s->variant);
		chart_begin(&c, cr, w, h, title_or(s, title));
		chart_history_draw(&c, d, s);
		break;
	default:
		return;
	}
	chart_finish(&c);
}
