/* project_parts.h - what the projection's files share besides the Monte
 * Carlo (project_mc.h): a row's tornado and lean, the summary, the MoE
 * fit's report and backtest (project_rows.c), and the budget grid
 * (project_grid.c). Private to the projection's files. */
#ifndef DDT_PROJECT_PARTS_H
#define DDT_PROJECT_PARTS_H

#include "project_mc.h"

#include <string.h>

/* Copies src into dst[len], cut short when it does not fit. */
static inline void copy_str(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* ---- project_rows.c ---- */

/* The tornado of row r (its case k). */
int project_rows_tornado(struct projection *p, const struct mc *mc, struct model *m,
			 const struct project_row *r, size_t k);

/* The lean of row r: which group, alone at its median, moves tok/s most
 * (from the row's own point). */
void project_rows_lean(const struct mc *mc, struct model *m, struct project_row *r, size_t k);

/* The summary of the leans: how far the rows' medians sit from their
 * points, and the row that leans most, as a note. */
void project_rows_lean_text(struct projection *p);

/* The MoE curve's fit in p->fit: its parameters, residuals and plateau,
 * and each point against the curve and left out of it. */
void project_rows_fit_report(struct projection *p, const struct calib *c, const struct model *m);

/* The backtest of the MoE fit beside the rows' bands (p->backtest).
 * Returns 0 or an error code. */
int project_rows_backtest(struct projection *p, const struct calib *c, struct model *m);

/* ---- project_grid.c ---- */

/* Asks acc for every acceptance the grid of scenario s may need: its
 * block at cfg's budgets, every gap's and s's own. Returns 0 or an error. */
int project_grid_want(struct project_accept *acc, const struct project_config *cfg,
		      const struct scenario *s);

/* The scenario the grid takes its block, pipeline and acceptance from. */
const struct scenario *project_grid_scenario(const struct project_config *cfg,
					     const struct scenario *scs, size_t n);

/* Grid results: each cell's bands (its acceptance and step drawn
 * together), how often it wins, its regret; the best budget and the
 * runner-up per (target, C). */
void project_grid_finish(struct projection *p, struct mc *mc, const long *case_of,
			 const long *lane_of, int cal);

/* The grid's cells of scenario gs as cases of mc, and its races: one per
 * (target, C), lanes the budgets, in cell order. *cell_case, *cell_lane
 * and *race_c are the caller's to free, even on error. Returns 0 or an
 * error code. */
int project_grid_races(struct projection *p, const struct project_config *cfg,
		       const struct calib *c, const struct scenario *gs, struct mc *mc,
		       const struct model *m, struct project_accept *acc, long **cell_case,
		       long **cell_lane, int **race_c);

#endif
