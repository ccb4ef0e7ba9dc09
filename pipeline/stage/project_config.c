/* project_config.c - the projection's settings from the template (its
 * `projection` section over the template it extends), by the tables of
 * its keys (yschema.h). */
#include "project.h"

#include "err.h"
#include "project_accept.h"
#include "project_schema.h"

#include <string.h>

typedef struct project_config T;

/* A scenario's name, which the template (c->ctx) must have, into the
 * entry's char array. */
static void read_scenario(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			  void *obj)
{
	char *out = (char *)obj + f->off;
	struct ydoc_node *n;
	if (yget_strcpy(c, map, f->key, f->flags, out, f->size) || !(n = ydoc_get(map, f->key)))
		return;
	if (!tmpl_scenario(c->ctx, out))
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: no scenario '%s'", f->key, out);
}

/* ---------------------------------------------------------------- the grid */

/* List key of map, when given, v[n]: 1 to max values, increasing. */
static int check_list(struct yctx *c, struct ydoc_node *map, const char *key, const int *v,
		      int n, int max)
{
	struct ydoc_node *seq = ydoc_get(map, key);
	int bad = 0;
	if (!seq)
		return 0;
	if (n < 1) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "%s: give 1 to %d values", key, max);
		return 1;
	}
	for (int i = 1; i < n; i++)
		if (v[i] <= v[i - 1]) {
			ydiag_add(c->diag, c->file, seq->items[i]->line, seq->items[i]->col,
				  "%s: values must increase", key);
			bad = 1;
		}
	return bad;
}

/* The grid's lists that map gives: none empty, the numbers increasing. */
static int check_grid(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const T *cfg = obj;
	struct ydoc_node *targets = ydoc_get(map, "targets");
	int bad = 0;
	if (targets && cfg->ntargets < 1) {
		ydiag_add(c->diag, c->file, targets->line, targets->col, "targets: give 1 to %d GPUs",
			  PROJECT_MAX_GRID_TARGETS);
		bad = 1;
	}
	bad |= check_list(c, map, "concurrency", cfg->conc, cfg->nconc, PROJECT_MAX_GRID_CONC);
	bad |= check_list(c, map, "budgets", cfg->budgets, cfg->nbudgets, PROJECT_MAX_CONF_BUDGETS);
	return bad;
}

static const struct yschema_range grid_range = {1, 1 << 20, 0, 0, "within [1, 1048576]"};

/* The grid's keys are the settings' own members: its table is over
 * struct project_config. */
static const struct yschema_field grid_fields[] = {
	YS_KEYED(T, "scenario", grid_scenario, YS_CUSTOM, Y_REQUIRED, .read = read_scenario,
		 .help = "the scenario the grid's block, pipeline and acceptance come from"),
	YS_STRS_OF(T, "targets", targets, ntargets, Y_REQUIRED, .help = "GPU catalog ids"),
	YS_INTS_OF(T, "concurrency", conc, nconc, Y_REQUIRED | Y_POSITIVE, .range = &grid_range,
		   .help = "sequences decoded at once, increasing"),
	/* fewer than the array holds: the grid adds budgets around each optimum */
	{.key = "budgets", .type = YS_INTS, .off = offsetof(T, budgets),
	 .size = sizeof(((T *)0)->budgets), .count = offsetof(T, nbudgets),
	 .max = PROJECT_MAX_CONF_BUDGETS, .flags = Y_REQUIRED | Y_POSITIVE, .range = &grid_range,
	 .help = "tree node budgets, increasing"},
};
static const struct yschema grid_schema = YS_TABLE_CHECKED("grid", grid_fields, 0, check_grid);

/* ------------------------------------------------------ the acceptance source */

/* from: beside trace, the kind of log it names (project_accept.h). */
static void read_from(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj)
{
	(void)f;
	project_accept_load_from(obj, c, map);
}

/* A published curve's key beside a trace: refused. */
static void read_beside_trace(struct yctx *c, struct ydoc_node *map,
			      const struct yschema_field *f, void *obj)
{
	struct ydoc_node *n = ydoc_get(map, f->key);
	(void)obj;
	if (n)
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "%s: a trace is its own curve and source (drop '%s', or the trace for a "
			  "published curve)", f->key, f->key);
}

static int check_trace(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const T *cfg = obj;
	struct ydoc_node *n = ydoc_get(map, "trace");
	if (cfg->accept_trace[0])
		return 0;
	ydiag_add(c->diag, c->file, n->line, n->col, "trace: give a path of 1 to %zu bytes",
		  sizeof cfg->accept_trace - 1);
	return 1;
}

#define BESIDE_TRACE(k) {.key = (k), .type = YS_CUSTOM, .read = read_beside_trace}
static const struct yschema_field trace_fields[] = {
	YS_KEYED(T, "trace", accept_trace, YS_STR, Y_REQUIRED,
		 .help = "a drafter trace (ddt acceptance's format) or a log, replayed"),
	YS_KEYED(T, "from", accept_from, YS_CUSTOM, 0, .read = read_from,
		 .help = "the kind of log trace names; none: a drafter trace"),
	BESIDE_TRACE("points"),
	BESIDE_TRACE("label"),
	BESIDE_TRACE("source"),
	BESIDE_TRACE("shape"),
};
static const struct yschema trace_schema =
	YS_TABLE_CHECKED("acceptance_curve", trace_fields, 0, check_trace);

/* shape: the prior on the published curve's gain, a distribution. */
static void read_shape(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		       void *obj)
{
	struct ydoc_node *m = NULL;
	if (!yget_node(c, map, f->key, YDOC_MAP, f->flags, &m) && m)
		calib_dist_load((struct dist *)((char *)obj + f->off), c, m, f->key);
}

/* points: 2 or more, their budgets increasing. */
static int check_points(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const T *cfg = obj;
	struct ydoc_node *pts = ydoc_get(map, "points");
	int bad = 0;
	if (cfg->ncurve < 2) {
		ydiag_add(c->diag, c->file, pts->line, pts->col, "points: give 2 to %d points",
			  PROJECT_MAX_CURVE);
		return 1;
	}
	for (int i = 1; i < cfg->ncurve; i++)
		if (!(cfg->curve[i].budget > cfg->curve[i - 1].budget)) {
			ydiag_add(c->diag, c->file, pts->items[i]->line, pts->items[i]->col,
				  "points: budgets must increase");
			bad = 1;
		}
	return bad;
}

static const struct yschema_field point_fields[] = {
	YS_FIELD(struct project_curve_point, budget, YS_NUM, Y_REQUIRED | Y_POSITIVE | Y_INTEGER,
		 .help = "tree node budget"),
	YS_FIELD(struct project_curve_point, accept, YS_NUM, Y_REQUIRED | Y_POSITIVE,
		 .help = "mean acceptance length at that budget"),
};
static const struct yschema point_schema = YS_TABLE("point", point_fields, 1);

static const struct yschema_field published_fields[] = {
	YS_KEYED(T, "source", curve_source, YS_STR, Y_REQUIRED, .help = "where the curve is from"),
	YS_KEYED(T, "label", curve_label, YS_STR, Y_REQUIRED,
		 .help = "whose curve it is: another model and task"),
	YS_LIST_OF(T, "points", curve, ncurve, &point_schema, Y_REQUIRED,
		   .help = "acceptance vs budget, budgets increasing"),
	YS_KEYED(T, "shape", accept_shape, YS_CUSTOM, Y_REQUIRED, .read = read_shape,
		 .help = "exponent on the curve's ratio to its value at the grid scenario's budget"),
};
static const struct yschema published_schema =
	YS_TABLE_CHECKED("acceptance_curve", published_fields, 0, check_points);

/* acceptance_curve: `trace: PATH` (a drafter trace or a log, replayed), or
 * a published curve (label, source, points and the shape's prior: another
 * model and task). The whole map replaces the one it overrides. */
static void read_curve(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		       void *obj)
{
	T *cfg = obj;
	struct ydoc_node *m = NULL;
	if (yget_node(c, map, f->key, YDOC_MAP, f->flags, &m) || !m)
		return;
	cfg->accept_trace[0] = cfg->accept_from[0] = '\0';
	cfg->ncurve = 0;
	cfg->accept_kind = ydoc_get(m, "trace") ? ACCEPT_TRACE : ACCEPT_PUBLISHED;
	yschema_read(c, m, cfg->accept_kind == ACCEPT_TRACE ? &trace_schema : &published_schema,
		     cfg);
}

/* ------------------------------------------------------------- the section */

/* The draws' arrays grow with their number: about 2 KB a draw with the
 * shipped template's grid and tornado, 2.1 GB at a million, where ten
 * million would want 21 GB. `ddt estimate --samples` takes the same. */
static const struct yschema_range samples_range = {100, 1000000, 0, 0, "within [100, 1000000]"};

static const struct yschema_field project_config_fields[] = {
	YS_FIELD(T, samples, YS_INT, Y_REQUIRED, .range = &samples_range,
		 .help = "Monte Carlo draws for the bands"),
	YS_FIELD(T, seed, YS_U64, Y_REQUIRED,
		 .help = "the draws' seed; same inputs and seed, same output"),
	YS_FIELD(T, sensitivity, YS_BOOL, Y_REQUIRED, .help = "compute the tornado"),
	YS_FIELD(T, ad_hoc, YS_CUSTOM, Y_REQUIRED, .read = read_scenario,
		 .help = "the scenario ddt estimate's ad hoc options change"),
	YS_FIELD(T, moe_curve, YS_ENUM, 0, .names = calib_moe_curve_names,
		 .help = "the MoE curve (absent: the calibration's)"),
	{.key = "grid", .type = YS_MAP, .off = 0, .size = sizeof(T), .flags = Y_REQUIRED,
	 .sub = &grid_schema, .help = "the budget grid: targets x concurrency x budget"},
	YS_KEYED(T, "acceptance_curve", accept_kind, YS_CUSTOM, Y_REQUIRED, .read = read_curve,
		 .help = "the acceptance source: a trace replayed, or a published curve"),
};
const struct yschema project_config_schema =
	YS_TABLE("projection", project_config_fields, 0);

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
		struct yctx c = {t->parent->file, diag, (void *)t};
		if (yget_expect(&c, base, YDOC_MAP, "projection"))
			return DDT_EINPUT;
		yschema_read(&c, base, &project_config_schema, cfg);
	}
	if (own) {
		struct yctx c = {t->doc->file, diag, (void *)t};
		if (yget_expect(&c, own, YDOC_MAP, "projection"))
			return DDT_EINPUT;
		/* over the base: the keys it gives, grid keys one by one */
		if (base)
			yschema_read_given(&c, own, &project_config_schema, cfg);
		else
			yschema_read(&c, own, &project_config_schema, cfg);
	}
	return diag->n > before ? DDT_EINPUT : 0;
}
