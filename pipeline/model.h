/* model.h - the decode-step model: MoE + non-MoE components -> step and tok/s.
 *
 *   M       = C (B + 1)
 *   MoE     = reference curve at M x (reference bw / target bw) x transfer
 *   non-MoE = N0 x sum of components, each anchored at the SGLang b8 step and
 *             scaled by its own law; attention and draft grow by a fraction g
 *             fixed so the model passes through the SGLang b16 step
 *   native  = non-MoE x (1 - native_cut)
 *   tok/s   = C x accept / step
 */
#ifndef DDT_MODEL_H
#define DDT_MODEL_H

#include "calib.h"

enum model_comp { COMP_MOE, COMP_ATTN, COMP_DRAFT, COMP_TREE, COMP_OVERHEAD, COMP_COUNT };

struct model_in {
	const struct gpu *target;
	enum pipeline_kind pipeline;
	double block, budget, concurrency, accept;
};

struct model_out {
	double M;                 /* verify width */
	double ms[COMP_COUNT];    /* per component, per step */
	double nonmoe_ms, step_ms, tok_s;
};

/* Everything model_eval needs, prepared once per set of assumption values. */
struct model {
	const struct calib *cal;
	const struct gpu *ref_gpu;     /* the MoE reference curve's GPU */
	const struct gpu *anchor_gpu;  /* where the non-MoE anchor was measured */
	int npoints;
	double pm[CALIB_MAX_MOE_POINTS], pms[CALIB_MAX_MOE_POINTS]; /* MoE curve: m, ms */
	double m0, draft0, tree0;      /* anchor drivers: C(B+1), C b, C B */
	double v[ASM_COUNT];           /* assumption values in use */
	double share[4];               /* attn, draft, tree, overhead; normalized */
	double n0_ms;                  /* the anchor step's non-MoE time */
	double growth;                 /* g: share of attention/draft that grows */
	int growth_clamped;            /* the b16 anchor asked for g outside [0, 1] */
};

/* Prepares m from c with the given assumption values (NULL: point values).
 * Returns 0, or DDT_EINPUT when the calibration is inconsistent (unknown
 * GPUs, an anchor step shorter than its own MoE time). */
int model_prepare(struct model *m, const struct calib *c, const double *asm_values);

/* Evaluates one configuration. Pure; cannot fail. */
void model_eval(const struct model *m, const struct model_in *in, struct model_out *out);

/* MoE forward per step at verify width M on the reference GPU / on target. */
double model_moe_ref_ms(const struct model *m, double M);
double model_moe_ms(const struct model *m, const struct gpu *target, double M);

const char *model_comp_name(enum model_comp k);

#endif
