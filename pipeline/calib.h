/* calib.h - calibration: GPU catalog, model geometry, measured anchors, the MoE
 * reference curve, and every assumption as a distribution. */
#ifndef DDT_CALIB_H
#define DDT_CALIB_H

#include <stddef.h>

#include "tmpl.h"
#include "ydoc.h"

#define CALIB_SOURCE_LEN 320
#define CALIB_MAX_MOE_POINTS 32

struct gpu {
	char id[32];            /* catalog key: "b300" */
	char name[64];
	char arch[16];          /* "sm_103" */
	double mem_gb;
	double bw_tbps;         /* datasheet memory bandwidth */
	double bf16_tflops, fp8_tflops, fp4_tflops; /* dense; fp4 NaN when absent */
	char link[16];          /* "nvlink" or "pcie" */
	double link_gbps;       /* NaN when not given */
	char source[CALIB_SOURCE_LEN];
};

/* Model geometry (numbers as doubles; whole numbers are checked on load). */
struct geometry {
	char name[64];
	double layers, dense_layers, hidden, dense_intermediate, experts, experts_per_token,
		shared_experts, moe_intermediate, attn_heads, q_lora_rank, kv_lora_rank,
		qk_nope_dim, qk_rope_dim, v_head_dim, vocab, context_tokens, expert_weight_bits,
		expert_group_size, expert_scale_bytes, dense_weight_bytes, tp;
	char source[CALIB_SOURCE_LEN];
};

struct drafter {
	char name[64];
	double block, layers, hidden, q_heads, kv_heads, intermediate;
	char source[CALIB_SOURCE_LEN];
};

/* A measured decode step: either tok_s with accept, or step_ms. */
struct anchor {
	char gpu[32];
	enum pipeline_kind pipeline;
	double block, budget, concurrency;
	double tok_s, accept; /* NaN when the anchor gives step_ms */
	double step_ms;       /* derived from tok_s and accept when not given */
	char source[CALIB_SOURCE_LEN];
};

/* How the MoE time between and beyond the reference points is drawn: the
 * seed's piecewise line through the points, extended by its end segments. */
enum moe_curve_kind { MOE_CURVE_LINEAR };

struct moe_point {
	double m;       /* verify width */
	double step_ms; /* MoE forward of all MoE layers, one decode step */
	char source[CALIB_SOURCE_LEN];
};

struct moe_reference {
	char gpu[32];
	double tp;
	enum moe_curve_kind curve;
	int npoints;
	struct moe_point points[CALIB_MAX_MOE_POINTS]; /* sorted by m */
	char source[CALIB_SOURCE_LEN];
};

enum dist_kind { DIST_FIXED, DIST_UNIFORM, DIST_TRIANGULAR, DIST_NORMAL, DIST_LOGNORMAL };

/* An assumption: the value of point estimates and a distribution around it.
 * Parameters: uniform (min, max); triangular (min, mode, max); normal (mean,
 * sd, optional truncation lo/hi); lognormal (median, sigma). */
struct dist {
	enum dist_kind kind;
	double point;
	double min, mode, max;   /* uniform/triangular; truncation for normal (NaN: none) */
	double mean, sd;         /* normal */
	double median, sigma;    /* lognormal */
	char unit[96];
	char source[CALIB_SOURCE_LEN];
	int overridden;          /* set from the command line (--set) */
};

/* The assumptions the model uses, in a fixed order (see calib.c for names). */
enum assumption {
	ASM_NATIVE_CUT,
	ASM_MOE_TRANSFER,
	ASM_SHARE_ATTN,
	ASM_SHARE_DRAFT,
	ASM_SHARE_TREE,
	ASM_SHARE_OVERHEAD,
	ASM_TREE_SCALE_FRAC,
	ASM_COUNT
};

struct calib {
	char path[4096];
	size_t ngpus;
	struct gpu *gpus;
	struct geometry model;
	struct drafter drafter;
	struct anchor sglang_b8;  /* non-MoE components are anchored here */
	struct anchor sglang_b16; /* fixes the growth of attention and draft */
	double sglang_max_budget; /* larger budgets cannot run on the SGLang pipeline */
	char sglang_limit_source[CALIB_SOURCE_LEN];
	struct moe_reference moe_ref;
	struct dist asm_[ASM_COUNT];
};

/* Loads a calibration folder (every *.yaml in it, each top-level section in
 * exactly one file) or one file holding every section. Every problem goes to
 * diag as file:line:col; returns 0 or DDT_EINPUT/DDT_ENOMEM/DDT_EIO.
 * Free with calib_free even on error. */
int calib_load(struct calib *c, const char *path, struct ydiag *diag);
void calib_free(struct calib *c);

/* Overrides one value by its dotted key ("native_cut", "gpus.b300.bw_tbps",
 * "anchors.sglang_b8.tok_s", "moe_reference.m9_ms", "model.hidden"). An
 * assumption set this way becomes fixed at that value. Returns 0, or
 * DDT_EINPUT with a message naming the key. */
int calib_set(struct calib *c, const char *key, const char *value);

/* Parses "KEY=VALUE" and applies it with calib_set. */
int calib_set_arg(struct calib *c, const char *arg);

/* The catalog entry, or NULL. */
const struct gpu *calib_gpu(const struct calib *c, const char *id);

/* Name of an assumption ("native_cut"). */
const char *calib_assumption_name(enum assumption a);

/* The q-quantile (0 < q < 1) of a distribution (fixed: its point). */
double dist_quantile(const struct dist *d, double q);
const char *dist_kind_name(enum dist_kind k);

/* Where a value comes from, for tables and documents. */
enum provenance { PROV_MEASURED, PROV_CALIBRATION, PROV_ASSUMED, PROV_OVERRIDE };
const char *provenance_name(enum provenance p);

#endif
