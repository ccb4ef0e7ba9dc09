/* project.h - projections with uncertainty: Monte Carlo bands per scenario,
 * the tornado, the best budget per GPU and concurrency, the MoE curve fit and
 * its backtest, provenance of every input; projection.yaml out and back in.
 *
 * One call does the night's projection:
 *
 *     struct projection p;
 *     project_run(&p, &cal, &tmpl, run_or_NULL, NULL);   // template's settings
 *     project_write(&p, "runs/<id>/projection.yaml");
 *     project_free(&p);
 *
 * and the document stage re-renders from the stored file alone:
 *
 *     project_read(&p, "runs/<id>/projection.yaml", &diag);
 *
 * Every number a document shows is in struct projection; the reader gives
 * back exactly what the writer was given (numbers as %.9g), so documents
 * rendered from either are the same.
 */
#ifndef DDT_PROJECT_H
#define DDT_PROJECT_H

#include <stddef.h>
#include <stdint.h>

#include "calib.h"
#include "fit.h"
#include "model.h"
#include "record.h"
#include "tmpl.h"
#include "yschema.h"

#define PROJECT_SCHEMA 5
#define PROJECT_MAX_GRID_TARGETS 16
#define PROJECT_MAX_GRID_CONC 16
#define PROJECT_MAX_GRID_BUDGETS 32 /* the template's, and those added around optima */
#define PROJECT_MAX_CONF_BUDGETS 24  /* the template's */
#define PROJECT_MAX_CURVE 32
#define PROJECT_MAX_FIT_PARAMS 4
#define PROJECT_MAX_FIT_POINTS 64

/* Where acceptance comes from: a drafter trace replayed (ddt acceptance),
 * or a published curve of another model and task. */
enum accept_kind { ACCEPT_PUBLISHED, ACCEPT_TRACE };

/* ---- settings: the template's `projection:` section ---- */

/* One point of a published acceptance curve. */
struct project_curve_point {
	double budget, accept;
};

struct project_config {
	int samples;            /* Monte Carlo draws */
	uint64_t seed;          /* PRNG seed; same inputs + seed = same output */
	int sensitivity;        /* compute the tornado */
	int grid;               /* compute the budget grid */
	/* the grid: targets x concurrency x budget */
	int ntargets, nconc, nbudgets;
	char targets[PROJECT_MAX_GRID_TARGETS][32]; /* GPU catalog ids */
	int conc[PROJECT_MAX_GRID_CONC];
	int budgets[PROJECT_MAX_GRID_BUDGETS];
	char grid_scenario[48]; /* block, pipeline and acceptances come from it */
	char ad_hoc[48];        /* the scenario `ddt estimate`'s ad hoc options change */
	/* the acceptance source (acceptance_curve): the grid's acceptance at
	 * every budget, and the scenarios' that say `accept: curve` */
	enum accept_kind accept_kind;
	char accept_trace[512];  /* ACCEPT_TRACE: the drafter trace replayed, or a log */
	char accept_from[16];    /* ACCEPT_TRACE: "" a drafter trace; else the kind of log
				  * accept_trace is (spec_log.h: vllm-log, vllm-metrics,
				  * sglang-log), its tree estimated (accept_logs.h) */
	/* ACCEPT_PUBLISHED: acceptance vs budget from elsewhere, its level taken
	 * from the grid scenario's acceptance, its gain doubted by accept_shape */
	int ncurve;
	struct project_curve_point curve[PROJECT_MAX_CURVE]; /* budgets increasing */
	char curve_source[CALIB_SOURCE_LEN];
	char curve_label[96];    /* whose curve it is: "another model and task: ..." */
	struct dist accept_shape; /* exponent on the curve's ratio to its value at the
				   * grid scenario's budget (1: the published gain) */
	/* -1: the calibration's moe_reference.curve; else enum moe_curve_kind */
	int moe_curve;
};

/* Loads and checks the `projection:` section into cfg: every key of the
 * section that holds the values (the template's, or the one of the template
 * it extends: templates/default.yaml has the project's) is required, none
 * is filled in by the code; a template that extends another and has its own
 * section overrides the keys it gives (a whole acceptance_curve, grid keys
 * one by one). moe_curve alone is optional (the calibration's). Every
 * problem goes to diag as file:line:col; returns 0 or DDT_EINPUT. Called by
 * `ddt check` for every template. */
int project_config_load(struct project_config *cfg, const struct tmpl *t, struct ydiag *diag);
/* The section's keys (its samples and seed are ddt estimate's options);
 * read with c->ctx the template, whose scenarios it names. */
extern const struct yschema project_config_schema;

/* ---- results ---- */

/* A value and its Monte Carlo band. point: the row's estimator's headline,
 * one evaluation of the model (the seed's: every assumption at its seed
 * point; calibrated: each sampled input at its posterior centre on the scale
 * it enters, the growth through the b16 anchor's posterior median, which
 * lands within 1% of the band's median); p5/p50/p95: quantiles over the
 * draws, weighted by the anchors' likelihood. */
struct band {
	double point, p5, p50, p95;
};

/* One (scenario, acceptance). */
struct project_row {
	char scenario[48];
	char target[32];
	enum pipeline_kind pipeline;
	int block, budget, concurrency;
	int context;              /* tokens; 0: the anchors' (anchor_context) */
	char context_from[16];    /* "scenario" (its own or --context), "trace" (the
				   * acceptance trace's mean), "" (the anchors') */
	double M, accept;
	int runnable;
	char note[200];
	enum estimator_kind estimator;
	double accept_lo, accept_hi; /* a calibrated scenario's acceptance range (lo = hi: one
				      * value); from the trace: its bootstrap interval */
	char accept_from[16];     /* "typed" (the scenario's accept) or "trace" (accept: curve) */
	double ms[COMP_COUNT];    /* components at the point values */
	double moe_ms, nonmoe_ms;
	struct band step_ms, tok_s;
	struct band moe_band;     /* the MoE alone, ms per step */
	/* the lean: how far the median sits from the point estimate */
	double lean_pct;          /* (tok_s.p50 - tok_s.point) / point x 100 */
	char lean_by[64];         /* the assumption whose own median moves tok/s most */
	double lean_by_pct;       /* its move, % of the point tok/s (signed) */
	double point_pctile;      /* where the point estimate falls in the draws, 0-100 */
	int moe_xfer;             /* the MoE was moved between GPUs (a transfer factor applies) */
	/* the other estimator, beside: the seed's figure and where it falls in
	 * this band (a seed row: ddt's calibrated median and its percentile, 50) */
	double other_tok_s, other_pctile;
	double extrap_pct;        /* M beyond the measured points: 1-sigma extrapolation error, % (0: inside) */
	/* the backtest of the transfer this row's MoE takes (reference GPU ->
	 * target, measured pairs held out): share of measured points inside
	 * p5-p95 and median |error| of p50, %; NaN when there is no such data */
	double xfer_cover_pct, xfer_err_pct;
	/* the implementation gap in that transfer: the 90% half-width of its
	 * factor, % (NaN: no gap sized); over 25 no narrower band is honest */
	double xfer_gap_pct;
};

/* One bar of a tornado: one assumption at its p5 and p95, the rest at their
 * point values. */
struct project_bar {
	char name[64];            /* "native_cut", "moe_transfer.blackwell_pro.blackwell_dc" */
	double value_point, value_p5, value_p95;
	double tok_s_p5, tok_s_p95; /* tok/s with the assumption at its p5 / p95 */
	double swing;             /* |tok_s_p95 - tok_s_p5| */
};

/* The tornado of one (scenario, acceptance), bars by swing, largest first;
 * assumptions that do not move it (swing 0) are left out. */
struct project_tornado {
	char scenario[48];
	double accept;
	double tok_s_point;
	int nbars;
	struct project_bar *bars;
};

/* One grid cell: a target at concurrency C and budget B. */
struct project_cell {
	double M;                 /* C (B + 1) */
	double accept;            /* the acceptance curve at B, scaled, capped at the block */
	int accept_capped;        /* the scaled curve passed the block size */
	int accept_lower;         /* trace: a lower bound (its tree wanted ranks past the
				   * trace's top-K in some steps) */
	struct band step_ms, tok_s;
	double p_best;            /* share of draws in which this budget is the best */
	double regret;            /* expected loss of choosing it: mean over the draws of
				   * (the draw's best tok/s - its tok/s) */
	int best;                 /* the budget of least regret for (target, C) */
	int runner;               /* the one of next least regret */
};

struct project_grid {
	char scenario[48];        /* where block, pipeline and accept come from */
	enum pipeline_kind pipeline;
	int block;
	int context;              /* the grid scenario's (0: the anchors') */
	double ref_budget, ref_accept; /* the scenario's budget and (middle) acceptance */
	int ntargets, nconc, nbudgets;
	char targets[PROJECT_MAX_GRID_TARGETS][32];
	int conc[PROJECT_MAX_GRID_CONC];
	int budgets[PROJECT_MAX_GRID_BUDGETS];
	double curve_accept[PROJECT_MAX_GRID_BUDGETS]; /* the source's curve at each budget
							* (published: unscaled) */
	int nadded;               /* budgets added around the optimum (non-powers of two) */
	char accept_kind[16];     /* "published" or "trace" */
	char accept_source[400];  /* where the acceptance came from and how it is doubted */
	struct project_cell *cells; /* [ntargets][nconc][nbudgets] */
	int *best;                  /* [ntargets][nconc]: index into budgets */
	int *runner;                /* [ntargets][nconc]: the runner-up's index */
};

/* The cell of (target t, concurrency c, budget b) by index. */
#define PROJECT_CELL(g, t, c, b) (&(g)->cells[((size_t)(t) * (g)->nconc + (c)) * (g)->nbudgets + (b)])

/* A fitted or held parameter of the MoE curve. */
struct project_param {
	char name[24];            /* "efficiency", "overlap", "fixed_us" */
	double value;
	double se;                /* standard error; NaN when held or exactly determined */
	int held;                 /* held at the calibration value, not fitted */
	char unit[32];
};

/* A point the curve was fitted to, and how the fit meets it. */
struct project_fit_point {
	double m, step_ms, fit_ms;
	double resid_pct;         /* (fit - measured) / measured x 100 */
	double loo_ms, loo_pct;   /* left out, predicted from the rest (NaN: cannot) */
};

struct project_fit {
	enum moe_curve_kind curve;   /* the curve the projection used */
	char gpu[32];                /* where the points were measured */
	enum provenance source;      /* PROV_TONIGHT or PROV_MEASURED (calibration) */
	int nparams;
	struct project_param params[PROJECT_MAX_FIT_PARAMS];
	int npoints;
	struct project_fit_point points[PROJECT_MAX_FIT_POINTS];
	double rms_pct;              /* of the residuals */
	double plateau_ms;           /* the physical curve at M -> infinity (memory side) */
	double m_plateau;            /* M where it reaches 95% of that */
	char note[400];              /* which were held and why; conditioning */
};

/* Leave-one-out: a stored point predicted without it, beside the band a
 * reader is asked to trust. */
struct project_backtest {
	char what[64];               /* "moe_reference m=9", "anchors.sglang_b16" */
	double measured, predicted;  /* ms */
	double err_pct;              /* (predicted - measured) / measured x 100; NaN: cannot */
	char band_scenario[48];      /* the scenario whose band it is shown beside */
	double band_lo_pct, band_hi_pct; /* that band's p5 and p95 vs its p50, % */
	char note[160];
};

/* The cross-GPU backtest of one ordered GPU pair: the target's measurements
 * held out of the transfer fit, the source's curve projected onto it. */
struct project_xback {
	char cls[24];
	char from[32], to[32];
	int n;                       /* measured points compared */
	double cover_pct;            /* share inside p5-p95 */
	double med_err_pct;          /* median |p50 / measured - 1| */
	double max_err_pct;
	double bias_pct;             /* median p50 / measured - 1 (signed) */
	double width_pct;            /* median (p95 - p5) / p50 */
};

/* One scored point of the implementation backtest. */
struct project_xpoint {
	char cls[24], from[32], to[32];
	double m, measured_us, p5_us, p50_us, p95_us;
};

/* The cross-GPU backtest pooled over its points: per class and target
 * family, per class (fam ""), every class (both ""). */
struct project_xsum {
	char cls[24], fam[24];
	int n;                       /* measured points */
	double cover_pct;            /* share inside p5-p95 */
	double med_err_pct;          /* median over the points of |p50 / measured - 1| */
	double bias_pct;             /* median of p50 / measured - 1 (signed) */
	double width_pct;            /* median (p95 - p5) / p50 */
};

/* An input's source: a calibration source with, before it, either "set on
 * the command line; before: " or its distribution's "<kind> <p5>..<p95>: "
 * (each under 64 bytes), so no source is cut. */
#define PROJECT_SOURCE_LEN (CALIB_SOURCE_LEN + 64)

/* Where an input value came from. */
struct project_input {
	char name[96];               /* the key --set takes */
	double value;
	enum provenance prov;
	double was;                  /* PROV_OVERRIDE: the value it replaced (NaN: unknown) */
	char source[PROJECT_SOURCE_LEN];
};

/* The basis column of an input: "overridden (was 20.94)", else its
 * provenance's name. */
void project_input_basis(const struct project_input *in, char *buf, size_t len);

/* The longest caveat a projection holds, with its NUL (a longer one is a
 * bug: add_note refuses it rather than cut a sentence short). */
#define PROJECT_NOTE_LEN 1024

/* ddt's calibrated point, the model's state its calibrated rows are
 * evaluated at (project.c mc_central): every assumption's central value
 * under its label (calib_assumption_label), and the knobs. The What-if
 * sheet carries them as the calibrated model's inputs. */
struct project_central {
	int have;                    /* 0: a projection stored before it was kept */
	int n;
	char name[CALIB_MAX_ASM][96];
	double v[CALIB_MAX_ASM];
	double a8_step_ms;           /* the b8 anchor's step at the point */
	double b16_step_ms;          /* the b16 step the growth is solved for; NaN: held */
	double growth;               /* the growth at the point */
	double form, moe_scale, z_x; /* model.h knobs (xfer_curve and tree_kernels: 1) */
};

struct projection {
	int schema;
	char run_id[80];             /* the run the projection belongs to ("" for none) */
	char template_name[64];
	char calibration[512];
	int samples;
	uint64_t seed;
	enum moe_curve_kind curve;
	int recalibrated;            /* tonight's GPU measurements replaced calibration laws */
	char measured_on[128];       /* tonight's device (GPU name, or the CPU's) */
	char lean[400];              /* one paragraph: how far, which way, which assumption */
	char accept_kind[16];        /* the acceptance source: "published" or "trace" */
	char accept_source[400];     /* it in words: the trace (steps, block, top-K) or the
				      * published curve, labelled, and its prior */
	/* attention over context: "fit of N tree_attn rows, R^2 r" or "geometry
	 * fallback" (every row with a context says it), and in words: the fit
	 * (rows, GPU, b and c with their errors) or the geometry and why no fit */
	char context_law_label[64];
	char context_law[600];
	size_t nrows;
	struct project_row *rows;
	size_t ntornado;
	struct project_tornado *tornado;
	int has_grid;
	struct project_grid grid;
	struct project_fit fit;
	size_t nbacktest;
	struct project_backtest *backtest;
	/* the cross-GPU backtest (backtest.h): per pair, pooled per class and
	 * target family, and over every point of every class */
	size_t nxback;
	struct project_xback *xback;
	size_t nxsum;
	struct project_xsum *xsum;
	double xback_cover_pct, xback_err_pct;
	int xback_n;
	/* the same with whole implementations held out (backtest_ximpl): pairs
	 * (class: the held-out implementation's), pooled per implementation
	 * (fam ""), per pair over implementations (cls "", fam "from->to") and
	 * over every one */
	size_t niback;
	struct project_xback *iback;
	size_t nipts;
	struct project_xpoint *ipts; /* every scored point (not in projection.yaml) */
	size_t nisum;
	struct project_xsum *isum;
	double iback_cover_pct, iback_err_pct, iback_width_pct, iback_bias_pct;
	int iback_n;
	/* the anchors as observations: effective sample size of the weighted
	 * draws, and whether the prior and the anchor disagree */
	double ess, ess_pct;
	int conflict;
	char weighting[400];         /* what was weighted by what, in words */
	size_t ninputs;
	struct project_input *inputs;
	struct project_central central;
	size_t nnotes;
	char (*notes)[PROJECT_NOTE_LEN]; /* caveats in order: "CPU run: ..." */
};

/* Projects every scenario of t (and the grid, and the tornado, as cfg says)
 * with calibration c and what is derived from it d (calibrate.h), recalibrated from run's GPU rows when run is non-NULL
 * and came from a GPU (a CPU run never recalibrates GPU projections; the
 * notes say so). cfg NULL: the template's `projection:` section. c is not
 * modified. Returns 0, DDT_EINPUT (inconsistent inputs; err_msg() says
 * which), or DDT_ENOMEM. Free p with project_free even on error. */
int project_run(struct projection *p, const struct calib *c, const struct calibration *d,
		const struct tmpl *t, const struct run_record *run,
		const struct project_config *cfg);

/* The same for a list of scenarios (ddt estimate's ad hoc ones), with the
 * settings cfg (project_config_load's; not NULL). */
int project_scenarios(struct projection *p, const struct calib *c, const struct calibration *d,
		      const struct scenario *scs, size_t n, const struct run_record *run,
		      const struct project_config *cfg);

/* Adds a note to p (printf's format); one longer than PROJECT_NOTE_LEN is
 * refused, never cut. Returns 0, DDT_EGENERIC or DDT_ENOMEM. */
int project_note(struct projection *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes p's cross-GPU backtest (xbacktest) as YAML to fp. */
void project_emit_xback(const struct projection *p, FILE *fp);

/* Writes p as projection.yaml, atomically. Returns 0 or DDT_EIO/DDT_ENOMEM. */
int project_write(const struct projection *p, const char *path);
/* Writes p as YAML to fp (no atomicity). */
void project_emit(const struct projection *p, FILE *fp);
/* Some of its sections alone, into an open mapping of y: parts of
 * PROJECT_TEXT_* (BANDS: draws, seed, curve, weighting, lean and notes;
 * TORNADO; GRID, when p has one; FIT: the MoE curve's fit and the backtest;
 * XBACK; INPUTS). */
void project_emit_sections(struct yout *y, const struct projection *p, unsigned parts);

/* Reads a projection.yaml written by project_write; problems go to diag as
 * file:line:col. p is zeroed first; free with project_free even on error. */
int project_read(struct projection *p, const char *path, struct ydiag *diag);
void project_free(struct projection *p);

/* Replaces p by what project_read would give back from project_write's file
 * (numbers at 9 significant digits), so a document rendered from memory and
 * one rendered from the stored file are the same. project_run and
 * project_scenarios end with it. Returns 0 or DDT_ENOMEM. */
int project_normalize(struct projection *p);

/* The row of (scenario, accept), or NULL. */
const struct project_row *project_find_row(const struct projection *p, const char *scenario,
					   double accept);

/* Human text, the parts asked for: bands per scenario with the lean and the
 * notes, tornados, the grid's best budgets, the fit and the backtest. */
enum {
	PROJECT_TEXT_BANDS = 1 << 0,
	PROJECT_TEXT_TORNADO = 1 << 1,
	PROJECT_TEXT_GRID = 1 << 2,
	PROJECT_TEXT_FIT = 1 << 3,
	PROJECT_TEXT_XBACK = 1 << 4,
	PROJECT_TEXT_INPUTS = 1 << 5, /* YAML only (ddt estimate's table lists them) */
	PROJECT_TEXT_ALL = 0x3f
};
void project_write_text(const struct projection *p, unsigned parts, FILE *fp);

/* The catalog GPU a measured device is ("NVIDIA H200" -> h200): the longest
 * catalog id inside its name, letters and digits compared without case; NULL
 * when none (a CPU, a GPU the catalog lacks). */
const struct gpu *project_device_gpu(const struct calib *c, const char *device_name);

#endif
