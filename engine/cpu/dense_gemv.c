/* dense_gemv.c - dense_gemv's table row: bf16 projection at small M (drafter layers, lm_head), its reference and its CPU fast path. */
#include "ops/dense_gemv.h"

#include "cpu/cpu.h"
#include "cpu/kern.h"
#include "cpu/opkit.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const struct op_desc op_dense_gemv;

static const struct op_param_spec gemv_params[] = {
	{"M", 9, "tokens"},
	{"K", 7168, "input features (hidden)"},
	{"N", 18432, "output features (drafter intermediate; vocab/tp for lm_head)"},
	{NULL, 0, NULL},
};

static int gemv_dims(const struct op_params *p, int *M, int *K, int *N)
{
	int rc;
	if ((rc = opkit_int(&op_dense_gemv, p, "M", 1, 1 << 16, M)) ||
	    (rc = opkit_int(&op_dense_gemv, p, "K", 8, 1 << 20, K)) ||
	    (rc = opkit_int(&op_dense_gemv, p, "N", 1, 1 << 24, N)))
		return rc;
	if (*K % 8)
		return err_set(DDT_EINPUT, "dense_gemv: K %d must be a multiple of 8", *K);
	return 0;
}

static void gemv_teardown(void *inst)
{
	struct dense_gemv_inst *in = inst;
	if (!in)
		return;
	cpu_free(in->x);
	cpu_free(in->w);
	cpu_free(in->out);
	cpu_free(in->ref);
	free(in);
}

/* A sweep of M keeps prev's weights (K x N bf16) and draws x again. */
static int gemv_setup_from(void **inst, void *prev, const struct op_params *p, uint64_t seed)
{
	struct dense_gemv_inst *in = prev;
	struct rng r;
	int M, K, N, rc;

	*inst = NULL;
	if ((rc = gemv_dims(p, &M, &K, &N))) {
		gemv_teardown(prev);
		return rc;
	}
	if (in && (in->K != K || in->N != N || in->seed != seed)) {
		gemv_teardown(in);
		in = NULL;
	}
	if (in) {
		cpu_free(in->x);
		cpu_free(in->out);
		cpu_free(in->ref);
	} else {
		if (!(in = calloc(1, sizeof *in)))
			return err_nomem();
		in->K = K;
		in->N = N;
		in->seed = seed;
		if (!(in->w = cpu_alloc((size_t)N * K * 2))) {
			gemv_teardown(in);
			return err_set(DDT_ENOMEM, "dense_gemv: cannot allocate %.1f MB of weights",
				       (double)N * K * 2 / 1e6);
		}
		float a = 2.0f / sqrtf((float)K);
		rng_seed(&r, opkit_subseed(seed, "w"));
		opkit_fill_bf16(in->w, (size_t)N * K, &r, -a, a);
	}
	in->M = M;
	in->x = cpu_alloc((size_t)M * K * 2);
	in->out = cpu_alloc((size_t)M * N * 4);
	in->ref = cpu_alloc((size_t)M * N * 4);
	if (!in->x || !in->out || !in->ref) {
		gemv_teardown(in);
		return err_set(DDT_ENOMEM, "dense_gemv: cannot allocate the buffers of %d tokens",
			       M);
	}
	rng_seed(&r, opkit_subseed(seed, "x"));
	opkit_fill_bf16(in->x, (size_t)M * K, &r, -1, 1);
	*inst = in;
	return 0;
}

static int gemv_setup(void **inst, const struct op_params *p, uint64_t seed)
{
	return gemv_setup_from(inst, NULL, p, seed);
}

struct gemv_ref_job {
	struct dense_gemv_inst *in;
	const size_t *rows; /* the output features to compute (NULL: every one) */
	size_t n;
};

/* One thread's output features, each a plain double-precision dot. */
static void gemv_ref_part(void *ctx, int tid, int nthreads)
{
	struct gemv_ref_job *j = ctx;
	struct dense_gemv_inst *in = j->in;
	size_t lo, hi;
	cpu_split(j->n, 1, tid, nthreads, &lo, &hi);
	for (int m = 0; m < in->M; m++)
		for (size_t i = lo; i < hi; i++) {
			size_t n = opkit_row_at(j->rows, i);
			double acc = 0;
			for (int k = 0; k < in->K; k++)
				acc += (double)bf16_to_float(in->x[(size_t)m * in->K + k]) *
				       bf16_to_float(in->w[n * in->K + k]);
			in->ref[(size_t)m * in->N + n] = (float)acc;
		}
}

/* A row of the check is an output feature: its M outputs (a column of out). */
static int gemv_reference_rows(void *inst, const size_t *rows, size_t n)
{
	struct gemv_ref_job j = {inst, rows, n};
	cpu_parallel(gemv_ref_part, &j);
	return 0;
}

static int gemv_reference(void *inst)
{
	return gemv_reference_rows(inst, NULL, (size_t)((struct dense_gemv_inst *)inst)->N);
}

static size_t gemv_check_rows(const void *inst)
{
	return (size_t)((const struct dense_gemv_inst *)inst)->N;
}

static double gemv_max_error_rows(const void *inst, const size_t *rows, size_t n)
{
	const struct dense_gemv_inst *in = inst;
	size_t N = (size_t)in->N;
	return opkit_max_err_rows_f32(in->out, in->ref, (size_t)in->M * N, (size_t)in->M, 1, N,
				      rows, n);
}

struct gemv_job {
	struct dense_gemv_inst *in;
	kern_act_t *xk;      /* [M][K] x as the kernels read it */
	struct kern_vec *xs; /* [M] pointers into xk */
};

/* One thread's output features, two rows at a time: each weight row comes
 * from memory once for all M, and each x load serves both rows. */
static void gemv_part(void *ctx, int tid, int nthreads)
{
	struct gemv_job *j = ctx;
	struct dense_gemv_inst *in = j->in;
	size_t lo, hi, K = (size_t)in->K, N = (size_t)in->N;
	float da[KERN_BF16_BLOCK], db[KERN_BF16_BLOCK];

	cpu_split(N, 16, tid, nthreads, &lo, &hi);
	for (size_t n = lo; n < hi; n += 2)
		for (int t0 = 0; t0 < in->M; t0 += KERN_BF16_BLOCK) {
			int nt = in->M - t0 < KERN_BF16_BLOCK ? in->M - t0 : KERN_BF16_BLOCK;
			const struct kern_vec *xs = j->xs + t0;
			float *out = in->out + (size_t)t0 * N + n;
			if (n + 1 < hi) {
				kern_bf16_dots2(in->w + n * K, in->w + (n + 1) * K, in->K, xs, nt,
						da, db);
				for (int t = 0; t < nt; t++) {
					out[(size_t)t * N] = da[t];
					out[(size_t)t * N + 1] = db[t];
				}
			} else {
				kern_bf16_dots(in->w + n * K, in->K, xs, nt, da);
				for (int t = 0; t < nt; t++)
					out[(size_t)t * N] = da[t];
			}
		}
}

static int gemv_run_cpu(void *inst)
{
	struct dense_gemv_inst *in = inst;
	size_t n = (size_t)in->M * in->K;
	struct gemv_job j = {in, malloc(n * sizeof(kern_act_t)),
			     malloc((size_t)in->M * sizeof(struct kern_vec))};
	int rc = 0;

	if (!j.xk || !j.xs) {
		rc = err_nomem();
		goto done;
	}
	for (size_t i = 0; i < n; i++)
		j.xk[i] = kern_act_from_bf16(in->x[i]);
	for (int t = 0; t < in->M; t++)
		j.xs[t] = (struct kern_vec){j.xk + (size_t)t * in->K, NULL};
	cpu_parallel(gemv_part, &j);
done:
	free(j.xk);
	free(j.xs);
	return rc;
}

static void gemv_poison(void *inst)
{
	struct dense_gemv_inst *in = inst;
	opkit_poison_f32(in->out, (size_t)in->M * in->N);
}

static double gemv_max_error(const void *inst)
{
	const struct dense_gemv_inst *in = inst;
	return opkit_max_err_f32(in->out, in->ref, (size_t)in->M * in->N);
}

/* Weights once, activations in, fp32 output out. */
static double gemv_bytes(const struct op_params *p)
{
	int M, K, N;
	if (gemv_dims(p, &M, &K, &N))
		return NAN;
	return 2.0 * N * K + 2.0 * M * K + 4.0 * M * N;
}

static double gemv_flops(const struct op_params *p)
{
	int M, K, N;
	return gemv_dims(p, &M, &K, &N) ? NAN : 2.0 * M * K * N;
}

const struct op_desc op_dense_gemv = {
	.name = "dense_gemv",
	.summary = "bf16 dense projection at small M (drafter layers, lm_head)",
	.setup = gemv_setup,
	.setup_from = gemv_setup_from,
	.teardown = gemv_teardown,
	.reference = gemv_reference,
	.run_cpu = gemv_run_cpu,
	.poison = gemv_poison,
	.max_error = gemv_max_error,
	.check_rows = gemv_check_rows,
	.reference_rows = gemv_reference_rows,
	.max_error_rows = gemv_max_error_rows,
	.bytes = gemv_bytes,
	.flops = gemv_flops,
	.tol = 1e-3,
	.params = gemv_params,
};
