/* estimate.h - point estimates for scenarios and their tables (table, CSV, YAML). */
#ifndef DDT_ESTIMATE_H
#define DDT_ESTIMATE_H

#include <stdio.h>

#include "model.h"
#include "project.h"

/* One (scenario, acceptance) evaluated. */
struct estimate_row {
	struct scenario sc;       /* a copy: ad hoc scenarios live nowhere else */
	const struct gpu *target;
	double accept;
	struct model_out out;
	int runnable;             /* 0: the pipeline cannot run this configuration */
	char note[200];           /* why not, or the scenario's note */
};

struct estimate {
	size_t n;
	struct estimate_row *rows;
};

/* Evaluates every acceptance of every scenario with m. Returns 0, or
 * DDT_EINPUT when a scenario names a GPU missing from the catalog, or
 * DDT_ENOMEM. Free with estimate_free. */
int estimate_run(struct estimate *e, const struct model *m, const struct scenario *scs,
		 size_t n);
/* The same rows from a projection of scenarios (each row at its own
 * estimator's point: the seed's, or ddt's median), one per projection row,
 * in its order. Returns 0, DDT_EINPUT (a target missing from c's catalog)
 * or DDT_ENOMEM. */
int estimate_from_projection(struct estimate *e, const struct projection *p,
			     const struct calib *c);
void estimate_free(struct estimate *e);

/* The CSV columns every consumer may rely on, in this order. */
#define ESTIMATE_CSV_HEADER \
	"scenario,target,pipeline,block,budget,concurrency,M,accept,moe_ms,nonmoe_ms,step_ms,tok_s"

/* CSV and YAML of e; with p (the projection of the same scenarios, in the
 * same order) the bands follow: CSV columns tok_s_p5, tok_s_p50, tok_s_p95,
 * step_ms_p5, step_ms_p50, step_ms_p95 after the existing ones, then
 * allreduce_ms, then moe_ms_p5, moe_ms_p50, moe_ms_p95 and estimator. p
 * may be NULL (band fields empty). */
void estimate_write_csv(const struct estimate *e, const struct projection *p, FILE *fp);
void estimate_write_yaml(const struct estimate *e, const struct projection *p, FILE *fp);
/* The human table: components with ms and share, step, tok/s per acceptance,
 * then the inputs marked measured / calibration / assumed / override. */
void estimate_write_table(const struct estimate *e, const struct model *m, FILE *fp);

#endif
