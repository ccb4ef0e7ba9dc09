/* calib.h - calibration: GPU catalog, model geometry, measured anchors, the MoE
 * reference curve, and every assumption as a distribution. */
#ifndef DDT_CALIB_H
#define DDT_CALIB_H

#include <stddef.h>

#include "tmpl.h"
#include "ydoc.h"

#define CALIB_SOURCE_LEN 320
#define CALIB_MAX_MOE_POINTS 32

/* Where a value comes from, for tables and documents. */
enum provenance {
	PROV_MEASURED,    /* measured earlier, stored in calibration */
	PROV_CALIBRATION, /* a calibration value (estimated, derived) */
	PROV_ASSUMED,     /* an assumption (a distribution) */
	PROV_OVERRIDE,    /* set on the command line */
	PROV_TONIGHT,     /* measured tonight on this run's GPU */
	PROV_DERIVED      /* computed from the others (fits, solved growth) */
};
/* The names by value, and "override" (read only: older files' name); the
 * schema tables' list (yschema.h). */
extern const struct yschema_name calib_provenance_names[];
const char *calib_provenance_name(enum provenance p);
/* Parses a provenance name; returns 0 or -1. */
int calib_provenance_parse(const char *s, enum provenance *out);


struct gpu {
	char id[32];            /* catalog key: "b300" */
	char name[64];
	char arch[16];          /* "sm_103" */
	double mem_gb;
	double bw_tbps;         /* datasheet memory bandwidth */
	double bf16_tflops, fp8_tflops, fp4_tflops; /* dense; fp4 NaN when absent */
	char memory[16];        /* "hbm3e", "gddr7" (transfer.yaml groups them in kinds) */
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
		expert_group_size, expert_scale_bytes, dense_weight_bytes, tp, kv_cache_bytes;
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
	double error_pct;     /* 1-sigma relative error of the measured figure (NaN: exact) */
	int estimate;         /* kind: estimate - someone's estimate, not a measurement:
			       * its error widens the bands, it never weighs the draws */
	char error_source[CALIB_SOURCE_LEN];
	char source[CALIB_SOURCE_LEN];
	int overridden;       /* a field set with --set */
	double was_step_ms;   /* when overridden: the step before */
	/* where gpu and the step figure (tok_s or step_ms) were read, in
	 * anchors_at's file; line 0 when not from a file */
	int gpu_line, gpu_col, step_line, step_col;
};

/* How the MoE time between and beyond the reference points is drawn:
 * linear   - the seed's piecewise line through the points, extended by its end
 *            segments (no plateau; wrong at large M, kept for comparison);
 * physical - bytes of the distinct experts touched / (bandwidth x efficiency)
 *            + a fixed cost per layer, fitted to the points (fit.h), with a
 *            compute roof on the target; it plateaus once every expert is read. */
enum moe_curve_kind { MOE_CURVE_LINEAR, MOE_CURVE_PHYSICAL };
/* The curves' names, by value (the schema tables' list, yschema.h). */
extern const struct yschema_name calib_moe_curve_names[];
const char *calib_moe_curve_name(enum moe_curve_kind k);
/* Parses "linear" or "physical"; returns 0 or -1. */
int calib_moe_curve_parse(const char *s, enum moe_curve_kind *out);

/* Parameters of the physical curve, per MoE layer on one GPU:
 *   t = D(M_eff) x expert_bytes + shared_bytes) / (bw x efficiency) + fixed_us
 *   D(x) = E (1 - (1 - k/E)^x),  M_eff = 1 + (M - 1)(1 - overlap)          */
enum moe_param { MOE_P_EFFICIENCY, MOE_P_OVERLAP, MOE_P_FIXED_US, MOE_P_COUNT };
const char *calib_moe_param_name(enum moe_param p);

/* The calibration's physical-curve settings: start or held values, and which
 * parameters the fit frees, in priority order (n points free at most n). */
struct moe_physical {
	double value[MOE_P_COUNT];
	char source[MOE_P_COUNT][CALIB_SOURCE_LEN];
	int nfit;
	enum moe_param fit[MOE_P_COUNT];
	/* residuals (RMS, %) beyond which the curve's form is in doubt: the
	 * draws mix the other form in (mix_forms_rms_pct; NaN: never) */
	double mix_rms_pct;
};

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
	enum provenance prov;          /* PROV_MEASURED (stored) or PROV_TONIGHT */
	int gpu_line, gpu_col;         /* where gpu was read (in moe_ref_at's file) */
	struct moe_physical phys;
	double floor_us;               /* per-call floor of one layer (NaN: none) */
	char floor_source[CALIB_SOURCE_LEN];
	/* The MoE (ms) of the calibration's own reference at the b8 and b16
	 * anchors when another implementation's curve replaced it
	 * (--moe-reference): the anchors measure the SGLang pipeline's step with
	 * that MoE, not with the new curve's (0: the reference is its own). */
	double anchor_ms[2];
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
	double was;              /* when overridden: the point before the first override */
};

/* The named assumptions the model uses, in a fixed order (names in calib.c).
 * moe_transfer is a factor on every cross-GPU MoE transfer on top of the
 * per-pair table (struct xfer_entry): fixed at 1, a what-if knob. */
enum assumption {
	ASM_NATIVE_CUT,
	ASM_MOE_TRANSFER,
	ASM_SHARE_ATTN,
	ASM_SHARE_DRAFT,
	ASM_SHARE_TREE,
	ASM_SHARE_OVERHEAD,
	ASM_TREE_SCALE_FRAC,
	ASM_MOE_COMPUTE_EFF,     /* share of bf16 peak the MoE reaches once compute bound */
	ASM_ALLREDUCE_PCIE,      /* all-reduce latency over PCIe vs the NVLink part it is "like" */
	ASM_NATIVE_TREE_US,      /* the native engine's tree kernels, us, at the b8 anchor's C x B */
	ASM_ANCHOR_CONTEXT,      /* tokens of context the anchors' steps were measured at */
	ASM_ATTN_CTX_EFF,        /* share of bandwidth / bf16 peak attention over context reaches */
	ASM_ALLREDUCE_IMPL,      /* the engine's all-reduce over transfer.yaml's impl column */
	ASM_COUNT
};

#define CALIB_MAX_XFER 64
#define CALIB_MAX_XCURVE 32
#define CALIB_MAX_FAMILIES 24
#define CALIB_MAX_RANGES 8
/* Every assumption: the named ones, then the transfer table's entries. */
#define CALIB_MAX_ASM (ASM_COUNT + CALIB_MAX_XFER)

/* An efficiency-transfer factor: moving MoE time from GPU `from` to GPU `to`
 * (catalog ids) at verify width M in [m_lo, m_hi] is
 *   time x (from bw / to bw) x factor.
 * The point value is 1.0 (the seed's perfect scaling); the distribution is
 * calibrated from the measured cross-GPU tables (xfer.h: xfer_build), or the
 * calibration's prior when its kernel class has nothing to say. The entry's
 * median is the factor at m_lo; within the range the median follows the
 * pair's calibrated curve (struct xfer_curve, calib_xfer_adj) and the sigma
 * is the range's. One entry per (reference GPU, other catalog GPU, M
 * range), rebuilt when the reference GPU changes. Derived, not a fact: the
 * calibrate stage builds them into its struct calibration (struct
 * xfer_table). */
struct xfer_entry {
	char from[32], to[32];
	double m_lo, m_hi;      /* m_hi INFINITY for the open end */
	char range[16];         /* "m8-31", "m256+" as in the YAML */
	int family_gpus;        /* measured GPUs behind the target family's offset (0: none) */
	int curve;              /* index into xfer_table.xcurve (-1: the prior, no curve) */
	int nimpl;              /* implementations behind it (0, 1: the class alone) */
	int nbuild;             /* their engine builds (layouts of one build: one) */
	double gap_sigma;       /* the implementation gap's part of d.sigma (0: none) */
	double bias;            /* the systematic bias corrected in d.median (log) */
	struct dist d;
};

/* A pair's calibrated factor against M: log factor at the measured M's
 * (sorted), linear in log M between them, flat beyond the ends. */
struct xfer_curve {
	int n;
	double m[CALIB_MAX_XCURVE], lf[CALIB_MAX_XCURVE];
};

/* The transfer entries for one reference GPU and their pairs' curves, as
 * xfer_build makes them (the calibrate stage's struct calibration holds
 * them; the facts never do). */
struct xfer_table {
	int nxfer;
	struct xfer_entry xfer[CALIB_MAX_XFER];
	int nxcurve;
	struct xfer_curve xcurve[CALIB_MAX_XFER];
	char ref[32];             /* the reference GPU they were built for ("": none yet) */
};

#define CALIB_MAX_MEAS_M 32
#define CALIB_MAX_MEAS_GPUS 24
#define CALIB_MAX_CLASSES 12
/* One GPU's measured times of a kernel class, per M of the class (NaN: not
 * measured at that M). */
struct meas_series {
	char gpu[32];
	double us[CALIB_MAX_MEAS_M];
	enum provenance prov;     /* PROV_MEASURED (shipped) or PROV_TONIGHT */
	char source[CALIB_SOURCE_LEN];
};

/* A kernel class measured on several GPUs ("moe_w4a16", "moe_fp8",
 * "dense_gemm"): times of one call in microseconds. */
struct meas_class {
	char name[24];
	char what[CALIB_SOURCE_LEN];
	/* the implementation that measured it (measured.yaml's `implementation`):
	 * impl_of names the kernel class it is one implementation of ("": none;
	 * the class itself when it is that class's own first implementation) */
	char impl_of[24];
	char impl[64];                  /* "sglang 0.5.14 ep8": engine version layout */
	char impl_source[CALIB_SOURCE_LEN];
	char compute[8];                /* the peak its compute part runs at: bf16, fp8, fp4 */
	int nm;
	double m[CALIB_MAX_MEAS_M];     /* increasing */
	int nseries;
	struct meas_series series[CALIB_MAX_MEAS_GPUS];
};

struct measured {
	int nclasses;
	struct meas_class cls[CALIB_MAX_CLASSES];
	char source[CALIB_SOURCE_LEN];
};

struct arch_family {
	char arch[16];          /* "sm_103" */
	char family[24];        /* "blackwell_dc" */
};

/* A memory technology and the kind the transfer fits it with ("gddr7" ->
 * "gddr"). */
struct mem_kind {
	char memory[16];
	char kind[24];
};

#define CALIB_AR_SIZES 8
#define CALIB_AR_GPUS 32 /* GPUs of the all-reduce table, so of the catalog */
/* Small all-reduce latency of one GPU: measured per message size ([aic-095f58a-allreduce]), not from link bandwidth; above the largest size the link's bandwidth
 * carries the rest. */
struct ar_gpu {
	char gpu[32];
	double us[CALIB_AR_SIZES];  /* the chosen implementation's latency per size */
	int pcie;                   /* times the allreduce_pcie_factor assumption */
	char like[32];              /* the GPU whose figures these are ("" : its own) */
	char source[CALIB_SOURCE_LEN];
	/* --set allreduce.GPU.step_ms_at_mM: the latencies scaled so that the
	 * step's all-reduce at width hold_m is hold_ms (0: not set) */
	double hold_m, hold_ms;
	int line, col; /* of its key under latency_us */
};

struct allreduce {
	double per_layer;           /* all-reduces per layer (attention, MoE) */
	double gpus;                /* ranks, for the ring's 2(n-1)/n */
	char impl[16];              /* "nccl" or "oneshot" */
	int nsizes;
	double bytes[CALIB_AR_SIZES];
	double log2_bytes[CALIB_AR_SIZES]; /* derived at load */
	int n;
	struct ar_gpu per_gpu[CALIB_AR_GPUS]; /* one per catalog GPU */
	char source[CALIB_SOURCE_LEN];
};

#define CALIB_MAX_SETS 64
/* A value set with --set, in the order given: the key as written, the value
 * as given, and the value it replaced as text ("" where the calibration
 * cannot tell: a derived value, which the model knows). */
struct calib_override {
	char key[128];
	char value[64];
	char was[64];
};

struct calib {
	char path[4096];
	char hash[40];            /* "fnv1a64:<16 hex>" of every file loaded, names and bytes */
	int nsets;
	struct calib_override sets[CALIB_MAX_SETS];
	/* --set law.attn_lmhead / law.draft: that component's growth g held
	 * (replacing tonight's measured law or the g solved from the b16
	 * anchor); NaN: not held */
	double law_hold[2];
	size_t ngpus;
	struct gpu *gpus;
	struct geometry model;
	struct drafter drafter;
	struct anchor sglang_b8;  /* non-MoE components are anchored here */
	struct anchor sglang_b16; /* fixes the growth of attention and draft */
	double sglang_max_budget; /* larger budgets cannot run on the SGLang pipeline */
	char sglang_limit_source[CALIB_SOURCE_LEN];
	struct moe_reference moe_ref;
	struct dist asm_[ASM_COUNT];      /* the named assumptions (calib_asm: every one) */
	int nfamilies;
	struct arch_family families[CALIB_MAX_FAMILIES];
	int nkinds;
	struct mem_kind kinds[CALIB_MAX_FAMILIES];
	char xfer_source[CALIB_SOURCE_LEN];
	char xfer_class[24];      /* the measured class the model's MoE is */
	int nranges;
	double range_lo[CALIB_MAX_RANGES], range_hi[CALIB_MAX_RANGES];
	char range_name[CALIB_MAX_RANGES][16];
	double xfer_sigma_floor;  /* added to every calibrated sigma */
	/* the verify widths the nightly's implementation backtest scores
	 * (moe_transfer.backtest_m; NaN: every M) */
	double xback_m_min, xback_m_max;
	struct dist xfer_prior;   /* when the class has no measured pair */
	struct measured meas;     /* cross-GPU tables (optional section) */
	struct allreduce ar;
	/* where moe_reference, moe_transfer and anchors were read, for the fits'
	 * and the model's errors */
	struct {
		char file[4096];
		int line;
	} moe_ref_at, xfer_at, anchors_at;
};

/* Loads a calibration folder (every *.yaml in it, each top-level section in
 * exactly one file) or one file holding every section. Every problem goes to
 * diag as file:line:col; returns 0 or DDT_EINPUT/DDT_ENOMEM/DDT_EIO.
 * Free with calib_free even on error. Nothing is fitted here: the stages
 * load through calibrate.h's calibrate_load, which also fits the physical
 * MoE curve and builds the transfer entries (xfer.h: xfer_build). */
int calib_load(struct calib *c, const char *path, struct ydiag *diag);
void calib_free(struct calib *c);
/* A copy of src that calib_free frees apart from src (its GPU catalog
 * duplicated). Returns 0 or DDT_ENOMEM (dst then empty). */
int calib_copy(struct calib *dst, const struct calib *src);

/* Overrides one value by its dotted key ("native_cut", "gpus.b300.bw_tbps",
 * "anchors.sglang_b8.tok_s", "moe_reference.rtx_pro_6000.m9_ms",
 * "allreduce.b300.step_ms_at_m9", "allreduce.per_layer", "allreduce.gpus",
 * "moe_reference.floor_us", "law.attn_lmhead", "model.hidden",
 * "moe_reference.curve" = linear|physical, "moe_reference.physical.overlap",
 * "moe_transfer.blackwell_pro.blackwell_dc" (every range of the pair) or
 * "moe_transfer.blackwell_pro.blackwell_dc.m8-64"). An assumption set this
 * way becomes fixed at that value (a moe_transfer.* key: t's entries; t
 * NULL: none). Every success is logged in c->sets.
 * Nothing is refitted: the stages give their sets to calibrate.h's
 * calibrate_load (struct calibrate_opts), which applies them as the
 * calibration is loaded and refits what each value changes; after that
 * load nothing sets a value.
 * Returns 0, or DDT_EINPUT with a message naming the key (an unknown key:
 * the nearest known ones, by edit distance). */
int calib_set(struct calib *c, struct xfer_table *t, const char *key, const char *value);

/* Makes GPU gpu's measured curve of the transfer's class (measured.yaml)
 * the MoE reference (per call x MoE layers = per step); `--set
 * moe_reference.gpu=h200`. Returns 0 or DDT_EINPUT naming what is missing. */
int calib_reference_measured(struct calib *c, const char *gpu);
/* Reads a measured MoE curve from a CSV (header gpu,m,step_ms[,source]; one
 * GPU; step_ms per decode step, all MoE layers) and makes it the reference.
 * Returns 0 or DDT_EINPUT with file:line. */
int calib_reference_csv(struct calib *c, const char *path);

/* Parses "KEY=VALUE" and applies it with calib_set. */
int calib_set_arg(struct calib *c, struct xfer_table *t, const char *arg);

/* Calls fn(ctx, key, value) for every key calib_set accepts (the
 * transfer entries' those of t; t NULL: none), in a fixed
 * order, with its current value as text ("" for a value the model derives:
 * allreduce.GPU.step_ms_at_mM, law.*; moe_reference.physical.*: the start
 * values, calibrate_keys gives the fit's). The keys are the names every
 * document and output uses. Stops at fn's first nonzero return and returns
 * it; else 0. */
typedef int (*calib_key_fn)(void *ctx, const char *key, const char *value);
int calib_keys(const struct calib *c, const struct xfer_table *t, calib_key_fn fn, void *ctx);

/* What the --set key of a schema table (the GPU catalog, the model, the
 * drafter, the anchors, moe_reference.tp, allreduce.per_layer/gpus) takes,
 * with its unit, help line and source, into buf: "number > 0, TB/s: memory
 * bandwidth [vendor datasheet, dense]". Returns 1, or 0 for another key. */
int calib_key_about(const char *key, char *buf, size_t len);

/* The first override of key (what it replaced is its was), or NULL. */
const struct calib_override *calib_override_of(const struct calib *c, const char *key);

/* The catalog entry, or NULL. */
const struct gpu *calib_gpu(const struct calib *c, const char *id);

/* Name of an assumption ("native_cut"). */
const char *calib_assumption_name(enum assumption a);

/* Every assumption, named and table: how many, the label of i ("native_cut",
 * "moe_transfer.blackwell_pro.blackwell_dc.m8-64"), and its group: the unit
 * sampling and the tornado move together (one per named assumption, one per
 * transfer pair: its M ranges move with one quantile). */
int calib_nassumptions(const struct xfer_table *t);
void calib_assumption_label(const struct xfer_table *t, int i, char *buf, size_t len);
int calib_assumption_group(const struct xfer_table *t, int i);
/* Assumption i: a named one of c, or t's entry i - ASM_COUNT. */
const struct dist *calib_asm(const struct calib *c, const struct xfer_table *t, int i);
/* Label of a group ("moe_transfer.blackwell_pro.blackwell_dc"). */
void calib_group_label(const struct xfer_table *t, int group, char *buf, size_t len);
int calib_ngroups(const struct xfer_table *t);

/* The log factor of a curve at M from its values y at cv->m (cv->lf, or
 * a sigma per point): linear in log M, flat beyond the ends. */
double calib_xcurve_at(const struct xfer_curve *cv, const double *y, double M);
/* The median factor of entry i at width M over the entry's own median (its
 * curve between the measured M's); 1 for the prior or a value set with
 * --set. */
double calib_xfer_adj(const struct xfer_table *t, int i, double M);
/* A measured class by name, and a GPU's series in it; NULL when absent. */
const struct meas_class *calib_class(const struct calib *c, const char *name);
const struct meas_series *calib_series(const struct meas_class *k, const char *gpu);

/* The family of an arch ("sm_103" -> "blackwell_dc"; unknown: the arch). */
const char *calib_family(const struct calib *c, const char *arch);
/* The transfer entry index (into xfer) for moving from GPU `from` to `to` at
 * width M, or -1 when from == to (no transfer) or from is not the reference
 * GPU the entries were built for. */
int calib_xfer_index(const struct xfer_table *t, const struct gpu *from, const struct gpu *to,
		     double M);
/* The all-reduce figures of a GPU, or NULL. */
const struct ar_gpu *calib_ar(const struct calib *c, const char *gpu_id);


/* Loads the distribution in map m (point, dist and its parameters, unit,
 * source), as calibration/assumptions.yaml writes one; problems go to
 * c->diag, naming it name. */
void calib_dist_load(struct dist *d, struct yctx *c, struct ydoc_node *m, const char *name);

/* The q-quantile (0 < q < 1) of a distribution (fixed: its point). */
double calib_dist_quantile(const struct dist *d, double q);
const char *calib_dist_kind_name(enum dist_kind k);

#endif
