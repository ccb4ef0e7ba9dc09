/* cmd_acceptance.c - `ddt acceptance TRACE`: mean acceptance vs budget replayed from a drafter trace. */
#include "accept_logs.h"
#include "acceptance.h"
#include "cmd.h"
#include "err.h"
#include "fsx.h"
#include "paths.h"

#include <stdlib.h>
#include <string.h>

struct acceptance_args {
	struct acceptance_opts opts;
	double seed;
	const char *yaml, *csv, *from, *format;
};

static int budgets_arg(void *opts, const char *arg)
{
	return acceptance_parse_budgets(opts, arg);
}

typedef struct acceptance_args A;
static const struct cli_opt acceptance_opts_table[] = {
	CLI_OPT_CALL(A, opts, "budgets", "LIST", budgets_arg,
		     "node budgets: 1,2,4,...,1024 (the default), 8,12,...,32\n"
		     "('...' goes on by the ratio, or step, of the two before)"),
	CLI_OPT_INT(A, opts.block, "block", "B", 2, 256,
		    "replay a smaller block than the trace's\n(its first B - 1 positions)"),
	CLI_OPT_CHOICE(A, format, "format", "F", "text|csv|yaml|json",
		       "what stdout gets: text (the table; default), csv (a\n"
		       "row per budget), yaml (the curve: per budget the\n"
		       "figures, histogram and covariance) or json (the yaml's\n"
		       "fields); with --from: text, yaml or json"),
	CLI_OPT_STR(A, yaml, 0, "yaml", "PATH",
		    "also write the curve as YAML to PATH ('-': stdout,\n"
		    "as --format yaml)"),
	CLI_OPT_STR(A, csv, 0, "csv", "PATH",
		    "also write one CSV row per budget to PATH ('-':\n"
		    "stdout, as --format csv)"),
	CLI_OPT_STR(A, from, 0, "from", "KIND",
		    "TRACE is an engine's log, not a trace: vllm-log\n"
		    "(SpecDecoding metrics lines), vllm-metrics (Prometheus\n"
		    "text), sglang-log (Decode batch lines) or ranks\n"
		    "(target_rank records)"),
	CLI_OPT_KEY(A, opts.resamples, "resamples", "N", &acceptance_boot_schema, "resamples",
		    "bootstrap resamples (default 2000)"),
	CLI_OPT_KEY(A, opts.level, "level", "P", &acceptance_boot_schema, "level",
		    "interval level (default 0.95)"),
	CLI_OPT_WHOLE(A, seed, "seed", "N", 0, 1e15, "bootstrap seed (default 1)"),
	CLI_OPT_END,
};

const struct cli_spec cmd_acceptance_spec = {
	.name = "acceptance",
	.usage = "acceptance TRACE [--budgets LIST] [--block B] [--format F]\n"
		 "       ddt acceptance --from KIND LOG [--budgets LIST] [--format F]",
	.about = "Replays a drafter trace (JSON Lines, plain or gzip; 'ddt help acceptance')\n"
		 "through the engine's own DDTree build (tree_build's heap)\n"
		 "and acceptance walk at every budget, and prints per budget the mean\n"
		 "acceptance length (root included) with a bootstrap interval over steps,\n"
		 "what the drafter itself expected, the share of steps capped by the block,\n"
		 "and the histogram of acceptance lengths. Lines that record accepted and\n"
		 "budget_used are checked against the replay; lines that record context give\n"
		 "its distribution (a projection's scenarios without a context take its\n"
		 "mean). TRACE '-' reads standard input.",
	.takes_args = 1,
	.opts = acceptance_opts_table,
	.after = "example:\n"
		 "  ddt acceptance tests/fixtures/acceptance/kjv-ngram.jsonl.gz \\\n"
		 "      --budgets 1,4,...,1024",
};

static void yaml_of_result(const void *r, FILE *fp)
{
	acceptance_write_yaml(r, fp);
}

static void yaml_of_logs(const void *r, FILE *fp)
{
	accept_logs_write_yaml(r, fp);
}

/* Writes r to fp in format (text, csv, yaml or json; with the writers of a
 * replay's result, or with logs set, those of a log's estimate, which has
 * no csv). Returns 0 or an error code. */
static int write_as(const void *r, int logs, const char *format, FILE *fp)
{
	if (!strcmp(format, "json"))
		return cmd_write_json(fp, logs ? yaml_of_logs : yaml_of_result, r);
	if (!strcmp(format, "yaml"))
		logs ? accept_logs_write_yaml(r, fp) : acceptance_write_yaml(r, fp);
	else if (!strcmp(format, "csv") && !logs)
		acceptance_write_csv(r, fp);
	else if (!strcmp(format, "text"))
		logs ? accept_logs_write_text(r, fp) : acceptance_write_text(r, fp);
	else
		return err_set(DDT_EINPUT, "--format %s: a log's estimate is written as text, "
				 "yaml or json", format);
	return 0;
}

/* Writes r in format to path ("-": stdout), atomically. */
static int emit(const void *r, int logs, const char *path, const char *format)
{
	struct fsx_file f;
	int rc;
	if (!strcmp(path, "-"))
		return write_as(r, logs, format, stdout);
	if ((rc = fsx_open(&f, path)))
		return err_wrap(rc, "cannot write %s", path);
	if ((rc = write_as(r, logs, format, f.fp)) != 0) {
		fsx_abort(&f);
		return rc;
	}
	return fsx_commit(&f);
}

/* What stdout gets: --format, or (the aliases) the format of a '-' given to
 * --csv or --yaml, else text. Sets *status to 2 when --format and a '-'
 * both claim stdout. */
static const char *stdout_format(const struct acceptance_args *a, int *status)
{
	int csv = a->csv && !strcmp(a->csv, "-"), yaml = a->yaml && !strcmp(a->yaml, "-");
	*status = 0;
	if (a->format && (csv || yaml))
		*status = cli_usage_error("acceptance", "--format %s and --%s - both write to stdout",
					  a->format, csv ? "csv" : "yaml");
	return a->format ? a->format : yaml ? "yaml" : csv ? "csv" : "text";
}

/* The result to stdout in its format, then to the --yaml and --csv files. */
static int emit_all(const struct acceptance_args *a, const void *r, int logs, const char *out)
{
	int rc = write_as(r, logs, out, stdout);
	/* a '-' of the format stdout got is written; --yaml - --csv - writes both */
	if (!rc && a->yaml && (strcmp(a->yaml, "-") || strcmp(out, "yaml")))
		rc = emit(r, logs, a->yaml, "yaml");
	if (!rc && a->csv && (strcmp(a->csv, "-") || strcmp(out, "csv")))
		rc = emit(r, logs, a->csv, "csv");
	return rc;
}

/* `--from KIND LOG`: the engine's logged chain, and a tree estimate per budget. */
static int from_log(const struct acceptance_args *a, const char *path, const char *out)
{
	struct spec_log l;
	struct accept_logs_result r = {0};
	struct accept_logs_prior prior;
	struct paths p;
	enum spec_log_kind kind;
	char prior_path[PATH_MAX + 32];
	int rc;
	paths_init(&p, "default");
	snprintf(prior_path, sizeof prior_path, "%s/acceptance/logs.yaml", p.calibration);
	if ((rc = spec_log_kind_parse(&kind, a->from)) ||
	    (rc = accept_logs_prior_load(&prior, prior_path)))
		return cli_fail("acceptance", rc);
	if (!(rc = spec_log_read(&l, path, kind)) &&
	    !(rc = accept_logs_estimate(&r, path, &l, &a->opts, &prior)))
		rc = emit_all(a, &r, 1, out);
	spec_log_free(&l);
	accept_logs_free(&r);
	return rc ? cli_fail("acceptance", rc) : 0;
}

int cmd_acceptance(int argc, char **argv)
{
	struct acceptance_args a = {.seed = 1};
	struct acceptance_result r;
	int first, rc;

	acceptance_opts_default(&a.opts);
	if ((rc = cli_parse(&cmd_acceptance_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	if (first == argc)
		return cli_usage_error("acceptance", "which trace? Give TRACE (.jsonl, .jsonl.gz or -)");
	if (first < argc - 1)
		return cli_usage_error("acceptance", "one TRACE, got %d arguments", argc - first);
	const char *out = stdout_format(&a, &rc);
	if (rc)
		return rc;
	if (a.from) {
		if (!strcmp(out, "csv") || (a.csv && strcmp(a.csv, "-")))
			return cli_usage_error("acceptance", "--from: a log's estimate is written as "
					       "text, yaml or json, not csv");
		return from_log(&a, argv[first], out);
	}
	a.opts.seed = (uint64_t)a.seed;
	a.opts.progress = cli_is_tty();
	if ((rc = acceptance_replay(&r, argv[first], &a.opts)) == 0)
		rc = emit_all(&a, &r, 0, out);
	acceptance_free(&r);
	return rc ? cli_fail("acceptance", rc) : 0;
}
