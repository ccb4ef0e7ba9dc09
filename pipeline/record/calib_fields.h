/* calib_fields.h - what the calibration's loader (calib.c) and its
 * overrides (calib_set.c) both go by: the numeric fields of each section,
 * the assumptions' names, and the range each value keeps. Private to the
 * calibration's files. */
#ifndef DDT_CALIB_FIELDS_H
#define DDT_CALIB_FIELDS_H

#include "calib.h"

#include "yschema.h"

#include <math.h>
#include <stddef.h>

/* The calibration's tables of keys (yschema.h): the loader reads each
 * section with its table, --set takes and checks its numbers by it, and
 * --keys lists them from it. "[source]" is the tag of calibration/SOURCES.md
 * the section's own source line cites. */
#define REQ_POS (Y_REQUIRED | Y_POSITIVE)
#define REQ_INT (Y_REQUIRED | Y_POSITIVE | Y_INTEGER)
#define REQ_STR(T, m, h) YS_FIELD(T, m, YS_STR, Y_REQUIRED, .help = (h))
#define NUM(T, m, fl, u, h, src) YS_FIELD(T, m, YS_NUM, fl, .unit = (u), .help = (h), .source = (src))

#define DATASHEET "vendor datasheet, dense"
static const struct yschema_field gpu_fields[] = {
	REQ_STR(struct gpu, name, "the product's name"),
	REQ_STR(struct gpu, arch, "compute architecture: sm_90, sm_100, sm_103, sm_120"),
	REQ_STR(struct gpu, memory, "memory kind: hbm3, hbm3e, gddr7 (transfer.yaml's memory_kinds)"),
	REQ_STR(struct gpu, link, "interconnect: nvlink or pcie"),
	REQ_STR(struct gpu, source, "where the figures come from"),
	NUM(struct gpu, mem_gb, REQ_POS, "GB", "memory per GPU", DATASHEET),
	NUM(struct gpu, bw_tbps, REQ_POS, "TB/s", "memory bandwidth", DATASHEET),
	NUM(struct gpu, bf16_tflops, REQ_POS, "TFLOPS", "dense BF16 tensor throughput", DATASHEET),
	NUM(struct gpu, fp8_tflops, REQ_POS, "TFLOPS", "dense FP8 tensor throughput", DATASHEET),
	NUM(struct gpu, fp4_tflops, Y_POSITIVE, "TFLOPS", "dense FP4 tensor throughput (absent: none)",
	    DATASHEET),
	NUM(struct gpu, link_gbps, Y_POSITIVE, "GB/s", "interconnect bandwidth per GPU (absent: "
	    "not given)", DATASHEET),
};
static const struct yschema gpu_schema = YS_TABLE("gpus.GPU", gpu_fields, 0);

#define CONFIG "the model's config.json"
#define GEO(m, fl, u, h) NUM(struct geometry, m, fl, u, h, CONFIG)
#define ZERO_INT (Y_REQUIRED | Y_NONNEG | Y_INTEGER)
static const struct yschema_field geometry_fields[] = {
	REQ_STR(struct geometry, name, "the model's name"),
	REQ_STR(struct geometry, source, "where the shape comes from"),
	GEO(layers, REQ_INT, NULL, "transformer layers"),
	GEO(dense_layers, ZERO_INT, NULL, "leading layers with a dense MLP instead of experts"),
	GEO(hidden, REQ_INT, NULL, "hidden size"),
	GEO(dense_intermediate, REQ_INT, NULL, "intermediate size of a dense MLP"),
	GEO(experts, REQ_INT, NULL, "routed experts per MoE layer"),
	GEO(experts_per_token, REQ_INT, NULL, "routed experts each token takes"),
	GEO(shared_experts, ZERO_INT, NULL, "shared experts per MoE layer"),
	GEO(moe_intermediate, REQ_INT, NULL, "intermediate size of one expert"),
	GEO(attn_heads, REQ_INT, NULL, "attention heads"),
	GEO(q_lora_rank, REQ_INT, NULL, "MLA query compression rank"),
	GEO(kv_lora_rank, REQ_INT, NULL, "MLA key/value compression rank"),
	GEO(qk_nope_dim, REQ_INT, NULL, "per-head query/key dimension without rotary"),
	GEO(qk_rope_dim, REQ_INT, NULL, "per-head rotary dimension"),
	GEO(v_head_dim, REQ_INT, NULL, "per-head value dimension"),
	GEO(vocab, REQ_INT, "tokens", "vocabulary size"),
	GEO(context_tokens, REQ_INT, "tokens", "longest context"),
	GEO(expert_weight_bits, REQ_INT, "bits", "bits per routed-expert weight"),
	GEO(expert_group_size, REQ_INT, NULL, "weights sharing one quantization scale"),
	GEO(expert_scale_bytes, REQ_INT, "bytes", "bytes per quantization scale"),
	GEO(dense_weight_bytes, REQ_INT, "bytes", "bytes per weight outside the routed experts"),
	GEO(kv_cache_bytes, REQ_INT, "bytes", "bytes per cached key/value element"),
	NUM(struct geometry, tp, REQ_INT, "GPUs", "tensor-parallel width the engine runs",
	    "ddt's setting"),
};
static const struct yschema geometry_schema = YS_TABLE("model", geometry_fields, 0);

#define DRAFTER "the drafter's config.json"
#define DRF(m, h) NUM(struct drafter, m, REQ_INT, NULL, h, DRAFTER)
static const struct yschema_field drafter_fields[] = {
	REQ_STR(struct drafter, name, "the drafter's name"),
	REQ_STR(struct drafter, source, "where the shape comes from"),
	DRF(block, "tokens the drafter proposes per step"), DRF(layers, "drafter layers"),
	DRF(hidden, "hidden size"), DRF(q_heads, "query heads"),
	DRF(kv_heads, "key/value heads"), DRF(intermediate, "MLP intermediate size"),
};
static const struct yschema drafter_schema = YS_TABLE("drafter", drafter_fields, 0);

static const struct yschema_name anchor_kind_names[] = {
	{"measurement", 0}, {"estimate", 1}, {NULL, 0}};
#define ANC(m, fl, u, h) NUM(struct anchor, m, fl, u, h, "the measurement its source cites")
/* Read in this order; error_source (required when error_pct is given) and
 * the tok_s/accept or step_ms rule are the loader's own. */
static const struct yschema_field anchor_fields[] = {
	REQ_STR(struct anchor, gpu, "the catalog GPU it was measured on"),
	REQ_STR(struct anchor, source, "who measured it, how"),
	YS_FIELD(struct anchor, pipeline, YS_ENUM, Y_REQUIRED, .names = tmpl_pipeline_names,
		 .help = "the serving pipeline measured"),
	ANC(block, REQ_INT, "tokens", "drafter block size"),
	ANC(budget, REQ_INT, "nodes", "draft tree budget"),
	ANC(concurrency, REQ_INT, "requests", "concurrent requests"),
	ANC(tok_s, Y_POSITIVE, "tok/s", "measured throughput (with accept)"),
	ANC(accept, Y_POSITIVE, "tokens", "mean accepted tokens per step (with tok_s)"),
	ANC(step_ms, Y_POSITIVE, "ms", "measured decode step (instead of tok_s and accept)"),
	ANC(error_pct, Y_POSITIVE, "%", "1-sigma relative error of the figure (absent: exact)"),
	YS_KEYED(struct anchor, "kind", estimate, YS_ENUM, 0, .names = anchor_kind_names,
		 .help = "measurement (weighs the draws) or estimate (widens the bands)"),
};
static const struct yschema anchor_schema = YS_TABLE("anchors.NAME", anchor_fields, 0);

/* anchors.sglang_limits (fields of struct calib). */
static const struct yschema_field limits_fields[] = {
	YS_KEYED(struct calib, "max_budget", sglang_max_budget, YS_NUM, REQ_INT, .unit = "nodes",
		 .help = "largest tree budget the SGLang pipeline runs",
		 .source = "what was seen to run (its source)"),
	YS_KEYED(struct calib, "source", sglang_limit_source, YS_STR, Y_REQUIRED,
		 .help = "who found the limit, how"),
};
static const struct yschema limits_schema = YS_TABLE("anchors.sglang_limits", limits_fields, 0);

/* moe_reference's own keys before its nested ones (floor_us, physical,
 * points: the loader's). */
static const struct yschema_field moe_ref_fields[] = {
	REQ_STR(struct moe_reference, gpu, "the catalog GPU the curve was measured on"),
	REQ_STR(struct moe_reference, source, "who measured it, how"),
	NUM(struct moe_reference, tp, REQ_INT, "GPUs", "tensor-parallel width measured at",
	    "the measurement its source cites"),
	YS_FIELD(struct moe_reference, curve, YS_ENUM, Y_REQUIRED, .names = calib_moe_curve_names,
		 .help = "how the MoE time is drawn between and beyond the points"),
};
static const struct yschema moe_ref_schema = YS_TABLE("moe_reference", moe_ref_fields, 0);

/* One point of moe_reference's points. */
static const struct yschema_field moe_point_fields[] = {
	NUM(struct moe_point, m, REQ_INT, "tokens", "verify width", "the curve's measurement"),
	NUM(struct moe_point, step_ms, REQ_POS, "ms", "MoE per decode step, every MoE layer",
	    "the curve's measurement"),
	REQ_STR(struct moe_point, source, "who measured it, how"),
};
static const struct yschema moe_point_schema = YS_TABLE("points[]", moe_point_fields, 1);

/* moe_transfer's own keys before its nested ones (fields of struct calib). */
static const struct yschema_field xfer_fields[] = {
	YS_KEYED(struct calib, "source", xfer_source, YS_STR, Y_REQUIRED,
		 .help = "where the transfer's method comes from"),
	YS_KEYED(struct calib, "class", xfer_class, YS_STR, Y_REQUIRED,
		 .help = "the measured class (measured.yaml) the model's MoE is"),
	YS_KEYED(struct calib, "sigma_floor", xfer_sigma_floor, YS_NUM,
		 Y_REQUIRED | Y_NONNEG | YS_NOSET,
		 .help = "added to every calibrated sigma", .source = "the transfer's source"),
};
static const struct yschema xfer_schema = YS_TABLE("moe_transfer", xfer_fields, 0);

static const struct yschema_name ar_impl_names[] = {{"nccl", 0}, {"oneshot", 1}, {NULL, 0}};
/* allreduce's own keys before bytes and latency_us (the loader's). */
static const struct yschema_field ar_fields[] = {
	REQ_STR(struct allreduce, source, "who measured the latencies, how"),
	NUM(struct allreduce, per_layer, REQ_INT, NULL, "all-reduces per layer",
	    "the model's layer structure"),
	NUM(struct allreduce, gpus, REQ_INT, "GPUs", "ranks (the ring's 2(n-1)/n)",
	    "the latency measurement"),
	YS_FIELD(struct allreduce, impl, YS_STR, Y_REQUIRED, .names = ar_impl_names,
		 .help = "which implementation's latencies the step takes"),
};
static const struct yschema ar_schema = YS_TABLE("allreduce", ar_fields, 0);

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

static const char *const dist_names[] = {"fixed", "uniform", "triangular", "normal", "lognormal"};

static const char *const moe_param_names[MOE_P_COUNT] = {"efficiency", "overlap", "fixed_us"};

static inline int cmp_point(const void *a, const void *b)
{
	double x = ((const struct moe_point *)a)->m, y = ((const struct moe_point *)b)->m;
	return (x > y) - (x < y);
}

#endif
