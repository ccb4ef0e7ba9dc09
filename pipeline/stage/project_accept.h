/* project_accept.h - the projection's acceptance source: a drafter trace replayed (its bootstrap interval drawn) or a published curve (its gain's prior drawn), per lane (block, budget). */
#ifndef DDT_PROJECT_ACCEPT_H
#define DDT_PROJECT_ACCEPT_H

#include <stddef.h>
#include <stdint.h>

#include "accept_logs.h"
#include "acceptance.h"
#include "project.h"
#include "ydoc.h"

#define PROJECT_ACCEPT_MAX_BLOCKS 8
/* A log's lane: its tree on a grid of rate draws (z from -3 to 3 of the
 * rates' normal, their interval at +-its level's z) by second-choice
 * shares (over the prior's range), read bilinearly for each draw. */
#define PROJECT_ACCEPT_LOG_NZ 9
#define PROJECT_ACCEPT_LOG_NS 9

/* One acceptance the projection samples: the source at (block, budget). */
struct project_accept_lane {
	int block, budget;
	int rep, bi;              /* trace: its replay and budget index there */
	double ratio;             /* published: the curve at budget / at the reference budget */
	double point;             /* the point value (trace: its mean) */
	double lo, hi;            /* trace: its bootstrap interval; published: point, point */
	double k_limited;         /* trace: share of steps whose tree wanted a rank past the
				   * trace's top-K; > 0: the acceptance is a lower bound */
	double tab[PROJECT_ACCEPT_LOG_NZ][PROJECT_ACCEPT_LOG_NS]; /* log: the tree by (z, s) */
};

/*
 * Typical use (project.c):
 *
 *     project_accept_init(&a, cfg, level_scenario);   // published: the scenario gives the level
 *     project_accept_want(&a, block, budget) ...      // every (block, budget) the projection needs
 *     project_accept_replay(&a);                      // trace: one replay per block
 *     project_accept_lane(&a, block, budget) ...      // lanes, their point values
 *     project_accept_draw(&a, n, u_level, seed);      // after the model's draws
 *     project_accept_free(&a);
 */
struct project_accept {
	const struct project_config *cfg;
	enum accept_kind kind;
	/* trace: the budgets replayed, one replay per block */
	int nbudgets;
	int budgets[ACCEPTANCE_MAX_BUDGETS];
	int nrep;
	int rep_block[PROJECT_ACCEPT_MAX_BLOCKS];
	struct acceptance_result rep[PROJECT_ACCEPT_MAX_BLOCKS];
	double *chol[PROJECT_ACCEPT_MAX_BLOCKS]; /* [nb][nb] lower factor of the means' covariance */
	/* a log (cfg->accept_from): the chain's rates over its intervals and the
	 * prior on the second-choice share it does not hold; no replay */
	int from_log;
	struct accept_logs_result log;
	/* published: the level (the grid scenario's acceptance, uniform over
	 * [level_lo, level_hi]) at level_budget */
	double level_budget, level_lo, level_hi, level_point;
	size_t nlanes, cap;
	struct project_accept_lane *lanes;
	size_t nsamples;
	double *draws;            /* [nlanes][nsamples] */
};

/* The `from:` key of the acceptance source map m (beside `trace:`): the
 * kind of log the trace key names, into cfg->accept_from; another value is
 * a diagnostic at its line and column naming the valid ones. */
void project_accept_load_from(struct project_config *cfg, struct yctx *c, struct ydoc_node *m);

/* Starts a: cfg's source; s (may be NULL for a trace) gives a published
 * curve its level: s's acceptance (a calibrated range: uniform over it) at
 * s's budget. Cannot fail. */
void project_accept_init(struct project_accept *a, const struct project_config *cfg,
			 const struct scenario *s);

/* Asks for (block, budget) before the replay. Returns 0, or DDT_EINPUT
 * when more budgets or blocks are asked for than a replay takes. */
int project_accept_want(struct project_accept *a, int block, int budget);

/* Log (from:): reads it and the prior (calibration/acceptance/logs.yaml).
 * Trace: replays it at every budget wanted, once per block wanted (none
 * wanted: once at its own block and budget 1, for what it says of itself),
 * and factors each covariance. Published: nothing. Returns 0 or the replay's
 * error (DDT_EINPUT names the trace, line and column; DDT_ENOTFOUND,
 * DDT_EIO, DDT_ENOMEM), prefixed with the template key. */
int project_accept_replay(struct project_accept *a);

/* The lane of (block, budget), added when new (a trace: wanted and
 * replayed first). Returns its index, or a negative error code. */
long project_accept_lane(struct project_accept *a, int block, int budget);

/* The source's own curve at lane i: a published curve's value at its
 * budget (unscaled), a trace's mean. */
double project_accept_curve(const struct project_accept *a, size_t i);

/* Sets the published curve's level point (the centre of the level's
 * draws) and every lane's point from it. */
void project_accept_set_level_point(struct project_accept *a, double level);

/* Draws every lane n times: a log's tree at one rate draw (the rates' t
 * interval as a normal, every position together) and one second-choice
 * share (uniform over the prior's range) a draw, shared by the lanes; a
 * trace's means from the bootstrap's normal
 * (its covariance across budgets kept), a published curve's level at
 * u_level[s] of its range (the caller's column, NULL: its point) and its
 * gain's exponent from the shape's prior; each clamped to [1, min(block,
 * budget + 1)]. Own stream from seed. Returns 0 or DDT_ENOMEM. */
int project_accept_draw(struct project_accept *a, size_t n, const double *u_level, uint64_t seed);

/* Lane i's draws. */
static inline const double *project_accept_draws(const struct project_accept *a, size_t i)
{
	return a->draws + i * a->nsamples;
}

/* The source in words, for the grid and the notes. */
void project_accept_describe(const struct project_accept *a, const char *level_name, char *buf,
			     size_t len);

/* The trace's context (tokens before the root) over its steps that record
 * it: their count, with its mean, p5 and p95 in q[3]; 0 when the source is
 * no trace, was not replayed, or records no context. */
long long project_accept_context(const struct project_accept *a, double q[3]);

/* What the projection's reader must know of a trace source, one line each
 * to fn (the projection's notes, which page one lists): budgets used past
 * the trace's top-K (lower bounds), a trace of few requests or steps, and
 * recorded acceptances the replay does not reproduce; of a log, what it
 * does not hold (the tree's shape beyond the chain, per-position rates,
 * an interval over one interval). Nothing for a published curve. Returns
 * the lines given. */
int project_accept_warnings(const struct project_accept *a, void (*fn)(void *arg, const char *line),
			    void *arg);

void project_accept_free(struct project_accept *a);

#endif
