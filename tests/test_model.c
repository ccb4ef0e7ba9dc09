/* test_model.c - the step model reproduces the seed estimator ([seed-estimator]) and
 * every override path changes what it should. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "estimate.h"
#include "formula.h"
#include "model.h"
#include "tmpl.h"

struct fixture {
	struct calib cal;
	struct calibration cal_d;
	struct tmpl t;
	struct model m;
};

static int setup(void **state)
{
	static struct fixture f;
	struct ydiag diag = {0};
	memset(&f, 0, sizeof f);
	if (calibrate_load(&f.cal, &f.cal_d, "calibration", NULL, &diag) || tmpl_load(&f.t, "templates/default.yaml", &diag) ||
	    model_prepare(&f.m, &f.cal, &f.cal_d, NULL)) {
		ydiag_print(&diag, stderr);
		fprintf(stderr, "%s\n", err_msg());
		return -1;
	}
	ydiag_free(&diag);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	tmpl_free(&f->t);
	calib_free(&f->cal);
	return 0;
}

/* f's calibration with the --set arguments args[0..n) as it is loaded
 * (calibrate_with) into c and d; free c with calib_free. */
static int with_sets(struct calib *c, struct calibration *d, const struct fixture *f, int n,
		     const char *const *args)
{
	struct calibrate_opts o = {.sets = args, .nsets = n};
	return calibrate_with(c, d, &f->cal, &f->cal_d, &o);
}

static int with_set(struct calib *c, struct calibration *d, const struct fixture *f,
		    const char *arg)
{
	return with_sets(c, d, f, 1, &arg);
}

/* The code of loading f's calibration with one --set argument. */
static int set_code(const struct fixture *f, const char *arg)
{
	struct calib c;
	struct calibration d;
	int rc = with_set(&c, &d, f, arg);
	calib_free(&c);
	return rc;
}

/* Evaluates a template scenario at its first acceptance. */
static struct model_out eval(struct fixture *f, const char *name)
{
	const struct scenario *s = tmpl_scenario(&f->t, name);
	struct model_out out;
	assert_non_null(s);
	struct model_in in = {calib_gpu(&f->cal, s->target), s->pipeline, s->block, s->budget,
			      s->concurrency, s->accept[0], s->context};
	model_eval(&f->m, &in, &out);
	return out;
}

/* |x - want| <= rel |want|, printing both when not */
static int within(double x, double want, double rel, const char *what)
{
	if (fabs(x - want) <= rel * fabs(want))
		return 1;
	fprintf(stderr, "%s = %.6g, want %.6g (±%g%%)\n", what, x, want, rel * 100);
	return 0;
}
#define assert_within(x, want, rel) assert_true(within((x), (want), (rel), #x))

static void test_model__reproduces_seed_measured_step_b8(void **state)
{
	struct model_out o = eval(*state, "seed-b8-sglang");
	assert_within(o.step_ms, 14.5, 0.01);
	assert_within(o.tok_s, 303, 0.01);
	assert_within(o.nonmoe_ms / o.step_ms, 0.855, 0.01); /* "about 85-86%" */
}

static void test_model__reproduces_seed_moe_on_b300(void **state)
{
	struct fixture *f = *state;
	const struct gpu *b300 = calib_gpu(&f->cal, "b300");
	assert_within(model_moe_ms(&f->m, b300, 9), 2.0, 0.01);
	assert_within(model_moe_ms(&f->m, b300, 32), 5.3, 0.01);
}

static void test_model__reproduces_seed_native_b8(void **state)
{
	struct model_out o = eval(*state, "seed-b8-native");
	assert_within(o.step_ms, 9.5, 0.01);
	assert_within(o.tok_s, 460, 0.01);
}

static void test_model__reproduces_seed_native_b16_step(void **state)
{
	struct model_out o = eval(*state, "seed-b16-native");
	assert_within(o.step_ms, 14.7, 0.01);
	assert_within(o.M, 33, 0);
}

static void test_model__passes_through_the_b16_sglang_anchor(void **state)
{
	struct model_out o = eval(*state, "seed-b16-sglang");
	assert_within(o.step_ms, 20.9, 1e-9);
}

static void test_model__components_sum_to_the_step(void **state)
{
	struct model_out o = eval(*state, "seed-b16-native");
	double sum = 0;
	for (int k = 0; k < COMP_COUNT; k++) {
		assert_true(o.ms[k] > 0);
		sum += o.ms[k];
	}
	assert_within(sum, o.step_ms, 1e-12);
}

static void test_model__native_cut_override_moves_only_non_moe(void **state)
{
	struct fixture *f = *state;
	struct model_out before = eval(f, "seed-b8-native"), after;
	struct calib c2;
	struct calibration c2_d;
	assert_int_equal(with_set(&c2, &c2_d, f, "native_cut=0.3"), 0);
	assert_int_equal(c2.asm_[ASM_NATIVE_CUT].kind, DIST_FIXED);
	assert_int_equal(model_prepare(&f->m, &c2, &c2_d, NULL), 0);
	after = eval(f, "seed-b8-native");
	assert_within(after.ms[COMP_MOE], before.ms[COMP_MOE], 1e-12);
	assert_within(after.nonmoe_ms, before.nonmoe_ms * 0.7 / 0.6, 1e-9);
	assert_int_equal(model_prepare(&f->m, &f->cal, &f->cal_d, NULL), 0);
	calib_free(&c2);
}

static void test_model__bandwidth_override_scales_moe(void **state)
{
	struct fixture *f = *state;
	struct calib c2;
	struct calibration c2_d;
	struct model_out before = eval(f, "seed-b8-native");
	assert_int_equal(with_set(&c2, &c2_d, f, "gpus.b300.bw_tbps=4"), 0);
	assert_int_equal(model_prepare(&f->m, &c2, &c2_d, NULL), 0);
	const struct gpu *b300 = calib_gpu(&c2, "b300");
	assert_within(model_moe_ms(&f->m, b300, 9), 2 * before.ms[COMP_MOE], 1e-9);
	assert_int_equal(model_prepare(&f->m, &f->cal, &f->cal_d, NULL), 0);
	calib_free(&c2);
}

static void test_model__anchor_and_reference_overrides(void **state)
{
	struct fixture *f = *state;
	static const char *const sets[] = {
		"anchors.sglang_b8.tok_s=250", "moe_reference.rtx_pro_6000.m9_ms=9.5",
		"model.hidden=4096", "drafter.layers=4", "moe_transfer=1.3"};
	struct calib c2;
	struct calibration c2_d;
	assert_int_equal(with_sets(&c2, &c2_d, f, 5, sets), 0);
	assert_within(c2.sglang_b8.step_ms, 4.4 / 250 * 1000, 1e-12);
	assert_within(c2.moe_ref.points[0].step_ms, 9.5, 0);
	assert_within(c2.asm_[ASM_MOE_TRANSFER].point, 1.3, 0);
	assert_int_equal(c2.nsets, 5);
	assert_string_equal(c2.sets[4].key, "moe_transfer");
	assert_int_equal(model_prepare(&f->m, &c2, &c2_d, NULL), 0);
	struct model_out o = eval(f, "seed-b8-sglang");
	assert_within(o.tok_s, 250, 1e-9); /* the model still passes through its anchor */
	assert_int_equal(model_prepare(&f->m, &f->cal, &f->cal_d, NULL), 0);
	calib_free(&c2);
}

static void test_model__bad_overrides_name_the_key(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(set_code(f, "native_cutt=0.3"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set: no such key 'native_cutt'; did you mean 'native_cut'?");
	/* a key of another shape: the keys that end the same way */
	assert_int_equal(set_code(f, "moe_reference.m9_ms=9"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set: no such key 'moe_reference.m9_ms'; did you mean "
				       "'moe_reference.rtx_pro_6000.m9_ms'?");
	assert_int_equal(set_code(f, "moe_refernce.gpu=h200"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set: no such key 'moe_refernce.gpu'; did you mean "
				       "'moe_reference.gpu'?");
	/* the keys of the schema tables: the GPU catalog's, the model's */
	assert_int_equal(set_code(f, "gpus.b300.bw_tbsp=8"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set: no such key 'gpus.b300.bw_tbsp'; did you mean "
				       "'gpus.b300.bw_tbps'?");
	assert_int_equal(set_code(f, "model.hiden=7168"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set: no such key 'model.hiden'; did you mean "
				       "'model.hidden'?");
	assert_int_equal(set_code(f, "gpus.b300.name=B"), DDT_EINPUT); /* text: not a --set key */
	assert_non_null(strstr(err_msg(), "no such key 'gpus.b300.name'"));
	assert_int_equal(set_code(f, "allreduce.gpus=2.5"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set allreduce.gpus: must be a whole number");
	/* nested entries checked by the tables they are read by: the floor's
	 * value, a reference point's step_ms */
	assert_int_equal(set_code(f, "moe_reference.floor_us=-1"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set moe_reference.floor_us: must not be negative");
	assert_int_equal(set_code(f, "moe_reference.rtx_pro_6000.m9_ms=0"), DDT_EINPUT);
	assert_string_equal(err_msg(), "--set moe_reference.rtx_pro_6000.m9_ms: must be greater "
				       "than zero");
	/* --keys says what a table's key takes, from the same entry */
	char about[240];
	assert_int_equal(calib_key_about("gpus.b300.bw_tbps", about, sizeof about), 1);
	assert_string_equal(about, "number > 0, TB/s: memory bandwidth [vendor datasheet, dense]");
	assert_int_equal(calib_key_about("model.dense_layers", about, sizeof about), 1);
	assert_non_null(strstr(about, "whole number >= 0"));
	assert_int_equal(calib_key_about("gpus.b300.name", about, sizeof about), 0);
	assert_int_equal(calib_key_about("native_cut", about, sizeof about), 0);
	assert_int_equal(set_code(f, "zzzz=1"), DDT_EINPUT);
	assert_null(strstr(err_msg(), "did you mean"));
	assert_int_equal(set_code(f, "gpus.b301.bw_tbps=8"), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "b301"));
	assert_int_equal(set_code(f, "gpus.b300.bw_tbps=0"), DDT_EINPUT);
	assert_int_equal(set_code(f, "gpus.b300.bw_tbps=nan"), DDT_EINPUT);
	assert_int_equal(set_code(f, "native_cut=1.5"), DDT_EINPUT);
	assert_int_equal(set_code(f, "moe_reference.rtx_pro_6000.m10_ms=1"), DDT_EINPUT);
	assert_int_equal(set_code(f, "native_cut"), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "KEY=VALUE"));
}

static void test_model__sglang_beyond_its_budget_is_not_runnable(void **state)
{
	struct fixture *f = *state;
	struct estimate e;
	assert_int_equal(estimate_run(&e, &f->m, f->t.scenarios, f->t.nscenarios), 0);
	for (size_t i = 0; i < e.n; i++) {
		int big = e.rows[i].sc.budget > 8 && e.rows[i].sc.pipeline == PIPE_SGLANG;
		assert_int_equal(e.rows[i].runnable, !big);
	}
	struct scenario adhoc = {.name = "x", .target = "b300", .pipeline = PIPE_SGLANG,
				 .block = 16, .budget = 16, .concurrency = 1, .naccept = 1,
				 .accept = {8}, .runnable = 1};
	estimate_free(&e);
	assert_int_equal(estimate_run(&e, &f->m, &adhoc, 1), 0);
	assert_false(e.rows[0].runnable);
	estimate_free(&e);
}

static void test_model__tok_s_scales_with_concurrency_and_accept(void **state)
{
	struct fixture *f = *state;
	const struct gpu *b300 = calib_gpu(&f->cal, "b300");
	struct model_in in = {b300, PIPE_NATIVE, 8, 8, 1, 4, 0};
	struct model_out a, b;
	model_eval(&f->m, &in, &a);
	in.accept = 8;
	model_eval(&f->m, &in, &b);
	assert_within(b.tok_s, 2 * a.tok_s, 1e-12);
	in.concurrency = 4;
	model_eval(&f->m, &in, &b);
	assert_within(b.M, 36, 0);
	assert_true(b.step_ms > a.step_ms); /* more verify tokens cost more */
}

static int names_xy(void *ctx, const char *name, size_t len, int i, int j, double *out)
{
	static const double tab[2][3] = {{1, 4, 9}, {2, 5, 7}};
	(void)ctx;
	if (!i && !j && len == 1 && (*name == 'x' || *name == 'y'))
		return *out = *name == 'x' ? 3 : 0.1, 0;
	if (len == 3 && !memcmp(name, "row", 3) && j == 0 && i >= 1 && i <= 3)
		return *out = tab[0][i - 1], 0;
	if (len == 3 && !memcmp(name, "tab", 3) && i >= 1 && i <= 2 && j >= 1 && j <= 3)
		return *out = tab[i - 1][j - 1], 0;
	return -1;
}

static double fx(const char *f)
{
	double v;
	if (formula_eval(f, names_xy, NULL, &v) != 0)
		fail_msg("%s", err_msg());
	return v;
}

/* The spreadsheet's order of operations, comparisons and functions, so C
 * and a workbook agree. */
static void test_model__formulas_evaluate_as_a_spreadsheet_does(void **state)
{
	(void)state;
	double v;
	assert_true(fx("2+x*4-8/2/2") == 2 + 3 * 4 - 8 / 2 / 2);
	assert_true(fx("-x*(1-y)+LN(EXP(2))*1E3") == -3 * (1 - 0.1) + log(exp(2)) * 1e3);
	assert_true(fx("1+x>=4") == 1 && fx("x<>3") == 0 && fx("x=3") == 1 && fx("2<1") == 0);
	assert_true(fx("MIN(x,2,7)") == 2 && fx("MAX(y,-1)") == 0.1 && fx("MIN(x)") == 3);
	assert_true(fx("IF(x=3,10,20)") == 10 && fx("IF(0,10,20)+1") == 21);
	/* the branch not taken may name what does not exist in a table */
	assert_true(fx("IF(1,INDEX(row,1),INDEX(row,0))") == 1);
	assert_true(fx("INDEX(row,3)+INDEX(tab,2,1)") == 11);
	assert_true(fx("COUNT(row)") == 3);
	assert_true(fx("COUNTIF(row,\"<\"&x+1)") == 1 && fx("COUNTIF(row,\">=\"&4)") == 2);
	assert_int_equal(formula_eval("x*z", names_xy, NULL, &v), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "unknown name at offset 2"));
	assert_int_equal(formula_eval("INDEX(row,4)", names_xy, NULL, &v), DDT_EINPUT);
	assert_int_equal(formula_eval("SQRT(x)", names_xy, NULL, &v), DDT_EINPUT);
	assert_non_null(strstr(err_msg(), "unknown function"));
	assert_int_equal(formula_eval("IF(1,2)", names_xy, NULL, &v), DDT_EINPUT);
	assert_int_equal(formula_eval("(x+1", names_xy, NULL, &v), DDT_EINPUT);
	assert_int_equal(formula_eval("x y", names_xy, NULL, &v), DDT_EINPUT);
}

static const char *cells(void *ctx, const char *name, size_t len)
{
	(void)ctx;
	return len == 1 && *name == 'M' ? "I12" : len == 1 && *name == 'C' ? "(B12=ref)" : NULL;
}

/* A rewritten formula names cells in place of names, leaving functions,
 * numbers (1E12) and quoted criteria as they are. */
static void test_model__formula_rewrite_renames_names_only(void **state)
{
	(void)state;
	char buf[128];
	assert_int_equal(formula_rewrite("MAX(M*1E12,C)+COUNTIF(pts,\"<\"&M)+Mx", cells, NULL, buf,
					 sizeof buf),
			 0);
	assert_string_equal(buf, "MAX(I12*1E12,(B12=ref))+COUNTIF(pts,\"<\"&I12)+Mx");
	assert_int_equal(formula_rewrite("M+M+M", cells, NULL, buf, 8), DDT_EINPUT);
}

/* Every term of the model's description evaluates, and the MoE geometry
 * terms are what the geometry says (Kimi K2: 3 x 7168 x 2048 / tp weights
 * per expert slice). */
static void test_model__terms_are_the_geometry(void **state)
{
	struct fixture *f = *state;
	const struct geometry *g = &f->cal.model;
	double t[MT_COUNT], w = 3 * g->hidden * g->moe_intermediate / model_moe_tp(&f->cal);

	model_terms_eval(&f->cal, f->m.ref_gpu, f->cal_d.moe_fit.value, t);
	for (int k = 0; k < MT_COUNT; k++)
		assert_true(isfinite(t[k]));
	assert_true(t[MT_MOE_LAYERS] == g->layers - g->dense_layers);
	assert_true(t[MT_EXPERT_SLICE] == w);
	assert_true(fabs(t[MT_EXPERT_BYTES] / (w * g->expert_weight_bits / 8 +
					      w / g->expert_group_size * g->expert_scale_bytes) - 1) < 1e-15);
	assert_true(t[MT_AR_COUNT] == f->cal.ar.per_layer * g->layers);
	assert_true(t[MT_FLOPS_PER_M] == f->m.flops_per_m);
	assert_true(t[MT_PHYS_A] > 0 && t[MT_PHYS_B] > 0 && t[MT_PHYS_LNQ] < 0);
}

/* One configuration's formulas (model_row_terms, what the spreadsheet
 * writes) against the compiled model (what estimate and the Monte Carlo
 * compute) on m, every catalog GPU, both pipelines, budget 0 to beyond
 * the MoE points and the all-reduce sizes; returns how many compared. */
static int rows_agree(struct fixture *f, const struct model *m)
{
	static const double budgets[] = {0, 1, 3, 8, 16, 63}, cs[] = {1, 2, 7, 64};
	int n = 0;
	for (size_t g = 0; g < f->cal.ngpus; g++)
		for (int p = 0; p < 2; p++)
			for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++)
				for (size_t k = 0; k < sizeof cs / sizeof *cs; k++, n++) {
					struct model_in in = {&f->cal.gpus[g], p ? PIPE_NATIVE : PIPE_SGLANG,
							      16, budgets[b], cs[k], 4.5, 0};
					struct model_out o;
					double t[MR_COUNT], M = in.concurrency * (in.budget + 1);
					if (model_row_eval(m, &in, t) != 0)
						fail_msg("%s", err_msg());
					model_eval(m, &in, &o);
					assert_within(t[MR_M], o.M, 1e-15);
					assert_within(t[MR_MOE_REF], model_moe_ref_ms(m, M), 1e-12);
					assert_within(t[MR_AR_STEP], model_allreduce_ms(m, in.target, M), 1e-12);
					assert_within(t[MR_MOE], o.ms[COMP_MOE], 1e-12);
					assert_within(t[MR_ATTN], o.ms[COMP_ATTN], 1e-12);
					assert_within(t[MR_DRAFT], o.ms[COMP_DRAFT], 1e-12);
					assert_within(t[MR_TREE], o.ms[COMP_TREE], 1e-12);
					assert_within(t[MR_OVERHEAD], o.ms[COMP_OVERHEAD], 1e-12);
					assert_within(t[MR_ALLREDUCE], o.ms[COMP_ALLREDUCE], 1e-12);
					assert_within(t[MR_NONMOE], o.nonmoe_ms, 1e-12);
					assert_within(t[MR_STEP], o.step_ms, 1e-12);
					assert_within(t[MR_TOK_S], o.tok_s, 1e-12);
					assert_within(t[MR_GROWTH], m->growth, 1e-12);
					assert_within(t[MR_ANCHOR_NONMOE], m->n0_ms, 1e-12);
				}
	return n;
}

/* The spreadsheet's formulas are the model: evaluated, they give what
 * the compiled model gives, for the declared (physical) curve and the
 * linear one, and with a value set on the command line. */
static void test_model__row_terms_are_the_compiled_model(void **state)
{
	struct fixture *f = *state;
	struct model m;
	enum moe_curve_kind was = f->cal.moe_ref.curve;
	double v[CALIB_MAX_ASM];
	int n = rows_agree(f, &f->m);
	f->cal.moe_ref.curve = was == MOE_CURVE_PHYSICAL ? MOE_CURVE_LINEAR : MOE_CURVE_PHYSICAL;
	assert_int_equal(model_prepare(&m, &f->cal, &f->cal_d, NULL), 0);
	n += rows_agree(f, &m);
	f->cal.moe_ref.curve = was;
	for (int i = 0; i < calib_nassumptions(&f->cal_d.xt); i++)
		v[i] = calib_asm(&f->cal, &f->cal_d.xt, i)->point;
	v[ASM_NATIVE_CUT] = 0.31, v[ASM_SHARE_TREE] *= 2, v[ASM_MOE_COMPUTE_EFF] = 0.05;
	v[ASM_ALLREDUCE_PCIE] = 1.7;
	assert_int_equal(model_prepare(&m, &f->cal, &f->cal_d, v), 0);
	n += rows_agree(f, &m);
	/* ddt's calibrated point: the curve's form mixed, its fit and
	 * extrapolation errors, the transfer's curve at M, the native tree from
	 * its kernels, another b8 step; the growth solved, then held */
	m.form = 0.4, m.moe_scale = 1.03, m.z_x = 0.7, m.xfer_curve = 1, m.tree_kernels = 1;
	m.ar_uncut = 1;
	m.a8_step_ms *= 1.01, m.b16_step_ms *= 0.98;
	assert_int_equal(model_set_values(&m, v), 0);
	n += rows_agree(f, &m);
	m.growth_set = 0.37;
	assert_int_equal(model_set_values(&m, v), 0);
	assert_true(!m.growth_used || m.growth == 0.37);
	n += rows_agree(f, &m);
	printf("%d configurations: the formulas give the compiled model's step\n", n);
}

/* --set refuses what the loader refuses: one range per value. */
static void test_model__set_keeps_the_loaders_ranges(void **state)
{
	struct fixture *f = *state;
	static const char *const bad[] = {
		"native_cut=1.5",        "share_tree=-0.1",
		"moe_transfer=0",        "moe_compute_eff=0",
		"moe_compute_eff=1.2",   "allreduce_pcie_factor=-1",
		"moe_reference.physical.efficiency=0", "moe_reference.physical.overlap=1",
		"moe_reference.physical.fixed_us=-1",  "moe_reference.tp=1.5",
		"anchors.sglang_limits.max_budget=0"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		assert_int_equal(set_code(f, bad[i]), DDT_EINPUT);
		assert_non_null(strstr(err_msg(), "must be"));
	}
}

/* Every calibrated transfer factor's source says its whole story: the fit's
 * description and, at its end, the measured tables it came from (a source
 * cut at its buffer's end lost the tables' ids and path mid-word). */
static void test_model__transfer_sources_end_with_their_tables(void **state)
{
	struct fixture *f = *state;
	size_t tail = strlen(f->cal.meas.source);
	int calibrated = 0;
	assert_true(tail > 0);
	for (int i = 0; i < f->cal_d.xt.nxfer; i++) {
		const char *src = f->cal_d.xt.xfer[i].d.source;
		size_t n = strlen(src);
		if (f->cal_d.xt.xfer[i].curve < 0)
			continue;
		calibrated++;
		assert_true(n < sizeof f->cal_d.xt.xfer[i].d.source - 1);
		assert_true(n >= tail);
		assert_string_equal(src + n - tail, f->cal.meas.source);
	}
	assert_true(calibrated > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model__reproduces_seed_measured_step_b8),
		cmocka_unit_test(test_model__transfer_sources_end_with_their_tables),
		cmocka_unit_test(test_model__reproduces_seed_moe_on_b300),
		cmocka_unit_test(test_model__reproduces_seed_native_b8),
		cmocka_unit_test(test_model__reproduces_seed_native_b16_step),
		cmocka_unit_test(test_model__passes_through_the_b16_sglang_anchor),
		cmocka_unit_test(test_model__components_sum_to_the_step),
		cmocka_unit_test(test_model__native_cut_override_moves_only_non_moe),
		cmocka_unit_test(test_model__bandwidth_override_scales_moe),
		cmocka_unit_test(test_model__anchor_and_reference_overrides),
		cmocka_unit_test(test_model__bad_overrides_name_the_key),
		cmocka_unit_test(test_model__sglang_beyond_its_budget_is_not_runnable),
		cmocka_unit_test(test_model__tok_s_scales_with_concurrency_and_accept),
		cmocka_unit_test(test_model__formulas_evaluate_as_a_spreadsheet_does),
		cmocka_unit_test(test_model__formula_rewrite_renames_names_only),
		cmocka_unit_test(test_model__terms_are_the_geometry),
		cmocka_unit_test(test_model__row_terms_are_the_compiled_model),
		cmocka_unit_test(test_model__set_keeps_the_loaders_ranges),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
