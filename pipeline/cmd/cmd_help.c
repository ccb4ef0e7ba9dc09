/* cmd_help.c - `ddt help [TOPIC|COMMAND]`, `ddt list scenarios|gpus|ops`, `ddt --version`, and the lists of valid names. */
#include "cmd.h"

#include "bench_conf.h"
#include "calib.h"
#include "err.h"
#include "history.h"
#include "help.h"
#include "op.h"
#include "tmpl.h"

#include <stdio.h>
#include <string.h>

void cmd_usage(FILE *fp)
{
	fprintf(fp, "usage: ddt COMMAND [OPTIONS]\n\n"
		    "ddt benchmarks the DDTree engine's kernels, tracks them night over night,\n"
		    "and projects decode throughput onto target GPUs.\n\ncommands:\n");
	for (size_t i = 0; i < cmd_count; i++)
		fprintf(fp, "  %-11s %s\n", cmd_list[i].name, cmd_list[i].summary);
	fprintf(fp, "\n'ddt COMMAND --help' describes a command; 'ddt help' lists the topics.\n"
		    "exit status: 0 ok, 1 error, 2 usage or bad input, 3 regression found,\n"
		    "4 a kernel failed validation, 75 another nightly holds the lock\n");
}

void cmd_names(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < cmd_count && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", cmd_list[i].name);
}

/* The topics, ", " between them, into buf. */
static void topic_names(char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < help_ndocs && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", help_docs[i].topic);
}

const struct cli_spec cmd_help_spec = {
	.name = "help",
	.usage = "help [TOPIC|COMMAND]",
	.about = "Without an argument, lists the commands and the documentation topics.\n"
		 "With a topic, prints its page (docs/TOPIC.md, built into ddt); with a\n"
		 "command, its --help.",
	.takes_args = 1,
	.opts = (const struct cli_opt[]){CLI_OPT_END},
};

static void topics_print(FILE *fp)
{
	fprintf(fp, "\ntopics ('ddt help TOPIC' prints one; the same pages are docs/TOPIC.md):\n");
	for (int i = 0; i < help_ndocs; i++)
		fprintf(fp, "  %-12s %s\n", help_docs[i].topic, help_docs[i].title);
}

int cmd_help(int argc, char **argv)
{
	char args, topics[512], cmds[512];
	int first, rc;
	if ((rc = cli_parse(&cmd_help_spec, &args, argc, argv, &first)) >= 0)
		return rc;
	if (first == argc) {
		cmd_usage(stdout);
		topics_print(stdout);
		return 0;
	}
	if (argc - first > 1)
		return cli_usage_error("help", "one topic or command, got %d", argc - first);
	for (int i = 0; i < help_ndocs; i++)
		if (!strcmp(help_docs[i].topic, argv[first])) {
			fputs(help_docs[i].text, stdout);
			return 0;
		}
	const struct cmd *c = cmd_find(argv[first]);
	if (c) {
		for (int k = 0; k < 3 && c->specs[k]; k++)
			cli_help(c->specs[k], stdout), fputs(c->specs[k + 1] ? "\n" : "", stdout);
		return 0;
	}
	topic_names(topics, sizeof topics);
	cmd_names(cmds, sizeof cmds);
	return cli_usage_error("help", "no topic or command '%s'; the topics: %s; the commands: %s",
			       argv[first], topics, cmds);
}

/* ---------------------------------------------------------------- list */

struct list_args {
	struct paths paths;
};

typedef struct list_args A;
static const struct cli_opt list_opts[] = {
	CLI_OPT_CALIBRATION(A, paths),
	CLI_OPT_TEMPLATE(A, paths),
	CLI_OPT_END,
};

const struct cli_spec cmd_list_spec = {
	.name = "list",
	.usage = "list scenarios|gpus|ops [--template PATH] [--calibration PATH]",
	.about = "Lists the names other commands take: the template's scenarios (estimate\n"
		 "--scenario), the calibration's GPU catalog (--target, --set gpus.ID...),\n"
		 "or the kernels the bench measures (bench --ops, a template's op:).",
	.takes_args = 1,
	.opts = list_opts,
};

static int list_scenarios(const struct paths *p)
{
	struct tmpl t;
	struct ydiag diag = {0};
	int rc = tmpl_load(&t, p->template_path, &diag);
	if (rc)
		fprintf(stderr, "ddt list: %s\n", diag.n ? diag.msgs[0] : err_msg());
	else {
		printf("%-20s %-10s %-8s %-8s %5s %6s %3s  %s\n", "scenario", "estimator", "target",
		       "pipeline", "block", "budget", "C", "accept");
		for (size_t i = 0; i < t.nscenarios; i++) {
			const struct scenario *s = &t.scenarios[i];
			printf("%-20s %-10s %-8s %-8s %5d %6d %3d  ", s->name,
			       tmpl_estimator_name(s->estimator), s->target,
			       tmpl_pipeline_name(s->pipeline), s->block, s->budget, s->concurrency);
			if (s->accept_curve)
				printf("curve");
			else if (s->estimator == EST_CALIBRATED && s->naccept > 1)
				printf("%g-%g (a range)", s->accept[0], s->accept[s->naccept - 1]);
			for (int k = 0; k < s->naccept && !(s->estimator == EST_CALIBRATED && s->naccept > 1); k++)
				printf("%s%g", k ? "," : "", s->accept[k]);
			printf("%s\n", s->runnable ? "" : "  [not runnable]");
		}
	}
	ydiag_free(&diag);
	tmpl_free(&t);
	return rc ? err_exit_status(rc) : 0;
}

static int list_gpus(const struct paths *p)
{
	struct calib c;
	struct ydiag diag = {0};
	int rc = calib_load(&c, p->calibration, &diag);
	if (rc)
		fprintf(stderr, "ddt list: %s\n", diag.n ? diag.msgs[0] : err_msg());
	else {
		printf("%-14s %-34s %-8s %8s %8s  %s\n", "gpu", "name", "arch", "mem_gb", "bw_tbps",
		       "memory");
		for (size_t i = 0; i < c.ngpus; i++) {
			const struct gpu *g = &c.gpus[i];
			printf("%-14s %-34s %-8s %8g %8g  %s\n", g->id, g->name, g->arch, g->mem_gb,
			       g->bw_tbps, g->memory);
		}
	}
	ydiag_free(&diag);
	calib_free(&c);
	return rc ? err_exit_status(rc) : 0;
}

static void list_ops(void)
{
	printf("%-12s %s\n", "op", "what it measures");
	for (int i = 0; op_table[i]; i++)
		printf("%-12s %s\n", op_table[i]->name, op_table[i]->summary);
	for (int i = 0; i < bench_conf_ncuda_ops; i++)
		printf("%-12s %s\n", bench_conf_cuda_ops[i].name, bench_conf_cuda_ops[i].summary);
}

int cmd_list_run(int argc, char **argv)
{
	struct list_args a;
	int first, rc;
	paths_init(&a.paths, "default");
	if ((rc = cli_parse(&cmd_list_spec, &a, argc, argv, &first)) >= 0)
		return rc;
	const char *what = first < argc ? argv[first] : "";
	if (argc - first > 1)
		return cli_usage_error("list", "one of scenarios, gpus or ops, got %d words",
				       argc - first);
	if (!strcmp(what, "scenarios"))
		return list_scenarios(&a.paths);
	if (!strcmp(what, "gpus"))
		return list_gpus(&a.paths);
	if (!strcmp(what, "ops")) {
		list_ops();
		return 0;
	}
	return cli_usage_error("list", "%s%s%s: the lists are scenarios, gpus and ops",
			       what[0] ? "no list '" : "which list?", what, what[0] ? "'" : "");
}

void cmd_scenario_names(const struct tmpl *t, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < t->nscenarios && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", t->scenarios[i].name);
}

void cmd_gpu_names(const struct calib *c, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < c->ngpus && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", c->gpus[i].id);
}

int cmd_check_op(const char *cmd, const char *op)
{
	char names[512];
	if (!op || op_find(op) || bench_conf_is_cuda_only(op))
		return 0;
	bench_conf_op_names(names, sizeof names);
	return cli_usage_error(cmd, "--op: unknown op '%s'; the ops: %s", op, names);
}

int cmd_history_has_op(const struct history *h, const char *op)
{
	for (size_t i = 0; op && i < h->n; i++)
		if (!strcmp(h->series[i].key.op, op))
			return 1;
	return 0;
}
