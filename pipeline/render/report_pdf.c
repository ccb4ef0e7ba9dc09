/* report_pdf.c - report.pdf: page one (the measured baseline and tonight's
 * figures, the projection's bands, backtest coverage, tonight's caveats), then
 * the template's sections in order. */
#include "pdf.h"

#include "chart_report.h"
#include "report_pdf.h"
#include "backtest.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define BODY_PT 8.6

/* Appends escaped printf output to a markup string. */
#define MARKUP(gs, ...)                                               \
	do {                                                          \
		char *m_ = g_markup_printf_escaped(__VA_ARGS__);      \
		g_string_append((gs), m_);                            \
		g_free(m_);                                           \
	} while (0)

static void para_markup(struct pdf_doc *doc, GString *gs)
{
	pdf_para(doc, gs->str, 1, BODY_PT, INK_TEXT);
	g_string_truncate(gs, 0);
}

static const char *section_title(const struct report_section *s)
{
	static const char *const dflt[RSEC_COUNT] = {
		[RSEC_SUMMARY] = "Summary",
		[RSEC_PROJECTIONS] = "Projections",
		[RSEC_BREAKDOWN] = "Step-time breakdown",
		[RSEC_ACCEPTANCE] = "Throughput vs acceptance",
		[RSEC_MOE_CURVE] = "MoE time vs verify width",
		[RSEC_TORNADO] = "Sensitivity (tornado)",
		[RSEC_BUDGET] = "Best node budget",
		[RSEC_PARETO] = "Throughput per GPU vs speed per user",
		[RSEC_HISTORY] = "Kernel history",
		[RSEC_REGRESSIONS] = "Regressions",
		[RSEC_KERNELS] = "Tonight's kernels",
		[RSEC_ASSUMPTIONS] = "Assumptions",
		[RSEC_CAVEATS] = "Caveats",
	};
	return s->title[0] ? s->title : dflt[s->kind];
}

/* ---------------------------------------------------------------- page one */

/* One headline scenario: its median tok/s per acceptance in bold, then the
 * band, the ratio to the measured baseline, the seed estimator's figure,
 * and the change since the previous night with what moved. */
static void headline_scenario(const struct report_data *d, const char *name, GString *gs)
{
	GString *tok = g_string_new(NULL), *acc = g_string_new(NULL), *band = g_string_new(NULL),
		*seed = g_string_new(NULL), *step = g_string_new(NULL), *ratio = g_string_new(NULL);
	const struct estimate_row *first = NULL;
	double base = report_baseline_tok(d), prev;
	char since[1200];

	for (size_t i = 0; i < d->est.n; i++) {
		const struct estimate_row *r = &d->est.rows[i];
		struct report_figure f;
		char t[32], lo[32], hi[32], sd[32], st[32];
		double pct, s, med;
		if (strcmp(r->sc.name, name) != 0)
			continue;
		report_figure(d, i, &f);
		s = report_seed_tok(&f, &pct);
		med = isfinite(f.tok_p50) ? f.tok_p50 : f.tok_s;
		report_fmt_tok(t, sizeof t, med);
		report_fmt_tok(lo, sizeof lo, f.tok_p5);
		report_fmt_tok(hi, sizeof hi, f.tok_p95);
		report_fmt_tok(sd, sizeof sd, isfinite(s) ? s : r->out.tok_s);
		report_fmt_ms(st, sizeof st, isfinite(f.step_p50) ? f.step_p50 : f.step_ms);
		g_string_append_printf(tok, "%s%s", first ? " / " : "", t);
		g_string_append_printf(acc, "%s%g", first ? " / " : "", r->accept);
		g_string_append_printf(ratio, "%sx%.2f", first ? " / " : "", med / base);
		if (isfinite(f.tok_p5))
			g_string_append_printf(band, "%s%s-%s", first ? " / " : "", lo, hi);
		g_string_append_printf(seed, "%s%s", first ? " / " : "", sd);
		if (isfinite(pct))
			g_string_append_printf(seed, " (p%.0f)", pct);
		if (!first || strcmp(step->str, st))
			g_string_append_printf(step, "%s%s", first ? " / " : "", st);
		if (!first)
			first = r;
	}
	if (first) {
		MARKUP(gs, "\n<span size=\"x-large\"><b>%s tok/s</b></span>  %s: %s, block %d, "
			   "budget %d, acceptance %s%s",
		       tok->str, first->sc.name,
		       first->sc.pipeline == PIPE_NATIVE ? "native engine" : "SGLang pipeline",
		       first->sc.block, first->sc.budget, acc->str,
		       first->runnable ? "" : " [not runnable]");
		MARKUP(gs, "\n   ");
		if (band->len)
			MARKUP(gs, "p5-p95 <b>%s tok/s</b>; ", band->str);
		MARKUP(gs, "<b>%s vs the %.0f tok/s baseline</b>", ratio->str, base);
		MARKUP(gs, "\n<span size=\"small\">   seed's estimate %s; step %s ms</span>", seed->str,
		       step->str);
		report_prev_change(d, name, &prev, since, sizeof since);
		MARKUP(gs, "\n<span size=\"small\">   <b>Since the previous night:</b> %s.</span>", since);
	}
	g_string_free(tok, TRUE);
	g_string_free(acc, TRUE);
	g_string_free(band, TRUE);
	g_string_free(seed, TRUE);
	g_string_free(step, TRUE);
	g_string_free(ratio, TRUE);
}

/* The measured baseline, the MoE reference and tonight's own measurements
 * (one row per op) with the machine they ran on. */
static void page_one_measured(struct pdf_doc *doc, const struct report_data *d, GString *gs)
{
	static const struct pdf_col cols[] = {
		{"tonight: op / variant", 0.24, PDF_LEFT}, {"params", 0.3, PDF_LEFT},
		{"median µs", 0.11, PDF_RIGHT},          {"p10 - p90 µs", 0.15, PDF_RIGHT},
		{"status", 0.2, PDF_LEFT},
	};
	const struct anchor *a = &d->cal.sglang_b8;
	const struct gpu *ag = calib_gpu(&d->cal, a->gpu);
	const struct moe_reference *mr = &d->cal.moe_ref;
	const struct gpu *rg = calib_gpu(&d->cal, mr->gpu);
	size_t idx[24], n = report_tonight_rows(d, idx, 24);
	char dev[256];

	pdf_heading(doc, 2, "Measured: the baseline, and tonight");
	MARKUP(gs, "<b>%s</b> pipeline on <b>%s</b>, block %g, budget %g, C=%g: ",
	       a->pipeline == PIPE_NATIVE ? "native" : "SGLang", ag ? ag->name : a->gpu, a->block,
	       a->budget, a->concurrency);
	if (isfinite(a->tok_s))
		MARKUP(gs, "<b>%.1f tok/s</b> at acceptance %g, a %.3f ms step. ", a->tok_s,
		       a->accept, a->step_ms);
	else
		MARKUP(gs, "a %.3f ms step. ", a->step_ms);
	MARKUP(gs, "MoE reference on %s at TP-%g:", rg ? rg->name : mr->gpu, mr->tp);
	for (int i = 0; i < mr->npoints; i++)
		MARKUP(gs, "%s %.3g ms at M=%g", i ? "," : "", mr->points[i].step_ms, mr->points[i].m);
	MARKUP(gs, ". <span foreground=\"#555555\">Source: %s</span>", a->source);
	para_markup(doc, gs);
	for (size_t i = 0; i < d->rec.ndevices; i++)
		MARKUP(gs, "%s%s", i ? ", " : "Tonight on ", report_device_text(d, i, dev, sizeof dev));
	MARKUP(gs, "%s; host %s, build %s, project %s.", d->rec.ndevices ? "" : "Tonight",
	       d->rec.prov.host, d->rec.prov.build, d->rec.prov.git_rev);
	para_markup(doc, gs);
	if (!n)
		return;
	pdf_table_begin(doc, cols, 5);
	for (size_t j = 0; j < n; j++) {
		const struct rec_row *w = &d->rec.rows[idx[j]];
		char op[80], raw[256], params[320], med[24], lo[24], hi[24], band[56], st[200];
		const char *cells[5] = {op, params, med, band, st};
		snprintf(op, sizeof op, "%s / %s", w->op, w->variant);
		report_fmt_params(params, sizeof params, rec_row_params_str(w, raw, sizeof raw));
		report_fmt_us(med, sizeof med, w->median_us);
		report_fmt_us(lo, sizeof lo, w->p10_us);
		report_fmt_us(hi, sizeof hi, w->p90_us);
		snprintf(band, sizeof band, isfinite(w->p10_us) ? "%s - %s" : "-", lo, hi);
		snprintf(st, sizeof st, "%s%s%s", rec_status_name(w->status), w->reason[0] ? ": " : "",
			 w->reason);
		pdf_table_row(doc, cells, w->status == REC_FAILED ? INK_REGRESSION
					  : w->status == REC_OK   ? INK_TEXT
								  : INK_MUTED, 0);
	}
	pdf_table_end(doc);
}

struct caveat_sink {
	struct pdf_doc *doc;
	int k;
};

static void page_one_caveat(void *arg, const char *line)
{
	struct caveat_sink *o = arg;
	char *m = g_markup_printf_escaped("<b>%d.</b> %s", ++o->k, line);
	pdf_para(o->doc, m, 1, 7.8, INK_TEXT);
	g_free(m);
}

/* The open regression alerts, each with its age, until someone answers
 * them (`ddt ack`); the answered ones in one line; "none" when there are
 * none, so the reader knows the list was looked at. */
static void page_one_alerts(struct pdf_doc *doc, const struct report_data *d)
{
	char line[1024];
	size_t answered = 0, open = 0;
	pdf_heading(doc, 2, "Open alerts");
	for (size_t i = 0, k; d->have_night && i < d->night.nalerts; i += k) {
		const struct regress_alert *a = &d->night.alerts[i];
		k = d->ntext.group[i];
		answered += a->state != ALERT_OPEN ? k : 0;
		if (a->state != ALERT_OPEN)
			continue;
		open++;
		pdf_para(doc, d->ntext.group_line[i], 0, BODY_PT, INK_REGRESSION);
	}
	if (!open)
		pdf_para(doc, d->have_night ? "None open." : "None: no regression verdicts are stored "
							    "with this run.",
			 0, BODY_PT, INK_TEXT);
	if (answered) {
		snprintf(line, sizeof line, "%zu series' alerts answered (ddt ack), listed in summary.txt.",
			 answered);
		pdf_para(doc, line, 0, BODY_PT, INK_TEXT);
	}
}

/* The answer: the headline scenarios' medians, bands, ratio to the
 * baseline and change since the previous night, with every symbol
 * explained in one line. */
static void page_one_answer(struct pdf_doc *doc, const struct report_data *d, GString *gs)
{
	long h0 = d->spec.nheadline ? report_scenario_row(d, d->spec.headline[0]) : -1;
	const struct anchor *a = &d->cal.sglang_b8;
	const struct gpu *ag = calib_gpu(&d->cal, a->gpu);

	if (h0 >= 0) {
		const struct estimate_row *r = &d->est.rows[h0];
		MARKUP(gs, "<span size=\"large\"><b>The answer: %s at C=%d, median decode "
			   "throughput</b></span>", r->target->name, r->sc.concurrency);
	}
	for (int h = 0; h < d->spec.nheadline; h++)
		headline_scenario(d, d->spec.headline[h], gs);
	if (d->have_proj)
		MARKUP(gs, "\n<span size=\"small\">Symbols: tok/s is the median (p50) of %d Monte "
			   "Carlo draws of every assumption (seed %llu); p5-p95 holds 90%% of them; xN.NN "
			   "is the median over the baseline measured with the %s pipeline on %s (block %g, "
			   "budget %g, C=%g); (pNN) is the percentile of the band at which the seed "
			   "estimator's point figure falls; step is the median decode step.</span>",
		       d->proj.samples, (unsigned long long)d->proj.seed,
		       a->pipeline == PIPE_NATIVE ? "native" : "SGLang", ag ? ag->name : a->gpu,
		       a->block, a->budget, a->concurrency);
	else
		MARKUP(gs, "\n<span size=\"small\">No projection is stored with this run: point "
			   "estimates without bands. xN.NN is the estimate over the measured baseline; "
			   "the seed's estimate is the seed estimator's point figure.</span>");
	pdf_callout(doc, gs->str, 10);
	g_string_truncate(gs, 0);
}

/* Page one, in the order a reader acts on it: the answer (headline,
 * band, ratio to the baseline, change since yesterday), the open alerts,
 * tonight's caveats, how far the bands can be trusted, then what was
 * measured tonight. The template's next section starts on page two. */
static void page_one(struct pdf_doc *doc, const struct report_data *d)
{
	GString *gs = g_string_new(NULL);
	struct caveat_sink sink = {doc, 0};
	char status[600], cover[1200];

	pdf_heading(doc, 0, d->spec.title);
	MARKUP(gs, "<span foreground=\"#555555\">Nightly report of run %s, %s. Template %s.</span>",
	       d->rec.run_id, d->date_text, d->rec.template_name);
	para_markup(doc, gs);
	page_one_answer(doc, d, gs);
	page_one_alerts(doc, d);

	pdf_heading(doc, 2, "Caveats tonight");
	report_caveats(d, page_one_caveat, &sink);
	if (!sink.k)
		pdf_para(doc, "None.", 0, BODY_PT, INK_TEXT);
	report_regress_status(d, status, sizeof status);
	MARKUP(gs, "<b>Kernel history: %s</b>", status);
	if (d->have_night)
		MARKUP(gs, " (%zu kernel series, %zu night%s).", d->night.n, d->night.nruns,
		       d->night.nruns == 1 ? "" : "s");
	pdf_para(doc, gs->str, 1, BODY_PT,
		 d->have_night && d->night.count[REG_REGRESSION] ? INK_REGRESSION : INK_TEXT);
	g_string_truncate(gs, 0);

	pdf_heading(doc, 2, "How far the band can be trusted");
	report_coverage_text(d, cover, sizeof cover);
	MARKUP(gs, "Cross-GPU backtest: %s.", cover);
	if (d->have_proj && d->proj.lean[0])
		MARKUP(gs, " %s", d->proj.lean);
	para_markup(doc, gs);
	page_one_measured(doc, d, gs);
	g_string_free(gs, TRUE);
	pdf_new_page(doc);
}

/* ---------------------------------------------------------------- projections */

static void projections(struct pdf_doc *doc, const struct report_data *d,
			const struct report_section *s)
{
	static const struct pdf_col cols[] = {
		{"scenario", 0.15, PDF_LEFT},  {"target", 0.065, PDF_LEFT},
		{"pipeline", 0.08, PDF_LEFT},  {"b / B / C", 0.1, PDF_LEFT},
		{"M", 0.04, PDF_RIGHT},        {"accept", 0.07, PDF_RIGHT},
		{"MoE ms", 0.065, PDF_RIGHT},  {"non-MoE ms", 0.08, PDF_RIGHT},
		{"step ms", 0.07, PDF_RIGHT},  {"point tok/s", 0.07, PDF_RIGHT},
		{"median (p5-p95)", 0.135, PDF_RIGHT}, {"lean", 0.075, PDF_RIGHT},
	};
	GString *gs = g_string_new(NULL);

	pdf_table_begin(doc, cols, 12);
	for (size_t i = 0; i < d->est.n; i++) {
		const struct estimate_row *r = &d->est.rows[i];
		struct report_figure f;
		char bbc[32], M[16], acc[16], moe[24], non[24], step[24], tok[24], band[48], lean[24];
		const char *cells[12];
		int shown = 0;
		for (int k = 0; k < s->nscenarios; k++)
			shown |= !strcmp(s->scenarios[k], r->sc.name);
		if (s->nscenarios && !shown)
			continue;
		report_figure(d, i, &f);
		snprintf(bbc, sizeof bbc, "%d / %d / %d", r->sc.block, r->sc.budget, r->sc.concurrency);
		snprintf(M, sizeof M, "%g", f.M);
		snprintf(acc, sizeof acc, "%g", r->accept);
		report_fmt_ms(moe, sizeof moe, f.moe_ms);
		report_fmt_ms(non, sizeof non, f.nonmoe_ms);
		report_fmt_ms(step, sizeof step, f.step_ms);
		report_fmt_tok(tok, sizeof tok, f.tok_s);
		if (isfinite(f.tok_p5))
			snprintf(band, sizeof band, "%.1f (%.1f-%.1f)", f.tok_p50, f.tok_p5, f.tok_p95);
		else
			snprintf(band, sizeof band, "-");
		if (f.proj && isfinite(f.proj->lean_pct))
			snprintf(lean, sizeof lean, "%+.1f%%",
				 fabs(f.proj->lean_pct) < 0.05 ? 0.0 : f.proj->lean_pct);
		else
			snprintf(lean, sizeof lean, "-");
		cells[0] = r->sc.name, cells[1] = r->target->id, cells[2] = tmpl_pipeline_name(r->sc.pipeline);
		cells[3] = bbc, cells[4] = M, cells[5] = acc, cells[6] = moe, cells[7] = non;
		cells[8] = step, cells[9] = tok, cells[10] = band, cells[11] = lean;
		pdf_table_row(doc, cells, r->runnable ? INK_TEXT : INK_MUTED, 0);
	}
	pdf_table_end(doc);
	MARKUP(gs, "point: the row's estimator at its inputs (a seed-* row: the seed's points; "
		   "ddt's rows: the calibrated point, every assumption at its central value); "
		   "median: the p50 of the Monte Carlo draws, which page one quotes, with p5-p95. Grey "
		   "rows cannot run on their pipeline as configured (see Caveats). lean: how far the "
		   "median sits from the point.");
	for (size_t i = 0; i < d->est.n; i++)
		if (!d->est.rows[i].runnable && d->est.rows[i].note[0] &&
		    (i == 0 || strcmp(d->est.rows[i - 1].sc.name, d->est.rows[i].sc.name)))
			MARKUP(gs, " %s: %s.", d->est.rows[i].sc.name, d->est.rows[i].note);
	pdf_para(doc, gs->str, 1, 7.5, INK_MUTED);
	g_string_free(gs, TRUE);
}

/* ---------------------------------------------------------------- charts */

/* The grid's budgets whose acceptance is a lower bound (marked ">=" in the
 * chart), named under it; nothing when none is. */
static void budget_lower_note(GString *gs, const struct project_grid *g)
{
	int n = 0;
	for (int b = 0; b < g->nbudgets; b++) {
		int lower = 0;
		for (int t = 0; t < g->ntargets && !lower; t++)
			for (int c = 0; c < g->nconc && !lower; c++)
				lower = PROJECT_CELL(g, t, c, b)->accept_lower;
		if (lower)
			MARKUP(gs, "%s%d", n++ ? ", " : " Lower bounds (marked ≥): B=", g->budgets[b]);
	}
	if (n)
		MARKUP(gs, "%s", ": the trace's top-K cut ranks these trees wanted, so their acceptance "
				 "and throughput can only be higher.");
}

/* One sentence under a chart, computed from what it shows. */
static void chart_caption(struct pdf_doc *doc, const struct report_data *d,
			  const struct report_section *s)
{
	GString *gs = g_string_new(NULL);
	if (s->kind == RSEC_BREAKDOWN) {
		MARKUP(gs, "Non-MoE share of the step:");
		for (size_t i = 0; i < d->est.n; i++) {
			struct report_figure f;
			if (i && !strcmp(d->est.rows[i - 1].sc.name, d->est.rows[i].sc.name))
				continue;
			report_figure(d, i, &f);
			MARKUP(gs, " %s %.0f%%;", d->est.rows[i].sc.name, 100 * f.nonmoe_ms / f.step_ms);
		}
		MARKUP(gs, " the MoE part scales with memory bandwidth, the rest does not, so on a "
			   "faster GPU the non-MoE part decides the step (Amdahl).");
	} else if (s->kind == RSEC_BUDGET && d->have_proj && d->proj.has_grid) {
		const struct project_grid *g = &d->proj.grid;
		int ci = 0;
		for (int k = 0; k < g->nconc; k++) /* the chart's concurrency: C=1 */
			if (g->conc[k] == 1)
				ci = k;
		MARKUP(gs, "Best budget per target (C=%d, least expected regret over the draws):",
		       g->conc[ci]);
		for (int t = 0; t < g->ntargets; t++) {
			int best = g->best[t * g->nconc + ci], run = g->runner[t * g->nconc + ci];
			if (best >= 0 && best < g->nbudgets)
				MARKUP(gs, " %s B=%d (%s%.0f tok/s, best in %.0f%% of draws, regret %.1f tok/s; "
					   "runner-up B=%d);", g->targets[t], g->budgets[best],
				       PROJECT_CELL(g, t, ci, best)->accept_lower ? "at least " : "",
				       PROJECT_CELL(g, t, ci, best)->tok_s.point,
				       100 * PROJECT_CELL(g, t, ci, best)->p_best,
				       PROJECT_CELL(g, t, ci, best)->regret, g->budgets[run]);
		}
		MARKUP(gs, " Acceptance: %s.", g->accept_source);
		budget_lower_note(gs, g);
	} else if (s->kind == RSEC_PARETO && d->have_proj && d->proj.has_grid) {
		const struct project_grid *g = &d->proj.grid;
		MARKUP(gs, "Medians at the best budget, from the lowest to the highest concurrency:");
		for (int t = 0; t < g->ntargets; t++) {
			struct pareto_curve pc;
			chart_report_pareto_curve(d, t, &pc);
			if (pc.n)
				MARKUP(gs, " %s C=%d (B=%d) %.0f tok/s per user at %.0f per GPU, C=%d (B=%d) "
					   "%.0f at %.0f;",
				       g->targets[t], pc.conc[0], pc.budget[0], pc.user[0], pc.gpu[0],
				       pc.conc[pc.n - 1], pc.budget[pc.n - 1], pc.user[pc.n - 1],
				       pc.gpu[pc.n - 1]);
		}
		MARKUP(gs, " a higher concurrency trades speed per user for throughput per GPU.");
	} else if (s->kind == RSEC_MOE_CURVE && d->have_proj && d->proj.fit.nparams) {
		const struct project_fit *fit = &d->proj.fit;
		MARKUP(gs, "Fit (%s curve, points from %s):", calib_moe_curve_name(fit->curve),
		       calib_provenance_name(fit->source));
		for (int i = 0; i < fit->nparams; i++)
			MARKUP(gs, " %s %.4g %s%s;", fit->params[i].name, fit->params[i].value,
			       fit->params[i].unit, fit->params[i].held ? " (held)" : "");
		if (isfinite(fit->rms_pct))
			MARKUP(gs, " residuals %.2f%% rms.", fit->rms_pct);
		if (fit->note[0])
			MARKUP(gs, " %s", fit->note);
	}
	if (gs->len)
		pdf_para(doc, gs->str, 1, 7.5, INK_MUTED);
	g_string_free(gs, TRUE);
}

static void chart_section(struct pdf_doc *doc, const struct report_data *d,
			  const struct report_section *s)
{
	struct report_chart arg = {d, s};
	char title[160], empty[200];
	if (s->kind == RSEC_HISTORY && !s->title[0])
		snprintf(title, sizeof title, "Kernel history: %s%s%s", s->op, s->variant[0] ? "/" : "",
			 s->variant);
	else
		snprintf(title, sizeof title, "%s", section_title(s));
	if (chart_report_empty(d, s, empty, sizeof empty)) { /* a line, not an empty frame */
		char line[400];
		snprintf(line, sizeof line, "%s: %s.", title, empty);
		pdf_space(doc, 4);
		pdf_outline(doc, title);
		pdf_para(doc, line, 0, BODY_PT, INK_MUTED);
		return;
	}
	/* the chart carries its own title: a bookmark, no heading */
	pdf_keep(doc, d->spec.chart_height_pt + 30);
	pdf_space(doc, 6);
	pdf_outline(doc, title);
	pdf_chart(doc, chart_report_draw, &arg, d->spec.chart_width_pt, d->spec.chart_height_pt);
	chart_caption(doc, d, s);
}

/* ---------------------------------------------------------------- regressions */

/* Verdicts ranked for the table; up to FLAGGED_RANK they are listed. */
#define FLAGGED_RANK 4

static int verdict_rank(enum regress_verdict v)
{
	static const int rank[REG_COUNT] = {
		[REG_REGRESSION] = 0, [REG_SUSPECT] = 1, [REG_FAILED] = 2, [REG_IMPROVEMENT] = 3,
		[REG_OUTLIER] = 4,    [REG_OK] = 5,      [REG_SHORT] = 6,  [REG_NEW] = 7,
		[REG_SKIPPED] = 8,    [REG_DRIFT] = 0,   [REG_ENV] = 4,    [REG_UNJUDGED] = 8,
	};
	return rank[v];
}

static void regressions(struct pdf_doc *doc, const struct report_data *d)
{
	static const struct pdf_col cols[] = {
		{"verdict", 0.11, PDF_LEFT},      {"op / variant", 0.14, PDF_LEFT},
		{"params", 0.22, PDF_LEFT},       {"backend, device", 0.19, PDF_LEFT},
		{"median µs", 0.085, PDF_RIGHT},  {"baseline µs", 0.085, PDF_RIGHT},
		{"change", 0.075, PDF_RIGHT},     {"z", 0.055, PDF_RIGHT},
		{"n", 0.04, PDF_RIGHT},
	};
	const struct regress_night *n = &d->night;
	char status[600];
	int shown = 0;

	report_regress_status(d, status, sizeof status);
	pdf_para(doc, status, 0, BODY_PT,
		 d->have_night && n->count[REG_REGRESSION] ? INK_REGRESSION : INK_TEXT);
	if (!d->have_night || !n->n)
		return;
	/* the flagged series; the rest are counted in the status line (every
	 * series is in the spreadsheet's Regressions sheet) */
	for (size_t i = 0; i < n->n; i++)
		shown += verdict_rank(n->entries[i].verdict) <= FLAGGED_RANK;
	if (!shown) {
		pdf_para(doc, "No kernel series is flagged tonight.", 0, BODY_PT, INK_TEXT);
		return;
	}
	shown = 0;
	pdf_table_begin(doc, cols, 9);
	for (int rank = 0; rank <= FLAGGED_RANK; rank++)
		for (size_t i = 0; i < n->n; i++) {
			const struct regress_entry *e = &n->entries[i];
			char op[80], dev[180], med[24], base[24], chg[24], z[24], nights[16], params[320];
			const char *cells[9];
			if (verdict_rank(e->verdict) != rank)
				continue;
			snprintf(op, sizeof op, "%s / %s", e->key.op, e->key.variant);
			snprintf(dev, sizeof dev, "%s, %s", e->key.backend, e->key.device);
			report_fmt_params(params, sizeof params, e->key.params);
			report_fmt_us(med, sizeof med, e->median_us);
			report_fmt_us(base, sizeof base, e->baseline_us);
			snprintf(chg, sizeof chg, isfinite(e->delta_frac) ? "%+.1f%%" : "-",
				 100 * e->delta_frac);
			snprintf(z, sizeof z, isfinite(e->z) ? "%.1f" : "-", e->z);
			snprintf(nights, sizeof nights, "%d", e->nights);
			cells[0] = regress_verdict_names[e->verdict], cells[1] = op;
			cells[2] = params, cells[3] = dev, cells[4] = med, cells[5] = base;
			cells[6] = chg, cells[7] = z, cells[8] = nights;
			pdf_table_row(doc, cells,
				      e->verdict == REG_REGRESSION || e->verdict == REG_SUSPECT ||
						      e->verdict == REG_FAILED ||
						      (e->verdict == REG_DRIFT && e->delta_frac > 0)
					      ? INK_REGRESSION
				      : e->verdict == REG_IMPROVEMENT ? INK_IMPROVEMENT
								      : INK_TEXT,
				      e->verdict == REG_REGRESSION);
			shown++;
		}
	pdf_table_end(doc);
	for (size_t i = 0; i < n->n; i++) { /* where to look: git log / git bisect */
		const struct regress_entry *e = &n->entries[i];
		char line[800];
		if (verdict_rank(e->verdict) > FLAGGED_RANK || !e->commits[0] ||
		    e->verdict == REG_OUTLIER)
			continue;
		snprintf(line, sizeof line, "%s %s/%s %s: commits %s (first bad night %s)%s%s.",
			 regress_verdict_names[e->verdict], e->key.op, e->key.variant, e->key.params,
			 e->commits, e->bad_run_id, e->reason[0] ? "; " : "", e->reason);
		pdf_para(doc, line, 0, 7.5, INK_MUTED);
	}
	for (size_t i = 0; i < n->nrev; i++) {
		char line[800];
		snprintf(line, sizeof line, "Revised: %s/%s %s on %s: %s -> %s.", n->revs[i].key.op,
			 n->revs[i].key.variant, n->revs[i].key.params, n->revs[i].run_id,
			 regress_verdict_names[n->revs[i].from], regress_verdict_names[n->revs[i].to]);
		pdf_para(doc, line, 0, 7.5, INK_MUTED);
	}
	for (size_t i = 0; i < n->impacts.n; i++) {
		pdf_para(doc, d->ntext.impact[i], 0, 7.5,
			 n->impacts.v[i].verdict == REG_REGRESSION ? INK_REGRESSION : INK_TEXT);
	}
	(void)shown;
}

/* ---------------------------------------------------------------- kernels */

static void kernels(struct pdf_doc *doc, const struct report_data *d)
{
	struct pdf_col cols[] = {
		{"op / variant", 0.13, PDF_LEFT}, {"params", 0.18, PDF_LEFT},
		{"backend", 0.085, PDF_LEFT},     {"n", 0.05, PDF_RIGHT},
		{"median µs", 0.08, PDF_RIGHT},   {"p10 - p90 µs", 0.12, PDF_RIGHT},
		{"GB/s", 0.06, PDF_RIGHT},        {"% peak", 0.115, PDF_RIGHT},
		{"max err", 0.07, PDF_RIGHT},     {"status", 0.09, PDF_LEFT},
	};
	GString *gs = g_string_new(NULL);
	char pct_title[48], pct_note[1200];

	report_pct_legend(d, pct_title, sizeof pct_title, pct_note, sizeof pct_note);
	cols[7].title = pct_title;
	for (size_t i = 0; i < d->rec.ndevices; i++) {
		const struct rec_device *v = &d->rec.devices[i];
		MARKUP(gs, "%sDevice %zu: %s (%s, %s, %d %s, %.0f GB)", i ? "\n" : "", i, v->name,
		       v->kind, v->arch, v->cores, strcmp(v->kind, "cuda") ? "cores" : "SMs",
		       v->mem_gb);
	}
	MARKUP(gs, "\nBuild: %s, %s%s%s%s%s.", d->rec.prov.build, d->rec.prov.compiler,
	       d->rec.prov.cuda_runtime[0] ? ", CUDA " : "", d->rec.prov.cuda_runtime,
	       d->rec.prov.nccl[0] ? ", NCCL " : "", d->rec.prov.nccl);
	para_markup(doc, gs);
	g_string_free(gs, TRUE);
	if (!d->rec.nrows) {
		pdf_para(doc, "This run measured no kernels.", 0, BODY_PT, INK_TEXT);
		return;
	}
	pdf_table_begin(doc, cols, 10);
	for (size_t i = 0; i < d->rec.nrows; i++) {
		const struct rec_row *w = &d->rec.rows[i];
		char op[80], raw[256], params[320], n[16], med[24], lo[24], hi[24], band[56],
			gbps[24], pct[24], err[24], status[200];
		const char *cells[10];
		snprintf(op, sizeof op, "%s / %s", w->op, w->variant);
		report_fmt_params(params, sizeof params, rec_row_params_str(w, raw, sizeof raw));
		snprintf(n, sizeof n, "%d", w->samples);
		report_fmt_us(med, sizeof med, w->median_us);
		report_fmt_us(lo, sizeof lo, w->p10_us);
		report_fmt_us(hi, sizeof hi, w->p90_us);
		if (isfinite(w->p10_us) && isfinite(w->p90_us))
			snprintf(band, sizeof band, "%s - %s", lo, hi);
		else
			snprintf(band, sizeof band, "-");
		snprintf(gbps, sizeof gbps, isfinite(w->gbps) ? "%.1f" : "-", w->gbps);
		enum report_bw_basis basis;
		report_fmt_pct(pct, sizeof pct, report_row_pct(d, w, &basis));
		if (!isfinite(w->max_err))
			snprintf(err, sizeof err, "-");
		else if (w->max_err == 0)
			snprintf(err, sizeof err, "0");
		else
			snprintf(err, sizeof err, "%.1e", w->max_err);
		snprintf(status, sizeof status, "%s%s%s", rec_status_name(w->status),
			 w->reason[0] ? ": " : "", w->reason);
		cells[0] = op, cells[1] = params, cells[2] = w->backend, cells[3] = n, cells[4] = med;
		cells[5] = band, cells[6] = gbps, cells[7] = pct, cells[8] = err, cells[9] = status;
		pdf_table_row(doc, cells, w->status == REC_FAILED ? INK_REGRESSION
					  : w->status == REC_OK   ? INK_TEXT
								  : INK_MUTED,
			      0);
	}
	pdf_table_end(doc);
	if (pct_note[0])
		pdf_para(doc, pct_note, 0, 7.5, INK_MUTED);
}

/* ---------------------------------------------------------------- assumptions */

/* One input of the Assumptions appendix (report_each_input's). */
struct asm_row {
	char key[160], basis[48];
	double value;
	const char *source; /* d's, alive while d is */
};

struct asm_rows {
	struct asm_row *v;
	size_t n, cap;
};

static void assumption_collect(void *arg, const char *key, double value, const char *basis,
			       const char *source)
{
	struct asm_rows *a = arg;
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 64;
		struct asm_row *v = realloc(a->v, cap * sizeof *v);
		if (!v)
			return; /* out of memory: the table lists fewer rows */
		a->v = v, a->cap = cap;
	}
	struct asm_row *r = &a->v[a->n++];
	snprintf(r->key, sizeof r->key, "%s", key);
	snprintf(r->basis, sizeof r->basis, "%s", basis);
	r->value = value;
	r->source = source;
}

/* The appendix group of an input key, as a title: the model's own
 * assumptions, one group per GPU pair's transfer factors, the anchors, the
 * MoE curve, the all-reduce, the catalog, the laws. */
static void asm_group(const char *key, char *buf, size_t len)
{
	static const struct {
		const char *prefix, *title;
	} g[] = {{"anchors.", "Anchors: the measured steps"},
		 {"moe_reference.", "MoE reference curve"},
		 {"allreduce.", "All-reduce"},
		 {"gpus.", "GPU catalog"},
		 {"law.", "Scaling laws"},
		 {"model.", "Model geometry"}};
	char from[40], to[40];
	if (sscanf(key, "moe_transfer.%39[^.].%39[^.].", from, to) == 2) {
		snprintf(buf, len, "MoE transfer factors %s -> %s, per M range", from, to);
		return;
	}
	for (size_t i = 0; i < sizeof g / sizeof *g; i++)
		if (!strncmp(key, g[i].prefix, strlen(g[i].prefix))) {
			snprintf(buf, len, "%s", g[i].title);
			return;
		}
	snprintf(buf, len, strchr(key, '.') ? "Other inputs" : "The model's assumptions");
}

/* One row: the value the seed's estimator takes, the median and p5-p95 of
 * its distribution (what ddt's Monte Carlo draws; "-" when fixed), its
 * basis and source; a transfer factor's source once per pair. */
static void assumption_row(struct pdf_doc *doc, const struct report_data *d,
			   const struct asm_row *r, int transfer, int repeat)
{
	char val[32], med[32] = "-", band[64] = "-";
	const struct dist *ds = report_find_dist(d, r->key);
	const char *src = repeat ? "as above (this range's figures: report.xlsx, Assumptions)"
				 : r->source;
	const char *range = strrchr(r->key, '.');
	const char *cells[6] = {transfer && range ? range + 1 : r->key, val, med, band, r->basis,
				src};
	snprintf(val, sizeof val, "%.4g", r->value);
	if (ds && ds->kind != DIST_FIXED) {
		snprintf(med, sizeof med, "%.4g", calib_dist_quantile(ds, 0.5));
		snprintf(band, sizeof band, "%.4g - %.4g", calib_dist_quantile(ds, 0.05),
			 calib_dist_quantile(ds, 0.95));
	}
	pdf_table_row(doc, cells, INK_TEXT, 0);
}

/* The links of a source text: each cited id leads to its public address,
 * or to its entry in the Sources list when it has none. */
static int source_link(const char *text, size_t *pos, size_t *start, size_t *len,
		       const char **target, int *internal, const void *arg)
{
	const struct sources *src = arg;
	size_t s, n;
	if (!sources_next_id(text, pos, &s, &n))
		return 0;
	const struct source *e = sources_find(src, text + s, n);
	*start = s - 1, *len = n + 2; /* with its brackets */
	*internal = e && !e->url[0];
	*target = !e ? NULL : e->url[0] ? e->url : e->id;
	return 1;
}

struct cited_list {
	const struct source **v;
	size_t n;
};

/* The link of a Sources entry's text (the entry's about, by address): its
 * primary address, where the text gives it. */
static int url_link(const char *text, size_t *pos, size_t *start, size_t *len,
		    const char **target, int *internal, const void *arg)
{
	const struct cited_list *c = arg;
	for (size_t i = 0; i < c->n && *pos == 0; i++) {
		const char *p = c->v[i]->url[0] ? strstr(text, c->v[i]->url) : NULL;
		if (text != c->v[i]->about || !p)
			continue;
		*start = (size_t)(p - text);
		*len = strlen(c->v[i]->url);
		*pos = *start + *len;
		*target = c->v[i]->url;
		*internal = 0;
		return 1;
	}
	return 0;
}

/* Every SOURCES.md entry the Assumptions table cites, as calibration/SOURCES.md
 * has it (without its list of facts); each is the destination of its id's
 * links, and its address a link. */
static void sources_list(struct pdf_doc *doc, const struct report_data *d)
{
	static const struct pdf_col cols[] = {{"id", 0.2, PDF_LEFT}, {"source", 0.8, PDF_LEFT}};
	const struct source *v[128];
	size_t n = report_cited_sources(d, v, sizeof v / sizeof *v);
	struct cited_list c = {v, n};

	if (!n)
		return;
	pdf_heading(doc, 2, "Sources");
	pdf_para(doc, "The entries of calibration/SOURCES.md the table cites. An id in the table "
		      "links to its source's public address; one without (ddt's own choices, the "
		      "seed document) links here.",
		 0, 7.5, INK_MUTED);
	pdf_table_begin(doc, cols, 2);
	pdf_table_links(doc, 1, url_link, &c);
	for (size_t i = 0; i < n; i++) {
		char id[64];
		const char *cells[2] = {id, v[i]->about};
		snprintf(id, sizeof id, "[%s]", v[i]->id);
		pdf_table_row_dest(doc, cells, INK_TEXT, v[i]->id);
	}
	pdf_table_end(doc);
}

/* The Assumptions appendix: every input, grouped (the model's own
 * assumptions, the anchors, the curve, each GPU pair's transfer factors,
 * ...), each with the value the seed takes and the median and p5-p95 that
 * ddt draws; then the sources they cite. */
static void assumptions(struct pdf_doc *doc, const struct report_data *d)
{
	static const struct pdf_col cols[] = {
		{"input", 0.24, PDF_LEFT},     {"seed value", 0.07, PDF_RIGHT},
		{"median", 0.08, PDF_RIGHT},   {"p5 - p95", 0.14, PDF_RIGHT},
		{"basis", 0.08, PDF_LEFT},     {"source", 0.39, PDF_LEFT},
	};
	struct asm_rows a = {0};
	char gi[200], gj[200];

	pdf_para(doc, "seed value: what the seed's estimator takes; median and p5 - p95: the "
		      "distribution ddt's Monte Carlo draws it from (\"-\": held at its value). "
		      "measured: a stored measurement; tonight: measured in this run; calibration: "
		      "a stored value estimated or derived; assumed: taken on faith. Each [id] "
		      "cites calibration/SOURCES.md and links to its source.",
		 0, 7.5, INK_MUTED);
	report_each_input(d, assumption_collect, &a);
	for (size_t i = 0; i < a.n; i++) {
		int first = 1;
		asm_group(a.v[i].key, gi, sizeof gi);
		for (size_t j = 0; j < i && first; j++) {
			asm_group(a.v[j].key, gj, sizeof gj);
			first = strcmp(gi, gj) != 0;
		}
		if (!first)
			continue; /* its group was set with the first of its inputs */
		pdf_keep(doc, 60);
		pdf_heading(doc, 2, gi);
		pdf_table_begin(doc, cols, 6);
		if (d->sources.n)
			pdf_table_links(doc, 5, source_link, &d->sources);
		int shown = 0, transfer = !strncmp(gi, "MoE transfer", 12);
		for (size_t j = i; j < a.n; j++) {
			asm_group(a.v[j].key, gj, sizeof gj);
			if (strcmp(gi, gj))
				continue;
			assumption_row(doc, d, &a.v[j], transfer, transfer && shown++);
		}
		pdf_table_end(doc);
	}
	free(a.v);
	sources_list(doc, d);
}

/* ---------------------------------------------------------------- caveats */

/* Sets numbered caveat *k + 1 (escaped printf) as its own paragraph. */
static void caveat(struct pdf_doc *doc, int *k, const char *fmt, ...) G_GNUC_PRINTF(3, 4);
static void caveat(struct pdf_doc *doc, int *k, const char *fmt, ...)
{
	va_list ap;
	char *m, *line;
	va_start(ap, fmt);
	m = g_markup_vprintf_escaped(fmt, ap);
	va_end(ap);
	line = g_strdup_printf("<b>%d.</b> %s", ++*k, m);
	pdf_para(doc, line, 1, BODY_PT, INK_TEXT);
	g_free(line);
	g_free(m);
}

static void caveats(struct pdf_doc *doc, const struct report_data *d)
{
	int k = 0;

	if (!d->have_proj)
		caveat(doc, &k, "No projection.yaml is stored with this run: no bands, tornado, "
			       "budget grid or fit.");
	for (size_t i = 0; d->have_proj && i < d->proj.nnotes; i++)
		caveat(doc, &k, "%s", d->proj.notes[i]);
	for (size_t i = 0; i < d->est.n; i++)
		if (!d->est.rows[i].runnable &&
		    (i == 0 || strcmp(d->est.rows[i - 1].sc.name, d->est.rows[i].sc.name)))
			caveat(doc, &k, "%s is not runnable: %s", d->est.rows[i].sc.name,
			       d->est.rows[i].note[0] ? d->est.rows[i].note : "see its scenario");
	if (d->model.growth_clamped)
		caveat(doc, &k, "The sglang_b16 anchor cannot be met with these shares: the growth "
			       "of attention and draft is clamped to %g.", d->model.growth);
	caveat(doc, &k, "The What-if sheet of report.xlsx is the calibration's model (what "
		       "`ddt estimate` computes); a projection recalibrated from tonight's GPU "
		       "measurements can differ from it.");

	if (d->have_proj && d->proj.nbacktest) {
		static const struct pdf_col cols[] = {
			{"backtest: left out", 0.26, PDF_LEFT}, {"measured ms", 0.12, PDF_RIGHT},
			{"predicted ms", 0.12, PDF_RIGHT},      {"error", 0.1, PDF_RIGHT},
			{"beside the band of", 0.4, PDF_LEFT},
		};
		pdf_space(doc, 4);
		pdf_table_begin(doc, cols, 5);
		for (size_t i = 0; i < d->proj.nbacktest; i++) {
			const struct project_backtest *b = &d->proj.backtest[i];
			char m[24], p[24], e[24], band[160];
			const char *cells[5] = {b->what, m, p, e, band};
			snprintf(m, sizeof m, "%.3f", b->measured);
			snprintf(p, sizeof p, isfinite(b->predicted) ? "%.3f" : "-", b->predicted);
			snprintf(e, sizeof e, isfinite(b->err_pct) ? "%+.1f%%" : "-", b->err_pct);
			if (isfinite(b->band_lo_pct))
				snprintf(band, sizeof band, "%s: %+.0f%% / %+.0f%%", b->band_scenario,
					 b->band_lo_pct, b->band_hi_pct);
			else
				snprintf(band, sizeof band, "%s", b->note);
			pdf_table_row(doc, cells, INK_TEXT, 0);
		}
		pdf_table_end(doc);
	}
	if (d->have_proj && d->proj.nxsum) {
		static const struct pdf_col xc[] = {
			{"cross-GPU backtest: class", 0.26, PDF_LEFT}, {"target family", 0.26, PDF_LEFT},
			{"points", 0.12, PDF_RIGHT},                   {"inside p5-p95", 0.18, PDF_RIGHT},
			{"median |error|", 0.18, PDF_RIGHT},
		};
		char para[400];
		snprintf(para, sizeof para,
			 "Each measured GPU projected from each other one, its own measurements held "
			 "out of the transfer calibration (ddt backtest): %.1f%% of %d measured points "
			 "inside p5-p95 (target 80%%), median |error| of p50 %.1f%% (target 10%%). A "
			 "family never measured (GDDR parts held out) gets a wider band.",
			 d->proj.xback_cover_pct, d->proj.xback_n, d->proj.xback_err_pct);
		pdf_space(doc, 4);
		pdf_para(doc, para, 0, BODY_PT, INK_TEXT);
		pdf_table_begin(doc, xc, 5);
		for (size_t i = 0; i < d->proj.nxsum; i++) {
			const struct project_xsum *x = &d->proj.xsum[i];
			char a[16], b[24], e[24];
			const char *cells[5] = {x->cls[0] ? x->cls : "every class",
						x->fam[0] ? x->fam : "every family", a, b, e};
			snprintf(a, sizeof a, "%d", x->n);
			snprintf(b, sizeof b, "%.0f%%", x->cover_pct);
			snprintf(e, sizeof e, "%.1f%%", x->med_err_pct);
			pdf_table_row(doc, cells, INK_TEXT, !x->fam[0]);
		}
		pdf_table_end(doc);
	}
}

/* ---------------------------------------------------------------- document */

static void render(struct pdf_doc *doc, const void *arg)
{
	const struct report_data *d = arg;
	for (int i = 0; i < d->spec.nsections; i++) {
		const struct report_section *s = &d->spec.sections[i];
		if (chart_report_is_chart(s->kind)) {
			chart_section(doc, d, s);
			continue;
		}
		if (s->kind == RSEC_SUMMARY) {
			page_one(doc, d);
			continue;
		}
		pdf_heading(doc, 1, section_title(s));
		switch (s->kind) {
		case RSEC_PROJECTIONS:
			projections(doc, d, s);
			break;
		case RSEC_REGRESSIONS:
			regressions(doc, d);
			break;
		case RSEC_KERNELS:
			kernels(doc, d);
			break;
		case RSEC_ASSUMPTIONS:
			assumptions(doc, d);
			break;
		case RSEC_CAVEATS:
			caveats(doc, d);
			break;
		default:
			break;
		}
	}
}

int report_pdf_write(const struct report_data *d, const char *path)
{
	char subject[200], head[240], foot[200];
	struct pdf_meta m = {0};

	snprintf(subject, sizeof subject, "ddt nightly report of run %s", d->rec.run_id);
	snprintf(head, sizeof head, "%s", d->spec.title);
	snprintf(foot, sizeof foot, "ddt report %s", d->rec.run_id);
	m.title = d->spec.title;
	m.author = "ddt";
	m.subject = subject;
	m.keywords = "DDTree, speculative decoding, Kimi K2, B300, projection, benchmarks";
	m.creator = "ddt report";
	m.created = d->created_iso;
	m.head_left = head;
	m.head_right = d->date_text;
	m.foot = foot;
	return pdf_write(path, &m, render, d);
}
