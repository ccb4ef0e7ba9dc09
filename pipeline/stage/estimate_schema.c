/* estimate_schema.c - the tables of an estimate record's keys: made_from and
 * overrides (what `ddt estimate --replay` reads back) and each estimate. */
#include "estimate_schema.h"

#include "err.h"

#include <math.h>
#include <string.h>

/* args: the command's arguments as text, on one line, read as pointers
 * into the document: a YS_STRS would hold ESTIMATE_MAX_ARGS paths of
 * PATH_MAX bytes in the struct, a YS_VEC copies them into an array the
 * reader allocates and is written one item a line. */
static void args_read(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj)
{
	struct estimate_made_from *m = obj;
	struct ydoc_node *seq = NULL;
	if (yschema_read_seq(c, map, f, &seq) || !seq)
		return;
	for (size_t i = 0; i < seq->n; i++)
		if (!yget_expect(c, seq->items[i], YDOC_SCALAR, f->key))
			m->args[m->nargs++] = seq->items[i]->str;
}

static void args_write(struct yout *y, const struct yschema_field *f, const void *obj)
{
	const struct estimate_made_from *m = obj;
	yout_key(y, f->key);
	yout_seq_flow(y);
	for (int i = 0; i < m->nargs; i++)
		yout_str(y, m->args[i]);
	yout_end(y);
}

#define MADE(k, m, fl, h) YS_KEYED(struct estimate_made_from, k, m, YS_STR, fl, .help = (h))
/* In the order written (the CSV's made_from lines too); a file not used
 * has its name and hash empty. */
static const struct yschema_field made_from_fields[] = {
	MADE("calibration", calibration, Y_REQUIRED, "the calibration folder or file"),
	MADE("calibration_hash", calibration_hash, Y_REQUIRED,
	     "fnv1a64 of every calibration file loaded, names and bytes"),
	MADE("template", template_path, Y_REQUIRED, "the template file"),
	MADE("template_hash", template_hash, Y_REQUIRED, "fnv1a64 of the template"),
	MADE("moe_reference", moe_reference, 0, "--moe-reference's file; empty when none"),
	MADE("moe_reference_hash", moe_reference_hash, Y_REQUIRED,
	     "fnv1a64 of that file; empty when none"),
	{.key = "args", .type = YS_CUSTOM, .flags = Y_REQUIRED, .max = ESTIMATE_MAX_ARGS,
	 .read = args_read, .write = args_write,
	 .help = "the command's arguments in a canonical order"},
};
const struct yschema estimate_schema_made_from = YS_TABLE("made_from", made_from_fields, 0);

#define OVR(m, h) YS_FIELD(struct calib_override, m, YS_STR, Y_REQUIRED, .help = (h))
static const struct yschema_field override_fields[] = {
	OVR(key, "the --set key"),
	OVR(value, "the value given, as given"),
	OVR(was, "the value it replaced; empty when the calibration cannot tell"),
};
static const struct yschema override_schema = YS_TABLE("overrides[]", override_fields, 1);

static const struct yschema_field origin_fields[] = {
	YS_FIELD(struct estimate_origin, made_from, YS_MAP, Y_REQUIRED,
		 .sub = &estimate_schema_made_from, .help = "what the estimate was made from"),
	YS_LIST_OF(struct estimate_origin, "overrides", overrides, noverrides, &override_schema, 0,
		   .help = "every --set, in the order given"),
};
const struct yschema estimate_schema_origin = YS_TABLE("estimate record", origin_fields, 0);

/* A band as the record states it: its percentiles, the point being the row's. */
#define FIG (Y_REQUIRED | Y_NULLABLE)
static const struct yschema_field band_fields[] = {
	YS_FIELD(struct band, p5, YS_NUM, FIG, .help = "5th percentile of the draws"),
	YS_FIELD(struct band, p50, YS_NUM, FIG, .help = "median of the draws"),
	YS_FIELD(struct band, p95, YS_NUM, FIG, .help = "95th percentile of the draws"),
};
static const struct yschema band_schema = YS_TABLE("band", band_fields, 1);

_Static_assert(COMP_COUNT == 6, "a model component needs its _ms key in rec_fields");

#define REC(k, m, ty, fl, u, h)                                                          \
	YS_KEYED(struct estimate_rec, k, m, ty, fl, .unit = (u), .help = (h))
#define REC_MS(k, comp, h) REC(k, ms[comp], YS_NUM, FIG, "ms", h)
/* In the order written: the row (REC_HEAD keys), the keys its band brings
 * (REC_BAND keys, with a projection), then whether it runs. */
#define REC_HEAD 21
#define REC_BANDS 10
static const struct yschema_field rec_fields[] = {
	REC("scenario", scenario, YS_STR, Y_REQUIRED, NULL, "the scenario's name"),
	REC("target", target, YS_STR, Y_REQUIRED, NULL, "the catalog GPU"),
	YS_FIELD(struct estimate_rec, pipeline, YS_ENUM, Y_REQUIRED, .names = tmpl_pipeline_names,
		 .help = "the serving pipeline"),
	REC("block", block, YS_INT, Y_REQUIRED, "tokens", "drafter block size"),
	REC("budget", budget, YS_INT, Y_REQUIRED, "nodes", "draft tree budget"),
	REC("concurrency", concurrency, YS_INT, Y_REQUIRED, "requests",
	    "sequences decoded at once"),
	REC("context", context, YS_INT, Y_REQUIRED | Y_NONNEG, "tokens",
	    "context (0: the anchors')"),
	REC("context_from", context_from, YS_STR, YS_OMIT, NULL,
	    "scenario or trace; with a context and a band"),
	REC("context_law", context_law, YS_STR, YS_OMIT, NULL,
	    "how attention grows with context; with a context and a band"),
	REC("M", M, YS_NUM, FIG, "tokens", "verify width"),
	REC("accept", accept, YS_NUM, FIG, "tokens", "mean acceptance length"),
	REC_MS("moe_ms", COMP_MOE, "the MoE per step"),
	REC_MS("attn_lmhead_ms", COMP_ATTN, "attention and lm_head per step"),
	REC_MS("draft_ms", COMP_DRAFT, "the drafter's forward per step"),
	REC_MS("tree_ms", COMP_TREE, "tree build and accept per step"),
	REC_MS("overhead_ms", COMP_OVERHEAD, "launch and scheduling per step"),
	REC_MS("allreduce_ms", COMP_ALLREDUCE, "the all-reduces per step"),
	REC("nonmoe_ms", nonmoe_ms, YS_NUM, FIG, "ms", "everything else per step"),
	REC("step_ms", step_ms, YS_NUM, FIG, "ms", "decode step"),
	REC("tok_s", tok_s, YS_NUM, FIG, "tok/s", "throughput"),
	YS_FIELD(struct estimate_rec, estimator, YS_ENUM, Y_REQUIRED, .names = tmpl_estimator_names,
		 .help = "whose estimate this is"),
	/* the band's keys (rec_check: all or none) */
	YS_FIELD(struct estimate_rec, step_ms_band, YS_MAP, 0, .sub = &band_schema, .unit = "ms",
		 .help = "decode step's band"),
	YS_FIELD(struct estimate_rec, tok_s_band, YS_MAP, 0, .sub = &band_schema, .unit = "tok/s",
		 .help = "throughput's band"),
	YS_FIELD(struct estimate_rec, moe_ms_band, YS_MAP, 0, .sub = &band_schema, .unit = "ms",
		 .help = "the MoE alone per step, its band"),
	REC("accept_from", accept_from, YS_STR, 0, NULL, "typed or trace"),
	REC("accept_lo", accept_lo, YS_NUM, Y_NULLABLE | YS_OMIT, "tokens",
	    "acceptance range, low end; only for a range"),
	REC("accept_hi", accept_hi, YS_NUM, Y_NULLABLE | YS_OMIT, "tokens",
	    "acceptance range, high end; only for a range"),
	REC("other_tok_s", other_tok_s, YS_NUM, Y_NULLABLE, "tok/s",
	    "the other estimator's figure"),
	REC("other_pctile", other_pctile, YS_NUM, Y_NULLABLE, "%", "where it falls in this band"),
	REC("xfer_cover_pct", xfer_cover_pct, YS_NUM, Y_NULLABLE, "%",
	    "transfer backtest: points inside p5-p95"),
	REC("xfer_err_pct", xfer_err_pct, YS_NUM, Y_NULLABLE, "%",
	    "transfer backtest: median error of p50"),
	REC("runnable", runnable, YS_BOOL, Y_REQUIRED, NULL, "the pipeline can run it"),
	REC("note", note, YS_STR, Y_REQUIRED, NULL, "why not runnable, or the scenario's note"),
};
_Static_assert(sizeof rec_fields / sizeof *rec_fields == REC_HEAD + REC_BANDS + 2,
	       "REC_HEAD and REC_BANDS count rec_fields' parts");

/* A band's keys come all together or not at all, accept_lo and accept_hi
 * both or neither and lo below hi (a range), context_from and context_law
 * only with a context. */
static int rec_check(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct estimate_rec *r = obj;
	struct ydoc_node *lo = ydoc_get(map, "accept_lo");
	int bad = 0, band = ydoc_get(map, "step_ms_band") != NULL;
	for (int i = REC_HEAD; i < REC_HEAD + REC_BANDS; i++) {
		const char *k = rec_fields[i].key;
		if (!(rec_fields[i].flags & YS_OMIT) && !ydoc_get(map, k) != !band) {
			ydiag_add(c->diag, c->file, map->line, map->col,
				  band ? "%s is required with step_ms_band"
				       : "%s: only with step_ms_band", k);
			bad = 1;
		}
	}
	if (isnan(r->accept_lo) != isnan(r->accept_hi) || (lo && !(r->accept_lo < r->accept_hi))) {
		struct ydoc_node *at = lo ? lo : map;
		ydiag_add(c->diag, c->file, at->line, at->col,
			  "accept_lo and accept_hi: a range, lo below hi, or neither");
		bad = 1;
	}
	for (int i = 0; i < 2 && !r->context; i++) {
		const char *k = i ? "context_law" : "context_from";
		struct ydoc_node *n = ydoc_get(map, k);
		if (n) {
			ydiag_add(c->diag, c->file, n->line, n->col, "%s: only with a context", k);
			bad = 1;
		}
	}
	return bad;
}

const struct yschema estimate_schema_rec =
	YS_TABLE_CHECKED("estimates[]", rec_fields, 0, rec_check);
/* Its parts, written apart: the band's keys only with a band. */
static const struct yschema rec_head = YS_PART("estimates[]", rec_fields, REC_HEAD);
static const struct yschema rec_band = YS_PART("estimates[]", rec_fields + REC_HEAD, REC_BANDS);
static const struct yschema rec_tail =
	YS_PART("estimates[]", rec_fields + REC_HEAD + REC_BANDS,
		sizeof rec_fields / sizeof *rec_fields - REC_HEAD - REC_BANDS);

/* ---------------------------------------------------------------- from the estimate */

void estimate_origin_of(struct estimate_origin *o, const struct estimate_source *src)
{
	struct estimate_made_from *m = &o->made_from;
	memset(o, 0, sizeof *o);
	snprintf(m->calibration, sizeof m->calibration, "%s", src->calibration);
	snprintf(m->calibration_hash, sizeof m->calibration_hash, "%s", src->calibration_hash);
	snprintf(m->template_path, sizeof m->template_path, "%s", src->template_path);
	snprintf(m->template_hash, sizeof m->template_hash, "%s", src->template_hash);
	snprintf(m->moe_reference, sizeof m->moe_reference, "%s", src->moe_reference);
	snprintf(m->moe_reference_hash, sizeof m->moe_reference_hash, "%s",
		 src->moe_reference_hash);
	for (int i = 0; i < src->nargs && m->nargs < ESTIMATE_MAX_ARGS; i++)
		m->args[m->nargs++] = src->args[i];
	for (int i = 0; i < src->cal->nsets && o->noverrides < CALIB_MAX_SETS; i++)
		o->overrides[o->noverrides++] = src->cal->sets[i];
}

/* The keys a band brings: b's. */
static void rec_band_of(struct estimate_rec *r, const struct project_row *b)
{
	r->has_band = 1;
	r->step_ms_band = b->step_ms;
	r->tok_s_band = b->tok_s;
	r->moe_ms_band = b->moe_band;
	snprintf(r->accept_from, sizeof r->accept_from, "%s", b->accept_from);
	if (b->accept_hi > b->accept_lo) {
		r->accept_lo = b->accept_lo;
		r->accept_hi = b->accept_hi;
	}
	r->other_tok_s = b->other_tok_s;
	r->other_pctile = b->other_pctile;
	r->xfer_cover_pct = b->xfer_cover_pct;
	r->xfer_err_pct = b->xfer_err_pct;
}

void estimate_rec_of(struct estimate_rec *r, const struct estimate_row *row,
		     const struct project_row *b, const struct projection *p)
{
	memset(r, 0, sizeof *r);
	snprintf(r->scenario, sizeof r->scenario, "%s", row->sc.name);
	snprintf(r->target, sizeof r->target, "%s", row->target->id);
	r->pipeline = row->sc.pipeline;
	r->block = row->sc.block;
	r->budget = row->sc.budget;
	r->concurrency = row->sc.concurrency;
	r->context = row->sc.context;
	if (b && r->context) {
		snprintf(r->context_from, sizeof r->context_from, "%s", b->context_from);
		snprintf(r->context_law, sizeof r->context_law, "%s", p->context_law_label);
	}
	r->M = row->out.M;
	r->accept = row->accept;
	memcpy(r->ms, row->out.ms, sizeof r->ms);
	r->nonmoe_ms = row->out.nonmoe_ms;
	r->step_ms = row->out.step_ms;
	r->tok_s = row->out.tok_s;
	r->estimator = row->sc.estimator;
	r->accept_lo = r->accept_hi = NAN;
	if (b)
		rec_band_of(r, b);
	r->runnable = row->runnable;
	snprintf(r->note, sizeof r->note, "%s", row->note);
}

/* ---------------------------------------------------------------- write, read */

/* The tables' writers fail only for a custom entry without a writer; these
 * have theirs. */
void estimate_origin_write(struct yout *y, const struct estimate_origin *o)
{
	yschema_write_fields(y, &estimate_schema_origin, o);
}

void estimate_rec_write(struct yout *y, const struct estimate_rec *r)
{
	yout_map(y);
	yschema_write_fields(y, &rec_head, r);
	if (r->has_band)
		yschema_write_fields(y, &rec_band, r);
	yschema_write_fields(y, &rec_tail, r);
	yout_end(y);
}

int estimate_origin_read(struct yctx *c, struct ydoc_node *root, struct estimate_origin *o)
{
	memset(o, 0, sizeof *o);
	return yschema_read_fields(c, root, &estimate_schema_origin, o);
}

int estimate_rec_read(struct yctx *c, struct ydoc_node *item, struct estimate_rec *r)
{
	memset(r, 0, sizeof *r);
	if (yschema_read_item(c, item, &estimate_schema_rec, r, "estimates"))
		return DDT_EINPUT;
	r->has_band = ydoc_get(item, "step_ms_band") != NULL;
	return 0;
}
