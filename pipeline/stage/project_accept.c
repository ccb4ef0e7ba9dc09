/* project_accept.c - the projection's acceptance source: a drafter trace replayed through acceptance.h, a serving engine's log (accept_logs.h), or a published curve with a prior on its gain; point values and draws per (block, budget). */
#include "project_accept.h"

#include "accept_cache.h"
#include "err.h"
#include "paths.h"
#include "rng.h"
#include "spec_log.h"

#include <gsl/gsl_cdf.h>

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The kinds of log a projection takes (a rank record is a trace of its own). */
static const char *const log_kinds[] = {"vllm-log", "vllm-metrics", "sglang-log"};

void project_accept_load_from(struct project_config *cfg, struct yctx *c, struct ydoc_node *m)
{
	const char *from = NULL;
	if (yget_str(c, m, "from", 0, &from) || !from)
		return;
	for (size_t i = 0; i < sizeof log_kinds / sizeof *log_kinds; i++)
		if (!strcmp(from, log_kinds[i])) {
			snprintf(cfg->accept_from, sizeof cfg->accept_from, "%s", from);
			return;
		}
	struct ydoc_node *n = ydoc_get(m, "from");
	ydiag_add(c->diag, c->file, n->line, n->col,
		  "from: expected vllm-log, vllm-metrics or sglang-log (the kind of log trace names; "
		  "none: a drafter trace), got '%s'", from);
}

void project_accept_init(struct project_accept *a, const struct project_config *cfg,
			 const struct scenario *s)
{
	memset(a, 0, sizeof *a);
	a->cfg = cfg;
	a->kind = cfg->accept_kind;
	a->from_log = a->kind == ACCEPT_TRACE && cfg->accept_from[0];
	a->level_budget = a->level_lo = a->level_hi = a->level_point = NAN;
	if (!s || s->naccept < 1)
		return;
	int range = s->estimator == EST_CALIBRATED && s->naccept > 1;
	a->level_budget = s->budget;
	a->level_lo = a->level_hi = s->accept[(s->naccept - 1) / 2];
	for (int i = 0; range && i < s->naccept; i++) {
		a->level_lo = i ? fmin(a->level_lo, s->accept[i]) : s->accept[i];
		a->level_hi = i ? fmax(a->level_hi, s->accept[i]) : s->accept[i];
	}
	a->level_point = (a->level_lo + a->level_hi) / 2;
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

int project_accept_want(struct project_accept *a, int block, int budget)
{
	int have = 0;
	if (a->kind != ACCEPT_TRACE || a->from_log) /* a log's lanes need no replay */
		return 0;
	for (int i = 0; i < a->nbudgets; i++)
		have |= a->budgets[i] == budget;
	if (!have) {
		if (a->nbudgets == ACCEPTANCE_MAX_BUDGETS || budget > ACCEPTANCE_MAX_BUDGET)
			return err_set(DDT_EINPUT, "projection.acceptance_curve.trace: budget %d is "
				       "beyond a replay (at most %d budgets up to %d)", budget,
				       ACCEPTANCE_MAX_BUDGETS, ACCEPTANCE_MAX_BUDGET);
		a->budgets[a->nbudgets++] = budget;
		qsort(a->budgets, (size_t)a->nbudgets, sizeof *a->budgets, cmp_int);
	}
	for (int i = 0; i < a->nrep; i++)
		if (a->rep_block[i] == block)
			return 0;
	if (a->nrep == PROJECT_ACCEPT_MAX_BLOCKS)
		return err_set(DDT_EINPUT, "projection.acceptance_curve.trace: more than %d blocks",
			       PROJECT_ACCEPT_MAX_BLOCKS);
	a->rep_block[a->nrep++] = block;
	return 0;
}

/* The lower factor L of the n x n covariance c (L L' = c), a semi-definite
 * one too: a pivot at rounding level makes its column zero (two budgets
 * whose means move together exactly). Returns L (malloc'd) or NULL. */
static double *chol(const double *c, int n)
{
	double *L = calloc((size_t)n * n, sizeof *L);
	if (!L)
		return NULL;
	for (int j = 0; j < n; j++) {
		double d = c[j * n + j];
		for (int k = 0; k < j; k++)
			d -= L[j * n + k] * L[j * n + k];
		if (!(d > 1e-12 * c[j * n + j]) || !(d > 0))
			continue;
		L[j * n + j] = sqrt(d);
		for (int i = j + 1; i < n; i++) {
			double v = c[i * n + j];
			for (int k = 0; k < j; k++)
				v -= L[i * n + k] * L[j * n + k];
			L[i * n + j] = v / L[j * n + j];
		}
	}
	return L;
}

/* A log source: its intervals' rates and the prior. Returns 0 or the
 * reader's error, prefixed with the template key. */
static int log_load(struct project_accept *a)
{
	struct spec_log l;
	struct accept_logs_prior prior;
	struct acceptance_opts o;
	struct paths p;
	enum spec_log_kind kind;
	char path[PATH_MAX + 32], why[512];
	int rc;
	paths_init(&p, "default");
	snprintf(path, sizeof path, "%s/acceptance/logs.yaml", p.calibration);
	acceptance_opts_default(&o);
	o.nbudgets = 1; /* the rates and their interval; the lanes make the trees */
	o.budgets[0] = 1;
	memset(&l, 0, sizeof l);
	if (!(rc = spec_log_kind_parse(&kind, a->cfg->accept_from)) &&
	    !(rc = accept_logs_prior_load(&prior, path)) &&
	    !(rc = spec_log_read(&l, a->cfg->accept_trace, kind)))
		rc = accept_logs_estimate(&a->log, a->cfg->accept_trace, &l, &o, &prior);
	spec_log_free(&l);
	if (!rc)
		return 0;
	snprintf(why, sizeof why, "%s", err_msg());
	return err_set(rc, "projection.acceptance_curve.trace (from: %s): %s", a->cfg->accept_from,
		       why);
}

int project_accept_replay(struct project_accept *a)
{
	struct acceptance_opts o;
	if (a->kind != ACCEPT_TRACE)
		return 0;
	if (a->from_log)
		return log_load(a);
	/* nothing asked of it: one replay all the same, at the trace's block and
	 * one budget, for what the trace says of itself (its steps, block, top-K
	 * and context: project_accept_context) */
	if (!a->nrep) {
		a->rep_block[a->nrep++] = 0;
		if (!a->nbudgets)
			a->budgets[a->nbudgets++] = 1;
	}
	char dir[4096];
	accept_cache_dir(dir, sizeof dir); /* a trace is replayed once, then read back by its hash */
	acceptance_opts_default(&o);
	o.nbudgets = a->nbudgets;
	memcpy(o.budgets, a->budgets, sizeof o.budgets);
	for (int i = 0; i < a->nrep; i++) {
		o.block = a->rep_block[i];
		int hit, rc = accept_cache_replay(&a->rep[i], a->cfg->accept_trace, &o, dir, &hit);
		if (rc) {
			char why[512];
			snprintf(why, sizeof why, "%s", err_msg()); /* err_set writes where it reads */
			return err_set(rc, "projection.acceptance_curve.trace: %s", why);
		}
		if (!(a->chol[i] = chol(a->rep[i].cov, a->rep[i].nb)))
			return err_nomem();
	}
	return 0;
}

/* The published curve at budget B: linear in log2(B) between its points;
 * beyond them, the least-squares slope per doubling over all points. */
static double curve_at(const struct project_config *cfg, double B)
{
	const struct project_curve_point *pt = cfg->curve;
	int n = cfg->ncurve;
	double lb = log2(B);
	if (B >= pt[0].budget && B <= pt[n - 1].budget) {
		int i = 1;
		while (i < n - 1 && B > pt[i].budget)
			i++;
		double x0 = log2(pt[i - 1].budget), x1 = log2(pt[i].budget);
		return pt[i - 1].accept + (lb - x0) * (pt[i].accept - pt[i - 1].accept) / (x1 - x0);
	}
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (int i = 0; i < n; i++) {
		double x = log2(pt[i].budget);
		sx += x, sy += pt[i].accept, sxx += x * x, sxy += x * pt[i].accept;
	}
	double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
	int end = B < pt[0].budget ? 0 : n - 1;
	return pt[end].accept + slope * (lb - log2(pt[end].budget));
}

/* v within what a tree of budget B in a block can accept: the root at
 * least, B + 1 nodes and the block at most. */
static double clamp_accept(double v, int block, int budget)
{
	double cap = budget + 1 < block ? budget + 1 : block;
	return v > cap ? cap : v < 1 ? 1 : v;
}

/* Lane l's published value at level lv and exponent e. */
static double published_at(const struct project_accept_lane *l, double lv, double e)
{
	/* a curve extended below its first point may fall to zero: the root alone */
	return clamp_accept(l->ratio > 0 ? lv * pow(l->ratio, e) : 1, l->block, l->budget);
}

/* The log's rates t of their half-interval from the point (t = z / the
 * level's z: t = +-1 is the interval's edge), within [0, 1]. */
static void log_rates_at(const struct accept_logs_result *g, double t, int k, double *rate)
{
	for (int d = 0; d < k; d++) {
		double v = g->rate[d] + t * (t < 0 ? g->rate[d] - g->rate_lo[d] : g->rate_hi[d] - g->rate[d]);
		rate[d] = v < 0 ? 0 : v > 1 ? 1 : v;
	}
}

/* A log's lane: the tree from the first block - 1 positions' rates at the
 * prior's middle share, the band as ddt acceptance --from draws it (the
 * rates' interval by the share's range), the table the draws read.
 * Returns 0, DDT_EINPUT (a block the log does not reach) or DDT_ENOMEM. */
static int log_lane(struct project_accept *a, struct project_accept_lane *l)
{
	const struct accept_logs_result *g = &a->log;
	const struct accept_logs_prior *pr = &g->prior;
	int k = l->block - 1, B = l->budget;
	double rate[SPEC_LOG_MAX_K], s_mid = (pr->s_lo + pr->s_hi) / 2;
	if (k < 1 || k > g->k)
		return err_set(DDT_EINPUT, "projection.acceptance_curve.trace: the %s %s drafts %d "
			       "positions (block %d); block %d is beyond it", a->cfg->accept_from,
			       a->cfg->accept_trace, g->k, g->k + 1, l->block);
	double zq = gsl_cdf_ugaussian_Pinv((1 + g->level) / 2);
	for (int i = 0; i < PROJECT_ACCEPT_LOG_NZ; i++) {
		log_rates_at(g, (-3 + 6.0 * i / (PROJECT_ACCEPT_LOG_NZ - 1)) / zq, k, rate);
		for (int j = 0; j < PROJECT_ACCEPT_LOG_NS; j++) {
			double s = pr->s_lo + (pr->s_hi - pr->s_lo) * j / (PROJECT_ACCEPT_LOG_NS - 1);
			if (isnan(l->tab[i][j] = accept_logs_tree(rate, k, s, B)))
				return err_nomem();
		}
	}
	l->point = l->lo = l->hi = accept_logs_tree(g->rate, k, s_mid, B);
	for (int i = -1; i <= 1; i++) {
		log_rates_at(g, i, k, rate);
		for (int j = 0; j < 3; j++) {
			double v = accept_logs_tree(rate, k, j == 0 ? pr->s_lo : j == 1 ? s_mid : pr->s_hi, B);
			l->lo = fmin(l->lo, v);
			l->hi = fmax(l->hi, v);
		}
	}
	return isnan(l->point) || isnan(l->lo) ? err_nomem() : 0;
}

/* Fills lane l's source figures. Returns 0 or DDT_EINPUT. */
static int lane_fill(struct project_accept *a, struct project_accept_lane *l)
{
	if (a->from_log)
		return log_lane(a, l);
	if (a->kind == ACCEPT_PUBLISHED) {
		l->ratio = curve_at(a->cfg, l->budget) / curve_at(a->cfg, a->level_budget);
		l->point = l->lo = l->hi =
			published_at(l, a->level_point, a->cfg->accept_shape.point);
		return 0;
	}
	for (l->rep = 0; l->rep < a->nrep && a->rep_block[l->rep] != l->block; l->rep++)
		;
	const struct acceptance_result *r = l->rep < a->nrep ? &a->rep[l->rep] : NULL;
	for (l->bi = 0; r && l->bi < r->nb && r->b[l->bi].budget != l->budget; l->bi++)
		;
	if (!r || l->bi == r->nb)
		return err_set(DDT_EINPUT, "projection.acceptance_curve.trace: block %d budget %d "
			       "was not replayed", l->block, l->budget);
	l->point = r->b[l->bi].mean;
	l->lo = r->b[l->bi].lo;
	l->hi = r->b[l->bi].hi;
	l->k_limited = r->b[l->bi].k_limited;
	return 0;
}

long project_accept_lane(struct project_accept *a, int block, int budget)
{
	for (size_t i = 0; i < a->nlanes; i++)
		if (a->lanes[i].block == block && a->lanes[i].budget == budget)
			return (long)i;
	if (a->kind == ACCEPT_PUBLISHED && !(a->level_budget > 0))
		return err_set(DDT_EINPUT, "the published acceptance curve takes its level from a "
			       "scenario's acceptance: type it, or name a trace");
	if (a->nlanes == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 32;
		struct project_accept_lane *n = realloc(a->lanes, cap * sizeof *n);
		if (!n)
			return err_nomem();
		a->lanes = n;
		a->cap = cap;
	}
	struct project_accept_lane *l = &a->lanes[a->nlanes];
	memset(l, 0, sizeof *l);
	l->block = block;
	l->budget = budget;
	int rc = lane_fill(a, l);
	return rc ? rc : (long)a->nlanes++;
}

double project_accept_curve(const struct project_accept *a, size_t i)
{
	const struct project_accept_lane *l = &a->lanes[i];
	return a->kind == ACCEPT_PUBLISHED ? curve_at(a->cfg, l->budget) : l->point;
}

void project_accept_set_level_point(struct project_accept *a, double level)
{
	if (a->kind != ACCEPT_PUBLISHED)
		return;
	a->level_point = level;
	for (size_t i = 0; i < a->nlanes; i++) {
		struct project_accept_lane *l = &a->lanes[i];
		l->point = l->lo = l->hi = published_at(l, level, a->cfg->accept_shape.point);
	}
}

/* One draw s of every trace lane: per replay, its means moved by L z. */
static void draw_trace(struct project_accept *a, struct rng *r, size_t s)
{
	double z[ACCEPTANCE_MAX_BUDGETS], x[PROJECT_ACCEPT_MAX_BLOCKS][ACCEPTANCE_MAX_BUDGETS];
	for (int i = 0; i < a->nrep; i++) {
		int n = a->rep[i].nb;
		const double *L = a->chol[i];
		for (int j = 0; j < n; j++)
			z[j] = gsl_cdf_ugaussian_Pinv(rng_open01(r));
		for (int j = 0; j < n; j++) {
			double v = a->rep[i].b[j].mean;
			for (int k = 0; k <= j; k++)
				v += L[j * n + k] * z[k];
			x[i][j] = v;
		}
	}
	for (size_t l = 0; l < a->nlanes; l++) {
		const struct project_accept_lane *ln = &a->lanes[l];
		a->draws[l * a->nsamples + s] = clamp_accept(x[ln->rep][ln->bi], ln->block, ln->budget);
	}
}

/* One draw s of every log lane: one rate draw z and one share u for all. */
static void draw_log(struct project_accept *a, struct rng *r, size_t s)
{
	double z = gsl_cdf_ugaussian_Pinv(rng_open01(r)), u = rng_open01(r);
	double fz = (fmin(3, fmax(-3, z)) + 3) / 6 * (PROJECT_ACCEPT_LOG_NZ - 1);
	double fs = u * (PROJECT_ACCEPT_LOG_NS - 1);
	int iz = fz >= PROJECT_ACCEPT_LOG_NZ - 1 ? PROJECT_ACCEPT_LOG_NZ - 2 : (int)fz;
	int is = fs >= PROJECT_ACCEPT_LOG_NS - 1 ? PROJECT_ACCEPT_LOG_NS - 2 : (int)fs;
	double wz = fz - iz, ws = fs - is;
	for (size_t l = 0; l < a->nlanes; l++) {
		const struct project_accept_lane *ln = &a->lanes[l];
		double v = (1 - wz) * ((1 - ws) * ln->tab[iz][is] + ws * ln->tab[iz][is + 1]) +
			   wz * ((1 - ws) * ln->tab[iz + 1][is] + ws * ln->tab[iz + 1][is + 1]);
		a->draws[l * a->nsamples + s] = clamp_accept(v, ln->block, ln->budget);
	}
}

int project_accept_draw(struct project_accept *a, size_t n, const double *u_level, uint64_t seed)
{
	struct rng r;
	free(a->draws);
	a->nsamples = n;
	if (!(a->draws = malloc((a->nlanes ? a->nlanes : 1) * n * sizeof *a->draws)))
		return err_nomem();
	rng_seed(&r, seed ^ 0x9e3779b97f4a7c15u);
	for (size_t s = 0; s < n; s++) {
		if (a->kind == ACCEPT_TRACE) {
			(a->from_log ? draw_log : draw_trace)(a, &r, s);
			continue;
		}
		double lv = u_level ? a->level_lo + u_level[s] * (a->level_hi - a->level_lo)
				    : a->level_point;
		double e = calib_dist_quantile(&a->cfg->accept_shape, rng_open01(&r));
		for (size_t l = 0; l < a->nlanes; l++)
			a->draws[l * n + s] = published_at(&a->lanes[l], lv, e);
	}
	return 0;
}

void project_accept_describe(const struct project_accept *a, const char *level_name, char *buf,
			     size_t len)
{
	const struct project_config *cfg = a->cfg;
	if (a->from_log) {
		const struct accept_logs_result *g = &a->log;
		snprintf(buf, len, "%s %s (%zu interval%s, %d drafted positions): the tree per budget "
			 "from the chain's per-position rates%s; the share of misses on the drafter's "
			 "second choice, which no log holds, drawn uniform over %.2f-%.2f, and the rates "
			 "over their %.0f%% t interval across intervals", cfg->accept_from,
			 cfg->accept_trace, g->n, g->n == 1 ? "" : "s", g->k,
			 g->rates_logged ? "" : " (one rate at every position, solved from the mean)",
			 g->prior.s_lo, g->prior.s_hi, 100 * g->level);
		return;
	}
	if (a->kind == ACCEPT_TRACE) {
		const struct acceptance_result *r = a->nrep ? &a->rep[0] : NULL;
		snprintf(buf, len, "trace %s (%lld steps, block %d, top-%d..%d): the engine's heap "
			 "and walk replayed at each budget, the bootstrap interval of the means "
			 "(%d resamples, their covariance across budgets) sampled",
			 cfg->accept_trace, r ? r->steps : 0LL, r ? r->trace_block : 0,
			 r ? r->k_min : 0, r ? r->k_max : 0, r ? r->resamples : 0);
		return;
	}
	const struct dist *d = &cfg->accept_shape;
	char range[64];
	if (!(a->level_budget > 0)) {
		snprintf(buf, len, "published curve (%s), the grid's source (no grid computed here); "
			 "every scenario's acceptance is typed", cfg->curve_label);
		return;
	}
	if (a->level_hi > a->level_lo)
		snprintf(range, sizeof range, "%g-%g (uniform)", a->level_lo, a->level_hi);
	else
		snprintf(range, sizeof range, "%g", a->level_lo);
	snprintf(buf, len, "published curve (%s), level from %s's acceptance %s at B=%g, its gain "
		 "over budget to the power of a %s exponent (point %g, p5-p95 %.2g-%.2g)",
		 cfg->curve_label, level_name, range, a->level_budget, calib_dist_kind_name(d->kind),
		 d->point, calib_dist_quantile(d, 0.05), calib_dist_quantile(d, 0.95));
}

long long project_accept_context(const struct project_accept *a, double q[3])
{
	const struct acceptance_result *r = a->kind == ACCEPT_TRACE && a->nrep ? &a->rep[0] : NULL;
	if (!r || !r->context_steps)
		return 0;
	q[0] = r->context_mean;
	q[1] = r->context_q[0];
	q[2] = r->context_q[4];
	return r->context_steps;
}

/* The budgets of the lanes past the trace's top-K, into buf. Returns their count. */
static int lower_bound_budgets(const struct project_accept *a, char *buf, size_t len, double *worst)
{
	int n = 0, seen[ACCEPTANCE_MAX_BUDGETS] = {0}, nseen = 0;
	size_t off = 0;
	*worst = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < a->nlanes; i++) {
		const struct project_accept_lane *l = &a->lanes[i];
		int dup = 0;
		for (int k = 0; k < nseen; k++)
			dup |= seen[k] == l->budget;
		if (!(l->k_limited > 0) || dup || nseen == ACCEPTANCE_MAX_BUDGETS)
			continue;
		seen[nseen++] = l->budget;
		*worst = fmax(*worst, l->k_limited);
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%d", n ? ", " : "", l->budget);
		n++;
	}
	return n;
}

/* A log's lines for project_accept_warnings. */
static int log_warnings(const struct project_accept *a, void (*fn)(void *arg, const char *line),
			void *arg)
{
	const struct accept_logs_result *g = &a->log;
	char line[1400];
	int k = 0;
	snprintf(line, sizeof line, "acceptance from the %s %s: a log holds the engine's chain, not "
		 "the tree: above budget 1 the tree's acceptance rests on how often the target took "
		 "the drafter's second choice when it missed the first, which no log records (drawn "
		 "over %.2f-%.2f, calibration/acceptance/logs.yaml); the band holds that doubt, a "
		 "drafter trace would remove it", a->cfg->accept_from, a->cfg->accept_trace,
		 g->prior.s_lo, g->prior.s_hi);
	fn(arg, line), k++;
	if (!g->rates_logged) {
		snprintf(line, sizeof line, "acceptance from the %s %s: no per-position rates logged: "
			 "one rate at every position, solved from the mean acceptance %.3f",
			 a->cfg->accept_from, a->cfg->accept_trace, g->mean);
		fn(arg, line), k++;
	}
	if (g->n < 2) {
		snprintf(line, sizeof line, "acceptance from the %s %s: one interval, nothing to spread "
			 "over: its rates are drawn over all they can be (0 to 1)", a->cfg->accept_from,
			 a->cfg->accept_trace);
		fn(arg, line), k++;
	}
	return k;
}

int project_accept_warnings(const struct project_accept *a, void (*fn)(void *arg, const char *line),
			    void *arg)
{
	if (a->from_log)
		return log_warnings(a, fn, arg);
	const struct acceptance_result *r = a->kind == ACCEPT_TRACE && a->nrep ? &a->rep[0] : NULL;
	char line[1400], budgets[200];
	double worst;
	int k = 0;
	if (!r)
		return 0;
	int nlb = lower_bound_budgets(a, budgets, sizeof budgets, &worst);
	if (nlb) {
		snprintf(line, sizeof line, "acceptance trace %s logs top-%d: at budget%s %s the tree "
			 "wanted ranks past it (up to %.0f%% of steps), so its acceptance there (rows and "
			 "grid cells alike) is a lower bound", a->cfg->accept_trace, r->k_min,
			 nlb > 1 ? "s" : "", budgets, 100 * worst);
		fn(arg, line), k++;
	}
	if (r->requests < ACCEPTANCE_FEW_REQUESTS || r->steps < ACCEPTANCE_FEW_STEPS) {
		snprintf(line, sizeof line, "acceptance trace %s is small: %lld steps in %lld requests "
			 "(under %d requests or %d steps): its interval rests on little", a->cfg->accept_trace,
			 r->steps, r->requests, ACCEPTANCE_FEW_REQUESTS, ACCEPTANCE_FEW_STEPS);
		fn(arg, line), k++;
	}
	if (r->engine_steps && r->engine_agree < r->engine_steps) {
		snprintf(line, sizeof line, "acceptance trace %s: the replay disagrees with the engine's "
			 "recorded acceptance on %lld of %lld steps (first at line %lld; mean %.3f recorded, "
			 "%.3f replayed): the trace and the engine differ", a->cfg->accept_trace,
			 r->engine_steps - r->engine_agree, r->engine_steps, r->first_disagree,
			 r->engine_mean, r->replay_mean);
		fn(arg, line), k++;
	}
	return k;
}

void project_accept_free(struct project_accept *a)
{
	for (int i = 0; i < a->nrep; i++) {
		acceptance_free(&a->rep[i]);
		free(a->chol[i]);
	}
	accept_logs_free(&a->log);
	free(a->lanes);
	free(a->draws);
	memset(a, 0, sizeof *a);
}
