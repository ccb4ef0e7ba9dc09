/* nightly.h - the nightly job, its settings (the template's `nightly:` section)
 * and its housekeeping: which documents are kept. */
#ifndef DDT_NIGHTLY_H
#define DDT_NIGHTLY_H

#include "paths.h"
#include "tmpl.h"
#include "ydoc.h"

struct nightly_conf {
	int keep_documents_runs; /* documents of this many newest runs are kept */
	int lock_hung_after_min; /* a nightly holding the lock longer looks hung */
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

#endif
