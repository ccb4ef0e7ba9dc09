/* tree_build.h - the DDTree from drafter logits: top-K per position, log-softmax, best-first heap. */
#ifndef DDT_OPS_TREE_BUILD_H
#define DDT_OPS_TREE_BUILD_H

#include <stdint.h>

/*
 * What it computes ([ddtree-2604.12989]):
 *
 * 1. For each position d < L: the K = min(B, V) largest logits (ties: smaller
 *    token id first) and lse[d] = logsumexp over all V logits in float32 with
 *    the maximum subtracted first; logp of rank r = logit - lse[d].
 * 2. A best-first max-heap on the summed log-prob of a prefix. Node 0 is the
 *    root (depth 0, token root_token, logp 0, parent -1). Start with
 *    (depth 1, rank 0) under the root. Each pop becomes the next node and
 *    records its parent; it pushes its next sibling (same parent, rank + 1,
 *    when rank + 1 < K) and its first child (depth + 1, rank 0, when
 *    depth < L). Stop after B pops or when the heap is empty. Ties: the
 *    smaller rank tuple (ranks from depth 1 down, compared in order) first.
 * 3. The ancestor mask: row i = row parent(i) plus bit i; row 0 = bit 0.
 *
 * Nodes come out parents first, in non-increasing prefix log-prob.
 */
struct tree_build_out {
	int32_t n;        /* nodes written, root included: 1 + B unless the tree is exhausted */
	int32_t *parent;  /* [1+B] parent node index; -1 for the root */
	int32_t *depth;   /* [1+B] 0 for the root; the node's position is depth - 1 */
	int32_t *rank;    /* [1+B] rank within its position's top-K; 0 for the root */
	int32_t *token;   /* [1+B] vocabulary id; root_token for the root */
	float *logp;      /* [1+B] prefix log-prob (sum over the path); 0 for the root */
	uint32_t *mask;   /* [1+B][mask_words] bit j of row i (word j/32, bit j%32) set when j is i or its ancestor */
};

struct tree_build_inst {
	/* sizes */
	int L;            /* drafted positions: block size b - 1 */
	int V;            /* vocabulary (163840) */
	int B;            /* node budget, root excluded */
	int K;            /* top-K per position: min(B, V) */
	int mask_words;   /* (1 + B + 31) / 32 */

	/* inputs */
	float *logits;    /* [L][V] fp32 drafter logits */
	int32_t root_token; /* the last bonus token */

	/* outputs: out by the op under test, ref by the C reference */
	struct tree_build_out out;
	struct tree_build_out ref;
};

#endif
