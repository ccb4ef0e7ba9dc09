/* kern_avx2.h - kern.h's inner loops on AVX2 + FMA: nibbles widened to fp32 lanes, fp32 activations, the zero point folded into per-chunk terms. */
#ifndef DDT_KERN_AVX2_H
#define DDT_KERN_AVX2_H

/* Included by kern.h only, where KERN_ISA_AVX2 is set. */

#include <immintrin.h>

static inline float kern_hsum(__m256 v)
{
	__m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
	a = _mm_add_ps(a, _mm_movehl_ps(a, a));
	a = _mm_add_ss(a, _mm_movehdup_ps(a));
	return _mm_cvtss_f32(a);
}

/* The INT4 kernel, per 32 weights (16 bytes, one "chunk"): broadcast the
 * bytes to both halves, two byte shuffles put byte j in dword j, AND / shift
 * pick the low / high nibble, convert. The zero point is not subtracted per
 * weight: sum (q - 8) x = sum q x - 8 sum x, and the second term comes
 * precomputed per chunk (xc, see kern_q4_prepare) folded into the first
 * multiply. Two chunks per iteration with separate accumulators hide the
 * FMA latency; nt is a constant at every call site, so each block size gets
 * its own copy with the accumulators in registers (separate variables: an
 * array of them would live in memory). */
#define KERN_Q4_DEQ(cc)                                                                  \
	do {                                                                             \
		__m256i bv_ = _mm256_broadcastsi128_si256(                               \
			_mm_loadu_si128((const __m128i *)(row + 16 * (cc))));            \
		__m256i d0_ = _mm256_shuffle_epi8(bv_, sh0), d1_ = _mm256_shuffle_epi8(bv_, sh1); \
		w0 = _mm256_cvtepi32_ps(_mm256_and_si256(d0_, lo4));                     \
		w1 = _mm256_cvtepi32_ps(_mm256_and_si256(d1_, lo4));                     \
		w2 = _mm256_cvtepi32_ps(_mm256_srli_epi32(d0_, 4));                      \
		w3 = _mm256_cvtepi32_ps(_mm256_srli_epi32(d1_, 4));                      \
		s = _mm256_broadcast_ss(sc + (cc));                                      \
	} while (0)

/* One token: two half-chains shorten the latency; several tokens: one chain
 * each (one op fewer; the tokens overlap each other's latency). */
#define KERN_Q4_TOK(acc, xp, cp, cc)                                                     \
	do {                                                                             \
		const float *p_ = (xp) + 32 * (cc);                                      \
		__m256 g_ = _mm256_fmsub_ps(w0, _mm256_loadu_ps(p_),                     \
					    _mm256_loadu_ps((cp) + 8 * (cc)));           \
		g_ = _mm256_fmadd_ps(w1, _mm256_loadu_ps(p_ + 8), g_);                   \
		if (nt == 1) {                                                           \
			__m256 h_ = _mm256_mul_ps(w2, _mm256_loadu_ps(p_ + 16));         \
			h_ = _mm256_fmadd_ps(w3, _mm256_loadu_ps(p_ + 24), h_);          \
			g_ = _mm256_add_ps(g_, h_);                                      \
		} else {                                                                 \
			g_ = _mm256_fmadd_ps(w2, _mm256_loadu_ps(p_ + 16), g_);          \
			g_ = _mm256_fmadd_ps(w3, _mm256_loadu_ps(p_ + 24), g_);          \
		}                                                                        \
		acc = _mm256_fmadd_ps(g_, s, acc);                                       \
	} while (0)

#define KERN_Q4_TOKS(A0, A1, A2, A3, cc)                                                 \
	do {                                                                             \
		KERN_Q4_TOK(A0, x0, c0, cc);                                             \
		if (nt > 1)                                                              \
			KERN_Q4_TOK(A1, x1, c1, cc);                                     \
		if (nt > 2)                                                              \
			KERN_Q4_TOK(A2, x2, c2, cc);                                     \
		if (nt > 3)                                                              \
			KERN_Q4_TOK(A3, x3, c3, cc);                                     \
	} while (0)

/* One fp32 scale per chunk of 32 (sc[nch]), so the loops broadcast straight
 * from memory; cpg = chunks per group. */
static inline void kern_q4_scales(const bf16_t *scales, int nch, int cpg, float *sc)
{
	if (cpg == 1) {
		int nv = nch & ~7;
		for (int g = 0; g < nv; g += 8) {
			__m128i v = _mm_loadu_si128((const __m128i *)(scales + g));
			_mm256_storeu_ps(sc + g, _mm256_castsi256_ps(_mm256_slli_epi32(
							 _mm256_cvtepu16_epi32(v), 16)));
		}
		for (int j = 0; j < (nch & 7); j++)
			sc[nv + j] = bf16_to_float(scales[nv + j]);
	} else {
		for (int g = 0; g < nch / cpg; g++) {
			float v = bf16_to_float(scales[g]);
			for (int j = 0; j < cpg; j++)
				sc[g * cpg + j] = v;
		}
	}
}

/* Byte shuffles that spread packed bytes 0-7 (KERN_Q4_SH0) and 8-15
 * (KERN_Q4_SH1) into the low byte of eight 32-bit lanes, for nibble unpacking. */
#define KERN_Q4_SH0                                                                         \
	_mm256_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1, 4, -1, -1, \
			 -1, 5, -1, -1, -1, 6, -1, -1, -1, 7, -1, -1, -1)
#define KERN_Q4_SH1                                                                         \
	_mm256_setr_epi8(8, -1, -1, -1, 9, -1, -1, -1, 10, -1, -1, -1, 11, -1, -1, -1, 12, -1,  \
			 -1, -1, 13, -1, -1, -1, 14, -1, -1, -1, 15, -1, -1, -1)

static inline __attribute__((always_inline)) void
kern_q4_block(const uint8_t *row, const bf16_t *scales, int K, int group, const float *const *x,
	      const float *const *xc, float *dots, const int nt)
{
	const __m256i sh0 = KERN_Q4_SH0, sh1 = KERN_Q4_SH1;
	const __m256i lo4 = _mm256_set1_epi32(15);
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	__m256 b0 = a0, b1 = a0, b2 = a0, b3 = a0;
	__m256 w0, w1, w2, w3, s;
	const float *x0 = x[0], *x1 = nt > 1 ? x[1] : x0, *x2 = nt > 2 ? x[2] : x0,
		    *x3 = nt > 3 ? x[3] : x0;
	const float *c0 = xc[0], *c1 = nt > 1 ? xc[1] : c0, *c2 = nt > 2 ? xc[2] : c0,
		    *c3 = nt > 3 ? xc[3] : c0;
	int nch = K / 32, cpg = group / 32, c = 0;
	if (nch > KERN_Q4_MAX_K / 32) /* callers check; this keeps sc in bounds regardless */
		nch = KERN_Q4_MAX_K / 32;
	float sc[KERN_Q4_MAX_K / 32];

	kern_q4_scales(scales, nch, cpg, sc);
	for (; c + 2 <= nch; c += 2) {
		KERN_Q4_DEQ(c);
		KERN_Q4_TOKS(a0, a1, a2, a3, c);
		KERN_Q4_DEQ(c + 1);
		if (nt == 1) /* one token: a second chain; more: registers are short */
			KERN_Q4_TOKS(b0, b1, b2, b3, c + 1);
		else
			KERN_Q4_TOKS(a0, a1, a2, a3, c + 1);
	}
	if (c < nch) {
		KERN_Q4_DEQ(c);
		KERN_Q4_TOKS(a0, a1, a2, a3, c);
	}
	dots[0] = kern_hsum(_mm256_add_ps(a0, b0));
	if (nt > 1)
		dots[1] = kern_hsum(_mm256_add_ps(a1, b1));
	if (nt > 2)
		dots[2] = kern_hsum(_mm256_add_ps(a2, b2));
	if (nt > 3)
		dots[3] = kern_hsum(_mm256_add_ps(a3, b3));
}

/* Two rows (a gate row and its up row) against the same vectors: every x
 * load serves both rows, which halves the loads per weight, and the loads,
 * not the dequantization, are what limits the one-row kernel. Per token one
 * chain per row; nt at most 2 keeps everything in the 16 registers. */
#define KERN_Q4_DEQ2(ra, rb, cc)                                                 \
	do {                                                                             \
		__m256i av_ = _mm256_broadcastsi128_si256(                               \
			_mm_loadu_si128((const __m128i *)((ra) + 16 * (cc))));           \
		__m256i bv_ = _mm256_broadcastsi128_si256(                               \
			_mm_loadu_si128((const __m128i *)((rb) + 16 * (cc))));           \
		__m256i a0_ = _mm256_shuffle_epi8(av_, sh0), a1_ = _mm256_shuffle_epi8(av_, sh1); \
		__m256i b0_ = _mm256_shuffle_epi8(bv_, sh0), b1_ = _mm256_shuffle_epi8(bv_, sh1); \
		u0 = _mm256_cvtepi32_ps(_mm256_and_si256(a0_, lo4));                     \
		u1 = _mm256_cvtepi32_ps(_mm256_and_si256(a1_, lo4));                     \
		u2 = _mm256_cvtepi32_ps(_mm256_srli_epi32(a0_, 4));                      \
		u3 = _mm256_cvtepi32_ps(_mm256_srli_epi32(a1_, 4));                      \
		v0 = _mm256_cvtepi32_ps(_mm256_and_si256(b0_, lo4));                     \
		v1 = _mm256_cvtepi32_ps(_mm256_and_si256(b1_, lo4));                     \
		v2 = _mm256_cvtepi32_ps(_mm256_srli_epi32(b0_, 4));                      \
		v3 = _mm256_cvtepi32_ps(_mm256_srli_epi32(b1_, 4));                      \
	} while (0)

#define KERN_Q4_TOK2(accA, accB, xp, cp, cc)                                             \
	do {                                                                             \
		const float *p_ = (xp) + 32 * (cc);                                      \
		__m256 x_ = _mm256_loadu_ps(p_), c_ = _mm256_loadu_ps((cp) + 8 * (cc));  \
		__m256 g_ = _mm256_fmsub_ps(u0, x_, c_), h_ = _mm256_fmsub_ps(v0, x_, c_); \
		x_ = _mm256_loadu_ps(p_ + 8);                                            \
		g_ = _mm256_fmadd_ps(u1, x_, g_);                                        \
		h_ = _mm256_fmadd_ps(v1, x_, h_);                                        \
		x_ = _mm256_loadu_ps(p_ + 16);                                           \
		g_ = _mm256_fmadd_ps(u2, x_, g_);                                        \
		h_ = _mm256_fmadd_ps(v2, x_, h_);                                        \
		x_ = _mm256_loadu_ps(p_ + 24);                                           \
		g_ = _mm256_fmadd_ps(u3, x_, g_);                                        \
		h_ = _mm256_fmadd_ps(v3, x_, h_);                                        \
		accA = _mm256_fmadd_ps(g_, _mm256_broadcast_ss(sca + (cc)), accA);       \
		accB = _mm256_fmadd_ps(h_, _mm256_broadcast_ss(scb + (cc)), accB);       \
	} while (0)

static inline __attribute__((always_inline)) void
kern_q4_block2(const uint8_t *ra, const uint8_t *rb, const float *sca, const float *scb, int nch,
	       const float *const *x, const float *const *xc, float *da, float *db, const int nt)
{
	const __m256i sh0 = KERN_Q4_SH0, sh1 = KERN_Q4_SH1;
	const __m256i lo4 = _mm256_set1_epi32(15);
	__m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0;
	__m256 u0, u1, u2, u3, v0, v1, v2, v3;
	const float *x0 = x[0], *x1 = nt > 1 ? x[1] : x0;
	const float *c0 = xc[0], *c1 = nt > 1 ? xc[1] : c0;

	for (int c = 0; c < nch; c++) {
		KERN_Q4_DEQ2(ra, rb, c);
		KERN_Q4_TOK2(a0, b0, x0, c0, c);
		if (nt > 1)
			KERN_Q4_TOK2(a1, b1, x1, c1, c);
	}
	da[0] = kern_hsum(a0);
	db[0] = kern_hsum(b0);
	if (nt > 1) {
		da[1] = kern_hsum(a1);
		db[1] = kern_hsum(b1);
	}
}

static inline __attribute__((always_inline)) void
kern_bf16_block(const bf16_t *row, int K, const float *const *x, float *dots, const int nt)
{
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
	const float *x0 = x[0], *x1 = nt > 1 ? x[1] : x0, *x2 = nt > 2 ? x[2] : x0,
		    *x3 = nt > 3 ? x[3] : x0;
	int k = 0;
	if (nt == 1) { /* one token: four chains, or the FMA latency sets the pace */
		for (; k + 32 <= K; k += 32) {
			__m256i v = _mm256_loadu_si256((const __m256i *)(row + k));
			__m256i e = _mm256_loadu_si256((const __m256i *)(row + k + 16));
			__m256 w0 = _mm256_castsi256_ps(_mm256_slli_epi32(
				_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)), 16));
			__m256 w1 = _mm256_castsi256_ps(_mm256_slli_epi32(
				_mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)), 16));
			__m256 w2 = _mm256_castsi256_ps(_mm256_slli_epi32(
				_mm256_cvtepu16_epi32(_mm256_castsi256_si128(e)), 16));
			__m256 w3 = _mm256_castsi256_ps(_mm256_slli_epi32(
				_mm256_cvtepu16_epi32(_mm256_extracti128_si256(e, 1)), 16));
			a0 = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x0 + k), a0);
			a1 = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x0 + k + 8), a1);
			a2 = _mm256_fmadd_ps(w2, _mm256_loadu_ps(x0 + k + 16), a2);
			a3 = _mm256_fmadd_ps(w3, _mm256_loadu_ps(x0 + k + 24), a3);
		}
		a0 = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
		a1 = a2 = a3 = _mm256_setzero_ps();
	}
	for (; k < K; k += 8) {
		__m128i v = _mm_loadu_si128((const __m128i *)(row + k));
		__m256 w = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
		a0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x0 + k), a0);
		if (nt > 1)
			a1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x1 + k), a1);
		if (nt > 2)
			a2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x2 + k), a2);
		if (nt > 3)
			a3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(x3 + k), a3);
	}
	dots[0] = kern_hsum(a0);
	if (nt > 1)
		dots[1] = kern_hsum(a1);
	if (nt > 2)
		dots[2] = kern_hsum(a2);
	if (nt > 3)
		dots[3] = kern_hsum(a3);
}

/* Unpacks v[0..nt) into the pointer arrays the blocks take. */
#define KERN_UNPACK(v, nt)                                                               \
	const float *x[KERN_BLOCK], *xc[KERN_BLOCK];                                     \
	for (int t_ = 0; t_ < (nt) && t_ < KERN_BLOCK; t_++) {                           \
		x[t_] = (v)[t_].x;                                                       \
		xc[t_] = (v)[t_].xc;                                                     \
	}

static inline void kern_q4_dots(const uint8_t *row, const bf16_t *scales, int K, int group,
				const struct kern_vec *v, int nt, float *dots)
{
	for (; nt > 0; v += KERN_BLOCK, dots += KERN_BLOCK, nt -= KERN_BLOCK) {
		KERN_UNPACK(v, nt);
		if (nt >= 4)
			kern_q4_block(row, scales, K, group, x, xc, dots, 4);
		else if (nt == 3)
			kern_q4_block(row, scales, K, group, x, xc, dots, 3);
		else if (nt == 2)
			kern_q4_block(row, scales, K, group, x, xc, dots, 2);
		else
			kern_q4_block(row, scales, K, group, x, xc, dots, 1);
	}
}

static inline void kern_q4_dots2(const uint8_t *ra, const bf16_t *sa, const uint8_t *rb,
				 const bf16_t *sb, int K, int group, const struct kern_vec *v,
				 int nt, float *da, float *db)
{
	int nch = K / 32, cpg = group / 32;
	if (nch > KERN_Q4_MAX_K / 32) /* callers check; this keeps sc in bounds regardless */
		nch = KERN_Q4_MAX_K / 32;
	float sca[KERN_Q4_MAX_K / 32], scb[KERN_Q4_MAX_K / 32];

	kern_q4_scales(sa, nch, cpg, sca);
	kern_q4_scales(sb, nch, cpg, scb);
	for (; nt >= 2; nt -= 2, v += 2, da += 2, db += 2) {
		KERN_UNPACK(v, 2);
		kern_q4_block2(ra, rb, sca, scb, nch, x, xc, da, db, 2);
	}
	if (nt == 1) {
		KERN_UNPACK(v, 1);
		kern_q4_block2(ra, rb, sca, scb, nch, x, xc, da, db, 1);
	}
}

#define KERN_Q4_ROW4(acc, r, cc)                                                         \
	do {                                                                             \
		__m256i bv_ = _mm256_broadcastsi128_si256(                               \
			_mm_loadu_si128((const __m128i *)(row + (r) * rowb + 16 * (cc))));\
		__m256i d0_ = _mm256_shuffle_epi8(bv_, sh0), d1_ = _mm256_shuffle_epi8(bv_, sh1); \
		__m256 g_ = _mm256_fmsub_ps(_mm256_cvtepi32_ps(_mm256_and_si256(d0_, lo4)), xa, cv); \
		g_ = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_and_si256(d1_, lo4)), xb, g_); \
		g_ = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(d0_, 4)), xc_, g_); \
		g_ = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(d1_, 4)), xd, g_); \
		acc = _mm256_fmadd_ps(g_, _mm256_broadcast_ss(sc + (r) * nch + (cc)), acc); \
	} while (0)

static inline void kern_q4_rows4_one(const uint8_t *row, size_t rowb, const bf16_t *scales,
				     size_t srow, int K, int group, const struct kern_vec *v,
				     float *dots)
{
	const __m256i sh0 = KERN_Q4_SH0, sh1 = KERN_Q4_SH1;
	const __m256i lo4 = _mm256_set1_epi32(15);
	const float *x = v->x, *xc = v->xc;
	int nch = K / 32, cpg = group / 32;
	float sc[4 * (KERN_Q4_ROWS4_MAX_K / 32)];
	__m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;

	if (nch > KERN_Q4_ROWS4_MAX_K / 32) /* callers check; this keeps sc in bounds */
		nch = KERN_Q4_ROWS4_MAX_K / 32;
	for (int r = 0; r < 4; r++)
		for (int g = 0; g < nch / cpg; g++) {
			float s = bf16_to_float(scales[(size_t)r * srow + (size_t)g]);
			for (int j = 0; j < cpg; j++)
				sc[r * nch + g * cpg + j] = s;
		}
	for (int c = 0; c < nch; c++) {
		const float *xp = x + 32 * c;
		__m256 xa = _mm256_loadu_ps(xp), xb = _mm256_loadu_ps(xp + 8);
		__m256 xc_ = _mm256_loadu_ps(xp + 16), xd = _mm256_loadu_ps(xp + 24);
		__m256 cv = _mm256_loadu_ps(xc + 8 * c);
		KERN_Q4_ROW4(a0, 0, c);
		KERN_Q4_ROW4(a1, 1, c);
		KERN_Q4_ROW4(a2, 2, c);
		KERN_Q4_ROW4(a3, 3, c);
	}
	/* four reductions at once: [s0 s1 s2 s3] */
	__m256 t = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
	__m128 u = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
	_mm_storeu_ps(dots, u);
}

/* One vector: the four rows share its loads; more: two row pairs. */
static inline void kern_q4_rows4(const uint8_t *row, size_t rowb, const bf16_t *scales,
				 size_t srow, int K, int group, const struct kern_vec *v, int nt,
				 float *dots)
{
	if (nt == 1) {
		kern_q4_rows4_one(row, rowb, scales, srow, K, group, v, dots);
		return;
	}
	for (int t0 = 0; t0 < nt; t0 += KERN_BLOCK) {
		int n = nt - t0 < KERN_BLOCK ? nt - t0 : KERN_BLOCK;
		float d[4][KERN_BLOCK];
		for (int r = 0; r < 4; r += 2)
			kern_q4_dots2(row + r * rowb, scales + r * srow, row + (r + 1) * rowb,
				      scales + (r + 1) * srow, K, group, v + t0, n, d[r], d[r + 1]);
		for (int t = 0; t < n; t++)
			for (int r = 0; r < 4; r++)
				dots[(t0 + t) * 4 + r] = d[r][t];
	}
}

static inline void kern_bf16_dots(const bf16_t *row, int K, const struct kern_vec *v, int nt,
				  float *dots)
{
	for (; nt > 0; v += KERN_BLOCK, dots += KERN_BLOCK, nt -= KERN_BLOCK) {
		const float *x[KERN_BLOCK];
		for (int t = 0; t < nt && t < KERN_BLOCK; t++)
			x[t] = v[t].x;
		if (nt >= 4)
			kern_bf16_block(row, K, x, dots, 4);
		else if (nt == 3)
			kern_bf16_block(row, K, x, dots, 3);
		else if (nt == 2)
			kern_bf16_block(row, K, x, dots, 2);
		else
			kern_bf16_block(row, K, x, dots, 1);
	}
}
#undef KERN_UNPACK

#endif
