/* memcpy.c - the memcpy op's table row: a copy far larger than the caches, the bandwidth the other ops are measured against. */
#include "ops/memcpy.h"

#include "cpu/cpu.h"
#include "cpu/opkit.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const struct op_desc op_memcpy;

static const struct op_param_spec memcpy_params[] = {
	{"mib", 512, "bytes copied, in MiB (read once, written once)"},
	{NULL, 0, NULL},
};

static int memcpy_size(const struct op_params *p, size_t *bytes)
{
	double mib;
	int rc = opkit_num(&op_memcpy, p, "mib", 1.0 / 1024, 1 << 20, &mib);
	if (rc)
		return rc;
	*bytes = (size_t)(mib * 1048576.0) & ~(size_t)63; /* whole cache lines */
	if (!*bytes)
		*bytes = 64;
	return 0;
}

static void memcpy_teardown(void *inst)
{
	struct memcpy_inst *in = inst;
	if (!in)
		return;
	cpu_free(in->src);
	cpu_free(in->dst);
	free(in);
}

/* The same size and seed again (the copy probe's instance handed to the
 * memcpy row) keeps prev whole; anything else is a fresh instance. */
static int memcpy_setup_from(void **inst, void *prev, const struct op_params *p, uint64_t seed)
{
	struct memcpy_inst *in = prev;
	struct rng r;
	size_t bytes;
	int rc;

	*inst = NULL;
	if ((rc = memcpy_size(p, &bytes))) {
		memcpy_teardown(prev);
		return rc;
	}
	if (in && in->bytes == bytes && in->seed == seed) {
		*inst = in;
		return 0;
	}
	memcpy_teardown(in);
	if (!(in = calloc(1, sizeof *in)))
		return err_nomem();
	in->bytes = bytes;
	in->seed = seed;
	in->src = cpu_alloc(bytes);
	in->dst = cpu_alloc(bytes);
	if (!in->src || !in->dst) {
		memcpy_teardown(in);
		return err_set(DDT_ENOMEM, "memcpy: cannot allocate 2 x %zu bytes", bytes);
	}
	rng_seed(&r, opkit_subseed(seed, "src"));
	opkit_fill_bytes(in->src, bytes, &r);
	in->ref = in->src;
	memset(in->dst, 0xa5, bytes); /* fault the pages in before timing */
	*inst = in;
	return 0;
}

static int memcpy_setup(void **inst, const struct op_params *p, uint64_t seed)
{
	return memcpy_setup_from(inst, NULL, p, seed);
}

/* The reference output of a copy is its input: ref is src (set up so). */
static int memcpy_reference(void *inst)
{
	(void)inst;
	return 0;
}

static void memcpy_part(void *ctx, int tid, int nthreads)
{
	struct memcpy_inst *in = ctx;
	size_t lo, hi;
	cpu_split(in->bytes, 4096, tid, nthreads, &lo, &hi);
	memcpy(in->dst + lo, in->src + lo, hi - lo);
}

/* libc's memcpy on every pool thread: the copy the machine does best is the
 * honest ceiling. */
static int memcpy_run_cpu(void *inst)
{
	cpu_parallel(memcpy_part, inst);
	return 0;
}

static void memcpy_poison(void *inst)
{
	struct memcpy_inst *in = inst;
	/* a byte pattern cannot be NaN: the complement of the source differs from
	 * it at every byte */
	const uint8_t *restrict src = in->src;
	uint8_t *restrict dst = in->dst;
	for (size_t i = 0; i < in->bytes; i++)
		dst[i] = (uint8_t)~src[i];
}

/* The share of bytes that differ (0 = exact copy). */
static double memcpy_max_error(const void *inst)
{
	const struct memcpy_inst *in = inst;
	size_t bad = 0;
	for (size_t at = 0; at < in->bytes; at += 65536) {
		size_t len = in->bytes - at < 65536 ? in->bytes - at : 65536;
		if (!memcmp(in->dst + at, in->ref + at, len))
			continue; /* the common case, at memcmp's speed */
		for (size_t i = at; i < at + len; i++)
			bad += in->dst[i] != in->ref[i];
	}
	return (double)bad / (double)in->bytes;
}

static double memcpy_bytes(const struct op_params *p)
{
	size_t bytes;
	return memcpy_size(p, &bytes) ? NAN : 2.0 * (double)bytes;
}

static double memcpy_flops(const struct op_params *p)
{
	(void)p;
	return 0;
}

const struct op_desc op_memcpy = {
	.name = "memcpy",
	.summary = "device copy: the bandwidth ceiling (read + write bytes)",
	.setup = memcpy_setup,
	.setup_from = memcpy_setup_from,
	.teardown = memcpy_teardown,
	.reference = memcpy_reference,
	.run_cpu = memcpy_run_cpu,
	.poison = memcpy_poison,
	.max_error = memcpy_max_error,
	.bytes = memcpy_bytes,
	.flops = memcpy_flops,
	.tol = 0,
	.params = memcpy_params,
};
