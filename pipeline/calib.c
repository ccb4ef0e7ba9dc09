/* calib.c - strict loading and command-line overrides of the calibration. */
#include "calib.h"

#include "err.h"
#include "fsx.h"

#include <dirent.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
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
};

static const char *const dist_names[] = {"fixed", "uniform", "triangular", "normal", "lognormal"};

const char *calib_assumption_name(enum assumption a)
{
	return asm_names[a];
}

const char *dist_kind_name(enum dist_kind k)
{
	return dist_names[k];
}

const char *provenance_name(enum provenance p)
{
	static const char *const names[] = {"measured", "calibration", "assumed", "override"};
	return names[p];
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

static void load_str(struct yctx *c, struct ydoc_node *map, const char *key, unsigned flags,
		     char *dst, size_t len)
{
	const char *s = NULL;
	if (yget_str(c, map, key, flags, &s) || !s)
		return;
	if (strlen(s) >= len) {
		struct ydoc_node *n = ydoc_get(map, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: longer than %zu characters", key,
			  len - 1);
		return;
	}
	strcpy(dst, s);
}

static int map_expect(struct yctx *c, struct ydoc_node *n, const char *what)
{
	return ynode_expect(c, n, YDOC_MAP, what);
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
		load_str(c, m, "name", Y_REQUIRED, g->name, sizeof g->name);
		load_str(c, m, "arch", Y_REQUIRED, g->arch, sizeof g->arch);
		load_str(c, m, "link", Y_REQUIRED, g->link, sizeof g->link);
		load_str(c, m, "source", Y_REQUIRED, g->source, sizeof g->source);
		load_fields(c, m, g, gpu_fields, NFIELDS(gpu_fields));
		ycheck_unknown(c, m);
		cal->ngpus++;
	}
}

static void load_model(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "model"))
		return;
	load_str(c, sec, "name", Y_REQUIRED, cal->model.name, sizeof cal->model.name);
	load_str(c, sec, "source", Y_REQUIRED, cal->model.source, sizeof cal->model.source);
	load_fields(c, sec, &cal->model, geometry_fields, NFIELDS(geometry_fields));
	ycheck_unknown(c, sec);
}

static void load_drafter(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "drafter"))
		return;
	load_str(c, sec, "name", Y_REQUIRED, cal->drafter.name, sizeof cal->drafter.name);
	load_str(c, sec, "source", Y_REQUIRED, cal->drafter.source, sizeof cal->drafter.source);
	load_fields(c, sec, &cal->drafter, drafter_fields, NFIELDS(drafter_fields));
	ycheck_unknown(c, sec);
}

static void load_anchor(struct anchor *a, struct yctx *c, struct ydoc_node *m, const char *name)
{
	const char *pipe = NULL;
	if (map_expect(c, m, name))
		return;
	load_str(c, m, "gpu", Y_REQUIRED, a->gpu, sizeof a->gpu);
	load_str(c, m, "source", Y_REQUIRED, a->source, sizeof a->source);
	if (!yget_str(c, m, "pipeline", Y_REQUIRED, &pipe) && pipe &&
	    pipeline_parse(pipe, &a->pipeline)) {
		struct ydoc_node *n = ydoc_get(m, "pipeline");
		ydiag_add(c->diag, c->file, n->line, n->col,
			  "pipeline: expected sglang or native, got '%s'", pipe);
	}
	load_fields(c, m, a, anchor_fields, NFIELDS(anchor_fields));
	int rate = !isnan(a->tok_s) || !isnan(a->accept), step = !isnan(a->step_ms);
	if (rate == step || (rate && (isnan(a->tok_s) || isnan(a->accept))))
		ydiag_add(c->diag, c->file, m->line, m->col,
			  "%s: give either tok_s with accept, or step_ms", name);
	else if (rate)
		a->step_ms = a->concurrency * a->accept / a->tok_s * 1000.0;
	ycheck_unknown(c, m);
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
		load_str(c, n, "source", Y_REQUIRED, cal->sglang_limit_source,
			 sizeof cal->sglang_limit_source);
		ycheck_unknown(c, n);
	}
	ycheck_unknown(c, sec);
}

static int cmp_point(const void *a, const void *b)
{
	double x = ((const struct moe_point *)a)->m, y = ((const struct moe_point *)b)->m;
	return (x > y) - (x < y);
}

static void load_moe_reference(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	struct moe_reference *r = &cal->moe_ref;
	struct ydoc_node *pts = NULL;
	const char *curve = NULL, *note = NULL;

	if (map_expect(c, sec, "moe_reference"))
		return;
	load_str(c, sec, "gpu", Y_REQUIRED, r->gpu, sizeof r->gpu);
	load_str(c, sec, "source", Y_REQUIRED, r->source, sizeof r->source);
	yget_num(c, sec, "tp", REQ_INT, &r->tp);
	yget_str(c, sec, "efficiency_note", 0, &note);
	if (!yget_str(c, sec, "curve", Y_REQUIRED, &curve) && curve) {
		if (!strcmp(curve, "linear"))
			r->curve = MOE_CURVE_LINEAR;
		else {
			struct ydoc_node *n = ydoc_get(sec, "curve");
			ydiag_add(c->diag, c->file, n->line, n->col,
				  "curve: expected linear, got '%s'", curve);
		}
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
			load_str(c, m, "source", Y_REQUIRED, p->source, sizeof p->source);
			ycheck_unknown(c, m);
			for (int j = 0; j < r->npoints; j++)
				if (r->points[j].m == p->m)
					ydiag_add(c->diag, c->file, m->line, m->col,
						  "points: m=%g given twice", p->m);
			r->npoints++;
		}
		qsort(r->points, (size_t)r->npoints, sizeof *r->points, cmp_point);
	}
	ycheck_unknown(c, sec);
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
	load_str(c, m, "unit", 0, d->unit, sizeof d->unit);
	load_str(c, m, "source", Y_REQUIRED, d->source, sizeof d->source);
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
			ydiag_add(c->diag, c->file, m->line, m->col,
				  "%s: mode must lie within [min, max]", name);
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
			ydiag_add(c->diag, c->file, m->line, m->col,
				  "%s: a lognormal's point must be greater than zero", name);
		break;
	}
	if (k >= 0)
		d->kind = (enum dist_kind)k;
	if ((k == DIST_UNIFORM || k == DIST_TRIANGULAR) && !isnan(d->min) && !isnan(d->max)) {
		if (!(d->min < d->max))
			ydiag_add(c->diag, c->file, m->line, m->col, "%s: min must be below max",
				  name);
		else
			dist_check_point(c, m, name, d, d->min, d->max);
	}
	ycheck_unknown(c, m);
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
	ycheck_unknown(c, sec);
	/* fractions must be fractions */
	static const enum assumption fracs[] = {ASM_NATIVE_CUT, ASM_SHARE_ATTN, ASM_SHARE_DRAFT,
						ASM_SHARE_TREE, ASM_SHARE_OVERHEAD,
						ASM_TREE_SCALE_FRAC};
	for (size_t i = 0; i < sizeof fracs / sizeof *fracs; i++) {
		const struct dist *d = &cal->asm_[fracs[i]];
		struct ydoc_node *m = ydoc_get(sec, asm_names[fracs[i]]);
		if (m && (d->point < 0 || d->point > 1 ||
			  (!isnan(d->min) && d->min < 0) || (!isnan(d->max) && d->max > 1)))
			ydiag_add(c->diag, c->file, m->line, m->col,
				  "%s: a fraction must stay within [0, 1]", asm_names[fracs[i]]);
	}
}

/* ---------------------------------------------------------------- files */

struct section {
	const char *name;
	void (*load)(struct calib *, struct yctx *, struct ydoc_node *);
	char file[4096]; /* where it was found */
	int line;
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

static void cross_check(struct calib *cal, struct ydiag *diag, struct section *secs)
{
	struct {
		const char *gpu, *what;
		int sec;
	} refs[] = {{cal->sglang_b8.gpu, "anchors.sglang_b8.gpu", 3},
		    {cal->sglang_b16.gpu, "anchors.sglang_b16.gpu", 3},
		    {cal->moe_ref.gpu, "moe_reference.gpu", 4}};
	for (size_t i = 0; i < 3; i++)
		if (refs[i].gpu[0] && secs[0].file[0] && !calib_gpu(cal, refs[i].gpu))
			ydiag_add(diag, secs[refs[i].sec].file, secs[refs[i].sec].line, 1,
				  "%s: '%s' is not in the GPU catalog", refs[i].what, refs[i].gpu);
}

int calib_load(struct calib *cal, const char *path, struct ydiag *diag)
{
	struct section secs[] = {
		{"gpus", load_gpus, "", 0},         {"model", load_model, "", 0},
		{"drafter", load_drafter, "", 0},   {"anchors", load_anchors, "", 0},
		{"moe_reference", load_moe_reference, "", 0},
		{"assumptions", load_assumptions, "", 0},
	};
	size_t nsecs = sizeof secs / sizeof *secs, before = diag->n;
	struct stat st;
	int rc = 0;

	memset(cal, 0, sizeof *cal);
	snprintf(cal->path, sizeof cal->path, "%s", path);
	if (stat(path, &st) != 0) {
		ydiag_add(diag, path, 0, 0, "no such calibration file or folder");
		return DDT_EINPUT;
	}
	if (S_ISDIR(st.st_mode)) {
		struct dirent **list;
		int n = scandir(path, &list, yaml_name, alphasort);
		if (n < 0) {
			ydiag_add(diag, path, 0, 0, "cannot read folder");
			return DDT_EIO;
		}
		for (int i = 0; i < n; i++) {
			char *file = fsx_join(path, list[i]->d_name);
			struct ydoc *doc = NULL;
			if (file && ydoc_load_file(&doc, file, diag) == 0)
				load_doc(cal, doc, secs, nsecs, diag);
			ydoc_free(doc);
			free(file);
			free(list[i]);
		}
		free(list);
	} else {
		struct ydoc *doc = NULL;
		if (ydoc_load_file(&doc, path, diag) == 0)
			load_doc(cal, doc, secs, nsecs, diag);
		ydoc_free(doc);
	}
	for (size_t s = 0; s < nsecs; s++)
		if (!secs[s].file[0])
			ydiag_add(diag, path, 0, 0, "missing section '%s'", secs[s].name);
	cross_check(cal, diag, secs);
	if (diag->n > before)
		rc = DDT_EINPUT;
	return rc;
}

void calib_free(struct calib *c)
{
	free(c->gpus);
	c->gpus = NULL;
	c->ngpus = 0;
}

const struct gpu *calib_gpu(const struct calib *c, const char *id)
{
	for (size_t i = 0; i < c->ngpus; i++)
		if (!strcmp(c->gpus[i].id, id))
			return &c->gpus[i];
	return NULL;
}

/* ---------------------------------------------------------------- overrides */

static int set_field(void *obj, const struct field *f, size_t n, const char *key, double v,
		     const char *full)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].key, key)) {
			if ((f[i].flags & Y_POSITIVE) && !(v > 0))
				return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
			if ((f[i].flags & Y_NONNEG) && v < 0)
				return err_set(DDT_EINPUT, "--set %s: must not be negative", full);
			if ((f[i].flags & Y_INTEGER) && v != floor(v))
				return err_set(DDT_EINPUT, "--set %s: must be a whole number", full);
			*(double *)((char *)obj + f[i].off) = v;
			return 0;
		}
	return err_set(DDT_EINPUT, "--set %s: no such key", full);
}

static int set_assumption(struct calib *c, const char *name, double v, const char *full)
{
	for (int a = 0; a < ASM_COUNT; a++)
		if (!strcmp(asm_names[a], name)) {
			struct dist *d = &c->asm_[a];
			if (a != ASM_MOE_TRANSFER && (v < 0 || v > 1))
				return err_set(DDT_EINPUT, "--set %s: a fraction must be within [0, 1]",
					       full);
			if (a == ASM_MOE_TRANSFER && !(v > 0))
				return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
			d->point = v;
			d->kind = DIST_FIXED;
			d->overridden = 1;
			return 0;
		}
	return err_set(DDT_EINPUT, "--set %s: no such key", full);
}

int calib_set(struct calib *c, const char *key, const char *value)
{
	char buf[256], *dot, *rest;
	double v;

	if (ynum_parse(value, &v) != 0)
		return err_set(DDT_EINPUT, "--set %s: '%s' is not a finite number", key, value);
	if (strlen(key) >= sizeof buf)
		return err_set(DDT_EINPUT, "--set: key too long");
	strcpy(buf, key);
	dot = strchr(buf, '.');
	if (!dot)
		return set_assumption(c, buf, v, key);
	*dot = '\0';
	rest = dot + 1;
	if (!strcmp(buf, "assumptions"))
		return set_assumption(c, rest, v, key);
	if (!strcmp(buf, "model"))
		return set_field(&c->model, geometry_fields, NFIELDS(geometry_fields), rest, v, key);
	if (!strcmp(buf, "drafter"))
		return set_field(&c->drafter, drafter_fields, NFIELDS(drafter_fields), rest, v, key);
	if (!strcmp(buf, "gpus") || !strcmp(buf, "anchors")) {
		char *field = strchr(rest, '.');
		if (!field)
			return err_set(DDT_EINPUT, "--set %s: no such key", key);
		*field++ = '\0';
		if (!strcmp(buf, "gpus")) {
			struct gpu *g = (struct gpu *)calib_gpu(c, rest);
			if (!g)
				return err_set(DDT_EINPUT, "--set %s: no GPU '%s' in the catalog", key,
					       rest);
			return set_field(g, gpu_fields, NFIELDS(gpu_fields), field, v, key);
		}
		struct anchor *a = !strcmp(rest, "sglang_b8")    ? &c->sglang_b8
				   : !strcmp(rest, "sglang_b16") ? &c->sglang_b16
								 : NULL;
		if (!strcmp(rest, "sglang_limits") && !strcmp(field, "max_budget"))
			return v >= 1 && v == floor(v)
				       ? (c->sglang_max_budget = v, 0)
				       : err_set(DDT_EINPUT, "--set %s: must be a whole number", key);
		if (!a)
			return err_set(DDT_EINPUT, "--set %s: no anchor '%s'", key, rest);
		int rc = set_field(a, anchor_fields, NFIELDS(anchor_fields), field, v, key);
		if (rc)
			return rc;
		if (!strcmp(field, "step_ms"))
			a->tok_s = a->accept = NAN;
		else if (!isnan(a->tok_s) && !isnan(a->accept))
			a->step_ms = a->concurrency * a->accept / a->tok_s * 1000.0;
		return 0;
	}
	if (!strcmp(buf, "moe_reference")) {
		double m;
		char tail[8];
		if (!strcmp(rest, "tp"))
			return v >= 1 && v == floor(v)
				       ? (c->moe_ref.tp = v, 0)
				       : err_set(DDT_EINPUT, "--set %s: must be a whole number", key);
		if (sscanf(rest, "m%lf_m%7s", &m, tail) == 2 && !strcmp(tail, "s")) {
			for (int i = 0; i < c->moe_ref.npoints; i++)
				if (c->moe_ref.points[i].m == m) {
					if (!(v > 0))
						return err_set(DDT_EINPUT,
							       "--set %s: must be greater than zero", key);
					c->moe_ref.points[i].step_ms = v;
					return 0;
				}
			return err_set(DDT_EINPUT, "--set %s: no MoE reference point at m=%g", key, m);
		}
	}
	return err_set(DDT_EINPUT, "--set %s: no such key", key);
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

double dist_quantile(const struct dist *d, double q)
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
