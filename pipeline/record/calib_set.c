/* calib_set.c - command-line overrides of the calibration's values
 * (--set KEY=VALUE, --moe-reference FILE), the keys they take, and what
 * each replaced. Facts only: what is fitted to them is the calibrate
 * stage's to make again. */
#include "calib.h"

#include "calib_fields.h"
#include "csv.h"
#include "err.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- overrides */

#define NOKEY (-1) /* set_value: no such key (calib_set names the nearest ones) */

static int key_value(const struct calib *c, const struct xfer_table *t, const char *key,
		     char *val, size_t len);

/* Sets number key of obj by its table s (yschema_set_num: the loader's
 * checks); NOKEY when s has no such settable key. */
static int set_field(void *obj, const struct yschema *s, const char *key, double v,
		     const char *full)
{
	char label[300];
	snprintf(label, sizeof label, "--set %s", full);
	int rc = yschema_set_num(s, obj, key, v, label);
	return rc == YSCHEMA_NOKEY ? NOKEY : rc;
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
static int set_transfer(const struct calib *c, struct xfer_table *t, char *rest, double v,
			const char *full)
{
	char *to = strchr(rest, '.'), *range = NULL;
	int hits = 0;
	if (!to)
		return NOKEY;
	*to++ = '\0';
	if ((range = strchr(to, '.')) != NULL)
		*range++ = '\0';
	for (int i = 0; t && i < t->nxfer; i++) {
		struct xfer_entry *e = &t->xfer[i];
		const struct gpu *gf = calib_gpu(c, e->from), *gt = calib_gpu(c, e->to);
		int from_ok = !strcmp(e->from, rest) || (gf && !strcmp(calib_family(c, gf->arch), rest));
		int to_ok = !strcmp(e->to, to) || (gt && !strcmp(calib_family(c, gt->arch), to));
		if (!from_ok || !to_ok || (range && strcmp(e->range, range)))
			continue;
		if (!(v > 0))
			return err_set(DDT_EINPUT, "--set %s: must be greater than zero", full);
		dist_fix(&e->d, v);
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
		if (c->moe_ref.points[i].m == m)
			return set_field(&c->moe_ref.points[i], &calib_point_schema, "step_ms", v, full);
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
		return set_field(&c->moe_ref, &calib_moe_ref_schema, rest, v, full);
	if (!strcmp(rest, "floor_us")) /* 0: no per-call floor */
		return set_field(&c->moe_ref, &calib_floor_schema, "value", v, full);
	/* derived, in no file; 0: the anchors take the curve's own MoE */
	if (!strcmp(rest, "anchor_b8_ms") || !strcmp(rest, "anchor_b16_ms")) {
		if (v < 0)
			return err_set(DDT_EINPUT, "--set %s: must not be negative", full);
		c->moe_ref.anchor_ms[rest[8] == '1'] = v;
		return 0;
	}
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
	int rc = set_field(&c->ar, &calib_ar_schema, rest, v, full); /* per_layer, gpus */
	if (rc != NOKEY)
		return rc;
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
	if (!strcmp(rest, "sglang_limits"))
		return set_field(c, &calib_limits_schema, field, v, full);
	struct anchor *a = !strcmp(rest, "sglang_b8")    ? &c->sglang_b8
			   : !strcmp(rest, "sglang_b16") ? &c->sglang_b16
							 : NULL;
	if (!a)
		return NOKEY;
	double step = a->step_ms;
	int rc = set_field(a, &calib_anchor_schema, field, v, full);
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
static int set_value(struct calib *c, struct xfer_table *t, const char *key, double v)
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
		return set_transfer(c, t, rest, v, key);
	if (!strcmp(buf, "model"))
		return set_field(&c->model, &calib_geometry_schema, rest, v, key);
	if (!strcmp(buf, "drafter"))
		return set_field(&c->drafter, &calib_drafter_schema, rest, v, key);
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
		return set_field(g, &calib_gpu_schema, field, v, key);
	}
	return NOKEY;
}

/* Applies one override without logging it; NOKEY for an unknown key. */
static int set_one(struct calib *c, struct xfer_table *t, const char *key, const char *value)
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
		return !key_value(c, t, key, NULL, 0) ? NOKEY
			: err_set(DDT_EINPUT, "--set %s: '%s' is not a finite number", key, value);
	return set_value(c, t, key, v);
}


/* ---------------------------------------------------------------- keys */

static int key_num(calib_key_fn fn, void *ctx, const char *key, double v)
{
	char val[40];
	snprintf(val, sizeof val, isnan(v) ? "" : "%.9g", v);
	return fn(ctx, key, val);
}

/* The transfer keys: every entry, every pair, every pair of families. */
static int keys_transfer(const struct calib *c, const struct xfer_table *t, calib_key_fn fn,
			 void *ctx)
{
	char key[160], fam[CALIB_MAX_XFER][64];
	int nfam = 0, rc = 0;
	for (int i = 0; t && i < t->nxfer && !rc; i++) {
		const struct xfer_entry *e = &t->xfer[i];
		calib_assumption_label(t, ASM_COUNT + i, key, sizeof key);
		rc = key_num(fn, ctx, key, e->d.point);
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
	rc = rc ? rc : yschema_keys(&calib_moe_ref_schema, r, "moe_reference", fn, ctx);
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.floor_us", r->floor_us);
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.anchor_b8_ms", r->anchor_ms[0]);
	rc = rc ? rc : key_num(fn, ctx, "moe_reference.anchor_b16_ms", r->anchor_ms[1]);
	for (int p = 0; p < MOE_P_COUNT && !rc; p++) {
		snprintf(key, sizeof key, "moe_reference.physical.%s", moe_param_names[p]);
		rc = key_num(fn, ctx, key, r->phys.value[p]);
	}
	for (int i = 0; i < r->npoints && !rc; i++) {
		snprintf(key, sizeof key, "moe_reference.%s.m%g_ms", r->gpu, r->points[i].m);
		rc = key_num(fn, ctx, key, r->points[i].step_ms);
	}
	return rc;
}

int calib_keys(const struct calib *c, const struct xfer_table *t, calib_key_fn fn, void *ctx)
{
	const struct anchor *a8 = &c->sglang_b8;
	char key[160];
	int rc = 0;
	for (int a = 0; a < ASM_COUNT && !rc; a++)
		rc = key_num(fn, ctx, asm_names[a], c->asm_[a].point);
	rc = rc ? rc : keys_transfer(c, t, fn, ctx);
	rc = rc ? rc : yschema_keys(&calib_anchor_schema, a8, "anchors.sglang_b8", fn, ctx);
	rc = rc ? rc : yschema_keys(&calib_anchor_schema, &c->sglang_b16, "anchors.sglang_b16", fn, ctx);
	rc = rc ? rc : yschema_keys(&calib_limits_schema, c, "anchors.sglang_limits", fn, ctx);
	rc = rc ? rc : keys_reference(c, fn, ctx);
	rc = rc ? rc : yschema_keys(&calib_ar_schema, &c->ar, "allreduce", fn, ctx);
	/* the all-reduce per step at the b8 anchor's width, as the documents show it */
	for (int i = 0; i < c->ar.n && !rc; i++) {
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
		rc = yschema_keys(&calib_gpu_schema, &c->gpus[i], key, fn, ctx);
	}
	rc = rc ? rc : yschema_keys(&calib_geometry_schema, &c->model, "model", fn, ctx);
	rc = rc ? rc : yschema_keys(&calib_drafter_schema, &c->drafter, "drafter", fn, ctx);
	return rc;
}

/* The table of a --set key's section ("gpus.b300.bw_tbps": the GPU
 * catalog's), or NULL for a key of no table (the assumptions, curves,
 * transfers, laws). */
static const struct yschema *key_schema(const char *key)
{
	const char *dot = strchr(key, '.');
	size_t n = dot ? (size_t)(dot - key) : 0;
	int parts = 1;
	for (const char *p = key; (p = strchr(p, '.')) != NULL; p++)
		parts++;
#define FIRST(s) (n == strlen(s) && !strncmp(key, s, n))
	if (FIRST("gpus") && parts == 3)
		return &calib_gpu_schema;
	if (FIRST("model") && parts == 2)
		return &calib_geometry_schema;
	if (FIRST("drafter") && parts == 2)
		return &calib_drafter_schema;
	if (FIRST("moe_reference") && parts == 2)
		return &calib_moe_ref_schema;
	if (FIRST("allreduce") && parts == 2)
		return &calib_ar_schema;
	if (FIRST("anchors") && parts == 3)
		return !strncmp(key, "anchors.sglang_limits.", 22) ? &calib_limits_schema : &calib_anchor_schema;
#undef FIRST
	return NULL;
}

int calib_key_about(const char *key, char *buf, size_t len)
{
	const struct yschema *s = key_schema(key);
	const struct yschema_field *f = s ? yschema_find(s, strrchr(key, '.') + 1) : NULL;
	char what[120];
	if (!f || (f->type != YS_NUM && f->type != YS_INT) || (f->flags & YS_NOSET))
		return 0;
	snprintf(buf, len, "%s: %s%s%s%s", yschema_describe(f, what, sizeof what),
		 f->help ? f->help : "", f->source ? " [" : "", f->source ? f->source : "",
		 f->source ? "]" : "");
	return 1;
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
static int key_value(const struct calib *c, const struct xfer_table *t, const char *key,
		     char *val, size_t len)
{
	struct key_find f = {key, val, len};
	if (val && len)
		val[0] = '\0';
	return calib_keys(c, t, key_find_fn, &f) == 1;
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
static int no_such_key(const struct calib *c, const struct xfer_table *t, const char *key)
{
	const char *dot = strrchr(key, '.');
	struct near s = {.key = key, .last = dot ? dot : "", .bound = (int)strlen(key) / 6};
	char hint[4 * 170] = "";
	size_t off = 0;
	if (s.bound < 2)
		s.bound = 2;
	calib_keys(c, t, near_fn, &s);
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

int calib_set(struct calib *c, struct xfer_table *t, const char *key, const char *value)
{
	struct calib_override o = {0};
	int rc;
	if (c->nsets == CALIB_MAX_SETS)
		return err_set(DDT_EINPUT, "--set %s: at most %d overrides", key, CALIB_MAX_SETS);
	if (strlen(key) >= sizeof o.key || strlen(value) >= sizeof o.value)
		return err_set(DDT_EINPUT, "--set %s: key or value too long", key);
	key_value(c, t, key, o.was, sizeof o.was);
	if ((rc = set_one(c, t, key, value)) == NOKEY)
		return no_such_key(c, t, key);
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

int calib_set_arg(struct calib *c, struct xfer_table *t, const char *arg)
{
	char key[256];
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof key)
		return err_set(DDT_EINPUT, "--set '%s': expected KEY=VALUE", arg);
	memcpy(key, arg, (size_t)(eq - arg));
	key[eq - arg] = '\0';
	return calib_set(c, t, key, eq + 1);
}
