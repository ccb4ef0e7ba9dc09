/* moe_w4a16.h - one MoE layer at verify width M on one GPU: INT4 routed experts, bf16 shared expert. */
#ifndef DDT_OPS_MOE_W4A16_H
#define DDT_OPS_MOE_W4A16_H

#include <stdint.h>

#include "ops/bf16.h"

/*
 * What it computes, per token m (fp32 accumulation throughout):
 *
 *   for each slot j < topk with e = topk_ids[m][j] >= 0:
 *       g = W_gate[e] . x[m]          (inter rows of w13[e], then its scales)
 *       u = W_up[e]   . x[m]          (the next inter rows of w13[e])
 *       h = bf16_round(silu(g) * u)   (activations are bf16 between the GEMMs)
 *       out[m] += topk_w[m][j] * (W_down[e] . h)
 *   and, when shared_inter > 0, the same with the bf16 shared expert at weight 1.
 *
 * silu(g) = g / (1 + exp(-g)). out is this GPU's partial sum, the input of the
 * TP all-reduce; it stays fp32 so validation sees the accumulation and not
 * the final rounding.
 *
 * INT4 weights: row-major, two weights per byte along the input (K) dimension:
 * byte i of a row holds k = 2i in its low nibble and k = 2i+1 in its high
 * nibble; a nibble q means the value (q - 8) * scale (symmetric, zero point 8).
 * Scales: one bf16 per group of `group` consecutive k of a row.
 *
 * Sharding: under TP-N each GPU holds every expert with inter = moe_inter / N
 * rows of gate and up (and columns of down); under EP-N it holds experts / N
 * whole experts and topk_ids names local experts, -1 for a slot routed to an
 * expert on another GPU.
 */
struct moe_w4a16_inst {
	/* sizes (this GPU's) */
	int M;            /* tokens: the verify width C x (B+1) */
	int hidden;       /* 7168 (multiple of group) */
	int inter;        /* rows of gate and of up per expert on this GPU (multiple of group) */
	int experts;      /* routed experts held on this GPU */
	int topk;         /* experts per token (8) */
	int group;        /* quantization group along K (32) */
	int shared_inter; /* shared expert rows on this GPU; 0 = no shared expert */

	/* inputs */
	bf16_t *x;         /* [M][hidden] bf16 activations */
	int32_t *topk_ids; /* [M][topk] local expert index, or -1 (not on this GPU) */
	float *topk_w;     /* [M][topk] routing weights */
	uint8_t *w13;      /* [experts][2*inter][hidden/2] int4: gate rows, then up rows */
	bf16_t *s13;       /* [experts][2*inter][hidden/group] bf16 scales */
	uint8_t *w2;       /* [experts][hidden][inter/2] int4 down projection */
	bf16_t *s2;        /* [experts][hidden][inter/group] bf16 scales */
	bf16_t *sh_w13;    /* [2*shared_inter][hidden] bf16: gate rows, then up rows (NULL when none) */
	bf16_t *sh_w2;     /* [hidden][shared_inter] bf16 (NULL when none) */

	/* outputs */
	float *out;        /* [M][hidden] fp32: written by the op under test */
	float *ref;        /* [M][hidden] fp32: written by the C reference */
};

#endif
