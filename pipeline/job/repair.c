/* repair.c - committed runs that lack their projection or their documents,
 * made whole by the next nightly. */

#include "repair.h"

#include "err.h"
#include "calibrate.h"
#include "fit.h"
#include "fsx.h"
#include "project.h"
#include "record.h"
#include "report.h"
#include "report_load.h"
#include "tmpl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes run_dir/projection.yaml from the run's own stored inputs, as the
 * night's projection stage would have. */
static int project_again(const char *run_dir)
{
	struct run_record rec;
	struct calib cal;
	struct calibration der;
	struct tmpl t;
	struct projection p;
	struct ydiag diag = {0};
	char path[4200];
	int rc;

	memset(&rec, 0, sizeof rec);
	memset(&cal, 0, sizeof cal);
	memset(&t, 0, sizeof t);
	memset(&p, 0, sizeof p);
	snprintf(path, sizeof path, "%s/run.yaml", run_dir);
	if ((rc = record_read(&rec, path, &diag)) != 0)
		goto done;
	snprintf(path, sizeof path, "%s/calibration", run_dir);
	if ((rc = calibrate_load(&cal, &der, path, NULL, &diag)) != 0)
		goto done;
	snprintf(path, sizeof path, "%s/template/template.yaml", run_dir);
	if ((rc = tmpl_load(&t, path, &diag)) != 0)
		goto done;
	if ((rc = project_run(&p, &cal, &der, &t, &rec, NULL)) != 0)
		goto done;
	snprintf(path, sizeof path, "%s/projection.yaml", run_dir);
	rc = project_write(&p, path);
done:
	if (rc && diag.n)
		err_set(rc, "%s", diag.msgs[0]);
	project_free(&p);
	tmpl_free(&t);
	calib_free(&cal);
	record_free(&rec);
	ydiag_free(&diag);
	return rc;
}

/* Appends "ID (what)" to res->ids, cut when it no longer fits. */
static void say(struct repair_result *res, const char *id, int proj, int docs)
{
	size_t used = strlen(res->ids);
	snprintf(res->ids + used, sizeof res->ids - used, "%s%s (%s%s%s)", used ? ", " : "", id,
		 proj ? "projection" : "", proj && docs ? ", " : "", docs ? "documents" : "");
}

/* Makes run id whole; *proj and *docs say what it needed. A run without the
 * inputs a nightly stores beside its record (calibration/, template/: a run
 * made by other means) cannot be made whole and is left as it is. */
static int repair_one(const char *runs_dir, const char *reports_dir, const char *home,
		      const char *id, int *proj, int *docs)
{
	struct report_ctx ctx = {runs_dir, home, 1, NULL};
	char run_dir[4200], path[4300];
	int rc = 0;

	*proj = *docs = 0;
	snprintf(run_dir, sizeof run_dir, "%s/%s", runs_dir, id);
	snprintf(path, sizeof path, "%s/calibration", run_dir);
	if (fsx_kind(path) == FSX_NONE)
		return 0;
	snprintf(path, sizeof path, "%s/template/template.yaml", run_dir);
	if (fsx_kind(path) == FSX_NONE)
		return 0;
	snprintf(path, sizeof path, "%s/projection.yaml", run_dir);
	*proj = fsx_kind(path) == FSX_NONE;
	snprintf(path, sizeof path, "%s/%s", reports_dir, id);
	*docs = *proj || fsx_kind(path) == FSX_NONE;
	if (*proj && (rc = project_again(run_dir)) != 0)
		return err_wrap(rc, "run %s: projection", id);
	if (*docs && (rc = report_render(&ctx, reports_dir, id)) != 0)
		return err_wrap(rc, "run %s: documents", id);
	return 0;
}

int repair_runs(const char *runs_dir, const char *reports_dir, const char *home,
		const char *tonight, int keep, struct repair_result *res)
{
	struct report_doc *runs;
	size_t n, first;
	int rc = report_runs(runs_dir, &runs, &n), first_rc = 0;
	char first_msg[512] = "";

	memset(res, 0, sizeof *res);
	if (rc)
		return rc;
	first = n > (size_t)keep ? n - (size_t)keep : 0;
	for (size_t i = first; i < n; i++) {
		int proj = 0, docs = 0;
		if (tonight && !strcmp(runs[i].id, tonight))
			continue;
		if ((rc = repair_one(runs_dir, reports_dir, home, runs[i].id, &proj, &docs)) != 0) {
			if (!res->failed++) {
				first_rc = rc;
				snprintf(first_msg, sizeof first_msg, "%s", err_msg());
			}
			continue;
		}
		if (proj || docs) {
			res->runs++;
			res->projections += proj;
			res->documents += docs;
			say(res, runs[i].id, proj, docs);
		}
	}
	free(runs);
	/* a stored run that cannot be made whole is the night's failure, not bad
	 * input given tonight */
	return first_rc ? err_set(DDT_EGENERIC, "%s", first_msg) : 0;
}
