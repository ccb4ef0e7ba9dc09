/* accept.h - the greedy acceptance walk over a verified tree and compaction of the accepted KV rows. */
#ifndef DDT_OPS_ACCEPT_H
#define DDT_OPS_ACCEPT_H

#include <stdint.h>

#include "ops/bf16.h"

/*
 * What it computes ([ddtree-2604.12989]):
 *
 *   node = 0 (the root); path[0] = 0
 *   loop: want = target[node]; if some child c of node has token[c] == want,
 *         append c to path and continue from c; else stop with bonus = want.
 *   len = nodes on the path (root included, at most L + 1).
 *   kv_out[l][i] = kv_tree[l][path[i]] for every layer l and i < len: the
 *   accepted rows, compacted in path order (the cache keeps only these).
 *
 * Sibling tokens are distinct (tree_build guarantees it), so the walk is
 * deterministic. Parents come before children: parent[i] < i.
 */
struct accept_out {
	int32_t len;      /* accepted nodes, root included */
	int32_t bonus;    /* the target's token after the last accepted node */
	int32_t *path;    /* [L+1] node indices; entries >= len are -1 */
	bf16_t *kv;       /* [layers][L+1][row] bf16 compacted rows; rows >= len untouched */
};

struct accept_inst {
	/* sizes */
	int n;            /* tree nodes, root included: 1 + B */
	int L;            /* deepest depth */
	int layers;       /* KV cache layers on this GPU */
	int row;          /* elements per KV row (kv_lora 512 + rope 64) */

	/* inputs */
	int32_t *parent;  /* [n] parent index; -1 for the root */
	int32_t *token;   /* [n] drafted token of each node */
	int32_t *target;  /* [n] the target model's greedy token after each node */
	bf16_t *kv_tree;  /* [layers][n][row] bf16 KV rows the verify pass wrote for the tree */

	/* outputs: out by the op under test, ref by the C reference */
	struct accept_out out;
	struct accept_out ref;
};

#endif
