/* report_load.h - a run's documents' data made from its folder: the stored
 * inputs read, then what the stages derive from them (the fitted calibration,
 * the model and its estimates, the stored projection and verdicts read back,
 * the verdicts' lines, the MoE curves), so that the documents (render/) only
 * read it; and the documents rendered from it. */
#ifndef DDT_REPORT_LOAD_H
#define DDT_REPORT_LOAD_H

#include "regress.h"
#include "report.h"
#include "report_data.h"

/* Loads runs_dir/run_id/ (see report.h for what it holds) and the history of
 * runs_dir up to run_id, or borrows hist (report_ctx.hist) when not NULL: d
 * then reads it and never frees it. Problems with stored files go to diag.
 * Returns 0, DDT_ENOTFOUND, DDT_EINPUT, DDT_EIO or DDT_ENOMEM; free d with
 * report_data_free even on error. */
int report_data_load(struct report_data *d, const char *runs_dir, const char *run_id,
		     const struct history *hist, struct ydiag *diag);
void report_data_free(struct report_data *d);
/* Finds again the catalog GPU of each of d's devices (d->device_gpu), after
 * the record's devices were changed. */
void report_data_devices(struct report_data *d);

/* The lines of night n, its alerts' commit ranges linked through url (NULL
 * or "": not linked). Returns 0 or DDT_ENOMEM; free t with
 * report_night_text_free even on error. */
int report_night_text_make(struct report_night_text *t, const struct regress_night *n,
			   const char *url);
void report_night_text_free(struct report_night_text *t, const struct regress_night *n);

/* Renders reports_dir/<run-id>/ {report.pdf, report.xlsx, charts/<n>.png,
 * summary.txt} from runs_dir/<run-id>/, replacing an earlier rendering of the
 * same run as a whole (the folder appears complete or not at all), then points
 * reports_dir/latest at the newest rendered run. Returns 0, DDT_ENOTFOUND
 * (no such run), DDT_EINPUT (a stored file is damaged; the message names it),
 * DDT_EIO or DDT_ENOMEM. */
int report_render(const struct report_ctx *ctx, const char *reports_dir, const char *run_id);

#endif
