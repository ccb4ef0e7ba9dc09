/* test_cuda_load.c - ddt opens its CUDA backend (libddt-cuda.so) behind a driver that counts a device: the backend answers through ddt's functions (errors, rows, op lookup); runs without a GPU, skipped where the backend is not built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "cuda_api.h"
#include "cuda_backend.h"
#include "err.h"
#include "harness.h"
#include "op.h"
#include "rec.h"

/* The folder holding this program (build/tests). */
static void exe_dir(char *dir, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", dir, len - 1);
	assert_true(n > 0);
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
}

/* Opens tests/fake_driver.c's build as libcuda.so.1 (by its soname, so the
 * loader's and the CUDA runtime's dlopen("libcuda.so.1") get it); skips
 * when the backend was not built (CUDA=0) or a real driver is here. */
static void *fake_driver(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	void *real = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	exe_dir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/../" CUDA_BACKEND_FILE, dir);
	if (real || access(path, R_OK) != 0)
		return NULL;
	snprintf(path, sizeof path, "%s/fake-driver/libcuda.so.1", dir);
	void *fake = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	assert_non_null(fake);
	return fake;
}

/* The backend is loaded (a runtime version, the ops' CUDA paths), its
 * runtime finds no usable device behind the fake driver, and what it says
 * reaches ddt: the reason in rows, the message of a failed call. */
static void test_cuda_load__backend_answers_through_ddt(void **state)
{
	(void)state;
	char reason[160], rt[24], drv[24], nccl[24];
	struct rec_device d;
	struct rec_row row;
	struct harness_conf hc;
	struct op_params p = {0};
	int n = -1;

	if (!fake_driver())
		skip();
	assert_int_equal(cuda_devices(&n, reason, sizeof reason), 0);
	assert_int_equal(n, 0);
	assert_int_equal(strncmp(reason, CUDA_REASON_NO_DEVICE " (", strlen(CUDA_REASON_NO_DEVICE) + 2),
			 0);
	assert_int_equal(cuda_versions(rt, drv, nccl, sizeof rt), 0);
	assert_true(rt[0] != '\0'); /* the backend's runtime answered */

	assert_non_null(cuda_op_path("memcpy"));
	assert_non_null(cuda_op_path("moe_w4a16"));
	assert_null(cuda_op_path("no_such_op"));

	err_clear();
	assert_int_equal(cuda_device_describe(0, &d), DDT_ENOTFOUND);
	assert_non_null(strstr(err_msg(), "CUDA device 0: no CUDA device"));

	harness_conf_default(&hc);
	op_param_set(&p, "mib", 1.0);
	assert_int_equal(cuda_time_op(op_find("memcpy"), &p, 0, &hc, 1, &row), 0);
	assert_int_equal(row.status, REC_SKIPPED);
	assert_string_equal(row.reason, reason);
	assert_string_equal(row.backend, "cuda");
	assert_true(rec_row_param(&row, "mib", 0) == 1.0); /* set through ddt's function */

	/* the new entries of ABI 3 reach the backend: no device behind the
	 * fake driver, so the ceiling fails with the runtime's message */
	double tflops = 0;
	err_clear();
	assert_int_not_equal(cuda_tensor_tflops(256, &tflops), 0);
	assert_true(tflops != tflops);
	assert_true(err_msg()[0] != '\0');
}

/* ddt-allreduce's GPU per rank: one visible GPU (Slurm's per-task binding)
 * is device 0 whatever the local rank; seeing them all, the local rank's;
 * two but eight ranks, or none, is an error naming CUDA_VISIBLE_DEVICES. */
static void test_cuda_load__rank_gets_its_bound_gpu(void **state)
{
	(void)state;
	int dev = -2;
	assert_int_equal(cuda_local_device(1, 5, 8, &dev), 0);
	assert_int_equal(dev, 0);
	assert_int_equal(cuda_local_device(8, 5, 8, &dev), 0);
	assert_int_equal(dev, 5);
	assert_int_equal(cuda_local_device(1, 0, 1, &dev), 0);
	assert_int_equal(dev, 0);
	setenv("CUDA_VISIBLE_DEVICES", "2,3", 1);
	assert_int_equal(cuda_local_device(2, 5, 8, &dev), DDT_EINPUT);
	assert_int_equal(dev, -1);
	assert_non_null(strstr(err_msg(), "local rank 5 of 8 sees 2 GPUs (CUDA_VISIBLE_DEVICES=2,3)"));
	unsetenv("CUDA_VISIBLE_DEVICES");
	assert_int_equal(cuda_local_device(0, 0, 1, &dev), DDT_EINPUT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cuda_load__backend_answers_through_ddt),
		cmocka_unit_test(test_cuda_load__rank_gets_its_bound_gpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
