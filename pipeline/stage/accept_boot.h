/* accept_boot.h - the bootstrap of mean acceptance over requests: steps gathered by request id, requests resampled whole, the design effect against steps taken as independent. */
#ifndef DDT_ACCEPT_BOOT_H
#define DDT_ACCEPT_BOOT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Steps of one request share the drafter's luck (the prompt, the domain, the
 * context): resampling steps as if independent gives intervals several times
 * too narrow. Here each request is one unit: its steps' summed acceptance per
 * budget and its step count; a resample draws as many requests as there are,
 * with replacement, and its mean is their summed acceptance over their summed
 * steps. A step without a request id is a request of its own.
 *
 * Requests that are alike (the same step count and sums: every request of one
 * step whose acceptances match) are one kind with a count, and a resample
 * draws the kinds' counts from the multinomial when there are few kinds for
 * the requests (conditional binomials): the same distribution as drawing
 * requests one by one, at a cost in kinds, not requests.
 */

#define ACCEPT_BOOT_MAX_NB 64

struct accept_boot {
	int nb;                 /* budgets */
	size_t n, cap;          /* requests */
	uint32_t *sum;          /* [n][nb] summed acceptance of each request's steps */
	uint32_t *size;         /* [n] its steps */
	uint64_t *key;          /* [mcap] request id hash, open addressing */
	uint32_t *val;          /* [mcap] its request index + 1 (0: empty) */
	size_t mcap, mn;
	long long steps, id_steps;             /* steps; those with a request id */
	double sq[ACCEPT_BOOT_MAX_NB];          /* summed squared acceptance per budget */
	double tot[ACCEPT_BOOT_MAX_NB];         /* summed acceptance per budget */
};

/* What the bootstrap gives per budget. */
struct accept_boot_out {
	double lo[ACCEPT_BOOT_MAX_NB], hi[ACCEPT_BOOT_MAX_NB]; /* the interval */
	double se[ACCEPT_BOOT_MAX_NB];    /* standard error of the mean */
	double deff[ACCEPT_BOOT_MAX_NB];  /* design effect: the variance over requests / the one
					   * of steps taken as independent (NaN: no spread) */
	double *cov;                      /* [nb][nb] covariance of the means (malloc'd) */
};

/* Starts c for nb budgets. Cannot fail. */
void accept_boot_init(struct accept_boot *c, int nb);

/* Adds one step's acceptance per budget (acc[nb]) to its request: has_id 0,
 * a request of its own. Returns 0, DDT_ENOMEM, or DDT_EINPUT (message set)
 * for a request of more than 2^24 steps. */
int accept_boot_add(struct accept_boot *c, const uint16_t *acc, int has_id, uint64_t id);

/* R resamples of the requests (seeded by seed and the resample's index alone:
 * the same figures on any thread count), the percentile interval at level
 * widened for few requests by sqrt(n / (n - 1)) t(n - 1) / z (and the
 * covariance by its square); with one request, no interval: [1, cap[j]].
 * mean[nb] is the point estimate, cap[nb] the most a step can accept at each
 * budget. Returns 0 or DDT_ENOMEM; o->cov freed by the caller. */
int accept_boot_run(const struct accept_boot *c, int R, double level, uint64_t seed,
		    const double *mean, const double *cap, struct accept_boot_out *o);

void accept_boot_free(struct accept_boot *c);

/* qsort's comparison of doubles, ascending. */
int accept_boot_dbl_cmp(const void *a, const void *b);

/* Quantile q of sorted x[n], linear between order statistics. */
double accept_boot_quantile(const double *x, int n, double q);

#endif
