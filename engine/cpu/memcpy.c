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

/* The passes over a whole buffer (faulting it in, poison, compare) run on
 * every pool thread, each over the share the copy itself gives it: a
 * gigabyte a pass on one core was most of the op's set-up and check. */
static void memcpy_touch_part(void *ctx, int tid, int nthreads)
{
	struct memcpy_inst *in = ctx;
	size_t lo, hi;
	cpu_split(in->bytes, 4096, tid, nthreads, &lo, &hi);
	memset(in->dst + lo, 0xa5, hi - lo);
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
	cpu_parallel(memcpy_touch_part, in); /* fault the pages in before timing */
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

/* A byte pattern cannot be NaN: the complement of the source differs from
 * it at every byte. */
static void memcpy_poison_part(void *ctx, int tid, int nthreads)
{
	struct memcpy_inst *in = ctx;
	size_t lo, hi;
	cpu_split(in->bytes, 4096, tid, nthreads, &lo, &hi);
	const uint8_t *restrict src = in->src;
	uint8_t *restrict dst = in->dst;
	for (size_t i = lo; i < hi; i++)
		dst[i] = (uint8_t)~src[i];
}

static void memcpy_poison(void *inst)
{
	cpu_parallel(memcpy_poison_part, inst);
}

struct memcpy_cmp {
	const struct memcpy_inst *in;
	size_t bad[CPU_MAX_THREADS];
};

static void memcpy_cmp_part(void *ctx, int tid, int nthreads)
{
	struct memcpy_cmp *j = ctx;
	const struct memcpy_inst *in = j->in;
	size_t lo, hi, bad = 0;
	cpu_split(in->bytes, 65536, tid, nthreads, &lo, &hi);
	for (size_t at = lo; at < hi; at += 65536) {
		size_t len = hi - at < 65536 ? hi - at : 65536;
		if (!memcmp(in->dst + at, in->ref + at, len))
			continue; /* the common case, at memcmp's speed */
		for (size_t i = at; i < at + len; i++)
			bad += in->dst[i] != in->ref[i];
	}
	j->bad[tid] = bad;
}

/* The share of bytes that differ (0 = exact copy). */
static double memcpy_max_error(const void *inst)
{
	struct memcpy_cmp j = {.in = inst};
	size_t bad = 0;
	cpu_parallel(memcpy_cmp_part, &j);
	for (int t = 0; t < CPU_MAX_THREADS; t++)
		bad += j.bad[t];
	return (double)bad / (double)j.in->bytes;
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
