/* cuda_absent.c - the CUDA API of cuda_api.h for builds without nvcc: no devices, every CUDA row skipped. */
#include "cuda_api.h"

#ifndef DDT_HAVE_CUDA

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

int cuda_devices(int *count, char *reason, size_t len)
{
	*count = 0;
	if (len)
		snprintf(reason, len, "%s", CUDA_REASON_NOT_BUILT);
	return 0;
}

int cuda_device_describe(int dev, struct rec_device *out)
{
	(void)out;
	return err_set(DDT_ENOTFOUND, "CUDA device %d: %s", dev, CUDA_REASON_NOT_BUILT);
}

int cuda_versions(char *runtime, char *driver, char *nccl, size_t len)
{
	if (len) {
		runtime[0] = '\0';
		driver[0] = '\0';
		nccl[0] = '\0';
	}
	return 0;
}

/* A skipped row for op at p: every figure NaN, the reason set. */
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
	snprintf(row->reason, sizeof row->reason, "%s", CUDA_REASON_NOT_BUILT);
}

int cuda_time_op(const struct op_desc *op, const struct op_params *p, int dev,
		 const struct harness_conf *hc, uint64_t seed, struct rec_row *row)
{
	(void)hc;
	(void)seed;
	absent_row(row, op->name, hc && hc->cold ? "cold" : "hot", "cuda", dev);
	for (int i = 0; i < p->n; i++)
		rec_row_param_set(row, p->keys[i], p->vals[i]);
	if (op->bytes)
		row->bytes = op->bytes(p);
	if (op->flops)
		row->flops = op->flops(p);
	return 0;
}

int cuda_bench_allreduce(struct result_rows *r, const int *ms, int nm, int hidden,
			 const struct harness_conf *hc, int rec_device)
{
	(void)hc;
	for (int i = 0; i < nm; i++) {
		struct rec_row row;
		absent_row(&row, "allreduce", "nccl", "nccl", rec_device);
		rec_row_param_set(&row, "M", ms[i]);
		rec_row_param_set(&row, "hidden", hidden);
		row.bytes = (double)ms[i] * hidden * 2;
		if (result_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}

int cuda_bench_launch(struct result_rows *r, const struct op_params *p,
		      const struct harness_conf *hc, int rec_device)
{
	static const char *const variants[] = {"empty_async", "empty_sync", "step_kernels",
					       "step_eager", "step_graph"};
	(void)hc;
	for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
		struct rec_row row;
		absent_row(&row, "launch", variants[i], "cuda", rec_device);
		if (i >= 2)
			for (int k = 0; k < p->n; k++)
				rec_row_param_set(&row, p->keys[k], p->vals[k]);
		if (result_rows_add(r, &row))
			return err_nomem();
	}
	return 0;
}

#endif
