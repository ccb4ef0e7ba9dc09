/* calib_schema.c - the calibration's sections as tables of their keys
 * (yschema.h): calib.c reads each section by its table, calib_set.c sets
 * and lists the numbers by the same entries. What no table type holds is
 * read by its entry's own reader here: maps whose keys are data (families,
 * memory kinds, measured classes and their GPUs, all-reduce latencies),
 * lists of names (ranges, the fit's priorities), and the rules across keys
 * (a distribution's parameters by its kind, increasing lists, min below
 * max). "[source]" is the tag of calibration/SOURCES.md the section's own
 * source line cites. */
#include "calib_fields.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

#define REQ_STR(T, m, h) YS_FIELD(T, m, YS_STR, Y_REQUIRED, .help = (h))
#define NUM(T, m, fl, u, h, src) YS_FIELD(T, m, YS_NUM, fl, .unit = (u), .help = (h), .source = (src))
/* A nested mapping under key k whose keys fill T's own members (table sub
 * over T). */
#define WHOLE(T, k, fl, sub_, h)                                                           \
	{.key = (k), .type = YS_MAP, .off = 0, .size = sizeof(T), .flags = (fl), .sub = (sub_), \
	 .help = (h)}
/* Key k read by fn into T's member m. */
#define CUSTOM(T, k, m, fl, fn, h) YS_KEYED(T, k, m, YS_CUSTOM, fl, .read = (fn), .help = (h))
/* A text the file states for its readers only (a note, the source of a
 * value kept elsewhere): read and checked, not kept. */
#define NOTE(k, fl, h) {.key = (k), .type = YS_CUSTOM, .flags = (fl), .read = read_note, .help = (h)}

static void read_note(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj)
{
	const char *s;
	(void)obj;
	yget_str(c, map, f->key, f->flags, &s);
}

/* Records a problem at the value of key in map (at map when key is absent):
 * a value out of range is blamed on its own line and column. Returns 1. */
static int __attribute__((format(printf, 4, 5)))
blame_key(struct yctx *c, struct ydoc_node *map, const char *key, const char *fmt, ...)
{
	struct ydoc_node *n = ydoc_get(map, key);
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!n)
		n = map;
	ydiag_add(c->diag, c->file, n->line, n->col, "%s", msg);
	return 1;
}

/* The node of key itself (not its value) in map, or map. */
static struct ydoc_node *key_node(struct ydoc_node *map, const char *key)
{
	struct ydoc_node *k = ydoc_key(map, key);
	return k ? k : map;
}

/* ---------------------------------------------------------------- gpus, model, drafter */

#define DATASHEET "vendor datasheet, dense"
static const struct yschema_field gpu_fields[] = {
	REQ_STR(struct gpu, name, "the product's name"),
	REQ_STR(struct gpu, arch, "compute architecture: sm_90, sm_100, sm_103, sm_120"),
	REQ_STR(struct gpu, memory, "memory kind: hbm3, hbm3e, gddr7 (transfer.yaml's memory_kinds)"),
	REQ_STR(struct gpu, link, "interconnect: nvlink or pcie"),
	REQ_STR(struct gpu, source, "where the figures come from"),
	NUM(struct gpu, mem_gb, REQ_POS, "GB", "memory per GPU", DATASHEET),
	NUM(struct gpu, bw_tbps, REQ_POS, "TB/s", "memory bandwidth", DATASHEET),
	NUM(struct gpu, bf16_tflops, REQ_POS, "TFLOPS", "dense BF16 tensor throughput", DATASHEET),
	NUM(struct gpu, fp8_tflops, REQ_POS, "TFLOPS", "dense FP8 tensor throughput", DATASHEET),
	NUM(struct gpu, fp4_tflops, Y_POSITIVE, "TFLOPS", "dense FP4 tensor throughput (absent: none)",
	    DATASHEET),
	NUM(struct gpu, link_gbps, Y_POSITIVE, "GB/s", "interconnect bandwidth per GPU (absent: "
	    "not given)", DATASHEET),
};
const struct yschema calib_gpu_schema = YS_TABLE("gpus.GPU", gpu_fields, 0);

#define CONFIG "the model's config.json"
#define GEO(m, fl, u, h) NUM(struct geometry, m, fl, u, h, CONFIG)
#define ZERO_INT (Y_REQUIRED | Y_NONNEG | Y_INTEGER)
static const struct yschema_field geometry_fields[] = {
	REQ_STR(struct geometry, name, "the model's name"),
	REQ_STR(struct geometry, source, "where the shape comes from"),
	GEO(layers, REQ_INT, NULL, "transformer layers"),
	GEO(dense_layers, ZERO_INT, NULL, "leading layers with a dense MLP instead of experts"),
	GEO(hidden, REQ_INT, NULL, "hidden size"),
	GEO(dense_intermediate, REQ_INT, NULL, "intermediate size of a dense MLP"),
	GEO(experts, REQ_INT, NULL, "routed experts per MoE layer"),
	GEO(experts_per_token, REQ_INT, NULL, "routed experts each token takes"),
	GEO(shared_experts, ZERO_INT, NULL, "shared experts per MoE layer"),
	GEO(moe_intermediate, REQ_INT, NULL, "intermediate size of one expert"),
	GEO(attn_heads, REQ_INT, NULL, "attention heads"),
	GEO(q_lora_rank, REQ_INT, NULL, "MLA query compression rank"),
	GEO(kv_lora_rank, REQ_INT, NULL, "MLA key/value compression rank"),
	GEO(qk_nope_dim, REQ_INT, NULL, "per-head query/key dimension without rotary"),
	GEO(qk_rope_dim, REQ_INT, NULL, "per-head rotary dimension"),
	GEO(v_head_dim, REQ_INT, NULL, "per-head value dimension"),
	GEO(vocab, REQ_INT, "tokens", "vocabulary size"),
	GEO(context_tokens, REQ_INT, "tokens", "longest context"),
	GEO(expert_weight_bits, REQ_INT, "bits", "bits per routed-expert weight"),
	GEO(expert_group_size, REQ_INT, NULL, "weights sharing one quantization scale"),
	GEO(expert_scale_bytes, REQ_INT, "bytes", "bytes per quantization scale"),
	GEO(dense_weight_bytes, REQ_INT, "bytes", "bytes per weight outside the routed experts"),
	GEO(kv_cache_bytes, REQ_INT, "bytes", "bytes per cached key/value element"),
	NUM(struct geometry, tp, REQ_INT, "GPUs", "tensor-parallel width the engine runs",
	    "ddt's setting"),
};
const struct yschema calib_geometry_schema = YS_TABLE("model", geometry_fields, 0);

#define DRAFTER "the drafter's config.json"
#define DRF(m, h) NUM(struct drafter, m, REQ_INT, NULL, h, DRAFTER)
static const struct yschema_field drafter_fields[] = {
	REQ_STR(struct drafter, name, "the drafter's name"),
	REQ_STR(struct drafter, source, "where the shape comes from"),
	DRF(block, "tokens the drafter proposes per step"), DRF(layers, "drafter layers"),
	DRF(hidden, "hidden size"), DRF(q_heads, "query heads"),
	DRF(kv_heads, "key/value heads"), DRF(intermediate, "MLP intermediate size"),
};
const struct yschema calib_drafter_schema = YS_TABLE("drafter", drafter_fields, 0);

/* ---------------------------------------------------------------- anchors */

/* An anchor's rules across its keys (c->ctx: its name): error_source
 * with error_pct; either tok_s with accept (the step derived from them) or
 * step_ms. */
static int check_anchor(struct yctx *c, struct ydoc_node *m, void *obj)
{
	const char *name = *(const char *const *)c->ctx;
	struct anchor *a = obj;
	int rate = !isnan(a->tok_s) || !isnan(a->accept), step = !isnan(a->step_ms), bad = 0;
	if (!isnan(a->error_pct) && !a->error_source[0])
		bad = blame_key(c, m, "", "missing required key 'error_source'");
	if (rate == step || (rate && (isnan(a->tok_s) || isnan(a->accept))))
		bad = blame_key(c, m, "", "%s: give either tok_s with accept, or step_ms", name);
	else if (rate)
		a->step_ms = a->concurrency * a->accept / a->tok_s * 1000.0;
	return bad;
}

static const struct yschema_name anchor_kind_names[] = {
	{"measurement", 0}, {"estimate", 1}, {NULL, 0}};
#define ANC(m, fl, u, h) NUM(struct anchor, m, fl, u, h, "the measurement its source cites")
static const struct yschema_field anchor_fields[] = {
	REQ_STR(struct anchor, gpu, "the catalog GPU it was measured on"),
	REQ_STR(struct anchor, source, "who measured it, how"),
	YS_FIELD(struct anchor, pipeline, YS_ENUM, Y_REQUIRED, .names = tmpl_pipeline_names,
		 .help = "the serving pipeline measured"),
	ANC(block, REQ_INT, "tokens", "drafter block size"),
	ANC(budget, REQ_INT, "nodes", "draft tree budget"),
	ANC(concurrency, REQ_INT, "requests", "concurrent requests"),
	ANC(tok_s, Y_POSITIVE, "tok/s", "measured throughput (with accept)"),
	ANC(accept, Y_POSITIVE, "tokens", "mean accepted tokens per step (with tok_s)"),
	ANC(step_ms, Y_POSITIVE, "ms", "measured decode step (instead of tok_s and accept)"),
	ANC(error_pct, Y_POSITIVE, "%", "1-sigma relative error of the figure (absent: exact)"),
	YS_FIELD(struct anchor, error_source, YS_STR, 0,
		 .help = "where error_pct comes from (required with it)"),
	YS_KEYED(struct anchor, "kind", estimate, YS_ENUM, 0, .names = anchor_kind_names,
		 .help = "measurement (weighs the draws) or estimate (widens the bands)"),
};
const struct yschema calib_anchor_schema =
	YS_TABLE_CHECKED("anchors.NAME", anchor_fields, 0, check_anchor);

/* anchors.NAME: the anchor under its name, and where its GPU and its step
 * figure were read (for the catalog's and the model's problems). */
static void read_anchor(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			void *obj)
{
	struct anchor *a = (struct anchor *)((char *)obj + f->off);
	struct ydoc_node *m = NULL, *gpu, *fig;
	const char *name = f->key;
	struct yctx ac = {c->file, c->diag, &name};

	if (yget_node(c, map, f->key, YDOC_MAP, f->flags, &m) || !m)
		return;
	yschema_read(&ac, m, &calib_anchor_schema, a);
	gpu = ydoc_get(m, "gpu");
	fig = ydoc_get(m, "tok_s");
	if (!fig)
		fig = ydoc_get(m, "step_ms");
	a->gpu_line = gpu ? gpu->line : m->line;
	a->gpu_col = gpu ? gpu->col : m->col;
	a->step_line = fig ? fig->line : m->line;
	a->step_col = fig ? fig->col : m->col;
}

/* anchors.sglang_limits (fields of struct calib). */
static const struct yschema_field limits_fields[] = {
	YS_KEYED(struct calib, "max_budget", sglang_max_budget, YS_NUM, REQ_INT, .unit = "nodes",
		 .help = "largest tree budget the SGLang pipeline runs",
		 .source = "what was seen to run (its source)"),
	YS_KEYED(struct calib, "source", sglang_limit_source, YS_STR, Y_REQUIRED,
		 .help = "who found the limit, how"),
};
const struct yschema calib_limits_schema = YS_TABLE("anchors.sglang_limits", limits_fields, 0);

static const struct yschema_field anchors_fields[] = {
	CUSTOM(struct calib, "sglang_b8", sglang_b8, Y_REQUIRED, read_anchor,
	       "the step the non-MoE components are anchored at"),
	CUSTOM(struct calib, "sglang_b16", sglang_b16, Y_REQUIRED, read_anchor,
	       "the step that fixes the growth of attention and draft"),
	WHOLE(struct calib, "sglang_limits", Y_REQUIRED, &calib_limits_schema,
	      "what the SGLang pipeline runs"),
};
const struct yschema calib_anchors_schema = YS_TABLE("anchors", anchors_fields, 0);

/* ---------------------------------------------------------------- moe_reference */

/* One parameter of the physical curve: its value and who states it. */
struct moe_param_fact {
	double value;
	char source[CALIB_SOURCE_LEN];
};

static const struct yschema_field param_fields[] = {
	YS_FIELD(struct moe_param_fact, value, YS_NUM, Y_REQUIRED,
		 .help = "the fit's start value, or the value held"),
	REQ_STR(struct moe_param_fact, source, "who states it, how"),
};
static const struct yschema param_schema = YS_TABLE("moe_reference.physical.PARAM",
						    param_fields, 0);

/* moe_reference.physical.PARAM: {value, source}, the value within the
 * parameter's range (named by the parameter, not by "value"). */
static void read_moe_param(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			   void *obj)
{
	struct moe_physical *ph = obj;
	int p = (int)((f->off - offsetof(struct moe_physical, value)) / sizeof *ph->value);
	struct moe_param_fact v = {NAN, ""};
	struct ydoc_node *m = NULL;

	if (yget_node(c, map, f->key, YDOC_MAP, f->flags, &m) || !m)
		return;
	yschema_read(c, m, &param_schema, &v);
	ph->value[p] = v.value;
	memcpy(ph->source[p], v.source, sizeof ph->source[p]);
	if (!isnan(v.value) && !range_holds(&moe_param_ranges[p], v.value))
		blame_key(c, m, "value", "%s: must be %s, got %g", f->key,
			  moe_param_ranges[p].says, v.value);
}

/* moe_reference.physical.fit as the file gives it: parameters' names. */
struct fit_text {
	char name[MOE_P_COUNT][16];
	int n;
};

static const struct yschema_name fit_names[] = {{"efficiency", MOE_P_EFFICIENCY},
						{"overlap", MOE_P_OVERLAP},
						{"fixed_us", MOE_P_FIXED_US},
						{NULL, 0}};
static const struct yschema_field fit_fields[] = {
	YS_STRS_OF(struct fit_text, "fit", name, n, Y_REQUIRED, .names = fit_names),
};
static const struct yschema fit_schema = YS_TABLE("moe_reference.physical", fit_fields, 0);

/* moe_reference.physical.fit: the parameters the fit frees, in priority
 * order, each once (the names read by fit_schema, kept as parameters). */
static void read_fit(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		     void *obj)
{
	struct moe_physical *ph = obj;
	struct fit_text t = {.n = 0};

	if (yschema_read_fields(c, map, &fit_schema, &t))
		return;
	for (int i = 0; i < t.n; i++) {
		int k = 0, twice = 0;
		while (strcmp(fit_names[k].name, t.name[i]))
			k++;
		for (int j = 0; j < ph->nfit; j++)
			twice |= ph->fit[j] == (enum moe_param)fit_names[k].value;
		if (twice) {
			struct ydoc_node *it = ydoc_get(map, f->key)->items[i];
			ydiag_add(c->diag, c->file, it->line, it->col, "fit: '%s' given twice",
				  t.name[i]);
		} else {
			ph->fit[ph->nfit++] = (enum moe_param)fit_names[k].value;
		}
	}
}

/* moe_reference.physical.mix_forms_rms_pct (optional): {value, source}. */
static const struct yschema_field mix_fields[] = {
	YS_KEYED(struct moe_physical, "value", mix_rms_pct, YS_NUM, REQ_POS, .unit = "%",
		 .help = "residual RMS beyond which the draws mix the other curve form in"),
	NOTE("source", Y_REQUIRED, "who chose it, how"),
};
static const struct yschema mix_schema = YS_TABLE("mix_forms_rms_pct", mix_fields, 0);

#define PARAM(p, k, h) CUSTOM(struct moe_physical, k, value[p], Y_REQUIRED, read_moe_param, h)
static const struct yschema_field physical_fields[] = {
	PARAM(MOE_P_EFFICIENCY, "efficiency", "share of the bandwidth the experts' reads reach"),
	PARAM(MOE_P_OVERLAP, "overlap", "share of the tokens whose experts overlap"),
	PARAM(MOE_P_FIXED_US, "fixed_us", "fixed cost per MoE layer, us"),
	WHOLE(struct moe_physical, "mix_forms_rms_pct", 0, &mix_schema,
	      "when the curve's form is in doubt (absent: never)"),
	CUSTOM(struct moe_physical, "fit", fit, Y_REQUIRED, read_fit,
	       "the parameters the fit frees, in priority order"),
};
static const struct yschema physical_schema =
	YS_TABLE("moe_reference.physical", physical_fields, 0);

/* moe_reference.floor_us (optional; fields of struct moe_reference). */
static const struct yschema_field floor_fields[] = {
	YS_KEYED(struct moe_reference, "value", floor_us, YS_NUM, Y_REQUIRED | Y_NONNEG,
		 .unit = "us", .help = "per-call floor of one MoE layer (0: none)",
		 .source = "its source"),
	YS_KEYED(struct moe_reference, "source", floor_source, YS_STR, Y_REQUIRED,
		 .help = "who measured it, how"),
};
const struct yschema calib_floor_schema = YS_TABLE("moe_reference.floor_us", floor_fields, 0);

static const struct yschema_field point_fields[] = {
	NUM(struct moe_point, m, REQ_INT, "tokens", "verify width", "the curve's measurement"),
	NUM(struct moe_point, step_ms, REQ_POS, "ms", "MoE per decode step, every MoE layer",
	    "the curve's measurement"),
	REQ_STR(struct moe_point, source, "who measured it, how"),
};
const struct yschema calib_point_schema = YS_TABLE("points[]", point_fields, 1);

/* The reference's points: two at least, each m once; sorted by m. */
static int check_points(struct yctx *c, struct ydoc_node *map, void *obj)
{
	struct moe_reference *r = obj;
	struct ydoc_node *pts = ydoc_get(map, "points");
	int bad = 0;
	if (r->npoints < 2)
		bad = blame_key(c, map, "points", "points: need 2 to %d points, got %d",
				CALIB_MAX_MOE_POINTS, r->npoints);
	for (int i = 1; i < r->npoints; i++)
		for (int j = 0; j < i; j++)
			if (r->points[j].m == r->points[i].m) {
				ydiag_add(c->diag, c->file, pts->items[i]->line, pts->items[i]->col,
					  "points: m=%g given twice", r->points[i].m);
				bad = 1;
				break;
			}
	qsort(r->points, (size_t)r->npoints, sizeof *r->points, cmp_point);
	return bad;
}

static const struct yschema_field moe_ref_fields[] = {
	REQ_STR(struct moe_reference, gpu, "the catalog GPU the curve was measured on"),
	REQ_STR(struct moe_reference, source, "who measured it, how"),
	NUM(struct moe_reference, tp, REQ_INT, "GPUs", "tensor-parallel width measured at",
	    "the measurement its source cites"),
	YS_FIELD(struct moe_reference, curve, YS_ENUM, Y_REQUIRED, .names = calib_moe_curve_names,
		 .help = "how the MoE time is drawn between and beyond the points"),
	NOTE("efficiency_note", 0, "a word on the efficiency, for the reader"),
	WHOLE(struct moe_reference, "floor_us", 0, &calib_floor_schema,
	      "per-call floor of one MoE layer (absent: none)"),
	YS_KEYED(struct moe_reference, "physical", phys, YS_MAP, Y_REQUIRED, .sub = &physical_schema,
		 .help = "the physical curve's parameters"),
	YS_LIST_OF(struct moe_reference, "points", points, npoints, &calib_point_schema,
		   Y_REQUIRED, .help = "the measured MoE step against the verify width"),
};
const struct yschema calib_moe_ref_schema =
	YS_TABLE_CHECKED("moe_reference", moe_ref_fields, 0, check_points);

/* ---------------------------------------------------------------- distributions */

/* A distribution's parameters, in the order their problems are told. */
enum { P_MIN, P_MODE, P_MAX, P_MEAN, P_SD, P_MEDIAN, P_SIGMA, P_COUNT };
static const char *const dist_params[P_COUNT] = {"min",  "mode",   "max",  "mean",
						 "sd",   "median", "sigma"};
#define B(p) (1u << (p))
/* Per kind: the parameters it needs, and those it takes besides. */
static const unsigned dist_needs[DIST_LOGNORMAL + 1] = {
	[DIST_FIXED] = 0,
	[DIST_UNIFORM] = B(P_MIN) | B(P_MAX),
	[DIST_TRIANGULAR] = B(P_MIN) | B(P_MODE) | B(P_MAX),
	[DIST_NORMAL] = B(P_MEAN) | B(P_SD),
	[DIST_LOGNORMAL] = B(P_MEDIAN) | B(P_SIGMA),
};
static const unsigned dist_also[DIST_LOGNORMAL + 1] = {[DIST_NORMAL] = B(P_MIN) | B(P_MAX)};

/* Each parameter the kind needs is given, none it does not take. */
static int dist_params_given(struct yctx *c, struct ydoc_node *map, const struct dist *d)
{
	const double v[P_COUNT] = {d->min, d->mode, d->max, d->mean, d->sd, d->median, d->sigma};
	unsigned need = dist_needs[d->kind], take = need | dist_also[d->kind];
	int bad = 0;
	for (int p = 0; p < P_COUNT; p++) {
		struct ydoc_node *k = key_node(map, dist_params[p]);
		if ((need & B(p)) && isnan(v[p]))
			bad = blame_key(c, map, "", "missing required key '%s'", dist_params[p]);
		else if (!(take & B(p)) && !isnan(v[p]) && k != map) {
			ydiag_add(c->diag, c->file, k->line, k->col, "unknown key '%s'",
				  dist_params[p]);
			bad = 1;
		}
	}
	return bad;
}

/* A distribution's rules (c->ctx: its name): the parameters of its kind, the
 * mode within min and max, min below max, the point within them, a
 * lognormal's point above zero. */
static int check_dist(struct yctx *c, struct ydoc_node *m, void *obj)
{
	const char *name = *(const char *const *)c->ctx;
	struct dist *d = obj;
	int bad = 0;
	if (dist_params_given(c, m, d))
		return 1;
	if (d->kind == DIST_TRIANGULAR && (d->mode < d->min || d->mode > d->max))
		bad = blame_key(c, m, "mode", "%s: mode %g must lie within [min, max] = [%g, %g]",
				name, d->mode, d->min, d->max);
	if (d->kind == DIST_LOGNORMAL && !(d->point > 0))
		bad = blame_key(c, m, "point",
				"%s: a lognormal's point must be greater than zero, got %g", name,
				d->point);
	if (d->kind != DIST_UNIFORM && d->kind != DIST_TRIANGULAR)
		return bad;
	if (!(d->min < d->max))
		return blame_key(c, m, "min", "%s: min %g must be below max %g", name, d->min,
				 d->max);
	if (d->point < d->min || d->point > d->max)
		bad = blame_key(c, m, "point", "%s: point %g lies outside its distribution [%g, %g]",
				name, d->point, d->min, d->max);
	return bad;
}

#define DPARAM(m, fl, h) YS_FIELD(struct dist, m, YS_NUM, fl, .help = (h))
static const struct yschema_field dist_fields[] = {
	YS_FIELD(struct dist, unit, YS_STR, 0, .help = "what the value counts"),
	REQ_STR(struct dist, source, "who states the value and its spread, how"),
	DPARAM(point, Y_REQUIRED, "the value point estimates take"),
	YS_KEYED(struct dist, "dist", kind, YS_ENUM, Y_REQUIRED, .names = dist_kind_names,
		 .help = "the distribution's kind"),
	DPARAM(min, 0, "uniform, triangular: lower end; normal: truncation (absent: none)"),
	DPARAM(mode, 0, "triangular: the peak"),
	DPARAM(max, 0, "uniform, triangular: upper end; normal: truncation (absent: none)"),
	DPARAM(mean, 0, "normal: the mean"),
	DPARAM(sd, Y_POSITIVE, "normal: the standard deviation"),
	DPARAM(median, Y_POSITIVE, "lognormal: the median"),
	DPARAM(sigma, Y_POSITIVE, "lognormal: sigma of the log"),
};
static const struct yschema dist_schema = YS_TABLE_CHECKED("DIST", dist_fields, 0, check_dist);

void calib_dist_load(struct dist *d, struct yctx *c, struct ydoc_node *m, const char *name)
{
	struct yctx dc = {c->file, c->diag, &name};
	memset(d, 0, sizeof *d);
	d->min = d->max = d->mode = d->mean = d->sd = d->median = d->sigma = NAN;
	yschema_read(&dc, m, &dist_schema, d);
}

/* assumptions.NAME: its distribution, whose point and bounds of the draws
 * keep the assumption's range (the first that does not is blamed on its
 * own line). */
static void read_assumption(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			    void *obj)
{
	struct dist *d = (struct dist *)((char *)obj + f->off);
	const struct yschema_range *r =
		&asm_ranges[(f->off - offsetof(struct calib, asm_)) / sizeof *d];
	struct ydoc_node *m = NULL;
	size_t before = c->diag->n;

	if (yget_node(c, map, f->key, YDOC_MAP, f->flags, &m) || !m)
		return;
	calib_dist_load(d, c, m, f->key);
	if (c->diag->n > before)
		return;
	int pt = !range_holds(r, d->point), lo = !isnan(d->min) && !range_holds(r, d->min);
	if (pt || lo || (!isnan(d->max) && !range_holds(r, d->max)))
		blame_key(c, m, pt ? "point" : lo ? "min" : "max", "%s: %s %g: must stay %s",
			  f->key, pt ? "point" : lo ? "min" : "max",
			  pt ? d->point : lo ? d->min : d->max, r->says);
}

#define ASM_FIELD_(e, name)                                                                 \
	CUSTOM(struct calib, name, asm_[e], Y_REQUIRED, read_assumption, "an assumption"),
static const struct yschema_field asm_fields[] = {ASM_LIST(ASM_FIELD_)};
const struct yschema calib_asm_schema = YS_TABLE("assumptions", asm_fields, 0);

/* ---------------------------------------------------------------- moe_transfer */

/* families (arch -> family) and memory_kinds (memory -> kind): a mapping of
 * groups, each a list of members, every member in one group only. */
struct grouping {
	const char *many;       /* members: "archs" */
	const char *groups;     /* groups: "families" */
	size_t arr, count;      /* offsets in struct calib of the pairs and their number */
	size_t size;            /* of one pair: member[16], group[24] */
};

_Static_assert(offsetof(struct arch_family, family) == 16 && sizeof(struct arch_family) == 40 &&
		       offsetof(struct mem_kind, kind) == 16 && sizeof(struct mem_kind) == 40,
	       "a grouping's pair is member[16], group[24]");

/* A grouping as the file gives it: group -> its members. */
struct group_text {
	char name[24];
	char member[CALIB_MAX_FAMILIES][16];
	int n;
};
struct groups_text {
	struct group_text g[CALIB_MAX_FAMILIES];
	int n;
};

static const struct yschema_field members_value[] = {
	YS_STRS_OF(struct group_text, NULL, member, n, 0),
};
static const struct yschema members_schema = YS_TABLE("members", members_value, 1);
static const struct yschema_field groups_field = YS_DICT_OF(
	struct groups_text, NULL, g, n, struct group_text, name, &members_schema, Y_REQUIRED);

/* Member j of group gi into the pairs of g: member in two groups or more
 * than the pairs hold is a problem at it (f->key: the grouping's key, m
 * its mapping). */
static int add_member(struct yctx *c, const struct yschema_field *f, const struct grouping *g,
		      void *obj, struct ydoc_node *m, const struct group_text *gt, int j)
{
	struct ydoc_node *it = ydoc_get(m, gt->name)->items[j];
	int *n = (int *)((char *)obj + g->count);
	char *pairs = (char *)obj + g->arr;
	if (*n == CALIB_MAX_FAMILIES) {
		ydiag_add(c->diag, c->file, it->line, it->col, "%s: at most %d %s", f->key,
			  CALIB_MAX_FAMILIES, g->many);
		return 1;
	}
	for (int k = 0; k < *n; k++)
		if (!strcmp(pairs + (size_t)k * g->size, it->str))
			ydiag_add(c->diag, c->file, it->line, it->col, "%s: '%s' is in two %s",
				  f->key, it->str, g->groups);
	snprintf(pairs + (size_t)*n * g->size, 16, "%s", it->str);
	snprintf(pairs + (size_t)*n * g->size + 16, 24, "%s", gt->name);
	(*n)++;
	return 0;
}

/* The grouping under f->key read by its table (group -> members), then
 * turned into the member -> group pairs the lookups go by. */
static void read_grouping(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			  const struct grouping *g, void *obj)
{
	struct groups_text t = {.n = 0};
	struct yschema_field gf = groups_field;
	gf.key = f->key;
	gf.flags = f->flags;
	if (yschema_read_fields(c, map, &(struct yschema)YS_PART(f->key, &gf, 1), &t))
		return;
	for (int i = 0; i < t.n; i++)
		for (int j = 0; j < t.g[i].n; j++)
			if (add_member(c, f, g, obj, ydoc_get(map, f->key), &t.g[i], j))
				return;
}

static void read_families(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			  void *obj)
{
	static const struct grouping g = {"archs", "families",
					  offsetof(struct calib, families),
					  offsetof(struct calib, nfamilies), sizeof(struct arch_family)};
	read_grouping(c, map, f, &g, obj);
}

static void read_kinds(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		       void *obj)
{
	static const struct grouping g = {"memory technologies", "kinds",
					  offsetof(struct calib, kinds),
					  offsetof(struct calib, nkinds), sizeof(struct mem_kind)};
	read_grouping(c, map, f, &g, obj);
}

/* "m8-64" -> [8, 64]; "m65+" -> [65, inf); "m1" -> [1, 1]. Returns 0 or -1. */
static int parse_range(const char *s, double *lo, double *hi)
{
	int a, b, n = 0;
	if (sscanf(s, "m%d-%d%n", &a, &b, &n) == 2 && !s[n] && a >= 1 && b >= a) {
		*lo = a, *hi = b;
		return 0;
	}
	if (sscanf(s, "m%d+%n", &a, &n) == 1 && !s[n] && a >= 1) {
		*lo = a, *hi = INFINITY;
		return 0;
	}
	if (sscanf(s, "m%d%n", &a, &n) == 1 && !s[n] && a >= 1) {
		*lo = *hi = a;
		return 0;
	}
	return -1;
}

/* moe_transfer.ranges, read as texts: whole-token M ranges tiling [1, inf)
 * in order, each parsed into its ends. */
static int check_ranges(struct yctx *c, struct ydoc_node *map, void *obj)
{
	struct calib *cal = obj;
	struct ydoc_node *seq = ydoc_get(map, "ranges");
	double want = 1; /* the next range's first M: after the last one parsed */
	int bad = 0;
	if (cal->nranges < 1)
		return blame_key(c, map, "ranges", "ranges: give 1 to %d M ranges",
				 CALIB_MAX_RANGES);
	for (int r = 0; r < cal->nranges; r++) {
		struct ydoc_node *it = seq->items[r];
		if (parse_range(it->str, &cal->range_lo[r], &cal->range_hi[r])) {
			ydiag_add(c->diag, c->file, it->line, it->col,
				  "ranges: expected an M range like m8-31 or m256+, got '%s'", it->str);
			bad = 1;
			continue;
		}
		if (cal->range_lo[r] != want || (r == cal->nranges - 1 && !isinf(cal->range_hi[r]))) {
			ydiag_add(c->diag, c->file, it->line, it->col,
				  "ranges: they must cover m1 upwards without gaps or overlaps (at %s)",
				  it->str);
			bad = 1;
		}
		want = cal->range_hi[r] + 1;
	}
	return bad;
}

/* moe_transfer.prior: a distribution of a factor, above zero. */
static void read_prior(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		       void *obj)
{
	struct dist *d = &((struct calib *)obj)->xfer_prior;
	struct ydoc_node *m = NULL;
	if (yget_node(c, map, f->key, YDOC_MAP, f->flags, &m) || !m)
		return;
	calib_dist_load(d, c, m, f->key);
	if (!(d->point > 0) || (!isnan(d->min) && !(d->min > 0)))
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "prior: a transfer factor must stay greater than zero");
}

static int check_backtest(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct calib *cal = obj;
	if (cal->xback_m_max >= cal->xback_m_min)
		return 0;
	return blame_key(c, map, "", "backtest_m: max below min");
}

/* moe_transfer.backtest_m (optional; fields of struct calib): the M the
 * nightly's implementation backtest scores. */
static const struct yschema_field backtest_fields[] = {
	YS_KEYED(struct calib, "min", xback_m_min, YS_NUM, REQ_POS, .unit = "tokens",
		 .help = "smallest verify width scored"),
	YS_KEYED(struct calib, "max", xback_m_max, YS_NUM, REQ_POS, .unit = "tokens",
		 .help = "largest verify width scored"),
	NOTE("source", Y_REQUIRED, "who chose them, how"),
};
static const struct yschema backtest_schema =
	YS_TABLE_CHECKED("moe_transfer.backtest_m", backtest_fields, 0, check_backtest);

static const struct yschema_field xfer_fields[] = {
	YS_KEYED(struct calib, "source", xfer_source, YS_STR, Y_REQUIRED,
		 .help = "where the transfer's method comes from"),
	YS_KEYED(struct calib, "class", xfer_class, YS_STR, Y_REQUIRED,
		 .help = "the measured class (measured.yaml) the model's MoE is"),
	YS_KEYED(struct calib, "sigma_floor", xfer_sigma_floor, YS_NUM,
		 Y_REQUIRED | Y_NONNEG | YS_NOSET,
		 .help = "added to every calibrated sigma", .source = "the transfer's source"),
	WHOLE(struct calib, "backtest_m", 0, &backtest_schema,
	      "the verify widths the implementation backtest scores (absent: every M)"),
	CUSTOM(struct calib, "families", families, Y_REQUIRED, read_families,
	       "family: [archs] whose GPUs the transfer fits together"),
	CUSTOM(struct calib, "memory_kinds", kinds, Y_REQUIRED, read_kinds,
	       "kind: [memory technologies] the transfer fits together"),
	YS_STRS_OF(struct calib, "ranges", range_name, nranges, Y_REQUIRED,
		   .help = "M ranges tiling m1 upwards: [m1-7, m8-31, m32+]"),
	CUSTOM(struct calib, "prior", xfer_prior, Y_REQUIRED, read_prior,
	       "the factor when the class has no measured pair"),
};
const struct yschema calib_xfer_schema =
	YS_TABLE_CHECKED("moe_transfer", xfer_fields, 0, check_ranges);

/* ---------------------------------------------------------------- measured */

/* measured.classes.NAME.gpus.GPU.call_us (c->ctx: the class): one time per
 * m of the class, null where not measured. */
static void read_call_us(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			 void *obj)
{
	const struct meas_class *k = c->ctx;
	struct meas_series *s = obj;
	struct ydoc_node *us = NULL;

	if (yget_node(c, map, f->key, YDOC_SEQ, f->flags, &us) || !us)
		return;
	if ((int)us->n != k->nm)
		ydiag_add(c->diag, c->file, us->line, us->col,
			  "call_us: expected %d times (one per m), got %zu", k->nm, us->n);
	for (int j = 0; j < k->nm; j++) {
		s->us[j] = NAN;
		if ((size_t)j < us->n)
			yget_node_num(c, us->items[j], "call_us", Y_POSITIVE | Y_NULLABLE, &s->us[j]);
	}
}

/* A series the file gives is measured: the zeroed item's provenance. */
_Static_assert(PROV_MEASURED == 0, "a series read from measured.yaml is PROV_MEASURED");
static const struct yschema_field series_fields[] = {
	REQ_STR(struct meas_series, source, "who measured it, how"),
	CUSTOM(struct meas_series, "call_us", us, Y_REQUIRED, read_call_us,
	       "one call's time per m of the class, us (null: not measured)"),
};
static const struct yschema series_schema = YS_TABLE("measured.classes.NAME.gpus.GPU",
						     series_fields, 0);

/* measured.classes.NAME.implementation as the file gives it. */
struct impl_text {
	char of[24], engine[16], version[24], layout[16];
	char source[CALIB_SOURCE_LEN];
};

static const struct yschema_field impl_fields[] = {
	REQ_STR(struct impl_text, of, "the kernel class it is one implementation of"),
	REQ_STR(struct impl_text, engine, "the serving engine"),
	REQ_STR(struct impl_text, version, "the engine's version"),
	REQ_STR(struct impl_text, layout, "the parallel layout"),
	REQ_STR(struct impl_text, source, "who measured it, how"),
};
static const struct yschema impl_schema =
	YS_TABLE("measured.classes.NAME.implementation", impl_fields, 0);

/* measured.classes.NAME.implementation (optional): which kernel class the
 * table is one implementation of, and the engine, version and layout (kept
 * as one text). */
static void read_impl(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
		      void *obj)
{
	struct meas_class *k = obj;
	struct impl_text t = {"", "", "", "", ""};
	struct ydoc_node *im = NULL;

	if (yget_node(c, map, f->key, YDOC_MAP, f->flags, &im) || !im)
		return;
	yschema_read(c, im, &impl_schema, &t);
	memcpy(k->impl_of, t.of, sizeof k->impl_of);
	memcpy(k->impl_source, t.source, sizeof k->impl_source);
	snprintf(k->impl, sizeof k->impl, "%s %s %s", t.engine, t.version, t.layout);
}

/* A class's token counts: one at least, increasing. */
static int check_class(struct yctx *c, struct ydoc_node *map, void *obj)
{
	const struct meas_class *k = obj;
	struct ydoc_node *ms = ydoc_get(map, "m");
	int bad = 0;
	if (k->nm < 1)
		return blame_key(c, map, "m", "m: give 1 to %d token counts", CALIB_MAX_MEAS_M);
	for (int j = 1; j < k->nm; j++)
		if (!(k->m[j] > k->m[j - 1])) {
			ydiag_add(c->diag, c->file, ms->items[j]->line, ms->items[j]->col,
				  "m: token counts must increase");
			bad = 1;
		}
	return bad;
}

static const struct yschema_name compute_names[] = {
	{"bf16", 0}, {"fp8", 0}, {"fp4", 0}, {NULL, 0}};
static const struct yschema_field class_fields[] = {
	REQ_STR(struct meas_class, what, "what the class's kernel computes"),
	YS_FIELD(struct meas_class, compute, YS_STR, Y_REQUIRED, .names = compute_names,
		 .help = "the peak its compute part runs at"),
	YS_NUMS_OF(struct meas_class, "m", m, nm, Y_REQUIRED | Y_POSITIVE | Y_INTEGER,
		   .unit = "tokens", .help = "the token counts measured, increasing"),
	CUSTOM(struct meas_class, "implementation", impl, 0, read_impl,
	       "the implementation that measured it (absent: the class's own)"),
	YS_DICT_OF(struct meas_class, "gpus", series, nseries, struct meas_series, gpu,
		   &series_schema, Y_REQUIRED, .help = "GPU -> {call_us, source}"),
};
static const struct yschema class_schema =
	YS_TABLE_CHECKED("measured.classes.NAME", class_fields, 0, check_class);

static const struct yschema_field measured_fields[] = {
	REQ_STR(struct measured, source, "who measured the tables, how"),
	YS_DICT_OF(struct measured, "classes", cls, nclasses, struct meas_class, name,
		   &class_schema, Y_REQUIRED, .help = "kernel class -> its times on each GPU"),
};
const struct yschema calib_measured_schema = YS_TABLE("measured", measured_fields, 0);

/* ---------------------------------------------------------------- allreduce */

/* allreduce.latency_us.GPU.nccl / .oneshot (c->ctx: the all-reduce
 * section): one latency per message size, each > 0; the implementation's
 * the step takes. A GPU `like` another has neither: they are unknown keys. */
static void read_latencies(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			   void *obj)
{
	const struct allreduce *ar = c->ctx;
	struct ar_gpu *g = obj;
	struct ydoc_node *seq = NULL;
	double us[CALIB_AR_SIZES] = {0};

	if (g->like[0] || yget_node(c, map, f->key, YDOC_SEQ, f->flags, &seq) || !seq)
		return;
	if ((int)seq->n != ar->nsizes) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "%s: expected %d latencies (one per "
			  "size in bytes), got %zu", f->key, ar->nsizes, seq->n);
		return;
	}
	for (int i = 0; i < ar->nsizes; i++)
		yget_node_num(c, seq->items[i], f->key, Y_POSITIVE, &us[i]);
	if (!strcmp(ar->impl, f->key))
		memcpy(g->us, us, sizeof g->us);
}

static const struct yschema_field ar_gpu_fields[] = {
	REQ_STR(struct ar_gpu, source, "who measured it, how"),
	YS_FIELD(struct ar_gpu, pcie, YS_BOOL, 0,
		 .help = "times the allreduce_pcie_factor assumption"),
	YS_FIELD(struct ar_gpu, like, YS_STR, 0,
		 .help = "the GPU whose figures these are (absent: its own)"),
	CUSTOM(struct ar_gpu, "nccl", us, Y_REQUIRED, read_latencies, "NCCL's latency per size, us"),
	CUSTOM(struct ar_gpu, "oneshot", us, Y_REQUIRED, read_latencies,
	       "the one-shot kernel's latency per size, us"),
};
static const struct yschema ar_gpu_schema = YS_TABLE("allreduce.latency_us.GPU",
						     ar_gpu_fields, 0);

static const struct yschema_field ar_gpus_fields[] = {
	YS_DICT_OF(struct allreduce, "latency_us", per_gpu, n, struct ar_gpu, gpu, &ar_gpu_schema,
		   Y_REQUIRED, .help = "GPU -> {nccl, oneshot, pcie, like, source}"),
};
static const struct yschema ar_gpus_schema = YS_TABLE("allreduce", ar_gpus_fields, 0);

/* allreduce.latency_us: GPU -> its latencies (ar_gpus_schema), and where
 * each GPU's key was read: the catalog's problems with the table (calib.c)
 * are told there, also when the section has problems of its own. The
 * items are the keys read without a problem, in the file's order. */
static void read_ar_gpus(struct yctx *c, struct ydoc_node *map, const struct yschema_field *f,
			 void *obj)
{
	struct allreduce *ar = obj;
	struct ydoc_node *lat = ydoc_get(map, f->key);
	int k = 0;

	yschema_read_fields(c, map, &ar_gpus_schema, ar);
	for (size_t i = 0; lat && lat->kind == YDOC_MAP && i < lat->n && k < ar->n; i++)
		if (!strcmp(lat->keys[i]->str, ar->per_gpu[k].gpu)) {
			ar->per_gpu[k].line = lat->keys[i]->line;
			ar->per_gpu[k++].col = lat->keys[i]->col;
		}
}

/* The message sizes: one at least, increasing (their log2 kept for the
 * interpolation). */
static int check_sizes(struct yctx *c, struct ydoc_node *map, void *obj)
{
	struct allreduce *ar = obj;
	struct ydoc_node *bytes = ydoc_get(map, "bytes");
	int bad = 0;
	if (ar->nsizes < 1)
		return blame_key(c, map, "bytes", "bytes: give 1 to %d message sizes",
				 CALIB_AR_SIZES);
	for (int i = 0; i < ar->nsizes; i++) {
		ar->log2_bytes[i] = log2(ar->bytes[i]);
		if (i && !(ar->bytes[i] > ar->bytes[i - 1])) {
			ydiag_add(c->diag, c->file, bytes->items[i]->line, bytes->items[i]->col,
				  "bytes: sizes must increase");
			bad = 1;
		}
	}
	return bad;
}

static const struct yschema_name ar_impl_names[] = {{"nccl", 0}, {"oneshot", 1}, {NULL, 0}};
static const struct yschema_field ar_fields[] = {
	REQ_STR(struct allreduce, source, "who measured the latencies, how"),
	NUM(struct allreduce, per_layer, REQ_INT, NULL, "all-reduces per layer",
	    "the model's layer structure"),
	NUM(struct allreduce, gpus, REQ_INT, "GPUs", "ranks (the ring's 2(n-1)/n)",
	    "the latency measurement"),
	YS_FIELD(struct allreduce, impl, YS_STR, Y_REQUIRED, .names = ar_impl_names,
		 .help = "which implementation's latencies the step takes"),
	YS_NUMS_OF(struct allreduce, "bytes", bytes, nsizes, Y_REQUIRED | Y_POSITIVE,
		   .unit = "bytes", .help = "the message sizes measured, increasing"),
	CUSTOM(struct allreduce, "latency_us", per_gpu, Y_REQUIRED, read_ar_gpus,
	       "GPU -> {nccl, oneshot, pcie, like, source}"),
};
const struct yschema calib_ar_schema = YS_TABLE_CHECKED("allreduce", ar_fields, 0, check_sizes);
