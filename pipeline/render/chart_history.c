/* chart_history.c - a kernel's history as a chart: its series over the
 * nights, change points labelled, on a date axis (the report's history
 * sections and the site's series pages). */
#include "chart.h"

#include "chart_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


static int series_matches(const struct hist_series *s, const struct report_section *sec)
{
	return !strcmp(s->key.op, sec->op) && (!sec->variant[0] || !strcmp(s->key.variant, sec->variant));
}

/* Seconds of an ISO 8601 UTC time; -1 when malformed. */
static time_t iso_time(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	if (sscanf(s, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return timegm(&tm);
}

/* Midnight (UTC) of the history's first night: day 0 of the x axis. */
static time_t day0(const struct history *h)
{
	time_t t = iso_time(h->runs[0].created);
	return t < 0 ? 0 : t - t % 86400;
}

/* Days from day 0 to run i (its index when the time is malformed). */
static double run_day(const struct history *h, size_t i)
{
	time_t t = iso_time(h->runs[i].created);
	return t < 0 ? (double)i : (double)(t - day0(h)) / 86400.0;
}

/* A date axis over [0, span] days from day 0: ticks on whole days (1, 2, 7
 * or 14 apart) for short histories, on the first of every 1, 2, 3, 6 or 12
 * months for long ones. */
static void date_axis(struct chart_axis *a, double span, time_t base, const char *title)
{
	static const int days[] = {1, 2, 7, 14}, months[] = {1, 2, 3, 6, 12};
	struct tm tm;

	memset(a, 0, sizeof *a);
	snprintf(a->title, sizeof a->title, "%s", title);
	a->lo = 0;
	a->hi = span > 1 ? span : 1;
	if (span <= 60) {
		int step = days[3];
		for (int k = 0; k < 4; k++)
			if (span / days[k] <= 6) {
				step = days[k];
				break;
			}
		a->hi = ceil(a->hi / step) * step;
		for (int d = 0; d <= a->hi + 1e-9 && a->nticks < CHART_MAX_TICKS; d += step) {
			time_t t = base + (time_t)d * 86400;
			gmtime_r(&t, &tm);
			a->ticks[a->nticks] = d;
			strftime(a->labels[a->nticks++], sizeof a->labels[0], "%Y-%m-%d", &tm);
		}
		return;
	}
	int step = 12;
	for (int k = 0; k < 5; k++)
		if (span / 30.4 / months[k] <= 6) {
			step = months[k];
			break;
		}
	gmtime_r(&base, &tm);
	int y = tm.tm_year, m = tm.tm_mon + 1; /* the first month start after day 0 */
	if (m == 12)
		y++, m = 0;
	while (m % step) /* ticks on months that are multiples of the step */
		if (++m == 12)
			y++, m = 0;
	for (;;) {
		struct tm first = {.tm_year = y, .tm_mon = m, .tm_mday = 1};
		double d = (double)(timegm(&first) - base) / 86400.0;
		if (d > a->hi || a->nticks == CHART_MAX_TICKS)
			break;
		a->ticks[a->nticks] = d;
		strftime(a->labels[a->nticks++], sizeof a->labels[0], "%Y-%m", &first);
		if ((m += step) >= 12)
			y++, m -= 12;
	}
}

/* 1 when token t ("M=9") is one of the params of every series shown. */
static int param_shared(const struct history *h, const int *idx, int n, const char *t)
{
	size_t tl = strlen(t);
	for (int j = 0; j < n; j++) {
		const char *p = h->series[idx[j]].key.params, *f = p;
		int found = 0;
		while (!found && (f = strstr(f, t)) != NULL) {
			found = (f == p || f[-1] == ',') && (f[tl] == ',' || f[tl] == '\0');
			f += tl;
		}
		if (!found)
			return 0;
	}
	return 1;
}

/* The params every shown series shares ("tp=8"), comma-separated. */
static void shared_params(const struct history *h, const int *idx, int n, char *buf, size_t len)
{
	char own[256], *save = NULL;
	size_t off = 0;
	buf[0] = '\0';
	if (!n)
		return;
	snprintf(own, sizeof own, "%s", h->series[idx[0]].key.params);
	for (char *t = strtok_r(own, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (param_shared(h, idx, n, t) && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", t);
}

void chart_report_series_label(const struct history *h, const int *idx, int n, int k,
			       char *buf, size_t len)
{
	char own[256], *save = NULL;
	const struct hist_key *key = &h->series[idx[k]].key;
	size_t off = 0;
	int machines = 1;
	buf[0] = '\0';
	snprintf(own, sizeof own, "%s", key->params);
	for (char *t = strtok_r(own, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if ((n < 2 || !param_shared(h, idx, n, t)) && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "", t);
	if (!buf[0])
		off = (size_t)snprintf(buf, len, "%s", key->variant);
	for (int j = 0; j < n; j++)
		machines += strcmp(h->series[idx[j]].key.machine, h->series[idx[0]].key.machine) != 0;
	if (machines > 1 && off < len) /* the host: "vm:217d975c" -> "vm" */
		snprintf(buf + off, len - off, " %.*s", (int)strcspn(key->machine, ":"),
			 key->machine);
}

static enum chart_mark verdict_mark(enum regress_verdict v, enum chart_ink *ink)
{
	switch (v) {
	case REG_REGRESSION:
	case REG_DRIFT:
		*ink = INK_REGRESSION;
		return MARK_CIRCLE;
	case REG_SUSPECT:
		*ink = INK_REGRESSION;
		return MARK_RING;
	case REG_IMPROVEMENT:
		*ink = INK_IMPROVEMENT;
		return MARK_TRIANGLE;
	case REG_OUTLIER:
		*ink = INK_MEASURED;
		return MARK_CROSS;
	default:
		*ink = INK_MEASURED;
		return MARK_NONE;
	}
}

/* The y (points) of a series' end label at y, moved down past the labels
 * already placed (ys[0..*n)) so that no two overlap; then kept. */
static double end_label_y(double y, double *ys, int *n)
{
	for (int moved = 1; moved;) {
		moved = 0;
		for (int i = 0; i < *n; i++)
			if (fabs(y - ys[i]) < 7.5) {
				y = ys[i] + 7.5;
				moved = 1;
			}
	}
	if (*n < HIST_SERIES)
		ys[(*n)++] = y;
	return y;
}

/* Draws one series: its baseline band, its medians, its flagged nights, and
 * its label at its last night (below the labels placed before, ys). */
static void history_series(struct chart *c, const struct hist_series *s, size_t nruns,
			   const double *day, int dashed, const char *label, double *ys, int *nys)
{
	size_t n = 0;
	double *x = malloc(sizeof *x * (s->n + 1) * 4), *y, *lo, *hi;
	if (!x)
		return;
	y = x + s->n + 1, lo = y + s->n + 1, hi = lo + s->n + 1;
	for (size_t i = 0; i < s->n; i++) {
		const struct hist_point *p = &s->pts[i];
		if (p->run >= nruns)
			break;
		x[n] = day[p->run];
		y[n] = p->median_us;
		lo[n] = p->band_lo_us;
		hi[n] = p->band_hi_us;
		n++;
	}
	chart_band(c, x, lo, hi, n, INK_BASELINE, 0.45);
	chart_line(c, x, y, n, INK_MEASURED, 1.0, dashed);
	for (size_t i = 0; i < n; i++) {
		enum chart_ink ink;
		enum chart_mark m = verdict_mark(s->pts[i].verdict, &ink);
		if (m != MARK_NONE)
			chart_mark(c, x[i], y[i], m, ink, 5);
		else if (n < 60)
			chart_mark(c, x[i], y[i], MARK_CIRCLE, INK_MEASURED, 2.5);
	}
	for (size_t i = n; i-- > 0;)
		if (isfinite(y[i])) {
			chart_text(c, chart_px(c, x[i]) + 5, end_label_y(chart_py(c, y[i]), ys, nys), 0,
				   0.5, label, 6, INK_MUTED, 0);
			break;
		}
	free(x);
}

void chart_report_label_rows(const double *x0, const double *x1, int n, int *row)
{
	for (int i = 0; i < n; i++) {
		int r = 0, clash = 1;
		while (clash) {
			clash = 0;
			for (int j = 0; j < i && !clash; j++)
				clash = row[j] == r && x0[i] < x1[j] + 2 && x0[j] < x1[i] + 2;
			r += clash;
		}
		row[i] = r;
	}
}

#define HIST_LABELS 32

/* The change points' commit labels of a chart, set after every series so
 * that none covers another (chart_report_label_rows). */
struct change_labels {
	int n;
	double x[HIST_LABELS];
	enum chart_ink ink[HIST_LABELS];
	char text[HIST_LABELS][120];
};

static void change_labels_draw(struct chart *c, const struct change_labels *l)
{
	double x0[HIST_LABELS] = {0}, x1[HIST_LABELS] = {0};
	int row[HIST_LABELS] = {0};
	for (int i = 0; i < l->n; i++) {
		double w, h;
		PangoLayout *lay = chart_layout(c->cr, CHART_SANS, 6, 0, l->text[i], 0, 0);
		chart_layout_size(lay, &w, &h);
		g_object_unref(lay);
		x1[i] = l->x[i] - 2, x0[i] = x1[i] - w - 2; /* right-aligned at its line */
	}
	chart_report_label_rows(x0, x1, l->n, row);
	for (int i = 0; i < l->n; i++)
		chart_label(c, x1[i], c->py + 3 + 9 * row[i], 1, 0, l->text[i], 6, l->ink[i]);
}

/* A change point of series s at point i: a confirmed regression, improvement
 * or drift naming its first bad night. */
static int change_point(const struct hist_series *s, size_t i, size_t nruns)
{
	const struct hist_point *p = &s->pts[i];
	return (p->verdict == REG_REGRESSION || p->verdict == REG_IMPROVEMENT ||
		p->verdict == REG_DRIFT) &&
	       p->bad_run != HIST_NO_RUN && p->bad_run < nruns && p->run < nruns;
}

/* Marks the change points of s: a dashed line at the first bad night, and
 * into l the commit range from the last good night's revision to the first
 * bad's (once per night and range, whichever series names it). */
static void history_changes(struct chart *c, const struct history *h,
			    const struct hist_series *s, size_t nruns, const double *day,
			    struct change_labels *l)
{
	size_t last = HIST_NO_RUN;
	for (size_t i = 0; i < s->n; i++) {
		const struct hist_point *p = &s->pts[i];
		enum chart_ink ink = p->verdict == REG_IMPROVEMENT ? INK_IMPROVEMENT : INK_REGRESSION;
		char range[120];
		if (!change_point(s, i, nruns) || p->bad_run == last)
			continue;
		last = p->bad_run;
		chart_vline(c, day[p->bad_run], ink, 0.9, 1);
		snprintf(range, sizeof range, "%.20s..%.20s",
			 p->good_run < nruns && h->runs[p->good_run].git_rev[0]
				 ? h->runs[p->good_run].git_rev : "?",
			 h->runs[p->bad_run].git_rev[0] ? h->runs[p->bad_run].git_rev : "?");
		int dup = 0;
		for (int k = 0; k < l->n && !dup; k++)
			dup = l->x[k] == chart_px(c, day[p->bad_run]) && !strcmp(l->text[k], range);
		if (dup || l->n == HIST_LABELS)
			continue;
		l->x[l->n] = chart_px(c, day[p->bad_run]);
		l->ink[l->n] = ink;
		snprintf(l->text[l->n++], sizeof l->text[0], "%s", range);
	}
}

/* The range in µs of series idx[0..n) of h over its nights before nruns,
 * and the most measured nights any of them has. */
static void history_range(const struct history *h, size_t nruns, const int *idx, int n,
			  int *nights, double *ymin, double *ymax)
{
	double blo = INFINITY, bhi = 0;
	*nights = 0, *ymin = INFINITY, *ymax = 0;
	for (int k = 0; k < n; k++) {
		const struct hist_series *s = &h->series[idx[k]];
		int m = 0;
		for (size_t i = 0; i < s->n && s->pts[i].run < nruns; i++) {
			const struct hist_point *p = &s->pts[i];
			if (isfinite(p->median_us)) {
				*ymin = fmin(*ymin, p->median_us);
				*ymax = fmax(*ymax, p->median_us);
				m++;
			}
			if (isfinite(p->band_hi_us))
				bhi = fmax(bhi, p->band_hi_us);
			if (isfinite(p->band_lo_us))
				blo = fmin(blo, p->band_lo_us);
		}
		*nights = m > *nights ? m : *nights;
	}
	/* the medians decide the axis; a baseline band widens it to at most
	 * half the lowest median and twice the highest (a noisy night's band
	 * can reach below zero: the axis never does, the band is clipped) */
	if (isfinite(*ymin)) {
		*ymin = fmin(*ymin, fmax(blo, 0.5 * *ymin));
		*ymax = fmax(*ymax, fmin(bhi, 2 * *ymax));
	}
}

void chart_report_history_range(const struct history *h, size_t nruns, const int *idx, int n,
				double *ymin, double *ymax)
{
	int nights;
	history_range(h, nruns, idx, n, &nights, ymin, ymax);
}

/* True when s has a change point among the first nruns nights, or its last
 * night shown is flagged (a regression, suspect, drift or improvement). */
static int series_flagged(const struct hist_series *s, size_t nruns)
{
	size_t last = s->n;
	for (size_t i = 0; i < s->n && s->pts[i].run < nruns; i++) {
		if (change_point(s, i, nruns))
			return 1;
		last = i;
	}
	if (last == s->n)
		return 0;
	enum regress_verdict v = s->pts[last].verdict;
	return v == REG_REGRESSION || v == REG_SUSPECT || v == REG_DRIFT || v == REG_IMPROVEMENT;
}

/* The series a history section shows (up to HIST_SERIES, into idx), their
 * range in µs, and the most measured nights any of them has. */
int chart_history_pick(const struct report_data *d, const struct report_section *sec, int *idx,
		       int *nights, double *ymin, double *ymax)
{
	const struct history *h = &d->hist;
	size_t nruns = d->hist_run >= 0 ? (size_t)d->hist_run + 1 : 0;
	int n = 0;

	/* the series flagged (a change point shown, or tonight's verdict) first */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < h->n && n < HIST_SERIES; i++)
			if (series_matches(&h->series[i], sec) &&
			    series_flagged(&h->series[i], nruns) == !pass)
				idx[n++] = (int)i;
	history_range(h, nruns, idx, n, nights, ymin, ymax);
	return n;
}

/* The axes, note and legend of a history chart of series idx[0..n) whose
 * nights are day[0..nruns) (NULL: too few nights, an empty frame). */
static void history_frame(struct chart *c, const struct history *h, size_t nruns,
			  const int *idx, int n, const double *day)
{
	int nights;
	double ymin, ymax;
	char shared[256];

	history_range(h, nruns, idx, n, &nights, &ymin, &ymax);
	shared_params(h, idx, n, shared, sizeof shared);
	if (!day) { /* an empty frame: no ticks to read */
		chart_axis_linear(&c->x, 0, 1, 2, 0, "night (UTC)");
		chart_axis_linear(&c->y, 0, 1, 2, 1, "median time per call (µs)");
		c->x.nticks = c->y.nticks = 0;
		return;
	}
	snprintf(c->note, sizeof c->note,
		 "Median per night (%s%s%s); shaded: the baseline band (median of the last good "
		 "nights, robust noise).", n ? h->series[idx[0]].key.device : "", shared[0] ? ", " : "",
		 shared);
	date_axis(&c->x, day[nruns - 1] + 0.5, day0(h), "night (UTC)");
	c->pad_right = 58; /* each series' params at its last night */
	if (ymax / ymin > 4)
		chart_axis_log(&c->y, ymin, ymax, "median time per call (µs)");
	else
		chart_axis_linear(&c->y, ymin, ymax, 7, 1, "median time per call (µs)");
	chart_legend_add(c, INK_MEASURED, SWATCH_LINE, MARK_NONE, "median");
	chart_legend_add(c, INK_BASELINE, SWATCH_BOX, MARK_NONE, "baseline band");
	chart_legend_add(c, INK_REGRESSION, SWATCH_MARK, MARK_CIRCLE, "regression");
	chart_legend_add(c, INK_REGRESSION, SWATCH_MARK, MARK_RING, "suspect");
	chart_legend_add(c, INK_IMPROVEMENT, SWATCH_MARK, MARK_TRIANGLE, "improvement");
	chart_legend_add(c, INK_MEASURED, SWATCH_MARK, MARK_CROSS, "outlier");
	chart_legend_add(c, INK_REGRESSION, SWATCH_DASH, MARK_NONE,
			 "change point: commits last good..first bad");
}

/* The history of series idx[0..n) of h over its nights before nruns. */
static void draw_history_of(struct chart *c, const struct history *h, size_t nruns,
			    const int *idx, int n)
{
	int nights;
	double ymin, ymax, *day = NULL;

	history_range(h, nruns, idx, n, &nights, &ymin, &ymax);
	if (nights >= 2 && (day = malloc(sizeof *day * nruns)) != NULL)
		for (size_t i = 0; i < nruns; i++)
			day[i] = run_day(h, i);
	history_frame(c, h, nruns, idx, n, day);
	chart_layout_frame(c);
	if (!day) {
		chart_empty(c, "no history yet");
		return;
	}
	struct change_labels labels = {0};
	double ys[HIST_SERIES];
	int nys = 0;
	for (int k = 0; k < n; k++) {
		char label[256];
		chart_report_series_label(h, idx, n, k, label, sizeof label);
		history_series(c, &h->series[idx[k]], nruns, day, k % 2, label, ys, &nys);
		history_changes(c, h, &h->series[idx[k]], nruns, day, &labels);
	}
	change_labels_draw(c, &labels);
	free(day);
}

/* Draws history section sec of d (chart_report_draw's). */
void chart_history_draw(struct chart *c, const struct report_data *d,
			const struct report_section *sec)
{
	size_t nruns = d->hist_run >= 0 ? (size_t)d->hist_run + 1 : 0;
	int idx[HIST_SERIES], nights;
	double ymin, ymax;
	int n = chart_history_pick(d, sec, idx, &nights, &ymin, &ymax);

	draw_history_of(c, &d->hist, nruns, idx, n);
}

void chart_report_history(cairo_t *cr, double w, double h, const void *arg)
{
	const struct chart_history *a = arg;
	struct chart c;

	chart_begin(&c, cr, w, h, a->title);
	draw_history_of(&c, a->h, a->nruns, a->idx, a->n);
	chart_finish(&c);
}
