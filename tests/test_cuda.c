/* test_cuda.c - every CUDA op against its C reference at the sizes of cuda_cases.h (skipped without a GPU), and the no-driver / no-device path (runs everywhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cuda_api.h"
#include "cuda_cases.h"
#include "cuda_check.h"
#include "err.h"
#include "harness.h"
#include "op.h"
#include "rec.h"

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

#define NEED_GPU()                                                   \
	do {                                                         \
		if (!gpus()) {                                       \
			skip();                                      \
		}                                                    \
	} while (0)

/* Every case of cuda_cases.h on the GPU: within the tolerance, and the
 * second run over a new poison gives the very same error (a changing error
 * is a race). */
static void test_cuda__every_case_matches_reference(void **state)
{
	(void)state;
	NEED_GPU();
	for (const struct cuda_case *c = cuda_cases; c->op; c++) {
		const struct op_desc *op = op_find(c->op);
		const struct op_cuda *cu = cuda_op_path(c->op);
		struct op_params p;
		double e[2];
		assert_non_null(op);
		assert_non_null(cu);
		assert_int_equal(cuda_case_params(c, &p), 0);
		assert_int_equal(cuda_check(op, cu, &p, c->seed, NULL, e), 0);
		fprintf(stderr, "  %-11s %-60s max error %.3g (tolerance %.3g)\n", c->op, c->params,
			e[0], op->tol);
		if (e[1] != e[0])
			fprintf(stderr, "%s: second run's error %.9g differs from the first's %.9g\n",
				c->op, e[1], e[0]);
		assert_true(e[0] <= op->tol);
		assert_true(e[1] == e[0]);
	}
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
	struct rec_rows r = {0};
	char reason[160];
	int n = -1, ms[] = {1, 9};

	harness_conf_default(&hc);
	assert_int_equal(cuda_devices(&n, reason, sizeof reason), 0);
	assert_true(n >= 0);
	if (n > 0) {
		assert_string_equal(reason, "");
		assert_int_equal(cuda_bench_allreduce(&r, ms, 2, 7168, &hc, 1), 0);
		assert_int_equal((int)r.n, 2);
		if (n == 1) {
			assert_int_equal(r.rows[0].status, REC_SKIPPED);
			assert_non_null(strstr(r.rows[0].reason, "2 or more GPUs"));
		}
		rec_rows_free(&r);
		return;
	}
	assert_true(!strncmp(reason, CUDA_REASON_NO_DRIVER, strlen(CUDA_REASON_NO_DRIVER)) ||
		    !strncmp(reason, CUDA_REASON_NO_DEVICE, strlen(CUDA_REASON_NO_DEVICE)) ||
		    !strncmp(reason, CUDA_REASON_NO_BACKEND, strlen(CUDA_REASON_NO_BACKEND)));
	assert_null(strchr(reason, '\n'));
	assert_null(cuda_op_path("memcpy"));
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
	assert_int_equal((int)r.n, 2 + 5);
	for (size_t i = 0; i < r.n; i++) {
		assert_int_equal(r.rows[i].status, REC_SKIPPED);
		assert_string_equal(r.rows[i].reason, reason);
	}
	assert_string_equal(r.rows[0].op, "allreduce");
	assert_string_equal(r.rows[6].op, "launch");
	rec_rows_free(&r);

	struct rec_device d;
	assert_true(cuda_device_describe(0, &d) != 0);
	char rt[24], drv[24], nccl[24];
	assert_int_equal(cuda_versions(rt, drv, nccl, sizeof rt), 0);
}

/* Where the NVIDIA driver cannot be opened, the reason says so in those
 * words (not the runtime's "driver version is insufficient"), and the
 * driver's version is unknown. */
static void test_cuda__no_driver_is_named(void **state)
{
	(void)state;
	char reason[160], rt[24], drv[24], nccl[24];
	int n = -1;
	void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (driver) {
		dlclose(driver);
		skip();
	}
	assert_int_equal(cuda_devices(&n, reason, sizeof reason), 0);
	assert_int_equal(n, 0);
	assert_string_equal(reason, CUDA_REASON_NO_DRIVER " (libcuda.so.1 not found)");
	assert_int_equal(cuda_versions(rt, drv, nccl, sizeof rt), 0);
	assert_string_equal(drv, "");
	assert_string_equal(rt, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda__no_device_rows_are_skipped),
		cmocka_unit_test(test_cuda__no_driver_is_named),
		cmocka_unit_test(test_cuda__every_case_matches_reference),
		cmocka_unit_test(test_cuda__time_op_fills_an_ok_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
