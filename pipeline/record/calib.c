/* calib.c - strict loading and command-line overrides of the calibration. */
#include "calib.h"

#include "csv.h"
#include "err.h"
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A numeric field of a struct, for loading and for --set. */
struct field {
	const char *key;
	size_t off;
	unsigned flags;
};

#define F(type, name, flags) {#name, offsetof(type, name), flags}
#define REQ_POS (Y_REQUIRED | Y_POSITIVE)
#define REQ_INT (Y_REQUIRED | Y_POSITIVE | Y_INTEGER)

static const struct field gpu_fields[] = {
	F(struct gpu, mem_gb, REQ_POS),      F(struct gpu, bw_tbps, REQ_POS),
	F(struct gpu, bf16_tflops, REQ_POS), F(struct gpu, fp8_tflops, REQ_POS),
	F(struct gpu, fp4_tflops, Y_POSITIVE), F(struct gpu, link_gbps, Y_POSITIVE),
};

static const struct field geometry_fields[] = {
	F(struct geometry, layers, REQ_INT),
	F(struct geometry, dense_layers, Y_REQUIRED | Y_NONNEG | Y_INTEGER),
	F(struct geometry, hidden, REQ_INT),
	F(struct geometry, dense_intermediate, REQ_INT),
	F(struct geometry, experts, REQ_INT),
	F(struct geometry, experts_per_token, REQ_INT),
	F(struct geometry, shared_experts, Y_REQUIRED | Y_NONNEG | Y_INTEGER),
	F(struct geometry, moe_intermediate, REQ_INT),
	F(struct geometry, attn_heads, REQ_INT),
	F(struct geometry, q_lora_rank, REQ_INT),
	F(struct geometry, kv_lora_rank, REQ_INT),
	F(struct geometry, qk_nope_dim, REQ_INT),
	F(struct geometry, qk_rope_dim, REQ_INT),
	F(struct geometry, v_head_dim, REQ_INT),
	F(struct geometry, vocab, REQ_INT),
	F(struct geometry, context_tokens, REQ_INT),
	F(struct geometry, expert_weight_bits, REQ_INT),
	F(struct geometry, expert_group_size, REQ_INT),
	F(struct geometry, expert_scale_bytes, REQ_INT),
	F(struct geometry, dense_weight_bytes, REQ_INT),
	F(struct geometry, kv_cache_bytes, REQ_INT),
	F(struct geometry, tp, REQ_INT),
};

static const struct field drafter_fields[] = {
	F(struct drafter, block, REQ_INT),  F(struct drafter, layers, REQ_INT),
	F(struct drafter, hidden, REQ_INT), F(struct drafter, q_heads, REQ_INT),
	F(struct drafter, kv_heads, REQ_INT), F(struct drafter, intermediate, REQ_INT),
};

static const struct field anchor_fields[] = {
	F(struct anchor, block, REQ_INT),
	F(struct anchor, budget, REQ_INT),
	F(struct anchor, concurrency, REQ_INT),
	F(struct anchor, tok_s, Y_POSITIVE),
	F(struct anchor, accept, Y_POSITIVE),
	F(struct anchor, step_ms, Y_POSITIVE),
	F(struct anchor, error_pct, Y_POSITIVE),
};

#define NFIELDS(a) (sizeof(a) / sizeof *(a))

static const char *const asm_names[ASM_COUNT] = {
	[ASM_NATIVE_CUT] = "native_cut",
	[ASM_MOE_TRANSFER] = "moe_transfer",
	[ASM_SHARE_ATTN] = "share_attn",
	[ASM_SHARE_DRAFT] = "share_draft",
	[ASM_SHARE_TREE] = "share_tree",
	[ASM_SHARE_OVERHEAD] = "share_overhead",
	[ASM_TREE_SCALE_FRAC] = "tree_scale_frac",
	[ASM_MOE_COMPUTE_EFF] = "moe_compute_eff",
	[ASM_ALLREDUCE_PCIE] = "allreduce_pcie_factor",
	[ASM_NATIVE_TREE_US] = "native_tree_us",
	[ASM_ANCHOR_CONTEXT] = "anchor_context",
	[ASM_ATTN_CTX_EFF] = "attn_ctx_eff",
	[ASM_ALLREDUCE_IMPL] = "allreduce_impl",
};

/* The range a value keeps, whether the calibration's YAML or --set gives it:
 * lo and hi, each end open or closed; says completes "must be ...". */
struct range {
	double lo, hi;
	unsigned char lo_open, hi_open;
	const char *says;
};

#define RANGE_FRACTION {0, 1, 0, 0, "within [0, 1]"}
#define RANGE_POSITIVE {0, INFINITY, 1, 0, "greater than zero"}

static const struct range asm_ranges[ASM_COUNT] = {
	[ASM_NATIVE_CUT] = RANGE_FRACTION,
	[ASM_MOE_TRANSFER] = RANGE_POSITIVE,
	[ASM_SHARE_ATTN] = RANGE_FRACTION,
	[ASM_SHARE_DRAFT] = RANGE_FRACTION,
	[ASM_SHARE_TREE] = RANGE_FRACTION,
	[ASM_SHARE_OVERHEAD] = RANGE_FRACTION,
	[ASM_TREE_SCALE_FRAC] = RANGE_FRACTION,
	[ASM_MOE_COMPUTE_EFF] = {0, 1, 1, 0, "within (0, 1]"},
	[ASM_ALLREDUCE_PCIE] = RANGE_POSITIVE,
	[ASM_NATIVE_TREE_US] = RANGE_POSITIVE,
	[ASM_ANCHOR_CONTEXT] = RANGE_POSITIVE,
	[ASM_ATTN_CTX_EFF] = {0, 1, 1, 0, "within (0, 1]"},
	[ASM_ALLREDUCE_IMPL] = RANGE_POSITIVE,
};

static const struct range moe_param_ranges[MOE_P_COUNT] = {
	[MOE_P_EFFICIENCY] = {0, 1, 1, 0, "within (0, 1]"},
	[MOE_P_OVERLAP] = {0, 1, 0, 1, "within [0, 1)"},
	[MOE_P_FIXED_US] = {0, INFINITY, 0, 0, "zero or more"},
};

/* Whether v lies in r (NaN never does). */
static int range_holds(const struct range *r, double v)
{
	return (r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi);
}

static const char *const dist_names[] = {"fixed", "uniform", "triangular", "normal", "lognormal"};

const char *calib_assumption_name(enum assumption a)
{
	return asm_names[a];
}

const char *calib_dist_kind_name(enum dist_kind k)
{
	return dist_names[k];
}

static const char *const prov_names[] = {"measured", "calibration", "assumed",
					  "overridden", "tonight",     "derived"};

const char *calib_provenance_name(enum provenance p)
{
	return prov_names[p];
}

int calib_provenance_parse(const char *s, enum provenance *out)
{
	for (int i = 0; i < (int)(sizeof prov_names / sizeof *prov_names); i++)
		if (!strcmp(s, prov_names[i])) {
			*out = (enum provenance)i;
			return 0;
		}
	if (!strcmp(s, "override")) { /* its name in projection.yaml files before */
		*out = PROV_OVERRIDE;
		return 0;
	}
	return -1;
}

static const char *const curve_names[] = {"linear", "physical"};
static const char *const moe_param_names[MOE_P_COUNT] = {"efficiency", "overlap", "fixed_us"};

const char *calib_moe_curve_name(enum moe_curve_kind k)
{
	return curve_names[k];
}

int calib_moe_curve_parse(const char *s, enum moe_curve_kind *out)
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(s, curve_names[i])) {
			*out = (enum moe_curve_kind)i;
			return 0;
		}
	return -1;
}

const char *calib_moe_param_name(enum moe_param p)
{
	return moe_param_names[p];
}

/* ---------------------------------------------------------------- helpers */

static void load_fields(struct yctx *c, struct ydoc_node *map, void *obj,
			const struct field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double *dst = (double *)((char *)obj + f[i].off);
		*dst = NAN;
		yget_num(c, map, f[i].key, f[i].flags, dst);
	}
}

static int map_expect(struct yctx *c, struct ydoc_node *n, const char *what)
{
	return yget_expect(c, n, YDOC_MAP, what);
}

/* Records a problem at the value of key in map (at map when key is absent):
 * a value out of range is blamed on its own line and column. */
static void __attribute__((format(printf, 4, 5)))
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
}

/* ---------------------------------------------------------------- sections */

static void load_gpus(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "gpus"))
		return;
	cal->gpus = calloc(sec->n ? sec->n : 1, sizeof *cal->gpus);
	if (!cal->gpus) {
		ydiag_add(c->diag, c->file, 0, 0, "out of memory");
		return;
	}
	for (size_t i = 0; i < sec->n; i++) {
		struct gpu *g = &cal->gpus[cal->ngpus];
		struct ydoc_node *m = sec->items[i];
		sec->used[i] = 1;
		if (map_expect(c, m, sec->keys[i]->str))
			continue;
		snprintf(g->id, sizeof g->id, "%s", sec->keys[i]->str);
		yget_strcpy(c, m, "name", Y_REQUIRED, g->name, sizeof g->name);
		yget_strcpy(c, m, "arch", Y_REQUIRED, g->arch, sizeof g->arch);
		yget_strcpy(c, m, "memory", Y_REQUIRED, g->memory, sizeof g->memory);
		yget_strcpy(c, m, "link", Y_REQUIRED, g->link, sizeof g->link);
		yget_strcpy(c, m, "source", Y_REQUIRED, g->source, sizeof g->source);
		load_fields(c, m, g, gpu_fields, NFIELDS(gpu_fields));
		yget_check_unknown(c, m);
		cal->ngpus++;
	}
}

static void load_model(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "model"))
		return;
	yget_strcpy(c, sec, "name", Y_REQUIRED, cal->model.name, sizeof cal->model.name);
	yget_strcpy(c, sec, "source", Y_REQUIRED, cal->model.source, sizeof cal->model.source);
	load_fields(c, sec, &cal->model, geometry_fields, NFIELDS(geometry_fields));
	yget_check_unknown(c, sec);
}

static void load_drafter(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "drafter"))
		return;
	yget_strcpy(c, sec, "name", Y_REQUIRED, cal->drafter.name, sizeof cal->drafter.name);
	yget_strcpy(c, sec, "source", Y_REQUIRED, cal->drafter.source, sizeof cal->drafter.source);
	load_fields(c, sec, &cal->drafter, drafter_fields, NFIELDS(drafter_fields));
	yget_check_unknown(c, sec);
}

static void load_anchor(struct anchor *a, struct yctx *c, struct ydoc_node *m, const char *name)
{
	const char *pipe = NULL;
	if (map_expect(c, m, name))
		return;
	yget_strcpy(c, m, "gpu", Y_REQUIRED, a->gpu, sizeof a->gpu);
	yget_strcpy(c, m, "source", Y_REQUIRED, a->source, sizeof a->source);
	if (!yget_str(c, m, "pipeline", Y_REQUIRED, &pipe) && pipe &&
	    tmpl_pipeline_parse(pipe, &a->pipeline)) {
		struct ydoc_node *n = ydoc_get(m, "pipeline");
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "pipeline: expected sglang or native, got '%s'", pipe);
	}
	load_fields(c, m, a, anchor_fields, NFIELDS(anchor_fields));
	const char *kind = NULL;
	if (!yget_str(c, m, "kind", 0, &kind) && kind) {
		a->estimate = !strcmp(kind, "estimate");
		if (!a->estimate && strcmp(kind, "measurement")) {
			struct ydoc_node *n = ydoc_get(m, "kind");
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "kind: expected measurement or estimate, got '%s'", kind);
		}
	}
	yget_strcpy(c, m, "error_source", isnan(a->error_pct) ? 0 : Y_REQUIRED, a->error_source,
		    sizeof a->error_source);
	struct ydoc_node *gpu = ydoc_get(m, "gpu"), *fig = ydoc_get(m, "tok_s");
	if (!fig)
		fig = ydoc_get(m, "step_ms");
	a->gpu_line = gpu ? gpu->line : m->line;
	a->gpu_col = gpu ? gpu->col : m->col;
	a->step_line = fig ? fig->line : m->line;
	a->step_col = fig ? fig->col : m->col;
	int rate = !isnan(a->tok_s) || !isnan(a->accept), step = !isnan(a->step_ms);
	if (rate == step || (rate && (isnan(a->tok_s) || isnan(a->accept))))
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "%s: give either tok_s with accept, or step_ms", name);
	else if (rate)
		a->step_ms = a->concurrency * a->accept / a->tok_s * 1000.0;
	yget_check_unknown(c, m);
}

static void load_anchors(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct ydoc_node *n;
	if (map_expect(c, sec, "anchors"))
		return;
	if (!yget_node(c, sec, "sglang_b8", YDOC_MAP, Y_REQUIRED, &n) && n)
		load_anchor(&cal->sglang_b8, c, n, "sglang_b8");
	if (!yget_node(c, sec, "sglang_b16", YDOC_MAP, Y_REQUIRED, &n) && n)
		load_anchor(&cal->sglang_b16, c, n, "sglang_b16");
	cal->sglang_max_budget = NAN;
	if (!yget_node(c, sec, "sglang_limits", YDOC_MAP, Y_REQUIRED, &n) && n) {
		yget_num(c, n, "max_budget", REQ_INT, &cal->sglang_max_budget);
		yget_strcpy(c, n, "source", Y_REQUIRED, cal->sglang_limit_source,
			 sizeof cal->sglang_limit_source);
		yget_check_unknown(c, n);
	}
	yget_check_unknown(c, sec);
}

static int cmp_point(const void *a, const void *b)
{
	double x = ((const struct moe_point *)a)->m, y = ((const struct moe_point *)b)->m;
	return (x > y) - (x < y);
}

/* moe_reference.physical.mix_forms_rms_pct (optional): {value, source}. */
static void load_mix_rms(struct moe_physical *ph, struct yctx *c, struct ydoc_node *sec)
{
	struct ydoc_node *m = NULL;
	char src[CALIB_SOURCE_LEN];
	ph->mix_rms_pct = NAN;
	if (yget_node(c, sec, "mix_forms_rms_pct", YDOC_MAP, 0, &m) || !m)
		return;
	yget_num(c, m, "value", Y_REQUIRED | Y_POSITIVE, &ph->mix_rms_pct);
	yget_strcpy(c, m, "source", Y_REQUIRED, src, sizeof src);
	yget_check_unknown(c, m);
}

/* moe_reference.physical: start or held values and the fit's priority list. */
static void load_physical(struct moe_physical *ph, struct yctx *c, struct ydoc_node *sec)
{
	struct ydoc_node *fit = NULL;

	for (int p = 0; p < MOE_P_COUNT; p++) {
		struct ydoc_node *m = NULL;
		ph->value[p] = NAN;
		if (yget_node(c, sec, moe_param_names[p], YDOC_MAP, Y_REQUIRED, &m) || !m)
			continue;
		yget_num(c, m, "value", Y_REQUIRED, &ph->value[p]);
		yget_strcpy(c, m, "source", Y_REQUIRED, ph->source[p], sizeof ph->source[p]);
		yget_check_unknown(c, m);
		if (!isnan(ph->value[p]) && !range_holds(&moe_param_ranges[p], ph->value[p]))
			blame_key(c, m, "value", "%s: must be %s, got %g", moe_param_names[p],
				  moe_param_ranges[p].says, ph->value[p]);
	}
	load_mix_rms(ph, c, sec);
	if (yget_node(c, sec, "fit", YDOC_SEQ, Y_REQUIRED, &fit) || !fit)
		return;
	for (size_t i = 0; i < fit->n; i++) {
		struct ydoc_node *it = fit->items[i];
		int k = -1;
		if (yget_expect(c, it, YDOC_SCALAR, "fit"))
			continue;
		for (int p = 0; p < MOE_P_COUNT; p++)
			if (!strcmp(it->str, moe_param_names[p]))
				k = p;
		for (int j = 0; k >= 0 && j < ph->nfit; j++)
			if (ph->fit[j] == (enum moe_param)k)
				k = -2;
		if (k < 0)
			ydiag_add(c->diag, c->file, it->line, it->col,
				  k == -2 ? "fit: '%s' given twice"
					  : "fit: expected efficiency, overlap or fixed_us, got '%s'",
				  it->str);
		else
			ph->fit[ph->nfit++] = (enum moe_param)k;
	}
}

static void load_moe_reference(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct moe_reference *r = &cal->moe_ref;
	struct ydoc_node *pts = NULL, *phys = NULL;
	const char *curve = NULL, *note = NULL;

	if (map_expect(c, sec, "moe_reference"))
		return;
	r->prov = PROV_MEASURED;
	yget_strcpy(c, sec, "gpu", Y_REQUIRED, r->gpu, sizeof r->gpu);
	{
		struct ydoc_node *g = ydoc_get(sec, "gpu");
		r->gpu_line = g ? g->line : sec->line;
		r->gpu_col = g ? g->col : sec->col;
	}
	yget_strcpy(c, sec, "source", Y_REQUIRED, r->source, sizeof r->source);
	yget_num(c, sec, "tp", REQ_INT, &r->tp);
	yget_str(c, sec, "efficiency_note", 0, &note);
	if (!yget_str(c, sec, "curve", Y_REQUIRED, &curve) && curve &&
	    calib_moe_curve_parse(curve, &r->curve)) {
		struct ydoc_node *n = ydoc_get(sec, "curve");
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "curve: expected linear or physical, got '%s'", curve);
	}
	r->floor_us = NAN;
	{
		struct ydoc_node *fl = NULL;
		if (!yget_node(c, sec, "floor_us", YDOC_MAP, 0, &fl) && fl) {
			yget_num(c, fl, "value", Y_REQUIRED | Y_NONNEG, &r->floor_us);
			yget_strcpy(c, fl, "source", Y_REQUIRED, r->floor_source,
				    sizeof r->floor_source);
			yget_check_unknown(c, fl);
		}
	}
	if (!yget_node(c, sec, "physical", YDOC_MAP, Y_REQUIRED, &phys) && phys) {
		load_physical(&r->phys, c, phys);
		yget_check_unknown(c, phys);
	}
	if (!yget_node(c, sec, "points", YDOC_SEQ, Y_REQUIRED, &pts) && pts) {
		if (pts->n < 2 || pts->n > CALIB_MAX_MOE_POINTS)
			ydiag_add(c->diag, c->file, pts->line, pts->col,
				  "points: need 2 to %d points, got %zu", CALIB_MAX_MOE_POINTS,
				  pts->n);
		for (size_t i = 0; i < pts->n && r->npoints < CALIB_MAX_MOE_POINTS; i++) {
			struct moe_point *p = &r->points[r->npoints];
			struct ydoc_node *m = pts->items[i];
			if (map_expect(c, m, "point"))
				continue;
			yget_num(c, m, "m", REQ_INT, &p->m);
			yget_num(c, m, "step_ms", REQ_POS, &p->step_ms);
			yget_strcpy(c, m, "source", Y_REQUIRED, p->source, sizeof p->source);
			yget_check_unknown(c, m);
			for (int j = 0; j < r->npoints; j++)
				if (r->points[j].m == p->m)
					ydiag_add(c->diag, c->file, m->line, m->col,
						  "points: m=%g given twice", p->m);
			r->npoints++;
		}
		qsort(r->points, (size_t)r->npoints, sizeof *r->points, cmp_point);
	}
	yget_check_unknown(c, sec);
}

static void dist_check_point(struct yctx *c, struct ydoc_node *m, const char *name,
			     const struct dist *d, double lo, double hi)
{
	struct ydoc_node *p = ydoc_get(m, "point");
	if (p && (d->point < lo || d->point > hi))
		ydiag_add(c->diag, c->file, p->line, p->col,
			  "%s: point %g lies outside its distribution [%g, %g]", name, d->point, lo,
			  hi);
}

static void load_dist(struct dist *d, struct yctx *c, struct ydoc_node *m, const char *name)
{
	const char *kind = NULL;
	int k = -1;

	memset(d, 0, sizeof *d);
	d->min = d->max = d->mode = d->mean = d->sd = d->median = d->sigma = NAN;
	yget_strcpy(c, m, "unit", 0, d->unit, sizeof d->unit);
	yget_strcpy(c, m, "source", Y_REQUIRED, d->source, sizeof d->source);
	yget_num(c, m, "point", Y_REQUIRED, &d->point);
	if (!yget_str(c, m, "dist", Y_REQUIRED, &kind) && kind) {
		for (int i = 0; i < 5; i++)
			if (!strcmp(kind, dist_names[i]))
				k = i;
		if (k < 0) {
			struct ydoc_node *n = ydoc_get(m, "dist");
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "dist: expected fixed, uniform, triangular, normal or lognormal, got '%s'",
				  kind);
		}
	}
	switch (k) {
	case DIST_FIXED:
		break;
	case DIST_UNIFORM:
		yget_num(c, m, "min", Y_REQUIRED, &d->min);
		yget_num(c, m, "max", Y_REQUIRED, &d->max);
		break;
	case DIST_TRIANGULAR:
		yget_num(c, m, "min", Y_REQUIRED, &d->min);
		yget_num(c, m, "mode", Y_REQUIRED, &d->mode);
		yget_num(c, m, "max", Y_REQUIRED, &d->max);
		if (d->mode < d->min || d->mode > d->max)
			blame_key(c, m, "mode", "%s: mode %g must lie within [min, max] = [%g, %g]",
				  name, d->mode, d->min, d->max);
		break;
	case DIST_NORMAL:
		yget_num(c, m, "mean", Y_REQUIRED, &d->mean);
		yget_num(c, m, "sd", REQ_POS, &d->sd);
		yget_num(c, m, "min", 0, &d->min);
		yget_num(c, m, "max", 0, &d->max);
		break;
	case DIST_LOGNORMAL:
		yget_num(c, m, "median", REQ_POS, &d->median);
		yget_num(c, m, "sigma", REQ_POS, &d->sigma);
		if (!(d->point > 0))
			blame_key(c, m, "point",
				  "%s: a lognormal's point must be greater than zero, got %g", name,
				  d->point);
		break;
	}
	if (k >= 0)
		d->kind = (enum dist_kind)k;
	if ((k == DIST_UNIFORM || k == DIST_TRIANGULAR) && !isnan(d->min) && !isnan(d->max)) {
		if (!(d->min < d->max))
			blame_key(c, m, "min", "%s: min %g must be below max %g", name, d->min,
				  d->max);
		else
			dist_check_point(c, m, name, d, d->min, d->max);
	}
	yget_check_unknown(c, m);
}

void calib_dist_load(struct dist *d, struct yctx *c, struct ydoc_node *m, const char *name)
{
	load_dist(d, c, m, name);
}

static void load_assumptions(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "assumptions"))
		return;
	for (int a = 0; a < ASM_COUNT; a++) {
		struct ydoc_node *m;
		if (!yget_node(c, sec, asm_names[a], YDOC_MAP, Y_REQUIRED, &m) && m)
			load_dist(&cal->asm_[a], c, m, asm_names[a]);
	}
	yget_check_unknown(c, sec);
	/* the point and the bounds of the draws keep the assumption's range; the
	 * first that does not is blamed on its own line */
	for (int a = 0; a < ASM_COUNT; a++) {
		const struct dist *d = &cal->asm_[a];
		const struct range *r = &asm_ranges[a];
		struct ydoc_node *m = ydoc_get(sec, asm_names[a]);
		int pt = !range_holds(r, d->point), lo = !isnan(d->min) && !range_holds(r, d->min);
		if (m && (pt || lo || (!isnan(d->max) && !range_holds(r, d->max))))
			blame_key(c, m, pt ? "point" : lo ? "min" : "max", "%s: %s %g: must stay %s",
				  asm_names[a], pt ? "point" : lo ? "min" : "max",
				  pt ? d->point : lo ? d->min : d->max, r->says);
	}
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

static void load_families(struct calib *cal, struct yctx *c, struct ydoc_node *fam)
{
	for (size_t i = 0; i < fam->n; i++) {
		struct ydoc_node *seq = fam->items[i];
		fam->used[i] = 1;
		if (yget_expect(c, seq, YDOC_SEQ, fam->keys[i]->str))
			continue;
		for (size_t j = 0; j < seq->n; j++) {
			struct arch_family *f = &cal->families[cal->nfamilies];
			if (yget_expect(c, seq->items[j], YDOC_SCALAR, "arch"))
				continue;
			if (cal->nfamilies == CALIB_MAX_FAMILIES) {
				ydiag_add(c->diag, c->file, seq->line, seq->col,
					  "families: at most %d archs", CALIB_MAX_FAMILIES);
				return;
			}
			for (int k = 0; k < cal->nfamilies; k++)
				if (!strcmp(cal->families[k].arch, seq->items[j]->str))
					ydiag_add(c->diag, c->file, seq->items[j]->line,
						  seq->items[j]->col, "families: '%s' is in two families",
						  seq->items[j]->str);
			snprintf(f->arch, sizeof f->arch, "%s", seq->items[j]->str);
			snprintf(f->family, sizeof f->family, "%s", fam->keys[i]->str);
			cal->nfamilies++;
		}
	}
}

/* moe_transfer.memory_kinds: kind -> [memory technologies]. */
static void load_kinds(struct calib *cal, struct yctx *c, struct ydoc_node *map)
{
	for (size_t i = 0; i < map->n; i++) {
		struct ydoc_node *seq = map->items[i];
		map->used[i] = 1;
		if (yget_expect(c, seq, YDOC_SEQ, map->keys[i]->str))
			continue;
		for (size_t j = 0; j < seq->n; j++) {
			struct mem_kind *k = &cal->kinds[cal->nkinds];
			if (yget_expect(c, seq->items[j], YDOC_SCALAR, "memory"))
				continue;
			if (cal->nkinds == CALIB_MAX_FAMILIES) {
				ydiag_add(c->diag, c->file, seq->line, seq->col,
					  "memory_kinds: at most %d memory technologies", CALIB_MAX_FAMILIES);
				return;
			}
			for (int q = 0; q < cal->nkinds; q++)
				if (!strcmp(cal->kinds[q].memory, seq->items[j]->str))
					ydiag_add(c->diag, c->file, seq->items[j]->line,
						  seq->items[j]->col, "memory_kinds: '%s' is in two kinds",
						  seq->items[j]->str);
			snprintf(k->memory, sizeof k->memory, "%s", seq->items[j]->str);
			snprintf(k->kind, sizeof k->kind, "%s", map->keys[i]->str);
			cal->nkinds++;
		}
	}
}

/* moe_transfer.backtest_m (optional): {min, max, source}, the M the
 * nightly's implementation backtest scores. */
static void load_backtest_m(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct ydoc_node *w = NULL;
	char src[CALIB_SOURCE_LEN];
	cal->xback_m_min = cal->xback_m_max = NAN;
	if (yget_node(c, sec, "backtest_m", YDOC_MAP, 0, &w) || !w)
		return;
	yget_num(c, w, "min", Y_REQUIRED | Y_POSITIVE, &cal->xback_m_min);
	yget_num(c, w, "max", Y_REQUIRED | Y_POSITIVE, &cal->xback_m_max);
	yget_strcpy(c, w, "source", Y_REQUIRED, src, sizeof src);
	if (!(cal->xback_m_max >= cal->xback_m_min))
		ydiag_add(c->diag, c->file, w->line, w->col, "backtest_m: max below min");
	yget_check_unknown(c, w);
}

/* moe_transfer.ranges: whole-token M ranges tiling [1, inf) in order. */
static void load_ranges(struct calib *cal, struct yctx *c, struct ydoc_node *seq)
{
	if (seq->n < 1 || seq->n > CALIB_MAX_RANGES) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "ranges: give 1 to %d M ranges",
			  CALIB_MAX_RANGES);
		return;
	}
	for (size_t i = 0; i < seq->n; i++) {
		struct ydoc_node *it = seq->items[i];
		int r = cal->nranges;
		double want = r ? cal->range_hi[r - 1] + 1 : 1;
		if (yget_expect(c, it, YDOC_SCALAR, "ranges"))
			continue;
		if (parse_range(it->str, &cal->range_lo[r], &cal->range_hi[r])) {
			ydiag_add(c->diag, c->file, it->line, it->col,
				  "ranges: expected an M range like m8-31 or m256+, got '%s'", it->str);
			continue;
		}
		if (cal->range_lo[r] != want || (i == seq->n - 1 && !isinf(cal->range_hi[r])))
			ydiag_add(c->diag, c->file, it->line, it->col,
				  "ranges: they must cover m1 upwards without gaps or overlaps (at %s)",
				  it->str);
		snprintf(cal->range_name[r], sizeof cal->range_name[r], "%s", it->str);
		cal->nranges++;
	}
}

static void load_moe_transfer(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct ydoc_node *fam = NULL, *rng = NULL, *prior = NULL, *kinds = NULL;

	if (map_expect(c, sec, "moe_transfer"))
		return;
	yget_strcpy(c, sec, "source", Y_REQUIRED, cal->xfer_source, sizeof cal->xfer_source);
	yget_strcpy(c, sec, "class", Y_REQUIRED, cal->xfer_class, sizeof cal->xfer_class);
	yget_num(c, sec, "sigma_floor", Y_REQUIRED | Y_NONNEG, &cal->xfer_sigma_floor);
	load_backtest_m(cal, c, sec);
	if (!yget_node(c, sec, "families", YDOC_MAP, Y_REQUIRED, &fam) && fam)
		load_families(cal, c, fam);
	if (!yget_node(c, sec, "memory_kinds", YDOC_MAP, Y_REQUIRED, &kinds) && kinds)
		load_kinds(cal, c, kinds);
	if (!yget_node(c, sec, "ranges", YDOC_SEQ, Y_REQUIRED, &rng) && rng)
		load_ranges(cal, c, rng);
	if (!yget_node(c, sec, "prior", YDOC_MAP, Y_REQUIRED, &prior) && prior) {
		load_dist(&cal->xfer_prior, c, prior, "prior");
		if (!(cal->xfer_prior.point > 0) ||
		    (!isnan(cal->xfer_prior.min) && !(cal->xfer_prior.min > 0)))
			ydiag_add(c->diag, c->file, prior->line, prior->col,
				  "prior: a transfer factor must stay greater than zero");
	}
	yget_check_unknown(c, sec);
}

/* measured.classes.NAME.gpus.GPU: call_us, one per m of the class. */
static void load_series(struct meas_class *k, struct yctx *c, struct ydoc_node *gpus)
{
	for (size_t i = 0; i < gpus->n; i++) {
		struct meas_series *s = &k->series[k->nseries];
		struct ydoc_node *m = gpus->items[i], *us = NULL;
		gpus->used[i] = 1;
		if (map_expect(c, m, gpus->keys[i]->str))
			continue;
		if (k->nseries == CALIB_MAX_MEAS_GPUS) {
			ydiag_add(c->diag, c->file, m->line, m->col, "gpus: at most %d",
				  CALIB_MAX_MEAS_GPUS);
			return;
		}
		snprintf(s->gpu, sizeof s->gpu, "%s", gpus->keys[i]->str);
		s->prov = PROV_MEASURED;
		yget_strcpy(c, m, "source", Y_REQUIRED, s->source, sizeof s->source);
		if (!yget_node(c, m, "call_us", YDOC_SEQ, Y_REQUIRED, &us) && us) {
			if ((int)us->n != k->nm)
				ydiag_add(c->diag, c->file, us->line, us->col,
					  "call_us: expected %d times (one per m), got %zu", k->nm, us->n);
			for (int j = 0; j < k->nm; j++) {
				s->us[j] = NAN;
				if ((size_t)j < us->n)
					yget_node_num(c, us->items[j], "call_us", Y_POSITIVE | Y_NULLABLE,
						  &s->us[j]);
			}
		}
		yget_check_unknown(c, m);
		k->nseries++;
	}
}

/* measured.classes.NAME.implementation (optional): which kernel class the
 * table is one implementation of, and the engine, version and layout. */
static void load_impl(struct meas_class *k, struct yctx *c, struct ydoc_node *m)
{
	struct ydoc_node *im = NULL;
	char eng[16] = "", ver[24] = "", lay[16] = "";
	if (yget_node(c, m, "implementation", YDOC_MAP, 0, &im) || !im)
		return;
	yget_strcpy(c, im, "of", Y_REQUIRED, k->impl_of, sizeof k->impl_of);
	yget_strcpy(c, im, "engine", Y_REQUIRED, eng, sizeof eng);
	yget_strcpy(c, im, "version", Y_REQUIRED, ver, sizeof ver);
	yget_strcpy(c, im, "layout", Y_REQUIRED, lay, sizeof lay);
	yget_strcpy(c, im, "source", Y_REQUIRED, k->impl_source, sizeof k->impl_source);
	snprintf(k->impl, sizeof k->impl, "%s %s %s", eng, ver, lay);
	yget_check_unknown(c, im);
}

static void load_measured(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct ydoc_node *cls = NULL;
	struct measured *me = &cal->meas;

	if (map_expect(c, sec, "measured"))
		return;
	yget_strcpy(c, sec, "source", Y_REQUIRED, me->source, sizeof me->source);
	if (yget_node(c, sec, "classes", YDOC_MAP, Y_REQUIRED, &cls) || !cls)
		return;
	for (size_t i = 0; i < cls->n; i++) {
		struct meas_class *k = &me->cls[me->nclasses];
		struct ydoc_node *m = cls->items[i], *ms = NULL, *gpus = NULL;
		cls->used[i] = 1;
		if (map_expect(c, m, cls->keys[i]->str))
			continue;
		if (me->nclasses == CALIB_MAX_CLASSES) {
			ydiag_add(c->diag, c->file, m->line, m->col, "classes: at most %d",
				  CALIB_MAX_CLASSES);
			return;
		}
		snprintf(k->name, sizeof k->name, "%s", cls->keys[i]->str);
		yget_strcpy(c, m, "what", Y_REQUIRED, k->what, sizeof k->what);
		if (!yget_strcpy(c, m, "compute", Y_REQUIRED, k->compute, sizeof k->compute) &&
		    strcmp(k->compute, "bf16") && strcmp(k->compute, "fp8") && strcmp(k->compute, "fp4")) {
			struct ydoc_node *n = ydoc_get(m, "compute");
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "compute: expected bf16, fp8 or fp4, got '%s'", k->compute);
		}
		if (!yget_node(c, m, "m", YDOC_SEQ, Y_REQUIRED, &ms) && ms) {
			if (ms->n < 1 || ms->n > CALIB_MAX_MEAS_M)
				ydiag_add(c->diag, c->file, ms->line, ms->col, "m: give 1 to %d token counts",
					  CALIB_MAX_MEAS_M);
			for (size_t j = 0; j < ms->n && j < CALIB_MAX_MEAS_M; j++) {
				if (yget_node_num(c, ms->items[j], "m", REQ_INT, &k->m[k->nm]))
					continue;
				if (k->nm && !(k->m[k->nm] > k->m[k->nm - 1]))
					ydiag_add(c->diag, c->file, ms->items[j]->line, ms->items[j]->col,
						  "m: token counts must increase");
				k->nm++;
			}
		}
		load_impl(k, c, m);
		if (!yget_node(c, m, "gpus", YDOC_MAP, Y_REQUIRED, &gpus) && gpus)
			load_series(k, c, gpus);
		yget_check_unknown(c, m);
		me->nclasses++;
	}
	yget_check_unknown(c, sec);
}

/* A latency list of exactly n numbers, each > 0. */
static void load_us(struct yctx *c, struct ydoc_node *m, const char *key, int n, double *out)
{
	struct ydoc_node *seq = NULL;
	if (yget_node(c, m, key, YDOC_SEQ, Y_REQUIRED, &seq) || !seq)
		return;
	if ((int)seq->n != n) {
		ydiag_add(c->diag, c->file, seq->line, seq->col, "%s: expected %d latencies (one per "
			  "size in bytes), got %zu", key, n, seq->n);
		return;
	}
	for (int i = 0; i < n; i++)
		yget_node_num(c, seq->items[i], key, Y_POSITIVE, &out[i]);
}

static void load_allreduce(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct allreduce *ar = &cal->ar;
	struct ydoc_node *bytes = NULL, *lat = NULL;
	const char *impl = NULL;

	if (map_expect(c, sec, "allreduce"))
		return;
	yget_strcpy(c, sec, "source", Y_REQUIRED, ar->source, sizeof ar->source);
	yget_num(c, sec, "per_layer", REQ_INT, &ar->per_layer);
	yget_num(c, sec, "gpus", REQ_INT, &ar->gpus);
	if (!yget_str(c, sec, "impl", Y_REQUIRED, &impl) && impl) {
		if (strcmp(impl, "nccl") && strcmp(impl, "oneshot")) {
			struct ydoc_node *n = ydoc_get(sec, "impl");
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "impl: expected nccl or oneshot, got '%s'", impl);
		} else
			snprintf(ar->impl, sizeof ar->impl, "%s", impl);
	}
	if (!yget_node(c, sec, "bytes", YDOC_SEQ, Y_REQUIRED, &bytes) && bytes) {
		if (bytes->n < 1 || bytes->n > CALIB_AR_SIZES)
			ydiag_add(c->diag, c->file, bytes->line, bytes->col,
				  "bytes: give 1 to %d message sizes", CALIB_AR_SIZES);
		for (size_t i = 0; i < bytes->n && i < CALIB_AR_SIZES; i++) {
			if (!yget_node_num(c, bytes->items[i], "bytes", Y_POSITIVE, &ar->bytes[i]))
				ar->log2_bytes[i] = log2(ar->bytes[i]);
			if (i && !(ar->bytes[i] > ar->bytes[i - 1]))
				ydiag_add(c->diag, c->file, bytes->items[i]->line, bytes->items[i]->col,
					  "bytes: sizes must increase");
			ar->nsizes = (int)i + 1;
		}
	}
	if (!yget_node(c, sec, "latency_us", YDOC_MAP, Y_REQUIRED, &lat) && lat) {
		ar->per_gpu = calloc(lat->n ? lat->n : 1, sizeof *ar->per_gpu);
		if (!ar->per_gpu) {
			ydiag_add(c->diag, c->file, 0, 0, "out of memory");
			return;
		}
		for (size_t i = 0; i < lat->n; i++) {
			struct ar_gpu *g = &ar->per_gpu[ar->n];
			struct ydoc_node *m = lat->items[i];
			const char *like = NULL;
			lat->used[i] = 1;
			if (map_expect(c, m, lat->keys[i]->str))
				continue;
			snprintf(g->gpu, sizeof g->gpu, "%s", lat->keys[i]->str);
			g->line = lat->keys[i]->line;
			g->col = lat->keys[i]->col;
			yget_strcpy(c, m, "source", Y_REQUIRED, g->source, sizeof g->source);
			yget_bool(c, m, "pcie", 0, &g->pcie);
			if (!yget_str(c, m, "like", 0, &like) && like)
				snprintf(g->like, sizeof g->like, "%s", like);
			else {
				double nccl[CALIB_AR_SIZES] = {0}, one[CALIB_AR_SIZES] = {0};
				load_us(c, m, "nccl", ar->nsizes, nccl);
				load_us(c, m, "oneshot", ar->nsizes, one);
				memcpy(g->us, strcmp(ar->impl, "nccl") ? one : nccl, sizeof g->us);
			}
			yget_check_unknown(c, m);
			ar->n++;
		}
	}
	yget_check_unknown(c, sec);
}

/* ---------------------------------------------------------------- files */

struct section {
	const char *name;
	void (*load)(struct calib *, struct yctx *, struct ydoc_node *);
	char file[4096]; /* where it was found */
	int line;
	int optional;
};

static void load_doc(struct calib *cal, struct ydoc *doc, struct section *secs, size_t nsecs,
		     struct ydiag *diag)
{
	struct yctx c = {doc->file, diag};
	struct ydoc_node *root = doc->root;

	if (!root)
		return; /* an empty file contributes nothing */
	if (map_expect(&c, root, "calibration file"))
		return;
	for (size_t i = 0; i < root->n; i++) {
		const char *key = root->keys[i]->str;
		size_t s;
		for (s = 0; s < nsecs && strcmp(secs[s].name, key); s++)
			;
		root->used[i] = 1;
		if (s == nsecs) {
			ydiag_add(diag, doc->file, root->keys[i]->line, root->keys[i]->col,
				  "unknown section '%s'", key);
			continue;
		}
		if (secs[s].file[0]) {
			ydiag_add(diag, doc->file, root->keys[i]->line, root->keys[i]->col,
				  "section '%s' is already given in %s:%d", key, secs[s].file,
				  secs[s].line);
			continue;
		}
		snprintf(secs[s].file, sizeof secs[s].file, "%s", doc->file);
		secs[s].line = root->keys[i]->line;
		secs[s].load(cal, &c, root->items[i]);
	}
}

static int yaml_name(const struct dirent *e)
{
	size_t n = strlen(e->d_name);
	return !fsx_is_temp_name(e->d_name) && n > 5 && !strcmp(e->d_name + n - 5, ".yaml");
}

/* The all-reduce table against the catalog: one entry per GPU, `like` resolved,
 * a link bandwidth for messages above the largest size. */
static void check_allreduce(struct calib *cal, struct ydiag *diag, const struct section *sec)
{
	struct allreduce *ar = &cal->ar;
	for (size_t i = 0; i < ar->n; i++) {
		struct ar_gpu *g = &ar->per_gpu[i];
		if (!calib_gpu(cal, g->gpu))
			ydiag_add(diag, sec->file, g->line, g->col,
				  "allreduce.latency_us.%s: not in the GPU catalog", g->gpu);
		if (!g->like[0])
			continue;
		const struct ar_gpu *o = calib_ar(cal, g->like);
		if (!o || o->like[0])
			ydiag_add(diag, sec->file, g->line, g->col,
				  "allreduce.latency_us.%s: like '%s' must name a GPU with its own "
				  "figures",
				  g->gpu, g->like);
		else
			memcpy(g->us, o->us, sizeof g->us);
	}
	for (size_t i = 0; i < cal->ngpus; i++) {
		if (!calib_ar(cal, cal->gpus[i].id))
			ydiag_add(diag, sec->file, sec->line, 1,
				  "allreduce.latency_us: no entry for GPU '%s'", cal->gpus[i].id);
		if (isnan(cal->gpus[i].link_gbps))
			ydiag_add(diag, sec->file, sec->line, 1,
				  "allreduce: GPU '%s' needs link_gbps for messages above %g bytes",
				  cal->gpus[i].id, ar->nsizes ? ar->bytes[ar->nsizes - 1] : 0.0);
	}
}

static void cross_check(struct calib *cal, struct ydiag *diag, struct section *secs)
{
	struct {
		const char *gpu, *what;
		int sec, line, col;
	} refs[] = {{cal->sglang_b8.gpu, "anchors.sglang_b8.gpu", 3, cal->sglang_b8.gpu_line,
		     cal->sglang_b8.gpu_col},
		    {cal->sglang_b16.gpu, "anchors.sglang_b16.gpu", 3, cal->sglang_b16.gpu_line,
		     cal->sglang_b16.gpu_col},
		    {cal->moe_ref.gpu, "moe_reference.gpu", 4, cal->moe_ref.gpu_line,
		     cal->moe_ref.gpu_col}};
	for (size_t i = 0; i < 3; i++)
		if (refs[i].gpu[0] && secs[0].file[0] && !calib_gpu(cal, refs[i].gpu))
			ydiag_add(diag, secs[refs[i].sec].file, refs[i].line, refs[i].col,
				  "%s: '%s' is not in the GPU catalog", refs[i].what, refs[i].gpu);
	if (secs[0].file[0] && secs[7].file[0])
		check_allreduce(cal, diag, &secs[7]);
	if (secs[1].file[0] && secs[4].file[0] && cal->moe_ref.tp > 0 &&
	    cal->moe_ref.tp != cal->model.tp)
		ydiag_add(diag, secs[4].file, secs[4].line, 1,
			  "moe_reference.tp (%g) must equal model.tp (%g): the curve is moved "
			  "between GPUs, not between parallel layouts",
			  cal->moe_ref.tp, cal->model.tp);
}

int calib_load(struct calib *cal, const char *path, struct ydiag *diag)
{
	struct section secs[] = {
		{"gpus", load_gpus, "", 0, 0},         {"model", load_model, "", 0, 0},
		{"drafter", load_drafter, "", 0, 0},   {"anchors", load_anchors, "", 0, 0},
		{"moe_reference", load_moe_reference, "", 0, 0},
		{"assumptions", load_assumptions, "", 0, 0},
		{"moe_transfer", load_moe_transfer, "", 0, 0},
		{"allreduce", load_allreduce, "", 0, 0},
		{"measured", load_measured, "", 0, 1},
	};
	size_t nsecs = sizeof secs / sizeof *secs, before = diag->n;
	uint64_t h = FSX_HASH_SEED;
	struct stat st;
	int rc = 0;

	memset(cal, 0, sizeof *cal);
	snprintf(cal->path, sizeof cal->path, "%s", path);
	cal->law_hold[0] = cal->law_hold[1] = NAN;
	if (stat(path, &st) != 0) {
		ydiag_add(diag, path, 0, 0, "no such calibration file or folder");
		return DDT_EINPUT;
	}
	if (S_ISDIR(st.st_mode)) {
		struct dirent **list;
		int n = scandir(path, &list, yaml_name, alphasort);
		if (n < 0) {
			int e = errno;
			ydiag_add(diag, path, 0, 0, "cannot read folder: %s", strerror(e));
			return e == ENOMEM ? err_nomem() : DDT_EIO;
		}
		for (int i = 0; i < n; i++) {
			char *file = fsx_join(path, list[i]->d_name);
			struct ydoc *doc = NULL;
			h = fsx_hash(h, list[i]->d_name, strlen(list[i]->d_name) + 1);
			if (file)
				fsx_hash_file(&h, file, YDOC_MAX_BYTES); /* unreadable: the load says so */
			if (file && ydoc_load_file(&doc, file, diag) == 0)
				load_doc(cal, doc, secs, nsecs, diag);
			ydoc_free(doc);
			free(file);
			free(list[i]);
		}
		free(list);
	} else {
		struct ydoc *doc = NULL;
		fsx_hash_file(&h, path, YDOC_MAX_BYTES);
		if (ydoc_load_file(&doc, path, diag) == 0)
			load_doc(cal, doc, secs, nsecs, diag);
		ydoc_free(doc);
	}
	snprintf(cal->hash, sizeof cal->hash, "fnv1a64:%016llx", (unsigned long long)h);
	for (size_t s = 0; s < nsecs; s++)
		if (!secs[s].file[0] && !secs[s].optional)
			ydiag_add(diag, path, 0, 0, "missing section '%s'", secs[s].name);
	cross_check(cal, diag, secs);
	snprintf(cal->moe_ref_at.file, sizeof cal->moe_ref_at.file, "%s", secs[4].file);
	cal->moe_ref_at.line = secs[4].line;
	snprintf(cal->xfer_at.file, sizeof cal->xfer_at.file, "%s", secs[6].file);
	cal->xfer_at.line = secs[6].line;
	snprintf(cal->anchors_at.file, sizeof cal->anchors_at.file, "%s", secs[3].file);
	cal->anchors_at.line = secs[3].line;
	if (diag->n > before)
		rc = DDT_EINPUT;
	return rc;
}

void calib_free(struct calib *c)
{
	free(c->gpus);
	c->gpus = NULL;
	c->ngpus = 0;
	free(c->ar.per_gpu);
	c->ar.per_gpu = NULL;
	c->ar.n = 0;
}

const struct meas_class *calib_class(const struct calib *c, const char *name)
{
	for (int i = 0; i < c->meas.nclasses; i++)
		if (!strcmp(c->meas.cls[i].name, name))
			return &c->meas.cls[i];
	return NULL;
}

const struct meas_series *calib_series(const struct meas_class *k, const char *gpu)
{
	for (int i = 0; k && i < k->nseries; i++)
		if (!strcmp(k->series[i].gpu, gpu))
			return &k->series[i];
	return NULL;
}

double calib_xcurve_at(const struct xfer_curve *cv, const double *y, double M)
{
	if (M <= cv->m[0])
		return y[0];
	if (M >= cv->m[cv->n - 1])
		return y[cv->n - 1];
	int i = 1;
	while (M > cv->m[i])
		i++;
	double w = log(M / cv->m[i - 1]) / log(cv->m[i] / cv->m[i - 1]);
	return y[i - 1] + w * (y[i] - y[i - 1]);
}

double calib_xfer_adj(const struct calib *c, int i, double M)
{
	const struct xfer_entry *e = &c->xfer[i];
	if (e->curve < 0 || c->asm_[ASM_COUNT + i].kind != DIST_LOGNORMAL ||
	    c->asm_[ASM_COUNT + i].overridden)
		return 1;
	const struct xfer_curve *cv = &c->xcurve[e->curve];
	return exp(calib_xcurve_at(cv, cv->lf, M)) / e->d.median;
}

/* ---------------------------------------------------------------- lookups */

int calib_nassumptions(const struct calib *c)
{
	return ASM_COUNT + c->nxfer;
}

void calib_assumption_label(const struct calib *c, int i, char *buf, size_t len)
{
	if (i < ASM_COUNT) {
		snprintf(buf, len, "%s", asm_names[i]);
		return;
	}
	const struct xfer_entry *e = &c->xfer[i - ASM_COUNT];
	snprintf(buf, len, "moe_transfer.%s.%s.%s", e->from, e->to, e->range);
}

int calib_assumption_group(const struct calib *c, int i)
{
	int g = ASM_COUNT - 1;
	if (i < ASM_COUNT)
		return i;
	for (int k = 0; k <= i - ASM_COUNT; k++)
		if (k == 0 || strcmp(c->xfer[k].from, c->xfer[k - 1].from) ||
		    strcmp(c->xfer[k].to, c->xfer[k - 1].to))
			g++;
	return g;
}

int calib_ngroups(const struct calib *c)
{
	return c->nxfer ? calib_assumption_group(c, ASM_COUNT + c->nxfer - 1) + 1 : ASM_COUNT;
}

void calib_group_label(const struct calib *c, int group, char *buf, size_t len)
{
	if (group < ASM_COUNT) {
		snprintf(buf, len, "%s", asm_names[group]);
		return;
	}
	for (int i = 0; i < c->nxfer; i++)
		if (calib_assumption_group(c, ASM_COUNT + i) == group) {
			snprintf(buf, len, "moe_transfer.%s.%s", c->xfer[i].from, c->xfer[i].to);
			return;
		}
	snprintf(buf, len, "?");
}

const char *calib_family(const struct calib *c, const char *arch)
{
	for (int i = 0; i < c->nfamilies; i++)
		if (!strcmp(c->families[i].arch, arch))
			return c->families[i].family;
	return arch;
}

int calib_xfer_index(const struct calib *c, const struct gpu *from, const struct gpu *to, double M)
{
	if (!strcmp(from->id, to->id))
		return -1;
	/* ranges are whole numbers of tokens; a fractional M belongs to the lower one */
	M = floor(M);
	for (int i = 0; i < c->nxfer; i++) {
		const struct xfer_entry *e = &c->xfer[i];
		if (!strcmp(e->from, from->id) && !strcmp(e->to, to->id) && M <= e->m_hi &&
		    (M >= e->m_lo || e->m_lo == 1))
			return i;
	}
	return -1;
}

const struct ar_gpu *calib_ar(const struct calib *c, const char *gpu_id)
{
	for (size_t i = 0; i < c->ar.n; i++)
		if (!strcmp(c->ar.per_gpu[i].gpu, gpu_id))
			return &c->ar.per_gpu[i];
	return NULL;
}

const struct gpu *calib_gpu(const struct calib *c, const char *id)
{
	for (size_t i = 0; i < c->ngpus; i++)
		if (!strcmp(c->gpus[i].id, id))
			return &c->gpus[i];
	return NULL;
}

/* ---------------------------------------------------------------- overrides */

#define NOKEY (-1) /* set_value: no such key (calib_set names the nearest ones) */

static int key_value(const struct calib *c, const char *key, char *val, size_t len);

/* Sets *dst to v when v keeps the rules the loader reads the value with
 * (flags: Y_POSITIVE, Y_NONNEG, Y_INTEGER, as given to yget_num). */
static int set_checked(double *dst, unsigned flags, double v, const char *full)
{
	if ((flags & Y_POSITIVE) && !(v > 0))
		return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
	if ((flags & Y_NONNEG) && v < 0)
		return err_set(DDT_EINPUT, "--set %s: must not be negative", full);
	if ((flags & Y_INTEGER) && (v != floor(v) || fabs(v) > 2147483647.0))
		return err_set(DDT_EINPUT, "--set %s: must be a whole number", full);
	*dst = v;
	return 0;
}

/* Sets field key of obj (one of f) to v after its checks; NOKEY when f has
 * no such field. */
static int set_field(void *obj, const struct field *f, size_t n, const char *key, double v,
		     const char *full)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].key, key))
			return set_checked((double *)((char *)obj + f[i].off), f[i].flags, v, full);
	return NOKEY;
}

static void dist_fix(struct dist *d, double v)
{
	if (!d->overridden)
		d->was = d->point;
	d->point = v;
	d->kind = DIST_FIXED;
	d->overridden = 1;
}

static int set_assumption(struct calib *c, const char *name, double v, const char *full)
{
	for (int a = 0; a < ASM_COUNT; a++)
		if (!strcmp(asm_names[a], name)) {
			if (!range_holds(&asm_ranges[a], v))
				return err_set(DDT_EINPUT, "--set %s: must be %s", full,
					       asm_ranges[a].says);
			dist_fix(&c->asm_[a], v);
			return 0;
		}
	return NOKEY;
}

/* moe_transfer.FROM.TO[.RANGE] (GPU ids or families): every range of the
 * pair, or one. */
static int set_transfer(struct calib *c, char *rest, double v, const char *full)
{
	char *to = strchr(rest, '.'), *range = NULL;
	int hits = 0;
	if (!to)
		return NOKEY;
	*to++ = '\0';
	if ((range = strchr(to, '.')) != NULL)
		*range++ = '\0';
	for (int i = 0; i < c->nxfer; i++) {
		struct xfer_entry *e = &c->xfer[i];
		const struct gpu *gf = calib_gpu(c, e->from), *gt = calib_gpu(c, e->to);
		int from_ok = !strcmp(e->from, rest) || (gf && !strcmp(calib_family(c, gf->arch), rest));
		int to_ok = !strcmp(e->to, to) || (gt && !strcmp(calib_family(c, gt->arch), to));
		if (!from_ok || !to_ok || (range && strcmp(e->range, range)))
			continue;
		if (!(v > 0))
			return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
		dist_fix(&e->d, v);
		c->asm_[ASM_COUNT + i] = e->d;
		hits++;
	}
	return hits ? 0 : NOKEY;
}

/* moe_reference.GPU.mM_ms: a point of the reference curve. */
static int set_ref_point(struct calib *c, const char *rest, double v, const char *full)
{
	const char *dot = strrchr(rest, '.');
	double m;
	char tail[8];
	if (!dot || sscanf(dot + 1, "m%lf_m%7s", &m, tail) != 2 || strcmp(tail, "s"))
		return NOKEY;
	if ((size_t)(dot - rest) != strlen(c->moe_ref.gpu) ||
	    strncmp(rest, c->moe_ref.gpu, (size_t)(dot - rest)))
		return NOKEY;
	for (int i = 0; i < c->moe_ref.npoints; i++)
		if (c->moe_ref.points[i].m == m) {
			if (!(v > 0))
				return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
			c->moe_ref.points[i].step_ms = v;
			return 0;
		}
	return NOKEY;
}

/* moe_reference.physical.PARAM: held at v instead of fitted. */
static int set_physical(struct calib *c, const char *name, double v, const char *full)
{
	struct moe_physical *ph = &c->moe_ref.phys;
	for (int p = 0; p < MOE_P_COUNT; p++) {
		if (strcmp(name, moe_param_names[p]))
			continue;
		if (!range_holds(&moe_param_ranges[p], v))
			return err_set(DDT_EINPUT, "--set %s: must be %s", full,
				       moe_param_ranges[p].says);
		ph->value[p] = v;
		snprintf(ph->source[p], sizeof ph->source[p], "set on the command line");
		for (int j = 0; j < ph->nfit; j++)
			if (ph->fit[j] == (enum moe_param)p) {
				memmove(&ph->fit[j], &ph->fit[j + 1],
					(size_t)(ph->nfit - j - 1) * sizeof *ph->fit);
				ph->nfit--;
				break;
			}
		return 0;
	}
	return NOKEY;
}

static int set_moe_reference(struct calib *c, const char *rest, double v, const char *full)
{
	if (!strcmp(rest, "tp"))
		return set_checked(&c->moe_ref.tp, REQ_INT, v, full);
	if (!strcmp(rest, "floor_us")) /* 0: no per-call floor */
		return set_checked(&c->moe_ref.floor_us, Y_NONNEG, v, full);
	/* 0: the anchors take the curve's own MoE */
	if (!strcmp(rest, "anchor_b8_ms") || !strcmp(rest, "anchor_b16_ms"))
		return set_checked(&c->moe_ref.anchor_ms[rest[8] == '1'], Y_NONNEG, v, full);
	if (!strncmp(rest, "physical.", 9))
		return set_physical(c, rest + 9, v, full);
	return set_ref_point(c, rest, v, full);
}

/* allreduce.per_layer, allreduce.gpus (whole numbers), and
 * allreduce.GPU.step_ms_at_mM: that GPU's latencies scaled so that the
 * step's all-reduce at width M is v (the model applies it). */
static int set_allreduce(struct calib *c, const char *rest, double v, const char *full)
{
	const char *dot = strchr(rest, '.');
	char gpu[32];
	double m;
	int n = 0;
	if (!strcmp(rest, "per_layer") || !strcmp(rest, "gpus")) /* as the loader reads them */
		return set_checked(rest[0] == 'p' ? &c->ar.per_layer : &c->ar.gpus, REQ_INT, v, full);
	if (!dot || (size_t)(dot - rest) >= sizeof gpu ||
	    sscanf(dot + 1, "step_ms_at_m%lf%n", &m, &n) != 1 || dot[1 + n] || !(m >= 1) ||
	    m != floor(m) || m > 1e6)
		return NOKEY;
	memcpy(gpu, rest, (size_t)(dot - rest));
	gpu[dot - rest] = '\0';
	struct ar_gpu *a = (struct ar_gpu *)calib_ar(c, gpu);
	if (!a)
		return NOKEY;
	if (!(v > 0))
		return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
	a->hold_m = m;
	a->hold_ms = v;
	return 0;
}

static const char *const law_names[2] = {"attn_lmhead", "draft"};

/* law.attn_lmhead / law.draft: the component's growth g held at v. */
static int set_law(struct calib *c, const char *rest, double v, const char *full)
{
	for (int i = 0; i < 2; i++)
		if (!strcmp(rest, law_names[i])) {
			if (!(v >= 0 && v <= 1))
				return err_set(DDT_EINPUT, "--set %s: a growth share must be within "
					       "[0, 1]", full);
			c->law_hold[i] = v;
			return 0;
		}
	return NOKEY;
}

/* anchors.NAME.FIELD, anchors.sglang_limits.max_budget. */
static int set_anchor(struct calib *c, char *rest, double v, const char *full)
{
	char *field = strchr(rest, '.');
	if (!field)
		return NOKEY;
	*field++ = '\0';
	if (!strcmp(rest, "sglang_limits") && !strcmp(field, "max_budget"))
		return set_checked(&c->sglang_max_budget, REQ_INT, v, full);
	struct anchor *a = !strcmp(rest, "sglang_b8")    ? &c->sglang_b8
			   : !strcmp(rest, "sglang_b16") ? &c->sglang_b16
							 : NULL;
	if (!a)
		return NOKEY;
	double step = a->step_ms;
	int rc = set_field(a, anchor_fields, NFIELDS(anchor_fields), field, v, full);
	if (rc)
		return rc;
	if (!a->overridden)
		a->was_step_ms = step;
	a->overridden = 1;
	if (!strcmp(field, "step_ms"))
		a->tok_s = a->accept = NAN;
	else if (!isnan(a->tok_s) && !isnan(a->accept))
		a->step_ms = a->concurrency * a->accept / a->tok_s * 1000.0;
	return 0;
}

/* Sets the numeric value of key; NOKEY when there is no such key. */
static int set_value(struct calib *c, const char *key, double v)
{
	char buf[256], *dot, *rest;

	if (strlen(key) >= sizeof buf)
		return err_set(DDT_EINPUT, "--set: key too long");
	strcpy(buf, key);
	dot = strchr(buf, '.');
	if (!dot)
		return set_assumption(c, buf, v, key);
	*dot = '\0';
	rest = dot + 1;
	if (!strcmp(buf, "moe_transfer"))
		return set_transfer(c, rest, v, key);
	if (!strcmp(buf, "model"))
		return set_field(&c->model, geometry_fields, NFIELDS(geometry_fields), rest, v, key);
	if (!strcmp(buf, "drafter"))
		return set_field(&c->drafter, drafter_fields, NFIELDS(drafter_fields), rest, v, key);
	if (!strcmp(buf, "anchors"))
		return set_anchor(c, rest, v, key);
	if (!strcmp(buf, "moe_reference"))
		return set_moe_reference(c, rest, v, key);
	if (!strcmp(buf, "allreduce"))
		return set_allreduce(c, rest, v, key);
	if (!strcmp(buf, "law"))
		return set_law(c, rest, v, key);
	if (!strcmp(buf, "gpus")) {
		char *field = strchr(rest, '.');
		struct gpu *g;
		if (!field)
			return NOKEY;
		*field++ = '\0';
		if (!(g = (struct gpu *)calib_gpu(c, rest)))
			return NOKEY;
		return set_field(g, gpu_fields, NFIELDS(gpu_fields), field, v, key);
	}
	return NOKEY;
}

/* Applies one override without logging it; NOKEY for an unknown key. */
static int set_one(struct calib *c, const char *key, const char *value)
{
	double v;

	if (!strcmp(key, "moe_reference.gpu"))
		return calib_reference_measured(c, value);
	if (!strcmp(key, "moe_reference.curve")) {
		if (calib_moe_curve_parse(value, &c->moe_ref.curve))
			return err_set(DDT_EINPUT, "--set %s: expected linear or physical, got '%s'",
				       key, value);
		return 0;
	}
	if (yget_parse_num(value, &v) != 0) /* an unknown key first: it says more */
		return !key_value(c, key, NULL, 0) ? NOKEY
			: err_set(DDT_EINPUT, "--set %s: '%s' is not a finite number", key, value);
	return set_value(c, key, v);
}


/* ---------------------------------------------------------------- keys */

/* Calls fn for the fields of obj as "prefix.field". */
static int keys_fields(const char *prefix, const void *obj, const struct field *f, size_t n,
		       calib_key_fn fn, void *ctx)
{
	char key[160], val[40];
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		double v = *(const double *)((const char *)obj + f[i].off);
		snprintf(key, sizeof key, "%s.%s", prefix, f[i].key);
		snprintf(val, sizeof val, isnan(v) ? "" : "%.9g", v);
		rc = fn(ctx, key, val);
	}
	return rc;
}

static int key_num(calib_key_fn fn, void *ctx, const char *key, double v)
{
	char val[40];
	snprintf(val, sizeof val, isnan(v) ? "" : "%.9g", v);
	return fn(ctx, key, val);
}

/* The transfer keys: every entry, every pair, every pair of families. */
static int keys_transfer(const struct calib *c, calib_key_fn fn, void *ctx)
{
	char key[160], fam[CALIB_MAX_XFER][64];
	int nfam = 0, rc = 0;
	for (int i = 0; i < c->nxfer && !rc; i++) {
		const struct xfer_entry *e = &c->xfer[i];
		calib_assumption_label(c, ASM_COUNT + i, key, sizeof key);
		rc = key_num(fn, ctx, key, c->asm_[ASM_COUNT + i].point);
		if (!rc && (i == 0 || strcmp(e->from, e[-1].from) || strcmp(e->to, e[-1].to))) {
			snprintf(key, sizeof key, "moe_transfer.%s.%s", e->from, e->to);
			rc = fn(ctx, key, "");
		}
		const struct gpu *gf = calib_gpu(c, e->from), *gt = calib_gpu(c, e->to);
		if (rc || !gf || !gt)
			continue;
		snprintf(fam[nfam], sizeof fam[nfam], "%s.%s", calib_family(c, gf->arch),
			 calib_family(c, gt->arch));
		int seen = 0;
		for (int k = 0; k < nfam; k++)
			seen |= !strcmp(fam[k], fam[nfam]);
		if (!seen) {
			snprintf(key, sizeof key, "moe_transfer.%s", fam[nfam++]);
			rc = fn(ctx, key, "");
		}
	}
	return rc;
}

static int keys_reference(const struct calib *c, calib_key_fn fn, void *ctx)
{
	const struct moe_reference *r = &c->moe_ref;
	char key[160];
	int rc = fn(ctx, "moe_reference.gpu", r->gpu);
	rc = rc ? rc : fn(ctx, "moe_reference.curve", calib_moe_curve_name(r->curve));
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.tp", r->tp);
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.floor_us", r->floor_us);
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.anchor_b8_ms", r->anchor_ms[0]);
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.anchor_b16_ms", r->anchor_ms[1]);
	for (int p = 0; p < MOE_P_COUNT && !rc; p++) {
		snprintf(key, sizeof key, "moe_reference.physical.%s", moe_param_names[p]);
		rc = key_num(fn, ctx, key, r->fit.ok || r->fit.held[p] ? r->fit.value[p] : r->phys.value[p]);
	}
	for (int i = 0; i < r->npoints && !rc; i++) {
		snprintf(key, sizeof key, "moe_reference.%s.m%g_ms", r->gpu, r->points[i].m);
		rc = key_num(fn, ctx, key, r->points[i].step_ms);
	}
	return rc;
}

int calib_keys(const struct calib *c, calib_key_fn fn, void *ctx)
{
	const struct anchor *a8 = &c->sglang_b8;
	char key[160];
	int rc = 0;
	for (int a = 0; a < ASM_COUNT && !rc; a++)
		rc = key_num(fn, ctx, asm_names[a], c->asm_[a].point);
	rc = rc ? rc : keys_transfer(c, fn, ctx);
	rc = rc ? rc : keys_fields("anchors.sglang_b8", a8, anchor_fields, NFIELDS(anchor_fields), fn, ctx);
	rc = rc ? rc : keys_fields("anchors.sglang_b16", &c->sglang_b16, anchor_fields,
				   NFIELDS(anchor_fields), fn, ctx);
	rc = rc ? rc : key_num(fn, ctx, "anchors.sglang_limits.max_budget", c->sglang_max_budget);
	rc = rc ? rc : keys_reference(c, fn, ctx);
	rc = rc ? rc : key_num(fn, ctx, "allreduce.per_layer", c->ar.per_layer);
	rc = rc ? rc : key_num(fn, ctx, "allreduce.gpus", c->ar.gpus);
	/* the all-reduce per step at the b8 anchor's width, as the documents show it */
	for (size_t i = 0; i < c->ar.n && !rc; i++) {
		snprintf(key, sizeof key, "allreduce.%s.step_ms_at_m%g", c->ar.per_gpu[i].gpu,
			 a8->concurrency * (a8->budget + 1));
		rc = fn(ctx, key, "");
	}
	for (int i = 0; i < 2 && !rc; i++) {
		snprintf(key, sizeof key, "law.%s", law_names[i]);
		rc = key_num(fn, ctx, key, c->law_hold[i]);
	}
	for (size_t i = 0; i < c->ngpus && !rc; i++) {
		snprintf(key, sizeof key, "gpus.%s", c->gpus[i].id);
		rc = keys_fields(key, &c->gpus[i], gpu_fields, NFIELDS(gpu_fields), fn, ctx);
	}
	rc = rc ? rc : keys_fields("model", &c->model, geometry_fields, NFIELDS(geometry_fields), fn, ctx);
	rc = rc ? rc : keys_fields("drafter", &c->drafter, drafter_fields, NFIELDS(drafter_fields), fn, ctx);
	return rc;
}

struct key_find {
	const char *key;
	char *val;
	size_t len;
};

static int key_find_fn(void *ctx, const char *key, const char *value)
{
	struct key_find *f = ctx;
	if (strcmp(key, f->key))
		return 0;
	if (f->val)
		snprintf(f->val, f->len, "%s", value);
	return 1;
}

/* True when key is one of calib_keys; its value into val[len] (may be NULL). */
static int key_value(const struct calib *c, const char *key, char *val, size_t len)
{
	struct key_find f = {key, val, len};
	if (val && len)
		val[0] = '\0';
	return calib_keys(c, key_find_fn, &f) == 1;
}

/* Levenshtein distance of a and b (each cut at 127 bytes). */
static int edit_distance(const char *a, const char *b)
{
	int row[128], n = (int)strnlen(b, 127), m = (int)strnlen(a, 127);
	for (int j = 0; j <= n; j++)
		row[j] = j;
	for (int i = 1; i <= m; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= n; j++) {
			int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[n];
}

#define NEAR_MAX 3
/* The nearest keys to an unknown one: by edit distance within a bound, else
 * those ending in the same last part ("m9_ms"). */
struct near {
	const char *key, *last;
	int bound, n, nlast;
	int d[NEAR_MAX];
	char k[NEAR_MAX][160], klast[NEAR_MAX][160];
};

static int near_fn(void *ctx, const char *key, const char *value)
{
	struct near *s = ctx;
	const char *last = strrchr(key, '.');
	int d = edit_distance(s->key, key), i;
	(void)value;
	if (last && !strcmp(last, s->last) && s->nlast < NEAR_MAX)
		snprintf(s->klast[s->nlast++], sizeof s->klast[0], "%s", key);
	if (d > s->bound)
		return 0;
	for (i = s->n; i > 0 && s->d[i - 1] > d; i--)
		if (i < NEAR_MAX) {
			s->d[i] = s->d[i - 1];
			memcpy(s->k[i], s->k[i - 1], sizeof s->k[i]);
		}
	if (i < NEAR_MAX) {
		s->d[i] = d;
		snprintf(s->k[i], sizeof s->k[i], "%s", key);
		if (s->n < NEAR_MAX)
			s->n++;
	}
	return 0;
}

/* The error for an unknown key, naming the nearest known ones. */
static int no_such_key(const struct calib *c, const char *key)
{
	const char *dot = strrchr(key, '.');
	struct near s = {.key = key, .last = dot ? dot : "", .bound = (int)strlen(key) / 6};
	char hint[4 * 170] = "";
	size_t off = 0;
	if (s.bound < 2)
		s.bound = 2;
	calib_keys(c, near_fn, &s);
	int n = s.n ? s.n : dot ? s.nlast : 0;
	for (int i = 0; i < n; i++)
		off += (size_t)snprintf(hint + off, sizeof hint - off, "%s'%s'",
					!i ? "; did you mean " : i + 1 < n ? ", " : " or ",
					s.n ? s.k[i] : s.klast[i]);
	return err_set(DDT_EINPUT, "--set: no such key '%s'%s", key,
		       n ? strcat(hint, "?") : " (ddt estimate --keys lists every key)");
}

const struct calib_override *calib_override_of(const struct calib *c, const char *key)
{
	for (int i = 0; i < c->nsets; i++)
		if (!strcmp(c->sets[i].key, key))
			return &c->sets[i];
	return NULL;
}

int calib_set(struct calib *c, const char *key, const char *value)
{
	struct calib_override o = {0};
	int rc;
	if (c->nsets == CALIB_MAX_SETS)
		return err_set(DDT_EINPUT, "--set %s: at most %d overrides", key, CALIB_MAX_SETS);
	if (strlen(key) >= sizeof o.key || strlen(value) >= sizeof o.value)
		return err_set(DDT_EINPUT, "--set %s: key or value too long", key);
	key_value(c, key, o.was, sizeof o.was);
	if ((rc = set_one(c, key, value)) == NOKEY)
		return no_such_key(c, key);
	if (rc)
		return rc;
	snprintf(o.key, sizeof o.key, "%s", key);
	snprintf(o.value, sizeof o.value, "%s", value);
	c->sets[c->nsets++] = o;
	return 0;
}

/* Replaces the reference points by (m, ms) measured on gpu. */
static int set_reference(struct calib *c, const char *gpu, const double *m, const double *ms,
			 int n, const char *const *src, enum provenance prov)
{
	struct moe_reference *r = &c->moe_ref;
	if (!calib_gpu(c, gpu))
		return err_set(DDT_EINPUT, "moe_reference.gpu: '%s' is not in the GPU catalog", gpu);
	if (n < 2)
		return err_set(DDT_EINPUT, "moe_reference: %s has %d point%s, a curve needs two", gpu,
			       n, n == 1 ? "" : "s");
	snprintf(r->gpu, sizeof r->gpu, "%s", gpu);
	r->npoints = n;
	r->prov = prov;
	for (int i = 0; i < n; i++) {
		r->points[i].m = m[i];
		r->points[i].step_ms = ms[i];
		snprintf(r->points[i].source, sizeof r->points[i].source, "%s", src[i]);
	}
	qsort(r->points, (size_t)n, sizeof *r->points, cmp_point);
	for (int i = 1; i < n; i++)
		if (r->points[i].m == r->points[i - 1].m)
			return err_set(DDT_EINPUT, "moe_reference: m=%g given twice", r->points[i].m);
	return 0;
}

int calib_reference_measured(struct calib *c, const char *gpu)
{
	const struct meas_class *k = calib_class(c, c->xfer_class);
	const struct meas_series *s = calib_series(k, gpu);
	double m[CALIB_MAX_MOE_POINTS], ms[CALIB_MAX_MOE_POINTS];
	const char *src[CALIB_MAX_MOE_POINTS];
	double layers = c->model.layers - c->model.dense_layers;
	int n = 0;
	if (!s)
		return err_set(DDT_EINPUT, "--set moe_reference.gpu=%s: no measured %s curve for '%s' "
			       "in the calibration; give one with --moe-reference FILE", gpu,
			       c->xfer_class, gpu);
	for (int j = 0; j < k->nm && n < CALIB_MAX_MOE_POINTS; j++)
		if (s->us[j] > 0) {
			m[n] = k->m[j];
			ms[n] = s->us[j] * layers / 1e3;
			src[n++] = s->source;
		}
	return set_reference(c, gpu, m, ms, n, src, s->prov);
}

/* One data line of a reference CSV into m, ms and the line's source;
 * gpu[32] holds the curve's GPU (set by the first line). Returns 0 or
 * DDT_EINPUT naming path:ln. */
static int csv_point(const char *path, int ln, char *line, char *gpu, double *m, double *ms,
		     char *src, size_t srclen)
{
	char *f[4];
	int nf = csv_split(line, f, 4);
	if (nf < 3 || yget_parse_num(f[1], m) || yget_parse_num(f[2], ms) || !(*m >= 1) ||
	    *m != floor(*m) || *m > 1e6 || !(*ms > 0))
		return err_set(DDT_EINPUT, "%s:%d: expected gpu,m,step_ms[,source] with m a whole "
			       "number >= 1 and step_ms > 0 (ms per decode step, every MoE layer)",
			       path, ln);
	if (gpu[0] && strcmp(gpu, f[0]))
		return err_set(DDT_EINPUT, "%s:%d: one GPU per reference curve: '%s' after '%s'",
			       path, ln, f[0], gpu);
	if (!f[0][0] || strlen(f[0]) >= 32)
		return err_set(DDT_EINPUT, "%s:%d: gpu: expected a catalog id, got '%s'", path, ln,
			       f[0]);
	snprintf(gpu, 32, "%s", f[0]);
	snprintf(src, srclen, "%s:%d%s%s", path, ln, nf > 3 ? ": " : "", nf > 3 ? f[3] : "");
	return 0;
}

int calib_reference_csv(struct calib *c, const char *path)
{
	FILE *fp = fopen(path, "r");
	char line[1024], gpu[32] = "";
	double m[CALIB_MAX_MOE_POINTS], ms[CALIB_MAX_MOE_POINTS];
	static char srcbuf[CALIB_MAX_MOE_POINTS][CALIB_SOURCE_LEN];
	const char *src[CALIB_MAX_MOE_POINTS];
	int n = 0, ln = 0, rc = 0;

	if (!fp)
		return err_set(DDT_EINPUT, "%s: cannot open: %s", path, strerror(errno));
	while (!rc && fgets(line, sizeof line, fp)) {
		ln++;
		if (!strchr(line, '\n') && !feof(fp)) {
			rc = err_set(DDT_EINPUT, "%s:%d: line longer than %zu bytes", path, ln,
				     sizeof line - 2);
			break;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (ln == 1) {
			if (strcmp(line, "gpu,m,step_ms") && strcmp(line, "gpu,m,step_ms,source"))
				rc = err_set(DDT_EINPUT, "%s:1: expected the header gpu,m,step_ms[,source]",
					     path);
			continue;
		}
		if (!line[0])
			continue;
		if (n == CALIB_MAX_MOE_POINTS)
			rc = err_set(DDT_EINPUT, "%s:%d: at most %d points", path, ln,
				     CALIB_MAX_MOE_POINTS);
		else if (!(rc = csv_point(path, ln, line, gpu, &m[n], &ms[n], srcbuf[n],
					  sizeof srcbuf[n])))
			src[n] = srcbuf[n], n++;
	}
	fclose(fp);
	if (rc)
		return rc;
	if (!gpu[0])
		return err_set(DDT_EINPUT, "%s: no points after the header", path);
	if (!calib_gpu(c, gpu))
		return err_set(DDT_EINPUT, "%s: gpu '%s' is not in the GPU catalog", path, gpu);
	return set_reference(c, gpu, m, ms, n, src, PROV_MEASURED);
}

int calib_set_arg(struct calib *c, const char *arg)
{
	char key[256];
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof key)
		return err_set(DDT_EINPUT, "--set '%s': expected KEY=VALUE", arg);
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	return calib_set(c, key, eq + 1);
}

/* ---------------------------------------------------------------- quantiles */

double calib_dist_quantile(const struct dist *d, double q)
{
	switch (d->kind) {
	case DIST_FIXED:
		return d->point;
	case DIST_UNIFORM:
		return d->min + q * (d->max - d->min);
	case DIST_TRIANGULAR: {
		double w = d->max - d->min, fc = (d->mode - d->min) / w;
		return q < fc ? d->min + sqrt(q * w * (d->mode - d->min))
			      : d->max - sqrt((1 - q) * w * (d->max - d->mode));
	}
	case DIST_NORMAL: {
		/* truncation: map q into the CDF range [F(lo), F(hi)] */
		double flo = isnan(d->min) ? 0 : gsl_cdf_gaussian_P(d->min - d->mean, d->sd);
		double fhi = isnan(d->max) ? 1 : gsl_cdf_gaussian_P(d->max - d->mean, d->sd);
		return d->mean + gsl_cdf_gaussian_Pinv(flo + q * (fhi - flo), d->sd);
	}
	case DIST_LOGNORMAL:
		return d->median * exp(gsl_cdf_gaussian_Pinv(q, d->sigma));
	}
	return d->point;
}
