/* bench_suite.c - `make bench`: what share of the nightly's CPU bench is spent
 * timing samples, the rest being inputs, reference checks, warmups and flushes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_conf.h"
#include "err.h"
#include "harness.h"
#include "paths.h"
#include "record.h"
#include "tmpl.h"

/*
 * The suite is templates/cpu.yaml's, as `ddt nightly` runs it on a machine
 * without a GPU. Every CPU sample goes through harness_time_cpu, which
 * keeps the seconds of timed samples, warmups and cold flushes
 * (harness_account); the wall time around bench_run holds those and
 * everything else: making each op's inputs (the copy-bandwidth probe's
 * among them), the C reference checks, setup and teardown. Target: timed
 * samples >= 70% of the wall time. Wall time (not CPU time): the samples
 * are wall-clock measurements and so is what they cost the night.
 */
static void line(const char *what, double s, double wall)
{
	printf("  %-48s %8.1f s %6.1f%%\n", what, s, 100 * s / wall);
}

int main(void)
{
	struct paths paths;
	struct ydiag diag = {0};
	struct tmpl t;
	static struct bench_conf bc;
	struct run_record r;
	struct harness_account a0, a1;
	struct bench_spent spent = {0};
	struct bench_opts o = {.spent = &spent};
	int rc;

	memset(&r, 0, sizeof r);
	paths_init(&paths, "cpu");
	if ((rc = tmpl_load(&t, paths.template_path, &diag)) == 0)
		rc = bench_conf_load(&bc, &t, &diag);
	ydiag_print(&diag, stderr);
	if (rc || (rc = bench_record_init(&r, t.name, paths.home)))
		goto done;
	o.home = paths.home;
	harness_account_get(&a0);
	double w0 = harness_now_s();
	rc = bench_run(&bc, &o, &r);
	double wall = harness_now_s() - w0;
	harness_account_get(&a1);
	if (rc)
		goto done;
	double timed = a1.timed_s - a0.timed_s, warm = a1.warmup_s - a0.warmup_s,
	       flush = a1.flush_s - a0.flush_s;
	printf("the nightly's CPU suite (%s): %zu rows, %lu samples, %.1f s of wall time\n",
	       paths.template_path, r.nrows, a1.samples - a0.samples, wall);
	line("timed samples", timed, wall);
	line("warmup runs", warm, wall);
	char what[96];
	snprintf(what, sizeof what, "cold flushes (%lu, %lu of them evictions)",
		 a1.flushes - a0.flushes, a1.evictions - a0.evictions);
	line(what, flush, wall);
	line("inputs (op setup, teardown)", spent.setup_s, wall);
	line("validation (C reference, fast path once)", spent.check_s, wall);
	line("copy-bandwidth probe (its inputs and samples also above)", spent.probe_s, wall);
	line("the rest", wall - timed - warm - flush - spent.setup_s - spent.check_s, wall);
	int stops[HARNESS_STOP_MAX_SAMPLES + 1] = {0};
	for (size_t i = 0; i < r.nrows; i++)
		for (int k = HARNESS_STOP_RSD; k <= HARNESS_STOP_MAX_SAMPLES; k++)
			stops[k] += !strcmp(r.rows[i].stop, harness_stop_name(k));
	printf("rows stopped by rsd %d, ci %d, timeout %d, max_samples %d (host noise %.1f%%)\n",
	       stops[HARNESS_STOP_RSD], stops[HARNESS_STOP_CI], stops[HARNESS_STOP_TIMEOUT],
	       stops[HARNESS_STOP_MAX_SAMPLES], 100 * spent.host_rsd);
	printf("timed samples / wall time: %.2f (target >= 0.70)\n", timed / wall);
done:
	if (rc)
		fprintf(stderr, "bench_suite: %s\n", err_msg());
	record_free(&r);
	tmpl_free(&t);
	ydiag_free(&diag);
	return rc ? 1 : 0;
}
