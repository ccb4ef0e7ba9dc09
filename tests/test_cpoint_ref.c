/* test_cpoint_ref.c - cpoint_best_split bit for bit against the plain search (the full distance matrix, t then kappa) on random series and on ties; cpoint_no_change_possible's bound against the merge's own means and against the bound as first written; cpoint_no_split_passes against every split's test; sort_slide against a full sort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cpoint.h"
#include "rng.h"
#include "sort.h"

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

/* Series on which many splits tie or nearly tie, where the search's
 * bounds (no division in the first pass; cpoint.c, search_bounded) must
 * leave every split that could hold the largest Q-hat: one value, a mirror
 * image, a period of 2 or 3, a coarse grid, noise; scaled from subnormal
 * to near overflow (past DBL_MAX / 2^20 the plain search runs): the same
 * split, kappa and Q-hat bits as the plain search. */
static void test_cpoint_ref__bounded_search_keeps_ties_and_extremes(void **state)
{
	(void)state;
	static const double scale[] = {1, 1e-310, 1e-200, 3e-5, 1e200, 1e300};
	struct rng r;
	double x[64];
	rng_seed(&r, 20261207);
	for (int s = 0; s < 4000; s++) {
		size_t n = 2 + rng_next(&r) % 63, min_seg = 1 + (size_t)s % 3, kind = (size_t)s / 3 % 6;
		double f = scale[(size_t)s / 18 % 6];
		for (size_t i = 0; i < n; i++) {
			double u = (double)(rng_next(&r) % 5);
			x[i] = kind == 0   ? 7
			       : kind == 1 ? (i < n / 2 ? u : x[n - 1 - i])
			       : kind == 2 ? (double)(i % 2)
			       : kind == 3 ? (double)(i % 3) * 0.1
			       : kind == 4 ? u
					   : 100 + (double)(rng_next(&r) >> 11) / 9007199254740992.0;
		}
		for (size_t i = 0; i < n; i++)
			x[i] *= f;
		size_t at, kappa, rat, rkappa;
		double q, rq;
		if (n < 2 * min_seg)
			continue;
		assert_int_equal(cpoint_best_split(x, 0, n, min_seg, &at, &kappa, &q), 0);
		ref_best_split(x, 0, n, min_seg, &rat, &rkappa, &rq);
		if (at != rat || kappa != rkappa || memcmp(&q, &rq, sizeof q))
			fail_msg("series %d (kind %zu, n %zu, min_seg %zu, x %g): split %zu/%zu q %a, "
				 "plain %zu/%zu q %a", s, kind, n, min_seg, f, at, kappa, q, rat, rkappa,
				 rq);
	}
}

/* cpoint_no_change_possible as first written (each run's mean divided on
 * its own), the reference of the one that divides each length's extreme
 * sums once. */
static int ref_no_change_possible(const double *x, size_t n, const struct cpoint_opts *o)
{
	size_t L = o->min_seg ? o->min_seg : 1;
	double lo = INFINITY, hi = 0;
	if (!(o->min_rel > 0) || n < 2 * L)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(x[i] > 0 && x[i] < INFINITY))
			return 0;
	for (size_t i = 0; i + L <= n; i++) {
		double sum = 0;
		for (size_t j = i; j < i + 2 * L - 1 && j < n; j++) {
			sum += x[j];
			if (j + 1 - i < L)
				continue;
			double mean = sum / (double)(j + 1 - i);
			lo = mean < lo ? mean : lo;
			hi = mean > hi ? mean : hi;
		}
	}
	double slack = (4 * (double)n + 16) * DBL_EPSILON;
	return hi / lo * (1 + slack) - 1 < o->min_rel * (1 - slack);
}

/* The same answer as the reference for min_seg 1 to 20 (the stack's run
 * lengths and past them), at the bound's edge too (min_rel set to the
 * series' own largest relative difference of run means, either side). */
static void test_cpoint_ref__no_change_bound_is_the_plain_bound(void **state)
{
	(void)state;
	struct rng r;
	double x[80];
	size_t yes = 0;
	rng_seed(&r, 20261208);
	for (int s = 0; s < 4000; s++) {
		size_t n = 1 + rng_next(&r) % 80, L = 1 + (size_t)s % 20;
		double noise = 0.05 * (double)(rng_next(&r) % 1000) / 1000;
		struct cpoint_opts o = {.max_p = 0.001, .split_p = 0.01, .min_seg = L,
					.min_rel = 0.06 * (double)(rng_next(&r) % 1000) / 1000};
		for (size_t i = 0; i < n; i++)
			x[i] = 100 * (1 + noise * ((double)(rng_next(&r) >> 11) / 9007199254740992.0 - 0.5));
		int want = ref_no_change_possible(x, n, &o);
		assert_int_equal(cpoint_no_change_possible(x, n, &o), want);
		yes += (size_t)want;
		for (double lo = 0.005; lo < 0.06; lo += 0.005) { /* sweep across the edge */
			o.min_rel = lo;
			assert_int_equal(cpoint_no_change_possible(x, n, &o),
					 ref_no_change_possible(x, n, &o));
		}
	}
	assert_true(yes > 200);
}

/* Where cpoint_no_split_passes says no split passes (noise of 0.1% to 5%,
 * noise of 1e-9 on a level of 100, a step, values on a coarse grid,
 * min_seg 1 to 3, split_p 0.001 to 0.05), every split and end of x[0..n)
 * fails the split step's own test (its means and variances, its p), and
 * cpoint_edivisive finds nothing; it holds on most noise and never on a
 * step of ten sigmas. */
static void test_cpoint_ref__no_split_bound_holds_for_every_split(void **state)
{
	(void)state;
	static const double split_p[] = {0.001, 0.01, 0.05};
	struct rng r;
	double x[64];
	size_t held = 0, tried = 0;
	rng_seed(&r, 20261209);
	for (int s = 0; s < 3000; s++) {
		size_t n = 2 + rng_next(&r) % 63, L = 1 + (size_t)s % 3, kind = (size_t)s / 3 % 4;
		double noise = kind == 1 ? 1e-11 : 0.001 + 0.05 * (double)(rng_next(&r) % 1000) / 1000;
		struct cpoint_opts o = {.max_p = split_p[s % 3] / 10, .split_p = split_p[s % 3],
					.min_seg = L, .min_rel = 0};
		for (size_t i = 0; i < n; i++) {
			double u = (double)(rng_next(&r) >> 11) / 9007199254740992.0 - 0.5;
			x[i] = kind == 3 ? round(100 * (1 + 0.05 * u)) : 100 * (1 + noise * u);
			if (kind == 2 && i >= n / 2)
				x[i] += 100 * noise * 3; /* a step of ten sigmas (uniform noise) */
		}
		tried += kind == 0;
		if (!cpoint_no_split_passes(x, n, &o))
			continue;
		held += kind == 0;
		for (size_t tau = L; tau + L <= n; tau++)
			for (size_t kap = tau + L; kap <= n; kap++) {
				double m1, v1, m2, v2;
				cpoint_moments(x, 0, tau, &m1, &v1);
				cpoint_moments(x, tau, kap, &m2, &v2);
				double p = cpoint_ttest_p(m1, v1, (double)tau, m2, v2, (double)(kap - tau));
				if (!(p > o.split_p))
					fail_msg("series %d (kind %zu, n %zu, L %zu): [0,%zu) [%zu,%zu) p %g <= %g",
						 s, kind, n, L, tau, tau, kap, p, o.split_p);
			}
		assert_false(kind == 2 && n >= 20);
		struct cpoint_change ch[8];
		size_t nch = 1;
		assert_int_equal(cpoint_edivisive(x, n, &o, ch, 8, &nch), 0);
		assert_int_equal(nch, 0);
	}
	assert_true(held > tried / 2); /* noise: most windows told without a search */
}

/* Cuts x[0..n) at random into segments of at least L points (the split
 * step's segments, and any merge of them): their starts into cut, their
 * number returned (cut[k] = n closes them). */
static size_t random_cuts(struct rng *r, size_t n, size_t L, size_t *cut)
{
	size_t k = 0, at = 0;
	while (at < n) {
		cut[k++] = at;
		at += L + rng_next(r) % (rng_next(r) % 2 ? L + 1 : n); /* short ones often */
		if (n - (at < n ? at : n) < L)
			at = n; /* a tail too short joins the last segment */
	}
	cut[k] = n;
	return k;
}

/* Where cpoint_no_change_possible says no change can be kept (on noise,
 * and on nights alternating with a period of min_seg + 1, where runs of
 * min_seg points all have one mean and longer runs do not), no two
 * neighbouring segments of any cutting (segments of min_seg points or more,
 * their means as the merge step computes them) differ by min_rel, and
 * cpoint_edivisive finds nothing; the bound holds on noise below min_rel,
 * and never on a step of 1.5 x min_rel. */
static void test_cpoint_ref__no_change_bound_holds_for_every_cutting(void **state)
{
	(void)state;
	struct rng r;
	double x[80];
	size_t cut[81], held = 0, not_held = 0;
	rng_seed(&r, 20261205);
	for (int s = 0; s < 3000; s++) {
		size_t n = 4 + rng_next(&r) % 77, L = 1 + (size_t)s % 3;
		double noise = 0.03 * (double)(rng_next(&r) % 1000) / 1000;
		struct cpoint_opts o = {.max_p = 0.001, .split_p = 0.01, .min_seg = L,
					.min_rel = 0.001 + 0.02 * (double)(rng_next(&r) % 1000) / 1000};
		size_t period = s % 4 ? 0 : L + 1; /* nights alternating between two values */
		for (size_t i = 0; i < n; i++)
			x[i] = 100 * (1 + noise * ((double)(rng_next(&r) >> 11) / 9007199254740992.0 - 0.5)) +
			       (period && i % period ? 3 : 0);
		if (!cpoint_no_change_possible(x, n, &o)) {
			not_held++;
			continue;
		}
		held++;
		for (int t = 0; t < 300; t++) {
			size_t k = random_cuts(&r, n, L, cut);
			for (size_t i = 1; i < k; i++) {
				double mb, ma, v;
				cpoint_moments(x, cut[i - 1], cut[i], &mb, &v);
				cpoint_moments(x, cut[i], cut[i + 1], &ma, &v);
				if (!(fabs(ma / mb - 1) < o.min_rel))
					fail_msg("series %d: segments [%zu,%zu) [%zu,%zu) differ by %g >= %g", s,
						 cut[i - 1], cut[i], cut[i], cut[i + 1], fabs(ma / mb - 1),
						 o.min_rel);
			}
		}
		struct cpoint_change ch[8];
		size_t nch = 1;
		assert_int_equal(cpoint_edivisive(x, n, &o, ch, 8, &nch), 0);
		assert_int_equal(nch, 0);
	}
	assert_true(held > 300 && not_held > 300); /* both sides tried */
	for (size_t i = 0; i < 40; i++) /* a step of 1.5 x min_rel: searched */
		x[i] = i < 20 ? 100 : 103;
	struct cpoint_opts step = {.max_p = 0.001, .split_p = 0.01, .min_seg = 2, .min_rel = 0.02};
	assert_false(cpoint_no_change_possible(x, 40, &step));
	x[7] = -1; /* not a positive number: never skipped */
	step.min_rel = 1;
	assert_false(cpoint_no_change_possible(x, 40, &step));
}

/* sort_slide over 5,000 nights of windows up to 60 long, filling and then
 * sliding, values on a coarse grid (ties everywhere): bit for bit the full
 * sort of each window. */
static void test_cpoint_ref__sliding_window_is_the_full_sort(void **state)
{
	(void)state;
	struct rng r;
	double win[64], sorted[64], want[64];
	size_t n = 0;
	rng_seed(&r, 20261206);
	for (int night = 0; night < 5000; night++) {
		size_t cap = night < 2500 ? 60 : 1 + (size_t)night % 7;
		double in = 1 + (double)(rng_next(&r) % 9) / 8;
		int drop = n == cap || n > cap;
		if (n > cap) { /* a shorter window: sorted whole again, as the walk does */
			memmove(win, win + n - cap, cap * sizeof *win);
			n = cap;
			memcpy(sorted, win, n * sizeof *win);
			sort_doubles(sorted, n);
		}
		size_t before = n;
		n = sort_slide(sorted, n, drop, win[0], in);
		if (drop)
			memmove(win, win + 1, (before - 1) * sizeof *win);
		win[n - 1] = in;
		memcpy(want, win, n * sizeof *win);
		sort_doubles(want, n);
		assert_memory_equal(sorted, want, n * sizeof *want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpoint_ref__best_split_is_the_plain_search_bit_for_bit),
	    cmocka_unit_test(test_cpoint_ref__bounded_search_keeps_ties_and_extremes),
	    cmocka_unit_test(test_cpoint_ref__no_change_bound_holds_for_every_cutting),
	    cmocka_unit_test(test_cpoint_ref__no_change_bound_is_the_plain_bound),
	    cmocka_unit_test(test_cpoint_ref__no_split_bound_holds_for_every_split),
	    cmocka_unit_test(test_cpoint_ref__sliding_window_is_the_full_sort),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
