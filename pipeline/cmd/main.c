/* main.c - the ddt command: one binary, one subcommand per stage. */
#include "cli.h"
#include "err.h"

#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

static const struct cli_command commands[] = {
	{"estimate", "project decode throughput for scenarios (what-if)", cmd_estimate},
	{"check", "validate calibration and template YAML", cmd_check},
	{"backtest", "how the MoE transfer bands held on GPUs they were not fitted to", cmd_backtest},
	{"bench", "measure the engine's kernels on this machine into a run record", cmd_bench},
	{"nightly", "run the whole nightly job", cmd_nightly},
	{"history", "kernel series over the nights, with regression verdicts", cmd_history},
	{"compare", "two runs side by side, with verdicts", cmd_compare},
	{"report", "render the documents of a stored run (PDF, spreadsheet, charts)", cmd_report},
	{"fleet", "the nightly across a Slurm cluster's nodes (ddt nightly --slurm)", cmd_fleet},
};

static void usage(FILE *fp)
{
	fprintf(fp, "usage: ddt COMMAND [OPTIONS]\n\n"
		    "ddt benchmarks the DDTree engine's kernels, tracks them night over night,\n"
		    "and projects decode throughput onto target GPUs.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(fp, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(fp, "\n'ddt COMMAND --help' describes a command.\n"
		    "exit status: 0 ok, 1 error, 2 usage or bad input, 3 regression found,\n"
		    "4 a kernel failed validation, 75 another nightly holds the lock\n");
}

/* What a command printed must have reached stdout: a full disk there is an
 * error, as for any Unix tool (status kept when it is one already). */
static int stdout_checked(int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	fprintf(stderr, "ddt: cannot write the output: %s\n", errno ? strerror(errno) : "error");
	return status ? status : 1;
}

int main(int argc, char **argv)
{
	setlocale(LC_ALL, "C");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return stdout_checked(0);
	}
	for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
		if (!strcmp(argv[1], commands[i].name))
			return stdout_checked(commands[i].run(argc - 1, argv + 1));
	fprintf(stderr, "ddt: unknown command '%s' (see 'ddt --help')\n", argv[1]);
	return 2;
}
