/* dense_gemv.h - bf16 dense projection at small M (drafter layers, lm_head). */
#ifndef DDT_OPS_DENSE_GEMV_H
#define DDT_OPS_DENSE_GEMV_H

#include <stdint.h>

#include "ops/bf16.h"

/*
 * out[m][n] = sum_k x[m][k] * w[n][k], fp32 accumulation.
 */
struct dense_gemv_inst {
	/* sizes */
	int M;            /* tokens */
	int K;            /* input features */
	int N;            /* output features */

	/* inputs */
	bf16_t *x;        /* [M][K] bf16 */
	bf16_t *w;        /* [N][K] bf16 (row n is output feature n) */

	/* outputs */
	float *out;       /* [M][N] fp32: written by the op under test */
	float *ref;       /* [M][N] fp32: written by the C reference */

	uint64_t seed;    /* the inputs' seed (setup_from keeps w for it) */
};

#endif
