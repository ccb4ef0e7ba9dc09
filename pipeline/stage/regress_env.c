/* regress_env.c - machine and environment changes: a series continuing another machine's, and most series of one machine moving together on one night. */
#include "regress.h"
#include "regress_walk.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
void regress_mark_machine_changes(const struct history *h, struct walk *ws, size_t *order)
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
void regress_note_machine_change(struct history *h, size_t si, const struct walk *w)
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
void regress_group_machines(const struct history *h, size_t *ms, size_t *bym)
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

/* Whether point p moved (flagged or confirmed) in direction dir (0: either). */
static int moved(const struct hist_point *p, int dir)
{
	if (p->status != REC_OK || !isfinite(p->z) ||
	    !(p->verdict == REG_SUSPECT || p->verdict == REG_REGRESSION ||
	      p->verdict == REG_IMPROVEMENT))
		return 0;
	return !dir || (p->delta_frac > 0 ? 1 : -1) == dir;
}

/* The shared move of machine k's series on night `run` (most of them, dir):
 * the environment's change since the first mover's last good night into
 * what ("" when the provenance records none). */
static void shared_env_change(const struct history *h, const size_t *ms, const size_t *cur,
			      size_t k, int dir, size_t run, char *what, size_t len)
{
	what[0] = '\0';
	for (size_t j = 0; j < h->n; j++) {
		const struct hist_series *s = &h->series[j];
		if (ms[j] != ms[k] || cur[j] == (size_t)-1 || !moved(&s->pts[cur[j]], dir))
			continue;
		const struct hist_point *first = s->pts[cur[j]].bad_run < h->nruns
							 ? history_point_at(s, s->pts[cur[j]].bad_run)
							 : NULL;
		size_t good = regress_last_good_run(s, first ? (size_t)(first - s->pts) : cur[j]);
		if (good < h->nruns)
			history_env_diff(h->runs[good].env, h->runs[run].env, what, len);
		return;
	}
}

/* Most judged series of one machine moving together on one night: when the
 * environment the records name changed (compiler, CUDA, driver, NCCL,
 * build, host, template) it is the machine, not the code: those series
 * read "environment changed" and restart their baselines. With the same
 * environment each keeps its own verdict (a shared slowdown of a new
 * revision is a regression of each series, grouped as one alert by its
 * commit range). ms[k] is series k's machine number, cur[k] its point on
 * night `run` (or SIZE_MAX). */
void regress_machine_moves(const struct regress_conf *c, struct history *h, struct walk *ws,
			  const size_t *ms, const size_t *bym, const size_t *cur, size_t run)
{
	char what[160];
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
			judged += p->status == REC_OK && isfinite(p->z);
			up += moved(p, 1);
			down += moved(p, -1);
		}
		int most = up > down ? up : down, dir = up > down ? 1 : -1;
		if (most < c->env_min_series || most < c->env_share * judged)
			continue;
		shared_env_change(h, ms, cur, k, dir, run, what, sizeof what);
		for (size_t m = g; m < e; m++) {
			size_t j = bym[m];
			if (cur[j] == (size_t)-1)
				continue;
			struct hist_series *s = &h->series[j];
			struct hist_point *p = &s->pts[cur[j]];
			if (!moved(p, dir))
				continue;
			if (!what[0]) {
				if (!p->reason[0])
					history_reason_set(h, p,
							   "%d of %d series of %.60s moved %s together; "
							   "the environment is the same",
							   most, judged, s->key.machine,
							   dir > 0 ? "up" : "down");
				continue;
			}
			p->verdict = REG_ENV;
			p->bad_run = p->run;
			p->good_run = regress_last_good_run(s, cur[j]);
			history_reason_set(h, p,
					   "environment changed: %s (%d of %d series of %.60s moved %s)",
					   what, most, judged, s->key.machine, dir > 0 ? "up" : "down");
			regress_new_level(s, &ws[j], cur[j], cur[j], p->noise_frac);
		}
	}
}
