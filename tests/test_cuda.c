/* test_cuda.c - every CUDA op against its C reference at odd and real sizes (skipped without a GPU), and the no-device path (runs everywhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_api.h"
#include "err.h"
#include "harness.h"
#include "op.h"
#include "record.h"

/* Builds params from "key", value pairs ending at NULL (keys are literals). */
static struct op_params params_of(const char *k0, ...)
{
	struct op_params p;
	va_list ap;
	memset(&p, 0, sizeof p);
	va_start(ap, k0);
	for (const char *k = k0; k; k = va_arg(ap, const char *))
		op_param_set(&p, k, va_arg(ap, double));
	va_end(ap);
	return p;
}

static int gpus(void)
{
	char reason[160];
	int n = 0;
	cuda_devices(&n, reason, sizeof reason);
	return n;
}

/* Fresh seeded inputs, poisoned output, one CUDA run, every element against
 * the reference; then a second run over a new poison must give the very same
 * error (a changing error is a race). */
static void check_cuda(const char *name, const struct op_params *p, uint64_t seed)
{
	const struct op_desc *op = op_find(name);
	void *inst = NULL, *dev = NULL;
	assert_non_null(op);
	assert_non_null(op->cuda);
	int rc = op->setup(&inst, p, seed);
	if (rc)
		fprintf(stderr, "%s setup: %s\n", name, err_msg());
	assert_int_equal(rc, 0);
	assert_int_equal(op->reference(inst), 0);
	op->poison(inst);
	rc = op->cuda->setup(&dev, inst);
	if (rc)
		fprintf(stderr, "%s CUDA setup: %s\n", name, err_msg());
	assert_int_equal(rc, 0);
	rc = op->cuda->run(dev, NULL);
	if (!rc)
		rc = op->cuda->fetch(dev, inst);
	if (rc)
		fprintf(stderr, "%s CUDA run: %s\n", name, err_msg());
	assert_int_equal(rc, 0);
	double err = op->max_error(inst);
	char ps[200];
	struct rec_row row;
	memset(&row, 0, sizeof row);
	for (int i = 0; i < p->n; i++)
		rec_row_param_set(&row, p->keys[i], p->vals[i]);
	rec_row_params_str(&row, ps, sizeof ps);
	fprintf(stderr, "  %-11s %-60s max error %.3g (tolerance %.3g)\n", name, ps, err, op->tol);
	assert_true(err <= op->tol);
	op->poison(inst);
	assert_int_equal(op->cuda->run(dev, NULL), 0);
	assert_int_equal(op->cuda->fetch(dev, inst), 0);
	double err2 = op->max_error(inst);
	if (err2 != err)
		fprintf(stderr, "%s: second run's error %.9g differs from the first's %.9g\n", name,
			err2, err);
	assert_true(err2 == err);
	op->cuda->teardown(dev);
	op->teardown(inst);
}

#define NEED_GPU()                                                   \
	do {                                                         \
		if (!gpus()) {                                       \
			skip();                                      \
		}                                                    \
	} while (0)

static void test_cuda__memcpy_copies_every_byte(void **state)
{
	(void)state;
	NEED_GPU();
	struct op_params p = params_of("mib", 1.0, NULL);
	check_cuda("memcpy", &p, 1);
	p = params_of("mib", 3.3, NULL);
	check_cuda("memcpy", &p, 2);
}

static void test_cuda__moe_w4a16_matches_reference(void **state)
{
	(void)state;
	NEED_GPU();
	/* small and odd: hidden and inter not multiples of 64 (padding), one token */
	struct op_params p = params_of("M", 1.0, "hidden", 256.0, "moe_inter", 128.0, "experts",
				       16.0, "topk", 4.0, "group", 32.0, "tp", 1.0, "shared", 1.0,
				       NULL);
	check_cuda("moe_w4a16", &p, 3);
	p = params_of("M", 9.0, "hidden", 192.0, "moe_inter", 96.0, "experts", 20.0, "topk", 3.0,
		      "group", 32.0, "tp", 1.0, "shared", 1.0, NULL);
	check_cuda("moe_w4a16", &p, 4);
	/* group 64, expert parallel (slots routed elsewhere are -1), no shared expert */
	p = params_of("M", 33.0, "hidden", 512.0, "moe_inter", 512.0, "experts", 64.0, "topk", 8.0,
		      "group", 64.0, "tp", 2.0, "ep", 2.0, "shared", 0.0, NULL);
	check_cuda("moe_w4a16", &p, 5);
	/* heavy overlap: experts with more than 8 tokens loop over token chunks */
	p = params_of("M", 40.0, "hidden", 1024.0, "moe_inter", 128.0, "experts", 12.0, "topk",
		      6.0, "group", 128.0, "tp", 1.0, "shared", 2.0, "overlap", 0.9, NULL);
	check_cuda("moe_w4a16", &p, 6);
}

static void test_cuda__moe_w4a16_at_kimi_size(void **state)
{
	(void)state;
	NEED_GPU();
	/* one TP-8 GPU's layer: all 384 experts, 256 rows each, shared expert */
	struct op_params p = params_of("M", 9.0, NULL);
	check_cuda("moe_w4a16", &p, 7);
}

static void test_cuda__dense_gemv_matches_reference(void **state)
{
	(void)state;
	NEED_GPU();
	struct op_params p = params_of("M", 1.0, "K", 64.0, "N", 100.0, NULL);
	check_cuda("dense_gemv", &p, 8);
	p = params_of("M", 9.0, "K", 1000.0, "N", 333.0, NULL);
	check_cuda("dense_gemv", &p, 9);
	p = params_of("M", 16.0, "K", 7168.0, "N", 2560.0, NULL);
	check_cuda("dense_gemv", &p, 10);
}

static void test_cuda__tree_build_matches_reference(void **state)
{
	(void)state;
	NEED_GPU();
	struct op_params p = params_of("L", 3.0, "V", 1000.0, "B", 8.0, NULL);
	check_cuda("tree_build", &p, 11);
	p = params_of("L", 15.0, "V", 163840.0, "B", 32.0, NULL);
	check_cuda("tree_build", &p, 12);
	/* K between 32 and 128, and above 128 */
	p = params_of("L", 5.0, "V", 70001.0, "B", 100.0, NULL);
	check_cuda("tree_build", &p, 13);
	p = params_of("L", 2.0, "V", 3001.0, "B", 300.0, NULL);
	check_cuda("tree_build", &p, 14);
	/* exhausted: one position of 20 tokens, budget 40 */
	p = params_of("L", 1.0, "V", 20.0, "B", 40.0, NULL);
	check_cuda("tree_build", &p, 15);
}

static void test_cuda__tree_attn_matches_reference(void **state)
{
	(void)state;
	NEED_GPU();
	/* plain decode (one query token), Kimi dims */
	struct op_params p = params_of("B", 0.0, "ctx", 300.0, NULL);
	check_cuda("tree_attn", &p, 16);
	p = params_of("B", 8.0, "ctx", 1000.0, "L", 4.0, NULL);
	check_cuda("tree_attn", &p, 17);
	p = params_of("B", 32.0, "ctx", 3000.0, "L", 15.0, NULL);
	check_cuda("tree_attn", &p, 18);
	/* odd dims (latent and rope padded), 3 heads, tree only (no context) */
	p = params_of("B", 5.0, "ctx", 77.0, "heads", 3.0, "tp", 1.0, "kv_lora", 96.0, "rope",
		      24.0, "qk_dim", 120.0, NULL);
	check_cuda("tree_attn", &p, 19);
	p = params_of("B", 40.0, "ctx", 0.0, "L", 7.0, "heads", 2.0, "tp", 1.0, NULL);
	check_cuda("tree_attn", &p, 20);
}

static void test_cuda__tree_attn_long_context_splits(void **state)
{
	(void)state;
	NEED_GPU();
	/* many splits and the combine step */
	struct op_params p = params_of("B", 8.0, "ctx", 20000.0, "L", 7.0, NULL);
	check_cuda("tree_attn", &p, 21);
}

static void test_cuda__accept_matches_reference(void **state)
{
	(void)state;
	NEED_GPU();
	struct op_params p = params_of("B", 8.0, "L", 7.0, "layers", 3.0, NULL);
	check_cuda("accept", &p, 22);
	p = params_of("B", 32.0, "L", 15.0, "layers", 61.0, NULL);
	check_cuda("accept", &p, 23);
	/* rows not a multiple of 16 bytes; full and zero acceptance */
	p = params_of("B", 50.0, "L", 5.0, "layers", 2.0, "row", 99.0, "accept_p", 1.0, NULL);
	check_cuda("accept", &p, 24);
	p = params_of("B", 50.0, "L", 9.0, "layers", 5.0, "accept_p", 0.0, NULL);
	check_cuda("accept", &p, 25);
	p = params_of("B", 300.0, "L", 40.0, "layers", 4.0, "accept_p", 1.0, "tree_seed", 7.0,
		      NULL);
	check_cuda("accept", &p, 26);
}

/* The full measurement path: validation, timing rule, rates. */
static void test_cuda__time_op_fills_an_ok_row(void **state)
{
	(void)state;
	NEED_GPU();
	struct harness_conf hc;
	struct rec_row row;
	harness_conf_default(&hc);
	hc.min_time_s = 0.01;
	hc.timeout_s = 1;
	hc.max_samples = 200;
	struct op_params p = params_of("L", 7.0, "V", 163840.0, "B", 8.0, NULL);
	assert_int_equal(cuda_time_op(op_find("tree_build"), &p, 0, &hc, 1, &row), 0);
	if (row.status != REC_OK)
		fprintf(stderr, "tree_build row: %s\n", row.reason);
	assert_int_equal(row.status, REC_OK);
	assert_true(row.samples >= hc.min_samples);
	assert_true(row.median_us > 0 && row.min_us <= row.median_us);
	assert_true(row.max_err <= op_find("tree_build")->tol);
	assert_true(row.gbps > 0 && row.pct_peak > 0);
	assert_string_equal(row.backend, "cuda");
}

/* Without a device (or without a CUDA build) every CUDA row is skipped with
 * the reason; with one GPU the all-reduce rows are skipped for want of a
 * second. Runs everywhere. */
static void test_cuda__no_device_rows_are_skipped(void **state)
{
	(void)state;
	struct harness_conf hc;
	struct rec_row row;
	struct run_record r;
	char reason[160];
	int n = -1, ms[] = {1, 9};

	harness_conf_default(&hc);
	memset(&r, 0, sizeof r);
	assert_int_equal(cuda_devices(&n, reason, sizeof reason), 0);
	assert_true(n >= 0);
	if (n > 0) {
		assert_string_equal(reason, "");
		assert_int_equal(cuda_bench_allreduce(&r, ms, 2, 7168, &hc, 1), 0);
		assert_int_equal((int)r.nrows, 2);
		if (n == 1) {
			assert_int_equal(r.rows[0].status, REC_SKIPPED);
			assert_non_null(strstr(r.rows[0].reason, "2 or more GPUs"));
		}
		record_free(&r);
		return;
	}
#ifdef DDT_HAVE_CUDA
	assert_int_equal(strncmp(reason, CUDA_REASON_NO_DEVICE, strlen(CUDA_REASON_NO_DEVICE)), 0);
#else
	assert_string_equal(reason, CUDA_REASON_NOT_BUILT);
#endif
	struct op_params p = params_of("mib", 1.0, NULL);
	assert_int_equal(cuda_time_op(op_find("memcpy"), &p, 0, &hc, 1, &row), 0);
	assert_int_equal(row.status, REC_SKIPPED);
	assert_string_equal(row.reason, reason);
	assert_string_equal(row.op, "memcpy");
	assert_true(row.bytes > 0);
	assert_true(isnan(row.median_us));

	assert_int_equal(cuda_bench_allreduce(&r, ms, 2, 7168, &hc, 0), 0);
	p = params_of("B", 8.0, NULL);
	assert_int_equal(cuda_bench_launch(&r, &p, &hc, 0), 0);
	assert_int_equal((int)r.nrows, 2 + 5);
	for (size_t i = 0; i < r.nrows; i++) {
		assert_int_equal(r.rows[i].status, REC_SKIPPED);
		assert_string_equal(r.rows[i].reason, reason);
	}
	assert_string_equal(r.rows[0].op, "allreduce");
	assert_string_equal(r.rows[6].op, "launch");
	record_free(&r);

	struct rec_device d;
	assert_true(cuda_device_describe(0, &d) != 0);
	char rt[24], drv[24], nccl[24];
	assert_int_equal(cuda_versions(rt, drv, nccl, sizeof rt), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda__no_device_rows_are_skipped),
		cmocka_unit_test(test_cuda__memcpy_copies_every_byte),
		cmocka_unit_test(test_cuda__moe_w4a16_matches_reference),
		cmocka_unit_test(test_cuda__moe_w4a16_at_kimi_size),
		cmocka_unit_test(test_cuda__dense_gemv_matches_reference),
		cmocka_unit_test(test_cuda__tree_build_matches_reference),
		cmocka_unit_test(test_cuda__tree_attn_matches_reference),
		cmocka_unit_test(test_cuda__tree_attn_long_context_splits),
		cmocka_unit_test(test_cuda__accept_matches_reference),
		cmocka_unit_test(test_cuda__time_op_fills_an_ok_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
