/* bench_regress.c - ddt's regression verdicts beside Apache Otava on generated series with known change points: precision, recall, detection delay.
 *
 * Series (seeded, the same every run): steps of 2-10% at 0.5-5% noise, a
 * +0.5%/night drift over 30 nights, a slow compounding drift (+0.28%/night,
 * +180% a year) over 160 nights, bimodal noise and one-night outliers (with
 * and without a step), and pure noise. Both detectors are run as a nightly
 * would: ddt's verdicts are decided night by night (regress_history gives
 * each night's own verdict), Otava (compute_change_points, its defaults:
 * window 50, p 0.001) is run on every night's prefix. A detection is a
 * confirmed regression, improvement or drift (ddt) or a change point
 * (Otava) reported on night t and placed at index p; it finds a change when
 * p is within 3 nights of it (of a drift's span) and t is not before it;
 * later detections of a found change are not counted again; any other is a
 * false alarm. Delay: nights from the change's first night to the night it
 * was reported (0: that same night).
 *
 * And the real series of bench/data (each file cites its source and says
 * how its changes are labelled), scored the same way, with F1 per class and
 * found / false alarms per series: performance series (Apache Otava's
 * TigerBeetle series; Mozilla Perfherder series whose alerts the performance
 * sheriffs triaged) apart from the Turing Change Point Dataset's three, which
 * are not performance data (bench/data/tcpd_convert.py). A Perfherder series
 * is labelled only where an alert was raised ("labels: alerts"): its valid
 * alerts are the changes ("steps:"), a detection at an alert the sheriffs
 * marked invalid ("invalid:") is a false alarm, one elsewhere is counted as
 * unlabelled, not scored. "detector:" lists the alerts Perfherder's own
 * detector raised, valid or not: how many of them a detector also finds is
 * the detector-labelled count.
 *
 * Otava runs from build/otava-venv (bench/venv.sh installs
 * bench/otava-requirements.txt from PyPI there once); without it, ddt's
 * figures alone.
 * DDT_BENCH_NO_OTAVA=1: ddt alone; DDT_BENCH_VERBOSE=1: every detection. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fsx.h"
#include "history.h"
#include "record.h"
#include "regress.h"
#include "rng.h"
#include "tmpl.h"
#include "venv.h"

#define MAXN 700
#define MAXEV 16 /* labelled changes a series may have */
#define MAXS 256
#define TOL 3

enum fam { F_STEP, F_DRIFT, F_SLOW, F_BIMODAL, F_OUTLIER, F_NOISE, F_REAL, F_COUNT };

struct event {
	int start, end; /* nights (0-based) the change spans */
	int found;      /* per detector, during scoring */
	int delay;
};

struct gseries {
	enum fam fam;
	double size;    /* step size (fraction); 0 when none */
	double noise;
	int n;
	double v[MAXN];
	int nev;
	struct event ev[MAXEV];
	char name[64];  /* a real series: its file's name */
	int perf;       /* a real series of performance data */
	int partial;    /* labelled only at alerts: other detections unscored */
	int ninv, inv[MAXEV]; /* alerts marked invalid: a detection there is false */
	int ndet, det[MAXEV]; /* alerts the series' own detector raised */
	/* by the detector scored last: */
	int found, false_alarms, unlabelled, inv_hit, det_found;
};

static struct gseries all[MAXS];
static int nall;

static double gauss(struct rng *r)
{
	double u = ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	double v = ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) / 9007199254740992.0;
}

/* One series of family f; level(k) is the noiseless factor of night k. */
static struct gseries *add(enum fam f, double size, double noise, int n)
{
	struct gseries *g = &all[nall++];
	memset(g, 0, sizeof *g);
	g->fam = f;
	g->size = size;
	g->noise = noise;
	g->n = n;
	return g;
}

static void gen_all(void)
{
	static const double steps[] = {0.02, 0.04, 0.06, 0.10}, noises[] = {0.005, 0.01, 0.02,
									       0.05};
	struct rng r;
	uint64_t seed = 1;
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++)
			for (int k = 0; k < 5; k++) {
				struct gseries *g = add(F_STEP, steps[a], noises[b], 60);
				rng_seed(&r, seed++);
				int c = 30 + (int)(unit(&r) * 10), sign = k % 2 ? -1 : 1;
				for (int i = 0; i < g->n; i++)
					g->v[i] = 100 * (i >= c ? 1 + sign * g->size : 1) *
						  (1 + g->noise * gauss(&r));
				g->ev[g->nev++] = (struct event){c, c, 0, 0};
			}
	for (int b = 0; b < 3; b++) /* +0.5% a night for 30 nights */
		for (int k = 0; k < 5; k++) {
			struct gseries *g = add(F_DRIFT, 0.15, noises[b], 60);
			rng_seed(&r, seed++);
			for (int i = 0; i < g->n; i++) {
				int d = i < 20 ? 0 : i < 50 ? i - 19 : 30;
				g->v[i] = 100 * (1 + 0.005 * d) * (1 + g->noise * gauss(&r));
			}
			g->ev[g->nev++] = (struct event){20, 49, 0, 0};
		}
	for (int k = 0; k < 3; k++) { /* +180% a year: +0.28% a night, compounding */
		struct gseries *g = add(F_SLOW, 0.56, 0.01, 200);
		rng_seed(&r, seed++);
		for (int i = 0; i < g->n; i++)
			g->v[i] = 100 * pow(1.0028, i < 40 ? 0 : i - 39) * (1 + 0.01 * gauss(&r));
		g->ev[g->nev++] = (struct event){40, 199, 0, 0};
	}
	for (int k = 0; k < 15; k++) { /* two levels 8% apart; the last five step 6% */
		struct gseries *g = add(F_BIMODAL, k >= 10 ? 0.06 : 0, 0.005, 60);
		rng_seed(&r, seed++);
		for (int i = 0; i < g->n; i++)
			g->v[i] = 100 * (unit(&r) < 0.5 ? 1.08 : 1) * (i >= 35 ? 1 + g->size : 1) *
				  (1 + 0.005 * gauss(&r));
		if (g->size > 0)
			g->ev[g->nev++] = (struct event){35, 35, 0, 0};
	}
	for (int k = 0; k < 15; k++) { /* three one-night spikes of +20%; the last five step 5% */
		struct gseries *g = add(F_OUTLIER, k >= 10 ? 0.05 : 0, 0.01, 60);
		rng_seed(&r, seed++);
		for (int i = 0; i < g->n; i++)
			g->v[i] = 100 * (i >= 35 ? 1 + g->size : 1) * (1 + 0.01 * gauss(&r));
		for (int s = 0; s < 3; s++)
			g->v[8 + s * 17 + (int)(unit(&r) * 6)] *= 1.2;
		if (g->size > 0)
			g->ev[g->nev++] = (struct event){35, 35, 0, 0};
	}
	for (int b = 0; b < 4; b++)
		for (int k = 0; k < 5; k++) {
			struct gseries *g = add(F_NOISE, 0, noises[b], 60);
			rng_seed(&r, seed++);
			for (int i = 0; i < g->n; i++)
				g->v[i] = 100 * (1 + g->noise * gauss(&r));
		}
}

/* Reads "key: i j ..." indexes after key into v (at most MAXEV); 1 if line
 * starts with key. */
static int read_list(const char *line, const char *key, int *v, int *n)
{
	size_t k = strlen(key);
	char *end;
	if (strncmp(line, key, k))
		return 0;
	for (const char *p = line + k; *n < MAXEV;) {
		long a = strtol(p, &end, 10);
		if (end == p)
			break;
		v[(*n)++] = (int)a;
		p = end;
	}
	return 1;
}

/* The real series listed below, bench/data/NAME.series (public data, each citing its
 * source): "steps: i j ..." and "drift: from to" lines give the labelled
 * changes (run indexes), "labels: alerts", "invalid: ..." and "detector: ..."
 * a series labelled at its alerts only, then the values. Returns how many
 * were read. */
static int load_real(void)
{
	static const struct {
		const char *file;
		int perf;
	} files[] = {{"bench/data/tigerbeetle.series", 1},
		     {"bench/data/mozilla-2780728.series", 1},
		     {"bench/data/mozilla-4653590.series", 1},
		     {"bench/data/mozilla-4677930.series", 1},
		     {"bench/data/mozilla-4754836.series", 1},
		     {"bench/data/tcpd-well_log.series", 0},
		     {"bench/data/tcpd-quality_control_4.series", 0},
		     {"bench/data/tcpd-run_log.series", 0}};
	int n = 0;
	for (size_t f = 0; f < sizeof files / sizeof *files && nall < MAXS; f++) {
		FILE *fp = fopen(files[f].file, "r");
		char line[4096];
		if (!fp)
			continue;
		struct gseries *g = add(F_REAL, 0, 0, 0);
		const char *base = strrchr(files[f].file, '/');
		snprintf(g->name, sizeof g->name, "%.*s", (int)strcspn(base + 1, "."), base + 1);
		g->perf = files[f].perf;
		while (fgets(line, sizeof line, fp)) {
			char *p = line, *end;
			int a, b, st[MAXEV], nst = 0;
			if (line[0] == '#' || read_list(line, "invalid:", g->inv, &g->ninv) ||
			    read_list(line, "detector:", g->det, &g->ndet))
				continue;
			if (!strncmp(line, "labels: alerts", 14))
				g->partial = 1;
			else if (read_list(line, "steps:", st, &nst))
				for (int k = 0; k < nst && g->nev < MAXEV; k++)
					g->ev[g->nev++] = (struct event){st[k], st[k], 0, 0};
			else if (sscanf(line, "drift: %d %d", &a, &b) == 2 && g->nev < MAXEV)
				g->ev[g->nev++] = (struct event){a, b, 0, 0};
			else
				for (double v; g->n < MAXN && (v = strtod(p, &end), end != p); p = end)
					g->v[g->n++] = v;
		}
		fclose(fp);
		n++;
	}
	return n;
}

/* ---- detections and their score ---- */

struct det {
	int series, night, at;
};

struct dets {
	int n, cap;
	struct det *v;
};

static int det_push(struct dets *d, int series, int night, int at)
{
	if (d->n == d->cap) {
		int cap = d->cap ? d->cap * 2 : 1024;
		struct det *v = realloc(d->v, (size_t)cap * sizeof *v);
		if (!v)
			return -1;
		d->v = v;
		d->cap = cap;
	}
	d->v[d->n++] = (struct det){series, night, at};
	return 0;
}

struct score {
	int events, found, false_alarms, delay_sum;
	int unlabelled;          /* detections where a series has no label */
	int inv, inv_hit;        /* alerts marked invalid, and those detected */
	int det, det_found;      /* alerts a series' own detector raised, found */
};

/* Scores the detections of one detector against every series' events;
 * per family group into sc[group]. Group of a series: what it counts for. */
enum group { G_STEP4, G_STEP2, G_DRIFT, G_OTHER_STEP, G_NONE, G_PERF, G_OTHER, G_COUNT };
static const char *const group_names[G_COUNT] = {
	"steps >= 4%", "steps of 2%", "drifts", "steps in bimodal/outlier noise", "no change",
	"real performance, labelled", "real non-performance (TCPD)"};

static enum group group_of(const struct gseries *g)
{
	if (g->fam == F_REAL)
		return g->perf ? G_PERF : G_OTHER;
	if (g->fam == F_STEP)
		return g->size >= 0.04 ? G_STEP4 : G_STEP2;
	if (g->fam == F_DRIFT || g->fam == F_SLOW)
		return G_DRIFT;
	return g->nev ? G_OTHER_STEP : G_NONE;
}

/* Whether detection x reports the change that began at point p: placed
 * within TOL of it, on or after its night. */
static int hits(const struct det *x, int p)
{
	return abs(x->at - p) <= TOL && x->night >= p;
}

/* Detection x against series g's labels: 1 when it finds a labelled change
 * (the first time: its delay), 0 a false alarm, -1 unlabelled (a series
 * labelled at its alerts only, and x at none of them). */
static int judge(struct gseries *g, const struct det *x, unsigned char *inv_hit,
		 unsigned char *det_found)
{
	int matched = 0, at_invalid = 0;
	for (int e = 0; e < g->nev; e++) {
		struct event *ev = &g->ev[e];
		if (x->at < ev->start - TOL || x->at > ev->end + TOL || x->night < ev->start)
			continue;
		matched = 1;
		if (!ev->found) {
			ev->found = 1;
			ev->delay = x->night - ev->start;
		}
	}
	for (int k = 0; k < g->ninv; k++)
		if (hits(x, g->inv[k]))
			at_invalid = inv_hit[k] = 1;
	for (int k = 0; k < g->ndet; k++)
		if (hits(x, g->det[k]))
			det_found[k] = 1;
	return matched ? 1 : g->partial && !at_invalid ? -1 : 0;
}

static void score(const struct dets *d, struct score *sc, int *nights_total)
{
	static const char *const tag[] = {"  FALSE ALARM", "", "  unlabelled"};
	memset(sc, 0, G_COUNT * sizeof *sc);
	*nights_total = 0;
	for (int s = 0; s < nall; s++) {
		struct gseries *g = &all[s];
		struct score *c = &sc[group_of(g)];
		unsigned char inv_hit[MAXEV] = {0}, det_found[MAXEV] = {0};
		*nights_total += g->n;
		for (int e = 0; e < g->nev; e++)
			g->ev[e].found = 0;
		g->found = g->false_alarms = g->unlabelled = 0;
		for (int k = 0; k < d->n; k++) {
			const struct det *x = &d->v[k];
			if (x->series != s)
				continue;
			int j = judge(g, x, inv_hit, det_found);
			g->false_alarms += j == 0;
			g->unlabelled += j < 0;
			if (getenv("DDT_BENCH_VERBOSE"))
				printf("  series %3d %s(fam %d, size %.2f, noise %.3f, change at %d): "
				       "night %3d placed %3d%s\n", s, g->name, g->fam, g->size, g->noise,
				       g->nev ? g->ev[0].start : -1, x->night, x->at,
				       tag[j < 0 ? 2 : j]);
		}
		g->inv_hit = g->det_found = 0;
		for (int k = 0; k < MAXEV; k++)
			g->inv_hit += inv_hit[k], g->det_found += det_found[k];
		for (int e = 0; e < g->nev; e++) {
			g->found += g->ev[e].found;
			c->delay_sum += g->ev[e].found ? g->ev[e].delay : 0;
		}
		c->events += g->nev;
		c->found += g->found;
		c->false_alarms += g->false_alarms;
		c->unlabelled += g->unlabelled;
		c->inv += g->ninv, c->inv_hit += g->inv_hit;
		c->det += g->ndet, c->det_found += g->det_found;
	}
}

/* ---- ddt ---- */

/* The history of series s's first n nights, walked (regress_history). */
static int ddt_walk(const struct regress_conf *c, int s, int n, struct history *h)
{
	const struct gseries *g = &all[s];
	struct rec_device dev = {.kind = "cpu", .name = "bench", .arch = "x86_64", .cores = 1,
				 .mem_gb = 1, .sm_clock_mhz = NAN, .mem_clock_mhz = NAN,
				 .peak_gbps = NAN, .copy_gbps = NAN};
	memset(h, 0, sizeof *h);
	for (int i = 0; i < n; i++) {
		struct run_record r;
		struct rec_row w = {.op = "op", .variant = "cold", .backend = "cpu",
				    .samples = 10, .status = REC_OK, .median_us = g->v[i]};
		memset(&r, 0, sizeof r);
		snprintf(r.run_id, sizeof r.run_id, "2026%04dT000000Z-bench", i);
		snprintf(r.prov.git_rev, sizeof r.prov.git_rev, "%07d", i);
		if (record_add_device(&r, &dev) || record_add_row(&r, &w) ||
		    history_add_record(h, &r))
			return -1;
		record_free(&r);
	}
	regress_history(c, h);
	return 0;
}

/* The later placements of the change confirmed at point k of series s (a
 * change's first bad night is placed again while its new level is young):
 * each night whose walk moved it is a detection at the new place. */
static int ddt_replaced(const struct regress_conf *c, int s, size_t k, size_t at, struct dets *d)
{
	for (int t = (int)k + 1; t < all[s].n; t++) {
		struct history h;
		if (ddt_walk(c, s, t + 1, &h))
			return -1;
		size_t now = h.series[0].pts[k].bad_run;
		history_free(&h);
		if (now != at && det_push(d, s, t, (int)now))
			return -1;
		at = now;
	}
	return 0;
}

/* ddt's detections on series s: each night's own confirmed verdicts, placed
 * as that night placed them, and their later placements. */
static int ddt_series(const struct regress_conf *c, int s, struct dets *d)
{
	struct history h;
	if (ddt_walk(c, s, all[s].n, &h))
		return -1;
	const struct hist_series *hs = &h.series[0];
	for (size_t i = 0; i < hs->n; i++) {
		const struct hist_point *p = &hs->pts[i];
		if ((p->verdict_night == REG_REGRESSION || p->verdict_night == REG_IMPROVEMENT ||
		     p->verdict_night == REG_DRIFT) &&
		    (det_push(d, s, (int)p->run, (int)p->bad_run_night) ||
		     (p->bad_run != p->bad_run_night &&
		      ddt_replaced(c, s, i, p->bad_run_night, d))))
			return -1;
		if (getenv("DDT_BENCH_VERBOSE") && p->verdict_night != REG_OK &&
		    p->verdict_night != REG_SHORT)
			printf("  ddt series %3d night %3zu: %s %+.1f%% noise %.2f%% %s\n", s, i,
			       regress_verdict_name(p->verdict_night), p->delta_frac * 100,
			       p->noise_frac * 100, p->reason);
		else if (getenv("DDT_BENCH_VERBOSE") && p->reason[0] && !strncmp(p->reason, "the change", 10))
			printf("  ddt series %3d night %3zu: %s\n", s, i, p->reason);
	}
	history_free(&h);
	return 0;
}

/* ---- Otava ---- */

/* Runs bench/otava_detect.py on every series; its detections into d, each
 * change point once (the first night it was reported at an index not
 * within TOL of one already reported). Returns 0, or -1 with why in why. */
static int otava_run(struct dets *d, char *why, size_t len)
{
	char py[1024] = "", dir[] = "/tmp/ddt-bench-regress-XXXXXX", cmd[2048];
	if (bench_venv_python("build/otava-venv", "bench/otava-requirements.txt", py, sizeof py)) {
		snprintf(why, len, "no Apache Otava (bench/venv.sh failed: no PyPI here?)");
		return -1;
	}
	if (!mkdtemp(dir))
		return snprintf(why, len, "no temporary folder"), -1;
	char *path = fsx_join(dir, "series.txt");
	FILE *out = path ? fopen(path, "w") : NULL;
	if (!out)
		return snprintf(why, len, "cannot write the series"), -1;
	for (int s = 0; s < nall; s++) {
		fprintf(out, "%d", s);
		for (int i = 0; i < all[s].n; i++)
			fprintf(out, " %.6f", all[s].v[i]);
		fputc('\n', out);
	}
	fclose(out);
	snprintf(cmd, sizeof cmd, "%s bench/otava_detect.py %s", py, path);
	FILE *fp = popen(cmd, "r");
	int s, t, at, last_s = -1, nrep = 0, rep[MAXN];
	while (fp && fscanf(fp, "%d %d %d", &s, &t, &at) == 3) {
		if (s != last_s)
			nrep = 0, last_s = s;
		int seen = 0;
		for (int k = 0; k < nrep; k++)
			seen |= abs(rep[k] - at) <= TOL;
		if (seen)
			continue;
		if (nrep < MAXN)
			rep[nrep++] = at;
		if (det_push(d, s, t - 1, at)) /* the prefix of t nights ends on night t-1 */
			break;
	}
	int rc = fp ? pclose(fp) : -1;
	fsx_rm_rf(dir);
	free(path);
	if (rc != 0)
		return snprintf(why, len, "bench/otava_detect.py failed (%d)", rc), -1;
	return 0;
}

/* ---- the table ---- */

/* "precision P recall R F1 F" of found changes against false alarms. */
static void print_f1(const char *who, const char *what, int events, int found, int fa,
		     const char *tail)
{
	double prec = found + fa ? (double)found / (found + fa) : NAN,
	       rec = events ? (double)found / events : NAN;
	printf("%-8s %-32s precision %.2f recall %.2f F1 %.2f%s\n", who, what, prec, rec,
	       2 * prec * rec / (prec + rec), tail);
}

/* The real series: F1 per class and pooled, the alert-labelled counts, and
 * per series found / false alarms (and for a series labelled at its alerts:
 * unlabelled detections, its detector's alerts found, invalid ones hit). */
static void print_real(const char *who, const struct score *sc)
{
	const struct score *p = &sc[G_PERF], *o = &sc[G_OTHER];
	char tail[128];
	if (!p->events && !o->events)
		return;
	snprintf(tail, sizeof tail, " (%d unlabelled detections not scored)", p->unlabelled);
	print_f1(who, group_names[G_PERF], p->events, p->found, p->false_alarms, tail);
	print_f1(who, "  same, unlabelled as false", p->events, p->found,
		 p->false_alarms + p->unlabelled, "");
	print_f1(who, group_names[G_OTHER], o->events, o->found, o->false_alarms, "");
	print_f1(who, "real, pooled", p->events + o->events, p->found + o->found,
		 p->false_alarms + o->false_alarms, "");
	printf("%-8s %-32s %d/%d found; alerts marked invalid drawing a detection: %d/%d\n",
	       who, "Perfherder's own alerts", p->det_found, p->det, p->inv_hit, p->inv);
	for (int s = 0; s < nall; s++) {
		const struct gseries *g = &all[s];
		if (g->fam != F_REAL)
			continue;
		tail[0] = 0;
		if (g->partial)
			snprintf(tail, sizeof tail, "   unlabelled %d, own alerts %d/%d, invalid %d/%d",
				 g->unlabelled, g->det_found, g->ndet, g->inv_hit, g->ninv);
		printf("%-8s   %-30s %7d %7d %19s %7d%s\n", who, g->name, g->nev, g->found, "",
		       g->false_alarms, tail);
	}
}

static void print_row(const char *who, const struct score *sc, int nights)
{
	int fa = 0, tp = 0;
	for (int g = 0; g < G_COUNT; g++)
		fa += sc[g].false_alarms, tp += sc[g].found;
	for (int g = 0; g < G_COUNT; g++) {
		if (!sc[g].events && g != G_NONE)
			continue;
		if (g == G_NONE)
			printf("%-8s %-32s %7s %7s %9s %11s %7d\n", who, group_names[g], "-", "-",
			       "-", "-", sc[g].false_alarms);
		else
			printf("%-8s %-32s %7d %7d %8.0f%% %11.1f %7d\n", who, group_names[g],
			       sc[g].events, sc[g].found, 100.0 * sc[g].found / sc[g].events,
			       sc[g].found ? (double)sc[g].delay_sum / sc[g].found : NAN,
			       sc[g].false_alarms);
	}
	printf("%-8s %-32s precision %.0f%% (%d found, %d false alarms, %.2f per 100 nights)\n",
	       who, "all", tp + fa ? 100.0 * tp / (tp + fa) : NAN, tp, fa, 100.0 * fa / nights);
	print_real(who, sc);
	printf("\n");
}

int main(void)
{
	struct regress_conf c;
	struct dets dd = {0}, od = {0};
	struct score sd[G_COUNT], so[G_COUNT];
	char why[256];
	int nights;

	if (regress_conf_load_file(&c, "templates/default.yaml")) {
		fprintf(stderr, "bench_regress: %s\n", err_msg());
		return 1;
	}
	gen_all();
	load_real();
	for (int s = 0; s < nall; s++)
		if (ddt_series(&c, s, &dd))
			return 1;
	score(&dd, sd, &nights);
	printf("%d series, %d nights; a change found within %d nights of where it began\n\n",
	       nall, nights, TOL);
	printf("%-8s %-32s %7s %7s %9s %11s %7s\n", "detector", "series", "changes", "found",
	       "recall", "delay (n)", "false");
	print_row("ddt", sd, nights);
	fflush(stdout);
	if (getenv("DDT_BENCH_NO_OTAVA"))
		return 0;
	if (otava_run(&od, why, sizeof why)) {
		printf("Apache Otava: not run: %s\n", why);
		return 0;
	}
	score(&od, so, &nights);
	print_row("otava", so, nights);
	int fa_d = 0, fa_o = 0;
	for (int g = 0; g < G_COUNT; g++)
		fa_d += sd[g].false_alarms, fa_o += so[g].false_alarms;
	int ok = sd[G_STEP4].found >= so[G_STEP4].found && sd[G_DRIFT].found >= so[G_DRIFT].found &&
		 fa_d <= fa_o;
	printf("target (recall >= Otava's on steps >= 4%% and drifts, no more false alarms): %s "
	       "(ddt %d + %d found, %d false; Otava %d + %d found, %d false)\n",
	       ok ? "met" : "NOT met", sd[G_STEP4].found, sd[G_DRIFT].found, fa_d,
	       so[G_STEP4].found, so[G_DRIFT].found, fa_o);
	free(dd.v);
	free(od.v);
	return 0;
}
