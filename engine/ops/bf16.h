/* bf16.h - bfloat16 <-> float conversion for C and CUDA host code (storage is uint16_t). */
#ifndef DDT_OPS_BF16_H
#define DDT_OPS_BF16_H

#include <stdint.h>
#include <string.h>

/* bf16 values are stored as their raw bits so the layouts are the same in C,
 * C++ host code and device memory. */
typedef uint16_t bf16_t;

static inline float bf16_to_float(bf16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* Round to nearest, ties to even (what __float2bfloat16_rn does); NaN stays a
 * quiet NaN so poisoned values survive a round trip. */
static inline bf16_t bf16_from_float(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (bf16_t)((u >> 16) | 0x40u);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (bf16_t)(u >> 16);
}

/* The float that bf16 storage of f would read back as. */
static inline float bf16_round(float f)
{
	return bf16_to_float(bf16_from_float(f));
}

#endif
