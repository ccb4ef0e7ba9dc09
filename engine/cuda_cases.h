/* cuda_cases.h - the sizes every CUDA path is validated at besides the templates' ones: odd and padded dimensions, every kernel variant, the limits; one list for the GPU tests, the CPU simulator's tests and tools/gpu-check. */
#ifndef DDT_CUDA_CASES_H
#define DDT_CUDA_CASES_H

#include <stdint.h>

#include "op.h"

struct cuda_case {
	const char *op;     /* op table name */
	const char *params; /* "key=value,..." over the op's own parameters */
	uint64_t seed;
	const char *why;    /* the edge it covers */
	int sim;            /* small enough for the CPU simulator (tests/test_cuda_sim.c) */
};

/* The cases, ending with a NULL op. */
extern const struct cuda_case cuda_cases[];

/* c's params into *p (keys point at the op's static parameter names).
 * Returns 0, or DDT_EINPUT naming the unknown op or key. */
int cuda_case_params(const struct cuda_case *c, struct op_params *p);

#endif
