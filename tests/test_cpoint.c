/* test_cpoint.c - the change-point module on series with known change points, Q-hat against its definition, the t tests against tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cpoint.h"
#include "rng.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static const struct cpoint_opts opts = {.max_p = 0.001, .split_p = 0.01, .min_seg = 2};

static double gauss(struct rng *r)
{
	double u = ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	double v = ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* n points of level 100 x (1 + the step of each segment) with relative noise;
 * steps[i] starts at at[i]. */
static void make_series(double *x, size_t n, const size_t *at, const double *lvl, size_t k,
			double noise, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	for (size_t i = 0; i < n; i++) {
		double l = 100;
		for (size_t j = 0; j < k; j++)
			if (i >= at[j])
				l = 100 * lvl[j];
		x[i] = l * (1 + noise * gauss(&r));
	}
}

/* Q-hat straight from its definition (Matteson and James, eq. 5-6). */
static double qhat_direct(const double *x, size_t lo, size_t tau, size_t kappa)
{
	double sxy = 0, sxx = 0, syy = 0;
	size_t nx = tau - lo, ny = kappa - tau;
	for (size_t i = lo; i < tau; i++)
		for (size_t j = tau; j < kappa; j++)
			sxy += fabs(x[i] - x[j]);
	for (size_t i = lo; i < tau; i++)
		for (size_t j = i + 1; j < tau; j++)
			sxx += fabs(x[i] - x[j]);
	for (size_t i = tau; i < kappa; i++)
		for (size_t j = i + 1; j < kappa; j++)
			syy += fabs(x[i] - x[j]);
	double e = 2 * sxy / (double)(nx * ny) - (nx > 1 ? sxx / (nx * (nx - 1) / 2.0) : 0) -
		   (ny > 1 ? syy / (ny * (ny - 1) / 2.0) : 0);
	return (double)(nx * ny) / (double)(nx + ny) * e;
}

static void test_cpoint__best_split_matches_the_definition(void **state)
{
	(void)state;
	double x[23];
	size_t at[] = {9};
	double lvl[] = {1.05};
	make_series(x, 23, at, lvl, 1, 0.02, 3);
	for (size_t min_seg = 1; min_seg <= 3; min_seg++) {
		size_t lo = 2, hi = 23, best_at = 0, best_k = 0, got_at, got_k;
		double best = -INFINITY, got;
		for (size_t t = lo + min_seg; t + min_seg <= hi; t++)
			for (size_t k = t + min_seg; k <= hi; k++)
				if (qhat_direct(x, lo, t, k) > best) {
					best = qhat_direct(x, lo, t, k);
					best_at = t;
					best_k = k;
				}
		assert_int_equal(cpoint_best_split(x, lo, hi, min_seg, &got_at, &got_k, &got), 0);
		assert_int_equal(got_at, best_at);
		assert_int_equal(got_k, best_k);
		assert_near(got, best, 1e-9 * fabs(best));
	}
	size_t a, k;
	double q;
	assert_int_equal(cpoint_best_split(x, 0, 3, 2, &a, &k, &q), -2); /* shorter than 2 x min_seg */
}

/* One 5% step at index 40 of 80 at 1% noise, 200 seeds: with a 3% minimum
 * change it is the only change point, at 40 in at least 97% of the seeds and
 * never more than two points away (where the noise makes that the better
 * two-means fit). */
static void test_cpoint__one_step_is_found_where_it_begins(void **state)
{
	(void)state;
	double x[80];
	size_t at[] = {40};
	double lvl[] = {1.05};
	struct cpoint_opts o = opts;
	int exact = 0;
	o.min_rel = 0.03;
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct cpoint_change ch[8];
		size_t n;
		make_series(x, 80, at, lvl, 1, 0.01, seed);
		assert_int_equal(cpoint_edivisive(x, 80, &o, ch, 8, &n), 0);
		assert_int_equal(n, 1);
		assert_true(ch[0].at >= 38 && ch[0].at <= 42);
		exact += ch[0].at == 40;
		assert_true(ch[0].p < 1e-6);
		assert_near(ch[0].mean_after / ch[0].mean_before, 1.05, 0.01);
	}
	assert_true(exact >= 194);
}

/* Up 8% at 30, down 6% (to 1.02) at 55, up again at 70. */
static void test_cpoint__three_steps_are_found_in_order(void **state)
{
	(void)state;
	double x[90];
	size_t at[] = {30, 55, 70};
	double lvl[] = {1.08, 1.02, 1.10};
	struct cpoint_change ch[8];
	struct cpoint_opts o = opts;
	size_t n;
	o.min_rel = 0.02;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		make_series(x, 90, at, lvl, 3, 0.005, seed);
		assert_int_equal(cpoint_edivisive(x, 90, &o, ch, 8, &n), 0);
		assert_int_equal(n, 3);
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(ch[i].at, at[i]);
		assert_true(ch[1].mean_after < ch[1].mean_before);
	}
	/* room for one: the strongest (the 8% step, the lowest p) is kept */
	make_series(x, 90, at, lvl, 3, 0.005, 1);
	assert_int_equal(cpoint_edivisive(x, 90, &opts, ch, 1, &n), 0);
	assert_int_equal(n, 1);
	assert_true(ch[0].at == 30 || ch[0].at == 70);
}

/* A step two points from the end: min_seg 2 lets it through. */
static void test_cpoint__a_step_at_the_end_needs_min_seg_points(void **state)
{
	(void)state;
	double x[32];
	size_t at[] = {29}, n;
	double lvl[] = {1.10};
	struct cpoint_change ch[4];
	make_series(x, 32, at, lvl, 1, 0.005, 11);
	assert_int_equal(cpoint_edivisive(x, 32, &opts, ch, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ch[0].at, 29);
	assert_int_equal(cpoint_edivisive(x, 30, &opts, ch, 4, &n), 0); /* one point after */
	assert_int_equal(n, 0);
}

/* Pure noise (2%), 400 series of 60: a t test at p <= 0.001 scanned over
 * every split finds a change in a few percent of the series (short dips of
 * 3-5 points); a minimum change of three noise sigmas removes them all. */
static void test_cpoint__noise_gives_no_change_above_min_rel(void **state)
{
	(void)state;
	double x[60];
	int found = 0, found_min_rel = 0;
	struct cpoint_opts o = opts;
	o.min_rel = 0.06;
	for (uint64_t seed = 1; seed <= 400; seed++) {
		struct cpoint_change ch[8];
		size_t n;
		make_series(x, 60, NULL, NULL, 0, 0.02, seed);
		assert_int_equal(cpoint_edivisive(x, 60, &opts, ch, 8, &n), 0);
		found += n > 0;
		assert_int_equal(cpoint_edivisive(x, 60, &o, ch, 8, &n), 0);
		found_min_rel += n > 0;
	}
	assert_true(found >= 1 && found <= 20);
	assert_int_equal(found_min_rel, 0);
}

/* min_rel drops real but small changes. */
static void test_cpoint__min_rel_drops_small_changes(void **state)
{
	(void)state;
	double x[60];
	size_t at[] = {30}, n;
	double lvl[] = {1.02};
	struct cpoint_change ch[4];
	struct cpoint_opts o = opts;
	make_series(x, 60, at, lvl, 1, 0.002, 5);
	assert_int_equal(cpoint_edivisive(x, 60, &o, ch, 4, &n), 0);
	assert_int_equal(n, 1);
	o.min_rel = 0.03;
	assert_int_equal(cpoint_edivisive(x, 60, &o, ch, 4, &n), 0);
	assert_int_equal(n, 0);
}

static void test_cpoint__constant_series_and_tiny_inputs(void **state)
{
	(void)state;
	double x[10] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5}, y[10] = {5, 5, 5, 5, 5, 7, 7, 7, 7, 7};
	struct cpoint_change ch[4];
	size_t n;
	assert_int_equal(cpoint_edivisive(x, 10, &opts, ch, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(cpoint_edivisive(y, 10, &opts, ch, 4, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ch[0].at, 5);
	assert_near(ch[0].p, 0, 0);
	assert_int_equal(cpoint_edivisive(y, 0, &opts, ch, 4, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(cpoint_edivisive(y, 3, &opts, ch, 4, &n), 0);
	assert_int_equal(n, 0);
}

/* Against t tables: t = 2.228 at 10 df is p = 0.05 two-sided; t = 3.169, p = 0.01. */
static void test_cpoint__t_tests_match_the_tables(void **state)
{
	(void)state;
	/* pooled: n1 = n2 = 6, variance 1: se = sqrt(1/3), df 10 */
	assert_near(cpoint_ttest_p(0, 1, 6, 2.228 * sqrt(1 / 3.0), 1, 6), 0.05, 2e-4);
	assert_near(cpoint_ttest_p(0, 1, 6, 3.169 * sqrt(1 / 3.0), 1, 6), 0.01, 1e-4);
	assert_near(cpoint_ttest_p(1, 0, 4, 1, 0, 4), 1, 0);
	assert_near(cpoint_ttest_p(1, 0, 4, 2, 0, 4), 0, 0);
	assert_near(cpoint_ttest_p(1, 1, 1, 2, 1, 1), 1, 0); /* no degrees of freedom */
	/* Welch: v1/n1 = v2/n2 = 0.5 with n = 5 each: df = 8, t = 2.306 is p = 0.05 */
	assert_near(cpoint_welch_p(0, 2.5, 5, 2.306, 2.5, 5), 0.05, 2e-4);
	/* unequal: df by Welch-Satterthwaite, here (1 + 0.1)^2 / (1/9 + 0.01/9) = 10.78 */
	double p = cpoint_welch_p(0, 10, 10, 3, 1, 10);
	assert_true(p > 0.01 && p < 0.05);
	assert_near(cpoint_welch_p(0, 1, 1, 5, 1, 9), 1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpoint__best_split_matches_the_definition),
	    cmocka_unit_test(test_cpoint__one_step_is_found_where_it_begins),
	    cmocka_unit_test(test_cpoint__three_steps_are_found_in_order),
	    cmocka_unit_test(test_cpoint__a_step_at_the_end_needs_min_seg_points),
	    cmocka_unit_test(test_cpoint__noise_gives_no_change_above_min_rel),
	    cmocka_unit_test(test_cpoint__min_rel_drops_small_changes),
	    cmocka_unit_test(test_cpoint__constant_series_and_tiny_inputs),
	    cmocka_unit_test(test_cpoint__t_tests_match_the_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
