/* cmd_report.c - `ddt report`: render the documents of a stored run. */
#include "cmd.h"

#include "record.h"
#include "report.h"
#include "report_load.h"

#include <string.h>

struct report_args {
	struct paths paths;
	int quiet;
};

typedef struct report_args A;
static const struct cli_opt report_opts[] = {
	CLI_OPT_RUNS(A, paths),
	CLI_OPT_REPORTS(A, paths),
	CLI_OPT_FLAG(A, quiet, 'q', "quiet", "print nothing on success"),
	CLI_OPT_BUF(A, paths.calibration, "calibration", "PATH",
		    "accepted for symmetry; unused here (the run holds its own)"),
	CLI_OPT_TEMPLATE_AS(A, paths,
			    "accepted for symmetry; unused here (the run holds its own)"),
	CLI_OPT_END,
};

const struct cli_spec cmd_report_spec = {
	.name = "report",
	.usage = "report [OPTIONS] RUN",
	.about = "Renders the documents of a stored run into reports/<run-id>/: report.pdf,\n"
		 "report.xlsx, charts/*.png and summary.txt, from runs/<run-id>/ alone (the\n"
		 "record, the calibration and template stored with it, its projection and\n"
		 "verdicts, and the runs before it for the history charts). The same run\n"
		 "always renders the same bytes. reports/latest then points at the newest.\n"
		 "RUN is a run id (YYYYMMDDTHHMMSSZ-host) or 'latest' (the newest run).",
	.opts = report_opts,
	.takes_args = 1,
};

int cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	char id[96];
	int first, rc;

	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_report_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	if (first != argc - 1)
		return cli_usage_error("report", "give one RUN (a run id, or 'latest')");
	if (!strcmp(argv[first], "latest")) {
		if ((rc = report_newest_run(a.paths.runs, id, sizeof id)) != 0)
			return cli_fail("report", rc);
	} else if (!record_run_id_valid(argv[first]))
		return cli_usage_error("report", "'%s' is not a run id (YYYYMMDDTHHMMSSZ-host)",
				       argv[first]);
	else
		snprintf(id, sizeof id, "%s", argv[first]);
	struct report_ctx ctx = {.runs_dir = a.paths.runs, .home = a.paths.home, .quiet = a.quiet};
	rc = report_render(&ctx, a.paths.reports, id);
	return rc ? cli_fail("report", rc) : 0;
}
