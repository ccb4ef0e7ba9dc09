/* regress.c - verdicts per series and night, their tok/s impact, verdicts.yaml. */
#include "regress.h"

#include "err.h"
#include "fsx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[REG_COUNT] = {
	"new", "not enough history", "ok", "improvement", "suspect", "regression", "outlier",
	"failed", "skipped"};

const char *regress_verdict_name(enum regress_verdict v)
{
	return (unsigned)v < REG_COUNT ? verdict_names[v] : "?";
}

int regress_verdict_parse(const char *s, enum regress_verdict *out)
{
	for (int i = 0; i < REG_COUNT; i++)
		if (!strcmp(s, verdict_names[i])) {
			*out = (enum regress_verdict)i;
			return 0;
		}
	return -1;
}

/* ---------------------------------------------------------------- config */

/* Reads the op -> component map of regress.impact. */
static void load_impact(struct regress_conf *c, struct yctx *y, struct ydoc_node *map)
{
	for (size_t i = 0; i < map->n; i++) {
		struct ydoc_node *k = map->keys[i], *v = map->items[i];
		int comp = -1;
		map->used[i] = 1;
		if (ynode_expect(y, v, YDOC_SCALAR, k->str))
			continue;
		for (int j = 0; j < COMP_COUNT; j++)
			if (!strcmp(v->str, model_comp_name((enum model_comp)j)))
				comp = j;
		if (comp < 0) {
			char names[160] = "";
			for (int j = 0; j < COMP_COUNT; j++)
				snprintf(names + strlen(names), sizeof names - strlen(names),
					 "%s%s", j ? ", " : "",
					 model_comp_name((enum model_comp)j));
			ydiag_add(y->diag, y->file, v->line, v->col,
				  "impact.%s: expected a model component (%s), got '%s'", k->str,
				  names, v->str);
			continue;
		}
		if (c->nimpact == REGRESS_MAX_IMPACT || strlen(k->str) >= sizeof c->impact_op[0]) {
			ydiag_add(y->diag, y->file, k->line, k->col,
				  "impact: at most %d ops of at most 31 characters",
				  REGRESS_MAX_IMPACT);
			continue;
		}
		snprintf(c->impact_op[c->nimpact], sizeof c->impact_op[0], "%s", k->str);
		c->impact_comp[c->nimpact++] = (enum model_comp)comp;
	}
}

int regress_conf_load(struct regress_conf *c, const struct tmpl *t, struct ydiag *diag)
{
	const char *file = t->path, *src = NULL;
	struct ydoc_node *sec = tmpl_section(t, "regress", &file), *imp = NULL;
	struct yctx y = {file, diag};
	size_t before = diag->n;
	double pct = NAN;

	memset(c, 0, sizeof *c);
	if (!sec) {
		ydiag_add(diag, t->path, 0, 0, "missing required section 'regress'");
		return DDT_EINPUT;
	}
	if (ynode_expect(&y, sec, YDOC_MAP, "regress"))
		return DDT_EINPUT;
	if (!yget_str(&y, sec, "source", Y_REQUIRED, &src) && src)
		snprintf(c->source, sizeof c->source, "%s", src);
	yget_int(&y, sec, "baseline_nights", Y_REQUIRED | Y_POSITIVE, &c->baseline_nights);
	yget_int(&y, sec, "min_good_nights", Y_REQUIRED | Y_POSITIVE, &c->min_good_nights);
	yget_num(&y, sec, "mad_to_sigma", Y_REQUIRED | Y_POSITIVE, &c->mad_to_sigma);
	if (!yget_num(&y, sec, "min_delta_pct", Y_REQUIRED | Y_NONNEG, &pct))
		c->min_delta_frac = pct / 100;
	yget_num(&y, sec, "noise_multiple", Y_REQUIRED | Y_NONNEG, &c->noise_multiple);
	yget_num(&y, sec, "z_threshold", Y_REQUIRED | Y_NONNEG, &c->z_threshold);
	yget_int(&y, sec, "confirm_nights", Y_REQUIRED | Y_POSITIVE, &c->confirm_nights);
	if (!yget_node(&y, sec, "impact", YDOC_MAP, Y_REQUIRED, &imp) && imp)
		load_impact(c, &y, imp);
	if (c->min_good_nights > c->baseline_nights) {
		struct ydoc_node *n = ydoc_get(sec, "min_good_nights");
		ydiag_add(diag, file, n->line, n->col,
			  "min_good_nights (%d) exceeds baseline_nights (%d)", c->min_good_nights,
			  c->baseline_nights);
	}
	ycheck_unknown(&y, sec);
	return diag->n > before ? DDT_EINPUT : 0;
}

/* ---------------------------------------------------------------- verdicts */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of v[0..n) (n > 0); sorts v. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A series' walk state: where the current level started, the noise carried
 * over a confirmed change, and the run of flagged nights in progress. */
struct walk {
	size_t seg_start;   /* first point of the current level */
	double carry_noise; /* relative sigma carried over a step; NaN: none */
	size_t run_start;   /* first point of the flagged run */
	int run_len, run_dir;
	int measured;       /* measured points so far */
};

/* Collects up to c->baseline_nights good values before point i of the current
 * level into vals (the most recent first); returns how many. */
static size_t good_before(const struct regress_conf *c, const struct hist_series *s,
			  const struct walk *w, size_t i, double *vals)
{
	size_t n = 0;
	for (size_t j = i; j-- > w->seg_start && n < (size_t)c->baseline_nights;)
		if (s->pts[j].in_baseline)
			vals[n++] = s->pts[j].median_us;
	return n;
}

/* Fills baseline, noise, delta, z and band of p from the good values; returns
 * 1 when p is flagged (outside the band). */
static int judge(const struct regress_conf *c, struct hist_point *p, double *vals, size_t n,
		 double carry_noise)
{
	double base = median(vals, n), sigma;

	for (size_t k = 0; k < n; k++)
		vals[k] = fabs(vals[k] - base);
	sigma = n >= (size_t)c->min_good_nights ? c->mad_to_sigma * median(vals, n)
						: carry_noise * base;
	p->baseline_us = base;
	p->noise_frac = sigma / base;
	p->delta_frac = p->median_us / base - 1;
	p->z = sigma > 0 ? (p->median_us - base) / sigma : NAN;
	double thr = fmax(c->min_delta_frac, c->noise_multiple * p->noise_frac);
	double half = fmax(thr, c->z_threshold * p->noise_frac);
	p->band_lo_us = base * (1 - half);
	p->band_hi_us = base * (1 + half);
	/* identical baseline nights (sigma 0): the z test cannot speak, the
	 * minimum change alone decides */
	int z_big = sigma > 0 ? fabs(p->z) > c->z_threshold : p->delta_frac != 0;
	return fabs(p->delta_frac) >= thr && z_big;
}

int regress_differs(const struct regress_conf *c, double a_us, double b_us, double noise_frac)
{
	double noise = isfinite(noise_frac) ? noise_frac : 0;
	double delta = b_us / a_us - 1;
	if (!isfinite(delta))
		return 0;
	if (fabs(delta) < fmax(c->min_delta_frac, c->noise_multiple * noise))
		return 0;
	if (noise > 0 && fabs(delta) <= c->z_threshold * noise)
		return 0;
	return delta > 0 ? 1 : delta < 0 ? -1 : 0;
}

/* The flagged run in progress reverted (or turned around): its nights were
 * one-offs. */
static void run_to_outliers(struct hist_series *s, struct walk *w, size_t end)
{
	for (size_t j = w->run_start; w->run_len && j < end; j++)
		if (s->pts[j].status == REC_OK)
			s->pts[j].verdict = REG_OUTLIER;
	w->run_len = 0;
}

/* Point i is flagged in direction dir: suspect, or the night that confirms. */
static void on_flagged(const struct regress_conf *c, struct hist_series *s, struct walk *w,
		       size_t i, int dir)
{
	struct hist_point *p = &s->pts[i];
	if (w->run_len && dir != w->run_dir)
		run_to_outliers(s, w, i);
	if (!w->run_len++) {
		w->run_start = i;
		w->run_dir = dir;
	}
	if (w->run_len < c->confirm_nights) {
		p->verdict = REG_SUSPECT;
		return;
	}
	/* confirmed: the new level starts at the run's first night */
	p->verdict = dir > 0 ? REG_REGRESSION : REG_IMPROVEMENT;
	for (size_t j = w->run_start; j <= i; j++)
		if (s->pts[j].status == REC_OK)
			s->pts[j].in_baseline = 1;
	w->seg_start = w->run_start;
	w->carry_noise = p->noise_frac;
	w->run_len = 0;
}

/* Decides point i's verdict as of its own night and revises earlier ones. */
static void walk_point(const struct regress_conf *c, struct hist_series *s, struct walk *w,
		       size_t i, double *vals)
{
	struct hist_point *p = &s->pts[i];
	size_t n;

	p->in_baseline = 0;
	p->baseline_us = p->noise_frac = p->delta_frac = p->z = NAN;
	p->band_lo_us = p->band_hi_us = NAN;
	if (p->status != REC_OK) {
		p->verdict = p->status == REC_FAILED ? REG_FAILED : REG_SKIPPED;
		return;
	}
	n = good_before(c, s, w, i, vals);
	if (!w->measured++) {
		p->verdict = REG_NEW;
		p->in_baseline = 1;
	} else if (n < (size_t)c->min_good_nights && (isnan(w->carry_noise) || !n)) {
		p->verdict = REG_SHORT;
		p->in_baseline = 1;
		if (n) { /* for display: how far from what little there is */
			p->baseline_us = median(vals, n);
			p->delta_frac = p->median_us / p->baseline_us - 1;
		}
	} else if (judge(c, p, vals, n, w->carry_noise)) {
		on_flagged(c, s, w, i, p->delta_frac > 0 ? 1 : -1);
	} else {
		p->verdict = REG_OK;
		p->in_baseline = 1;
		run_to_outliers(s, w, i);
	}
}

void regress_series(const struct regress_conf *c, struct hist_series *s)
{
	struct walk w = {.carry_noise = NAN};
	double *vals = malloc((size_t)(c->baseline_nights > 0 ? c->baseline_nights : 1) *
			      sizeof *vals);

	if (!vals) { /* cannot judge without scratch space: say so per point */
		for (size_t i = 0; i < s->n; i++)
			s->pts[i].verdict = s->pts[i].verdict_night = REG_SHORT;
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		walk_point(c, s, &w, i, vals);
		s->pts[i].verdict_night = s->pts[i].verdict;
	}
	free(vals);
}

void regress_history(const struct regress_conf *c, struct history *h)
{
	for (size_t i = 0; i < h->n; i++)
		regress_series(c, &h->series[i]);
}

/* ---------------------------------------------------------------- impact */

static int impact_comp(const struct regress_conf *c, const char *op)
{
	for (int i = 0; i < c->nimpact; i++)
		if (!strcmp(c->impact_op[i], op))
			return (int)c->impact_comp[i];
	return -1;
}

static int impact_push(struct regress_impacts *out, size_t *cap, const struct regress_impact *im)
{
	if (out->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct regress_impact *v = realloc(out->v, ncap * sizeof *v);
		if (!v)
			return err_nomem();
		out->v = v;
		*cap = ncap;
	}
	out->v[out->n++] = *im;
	return 0;
}

/* The impact of point p of series s on scenario sc (comp >= 0). */
static void impact_eval(struct regress_impact *im, const struct model *m,
			const struct scenario *sc, const struct gpu *g)
{
	struct model_in in = {g,	  sc->pipeline,	   sc->block,
			      sc->budget, sc->concurrency, sc->accept[0]};
	struct model_out out;

	model_eval(m, &in, &out);
	double step_after = out.step_ms + out.ms[im->comp] * im->delta_frac;
	snprintf(im->scenario, sizeof im->scenario, "%s", sc->name);
	snprintf(im->target, sizeof im->target, "%s", g->id);
	im->accept = sc->accept[0];
	im->tok_s = out.tok_s;
	im->tok_s_after = sc->concurrency * sc->accept[0] / step_after * 1000.0;
	im->change_frac = out.step_ms / step_after - 1;
}

int regress_impact(struct regress_impacts *out, const struct regress_conf *c,
		   const struct history *h, size_t run, const struct model *m,
		   const struct scenario *scs, size_t nscs)
{
	size_t cap = 0;

	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_point *p = history_point_at(&h->series[i], run);
		if (!p ||
		    (p->verdict_night != REG_REGRESSION && p->verdict_night != REG_IMPROVEMENT))
			continue;
		struct regress_impact im = {.key = h->series[i].key, .verdict = p->verdict_night,
					    .delta_frac = p->delta_frac,
					    .comp = impact_comp(c, h->series[i].key.op),
					    .accept = NAN, .tok_s = NAN, .tok_s_after = NAN,
					    .change_frac = NAN};
		if (im.comp < 0 || !m) {
			im.comp = -1;
			if (impact_push(out, &cap, &im))
				goto nomem;
			continue;
		}
		for (size_t k = 0; k < nscs; k++) {
			const struct gpu *g = calib_gpu(m->cal, scs[k].target);
			if (!g || !scs[k].naccept)
				continue;
			impact_eval(&im, m, &scs[k], g);
			if (impact_push(out, &cap, &im))
				goto nomem;
		}
	}
	return 0;
nomem:
	regress_impacts_free(out);
	return DDT_ENOMEM;
}

void regress_impacts_free(struct regress_impacts *im)
{
	free(im->v);
	memset(im, 0, sizeof *im);
}

/* "+9.0%" with a true minus sign for negative numbers. */
static void pct_str(char *buf, size_t len, double frac)
{
	double pct = frac * 100;
	if (pct < 0)
		snprintf(buf, len, "\u2212%.1f%%", -pct);
	else
		snprintf(buf, len, "+%.1f%%", pct);
}

char *regress_impact_line(const struct regress_impact *im, char *buf, size_t len)
{
	char d[16], t[16];
	pct_str(d, sizeof d, im->delta_frac);
	if (im->comp < 0) {
		snprintf(buf, len,
			 "%s/%s %s %s \u2192 no model component (add the op to regress.impact)",
			 im->key.op, im->key.variant, im->key.params, d);
		return buf;
	}
	pct_str(t, sizeof t, im->change_frac);
	snprintf(buf, len, "%s %s \u2192 %s %s tok/s (%s, %.0f \u2192 %.0f tok/s)", im->key.op, d,
		 im->scenario, t, im->target, im->tok_s, im->tok_s_after);
	return buf;
}

/* ---------------------------------------------------------------- night */

static void entry_of(struct regress_entry *e, const struct hist_series *s,
		     const struct hist_point *p)
{
	memset(e, 0, sizeof *e);
	e->key = s->key;
	e->status = p->status;
	e->median_us = p->median_us;
	e->baseline_us = p->baseline_us;
	e->noise_frac = p->noise_frac;
	e->delta_frac = p->delta_frac;
	e->z = p->z;
	e->band_lo_us = p->band_lo_us;
	e->band_hi_us = p->band_hi_us;
	e->verdict = p->verdict_night;
	e->nights = (int)(p - s->pts) + 1;
	snprintf(e->reason, sizeof e->reason, "%s", p->reason);
}

/* The previous measured point of p in s, or NULL. */
static const struct hist_point *prev_measured(const struct hist_series *s,
					      const struct hist_point *p)
{
	while (p > s->pts)
		if ((--p)->status == REC_OK)
			return p;
	return NULL;
}

/* Whether point p, on its own night, reverted the flagged run just before it
 * (those suspect nights become outliers): p is not flagged, or flagged the
 * other way. A run that p confirms or continues is not reverted. */
static int reverts_run(const struct hist_point *p, const struct hist_point *q)
{
	if (!q || q->verdict_night != REG_SUSPECT)
		return 0;
	if (p->verdict_night == REG_REGRESSION || p->verdict_night == REG_IMPROVEMENT)
		return 0;
	return p->verdict_night != REG_SUSPECT || (p->delta_frac > 0) != (q->delta_frac > 0);
}

/* Appends the revisions point p of s makes (its night turns the suspect run
 * before it into outliers). Returns 0 or DDT_ENOMEM. */
static int add_revisions(struct regress_night *out, size_t *cap, const struct history *h,
			 const struct hist_series *s, const struct hist_point *p)
{
	const struct hist_point *q = prev_measured(s, p);
	if (!reverts_run(p, q))
		return 0;
	int up = q->delta_frac > 0;
	for (; q && q->verdict_night == REG_SUSPECT && (q->delta_frac > 0) == up;
	     q = prev_measured(s, q)) {
		if (out->nrev == *cap) {
			size_t ncap = *cap ? *cap * 2 : 8;
			struct regress_revision *v = realloc(out->revs, ncap * sizeof *v);
			if (!v)
				return err_nomem();
			out->revs = v;
			*cap = ncap;
		}
		struct regress_revision *rv = &out->revs[out->nrev++];
		memset(rv, 0, sizeof *rv);
		rv->key = s->key;
		snprintf(rv->run_id, sizeof rv->run_id, "%s", h->runs[q->run].run_id);
		rv->from = REG_SUSPECT;
		rv->to = REG_OUTLIER;
	}
	return 0;
}

int regress_night_build(struct regress_night *out, const struct history *h, size_t run,
			const struct regress_impacts *imp)
{
	size_t rcap = 0;

	memset(out, 0, sizeof *out);
	if (run >= h->nruns)
		return err_set(DDT_EINPUT, "no run %zu in the history", run);
	snprintf(out->run_id, sizeof out->run_id, "%s", h->runs[run].run_id);
	out->nruns = run + 1;
	out->entries = calloc(h->n ? h->n : 1, sizeof *out->entries);
	if (!out->entries)
		goto nomem;
	for (size_t i = 0; i < h->n; i++) {
		const struct hist_series *s = &h->series[i];
		const struct hist_point *p = history_point_at(s, run);
		if (!p)
			continue;
		entry_of(&out->entries[out->n], s, p);
		out->count[out->entries[out->n].verdict]++;
		out->n++;
		if (p->status == REC_OK && add_revisions(out, &rcap, h, s, p))
			goto nomem;
	}
	if (imp && imp->n) {
		out->impacts.v = malloc(imp->n * sizeof *imp->v);
		if (!out->impacts.v)
			goto nomem;
		memcpy(out->impacts.v, imp->v, imp->n * sizeof *imp->v);
		out->impacts.n = imp->n;
	}
	return 0;
nomem:
	regress_night_free(out);
	return err_nomem();
}

void regress_night_free(struct regress_night *n)
{
	free(n->entries);
	free(n->revs);
	regress_impacts_free(&n->impacts);
	memset(n, 0, sizeof *n);
}

static void emit_key(struct yout *y, const struct hist_key *k)
{
	yout_kv_str(y, "op", k->op);
	yout_kv_str(y, "variant", k->variant);
	yout_kv_str(y, "params", k->params);
	yout_kv_str(y, "device", k->device);
	yout_kv_str(y, "backend", k->backend);
	yout_kv_str(y, "build", k->build);
}

static void emit_entry(struct yout *y, const struct regress_entry *e)
{
	yout_map(y);
	emit_key(y, &e->key);
	yout_kv_str(y, "status", rec_status_name(e->status));
	yout_kv_str(y, "verdict", regress_verdict_name(e->verdict));
	yout_kv_int(y, "nights", e->nights);
	yout_kv_num(y, "median_us", e->median_us);
	yout_kv_num(y, "baseline_us", e->baseline_us);
	yout_kv_num(y, "noise_pct", e->noise_frac * 100);
	yout_kv_num(y, "delta_pct", e->delta_frac * 100);
	yout_kv_num(y, "z", e->z);
	yout_kv_num(y, "band_lo_us", e->band_lo_us);
	yout_kv_num(y, "band_hi_us", e->band_hi_us);
	yout_kv_str(y, "reason", e->reason);
	yout_end(y);
}

static void emit_impact(struct yout *y, const struct regress_impact *im)
{
	yout_map(y);
	emit_key(y, &im->key);
	yout_kv_str(y, "verdict", regress_verdict_name(im->verdict));
	yout_kv_num(y, "delta_pct", im->delta_frac * 100);
	yout_kv_str(y, "component", im->comp >= 0 ? model_comp_name((enum model_comp)im->comp)
						   : NULL);
	yout_kv_str(y, "scenario", im->scenario);
	yout_kv_str(y, "target", im->target);
	yout_kv_num(y, "accept", im->accept);
	yout_kv_num(y, "tok_s", im->tok_s);
	yout_kv_num(y, "tok_s_after", im->tok_s_after);
	yout_kv_num(y, "change_pct", im->change_frac * 100);
	yout_end(y);
}

void regress_night_emit(const struct regress_night *n, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	yout_kv_int(&y, "schema", 1);
	yout_kv_str(&y, "run_id", n->run_id);
	yout_kv_int(&y, "nights", (long long)n->nruns);
	yout_key(&y, "counts"); /* derived from series; for people reading the file */
	yout_map_flow(&y);
	for (int v = 0; v < REG_COUNT; v++)
		yout_kv_int(&y, regress_verdict_name((enum regress_verdict)v), n->count[v]);
	yout_end(&y);
	yout_key(&y, "series");
	yout_seq(&y);
	for (size_t i = 0; i < n->n; i++)
		emit_entry(&y, &n->entries[i]);
	yout_end(&y);
	yout_key(&y, "revised");
	yout_seq(&y);
	for (size_t i = 0; i < n->nrev; i++) {
		yout_map(&y);
		emit_key(&y, &n->revs[i].key);
		yout_kv_str(&y, "run_id", n->revs[i].run_id);
		yout_kv_str(&y, "from", regress_verdict_name(n->revs[i].from));
		yout_kv_str(&y, "to", regress_verdict_name(n->revs[i].to));
		yout_end(&y);
	}
	yout_end(&y);
	yout_key(&y, "impact");
	yout_seq(&y);
	for (size_t i = 0; i < n->impacts.n; i++)
		emit_impact(&y, &n->impacts.v[i]);
	yout_end(&y);
	yout_end(&y);
}

int regress_night_write(const struct regress_night *n, const char *path)
{
	struct fsx_file f;
	int rc = fsx_open(&f, path);
	if (rc)
		return rc;
	regress_night_emit(n, f.fp);
	if (ferror(f.fp)) {
		fsx_abort(&f);
		return err_set(DDT_EIO, "%s: write failed", path);
	}
	return fsx_commit(&f);
}

/* ---- reading it back ---- */

static void read_str(struct yctx *c, struct ydoc_node *m, const char *key, char *dst,
		     size_t len)
{
	const char *s = NULL;
	if (yget_str(c, m, key, Y_REQUIRED, &s) || !s)
		return;
	if (strlen(s) >= len) {
		struct ydoc_node *n = ydoc_get(m, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: longer than %zu characters", key,
			  len - 1);
		return;
	}
	memcpy(dst, s, strlen(s) + 1);
}

static void read_key(struct yctx *c, struct ydoc_node *m, struct hist_key *k)
{
	read_str(c, m, "op", k->op, sizeof k->op);
	read_str(c, m, "variant", k->variant, sizeof k->variant);
	read_str(c, m, "params", k->params, sizeof k->params);
	read_str(c, m, "device", k->device, sizeof k->device);
	read_str(c, m, "backend", k->backend, sizeof k->backend);
	read_str(c, m, "build", k->build, sizeof k->build);
}

static void read_verdict(struct yctx *c, struct ydoc_node *m, const char *key,
			 enum regress_verdict *out)
{
	const char *s = NULL;
	if (yget_str(c, m, key, Y_REQUIRED, &s) || !s)
		return;
	if (regress_verdict_parse(s, out)) {
		struct ydoc_node *n = ydoc_get(m, key);
		ydiag_add(c->diag, c->file, n->line, n->col, "%s: unknown verdict '%s'", key, s);
	}
}

static double read_pct(struct yctx *c, struct ydoc_node *m, const char *key)
{
	double v = NAN;
	yget_num(c, m, key, Y_REQUIRED | Y_NULLABLE, &v);
	return v / 100;
}

static void read_entry(struct yctx *c, struct ydoc_node *m, struct regress_entry *e)
{
	const char *st = NULL;
	memset(e, 0, sizeof *e);
	read_key(c, m, &e->key);
	if (!yget_str(c, m, "status", Y_REQUIRED, &st) && st && rec_status_parse(st, &e->status)) {
		struct ydoc_node *n = ydoc_get(m, "status");
		ydiag_add(c->diag, c->file, n->line, n->col, "status: unknown '%s'", st);
	}
	read_verdict(c, m, "verdict", &e->verdict);
	yget_int(c, m, "nights", Y_REQUIRED | Y_POSITIVE, &e->nights);
	e->median_us = e->baseline_us = e->z = e->band_lo_us = e->band_hi_us = NAN;
	yget_num(c, m, "median_us", Y_REQUIRED | Y_NULLABLE, &e->median_us);
	yget_num(c, m, "baseline_us", Y_REQUIRED | Y_NULLABLE, &e->baseline_us);
	e->noise_frac = read_pct(c, m, "noise_pct");
	e->delta_frac = read_pct(c, m, "delta_pct");
	yget_num(c, m, "z", Y_REQUIRED | Y_NULLABLE, &e->z);
	yget_num(c, m, "band_lo_us", Y_REQUIRED | Y_NULLABLE, &e->band_lo_us);
	yget_num(c, m, "band_hi_us", Y_REQUIRED | Y_NULLABLE, &e->band_hi_us);
	read_str(c, m, "reason", e->reason, sizeof e->reason);
	ycheck_unknown(c, m);
}

static void read_impact(struct yctx *c, struct ydoc_node *m, struct regress_impact *im)
{
	struct ydoc_node *comp = ydoc_get(m, "component");
	memset(im, 0, sizeof *im);
	read_key(c, m, &im->key);
	read_verdict(c, m, "verdict", &im->verdict);
	im->delta_frac = read_pct(c, m, "delta_pct");
	im->comp = -1;
	if (!comp)
		ydiag_add(c->diag, c->file, m->line, m->col, "missing required key 'component'");
	else if (comp->kind == YDOC_SCALAR && !(comp->plain && !strcmp(comp->str, "null"))) {
		for (int k = 0; k < COMP_COUNT; k++)
			if (!strcmp(comp->str, model_comp_name((enum model_comp)k)))
				im->comp = k;
		if (im->comp < 0)
			ydiag_add(c->diag, c->file, comp->line, comp->col,
				  "component: unknown '%s'", comp->str);
	}
	read_str(c, m, "scenario", im->scenario, sizeof im->scenario);
	read_str(c, m, "target", im->target, sizeof im->target);
	im->accept = im->tok_s = im->tok_s_after = NAN;
	yget_num(c, m, "accept", Y_REQUIRED | Y_NULLABLE, &im->accept);
	yget_num(c, m, "tok_s", Y_REQUIRED | Y_NULLABLE, &im->tok_s);
	yget_num(c, m, "tok_s_after", Y_REQUIRED | Y_NULLABLE, &im->tok_s_after);
	im->change_frac = read_pct(c, m, "change_pct");
	ycheck_unknown(c, m);
}

/* A required sequence of maps under key: its node, or NULL (problem noted). */
static struct ydoc_node *seq_of(struct yctx *c, struct ydoc_node *root, const char *key)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, root, key, YDOC_SEQ, Y_REQUIRED, &n) || !n)
		return NULL;
	for (size_t i = 0; i < n->n; i++)
		if (ynode_expect(c, n->items[i], YDOC_MAP, key))
			return NULL;
	return n;
}

static int read_root(struct regress_night *n, struct yctx *c, struct ydoc_node *root)
{
	struct ydoc_node *s, *r, *im;
	int schema = 0, nights = 0;

	yget_int(c, root, "schema", Y_REQUIRED | Y_POSITIVE, &schema);
	if (schema > 1)
		ydiag_add(c->diag, c->file, root->line, root->col, "schema %d is newer than 1",
			  schema);
	read_str(c, root, "run_id", n->run_id, sizeof n->run_id);
	yget_int(c, root, "nights", Y_REQUIRED | Y_POSITIVE, &nights);
	n->nruns = (size_t)nights;
	ydoc_get(root, "counts"); /* derived: recomputed below */
	s = seq_of(c, root, "series");
	r = seq_of(c, root, "revised");
	im = seq_of(c, root, "impact");
	ycheck_unknown(c, root);
	n->entries = calloc(s && s->n ? s->n : 1, sizeof *n->entries);
	n->revs = calloc(r && r->n ? r->n : 1, sizeof *n->revs);
	n->impacts.v = calloc(im && im->n ? im->n : 1, sizeof *n->impacts.v);
	if (!n->entries || !n->revs || !n->impacts.v)
		return err_nomem();
	for (size_t i = 0; s && i < s->n; i++) {
		read_entry(c, s->items[i], &n->entries[n->n]);
		n->count[n->entries[n->n++].verdict]++;
	}
	for (size_t i = 0; r && i < r->n; i++) {
		struct regress_revision *rv = &n->revs[n->nrev++];
		read_key(c, r->items[i], &rv->key);
		read_str(c, r->items[i], "run_id", rv->run_id, sizeof rv->run_id);
		read_verdict(c, r->items[i], "from", &rv->from);
		read_verdict(c, r->items[i], "to", &rv->to);
		ycheck_unknown(c, r->items[i]);
	}
	for (size_t i = 0; im && i < im->n; i++)
		read_impact(c, im->items[i], &n->impacts.v[n->impacts.n++]);
	return 0;
}

int regress_night_read(struct regress_night *n, const char *path, struct ydiag *diag)
{
	struct ydoc *doc = NULL;
	struct yctx c = {path, diag};
	size_t before = diag->n;
	int rc;

	memset(n, 0, sizeof *n);
	if ((rc = ydoc_load_file(&doc, path, diag)) != 0)
		return rc;
	if (!doc->root || ynode_expect(&c, doc->root, YDOC_MAP, "verdict file")) {
		if (!doc->root)
			ydiag_add(diag, path, 0, 0, "empty verdict file");
		ydoc_free(doc);
		return DDT_EINPUT;
	}
	rc = read_root(n, &c, doc->root);
	ydoc_free(doc);
	if (!rc && diag->n > before)
		rc = DDT_EINPUT;
	return rc;
}

int regress_conf_load_file(struct regress_conf *c, const char *path)
{
	struct tmpl t;
	struct ydiag diag = {0};
	int rc = tmpl_load(&t, path, &diag);

	if (!rc)
		rc = regress_conf_load(c, &t, &diag);
	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	tmpl_free(&t);
	ydiag_free(&diag);
	return rc;
}
