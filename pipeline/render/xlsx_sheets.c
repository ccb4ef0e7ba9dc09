/* xlsx_sheets.c - report.xlsx's sheets of the run's figures: Summary,
 * Projections, Throughput, Breakdown, Kernels, History, Regressions,
 * Assumptions, Sources. */
#include "xlsx_book.h"

#include "chart.h"
#include "chart_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- Summary */

void xlsx_sheet_summary(struct xw *x)
{
	const struct report_data *d = x->d;
	lxw_worksheet *ws = xlsx_new_sheet(x, "Summary", 0);
	static const struct col cols[] = {{"scenario", 20}, {"accept", 8}, {"point tok/s", 12},
					  {"p5 tok/s", 12}, {"median tok/s (p50)", 12}, {"p95 tok/s", 12},
					  {"step", 12},    {"pipeline", 10}, {"target", 16}};
	char status[600];
	lxw_row_t r = 0;

	xlsx_put_str(x, ws, r++, 0, d->spec.title, x->f.title);
	xlsx_put_str(x, ws, r, 0, "run", x->f.bold);
	xlsx_put_str(x, ws, r++, 1, d->rec.run_id, NULL);
	xlsx_put_str(x, ws, r, 0, "date", x->f.bold);
	xlsx_put_str(x, ws, r++, 1, d->date_text, NULL);
	xlsx_put_str(x, ws, r, 0, "host / build", x->f.bold);
	{
		char hb[300];
		snprintf(hb, sizeof hb, "%s, %s, %s", d->rec.prov.host, d->rec.prov.git_rev,
			 d->rec.prov.build);
		xlsx_put_str(x, ws, r++, 1, hb, NULL);
	}
	report_regress_status(d, status, sizeof status);
	xlsx_put_str(x, ws, r, 0, "regressions", x->f.bold);
	xlsx_put_str(x, ws, r++, 1, status,
		     d->have_night && d->night.count[REG_REGRESSION] ? x->f.bad : NULL);
	r++;
	xlsx_put_str(x, ws, r++, 0, "Headline: the median (p50) of the Monte Carlo draws, as page one of report.pdf quotes it, its band, and the point (the row's estimator at its central inputs)", x->f.bold);
	xlsx_put_header_row(x, ws, r++, cols, 9);
	for (int pass = 0; pass < 2; pass++) {
		for (int h = 0; h < (pass ? 1 : d->spec.nheadline); h++) {
			const char *name = pass ? d->spec.baseline : d->spec.headline[h];
			for (size_t i = 0; i < d->est.n; i++) {
				struct report_figure f;
				const struct estimate_row *e = &d->est.rows[i];
				if (strcmp(e->sc.name, name))
					continue;
				report_figure(d, i, &f);
				xlsx_put_str(x, ws, r, 0, e->sc.name, pass ? x->f.text : x->f.bold);
				xlsx_put_num(x, ws, r, 1, e->accept, x->f.num);
				xlsx_put_num(x, ws, r, 2, f.tok_s, x->f.tok);
				xlsx_put_num(x, ws, r, 3, f.tok_p5, x->f.tok);
				xlsx_put_num(x, ws, r, 4, f.tok_p50, x->f.tok);
				xlsx_put_num(x, ws, r, 5, f.tok_p95, x->f.tok);
				xlsx_put_num(x, ws, r, 6, f.step_ms, x->f.ms);
				xlsx_put_str(x, ws, r, 7, tmpl_pipeline_name(e->sc.pipeline), NULL);
				xlsx_put_str(x, ws, r, 8, e->target->name, NULL);
				r++;
			}
		}
		if (!pass)
			xlsx_put_str(x, ws, r++, 0, "The measured baseline, as the model gives it:",
				     x->f.note);
	}
	r++;
	const struct anchor *a = &d->cal.sglang_b8;
	char line[600];
	snprintf(line, sizeof line, "Measured: %s pipeline on %s, block %g, budget %g, C=%g: %s",
		 tmpl_pipeline_name(a->pipeline), a->gpu, a->block, a->budget, a->concurrency, a->source);
	xlsx_put_str(x, ws, r++, 0, line, x->f.note);
	xlsx_put_str(x, ws, r++, 0,
		     "Sheets: Projections (every scenario with bands), Throughput (per GPU vs per "
		     "user), Breakdown, Kernels, History, "
		     "Regressions, Assumptions, What-if (the model as live formulas), Sources (every "
		     "cited fact's public source).",
		     x->f.note);
	worksheet_activate(ws);
}

/* ---------------------------------------------------------------- Projections */

/* An ink's colour for a native chart, tint of the way toward white (0: the ink). */
static lxw_color_t ink_tint(enum chart_ink k, double tint)
{
	struct chart_rgb c = chart_ink_rgb(k);
	long r = lround(255 * (c.r + (1 - c.r) * tint)), g = lround(255 * (c.g + (1 - c.g) * tint)),
	     b = lround(255 * (c.b + (1 - c.b) * tint));
	return (lxw_color_t)(r << 16 | g << 8 | b);
}

/* A native chart of rows 1..last of the Projections sheet: per scenario and
 * acceptance its p5-p95 band as a floating bar split at the median (a
 * stacked column on an invisible p5 base: LibreOffice draws a line chart's
 * high-low lines only in a stock chart, which libxlsxwriter does not write,
 * and stacked columns render the same in both). */
static void projections_chart(struct xw *x, lxw_worksheet *ws, lxw_row_t last)
{
	static const struct {
		lxw_col_t col;
		double shade; /* of INK_PROJECTED toward white; < 0: invisible */
	} ser[] = {{15, -1}, {22, 0.55}, {23, 0.25}};
	lxw_chart *ch = workbook_add_chart(x->wb, LXW_CHART_COLUMN_STACKED);
	lxw_chart_line none = {.none = LXW_TRUE};
	lxw_chart_options opt = {.x_scale = 2.2, .y_scale = 1.7};

	for (size_t i = 0; i < sizeof ser / sizeof *ser; i++) {
		lxw_chart_series *s = chart_add_series(ch, NULL, NULL);
		double k = ser[i].shade;
		lxw_chart_fill fill = {.none = k < 0 ? LXW_TRUE : LXW_FALSE,
				       .color = ink_tint(INK_PROJECTED, k < 0 ? 0 : k)};
		chart_series_set_categories(s, "Projections", 1, 21, last, 21);
		chart_series_set_values(s, "Projections", 1, ser[i].col, last, ser[i].col);
		chart_series_set_name_range(s, "Projections", 0, ser[i].col);
		chart_series_set_fill(s, &fill);
		if (k < 0)
			chart_series_set_line(s, &none);
	}
	chart_set_series_gap(ch, 60);
	xlsx_ck(x, chart_legend_delete_series(ch, (int16_t[]){0, -1}));
	chart_title_set_name(ch, "tok/s per scenario: the p5-p95 band, split at the median");
	chart_axis_set_name(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_Y), "decode throughput (tok/s)");
	chart_axis_set_num_font(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_X),
				&(lxw_chart_font){.rotation = -45});
	chart_legend_set_position(ch, LXW_CHART_LEGEND_BOTTOM);
	chart_show_blanks_as(ch, LXW_CHART_BLANKS_AS_GAP);
	xlsx_ck(x, worksheet_insert_chart_opt(ws, last + 3, 0, ch, &opt));
}

void xlsx_sheet_projections(struct xw *x)
{
	const struct report_data *d = x->d;
	lxw_worksheet *ws = xlsx_new_sheet(x, "Projections", 0);
	char label[96];
	static const struct col cols[] = {
		{"scenario", 20},       {"target", 10},      {"pipeline", 9},
		{"block b", 8},         {"budget B", 8},     {"C", 5},
		{"M", 6},               {"accept", 8},       {"runnable", 9},
		{"MoE (ms)", 11},       {"non-MoE (ms)", 12}, {"step (ms)", 11},
		{"step p5 (ms)", 12},   {"step p95 (ms)", 12}, {"point tok/s (its estimator)", 12},
		{"p5 tok/s", 12},       {"median tok/s (p50, the headline)", 12}, {"p95 tok/s", 12},
		{"lean (%)", 9},        {"lean by", 34},     {"note", 50},
		{"chart label", 22},    {"p5 to p50 (tok/s)", 12}, {"p50 to p95 (tok/s)", 12}};
	lxw_row_t r = 0;

	xlsx_put_header(x, ws, r++, cols, 24);
	for (size_t i = 0; i < d->est.n; i++, r++) {
		const struct estimate_row *e = &d->est.rows[i];
		struct report_figure f;
		report_figure(d, i, &f);
		xlsx_put_str(x, ws, r, 0, e->sc.name, NULL);
		xlsx_put_str(x, ws, r, 1, e->target->id, NULL);
		xlsx_put_str(x, ws, r, 2, tmpl_pipeline_name(e->sc.pipeline), NULL);
		xlsx_put_num(x, ws, r, 3, e->sc.block, x->f.intg);
		xlsx_put_num(x, ws, r, 4, e->sc.budget, x->f.intg);
		xlsx_put_num(x, ws, r, 5, e->sc.concurrency, x->f.intg);
		xlsx_put_num(x, ws, r, 6, f.M, x->f.intg);
		xlsx_put_num(x, ws, r, 7, e->accept, x->f.num);
		xlsx_put_str(x, ws, r, 8, e->runnable ? "yes" : "no", e->runnable ? NULL : x->f.bad);
		xlsx_put_num(x, ws, r, 9, f.moe_ms, x->f.ms);
		xlsx_put_num(x, ws, r, 10, f.nonmoe_ms, x->f.ms);
		xlsx_put_num(x, ws, r, 11, f.step_ms, x->f.ms);
		xlsx_put_num(x, ws, r, 12, f.step_p5, x->f.ms);
		xlsx_put_num(x, ws, r, 13, f.step_p95, x->f.ms);
		xlsx_put_num(x, ws, r, 14, f.tok_s, x->f.tok);
		xlsx_put_num(x, ws, r, 15, f.tok_p5, x->f.tok);
		xlsx_put_num(x, ws, r, 16, f.tok_p50, x->f.tok);
		xlsx_put_num(x, ws, r, 17, f.tok_p95, x->f.tok);
		xlsx_put_num(x, ws, r, 18, f.proj ? round(f.proj->lean_pct * 10) / 10 + 0.0 : NAN,
			     x->f.pct1);
		xlsx_put_str(x, ws, r, 19, f.proj ? f.proj->lean_by : "", NULL);
		xlsx_put_str(x, ws, r, 20, e->note, NULL);
		snprintf(label, sizeof label, "%s @%g", e->sc.name, e->accept);
		xlsx_put_str(x, ws, r, 21, label, NULL);
		/* the chart's band segments, live from the band's columns */
		char formula[64];
		snprintf(formula, sizeof formula, "=Q%1$u-P%1$u", (unsigned)r + 1);
		xlsx_put_formula(x, ws, r, 22, formula, x->f.tok, f.tok_p50 - f.tok_p5);
		snprintf(formula, sizeof formula, "=R%1$u-Q%1$u", (unsigned)r + 1);
		xlsx_put_formula(x, ws, r, 23, formula, x->f.tok, f.tok_p95 - f.tok_p50);
	}
	xlsx_ck(x, worksheet_autofilter(ws, 0, 0, r ? r - 1 : 0, 23));
	if (r > 1)
		projections_chart(x, ws, r - 1);
}

/* ---------------------------------------------------------------- Throughput */

/* A scatter series of one target: rows r0..r1, x and y from columns cx, cy. */
static lxw_chart_series *tp_series(lxw_chart *ch, lxw_row_t r0, lxw_row_t r1, lxw_col_t cx,
				   lxw_col_t cy, enum chart_ink ink, int band)
{
	lxw_chart_series *s = chart_add_series(ch, NULL, NULL);
	lxw_chart_line line = {.color = ink_tint(ink, 0), .width = band ? 0.75 : 2,
			       .dash_type = band ? LXW_CHART_LINE_DASH_DASH : LXW_CHART_LINE_DASH_SOLID};
	lxw_chart_fill fill = {.color = ink_tint(ink, 0)};
	chart_series_set_categories(s, "Throughput", r0, cx, r1, cx);
	chart_series_set_values(s, "Throughput", r0, cy, r1, cy);
	chart_series_set_line(s, &line);
	chart_series_set_marker_type(s, band ? LXW_CHART_MARKER_NONE : LXW_CHART_MARKER_CIRCLE);
	if (!band) {
		chart_series_set_marker_size(s, 6);
		chart_series_set_marker_fill(s, &fill);
		chart_series_set_marker_line(s, &(lxw_chart_line){.none = LXW_TRUE});
	}
	return s;
}

/* Throughput per GPU against speed per user, per target and concurrency at
 * its best budget (the PDF's chart as a table and a native scatter chart:
 * the median joined, the p5 and p95 dashed). */
void xlsx_sheet_throughput(struct xw *x)
{
	const struct report_data *d = x->d;
	lxw_worksheet *ws = xlsx_new_sheet(x, "Throughput", 0);
	static const struct col cols[] = {
		{"target", 14}, {"GPU", 30}, {"C", 5}, {"best budget B", 8},
		{"p5 tok/s", 11}, {"p50 tok/s", 11}, {"p95 tok/s", 11},
		{"p5 tok/s per user", 11}, {"p50 tok/s per user", 11}, {"p95 tok/s per user", 11},
		{"p5 tok/s per GPU", 11}, {"p50 tok/s per GPU", 11}, {"p95 tok/s per GPU", 11}};
	const struct project_grid *g = d->have_proj && d->proj.has_grid ? &d->proj.grid : NULL;
	double gpus = chart_report_gpus(d);
	lxw_chart *ch = NULL;
	int16_t hide[3 * PROJECT_MAX_GRID_TARGETS + 1];
	int nhide = 0, nser = 0;
	lxw_row_t r = 0;
	char note[300];

	xlsx_put_header(x, ws, r++, cols, 13);
	if (!g) {
		xlsx_put_str(x, ws, r, 0, "no budget grid is stored with this run", x->f.note);
		return;
	}
	int group[PROJECT_MAX_GRID_TARGETS];
	chart_report_pareto_groups(d, group);
	ch = workbook_add_chart(x->wb, LXW_CHART_SCATTER_STRAIGHT_WITH_MARKERS);
	for (int t = 0; t < g->ntargets; t++) {
		struct pareto_curve pc;
		const struct gpu *gp = calib_gpu(&d->cal, g->targets[t]);
		lxw_row_t r0 = r;
		chart_report_pareto_curve(d, t, &pc);
		for (int k = 0; k < pc.n; k++, r++) {
			double tok[3] = {pc.lo[k], pc.gpu[k] * gpus, pc.hi[k]};
			xlsx_put_str(x, ws, r, 0, g->targets[t], NULL);
			xlsx_put_str(x, ws, r, 1, gp ? gp->name : "", NULL);
			xlsx_put_num(x, ws, r, 2, pc.conc[k], x->f.intg);
			xlsx_put_num(x, ws, r, 3, pc.budget[k], x->f.intg);
			for (int q = 0; q < 3; q++) {
				xlsx_put_num(x, ws, r, (lxw_col_t)(4 + q), tok[q], x->f.tok);
				xlsx_put_num(x, ws, r, (lxw_col_t)(7 + q), tok[q] / pc.conc[k], x->f.tok);
				xlsx_put_num(x, ws, r, (lxw_col_t)(10 + q), tok[q] / gpus, x->f.tok);
			}
		}
		if (r == r0)
			continue;
		enum chart_ink ink = chart_target_ink(group[t]); /* as in the PDF's chart */
		chart_series_set_name(tp_series(ch, r0, r - 1, 8, 11, ink, 0),
				      gp ? gp->name : g->targets[t]);
		tp_series(ch, r0, r - 1, 7, 10, ink, 1);
		tp_series(ch, r0, r - 1, 9, 12, ink, 1);
		hide[nhide++] = (int16_t)(nser + 1);
		hide[nhide++] = (int16_t)(nser + 2);
		nser += 3;
	}
	hide[nhide] = -1;
	snprintf(note, sizeof note,
		 "Per user = tok/s / C; per GPU = tok/s / %g (the GPUs of one replica, TP-%g). "
		 "%s pipeline, block %d; each concurrency at its best node budget.",
		 gpus, gpus, tmpl_pipeline_name(g->pipeline), g->block);
	xlsx_put_str(x, ws, r + 1, 0, note, x->f.note);
	xlsx_ck(x, worksheet_autofilter(ws, 0, 0, r - 1, 12));
	if (nhide)
		xlsx_ck(x, chart_legend_delete_series(ch, hide));
	chart_title_set_name(ch, "Throughput per GPU vs speed per user (median; dashed: p5, p95)");
	chart_axis_set_name(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_X), "speed per user (tok/s per user)");
	chart_axis_set_name(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_Y),
			    "throughput per GPU (tok/s per GPU)");
	chart_legend_set_position(ch, LXW_CHART_LEGEND_BOTTOM);
	lxw_chart_options opt = {.x_scale = 2.0, .y_scale = 1.7};
	xlsx_ck(x, worksheet_insert_chart_opt(ws, r + 3, 0, ch, &opt));
}

/* ---------------------------------------------------------------- Breakdown */

void xlsx_sheet_breakdown(struct xw *x)
{
	const struct report_data *d = x->d;
	lxw_worksheet *ws = xlsx_new_sheet(x, "Breakdown", 0);
	struct col cols[2 + 2 * COMP_COUNT + 3];
	char titles[2 * COMP_COUNT][48];
	int n = 0;
	lxw_row_t r = 0;

	cols[n++] = (struct col){"scenario", 20};
	cols[n++] = (struct col){"M", 6};
	for (int k = 0; k < COMP_COUNT; k++) {
		snprintf(titles[k], sizeof titles[k], "%s (ms)", model_comp_names[k]);
		cols[n++] = (struct col){titles[k], 13};
	}
	cols[n++] = (struct col){"non-MoE (ms)", 13};
	cols[n++] = (struct col){"step (ms)", 12};
	for (int k = 0; k < COMP_COUNT; k++) {
		snprintf(titles[COMP_COUNT + k], sizeof titles[0], "%s share",
			 model_comp_names[k]);
		cols[n++] = (struct col){titles[COMP_COUNT + k], 11};
	}
	cols[n++] = (struct col){"non-MoE share", 12};
	xlsx_put_header(x, ws, r++, cols, n);
	for (size_t i = 0; i < d->est.n; i++) {
		struct report_figure f;
		if (i && !strcmp(d->est.rows[i - 1].sc.name, d->est.rows[i].sc.name))
			continue; /* components do not depend on the acceptance */
		report_figure(d, i, &f);
		int c = 0;
		xlsx_put_str(x, ws, r, (lxw_col_t)c++, d->est.rows[i].sc.name, NULL);
		xlsx_put_num(x, ws, r, (lxw_col_t)c++, f.M, x->f.intg);
		for (int k = 0; k < COMP_COUNT; k++)
			xlsx_put_num(x, ws, r, (lxw_col_t)c++, f.ms[k], x->f.ms);
		xlsx_put_num(x, ws, r, (lxw_col_t)c++, f.nonmoe_ms, x->f.ms);
		xlsx_put_num(x, ws, r, (lxw_col_t)c++, f.step_ms, x->f.ms);
		for (int k = 0; k < COMP_COUNT; k++)
			xlsx_put_num(x, ws, r, (lxw_col_t)c++, f.ms[k] / f.step_ms, x->f.pct);
		xlsx_put_num(x, ws, r, (lxw_col_t)c++, f.nonmoe_ms / f.step_ms, x->f.pct);
		r++;
	}
	xlsx_ck(x, worksheet_autofilter(ws, 0, 0, r - 1, (lxw_col_t)(n - 1)));
}

/* ---------------------------------------------------------------- Kernels */

void xlsx_sheet_kernels(struct xw *x)
{
	const struct report_data *d = x->d;
	lxw_worksheet *ws = xlsx_new_sheet(x, "Kernels", 0);
	struct col cols[] = {
		{"op", 14},          {"variant", 9},      {"backend", 8},     {"device", 30},
		{"params", 34},      {"samples", 8},      {"median (µs)", 12}, {"p10 (µs)", 11},
		{"p90 (µs)", 11},    {"min (µs)", 11},    {"max (µs)", 11},   {"stdev (µs)", 11},
		{"bytes", 12},       {"flops", 12},       {"GB/s", 11},       {"% of peak", 10},
		{"max error", 10},   {"SM clock (MHz)", 10}, {"status", 11},  {"reason", 50}};
	char pct_title[48], pct_note[1200];
	lxw_row_t r = 0;

	report_pct_legend(d, pct_title, sizeof pct_title, pct_note, sizeof pct_note);
	cols[15].title = pct_title;
	xlsx_put_header(x, ws, r++, cols, 20);
	for (size_t i = 0; i < d->rec.nrows; i++, r++) {
		const struct rec_row *w = &d->rec.rows[i];
		char params[256];
		const char *dev = (size_t)w->device < d->rec.ndevices ? d->rec.devices[w->device].name
								      : "";
		xlsx_put_str(x, ws, r, 0, w->op, NULL);
		xlsx_put_str(x, ws, r, 1, w->variant, NULL);
		xlsx_put_str(x, ws, r, 2, w->backend, NULL);
		xlsx_put_str(x, ws, r, 3, dev, NULL);
		xlsx_put_str(x, ws, r, 4, rec_row_params_str(w, params, sizeof params), NULL);
		xlsx_put_num(x, ws, r, 5, w->samples, x->f.intg);
		xlsx_put_num(x, ws, r, 6, w->median_us, x->f.us);
		xlsx_put_num(x, ws, r, 7, w->p10_us, x->f.us);
		xlsx_put_num(x, ws, r, 8, w->p90_us, x->f.us);
		xlsx_put_num(x, ws, r, 9, w->min_us, x->f.us);
		xlsx_put_num(x, ws, r, 10, w->max_us, x->f.us);
		xlsx_put_num(x, ws, r, 11, w->stdev_us, x->f.us);
		xlsx_put_num(x, ws, r, 12, w->bytes, x->f.sci);
		xlsx_put_num(x, ws, r, 13, w->flops, x->f.sci);
		xlsx_put_num(x, ws, r, 14, w->gbps, x->f.gbps);
		enum report_bw_basis basis;
		double pct = report_row_pct(d, w, &basis);
		xlsx_put_num(x, ws, r, 15, pct / 100, x->f.pct);
		if (pct > 100)
			xlsx_ck(x, worksheet_write_comment(ws, r, 15, "ran from cache: above the device "
							            "memory's bandwidth"));
		xlsx_put_num(x, ws, r, 16, w->max_err, x->f.sci);
		xlsx_put_num(x, ws, r, 17, w->sm_clock_mhz, x->f.intg);
		xlsx_put_str(x, ws, r, 18, rec_status_name(w->status), w->status == REC_FAILED ? x->f.bad : NULL);
		xlsx_put_str(x, ws, r, 19, w->reason, NULL);
	}
	xlsx_ck(x, worksheet_autofilter(ws, 0, 0, r ? r - 1 : 0, 19));
	if (pct_note[0])
		xlsx_put_str(x, ws, r + 1, 0, pct_note, x->f.note);
}

/* ---------------------------------------------------------------- History */

#define XLSX_HIST_SERIES 12

/* Series shown: those of the template's history sections, in their order. */
static int history_series_idx(const struct report_data *d, int *idx, int max)
{
	int n = 0;
	for (int s = 0; s < d->spec.nsections; s++) {
		const struct report_section *sec = &d->spec.sections[s];
		if (sec->kind != RSEC_HISTORY)
			continue;
		for (size_t i = 0; i < d->hist.n && n < max; i++) {
			const struct hist_series *hs = &d->hist.series[i];
			int dup = 0;
			if (strcmp(hs->key.op, sec->op) || (sec->variant[0] && strcmp(hs->key.variant, sec->variant)))
				continue;
			for (int k = 0; k < n; k++)
				dup |= idx[k] == (int)i;
			if (!dup)
				idx[n++] = (int)i;
		}
	}
	return n;
}

void xlsx_sheet_history(struct xw *x)
{
	const struct report_data *d = x->d;
	lxw_worksheet *ws = xlsx_new_sheet(x, "History", 0);
	size_t nruns = d->hist_run >= 0 ? (size_t)d->hist_run + 1 : 0;
	int idx[XLSX_HIST_SERIES], n = history_series_idx(d, idx, XLSX_HIST_SERIES);
	char labels[XLSX_HIST_SERIES][640];
	struct col cols[2 + XLSX_HIST_SERIES];
	lxw_row_t r = 0;

	cols[0] = (struct col){"night (UTC)", 12};
	cols[1] = (struct col){"run", 30};
	for (int k = 0; k < n; k++) {
		const struct hist_key *key = &d->hist.series[idx[k]].key;
		snprintf(labels[k], sizeof labels[k], "%s/%s %s %s (µs)", key->op, key->variant,
			 key->params, key->backend);
		cols[2 + k] = (struct col){labels[k], 18};
	}
	xlsx_put_header(x, ws, r++, cols, 2 + n);
	if (nruns < 2 || !n) {
		xlsx_put_str(x, ws, r, 0, "no history yet", x->f.note);
		return;
	}
	for (size_t i = 0; i < nruns; i++, r++) {
		char date[16];
		snprintf(date, sizeof date, "%.10s", d->hist.runs[i].created); /* the day */
		xlsx_put_str(x, ws, r, 0, date, NULL);
		xlsx_put_str(x, ws, r, 1, d->hist.runs[i].run_id, NULL);
		for (int k = 0; k < n; k++) {
			const struct hist_point *p = history_point_at(&d->hist.series[idx[k]], i);
			xlsx_put_num(x, ws, r, (lxw_col_t)(2 + k), p ? p->median_us : NAN, x->f.us);
		}
	}
	xlsx_ck(x, worksheet_autofilter(ws, 0, 0, r - 1, (lxw_col_t)(1 + n)));

	/* a native line chart: one line per series over the nights */
	lxw_chart *ch = workbook_add_chart(x->wb, LXW_CHART_LINE);
	static const enum chart_ink inks[] = {INK_MEASURED, INK_MOE, INK_ATTN, INK_TREE,
					      INK_DRAFT, INK_ALLREDUCE};
	for (int k = 0; k < n; k++) {
		lxw_chart_series *s = chart_add_series(ch, NULL, NULL);
		lxw_chart_line line = {0};
		chart_series_set_categories(s, "History", 1, 0, r - 1, 0);
		chart_series_set_values(s, "History", 1, (lxw_col_t)(2 + k), r - 1,
					(lxw_col_t)(2 + k));
		chart_series_set_name_range(s, "History", 0, (lxw_col_t)(2 + k));
		line.color = (lxw_color_t)strtoul(chart_ink_hex(inks[k % 6]) + 1, NULL, 16);
		line.width = 1.25;
		chart_series_set_line(s, &line);
	}
	chart_title_set_name(ch, "Kernel medians per night");
	chart_axis_set_name(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_Y), "median time per call (µs)");
	/* series of one op span decades (M=1 to M=129): a log axis keeps each readable */
	chart_axis_set_log_base(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_Y), 10);
	chart_axis_set_name(chart_axis_get(ch, LXW_CHART_AXIS_TYPE_X), "night (UTC)");
	chart_legend_set_position(ch, LXW_CHART_LEGEND_BOTTOM);
	chart_show_blanks_as(ch, LXW_CHART_BLANKS_AS_GAP);
	lxw_chart_options opt = {.x_scale = 2.0, .y_scale = 1.6};
	xlsx_ck(x, worksheet_insert_chart_opt(ws, 1, (lxw_col_t)(3 + n), ch, &opt));
}

/* ---------------------------------------------------------------- Regressions */

/* The tok/s each regression or improvement moves, one row each from row r:
 * the kernel, its change, and the scenario it moves (none: its op maps to
 * no model component). */
static void regress_impacts(struct xw *x, lxw_worksheet *ws, lxw_row_t r,
			    const struct regress_impacts *im)
{
	/* under the verdicts' columns, whose widths they keep */
	static const char *const head[] = {"impact: op", "variant",	"params",     "kernel change",
					   "model component", "scenario", "target", "tok/s",
					   "tok/s after", "tok/s change"};
	if (!im->n)
		return;
	for (int k = 0; k < 10; k++)
		xlsx_put_str(x, ws, r, (lxw_col_t)k, head[k], x->f.head);
	r++;
	for (size_t i = 0; i < im->n; i++, r++) {
		const struct regress_impact *e = &im->v[i];
		xlsx_put_str(x, ws, r, 0, e->key.op, NULL);
		xlsx_put_str(x, ws, r, 1, e->key.variant, NULL);
		xlsx_put_str(x, ws, r, 2, e->key.params, NULL);
		xlsx_put_num(x, ws, r, 3, e->delta_frac, x->f.pct);
		xlsx_put_str(x, ws, r, 4, e->comp >= 0 ? model_comp_names[e->comp]
						       : "none (add the op to regress.impact)", NULL);
		if (e->comp < 0)
			continue;
		xlsx_put_str(x, ws, r, 5, e->scenario, NULL);
		xlsx_put_str(x, ws, r, 6, e->target, NULL);
		xlsx_put_num(x, ws, r, 7, e->tok_s, x->f.tok);
		xlsx_put_num(x, ws, r, 8, e->tok_s_after, x->f.tok);
		xlsx_put_num(x, ws, r, 9, e->change_frac, x->f.pct);
	}
}

void xlsx_sheet_regressions(struct xw *x)
{
	const struct report_data *d = x->d;
	const struct regress_night *nt = &d->night;
	lxw_worksheet *ws = xlsx_new_sheet(x, "Regressions", 0);
	static const struct col cols[] = {
		{"verdict", 16},       {"op", 14},          {"variant", 9},     {"params", 30},
		{"device", 26},        {"backend", 8},      {"build", 16},      {"status", 9},
		{"median (µs)", 12},   {"baseline (µs)", 13}, {"change", 9},     {"noise", 9},
		{"robust z", 9},       {"band low (µs)", 13}, {"band high (µs)", 13},
		{"nights", 7},         {"reason", 40}};
	char status[600];
	lxw_row_t r = 0;

	xlsx_put_header(x, ws, r++, cols, 17);
	if (!d->have_night) {
		xlsx_put_str(x, ws, r, 0, "no history yet", x->f.note);
		return;
	}
	for (size_t i = 0; i < nt->n; i++, r++) {
		const struct regress_entry *e = &nt->entries[i];
		int bad = e->verdict == REG_REGRESSION || e->verdict == REG_SUSPECT;
		xlsx_put_str(x, ws, r, 0, regress_verdict_names[e->verdict],
			     bad ? x->f.bad : e->verdict == REG_IMPROVEMENT ? x->f.good : NULL);
		xlsx_put_str(x, ws, r, 1, e->key.op, NULL);
		xlsx_put_str(x, ws, r, 2, e->key.variant, NULL);
		xlsx_put_str(x, ws, r, 3, e->key.params, NULL);
		xlsx_put_str(x, ws, r, 4, e->key.device, NULL);
		xlsx_put_str(x, ws, r, 5, e->key.backend, NULL);
		xlsx_put_str(x, ws, r, 6, e->key.build, NULL);
		xlsx_put_str(x, ws, r, 7, rec_status_name(e->status), NULL);
		xlsx_put_num(x, ws, r, 8, e->median_us, x->f.us);
		xlsx_put_num(x, ws, r, 9, e->baseline_us, x->f.us);
		xlsx_put_num(x, ws, r, 10, e->delta_frac, x->f.pct);
		xlsx_put_num(x, ws, r, 11, e->noise_frac, x->f.pct);
		xlsx_put_num(x, ws, r, 12, e->z, x->f.num);
		xlsx_put_num(x, ws, r, 13, e->band_lo_us, x->f.us);
		xlsx_put_num(x, ws, r, 14, e->band_hi_us, x->f.us);
		xlsx_put_num(x, ws, r, 15, e->nights, x->f.intg);
		xlsx_put_str(x, ws, r, 16, e->reason, NULL);
	}
	if (nt->n)
		xlsx_ck(x, worksheet_autofilter(ws, 0, 0, r - 1, 16));
	r++;
	report_regress_status(d, status, sizeof status);
	xlsx_put_str(x, ws, r++, 0, status, nt->count[REG_REGRESSION] ? x->f.bad : x->f.bold);
	regress_impacts(x, ws, r + 1, &nt->impacts);
}

/* ---------------------------------------------------------------- Assumptions */

/* The Sources sheet's row (0-based) of entry e, or -1. */
static long cited_row(const struct asm_sheet *a, const struct source *e)
{
	for (size_t i = 0; i < a->ncited; i++)
		if (a->cited[i] == e)
			return (long)i + 1;
	return -1;
}

/* The source columns of an Assumptions row: every id it cites, and a link
 * to the first one with a public address, else to the first one's entry on
 * the Sources sheet. */
static void assumption_links(struct asm_sheet *a, const char *source)
{
	struct xw *x = a->x;
	const struct source *first = NULL, *pub = NULL;
	size_t pos = 0, start, len, off = 0;
	char ids[512] = "", text[600], url[64];

	while (sources_next_id(source, &pos, &start, &len)) {
		const struct source *e = sources_find(&x->d->sources, source + start, len);
		if (off < sizeof ids)
			off += (size_t)snprintf(ids + off, sizeof ids - off, "%s[%.*s]", off ? " " : "",
						(int)len, source + start);
		if (e && !first)
			first = e;
		if (e && !pub && e->url[0])
			pub = e;
	}
	xlsx_put_str(x, a->ws, a->r, 9, ids, NULL);
	if (pub) {
		snprintf(text, sizeof text, "[%s] %s", pub->id, pub->url);
		xlsx_ck(x, worksheet_write_url_opt(a->ws, a->r, 10, pub->url, NULL, text, NULL));
	} else if (first && cited_row(a, first) >= 0) {
		snprintf(url, sizeof url, "internal:Sources!A%ld", cited_row(a, first) + 1);
		snprintf(text, sizeof text, "[%s]: no public source, see sheet Sources", first->id);
		xlsx_ck(x, worksheet_write_url_opt(a->ws, a->r, 10, url, NULL, text, NULL));
	}
}

static void assumption(void *arg, const char *key, double v, const char *basis,
		       const char *source)
{
	struct asm_sheet *a = arg;
	struct xw *x = a->x;
	const struct dist *ds = report_find_dist(x->d, key);
	char dist[96] = "";
	if (ds)
		report_fmt_dist(dist, sizeof dist, ds);
	int drawn = ds && ds->kind != DIST_FIXED;
	xlsx_put_str(x, a->ws, a->r, 0, key, NULL);
	xlsx_put_num(x, a->ws, a->r, 1, v, x->f.num);
	/* what ddt's Monte Carlo draws it from (blank: held at its value) */
	xlsx_put_num(x, a->ws, a->r, 2, drawn ? calib_dist_quantile(ds, 0.5) : NAN, x->f.num);
	xlsx_put_num(x, a->ws, a->r, 3, drawn ? calib_dist_quantile(ds, 0.05) : NAN, x->f.num);
	xlsx_put_num(x, a->ws, a->r, 4, drawn ? calib_dist_quantile(ds, 0.95) : NAN, x->f.num);
	xlsx_put_str(x, a->ws, a->r, 5, basis, NULL);
	xlsx_put_str(x, a->ws, a->r, 6, dist, NULL);
	xlsx_put_str(x, a->ws, a->r, 7, ds ? ds->unit : "", NULL);
	xlsx_put_str(x, a->ws, a->r, 8, source, NULL);
	assumption_links(a, source);
	a->r++;
}

/* Every input under the key --set takes, with its sources linked. */
void xlsx_sheet_assumptions(struct xw *x, struct asm_sheet *a)
{
	static const struct col cols[] = {
		{"input", 34},   {"seed value (the seed's estimator)", 12},
		{"median (ddt's draws)", 11}, {"p5", 10}, {"p95", 10}, {"basis", 12},
		{"distribution", 26}, {"unit", 40}, {"source", 90}, {"cites", 30},
		{"public source", 60}};

	a->x = x;
	a->ws = xlsx_new_sheet(x, "Assumptions", 0);
	a->r = 0;
	xlsx_put_header(x, a->ws, a->r++, cols, 11);
	report_each_input(x->d, assumption, a);
	xlsx_ck(x, worksheet_autofilter(a->ws, 0, 0, a->r - 1, 10));
}

/* The SOURCES.md entries the Assumptions sheet cites (as the PDF's Sources
 * list): id, public address (a link), what it is. */
void xlsx_sheet_sources(struct xw *x, const struct asm_sheet *a)
{
	static const struct col cols[] = {{"id", 24}, {"public source", 60}, {"what it is", 120}};
	lxw_worksheet *ws = xlsx_new_sheet(x, "Sources", 0);
	lxw_row_t r = 0;

	xlsx_put_header(x, ws, r++, cols, 3);
	for (size_t i = 0; i < a->ncited; i++, r++) {
		char id[64];
		snprintf(id, sizeof id, "[%s]", a->cited[i]->id);
		xlsx_put_str(x, ws, r, 0, id, x->f.bold);
		if (a->cited[i]->url[0])
			xlsx_ck(x, worksheet_write_url(ws, r, 1, a->cited[i]->url, NULL));
		else
			xlsx_put_str(x, ws, r, 1, "no public source", x->f.note);
		xlsx_put_str(x, ws, r, 2, a->cited[i]->about, x->f.wrap);
		/* as many lines as the text takes at the column's width (120
		 * characters); spreadsheets do not size a written row to its text */
		xlsx_ck(x, worksheet_set_row(ws, r, 15.0 * (double)(strlen(a->cited[i]->about) / 110 + 1),
					     NULL));
	}
	r++;
	xlsx_put_str(x, ws, r, 0,
		     x->d->sources.n ? "Every fact with its primary source: calibration/SOURCES.md."
				     : "No calibration/SOURCES.md was stored with this run.",
		     x->f.note);
}
