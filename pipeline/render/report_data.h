/* report_data.h - everything one run's documents are made from, loaded once from
 * the run folder, and the formats every document shares. The documents only
 * read it: what the stages computed (the derived calibration, the model, the
 * estimates, the verdicts and their lines) is filled in by the loader above
 * them (report_load.h), so no document calls a stage. */
#ifndef DDT_REPORT_DATA_H
#define DDT_REPORT_DATA_H

#include <limits.h>
#include <stdio.h>
#include <time.h>

#include "calib.h"
#include "estimate.h"
#include "history.h"
#include "model.h"
#include "project.h"
#include "record.h"
#include "regress.h"
#include "report_spec.h"
#include "sources.h"
#include "tmpl.h"
#include "whatif.h"

/* The night's verdicts as lines, formatted by the stage that judged them
 * (regress.h); every array NULL when there is no night. */
struct report_night_text {
	char **entry;       /* per entry: its line (regress_entry_line) */
	size_t *group;      /* per alert: how many alerts from it on share its id
			     * (regress_alert_group) */
	char **group_line;  /* per alert: the line of the group it starts, with the
			     * commit link (regress_alert_group_line) */
	char **series_line; /* per alert: its series' line (regress_alert_series_line) */
	char **impact;      /* per impact: its line (regress_impact_line) */
};

/* The MoE chart's curves: the model evaluated on a log grid of the verify
 * width M up to REPORT_CURVE_MMAX. */
#define REPORT_CURVE_STEPS 121
#define REPORT_CURVE_MMAX 1000.0
struct report_moe_curve {
	double xs[REPORT_CURVE_STEPS];
	double ref[REPORT_CURVE_STEPS]; /* the reference curve (model_moe_ref_ms) */
	double fit[REPORT_CURVE_STEPS]; /* the fitted physical curve (NaN without have_fit) */
	double tgt[REPORT_CURVE_STEPS]; /* projected on target (NaN without one) */
	int have_fit;                   /* the projection's fit is a physical curve */
	const struct gpu *fitg;         /* the GPU it was fitted on (have_fit) */
	const struct gpu *target;       /* the headline's target GPU, else the b300; may be NULL */
	double *row_ms;                 /* per estimate row: target's MoE time at its M */
};

struct report_data {
	char run_dir[PATH_MAX];
	struct run_record rec;
	struct calib cal;          /* the calibration stored with the run */
	struct calibration der;    /* what the calibrate stage derives from it */
	struct tmpl tmpl;          /* the template stored with the run */
	struct sources sources;    /* calibration/SOURCES.md stored with it (n 0: none) */
	struct report_spec spec;
	struct model model;        /* point values of cal */
	struct estimate est;       /* every scenario of tmpl, point estimates */
	int have_proj;             /* projection.yaml was stored */
	struct projection proj;
	int have_night;            /* verdicts.yaml was stored */
	struct regress_night night;
	int have_rconf;            /* the template has a `regress:` section */
	struct regress_conf rconf;
	struct history hist;       /* the runs up to this one, analysed (may be empty) */
	int hist_borrowed;         /* hist is the caller's: not freed here */
	long hist_run;             /* this run's index in hist, or -1 */
	int have_prev;             /* the run before this one stored a projection */
	char prev_id[96];          /* that run's id ("" none) */
	struct projection prev;    /* its projection.yaml (have_prev) */
	/* what the loader derived for the documents from the above */
	const struct project_row **row_proj; /* per estimate row: its projection row or NULL */
	char (*input_basis)[48];   /* per projection input: its basis (project_input_basis) */
	const struct gpu **device_gpu; /* per record device: its catalog GPU or NULL */
	struct report_night_text ntext; /* night's lines (have_night) */
	struct report_moe_curve moe;
	struct whatif wi;           /* the What-if sheet's values (wi_rc 0) */
	int wi_rc;                  /* whatif_make's error, reported with report.xlsx */
	time_t created;            /* the run's time: every document's date */
	char created_iso[24];      /* 2025-12-02T15:42:00Z */
	char date_text[40];        /* 2025-12-02 15:42 UTC */
};

/* Point estimate and band of (scenario, acceptance): from the stored
 * projection when it has the row (it may be recalibrated from tonight's GPU
 * measurements), else the stored calibration's model with NaN bands. */
struct report_figure {
	const struct estimate_row *est; /* never NULL: the scenario, its inputs */
	const struct project_row *proj; /* NULL without a projection row */
	double M, ms[COMP_COUNT], moe_ms, nonmoe_ms;
	double tok_s, tok_p5, tok_p50, tok_p95;
	double step_ms, step_p5, step_p50, step_p95;
};
/* The figure of estimate row i. Cannot fail. */
void report_figure(const struct report_data *d, size_t i, struct report_figure *f);
/* Index of the first estimate row of a scenario, or -1. */
long report_scenario_row(const struct report_data *d, const char *scenario);

/* One line: the night's regression status ("no history yet", "2 regressions:
 * ...", "no regressions: 14 series ok"). */
void report_regress_status(const struct report_data *d, char *buf, size_t len);

/* The measured baseline the headline is compared with ("x1.42 vs the 303
 * tok/s baseline"): the b8 anchor's tok/s (C x accept / step when the
 * calibration gives only the step). */
double report_baseline_tok(const struct report_data *d);

/* The change of scenario's median tok/s since the previous run's stored
 * projection, as "+2.4% (429.6 -> 440.0 tok/s) since run ID: inputs moved:
 * native_cut 0.4 -> 0.35, ..." naming the inputs that moved most, or
 * "unchanged (...) since run ID: the same inputs". *prev_tok gets the previous median
 * (NaN: none). Returns 0 when there is no previous projection with that
 * scenario (buf then says so). */
int report_prev_change(const struct report_data *d, const char *scenario, double *prev_tok,
		       char *buf, size_t len);

/* A line of plain UTF-8 text handed to a document writer (not escaped). */
typedef void (*report_line_fn)(void *arg, const char *line);

/* Tonight's caveats, most pressing first, each one line to fn: kernels that
 * failed validation; regressions, drifts and suspects with their cost in
 * projected tok/s and their commit range; the projection's notes (a CPU run,
 * extrapolation beyond the measured M); the anchor's weighting (a conflict
 * named as such); headline scenarios that cannot run; a clamped growth.
 * Page one and summary.txt both print these. Returns how many. */
int report_caveats(const struct report_data *d, report_line_fn fn, void *arg);

/* Tonight's measured rows for page one: per op, the row nearest the first
 * headline scenario's verify width M (an ok row before any other), in the
 * record's order. Writes up to max row indices to idx; returns how many. */
size_t report_tonight_rows(const struct report_data *d, size_t *idx, size_t max);
/* "Fixture CPU (cpu, x86_64, 2 cores, 16 GB)" of device i, into buf. */
char *report_device_text(const struct report_data *d, size_t i, char *buf, size_t len);

/* The seed estimator's figure beside a projected row: a seed row's own point
 * estimate, a calibrated row's other_tok_s; *pctile where it falls in the
 * row's band (NaN when unknown). NaN without a projection row. */
double report_seed_tok(const struct report_figure *f, double *pctile);

/* One line on how far the bands can be trusted: the cross-GPU backtest's
 * coverage and error, and the pair the headline's MoE takes. Returns 0 when
 * the stored projection holds no backtest (buf then says so). */
int report_coverage_text(const struct report_data *d, char *buf, size_t len);

/* What a kernel row's "% of peak" is a share of. */
enum report_bw_basis {
	REPORT_BW_NONE,      /* no bytes, or no bandwidth to compare with */
	REPORT_BW_DATASHEET, /* the catalog GPU's datasheet memory bandwidth (gpus.yaml) */
	REPORT_BW_COPY,      /* the copy bandwidth measured on the device tonight */
};
/* Row w's achieved bandwidth as a percentage of its device's: the datasheet
 * figure of the catalog GPU the device is, else tonight's measured copy
 * bandwidth. NaN (basis NONE) when the row moved no measured bytes. */
double report_row_pct(const struct report_data *d, const struct rec_row *w,
		      enum report_bw_basis *basis);
/* Its cell: "57%", "0.4%"; above 100%, "413% cache" (the working set ran from cache,
 * not from device memory); "-" when NaN. */
void report_fmt_pct(char *buf, size_t len, double pct);
/* The column title for the rows' bases ("% of datasheet BW", "% of copy BW
 * measured tonight", or "% of BW (see note)" when they mix) and a note
 * naming each basis, with the cache remark when a share exceeds 100%. */
void report_pct_legend(const struct report_data *d, char *title, size_t tlen, char *note,
		       size_t nlen);

/* One row of the Assumptions table and sheet: the key --set takes, the
 * value, its basis ("measured", "overridden (was 20.94)") and its source
 * text, which cites calibration/SOURCES.md ids in brackets. */
typedef void (*report_input_fn)(void *arg, const char *key, double value, const char *basis,
				const char *source);
/* Calls fn for every input, in the documents' order: the stored
 * projection's inputs, else the calibration's anchors, MoE reference points
 * and assumptions. */
void report_each_input(const struct report_data *d, report_input_fn fn, void *arg);

/* The SOURCES.md entries the inputs cite, each once, in order of first
 * citation; ids the stored SOURCES.md lacks are left out. Returns how many
 * were written to v (at most max). */
size_t report_cited_sources(const struct report_data *d, const struct source **v, size_t max);

/* Formats used by every document. */
void report_fmt_tok(char *buf, size_t len, double tok_s);   /* "462.9" or "-" */
void report_fmt_ms(char *buf, size_t len, double ms);       /* "9.506" or "-" */
/* A time in µs with the digits that matter: "96451", "38.9", "2.07", "-". */
void report_fmt_us(char *buf, size_t len, double us);
/* Params "M=9,tp=8" as "M=9, tp=8", so a table cell can wrap between them. */
void report_fmt_params(char *buf, size_t len, const char *params);
/* "triangular 0.25 / 0.4 / 0.5", "uniform 0.2 - 0.4", "fixed", ... */
void report_fmt_dist(char *buf, size_t len, const struct dist *d);
/* The assumption of that label ("native_cut", "moe_transfer.a.b.m8-64"), or NULL. */
const struct dist *report_find_dist(const struct report_data *d, const char *label);

#endif
