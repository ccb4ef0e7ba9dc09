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

/* What an estimate was made from, so that its CSV and YAML say it and
 * `ddt estimate --replay` can make it again: the files with their hashes
 * (calib.hash; "" for a file not used), the command's arguments in a
 * canonical order, and the calibration's --set log (cal->sets). */
struct estimate_source {
	const char *calibration, *calibration_hash;
	const char *template_path, *template_hash;
	const char *moe_reference, *moe_reference_hash; /* --moe-reference; "" when none */
	int nargs;
	const char *const *args;
	const struct calib *cal;
};

/* CSV and YAML of e; with p (the projection of the same scenarios, in the
 * same order) the bands follow: CSV columns tok_s_p5, tok_s_p50, tok_s_p95,
 * step_ms_p5, step_ms_p50, step_ms_p95 after the existing ones, then
 * allreduce_ms, then moe_ms_p5, moe_ms_p50, moe_ms_p95 and estimator. p
 * may be NULL (band fields empty). Then what the table form adds, each in
 * a section of its own after a blank line, with its own header: the
 * tornado (when p has one), the whole grid (when p has one), and src (when
 * not NULL): where the estimate came from and every override. YAML: the
 * same under made_from, overrides, estimates, tornado and grid. */
void estimate_write_csv(const struct estimate *e, const struct projection *p,
			const struct estimate_source *src, FILE *fp);
void estimate_write_yaml(const struct estimate *e, const struct projection *p,
			 const struct estimate_source *src, FILE *fp);
/* The human table: components with ms and share, step, tok/s per acceptance,
 * then p's inputs under their --set keys, marked measured / calibration /
 * assumed / overridden (with the value replaced) / tonight / derived. */
void estimate_write_table(const struct estimate *e, const struct model *m,
			  const struct projection *p, FILE *fp);

#endif
