/* project_schema.c - the tables of projection.yaml's keys. */
#include "project_schema.h"

#include "project.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

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

/* ms: the components at the point values, one key per model component. */
static void ms_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		    void *obj)
{
	struct project_row *r = obj;
	struct ydoc_node *ms = NULL;
	if (yget_node(c, m, f->key, YDOC_MAP, Y_REQUIRED, &ms) || !ms)
		return;
	for (int k = 0; k < COMP_COUNT; k++)
		yget_num(c, ms, model_comp_name((enum model_comp)k), FIG, &r->ms[k]);
	yget_check_unknown(c, ms);
}

static void ms_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct project_row *r = obj;
	yout_key(y, f->key);
	yout_map_flow(y);
	for (int k = 0; k < COMP_COUNT; k++)
		yout_kv_num(y, model_comp_name((enum model_comp)k), r->ms[k]);
	yout_end(y);
}

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
	{.key = "ms", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = ms_read, .write = ms_write,
	 .unit = "ms", .help = "components at the point values"},
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
	P_STR(run_id, Y_REQUIRED, "the run the projection belongs to"),
	YS_KEYED(struct projection, "template", template_name, YS_STR, Y_REQUIRED,
		 .help = "the job template's name"),
	P_STR(calibration, Y_REQUIRED, "the calibration read"),
};
const struct yschema project_schema_ident = YS_TABLE("projection", ident_fields, 0);

/* seed: a whole number, written as one (uint64_t). */
static void seed_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
		      void *obj)
{
	double seed = NAN;
	if (!yget_num(c, m, f->key, Y_REQUIRED | Y_NONNEG | Y_INTEGER, &seed) && !isnan(seed))
		((struct projection *)obj)->seed = (uint64_t)seed;
}

static void seed_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	yout_kv_int(y, f->key, (long long)((const struct projection *)obj)->seed);
}

#define P(m, ty, fl, u, h) YS_FIELD(struct projection, m, ty, fl, .unit = (u), .help = (h))
static const struct yschema_field head_fields[] = {
	P(samples, YS_INT, Y_REQUIRED, "draws", "Monte Carlo draws"),
	{.key = "seed", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = seed_read,
	 .write = seed_write, .help = "the draws' random seed"},
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
};
const struct yschema project_schema_head = YS_TABLE("projection", head_fields, 0);

/* values: the assumptions at the calibrated point, [{name, value}]. */
static void values_read(struct yctx *c, struct ydoc_node *m, const struct yschema_field *f,
			void *obj)
{
	struct project_central *k = obj;
	struct ydoc_node *s = NULL;
	if (yget_node(c, m, f->key, YDOC_SEQ, Y_REQUIRED, &s) || !s)
		return;
	for (size_t i = 0; i < s->n && k->n < CALIB_MAX_ASM; i++) {
		struct ydoc_node *e = s->items[i];
		if (yget_expect(c, e, YDOC_MAP, "value"))
			continue;
		yget_strcpy(c, e, "name", Y_REQUIRED, k->name[k->n], sizeof k->name[k->n]);
		yget_num(c, e, "value", FIG, &k->v[k->n]);
		yget_check_unknown(c, e);
		k->n++;
	}
}

static void values_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct project_central *k = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (int i = 0; i < k->n; i++) {
		yout_map_flow(y);
		yout_kv_str(y, "name", k->name[i]);
		yout_kv_num(y, "value", k->v[i]);
		yout_end(y);
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
	{.key = "values", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = values_read,
	 .write = values_write, .help = "the assumptions at the calibrated point"},
};
const struct yschema project_schema_central = YS_TABLE("calibrated_point", central_fields, 0);

static const struct yschema_field tornado_fields[] = {
	YS_FIELD(struct project_tornado, scenario, YS_STR, Y_REQUIRED, .help = "the scenario"),
	YS_FIELD(struct project_tornado, accept, YS_NUM, FIG, .unit = "tokens",
		 .help = "its acceptance"),
	YS_FIELD(struct project_tornado, tok_s_point, YS_NUM, FIG, .unit = "tok/s",
		 .help = "throughput with every assumption at its point"),
};
const struct yschema project_schema_tornado = YS_TABLE("tornado", tornado_fields, 0);

#define G(m, ty, fl, u, h) YS_FIELD(struct project_grid, m, ty, fl, .unit = (u), .help = (h))
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
};
const struct yschema project_schema_grid = YS_TABLE("grid", grid_fields, 0);
