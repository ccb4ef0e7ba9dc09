/* project_grid.c - the budget grid: the scenario it follows, its budgets,
 * cells and races in the Monte Carlo, and its results. */
#include "project_parts.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scenario the grid takes its block, pipeline and acceptance from. */
const struct scenario *project_grid_scenario(const struct project_config *cfg,
					     const struct scenario *scs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(scs[i].name, cfg->grid_scenario))
			return &scs[i];
	for (size_t i = 0; i < n; i++)
		if (scs[i].pipeline == PIPE_NATIVE)
			return &scs[i];
	return n ? &scs[0] : NULL;
}

/* The budgets the grid may add around an optimum, one per gap of cfg's
 * list (gap i lies below budgets[i]; gap n above the last): the geometric
 * midpoint of two neighbours, half a step beyond an end; 0 where no whole
 * number lies strictly between. */
static void grid_gaps(const struct project_config *cfg, int gap[PROJECT_MAX_GRID_BUDGETS + 1])
{
	int n = cfg->nbudgets;
	const int *b = cfg->budgets;
	/* half a step beyond an end: the square root of the end's step */
	double r_lo = n > 1 ? sqrt((double)b[1] / b[0]) : sqrt(2);
	double r_hi = n > 1 ? sqrt((double)b[n - 1] / b[n - 2]) : sqrt(2);
	for (int i = 0; i <= n; i++) {
		double v = i == 0   ? b[0] / r_lo
			   : i == n ? b[n - 1] * r_hi
				    : sqrt((double)b[i - 1] * b[i]);
		long w = lround(v);
		gap[i] = w >= 1 && w <= (1 << 20) && (i == 0 || w > b[i - 1]) && (i == n || w < b[i])
				 ? (int)w
				 : 0;
	}
}

/* Asks acc for every acceptance the grid of scenario s may need: its
 * block at cfg's budgets, every gap's and s's own. Returns 0 or an error. */
int project_grid_want(struct project_accept *acc, const struct project_config *cfg,
		      const struct scenario *s)
{
	int gap[PROJECT_MAX_GRID_BUDGETS + 1], rc = project_accept_want(acc, s->block, s->budget);
	grid_gaps(cfg, gap);
	for (int i = 0; i < cfg->nbudgets && !rc; i++)
		rc = project_accept_want(acc, s->block, cfg->budgets[i]);
	for (int i = 0; i <= cfg->nbudgets && !rc; i++)
		rc = gap[i] ? project_accept_want(acc, s->block, gap[i]) : 0;
	return rc;
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

/* g's budgets: cfg's, and the gaps beside each (target, C)'s point
 * optimum over them (the model at its seed point values, the source's
 * point acceptance). Returns 0 or an error code. */
static int grid_budgets(struct project_grid *g, const struct project_config *cfg,
			const struct calib *c, struct mc *mc, const struct model *m, struct project_accept *acc)
{
	int gap[PROJECT_MAX_GRID_BUDGETS + 1], add[PROJECT_MAX_GRID_BUDGETS + 1] = {0};
	grid_gaps(cfg, gap);
	g->nbudgets = cfg->nbudgets;
	memcpy(g->budgets, cfg->budgets, sizeof g->budgets);
	for (int t = 0; t < g->ntargets; t++)
		for (int ci = 0; ci < g->nconc; ci++) {
			int best = 0;
			double bv = -1;
			for (int b = 0; b < cfg->nbudgets; b++) {
				struct model_in in = {calib_gpu(c, g->targets[t]), g->pipeline, g->block,
						      cfg->budgets[b], g->conc[ci], 1, g->context};
				long k = project_mc_case_of(mc, m, &in, 0), l = project_accept_lane(acc, g->block, cfg->budgets[b]);
				if (k < 0 || l < 0)
					return (int)(k < 0 ? k : l);
				double v = acc->lanes[l].point / mc->cases[k].point_step;
				if (v > bv)
					bv = v, best = b;
			}
			add[best] = add[best + 1] = 1;
		}
	for (int i = 0; i <= cfg->nbudgets; i++)
		if (add[i] && gap[i] && g->nbudgets < PROJECT_MAX_GRID_BUDGETS)
			g->budgets[g->nbudgets++] = gap[i];
	g->nadded = g->nbudgets - cfg->nbudgets;
	qsort(g->budgets, (size_t)g->nbudgets, sizeof *g->budgets, cmp_int);
	return 0;
}

/* Grid set-up: its budgets (grid_budgets), cells, their cases and
 * acceptance lanes. */
static int grid_setup(struct projection *p, const struct project_config *cfg, const struct calib *c,
		      const struct scenario *s, struct mc *mc, const struct model *m,
		      struct project_accept *acc, long **case_of, long **lane_of)
{
	struct project_grid *g = &p->grid;
	int rc;

	snprintf(g->scenario, sizeof g->scenario, "%s", s->name);
	g->pipeline = s->pipeline;
	g->block = s->block;
	g->context = s->context;
	g->ref_budget = s->budget;
	g->ntargets = cfg->ntargets;
	g->nconc = cfg->nconc;
	memcpy(g->targets, cfg->targets, sizeof g->targets);
	memcpy(g->conc, cfg->conc, sizeof g->conc);
	for (int t = 0; t < g->ntargets; t++)
		if (!calib_gpu(c, g->targets[t]))
			return err_set(DDT_EINPUT, "projection.grid: target '%s' is not in the GPU "
				       "catalog", g->targets[t]);
	if ((rc = grid_budgets(g, cfg, c, mc, m, acc)) != 0)
		return rc;
	size_t ncells = (size_t)g->ntargets * g->nconc * g->nbudgets;
	g->cells = calloc(ncells, sizeof *g->cells);
	g->best = calloc((size_t)g->ntargets * g->nconc, sizeof *g->best);
	g->runner = calloc((size_t)g->ntargets * g->nconc, sizeof *g->runner);
	*case_of = calloc(ncells, sizeof **case_of);
	*lane_of = calloc(ncells, sizeof **lane_of);
	if (!g->cells || !g->best || !g->runner || !*case_of || !*lane_of)
		return err_nomem();
	for (int t = 0; t < g->ntargets; t++)
		for (int ci = 0; ci < g->nconc; ci++)
			for (int b = 0; b < g->nbudgets; b++) {
				struct project_cell *cell = PROJECT_CELL(g, t, ci, b);
				struct model_in in = {calib_gpu(c, g->targets[t]), g->pipeline, g->block,
						      g->budgets[b], g->conc[ci], 1, g->context};
				size_t i = (size_t)(cell - g->cells);
				cell->M = (double)g->conc[ci] * (g->budgets[b] + 1);
				(*case_of)[i] = project_mc_case_of(mc, m, &in, 0);
				(*lane_of)[i] = project_accept_lane(acc, g->block, g->budgets[b]);
				if ((*case_of)[i] < 0 || (*lane_of)[i] < 0)
					return (int)((*case_of)[i] < 0 ? (*case_of)[i] : (*lane_of)[i]);
				g->curve_accept[b] = project_accept_curve(acc, (size_t)(*lane_of)[i]);
			}
	return 0;
}

/* The (target, C) race r's best and runner-up: least and next least regret. */
static void grid_choose(struct project_grid *g, int r)
{
	struct project_cell *x = g->cells + (size_t)r * g->nbudgets;
	int best = 0, next = g->nbudgets > 1 ? 1 : 0;
	for (int b = 1; b < g->nbudgets; b++)
		if (x[b].regret < x[best].regret)
			best = b;
	if (next == best)
		next = 0;
	for (int b = 0; b < g->nbudgets; b++)
		if (b != best && x[b].regret < x[next].regret)
			next = b;
	g->best[r] = best;
	g->runner[r] = next;
	x[best].best = 1;
	x[next].runner = next != best;
}

/* Grid results: each cell's bands (its acceptance and step drawn
 * together), how often it wins, its regret; the best budget and the
 * runner-up per (target, C). */
void project_grid_finish(struct projection *p, struct mc *mc, const long *case_of,
			 const long *lane_of, int cal)
{
	struct project_grid *g = &p->grid;
	size_t n = mc->nsamples, ncells = (size_t)g->ntargets * g->nconc * g->nbudgets;
	double *tok = malloc(n * sizeof *tok), q[3];
	for (size_t i = 0; i < ncells; i++) {
		struct project_cell *cell = &g->cells[i];
		const struct project_accept_lane *l = &mc->acc->lanes[lane_of[i]];
		const double *a = project_accept_draws(mc->acc, (size_t)lane_of[i]);
		const double *st = mc->step + (size_t)case_of[i] * n;
		int ci = (int)(i / g->nbudgets % g->nconc);
		double C = g->conc[ci], cap = fmin(g->block, l->budget + 1);
		cell->p_best = (double)mc->wins[i] / (double)n;
		cell->regret = mc->regret[i];
		cell->accept = l->point;
		cell->accept_capped = l->point >= cap - 1e-9;
		cell->accept_lower = l->k_limited > 0;
		project_mc_band(mc, (size_t)case_of[i], cal, &cell->step_ms);
		cell->tok_s = project_mc_tok_band(&cell->step_ms, C, cell->accept);
		if (!tok)
			continue;
		for (size_t s = 0; s < n; s++)
			tok[s] = C * a[s] * 1000.0 / st[s];
		project_mc_quantiles3(tok, n, mc->scratch, mc->qw, q);
		cell->tok_s.p5 = q[0], cell->tok_s.p50 = q[1], cell->tok_s.p95 = q[2];
	}
	free(tok);
	for (int r = 0; r < g->ntargets * g->nconc; r++)
		grid_choose(g, r);
}

/* The grid's cells of scenario gs as cases of mc, and its races: one per
 * (target, C), lanes the budgets, in cell order. *cell_case, *cell_lane
 * and *race_c are the caller's to free, even on error. Returns 0 or an
 * error code. */
int project_grid_races(struct projection *p, const struct project_config *cfg,
		       const struct calib *c, const struct scenario *gs, struct mc *mc,
		       const struct model *m, struct project_accept *acc, long **cell_case,
		       long **cell_lane, int **race_c)
{
	struct project_grid *g = &p->grid;
	int rc;

	p->has_grid = 1;
	if ((rc = grid_setup(p, cfg, c, gs, mc, m, acc, cell_case, cell_lane)) != 0)
		return rc;
	size_t ncells = (size_t)g->ntargets * g->nconc * g->nbudgets;
	mc->nraces = g->ntargets * g->nconc;
	mc->nlanes = g->nbudgets;
	mc->race_case = *cell_case;
	mc->race_acc = *cell_lane;
	if (!(*race_c = malloc((size_t)mc->nraces * sizeof **race_c)) ||
	    !(mc->wins = calloc(ncells, sizeof *mc->wins)) ||
	    !(mc->regret = calloc(ncells, sizeof *mc->regret)))
		return err_nomem();
	for (int r = 0; r < mc->nraces; r++)
		(*race_c)[r] = g->conc[r % g->nconc];
	mc->race_c = *race_c;
	return 0;
}
