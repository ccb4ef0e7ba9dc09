/* tree_build.c - tree_build's table row: drafter-like logits, the C reference (full sort, double logsumexp, frontier scan), the tolerant tree comparison, byte counts. */
#include "cpu/tree.h"

#include "cpu/cpu.h"
#include "cpu/opkit.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct op_param_spec tree_params[] = {
	{"L", 15, "drafted positions: block size b - 1"},
	{"V", 163840, "vocabulary"},
	{"B", 32, "node budget, root excluded"},
	{NULL, 0, NULL},
};

/* The C side's instance: callers see &in. */
struct tree_cpu {
	struct tree_build_inst in;
	float *tk_logp;    /* [L][K] the fast path's top-K log-probs */
	int32_t *tk_tok;   /* [L][K] and their tokens */
	void *tk_scratch;  /* [L][tree_topk_scratch_len(K)] filter buffers, one per position */
	void *heap;        /* [2B+2] heap entries */
};

static int tree_dims(const struct op_params *p, int *L, int *V, int *B)
{
	int rc;
	if ((rc = opkit_int(&op_tree_build, p, "L", 1, 255, L)) ||
	    (rc = opkit_int(&op_tree_build, p, "V", 1, 1 << 24, V)) ||
	    (rc = opkit_int(&op_tree_build, p, "B", 1, 1 << 16, B)))
		return rc;
	return 0;
}

static void out_free(struct tree_build_out *o)
{
	cpu_free(o->parent);
	cpu_free(o->depth);
	cpu_free(o->rank);
	cpu_free(o->token);
	cpu_free(o->logp);
	cpu_free(o->mask);
}

static int out_alloc(struct tree_build_out *o, int B, int mask_words)
{
	size_t n = (size_t)B + 1;
	o->parent = cpu_alloc(n * 4);
	o->depth = cpu_alloc(n * 4);
	o->rank = cpu_alloc(n * 4);
	o->token = cpu_alloc(n * 4);
	o->logp = cpu_alloc(n * 4);
	o->mask = cpu_alloc(n * (size_t)mask_words * 4);
	return o->parent && o->depth && o->rank && o->token && o->logp && o->mask ? 0 : -1;
}

static void tree_teardown(void *inst)
{
	struct tree_cpu *c = inst;
	if (!c)
		return;
	cpu_free(c->in.logits);
	out_free(&c->in.out);
	out_free(&c->in.ref);
	cpu_free(c->tk_logp);
	cpu_free(c->tk_tok);
	cpu_free(c->tk_scratch);
	cpu_free(c->heap);
	free(c);
}

/* A confident drafter: gaussian logits plus a few tokens well above the rest,
 * so the tree has both deep chains and bushy spots. */
static void tree_fill(struct tree_build_inst *in, uint64_t seed)
{
	struct rng r;
	rng_seed(&r, opkit_subseed(seed, "logits"));
	for (int d = 0; d < in->L; d++) {
		float *x = in->logits + (size_t)d * in->V;
		for (int v = 0; v < in->V; v++)
			x[v] = 1.5f * rng_normal(&r);
		int hot = 1 + (int)rng_below(&r, 4);
		for (int i = 0; i < hot; i++)
			x[rng_below(&r, (uint32_t)in->V)] += rng_uniform(&r, 4, 12);
	}
	in->root_token = (int32_t)rng_below(&r, (uint32_t)in->V);
}

static int tree_setup(void **inst, const struct op_params *p, uint64_t seed)
{
	struct tree_cpu *c;
	int L, V, B, rc;

	*inst = NULL;
	if ((rc = tree_dims(p, &L, &V, &B)))
		return rc;
	if (!(c = calloc(1, sizeof *c)))
		return err_nomem();
	struct tree_build_inst *in = &c->in;
	in->L = L;
	in->V = V;
	in->B = B;
	in->K = B < V ? B : V;
	in->mask_words = (1 + B + 31) / 32;
	in->logits = cpu_alloc((size_t)L * V * 4);
	c->tk_logp = cpu_alloc((size_t)L * in->K * 4);
	c->tk_tok = cpu_alloc((size_t)L * in->K * 4);
	c->tk_scratch = cpu_alloc((size_t)L * tree_topk_scratch_len(in->K) * TREE_TOPK_ENTRY);
	c->heap = cpu_alloc((size_t)(2 * B + 2) * TREE_HEAP_ENTRY);
	if (!in->logits || !c->tk_logp || !c->tk_tok || !c->tk_scratch || !c->heap ||
	    out_alloc(&in->out, B, in->mask_words) || out_alloc(&in->ref, B, in->mask_words)) {
		tree_teardown(c);
		return err_set(DDT_ENOMEM, "tree_build: cannot allocate %d x %d logits", L, V);
	}
	tree_fill(in, seed);
	*inst = c;
	return 0;
}

/* ---- reference ---- */

struct ref_ent {
	float v;
	int32_t id;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_ent *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Heap order for ref_topk: the worst kept entry (last under ref_cmp) on
 * top. Moves e down from slot i of h[n]. */
static void ref_heap_down(struct ref_ent *h, int n, int i, struct ref_ent e)
{
	for (int c; (c = 2 * i + 1) < n; i = c) {
		if (c + 1 < n && ref_cmp(&h[c + 1], &h[c]) > 0)
			c++;
		if (ref_cmp(&h[c], &e) <= 0)
			break;
		h[i] = h[c];
	}
	h[i] = e;
}

/* The K best entries under ref_cmp, best first: a heap of the best K so
 * far, sorted at the end. ref_cmp is a total order (ties go to the lower
 * id), so these are the sorted vocabulary's first K; sorting all of it
 * was 30 ms a depth. Logsumexp in double. */
static int ref_topk(const float *x, int V, int K, float *logp, int32_t *tok)
{
	struct ref_ent *best = malloc((size_t)K * sizeof *best);
	double mx = -INFINITY, sum = 0;
	if (!best)
		return err_nomem();
	for (int v = 0; v < V; v++) {
		struct ref_ent e = {x[v], v};
		mx = x[v] > mx ? x[v] : mx;
		if (v < K) {
			int i = v; /* up from the bottom while worse than its parent */
			for (; i > 0 && ref_cmp(&best[(i - 1) / 2], &e) < 0; i = (i - 1) / 2)
				best[i] = best[(i - 1) / 2];
			best[i] = e;
		} else if (ref_cmp(&e, &best[0]) < 0) {
			ref_heap_down(best, K, 0, e);
		}
	}
	qsort(best, (size_t)K, sizeof *best, ref_cmp);
	for (int v = 0; v < V; v++)
		sum += exp((double)x[v] - mx);
	double lse = mx + log(sum);
	for (int r = 0; r < K; r++) {
		tok[r] = best[r].id;
		logp[r] = (float)((double)best[r].v - lse);
	}
	free(best);
	return 0;
}

struct ref_cand {
	float logp;
	int parent, depth, rank;
};

/* The best-first process with a plain frontier list scanned in full at
 * every pop: slow, and plainly the rule of [ddtree-2604.12989]. */
static void ref_tree(const float *logp, const int32_t *tok, const struct tree_build_inst *in,
		     struct ref_cand *fr, struct tree_build_out *out)
{
	int K = in->K, W = in->mask_words, nf = 0, n = 1;
	out->parent[0] = -1;
	out->depth[0] = out->rank[0] = 0;
	out->token[0] = in->root_token;
	out->logp[0] = 0;
	memset(out->mask, 0, (size_t)W * 4);
	out->mask[0] = 1;
	fr[nf++] = (struct ref_cand){logp[0], 0, 1, 0};
	while (n <= in->B && nf > 0) {
		int best = 0;
		for (int i = 1; i < nf; i++)
			if (fr[i].logp > fr[best].logp ||
			    (fr[i].logp == fr[best].logp &&
			     tree_tie_before(out, fr[i].parent, fr[i].rank, fr[best].parent,
					     fr[best].rank)))
				best = i;
		struct ref_cand e = fr[best];
		fr[best] = fr[--nf];
		int i = n++;
		out->parent[i] = e.parent;
		out->depth[i] = e.depth;
		out->rank[i] = e.rank;
		out->token[i] = tok[(e.depth - 1) * K + e.rank];
		out->logp[i] = e.logp;
		for (int w = 0; w < W; w++)
			out->mask[(size_t)i * W + w] = out->mask[(size_t)e.parent * W + w];
		out->mask[(size_t)i * W + i / 32] |= 1u << (i % 32);
		if (e.rank + 1 < K)
			fr[nf++] = (struct ref_cand){out->logp[e.parent] +
							     logp[(e.depth - 1) * K + e.rank + 1],
						     e.parent, e.depth, e.rank + 1};
		if (e.depth < in->L)
			fr[nf++] = (struct ref_cand){e.logp + logp[e.depth * K], i, e.depth + 1, 0};
	}
	out->n = n;
}

struct ref_topk_job {
	const struct tree_build_inst *in;
	float *logp;
	int32_t *tok;
	int rc;
};

/* One thread's positions (each sorted on its own). */
static void ref_topk_part(void *ctx, int tid, int nthreads)
{
	struct ref_topk_job *j = ctx;
	const struct tree_build_inst *in = j->in;
	size_t lo, hi;
	cpu_split((size_t)in->L, 1, tid, nthreads, &lo, &hi);
	for (size_t d = lo; d < hi; d++)
		if (ref_topk(in->logits + d * in->V, in->V, in->K, j->logp + d * in->K,
			     j->tok + d * in->K))
			j->rc = DDT_ENOMEM;
}

static int tree_reference(void *inst)
{
	struct tree_build_inst *in = inst;
	size_t LK = (size_t)in->L * in->K;
	float *logp = malloc(LK * sizeof *logp);
	int32_t *tok = malloc(LK * sizeof *tok);
	struct ref_cand *fr = malloc((size_t)(2 * in->B + 2) * sizeof *fr);
	int rc = 0;

	if (!logp || !tok || !fr) {
		rc = err_nomem();
		goto done;
	}
	struct ref_topk_job j = {in, logp, tok, 0};
	cpu_parallel(ref_topk_part, &j);
	if (j.rc)
		rc = err_set(j.rc, "tree_build reference: out of memory");
	else
		ref_tree(logp, tok, in, fr, &in->ref);
done:
	free(logp);
	free(tok);
	free(fr);
	return rc;
}

/* ---- fast path ---- */

static void tree_topk_part(void *ctx, int tid, int nthreads)
{
	struct tree_cpu *c = ctx;
	struct tree_build_inst *in = &c->in;
	size_t lo, hi, slen = (size_t)tree_topk_scratch_len(in->K) * TREE_TOPK_ENTRY;
	cpu_split((size_t)in->L, 1, tid, nthreads, &lo, &hi);
	for (size_t d = lo; d < hi; d++)
		tree_topk_lse(in->logits + d * in->V, in->V, in->K, c->tk_logp + d * in->K,
			      c->tk_tok + d * in->K, (char *)c->tk_scratch + d * slen);
}

int tree_build_run_cpu(void *inst)
{
	struct tree_cpu *c = inst;
	struct tree_build_inst *in = &c->in;
	cpu_parallel(tree_topk_part, c);
	tree_heap_build(c->tk_logp, c->tk_tok, in->L, in->K, in->B, in->root_token,
			in->mask_words, c->heap, &in->out);
	return 0;
}

static void tree_poison(void *inst)
{
	struct tree_build_inst *in = inst;
	size_t n = (size_t)in->B + 1;
	struct tree_build_out *o = &in->out;
	o->n = -1;
	for (size_t i = 0; i < n; i++) {
		o->parent[i] = o->depth[i] = o->rank[i] = o->token[i] = INT32_MIN;
		o->logp[i] = NAN;
	}
	memset(o->mask, 0xff, n * (size_t)in->mask_words * 4);
}

/* Whether out is a well-formed tree: parents first, depths and ranks in
 * range, each mask row its parent's plus its own bit, log-probs
 * non-increasing, sibling tokens distinct. */
static int tree_well_formed(const struct tree_build_inst *in, const struct tree_build_out *o)
{
	int W = in->mask_words;
	if (o->n < 1 || o->n > in->B + 1 || o->parent[0] != -1 || o->depth[0] != 0 ||
	    o->token[0] != in->root_token || o->logp[0] != 0 || o->mask[0] != 1)
		return 0;
	for (int w = 1; w < W; w++)
		if (o->mask[w])
			return 0;
	for (int i = 1; i < o->n; i++) {
		int p = o->parent[i];
		if (p < 0 || p >= i || o->depth[i] != o->depth[p] + 1 || o->depth[i] > in->L ||
		    o->rank[i] < 0 || o->rank[i] >= in->K || o->token[i] < 0 ||
		    o->token[i] >= in->V || !(o->logp[i] <= o->logp[i - 1]))
			return 0;
		for (int w = 0; w < W; w++) {
			uint32_t want = o->mask[(size_t)p * W + w];
			if (w == i / 32)
				want |= 1u << (i % 32);
			if (o->mask[(size_t)i * W + w] != want)
				return 0;
		}
		for (int j = 1; j < i; j++)
			if (o->parent[j] == p && o->token[j] == o->token[i])
				return 0;
	}
	return 1;
}

/* Which node of b holds a's node i: same token under the matched parent. */
static void tree_match(const struct tree_build_out *a, const struct tree_build_out *b, int *map)
{
	map[0] = 0;
	for (int i = 1; i < a->n; i++) {
		int pb = map[a->parent[i]];
		map[i] = -1;
		for (int j = 1; pb >= 0 && j < b->n; j++)
			if (b->parent[j] == pb && b->token[j] == a->token[i]) {
				map[i] = j;
				break;
			}
	}
}

/* In nats: the largest log-prob difference of a node both trees hold, and
 * for a node only one tree holds, how far below the other tree's weakest
 * node it sits (a near-tie at the budget's edge costs almost nothing; a
 * wrong pick costs its gap). A malformed tree is +Inf. */
static double tree_max_error(const void *inst)
{
	const struct tree_build_inst *in = inst;
	const struct tree_build_out *o = &in->out, *r = &in->ref;
	double err = 0;
	int *map = NULL, *back = NULL;

	if (!tree_well_formed(in, o) || o->n != r->n)
		return INFINITY;
	map = malloc((size_t)o->n * sizeof *map);
	back = malloc((size_t)o->n * sizeof *back);
	if (!map || !back) {
		err = INFINITY;
		goto done;
	}
	tree_match(o, r, map);
	tree_match(r, o, back);
	for (int i = 1; i < o->n; i++) {
		double d = map[i] >= 0 ? fabs((double)o->logp[i] - r->logp[map[i]])
				       : (double)r->logp[r->n - 1] - o->logp[i];
		if (d > err)
			err = d;
		if (back[i] < 0 && (double)o->logp[o->n - 1] - r->logp[i] > err)
			err = (double)o->logp[o->n - 1] - r->logp[i];
	}
done:
	free(map);
	free(back);
	return err;
}

/* Logits once (fp32), the tree out. */
static double tree_bytes(const struct op_params *p)
{
	int L, V, B;
	if (tree_dims(p, &L, &V, &B))
		return NAN;
	double mw = (1 + B + 31) / 32;
	return 4.0 * L * V + (1.0 + B) * (5 * 4 + 4 * mw);
}

/* Per logit: max, compare, subtract, exp, add. */
static double tree_flops(const struct op_params *p)
{
	int L, V, B;
	return tree_dims(p, &L, &V, &B) ? NAN : 5.0 * L * V;
}

const struct op_desc op_tree_build = {
	.name = "tree_build",
	.summary = "DDTree from drafter logits: top-K, float32 logsumexp, best-first heap, mask",
	.setup = tree_setup,
	.teardown = tree_teardown,
	.reference = tree_reference,
	.run_cpu = tree_build_run_cpu,
	.poison = tree_poison,
	.max_error = tree_max_error,
	.bytes = tree_bytes,
	.flops = tree_flops,
	.tol = 1e-3,
	.params = tree_params,
};
