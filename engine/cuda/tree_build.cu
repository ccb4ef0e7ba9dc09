/* tree_build.cu - the DDTree on the GPU: top-K and logsumexp over the vocabulary, then the best-first heap and the mask, never visiting the CPU.
 *
 * What it computes: engine/ops/tree_build.h.
 *
 * How (two launches):
 *   1. tb_scan, grid (segments, L), 8 warps: each warp streams its slice of
 *      one position's logits once (8 coalesced loads in flight per lane),
 *      keeps an online (max, sum of exp) per lane and a sorted top-K list
 *      spread over the warp's registers (32 x J entries, J = 1, 4 or 32);
 *      a value enters only when it beats the list's K-th key (a ballot), so
 *      after the first few batches almost every logit costs a compare. Keys
 *      are 64-bit (order-preserving float bits, ~token id): ties go to the
 *      smaller id. Each warp writes its list and its (max, sum).
 *   2. tb_tree, one block: warp d merges position d's lists (the same
 *      filtered insertion) and combines the sums into lse (double), giving
 *      logp = logit - lse; warp 0 then runs the best-first process, each pop
 *      an argmax over the frontier (at most B + 1 entries) by the whole warp,
 *      ties by the rank tuple; all threads then write the nodes and the
 *      ancestor mask rows.
 *
 * Napkin math (Kimi K2.x: L = 15, V = 163840, B = 32): the logits are
 * 15 x 163840 x 4 B = 9.8 MB read once: 2.3 us at 4.25 TB/s; ~5 flops per
 * logit (12 MFLOP) is nothing. The heap is 32 pops of a ~60-instruction warp
 * argmax: ~3 us on one SM. Expected ~10 us including both launch gaps, under
 * the 40 us target.
 */
#include "common.cuh"

extern "C" {
#include "ops/tree_build.h"
}

#define TB_WARPS 8
#define TB_THREADS (TB_WARPS * 32)
#define TB_TREE_WARPS 16 /* one per position: L <= 16 merges in one round */
#define TB_TREE_THREADS (TB_TREE_WARPS * 32)
#define TB_VEC 8 /* 16-byte loads in flight per lane: 4 MB chip-wide at 120 blocks */
#define TB_MAX_K 1024
#define TB_SMEM_BUDGET (40 * 1024)

struct tb_args {
	int L, V, B, K, W, S; /* S segments per position */
	int Vp;               /* row stride of logits: V padded to a multiple of 4 with -inf */
	int seg, sub;         /* logits per segment, per warp slice (multiples of 128) */
	int lists;            /* per position: S x TB_WARPS */
	int table_in_smem;
	int32_t root_token;
	const float *logits;
	unsigned long long *part_key; /* [L][lists][K] */
	float2 *part_ms;              /* [L][lists] (max, sum exp) */
	float *g_lp;                  /* [L][K] when not in smem */
	int32_t *g_tok;
	/* outputs */
	int32_t *n, *parent, *depth, *rank, *token;
	float *logp;
	uint32_t *mask;
};

struct tb_dev {
	struct tb_args a;
	int J;
	size_t smem2;
	void *bufs[16];
	int nbufs;
};

/* ---- keys and the warp-wide sorted list ---- */

__device__ __forceinline__ unsigned long long tb_key(float v, int idx)
{
	uint32_t u = __float_as_uint(v);
	u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
	return ((unsigned long long)u << 32) | (uint32_t)~(uint32_t)idx;
}

__device__ __forceinline__ float tb_key_val(unsigned long long k)
{
	uint32_t u = (uint32_t)(k >> 32);
	u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
	return __uint_as_float(u);
}

__device__ __forceinline__ int tb_key_tok(unsigned long long k)
{
	return (int)~(uint32_t)k;
}

/* The K best keys seen, sorted descending: entry i = lane * J + j. Key 0 is
 * "empty" (below every real key). */
template <int J> struct tb_list {
	unsigned long long e[J];
	unsigned long long thr;   /* a newcomer must beat it: the K-th entry or the floor */
	unsigned long long floor; /* a key the K-th largest is known to reach */

	__device__ __forceinline__ void init(unsigned long long fl)
	{
#pragma unroll
		for (int j = 0; j < J; j++)
			e[j] = 0;
		thr = floor = fl;
	}

	__device__ __forceinline__ void update_thr(int K, int lane)
	{
		const int idx = K - 1, jl = idx % J;
		unsigned long long t = 0;
#pragma unroll
		for (int j = 0; j < J; j++)
			if (j == jl)
				t = e[j];
		t = __shfl_sync(0xffffffffu, t, idx / J);
		thr = t > floor ? t : floor;
		(void)lane;
	}

	/* Inserts x (warp-uniform, x > thr) keeping K entries. */
	__device__ __forceinline__ void insert(unsigned long long x, int K, int lane)
	{
		int cnt = 0;
#pragma unroll
		for (int j = 0; j < J; j++)
			cnt += e[j] > x;
		const int pos = __reduce_add_sync(0xffffffffu, (unsigned)cnt);
		const unsigned long long prev_last = __shfl_up_sync(0xffffffffu, e[J - 1], 1);
#pragma unroll
		for (int j = J - 1; j >= 0; j--) {
			const int i = lane * J + j;
			const unsigned long long before = j > 0 ? e[j > 0 ? j - 1 : 0] : prev_last;
			if (i == pos)
				e[j] = x;
			else if (i > pos)
				e[j] = before;
		}
		update_thr(K, lane);
	}

	/* Offers one candidate per lane (0 = none). */
	__device__ __forceinline__ void offer(unsigned long long mine, int K, int lane)
	{
		unsigned m = __ballot_sync(0xffffffffu, mine > thr);
		while (m) {
			const int src = __ffs(m) - 1;
			m &= m - 1;
			const unsigned long long x = __shfl_sync(0xffffffffu, mine, src);
			if (x > thr)
				insert(x, K, lane);
		}
	}

	/* Writes the first K entries to out[0..K). */
	__device__ __forceinline__ void store(unsigned long long *out, int K, int lane)
	{
#pragma unroll
		for (int j = 0; j < J; j++) {
			const int i = lane * J + j;
			if (i < K)
				out[i] = e[j];
		}
	}
};

/* Adds logit v (-inf: none) to a lane's online (max m, sum of exp). */
__device__ __forceinline__ void tb_ms_add(float *m, float *sum, float v)
{
	if (v == -INFINITY)
		return;
	if (v > *m) {
		*sum = *sum * expf(*m - v) + 1.f;
		*m = v;
	} else {
		*sum += expf(v - *m);
	}
}

/* The smallest finite value over the warp (-inf when none). */
__device__ __forceinline__ float warp_min_finite(float v)
{
	float t = v == -INFINITY ? INFINITY : v;
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		t = fminf(t, __shfl_xor_sync(0xffffffffu, t, o));
	return t == INFINITY ? -INFINITY : t;
}

/* Combines two (max, sum exp) pairs. */
__device__ __forceinline__ float2 ms_merge(float2 a, float2 b)
{
	if (a.x == -INFINITY)
		return b;
	if (b.x == -INFINITY)
		return a;
	const float m = fmaxf(a.x, b.x);
	return make_float2(m, a.y * expf(a.x - m) + b.y * expf(b.x - m));
}

/* ---- kernel 1: per-warp top-K and (max, sum exp) over a slice ---- */

/* The slice of warp `warp` of segment s of one position: [lo, hi), lo a
 * multiple of 4 (rows are padded to Vp, a multiple of 4, with -inf). */
__device__ __forceinline__ void tb_slice(const tb_args &a, int s, int warp, int *lo, int *hi)
{
	const int seg_lo = s * a.seg, seg_hi = min(a.Vp, seg_lo + a.seg);
	*lo = seg_lo + warp * a.sub;
	*hi = min(seg_hi, *lo + a.sub);
}

/* Two passes over a warp's slice of one position's logits. The first streams
 * it from memory with 16-byte loads (TB_VEC of them in flight per lane) and
 * keeps each lane's online (max, sum of exp); for K <= 32 the smallest of the
 * 32 lane maxima is a floor under the slice's K-th largest (32 distinct
 * logits reach it), so the second pass, over the same bytes now in L1, offers
 * only what reaches the floor: ~2K inserts into the warp list instead of
 * K ln(slice / K) + K. Keys are 64-bit (order-preserving float bits, ~token
 * id): ties go to the smaller id. */
template <int J> __global__ void __launch_bounds__(TB_THREADS) tb_scan(const tb_args a)
{
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	const int d = blockIdx.y, s = blockIdx.x;
	int lo, hi;
	tb_slice(a, s, warp, &lo, &hi);
	const float *x = a.logits + (size_t)d * a.Vp;

	float m = -INFINITY, sum = 0.f;
	for (int base = lo; base < hi; base += 128 * TB_VEC) {
		float4 v[TB_VEC];
#pragma unroll
		for (int u = 0; u < TB_VEC; u++) {
			const int i = base + (u * 32 + lane) * 4;
			v[u] = i < hi ? __ldg((const float4 *)(x + i))
				      : make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
		}
#pragma unroll
		for (int u = 0; u < TB_VEC; u++) {
			const float w[4] = {v[u].x, v[u].y, v[u].z, v[u].w};
#pragma unroll
			for (int q = 0; q < 4; q++)
				tb_ms_add(&m, &sum, w[q]);
		}
	}
	unsigned long long fl = 0;
	if (a.K <= 32 && __popc(__ballot_sync(0xffffffffu, m != -INFINITY)) >= a.K) {
		/* K lanes have a maximum each: K distinct logits reach the least */
		fl = (unsigned long long)(tb_key(warp_min_finite(m), 0) >> 32) << 32;
	}
	tb_list<J> list;
	list.init(fl);
	for (int base = lo; base < hi; base += 128) {
		const int i = base + lane * 4;
		const float4 v = i < hi ? *(const float4 *)(x + i)
					: make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY);
		const float w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
		for (int q = 0; q < 4; q++)
			list.offer(w[q] != -INFINITY && i + q < a.V ? tb_key(w[q], i + q) : 0ull, a.K,
				   lane);
	}
	float2 ms = make_float2(m, sum);
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		float2 t;
		t.x = __shfl_xor_sync(0xffffffffu, ms.x, o);
		t.y = __shfl_xor_sync(0xffffffffu, ms.y, o);
		ms = ms_merge(ms, t);
	}
	const int li = s * TB_WARPS + warp;
	list.store(a.part_key + ((size_t)d * a.lists + li) * a.K, a.K, lane);
	if (lane == 0)
		a.part_ms[(size_t)d * a.lists + li] = ms;
}

/* ---- kernel 2: merge, best-first process, outputs ---- */

struct tb_shared {
	float *lp;       /* [L][K] */
	int32_t *tok;    /* [L][K] */
	int32_t *np, *nd, *nr; /* nodes: parent, depth, rank */
	float *nl;       /* node logp */
	float *fs;       /* frontier: score, parent, depth, rank */
	int32_t *fp, *fd, *fr;
};

/* Rank at depth d of the candidate (parent p, rank r, depth dc). */
__device__ int tb_rank_at(const tb_shared &t, int p, int r, int dc, int d)
{
	if (d == dc)
		return r;
	int node = p;
	while (t.nd[node] > d)
		node = t.np[node];
	return t.nr[node];
}

/* The tie rule: the smaller rank tuple from depth 1 down; a prefix first. */
__device__ bool tb_tie_before(const tb_shared &t, int pa, int ra, int da, int pb, int rb, int db)
{
	const int m = da < db ? da : db;
	for (int d = 1; d <= m; d++) {
		const int x = tb_rank_at(t, pa, ra, da, d), y = tb_rank_at(t, pb, rb, db, d);
		if (x != y)
			return x < y;
	}
	return da < db;
}

struct tb_cand {
	float s;
	int p, d, r, i; /* i: frontier slot; -1 = none */
};

__device__ __forceinline__ bool tb_before(const tb_shared &t, const tb_cand &a, const tb_cand &b)
{
	if (a.i < 0)
		return false;
	if (b.i < 0)
		return true;
	if (a.s != b.s)
		return a.s > b.s;
	return tb_tie_before(t, a.p, a.r, a.d, b.p, b.r, b.d);
}

/* The warp's best candidate (each lane offers its own): the highest score
 * by a 5-step max and, when one lane alone holds it (the usual case), that
 * lane's candidate in 4 shuffles; a tie in score across lanes goes the
 * slow way, the tie rule at every step of a 5-step tree. */
__device__ tb_cand tb_warp_best(const tb_shared &t, tb_cand best, int lane)
{
	const float mine = best.i >= 0 ? best.s : -INFINITY;
	const float top = warp_max(mine);
	const unsigned hold = __ballot_sync(0xffffffffu, best.i >= 0 && mine == top);
	if (__popc(hold) == 1) {
		const int src = __ffs(hold) - 1;
		tb_cand c;
		c.s = top;
		c.p = __shfl_sync(0xffffffffu, best.p, src);
		c.d = __shfl_sync(0xffffffffu, best.d, src);
		c.r = __shfl_sync(0xffffffffu, best.r, src);
		c.i = __shfl_sync(0xffffffffu, best.i, src);
		return c;
	}
#pragma unroll
	for (int o = 16; o > 0; o >>= 1) {
		tb_cand c;
		c.s = __shfl_xor_sync(0xffffffffu, best.s, o);
		c.p = __shfl_xor_sync(0xffffffffu, best.p, o);
		c.d = __shfl_xor_sync(0xffffffffu, best.d, o);
		c.r = __shfl_xor_sync(0xffffffffu, best.r, o);
		c.i = __shfl_xor_sync(0xffffffffu, best.i, o);
		if (tb_before(t, c, best))
			best = c;
	}
	(void)lane;
	return best;
}

/* The shared memory of tb_tree carved into t: nodes, frontier and, when it
 * fits (a.table_in_smem), the [L][K] table; else the table in global. */
__device__ __forceinline__ void tb_carve(tb_shared &t, const tb_args &a, unsigned char *p)
{
	const int K = a.K, B = a.B;
	t.np = (int32_t *)p;
	p += (size_t)(B + 1) * 4;
	t.nd = (int32_t *)p;
	p += (size_t)(B + 1) * 4;
	t.nr = (int32_t *)p;
	p += (size_t)(B + 1) * 4;
	t.nl = (float *)p;
	p += (size_t)(B + 1) * 4;
	t.fs = (float *)p;
	p += (size_t)(B + 2) * 4;
	t.fp = (int32_t *)p;
	p += (size_t)(B + 2) * 4;
	t.fd = (int32_t *)p;
	p += (size_t)(B + 2) * 4;
	t.fr = (int32_t *)p;
	p += (size_t)(B + 2) * 4;
	if (a.table_in_smem) {
		t.lp = (float *)p;
		p += (size_t)a.L * K * 4;
		t.tok = (int32_t *)p;
	} else {
		t.lp = a.g_lp;
		t.tok = a.g_tok;
	}
}

/* 1. per position: merge the lists, logsumexp, log-probs into t's table
 * (warps take positions in turn). The lists are sorted: the largest of
 * their K-th entries is a floor under the merged K-th (that list alone has
 * K keys reaching it), and going rank by rank the merge stops at the first
 * rank where no list reaches the threshold. */
template <int J>
__device__ __forceinline__ void tb_merge(const tb_shared &t, const tb_args &a, int warp, int lane)
{
	const int K = a.K;
	for (int d = warp; d < a.L; d += TB_TREE_WARPS) {
		const unsigned long long *keys = a.part_key + (size_t)d * a.lists * K;
		unsigned long long fl = 0;
		for (int l = lane; l < a.lists; l += 32) {
			const unsigned long long k = keys[(size_t)l * K + K - 1];
			fl = k > fl ? k : fl;
		}
#pragma unroll
		for (int o = 16; o > 0; o >>= 1) {
			const unsigned long long t = __shfl_xor_sync(0xffffffffu, fl, o);
			fl = t > fl ? t : fl;
		}
		tb_list<J> list;
		list.init(fl ? fl - 1 : 0); /* the floor key itself must enter */
		for (int r = 0; r < K; r++) {
			bool any = false;
			for (int l0 = 0; l0 < a.lists; l0 += 32) {
				const int l = l0 + lane;
				const unsigned long long k = l < a.lists ? keys[(size_t)l * K + r] : 0ull;
				any |= __any_sync(0xffffffffu, k > list.thr);
				list.offer(k, K, lane);
			}
			if (!any)
				break;
		}
		float2 ms = make_float2(-INFINITY, 0.f);
		for (int i = lane; i < a.lists; i += 32)
			ms = ms_merge(ms, a.part_ms[(size_t)d * a.lists + i]);
#pragma unroll
		for (int o = 16; o > 0; o >>= 1) {
			float2 o2;
			o2.x = __shfl_xor_sync(0xffffffffu, ms.x, o);
			o2.y = __shfl_xor_sync(0xffffffffu, ms.y, o);
			ms = ms_merge(ms, o2);
		}
		const double lse = (double)ms.x + log((double)ms.y);
#pragma unroll
		for (int j = 0; j < J; j++) {
			const int r = lane * J + j;
			if (r < K) {
				t.lp[(size_t)d * K + r] = (float)((double)tb_key_val(list.e[j]) - lse);
				t.tok[(size_t)d * K + r] = tb_key_tok(list.e[j]);
			}
		}
	}
}

/* Takes candidate best (frontier slot best.i of F) into the tree as node
 * n, and into the frontier its next sibling and its first child, where
 * they exist. Returns the frontier's new size. */
__device__ __forceinline__ int tb_take(const tb_shared &t, const tb_args &a, const tb_cand &best,
				       int F, int n)
{
	const int K = a.K;
	const int last = F - 1;
	t.fs[best.i] = t.fs[last];
	t.fp[best.i] = t.fp[last];
	t.fd[best.i] = t.fd[last];
	t.fr[best.i] = t.fr[last];
	const int i = n;
	t.np[i] = best.p;
	t.nd[i] = best.d;
	t.nr[i] = best.r;
	t.nl[i] = best.s;
	int f = last;
	if (best.r + 1 < K) {
		t.fs[f] = t.nl[best.p] + t.lp[(size_t)(best.d - 1) * K + best.r + 1];
		t.fp[f] = best.p;
		t.fd[f] = best.d;
		t.fr[f] = best.r + 1;
		f++;
	}
	if (best.d < a.L) {
		t.fs[f] = best.s + t.lp[(size_t)best.d * K];
		t.fp[f] = i;
		t.fd[f] = best.d + 1;
		t.fr[f] = 0;
		f++;
	}
	return f;
}

/* 2. best-first, by one warp: B nodes (fewer when the frontier runs out)
 * from the root, each the frontier's best by tb_before. Returns the nodes. */
__device__ __forceinline__ int tb_best_first(const tb_shared &t, const tb_args &a, int lane)
{
	const int B = a.B;
	int F = 1, n = 1;
	if (lane == 0) {
		t.np[0] = -1;
		t.nd[0] = 0;
		t.nr[0] = 0;
		t.nl[0] = 0.f;
		t.fs[0] = t.lp[0];
		t.fp[0] = 0;
		t.fd[0] = 1;
		t.fr[0] = 0;
	}
	__syncwarp();
	while (n <= B && F > 0) {
		tb_cand best = {0.f, 0, 0, 0, -1};
		for (int i = lane; i < F; i += 32) {
			const tb_cand c = {t.fs[i], t.fp[i], t.fd[i], t.fr[i], i};
			if (tb_before(t, c, best))
				best = c;
		}
		best = tb_warp_best(t, best, lane);
		/* every lane holds the same best now */
		if (lane == 0)
			F = tb_take(t, a, best, F, n);
		F = __shfl_sync(0xffffffffu, F, 0);
		n++;
		__syncwarp();
	}
	return n;
}

/* 3. outputs of n nodes: nodes, then mask rows (each word from the ancestor
 * chain), by every thread of the block. */
__device__ __forceinline__ void tb_outputs(const tb_shared &t, const tb_args &a, int n)
{
	const int K = a.K, B = a.B;
	for (int i = threadIdx.x; i <= B; i += TB_TREE_THREADS) {
		const bool ok = i < n;
		a.parent[i] = ok ? t.np[i] : -1;
		a.depth[i] = ok ? t.nd[i] : -1;
		a.rank[i] = ok ? t.nr[i] : -1;
		a.logp[i] = ok ? t.nl[i] : 0.f;
		a.token[i] = !ok ? -1
			     : i == 0 ? a.root_token
				      : t.tok[(size_t)(t.nd[i] - 1) * K + t.nr[i]];
	}
	for (int q = threadIdx.x; q < (B + 1) * a.W; q += TB_TREE_THREADS) {
		const int i = q / a.W, w = q % a.W;
		uint32_t bits = 0;
		if (i < n)
			for (int x = i; x >= 0; x = t.np[x])
				if (x / 32 == w)
					bits |= 1u << (x % 32);
		a.mask[q] = bits;
	}
}

template <int J> __global__ void __launch_bounds__(TB_TREE_THREADS) tb_tree(const tb_args a)
{
	CU_DYN_SMEM(unsigned char, tb_sm);
	const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
	tb_shared t;
	__shared__ int s_n;

	tb_carve(t, a, tb_sm);
	tb_merge<J>(t, a, warp, lane);
	__syncthreads();
	if (warp == 0) {
		const int n = tb_best_first(t, a, lane);
		if (lane == 0)
			s_n = n;
	}
	__syncthreads();
	const int n = s_n;
	tb_outputs(t, a, n);
	if (threadIdx.x == 0)
		*a.n = n;
}

/* ---- host side ---- */

static void tb_teardown(void *dev)
{
	struct tb_dev *d = (struct tb_dev *)dev;
	if (!d)
		return;
	for (int i = 0; i < d->nbufs; i++)
		cu_free(d->bufs[i]);
	free(d);
}

static int tb_buf(struct tb_dev *d, void **p, size_t bytes, const void *host)
{
	int rc = cu_upload(p, host, bytes);
	if (!rc)
		d->bufs[d->nbufs++] = *p;
	return rc;
}

/* The logits into rows of Vp floats (16-byte aligned), -inf after V. */
static int tb_logits(struct tb_dev *d, const struct tree_build_inst *in)
{
	const size_t Vp = (size_t)d->a.Vp, n = (size_t)in->L * Vp;
	float *h = (float *)malloc(n * sizeof *h);
	void *p;
	int rc;
	if (!h)
		return err_nomem();
	for (size_t i = 0; i < n; i++)
		h[i] = -INFINITY;
	for (int l = 0; l < in->L; l++)
		memcpy(h + l * Vp, in->logits + (size_t)l * in->V, (size_t)in->V * sizeof *h);
	rc = tb_buf(d, &p, n * sizeof *h, h);
	free(h);
	d->a.logits = (const float *)p;
	return rc;
}

template <int J> static int tb_set_smem(size_t smem)
{
	return cu_smem_allow(tb_tree<J>, smem, "tree_build");
}

static int tb_setup(void **dev, const void *inst)
{
	const struct tree_build_inst *in = (const struct tree_build_inst *)inst;
	struct tb_dev *d;
	int rc;

	*dev = NULL;
	if (in->K < 1 || in->K > TB_MAX_K)
		return err_set(DDT_EINPUT, "unsupported: tree_build CUDA handles K <= %d (K = %d)",
			       TB_MAX_K, in->K);
	size_t nodes = (size_t)(in->B + 1) * 16 + (size_t)(in->B + 2) * 16;
	size_t table = (size_t)in->L * in->K * 8;
	if (nodes > 96 * 1024)
		return err_set(DDT_EINPUT, "unsupported: tree_build CUDA keeps at most ~3000 nodes "
			       "in shared memory (B = %d)", in->B);
	if (!(d = (struct tb_dev *)calloc(1, sizeof *d)))
		return err_nomem();
	struct tb_args *a = &d->a;
	a->L = in->L;
	a->V = in->V;
	a->B = in->B;
	a->K = in->K;
	a->W = in->mask_words;
	a->root_token = in->root_token;
	a->S = in->V >= 8 * 4096 ? 8 : in->V >= 4096 ? in->V / 4096 : 1;
	a->Vp = round_up(in->V, 4);
	a->seg = round_up(cdiv(a->Vp, a->S), 128 * TB_WARPS);
	a->sub = a->seg / TB_WARPS;
	a->lists = a->S * TB_WARPS;
	a->table_in_smem = nodes + table <= TB_SMEM_BUDGET;
	d->J = in->K <= 32 ? 1 : in->K <= 128 ? 4 : 32;
	d->smem2 = nodes + (a->table_in_smem ? table : 0);

	size_t LK = (size_t)in->L * in->K, n1 = (size_t)in->B + 1;
	if ((rc = tb_logits(d, in)))
		goto fail;
	if ((rc = tb_buf(d, (void **)&a->part_key, (size_t)in->L * a->lists * in->K * 8, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->part_ms, (size_t)in->L * a->lists * 8, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->g_lp, LK * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->g_tok, LK * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->n, 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->parent, n1 * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->depth, n1 * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->rank, n1 * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->token, n1 * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->logp, n1 * 4, NULL)) ||
	    (rc = tb_buf(d, (void **)&a->mask, n1 * in->mask_words * 4, NULL)))
		goto fail;
	/* outputs start as -1 / NaN: anything the kernels miss cannot look right */
	if ((rc = CU(cudaMemset(a->n, 0xff, 4))) || (rc = CU(cudaMemset(a->parent, 0xff, n1 * 4))) ||
	    (rc = CU(cudaMemset(a->depth, 0xff, n1 * 4))) ||
	    (rc = CU(cudaMemset(a->rank, 0xff, n1 * 4))) ||
	    (rc = CU(cudaMemset(a->token, 0xff, n1 * 4))) ||
	    (rc = CU(cudaMemset(a->logp, 0xff, n1 * 4))) ||
	    (rc = CU(cudaMemset(a->mask, 0xff, n1 * in->mask_words * 4))))
		goto fail;
	rc = d->J == 1 ? tb_set_smem<1>(d->smem2)
	     : d->J == 4 ? tb_set_smem<4>(d->smem2)
			 : tb_set_smem<32>(d->smem2);
	if (rc)
		goto fail;
	*dev = d;
	return 0;
fail:
	tb_teardown(d);
	return rc;
}

template <int J> static int tb_launch(const struct tb_dev *d, cudaStream_t s)
{
	CK(cu_launch(tb_scan<J>, dim3(d->a.S, d->a.L), TB_THREADS, 0, s, d->a));
	CK(cu_launch(tb_tree<J>, 1, TB_TREE_THREADS, d->smem2, s, d->a));
	return 0;
}

static int tb_run(void *dev, void *stream)
{
	struct tb_dev *d = (struct tb_dev *)dev;
	cudaStream_t s = (cudaStream_t)stream;
	return d->J == 1 ? tb_launch<1>(d, s) : d->J == 4 ? tb_launch<4>(d, s) : tb_launch<32>(d, s);
}

static int tb_fetch(void *dev, void *inst)
{
	struct tb_dev *d = (struct tb_dev *)dev;
	struct tree_build_inst *in = (struct tree_build_inst *)inst;
	struct tree_build_out *o = &in->out;
	size_t n1 = (size_t)in->B + 1;

	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(&o->n, d->a.n, 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(o->parent, d->a.parent, n1 * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(o->depth, d->a.depth, n1 * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(o->rank, d->a.rank, n1 * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(o->token, d->a.token, n1 * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(o->logp, d->a.logp, n1 * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(o->mask, d->a.mask, n1 * in->mask_words * 4, cudaMemcpyDeviceToHost));
	return 0;
}

extern "C" const struct op_cuda CU_OP_TABLE(tree_build) = {tb_setup, tb_run, tb_fetch, tb_teardown};
