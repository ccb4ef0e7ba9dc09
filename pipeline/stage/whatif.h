/* whatif.h - what the What-if sheet shows of the model, computed once: every
 * configuration it lists (the seed's estimator: both anchors, every seed
 * scenario, the autoregressive baseline; ddt's calibrated point: both anchors
 * and every calibrated scenario) with its row terms and inputs, and the values
 * the sheet derives once (model_terms, the terms at the anchors) for the
 * seed's model and the calibrated point's. The sheet writes the model's
 * formulas (model.h) and caches these values beside them. */
#ifndef DDT_WHATIF_H
#define DDT_WHATIF_H

#include "estimate.h"
#include "model.h"
#include "project.h"

/* The name of the autoregressive baseline's row. */
#define WHATIF_AUTOREGRESSIVE "autoregressive (budget 0)"

struct whatif_row {
	const char *name;          /* the scenario's (lives as long as the estimate) */
	const struct gpu *target;
	enum pipeline_kind pipeline;
	double block, budget, C, accept; /* accept NaN: no tok/s */
	double ddt_tok_s;          /* ddt's own point estimate (NaN: none) */
	int is_anchor;
	long est;                  /* its row of the estimate (the stored band), -1: none */
	int cal;                   /* ddt's calibrated point, not the seed's */
	int xfer;                  /* the transfer entry it reads (calib_xfer_index), -1: none */
	double t[MR_COUNT];        /* its row terms (model_row_eval) */
	double v[MV_COUNT];        /* its inputs (model_row_vars) */
};

/* The values of one model the sheet derives once. */
struct whatif_model {
	double v[CALIB_MAX_ASM];   /* the assumption values in use */
	double at[MR_COUNT];       /* the row terms with the b8 anchor's inputs (those taken
				    * once or at an anchor are what the sheet reads) */
};

struct whatif {
	size_t n;
	struct whatif_row *rows;   /* the seed's rows (nseed), then the calibrated point's */
	size_t nseed;
	int have_cal;              /* the projection kept its calibrated point */
	struct whatif_model seed, cal;
	double terms[MT_COUNT];    /* model_terms (model_terms_eval) */
	double ref_bw;             /* moe_reference.gpu's bandwidth, TB/s */
	double moe_tp;             /* model_moe_tp */
	enum moe_curve_kind curve; /* the declared MoE curve */
	/* the calibrated point's anchors and growth (have_cal) */
	double cal_a8_step_ms, cal_b16_step_ms;
	double cal_growth_set;     /* NaN: solved from cal_b16_step_ms; else held */
};

/* Computes w for the seed's model m of calibration c (its point values), the
 * estimate est of every scenario and the stored projection p (NULL: none;
 * the calibrated rows need its calibrated point). Returns 0, an error of
 * the model's formulas, or DDT_ENOMEM; free w with whatif_free even then. */
int whatif_make(struct whatif *w, const struct calib *c, const struct model *m,
		const struct estimate *est, const struct projection *p);
void whatif_free(struct whatif *w);

#endif
