/* project_schema.c - the tables of projection.yaml's keys. */
#include "project_schema.h"

#include "project.h"

#include <stddef.h>

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
