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
#define ROUTE_THREADS 512
#define ROUTE_PER 8 /* experts per route thread: at most 4096 experts */

/* Everything the kernels read, passed by value. */
struct moe_args {
	int M, hidden, inter, sh_inter, experts, topk, MK;
	int K1p, KT1;      /* hidden padded to 64, its 64-wide k tiles */
	int T1, T1s;       /* gate/up tiles of 8 rows: routed, shared */
	int KT2, KT2s;     /* inter (shared inter) padded to 64, in k tiles */
	int T2, NB2;       /* down: tiles of 16 hidden rows, blocks of MOE_WARPS tiles */
	int HS;            /* row stride of h (elements) */
	int has_sh;
	const uint4 *w13;  /* [E][T1][KT1][32] int4 tiles */
	const uint2 *s13;  /* [E][T1][KT1][8] scale quads */
	const uint4 *w2;   /* [E][T2][KT2][32] */
	const uint2 *s2;   /* [E][T2][KT2][8] */
	const uint4 *sh13; /* [T1s][KT1][4][32] bf16 tiles */
	const uint4 *sh2;  /* [T2][KT2s][4][32] */
	const uint16_t *x; /* [M][K1p] bf16 */
	const int32_t *ids;
	const float *wts;
	int32_t *meta;     /* [0] routed slots, [1] bad expert id seen */
	int32_t *slot_expert, *slot_off, *pairs;
	uint16_t *h;       /* [pairs][HS] bf16 */
	float *y;          /* [pairs][hidden] */
	float *out;        /* [M][hidden] */
};

struct moe_dev {
	struct moe_args a;
	int grid1, grid2, max_slots;
	void *bufs[24];
	int nbufs;
};

/* ---- repacking ---- */

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
		long long rest = i >> 7;
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
		dw[i] = v;
	}
}

/* Scale quads: per (tile, k tile) [8 r][s(r,g0), s(r,g1), s(r+8,g0), s(r+8,g1)]. */
__global__ void moe_pack_scales(uint16_t *ds, const uint16_t *s, int E, int src_rows, int K,
				int group, int ntiles, int KT, int mode, int n)
{
	long long total = (long long)E * ntiles * KT * 32;
	int ng = K / group;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int q = (int)(i & 3), r = (int)((i >> 2) & 7);
		long long rest = i >> 5;
		int kt = (int)(rest % KT);
		rest /= KT;
		int t = (int)(rest % ntiles), e = (int)(rest / ntiles);
		int row = tile_row(mode, t, q < 2 ? r : r + 8, n);
		int k = kt * 64 + 32 * (q & 1);
		uint16_t v = 0;
		if (row >= 0 && k < K)
			v = s[((long long)e * src_rows + row) * ng + k / group];
		ds[i] = v;
	}
}

/* bf16 tiles: per (tile, k tile, block j) 32 lanes x 8 values a0..a7. */
__global__ void moe_pack_bf16(uint16_t *dw, const uint16_t *w, int K, int ntiles, int KT, int mode,
			      int n)
{
	long long total = (long long)ntiles * KT * 4 * 32 * 8;
	for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
	     i += (long long)gridDim.x * blockDim.x) {
		int v = (int)(i & 7), l = (int)((i >> 3) & 31), j = (int)((i >> 8) & 3);
		long long rest = i >> 10;
		int kt = (int)(rest % KT), t = (int)(rest / KT);
		int r = l >> 2, c = l & 3, g = j >> 1, hh = j & 1;
		int kb = kt * 64 + 32 * g + 8 * c + 4 * hh;
		/* a0..a7: (r,kb) (r,kb+1) (r+8,kb) (r+8,kb+1) (r,kb+2) (r,kb+3) (r+8,kb+2) (r+8,kb+3) */
		int row = tile_row(mode, t, (v & 2) ? r + 8 : r, n);
		int k = kb + (v & 1) + ((v & 4) ? 2 : 0);
		dw[i] = row >= 0 && k < K ? w[(long long)row * K + k] : (uint16_t)0;
	}
}

/* ---- the kernels ---- */

/* Per-warp shared-memory ring of weight stages fed by cp.async: 8 stages of
 * an INT4 k tile (512 B weights + 64 B scales) or 2 of a bf16 one (2 KB), so
 * ~4 KB of weights per warp are always in flight without holding registers. */
#define RING_BYTES 4608
#define NS_Q4 8
#define NS_BF 2

/* Accumulates one 16-row tile over k tiles kt0, kt0+step, ... < kt_end into
 * the warp's C fragment acc (rows lane/4 and lane/4+8, columns
 * 2(lane%4)+{0,1}). arow is the activation row of the token this lane feeds
 * as B column lane/4 (has = 0: a zero column); activations come one k tile
 * ahead through registers (they are L1/L2 hits, shared by many warps). */
template <bool Q4>
__device__ __forceinline__ void tile_mma(float acc[4], unsigned char *ring,
					 const uint4 *__restrict__ wt, const uint2 *__restrict__ st,
					 const uint16_t *arow, bool has, int kt0, int kt_end, int step,
					 int lane)
{
	constexpr int NS = Q4 ? NS_Q4 : NS_BF;
	constexpr int STB = Q4 ? 576 : 2048;
	const int r = lane >> 2, c = lane & 3;
	const int n = kt_end > kt0 ? (kt_end - kt0 + step - 1) / step : 0;

	auto issue = [&](int i) {
		const int k = kt0 + i * step;
		unsigned char *b = ring + (i % NS) * STB;
		if constexpr (Q4) {
			cp_async16(b + lane * 16, wt + (size_t)k * 32 + lane, 16);
			if (lane < 4)
				cp_async16(b + 512 + lane * 16,
					   (const unsigned char *)(st + (size_t)k * 8) + lane * 16, 16);
		} else {
#pragma unroll
			for (int j = 0; j < 4; j++)
				cp_async16(b + (j * 32 + lane) * 16, wt + ((size_t)k * 4 + j) * 32 + lane,
					   16);
		}
	};
	auto load_x = [&](int i, uint4 x[2]) {
		const int k = kt0 + i * step;
#pragma unroll
		for (int g = 0; g < 2; g++)
			x[g] = has ? *(const uint4 *)(arow + k * 64 + 32 * g + 8 * c)
				   : make_uint4(0, 0, 0, 0);
	};

#pragma unroll
	for (int s = 0; s < NS - 1; s++) {
		if (s < n)
			issue(s);
		cp_async_commit();
	}
	uint4 xn[2] = {make_uint4(0, 0, 0, 0), make_uint4(0, 0, 0, 0)};
	if (n > 0)
		load_x(0, xn);
	for (int i = 0; i < n; i++) {
		__syncwarp(); /* every lane is done with the stage refilled next */
		if (i + NS - 1 < n)
			issue(i + NS - 1);
		cp_async_commit();
		const uint4 x[2] = {xn[0], xn[1]};
		if (i + 1 < n)
			load_x(i + 1, xn);
		cp_async_wait<NS - 1>();
		__syncwarp(); /* stage i, copied by every lane, is visible to all */
		const unsigned char *b = ring + (i % NS) * STB;
		if constexpr (Q4) {
			const uint4 w = *(const uint4 *)(b + lane * 16);
			const uint2 sq = *(const uint2 *)(b + 512 + r * 8);
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
				const uint4 w = *(const uint4 *)(b + (j * 32 + lane) * 16);
				const uint32_t a[4] = {w.x, w.y, w.z, w.w};
				if (j & 1)
					mma_bf16(acc, a, x[j >> 1].z, x[j >> 1].w);
				else
					mma_bf16(acc, a, x[j >> 1].x, x[j >> 1].y);
			}
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

/* gate/up: h[pair][j] = bf16(silu(g_j . x) * (u_j . x)). */
__global__ void __launch_bounds__(MOE_THREADS) moe_gemm1(const moe_args a)
{
	__shared__ float4 red[MOE_WARPS][32];
	__shared__ __align__(16) unsigned char rings[MOE_WARPS][RING_BYTES];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
	unsigned char *ring = rings[warp];
	const int n_routed = a.meta[0];
	const int routed_items = n_routed * a.T1;
	const int items = routed_items + (a.has_sh ? a.T1s : 0);

	for (int it = blockIdx.x; it < items; it += gridDim.x) {
		const bool sh = it >= routed_items;
		const int slot = sh ? n_routed : it / a.T1;
		const int t = sh ? it - routed_items : it % a.T1;
		const int rows = sh ? a.sh_inter : a.inter;
		const int beg = a.slot_off[slot], cnt = a.slot_off[slot + 1] - beg;
		const int e = sh ? 0 : a.slot_expert[slot];
		const size_t tile = (size_t)e * a.T1 + t;

		for (int c0 = 0; c0 < cnt; c0 += 8) {
			const int col = c0 + r; /* this lane's B column */
			const bool has = col < cnt;
			const uint16_t *arow =
				a.x + (size_t)(has ? pair_token(a, a.pairs[beg + col]) : 0) * a.K1p;
			float acc[4] = {0.f, 0.f, 0.f, 0.f};
			if (sh)
				tile_mma<false>(acc, ring, a.sh13 + (size_t)t * a.KT1 * 128, nullptr,
						arow, has, warp, a.KT1, MOE_WARPS, lane);
			else
				tile_mma<true>(acc, ring, a.w13 + tile * a.KT1 * 32,
					       a.s13 + tile * a.KT1 * 8, arow, has, warp, a.KT1,
					       MOE_WARPS, lane);
			red[warp][lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
			__syncthreads();
			if (warp == 0) {
				float4 s = red[0][lane];
#pragma unroll
				for (int w = 1; w < MOE_WARPS; w++) {
					float4 o = red[w][lane];
					s.x += o.x;
					s.y += o.y;
					s.z += o.z;
					s.w += o.w;
				}
				const int j = 8 * t + r; /* gate row r, up row r + 8 of the tile */
				const float g[2] = {s.x, s.y}, u[2] = {s.z, s.w};
#pragma unroll
				for (int q = 0; q < 2; q++) {
					const int cc = c0 + 2 * c + q;
					if (cc < cnt && j < rows) {
						const int p = a.pairs[beg + cc];
						const float hv = g[q] / (1.0f + expf(-g[q])) * u[q];
						__nv_bfloat16 hb = __float2bfloat16_rn(hv);
						uint16_t bits;
						memcpy(&bits, &hb, sizeof bits);
						a.h[(size_t)p * a.HS + j] = bits;
					}
				}
			}
			__syncthreads();
		}
	}
}

/* down: y[pair][row] = W2[e][row] . h[pair] (a warp per 16 rows). */
__global__ void __launch_bounds__(MOE_THREADS) moe_gemm2(const moe_args a)
{
	__shared__ __align__(16) unsigned char rings[MOE_WARPS][RING_BYTES];
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
	unsigned char *ring = rings[warp];
	const int n_routed = a.meta[0];
	const int items = (n_routed + (a.has_sh ? 1 : 0)) * a.NB2;

	for (int it = blockIdx.x; it < items; it += gridDim.x) {
		const int slot = it / a.NB2;
		const int t = (it % a.NB2) * MOE_WARPS + warp;
		if (t >= a.T2)
			continue;
		const bool sh = slot == n_routed;
		const int beg = a.slot_off[slot], cnt = a.slot_off[slot + 1] - beg;
		const int e = sh ? 0 : a.slot_expert[slot];
		const size_t tile = (size_t)e * a.T2 + t;
		const int row0 = 16 * t + r, row1 = row0 + 8;

		for (int c0 = 0; c0 < cnt; c0 += 8) {
			const int col = c0 + r;
			const bool has = col < cnt;
			const uint16_t *arow = a.h + (size_t)(has ? a.pairs[beg + col] : 0) * a.HS;
			float acc[4] = {0.f, 0.f, 0.f, 0.f};
			if (sh)
				tile_mma<false>(acc, ring, a.sh2 + (size_t)t * a.KT2s * 128, nullptr,
						arow, has, 0, a.KT2s, 1, lane);
			else
				tile_mma<true>(acc, ring, a.w2 + tile * a.KT2 * 32,
					       a.s2 + tile * a.KT2 * 8, arow, has, 0, a.KT2, 1, lane);
#pragma unroll
			for (int q = 0; q < 2; q++) {
				const int cc = c0 + 2 * c + q;
				if (cc < cnt) {
					float *yr = a.y + (size_t)a.pairs[beg + cc] * a.hidden;
					if (row0 < a.hidden)
						yr[row0] = acc[q];
					if (row1 < a.hidden)
						yr[row1] = acc[2 + q];
				}
			}
		}
	}
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

/* Uploads the raw INT4 matrix and its scales and repacks them into tiles. */
static int moe_pack_q4_to(struct moe_dev *d, void **dw, void **ds, const uint8_t *w,
			  const bf16_t *s, int E, int src_rows, int K, int group, int ntiles, int KT,
			  int mode, int n)
{
	void *rw = NULL, *rs = NULL;
	size_t wbytes = (size_t)E * src_rows * (K / 2), sbytes = (size_t)E * src_rows * (K / group) * 2;
	long long words = (long long)E * ntiles * KT * 128, quads = (long long)E * ntiles * KT * 32;
	int rc;

	if ((rc = moe_buf(d, dw, (size_t)words * 4, NULL)) ||
	    (rc = moe_buf(d, ds, (size_t)quads * 2, NULL)))
		return rc;
	if ((rc = cu_upload(&rw, w, wbytes)) || (rc = cu_upload(&rs, s, sbytes)))
		goto done;
	if ((rc = CU(cu_launch(moe_pack_q4, stride_grid(words), 256, 0, 0, (uint32_t *)*dw,
			       (const uint8_t *)rw, E, src_rows, K, ntiles, KT, mode, n))) ||
	    (rc = CU(cu_launch(moe_pack_scales, stride_grid(quads), 256, 0, 0, (uint16_t *)*ds,
			       (const uint16_t *)rs, E, src_rows, K, group, ntiles, KT, mode, n))))
		goto done;
	rc = CU(cudaDeviceSynchronize());
done:
	cu_free(rw);
	cu_free(rs);
	return rc;
}

static int moe_pack_bf16_to(struct moe_dev *d, void **dw, const bf16_t *w, int src_rows, int K,
			    int ntiles, int KT, int mode, int n)
{
	void *rw = NULL;
	long long vals = (long long)ntiles * KT * 1024;
	int rc;

	if ((rc = moe_buf(d, dw, (size_t)vals * 2, NULL)))
		return rc;
	if ((rc = cu_upload(&rw, w, (size_t)src_rows * K * 2)))
		return rc;
	rc = CU(cu_launch(moe_pack_bf16, stride_grid(vals), 256, 0, 0, (uint16_t *)*dw,
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
	a->T1s = cdiv(a->sh_inter > 0 ? a->sh_inter : 1, 8);
	a->KT2 = round_up(in->inter, 64) / 64;
	a->KT2s = round_up(a->sh_inter > 0 ? a->sh_inter : 1, 64) / 64;
	a->T2 = cdiv(in->hidden, 16);
	a->NB2 = cdiv(a->T2, MOE_WARPS);
	a->HS = 64 * (a->KT2 > a->KT2s ? a->KT2 : a->KT2s);
	const int npairs = a->MK + (a->has_sh ? a->M : 0);
	d->max_slots = (a->experts < a->MK ? a->experts : a->MK) + 1;

	void *p;
	uint16_t *xp = NULL;
	if ((rc = moe_pack_q4_to(d, &p, (void **)&a->s13, in->w13, in->s13, in->experts,
				 2 * in->inter, in->hidden, in->group, a->T1, a->KT1, 0, in->inter)))
		goto fail;
	a->w13 = (const uint4 *)p;
	if ((rc = moe_pack_q4_to(d, &p, (void **)&a->s2, in->w2, in->s2, in->experts, in->hidden,
				 in->inter, in->group, a->T2, a->KT2, 1, in->hidden)))
		goto fail;
	a->w2 = (const uint4 *)p;
	if (a->has_sh) {
		if ((rc = moe_pack_bf16_to(d, &p, in->sh_w13, 2 * a->sh_inter, in->hidden, a->T1s,
					   a->KT1, 0, a->sh_inter)))
			goto fail;
		a->sh13 = (const uint4 *)p;
		if ((rc = moe_pack_bf16_to(d, &p, in->sh_w2, in->hidden, a->sh_inter, a->T2,
					   a->KT2s, 1, in->hidden)))
			goto fail;
		a->sh2 = (const uint4 *)p;
	}
	/* x padded to K1p with zeros */
	if (!(xp = (uint16_t *)calloc((size_t)a->M * a->K1p, 2))) {
		rc = err_nomem();
		goto fail;
	}
	for (int m = 0; m < a->M; m++)
		memcpy(xp + (size_t)m * a->K1p, in->x + (size_t)m * in->hidden, (size_t)in->hidden * 2);
	if ((rc = moe_buf(d, &p, (size_t)a->M * a->K1p * 2, xp)))
		goto fail;
	a->x = (const uint16_t *)p;
	if ((rc = moe_buf(d, &p, (size_t)a->MK * 4, in->topk_ids)))
		goto fail;
	a->ids = (const int32_t *)p;
	if ((rc = moe_buf(d, &p, (size_t)a->MK * 4, in->topk_w)))
		goto fail;
	a->wts = (const float *)p;
	if ((rc = moe_buf(d, (void **)&a->meta, 2 * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->slot_expert, (size_t)d->max_slots * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->slot_off, (size_t)(d->max_slots + 1) * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->pairs, (size_t)npairs * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->h, (size_t)npairs * a->HS * 2, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->y, (size_t)npairs * a->hidden * 4, NULL)) ||
	    (rc = moe_buf(d, (void **)&a->out, (size_t)a->M * a->hidden * 4, NULL)))
		goto fail;
	/* h's padding columns are read by gemm2 and never written: zero once */
	/* outputs start as NaN: an element the kernels miss cannot look right */
	if ((rc = CU(cudaMemset(a->h, 0, (size_t)npairs * a->HS * 2))) ||
	    (rc = CU(cudaMemset(a->meta, 0, 8))) ||
	    (rc = CU(cudaMemset(a->out, 0xff, (size_t)a->M * a->hidden * 4))))
		goto fail;
	{
		long long up1 = (long long)(d->max_slots - 1) * a->T1 + (a->has_sh ? a->T1s : 0);
		long long up2 = (long long)d->max_slots * a->NB2;
		if ((rc = cu_smem_allow(moe_route, (size_t)2 * a->experts * sizeof(int), "moe_w4a16")) ||
		    (rc = persistent_grid(moe_gemm1, up1, &d->grid1)) ||
		    (rc = persistent_grid(moe_gemm2, up2, &d->grid2)))
			goto fail;
	}
	free(xp);
	*dev = d;
	return 0;
fail:
	free(xp);
	moe_teardown(d);
	return rc;
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
