/* kern_avx512.h - kern.h's inner loops on AVX-512 with BF16 dot products: nibbles to bf16 by a table lookup, vdpbf16ps against the bf16 activations. */
#ifndef DDT_KERN_AVX512_H
#define DDT_KERN_AVX512_H

/* Included by kern.h only, where KERN_ISA_AVX512BF16 is set. */

#include <immintrin.h>

/*
 * The weights go two chunks (64 weights, 32 packed bytes) at a time. One
 * vpermb widens the 32 bytes to 32 words, interleaving the chunks: lanes
 * 0, 2, 4, ... (word pairs) take the first chunk's bytes, lanes 1, 3, 5, ...
 * the second's. The words look themselves up in a 32-entry table of bf16
 * (q - 8) (the even weights: vpermw reads only an index's low five bits,
 * see kern_q4_lut), and again after a shift by 4 (the odd weights). Two
 * vdpbf16ps against the matching halves of x leave the even lanes holding
 * the first chunk's partial sums and the odd lanes the second's, so one FMA
 * against the two scales broadcast as a pair ([s0 s1 s0 s1 ...], a plain
 * 8-byte broadcast load) applies both. Per chunk and row: two shuffles
 * (three with one chunk at a time), one vdpbf16ps per token and half an
 * FMA; the scales stay one float per chunk, so x, the scales and the
 * streaming weights share L1 without evicting each other.
 *
 * Napkin math, one Zen 4 core: hot in L1 about 2 cycles a chunk at one
 * token, 16 weights a cycle, above the ~11 GB/s of INT4 one core has to
 * stream when two share ~25 GB/s of reads; the short rows of the down
 * projection (8 chunks) add the per-row scale conversion and reductions.
 * The weights are exact in bf16 (-8..7) and every product of two bf16 is
 * exact in fp32, so the sums are the fp32 sums the reference takes, in
 * another order. Activations stay bf16, as they are in memory; no
 * zero-point correction terms are needed.
 */

/* Where weight k of a K-long row meets x. Within each 64 k (two chunks c =
 * 0, 1 of 16 bytes b): the even k (low nibbles) in the first 32 places, the
 * odd k in the last 32, each half ordered as the widened words are: byte b
 * of chunk c in word 4 (b / 2) + 2 c + b % 2. A lone last chunk (K % 64 ==
 * 32) has its even k then its odd k. */
static inline int kern_q4_pos(int k, int K)
{
	int base = k & ~63, i = k & 63;
	if (base + 64 > K) /* the lone last chunk */
		return base + (i & 1) * 16 + (i >> 1);
	int c = i >> 5, b = (i & 31) >> 1;
	return base + (i & 1) * 32 + 4 * (b >> 1) + 2 * c + (b & 1);
}

/* kern_q4_pos inverted, as vpermt2w indices: word p of a 64-k block's
 * kernel order takes x[base + KERN_Q4_INV(p)] (p / 32 picks the even or odd
 * k; within a half, word w = 4 j + 2 c + e holds byte 2 j + e of chunk c). */
#define KERN_Q4_INV(p) (32 * (((p) >> 1) & 1) + 4 * (((p) & 31) >> 2) + 2 * ((p) & 1) + ((p) >> 5))
#define KERN_Q4_INV4(p) KERN_Q4_INV(p), KERN_Q4_INV(p + 1), KERN_Q4_INV(p + 2), KERN_Q4_INV(p + 3)
#define KERN_Q4_INV16(p) KERN_Q4_INV4(p), KERN_Q4_INV4(p + 4), KERN_Q4_INV4(p + 8), KERN_Q4_INV4(p + 12)
static const uint16_t kern_q4_inv_idx[64] __attribute__((aligned(64))) = {
	KERN_Q4_INV16(0), KERN_Q4_INV16(16), KERN_Q4_INV16(32), KERN_Q4_INV16(48),
};
/* the lone last chunk: word p takes x[base + 2 (p % 16) + p / 16] */
#define KERN_Q4_INV1(p) (2 * ((p) & 15) + ((p) >> 4))
#define KERN_Q4_INV1_4(p) KERN_Q4_INV1(p), KERN_Q4_INV1(p + 1), KERN_Q4_INV1(p + 2), KERN_Q4_INV1(p + 3)
static const uint16_t kern_q4_inv1_idx[32] __attribute__((aligned(64))) = {
	KERN_Q4_INV1_4(0),  KERN_Q4_INV1_4(4),  KERN_Q4_INV1_4(8),  KERN_Q4_INV1_4(12),
	KERN_Q4_INV1_4(16), KERN_Q4_INV1_4(20), KERN_Q4_INV1_4(24), KERN_Q4_INV1_4(28),
};
#undef KERN_Q4_INV1_4
#undef KERN_Q4_INV1
#undef KERN_Q4_INV16
#undef KERN_Q4_INV4
#undef KERN_Q4_INV

/* x[K] into kernel order, 64 k (two loads, two two-source word permutes) at
 * a time: xq[kern_q4_pos(k, K)] = x[k]. K is a multiple of 32. */
static inline void kern_q4_order(const bf16_t *x, int K, kern_act_t *xq)
{
	const __m512i lo = _mm512_load_si512(kern_q4_inv_idx),
		      hi = _mm512_load_si512(kern_q4_inv_idx + 32);
	int k = 0;
	for (; k + 64 <= K; k += 64) {
		__m512i a = _mm512_loadu_si512(x + k), b = _mm512_loadu_si512(x + k + 32);
		_mm512_storeu_si512(xq + k, _mm512_permutex2var_epi16(a, lo, b));
		_mm512_storeu_si512(xq + k + 32, _mm512_permutex2var_epi16(a, hi, b));
	}
	if (k < K) /* the lone last chunk */
		_mm512_storeu_si512(xq + k, _mm512_permutexvar_epi16(
						    _mm512_load_si512(kern_q4_inv1_idx),
						    _mm512_loadu_si512(x + k)));
}

/* The vpermb that widens a pair's 32 bytes to kern_q4_pos's word order:
 * output byte 2w (the low byte of word w = 4 j + 2 c + e) takes byte
 * 16 c + 2 j + e; the high bytes are zeroed by the mask KERN_Q4_LOBYTES. */
#define KERN_Q4_LOBYTES 0x5555555555555555ull
#define KERN_Q4_W(w) (16 * (((w) >> 1) & 1) + 2 * ((w) >> 2) + ((w) & 1)), 0
#define KERN_Q4_W4(w) KERN_Q4_W(w), KERN_Q4_W(w + 1), KERN_Q4_W(w + 2), KERN_Q4_W(w + 3)
static const uint8_t kern_q4_widen_idx[64] __attribute__((aligned(64))) = {
	KERN_Q4_W4(0),  KERN_Q4_W4(4),  KERN_Q4_W4(8),  KERN_Q4_W4(12),
	KERN_Q4_W4(16), KERN_Q4_W4(20), KERN_Q4_W4(24), KERN_Q4_W4(28),
};
#undef KERN_Q4_W4
#undef KERN_Q4_W

static inline __m512i kern_q4_widen(void)
{
	return _mm512_load_si512(kern_q4_widen_idx);
}

/* The table: word i holds bf16((i & 15) - 8). vpermw reads only the low five
 * bits of an index, so a byte whose high nibble is still above its low one
 * (the even weights: index = the whole byte) finds the same value as the
 * bare nibble. */
static inline __m512i kern_q4_lut(void)
{
	__m512 v = _mm512_sub_ps(_mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
				 _mm512_set1_ps(8));
	return (__m512i)_mm512_cvtne2ps_pbh(v, v);
}

/* The lone last chunk (16 bytes): words 0-15 keep the byte (the even
 * weights), words 16-31 shift it down by 4 (the odd ones). */
static inline __m512i kern_q4_chunk(const uint8_t *p, __m512i lut)
{
	const __m512i shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
	__m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p));
	return _mm512_permutexvar_epi16(_mm512_srlv_epi16(_mm512_cvtepu8_epi16(b), shift), lut);
}

static inline __m512 kern_dp(__m512 acc, __m512i w, __m512i x)
{
	return _mm512_dpbf16_ps(acc, (__m512bh)w, (__m512bh)x);
}

/* Sums of four vectors at once: [sum a, sum b, sum c, sum d]. */
static inline __m128 kern_hsum4(__m512 a, __m512 b, __m512 c, __m512 d)
{
#define KERN_HALVES(v) _mm256_add_ps(_mm512_castps512_ps256(v), \
				     _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)))
	__m256 t = _mm256_hadd_ps(_mm256_hadd_ps(KERN_HALVES(a), KERN_HALVES(b)),
				  _mm256_hadd_ps(KERN_HALVES(c), KERN_HALVES(d)));
#undef KERN_HALVES
	return _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
}

/* dots[i] = the sum of acc[i]'s lanes for i < n, four at a time where n
 * allows (n is a constant at every call site). */
static inline __attribute__((always_inline)) void kern_sums(const __m512 *acc, const int n,
							   float *dots)
{
	if (n % 4 == 0) {
#pragma GCC unroll 4
		for (int q = 0; q < n; q += 4)
			_mm_storeu_ps(dots + q, kern_hsum4(acc[q], acc[q + 1], acc[q + 2], acc[q + 3]));
		return;
	}
#pragma GCC unroll 16
	for (int i = 0; i < n; i++)
		dots[i] = _mm512_reduce_add_ps(acc[i]);
}

/* A row's fp32 scale per chunk (sc[nch + KERN_SC_PAD]), so the loop
 * broadcasts straight from memory; cpg = chunks per group. */
#define KERN_SC_PAD 16
static inline void kern_q4_scales(const bf16_t *scales, int nch, int cpg, float *sc)
{
	if (cpg == 1) { /* 16 at a time, the last 16 through a masked load */
		for (int g = 0; g < nch; g += 16) {
			__mmask16 m = nch - g >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (nch - g)) - 1);
			__m256i v = _mm256_maskz_loadu_epi16(m, scales + g);
			/* a whole-vector store (sc has KERN_SC_PAD spare floats): the
			 * loads that follow can be forwarded from it, not from a masked one */
			_mm512_storeu_ps(sc + g, _mm512_castsi512_ps(_mm512_slli_epi32(
							 _mm512_cvtepu16_epi32(v), 16)));
		}
		return;
	}
	for (int g = 0; g < nch / cpg; g++) {
		float v = bf16_to_float(scales[g]);
		for (int j = 0; j < cpg; j++)
			sc[g * cpg + j] = v;
	}
}

/* The pair's two scales as [s0 s1 s0 s1 ...]: one 8-byte broadcast load. */
static inline __m512 kern_q4_pair_scales(const float *sc)
{
	double d;
	memcpy(&d, sc, sizeof d);
	return _mm512_castpd_ps(_mm512_set1_pd(d));
}

/* R INT4 rows (scales sc[r] from kern_q4_scales, nch chunks) against T
 * vectors (kern_q4_pos order): dots[t * R + r]. R and T are constants at
 * every call site, so each shape gets its own copy with every accumulator
 * in a register; when R * T < 4 two pairs go in flight with their own
 * accumulators, or the FMA latency, not the decoding, would set the pace. */
#define KERN_TILE_MAX 16
#ifndef KERN_Q4_PREFETCH
#define KERN_Q4_PREFETCH 1024
#endif
static inline __attribute__((always_inline)) void
kern_q4_tile(const uint8_t *const *rows, const float *const *sc, int nch, const bf16_t *const *x,
	     float *dots, const int R, const int T)
{
	const __m512i lut = kern_q4_lut(), widen = kern_q4_widen();
	const int U = R * T < 4 ? 2 : 1;
	const int np = nch / 2;
	__m512 acc[2][KERN_TILE_MAX];
	__m512i we[4], wo[4];
	int p = 0;

#pragma GCC unroll 16
	for (int i = 0; i < R * T; i++) /* only these: the rest would live in memory */
		acc[0][i] = acc[1][i] = _mm512_setzero_ps();
	for (; p + U <= np; p += U) {
		/* one prefetch per row and cache line, KERN_Q4_PREFETCH bytes ahead
		 * (past the row's end: the next row, which callers read next) */
		if (!(p & (2 / U - 1)))
#pragma GCC unroll 4
			for (int r = 0; r < R; r++)
				_mm_prefetch((const char *)rows[r] + 32 * p + KERN_Q4_PREFETCH,
					     _MM_HINT_T0);
#pragma GCC unroll 2
		for (int u = 0; u < U; u++) {
#pragma GCC unroll 4
			for (int r = 0; r < R; r++) {
				__m512i b = _mm512_maskz_permutexvar_epi8(
					KERN_Q4_LOBYTES, widen,
					_mm512_castsi256_si512(_mm256_loadu_si256(
						(const __m256i *)(rows[r] + 32 * (p + u)))));
				we[r] = _mm512_permutexvar_epi16(b, lut);
				wo[r] = _mm512_permutexvar_epi16(_mm512_srli_epi16(b, 4), lut);
			}
#pragma GCC unroll 4
			for (int t = 0; t < T; t++) {
				__m512i xe = _mm512_loadu_si512(x[t] + 64 * (p + u));
				__m512i xo = _mm512_loadu_si512(x[t] + 64 * (p + u) + 32);
#pragma GCC unroll 4
				for (int r = 0; r < R; r++)
					acc[u][t * R + r] = _mm512_fmadd_ps(
						kern_dp(kern_dp(_mm512_setzero_ps(), we[r], xe), wo[r], xo),
						kern_q4_pair_scales(sc[r] + 2 * (p + u)), acc[u][t * R + r]);
			}
		}
	}
	if (p < np) { /* U == 2 with an odd number of pairs: the last one */
#pragma GCC unroll 4
		for (int r = 0; r < R; r++) {
			__m512i b = _mm512_maskz_permutexvar_epi8(
				KERN_Q4_LOBYTES, widen,
				_mm512_castsi256_si512(
					_mm256_loadu_si256((const __m256i *)(rows[r] + 32 * p))));
			we[r] = _mm512_permutexvar_epi16(b, lut);
			wo[r] = _mm512_permutexvar_epi16(_mm512_srli_epi16(b, 4), lut);
		}
#pragma GCC unroll 4
		for (int t = 0; t < T; t++) {
			__m512i xe = _mm512_loadu_si512(x[t] + 64 * p);
			__m512i xo = _mm512_loadu_si512(x[t] + 64 * p + 32);
#pragma GCC unroll 4
			for (int r = 0; r < R; r++)
				acc[0][t * R + r] = _mm512_fmadd_ps(
					kern_dp(kern_dp(_mm512_setzero_ps(), we[r], xe), wo[r], xo),
					kern_q4_pair_scales(sc[r] + 2 * p), acc[0][t * R + r]);
		}
	}
	if (nch & 1) { /* the lone last chunk */
		int c = nch - 1;
#pragma GCC unroll 4
		for (int r = 0; r < R; r++)
			we[r] = kern_q4_chunk(rows[r] + 16 * c, lut);
#pragma GCC unroll 4
		for (int t = 0; t < T; t++) {
			__m512i xv = _mm512_loadu_si512(x[t] + 32 * c);
#pragma GCC unroll 4
			for (int r = 0; r < R; r++)
				acc[0][t * R + r] = _mm512_fmadd_ps(
					kern_dp(_mm512_setzero_ps(), we[r], xv),
					_mm512_set1_ps(sc[r][nch - 1]), acc[0][t * R + r]);
		}
	}
	if (U == 2)
#pragma GCC unroll 4
		for (int i = 0; i < R * T; i++)
			acc[0][i] = _mm512_add_ps(acc[0][i], acc[1][i]);
	kern_sums(acc[0], R * T, dots);
}

static inline void kern_q4_dots(const uint8_t *row, const bf16_t *scales, int K, int group,
				const struct kern_vec *v, int nt, float *dots)
{
	int nch = K / 32;
	if (nch > KERN_Q4_MAX_K / 32) /* callers check; this keeps sc in bounds regardless */
		nch = KERN_Q4_MAX_K / 32;
	float sc[KERN_Q4_MAX_K / 32 + KERN_SC_PAD];
	const float *scp[1] = {sc};
	const uint8_t *rows[1] = {row};

	kern_q4_scales(scales, nch, group / 32, sc);
	for (; nt > 0; v += KERN_BLOCK, dots += KERN_BLOCK, nt -= KERN_BLOCK) {
		const bf16_t *x[KERN_BLOCK];
		for (int t = 0; t < KERN_BLOCK && t < nt; t++)
			x[t] = v[t].x;
		if (nt >= 4)
			kern_q4_tile(rows, scp, nch, x, dots, 1, 4);
		else if (nt == 3)
			kern_q4_tile(rows, scp, nch, x, dots, 1, 3);
		else if (nt == 2)
			kern_q4_tile(rows, scp, nch, x, dots, 1, 2);
		else
			kern_q4_tile(rows, scp, nch, x, dots, 1, 1);
	}
}

static inline void kern_q4_dots2(const uint8_t *ra, const bf16_t *sa, const uint8_t *rb,
				 const bf16_t *sb, int K, int group, const struct kern_vec *v,
				 int nt, float *da, float *db)
{
	int nch = K / 32;
	if (nch > KERN_Q4_MAX_K / 32) /* callers check; this keeps sc in bounds regardless */
		nch = KERN_Q4_MAX_K / 32;
	float sca[KERN_Q4_MAX_K / 32 + KERN_SC_PAD], scb[KERN_Q4_MAX_K / 32 + KERN_SC_PAD];
	float d[2 * KERN_BLOCK];
	const float *scp[2] = {sca, scb};
	const uint8_t *rows[2] = {ra, rb};

	kern_q4_scales(sa, nch, group / 32, sca);
	kern_q4_scales(sb, nch, group / 32, scb);
	for (; nt > 0; v += KERN_BLOCK, da += KERN_BLOCK, db += KERN_BLOCK, nt -= KERN_BLOCK) {
		const bf16_t *x[KERN_BLOCK];
		int n = nt < KERN_BLOCK ? nt : KERN_BLOCK;
		for (int t = 0; t < n; t++)
			x[t] = v[t].x;
		if (n == 4)
			kern_q4_tile(rows, scp, nch, x, d, 2, 4);
		else if (n == 3)
			kern_q4_tile(rows, scp, nch, x, d, 2, 3);
		else if (n == 2)
			kern_q4_tile(rows, scp, nch, x, d, 2, 2);
		else
			kern_q4_tile(rows, scp, nch, x, d, 2, 1);
		for (int t = 0; t < n; t++) {
			da[t] = d[2 * t];
			db[t] = d[2 * t + 1];
		}
	}
}

static inline void kern_q4_rows4(const uint8_t *row, size_t rowb, const bf16_t *scales,
				 size_t srow, int K, int group, const struct kern_vec *v, int nt,
				 float *dots)
{
	int nch = K / 32;
	if (nch > KERN_Q4_ROWS4_MAX_K / 32) /* callers check; this keeps sc in bounds */
		nch = KERN_Q4_ROWS4_MAX_K / 32;
	float sc[4 * (KERN_Q4_ROWS4_MAX_K / 32) + KERN_SC_PAD];
	const float *scp[4] = {sc, sc + nch, sc + 2 * nch, sc + 3 * nch};
	const uint8_t *rows[4] = {row, row + rowb, row + 2 * rowb, row + 3 * rowb};

	if (group == 32 && srow == (size_t)nch) /* the four rows' scales in one run */
		kern_q4_scales(scales, 4 * nch, 1, sc);
	else
		for (int r = 0; r < 4; r++)
			kern_q4_scales(scales + (size_t)r * srow, nch, group / 32, sc + r * nch);
	for (int t0 = 0; t0 < nt; t0 += KERN_BLOCK) {
		const bf16_t *x[KERN_BLOCK];
		int n = nt - t0 < KERN_BLOCK ? nt - t0 : KERN_BLOCK;
		for (int t = 0; t < n; t++)
			x[t] = v[t0 + t].x;
		if (n == 4)
			kern_q4_tile(rows, scp, nch, x, dots + 4 * t0, 4, 4);
		else if (n == 3)
			kern_q4_tile(rows, scp, nch, x, dots + 4 * t0, 4, 3);
		else if (n == 2)
			kern_q4_tile(rows, scp, nch, x, dots + 4 * t0, 4, 2);
		else
			kern_q4_tile(rows, scp, nch, x, dots + 4 * t0, 4, 1);
	}
}

/* R bf16 rows against T vectors, natural order: dots[t * R + r]; the tail
 * of K (not a multiple of 32) goes through masked loads. With R * T small,
 * U chains per product keep the vdpbf16ps latency hidden. */
static inline __attribute__((always_inline)) void
kern_bf16_tile(const bf16_t *const *rows, int K, const bf16_t *const *x, float *dots, const int R,
	       const int T)
{
	const int U = R * T == 1 ? 4 : R * T == 2 ? 2 : 1;
	__m512 acc[4][2 * KERN_BF16_BLOCK];
	__m512i w[2];
	int k = 0;

#pragma GCC unroll 4
	for (int u = 0; u < 4; u++) /* all four: the unused ones are dead code, and */
#pragma GCC unroll 16
		for (int i = 0; i < R * T; i++) /* gcc's uninitialized check is satisfied */
			acc[u][i] = _mm512_setzero_ps();
	for (; k + 32 * U <= K; k += 32 * U)
#pragma GCC unroll 4
		for (int u = 0; u < U; u++) {
#pragma GCC unroll 2
			for (int r = 0; r < R; r++)
				w[r] = _mm512_loadu_si512(rows[r] + k + 32 * u);
#pragma GCC unroll 8
			for (int t = 0; t < T; t++) {
				__m512i xv = _mm512_loadu_si512(x[t] + k + 32 * u);
#pragma GCC unroll 2
				for (int r = 0; r < R; r++)
					acc[u][t * R + r] = kern_dp(acc[u][t * R + r], w[r], xv);
			}
		}
	for (; k < K; k += 32) {
		__mmask32 m = K - k >= 32 ? ~(__mmask32)0 : ((__mmask32)1 << (K - k)) - 1;
#pragma GCC unroll 2
		for (int r = 0; r < R; r++)
			w[r] = _mm512_maskz_loadu_epi16(m, rows[r] + k);
#pragma GCC unroll 8
		for (int t = 0; t < T; t++) {
			__m512i xv = _mm512_maskz_loadu_epi16(m, x[t] + k);
#pragma GCC unroll 2
			for (int r = 0; r < R; r++)
				acc[0][t * R + r] = kern_dp(acc[0][t * R + r], w[r], xv);
		}
	}
#pragma GCC unroll 16
	for (int i = 0; i < R * T; i++)
#pragma GCC unroll 4
		for (int u = 1; u < U; u++)
			acc[0][i] = _mm512_add_ps(acc[0][i], acc[u][i]);
	kern_sums(acc[0], R * T, dots);
}

/* R (1 or 2) rows against nt vectors, KERN_BF16_BLOCK at a time:
 * d[r][t]. Each shape is its own copy of the tile. */
static inline __attribute__((always_inline)) void
kern_bf16_rows(const bf16_t *const *rows, const int R, int K, const struct kern_vec *v, int nt,
	       float *const *d)
{
	float out[2 * KERN_BF16_BLOCK];
	for (int t0 = 0; t0 < nt; t0 += KERN_BF16_BLOCK) {
		const bf16_t *x[KERN_BF16_BLOCK];
		int n = nt - t0 < KERN_BF16_BLOCK ? nt - t0 : KERN_BF16_BLOCK;
		for (int t = 0; t < n; t++)
			x[t] = v[t0 + t].x;
		switch (n) {
#define KERN_BF16_CASE(T)                                            \
	case T:                                                      \
		kern_bf16_tile(rows, K, x, out, R, T);               \
		break;
			KERN_BF16_CASE(1) KERN_BF16_CASE(2) KERN_BF16_CASE(3) KERN_BF16_CASE(4)
			KERN_BF16_CASE(5) KERN_BF16_CASE(6) KERN_BF16_CASE(7)
			default: kern_bf16_tile(rows, K, x, out, R, KERN_BF16_BLOCK);
#undef KERN_BF16_CASE
		}
		for (int t = 0; t < n; t++)
			for (int r = 0; r < R; r++)
				d[r][t0 + t] = out[t * R + r];
	}
}

static inline void kern_bf16_dots(const bf16_t *row, int K, const struct kern_vec *v, int nt,
				  float *dots)
{
	const bf16_t *rows[1] = {row};
	float *d[1] = {dots};
	kern_bf16_rows(rows, 1, K, v, nt, d);
}

static inline void kern_bf16_dots2(const bf16_t *ra, const bf16_t *rb, int K,
				   const struct kern_vec *v, int nt, float *da, float *db)
{
	const bf16_t *rows[2] = {ra, rb};
	float *d[2] = {da, db};
	kern_bf16_rows(rows, 2, K, v, nt, d);
}

#endif
