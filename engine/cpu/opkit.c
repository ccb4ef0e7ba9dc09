/* opkit.c - shared helpers of the ops' C side (params, fills, poison, error). */
#include "cpu/opkit.h"

#include "cpu/cpu.h"
#include "err.h"

#include <math.h>
#include <string.h>

double opkit_param(const struct op_desc *op, const struct op_params *p, const char *key)
{
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->keys[i], key))
			return p->vals[i];
	for (const struct op_param_spec *s = op->params; s && s->key; s++)
		if (!strcmp(s->key, key))
			return s->dflt;
	return NAN;
}

int opkit_num(const struct op_desc *op, const struct op_params *p, const char *key, double lo,
	      double hi, double *out)
{
	double v = opkit_param(op, p, key);
	if (!(v >= lo && v <= hi))
		return err_set(DDT_EINPUT, "%s: %s = %g is outside [%g, %g]", op->name, key, v, lo,
			       hi);
	*out = v;
	return 0;
}

int opkit_int(const struct op_desc *op, const struct op_params *p, const char *key, long lo,
	      long hi, int *out)
{
	double v = 0;
	int rc = opkit_num(op, p, key, (double)lo, (double)hi, &v);
	if (rc)
		return rc;
	if (v != floor(v))
		return err_set(DDT_EINPUT, "%s: %s = %g is not a whole number", op->name, key, v);
	*out = (int)v;
	return 0;
}

static _Atomic unsigned long long drawn;

unsigned long long opkit_drawn_bytes(void)
{
	return drawn;
}

/*
 * A fill is drawn in blocks of FILL_BLOCK elements, each from a stream of
 * its own (seeded by a key drawn once from the caller's generator and the
 * block's index), so the pool's threads draw the blocks in any order and
 * every thread count gives the same bytes. One thread drawing a gigabyte
 * of weights was a third of a nightly CPU bench's set-up, and the first
 * touch of those pages (zeroed by the kernel, faulted in by the
 * hypervisor) is cheaper spread over the cores as well.
 */
#define FILL_BLOCK 16384            /* elements */
#define FILL_PARALLEL (1u << 20)    /* bytes from which the pool draws */

enum fill_kind { FILL_BYTES, FILL_BF16, FILL_F32 };

struct fill_job {
	enum fill_kind kind;
	void *dst;
	size_t n; /* elements (bytes for FILL_BYTES) */
	uint64_t key;
	float lo, hi;
};

static void fill_block(const struct fill_job *j, size_t b)
{
	size_t lo = b * FILL_BLOCK, hi = lo + FILL_BLOCK < j->n ? lo + FILL_BLOCK : j->n;
	uint64_t k = j->key ^ (b * 0x9e3779b97f4a7c15ull);
	struct rng r;
	rng_seed(&r, rng_splitmix64(&k));
	if (j->kind == FILL_BF16) {
		bf16_t *d = j->dst;
		for (size_t i = lo; i < hi; i++)
			d[i] = bf16_from_float(rng_uniform(&r, j->lo, j->hi));
	} else if (j->kind == FILL_F32) {
		float *d = j->dst;
		for (size_t i = lo; i < hi; i++)
			d[i] = rng_uniform(&r, j->lo, j->hi);
	} else {
		uint8_t *d = j->dst;
		size_t i = lo;
		for (; i + 8 <= hi; i += 8) {
			uint64_t v = rng_next(&r);
			memcpy(d + i, &v, 8);
		}
		if (i < hi) {
			uint64_t v = rng_next(&r);
			memcpy(d + i, &v, hi - i);
		}
	}
}

static void fill_part(void *ctx, int tid, int nthreads)
{
	const struct fill_job *j = ctx;
	size_t lo, hi;
	cpu_split((j->n + FILL_BLOCK - 1) / FILL_BLOCK, 1, tid, nthreads, &lo, &hi);
	for (size_t b = lo; b < hi; b++)
		fill_block(j, b);
}

static void fill_run(enum fill_kind kind, void *dst, size_t n, size_t esize, struct rng *r,
		     float lo, float hi)
{
	struct fill_job j = {kind, dst, n, rng_next(r), lo, hi};
	drawn += n * esize;
	if (n * esize >= FILL_PARALLEL)
		cpu_parallel(fill_part, &j);
	else
		fill_part(&j, 0, 1);
}

void opkit_fill_bf16(bf16_t *dst, size_t n, struct rng *r, float lo, float hi)
{
	fill_run(FILL_BF16, dst, n, sizeof *dst, r, lo, hi);
}

void opkit_fill_f32(float *dst, size_t n, struct rng *r, float lo, float hi)
{
	fill_run(FILL_F32, dst, n, sizeof *dst, r, lo, hi);
}

void opkit_fill_bytes(uint8_t *dst, size_t n, struct rng *r)
{
	fill_run(FILL_BYTES, dst, n, 1, r, 0, 0);
}

void opkit_poison_f32(float *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = NAN;
}

void opkit_poison_bf16(bf16_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = 0x7fc0; /* quiet NaN */
}

double opkit_max_err_f32(const float *out, const float *ref, size_t n)
{
	double ss = 0, worst = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(ref[i]))
			return INFINITY;
		ss += (double)ref[i] * ref[i];
	}
	double rms = n ? sqrt(ss / (double)n) : 0;
	if (rms == 0)
		rms = 1;
	for (size_t i = 0; i < n; i++) {
		double d = fabs((double)out[i] - ref[i]);
		if (!isfinite(out[i]) || !(d == d))
			return INFINITY;
		if (d > worst)
			worst = d;
	}
	return worst / rms;
}

double opkit_max_err_rows_f32(const float *out, const float *ref, size_t total, size_t width,
			      size_t row_stride, size_t elem_stride, const size_t *rows, size_t n)
{
	double ss = 0, worst = 0;
	for (size_t i = 0; i < total; i++)
		if (!isfinite(out[i]))
			return INFINITY;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < width; i++) {
			double r = ref[rows[k] * row_stride + i * elem_stride];
			if (isnan(r))
				return INFINITY;
			ss += r * r;
		}
	double rms = n && width ? sqrt(ss / (double)(n * width)) : 0;
	if (rms == 0)
		rms = 1;
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < width; i++) {
			size_t at = rows[k] * row_stride + i * elem_stride;
			double d = fabs((double)out[at] - ref[at]);
			worst = d > worst ? d : worst;
		}
	return worst / rms;
}

uint64_t opkit_subseed(uint64_t seed, const char *stream)
{
	uint64_t h = seed ^ 0xcbf29ce484222325ull;
	for (; *stream; stream++)
		h = (h ^ (unsigned char)*stream) * 0x100000001b3ull;
	return rng_splitmix64(&h);
}

void opkit_random_tree(int32_t *parent, int32_t *depth, int n, int L, struct rng *r)
{
	parent[0] = -1;
	depth[0] = 0;
	for (int i = 1; i < n; i++) {
		int p = (int)rng_below(r, (uint32_t)i);
		for (int tries = 0; depth[p] >= L && tries < 8; tries++)
			p = (int)rng_below(r, (uint32_t)i);
		if (depth[p] >= L)
			p = 0; /* the root always has room */
		parent[i] = p;
		depth[i] = depth[p] + 1;
	}
}
