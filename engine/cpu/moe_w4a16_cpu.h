/* moe_w4a16_cpu.h - the CPU side of moe_w4a16: the instance with fast-path scratch, the kernels' entry points. */
#ifndef DDT_MOE_W4A16_CPU_H
#define DDT_MOE_W4A16_CPU_H

#include "cpu/kern.h"
#include "op.h"
#include "ops/moe_w4a16.h"

/* The C side allocates this; callers see &in (the first member), so a
 * struct moe_w4a16_inst pointer and a struct moe_cpu pointer are the same. */
struct moe_cpu {
	struct moe_w4a16_inst in;
	/* fast-path scratch, sized at setup for the worst case */
	kern_act_t *xq;   /* [M][hidden] x in the INT4 kernel's order (kern_q4_pos) */
	float *xqc;       /* [M][hidden/4] its kern_q4_prepare terms */
	kern_act_t *xn;   /* [M][hidden] x in natural order (bf16 shared expert) */
	int32_t *first;   /* [experts + 1] first assignment of each expert */
	int32_t *fill;    /* [experts] assignments placed so far */
	int32_t *touched; /* [experts] local experts with at least one token */
	int32_t *tok;     /* [M*topk] token of each assignment, grouped by expert */
	float *tw;        /* [M*topk] routing weight of each assignment */
	kern_act_t *h;    /* [M*topk][inter] bf16-rounded SiLU(g)*u, kernel order */
	float *hc;        /* [M*topk][inter/4] its kern_q4_prepare terms */
	kern_act_t *hsh;  /* [M][shared_inter] the shared expert's h, natural order */
	int ntouched;
	uint64_t seed;    /* the weights' seed (setup_from keeps them for it) */
};

/* The routing generator: global expert ids [M][topk] for `experts` experts,
 * distinct within a token; with probability `overlap` a slot reuses an expert
 * of an earlier token (tree tokens share experts), else it is uniform.
 * overlap 0 is uniform routing; 1 gives every token the first token's set. */
void moe_route(int32_t *ids, int M, int topk, int experts, double overlap, uint64_t seed);

/* Unique bytes of weights and scales one run at p reads: the touched routed
 * experts' plus the shared expert's (NaN when p is invalid). */
double moe_w4a16_weight_bytes(const struct op_params *p);

extern const struct op_desc op_moe_w4a16;

int moe_w4a16_run_cpu(void *inst);

#endif
