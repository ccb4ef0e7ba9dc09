/* bench_model.c - how many decode-step model evaluations one core does per second.
 *
 * Target (issue #2): >= 10 million per second on one core. Three figures:
 * the generic model_eval (compiles the configuration each call: catalog
 * lookups, the MoE curve, the all-reduce table), a compiled case
 * (model_case_step, what each Monte Carlo draw does per configuration), and
 * the same step as a numpy vectorised loop over draws x cases
 * (bench/peer_model.py from build/peer-venv, made by bench/venv.sh), which
 * must give the same steps; the compiled step's rate as a ratio of numpy's.
 * Runs from the project folder: make bench. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calib.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "fsx.h"
#include "model.h"
#include "venv.h"

#define PEER_EVALUATIONS 20e6 /* the numpy peer's case-steps */

static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Writes m's values and the ncases compiled cases k (with the step each
 * gives) for bench/peer_model.py, in its CASE_FIELDS order. */
static int write_cases(const char *path, const struct model *m, const struct model_case *k,
		       int ncases)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "form %.17g\nz_x %.17g\nmoe_scale %.17g\nc_xfer %.17g\nxfer_curve %d\n"
		   "c_inv_ceff %.17g\nc_pcie %.17g\nc_attn %.17g\nc_attn_g %.17g\n"
		   "c_draft %.17g\nc_draft_g %.17g\nc_over %.17g\ntree_kernels %d\n"
		   "c_cut0 %.17g\nc_cut1 %.17g\nc_tree0 %.17g\nc_tree1 %.17g\nc_tn0 %.17g\n"
		   "c_tn1 %.17g\nanchor_context %.17g\nattn_ctx_eff %.17g\nv",
		m->form, m->z_x, m->moe_scale, m->c_xfer, m->xfer_curve, m->c_inv_ceff, m->c_pcie,
		m->c_attn, m->c_attn_g, m->c_draft, m->c_draft_g, m->c_over, m->tree_kernels,
		m->c_cut[0], m->c_cut[1], m->c_tree0, m->c_tree1, m->c_tn0, m->c_tn1,
		m->v[ASM_ANCHOR_CONTEXT], m->v[ASM_ATTN_CTX_EFF]);
	for (int i = 0; i < CALIB_MAX_ASM; i++)
		fprintf(f, " %.17g", m->v[i]);
	for (int i = 0; i < ncases; i++) {
		const struct model_case *c = &k[i];
		fprintf(f, "\ncase %.17g %.17g %.17g %d %.17g %.17g %.17g %d %.17g %.17g %.17g %.17g "
			   "%.17g %.17g %.17g %d %.17g %.17g %.17g %.17g %.17g",
			c->moe_lr, c->moe_x_sig, c->moe_mem_ms, c->xfer, c->xfer_adj, c->moe_flop_ms,
			c->ar_small_ms, c->ar_pcie, c->ar_link_ms, c->bwr_anchor, c->attn_c,
			c->attn_g, c->spec, c->draft_c, c->draft_g, c->pipeline == PIPE_NATIVE,
			c->tree_meas_ms, c->tree_x, c->context, c->ctx_ms_tok, model_case_step(m, c));
	}
	fputc('\n', f);
	return fclose(f) ? -1 : 0;
}

/* Runs the numpy peer on k; its rate into *rate and its largest relative
 * difference from model_case_step into *diff. Returns 0, or -1 (said why). */
static int peer_rate(const struct model *m, const struct model_case *k, int ncases,
		     double *rate, double *diff)
{
	char dir[] = "/tmp/ddt-bench-model-XXXXXX", path[64], py[1024], cmd[1400], line[256];
	int rc = -1, got = 0;
	if (bench_venv_python("build/peer-venv", "bench/peer-requirements.txt", py, sizeof py))
		return printf("bench_model: no numpy peer (bench/venv.sh could not make "
			      "build/peer-venv; why above)\n"), -1;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/cases.txt", dir);
	snprintf(cmd, sizeof cmd, "%s bench/peer_model.py %s %.0f", py, path, PEER_EVALUATIONS);
	FILE *fp = write_cases(path, m, k, ncases) == 0 ? popen(cmd, "r") : NULL;
	while (fp && fgets(line, sizeof line, fp))
		got += sscanf(line, "evaluations_per_s %lf", rate) == 1 ||
		       sscanf(line, "max_rel_diff %lf", diff) == 1;
	if (fp && pclose(fp) == 0 && got == 2)
		rc = 0;
	else
		printf("bench_model: bench/peer_model.py failed\n");
	fsx_rm_rf(dir);
	return rc;
}

int main(void)
{
	const char *home = getenv("DDT_HOME");
	char path[4096];
	struct calib cal;
	struct calibration cal_d;
	struct ydiag diag = {0};
	struct model m;
	snprintf(path, sizeof path, "%s/calibration", home && *home ? home : ".");
	if (calibrate_load(&cal, &cal_d, path, NULL, &diag) || model_prepare(&m, &cal, &cal_d, NULL)) {
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
	double peer = 0, diff = NAN;
	if (peer_rate(&m, k, 64, &peer, &diff) == 0)
		printf("bench_model: numpy vectorised   %6.1f million evaluations/s on one core "
		       "(bench/peer_model.py, draws x cases; largest difference from the compiled "
		       "step %.1e): compiled / numpy %.1fx\n",
		       peer / 1e6, diff, compiled / peer);
	printf("bench_model: (checksum %.6g)\n", sum);
	calib_free(&cal);
	return 0;
}
