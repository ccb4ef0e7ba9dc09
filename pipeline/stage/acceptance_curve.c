/* acceptance_curve.c - a replay's curve as YAML (`ddt acceptance --format yaml`)
 * and read back, both by one table of its keys (acceptance.h). */
#include "acceptance.h"

#include "err.h"
#include "trace.h"
#include "ydoc.h"
#include "yschema.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The lists that hold one item per budget, each with its own count (a
 * list of the wrong length is named by the rule across keys). */
enum { C_BUDGETS, C_MEAN, C_LO, C_HI, C_SE, C_DEFF, C_DRAFTER, C_CAPPED, C_KLIM, C_LOWER, C_N };

struct curve_boot {
	int resamples;
	double level;
	long long seed; /* the options' uint64_t, as the file writes it */
};

struct curve_engine {
	long long steps, agree, skipped;
	double mean_recorded, mean_replayed; /* NaN (null) when no step was compared */
	long long first_mismatch_line;
};

struct curve_context {
	long long steps;
	double mean, sd, min, p5, p25, p50, p75, p95, max; /* NaN (null) when none records it */
};

/* The result as the file holds it: per budget a list a figure. cov and hist
 * point at the result's (written) or at what the reader allocated. */
struct curve_doc {
	int schema;
	char trace[4096], source[512];
	long long steps, requests, request_steps;
	int block, trace_block, top_k_min, top_k_max;
	struct curve_boot bootstrap;
	int n[C_N];
	int budgets[ACCEPTANCE_MAX_BUDGETS], lower_bound[ACCEPTANCE_MAX_BUDGETS];
	double mean[ACCEPTANCE_MAX_BUDGETS], ci_lo[ACCEPTANCE_MAX_BUDGETS],
		ci_hi[ACCEPTANCE_MAX_BUDGETS], se[ACCEPTANCE_MAX_BUDGETS],
		deff[ACCEPTANCE_MAX_BUDGETS], drafter[ACCEPTANCE_MAX_BUDGETS],
		capped[ACCEPTANCE_MAX_BUDGETS], k_limited[ACCEPTANCE_MAX_BUDGETS];
	double *cov;                               /* [nb][nb] */
	long long *hist[ACCEPTANCE_MAX_BUDGETS];   /* [block + 1], 0 unused */
	struct curve_engine engine;
	struct curve_context context_tokens;
	int nomem; /* the reader ran out of memory */
};

struct curve_top {
	struct curve_doc doc;
};

/* A long long member m of T: a count, a seed, a line number. */
#define WHOLE(T, m, fl, h)                                                                \
	{.key = #m, .type = YS_LONG, .off = offsetof(T, m),                                \
	 .size = sizeof(_Generic(((T *)0)->m, long long: ((T *)0)->m)), .flags = (fl),      \
	 .help = (h)}

/* A list of one item per budget, its number in n[cnt]. */
#define PER_BUDGET_(k, m, cnt, ty, fl, ...)                                               \
	{.key = (k), .type = (ty), .off = offsetof(struct curve_doc, m),                   \
	 .size = sizeof(((struct curve_doc *)0)->m[0]),                                    \
	 .count = offsetof(struct curve_doc, n[cnt]), .max = ACCEPTANCE_MAX_BUDGETS,        \
	 .flags = Y_REQUIRED | (fl), __VA_ARGS__}

/* ---- entries no type of yschema.h describes ---- */

/* A table of rows, one per budget (the covariance of the means, the
 * histogram): nb rows of cols items, else a problem at the first wrong. */
static int rows_ok(struct yctx *c, struct ydoc_node *seq, const char *key, int nb, int cols)
{
	if (seq->n != (size_t)nb) {
		ydiag_add(c->diag, c->file, seq->line, seq->col,
			  "%s: %d rows (one per budget), got %zu", key, nb, seq->n);
		return 0;
	}
	for (size_t j = 0; j < seq->n; j++) {
		struct ydoc_node *row = seq->items[j];
		if (yget_expect(c, row, YDOC_SEQ, key))
			return 0;
		if (row->n != (size_t)cols) {
			ydiag_add(c->diag, c->file, row->line, row->col,
				  "%s: %d items a row, got %zu", key, cols, row->n);
			return 0;
		}
	}
	return 1;
}

static void cov_read(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct curve_doc *d = obj;
	struct ydoc_node *seq = NULL;
	int nb = d->n[C_BUDGETS];
	if (yget_node(c, map, f->key, YDOC_SEQ, f->flags, &seq) || !seq ||
	    !rows_ok(c, seq, f->key, nb, nb))
		return;
	if (!(d->cov = calloc((size_t)nb * (size_t)nb + 1, sizeof *d->cov))) {
		d->nomem = 1;
		return;
	}
	for (int a = 0; a < nb; a++)
		for (int b = 0; b < nb; b++)
			yget_node_num(c, seq->items[a]->items[b], f->key, 0, &d->cov[a * nb + b]);
}

/* The covariance of the means across budgets, row by row. */
static void cov_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct curve_doc *d = obj;
	int nb = d->n[C_BUDGETS];
	yout_key(y, f->key);
	yout_seq(y);
	for (int a = 0; a < nb; a++) {
		yout_seq_flow(y);
		for (int b = 0; b < nb; b++)
			yout_num(y, d->cov[a * nb + b]);
		yout_end(y);
	}
	yout_end(y);
}

/* The histogram: per budget the steps accepting 1 .. block. A block the
 * replay cannot have is the block's problem (the rule across keys), its
 * rows left unread. */
static void hist_read(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj)
{
	struct curve_doc *d = obj;
	struct ydoc_node *seq = NULL;
	int nb = d->n[C_BUDGETS], block = d->block;
	if (block < 1 || block > TRACE_MAX_L + 1) {
		ydoc_get(map, f->key); /* not an unknown key */
		return;
	}
	if (yget_node(c, map, f->key, YDOC_SEQ, f->flags, &seq) || !seq ||
	    !rows_ok(c, seq, f->key, nb, block))
		return;
	for (int j = 0; j < nb; j++) {
		if (!(d->hist[j] = calloc((size_t)block + 1, sizeof *d->hist[j]))) {
			d->nomem = 1;
			return;
		}
		for (int a = 1; a <= block; a++)
			yget_node_long(c, seq->items[j]->items[a - 1], f->key, Y_NONNEG,
				       &d->hist[j][a]);
	}
}

static void hist_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct curve_doc *d = obj;
	yout_key(y, f->key);
	yout_seq(y);
	for (int j = 0; j < d->n[C_BUDGETS]; j++) {
		yout_seq_flow(y);
		for (int a = 1; a <= d->block; a++)
			yout_int(y, d->hist[j][a]);
		yout_end(y);
	}
	yout_end(y);
}

/* ---- the rules across keys ---- */

/* A problem at key's node (its item i when i >= 0 and it has one). */
static int problem(struct yctx *c, struct ydoc_node *map, const char *key, int i,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int problem(struct yctx *c, struct ydoc_node *map, const char *key, int i,
		   const char *fmt, ...)
{
	struct ydoc_node *n = ydoc_get(map, key);
	char msg[512];
	va_list ap;
	if (!n)
		n = map;
	else if (i >= 0 && n->kind == YDOC_SEQ && (size_t)i < n->n)
		n = n->items[i];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ydiag_add(c->diag, c->file, n->line, n->col, "%s", msg);
	return 1;
}

/* What the replay says of itself. */
static int layout_check(struct yctx *c, struct ydoc_node *map, const struct curve_doc *d)
{
	int bad = 0;
	if (d->schema != 1)
		bad |= problem(c, map, "schema", -1, "schema: expected 1, got %d", d->schema);
	if (d->block > TRACE_MAX_L + 1)
		bad |= problem(c, map, "block", -1, "block: at most %d (the engine's deepest "
			       "tree), got %d", TRACE_MAX_L + 1, d->block);
	if (d->block > d->trace_block)
		bad |= problem(c, map, "block", -1, "block: %d is more than the trace's (%d)",
			       d->block, d->trace_block);
	if (d->top_k_min > d->top_k_max)
		bad |= problem(c, map, "top_k_min", -1, "top_k_min: %d is more than top_k_max "
			       "(%d)", d->top_k_min, d->top_k_max);
	if (d->requests > d->steps || d->request_steps > d->steps)
		bad |= problem(c, map, d->requests > d->steps ? "requests" : "request_steps", -1,
			       "%s: more than the steps (%lld)", d->requests > d->steps ?
			       "requests" : "request_steps", d->steps);
	return bad;
}

/* Every per-budget list one item per budget. */
static int lengths_check(struct yctx *c, struct ydoc_node *map, const struct curve_doc *d)
{
	static const char *const keys[C_N] = {"budgets", "mean", "ci_lo", "ci_hi", "se",
					      "design_effect", "drafter", "capped", "k_limited",
					      "lower_bound"};
	int bad = 0, nb = d->n[C_BUDGETS];
	if (nb < 1)
		return problem(c, map, "budgets", -1, "budgets: give at least one budget");
	for (int k = 1; k < C_N; k++)
		if (d->n[k] != nb)
			bad |= problem(c, map, keys[k], -1, "%s: %d items (one per budget), got %d",
				       keys[k], nb, d->n[k]);
	return bad;
}

/* Per budget: budgets increase, the mean inside its interval and within
 * what the block accepts, lower_bound where the trace's top-K fell short,
 * and the histogram's row every step. */
static int budgets_check(struct yctx *c, struct ydoc_node *map, const struct curve_doc *d)
{
	int bad = 0;
	for (int j = 0; j < d->n[C_BUDGETS]; j++) {
		long long sum = 0;
		if (j && d->budgets[j] <= d->budgets[j - 1])
			bad |= problem(c, map, "budgets", j, "budgets: must increase, got %d after %d",
				       d->budgets[j], d->budgets[j - 1]);
		if (!(d->ci_lo[j] <= d->mean[j] && d->mean[j] <= d->ci_hi[j]))
			bad |= problem(c, map, "mean", j, "mean: %.9g at budget %d is outside its "
				       "interval [%.9g, %.9g] (ci_lo, ci_hi)", d->mean[j], d->budgets[j],
				       d->ci_lo[j], d->ci_hi[j]);
		if (d->mean[j] > d->block)
			bad |= problem(c, map, "mean", j, "mean: %.9g at budget %d is more than the "
				       "block (%d) accepts", d->mean[j], d->budgets[j], d->block);
		if (d->lower_bound[j] != (d->k_limited[j] > 0))
			bad |= problem(c, map, "lower_bound", j, "lower_bound: %s at budget %d, where "
				       "k_limited is %.9g", d->lower_bound[j] ? "true" : "false",
				       d->budgets[j], d->k_limited[j]);
		for (int a = 1; a <= d->block; a++)
			sum += d->hist[j][a];
		if (sum != d->steps)
			bad |= problem(c, map, "hist", j, "hist: the row of budget %d counts %lld "
				       "steps, not the %lld replayed", d->budgets[j], sum, d->steps);
	}
	return bad;
}

static int curve_check(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct curve_doc *d = obj;
	int bad = layout_check(c, map, d);
	bad |= lengths_check(c, map, d);
	return bad ? bad : budgets_check(c, map, d);
}

static int engine_check(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct curve_engine *e = obj;
	if (e->agree > e->steps)
		return problem(c, map, "agree", -1, "agree: %lld is more than the steps compared "
			       "(%lld)", e->agree, e->steps);
	return 0;
}

/* The context's quantiles in order, min to max. */
static int context_check(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct curve_context *x = obj;
	const double q[7] = {x->min, x->p5, x->p25, x->p50, x->p75, x->p95, x->max};
	static const char *const key[7] = {"min", "p5", "p25", "p50", "p75", "p95", "max"};
	for (int k = 1; x->steps && k < 7; k++)
		if (!(q[k] >= q[k - 1]))
			return problem(c, map, key[k], -1, "%s: %.9g is below %s (%.9g)", key[k], q[k],
				       key[k - 1], q[k - 1]);
	return 0;
}

/* ---- the tables ---- */

/* The bootstrap's options: what the file holds and ddt acceptance takes. */
static const struct yschema_range resamples_range = {1, 1000000, 0, 0, "within [1, 1000000]"};
static const struct yschema_range level_range = {0.5, 0.999, 0, 0, "within [0.5, 0.999]"};
static const struct yschema_range accept_range = {1, INFINITY, 0, 0, "at least 1"};
static const struct yschema_range budget_range = {0, ACCEPTANCE_MAX_BUDGET, 0, 0,
						  "within [0, 8192]"};

static const struct yschema_field boot_fields[] = {
	YS_FIELD(struct curve_boot, resamples, YS_INT, Y_REQUIRED, .range = &resamples_range,
		 .help = "bootstrap resamples over requests"),
	YS_FIELD(struct curve_boot, level, YS_NUM, Y_REQUIRED, .range = &level_range,
		 .help = "the interval's confidence level"),
	WHOLE(struct curve_boot, seed, Y_REQUIRED, "the bootstrap's seed"),
};
const struct yschema acceptance_boot_schema = YS_TABLE("bootstrap", boot_fields, 1);

int acceptance_boot_check(int resamples, double level)
{
	struct curve_boot b;
	int rc = yschema_set_num(&acceptance_boot_schema, &b, "resamples", resamples, "resamples");
	return rc ? rc : yschema_set_num(&acceptance_boot_schema, &b, "level", level, "level");
}

#define ENGINE_MEAN(m, h)                                                                 \
	YS_FIELD(struct curve_engine, m, YS_NUM, Y_REQUIRED | Y_NULLABLE, .unit = "tokens", \
		 .help = (h))
static const struct yschema_field engine_fields[] = {
	WHOLE(struct curve_engine, steps, Y_REQUIRED | Y_NONNEG,
	      "steps that record accepted at a budget replayed"),
	WHOLE(struct curve_engine, agree, Y_REQUIRED | Y_NONNEG, "of those, the replay's the same"),
	WHOLE(struct curve_engine, skipped, Y_REQUIRED | Y_NONNEG,
	      "steps that record accepted but were not compared"),
	ENGINE_MEAN(mean_recorded, "the engine's mean over the steps compared"),
	ENGINE_MEAN(mean_replayed, "the replay's over the same"),
	WHOLE(struct curve_engine, first_mismatch_line, Y_REQUIRED | Y_NONNEG,
	      "the trace's first line that disagrees; 0: none"),
};
static const struct yschema engine_schema =
	YS_TABLE_CHECKED("engine", engine_fields, 1, engine_check);

#define CONTEXT(m, fl, h)                                                                 \
	YS_FIELD(struct curve_context, m, YS_NUM, Y_REQUIRED | Y_NULLABLE | (fl),          \
		 .unit = "tokens", .help = (h))
static const struct yschema_field context_fields[] = {
	WHOLE(struct curve_context, steps, Y_REQUIRED | Y_NONNEG, "steps that record context"),
	CONTEXT(mean, Y_NONNEG, "their mean"),
	CONTEXT(sd, Y_NONNEG, "their standard deviation"),
	CONTEXT(min, Y_NONNEG, "the least"),
	CONTEXT(p5, Y_NONNEG, "5th percentile"),
	CONTEXT(p25, Y_NONNEG, "25th percentile"),
	CONTEXT(p50, Y_NONNEG, "median"),
	CONTEXT(p75, Y_NONNEG, "75th percentile"),
	CONTEXT(p95, Y_NONNEG, "95th percentile"),
	CONTEXT(max, Y_NONNEG, "the most"),
};
static const struct yschema context_schema =
	YS_TABLE_CHECKED("context_tokens", context_fields, 1, context_check);

#define DOC(m, ty, fl, h) YS_FIELD(struct curve_doc, m, ty, Y_REQUIRED | (fl), .help = (h))
#define NUMS(k, m, cnt, fl, ...) PER_BUDGET_(k, m, cnt, YS_NUMS, fl, __VA_ARGS__)
/* In the order written. */
static const struct yschema_field doc_fields[] = {
	DOC(schema, YS_INT, 0, "the layout: 1"),
	DOC(trace, YS_STR, 0, "the trace replayed, as given"),
	DOC(source, YS_STR, 0, "how the figures were made"),
	WHOLE(struct curve_doc, steps, Y_REQUIRED | Y_POSITIVE, "steps replayed"),
	WHOLE(struct curve_doc, requests, Y_REQUIRED | Y_POSITIVE, "the bootstrap's units"),
	WHOLE(struct curve_doc, request_steps, Y_REQUIRED | Y_NONNEG,
	      "steps that record a request_id"),
	DOC(block, YS_INT, Y_POSITIVE, "the block replayed: positions + 1"),
	DOC(trace_block, YS_INT, Y_POSITIVE, "the trace's block"),
	DOC(top_k_min, YS_INT, Y_POSITIVE, "the least top-K of a line"),
	DOC(top_k_max, YS_INT, Y_POSITIVE, "the most"),
	YS_KEYED(struct curve_doc, "bootstrap", bootstrap, YS_MAP, Y_REQUIRED,
		 .sub = &acceptance_boot_schema, .help = "the interval's bootstrap"),
	PER_BUDGET_("budgets", budgets, C_BUDGETS, YS_INTS, Y_NONNEG,
		    .range = &budget_range, .unit = "nodes", .help = "the tree budgets replayed"),
	NUMS("mean", mean, C_MEAN, 0, .range = &accept_range, .unit = "tokens",
	     .help = "mean acceptance length, root included"),
	NUMS("ci_lo", ci_lo, C_LO, 0, .range = &accept_range, .unit = "tokens",
	     .help = "the bootstrap interval's low end"),
	NUMS("ci_hi", ci_hi, C_HI, 0, .range = &accept_range, .unit = "tokens",
	     .help = "its high end"),
	NUMS("se", se, C_SE, Y_NONNEG, .unit = "tokens", .help = "the mean's standard error"),
	PER_BUDGET_("design_effect", deff, C_DEFF, YS_NUMS, Y_NONNEG | Y_NULLABLE,
		    .help = "the mean's variance over requests / over steps; null: no spread"),
	NUMS("drafter", drafter, C_DRAFTER, 0, .range = &accept_range, .unit = "tokens",
	     .help = "what the drafter expects: 1 + the tree's summed prefix probabilities"),
	NUMS("capped", capped, C_CAPPED, Y_FRACTION, .unit = "share of steps",
	     .help = "steps that accepted the whole block"),
	NUMS("k_limited", k_limited, C_KLIM, Y_FRACTION, .unit = "share of steps",
	     .help = "steps whose tree wanted a rank past the trace's top-K"),
	PER_BUDGET_("lower_bound", lower_bound, C_LOWER, YS_BOOLS, 0,
		    .help = "past the trace's top-K: the replay is a lower bound"),
	{.key = "cov", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = cov_read,
	 .write = cov_write, .help = "the bootstrap covariance of the means, budget by budget"},
	{.key = "hist", .type = YS_CUSTOM, .flags = Y_REQUIRED, .read = hist_read,
	 .write = hist_write, .unit = "steps",
	 .help = "per budget the steps accepting 1 .. block tokens"},
	YS_KEYED(struct curve_doc, "engine", engine, YS_MAP, Y_REQUIRED, .sub = &engine_schema,
		 .help = "the replay against the engine's recorded acceptance"),
	YS_KEYED(struct curve_doc, "context_tokens", context_tokens, YS_MAP, Y_REQUIRED,
		 .sub = &context_schema, .help = "tokens before the root, over the steps"),
};
static const struct yschema doc_schema =
	YS_TABLE_CHECKED("acceptance", doc_fields, 0, curve_check);

static const struct yschema_field top_fields[] = {
	YS_KEYED(struct curve_top, "acceptance", doc, YS_MAP, Y_REQUIRED, .sub = &doc_schema,
		 .help = "a drafter trace's acceptance curve"),
};
static const struct yschema top_schema = YS_TABLE("acceptance curve", top_fields, 0);

/* ---- writer and reader ---- */

/* r as the file holds it (cov and hist r's). */
static void doc_of(struct curve_doc *d, const struct acceptance_result *r)
{
	int ctx = r->context_steps != 0;
	*d = (struct curve_doc){
		.schema = 1, .steps = r->steps, .requests = r->requests,
		.request_steps = r->request_steps, .block = r->block, .trace_block = r->trace_block,
		.top_k_min = r->k_min, .top_k_max = r->k_max, .cov = r->cov,
		.bootstrap = {r->resamples, r->level, (long long)r->seed},
		.engine = {r->engine_steps, r->engine_agree, r->engine_skipped,
			   r->engine_steps ? r->engine_mean : NAN,
			   r->engine_steps ? r->replay_mean : NAN, r->first_disagree},
		.context_tokens = {r->context_steps, ctx ? r->context_mean : NAN,
				   ctx ? r->context_sd : NAN, ctx ? (double)r->context_min : NAN,
				   ctx ? r->context_q[0] : NAN, ctx ? r->context_q[1] : NAN,
				   ctx ? r->context_q[2] : NAN, ctx ? r->context_q[3] : NAN,
				   ctx ? r->context_q[4] : NAN, ctx ? (double)r->context_max : NAN}};
	snprintf(d->trace, sizeof d->trace, "%s", r->trace);
	snprintf(d->source, sizeof d->source,
		 "ddt acceptance %s: the engine's tree_build heap and accept walk replayed", r->trace);
	for (int k = 0; k < C_N; k++)
		d->n[k] = r->nb;
	for (int j = 0; j < r->nb; j++) {
		const struct acceptance_budget *b = &r->b[j];
		d->budgets[j] = b->budget;
		d->mean[j] = b->mean, d->ci_lo[j] = b->lo, d->ci_hi[j] = b->hi, d->se[j] = b->se;
		d->deff[j] = b->deff, d->drafter[j] = b->drafter, d->capped[j] = b->capped;
		d->k_limited[j] = b->k_limited;
		d->lower_bound[j] = b->k_limited > 0;
		d->hist[j] = b->hist;
	}
}

void acceptance_write_yaml(const struct acceptance_result *r, FILE *fp)
{
	struct curve_top t;
	doc_of(&t.doc, r);
	yschema_write_doc(fp, &top_schema, &t);
}

/* The result from what the reader took (cov and the rows of hist moved
 * over). Returns 0 or DDT_ENOMEM. */
static int result_of(struct acceptance_result *r, struct curve_doc *d)
{
	const struct curve_engine *e = &d->engine;
	const struct curve_context *x = &d->context_tokens;
	if (!(r->trace = strdup(d->trace)))
		return err_nomem();
	r->steps = d->steps, r->requests = d->requests, r->request_steps = d->request_steps;
	r->block = d->block, r->trace_block = d->trace_block;
	r->k_min = d->top_k_min, r->k_max = d->top_k_max;
	r->resamples = d->bootstrap.resamples, r->level = d->bootstrap.level;
	r->seed = (uint64_t)d->bootstrap.seed;
	r->nb = d->n[C_BUDGETS];
	for (int j = 0; j < r->nb; j++) {
		r->b[j] = (struct acceptance_budget){d->budgets[j], d->mean[j], d->ci_lo[j],
						     d->ci_hi[j], d->se[j], d->deff[j],
						     d->drafter[j], d->capped[j], d->k_limited[j],
						     d->hist[j]};
		d->hist[j] = NULL;
	}
	r->cov = d->cov;
	d->cov = NULL;
	r->engine_steps = e->steps, r->engine_agree = e->agree, r->engine_skipped = e->skipped;
	r->engine_mean = e->mean_recorded, r->replay_mean = e->mean_replayed;
	r->first_disagree = e->first_mismatch_line;
	r->context_steps = x->steps;
	r->context_mean = x->mean, r->context_sd = x->sd;
	r->context_min = x->steps ? (long long)x->min : 0;
	r->context_max = x->steps ? (long long)x->max : 0;
	memcpy(r->context_q, (const double[5]){x->p5, x->p25, x->p50, x->p75, x->p95},
	       sizeof r->context_q);
	return 0;
}

int acceptance_read_yaml(struct acceptance_result *r, const char *path)
{
	struct ydoc *doc = NULL;
	struct ydiag diag = {0};
	struct yctx c = {path, &diag, NULL};
	struct curve_top *t = calloc(1, sizeof *t);
	int rc;
	memset(r, 0, sizeof *r);
	if (!t)
		return err_nomem();
	if (!(rc = ydoc_load_file(&doc, path, &diag))) {
		if (!doc->root)
			ydiag_add(&diag, path, 1, 1, "missing required key 'acceptance'");
		rc = doc->root ? yschema_read_item(&c, doc->root, &top_schema, t, "the curve")
			       : DDT_EINPUT;
	}
	if (t->doc.nomem)
		rc = err_nomem();
	else if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	else if (!rc)
		rc = result_of(r, &t->doc);
	for (int j = 0; j < ACCEPTANCE_MAX_BUDGETS; j++)
		free(t->doc.hist[j]);
	free(t->doc.cov);
	free(t);
	ydiag_free(&diag);
	ydoc_free(doc);
	return rc;
}
