/* tree.h - tree_build's parts, exposed so tests and benchmarks can check and time each stage alone. */
#ifndef DDT_TREE_H
#define DDT_TREE_H

#include <stdint.h>

#include "op.h"
#include "ops/tree_build.h"

/* Stage 1 for one position, fast path: the K largest of logits[V] (ties:
 * smaller id first) sorted best first into tok[K] and logp[K] = logit -
 * logsumexp(logits), the logsumexp in float32 after subtracting the maximum.
 * scratch holds tree_topk_scratch_len(K) entries. K <= V. */
void tree_topk_lse(const float *logits, int V, int K, float *logp, int32_t *tok,
		   void *scratch);
int tree_topk_scratch_len(int K);
/* Bytes of one scratch entry. */
#define TREE_TOPK_ENTRY 8

/* Stage 2, the best-first heap over per-position top-K lists logp[L][K] and
 * tok[L][K] (each sorted best first): fills out (n, parent, depth, rank,
 * token, logp, mask rows) per [ddtree-2604.12989] (calibration/SOURCES.md). heap holds 2 * B + 2
 * entries of TREE_HEAP_ENTRY bytes. Cannot fail. */
#define TREE_HEAP_ENTRY 16
void tree_heap_build(const float *logp, const int32_t *tok, int L, int K, int B,
		     int32_t root_token, int mask_words, void *heap, struct tree_build_out *out);

/* Stage 2 without a heap, for trees whose K + K^2 + ... + K^L prefixes are
 * at most tree_sort_cap(B): the same n, parent, depth, rank, token and logp
 * as tree_heap_build, node for node (mask is not written). scratch holds
 * tree_sort_scratch_bytes(L, K, B) bytes (0: too many prefixes), 8-byte
 * aligned. Returns 0, or -1 (nothing written) when the tree is too large or
 * a row is not sorted best first with every entry at most 0: then only the
 * heap gives its order. */
int tree_sort_build(const float *logp, const int32_t *tok, int L, int K, int B,
		    int32_t root_token, void *scratch, struct tree_build_out *out);
size_t tree_sort_scratch_bytes(int L, int K, int B);

/* What a replay reads of the tree at budget B without building it: in,
 * budgets[nbudgets] (rising) and nq prefixes (qdepth[q] ranks at
 * qrank[q L ..]); out, mass[j] = the summed exp of the log-probs of nodes
 * 1 .. budgets[j] (added in node order, as from tree_sort_build's out),
 * qpos[q] = the prefix's node index (0: not in the tree), n = the tree's
 * nodes, bth = the last node's log-prob and kept = the prefixes made. */
struct tree_sort_ask {
	int nbudgets;
	const int *budgets;
	double *mass;
	int nq;
	const int *qdepth;
	const int32_t *qrank;
	int32_t *qpos;
	int n;
	float bth;
	long kept; /* the prefixes made */
};

/* Reads ask from the tree tree_sort_build would build (the same scratch),
 * making only the prefixes at or above cut (a log-prob; >= 0: all).
 * Returns 0, 1 when fewer than B prefixes are at or above the cut (call
 * again with a lower one), or -1 as tree_sort_build. */
int tree_sort_read(const float *logp, int L, int K, int B, float cut, struct tree_sort_ask *ask,
		   void *scratch);
long tree_sort_cap(int B);

/* Whether candidate (parent pa, rank ra) comes before (pb, rb), both with
 * the same prefix log-prob, under the tie rule: the smaller rank tuple from
 * depth 1 down. Nodes' ranks and parents come from out. */
int tree_tie_before(const struct tree_build_out *out, int pa, int ra, int pb, int rb);

extern const struct op_desc op_tree_build;

/* The instance's fast-path scratch sits behind it (see tree_build.c). */
int tree_build_run_cpu(void *inst);

#endif
