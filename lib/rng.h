/* rng.h - the seeded generator every op's inputs come from (splitmix64 seeding xoshiro256**). */
#ifndef DDT_OPS_RNG_H
#define DDT_OPS_RNG_H

#include <math.h>
#include <stdint.h>

/* Same seed, same stream on every machine: tests and benchmarks reproduce
 * their inputs from the seed alone. */
struct rng {
	uint64_t s[4];
};

static inline uint64_t rng_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix64(&seed);
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t out = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return out;
}

/* Uniform in [0, 1) with 24 random bits. */
static inline float rng_unit(struct rng *r)
{
	return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* Uniform in (0, 1) with 53 bits, never 0 or 1 (inverse CDFs are infinite
 * there). */
static inline double rng_open01(struct rng *r)
{
	return ((double)(rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* Uniform in [lo, hi). */
static inline float rng_uniform(struct rng *r, float lo, float hi)
{
	return lo + (hi - lo) * rng_unit(r);
}

/* Uniform integer in [0, n), n > 0 (the multiply-shift bias is under 2^-32). */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Standard normal (Box-Muller; one value per call keeps the stream simple). */
static inline float rng_normal(struct rng *r)
{
	float u = ((float)(rng_next(r) >> 40) + 0.5f) * (1.0f / 16777216.0f); /* never 0 */
	float v = rng_unit(r);
	return sqrtf(-2.0f * logf(u)) * cosf(6.28318531f * v);
}

#endif
