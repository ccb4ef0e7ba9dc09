/* calib_fields.h - what the calibration's loader (calib.c) and its
 * overrides (calib_set.c) both go by: the numeric fields of each section,
 * the assumptions' names, and the range each value keeps. Private to the
 * calibration's files. */
#ifndef DDT_CALIB_FIELDS_H
#define DDT_CALIB_FIELDS_H

#include "calib.h"

#include <math.h>
#include <stddef.h>

/* A numeric field of a struct, for loading and for --set. */
struct field {
	const char *key;
	size_t off;
	unsigned flags;
};

#define F(type, name, flags) {#name, offsetof(type, name), flags}
#define REQ_POS (Y_REQUIRED | Y_POSITIVE)
#define REQ_INT (Y_REQUIRED | Y_POSITIVE | Y_INTEGER)

static const struct field gpu_fields[] = {
	F(struct gpu, mem_gb, REQ_POS),      F(struct gpu, bw_tbps, REQ_POS),
	F(struct gpu, bf16_tflops, REQ_POS), F(struct gpu, fp8_tflops, REQ_POS),
	F(struct gpu, fp4_tflops, Y_POSITIVE), F(struct gpu, link_gbps, Y_POSITIVE),
};

static const struct field geometry_fields[] = {
	F(struct geometry, layers, REQ_INT),
	F(struct geometry, dense_layers, Y_REQUIRED | Y_NONNEG | Y_INTEGER),
	F(struct geometry, hidden, REQ_INT),
	F(struct geometry, dense_intermediate, REQ_INT),
	F(struct geometry, experts, REQ_INT),
	F(struct geometry, experts_per_token, REQ_INT),
	F(struct geometry, shared_experts, Y_REQUIRED | Y_NONNEG | Y_INTEGER),
	F(struct geometry, moe_intermediate, REQ_INT),
	F(struct geometry, attn_heads, REQ_INT),
	F(struct geometry, q_lora_rank, REQ_INT),
	F(struct geometry, kv_lora_rank, REQ_INT),
	F(struct geometry, qk_nope_dim, REQ_INT),
	F(struct geometry, qk_rope_dim, REQ_INT),
	F(struct geometry, v_head_dim, REQ_INT),
	F(struct geometry, vocab, REQ_INT),
	F(struct geometry, context_tokens, REQ_INT),
	F(struct geometry, expert_weight_bits, REQ_INT),
	F(struct geometry, expert_group_size, REQ_INT),
	F(struct geometry, expert_scale_bytes, REQ_INT),
	F(struct geometry, dense_weight_bytes, REQ_INT),
	F(struct geometry, kv_cache_bytes, REQ_INT),
	F(struct geometry, tp, REQ_INT),
};

static const struct field drafter_fields[] = {
	F(struct drafter, block, REQ_INT),  F(struct drafter, layers, REQ_INT),
	F(struct drafter, hidden, REQ_INT), F(struct drafter, q_heads, REQ_INT),
	F(struct drafter, kv_heads, REQ_INT), F(struct drafter, intermediate, REQ_INT),
};

static const struct field anchor_fields[] = {
	F(struct anchor, block, REQ_INT),
	F(struct anchor, budget, REQ_INT),
	F(struct anchor, concurrency, REQ_INT),
	F(struct anchor, tok_s, Y_POSITIVE),
	F(struct anchor, accept, Y_POSITIVE),
	F(struct anchor, step_ms, Y_POSITIVE),
	F(struct anchor, error_pct, Y_POSITIVE),
};

#define NFIELDS(a) (sizeof(a) / sizeof *(a))

static const char *const asm_names[ASM_COUNT] = {
	[ASM_NATIVE_CUT] = "native_cut",
	[ASM_MOE_TRANSFER] = "moe_transfer",
	[ASM_SHARE_ATTN] = "share_attn",
	[ASM_SHARE_DRAFT] = "share_draft",
	[ASM_SHARE_TREE] = "share_tree",
	[ASM_SHARE_OVERHEAD] = "share_overhead",
	[ASM_TREE_SCALE_FRAC] = "tree_scale_frac",
	[ASM_MOE_COMPUTE_EFF] = "moe_compute_eff",
	[ASM_ALLREDUCE_PCIE] = "allreduce_pcie_factor",
	[ASM_NATIVE_TREE_US] = "native_tree_us",
	[ASM_ANCHOR_CONTEXT] = "anchor_context",
	[ASM_ATTN_CTX_EFF] = "attn_ctx_eff",
	[ASM_ALLREDUCE_IMPL] = "allreduce_impl",
};

/* The range a value keeps, whether the calibration's YAML or --set gives it:
 * lo and hi, each end open or closed; says completes "must be ...". */
struct range {
	double lo, hi;
	unsigned char lo_open, hi_open;
	const char *says;
};

#define RANGE_FRACTION {0, 1, 0, 0, "within [0, 1]"}
#define RANGE_POSITIVE {0, INFINITY, 1, 0, "greater than zero"}

static const struct range asm_ranges[ASM_COUNT] = {
	[ASM_NATIVE_CUT] = RANGE_FRACTION,
	[ASM_MOE_TRANSFER] = RANGE_POSITIVE,
	[ASM_SHARE_ATTN] = RANGE_FRACTION,
	[ASM_SHARE_DRAFT] = RANGE_FRACTION,
	[ASM_SHARE_TREE] = RANGE_FRACTION,
	[ASM_SHARE_OVERHEAD] = RANGE_FRACTION,
	[ASM_TREE_SCALE_FRAC] = RANGE_FRACTION,
	[ASM_MOE_COMPUTE_EFF] = {0, 1, 1, 0, "within (0, 1]"},
	[ASM_ALLREDUCE_PCIE] = RANGE_POSITIVE,
	[ASM_NATIVE_TREE_US] = RANGE_POSITIVE,
	[ASM_ANCHOR_CONTEXT] = RANGE_POSITIVE,
	[ASM_ATTN_CTX_EFF] = {0, 1, 1, 0, "within (0, 1]"},
	[ASM_ALLREDUCE_IMPL] = RANGE_POSITIVE,
};

static const struct range moe_param_ranges[MOE_P_COUNT] = {
	[MOE_P_EFFICIENCY] = {0, 1, 1, 0, "within (0, 1]"},
	[MOE_P_OVERLAP] = {0, 1, 0, 1, "within [0, 1)"},
	[MOE_P_FIXED_US] = {0, INFINITY, 0, 0, "zero or more"},
};

/* Whether v lies in r (NaN never does). */
static inline int range_holds(const struct range *r, double v)
{
	return (r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi);
}

static const char *const dist_names[] = {"fixed", "uniform", "triangular", "normal", "lognormal"};

static const char *const moe_param_names[MOE_P_COUNT] = {"efficiency", "overlap", "fixed_us"};

static inline int cmp_point(const void *a, const void *b)
{
	double x = ((const struct moe_point *)a)->m, y = ((const struct moe_point *)b)->m;
	return (x > y) - (x < y);
}

#endif
