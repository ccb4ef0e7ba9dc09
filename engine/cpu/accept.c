/* accept.c - accept's table row: the greedy walk over a verified tree and compaction of the accepted KV rows, reference and fast path. */
#include "ops/accept.h"

#include "cpu/cpu.h"
#include "cpu/opkit.h"
#include "cpu/walk.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const struct op_desc op_accept;

/* Compactions at least this large are split over the pool's threads. */
#define ACCEPT_PARALLEL_BYTES (4.0 * 1048576)

static const struct op_param_spec accept_params[] = {
	{"B", 32, "node budget: the tree has 1 + B nodes"},
	{"L", 15, "deepest tree depth (block size b - 1)"},
	{"layers", 61, "KV cache layers on one GPU (MLA latents are not split by TP)"},
	{"row", 576, "elements per KV row: kv_lora 512 + rope 64"},
	{"accept_p", 0.8, "chance the target's token matches a child, per step"},
	{"tree_seed", 1, "seed of the tree and target draw (fixed, so byte counts are exact)"},
	{NULL, 0, NULL},
};

struct accept_dims {
	int n, L, layers, row, seed;
	double accept_p;
};

static int accept_dims(const struct op_params *p, struct accept_dims *d)
{
	const struct op_desc *op = &op_accept;
	int B, rc;
	if ((rc = opkit_int(op, p, "B", 0, 1 << 16, &B)) ||
	    (rc = opkit_int(op, p, "L", 1, 255, &d->L)) ||
	    (rc = opkit_int(op, p, "layers", 1, 1024, &d->layers)) ||
	    (rc = opkit_int(op, p, "row", 1, 1 << 16, &d->row)) ||
	    (rc = opkit_num(op, p, "accept_p", 0, 1, &d->accept_p)) ||
	    (rc = opkit_int(op, p, "tree_seed", 0, 1 << 30, &d->seed)))
		return rc;
	d->n = 1 + B;
	return 0;
}

/* The tree (distinct sibling tokens) and the target's tokens, from the
 * tree seed alone. depth is scratch [n]. */
static void accept_tree(const struct accept_dims *d, int32_t *parent, int32_t *token,
			int32_t *target, int32_t *depth)
{
	struct rng r;
	const uint32_t vocab = 163840;
	rng_seed(&r, (uint64_t)d->seed);
	opkit_random_tree(parent, depth, d->n, d->L, &r);
	token[0] = (int32_t)rng_below(&r, vocab);
	for (int i = 1; i < d->n; i++) {
		int dup;
		do {
			token[i] = (int32_t)rng_below(&r, vocab);
			dup = 0;
			for (int j = 1; j < i && !dup; j++)
				dup = parent[j] == parent[i] && token[j] == token[i];
		} while (dup);
	}
	for (int i = 0; i < d->n; i++) {
		int kids = 0, pick;
		for (int j = i + 1; j < d->n; j++)
			kids += parent[j] == i;
		if (kids && rng_unit(&r) < d->accept_p) {
			pick = (int)rng_below(&r, (uint32_t)kids);
			for (int j = i + 1; j < d->n; j++)
				if (parent[j] == i && pick-- == 0)
					target[i] = token[j];
			continue;
		}
		int clash;
		do { /* a token no child holds: the walk stops here */
			target[i] = (int32_t)rng_below(&r, vocab);
			clash = 0;
			for (int j = i + 1; j < d->n && !clash; j++)
				clash = parent[j] == i && token[j] == target[i];
		} while (clash);
	}
}

static void accept_out_free(struct accept_out *o)
{
	cpu_free(o->path);
	cpu_free(o->kv);
}

static void accept_teardown(void *inst)
{
	struct accept_inst *in = inst;
	if (!in)
		return;
	cpu_free(in->parent);
	cpu_free(in->token);
	cpu_free(in->target);
	cpu_free(in->kv_tree);
	accept_out_free(&in->out);
	accept_out_free(&in->ref);
	free(in);
}

static int accept_setup(void **inst, const struct op_params *p, uint64_t seed)
{
	struct accept_inst *in;
	struct accept_dims d;
	struct rng r;
	int32_t *depth = NULL;
	int rc;

	*inst = NULL;
	if ((rc = accept_dims(p, &d)))
		return rc;
	if (!(in = calloc(1, sizeof *in)))
		return err_nomem();
	size_t path = (size_t)d.L + 1, kvrows = (size_t)d.layers * d.row;
	in->n = d.n;
	in->L = d.L;
	in->layers = d.layers;
	in->row = d.row;
	in->parent = cpu_alloc((size_t)d.n * 4);
	in->token = cpu_alloc((size_t)d.n * 4);
	in->target = cpu_alloc((size_t)d.n * 4);
	in->kv_tree = cpu_alloc(kvrows * d.n * 2);
	in->out.path = cpu_alloc(path * 4);
	in->out.kv = cpu_alloc(kvrows * path * 2);
	in->ref.path = cpu_alloc(path * 4);
	in->ref.kv = cpu_alloc(kvrows * path * 2);
	depth = malloc((size_t)d.n * 4);
	if (!in->parent || !in->token || !in->target || !in->kv_tree || !in->out.path ||
	    !in->out.kv || !in->ref.path || !in->ref.kv || !depth) {
		free(depth);
		accept_teardown(in);
		return err_set(DDT_ENOMEM, "accept: cannot allocate %d layers of KV rows", d.layers);
	}
	accept_tree(&d, in->parent, in->token, in->target, depth);
	free(depth);
	rng_seed(&r, opkit_subseed(seed, "kv"));
	opkit_fill_bf16(in->kv_tree, kvrows * d.n, &r, -1, 1);
	*inst = in;
	return 0;
}

/* The walk with a full scan for children at each step. */
static void accept_walk_ref(const struct accept_inst *in, struct accept_out *o)
{
	int node = 0, len = 1;
	for (int i = 0; i <= in->L; i++)
		o->path[i] = -1;
	o->path[0] = 0;
	for (;;) {
		int want = in->target[node], next = -1;
		for (int c = 0; c < in->n; c++)
			if (in->parent[c] == node && in->token[c] == want)
				next = c;
		if (next < 0 || len > in->L) {
			o->bonus = want;
			break;
		}
		o->path[len++] = next;
		node = next;
	}
	o->len = len;
}

static int accept_reference(void *inst)
{
	struct accept_inst *in = inst;
	accept_walk_ref(in, &in->ref);
	for (int l = 0; l < in->layers; l++)
		for (int i = 0; i < in->ref.len; i++)
			for (int k = 0; k < in->row; k++)
				in->ref.kv[((size_t)l * (in->L + 1) + i) * in->row + k] =
					in->kv_tree[((size_t)l * in->n + in->ref.path[i]) * in->row + k];
	return 0;
}

static void accept_copy_part(void *ctx, int tid, int nthreads)
{
	struct accept_inst *in = ctx;
	size_t lo, hi, rb = (size_t)in->row * 2;
	cpu_split((size_t)in->layers, 1, tid, nthreads, &lo, &hi);
	for (size_t l = lo; l < hi; l++)
		for (int i = 0; i < in->out.len; i++)
			memcpy(in->out.kv + (l * (in->L + 1) + i) * in->row,
			       in->kv_tree + (l * in->n + in->out.path[i]) * in->row, rb);
}

/* Children come after their parent, so each step scans forward from the
 * current node and stops at the first match (sibling tokens are distinct). */
int accept_walk(const int32_t *parent, const int32_t *token, const int32_t *target, int n, int L,
		int32_t *path, int32_t *bonus)
{
	int node = 0, len = 1;
	path[0] = 0;
	for (;;) {
		int want = target[node], next = -1;
		for (int c = node + 1; c < n && len <= L; c++)
			if (parent[c] == node && token[c] == want) {
				next = c;
				break;
			}
		if (next < 0) {
			*bonus = want;
			return len;
		}
		path[len++] = next;
		node = next;
	}
}

static int accept_run_cpu(void *inst)
{
	struct accept_inst *in = inst;
	struct accept_out *o = &in->out;
	int len = accept_walk(in->parent, in->token, in->target, in->n, in->L, o->path, &o->bonus);
	o->len = len;
	for (int i = len; i <= in->L; i++)
		o->path[i] = -1;
	/* a copy of a few MB is over before a second thread would be awake */
	if ((double)len * in->layers * in->row * 2 >= ACCEPT_PARALLEL_BYTES)
		cpu_parallel(accept_copy_part, in);
	else
		accept_copy_part(in, 0, 1);
	return 0;
}

static void accept_poison(void *inst)
{
	struct accept_inst *in = inst;
	in->out.len = in->out.bonus = INT32_MIN;
	for (int i = 0; i <= in->L; i++)
		in->out.path[i] = INT32_MIN;
	opkit_poison_bf16(in->out.kv, (size_t)in->layers * (in->L + 1) * in->row);
}

/* Exact: 0 when the walk and every accepted row match, else +Inf. */
static double accept_max_error(const void *inst)
{
	const struct accept_inst *in = inst;
	const struct accept_out *o = &in->out, *r = &in->ref;
	if (o->len != r->len || o->bonus != r->bonus)
		return INFINITY;
	for (int i = 0; i <= in->L; i++)
		if (o->path[i] != r->path[i])
			return INFINITY;
	for (int l = 0; l < in->layers; l++) {
		size_t off = (size_t)l * (in->L + 1) * in->row;
		if (memcmp(o->kv + off, r->kv + off, (size_t)r->len * in->row * 2))
			return INFINITY;
	}
	return 0;
}

/* Accepted length for p's tree (-1 on failure). */
static int accept_len_of(const struct op_params *p, struct accept_dims *d)
{
	if (accept_dims(p, d))
		return -1;
	struct accept_inst in = {.n = d->n, .L = d->L};
	int32_t *buf = malloc((size_t)d->n * 4 * 4 + (size_t)(d->L + 1) * 4);
	if (!buf)
		return -1;
	in.parent = buf;
	in.token = buf + d->n;
	in.target = buf + 2 * d->n;
	in.ref.path = buf + 4 * d->n;
	accept_tree(d, in.parent, in.token, in.target, buf + 3 * d->n);
	accept_walk_ref(&in, &in.ref);
	free(buf);
	return in.ref.len;
}

/* The accepted rows read and written in every layer, plus the tree's
 * parents, tokens and targets. */
static double accept_bytes(const struct op_params *p)
{
	struct accept_dims d;
	int len = accept_len_of(p, &d);
	if (len < 0)
		return NAN;
	return 2.0 * 2 * len * d.layers * d.row + 3.0 * 4 * d.n + 4.0 * (d.L + 1);
}

static double accept_flops(const struct op_params *p)
{
	(void)p;
	return 0;
}

const struct op_desc op_accept = {
	.name = "accept",
	.summary = "greedy acceptance walk and compaction of the accepted KV rows",
	.setup = accept_setup,
	.teardown = accept_teardown,
	.reference = accept_reference,
	.run_cpu = accept_run_cpu,
	.poison = accept_poison,
	.max_error = accept_max_error,
	.bytes = accept_bytes,
	.flops = accept_flops,
	.tol = 0,
	.params = accept_params,
};
