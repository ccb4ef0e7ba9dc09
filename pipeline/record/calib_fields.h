/* calib_fields.h - what the calibration's loader (calib.c) and its
 * overrides (calib_set.c) both go by: the tables of each section's keys
 * (calib_schema.c), the assumptions' names, and the range each value keeps.
 * Private to the calibration's files. */
#ifndef DDT_CALIB_FIELDS_H
#define DDT_CALIB_FIELDS_H

#include "calib.h"

#include "yschema.h"

#include <math.h>
#include <stddef.h>

/* The calibration's tables of keys (yschema.h, calib_schema.c): the loader
 * reads each section by its table, --set takes and checks its numbers by
 * them, and --keys lists them. */
#define REQ_POS (Y_REQUIRED | Y_POSITIVE)
#define REQ_INT (Y_REQUIRED | Y_POSITIVE | Y_INTEGER)

extern const struct yschema calib_gpu_schema;      /* gpus.GPU (struct gpu) */
extern const struct yschema calib_geometry_schema; /* model (struct geometry) */
extern const struct yschema calib_drafter_schema;  /* drafter (struct drafter) */
extern const struct yschema calib_anchors_schema;  /* anchors (struct calib) */
extern const struct yschema calib_anchor_schema;   /* anchors.NAME (struct anchor) */
extern const struct yschema calib_limits_schema;   /* anchors.sglang_limits (struct calib) */
extern const struct yschema calib_moe_ref_schema;  /* moe_reference (struct moe_reference) */
extern const struct yschema calib_floor_schema;    /* moe_reference.floor_us (the same) */
extern const struct yschema calib_point_schema;    /* moe_reference.points[] (struct moe_point) */
extern const struct yschema calib_asm_schema;      /* assumptions (struct calib) */
extern const struct yschema calib_xfer_schema;     /* moe_transfer (struct calib) */
extern const struct yschema calib_measured_schema; /* measured (struct measured) */
extern const struct yschema calib_ar_schema;       /* allreduce (struct allreduce) */

/* The named assumptions in enum assumption's order: their keys in
 * assumptions.yaml, in --set and in every document. */
#define ASM_LIST(X)                                                                         \
	X(ASM_NATIVE_CUT, "native_cut")                                                     \
	X(ASM_MOE_TRANSFER, "moe_transfer")                                                 \
	X(ASM_SHARE_ATTN, "share_attn")                                                     \
	X(ASM_SHARE_DRAFT, "share_draft")                                                   \
	X(ASM_SHARE_TREE, "share_tree")                                                     \
	X(ASM_SHARE_OVERHEAD, "share_overhead")                                             \
	X(ASM_TREE_SCALE_FRAC, "tree_scale_frac")                                           \
	X(ASM_MOE_COMPUTE_EFF, "moe_compute_eff")                                           \
	X(ASM_ALLREDUCE_PCIE, "allreduce_pcie_factor")                                      \
	X(ASM_NATIVE_TREE_US, "native_tree_us")                                             \
	X(ASM_ANCHOR_CONTEXT, "anchor_context")                                             \
	X(ASM_ATTN_CTX_EFF, "attn_ctx_eff")                                                 \
	X(ASM_ALLREDUCE_IMPL, "allreduce_impl")
#define ASM_NAME_(e, name) [e] = (name),
static const char *const asm_names[ASM_COUNT] = {ASM_LIST(ASM_NAME_)};
#undef ASM_NAME_


/* The range a value keeps, whether the calibration's YAML or --set gives it. */

#define RANGE_FRACTION {0, 1, 0, 0, "within [0, 1]"}
#define RANGE_POSITIVE {0, INFINITY, 1, 0, "greater than zero"}

static const struct yschema_range asm_ranges[ASM_COUNT] = {
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

static const struct yschema_range moe_param_ranges[MOE_P_COUNT] = {
	[MOE_P_EFFICIENCY] = {0, 1, 1, 0, "within (0, 1]"},
	[MOE_P_OVERLAP] = {0, 1, 0, 1, "within [0, 1)"},
	[MOE_P_FIXED_US] = {0, INFINITY, 0, 0, "zero or more"},
};

/* Whether v lies in r (NaN never does). */
static inline int range_holds(const struct yschema_range *r, double v)
{
	return (r->lo_open ? v > r->lo : v >= r->lo) && (r->hi_open ? v < r->hi : v <= r->hi);
}

/* The distributions' kinds by name, in enum dist_kind's order. */
static const struct yschema_name dist_kind_names[] = {
	{"fixed", DIST_FIXED},   {"uniform", DIST_UNIFORM}, {"triangular", DIST_TRIANGULAR},
	{"normal", DIST_NORMAL}, {"lognormal", DIST_LOGNORMAL}, {NULL, 0}};

static const char *const moe_param_names[MOE_P_COUNT] = {"efficiency", "overlap", "fixed_us"};

static inline int cmp_point(const void *a, const void *b)
{
	double x = ((const struct moe_point *)a)->m, y = ((const struct moe_point *)b)->m;
	return (x > y) - (x < y);
}

#endif
