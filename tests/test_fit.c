/* test_fit.c - the physical MoE curve: fitting recovers known parameters, the
 * stored points pin overlap and fixed cost, the plateau, leave-one-out, laws. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"
#include "err.h"
#include "calibrate.h"
#include "fit.h"
#include "model.h"
#include "rng.h"

#include <gsl/gsl_cdf.h>

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static const char *home(void)
{
	const char *h = getenv("DDT_HOME");
	return h && *h ? h : ".";
}

/* What the calibrate stage derived from the shipped calibration (setup). */
static struct calibration fit_d;

static int setup(void **state)
{
	static struct calib cal;
	struct ydiag diag = {0};
	char path[4096];
	snprintf(path, sizeof path, "%s/calibration", home());
	if (calibrate_load(&cal, &fit_d, path, NULL, &diag)) {
		ydiag_print(&diag, stderr);
		return -1;
	}
	ydiag_free(&diag);
	*state = &cal;
	return 0;
}

static int teardown(void **state)
{
	calib_free(*state);
	return 0;
}

/* Every parameter free, in the given order. */
static struct moe_physical all_free(void)
{
	struct moe_physical ph = {.value = {0.9, 0.1, 3}, .nfit = 3,
				  .fit = {MOE_P_OVERLAP, MOE_P_FIXED_US, MOE_P_EFFICIENCY}};
	return ph;
}

static void test_fit__recovers_known_parameters_from_synthetic_points(void **state)
{
	const struct calib *c = *state;
	const struct gpu *h200 = calib_gpu(c, "h200");
	const double truth[MOE_P_COUNT] = {0.62, 0.35, 12.0};
	double m[10], ms[10];
	for (int i = 0; i < 10; i++) {
		m[i] = 1 << i; /* 1 .. 512 */
		ms[i] = model_phys_ms(c, h200, truth, m[i]);
	}
	struct moe_physical ph = all_free();
	struct moe_fit f;
	fit_moe_physical(&f, c, h200, m, ms, 10, &ph);
	assert_true(f.ok);
	assert_near(f.value[MOE_P_EFFICIENCY], 0.62, 1e-4);
	assert_near(f.value[MOE_P_OVERLAP], 0.35, 1e-4);
	assert_near(f.value[MOE_P_FIXED_US], 12.0, 1e-2);
	assert_true(f.rms_pct < 1e-4);
	for (int p = 0; p < MOE_P_COUNT; p++)
		assert_false(f.held[p]);
}

static void test_fit__noisy_points_give_standard_errors(void **state)
{
	const struct calib *c = *state;
	const struct gpu *ref = calib_gpu(c, "rtx_pro_6000");
	const double truth[MOE_P_COUNT] = {0.7, 0.2, 6.0};
	/* a fixed +-1.5% zigzag: residuals, hence errors, but no bias */
	double m[12], ms[12];
	for (int i = 0; i < 12; i++) {
		m[i] = 1 + 24 * i;
		ms[i] = model_phys_ms(c, ref, truth, m[i]) * (i % 2 ? 1.015 : 0.985);
	}
	struct moe_physical ph = all_free();
	struct moe_fit f;
	fit_moe_physical(&f, c, ref, m, ms, 12, &ph);
	assert_true(f.ok);
	assert_near(f.rms_pct, 1.5, 0.3);
	assert_near(f.value[MOE_P_EFFICIENCY], 0.7, 0.05);
	for (int p = 0; p < MOE_P_COUNT; p++)
		assert_true(isfinite(f.se[p]) && f.se[p] > 0);
}

static void test_fit__stored_points_pin_overlap_and_fixed_cost(void **state)
{
	const struct calib *c = *state;
	const struct moe_fit *f = &fit_d.moe_fit;
	const struct gpu *ref = calib_gpu(c, c->moe_ref.gpu);
	assert_true(f->ok);
	assert_true(f->held[MOE_P_EFFICIENCY]);
	assert_near(f->value[MOE_P_EFFICIENCY], 0.70, 1e-12);
	assert_false(f->held[MOE_P_OVERLAP]);
	assert_false(f->held[MOE_P_FIXED_US]);
	assert_true(f->value[MOE_P_OVERLAP] > 0.2 && f->value[MOE_P_OVERLAP] < 0.3);
	assert_true(f->value[MOE_P_FIXED_US] > 5 && f->value[MOE_P_FIXED_US] < 12);
	/* two points, two parameters: the curve passes through both */
	for (int i = 0; i < c->moe_ref.npoints; i++)
		assert_near(model_phys_ms(c, ref, f->value, c->moe_ref.points[i].m),
			    c->moe_ref.points[i].step_ms, 1e-6);
	assert_non_null(strstr(f->note, "exactly determined"));
	assert_non_null(strstr(f->note, "efficiency=0.7"));
}

static void test_fit__the_curve_plateaus_once_every_expert_is_read(void **state)
{
	const struct calib *c = *state;
	const struct gpu *ref = calib_gpu(c, c->moe_ref.gpu);
	double plateau, m95;
	fit_moe_plateau(c, ref, fit_d.moe_fit.value, &plateau, &m95);
	assert_true(m95 > 100 && m95 < 400); /* "plateaus near M=256" */
	double t256 = model_phys_ms(c, ref, fit_d.moe_fit.value, 256);
	double t1024 = model_phys_ms(c, ref, fit_d.moe_fit.value, 1024);
	assert_true(t1024 / t256 < 1.05);
	assert_near(t1024, plateau, 0.01 * plateau);
	/* the seed's line would have gone on climbing: 23.8 + (1024 - 32) x 0.65 */
	assert_true(t1024 < 0.2 * (23.8 + (1024 - 32) * (23.8 - 8.85) / 23));
}

static void test_fit__held_parameters_stay_put(void **state)
{
	const struct calib *c = *state;
	const struct gpu *ref = calib_gpu(c, "rtx_pro_6000");
	const double truth[MOE_P_COUNT] = {0.5, 0.1, 4.0};
	double m[4] = {4, 16, 64, 128}, ms[4];
	for (int i = 0; i < 4; i++)
		ms[i] = model_phys_ms(c, ref, truth, m[i]);
	struct moe_physical ph = {.value = {0.5, 0.1, 1.0}, .nfit = 1, .fit = {MOE_P_FIXED_US}};
	struct moe_fit f;
	fit_moe_physical(&f, c, ref, m, ms, 4, &ph);
	assert_true(f.ok);
	assert_true(f.held[MOE_P_EFFICIENCY] && f.held[MOE_P_OVERLAP] && !f.held[MOE_P_FIXED_US]);
	assert_near(f.value[MOE_P_EFFICIENCY], 0.5, 0);
	assert_near(f.value[MOE_P_FIXED_US], 4.0, 1e-6);
}

static void test_fit__compute_bound_points_are_left_out(void **state)
{
	const struct calib *c = *state;
	const struct gpu *ref = calib_gpu(c, "rtx_pro_6000");
	const double truth[MOE_P_COUNT] = {0.7, 0.25, 8.8};
	/* at M = 65536 the MoE is far past the bandwidth plateau: compute bound */
	double m[4] = {8, 32, 128, 65536}, ms[4];
	for (int i = 0; i < 3; i++)
		ms[i] = model_phys_ms(c, ref, truth, m[i]);
	ms[3] = 20 * model_phys_ms(c, ref, truth, m[3]);
	struct moe_physical ph = all_free();
	struct moe_fit f;
	fit_moe_physical(&f, c, ref, m, ms, 4, &ph);
	assert_int_equal(f.npoints, 3);
	assert_non_null(strstr(f.note, "compute-bound"));
	assert_near(f.value[MOE_P_EFFICIENCY], 0.7, 1e-4);
}

static void test_fit__leave_one_out(void **state)
{
	const struct calib *c = *state;
	const struct gpu *ref = calib_gpu(c, c->moe_ref.gpu);
	double m[2] = {9, 32}, ms[2] = {8.85, 23.8};
	/* a line cannot be drawn through one point; the physical curve can */
	assert_true(isnan(fit_moe_loo(c, ref, m, ms, 2, &c->moe_ref.phys, MOE_CURVE_LINEAR, 0)));
	double p = fit_moe_loo(c, ref, m, ms, 2, &c->moe_ref.phys, MOE_CURVE_PHYSICAL, 0);
	assert_true(isfinite(p) && fabs(p / 8.85 - 1) < 0.2);
	double m3[3] = {9, 20, 32}, ms3[3] = {8.85, 15, 23.8};
	assert_near(fit_moe_loo(c, ref, m3, ms3, 3, &c->moe_ref.phys, MOE_CURVE_LINEAR, 1),
		    8.85 + 11 * (23.8 - 8.85) / 23, 1e-9);
}

static void test_fit__growth_fraction_of_a_line(void **state)
{
	(void)state;
	double x[4] = {8, 16, 32, 64}, t[4], f;
	for (int i = 0; i < 4; i++)
		t[i] = 2 + 0.5 * x[i];
	assert_int_equal(fit_growth_frac(x, t, 4, 8, &f), 0);
	assert_near(f, 4.0 / 6.0, 1e-12);
	double same[2] = {8, 8};
	assert_int_equal(fit_growth_frac(same, t, 2, 8, &f), -1);
}

/* The loaded calibration with the --set arguments args[0..n) (calibrate_with). */
static int with_sets(struct calib *c, struct calibration *d, const struct calib *c0, int n,
		     const char *const *args)
{
	struct calibrate_opts o = {.sets = args, .nsets = n};
	return calibrate_with(c, d, c0, &fit_d, &o);
}

static void test_fit__set_refits_and_switches_curves(void **state)
{
	const struct calib *c0 = *state;
	static const char *const sets[] = {"moe_reference.rtx_pro_6000.m9_ms=9.5",
					   "moe_reference.curve=linear",
					   "moe_reference.physical.overlap=0.1"};
	static const char *const cubic[] = {"moe_reference.curve=cubic"};
	struct calib c;
	struct calibration c_d;
	assert_int_equal(with_sets(&c, &c_d, c0, 1, sets), 0);
	assert_true(c_d.moe_fit.ok);
	const struct gpu *ref = calib_gpu(&c, c.moe_ref.gpu);
	assert_near(model_phys_ms(&c, ref, c_d.moe_fit.value, 9), 9.5, 1e-6);
	calib_free(&c);
	assert_int_equal(with_sets(&c, &c_d, c0, 2, sets), 0);
	assert_int_equal(c.moe_ref.curve, MOE_CURVE_LINEAR);
	calib_free(&c);
	assert_int_equal(with_sets(&c, &c_d, c0, 1, cubic), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "expected linear or physical"));
	calib_free(&c);
	/* a value set on the command line is held */
	assert_int_equal(with_sets(&c, &c_d, c0, 3, sets), 0);
	assert_true(c_d.moe_fit.held[MOE_P_OVERLAP]);
	assert_near(c_d.moe_fit.value[MOE_P_OVERLAP], 0.1, 0);
	calib_free(&c);
}

/* The calibration's own set changes the fact and fits nothing: the curve
 * moves when the calibrate stage refits it. */
static void test_fit__record_set_fits_nothing(void **state)
{
	struct calib c = *(struct calib *)*state;
	struct calibration c_d = fit_d;
	const struct gpu *ref = calib_gpu(&c, c.moe_ref.gpu);
	assert_int_equal(calib_set(&c, &c_d.xt, "moe_reference.rtx_pro_6000.m9_ms", "9.5"), 0);
	assert_true(fabs(model_phys_ms(&c, ref, c_d.moe_fit.value, 9) - 9.5) > 1e-3);
	assert_int_equal(calibrate_moe(&c, &c_d), 0);
	assert_near(model_phys_ms(&c, ref, c_d.moe_fit.value, 9), 9.5, 1e-6);
}

/* ---------------------------------------------------------------- attention over context */

/* A known law (us, one sequence, one layer): a0 + a1 T + ctx (b + c T), an
 * H200-like KV row of 1.6 KB at 4.8 TB/s and 8 heads' scores at 600 TFLOP/s. */
#define CTX_B 3.4e-4
#define CTX_C 2.9e-5

/* rows at ctx 4096/16384/65536 x T 1/9/33, each reps times, the time
 * scaled by 1 + noise x U(-1, 1) from the seed's stream. Returns n. */
static int ctx_rows(double *ctx, double *T, double *t, int reps, double noise, uint64_t seed)
{
	static const double cs[3] = {4096, 16384, 65536}, ts[3] = {1, 9, 33};
	struct rng r;
	int n = 0;
	rng_seed(&r, seed);
	for (int k = 0; k < reps; k++)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++, n++) {
				ctx[n] = cs[i], T[n] = ts[j];
				t[n] = (6 + 0.4 * T[n] + ctx[n] * (CTX_B + CTX_C * T[n])) *
				       (1 + noise * (2 * rng_open01(&r) - 1));
			}
	return n;
}

static void test_fit__context_law_recovered_within_its_interval(void **state)
{
	const struct gpu *h200 = calib_gpu((struct calib *)*state, "h200");
	double ctx[27], T[27], t[27];
	struct ctx_law l;
	/* exact rows: the law itself */
	int n = ctx_rows(ctx, T, t, 1, 0, 1);
	assert_int_equal(fit_ctx_law(&l, h200, ctx, T, t, n), 0);
	assert_int_equal(l.n, 9);
	assert_near(l.b_us, CTX_B, 1e-9 * CTX_B);
	assert_near(l.c_us, CTX_C, 1e-9 * CTX_C);
	assert_near(l.r2, 1, 1e-12);
	assert_true(l.bw_tbps == h200->bw_tbps && l.bf16_tflops == h200->bf16_tflops);
	assert_non_null(strstr(l.what, "fit of 9 tree_attn rows on H200 SXM (ctx 4096-65536, T 1-33)"));
	/* 3% noise: the truth inside the 95% interval (t, n - 4 degrees of
	 * freedom), the interval a few percent wide */
	n = ctx_rows(ctx, T, t, 3, 0.03, 7);
	assert_int_equal(fit_ctx_law(&l, h200, ctx, T, t, n), 0);
	double q = gsl_cdf_tdist_Pinv(0.975, n - 4);
	assert_true(fabs(l.b_us - CTX_B) <= q * sqrt(l.var_b));
	assert_true(fabs(l.c_us - CTX_C) <= q * sqrt(l.var_c));
	assert_true(sqrt(l.var_b) < 0.1 * CTX_B && sqrt(l.var_c) < 0.1 * CTX_C);
	assert_true(l.r2 > 0.99 && l.r2 < 1);
	/* over 400 noisy sweeps the 95% intervals hold the truth about 95% of
	 * the time: the errors are the fit's, neither shrunk nor inflated */
	int in_b = 0, in_c = 0;
	for (uint64_t seed = 100; seed < 500; seed++) {
		n = ctx_rows(ctx, T, t, 1, 0.05, seed);
		assert_int_equal(fit_ctx_law(&l, h200, ctx, T, t, n), 0);
		q = gsl_cdf_tdist_Pinv(0.975, n - 4);
		in_b += fabs(l.b_us - CTX_B) <= q * sqrt(l.var_b);
		in_c += fabs(l.c_us - CTX_C) <= q * sqrt(l.var_c);
	}
	assert_true(in_b >= 360 && in_b <= 395);
	assert_true(in_c >= 360 && in_c <= 395);
}

static void test_fit__context_law_refuses_too_few_rows(void **state)
{
	const struct gpu *h200 = calib_gpu((struct calib *)*state, "h200");
	double ctx[9], T[9], t[9];
	struct ctx_law l;
	int n = ctx_rows(ctx, T, t, 1, 0, 1);
	/* five rows: four parameters leave one degree of freedom */
	assert_int_equal(fit_ctx_law(&l, h200, ctx, T, t, 5), -1);
	assert_int_equal(l.n, 0);
	assert_non_null(strstr(l.what, "5 tree_attn rows"));
	assert_non_null(strstr(l.what, "needs 6"));
	/* one context (the first three rows: ctx 4096 at T 1, 9, 33, twice) */
	double c1[6], T1[6], t1[6];
	for (int i = 0; i < 6; i++)
		c1[i] = ctx[i % 3], T1[i] = T[i % 3], t1[i] = t[i % 3] * (1 + 0.01 * i);
	assert_int_equal(fit_ctx_law(&l, h200, c1, T1, t1, 6), -1);
	assert_non_null(strstr(l.what, "at 1 context and 3 widths"));
	/* two contexts and two widths, but the long context at one width only:
	 * three points cannot tell the four terms apart */
	double c2[6] = {4096, 4096, 4096, 65536, 65536, 65536}, T2[6] = {1, 9, 1, 9, 9, 9};
	double t2[6] = {6.1, 9.9, 6.2, 30, 30.5, 31};
	assert_int_equal(fit_ctx_law(&l, h200, c2, T2, t2, 6), -1);
	assert_non_null(strstr(l.what, "cannot tell the law's four terms apart"));
	(void)n;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit__recovers_known_parameters_from_synthetic_points),
		cmocka_unit_test(test_fit__noisy_points_give_standard_errors),
		cmocka_unit_test(test_fit__stored_points_pin_overlap_and_fixed_cost),
		cmocka_unit_test(test_fit__the_curve_plateaus_once_every_expert_is_read),
		cmocka_unit_test(test_fit__held_parameters_stay_put),
		cmocka_unit_test(test_fit__compute_bound_points_are_left_out),
		cmocka_unit_test(test_fit__leave_one_out),
		cmocka_unit_test(test_fit__growth_fraction_of_a_line),
		cmocka_unit_test(test_fit__set_refits_and_switches_curves),
		cmocka_unit_test(test_fit__record_set_fits_nothing),
		cmocka_unit_test(test_fit__context_law_recovered_within_its_interval),
		cmocka_unit_test(test_fit__context_law_refuses_too_few_rows),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
