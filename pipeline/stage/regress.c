/* regress.c - verdicts per series and night: the walk, change points, drifts, commits (machine and environment changes: regress_env.c). */
#include "regress.h"
#include "regress_walk.h"

#include "cpoint.h"
#include "sort.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- verdicts */

/* Median of v[0..n) (n > 0); sorts v. */
static double median(double *v, size_t n)
{
	sort_doubles(v, n);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}


/* Scratch space of a walk: baseline values and the change window. */
struct scratch {
	double *vals;       /* [baseline_nights] */
	double *sorted;     /* [max(change_window_nights, 3 x baseline_nights)] */
	double *win;        /* [change_window_nights] */
	size_t *win_pt;     /* point index of each win value */
	/* what change_check found of tonight's window, for long_drift on the
	 * same night (win unchanged when it returns 0): bimodal -1 and noise
	 * NaN when it did not get that far */
	size_t win_m;
	int win_bimodal;
	double win_noise;
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
size_t regress_last_good_run(const struct hist_series *s, size_t i)
{
	while (i--)
		if (s->pts[i].status == REC_OK && s->pts[i].verdict != REG_OUTLIER &&
		    s->pts[i].verdict != REG_UNJUDGED && s->pts[i].verdict != REG_SUSPECT)
			return s->pts[i].run;
	return HIST_NO_RUN;
}

/* How many runs of nights on one side of cut the values t[0..n) (in time
 * order, either way) make: 2 for a step, many for two-level noise. */
static int level_runs(const double *t, size_t n, double cut)
{
	int runs = n > 0;
	for (size_t k = 1; k < n; k++)
		runs += (t[k] > cut) != (t[k - 1] > cut);
	return runs;
}

/* Two levels among the sorted good values v[0..n) (n >= 2 x min_good_nights):
 * the widest gap that leaves at least three values and a fifth of them on
 * each side, when it is wider than four standard deviations of either group
 * (normal noise, cut at its widest gap, almost never is) and than the
 * minimum change, and the series went back to the level it left (the same
 * values in time order, t, make at least three runs: a step, one level then
 * the other, is no two-level noise). Their medians into lo/hi and the
 * within sigma (the larger group standard deviation, at least the floor)
 * into sigma. */
static int bimodal(const struct regress_conf *c, const double *v, const double *t, size_t n,
		   double *lo, double *hi, double *sigma)
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
	/* a gap within four floors of the lowest value is no wider than four
	 * sigmas (the floor of the lower group's mean, itself at least v[0]
	 * less rounding), whatever the groups' spread: most windows end here */
	if (!cut || (v[0] > 0 && gap <= 4 * c->noise_floor_frac * v[0] * (1 - 0x1p-30)))
		return 0;
	cpoint_moments(v, 0, cut, &m1, &v1);
	cpoint_moments(v, cut, n, &m2, &v2);
	double s = fmax(sqrt(fmax(v1, v2)), c->noise_floor_frac * m1);
	if (gap <= 4 * s || m2 / m1 - 1 < c->min_delta_frac ||
	    level_runs(t, n, (v[cut - 1] + v[cut]) / 2) < 3)
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
	double noise = isfinite(s->pts[i].noise_frac) ? s->pts[i].noise_frac : 0;
	double v = s->pts[i].median_us,
	       band = fmax(c->min_delta_frac / 2, noise) * v;
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

/* Fills baseline, noise, delta, z and band of p from the good values (vals,
 * most recent first; timed: room for n); returns 1 when p is flagged
 * (outside the band). Two levels in the baseline (bimodal noise) are two
 * baselines: p is judged against the nearer. The noise is the series' own
 * night-to-night noise (at least the floor), never the night's own sample
 * scatter: the nights' medians already carry their sampling error, and a
 * night with wide samples is no reason to miss a step. */
static int judge(const struct regress_conf *c, struct history *h, struct hist_point *p,
		 double *vals, double *timed, size_t n, double carry_noise)
{
	double sigma, lo, hi, s2;

	memcpy(timed, vals, n * sizeof *vals);
	double base = median(vals, n);
	if (bimodal(c, vals, timed, n, &lo, &hi, &s2)) {
		base = fabs(p->median_us - lo) < fabs(p->median_us - hi) ? lo : hi;
		sigma = s2;
		history_reason_set(h, p, "bimodal: %.4g / %.4g us", lo, hi);
	} else {
		double m1, v1;
		cpoint_moments(vals, 0, n, &m1, &v1);
		for (size_t k = 0; k < n; k++)
			vals[k] = fabs(vals[k] - base);
		/* a MAD of few nights is itself uncertain: widened by
		 * sqrt(baseline_nights / n) until the level has its full
		 * window; and it reads far too low more often than the
		 * standard deviation of the same nights does (below 0.4 sigma:
		 * 8% of 5 normal nights, 1.7% of 14; the larger of both: 1.7%
		 * and 0.02%), so the noise is the larger of the two */
		sigma = n >= (size_t)c->min_good_nights
				? fmax(c->mad_to_sigma * median(vals, n) *
					       sqrt(fmax(1, (double)c->baseline_nights / (double)n)),
				       sqrt(v1))
				: carry_noise * base;
		/* a young level's few nights can read the noise far too low
		 * (a MAD of five): until it has a full window it keeps at
		 * least the noise the series had before the change */
		if (n < (size_t)c->baseline_nights && isfinite(carry_noise))
			sigma = fmax(sigma, carry_noise * base);
		sigma = fmax(sigma, c->noise_floor_frac * base);
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
			    const struct hist_point *b, const char **rule)
{
	*rule = "";
	if (a->status != REC_OK || b->status != REC_OK)
		return b->status != REC_OK ? rec_status_name(b->status) : "A not measured";
	double na = a->noise_frac, nb = b->noise_frac, delta = b->median_us / a->median_us - 1;
	double noise = isfinite(na) && isfinite(nb) ? fmax(na, nb) : isfinite(nb) ? nb : na;
	if (!isfinite(noise)) { /* too few nights for a noise: the new-series jump */
		*rule = "new-series jump";
		if (!isfinite(delta) || fabs(delta) < c->new_series_jump_frac)
			return "same";
		return delta > 0 ? "slower" : "faster";
	}
	*rule = "night rule";
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
void regress_new_level(struct hist_series *s, struct walk *w, size_t from, size_t i,
		      double noise)
{
	for (size_t j = from; j <= i; j++)
		if (s->pts[j].status == REC_OK && s->pts[j].verdict != REG_UNJUDGED)
			s->pts[j].in_baseline = 1;
	w->prev_start = w->seg_start;
	w->chg_pt = SIZE_MAX; /* a step's confirming night sets it after */
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
	p->good_run = regress_last_good_run(s, w->run_start);
	if (w->run_len < c->confirm_nights) {
		p->verdict = REG_SUSPECT;
		return;
	}
	/* confirmed: the new level starts at the run's first night */
	p->verdict = dir > 0 ? REG_REGRESSION : REG_IMPROVEMENT;
	regress_new_level(s, w, w->run_start, i, p->noise_frac);
	w->chg_pt = i;
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
 * and a step's look the same: the next nights decide); else a step. The
 * two levels are split at `at` or wherever they fit best (two points or
 * more on each side), as the line's hinge is put where it fits best: a
 * step weighed at one night only against a line free to choose its own
 * lost to it on a step's first nights, and the step waited for nothing. */
static enum shape classify(const struct regress_conf *c, const double *y, size_t m, size_t at,
			   size_t *h, double *a, double *b)
{
	double rss_h;
	*h = hinge_fit(y, m, a, b, &rss_h);
	double rss_s = step_rss(y, m, at);
	for (size_t k = 2; k + 2 <= m; k++)
		rss_s = fmin(rss_s, step_rss(y, m, k));
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
	p->good_run = regress_last_good_run(s, first);
	p->change_nights = (int)(p->run - s->pts[sc->win_pt[h]].run);
	history_reason_set(hist, p, "drift: %+.1f%% over %d nights", p->delta_frac * 100,
			   p->change_nights);
	regress_new_level(s, w, i, i, noise);
}

/* The series' window win[0..m) sorted into w->wsort. When it is the last
 * sorted window slid by a night (its oldest value dropped, or none while the
 * level is still filling, and tonight's added), that night's value leaves
 * the sorted copy and tonight's goes in where the sort would put it: the
 * same multiset gives the same sorted values. Else a full sort. */
static double *window_sorted(const struct regress_conf *c, const double *win, size_t m,
			      struct walk *w)
{
	size_t pm = (size_t)w->wc[0], drop = pm == m;
	double *t = w->wc + 1, *v = t + c->change_window_nights;
	int clean = 1; /* positive numbers only: equal values are the same bits */
	if (m < 2 || (pm != m && pm + 1 != m) ||
	    memcmp(t + drop, win, (m - 1) * sizeof *win) != 0 ||
	    !(win[m - 1] > 0 && isfinite(win[m - 1]))) {
		memcpy(v, win, m * sizeof *v);
		sort_doubles(v, m);
		for (size_t k = 0; k < m; k++)
			clean &= v[k] > 0 && isfinite(v[k]);
	} else /* the oldest value leaves, tonight's goes in */
		sort_slide(v, pm, drop, t[0], win[m - 1]);
	memcpy(t, win, m * sizeof *win);
	w->wc[0] = clean ? (double)m : 0; /* 0: the next window is sorted whole */
	return v;
}

/* Whether the window's values show two levels (bimodal noise): the change
 * search would take a run of nights on one of them for a change. */
static int window_bimodal(const struct regress_conf *c, struct scratch *sc, struct walk *w,
			  size_t m)
{
	double lo, hi, sigma;
	return bimodal(c, window_sorted(c, sc->win, m, w), sc->win, m, &lo, &hi, &sigma);
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

	sc->win_m = m, sc->win_bimodal = -1, sc->win_noise = NAN;
	if (m < (size_t)(c->min_good_nights + c->confirm_nights) ||
	    (sc->win_bimodal = window_bimodal(c, sc, w, m)))
		return 0;
	noise = sc->win_noise = diff_noise(c, sc->win, m, sc->vals);
	if (isfinite(w->carry_noise) && m < (size_t)c->baseline_nights)
		noise = fmax(noise, w->carry_noise); /* a new level's few nights */
	/* averaged over nights, a change of one noise sigma is real when the
	 * test says so; the minimum change still holds */
	struct cpoint_opts o = {.max_p = c->change_max_p,
			    .split_p = fmin(10 * c->change_max_p, 0.05),
			    .min_seg = (size_t)c->confirm_nights,
			    .min_rel = fmax(c->min_delta_frac, noise)};
	if (cpoint_edivisive(sc->win, m, &o, ch, 4, &n) || !n)
		return 0;
	/* the earliest change supported on both sides: min_good_nights before
	 * it, and a new level that lasted (an earlier change that did not
	 * last does not hide a later one that did) */
	size_t k = 0;
	while (k < n && (ch[k].at < (size_t)c->min_good_nights ||
			 !sustained(c, sc->win, m, ch[k].at, &ch[k])))
		k++;
	if (k == n)
		return 0;
	size_t lo = k ? ch[k - 1].at : 0, hi = k + 1 < n ? ch[k + 1].at : m;
	ch[0] = ch[k];
	enum shape sh = classify(c, sc->win, m, ch[0].at, &h, &a, &b);
	if (sh == SHAPE_UNSURE ||
	    (sh == SHAPE_DRIFT && fabs(b * (double)(m - 1 - h) / a) < o.min_rel))
		return 0;
	double cut = sh == SHAPE_DRIFT ? a + b * (double)(m - 1 - h) / 2
				       : (ch[0].mean_before + ch[0].mean_after) / 2;
	if (regress_keeps_swinging(c, s, i, cut,
				   sc->win_pt[sh == SHAPE_DRIFT ? (h + 1 < m ? h + 1 : h) : ch[0].at],
				   sc->sorted))
		return 0;
	if (sh == SHAPE_DRIFT ? !regress_drift_holds(c, sc->win, m, h, a, b, sc->sorted)
			      : !regress_step_holds(c, sc->win, lo, ch[0].at, hi, sc->sorted))
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
	p->good_run = regress_last_good_run(s, first);
	history_reason_set(hist, p, "change point: %+.1f%%, p = %.1e", p->delta_frac * 100,
			   ch[0].p);
	regress_new_level(s, w, first, i, noise);
	w->chg_pt = i;
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

/* The level's first and last min_good_nights good nights up to point i
 * (medians into *ref, *cur) and the threshold a drift passes (into *thr,
 * from the noise of change_check's window, into *noise): 0 when they are
 * closer than that. Needs a window of two points or more. */
static int level_moved(const struct regress_conf *c, const struct hist_series *s,
		       const struct walk *w, size_t i, struct scratch *sc, double *ref, double *cur,
		       double *thr, double *noise)
{
	size_t k = (size_t)c->min_good_nights;
	*noise = isfinite(sc->win_noise) ? sc->win_noise
					 : diff_noise(c, sc->win, sc->win_m, sc->vals);
	*thr = fmax(c->min_delta_frac, c->noise_multiple * *noise);
	level_end(s, w, i, k, 1, sc->vals, ref);
	level_end(s, w, i, k, 0, sc->vals, cur);
	return !(fabs(*cur / *ref - 1) < *thr);
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
	double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, ref, cur, thr, noise, a, b, rss;
	/* a full window (most nights) tells whether the level's ends moved
	 * past the threshold before the sums over the whole level: a level
	 * that did not is told in O(k) (a year-long level made the walk
	 * quadratic) */
	size_t m = sc->win_m;
	int early = m >= 3 * k;
	if (early && !level_moved(c, s, w, i, sc, &ref, &cur, &thr, &noise))
		return 0;
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
	/* runs only after change_check returned 0 on this night: its window
	 * (win is untouched then), bimodal check and noise are reused */
	if (sc->win_bimodal < 0)
		sc->win_bimodal = window_bimodal(c, sc, w, m);
	if (sc->win_bimodal || (!early && !level_moved(c, s, w, i, sc, &ref, &cur, &thr, &noise)))
		return 0;
	double dn = (double)n;
	double sxx_c = sxx - sx * sx / dn, slope = (sxy - sx * sy / dn) / sxx_c;
	double res = syy - sy * sy / dn - slope * (sxy - sx * sy / dn);
	double se = sqrt(fmax(res, 0) / (dn - 2) / sxx_c);
	if (cpoint_t_p(slope / se, dn - 2) > c->change_max_p ||
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
	p->good_run = regress_last_good_run(s, first);
	p->change_nights = (int)(p->run - s->pts[first].run);
	history_reason_set(h, p, "drift: %+.1f%% over %d nights", p->delta_frac * 100,
			   p->change_nights);
	regress_new_level(s, w, i, i, noise);
	return 1;
}

/* The change of the level's confirming night w->chg_pt placed again on
 * point i, while the new level is young (at most baseline_nights good
 * nights): the previous level's nights and the new one's up to tonight are
 * searched as change_check searches; when the change point of the same
 * direction nearest the placement (min_good_nights before it, and lasted)
 * lies on another night, the confirming night's range, size and the new
 * level's start move there, and point i says so. Later nights place a
 * change better than its first few did; `ddt bisect` takes the range. */
static void replace_change(const struct regress_conf *c, struct history *h, struct hist_series *s,
			   struct walk *w, size_t i, struct scratch *sc)
{
	struct hist_point *pc = &s->pts[w->chg_pt];
	size_t good = 0, m, n, best = SIZE_MAX, cur = w->seg_start;
	struct cpoint_change ch[4], pick = {0};
	for (size_t j = w->seg_start; j <= i; j++)
		good += s->pts[j].in_baseline;
	if (good > (size_t)c->baseline_nights ||
	    (pc->verdict != REG_REGRESSION && pc->verdict != REG_IMPROVEMENT)) {
		w->chg_pt = SIZE_MAX; /* settled, or no step */
		return;
	}
	struct walk both = *w;
	both.seg_start = w->prev_start;
	m = level_window(c, s, &both, i, sc);
	double noise = isfinite(w->carry_noise) ? w->carry_noise : 0;
	struct cpoint_opts o = {.max_p = c->change_max_p,
				.split_p = fmin(10 * c->change_max_p, 0.05),
				.min_seg = (size_t)c->confirm_nights,
				.min_rel = fmax(c->min_delta_frac, noise)};
	if (cpoint_edivisive(sc->win, m, &o, ch, 4, &n))
		return;
	for (size_t k = 0; k < n; k++) {
		size_t at = sc->win_pt[ch[k].at];
		if ((ch[k].mean_after > ch[k].mean_before) != (pc->verdict == REG_REGRESSION) ||
		    ch[k].at < (size_t)c->min_good_nights || !sustained(c, sc->win, m, ch[k].at, &ch[k]))
			continue;
		if (best == SIZE_MAX || (at > cur ? at - cur : cur - at) <
					       (best > cur ? best - cur : cur - best)) {
			best = at;
			pick = ch[k];
		}
	}
	if (best == SIZE_MAX || best == cur)
		return;
	/* the data must prefer the new night: two levels split there leave
	 * less residual than split at the placement by at least two noise
	 * variances (a likelihood e times the placement's): no moving back
	 * and forth between nights that fit about as well */
	size_t kc = 0, hh;
	double sd = noise * pick.mean_before, a, b;
	while (kc < m && sc->win_pt[kc] < cur)
		kc++;
	if (kc < 2 || kc + 2 > m ||
	    !(step_rss(sc->win, m, kc) - step_rss(sc->win, m, pick.at) > 2 * sd * sd))
		return;
	/* a drift's best split follows it along: not a step to place */
	if (classify(c, sc->win, m, pick.at, &hh, &a, &b) != SHAPE_STEP)
		return;
	size_t was = pc->bad_run;
	pc->bad_run = s->pts[best].run;
	pc->good_run = regress_last_good_run(s, best);
	pc->baseline_us = pick.mean_before;
	pc->delta_frac = pick.mean_after / pick.mean_before - 1;
	for (size_t j = best; j < w->seg_start; j++) /* nights the new level now holds */
		if (s->pts[j].status == REC_OK && s->pts[j].verdict == REG_OK)
			s->pts[j].in_baseline = 1;
	w->seg_start = best;
	if (!s->pts[i].reason[0] && was < h->nruns)
		history_reason_set(h, &s->pts[i], "the change confirmed %s placed again: "
				   "first bad %s (was %s)", h->runs[pc->run].run_id,
				   h->runs[pc->bad_run].run_id, h->runs[was].run_id);
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

/* A change confirmed on a level that began with a drift the same way is
 * that drift going on: p reads "drift" again (returns 1). */
static int drift_goes_on(struct history *h, const struct hist_series *s, const struct walk *old,
			 struct hist_point *p)
{
	const struct hist_point *d = NULL;
	for (const struct hist_point *q = &s->pts[old->seg_start]; q < p && !d; q++)
		if (q->verdict == REG_DRIFT) /* the level's first or confirming night */
			d = q;
	if (!d || (d->delta_frac > 0) != (p->delta_frac > 0))
		return 0;
	p->verdict = REG_DRIFT;
	p->change_nights = (int)(p->run - d->run);
	history_reason_set(h, p, "drift goes on: %+.1f%% more over %d nights", p->delta_frac * 100,
			   p->change_nights);
	return 1;
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
	int flagged = judge(c, h, p, sc->vals, sc->sorted, n, w->carry_noise);
	if (flagged && recurring_level(c, s, i)) {
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
		if (drift_goes_on(h, s, &old, p))
			return;
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
	if (p->verdict == REG_OK && w->chg_pt != SIZE_MAX)
		replace_change(c, h, s, w, i, sc);
	if (!change_check(c, h, s, w, i, sc))
		long_drift(c, h, s, w, i, sc);
	else if (p->verdict == REG_REGRESSION || p->verdict == REG_IMPROVEMENT)
		drift_goes_on(h, s, &old, p);
}

/* ---------------------------------------------------------------- history */

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
	double *wbuf = calloc(ns * (1 + 2 * (size_t)c->change_window_nights), sizeof *wbuf);
	size_t *ms = calloc(ns, sizeof *ms), *cur = calloc(ns, sizeof *cur),
	       *next = calloc(ns, sizeof *next), *bym = calloc(ns, sizeof *bym);
	struct scratch sc = {malloc((size_t)c->baseline_nights * sizeof(double)),
			     malloc((size_t)(c->change_window_nights > 3 * c->baseline_nights
						 ? c->change_window_nights
						 : 3 * c->baseline_nights) * sizeof(double)),
			     malloc((size_t)c->change_window_nights * sizeof(double)),
			     malloc((size_t)c->change_window_nights * sizeof(size_t)), 0, -1, NAN};

	if (!ws || !wbuf || !ms || !cur || !next || !bym || !sc.vals || !sc.sorted || !sc.win ||
	    !sc.win_pt) {
		walk_unable(h);
		goto done;
	}
	for (size_t i = 0; i < h->n; i++) {
		ws[i].carry_noise = NAN;
		ws[i].chg_pt = SIZE_MAX;
		ws[i].wc = wbuf + i * (1 + 2 * (size_t)c->change_window_nights);
	}
	regress_group_machines(h, ms, bym);
	regress_mark_machine_changes(h, ws, cur); /* cur: scratch until the walk */
	memset(cur, 0, ns * sizeof *cur);
	for (size_t run = 0; run < h->nruns; run++) {
		for (size_t i = 0; i < h->n; i++) {
			struct hist_series *s = &h->series[i];
			cur[i] = (size_t)-1;
			if (next[i] < s->n && s->pts[next[i]].run == run) {
				cur[i] = next[i]++;
				walk_point(c, h, s, &ws[i], cur[i], &sc);
				if (cur[i] == 0 && ws[i].env_first && s->pts[0].verdict == REG_ENV)
					regress_note_machine_change(h, i, &ws[i]);
			}
		}
		regress_machine_moves(c, h, ws, ms, bym, cur, run);
		for (size_t i = 0; i < h->n; i++)
			if (cur[i] != (size_t)-1) {
				struct hist_point *p = &h->series[i].pts[cur[i]];
				p->verdict_night = p->verdict;
				p->good_run_night = p->good_run;
				p->bad_run_night = p->bad_run;
			}
	}
done:
	free(ws);
	free(wbuf);
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
