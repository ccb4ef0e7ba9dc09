/* backend.c - the entry point of libddt-cuda.so: hands ddt the backend's table and forwards the backend's calls of ddt's error, timing, op and row functions to ddt's own. */
#include <stdarg.h>
#include <stdio.h>

#include "cuda_api.h"
#include "cuda_backend.h"
#include "err.h"

static const struct cuda_host *host;

static const struct cuda_backend backend = {
	.abi = CUDA_BACKEND_ABI,
	.devices = cuda_devices,
	.device_describe = cuda_device_describe,
	.versions = cuda_versions,
	.time_op = cuda_time_op,
	.bench_allreduce = cuda_bench_allreduce,
	.bench_launch = cuda_bench_launch,
	.op_path = cuda_op_path,
	.recover = cuda_recover,
	.tensor_tflops = cuda_tensor_tflops,
};

/* The only symbol the shared object exports (engine/cuda/backend.map). */
const struct cuda_backend *ddt_cuda_backend(const struct cuda_host *h)
{
	if (!h || h->abi != CUDA_BACKEND_ABI)
		return NULL;
	host = h;
	return &backend;
}

/* ---- ddt's functions, as the backend's sources call them ---- */

int err_set(int code, const char *fmt, ...)
{
	char m[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	return host->err_set(code, "%s", m);
}

int err_wrap(int code, const char *fmt, ...)
{
	char m[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	return host->err_wrap(code, "%s", m);
}

int err_nomem(void)
{
	return host->err_nomem();
}

const char *err_msg(void)
{
	return host->err_msg();
}

double harness_now_s(void)
{
	return host->harness_now_s();
}

int harness_enough(const struct harness_conf *c, int n, double total_s, double rsd,
		   double elapsed_s)
{
	return host->harness_enough(c, n, total_s, rsd, elapsed_s);
}

void harness_stats(double *samples_us, int n, struct rec_row *row)
{
	host->harness_stats(samples_us, n, row);
}

double harness_rsd(const double *samples, int n)
{
	return host->harness_rsd(samples, n);
}

const struct op_desc *op_find(const char *name)
{
	return host->op_find(name);
}

double op_param(const struct op_params *p, const char *key, double dflt)
{
	return host->op_param(p, key, dflt);
}

int op_param_set(struct op_params *p, const char *key, double val)
{
	return host->op_param_set(p, key, val);
}

int rec_rows_add(struct rec_rows *l, const struct rec_row *row)
{
	return host->rec_rows_add(l, row);
}

int rec_row_param_set(struct rec_row *row, const char *key, double val)
{
	return host->rec_row_param_set(row, key, val);
}
