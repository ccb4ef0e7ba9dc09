/* moe_w4a16.c - moe_w4a16's table row: sizes from the model geometry, seeded inputs, the routing generator, the C reference, byte and flop counts. */
#include "cpu/moe_w4a16_cpu.h"

#include "cpu/cpu.h"
#include "cpu/opkit.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct op_param_spec moe_params[] = {
	{"M", 9, "tokens (verify width C x (B+1))"},
	{"hidden", 7168, "model hidden size"},
	{"moe_inter", 2048, "one whole expert's intermediate size"},
	{"experts", 384, "routed experts in the model"},
	{"topk", 8, "routed experts per token"},
	{"group", 32, "INT4 quantization group along K"},
	{"tp", 8, "tensor parallel: each GPU holds moe_inter/tp of every expert"},
	{"ep", 1, "expert parallel: each GPU holds experts/ep whole experts"},
	{"shared", 1, "shared experts (bf16, sliced by tp)"},
	{"overlap", 0, "routing overlap: chance a slot reuses an earlier token's expert"},
	{"route_seed", 1, "seed of the routing draw (fixed, so byte counts are exact)"},
	{NULL, 0, NULL},
};

/* This GPU's sizes for p. */
struct moe_dims {
	int M, hidden, inter, experts, experts_all, topk, group, shared_inter;
	double overlap;
	uint64_t route_seed;
};

static int moe_dims(const struct op_params *p, struct moe_dims *d)
{
	const struct op_desc *op = &op_moe_w4a16;
	int moe_inter, tp, ep, shared, rs, rc;

	if ((rc = opkit_int(op, p, "M", 1, 1 << 16, &d->M)) ||
	    (rc = opkit_int(op, p, "hidden", 32, 1 << 16, &d->hidden)) ||
	    (rc = opkit_int(op, p, "moe_inter", 2, 1 << 16, &moe_inter)) ||
	    (rc = opkit_int(op, p, "experts", 1, 1 << 14, &d->experts_all)) ||
	    (rc = opkit_int(op, p, "topk", 1, 64, &d->topk)) ||
	    (rc = opkit_int(op, p, "group", 2, 1 << 16, &d->group)) ||
	    (rc = opkit_int(op, p, "tp", 1, 1024, &tp)) ||
	    (rc = opkit_int(op, p, "ep", 1, 1 << 14, &ep)) ||
	    (rc = opkit_int(op, p, "shared", 0, 8, &shared)) ||
	    (rc = opkit_num(op, p, "overlap", 0, 1, &d->overlap)) ||
	    (rc = opkit_int(op, p, "route_seed", 0, 1 << 30, &rs)))
		return rc;
	if (moe_inter % tp || d->experts_all % ep)
		return err_set(DDT_EINPUT, "moe_w4a16: tp %d must divide moe_inter %d and ep %d "
			       "experts %d", tp, moe_inter, ep, d->experts_all);
	d->inter = moe_inter / tp;
	d->experts = d->experts_all / ep;
	d->shared_inter = shared * d->inter;
	if (d->topk > d->experts_all)
		return err_set(DDT_EINPUT, "moe_w4a16: topk %d exceeds experts %d", d->topk,
			       d->experts_all);
	if (d->group % 2 || d->hidden % d->group || d->inter % d->group)
		return err_set(DDT_EINPUT, "moe_w4a16: group %d must be even and divide hidden %d "
			       "and the per-GPU inter %d", d->group, d->hidden, d->inter);
	d->route_seed = (uint64_t)rs;
	return 0;
}

void moe_route(int32_t *ids, int M, int topk, int experts, double overlap, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, seed);
	for (int m = 0; m < M; m++) {
		int32_t *row = ids + (size_t)m * topk;
		/* the earlier token this one borrows from: its tree parent, say */
		const int32_t *src = m ? ids + (size_t)rng_below(&r, (uint32_t)m) * topk : NULL;
		for (int j = 0; j < topk; j++) {
			int32_t e = -1;
			if (src && rng_unit(&r) < overlap)
				e = src[j];
			for (;;) {
				int dup = e < 0;
				for (int i = 0; i < j && !dup; i++)
					dup = row[i] == e;
				if (!dup)
					break;
				e = (int32_t)rng_below(&r, (uint32_t)experts);
			}
			row[j] = e;
		}
	}
}

/* Local ids: this GPU (rank 0) holds global experts [0, experts). */
static int32_t *moe_local_ids(const struct moe_dims *d)
{
	int32_t *ids = malloc((size_t)d->M * d->topk * sizeof *ids);
	if (!ids)
		return NULL;
	moe_route(ids, d->M, d->topk, d->experts_all, d->overlap, d->route_seed);
	for (size_t i = 0; i < (size_t)d->M * d->topk; i++)
		if (ids[i] >= d->experts)
			ids[i] = -1;
	return ids;
}

static size_t moe_expert_bytes(const struct moe_dims *d)
{
	size_t w13 = (size_t)2 * d->inter * d->hidden / 2;
	size_t s13 = (size_t)2 * d->inter * (d->hidden / d->group) * 2;
	size_t w2 = (size_t)d->hidden * d->inter / 2;
	size_t s2 = (size_t)d->hidden * (d->inter / d->group) * 2;
	return w13 + s13 + w2 + s2;
}

/* The buffers that depend on M (tokens, their routing, outputs, scratch). */
static void moe_free_tokens(struct moe_cpu *c)
{
	struct moe_w4a16_inst *in = &c->in;
	void **bufs[] = {(void **)&in->x,   (void **)&in->topk_ids, (void **)&in->topk_w,
			 (void **)&in->out, (void **)&in->ref,      (void **)&c->xq,
			 (void **)&c->xqc,  (void **)&c->hc,        (void **)&c->xn,
			 (void **)&c->tok,  (void **)&c->tw,        (void **)&c->h,
			 (void **)&c->hsh};
	for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
		cpu_free(*bufs[i]);
		*bufs[i] = NULL;
	}
}

static void moe_free(struct moe_cpu *c)
{
	struct moe_w4a16_inst *in = &c->in;
	moe_free_tokens(c);
	cpu_free(in->w13);
	cpu_free(in->s13);
	cpu_free(in->w2);
	cpu_free(in->s2);
	cpu_free(in->sh_w13);
	cpu_free(in->sh_w2);
	cpu_free(c->first);
	cpu_free(c->fill);
	cpu_free(c->touched);
	free(c);
}

static void moe_teardown(void *inst)
{
	if (inst)
		moe_free(inst);
}

/* Scales around 1/sqrt(K)/4 keep every stage's values near 1, so the bf16
 * rounding of h and the fp32 sums are exercised at a realistic size. */
static void moe_fill_weights(struct moe_cpu *c, const struct moe_dims *d, uint64_t seed)
{
	struct moe_w4a16_inst *in = &c->in;
	size_t E = (size_t)d->experts, R = (size_t)2 * d->inter, H = (size_t)d->hidden;
	struct rng r;
	float s13 = 1.0f / (4.0f * sqrtf((float)H)), s2 = 1.0f / (4.0f * sqrtf((float)d->inter));

	rng_seed(&r, opkit_subseed(seed, "w13"));
	opkit_fill_bytes(in->w13, E * R * H / 2, &r);
	opkit_fill_bytes(in->w2, E * H * d->inter / 2, &r);
	rng_seed(&r, opkit_subseed(seed, "scales"));
	opkit_fill_bf16(in->s13, E * R * (H / d->group), &r, 0.5f * s13, 1.5f * s13);
	opkit_fill_bf16(in->s2, E * H * (d->inter / d->group), &r, 0.5f * s2, 1.5f * s2);
	if (d->shared_inter) {
		float a = 2.0f / sqrtf((float)H), b = 2.0f / sqrtf((float)d->shared_inter);
		rng_seed(&r, opkit_subseed(seed, "shared"));
		opkit_fill_bf16(in->sh_w13, (size_t)2 * d->shared_inter * H, &r, -a, a);
		opkit_fill_bf16(in->sh_w2, H * d->shared_inter, &r, -b, b);
	}
}

/* Allocates and draws the weights (every expert's, the shared expert's) and
 * the per-expert scratch; sizes from d. Returns 0 or DDT_ENOMEM. */
static int moe_make_weights(struct moe_cpu *c, const struct moe_dims *d, uint64_t seed)
{
	struct moe_w4a16_inst *in = &c->in;
	size_t E = (size_t)d->experts, R = (size_t)2 * d->inter, H = (size_t)d->hidden;
	in->hidden = d->hidden;
	in->inter = d->inter;
	in->experts = d->experts;
	in->topk = d->topk;
	in->group = d->group;
	in->shared_inter = d->shared_inter;
	in->w13 = cpu_alloc(E * R * H / 2);
	in->s13 = cpu_alloc(E * R * (H / d->group) * 2);
	in->w2 = cpu_alloc(E * H * d->inter / 2);
	in->s2 = cpu_alloc(E * H * (d->inter / d->group) * 2);
	c->first = cpu_alloc((E + 1) * 4);
	c->fill = cpu_alloc(E * 4);
	c->touched = cpu_alloc(E * 4);
	int bad = !in->w13 || !in->s13 || !in->w2 || !in->s2 || !c->first || !c->fill ||
		  !c->touched;
	if (!bad && d->shared_inter) {
		in->sh_w13 = cpu_alloc((size_t)2 * d->shared_inter * H * 2);
		in->sh_w2 = cpu_alloc(H * d->shared_inter * 2);
		bad = !in->sh_w13 || !in->sh_w2;
	}
	if (bad)
		return err_set(DDT_ENOMEM, "moe_w4a16: cannot allocate %.1f MB of weights",
			       (double)E * moe_expert_bytes(d) / 1e6);
	moe_fill_weights(c, d, seed);
	return 0;
}

/* Allocates and draws what depends on M: the tokens, their routing and
 * weights, the outputs and the fast path's scratch. Returns 0 or DDT_ENOMEM. */
static int moe_make_tokens(struct moe_cpu *c, const struct moe_dims *d, uint64_t seed)
{
	struct moe_w4a16_inst *in = &c->in;
	size_t H = (size_t)d->hidden, MK = (size_t)d->M * d->topk;
	struct rng r;
	in->M = d->M;
	in->x = cpu_alloc((size_t)d->M * H * 2);
	in->topk_ids = cpu_alloc(MK * 4);
	in->topk_w = cpu_alloc(MK * 4);
	in->out = cpu_alloc((size_t)d->M * H * 4);
	in->ref = cpu_alloc((size_t)d->M * H * 4);
	c->xq = cpu_alloc((size_t)d->M * H * sizeof *c->xq);
	c->xqc = cpu_alloc((size_t)d->M * H);
	c->hc = cpu_alloc(MK * d->inter);
	c->xn = cpu_alloc((size_t)d->M * H * sizeof *c->xn);
	c->tok = cpu_alloc(MK * 4);
	c->tw = cpu_alloc(MK * 4);
	c->h = cpu_alloc(MK * d->inter * sizeof *c->h);
	if (d->shared_inter)
		c->hsh = cpu_alloc((size_t)d->M * d->shared_inter * sizeof *c->hsh);
	int32_t *ids = moe_local_ids(d);
	int bad = !in->x || !in->topk_ids || !in->topk_w || !in->out || !in->ref || !c->xq ||
		  !c->xqc || !c->hc || !c->xn || !c->tok || !c->tw || !c->h ||
		  (d->shared_inter && !c->hsh) || !ids;
	if (bad) {
		free(ids);
		return err_set(DDT_ENOMEM, "moe_w4a16: cannot allocate the buffers of %d tokens",
			       d->M);
	}
	memcpy(in->topk_ids, ids, MK * 4);
	free(ids);
	rng_seed(&r, opkit_subseed(seed, "x"));
	opkit_fill_bf16(in->x, (size_t)d->M * H, &r, -1, 1);
	rng_seed(&r, opkit_subseed(seed, "topk_w"));
	for (int m = 0; m < d->M; m++) {
		float *w = in->topk_w + (size_t)m * d->topk, sum = 0;
		for (int j = 0; j < d->topk; j++)
			sum += w[j] = rng_uniform(&r, 0.2f, 1.0f);
		for (int j = 0; j < d->topk; j++)
			w[j] /= sum;
	}
	return 0;
}

/* Whether prev's weights are those d and seed draw. */
static int moe_same_weights(const struct moe_cpu *prev, const struct moe_dims *d, uint64_t seed)
{
	const struct moe_w4a16_inst *in = &prev->in;
	return prev->seed == seed && in->hidden == d->hidden && in->inter == d->inter &&
	       in->experts == d->experts && in->topk == d->topk && in->group == d->group &&
	       in->shared_inter == d->shared_inter;
}

/* A sweep of M (or of the routing) keeps prev's 1.2 GB of weights and
 * draws only the tokens again; anything else is a fresh instance. */
static int moe_setup_from(void **inst, void *prev, const struct op_params *p, uint64_t seed)
{
	struct moe_dims d;
	struct moe_cpu *c = prev;
	int rc;

	*inst = NULL;
	if ((rc = moe_dims(p, &d))) {
		moe_teardown(prev);
		return rc;
	}
	if (c && !moe_same_weights(c, &d, seed)) {
		moe_free(c);
		c = NULL;
	}
	if (c) {
		moe_free_tokens(c);
	} else {
		if (!(c = calloc(1, sizeof *c)))
			return err_nomem();
		c->seed = seed;
		if ((rc = moe_make_weights(c, &d, seed)))
			goto done;
	}
	if ((rc = moe_make_tokens(c, &d, seed)))
		goto done;
	*inst = c;
	c = NULL;
done:
	if (c)
		moe_free(c);
	return rc;
}

static int moe_setup(void **inst, const struct op_params *p, uint64_t seed)
{
	return moe_setup_from(inst, NULL, p, seed);
}

/* One INT4 row (K weights) dotted with x in natural order, in double so the
 * reference carries no rounding of its own, group by group: each group's
 * sum of (q - 8) x (exact products in double) times its scale. The even
 * and odd nibbles sum apart, two chains of additions instead of one: the
 * reference checks every token it is asked for, and one long chain made it
 * 1 s a token at Kimi's 7168 hidden. group is even (moe_dims). */
static double ref_dot_q4(const uint8_t *row, const bf16_t *scales, int K, int group,
			 const float *x)
{
	double acc = 0;
	for (int g = 0; g < K / group; g++) {
		double lo = 0, hi = 0;
		for (int k = g * group; k < (g + 1) * group; k += 2) {
			lo += (double)((row[k / 2] & 15) - 8) * x[k];
			hi += (double)((row[k / 2] >> 4) - 8) * x[k + 1];
		}
		acc += (lo + hi) * bf16_to_float(scales[g]);
	}
	return acc;
}

/* Two chains as well, the even and the odd elements (K is even). */
static double ref_dot_bf16(const bf16_t *row, int K, const float *x)
{
	double even = 0, odd = 0;
	for (int k = 0; k + 1 < K; k += 2) {
		even += (double)bf16_to_float(row[k]) * x[k];
		odd += (double)bf16_to_float(row[k + 1]) * x[k + 1];
	}
	if (K % 2)
		even += (double)bf16_to_float(row[K - 1]) * x[K - 1];
	return even + odd;
}

static float silu(float g)
{
	return g / (1.0f + expf(-g));
}

/* out[m] += weight * (one expert's MLP of x[m]); expert e < 0 is the shared one. */
static void ref_expert(const struct moe_w4a16_inst *in, int e, const float *x, float weight,
		       float *h, float *out)
{
	int H = in->hidden, I = e < 0 ? in->shared_inter : in->inter, G = in->group;
	for (int r = 0; r < I; r++) {
		double g, u;
		if (e < 0) {
			g = ref_dot_bf16(in->sh_w13 + (size_t)r * H, H, x);
			u = ref_dot_bf16(in->sh_w13 + (size_t)(I + r) * H, H, x);
		} else {
			size_t rows = (size_t)e * 2 * I;
			g = ref_dot_q4(in->w13 + (rows + r) * (H / 2), in->s13 + (rows + r) * (H / G),
				       H, G, x);
			u = ref_dot_q4(in->w13 + (rows + I + r) * (H / 2),
				       in->s13 + (rows + I + r) * (H / G), H, G, x);
		}
		h[r] = bf16_round(silu((float)g) * (float)u);
	}
	for (int o = 0; o < H; o++) {
		double d;
		if (e < 0) {
			d = ref_dot_bf16(in->sh_w2 + (size_t)o * I, I, h);
		} else {
			size_t row = (size_t)e * H + o;
			d = ref_dot_q4(in->w2 + row * (I / 2), in->s2 + row * (I / G), I, G, h);
		}
		out[o] += weight * (float)d;
	}
}

struct moe_ref_job {
	struct moe_w4a16_inst *in;
	const size_t *rows; /* the tokens to compute (NULL: every token) */
	size_t n;
	int rc;
};

/* One thread's tokens: each token's output depends on nothing but itself. */
static void moe_ref_part(void *ctx, int tid, int nthreads)
{
	struct moe_ref_job *j = ctx;
	struct moe_w4a16_inst *in = j->in;
	int H = in->hidden;
	int hmax = in->inter > in->shared_inter ? in->inter : in->shared_inter;
	float *x = malloc((size_t)H * sizeof *x), *h = malloc((size_t)hmax * sizeof *h);
	size_t lo, hi;

	if (!x || !h) {
		j->rc = DDT_ENOMEM;
		goto done;
	}
	cpu_split(j->n, 1, tid, nthreads, &lo, &hi);
	for (size_t i = lo; i < hi; i++) {
		size_t m = opkit_row_at(j->rows, i);
		float *out = in->ref + m * H;
		for (int k = 0; k < H; k++) {
			x[k] = bf16_to_float(in->x[m * H + k]);
			out[k] = 0;
		}
		for (int j2 = 0; j2 < in->topk; j2++) {
			int e = in->topk_ids[m * in->topk + j2];
			if (e >= 0)
				ref_expert(in, e, x, in->topk_w[m * in->topk + j2], h, out);
		}
		if (in->shared_inter)
			ref_expert(in, -1, x, 1.0f, h, out);
	}
done:
	free(x);
	free(h);
}

/* A row of the check is a token: its hidden vector of output. */
static int moe_reference_rows(void *inst, const size_t *rows, size_t n)
{
	struct moe_ref_job j = {inst, rows, n, 0};
	cpu_parallel(moe_ref_part, &j);
	return j.rc ? err_set(j.rc, "moe_w4a16 reference: out of memory") : 0;
}

static int moe_reference(void *inst)
{
	return moe_reference_rows(inst, NULL, (size_t)((struct moe_w4a16_inst *)inst)->M);
}

static size_t moe_check_rows(const void *inst)
{
	return (size_t)((const struct moe_w4a16_inst *)inst)->M;
}

static void moe_poison(void *inst)
{
	struct moe_w4a16_inst *in = inst;
	opkit_poison_f32(in->out, (size_t)in->M * in->hidden);
}

static double moe_max_error(const void *inst)
{
	const struct moe_w4a16_inst *in = inst;
	return opkit_max_err_f32(in->out, in->ref, (size_t)in->M * in->hidden);
}

static double moe_max_error_rows(const void *inst, const size_t *rows, size_t n)
{
	const struct moe_w4a16_inst *in = inst;
	size_t H = (size_t)in->hidden;
	return opkit_max_err_rows_f32(in->out, in->ref, (size_t)in->M * H, H, H, 1, rows, n);
}

/* Local experts the routing of p touches, and local (token, expert) slots;
 * -1 when p is invalid or memory ran out. */
static int moe_touched(const struct moe_dims *d, long *slots)
{
	int32_t *ids = moe_local_ids(d);
	unsigned char *seen = calloc((size_t)d->experts, 1);
	int n = 0;
	*slots = 0;
	if (!ids || !seen) {
		free(ids);
		free(seen);
		return -1;
	}
	for (size_t i = 0; i < (size_t)d->M * d->topk; i++)
		if (ids[i] >= 0) {
			(*slots)++;
			n += !seen[ids[i]];
			seen[ids[i]] = 1;
		}
	free(ids);
	free(seen);
	return n;
}

double moe_w4a16_weight_bytes(const struct op_params *p)
{
	struct moe_dims d;
	long slots;
	if (moe_dims(p, &d))
		return NAN;
	int n = moe_touched(&d, &slots);
	if (n < 0)
		return NAN;
	return (double)n * moe_expert_bytes(&d) + 3.0 * d.shared_inter * d.hidden * 2;
}

/* Unique bytes: every touched expert's weights and scales once, the shared
 * expert once, activations in, routing in, output out. */
static double moe_bytes(const struct op_params *p)
{
	struct moe_dims d;
	if (moe_dims(p, &d))
		return NAN;
	double act = (double)d.M * d.hidden * (2 + 4) + (double)d.M * d.topk * 8;
	return moe_w4a16_weight_bytes(p) + act;
}

static double moe_flops(const struct op_params *p)
{
	struct moe_dims d;
	long slots;
	if (moe_dims(p, &d) || moe_touched(&d, &slots) < 0)
		return NAN;
	double per_tok = 2.0 * 3 * d.hidden;
	return per_tok * ((double)slots * d.inter + (double)d.M * d.shared_inter);
}

const struct op_desc op_moe_w4a16 = {
	.name = "moe_w4a16",
	.summary = "MoE layer at verify width M: INT4 g32 routed experts, bf16 shared expert",
	.setup = moe_setup,
	.setup_from = moe_setup_from,
	.teardown = moe_teardown,
	.reference = moe_reference,
	.run_cpu = moe_w4a16_run_cpu,
	.poison = moe_poison,
	.max_error = moe_max_error,
	.check_rows = moe_check_rows,
	.reference_rows = moe_reference_rows,
	.max_error_rows = moe_max_error_rows,
	.bytes = moe_bytes,
	.flops = moe_flops,
	.tol = 1e-2,
	.params = moe_params,
};
