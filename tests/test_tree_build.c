/* test_tree_build.c - tree_build against brute force (every prefix up to depth L, the B most probable), its invariants, ties and exhaustion. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu.h"
#include "cpu/tree.h"
#include "err.h"
#include "op.h"
#include "rng.h"

#define MAXL 8

struct prefix {
	float logp;
	int depth;
	int rank[MAXL];
};

/* Best first: larger log-prob, then the smaller rank tuple. */
static int prefix_cmp(const void *a, const void *b)
{
	const struct prefix *x = a, *y = b;
	if (x->logp != y->logp)
		return x->logp > y->logp ? -1 : 1;
	for (int i = 0; i < x->depth && i < y->depth; i++)
		if (x->rank[i] != y->rank[i])
			return x->rank[i] < y->rank[i] ? -1 : 1;
	return x->depth - y->depth;
}

/* Every prefix of depth 1..L over K ranks per position, log-probs summed
 * from depth 1 down in float (the order the tree adds them in), sorted. */
static struct prefix *brute_force(const float *logp, int L, int K, size_t *count)
{
	size_t total = 0, pw = 1;
	for (int d = 1; d <= L; d++)
		total += pw *= (size_t)K;
	struct prefix *all = malloc(total * sizeof *all);
	size_t n = 0;
	assert_non_null(all);
	for (int d = 1; d <= L; d++) {
		int r[MAXL] = {0};
		for (;;) {
			struct prefix p = {0, d, {0}};
			for (int i = 0; i < d; i++) {
				p.rank[i] = r[i];
				p.logp = p.logp + logp[i * K + r[i]];
			}
			all[n++] = p;
			int i = d - 1;
			while (i >= 0 && ++r[i] == K)
				r[i--] = 0;
			if (i < 0)
				break;
		}
	}
	qsort(all, n, sizeof *all, prefix_cmp);
	*count = n;
	return all;
}

struct tree_buf {
	int32_t parent[256], depth[256], rank[256], token[256];
	float logp[256];
	uint32_t mask[256 * 8];
	struct tree_build_out out;
};

static void tree_buf_init(struct tree_buf *t)
{
	t->out = (struct tree_build_out){0, t->parent, t->depth, t->rank, t->token, t->logp, t->mask};
}

/* The rank tuple of node i into r; returns its depth. */
static int node_ranks(const struct tree_build_out *o, int i, int *r)
{
	int d = o->depth[i];
	for (int k = d - 1; k >= 0; k--, i = o->parent[i])
		r[k] = o->rank[i];
	return d;
}

/* Node i + 1 of the tree must be prefix i of the sorted brute force: same
 * rank tuple, same float log-prob. */
static void expect_brute_force(const struct tree_build_out *o, const float *logp,
			       const int32_t *tok, int L, int K, int B)
{
	size_t np;
	struct prefix *all = brute_force(logp, L, K, &np);
	int want = (size_t)B < np ? B : (int)np;
	assert_int_equal(o->n, 1 + want);
	for (int i = 0; i < want; i++) {
		int r[MAXL];
		int d = node_ranks(o, i + 1, r);
		assert_int_equal(d, all[i].depth);
		for (int k = 0; k < d; k++)
			assert_int_equal(r[k], all[i].rank[k]);
		assert_true(o->logp[i + 1] == all[i].logp);
		assert_int_equal(o->token[i + 1], tok[(d - 1) * K + r[d - 1]]);
	}
	free(all);
}

/* Parents first, non-increasing log-prob, mask = parent's plus own bit. */
static void expect_invariants(const struct tree_build_out *o, int W)
{
	assert_int_equal(o->parent[0], -1);
	assert_int_equal(o->mask[0], 1);
	for (int i = 1; i < o->n; i++) {
		assert_true(o->parent[i] >= 0 && o->parent[i] < i);
		assert_int_equal(o->depth[i], o->depth[o->parent[i]] + 1);
		assert_true(o->logp[i] <= o->logp[i - 1]);
		for (int w = 0; w < W; w++) {
			uint32_t m = o->mask[(size_t)o->parent[i] * W + w];
			if (w == i / 32)
				m |= 1u << (i % 32);
			assert_int_equal(o->mask[(size_t)i * W + w], m);
		}
	}
}

/* Sorted top-K lists: random log-probs, or coarse ones full of exact ties. */
static void random_lists(float *logp, int32_t *tok, int L, int K, struct rng *r, int ties)
{
	for (int d = 0; d < L; d++) {
		float *l = logp + d * K;
		for (int k = 0; k < K; k++) {
			l[k] = ties ? -0.5f * (float)rng_below(r, 4) : logf(rng_unit(r) + 1e-6f);
			tok[d * K + k] = (int32_t)(d * 1000 + k);
		}
		for (int i = 1; i < K; i++) /* insertion sort, best first */
			for (int j = i; j > 0 && l[j] > l[j - 1]; j--) {
				float t = l[j];
				l[j] = l[j - 1];
				l[j - 1] = t;
			}
	}
}

static void test_tree_build__heap_matches_brute_force(void **state)
{
	(void)state;
	static const int cases[][3] = {{1, 5, 3}, {3, 4, 10}, {4, 3, 20}, {5, 4, 40}, {2, 8, 30}};
	struct rng r;
	rng_seed(&r, 42);
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (int ties = 0; ties <= 1; ties++) {
			int L = cases[c][0], K = cases[c][1], B = cases[c][2];
			int W = (1 + B + 31) / 32;
			float logp[MAXL * 8];
			int32_t tok[MAXL * 8];
			char heap[(2 * 64 + 2) * TREE_HEAP_ENTRY];
			struct tree_buf t;
			tree_buf_init(&t);
			random_lists(logp, tok, L, K, &r, ties);
			tree_heap_build(logp, tok, L, K, B, 7, W, heap, &t.out);
			expect_brute_force(&t.out, logp, tok, L, K, B);
			expect_invariants(&t.out, W);
		}
}

/* One tree per field set, room for 1 + B nodes and the masks. */
struct big_tree {
	struct tree_build_out out;
};

static void big_tree_alloc(struct big_tree *t, int B)
{
	size_t n = (size_t)B + 1, W = (n + 31) / 32;
	t->out = (struct tree_build_out){0,           malloc(n * 4), malloc(n * 4), malloc(n * 4),
					 malloc(n * 4), malloc(n * 4), malloc(n * W * 4)};
	assert_true(t->out.parent && t->out.depth && t->out.rank && t->out.token && t->out.logp &&
		    t->out.mask);
}

static void big_tree_free(struct big_tree *t)
{
	free(t->out.parent), free(t->out.depth), free(t->out.rank);
	free(t->out.token), free(t->out.logp), free(t->out.mask);
}

/* The heapless build against the heap, node for node, on random trees: K
 * below and above B, exact ties (coarse log-probs, 0 and -0 among them) and
 * none, exhausted trees. */
static void test_tree_build__sort_build_matches_the_heap(void **state)
{
	(void)state;
	struct rng r;
	rng_seed(&r, 2604);
	float logp[MAXL * 8];
	int32_t tok[MAXL * 8];
	for (int c = 0; c < 3000; c++) {
		int L = 1 + (int)rng_below(&r, 6), K = 1 + (int)rng_below(&r, 8);
		int B = 1 + (int)rng_below(&r, c % 3 ? 64 : 1100), ties = c % 2;
		struct big_tree h, s;
		big_tree_alloc(&h, B);
		big_tree_alloc(&s, B);
		void *heap = malloc((size_t)(2 * B + 2) * TREE_HEAP_ENTRY);
		size_t need = tree_sort_scratch_bytes(L, K, B);
		void *scratch = malloc(need ? need : 1);
		assert_true(heap && scratch);
		random_lists(logp, tok, L, K, &r, ties);
		tree_heap_build(logp, tok, L, K, B, 7, (B + 1 + 31) / 32, heap, &h.out);
		int rc = tree_sort_build(logp, tok, L, K, B, 7, scratch, &s.out);
		assert_int_equal(rc, need ? 0 : -1);
		if (!rc) {
			assert_int_equal(s.out.n, h.out.n);
			for (int i = 0; i < h.out.n; i++) {
				assert_int_equal(s.out.parent[i], h.out.parent[i]);
				assert_int_equal(s.out.depth[i], h.out.depth[i]);
				assert_int_equal(s.out.rank[i], h.out.rank[i]);
				assert_int_equal(s.out.token[i], h.out.token[i]);
				assert_memory_equal(&s.out.logp[i], &h.out.logp[i], 4);
			}
		}
		free(heap), free(scratch);
		big_tree_free(&h), big_tree_free(&s);
	}
}

/* The node index of the prefix ranks[0 .. depth) in the heap's tree, or 0. */
static int heap_node_of(const struct tree_build_out *o, int depth, const int32_t *ranks)
{
	int node = 0;
	for (int d = 0; d < depth; d++) {
		int next = 0;
		for (int i = 1; i < o->n && !next; i++)
			if (o->parent[i] == node && o->rank[i] == ranks[d])
				next = i;
		if (!(node = next))
			return 0;
	}
	return node;
}

/* tree_sort_read against the heap's tree on random trees (ties among them),
 * with cuts above, near and below the B-th node: the summed probabilities at
 * every budget as the node-order sum over the heap's nodes to a few ulps a
 * node (each exp carried from the parent's, added in bin order), and
 * every prefix asked about at the heap's node index (0 when it is not in the
 * tree); a cut that keeps too few says so. */
static void test_tree_build__sort_read_matches_the_heap(void **state)
{
	(void)state;
	struct rng r;
	rng_seed(&r, 3207);
	float logp[MAXL * 8];
	int32_t tok[MAXL * 8], qrank[6 * 6], qpos[6];
	int budgets[4], qdepth[6], misses = 0;
	double mass[4];
	for (int c = 0; c < 2000; c++) {
		int L = 1 + (int)rng_below(&r, 6), K = 1 + (int)rng_below(&r, 8);
		int B = 1 + (int)rng_below(&r, c % 3 ? 64 : 1100);
		struct big_tree h;
		big_tree_alloc(&h, B);
		void *heap = malloc((size_t)(2 * B + 2) * TREE_HEAP_ENTRY);
		size_t need = tree_sort_scratch_bytes(L, K, B);
		void *scratch = malloc(need ? need : 1);
		assert_true(heap && scratch);
		random_lists(logp, tok, L, K, &r, c % 2);
		tree_heap_build(logp, tok, L, K, B, 7, (B + 1 + 31) / 32, heap, &h.out);
		for (int j = 0; j < 4; j++)
			budgets[j] = j == 3 ? B : (int)rng_below(&r, (uint64_t)B + 1);
		for (int i = 1; i < 4; i++) /* rising */
			for (int j = i; j > 0 && budgets[j] < budgets[j - 1]; j--) {
				int t = budgets[j];
				budgets[j] = budgets[j - 1], budgets[j - 1] = t;
			}
		for (int q = 0; q < L; q++) {
			qdepth[q] = 1 + (int)rng_below(&r, (uint64_t)L);
			for (int d = 0; d < L; d++)
				qrank[q * L + d] = (int)rng_below(&r, (uint64_t)(K < 3 ? K : 3));
		}
		float bth = h.out.logp[h.out.n - 1], cut = c % 4 == 0 ? 0 : bth * (0.5f + (float)c / 2000);
		struct tree_sort_ask ask = {4, budgets, mass, L, qdepth, qrank, qpos, 0, 0, 0};
		int rc = tree_sort_read(logp, L, K, B, cut, &ask, scratch);
		if (rc == 1) {
			misses++;
			assert_true(cut < 0 && bth < cut);
			rc = tree_sort_read(logp, L, K, B, 0, &ask, scratch);
		}
		assert_int_equal(rc, need ? 0 : -1);
		if (!rc) {
			assert_int_equal(ask.n, h.out.n);
			double cum = 0;
			for (int j = 0, node = 1; j < 4; j++) {
				for (; node < h.out.n && node <= budgets[j]; node++)
					cum += exp((double)h.out.logp[node]);
				assert_true(fabs(mass[j] - cum) <= 1e-15 * (node + 1) * cum);
			}
			for (int q = 0; q < L; q++)
				assert_int_equal(qpos[q], heap_node_of(&h.out, qdepth[q], qrank + q * L));
		}
		free(heap), free(scratch);
		big_tree_free(&h);
	}
	assert_true(misses > 0);
}

/* A row out of order or a log-prob above 0 is refused: only the heap's
 * order holds there. */
static void test_tree_build__sort_build_refuses_unsorted_rows(void **state)
{
	(void)state;
	float up[4] = {-0.1f, -2.0f, -1.0f, -0.3f}, pos[4] = {0.5f, -2.0f, -0.3f, -1.0f};
	int32_t tok[4] = {10, 11, 20, 21};
	struct big_tree s;
	big_tree_alloc(&s, 6);
	void *scratch = malloc(tree_sort_scratch_bytes(2, 2, 6));
	assert_non_null(scratch);
	assert_int_equal(tree_sort_build(up, tok, 2, 2, 6, 3, scratch, &s.out), -1);
	assert_int_equal(tree_sort_build(pos, tok, 2, 2, 6, 3, scratch, &s.out), -1);
	free(scratch);
	big_tree_free(&s);
}

static void test_tree_build__exhausted_tree_stops_early(void **state)
{
	(void)state;
	float logp[2 * 2] = {-0.1f, -2.0f, -0.3f, -1.0f};
	int32_t tok[4] = {10, 11, 20, 21};
	char heap[(2 * 50 + 2) * TREE_HEAP_ENTRY];
	struct tree_buf t;
	tree_buf_init(&t);
	tree_heap_build(logp, tok, 2, 2, 50, 3, 2, heap, &t.out);
	assert_int_equal(t.out.n, 1 + 2 + 4); /* every prefix, then the heap is empty */
	expect_brute_force(&t.out, logp, tok, 2, 2, 50);
}

/* The op's sorted top-K from the logits, the way the reference computes it. */
static void sort_topk(const float *x, int V, int K, float *logp, int32_t *tok)
{
	double mx = -INFINITY, sum = 0;
	for (int v = 0; v < V; v++)
		mx = x[v] > mx ? x[v] : mx;
	for (int v = 0; v < V; v++)
		sum += exp((double)x[v] - mx);
	double lse = mx + log(sum);
	unsigned char *used = calloc((size_t)V, 1);
	assert_non_null(used);
	for (int k = 0; k < K; k++) {
		int best = -1;
		for (int v = 0; v < V; v++)
			if (!used[v] && (best < 0 || x[v] > x[best]))
				best = v;
		used[best] = 1;
		tok[k] = best;
		logp[k] = (float)((double)x[best] - lse);
	}
	free(used);
}

static void test_tree_build__op_matches_brute_force(void **state)
{
	(void)state;
	static const int cases[][3] = {{4, 50, 12}, {3, 7, 30}, {6, 1000, 16}, {2, 3, 40}};
	const struct op_desc *op = op_find("tree_build");
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			int L = cases[c][0], V = cases[c][1], B = cases[c][2], K = B < V ? B : V;
			struct op_params p = {0};
			void *inst;
			op_param_set(&p, "L", L);
			op_param_set(&p, "V", V);
			op_param_set(&p, "B", B);
			assert_int_equal(op->setup(&inst, &p, seed), 0);
			struct tree_build_inst *in = inst;
			float *logp = malloc((size_t)L * K * sizeof *logp);
			int32_t *tok = malloc((size_t)L * K * sizeof *tok);
			for (int d = 0; d < L; d++)
				sort_topk(in->logits + (size_t)d * V, V, K, logp + d * K, tok + d * K);
			assert_int_equal(op->reference(inst), 0);
			if (L <= 4 || K <= 4)
				expect_brute_force(&in->ref, logp, tok, L, K, B);
			expect_invariants(&in->ref, in->mask_words);
			op->poison(inst);
			assert_int_equal(op->run_cpu(inst), 0);
			expect_invariants(&in->out, in->mask_words);
			assert_true(op->max_error(inst) <= op->tol);
			free(logp);
			free(tok);
			op->teardown(inst);
		}
}

static void test_tree_build__topk_takes_smaller_id_on_ties(void **state)
{
	(void)state;
	struct rng r;
	rng_seed(&r, 5);
	for (int V = 1; V < 300; V += 37)
		for (int K = 1; K <= V && K <= 64; K = K * 3 + 1) {
			float *x = malloc((size_t)V * sizeof *x), logp[64], want_lp[64];
			int32_t tok[64], want[64];
			char scratch[(3 * 64 + 64) * TREE_TOPK_ENTRY];
			for (int v = 0; v < V; v++) /* few distinct values: ties everywhere */
				x[v] = (float)rng_below(&r, 6) - 3.0f;
			tree_topk_lse(x, V, K, logp, tok, scratch);
			sort_topk(x, V, K, want_lp, want);
			for (int k = 0; k < K; k++) {
				assert_int_equal(tok[k], want[k]);
				assert_float_equal(logp[k], want_lp[k], 1e-5);
			}
			free(x);
		}
}

static void test_tree_build__logsumexp_holds_over_a_full_vocabulary(void **state)
{
	(void)state;
	const int V = 163840, K = 32;
	float *x = malloc((size_t)V * sizeof *x), logp[32], want_lp[32];
	int32_t tok[32], want[32];
	char *scratch = malloc((size_t)tree_topk_scratch_len(K) * TREE_TOPK_ENTRY);
	struct rng r;
	rng_seed(&r, 77);
	for (int v = 0; v < V; v++)
		x[v] = 3.0f * rng_normal(&r) + (v % 1000 == 0 ? 20.0f : 0.0f);
	tree_topk_lse(x, V, K, logp, tok, scratch);
	sort_topk(x, V, K, want_lp, want);
	for (int k = 0; k < K; k++) {
		assert_int_equal(tok[k], want[k]);
		assert_float_equal(logp[k], want_lp[k], 2e-5);
	}
	free(x);
	free(scratch);
}

static void test_tree_build__wrong_tree_fails_validation(void **state)
{
	(void)state;
	const struct op_desc *op = op_find("tree_build");
	struct op_params p = {0};
	void *inst;
	op_param_set(&p, "L", 5);
	op_param_set(&p, "V", 500);
	op_param_set(&p, "B", 20);
	assert_int_equal(op->setup(&inst, &p, 9), 0);
	struct tree_build_inst *in = inst;
	assert_int_equal(op->reference(inst), 0);
	assert_int_equal(op->run_cpu(inst), 0);
	assert_true(op->max_error(inst) <= op->tol);
	/* a different token at the last node: a prefix the reference did not pick */
	in->out.token[in->out.n - 1] = (in->out.token[in->out.n - 1] + 1) % in->V;
	in->out.logp[in->out.n - 1] -= 1.0f;
	assert_true(op->max_error(inst) > op->tol);
	op->poison(inst);
	assert_int_equal(op->run_cpu(inst), 0);
	in->out.mask[in->mask_words * 3] ^= 1u << 30; /* a stray mask bit */
	assert_true(op->max_error(inst) > op->tol);
	op->teardown(inst);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_build__heap_matches_brute_force),
		cmocka_unit_test(test_tree_build__sort_build_matches_the_heap),
		cmocka_unit_test(test_tree_build__sort_build_refuses_unsorted_rows),
		cmocka_unit_test(test_tree_build__sort_read_matches_the_heap),
		cmocka_unit_test(test_tree_build__exhausted_tree_stops_early),
		cmocka_unit_test(test_tree_build__op_matches_brute_force),
		cmocka_unit_test(test_tree_build__topk_takes_smaller_id_on_ties),
		cmocka_unit_test(test_tree_build__logsumexp_holds_over_a_full_vocabulary),
		cmocka_unit_test(test_tree_build__wrong_tree_fails_validation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
