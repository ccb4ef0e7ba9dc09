/* bench_project.c - the night's projection: 20000 Monte Carlo draws over every
 * default scenario and the budget grid (5 targets x 5 concurrencies x 7
 * budgets), with the tornado, the lean, the fit and the backtest.
 *
 * Target (issue #5): <= 300 ms on one core. Prints the CPU time of
 * project_run with the template's settings (best of 3 runs, so a busy host
 * shows the code's cost rather than the neighbours'). make bench. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "project.h"
#include "tmpl.h"

/* The night's projection must not hold up the nightly: its CPU-time limit. */
#define LIMIT_MS 300.0

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(void)
{
	const char *home = getenv("DDT_HOME");
	char cpath[4096], tpath[4096];
	struct calib cal;
	struct calibration cal_d;
	struct tmpl t;
	struct ydiag diag = {0};
	struct project_config cfg;
	struct projection p;
	double best = 1e30;

	home = home && *home ? home : ".";
	snprintf(cpath, sizeof cpath, "%s/calibration", home);
	snprintf(tpath, sizeof tpath, "%s/templates/default.yaml", home);
	if (calibrate_load(&cal, &cal_d, cpath, NULL, &diag) || tmpl_load(&t, tpath, &diag) ||
	    project_config_load(&cfg, &t, &diag)) {
		ydiag_print(&diag, stderr);
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		double t0 = cpu_ms();
		if (project_run(&p, &cal, &cal_d, &t, NULL, &cfg)) {
			fprintf(stderr, "bench_project: %s\n", err_msg());
			return 1;
		}
		double ms = cpu_ms() - t0;
		best = ms < best ? ms : best;
		if (i < 2)
			project_free(&p);
	}
	size_t cells = (size_t)p.grid.ntargets * p.grid.nconc * p.grid.nbudgets;
	printf("bench_project: %d draws x (%zu scenario rows + %zu grid cells), tornado %s: "
	       "%.0f ms on one core, %.2fx its %.0f ms limit%s\n",
	       p.samples, p.nrows, cells, cfg.sensitivity ? "on" : "off", best, best / LIMIT_MS,
	       LIMIT_MS, best <= LIMIT_MS ? "" : "  OVER THE LIMIT");
	project_free(&p);
	tmpl_free(&t);
	calib_free(&cal);
	ydiag_free(&diag);
	return 0;
}
