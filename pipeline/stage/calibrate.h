/* calibrate.h - the calibration stage: from the facts a calibration folder
 * holds (calib.h: loaded and checked, overridden with --set) to what the
 * stages use: the physical MoE curve fitted to the reference points (fit.h),
 * the transfer entries built from the measured classes (xfer.h) and,
 * for a projection, tonight's scaling laws. record/ fits nothing and calls
 * nothing of this stage: a change to a fact is made here, then what is
 * derived from it is made again. */
#ifndef DDT_CALIBRATE_H
#define DDT_CALIBRATE_H

#include "calib.h"

#define CALIB_MAX_LAW 32
/* A non-MoE component's scaling law measured tonight: kernel time against its
 * driver (attention: verify width M; draft: tokens C x block). The model uses
 * t(x) / t(x0), x0 the anchor's. n == 0: the growth law of the calibration. */
struct comp_law {
	int n;
	double x[CALIB_MAX_LAW], t_us[CALIB_MAX_LAW]; /* sorted by x */
	char what[200];         /* "tree_attn on NVIDIA H200, ctx=4096, 6 points" */
};

/* Attention over context measured: tree_attn rows (one sequence, one layer,
 * T = 1 + B queries over ctx tokens) fitted to t = a0 + a1 T + ctx (b + c T)
 * by least squares (fit.h: fit_ctx_law). b is what a token of context costs
 * whatever the queries (its latent KV row read: bandwidth), c what it costs
 * each query (scores and values: compute). n == 0: none; the model takes
 * MLA's geometry (kv_lora_rank + qk_rope_dim values a token and layer). */
struct ctx_law {
	int n;                  /* rows fitted */
	double b_us, c_us;      /* us per context token and layer; c: per query too */
	double var_b, cov_bc, var_c; /* their covariance (residual scale included) */
	double r2;              /* of the fit, on the times */
	double bw_tbps, bf16_tflops; /* the roofs of the GPU measured: b moves with
				      * bandwidth, c with bf16 peak to another GPU */
	char what[300];         /* "fit of 8 tree_attn rows on NVIDIA H200 (ctx 4096-65536,
				 * T 1-33), R^2 0.998: ..." */
};

/* The physical curve fitted to a set of points (fit.h fills it). */
struct moe_fit {
	int ok;                       /* 0: could not be fitted (note says why) */
	double value[MOE_P_COUNT];    /* fitted or held */
	double se[MOE_P_COUNT];       /* standard errors; NaN when held or exactly determined */
	int held[MOE_P_COUNT];
	int npoints;                  /* points used */
	double rms_pct;               /* relative residuals, root mean square, % */
	char note[400];
};

/* What the calibrate stage derives from the facts (struct calib): the
 * physical MoE curve fitted to the reference points (calibrate_moe), the
 * transfer entries and, for a projection, what tonight measured
 * (calibrate_tonight): the scaling laws (n 0: none, the calibration's
 * growth and geometry stand), the MoE reference points, tree_scale_frac
 * and the fleet's series of the transfer class, each with the facts'
 * own as the fallback (calibrate_moe_ref, calibrate_asm, calibrate_meas).
 * The model reads it through its own pointer (model_prepare); the facts
 * hold none of it and are never written after calibrate_load. */
struct calibration {
	struct moe_fit moe_fit;        /* of moe_ref.phys to moe_ref's points */
	struct comp_law law_attn, law_draft; /* tonight's, when the run has them */
	struct comp_law law_tree; /* tonight's native tree per sequence: tree_build +
				   * accept (us) against the budget B */
	struct ctx_law law_ctx;   /* tonight's attention over context (n 0: the geometry) */
	struct xfer_table xt;     /* the transfer entries (xfer.h: xfer_build) */
	/* moe_own 1: the MoE reference in use is moe_ref, the facts' with a
	 * projection's curve or tonight's sweep for points (prov PROV_TONIGHT);
	 * 0: the facts' own (calibrate_moe_ref) */
	int moe_own;
	struct moe_reference moe_ref;
	/* tree_tonight 1: tree_scale_frac measured tonight (tree_build rows),
	 * in place of the calibration's assumption (calibrate_asm) */
	int tree_tonight;
	struct dist tree_scale_frac;
	/* meas_own 1: the measured tables in use are meas, the facts' with
	 * tonight's sweeps joined to the transfer class (calibrate_fleet);
	 * 0: the facts' own (calibrate_meas) */
	int meas_own;
	struct measured meas;
	/* 1: the model leaves out the --set holds of derived inputs (law.*,
	 * allreduce.GPU.step_ms_at_mM), for the values they replaced */
	int unheld;
};

/* The MoE reference the stages use: d's own when it has one (a
 * projection's curve, tonight's points), else the facts'. */
const struct moe_reference *calibrate_moe_ref(const struct calib *c,
					      const struct calibration *d);

/* The measured cross-GPU tables the stages use: d's own when tonight's
 * sweeps joined them, else the facts'. */
const struct measured *calibrate_meas(const struct calib *c, const struct calibration *d);
/* A class of calibrate_meas by name; NULL when absent. */
const struct meas_class *calibrate_class(const struct calib *c, const struct calibration *d,
					 const char *name);

/* Assumption i as the stages use it: tonight's tree_scale_frac when d
 * measured it, else the facts' (calib_asm over d's transfer entries). */
const struct dist *calibrate_asm(const struct calib *c, const struct calibration *d, int i);

/* The growth held with --set law.attn_lmhead (i 0) or law.draft (1),
 * NaN when none or d leaves the holds out. */
double calibrate_law_hold(const struct calib *c, const struct calibration *d, int i);


struct run_record;

/* What the command line changes in a calibration as it is loaded, applied
 * in this order once the facts are loaded and the curve fitted and the
 * transfer entries built: moe_reference (--moe-reference: its curve
 * replaces the reference, the anchors keep the calibration's own MoE),
 * then every set in the order given (--set KEY=VALUE; what a value
 * changes is made again after it: a fact of the MoE reference, the
 * geometry or a GPU refits the curve, a new reference GPU rebuilds the
 * transfer entries, and moe_transfer.* sets an entry as built then), then
 * curve (--moe-curve, as moe_reference.curve), then fleet (a run whose
 * GPUs' moe_w4a16 sweeps join the transfer calibration: calibrate_fleet).
 * Each success is logged in the facts' sets, with what it replaced (for
 * moe_reference.physical.*: the fit's value). Every field may be 0/NULL. */
struct calibrate_opts {
	const char *moe_reference;     /* a reference curve CSV (NULL: none) */
	const char *const *sets;       /* "KEY=VALUE", nsets of them */
	int nsets;
	const char *curve;             /* "linear" or "physical" (NULL: the calibration's) */
	const struct run_record *fleet; /* NULL: none */
};

/* The calibration as the stages use it: calib_load into c, then the
 * physical MoE curve fitted to moe_reference's points into d (calibrate_moe)
 * and the transfer entries built (xfer.h: xfer_build), then o's changes
 * (o may be NULL: none; a fleet joins d's measured tables). After it
 * returns nothing changes c: every stage takes the facts by const pointer,
 * and what a projection derives from them is made in a derived calibration
 * of its own (calibrate_projection). A load or fit that fails is a
 * problem in diag at its section's file:line; a change of o that fails is
 * the error (err_msg(): "--set KEY: ...", as calib_set says), with nothing
 * in diag. Returns 0 or DDT_EINPUT/DDT_ENOMEM/DDT_EIO; free with calib_free
 * even on error. */
int calibrate_load(struct calib *c, struct calibration *d, const char *path,
		   const struct calibrate_opts *o, struct ydiag *diag);

/* A calibration made from one already loaded (c0, d0: left as they are)
 * with o's changes, as calibrate_load makes it from files: c a copy of c0
 * (calib_copy), d of d0. Returns 0 or an error code; free c with
 * calib_free even on error. */
int calibrate_with(struct calib *c, struct calibration *d, const struct calib *c0,
		   const struct calibration *d0, const struct calibrate_opts *o);

/* Refits the physical MoE curve to the current points (after a change to
 * them, to the geometry or to the reference GPU), then rebuilds the
 * transfer entries when they were built for another reference GPU.
 * Returns 0, or DDT_EINPUT when the curve in use is physical and cannot be
 * fitted (err_msg() says why) / an error of xfer_build. */
int calibrate_moe(const struct calib *c, struct calibration *d);

/* calib_keys with the values the fit in d gives
 * (moe_reference.physical.*: fitted or held) in place of the facts'. */
int calibrate_keys(const struct calib *c, const struct calibration *d, calib_key_fn fn,
		   void *ctx);

struct projection;

/* The catalog GPU a measured device is ("NVIDIA H200" -> h200): the longest
 * catalog id (underscores dropped) inside its name, letters and digits
 * compared without case; NULL when none. */
const struct gpu *calibrate_device_gpu(const struct calib *c, const char *name);

/* The derived calibration a projection uses on the facts c, made in d: a
 * copy of d0 without laws, the MoE curve switched to moe_curve (enum
 * moe_curve_kind; -1: the one in use) and refitted, tonight's run folded
 * in (calibrate_tonight; run NULL: none). c is left as it is. Returns 0
 * or an error code. */
int calibrate_projection(struct calibration *d, const struct calib *c,
			 const struct calibration *d0, int moe_curve,
			 const struct run_record *run, struct projection *p);

/* Folds tonight's GPU measurements of run into d (the facts c are left as
 * they are): the MoE sweep as the reference curve, tree_scale_frac, every
 * GPU's sweep into the transfer calibration (calibrate_fleet), the laws of
 * attention (over width and over context), draft and native tree. p gets the run's id
 * and device, notes, and whether anything was recalibrated. A CPU run
 * changes nothing. Returns 0 or an error code. */
int calibrate_tonight(const struct calib *c, struct calibration *d, const struct run_record *run,
		      struct projection *p);

/* Adds tonight's moe_w4a16 sweeps (the model's shape) of every GPU of run
 * to the measured class moe_transfer.class, in d's own copy of the measured
 * tables (calibrate_meas), as series of their own (they pair only with each
 * other: another kernel than the shipped tables), and recalibrates the
 * transfer entries in d, when two or more GPUs have two or more
 * points. p (may be NULL) gets a note. Returns 0, DDT_EINPUT or DDT_ENOMEM. */
int calibrate_fleet(const struct calib *c, struct calibration *d, const struct run_record *run,
		    struct projection *p);

#endif
