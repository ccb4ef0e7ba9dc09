/* tree_fast.c - tree_build's fast path: a threshold-filtered top-K and a vectorized logsumexp per position, then a binary heap over at most B pops. */
#include "cpu/tree.h"

#include "cpu/cpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef __AVX2__
#include <immintrin.h>
#endif

/* ---- stage 1: top-K and logsumexp of one position ---- */

struct tk_ent {
	float v;
	int32_t id;
};

/* Best first: larger value, then smaller id. */
static int tk_cmp(const void *a, const void *b)
{
	const struct tk_ent *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

int tree_topk_scratch_len(int K)
{
	return K;
}

/* The K best so far as a min-heap with the worst on top (smaller value, or
 * on a tie the larger id), so the admission threshold is always exact:
 * about K ln(V/K) logits ever get in. */
static int tk_worse(const struct tk_ent *a, const struct tk_ent *b)
{
	return a->v < b->v || (a->v == b->v && a->id > b->id);
}

static void tk_sift_down(struct tk_ent *h, int n, int i)
{
	struct tk_ent e = h[i];
	for (;;) {
		int c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && tk_worse(&h[c + 1], &h[c]))
			c++;
		if (!tk_worse(&h[c], &e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

static void tk_push(struct tk_ent *h, int *n, int K, float v, int32_t id)
{
	if (*n < K) {
		int i = (*n)++;
		struct tk_ent e = {v, id};
		while (i > 0 && tk_worse(&e, &h[(i - 1) / 2])) {
			h[i] = h[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		h[i] = e;
		return;
	}
	h[0].v = v; /* replaces the worst; callers only push better ones */
	h[0].id = id;
	tk_sift_down(h, *n, 0);
}

/* The threshold a logit must beat (strictly: an equal value comes later, so
 * it has the larger id and loses the tie). */
static inline float tk_thr(const struct tk_ent *h, int n, int K)
{
	return n < K ? -INFINITY : h[0].v;
}

/* Offers x[lo, hi) to the heap; returns the new threshold. */
static float tk_admit(const float *x, int lo, int hi, int K, struct tk_ent *h, int *n)
{
	float thr = tk_thr(h, *n, K);
	int i = lo;
#ifdef __AVX2__
	for (; i + 8 <= hi; i += 8) {
		int bits = _mm256_movemask_ps(
			_mm256_cmp_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(thr), _CMP_GT_OQ));
		while (bits) {
			int b = __builtin_ctz((unsigned)bits);
			bits &= bits - 1;
			if (x[i + b] > thr) { /* thr may have risen within this vector */
				tk_push(h, n, K, x[i + b], i + b);
				thr = tk_thr(h, *n, K);
			}
		}
	}
#endif
	for (; i < hi; i++)
		if (x[i] > thr) {
			tk_push(h, n, K, x[i], i);
			thr = tk_thr(h, *n, K);
		}
	return thr;
}

#ifdef __AVX2__
/* e^x for x <= 0 (Cephes expf: range reduction by ln 2, degree-6
 * polynomial, about 1 ulp); below -87.3 it returns e^-87.3, which adds
 * nothing against the sum's leading 1. */
static inline __m256 exp_neg256(__m256 x)
{
	const __m256 log2e = _mm256_set1_ps(1.44269504088896341f);
	x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
	__m256 fx = _mm256_round_ps(_mm256_mul_ps(x, log2e),
				    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	__m256 r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(0.693359375f), x);
	r = _mm256_fnmadd_ps(fx, _mm256_set1_ps(-2.12194440e-4f), r);
	__m256 p = _mm256_set1_ps(1.9875691500e-4f);
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
	p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
	__m256 y = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
	__m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(fx), _mm256_set1_epi32(127)),
				      23);
	return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

static inline float hmax256(__m256 v)
{
	__m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	a = _mm_max_ps(a, _mm_movehl_ps(a, a));
	a = _mm_max_ss(a, _mm_movehdup_ps(a));
	return _mm_cvtss_f32(a);
}

static inline float hsum256(__m256 v)
{
	__m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	a = _mm_add_ps(a, _mm_movehl_ps(a, a));
	a = _mm_add_ss(a, _mm_movehdup_ps(a));
	return _mm_cvtss_f32(a);
}
#endif

/* Logits go by in blocks that stay in L1: a vector pass finds the block's
 * maximum (and whether anything beats the top-K threshold, which is rare
 * once the threshold settles), then a second pass adds up exp(x - m) against
 * the running maximum m. When m rises, the sum so far is rescaled (a few
 * times per position). Block sums go into a double, so V = 163840 terms add
 * up without drift. */
#define TK_BLOCK 256

/* Top-K of x into h (a heap of *count entries) and logsumexp(x). */
static float tk_scan(const float *x, int V, int K, struct tk_ent *h, int *count)
{
	float m = -INFINITY;
	double total = 0;
	int n = 0, i = 0;
#ifdef __AVX2__
	float thr = -INFINITY;
	for (; i + TK_BLOCK <= V; i += TK_BLOCK) {
		const float *b = x + i;
		__m256 vmax = _mm256_loadu_ps(b);
		for (int j = 8; j < TK_BLOCK; j += 8)
			vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(b + j));
		float bmax = hmax256(vmax);
		if (bmax > thr)
			thr = tk_admit(x, i, i + TK_BLOCK, K, h, &n);
		if (bmax > m) {
			total *= exp((double)m - bmax); /* 0 on the first block: m = -inf */
			m = bmax;
		}
		const __m256 vm = _mm256_set1_ps(m);
		__m256 a0 = _mm256_setzero_ps(), a1 = a0;
		for (int j = 0; j < TK_BLOCK; j += 16) {
			a0 = _mm256_add_ps(a0, exp_neg256(_mm256_sub_ps(_mm256_loadu_ps(b + j), vm)));
			a1 = _mm256_add_ps(a1, exp_neg256(_mm256_sub_ps(_mm256_loadu_ps(b + j + 8), vm)));
		}
		total += hsum256(_mm256_add_ps(a0, a1));
	}
#endif
	if (i < V) { /* the tail (or everything, without AVX2), plainly */
		float bmax = x[i];
		for (int j = i; j < V; j++)
			bmax = x[j] > bmax ? x[j] : bmax;
		tk_admit(x, i, V, K, h, &n);
		if (bmax > m) {
			total *= exp((double)m - bmax);
			m = bmax;
		}
		for (int j = i; j < V; j++)
			total += expf(x[j] - m);
	}
	*count = n;
	return m + (float)log(total);
}

void tree_topk_lse(const float *logits, int V, int K, float *logp, int32_t *tok, void *scratch)
{
	struct tk_ent *buf = scratch;
	int n;
	float lse = tk_scan(logits, V, K, buf, &n);
	qsort(buf, (size_t)n, sizeof *buf, tk_cmp);
	for (int r = 0; r < K; r++) {
		tok[r] = buf[r].id;
		logp[r] = buf[r].v - lse;
	}
}

/* ---- stage 2: the best-first heap ---- */

struct heap_ent {
	float logp;
	int32_t parent;
	int32_t depth;
	int32_t rank;
};

/* Rank tuple of (parent p, rank r) into t (depth 1 first); returns its length. */
static int rank_tuple(const struct tree_build_out *out, int p, int r, int32_t *t, int cap)
{
	int d = p ? out->depth[p] + 1 : 1;
	if (d > cap)
		d = cap;
	t[d - 1] = r;
	for (int i = d - 2; i >= 0; i--, p = out->parent[p])
		t[i] = out->rank[p];
	return d;
}

int tree_tie_before(const struct tree_build_out *out, int pa, int ra, int pb, int rb)
{
	int32_t ta[256], tb[256];
	int na = rank_tuple(out, pa, ra, ta, 256), nb = rank_tuple(out, pb, rb, tb, 256);
	for (int i = 0; i < na && i < nb; i++)
		if (ta[i] != tb[i])
			return ta[i] < tb[i];
	return na < nb;
}

static int heap_before(const struct tree_build_out *out, const struct heap_ent *a,
		       const struct heap_ent *b)
{
	if (a->logp != b->logp)
		return a->logp > b->logp;
	return tree_tie_before(out, a->parent, a->rank, b->parent, b->rank);
}

static void heap_push(struct heap_ent *h, int *n, struct heap_ent e,
		      const struct tree_build_out *out)
{
	int i = (*n)++;
	while (i > 0) {
		int up = (i - 1) / 2;
		if (!heap_before(out, &e, &h[up]))
			break;
		h[i] = h[up];
		i = up;
	}
	h[i] = e;
}

static struct heap_ent heap_pop(struct heap_ent *h, int *n, const struct tree_build_out *out)
{
	struct heap_ent top = h[0], last = h[--*n];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && heap_before(out, &h[c + 1], &h[c]))
			c++;
		if (!heap_before(out, &h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = last;
	return top;
}

void tree_heap_build(const float *logp, const int32_t *tok, int L, int K, int B,
		     int32_t root_token, int mask_words, void *heap, struct tree_build_out *out)
{
	struct heap_ent *h = heap;
	int nh = 0, n = 1;

	out->parent[0] = -1;
	out->depth[0] = 0;
	out->rank[0] = 0;
	out->token[0] = root_token;
	out->logp[0] = 0;
	memset(out->mask, 0, (size_t)mask_words * sizeof *out->mask);
	out->mask[0] = 1;
	if (L > 0 && K > 0)
		heap_push(h, &nh, (struct heap_ent){logp[0], 0, 1, 0}, out);
	while (n <= B && nh > 0) {
		struct heap_ent e = heap_pop(h, &nh, out);
		int i = n++;
		uint32_t *row = out->mask + (size_t)i * mask_words;
		out->parent[i] = e.parent;
		out->depth[i] = e.depth;
		out->rank[i] = e.rank;
		out->token[i] = tok[(size_t)(e.depth - 1) * K + e.rank];
		out->logp[i] = e.logp;
		memcpy(row, out->mask + (size_t)e.parent * mask_words,
		       (size_t)mask_words * sizeof *row);
		row[i / 32] |= 1u << (i % 32);
		float base = out->logp[e.parent];
		if (e.rank + 1 < K)
			heap_push(h, &nh,
				  (struct heap_ent){base + logp[(size_t)(e.depth - 1) * K + e.rank + 1],
						    e.parent, e.depth, e.rank + 1},
				  out);
		if (e.depth < L)
			heap_push(h, &nh,
				  (struct heap_ent){e.logp + logp[(size_t)e.depth * K], i, e.depth + 1, 0},
				  out);
	}
	out->n = n;
}

/* ---- stage 2 without a heap, for small trees ----
 *
 * With every row sorted best first and no log-prob above 0, a child never
 * beats its parent and rank r + 1 never beats rank r (float addition rounds
 * monotonically), so the heap pops the prefixes in the plain total order:
 * larger prefix log-prob first, ties to the smaller rank tuple, then the
 * shorter. When the K + K^2 + ... + K^L prefixes are few, they are all
 * summed level by level (vectorized), the B best are picked out by a
 * histogram over their float keys, and those are sorted by a 64-bit key
 * (float key, then the prefix's depth-first preorder index, which is the rank
 * tuple order) inside their histogram bins. */

#define TS_BINS 4096
#define TS_MAX_L 64
#define TS_RADIX_BITS 8
#define TS_RADIX (1 << TS_RADIX_BITS)
#define TS_READ_BINS 1024 /* tree_sort_read's bins */

struct ts_ent {
	uint64_t key;  /* float key << 32 | preorder index */
	uint32_t id;   /* index into the level arrays */
	uint32_t dr;   /* depth << 26 | rank */
};

/* The levels: level d's prefixes at off[d] .. off[d] + P[d] K, P[d] = K^(d-1). */
struct ts_lv {
	long off[TS_MAX_L + 2], P[TS_MAX_L + 2];
	uint32_t lo, shift; /* bin of key k: (k - lo) >> shift */
};

/* Prefixes of a complete K-ary tree of depth L, or -1 past cap. */
static long ts_count(int L, int K, long cap)
{
	long n = 0, level = 1;
	for (int d = 1; d <= L; d++) {
		if (level > cap / K)
			return -1;
		level *= K;
		n += level;
		if (n > cap)
			return -1;
	}
	return n;
}

size_t tree_sort_scratch_bytes(int L, int K, int B)
{
	long n = ts_count(L, K, tree_sort_cap(B));
	/* tree_sort_build: 16 + 2 ts_ent a prefix; tree_sort_read: 16 + 5 x 4 + 8 */
	return n < 0 ? 0 : (size_t)(n + 1) * (16 + 2 * sizeof(struct ts_ent)) + (TS_BINS + 2) * 4 + 8;
}

long tree_sort_cap(int B)
{
	long c = 16L * ((long)B + 1);
	return c < 4096 ? 4096 : c > (1L << 20) ? (1L << 20) : c;
}

/* Every row non-increasing and no entry above 0 (NaN fails too). */
static int ts_rows_ok(const float *logp, int L, int K)
{
	for (int d = 0; d < L; d++) {
		const float *row = logp + (size_t)d * K;
		for (int r = 0; r < K; r++)
			if (!(row[r] <= 0) || (r && !(row[r] <= row[r - 1])))
				return 0;
	}
	return 1;
}

/* Descending float order as an ascending unsigned key (x <= 0; -0 is +0). */
static inline uint32_t ts_key(float x)
{
	uint32_t b;
	x += 0.0f;
	memcpy(&b, &x, 4);
	return b & 0x80000000u ? b : 0x7fffffffu;
}

/* Level d's prefixes at off[d] .. off[d] + K^d, child (rank r, parent p of
 * P = K^(d-1)) at r P + p: each level is K shifted copies of the last. The
 * keys' histogram (cnt[b + 1]: bin b) is taken as they are made. */
static void ts_levels(const float *logp, int L, int K, struct ts_lv *lv, float *sum,
		      uint32_t *key, uint32_t *pre, uint32_t *cnt)
{
	long P = 1, S = 0, pw = 1;
	for (int d = 1; d <= L; d++)
		S += pw, pw *= K; /* S: the subtree of a depth-1 node */
	lv->off[1] = 0;
	for (int d = 1; d <= L; d++, P *= K, S = (S - 1) / K) {
		const float *row = logp + (size_t)(d - 1) * K;
		long o = lv->off[d];
		lv->P[d] = P;
		lv->off[d + 1] = o + P * K;
		for (int r = 0; r < K; r++) {
			long at = o + r * P;
			uint32_t step = (uint32_t)(1 + r * S), k;
			if (d == 1) {
				sum[at] = r ? 0.0f + row[r] : row[0]; /* as the heap adds them */
				pre[at] = step;
				key[at] = k = ts_key(sum[at]);
				cnt[((k - lv->lo) >> lv->shift) + 1]++;
				continue;
			}
			const float *ps = sum + lv->off[d - 1];
			const uint32_t *pp = pre + lv->off[d - 1];
			float lr = row[r];
			for (long p = 0; p < P; p++) {
				float x = ps[p] + lr;
				sum[at + p] = x;
				pre[at + p] = pp[p] + step;
				key[at + p] = k = ts_key(x);
				cnt[((k - lv->lo) >> lv->shift) + 1]++;
			}
		}
	}
}

/* The bins: from the best key (depth 1, rank 0) to the worst (rank K - 1 at
 * every depth to L), at most nbins of them. */
static void ts_bins(const float *logp, int L, int K, uint32_t nbins, struct ts_lv *lv)
{
	float worst = logp[K - 1];
	for (int d = 1; d < L; d++)
		worst = worst + logp[(size_t)d * K + K - 1];
	uint32_t lo = ts_key(logp[0]), hi = ts_key(K > 1 ? 0.0f + logp[K - 1] : logp[0]);
	hi = ts_key(worst) > hi ? ts_key(worst) : hi;
	lv->lo = lo;
	lv->shift = 0;
	while (((uint64_t)(hi - lo) >> lv->shift) >= nbins)
		lv->shift++;
}

/* Sorts e[start, end) by key, in place (the bins are small). */
static void ts_insertion(struct ts_ent *e, uint32_t start, uint32_t end)
{
	for (uint32_t i = start + 1; i < end; i++) {
		struct ts_ent x = e[i];
		uint32_t j = i;
		while (j > start && e[j - 1].key > x.key) {
			e[j] = e[j - 1];
			j--;
		}
		e[j] = x;
	}
}

/* Stable sort of e[0, m) into t by digit (key - lo) >> shift & mask. */
static void ts_radix_pass(const struct ts_ent *e, uint32_t m, uint32_t lo, int shift,
			  uint32_t mask, struct ts_ent *t)
{
	uint32_t c[TS_RADIX + 1] = {0};
	for (uint32_t i = 0; i < m; i++)
		c[(((uint32_t)(e[i].key >> 32) - lo) >> shift & mask) + 1]++;
	for (uint32_t b = 1; b <= mask; b++)
		c[b] += c[b - 1];
	for (uint32_t i = 0; i < m; i++)
		t[c[((uint32_t)(e[i].key >> 32) - lo) >> shift & mask]++] = e[i];
}

/* The B best of n keys (their histogram in cnt), sorted, into e (room for
 * n + 1, and as much again at t); returns how many (at most B). The keys up
 * to the B-th best's bin are gathered in level order, sorted (LSD radix,
 * stable) by the key's bits below the bin, then by bin (whose counts cnt
 * holds), then equal keys by preorder index (insertion: they are next to
 * each other, and rare). */
static int ts_select(const struct ts_lv *lv, int L, int K, const uint32_t *key,
		     const uint32_t *pre, int B, uint32_t *cnt, struct ts_ent *e,
		     struct ts_ent *t)
{
	uint32_t last = 0; /* the bin that holds the B-th best */
	long below = 0;
	while (last < TS_BINS - 1 && below + cnt[last + 1] < B)
		below += cnt[++last];
	uint64_t top = (uint64_t)(last + 1) << lv->shift; /* keys below lo + top are kept */
	uint32_t m = 0;
	for (int d = 1; d <= L; d++)
		for (int r = 0; r < K; r++) {
			long at = lv->off[d] + r * lv->P[d];
			uint32_t dr = (uint32_t)d << 26 | (uint32_t)r;
			for (long i = at; i < at + lv->P[d]; i++) { /* no branch */
				e[m] = (struct ts_ent){(uint64_t)key[i] << 32 | pre[i], (uint32_t)i, dr};
				m += (uint64_t)(key[i] - lv->lo) < top;
			}
		}
	for (int sh = 0; sh < (int)lv->shift; sh += TS_RADIX_BITS) {
		int w = (int)lv->shift - sh < TS_RADIX_BITS ? (int)lv->shift - sh : TS_RADIX_BITS;
		ts_radix_pass(e, m, lv->lo, sh, (1u << w) - 1, t);
		struct ts_ent *x = e;
		e = t, t = x;
	}
	cnt[0] = 0; /* cnt[b + 1]: bin b's count; now where it starts */
	for (uint32_t b = 1; b <= last; b++)
		cnt[b] += cnt[b - 1];
	for (uint32_t i = 0; i < m; i++)
		t[cnt[((uint32_t)(e[i].key >> 32) - lv->lo) >> lv->shift]++] = e[i];
	ts_insertion(t, 0, m);
	if ((lv->shift + TS_RADIX_BITS - 1) / TS_RADIX_BITS % 2 == 0) /* else t is the caller's e */
		memcpy(e, t, m * sizeof *e);
	return m < (uint32_t)B ? (int)m : B;
}

int tree_sort_build(const float *logp, const int32_t *tok, int L, int K, int B,
		    int32_t root_token, void *scratch, struct tree_build_out *out)
{
	long n = L > 0 && L <= TS_MAX_L && K > 0 && B > 0 ? ts_count(L, K, tree_sort_cap(B)) : -1;
	if (n < 0 || !ts_rows_ok(logp, L, K))
		return -1;
	struct ts_lv lv;
	float *sum = scratch;
	uint32_t *key = (uint32_t *)(sum + n), *pre = key + n;
	int32_t *pos = (int32_t *)(pre + n);
	uint32_t *cnt = (uint32_t *)(pos + n);
	struct ts_ent *e = (struct ts_ent *)(cnt + TS_BINS + 2), *t = e + n + 1;
	ts_bins(logp, L, K, TS_BINS, &lv);
	memset(cnt, 0, (TS_BINS + 1) * sizeof *cnt);
	ts_levels(logp, L, K, &lv, sum, key, pre, cnt);
	int m = ts_select(&lv, L, K, key, pre, B, cnt, e, t);
	out->parent[0] = -1;
	out->depth[0] = 0;
	out->rank[0] = 0;
	out->token[0] = root_token;
	out->logp[0] = 0;
	for (int i = 0; i < m; i++) {
		uint32_t id = e[i].id;
		int d = (int)(e[i].dr >> 26), r = (int)(e[i].dr & ((1u << 26) - 1));
		long c = (long)id - lv.off[d] - r * lv.P[d]; /* the parent's place in level d - 1 */
		out->parent[i + 1] = d > 1 ? pos[lv.off[d - 1] + c] : 0;
		out->depth[i + 1] = d;
		out->rank[i + 1] = r;
		out->token[i + 1] = tok[(size_t)(d - 1) * K + r];
		out->logp[i + 1] = sum[id];
		pos[id] = i + 1;
	}
	out->n = m + 1;
	return 0;
}

/* ---- reading the tree without building it ----
 *
 * What a replay needs of the tree at budget B is where a few prefixes sit in
 * the order (the target's path, the first node of the last rank) and the
 * summed probabilities of its first B_j nodes. Only the prefixes at or above
 * a cut can be among the B best once at least B of them are: a child never
 * beats its parent and rank r + 1 never beats rank r, so a level is made
 * from the parents still above the cut, and a parent stops at its first rank
 * below it. The kept keys are binned between the best and the cut, put in
 * bin order, and sorted by (key, preorder index) by insertion (the bins are
 * sparse, so it is nearly in order already): the same order as the heap's. */

struct ts_kept {
	uint64_t key;  /* float key << 32 | preorder index */
	double ex;     /* exp of the prefix's log-prob */
};

#ifdef __AVX512F__
/* ts_gen_cut's children of one rank, 16 parents (act[0 .. na)) at a time:
 * the same operations as its scalar loop, lane by lane, the kept ones
 * compressed to sum, key, pre and ex at *m and their parents to act2 at
 * *nn. Returns the parents done (a multiple of 16). */
static long ts_gen_16(float lr, double elr, uint32_t step, uint32_t cut, long na,
		      const uint32_t *act, uint32_t *act2, float *sum, uint32_t *key,
		      uint32_t *pre, double *ex, long *m, long *nn)
{
	const __m512 vlr = _mm512_set1_ps(lr), zero = _mm512_setzero_ps();
	const __m512d dlr = _mm512_set1_pd((double)lr), delr = _mm512_set1_pd(elr);
	const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5);
	const __m512i vstep = _mm512_set1_epi32((int)step), vcut = _mm512_set1_epi32((int)cut);
	const __m512i sign = _mm512_set1_epi32((int)0x80000000u), top = _mm512_set1_epi32(0x7fffffff);
	long i = 0, mm = *m, n2 = *nn;
	for (; i + 16 <= na; i += 16) {
		__m512i p = _mm512_loadu_si512(act + i);
		__m512 sp = _mm512_i32gather_ps(p, sum, 4);
		__m512 x = _mm512_add_ps(sp, vlr);
		__m512i b = _mm512_castps_si512(_mm512_add_ps(x, zero));
		__mmask16 neg = _mm512_test_epi32_mask(b, sign);
		__m512i k = _mm512_mask_blend_epi32(neg, top, b);
		__mmask16 in = _mm512_cmple_epu32_mask(k, vcut);
		__m512i pr = _mm512_add_epi32(_mm512_i32gather_epi32(p, pre, 4), vstep);
		__m512d e2[2];
		for (int h = 0; h < 2; h++) {
			__m256i ph = h ? _mm512_extracti64x4_epi64(p, 1) : _mm512_castsi512_si256(p);
			__m256 xh = h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))
				      : _mm512_castps512_ps256(x);
			__m256 sh = h ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(sp), 1))
				      : _mm512_castps512_ps256(sp);
			__m512d xd = _mm512_cvtps_pd(xh), sd = _mm512_cvtps_pd(sh);
			__m512d dl = _mm512_sub_pd(xd, _mm512_add_pd(sd, dlr));
			__m512d c = _mm512_add_pd(_mm512_add_pd(one, dl),
						  _mm512_mul_pd(_mm512_mul_pd(half, dl), dl));
			__m512d ep = _mm512_i32gather_pd(ph, ex, 8);
			e2[h] = _mm512_mul_pd(_mm512_mul_pd(ep, delr), c);
		}
		_mm512_mask_compressstoreu_ps(sum + mm, in, x);
		_mm512_mask_compressstoreu_epi32(key + mm, in, k);
		_mm512_mask_compressstoreu_epi32(pre + mm, in, pr);
		_mm512_mask_compressstoreu_epi32(act2 + n2, in, p);
		__mmask8 lo = (__mmask8)(in & 0xff), hi = (__mmask8)(in >> 8);
		_mm512_mask_compressstoreu_pd(ex + mm, lo, e2[0]);
		_mm512_mask_compressstoreu_pd(ex + mm + __builtin_popcount(lo), hi, e2[1]);
		int c = __builtin_popcount(in);
		mm += c, n2 += c;
	}
	*m = mm, *nn = n2;
	return i;
}
#endif

/* Level by level, every prefix whose key is at most cut: sum, key,
 * preorder index and ex = exp((double)sum), the child's from its parent's:
 * exp(parent) exp(log-prob) exp(delta), delta the float sum's rounding
 * (exact in double, under 2^-24 of the sum, so 1 + delta + delta^2 / 2 is
 * exp(delta) to 1e-19): the product is within a few ulps of exp's own,
 * without an exp call a prefix. Returns how many. */
static long ts_gen_cut(const float *logp, int L, int K, uint32_t cut, float *sum, uint32_t *key,
		       uint32_t *pre, double *ex, uint32_t *act, uint32_t *act2)
{
	long S = 0, pw = 1, m = 0;
	for (int d = 1; d <= L; d++)
		S += pw, pw *= K; /* S: the subtree of a depth-1 node */
	for (int r = 0; r < K; r++) {
		float x = r ? 0.0f + logp[r] : logp[0]; /* as the heap adds them */
		if (ts_key(x) > cut)
			break;
		sum[m] = x, key[m] = ts_key(x), pre[m] = (uint32_t)(1 + r * S);
		ex[m++] = exp((double)x);
	}
	long a = 0; /* the level above: a .. b */
	for (int d = 2; d <= L && m > a; d++) {
		long b = m, na = b - a;
		S = (S - 1) / K;
		const float *row = logp + (size_t)(d - 1) * K;
		for (long i = 0; i < na; i++)
			act[i] = (uint32_t)(a + i);
		for (int r = 0; r < K && na; r++) {
			float lr = row[r];
			double elr = exp((double)lr);
			uint32_t step = (uint32_t)(1 + r * S);
			long nn = 0, i = 0;
#ifdef __AVX512F__
			i = ts_gen_16(lr, elr, step, cut, na, act, act2, sum, key, pre, ex, &m, &nn);
#endif
			for (; i < na; i++) { /* no branch */
				uint32_t p = act[i];
				float x = sum[p] + lr;
				double dl = (double)x - ((double)sum[p] + (double)lr);
				uint32_t k = ts_key(x), in = k <= cut;
				sum[m] = x, key[m] = k, pre[m] = pre[p] + step;
				ex[m] = ex[p] * elr * (1 + dl + 0.5 * dl * dl);
				act2[nn] = p;
				m += in, nn += in;
			}
			uint32_t *t = act;
			act = act2, act2 = t, na = nn;
		}
		a = b;
	}
	return m;
}

/* Sorts e[0, n) by key (insertion: a bin holds few). */
static void ts_sort_bin(struct ts_kept *e, long n)
{
	for (long i = 1; i < n; i++) {
		struct ts_kept x = e[i];
		long j = i;
		while (j > 0 && e[j - 1].key > x.key) {
			e[j] = e[j - 1];
			j--;
		}
		e[j] = x;
	}
}

/* start[1 + b] holds bin b's count: start[b] becomes where bin b starts, up
 * to the bin where the B-th best (or the last bin) is, and start[last + 1]
 * where that bin ends. Returns last. */
static uint32_t ts_starts(uint32_t *start, int B)
{
	uint32_t last = 0;
	long end = 0;
#ifdef __AVX512F__
	/* 16 bins at a time, the same starts: their counts' running sums within
	 * the vector, until the one where B is reached */
	const __m512i zero = _mm512_setzero_si512(), vb = _mm512_set1_epi32(B);
	while (last + 16 <= TS_READ_BINS - 1) {
		__m512i c = _mm512_loadu_si512(start + last + 1), x = c;
		x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 15));
		x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 14));
		x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 12));
		x = _mm512_add_epi32(x, _mm512_alignr_epi32(x, zero, 8));
		__m512i inc = _mm512_add_epi32(x, _mm512_set1_epi32((int)end));
		__mmask16 hit = _mm512_cmpge_epi32_mask(inc, vb);
		__mmask16 keep = hit ? (__mmask16)((2u << __builtin_ctz(hit)) - 1) : 0xffff;
		_mm512_mask_storeu_epi32(start + last, keep, _mm512_sub_epi32(inc, c));
		uint32_t f = hit ? (uint32_t)__builtin_ctz(hit) : 15, tmp[16];
		_mm512_storeu_si512(tmp, inc);
		end = tmp[f];
		if (hit) {
			last += f;
			break;
		}
		last += 16;
	}
	if (end < B)
#endif
	for (;; last++) {
		uint32_t c = start[last + 1];
		start[last] = (uint32_t)end;
		end += c;
		if (end >= B || last == TS_READ_BINS - 1)
			break;
	}
	start[last + 1] = (uint32_t)end;
	return last;
}

/* The bins of the kept keys (m of them, at most cut), from the best key to
 * the cut; the bins up to the one that holds the B-th best go to e in bin
 * order (the order within a bin is the one they were made in), and
 * start[b] says where bin b begins, start[last + 1] where the last ends.
 * Returns last. */
static uint32_t ts_scatter(const float *logp, int L, int K, uint32_t cut, const double *ex,
			   const uint32_t *key, const uint32_t *pre, long m, int B,
			   struct ts_lv *lv, uint32_t *start, uint32_t *act, struct ts_kept *e)
{
	ts_bins(logp, L, K, TS_READ_BINS, lv);
	uint32_t shift = 0; /* finer bins when the cut is above the worst */
	while (((uint64_t)(cut - lv->lo) >> shift) >= TS_READ_BINS)
		shift++;
	lv->shift = shift < lv->shift ? shift : lv->shift;
	memset(start, 0, (TS_READ_BINS + 1) * sizeof *start);
	for (long i = 0; i < m; i++)
		start[((key[i] - lv->lo) >> lv->shift) + 1]++;
	uint32_t last = ts_starts(start, B); /* start[b]: where bin b starts */
	uint64_t top = (uint64_t)(last + 1) << lv->shift; /* keys below lo + top go */
	uint32_t at[TS_READ_BINS], *go = act; /* the ones that go, listed without a branch */
	memcpy(at, start, (last + 1) * sizeof *at);
	long ng = 0, i = 0;
#ifdef __AVX512F__
	if (top <= UINT32_MAX) { /* 16 at a time, the same list */
		const __m512i lo = _mm512_set1_epi32((int)lv->lo), t = _mm512_set1_epi32((int)top);
		__m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
		for (; i + 16 <= m; i += 16) {
			__m512i d = _mm512_sub_epi32(_mm512_loadu_si512(key + i), lo);
			__mmask16 g = _mm512_cmplt_epu32_mask(d, t);
			_mm512_mask_compressstoreu_epi32(go + ng, g, idx);
			ng += __builtin_popcount(g);
			idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16));
		}
	}
#endif
	for (; i < m; i++) {
		go[ng] = (uint32_t)i;
		ng += (uint64_t)(key[i] - lv->lo) < top;
	}
	for (long g = 0; g < ng; g++) {
		uint32_t i = go[g];
		e[at[(key[i] - lv->lo) >> lv->shift]++] =
			(struct ts_kept){(uint64_t)key[i] << 32 | pre[i], ex[i]};
	}
	return last;
}

/* Where the prefix of key k sits among e's binned keys (end of them): the
 * number before it in the order. */
static long ts_rank(const struct ts_kept *e, const struct ts_lv *lv, const uint32_t *start,
		    uint32_t last, uint64_t k)
{
	uint64_t bin = (uint64_t)((uint32_t)(k >> 32) - lv->lo) >> lv->shift;
	if (bin > last)
		return start[last + 1];
	long below = start[bin];
	for (uint32_t i = start[bin]; i < start[bin + 1]; i++)
		below += e[i].key < k;
	return below;
}

/* Key and preorder index of the prefix ranks[0 .. depth), summed as the
 * heap sums it. */
static uint64_t ts_prefix_key(const float *logp, int L, int K, int depth, const int32_t *ranks)
{
	long S = 0, pw = 1;
	for (int d = 1; d <= L; d++)
		S += pw, pw *= K;
	float x = ranks[0] ? 0.0f + logp[ranks[0]] : logp[0];
	uint32_t pre = (uint32_t)(1 + ranks[0] * S);
	for (int d = 1; d < depth; d++) {
		S = (S - 1) / K;
		x = x + logp[(size_t)d * K + ranks[d]];
		pre += (uint32_t)(1 + ranks[d] * S);
	}
	return (uint64_t)ts_key(x) << 32 | pre;
}

int tree_sort_read(const float *logp, int L, int K, int B, float cut, struct tree_sort_ask *rd,
		   void *scratch)
{
	long all = L > 0 && L <= TS_MAX_L && K > 0 && B > 0 ? ts_count(L, K, tree_sort_cap(B)) : -1;
	if (all < 0 || !ts_rows_ok(logp, L, K))
		return -1;
	uint32_t ck = cut < 0 ? ts_key(cut) : UINT32_MAX;
	struct ts_kept *e = scratch;
	float *sum = (float *)(e + all + 1);
	uint32_t *key = (uint32_t *)(sum + all + 1), *pre = key + all + 1, *act = pre + all + 1;
	uint32_t *act2 = act + all + 1, *start = act2 + all + 1;
	uintptr_t exat = (uintptr_t)(start + TS_READ_BINS + 2);
	double *ex = (double *)((exat + 7) & ~(uintptr_t)7);
	long m = ts_gen_cut(logp, L, K, ck, sum, key, pre, ex, act, act2);
	if (m < B && m < all)
		return 1; /* the cut kept too few: the B best may lie below it */
	struct ts_lv lv;
	uint32_t last = ts_scatter(logp, L, K, ck, ex, key, pre, m, B, &lv, start, act, e);
	long n = m < B ? m : B; /* the tree's nodes past the root */
	/* Only the bins a budget (or the tree's end) cuts need their order:
	 * then the first b of e are the b best, whatever order the bins
	 * before hold. */
	uint32_t sorted = UINT32_MAX;
	for (int j = 0; j <= rd->nbudgets; j++) {
		long b = j < rd->nbudgets && rd->budgets[j] < n ? rd->budgets[j] : n;
		if (b <= 0)
			continue;
		uint32_t lo = 0, hi = last; /* the bin of the b-th: start[bin] < b <= start[bin + 1] */
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (start[mid + 1] < b)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo != sorted)
			ts_sort_bin(e + start[lo], start[lo + 1] - start[lo]);
		sorted = lo;
	}
	double cum = 0;
	long node = 0;
	for (int j = 0; j < rd->nbudgets; j++) { /* four sums a stretch: no chain of adds */
		long to = rd->budgets[j] < n ? rd->budgets[j] : n;
		double s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* registers: an array stayed in memory */
		for (; node + 4 <= to; node += 4) {
			s0 += e[node].ex, s1 += e[node + 1].ex;
			s2 += e[node + 2].ex, s3 += e[node + 3].ex;
		}
		for (; node < to; node++)
			s0 += e[node].ex;
		rd->mass[j] = cum += (s0 + s1) + (s2 + s3);
	}
	for (int q = 0; q < rd->nq; q++) {
		uint64_t k = ts_prefix_key(logp, L, K, rd->qdepth[q], rd->qrank + (size_t)q * L);
		long at = (uint32_t)(k >> 32) > ck ? n : ts_rank(e, &lv, start, last, k);
		rd->qpos[q] = at < n ? (int32_t)(at + 1) : 0;
	}
	rd->n = (int)n + 1;
	rd->kept = m;
	uint32_t bk = n ? (uint32_t)(e[n - 1].key >> 32) : 0x7fffffffu; /* ts_key's inverse */
	float bth = 0;
	if (bk != 0x7fffffffu)
		memcpy(&bth, &bk, 4);
	rd->bth = bth;
	return 0;
}
