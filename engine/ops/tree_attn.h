/* tree_attn.h - tree-verify attention, MLA absorbed form: 1+B queries over ctx past tokens plus the tree. */
#ifndef DDT_OPS_TREE_ATTN_H
#define DDT_OPS_TREE_ATTN_H

#include <stdint.h>

#include "ops/bf16.h"

/*
 * What it computes, for every tree token t < T and head h < heads (fp32):
 *
 *   s[j] = scale * (q[t][h][0:d_lat] . kv[j][0:d_lat] + q[t][h][d_lat:] . kv[j][d_lat:])
 *          for every visible row j: all past rows j < ctx, and tree rows
 *          j = ctx + i where bit i of mask row t is set (t itself and its ancestors)
 *   p = softmax(s)  (maximum subtracted first)
 *   out[t][h][:] = sum_j p[j] * kv[j][0:d_lat]   (the latent is also V)
 *
 * MLA absorbed: W_UK is folded into q and W_UV is applied after, so every
 * head reads the same latent row of d_lat (kv_lora_rank 512) plus the shared
 * rope key of d_rope (64). Kimi: heads = 64 / TP on one GPU,
 * scale = 1 / sqrt(qk_nope + qk_rope) = 1 / sqrt(192).
 */
struct tree_attn_inst {
	/* sizes */
	int T;            /* tree tokens: 1 + B */
	int ctx;          /* past context tokens */
	int heads;        /* query heads on this GPU */
	int d_lat;        /* latent width (512) */
	int d_rope;       /* rope width (64) */
	int mask_words;   /* (T + 31) / 32 */
	float scale;      /* softmax scale */

	/* inputs */
	bf16_t *q;        /* [T][heads][d_lat + d_rope] bf16: absorbed latent query, then rope query */
	bf16_t *kv;       /* [ctx + T][d_lat + d_rope] bf16: latent, then rope key; rows ctx.. are the tree's */
	uint32_t *mask;   /* [T][mask_words] ancestor mask over tree rows (as tree_build writes it) */

	/* outputs */
	float *out;       /* [T][heads][d_lat] fp32: written by the op under test */
	float *ref;       /* [T][heads][d_lat] fp32: written by the C reference */
};

#endif
