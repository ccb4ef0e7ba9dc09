/* estimate.c - `ddt estimate`: point estimates of decode throughput, with what-ifs. */
#include "estimate.h"
#include "csv.h"

#include "cli.h"
#include "err.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int estimate_run(struct estimate *e, const struct model *m, const struct scenario *scs, size_t n)
{
	const struct calib *c = m->cal;
	size_t total = 0;

	memset(e, 0, sizeof *e);
	for (size_t i = 0; i < n; i++)
		total += (size_t)scs[i].naccept;
	e->rows = calloc(total ? total : 1, sizeof *e->rows);
	if (!e->rows)
		return err_nomem();
	for (size_t i = 0; i < n; i++) {
		const struct scenario *s = &scs[i];
		const struct gpu *g = calib_gpu(c, s->target);
		if (!g) {
			estimate_free(e);
			return err_set(DDT_EINPUT, "scenario %s: target '%s' is not in the GPU catalog",
				       s->name, s->target);
		}
		for (int k = 0; k < s->naccept; k++) {
			struct estimate_row *r = &e->rows[e->n++];
			struct model_in in = {g, s->pipeline, s->block, s->budget, s->concurrency,
					      s->accept[k]};
			r->sc = *s;
			r->target = g;
			r->accept = s->accept[k];
			model_eval(m, &in, &r->out);
			r->runnable = s->runnable;
			snprintf(r->note, sizeof r->note, "%s", s->note);
			if (s->pipeline == PIPE_SGLANG && s->budget > c->sglang_max_budget) {
				r->runnable = 0;
				if (!r->note[0])
					snprintf(r->note, sizeof r->note,
						 "budget > %g needs the native engine",
						 c->sglang_max_budget);
			}
		}
	}
	return 0;
}

int estimate_from_projection(struct estimate *e, const struct projection *p,
			     const struct calib *c)
{
	memset(e, 0, sizeof *e);
	e->rows = calloc(p->nrows ? p->nrows : 1, sizeof *e->rows);
	if (!e->rows)
		return err_nomem();
	for (size_t i = 0; i < p->nrows; i++) {
		const struct project_row *pr = &p->rows[i];
		struct estimate_row *r = &e->rows[e->n++];
		if (!(r->target = calib_gpu(c, pr->target))) {
			estimate_free(e);
			return err_set(DDT_EINPUT, "scenario %s: target '%s' is not in the GPU catalog",
				       pr->scenario, pr->target);
		}
		snprintf(r->sc.name, sizeof r->sc.name, "%s", pr->scenario);
		snprintf(r->sc.target, sizeof r->sc.target, "%s", pr->target);
		r->sc.pipeline = pr->pipeline;
		r->sc.estimator = pr->estimator;
		r->sc.block = pr->block;
		r->sc.budget = pr->budget;
		r->sc.concurrency = pr->concurrency;
		r->sc.naccept = 1;
		r->sc.accept[0] = pr->accept;
		r->accept = pr->accept;
		r->runnable = pr->runnable;
		snprintf(r->note, sizeof r->note, "%s", pr->note);
		r->out.M = pr->M;
		memcpy(r->out.ms, pr->ms, sizeof r->out.ms);
		r->out.nonmoe_ms = pr->nonmoe_ms;
		r->out.step_ms = pr->step_ms.point;
		r->out.tok_s = pr->tok_s.point;
	}
	return 0;
}

void estimate_free(struct estimate *e)
{
	free(e->rows);
	memset(e, 0, sizeof *e);
}

/* The projection row of estimate row i, or NULL. */
static const struct project_row *band_of(const struct projection *p, size_t i)
{
	return p && i < p->nrows ? &p->rows[i] : NULL;
}

void estimate_write_csv(const struct estimate *e, const struct projection *p, FILE *fp)
{
	fprintf(fp, ESTIMATE_CSV_HEADER ",attn_lmhead_ms,draft_ms,tree_ms,overhead_ms,runnable"
					",tok_s_p5,tok_s_p50,tok_s_p95,step_ms_p5,step_ms_p50,"
					"step_ms_p95,allreduce_ms,moe_ms_p5,moe_ms_p50,"
					"moe_ms_p95,estimator\n");
	for (size_t i = 0; i < e->n; i++) {
		const struct estimate_row *r = &e->rows[i];
		const struct project_row *b = band_of(p, i);
		csv_field(fp, r->sc.name);
		fputc(',', fp);
		csv_field(fp, r->target->id);
		fprintf(fp, ",%s,%d,%d,%d,%g,%g,%.4f,%.4f,%.4f,%.2f,%.4f,%.4f,%.4f,%.4f,%s",
			pipeline_name(r->sc.pipeline), r->sc.block, r->sc.budget,
			r->sc.concurrency, r->out.M, r->accept, r->out.ms[COMP_MOE],
			r->out.nonmoe_ms, r->out.step_ms, r->out.tok_s, r->out.ms[COMP_ATTN],
			r->out.ms[COMP_DRAFT], r->out.ms[COMP_TREE], r->out.ms[COMP_OVERHEAD],
			r->runnable ? "yes" : "no");
		if (b)
			fprintf(fp, ",%.2f,%.2f,%.2f,%.4f,%.4f,%.4f", b->tok_s.p5, b->tok_s.p50,
				b->tok_s.p95, b->step_ms.p5, b->step_ms.p50, b->step_ms.p95);
		else
			fputs(",,,,,,", fp);
		fprintf(fp, ",%.4f", r->out.ms[COMP_ALLREDUCE]);
		if (b)
			fprintf(fp, ",%.4f,%.4f,%.4f", b->moe_band.p5, b->moe_band.p50, b->moe_band.p95);
		else
			fputs(",,,", fp);
		fprintf(fp, ",%s\n", estimator_name(r->sc.estimator));
	}
}

static void yaml_band(struct yout *y, const char *key, const struct band *b)
{
	yout_key(y, key);
	yout_map_flow(y);
	yout_kv_num(y, "p5", b->p5);
	yout_kv_num(y, "p50", b->p50);
	yout_kv_num(y, "p95", b->p95);
	yout_end(y);
}

void estimate_write_yaml(const struct estimate *e, const struct projection *p, FILE *fp)
{
	struct yout y;
	yout_init(&y, fp);
	yout_map(&y);
	yout_key(&y, "estimates");
	yout_seq(&y);
	for (size_t i = 0; i < e->n; i++) {
		const struct estimate_row *r = &e->rows[i];
		yout_map(&y);
		yout_kv_str(&y, "scenario", r->sc.name);
		yout_kv_str(&y, "target", r->target->id);
		yout_kv_str(&y, "pipeline", pipeline_name(r->sc.pipeline));
		yout_kv_int(&y, "block", r->sc.block);
		yout_kv_int(&y, "budget", r->sc.budget);
		yout_kv_int(&y, "concurrency", r->sc.concurrency);
		yout_kv_num(&y, "M", r->out.M);
		yout_kv_num(&y, "accept", r->accept);
		for (int k = 0; k < COMP_COUNT; k++) {
			char key[40];
			snprintf(key, sizeof key, "%s_ms", model_comp_name((enum model_comp)k));
			yout_kv_num(&y, key, r->out.ms[k]);
		}
		yout_kv_num(&y, "nonmoe_ms", r->out.nonmoe_ms);
		yout_kv_num(&y, "step_ms", r->out.step_ms);
		yout_kv_num(&y, "tok_s", r->out.tok_s);
		yout_kv_str(&y, "estimator", estimator_name(r->sc.estimator));
		if (band_of(p, i)) {
			const struct project_row *b = band_of(p, i);
			yaml_band(&y, "step_ms_band", &b->step_ms);
			yaml_band(&y, "tok_s_band", &b->tok_s);
			yaml_band(&y, "moe_ms_band", &b->moe_band);
			if (b->accept_hi > b->accept_lo) {
				yout_kv_num(&y, "accept_lo", b->accept_lo);
				yout_kv_num(&y, "accept_hi", b->accept_hi);
			}
		}
		yout_key(&y, "runnable");
		yout_bool(&y, r->runnable);
		yout_kv_str(&y, "note", r->note);
		yout_end(&y);
	}
	yout_end(&y);
	yout_end(&y);
}

/* One line saying where a component's time comes from. */
static void comp_basis(const struct model *m, const struct estimate_row *r, int k, char *buf,
		       size_t len)
{
	const struct calib *c = m->cal;
	static const char *const what[] = {"", "attention + lm_head", "drafter forward",
					   "tree build + accept", "launch + scheduling"};
	if (k == COMP_MOE) {
		int x = calib_xfer_index(c, m->ref_gpu, r->target, r->out.M);
		char pair[96] = "";
		if (x >= 0)
			snprintf(pair, sizeof pair, " x transfer %s->%s %s (assumed)", c->xfer[x].from,
				 c->xfer[x].to, c->xfer[x].range);
		snprintf(buf, len, "%s %s curve at M=%g (%s) x bw %.3g/%.3g%s", m->ref_gpu->id,
			 moe_curve_name(m->curve), r->out.M, provenance_name(c->moe_ref.prov),
			 m->ref_gpu->bw_tbps, r->target->bw_tbps, pair);
		return;
	}
	if (k == COMP_ALLREDUCE) {
		const struct ar_gpu *a = calib_ar(c, r->target->id);
		snprintf(buf, len, "%g x %g all-reduces of %.0f KB, %s latency of %s%s%s (FACTS §7)",
			 c->ar.per_layer, c->model.layers, c->model.hidden * 2 * r->out.M / 1024,
			 c->ar.impl, a && a->like[0] ? a->like : r->target->id,
			 a && a->pcie ? " x pcie factor" : "", a && a->like[0] ? " (assumed like)" : "");
		return;
	}
	snprintf(buf, len, "%s: share %.2f of the %s step (measured), split assumed", what[k],
		 m->share[k - 1], c->sglang_b8.gpu);
}

static void write_inputs(const struct model *m, FILE *fp)
{
	const struct calib *c = m->cal;
	char name[96];
	fprintf(fp, "inputs\n");
	fprintf(fp, "  %-44s %10s  %-11s %s\n", "name", "value", "basis", "source");
	fprintf(fp, "  %-44s %10.4g  %-11s %s\n", "anchors.sglang_b8.step_ms",
		c->sglang_b8.step_ms, provenance_name(PROV_MEASURED), c->sglang_b8.source);
	fprintf(fp, "  %-44s %10.4g  %-11s %s\n", "anchors.sglang_b16.step_ms",
		c->sglang_b16.step_ms, provenance_name(PROV_CALIBRATION), c->sglang_b16.source);
	for (int i = 0; i < c->moe_ref.npoints; i++) {
		snprintf(name, sizeof name, "moe_reference.m%g_ms", c->moe_ref.points[i].m);
		fprintf(fp, "  %-44s %10.4g  %-11s %s\n", name, c->moe_ref.points[i].step_ms,
			provenance_name(c->moe_ref.prov), c->moe_ref.points[i].source);
	}
	for (int i = 0; i < MOE_P_COUNT; i++) {
		snprintf(name, sizeof name, "moe_reference.physical.%s",
			 moe_param_name((enum moe_param)i));
		fprintf(fp, "  %-44s %10.4g  %-11s %s\n", name, c->moe_ref.fit.value[i],
			c->moe_ref.fit.held[i] ? "held" : "fitted",
			c->moe_ref.fit.held[i] ? c->moe_ref.phys.source[i]
					       : "fitted to the MoE reference points");
	}
	for (int a = 0; a < calib_nassumptions(c); a++) {
		const struct dist *d = &c->asm_[a];
		char range[64] = "";
		calib_assumption_label(c, a, name, sizeof name);
		if (d->kind != DIST_FIXED)
			snprintf(range, sizeof range, "[p5 %.3g, p95 %.3g] ", dist_quantile(d, 0.05),
				 dist_quantile(d, 0.95));
		fprintf(fp, "  %-44s %10.4g  %-11s %s%s\n", name, m->v[a],
			provenance_name(d->overridden ? PROV_OVERRIDE : PROV_ASSUMED), range,
			d->overridden ? "set on the command line" : d->source);
	}
	fprintf(fp, "  %-44s %10.4g  %-11s %s\n", "growth (derived)", m->growth, "derived",
		m->growth_clamped ? "CLAMPED: the sglang_b16 anchor cannot be met with these shares"
				  : "fraction of attention/draft growing with M and block, solved "
				    "from anchors.sglang_b16");
}

void estimate_write_table(const struct estimate *e, const struct model *m, FILE *fp)
{
	for (size_t i = 0; i < e->n; i++) {
		const struct estimate_row *r = &e->rows[i];
		int first = i == 0 || strcmp(e->rows[i - 1].sc.name, r->sc.name) != 0;
		if (!first)
			continue;
		fprintf(fp, "%s%s: %s, %s pipeline, block %d, budget %d, C=%d, M=%g%s\n",
			i ? "\n" : "", r->sc.name, r->target->name, pipeline_name(r->sc.pipeline),
			r->sc.block, r->sc.budget, r->sc.concurrency, r->out.M,
			r->runnable ? "" : "  [NOT RUNNABLE]");
		if (r->note[0])
			fprintf(fp, "  note: %s\n", r->note);
		fprintf(fp, "  %-12s %9s %7s  %s\n", "component", "ms", "share", "basis");
		for (int k = 0; k < COMP_COUNT; k++) {
			char basis[200];
			comp_basis(m, r, k, basis, sizeof basis);
			fprintf(fp, "  %-12s %9.3f %6.1f%%  %s\n", model_comp_name((enum model_comp)k),
				r->out.ms[k], 100 * r->out.ms[k] / r->out.step_ms, basis);
		}
		fprintf(fp, "  %-12s %9.3f %6.1f%%\n", "step", r->out.step_ms, 100.0);
		fprintf(fp, "  %-12s %9s\n", "accept", "tok/s");
		for (size_t j = i; j < e->n && !strcmp(e->rows[j].sc.name, r->sc.name); j++)
			fprintf(fp, "  %-12g %9.1f\n", e->rows[j].accept, e->rows[j].out.tok_s);
	}
	fputc('\n', fp);
	write_inputs(m, fp);
}

/* ---------------------------------------------------------------- command */

static const char usage[] =
	"usage: ddt estimate [OPTIONS]\n"
	"\n"
	"Projects decode throughput (tok/s) with the step-time model. Without\n"
	"--scenario and ad hoc options, every scenario of the template. Each row\n"
	"shows its estimator's point (seed: the seed's assumptions; calibrated:\n"
	"ddt's median), its p5-p95 band and where the other estimator falls in it.\n"
	"Ad hoc scenarios are calibrated; several --accept values are a range.\n"
	"\n"
	"  --scenario NAME     a scenario of the template (repeatable)\n"
	"  --target GPU        ad hoc: target GPU from the catalog (default b300)\n"
	"  --pipeline P        ad hoc: sglang or native (default native)\n"
	"  --block N           ad hoc: drafter block size (default 8)\n"
	"  --budget N          ad hoc: tree node budget, root excluded (default 8); 0: no\n"
	"                      speculation, the autoregressive baseline (M = C, accept 1)\n"
	"  --accept LIST       ad hoc: mean acceptance lengths, e.g. 12,14,16\n"
	"  --concurrency N     ad hoc: sequences decoded at once (default 1)\n"
	"  --estimator E       ad hoc: calibrated (default: ddt's, headline the median)\n"
	"                      or seed (the seed's assumptions)\n"
	"                      (with one --scenario, ad hoc options change that scenario)\n"
	"  --set KEY=VALUE     override a calibration value or assumption, e.g.\n"
	"                      native_cut=0.3, gpus.b300.bw_tbps=7.7,\n"
	"                      moe_transfer.rtx_pro_6000.b300=1.25 (every M range of the\n"
	"                      pair), moe_reference.gpu=h200 (its measured curve as the\n"
	"                      reference) (repeatable, applied in order)\n"
	"  --moe-curve C       linear (the seed's line) or physical (the fitted curve)\n"
	"  --moe-reference F   the MoE reference curve from a CSV: gpu,m,step_ms[,source]\n"
	"                      (one GPU; step_ms per decode step, every MoE layer)\n"
	"  --samples N         Monte Carlo draws for the bands (default: the template's, 20000)\n"
	"  --seed S            their seed (default: the template's); same inputs, same output\n"
	"  --sensitivity       also print the tornado: each assumption at its p5 and p95\n"
	"  --grid              also print the best budget per target and concurrency\n"
	"  --format F          table (default), csv or yaml\n" CLI_PATH_HELP
	"  -h, --help          this text\n"
	"\n"
	"example: ddt estimate --scenario seed-b16-native --accept 10,12 --set native_cut=0.3\n";

enum {
	OPT_SCENARIO = OPT_FIRST_FREE,
	OPT_TARGET,
	OPT_PIPELINE,
	OPT_BLOCK,
	OPT_BUDGET,
	OPT_ACCEPT,
	OPT_CONC,
	OPT_SET,
	OPT_FORMAT,
	OPT_CURVE,
	OPT_SAMPLES,
	OPT_SEED,
	OPT_SENS,
	OPT_GRID,
	OPT_MOEREF,
	OPT_ESTIMATOR
};

struct adhoc {
	const char *target, *pipeline, *accept, *estimator;
	int block, budget, concurrency; /* -1 (budget), 0 (others): not given */
	int any;
};

static int parse_int_arg(const char *opt, const char *s, int *out)
{
	double v;
	if (ynum_parse(s, &v) || v != floor(v) || v < 1 || v > 1e6)
		return cli_usage_error("estimate", "%s: expected a positive whole number, got '%s'",
				       opt, s);
	*out = (int)v;
	return 0;
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

/* Applies the ad hoc options to s (a named scenario or the defaults). */
static int apply_adhoc(const struct adhoc *a, struct scenario *s)
{
	if (a->target)
		snprintf(s->target, sizeof s->target, "%s", a->target);
	if (a->pipeline && pipeline_parse(a->pipeline, &s->pipeline))
		return cli_usage_error("estimate", "--pipeline: expected sglang or native, got '%s'",
				       a->pipeline);
	if (a->estimator && estimator_parse(a->estimator, &s->estimator))
		return cli_usage_error("estimate", "--estimator: expected seed or calibrated, got '%s'",
				       a->estimator);
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

int cmd_estimate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"scenario", required_argument, NULL, OPT_SCENARIO},
		{"target", required_argument, NULL, OPT_TARGET},
		{"pipeline", required_argument, NULL, OPT_PIPELINE},
		{"block", required_argument, NULL, OPT_BLOCK},
		{"budget", required_argument, NULL, OPT_BUDGET},
		{"accept", required_argument, NULL, OPT_ACCEPT},
		{"concurrency", required_argument, NULL, OPT_CONC},
		{"set", required_argument, NULL, OPT_SET},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"moe-curve", required_argument, NULL, OPT_CURVE},
		{"samples", required_argument, NULL, OPT_SAMPLES},
		{"seed", required_argument, NULL, OPT_SEED},
		{"sensitivity", no_argument, NULL, OPT_SENS},
		{"grid", no_argument, NULL, OPT_GRID},
		{"moe-reference", required_argument, NULL, OPT_MOEREF},
		{"estimator", required_argument, NULL, OPT_ESTIMATOR},
		{"help", no_argument, NULL, 'h'},
		CLI_PATH_OPTIONS,
		{NULL, 0, NULL, 0}};
	struct cli_paths paths;
	struct adhoc ah = {.budget = -1};
	const char *names[64], *sets[64], *format = "table", *curve = NULL, *moeref = NULL;
	int nnames = 0, nsets = 0, opt, rc, status = 0, samples = 0, sens = 0, grid = 0;
	double seed = -1;
	struct project_config cfg;
	struct projection proj = {0};
	struct calib cal;
	struct tmpl t;
	struct ydiag diag = {0};
	struct model m;
	struct estimate e = {0};
	struct scenario *scs = NULL;
	size_t nscs = 0;

	cli_paths_init(&paths, "default");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (cli_path_option(&paths, opt, optarg))
			continue;
		switch (opt) {
		case 'h':
			fputs(usage, stdout);
			return 0;
		case OPT_SCENARIO:
			if (nnames == 64)
				return cli_usage_error("estimate", "too many --scenario");
			names[nnames++] = optarg;
			break;
		case OPT_SET:
			if (nsets == 64)
				return cli_usage_error("estimate", "too many --set");
			sets[nsets++] = optarg;
			break;
		case OPT_FORMAT:
			format = optarg;
			break;
		case OPT_CURVE:
			curve = optarg;
			break;
		case OPT_SAMPLES:
			if (parse_int_arg("--samples", optarg, &samples))
				return 2;
			if (samples < 100)
				return cli_usage_error("estimate", "--samples: at least 100, got %d",
						       samples);
			break;
		case OPT_SEED:
			if (ynum_parse(optarg, &seed) || seed < 0 || seed != floor(seed) ||
			    seed > 9007199254740992.0)
				return cli_usage_error("estimate",
						       "--seed: expected a whole number from 0 to 2^53, "
						       "got '%s'", optarg);
			break;
		case OPT_SENS:
			sens = 1;
			break;
		case OPT_GRID:
			grid = 1;
			break;
		case OPT_TARGET: ah.target = optarg, ah.any = 1; break;
		case OPT_PIPELINE: ah.pipeline = optarg, ah.any = 1; break;
		case OPT_ACCEPT: ah.accept = optarg, ah.any = 1; break;
		case OPT_BLOCK:
			if (parse_int_arg("--block", optarg, &ah.block))
				return 2;
			ah.any = 1;
			break;
		case OPT_BUDGET:
			if (!strcmp(optarg, "0"))
				ah.budget = 0;
			else if (parse_int_arg("--budget", optarg, &ah.budget))
				return 2;
			ah.any = 1;
			break;
		case OPT_MOEREF:
			moeref = optarg;
			break;
		case OPT_ESTIMATOR: ah.estimator = optarg, ah.any = 1; break;
		case OPT_CONC:
			if (parse_int_arg("--concurrency", optarg, &ah.concurrency))
				return 2;
			ah.any = 1;
			break;
		default:
			return cli_usage_error("estimate", "unknown option");
		}
	}
	if (optind < argc)
		return cli_usage_error("estimate", "unexpected argument '%s'", argv[optind]);
	if (strcmp(format, "table") && strcmp(format, "csv") && strcmp(format, "yaml"))
		return cli_usage_error("estimate", "--format: expected table, csv or yaml, got '%s'",
				       format);
	if (ah.any && nnames > 1)
		return cli_usage_error("estimate", "ad hoc options change one --scenario, not %d",
				       nnames);

	if (curve && strcmp(curve, "linear") && strcmp(curve, "physical"))
		return cli_usage_error("estimate", "--moe-curve: expected linear or physical, got '%s'",
				       curve);

	rc = calib_load(&cal, paths.calibration, &diag);
	if (!rc)
		rc = tmpl_load(&t, paths.template_path, &diag);
	else
		memset(&t, 0, sizeof t);
	if (!rc)
		rc = project_config_load(&cfg, &t, &diag);
	if (rc) {
		fprintf(stderr, "ddt estimate: %s\n", diag.n ? diag.msgs[0] : err_msg());
		status = err_exit_status(rc);
		goto done;
	}
	if (moeref && (rc = calib_reference_csv(&cal, moeref)) != 0) {
		status = cli_fail("estimate", rc);
		goto done;
	}
	for (int i = 0; i < nsets; i++)
		if ((rc = calib_set_arg(&cal, sets[i])) != 0) {
			status = cli_fail("estimate", rc);
			goto done;
		}
	if (curve && (rc = calib_set(&cal, "moe_reference.curve", curve)) != 0) {
		status = cli_fail("estimate", rc);
		goto done;
	}
	if (samples)
		cfg.samples = samples;
	if (seed >= 0)
		cfg.seed = (uint64_t)seed;
	cfg.sensitivity = sens;
	cfg.grid = grid;

	scs = calloc((size_t)(nnames ? nnames : 1) + t.nscenarios, sizeof *scs);
	if (!scs) {
		status = cli_fail("estimate", err_nomem());
		goto done;
	}
	for (int i = 0; i < nnames; i++) {
		const struct scenario *s = tmpl_scenario(&t, names[i]);
		if (!s) {
			status = cli_usage_error("estimate", "no scenario '%s' in %s", names[i],
						 paths.template_path);
			goto done;
		}
		scs[nscs++] = *s;
	}
	if (ah.any) {
		if (!nscs) {
			struct scenario d = {.name = "adhoc", .target = "b300",
					     .pipeline = PIPE_NATIVE, .block = 8, .budget = 8,
					     .concurrency = 1, .runnable = 1};
			scs[nscs++] = d;
		}
		if ((status = apply_adhoc(&ah, &scs[0])) != 0)
			goto done;
	}
	if (!nscs)
		for (size_t i = 0; i < t.nscenarios; i++)
			scs[nscs++] = t.scenarios[i];

	if ((rc = model_prepare(&m, &cal, NULL)) != 0 ||
	    (rc = project_scenarios(&proj, &cal, scs, nscs, NULL, &cfg)) ||
	    (rc = estimate_from_projection(&e, &proj, &cal))) {
		status = cli_fail("estimate", rc);
		goto done;
	}
	if (!strcmp(format, "csv"))
		estimate_write_csv(&e, &proj, stdout);
	else if (!strcmp(format, "yaml"))
		estimate_write_yaml(&e, &proj, stdout);
	else {
		estimate_write_table(&e, &m, stdout);
		fputc('\n', stdout);
		project_write_text(&proj,
				   PROJECT_TEXT_BANDS | PROJECT_TEXT_FIT |
					   (sens ? PROJECT_TEXT_TORNADO : 0) |
					   (grid ? PROJECT_TEXT_GRID : 0),
				   stdout);
	}
	/* the growth only concerns rows whose attention or draft grow */
	int grows = 0;
	for (size_t i = 0; i < e.n; i++)
		grows |= e.rows[i].out.M != m.m0 || e.rows[i].sc.concurrency * e.rows[i].sc.block !=
							       m.draft0;
	if (m.growth_clamped && grows)
		fprintf(stderr, "ddt estimate: warning: the sglang_b16 anchor cannot be met with "
				"these shares; growth clamped to %g\n",
			m.growth);
	if (fflush(stdout) != 0)
		status = 1;
done:
	project_free(&proj);
	estimate_free(&e);
	free(scs);
	tmpl_free(&t);
	calib_free(&cal);
	ydiag_free(&diag);
	return status;
}
