/* regress.c - verdicts per series and night, their tok/s impact, verdicts.yaml. */
#include "regress.h"

#include "cpoint.h"
#include "err.h"
#include "fsx.h"
#include "sort.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[REG_COUNT] = {
	"new",	   "not enough history", "ok",	  "improvement", "suspect",
	"regression", "outlier",	    "failed", "skipped",     "drift",
	"environment changed", "not judgeable"};

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
		if (yget_expect(y, v, YDOC_SCALAR, k->str))
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
	if (yget_expect(&y, sec, YDOC_MAP, "regress"))
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
	if (!yget_num(&y, sec, "noise_floor_pct", Y_REQUIRED | Y_NONNEG, &pct))
		c->noise_floor_frac = pct / 100;
	yget_num(&y, sec, "change_max_p", Y_REQUIRED | Y_POSITIVE, &c->change_max_p);
	yget_int(&y, sec, "change_window_nights", Y_REQUIRED | Y_POSITIVE,
		 &c->change_window_nights);
	if (!yget_num(&y, sec, "new_series_jump_pct", Y_REQUIRED | Y_POSITIVE, &pct))
		c->new_series_jump_frac = pct / 100;
	if (!yget_num(&y, sec, "env_share_pct", Y_REQUIRED | Y_POSITIVE, &pct))
		c->env_share = pct / 100;
	yget_int(&y, sec, "env_min_series", Y_REQUIRED | Y_POSITIVE, &c->env_min_series);
	yget_num(&y, sec, "max_load_per_cpu", Y_REQUIRED | Y_POSITIVE, &c->max_load_per_cpu);
	yget_num(&y, sec, "max_cpu_others_pct", Y_REQUIRED | Y_NONNEG, &c->max_cpu_others_pct);
	yget_num(&y, sec, "max_cpu_steal_pct", Y_REQUIRED | Y_NONNEG, &c->max_cpu_steal_pct);
	yget_int(&y, sec, "max_gpu_other_procs", Y_REQUIRED | Y_NONNEG, &c->max_gpu_other_procs);
	if (!yget_node(&y, sec, "impact", YDOC_MAP, Y_REQUIRED, &imp) && imp)
		load_impact(c, &y, imp);
	if (c->change_max_p >= 1 || c->change_window_nights > 1000) {
		struct ydoc_node *n = ydoc_get(sec, c->change_max_p >= 1 ? "change_max_p"
									  : "change_window_nights");
		ydiag_add(diag, file, n->line, n->col, "%s",
			  c->change_max_p >= 1 ? "change_max_p: expected a p-value below 1"
					       : "change_window_nights: at most 1000");
	}
	if (c->min_good_nights > c->baseline_nights) {
		struct ydoc_node *n = ydoc_get(sec, "min_good_nights");
		ydiag_add(diag, file, n->line, n->col,
			  "min_good_nights (%d) exceeds baseline_nights (%d)", c->min_good_nights,
			  c->baseline_nights);
	}
	yget_check_unknown(&y, sec);
	return diag->n > before ? DDT_EINPUT : 0;
}

/* ---------------------------------------------------------------- verdicts */

/* Median of v[0..n) (n > 0); sorts v. */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, sort_cmp_double);
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
	int env_first;      /* the series continues another machine's: its first
			     * night is an environment change */
	size_t env_from;    /* then: the series it continues */
};

/* Scratch space of a walk: baseline values and the change window. */
struct scratch {
	double *vals;       /* [baseline_nights] */
	double *sorted;     /* [change_window_nights] */
	double *win;        /* [change_window_nights] */
	size_t *win_pt;     /* point index of each win value */
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

/* The last measured, judged point before i (a good night), or HIST_NO_RUN. */
static size_t last_good_run(const struct hist_series *s, size_t i)
{
	while (i--)
		if (s->pts[i].status == REC_OK && s->pts[i].verdict != REG_OUTLIER &&
		    s->pts[i].verdict != REG_UNJUDGED && s->pts[i].verdict != REG_SUSPECT)
			return s->pts[i].run;
	return HIST_NO_RUN;
}

/* Two levels among the sorted good values v[0..n) (n >= 2 x min_good_nights):
 * the widest gap that leaves at least three values and a fifth of them on
 * each side, when it is wider than four standard deviations of either group
 * (normal noise, cut at its widest gap, almost never is) and than the
 * minimum change. Their medians into lo/hi and the within sigma (the larger
 * group standard deviation, at least the floor) into sigma. */
static int bimodal(const struct regress_conf *c, const double *v, size_t n, double *lo,
		   double *hi, double *sigma)
{
	size_t least = n / 5 > 3 ? n / 5 : 3, cut = 0;
	double gap = 0, m1, v1, m2, v2;
	if (n < 2 * (size_t)c->min_good_nights || n < 2 * least)
		return 0;
	for (size_t k = least; k + least <= n; k++)
		if (v[k] - v[k - 1] > gap) {
			gap = v[k] - v[k - 1];
			cut = k;
		}
	if (!cut)
		return 0;
	cpoint_moments(v, 0, cut, &m1, &v1);
	cpoint_moments(v, cut, n, &m2, &v2);
	double s = fmax(sqrt(fmax(v1, v2)), c->noise_floor_frac * m1);
	if (gap <= 4 * s || m2 / m1 - 1 < c->min_delta_frac)
		return 0;
	*lo = cut % 2 ? v[cut / 2] : (v[cut / 2 - 1] + v[cut / 2]) / 2;
	size_t n2 = n - cut;
	*hi = n2 % 2 ? v[cut + n2 / 2] : (v[cut + n2 / 2 - 1] + v[cut + n2 / 2]) / 2;
	*sigma = s;
	return 1;
}

/* Whether point i sits on a level the series keeps returning to: among its
 * last 2 x baseline_nights measured nights, at least two lie within half
 * the minimum change of it, and the series left that level after one of
 * them (bimodal noise; a step's new level is not yet one it returned to). */
static int recurring_level(const struct regress_conf *c, const struct hist_series *s, size_t i)
{
	double v = s->pts[i].median_us, band = c->min_delta_frac / 2 * v;
	int near = 0, left = 0, seen_away = 0;
	size_t looked = 0;
	for (size_t j = i; j-- > 0 && looked < 2 * (size_t)c->baseline_nights;) {
		const struct hist_point *q = &s->pts[j];
		if (q->status != REC_OK || q->verdict == REG_UNJUDGED)
			continue;
		looked++;
		if (fabs(q->median_us - v) <= band) {
			near++;
			left |= seen_away; /* a night away from the level came after it */
		} else
			seen_away = 1;
	}
	return near >= 2 && left;
}

/* The sampling error of a night's median from its own samples, relative to
 * it (1.2533 sigma / sqrt(samples) for normal noise; the sigma from its
 * p10..p90 or stdev); NaN when the record has no spread. */
static double night_se_frac(const struct hist_point *p)
{
	if (!isfinite(p->spread_us) || p->samples < 2 || !(p->median_us > 0))
		return NAN;
	return 1.2533 * p->spread_us / sqrt((double)p->samples) / p->median_us;
}

/* Fills baseline, noise, delta, z and band of p from the good values; returns
 * 1 when p is flagged (outside the band). Two levels in the baseline (bimodal
 * noise) are two baselines: p is judged against the nearer. The noise is at
 * least the floor and at least the sampling error of p's own median (a
 * night whose samples scatter widely cannot be told apart by its median). */
static int judge(const struct regress_conf *c, struct history *h, struct hist_point *p,
		 double *vals, size_t n, double carry_noise)
{
	double base = median(vals, n), sigma, lo, hi, s2;

	qsort(vals, n, sizeof *vals, sort_cmp_double);
	if (bimodal(c, vals, n, &lo, &hi, &s2)) {
		base = fabs(p->median_us - lo) < fabs(p->median_us - hi) ? lo : hi;
		sigma = s2;
		history_reason_set(h, p, "bimodal: %.4g / %.4g us", lo, hi);
	} else {
		for (size_t k = 0; k < n; k++)
			vals[k] = fabs(vals[k] - base);
		sigma = n >= (size_t)c->min_good_nights ? c->mad_to_sigma * median(vals, n)
							: carry_noise * base;
		sigma = fmax(sigma, c->noise_floor_frac * base);
	}
	double se = night_se_frac(p) * base;
	if (se > sigma) { /* named when it is what keeps the night from being flagged */
		if (!p->reason[0] && regress_differs(c, base, p->median_us, sigma / base) &&
		    !regress_differs(c, base, p->median_us, se / base))
			history_reason_set(
				h, p, "the night's own samples scatter: its median is uncertain to %.1f%%",
				100 * se / base);
		sigma = se;
	}
	p->baseline_us = base;
	p->noise_frac = sigma / base;
	p->delta_frac = p->median_us / base - 1;
	p->z = sigma > 0 ? (p->median_us - base) / sigma : NAN;
	double thr = fmax(c->min_delta_frac, c->noise_multiple * p->noise_frac);
	double half = fmax(thr, c->z_threshold * p->noise_frac);
	p->band_lo_us = base * (1 - half);
	p->band_hi_us = base * (1 + half);
	/* identical baseline nights and no floor (sigma 0): the z test cannot
	 * speak, the minimum change alone decides */
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

const char *regress_compare(const struct regress_conf *c, const struct hist_point *a,
			    const struct hist_point *b, double *p, const char **test)
{
	*p = NAN;
	*test = "";
	if (a->status != REC_OK || b->status != REC_OK)
		return b->status != REC_OK ? rec_status_name(b->status) : "A not measured";
	double delta = b->median_us / a->median_us - 1;
	if (isfinite(a->spread_us) && isfinite(b->spread_us) && a->samples >= 2 &&
	    b->samples >= 2) {
		*test = "welch";
		*p = cpoint_welch_p(a->median_us, a->spread_us * a->spread_us, a->samples,
				b->median_us, b->spread_us * b->spread_us, b->samples);
		if (*p >= c->change_max_p || fabs(delta) < c->min_delta_frac)
			return "same";
		return delta > 0 ? "slower" : "faster";
	}
	*test = "history noise";
	double noise = isfinite(b->noise_frac) ? b->noise_frac : a->noise_frac;
	int d = regress_differs(c, a->median_us, b->median_us, noise);
	return d > 0 ? "slower" : d < 0 ? "faster" : "same";
}

/* The flagged run in progress reverted (or turned around): its nights were
 * one-offs. */
static void run_to_outliers(struct hist_series *s, struct walk *w, size_t end)
{
	for (size_t j = w->run_start; w->run_len && j < end; j++)
		if (s->pts[j].status == REC_OK && s->pts[j].verdict == REG_SUSPECT)
			s->pts[j].verdict = REG_OUTLIER;
	w->run_len = 0;
}

/* A new level starts at point `from` (confirmed on point i): the points
 * since are good nights of it, and the noise is carried over. */
static void new_level(struct hist_series *s, struct walk *w, size_t from, size_t i,
		      double noise)
{
	for (size_t j = from; j <= i; j++)
		if (s->pts[j].status == REC_OK && s->pts[j].verdict != REG_UNJUDGED)
			s->pts[j].in_baseline = 1;
	w->seg_start = from;
	if (isfinite(noise))
		w->carry_noise = noise;
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
	p->bad_run = s->pts[w->run_start].run;
	p->good_run = last_good_run(s, w->run_start);
	if (w->run_len < c->confirm_nights) {
		p->verdict = REG_SUSPECT;
		return;
	}
	/* confirmed: the new level starts at the run's first night */
	p->verdict = dir > 0 ? REG_REGRESSION : REG_IMPROVEMENT;
	new_level(s, w, w->run_start, i, p->noise_frac);
}
/* ---------------------------------------------------------------- changes */

/* The values of the current level up to point i, oldest first, at most
 * change_window_nights of them: every measured, judged night but outliers. */
static size_t level_window(const struct regress_conf *c, const struct hist_series *s,
			   const struct walk *w, size_t i, struct scratch *sc)
{
	size_t m = 0;
	for (size_t j = i + 1; j-- > w->seg_start && m < (size_t)c->change_window_nights;) {
		const struct hist_point *q = &s->pts[j];
		if (q->status != REC_OK || q->verdict == REG_OUTLIER || q->verdict == REG_UNJUDGED)
			continue;
		sc->win[m] = q->median_us;
		sc->win_pt[m++] = j;
	}
	for (size_t a = 0, b = m; a + 1 < b; a++, b--) {
		double t = sc->win[a];
		size_t u = sc->win_pt[a];
		sc->win[a] = sc->win[b - 1];
		sc->win_pt[a] = sc->win_pt[b - 1];
		sc->win[b - 1] = t;
		sc->win_pt[b - 1] = u;
	}
	return m;
}

/* Least squares of y[0..m) on a level then a straight line from a hinge h:
 * y = a for k <= h, a + b (k - h) after. The best hinge (at least two
 * points after it); a, b and the residual sum of squares into *a, *b, *rss. */
static size_t hinge_fit(const double *y, size_t m, double *a, double *b, double *rss)
{
	size_t best = 0;
	*rss = INFINITY;
	*a = *b = NAN;
	for (size_t h = 0; h + 2 < m; h++) {
		double n = (double)m, sx = 0, sxx = 0, sy = 0, sxy = 0, syy = 0;
		for (size_t k = 0; k < m; k++) {
			double x = k > h ? (double)(k - h) : 0;
			sx += x, sxx += x * x, sy += y[k], sxy += x * y[k], syy += y[k] * y[k];
		}
		double den = n * sxx - sx * sx;
		if (den <= 0)
			continue;
		double bb = (n * sxy - sx * sy) / den, aa = (sy - bb * sx) / n;
		double r = syy - aa * sy - bb * sxy;
		if (r < *rss) {
			*rss = r;
			*a = aa;
			*b = bb;
			best = h;
		}
	}
	return best;
}

/* Residual sum of squares of y[0..m) around the means of [0, at) and [at, m). */
static double step_rss(const double *y, size_t m, size_t at)
{
	double m1, v1, m2, v2;
	cpoint_moments(y, 0, at, &m1, &v1);
	cpoint_moments(y, at, m, &m2, &v2);
	return v1 * (double)(at - 1) + v2 * (double)(m - at - 1);
}

/* The relative noise of y[0..m) from its night-to-night differences
 * (mad_to_sigma x MAD of the differences / sqrt 2, over the median): a step
 * or a drift inside the window does not inflate it as the MAD of the values
 * would. At least the floor. tmp has room for baseline_nights values. */
static double diff_noise(const struct regress_conf *c, const double *y, size_t m, double *tmp)
{
	size_t n = 0, cap = (size_t)c->baseline_nights;
	for (size_t k = m; k-- > 1 && n < cap;)
		tmp[n++] = fabs(y[k] - y[k - 1]);
	double d = c->mad_to_sigma * median(tmp, n) / sqrt(2);
	n = 0;
	for (size_t k = m; k-- > 0 && n < cap;)
		tmp[n++] = y[k];
	double level = median(tmp, n);
	return fmax(d / level, c->noise_floor_frac);
}

enum shape { SHAPE_STEP, SHAPE_DRIFT, SHAPE_UNSURE };

/* Step or drift for a change at window point `at` of y[0..m): a drift when a
 * level then a line (from hinge *h, level *a, slope *b) spans at least twice
 * min_good_nights and leaves a quarter less residual than two levels;
 * unsure when the line fits better but spans less (a drift's first nights
 * and a step's look the same: the next nights decide); else a step. */
static enum shape classify(const struct regress_conf *c, const double *y, size_t m, size_t at,
			   size_t *h, double *a, double *b)
{
	double rss_h;
	*h = hinge_fit(y, m, a, b, &rss_h);
	double rss_s = step_rss(y, m, at);
	int long_line = m - 1 - *h >= 2 * (size_t)c->min_good_nights;
	if (!(rss_h < rss_s))
		return SHAPE_STEP;
	if (!long_line)
		return SHAPE_UNSURE;
	return rss_h * 1.25 < rss_s ? SHAPE_DRIFT : SHAPE_STEP;
}

/* Marks point i a drift that began after window point h (fitted level a,
 * slope b per window point, m window points), and starts a new level. */
static void set_drift(struct history *hist, struct hist_series *s, struct walk *w, size_t i,
		      const struct scratch *sc, size_t h, size_t m, double a, double b, double noise)
{
	struct hist_point *p = &s->pts[i];
	size_t first = sc->win_pt[h + 1 < m ? h + 1 : h];
	p->verdict = REG_DRIFT;
	p->baseline_us = a;
	p->delta_frac = b * (double)(m - 1 - h) / a;
	p->bad_run = s->pts[first].run;
	p->good_run = last_good_run(s, first);
	p->change_nights = (int)(p->run - s->pts[sc->win_pt[h]].run);
	history_reason_set(hist, p, "drift: %+.1f%% over %d nights", p->delta_frac * 100,
			   p->change_nights);
	new_level(s, w, i, i, noise);
}

/* Whether the window's values show two levels (bimodal noise): the change
 * search would take a run of nights on one of them for a change. */
static int window_bimodal(const struct regress_conf *c, struct scratch *sc, size_t m)
{
	double lo, hi, sigma;
	memcpy(sc->sorted, sc->win, m * sizeof *sc->sorted);
	qsort(sc->sorted, m, sizeof *sc->sorted, sort_cmp_double);
	return bimodal(c, sc->sorted, m, &lo, &hi, &sigma);
}

/* Whether the level change at window point `at` lasted: at least
 * confirm_nights and two thirds of the points after it lie beyond half the
 * change (one spike beside a normal night is no level). */
static int sustained(const struct regress_conf *c, const double *y, size_t m, size_t at,
		     const struct cpoint_change *ch)
{
	double half = (ch->mean_before + ch->mean_after) / 2;
	size_t beyond = 0;
	for (size_t k = at; k < m; k++)
		beyond += ch->mean_after > ch->mean_before ? y[k] > half : y[k] < half;
	return beyond >= (size_t)c->confirm_nights && 3 * beyond >= 2 * (m - at);
}

/* A step the online rule just confirmed at point i, checked for its shape
 * over the level before it and tonight: a drift (the rolling baseline lagged
 * a drift) becomes one; unsure, the confirmation waits (returns 1: the
 * caller restores the walk and keeps the night suspect). */
static int drift_not_step(const struct regress_conf *c, struct history *hist,
			  struct hist_series *s, struct walk *w, const struct walk *old, size_t i,
			  struct scratch *sc)
{
	struct hist_point *p = &s->pts[i];
	size_t at = 0, m, h;
	double a, b;
	m = level_window(c, s, old, i, sc);
	while (at < m && s->pts[sc->win_pt[at]].run < p->bad_run)
		at++;
	if (m < 4 || at < 2 || at + 1 >= m)
		return 0;
	switch (classify(c, sc->win, m, at, &h, &a, &b)) {
	case SHAPE_DRIFT:
		if ((b > 0) == (p->delta_frac > 0))
			set_drift(hist, s, w, i, sc, h, m, a, b, w->carry_noise);
		return 0;
	case SHAPE_UNSURE:
		return (b > 0) == (p->delta_frac > 0);
	default:
		return 0;
	}
}

/* The whole-level change check of point i: the current level's nights are
 * searched for change points (cpoint.h); the earliest one that is large
 * enough and lasted confirm_nights is confirmed tonight, placed on the night
 * it began, as a step (regression / improvement) or, when a level followed
 * by a straight line fits better than two levels, a drift. Returns 1 when
 * it confirmed a change. */
static int change_check(const struct regress_conf *c, struct history *hist,
			struct hist_series *s, struct walk *w, size_t i, struct scratch *sc)
{
	struct hist_point *p = &s->pts[i];
	size_t m = level_window(c, s, w, i, sc), n, h;
	double noise, a, b;
	struct cpoint_change ch[4];

	if (m < (size_t)(c->min_good_nights + c->confirm_nights) || window_bimodal(c, sc, m))
		return 0;
	noise = diff_noise(c, sc->win, m, sc->vals);
	if (isfinite(w->carry_noise) && m < (size_t)c->baseline_nights)
		noise = fmax(noise, w->carry_noise); /* a new level's few nights */
	/* averaged over nights, a change of one noise sigma is real when the
	 * test says so; the minimum change still holds */
	struct cpoint_opts o = {.max_p = c->change_max_p,
			    .split_p = fmin(10 * c->change_max_p, 0.05),
			    .min_seg = (size_t)c->confirm_nights,
			    .min_rel = fmax(c->min_delta_frac, noise)};
	if (cpoint_edivisive(sc->win, m, &o, ch, 4, &n) || !n ||
	    ch[0].at < (size_t)c->min_good_nights || !sustained(c, sc->win, m, ch[0].at, &ch[0]))
		return 0;
	enum shape sh = classify(c, sc->win, m, ch[0].at, &h, &a, &b);
	if (sh == SHAPE_UNSURE ||
	    (sh == SHAPE_DRIFT && fabs(b * (double)(m - 1 - h) / a) < o.min_rel))
		return 0;
	if (sh == SHAPE_DRIFT) {
		set_drift(hist, s, w, i, sc, h, m, a, b, noise);
		return 1;
	}
	size_t first = sc->win_pt[ch[0].at];
	p->verdict = ch[0].mean_after > ch[0].mean_before ? REG_REGRESSION : REG_IMPROVEMENT;
	p->baseline_us = ch[0].mean_before;
	p->delta_frac = ch[0].mean_after / ch[0].mean_before - 1;
	p->bad_run = s->pts[first].run;
	p->good_run = last_good_run(s, first);
	history_reason_set(hist, p, "change point: %+.1f%%, p = %.1e", p->delta_frac * 100,
			   ch[0].p);
	new_level(s, w, first, i, noise);
	return 1;
}

/* Median of the first (from 1) or last (from 0) k good nights of the
 * level up to point i, into *out; returns how many there were. */
static size_t level_end(const struct hist_series *s, const struct walk *w, size_t i, size_t k,
			int first, double *tmp, double *out)
{
	size_t n = 0;
	for (size_t j = first ? w->seg_start : i; n < k && j >= w->seg_start && j <= i;
	     j = first ? j + 1 : j - 1) {
		if (s->pts[j].in_baseline || j == i)
			tmp[n++] = s->pts[j].median_us;
		if (!first && j == 0)
			break;
	}
	*out = n ? median(tmp, n) : NAN;
	return n;
}

/* The long-reference drift check of point i: the level's first
 * min_good_nights good nights against its last ones, when the level has
 * moved past the threshold along a significant straight line (a slow drift
 * the rolling baseline would follow). Placed where a level then a line fits
 * the level's last nights best. Returns 1 when it found one. */
static int long_drift(const struct regress_conf *c, struct history *h, struct hist_series *s,
		      struct walk *w, size_t i, struct scratch *sc)
{
	struct hist_point *p = &s->pts[i];
	size_t k = (size_t)c->min_good_nights, n = 0, first = HIST_NO_RUN;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, ref, cur, a, b, rss;
	for (size_t j = w->seg_start; j <= i; j++) {
		if (!s->pts[j].in_baseline && j != i)
			continue;
		double x = (double)s->pts[j].run, y = s->pts[j].median_us;
		if (first == HIST_NO_RUN)
			first = j;
		n++, sx += x, sy += y, sxx += x * x, sxy += x * y, syy += y * y;
	}
	if (n < 3 * k)
		return 0;
	size_t m0 = level_window(c, s, w, i, sc);
	if (window_bimodal(c, sc, m0))
		return 0;
	level_end(s, w, i, k, 1, sc->vals, &ref);
	level_end(s, w, i, k, 0, sc->vals, &cur);
	size_t m = level_window(c, s, w, i, sc);
	double noise = diff_noise(c, sc->win, m, sc->vals), dn = (double)n;
	double thr = fmax(c->min_delta_frac, c->noise_multiple * noise);
	double sxx_c = sxx - sx * sx / dn, slope = (sxy - sx * sy / dn) / sxx_c;
	double res = syy - sy * sy / dn - slope * (sxy - sx * sy / dn);
	double se = sqrt(fmax(res, 0) / (dn - 2) / sxx_c);
	if (fabs(cur / ref - 1) < thr || cpoint_t_p(slope / se, dn - 2) > c->change_max_p ||
	    (slope > 0) != (cur > ref))
		return 0;
	size_t hh = m > 3 ? hinge_fit(sc->win, m, &a, &b, &rss) : 0;
	if (m <= 3 || m - 1 - hh < 2 * k || fabs(b * (double)(m - 1 - hh) / a) < thr)
		return 0; /* a recent step, or too little along the line */
	for (size_t at = 2; at + 2 <= m; at++) /* a step anywhere fits as well: no drift */
		if (!(rss * 1.25 < step_rss(sc->win, m, at)))
			return 0;
	if (hh > 0)
		first = sc->win_pt[hh + 1];
	p->verdict = REG_DRIFT;
	p->baseline_us = ref;
	p->delta_frac = cur / ref - 1;
	p->bad_run = s->pts[first].run;
	p->good_run = last_good_run(s, first);
	p->change_nights = (int)(p->run - s->pts[first].run);
	history_reason_set(h, p, "drift: %+.1f%% over %d nights", p->delta_frac * 100,
			   p->change_nights);
	new_level(s, w, i, i, noise);
	return 1;
}

/* ---------------------------------------------------------------- the walk */

int regress_contended(const struct regress_conf *c, const struct hist_run *r, char *why,
		      size_t len)
{
	static const char *const held[] = {"hw_slowdown", "hw_thermal", "sw_thermal",
					   "hw_power_brake"};
	const struct rec_machine *m = &r->machine;
	why[0] = '\0';
	if (!m->known)
		return 0;
	if (m->cpus > 0 && isfinite(m->load_avg_1m) &&
	    m->load_avg_1m / m->cpus > c->max_load_per_cpu)
		snprintf(why, len, "load average %.2f on %d CPUs", m->load_avg_1m, m->cpus);
	else if (isfinite(m->cpu_others_pct) && m->cpu_others_pct > c->max_cpu_others_pct)
		snprintf(why, len, "other processes took %.0f%% of the CPUs", m->cpu_others_pct);
	else if (isfinite(m->cpu_steal_pct) && m->cpu_steal_pct > c->max_cpu_steal_pct)
		snprintf(why, len, "CPU steal %.1f%%", m->cpu_steal_pct);
	for (int g = 0; g < m->ngpus && !why[0]; g++) {
		if (m->gpus[g].other_procs > c->max_gpu_other_procs)
			snprintf(why, len, "%d other processes on GPU %d", m->gpus[g].other_procs,
				 m->gpus[g].index);
		for (size_t k = 0; k < sizeof held / sizeof *held && !why[0]; k++)
			if (strstr(m->gpus[g].throttle, held[k]))
				snprintf(why, len, "GPU %d held back: %s", m->gpus[g].index,
					 m->gpus[g].throttle);
	}
	return why[0] != '\0';
}

/* A short series' night: not enough history, or, with three nights or more
 * before it, a jump of at least new_series_jump_pct and three times their
 * spread from their median (flagged). */
static void walk_short(const struct regress_conf *c, struct history *h, struct hist_series *s,
		       struct walk *w, size_t i, double *vals, size_t n)
{
	struct hist_point *p = &s->pts[i];
	if (n) { /* for display: how far from what little there is */
		p->baseline_us = median(vals, n);
		p->delta_frac = p->median_us / p->baseline_us - 1;
	}
	double lo = INFINITY, hi = -INFINITY;
	for (size_t k = 0; k < n; k++)
		lo = fmin(lo, vals[k]), hi = fmax(hi, vals[k]);
	/* three times the spread of what little there is, at least the jump */
	double need = n >= 3 ? fmax(c->new_series_jump_frac, 3 * (hi - lo) / p->baseline_us) : 0;
	if (n >= 3 && fabs(p->delta_frac) >= need) {
		history_reason_set(h, p, "a jump of %+.1f%% on a new series", p->delta_frac * 100);
		on_flagged(c, s, w, i, p->delta_frac > 0 ? 1 : -1);
		return;
	}
	p->verdict = REG_SHORT;
	p->in_baseline = 1;
	run_to_outliers(s, w, i);
}

/* Decides point i's verdict as of its own night and revises earlier ones. */
static void walk_point(const struct regress_conf *c, struct history *h, struct hist_series *s,
		       struct walk *w, size_t i, struct scratch *sc)
{
	struct hist_point *p = &s->pts[i];
	char why[HIST_REASON_LEN];
	size_t n;

	p->in_baseline = 0;
	p->baseline_us = p->noise_frac = p->delta_frac = p->z = NAN;
	p->band_lo_us = p->band_hi_us = NAN;
	p->good_run = p->bad_run = HIST_NO_RUN;
	p->change_nights = 0;
	if (p->status != REC_OK) {
		p->verdict = p->status == REC_FAILED ? REG_FAILED : REG_SKIPPED;
		return;
	}
	p->reason = ""; /* analysis notes from here on */
	if (regress_contended(c, &h->runs[p->run], why, sizeof why)) {
		history_reason_set(h, p, "%s", why);
		p->verdict = REG_UNJUDGED;
		return;
	}
	n = good_before(c, s, w, i, sc->vals);
	if (!w->measured++) {
		p->verdict = w->env_first ? REG_ENV : REG_NEW;
		p->in_baseline = 1;
		return;
	}
	if (n < (size_t)c->min_good_nights && (isnan(w->carry_noise) || !n)) {
		walk_short(c, h, s, w, i, sc->vals, n);
		return;
	}
	int flagged = judge(c, h, p, sc->vals, n, w->carry_noise);
	int recurring = recurring_level(c, s, i);
	if (flagged && recurring) {
		flagged = 0;
		p->reason = "bimodal: a level seen before";
	}
	struct walk old = *w;
	if (flagged) {
		on_flagged(c, s, w, i, p->delta_frac > 0 ? 1 : -1);
	} else {
		p->verdict = REG_OK;
		p->in_baseline = 1;
		run_to_outliers(s, w, i);
	}
	if (p->verdict == REG_REGRESSION || p->verdict == REG_IMPROVEMENT) {
		if (drift_not_step(c, h, s, w, &old, i, sc)) { /* not sure yet: wait */
			for (size_t j = w->seg_start; j <= i; j++)
				if (s->pts[j].verdict == REG_SUSPECT || j == i)
					s->pts[j].in_baseline = 0;
			*w = old;
			w->run_len++;
			p->verdict = REG_SUSPECT;
		}
		return;
	}
	/* a first flagged night waits for the next, whatever the check says */
	if (p->verdict == REG_SUSPECT && w->run_len == 1)
		return;
	if (!change_check(c, h, s, w, i, sc))
		long_drift(c, h, s, w, i, sc);
}

/* ---------------------------------------------------------------- history */

/* Series indices ordered by their key without the machine, then by their
 * first night, then by index (qsort_r over the history). */
static int cmp_same_but_machine(const void *a, const void *b, void *arg)
{
	const struct history *h = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct hist_key *x = &h->series[i].key, *y = &h->series[j].key;
	int d;
	if ((d = strcmp(x->op, y->op)) || (d = strcmp(x->variant, y->variant)) ||
	    (d = strcmp(x->params, y->params)) || (d = strcmp(x->device, y->device)) ||
	    (d = strcmp(x->backend, y->backend)) || (d = strcmp(x->build, y->build)))
		return d;
	size_t fi = h->series[i].n ? h->series[i].pts[0].run : SIZE_MAX;
	size_t fj = h->series[j].n ? h->series[j].pts[0].run : SIZE_MAX;
	if (fi != fj)
		return fi < fj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Marks the series that continue one of another machine (the same key but
 * the machine, first seen on an earlier night): their first night is an
 * environment change; ws[i].env_from is the series it continues (the
 * lowest index of those). One sort, not a scan of every pair: a night of
 * 40,000 series took 15 s. order: scratch of h->n. */
static void mark_machine_changes(const struct history *h, struct walk *ws, size_t *order)
{
	for (size_t i = 0; i < h->n; i++)
		order[i] = i;
	qsort_r(order, h->n, sizeof *order, cmp_same_but_machine, (void *)h);
	for (size_t g = 0, e; g < h->n; g = e) {
		const struct hist_key *k = &h->series[order[g]].key;
		for (e = g + 1; e < h->n && history_key_same_but_machine(
						    k, &h->series[order[e]].key);
		     e++)
			;
		size_t from = SIZE_MAX; /* the lowest index first seen before this night */
		for (size_t b = g, c; b < e; b = c) {
			const struct hist_series *first = &h->series[order[b]];
			size_t night = first->n ? first->pts[0].run : SIZE_MAX, low = SIZE_MAX;
			for (c = b; c < e && (h->series[order[c]].n ? h->series[order[c]].pts[0].run
								 : SIZE_MAX) == night;
			     c++) {
				size_t i = order[c];
				if (!h->series[i].n)
					continue;
				ws[i].env_first = from != SIZE_MAX;
				ws[i].env_from = from;
				low = i < low ? i : low;
			}
			from = low < from ? low : from;
		}
	}
}

/* The note and range of a series' first night on a new machine. */
static void note_machine_change(struct history *h, size_t si, const struct walk *w)
{
	struct hist_series *s = &h->series[si];
	struct hist_point *p = &s->pts[0];
	const struct hist_series *o = &h->series[w->env_from];
	size_t last = HIST_NO_RUN;
	for (size_t k = 0; k < o->n && o->pts[k].run < p->run; k++)
		if (o->pts[k].status == REC_OK)
			last = o->pts[k].run;
	p->good_run = last;
	p->bad_run = p->run;
	history_reason_set(h, p, "environment changed: first night on %.50s (was %.50s)",
			   s->key.machine, o->key.machine);
}

/* Series indices ordered by machine, then index (qsort_r over the history). */
static int cmp_machine(const void *a, const void *b, void *arg)
{
	const struct history *h = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int d = strcmp(h->series[i].key.machine, h->series[j].key.machine);
	return d ? d : i < j ? -1 : i > j;
}

/* bym: the series grouped by machine (ms[k]: the machine's lowest series
 * index), each machine's series in index order. */
static void group_machines(const struct history *h, size_t *ms, size_t *bym)
{
	for (size_t i = 0; i < h->n; i++)
		bym[i] = i;
	qsort_r(bym, h->n, sizeof *bym, cmp_machine, (void *)h);
	for (size_t g = 0, e; g < h->n; g = e) {
		for (e = g + 1; e < h->n && !strcmp(h->series[bym[g]].key.machine,
						    h->series[bym[e]].key.machine);
		     e++)
			;
		for (size_t k = g; k < e; k++)
			ms[bym[k]] = bym[g];
	}
}

/* Most judged series of one machine moving together on one night is the
 * machine, not the code: those series read "environment changed" and
 * restart their baselines. ms[k] is series k's machine number, cur[k] its
 * point on night `run` (or SIZE_MAX). */
static void machine_moves(const struct regress_conf *c, struct history *h, struct walk *ws,
			  const size_t *ms, const size_t *bym, const size_t *cur, size_t run)
{
	for (size_t g = 0, e; g < h->n; g = e) { /* each machine: bym[g..e) */
		size_t k = bym[g];
		for (e = g + 1; e < h->n && ms[bym[e]] == k; e++)
			;
		if (cur[k] == (size_t)-1) /* machine k is first seen as series k */
			continue;
		int judged = 0, up = 0, down = 0;
		for (size_t m = g; m < e; m++) {
			size_t j = bym[m];
			if (cur[j] == (size_t)-1)
				continue;
			const struct hist_point *p = &h->series[j].pts[cur[j]];
			if (p->status != REC_OK || !isfinite(p->z))
				continue;
			judged++;
			int moved = p->verdict == REG_SUSPECT || p->verdict == REG_REGRESSION ||
				    p->verdict == REG_IMPROVEMENT;
			up += moved && p->delta_frac > 0;
			down += moved && p->delta_frac < 0;
		}
		int most = up > down ? up : down, dir = up > down ? 1 : -1;
		if (most < c->env_min_series || most < c->env_share * judged)
			continue;
		for (size_t m = g; m < e; m++) {
			size_t j = bym[m];
			if (cur[j] == (size_t)-1)
				continue;
			struct hist_series *s = &h->series[j];
			struct hist_point *p = &s->pts[cur[j]];
			if (p->status != REC_OK || !isfinite(p->z) ||
			    !(p->verdict == REG_SUSPECT || p->verdict == REG_REGRESSION ||
			      p->verdict == REG_IMPROVEMENT) ||
			    (p->delta_frac > 0 ? 1 : -1) != dir)
				continue;
			p->verdict = REG_ENV;
			p->bad_run = p->run;
			p->good_run = last_good_run(s, cur[j]);
			history_reason_set(
				h, p, "environment changed: %d of %d series of %.60s moved %s together",
				most, judged, s->key.machine, dir > 0 ? "up" : "down");
			new_level(s, &ws[j], cur[j], cur[j], p->noise_frac);
		}
	}
	(void)run;
}

/* Allocation failed: every measured point reads "not enough history". */
static void walk_unable(struct history *h)
{
	for (size_t i = 0; i < h->n; i++)
		for (size_t k = 0; k < h->series[i].n; k++)
			h->series[i].pts[k].verdict = h->series[i].pts[k].verdict_night = REG_SHORT;
}

void regress_history(const struct regress_conf *c, struct history *h)
{
	size_t ns = h->n ? h->n : 1;
	struct walk *ws = calloc(ns, sizeof *ws);
	size_t *ms = calloc(ns, sizeof *ms), *cur = calloc(ns, sizeof *cur),
	       *next = calloc(ns, sizeof *next), *bym = calloc(ns, sizeof *bym);
	struct scratch sc = {malloc((size_t)c->baseline_nights * sizeof(double)),
			     malloc((size_t)c->change_window_nights * sizeof(double)),
			     malloc((size_t)c->change_window_nights * sizeof(double)),
			     malloc((size_t)c->change_window_nights * sizeof(size_t))};

	if (!ws || !ms || !cur || !next || !bym || !sc.vals || !sc.sorted || !sc.win ||
	    !sc.win_pt) {
		walk_unable(h);
		goto done;
	}
	for (size_t i = 0; i < h->n; i++)
		ws[i].carry_noise = NAN;
	group_machines(h, ms, bym);
	mark_machine_changes(h, ws, cur); /* cur: scratch until the walk */
	memset(cur, 0, ns * sizeof *cur);
	for (size_t run = 0; run < h->nruns; run++) {
		for (size_t i = 0; i < h->n; i++) {
			struct hist_series *s = &h->series[i];
			cur[i] = (size_t)-1;
			if (next[i] < s->n && s->pts[next[i]].run == run) {
				cur[i] = next[i]++;
				walk_point(c, h, s, &ws[i], cur[i], &sc);
				if (cur[i] == 0 && ws[i].env_first && s->pts[0].verdict == REG_ENV)
					note_machine_change(h, i, &ws[i]);
			}
		}
		machine_moves(c, h, ws, ms, bym, cur, run);
		for (size_t i = 0; i < h->n; i++)
			if (cur[i] != (size_t)-1)
				h->series[i].pts[cur[i]].verdict_night = h->series[i].pts[cur[i]].verdict;
	}
done:
	free(ws);
	free(ms);
	free(bym);
	free(cur);
	free(next);
	free(sc.vals);
	free(sc.sorted);
	free(sc.win);
	free(sc.win_pt);
}

/* "a1b2c3d" of a revision ("?" unknown), "+dirty" kept. */
static void short_rev(char *buf, size_t len, const char *rev)
{
	size_t n = strcspn(rev, "+");
	if (!n) {
		snprintf(buf, len, "?");
		return;
	}
	snprintf(buf, len, "%.*s%s", (int)(n < 7 ? n : 7), rev, rev[n] ? rev + n : "");
}

char *regress_commits(const struct history *h, const struct hist_point *p, char *buf,
		      size_t len)
{
	char a[64], b[64];
	buf[0] = '\0';
	if (p->bad_run >= h->nruns)
		return buf;
	const struct hist_run *good = p->good_run < h->nruns ? &h->runs[p->good_run] : NULL,
			      *bad = &h->runs[p->bad_run];
	short_rev(a, sizeof a, good ? good->git_rev : "");
	short_rev(b, sizeof b, bad->git_rev);
	size_t off = (size_t)snprintf(buf, len, "%s..%s", a, b);
	if (off < len && (bad->engine_rev[0] || (good && good->engine_rev[0]))) {
		short_rev(a, sizeof a, good ? good->engine_rev : "");
		short_rev(b, sizeof b, bad->engine_rev);
		snprintf(buf + off, len - off, " (engine %s..%s)", a, b);
	}
	return buf;
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
			      sc->budget, sc->concurrency, sc->accept[0], sc->context};
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

static void entry_of(struct regress_entry *e, const struct history *h,
		     const struct hist_series *s, const struct hist_point *p)
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
	if (p->good_run < h->nruns) {
		snprintf(e->good_run_id, sizeof e->good_run_id, "%s", h->runs[p->good_run].run_id);
		snprintf(e->good_rev, sizeof e->good_rev, "%s", h->runs[p->good_run].git_rev);
		snprintf(e->good_engine_rev, sizeof e->good_engine_rev, "%s",
			 h->runs[p->good_run].engine_rev);
	}
	if (p->bad_run < h->nruns) {
		snprintf(e->bad_run_id, sizeof e->bad_run_id, "%s", h->runs[p->bad_run].run_id);
		snprintf(e->bad_rev, sizeof e->bad_rev, "%s", h->runs[p->bad_run].git_rev);
		snprintf(e->bad_engine_rev, sizeof e->bad_engine_rev, "%s",
			 h->runs[p->bad_run].engine_rev);
	}
	regress_commits(h, p, e->commits, sizeof e->commits);
}

char *regress_entry_line(const struct regress_entry *e, char *buf, size_t len)
{
	char label[512];
	size_t off = (size_t)snprintf(buf, len, "%s %s: %+.1f%% (%.4g us, baseline %.4g us, noise %.2f%%)",
				      regress_verdict_name(e->verdict),
				      history_key_label(&e->key, label, sizeof label),
				      e->delta_frac * 100, e->median_us, e->baseline_us,
				      e->noise_frac * 100);
	if (off < len && e->commits[0])
		off += (size_t)snprintf(buf + off, len - off, ", commits %s (first bad %s)",
					e->commits, e->bad_run_id);
	if (off < len && e->reason[0])
		snprintf(buf + off, len - off, "; %s", e->reason);
	return buf;
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
		entry_of(&out->entries[out->n], h, s, p);
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
	yout_kv_str(y, "machine", k->machine);
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
	yout_kv_str(y, "commits", e->commits);
	yout_kv_str(y, "last_good_run", e->good_run_id);
	yout_kv_str(y, "last_good_rev", e->good_rev);
	yout_kv_str(y, "first_bad_run", e->bad_run_id);
	yout_kv_str(y, "first_bad_rev", e->bad_rev);
	if (e->good_engine_rev[0] || e->bad_engine_rev[0]) {
		yout_kv_str(y, "last_good_engine_rev", e->good_engine_rev);
		yout_kv_str(y, "first_bad_engine_rev", e->bad_engine_rev);
	}
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
	yout_kv_int(&y, "schema", 2);
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
	if (ydoc_get(m, "machine")) /* schema 2 */
		read_str(c, m, "machine", k->machine, sizeof k->machine);
}

/* An optional string key (schema 2): "" when absent. */
static void read_opt_str(struct yctx *c, struct ydoc_node *m, const char *key, char *dst,
			 size_t len)
{
	dst[0] = '\0';
	if (ydoc_get(m, key))
		read_str(c, m, key, dst, len);
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
	read_opt_str(c, m, "commits", e->commits, sizeof e->commits);
	read_opt_str(c, m, "last_good_run", e->good_run_id, sizeof e->good_run_id);
	read_opt_str(c, m, "last_good_rev", e->good_rev, sizeof e->good_rev);
	read_opt_str(c, m, "first_bad_run", e->bad_run_id, sizeof e->bad_run_id);
	read_opt_str(c, m, "first_bad_rev", e->bad_rev, sizeof e->bad_rev);
	read_opt_str(c, m, "last_good_engine_rev", e->good_engine_rev, sizeof e->good_engine_rev);
	read_opt_str(c, m, "first_bad_engine_rev", e->bad_engine_rev, sizeof e->bad_engine_rev);
	yget_check_unknown(c, m);
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
	yget_check_unknown(c, m);
}

/* A required sequence of maps under key: its node, or NULL (problem noted). */
static struct ydoc_node *seq_of(struct yctx *c, struct ydoc_node *root, const char *key)
{
	struct ydoc_node *n = NULL;
	if (yget_node(c, root, key, YDOC_SEQ, Y_REQUIRED, &n) || !n)
		return NULL;
	for (size_t i = 0; i < n->n; i++)
		if (yget_expect(c, n->items[i], YDOC_MAP, key))
			return NULL;
	return n;
}

static int read_root(struct regress_night *n, struct yctx *c, struct ydoc_node *root)
{
	struct ydoc_node *s, *r, *im;
	int schema = 0, nights = 0;

	yget_int(c, root, "schema", Y_REQUIRED | Y_POSITIVE, &schema);
	if (schema > 2)
		ydiag_add(c->diag, c->file, root->line, root->col, "schema %d is newer than 2",
			  schema);
	read_str(c, root, "run_id", n->run_id, sizeof n->run_id);
	yget_int(c, root, "nights", Y_REQUIRED | Y_POSITIVE, &nights);
	n->nruns = (size_t)nights;
	ydoc_get(root, "counts"); /* derived: recomputed below */
	s = seq_of(c, root, "series");
	r = seq_of(c, root, "revised");
	im = seq_of(c, root, "impact");
	yget_check_unknown(c, root);
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
		yget_check_unknown(c, r->items[i]);
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
	if (!doc->root || yget_expect(&c, doc->root, YDOC_MAP, "verdict file")) {
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
