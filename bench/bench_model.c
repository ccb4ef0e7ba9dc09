/* bench_model.c - how many decode-step model evaluations one core does per second.
 *
 * Target (issue #2): >= 10 million per second on one core. Two figures: the
 * generic model_eval (compiles the configuration each call: catalog lookups,
 * the MoE curve, the all-reduce table) and a compiled case (model_case_step,
 * what each Monte Carlo draw does per configuration). Runs from the project
 * folder (or $DDT_HOME): make bench. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "calib.h"
#include "fit.h"
#include "err.h"
#include "model.h"

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void)
{
	const char *home = getenv("DDT_HOME");
	char path[4096];
	struct calib cal;
	struct ydiag diag = {0};
	struct model m;
	snprintf(path, sizeof path, "%s/calibration", home && *home ? home : ".");
	if (fit_calib_load(&cal, path, &diag) || model_prepare(&m, &cal, NULL)) {
		ydiag_print(&diag, stderr);
		fprintf(stderr, "bench_model: %s\n", err_msg());
		return 1;
	}
	const struct gpu *b300 = calib_gpu(&cal, "b300");
	const int n = 4000000;
	double sum = 0, t0 = cpu_s();
	for (int i = 0; i < n; i++) {
		struct model_in in = {b300, (enum pipeline_kind)(i & 1), 16, 8 + (i & 63),
				      1 + (i >> 6 & 7), 12, 0};
		struct model_out o;
		model_eval(&m, &in, &o);
		sum += o.tok_s;
	}
	double generic = n / (cpu_s() - t0);

	struct model_case k[64];
	for (int i = 0; i < 64; i++) {
		struct model_in in = {b300, (enum pipeline_kind)(i & 1), 16, 8 + i, 1 + (i & 7), 12, 0};
		model_case_init(&k[i], &m, &in);
	}
	const int nc = 50000000;
	t0 = cpu_s();
	for (int i = 0; i < nc; i++)
		sum += model_case_step(&m, &k[i & 63]);
	double compiled = nc / (cpu_s() - t0);

	printf("bench_model: model_eval          %6.1f million evaluations/s on one core "
	       "(target >= 10)%s\n", generic / 1e6, generic >= 10e6 ? "" : "  BELOW TARGET");
	printf("bench_model: compiled case step  %6.1f million evaluations/s on one core\n",
	       compiled / 1e6);
	printf("bench_model: (checksum %.6g)\n", sum);
	calib_free(&cal);
	return 0;
}
