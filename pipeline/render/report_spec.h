/* report_spec.h - the template's `report:` section: the documents' title, headline and sections. */
#ifndef DDT_REPORT_SPEC_H
#define DDT_REPORT_SPEC_H

#include "tmpl.h"
#include "ydoc.h"

enum report_section_kind {
	RSEC_SUMMARY,      /* page one: headline with bands, baseline, regression status */
	RSEC_PROJECTIONS,  /* the projection table */
	RSEC_BREAKDOWN,    /* chart: step time per scenario stacked by component */
	RSEC_ACCEPTANCE,   /* chart: tok/s vs acceptance per pipeline, p5-p95 band */
	RSEC_MOE_CURVE,    /* chart: MoE time vs M (log x) */
	RSEC_TORNADO,      /* chart: sensitivity of tok/s to each assumption */
	RSEC_BUDGET,       /* chart: tok/s vs budget per target, best budget marked */
	RSEC_PARETO,       /* chart: tok/s per GPU vs tok/s per user over concurrency, per target */
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

const char *report_spec_section_name(enum report_section_kind k);

#endif
