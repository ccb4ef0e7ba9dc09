/* report.h - the documents of one run (report.pdf, report.xlsx, charts/<n>.png,
 * summary.txt under reports/<run-id>/), rendered from the stored run alone. */
#ifndef DDT_REPORT_H
#define DDT_REPORT_H

#include <stddef.h>

#include "tmpl.h"
#include "ydoc.h"

/* What report_render reads from the run folder runs/<run-id>/:
 *
 *   run.yaml         the run record (record.h); required
 *   calibration/     the calibration the run used, every *.yaml; required
 *                    (report_stash_inputs copies it there)
 *   template/        the template the run used, and the one it extends, under
 *                    their own names; required (report_stash_inputs)
 *   template/NAME    which file of template/ is the run's template: the record's
 *                    `template` field + ".yaml"
 *   projection.yaml  bands, tornado, budget grid, MoE fit (project.h); optional:
 *                    without it those parts say so
 *   history and regression verdicts (history.h / regress.h); optional: without
 *                    them the history sections say "no history yet"
 *
 * Nothing outside the run folder is read except fonts/fonts.conf under home,
 * so re-rendering a run gives the same bytes. */
struct report_ctx {
	const char *runs_dir; /* folder holding <run-id>/ */
	const char *home;     /* project folder: fonts/fonts.conf is read from here */
	int quiet;            /* 0: print one line per document written on stdout */
};

/* Renders reports_dir/<run-id>/ {report.pdf, report.xlsx, charts/<n>.png,
 * summary.txt} from runs_dir/<run-id>/, replacing an earlier rendering of the
 * same run as a whole (the folder appears complete or not at all), then points
 * reports_dir/latest at the newest rendered run. Returns 0, DDT_ENOTFOUND
 * (no such run), DDT_EINPUT (a stored file is damaged; the message names it),
 * DDT_EIO or DDT_ENOMEM. */
int report_render(const struct report_ctx *ctx, const char *reports_dir, const char *run_id);

/* Copies the inputs report_render needs into a run folder being written (the
 * nightly's temporary run folder, before it is committed): the calibration
 * (a folder's *.yaml, or one file) into run_dir/calibration/, and the template
 * with the one it extends into run_dir/template/. Returns 0 or DDT_EIO /
 * DDT_ENOMEM / DDT_EINPUT (the template names a parent that is missing). */
int report_stash_inputs(const char *run_dir, const char *calibration, const char *template_path);

/* The newest run id under runs_dir that holds a run.yaml into id (len
 * bytes). Returns 0, or DDT_ENOTFOUND when there is none or the folder
 * cannot be read. */
int report_newest_run(const char *runs_dir, char *id, size_t len);

/* ---- the template's `report:` section ---- */

enum report_section_kind {
	RSEC_SUMMARY,      /* page one: headline with bands, baseline, regression status */
	RSEC_PROJECTIONS,  /* the projection table */
	RSEC_BREAKDOWN,    /* chart: step time per scenario stacked by component */
	RSEC_ACCEPTANCE,   /* chart: tok/s vs acceptance per pipeline, p5-p95 band */
	RSEC_MOE_CURVE,    /* chart: MoE time vs M (log x) */
	RSEC_TORNADO,      /* chart: sensitivity of tok/s to each assumption */
	RSEC_BUDGET,       /* chart: tok/s vs budget per target, best budget marked */
	RSEC_HISTORY,      /* chart: one op's median over the nights */
	RSEC_REGRESSIONS,  /* table: verdict per kernel series */
	RSEC_KERNELS,      /* table: tonight's measurements */
	RSEC_ASSUMPTIONS,  /* table: every input, measured / calibration / assumed */
	RSEC_CAVEATS,      /* list */
	RSEC_COUNT
};

#define REPORT_MAX_SECTIONS 48
#define REPORT_MAX_NAMES 8

struct report_section {
	enum report_section_kind kind;
	char title[96];           /* "" : the kind's default title */
	char op[32];              /* history: the op's name ("moe_w4a16") */
	char variant[32];         /* history: only this variant ("" : every variant) */
	int nscenarios;           /* breakdown/acceptance/tornado: scenarios (0: all) */
	char scenarios[REPORT_MAX_NAMES][48];
};

struct report_spec {
	char title[128];
	char headline[REPORT_MAX_NAMES][48]; /* scenarios page one answers with */
	int nheadline;
	char baseline[48];        /* the scenario that is the measured baseline */
	double chart_width_pt, chart_height_pt; /* a chart's size on its page */
	double png_scale;         /* PNG pixels per point */
	int nsections;
	struct report_section sections[REPORT_MAX_SECTIONS];
};

/* Loads and checks the `report:` section of t (every problem to diag as
 * file:line:col; unknown keys are errors). A scenario named there must exist
 * in t. Returns 0 or DDT_EINPUT; without a `report:` section, DDT_EINPUT. */
int report_spec_load(struct report_spec *spec, const struct tmpl *t, struct ydiag *diag);

const char *report_section_name(enum report_section_kind k);

#endif
