/* cmd_backtest.c - `ddt backtest`: each measured GPU projected from each other one. */
#include "backtest.h"
#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "cmd.h"
#include "err.h"
#include "project.h"
#include "record.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct backtest_args {
	struct paths paths;
	const char *run, *format, *hold, *pairs;
	double m_min, m_max;
};

typedef struct backtest_args A;
static const struct cli_opt backtest_opts[] = {
	CLI_OPT_STR(A, run, 0, "run", "RUN",
		    "also tonight's moe_w4a16 sweeps of a run record\n"
		    "(runs/<id>/run.yaml) measured on two or more GPUs"),
	CLI_OPT_CHOICE(A, hold, "hold-out", "H", "gpu|family|implementation",
		       "what each fit leaves out: the target GPU with its\n"
		       "twins (gpu, default), its whole family (family), or\n"
		       "a whole implementation of the MoE class\n"
		       "(implementation)"),
	CLI_OPT_NUM(A, m_min, "m-min", "M", 1, 1e9, "score only the points at M >= this"),
	CLI_OPT_NUM(A, m_max, "m-max", "M", 1, 1e9, "score only the points at M <= this"),
	CLI_OPT_STR(A, pairs, 0, "pairs", "LIST",
		    "score only these pairs: from:to,from:to (catalog ids)"),
	CLI_OPT_CHOICE(A, format, "format", "F", "text|yaml|points",
		       "text (default), yaml (the projection's xbacktest) or\n"
		       "points (implementation: every scored point, CSV)"),
	CLI_OPT_CALIBRATION(A, paths),
	CLI_OPT_TEMPLATE_AS(A, paths, CLI_UNUSED),
	CLI_OPT_BUF(A, paths.runs, "runs", "DIR", CLI_UNUSED),
	CLI_OPT_BUF(A, paths.reports, "reports", "DIR", CLI_UNUSED),
	CLI_OPT_END,
};

const struct cli_spec cmd_backtest_spec = {
	.name = "backtest",
	.usage = "backtest [--hold-out gpu|family|implementation] [--m-min M]\n"
		 "         [--m-max M] [--pairs LIST] [--run RUN]\n"
		 "         [--format text|yaml|points] [--calibration PATH]",
	.about = "Backtests the MoE transfer factors on data they were not fitted to: for\n"
		 "every kernel class of the calibration's measured cross-GPU tables\n"
		 "(calibration/measured.yaml) and every ordered pair of GPUs A -> B, the\n"
		 "factors are fitted without B's measurements, A's measured curve is moved\n"
		 "onto B, and the p5-p95 band is set beside B's measured times. Prints per\n"
		 "pair the share of B's points inside p5-p95 and the median |error| of p50,\n"
		 "per class and pooled (targets: 80% inside, 10% error). B's twins (the same\n"
		 "die, memory and bandwidth: B300 with GB300) are held out with it; a pair\n"
		 "across memory kinds (GDDR -> HBM) is fitted without the target's kind.\n"
		 "--hold-out implementation leaves out instead each whole implementation of\n"
		 "the MoE class (measured.yaml: implementation) and projects its pairs by the\n"
		 "law the others share, the implementation gap sized without it. The nightly\n"
		 "runs the GPU and implementation backtests and stores them in\n"
		 "projection.yaml (xbacktest).",
	.opts = backtest_opts,
	.after = "example: ddt backtest --format yaml",
};

/* The backtest a->hold names into p. */
static int backtest_mode(struct projection *p, const struct calib *c,
			 const struct calibration *d, const struct backtest_args *a)
{
	struct backtest_win w = {a->m_min, a->m_max, a->pairs};
	if (!strcmp(a->hold, "implementation"))
		return backtest_ximpl(p, c, d, &w);
	return backtest_hold(p, c, d, !strcmp(a->hold, "family") ? BACKTEST_FAMILY : BACKTEST_GPU,
			     &w);
}

/* Prints the implementation backtest; returns the exit status. */
static int backtest_impl_out(const struct projection *p, const struct calib *c,
			     const struct calibration *d, const struct backtest_args *a)
{
	struct backtest_win w = {a->m_min, a->m_max, a->pairs};
	int rc = 0;
	if (!p->niback) {
		fprintf(stderr, "ddt backtest: the transfer's class has fewer than two "
				"implementations with a GPU pair; add one to %s/measured.yaml "
				"(implementation.of)\n",
			a->paths.calibration);
		return 2;
	}
	if (!strcmp(a->format, "yaml"))
		project_emit_xback(p, stdout);
	else if (!strcmp(a->format, "points"))
		backtest_write_points(p, stdout);
	else {
		backtest_write_impl_text(p, stdout);
		rc = backtest_write_gap(c, d, &w, stdout);
	}
	if (rc)
		return cli_fail("backtest", rc);
	return fflush(stdout) != 0;
}

int cmd_backtest(int argc, char **argv)
{
	struct backtest_args a = {.format = "text", .hold = "gpu", .m_min = NAN, .m_max = NAN};
	struct calib cal;
	struct calibration der;
	struct run_record run;
	struct projection p;
	struct calibrate_opts o = {0};
	struct ydiag diag = {0};
	int first, rc, status = 0, have_run = 0;

	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_backtest_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	memset(&cal, 0, sizeof cal);
	memset(&p, 0, sizeof p);
	memset(&run, 0, sizeof run);
	if (a.run) {
		if ((rc = record_read(&run, a.run, &diag)) != 0) {
			fprintf(stderr, "ddt backtest: %s\n", diag.n ? diag.msgs[0] : err_msg());
			status = err_exit_status(rc);
			goto done;
		}
		have_run = 1;
	}
	/* the run's sweeps join the transfer calibration as it is loaded */
	o.fleet = have_run ? &run : NULL;
	if ((rc = calibrate_load(&cal, &der, a.paths.calibration, &o, &diag)) != 0) {
		if (!diag.n)
			status = cli_fail("backtest", rc);
		else {
			fprintf(stderr, "ddt backtest: %s\n", diag.msgs[0]);
			status = err_exit_status(rc);
		}
		goto done;
	}
	if ((rc = backtest_mode(&p, &cal, &der, &a)) != 0) {
		status = cli_fail("backtest", rc);
		goto done;
	}
	if (!strcmp(a.hold, "implementation")) {
		status = backtest_impl_out(&p, &cal, &der, &a);
		goto done;
	}
	if (!p.nxback) {
		fprintf(stderr, "ddt backtest: no kernel class has two GPUs measured; add a class to "
				"%s/measured.yaml or pass --run with a fleet run\n",
			a.paths.calibration);
		status = 2;
		goto done;
	}
	if (!strcmp(a.format, "yaml"))
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
