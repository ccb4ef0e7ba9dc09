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
	const char *yaml, *csv, *from;
};

static int budgets_arg(void *opts, const char *arg)
{
	return acceptance_parse_budgets(opts, arg);
}

static int level_arg(void *level, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);
	if (end == arg || *end || !(v >= 0.5 && v <= 0.999))
		return err_set(DDT_EINPUT, "--level: expected a number from 0.5 to 0.999, got '%s'", arg);
	*(double *)level = v;
	return 0;
}

typedef struct acceptance_args A;
static const struct cli_opt acceptance_opts_table[] = {
	CLI_OPT_CALL(A, opts, "budgets", "LIST", budgets_arg,
		     "node budgets: 1,2,4,...,1024 (the default), 8,12,...,32\n"
		     "('...' goes on by the ratio, or step, of the two before)"),
	CLI_OPT_INT(A, opts.block, "block", "B", 2, 256,
		    "replay a smaller block than the trace's\n(its first B - 1 positions)"),
	CLI_OPT_STR(A, yaml, 0, "yaml", "PATH",
		    "also write the curve as YAML: an acceptance source\n"
		    "for the projection ('-': to stdout, not the table)"),
	CLI_OPT_STR(A, csv, 0, "csv", "PATH", "also write one CSV row per budget ('-': stdout)"),
	CLI_OPT_STR(A, from, 0, "from", "KIND",
		    "TRACE is an engine's log, not a trace: vllm-log\n"
		    "(SpecDecoding metrics lines), vllm-metrics (Prometheus\n"
		    "text), sglang-log (Decode batch lines) or ranks\n"
		    "(target_rank records)"),
	CLI_OPT_INT(A, opts.resamples, "resamples", "N", 1, 1000000, "bootstrap resamples (default 2000)"),
	CLI_OPT_CALL(A, opts.level, "level", "P", level_arg, "interval level (default 0.95)"),
	CLI_OPT_WHOLE(A, seed, "seed", "N", 0, 1e15, "bootstrap seed (default 1)"),
	CLI_OPT_END,
};

const struct cli_spec cmd_acceptance_spec = {
	.name = "acceptance",
	.usage = "acceptance TRACE [--budgets LIST] [--block B] [--yaml PATH] [--csv P]\n"
		 "       acceptance --from KIND LOG [--budgets LIST] [--yaml PATH]",
	.about = "Replays a drafter trace (JSON Lines, plain or gzip; README \"Acceptance from\n"
		 "your own drafter\") through the engine's own DDTree build (tree_build's heap)\n"
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

/* Writes r to path ("-": stdout) with write, atomically. */
static int emit(const struct acceptance_result *r, const char *path,
		void (*write)(const struct acceptance_result *, FILE *))
{
	struct fsx_file f;
	int rc;
	if (!strcmp(path, "-")) {
		write(r, stdout);
		return 0;
	}
	if ((rc = fsx_open(&f, path)))
		return err_wrap(rc, "cannot write %s", path);
	write(r, f.fp);
	return fsx_commit(&f);
}

/* `--from KIND LOG`: the engine's logged chain, and a tree estimate per budget. */
static int from_log(const struct acceptance_args *a, const char *path)
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
	    !(rc = accept_logs_estimate(&r, path, &l, &a->opts, &prior))) {
		if (!a->yaml || strcmp(a->yaml, "-"))
			accept_logs_write_text(&r, stdout);
		if (a->yaml && !strcmp(a->yaml, "-"))
			accept_logs_write_yaml(&r, stdout);
		else if (a->yaml) {
			struct fsx_file f;
			if (!(rc = fsx_open(&f, a->yaml))) {
				accept_logs_write_yaml(&r, f.fp);
				rc = fsx_commit(&f);
			}
		}
	}
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
	if (a.from)
		return from_log(&a, argv[first]);
	a.opts.seed = (uint64_t)a.seed;
	a.opts.progress = cli_is_tty();
	if ((rc = acceptance_replay(&r, argv[first], &a.opts)) == 0) {
		if (!(a.yaml && !strcmp(a.yaml, "-")) && !(a.csv && !strcmp(a.csv, "-")))
			acceptance_write_text(&r, stdout);
		if (a.yaml)
			rc = emit(&r, a.yaml, acceptance_write_yaml);
		if (!rc && a.csv)
			rc = emit(&r, a.csv, acceptance_write_csv);
	}
	acceptance_free(&r);
	return rc ? cli_fail("acceptance", rc) : 0;
}
