/* cuda_load.c - the CUDA API of cuda_api.h in ddt: opens the NVIDIA driver and, when it finds a device, the CUDA backend (libddt-cuda.so) on first use; without them no devices and every CUDA row skipped with the reason. */
#include "cuda_api.h"
#include "cuda_backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

/* What the first use found: the backend (NULL when none), the number of
 * devices the driver counts and the reason when there is no backend. */
static struct {
	const struct cuda_backend *be;
	int driver_version; /* cuDriverGetVersion, 0 when no driver */
	char reason[160]; /* as long as a row's reason */
} g_cuda;
static pthread_once_t g_cuda_once = PTHREAD_ONCE_INIT;

typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_count_fn)(int *count);
typedef int (*cu_version_fn)(int *version);
typedef int (*cu_errstr_fn)(int err, const char **str);

/* Asks the driver (libcuda.so.1, opened but never linked) how many devices
 * there are: 0 with g_cuda.reason set when there is no driver or no device.
 * The driver stays open: the backend's runtime uses it. */
static int load_driver_devices(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	int n = 0, e;

	if (!lib) {
		snprintf(g_cuda.reason, sizeof g_cuda.reason,
			 CUDA_REASON_NO_DRIVER " (libcuda.so.1 not found)");
		return 0;
	}
	cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
	cu_count_fn count = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
	cu_version_fn version = (cu_version_fn)dlsym(lib, "cuDriverGetVersion");
	cu_errstr_fn errstr = (cu_errstr_fn)dlsym(lib, "cuGetErrorString");
	if (!init || !count) {
		snprintf(g_cuda.reason, sizeof g_cuda.reason,
			 CUDA_REASON_NO_DRIVER " (libcuda.so.1 lacks cuInit)");
		return 0;
	}
	if (version && version(&g_cuda.driver_version) != 0)
		g_cuda.driver_version = 0;
	if ((e = init(0)) != 0 || (e = count(&n)) != 0) {
		const char *s = NULL;
		if (!errstr || errstr(e, &s) != 0 || !s)
			s = "unknown driver error";
		snprintf(g_cuda.reason, sizeof g_cuda.reason, CUDA_REASON_NO_DEVICE " (%s)", s);
		return 0;
	}
	if (n <= 0)
		snprintf(g_cuda.reason, sizeof g_cuda.reason, CUDA_REASON_NO_DEVICE " (0 devices)");
	return n > 0 ? n : 0;
}

/* The backend's path into path: $DDT_CUDA_BACKEND when set, else
 * libddt-cuda.so beside the running program, else one folder up (the test
 * and bench programs live in build/tests/ and build/bench/). Returns 0, or
 * -1 with g_cuda.reason set when none exists. */
static int load_find(char *path, size_t len)
{
	const char *env = getenv("DDT_CUDA_BACKEND");
	char exe[PATH_MAX];
	ssize_t k;

	if (env && *env) {
		snprintf(path, len, "%s", env);
		return 0;
	}
	if ((k = readlink("/proc/self/exe", exe, sizeof exe - 1)) <= 0) {
		snprintf(g_cuda.reason, sizeof g_cuda.reason,
			 CUDA_REASON_NO_BACKEND " (cannot read /proc/self/exe)");
		return -1;
	}
	exe[k] = '\0';
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');
		if (!slash)
			break;
		*slash = '\0';
		snprintf(path, len, "%s/%s", exe, CUDA_BACKEND_FILE);
		if (access(path, R_OK) == 0)
			return 0;
	}
	snprintf(g_cuda.reason, sizeof g_cuda.reason,
		 CUDA_REASON_NO_BACKEND " (%s not built beside ddt: make CUDA=1)", CUDA_BACKEND_FILE);
	return -1;
}

static const struct cuda_host load_host = {
	.abi = CUDA_BACKEND_ABI,
	.err_set = err_set,
	.err_wrap = err_wrap,
	.err_nomem = err_nomem,
	.err_msg = err_msg,
	.harness_now_s = harness_now_s,
	.harness_enough = harness_enough,
	.harness_stats = harness_stats,
	.harness_rsd = harness_rsd,
	.op_find = op_find,
	.op_param = op_param,
	.op_param_set = op_param_set,
	.rec_rows_add = rec_rows_add,
	.rec_row_param_set = rec_row_param_set,
};

/* Runs once: the driver first (cheap), the backend (cudart, cuBLAS, NCCL)
 * only when the driver counts a device. */
static void load_once(void)
{
	char path[PATH_MAX + 32];
	void *lib;
	cuda_backend_entry_fn entry;

	if (load_driver_devices() == 0 || load_find(path, sizeof path))
		return;
	if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(g_cuda.reason, sizeof g_cuda.reason, CUDA_REASON_NO_BACKEND " (%.130s)",
			 dlerror());
		return;
	}
	entry = (cuda_backend_entry_fn)dlsym(lib, CUDA_BACKEND_ENTRY);
	if (!entry || !(g_cuda.be = entry(&load_host)) || g_cuda.be->abi != CUDA_BACKEND_ABI) {
		snprintf(g_cuda.reason, sizeof g_cuda.reason,
			 CUDA_REASON_NO_BACKEND " (%.80s is from another build of ddt: rebuild it)", path);
		g_cuda.be = NULL;
		dlclose(lib);
	}
}

static const struct cuda_backend *load(void)
{
	pthread_once(&g_cuda_once, load_once);
	return g_cuda.be;
}

int cuda_devices(int *count, char *reason, size_t len)
{
	const struct cuda_backend *be = load();
	if (be)
		return be->devices(count, reason, len);
	*count = 0;
	if (len)
		snprintf(reason, len, "%s", g_cuda.reason);
	return 0;
}

int cuda_device_describe(int dev, struct rec_device *out)
{
	const struct cuda_backend *be = load();
	if (be)
		return be->device_describe(dev, out);
	memset(out, 0, sizeof *out);
	return err_set(DDT_ENOTFOUND, "CUDA device %d: %s", dev, g_cuda.reason);
}

int cuda_versions(char *runtime, char *driver, char *nccl, size_t len)
{
	const struct cuda_backend *be = load();
	if (be)
		return be->versions(runtime, driver, nccl, len);
	if (len) {
		runtime[0] = nccl[0] = '\0';
		driver[0] = '\0';
		if (g_cuda.driver_version > 0)
			snprintf(driver, len, "%d.%d", g_cuda.driver_version / 1000,
				 g_cuda.driver_version % 1000 / 10);
	}
	return 0;
}

const struct op_cuda *cuda_op_path(const char *op)
{
	const struct cuda_backend *be = load();
	return be ? be->op_path(op) : NULL;
}

int cuda_recover(void)
{
	const struct cuda_backend *be = load();
	return be ? be->recover() : 0;
}

int cuda_tensor_tflops(int n, double *tflops)
{
	const struct cuda_backend *be = load();
	*tflops = NAN;
	if (be)
		return be->tensor_tflops(n, tflops);
	return err_set(DDT_ENOTFOUND, "the tensor ceiling: %s", g_cuda.reason);
}

int cuda_local_device(int visible, int local_rank, int local_size, int *dev)
{
	const char *env = getenv("CUDA_VISIBLE_DEVICES");
	*dev = -1;
	if (visible == 1) {
		*dev = 0;
		return 0;
	}
	if (visible > 1 && visible >= local_size && local_rank >= 0 && local_rank < visible) {
		*dev = local_rank;
		return 0;
	}
	return err_set(DDT_EINPUT, "local rank %d of %d sees %d GPUs (CUDA_VISIBLE_DEVICES=%s): "
		       "give each rank one GPU (srun --gpus-per-task=1) or let every rank see "
		       "one per rank", local_rank, local_size, visible, env ? env : "unset");
}

/* A skipped row: every figure NaN, the reason why there is no CUDA. */
static void absent_row(struct rec_row *row, const char *op, const char *variant,
		       const char *backend, int device)
{
	memset(row, 0, sizeof *row);
	snprintf(row->op, sizeof row->op, "%s", op);
	snprintf(row->variant, sizeof row->variant, "%s", variant);
	snprintf(row->backend, sizeof row->backend, "%s", backend);
	row->device = device;
	row->median_us = row->p10_us = row->p90_us = NAN;
	row->min_us = row->max_us = row->stdev_us = NAN;
	row->bytes = row->flops = row->gbps = row->pct_peak = NAN;
	row->max_err = row->sm_clock_mhz = NAN;
	row->status = REC_SKIPPED;
	snprintf(row->reason, sizeof row->reason, "%s", g_cuda.reason);
}

int cuda_time_op(const struct op_desc *op, const struct op_params *p, int dev,
		 const struct harness_conf *hc, uint64_t seed, struct rec_row *row)
{
	const struct cuda_backend *be = load();
	if (be)
		return be->time_op(op, p, dev, hc, seed, row);
	absent_row(row, op->name, hc && hc->cold ? "cold" : "hot", "cuda", dev);
	for (int i = 0; i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
	if (op->bytes)
		row->bytes = op->bytes(p);
	if (op->flops)
		row->flops = op->flops(p);
	return 0;
}

int cuda_bench_allreduce(struct rec_rows *r, const int *ms, int nm, int hidden,
			 const struct harness_conf *hc, int rec_device)
{
	const struct cuda_backend *be = load();
	if (be)
		return be->bench_allreduce(r, ms, nm, hidden, hc, rec_device);
	for (int i = 0; i < nm; i++) {
		struct rec_row row;
		absent_row(&row, "allreduce", "nccl", "nccl", rec_device);
		rec_row_param_set(&row, "M", ms[i]);
		rec_row_param_set(&row, "hidden", hidden);
		row.bytes = (double)ms[i] * hidden * 2;
		if (rec_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}

int cuda_bench_launch(struct rec_rows *r, const struct op_params *p,
		      const struct harness_conf *hc, int rec_device)
{
	static const char *const variants[] = {"empty_async", "empty_sync", "step_kernels",
					       "step_eager", "step_graph"};
	const struct cuda_backend *be = load();
	if (be)
		return be->bench_launch(r, p, hc, rec_device);
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
		struct rec_row row;
		absent_row(&row, "launch", variants[i], "cuda", rec_device);
		if (i >= 2)
			for (int k = 0; k < p->n; k++)
				rec_row_param_set(&row, p->keys[k], p->vals[k]);
		if (rec_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}
