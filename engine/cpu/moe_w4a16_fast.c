/* moe_w4a16_fast.c - the CPU fast path of moe_w4a16: tokens gathered per expert, each touched expert's INT4 rows streamed once, dequantized in registers, on the pool's threads. */
#include "cpu/moe_w4a16_cpu.h"

#include "cpu/cpu.h"
#include "cpu/kern.h"
#include "err.h"

#include <math.h>
#include <string.h>

/* Napkin math: at small M each touched expert sees one or two tokens, so a
 * run is one pass over the touched experts' bytes; the dequantization must
 * keep up with memory, which is why it happens in registers and is shared by
 * a block of up to KERN_BLOCK tokens. */

/* Counting sort of the (token, slot) assignments by local expert; x into
 * both layouts the kernels read (kern_act_t: bf16 or fp32 by instruction set). */
static void moe_gather(struct moe_cpu *c)
{
	struct moe_w4a16_inst *in = &c->in;
	int E = in->experts, H = in->hidden;
	size_t MK = (size_t)in->M * in->topk;

	memset(c->first, 0, (size_t)(E + 1) * sizeof *c->first);
	for (size_t i = 0; i < MK; i++)
		if (in->topk_ids[i] >= 0)
			c->first[in->topk_ids[i] + 1]++;
	c->ntouched = 0;
	for (int e = 0; e < E; e++) {
		if (c->first[e + 1])
			c->touched[c->ntouched++] = e;
		c->first[e + 1] += c->first[e];
		c->fill[e] = c->first[e];
	}
	for (size_t i = 0; i < MK; i++) {
		int e = in->topk_ids[i];
		if (e < 0)
			continue;
		int a = c->fill[e]++;
		c->tok[a] = (int32_t)(i / (size_t)in->topk);
		c->tw[a] = in->topk_w[i];
	}
	for (int m = 0; m < in->M; m++) {
		const bf16_t *x = in->x + (size_t)m * H;
		for (int k = 0; k < H; k++)
			c->xn[(size_t)m * H + k] = kern_act_from_bf16(x[k]);
		kern_q4_order(x, H, c->xq + (size_t)m * H);
		kern_q4_prepare(c->xq + (size_t)m * H, H, c->xqc + (size_t)m * H / 4);
	}
}

static inline float moe_silu(float g)
{
	return g / (1.0f + expf(-g));
}

/* Phase 1, one thread's rows of gate and up for every touched expert (and
 * the shared expert): h = bf16(SiLU(g) * u), stored in the order phase 2's
 * kernel reads it. A gate row and its up row go together: each x load
 * serves both, and the two regions streaming side by side keep more reads
 * in flight than one region at a time (measured: gate rows first, then up
 * rows, ran 10-25% slower). */
static void moe_phase1(void *ctx, int tid, int nthreads)
{
	struct moe_cpu *c = ctx;
	struct moe_w4a16_inst *in = &c->in;
	int H = in->hidden, I = in->inter, G = in->group, SI = in->shared_inter;
	size_t lo, hi, rowb = (size_t)H / 2, rows = (size_t)H / G;
	struct kern_vec xs[KERN_BLOCK];
	float g[KERN_BLOCK], u[KERN_BLOCK];

	/* whole chunks of 32 rows per thread: each thread then owns the chunks'
	 * correction terms of h too */
	cpu_split((size_t)I, 32, tid, nthreads, &lo, &hi);
	for (int i = 0; i < c->ntouched; i++) {
		int e = c->touched[i], a0 = c->first[e], n = c->first[e + 1] - a0;
		const uint8_t *w = in->w13 + (size_t)e * 2 * I * rowb;
		const bf16_t *s = in->s13 + (size_t)e * 2 * I * rows;
		/* rows outside, token blocks inside: a row comes from memory once and
		 * from L1 for the later blocks */
		for (size_t r = lo; r < hi; r++)
			for (int t0 = 0; t0 < n; t0 += KERN_BLOCK) {
				int nt = n - t0 < KERN_BLOCK ? n - t0 : KERN_BLOCK;
				for (int t = 0; t < nt; t++) {
					size_t m = (size_t)c->tok[a0 + t0 + t];
					xs[t] = (struct kern_vec){c->xq + m * H, c->xqc + m * H / 4};
				}
				kern_q4_dots2(w + r * rowb, s + r * rows, w + (I + r) * rowb,
					      s + (I + r) * rows, H, G, xs, nt, g, u);
				for (int t = 0; t < nt; t++)
					c->h[(size_t)(a0 + t0 + t) * I + kern_q4_pos((int)r, I)] =
						kern_act_from_float(moe_silu(g[t]) * u[t]);
			}
		for (int a = a0; a < a0 + n; a++)
			kern_q4_prepare(c->h + (size_t)a * I + lo, (int)(hi - lo),
					c->hc + ((size_t)a * I + lo) / 4);
	}
	if (!SI)
		return;
	/* the shared expert: a gate row and its up row per call, as above */
	struct kern_vec xn[KERN_BF16_BLOCK];
	float gs[KERN_BF16_BLOCK], us[KERN_BF16_BLOCK];
	cpu_split((size_t)SI, 1, tid, nthreads, &lo, &hi);
	for (size_t r = lo; r < hi; r++)
		for (int t0 = 0; t0 < in->M; t0 += KERN_BF16_BLOCK) {
			int nt = in->M - t0 < KERN_BF16_BLOCK ? in->M - t0 : KERN_BF16_BLOCK;
			for (int t = 0; t < nt; t++)
				xn[t] = (struct kern_vec){c->xn + (size_t)(t0 + t) * H, NULL};
			kern_bf16_dots2(in->sh_w13 + r * H, in->sh_w13 + (SI + r) * H, H, xn, nt, gs,
					us);
			for (int t = 0; t < nt; t++)
				c->hsh[(size_t)(t0 + t) * SI + r] =
					kern_act_from_float(moe_silu(gs[t]) * us[t]);
		}
}

/* Up to four rows (nr) a pair at a time, an odd last row alone, into
 * d[t * 4 + r] as kern_q4_rows4 leaves them: for rows too long for it. */
static void moe_rows_pairs(const uint8_t *w, size_t rowb, const bf16_t *s, size_t rows, int nr,
			   int K, int G, const struct kern_vec *hs, int nt, float *d)
{
	float d0[KERN_BLOCK], d1[KERN_BLOCK];
	for (int r = 0; r < nr; r += 2) {
		if (r + 1 < nr)
			kern_q4_dots2(w + r * rowb, s + r * rows, w + (r + 1) * rowb,
				      s + (r + 1) * rows, K, G, hs, nt, d0, d1);
		else
			kern_q4_dots(w + r * rowb, s + r * rows, K, G, hs, nt, d0);
		for (int t = 0; t < nt; t++) {
			d[t * 4 + r] = d0[t];
			if (r + 1 < nr)
				d[t * 4 + r + 1] = d1[t];
		}
	}
}

/* Phase 2, one thread's output rows: it owns out[*][lo, hi), so the experts'
 * contributions add up without atomics. */
static void moe_phase2(void *ctx, int tid, int nthreads)
{
	struct moe_cpu *c = ctx;
	struct moe_w4a16_inst *in = &c->in;
	int H = in->hidden, I = in->inter, G = in->group, SI = in->shared_inter;
	size_t lo, hi, rowb = (size_t)I / 2, rows = (size_t)I / G;
	struct kern_vec hs[KERN_BLOCK];
	float d[4 * KERN_BLOCK];

	cpu_split((size_t)H, 16, tid, nthreads, &lo, &hi); /* 16 floats: whole cache lines */
	for (int m = 0; m < in->M; m++)
		memset(in->out + (size_t)m * H + lo, 0, (hi - lo) * sizeof *in->out);
	for (int i = 0; i < c->ntouched; i++) {
		int e = c->touched[i], a0 = c->first[e], n = c->first[e + 1] - a0;
		const uint8_t *w = in->w2 + (size_t)e * H * rowb;
		const bf16_t *s = in->s2 + (size_t)e * H * rows;
		/* rows outside, token blocks inside, as in phase 1; four short rows
		 * at a time share the h loads and one set of reductions */
		size_t step = I <= KERN_Q4_ROWS4_MAX_K ? 4 : 2;
		for (size_t o = lo; o < hi; o += step)
			for (int t0 = 0; t0 < n; t0 += KERN_BLOCK) {
				int nt = n - t0 < KERN_BLOCK ? n - t0 : KERN_BLOCK;
				int nr = hi - o < step ? (int)(hi - o) : (int)step;
				for (int t = 0; t < nt; t++) {
					size_t a = (size_t)(a0 + t0 + t);
					hs[t] = (struct kern_vec){c->h + a * I, c->hc + a * I / 4};
				}
				if (nr == 4) /* d[t * 4 + r] */
					kern_q4_rows4(w + o * rowb, rowb, s + o * rows, rows, I, G, hs, nt,
						      d);
				else
					moe_rows_pairs(w + o * rowb, rowb, s + o * rows, rows, nr, I, G,
						       hs, nt, d);
				for (int t = 0; t < nt; t++) {
					int a = a0 + t0 + t;
					float *out = in->out + (size_t)c->tok[a] * H + o, wt = c->tw[a];
					for (int r = 0; r < nr; r++)
						out[r] += wt * d[t * 4 + r];
				}
			}
	}
	for (size_t o = lo; SI && o < hi; o++)
		for (int t0 = 0; t0 < in->M; t0 += KERN_BLOCK) {
			int nt = in->M - t0 < KERN_BLOCK ? in->M - t0 : KERN_BLOCK;
			for (int t = 0; t < nt; t++)
				hs[t] = (struct kern_vec){c->hsh + (size_t)(t0 + t) * SI, NULL};
			kern_bf16_dots(in->sh_w2 + o * SI, SI, hs, nt, d);
			for (int t = 0; t < nt; t++)
				in->out[(size_t)(t0 + t) * H + o] += d[t];
		}
}

int moe_w4a16_run_cpu(void *inst)
{
	struct moe_cpu *c = inst;
	struct moe_w4a16_inst *in = &c->in;

#ifdef __AVX2__
	if (in->hidden % 32 || in->inter % 32 || in->group % 32 || in->hidden > KERN_Q4_MAX_K ||
	    in->inter > KERN_Q4_MAX_K)
		return err_set(DDT_EINPUT, "moe_w4a16 CPU path: hidden %d, inter %d and group %d "
			       "must be multiples of 32 (and K at most %d)", in->hidden, in->inter,
			       in->group, KERN_Q4_MAX_K);
#else
	if (in->hidden % 32 || in->inter % 32)
		return err_set(DDT_EINPUT, "moe_w4a16 CPU path: hidden %d and inter %d must be "
			       "multiples of 32", in->hidden, in->inter);
#endif
	moe_gather(c);
	cpu_parallel(moe_phase1, c);
	cpu_parallel(moe_phase2, c);
	return 0;
}
