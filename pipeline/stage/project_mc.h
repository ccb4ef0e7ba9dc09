/* project_mc.h - the projection's Monte Carlo (project_mc.c): the cases it
 * evaluates, the draws and their weighting by the anchors, the calibrated
 * point, the bands and the grid's races. Private to the projection's
 * files. */
#ifndef DDT_PROJECT_MC_H
#define DDT_PROJECT_MC_H

#include "project.h"
#include "project_accept.h"

#include <stddef.h>
#include <stdint.h>

struct qwork;

/* A distinct configuration to evaluate (rows with the same one share it). */
struct mc_case {
	struct model_case k;
	double point_step;     /* the seed estimator: every assumption at its seed point */
	double cal_step;       /* ddt's: every sampled input at its posterior median */
	long moe_col;          /* its column of MoE draws (-1: not kept) */
};

/* What a draw samples besides the assumptions: its knobs. */
enum { KN_A8, KN_GROWTH, KN_FORM, KN_SCALE, KN_ZX, KN_ACCEPT, KN_CTX_B, KN_CTX_C, KN_B16, KN_COUNT };

struct mc {
	const struct calib *c;
	const struct calibration *der; /* tonight's laws (the model's) */
	int nasm, ngroups;
	int group[CALIB_MAX_ASM];
	unsigned char need[CALIB_MAX_ASM]; /* some case reads it (else: its point) */
	double point[CALIB_MAX_ASM];
	size_t ncases, cap, nmoe;
	struct mc_case *cases;
	size_t nsamples;
	double *step;          /* [ncases][nsamples] */
	double *moe;           /* [nmoe][nsamples]: the MoE of the cases that keep it */
	double *u;             /* [ngroups + KN_COUNT][nsamples]: the draw's quantiles and knobs */
	double *b16;           /* [nsamples]: the b16 anchor's step in each draw */
	double *scratch;       /* [nsamples] for quantiles */
	struct qwork *qw;
	int rejected;
	/* the calibrated point's inputs (mc_central): every assumption's value
	 * and every knob, and the b16 anchor's posterior median step */
	double cval[CALIB_MAX_ASM], ckn[KN_COUNT];
	double b16_central;
	double growth_central; /* the growth solved at the calibrated point */
	/* how the draws vary beyond the assumptions */
	double a8_sig;         /* sigma of the log b8 anchor step (0: exact) */
	double b16_sig;        /* sigma of the log b16 anchor step (0: not weighted) */
	int b16_est;           /* the b16 anchor is an estimate: drawn, never weighing */
	int mix_forms;         /* the fit is exactly determined: mix the declared form and the other */
	double fit_sig;        /* sigma of the log fit error (residuals, parameters) */
	/* the acceptance source's draws (after the weighting) */
	const struct project_accept *acc;
	const long *row_lane;  /* [nrows]: a row's acceptance lane, -1: typed */
	/* the grid's races: per (target, C), which budget wins each draw */
	int nraces, nlanes;    /* races, budgets per race */
	const long *race_case; /* [nraces][nlanes] case of each lane */
	const long *race_acc;  /* [nraces][nlanes] acceptance lane (project_accept) of each */
	const int *race_c;     /* [nraces] concurrency */
	int *wins;             /* [nraces][nlanes] */
	double *regret;        /* [nraces][nlanes]: mean tok/s below the draw's best */
};

#define MC_U(mc, j) ((mc)->u + (size_t)(j) * (mc)->nsamples)

/* p5, p50 and p95 of a[n] (linear between order statistics, as R's type 7),
 * with scratch[n]. A histogram finds the bins that hold the order statistics
 * needed; only those bins' elements are gathered and sorted. */
void project_mc_quantiles3(const double *a, size_t n, double *scratch, struct qwork *w,
			   double out[3]);

/* Index of in's case, added when new; keep_moe: its MoE draws are kept. */
long project_mc_case_of(struct mc *mc, const struct model *m, const struct model_in *in,
			int keep_moe);

/* Draws every sample: values, knobs, the model, every case's step (and MoE
 * where kept) and the b16 anchor's. Draws are made a block at a time into
 * [sample][case] and stored as [case][sample], the order quantiles read
 * them in. */
int project_mc_run(struct mc *mc, struct model *m, int samples, uint64_t seed);

/* The anchors as observations: weights each draw by the b16 anchor's
 * likelihood, reports the effective sample size and any conflict, and
 * resamples. Returns 0 or DDT_ENOMEM. */
int project_mc_weigh(struct mc *mc, struct projection *p, uint64_t seed);

/* For each race and draw, every lane's tok/s (its acceptance and step
 * drawn): the lane of highest tok/s wins; each lane's regret grows by how
 * far it falls short of the winner. */
void project_mc_run_races(struct mc *mc);

/* The calibrated point's inputs from the weighted draws (after resampling):
 * each at its posterior mean on the scale it enters the step. What
 * multiplies (the lognormal transfer factors, the anchors' errors, the
 * fit's and the extrapolation's errors, the curve's form) at its geometric
 * mean, since the geometric mean of a product is the product of the
 * geometric means (for a lognormal, its median); what adds (the shares,
 * the native cut, the tree's growth, the all-reduce and compute settings) at
 * its mean, since the mean of a sum is the sum of the means. (Medians do
 * neither: with skewed parts they put the point 1-2% off the band's
 * median.) */
void project_mc_central(struct mc *mc);

/* The geometric mean of a row's acceptance (uniform over [lo, hi]) over the
 * weighted draws: tok/s is proportional to it. */
double project_mc_central_accept(const struct mc *mc, double lo, double hi);

/* Every case's calibrated step: the model at the posterior medians of its
 * inputs. Returns 0 or DDT_EINPUT. */
int project_mc_cal_point(struct mc *mc, struct model *m);

/* Keeps the calibrated point's inputs in p (project_central). */
void project_mc_keep_central(struct projection *p, const struct mc *mc, const struct model *m);

/* Step quantiles of case k from its draws; point: the row's estimator's own
 * evaluation (seed: every assumption at its seed point; cal: the model at the
 * calibrated central inputs, which lands on the draws' median). */
void project_mc_band(struct mc *mc, size_t k, int cal, struct band *step);

/* tok/s = C accept / step is decreasing in step: its quantiles mirror. */
struct band project_mc_tok_band(const struct band *step, double C, double accept);

/* The tok/s draws of a row of case k into out[nsamples]: its acceptance
 * the source's lane's draws (lane >= 0), else uniform over [lo, hi] in
 * each draw (lo = hi: fixed). */
void project_mc_row_tok_draws(const struct mc *mc, size_t k, double C, double lo,
			      double hi, long lane, double *out);

/* Share of draws at or below x (0-100); draws equal to it count half. */
double project_mc_pctile_of(const double *a, size_t n, double x);

/* Puts m at a row's estimator (seed: every assumption at its point, the
 * anchors as given, each transfer range's value at every M; calibrated:
 * every sampled input at its posterior median) and fills v with its
 * values. */
void project_mc_use_estimator(const struct mc *mc, struct model *m, int cal, double *v);

/* The step of case k with group g at quantile q, the rest at the row's
 * estimator (cal: ddt's medians, else the seed's points). */
double project_mc_step_with(const struct mc *mc, struct model *m, size_t k, int g, double q,
			    int cal);

#endif
