/* tree_attn.c - tree_attn's table row: MLA-absorbed tree-verify attention, its double-precision reference and its CPU fast path. */
#include "ops/tree_attn.h"

#include "cpu/cpu.h"
#include "cpu/opkit.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef __AVX2__
#include <immintrin.h>
#endif

extern const struct op_desc op_tree_attn;

static const struct op_param_spec attn_params[] = {
	{"B", 32, "node budget: 1 + B tree queries"},
	{"ctx", 4096, "past context tokens"},
	{"L", 15, "deepest tree depth (shapes the random ancestor mask)"},
	{"heads", 64, "attention heads in the model"},
	{"tp", 8, "tensor parallel: heads / tp on one GPU"},
	{"kv_lora", 512, "latent width (kv_lora_rank), also V"},
	{"rope", 64, "rope key width (qk_rope_dim)"},
	{"qk_dim", 192, "qk_nope + qk_rope: the softmax scale is 1/sqrt(qk_dim)"},
	{NULL, 0, NULL},
};

struct attn_dims {
	int T, ctx, L, heads, d_lat, d_rope, qk_dim;
};

static int attn_dims(const struct op_params *p, struct attn_dims *d)
{
	const struct op_desc *op = &op_tree_attn;
	int B, heads, tp, rc;
	if ((rc = opkit_int(op, p, "B", 0, 1 << 16, &B)) ||
	    (rc = opkit_int(op, p, "ctx", 0, 1 << 22, &d->ctx)) ||
	    (rc = opkit_int(op, p, "L", 1, 255, &d->L)) ||
	    (rc = opkit_int(op, p, "heads", 1, 4096, &heads)) ||
	    (rc = opkit_int(op, p, "tp", 1, 4096, &tp)) ||
	    (rc = opkit_int(op, p, "kv_lora", 8, 1 << 14, &d->d_lat)) ||
	    (rc = opkit_int(op, p, "rope", 0, 1 << 14, &d->d_rope)) ||
	    (rc = opkit_int(op, p, "qk_dim", 1, 1 << 14, &d->qk_dim)))
		return rc;
	if (heads % tp)
		return err_set(DDT_EINPUT, "tree_attn: tp %d must divide heads %d", tp, heads);
	d->T = 1 + B;
	d->heads = heads / tp;
	return 0;
}

static void attn_teardown(void *inst)
{
	struct tree_attn_inst *in = inst;
	if (!in)
		return;
	cpu_free(in->q);
	cpu_free(in->kv);
	cpu_free(in->mask);
	cpu_free(in->out);
	cpu_free(in->ref);
	free(in);
}

/* The ancestor mask of a random tree of T nodes and depth at most L. */
static int attn_mask(struct tree_attn_inst *in, int L, struct rng *r)
{
	int32_t *parent = malloc((size_t)in->T * 4), *depth = malloc((size_t)in->T * 4);
	int W = in->mask_words;
	if (!parent || !depth) {
		free(parent);
		free(depth);
		return err_nomem();
	}
	opkit_random_tree(parent, depth, in->T, L, r);
	for (int i = 0; i < in->T; i++) {
		uint32_t *row = in->mask + (size_t)i * W;
		if (i)
			memcpy(row, in->mask + (size_t)parent[i] * W, (size_t)W * 4);
		row[i / 32] |= 1u << (i % 32);
	}
	free(parent);
	free(depth);
	return 0;
}

static int attn_setup(void **inst, const struct op_params *p, uint64_t seed)
{
	struct tree_attn_inst *in;
	struct attn_dims d;
	struct rng r;
	int rc;

	*inst = NULL;
	if ((rc = attn_dims(p, &d)))
		return rc;
	if (!(in = calloc(1, sizeof *in)))
		return err_nomem();
	size_t D = (size_t)d.d_lat + d.d_rope, rows = (size_t)d.ctx + d.T;
	in->T = d.T;
	in->ctx = d.ctx;
	in->heads = d.heads;
	in->d_lat = d.d_lat;
	in->d_rope = d.d_rope;
	in->mask_words = (d.T + 31) / 32;
	in->scale = 1.0f / sqrtf((float)d.qk_dim);
	in->q = cpu_alloc((size_t)d.T * d.heads * D * 2);
	in->kv = cpu_alloc(rows * D * 2);
	in->mask = cpu_alloc((size_t)d.T * in->mask_words * 4);
	in->out = cpu_alloc((size_t)d.T * d.heads * d.d_lat * 4);
	in->ref = cpu_alloc((size_t)d.T * d.heads * d.d_lat * 4);
	if (!in->q || !in->kv || !in->mask || !in->out || !in->ref) {
		attn_teardown(in);
		return err_set(DDT_ENOMEM, "tree_attn: cannot allocate a %zu-row cache", rows);
	}
	rng_seed(&r, opkit_subseed(seed, "q"));
	opkit_fill_bf16(in->q, (size_t)d.T * d.heads * D, &r, -1, 1);
	rng_seed(&r, opkit_subseed(seed, "kv"));
	opkit_fill_bf16(in->kv, rows * D, &r, -1, 1);
	rng_seed(&r, opkit_subseed(seed, "tree"));
	if ((rc = attn_mask(in, d.L, &r))) {
		attn_teardown(in);
		return rc;
	}
	*inst = in;
	return 0;
}

static int attn_visible(const struct tree_attn_inst *in, int t, int j)
{
	if (j < in->ctx)
		return 1;
	j -= in->ctx;
	return (in->mask[(size_t)t * in->mask_words + j / 32] >> (j % 32)) & 1;
}

struct attn_ref_job {
	struct tree_attn_inst *in;
	const size_t *rows; /* the (token, head) queries to compute (NULL: every one) */
	size_t n;
	int rc;
};

/* One thread's (token, head) queries: scores, softmax and the weighted sum,
 * all in double. */
static void attn_ref_part(void *ctx, int tid, int nthreads)
{
	struct attn_ref_job *job = ctx;
	struct tree_attn_inst *in = job->in;
	int D = in->d_lat + in->d_rope, rows = in->ctx + in->T;
	double *s = malloc((size_t)rows * sizeof *s), *o = malloc((size_t)in->d_lat * sizeof *o);
	size_t lo, hi;

	if (!s || !o) {
		job->rc = DDT_ENOMEM;
		goto done;
	}
	cpu_split(job->n, 1, tid, nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		size_t qi = opkit_row_at(job->rows, i);
		int t = (int)(qi / in->heads);
		const bf16_t *q = in->q + qi * D;
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j < rows; j++) {
			s[j] = -INFINITY;
			if (!attn_visible(in, t, j))
				continue;
			double acc = 0;
			for (int k = 0; k < D; k++)
				acc += (double)bf16_to_float(q[k]) * bf16_to_float(in->kv[(size_t)j * D + k]);
			s[j] = acc * in->scale;
			mx = s[j] > mx ? s[j] : mx;
		}
		memset(o, 0, (size_t)in->d_lat * sizeof *o);
		for (int j = 0; j < rows; j++) {
			if (s[j] == -INFINITY)
				continue;
			double p = exp(s[j] - mx);
			sum += p;
			for (int k = 0; k < in->d_lat; k++)
				o[k] += p * bf16_to_float(in->kv[(size_t)j * D + k]);
		}
		float *out = in->ref + qi * in->d_lat;
		for (int k = 0; k < in->d_lat; k++)
			out[k] = (float)(o[k] / sum);
	}
done:
	free(s);
	free(o);
}

/* A row of the check is one (token, head) query: its latent of output. */
static int attn_reference_rows(void *inst, const size_t *rows, size_t n)
{
	struct attn_ref_job job = {inst, rows, n, 0};
	cpu_parallel(attn_ref_part, &job);
	return job.rc ? err_set(job.rc, "tree_attn reference: out of memory") : 0;
}

static size_t attn_check_rows(const void *inst)
{
	const struct tree_attn_inst *in = inst;
	return (size_t)in->T * in->heads;
}

static int attn_reference(void *inst)
{
	return attn_reference_rows(inst, NULL, attn_check_rows(inst));
}

/* ---- fast path: flash-style, one pass over the cache in chunks ---- */

#define ATTN_CHUNK 64

struct attn_job {
	struct tree_attn_inst *in;
	int rc;
};

static float attn_dot(const float *a, const float *b, int n)
{
	int k = 0;
	float s = 0;
#ifdef __AVX2__
	__m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
	for (; k + 16 <= n; k += 16) {
		a0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), a0);
		a1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + k + 8), _mm256_loadu_ps(b + k + 8), a1);
	}
	__m256 v = _mm256_add_ps(a0, a1);
	__m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	x = _mm_add_ps(x, _mm_movehl_ps(x, x));
	x = _mm_add_ss(x, _mm_movehdup_ps(x));
	s = _mm_cvtss_f32(x);
#endif
	for (; k < n; k++)
		s += a[k] * b[k];
	return s;
}

/* acc[n] = acc * c + p * v */
static void attn_axpby(float *acc, float c, float p, const float *v, int n)
{
	int k = 0;
#ifdef __AVX2__
	__m256 vc = _mm256_set1_ps(c), vp = _mm256_set1_ps(p);
	for (; k + 8 <= n; k += 8)
		_mm256_storeu_ps(acc + k, _mm256_fmadd_ps(vp, _mm256_loadu_ps(v + k),
							  _mm256_mul_ps(vc, _mm256_loadu_ps(acc + k))));
#endif
	for (; k < n; k++)
		acc[k] = acc[k] * c + p * v[k];
}

/* One thread's share of the T x heads queries; every thread walks the whole
 * cache, chunk by chunk, converting each chunk to fp32 once for all of its
 * queries. */
static void attn_part(void *ctx, int tid, int nthreads)
{
	struct attn_job *job = ctx;
	struct tree_attn_inst *in = job->in;
	int D = in->d_lat + in->d_rope, rows = in->ctx + in->T;
	size_t lo, hi;
	cpu_split((size_t)in->T * in->heads, 1, tid, nthreads, &lo, &hi);
	int nq = (int)(hi - lo);
	if (nq <= 0)
		return;
	float *qf = malloc((size_t)nq * D * sizeof *qf);
	float *kf = malloc((size_t)ATTN_CHUNK * D * sizeof *kf);
	float *m = malloc((size_t)nq * 2 * sizeof *m), *l = m ? m + nq : NULL;
	float *acc = calloc((size_t)nq * in->d_lat, sizeof *acc);
	if (!qf || !kf || !m || !acc) {
		job->rc = DDT_ENOMEM;
		goto done;
	}
	for (size_t i = 0; i < (size_t)nq * D; i++)
		qf[i] = bf16_to_float(in->q[lo * D + i]) * in->scale;
	for (int i = 0; i < nq; i++) {
		m[i] = -INFINITY;
		l[i] = 0;
	}
	for (int j0 = 0; j0 < rows; j0 += ATTN_CHUNK) {
		int nj = rows - j0 < ATTN_CHUNK ? rows - j0 : ATTN_CHUNK;
		for (size_t i = 0; i < (size_t)nj * D; i++)
			kf[i] = bf16_to_float(in->kv[(size_t)j0 * D + i]);
		for (int qi = 0; qi < nq; qi++) {
			int t = (int)((lo + qi) / in->heads);
			float s[ATTN_CHUNK], cmax = -INFINITY;
			for (int j = 0; j < nj; j++) {
				s[j] = attn_visible(in, t, j0 + j) ? attn_dot(qf + (size_t)qi * D,
									     kf + (size_t)j * D, D)
								     : -INFINITY;
				cmax = s[j] > cmax ? s[j] : cmax;
			}
			if (cmax == -INFINITY)
				continue;
			float mnew = cmax > m[qi] ? cmax : m[qi];
			float c = expf(m[qi] - mnew); /* rescales what came before */
			float *a = acc + (size_t)qi * in->d_lat;
			l[qi] *= c;
			m[qi] = mnew;
			for (int j = 0; j < nj; j++) {
				if (s[j] == -INFINITY)
					continue;
				float p = expf(s[j] - mnew);
				l[qi] += p;
				attn_axpby(a, c, p, kf + (size_t)j * D, in->d_lat);
				c = 1;
			}
		}
	}
	for (int qi = 0; qi < nq; qi++)
		for (int k = 0; k < in->d_lat; k++)
			in->out[(lo + qi) * in->d_lat + k] = acc[(size_t)qi * in->d_lat + k] / l[qi];
done:
	free(qf);
	free(kf);
	free(m);
	free(acc);
}

static int attn_run_cpu(void *inst)
{
	struct attn_job job = {inst, 0};
	cpu_parallel(attn_part, &job);
	return job.rc ? err_set(job.rc, "tree_attn: out of memory") : 0;
}

static void attn_poison(void *inst)
{
	struct tree_attn_inst *in = inst;
	opkit_poison_f32(in->out, (size_t)in->T * in->heads * in->d_lat);
}

static double attn_max_error(const void *inst)
{
	const struct tree_attn_inst *in = inst;
	return opkit_max_err_f32(in->out, in->ref, (size_t)in->T * in->heads * in->d_lat);
}

static double attn_max_error_rows(const void *inst, const size_t *rows, size_t n)
{
	const struct tree_attn_inst *in = inst;
	size_t D = (size_t)in->d_lat;
	return opkit_max_err_rows_f32(in->out, in->ref, attn_check_rows(inst) * D, D, D, 1, rows,
				      n);
}

/* The cache once (every head shares it), queries in, output out. */
static double attn_bytes(const struct op_params *p)
{
	struct attn_dims d;
	if (attn_dims(p, &d))
		return NAN;
	double D = d.d_lat + d.d_rope;
	return 2.0 * (d.ctx + d.T) * D + 2.0 * d.T * d.heads * D + 4.0 * d.T * d.heads * d.d_lat;
}

/* QK over d_lat + d_rope and PV over d_lat, for every visible pair (the
 * tree part counted in full: it is small beside ctx). */
static double attn_flops(const struct op_params *p)
{
	struct attn_dims d;
	if (attn_dims(p, &d))
		return NAN;
	return 2.0 * d.T * d.heads * (double)(d.ctx + d.T) * (2.0 * d.d_lat + d.d_rope);
}

const struct op_desc op_tree_attn = {
	.name = "tree_attn",
	.summary = "tree-verify attention, MLA absorbed: 1+B queries over ctx + tree, ancestor mask",
	.setup = attn_setup,
	.teardown = attn_teardown,
	.reference = attn_reference,
	.run_cpu = attn_run_cpu,
	.poison = attn_poison,
	.max_error = attn_max_error,
	.check_rows = attn_check_rows,
	.reference_rows = attn_reference_rows,
	.max_error_rows = attn_max_error_rows,
	.bytes = attn_bytes,
	.flops = attn_flops,
	.tol = 1e-2,
	.params = attn_params,
};
