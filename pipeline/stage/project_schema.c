/* project_schema.c - the tables of projection.yaml's keys. */
#include "project_schema.h"

#include "project.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A figure: written as a number or null, required on read. */
#define FIG (Y_REQUIRED | Y_NULLABLE)

#define BAND_NUM(m, h) YS_FIELD(struct band, m, YS_NUM, FIG, .help = (h))

static const struct yschema_field band_fields[] = {
	BAND_NUM(point, "the row's estimator's headline"),
	BAND_NUM(p5, "5th percentile of the draws"),
	BAND_NUM(p50, "median of the draws"),
	BAND_NUM(p95, "95th percentile of the draws"),
};
const struct yschema project_schema_band = YS_TABLE("band", band_fields, 1);

_Static_assert(COMP_COUNT == 6, "a model component needs its key in ms_fields");

/* ms: the components at the point values, one key per model component by
 * its name (model_comp_names), in the components' order. Fields of the
 * row itself, under a key of their own (the ms entry's off is 0). */
#define MS(comp, k, h) YS_KEYED(struct project_row, k, ms[comp], YS_NUM, FIG, .help = (h))
static const struct yschema_field ms_fields[] = {
	MS(COMP_MOE, "moe", "the MoE per step"),
	MS(COMP_ATTN, "attn_lmhead", "attention and lm_head per step"),
	MS(COMP_DRAFT, "draft", "the drafter's forward per step"),
	MS(COMP_TREE, "tree", "tree build and accept per step"),
	MS(COMP_OVERHEAD, "overhead", "launch and scheduling per step"),
	MS(COMP_ALLREDUCE, "allreduce", "the all-reduces per step"),
};
static const struct yschema ms_schema = YS_TABLE("ms", ms_fields, 1);

#define ROW(m, ty, fl, u, h) YS_FIELD(struct project_row, m, ty, fl, .unit = (u), .help = (h))
#define ROW_BAND(m, u, h)                                                                 \
	YS_FIELD(struct project_row, m, YS_MAP, Y_REQUIRED, .sub = &project_schema_band,       \
		 .unit = (u), .help = (h))
/* In the order written and read. */
static const struct yschema_field row_fields[] = {
	ROW(scenario, YS_STR, Y_REQUIRED, NULL, "the scenario's name"),
	ROW(target, YS_STR, Y_REQUIRED, NULL, "the catalog GPU projected"),
	YS_FIELD(struct project_row, pipeline, YS_ENUM, Y_REQUIRED, .names = tmpl_pipeline_names,
		 .help = "the serving pipeline"),
	ROW(block, YS_INT, Y_REQUIRED, "tokens", "drafter block size"),
	ROW(budget, YS_INT, Y_REQUIRED, "nodes", "draft tree budget"),
	ROW(concurrency, YS_INT, Y_REQUIRED, "requests", "concurrent requests"),
	ROW(context, YS_INT, Y_REQUIRED | Y_NONNEG, "tokens", "context (0: the anchors')"),
	/* a projection written before context_from existed lacks it */
	ROW(context_from, YS_STR, 0, NULL, "scenario, trace, or empty (the anchors')"),
	ROW(M, YS_NUM, FIG, "tokens", "verify width"),
	ROW(accept, YS_NUM, FIG, "tokens", "mean acceptance length"),
	ROW(accept_lo, YS_NUM, FIG, "tokens", "acceptance range, low end"),
	ROW(accept_hi, YS_NUM, FIG, "tokens", "acceptance range, high end"),
	ROW(accept_from, YS_STR, Y_REQUIRED, NULL, "typed or trace"),
	YS_FIELD(struct project_row, estimator, YS_ENUM, Y_REQUIRED, .names = tmpl_estimator_names,
		 .help = "whose estimate the headline is"),
	ROW(runnable, YS_BOOL, Y_REQUIRED, NULL, "the pipeline can run it"),
	ROW(note, YS_STR, Y_REQUIRED, NULL, "why not runnable, or another caveat"),
	{.key = "ms", .type = YS_MAP, .flags = Y_REQUIRED, .sub = &ms_schema, .unit = "ms",
	 .help = "components at the point values"},
	ROW(moe_ms, YS_NUM, FIG, "ms", "the MoE per step"),
	ROW(nonmoe_ms, YS_NUM, FIG, "ms", "everything else per step"),
	ROW_BAND(step_ms, "ms", "decode step"),
	ROW_BAND(tok_s, "tok/s", "throughput"),
	ROW_BAND(moe_band, "ms", "the MoE alone per step"),
	ROW(lean_pct, YS_NUM, FIG, "%", "median's distance from the point"),
	ROW(lean_by, YS_STR, Y_REQUIRED, NULL, "the assumption that moves tok/s most"),
	ROW(lean_by_pct, YS_NUM, FIG, "%", "its move, of the point tok/s"),
	ROW(point_pctile, YS_NUM, FIG, "%", "where the point falls in the draws"),
	ROW(moe_xfer, YS_BOOL, Y_REQUIRED, NULL, "the MoE was moved between GPUs"),
	ROW(other_tok_s, YS_NUM, FIG, "tok/s", "the other estimator's figure"),
	ROW(other_pctile, YS_NUM, FIG, "%", "where it falls in this band"),
	ROW(extrap_pct, YS_NUM, FIG, "%", "1-sigma extrapolation error beyond the measured M"),
	ROW(xfer_cover_pct, YS_NUM, FIG, "%", "transfer backtest: points inside p5-p95"),
	ROW(xfer_err_pct, YS_NUM, FIG, "%", "transfer backtest: median error of p50"),
	/* a projection written before xfer_gap_pct existed lacks it: NaN */
	ROW(xfer_gap_pct, YS_NUM, Y_NULLABLE, "%", "implementation gap, 90% half-width"),
};
const struct yschema project_schema_row = YS_TABLE("rows[]", row_fields, 0);

#define BAR(m, u, h) YS_FIELD(struct project_bar, m, YS_NUM, FIG, .unit = (u), .help = (h))
static const struct yschema_field bar_fields[] = {
	YS_FIELD(struct project_bar, name, YS_STR, Y_REQUIRED, .help = "the assumption"),
	BAR(value_point, NULL, "its point value"),
	BAR(value_p5, NULL, "its 5th percentile"),
	BAR(value_p95, NULL, "its 95th percentile"),
	BAR(tok_s_p5, "tok/s", "throughput with it at p5"),
	BAR(tok_s_p95, "tok/s", "throughput with it at p95"),
	BAR(swing, "tok/s", "|tok_s_p95 - tok_s_p5|"),
};
const struct yschema project_schema_bar = YS_TABLE("bar", bar_fields, 1);

static const struct yschema_field param_fields[] = {
	YS_FIELD(struct project_param, name, YS_STR, Y_REQUIRED, .help = "efficiency, overlap, fixed_us"),
	YS_FIELD(struct project_param, value, YS_NUM, FIG, .help = "fitted or held value"),
	YS_FIELD(struct project_param, se, YS_NUM, FIG, .help = "standard error (null: held)"),
	YS_FIELD(struct project_param, held, YS_BOOL, Y_REQUIRED, .help = "held, not fitted"),
	YS_FIELD(struct project_param, unit, YS_STR, Y_REQUIRED, .help = "the value's unit"),
};
const struct yschema project_schema_param = YS_TABLE("param", param_fields, 1);

#define FPT(m, u, h) YS_FIELD(struct project_fit_point, m, YS_NUM, FIG, .unit = (u), .help = (h))
static const struct yschema_field fit_point_fields[] = {
	FPT(m, "tokens", "verify width"),
	FPT(step_ms, "ms", "measured MoE per step"),
	FPT(fit_ms, "ms", "the fitted curve there"),
	FPT(resid_pct, "%", "(fit - measured) / measured"),
	FPT(loo_ms, "ms", "predicted with the point left out"),
	FPT(loo_pct, "%", "that prediction's error"),
};
const struct yschema project_schema_fit_point = YS_TABLE("point", fit_point_fields, 1);

#define BT(m, ty, fl, u, h) YS_FIELD(struct project_backtest, m, ty, fl, .unit = (u), .help = (h))
static const struct yschema_field backtest_fields[] = {
	BT(what, YS_STR, Y_REQUIRED, NULL, "the stored point predicted"),
	BT(measured, YS_NUM, FIG, "ms", "its measured value"),
	BT(predicted, YS_NUM, FIG, "ms", "predicted without it"),
	BT(err_pct, YS_NUM, FIG, "%", "(predicted - measured) / measured"),
	BT(band_scenario, YS_STR, Y_REQUIRED, NULL, "the scenario whose band it is shown beside"),
	BT(band_lo_pct, YS_NUM, FIG, "%", "that band's p5 against its p50"),
	BT(band_hi_pct, YS_NUM, FIG, "%", "that band's p95 against its p50"),
	BT(note, YS_STR, Y_REQUIRED, NULL, "a caveat"),
};
const struct yschema project_schema_backtest = YS_TABLE("backtest", backtest_fields, 0);

#define XB(m, fl, h) YS_FIELD(struct project_xback, m, YS_NUM, fl, .unit = "%", .help = (h))
static const struct yschema_field xback_fields[] = {
	YS_KEYED(struct project_xback, "class", cls, YS_STR, Y_REQUIRED, .help = "measured class"),
	YS_FIELD(struct project_xback, from, YS_STR, Y_REQUIRED, .help = "the source GPU"),
	YS_FIELD(struct project_xback, to, YS_STR, Y_REQUIRED, .help = "the held-out target GPU"),
	YS_FIELD(struct project_xback, n, YS_INT, Y_REQUIRED, .help = "measured points compared"),
	XB(cover_pct, FIG, "share inside p5-p95"),
	XB(med_err_pct, FIG, "median |p50 / measured - 1|"),
	XB(max_err_pct, FIG, "largest |p50 / measured - 1|"),
	/* a projection written before these existed lacks them: NaN */
	XB(bias_pct, Y_NULLABLE, "median p50 / measured - 1"),
	XB(width_pct, Y_NULLABLE, "median (p95 - p5) / p50"),
};
const struct yschema project_schema_xback = YS_TABLE("pair", xback_fields, 1);

#define P_STR(m, fl, h) YS_FIELD(struct projection, m, YS_STR, fl, .help = (h))
static const struct yschema_field ident_fields[] = {
	YS_FIELD(struct projection, schema, YS_INT, Y_REQUIRED, .help = "the layout's version"),
	P_STR(run_id, Y_REQUIRED, "the run the projection belongs to"),
	YS_KEYED(struct projection, "template", template_name, YS_STR, Y_REQUIRED,
		 .help = "the job template's name"),
	P_STR(calibration, Y_REQUIRED, "the calibration read"),
};
const struct yschema project_schema_ident = YS_TABLE("projection", ident_fields, 0);

#define P(m, ty, fl, u, h) YS_FIELD(struct projection, m, ty, fl, .unit = (u), .help = (h))
static const struct yschema_field head_fields[] = {
	P(samples, YS_INT, Y_REQUIRED, "draws", "Monte Carlo draws"),
	YS_FIELD(struct projection, seed, YS_U64, Y_REQUIRED,
		 .help = "the draws' random seed"),
	YS_FIELD(struct projection, curve, YS_ENUM, Y_REQUIRED, .names = calib_moe_curve_names,
		 .help = "the MoE curve used"),
	P(recalibrated, YS_BOOL, Y_REQUIRED, NULL, "tonight's measurements replaced laws"),
	P(measured_on, YS_STR, Y_REQUIRED, NULL, "tonight's device"),
	P(lean, YS_STR, Y_REQUIRED, NULL, "the lean, in words"),
	P(ess, YS_NUM, FIG, "draws", "effective sample size of the weighted draws"),
	P(ess_pct, YS_NUM, FIG, "%", "it, of the draws"),
	P(conflict, YS_BOOL, Y_REQUIRED, NULL, "the anchors disagree with the prior"),
	P(weighting, YS_STR, Y_REQUIRED, NULL, "what was weighted by what"),
	P(accept_kind, YS_STR, Y_REQUIRED, NULL, "published or trace"),
	P(accept_source, YS_STR, Y_REQUIRED, NULL, "the acceptance source in words"),
	/* a projection written before the context law existed lacks them */
	P(context_law_label, YS_STR, 0, NULL, "the context law's label"),
	P(context_law, YS_STR, 0, NULL, "the context law in words"),
	YS_VEC_OF(struct projection, "notes", notes, nnotes, NULL, 1000, Y_REQUIRED,
		  .help = "caveats, in order"),
};
const struct yschema project_schema_head = YS_TABLE("projection", head_fields, 0);

/* values: the assumptions at the calibrated point, [{name, value}], each
 * through one of these (the point holds names and values apart). */
struct central_value {
	char name[sizeof(((struct project_central *)0)->name[0])];
	double value;
};

static const struct yschema_field value_fields[] = {
	YS_FIELD(struct central_value, name, YS_STR, Y_REQUIRED, .help = "the assumption's label"),
	YS_FIELD(struct central_value, value, YS_NUM, FIG, .help = "its central value"),
};
static const struct yschema value_schema = YS_TABLE("value", value_fields, 1);

static void values_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	struct project_central *k = obj;
	struct ydoc_node *s = NULL;
	if (yschema_read_seq(c, m, f, &s))
		return;
	for (size_t i = 0; s && i < s->n; i++) {
		struct central_value v = {"", NAN};
		yschema_read_item(c, s->items[i], &value_schema, &v, "value");
		memcpy(k->name[k->n], v.name, sizeof v.name);
		k->v[k->n++] = v.value;
	}
}

static void values_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct project_central *k = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (int i = 0; i < k->n; i++) {
		struct central_value v = {"", k->v[i]};
		memcpy(v.name, k->name[i], sizeof v.name);
		yschema_write_item(y, &value_schema, &v);
	}
	yout_end(y);
}

#define CP(m, u, h) YS_FIELD(struct project_central, m, YS_NUM, FIG, .unit = (u), .help = (h))
static const struct yschema_field central_fields[] = {
	CP(a8_step_ms, "ms", "the b8 anchor's step at the point"),
	CP(b16_step_ms, "ms", "the b16 step the growth is solved for (null: held)"),
	CP(growth, NULL, "the growth at the point"),
	CP(form, NULL, "the model's form knob"),
	CP(moe_scale, NULL, "the model's MoE scale knob"),
	CP(z_x, NULL, "the model's transfer knob"),
	{.key = "values", .type = YS_CUSTOM, .flags = Y_REQUIRED, .max = CALIB_MAX_ASM,
	 .read = values_read, .write = values_write,
	 .help = "the assumptions at the calibrated point"},
};
const struct yschema project_schema_central = YS_TABLE("calibrated_point", central_fields, 0);

static const struct yschema_field tornado_fields[] = {
	YS_FIELD(struct project_tornado, scenario, YS_STR, Y_REQUIRED, .help = "the scenario"),
	YS_FIELD(struct project_tornado, accept, YS_NUM, FIG, .unit = "tokens",
		 .help = "its acceptance"),
	YS_FIELD(struct project_tornado, tok_s_point, YS_NUM, FIG, .unit = "tok/s",
		 .help = "throughput with every assumption at its point"),
	YS_VEC_OF(struct project_tornado, "bars", bars, nbars, &project_schema_bar, CALIB_MAX_ASM,
		  Y_REQUIRED, .help = "the assumptions that move it, by swing"),
};
const struct yschema project_schema_tornado = YS_TABLE("tornado", tornado_fields, 0);

static const struct yschema_field tornado_sec_fields[] = {
	YS_VEC_OF(struct projection, "tornado", tornado, ntornado, &project_schema_tornado, 100000,
		  Y_REQUIRED, .help = "per (scenario, acceptance): each assumption's swing"),
};
static const struct yschema tornado_sec = YS_TABLE("projection", tornado_sec_fields, 0);

/* curve_accept: numbers one a line, null where the curve has none, their
 * number that of the budgets (read before them; grid_check holds them to
 * it): no YS_NUMS, which counts its own. */
static void nums_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f, void *obj)
{
	struct ydoc_node *s = NULL;
	if (yschema_read_seq(c, m, f, &s))
		return;
	for (size_t i = 0; s && i < s->n; i++)
		yget_node_num(c, s->items[i], f->key, Y_NULLABLE, (double *)((char *)obj + f->off) + i);
}

static void nums_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const double *v = (const double *)((const char *)obj + f->off);
	yout_key(y, f->key);
	yout_seq(y);
	for (int i = 0; i < *(const int *)((const char *)obj + f->count); i++)
		yout_num(y, v[i]);
	yout_end(y);
}

#define CELL(k, m, ty, fl, h) YS_KEYED(struct project_cell, k, m, ty, fl, .help = (h))
/* A cell's figures after its place (target, C, B: cells_read). */
static const struct yschema_field cell_fields[] = {
	CELL("M", M, YS_NUM, FIG, "verify width, C (B + 1)"),
	CELL("accept", accept, YS_NUM, FIG, "the acceptance curve at B, scaled, capped"),
	CELL("capped", accept_capped, YS_BOOL, Y_REQUIRED, "the scaled curve passed the block"),
	/* runs before it: absent */
	CELL("lower_bound", accept_lower, YS_BOOL, 0, "trace: a lower bound"),
	CELL("step_point", step_ms.point, YS_NUM, FIG, "decode step, ms: the point"),
	CELL("step_p5", step_ms.p5, YS_NUM, FIG, "its 5th percentile"),
	CELL("step_p50", step_ms.p50, YS_NUM, FIG, "its median"),
	CELL("step_p95", step_ms.p95, YS_NUM, FIG, "its 95th percentile"),
	CELL("tok_point", tok_s.point, YS_NUM, FIG, "throughput, tok/s: the point"),
	CELL("tok_p5", tok_s.p5, YS_NUM, FIG, "its 5th percentile"),
	CELL("tok_p50", tok_s.p50, YS_NUM, FIG, "its median"),
	CELL("tok_p95", tok_s.p95, YS_NUM, FIG, "its 95th percentile"),
	CELL("p_best", p_best, YS_NUM, FIG, "share of draws in which this budget is the best"),
	CELL("regret", regret, YS_NUM, FIG, "expected loss of choosing it, tok/s"),
	CELL("best", best, YS_BOOL, Y_REQUIRED, "the budget of least regret"),
	CELL("runner", runner, YS_BOOL, Y_REQUIRED, "the one of next least regret"),
};
static const struct yschema cell_schema = YS_TABLE("cell", cell_fields, 1);

/* A cell's place, written before its figures: a cell holds none (it is
 * its index), the grid's lists give it. */
struct cell_place {
	char target[sizeof(((struct project_grid *)0)->targets[0])];
	int C, B;
};

static const struct yschema_field place_fields[] = {
	YS_FIELD(struct cell_place, target, YS_STR, Y_REQUIRED, .help = "the catalog GPU"),
	YS_FIELD(struct cell_place, C, YS_INT, Y_REQUIRED, .help = "concurrent requests"),
	YS_FIELD(struct cell_place, B, YS_INT, Y_REQUIRED, .help = "draft tree budget"),
};
static const struct yschema place_schema = YS_TABLE("cell", place_fields, 1);

/* The place of cell (t, ci, b). */
static struct cell_place place_of(const struct project_grid *g, int t, int ci, int b)
{
	struct cell_place at = {"", g->conc[ci], g->budgets[b]};
	memcpy(at.target, g->targets[t], sizeof at.target);
	return at;
}

/* Cell (t, ci, b): its place, which must be the one target-major order
 * puts there (an absent target is said missing, not misplaced), then its
 * figures. */
static void cell_read(struct yctx *c, struct ydoc_node *m, struct project_grid *g, int t, int ci,
		      int b)
{
	struct project_cell *x = PROJECT_CELL(g, t, ci, b);
	struct cell_place at = {"", 0, 0};
	if (yget_expect(c, m, YDOC_MAP, "cell"))
		return;
	memcpy(at.target, g->targets[t], sizeof at.target);
	yschema_read_fields(c, m, &place_schema, &at);
	if (strcmp(at.target, g->targets[t]) || at.C != g->conc[ci] || at.B != g->budgets[b])
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "cells: expected %s C=%d B=%d here (target-major order)", g->targets[t],
			  g->conc[ci], g->budgets[b]);
	yschema_read(c, m, &cell_schema, x);
	if (x->best)
		g->best[t * g->nconc + ci] = b;
	if (x->runner)
		g->runner[t * g->nconc + ci] = b;
}

/* The grid's numbers read whole: an item refused is left 0, which the
 * reader takes for none (its problem said, the cells are not held to the
 * list). */
static int lists_whole(const struct project_grid *g)
{
	for (int i = 0; i < g->nconc; i++)
		if (g->conc[i] <= 0)
			return 0;
	for (int i = 0; i < g->nbudgets; i++)
		if (g->budgets[i] <= 0)
			return 0;
	return 1;
}

/* cells: target-major, then concurrency, then budget; with the best and
 * runner-up budget of each (target, concurrency) they mark. */
static void cells_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		       void *obj)
{
	struct project_grid *g = obj;
	struct ydoc_node *cells = NULL;
	size_t n = (size_t)g->ntargets * g->nconc * g->nbudgets;
	g->cells = calloc(n ? n : 1, sizeof *g->cells);
	g->best = calloc((size_t)(g->ntargets * g->nconc) + 1, sizeof *g->best);
	g->runner = calloc((size_t)(g->ntargets * g->nconc) + 1, sizeof *g->runner);
	if (!g->cells || !g->best || !g->runner) {
		ydiag_add(c->diag, c->file, m->line, m->col, "%s: out of memory", f->key);
		return;
	}
	if (yget_node(c, m, f->key, YDOC_SEQ, Y_REQUIRED, &cells) || !cells || !lists_whole(g))
		return;
	if (cells->n != n) {
		ydiag_add(c->diag, c->file, cells->line, cells->col,
			  "cells: expected %zu (targets x concurrency x budgets), got %zu", n,
			  cells->n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		cell_read(c, cells->items[i], g, (int)(i / (g->nconc * g->nbudgets)),
			  (int)(i / g->nbudgets % g->nconc), (int)(i % g->nbudgets));
}

static void cells_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct project_grid *g = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (int t = 0; t < g->ntargets; t++)
		for (int c = 0; c < g->nconc; c++)
			for (int b = 0; b < g->nbudgets; b++) {
				struct cell_place at = place_of(g, t, c, b);
				yout_map_flow(y);
				yschema_write_fields(y, &place_schema, &at);
				yschema_write_fields(y, &cell_schema, PROJECT_CELL(g, t, c, b));
				yout_end(y);
			}
	yout_end(y);
}

/* One acceptance of the source's curve per budget. */
static int grid_check(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct project_grid *g = obj;
	struct ydoc_node *s = ydoc_get(map, "curve_accept");
	if ((int)s->n == g->nbudgets)
		return 0;
	ydiag_add(c->diag, c->file, s->line, s->col, "curve_accept: one per budget");
	return 1;
}

#define G(m, ty, fl, u, h) YS_FIELD(struct project_grid, m, ty, fl, .unit = (u), .help = (h))
#define G_LIST(ty, k, m, n, fl, h)                                                         \
	ty(struct project_grid, k, m, n, Y_REQUIRED | YS_BLOCK | (fl), .help = (h))
static const struct yschema_field grid_fields[] = {
	G(scenario, YS_STR, Y_REQUIRED, NULL, "where block, pipeline and accept come from"),
	YS_FIELD(struct project_grid, pipeline, YS_ENUM, Y_REQUIRED, .names = tmpl_pipeline_names,
		 .help = "the serving pipeline"),
	G(block, YS_INT, Y_REQUIRED, "tokens", "drafter block size"),
	G(context, YS_INT, Y_REQUIRED | Y_NONNEG, "tokens", "context (0: the anchors')"),
	G(ref_budget, YS_NUM, FIG, "nodes", "the scenario's budget"),
	G(ref_accept, YS_NUM, FIG, "tokens", "the scenario's (middle) acceptance"),
	G(accept_kind, YS_STR, Y_REQUIRED, NULL, "published or trace"),
	G(accept_source, YS_STR, Y_REQUIRED, NULL, "the acceptance source in words"),
	G(nadded, YS_INT, Y_REQUIRED, NULL, "budgets added around the optimum"),
	G_LIST(YS_STRS_OF, "targets", targets, ntargets, 0, "the catalog GPUs"),
	G_LIST(YS_INTS_OF, "concurrency", conc, nconc, Y_POSITIVE, "concurrent requests"),
	G_LIST(YS_INTS_OF, "budgets", budgets, nbudgets, Y_POSITIVE, "draft tree budgets"),
	{.key = "curve_accept", .type = YS_CUSTOM,
	 .off = offsetof(struct project_grid, curve_accept), .max = PROJECT_MAX_GRID_BUDGETS,
	 .count = offsetof(struct project_grid, nbudgets),
	 .flags = Y_REQUIRED, .read = nums_read, .write = nums_write,
	 .help = "the source's curve at each budget (published: unscaled)"},
	{.key = "cells", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = cells_read,
	 .write = cells_write, .help = "target-major, then concurrency, then budget"},
};
const struct yschema project_schema_grid = YS_TABLE_CHECKED("grid", grid_fields, 0, grid_check);

/* A mapping described by f->sub at f->off, there when the int at f->count
 * says so (the grid, the calibrated point: older projections lack them). */
static void opt_map_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			 void *obj)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, m, f->key, YDOC_MAP, 0, &n) || !n)
		return;
	*(int *)((char *)obj + f->count) = 1;
	yschema_read(c, n, f->sub, (char *)obj + f->off);
}

static void opt_map_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	if (!*(const int *)((const char *)obj + f->count))
		return;
	yout_key(y, f->key);
	yschema_write_item(y, f->sub, (const char *)obj + f->off);
}

#define OPT_MAP(k, m, have, sub_, h)                                                      \
	{.key = (k), .type = YS_CUSTOM, .off = offsetof(struct projection, m),                  \
	 .count = offsetof(struct projection, have), .sub = (sub_), .read = opt_map_read,        \
	 .write = opt_map_write, .help = (h)}

static const struct yschema_field grid_sec_fields[] = {
	OPT_MAP("grid", grid, has_grid, &project_schema_grid,
		"the best budget per target and concurrency"),
};
static const struct yschema grid_sec = YS_TABLE("projection", grid_sec_fields, 0);

#define FIT(m, ty, fl, u, h) YS_FIELD(struct project_fit, m, ty, fl, .unit = (u), .help = (h))
static const struct yschema_field fit_fields[] = {
	YS_FIELD(struct project_fit, curve, YS_ENUM, Y_REQUIRED, .names = calib_moe_curve_names,
		 .help = "the curve the projection used"),
	FIT(gpu, YS_STR, Y_REQUIRED, NULL, "where the points were measured"),
	YS_FIELD(struct project_fit, source, YS_ENUM, Y_REQUIRED, .names = calib_provenance_names,
		 .help = "tonight or measured (calibration)"),
	FIT(rms_pct, YS_NUM, FIG, "%", "of the residuals"),
	FIT(plateau_ms, YS_NUM, FIG, "ms", "the physical curve at M -> infinity"),
	FIT(m_plateau, YS_NUM, FIG, "tokens", "M where it reaches 95% of that"),
	FIT(note, YS_STR, Y_REQUIRED, NULL, "which were held and why; conditioning"),
	YS_LIST_OF(struct project_fit, "params", params, nparams, &project_schema_param, Y_REQUIRED,
		   .help = "fitted or held parameters"),
	YS_LIST_OF(struct project_fit, "points", points, npoints, &project_schema_fit_point,
		   Y_REQUIRED, .help = "the points fitted to"),
};
static const struct yschema fit_schema = YS_TABLE("fit", fit_fields, 0);

static const struct yschema_field fit_sec_fields[] = {
	YS_FIELD(struct projection, fit, YS_MAP, Y_REQUIRED, .sub = &fit_schema,
		 .help = "the MoE curve's fit"),
	YS_VEC_OF(struct projection, "backtest", backtest, nbacktest, &project_schema_backtest,
		  1000, Y_REQUIRED, .help = "leave one out, beside the band it supports"),
};
static const struct yschema fit_sec = YS_TABLE("projection", fit_sec_fields, 0);

/* A pooled figure of a backtest; the class and group keys differ between
 * the cross-GPU backtest (class, family) and the implementation one
 * (implementation, pair). */
#define XSUM_FIELDS(k_cls, k_grp)                                                        \
	YS_KEYED(struct project_xsum, k_cls, cls, YS_STR, Y_REQUIRED, .help = "the class"),     \
	YS_KEYED(struct project_xsum, k_grp, fam, YS_STR, Y_REQUIRED, .help = "the group"),     \
	YS_FIELD(struct project_xsum, n, YS_INT, Y_REQUIRED, .help = "measured points"),        \
	XS(cover_pct, FIG, "share inside p5-p95"),                                              \
	XS(med_err_pct, FIG, "median |p50 / measured - 1|"),                                    \
	/* a projection written before these existed lacks them: NaN */                         \
	XS(bias_pct, Y_NULLABLE, "median p50 / measured - 1"),                                  \
	XS(width_pct, Y_NULLABLE, "median (p95 - p5) / p50")
#define XS(m, fl, h) YS_FIELD(struct project_xsum, m, YS_NUM, fl, .unit = "%", .help = (h))
static const struct yschema_field xsum_fields[] = {XSUM_FIELDS("class", "family")};
static const struct yschema xsum_schema = YS_TABLE("pooled", xsum_fields, 1);
static const struct yschema_field isum_fields[] = {XSUM_FIELDS("implementation", "pair")};
static const struct yschema isum_schema = YS_TABLE("pooled", isum_fields, 1);

/* The implementation backtest's pooled list is for people: not read back,
 * written as the list it is. */
static void unread(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f, void *obj)
{
	(void)c;
	(void)obj;
	ydoc_get(m, f->key);
}

static void isum_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	static const struct yschema_field vec[] = {
		YS_VEC_OF(struct projection, "pooled", isum, nisum, &isum_schema, 10000, 0),
	};
	static const struct yschema isum_list = YS_TABLE("implementation", vec, 0);
	(void)f;
	yschema_write_fields(y, &isum_list, obj);
}

static const struct yschema_field impl_fields[] = {
	YS_KEYED(struct projection, "points", iback_n, YS_INT, Y_REQUIRED, .help = "points scored"),
	YS_KEYED(struct projection, "cover_pct", iback_cover_pct, YS_NUM, FIG, .unit = "%",
		 .help = "share inside p5-p95"),
	YS_KEYED(struct projection, "err_pct", iback_err_pct, YS_NUM, FIG, .unit = "%",
		 .help = "median |p50 / measured - 1|"),
	YS_KEYED(struct projection, "width_pct", iback_width_pct, YS_NUM, FIG, .unit = "%",
		 .help = "median (p95 - p5) / p50"),
	YS_KEYED(struct projection, "bias_pct", iback_bias_pct, YS_NUM, FIG, .unit = "%",
		 .help = "median p50 / measured - 1"),
	{.key = "pooled", .type = YS_CUSTOM, .read = unread, .write = isum_write,
	 .help = "per implementation, per pair, over every one"},
};
/* Fields of struct projection itself, under a key of their own (off 0). */
static const struct yschema impl_schema = YS_TABLE("implementation", impl_fields, 0);

static const struct yschema_field xbt_fields[] = {
	YS_KEYED(struct projection, "points", xback_n, YS_INT, Y_REQUIRED, .help = "points scored"),
	YS_KEYED(struct projection, "cover_pct", xback_cover_pct, YS_NUM, FIG, .unit = "%",
		 .help = "share inside p5-p95"),
	YS_KEYED(struct projection, "err_pct", xback_err_pct, YS_NUM, FIG, .unit = "%",
		 .help = "median |p50 / measured - 1|"),
	YS_VEC_OF(struct projection, "pairs", xback, nxback, &project_schema_xback, 100000,
		  Y_REQUIRED, .help = "per ordered GPU pair"),
	YS_VEC_OF(struct projection, "pooled", xsum, nxsum, &xsum_schema, 10000,
		  Y_REQUIRED, .help = "per class and target family, per class, over every class"),
	/* optional: older records have none */
	{.key = "implementation", .type = YS_MAP, .sub = &impl_schema,
	 .help = "the same with whole implementations held out"},
};
static const struct yschema xbt_schema = YS_TABLE("xbacktest", xbt_fields, 0);

static const struct yschema_field xback_sec_fields[] = {
	{.key = "xbacktest", .type = YS_MAP, .flags = Y_REQUIRED, .sub = &xbt_schema,
	 .help = "the cross-GPU backtest"},
};
const struct yschema project_schema_xback_sec = YS_TABLE("projection", xback_sec_fields, 0);

/* was: the value an override replaced, there only for an override. */
static void was_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f, void *obj)
{
	struct project_input *in = obj;
	in->was = NAN;
	yget_num(c, m, f->key, Y_NULLABLE, &in->was);
}

static void was_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct project_input *in = obj;
	if (in->prov == PROV_OVERRIDE)
		yout_kv_num(y, f->key, in->was);
}

static const struct yschema_field input_fields[] = {
	YS_FIELD(struct project_input, name, YS_STR, Y_REQUIRED, .help = "the key --set takes"),
	YS_FIELD(struct project_input, value, YS_NUM, FIG, .help = "the value used"),
	YS_FIELD(struct project_input, prov, YS_ENUM, Y_REQUIRED, .names = calib_provenance_names,
		 .help = "where it came from"),
	{.key = "was", .type = YS_CUSTOM, .read = was_read, .write = was_write,
	 .help = "an override: the value it replaced"},
	YS_FIELD(struct project_input, source, YS_STR, Y_REQUIRED, .help = "the source in words"),
};
static const struct yschema input_schema = YS_TABLE("input", input_fields, 1);

static const struct yschema_field inputs_sec_fields[] = {
	YS_VEC_OF(struct projection, "inputs", inputs, ninputs, &input_schema, 100000,
		  Y_REQUIRED, .help = "every input value and where it came from"),
};
static const struct yschema inputs_sec = YS_TABLE("projection", inputs_sec_fields, 0);

static const struct yschema_field rows_sec_fields[] = {
	YS_VEC_OF(struct projection, "rows", rows, nrows, &project_schema_row, 100000,
		  Y_REQUIRED, .help = "one per (scenario, acceptance)"),
};
static const struct yschema rows_sec = YS_TABLE("projection", rows_sec_fields, 0);

static const struct yschema_field central_sec_fields[] = {
	OPT_MAP("calibrated_point", central, central.have, &project_schema_central,
		"ddt's calibrated point"),
};
static const struct yschema central_sec = YS_TABLE("projection", central_sec_fields, 0);

const struct project_schema_part project_schema_doc[] = {
	{&project_schema_ident, 0},
	{&project_schema_head, PROJECT_TEXT_BANDS},
	{&rows_sec, 0},
	{&tornado_sec, PROJECT_TEXT_TORNADO},
	{&grid_sec, PROJECT_TEXT_GRID},
	{&fit_sec, PROJECT_TEXT_FIT},
	{&project_schema_xback_sec, PROJECT_TEXT_XBACK},
	{&inputs_sec, PROJECT_TEXT_INPUTS},
	{&central_sec, 0},
	{NULL, 0},
};
