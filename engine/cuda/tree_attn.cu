/* tree_attn.cu - tree-verify attention, MLA absorbed, on tensor cores: flash-decoding split over the context, ancestor mask on the tree rows.
 *
 * What it computes: engine/ops/tree_attn.h (every head of every tree token
 * reads the one shared latent cache: K = [latent | rope], V = latent).
 *
 * How:
 *   ta_main, grid (row groups of 32 query rows, context splits), 8 warps.
 *   Query rows are (token, head) pairs; one CTA streams its split of the
 *   cache through shared memory in chunks of 32 rows (cp.async, two stages)
 *   and serves all 32 query rows from each chunk, so the cache is read from
 *   HBM once and from L2 once per row group. Per chunk:
 *     QK: S = Q K^T with m16n8k16 mma; warp (row tile, quarter of the 576
 *         dims) keeps its Q fragments in registers for the whole split;
 *         the four quarter partials meet in shared memory.
 *     softmax: 8 threads per row: mask (past rows all visible, tree rows by
 *         the ancestor mask), online max and sum in the log2 domain, P as
 *         fp16 in shared memory.
 *     PV: O += P V with mma; warp (row tile, quarter of the 512 latent
 *         dims) holds 16 x 128 fp32 accumulators.
 *   With one split the CTA normalizes and writes out; otherwise it writes
 *   (O, max, sum) and ta_combine merges the splits.
 *
 * Number format: setup converts q and the cache from bf16 to fp16, each
 * scaled by a power of two (exact) that puts its largest magnitude in
 * [128, 256); every bf16 value down to 2^-22 of that maximum is exact in
 * fp16 (smaller ones become fp16 subnormals), and P (in
 * [0, 1]) keeps 11 bits instead of bf16's 8, which holds the error near 1e-3
 * of the output rms instead of ~5e-3. The scales come back out in fp32.
 *
 * Napkin math (Kimi K2.x TP-8: 8 heads, 576/512 dims, ctx 16384):
 *   bytes: (ctx + T) x 576 x 2 B = 18.9 MB -> 4.4 us at 4.25 TB/s.
 *   flops: rows x keys x (576 + 512) x 2; rows = 8 (B+1):
 *     B = 8  (72 rows):  2.6 GFLOP -> ~3 us of dense bf16/fp16 tensor time
 *     B = 32 (264 rows): 9.4 GFLOP -> ~10 us at 989 TFLOP/s, ~16 us at the
 *     ~600 TFLOP/s mma.sync reaches: compute bound above ~70 query rows, so
 *     the 70%-of-copy target is reachable only at small B.
 */
#include "common.cuh"

#include <math.h>

extern "C" {
#include "ops/tree_attn.h"
}

#define TA_WARPS 8
#define TA_THREADS (TA_WARPS * 32)
#define TA_ROWS 32      /* query rows per CTA: two 16-row mma tiles */
#define TA_KC 32        /* cache rows per chunk */
#define TA_MAX_DQ 576   /* QK dims: Q fragments live in registers */
#define TA_MAX_DV 512   /* V dims: accumulators live in registers */
#define TA_KQ_MAX (TA_MAX_DQ / 16 / 4) /* k steps per warp quarter: 9 */
#define TA_NT_MAX (TA_MAX_DV / 32)     /* 8-wide n tiles per warp: 16 */
#define TA_SP_LD 36     /* S partial row stride (floats) */
#define TA_PIECES ((TA_MAX_DQ / 8 + 31) / 32) /* 16-byte pieces of a row per lane */
#define TA_P_LD 40      /* P row stride (halves) */

struct ta_args {
	int T, ctx, H, rows, NK;  /* NK = ctx + T cache rows */
	int d_lat, DV, DQ, W;     /* W = mask words */
	int nck, nsplit;          /* TA_KC-key chunks of the cache; splits of the most split row group */
	int base, extra;          /* row groups < extra have base + 1 splits, the rest base */
	int ctas;                 /* ta_main's grid: the sum of every row group's splits */
	float qk_mul;             /* scale x log2(e) x 2^(eq + ek) */
	float v_mul;              /* 2^ek */
	const uint16_t *q;        /* fp16 [row groups x 32][DQ] */
	const uint16_t *kv;       /* fp16 [NK][DQ] */
	const uint32_t *mask;     /* [T][W] */
	float *opart;             /* [nsplit][rows_pad][DV] */
	float2 *mlpart;           /* [nsplit][rows_pad] (max, sum) */
	float *out;               /* [rows][d_lat] */
	int rows_pad;
};

/* Whether tree token t (-1: a padding row) may see cache row kk: every
 * past row, and the tree rows its ancestor mask names. */
__device__ __forceinline__ bool ta_visible(const ta_args &a, int t, int kk)
{
	if (t < 0 || kk >= a.NK)
		return false;
	if (kk < a.ctx)
		return true;
	const int j = kk - a.ctx;
	return (__ldg(a.mask + (size_t)t * a.W + (j >> 5)) >> (j & 31)) & 1u;
}

/* Bit j: whether tree token t (-1: a padding row) may see cache row kk0 + j,
 * j < 4 (kk0 a multiple of 4, so the four tree bits share a mask word). */
__device__ __forceinline__ unsigned ta_visible4(const ta_args &a, int t, int kk0)
{
	if (t < 0)
		return 0;
	if (kk0 + 3 < a.ctx)
		return 0xfu; /* all past rows: the usual case */
	unsigned vis = 0;
#pragma unroll
	for (int j = 0; j < 4; j++)
		vis |= (unsigned)ta_visible(a, t, kk0 + j) << j;
	return vis;
}

/* out[row][dim], out[row][dim + 1] for the columns and rows that exist: one
 * 8-byte store when the row width is even (then dim + 1 < d_lat too), two
 * 4-byte ones (the second only inside the row) when it is odd. */
__device__ __forceinline__ void ta_store2(const ta_args &a, int row, int dim, float x, float y)
{
	if (row >= a.rows || dim >= a.d_lat)
		return;
	float *p = a.out + (size_t)row * a.d_lat + dim;
	if ((a.d_lat & 1) == 0) {
		*(float2 *)p = make_float2(x, y);
	} else {
		p[0] = x;
		if (dim + 1 < a.d_lat)
			p[1] = y;
	}
}

/* This lane's pieces lane + 32 m of a cache row of DQ halves (DQ / 8
 * pieces of 16 bytes): their byte offsets in cp_off; returns the bits of
 * those that exist. Those past the row land as zeros in the row's 16 bytes
 * of padding (no branch, nothing read). */
__device__ __forceinline__ unsigned ta_pieces(int (&cp_off)[TA_PIECES], int lane, int DQ)
{
	const int ppr = DQ / 8;
	unsigned cp_has = 0;
#pragma unroll
	for (int m = 0; m < TA_PIECES; m++) {
		const bool has = lane + 32 * m < ppr;
		cp_has |= (unsigned)has << m;
		cp_off[m] = has ? (lane + 32 * m) * 16 : DQ * 2;
	}
	return cp_has;
}

/* This warp's Q fragments qa: row tile rt of row group row0, its quarter's
 * k steps (KQ per quarter of KS); those past the row are zeros. */
__device__ __forceinline__ void ta_load_q(uint32_t (&qa)[TA_KQ_MAX][4], const ta_args &a, int row0,
					  int rt, int g, int c, int quarter, int KQ, int KS)
{
#pragma unroll
	for (int i = 0; i < TA_KQ_MAX; i++) {
		const int ks = quarter * KQ + i;
		if (i < KQ && ks < KS) {
			const uint16_t *qr = a.q + (size_t)(row0 + rt * 16 + g) * a.DQ + ks * 16 + 2 * c;
			qa[i][0] = *(const uint32_t *)qr;
			qa[i][1] = *(const uint32_t *)(qr + 8 * (size_t)a.DQ);
			qa[i][2] = *(const uint32_t *)(qr + 8);
			qa[i][3] = *(const uint32_t *)(qr + 8 * (size_t)a.DQ + 8);
		} else {
			qa[i][0] = qa[i][1] = qa[i][2] = qa[i][3] = 0;
		}
	}
}

/* QK: this warp's partial of S = Q K^T over its k quarter (kq_n steps), all
 * 32 keys of the chunk whose ldmatrix rows start at kr, into its quarter of
 * the partials sp ([4][32][TA_SP_LD]). */
__device__ __forceinline__ void ta_qk(float *sp, const uint32_t (&qa)[TA_KQ_MAX][4], sptr_t kr,
				      int kq_n, int row16, int quarter, int rt, int g, int c)
{
	float s[4][4];
#pragma unroll
	for (int nt = 0; nt < 4; nt++)
		s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.f;
#pragma unroll
	for (int i = 0; i < TA_KQ_MAX; i++) {
		if (i < kq_n) {
#pragma unroll
			for (int np = 0; np < 2; np++) {
				uint32_t b[4];
				ldsm_x4_at(b, kr + np * row16 + i * 32, false);
				mma_f16(s[2 * np], qa[i], b[0], b[1]);
				mma_f16(s[2 * np + 1], qa[i], b[2], b[3]);
			}
		}
	}
	float *spq = sp + (size_t)quarter * TA_ROWS * TA_SP_LD;
#pragma unroll
	for (int nt = 0; nt < 4; nt++) {
		const int r = rt * 16 + g, col = nt * 8 + 2 * c;
		*(float2 *)(spq + r * TA_SP_LD + col) = make_float2(s[nt][0], s[nt][1]);
		*(float2 *)(spq + (r + 8) * TA_SP_LD + col) =
			make_float2(s[nt][2], s[nt][3]);
	}
}

/* Online softmax, log2 domain, of this thread's 4 keys (ssub) of softmax
 * row srow (tree token s_tok) in the chunk at kbase: the four quarter
 * partials summed, masked, the row's running max m_run and sum l_run
 * updated, P as fp16 into ps and the row's rescale into alpha_s. */
__device__ __forceinline__ void ta_softmax(const ta_args &a, const float *sp, uint16_t *ps,
					   float *alpha_s, int s_tok, int kbase, int srow, int ssub,
					   float &m_run, float &l_run)
{
	float v[4];
	float cmax = -INFINITY;
	const unsigned vis = ta_visible4(a, s_tok, kbase + ssub * 4);
	const float4 *q4 = (const float4 *)(sp + srow * TA_SP_LD + ssub * 4);
	const float4 s0 = q4[0], s1 = q4[TA_ROWS * TA_SP_LD / 4],
		     s2 = q4[2 * TA_ROWS * TA_SP_LD / 4], s3 = q4[3 * TA_ROWS * TA_SP_LD / 4];
	const float sum[4] = {s0.x + s1.x + s2.x + s3.x, s0.y + s1.y + s2.y + s3.y,
			      s0.z + s1.z + s2.z + s3.z, s0.w + s1.w + s2.w + s3.w};
#pragma unroll
	for (int j = 0; j < 4; j++) {
		v[j] = (vis >> j) & 1u ? sum[j] * a.qk_mul : -INFINITY;
		cmax = fmaxf(cmax, v[j]);
	}
#pragma unroll
	for (int o2 = 1; o2 < 8; o2 <<= 1)
		cmax = fmaxf(cmax, __shfl_xor_sync(0xffffffffu, cmax, o2));
	const float m_new = fmaxf(m_run, cmax);
	float alpha = 1.f, psum = 0.f, p[4];
#pragma unroll
	for (int j = 0; j < 4; j++) {
		p[j] = (m_new == -INFINITY || v[j] == -INFINITY) ? 0.f
							      : fast_exp2(v[j] - m_new);
		psum += p[j];
	}
	if (m_new != -INFINITY)
		alpha = m_run == -INFINITY ? 0.f : fast_exp2(m_run - m_new);
#pragma unroll
	for (int o2 = 1; o2 < 8; o2 <<= 1)
		psum += __shfl_xor_sync(0xffffffffu, psum, o2);
	l_run = l_run * alpha + psum;
	m_run = m_new;
	__half2 h01 = __floats2half2_rn(p[0], p[1]), h23 = __floats2half2_rn(p[2], p[3]);
	uint2 pk;
	memcpy(&pk.x, &h01, 4);
	memcpy(&pk.y, &h23, 4);
	*(uint2 *)(ps + srow * TA_P_LD + ssub * 4) = pk;
	if (ssub == 0)
		alpha_s[srow] = alpha;
}

/* PV: O (this warp's accumulators o, row tile rt, NT n tiles of its V
 * quarter) rescaled by the rows' alpha_s, then += P V over the chunk whose
 * V rows start at vr; P's ldmatrix rows start at pa_row. */
__device__ __forceinline__ void ta_pv(float (&o)[TA_NT_MAX][4], const float *alpha_s, sptr_t vr,
				      sptr_t pa_row, int row16, int rt, int g, int NT)
{
	const float a_lo = alpha_s[rt * 16 + g], a_hi = alpha_s[rt * 16 + g + 8];
#pragma unroll
	for (int nt = 0; nt < TA_NT_MAX; nt++) {
		o[nt][0] *= a_lo;
		o[nt][1] *= a_lo;
		o[nt][2] *= a_hi;
		o[nt][3] *= a_hi;
	}
#pragma unroll
	for (int kstep = 0; kstep < TA_KC / 16; kstep++) {
		uint32_t pa[4];
		ldsm_x4_at(pa, pa_row + kstep * 32, false);
#pragma unroll
		for (int ntp = 0; ntp < TA_NT_MAX / 2; ntp++) {
			if (2 * ntp < NT) {
				uint32_t b[4];
				ldsm_x4_at(b, vr + kstep * row16 + ntp * 32, true);
				mma_f16(o[2 * ntp], pa, b[0], b[1]);
				mma_f16(o[2 * ntp + 1], pa, b[2], b[3]);
			}
		}
	}
}

/* The split's result: with one split, O normalized into out; otherwise the
 * real rows' partial O and (max, sum) for ta_combine. ml_s holds each row's
 * (max, sum). */
__device__ __forceinline__ void ta_write(const ta_args &a, const float (&o)[TA_NT_MAX][4],
					 const float2 *ml_s, int row0, int rt, int g, int c, int dv0,
					 int NT, int split, int ssub, int sgrow, float m_run,
					 float l_run)
{
	const float2 ml_lo = ml_s[rt * 16 + g], ml_hi = ml_s[rt * 16 + g + 8];
	const int r_lo = row0 + rt * 16 + g, r_hi = r_lo + 8;
	if (a.nsplit == 1) {
		const float f_lo = ml_lo.y > 0.f ? a.v_mul / ml_lo.y : 0.f;
		const float f_hi = ml_hi.y > 0.f ? a.v_mul / ml_hi.y : 0.f;
#pragma unroll
		for (int nt = 0; nt < TA_NT_MAX; nt++)
			if (nt < NT) {
				const int dim = dv0 + nt * 8 + 2 * c;
				ta_store2(a, r_lo, dim, o[nt][0] * f_lo, o[nt][1] * f_lo);
				ta_store2(a, r_hi, dim, o[nt][2] * f_hi, o[nt][3] * f_hi);
			}
	} else {
		/* partials of the real rows only: padding rows would be bytes for nothing */
		float *op = a.opart + (size_t)split * a.rows_pad * a.DV;
#pragma unroll
		for (int nt = 0; nt < TA_NT_MAX; nt++) {
			const int dim = dv0 + nt * 8 + 2 * c;
			if (nt < NT && r_lo < a.rows)
				*(float2 *)(op + (size_t)r_lo * a.DV + dim) = make_float2(o[nt][0], o[nt][1]);
			if (nt < NT && r_hi < a.rows)
				*(float2 *)(op + (size_t)r_hi * a.DV + dim) = make_float2(o[nt][2], o[nt][3]);
		}
		if (ssub == 0 && sgrow < a.rows)
			a.mlpart[(size_t)split * a.rows_pad + sgrow] = make_float2(m_run, l_run);
	}
}

/* This CTA's row group rg, its split and that split's keys [k_lo, k_hi):
 * the first extra row groups have base + 1 splits, the rest base, and the
 * splits of a row group share its chunks evenly (counts differ by one). */
__device__ __forceinline__ void ta_cta(const ta_args &a, int &rg, int &split, int &k_lo, int &k_hi)
{
	const int big = a.extra * (a.base + 1), b = blockIdx.x;
	const int ns = b < big ? a.base + 1 : a.base;
	rg = b < big ? b / ns : a.extra + (b - big) / ns;
	split = b < big ? b % ns : (b - big) % ns;
	k_lo = (int)((long long)split * a.nck / ns) * TA_KC;
	k_hi = min(a.NK, (int)((long long)(split + 1) * a.nck / ns) * TA_KC);
}

__global__ void __launch_bounds__(TA_THREADS, 1) ta_main(const ta_args a)
{
	CU_DYN_SMEM(unsigned char, ta_sm);
	const int ldk = a.DQ + 8; /* halves per cache row in shared memory */
	uint16_t *stage0 = (uint16_t *)ta_sm;
	float *sp = (float *)(ta_sm + (size_t)2 * TA_KC * ldk * 2); /* [4][32][TA_SP_LD] */
	uint16_t *ps = (uint16_t *)(sp + 4 * TA_ROWS * TA_SP_LD);     /* [32][TA_P_LD] */
	float *alpha_s = (float *)(ps + TA_ROWS * TA_P_LD);             /* [32] */
	float2 *ml_s = (float2 *)(alpha_s + TA_ROWS);                   /* [32] */

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int g = lane >> 2, c = lane & 3;
	const int rt = warp & 1, quarter = warp >> 1;
	int rg, split, k_lo, k_hi;
	ta_cta(a, rg, split, k_lo, k_hi);
	const int row0 = rg * TA_ROWS;
	const int nchunks = k_hi > k_lo ? (k_hi - k_lo + TA_KC - 1) / TA_KC : 0;
	const int KS = a.DQ / 16, KQ = (KS + 3) / 4;
	const int NT = a.DV / 32; /* n tiles of this warp's V quarter */
	const int dv0 = quarter * (a.DV / 4);

	/* Q fragments of (row tile rt, k steps quarter*KQ ...) */
	uint32_t qa[TA_KQ_MAX][4];
	ta_load_q(qa, a, row0, rt, g, c, quarter, KQ, KS);
	float o[TA_NT_MAX][4];
#pragma unroll
	for (int nt = 0; nt < TA_NT_MAX; nt++)
		o[nt][0] = o[nt][1] = o[nt][2] = o[nt][3] = 0.f;

	/* softmax ownership: 8 threads per row, 4 keys each */
	const int srow = tid >> 3, ssub = tid & 7, sgrow = row0 + srow;
	float m_run = -INFINITY, l_run = 0.f;

	/* chunk ch of the cache into its stage: warp w copies rows w, w + 8, ...,
	 * lane l the row's 16-byte pieces l, l + 32, ...; rows past the split
	 * land as zeros, reading nothing */
	const sptr_t cp_dst = sptr(stage0);
	int cp_off[TA_PIECES];
	const unsigned cp_has = ta_pieces(cp_off, lane, a.DQ);
	auto issue = [&](int chunk) {
		const sptr_t st = cp_dst + (chunk & 1) * (TA_KC * ldk * 2);
		const int kbase = k_lo + chunk * TA_KC;
#pragma unroll
		for (int k = 0; k < TA_KC / TA_WARPS; k++) {
			const int r = warp + k * TA_WARPS;
			const bool ok = kbase + r < k_hi;
			const uint16_t *src = a.kv + (size_t)(ok ? kbase + r : k_lo) * a.DQ + lane * 8;
#pragma unroll
			for (int m = 0; m < TA_PIECES; m++)
				cp_async16_at(st + r * (ldk * 2) + cp_off[m], src + 256 * m,
					      ok && (cp_has >> m & 1) ? 16 : 0);
		}
		cp_async_commit();
	};
	/* the tree token of this thread's softmax row (rows past the end: none) */
	const int s_tok = sgrow < a.rows ? sgrow / a.H : -1;
	/* this lane's ldmatrix rows in stage 0: QK reads keys (lane & 7) + 8 (lane
	 * >> 4) (+ 16) at its quarter's k offset, PV keys (lane & 7) + 8 ((lane >>
	 * 3) & 1) (+ 16) at its V quarter; the stage and the 16-key step add
	 * whole rows */
	const int kq_n = min(KQ, KS - quarter * KQ); /* k steps this warp has */
	const sptr_t qk_row = sptr(stage0 + (size_t)((lane & 7) + (lane >> 4) * 8) * ldk +
				   quarter * KQ * 16 + ((lane >> 3) & 1) * 8);
	const sptr_t pv_row = sptr(stage0 + (size_t)((lane & 7) + ((lane >> 3) & 1) * 8) * ldk + dv0 +
				   (lane >> 4) * 8);
	const sptr_t pa_row = sptr(ps + (size_t)(rt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * TA_P_LD +
				   (lane >> 4) * 8);
	const int row16 = 16 * ldk * 2; /* bytes of 16 cache rows */

	if (nchunks > 0)
		issue(0);
	for (int ch = 0; ch < nchunks; ch++) {
		cp_async_wait<0>();
		__syncthreads(); /* chunk ch is in; every thread is done with chunk ch - 1 */
		if (ch + 1 < nchunks)
			issue(ch + 1);
		const int soff = (ch & 1) * (TA_KC * ldk * 2);
		const int kbase = k_lo + ch * TA_KC;

		ta_qk(sp, qa, qk_row + soff, kq_n, row16, quarter, rt, g, c);
		__syncthreads();

		ta_softmax(a, sp, ps, alpha_s, s_tok, kbase, srow, ssub, m_run, l_run);
		__syncthreads();

		ta_pv(o, alpha_s, pv_row + soff, pa_row, row16, rt, g, NT);
	}

	if (ssub == 0)
		ml_s[srow] = make_float2(m_run, l_run);
	__syncthreads();

	ta_write(a, o, ml_s, row0, rt, g, c, dv0, NT, split, ssub, sgrow, m_run, l_run);
}

/* Merges the splits of one query row over 64 latent dims: out = sum_s
 * 2^(m_s - M) O_s / sum_s 2^(m_s - M) l_s. Warp w takes splits w, w + 8, ...
 * (independent loads in flight), lane l dims 2l, 2l + 1 of the slice; the
 * block's threads first find M and the denominator together. */
__global__ void __launch_bounds__(TA_THREADS) ta_combine(const ta_args a)
{
	__shared__ float red[TA_WARPS][64];
	__shared__ float s_m[TA_WARPS], s_den[TA_WARPS];
	const int row = blockIdx.x, dim0 = blockIdx.y * 64, tid = threadIdx.x;
	const int warp = tid >> 5, lane = tid & 31;
	const float2 *ml = a.mlpart + row;
	const int nsplit = row / TA_ROWS < a.extra ? a.base + 1 : a.base; /* its row group's */

	float m = -INFINITY;
	for (int s = tid; s < nsplit; s += TA_THREADS)
		m = fmaxf(m, ml[(size_t)s * a.rows_pad].x);
	m = warp_max(m);
	if (lane == 0)
		s_m[warp] = m;
	__syncthreads();
	float M = s_m[0];
#pragma unroll
	for (int w = 1; w < TA_WARPS; w++)
		M = fmaxf(M, s_m[w]);
	float den = 0.f;
	if (M != -INFINITY)
		for (int s = tid; s < nsplit; s += TA_THREADS) {
			const float2 v = ml[(size_t)s * a.rows_pad];
			if (v.x != -INFINITY)
				den += exp2f(v.x - M) * v.y;
		}
	den = warp_sum(den);
	if (lane == 0)
		s_den[warp] = den;

	float2 num = make_float2(0.f, 0.f);
	if (M != -INFINITY)
		for (int s = warp; s < nsplit; s += TA_WARPS) {
			const float2 v = ml[(size_t)s * a.rows_pad];
			if (v.x == -INFINITY)
				continue;
			const float w = exp2f(v.x - M);
			const float2 o = *(const float2 *)(a.opart +
							   ((size_t)s * a.rows_pad + row) * a.DV +
							   dim0 + 2 * lane);
			num.x += w * o.x;
			num.y += w * o.y;
		}
	red[warp][2 * lane] = num.x;
	red[warp][2 * lane + 1] = num.y;
	__syncthreads();
	if (warp == 0) {
		float d = 0.f, x = 0.f, y = 0.f;
#pragma unroll
		for (int w = 0; w < TA_WARPS; w++) {
			d += s_den[w];
			x += red[w][2 * lane];
			y += red[w][2 * lane + 1];
		}
		const float f = d > 0.f ? a.v_mul / d : 0.f;
		ta_store2(a, row, dim0 + 2 * lane, x * f, y * f);
	}
}

/* bf16 [rows][d_lat + d_rope] -> fp16 [rows_pad][DQ] (latent padded to DV,
 * rope to DQ - DV, zeros in the padding), each value times mul. */
__global__ void ta_convert(uint16_t *dst, const uint16_t *src, int rows, int rows_pad, int d_lat,
			   int d_rope, int DV, int DQ, float mul)
{
	const long long n = (long long)rows_pad * DQ;
	const int D = d_lat + d_rope;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		const int r = (int)(i / DQ), col = (int)(i % DQ);
		int sc = -1;
		if (r < rows) {
			if (col < DV)
				sc = col < d_lat ? col : -1;
			else
				sc = col - DV < d_rope ? d_lat + (col - DV) : -1;
		}
		const float v = sc >= 0 ? __uint_as_float((uint32_t)src[(size_t)r * D + sc] << 16) * mul : 0.f;
		__half h = __float2half_rn(v);
		uint16_t bits;
		memcpy(&bits, &h, 2);
		dst[i] = bits;
	}
}

/* ---- host side ---- */

struct ta_dev {
	struct ta_args a;
	int nrg;
	size_t smem;
	void *bufs[8];
	int nbufs;
};

static void ta_teardown(void *dev)
{
	struct ta_dev *d = (struct ta_dev *)dev;
	if (!d)
		return;
	for (int i = 0; i < d->nbufs; i++)
		cu_free(d->bufs[i]);
	free(d);
}

static int ta_buf(struct ta_dev *d, void **p, size_t bytes, const void *host)
{
	int rc = cu_upload(p, host, bytes);
	if (!rc)
		d->bufs[d->nbufs++] = *p;
	return rc;
}

/* The power of two e with max|x| x 2^-e in [128, 256) (0 for all-zero or
 * non-finite-only data). */
static int ta_exponent(const bf16_t *x, size_t n)
{
	uint16_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		uint16_t m = x[i] & 0x7fffu;
		if (m < 0x7f80u && m > mx)
			mx = m;
	}
	if (!mx)
		return 0;
	return ilogbf(bf16_to_float(mx)) - 7;
}

/* Uploads bf16 rows and converts them into fp16 rows of the padded layout. */
static int ta_upload_fp16(struct ta_dev *d, uint16_t **dst, const bf16_t *src, int rows,
			  int rows_pad, int d_lat, int d_rope, float mul)
{
	const struct ta_args *a = &d->a;
	void *raw = NULL;
	int rc;
	if ((rc = ta_buf(d, (void **)dst, (size_t)rows_pad * a->DQ * 2, NULL)))
		return rc;
	if ((rc = cu_upload(&raw, src, (size_t)rows * (d_lat + d_rope) * 2)))
		return rc;
	long long n = (long long)rows_pad * a->DQ;
	int grid = (int)((n + 255) / 256 < 65536 ? (n + 255) / 256 : 65536);
	rc = CU(cu_launch(ta_convert, grid, 256, 0, 0, *dst, (const uint16_t *)raw, rows, rows_pad,
			  d_lat, d_rope, a->DV, a->DQ, mul));
	if (!rc)
		rc = CU(cudaDeviceSynchronize());
	cu_free(raw);
	return rc;
}

static int ta_setup(void **dev, const void *inst)
{
	const struct tree_attn_inst *in = (const struct tree_attn_inst *)inst;
	struct ta_dev *d;
	int rc, devn, optin = 0;

	*dev = NULL;
	const int DV = round_up(in->d_lat, 64), DQ = DV + round_up(in->d_rope, 16);
	if (DV > TA_MAX_DV || DQ > TA_MAX_DQ)
		return err_set(DDT_EINPUT, "unsupported: tree_attn CUDA handles latent <= %d and "
			       "latent + rope <= %d (padded: %d, %d)", TA_MAX_DV, TA_MAX_DQ, DV, DQ);
	if (in->T < 1 || in->heads < 1)
		return err_set(DDT_EINPUT, "tree_attn: T %d and heads %d must be positive", in->T,
			       in->heads);
	CK(cudaGetDevice(&devn));
	CK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, devn));
	if (!(d = (struct ta_dev *)calloc(1, sizeof *d)))
		return err_nomem();
	struct ta_args *a = &d->a;
	a->T = in->T;
	a->ctx = in->ctx;
	a->H = in->heads;
	a->rows = in->T * in->heads;
	a->NK = in->ctx + in->T;
	a->d_lat = in->d_lat;
	a->DV = DV;
	a->DQ = DQ;
	a->W = in->mask_words;
	d->nrg = cdiv(a->rows, TA_ROWS);
	a->rows_pad = d->nrg * TA_ROWS;
	size_t fixed = (size_t)4 * TA_ROWS * TA_SP_LD * 4 + (size_t)TA_ROWS * TA_P_LD * 2 +
		       (size_t)TA_ROWS * (4 + 8);
	size_t stage = (size_t)TA_KC * (DQ + 8) * 2;
	d->smem = fixed + 2 * stage; /* two stages: the next chunk lands during this one */
	if (d->smem > (size_t)optin) {
		rc = err_set(DDT_EINPUT, "unsupported: tree_attn CUDA needs %zu bytes of shared "
			     "memory, the device allows %d", d->smem, optin);
		free(d);
		return rc;
	}
	/* splits: as many CTAs as fit in one wave, every one of them (never a
	 * second, partly empty wave, nor an SM left idle when the row groups do
	 * not divide the wave: some row groups get one split more), at least 4
	 * chunks each */
	int per_sm = 0;
	if ((rc = cu_smem_allow(ta_main, d->smem, "tree_attn")) ||
	    (rc = CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ta_main, TA_THREADS,
								   d->smem)))) {
		free(d);
		return rc;
	}
	a->nck = cdiv(a->NK, TA_KC);
	const int max_split = a->nck / 4 > 1 ? a->nck / 4 : 1;
	int ctas = (per_sm > 0 ? per_sm : 1) * cu_sm_count();
	if (ctas > d->nrg * max_split)
		ctas = d->nrg * max_split;
	if (ctas < d->nrg)
		ctas = d->nrg; /* more row groups than a wave holds: one split each */
	a->base = ctas / d->nrg;
	a->extra = ctas % d->nrg;
	a->nsplit = a->base + (a->extra > 0);
	a->ctas = ctas;

	const int eq = ta_exponent(in->q, (size_t)a->rows * (in->d_lat + in->d_rope));
	const int ek = ta_exponent(in->kv, (size_t)a->NK * (in->d_lat + in->d_rope));
	a->qk_mul = (float)((double)in->scale * 1.4426950408889634 * ldexp(1.0, eq + ek));
	a->v_mul = (float)ldexp(1.0, ek);

	if ((rc = ta_upload_fp16(d, (uint16_t **)&a->q, in->q, a->rows, a->rows_pad, in->d_lat,
				 in->d_rope, (float)ldexp(1.0, -eq))) ||
	    (rc = ta_upload_fp16(d, (uint16_t **)&a->kv, in->kv, a->NK, a->NK, in->d_lat,
				 in->d_rope, (float)ldexp(1.0, -ek))))
		goto fail;
	void *p;
	if ((rc = ta_buf(d, &p, (size_t)in->T * in->mask_words * 4, in->mask)))
		goto fail;
	a->mask = (const uint32_t *)p;
	if ((rc = ta_buf(d, (void **)&a->out, (size_t)a->rows * in->d_lat * 4, NULL)))
		goto fail;
	if (a->nsplit > 1 &&
	    ((rc = ta_buf(d, (void **)&a->opart, (size_t)a->nsplit * a->rows_pad * DV * 4, NULL)) ||
	     (rc = ta_buf(d, (void **)&a->mlpart, (size_t)a->nsplit * a->rows_pad * 8, NULL))))
		goto fail;
	/* the output starts as NaN: an element the kernels miss cannot look right */
	if ((rc = CU(cudaMemset(a->out, 0xff, (size_t)a->rows * in->d_lat * 4))))
		goto fail;
	*dev = d;
	return 0;
fail:
	ta_teardown(d);
	return rc;
}

static int ta_run(void *dev, void *stream)
{
	struct ta_dev *d = (struct ta_dev *)dev;
	cudaStream_t s = (cudaStream_t)stream;

	CK(cu_launch(ta_main, d->a.ctas, TA_THREADS, d->smem, s, d->a));
	if (d->a.nsplit > 1) {
		CK(cu_launch(ta_combine, dim3(d->a.rows, d->a.DV / 64), TA_THREADS, 0, s, d->a));
	}
	return 0;
}

static int ta_fetch(void *dev, void *inst)
{
	struct ta_dev *d = (struct ta_dev *)dev;
	struct tree_attn_inst *in = (struct tree_attn_inst *)inst;

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(in->out, d->a.out, (size_t)d->a.rows * d->a.d_lat * 4,
		      cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" const struct op_cuda CU_OP_TABLE(tree_attn) = {ta_setup, ta_run, ta_fetch, ta_teardown};
