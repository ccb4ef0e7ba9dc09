/* test_cpoint_ref.c - cpoint_best_split bit for bit against the plain search (the full distance matrix, t then kappa) on random series. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpoint.h"
#include "rng.h"

/* The search as first written (one m x (m + 1) matrix of prefix sums, row
 * by row; every split t, then every kappa; the first largest Q-hat): the
 * reference the vectorized search must match exactly. */
static void ref_best_split(const double *x, size_t lo, size_t hi, size_t min_seg, size_t *at,
			   size_t *kappa, double *qhat)
{
	size_t m = hi - lo, w = m + 1;
	double *r = malloc(m * w * sizeof *r), *sxx = malloc(w * sizeof *sxx), best = -INFINITY;
	assert_non_null(r);
	assert_non_null(sxx);
	for (size_t k = 0; k < m; k++) {
		r[k * w] = 0;
		for (size_t a = 0; a < m; a++)
			r[k * w + a + 1] = r[k * w + a] + fabs(x[lo + a] - x[lo + k]);
	}
	sxx[0] = 0;
	for (size_t a = 1; a <= m; a++)
		sxx[a] = sxx[a - 1] + r[(a - 1) * w + a - 1];
	*at = lo + min_seg, *kappa = hi;
	for (size_t t = min_seg; t + min_seg <= m; t++) {
		double sxy = 0, syy = 0, nx = (double)t;
		double px = t > 1 ? sxx[t] / (nx * (double)(t - 1) / 2) : 0;
		for (size_t k = t; k < m; k++) {
			sxy += r[k * w + t];
			syy += r[k * w + k] - r[k * w + t];
			size_t ny = k + 1 - t;
			if (ny < min_seg)
				continue;
			double py = ny > 1 ? syy / ((double)ny * (double)(ny - 1) / 2) : 0;
			double e = 2 * sxy / (nx * (double)ny) - px - py;
			double q = nx * (double)ny / (double)(t + ny) * e;
			if (q > best)
				best = q, *at = lo + t, *kappa = lo + k + 1;
		}
	}
	*qhat = best;
	free(r);
	free(sxx);
}

/* Series of one of five kinds: noise, a step, a drift, two steps, values
 * on a coarse grid (ties everywhere). */
static void random_series(struct rng *r, double *x, size_t n, int kind)
{
	size_t s1 = 1 + rng_next(r) % n, s2 = 1 + rng_next(r) % n;
	double noise = 0.002 + 0.05 * (double)(rng_next(r) % 1000) / 1000;
	for (size_t i = 0; i < n; i++) {
		double u = (double)(rng_next(r) >> 11) / 9007199254740992.0 - 0.5, v = 100;
		if (kind == 1 || kind == 3)
			v *= i >= s1 ? 1.08 : 1;
		if (kind == 3)
			v *= i >= s2 ? 0.95 : 1;
		if (kind == 2)
			v *= 1 + 0.005 * (double)(i > s1 ? i - s1 : 0);
		v *= 1 + noise * u;
		x[i] = kind == 4 ? round(v / 2) : v;
	}
}

/* 600 series of 4 to 80 points (beyond the stack's 64, onto the heap),
 * min_seg 1 to 3: the same split, kappa and Q-hat bits. */
static void test_cpoint_ref__best_split_is_the_plain_search_bit_for_bit(void **state)
{
	(void)state;
	struct rng r;
	double x[80];
	rng_seed(&r, 20261204);
	for (int s = 0; s < 600; s++) {
		size_t n = 4 + rng_next(&r) % 77, min_seg = 1 + (size_t)s % 3, lo = rng_next(&r) % 3;
		random_series(&r, x, n, s % 5);
		size_t at, kappa, rat, rkappa;
		double q, rq;
		if (n - lo < 2 * min_seg)
			continue;
		assert_int_equal(cpoint_best_split(x, lo, n, min_seg, &at, &kappa, &q), 0);
		ref_best_split(x, lo, n, min_seg, &rat, &rkappa, &rq);
		assert_int_equal(at, rat);
		assert_int_equal(kappa, rkappa);
		assert_memory_equal(&q, &rq, sizeof q);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpoint_ref__best_split_is_the_plain_search_bit_for_bit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
