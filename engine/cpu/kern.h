/* kern.h - the CPU fast paths' inner loops: INT4 and bf16 rows dotted with a few activation vectors at once, on the best instruction set the build targets. */
#ifndef DDT_KERN_H
#define DDT_KERN_H

#include <stddef.h>
#include <stdint.h>

#include "ops/bf16.h"

/*
 * Three implementations behind one interface, picked at compile time
 * (the build uses -march=native):
 *
 *   avx512bf16  AVX-512 BW/VL + BF16: activations stay bf16, nibbles become
 *               bf16 by a table lookup, vdpbf16ps does the products;
 *   avx2        AVX2 + FMA: activations in fp32, nibbles widened to fp32,
 *               the zero point folded into per-chunk correction terms;
 *   scalar      plain C, any CPU.
 *
 * KERN_ISA names the one built. The INT4 kernels read x in their own order,
 * kern_q4_pos: callers store x[k] at x[kern_q4_pos(k, K)] (kern_q4_order
 * does a whole vector).
 */
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define KERN_ISA_AVX512BF16 1
#define KERN_ISA "avx512bf16"
typedef bf16_t kern_act_t;
#elif defined(__AVX2__) && defined(__FMA__)
#define KERN_ISA_AVX2 1
#define KERN_ISA "avx2"
typedef float kern_act_t;
#else
#define KERN_ISA "scalar"
typedef float kern_act_t;
#endif

/* Up to this many vectors share one pass over a weight row: the row is
 * dequantized once per block, in registers, and never written out. */
#define KERN_BLOCK 4

/* Up to this many vectors share one pass over a bf16 row (AVX-512): with two
 * rows at a time, 16 accumulators stay in registers and each x load serves
 * both rows. */
#define KERN_BF16_BLOCK 8

/* Longest row the INT4 kernels take: their per-chunk scales sit on the stack. */
#define KERN_Q4_MAX_K 32768

/* Longest row kern_q4_rows4 takes: beyond it four rows and x no longer fit in
 * L1 and one row at a time is faster. */
#define KERN_Q4_ROWS4_MAX_K 1024

/* One activation vector as the kernels read it: x (kernel order for the
 * INT4 kernels, natural order for the bf16 ones) and, for the INT4 kernels,
 * kern_q4_prepare's terms of x (K/4 floats; only the avx2 kernel reads them). */
struct kern_vec {
	const kern_act_t *x;
	const float *xc;
};

/* An activation as the kernels store it; both round to bf16 first, as the
 * model's activations are bf16 between the GEMMs. */
static inline kern_act_t kern_act_from_float(float f)
{
#ifdef KERN_ISA_AVX512BF16
	return bf16_from_float(f);
#else
	return bf16_round(f);
#endif
}

static inline kern_act_t kern_act_from_bf16(bf16_t h)
{
#ifdef KERN_ISA_AVX512BF16
	return h;
#else
	return bf16_to_float(h);
#endif
}

/* The correction terms of x[K] (kernel order) for the avx2 INT4 kernel:
 * xc[c][8], per chunk c of 32, lanes summing to 8 x (the sum of the chunk's
 * x), so that sum (q - 8) x = sum q x - sum xc needs no per-weight subtract.
 * The other kernels subtract the zero point themselves and read no terms;
 * this then writes nothing. */
static inline void kern_q4_prepare(const kern_act_t *x, int K, float *xc)
{
#ifdef KERN_ISA_AVX2
	for (int c = 0; c < K / 32; c++)
		for (int l = 0; l < 8; l++) {
			const float *p = x + 32 * c + l;
			xc[8 * c + l] = 8.0f * (p[0] + p[8] + p[16] + p[24]);
		}
#else
	(void)x, (void)K, (void)xc;
#endif
}

#ifndef KERN_ISA_AVX512BF16
/* Where weight k of a K-long row meets x in the INT4 kernels' x vectors:
 * within each 32 consecutive k, the even k then the odd k (the low nibbles,
 * then the high nibbles of the chunk's 16 bytes). */
static inline int kern_q4_pos(int k, int K)
{
	(void)K;
	return (k & ~31) + (k & 1) * 16 + ((k & 31) >> 1);
}

/* x[K] (bf16, natural order) as the INT4 kernels read it:
 * xq[kern_q4_pos(k, K)] = x[k]. */
static inline void kern_q4_order(const bf16_t *x, int K, kern_act_t *xq)
{
	for (int k = 0; k < K; k++)
		xq[kern_q4_pos(k, K)] = kern_act_from_bf16(x[k]);
}
#endif

#if defined(KERN_ISA_AVX512BF16)
#include "cpu/kern_avx512.h"
#elif defined(KERN_ISA_AVX2)
#include "cpu/kern_avx2.h"
#else

static inline float kern_act_float(kern_act_t a)
{
	return a;
}

/* dots[t] = sum over k < K of (q(k) - 8) * scales[k / group] * x[t][p(k)] for
 * t < nt, where q(k) is nibble k of row (low nibble first) and p(k) is
 * kern_q4_pos(k, K). K and group are multiples of 32 and K <= KERN_Q4_MAX_K. */
static inline void kern_q4_dots(const uint8_t *row, const bf16_t *scales, int K, int group,
				const struct kern_vec *v, int nt, float *dots)
{
	for (int t = 0; t < nt; t++) {
		float acc = 0;
		for (int g0 = 0; g0 < K; g0 += group) {
			float gs = 0;
			for (int k = g0; k < g0 + group; k++) {
				int q = k & 1 ? row[k / 2] >> 4 : row[k / 2] & 15;
				gs += (float)(q - 8) * kern_act_float(v[t].x[kern_q4_pos(k, K)]);
			}
			acc += gs * bf16_to_float(scales[g0 / group]);
		}
		dots[t] = acc;
	}
}

/* kern_q4_dots of two rows of the same K and group (ra with scales sa into
 * da, rb with sb into db) against the same nt vectors, sharing the x loads. */
static inline void kern_q4_dots2(const uint8_t *ra, const bf16_t *sa, const uint8_t *rb,
				 const bf16_t *sb, int K, int group, const struct kern_vec *v,
				 int nt, float *da, float *db)
{
	kern_q4_dots(ra, sa, K, group, v, nt, da);
	kern_q4_dots(rb, sb, K, group, v, nt, db);
}

/* Four consecutive INT4 rows against nt vectors, for short rows (the down
 * projection's K is the per-GPU intermediate, 256 at TP-8), where the
 * per-row costs rival the dot itself: dots[t * 4 + r] = row r's
 * kern_q4_dots with v[t] (a token's four results side by side, as its
 * output row holds them). Rows are rowb bytes apart, their scales srow
 * apart; K <= KERN_Q4_ROWS4_MAX_K. */
static inline void kern_q4_rows4(const uint8_t *row, size_t rowb, const bf16_t *scales,
				 size_t srow, int K, int group, const struct kern_vec *v, int nt,
				 float *dots)
{
	for (int r = 0; r < 4; r++)
		for (int t = 0; t < nt; t++)
			kern_q4_dots(row + r * rowb, scales + r * srow, K, group, v + t, 1,
				     dots + t * 4 + r);
}

/* dots[t] = sum over k < K of row[k] * x[t][k], natural order. */
static inline void kern_bf16_dots(const bf16_t *row, int K, const struct kern_vec *v, int nt,
				  float *dots)
{
	for (int t = 0; t < nt; t++) {
		float acc = 0;
		for (int k = 0; k < K; k++)
			acc += bf16_to_float(row[k]) * kern_act_float(v[t].x[k]);
		dots[t] = acc;
	}
}
#endif

#ifndef KERN_ISA_AVX512BF16
/* kern_bf16_dots of two rows against the same nt vectors (AVX-512 shares
 * the x loads; elsewhere one row after the other). */
static inline void kern_bf16_dots2(const bf16_t *ra, const bf16_t *rb, int K,
				   const struct kern_vec *v, int nt, float *da, float *db)
{
	kern_bf16_dots(ra, K, v, nt, da);
	kern_bf16_dots(rb, K, v, nt, db);
}
#endif

#endif
