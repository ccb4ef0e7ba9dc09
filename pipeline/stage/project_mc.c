/* project_mc.c - the projection's Monte Carlo: quantiles of the draws, the
 * cases, the draws, their weighting by the anchors, the calibrated point,
 * the bands and the grid's races. */
#include "project_mc.h"

#include "err.h"
#include "rng.h"
#include "sort.h"

#include <gsl/gsl_cdf.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- numbers */


/* Standard normal by its inverse CDF (one uniform a value). */
static double normal_std(struct rng *r)
{
	return gsl_cdf_ugaussian_Pinv(rng_open01(r));
}

#define QBINS 4096

static size_t qbin(double x, double lo, double scale)
{
	size_t b = (size_t)((x - lo) * scale);
	return b < QBINS ? b : QBINS - 1;
}

/* Working memory of project_mc_quantiles3. */
struct qwork {
	unsigned cnt[QBINS];
	size_t first[QBINS], at[QBINS];
	unsigned char need[QBINS];
};

/* p5, p50 and p95 of a[n] (linear between order statistics, as R's type 7),
 * with scratch[n]. A histogram finds the bins that hold the order statistics
 * needed; only those bins' elements are gathered and sorted. */
void project_mc_quantiles3(const double *a, size_t n, double *scratch, struct qwork *w,
			   double out[3])
{
	static const double q[3] = {0.05, 0.50, 0.95};
	unsigned *cnt = w->cnt;
	size_t *first = w->first, *at = w->at;
	unsigned char *need = w->need;
	size_t rank[6];
	double lo = a[0], hi = a[0];

	for (size_t i = 1; i < n; i++) {
		lo = a[i] < lo ? a[i] : lo;
		hi = a[i] > hi ? a[i] : hi;
	}
	if (!(hi > lo)) {
		out[0] = out[1] = out[2] = lo;
		return;
	}
	double scale = QBINS / (hi - lo);
	memset(w->cnt, 0, sizeof w->cnt);
	memset(w->need, 0, sizeof w->need);
	for (size_t i = 0; i < n; i++)
		cnt[qbin(a[i], lo, scale)]++;
	for (size_t b = 0, acc = 0; b < QBINS; acc += cnt[b++])
		first[b] = acc;
	for (int i = 0; i < 3; i++) {
		size_t k = (size_t)((double)(n - 1) * q[i]);
		rank[2 * i] = k;
		rank[2 * i + 1] = k + 1 < n ? k + 1 : k;
	}
	for (int r = 0; r < 6; r++) {
		size_t b = 0;
		while (b + 1 < QBINS && first[b + 1] <= rank[r])
			b++;
		need[b] = 1;
	}
	/* the needed bins' elements land at their bins' rank offsets */
	for (size_t b = 0; b < QBINS; b++)
		at[b] = first[b];
	for (size_t i = 0; i < n; i++) {
		size_t b = qbin(a[i], lo, scale);
		if (need[b])
			scratch[at[b]++] = a[i];
	}
	for (size_t b = 0; b < QBINS; b++)
		if (need[b] && cnt[b] > 1)
			qsort(scratch + first[b], cnt[b], sizeof *scratch, sort_cmp_double);
	for (int i = 0; i < 3; i++) {
		double h = (double)(n - 1) * q[i], x = scratch[rank[2 * i]];
		out[i] = x + (h - (double)rank[2 * i]) * (scratch[rank[2 * i + 1]] - x);
	}
}

/* ---------------------------------------------------------------- Monte Carlo */

/* Index of in's case, added when new; keep_moe: its MoE draws are kept. */
long project_mc_case_of(struct mc *mc, const struct model *m, const struct model_in *in,
			int keep_moe)
{
	size_t i;
	for (i = 0; i < mc->ncases; i++) {
		const struct model_case *k = &mc->cases[i].k;
		if (!strcmp(k->target->id, in->target->id) && k->pipeline == in->pipeline &&
		    k->block == in->block && k->budget == in->budget && k->C == in->concurrency &&
		    k->context == (in->context > 0 ? in->context : 0))
			break;
	}
	if (i == mc->ncases) {
		if (mc->ncases == mc->cap) {
			size_t cap = mc->cap ? 2 * mc->cap : 64;
			struct mc_case *n = realloc(mc->cases, cap * sizeof *n);
			if (!n)
				return err_nomem();
			mc->cases = n;
			mc->cap = cap;
		}
		struct mc_case *k = &mc->cases[mc->ncases++];
		struct model_out o;
		model_case_init(&k->k, m, in);
		model_case_eval(m, &k->k, &o);
		k->point_step = k->cal_step = o.step_ms;
		k->moe_col = -1;
		if (k->k.xfer >= 0)
			mc->need[k->k.xfer] = 1;
	}
	if (keep_moe && mc->cases[i].moe_col < 0)
		mc->cases[i].moe_col = (long)mc->nmoe++;
	return (long)i;
}

/* The values of every assumption with each group at quantile u[group]. A
 * lognormal is median x exp(sigma z), z the group's normal quantile (one
 * inverse CDF a group); assumptions no case reads stay at their points. */
static void values_at(const struct mc *mc, const double *u, double *v)
{
	double z[CALIB_MAX_ASM];
	int zg = -1;
	for (int i = 0; i < mc->nasm; i++) {
		const struct dist *d = calibrate_asm(mc->c, mc->der, i);
		int g = mc->group[i];
		if (d->kind == DIST_FIXED || !mc->need[i])
			v[i] = d->point;
		else if (d->kind == DIST_LOGNORMAL) {
			/* a group's entries are consecutive: one z per group */
			if (zg != g)
				z[g] = gsl_cdf_ugaussian_Pinv(u[g]), zg = g;
			v[i] = d->median * exp(d->sigma * z[g]);
		} else
			v[i] = calib_dist_quantile(d, u[g]);
	}
}

/* The law of attention over context on m at standard normals (zb, zc)
 * through the Cholesky factor of its fit's covariance (0, 0: the fit's
 * values); a slope below zero is zero. */
static void ctx_law_draw(const struct ctx_law *l, struct model *m, double zb, double zc)
{
	double l11 = sqrt(l->var_b), l21 = l11 > 0 ? l->cov_bc / l11 : 0;
	double l22 = sqrt(fmax(l->var_c - l21 * l21, 0));
	m->ctx_b_us = fmax(l->b_us + l11 * zb, 0);
	m->ctx_c_us = fmax(l->c_us + l21 * zb + l22 * zc, 0);
}

/* Sets the knobs of draw kn[] on m (before model_set_values): the b8
 * anchor's error, the growth, the curve's form (between the declared curve
 * and the seed's line, geometric, when the fit cannot tell them apart),
 * the fit error and the extrapolation error. */
static void knobs_set(const struct mc *mc, struct model *m, const double *kn)
{
	m->a8_step_ms = mc->c->sglang_b8.step_ms * exp(mc->a8_sig * kn[KN_A8]);
	m->growth_set = m->growth_used ? kn[KN_GROWTH] : NAN;
	if (mc->b16_est) {
		/* an estimate: the growth goes through a step drawn within its error */
		m->growth_set = NAN;
		m->b16_step_ms = mc->c->sglang_b16.step_ms * exp(mc->b16_sig * kn[KN_B16]);
	}
	m->form = mc->mix_forms ? kn[KN_FORM] : 0;
	m->moe_scale = exp(mc->fit_sig * kn[KN_SCALE]);
	m->z_x = kn[KN_ZX];
	m->xfer_curve = 1;
	m->tree_kernels = 1;
	m->ar_uncut = 1;
	ctx_law_draw(&mc->der->law_ctx, m, kn[KN_CTX_B], kn[KN_CTX_C]);
}

/* Draws one sample's quantiles and knobs into u[ngroups + KN_COUNT]. */
static void draw_one(const struct mc *mc, struct rng *r, double *u)
{
	double *kn = u + mc->ngroups;
	for (int g = 0; g < mc->ngroups; g++)
		u[g] = rng_open01(r);
	kn[KN_A8] = normal_std(r);
	kn[KN_GROWTH] = rng_open01(r);
	kn[KN_FORM] = rng_open01(r);
	kn[KN_SCALE] = normal_std(r);
	kn[KN_ZX] = normal_std(r);
	kn[KN_ACCEPT] = rng_open01(r);
	/* drawn only when a law is fitted: without one the stream is unchanged */
	kn[KN_CTX_B] = mc->der->law_ctx.n ? normal_std(r) : 0;
	kn[KN_CTX_C] = mc->der->law_ctx.n ? normal_std(r) : 0;
	kn[KN_B16] = mc->b16_est ? normal_std(r) : 0;
}

#define MC_BLOCK 64

/* Allocates the draws' columns. Returns 0 or DDT_ENOMEM. */
static int mc_alloc(struct mc *mc, int samples)
{
	size_t nu = (size_t)mc->ngroups + KN_COUNT;
	mc->nsamples = (size_t)samples;
	mc->step = malloc(mc->ncases * mc->nsamples * sizeof *mc->step);
	mc->moe = malloc((mc->nmoe ? mc->nmoe : 1) * mc->nsamples * sizeof *mc->moe);
	mc->u = malloc(nu * mc->nsamples * sizeof *mc->u);
	mc->b16 = malloc(mc->nsamples * sizeof *mc->b16);
	mc->scratch = malloc(mc->nsamples * sizeof *mc->scratch);
	mc->qw = malloc(sizeof *mc->qw);
	return mc->step && mc->moe && mc->u && mc->b16 && mc->scratch && mc->qw ? 0 : err_nomem();
}

/* Draws one valid sample into u and m (redrawing values that leave the
 * anchor step shorter than its MoE). Returns 0 or DDT_EINPUT. */
static int mc_draw(struct mc *mc, struct model *m, struct rng *r, double *u, double *v)
{
	for (int tries = 0; tries <= 1000; tries++) {
		draw_one(mc, r, u);
		values_at(mc, u, v);
		knobs_set(mc, m, u + mc->ngroups);
		if (model_set_values(m, v) == 0)
			return 0;
		mc->rejected++;
	}
	return err_set(DDT_EINPUT, "Monte Carlo: the assumptions' distributions leave the anchor "
		       "step shorter than its MoE time in nearly every draw");
}

/* Draws every sample: values, knobs, the model, every case's step (and MoE
 * where kept) and the b16 anchor's. Draws are made a block at a time into
 * [sample][case] and stored as [case][sample], the order quantiles read
 * them in. */
int project_mc_run(struct mc *mc, struct model *m, int samples, uint64_t seed)
{
	struct rng r;
	double u[CALIB_MAX_ASM + KN_COUNT], v[CALIB_MAX_ASM];
	size_t nu = (size_t)mc->ngroups + KN_COUNT, w = mc->ncases + mc->nmoe;
	double *blk;
	int rc;

	if ((rc = mc_alloc(mc, samples)) != 0)
		return rc;
	if (!(blk = malloc(MC_BLOCK * w * sizeof *blk)))
		return err_nomem();
	rng_seed(&r, seed);
	for (size_t s0 = 0; s0 < mc->nsamples; s0 += MC_BLOCK) {
		size_t nb = mc->nsamples - s0 < MC_BLOCK ? mc->nsamples - s0 : MC_BLOCK;
		for (size_t j = 0; j < nb; j++) {
			double *row = blk + j * w;
			if ((rc = mc_draw(mc, m, &r, u, v)) != 0) {
				free(blk);
				return rc;
			}
			for (size_t k = 0; k < mc->ncases; k++) {
				const struct mc_case *ck = &mc->cases[k];
				double moe = model_case_moe(m, &ck->k);
				row[k] = moe + model_case_rest(m, &ck->k);
				if (ck->moe_col >= 0)
					row[mc->ncases + (size_t)ck->moe_col] = moe;
			}
			mc->b16[s0 + j] = model_anchor_step(m, 1);
			for (size_t g = 0; g < nu; g++)
				MC_U(mc, g)[s0 + j] = u[g];
		}
		for (size_t k = 0; k < w; k++) {
			double *col = k < mc->ncases ? mc->step + k * mc->nsamples + s0
						     : mc->moe + (k - mc->ncases) * mc->nsamples + s0;
			for (size_t j = 0; j < nb; j++)
				col[j] = blk[j * w + k];
		}
	}
	free(blk);
	m->b16_step_ms = mc->c->sglang_b16.step_ms;
	return 0;
}

/* Replaces the columns by a systematic resample of idx (the weighted draws
 * become equally weighted ones). Returns 0 or DDT_ENOMEM. */
static int mc_resample(struct mc *mc, const size_t *idx)
{
	size_t n = mc->nsamples, nu = (size_t)mc->ngroups + KN_COUNT;
	size_t ncols = mc->ncases + mc->nmoe + nu + 1;
	double *tmp = malloc(n * sizeof *tmp);
	if (!tmp)
		return err_nomem();
	for (size_t k = 0; k < ncols; k++) {
		size_t at = k;
		double *col = at < mc->ncases ? mc->step + at * n
			      : (at -= mc->ncases) < mc->nmoe ? mc->moe + at * n
			      : (at -= mc->nmoe) < nu	      ? MC_U(mc, at)
							      : mc->b16;
		for (size_t s = 0; s < n; s++)
			tmp[s] = col[idx[s]];
		memcpy(col, tmp, n * sizeof *tmp);
	}
	free(tmp);
	return 0;
}

/* The anchors as observations: weights each draw by the b16 anchor's
 * likelihood, reports the effective sample size and any conflict, and
 * resamples. Returns 0 or DDT_ENOMEM. */
int project_mc_weigh(struct mc *mc, struct projection *p, uint64_t seed)
{
	const struct anchor *a = &mc->c->sglang_b16;
	size_t n = mc->nsamples, below = 0;
	double *w, sw = 0, sw2 = 0, lmax = -INFINITY;
	size_t *idx;
	int rc;

	p->ess = (double)n;
	p->ess_pct = 100;
	if (mc->b16_est) {
		snprintf(p->weighting, sizeof p->weighting,
			 "draws equally weighted: anchors.sglang_b16 (%.3g ms, +-%.0f%%) is an estimate, "
			 "not a measurement; each draw takes its step within that error (the bands "
			 "widen), none is weighted by it",
			 a->step_ms, 100 * (exp(mc->b16_sig) - 1));
		return 0;
	}
	if (!(mc->b16_sig > 0)) {
		snprintf(p->weighting, sizeof p->weighting,
			 "draws equally weighted (no anchor with an error to weigh them by)");
		return 0;
	}
	w = malloc(n * sizeof *w);
	idx = malloc(n * sizeof *idx);
	if (!w || !idx) {
		free(w);
		free(idx);
		return err_nomem();
	}
	double mean = 0, var = 0;
	for (size_t s = 0; s < n; s++) {
		double z = log(mc->b16[s] / a->step_ms) / mc->b16_sig;
		w[s] = -0.5 * z * z;
		lmax = fmax(lmax, w[s]);
		below += mc->b16[s] < a->step_ms;
		mean += log(mc->b16[s]) / (double)n;
	}
	for (size_t s = 0; s < n; s++) {
		double d = log(mc->b16[s]) - mean;
		var += d * d / (double)n;
		w[s] = exp(w[s] - lmax);
		sw += w[s], sw2 += w[s] * w[s];
	}
	p->ess = sw * sw / sw2;
	p->ess_pct = 100 * p->ess / (double)n;
	double at = 100.0 * (double)below / (double)n;
	/* prior predictive check: the anchor against what the draws predict for
	 * it, with its own error; |z| > 2.58 is outside the central 99% */
	double zc = (log(a->step_ms) - mean) / sqrt(var + mc->b16_sig * mc->b16_sig);
	p->conflict = fabs(zc) > 2.576 || p->ess_pct < 1;
	snprintf(p->weighting, sizeof p->weighting,
		 "draws weighted by the sglang_b16 anchor (%.3g ms, +-%.0f%%): effective sample "
		 "size %.0f of %zu (%.1f%%); the prior puts that step at %.3g ms (the anchor at "
		 "its p%.1f; z %+.1f with the anchor's error)%s",
		 a->step_ms, 100 * (exp(mc->b16_sig) - 1), p->ess, n, p->ess_pct, exp(mean), at, zc,
		 p->conflict ? ". PRIOR/ANCHOR CONFLICT: the assumptions and the anchor disagree "
			       "beyond their stated errors; check the anchor and the transfer factors"
			     : "");
	/* systematic resampling, its offset from the seed's own stream */
	struct rng r;
	rng_seed(&r, seed ^ 0x5bd1e995u);
	double step = sw / (double)n, t = rng_open01(&r) * step, acc = w[0];
	for (size_t s = 0, i = 0; s < n; s++, t += step) {
		while (acc < t && i + 1 < n)
			acc += w[++i];
		idx[s] = i;
	}
	rc = mc_resample(mc, idx);
	free(w);
	free(idx);
	return rc;
}

/* For each race and draw, every lane's tok/s (its acceptance and step
 * drawn): the lane of highest tok/s wins; each lane's regret grows by how
 * far it falls short of the winner. */
void project_mc_run_races(struct mc *mc)
{
	size_t n = mc->nsamples;
	double tok[PROJECT_MAX_GRID_BUDGETS];
	for (size_t s = 0; s < n; s++)
		for (int r = 0; r < mc->nraces; r++) {
			const long *k = mc->race_case + (size_t)r * mc->nlanes;
			const long *a = mc->race_acc + (size_t)r * mc->nlanes;
			double K = mc->race_c[r] * 1000.0;
			int best = 0;
			for (int b = 0; b < mc->nlanes; b++) {
				tok[b] = K * project_accept_draws(mc->acc, (size_t)a[b])[s] /
					 mc->step[(size_t)k[b] * n + s];
				if (tok[b] > tok[best])
					best = b;
			}
			mc->wins[(size_t)r * mc->nlanes + best]++;
			for (int b = 0; b < mc->nlanes; b++)
				mc->regret[(size_t)r * mc->nlanes + b] += (tok[best] - tok[b]) / (double)n;
		}
}

/* The posterior mean of column u[j] mapped through assumption i's quantile. */
static double mean_value(const struct mc *mc, int i, int j)
{
	const double *u = MC_U(mc, j);
	double sum = 0;
	for (size_t s = 0; s < mc->nsamples; s++)
		sum += calib_dist_quantile(calibrate_asm(mc->c, mc->der, i), u[s]);
	return sum / (double)mc->nsamples;
}

/* The posterior mean of the normal quantile of column u[j]. */
static double mean_z(const struct mc *mc, int j)
{
	const double *u = MC_U(mc, j);
	double sum = 0;
	for (size_t s = 0; s < mc->nsamples; s++)
		sum += gsl_cdf_ugaussian_Pinv(u[s]);
	return sum / (double)mc->nsamples;
}

/* The mean of column u[j]. */
static double mean_col(const struct mc *mc, int j)
{
	const double *u = MC_U(mc, j);
	double sum = 0;
	for (size_t s = 0; s < mc->nsamples; s++)
		sum += u[s];
	return sum / (double)mc->nsamples;
}

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
void project_mc_central(struct mc *mc)
{
	double q[3], z = 0;
	int zg = -1;
	for (int i = 0; i < mc->nasm; i++) {
		const struct dist *d = calibrate_asm(mc->c, mc->der, i);
		int g = mc->group[i];
		if (d->kind == DIST_FIXED || !mc->need[i])
			mc->cval[i] = d->point;
		else if (d->kind == DIST_LOGNORMAL) {
			/* a group's entries are consecutive and share one z */
			if (zg != g)
				z = mean_z(mc, g), zg = g;
			mc->cval[i] = d->median * exp(d->sigma * z);
		} else
			mc->cval[i] = mean_value(mc, i, g);
	}
	/* the knobs: normal z's and uniform weights, all entering linearly on
	 * their own scale (exp(sigma z), the form's geometric mix, the growth) */
	for (int k = 0; k < KN_COUNT; k++)
		mc->ckn[k] = mean_col(mc, mc->ngroups + k);
	project_mc_quantiles3(mc->b16, mc->nsamples, mc->scratch, mc->qw, q);
	mc->b16_central = q[1];
}

/* The geometric mean of a row's acceptance (uniform over [lo, hi]) over the
 * weighted draws: tok/s is proportional to it. */
double project_mc_central_accept(const struct mc *mc, double lo, double hi)
{
	const double *u = MC_U(mc, mc->ngroups + KN_ACCEPT);
	double sum = 0;
	if (!(hi > lo))
		return lo;
	for (size_t s = 0; s < mc->nsamples; s++)
		sum += log(lo + u[s] * (hi - lo));
	return exp(sum / (double)mc->nsamples);
}

/* Puts m at its calibrated point and fills v: every sampled input at its
 * central value (project_mc_central) but the growth, which the b16 anchor
 * identifies: it is solved so that the b16 step is its posterior median.
 * (The anchor ties the growth to the shares and the transfer: their central
 * values alone leave the point off that ridge.) Returns 0 or DDT_EINPUT. */
static int central_set(const struct mc *mc, struct model *m, double *v)
{
	memcpy(v, mc->cval, (size_t)mc->nasm * sizeof *v);
	knobs_set(mc, m, mc->ckn);
	if (mc->b16_sig > 0) {
		m->growth_set = NAN;
		m->b16_step_ms = mc->b16_central;
	}
	int rc = model_set_values(m, v);
	m->b16_step_ms = mc->c->sglang_b16.step_ms;
	return rc;
}

/* Every case's calibrated step: the model at the posterior medians of its
 * inputs. Returns 0 or DDT_EINPUT. */
int project_mc_cal_point(struct mc *mc, struct model *m)
{
	double v[CALIB_MAX_ASM];
	struct model_out o;
	if (central_set(mc, m, v) != 0)
		return err_set(DDT_EINPUT, "the assumptions' posterior medians leave the anchor step "
			       "shorter than its MoE time");
	mc->growth_central = m->growth;
	for (size_t k = 0; k < mc->ncases; k++) {
		model_case_eval(m, &mc->cases[k].k, &o);
		mc->cases[k].cal_step = o.step_ms;
	}
	return 0;
}

/* Keeps the calibrated point's inputs in p (project_central). */
void project_mc_keep_central(struct projection *p, const struct mc *mc, const struct model *m)
{
	struct project_central *k = &p->central;
	k->have = 1;
	k->n = mc->nasm;
	for (int i = 0; i < mc->nasm; i++) {
		calib_assumption_label(&mc->der->xt, i, k->name[i], sizeof k->name[i]);
		k->v[i] = mc->cval[i];
	}
	k->a8_step_ms = mc->c->sglang_b8.step_ms * exp(mc->a8_sig * mc->ckn[KN_A8]);
	k->b16_step_ms = m->growth_used && mc->b16_sig > 0 ? mc->b16_central : NAN;
	k->growth = mc->growth_central;
	k->form = mc->mix_forms ? mc->ckn[KN_FORM] : 0;
	k->moe_scale = exp(mc->fit_sig * mc->ckn[KN_SCALE]);
	k->z_x = mc->ckn[KN_ZX];
}

/* Step quantiles of case k from its draws; point: the row's estimator's own
 * evaluation (seed: every assumption at its seed point; cal: the model at the
 * calibrated central inputs, which lands on the draws' median). */
void project_mc_band(struct mc *mc, size_t k, int cal, struct band *step)
{
	double q[3];
	project_mc_quantiles3(mc->step + k * mc->nsamples, mc->nsamples, mc->scratch, mc->qw, q);
	step->point = cal ? mc->cases[k].cal_step : mc->cases[k].point_step;
	step->p5 = q[0];
	step->p50 = q[1];
	step->p95 = q[2];
}

/* tok/s = C accept / step is decreasing in step: its quantiles mirror. */
struct band project_mc_tok_band(const struct band *step, double C, double accept)
{
	double k = C * accept * 1000.0;
	struct band t = {k / step->point, k / step->p95, k / step->p50, k / step->p5};
	return t;
}

/* The tok/s draws of a row of case k into out[nsamples]: its acceptance
 * the source's lane's draws (lane >= 0), else uniform over [lo, hi] in
 * each draw (lo = hi: fixed). */
void project_mc_row_tok_draws(const struct mc *mc, size_t k, double C, double lo,
			      double hi, long lane, double *out)
{
	const double *st = mc->step + k * mc->nsamples, *ua = MC_U(mc, mc->ngroups + KN_ACCEPT);
	const double *la = lane >= 0 ? project_accept_draws(mc->acc, (size_t)lane) : NULL;
	for (size_t s = 0; s < mc->nsamples; s++)
		out[s] = C * (la ? la[s] : lo + ua[s] * (hi - lo)) * 1000.0 / st[s];
}

/* Share of draws at or below x (0-100); draws equal to it count half. */
double project_mc_pctile_of(const double *a, size_t n, double x)
{
	double eps = 1e-9 * fabs(x), c = 0;
	for (size_t s = 0; s < n; s++)
		c += a[s] < x - eps ? 1 : a[s] <= x + eps ? 0.5 : 0;
	return 100.0 * c / (double)n;
}

/* Puts m at a row's estimator (seed: every assumption at its point, the
 * anchors as given, each transfer range's value at every M; calibrated:
 * every sampled input at its posterior median) and fills v with its
 * values. */
void project_mc_use_estimator(const struct mc *mc, struct model *m, int cal, double *v)
{
	if (cal) {
		memcpy(v, mc->cval, (size_t)mc->nasm * sizeof *v);
		knobs_set(mc, m, mc->ckn);
		m->growth_set = m->growth_used ? mc->growth_central : NAN;
		return;
	}
	memcpy(v, mc->point, (size_t)mc->nasm * sizeof *v);
	m->a8_step_ms = mc->c->sglang_b8.step_ms;
	m->b16_step_ms = mc->c->sglang_b16.step_ms;
	m->growth_set = NAN;
	m->form = 0;
	m->moe_scale = 1;
	m->z_x = 0;
	m->xfer_curve = 0;
	m->tree_kernels = 0;
	m->ar_uncut = 0;
	ctx_law_draw(&mc->der->law_ctx, m, 0, 0);
}

/* The step of case k with group g at quantile q, the rest at the row's
 * estimator (cal: ddt's medians, else the seed's points). */
double project_mc_step_with(const struct mc *mc, struct model *m, size_t k, int g, double q,
			    int cal)
{
	double v[CALIB_MAX_ASM];
	struct model_out o;
	project_mc_use_estimator(mc, m, cal, v);
	for (int i = 0; i < mc->nasm; i++)
		if (mc->group[i] == g) {
			const struct dist *d = calibrate_asm(mc->c, mc->der, i);
			v[i] = d->kind == DIST_FIXED ? d->point : calib_dist_quantile(d, q);
		}
	if (model_set_values(m, v) != 0)
		return NAN;
	model_case_eval(m, &mc->cases[k].k, &o);
	return o.step_ms;
}
