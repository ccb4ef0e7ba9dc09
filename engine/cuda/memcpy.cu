/* memcpy.cu - a large device-to-device copy: the bandwidth ceiling every other op's % is taken against.
 *
 * What it computes: engine/ops/memcpy.h, dst = src, 2 x bytes moved.
 *
 * How: cudaMemcpyAsync device to device (the driver's copy kernel; what
 * METHOD.md calls the measured copy ceiling).
 *
 * Napkin math: 512 MiB copied = 1.07 GB moved: 224 us at the H200's 4.8 TB/s
 * datasheet; ~250 us expected (HBM copies reach 80-90% of the datasheet).
 */
#include "common.cuh"

extern "C" {
#include "ops/memcpy.h"
}

struct mc_dev {
	size_t bytes;
	void *src, *dst;
};

static void mc_teardown(void *dev)
{
	struct mc_dev *d = (struct mc_dev *)dev;
	if (!d)
		return;
	cu_free(d->src);
	cu_free(d->dst);
	free(d);
}

static int mc_setup(void **dev, const void *inst)
{
	const struct memcpy_inst *in = (const struct memcpy_inst *)inst;
	struct mc_dev *d;
	int rc;

	*dev = NULL;
	if (!(d = (struct mc_dev *)calloc(1, sizeof *d)))
		return err_nomem();
	d->bytes = in->bytes;
	if ((rc = cu_upload(&d->src, in->src, in->bytes)) || (rc = cu_alloc(&d->dst, in->bytes)) ||
	    (rc = CU(cudaMemset(d->dst, 0xa5, in->bytes)))) {
		mc_teardown(d);
		return rc;
	}
	*dev = d;
	return 0;
}

static int mc_run(void *dev, void *stream)
{
	struct mc_dev *d = (struct mc_dev *)dev;
	CK(cudaMemcpyAsync(d->dst, d->src, d->bytes, cudaMemcpyDeviceToDevice,
			   (cudaStream_t)stream));
	return 0;
}

static int mc_fetch(void *dev, void *inst)
{
	struct mc_dev *d = (struct mc_dev *)dev;
	struct memcpy_inst *in = (struct memcpy_inst *)inst;

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(in->dst, d->dst, d->bytes, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" const struct op_cuda CU_OP_TABLE(memcpy) = {mc_setup, mc_run, mc_fetch, mc_teardown};
