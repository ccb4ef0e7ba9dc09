/* accept_boot.c - the bootstrap over requests: steps gathered by request id, alike requests counted as one kind, resamples drawn request by request or as a multinomial over kinds. */
#include "accept_boot.h"

#include "cpu/cpu.h"
#include "err.h"
#include "rng.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REQUEST_STEPS (1u << 24) /* a request's summed acceptance fits 32 bits */

void accept_boot_init(struct accept_boot *c, int nb)
{
	memset(c, 0, sizeof *c);
	c->nb = nb;
}

void accept_boot_free(struct accept_boot *c)
{
	free(c->sum);
	free(c->size);
	free(c->key);
	free(c->val);
	memset(c, 0, sizeof *c);
}

static size_t slot_of(uint64_t h, size_t mask)
{
	return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 17) & mask;
}

/* Doubles the request-id table. Returns 0 or DDT_ENOMEM. */
static int map_grow(struct accept_boot *c)
{
	size_t cap = c->mcap ? 2 * c->mcap : 1024;
	uint64_t *key = calloc(cap, sizeof *key);
	uint32_t *val = calloc(cap, sizeof *val);
	if (!key || !val) {
		free(key);
		free(val);
		return DDT_ENOMEM;
	}
	for (size_t i = 0; i < c->mcap; i++) {
		if (!c->val[i])
			continue;
		size_t h = slot_of(c->key[i], cap - 1);
		while (val[h])
			h = (h + 1) & (cap - 1);
		key[h] = c->key[i];
		val[h] = c->val[i];
	}
	free(c->key);
	free(c->val);
	c->key = key;
	c->val = val;
	c->mcap = cap;
	return 0;
}

/* A new request with no steps; returns its index or -1 (no memory). */
static long request_new(struct accept_boot *c)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 4096;
		uint32_t *s = realloc(c->sum, cap * (size_t)c->nb * sizeof *s);
		if (s)
			c->sum = s;
		uint32_t *z = s ? realloc(c->size, cap * sizeof *z) : NULL;
		if (!z)
			return -1;
		c->size = z;
		c->cap = cap;
	}
	memset(c->sum + c->n * (size_t)c->nb, 0, (size_t)c->nb * sizeof *c->sum);
	c->size[c->n] = 0;
	return (long)c->n++;
}

/* The request of id, found or added; its index or -1 (no memory). */
static long request_of(struct accept_boot *c, uint64_t id)
{
	if (2 * (c->mn + 1) > c->mcap && map_grow(c))
		return -1;
	size_t h = slot_of(id, c->mcap - 1);
	while (c->val[h] && c->key[h] != id)
		h = (h + 1) & (c->mcap - 1);
	if (c->val[h])
		return (long)c->val[h] - 1;
	long i = request_new(c);
	if (i < 0)
		return -1;
	c->key[h] = id;
	c->val[h] = (uint32_t)i + 1;
	c->mn++;
	return i;
}

int accept_boot_add(struct accept_boot *c, const uint16_t *acc, int has_id, uint64_t id)
{
	long i = has_id ? request_of(c, id) : request_new(c);
	if (i < 0)
		return err_nomem();
	if (c->size[i] == MAX_REQUEST_STEPS)
		return err_set(DDT_EINPUT, "a request of more than %u steps", MAX_REQUEST_STEPS);
	uint32_t *s = c->sum + (size_t)i * c->nb;
	for (int j = 0; j < c->nb; j++) {
		s[j] += acc[j];
		c->tot[j] += acc[j];
		c->sq[j] += (double)acc[j] * acc[j];
	}
	c->size[i]++;
	c->steps++;
	c->id_steps += has_id != 0;
	return 0;
}

/* ---- kinds: alike requests counted once ---- */

struct kinds {
	size_t n;
	uint32_t *of;            /* [requests] each request's kind */
	uint32_t *first;         /* [n] a request of the kind */
	double *count;           /* [n] requests of the kind */
};

static uint64_t request_hash(const struct accept_boot *c, size_t i)
{
	uint64_t h = c->size[i] * 0x9e3779b97f4a7c15ull;
	const uint32_t *s = c->sum + i * (size_t)c->nb;
	for (int j = 0; j < c->nb; j++)
		h = (h ^ s[j]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int request_same(const struct accept_boot *c, size_t a, size_t b)
{
	return c->size[a] == c->size[b] &&
	       !memcmp(c->sum + a * (size_t)c->nb, c->sum + b * (size_t)c->nb,
		       (size_t)c->nb * sizeof *c->sum);
}

static int kinds_build(const struct accept_boot *c, struct kinds *k)
{
	size_t cap = 16;
	while (cap < 2 * c->n)
		cap *= 2;
	uint32_t *slot = calloc(cap, sizeof *slot); /* kind + 1 */
	k->of = malloc(c->n * sizeof *k->of);
	k->first = malloc(c->n * sizeof *k->first);
	k->count = calloc(c->n, sizeof *k->count);
	k->n = 0;
	if (!slot || !k->of || !k->first || !k->count) {
		free(slot);
		return DDT_ENOMEM;
	}
	for (size_t i = 0; i < c->n; i++) {
		size_t h = request_hash(c, i) & (cap - 1);
		while (slot[h] && !request_same(c, k->first[slot[h] - 1], i))
			h = (h + 1) & (cap - 1);
		if (!slot[h]) {
			k->first[k->n] = (uint32_t)i;
			slot[h] = (uint32_t)++k->n;
		}
		k->of[i] = slot[h] - 1;
		k->count[slot[h] - 1] += 1;
	}
	free(slot);
	return 0;
}

static void kinds_free(struct kinds *k)
{
	free(k->of);
	free(k->first);
	free(k->count);
}

/* ---- the resamples ---- */

struct boot {
	const struct accept_boot *c;
	const struct kinds *k;
	int R, multinomial, nomem;
	uint64_t seed;
	double *reps;            /* [R][nb] the resamples' means */
};

/* One resample's summed acceptance and steps: the kinds' counts from the multinomial. */
static void draw_multinomial(const struct boot *bt, gsl_rng *g, unsigned *cnt, uint64_t *sums,
			     uint64_t *steps)
{
	const struct accept_boot *c = bt->c;
	gsl_ran_multinomial(g, bt->k->n, (unsigned)c->n, bt->k->count, cnt);
	for (size_t t = 0; t < bt->k->n; t++) {
		if (!cnt[t])
			continue;
		size_t i = bt->k->first[t];
		const uint32_t *s = c->sum + i * (size_t)c->nb;
		for (int j = 0; j < c->nb; j++)
			sums[j] += (uint64_t)cnt[t] * s[j];
		*steps += (uint64_t)cnt[t] * c->size[i];
	}
}

/* The same, request by request. */
static void draw_direct(const struct boot *bt, struct rng *g, uint64_t *sums, uint64_t *steps)
{
	const struct accept_boot *c = bt->c;
	for (size_t n = 0; n < c->n; n++) {
		size_t i = rng_below(g, (uint32_t)c->n);
		const uint32_t *s = c->sum + i * (size_t)c->nb;
		for (int j = 0; j < c->nb; j++)
			sums[j] += s[j];
		*steps += c->size[i];
	}
}

static void boot_part(void *ctx, int tid, int nthreads)
{
	struct boot *bt = ctx;
	const struct accept_boot *c = bt->c;
	size_t lo, hi;
	gsl_rng *g = bt->multinomial ? gsl_rng_alloc(gsl_rng_taus2) : NULL;
	unsigned *cnt = bt->multinomial ? malloc(bt->k->n * sizeof *cnt) : NULL;
	cpu_split((size_t)bt->R, 1, tid, nthreads, &lo, &hi);
	if (bt->multinomial && (!g || !cnt)) {
		bt->nomem = 1; /* a lost race writes the same 1 */
		hi = lo;
	}
	for (size_t r = lo; r < hi; r++) {
		uint64_t sums[ACCEPT_BOOT_MAX_NB] = {0}, steps = 0, x = bt->seed + r;
		uint64_t s0 = rng_splitmix64(&x);
		struct rng rg;
		rng_seed(&rg, s0);
		if (bt->multinomial) {
			gsl_rng_set(g, (unsigned long)s0);
			draw_multinomial(bt, g, cnt, sums, &steps);
		} else {
			draw_direct(bt, &rg, sums, &steps);
		}
		for (int j = 0; j < c->nb; j++)
			bt->reps[r * c->nb + j] = (double)sums[j] / (double)steps;
	}
	free(cnt);
	if (g)
		gsl_rng_free(g);
}

int accept_boot_dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double accept_boot_quantile(const double *x, int n, double q)
{
	double h = (n - 1) * q;
	int i = (int)h;
	return i + 1 < n ? x[i] + (h - i) * (x[i + 1] - x[i]) : x[n - 1];
}

/* The covariance of the resamples' means, and each budget's interval
 * widened around mean by f. */
static int summarise(const struct accept_boot *c, const double *reps, int R, double level,
		     double f, const double *mean, struct accept_boot_out *o)
{
	int nb = c->nb;
	double *col = malloc((size_t)R * sizeof *col), avg[ACCEPT_BOOT_MAX_NB];
	if (!col || !(o->cov = calloc((size_t)nb * nb, sizeof *o->cov))) {
		free(col);
		return err_nomem();
	}
	for (int j = 0; j < nb; j++) {
		avg[j] = 0;
		for (int k = 0; k < R; k++)
			avg[j] += (col[k] = reps[(size_t)k * nb + j]) / R;
		qsort(col, (size_t)R, sizeof *col, accept_boot_dbl_cmp);
		o->lo[j] = mean[j] - f * (mean[j] - accept_boot_quantile(col, R, (1 - level) / 2));
		o->hi[j] = mean[j] + f * (accept_boot_quantile(col, R, (1 + level) / 2) - mean[j]);
	}
	for (int a = 0; a < nb; a++)
		for (int b = 0; b <= a; b++) {
			double s = 0;
			for (int k = 0; k < R; k++)
				s += (reps[(size_t)k * nb + a] - avg[a]) * (reps[(size_t)k * nb + b] - avg[b]);
			o->cov[a * nb + b] = o->cov[b * nb + a] = R > 1 ? s / (R - 1) : 0;
		}
	double N = (double)c->steps;
	for (int j = 0; j < nb; j++) {
		double m = c->tot[j] / N, v_steps = (c->sq[j] / N - m * m) / N;
		o->deff[j] = v_steps > 1e-15 ? o->cov[j * nb + j] / v_steps : NAN;
	}
	for (int j = 0; j < nb * nb; j++)
		o->cov[j] *= f * f;
	for (int j = 0; j < nb; j++)
		o->se[j] = sqrt(o->cov[j * nb + j]);
	free(col);
	return 0;
}

/* One request: nothing to resample. The interval is all a step can accept,
 * its standard error a quarter of that, the budgets moving together. */
static int no_interval(const struct accept_boot *c, const double *cap, struct accept_boot_out *o)
{
	int nb = c->nb;
	if (!(o->cov = calloc((size_t)nb * nb, sizeof *o->cov)))
		return err_nomem();
	for (int j = 0; j < nb; j++) {
		o->lo[j] = 1;
		o->hi[j] = cap[j];
		o->se[j] = (cap[j] - 1) / 4;
		o->deff[j] = NAN;
	}
	for (int a = 0; a < nb; a++)
		for (int b = 0; b < nb; b++)
			o->cov[a * nb + b] = o->se[a] * o->se[b];
	return 0;
}

int accept_boot_run(const struct accept_boot *c, int R, double level, uint64_t seed,
		    const double *mean, const double *cap, struct accept_boot_out *o)
{
	struct kinds k = {0};
	struct boot bt = {.c = c, .k = &k, .R = R, .seed = seed};
	int rc;
	memset(o, 0, sizeof *o);
	if (c->n < 2)
		return no_interval(c, cap, o);
	if (kinds_build(c, &k)) {
		kinds_free(&k);
		return err_nomem();
	}
	bt.multinomial = k.n * 8 <= c->n;
	if (!(bt.reps = malloc((size_t)R * c->nb * sizeof *bt.reps))) {
		kinds_free(&k);
		return err_nomem();
	}
	cpu_parallel(boot_part, &bt);
	double n = (double)c->n, z = gsl_cdf_ugaussian_Pinv((1 + level) / 2);
	double f = sqrt(n / (n - 1)) * gsl_cdf_tdist_Pinv((1 + level) / 2, n - 1) / z;
	rc = bt.nomem ? err_nomem() : summarise(c, bt.reps, R, level, f, mean, o);
	free(bt.reps);
	kinds_free(&k);
	return rc;
}
