/* opkit.h - what every op's C side shares: params with defaults, seeded fills, poison, normalized error. */
#ifndef DDT_OPKIT_H
#define DDT_OPKIT_H

#include <stddef.h>
#include <stdint.h>

#include "op.h"
#include "ops/bf16.h"
#include "rng.h"

/* p's value of key, else the op's default for it (NaN when the op does not
 * declare key: a programming error the caller's range check then rejects). */
double opkit_param(const struct op_desc *op, const struct op_params *p, const char *key);

/* Reads key as an integer in [lo, hi] into *out; returns 0 or DDT_EINPUT
 * naming the op and key. */
int opkit_int(const struct op_desc *op, const struct op_params *p, const char *key, long lo,
	      long hi, int *out);
/* Same for a real number in [lo, hi]. */
int opkit_num(const struct op_desc *op, const struct op_params *p, const char *key, double lo,
	      double hi, double *out);

/* Seeded fills: uniform in [lo, hi), rounded to bf16 where stored as bf16.
 * Each takes one draw from r and fills n elements from it alone, the same
 * for every thread count; a megabyte or more is drawn on the pool, so a
 * fill must not be called from inside a cpu_parallel job. */
void opkit_fill_bf16(bf16_t *dst, size_t n, struct rng *r, float lo, float hi);
void opkit_fill_f32(float *dst, size_t n, struct rng *r, float lo, float hi);
/* Random bytes. */
void opkit_fill_bytes(uint8_t *dst, size_t n, struct rng *r);
/* Bytes the three fills above have drawn in this process: what a sweep
 * that keeps its weights saves shows here. */
unsigned long long opkit_drawn_bytes(void);

/* NaN into every element (bf16 NaN for bf16 buffers). */
void opkit_poison_f32(float *p, size_t n);
void opkit_poison_bf16(bf16_t *p, size_t n);

/* max_i |out_i - ref_i| / rms(ref): the largest error relative to the
 * output's typical size, so one tolerance fits every shape. NaN or Inf in out
 * (or a NaN ref) gives +Inf; an all-zero ref normalizes by 1. */
double opkit_max_err_f32(const float *out, const float *ref, size_t n);

/* opkit_max_err_f32 over some rows of an output of total floats: row r's
 * width elements at r * row_stride + i * elem_stride, for each r of
 * rows[0..n), normalized by the rms of those rows' ref; +Inf when any of
 * the total elements of out is not finite (an element left poisoned). */
double opkit_max_err_rows_f32(const float *out, const float *ref, size_t total, size_t width,
			      size_t row_stride, size_t elem_stride, const size_t *rows, size_t n);

/* Item i of a row list: rows[i], or i itself when rows is NULL (every row). */
static inline size_t opkit_row_at(const size_t *rows, size_t i)
{
	return rows ? rows[i] : i;
}

/* A random tree of n nodes, parents first: parent[0] = -1, depth[0] = 0,
 * and for i > 0 a uniformly drawn earlier node of depth < L as the parent
 * (L >= 1); depth[n] receives the depths. */
void opkit_random_tree(int32_t *parent, int32_t *depth, int n, int L, struct rng *r);

/* The seed of a named input stream derived from the op's seed, so inputs do
 * not shift when another input changes size. */
uint64_t opkit_subseed(uint64_t seed, const char *stream);

#endif
