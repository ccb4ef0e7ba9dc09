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
#include "fit.h"
#include "model.h"

#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static const char *home(void)
{
	const char *h = getenv("DDT_HOME");
	return h && *h ? h : ".";
}

static int setup(void **state)
{
	static struct calib cal;
	struct ydiag diag = {0};
	char path[4096];
	snprintf(path, sizeof path, "%s/calibration", home());
	if (fit_calib_load(&cal, path, &diag)) {
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
	const struct moe_fit *f = &c->moe_ref.fit;
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
	fit_moe_plateau(c, ref, c->moe_ref.fit.value, &plateau, &m95);
	assert_true(m95 > 100 && m95 < 400); /* "plateaus near M=256" */
	double t256 = model_phys_ms(c, ref, c->moe_ref.fit.value, 256);
	double t1024 = model_phys_ms(c, ref, c->moe_ref.fit.value, 1024);
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

static void test_fit__set_refits_and_switches_curves(void **state)
{
	struct calib c = *(struct calib *)*state;
	assert_int_equal(calib_set(&c, "moe_reference.rtx_pro_6000.m9_ms", "9.5"), 0);
	assert_true(c.moe_ref.fit.ok);
	const struct gpu *ref = calib_gpu(&c, c.moe_ref.gpu);
	assert_near(model_phys_ms(&c, ref, c.moe_ref.fit.value, 9), 9.5, 1e-6);
	assert_int_equal(calib_set(&c, "moe_reference.curve", "linear"), 0);
	assert_int_equal(c.moe_ref.curve, MOE_CURVE_LINEAR);
	assert_int_equal(calib_set(&c, "moe_reference.curve", "cubic"), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "expected linear or physical"));
	/* a value set on the command line is held */
	assert_int_equal(calib_set(&c, "moe_reference.physical.overlap", "0.1"), 0);
	assert_true(c.moe_ref.fit.held[MOE_P_OVERLAP]);
	assert_near(c.moe_ref.fit.value[MOE_P_OVERLAP], 0.1, 0);
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
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
