/* repair.h - committed runs that lack their projection or their documents
 * (a killed nightly, a full disk), made whole by the next nightly. */
#ifndef DDT_REPAIR_H
#define DDT_REPAIR_H

#include <stddef.h>

/* What repair_runs did. */
struct repair_result {
	int runs;         /* runs made whole */
	int projections;  /* projection.yaml written again */
	int documents;    /* documents rendered again */
	int failed;       /* runs that could not be made whole (err_msg: the first) */
	char ids[400];    /* "ID (projection, documents), ID (documents)", cut to fit */
};

/* Looks at the committed runs of runs_dir (run.yaml present) whose documents
 * retention keeps: the `keep` newest by commit time (report_runs), but not
 * tonight (may be NULL), and only those holding the inputs a nightly stores
 * (calibration/, template/). A run without projection.yaml gets it again, from
 * its own stored record, calibration and template (the inputs the night
 * used); a run without reports_dir/<id>/, or whose projection was just
 * written, is rendered again (report_render; home: the project folder). *res
 * says what was done. Returns 0, or DDT_EGENERIC (exit status 1) with the
 * first failure's message when a run could not be made whole (the others are
 * still tried). */
int repair_runs(const char *runs_dir, const char *reports_dir, const char *home,
		const char *tonight, int keep, struct repair_result *res);

#endif
