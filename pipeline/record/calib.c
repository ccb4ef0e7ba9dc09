/* calib.c - strict loading of the calibration (overrides: calib_set.c;
 * lookups: calib_query.c). */
#include "calib.h"

#include "calib_fields.h"
#include "err.h"
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- helpers */

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
		yschema_read(c, m, &gpu_schema, g);
		cal->ngpus++;
	}
}

static void load_model(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "model"))
		return;
	yschema_read(c, sec, &geometry_schema, &cal->model);
}

static void load_drafter(struct calib *cal, struct yctx *c, struct ydoc_node *sec)
{
	if (map_expect(c, sec, "drafter"))
		return;
	yschema_read(c, sec, &drafter_schema, &cal->drafter);
}

static void load_anchor(struct anchor *a, struct yctx *c, struct ydoc_node *m, const char *name)
{
	if (map_expect(c, m, name))
		return;
	yschema_read_fields(c, m, &anchor_schema, a);
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
		yschema_read(c, n, &limits_schema, cal);
	}
	yget_check_unknown(c, sec);
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
	const char *note = NULL;

	if (map_expect(c, sec, "moe_reference"))
		return;
	r->prov = PROV_MEASURED;
	yschema_read_fields(c, sec, &moe_ref_schema, r);
	{
		struct ydoc_node *g = ydoc_get(sec, "gpu");
		r->gpu_line = g ? g->line : sec->line;
		r->gpu_col = g ? g->col : sec->col;
	}
	yget_str(c, sec, "efficiency_note", 0, &note);
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
			yschema_read(c, m, &moe_point_schema, p);
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
		const struct yschema_range *r = &asm_ranges[a];
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
	yschema_read_fields(c, sec, &xfer_schema, cal);
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

	if (map_expect(c, sec, "allreduce"))
		return;
	yschema_read_fields(c, sec, &ar_schema, ar);
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
	struct yctx c = {doc->file, diag, NULL};
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

int calib_copy(struct calib *dst, const struct calib *src)
{
	*dst = *src;
	dst->gpus = malloc((src->ngpus ? src->ngpus : 1) * sizeof *dst->gpus);
	dst->ar.per_gpu = malloc((src->ar.n ? src->ar.n : 1) * sizeof *dst->ar.per_gpu);
	if (!dst->gpus || !dst->ar.per_gpu) {
		calib_free(dst);
		return err_nomem();
	}
	if (src->ngpus)
		memcpy(dst->gpus, src->gpus, src->ngpus * sizeof *dst->gpus);
	if (src->ar.n)
		memcpy(dst->ar.per_gpu, src->ar.per_gpu, src->ar.n * sizeof *dst->ar.per_gpu);
	return 0;
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
