/* moe_w4a16.cu - one MoE layer on the GPU: INT4 experts dequantized in registers into tensor-core mma, bf16 shared expert.
 *
 * What it computes: engine/ops/moe_w4a16.h (out = sum over slots of
 * w * down(bf16(silu(gate x) * up x)), plus the shared expert, fp32).
 *
 * How (four launches, all graph-capturable):
 *   1. moe_route (one block): counting sort of the M x topk (token, slot)
 *      pairs by expert; the touched experts become "slots" 0..n-1, the shared
 *      expert (when present) slot n with every token.
 *   2. moe_gemm1 (persistent grid): one work item = (slot, 8 rows of gate and
 *      the same 8 rows of up) over the whole hidden dimension, 8 warps
 *      splitting K. The weights are read once from HBM with 16-byte streaming
 *      loads; each 16 bytes is one lane's A fragments of four m16n8k16 mma,
 *      dequantized with two integer ops per pair (exact in bf16); the up to 8
 *      tokens of the expert are the mma's N. The group scale multiplies each
 *      32-wide partial sum in fp32. Epilogue: h = bf16(silu(g) * u).
 *   3. moe_gemm2 (persistent grid): one work item = (slot, 128 rows of down),
 *      a warp per 16 rows, K = inter; writes y[pair][hidden] in fp32.
 *   4. moe_finalize: out[m] = sum_j w[m][j] y[m,j] (+ shared), in slot order,
 *      so the result is deterministic (no atomics anywhere).
 *   More than 8 tokens on one expert loop over chunks of 8; the later chunks
 *   re-read the item's weights from L2, not HBM.
 *
 * Repacking (setup, on the device): weights become tiles of 16 rows x 64 k,
 * 512 bytes, one 16-byte word per lane; inside a 32-wide group lane c of a
 * quad owns k = 8c..8c+7, so its B fragment is one 16-byte load of x. The k
 * order inside a group is permuted identically for A and B (a dot product
 * does not care), which keeps every scale group whole inside two mma.
 *
 * Napkin math (Kimi K2.x, TP-8 slice: hidden 7168, inter 256, 384 experts,
 * top-8, 1 shared expert, group 32): one routed expert is 3 x 7168 x 256
 * INT4 = 2.75 MB + 0.34 MB scales = 3.10 MB; the shared expert 11.0 MB bf16.
 * Expected distinct experts at M tokens: 384 (1 - (1 - 8/384)^M).
 *   M=1:   8 experts -> 35.8 MB -> 8.4 us at 4.25 TB/s (copy ceiling)
 *   M=9:  ~66 experts -> 216 MB -> 51 us
 *   M=33: ~190 experts -> 600 MB -> 141 us
 *   flops: 2 x 3 x 7168 x 256 x (8 M) + shared: ~0.4 GFLOP at M=9, far under
 *   the mma ceiling; per weight the kernel issues ~1.6 instructions (dequant,
 *   scale, mma), under the ~4/weight the SM can issue at HBM speed.
 */
#include "common.cuh"

extern "C" {
#include "ops/moe_w4a16.h"
}

#define MOE_WARPS 8
#define MOE_THREADS (MOE_WARPS * 32)
#define MOE_MIN_BLOCKS 3 /* planned blocks per SM: <= 85 registers (sass-check) */
#define ROUTE_THREADS 512
#define ROUTE_PER 8 /* experts per route thread: at most 4096 experts */

/* Everything the kernels read, passed by value. */
struct moe_args {
	int M, hidden, inter, sh_inter, experts, topk, MK;
	int K1p, KT1;      /* hidden padded to 64, its 64-wide k tiles */
	int T1, T1s;       /* gate/up tiles: routed (8 rows of each), shared (2 of each) */
	int KT2, KT2s;     /* inter (shared inter) padded to 64, in k tiles */
	int T2, NB2;       /* down, routed: tiles of 16 rows, blocks of MOE_WARPS tiles */
	int T2s, NB2s;     /* down, shared: tiles of 4 rows, blocks of MOE_WARPS tiles */
	int HS;            /* row stride of h (elements) */
	int npairs;        /* routed pairs + shared pairs: the zero row of h */
	int has_sh;
	const unsigned char *w13; /* [E][T1][KT1] stages of 576 B: 512 int4 + 64 scales */
	const unsigned char *w2;  /* [E][T2][KT2] the same */
	const unsigned char *sh13; /* [T1s][KT1] bf16 stages of 512 B (thin tiles) */
	const unsigned char *sh2;  /* [T2s][KT2s] the same */
	const uint16_t *x; /* [M + 1][K1p] bf16; row M is zeros */
	const int32_t *ids;
	const float *wts;
	int32_t *meta;     /* [0] routed slots, [1] bad expert id seen */
	int32_t *slot_expert, *slot_off, *pairs;
	uint16_t *h;       /* [pairs + 1][HS] bf16; the last row is zeros */
	float *y;          /* [pairs][hidden] */
	float *out;        /* [M][hidden] */
};

struct moe_dev {
	struct moe_args a;
	int grid1, grid2, max_slots;
	void *bufs[24];
	int nbufs;
};

/* ---- repacking ----
 *
 * INT4 tiles: 16 rows x 64 k per 576-byte stage, lane l's 16 bytes its A
 * fragments of the tile's four m16n8k16 mma (rows l/4 and l/4 + 8), then the
 * 64 bytes of scales [8 r][s(r, g0), s(r, g1), s(r+8, g0), s(r+8, g1)]. Inside
 * a 32-wide group lane c of a quad owns k = 8c..8c+7, so its B fragment is one
 * 16-byte load of x; the same k order for A and B (a dot product does not
 * care) keeps every scale group inside two mma. Weights and scales share one
 * stream, so one pointer and one cp.async stage cover both.
 * bf16 thin tiles (the shared expert): 2 rows of gate and 2 of up (or 4 of
 * down) per tile, rows 0, 1 and 8, 9 of the mma; the 512-byte stage holds
 * only the fragments of lanes 0-7 ([4 mma][8 lanes][16 B]). The mma's other
 * rows repeat those (lane l reads lane l % 8's fragments) and are never
 * stored: a shared-expert item then carries the bytes of a routed one.
 */
#define STAGE_Q4 576
#define STAGE_BF 512

/* Source row of row r (0..15) of tile t, or -1. Mode 0 (gate/up): rows 0-7
 * are gate rows 8t.., rows 8-15 the same up rows (n = inter); mode 1: plain
 * rows 16t + r of n rows. */
__device__ __forceinline__ int tile_row(int mode, int t, int r, int n)
{
	if (mode == 0) {
		int j = 8 * t + (r & 7);
		return j < n ? (r < 8 ? j : n + j) : -1;
	}
	int j = 16 * t + r;
	return j < n ? j : -1;
}

/* The same for a thin tile (real rows r = 0, 1, 8, 9): mode 0 gate rows
 * 2t + r, up rows n + 2t + r - 8; mode 1 rows 4t + r, 4t + 2 + r - 8. */
__device__ __forceinline__ int thin_row(int mode, int t, int r, int n)
{
	const int lo = r & 7, hi = r >> 3;
	if (lo > 1)
		return -1;
	const int j = mode == 0 ? 2 * t + lo : 4 * t + 2 * hi + lo;
	if (j >= n)
		return -1;
	return mode == 0 && hi ? n + j : j;
}

__device__ __forceinline__ uint32_t src_nib(const uint8_t *w, long long row_base, int row, int k,
					    int K)
{
	if (row < 0 || k >= K)
		return 8; /* the zero weight */
	uint8_t b = w[(row_base + row) * (long long)(K / 2) + k / 2];
	return k & 1 ? b >> 4 : b & 15u;
}

/* One 32-bit word (8 nibbles) of lane l's A fragments for mma block j. */
__global__ void moe_pack_q4(uint32_t *dw, const uint8_t *w, int E, int src_rows, int K, int ntiles,
			    int KT, int mode, int n)
{
	long long total = (long long)E * ntiles * KT * 128;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int j = (int)(i & 3), l = (int)((i >> 2) & 31);
		long long rest = i >> 7, stage = rest;
		int kt = (int)(rest % KT);
		rest /= KT;
		int t = (int)(rest % ntiles), e = (int)(rest / ntiles);
		int r = l >> 2, c = l & 3, g = j >> 1, hh = j & 1;
		int kb = kt * 64 + 32 * g + 8 * c + 4 * hh;
		int r0 = tile_row(mode, t, r, n), r1 = tile_row(mode, t, r + 8, n);
		long long base = (long long)e * src_rows;
		uint32_t v = src_nib(w, base, r0, kb, K) | src_nib(w, base, r1, kb, K) << 4 |
			     src_nib(w, base, r0, kb + 2, K) << 8 |
			     src_nib(w, base, r1, kb + 2, K) << 12 |
			     src_nib(w, base, r0, kb + 1, K) << 16 |
			     src_nib(w, base, r1, kb + 1, K) << 20 |
			     src_nib(w, base, r0, kb + 3, K) << 24 |
			     src_nib(w, base, r1, kb + 3, K) << 28;
		dw[stage * (STAGE_Q4 / 4) + (i & 127)] = v;
	}
}

/* The scales of each stage, after its 512 bytes of weights. */
__global__ void moe_pack_scales(uint16_t *dw, const uint16_t *s, int E, int src_rows, int K,
				int group, int ntiles, int KT, int mode, int n)
{
	long long total = (long long)E * ntiles * KT * 32;
	int ng = K / group;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int q = (int)(i & 3), r = (int)((i >> 2) & 7);
		long long rest = i >> 5, stage = rest;
		int kt = (int)(rest % KT);
		rest /= KT;
		int t = (int)(rest % ntiles), e = (int)(rest / ntiles);
		int row = tile_row(mode, t, q < 2 ? r : r + 8, n);
		int k = kt * 64 + 32 * (q & 1);
		uint16_t v = 0;
		if (row >= 0 && k < K)
			v = s[((long long)e * src_rows + row) * ng + k / group];
		dw[stage * (STAGE_Q4 / 2) + 256 + (i & 31)] = v;
	}
}

/* bf16 thin tiles: per (tile, k tile, block j) 8 lanes x 8 values a0..a7. */
__global__ void moe_pack_bf16(uint16_t *dw, const uint16_t *w, int K, int ntiles, int KT, int mode,
			      int n)
{
	long long total = (long long)ntiles * KT * 4 * 8 * 8;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int v = (int)(i & 7), l = (int)((i >> 3) & 7), j = (int)((i >> 6) & 3);
		long long rest = i >> 8;
		int kt = (int)(rest % KT), t = (int)(rest / KT);
		int r = l >> 2, c = l & 3, g = j >> 1, hh = j & 1;
		int kb = kt * 64 + 32 * g + 8 * c + 4 * hh;
		/* a0..a7: (r,kb) (r,kb+1) (r+8,kb) (r+8,kb+1) (r,kb+2) (r,kb+3) (r+8,kb+2) (r+8,kb+3) */
		int row = thin_row(mode, t, (v & 2) ? r + 8 : r, n);
		int k = kb + (v & 1) + ((v & 4) ? 2 : 0);
		dw[i] = row >= 0 && k < K ? w[(long long)row * K + k] : (uint16_t)0;
	}
}

/* ---- the kernels ---- */

/* Per-warp ring of NS slots fed by cp.async (~4 KB of weights per warp in
 * flight without holding registers), filled and consumed two stages at a
 * time (one wait, one __syncwarp and one commit per pair). A slot holds a
 * 576-byte stage and 16 bytes where the zero-fills of the lanes without
 * scales to copy land, so every lane's destinations are fixed offsets. */
#define NS 8
#define NPAIR (NS / 2)
#define SLOT (STAGE_Q4 + 16)
#define RING_BYTES (NS * SLOT)

/* Stages 2p and 2p + 1 into the slot pair at slots (two adjacent slots),
 * one commit group: lane l copies bytes 16l..16l+15 of each stage's weights
 * (src: this lane's 16 bytes of stage 2p; stage 2p + 1 is WSTEP further)
 * and, for INT4, lanes 0-3 the 64 bytes of scales to sdst in the slot (the
 * others fill the slot's sink, reading nothing: sbytes 0). Branch-free: a
 * stage past the end of the stream (s >= n) reads nothing and lands zeros. */
template <bool Q4, int WSTEP>
__device__ __forceinline__ void pair_issue(unsigned char *slots, const unsigned char *src, int p,
					   int n, int lane, int sdst, int sbytes, uint64_t pol)
{
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const bool live = 2 * p + h < n;
		unsigned char *slot = slots + h * SLOT;
		cp_async16_pol(slot + lane * 16, src + h * WSTEP, live ? 16 : 0, pol);
		if constexpr (Q4)
			cp_async16_pol(slot + sdst, src + h * WSTEP + 512, live ? sbytes : 0, pol);
	}
	cp_async_commit();
}

/* Four int4 pairs of one 32-bit word (nibbles i and i+4 form pair i; a nibble
 * q stands for q - 8) as exact bf16x2 values: one LOP3 puts the nibble into
 * the mantissa of 128.0 (ulp 1), one HSUB2 takes 136 off. */
__device__ __forceinline__ void dequant8(uint32_t q, uint32_t out[4])
{
	const uint32_t bias_bits = 0x43084308u; /* 136.0 in both halves */
	__nv_bfloat162 bias;
	memcpy(&bias, &bias_bits, sizeof bias);
#pragma unroll
	for (int i = 0; i < 4; i++) {
		const uint32_t v = lop3<(0xf0 & 0xcc) | 0xaa>(q >> (4 * i), 0x000f000fu, 0x43004300u);
		__nv_bfloat162 b;
		memcpy(&b, &v, sizeof b);
		b = __hsub2(b, bias);
		memcpy(&out[i], &b, sizeof b);
	}
}

/* One stage's mma into the warp's C fragment acc (rows lane/4, lane/4 + 8;
 * columns 2(lane%4) + {0,1}); x is this lane's 2 x 8 activations. INT4: the
 * group scale multiplies each 32-wide partial sum in fp32. */
template <bool Q4>
__device__ __forceinline__ void stage_mma(float acc[4], const unsigned char *b, const uint4 x[2],
					  int lane)
{
	if constexpr (Q4) {
		const uint4 w = *(const uint4 *)(b + lane * 16);
		const uint2 sq = *(const uint2 *)(b + 512 + (lane >> 2) * 8);
		const uint32_t wv[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
		for (int g = 0; g < 2; g++) {
			float cg[4] = {0.f, 0.f, 0.f, 0.f};
			uint32_t a[4];
			dequant8(wv[2 * g], a);
			mma_bf16(cg, a, x[g].x, x[g].y);
			dequant8(wv[2 * g + 1], a);
			mma_bf16(cg, a, x[g].z, x[g].w);
			const float s0 = g ? bf_hi(sq.x) : bf_lo(sq.x);
			const float s1 = g ? bf_hi(sq.y) : bf_lo(sq.y);
			acc[0] = fmaf(s0, cg[0], acc[0]);
			acc[1] = fmaf(s0, cg[1], acc[1]);
			acc[2] = fmaf(s1, cg[2], acc[2]);
			acc[3] = fmaf(s1, cg[3], acc[3]);
		}
	} else {
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const uint4 w = *(const uint4 *)(b + (j * 8 + (lane & 7)) * 16);
			const uint32_t a[4] = {w.x, w.y, w.z, w.w};
			if (j & 1)
				mma_bf16(acc, a, x[j >> 1].z, x[j >> 1].w);
			else
				mma_bf16(acc, a, x[j >> 1].x, x[j >> 1].y);
		}
	}
}

/* Accumulates the n stages of one 16-row tile into acc: stage i at
 * w + i WSTEP bytes, its activations at xp + i XSTEP elements (this lane's B
 * column and k offset; the zero row for an absent token). Stages go two at a
 * time (one wait, one __syncwarp, one commit group per pair); the stages
 * past the end of the last pair are zero-filled and multiplied anyway (zero
 * weights or zero scales add nothing), with activations read from the
 * buffer's zeroed slack. Activations come one pair ahead through registers. */
template <bool Q4, int WSTEP, int XSTEP>
__device__ __forceinline__ void tile_mma(float acc[4], unsigned char *ring, const unsigned char *w,
					 const uint16_t *xp, int n, int lane, uint64_t pol)
{
	if (n <= 0)
		return;
	const int sdst = lane < 4 ? 512 + lane * 16 : STAGE_Q4, sbytes = lane < 4 ? 16 : 0;
	const unsigned char *src = w + lane * 16;
#pragma unroll
	for (int p = 0; p < NPAIR - 1; p++, src += 2 * WSTEP)
		pair_issue<Q4, WSTEP>(ring + 2 * p * SLOT, src, p, n, lane, sdst, sbytes, pol);
	uint4 x[2][4];
#pragma unroll
	for (int q = 0; q < 4; q++)
		x[0][q] = *(const uint4 *)(xp + (q >> 1) * XSTEP + (q & 1) * 32);
	const int pairs = (n + 1) / 2;
	for (int p = 0; p < pairs; p += 2) {
#pragma unroll
		for (int u = 0; u < 2; u++) {
			if (u && p + 1 >= pairs)
				break;
			const int pp = p + u;
			cp_async_wait<NPAIR - 2>();
			__syncwarp(); /* every lane is past the slots of pair pp - 1 */
			pair_issue<Q4, WSTEP>(ring + ((2 * pp + 2 * NPAIR - 2) & (NS - 1)) * SLOT, src,
					      pp + NPAIR - 1, n, lane, sdst, sbytes, pol);
			src += 2 * WSTEP;
			const uint16_t *xn = xp + (size_t)(2 * pp + 2) * XSTEP;
#pragma unroll
			for (int q = 0; q < 4; q++)
				x[u ^ 1][q] = *(const uint4 *)(xn + (q >> 1) * XSTEP + (q & 1) * 32);
			const unsigned char *b = ring + ((2 * pp) & (NS - 1)) * SLOT;
			stage_mma<Q4>(acc, b, x[u], lane);
			stage_mma<Q4>(acc, b + SLOT, x[u] + 2, lane);
		}
	}
	cp_async_wait<0>();
	__syncwarp(); /* the ring is free for the next call */
}

/* The token of pair p: routed pairs are m*topk + j, shared ones MK + m. */
__device__ __forceinline__ int pair_token(const moe_args &a, int p)
{
	return p < a.MK ? p / a.topk : p - a.MK;
}

/* Counting sort of the pairs by expert (one block). Order inside an expert
 * is arbitrary: every pair's result is independent of its position. */
__global__ void __launch_bounds__(ROUTE_THREADS) moe_route(const moe_args a)
{
	CU_DYN_SMEM(int, route_sm);
	int *cnt = route_sm, *pos = route_sm + a.experts;
	__shared__ unsigned long long wsum[ROUTE_THREADS / 32];
	__shared__ int bad, total_pairs;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;

	for (int e = tid; e < a.experts; e += ROUTE_THREADS)
		cnt[e] = 0;
	if (tid == 0)
		bad = 0;
	__syncthreads();
	for (int i = tid; i < a.MK; i += ROUTE_THREADS) {
		int e = a.ids[i];
		if (e >= a.experts)
			bad = 1;
		else if (e >= 0)
			atomicAdd(&cnt[e], 1);
	}
	__syncthreads();

	/* exclusive scan of (pairs << 32 | touched) over experts */
	unsigned long long loc[ROUTE_PER], sum = 0;
	const int base = tid * ROUTE_PER;
#pragma unroll
	for (int q = 0; q < ROUTE_PER; q++) {
		int e = base + q;
		unsigned long long v = 0;
		if (e < a.experts)
			v = ((unsigned long long)cnt[e] << 32) | (unsigned long long)(cnt[e] > 0);
		loc[q] = sum;
		sum += v;
	}
	unsigned long long incl = sum;
#pragma unroll
	for (int o = 1; o < 32; o <<= 1) {
		unsigned long long t = __shfl_up_sync(0xffffffffu, incl, o);
		if (lane >= o)
			incl += t;
	}
	if (lane == 31)
		wsum[warp] = incl;
	__syncthreads();
	if (warp == 0) {
		unsigned long long v = lane < ROUTE_THREADS / 32 ? wsum[lane] : 0, in2 = v;
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			unsigned long long t = __shfl_up_sync(0xffffffffu, in2, o);
			if (lane >= o)
				in2 += t;
		}
		if (lane < ROUTE_THREADS / 32)
			wsum[lane] = in2 - v;
	}
	__syncthreads();
	const unsigned long long excl = wsum[warp] + incl - sum;
#pragma unroll
	for (int q = 0; q < ROUTE_PER; q++) {
		int e = base + q;
		if (e < a.experts) {
			unsigned long long p = excl + loc[q];
			int off = (int)(p >> 32), slot = (int)(p & 0xffffffffu);
			pos[e] = off;
			if (cnt[e] > 0) {
				a.slot_expert[slot] = e;
				a.slot_off[slot] = off;
			}
		}
	}
	if (tid == ROUTE_THREADS - 1) {
		unsigned long long tot = excl + sum;
		int n = (int)(tot & 0xffffffffu), np = (int)(tot >> 32);
		total_pairs = np;
		a.slot_off[n] = np;
		if (a.has_sh) {
			a.slot_expert[n] = -1;
			a.slot_off[n + 1] = np + a.M;
		}
		a.meta[0] = n;
	}
	__syncthreads();
	for (int i = tid; i < a.MK; i += ROUTE_THREADS) {
		int e = a.ids[i];
		if (e >= 0 && e < a.experts)
			a.pairs[atomicAdd(&pos[e], 1)] = i;
	}
	if (a.has_sh)
		for (int m = tid; m < a.M; m += ROUTE_THREADS)
			a.pairs[total_pairs + m] = a.MK + m;
	if (tid == 0)
		a.meta[1] = bad;
}

/* h[p][j] = bf16(silu(g) * u) for the gate and up sums g, u of pair p. */
__device__ __forceinline__ void moe_h_store(const moe_args &a, int p, int j, float g, float u)
{
	const float hv = g / (1.0f + expf(-g)) * u;
	__nv_bfloat16 hb = __float2bfloat16_rn(hv);
	uint16_t bits;
	memcpy(&bits, &hb, sizeof bits);
	a.h[(size_t)p * a.HS + j] = bits;
}

/* gate/up: h[pair][j] = bf16(silu(g_j . x) * (u_j . x)). Items: the shared
 * expert's thin tiles first (the longest start first), then (slot, tile of 8
 * gate and the same 8 up rows); the block's 8 warps split K, warp w taking
 * k tiles w, w + 8, ..., and meet in shared memory. */
__global__ void __launch_bounds__(MOE_THREADS, MOE_MIN_BLOCKS) moe_gemm1(const moe_args a)
{
	__shared__ float4 red[MOE_WARPS][32];
	__shared__ __align__(16) unsigned char rings[MOE_WARPS][RING_BYTES];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
	unsigned char *ring = rings[warp];
	const int n_routed = a.meta[0];
	const int sh_items = a.has_sh ? a.T1s : 0;
	const int items = sh_items + n_routed * a.T1;
	const int nk = warp < a.KT1 ? (a.KT1 - warp + MOE_WARPS - 1) / MOE_WARPS : 0;
	const uint64_t pol = l2_evict_first();

	for (int it = blockIdx.x; it < items; it += gridDim.x) {
		const bool sh = it < sh_items;
		const int slot = sh ? n_routed : (it - sh_items) / a.T1;
		const int t = sh ? it : (it - sh_items) % a.T1;
		const int beg = a.slot_off[slot], cnt = a.slot_off[slot + 1] - beg;
		const unsigned char *w =
			sh ? a.sh13 + ((size_t)t * a.KT1 + warp) * STAGE_BF
			   : a.w13 + (((size_t)a.slot_expert[slot] * a.T1 + t) * a.KT1 + warp) *
					     STAGE_Q4;

		for (int c0 = 0; c0 < cnt; c0 += 8) {
			const int col = c0 + r; /* this lane's B column */
			const int tok = col < cnt ? pair_token(a, a.pairs[beg + col]) : a.M;
			const uint16_t *xp = a.x + (size_t)tok * a.K1p + warp * 64 + 8 * c;
			float acc[4] = {0.f, 0.f, 0.f, 0.f};
			if (sh)
				tile_mma<false, MOE_WARPS * STAGE_BF, MOE_WARPS * 64>(acc, ring, w, xp,
										       nk, lane, pol);
			else
				tile_mma<true, MOE_WARPS * STAGE_Q4, MOE_WARPS * 64>(acc, ring, w, xp,
										      nk, lane, pol);
			red[warp][lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
			__syncthreads();
			if (warp == 0) {
				float4 s = red[0][lane];
#pragma unroll
				for (int w2 = 1; w2 < MOE_WARPS; w2++) {
					float4 o = red[w2][lane];
					s.x += o.x;
					s.y += o.y;
					s.z += o.z;
					s.w += o.w;
				}
				/* gate row r, up row r + 8 of the tile (thin: r < 2 only) */
				const int j = sh ? 2 * t + r : 8 * t + r;
				const bool row_ok = sh ? r < 2 && j < a.sh_inter : j < a.inter;
				if (row_ok && c0 + 2 * c < cnt)
					moe_h_store(a, a.pairs[beg + c0 + 2 * c], j, s.x, s.z);
				if (row_ok && c0 + 2 * c + 1 < cnt)
					moe_h_store(a, a.pairs[beg + c0 + 2 * c + 1], j, s.y, s.w);
			}
			__syncthreads();
		}
	}
}

/* y[p][row0], y[p][row1] for the pairs of columns 2c, 2c + 1 of chunk c0. */
__device__ __forceinline__ void moe_y_store(const moe_args &a, int beg, int cnt, int c0, int c,
					    int row0, int row1, const float acc[4])
{
#pragma unroll
	for (int q = 0; q < 2; q++) {
		const int cc = c0 + 2 * c + q;
		if (cc < cnt) {
			float *yr = a.y + (size_t)a.pairs[beg + cc] * a.hidden;
			if (row0 >= 0 && row0 < a.hidden)
				yr[row0] = acc[q];
			if (row1 >= 0 && row1 < a.hidden)
				yr[row1] = acc[2 + q];
		}
	}
}

/* gemm2's routed work as one warp walks it: jobs (item it of this block,
 * every gridDim.x: expert slot, block tb of its tiles; chunk c0 of the
 * slot's pairs) where the warp has a tile t = 8 tb + warp of 16 rows; w:
 * this lane's bytes of the job's first stage. The walk adds gq slots and gm
 * tile blocks per step (gridDim.x = gq NB2 + gm): no division in it. */
struct g2_job {
	int it, slot, tb, c0, beg, cnt, t;
	const unsigned char *w;
};

struct g2_walk {
	int sh_items, items, gq, gm, warp, lane;
};

/* j (at item j.it, slot j.slot, block j.tb) on the first job there or at a
 * later item of this block; false past the last item. */
__device__ __forceinline__ bool g2_seek(const moe_args &a, const g2_walk &k, g2_job &j)
{
	for (; j.it < k.items; j.it += gridDim.x) {
		const int t = j.tb * MOE_WARPS + k.warp;
		if (t < a.T2) {
			j.c0 = 0, j.t = t;
			j.beg = a.slot_off[j.slot];
			j.cnt = a.slot_off[j.slot + 1] - j.beg;
			j.w = a.w2 + ((size_t)a.slot_expert[j.slot] * a.T2 + t) * a.KT2 * STAGE_Q4 +
			      k.lane * 16;
			return true;
		}
		j.slot += k.gq, j.tb += k.gm;
		if (j.tb >= a.NB2)
			j.slot++, j.tb -= a.NB2;
	}
	j.c0 = j.beg = j.cnt = j.t = 0;
	j.w = a.w2; /* never read: a stage past the end copies nothing */
	return false;
}

/* The job after j: the next chunk of 8 pairs of its item, else the next
 * item's first; false past the last. */
__device__ __forceinline__ bool g2_next(const moe_args &a, const g2_walk &k, g2_job &j)
{
	j.c0 += 8;
	if (j.c0 < j.cnt)
		return true;
	j.it += gridDim.x, j.slot += k.gq, j.tb += k.gm;
	if (j.tb >= a.NB2)
		j.slot++, j.tb -= a.NB2;
	return g2_seek(a, k, j);
}

/* The producer's walk hands each job it enters to the consumer through a
 * per-warp queue of G2_JOBS entries (beg, cnt, c0, t): the producer is at
 * most NPAIR - 1 jobs ahead (one pair per job), so 4 entries never wrap onto
 * one still to be read. Every lane writes and reads its own copy of the same
 * values: no lane reads another's write. */
#define G2_JOBS 4

__device__ __forceinline__ void g2_push(int4 *jq, int &pk, const g2_job &j)
{
	jq[pk & (G2_JOBS - 1)] = make_int4(j.beg, j.cnt, j.c0, j.t);
	pk++;
}

/* One pair of gemm2's routed stream: the producer's next pair at psrc
 * (prem of its job's stages left: zeros past them, and when it has no job)
 * into ring pair ps, then the consumer's pair (ring pair cs) times the
 * activations at xq into acc; each pointer moves on one pair. */
__device__ __forceinline__ void g2_pair(unsigned char *ring, const unsigned char *&psrc, int &prem,
					int &ps, int &cs, const uint16_t *&xq, float acc[4], int lane,
					int sdst, int sbytes, uint64_t pol)
{
	cp_async_wait<NPAIR - 2>();
	__syncwarp(); /* every lane is past the slots of the pair before */
	pair_issue<true, STAGE_Q4>(ring + 2 * ps * SLOT, psrc, 0, prem, lane, sdst, sbytes, pol);
	psrc += 2 * STAGE_Q4, prem -= 2;
	ps = (ps + 1) & (NPAIR - 1);
	uint4 x[4];
#pragma unroll
	for (int q = 0; q < 4; q++)
		x[q] = *(const uint4 *)(xq + (q >> 1) * 64 + (q & 1) * 32);
	xq += 128;
	const unsigned char *b = ring + 2 * cs * SLOT;
	cs = (cs + 1) & (NPAIR - 1);
	stage_mma<true>(acc, b, x, lane);
	stage_mma<true>(acc, b + SLOT, x + 2, lane);
}

/* down: y[pair][row] = W2[e][row] . h[pair]. Items: the shared expert's
 * blocks of 8 thin tiles (4 rows each) first, then (slot, 8 tiles of 16
 * rows); a warp per tile over the whole K. The routed items are one stream
 * per warp: the ring runs NPAIR - 1 pairs of stages ahead across jobs, so
 * the next job's weights are in flight while a job's last stages and its
 * epilogue run (at inter 256 a job is 2 pairs: the ring holds the next 1.5
 * jobs); streamed weights are evict-first in L2. */
__global__ void __launch_bounds__(MOE_THREADS, MOE_MIN_BLOCKS) moe_gemm2(const moe_args a)
{
	__shared__ __align__(16) unsigned char rings[MOE_WARPS][RING_BYTES];
	__shared__ int4 jqs[MOE_WARPS][G2_JOBS];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
	unsigned char *ring = rings[warp];
	const int n_routed = a.meta[0];
	const int sh_items = a.has_sh ? a.NB2s : 0;
	const int items = sh_items + n_routed * a.NB2;
	const uint64_t pol = l2_evict_first();
	int it = blockIdx.x;

	for (; it < sh_items; it += gridDim.x) { /* the shared expert: thin bf16 tiles */
		const int t = it * MOE_WARPS + warp;
		if (t >= a.T2s)
			continue;
		const int beg = a.slot_off[n_routed], cnt = a.slot_off[n_routed + 1] - beg;
		const unsigned char *w = a.sh2 + (size_t)t * a.KT2s * STAGE_BF;
		/* the rows of this lane's C fragment (-1: a repeated thin row) */
		const int row0 = r < 2 ? 4 * t + r : -1, row1 = r < 2 ? 4 * t + 2 + r : -1;
		for (int c0 = 0; c0 < cnt; c0 += 8) {
			const int col = c0 + r;
			const size_t hrow = (size_t)(col < cnt ? a.pairs[beg + col] : a.npairs);
			float acc[4] = {0.f, 0.f, 0.f, 0.f};
			tile_mma<false, STAGE_BF, 64>(acc, ring, w, a.h + hrow * a.HS + 8 * c, a.KT2s,
						      lane, pol);
			moe_y_store(a, beg, cnt, c0, c, row0, row1, acc);
		}
	}

	/* the routed experts: producer pj (pair pp of its job) NPAIR - 1 pairs
	 * of ring ahead of the consumer, which takes the jobs pk it entered
	 * from the queue (job ck); the producer finishes a job at the same pair
	 * of every consumer job (pstar), where it moves to its next job between
	 * the two loops: no walk inside a hot loop, and one walk per job */
	const int np = (a.KT2 + 1) / 2, sdst = lane < 4 ? 512 + lane * 16 : STAGE_Q4;
	const int sbytes = lane < 4 ? 16 : 0, pstar = (np - 1 - (NPAIR - 1) % np) % np;
	const g2_walk k = {sh_items, items, (int)gridDim.x / a.NB2, (int)gridDim.x % a.NB2, warp,
			   lane};
	int4 *jq = jqs[warp];
	g2_job pj;
	pj.it = it, pj.slot = (it - sh_items) / a.NB2, pj.tb = (it - sh_items) % a.NB2;
	bool plive = g2_seek(a, k, pj);
	int ps = NPAIR - 1, cs = 0, pk = 0, ck = 0, prem = plive ? a.KT2 : 0;
	const unsigned char *psrc = pj.w;
	if (plive)
		g2_push(jq, pk, pj);
#pragma unroll
	for (int q = 0; q < NPAIR - 1; q++) {
		pair_issue<true, STAGE_Q4>(ring + 2 * q * SLOT, psrc, 0, prem, lane, sdst, sbytes, pol);
		psrc += 2 * STAGE_Q4, prem -= 2;
		if (plive && prem <= 0 && (plive = g2_next(a, k, pj)))
			g2_push(jq, pk, pj), psrc = pj.w, prem = a.KT2;
	}
	for (; ck < pk; ck++) {
		const int4 e = jq[ck & (G2_JOBS - 1)]; /* beg, cnt, c0, t */
		const int col = e.z + r;
		const size_t hrow = (size_t)(col < e.y ? a.pairs[e.x + col] : a.npairs);
		const uint16_t *xq = a.h + hrow * a.HS + 8 * c;
		float acc[4] = {0.f, 0.f, 0.f, 0.f};
		int p = 0;
		for (; p <= pstar; p++)
			g2_pair(ring, psrc, prem, ps, cs, xq, acc, lane, sdst, sbytes, pol);
		if (plive && (plive = g2_next(a, k, pj)))
			g2_push(jq, pk, pj), psrc = pj.w, prem = a.KT2;
		for (; p < np; p++)
			g2_pair(ring, psrc, prem, ps, cs, xq, acc, lane, sdst, sbytes, pol);
		moe_y_store(a, e.x, e.y, e.z, c, 16 * e.w + r, 16 * e.w + r + 8, acc);
	}
	cp_async_wait<0>();
}

/* out[m][o] = sum over the token's slots, in order, then the shared expert. */
__global__ void moe_finalize(const moe_args a)
{
	const long long n = (long long)a.M * a.hidden;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
	     i += (long long)gridDim.x * blockDim.x) {
		const int m = (int)(i / a.hidden), o = (int)(i % a.hidden);
		float s = 0.f;
		for (int j = 0; j < a.topk; j++) {
			const int p = m * a.topk + j;
			if (a.ids[p] >= 0 && a.ids[p] < a.experts)
				s += a.wts[p] * a.y[(size_t)p * a.hidden + o];
		}
		if (a.has_sh)
			s += a.y[(size_t)(a.MK + m) * a.hidden + o];
		a.out[i] = s;
	}
}

/* ---- host side ---- */

static void moe_teardown(void *dev)
{
	struct moe_dev *d = (struct moe_dev *)dev;
	if (!d)
		return;
	for (int i = 0; i < d->nbufs; i++)
		cu_free(d->bufs[i]);
	free(d);
}

/* A device buffer owned by d (freed by teardown). */
static int moe_buf(struct moe_dev *d, void **p, size_t bytes, const void *host)
{
	int rc = cu_upload(p, host, bytes);
	if (rc)
		return rc;
	d->bufs[d->nbufs++] = *p;
	return 0;
}

/* A grid for a grid-stride kernel over n items. */
static int stride_grid(long long n)
{
	long long g = (n + 255) / 256, cap = 64LL * cu_sm_count();
	return (int)(g < 1 ? 1 : g > cap ? cap : g);
}

/* Uploads the raw INT4 matrix and its scales and repacks both into one
 * stream of 576-byte stages (*dw). */
static int moe_pack_q4_to(struct moe_dev *d, const unsigned char **dw, const uint8_t *w,
			  const bf16_t *s, int E, int src_rows, int K, int group, int ntiles, int KT,
			  int mode, int n)
{
	void *rw = NULL, *rs = NULL, *out = NULL;
	size_t wbytes = (size_t)E * src_rows * (K / 2), sbytes = (size_t)E * src_rows * (K / group) * 2;
	long long stages = (long long)E * ntiles * KT;
	int rc;

	if ((rc = moe_buf(d, &out, (size_t)stages * STAGE_Q4, NULL)))
		return rc;
	*dw = (const unsigned char *)out;
	if ((rc = cu_upload(&rw, w, wbytes)) || (rc = cu_upload(&rs, s, sbytes)))
		goto done;
	if ((rc = CU(cu_launch(moe_pack_q4, stride_grid(stages * 128), 256, 0, 0, (uint32_t *)out,
			       (const uint8_t *)rw, E, src_rows, K, ntiles, KT, mode, n))) ||
	    (rc = CU(cu_launch(moe_pack_scales, stride_grid(stages * 32), 256, 0, 0,
			       (uint16_t *)out, (const uint16_t *)rs, E, src_rows, K, group, ntiles,
			       KT, mode, n))))
		goto done;
	rc = CU(cudaDeviceSynchronize());
done:
	cu_free(rw);
	cu_free(rs);
	return rc;
}

/* Uploads a bf16 matrix and repacks it into thin tiles of 512-byte stages. */
static int moe_pack_bf16_to(struct moe_dev *d, const unsigned char **dw, const bf16_t *w,
			    int src_rows, int K, int ntiles, int KT, int mode, int n)
{
	void *rw = NULL, *out = NULL;
	long long vals = (long long)ntiles * KT * (STAGE_BF / 2);
	int rc;

	if ((rc = moe_buf(d, &out, (size_t)vals * 2, NULL)))
		return rc;
	*dw = (const unsigned char *)out;
	if ((rc = cu_upload(&rw, w, (size_t)src_rows * K * 2)))
		return rc;
	rc = CU(cu_launch(moe_pack_bf16, stride_grid(vals), 256, 0, 0, (uint16_t *)out,
			  (const uint16_t *)rw, K, ntiles, KT, mode, n));
	if (!rc)
		rc = CU(cudaDeviceSynchronize());
	cu_free(rw);
	return rc;
}

/* Persistent grid: as many blocks as fit at once, never more than items. */
template <typename K> static int persistent_grid(K kernel, long long items, int *grid)
{
	int per_sm = 0;
	CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, MOE_THREADS, 0));
	long long g = (long long)(per_sm > 0 ? per_sm : 1) * cu_sm_count();
	if (items < g)
		g = items;
	*grid = (int)(g < 1 ? 1 : g);
	return 0;
}

/* The sizes of a, from the instance. */
static void moe_sizes(struct moe_args *a, const struct moe_w4a16_inst *in)
{
	a->M = in->M;
	a->hidden = in->hidden;
	a->inter = in->inter;
	a->sh_inter = in->shared_inter > 0 && in->sh_w13 && in->sh_w2 ? in->shared_inter : 0;
	a->has_sh = a->sh_inter > 0;
	a->experts = in->experts;
	a->topk = in->topk;
	a->MK = in->M * in->topk;
	a->K1p = round_up(in->hidden, 64);
	a->KT1 = a->K1p / 64;
	a->T1 = cdiv(in->inter, 8);
	a->T1s = cdiv(a->sh_inter > 0 ? a->sh_inter : 1, 2);
	a->KT2 = round_up(in->inter, 64) / 64;
	a->KT2s = round_up(a->sh_inter > 0 ? a->sh_inter : 1, 64) / 64;
	a->T2 = cdiv(in->hidden, 16);
	a->NB2 = cdiv(a->T2, MOE_WARPS);
	a->T2s = cdiv(in->hidden, 4);
	a->NB2s = cdiv(a->T2s, MOE_WARPS);
	a->HS = 64 * (a->KT2 > a->KT2s ? a->KT2 : a->KT2s);
	a->npairs = a->MK + (a->has_sh ? a->M : 0);
}

/* Every weight, repacked on the device. */
static int moe_weights(struct moe_dev *d, const struct moe_w4a16_inst *in)
{
	struct moe_args *a = &d->a;
	int rc;
	if ((rc = moe_pack_q4_to(d, &a->w13, in->w13, in->s13, in->experts, 2 * in->inter,
				 in->hidden, in->group, a->T1, a->KT1, 0, in->inter)) ||
	    (rc = moe_pack_q4_to(d, &a->w2, in->w2, in->s2, in->experts, in->hidden, in->inter,
				 in->group, a->T2, a->KT2, 1, in->hidden)))
		return rc;
	if (a->has_sh &&
	    ((rc = moe_pack_bf16_to(d, &a->sh13, in->sh_w13, 2 * a->sh_inter, in->hidden, a->T1s,
				    a->KT1, 0, a->sh_inter)) ||
	     (rc = moe_pack_bf16_to(d, &a->sh2, in->sh_w2, in->hidden, a->sh_inter, a->T2s,
				    a->KT2s, 1, in->hidden))))
		return rc;
	return 0;
}

/* Elements of zeros after the last row of x and of h: tile_mma reads up to
 * three stages past the end of a row (stages past the end of a stream). */
#define MOE_SLACK 2048

/* Activations (x padded to K1p, one zero row more, the slack), routing and
 * the intermediate buffers; outputs poisoned. */
static int moe_buffers(struct moe_dev *d, const struct moe_w4a16_inst *in)
{
	struct moe_args *a = &d->a;
	const size_t xn = (size_t)(a->M + 1) * a->K1p + MOE_SLACK;
	const size_t hn = (size_t)(a->npairs + 1) * a->HS + MOE_SLACK;
	uint16_t *xp = (uint16_t *)calloc(xn, 2);
	void *p;
	int rc;

	if (!xp)
		return err_nomem();
	for (int m = 0; m < a->M; m++)
		memcpy(xp + (size_t)m * a->K1p, in->x + (size_t)m * in->hidden, (size_t)in->hidden * 2);
	rc = moe_buf(d, &p, xn * 2, xp);
	free(xp);
	if (rc)
		return rc;
	a->x = (const uint16_t *)p;
	if ((rc = moe_buf(d, &p, (size_t)a->MK * 4, in->topk_ids)))
		return rc;
	a->ids = (const int32_t *)p;
	if ((rc = moe_buf(d, &p, (size_t)a->MK * 4, in->topk_w)))
		return rc;
	a->wts = (const float *)p;
	if ((rc = moe_buf(d, (void **)&a->meta, 2 * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->slot_expert, (size_t)d->max_slots * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->slot_off, (size_t)(d->max_slots + 1) * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->pairs, (size_t)a->npairs * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->h, hn * 2, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->y, (size_t)a->npairs * a->hidden * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->out, (size_t)a->M * a->hidden * 4, NULL)))
		return rc;
	/* h's padding columns, zero row and slack are read and never written:
	 * zero once; the output starts as NaN, so an element the kernels miss
	 * shows */
	if ((rc = CU(cudaMemset(a->h, 0, hn * 2))) ||
	    (rc = CU(cudaMemset(a->meta, 0, 8))) ||
	    (rc = CU(cudaMemset(a->out, 0xff, (size_t)a->M * a->hidden * 4))))
		return rc;
	return 0;
}

static int moe_setup(void **dev, const void *inst)
{
	const struct moe_w4a16_inst *in = (const struct moe_w4a16_inst *)inst;
	struct moe_dev *d;
	int rc;

	*dev = NULL;
	if (in->group % 32 || in->hidden % in->group || in->inter % in->group)
		return err_set(DDT_EINPUT, "unsupported: moe_w4a16 CUDA needs group %% 32 == 0 "
			       "dividing hidden and inter (group %d, hidden %d, inter %d)",
			       in->group, in->hidden, in->inter);
	if (in->experts > ROUTE_THREADS * ROUTE_PER)
		return err_set(DDT_EINPUT, "unsupported: moe_w4a16 CUDA routes at most %d experts "
			       "per GPU (got %d)", ROUTE_THREADS * ROUTE_PER, in->experts);
	if (!(d = (struct moe_dev *)calloc(1, sizeof *d)))
		return err_nomem();
	struct moe_args *a = &d->a;
	moe_sizes(a, in);
	d->max_slots = (a->experts < a->MK ? a->experts : a->MK) + 1;
	const long long up1 = (long long)(d->max_slots - 1) * a->T1 + (a->has_sh ? a->T1s : 0);
	const long long up2 = (long long)(d->max_slots - 1) * a->NB2 + (a->has_sh ? a->NB2s : 0);
	if ((rc = moe_weights(d, in)) || (rc = moe_buffers(d, in)) ||
	    (rc = cu_smem_allow(moe_route, (size_t)2 * a->experts * sizeof(int), "moe_w4a16")) ||
	    (rc = persistent_grid(moe_gemm1, up1, &d->grid1)) ||
	    (rc = persistent_grid(moe_gemm2, up2, &d->grid2))) {
		moe_teardown(d);
		return rc;
	}
	*dev = d;
	return 0;
}

static int moe_run(void *dev, void *stream)
{
	struct moe_dev *d = (struct moe_dev *)dev;
	cudaStream_t s = (cudaStream_t)stream;
	size_t route_smem = (size_t)2 * d->a.experts * sizeof(int);

	CK(cu_launch(moe_route, 1, ROUTE_THREADS, route_smem, s, d->a));
	CK(cu_launch(moe_gemm1, d->grid1, MOE_THREADS, 0, s, d->a));
	CK(cu_launch(moe_gemm2, d->grid2, MOE_THREADS, 0, s, d->a));
	CK(cu_launch(moe_finalize, stride_grid((long long)d->a.M * d->a.hidden), 256, 0, s, d->a));
	return 0;
}

static int moe_fetch(void *dev, void *inst)
{
	struct moe_dev *d = (struct moe_dev *)dev;
	struct moe_w4a16_inst *in = (struct moe_w4a16_inst *)inst;
	int32_t meta[2];

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(meta, d->a.meta, sizeof meta, cudaMemcpyDeviceToHost));
	if (meta[1])
		return err_set(DDT_EINPUT, "moe_w4a16: a topk id is >= experts (%d)", d->a.experts);
	CK(cudaMemcpy(in->out, d->a.out, (size_t)d->a.M * d->a.hidden * 4, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" const struct op_cuda CU_OP_TABLE(moe_w4a16) = {moe_setup, moe_run, moe_fetch, moe_teardown};
