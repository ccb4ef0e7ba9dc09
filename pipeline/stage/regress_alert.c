/* regress_alert.c - alerts: each confirmed slowdown open from its confirming night until the series returns or someone answers it. */
#include "regress.h"

#include "acks.h"
#include "err.h"
#include "revrange.h"
#include "sort.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const char *const regress_alert_state_names[ALERT_COUNT] = {"open", "acknowledged", "invalid"};

const char *regress_alert_state_name(enum regress_alert_state s)
{
	return (unsigned)s < ALERT_COUNT ? regress_alert_state_names[s] : "?";
}

/* A confirmed slowdown opens an alert. */
static int opens(const struct hist_point *p)
{
	return p->verdict_night == REG_REGRESSION ||
	       (p->verdict_night == REG_DRIFT && p->delta_frac > 0);
}

/* A confirmed change back to within half of alert a's change closes it. */
static int closes(const struct hist_point *p, const struct regress_alert *a)
{
	int back = p->verdict_night == REG_IMPROVEMENT ||
		   (p->verdict_night == REG_DRIFT && p->delta_frac < 0);
	return back && p->median_us <= a->baseline_us * (1 + a->delta_frac / 2);
}

/* A night that starts a level (its first, or a confirmed change). */
static int starts_level(const struct hist_point *p)
{
	return p->verdict_night == REG_NEW || p->verdict_night == REG_REGRESSION ||
	       p->verdict_night == REG_IMPROVEMENT || p->verdict_night == REG_DRIFT ||
	       p->verdict_night == REG_ENV;
}

static int level_night(const struct hist_point *p)
{
	return p->status == REC_OK && p->verdict != REG_OUTLIER && p->verdict != REG_UNJUDGED;
}

void regress_point_interval(const struct hist_series *s, const struct hist_point *p,
			    double *lo, double *hi)
{
	const struct hist_point *bad = history_point_at(s, p->bad_run);
	size_t i = (size_t)(p - s->pts), b = bad && bad <= p ? (size_t)(bad - s->pts) : i;
	size_t nb = 0, na = p->status == REC_OK;
	for (size_t j = b; j-- > 0;) {
		nb += s->pts[j].in_baseline && level_night(&s->pts[j]);
		if (starts_level(&s->pts[j]))
			break;
	}
	double half = na && nb && isfinite(p->noise_frac)
			      ? 1.96 * p->noise_frac * sqrt(1.0 / (double)na + 1.0 / (double)nb)
			      : NAN;
	*lo = p->delta_frac - half;
	*hi = p->delta_frac + half;
}

/* Median of v[0..n) (sorts v); NaN when n is 0. */
static double median_of(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof *v, sort_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The old level's good nights before point b (back to where that level
 * began) into v; returns how many. */
static size_t old_level(const struct hist_series *s, size_t b, double *v)
{
	size_t n = 0;
	for (size_t j = b; j-- > 0;) {
		if (s->pts[j].in_baseline && level_night(&s->pts[j]))
			v[n++] = s->pts[j].median_us;
		if (starts_level(&s->pts[j]))
			break;
	}
	return n;
}

/* The new level's nights from point b up to night run into v; their
 * relative standard deviation around their mean into *sd. */
static size_t new_level(const struct hist_series *s, size_t b, size_t run, double *v, double *sd)
{
	size_t n = 0;
	double sum = 0, ss = 0;
	for (size_t j = b; j < s->n && s->pts[j].run <= run; j++)
		if (level_night(&s->pts[j]))
			sum += v[n++] = s->pts[j].median_us;
	for (size_t k = 0; k < n; k++)
		ss += (v[k] - sum / n) * (v[k] - sum / n);
	*sd = n > 1 ? sqrt(ss / (double)(n - 1)) / (sum / n) : 0;
	return n;
}

/* Size, interval, nights and age of alert a (confirmed at point i of s) as
 * of night run. v has room for s->n values. */
static void measure(struct regress_alert *a, const struct history *h, const struct hist_series *s,
		    size_t i, size_t run, double *v)
{
	const struct hist_point *p = &s->pts[i], *bad = history_point_at(s, p->bad_run);
	size_t b = bad ? (size_t)(bad - s->pts) : i, nb, na;
	double sd;
	nb = old_level(s, b, v);
	a->baseline_us = nb ? median_of(v, nb) : p->baseline_us;
	na = new_level(s, b, run, v, &sd);
	a->level_us = median_of(v, na);
	a->nights = (int)na;
	a->delta_frac = a->level_us / a->baseline_us - 1;
	double sigma = fmax(isfinite(p->noise_frac) ? p->noise_frac : 0, sd);
	double half = na && nb ? 1.96 * sigma * sqrt(1.0 / (double)na + 1.0 / (double)nb) : NAN;
	a->lo_frac = a->delta_frac - half;
	a->hi_frac = a->delta_frac + half;
	a->age_nights = (int)(run - p->run);
	a->age_days = (double)(h->runs[run].t - h->runs[p->bad_run < h->nruns ? p->bad_run
									       : p->run].t) / 86400;
}

/* The alert point i of s opens (fields that do not change with time). */
static void alert_of(struct regress_alert *a, const struct history *h, const struct hist_series *s,
		     size_t i)
{
	const struct hist_point *p = &s->pts[i];
	uint32_t x = 2166136261u;
	char range[176];
	memset(a, 0, sizeof *a);
	a->key = s->key;
	a->verdict = p->verdict_night;
	a->baseline_us = p->baseline_us;
	a->delta_frac = p->delta_frac;
	snprintf(a->opened_run, sizeof a->opened_run, "%s", h->runs[p->run].run_id);
	if (p->good_run < h->nruns)
		snprintf(a->good_run_id, sizeof a->good_run_id, "%s", h->runs[p->good_run].run_id);
	if (p->bad_run < h->nruns) {
		snprintf(a->bad_run_id, sizeof a->bad_run_id, "%s", h->runs[p->bad_run].run_id);
		snprintf(a->bad_rev, sizeof a->bad_rev, "%.*s",
			 (int)strcspn(h->runs[p->bad_run].git_rev, "+"), h->runs[p->bad_run].git_rev);
	}
	if (p->good_run < h->nruns)
		snprintf(a->good_rev, sizeof a->good_rev, "%.*s",
			 (int)strcspn(h->runs[p->good_run].git_rev, "+"), h->runs[p->good_run].git_rev);
	regress_commits(h, p, a->commits, sizeof a->commits);
	/* the id names the range as the confirming night placed it, so that
	 * an answer to it holds when later nights place the change again */
	snprintf(range, sizeof range, "%s..%s",
		 p->good_run_night < h->nruns ? h->runs[p->good_run_night].run_id : "",
		 p->bad_run_night < h->nruns ? h->runs[p->bad_run_night].run_id : "");
	for (const char *c = range; *c; c++)
		x = (x ^ (unsigned char)*c) * 16777619u;
	snprintf(a->id, sizeof a->id, "%06x", (unsigned)(x & 0xffffff));
}

/* The answer to alert a in h->acks, if any. */
static void answer(struct regress_alert *a, const struct history *h)
{
	char label[512];
	const struct hist_ack *k = acks_find(h, a->id, history_key_label(&a->key, label, sizeof label));
	if (!k)
		return;
	a->state = k->invalid ? ALERT_INVALID : ALERT_ACKED;
	snprintf(a->answer, sizeof a->answer, "%s by %s on %s%s%.160s",
		 k->invalid ? "marked invalid" : "acknowledged", k->by[0] ? k->by : "?", k->at,
		 k->reason[0] ? ": " : "", k->reason);
}

static int push(struct regress_night *n, size_t *cap, const struct regress_alert *a)
{
	if (n->nalerts == *cap) {
		size_t ncap = *cap ? 2 * *cap : 8;
		struct regress_alert *v = realloc(n->alerts, ncap * sizeof *v);
		if (!v)
			return err_nomem();
		n->alerts = v;
		*cap = ncap;
	}
	n->alerts[n->nalerts++] = *a;
	n->open_alerts += a->state == ALERT_OPEN;
	return 0;
}

/* The alerts of series s still open on night run, pushed to n. */
static int series_alerts(struct regress_night *n, size_t *cap, const struct history *h,
			 const struct hist_series *s, size_t run, double *v)
{
	size_t first = n->nalerts;
	int rc = 0;
	for (size_t i = 0; i < s->n && s->pts[i].run <= run && !rc; i++) {
		const struct hist_point *p = &s->pts[i];
		struct regress_alert a;
		for (size_t k = first; k < n->nalerts; k++)
			if (closes(p, &n->alerts[k])) {
				n->open_alerts -= n->alerts[k].state == ALERT_OPEN;
				n->alerts[k--] = n->alerts[--n->nalerts];
			}
		if (!opens(p))
			continue;
		alert_of(&a, h, s, i);
		rc = push(n, cap, &a);
		if (!rc) /* where it opened, to measure it */
			n->alerts[n->nalerts - 1].age_nights = (int)i;
	}
	for (size_t k = first; k < n->nalerts && !rc; k++) {
		struct regress_alert *a = &n->alerts[k];
		n->open_alerts -= a->state == ALERT_OPEN;
		measure(a, h, s, (size_t)a->age_nights, run, v);
		answer(a, h);
		n->open_alerts += a->state == ALERT_OPEN;
	}
	return rc;
}

/* Grouped by commit range: the newest first bad night first, then by id and series. */
static int by_group(const void *x, const void *y)
{
	const struct regress_alert *a = x, *b = y;
	int c = strcmp(b->bad_run_id, a->bad_run_id);
	if (!c)
		c = strcmp(a->id, b->id);
	if (!c)
		c = (int)a->state - (int)b->state;
	if (!c)
		c = strcmp(a->key.op, b->key.op);
	if (!c)
		c = strcmp(a->key.params, b->key.params);
	return c ? c : strcmp(a->key.machine, b->key.machine);
}

int regress_alerts_build(struct regress_night *n, const struct history *h, size_t run)
{
	size_t cap = 0, most = 1;
	int rc = 0;
	for (size_t i = 0; i < h->n; i++)
		most = h->series[i].n > most ? h->series[i].n : most;
	double *v = malloc(most * sizeof *v);
	if (!v)
		return err_nomem();
	for (size_t i = 0; i < h->n && !rc && run < h->nruns; i++)
		rc = series_alerts(n, &cap, h, &h->series[i], run, v);
	free(v);
	if (n->nalerts)
		qsort(n->alerts, n->nalerts, sizeof *n->alerts, by_group);
	return rc;
}

void regress_alerts_answer(struct regress_night *n, const struct history *h)
{
	n->open_alerts = 0;
	for (size_t i = 0; i < n->nalerts; i++) {
		n->alerts[i].state = ALERT_OPEN;
		n->alerts[i].answer[0] = '\0';
		answer(&n->alerts[i], h);
		n->open_alerts += n->alerts[i].state == ALERT_OPEN;
	}
}

int regress_alerts_fold(struct regress_night *all, const struct regress_night *one)
{
	size_t cap = all->nalerts;
	for (size_t i = 0; i < one->nalerts; i++)
		if (push(all, &cap, &one->alerts[i]))
			return DDT_ENOMEM;
	return 0;
}

char *regress_alert_line(const struct regress_alert *a, char *buf, size_t len)
{
	char label[512];
	size_t off = (size_t)snprintf(
	    buf, len, "alert %s %s %d night%s (%.1f days): %s %s %+.1f%% [%+.1f%%, %+.1f%%] over %d night%s",
	    a->id, regress_alert_state_name(a->state), a->age_nights + 1,
	    a->age_nights ? "s" : "", a->age_days, regress_verdict_name(a->verdict),
	    history_key_label(&a->key, label, sizeof label), a->delta_frac * 100, a->lo_frac * 100,
	    a->hi_frac * 100, a->nights, a->nights == 1 ? "" : "s");
	if (off < len && a->commits[0])
		off += (size_t)snprintf(buf + off, len - off,
					", commits %s (first bad runs/%s/, report reports/%s/report.pdf)",
					a->commits, a->bad_run_id, a->opened_run);
	if (off < len && a->answer[0])
		snprintf(buf + off, len - off, "; %s", a->answer);
	return buf;
}

size_t regress_alert_group(const struct regress_night *n, size_t i)
{
	size_t k = 1;
	while (i + k < n->nalerts && !strcmp(n->alerts[i + k].id, n->alerts[i].id) &&
	       n->alerts[i + k].state == n->alerts[i].state)
		k++;
	return k;
}

char *regress_range_url(const char *url, const char *good, const char *bad, char *buf, size_t len)
{
	return revrange_url(url, good, bad, buf, len);
}

/* a's range link (regress_range_url) appended to buf at off (" <url>");
 * nothing when either revision is unknown. */
static void append_url(const struct regress_alert *a, const char *url, char *buf, size_t len,
		       size_t off)
{
	if (off + 2 >= len)
		return;
	regress_range_url(url, a->good_rev, a->bad_rev, buf + off + 1, len - off - 1);
	if (buf[off + 1])
		buf[off] = ' ';
}

char *regress_alert_group_line(const struct regress_alert *a, size_t k, const char *url,
			       char *buf, size_t len)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < k; i++)
		lo = fmin(lo, a[i].delta_frac), hi = fmax(hi, a[i].delta_frac);
	size_t off = (size_t)snprintf(buf, len, "alert %s %s %d night%s (%.1f days): %zu series %s, ",
				      a->id, regress_alert_state_name(a->state), a->age_nights + 1,
				      a->age_nights ? "s" : "", a->age_days, k,
				      k == 1 ? regress_verdict_name(a->verdict) : "slower");
	if (off < len)
		off += (size_t)snprintf(buf + off, len - off, k == 1 || hi - lo < 0.0005
								 ? "%+.1f%%" : "%+.1f%% to %+.1f%%",
					lo * 100, hi * 100);
	if (off < len && a->commits[0])
		off += (size_t)snprintf(buf + off, len - off,
					", commits %s (first bad runs/%s/, report reports/%s/report.pdf)",
					a->commits, a->bad_run_id, a->opened_run);
	if (off < len)
		append_url(a, url, buf, len, off);
	off = strlen(buf);
	if (off < len && a->answer[0])
		snprintf(buf + off, len - off, "; %s", a->answer);
	return buf;
}

char *regress_alert_series_line(const struct regress_alert *a, char *buf, size_t len)
{
	char label[512];
	snprintf(buf, len, "%s %+.1f%% [%+.1f%%, %+.1f%%] over %d night%s",
		 history_key_label(&a->key, label, sizeof label), a->delta_frac * 100,
		 a->lo_frac * 100, a->hi_frac * 100, a->nights, a->nights == 1 ? "" : "s");
	return buf;
}
