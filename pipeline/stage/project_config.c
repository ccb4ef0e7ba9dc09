/* project_config.c - the projection's settings from the template (its
 * `projection` section over the template it extends). */
#include "project.h"

#include "err.h"
#include "project_accept.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A sequence of positive whole numbers, increasing, into out[max]. */
static void load_int_list(struct yctx *c, struct ydoc_node *map, const char *key, unsigned req,
			  int *out, int *n, int max)
{
	struct ydoc_node *seq = NULL;
	if (yget_node(c, map, key, YDOC_SEQ, req, &seq) || !seq)
		return;
	if (seq->n < 1 || (int)seq->n > max) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "%s: give 1 to %d values", key, max);
		return;
	}
	*n = 0;
	for (size_t i = 0; i < seq->n; i++) {
		double v;
		if (yget_node_num(c, seq->items[i], key, Y_POSITIVE | Y_INTEGER, &v))
			continue;
		if (v > 1 << 20) {
			ydiag_add(c->diag, c->file, seq->items[i]->line, seq->items[i]->col,
				  "%s: %g is too large", key, v);
			continue;
		}
		if (*n && v <= out[*n - 1])
			ydiag_add(c->diag, c->file, seq->items[i]->line, seq->items[i]->col,
				  "%s: values must increase", key);
		out[(*n)++] = (int)v;
	}
}

static void load_scenario_name(struct yctx *c, struct ydoc_node *map, const char *key,
			       unsigned req, const struct tmpl *t, char *out, size_t len);

/* The grid map g; req: Y_REQUIRED (every key) or 0 (those given). */
static void load_grid(struct project_config *cfg, struct yctx *c, struct ydoc_node *g,
		      unsigned req, const struct tmpl *t)
{
	struct ydoc_node *seq = NULL;
	load_scenario_name(c, g, "scenario", req, t, cfg->grid_scenario, sizeof cfg->grid_scenario);
	if (!yget_node(c, g, "targets", YDOC_SEQ, req, &seq) && seq) {
		if (seq->n < 1 || seq->n > PROJECT_MAX_GRID_TARGETS)
			ydiag_add(c->diag, c->file, seq->line, seq->col, "targets: give 1 to %d GPUs",
				  PROJECT_MAX_GRID_TARGETS);
		cfg->ntargets = 0;
		for (size_t i = 0; i < seq->n && i < PROJECT_MAX_GRID_TARGETS; i++) {
			if (yget_expect(c, seq->items[i], YDOC_SCALAR, "targets"))
				continue;
			snprintf(cfg->targets[cfg->ntargets++], sizeof cfg->targets[0], "%s",
				 seq->items[i]->str);
		}
	}
	load_int_list(c, g, "concurrency", req, cfg->conc, &cfg->nconc, PROJECT_MAX_GRID_CONC);
	load_int_list(c, g, "budgets", req, cfg->budgets, &cfg->nbudgets, PROJECT_MAX_CONF_BUDGETS);
	yget_check_unknown(c, g);
}

/* The published curve's points into cfg. */
static void load_points(struct project_config *cfg, struct yctx *c, struct ydoc_node *pts)
{
	if (pts->n < 2 || pts->n > PROJECT_MAX_CURVE)
		ydiag_add(c->diag, c->file, pts->line, pts->col, "points: give 2 to %d points",
			  PROJECT_MAX_CURVE);
	cfg->ncurve = 0;
	for (size_t i = 0; i < pts->n && i < PROJECT_MAX_CURVE; i++) {
		struct ydoc_node *p = pts->items[i];
		double b = NAN, a = NAN;
		if (yget_expect(c, p, YDOC_MAP, "point"))
			continue;
		yget_num(c, p, "budget", Y_REQUIRED | Y_POSITIVE | Y_INTEGER, &b);
		yget_num(c, p, "accept", Y_REQUIRED | Y_POSITIVE, &a);
		yget_check_unknown(c, p);
		if (cfg->ncurve && !(b > cfg->curve_budget[cfg->ncurve - 1]))
			ydiag_add(c->diag, c->file, p->line, p->col, "points: budgets must increase");
		cfg->curve_budget[cfg->ncurve] = b;
		cfg->curve_accept[cfg->ncurve++] = a;
	}
}

/* The acceptance source m: `trace: PATH` (a drafter trace, replayed), or a
 * published curve (label, source, points and the shape's prior: another
 * model and task). The whole map replaces the one it overrides. */
static void load_curve(struct project_config *cfg, struct yctx *c, struct ydoc_node *m)
{
	struct ydoc_node *pts = NULL, *shape = NULL;
	const char *trace = NULL;
	cfg->accept_kind = ACCEPT_PUBLISHED;
	cfg->accept_trace[0] = cfg->accept_from[0] = '\0';
	cfg->ncurve = 0;
	if (!yget_str(c, m, "trace", 0, &trace) && trace) {
		struct ydoc_node *n = ydoc_get(m, "trace");
		cfg->accept_kind = ACCEPT_TRACE;
		if (strlen(trace) >= sizeof cfg->accept_trace || !*trace)
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "trace: give a path of 1 to %zu bytes", sizeof cfg->accept_trace - 1);
		else
			snprintf(cfg->accept_trace, sizeof cfg->accept_trace, "%s", trace);
		project_accept_load_from(cfg, c, m); /* from: a log's kind */
		static const char *const other[] = {"points", "label", "source", "shape"};
		for (size_t i = 0; i < sizeof other / sizeof *other; i++)
			if ((n = ydoc_get(m, other[i])) != NULL)
				ydiag_add(c->diag, c->file, n->line, n->col,
					  "%s: a trace is its own curve and source (drop '%s', or "
					  "the trace for a published curve)", other[i], other[i]);
		yget_check_unknown(c, m);
		return;
	}
	yget_strcpy(c, m, "source", Y_REQUIRED, cfg->curve_source, sizeof cfg->curve_source);
	yget_strcpy(c, m, "label", Y_REQUIRED, cfg->curve_label, sizeof cfg->curve_label);
	if (!yget_node(c, m, "points", YDOC_SEQ, Y_REQUIRED, &pts) && pts)
		load_points(cfg, c, pts);
	if (!yget_node(c, m, "shape", YDOC_MAP, Y_REQUIRED, &shape) && shape)
		calib_dist_load(&cfg->accept_shape, c, shape, "shape");
	yget_check_unknown(c, m);
}

/* The scenario named by key in map, which must exist in t, into out[len]. */
static void load_scenario_name(struct yctx *c, struct ydoc_node *map, const char *key,
			       unsigned req, const struct tmpl *t, char *out, size_t len)
{
	const char *sc = NULL;
	if (yget_str(c, map, key, req, &sc) || !sc)
		return;
	snprintf(out, len, "%s", sc);
	if (!tmpl_scenario(t, sc)) {
		struct ydoc_node *n = ydoc_get(map, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: no scenario '%s'", key, sc);
	}
}

/* One `projection:` map sec into cfg; req: Y_REQUIRED (every key: the
 * section that holds the values) or 0 (a template's own section over the
 * one it extends: the keys it gives). */
static void load_settings(struct project_config *cfg, struct yctx *c, struct ydoc_node *sec,
			  unsigned req, const struct tmpl *t)
{
	struct ydoc_node *n = NULL;
	const char *curve = NULL;
	double v = NAN;
	if (!yget_num(c, sec, "samples", req | Y_POSITIVE | Y_INTEGER, &v) && !isnan(v)) {
		if (v < 100 || v > 10000000)
			ydiag_add(c->diag, c->file, ydoc_get(sec, "samples")->line,
				  ydoc_get(sec, "samples")->col, "samples: expected 100 to 10000000");
		else
			cfg->samples = (int)v;
	}
	v = NAN;
	if (!yget_num(c, sec, "seed", req | Y_NONNEG | Y_INTEGER, &v) && !isnan(v)) {
		if (v > 9007199254740992.0)
			ydiag_add(c->diag, c->file, ydoc_get(sec, "seed")->line,
				  ydoc_get(sec, "seed")->col, "seed: at most 2^53");
		else
			cfg->seed = (uint64_t)v;
	}
	yget_bool(c, sec, "sensitivity", req, &cfg->sensitivity);
	load_scenario_name(c, sec, "ad_hoc", req, t, cfg->ad_hoc, sizeof cfg->ad_hoc);
	if (!yget_str(c, sec, "moe_curve", 0, &curve) && curve) {
		enum moe_curve_kind k;
		if (calib_moe_curve_parse(curve, &k)) {
			n = ydoc_get(sec, "moe_curve");
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "moe_curve: expected linear or physical, got '%s'", curve);
		} else
			cfg->moe_curve = (int)k;
	}
	if (!yget_node(c, sec, "grid", YDOC_MAP, req, &n) && n)
		load_grid(cfg, c, n, req, t);
	n = NULL;
	if (!yget_node(c, sec, "acceptance_curve", YDOC_MAP, req, &n) && n)
		load_curve(cfg, c, n);
	yget_check_unknown(c, sec);
}

int project_config_load(struct project_config *cfg, const struct tmpl *t, struct ydiag *diag)
{
	struct ydoc_node *own = t->doc ? ydoc_get(t->doc->root, "projection") : NULL;
	struct ydoc_node *base = t->parent ? ydoc_get(t->parent->root, "projection") : NULL;
	size_t before = diag->n;

	memset(cfg, 0, sizeof *cfg);
	cfg->moe_curve = -1;
	cfg->grid = 1;
	if (!own && !base) {
		ydiag_add(diag, t->path, 0, 0,
			  "missing required section 'projection' (extend default.yaml, which has it)");
		return DDT_EINPUT;
	}
	if (base) {
		struct yctx c = {t->parent->file, diag, NULL};
		if (yget_expect(&c, base, YDOC_MAP, "projection"))
			return DDT_EINPUT;
		load_settings(cfg, &c, base, Y_REQUIRED, t);
	}
	if (own) {
		struct yctx c = {t->doc->file, diag, NULL};
		if (yget_expect(&c, own, YDOC_MAP, "projection"))
			return DDT_EINPUT;
		load_settings(cfg, &c, own, base ? 0 : Y_REQUIRED, t);
	}
	return diag->n > before ? DDT_EINPUT : 0;
}
