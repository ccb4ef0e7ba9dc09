/* cmd_estimate.c - `ddt estimate`: decode throughput for scenarios, with what-ifs. */
#include "cmd.h"

#include "calib.h"
#include "csv.h"
#include "calibrate.h"
#include "fit.h"
#include "err.h"
#include "estimate.h"
#include "estimate_schema.h"
#include "fsx.h"
#include "model.h"
#include "project.h"
#include "project_schema.h"
#include "tmpl.h"
#include "ydoc.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct estimate_args {
	struct paths paths;
	struct cli_list scenarios, sets;
	const char *format, *curve, *moe_reference, *replay, *acceptance, *context;
	int samples, sensitivity, grid, keys, brief;
	double seed; /* -1: the template's */
	/* ad hoc: a scenario from the options (NULL, 0, budget -1: not given) */
	const char *target, *pipeline, *accept, *estimator;
	int block, budget, concurrency;
};

typedef struct estimate_args A;
static const struct cli_opt estimate_opts[] = {
	CLI_OPT_LIST(A, scenarios, "scenario", "NAME", "a scenario of the template (repeatable)"),
	CLI_OPT_KEY(A, target, "target", "GPU", &tmpl_scenario_schema, "target",
		    "ad hoc: target GPU from the catalog"),
	CLI_OPT_KEY(A, pipeline, "pipeline", "P", &tmpl_scenario_schema, "pipeline",
		    "ad hoc: sglang or native"),
	CLI_OPT_KEY(A, block, "block", "N", &tmpl_scenario_schema, "block",
		    "ad hoc: drafter block size"),
	/* not the scenario's budget entry: 0 is the ad hoc autoregressive
	 * baseline, which a template's scenario never is */
	CLI_OPT_INT(A, budget, "budget", "N", 0, 1e6,
		    "ad hoc: tree node budget, root excluded;\n"
		    "0: no speculation, the autoregressive baseline (M = C,\n"
		    "accept 1)"),
	CLI_OPT_STR(A, accept, 0, "accept", "LIST",
		    "ad hoc: mean acceptance lengths, e.g. 12,14,16, or\n"
		    "curve: the acceptance source's (a trace, --acceptance)\n"
		    "at the block and budget"),
	CLI_OPT_KEY(A, concurrency, "concurrency", "N", &tmpl_scenario_schema, "concurrency",
		    "ad hoc: sequences decoded at once (what an ad hoc\n"
		    "option leaves out comes from the template's\n"
		    "projection.ad_hoc scenario)"),
	CLI_OPT_KEY(A, estimator, "estimator", "E", &tmpl_scenario_schema, "estimator",
		    "ad hoc: calibrated (ddt's, its point on the band's\n"
		    "median) or seed (the seed's assumptions)\n"
		    "(with one --scenario, ad hoc options change that\n"
		    "scenario)"),
	CLI_OPT_LIST(A, sets, "set", "KEY=VALUE",
		     "override a calibration value or assumption by the\n"
		     "key the outputs show it under, e.g. native_cut=0.3,\n"
		     "gpus.b300.bw_tbps=7.7, moe_transfer.rtx_pro_6000.b300\n"
		     "=1.25 (every M range of the pair), moe_reference.gpu\n"
		     "=h200 (its measured curve as the reference),\n"
		     "allreduce.b300.step_ms_at_m9=0.5, law.attn_lmhead=0.4\n"
		     "(repeatable, applied in order; --keys lists them)"),
	CLI_OPT_KEY(A, curve, "moe-curve", "C", &project_schema_head, "curve",
		    "linear (the seed's line) or physical (the fitted curve)"),
	CLI_OPT_STR(A, context, 0, "context", "LIST",
		    "tokens of context before the root, e.g.\n"
		    "4096,32768,131072: every scenario once per value\n"
		    "(named NAME@ctxN); default: the anchors' context, an\n"
		    "assumption (anchor_context)"),
	CLI_OPT_STR(A, acceptance, 0, "acceptance", "TRACE",
		    "the acceptance source: a drafter trace (the format\n"
		    "of ddt acceptance) replayed at every budget, its\n"
		    "bootstrap interval sampled, instead of the template's\n"
		    "projection.acceptance_curve"),
	CLI_OPT_STR(A, moe_reference, 0, "moe-reference", "F",
		    "the MoE reference curve from a CSV:\n"
		    "gpu,m,step_ms[,source] (one GPU; step_ms per decode\n"
		    "step, every MoE layer)"),
	/* the numbers the template's projection.samples and seed take */
	CLI_OPT_KEY(A, samples, "samples", "N", &project_config_schema, "samples",
		    "Monte Carlo draws for the bands (default: the\n"
		    "template's)"),
	CLI_OPT_KEY(A, seed, "seed", "S", &project_config_schema, "seed",
		    "their seed (default: the template's); same inputs,\n"
		    "same output"),
	CLI_OPT_FLAG(A, sensitivity, 0, "sensitivity",
		     "also print the tornado: each assumption at its p5 and p95"),
	CLI_OPT_FLAG(A, grid, 0, "grid", "also print the best budget per target and concurrency"),
	CLI_OPT_CHOICE(A, format, "format", "F", "table|csv|yaml|json",
		       "table (default), csv, yaml or json (the yaml's\n"
		       "fields); csv, yaml and json carry the tornado and the\n"
		       "grid in sections of their own, the calibration's\n"
		       "hash, the arguments and every override"),
	CLI_OPT_FLAG(A, brief, 0, "brief",
		     "print only the answer: one line per scenario (the\n"
		     "table's first lines)"),
	CLI_OPT_STR(A, replay, 0, "replay", "FILE",
		    "make again the estimate a --format yaml, json or csv\n"
		    "output records (the same calibration, template\n"
		    "and arguments; refused when a file changed since),\n"
		    "in the record's format unless --format says\n"
		    "otherwise"),
	CLI_OPT_FLAG(A, keys, 0, "keys",
		     "list every KEY --set takes, with its value, and exit"),
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
		 "Ad hoc scenarios are calibrated; several --accept values are a range.\n"
		 "The table starts with the answer (--brief: only the answer), then each\n"
		 "scenario's step, the inputs under their --set keys, the bands and notes.",
	.opts = estimate_opts,
	.after = "example: ddt estimate --scenario seed-b16-native --accept 10,12 \\\n"
		 "             --set native_cut=0.3",
};

/* What the command works with, freed by inputs_free. */
struct inputs {
	struct calib cal;
	struct calibration der;
	struct tmpl t;
	struct project_config cfg;
	struct scenario *scs;
	size_t nscs;
	char tmpl_hash[40], ref_hash[40]; /* the template's and --moe-reference's ("" : none) */
};

/* "fnv1a64:<hex>" of the file at path into out[40]; 0 or the read's error. */
static int file_hash(const char *path, char *out)
{
	uint64_t h = FSX_HASH_SEED;
	int rc = fsx_hash_file(&h, path, 64u << 20);
	snprintf(out, 40, "fnv1a64:%016" PRIx64, h);
	return rc;
}

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
	s->accept_curve = !strcmp(list, "curve");
	if (s->accept_curve)
		return 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double v;
		if (s->naccept == TMPL_MAX_ACCEPT || yget_parse_num(tok, &v) || !(v > 0))
			return cli_usage_error("estimate",
					       "--accept: expected up to %d positive numbers, got '%s'",
					       TMPL_MAX_ACCEPT, list);
		if (v < 1) /* every step keeps at least the token the target model adds */
			return cli_usage_error("estimate",
					       "--accept: %g is below 1 (a mean acceptance length "
					       "counts the token every step keeps: 1 to the block size)",
					       v);
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
		tmpl_pipeline_parse(a->pipeline, &s->pipeline); /* one of its choices */
	if (a->estimator)
		tmpl_estimator_parse(a->estimator, &s->estimator);
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
		s->accept_curve = 0;
	}
	if (!s->naccept && !s->accept_curve)
		return cli_usage_error("estimate", "--accept is required for an ad hoc scenario");
	for (int i = 0; i < s->naccept; i++)
		if (s->accept[i] > s->block)
			return cli_usage_error("estimate", "acceptance %g exceeds the block size %d",
					       s->accept[i], s->block);
	return 0;
}

/* Loads the calibration with --moe-reference, --set and --moe-curve
 * (calibrate_opts), template and projection settings, then applies
 * --samples, --seed, --sensitivity and --grid. Returns 0 or the exit status,
 * the error printed. */
static int load_inputs(struct inputs *in, const struct estimate_args *a)
{
	struct ydiag diag = {0};
	struct calibrate_opts o = {a->moe_reference, a->sets.v, a->sets.n, a->curve, NULL};
	int rc = calibrate_load(&in->cal, &in->der, a->paths.calibration, &o, &diag);

	if (rc && !diag.n) /* a change the command line asked for */
		return cli_fail("estimate", rc);
	if (!rc)
		rc = tmpl_load(&in->t, a->paths.template_path, &diag);
	if (!rc)
		rc = project_config_load(&in->cfg, &in->t, &diag);
	if (rc) {
		fprintf(stderr, "ddt estimate: %s\n", diag.n ? diag.msgs[0] : err_msg());
		ydiag_free(&diag);
		return err_exit_status(rc);
	}
	if (file_hash(a->paths.template_path, in->tmpl_hash) ||
	    (a->moe_reference && file_hash(a->moe_reference, in->ref_hash)))
		in->tmpl_hash[0] = in->ref_hash[0] = '\0'; /* unreadable: the loads say why */
	if (a->samples)
		in->cfg.samples = a->samples;
	if (a->seed >= 0)
		in->cfg.seed = (uint64_t)a->seed;
	in->cfg.sensitivity = a->sensitivity;
	in->cfg.grid = a->grid;
	if (a->acceptance) {
		if (strlen(a->acceptance) >= sizeof in->cfg.accept_trace)
			return cli_usage_error("estimate", "--acceptance: the path is longer than %zu "
					       "bytes", sizeof in->cfg.accept_trace - 1);
		in->cfg.accept_kind = ACCEPT_TRACE;
		in->cfg.accept_from[0] = '\0'; /* a drafter trace */
		snprintf(in->cfg.accept_trace, sizeof in->cfg.accept_trace, "%s", a->acceptance);
	}
	return 0;
}

/* The scenarios to estimate: those named, one of them (or the template's
 * projection.ad_hoc scenario, its acceptances dropped) changed by the ad hoc
 * options, else all of the template's. Returns 0 or the exit status, the
 * error printed. */
static int pick_scenarios(struct inputs *in, const struct estimate_args *a)
{
	if (!(in->scs = calloc((size_t)a->scenarios.n + 1 + in->t.nscenarios, sizeof *in->scs)))
		return cli_fail("estimate", err_nomem());
	for (int i = 0; i < a->scenarios.n; i++) {
		const struct scenario *s = tmpl_scenario(&in->t, a->scenarios.v[i]);
		if (!s) {
			char names[1024];
			cmd_scenario_names(&in->t, names, sizeof names);
			return cli_usage_error("estimate", "no scenario '%s' in %s; its scenarios: %s",
					       a->scenarios.v[i], a->paths.template_path, names);
		}
		in->scs[in->nscs++] = *s;
	}
	if (a->target && !calib_gpu(&in->cal, a->target)) {
		char names[512];
		cmd_gpu_names(&in->cal, names, sizeof names);
		return cli_usage_error("estimate", "--target: '%s' is not in the GPU catalog; its "
				       "GPUs: %s", a->target, names);
	}
	if (ad_hoc_given(a)) {
		if (!in->nscs) {
			struct scenario *s = &in->scs[in->nscs++];
			*s = *tmpl_scenario(&in->t, in->cfg.ad_hoc); /* checked by the loader */
			snprintf(s->name, sizeof s->name, "adhoc");
			s->naccept = 0;
			s->accept_curve = 0;
			s->runnable = 1;
			s->note[0] = '\0';
		}
		return apply_ad_hoc(a, &in->scs[0]);
	}
	if (!in->nscs)
		for (size_t i = 0; i < in->t.nscenarios; i++)
			in->scs[in->nscs++] = in->t.scenarios[i];
	return 0;
}

#define ESTIMATE_MAX_CONTEXTS 8

/* --context LIST: every scenario once per context, named NAME@ctxN.
 * Returns 0 or the exit status, the error printed. */
static int expand_contexts(struct inputs *in, const char *list)
{
	char buf[256], *save = NULL;
	int ctx[ESTIMATE_MAX_CONTEXTS], n = 0;
	snprintf(buf, sizeof buf, "%s", list);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		double v;
		if (n == ESTIMATE_MAX_CONTEXTS || yget_parse_num(tok, &v) || !(v >= 1) || v != floor(v) ||
		    v > in->cal.model.context_tokens)
			return cli_usage_error("estimate", "--context: expected up to %d whole numbers "
					       "of tokens, 1 to the model's %g, got '%s'",
					       ESTIMATE_MAX_CONTEXTS, in->cal.model.context_tokens, list);
		ctx[n++] = (int)v;
	}
	if (!n)
		return cli_usage_error("estimate", "--context: empty list");
	struct scenario *out = calloc(in->nscs * (size_t)n, sizeof *out);
	if (!out)
		return cli_fail("estimate", err_nomem());
	for (size_t i = 0; i < in->nscs; i++)
		for (int j = 0; j < n; j++) {
			struct scenario *s = &out[i * (size_t)n + (size_t)j];
			char name[sizeof s->name + 16];
			*s = in->scs[i];
			s->context = ctx[j];
			snprintf(name, sizeof name, "%s@ctx%d", in->scs[i].name, ctx[j]);
			if (strlen(name) >= sizeof s->name) {
				free(out);
				return cli_usage_error("estimate", "--context: '%s' is too long a name",
						       name);
			}
			snprintf(s->name, sizeof s->name, "%s", name);
		}
	free(in->scs);
	in->scs = out;
	in->nscs *= (size_t)n;
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

/* The arguments that make this estimate again, in a canonical order (the
 * template's samples and seed made explicit), into args[]; strings in buf. */
struct canon {
	int n;
	const char *v[2 * (2 * CLI_LIST_MAX + 16)];
	char num[8][32];
};

static void canon_add(struct canon *c, const char *opt, const char *val)
{
	c->v[c->n++] = opt;
	if (val)
		c->v[c->n++] = val;
}

static const char *canon_num(struct canon *c, int k, unsigned long long v)
{
	snprintf(c->num[k], sizeof c->num[k], "%llu", v);
	return c->num[k];
}

static void canon_args(struct canon *c, const struct estimate_args *a, const struct inputs *in)
{
	c->n = 0;
	for (int i = 0; i < a->scenarios.n; i++)
		canon_add(c, "--scenario", a->scenarios.v[i]);
	if (a->target)
		canon_add(c, "--target", a->target);
	if (a->pipeline)
		canon_add(c, "--pipeline", a->pipeline);
	if (a->block)
		canon_add(c, "--block", canon_num(c, 0, (unsigned)a->block));
	if (a->budget >= 0)
		canon_add(c, "--budget", canon_num(c, 1, (unsigned)a->budget));
	if (a->accept)
		canon_add(c, "--accept", a->accept);
	if (a->concurrency)
		canon_add(c, "--concurrency", canon_num(c, 2, (unsigned)a->concurrency));
	if (a->estimator)
		canon_add(c, "--estimator", a->estimator);
	for (int i = 0; i < a->sets.n; i++)
		canon_add(c, "--set", a->sets.v[i]);
	if (a->curve)
		canon_add(c, "--moe-curve", a->curve);
	if (a->moe_reference)
		canon_add(c, "--moe-reference", a->moe_reference);
	if (a->acceptance)
		canon_add(c, "--acceptance", a->acceptance);
	if (a->context)
		canon_add(c, "--context", a->context);
	canon_add(c, "--samples", canon_num(c, 3, (unsigned)in->cfg.samples));
	canon_add(c, "--seed", canon_num(c, 4, (unsigned long long)in->cfg.seed));
	if (a->sensitivity)
		canon_add(c, "--sensitivity", NULL);
	if (a->grid)
		canon_add(c, "--grid", NULL);
}

/* The answer, first in the table (alone with --brief), one line per
 * projected row: a calibrated row's median tok/s, a seed row's own figure
 * (the seed estimator has no band), each beside ddt's p5-p95 for that
 * configuration and over the measured baseline the model is pinned to. */
static void answer_write(const struct projection *p, const struct calib *cal, FILE *fp)
{
	const struct anchor *b = &cal->sglang_b8;
	const struct gpu *bg = calib_gpu(cal, b->gpu);
	int base = isfinite(b->tok_s) && b->tok_s > 0;
	fprintf(fp, "answer: decode tok/s; calibrated: the median of %d draws (seed %llu), seed: "
		    "the seed estimator's figure, each beside ddt's p5-p95;\n        x: over the "
		    "measured baseline, ",
		p->samples, (unsigned long long)p->seed);
	if (base)
		fprintf(fp, "%.1f tok/s", b->tok_s);
	else
		fprintf(fp, "none (the anchor gives a %.3f ms step, no tok/s)", b->step_ms);
	fprintf(fp, " (%s, block %g, budget %g, C=%g on %s)\n",
		b->pipeline == PIPE_NATIVE ? "native" : "SGLang", b->block, b->budget,
		b->concurrency, bg ? bg->name : b->gpu);
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *r = &p->rows[i];
		int seed = r->estimator == EST_SEED;
		double tok = seed ? r->tok_s.point : r->tok_s.p50;
		char acc[48], x[24] = "-", band[48] = "-", more[96];
		if (r->accept_hi > r->accept_lo && strcmp(r->accept_from, "trace"))
			snprintf(acc, sizeof acc, "%g-%g", r->accept_lo, r->accept_hi);
		else
			snprintf(acc, sizeof acc, "%.3g", r->accept);
		if (base)
			snprintf(x, sizeof x, "x%.2f", tok / b->tok_s);
		if (isfinite(r->tok_s.p5))
			snprintf(band, sizeof band, "%.1f-%.1f", r->tok_s.p5, r->tok_s.p95);
		if (seed)
			snprintf(more, sizeof more, "at p%.0f of the band; ddt's median %.1f",
				 r->point_pctile, r->tok_s.p50);
		else
			snprintf(more, sizeof more, "point %.1f; seed's %.1f at p%.0f", r->tok_s.point,
				 r->other_tok_s, r->other_pctile);
		fprintf(fp, "  %-18s %-10s %s C=%d accept %-6s %7.1f tok/s %-6s  p5-p95 %-13s %-6s %s%s\n",
			r->scenario, tmpl_estimator_name(r->estimator), r->target, r->concurrency, acc,
			tok, seed ? "seed" : "median", band, x, more,
			r->runnable ? "" : "  [not runnable]");
	}
}

struct yaml_of {
	const struct estimate *e;
	const struct projection *p;
	const struct estimate_source *src;
};

static void yaml_of_write(const void *obj, FILE *fp)
{
	const struct yaml_of *y = obj;
	estimate_write_yaml(y->e, y->p, y->src, fp);
}

/* Evaluates and projects the scenarios and prints them in a's format.
 * Returns the exit status. */
static int estimate_print(const struct inputs *in, const struct estimate_args *a)
{
	struct projection proj = {0};
	struct estimate e = {0};
	struct model m;
	struct canon args;
	int rc, status = 0;

	canon_args(&args, a, in);
	struct estimate_source src = {a->paths.calibration, in->cal.hash, a->paths.template_path,
				      in->tmpl_hash, a->moe_reference ? a->moe_reference : "",
				      in->ref_hash, args.n, args.v, &in->cal};

	if ((rc = model_prepare(&m, &in->cal, &in->der, NULL)) != 0 ||
	    (rc = project_scenarios(&proj, &in->cal, &in->der, in->scs, in->nscs, NULL, &in->cfg)) ||
	    (rc = estimate_from_projection(&e, &proj, &in->cal))) {
		status = cli_fail("estimate", rc);
		goto done;
	}
	if (!strcmp(a->format, "csv"))
		estimate_write_csv(&e, &proj, &src, stdout);
	else if (!strcmp(a->format, "yaml"))
		estimate_write_yaml(&e, &proj, &src, stdout);
	else if (!strcmp(a->format, "json")) {
		struct yaml_of y = {&e, &proj, &src};
		if ((rc = cmd_write_json(stdout, yaml_of_write, &y)) != 0)
			status = cli_fail("estimate", rc);
	} else if (a->brief)
		answer_write(&proj, &in->cal, stdout);
	else {
		answer_write(&proj, &in->cal, stdout);
		fputc('\n', stdout);
		estimate_write_table(&e, &m, &proj, stdout);
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

static int key_line(void *ctx, const char *key, const char *value)
{
	char about[240];
	if (calib_key_about(key, about, sizeof about))
		fprintf(ctx, "%-48s %-10s # %s\n", key, value[0] ? value : "-", about);
	else
		fprintf(ctx, "%-48s %s\n", key, value[0] ? value : "-");
	return 0;
}

/* --keys: every key --set takes and its value. Returns the exit status. */
static int keys_print(const struct estimate_args *a)
{
	struct calib cal;
	struct calibration der;
	struct ydiag diag = {0};
	int rc = calibrate_load(&cal, &der, a->paths.calibration, NULL, &diag);
	if (rc) {
		fprintf(stderr, "ddt estimate: %s\n", diag.n ? diag.msgs[0] : err_msg());
		ydiag_free(&diag);
		calib_free(&cal);
		return err_exit_status(rc);
	}
	printf("# every KEY of --set KEY=VALUE, with its value (-: derived by the model, "
	       "or not given)\n# and, for a key of the calibration's tables, what it takes\n");
	calibrate_keys(&cal, &der, key_line, stdout);
	calib_free(&cal);
	return fflush(stdout) ? 1 : 0;
}

/* A recorded estimate: its YAML, what it was made from, its arguments. */
struct replay {
	struct ydoc *doc;             /* a YAML record's */
	char *text;                   /* a CSV record's (its arguments point into it) */
	const char *format;           /* the record's: "yaml" or "csv" */
	struct estimate_origin from;  /* made_from (its arguments' text: doc's or text's) */
	int argc;
	char *argv[ESTIMATE_MAX_ARGS + 2]; /* "estimate", the arguments, NULL */
};

_Static_assert(sizeof((struct canon *)0)->v / sizeof(char *) <= ESTIMATE_MAX_ARGS,
	       "a record's args holds every argument canon_args gives");

/* r's argv: "estimate" and the recorded arguments (text of r->doc or
 * r->text, which cli_parse only reads). */
static void replay_argv(struct replay *r)
{
	const struct estimate_made_from *m = &r->from.made_from;
	r->argc = 0;
	r->argv[r->argc++] = "estimate";
	for (int i = 0; i < m->nargs; i++)
		r->argv[r->argc++] = (char *)m->args[i];
	r->argv[r->argc] = NULL;
}

/* One KEY,VALUE line of a CSV record's made_from into r: a text key of the
 * record's made_from table (its bit set in *seen: the table has fewer than
 * 32 keys), or an argument. Returns 0, or -1 for a value longer than its
 * key holds. */
static int replay_csv_pair(struct replay *r, const char *key, const char *value, unsigned *seen)
{
	const struct yschema *s = &estimate_schema_made_from;
	struct estimate_made_from *m = &r->from.made_from;
	const struct yschema_field *f = yschema_find(s, key);
	size_t n = strlen(value);
	if (f && f->type == YS_STR) {
		if (n >= f->size)
			return -1;
		memcpy((char *)m + f->off, value, n + 1);
		*seen |= 1u << (f - s->fields);
	} else if (!strcmp(key, "arg") && m->nargs < ESTIMATE_MAX_ARGS)
		m->args[m->nargs++] = value;
	return 0;
}

/* Reads the made_from section of a --format csv output (its arguments
 * point into r->text). Returns 0 or the exit status, the error printed as
 * file:line. */
static int replay_read_csv(struct replay *r, const char *path)
{
	const struct yschema *s = &estimate_schema_made_from;
	char *line = strstr(r->text, "\n\nmade_from,value\n"), *f[3];
	int ln = 1;
	unsigned seen = 0;
	r->format = "csv";
	if (!line)
		return cli_usage_error("estimate", "--replay %s: no made_from section (written by "
				       "ddt estimate --format csv?)", path);
	for (char *c = r->text; c < line; c++)
		ln += *c == '\n';
	line += strlen("\n\nmade_from,value\n");
	ln += 3;
	for (char *next; *line && *line != '\n'; line = next, ln++) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (csv_split(line, f, 3) != 2)
			return cli_usage_error("estimate", "--replay %s:%d: expected KEY,VALUE", path, ln);
		/* "'--set" was written for "--set" */
		if (replay_csv_pair(r, f[0], csv_text(f[1]), &seen))
			return cli_usage_error("estimate", "--replay %s:%d: %s is too long",
					       path, ln, f[0]);
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->fields[i].type == YS_STR && (s->fields[i].flags & Y_REQUIRED) &&
		    !(seen & 1u << i))
			return cli_usage_error("estimate", "--replay %s: made_from has no %s", path,
					       s->fields[i].key);
	replay_argv(r);
	return 0;
}

/* Reads made_from of a --format yaml or csv output (the record's table).
 * Returns 0 or the exit status, the error printed as file:line:column. */
static int replay_read(struct replay *r, const char *path)
{
	struct ydiag diag = {0};
	struct yctx c = {path, &diag, NULL};
	size_t len;
	int rc = fsx_read_all(path, 64u << 20, &r->text, &len);

	if (rc)
		return cli_fail("estimate", rc);
	if (!strncmp(r->text, "scenario,", 9))
		return replay_read_csv(r, path);
	r->format = r->text[0] == '{' ? "json" : "yaml"; /* JSON is YAML's flow style */
	rc = ydoc_load_buf(&r->doc, path, r->text, len, &diag);
	if (!rc && (estimate_origin_read(&c, r->doc->root, &r->from) || diag.n))
		rc = DDT_EINPUT;
	if (rc)
		fprintf(stderr, "ddt estimate: --replay %s\n", diag.n ? diag.msgs[0] : err_msg());
	else
		replay_argv(r);
	ydiag_free(&diag);
	return rc ? err_exit_status(rc) : 0;
}

/* True when a holds nothing but --replay, --format and the folders. */
static int only_replay(const struct estimate_args *a)
{
	return !a->scenarios.n && !a->sets.n && !ad_hoc_given(a) && !a->curve &&
	       !a->moe_reference && !a->samples && a->seed < 0 && !a->sensitivity && !a->grid &&
	       !a->keys;
}

/* Turns a into the recorded estimate's arguments (format kept). Returns -1
 * to go on, or the exit status. */
static int replay_args(struct estimate_args *a, struct replay *r)
{
	const char *format = a->format, *path = a->replay;
	int first, status, brief = a->brief;
	if (!only_replay(a))
		return cli_usage_error("estimate", "--replay takes every other option from %s; "
				       "give only --format with it", path);
	if ((status = replay_read(r, path)) != 0)
		return status;
	memset(a, 0, sizeof *a);
	*a = (struct estimate_args){.seed = -1, .budget = -1};
	paths_init(&a->paths, "default");
	if ((status = cli_parse(&cmd_estimate_spec, a, r->argc, r->argv, &first)) >= 0)
		return status ? status : 2;
	snprintf(a->paths.calibration, sizeof a->paths.calibration, "%s",
		 r->from.made_from.calibration);
	snprintf(a->paths.template_path, sizeof a->paths.template_path, "%s",
		 r->from.made_from.template_path);
	a->format = format ? format : r->format;
	a->replay = path;
	a->brief = brief;
	return -1;
}

/* --replay: refuses inputs that changed since the record. Returns 0 or 2. */
static int replay_check(const struct replay *r, const struct inputs *in, const char *path)
{
	const char *what[3] = {"calibration", "template", "--moe-reference file"};
	const struct estimate_made_from *m = &r->from.made_from;
	const char *then[3] = {m->calibration_hash, m->template_hash, m->moe_reference_hash};
	const char *now[3] = {in->cal.hash, in->tmpl_hash, in->ref_hash};
	for (int i = 0; i < 3; i++)
		if (strcmp(then[i], now[i]))
			return cli_usage_error("estimate", "--replay %s: the %s changed since it was "
					       "written (%s then, %s now); its numbers cannot be "
					       "made again", path, what[i], then[i][0] ? then[i] : "none",
					       now[i][0] ? now[i] : "none");
	return 0;
}

int cmd_estimate(int argc, char **argv)
{
	struct estimate_args a = {.seed = -1, .budget = -1};
	struct replay r = {0};
	struct inputs in;
	int first, status;

	paths_init(&a.paths, "default");
	if ((status = cli_parse(&cmd_estimate_spec, &a, argc, argv, &first)) >= 0)
		return status;
	if (a.keys)
		return keys_print(&a);
	if (a.replay && (status = replay_args(&a, &r)) >= 0)
		goto done;
	if (!a.format)
		a.format = "table";
	if (a.brief && strcmp(a.format, "table")) {
		status = cli_usage_error("estimate", "--brief shortens the table; --format %s "
					 "carries everything", a.format);
		goto done;
	}
	if (ad_hoc_given(&a) && a.scenarios.n > 1) {
		status = cli_usage_error("estimate", "ad hoc options change one --scenario, not %d",
					 a.scenarios.n);
		goto done;
	}
	memset(&in, 0, sizeof in);
	if ((status = load_inputs(&in, &a)) == 0 && (!a.replay || !(status = replay_check(&r, &in, a.replay))) &&
	    (status = pick_scenarios(&in, &a)) == 0 &&
	    (!a.context || (status = expand_contexts(&in, a.context)) == 0))
		status = estimate_print(&in, &a);
	inputs_free(&in);
done:
	ydoc_free(r.doc);
	free(r.text);
	return status;
}
