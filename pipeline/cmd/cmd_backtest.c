/* cmd_backtest.c - `ddt backtest`: each measured GPU projected from each other one. */
#include "backtest.h"
#include "calib.h"
#include "cli.h"
#include "err.h"
#include "project.h"
#include "record.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: ddt backtest [--run RUN] [--format text|yaml] [--calibration PATH]\n"
	"\n"
	"Backtests the MoE transfer factors on data they were not fitted to: for\n"
	"every kernel class of the calibration's measured cross-GPU tables\n"
	"(calibration/measured.yaml) and every ordered pair of GPUs A -> B, the\n"
	"factors are fitted without B's measurements, A's measured curve is moved\n"
	"onto B, and the p5-p95 band is set beside B's measured times. Prints per\n"
	"pair the share of B's points inside p5-p95 and the median |error| of p50,\n"
	"per class and pooled (targets: 80% inside, 10% error). The nightly runs the\n"
	"same backtest and stores it in projection.yaml (xbacktest).\n"
	"\n"
	"  --run RUN           also tonight's moe_w4a16 sweeps of a run record\n"
	"                      (runs/<id>/run.yaml) measured on two or more GPUs\n"
	"  --format F          text (default) or yaml (the projection's xbacktest)\n" CLI_PATH_HELP
	"  -h, --help          this text\n"
	"\n"
	"example: ddt backtest --format yaml\n";

enum { OPT_RUN = OPT_FIRST_FREE, OPT_FORMAT };

int cmd_backtest(int argc, char **argv)
{
	static const struct option opts[] = {{"run", required_argument, NULL, OPT_RUN},
					     {"format", required_argument, NULL, OPT_FORMAT},
					     {"help", no_argument, NULL, 'h'},
					     CLI_PATH_OPTIONS,
					     {NULL, 0, NULL, 0}};
	struct cli_paths paths;
	const char *format = "text", *run_path = NULL;
	struct calib cal;
	struct run_record run;
	struct projection p;
	struct ydiag diag = {0};
	int opt, rc, status = 0, have_run = 0;

	cli_paths_init(&paths, "default");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (cli_path_option(&paths, opt, optarg))
			continue;
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			return 0;
		case OPT_RUN:
			run_path = optarg;
			break;
		case OPT_FORMAT:
			format = optarg;
			break;
		default:
			return cli_usage_error("backtest", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("backtest", "unexpected argument '%s'", argv[optind]);
	if (strcmp(format, "text") && strcmp(format, "yaml"))
		return cli_usage_error("backtest", "--format: expected text or yaml, got '%s'",
				       format);
	memset(&p, 0, sizeof p);
	memset(&run, 0, sizeof run);
	if ((rc = calib_load(&cal, paths.calibration, &diag)) != 0) {
		fprintf(stderr, "ddt backtest: %s\n", diag.n ? diag.msgs[0] : err_msg());
		status = err_exit_status(rc);
		goto done;
	}
	if (run_path) {
		if ((rc = record_read(&run, run_path, &diag)) != 0) {
			fprintf(stderr, "ddt backtest: %s\n", diag.n ? diag.msgs[0] : err_msg());
			status = err_exit_status(rc);
			goto done;
		}
		have_run = 1;
		if ((rc = project_merge_fleet(&cal, &run, NULL)) != 0) {
			status = cli_fail("backtest", rc);
			goto done;
		}
	}
	if ((rc = backtest_xgpu(&p, &cal)) != 0) {
		status = cli_fail("backtest", rc);
		goto done;
	}
	if (!p.nxback) {
		fprintf(stderr, "ddt backtest: no kernel class has two GPUs measured; add a class to "
				"%s/measured.yaml or pass --run with a fleet run\n",
			paths.calibration);
		status = 2;
		goto done;
	}
	if (!strcmp(format, "yaml"))
		project_emit_xback(&p, stdout);
	else
		backtest_write_text(&p, stdout);
	if (fflush(stdout) != 0)
		status = 1;
done:
	project_free(&p);
	if (have_run)
		record_free(&run);
	calib_free(&cal);
	ydiag_free(&diag);
	return status;
}
