/* report.h - the documents of one run (report.pdf, report.xlsx, charts/<n>.png,
 * summary.txt under reports/<run-id>/), rendered from the stored run alone. */
#ifndef DDT_REPORT_H
#define DDT_REPORT_H

#include <stddef.h>
#include <time.h>


/* What report_render (report_load.h) reads from the run folder runs/<run-id>/:
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
	const struct history *hist; /* the runs up to this one as history_load_until
				     * gives them, analysed with the run's stored
				     * regress: settings (the nightly's own, read
				     * once); NULL: loaded from runs_dir */
};

/* Before a run's documents are made (report_render, report_load.h): 0 when
 * the folder of run_id and its run.yaml are trusted (fsx_trusted_path) and
 * the charts' fonts are set up from ctx->home; else DDT_EINPUT naming why, or
 * DDT_ENOMEM. */
int report_begin(const struct report_ctx *ctx, const char *run_id);

struct report_data;
/* Writes reports_dir/<run-id>/ {report.pdf, report.xlsx, charts/<n>.png,
 * summary.txt} from d (report_data.h), replacing an earlier rendering of the
 * same run as a whole (the folder appears complete or not at all), then points
 * reports_dir/latest at the newest rendered run. Returns 0, DDT_EIO or
 * DDT_ENOMEM. */
int report_write(const struct report_ctx *ctx, const char *reports_dir,
		 const struct report_data *d);

/* Copies the inputs report_render needs into a run folder being written (the
 * nightly's temporary run folder, before it is committed): the calibration
 * (a folder's *.yaml, or one file) into run_dir/calibration/, and the template
 * with the one it extends into run_dir/template/. Returns 0 or DDT_EIO /
 * DDT_ENOMEM / DDT_EINPUT (the template names a parent that is missing). */
int report_stash_inputs(const char *run_dir, const char *calibration, const char *template_path);

/* A rendered run's documents folder and when the run was committed. */
struct report_doc {
	char id[96];
	struct timespec committed; /* its run.yaml's modification time (written
				    * once as the run was committed, stamped by
				    * the file system); the documents folder's
				    * own when the run is gone */
};

/* The documents folders of reports_dir (rendered runs; temporary names
 * skipped), oldest first by the time their runs were committed in runs_dir
 * (or runs_dir/.fleet), ties by id: not by name, so a run whose id is in
 * the past (a clock that went back) still counts as the newest it is. *docs
 * is malloc'd. A missing reports_dir has none. Returns 0, DDT_EIO or
 * DDT_ENOMEM. */
int report_documents(const char *reports_dir, const char *runs_dir, struct report_doc **docs,
		     size_t *n);

/* The committed runs of runs_dir (folders named by a run id that hold a
 * run.yaml; temporary names and links skipped), oldest first by the time
 * they were committed (their run.yaml's modification time), ties by id.
 * *runs is malloc'd. A missing runs_dir has none. Returns 0, DDT_EIO or
 * DDT_ENOMEM. */
int report_runs(const char *runs_dir, struct report_doc **runs, size_t *n);

/* The newest committed run id under runs_dir (report_runs) into id (len
 * bytes). Returns 0, or DDT_ENOTFOUND when there is none or the folder
 * cannot be read. */
int report_newest_run(const char *runs_dir, char *id, size_t len);

#endif
