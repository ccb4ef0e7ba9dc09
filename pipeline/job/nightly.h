/* nightly.h - the nightly job, its settings (the template's `nightly:` section)
 * and its housekeeping: which documents are kept. */
#ifndef DDT_NIGHTLY_H
#define DDT_NIGHTLY_H

#include "calib.h"
#include "history.h"
#include "notify.h"
#include "paths.h"
#include "record.h"
#include "regress.h"
#include "tmpl.h"
#include "ydoc.h"

struct nightly_conf {
	int keep_documents_runs; /* documents of this many newest runs are kept */
	int lock_hung_after_min; /* a nightly holding the lock longer looks hung */
	struct notify_conf notify; /* nightly.notify: the morning news (notify.h) */
	char source[320];
};

/* Loads and checks the `nightly:` section of t (every key required, unknown
 * keys are errors, problems to diag as file:line:col). Returns 0 or
 * DDT_EINPUT (also when the section is missing). */
int nightly_conf_load(struct nightly_conf *c, const struct tmpl *t, struct ydiag *diag);

/* Removes the document folders reports_dir/<run-id>/ of all but the `keep`
 * newest runs by the time they were committed (report_documents: their
 * run.yaml's times in runs_dir, not their names), and never tonight's (run id
 * `tonight`, may be NULL), which counts as the newest. Run records are never
 * touched. Each folder is first renamed to a temporary name, so a kill
 * leaves a temporary name for the next sweep, never a partial document
 * folder; nothing is reached through a link (fsx.h). *removed (may be NULL)
 * receives how many went. Returns 0 or DDT_EIO (reports_dir unreadable or a
 * folder that cannot be removed); a missing reports_dir is nothing to do. */
int nightly_prune_documents(const char *reports_dir, const char *runs_dir, const char *tonight,
			    int keep, int *removed);

/* What the night is asked for. */
struct nightly_opts {
	struct paths paths; /* paths.template_given: else gpu with CUDA devices, or cpu */
	int quiet;          /* print nothing on success; only regressions and errors */
	int tty;            /* stderr is a terminal: draw the progress line */
};

/* The nightly job: takes runs/.nightly.lock, picks the template, then bench,
 * run record, history, regression verdicts, projection, commit, documents
 * and retention, each reported and skipped when what it needs is missing.
 * Returns the exit status: 0 ok; 1 a stage failed; 2 bad input; 3 a
 * regression confirmed tonight; 4 a kernel failed validation; 75 another
 * nightly holds the lock (when several apply: 2, 1, 4, then 3). */
int nightly_run(const struct nightly_opts *o);

/* ---- the night after its bench: one host's or a fleet's ---- */

/* The stages every night runs once its rows are measured and recorded,
 * whether one host measured them (nightly_run) or a fleet (the merge). */
enum nightly_stage {
	NIGHTLY_REGRESS,   /* every host judged against its own nights: verdicts.yaml */
	NIGHTLY_PROJECT,   /* the projection from the measured rows: projection.yaml */
	NIGHTLY_COMMIT,    /* the inputs stored beside them, the run folder put in place */
	NIGHTLY_DOCUMENTS, /* reports/<id>/ rendered from the committed folder */
	NIGHTLY_NSTAGES
};

/* One host measured tonight. */
struct nightly_host {
	struct history *h;     /* its nights, tonight's included (analysed here) */
	size_t run;            /* tonight's index in h */
	const char *label;     /* its device names get " @label" in the night's verdicts; NULL: none */
	const char *verdicts;  /* its own verdicts.yaml beside its run record; NULL: none */
};

/* What the stages read, where they write, and what they leave. */
struct nightly_after {
	const struct calib *cal;          /* NULL: no tok/s impact and no projection */
	const struct calibration *der;    /* what calibrate_load derived from cal */
	const struct tmpl *t;             /* its scenarios: the impact of a change */
	const struct regress_conf *rconf; /* NULL: no verdicts (regress_skip says why) */
	const char *regress_skip;
	struct nightly_host *hosts;
	size_t nhosts;
	const struct run_record *measured; /* the rows the projection reads */
	const char *dir;                   /* the run folder being written (may be temporary) */
	const char *calibration, *template_path; /* stored into dir */
	const char *runs, *home, *reports; /* the documents of runs/<id>/ into reports/<id>/ */
	const char *id;                    /* the night's run id */
	const struct history *docs_hist;   /* the runs up to tonight as `ddt report` loads
					    * them (report_ctx.hist), the history
					    * hosts[0] judges; NULL: the documents load
					    * runs/ themselves */
	/* what the stages leave (free verdicts with regress_night_free) */
	struct regress_night verdicts;     /* every host's, folded; judged: they were made */
	int judged, committed;
	int judged_ok;                     /* every host judged without an error */
	char no_impact[256];               /* why verdicts carry no tok/s impact; "" when they do */
	size_t projected_rows;
};

/* How the caller reports the stages and puts its run folder in place. */
struct nightly_hooks {
	void *ctx;
	void (*begin)(void *ctx, enum nightly_stage s);
	/* rc: 0 ok, else the error (message set) */
	void (*end)(void *ctx, enum nightly_stage s, int rc, const struct nightly_after *a);
	void (*skip)(void *ctx, enum nightly_stage s, const char *why);
	/* after the inputs are stored into a->dir: puts the folder in place
	 * (NULL: it is in place). Nothing after it reads a->dir. */
	int (*commit)(void *ctx);
};

/* Runs the stages in order, each reported through k and each going on
 * whatever became of the one before, except the documents, which need a
 * committed folder. Every failure is reported, none returned. */
void nightly_after_bench(struct nightly_after *a, const struct nightly_hooks *k);

#endif
