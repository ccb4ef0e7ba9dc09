/* nightly.c - `ddt nightly`: the whole nightly job on this machine. */
#include "cli.h"
#include "err.h"
#include "estimate.h"
#include "fsx.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: ddt nightly [OPTIONS]\n"
	"\n"
	"Runs the nightly job: projects every scenario of the template and writes\n"
	"reports/<run-id>/summary.txt (atomically).\n"
	"\n" CLI_PATH_HELP "  -h, --help          this text\n";

/* Writes the summary of one night into folder (which exists). */
static int write_summary(const char *folder, const char *run_id, const struct estimate *e,
			 const struct model *m)
{
	char *path = fsx_join(folder, "summary.txt");
	struct fsx_file f;
	int rc;

	if (!path)
		return err_nomem();
	if ((rc = fsx_open(&f, path)) == 0) {
		fprintf(f.fp, "ddt nightly %s\n\n", run_id);
		estimate_write_table(e, m, f.fp);
		rc = fsx_commit(&f);
	}
	free(path);
	return rc;
}

int cmd_nightly(int argc, char **argv)
{
	static const struct option opts[] = {{"help", no_argument, NULL, 'h'}, CLI_PATH_OPTIONS,
					     {NULL, 0, NULL, 0}};
	struct cli_paths paths;
	struct ydiag diag = {0};
	struct calib cal;
	struct tmpl t;
	struct model m;
	struct estimate e = {0};
	char run_id[80], *folder = NULL, *tmp = NULL;
	int opt, rc, status = 0;

	cli_paths_init(&paths, "default");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (cli_path_option(&paths, opt, optarg))
			continue;
		if (opt == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		return cli_usage_error("nightly", "unknown option");
	}
	memset(&t, 0, sizeof t);
	rc = calib_load(&cal, paths.calibration, &diag);
	if (!rc)
		rc = tmpl_load(&t, paths.template_path, &diag);
	if (rc) {
		fprintf(stderr, "ddt nightly: %s\n", diag.n ? diag.msgs[0] : err_msg());
		status = err_exit_status(rc);
		goto done;
	}
	if ((rc = model_prepare(&m, &cal, NULL)) ||
	    (rc = estimate_run(&e, &m, t.scenarios, t.nscenarios))) {
		status = cli_fail("nightly", rc);
		goto done;
	}
	record_make_run_id(run_id, sizeof run_id, NULL, 0);
	if ((rc = fsx_mkdir_p(paths.reports)) || !(folder = fsx_join(paths.reports, run_id)) ||
	    (rc = fsx_dir_begin(folder, &tmp)) || (rc = write_summary(tmp, run_id, &e, &m)) ||
	    (rc = fsx_dir_commit(tmp, folder))) {
		if (tmp)
			fsx_rm_rf(tmp);
		status = cli_fail("nightly", rc ? rc : err_nomem());
		goto done;
	}
	printf("ddt nightly: %s/summary.txt\n", folder);
done:
	free(folder);
	free(tmp);
	estimate_free(&e);
	tmpl_free(&t);
	calib_free(&cal);
	ydiag_free(&diag);
	return status;
}
