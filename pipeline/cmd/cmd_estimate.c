/* cmd_estimate.c - `ddt estimate`: decode throughput for scenarios, with what-ifs. */
#include "cmd.h"

#include "calib.h"
#include "fit.h"
#include "err.h"
#include "estimate.h"
#include "model.h"
#include "project.h"
#include "tmpl.h"
#include "ydoc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct estimate_args {
	struct paths paths;
	struct cli_list scenarios, sets;
	const char *format, *curve, *moe_reference;
	int samples, sensitivity, grid;
	double seed; /* -1: the template's */
	/* ad hoc: a scenario from the options (NULL, 0, budget -1: not given) */
	const char *target, *pipeline, *accept, *estimator;
	int block, budget, concurrency;
};

typedef struct estimate_args A;
static const struct cli_opt estimate_opts[] = {
	CLI_OPT_LIST(A, scenarios, "scenario", "NAME", "a scenario of the template (repeatable)"),
	CLI_OPT_STR(A, target, 0, "target", "GPU",
		    "ad hoc: target GPU from the catalog (default b300)"),
	CLI_OPT_CHOICE(A, pipeline, "pipeline", "P", "sglang|native",
		       "ad hoc: sglang or native (default native)"),
	CLI_OPT_INT(A, block, "block", "N", 1, 1e6, "ad hoc: drafter block size (default 8)"),
	CLI_OPT_INT(A, budget, "budget", "N", 0, 1e6,
		    "ad hoc: tree node budget, root excluded (default 8);\n"
		    "0: no speculation, the autoregressive baseline (M = C,\n"
		    "accept 1)"),
	CLI_OPT_STR(A, accept, 0, "accept", "LIST", "ad hoc: mean acceptance lengths, e.g. 12,14,16"),
	CLI_OPT_INT(A, concurrency, "concurrency", "N", 1, 1e6,
		    "ad hoc: sequences decoded at once (default 1)"),
	CLI_OPT_CHOICE(A, estimator, "estimator", "E", "calibrated|seed",
		       "ad hoc: calibrated (default: ddt's, headline the\n"
		       "median) or seed (the seed's assumptions)\n"
		       "(with one --scenario, ad hoc options change that\n"
		       "scenario)"),
	CLI_OPT_LIST(A, sets, "set", "KEY=VALUE",
		     "override a calibration value or assumption, e.g.\n"
		     "native_cut=0.3, gpus.b300.bw_tbps=7.7,\n"
		     "moe_transfer.rtx_pro_6000.b300=1.25 (every M range\n"
		     "of the pair), moe_reference.gpu=h200 (its measured\n"
		     "curve as the reference) (repeatable, applied in order)"),
	CLI_OPT_CHOICE(A, curve, "moe-curve", "C", "linear|physical",
		       "linear (the seed's line) or physical (the fitted curve)"),
	CLI_OPT_STR(A, moe_reference, 0, "moe-reference", "F",
		    "the MoE reference curve from a CSV:\n"
		    "gpu,m,step_ms[,source] (one GPU; step_ms per decode\n"
		    "step, every MoE layer)"),
	CLI_OPT_INT(A, samples, "samples", "N", 100, 1e6,
		    "Monte Carlo draws for the bands (default: the\n"
		    "template's, 20000)"),
	CLI_OPT_WHOLE(A, seed, "seed", "S", 0, 9007199254740992.0,
		      "their seed (default: the template's); same inputs,\n"
		      "same output"),
	CLI_OPT_FLAG(A, sensitivity, 0, "sensitivity",
		     "also print the tornado: each assumption at its p5 and p95"),
	CLI_OPT_FLAG(A, grid, 0, "grid", "also print the best budget per target and concurrency"),
	CLI_OPT_CHOICE(A, format, "format", "F", "table|csv|yaml", "table (default), csv or yaml"),
	CLI_OPT_PATHS(A, paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_estimate_spec = {
	.name = "estimate",
	.usage = "estimate [OPTIONS]",
	.about = "Projects decode throughput (tok/s) with the step-time model. Without\n"
		 "--scenario and ad hoc options, every scenario of the template. Each row\n"
		 "shows its estimator's point (seed: the seed's assumptions; calibrated:\n"
		 "ddt's median), its p5-p95 band and where the other estimator falls in it.\n"
		 "Ad hoc scenarios are calibrated; several --accept values are a range.",
	.opts = estimate_opts,
	.after = "example: ddt estimate --scenario seed-b16-native --accept 10,12 \\\n"
		 "             --set native_cut=0.3",
};

/* What the command works with, freed by inputs_free. */
struct inputs {
	struct calib cal;
	struct tmpl t;
	struct project_config cfg;
	struct scenario *scs;
	size_t nscs;
};

static void inputs_free(struct inputs *in)
{
	free(in->scs);
	tmpl_free(&in->t);
	calib_free(&in->cal);
}

static int ad_hoc_given(const struct estimate_args *a)
{
	return a->target || a->pipeline || a->accept || a->estimator || a->block ||
	       a->budget >= 0 || a->concurrency;
}

static int parse_accept(const char *list, struct scenario *s)
{
	char buf[256], *save = NULL;
	snprintf(buf, sizeof buf, "%s", list);
	s->naccept = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double v;
		if (s->naccept == TMPL_MAX_ACCEPT || ynum_parse(tok, &v) || !(v > 0))
			return cli_usage_error("estimate",
					       "--accept: expected up to %d positive numbers, got '%s'",
					       TMPL_MAX_ACCEPT, list);
		s->accept[s->naccept++] = v;
	}
	return s->naccept ? 0 : cli_usage_error("estimate", "--accept: empty list");
}

/* Applies the ad hoc options to s (a named scenario or the defaults);
 * returns 0 or the exit status of a usage error. */
static int apply_ad_hoc(const struct estimate_args *a, struct scenario *s)
{
	if (a->target)
		snprintf(s->target, sizeof s->target, "%s", a->target);
	if (a->pipeline)
		pipeline_parse(a->pipeline, &s->pipeline); /* one of its choices */
	if (a->estimator)
		estimator_parse(a->estimator, &s->estimator);
	if (a->block)
		s->block = a->block;
	if (a->budget >= 0)
		s->budget = a->budget;
	if (a->concurrency)
		s->concurrency = a->concurrency;
	if (a->accept && parse_accept(a->accept, s))
		return 2;
	if (s->budget == 0) {
		/* no speculation: every step keeps its one token */
		for (int i = 0; i < s->naccept; i++)
			if (s->accept[i] != 1)
				return cli_usage_error("estimate", "--budget 0 is the autoregressive "
						       "baseline: its acceptance is 1, got %g",
						       s->accept[i]);
		s->naccept = 1;
		s->accept[0] = 1;
	}
	if (!s->naccept)
		return cli_usage_error("estimate", "--accept is required for an ad hoc scenario");
	for (int i = 0; i < s->naccept; i++)
		if (s->accept[i] > s->block)
			return cli_usage_error("estimate", "acceptance %g exceeds the block size %d",
					       s->accept[i], s->block);
	return 0;
}

/* Loads calibration, template and projection settings, then applies
 * --moe-reference, --set, --moe-curve, --samples, --seed, --sensitivity and
 * --grid. Returns 0 or the exit status, the error printed. */
static int load_inputs(struct inputs *in, const struct estimate_args *a)
{
	struct ydiag diag = {0};
	int rc = fit_calib_load(&in->cal, a->paths.calibration, &diag);

	if (!rc)
		rc = tmpl_load(&in->t, a->paths.template_path, &diag);
	if (!rc)
		rc = project_config_load(&in->cfg, &in->t, &diag);
	if (rc) {
		fprintf(stderr, "ddt estimate: %s\n", diag.n ? diag.msgs[0] : err_msg());
		ydiag_free(&diag);
		return err_exit_status(rc);
	}
	if (a->moe_reference && (rc = calib_reference_csv(&in->cal, a->moe_reference)) != 0)
		return cli_fail("estimate", rc);
	for (int i = 0; i < a->sets.n; i++)
		if ((rc = calib_set_arg(&in->cal, a->sets.v[i])) != 0)
			return cli_fail("estimate", rc);
	if (a->curve && (rc = calib_set(&in->cal, "moe_reference.curve", a->curve)) != 0)
		return cli_fail("estimate", rc);
	if (a->samples)
		in->cfg.samples = a->samples;
	if (a->seed >= 0)
		in->cfg.seed = (uint64_t)a->seed;
	in->cfg.sensitivity = a->sensitivity;
	in->cfg.grid = a->grid;
	return 0;
}

/* The scenarios to estimate: those named, one of them (or the defaults)
 * changed by the ad hoc options, else all of the template's. Returns 0 or
 * the exit status, the error printed. */
static int pick_scenarios(struct inputs *in, const struct estimate_args *a)
{
	static const struct scenario ad_hoc = {.name = "adhoc", .target = "b300",
					       .pipeline = PIPE_NATIVE, .block = 8, .budget = 8,
					       .concurrency = 1, .runnable = 1};
	if (!(in->scs = calloc((size_t)a->scenarios.n + 1 + in->t.nscenarios, sizeof *in->scs)))
		return cli_fail("estimate", err_nomem());
	for (int i = 0; i < a->scenarios.n; i++) {
		const struct scenario *s = tmpl_scenario(&in->t, a->scenarios.v[i]);
		if (!s)
			return cli_usage_error("estimate", "no scenario '%s' in %s",
					       a->scenarios.v[i], a->paths.template_path);
		in->scs[in->nscs++] = *s;
	}
	if (ad_hoc_given(a)) {
		if (!in->nscs)
			in->scs[in->nscs++] = ad_hoc;
		return apply_ad_hoc(a, &in->scs[0]);
	}
	if (!in->nscs)
		for (size_t i = 0; i < in->t.nscenarios; i++)
			in->scs[in->nscs++] = in->t.scenarios[i];
	return 0;
}

/* True when a row's attention or draft grow past the anchors' (the only rows
 * the growth concerns). */
static int grows(const struct estimate *e, const struct model *m)
{
	int any = 0;
	for (size_t i = 0; i < e->n; i++)
		any |= e->rows[i].out.M != m->m0 ||
		       e->rows[i].sc.concurrency * e->rows[i].sc.block != m->draft0;
	return any;
}

/* Evaluates and projects the scenarios and prints them in a's format.
 * Returns the exit status. */
static int estimate_print(const struct inputs *in, const struct estimate_args *a)
{
	struct projection proj = {0};
	struct estimate e = {0};
	struct model m;
	int rc, status = 0;

	if ((rc = model_prepare(&m, &in->cal, NULL)) != 0 ||
	    (rc = project_scenarios(&proj, &in->cal, in->scs, in->nscs, NULL, &in->cfg)) ||
	    (rc = estimate_from_projection(&e, &proj, &in->cal))) {
		status = cli_fail("estimate", rc);
		goto done;
	}
	if (!strcmp(a->format, "csv"))
		estimate_write_csv(&e, &proj, stdout);
	else if (!strcmp(a->format, "yaml"))
		estimate_write_yaml(&e, &proj, stdout);
	else {
		estimate_write_table(&e, &m, stdout);
		fputc('\n', stdout);
		project_write_text(&proj,
				   PROJECT_TEXT_BANDS | PROJECT_TEXT_FIT |
					   (a->sensitivity ? PROJECT_TEXT_TORNADO : 0) |
					   (a->grid ? PROJECT_TEXT_GRID : 0),
				   stdout);
	}
	if (m.growth_clamped && grows(&e, &m))
		fprintf(stderr, "ddt estimate: warning: the sglang_b16 anchor cannot be met with "
				"these shares; growth clamped to %g\n",
			m.growth);
	if (fflush(stdout) != 0)
		status = 1;
done:
	project_free(&proj);
	estimate_free(&e);
	return status;
}

int cmd_estimate(int argc, char **argv)
{
	struct estimate_args a = {.format = "table", .seed = -1, .budget = -1};
	struct inputs in;
	int first, status;

	paths_init(&a.paths, "default");
	if ((status = cli_parse(&cmd_estimate_spec, &a, argc, argv, &first)) >= 0)
		return status;
	if (ad_hoc_given(&a) && a.scenarios.n > 1)
		return cli_usage_error("estimate", "ad hoc options change one --scenario, not %d",
				       a.scenarios.n);
	memset(&in, 0, sizeof in);
	if ((status = load_inputs(&in, &a)) == 0 && (status = pick_scenarios(&in, &a)) == 0)
		status = estimate_print(&in, &a);
	inputs_free(&in);
	return status;
}
