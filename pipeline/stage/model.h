/* model.h - the decode-step model: MoE + non-MoE components -> step and tok/s.
 *
 *   M       = C (B + 1); B = 0 is the autoregressive baseline (no draft, no tree)
 *   MoE     = reference curve at M x (reference bw / target bw) x transfer
 *             (calibrated per GPU pair and M: xfer.h), at least the compute
 *             roof of the target (physical curve)
 *   allreduce = 2 per layer x latency(target, 7168 x M bf16), from measured
 *             small-message latencies, not link bandwidth ([aic-095f58a-allreduce]); the
 *             latencies scaled to a value held at one M (--set
 *             allreduce.GPU.step_ms_at_mM)
 *   non-MoE = N0 x sum of components + allreduce, N0 anchored at the SGLang b8
 *             step minus its MoE and all-reduce; each component scaled by its
 *             own law (tonight's measured ratio when the run has one, else a
 *             growth g fixed so the model passes through the SGLang b16 step;
 *             --set law.attn_lmhead / law.draft holds a component's g)
 *   native  = non-MoE x (1 - native_cut)
 *   context = + (context - anchor_context) x attention a context token costs:
 *             tonight's law (calibration law_ctx: layers x (C b + M c), b and c
 *             moved to the target's bandwidth and bf16 peak), else MLA's
 *             geometry / attn_ctx_eff; outside the native cut
 *   tok/s   = C x accept / step
 */
#ifndef DDT_MODEL_H
#define DDT_MODEL_H

#include "calibrate.h"

#include <math.h>

enum model_comp {
	COMP_MOE,
	COMP_ATTN,
	COMP_DRAFT,
	COMP_TREE,
	COMP_OVERHEAD,
	COMP_ALLREDUCE,
	COMP_COUNT
};

struct model_in {
	const struct gpu *target;
	enum pipeline_kind pipeline;
	double block, budget, concurrency, accept;
	double context;           /* tokens before the root; 0: the anchors' (anchor_context) */
};

struct model_out {
	double M;                 /* verify width */
	double ms[COMP_COUNT];    /* per component, per step */
	double nonmoe_ms, step_ms, tok_s;
};

/* A configuration compiled once: everything that does not depend on the
 * assumption values, so evaluating it for each Monte Carlo draw is a few
 * multiplications. Valid for every model prepared from the same calibration. */
struct model_case {
	const struct gpu *target;
	enum pipeline_kind pipeline;
	double C, block, budget, M;
	double bwr_anchor;        /* anchor bw / target bw */
	double moe_mem_ms;        /* reference curve x bw ratio (before transfer) */
	double moe_alt_ms;        /* the same in the other curve form (physical: the seed's
				   * line; linear: the physical fit) */
	double moe_lr;            /* log(moe_alt_ms / moe_mem_ms): the form's geometric mix */
	double moe_x_sig;         /* sigma of the log extrapolation error (0: inside the points) */
	int moe_fitted;           /* beyond the points: the fit's form, and its error, give M */
	int xfer;                 /* index into v of the transfer factor; -1: none */
	double xfer_adj;          /* the pair's median at M over its range's (calib_xfer_adj) */
	double moe_flop_ms;       /* flops at the target's bf16 peak (before compute eff) */
	double ar_small_ms, ar_link_ms; /* all-reduce: latency part, link part */
	int ar_pcie;
	double attn_f, draft_f;   /* law value when measured; NaN: growth law */
	double attn_x, draft_x;   /* growth drivers M/m0, C b/draft0 */
	double tree_x;            /* C B / tree0 */
	double context;           /* tokens; 0: the anchors' */
	double ctx_ms_tok;        /* attention per token of context at efficiency 1, ms: the
				   * larger of reading C latent KV rows and M queries' scores
				   * over it, every layer (model geometry, target's roofs) */
	int ctx_fit;              /* 1: the measured law (calibration law_ctx) instead */
	double ctx_kv_ms, ctx_q_ms; /* ms per context token per us of the law's b and c:
				     * C x layers x (measured bw / target's), C x M/C x
				     * layers x (measured bf16 peak / target's), / 1000 */
	double tree_meas_ms;      /* the native tree from tonight's kernels: C x law_tree(B);
				   * NaN: none measured (native_tree_us) */
	double spec;              /* 1: speculative decoding; 0: budget 0, the autoregressive
				   * baseline (no drafter, no tree) */
	/* the laws as law = c + g x gl: growth (1, x - 1), measured (f, 0) */
	double attn_c, attn_g, draft_c, draft_g;
};

#define MODEL_MAX_GPUS 64

/* Everything model_eval needs, prepared once per set of assumption values. */
struct model {
	const struct calib *cal;
	const struct calibration *der; /* tonight's laws (never NULL once prepared) */
	const struct gpu *ref_gpu;     /* the MoE reference curve's GPU */
	const struct gpu *anchor_gpu;  /* where the non-MoE anchor was measured */
	enum moe_curve_kind curve;
	int npoints;
	double pm[CALIB_MAX_MOE_POINTS], pms[CALIB_MAX_MOE_POINTS]; /* linear: m, ms */
	/* physical, on the reference GPU, ms: a (1 - exp(lnq M_eff)) + b; set
	 * whenever the fit is (has_phys), whichever form is declared */
	double phys_a, phys_b, lnq, overlap;
	int has_phys;
	double floor_ms;               /* per-call floor x MoE layers (0: none) */
	/* beyond the points: sigma of the log error per e-fold of M, from
	 * leaving out the largest (smallest) point and predicting it */
	double m_lo, m_hi, xsig_lo, xsig_hi;
	/* Monte Carlo knobs (point: 0, 1, 0, the anchor's step, NaN) */
	double form;                   /* the MoE curve's form: 0 declared, 1 the other, between: geometric mix */
	double moe_scale;              /* the curve's fit error, a factor */
	double z_x;                    /* standard normal of the extrapolation error */
	double a8_step_ms;             /* the b8 anchor's step in use (its error sampled) */
	double growth_set;             /* NaN: solve g from the b16 anchor; else g */
	double b16_step_ms;            /* the b16 step g is solved for (the anchor's) */
	double ctx_b_us, ctx_c_us;     /* the law of attention over context in use (calib
					* law_ctx: its fit; the Monte Carlo draws it) */
	double flops_per_m;            /* MoE flops per step per GPU, per verify token */
	double m0, draft0, tree0;      /* anchor drivers: C(B+1), C b, C B */
	double v[CALIB_MAX_ASM];       /* assumption values in use */
	double share[4];               /* attn, draft, tree, overhead; normalized */
	double n0_ms;                  /* the anchor step's non-MoE time, all-reduce excluded */
	double ar0_ms;                 /* the anchor step's all-reduce time */
	double growth;                 /* g: share of attention/draft that grows */
	int growth_clamped;            /* the b16 anchor asked for g outside [0, 1] */
	int growth_used;               /* some component follows the growth law */
	struct model_case k8, k16;     /* the anchors, compiled */
	/* per catalog GPU (the first MODEL_MAX_GPUS): the transfer entries from
	 * the reference GPU (first, count; -1: none, the same GPU) and its
	 * all-reduce figures, so compiling a case looks nothing up by name */
	int xfer_first[MODEL_MAX_GPUS], xfer_count[MODEL_MAX_GPUS];
	const struct ar_gpu *ar_of[MODEL_MAX_GPUS];
	/* per-value coefficients, so a case costs a few multiplications */
	double c_attn, c_attn_g;       /* n0 share_attn, times growth */
	double c_draft, c_draft_g;
	double c_tree0, c_tree1;       /* n0 share_tree (1 - f), n0 share_tree f */
	double c_over;                 /* n0 share_overhead */
	double c_cut[2];               /* by pipeline: 1, 1 - native_cut */
	/* 1: the native tree is its kernels' time (tonight's law_tree, else
	 * native_tree_us (c_tn0 + c_tn1 tree_x)); 0: the seed's, the SGLang
	 * tree share less native_cut (model_prepare's default: the seed point) */
	int tree_kernels;
	double c_tn0, c_tn1;
	double c_pcie, c_xfer, c_inv_ceff;
	double c_ar;                   /* allreduce_impl: the engine's all-reduce over the table's */
	/* 1: the native cut spares the all-reduce (a GPU collective: no Python
	 * dispatch, CPU tree build or launch gap of the SGLang pipeline's is in
	 * it); 0: the seed's formula, every non-MoE part cut (model_prepare's
	 * default: the seed point) */
	int ar_uncut;
	/* 1: the transfer follows each pair's calibrated curve within its range
	 * (xfer_adj); 0: the range's value alone (the seed's 1.0 at every M) */
	int xfer_curve;
};

/* Prepares m from c and the derived calibration d (tonight's laws; NULL:
 * none) with the given assumption values (NULL: point values; else
 * calib_nassumptions(&d->xt) values). d must outlive m. Returns 0, or DDT_EINPUT
 * when the calibration is inconsistent (unknown GPUs, an anchor step shorter
 * than its own MoE and all-reduce time). */
int model_prepare(struct model *m, const struct calib *c, const struct calibration *d,
		  const double *asm_values);

/* Sets new assumption values on a prepared model (the Monte Carlo's inner
 * step: no catalog lookups, no curve set-up). Returns 0, or DDT_EINPUT when
 * the values leave the anchor step shorter than its MoE and all-reduce time
 * (m is then unusable until the next successful call). */
int model_set_values(struct model *m, const double *asm_values);

/* Overrides the growth g of a prepared model (the backtest asks what the
 * model says without the b16 anchor that fixes g). Cannot fail. */
void model_set_growth(struct model *m, double g);

/* Compiles in for m's calibration. Pure; cannot fail. */
void model_case_init(struct model_case *k, const struct model *m, const struct model_in *in);
/* Evaluates a compiled case with m's values; the step and components only
 * (tok/s is the caller's: C x accept / step). Pure; cannot fail. */
void model_case_eval(const struct model *m, const struct model_case *k, struct model_out *out);

/* The MoE of a compiled case (the Monte Carlo's inner loop): the curve in
 * m's form x fit error x extrapolation error x transfer, at least the
 * compute roof. Pure; cannot fail. */
static inline double model_case_moe(const struct model *m, const struct model_case *k)
{
	/* the form's mix and the extrapolation error: one exponential */
	double e = m->form * k->moe_lr + m->z_x * k->moe_x_sig;
	/* between its points the curve is theirs: the fit's error is the form's */
	double moe = k->moe_mem_ms * (e != 0 ? exp(e) : 1) * (k->moe_fitted ? m->moe_scale : 1) *
		     (k->xfer >= 0 ? m->v[k->xfer] * m->c_xfer * (m->xfer_curve ? k->xfer_adj : 1) : 1);
	double roof = k->moe_flop_ms * m->c_inv_ceff;
	return moe > roof ? moe : roof;
}

/* Attention's change with context from the anchors' (anchor_context) to
 * the case's, ms: the measured law (b per token, c per token and query,
 * moved to the target's roofs), else the geometry at attn_ctx_eff; 0 when
 * the case keeps the anchors'. Pure. */
static inline double model_case_context(const struct model *m, const struct model_case *k)
{
	if (!(k->context > 0))
		return 0;
	double d = k->context - m->v[ASM_ANCHOR_CONTEXT];
	return k->ctx_fit ? d * (k->ctx_kv_ms * m->ctx_b_us + k->ctx_q_ms * m->ctx_c_us)
			  : d * k->ctx_ms_tok / m->v[ASM_ATTN_CTX_EFF];
}

/* The native engine's tree kernels of a compiled case, ms: tonight's
 * measured law, else native_tree_us at the case's C x B. Pure. */
static inline double model_case_tree_kernels(const struct model *m, const struct model_case *k)
{
	return k->tree_meas_ms == k->tree_meas_ms ? k->tree_meas_ms
						  : m->c_tn0 + m->c_tn1 * k->tree_x;
}

/* The rest of a compiled case's step (the non-MoE components, the native
 * cut applied; the native tree, when it is its kernels', uncut). Pure;
 * cannot fail. */
static inline double model_case_rest(const struct model *m, const struct model_case *k)
{
	double ar = (k->ar_small_ms * (k->ar_pcie ? m->c_pcie : 1) + k->ar_link_ms) * m->c_ar;
	double nonmoe = k->bwr_anchor * (m->c_attn * k->attn_c + m->c_attn_g * k->attn_g +
					 k->spec * (m->c_draft * k->draft_c + m->c_draft_g * k->draft_g)) +
			m->c_over + (m->ar_uncut ? 0 : ar);
	double uncut = (m->ar_uncut ? ar : 0) + model_case_context(m, k);
	if (k->pipeline == PIPE_NATIVE && m->tree_kernels)
		return m->c_cut[1] * nonmoe + k->spec * model_case_tree_kernels(m, k) + uncut;
	nonmoe += k->spec * (m->c_tree0 + m->c_tree1 * k->tree_x);
	return m->c_cut[k->pipeline == PIPE_NATIVE] * nonmoe + uncut;
}

/* The step of a compiled case alone: the same sum model_case_eval makes,
 * inline. Pure; cannot fail. */
static inline double model_case_step(const struct model *m, const struct model_case *k)
{
	return model_case_moe(m, k) + model_case_rest(m, k);
}

/* Anchor i's step (0: b8, 1: b16) as the model makes it, with the MoE the
 * anchor was measured with (calib.h moe_reference.anchor_ms). Pure. */
double model_anchor_step(const struct model *m, int i);

/* The calibration's own reference's MoE at the b8 and b16 anchors (point
 * values; the curve fitted in d), into anchor_ms[2]: what --moe-reference
 * keeps for the anchors before its curve replaces the reference. Returns 0
 * or an error. */
int model_anchor_moe(const struct calib *c, const struct calibration *d, double anchor_ms[2]);

/* Evaluates one configuration. Pure; cannot fail. */
void model_eval(const struct model *m, const struct model_in *in, struct model_out *out);

/* MoE forward per step at verify width M on the reference GPU (no roof) / on
 * target (transfer and roof applied). */
double model_moe_ref_ms(const struct model *m, double M);
/* The same in a given curve form (the per-call floor applies to both). */
double model_moe_ref_form_ms(const struct model *m, enum moe_curve_kind k, double M);
double model_moe_ms(const struct model *m, const struct gpu *target, double M);
/* All-reduce time per step on target at M (pcie factor applied). */
double model_allreduce_ms(const struct model *m, const struct gpu *target, double M);

/* The physical curve on the reference GPU for explicit parameters (fit.c and
 * reports use it). Cannot fail. */
double model_phys_ms(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		     double M);

const char *model_comp_name(enum model_comp k);
/* The same names as data, indexed by component (COMP_COUNT of them), and
 * as a YAML enum's names (yschema.h), NULL-terminated with -1: a null
 * component, an op that maps to none. */
extern const char *const model_comp_names[];
struct yschema_name;
extern const struct yschema_name model_comp_ynames[];

/* ---- the model's one description of its derived terms ---- */

/* Each term is one formula (formula.h) over the inputs below and the terms
 * before it: model.c computes with these formulas, and the spreadsheet writes
 * the same text as its live formulas. */
enum model_term {
	MT_MOE_LAYERS,   /* layers with experts */
	MT_EXPERT_SLICE, /* weights of one expert's slice on one GPU */
	MT_EXPERT_BYTES, /* its bytes, scales included */
	MT_SHARED_BYTES, /* the shared experts' slice */
	MT_PHYS_A,       /* physical curve: every expert read once, ms */
	MT_PHYS_B,       /* physical curve: shared experts and fixed cost, ms */
	MT_MOE_FLOOR_MS, /* the per-call floor, all MoE layers */
	MT_PHYS_LNQ,     /* ln(1 - k/E) */
	MT_FLOPS_PER_M,  /* MoE flops per step per GPU and verify token */
	MT_AR_COUNT,     /* all-reduces per step */
	MT_COUNT
};

struct model_term_def {
	const char *name, *unit, *what;
	const char *formula; /* spreadsheet syntax, without the leading '=' */
};

extern const struct model_term_def model_terms[MT_COUNT];

/* The inputs the formulas name, each by its --set key with every '.' as '_'
 * (model_key_name: model.hidden is model_hidden): the geometry's (in the
 * order documents list them; offset: of the double in struct geometry), the
 * MoE curve's parameters (model_moe_param_keys), moe_reference.tp,
 * allreduce.per_layer, moe_reference.floor_us (0 when the calibration has
 * none); and ref_bw, the reference GPU's TB/s, which is derived. */
struct model_geometry_input {
	const char *key, *unit;
	size_t offset;
};

#define MODEL_NGEOMETRY_INPUTS 11
extern const struct model_geometry_input model_geometry_inputs[MODEL_NGEOMETRY_INPUTS];
extern const char *const model_moe_param_keys[MOE_P_COUNT];

/* An input's name in formulas (and the spreadsheet's defined names): its
 * --set key with every '.' as '_' (names cannot hold a '.'). */
void model_key_name(const char *key, char *buf, size_t len);

/* The moe_tp the MoE is split over: the reference's, else the model's. */
double model_moe_tp(const struct calib *c);

/* Every term of c, the MoE curve's parameters p measured on ref, into
 * t[MT_COUNT]. Pure; cannot fail (the formulas are checked by the tests). */
void model_terms_eval(const struct calib *c, const struct gpu *ref, const double p[MOE_P_COUNT],
		      double t[MT_COUNT]);

/* ---- one configuration of the model, as formulas ---- */

/* A configuration's own values, the names its formulas read them by
 * (model_row_var_names): C, block, budget, accept; xfer, the transfer
 * entry's factor at M (1: none); the target GPU's bw (TB/s), bf16 (TFLOP/s),
 * link (GB/s), pcie (1: the all-reduce is over PCIe), row (its place in the
 * catalog, from 1); same_gpu (1: the target is the MoE reference's GPU) and
 * native (1: the native engine); moe_corr, the MoE's factor for the curve's
 * form mix, fit and extrapolation errors (exp(form lr + z_x sigma) x
 * moe_scale beyond the points; 1 for the seed); tree_kernels (1: the native
 * tree is its kernels' time, ddt's calibrated estimator) and tree_meas (that
 * time from tonight's law_tree, ms; -1: none, native_tree_us instead). The
 * transfer xfer carries the pair's curve at M (xfer_curve). */
enum model_row_var {
	MV_C, MV_BLOCK, MV_BUDGET, MV_ACCEPT, MV_XFER, MV_TARGET_BW, MV_TARGET_BF16,
	MV_TARGET_LINK, MV_TARGET_PCIE, MV_TARGET_ROW, MV_SAME_GPU, MV_NATIVE, MV_MOE_CORR,
	MV_TREE_KERNELS, MV_TREE_MEAS, MV_AR_UNCUT, MV_COUNT
};

extern const char *const model_row_var_names[MV_COUNT];

/* Where a row term is taken: at each configuration (a column of the
 * spreadsheet's rows), at the b8 or the b16 anchor's configuration (one
 * value), or once, reading no configuration. */
enum model_row_scope { MR_ROW, MR_AT_B8, MR_AT_B16, MR_ONCE };

/* The step of one configuration: each term one formula (formula.h) over the
 * configuration's values, the terms before it, model_terms, and the
 * calibration's values by the names the spreadsheet gives them (the
 * assumptions by name; moe_physical, 1 when the declared curve is the
 * physical one; the tables moe_pts_m, moe_pts_ms, ar_bytes and ar_us, one
 * row per catalog GPU). The spreadsheet writes these formulas as its live
 * cells; model_row_eval computes with them; the compiled model
 * (model_case_*) is their algebra rearranged for the Monte Carlo's speed,
 * and the tests hold it to them: the seed estimator and ddt's calibrated
 * point (the knobs form, moe_scale, z_x, xfer_curve, tree_kernels and a held
 * growth_set), with the growth law, no measured laws, no context, no held
 * all-reduce. */
enum model_row_term {
	MR_AR_NSIZES, MR_M, MR_MOE_SEG, MR_MOE_PHYS, MR_MOE_LIN, MR_MOE_REF, MR_MOE,
	MR_AR_MSG_BYTES, MR_AR_SEG, MR_AR_SMALL_US, MR_AR_LINK_US, MR_AR_STEP,
	MR_ANCHOR_BW, MR_ANCHOR_M0, MR_ANCHOR_DRAFT0, MR_ANCHOR_TREE0, MR_ANCHOR_NONMOE,
	MR_SHARE_SUM, MR_COMP_ATTN, MR_COMP_DRAFT, MR_COMP_TREE, MR_COMP_OVERHEAD,
	MR_GROWTH_WANT, MR_GROWTH_TREE, MR_GROWTH_F0, MR_GROWTH_F1, MR_GROWTH,
	MR_CUT, MR_ATTN, MR_DRAFT, MR_TREE, MR_OVERHEAD, MR_ALLREDUCE, MR_NONMOE, MR_STEP,
	MR_TOK_S, MR_COUNT
};

struct model_row_def {
	const char *name, *title, *unit, *what;
	enum model_row_scope scope;
	const char *formula; /* spreadsheet syntax, without the leading '=' */
};

extern const struct model_row_def model_row_terms[MR_COUNT];

/* Every row term of configuration in on m (its values in use) into
 * t[MR_COUNT], computed from the formulas. Returns 0, or DDT_EINPUT when a
 * formula names what is unknown (message set). */
int model_row_eval(const struct model *m, const struct model_in *in, double t[MR_COUNT]);
/* The values v[MV_COUNT] the formulas read for configuration in on m (its
 * knobs in use: the seed's, or the calibrated point's). Pure. */
void model_row_vars(const struct model *m, const struct model_in *in, double v[MV_COUNT]);

#endif
